#!/usr/bin/env bash
# The next session's device calls, written in session 19 (which ran out of device time), with the
# prebuilt build/ (engine, libengine.so, gpu_lib, examples) and python3 with torch. Everything under
# build/s20-CALL, packed into s20-CALL.tgz there; it and summary.txt are copied to $OUT where set.
#   CALL=hang   is the 8193^2 stall of session 19 a hang? bench/hang_probe.sh (120 s a run, the state of
#               a run that overruns) over verify --auto f32 at 8191x8193x8191, with PDL and without
#               (ENGINE_PDL=0), and a bench loop of tc32ws_3x at 8193x8191x8193 (400 launches a run);
#               then make test-gpu's wisdom-f32 section alone (its parts 2-3 never ended in session 19)
#   CALL=ab     the selection model with the operands' bytes (branch exp/select-input, built into
#               build/engine-selin: git worktree add /tmp/selin exp/select-input && make -C /tmp/selin
#               && cp /tmp/selin/build/engine build/engine-selin) against main's at the design seed's
#               shapes whose choice it moves (build/s20-selin-DT.txt: engine pick, both binaries) and
#               at the decode batch 1x128x4096 x 256 NN bf16
#   CALL=attn   hws tuned at the attention products below torch.matmul (tune/hws_attn.json: each batch on
#               its own, winners into one wisdom file, copied out as tuned.json for an A/B and a merge
#               in a later call: --auto with and without them, bench/merge_tuned.py --ab); the
#               attention workload beside torch as it is
#   CALL=wl     session 18's model changes at the FP32 workload calls: bench/s18_gpu.sh's wl (needs
#               build/engine-before and build/ks-s18a)
# Exit: 0; 2 bad input. A step that fails is logged and the next one runs.
set -u
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
call_begin s20 "$@"
case "$CALL" in
hang)
  run probe-pdl 200 bash bench/hang_probe.sh 6 120 "$OUT/pdl" "$E" verify --auto --dtype f32 --shapes 8191x8193x8191 --format jsonl
  run probe-nopdl 130 env ENGINE_PDL=0 bash bench/hang_probe.sh 4 120 "$OUT/nopdl" "$E" verify --auto --dtype f32 \
    --shapes 8191x8193x8191 --format jsonl
  run probe-bench 60 bash bench/hang_probe.sh 2 25 "$OUT/bench" "$E" bench configs/tc32ws_3x.json --shapes 8193x8191x8193 \
    --runs 80 --iters 5
  for p in pdl nopdl bench; do log "$p: $(tail -n 1 "$OUT/probe-$p.log")"; done
  run wisdom-f32 $(( $(call_left) - 10 )) env GPU_LOG_DIR="$OUT/gpu-logs" GPU_ONLY=wisdom-f32 bash tests/gpu.sh
  tail -n 12 "$OUT/wisdom-f32.log" >>"$OUT/summary.txt"
  ;;
ab)
  for dt in bf16 f32 f64; do
    [ -s "build/s20-selin-$dt.txt" ] || { log "ab-$dt: no build/s20-selin-$dt.txt"; continue; }
    sh=$(cat "build/s20-selin-$dt.txt")
    run "main-$dt" 80 "$E" bench --auto --dtype $dt --shapes "$sh" --runs 5 --format jsonl
    run "selin-$dt" 80 build/engine-selin bench --auto --dtype $dt --shapes "$sh" --runs 5 --format jsonl
  done
  run main-decode 30 "$E" bench --auto --dtype bf16 --op NN --batch 256 --shapes 1x128x4096 --runs 7 --format jsonl
  run selin-decode 30 build/engine-selin bench --auto --dtype bf16 --op NN --batch 256 --shapes 1x128x4096 --runs 7 --format jsonl
  ;;
attn)
  T=$OUT/tuned
  mkdir -p "$T"
  for t in NT:64:1024x1024x64 NT:32:2048x2048x128 NT:8:4096x4096x128 NN:32:2048x128x2048 NN:8:4096x128x4096; do
    IFS=: read -r op b sh <<<"$t"
    run "tune-$op-$b" 75 "$E" tune tune/hws_attn.json --dtype bf16 --op "$op" --batch "$b" --shapes "$sh" \
      --strategy guided --budget 18 --runs 7 --wisdom "$T" --log "$OUT/tune-$op-$b.jsonl"
  done
  run workloads 90 python3 bench/workload.py --out "$OUT/workload-before.jsonl" bench/workloads/attention_bf16.json
  log "tuned entries: $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["entries"]))' "$(ls "$T"/*.json | head -1)")"
  cp "$(ls "$T"/*.json | head -1)" "$OUT/tuned.json"
  ;;
wl)
  CALL=wl OUT= BUDGET=$BUDGET bash bench/s18_gpu.sh >"$OUT/s18-wl.log" 2>&1
  cp build/s18-wl/s18-wl.tgz "$OUT/" 2>/dev/null
  tail -n 30 build/s18-wl/summary.txt >>"$OUT/summary.txt"
  ;;
*)
  echo "s20: CALL must be hang, ab, attn or wl"
  exit 2
  ;;
esac
call_pack "$DEST"
exit 0
