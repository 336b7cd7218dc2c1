#!/usr/bin/env bash
# Session 24's device calls, with the prebuilt build/ carried (engine, libengine.so) and build/s24
# beside it. Data: bench/data/h200-s24-*. Everything under build/s24-CALL, packed into s24-CALL.tgz
# there; it and summary.txt go to $OUT. FRAG_PIPE (fragments double-buffered across k-steps in dmma)
# was tried and not kept: calls four, five and nine run it from bench/probes/frag_pipe.patch applied
# to a copy of kernels_src in build/s24/fp (ENGINE_TEMPLATES).
#   CALL=one  the regression guard (CHECK=1) on the session's first tree; FP64 LU updates at K >= 256
#             (0.86-0.93x cuBLAS at beta 1, where K 64-128 win): --auto at beta 0 and beta 1, and
#             dgemm_dmma's variants at beta 1 (4 stages, no supertile, C asked of L2 ahead, C staged,
#             k16, 64 x 128); Nsight Compute at 7936^2 x 256, beta 1 (its four launches were all
#             cuBLAS's: ours was not reached)
#   CALL=two  cuBLAS's tile at those shapes (call one: 128 x 64 x 16, 3 stages, warps of 64 x 32,
#             m16n8k8, 246 registers, two blocks an SM) and its neighbours as dgemm_dmma's overrides:
#             LU updates NN and NT at beta 1, the squares at beta 0
#   CALL=three where dmma's k loop stalls: Nsight Compute (warp states, source counters, instruction
#             and shared-memory statistics) on the 128 x 64 tile wisdom runs at 4096^3 and on
#             cuBLAS's kernel there; nvdisasm of build/s24/emit's CUBINs (engine compile --emit)
#   CALL=four FRAG_PIPE 1 in the shipped 64 x 64 tile, with 4 stages, and in cuBLAS's 128 x 64 tile,
#             against the shipped tile and wisdom's 128 x 64 k16 tile: LU updates at beta 1, squares
#             at beta 0, an odd shape
#   CALL=five Nsight Compute's source view (SASS with stall samples) of cuBLAS's DGEMM kernel at
#             4096^3 and of dmma's 64 x 64 tile without and with FRAG_PIPE 1; nvdisasm of
#             build/s24/emit5's CUBINs (engine compile --emit, the FRAG_PIPE one from build/s24/fp)
#   CALL=six  issue 42's classes on two fresh seeds (31072026, 80212026; 60 shapes, NN, RUNS 5, f32
#             and f64), --auto beside cuBLAS: where the tree stands on shapes nobody tuned on
#   CALL=seven FP64 at M = 128 under N, K in the thousands (seed 80212026's 128x8193x2048 and
#             128x13952x8192 ran 0.69-0.70x in call six): --auto, the 64x64 tile (two tile rows: 436
#             blocks for 396 places at 13952 columns), wisdom's 128x64 k16 tile (one row, two blocks
#             an SM), stream-K and split-K 2, 5 runs
#   CALL=eight tune/shapes_narrow_long_f64.json at its six design shapes (split depth, k16, 128-row
#             block); the winners --auto runs >= 2% faster join wisdom (call_merge_ab: build/s24-fin);
#             judged on fresh seed 27051966's shapes of that class (600 drawn, the 28 with one side
#             of 48-192, the other >= 2048, K >= 1024), --auto with wisdom/ then with build/s24-fin
#   CALL=nine FRAG_PIPE 2 (half of a k-tile's last mma issued before its barrier, as cuBLAS's loop
#             does), also at BK 32, beside FRAG_PIPE 1 and the shipped 64 x 64 tile
# Exit: 0; 2 bad input. A step that fails is logged and the next one runs.
set -u
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
call_begin s24 "$@"
B="$PWD/build/s24"
# fp_templates: build/s24/fp/kernels_src, this tree's templates with bench/probes/frag_pipe.patch.
fp_templates() {
  [ -d "$B/fp/kernels_src" ] && return
  mkdir -p "$B/fp" && cp -r kernels_src "$B/fp/" && patch -s -p1 -d "$B/fp" <bench/probes/frag_pipe.patch
}
FP="$B/fp/kernels_src"
LU=3840x3840x256,7936x7936x256,2616x2616x384,5616x5616x384,3584x3584x512,7680x7680x512
case "$CALL" in
one)
  "$E" info >"$OUT/info.txt" 2>&1
  run regress 130 env OUT="$OUT/regress" CHECK=1 bash bench/regress.sh
  tail -3 "$OUT/regress.log" >>"$OUT/summary.txt"
  for beta in 0 1; do
    run "lu-auto-b$beta" 40 "$E" bench --auto --dtype f64 --alpha -1 --beta $beta --shapes $LU --runs 5 --format jsonl
  done
  for v in "base:" "st4:--set STAGES=4" "sup0:--set SUPER=0" "pfc1:--set PREFETCH_C=1" "cs1:--set C_STAGE=1" \
    "k16:--set MMA=16816" "bn128:--set BN=128 --set MMA=16816 --set WM=64" "st4pfc:--set STAGES=4 --set PREFETCH_C=1"; do
    IFS=: read -r n set <<<"$v"
    # shellcheck disable=SC2086
    run "lu-$n" 30 "$E" bench configs/dgemm_dmma.json $set --dtype f64 --alpha -1 --beta 1 --shapes $LU --runs 5 --format jsonl
  done
  run lu-base0 30 "$E" bench configs/dgemm_dmma.json --dtype f64 --alpha -1 --beta 0 --shapes $LU --runs 5 --format jsonl
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  run prof 100 "$NCU" --clock-control none --target-processes all --kernel-name "regex:.*gemm.*" --launch-count 4 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    --section WarpStateStats --section SchedulerStats \
    "$E" bench configs/dgemm_dmma.json --dtype f64 --alpha -1 --beta 1 --m 7936 --n 7936 --k 256 --runs 1 --iters 2 --warmup 0
  ;;
