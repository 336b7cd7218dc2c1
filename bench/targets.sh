#!/usr/bin/env bash
# The speed targets, each measured as a ratio to a yardstick timed in the same run (never in a unit
# test). Runs on the GPU found with the prebuilt build/engine; exits 1 when a target is missed.
#   FP32: the best FP32 config (warptile_db) at 4096^3 reaches >= 0.75x cuBLAS strict FP32
#   FP64 SIMT: dgemm_simt reaches >= 70% of the FP64 CUDA-core peak, at 4096^3 and at 2048^3
#   FP64 tensor cores: dgemm_dmma reaches >= 0.6x cuBLAS DGEMM at 2048^3 (alpha 0.9, beta 1.1)
set -u
cd "$(dirname "$0")/.."
E=build/engine
[ -x "$E" ] || { echo "build/engine is missing: run make first"; exit 2; }
status=0
field() { sed -n "s/.*\"$2\":\([-0-9.e]*\).*/\1/p" <<<"$1"; }
row_of() { grep "\"config\":\"$2\"" <<<"$1" | head -n 1; }
check() { # label, value, threshold
  if awk -v v="$2" -v t="$3" 'BEGIN { exit !(v >= t) }'; then
    printf '  met     %-58s %8.1f >= %s\n' "$1" "$2" "$3"
  else
    printf '  MISSED  %-58s %8.1f <  %s\n' "$1" "$2" "$3"
    status=1
  fi
}
run() { "$E" bench "$@" --runs 11 --format jsonl 2>/dev/null; }

out=$(run configs/warptile_db.json --size 4096)
check "warptile_db at 4096^3, % of cuBLAS SGEMM" "$(field "$(row_of "$out" warptile_db)" pct_cublas)" 75
for n in 4096 2048; do
  out=$(run configs/dgemm_simt.json --size $n --alpha 0.9 --beta 1.1)
  v=$(field "$(row_of "$out" dgemm_simt)" pct_peak)
  check "dgemm_simt at ${n}^3, % of FP64 CUDA-core peak" "$v" 70
done
out=$(run configs/dgemm_dmma.json --size 2048 --alpha 0.9 --beta 1.1)
check "dgemm_dmma at 2048^3, % of cuBLAS DGEMM" "$(field "$(row_of "$out" dgemm_dmma)" pct_cublas)" 60
exit $status
