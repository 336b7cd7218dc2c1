# tests/gpu/layouts.sh — sourced by tests/gpu.sh (its helpers, $E, $LOG and want() in scope): transposes, leading dimensions, strided batches (layouts), and the loaders' transposed paths (layouts-tb).
# shellcheck shell=bash

if want layouts; then
echo "== layouts: transposes, leading dimensions and strided batches (engine/core/layout.h; inputs padded with NaN)"
LSH=1x1x1,17x33x5,127x129x131,1000x1001x999
for op in NN NT TN TT; do
  run_verify "naive f32 op $op" "layouts-naive-$op" configs/naive.json --op "$op" --shapes $LSH
  run_verify "naive f64 op $op" "layouts-naive64-$op" configs/naive.json --dtype f64 --op "$op" --shapes $LSH
done
for pad in 1 8 64; do
  run_verify "naive op TT, lda/ldb/ldc padded by $pad" "layouts-pad$pad" configs/naive.json --op TT \
    --lda +$pad --ldb +$pad --ldc +$pad --shapes 17x33x5,127x129x131
done
run_verify "naive batch 3, packed strides, op NT" layouts-batch configs/naive.json --batch 3 --op NT --shapes 1x1x1,17x33x5,127x129x131
# One shape per run: a stride must clear every shape's span (127*131 A, 131*129 B, 127*129 C).
run_verify "naive batch 3, padded strides, op TN" layouts-batch-pad configs/naive.json --batch 3 --op TN \
  --stride-a 17000 --stride-b 17001 --stride-c 17002 --shapes 127x129x131
run_verify "naive batch 3, one A for all (stride 0), ldc padded" layouts-batch-bcast configs/naive.json --batch 3 \
  --stride-a 0 --ldc +8 --shapes 127x129x131
run_verify "naive f64 batch 3, op TT, lda padded" layouts-batch64 configs/naive.json --dtype f64 --batch 3 --op TT \
  --lda +1 --shapes 17x33x5,127x129x131
sanitize_verify "naive op TN, padded, batch 3" layouts-san "memcheck" configs/naive.json --op TN --lda +1 --ldb +8 \
  --ldc +1 --batch 3 --shapes 17x33x5
# A bench row carries the layout, and cuBLAS ran in it (its row is there, timed).
$E bench configs/naive.json --op NT --lda +1 --batch 2 --m 64 --n 64 --k 64 --runs 3 --format jsonl \
  >"$LOG/layouts-bench.jsonl" 2>"$LOG/layouts-bench.err"
rc=$?
nok=$(grep -c '"config":"naive".*"op":"NT","lda":65,"ldb":64,"ldc":64,"batch":2,"status":"ok"' "$LOG/layouts-bench.jsonl")
ncub=$(grep -c '"config":"cublas".*"op":"NT","lda":65,"ldb":64,"ldc":64,"batch":2,"status":"ok".*cublasGemmStridedBatchedEx' "$LOG/layouts-bench.jsonl")
[ $rc = 0 ] && [ "$nok" = 1 ] && [ "$ncub" = 1 ] && pass "bench rows carry op, lda, ldb, ldc, batch (naive and cuBLAS)" ||
  fail "bench rows carry the layout (exit $rc; $nok naive rows, $ncub cuBLAS rows)" "$(head -5 "$LOG/layouts-bench.jsonl" "$LOG/layouts-bench.err")"
# The tile templates: strided batches of packed NN products on grid z, at odd shapes (guarded tiles).
for c in warptile_db gmem_vec; do
  run_verify "$c batch 3, packed strides" "layouts-batch-$c" configs/$c.json --batch 3 --shapes 1x1x1,17x33x5,127x129x131,1000x1001x999
done
run_verify "dgemm_dmma batch 3, packed strides" layouts-batch-dmma configs/dgemm_dmma.json --batch 3 --shapes 1x1x1,17x33x5,127x129x131,1000x1001x999
run_verify "warptile_db f64 batch 3, packed strides" layouts-batch-wt64 configs/warptile_db.json --dtype f64 --batch 3 --shapes 17x33x5,127x129x131
for c in warptile_db dgemm_dmma gmem_vec; do
  run_verify "$c batch 3, padded strides" "layouts-batchpad-$c" configs/$c.json --batch 3 --stride-a 17000 \
    --stride-b 17004 --stride-c 17008 --shapes 127x129x131
