#!/usr/bin/env bash
# make test-gpu — everything that needs the GPU, run with the prebuilt build/engine (the GPU machine
# has no jansson headers, so nothing is rebuilt here). Logs go to $GPU_LOG_DIR (default build/gpu-logs).
#   every shipped config verified at 1x1x1, 17x33x5, 127x129x131, 1000^3 and 2048^3, beta = 0 and != 0
#   f64 runs of the templates that take both types; the cuBLAS cross-check against the CPU
#   the warp tile's paired lane layout at every width it allows
#   deliberately wrong fixtures that verification must catch (one only on a second launch); exit codes of the error paths
#   --format jsonl and --set; compute-sanitizer memcheck, racecheck, initcheck and synccheck on
#   each template; K = 0; 65536x65536x16 (64-bit offsets) and the refusal of what does not fit;
#   a template that requires sm_90a; split-K in warptile, DMMA and blocktile at shapes one past a tile, three modes
#   (all of it launched with programmatic dependent launch on sm_90; split-K also without, ENGINE_PDL=0);
#   stream-K in warptile and DMMA, runs that start and end inside tiles; interior tiles unguarded and
#   edge tiles guarded (EDGE 1, 0 and 3), B by cp.async (B_ASYNC), B packed first (PACK_B), loads two
#   tiles ahead (LOAD_AHEAD) and C through shared memory (C_STAGE) at odd shapes;
#   layouts (section layouts): op NN NT TN TT at 1x1x1, 17x33x5, 127x129x131, 1000x1001x999, f32 and
#   f64, leading dimensions padded by 1, 8 and 64, strided batches (packed, padded, broadcast A), C's
#   padding left untouched (verify checks it), memcheck, a bench row carrying the layout; strided
#   batches in warptile, DMMA and blocktile; transposes and padded rows in them (every loader path),
#   split-K and stream-K in every op; --auto at op TN (the NN entries weighed); their refusal of a
#   padded C with split-K or stream-K, and of a batch with split-K;
#   layouts-tb (also in layouts): DMMA's n-major B^T at even K (16-byte copies, partial k-tiles,
#   register-staged, split-K, stream-K, memcheck), warptile's PAD_BT in every DB path, DMMA's
#   STAGES_NARROW and ODD_LD at ld + 1 and odd K (every op, batches with odd strides, memcheck);
#   rows aligned to 2 but not 4 elements; the skinny warp tiles and FP64 tensor-core tiles of the shipped
#   wisdom; sliced K in warptile
#   crash isolation: a faulting config among good ones in bench and verify; engine tune over a
#   space holding a faulting and a hanging kernel; a second tune served from the CUBIN cache; a
#   tune of 100 warptile points at 4096^3 whose winner verifies
#   accuracy classes: wrong_k (a k-step dropped) caught by class f32, not the element screen, at
#   K = 65536 and 131072; inputs rounded to TF32 rejected by class f32 and passed by class tf32;
#   every shipped config within its class at K = 1, 7, 64, 4096, 65536, its errors by K beside
#   cuBLAS's written to $GPU_LOG_DIR/accuracy-by-k.md (for docs/RESULTS.md)
#   the shipped wisdom of this GPU's arch, generated from wisdom/*.json: verify --auto at every
#   entry's shape and at odd shapes near it (wisdom), memcheck of each distinct configuration
#   (config + set) near its entry (wisdom-memcheck, a section of its own so that each fits a device
#   call); verify --auto at 16 random odd shapes (bench/random_shapes.sh 424242 16)
#   the regression guard: CHECK=1 bench/regress.sh against bench/baseline/<device>.jsonl, which must exist
#   the library (library): examples/sgemm PASS against cuBLAS; on an sm_90 GPU, f32 plans where wisdom
#   holds tc32 entries choose them and match cuBLAS (gpu_lib tc32); build/gpu_lib (tests/gpu_lib.c) every op x
#   odd shapes x beta x f32/f64 x row/column-major x ld padding x batch through libengine against cuBLAS,
#   the same from two host threads at once, compute-sanitizer memcheck of it; engine.matmul against
#   torch.matmul (tests/gpu_torch.py, PYTHONPATH=python, ENGINE_LIB=build/libengine.so)
# Every check looks at what it claims, never at an exit code alone: a verify passes when its summary
# counts every row asked for (configs x shapes x 2 betas) passed, a sanitizer run when its own
# summary is clean and so is the verify inside it, a tune when it logged points, none of them a wrong
# result (engine tune exits 1 when one is), a refusal when its message names the reason.
# tests/gpu_stub.sh (in make test) runs this script against a stub engine that prints nothing: every
# check must fail there. A check that cannot run here (no python3, no compute-sanitizer) is counted
# as skipped. ENGINE_BIN, COMPUTE_SANITIZER and PYTHON override the programs used; GPU_SANITIZE=0
# skips the sanitizer runs of the sanitize and wisdom-memcheck sections; GPU_ARCH=sm_XX stands in
# for the arch `engine info` reports (the wisdom sections read it), BASELINE for regress.sh's.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
E=${ENGINE_BIN:-build/engine}
LOG=${GPU_LOG_DIR:-build/gpu-logs}
# GPU_ONLY="edges sanitize" runs only those sections, so that a device call can stay inside its time
# limit; default all. A name not in SECTIONS is an error (exit 2).
SECTIONS="device verify f64 lanes wrong accuracy errors edges layouts layouts-tb splitk streamk interior vec2 skinny slicek sm90a wisdom wisdom-memcheck auto isolation tune-faults tune formats sanitize regress library"
for s in ${GPU_ONLY:-}; do
  [[ " $SECTIONS " == *" $s "* ]] || { echo "GPU_ONLY: no section \"$s\"; the sections are: $SECTIONS"; exit 2; }
done
want() { [ -z "${GPU_ONLY:-}" ] || [[ " $GPU_ONLY " == *" $1 "* ]]; }
[ -x "$E" ] || { echo "$E is missing: run make first"; exit 2; }
mkdir -p "$LOG"
TPL_FIX=tests/templates:kernels_src
FIX="env ENGINE_TEMPLATES=$TPL_FIX"
# compute-sanitizer: $COMPUTE_SANITIZER, else CUDA_HOME's, else the one on PATH; empty when there is none.
if [ -n "${COMPUTE_SANITIZER:-}" ]; then
  CS=$COMPUTE_SANITIZER