two)
  T1="--set BM=128 --set BN=64 --set WM=64 --set WN=32 --set THREADS=128"
  for v in "base:" "c1:$T1 --set MMA=1688" "c2:$T1 --set MMA=16816" "c1m2:$T1 --set MMA=1688 --set MINB=2" \
    "c1s4:$T1 --set MMA=1688 --set SUPER=4" "c1s0:$T1 --set MMA=1688 --set SUPER=0" \
    "c4:--set BM=128 --set BN=64 --set WM=32 --set WN=32 --set THREADS=256" \
    "c5:--set BM=128 --set BN=128 --set WM=64 --set WN=32 --set THREADS=256 --set MMA=1688" \
    "c6:--set BM=64 --set BN=128 --set WM=32 --set WN=64 --set MMA=1688"; do
    IFS=: read -r n set <<<"$v"
    # shellcheck disable=SC2086
    run "nn-$n" 30 "$E" bench configs/dgemm_dmma.json $set --dtype f64 --alpha -1 --beta 1 --shapes $LU,4904x4904x96,2904x2904x96 \
      --runs 5 --format jsonl
  done
  for v in "base:" "c1:$T1 --set MMA=1688" "c2:$T1 --set MMA=16816"; do
    IFS=: read -r n set <<<"$v"
    # shellcheck disable=SC2086
    run "nt-$n" 30 "$E" bench configs/dgemm_dmma.json $set --dtype f64 --op NT --alpha -1 --beta 1 \
      --shapes 4616x4616x384,4808x4808x192,7936x7936x256,3584x3584x512 --runs 5 --format jsonl
    # shellcheck disable=SC2086
    run "sq-$n" 40 "$E" bench configs/dgemm_dmma.json $set --dtype f64 --shapes 2048x2048x2048,4096x4096x4096,8192x8192x1024,6000x6000x6000 \
      --runs 5 --format jsonl
  done
  ;;
three)
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  DIS=$(command -v nvdisasm || echo /usr/local/cuda/bin/nvdisasm)
  for c in "$B"/emit/dgemm_dmma.cubin "$B"/emit/base/dgemm_dmma.cubin; do
    "$DIS" -c -g "$c" >"$OUT/$(basename "$(dirname "$c")").sass" 2>&1
  done
  SEC="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats
    --section InstructionStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section SourceCounters"
  # shellcheck disable=SC2086
  run prof-ours 120 "$NCU" --clock-control none --target-processes all --kernel-name "regex:^gemm$" --launch-count 1 $SEC \
    --print-details all "$E" bench configs/dgemm_dmma.json --set BM=128 --set MMA=16816 --set WM=64 --dtype f64 --size 4096 \
    --runs 1 --iters 1 --warmup 0
  # shellcheck disable=SC2086
  run prof-cublas 120 "$NCU" --clock-control none --target-processes all --kernel-name "regex:.*xmma_gemm.*" --launch-count 1 \
    $SEC "$E" bench configs/dgemm_dmma.json --dtype f64 --size 4096 --runs 1 --iters 1 --warmup 0
  ;;
four)
  fp_templates
  T1="--set BM=128 --set BN=64 --set WM=64 --set WN=32 --set THREADS=128"
  for v in "base:" "fp:--set FRAG_PIPE=1" "fp4:--set FRAG_PIPE=1 --set STAGES=4" "c2:$T1 --set MMA=16816" \
    "fp128:$T1 --set MMA=1688 --set FRAG_PIPE=1"; do
    IFS=: read -r n set <<<"$v"
    tpl=$PWD/kernels_src
    case "$set" in *FRAG_PIPE*) tpl=$FP ;; esac
    # shellcheck disable=SC2086
    run "lu-$n" 30 env ENGINE_TEMPLATES="$tpl" "$E" bench configs/dgemm_dmma.json $set --dtype f64 --alpha -1 --beta 1 \
      --shapes $LU,4904x4904x96,2904x2904x96,1026x6144x128 --runs 5 --format jsonl
    # shellcheck disable=SC2086
    run "sq-$n" 30 env ENGINE_TEMPLATES="$tpl" "$E" bench configs/dgemm_dmma.json $set --dtype f64 \
      --shapes 2048x2048x2048,4096x4096x4096,8192x8192x1024,4095x4097x333 --runs 5 --format jsonl
  done
  ;;
