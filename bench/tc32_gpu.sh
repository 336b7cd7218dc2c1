#!/usr/bin/env bash
# GPU checks of the FP32 tensor-core kernels (issue 26: tc32.cu's wgmma for sm_90a, dmma.cu's
# mma.sync TF32 path) on an H100, with the prebuilt build/engine only. Logs under $OUT/tc32 (or
# /tmp/tc32-gpu); the last lines are a short table. About 3-5 minutes. Checks, in order:
#   1. verify of tc32_3x, tc32_1x (--arch sm_90a) and tc32_sync (mma.sync) at 1x1x1, 17x33x5,
#      127x129x131, 1000x1001x999, 4096^3, beta = 0 (C NaN-poisoned) and 0.5: 10 rows each, all ok
#   2. without --arch an sm_90 GPU is targeted as sm_90a: tc32_3x verifies at 127x129x131 with no flag
#   3. accuracy classes at K = 1, 7, 64, 4096, 16384: tc32_3x and tc32_sync pass class f32, tc32_1x
#      passes class tf32 (against cuBLAS FAST_TF32), and the same 1-pass kernel held to class f32
#      fails every row
#   4. compute-sanitizer memcheck and racecheck of each config at 127x129x131 (--arch sm_90a)
#   5. bench at 4096^3, 8192^3, 12288^3, --runs 7, beside cuBLAS strict SGEMM (row cublas) and, for
#      the tf32-class 1-pass config, cuBLAS FAST_TF32 (row cublas_tf32), with each row's SM clock and
#      board power; tc32_3x with STAGES=2 at 4096^3 and 8192^3 (row 3x_stages2); nvidia-smi before and after
#   6. engine tune tune/tc32.json at 4096^3 (BM, BN, STAGES, SUPER; every point verified), log tune.jsonl
# Usage: bash build/tc32_gpu.sh   (from the repository root of branch tf32, after make)
set -u
cd "$(dirname "$0")/.."
E=build/engine
L=${OUT:-/tmp/tc32-gpu}/tc32
mkdir -p "$L"
export XDG_CACHE_HOME=${TMPDIR:-/tmp}/tc32-cache XDG_DATA_HOME=${TMPDIR:-/tmp}/tc32-data
[ -x "$E" ] && [ -f kernels_src/tc32.cu ] || { echo "tc32_gpu: needs build/engine and kernels_src/tc32.cu (branch tf32)"; exit 2; }
RESULTS=()
note() { RESULTS+=("$1"); echo "$1"; }
SHAPES=1x1x1,17x33x5,127x129x131,1000x1001x999,4096x4096x4096
ACC=33x65x1,33x65x7,129x127x64,257x255x4096,128x128x16384
smi() { nvidia-smi --query-gpu=name,compute_cap,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv >"$L/smi-$1.csv" 2>&1; }
smi start
cat "$L/smi-start.csv"

# verify_ok NAME WANT_ROWS LOG ARGS...: exit 0 and "verify: WANT passed, 0 failed, 0 errors"
verify_ok() {
  local name=$1 want=$2 log=$L/$3.txt
  shift 3
  timeout 300 $E verify "$@" >"$log" 2>&1
  local rc=$? sum
  sum=$(grep -a '^verify:' "$log" | tail -1)
  if [ $rc = 0 ] && [ "$sum" = "verify: $want passed, 0 failed, 0 errors" ]; then note "ok    $name: $sum"
  else note "FAIL  $name (exit $rc): ${sum:-no summary}"; grep -a -m 6 -E '^(FAIL|error)|error:' "$log"; fi
}

echo "== 1. verify at odd shapes"
verify_ok "tc32_3x verify" 10 v-3x configs/tc32_3x.json --arch sm_90a --beta 0.5 --shapes $SHAPES
verify_ok "tc32_1x verify" 10 v-1x configs/tc32_1x.json --arch sm_90a --beta 0.5 --shapes $SHAPES
verify_ok "tc32_sync verify" 10 v-sync configs/tc32_sync.json --beta 0.5 --shapes $SHAPES
echo "== 2. no --arch on sm_90: targeted as sm_90a"
verify_ok "tc32_3x without --arch" 2 v-noarch configs/tc32_3x.json --shapes 127x129x131
echo "== 3. accuracy classes at K = 1, 7, 64, 4096, 16384"
verify_ok "tc32_3x class f32" 10 acc-3x configs/tc32_3x.json --arch sm_90a --shapes $ACC
verify_ok "tc32_sync class f32" 10 acc-sync configs/tc32_sync.json --shapes $ACC
verify_ok "tc32_1x class tf32" 10 acc-1x configs/tc32_1x.json --arch sm_90a --shapes $ACC
n=$(grep -c '^ok .* tf32 err ' "$L/acc-1x.txt")
[ "$n" = 10 ] && note "ok    tc32_1x judged as class tf32 (10 rows)" || note "FAIL  tc32_1x judged as class tf32 ($n of 10 rows)"
printf '{"name": "tc32_1x_as_f32", "template": "tc32", "dtype": "f32", "params": {"BM": 128, "BN": 128, "PASSES": 1}, "description": "1xTF32 held to class f32: must fail"}\n' >"$L/tc32_1x_as_f32.json"
timeout 300 $E verify "$L/tc32_1x_as_f32.json" --arch sm_90a --shapes $ACC >"$L/acc-1x-f32.txt" 2>&1
rc=$?
sum=$(grep -a '^verify:' "$L/acc-1x-f32.txt" | tail -1)
nf=$(grep -c '^FAIL .* f32 err ' "$L/acc-1x-f32.txt")
if [ $rc = 1 ] && [ "$sum" = "verify: 0 passed, 10 failed, 0 errors" ] && [ "$nf" = 10 ]; then note "ok    1xTF32 fails class f32 at every K: $sum"
else note "FAIL  1xTF32 fails class f32 at every K (exit $rc, $sum, $nf FAIL lines with f32 errors)"; fi
echo "-- errors by K (kernel max/mean u, cuBLAS's in parentheses):"
grep -a -h -E '^(ok|FAIL) ' "$L"/acc-*.txt | sed -n 's/^\([a-zA-Z]*\) *\([^ ]*\) *f32 \([0-9x]*\) *beta=\([^ ]*\) .* \(f32\|tf32\) err \([^ ]*\) u (cuBLAS \([^)]*\)).*/\1 \2 \3 beta=\4 \5 \6 (\7)/p' | tee "$L/acc-by-k.txt"