done
run_verify "warptile_db batch 4, one B for all (stride 0)" layouts-bcast-wt configs/warptile_db.json --batch 4 --stride-b 0 --shapes 127x129x131
sanitize_verify "warptile_db batch 3" layouts-san-wt "memcheck" configs/warptile_db.json --batch 3 --shapes 127x129x131
# Transposes and padded rows in the tile templates (tile_pipeline.cuh): every op at odd shapes
# (partial tiles, rows not aligned to a vector) and 1000x1001x999, both betas (verify runs 0 and
# -0.5), in each dtype a template takes; split-K and stream-K in every op.
for op in NN NT TN TT; do
  run_verify "warptile_db f32 op $op" "layouts-wt-$op" configs/warptile_db.json --op "$op" --shapes $LSH
  run_verify "warptile_db f64 op $op" "layouts-wt64-$op" configs/warptile_db.json --dtype f64 --op "$op" --shapes $LSH
  run_verify "dgemm_dmma op $op" "layouts-dmma-$op" configs/dgemm_dmma.json --op "$op" --shapes $LSH
  run_verify "gmem_vec op $op" "layouts-gv-$op" configs/gmem_vec.json --op "$op" --shapes $LSH
  run_verify "warptile_splitk op $op" "layouts-wsk-$op" configs/warptile_splitk.json --op "$op" \
    --shapes 17x33x5,127x129x131,65x33x4097
  run_verify "dgemm_dmma_splitk op $op" "layouts-dsk-$op" configs/dgemm_dmma_splitk.json --op "$op" \
    --shapes 17x33x5,65x33x4097
  run_verify "warptile_streamk op $op" "layouts-wstk-$op" configs/warptile_streamk.json --op "$op" \
    --shapes 17x33x5,127x129x131,1000x1001x999
done
# The other paths of the loaders, transposed: warptile's single buffer, staggered halves, cp.async
# (A along M by 16-byte copies into its k-major tile), B by cp.async, loads ahead, C through shared
# memory; blocktile's k-major A, linearized B, cp.async stages; DMMA without cp.async.
for op in TT; do
  for c in sb10_warptiling sb11_double_buffer sb12_double_buffer2 bank_pad_vec sb07_linearize multibuf_b3; do
    run_verify "$c op $op" "layouts-$c-$op" configs/$c.json --op "$op" --shapes 17x33x5,127x129x131
  done
  run_verify "warptile_db B_ASYNC 1 op $op" "layouts-wtba-$op" configs/warptile_db.json --set B_ASYNC=1 --op "$op" \
    --shapes 17x33x5,127x129x131
  run_verify "warptile_db LOAD_AHEAD 1 C_STAGE 1 op $op" "layouts-wtla-$op" configs/warptile_db.json \
    --set LOAD_AHEAD=1 --set C_STAGE=1 --op "$op" --shapes 17x33x5,127x129x131
  run_verify "dgemm_dmma ASYNC 0 op $op" "layouts-dmma0-$op" configs/dgemm_dmma.json --set ASYNC=0 --set STAGES=2 \
    --op "$op" --shapes 17x33x5,127x129x131
done
# Leading dimensions padded by 1 (every row unaligned: scalar loads and stores), 8 and 64.
for pad in 1 8 64; do
  for c in warptile_db dgemm_dmma gmem_vec; do
    run_verify "$c op TN, lda/ldb/ldc padded by $pad" "layouts-pad$pad-$c" configs/$c.json --op TN \
      --lda +$pad --ldb +$pad --ldc +$pad --shapes 17x33x5,127x129x131,1000x1001x999
  done
  run_verify "warptile_db op NN, lda/ldb padded by $pad, PACK_B 1" "layouts-padpk$pad" configs/warptile_db.json \
    --set PACK_B=1 --lda +$pad --ldb +$pad --ldc +$pad --shapes 17x33x5,127x129x131
  run_verify "warptile_splitk op NT, lda/ldb padded by $pad" "layouts-padsk$pad" configs/warptile_splitk.json --op NT \
    --lda +$pad --ldb +$pad --shapes 17x33x5,65x33x4097