five)
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  DIS=$(command -v nvdisasm || echo /usr/local/cuda/bin/nvdisasm)
  for c in fp base c1; do "$DIS" -c "$B/emit5/$c/dgemm_dmma.cubin" >"$OUT/$c.sass" 2>&1; done
  SRC="--clock-control none --target-processes all --launch-count 1 --section SourceCounters --section WarpStateStats
    --section ComputeWorkloadAnalysis --page source --print-source sass"
  # shellcheck disable=SC2086
  run src-cublas 150 "$NCU" $SRC --kernel-name "regex:.*xmma_gemm.*" "$E" bench configs/dgemm_dmma.json --dtype f64 \
    --size 4096 --runs 1 --iters 1 --warmup 0
  # shellcheck disable=SC2086
  run src-base 150 "$NCU" $SRC --kernel-name "regex:^gemm$" "$E" bench configs/dgemm_dmma.json --dtype f64 --size 4096 \
    --runs 1 --iters 1 --warmup 0
  fp_templates
  # shellcheck disable=SC2086
  run src-fp 150 env ENGINE_TEMPLATES="$FP" "$NCU" $SRC --kernel-name "regex:^gemm$" "$E" bench configs/dgemm_dmma.json \
    --set FRAG_PIPE=1 --dtype f64 --size 4096 --runs 1 --iters 1 --warmup 0
  ;;
six)
  for seed in 31072026 80212026; do
    run "classes-$seed" 260 env OUT="$OUT/classes-$seed" RUNS=5 bash bench/classes.sh $seed 60
  done
  ;;
seven)
  S=128x13952x8192,128x8193x2048,128x11136x4751,128x10011x3584,128x4096x4096
  run m128-auto 40 "$E" bench --auto --dtype f64 --shapes $S --runs 5 --format jsonl
  for v in "base:configs/dgemm_dmma.json" "c2:configs/dgemm_dmma.json --set BM=128 --set MMA=16816 --set WM=64" \
    "sk:configs/dgemm_dmma_streamk.json" "s2:configs/dgemm_dmma_splitk.json --set SPLITK=2" \
    "s2k16:configs/dgemm_dmma_splitk.json --set SPLITK=2 --set MMA=16816"; do
    IFS=: read -r n c <<<"$v"
    # shellcheck disable=SC2086
    run "m128-$n" 40 "$E" bench $c --dtype f64 --shapes $S --runs 5 --format jsonl
  done
  ;;
eight)
  D=128x12288x4096,128x16384x2048,96x10240x6144,160x8192x3072,8192x128x4096,12288x96x2048
  run tune 240 "$E" tune tune/shapes_narrow_long_f64.json --dtype f64 --shapes $D --runs 5 --wisdom "$OUT/tuned" \
    --log "$OUT/tune.jsonl"
  tuned=$(ls "$OUT"/tuned/*.json | head -1)
  FIN=build/s24-fin
  call_merge_ab "$tuned" build/s24-all "$FIN" bench/data/h200-s24-narrow-2026-11-29.jsonl.gz 40 --dtype f64
  J=$(bash bench/random_shapes.sh 27051966 600 | python3 -c '
import sys
s = [tuple(map(int, l.split("x"))) for l in sys.stdin.read().split()]
print(",".join("%dx%dx%d" % x for x in s if 48 <= min(x[0], x[1]) <= 192 and max(x[0], x[1]) >= 2048 and x[2] >= 1024))')
  log "judge 27051966: $J"
  run judge-before 80 "$E" bench --auto --wisdom wisdom --dtype f64 --shapes "$J" --runs 5 --format jsonl
  run judge-after 80 "$E" bench --auto --wisdom "$FIN" --dtype f64 --shapes "$J" --runs 5 --format jsonl
  ;;
nine)
  S=2048x2048x2048,4096x4096x4096,7936x7936x256,5616x5616x384
  run fp-base 40 "$E" bench configs/dgemm_dmma.json --dtype f64 --shapes $S --runs 5 --format jsonl
  fp_templates
  run fp-fp 40 env ENGINE_TEMPLATES="$FP" "$E" bench configs/dgemm_dmma.json --set FRAG_PIPE=1 --dtype f64 --shapes $S \
    --runs 5 --format jsonl
  run fp-fp2 40 env ENGINE_TEMPLATES="$FP" "$E" bench configs/dgemm_dmma.json --set FRAG_PIPE=2 --dtype f64 --shapes $S \
    --runs 5 --format jsonl
  run fp-fp2s4 40 env ENGINE_TEMPLATES="$FP" "$E" bench configs/dgemm_dmma.json --set FRAG_PIPE=2 --set BK=32 --dtype f64 \
    --shapes $S --runs 5 --format jsonl
  ;;
*)
  echo "s24: CALL must be one, two, three, four, five, six, seven, eight or nine"
  exit 2
  ;;
esac
call_pack "$DEST"
exit 0
