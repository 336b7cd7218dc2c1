#!/usr/bin/env bash
# Profile the first launch of kernel "gemm" of each config with Nsight Compute (speed of light,
# occupancy, launch statistics, warp-state stalls), the way the walk's write-up read its counters.
# --clock-control none: ncu must measure the card as it is, never lock its clocks.
#   usage: bench/profile.sh [--size N] CONFIG...      (reports go to $PROFILE_DIR, default build/profiles)
set -u
cd "$(dirname "$0")/.."
E=build/engine
size=2048
if [ "${1:-}" = --size ]; then size=$2; shift 2; fi
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
DIR=${PROFILE_DIR:-build/profiles}
mkdir -p "$DIR"
for c in "$@"; do
  name=$(basename "$c" .json)
  "$NCU" --clock-control none --kernel-name gemm --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    "$E" bench "$c" --size "$size" --runs 1 --iters 1 --warmup 0 >"$DIR/$name.txt" 2>&1
  echo "== $name (size $size)"
  grep -E 'Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Block Limit Registers|Grid Size|Waves Per SM|Compute \(SM\) Throughput|Memory Throughput|Duration|Warp Cycles Per Issued Instruction' "$DIR/$name.txt" | sed 's/^ */  /'
done
