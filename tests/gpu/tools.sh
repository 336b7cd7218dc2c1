# tests/gpu/tools.sh — sourced by tests/gpu.sh (its helpers, $E, $LOG and want() in scope): crash isolation, engine tune, output formats, compute-sanitizer, the regression guard, the library and Python.
# shellcheck shell=bash

if want isolation; then
echo "== crash isolation: a faulting kernel second in a list of four"
LIST="configs/tiled.json tests/configs/gpu/fault.json configs/naive.json configs/bank_pad_vec.json"
# shellcheck disable=SC2086
$FIX $E bench $LIST --size 256 --runs 2 >"$LOG/iso-bench.txt" 2>&1
rc=$?
n=$(grep -cE '^(tiled|naive|bank_pad_vec) +ok ' "$LOG/iso-bench.txt")
[ $rc = 3 ] && grep -qE '^fault +fault ' "$LOG/iso-bench.txt" && [ "$n" = 3 ] &&
  pass "bench: the fault is one row and the worst outcome (exit 3), the three others ran" ||
  fail "bench: the fault is one row and the worst outcome (exit $rc, expected 3), the three others ran ($n ok)" "$(cat "$LOG/iso-bench.txt")"
# shellcheck disable=SC2086
$FIX $E verify $LIST --shapes 64x64x64,127x129x131 >"$LOG/iso-verify.txt" 2>&1
check_says "verify: 12 checks passed around 4 faults, exit 3" $? 3 "$LOG/iso-verify.txt" '^verify: 12 passed, 0 failed, 4 errors$'
fi

if want tune-faults; then
echo "== engine tune: a space holding a faulting and a hanging kernel"
export XDG_CACHE_HOME="$LOG/xdg"
rm -rf "$XDG_CACHE_HOME" "$LOG"/toy*.jsonl
$FIX $E tune tests/configs/tune/toy_space.json --log "$LOG/toy.jsonl" --timeout 10 --top 3 >"$LOG/toy.txt" 2>&1
check_tune "tune finishes despite the fault and the hang" $? "$LOG/toy.jsonl"
check_py "exactly the fault and the hang are marked; every other point verified and timed" "$LOG/toy.jsonl" "$(cat "$LOG/toy.txt")" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert not [r for r in rows if r["status"] == "FAIL"], "wrong results"
first = [r for r in rows if r["stage"] in (0, 1) and r["status"] != "pruned"]
bad = {(r["configuration"]["MODE"], r["status"]) for r in first if r["status"] != "ok"}
assert bad == {(1, "fault"), (2, "timeout")}, bad
ok = [r for r in first if r["status"] == "ok"]
assert len(ok) == 12 and all(r["configuration"]["MODE"] == 0 and r["ms"] > 0 and r["pct_cublas"] > 0 for r in ok), ok
assert any(r["stage"] == 2 for r in rows)
PY
$FIX $E tune tests/configs/tune/toy_space.json --log "$LOG/toy2.jsonl" --timeout 10 --top 3 >"$LOG/toy2.txt" 2>&1
check_tune "a second tune of the same space" $? "$LOG/toy2.jsonl"
grep -q '(0 NVRTC compiles, 14 from the cache; the workers compiled 0)' "$LOG/toy2.txt" &&
  pass "the second tune compiled nothing: 14 CUBINs from the cache" || fail "second tune served from the cache" "$(head -1 "$LOG/toy2.txt")"
fi

if want tune; then
echo "== engine tune: 100 warptile points at 4096^3"
rm -f "$LOG/warptile.jsonl" "$LOG/wt-best.json"
$E tune tune/warptile.json --strategy random --budget 100 --log "$LOG/warptile.jsonl" --emit-best "$LOG/wt-best.json" \
  >"$LOG/warptile.txt" 2>&1
