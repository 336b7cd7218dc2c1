#!/usr/bin/env bash
# engine tune, merge and cache on a machine without a GPU: NVRTC compiles for real, and a fake
# worker (tests/fake_worker.py, through ENGINE_WORKER) stands in for the GPU, with points that
# fault, crash or hang on demand. Checks the space counts, the log and its resumption, crash
# isolation and worker restarts, several GPUs, the filters after compiling, the winner written
# as a config, merging shard logs, the CUBIN cache, and that no progress line reaches a pipe.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
E=${BUILD:-build}/engine
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! command -v python3 >/dev/null; then
  echo "  skipped: python3 not found (the fake worker needs it)"
  summary
  exit
fi
export ENGINE_WORKER=$PWD/tests/fake_worker.py ENGINE_TEMPLATES=tests/templates:kernels_src XDG_CACHE_HOME=$tmp/xdg
SPACE=tests/configs/tune/toy_space.json
T="$E tune $SPACE --arch sm_90 --top 3"
rows() { # LOG PYTHON-EXPRESSION over the list `rows`: prints its value
  python3 -c "import json,sys; rows=[json.loads(l) for l in open(sys.argv[1])]; print($2)" "$1"
}

echo "== every shipped space (tune/) still fits its template (for sm_90a, which every template compiles for)"
for s in tune/*.json; do
  $E tune "$s" --arch sm_90a --dry-run >"$tmp/ship.txt" 2>&1
  rc=$?
  n=$(awk '$2 == "feasible" {print $1; exit}' "$tmp/ship.txt")
  if [ $rc = 0 ] && [ "${n:-0}" -gt 0 ]; then pass "$s: $n feasible points"; else fail "$s (exit $rc, ${n:-no} feasible)" "$(tail -5 "$tmp/ship.txt")"; fi
done

echo "== the space before anything is compiled"
$T --dry-run >"$tmp/dry.txt" 2>&1
check_rc "--dry-run" 0 $?
grep -q 'space of toy (template toy, f32): 54 points = BX\[3\] x BY\[3\] x UNROLL\[2\] x MODE\[3\]' "$tmp/dry.txt" &&
  grep -q '^ *34 removed by space constraint MODE == 0 ||' "$tmp/dry.txt" && grep -q '^ *6 removed by space constraint UNROLL == 1 || BX == 32' "$tmp/dry.txt" &&
  grep -q '^ *14 feasible' "$tmp/dry.txt" && pass "dry run: 54 points, 34 + 6 removed by the space's constraints, 14 feasible" ||
  fail "dry run counts" "$(cat "$tmp/dry.txt")"
[ ! -d "$tmp/xdg" ] && pass "dry run compiled nothing (no cache was made)" || fail "dry run compiled nothing"
n=$($T --dry-run --format jsonl | grep -c '"configuration":{"BX":')
[ "$n" = 14 ] && pass "--dry-run --format jsonl: one line per feasible point" || fail "--dry-run jsonl lines ($n)"
$E tune configs/warptile_db.json --set BM=64,128,256 --set BN=64:256:*2 --set 'THREADS=32*(BM/WM)*(BN/WN)' --size 4096 \
  --arch sm_90 --dry-run >"$tmp/dry2.txt" 2>&1
grep -q 'derived: THREADS = 32\*(BM/WM)\*(BN/WN)' "$tmp/dry2.txt" && grep -q ' 9 points = BM\[3\] x BN\[3\]' "$tmp/dry2.txt" &&
  pass "--set ranges and a derived parameter from the command line" || fail "--set ranges" "$(cat "$tmp/dry2.txt")"

echo "== a tune with a faulting and a hanging point"
FAKE_FAULT=MODE=1 FAKE_HANG=MODE=2 $T --log "$tmp/a.jsonl" --timeout 2 --emit-best "$tmp/best.json" >"$tmp/a.txt" 2>"$tmp/a.err"
check_rc "tune exits 0 although two points failed" 0 $? "$(cat "$tmp/a.txt" "$tmp/a.err")"
got=$(rows "$tmp/a.jsonl" "sorted((r['status'], r['configuration']['MODE']) for r in rows if r['status'] not in ('ok', 'pruned'))")
[ "$got" = "[('fault', 1), ('timeout', 2)]" ] && pass "exactly the fault and the hang are marked (fault, timeout)" || fail "failed rows: $got"
[ "$(rows "$tmp/a.jsonl" "sum(r['stage'] == 1 and r['status'] == 'ok' for r in rows)")" = 12 ] &&
  pass "every other point verified and timed (12)" || fail "12 points timed"
[ "$(rows "$tmp/a.jsonl" "sum(r['status'] == 'pruned' for r in rows)")" = 40 ] && pass "each pruned point is a row with its reason (40)" ||
  fail "40 pruned rows"
[ "$(rows "$tmp/a.jsonl" "sum(r['stage'] == 2 for r in rows)")" = 3 ] && pass "the top 3 re-timed (stage 2)" || fail "3 finalists"
rows "$tmp/a.jsonl" "all(r['invalidity'] == {'ok': 'correct', 'pruned': 'constraints', 'fault': 'runtime', 'timeout': 'timeout'}[r['status']] and
  (r['status'] == 'ok') == (r['reason'] == '') for r in rows)" | grep -q True && pass "Kernel Tuner T4 invalidity and a reason on every failed row" ||
  fail "invalidity words"
grep -q $'\r' "$tmp/a.err" && fail "no progress line when stderr is not a terminal" || pass "no progress line when stderr is not a terminal"
ENGINE_SETUP_TIMEOUT=1 FAKE_STALL=$tmp/stalled $T --log "$tmp/st.jsonl" >"$tmp/st.txt" 2>&1
check_rc "tune exits 0 although one point's set-up stalled" 0 $? "$(tail -3 "$tmp/st.txt")"
got=$(rows "$tmp/st.jsonl" "'|'.join(r['reason'] for r in rows if r['status'] == 'timeout')")
[ "$got" = "the problem's set-up made no progress in 1 s: the worker was killed" ] &&
  [ "$(rows "$tmp/st.jsonl" "sum(r['stage'] == 1 and r['status'] == 'ok' for r in rows)")" = 13 ] &&
  pass "a stalled set-up (ENGINE_SETUP_TIMEOUT=1): that point a timeout saying so, the other 13 timed" || fail "stalled set-up in a tune: $got"
grep -q '^best at 256x256x256: ' "$tmp/a.txt" && [ -s "$tmp/best.json" ] && pass "the winner is printed and written" || fail "winner" "$(cat "$tmp/a.txt")"
$E compile "$tmp/best.json" --arch sm_90 >"$tmp/best.txt" 2>&1
check_rc "the written winner is a valid config" 0 $? "$(cat "$tmp/best.txt")"
$T --emit-best tests/configs/tune/toy.json --log "$tmp/x.jsonl" >"$tmp/x.txt" 2>&1
check_rc "--emit-best over the source config is refused" 2 $? "$(tail -2 "$tmp/x.txt")"
if command -v script >/dev/null; then
  script -q -c "FAKE_DELAY=0.1 $T" /dev/null >"$tmp/tty.txt" 2>&1
  grep -a -q $'\rtune 256x256x256 stage 1: [0-9]*/14 points' "$tmp/tty.txt" && pass "a live progress line on a terminal" ||
    fail "progress line on a terminal" "$(head -c 400 "$tmp/tty.txt")"
