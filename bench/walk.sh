#!/usr/bin/env bash
# Regenerate the published tables on the GPU found: the FP32 walk at 2048^3, siboehm's kernels at
# 4096^3, the DGEMM tutorial at 2048^3 (alpha 0.9, beta 1.1, as the tutorial runs it), and the walk's
# variants that did not pan out. Each table is one `engine bench ... --format jsonl` run whose rows,
# stamped with the date and the device, go to $DATA/<tag>-<table>.jsonl (bench/data/h100-walk.jsonl
# on an H100): the files bench/tables.py renders into the README. Then each is printed as the
# engine's Markdown table (docs/RESULTS.md holds committed copies). To publish a run: commit the
# data files, `python3 bench/tables.py --write README.md`, and commit the README with them.
#   usage: bench/walk.sh [extra engine bench options, e.g. --runs 11]
#   DATA=dir (default bench/data)   TAG=h100 (default from the device's name, bench/lib.sh)
#   TABLES="walk dgemm" (default all four)   ENGINE_BIN=another/engine   DEVICE="name" (tests)
# Uses the prebuilt build/engine; stderr of each run in $WALK_LOG_DIR (default build/walk-logs).
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh
E=${ENGINE_BIN:-build/engine}
LOG=${WALK_LOG_DIR:-build/walk-logs}
DATA=${DATA:-bench/data}
mkdir -p "$LOG" "$DATA"
[ -x "$E" ] || { echo "build/engine is missing: run make first"; exit 2; }
device=$(device_name "$E")
tag=$(device_tag "$device")
worst=0
table() { # name title engine-args...
  local name=$1 title=$2 rows=$LOG/$1.jsonl
  shift 2
  [[ " ${TABLES:-walk siboehm dgemm variants} " == *" $name "* ]] || return 0
  echo
  echo "### $title"
  echo
  echo "\`engine bench $*\`"
  echo
  $E bench "$@" --format jsonl 2>"$LOG/$name.err" >"$rows"
  local rc=$?
  [ "$rc" -gt "$worst" ] && worst=$rc
  if [ -s "$rows" ]; then
    stamp_rows "$device" <"$rows" >"$DATA/${tag:-unknown}-$name.jsonl"
    python3 bench/tables.py --md "$rows"
  fi
  [ -s "$LOG/$name.err" ] && sed 's/^/    /' "$LOG/$name.err"
  return 0
}
echo "Generated $(date -u '+%Y-%m-%d %H:%M UTC') by bench/walk.sh $*; rows in $DATA/${tag:-unknown}-*.jsonl"
$E info 2>/dev/null | sed -n 's/^device [0-9]*: /device: /p; s/^  arch /  arch /p; s/^  peak/  peak/p; s/^  driver/  driver/p'
table walk "FP32 walk at 2048^3 (alpha 1, beta 0)" @configs/walk.list --size 2048 "$@"
table siboehm "siboehm/SGEMM_CUDA kernels at 4096^3 (alpha 1, beta 0)" @configs/siboehm.list --size 4096 "$@"
table dgemm "DGEMM at 2048^3 (alpha 0.9, beta 1.1)" @configs/dgemm.list --size 2048 --alpha 0.9 --beta 1.1 "$@"
table variants "Walk variants that did not pan out, at 2048^3" @configs/variants.list --size 2048 "$@"
exit $worst
