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
# TARGETS=floor or TARGETS=past runs one group (default both). A run of both writes its results, one
# JSON line per target and size stamped with the date and the device, to $DATA/<tag>-targets.jsonl
# (bench/data/h100-targets.jsonl on an H100; DATA, TAG as in bench/walk.sh): the README's targets
# table (bench/tables.py). ENGINE_BIN=another/engine, ENGINE_ARGS="..." more options for every bench,
# RUNS=11 (default).
set -u
shopt -s lastpipe # check, the last command of each pipeline, sets status in this shell
cd "$(dirname "$0")/.."
. bench/lib.sh
E=${ENGINE_BIN:-build/engine}
[ -x "$E" ] || { echo "build/engine is missing: run make first"; exit 2; }
DATA=${DATA:-bench/data}
OUTDIR=${OUT:-build/targets}
mkdir -p "$OUTDIR"
RESULTS=$OUTDIR/targets.jsonl
: >"$RESULTS"
status=0
# check GROUP TARGET SIZE FIELD THRESHOLD [CONFIG]: the first non-cuBLAS row of the jsonl on stdin
# (or CONFIG's), FIELD = pct_cublas, pct_peak, or ratio (cuBLAS ms / ms); prints met or MISSED and
# both clocks, and appends the result to $RESULTS. TARGET reads "what, measure" and is printed as
# "what at SIZE^3, measure".
CHECK_PY=$(cat <<'PY'
import json, os, sys
group, target, size, field, thr = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
want = sys.argv[6] if len(sys.argv) > 6 else None
save = lambda result: open(os.environ["RESULTS"], "a").write(json.dumps(result, separators=(",", ":")) + "\n")
what, _, measure = target.partition(", ")
label = f"{what} at {size}^3, {measure}"
rows = [json.loads(l) for l in sys.stdin if l.startswith("{")]
cub = next((r for r in rows if r["config"] == "cublas"), None)
mine = next((r for r in rows if r["config"] != "cublas" and (want is None or r["config"] == want)), None)
result = {"group": group, "target": target, "size": size, "field": field, "threshold": thr}
if want:
    result["config"] = want
if mine is None or mine.get("status") != "ok" or cub is None:
    print(f"  MISSED  {label:<60} no result ({mine and mine.get('status')})")
    save(dict(result, value=None, met=False))
    sys.exit(1)
v = cub["ms"] / mine["ms"] if field == "ratio" else mine[field]
result.update(value=round(v, 4), met=v >= thr, clock_mhz=mine.get("clock_mhz"), cublas_clock_mhz=cub.get("clock_mhz"))
if mine.get("power_w") is not None and cub.get("power_w") is not None:
    result.update(power_w=mine["power_w"], cublas_power_w=cub["power_w"])
save(result)
clocks = f"{mine.get('clock_mhz', 0):.0f}/{cub.get('clock_mhz', 0):.0f} MHz"
watts = [r.get("power_w") for r in (mine, cub)]
if all(w is not None for w in watts):  # board power where NVML had a window of 500 ms or more
    clocks += f", {watts[0]:.0f}/{watts[1]:.0f} W"
shown = f"{v:.3f}x" if field == "ratio" else f"{v:.1f}"
print(f"  {'met   ' if v >= thr else 'MISSED'}  {label:<60} {shown:>8} {'>=' if v >= thr else '< '} {thr:g}  ({clocks}, {mine['config']})")
sys.exit(0 if v >= thr else 1)
PY
)
check() { RESULTS=$RESULTS python3 -c "$CHECK_PY" "$@" || status=1; }
run() { "$E" bench "$@" --runs "${RUNS:-11}" --format jsonl ${ENGINE_ARGS:-} 2>/dev/null; }

if [ "${TARGETS:-all}" != past ]; then
  echo "floor:"
  run configs/warptile_db.json --size 4096 | check floor "warptile_db, % of cuBLAS SGEMM" 4096 pct_cublas 75 warptile_db
  for n in 4096 2048; do
    run configs/dgemm_simt.json --size $n --alpha 0.9 --beta 1.1 | check floor "dgemm_simt, % of FP64 CUDA-core peak (alpha 0.9, beta 1.1)" $n pct_peak 70 dgemm_simt
  done
  run configs/dgemm_dmma.json --size 2048 --alpha 0.9 --beta 1.1 | check floor "dgemm_dmma, % of cuBLAS DGEMM (alpha 0.9, beta 1.1)" 2048 pct_cublas 60 dgemm_dmma
fi
if [ "${TARGETS:-all}" != floor ]; then
  echo "past cuBLAS (issue 9; our rows' clock / cuBLAS's, power likewise):"
  for n in 2048 4096 8192 12288; do
    run --auto --dtype f32 --size $n | check past "FP32 (wisdom's choice), x cuBLAS SGEMM" $n ratio 1.05
  done
  for n in 2048 4096; do
    run configs/dgemm_simt.json --size $n | check past "dgemm_simt, % of FP64 CUDA-core peak" $n pct_peak 85 dgemm_simt
  done
  for n in 2048 4096 8192; do
    run --auto --dtype f64 --size $n | check past "FP64 tensor cores (wisdom's choice), x cuBLAS DGEMM" $n ratio 1.15
  done
fi
if [ "${TARGETS:-all}" = all ]; then
  device=$(device_name "$E")
  stamp_rows "$device" <"$RESULTS" >"$DATA/$(device_tag "$device")-targets.jsonl"
  echo "results: $DATA/$(device_tag "$device")-targets.jsonl"
fi
exit $status