done
# Batches of transposed products with padded rows and strides.
for c in warptile_db dgemm_dmma gmem_vec; do
  run_verify "$c batch 3, op TT, padded rows and strides" "layouts-batchtt-$c" configs/$c.json --batch 3 --op TT \
    --lda +1 --ldb +8 --ldc +64 --stride-a 17000 --stride-b 17004 --stride-c 30000 --shapes 127x129x131
done
sanitize_verify "warptile_db op TT" layouts-san-wtT "memcheck" configs/warptile_db.json --op TT --shapes 17x33x5,127x129x131
sanitize_verify "dgemm_dmma op NT, padded by 1" layouts-san-dmP "memcheck" configs/dgemm_dmma.json --op NT \
  --lda +1 --ldb +1 --ldc +1 --shapes 17x33x5,127x129x131
# --auto at a non-NN op: the shipped wisdom holds no TT entries for one product (its TT entries are
# 3xTF32 batches'), so the model weighs the NN ones (the explanation says so) and the configs it picks
# run transposed; for FP32 in NT and TN it weighs the development points measured in that op.
for dt in f32 f64; do
  XDG_DATA_HOME=$SHIPPED_ONLY run_verify "verify --auto --op TT --dtype $dt" "layouts-auto-$dt" --auto --explain --op TT \
    --dtype $dt --shapes 127x129x131,1000x1001x999
  grep -q -E "no wisdom entry of op TT (for one product )?at this level.*weighed the NN entries" "$LOG/layouts-auto-$dt.txt" &&
    pass "...its explanation says the NN entries were weighed" ||
    fail "...its explanation says the NN entries were weighed" "$(head -5 "$LOG/layouts-auto-$dt.txt")"
done
for op in NT TN; do
  XDG_DATA_HOME=$SHIPPED_ONLY run_verify "verify --auto --op $op --dtype f32" "layouts-auto-$op" --auto --explain --op $op \
    --dtype f32 --shapes 127x129x131,1000x1001x999
  # The choice names its entry (a development point: dev-seeds.json:LINE) and the nearest entries
  # weighed, with no note of a fallback to NN's.
  if grep -q "dev-seeds.json:[0-9]" "$LOG/layouts-auto-$op.txt" && grep -q "nearest entries" "$LOG/layouts-auto-$op.txt" &&
    ! grep -q "weighed the NN entries" "$LOG/layouts-auto-$op.txt"; then
    pass "...it weighs the $op entries (no NN fallback)"
  else
    fail "...it weighs the $op entries (no NN fallback)" "$(grep -m3 -E "weighed|auto:" "$LOG/layouts-auto-$op.txt")"
  fi
done
# Split-K and stream-K refuse a padded C (their scale_c, reduce and workspace index C packed), and
# split-K a batch, by their declared rules; nothing runs.
for c in warptile_splitk warptile_streamk dgemm_dmma_splitk; do
  $E verify configs/$c.json --ldc +1 --shapes 17x33x5 >"$LOG/layouts-refuse-$c.txt" 2>&1
  check_says "$c refuses a padded ldc by its declared rule" $? 2 "$LOG/layouts-refuse-$c.txt" \
    "shape 17x33x5 op NN lda=5 ldb=33 ldc=34 is refused: template [a-z]+ requires LDC == N \\|\\| "
done
$E verify configs/warptile_splitk.json --batch 2 --shapes 65x33x4097 >"$LOG/layouts-refuse-splitk.txt" 2>&1
check_says "warptile_splitk refuses a batch by its declared rule" $? 2 "$LOG/layouts-refuse-splitk.txt" \
  "requires BATCH == 1 \\|\\| \\(SPLITK == 1 && STREAMK == 0\\)"
