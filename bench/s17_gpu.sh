#!/usr/bin/env bash
# Session 17's device calls after bench/s16_gpu.sh's tune (its winners in build/s17-tuned.json, the
# wisdom before them in build/wisdom-head, the tree's wisdom/ with every winner merged in by
# bench/merge_tuned.py), with the prebuilt build/ and python3 with torch. Everything under $OUT
# (default build/s17), packed into $OUT/s17-CALL.tgz.
#   CALL=judge  A/B at the tuned shapes: --auto with the wisdom before and after (runs 7, one call);
#               bench/merge_tuned.py --ab keeps the winners at least 2% faster, into build/s17-wisdom
#               (the final wisdom; its H100 file copied to $OUT); bench/workload.py over the FP64 and
#               BF16 workload files (tuned on and never) with it; --auto at SEED's 60 shapes in FP64,
#               with the wisdom before and the final one
#   CALL=half   bf16 op NN: gemv and hws split-K tuned at the suite's thin and long-K shapes, A/B and
#               merged as judge does, SEED in bf16 before and after, in f32 and f64 with the result
#   CALL=last   the weakest fresh-seed FP32/FP64 choices taken apart, BF16 workloads, SEED in f16
#   CALL=pack   the operand copies of hws and tc32ws (prep_a/prep_b) verified and timed before/after
#   CALL=guard  --auto at SEED's 60 shapes in BF16, before and final, and FP64 final against pedantic
#               cuBLAS (the earlier yardstick); bench/regress.sh CHECK=1 (pedantic, its baseline's math)
# Exit: 0; 2 bad input. A section that fails is logged and the next one runs.
set -u
cd "$(dirname "$0")/.." || exit 2
E=${ENGINE_BIN:-build/engine}
OUT=${OUT:-build/s17}
CALL=${CALL:-${1:-}}
BUDGET=${BUDGET:-520}
SEED=${SEED:-}
HEAD_W=build/wisdom-head TUNED=build/s17-tuned.json FINAL=build/s17-wisdom
[ -n "$SEED" ] || { echo "s17: SEED must name a seed never used (docs/RESULTS.md lists the used ones)"; exit 2; }
mkdir -p "$OUT"
export XDG_CACHE_HOME=${TMPDIR:-/tmp}/s16-cache XDG_DATA_HOME=${TMPDIR:-/tmp}/s16-data
. bench/lib.sh
call_start s17
run() { call_run "$@"; }
log() { call_log "$@"; }
shapes=$(bash bench/random_shapes.sh "$SEED" 60 | paste -sd, -)
seed() { # NAME WISDOM DTYPE [ENV...]
  local name=$1 w=$2 dt=$3
  shift 3
  run "seed-$name" 75 env "$@" "$E" bench --auto --wisdom "$w" --dtype "$dt" --shapes "$shapes" --runs 5 --format jsonl
}

case "$CALL" in
judge)
  # The tuned shapes by dtype and op (build/s17-tuned.json's entries).
  groups=$(python3 -c '
import json, collections
g = collections.defaultdict(list)
for e in json.load(open("'$TUNED'"))["entries"]:
    g[(e["dtype"], e.get("op", "NN"))].append(e["shape"])
for (d, o), s in g.items():
    print(d, o, ",".join(s))')
  while read -r dt op sh; do
    for side in before after; do
      w=$HEAD_W
      [ $side = after ] && w=wisdom
      run "ab-$side-$dt-$op" 60 "$E" bench --auto --wisdom "$w" --dtype "$dt" --op "$op" --shapes "$sh" --runs 7 --format jsonl
    done
  done <<<"$groups"
  cat "$OUT"/ab-before-*.log >"$OUT/ab-before.jsonl"
  cat "$OUT"/ab-after-*.log >"$OUT/ab-after.jsonl"
  rm -rf "$FINAL" && cp -r "$HEAD_W" "$FINAL"
  python3 bench/merge_tuned.py "$TUNED" --into "$FINAL/nvidia-h100-80gb-hbm3.json" \
    --data bench/data/h200-s17-tune-2026-11-28.jsonl --ab "$OUT/ab-before.jsonl" "$OUT/ab-after.jsonl" \
    >"$OUT/merge.log" 2>&1
  log "merge: exit $? ($(tail -1 "$OUT/merge.log"))"
  cp "$FINAL/nvidia-h100-80gb-hbm3.json" "$OUT/"
  run workloads 230 env ENGINE_WISDOM="$FINAL" python3 bench/workload.py --out "$OUT/workload.jsonl" \
    bench/workloads/lu_f64.json bench/workloads/judge/factor_judge_f64.json bench/workloads/llama7b_bf16.json \
    bench/workloads/attention_bf16.json bench/workloads/judge/gemma7b_bf16.json
  seed f64-before "$HEAD_W" f64
  seed f64-final "$FINAL" f64
  ;;
guard)
  W=$FINAL
  [ -d "$W" ] || { log "no $FINAL (a fresh machine): the tree's wisdom/ (every winner) stands in"; W=wisdom; }
  seed bf16-before "$HEAD_W" bf16
  seed bf16-final "$W" bf16
  seed f64-final-pedantic "$W" f64 ENGINE_CUBLAS_MATH=pedantic
  run regress 330 env CHECK=1 OUT="$OUT/regress" bash bench/regress.sh
  ;;