fi

echo "== the log: resume, interruption, a cut-off last line, a corrupt line"
t0=$(date +%s%N)
$T --log "$tmp/a.jsonl" --resume >"$tmp/r.txt" 2>&1
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check_rc "--resume of a finished tune" 0 $rc "$(cat "$tmp/r.txt")"
grep -q ' 0 evaluated now (14 were in the log)' "$tmp/r.txt" && pass "nothing is run again (${ms} ms)" || fail "resume re-ran points" "$(head -1 "$tmp/r.txt")"
$T --log "$tmp/a.jsonl" >"$tmp/r2.txt" 2>&1
check_rc "a log that holds results is not overwritten without --resume" 2 $? "$(cat "$tmp/r2.txt")"
grep -q 'already holds 57 results; pass --resume' "$tmp/r2.txt" && pass "...and the message says how to continue it" || fail "message" "$(cat "$tmp/r2.txt")"
FAKE_DELAY=0.3 $T --log "$tmp/b.jsonl" >"$tmp/b.txt" 2>&1 &
pid=$!
sleep 2
kill -INT $pid
wait $pid
rc=$?
check_rc "Ctrl-C: exit 130" 130 $rc "$(cat "$tmp/b.txt")"
n1=$(rows "$tmp/b.jsonl" "len(rows)")
$T --log "$tmp/b.jsonl" --resume >"$tmp/b2.txt" 2>&1
check_rc "the interrupted tune resumes" 0 $? "$(cat "$tmp/b2.txt")"
got=$(rows "$tmp/b.jsonl" "(len(rows), len({(r['key'], r['stage']) for r in rows}), sum(r['stage'] == 1 for r in rows))")
[ "$got" = "(57, 57, 14)" ] && [ "$n1" -ge 40 ] && [ "$n1" -lt 57 ] &&
  pass "interrupted after $n1 rows, resumed to 57 rows, no point twice" || fail "interrupt and resume: $n1 then $got"
# Slurm's requeue, preemption and scancel send SIGTERM to every process of a job, the worker as
# well as the engine, in either order. The point in flight is then no fault of its own: it must not
# be logged as one (--resume would skip it), and the tune stops as interrupted.
for who in worker "engine and worker"; do
  rm -f "$tmp/pids"
  FAKE_DELAY=0.3 FAKE_PIDS=$tmp/pids $T --log "$tmp/t-${who// /_}.jsonl" >"$tmp/t.txt" 2>&1 &
  pid=$!
  sleep 1.5
  wpid=$(tail -n 1 "$tmp/pids" 2>/dev/null)
  if [ "$who" = worker ]; then kill -TERM "$wpid"; else kill -TERM "$wpid" $pid; fi
  wait $pid
  check_rc "SIGTERM to the $who mid-point: exit 130" 130 $? "$(cat "$tmp/t.txt")"
  n1=$(rows "$tmp/t-${who// /_}.jsonl" "sum(r['stage'] == 1 for r in rows)")
  bad=$(rows "$tmp/t-${who// /_}.jsonl" "[r['reason'] for r in rows if r['status'] not in ('ok', 'pruned')]")
  $T --log "$tmp/t-${who// /_}.jsonl" --resume >"$tmp/t2.txt" 2>&1
  got=$(rows "$tmp/t-${who// /_}.jsonl" "(len(rows), len({(r['key'], r['stage']) for r in rows}), sum(r['stage'] == 1 and r['status'] == 'ok' for r in rows))")
  [ "$bad" = "[]" ] && [ "$got" = "(57, 57, 14)" ] && [ "$n1" -lt 14 ] &&
    pass "...no fault row for the point in flight; resumed from $n1 points to all 14 timed, none twice" ||
    fail "SIGTERM to the $who: failed rows $bad, $n1 then $got" "$(cat "$tmp/t.txt" "$tmp/t2.txt")"
done
head -c -200 "$tmp/a.jsonl" >"$tmp/c.jsonl"
$T --log "$tmp/c.jsonl" --resume >"$tmp/c.txt" 2>"$tmp/c.err"
check_rc "a log whose last line was cut off resumes" 0 $? "$(cat "$tmp/c.err")"
grep -q 'the last line was cut off by an interrupted write' "$tmp/c.err" && [ "$(rows "$tmp/c.jsonl" "len(rows)")" = 57 ] &&
  pass "the cut-off line is removed and that point runs again" || fail "truncated tail" "$(cat "$tmp/c.err")"
