# tests/gpu/tiles.sh — sourced by tests/gpu.sh (its helpers, $E, $LOG and want() in scope): split-K, stream-K, interior and edge tiles, half-width rows, the skinny, tiny and sliced-K tiles, sm_90a.
# shellcheck shell=bash

if want splitk; then
echo "== split-K in the warp-tiled, DMMA and block-tiled templates: odd shapes (each dimension 1 past a tile), three modes"
SK="configs/warptile_splitk.json configs/dgemm_dmma_splitk.json"
# Mode 2: one launch, the first split of a tile to finish writes it, the others wait and add.
# Verification checks the second of two launches, so the tile counters must be left at zero;
# 4160x4160x64 has 65x65 blocktile tiles, more than the module's 4096 counters: mode 2 falls back
# to scale_c and atomics.
# shellcheck disable=SC2086
run_verify "split-K, one-launch mode" splitk $SK configs/splitk2.json --set SPLITK_MODE=2 \
  --shapes 1x1x1,65x33x4097,129x129x8193,127x129x131,255x257x259
run_verify "split-K, one-launch mode past 4096 tiles" splitk-many configs/splitk2.json --set SPLITK_MODE=2 --shapes 4160x4160x64
# shellcheck disable=SC2086
run_verify "split-K, atomic mode" splitk0 $SK --set SPLITK_MODE=0 --shapes 1x1x1,65x33x4097,129x129x8193,127x129x131
# shellcheck disable=SC2086
run_verify "split-K, deterministic two-pass mode" splitk2 $SK --set SPLITK_MODE=1 --shapes 1x1x1,17x33x5,65x33x4097,127x129x131
# The same plans launched plainly (ENGINE_PDL=0): the path of GPUs before sm_90.
# shellcheck disable=SC2086
ENGINE_PDL=0 run_verify "split-K, two-pass mode, without PDL" splitk-nopdl $SK --set SPLITK_MODE=1 --shapes 1x1x1,127x129x131
for c in splitk2 warptile_splitk dgemm_dmma_splitk; do
  sanitize_verify "$c, one-launch mode" "splitk-$c" "memcheck racecheck" configs/$c.json --set SPLITK_MODE=2 --shapes 67x45x37
done
fi

if want streamk; then
echo "== stream-K in warptile and DMMA: runs across tile boundaries, more blocks than k-tiles, odd shapes"
SK="configs/warptile_streamk.json configs/dgemm_dmma_streamk.json"
# shellcheck disable=SC2086
run_verify "stream-K at odd shapes" streamk $SK --shapes 1x1x1,17x33x5,129x65x4097,257x129x131,1000x1000x1000
# 7 and 1 blocks: runs of uneven length that start and end inside tiles; one block doing everything.
for n in 7 1; do
  # shellcheck disable=SC2086
  run_verify "stream-K with $n blocks" streamk-$n $SK --set STREAMK=$n --shapes 129x129x257,65x33x1001
done
fi

if want interior; then
echo "== interior and edge tiles (EDGE): tiles inside C unguarded, edge tiles guarded; both settings, odd shapes"
# Shapes with interior tiles and partial tiles along M, N or both, K partial or whole; with split-K,
# stream-K and sliced K, whose epilogues differ for the two kinds of tile.
IE="configs/warptile_db.json configs/dgemm_simt.json configs/dgemm_dmma.json configs/warptile_splitk.json configs/dgemm_dmma_splitk.json configs/warptile_streamk.json configs/dgemm_dmma_streamk.json"
for edge in 1 0; do
  # shellcheck disable=SC2086
  run_verify "EDGE=$edge: interior and edge tiles at odd shapes" interior-$edge $IE --set EDGE=$edge \
    --shapes 257x385x131,1000x1001x999,513x512x64,512x515x67,4095x129x257
done
# EDGE 3 (warptile only): the guarded copy called as a function of its own.
IEW="configs/warptile_db.json configs/dgemm_simt.json configs/warptile_splitk.json configs/warptile_streamk.json"
# shellcheck disable=SC2086
run_verify "EDGE=3: interior and edge tiles at odd shapes" interior-3 $IEW --set EDGE=3 \
  --shapes 257x385x131,1000x1001x999,513x512x64,512x515x67,4095x129x257,1x1x1
# B by cp.async inside the register-staged double buffer (B_ASYNC 1; 2 where N % 4 != 0), f32 and f64.
for ba in 1 2; do
  # shellcheck disable=SC2086
  run_verify "B_ASYNC=$ba at odd shapes" basync-$ba configs/warptile_db.json configs/warptile_splitk.json --set B_ASYNC=$ba \
    --shapes 1x1x1,17x33x5,257x385x131,1000x1001x999,129x65x4097
