#!/usr/bin/env bash
# Session 23's device calls, with the prebuilt build/ carried (engine, libengine.so) and build/s23
# beside it, each a kernels_src: ks-before/ (71cee90's: warptile's stage reading C one element in
# flight, dmma's own chunked copy), ks-pad4/ (the shared store_staged, dmma's staged rows BN + 4
# apart: this tree in calls one and two), ks-pad8/ (the same at BN + 8: this tree in call three),
# ks-4ffa/ (4ffa152's) and ks-grp/ (grouped reads in dmma by row only). Data: bench/data/h200-s23-*.
# Everything under build/s23-CALL, packed into s23-CALL.tgz there; it and summary.txt go to $OUT.
#   CALL=one  the shared staged epilogue (store_staged, gemm_common.cuh): make test-gpu's interior
#             (warptile's C_STAGE, sanitizers) and skinny (dmma's) sections; warptile's tiles at odd
#             N, K <= 1024, beta 0 and 1, before -> after, 7 runs; fresh seed 52845291's f32 shapes
#             of odd N that --auto gives a warptile config, before -> after, beta 0 and 1, 5 runs
#   CALL=two  dmma's staged shapes (odd N, K <= 1024, C >= 2 MiB) under --auto with ks-before, this
#             tree (BN + 4) and ks-pad8, beta 0 and 1; FP32 at odd N beside N + 1 (--auto, short K:
#             does the tensor-core epilogue lose at odd rows as DMMA's did?); Nsight Compute on FP64's
#             1026x6144x128 (beta 0, 0.74x cuBLAS, N even); the regression guard, CHECK=1
#   CALL=three after dmma's staged rows moved to BN + 8: the skinny checks, 3xTF32 staged, fresh seed
#             64019283's f32 shapes as in one, warptile at odd N, DMMA at short K and even N (below)
#   CALL=four grouped reads of C in the unstaged epilogues: LU updates against 4ffa152 (ks-4ffa),
#             warptile at beta 1 and a fresh f64 seed at beta 1 against 71cee90 (ab), the FP64
#             workload, the guard (below)
#   CALL=five the grouped reads at beta 0 (an A/B in one run), then make test-gpu's sections over the
#             epilogues (below). dmma's grouped reads were reverted after it (narrow_m144 5.3% slower)
# Exit: 0; 2 bad input. A step that fails is logged and the next one runs.
set -u
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
call_begin s23 "$@"
B="$PWD/build/s23"
# wt_shapes SEED: SEED's f32 shapes with N % 4 != 0 that --auto gives a CUDA-core tiled config.
wt_shapes() {
  "$E" pick --dtype f32 --shapes "$(bash bench/random_shapes.sh "$1" 60 | paste -sd, -)" --format jsonl | python3 -c '
import json, sys
tiled = ("warptile_db", "warptile_splitk", "warptile_streamk", "sb10_warptiling", "sb11_double_buffer",
         "sb12_double_buffer2", "dgemm_simt")
s = [r["shape"] for r in map(json.loads, sys.stdin)
     if r["config"].split("/")[-1][:-5] in tiled and int(r["shape"].split("x")[1]) % 4]
print(",".join(s))'
}
# ab NAME SECONDS SHAPES ARGS...: --auto at SHAPES with ks-before's templates then this tree's.
ab() {
  local n=$1 s=$2 sh=$3
  shift 3
  run "$n-before" "$s" env ENGINE_TEMPLATES="$B/ks-before" "$E" bench --auto "$@" --shapes "$sh" --format jsonl
  run "$n-after" "$s" "$E" bench --auto "$@" --shapes "$sh" --format jsonl
}
ODD=4095x4097x128,8192x3001x64,2048x8191x256,6000x5001x32,3001x3001x33,12001x1025x96
EVEN=4095x4096x128,8192x3000x64,2048x8192x256,6000x5000x32,3001x3000x33,12001x1024x96
case "$CALL" in
one)
  "$E" info >"$OUT/info.txt" 2>&1
  run checks 220 env GPU_LOG_DIR="$OUT/gpu-logs" GPU_ONLY="interior skinny" bash tests/gpu.sh
  grep -E '^  (FAIL|SKIP) |passed, ' "$OUT/checks.log" >>"$OUT/summary.txt"
  WT=2251x11601x4,2251x11601x128,4095x4097x128,4095x4097x1024,3001x3001x33
  for beta in 0 1; do
    for t in before after; do
      [ $t = before ] && tpl="$B/ks-before" || tpl="$PWD/kernels_src"
      run "wt-$t-b$beta" 40 env ENGINE_TEMPLATES="$tpl" "$E" bench configs/warptile_db.json configs/sb10_warptiling.json \
        --beta $beta --shapes $WT --runs 7 --format jsonl
      run "wt64-$t-b$beta" 30 env ENGINE_TEMPLATES="$tpl" "$E" bench configs/warptile_splitk.json --set BM=64 --set BN=64 \
        --set BK=16 --set WN=32 --set WNITER=1 --set TM=2 --set TN=4 --set THREADS=128 --set MINB=4 --set SPLITK=1 \
        --beta $beta --shapes $WT --runs 7 --format jsonl
    done
  done
  sh=$(wt_shapes 52845291)
  log "seed 52845291: $sh"
  for beta in 0 1; do ab "seed-b$beta" 50 "$sh" --dtype f32 --beta $beta --runs 5; done
  ;;