fi
# Section layouts-tb (also run by layouts): the switches a transposed B and narrowed rows pick
# (bench/layouts.sh runs it alone before its timings).
if want layouts || want layouts-tb; then
echo "== layouts-tb: transposed B stored n-major (DMMA), padded B^T rows (warptile), deeper pipelines for narrowed rows"
# DMMA's n-major B (B_NMAJOR: f64 with B transposed, Bs[n][k], tile_pipeline.cuh): the layouts
# section's shapes all have an odd K, which narrows B's copies to one element; an even K takes the 16-byte
# copies, with a partial last k-tile (70, 130, 1000: not multiples of BK 16) and whole tiles
# (64^3); ldb padded by 8 (rows aligned, LDP 0); the register-staged path (ASYNC 0) and its scalar
# fallback where the tile's row pitch is odd (PAD_B 1); split-K and stream-K at even K; a deeper
# pipeline for narrowed rows (STAGES_NARROW 4 at ld + 1, and at K odd); FP32's dmma (tc32_sync),
# which keeps Bs[k][n], through the new fragment index; memcheck of the 16-byte path at a partial
# k-tile.
DSH=64x64x64,130x66x70,96x200x130,1000x1001x1000
for op in NT TT; do
  run_verify "dgemm_dmma op $op, even K (n-major B, 16-byte copies)" "layouts-dmmaev-$op" configs/dgemm_dmma.json \
    --op "$op" --shapes $DSH
  run_verify "dgemm_dmma op $op, ld padded by 8, even K" "layouts-dmmaev8-$op" configs/dgemm_dmma.json --op "$op" \
    --lda +8 --ldb +8 --ldc +8 --shapes 130x66x70,1000x1001x1000
  run_verify "dgemm_dmma ASYNC 0 op $op, even K" "layouts-dmmaev0-$op" configs/dgemm_dmma.json --set ASYNC=0 \
    --set STAGES=2 --op "$op" --shapes 64x64x64,130x66x70,96x200x130
  run_verify "dgemm_dmma ASYNC 0 PAD_B 1 op $op (odd tile pitch)" "layouts-dmmapb1-$op" configs/dgemm_dmma.json \
    --set ASYNC=0 --set STAGES=2 --set PAD_B=1 --op "$op" --shapes 17x33x5,130x66x70
  run_verify "dgemm_dmma_splitk op $op, even K" "layouts-dskev-$op" configs/dgemm_dmma_splitk.json --op "$op" \
    --shapes 130x66x70,65x34x4096
  run_verify "dgemm_dmma_streamk op $op, even K" "layouts-dstkev-$op" configs/dgemm_dmma_streamk.json --op "$op" \
    --shapes 130x66x70,1000x1001x1000
  run_verify "tc32_sync op $op" "layouts-tc32-$op" configs/tc32_sync.json --op "$op" --shapes 17x33x5,130x66x72
done
# warptile_db pads B's stored rows by PAD_BT 4 where B is transposed (its config): the other DB
# paths, and the old pitch (PAD_BT 0), at the transposes.
for op in NT TT; do
  run_verify "warptile_db PAD_BT 0 op $op" "layouts-wtpb0-$op" configs/warptile_db.json --set PAD_BT=0 --op "$op" \
    --shapes 17x33x5,127x129x131,256x256x64
  for db in "DB=0" "DB=1" "DB=2 --set PAD_B=4" "B_ASYNC=1"; do
    # shellcheck disable=SC2086
    run_verify "warptile_db $db op $op" "layouts-wtpb-${db%% *}-$op" configs/warptile_db.json --set $db --op "$op" \
      --shapes 17x33x5,127x129x131,256x256x64
  done
done
for op in NN NT TT; do
  run_verify "dgemm_dmma STAGES_NARROW 4 op $op, ld padded by 1" "layouts-dmmasn-$op" configs/dgemm_dmma.json \
    --set STAGES_NARROW=4 --op "$op" --lda +1 --ldb +1 --ldc +1 --shapes 17x33x5,127x129x131,1000x1001x999
done
run_verify "dgemm_dmma STAGES_NARROW 4, K odd, packed" layouts-dmmasn-k configs/dgemm_dmma.json --set STAGES_NARROW=4 \
  --shapes 130x66x71,1000x1001x999
# ODD_LD: the 2-element chunks whose source is 16-byte aligned copied whole where rows are
# narrowed (odd ld, or odd K or N packed), A's and B^T's rows dealt by parity; in every op, at
# partial tiles, with batches whose odd strides move each product's alignment, and under memcheck.
ODD=(--set ODD_LD=1 --set MINB_ODD=3)
for op in NN NT TN TT; do
  run_verify "dgemm_dmma ODD_LD op $op, ld padded by 1" "layouts-dmmaodd-$op" configs/dgemm_dmma.json "${ODD[@]}" \
    --op "$op" --lda +1 --ldb +1 --ldc +1 --shapes 17x33x5,127x129x131,1000x1001x999,256x192x160
  run_verify "dgemm_dmma ODD_LD op $op, K and N odd, packed" "layouts-dmmaoddk-$op" configs/dgemm_dmma.json \
    "${ODD[@]}" --op "$op" --shapes 130x67x71,1000x1001x999,128x129x127
