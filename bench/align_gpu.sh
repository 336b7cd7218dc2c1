#!/usr/bin/env bash
# bench/align_gpu.sh — GPU evidence for wisdom entries that carry the alignment class (issue 25
# item 1, branch align). Prebuilt build/ only; about 2 minutes; logs under $OUT (default
# /tmp/align_gpu). One problem: f32 512^3 x 16 products with lda, ldb and ldc padded by 1 (every
# operand class 1), in a copy of the shipped wisdom.
#   1 tune     --auto-tune records the winner with "align": [1, 1, 1] and "batch": 16
#   2 timed    ...timed in the padded batch, not one packed product: the entry's TFLOP/s is within
#              1.5x of what bench measures for it (--auto-tune used to time one packed NN product
#              and multiply by the batch: ~16x too high)
#   3 exact    bench --auto at that layout runs the entry exactly ("align 1,1,1" in "chosen")
#   4 packed   the packed batch does not take it as exact (the model may still weigh it, its score
#              1.75x for three operands of another class)
#   5 vs model the tuned entry's TFLOP/s against what the shipped wisdom's model picks at the same
#              layout: >= 0.95x (the point of recording the class; printed either way)
set -u
cd "$(dirname "$0")/.."
E=build/engine
OUT=${OUT:-/tmp/align_gpu}
mkdir -p "$OUT"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cp -r wisdom "$T/w"
export XDG_DATA_HOME=$T/data # no user wisdom: the copy is the only one written and read
# EXTRA: more options for every run (`EXTRA="--arch sm_90" ENGINE_WORKER=tests/fake_worker.py` tries
# the script without a GPU; its figures then mean nothing).
LAY="--size 512 --batch 16 --lda +1 --ldb +1 --ldc +1 ${EXTRA:-}"
declare -a ROWS
row() { ROWS+=("$(printf '%-9s %-5s %s' "$1" "$2" "$3")"); }
mine() { # FILE: the first row that is not cuBLAS's, as "TFLOPS|CHOSEN|STATUS"
  python3 -c '
import json, sys
for l in open(sys.argv[1]):
    if l.startswith("{"):
        r = json.loads(l)
        if r.get("config") != "cublas":
            print("%s|%s|%s" % (r.get("tflops", 0), r.get("chosen", ""), r.get("status", "")))
            break' "$1"
}

timeout 300 $E bench --auto --auto-tune=30 --wisdom "$T/w" $LAY --runs 5 --format jsonl >"$OUT/tune.jsonl" 2>"$OUT/tune.err"
rc=$?
cp "$T"/w/*.json "$OUT/" 2>/dev/null
entry=$(python3 - "$T/w" <<'PY'
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/*.json"):
    for e in json.load(open(f))["entries"]:
        if e["shape"] == "512x512x512" and e.get("batch") == 16 and e.get("align") == [1, 1, 1]:
            print(e["tflops"])
PY
)
if [ $rc = 0 ] && [ -n "$entry" ]; then row tune ok "entry recorded, $entry TFLOP/s"; else row tune FAIL "exit $rc, entry '${entry}' ($(grep -m1 auto-tune "$OUT/tune.err"))"; fi

timeout 120 $E bench --auto --wisdom "$T/w" $LAY --runs 7 --format jsonl >"$OUT/exact.jsonl" 2>"$OUT/exact.err"
IFS='|' read -r t_exact chosen st <<<"$(mine "$OUT/exact.jsonl")"
case "$chosen" in
*"exact 512x512x512 batch 16 align 1,1,1"*) [ "$st" = ok ] && row exact ok "$chosen" || row exact FAIL "status $st" ;;
*) row exact FAIL "chosen: $chosen" ;;
esac
ok=$(python3 -c "import sys; e, b = float(sys.argv[1] or 0), float(sys.argv[2] or 0); print('ok' if b > 0 and 1 / 1.5 <= e / b <= 1.5 else 'FAIL')" "${entry:-0}" "${t_exact:-0}")
row timed "$ok" "entry ${entry:-?} TFLOP/s, bench ${t_exact:-?} TFLOP/s"

timeout 120 $E bench --auto --wisdom "$T/w" --size 512 --batch 16 ${EXTRA:-} --runs 3 --format jsonl >"$OUT/packed.jsonl" 2>"$OUT/packed.err"
IFS='|' read -r t_packed chosen_p st_p <<<"$(mine "$OUT/packed.jsonl")"
case "$chosen_p" in
*"exact 512x512x512 batch 16 align"*) row packed FAIL "chosen: $chosen_p" ;;
*) [ "$st_p" = ok ] && row packed ok "$chosen_p" || row packed FAIL "status $st_p" ;;
esac

timeout 120 $E bench --auto $LAY --runs 7 --format jsonl >"$OUT/model.jsonl" 2>"$OUT/model.err"
IFS='|' read -r t_model chosen_m st_m <<<"$(mine "$OUT/model.jsonl")"
ok=$(python3 -c "import sys; e, m = float(sys.argv[1] or 0), float(sys.argv[2] or 0); print('ok' if m > 0 and e >= 0.95 * m else 'FAIL')" "${t_exact:-0}" "${t_model:-0}")
row "vs model" "$ok" "tuned ${t_exact:-?} vs model ${t_model:-?} TFLOP/s ($chosen_m)"

echo
echo "align_gpu: f32 512^3 x 16, lda/ldb/ldc + 1 ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1))"
printf '%s\n' "${ROWS[@]}" | tee "$OUT/summary.txt"
