#!/usr/bin/env bash
# Session 18's device calls, with the prebuilt build/ (engine, libengine.so) and python3 with torch.
# Everything under build/s18-CALL, packed into s18-CALL.tgz there; that archive and summary.txt are
# copied to $OUT where it is set (the device tool brings back a few files of it).
#   CALL=probe  the padded-row copy (tma.cuh pad_rows) verified where it runs; Nsight Compute on the
#               weakest FP64/BF16 choices beside cuBLAS's kernel; bf16 hws tuned at short K
#               (tune/hws_short_k.json) and at one narrow side under a long K
#               (tune/hws_narrow_long_k.json), op NN, A/B before/after, merged (>= 2%, as s17's half)
#               into build/s18-final (its H100 file copied to $OUT)
#   CALL=fix    hws's staged epilogue at C's rows off 16 bytes (store_row_unaligned) verified (every op,
#               ldc +1/+2/+4, a batch at an odd stride, f16, turns, EPI 2's fall-back, memcheck);
#               the short-K shapes with an odd N tuned again with it, A/B against the wisdom as it
#               is (wisdom/: the probe's entries in), merged (>= 2%) into build/s18-final2
#   CALL=model  the selection model's split-K fix: HEAD's engine against this one at the design
#               shapes whose choice it changes, and SEED in bf16 and f32, HEAD against this tree
#   CALL=guard  make test-gpu's half sections; bench/regress.sh CHECK=1 over the shipped configs
#   CALL=final  the model's turns (PINGPONG) at the design shapes it changes, without and with; SEED in
#               bf16, HEAD against this tree; the BF16 workloads
#   CALL=last   FP64 LU updates tuned with 64-wide warp tiles; the half GPU section; BF16 workloads
#               with HEAD's library against this tree's, one call
#   CALL=wl     the model's changes at the workloads' calls they move, before and after (kernel time)
#   CALL=judge  SEED (never used) in bf16 and f16, before (build/wisdom-head, HEAD's templates in
#               build/ks-head) and after (wisdom/ with the merged and mirrored entries, kernels_src);
#               Nsight Compute on three weak FP64 choices; the BF16 workloads beside torch
# Exit: 0; 2 bad input. A section that fails is logged and the next one runs.
set -u
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
call_begin s18 "$@"
SEED=${SEED:-}
HEAD_W=build/wisdom-head
seed() { # NAME WISDOM DTYPE [ENV...]
  local name=$1 w=$2 dt=$3
  shift 3
  [ -n "$SEED" ] || { log "seed-$name: no SEED"; return; }
  local shapes
  shapes=$(bash bench/random_shapes.sh "$SEED" 60 | paste -sd, -)
  run "seed-$name" 80 env "$@" "$E" bench --auto --wisdom "$w" --dtype "$dt" --shapes "$shapes" --runs 5 --format jsonl
}
v() { # NAME ARGS...: engine verify, every row in class or the check fails
  local name=$1
  shift
  run "v-$name" 60 "$E" verify "$@"
  grep -q "verify: [1-9][0-9]* passed, 0 failed, 0 errors" "$OUT/v-$name.log" && log "ok $name" || log "FAIL $name"
}
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
prof() { # NAME ENGINE-BENCH-ARGS...: Nsight Compute on every kernel of one run (clocks as they are)
  local name=$1
  shift
  [ -n "$NCU" ] || { log "prof-$name: no ncu"; return; }
  run "prof-$name" 60 "$NCU" --clock-control none --kernel-name regex:'gemm|nvjet' --launch-count 3 --section SpeedOfLight \
    --section WarpStateStats --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
    "$E" bench "$@" --runs 1 --iters 1 --warmup 0
}