two)
  D=4095x4097x16,13505x4569x128,8190x7361x128,5122x10369x5,2447x3451x128,8055x771x66,1025x4033x729,9984x735x128,4352x817x481,3001x3001x33
  for beta in 0 1; do
    ab "dmma-b$beta" 45 $D --dtype f64 --beta $beta --runs 5
    run "dmma-pad8-b$beta" 45 env ENGINE_TEMPLATES="$B/ks-pad8" "$E" bench --auto --dtype f64 --beta $beta --shapes $D --runs 5 \
      --format jsonl
  done
  run f32-odd 40 "$E" bench --auto --dtype f32 --shapes $ODD --runs 5 --format jsonl
  run f32-even 40 "$E" bench --auto --dtype f32 --shapes $EVEN --runs 5 --format jsonl
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  read -r base sets < <("$E" pick --dtype f64 --shapes 1026x6144x128 --format jsonl | python3 -c '
import json, sys
r = json.loads(sys.stdin.readline())
print(r["config"], " ".join("--set %s=%s" % kv for kv in (r.get("set") or {}).items()))')
  log "prof 1026x6144x128: $base $sets"
  # shellcheck disable=SC2086
  run prof 90 "$NCU" --clock-control none --target-processes all --kernel-name "regex:.*gemm.*" --launch-count 6 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    --section WarpStateStats --section SchedulerStats \
    "$E" bench "$base" $sets --dtype f64 --m 1026 --n 6144 --k 128 --runs 1 --iters 1 --warmup 0
  run regress 240 env OUT="$OUT/regress" CHECK=1 bash bench/regress.sh
  tail -3 "$OUT/regress.log" >>"$OUT/summary.txt"
  ;;
three)
  # After dmma's staged rows moved to BN + 8 (ks-pad4 holds them at BN + 4): make test-gpu's skinny
  # section; 3xTF32 dmma staged at odd N, BN + 4 -> BN + 8; a fresh seed's f32 shapes as in one; what
  # an odd N costs warptile's 64 x 64 tile at beta 0 (B's loads narrowed: PACK_B 2, B_ASYNC 2, the
  # stage off); DMMA at short K and even N, beta 0 (cuBLAS runs 64x64x16 in 4 stages there, Nsight
  # Compute in call two): the shipped tile with 4 stages, without the supertile's idle blocks, both.
  run checks 200 env GPU_LOG_DIR="$OUT/gpu-logs" GPU_ONLY=skinny bash tests/gpu.sh
  grep -E '^  (FAIL|SKIP) |passed, ' "$OUT/checks.log" >>"$OUT/summary.txt"
  for t in pad4 pad8; do
    [ $t = pad4 ] && tpl="$B/ks-pad4" || tpl="$PWD/kernels_src"
    for beta in 0 1; do
      run "tf32-$t-b$beta" 30 env ENGINE_TEMPLATES="$tpl" "$E" bench configs/dgemm_pipelined.json --dtype f32 --beta $beta \
        --shapes 4095x4097x128,2251x11601x128,8190x7361x64 --runs 5 --format jsonl
    done
  done
  sh=$(wt_shapes 64019283)
  log "seed 64019283: $sh"
  for beta in 0 1; do ab "seed-b$beta" 40 "$sh" --dtype f32 --beta $beta --runs 5; done
  W64="--set BM=64 --set BN=64 --set BK=16 --set WN=32 --set WNITER=1 --set TM=2 --set TN=4 --set THREADS=128 --set MINB=4 --set SPLITK=1"
  for v in "base:" "packb2:--set PACK_B=2" "basync2:--set B_ASYNC=2" "cs0:--set C_STAGE=0"; do
    IFS=: read -r n set <<<"$v"
    # shellcheck disable=SC2086
    run "w64-$n" 30 "$E" bench configs/warptile_splitk.json $W64 $set \
      --shapes 6000x5001x32,3001x3001x33,8307x6383x31,1152x190x67,6000x5000x32 --runs 5 --format jsonl
  done
  S=1026x6144x128,2050x8192x64,1026x12288x256,4100x6144x96,2048x2048x128
  for v in "base:" "st4:--set STAGES=4" "sup0:--set SUPER=0" "st4sup0:--set STAGES=4 --set SUPER=0"; do
    IFS=: read -r n set <<<"$v"
    # shellcheck disable=SC2086
    run "d-$n" 30 "$E" bench configs/dgemm_dmma.json $set --dtype f64 --shapes $S --runs 5 --format jsonl
  done
  run d-auto 30 "$E" bench --auto --dtype f64 --shapes $S --runs 5 --format jsonl
  ;;