sed '3s/"status":"pruned"/"status":"banana"/' "$tmp/a.jsonl" >"$tmp/d.jsonl"
$T --log "$tmp/d.jsonl" --resume >"$tmp/d.txt" 2>&1
check_rc "a corrupt line inside the log is refused" 2 $? "$(cat "$tmp/d.txt")"
grep -q "^$tmp/d.jsonl:3:[0-9]*: \"status\" must be ok, pruned" "$tmp/d.txt" && pass "...naming the file, line and field" || fail "corrupt line message" "$(cat "$tmp/d.txt")"

echo "== workers: a crash, a GPU that is missing, two GPUs"
FAKE_CRASH=BX=8,BY=8 $T --log "$tmp/e.jsonl" >"$tmp/e.txt" 2>&1
check_rc "a worker that aborts mid-point" 0 $? "$(cat "$tmp/e.txt")"
got=$(rows "$tmp/e.jsonl" "[(r['configuration']['BX'], r['configuration']['BY'], r['reason']) for r in rows if r['status'] == 'fault']")
case $got in *"(8, 8, 'the worker was killed by signal 6 (Aborted)')"*) pass "its point is a fault row naming the signal; a new worker took the rest" ;;
  *) fail "crash row: $got" ;; esac
[ "$(rows "$tmp/e.jsonl" "sum(r['stage'] == 1 and r['status'] == 'ok' for r in rows)")" = 13 ] && pass "the 13 other points were timed" ||
  fail "points after the crash"
FAKE_NOGPU=1 $T >"$tmp/f.txt" 2>&1
check_rc "no GPU: exit 3" 3 $? "$(cat "$tmp/f.txt")"
grep -q 'GPU 0: engine: no CUDA driver' "$tmp/f.txt" && pass "...with the worker's reason" || fail "no-GPU message" "$(cat "$tmp/f.txt")"
FAKE_DELAY=0.05 $T --devices 0,1 --log "$tmp/g.jsonl" >"$tmp/g.txt" 2>&1
check_rc "--devices 0,1" 0 $? "$(cat "$tmp/g.txt")"
got=$(rows "$tmp/g.jsonl" "sorted({r['device'] for r in rows if r['stage'] == 1})")
[ "$got" = "['Fake GPU 0', 'Fake GPU 1']" ] && pass "points were timed on both GPUs" || fail "devices: $got"
[ "$(rows "$tmp/g.jsonl" "{r['device'] for r in rows if r['stage'] == 2}")" = "{'Fake GPU 0'}" ] &&
  pass "the finalists were re-timed on one GPU" || fail "finalists on one GPU"

echo "== filters on what ptxas reports"
FAKE_LOG=$tmp/h.req $T --min-occupancy 100 --log "$tmp/h.jsonl" >"$tmp/h.txt" 2>&1
check_rc "--min-occupancy 100" 0 $? "$(cat "$tmp/h.txt")"
nf=$(rows "$tmp/h.jsonl" "sum(r['status'] == 'filtered' for r in rows)")
got=$(rows "$tmp/h.jsonl" "all('below --min-occupancy 100%' in r['reason'] and r['invalidity'] == 'constraints' and r['regs'] > 0
  for r in rows if r['status'] == 'filtered')")
nreq=$(grep -c '"op":"run"' "$tmp/h.req")
[ "$nf" -gt 0 ] && [ "$got" = True ] && [ "$nreq" = $((14 - nf + 3)) ] &&
  pass "$nf points below 100% occupancy are filtered rows with their figures, and never reach a worker" ||
  fail "filtered rows: $nf, $got, $nreq requests"

echo "== shards and merge"
for i in 0 1; do $T --shard $i/2 --log "$tmp/s$i.jsonl" >/dev/null 2>&1; done
$E merge "$tmp/s0.jsonl" "$tmp/s1.jsonl" --log "$tmp/m.jsonl" --emit-best "$tmp/mbest.json" >"$tmp/m.txt" 2>&1
check_rc "merge two shard logs" 0 $? "$(cat "$tmp/m.txt")"
w1=$(grep -m1 '^ *1 ' "$tmp/m.txt" | awk '{print $NF}')
w2=$(grep -m1 '^ *1 ' "$tmp/a.txt" | awk '{print $NF}')
[ -n "$w1" ] && [ "$w1" = "$w2" ] && pass "the merged winner is the unsharded tune's ($w1)" || fail "merged winner '$w1' vs '$w2'" "$(cat "$tmp/m.txt")"
[ "$(rows "$tmp/m.jsonl" "len(rows)")" = "$(($(rows "$tmp/s0.jsonl" "len(rows)") + $(rows "$tmp/s1.jsonl" "len(rows)")))" ] &&
  pass "the merged log holds every row of both" || fail "merged rows"
$E tune $SPACE --arch sm_90 --top 3 --size 128 --log "$tmp/other.jsonl" >/dev/null 2>&1
$E merge "$tmp/s0.jsonl" "$tmp/other.jsonl" >"$tmp/m2.txt" 2>&1
check_rc "merging logs of different shapes is refused" 2 $? "$(cat "$tmp/m2.txt")"
$E merge "$tmp/s0.jsonl" "$tmp/other.jsonl" --force >/dev/null 2>&1
check_rc "...unless --force" 0 $?

echo "== the CUBIN cache"
export XDG_CACHE_HOME=$tmp/xdg2
$E compile configs/tiled.json configs/naive.json --arch sm_86 >"$tmp/k1.txt" 2>&1
$E compile configs/tiled.json configs/naive.json --arch sm_86 >"$tmp/k2.txt" 2>&1
grep -q ': 2 NVRTC compiles, 0 from the cache' "$tmp/k1.txt" && grep -q ': 0 NVRTC compiles, 2 from the cache' "$tmp/k2.txt" &&
  grep -q '^tiled .* cache ' "$tmp/k2.txt" && pass "a second compile comes from the cache, and each row says so" || fail "cache" "$(cat "$tmp/k1.txt" "$tmp/k2.txt")"