check_tune "tune 100 warptile points" $? "$LOG/warptile.jsonl"
head -n 1 "$LOG/warptile.txt"
# No point of the shipped space may compute a wrong result, fault or hang (check_tune has the first);
# what may stop a point is a resource it does not get (its reason says which), at most 10 of 100.
check_py "100 points logged, each verified and timed or with its reason; no fault, no hang" "$LOG/warptile.jsonl" "$(tail -5 "$LOG/warptile.txt")" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
first = [r for r in rows if r["status"] != "pruned" and r["stage"] < 2]
assert len(first) == 100, len(first)
assert not [r for r in rows if r["status"] in ("FAIL", "fault", "timeout")], [(r["status"], r.get("reason")) for r in rows if r["status"] in ("FAIL", "fault", "timeout")][:5]
assert all(r["status"] == "ok" or r["reason"] for r in first)
assert sum(r["status"] == "ok" for r in first) >= 90
PY
run_verify "the emitted winner is a valid config that verifies" wt-best-verify "$LOG/wt-best.json" --shapes 1x1x1,127x129x131,1000x1000x1000
unset XDG_CACHE_HOME
fi

if want formats; then
echo "== output formats and --set"
$E bench configs/bank_pad_vec.json --size 1024 --runs 3 --format jsonl >"$LOG/jsonl.txt" 2>"$LOG/jsonl.err"
rc=$?
st=$(grep '^{"config":"bank_pad_vec",' "$LOG/jsonl.txt" | jfield status)
[ $rc = 0 ] && [ "$st" = ok ] && pass "bench --format jsonl: exit 0, the config's row ok" ||
  fail "bench --format jsonl (exit $rc, row status ${st:-missing})" "$(cat "$LOG/jsonl.err")"
check_py "jsonl: one JSON object per row, config and cuBLAS rows" "$LOG/jsonl.txt" "$(cat "$LOG/jsonl.txt")" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert [r["config"] for r in rows] == ["bank_pad_vec", "cublas"], rows
assert rows[0]["status"] == "ok" and rows[0]["ms"] > 0 and rows[0]["pct_cublas"] > 0
PY
# The row of the overridden config: its params field is what was compiled, its args the rerun command.
$E bench configs/bank_pad_vec.json --size 1024 --runs 3 --format jsonl --set BM=128 --set THREADS=256 >"$LOG/set.txt" 2>"$LOG/set.err"
rc=$?
row=$(grep '^{"config":"bank_pad_vec\[' "$LOG/set.txt")
st=$(jfield status <<<"$row")
params=" $(jfield params <<<"$row") "
args=$(jfield args <<<"$row")
[ $rc = 0 ] && [ "$st" = ok ] && pass "bench --set BM=128 --set THREADS=256: exit 0, the row ok" ||
  fail "bench --set BM=128 --set THREADS=256 (exit $rc, row status ${st:-missing})" "$(cat "$LOG/set.err")"
[[ $params == *" BM=128 "* && $params == *" THREADS=256 "* ]] && pass "--set reaches the kernel: the row's params have BM=128 and THREADS=256" ||
  fail "--set reaches the kernel (params:${params})" "$(cat "$LOG/set.txt")"
[[ "$args " == *" --set BM=128 "* && "$args " == *" --set THREADS=256 "* ]] && pass "--set is in the row's rerun command" ||
  fail "--set is in the row's rerun command (args: ${args:-none})"
$E bench configs/bank_pad_vec.json --size 1024 --runs 3 --set TM=12 >"$LOG/set-bad.txt" 2>&1
check_says "--set TM=12 breaks a constraint: exit 2, naming it" $? 2 "$LOG/set-bad.txt" '\(--set TM=12\): params\.TM = 12 does not divide'
fi

if want sanitize; then
echo "== compute-sanitizer (memcheck, racecheck, initcheck, synccheck), one odd shape per template and schedule"
[ "${GPU_SANITIZE:-1}" = 0 ] && SAN_SKIP="GPU_SANITIZE=0"
for c in naive tiled bank_pad_vec ldg_wider2 sb07_linearize multibuf_b3 ldg_async splitk2 splitk4_2pass warptile_splitk dgemm_dmma_splitk \
         warptile_streamk \
         sb10_warptiling sb11_double_buffer sb12_double_buffer2 warptile_db dgemm_simt dgemm_pipelined dgemm_dmma gemv; do
  sanitize_verify "$c" "cs-$c" "${GPU_SANITIZE_TOOLS:-memcheck racecheck initcheck synccheck}" configs/$c.json --shapes 67x45x37
