#!/usr/bin/env bash
# The speed targets, each measured as a ratio to a yardstick timed in the same run (never in a unit
# test), median of 11 runs, with the SM clock of both rows printed (and their board power where the
# timed runs lasted 500 ms or more). Runs on the GPU found with the
# prebuilt build/engine; exits 1 when a target is missed.
# The floor (the first issues' targets):
#   FP32: the best FP32 config (warptile_db) at 4096^3 reaches >= 0.75x cuBLAS strict FP32
#   FP64 SIMT: dgemm_simt reaches >= 70% of the FP64 CUDA-core peak, at 4096^3 and at 2048^3
#   FP64 tensor cores: dgemm_dmma reaches >= 0.6x cuBLAS DGEMM at 2048^3 (alpha 0.9, beta 1.1)
# Past cuBLAS (issue 9), with the configs the shipped wisdom picks (bench --auto):
#   FP32 >= 1.05x cuBLAS at 2048^3, 4096^3, 8192^3 and 12288^3
#   dgemm_simt >= 85% of the FP64 CUDA-core peak at 2048^3 and 4096^3
#   FP64 tensor cores >= 1.15x cuBLAS DGEMM at 2048^3, 4096^3 and 8192^3
# TARGETS=floor or TARGETS=past runs one group (default both).
set -u
shopt -s lastpipe # check, the last command of each pipeline, sets status in this shell
cd "$(dirname "$0")/.."
E=build/engine
[ -x "$E" ] || { echo "build/engine is missing: run make first"; exit 2; }
status=0
# check LABEL FIELD THRESHOLD [CONFIG]: the first non-cuBLAS row of the jsonl on stdin (or CONFIG's),
# FIELD = pct_cublas, pct_peak, or ratio (cuBLAS ms / ms); prints met or MISSED and both clocks.
CHECK_PY=$(cat <<'PY'
import json, sys
label, field, thr = sys.argv[1], sys.argv[2], float(sys.argv[3])
want = sys.argv[4] if len(sys.argv) > 4 else None
rows = [json.loads(l) for l in sys.stdin if l.startswith("{")]
cub = next((r for r in rows if r["config"] == "cublas"), None)
mine = next((r for r in rows if r["config"] != "cublas" and (want is None or r["config"] == want)), None)
if mine is None or mine.get("status") != "ok" or cub is None:
    print(f"  MISSED  {label:<60} no result ({mine and mine.get('status')})")
    sys.exit(1)
v = cub["ms"] / mine["ms"] if field == "ratio" else mine[field]
clocks = f"{mine.get('clock_mhz', 0):.0f}/{cub.get('clock_mhz', 0):.0f} MHz"
watts = [r.get("power_w") for r in (mine, cub)]
if all(w is not None for w in watts):  # board power where NVML had a window of 500 ms or more
    clocks += f", {watts[0]:.0f}/{watts[1]:.0f} W"
shown = f"{v:.3f}x" if field == "ratio" else f"{v:.1f}"
print(f"  {'met   ' if v >= thr else 'MISSED'}  {label:<60} {shown:>8} {'>=' if v >= thr else '< '} {thr:g}  ({clocks}, {mine['config']})")
sys.exit(0 if v >= thr else 1)
PY
)
check() { python3 -c "$CHECK_PY" "$@" || status=1; }
run() { "$E" bench "$@" --runs 11 --format jsonl 2>/dev/null; }

if [ "${TARGETS:-all}" != past ]; then
  echo "floor:"
  run configs/warptile_db.json --size 4096 | check "warptile_db at 4096^3, % of cuBLAS SGEMM" pct_cublas 75 warptile_db
  for n in 4096 2048; do
    run configs/dgemm_simt.json --size $n --alpha 0.9 --beta 1.1 | check "dgemm_simt at ${n}^3, % of FP64 CUDA-core peak" pct_peak 70 dgemm_simt
  done
  run configs/dgemm_dmma.json --size 2048 --alpha 0.9 --beta 1.1 | check "dgemm_dmma at 2048^3, % of cuBLAS DGEMM" pct_cublas 60 dgemm_dmma
fi
if [ "${TARGETS:-all}" != floor ]; then
  echo "past cuBLAS (issue 9; our rows' clock / cuBLAS's, power likewise):"
  for n in 2048 4096 8192 12288; do
    run --auto --dtype f32 --size $n | check "FP32 (wisdom's choice) at ${n}^3, x cuBLAS SGEMM" ratio 1.05
  done
  for n in 2048 4096; do
    run configs/dgemm_simt.json --size $n | check "dgemm_simt at ${n}^3, % of FP64 CUDA-core peak" pct_peak 85 dgemm_simt
  done
  for n in 2048 4096 8192; do
    run --auto --dtype f64 --size $n | check "FP64 tensor cores (wisdom's choice) at ${n}^3, x cuBLAS DGEMM" ratio 1.15
  done
fi
exit $status
