#!/usr/bin/env bash
# make test-gpu — everything that needs the GPU, run with the prebuilt build/engine (the GPU machine
# has no jansson headers, so nothing is rebuilt here). Logs go to $GPU_LOG_DIR (default build/gpu-logs).
#   every shipped config verified at 1x1x1, 17x33x5, 127x129x131, 1000^3 and 2048^3, beta = 0 and != 0
#   f64 runs of the templates that take both types; the cuBLAS cross-check against the CPU
#   the warp tile's paired lane layout at every width it allows
#   deliberately wrong fixtures that verification must catch; exit codes of the error paths
#   --format jsonl and --set; compute-sanitizer memcheck and racecheck on each template
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
E=build/engine
LOG=${GPU_LOG_DIR:-build/gpu-logs}
mkdir -p "$LOG"
[ -x "$E" ] || { echo "build/engine is missing: run make first"; exit 2; }
FIX="env ENGINE_TEMPLATES=tests/templates:kernels_src"

echo "== device"
$E info --bandwidth | tee "$LOG/info.txt"
check_rc "engine info" 0 "${PIPESTATUS[0]}"

echo "== verify every shipped config (f32 and f64 as shipped), with the cuBLAS cross-check"
$E verify --cross-check configs/*.json >"$LOG/verify.txt" 2>&1
rc=$?
grep -E '^(FAIL|error)|cross-check' "$LOG/verify.txt"
tail -1 "$LOG/verify.txt"
check_rc "verify configs/*.json" 0 "$rc" "$(grep -A3 -E '^(FAIL|error)' "$LOG/verify.txt" | head -40)"
grep -q 'cross-check f32 .* ok' "$LOG/verify.txt" && pass "cross-check f32 cuBLAS vs CPU" || fail "cross-check f32 cuBLAS vs CPU"
grep -q 'cross-check f64 .* ok' "$LOG/verify.txt" && pass "cross-check f64 cuBLAS vs CPU" || fail "cross-check f64 cuBLAS vs CPU"

echo "== the f32 templates in f64"
F64="configs/tiled.json configs/regblock.json configs/bank_pad_vec.json configs/ldg_wider2.json configs/sb06_vectorize.json
     configs/sb07_linearize.json configs/sb10_warptiling.json configs/sb11_double_buffer.json configs/sb12_double_buffer2.json
     configs/warptile_db.json configs/splitk3.json configs/splitk4_2pass.json configs/multibuf_b3.json configs/ldg_async.json configs/naive.json"
$E verify --dtype f64 --shapes 1x1x1,17x33x5,127x129x131,1000x1000x1000 $F64 >"$LOG/verify-f64.txt" 2>&1
rc=$?
grep -E '^(FAIL|error)' "$LOG/verify-f64.txt"
tail -1 "$LOG/verify-f64.txt"
check_rc "verify --dtype f64" 0 "$rc" "$(grep -A3 -E '^(FAIL|error)' "$LOG/verify-f64.txt" | head -40)"

echo "== the paired lane layout (LANES 1) at 2, 4, 8 and 16 lanes across a warp step, f32 and f64"
for geo in "WM=64 WN=32 WNITER=2 TN=8" "WM=32 WN=64 WNITER=2 TN=8" "WM=32 WN=64 WNITER=1 TN=8" "WM=32 WN=64 WNITER=1 TN=4"; do
  sets=""
  for kv in $geo LANES=1 SNAKE=1; do sets="$sets --set $kv"; done
  for dt in f32 f64; do
    # shellcheck disable=SC2086
    $E verify configs/warptile_db.json $sets --dtype $dt --shapes 1x1x1,17x33x5,127x129x131,1000x1000x1000 >"$LOG/lanes.txt" 2>&1
    check_rc "verify warptile LANES=1 $geo ($dt)" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/lanes.txt" | head -20)"
  done
done

echo "== wrong kernels must be caught"
for t in wrong_k wrong_edge wrong_beta; do
  $FIX $E verify tests/configs/gpu/$t.json --shapes 1x1x1,127x129x131 >"$LOG/$t.txt" 2>&1
  rc=$?
  nfail=$(grep -c '^FAIL' "$LOG/$t.txt")
  if [ "$rc" = 1 ] && [ "$nfail" -ge 1 ]; then pass "$t is caught ($nfail FAIL lines, exit 1)"; else fail "$t is caught (exit $rc, $nfail FAIL lines)" "$(head -20 "$LOG/$t.txt")"; fi
done
grep -q 'beta=0 .*NaN' "$LOG/wrong_beta.txt" 2>/dev/null || grep -q 'NaN/Inf' "$LOG/wrong_beta.txt"
[ $? = 0 ] && pass "wrong_beta: the NaN poison leaks and is reported" || fail "wrong_beta: NaN poison not reported"

echo "== error paths"
$FIX $E verify tests/configs/gpu/fault.json --shapes 64x64x64 >"$LOG/fault.txt" 2>&1
check_rc "kernel fault exits 3" 3 $? "$(cat "$LOG/fault.txt")"
grep -q 'CUDA_ERROR_' "$LOG/fault.txt" && pass "kernel fault names the CUDA error" || fail "kernel fault names the CUDA error" "$(cat "$LOG/fault.txt")"
$FIX $E verify tests/configs/gpu/needs_k4.json --shapes 16x16x6 >"$LOG/refuse.txt" 2>&1
check_rc "declared shape requirement refuses K=6 (exit 2)" 2 $? "$(cat "$LOG/refuse.txt")"
grep -q 'requires K % 4 == 0' "$LOG/refuse.txt" && pass "refusal names the requirement" || fail "refusal names the requirement"
$FIX $E verify tests/configs/gpu/needs_k4.json --shapes 16x16x8 >"$LOG/accept.txt" 2>&1
check_rc "declared shape requirement accepts K=8" 0 $? "$(cat "$LOG/accept.txt")"
$E verify configs/tiled.json --device 99 >"$LOG/device.txt" 2>&1
check_rc "--device 99 exits 3" 3 $? "$(cat "$LOG/device.txt")"
$E verify configs/tiled.json --arch sm_80 --shapes 64x64x64 >"$LOG/arch.txt" 2>&1
check_rc "an sm_80 CUBIN on this GPU exits 2" 2 $? "$(cat "$LOG/arch.txt")"
echo '{"name": "x", "template": "blocktile", "params": {"BM": 64,}}' >"$LOG/bad.json"
$E bench "$LOG/bad.json" configs/tiled.json --size 256 --runs 2 >"$LOG/bad.txt" 2>&1
check_rc "a bad config among good ones: reported, the rest run, exit 2" 2 $? "$(cat "$LOG/bad.txt")"
grep -q '^tiled ' "$LOG/bad.txt" && pass "the good config still ran" || fail "the good config still ran" "$(cat "$LOG/bad.txt")"

echo "== output formats and --set"
$E bench configs/bank_pad_vec.json --size 1024 --runs 3 --format jsonl >"$LOG/jsonl.txt" 2>"$LOG/jsonl.err"
rc=$?
check_rc "bench --format jsonl" 0 $rc "$(cat "$LOG/jsonl.err")"
python3 - "$LOG/jsonl.txt" <<'PY' && pass "jsonl: one JSON object per row, config and cuBLAS rows" || fail "jsonl rows" "$(cat "$LOG/jsonl.txt")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert [r["config"] for r in rows] == ["bank_pad_vec", "cublas"], rows
assert rows[0]["status"] == "ok" and rows[0]["ms"] > 0 and rows[0]["pct_cublas"] > 0
PY
$E bench configs/bank_pad_vec.json --size 1024 --runs 3 --format csv --set BM=128 --set THREADS=256 >"$LOG/set.txt" 2>&1
check_rc "bench --set BM=128 --set THREADS=256" 0 $? "$(cat "$LOG/set.txt")"
grep -q 'BM=128' "$LOG/set.txt" && grep -q -- '--set BM=128' "$LOG/set.txt" && pass "--set reaches the kernel and the rerun command" || fail "--set reaches the kernel" "$(cat "$LOG/set.txt")"
$E bench configs/bank_pad_vec.json --size 1024 --runs 3 --set TM=12 >"$LOG/set-bad.txt" 2>&1
check_rc "--set TM=12 breaks a constraint: exit 2" 2 $? "$(cat "$LOG/set-bad.txt")"

echo "== compute-sanitizer (memcheck, racecheck), one odd shape per template and schedule"
CS=${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer
if [ "${GPU_SANITIZE:-1}" = 0 ]; then
  echo "  skipped (GPU_SANITIZE=0)"
elif [ -x "$CS" ] || CS=$(command -v compute-sanitizer); then
  for c in naive tiled bank_pad_vec ldg_wider2 sb07_linearize multibuf_b3 ldg_async splitk2 splitk4_2pass \
           sb10_warptiling sb11_double_buffer sb12_double_buffer2 warptile_db dgemm_simt dgemm_pipelined dgemm_dmma; do
    for tool in memcheck racecheck; do
      "$CS" --tool $tool --error-exitcode 99 $E verify configs/$c.json --shapes 67x45x37 >"$LOG/cs-$tool-$c.txt" 2>&1
      rc=$?
      if [ $rc = 0 ] && grep -q 'ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards' "$LOG/cs-$tool-$c.txt"; then
        pass "$tool $c"
      else
        fail "$tool $c (exit $rc)" "$(grep -E 'ERROR|hazard|Invalid|error' "$LOG/cs-$tool-$c.txt" | head -8)"
      fi
    done
  done
else
  fail "compute-sanitizer not found"
fi
summary