else
  CS=${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer
  [ -x "$CS" ] || CS=$(command -v compute-sanitizer)
fi
[ -n "$CS" ] && [ -x "$CS" ] || CS=""

# verify_rows VERIFY_ARGS...: the rows `engine verify VERIFY_ARGS` runs: every config (an argument
# ending in .json; with --auto and none, the one wisdom picks per shape) at every shape of --shapes
# (run.c's 5 without it), beta = 0 and beta != 0.
verify_rows() {
  local a prev="" nc=0 ns=5 commas auto=0
  for a in "$@"; do
    if [ "$prev" = --shapes ]; then commas=${a//[^,]/}; ns=$((${#commas} + 1)); fi
    [[ $a == *.json ]] && nc=$((nc + 1))
    [ "$a" = --auto ] && auto=1
    prev=$a
  done
  [ "$nc" = 0 ] && nc=$auto
  echo $((nc * ns * 2))
}
# verify_summary LOG: the last "verify: N passed, N failed, N errors" line of LOG (run.c), or "no verify summary".
verify_summary() {
  local l
  l=$(sed -n '/^verify: /h; ${x;p;}' "$1")
  echo "${l:-no verify summary}"
}
# check_verify NAME LOG RC ROWS: verify exited 0 and its summary counts ROWS passed, none failed and
# no errors (a verify that ran nothing, or fewer rows than asked, does not pass).
check_verify() {
  local got
  got=$(verify_summary "$2")
  if [ "$3" = 0 ] && [ "$got" = "verify: $4 passed, 0 failed, 0 errors" ]; then
    pass "$1 ($4 rows)"
  else
    fail "$1 (exit $3, $got; expected $4 passed)" "$(grep -a -m 5 -A3 -E '^(FAIL|error)' "$2")"
  fi
}
# run_verify NAME LOGBASE VERIFY_ARGS...: `engine verify VERIFY_ARGS` into $LOG/LOGBASE.txt, checked
# for every row the arguments ask for. Environment assignments before it reach the engine.
run_verify() {
  local name=$1 log=$LOG/$2.txt
  shift 2
  $E verify "$@" >"$log" 2>&1
  check_verify "$name" "$log" $? "$(verify_rows "$@")"
}
# sanitize_verify LABEL LOGBASE "TOOLS" VERIFY_ARGS...: each compute-sanitizer tool of TOOLS over
# `engine verify VERIFY_ARGS` (the kernels run in a worker, so every process is followed), one
# check each, named "TOOL LABEL"; logs in $LOG/LOGBASE-TOOL.txt. Passes when the sanitizer exits 0,
# prints its clean summary (ERROR SUMMARY: 0 errors; racecheck's RACECHECK SUMMARY: 0 hazards) and
# no other, and the verify it ran passed every row asked for. Skipped without a compute-sanitizer,
# or with the reason in SAN_SKIP.
sanitize_verify() {
  local label=$1 base=$2 tools=$3 tool log rc rows clean want got
  shift 3
  rows=$(verify_rows "$@")
  for tool in $tools; do
    if [ -n "${SAN_SKIP:-}" ] || [ -z "$CS" ]; then
      skip "$tool $label" "${SAN_SKIP:-no compute-sanitizer}"
      continue
    fi
    log=$LOG/$base-$tool.txt
    "$CS" --tool "$tool" --target-processes all --error-exitcode 99 $E verify "$@" >"$log" 2>&1
    rc=$?
    want='ERROR SUMMARY: 0 errors'
    [ "$tool" = racecheck ] && want='(ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards)'
    clean=$(grep -a -cE "$want" "$log")
    got=$(verify_summary "$log")
    if [ $rc = 0 ] && [ "$clean" -ge 1 ] && ! grep -a -qE '(ERROR|RACECHECK) SUMMARY: [1-9]' "$log" &&
      [ "$got" = "verify: $rows passed, 0 failed, 0 errors" ]; then
      pass "$tool $label"
    else
      fail "$tool $label (exit $rc, $clean clean summaries, $got; expected $rows passed)" \
        "$(grep -a -m 8 -E 'ERROR|hazard|Invalid|error' "$log")"
    fi
  done
}
# check_says NAME RC WANT_RC LOG ERE: the command exited WANT_RC and its output (LOG) matches ERE; an
# exit code alone could come from any failure, a missing GPU or a stub.
check_says() {
  if [ "$2" = "$3" ] && grep -a -qE -- "$5" "$4"; then pass "$1"; else fail "$1 (exit $2, expected $3 and /$5/)" "$(head -20 "$4")"; fi
}
# class_broken LOG CLASS: how many FAIL lines of LOG show errors beyond the bound of accuracy class
# CLASS, read from the line's "CLASS err MAX/MEAN u (cuBLAS MAX/MEAN)" (run.c): max > 2 x cuBLAS's
# + 16 u or mean > 2 x cuBLAS's + 4 u (accuracy.h).
class_broken() {
  sed -n "s/^FAIL .* $2 err \([^/ ]*\)\/\([^ ]*\) u (cuBLAS \([^/]*\)\/\([^)]*\)).*/\1 \2 \3 \4/p" "$1" |
    awk '$1 + 0 > 2 * $3 + 16 || $2 + 0 > 2 * $4 + 4 {n++} END {print n + 0}'
}
# check_class_fail NAME RC LOGBASE ROWS CLASS [class]: a verify (stdout in LOGBASE.txt, stderr in
# LOGBASE.err) exited 1 with all ROWS rows failed, each FAIL line's figures beyond class CLASS's
# bound. With "class", a second check: the element screen passed every row (no "N of M wrong"
# count) and stderr says each time that it was the accuracy class that failed.
check_class_fail() {
  local got broken counted said
  got=$(verify_summary "$3.txt")
  broken=$(class_broken "$3.txt" "$5")
  if [ "$2" = 1 ] && [ "$got" = "verify: 0 passed, $4 failed, 0 errors" ] && [ "$broken" = "$4" ]; then
    pass "$1: all $4 rows FAIL, their errors beyond class $5's bound"
  else
    fail "$1: all rows FAIL beyond class $5's bound (exit $2, $got; $broken of $4 FAIL lines beyond the bound)" \
      "$(grep -a -m 6 -E '^(ok|FAIL|error)' "$3.txt")"
  fi
  [ "${6:-}" = class ] || return 0
  counted=$(grep -c '^FAIL .* wrong (' "$3.txt")
  said=$(grep -c "verification failed at [0-9x]* beta=[^:]*: accuracy class $5: " "$3.err")
  if [ "$broken" = "$4" ] && [ "$counted" = 0 ] && [ "$said" = "$4" ]; then
    pass "$1: the element screen passed it, the class caught it ($4 times \"accuracy class $5\")"
  else
    fail "$1: caught by the class, not the screen ($counted FAIL lines with an element count, $said of $4 stderr lines name accuracy class $5)" \
      "$(grep -a -m 4 'verification failed' "$3.err")"
  fi
}
# check_tune NAME RC JSONL: a tune that logged points, none of them a wrong result (status FAIL),
# and exited as documented: 1 when any point's result was wrong, else 0.
check_tune() {
  local rows nfail want=0
  rows=$(cat "$3" 2>/dev/null | grep -c '"status":')
  nfail=$(cat "$3" 2>/dev/null | grep -c '"status":"FAIL"')
  [ "$nfail" -gt 0 ] && want=1
  if [ "$rows" -gt 0 ] && [ "$nfail" = 0 ] && [ "$2" = "$want" ]; then
    pass "$1 ($rows rows, none wrong)"
  else
    fail "$1 (exit $2, expected $want; $rows rows, $nfail wrong results)" "$(grep '"status":"FAIL"' "$3" 2>/dev/null | head -3)"
  fi
}
# python3 ($PYTHON overrides it); have_py: whether there is one.
PY=${PYTHON:-python3}
have_py() { command -v "$PY" >/dev/null; }
# check_py NAME FILE [DETAIL] <<'PY': the Python program on stdin, given FILE, must exit 0;
# skipped without python3.
check_py() {
  local out
  if ! have_py; then
    cat >/dev/null
    skip "$1" "no python3"
    return
  fi
  if out=$("$PY" - "$2" 2>&1); then pass "$1"; else fail "$1" "$(tail -n 3 <<<"$out")${3:+
$3}"; fi
}
# jfield KEY: the string field KEY of each JSON line on stdin (the engine writes them compactly).
jfield() { sed -n 's/.*"'"$1"'":"\([^"]*\)".*/\1/p'; }

# cap_shapes: MxNxK lines on stdin as one comma list, each side made odd (1 added to an even one),
# then M and N shrunk in proportion until C has at most 2^27 elements, K at most 65537.
cap_shapes() {
  awk -F x 'function odd(v) { return v % 2 ? v : v + 1 }
    NF == 3 { m = odd($1); n = odd($2); k = odd($3); c = 2 ^ 27
      if (m * n > c) { f = sqrt(c / (m * n)); m = int(m * f); n = int(n * f) }
      if (m < 1) m = 1; if (n < 1) n = 1; if (k > 65537) k = 65537
      printf "%s%dx%dx%d", sep, m, n, k; sep = "," }'
}

# --auto in the wisdom and auto sections reads the shipped wisdom only: XDG_DATA_HOME names a folder
# without any, so no user wisdom ($XDG_DATA_HOME/engine/wisdom, read first) gets in.
SHIPPED_ONLY=$LOG/xdg-data

if want device; then
echo "== device"
$E info --bandwidth | tee "$LOG/info.txt"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] && grep -qE '^device [0-9]+: ' "$LOG/info.txt" && grep -q '^  measured: DRAM [0-9]' "$LOG/info.txt" &&
  pass "engine info names the device and measures it" || fail "engine info names the device and measures it (exit $rc)"
fi