half)
  # BF16 in op NN where the seed found no NN entry to weigh: gemv at thin shapes, hws split-K under
  # a long K (the shipped suite's shapes); A/B and merge as in judge, the tree's wisdom/ as before;
  # then SEED (fresh) in bf16 before and after, and in f32 and f64 with the final wisdom.
  T2=$OUT/tuned
  mkdir -p "$T2"
  for t in gemv:tune/shapes_gemv_half_nn.json:110 hws:tune/hws_splitk_nn.json:150; do
    IFS=: read -r name space s <<<"$t"
    run "tune-$name" "$s" "$E" tune "$space" --dtype bf16 --op NN --strategy guided --budget 24 --runs 7 \
      --wisdom "$T2" --log "$OUT/tune-$name.jsonl"
  done
  tuned=$(ls "$T2"/*.json | head -1)
  FIN=build/s17-final2
  call_merge_ab "$tuned" build/s17-all2 "$FIN" bench/data/h200-s17-half-nn-tune-2026-11-28.jsonl 60 --dtype bf16
  seed bf16-before wisdom bf16
  seed bf16-after "$FIN" bf16
  seed f32 "$FIN" f32
  seed f64 "$FIN" f64
  ;;
last)
  # Where the fresh seed's FP32/FP64 choices ran 0.25-0.55x: --auto at the shape and at its aligned
  # neighbour (no operand packed), the chosen tc32ws tile with K whole and with 1-8 splits; the BF16
  # workloads with the final wisdom; SEED in f16 with the wisdom before and with bf16's new entries
  # mirrored (bench/half_mirror.py).
  run diag-f32-auto 60 "$E" bench --auto --dtype f32 --runs 5 --format jsonl \
    --shapes 63x14547x7671,64x14544x7672,65x5129x11648,64x5120x11648,103x8194x3712,104x8192x3712
  for sk in 1 2 8; do
    run "diag-f32-ws-sk$sk" 40 "$E" bench configs/tc32ws_3x.json --set BM=64 --set STAGES=4 --set BREG=1 \
      --set SPLITK=$sk --runs 5 --format jsonl --shapes 63x14547x7671,64x14544x7672,65x5129x11648,103x8194x3712
  done
  run diag-f32-tc32 40 "$E" bench configs/tc32_3x.json --runs 5 --format jsonl --shapes 63x14547x7671,65x5129x11648,103x8194x3712
  run diag-f64-auto 40 "$E" bench --auto --dtype f64 --runs 5 --format jsonl \
    --shapes 103x8194x3712,104x8192x3712,640x5435x9,640x5432x8,16384x30x256,16384x32x256
  run workloads 120 python3 bench/workload.py --out "$OUT/workload.jsonl" bench/workloads/llama7b_bf16.json \
    bench/workloads/attention_bf16.json bench/workloads/judge/gemma7b_bf16.json
  seed f16-before build/wisdom-head f16
  seed f16-after wisdom f16
  ;;
pack)
  # hws's prep_a/prep_b and tc32ws's prep_b with several rows a thread in flight: verified where they
  # run (rows off 16 bytes: odd K or N, every op, a batch, the big shapes they were slow at),
  # memcheck, and --auto timed with HEAD's templates (ENGINE_TEMPLATES=build/ks-head) and these.
  v() { # NAME ARGS...: engine verify, every row in class or the check fails
    local name=$1
    shift
    run "v-$name" 60 "$E" verify "$@"
    grep -q "verify: [1-9][0-9]* passed, 0 failed, 0 errors" "$OUT/v-$name.log" && log "ok $name" || log "FAIL $name"
  }
  for op in NN NT TN TT; do
    v "hws-$op" configs/hws_bf16.json --op $op --shapes 127x129x131,2100x4100x63,33x1027x2945,1001x64x8190
    v "ws-$op" configs/tc32ws_3x.json --op $op --shapes 63x1457x767,127x129x131,65x5129x1165
  done
  v hws-f16 configs/hws_f16.json --op TN --shapes 127x129x131,8193x128x8190
  v hws-big configs/hws_bf16.json --shapes 8193x128x8190
  v hws-batch configs/hws_bf16.json --op NT --batch 3 --shapes 127x129x131
  v ws-1x configs/tc32ws_1x.json --shapes 63x1457x767,127x129x131
  v ws-big configs/tc32ws_3x.json --set BM=64 --set SPLITK=4 --shapes 63x14547x7671
  v ws-batch configs/tc32ws_3x.json --batch 3 --shapes 127x129x131
  CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
  if [ -n "$CS" ]; then
    run memcheck-hws 60 "$CS" --tool memcheck --error-exitcode 9 "$E" verify configs/hws_bf16.json --op TT --shapes 127x129x131 --no-cache
    run memcheck-ws 60 "$CS" --tool memcheck --error-exitcode 9 "$E" verify configs/tc32ws_3x.json --shapes 65x513x131 --no-cache
  fi
  for side in before after; do
    tp=()
    [ $side = before ] && tp=(ENGINE_TEMPLATES=build/ks-head)
    run "t-$side-f32" 60 env "${tp[@]}" "$E" bench --auto --dtype f32 --runs 5 --format jsonl \
      --shapes 63x14547x7671,65x5129x11648,103x8194x3712
    run "t-$side-bf16" 60 env "${tp[@]}" "$E" bench --auto --dtype bf16 --runs 5 --format jsonl \
      --shapes 8193x128x8190,33x8195x2944,3x8193x4097,8320x322x8322
  done
  ;;
*)
  echo "s17: CALL must be judge, guard, half, last or pack (got '${CALL}')"
  exit 2
  ;;
esac
tar czf "/tmp/s17-$CALL.tgz" -C "$OUT" . && mv "/tmp/s17-$CALL.tgz" "$OUT/"
cat "$OUT/summary.txt"