done
unset SAN_SKIP
fi

if want regress; then
echo "== the regression guard: CHECK=1 bench/regress.sh, every shipped config and wisdom entry against the committed baseline"
# The baseline is named after the GPU as bench/regress.sh names it; without one every row is "new"
# and nothing can drop, so a missing baseline fails here.
rname=$($E info 2>/dev/null | sed -n 's/^device 0: //p' | head -1)
rslug=$(echo "$rname" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9][^a-z0-9]*/-/g; s/^-//; s/-$//')
rbase=${BASELINE:-bench/baseline/$rslug.jsonl}
if [ -z "$rname" ]; then
  fail "regress: a baseline for this GPU (engine info names no device)" "$($E info 2>&1 | head -3)"
elif [ -s "$rbase" ]; then
  pass "regress: the baseline $rbase is there ($(grep -c . "$rbase") rows)"
else
  fail "regress: no baseline $rbase for $rname: time one on this GPU with UPDATE=1 bash bench/regress.sh and commit it, saying why"
fi
if have_py; then
  CHECK=1 OUT=$LOG/regress ENGINE_BIN=$E bash bench/regress.sh >"$LOG/regress.txt" 2>&1
  rc=$?
  sed -n '/^regress: [0-9]* rows timed/,$p' "$LOG/regress.txt"
  sum=$(grep '^regress: [0-9]* rows timed, ' "$LOG/regress.txt" | tail -n 1)
  [ "$rc" = 0 ] && [[ $sum =~ ^regress:\ [1-9][0-9]*\ rows\ timed,\ [0-9]+\ in\ the\ baseline:\ 0\ dropped,.*\ 0\ not\ ok$ ]] &&
    pass "CHECK=1 bench/regress.sh: ${sum#regress: }" ||
    fail "CHECK=1 bench/regress.sh (exit $rc, expected 0 and rows timed, 0 dropped, 0 not ok: ${sum:-no summary})" \
      "$(grep -a -E ' (DROP|error|FAIL|fault|timeout)$|^regress: ' "$LOG/regress.txt" | head -n 12)"
else
  skip "CHECK=1 bench/regress.sh" "no python3"
fi
fi

if want library; then
echo "== the C library and Python: examples/sgemm, tests/gpu_lib.c against cuBLAS (one and two host threads, memcheck), engine.matmul against torch.matmul"
# The library's programs sit beside the engine binary (build/); a stub directory has none, so each fails.
LB=$(dirname "$E")
SAN_SKIP=""
[ "${GPU_SANITIZE:-1}" = 0 ] && SAN_SKIP="GPU_SANITIZE=0"
# lib_check NAME LOG RC: the program exited 0 and its last "N passed, N failed" line has N >= 1 passed, 0 failed.
lib_check() {
  local sum
  sum=$(grep -aE '^[0-9]+ passed, [0-9]+ failed$' "$2" | tail -n 1)
  if [ "$3" = 0 ] && [[ $sum =~ ^[1-9][0-9]*\ passed,\ 0\ failed$ ]]; then
    pass "$1 ($sum)"
  else
    fail "$1 (exit $3, ${sum:-no summary})" "$(grep -a -m 8 -E '^FAIL' "$2")"
  fi
}
"$LB/examples/sgemm" >"$LOG/lib-example.txt" 2>&1
check_says "examples/sgemm: engine_sgemm and a plan against cuBLAS, PASS" $? 0 "$LOG/lib-example.txt" '^PASS$'
"$LB/gpu_lib" check >"$LOG/lib-check.txt" 2>&1
lib_check "gpu_lib check: every op x 5 shapes x beta x f32/f64 x row/col-major x {packed, ld+3, batch 3} against cuBLAS, each call's first run (cuBLAS while its kernel builds) and its run after engine_wait (the engine's kernel)" "$LOG/lib-check.txt" $?
# The tc32 plans where the GPU is an sm_90 one, or says nothing (GPU_ARCH stands in, as for wisdom_plan):
# a GPU that names another arch skips them.
larch=${GPU_ARCH:-$($E info 2>/dev/null | sed -n 's/^  arch \(sm_[0-9]*a\{0,1\}\),.*/\1/p' | head -1)}
if [ -n "$larch" ] && [ "${larch%a}" != sm_90 ]; then
  skip "gpu_lib tc32" "GPU arch $larch: tc32 runs on sm_90a"