if want verify; then
echo "== verify every shipped config (f32 and f64 as shipped), with the cuBLAS cross-check"
run_verify "verify configs/*.json" verify --cross-check configs/*.json
grep -E '^(FAIL|error)|cross-check' "$LOG/verify.txt"
tail -1 "$LOG/verify.txt"
# Each dtype is cross-checked at two shapes, beta = 0 and beta != 0 (serve.c): four lines, all ok.
for dt in f32 f64; do
  n=$(grep -c "^cross-check $dt cuBLAS vs .*: ok (" "$LOG/verify.txt")
  bad=$(grep -c "^cross-check $dt .*: FAIL" "$LOG/verify.txt")
  [ "$n" = 4 ] && [ "$bad" = 0 ] && pass "cross-check $dt cuBLAS vs CPU (4 ok)" ||
    fail "cross-check $dt cuBLAS vs CPU ($n ok, $bad FAIL; expected 4 ok)" "$(grep "^cross-check $dt" "$LOG/verify.txt")"
done
fi

if want f64; then
echo "== the f32 templates in f64"
F64="configs/tiled.json configs/regblock.json configs/bank_pad_vec.json configs/ldg_wider2.json configs/sb06_vectorize.json
     configs/sb07_linearize.json configs/sb10_warptiling.json configs/sb11_double_buffer.json configs/sb12_double_buffer2.json
     configs/warptile_db.json configs/splitk3.json configs/splitk4_2pass.json configs/multibuf_b3.json configs/ldg_async.json configs/naive.json"
# shellcheck disable=SC2086
run_verify "verify --dtype f64" verify-f64 --dtype f64 --shapes 1x1x1,17x33x5,127x129x131,1000x1000x1000 $F64
grep -E '^(FAIL|error)' "$LOG/verify-f64.txt"
tail -1 "$LOG/verify-f64.txt"
fi

if want lanes; then
echo "== the paired lane layout (LANES 1) at 2, 4, 8 and 16 lanes across a warp step, f32 and f64"
for geo in "WM=64 WN=32 WNITER=2 TN=8" "WM=32 WN=64 WNITER=2 TN=8" "WM=32 WN=64 WNITER=1 TN=8" "WM=32 WN=64 WNITER=1 TN=4"; do
  sets=""
  for kv in $geo LANES=1 SNAKE=1; do sets="$sets --set $kv"; done
  for dt in f32 f64; do
    # shellcheck disable=SC2086
    run_verify "verify warptile LANES=1 $geo ($dt)" lanes configs/warptile_db.json $sets --dtype $dt \
      --shapes 1x1x1,17x33x5,127x129x131,1000x1000x1000
  done
done
fi

if want wrong; then
echo "== wrong kernels must be caught"
# Each runs 4 rows (2 shapes x 2 betas): all of them must run, and at least one must FAIL.
for t in wrong_k wrong_edge wrong_beta wrong_state; do
  $FIX $E verify tests/configs/gpu/$t.json --shapes 1x1x1,127x129x131 >"$LOG/$t.txt" 2>&1
  rc=$?
  sum=$(verify_summary "$LOG/$t.txt")
  read -r _ np _ nf _ ne _ <<<"${sum//,/}"
  if [ "$rc" = 1 ] && [[ "$np $nf $ne" =~ ^[0-9]+\ [1-9][0-9]*\ 0$ ]] && [ $((np + nf)) = 4 ]; then
    pass "$t is caught ($nf of 4 rows FAIL, exit 1)"
  else
    fail "$t is caught (exit $rc, $sum; expected exit 1, 4 rows, 1 or more failed)" "$(head -20 "$LOG/$t.txt")"
  fi
done
# wrong_beta reads C at beta = 0, where C holds NaN: every beta = 0 row must FAIL and count NaN/Inf
# elements ("FAIL  label dtype shape beta=0     N of M wrong (N NaN/Inf), ...", run.c).
b0=$(grep -cE '^[A-Za-z]+ +[^ ]+ +f(32|64) +[0-9x]+ +beta=0 ' "$LOG/wrong_beta.txt")
nan=$(grep -cE '^FAIL .* beta=0 .*\([1-9][0-9]* NaN/Inf\)' "$LOG/wrong_beta.txt")
[ "$b0" = 2 ] && [ "$nan" = 2 ] && pass "wrong_beta: the NaN poison leaks and is reported (NaN/Inf counted at beta = 0)" ||
  fail "wrong_beta: NaN poison reported in $nan of $b0 beta = 0 rows (expected 2 of 2)" "$(grep ' beta=0 ' "$LOG/wrong_beta.txt")"
fi

if want accuracy; then
echo "== accuracy classes against an FP64 reference: fixtures that must fail them, every shipped config within its class at K = 1 to 65536"
# wrong_k drops the k-step K/2: at K = 65536 and beyond that is inside the element screen's bound,
# (16 + 8 sqrt(K)) u S, and only class f32 (max <= 2 x SGEMM's + 16 u, mean <= 2 x SGEMM's + 4 u) sees it.
$FIX $E verify tests/configs/gpu/wrong_k.json --shapes 64x64x65536,32x32x131072 >"$LOG/acc-wrong_k.txt" 2>"$LOG/acc-wrong_k.err"
check_class_fail "wrong_k at K = 65536 and 131072" $? "$LOG/acc-wrong_k" 4 f32 class
# tf32_inputs rounds A and B to TF32 (10 mantissa bits) and sums in FP32: class f32 must reject it
# at every K (at small K the screen may too); the same kernel held to class tf32 passes.
ACC_TF32_SHAPES=129x127x64,257x255x4096,64x64x65536
$FIX $E verify tests/configs/gpu/tf32_inputs.json --shapes $ACC_TF32_SHAPES >"$LOG/acc-tf32.txt" 2>"$LOG/acc-tf32.err"
check_class_fail "tf32_inputs as class f32 at K = 64, 4096, 65536" $? "$LOG/acc-tf32" 6 f32
ENGINE_TEMPLATES=$TPL_FIX run_verify "tf32_inputs_tf32 (class tf32) at K = 64, 4096, 65536" acc-tf32-tf32 \
  tests/configs/gpu/tf32_inputs_tf32.json --shapes $ACC_TF32_SHAPES
n=$(grep -c '^ok .* tf32 err [0-9.e+-]*/[0-9.e+-]* u (cuBLAS ' "$LOG/acc-tf32-tf32.txt")
[ "$n" = 6 ] && pass "tf32_inputs_tf32 is judged as class tf32, against cuBLAS TF32 (6 rows)" ||
  fail "tf32_inputs_tf32 judged as class tf32 ($n of 6 ok rows show tf32 errors)" "$(grep -a -m 6 -E '^(ok|FAIL)' "$LOG/acc-tf32-tf32.txt")"
# Every shipped config within its class (f32 or f64) at K = 1, 7, 64, 4096 and 65536, beta = 0 and != 0.
run_verify "every shipped config within its accuracy class at K = 1, 7, 64, 4096, 65536" acc-configs configs/*.json \
  --shapes 33x65x1,33x65x7,129x127x64,257x255x4096,64x64x65536
# Their errors by K beside cuBLAS's, for docs/RESULTS.md: $LOG/accuracy-by-k.md.
rm -f "$LOG/accuracy-by-k.md"
check_py "the errors by K of every shipped config, beside cuBLAS's, in $LOG/accuracy-by-k.md" "$LOG/acc-configs.txt" <<'PY'
import collections, glob, os, re, sys
log = sys.argv[1]
line = re.compile(r"^(?:ok|FAIL)\s+(\S+)\s+(f32|f64)\s+(\d+)x(\d+)x(\d+)\s+beta=\S+.*\s(f32|f64|tf32) err "
                  r"(\S+)/(\S+) u \(cuBLAS (\S+)/(\S+)\)")
ks = [1, 7, 64, 4096, 65536]
cells = collections.defaultdict(dict)  # (config, class) -> K -> [max, mean, cuBLAS max, cuBLAS mean], worst of both betas
for l in open(log, errors="replace"):
    m = line.match(l)
    if not m:
        continue
    k, cls = int(m.group(5)), m.group(6)
    got = [float(x) for x in m.group(7, 8, 9, 10)]
    old = cells[(m.group(1), cls)].get(k)
    cells[(m.group(1), cls)][k] = got if old is None else [max(a, b) for a, b in zip(old, got)]
nconf = len(glob.glob("configs/*.json"))
assert len(cells) == nconf, f"{len(cells)} configs with error figures, {nconf} shipped"
short = [f"{c} K={k}" for (c, _), row in cells.items() for k in ks if k not in row]
assert not short, "no figures for " + ", ".join(short[:8])
g = lambda x: f"{x:.3g}"
out = ["Error against the FP64 reference in u of sum |a||b| (accuracy.h): the kernel's max/mean, cuBLAS's",
       "(SGEMM, DGEMM) on the same inputs in parentheses; the worse of beta = 0 and beta = -0.5.", "",
       "| config | class | " + " | ".join(f"K={k}" for k in ks) + " |", "|---|---|" + "---|" * len(ks)]
for (c, cls), row in sorted(cells.items(), key=lambda x: (x[0][1], x[0][0])):
    out.append(f"| {c} | {cls} | " + " | ".join(f"{g(r[0])}/{g(r[1])} ({g(r[2])}/{g(r[3])})" for r in (row[k] for k in ks)) + " |")
open(os.path.join(os.path.dirname(log), "accuracy-by-k.md"), "w").write("\n".join(out) + "\n")
PY
[ -f "$LOG/accuracy-by-k.md" ] && cat "$LOG/accuracy-by-k.md"
fi

if want errors; then
echo "== error paths"
$FIX $E verify tests/configs/gpu/fault.json --shapes 64x64x64 >"$LOG/fault.txt" 2>&1
check_says "kernel fault exits 3 and names the CUDA error" $? 3 "$LOG/fault.txt" 'CUDA_ERROR_[A-Z_]+'
$FIX $E verify tests/configs/gpu/needs_k4.json --shapes 16x16x6 >"$LOG/refuse.txt" 2>&1
check_says "declared shape requirement refuses K=6 (exit 2), naming the requirement" $? 2 "$LOG/refuse.txt" 'requires K % 4 == 0'
ENGINE_TEMPLATES=$TPL_FIX run_verify "declared shape requirement accepts K=8" accept tests/configs/gpu/needs_k4.json --shapes 16x16x8
$E verify configs/tiled.json --device 99 >"$LOG/device.txt" 2>&1
check_says "--device 99 exits 3, naming the GPU that is not there" $? 3 "$LOG/device.txt" 'there is no GPU 99'
$E verify configs/tiled.json --arch sm_80 --shapes 64x64x64 >"$LOG/arch.txt" 2>&1
check_says "an sm_80 CUBIN on this GPU exits 2 and says why" $? 2 "$LOG/arch.txt" 'the CUBIN cannot run on this sm_'
echo '{"name": "x", "template": "blocktile", "params": {"BM": 64,}}' >"$LOG/bad.json"
$E bench "$LOG/bad.json" configs/tiled.json --size 256 --runs 2 >"$LOG/bad.txt" 2>&1
check_says "a bad config among good ones: reported, the good one runs (its row ok), exit 2" $? 2 "$LOG/bad.txt" '^tiled +ok '
fi

if want edges; then
echo "== BLAS edges: K = 0 is C = beta*C; matrices of 2^31 elements and more"
run_verify "K = 0: every shipped config, beta = 0 and beta != 0" k0 configs/*.json --shapes 5x5x0,64x33x0
run_verify "K = 0, beta = 1: C unchanged" k0-beta1 configs/warptile_db.json configs/dgemm_dmma.json --beta 1 --shapes 17x9x0
# 65536 x 65536 x 16: C alone is 2^32 elements (17 GB in f32); the kernels take 64-bit offsets
# (IDX64). The host fills, checks and bounds every element, so this one takes a minute or two.
run_verify "65536x65536x16 f32 verifies (warptile_db)" big-f32 configs/warptile_db.json --shapes 65536x65536x16
$E verify configs/dgemm_dmma.json --shapes 65536x65536x16 >"$LOG/big-refused.txt" 2>&1
check_says "65536x65536x16 f64 does not fit: exit 3, naming the memory needed and free" $? 3 "$LOG/big-refused.txt" \
  'needs [0-9.]+ GB, [0-9.]+ GB free'
fi

if want layouts; then
echo "== layouts: transposes, leading dimensions and strided batches (engine/layout.h; inputs padded with NaN)"
LSH=1x1x1,17x33x5,127x129x131,1000x1001x999
for op in NN NT TN TT; do
  run_verify "naive f32 op $op" "layouts-naive-$op" configs/naive.json --op "$op" --shapes $LSH
  run_verify "naive f64 op $op" "layouts-naive64-$op" configs/naive.json --dtype f64 --op "$op" --shapes $LSH
done
for pad in 1 8 64; do
  run_verify "naive op TT, lda/ldb/ldc padded by $pad" "layouts-pad$pad" configs/naive.json --op TT \
    --lda +$pad --ldb +$pad --ldc +$pad --shapes 17x33x5,127x129x131
done
run_verify "naive batch 3, packed strides, op NT" layouts-batch configs/naive.json --batch 3 --op NT --shapes 1x1x1,17x33x5,127x129x131
# One shape per run: a stride must clear every shape's span (127*131 A, 131*129 B, 127*129 C).
run_verify "naive batch 3, padded strides, op TN" layouts-batch-pad configs/naive.json --batch 3 --op TN \
  --stride-a 17000 --stride-b 17001 --stride-c 17002 --shapes 127x129x131
run_verify "naive batch 3, one A for all (stride 0), ldc padded" layouts-batch-bcast configs/naive.json --batch 3 \
  --stride-a 0 --ldc +8 --shapes 127x129x131
run_verify "naive f64 batch 3, op TT, lda padded" layouts-batch64 configs/naive.json --dtype f64 --batch 3 --op TT \
  --lda +1 --shapes 17x33x5,127x129x131
sanitize_verify "naive op TN, padded, batch 3" layouts-san "memcheck" configs/naive.json --op TN --lda +1 --ldb +8 \
  --ldc +1 --batch 3 --shapes 17x33x5
# A bench row carries the layout, and cuBLAS ran in it (its row is there, timed).
$E bench configs/naive.json --op NT --lda +1 --batch 2 --m 64 --n 64 --k 64 --runs 3 --format jsonl \
  >"$LOG/layouts-bench.jsonl" 2>"$LOG/layouts-bench.err"
rc=$?
nok=$(grep -c '"config":"naive".*"op":"NT","lda":65,"ldb":64,"ldc":64,"batch":2,"status":"ok"' "$LOG/layouts-bench.jsonl")
ncub=$(grep -c '"config":"cublas".*"op":"NT","lda":65,"ldb":64,"ldc":64,"batch":2,"status":"ok".*cublasGemmStridedBatchedEx' "$LOG/layouts-bench.jsonl")
[ $rc = 0 ] && [ "$nok" = 1 ] && [ "$ncub" = 1 ] && pass "bench rows carry op, lda, ldb, ldc, batch (naive and cuBLAS)" ||
  fail "bench rows carry the layout (exit $rc; $nok naive rows, $ncub cuBLAS rows)" "$(head -5 "$LOG/layouts-bench.jsonl" "$LOG/layouts-bench.err")"
# The tile templates: strided batches of packed NN products on grid z, at odd shapes (guarded tiles).
for c in warptile_db gmem_vec; do
  run_verify "$c batch 3, packed strides" "layouts-batch-$c" configs/$c.json --batch 3 --shapes 1x1x1,17x33x5,127x129x131,1000x1001x999
done
run_verify "dgemm_dmma batch 3, packed strides" layouts-batch-dmma configs/dgemm_dmma.json --batch 3 --shapes 1x1x1,17x33x5,127x129x131,1000x1001x999
run_verify "warptile_db f64 batch 3, packed strides" layouts-batch-wt64 configs/warptile_db.json --dtype f64 --batch 3 --shapes 17x33x5,127x129x131
for c in warptile_db dgemm_dmma gmem_vec; do
  run_verify "$c batch 3, padded strides" "layouts-batchpad-$c" configs/$c.json --batch 3 --stride-a 17000 \
    --stride-b 17004 --stride-c 17008 --shapes 127x129x131
done
run_verify "warptile_db batch 4, one B for all (stride 0)" layouts-bcast-wt configs/warptile_db.json --batch 4 --stride-b 0 --shapes 127x129x131
sanitize_verify "warptile_db batch 3" layouts-san-wt "memcheck" configs/warptile_db.json --batch 3 --shapes 127x129x131
# Transposes and padded rows in the tile templates (tile_pipeline.cuh): every op at odd shapes
# (partial tiles, rows not aligned to a vector) and 1000x1001x999, both betas (verify runs 0 and
# -0.5), in each dtype a template takes; split-K and stream-K in every op.
for op in NN NT TN TT; do
  run_verify "warptile_db f32 op $op" "layouts-wt-$op" configs/warptile_db.json --op "$op" --shapes $LSH
  run_verify "warptile_db f64 op $op" "layouts-wt64-$op" configs/warptile_db.json --dtype f64 --op "$op" --shapes $LSH
  run_verify "dgemm_dmma op $op" "layouts-dmma-$op" configs/dgemm_dmma.json --op "$op" --shapes $LSH
  run_verify "gmem_vec op $op" "layouts-gv-$op" configs/gmem_vec.json --op "$op" --shapes $LSH
  run_verify "warptile_splitk op $op" "layouts-wsk-$op" configs/warptile_splitk.json --op "$op" \
    --shapes 17x33x5,127x129x131,65x33x4097
  run_verify "dgemm_dmma_splitk op $op" "layouts-dsk-$op" configs/dgemm_dmma_splitk.json --op "$op" \
    --shapes 17x33x5,65x33x4097
  run_verify "warptile_streamk op $op" "layouts-wstk-$op" configs/warptile_streamk.json --op "$op" \
    --shapes 17x33x5,127x129x131,1000x1001x999
done
# The other paths of the loaders, transposed: warptile's single buffer, staggered halves, cp.async
# (A along M by 16-byte copies into its k-major tile), B by cp.async, loads ahead, C through shared
# memory; blocktile's k-major A, linearized B, cp.async stages; DMMA without cp.async.
for op in TT; do
  for c in sb10_warptiling sb11_double_buffer sb12_double_buffer2 bank_pad_vec sb07_linearize multibuf_b3; do
    run_verify "$c op $op" "layouts-$c-$op" configs/$c.json --op "$op" --shapes 17x33x5,127x129x131
  done
  run_verify "warptile_db B_ASYNC 1 op $op" "layouts-wtba-$op" configs/warptile_db.json --set B_ASYNC=1 --op "$op" \
    --shapes 17x33x5,127x129x131
  run_verify "warptile_db LOAD_AHEAD 1 C_STAGE 1 op $op" "layouts-wtla-$op" configs/warptile_db.json \
    --set LOAD_AHEAD=1 --set C_STAGE=1 --op "$op" --shapes 17x33x5,127x129x131
  run_verify "dgemm_dmma ASYNC 0 op $op" "layouts-dmma0-$op" configs/dgemm_dmma.json --set ASYNC=0 --set STAGES=2 \
    --op "$op" --shapes 17x33x5,127x129x131
done
# Leading dimensions padded by 1 (every row unaligned: scalar loads and stores), 8 and 64.
for pad in 1 8 64; do
  for c in warptile_db dgemm_dmma gmem_vec; do
    run_verify "$c op TN, lda/ldb/ldc padded by $pad" "layouts-pad$pad-$c" configs/$c.json --op TN \
      --lda +$pad --ldb +$pad --ldc +$pad --shapes 17x33x5,127x129x131,1000x1001x999
  done
  run_verify "warptile_db op NN, lda/ldb padded by $pad, PACK_B 1" "layouts-padpk$pad" configs/warptile_db.json \
    --set PACK_B=1 --lda +$pad --ldb +$pad --ldc +$pad --shapes 17x33x5,127x129x131
  run_verify "warptile_splitk op NT, lda/ldb padded by $pad" "layouts-padsk$pad" configs/warptile_splitk.json --op NT \
    --lda +$pad --ldb +$pad --shapes 17x33x5,65x33x4097
done
# Batches of transposed products with padded rows and strides.
for c in warptile_db dgemm_dmma gmem_vec; do
  run_verify "$c batch 3, op TT, padded rows and strides" "layouts-batchtt-$c" configs/$c.json --batch 3 --op TT \
    --lda +1 --ldb +8 --ldc +64 --stride-a 17000 --stride-b 17004 --stride-c 30000 --shapes 127x129x131
done
sanitize_verify "warptile_db op TT" layouts-san-wtT "memcheck" configs/warptile_db.json --op TT --shapes 17x33x5,127x129x131
sanitize_verify "dgemm_dmma op NT, padded by 1" layouts-san-dmP "memcheck" configs/dgemm_dmma.json --op NT \
  --lda +1 --ldb +1 --ldc +1 --shapes 17x33x5,127x129x131
# --auto at a non-NN op: the shipped wisdom holds no TT entries for one product (its TT entries are
# 3xTF32 batches'), so the model weighs the NN ones (the explanation says so) and the configs it picks
# run transposed; for FP32 in NT and TN it weighs the development points measured in that op.
for dt in f32 f64; do
  XDG_DATA_HOME=$SHIPPED_ONLY run_verify "verify --auto --op TT --dtype $dt" "layouts-auto-$dt" --auto --explain --op TT \
    --dtype $dt --shapes 127x129x131,1000x1001x999
  grep -q -E "no wisdom entry of op TT (for one product )?at this level.*weighed the NN entries" "$LOG/layouts-auto-$dt.txt" &&
    pass "...its explanation says the NN entries were weighed" ||
    fail "...its explanation says the NN entries were weighed" "$(head -5 "$LOG/layouts-auto-$dt.txt")"
done
for op in NT TN; do
  XDG_DATA_HOME=$SHIPPED_ONLY run_verify "verify --auto --op $op --dtype f32" "layouts-auto-$op" --auto --explain --op $op \
    --dtype f32 --shapes 127x129x131,1000x1001x999
  # The choice names its entry (a development point: dev-seeds.json:LINE) and the nearest entries
  # weighed, with no note of a fallback to NN's.
  if grep -q "dev-seeds.json:[0-9]" "$LOG/layouts-auto-$op.txt" && grep -q "nearest entries" "$LOG/layouts-auto-$op.txt" &&
    ! grep -q "weighed the NN entries" "$LOG/layouts-auto-$op.txt"; then
    pass "...it weighs the $op entries (no NN fallback)"
  else
    fail "...it weighs the $op entries (no NN fallback)" "$(grep -m3 -E "weighed|auto:" "$LOG/layouts-auto-$op.txt")"
  fi
done
# Split-K and stream-K refuse a padded C (their scale_c, reduce and workspace index C packed), and
# split-K a batch, by their declared rules; nothing runs.
for c in warptile_splitk warptile_streamk dgemm_dmma_splitk; do
  $E verify configs/$c.json --ldc +1 --shapes 17x33x5 >"$LOG/layouts-refuse-$c.txt" 2>&1
  check_says "$c refuses a padded ldc by its declared rule" $? 2 "$LOG/layouts-refuse-$c.txt" \
    "shape 17x33x5 op NN lda=5 ldb=33 ldc=34 is refused: template [a-z]+ requires LDC == N \\|\\| "
done
$E verify configs/warptile_splitk.json --batch 2 --shapes 65x33x4097 >"$LOG/layouts-refuse-splitk.txt" 2>&1
check_says "warptile_splitk refuses a batch by its declared rule" $? 2 "$LOG/layouts-refuse-splitk.txt" \
  "requires BATCH == 1 \\|\\| \\(SPLITK == 1 && STREAMK == 0\\)"
fi
# Section layouts-tb (also run by layouts): the switches a transposed B and narrowed rows pick
# (bench/layouts.sh runs it alone before its timings).
if want layouts || want layouts-tb; then
echo "== layouts-tb: transposed B stored n-major (DMMA), padded B^T rows (warptile), deeper pipelines for narrowed rows"
# DMMA's n-major B (B_NMAJOR: f64 with B transposed, Bs[n][k], tile_pipeline.cuh): the layouts
# section's shapes all have an odd K, which narrows B's copies to one element; an even K takes the 16-byte
# copies, with a partial last k-tile (70, 130, 1000: not multiples of BK 16) and whole tiles
# (64^3); ldb padded by 8 (rows aligned, LDP 0); the register-staged path (ASYNC 0) and its scalar
# fallback where the tile's row pitch is odd (PAD_B 1); split-K and stream-K at even K; a deeper
# pipeline for narrowed rows (STAGES_NARROW 4 at ld + 1, and at K odd); FP32's dmma (tc32_sync),
# which keeps Bs[k][n], through the new fragment index; memcheck of the 16-byte path at a partial
# k-tile.
DSH=64x64x64,130x66x70,96x200x130,1000x1001x1000
for op in NT TT; do
  run_verify "dgemm_dmma op $op, even K (n-major B, 16-byte copies)" "layouts-dmmaev-$op" configs/dgemm_dmma.json \
    --op "$op" --shapes $DSH
  run_verify "dgemm_dmma op $op, ld padded by 8, even K" "layouts-dmmaev8-$op" configs/dgemm_dmma.json --op "$op" \
    --lda +8 --ldb +8 --ldc +8 --shapes 130x66x70,1000x1001x1000
  run_verify "dgemm_dmma ASYNC 0 op $op, even K" "layouts-dmmaev0-$op" configs/dgemm_dmma.json --set ASYNC=0 \
    --set STAGES=2 --op "$op" --shapes 64x64x64,130x66x70,96x200x130
  run_verify "dgemm_dmma ASYNC 0 PAD_B 1 op $op (odd tile pitch)" "layouts-dmmapb1-$op" configs/dgemm_dmma.json \
    --set ASYNC=0 --set STAGES=2 --set PAD_B=1 --op "$op" --shapes 17x33x5,130x66x70
  run_verify "dgemm_dmma_splitk op $op, even K" "layouts-dskev-$op" configs/dgemm_dmma_splitk.json --op "$op" \
    --shapes 130x66x70,65x34x4096
  run_verify "dgemm_dmma_streamk op $op, even K" "layouts-dstkev-$op" configs/dgemm_dmma_streamk.json --op "$op" \
    --shapes 130x66x70,1000x1001x1000
  run_verify "tc32_sync op $op" "layouts-tc32-$op" configs/tc32_sync.json --op "$op" --shapes 17x33x5,130x66x72
done
# warptile_db pads B's stored rows by PAD_BT 4 where B is transposed (its config): the other DB
# paths, and the old pitch (PAD_BT 0), at the transposes.
for op in NT TT; do
  run_verify "warptile_db PAD_BT 0 op $op" "layouts-wtpb0-$op" configs/warptile_db.json --set PAD_BT=0 --op "$op" \
    --shapes 17x33x5,127x129x131,256x256x64
  for db in "DB=0" "DB=1" "DB=2 --set PAD_B=4" "B_ASYNC=1"; do
    # shellcheck disable=SC2086
    run_verify "warptile_db $db op $op" "layouts-wtpb-${db%% *}-$op" configs/warptile_db.json --set $db --op "$op" \
      --shapes 17x33x5,127x129x131,256x256x64
  done
done
for op in NN NT TT; do
  run_verify "dgemm_dmma STAGES_NARROW 4 op $op, ld padded by 1" "layouts-dmmasn-$op" configs/dgemm_dmma.json \
    --set STAGES_NARROW=4 --op "$op" --lda +1 --ldb +1 --ldc +1 --shapes 17x33x5,127x129x131,1000x1001x999
done
run_verify "dgemm_dmma STAGES_NARROW 4, K odd, packed" layouts-dmmasn-k configs/dgemm_dmma.json --set STAGES_NARROW=4 \
  --shapes 130x66x71,1000x1001x999
# ODD_LD: the 2-element chunks whose source is 16-byte aligned copied whole where rows are
# narrowed (odd ld, or odd K or N packed), A's and B^T's rows dealt by parity; in every op, at
# partial tiles, with batches whose odd strides move each product's alignment, and under memcheck.
ODD=(--set ODD_LD=1 --set MINB_ODD=3)
for op in NN NT TN TT; do
  run_verify "dgemm_dmma ODD_LD op $op, ld padded by 1" "layouts-dmmaodd-$op" configs/dgemm_dmma.json "${ODD[@]}" \
    --op "$op" --lda +1 --ldb +1 --ldc +1 --shapes 17x33x5,127x129x131,1000x1001x999,256x192x160
  run_verify "dgemm_dmma ODD_LD op $op, K and N odd, packed" "layouts-dmmaoddk-$op" configs/dgemm_dmma.json \
    "${ODD[@]}" --op "$op" --shapes 130x67x71,1000x1001x999,128x129x127
done
run_verify "dgemm_dmma ODD_LD STAGES_NARROW 4 op NN, ld padded by 1" layouts-dmmaoddsn configs/dgemm_dmma.json \
  "${ODD[@]}" --set STAGES_NARROW=4 --lda +1 --ldb +1 --ldc +1 --shapes 127x129x131,1000x1001x999
run_verify "dgemm_dmma ODD_LD batch 3, op TT, odd strides" layouts-dmmaoddb configs/dgemm_dmma.json "${ODD[@]}" \
  --batch 3 --op TT --lda +1 --ldb +3 --ldc +1 --stride-a 17001 --stride-b 17005 --stride-c 30000 --shapes 127x129x131
# PACK_LD: A and B copied packed into the workspace first where ld + 1 leaves their rows unaligned
# (rows of even length only: at 17x34x6 op TN/TT A's rows along M are odd, so only B is packed), at
# whole and partial tiles, and under memcheck.
for op in NN NT TN TT; do
  run_verify "dgemm_dmma PACK_LD op $op, ld padded by 1" "layouts-dmmapk-$op" configs/dgemm_dmma.json \
    --set PACK_LD=1 --op "$op" --lda +1 --ldb +1 --ldc +1 --shapes 17x34x6,64x64x64,130x66x70,1000x1002x1000
done
sanitize_verify "dgemm_dmma PACK_LD op TT, ld padded by 1" layouts-san-dmP "memcheck" configs/dgemm_dmma.json \
  --set PACK_LD=1 --op TT --lda +1 --ldb +1 --ldc +1 --shapes 130x66x70,256x192x160
# memcheck: in op NN B's rows along N end inside the last tile (N 129), in op TN A's along M (M 127)
# as well; the first run caught a 16-byte copy past B's end at NN (tile_pipeline.cuh, async_rchunk_odd).
for op in NN TN; do
  sanitize_verify "dgemm_dmma ODD_LD op $op, ld padded by 1" "layouts-san-dmO-$op" "memcheck" \
    configs/dgemm_dmma.json "${ODD[@]}" --op $op --lda +1 --ldb +1 --ldc +1 --shapes 127x129x131,256x192x160
done
sanitize_verify "dgemm_dmma op NT, even K" layouts-san-dmE "memcheck" configs/dgemm_dmma.json --op NT \
  --shapes 130x66x70,96x200x130
fi

if want splitk; then
echo "== split-K in the warp-tiled, DMMA and block-tiled templates: odd shapes (each dimension 1 past a tile), three modes"
SK="configs/warptile_splitk.json configs/dgemm_dmma_splitk.json"
# Mode 2: one launch, the first split of a tile to finish writes it, the others wait and add.
# Verification checks the second of two launches, so the tile counters must be left at zero;
# 4160x4160x64 has 65x65 blocktile tiles, more than the module's 4096 counters: mode 2 falls back
# to scale_c and atomics.
# shellcheck disable=SC2086
run_verify "split-K, one-launch mode" splitk $SK configs/splitk2.json --set SPLITK_MODE=2 \
  --shapes 1x1x1,65x33x4097,129x129x8193,127x129x131,255x257x259
run_verify "split-K, one-launch mode past 4096 tiles" splitk-many configs/splitk2.json --set SPLITK_MODE=2 --shapes 4160x4160x64
# shellcheck disable=SC2086
run_verify "split-K, atomic mode" splitk0 $SK --set SPLITK_MODE=0 --shapes 1x1x1,65x33x4097,129x129x8193,127x129x131
# shellcheck disable=SC2086
run_verify "split-K, deterministic two-pass mode" splitk2 $SK --set SPLITK_MODE=1 --shapes 1x1x1,17x33x5,65x33x4097,127x129x131
# The same plans launched plainly (ENGINE_PDL=0): the path of GPUs before sm_90.
# shellcheck disable=SC2086
ENGINE_PDL=0 run_verify "split-K, two-pass mode, without PDL" splitk-nopdl $SK --set SPLITK_MODE=1 --shapes 1x1x1,127x129x131
for c in splitk2 warptile_splitk dgemm_dmma_splitk; do
  sanitize_verify "$c, one-launch mode" "splitk-$c" "memcheck racecheck" configs/$c.json --set SPLITK_MODE=2 --shapes 67x45x37
done
fi

if want streamk; then
echo "== stream-K in warptile and DMMA: runs across tile boundaries, more blocks than k-tiles, odd shapes"
SK="configs/warptile_streamk.json configs/dgemm_dmma_streamk.json"
# shellcheck disable=SC2086
run_verify "stream-K at odd shapes" streamk $SK --shapes 1x1x1,17x33x5,129x65x4097,257x129x131,1000x1000x1000
# 7 and 1 blocks: runs of uneven length that start and end inside tiles; one block doing everything.
for n in 7 1; do
  # shellcheck disable=SC2086
  run_verify "stream-K with $n blocks" streamk-$n $SK --set STREAMK=$n --shapes 129x129x257,65x33x1001
done
fi

if want interior; then
echo "== interior and edge tiles (EDGE): tiles inside C unguarded, edge tiles guarded; both settings, odd shapes"
# Shapes with interior tiles and partial tiles along M, N or both, K partial or whole; with split-K,
# stream-K and sliced K, whose epilogues differ for the two kinds of tile.
IE="configs/warptile_db.json configs/dgemm_simt.json configs/dgemm_dmma.json configs/warptile_splitk.json configs/dgemm_dmma_splitk.json configs/warptile_streamk.json configs/dgemm_dmma_streamk.json"
for edge in 1 0; do
  # shellcheck disable=SC2086
  run_verify "EDGE=$edge: interior and edge tiles at odd shapes" interior-$edge $IE --set EDGE=$edge \
    --shapes 257x385x131,1000x1001x999,513x512x64,512x515x67,4095x129x257
done
# EDGE 3 (warptile only): the guarded copy called as a function of its own.
IEW="configs/warptile_db.json configs/dgemm_simt.json configs/warptile_splitk.json configs/warptile_streamk.json"
# shellcheck disable=SC2086
run_verify "EDGE=3: interior and edge tiles at odd shapes" interior-3 $IEW --set EDGE=3 \
  --shapes 257x385x131,1000x1001x999,513x512x64,512x515x67,4095x129x257,1x1x1
# B by cp.async inside the register-staged double buffer (B_ASYNC 1; 2 where N % 4 != 0), f32 and f64.
for ba in 1 2; do
  # shellcheck disable=SC2086
  run_verify "B_ASYNC=$ba at odd shapes" basync-$ba configs/warptile_db.json configs/warptile_splitk.json --set B_ASYNC=$ba \
    --shapes 1x1x1,17x33x5,257x385x131,1000x1001x999,129x65x4097
done
run_verify "B_ASYNC=1 in f64" basync-f64 configs/warptile_db.json --dtype f64 --set B_ASYNC=1 --shapes 17x33x5,257x385x131
# Register-staged loads two tiles ahead (LOAD_AHEAD 1), f32 and f64, with split-K and stream-K (parts
# of one and two k-tiles: the prologue's second load and the last iterations' skipped ones).
# shellcheck disable=SC2086
run_verify "LOAD_AHEAD=1 at odd and whole shapes" ahead configs/warptile_db.json configs/warptile_splitk.json configs/warptile_streamk.json \
  --set LOAD_AHEAD=1 --shapes 1x1x1,17x33x5,257x385x131,1000x1001x999,129x65x4097,128x128x8,128x128x16,256x256x24
run_verify "LOAD_AHEAD=1 in f64" ahead-f64 configs/warptile_db.json configs/dgemm_simt.json --dtype f64 --set DB=3 --set LOAD_AHEAD=1 \
  --shapes 17x33x5,257x385x131,128x128x16
# B packed into the workspace first (PACK_B 1 at every shape; 2 where N % VEC_B != 0; 3 where also
# K % VEC_A == 0): every pipeline (DB 0 sb10, 1 sb11, 2 dgemm_simt and sb12, 3 warptile_db), split-K
# by atomics, stream-K, loads two tiles ahead, EDGE 3; M, N, K = 1 mod the 128x128x8 tile, N = 2 mod 4,
# and K past one pack row group.
PK="configs/warptile_db.json configs/dgemm_simt.json configs/sb10_warptiling.json configs/sb11_double_buffer.json configs/sb12_double_buffer2.json configs/warptile_splitk.json configs/warptile_streamk.json"
for pb in 1 2 3; do
  # shellcheck disable=SC2086
  run_verify "PACK_B=$pb at odd and whole shapes" packb-$pb $PK --set PACK_B=$pb \
    --shapes 1x1x1,17x33x5,129x129x9,257x385x131,1000x1001x999,66x130x34,129x65x4097,256x256x64
done
run_verify "PACK_B=1 with EDGE=3 in f64" packb-f64 configs/warptile_db.json configs/dgemm_simt.json --dtype f64 --set PACK_B=1 --set EDGE=3 \
  --shapes 1x1x1,129x129x9,257x385x131
run_verify "PACK_B=1 with LOAD_AHEAD=1 and EDGE=3" packb-ahead configs/warptile_db.json --set PACK_B=1 --set LOAD_AHEAD=1 --set EDGE=3 \
  --shapes 1x1x1,129x129x9,257x385x131
# C's tile through shared memory (C_STAGE 1 everywhere; 2, the default, where N % VEC_C != 0), f32 and f64.
# shellcheck disable=SC2086
run_verify "C_STAGE=1 at odd and whole shapes" cstage configs/warptile_db.json configs/dgemm_simt.json configs/sb10_warptiling.json \
  --set C_STAGE=1 --shapes 1x1x1,17x33x5,257x385x131,1000x1001x999,129x65x4097,256x256x64
# The default stages C also where K <= 1024 with N's rows unaligned (K a multiple of VEC_A: the new case).
run_verify "C_STAGE 2 (default) at unaligned N with K <= 1024" cstage2 configs/warptile_db.json configs/dgemm_simt.json \
  configs/sb10_warptiling.json --shapes 17x33x8,127x129x128,2251x11601x4,1000x1001x1024
sanitize_verify "of interior and edge tiles (warptile_db, dgemm_dmma_streamk)" interior "memcheck racecheck" \
  configs/warptile_db.json configs/dgemm_dmma_streamk.json --shapes 257x385x131
sanitize_verify "of B by cp.async in the register-staged pipeline" basync "memcheck racecheck synccheck" \
  configs/warptile_db.json --set B_ASYNC=1 --shapes 257x385x131
sanitize_verify "of the edge tiles' code called as a function (EDGE 3)" edge3 "memcheck racecheck" \
  configs/warptile_db.json --set EDGE=3 --shapes 257x385x132
sanitize_verify "of B packed into the workspace first (PACK_B)" packb "memcheck racecheck initcheck" \
  configs/warptile_db.json configs/dgemm_simt.json --set PACK_B=1 --shapes 257x385x131
sanitize_verify "of loads two tiles ahead" ahead "memcheck racecheck synccheck" \
  configs/warptile_db.json --set LOAD_AHEAD=1 --shapes 257x385x131
sanitize_verify "of C's tile through shared memory" cstage "memcheck racecheck synccheck" \
  configs/warptile_db.json --set C_STAGE=1 --shapes 257x385x131
fi

if want vec2; then
echo "== rows aligned to 2 elements but not 4 (M, N, K = 2 mod 4): half-width loads, B read in strided groups"
run_verify "every shipped config at 66x130x34 and 2x6x2" vec2 configs/*.json --shapes 66x130x34,2x6x2
fi

if want skinny; then
echo "== skinny and tiny warp tiles (16-row blocks with BK 32 and the one-warp tile, as the shipped wisdom picks them; 16-column blocks): odd shapes, sanitizers"
SKM="--set BM=16 --set WM=16 --set WN=32 --set WNITER=1 --set TN=4 --set BK=32 --set THREADS=128 --set MINB=4"
SKN="--set BN=16 --set WN=16 --set WM=32 --set WNITER=1 --set TN=4 --set THREADS=128 --set MINB=4"
# The one-warp tile with 32-deep k-slices that the tiny shapes pick, split 4 ways.
SKT="--set BM=16 --set BN=32 --set BK=32 --set WM=16 --set WN=32 --set WNITER=1 --set TM=2 --set TN=4 --set THREADS=32 --set MINB=16 --set SPLITK=4"
for v in SKM SKN SKT; do
  # shellcheck disable=SC2086
  run_verify "skinny tile $v at odd shapes" skinny-$v configs/warptile_splitk.json ${!v} --shapes 1x1x1,17x65x4097,65x17x4097,17x8193x1025
  # shellcheck disable=SC2086
  sanitize_verify "skinny tile $v" "skinny-$v" "memcheck racecheck" configs/warptile_splitk.json ${!v} --shapes 17x65x37
done
fi

if want skinny; then
echo "== the tiny-shape DMMA tile the shipped wisdom picks (32x32 blocks of four 16x16 warp tiles, BK 32): odd shapes, sanitizers"
SKD="--set BM=32 --set BN=32 --set BK=32 --set WM=16 --set WN=16 --set MMA=1688 --set THREADS=128"
for sk in 1 4; do
  # shellcheck disable=SC2086
  run_verify "tiny DMMA tile, SPLITK $sk, at odd shapes" tiny-dmma-$sk configs/dgemm_dmma_splitk.json $SKD --set SPLITK=$sk \
    --shapes 1x1x1,17x33x5,33x33x33,127x129x131,255x257x259
done
# shellcheck disable=SC2086
sanitize_verify "tiny DMMA tile" tiny-dmma "memcheck racecheck" configs/dgemm_dmma_splitk.json $SKD --set SPLITK=1 --shapes 67x45x37
fi

if want skinny; then
echo "== the FP64 tensor-core tiles the shipped wisdom picks beyond the tiny ones: odd shapes, sanitizers"
# 128x64 and 64x128 blocks of 64x32 warp tiles with m16n8k16 (large squares); blocks one
# instruction tile tall (16 rows, BK 64; 16x8192x8192); 64x64 blocks of eight 32x16 warps with
# m16n8k16 (1024^3).
DT1="configs/dgemm_dmma.json --set BM=128 --set MMA=16816 --set WM=64"
DT2="configs/dgemm_dmma.json --set BN=128 --set MMA=16816 --set WM=64"
DT3="configs/dgemm_dmma_splitk.json --set BM=16 --set BK=64 --set MMA=1688 --set WM=16 --set WN=16 --set SPLITK=4"
DT4="configs/dgemm_dmma_splitk.json --set MMA=16816 --set WN=16 --set THREADS=256 --set SPLITK=1"
# 64x128 blocks of the 64x32 m16n8k16 warp tiles split 32 ways (512x512x65536); 32x16 blocks of
# four 16x8 warp tiles (8192x16x8192).
DT5="configs/dgemm_dmma_splitk.json --set BN=128 --set MMA=16816 --set WM=64 --set SPLITK=32"
DT6="configs/dgemm_dmma_splitk.json --set BM=32 --set BN=16 --set BK=64 --set MMA=1688 --set WM=16 --set WN=8 --set SPLITK=1"
for v in DT1 DT2 DT3 DT4 DT5 DT6; do
  # shellcheck disable=SC2086
  run_verify "FP64 tile $v at odd shapes" dmma-tile-$v ${!v} --shapes 1x1x1,17x33x5,33x65x129,127x129x131,65x33x4097
done
for v in DT1 DT3 DT6; do
  # shellcheck disable=SC2086
  sanitize_verify "FP64 tile $v" "dmma-tile-$v" "memcheck racecheck" ${!v} --shapes 131x67x45
done
fi

if want slicek; then
echo "== sliced K in warptile (groups of warps sharing a tile's k-steps, summed through shared memory): odd shapes, both schedules, with split-K and stream-K, sanitizers"
# 64x64 tiles of four 32x32 warps, in 2 or 4 groups; 32x64 tiles of four 16x32 warps in 4 groups of 4-step slices.
SL2="--set BM=64 --set BN=64 --set BK=32 --set WM=32 --set WN=32 --set WNITER=1 --set TM=4 --set TN=4 --set SLICEK=2 --set THREADS=256 --set MINB=2"
SL4="--set BM=64 --set BN=64 --set BK=32 --set WM=32 --set WN=32 --set WNITER=1 --set TM=4 --set TN=4 --set SLICEK=4 --set THREADS=512 --set MINB=1"
SLT="--set BM=32 --set BN=64 --set BK=16 --set WM=16 --set WN=32 --set WNITER=1 --set TM=2 --set TN=4 --set SLICEK=4 --set THREADS=512 --set MINB=1"
# The tiles the shipped wisdom picks for large K (32x64 blocks of two 32x32 warps, two groups),
# for 512^3 (the same block in four groups) ...
SLW="--set BM=32 --set BN=64 --set BK=32 --set WN=32 --set WNITER=1 --set TN=4 --set SLICEK=2 --set THREADS=128 --set MINB=4"
SL5="--set BM=32 --set BN=64 --set BK=32 --set WN=32 --set WNITER=1 --set TN=4 --set SLICEK=4 --set THREADS=256 --set MINB=2"
# ... and for 8192x16x8192: a 64x16 block of one warp tile in four groups.
SLN="--set BM=64 --set BN=16 --set BK=32 --set WM=64 --set WN=16 --set WNITER=1 --set TN=4 --set SLICEK=4 --set THREADS=128 --set MINB=4"
for v in SL2 SL4 SLT SLW SL5 SLN; do
  i=0
  for extra in "--set SPLITK=1 --set DB=3" "--set SPLITK=4 --set DB=2 --set STAGES=3" "--set SPLITK=64 --set DB=2 --set STAGES=3" "--set SPLITK=1 --set STREAMK=7"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    run_verify "sliced K $v ($extra) at odd shapes" slicek-$v-$i configs/warptile_splitk.json ${!v} $extra \
      --shapes 1x1x1,17x33x5,65x65x33,127x129x131,33x65x4097
  done
done
# f64 takes the same code path with twice the shared memory.
# shellcheck disable=SC2086
run_verify "sliced K in f64 at odd shapes" slicek-f64 configs/warptile_splitk.json $SL4 --set SPLITK=2 --dtype f64 \
  --shapes 1x1x1,127x129x131,65x63x1025
# shellcheck disable=SC2086
sanitize_verify "sliced K" slicek "memcheck racecheck synccheck initcheck" configs/warptile_splitk.json $SL4 --set SPLITK=2 \
  --shapes 67x45x133
fi

if want sm90a; then
echo "== sm_90a: a template that requires the architecture-specific target"
ENGINE_TEMPLATES=$TPL_FIX run_verify "verify --arch sm_90a" sm90a tests/configs/gpu/needs_sm90a.json --arch sm_90a \
  --shapes 1x1x1,64x64x64,127x129x131
$FIX $E verify tests/configs/gpu/needs_sm90a.json --arch sm_90 --shapes 64x64x64 >"$LOG/sm90a-refused.txt" 2>&1
check_says "the same template for --arch sm_90 is refused (exit 2), naming the rule" $? 2 "$LOG/sm90a-refused.txt" \
  '\(target sm_90\): .*only on sm_90a'
run_verify "any template runs as sm_90a" sm90a-any configs/warptile_db.json --arch sm_90a --shapes 127x129x131
# Without --arch a template that declares "arch_specific" is built for sm_90a on an sm_90 GPU
# (arch_for_template, setup.h): the sm_90a-only template runs, so wisdom and --auto can choose such
# configs; every other template stays sm_90 (tests/tc32.sh).
if [ "$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)" = 9.0 ]; then
  ENGINE_TEMPLATES=$TPL_FIX run_verify "sm_90a-only template without --arch on an sm_90 GPU" sm90a-auto \
    tests/configs/gpu/needs_sm90a.json --shapes 64x64x64
  # tc32's layouts (SWAP): A stored K x M (transposed by the split of A), B stored N x K (its
  # fragments by ldmatrix from rows of K), leading dimensions aligned (+8: 16-byte copies) and
  # unaligned (+1: A and B copied packed first by PACK_LD, the shipped configs; with PACK_LD 0,
  # 4-byte copies); strided batches.
  for op in NT TN TT; do
    run_verify "tc32_3x and tc32_1x op $op" "sm90a-tc32-$op" configs/tc32_3x.json configs/tc32_1x.json --op "$op" \
      --shapes 1x1x1,17x33x5,127x129x131,130x66x72,256x256x64,1000x1001x999
  done
  run_verify "tc32_3x and tc32_1x, lda/ldb/ldc + 8" sm90a-tc32-ld8 configs/tc32_3x.json configs/tc32_1x.json \
    --lda +8 --ldb +8 --ldc +8 --shapes 17x33x5,130x66x72,1000x1001x1000
  run_verify "tc32_3x op TT, lda/ldb/ldc + 8" sm90a-tc32-tt8 configs/tc32_3x.json --op TT --lda +8 --ldb +8 --ldc +8 \
    --shapes 130x66x72,1000x1001x1000
  for op in NN NT TN; do
    run_verify "tc32_3x op $op, lda/ldb/ldc + 1 (PACK_LD: copied packed first)" "sm90a-tc32-ld1-$op" configs/tc32_3x.json \
      --op "$op" --lda +1 --ldb +1 --ldc +1 --shapes 17x33x5,130x66x72,256x256x64
  done
  run_verify "tc32_3x op TT, TSPLIT 1 (A^T's split in 4 x 4 blocks, TN's default)" sm90a-tc32-ts1 configs/tc32_3x.json \
    --op TT --set TSPLIT=1 --shapes 17x33x5,130x66x72,256x256x64
  run_verify "tc32_3x op TT, lda/ldb/ldc + 1, PACK_LD 0 (4-byte copies)" sm90a-tc32-ld1-pl0 configs/tc32_3x.json --op TT \
    --set PACK_LD=0 --lda +1 --ldb +1 --ldc +1 --shapes 17x33x5,130x66x72
  run_verify "tc32_3x op TT, a strided batch of 3" sm90a-tc32-b configs/tc32_3x.json --op TT --batch 3 \
    --shapes 17x33x5,130x66x72
  sanitize_verify "of tc32_3x op TT (split_a_t, ldmatrix) at lda + 8" tc32-tt "memcheck racecheck" \
    configs/tc32_3x.json --op TT --lda +8 --ldb +8 --ldc +8 --shapes 130x66x72
  sanitize_verify "of tc32_3x op TN with PACK_LD at lda + 1" tc32-pl "memcheck racecheck" \
    configs/tc32_3x.json --op TN --lda +1 --ldb +1 --ldc +1 --shapes 130x66x72
fi
fi

# wisdom_plan SECTION: the checks of the wisdom sections, generated from the shipped wisdom files
# whose arch is this GPU's (sm_90 and sm_90a alike) and default.json, read by Python (nothing here
# names an entry), into $LOG/wisdom-plan.txt. GPU_ARCH stands in for `engine info`'s arch
# (tests/gpu_stub.sh). Non-zero, with a failed or skipped check named after SECTION, when there is
# no plan. One line per check, tab-separated: "verify DTYPE LOGBASE WHAT SHAPES" (at most 64
# shapes, the engine's limit) or "memcheck DTYPE LOGBASE WHAT SHAPE CONFIG --set K=V ...". Own
# shapes as the entries have them (the largest, 12288^2, is 1.1 x 2^27 elements of C), so --auto
# finds each exactly; near ones M+1 x N-1 x K+1 and M-1 x N+1 x K-1, capped as cap_shapes caps;
# memcheck at the first entry of each (dtype, config, set), each side odd and at most 256 x 256 x 1024.
wisdom_plan() {
  local warch prc
  warch=${GPU_ARCH:-$($E info 2>/dev/null | sed -n 's/^  arch \(sm_[0-9]*a\{0,1\}\),.*/\1/p' | head -1)}
  if [ -z "$warch" ]; then
    fail "$1: engine info names this GPU's arch" "$($E info 2>&1 | head -3)"
    return 1
  elif ! have_py; then
    skip "$1: the wisdom entries for $warch" "no python3"
    return 1
  fi
  "$PY" - "$warch" wisdom >"$LOG/wisdom-plan.txt" 2>"$LOG/wisdom-plan.err" <<'PY'
import glob, json, math, os, sys
arch, wdir = sys.argv[1].rstrip("a"), sys.argv[2]
files = []
for f in sorted(glob.glob(os.path.join(wdir, "*.json"))):
    w = json.load(open(f))
    if ("arch" not in w and "device" not in w) or w.get("arch", "").rstrip("a") == arch:
        files.append((f, w))
entries = [e for _, w in files for e in w["entries"]]
# Entries taken from oracle rows (<device>.dev-seeds.json, bench/oracle_entries.py) are verified at
# their own shapes; the odd shapes near them are left to the tuned entries' (their configs are the
# tuned entries' own, and there are hundreds of them).
tuned = {id(e) for f, w in files if not f.endswith(".dev-seeds.json") for e in w["entries"]}
assert entries, f"no wisdom entries for {arch} in {wdir}"

def dims(s):
    return [int(x) for x in s.split("x")]

def cap(m, n, k):
    if m * n > 2 ** 27:
        f = math.sqrt(2 ** 27 / (m * n))
        m, n = int(m * f), int(n * f)
    return max(1, m), max(1, n), min(max(1, k), 65537)

def small(v, most):
    v = min(v, most)
    if v % 2 == 0:
        v = v + 1 if v + 1 <= most else v - 1
    return max(1, v)

def text(m, n, k):
    return f"{m}x{n}x{k}"

def unique(xs):
    return list(dict.fromkeys(xs))

print(f"# {len(entries)} entries of {', '.join(f for f, _ in files)} for {arch}")
for dt in ("f32", "f64"):
    es = [e for e in entries if e["dtype"] == dt]
    if not es:
        continue
    # Each entry at its own shape in its own op and batch (an op's points and batch entries are what
    # --auto picks from for problems of that op and kind); odd shapes near the tuned entries, NN.
    kinds = unique((e.get("op", "NN"), int(e.get("batch", 1))) for e in es)
    groups = [(op, b, unique(e["shape"] for e in es if (e.get("op", "NN"), int(e.get("batch", 1))) == (op, b)))
              for op, b in kinds]
    own = unique(e["shape"] for e in es)
    near = []
    for e in es:
        if id(e) not in tuned:
            continue
        m, n, k = dims(e["shape"])
        near += [text(*cap(m + 1, n - 1, k + 1)), text(*cap(m - 1, n + 1, k - 1))]
    near = [s for s in unique(near) if s not in own]
    for what, op, b, shapes in [("own", op, b, sh) for op, b, sh in groups] + [("near", "NN", 1, near)]:
        parts = [shapes[i:i + 64] for i in range(0, len(shapes), 64)]
        kind = ("" if op == "NN" else f"op {op}") + (f"{', ' if op != 'NN' else ''}batch {b}" if b > 1 else "")
        tag = "" if (op, b) == ("NN", 1) else f"-{op.lower()}{b}"
        for i, p in enumerate(parts, 1):
            label = ("at the entries' own shapes" if what == "own" else "at odd shapes near the entries") + \
                    f" ({len(p)} shape{'s' if len(p) > 1 else ''}" + (f", {kind}" if kind else "") + \
                    (f", part {i} of {len(parts)})" if len(parts) > 1 else ")")
            print("\t".join(["verify", dt, f"wisdom-{dt}-{what}{tag}-{i}", label, ",".join(p), f"--op {op} --batch {b}"]))
    seen = {}
    for e in es:
        key = (e["config"], tuple(sorted(e.get("set", {}).items())))
        if key in seen:
            continue
        seen[key] = e
        m, n, k = dims(e["shape"])
        sets = e.get("set", {})
        name = os.path.basename(e["config"])[:-len(".json")]
        name += "[" + ",".join(f"{a}={v}" for a, v in sets.items()) + "]" if sets else ""
        args = " ".join([e["config"]] + [f"--set {a}={v}" for a, v in sets.items()])
        shape = text(small(m, 256), small(n, 256), small(k, 1024))
        print("\t".join(["memcheck", dt, f"wisdom-{dt}-cs-{len(seen)}", f"{name} (entry {e['shape']})", shape, args]))
PY

  prc=$?
  grep '^#' "$LOG/wisdom-plan.txt"
  if [ $prc != 0 ] || ! grep -q '^verify' "$LOG/wisdom-plan.txt"; then
    fail "$1: the checks generated from wisdom/*.json for $warch (exit $prc)" "$(tail -n 3 "$LOG/wisdom-plan.err")"
    return 1
  fi
}

