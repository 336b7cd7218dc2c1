#!/usr/bin/env bash
# Session 20's device calls (written in session 19, extended in 20), with the prebuilt build/
# (engine, libengine.so, gpu_lib, examples), python3 with torch, and build/s20x carried beside them
# (engine-selin and engine-before, templates ks-s18a, selin-DT.txt, attn-nnB.json, attn-groups.txt,
# wisdom-before = HEAD 63c6460's wisdom, wisdom-attn). Everything under build/s20-CALL, packed into
# s20-CALL.tgz there; it and summary.txt are copied to $OUT where set.
#   CALL=hang   make test-gpu's wisdom-f32 section alone under bench/hang_probe.sh (its near checks
#               never ended in session 19), then verify --auto f32 at 8191x8193x8191 with PDL and
#               without (ENGINE_PDL=0), 2 runs each
#   CALL=ab     the selection model with the operands' bytes (branch exp/select-input, built into
#               build/s20x/engine-selin: git worktree add /tmp/selin exp/select-input && make -C /tmp/selin
#               && cp /tmp/selin/build/engine build/s20x/engine-selin) against main's at the design seed's
#               shapes whose choice it moves (build/s20x/selin-DT.txt: engine pick, both binaries) and
#               at the decode batch 1x128x4096 x 256 NN bf16
#   CALL=attn   hws tuned at the attention products below torch.matmul (tune/hws_attn.json: each batch on
#               its own, winners into one wisdom file, copied out as tuned.json for an A/B and a merge
#               in a later call: --auto with and without them, bench/merge_tuned.py --ab); the
#               attention workload beside torch as it is
#   CALL=near   wisdom-f32's checks near the entries alone (WISDOM_PART=near), under the probe
#   CALL=attn-ab  CALL=attn's PV winners (build/s20x/attn-nnB.json) A/B'd with --auto
#   CALL=gram   FP64 Gram (TN, tall K) tuned with C-covering tiles, A/B'd and merged
#   CALL=decode gemv tuned at the decode p V batch, A/B'd; the attention workload with the new entries
#   CALL=attn-ab2  --auto at the attention workload's calls, HEAD's wisdom against this session's
#   CALL=judge  the BF16 attention judge workload, HEAD's wisdom against this session's
#   CALL=final  the worker's deadline sections of make test-gpu; verify --auto at the new bf16/f16 entries
#   CALL=wl     session 18's model changes at the FP32 workload calls: bench/s18_gpu.sh's wl (needs
#               build/engine-before and build/ks-s18a)
# Exit: 0; 2 bad input. A step that fails is logged and the next one runs.
set -u
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
call_begin s20 "$@"
case "$CALL" in
hang)
  # wisdom-f32 first (what issue 43 waits on), under the probe so that a stall leaves its state;
  # then the verify loop at 8191x8193x8191, with PDL and without, in what is left.
  run wisdom-f32 440 env GPU_LOG_DIR="$OUT/gpu-logs" GPU_ONLY=wisdom-f32 bash bench/hang_probe.sh 1 430 "$OUT/wprobe" \
    bash tests/gpu.sh
  tail -n 14 "$OUT/wprobe/run-1.txt" >>"$OUT/summary.txt"
  run probe-pdl 70 bash bench/hang_probe.sh 2 32 "$OUT/pdl" "$E" verify --auto --dtype f32 --shapes 8191x8193x8191 --format jsonl
  run probe-nopdl 70 env ENGINE_PDL=0 bash bench/hang_probe.sh 2 32 "$OUT/nopdl" "$E" verify --auto --dtype f32 \
    --shapes 8191x8193x8191 --format jsonl
  for p in pdl nopdl; do log "$p: $(tail -n 1 "$OUT/probe-$p.log")"; done
  ;;