done
run_verify "B_ASYNC=1 in f64" basync-f64 configs/warptile_db.json --dtype f64 --set B_ASYNC=1 --shapes 17x33x5,257x385x131
# Register-staged loads two tiles ahead (LOAD_AHEAD 1), f32 and f64, with split-K and stream-K (parts
# of one and two k-tiles: the prologue's second load and the last iterations' skipped ones).
# shellcheck disable=SC2086
run_verify "LOAD_AHEAD=1 at odd and whole shapes" ahead configs/warptile_db.json configs/warptile_splitk.json configs/warptile_streamk.json \
  --set LOAD_AHEAD=1 --shapes 1x1x1,17x33x5,257x385x131,1000x1001x999,129x65x4097,128x128x8,128x128x16,256x256x24
run_verify "LOAD_AHEAD=1 in f64" ahead-f64 configs/warptile_db.json configs/dgemm_simt.json --dtype f64 --set DB=3 --set LOAD_AHEAD=1 \
  --shapes 17x33x5,257x385x131,128x128x16
# B packed into the workspace first (PACK_B 1 at every shape; 2 where N % VEC_B != 0; 3 where also
# K % VEC_A == 0): every pipeline (DB 0 sb10, 1 sb11, 2 dgemm_simt and sb12, 3 warptile_db), split-K
# by atomics, stream-K, loads two tiles ahead, EDGE 3; M, N, K = 1 mod the 128x128x8 tile, N = 2 mod 4,
# and K past one pack row group.
PK="configs/warptile_db.json configs/dgemm_simt.json configs/sb10_warptiling.json configs/sb11_double_buffer.json configs/sb12_double_buffer2.json configs/warptile_splitk.json configs/warptile_streamk.json"
for pb in 1 2 3; do
  # shellcheck disable=SC2086
  run_verify "PACK_B=$pb at odd and whole shapes" packb-$pb $PK --set PACK_B=$pb \
    --shapes 1x1x1,17x33x5,129x129x9,257x385x131,1000x1001x999,66x130x34,129x65x4097,256x256x64
done
run_verify "PACK_B=1 with EDGE=3 in f64" packb-f64 configs/warptile_db.json configs/dgemm_simt.json --dtype f64 --set PACK_B=1 --set EDGE=3 \
  --shapes 1x1x1,129x129x9,257x385x131
run_verify "PACK_B=1 with LOAD_AHEAD=1 and EDGE=3" packb-ahead configs/warptile_db.json --set PACK_B=1 --set LOAD_AHEAD=1 --set EDGE=3 \
  --shapes 1x1x1,129x129x9,257x385x131
# C's tile through shared memory (C_STAGE 1 everywhere; 2, the default, where N % VEC_C != 0), f32 and f64.
# shellcheck disable=SC2086
run_verify "C_STAGE=1 at odd and whole shapes" cstage configs/warptile_db.json configs/dgemm_simt.json configs/sb10_warptiling.json \
  --set C_STAGE=1 --shapes 1x1x1,17x33x5,257x385x131,1000x1001x999,129x65x4097,256x256x64
# The default stages C also where K <= 1024 with N's rows unaligned (K a multiple of VEC_A: the new case).
run_verify "C_STAGE 2 (default) at unaligned N with K <= 1024" cstage2 configs/warptile_db.json configs/dgemm_simt.json \
  configs/sb10_warptiling.json --shapes 17x33x8,127x129x128,2251x11601x4,1000x1001x1024
sanitize_verify "of interior and edge tiles (warptile_db, dgemm_dmma_streamk)" interior "memcheck racecheck" \
  configs/warptile_db.json configs/dgemm_dmma_streamk.json --shapes 257x385x131
sanitize_verify "of B by cp.async in the register-staged pipeline" basync "memcheck racecheck synccheck" \
  configs/warptile_db.json --set B_ASYNC=1 --shapes 257x385x131
sanitize_verify "of the edge tiles' code called as a function (EDGE 3)" edge3 "memcheck racecheck" \
  configs/warptile_db.json --set EDGE=3 --shapes 257x385x132
sanitize_verify "of B packed into the workspace first (PACK_B)" packb "memcheck racecheck initcheck" \
  configs/warptile_db.json configs/dgemm_simt.json --set PACK_B=1 --shapes 257x385x131
sanitize_verify "of loads two tiles ahead" ahead "memcheck racecheck synccheck" \
  configs/warptile_db.json --set LOAD_AHEAD=1 --shapes 257x385x131
sanitize_verify "of C's tile through shared memory" cstage "memcheck racecheck synccheck" \
  configs/warptile_db.json --set C_STAGE=1 --shapes 257x385x131
fi

