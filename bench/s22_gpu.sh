#!/usr/bin/env bash
# Session 22's device calls, with the prebuilt build/ carried (engine, libengine.so, gpu_lib) and
# build/s22 beside it: cfg/ (the LU A/B's dmma configs, each with PREFETCH_C 0 and 1), wold/ (the
# wisdom before 0fcf67c, session 20's four BF16 entries), judge.txt (the fresh seed's shapes whose
# bf16 choice those entries move: "BATCH OP SHAPES" a line, from engine pick with both wisdoms),
# ks-before/ and wis-before/ (f627f8a's kernels_src and wisdom), ks-03f2/ (03f2a2d's), fresh.txt (seeds 13572468 and
# 24682468's shapes with K < 256 and C over 40 MiB, MxNxK,...). Data: bench/data/h200-s22-*.
# Everything under build/s22-CALL, packed into s22-CALL.tgz there; it and summary.txt go to $OUT.
#   CALL=one   the LU A/B: every dmma config of build/s22/cfg at the FP64 factorisation updates of
#              bench/workloads/lu_f64.json and judge/factor_judge_f64.json (alpha -1, beta 1, NN and NT),
#              7 runs; the timed judge of session 20's BF16 entries at judge.txt's shapes (--auto, the
#              wisdom before them, then with them, 5 runs); the regression guard, CHECK=1
#   CALL=two   PREFETCH_C and the LU entries' removal against HEAD's templates and wisdom (build/s22/
#              ks-before, wis-before): GPU checks, two fresh seeds' short-K shapes, the FP64 workloads
#              beside torch.matmul, an LU tune at beta 1 (below)
#   CALL=three the LU tile space tuned at beta 0 on short-K shapes of the design seeds; the FP64
#              workloads run again
#   CALL=prof  Nsight Compute on --auto's FP64 kernel and cuBLAS's at short K under a large C, beta 0
#   CALL=cs    C_STAGE: GPU checks, an A/B at odd N, a fresh seed (SEED) in f64 against 03f2a2d
#   CALL=cs2   the same after C_STAGE's chunked reads and 2 MiB rule, on another fresh seed
# Exit: 0; 2 bad input. A step that fails is logged and the next one runs.
set -u
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
call_begin s22 "$@"
# seed_ab SECONDS: SEED's 60 shapes in f64, --auto with 03f2a2d's templates (build/s22/ks-03f2) then
# this tree's, NN and NT at beta 0 and NN at beta 1, 5 runs, each run at most SECONDS.
seed_ab() {
  local shapes t op beta
  shapes=$(bash bench/random_shapes.sh "${SEED:?}" 60 | paste -sd, -)
  for t in NN:0 NT:0 NN:1; do
    IFS=: read -r op beta <<<"$t"
    run "seed-before-$op-b$beta" "$1" env ENGINE_TEMPLATES="$PWD/build/s22/ks-03f2" "$E" bench --auto --dtype f64 --op $op \
      --beta $beta --shapes "$shapes" --runs 5 --format jsonl
    run "seed-after-$op-b$beta" "$1" "$E" bench --auto --dtype f64 --op $op --beta $beta --shapes "$shapes" --runs 5 \
      --format jsonl
  done
}
case "$CALL" in
cs | cs2) [ -n "${SEED:-}" ] || { echo "s22: CALL=$CALL needs SEED (a random_shapes.sh seed)"; exit 2; } ;;
esac
case "$CALL" in
one)
  "$E" info >"$OUT/info.txt" 2>&1
  for op in NN NT; do
    run "lu-$op" 150 "$E" bench build/s22/cfg/lu_*.json --dtype f64 --alpha -1 --beta 1 --op $op \
      --shapes "$(lu_shapes $op)" --runs 7 --format jsonl
  done
  while read -r b op sh; do
    run "judge-before-$b-$op" 60 "$E" bench --auto --wisdom build/s22/wold --dtype bf16 --op "$op" --batch "$b" \
      --shapes "$sh" --runs 5 --format jsonl
    run "judge-after-$b-$op" 60 "$E" bench --auto --dtype bf16 --op "$op" --batch "$b" --shapes "$sh" --runs 5 \
      --format jsonl
  done <build/s22/judge.txt
  run regress 300 env OUT="$OUT/regress" CHECK=1 bash bench/regress.sh
  tail -3 "$OUT/regress.log" >>"$OUT/summary.txt"
  ;;