if want wisdom; then
echo "== the shipped wisdom for this GPU: verify --auto at every entry's shape and at odd shapes near it, f32 and f64"
if wisdom_plan wisdom; then
  while IFS=$'\t' read -r -u 3 kind dt base what shapes args; do
    [ "$kind" = verify ] || continue
    # shellcheck disable=SC2086
    XDG_DATA_HOME=$SHIPPED_ONLY run_verify "verify --auto $dt $what" "$base" --auto --dtype "$dt" --shapes "$shapes" $args
  done 3<"$LOG/wisdom-plan.txt"
fi
fi

if want wisdom-memcheck; then
echo "== the shipped wisdom for this GPU: memcheck of each distinct configuration (config + set) near its entry"
if wisdom_plan wisdom-memcheck; then
  [ "${GPU_SANITIZE:-1}" = 0 ] && SAN_SKIP="GPU_SANITIZE=0"
  while IFS=$'\t' read -r -u 3 kind dt base what shapes args; do
    [ "$kind" = memcheck ] || continue
    # shellcheck disable=SC2086
    sanitize_verify "wisdom $dt $what at $shapes" "$base" memcheck $args --dtype "$dt" --shapes "$shapes"
  done 3<"$LOG/wisdom-plan.txt"
  unset SAN_SKIP