four)
  # Grouped reads of C in the unstaged epilogues (put_c: a row's C read before any of it is stored;
  # dmma by instruction tile, warptile by row): the LU updates of the FP64 workloads (beta 1, alpha
  # -1, NN and NT; lu_f64 designed on, factor_judge_f64 not), 5 runs, against 4ffa152's templates
  # (build/s23/ks-4ffa) and ks-grp (dmma by row only); through ab, so against 71cee90's (ks-before:
  # the seed's staged shapes also carry BN + 8), warptile at beta 1 (even N, and odd N where the
  # stage is off) and a fresh seed (46372819) in f64 at beta 1; bench/workload.py at
  # factor_judge_f64 (never tuned on) against ks-4ffa; the regression guard, CHECK=1.
  for op in NN NT; do
    sh=$(lu_shapes $op)
    run "lu-$op-before" 40 env ENGINE_TEMPLATES="$B/ks-4ffa" "$E" bench --auto --dtype f64 --op $op --alpha -1 --beta 1 \
      --shapes "$sh" --runs 5 --format jsonl
    run "lu-$op-grp" 40 env ENGINE_TEMPLATES="$B/ks-grp" "$E" bench --auto --dtype f64 --op $op --alpha -1 --beta 1 \
      --shapes "$sh" --runs 5 --format jsonl
    run "lu-$op-after" 40 "$E" bench --auto --dtype f64 --op $op --alpha -1 --beta 1 --shapes "$sh" --runs 5 --format jsonl
  done
  W=4096x4096x128,4096x4096x1024,2048x2048x2048,1027x999x2048,359x907x258,511x254x61,3000x3000x33
  ab wt-b1 40 $W --dtype f32 --beta 1 --runs 5
  sh=$(bash bench/random_shapes.sh 46372819 60 | paste -sd, -)
  ab seed-f64-b1 70 "$sh" --dtype f64 --beta 1 --runs 5
  f=bench/workloads/judge/factor_judge_f64.json
  run wl-before 80 env ENGINE_TEMPLATES="$B/ks-4ffa" python3 bench/workload.py --out "$OUT/wl-before.jsonl" $f
  run wl-after 80 python3 bench/workload.py --out "$OUT/wl-after.jsonl" $f
  run regress 120 env OUT="$OUT/regress" CHECK=1 bash bench/regress.sh
  tail -1 "$OUT/regress.log" >>"$OUT/summary.txt"
  ;;
five)
  # The grouped reads at beta 0 (the guard's rows of dmma ran 1-4.8% lower in call four, where gemv,
  # whose PTX is unchanged, ran 2.6% lower): the 15 configs whose PTX at 2048^3 changed, 4ffa152's
  # templates and this tree's, alternated twice, 7 runs; then make test-gpu's interior (warptile's
  # epilogues, every EDGE), slicek, streamk, splitk and skinny (dmma's) sections; verify runs beta 0
  # and beta != 0.
  CF="configs/dgemm_dmma.json configs/dgemm_dmma_splitk.json configs/dgemm_dmma_streamk.json configs/dgemm_narrow_k.json
    configs/dgemm_narrow_m128.json configs/dgemm_narrow_m144.json configs/dgemm_narrow_m32.json configs/dgemm_narrow_m64.json
    configs/dgemm_narrow_n128.json configs/dgemm_pipelined.json configs/dgemm_simt.json configs/tc32_sync.json
    configs/warptile_db.json configs/sb10_warptiling.json configs/sb12_double_buffer2.json"
  for i in 1 2; do
    # shellcheck disable=SC2086
    run "g0-before-$i" 45 env ENGINE_TEMPLATES="$B/ks-4ffa" "$E" bench $CF --size 2048 --runs 7 --format jsonl
    # shellcheck disable=SC2086
    run "g0-after-$i" 45 "$E" bench $CF --size 2048 --runs 7 --format jsonl
  done
  run checks 400 env GPU_LOG_DIR="$OUT/gpu-logs" GPU_ONLY="interior slicek streamk splitk skinny" bash tests/gpu.sh
  grep -E '^  (FAIL|SKIP) |passed, ' "$OUT/checks.log" >>"$OUT/summary.txt"
  ;;
*)
  echo "s23: CALL must be one, two, three, four or five"
  exit 2
  ;;
esac
call_pack "$DEST"
exit 0
