#!/usr/bin/env bash
# Session 19's device calls, with the prebuilt build/ (engine, libengine.so, gpu_lib, examples) and
# python3 with torch. Everything under build/s19-CALL, packed into s19-CALL.tgz there; that archive
# and summary.txt are copied to $OUT where it is set (the device tool brings back a few files).
#   CALL=suite  make test-gpu as parallel sections (GPU_JOBS, tests/gpu/jobs.sh), all but edges and the timed
#               ones (regress, half-bench) unless SECTIONS names others; none starts after DEADLINE s
#   CALL=guard  the sections SECTIONS names (those the suite call left), then the timed ones alone:
#               half-bench and regress (CHECK=1 over the shipped configs, the H200 baseline)
#   (session 18's model changes at the FP32 workload calls: CALL=wl bash bench/s18_gpu.sh)
# Exit: 0; 2 bad input. A section that fails is logged and the next one runs.
set -u
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
call_begin s19 "$@"
ALL="sanitize wisdom-memcheck half-san accuracy wisdom-f32 wisdom-f64 layouts tune library sm90a gemv verify half
  isolation tune-faults auto splitk streamk interior f64 skinny slicek vec2 lanes wrong errors formats device"
case "$CALL" in
suite)
  run test-gpu $((BUDGET - 20)) env GPU_LOG_DIR="$OUT/gpu-logs" GPU_JOBS="${JOBS:-8}" GPU_DEADLINE="${DEADLINE:-330}" \
    GPU_ONLY="${SECTIONS:-$ALL}" bash tests/gpu.sh
  sed -n '/^== make test-gpu as/,$p' "$OUT/test-gpu.log" | grep -v '^    ' >>"$OUT/summary.txt"
  ;;
guard)
  [ -n "${SECTIONS:-}" ] && run test-gpu 330 env GPU_LOG_DIR="$OUT/gpu-logs" GPU_JOBS="${JOBS:-6}" GPU_ONLY="$SECTIONS" \
    bash tests/gpu.sh
  [ -n "${SECTIONS:-}" ] && tail -n 40 "$OUT/test-gpu.log" | grep -v '^    ' >>"$OUT/summary.txt"
  run test-gpu-timed 300 env GPU_LOG_DIR="$OUT/gpu-logs-timed" GPU_ONLY="half-bench regress" bash tests/gpu.sh
  tail -n 30 "$OUT/test-gpu-timed.log" >>"$OUT/summary.txt"
  ;;
*)
  echo "s19: CALL must be suite or guard"
  exit 2
  ;;
esac
call_pack "$DEST"
exit 0