else
  "$LB/gpu_lib" tc32 >"$LOG/lib-tc32.txt" 2>&1
  lib_check "gpu_lib tc32: f32 NN plans at 1024^3 and 2048x4096x4096 (row/col-major, beta 0/0.5) choose wisdom's tc32 entries, built for sm_90a, and match cuBLAS" "$LOG/lib-tc32.txt" $?
fi
ENGINE_JIT=sync "$LB/gpu_lib" check 17x33x5,127x129x131,33x17x0 >"$LOG/lib-check-sync.txt" 2>&1
lib_check "gpu_lib check with ENGINE_JIT=sync (each first call builds before it runs) at 17x33x5, 127x129x131, 33x17x0" "$LOG/lib-check-sync.txt" $?
"$LB/gpu_lib" ctx >"$LOG/lib-ctx.txt" 2>&1
lib_check "gpu_lib ctx: the caller's current context (none, or one of its own) is the current one after every call (both paths, wait, plan create and execute, describe), and the products are right" "$LOG/lib-ctx.txt" $?
"$LB/gpu_lib" ws >"$LOG/lib-ws.txt" 2>&1
lib_check "gpu_lib ws: a two-pass split-K plan on the caller's workspace (engine_plan_execute_ws, engine_plan_workspace_size bytes) matches cuBLAS; a short one is refused and launches nothing" "$LOG/lib-ws.txt" $?
"$LB/gpu_lib" capture >"$LOG/lib-capture.txt" 2>&1
lib_check "gpu_lib capture: a never-called problem captured into a CUDA graph records cuBLAS, after engine_wait the engine's kernel; both replays right" "$LOG/lib-capture.txt" $?
"$LB/gpu_lib" threads >"$LOG/lib-threads.txt" 2>&1
lib_check "gpu_lib threads: the same (to 127x129x131) from two host threads on one context, a stream each" "$LOG/lib-threads.txt" $?
if [ -n "${SAN_SKIP:-}" ] || [ -z "$CS" ]; then
  skip "memcheck gpu_lib" "${SAN_SKIP:-no compute-sanitizer}"
else
  "$CS" --tool memcheck --error-exitcode 99 "$LB/gpu_lib" check 17x33x5,127x129x131,33x17x0 >"$LOG/lib-memcheck.txt" 2>&1
  rc=$?
  sum=$(grep -aE '^[0-9]+ passed, [0-9]+ failed$' "$LOG/lib-memcheck.txt" | tail -n 1)
  if [ $rc = 0 ] && grep -aq 'ERROR SUMMARY: 0 errors' "$LOG/lib-memcheck.txt" && [[ $sum =~ ^[1-9][0-9]*\ passed,\ 0\ failed$ ]]; then
    pass "memcheck gpu_lib check at 17x33x5, 127x129x131, 33x17x0 ($sum, 0 errors)"
  else
    fail "memcheck gpu_lib (exit $rc, ${sum:-no summary})" "$(grep -a -m 8 -E 'ERROR|Invalid|^FAIL' "$LOG/lib-memcheck.txt")"
  fi
fi
if have_py; then
  PYTHONPATH=python ENGINE_LIB="$LB/libengine.so" "$PY" tests/gpu_torch.py >"$LOG/lib-torch.txt" 2>&1
  lib_check "engine.matmul against torch.matmul: ops x shapes x beta x dtypes, views, batches, the current stream" "$LOG/lib-torch.txt" $?
else
  skip "engine.matmul against torch.matmul" "no python3"
fi
fi