ab)
  for dt in bf16 f32 f64; do
    [ -s "build/s20x/selin-$dt.txt" ] || { log "ab-$dt: no build/s20x/selin-$dt.txt"; continue; }
    sh=$(cat "build/s20x/selin-$dt.txt")
    run "main-$dt" 80 "$E" bench --auto --wisdom wisdom --dtype $dt --shapes "$sh" --runs 5 --format jsonl
    run "selin-$dt" 80 env ENGINE_TEMPLATES=kernels_src build/s20x/engine-selin bench --auto --wisdom wisdom --dtype $dt --shapes "$sh" --runs 5 --format jsonl
  done
  run main-decode 30 "$E" bench --auto --wisdom wisdom --dtype bf16 --op NN --batch 256 --shapes 1x128x4096 --runs 7 --format jsonl
  run selin-decode 30 env ENGINE_TEMPLATES=kernels_src build/s20x/engine-selin bench --auto --wisdom wisdom --dtype bf16 --op NN --batch 256 --shapes 1x128x4096 --runs 7 --format jsonl
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
  [ -x build/engine-before ] || cp -r build/s20x/engine-before build/s20x/ks-s18a build/
  CALL=wl OUT= BUDGET=$BUDGET bash bench/s18_gpu.sh >"$OUT/s18-wl.log" 2>&1
  cp build/s18-wl/s18-wl.tgz "$OUT/" 2>/dev/null
  tail -n 30 build/s18-wl/summary.txt >>"$OUT/summary.txt"
  ;;
near)
  # wisdom-f32's checks at odd shapes near the entries (its own-shape checks passed in CALL=hang),
  # with a stalled set-up now retried on a new worker (run.c call()); under the probe as before.
  run wisdom-near 430 env GPU_LOG_DIR="$OUT/gpu-logs" GPU_ONLY=wisdom-f32 WISDOM_PART=near bash bench/hang_probe.sh 1 420 \
    "$OUT/wprobe" bash tests/gpu.sh
  grep -E '^  (ok|FAIL|SKIP) ' "$OUT/wprobe/run-1.txt" >>"$OUT/summary.txt"
  tail -n 1 "$OUT/wprobe/run-1.txt" >>"$OUT/summary.txt"
  ;;
attn-ab)
  # CALL=attn's PV winners (NN, batches 32 and 8: build/s20x/attn-nnB.json) A/B: --auto with the
  # shipped wisdom and with each merged in, 7 runs; the merge itself is bench/merge_tuned.py --ab here.
  for b in 32 8; do
    t=build/s20x/attn-nn$b.json
    rm -rf "build/s20-all$b" && cp -r wisdom "build/s20-all$b"
    python3 bench/merge_tuned.py "$t" --into "build/s20-all$b/nvidia-h100-80gb-hbm3.json" --data x >/dev/null
    sh=$(python3 -c 'import json,sys; print(",".join(e["shape"] for e in json.load(open(sys.argv[1]))["entries"]))' "$t")
    run "ab-before-$b" 40 "$E" bench --auto --wisdom wisdom --dtype bf16 --batch $b --shapes "$sh" --runs 7 --format jsonl
    run "ab-after-$b" 40 "$E" bench --auto --wisdom "build/s20-all$b" --dtype bf16 --batch $b --shapes "$sh" --runs 7 --format jsonl
  done
  ;;
