#!/usr/bin/env bash
# Session 21's device calls (hws's ZITEMS: a batch's products as the items of one persistent loop),
# run from a copy of the branch's tree and its build/ carried inside this one (build/s21z/tree: `cd
# build/s21z/tree && CALL=... bash bench/s21_gpu.sh`), so that main's kernels_src, three folders up,
# is the "before" of the A/Bs. Data: bench/data/h200-s21-*-2026-11-29.*.
#   CALL=zitems  make test-gpu's sm90a section (hws ZITEMS verified in every op, with turns, both staged
#                epilogues, batches 3-64, memcheck and racecheck); ZITEMS 0 against 1 at the attention
#                workload's batched shapes, the shipped picks' sets (7 runs); then tune/hws_zitems.json
#                at the three scores batches, winners kept as tuned.json for an A/B and merge later
#   CALL=ab      ZITEMS's default (2: on for a batch) verified, then A/B'd against main's templates at
#                the attention workload's calls (--auto, and bench/workload.py beside torch)
#   CALL=judge   make test-gpu's batched half sections; SEED's shapes at a batch of 8 in bf16 (NT, NN),
#                main's templates against this tree's
# Exit: 0; 2 bad input. A step that fails is logged and the next one runs.
set -u
cd "$(dirname "$0")/.." || exit 2
. bench/lib.sh
call_begin s21 "$@"
case "$CALL" in
zitems)
  run sm90a 220 env GPU_LOG_DIR="$OUT/gpu-logs" GPU_ONLY=sm90a bash tests/gpu.sh
  grep -E '^  (FAIL|SKIP) |ZITEMS|passed, ' "$OUT/sm90a.log" >>"$OUT/summary.txt"
  P1="--set BN=128 --set PINGPONG=1 --set EPI=1"
  P2="--set BN=128 --set STAGES=6 --set GROUP=16 --set EPI=1"
  for t in NT:16:128x128x64:P2 NT:128:256x256x64:P2 NT:32:512x512x128:P1 NT:64:1024x1024x64:P1 NT:32:2048x2048x128:P1 \
    NT:8:4096x4096x128:P1 NN:64:1024x64x1024:P1 NN:32:2048x128x2048:P1; do
    IFS=: read -r op b sh ps <<<"$t"
    for z in 0 1; do
      # shellcheck disable=SC2086
      run "bench-$op-$b-$sh-z$z" 30 "$E" bench configs/hws_bf16.json --dtype bf16 ${!ps} --set ZITEMS=$z --op "$op" \
        --batch "$b" --shapes "$sh" --runs 7 --format jsonl
    done
  done
  T=$OUT/tuned
  mkdir -p "$T"
  for t in 64:1024x1024x64 128:256x256x64; do
    IFS=: read -r b sh <<<"$t"
    run "tune-$b" 70 "$E" tune tune/hws_zitems.json --dtype bf16 --op NT --batch "$b" --shapes "$sh" --strategy guided \
      --budget 12 --runs 5 --wisdom "$T" --log "$OUT/tune-$b.jsonl"
  done
  cp "$(ls "$T"/*.json | head -1)" "$OUT/tuned.json" 2>/dev/null
  ;;
ab)
  # ZITEMS 2 (the default: a batch's products as items of one loop): verify --auto at the attention
  # batches, odd sides too, in bf16 and f16; then --auto at every attention workload call (grouped by
  # op and batch), main's templates ($ROOT/kernels_src: a grid z of products) against this tree's, 7
  # runs; then bench/workload.py (attention_bf16 and the judge file never tuned on) beside torch,
  # main's templates then these.
  ROOT=$(cd ../../.. && pwd)
  for dt in bf16 f16; do
    for t in NT:64:1024x1024x64,1023x1025x63 NT:8:4096x4096x128 NN:32:2048x128x2048,2047x129x2049 TN:16:128x64x128,127x65x129 TT:7:300x200x100; do
      IFS=: read -r op b sh <<<"$t"
      run "verify-$dt-$op-$b" 40 "$E" verify --auto --dtype $dt --op $op --batch "$b" --shapes "$sh" --format jsonl
      log "verify-$dt-$op-$b: $(grep -c '"status":"ok"' "$OUT/verify-$dt-$op-$b.log") ok of $(grep -c '^{' "$OUT/verify-$dt-$op-$b.log")"
    done
  done
  python3 - >"$OUT/groups.txt" <<'PY'
import json
g = {}
for c in json.load(open("bench/workloads/attention_bf16.json"))["calls"]:
    g.setdefault((c["op"], c["batch"]), []).append("%dx%dx%d" % (c["m"], c["n"], c["k"]))
for (op, b), s in g.items():
    print(op, b, ",".join(s))
PY
  while read -r op b sh; do
    run "before-$op-$b" 30 env ENGINE_TEMPLATES="$ROOT/kernels_src" "$E" bench --auto --dtype bf16 --op "$op" --batch "$b" \
      --shapes "$sh" --runs 7 --format jsonl
    run "after-$op-$b" 30 "$E" bench --auto --dtype bf16 --op "$op" --batch "$b" --shapes "$sh" --runs 7 --format jsonl
  done <"$OUT/groups.txt"
  for f in attention_bf16 judge/attention_judge_bf16; do
    n=$(basename $f)
    run "wl-before-$n" 100 env ENGINE_TEMPLATES="$ROOT/kernels_src" python3 bench/workload.py --out "$OUT/wl-before-$n.jsonl" \
      "bench/workloads/$f.json"
    run "wl-after-$n" 100 python3 bench/workload.py --out "$OUT/wl-after-$n.jsonl" "bench/workloads/$f.json"
  done
  ;;
judge)
  # make test-gpu's sections with batched half-precision products (half, half-san, library: engine.matmul
  # beside torch.matmul), then SEED's shapes (never used) at a batch of 8 in bf16, NT and NN, --auto
  # with main's templates ($ROOT/kernels_src) and with this tree's, 5 runs.
  ROOT=$(cd ../../.. && pwd)
  run sections 170 env GPU_LOG_DIR="$OUT/gpu-logs" GPU_JOBS=3 GPU_ONLY="half half-san library" bash tests/gpu.sh
  grep -E '^  (FAIL|SKIP) |passed, ' "$OUT/sections.log" >>"$OUT/summary.txt"
  shapes=$(bash bench/random_shapes.sh "${SEED:?}" 30 | paste -sd, -)
  for op in NT NN; do
    run "seed-before-$op" 75 env ENGINE_TEMPLATES="$ROOT/kernels_src" "$E" bench --auto --dtype bf16 --op $op --batch 8 \
      --shapes "$shapes" --runs 5 --format jsonl
    run "seed-after-$op" 75 "$E" bench --auto --dtype bf16 --op $op --batch 8 --shapes "$shapes" --runs 5 --format jsonl
  done
  ;;
*)
  echo "s21: CALL must be zitems, ab or judge"
  exit 2
  ;;
esac
call_pack "$DEST"
exit 0