if want vec2; then
echo "== rows aligned to 2 elements but not 4 (M, N, K = 2 mod 4): half-width loads, B read in strided groups"
run_verify "every shipped config at 66x130x34 and 2x6x2" vec2 configs/*.json --shapes 66x130x34,2x6x2
fi

if want skinny; then
echo "== skinny and tiny warp tiles (16-row blocks with BK 32 and the one-warp tile, as the shipped wisdom picks them; 16-column blocks): odd shapes, sanitizers"
SKM="--set BM=16 --set WM=16 --set WN=32 --set WNITER=1 --set TN=4 --set BK=32 --set THREADS=128 --set MINB=4"
SKN="--set BN=16 --set WN=16 --set WM=32 --set WNITER=1 --set TN=4 --set THREADS=128 --set MINB=4"
# The one-warp tile with 32-deep k-slices that the tiny shapes pick, split 4 ways.
SKT="--set BM=16 --set BN=32 --set BK=32 --set WM=16 --set WN=32 --set WNITER=1 --set TM=2 --set TN=4 --set THREADS=32 --set MINB=16 --set SPLITK=4"
for v in SKM SKN SKT; do
  # shellcheck disable=SC2086
  run_verify "skinny tile $v at odd shapes" skinny-$v configs/warptile_splitk.json ${!v} --shapes 1x1x1,17x65x4097,65x17x4097,17x8193x1025
  # shellcheck disable=SC2086
  sanitize_verify "skinny tile $v" "skinny-$v" "memcheck racecheck" configs/warptile_splitk.json ${!v} --shapes 17x65x37
done
fi

if want skinny; then
echo "== the tiny-shape DMMA tile the shipped wisdom picks (32x32 blocks of four 16x16 warp tiles, BK 32): odd shapes, sanitizers"
SKD="--set BM=32 --set BN=32 --set BK=32 --set WM=16 --set WN=16 --set MMA=1688 --set THREADS=128"
for sk in 1 4; do
  # shellcheck disable=SC2086
  run_verify "tiny DMMA tile, SPLITK $sk, at odd shapes" tiny-dmma-$sk configs/dgemm_dmma_splitk.json $SKD --set SPLITK=$sk \
    --shapes 1x1x1,17x33x5,33x33x33,127x129x131,255x257x259
done
# shellcheck disable=SC2086
sanitize_verify "tiny DMMA tile" tiny-dmma "memcheck racecheck" configs/dgemm_dmma_splitk.json $SKD --set SPLITK=1 --shapes 67x45x37
fi

if want skinny; then
echo "== the FP64 tensor-core tiles the shipped wisdom picks beyond the tiny ones: odd shapes, sanitizers"
# 128x64 and 64x128 blocks of 64x32 warp tiles with m16n8k16 (large squares); blocks one
# instruction tile tall (16 rows, BK 64; 16x8192x8192); 64x64 blocks of eight 32x16 warps with
# m16n8k16 (1024^3).
DT1="configs/dgemm_dmma.json --set BM=128 --set MMA=16816 --set WM=64"
DT2="configs/dgemm_dmma.json --set BN=128 --set MMA=16816 --set WM=64"
DT3="configs/dgemm_dmma_splitk.json --set BM=16 --set BK=64 --set MMA=1688 --set WM=16 --set WN=16 --set SPLITK=4"
DT4="configs/dgemm_dmma_splitk.json --set MMA=16816 --set WN=16 --set THREADS=256 --set SPLITK=1"
# 64x128 blocks of the 64x32 m16n8k16 warp tiles split 32 ways (512x512x65536); 32x16 blocks of
# four 16x8 warp tiles (8192x16x8192).
DT5="configs/dgemm_dmma_splitk.json --set BN=128 --set MMA=16816 --set WM=64 --set SPLITK=32"
DT6="configs/dgemm_dmma_splitk.json --set BM=32 --set BN=16 --set BK=64 --set MMA=1688 --set WM=16 --set WN=8 --set SPLITK=1"
for v in DT1 DT2 DT3 DT4 DT5 DT6; do
  # shellcheck disable=SC2086
  run_verify "FP64 tile $v at odd shapes" dmma-tile-$v ${!v} --shapes 1x1x1,17x33x5,33x65x129,127x129x131,65x33x4097
done
for v in DT1 DT3 DT6; do
  # shellcheck disable=SC2086
  sanitize_verify "FP64 tile $v" "dmma-tile-$v" "memcheck racecheck" ${!v} --shapes 131x67x45
done
# PREFETCH_C (C's lines asked of L2 before the K loop) and C_STAGE (C's tile through the k-tiles'
# shared memory, stored a row at a time), each forced on at odd shapes in every op (verify runs beta
# 0 and beta != 0), in f32 and on batches; C_STAGE also with m8n8k4, the 128 x 64 and 64 x 128 tiles
# of 64 x 32 warps, odd strides and ldc + 1; the defaults' rules at odd shapes, their rows' switches
# asserted on; memcheck over the prefetching kernel (a prefetch itself never faults: its addresses'
# bounds are the code's guard, not the sanitizer's), memcheck and racecheck over the stage.
for sw in PREFETCH_C:pfc C_STAGE:cs; do
  IFS=: read -r par tag <<<"$sw"
  for op in NN NT TN TT; do
    run_verify "DMMA $par 1 op $op at odd shapes" dmma-$tag-$op configs/dgemm_dmma.json --set $par=1 --op $op \
      --shapes 1x1x1,17x33x5,127x129x131,65x33x4097
  done
  run_verify "DMMA $par 1 in f32 (3xTF32)" dmma-$tag-f32 configs/dgemm_dmma.json --dtype f32 --set $par=1 \
    --shapes 17x33x5,127x129x131
done
run_verify "DMMA PREFETCH_C 1, a batch of 3" dmma-pfc-batch configs/dgemm_dmma.json --set PREFETCH_C=1 --batch 3 \
  --shapes 127x129x131
# switch_rows NAME LOG SWITCH: every row of the verify LOG ran with SWITCH=1.
switch_rows() {
  local n on
  n=$(grep -c '"switches":' "$2")
  on=$(grep -c "\"switches\":\"[^\"]*$3=1" "$2")
  [ "$n" -gt 0 ] && [ "$n" = "$on" ] && pass "$1: $3 1 in its $n rows" || fail "$1: $3 1 in its rows" "$on of $n rows"
}
for op in NN NT; do
  run_verify "DMMA PREFETCH_C's default on, op $op, 2305x4099x97" dmma-pfc-on-$op configs/dgemm_dmma.json --op $op \
    --shapes 2305x4099x97
  switch_rows "...op $op" "$LOG/dmma-pfc-on-$op.txt" PFC
done
sanitize_verify "DMMA PREFETCH_C 1" dmma-pfc "memcheck" configs/dgemm_dmma.json --set PREFETCH_C=1 --shapes 131x67x45
run_verify "DMMA C_STAGE 1 with m8n8k4" dmma-cs-884 configs/dgemm_dmma.json --set C_STAGE=1 --set MMA=884 \
  --shapes 17x33x5,127x129x131
for v in DT1 DT2; do
  # shellcheck disable=SC2086
  run_verify "DMMA C_STAGE 1, tile $v" dmma-cs-$v ${!v} --set C_STAGE=1 --shapes 127x129x131,255x257x67
done
run_verify "DMMA C_STAGE 1, a batch of 3, odd strides, ldc + 1" dmma-cs-batch configs/dgemm_dmma.json --set C_STAGE=1 \
  --batch 3 --ldc +1 --stride-a 16641 --stride-b 16901 --stride-c 16511 --shapes 127x129x131
run_verify "DMMA C_STAGE's default on (odd N) with PREFETCH_C" dmma-cs-on configs/dgemm_dmma.json --set PREFETCH_C=1 \
  --shapes 1027x999x131
switch_rows "...its rows" "$LOG/dmma-cs-on.txt" CSTAGE
sanitize_verify "DMMA C_STAGE 1" dmma-cs "memcheck racecheck" configs/dgemm_dmma.json --set C_STAGE=1 --shapes 131x67x45
fi

if want slicek; then
echo "== sliced K in warptile and DMMA (groups of warps sharing a tile's k-steps, summed through shared memory): odd shapes, both schedules, with split-K and stream-K, sanitizers"
# 64x64 tiles of four 32x32 warps, in 2 or 4 groups; 32x64 tiles of four 16x32 warps in 4 groups of 4-step slices.
SL2="--set BM=64 --set BN=64 --set BK=32 --set WM=32 --set WN=32 --set WNITER=1 --set TM=4 --set TN=4 --set SLICEK=2 --set THREADS=256 --set MINB=2"
SL4="--set BM=64 --set BN=64 --set BK=32 --set WM=32 --set WN=32 --set WNITER=1 --set TM=4 --set TN=4 --set SLICEK=4 --set THREADS=512 --set MINB=1"
SLT="--set BM=32 --set BN=64 --set BK=16 --set WM=16 --set WN=32 --set WNITER=1 --set TM=2 --set TN=4 --set SLICEK=4 --set THREADS=512 --set MINB=1"
# The tiles the shipped wisdom picks for large K (32x64 blocks of two 32x32 warps, two groups),
# for 512^3 (the same block in four groups) ...
SLW="--set BM=32 --set BN=64 --set BK=32 --set WN=32 --set WNITER=1 --set TN=4 --set SLICEK=2 --set THREADS=128 --set MINB=4"
SL5="--set BM=32 --set BN=64 --set BK=32 --set WN=32 --set WNITER=1 --set TN=4 --set SLICEK=4 --set THREADS=256 --set MINB=2"
# ... and for 8192x16x8192: a 64x16 block of one warp tile in four groups.
SLN="--set BM=64 --set BN=16 --set BK=32 --set WM=64 --set WN=16 --set WNITER=1 --set TN=4 --set SLICEK=4 --set THREADS=128 --set MINB=4"
for v in SL2 SL4 SLT SLW SL5 SLN; do
  i=0
  for extra in "--set SPLITK=1 --set DB=3" "--set SPLITK=4 --set DB=2 --set STAGES=3" "--set SPLITK=64 --set DB=2 --set STAGES=3" "--set SPLITK=1 --set STREAMK=7"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    run_verify "sliced K $v ($extra) at odd shapes" slicek-$v-$i configs/warptile_splitk.json ${!v} $extra \
      --shapes 1x1x1,17x33x5,65x65x33,127x129x131,33x65x4097
  done
done
# f64 takes the same code path with twice the shared memory.
# shellcheck disable=SC2086
run_verify "sliced K in f64 at odd shapes" slicek-f64 configs/warptile_splitk.json $SL4 --set SPLITK=2 --dtype f64 \
  --shapes 1x1x1,127x129x131,65x63x1025
# shellcheck disable=SC2086
sanitize_verify "sliced K" slicek "memcheck racecheck synccheck initcheck" configs/warptile_splitk.json $SL4 --set SPLITK=2 \
  --shapes 67x45x133
# DMMA's k-slices (f64, dmma.cu SLICEK, issue 42): 2 and 4 slices, with split-K in its three modes,
# every op, odd shapes, a 128x16 tile of two slices; the slices' sums meet in shared memory.
DSH=1x1x1,17x33x5,97x1129x128,127x129x131,33x65x4097
i=0
for extra in "" "--set SLICEK=4 --set THREADS=512" "--set SPLITK=4" "--set SPLITK=3 --set SPLITK_MODE=1" \
  "--set SPLITK=4 --set SPLITK_MODE=2"; do
  i=$((i + 1))
  # shellcheck disable=SC2086
  run_verify "DMMA k-slices ($extra) at odd shapes" dmma-slicek-$i configs/dgemm_narrow_k.json $extra --shapes $DSH
done
for op in NT TN TT; do
  run_verify "DMMA k-slices op $op" dmma-slicek-$op configs/dgemm_narrow_k.json --op $op --shapes 97x1129x128,127x129x131
done
run_verify "DMMA k-slices, a 128x16 tile of two" dmma-slicek-m128 configs/dgemm_narrow_m128.json --set BN=16 --set WN=16 \
  --set BK=32 --set STAGES=2 --set SLICEK=2 --set THREADS=256 --shapes $DSH
sanitize_verify "DMMA k-slices" dmma-slicek "memcheck racecheck synccheck initcheck" configs/dgemm_narrow_k.json \
  --set SPLITK=2 --shapes 67x45x133
fi

if want gemv; then
echo "== gemv: a matrix times a few vectors, both loops (LDOT) in every op, f32, f64, bf16, f16, odd shapes, split-K, column groups, sanitizers"
# N or M of 1-5 with odd K (the vector loop's tail), a K below one vector, rows past a block.
GSH=1x1x1,1x33x5,17x1x5,3x1000x999,1000x4x999,5x1025x4097,4097x2x65,1x8193x1025,130x3x7,2x2x3
for op in NN NT TN TT; do
  run_verify "gemv f32 op $op" gemv-$op configs/gemv.json --op "$op" --shapes $GSH
  run_verify "gemv f64 op $op" gemv64-$op configs/gemv.json --dtype f64 --op "$op" --shapes $GSH
  # Groups of 4 lanes keeping 4 rows each, KW 1 (no shared memory), one step of loads.
  run_verify "gemv LANES 4 ROWS 4 KW 1 UNROLL 1 op $op" gemv-l4-$op configs/gemv.json --op "$op" \
    --set LANES=4 --set ROWS=4 --set KW=1 --set UNROLL=1 --set THREADS=64 --shapes 1x33x5,17x1x5,3x1000x999,1000x4x999
done
run_verify "gemv op NN, lda/ldb/ldc + 1 (one element a load)" gemv-pad1 configs/gemv.json --lda +1 --ldb +1 --ldc +1 \
  --shapes 1x33x5,17x1x5,3x1000x999,1000x4x999
run_verify "gemv op TT, lda/ldb/ldc + 8" gemv-pad8 configs/gemv.json --op TT --lda +8 --ldb +8 --ldc +8 \
  --shapes 1x33x5,17x1x5,3x1000x999,1000x4x999
run_verify "gemv f64 op NT, lda + 1" gemv64-pad1 configs/gemv.json --dtype f64 --op NT --lda +1 --shapes 1x33x5,17x1x5,3x1000x999
run_verify "gemv batch 3, op NT" gemv-batch configs/gemv.json --batch 3 --op NT --shapes 1x33x5,17x1x5,5x1025x97
run_verify "gemv f64 batch 3, op TN, padded strides" gemv64-batch configs/gemv.json --dtype f64 --batch 3 --op TN \
  --stride-a 17000 --stride-b 17001 --stride-c 17002 --shapes 5x1025x9
# Split-K: 17x1x40 in 5 splits of one 16-deep step leaves two splits empty (modes 1 and 2 run them).
for m in 0 1 2; do
  for op in NN TN; do
    run_verify "gemv SPLITK 5 mode $m op $op" gemv-sk$m-$op configs/gemv.json --op "$op" --set SPLITK=5 --set SPLITK_MODE=$m \
      --shapes 1x1x1,17x1x40,3x1000x999,1000x4x999,2x300x65537
  done
done
# Neither side at most NV: groups of NV vectors over grid y, the last one partial.
run_verify "gemv NV 1 past its width: column groups of one" gemv-groups configs/gemv.json --set NV=1 --shapes 17x5x33,5x17x33
run_verify "gemv NV 4 at 130x66x72 and 66x130x34, op TT" gemv-groups-tt configs/gemv.json --op TT --shapes 130x66x72,66x130x34
sanitize_verify "gemv both loops (op NN), split-K mode 2" gemv-san "memcheck racecheck" configs/gemv.json --set SPLITK=3 \
  --set SPLITK_MODE=2 --shapes 3x1000x99,1000x4x99
sanitize_verify "gemv op TN" gemv-san-tn "memcheck" configs/gemv.json --op TN --shapes 3x1000x99,1000x4x99,66x130x34
# bf16 and f16 (class bf16/f16: A, B, C in the type, FP32 sums, one rounding; verify runs beta 0 and
# beta != 0): N = 1, 3, 16 and M = 1, 5 mirrored, odd K (2-byte loads), K a multiple of 8 (16-byte
# loads at VEC 8), the random-seed shapes that ran hws/hmma at 0.09-0.23x cuBLAS (2304x1x8189,
# 128x1x8195, 2545x3x1923); 128x1x8195 and 1x300x65537 split K through the FP32 workspace (SPLITK 0).
HSH=1x1x1,17x1x5,4096x1x4096,2304x1x8189,128x1x8195,1000x3x999,2545x3x1923,1000x16x1024,1x4096x4096,1x4097x4095,5x2545x1923,3x1000x999,16x1000x1000,1x300x65537
for dt in bf16 f16; do
  for op in NN NT TN TT; do
    run_verify "gemv $dt op $op, VEC 8" gemv-$dt-$op configs/gemv.json --dtype $dt --op "$op" --set VEC=8 --shapes $HSH
    run_verify "gemv $dt op $op, VEC 4, LANES 4 ROWS 4 KW 1 UNROLL 1" gemv-$dt-l4-$op configs/gemv.json --dtype $dt --op "$op" \
      --set LANES=4 --set ROWS=4 --set KW=1 --set UNROLL=1 --set THREADS=64 --shapes 1x33x5,17x1x5,3x1000x999,1000x4x999
  done
  run_verify "gemv $dt NV 16 (16 vectors a block), op NT" gemv-$dt-nv16 configs/gemv.json --dtype $dt --op NT --set NV=16 \
    --set UNROLL=1 --set KW=1 --shapes 1000x16x1024,16x1000x1000,1000x13x999,13x1000x999
  run_verify "gemv $dt op NN, lda/ldb/ldc + 1" gemv-$dt-pad1 configs/gemv.json --dtype $dt --set VEC=8 --lda +1 --ldb +1 --ldc +1 \
    --shapes 1x33x5,17x1x5,3x1000x999,1000x4x999
  run_verify "gemv $dt op TT, lda/ldb/ldc + 4 (8-byte loads)" gemv-$dt-pad4 configs/gemv.json --dtype $dt --op TT --set VEC=8 \
    --lda +4 --ldb +4 --ldc +4 --shapes 1x33x5,17x1x5,3x1000x1000,1000x4x1000
  run_verify "gemv $dt batch 3, op NT" gemv-$dt-batch configs/gemv.json --dtype $dt --batch 3 --op NT --set VEC=8 --shapes 1x33x5,17x1x5,5x1025x97,1000x3x1024
  for op in NN TN; do
    run_verify "gemv $dt SPLITK 5 mode 1 (FP32 partials in W) op $op" gemv-$dt-sk1-$op configs/gemv.json --dtype $dt --op "$op" \
      --set VEC=8 --set SPLITK=5 --set SPLITK_MODE=1 --shapes 1x1x1,17x1x40,3x1000x999,1000x4x999,2x300x65537
  done
done
sanitize_verify "gemv bf16 split-K through W, VEC 8" gemv-bf16-san "memcheck" configs/gemv.json --dtype bf16 --set VEC=8 \
  --set SPLITK=5 --set SPLITK_MODE=1 --shapes 3x1000x99,1000x4x99,128x1x8195
sanitize_verify "gemv f16 op TN, KW 8 (FP32 sums in shared memory)" gemv-f16-san "memcheck racecheck" configs/gemv.json --dtype f16 \
  --op TN --set VEC=8 --shapes 3x1000x99,1000x4x99,66x130x34
fi

if want sm90a; then
echo "== sm_90a: a template that requires the architecture-specific target"
ENGINE_TEMPLATES=$TPL_FIX run_verify "verify --arch sm_90a" sm90a tests/configs/gpu/needs_sm90a.json --arch sm_90a \
  --shapes 1x1x1,64x64x64,127x129x131
$FIX $E verify tests/configs/gpu/needs_sm90a.json --arch sm_90 --shapes 64x64x64 >"$LOG/sm90a-refused.txt" 2>&1
check_says "the same template for --arch sm_90 is refused (exit 2), naming the rule" $? 2 "$LOG/sm90a-refused.txt" \
  '\(target sm_90\): .*only on sm_90a'
run_verify "any template runs as sm_90a" sm90a-any configs/warptile_db.json --arch sm_90a --shapes 127x129x131
# Without --arch a template that declares "arch_specific" is built for sm_90a on an sm_90 GPU
# (arch_for_template, setup.h): the sm_90a-only template runs, so wisdom and --auto can choose such
# configs; every other template stays sm_90 (tests/tc32.sh).
if [ "$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1)" = 9.0 ]; then
  ENGINE_TEMPLATES=$TPL_FIX run_verify "sm_90a-only template without --arch on an sm_90 GPU" sm90a-auto \
    tests/configs/gpu/needs_sm90a.json --shapes 64x64x64
  # tc32's layouts (SWAP): A stored K x M (transposed by the split of A), B stored N x K (its
  # fragments by ldmatrix from rows of K), leading dimensions aligned (+8: 16-byte copies) and
  # unaligned (+1: A and B copied packed first by PACK_LD, the shipped configs; with PACK_LD 0,
  # 4-byte copies); strided batches.
  for op in NT TN TT; do
    run_verify "tc32_3x and tc32_1x op $op" "sm90a-tc32-$op" configs/tc32_3x.json configs/tc32_1x.json --op "$op" \
      --shapes 1x1x1,17x33x5,127x129x131,130x66x72,256x256x64,1000x1001x999
  done
  run_verify "tc32_3x and tc32_1x, lda/ldb/ldc + 8" sm90a-tc32-ld8 configs/tc32_3x.json configs/tc32_1x.json \
    --lda +8 --ldb +8 --ldc +8 --shapes 17x33x5,130x66x72,1000x1001x1000
  run_verify "tc32_3x op TT, lda/ldb/ldc + 8" sm90a-tc32-tt8 configs/tc32_3x.json --op TT --lda +8 --ldb +8 --ldc +8 \
    --shapes 130x66x72,1000x1001x1000
  for op in NN NT TN; do
    run_verify "tc32_3x op $op, lda/ldb/ldc + 1 (PACK_LD: copied packed first)" "sm90a-tc32-ld1-$op" configs/tc32_3x.json \
      --op "$op" --lda +1 --ldb +1 --ldc +1 --shapes 17x33x5,130x66x72,256x256x64
  done
  run_verify "tc32_3x op TT, TSPLIT 1 (A^T's split in 4 x 4 blocks, TN's default)" sm90a-tc32-ts1 configs/tc32_3x.json \
    --op TT --set TSPLIT=1 --shapes 17x33x5,130x66x72,256x256x64
  run_verify "tc32_3x op TT, lda/ldb/ldc + 1, PACK_LD 0 (4-byte copies)" sm90a-tc32-ld1-pl0 configs/tc32_3x.json --op TT \
    --set PACK_LD=0 --lda +1 --ldb +1 --ldc +1 --shapes 17x33x5,130x66x72
  run_verify "tc32_3x op TT, a strided batch of 3" sm90a-tc32-b configs/tc32_3x.json --op TT --batch 3 \
    --shapes 17x33x5,130x66x72
  # Split-K (SPLITK > 1): each split's slice of K as a GEMM of its own, in every op; K cut unevenly
  # (1000: 32 k-tiles in splits of 11, 11, 10; 4100 ends in a partial k-tile), K under one k-tile,
  # and in modes 1 and 2 splits with no k-tiles (17x33x40: 2 k-tiles in 4 splits); the SWAP 0 path
  # (tc32_3x_areg); rows off 16 bytes (PACK_LD is off under split-K: 4-byte copies).
  for op in NN NT TN TT; do
    run_verify "tc32_3x split-K 3, op $op" "sm90a-tc32-sk-$op" configs/tc32_3x.json --op "$op" --set SPLITK=3 \
      --shapes 1x1x1,17x33x5,130x66x1000,64x256x4100
  done
  for mode in 1 2; do
    run_verify "tc32_3x split-K 4, mode $mode, op TN (empty splits at 17x33x40)" "sm90a-tc32-skm$mode" configs/tc32_3x.json \
      --op TN --set SPLITK=4 --set SPLITK_MODE=$mode --shapes 17x33x40,130x66x1000,64x256x4100
  done
  run_verify "tc32_3x_areg (SWAP 0) split-K 3" sm90a-tc32-sk-areg configs/tc32_3x_areg.json --set SPLITK=3 \
    --shapes 17x33x5,130x66x1000,64x256x4100
  run_verify "tc32_3x split-K 3 at lda/ldb + 1 (4-byte copies)" sm90a-tc32-sk-ld1 configs/tc32_3x.json --set SPLITK=3 \
    --lda +1 --ldb +1 --shapes 17x33x5,130x66x1000
  sanitize_verify "of tc32_3x split-K 3, mode 2, op NT" tc32-sk "memcheck racecheck" \
    configs/tc32_3x.json --op NT --set SPLITK=3 --set SPLITK_MODE=2 --shapes 130x66x1000
  sanitize_verify "of tc32_3x op TT (split_a_t, ldmatrix) at lda + 8" tc32-tt "memcheck racecheck" \
    configs/tc32_3x.json --op TT --lda +8 --ldb +8 --ldc +8 --shapes 130x66x72
  sanitize_verify "of tc32_3x op TN with PACK_LD at lda + 1" tc32-pl "memcheck racecheck" \
    configs/tc32_3x.json --op TN --lda +1 --ldb +1 --ldc +1 --shapes 130x66x72
  # tc32ws (the copy engine's tensor maps, warp-specialised, persistent): every op with its first
  # launches (A and B^T into the workspace) or the copy engine's TF32 copies (tc32ws_1x_nt at NT),
  # rows off 16 bytes (B packed first under BREG 1), strided batches, split-K as work items.
  WS="configs/tc32ws_3x.json configs/tc32ws_3x_rs.json configs/tc32ws_1x.json configs/tc32ws_1x_nt.json"
  for op in NN NT TN TT; do
    run_verify "tc32ws op $op" "sm90a-tc32ws-$op" $WS --op "$op" --shapes 1x1x1,17x33x5,127x129x131,1000x1001x999,1x4096x1100
  done
  run_verify "tc32ws op NT, lda + 4, ldb + 1, ldc + 3" sm90a-tc32ws-ld $WS --op NT --lda +4 --ldb +1 --ldc +3 \
    --shapes 17x33x5,127x129x132
  run_verify "tc32ws, a strided batch of 3" sm90a-tc32ws-b $WS --batch 3 --shapes 17x33x5,127x129x131
  run_verify "tc32ws split-K 4" sm90a-tc32ws-sk configs/tc32ws_3x.json configs/tc32ws_3x_rs.json --set SPLITK=4 \
    --shapes 1x64x4096,127x129x1310,128x4096x1100
  sanitize_verify "of tc32ws_3x and tc32ws_1x_nt op NT" tc32ws "memcheck racecheck" \
    configs/tc32ws_3x.json configs/tc32ws_1x_nt.json --op NT --shapes 127x129x132
  # hws (BF16/FP16 on wgmma, the same pipeline): every op as stored, rows packed first where the copy
  # engine cannot read them, batches, split-K's FP32 partials, turns (PINGPONG: a ring a warpgroup),
  # each at a shape with several work items a block (2048x2048x1024, 8x4096x4096 split 8).
  HW="configs/hws_bf16.json configs/hws_f16.json"
  for op in NN NT TN TT; do
    run_verify "hws op $op" "sm90a-hws-$op" $HW --op "$op" --shapes 1x1x1,17x33x5,127x129x131,1000x1001x999,2048x2048x1024
  done
  run_verify "hws, rows + 1 / + 8 / + 3, a strided batch of 3" sm90a-hws-ld $HW --op TT --lda +1 --ldb +8 --ldc +3 --batch 3 \
    --shapes 17x33x5,127x129x131
  run_verify "hws split-K 8 (FP32 partials)" sm90a-hws-sk configs/hws_bf16.json --set SPLITK=8 --set BN=128 --op NT \
    --shapes 1x64x4096,8x4096x4096,127x129x1310
  run_verify "hws turns (PINGPONG), with split-K" sm90a-hws-pp $HW --set PINGPONG=1 --set BN=128 --op TN \
    --shapes 127x129x131,2048x2048x1024,4096x4096x4096
  run_verify "hws turns and split-K 7" sm90a-hws-pp-sk configs/hws_bf16.json --set PINGPONG=1 --set BN=128 --set SPLITK=7 \
    --op NT --shapes 8x4096x4096,512x4096x4096,33x65x999
  sanitize_verify "of hws op TN, split-K 4 and turns" hws "memcheck racecheck" \
    configs/hws_bf16.json --op TN --set PINGPONG=1 --set BN=128 --set SPLITK=4 --shapes 300x260x520
  # ZITEMS: a batch's products as the items of one persistent loop (the batch's count passed after
  # the tensor maps), in every op, with turns and each epilogue, batches of 5 to 64 at odd shapes;
  # the default (2) runs it at every batch without split-K, so ZITEMS 0 keeps a check of its own.
  run_verify "hws ZITEMS 0 (a grid z of products), batches, A's rows + 1 (packed first)" sm90a-hws-zi0 $HW \
    --set ZITEMS=0 --op NT --lda +1 --batch 7 --shapes 17x33x5,127x129x131,300x260x520
  for op in NN NT TN TT; do
    # 300x260: 6 tiles a product, 288 items: blocks take several, across products
    run_verify "hws ZITEMS op $op, batches" "sm90a-hws-zi-$op" $HW --set ZITEMS=1 --op "$op" --batch 48 \
      --shapes 17x33x5,127x129x131,300x260x520
  done
  run_verify "hws ZITEMS with turns and the staged epilogues, a batch of 64" sm90a-hws-zi-pp configs/hws_bf16.json \
    configs/hws_f16.json --set ZITEMS=1 --set PINGPONG=1 --set BN=128 --set EPI=1 --op NT --batch 64 \
    --shapes 1024x1024x64,255x257x63
  run_verify "hws ZITEMS, the copy engine's store (EPI 2), rows + 8" sm90a-hws-zi-tma configs/hws_f16.json --set ZITEMS=1 \
    --set EPI=2 --op NN --ldc +8 --batch 5 --shapes 1000x1001x999,1000x1000x999,128x128x64
  sanitize_verify "of hws ZITEMS with turns, a batch of 40 (360 items)" hws-zi "memcheck racecheck" \
    configs/hws_bf16.json --set ZITEMS=1 --set PINGPONG=1 --set BN=128 --op NT --batch 40 --shapes 300x260x130
fi
fi