case "$CALL" in
probe)
  for op in NN TT; do
    v "hws-$op" configs/hws_bf16.json --op $op --shapes 127x129x131,2100x4100x63,33x1027x2945
  done
  for op in NN TN; do
    v "ws-$op" configs/tc32ws_3x.json --op $op --shapes 63x1457x767,127x129x131,65x5129x1165
  done
  v ws-batch configs/tc32ws_3x.json --batch 3 --shapes 127x129x131
  v hws-batch configs/hws_bf16.json --op NT --batch 3 --shapes 127x129x131
  CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
  [ -n "$CS" ] && run memcheck-ws 60 "$CS" --tool memcheck --error-exitcode 9 "$E" verify configs/tc32ws_3x.json \
    --shapes 65x513x131 --batch 2 --no-cache
  prof lu-nt --auto --dtype f64 --op NT --m 7936 --n 7936 --k 256 --beta 1
  prof oddk --auto --dtype f64 --m 640 --n 5435 --k 9
  prof evenk --auto --dtype f64 --m 640 --n 5432 --k 8
  prof narrow --auto --dtype f64 --m 103 --n 8194 --k 3712
  prof bf16-shortk --auto --dtype bf16 --m 3840 --n 10752 --k 128
  T=$OUT/tuned
  mkdir -p "$T"
  for t in short:tune/hws_short_k.json:210 long:tune/hws_narrow_long_k.json:150; do
    IFS=: read -r name space s <<<"$t"
    run "tune-$name" "$s" "$E" tune "$space" --dtype bf16 --op NN --strategy guided --budget 18 --runs 7 \
      --wisdom "$T" --log "$OUT/tune-$name.jsonl"
  done
  tuned=$(ls "$T"/*.json | head -1)
  cp "$tuned" "$OUT/tuned.json"
  call_merge_ab "$tuned" build/s18-all build/s18-final bench/data/h200-s18-tune-2026-11-28.jsonl 45 --dtype bf16
  ;;
fix)
  for op in NN NT TN TT; do
    v "un-$op" configs/hws_bf16.json --set EPI=1 --op $op --shapes 127x129x131,257x1027x63,100x4570x64,65x1004x200
  done
  for l in 1 2 4; do
    v "un-ldc$l" configs/hws_bf16.json --set EPI=1 --ldc +$l --shapes 127x129x131,300x512x64
  done
  v un-batch configs/hws_bf16.json --set EPI=1 --batch 3 --stride-c 16385 --shapes 127x128x64
  v un-f16 configs/hws_f16.json --set EPI=1 --op TN --shapes 127x129x131,33x1027x2945
  v un-turns configs/hws_bf16.json --set EPI=1 --set PINGPONG=1 --set BN=128 --shapes 127x129x131,1000x1001x999
  v un-epi2 configs/hws_bf16.json --set EPI=2 --set PINGPONG=1 --set BN=128 --shapes 127x129x131,300x515x64
  v un-big configs/hws_bf16.json --set EPI=1 --set PINGPONG=1 --set BN=128 --shapes 11135x14915x31
  CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
  [ -n "$CS" ] && run memcheck-un 60 "$CS" --tool memcheck --error-exitcode 9 "$E" verify configs/hws_bf16.json \
    --set EPI=1 --set PINGPONG=1 --set BN=128 --shapes 127x129x131 --ldc +3 --no-cache
  # EPI 0 against 1 at the odd-N shapes, one tile (the probe's tuned 2048x4096x128 winner), then a tune
  sh=1024x3817x128,1086x5271x65,1536x3329x62,13505x4569x128,11135x14915x31,1408x3767x135,1474x1025x5,384x6656x9
  for epi in 0 1; do
    run "epi$epi" 60 "$E" bench configs/hws_bf16.json --set EPI=$epi --set PINGPONG=1 --set BN=128 --shapes "$sh" \
      --runs 5 --format jsonl
  done
  T=$OUT/tuned
  mkdir -p "$T"
  run tune-odd 200 "$E" tune tune/hws_short_k.json --shapes "$sh" --dtype bf16 --op NN --strategy guided --budget 16 \
    --runs 7 --wisdom "$T" --log "$OUT/tune-odd.jsonl"
  tuned=$(ls "$T"/*.json | head -1)
  cp "$tuned" "$OUT/tuned.json"
  call_merge_ab "$tuned" build/s18-all2 build/s18-final2 bench/data/h200-s18-tune-2026-11-28.jsonl 40 --dtype bf16
  ;;
judge)
  seed bf16-before "$HEAD_W" bf16 ENGINE_TEMPLATES=build/ks-head
  seed bf16-after wisdom bf16
  seed f16-before "$HEAD_W" f16 ENGINE_TEMPLATES=build/ks-head
  seed f16-after wisdom f16
  prof lu-nt --auto --dtype f64 --op NT --m 7936 --n 7936 --k 256 --beta 1
  prof oddk --auto --dtype f64 --m 640 --n 5435 --k 9
  prof narrow --auto --dtype f64 --m 103 --n 8194 --k 3712
  run workloads 120 python3 bench/workload.py --out "$OUT/workload.jsonl" bench/workloads/llama7b_bf16.json \
    bench/workloads/attention_bf16.json bench/workloads/judge/gemma7b_bf16.json
  ;;
model)
  # The model's split-K fix (select.c: a persistent launch's items): --auto with HEAD's engine
  # (build/engine-before) and this one, same wisdom, at the design seeds' shapes whose choice it
  # changes (build/s18-changed-DT.txt, from engine pick); then SEED in bf16 and f32, HEAD (engine,
  # wisdom, templates) against this tree.
  for dt in bf16 f32; do
    sh=$(cat build/s18-changed-$dt.txt)
    run "design-before-$dt" 70 build/engine-before bench --auto --dtype $dt --shapes "$sh" --runs 5 --format jsonl
    run "design-after-$dt" 70 "$E" bench --auto --dtype $dt --shapes "$sh" --runs 5 --format jsonl
  done
  E0=$E
  for dt in bf16 f32; do
    E=build/engine-before seed "$dt-before" "$HEAD_W" $dt ENGINE_TEMPLATES=build/ks-head
    E=$E0 seed "$dt-after" wisdom $dt
  done
  ;;
guard)
  # make test-gpu's half sections (hws in every op, the accuracy classes, sanitizers), then the
  # regression guard over every shipped config (pedantic, its baseline's math; the H200's baseline
  # holds config rows only)
  run test-gpu-half 200 env GPU_ONLY="half half-san" bash tests/gpu.sh
  run regress 330 env CHECK=1 ONLY=configs OUT="$OUT/regress" bash bench/regress.sh
  ;;
final)
  # The model's turns (hws's PINGPONG: template "model" "turns"): the design shapes whose choice it
  # changes (build/s18-changed2-bf16.txt), timed with the model without it (kernels_src's copy in
  # build/ks-s18a, no "turns") and with it; SEED in bf16, HEAD (engine, wisdom, templates) against
  # this tree; the BF16 workloads beside torch with this tree
  sh=$(cat build/s18-changed2-bf16.txt)
  run design2-before 70 env ENGINE_TEMPLATES=build/ks-s18a "$E" bench --auto --dtype bf16 --shapes "$sh" --runs 5 --format jsonl
  run design2-after 70 "$E" bench --auto --dtype bf16 --shapes "$sh" --runs 5 --format jsonl
  E0=$E
  E=build/engine-before seed bf16-before "$HEAD_W" bf16 ENGINE_TEMPLATES=build/ks-head
  E=$E0 seed bf16-after wisdom bf16
  run workloads 120 python3 bench/workload.py --out "$OUT/workload.jsonl" bench/workloads/llama7b_bf16.json \
    bench/workloads/attention_bf16.json bench/workloads/judge/gemma7b_bf16.json
  ;;
last)
  # FP64 LU updates with warp tiles 64 wide (tune/shapes_lu_f64_wide.json), A/B and merged (>= 2%)
  # into build/s18-final3; make test-gpu's half sections again (the torch test now takes gemv);
  # the BF16 workloads with HEAD's library, templates and wisdom (headlib/: beside the tree so its configs are found; ks-head,
  # wisdom-head) beside this tree's, one call
  T=$OUT/tuned
  mkdir -p "$T"
  run tune-lu 130 "$E" tune tune/shapes_lu_f64_wide.json --dtype f64 --op NN --strategy guided --budget 16 --runs 7 \
    --wisdom "$T" --log "$OUT/tune-lu.jsonl"
  tuned=$(ls "$T"/*.json | head -1)
  cp "$tuned" "$OUT/tuned.json"
  call_merge_ab "$tuned" build/s18-all3 build/s18-final3 bench/data/h200-s18-lu-2026-11-28.jsonl 40 --dtype f64 --beta 1
  run test-gpu-half 150 env GPU_ONLY="half" bash tests/gpu.sh
  W="bench/workloads/llama7b_bf16.json bench/workloads/attention_bf16.json bench/workloads/judge/gemma7b_bf16.json"
  run wl-before 70 env ENGINE_LIB=headlib/libengine.so ENGINE_TEMPLATES=build/ks-head ENGINE_WISDOM=build/wisdom-head \
    python3 bench/workload.py --out "$OUT/wl-before.jsonl" $W
  run wl-after 70 python3 bench/workload.py --out "$OUT/wl-after.jsonl" $W
  ;;
wl)
  # The model's two changes at the workloads' calls whose choice they move (bench/data/s18-wl-changed.txt:
  # "DTYPE OP BATCH SHAPES" lines, from engine pick over bench/workloads/): --auto with the model
  # before them (build/engine-before, templates without "turns" in build/ks-s18a) and after
  while read -r dt op b sh; do
    [ -n "$sh" ] || continue
    run "wl-before-$dt-$op-$b" 40 env ENGINE_TEMPLATES=build/ks-s18a build/engine-before bench --auto --dtype $dt --op $op \
      --batch $b --shapes "$sh" --runs 5 --format jsonl
    run "wl-after-$dt-$op-$b" 40 "$E" bench --auto --dtype $dt --op $op --batch $b --shapes "$sh" --runs 5 --format jsonl
  done <bench/data/s18-wl-changed.txt
  ;;
*)
  echo "s18: CALL must be probe, fix, judge, model, guard, final, last or wl"
  exit 2
  ;;
esac
call_pack "$DEST"
exit 0