two)
  # PREFETCH_C (default 2) and the wisdom without the two beta-0 LU entries, against HEAD's templates
  # and wisdom (build/s22/ks-before, wis-before): make test-gpu's skinny section (PREFETCH_C's checks);
  # the fresh seeds' shapes with K < 256 and C over 40 MiB (build/s22/fresh.txt), f64, NN and NT,
  # beta 0 and beta 1, --auto before then after, 5 runs; bench/workload.py at lu_f64 and
  # factor_judge_f64 (never tuned on) before then after; then an LU tune at beta 1 with what is left.
  B="$PWD/build/s22"
  run skinny 200 env GPU_LOG_DIR="$OUT/gpu-logs" GPU_ONLY=skinny bash tests/gpu.sh
  grep -E '^  (FAIL|SKIP) |passed, ' "$OUT/skinny.log" >>"$OUT/summary.txt"
  for op in NN NT; do
    for beta in 0 1; do
      run "fresh-before-$op-b$beta" 40 env ENGINE_TEMPLATES="$B/ks-before" "$E" bench --auto --wisdom "$B/wis-before" \
        --dtype f64 --op $op --alpha -1 --beta $beta --shapes "$(cat "$B/fresh.txt")" --runs 5 --format jsonl
      run "fresh-after-$op-b$beta" 40 "$E" bench --auto --dtype f64 --op $op --alpha -1 --beta $beta \
        --shapes "$(cat "$B/fresh.txt")" --runs 5 --format jsonl
    done
  done
  for f in lu_f64 judge/factor_judge_f64; do
    n=$(basename $f)
    run "wl-before-$n" 90 env ENGINE_TEMPLATES="$B/ks-before" ENGINE_WISDOM="$B/wis-before" python3 bench/workload.py \
      --out "$OUT/wl-before-$n.jsonl" "bench/workloads/$f.json"
    run "wl-after-$n" 90 python3 bench/workload.py --out "$OUT/wl-after-$n.jsonl" "bench/workloads/$f.json"
  done
  run tune-lu 150 "$E" tune tune/shapes_lu_f64.json --dtype f64 --alpha -1 --beta 1 --shapes 7936x7936x256,3584x3584x512 \
    --strategy guided --budget 16 --runs 5 --wisdom "$OUT/tuned" --log "$OUT/tune-lu.jsonl"
  ;;
three)
  # beta 0 at a short K under a large C (design seeds 42042, 700001; down to 0.55x cuBLAS on fresh
  # seeds): the LU tile space tuned at three of them, the shipped pick beside; then the FP64
  # workloads again, this tree only (the spread between two runs of the same kernels).
  run tune-b0 240 "$E" tune tune/shapes_lu_f64.json --dtype f64 --shapes 13505x4569x128,4098x13045x131,4095x3454x67 \
    --strategy guided --budget 20 --runs 5 --wisdom "$OUT/tuned" --log "$OUT/tune-b0.jsonl"
  run auto-b0 40 "$E" bench --auto --dtype f64 --shapes 13505x4569x128,4098x13045x131,4095x3454x67 --runs 5 --format jsonl
  for f in lu_f64 judge/factor_judge_f64; do
    n=$(basename $f)
    run "wl-again-$n" 90 python3 bench/workload.py --out "$OUT/wl-again-$n.jsonl" "bench/workloads/$f.json"
  done
  ;;