$E cache info >"$tmp/ci.txt" 2>&1
grep -q "^cache $tmp/xdg2/engine: 2 entries" "$tmp/ci.txt" && pass "engine cache info" || fail "cache info" "$(cat "$tmp/ci.txt")"
entry=$(find "$tmp/xdg2/engine" -type f | head -1)
printf 'X' | dd of="$entry" bs=1 seek=300 conv=notrunc 2>/dev/null
$E compile configs/tiled.json configs/naive.json --arch sm_86 >"$tmp/k3.txt" 2>&1
check_rc "a damaged cache entry does not fail the compile" 0 $? "$(cat "$tmp/k3.txt")"
grep -q 'corrupt cache entry' "$tmp/k3.txt" && grep -q ': 1 NVRTC compiles, 1 from the cache' "$tmp/k3.txt" &&
  pass "...it is reported in one line and rebuilt" || fail "corrupt entry" "$(cat "$tmp/k3.txt")"
$E compile configs/tiled.json --arch sm_86 --no-cache >"$tmp/k4.txt" 2>&1
grep -q ': 1 NVRTC compiles, 0 from the cache (--no-cache)' "$tmp/k4.txt" && pass "--no-cache compiles" || fail "--no-cache" "$(cat "$tmp/k4.txt")"
$E cache clear >"$tmp/cc.txt" 2>&1
grep -q 'removed 2 entries' "$tmp/cc.txt" && [ -z "$(find "$tmp/xdg2/engine" -type f)" ] && pass "engine cache clear" || fail "cache clear" "$(cat "$tmp/cc.txt")"

echo "== bench and verify go through the worker too"
export XDG_CACHE_HOME=$tmp/xdg
printf '%s BY=8\n%s\n%s\n' "$PWD/tests/configs/tune/toy.json" "$PWD/tests/configs/tune/toy.json" "$PWD/configs/naive.json" >"$tmp/list"
FAKE_FAULT=BY=8 $E bench @"$tmp/list" --arch sm_90 --size 128 --runs 2 >"$tmp/bench.txt" 2>&1
check_rc "bench: a faulting config is the worst outcome (exit 3)" 3 $? "$(cat "$tmp/bench.txt")"
grep -qE '^toy\[BY=8\] +fault ' "$tmp/bench.txt" && grep -qE '^toy +ok ' "$tmp/bench.txt" && grep -qE '^naive +ok ' "$tmp/bench.txt" &&
  grep -q 'CUDA_ERROR_ILLEGAL_ADDRESS' "$tmp/bench.txt" && pass "bench: the fault is one row naming the error, and the next configs still ran" ||
  fail "bench isolation" "$(cat "$tmp/bench.txt")"
FAKE_WRONG=BX=8 $E verify tests/configs/tune/toy.json --arch sm_90 --set BX=8 --set BY=4 --shapes 5x5x5 >"$tmp/verify.txt" 2>&1
check_rc "verify: a wrong result exits 1" 1 $? "$(cat "$tmp/verify.txt")"
grep -q '^verify: 0 passed, 2 failed, 0 errors' "$tmp/verify.txt" && grep -q 'C\[0\]\[1\]: got 1.5 want 1' "$tmp/verify.txt" &&
  pass "verify: each failure counted, with its first mismatches" || fail "verify FAIL lines" "$(cat "$tmp/verify.txt")"
FAKE_WRONG=BX=8 $T --set MODE=0 --size 64 --log "$tmp/wrong.jsonl" >"$tmp/wrong.txt" 2>&1
check_rc "tune: a point that computes wrong results makes the tune exit 1" 1 $? "$(tail -5 "$tmp/wrong.txt")"
grep -q 'computed wrong results (status FAIL in the log)' "$tmp/wrong.txt" && grep -q '"status":"FAIL"' "$tmp/wrong.jsonl" &&
  grep -q '^best at 64x64x64' "$tmp/wrong.txt" &&
  pass "...saying how many, with the FAIL rows in the log and the winner still named" || fail "tune FAIL exit" "$(tail -8 "$tmp/wrong.txt")"
echo "== wisdom: tune --wisdom records each shape's winner; bench and verify --auto run it"
W=$tmp/wisdom
$T --set MODE=0 --shapes 64x64x64,128x96x32 --wisdom "$W" >"$tmp/w1.txt" 2>&1
check_rc "tune --shapes ... --wisdom" 0 $? "$(tail -5 "$tmp/w1.txt")"
python3 - "$W/fake-gpu-0.json" <<'PY' && pass "one entry per shape, for this device and arch, with the winner's overrides" || fail "wisdom file" "$(cat "$W"/*.json)"
import json, sys
w = json.load(open(sys.argv[1]))
assert w["device"] == "Fake GPU 0" and w["arch"] == "sm_90", w
assert [e["shape"] for e in w["entries"]] == ["64x64x64", "128x96x32"], w
assert all(e["config"].endswith("tests/configs/tune/toy.json") and e["set"] and e["tflops"] > 0 and 0 < e["vs_cublas"] for e in w["entries"])
PY
cp "$W/fake-gpu-0.json" "$tmp/w-before.json"
FAKE_DELAY=0.002 $T --set MODE=0 --shapes 64x64x64 --wisdom "$W" >"$tmp/w2.txt" 2>&1
grep -q 'kept the faster entry already there' "$tmp/w2.txt" && cmp -s "$W/fake-gpu-0.json" "$tmp/w-before.json" &&
  pass "a second tune that is not faster leaves the file untouched" || fail "wisdom kept" "$(grep wisdom "$tmp/w2.txt")"