done
run_verify "dgemm_dmma ODD_LD STAGES_NARROW 4 op NN, ld padded by 1" layouts-dmmaoddsn configs/dgemm_dmma.json \
  "${ODD[@]}" --set STAGES_NARROW=4 --lda +1 --ldb +1 --ldc +1 --shapes 127x129x131,1000x1001x999
run_verify "dgemm_dmma ODD_LD batch 3, op TT, odd strides" layouts-dmmaoddb configs/dgemm_dmma.json "${ODD[@]}" \
  --batch 3 --op TT --lda +1 --ldb +3 --ldc +1 --stride-a 17001 --stride-b 17005 --stride-c 30000 --shapes 127x129x131
# ROWCOPY: a k-tile's chunks along stored rows dealt by rows (tile_pipeline.cuh, async_rows): the
# default's TN rule (ROW_DEAL 2 on wisdom's 128 x 64 tile), and both operands dealt (3), in every op,
# at partial tiles in M, N and K, ld + 8, a batch, and under memcheck at TN.
RT=(--set BM=128 --set MMA=16816 --set WM=64)
for op in NN NT TN TT; do
  run_verify "dgemm_dmma 128x64 op $op (ROWCOPY 4: B's rows at TN)" "layouts-dmmarow-$op" configs/dgemm_dmma.json \
    "${RT[@]}" --op "$op" --shapes 17x33x5,127x129x131,130x66x70,1000x1001x999
  run_verify "dgemm_dmma 128x64 ROWCOPY 3 op $op" "layouts-dmmarow3-$op" configs/dgemm_dmma.json "${RT[@]}" \
    --set ROWCOPY=3 --op "$op" --shapes 17x33x5,127x129x131,130x66x70
done
run_verify "dgemm_dmma ROWCOPY 3 op TN, ld padded by 8, batch 3" layouts-dmmarowb configs/dgemm_dmma.json \
  --set ROWCOPY=3 --op TN --lda +8 --ldb +8 --ldc +8 --batch 3 --shapes 127x129x131,96x200x130
sanitize_verify "dgemm_dmma 128x64 op TN (ROW_DEAL 2)" layouts-san-dmR "memcheck" configs/dgemm_dmma.json \
  "${RT[@]}" --op TN --shapes 127x129x131,130x66x70
# PACK_LD: A and B copied packed into the workspace first where ld + 1 leaves their rows unaligned
# (rows of even length only: at 17x34x6 op TN/TT A's rows along M are odd, so only B is packed), at
# whole and partial tiles, and under memcheck.
for op in NN NT TN TT; do
  run_verify "dgemm_dmma PACK_LD op $op, ld padded by 1" "layouts-dmmapk-$op" configs/dgemm_dmma.json \
    --set PACK_LD=1 --op "$op" --lda +1 --ldb +1 --ldc +1 --shapes 17x34x6,64x64x64,130x66x70,1000x1002x1000
done
sanitize_verify "dgemm_dmma PACK_LD op TT, ld padded by 1" layouts-san-dmP "memcheck" configs/dgemm_dmma.json \
  --set PACK_LD=1 --op TT --lda +1 --ldb +1 --ldc +1 --shapes 130x66x70,256x192x160
# memcheck: in op NN B's rows along N end inside the last tile (N 129), in op TN A's along M (M 127)
# as well; the first run caught a 16-byte copy past B's end at NN (tile_pipeline.cuh, async_rchunk_odd).
for op in NN TN; do
  sanitize_verify "dgemm_dmma ODD_LD op $op, ld padded by 1" "layouts-san-dmO-$op" "memcheck" \
    configs/dgemm_dmma.json "${ODD[@]}" --op $op --lda +1 --ldb +1 --ldc +1 --shapes 127x129x131,256x192x160
done
sanitize_verify "dgemm_dmma op NT, even K" layouts-san-dmE "memcheck" configs/dgemm_dmma.json --op NT \
  --shapes 130x66x70,96x200x130
fi