echo "== 4. compute-sanitizer at 127x129x131"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1)
if [ -z "$CS" ]; then note "SKIP  sanitizers: no compute-sanitizer"; else
  for c in tc32_3x tc32_1x tc32_sync; do
    for tool in memcheck racecheck; do
      log=$L/san-$c-$tool.txt
      timeout 150 "$CS" --tool $tool --target-processes all --error-exitcode 99 $E verify configs/$c.json --arch sm_90a \
        --shapes 127x129x131 >"$log" 2>&1
      rc=$?
      sum=$(grep -a '^verify:' "$log" | tail -1)
      if [ $rc = 0 ] && ! grep -a -qE '(ERROR|RACECHECK) SUMMARY: [1-9]' "$log" && [ "$sum" = "verify: 2 passed, 0 failed, 0 errors" ]; then
        note "ok    $tool $c"
      else note "FAIL  $tool $c (exit $rc, ${sum:-no summary})"; grep -a -m 5 -E 'ERROR|hazard|Invalid' "$log"; fi
    done
  done
fi

echo "== 5. bench beside cuBLAS SGEMM (strict), --runs 7"
timeout 240 $E bench configs/tc32_3x.json configs/tc32_1x.json configs/tc32_sync.json --arch sm_90a --runs 7 \
  --shapes 4096x4096x4096,8192x8192x8192,12288x12288x12288 --format jsonl >"$L/bench.jsonl" 2>"$L/bench.err"
rc=$?
[ $rc = 0 ] && note "ok    bench (exit 0)" || { note "FAIL  bench (exit $rc)"; tail -5 "$L/bench.err"; }
# Two stages against three (wgmmas waited for at every k-tile): what the overlap is worth.
timeout 90 $E bench configs/tc32_3x.json --set STAGES=2 --arch sm_90a --runs 7 --shapes 4096x4096x4096,8192x8192x8192 \
  --format jsonl 2>>"$L/bench.err" | grep -v '"config":"cublas' | sed 's/"config":"tc32_3x[^"]*"/"config":"3x_stages2"/' >>"$L/bench.jsonl"
echo "== 6. tune/tc32.json at 4096^3 (32 points, each verified; the best 4 re-timed)"
timeout 150 $E tune tune/tc32.json --arch sm_90a --top 4 --runs 7 --log "$L/tune.jsonl" >"$L/tune.txt" 2>&1
rc=$?
[ $rc = 0 ] && note "ok    tune (exit 0, $(grep -c '"status":"ok"' "$L/tune.jsonl") points ok)" ||
  note "FAIL  tune (exit $rc, $(grep -c '"status":"FAIL"' "$L/tune.jsonl" 2>/dev/null) points wrong)"
tail -8 "$L/tune.txt"
smi end
cat "$L/smi-end.csv"

echo
echo "== summary"
printf '%s\n' "${RESULTS[@]}"
echo
python3 - "$L/bench.jsonl" <<'PY' || grep -o '"config":"[^"]*"\|"M":[0-9]*\|"tflops":[0-9.]*\|"pct_cublas":[0-9.]*' "$L/bench.jsonl"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
shape = lambda r: f"{r['M']}x{r['N']}x{r['K']}"
ref = {(shape(r), r["config"]): r["ms"] for r in rows if r["config"] in ("cublas", "cublas_tf32")}
print("TFLOP/s beside cuBLAS strict SGEMM (x SGEMM) and cuBLAS FAST_TF32 (x TF32), same run; MHz and W: SM clock, board power")
print(f"{'config':<12} {'shape':>17} {'ms':>9} {'TFLOP/s':>8} {'x SGEMM':>8} {'x TF32':>7} {'MHz':>5} {'W':>5} {'regs':>4} {'spill':>5}")
for r in rows:
    s, ms = shape(r), r["ms"]
    xs = ref.get((s, "cublas"), float("nan")) / ms if ms > 0 else float("nan")
    xt = ref.get((s, "cublas_tf32"), float("nan")) / ms if ms > 0 else float("nan")
    print(f"{r['config']:<12} {s:>17} {ms:>9.3f} {r['tflops']:>8.1f} {xs:>8.2f} {xt:>7.2f} {r.get('clock_mhz') or 0:>5.0f} "
          f"{r.get('power_w') or 0:>5.0f} {r.get('regs', -1):>4} {r.get('spill_bytes', -1):>5}")
PY