$E bench --auto --wisdom "$W" --arch sm_90 --shapes 64x64x64,100x100x30 --runs 2 --format jsonl >"$tmp/auto.txt" 2>"$tmp/auto.err"
check_rc "bench --auto" 0 $? "$(cat "$tmp/auto.err")"
python3 - "$tmp/auto.txt" <<'PY' && pass "bench --auto: each shape runs the entry wisdom chose, and says which (exact, or the selection model's)" || fail "bench --auto rows" "$(cat "$tmp/auto.txt")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
mine = [r for r in rows if r["config"] != "cublas"]
assert len(mine) == 2 and all(r["status"] == "ok" and r["config"].startswith("toy[") for r in mine), mine
assert "fake-gpu-0.json:6, arch, exact 64x64x64" in mine[0]["chosen"], mine[0]["chosen"]
assert ", arch, model: " in mine[1]["chosen"], mine[1]["chosen"]
PY
$E verify --auto --wisdom "$W" --arch sm_90 --shapes 17x9x5 >"$tmp/vauto.txt" 2>&1
check_rc "verify --auto" 0 $? "$(cat "$tmp/vauto.txt")"
grep -q '^auto  17x9x5: toy\[' "$tmp/vauto.txt" && grep -q '^verify: 2 passed' "$tmp/vauto.txt" &&
  pass "verify --auto names its choice and checks it" || fail "verify --auto" "$(cat "$tmp/vauto.txt")"
$E verify --auto --explain --wisdom "$W" --arch sm_90 --shapes 17x9x5 >"$tmp/vexp.txt" 2>&1
grep -q 'nearest entries, each config.s time estimated at 17x9x5' "$tmp/vexp.txt" && grep -q '^  chosen: toy\[' "$tmp/vexp.txt" &&
  pass "verify --auto --explain prints the model's weighing" || fail "--explain" "$(cat "$tmp/vexp.txt")"
$E verify --explain configs/naive.json --arch sm_90 >"$tmp/noauto.txt" 2>&1
check_rc "--explain without --auto: exit 2" 2 $? "$(cat "$tmp/noauto.txt")"

echo "== a first tune on a GPU without an entry there does not shadow a better one of a sibling GPU (same arch)"
# The sibling's file (another device of sm_90) holds 64x64x64 at 9.0x cuBLAS and 96x96x96 at 0.01x:
# the fake GPU's winner (a few x at most) is kept out at the first and recorded at the second.
SW=$tmp/sibling
mkdir -p "$SW"
printf '{"version": 1, "device": "Other GPU", "arch": "sm_90", "entries": [\n  %s,\n  %s\n]}\n' \
  "{\"dtype\": \"f32\", \"shape\": \"64x64x64\", \"config\": \"$PWD/tests/configs/tune/toy.json\", \"tflops\": 900, \"vs_cublas\": 9.0}" \
  "{\"dtype\": \"f32\", \"shape\": \"96x96x96\", \"config\": \"$PWD/tests/configs/tune/toy.json\", \"tflops\": 1, \"vs_cublas\": 0.01}" \
  >"$SW/other-gpu.json"
$T --set MODE=0 --shapes 64x64x64,96x96x96 --wisdom "$SW" >"$tmp/sib.txt" 2>&1
check_rc "tune --wisdom beside a sibling's file" 0 $? "$(tail -5 "$tmp/sib.txt")"
grep -q "wisdom .*fake-gpu-0.json: kept the arch's faster entry (.*other-gpu.json:2, another GPU of this arch: 9.000x cuBLAS there" "$tmp/sib.txt" &&
  python3 -c 'import json,sys; w=json.load(open(sys.argv[1])); assert [e["shape"] for e in w["entries"]] == ["96x96x96"], w' "$SW/fake-gpu-0.json" &&
  pass "the sibling's faster entry is kept (not shadowed), the slower one is not: only 96x96x96 recorded" ||
  fail "a sibling's faster entry kept" "$(grep wisdom "$tmp/sib.txt"; cat "$SW"/fake-gpu-0.json 2>&1)"

echo "== tune --wisdom records only kernels of the dtype's own accuracy class (FP32 wisdom stays FP32-accurate)"
CW=$tmp/wclass
mkdir -p "$CW"
FAKE_LOG=$tmp/c1.log $E tune configs/tc32_1x.json --arch sm_90a --set BN=64,128 --size 256 --wisdom "$CW" >"$tmp/c1.txt" 2>&1
check_rc "tune --wisdom of a config held to class tf32 (1xTF32)" 2 $? "$(cat "$tmp/c1.txt")"
grep -qx 'configs/tc32_1x.json: --wisdom: config tc32_1x is held to accuracy class tf32, and --auto runs f32 entries as f32 kernels: tune it without --wisdom' "$tmp/c1.txt" &&
  [ ! -e "$tmp/c1.log" ] && [ -z "$(ls "$CW")" ] && pass "...is refused in one line naming the config, before any GPU work" ||
  fail "...refused before any GPU work" "$(cat "$tmp/c1.txt"; ls "$CW")"
FAKE_CLASS=tf32 $E tune configs/tc32_3x.json --arch sm_90a --set BN=64,128 --size 256 --wisdom "$CW" >"$tmp/c2.txt" 2>&1
check_rc "a winner the worker verified in class tf32 (an f32 config): exit 1" 1 $? "$(cat "$tmp/c2.txt")"
grep -q "^$CW: not recorded: the winner at 256x256x256 was verified in accuracy class tf32, not f32" "$tmp/c2.txt" &&
  [ -z "$(ls "$CW")" ] && pass "...is not recorded, saying why" || fail "...not recorded" "$(cat "$tmp/c2.txt"; ls "$CW")"
FAKE_WRONG=BN=128 $E tune configs/tc32_3x.json --arch sm_90a --set BN=64,128 --size 256 --wisdom "$CW" >"$tmp/c3.txt" 2>&1
check_rc "the faster point fails verification: exit 1" 1 $? "$(cat "$tmp/c3.txt")"
python3 - "$CW/fake-gpu-0.json" <<'PY' && pass "...and the slower one that passed is what wisdom records" || fail "...recorded the passing point" "$(cat "$tmp/c3.txt")"
import json, sys
e = json.load(open(sys.argv[1]))["entries"]
assert [(x["shape"], x["config"].endswith("configs/tc32_3x.json"), x.get("set")) for x in e] == [("256x256x256", True, {"BN": 64})], e
PY

