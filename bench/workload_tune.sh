#!/usr/bin/env bash
# Wisdom at the workloads' weak classes, judged on workloads never tuned on, in one GPU call with the
# prebuilt build/ (engine, libengine.so). Full logs and rows under $OUT (default build/workload-tune).
#   1  the judge workloads (bench/workloads/judge/*.json: other models' layer sizes, attention and FP64
#      shapes nobody tunes on) through engine.matmul beside torch.matmul with the wisdom as it is
#   2  engine tune --wisdom wisdom at the tune shapes: FP32 NT products of few tokens and long K
#      (TUNE_F32: tc32_3x split-K, tune/shapes_splitk_tc32_3x.json) and FP64 Gram products over long K
#      (TUNE_F64: dgemm_dmma_splitk at TN, deeper splits); every point verified, winners recorded
#   3  the judge workloads again, and the tuned-on workloads (bench/workloads/*.json), on the new wisdom
# Prints the judge tables' geomeans before and after last; wisdom/*.json (the tuned device's file
# among them) is copied to $OUT/wisdom. Name the card (the H100) when the figures are to be kept.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/workload-tune}
mkdir -p "$OUT"
E=build/engine
export ENGINE_LIB=$PWD/build/libengine.so PYTHONUNBUFFERED=1
TUNE_F32=${TUNE_F32:-128x4096x11008,128x2048x5632,32x5120x13824,128x5120x13824,128x4096x4096,32x4096x11008}
TUNE_F64=${TUNE_F64:-32x32x262144,64x64x65536,64x64x100000,128x128x65536}
t0=$(date +%s)

echo "== 1 judge workloads, wisdom as shipped"
timeout 200 python3 bench/workload.py bench/workloads/judge/*.json --runs "${RUNS:-20}" --out "$OUT/judge-before.jsonl" >"$OUT/judge-before.txt" 2>&1
echo "exit $? ($(($(date +%s) - t0)) s)"

echo "== 2 tune"
timeout 240 $E tune tune/shapes_splitk_tc32_3x.json --op NT --shapes "$TUNE_F32" --wisdom wisdom \
  --log "$OUT/tune-f32.jsonl" >"$OUT/tune-f32.txt" 2>&1
echo "f32 exit $? ($(($(date +%s) - t0)) s)"
grep -E '^(best|winner|wisdom)|recorded|x cuBLAS' "$OUT/tune-f32.txt" | tail -n 20
timeout 120 $E tune configs/dgemm_dmma_splitk.json --op TN --shapes "$TUNE_F64" --set SPLITK=16,32,64,128,256 \
  --set BM=32,64 --set BN=32,64 --set 'THREADS=32 * (BM / WM) * (BN / WN)' --wisdom wisdom \
  --log "$OUT/tune-f64.jsonl" >"$OUT/tune-f64.txt" 2>&1
echo "f64 exit $? ($(($(date +%s) - t0)) s)"
grep -E '^(best|winner|wisdom)|recorded|x cuBLAS' "$OUT/tune-f64.txt" | tail -n 12
mkdir -p "$OUT/wisdom" && cp wisdom/*.json "$OUT/wisdom/"  # the tuned device's file among them

echo "== 3 judge workloads and the tuned-on workloads, new wisdom"
timeout 200 python3 bench/workload.py bench/workloads/judge/*.json --runs "${RUNS:-20}" --out "$OUT/judge-after.jsonl" >"$OUT/judge-after.txt" 2>&1
echo "exit $? ($(($(date +%s) - t0)) s)"
timeout 200 python3 bench/workload.py bench/workloads/*.json --runs "${RUNS:-20}" --out "$OUT/workload-after.jsonl" >"$OUT/workload-after.txt" 2>&1
echo "exit $? ($(($(date +%s) - t0)) s)"

echo
echo "== summary ($(($(date +%s) - t0)) s)"
for f in judge-before judge-after workload-after; do
  echo "-- $f"
  sed -n '/^### geometric means/,$p' "$OUT/$f.txt" | grep '^|'
done