gram)
  # FP64 Gram products (TN, tall K) with tiles that cover C in one block a split
  # (tune/shapes_gram_f64_wide.json), each shape tuned on its own, then the winners A/B'd with
  # --auto and merged where >= 2% faster (call_merge_ab).
  T=$OUT/tuned
  mkdir -p "$T"
  # (Session 20 ran it at 96x96x50000 and 128x128x65536; the first is a judge shape,
  # bench/workloads/judge/factor_judge_f64.json, so its winner was not shipped: lu_f64's shapes here.)
  for sh in 64x64x65536 128x128x65536; do
    run "tune-$sh" 150 "$E" tune tune/shapes_gram_f64_wide.json --dtype f64 --op TN --shapes "$sh" --strategy guided \
      --budget 48 --runs 5 --wisdom "$T" --log "$OUT/tune-$sh.jsonl"
  done
  tuned=$(ls "$T"/*.json | head -1)
  [ -n "$tuned" ] && call_merge_ab "$tuned" build/s20-gall build/s20-gfin bench/data/h200-s20-gram-tune-2026-11-29.jsonl.gz 40 \
    --dtype f64 --op TN
  ;;
decode)
  # The decode p V batch (bf16 NN, 1 x 128 x ctx, 256 products; bench/workloads/attention_bf16.json)
  # with gemv tuned on it (tune/shapes_gemv_half_nn.json's space), A/B'd and merged where >= 2%
  # faster; then the attention workload beside torch with CALL=attn's PV winners
  # (build/s20x/wisdom-attn: shipped wisdom with them merged) and these.
  T=$OUT/tuned
  mkdir -p "$T"
  for sh in 1x128x4096 1x128x1024; do
    run "tune-$sh" 110 "$E" tune tune/shapes_gemv_half_nn.json --dtype bf16 --op NN --batch 256 --shapes "$sh" \
      --strategy guided --budget 40 --runs 7 --wisdom "$T" --log "$OUT/tune-$sh.jsonl"
  done
  tuned=$(ls "$T"/*.json | head -1)
  [ -n "$tuned" ] && call_merge_ab "$tuned" build/s20-dall build/s20-dfin bench/data/h200-s20-attn-tune-2026-11-29.jsonl.gz 40 \
    --dtype bf16 --op NN --batch 256
  [ -n "$tuned" ] && python3 bench/merge_tuned.py "$tuned" --into build/s20x/wisdom-attn/nvidia-h100-80gb-hbm3.json \
    --data bench/data/h200-s20-attn-tune-2026-11-29.jsonl.gz --ab "$OUT/ab-before.log" "$OUT/ab-after.log" >>"$OUT/merge.log" 2>&1
  run workloads 100 env ENGINE_WISDOM=build/s20x/wisdom-attn python3 bench/workload.py --out "$OUT/workload-after.jsonl" \
    bench/workloads/attention_bf16.json
  ;;
attn-ab2)
  # The kernels --auto runs at every attention workload call (bench/workloads/attention_bf16.json,
  # grouped by op and batch in build/s20x/attn-groups.txt) with HEAD's wisdom (build/s20x/wisdom-before)
  # and with this session's PV and decode entries (wisdom/), before and after in turn, 7 runs.
  while read -r op b sh; do
    run "before-$op-$b" 30 "$E" bench --auto --wisdom build/s20x/wisdom-before --dtype bf16 --op "$op" --batch "$b" \
      --shapes "$sh" --runs 7 --format jsonl
    run "after-$op-$b" 30 "$E" bench --auto --wisdom wisdom --dtype bf16 --op "$op" --batch "$b" --shapes "$sh" --runs 7 \
      --format jsonl
  done <build/s20x/attn-groups.txt
  ;;
judge)
  # The BF16 attention judge (bench/workloads/judge/attention_judge_bf16.json, never tuned on) through
  # engine.matmul beside torch.matmul, with HEAD's wisdom and with this session's entries, in turn.
  run judge-before 120 env ENGINE_WISDOM=build/s20x/wisdom-before python3 bench/workload.py \
    --out "$OUT/judge-before.jsonl" bench/workloads/judge/attention_judge_bf16.json
  run judge-after 120 env ENGINE_WISDOM=wisdom python3 bench/workload.py --out "$OUT/judge-after.jsonl" \
    bench/workloads/judge/attention_judge_bf16.json
  ;;
final)
  # The final tree: make test-gpu's sections that exercise the worker's deadlines (a kernel that
  # hangs, faults, a tune's isolation) and verify --auto at this session's entries in bf16 and f16
  # (f16's mirrored from bf16's), every op.
  run sections 200 env GPU_LOG_DIR="$OUT/gpu-logs" GPU_ONLY="verify isolation tune-faults tune formats" bash tests/gpu.sh
  grep -E '^  (FAIL|SKIP) |passed, ' "$OUT/sections.log" >>"$OUT/summary.txt"
  for dt in bf16 f16; do
    for t in 8:4096x128x4096,4095x127x4097 32:2048x128x2048,2047x129x2049 256:1x128x1024,1x128x4096,1x127x4095; do
      IFS=: read -r b sh <<<"$t"
      for op in NN TN; do
        run "verify-$dt-$op-$b" 40 "$E" verify --auto --dtype $dt --op $op --batch "$b" --shapes "$sh" --format jsonl
        log "verify-$dt-$op-$b: $(grep -c '"status":"ok"' "$OUT/verify-$dt-$op-$b.log") ok of $(grep -c '^{' "$OUT/verify-$dt-$op-$b.log")"
      done
    done
  done
  ;;
*)
  echo "s20: CALL must be hang, ab, attn, attn-ab, attn-ab2, near, gram, decode, judge, final or wl"
  exit 2
  ;;
esac
call_pack "$DEST"
exit 0