echo "== --auto-tune: a shape without an entry is tuned, recorded in the user's wisdom, then exact"
export XDG_DATA_HOME=$tmp/data
UW=$XDG_DATA_HOME/engine/wisdom
$E bench --auto --auto-tune --wisdom "$W" --arch sm_90 --shapes 100x100x30 --runs 2 --format jsonl >"$tmp/at1.txt" 2>"$tmp/at1.err"
check_rc "bench --auto --auto-tune" 0 $? "$(cat "$tmp/at1.err")"
grep -q '^auto-tune 100x100x30: toy\[.*; .* s of GPU time; kept toy\[.*, recorded in ' "$tmp/at1.err" &&
  pass "it times the model's candidates and says what it kept and where" || fail "auto-tune line" "$(cat "$tmp/at1.err")"
[ ! -e "$UW" ] && pass "--wisdom DIR named: the record goes there, not to the user's wisdom" || fail "record place" "$(ls -R "$XDG_DATA_HOME")"
python3 - "$W/fake-gpu-0.json" <<'PY' && pass "the shape is now an entry of its own" || fail "auto-tune entry" "$(cat "$W/fake-gpu-0.json")"
import json, sys
e = [e for e in json.load(open(sys.argv[1]))["entries"] if e["shape"] == "100x100x30"]
assert len(e) == 1 and e[0]["tflops"] > 0 and "--auto-tune" in e[0]["source"] and e[0]["config"].startswith("/"), e
PY
cp -r "$W" "$tmp/shipped"
$E bench --auto --auto-tune --wisdom "$tmp/shipped" --arch sm_90 --shapes 100x100x30 --runs 2 --format jsonl >"$tmp/at2.txt" 2>"$tmp/at2.err"
grep -q 'exact 100x100x30' "$tmp/at2.txt" && ! grep -q '^auto-tune' "$tmp/at2.err" &&
  pass "the next run finds the shape exact and tunes nothing" || fail "exact after auto-tune" "$(cat "$tmp/at2.txt" "$tmp/at2.err")"
