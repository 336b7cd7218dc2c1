#!/usr/bin/env bash
# The device calls planned after session 16 (no GPU was lent to it): what it built without a GPU,
# verified, tuned and judged, with the prebuilt build/ (engine, libengine.so) and python3 with torch.
# One call a CALL, each about 8-9 minutes by estimate (not yet timed), everything under $OUT (default
# build/s16) and packed into $OUT/s16-CALL.tgz (the device tool brings back a few files):
#   CALL=checks  bench/hws_gpu.sh's verify, epi and epi-san sections (PINGPONG's rings, split-K at
#                several items a block, the staged epilogues), make test-gpu's gemv section (gemv in
#                every dtype), and bench/yardstick.py
#   CALL=tune    engine tune into a fresh wisdom directory (tuned/, every winner): FP64 narrow short
#                K (tune/shapes_narrow_f64_short_k.json, NN), Gram (tune/shapes_gram_f64.json, TN) and
#                LU updates (tune/shapes_lu_f64.json, NN);
#                BF16 few tiles (tune/hws_few.json, NT), turns and epilogues (tune/hws_turns.json, NN),
#                gemv in bf16 (tune/shapes_gemv_half.json, NT); each under its share of BUDGET
#   CALL=judge   with WISDOM (a directory holding the merged files; default wisdom/): bench/workload.py
#                over every workload file (FP32, FP64, BF16; tuned on and never), then --auto at a
#                fresh seed's 60 shapes (SEED, never used before) in f32, f64 and bf16 beside cuBLAS
#   CALL=guard   bench/regress.sh CHECK=1 over every shipped config and wisdom entry, and
#                bench/hws_gpu.sh's epi-bench (EPI 0/1/2 at 4096^3 and 8192^3)
# Between calls, on this machine: merge tuned/ (bench/half_merge.py for the half types; the FP64
# winners by hand or a merge script) and carry the merged wisdom into CALL=judge.
# Exit: 0; 2 bad input (an unknown CALL). A section that fails is logged and the next one runs.
set -u
cd "$(dirname "$0")/.." || exit 2
E=${ENGINE_BIN:-build/engine}
OUT=${OUT:-build/s16}
CALL=${CALL:-${1:-}}
BUDGET=${BUDGET:-540}
SEED=${SEED:-}
mkdir -p "$OUT"
export XDG_CACHE_HOME=${TMPDIR:-/tmp}/s16-cache XDG_DATA_HOME=${TMPDIR:-/tmp}/s16-data
. bench/lib.sh
call_start s16
run() { call_run "$@"; }
log() { call_log "$@"; }

case "$CALL" in
checks)
  run hws 330 env OUT="$OUT" HWS_SECTIONS="verify epi epi-san" bash bench/hws_gpu.sh
  run gemv 120 env GPU_ONLY="gemv" bash tests/gpu.sh
  run yardstick 120 python3 bench/yardstick.py --out "$OUT/yardstick.jsonl"
  ;;
tune)
  W=$OUT/tuned
  mkdir -p "$W"
  t() { # NAME SECONDS SPACE ARGS...: one tune, winners into $W
    local name=$1 s=$2 space=$3
    shift 3
    run "tune-$name" "$s" "$E" tune "$space" "$@" --wisdom "$W" --log "$OUT/tune-$name.jsonl" --runs 7
  }
  t narrow 80 tune/shapes_narrow_f64_short_k.json --dtype f64 --op NN --strategy guided --budget 30
  t gram 80 tune/shapes_gram_f64.json --dtype f64 --op TN --strategy guided --budget 30
  t lu 90 tune/shapes_lu_f64.json --dtype f64 --op NN --strategy guided --budget 20
  t hws-few 110 tune/hws_few.json --dtype bf16 --op NT --strategy guided --budget 24
  t hws-turns 100 tune/hws_turns.json --dtype bf16 --strategy guided --budget 24
  [ -f tune/shapes_gemv_half.json ] && t gemv-half 60 tune/shapes_gemv_half.json --dtype bf16 --op NT
  ;;
judge)
  [ -n "$SEED" ] || { echo "s16: CALL=judge needs SEED (a seed never used: docs/RESULTS.md lists the used ones)"; exit 2; }
  WIS=${WISDOM:-wisdom}
  run workloads 270 env ENGINE_WISDOM="$WIS" python3 bench/workload.py --out "$OUT/workload.jsonl" \
    bench/workloads/*.json bench/workloads/judge/*.json
  shapes=$(bash bench/random_shapes.sh "$SEED" 60 | paste -sd, -)
  for dt in f32 f64 bf16; do
    run "seed-$dt" 70 "$E" bench --auto --wisdom "$WIS" --dtype "$dt" --shapes "$shapes" --runs 5 --format jsonl
  done
  ;;
guard)
  run regress 330 env CHECK=1 OUT="$OUT/regress" bash bench/regress.sh
  run epi-bench 150 env OUT="$OUT" HWS_SECTIONS="epi-bench" bash bench/hws_gpu.sh
  ;;
*)
  echo "s16: CALL must be checks, tune, judge or guard (got '${CALL}')"
  exit 2
  ;;
esac
tar czf "/tmp/s16-$CALL.tgz" -C "$OUT" . && mv "/tmp/s16-$CALL.tgz" "$OUT/"
cat "$OUT/summary.txt"
