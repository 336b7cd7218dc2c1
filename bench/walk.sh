#!/usr/bin/env bash
# Regenerate the three published tables on the GPU found, as Markdown (docs/RESULTS.md holds the
# committed copy): the FP32 walk at 2048^3, siboehm's kernels at 4096^3, the DGEMM tutorial at
# 2048^3 (alpha 0.9, beta 1.1, as the tutorial runs it), and the walk's variants that did not pan out.
# Uses the prebuilt build/engine; full logs in $WALK_LOG_DIR (default build/walk-logs).
#   usage: bench/walk.sh [extra engine bench options, e.g. --runs 11]
set -u
cd "$(dirname "$0")/.."
E=build/engine
LOG=${WALK_LOG_DIR:-build/walk-logs}
mkdir -p "$LOG"
[ -x "$E" ] || { echo "build/engine is missing: run make first"; exit 2; }
worst=0
table() { # title log-name engine-args...
  local title=$1 name=$2
  shift 2
  echo
  echo "### $title"
  echo
  echo "\`engine bench $*\`"
  echo
  $E bench "$@" --format md 2>"$LOG/$name.err" | tee "$LOG/$name.md"
  local rc=${PIPESTATUS[0]}
  [ "$rc" -gt "$worst" ] && worst=$rc
  [ -s "$LOG/$name.err" ] && sed 's/^/    /' "$LOG/$name.err"
  return 0
}
echo "Generated $(date -u '+%Y-%m-%d %H:%M UTC') by bench/walk.sh $*"
$E info | sed -n 's/^device [0-9]*: /device: /p; s/^  arch /  arch /p; s/^  peak/  peak/p; s/^  driver/  driver/p'
table "FP32 walk at 2048^3 (alpha 1, beta 0)" walk @configs/walk.list --size 2048 "$@"
table "siboehm/SGEMM_CUDA kernels at 4096^3 (alpha 1, beta 0)" siboehm @configs/siboehm.list --size 4096 "$@"
table "DGEMM at 2048^3 (alpha 0.9, beta 1.1)" dgemm @configs/dgemm.list --size 2048 --alpha 0.9 --beta 1.1 "$@"
table "Walk variants that did not pan out, at 2048^3" variants @configs/variants.list --size 2048 "$@"
exit $worst