# A batch is another entry: tuned at --batch 4 (its TFLOP/s over the 4 products), then exact at 4 only.
$E bench --auto --auto-tune --wisdom "$tmp/shipped" --arch sm_90 --shapes 100x100x30 --batch 4 --runs 2 --format jsonl >"$tmp/atb.txt" 2>"$tmp/atb.err"
check_rc "bench --auto --auto-tune --batch 4" 0 $? "$(cat "$tmp/atb.err")"
python3 - "$tmp/shipped/fake-gpu-0.json" "$tmp/atb.txt" <<'PY' && pass "...recorded with \"batch\": 4 beside the single product's entry" || fail "auto-tune batch entry" "$(cat "$tmp/shipped/fake-gpu-0.json" "$tmp/atb.err")"
import json, sys
e = [e for e in json.load(open(sys.argv[1]))["entries"] if e["shape"] == "100x100x30"]
assert sorted(x.get("batch", 1) for x in e) == [1, 4], e
row = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{") and '"cublas"' not in l][0]
b4 = [x for x in e if x.get("batch") == 4][0]
assert abs(b4["tflops"] / row["tflops"] - 1) < 0.5, (b4, row)  # both count the 4 products
PY
$E bench --auto --auto-tune --wisdom "$tmp/shipped" --arch sm_90 --shapes 100x100x30 --batch 4 --runs 2 --format jsonl >"$tmp/atb2.txt" 2>"$tmp/atb2.err"
grep -q 'exact 100x100x30 batch 4' "$tmp/atb2.txt" && ! grep -q '^auto-tune' "$tmp/atb2.err" &&
  pass "...and the next run at --batch 4 finds it exact" || fail "exact batch after auto-tune" "$(cat "$tmp/atb2.txt" "$tmp/atb2.err")"
$E bench --auto --wisdom "$tmp/shipped" --arch sm_90 --shapes 100x100x30 --batch 8 --runs 2 --format jsonl >"$tmp/atb3.txt" 2>&1
grep -q '"chosen":"[^"]*model: ' "$tmp/atb3.txt" && pass "...while --batch 8 goes to the model" || fail "batch 8 not exact" "$(cat "$tmp/atb3.txt")"
# Leading dimensions: an entry keeps the alignment class they leave, not the lds. tune --wisdom at
# --lda +1 (A's rows 4 bytes apart: class 1,4,4) adds an entry beside the packed one; --auto at
# --lda +1 runs it exactly, a packed run the packed one.
$T --set MODE=0 --shapes 64x64x64 --lda +1 --wisdom "$W" >"$tmp/wl.txt" 2>&1
check_rc "tune --lda +1 --wisdom" 0 $? "$(tail -5 "$tmp/wl.txt")"
grep -q 'wisdom .*fake-gpu-0.json: added (alignment class 1,4,4)' "$tmp/wl.txt" &&
  pass "...records the winner with its alignment class" || fail "tune --lda wisdom line" "$(grep wisdom "$tmp/wl.txt")"
python3 - "$W/fake-gpu-0.json" <<'PY' && pass "...as \"align\": [1, 4, 4] beside the packed entry, no ld in the file" || fail "align entry" "$(cat "$W/fake-gpu-0.json")"
import json, sys
text = open(sys.argv[1]).read()
e = [e for e in json.loads(text)["entries"] if e["shape"] == "64x64x64"]
assert sorted(str(x.get("align")) for x in e) == ["None", "[1, 4, 4]"], e
assert "lda" not in text and "65" not in [str(v) for x in e for v in x.values()], text
PY
$E bench --auto --wisdom "$W" --arch sm_90 --shapes 64x64x64 --lda +1 --runs 2 --format jsonl >"$tmp/wl1.txt" 2>&1
$E bench --auto --wisdom "$W" --arch sm_90 --shapes 64x64x64 --runs 2 --format jsonl >"$tmp/wl2.txt" 2>&1
grep -q '"chosen":"toy[^"]*exact 64x64x64 align 1,4,4)' "$tmp/wl1.txt" && grep -q '"chosen":"toy[^"]*exact 64x64x64)' "$tmp/wl2.txt" &&
  pass "bench --auto --lda +1 runs the class-1 entry, a packed run the packed one" || fail "auto by class" "$(cat "$tmp/wl1.txt" "$tmp/wl2.txt")"
$E bench --auto --auto-tune --wisdom "$tmp/shipped" --arch sm_90 --shapes 100x100x30 --ldc +1 --runs 2 --format jsonl >"$tmp/atl.txt" 2>"$tmp/atl.err"
check_rc "bench --auto --auto-tune --ldc +1" 0 $? "$(cat "$tmp/atl.err")"
python3 - "$tmp/shipped/fake-gpu-0.json" <<'PY' && pass "...recorded at the class --ldc +1 leaves (C's rows 4 bytes apart; A's 30 elements: 2)" || fail "auto-tune align entry" "$(cat "$tmp/shipped/fake-gpu-0.json" "$tmp/atl.err")"
import json, sys
e = [e for e in json.load(open(sys.argv[1]))["entries"] if e["shape"] == "100x100x30" and e.get("batch", 1) == 1]
assert sorted(str(x.get("align")) for x in e) == ["None", "[2, 4, 1]"], e
PY
$E bench --auto --auto-tune --wisdom "$tmp/shipped" --arch sm_90 --shapes 100x100x30 --ldc +1 --runs 2 --format jsonl >"$tmp/atl2.txt" 2>"$tmp/atl2.err"
grep -q 'exact 100x100x30 align 2,4,1' "$tmp/atl2.txt" && ! grep -q '^auto-tune' "$tmp/atl2.err" &&
  pass "...and the next run at --ldc +1 finds it exact" || fail "exact align after auto-tune" "$(cat "$tmp/atl2.txt" "$tmp/atl2.err")"
# Without --wisdom the record goes to the user's wisdom, which is read first from then on.
mkdir -p "$tmp/ro" && cp "$W/fake-gpu-0.json" "$tmp/ro/" && python3 - "$tmp/ro/fake-gpu-0.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
w["entries"] = [e for e in w["entries"] if e["shape"] != "100x100x30"]
json.dump(w, open(sys.argv[1], "w"))
PY
ENGINE_WISDOM=$tmp/ro $E bench --auto --auto-tune --arch sm_90 --shapes 100x100x30 --runs 2 --format jsonl >"$tmp/at3.txt" 2>"$tmp/at3.err"
[ -f "$UW/fake-gpu-0.json" ] && grep -q "recorded in $UW/fake-gpu-0.json" "$tmp/at3.err" &&
  pass "no --wisdom: recorded in \$XDG_DATA_HOME/engine/wisdom" || fail "user record" "$(cat "$tmp/at3.err")"
ENGINE_WISDOM=$tmp/ro $E bench --auto --arch sm_90 --shapes 100x100x30 --runs 2 --format jsonl >"$tmp/at4.txt" 2>"$tmp/at4.err"
grep -q "$UW/fake-gpu-0.json:[0-9]*, arch, exact 100x100x30" "$tmp/at4.txt" &&
  pass "the user's wisdom is read before the shipped one" || fail "user first" "$(cat "$tmp/at4.txt" "$tmp/at4.err")"
echo '{"version": 1, "entries": [' >"$UW/fake-gpu-0.json"
ENGINE_WISDOM=$tmp/ro $E bench --auto --auto-tune --arch sm_90 --shapes 100x100x30 --runs 2 --format jsonl >"$tmp/at5.txt" 2>"$tmp/at5.err"
check_rc "a damaged user wisdom file does not stop the run" 0 $? "$(cat "$tmp/at5.err")"
[ "$(grep -c "fake-gpu-0.json:.*this user wisdom file is ignored" "$tmp/at5.err")" = 1 ] &&
  grep -q "not recorded: .*fake-gpu-0.json" "$tmp/at5.err" && [ "$(cat "$UW/fake-gpu-0.json")" = '{"version": 1, "entries": [' ] &&
  pass "...it is reported in one line, left out, and never written over" || fail "damaged user wisdom" "$(cat "$tmp/at5.err")"
unset XDG_DATA_HOME
$E bench --auto --wisdom "$W" --arch sm_90 --shapes 64x64x64 --dtype f64 --runs 2 --format jsonl >"$tmp/auto64.txt" 2>&1
check_rc "bench --auto --dtype f64 with only f32 wisdom there" 2 $? "$(cat "$tmp/auto64.txt")"
grep -q 'no wisdom for f64 at 64x64x64' "$tmp/auto64.txt" && pass "...is refused naming the dtype and shape" || fail "no wisdom" "$(cat "$tmp/auto64.txt")"
$E bench --auto --arch sm_86 --shapes 64x64x64 --runs 2 --format jsonl >"$tmp/autoarch.txt" 2>&1
grep -q '"chosen":"ldg_wider2 (.*wisdom/sm_86.json:[0-9]*, arch' "$tmp/autoarch.txt" &&
  pass "a GPU with no entry of its own (an sm_86 laptop) gets the shipped arch-level choice" || fail "shipped arch level" "$(cat "$tmp/autoarch.txt")"
$E bench --auto --arch sm_80 --shapes 64x64x64 --dtype f64 --runs 2 --format jsonl >"$tmp/autodef.txt" 2>&1
grep -q '"chosen":"dgemm_dmma (.*wisdom/default.json:[0-9]*, default' "$tmp/autodef.txt" &&
  pass "an arch with no wisdom at all (sm_80) gets the shipped default" || fail "shipped default" "$(cat "$tmp/autodef.txt")"
$E bench --auto configs/naive.json --wisdom "$W" --arch sm_90 --size 64 --runs 2 >"$tmp/named.txt" 2>&1
grep -q -- '--auto ignored' "$tmp/named.txt" && grep -qE '^naive +ok' "$tmp/named.txt" &&
  pass "a config named on the command line wins over wisdom" || fail "named config wins" "$(cat "$tmp/named.txt")"
printf '{"version": 1, "device": "X", "arch": "sm_90", "entries": [\n  {"dtype": "f32", "shape": "64x64", "config": "c.json", "tflops": 1, "vs_cublas": 1}]}\n' >"$W/broken.json"
$E bench --auto --wisdom "$W" --arch sm_90 --size 64 >"$tmp/broken.txt" 2>&1
check_rc "a malformed wisdom file: exit 2 before any GPU work" 2 $? "$(cat "$tmp/broken.txt")"
grep -qE 'broken.json:2:[0-9]+: .*shape' "$tmp/broken.txt" && pass "...naming file:line:column and the rule" || fail "malformed wisdom message" "$(cat "$tmp/broken.txt")"

echo "== bench/batches.sh: each batch of the suite tuned into (a copy of) wisdom, then run by its exact entry"
# The fake GPU is of sm_90 like the H100, whose shipped entries would be kept over its winners
# (a sibling's faster entry, above): start from the wisdom of other archs only.
mkdir -p "$tmp/bw" && cp wisdom/default.json wisdom/sm_86.json "$tmp/bw/"
DEVICE="Fake GPU 0" BATCHES_EXTRA="--arch sm_90" BATCHES_WISDOM="$tmp/bw" TUNE_S=60 OUT="$tmp/batches" \
  bash bench/batches.sh >"$tmp/batches.txt" 2>&1
rc=$?
[ $rc -le 1 ] && pass "bench/batches.sh runs (exit $rc: the fake GPU's ratios decide the targets)" || fail "bench/batches.sh (exit $rc)" "$(tail -20 "$tmp/batches.txt")"
n=$(grep -c '"batch": ' "$tmp/batches/wisdom/fake-gpu-0.json" 2>/dev/null)
[ "${n:-0}" = 6 ] && pass "...recorded an entry with its batch per batch shape and dtype (6)" || fail "...batch entries (${n:-none})" "$(tail -20 "$tmp/batches.txt")"
n=$(grep -cE '^\| f(32|64) \| [0-9]+ x .*exact [0-9x]+ batch [0-9]+\)' "$tmp/batches.txt")
[ "$n" = 6 ] && pass "...and --auto then ran each batch's exact entry (6 rows)" || fail "...exact batch entries in the table ($n)" "$(tail -10 "$tmp/batches.txt")"
echo "== bench/tc32_suite.sh: the suite with 3xTF32 tuned into (a copy of) wisdom, --auto before and after"
printf '# two shapes: one of whole tiles, one odd\n4096x4096x4096\n127x129x131\n' >"$tmp/suite.txt"
echo '{"config": "tc32_3x", "space": {"BN": [64, 128]}, "shapes": ["4096x4096x4096"]}' >"$tmp/tc32space.json"
mkdir -p "$tmp/w-other" && cp wisdom/default.json wisdom/sm_86.json "$tmp/w-other/" # no H100 sibling (as above)
s32() { env DEVICE="Fake GPU 0" TC32_SUITE_EXTRA="--arch sm_90a" SUITE="$tmp/suite.txt" SPACE="$tmp/tc32space.json" TMPDIR="$tmp" WISDOM_SRC="$tmp/w-other" "$@" bash bench/tc32_suite.sh; }
s32 OUT="$tmp/s32" >"$tmp/s32.txt" 2>&1
check_rc "bench/tc32_suite.sh: the fake GPU's 0.9x misses the 1.3x target" 1 $? "$(tail -20 "$tmp/s32.txt")"
python3 - "$tmp/s32/tc32-suite/wisdom/fake-gpu-0.json" <<'PY' && pass "...its wisdom holds a tc32 entry per shape, config paths relative to the repository" || fail "...tuned wisdom" "$(tail -20 "$tmp/s32.txt")"
import json, sys
e = json.load(open(sys.argv[1]))["entries"]
assert sorted(x["shape"] for x in e) == ["127x129x131", "4096x4096x4096"] and all(x["config"] == "configs/tc32_3x.json" for x in e), e
PY
[ "$(grep -cE '^\| (4096x4096x4096|127x129x131) \| .* \| 2 / 0 \| added \| tc32_3x.* \| tc32 \| 0\.9[0-9]* \|$' "$tmp/s32.txt")" = 2 ] &&
  grep -q '^  MISSED  FP32 suite with tc32 in wisdom: geomean 0\.9[0-9]*x SGEMM, target 1.3$' "$tmp/s32.txt" &&
  [ "$(tail -n 5 "$tmp/s32/tc32-suite/table.md")" = "$(tail -n 5 "$tmp/s32.txt")" ] &&
  pass "...--auto then ran tc32 at both shapes: the table per shape and the target's line, also in table.md" || fail "...table" "$(tail -12 "$tmp/s32.txt")"
grep -q "^  tc32_3x: time over 4096^3's at 4096x4096x4095 1.00, 4096x4095x4096 1.00, 4095x4095x4095 1.00 " "$tmp/s32.txt" &&
  pass "...and times tc32_3x's odd paths against its whole rows" || fail "...odd paths" "$(grep -A3 '== e' "$tmp/s32.txt")"
s32 OUT="$tmp/s32b" TUNES_S=5 ODD_BY_S=0 >"$tmp/s32b.txt" 2>&1
check_rc "bench/tc32_suite.sh past its tuning budget: exit 1" 1 $? "$(tail -20 "$tmp/s32b.txt")"
[ "$(grep -c '^  skipped .*: past the tuning budget' "$tmp/s32b.txt")" = 2 ] && [ "$(grep -c '"config":"cublas"' "$tmp/s32b/tc32-suite/after/shapes-f32.jsonl")" = 2 ] &&
  pass "...skips every tune and still runs --auto after them" || fail "...budget" "$(tail -20 "$tmp/s32b.txt")"
s32 OUT="$tmp/s32c" RUNS=5 >"$tmp/s32c.txt" 2>&1
check_rc "bench/tc32_suite.sh with RUNS=5" 2 $? "$(cat "$tmp/s32c.txt")"
[ "$(cat "$tmp/s32c.txt")" = "tc32_suite: RUNS=5: the baseline needs a median of at least 7 runs" ] && pass "...is refused in one line" ||
  fail "...RUNS refused" "$(cat "$tmp/s32c.txt")"
summary