fi
fi

if want auto; then
echo "== verify --auto at random odd shapes, f32 and f64 (bench/random_shapes.sh 424242 16, even sides made odd, capped)"
if have_py; then
  AUTO_SHAPES=$(bash bench/random_shapes.sh 424242 16 | cap_shapes)
  echo "shapes: $AUTO_SHAPES"
fi
for dt in f32 f64; do
  if have_py; then
    XDG_DATA_HOME=$SHIPPED_ONLY $E verify --auto --dtype $dt --shapes "$AUTO_SHAPES" >"$LOG/auto-$dt.txt" 2>&1
    check_verify "verify --auto $dt at 16 random odd shapes" "$LOG/auto-$dt.txt" $? 32
  else
    skip "verify --auto $dt at 16 random odd shapes (bench/random_shapes.sh)" "no python3"
  fi
done
fi

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
         sb10_warptiling sb11_double_buffer sb12_double_buffer2 warptile_db dgemm_simt dgemm_pipelined dgemm_dmma; do
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
lib_check "gpu_lib check: every op x 5 shapes x beta x f32/f64 x row/col-major x {packed, ld+3, batch 3} against cuBLAS" "$LOG/lib-check.txt" $?
# The tc32 plans where the GPU is an sm_90 one, or says nothing (GPU_ARCH stands in, as for wisdom_plan):
# a GPU that names another arch skips them.
larch=${GPU_ARCH:-$($E info 2>/dev/null | sed -n 's/^  arch \(sm_[0-9]*a\{0,1\}\),.*/\1/p' | head -1)}
if [ -n "$larch" ] && [ "${larch%a}" != sm_90 ]; then
  skip "gpu_lib tc32" "GPU arch $larch: tc32 runs on sm_90a"
else
  "$LB/gpu_lib" tc32 >"$LOG/lib-tc32.txt" 2>&1
  lib_check "gpu_lib tc32: f32 NN plans at 1024^3 and 2048x4096x4096 (row/col-major, beta 0/0.5) choose wisdom's tc32 entries, built for sm_90a, and match cuBLAS" "$LOG/lib-tc32.txt" $?
fi
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

summary