prof)
  # What binds FP64 at a short K under a large C, beta 0 (0.55-0.88x cuBLAS): Nsight Compute on
  # --auto's kernel and on cuBLAS's in one bench each (every launch of the verify and the timed
  # run, the first 8), at 8190x7361x128 and 5122x10369x5 (fresh seeds' shapes, now design
  # shapes) and 13505x4569x128 with the beta-0 tune's tile beside.
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  for t in "8190x7361x128:" "5122x10369x5:" "13505x4569x128:" \
    "13505x4569x128:--set MMA=1688 --set WM=64 --set THREADS=64 --set STAGES=4"; do
    IFS=: read -r sh set <<<"$t"
    IFS=x read -r m n k <<<"$sh"
    read -r base sets < <("$E" pick --dtype f64 --shapes "$sh" --format jsonl | python3 -c '
import json, sys
r = json.loads(sys.stdin.readline())
print(r["config"], " ".join("--set %s=%s" % kv for kv in (r.get("set") or {}).items()))')
    [ -n "$set" ] && base=configs/dgemm_dmma.json sets="$set"
    n2=$sh${set:+-tuned}
    log "prof $n2: $base $sets"
    # shellcheck disable=SC2086
    run "prof-$n2" 120 "$NCU" --clock-control none --target-processes all --kernel-name "regex:.*gemm.*" --launch-count 8 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
      --section WarpStateStats --section SchedulerStats \
      "$E" bench "$base" $sets --dtype f64 --m "$m" --n "$n" --k "$k" --runs 1 --iters 1 --warmup 0
  done
  ;;
cs)
  # C_STAGE (default 2: C's tile staged through shared memory where C's rows are not 16-byte aligned)
  # against 03f2a2d's templates (build/s22/ks-03f2): make test-gpu's skinny section (its checks);
  # the 64x64 and 128x64 tiles with C_STAGE 0 and 1 at odd N over K 16-8192 and at design shapes
  # (build/s22/cfg/cs_*), 7 runs; then fresh seed SEED's 60 shapes in f64, --auto before -> after,
  # NN and NT at beta 0 and NN at beta 1, 5 runs (rows with an even N run the same kernels: a control).
  B="$PWD/build/s22"
  run skinny 200 env GPU_LOG_DIR="$OUT/gpu-logs" GPU_ONLY=skinny bash tests/gpu.sh
  grep -E '^  (FAIL|SKIP) |passed, ' "$OUT/skinny.log" >>"$OUT/summary.txt"
  run cs-ab 90 "$E" bench "$B"/cfg/cs_*.json --dtype f64 --runs 7 --format jsonl --shapes \
    4095x4097x16,4095x4097x128,4095x4097x512,4095x4097x2048,4095x4097x8192,13505x4569x128,2447x3451x128,8055x771x66,1025x403x729,397x1665x121
  seed_ab 60
  ;;
cs2)
  # C_STAGE with its chunked reads of C and the 2 MiB rule, against 03f2a2d's templates: make
  # test-gpu's skinny section; seed 36912151's shapes it moved (now design shapes) at beta 1; a
  # fresh seed (SEED) in f64, --auto before -> after, NN and NT at beta 0 and NN at beta 1, 5 runs.
  B="$PWD/build/s22"
  run skinny 150 env GPU_LOG_DIR="$OUT/gpu-logs" GPU_ONLY=skinny bash tests/gpu.sh
  grep -E '^  (FAIL|SKIP) |passed, ' "$OUT/skinny.log" >>"$OUT/summary.txt"
  d=9984x735x128,3515x481x95,1024x2403x3,4352x817x481,128x705x128,703x61x128,128x2175x18,3328x23x65
  run design-before 30 env ENGINE_TEMPLATES="$B/ks-03f2" "$E" bench --auto --dtype f64 --beta 1 --shapes $d --runs 5 --format jsonl
  run design-after 30 "$E" bench --auto --dtype f64 --beta 1 --shapes $d --runs 5 --format jsonl
  seed_ab 40
  ;;
*)
  echo "s22: CALL must be one, two, three, prof, cs or cs2"
  exit 2
  ;;
esac
call_pack "$DEST"
exit 0
