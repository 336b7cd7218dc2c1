#!/usr/bin/env bash
# FP64 at a narrowest side of 17-128 (issue 42's weakest class): the candidates of a config list
# (configs/narrow_f64.list: tiles that cover the narrow side, narrow tiles with warps along K, split-K)
# timed beside cuBLAS DGEMM and beside what --auto runs today, at shapes of that class, so that the
# ones worth shipping into wisdom can be chosen from one table.
#   bench/narrow_f64.sh               run (GPU): engine bench @LIST and engine bench --auto, f64, at
#                                     the shapes below; rows in $OUT/narrow.jsonl and $OUT/auto.jsonl
#                                     (default build/narrow_f64), then the table
#   bench/narrow_f64.sh --shapes      the shapes a run would use, one a line (no GPU)
#   bench/narrow_f64.sh --table DIR   the table from a run's DIR/narrow.jsonl and DIR/auto.jsonl (no GPU)
# The shapes: 129x11747x258 and 97x11289x128 (issue 42's), then for each of SEEDS (default 42042
# 700001: design seeds, not for judging) the first COUNT (default 12) shapes of bench/random_shapes.sh
# SEED that bench/shape_class.py puts in class "narrow 17-128"; SHAPES=MxNxK,... replaces them all.
# LIST (default configs/narrow_f64.list), RUNS (default 5), ENGINE_ARGS (more options for both
# benches), ENGINE_BIN. The table, per shape: cuBLAS's time, --auto's ratio to cuBLAS (cuBLAS time /
# engine time, each run's own cuBLAS) and config, the best candidate's ratio and name, and the better
# of the two (what wisdom could run there); then geometric means and minima of the three, and per
# candidate its geometric mean, minimum and the shapes where it beats --auto and every other candidate.
# Exit: 0 (whatever the ratios), 2 bad input (one line), 3 no rows from a run.
set -u
cd "$(dirname "$0")/.."
E=${ENGINE_BIN:-build/engine}
LIST=${LIST:-configs/narrow_f64.list}
OUTDIR=${OUT:-build/narrow_f64}

shapes() {
  if [ -n "${SHAPES:-}" ]; then
    [[ "$SHAPES" =~ ^[0-9]+x[0-9]+x[0-9]+(,[0-9]+x[0-9]+x[0-9]+)*$ ]] || {
      echo "narrow_f64: SHAPES must be MxNxK,..., got $SHAPES" >&2
      return 2
    }
    echo "$SHAPES" | tr , '\n'
    return 0
  fi
  [[ "${COUNT:-12}" =~ ^[0-9]+$ ]] || { echo "narrow_f64: COUNT must be a whole number, got $COUNT" >&2; return 2; }
  printf '%s\n' 129x11747x258 97x11289x128
  for s in ${SEEDS:-42042 700001}; do
    [[ "$s" =~ ^[0-9]+$ ]] || { echo "narrow_f64: SEEDS must be whole numbers, got $s" >&2; return 2; }
    bash bench/random_shapes.sh "$s" 2000 | python3 bench/shape_class.py "narrow 17-128" "${COUNT:-12}" || return 2
  done
}

table() { # DIR: the table from DIR/narrow.jsonl and DIR/auto.jsonl
  python3 - "$1/narrow.jsonl" "$1/auto.jsonl" <<'PY'
import json, math, sys

sys.path.insert(0, "bench")
import workload  # its reader of JSON Lines data files


def load(path):
    try:
        rows = workload.read_rows(path, lambda r: ("M", "N", "K", "config", "status"), "bench")
    except workload.Invalid as e:
        print(f"narrow_f64: {e}", file=sys.stderr)
        sys.exit(2)
    by = {}
    for r in rows:
        by.setdefault(f"{r['M']}x{r['N']}x{r['K']}", []).append(r)
    return by


def ratios(rs):
    """{config: cuBLAS ms / its ms} for the ok rows, from the run's own cuBLAS row."""
    cub = [r["ms"] for r in rs if r["config"] == "cublas" and r["status"] == "ok" and r.get("ms")]
    if not cub:
        return {}
    return {r["config"]: cub[0] / r["ms"] for r in rs if r["config"] != "cublas" and r["status"] == "ok" and r.get("ms")}


def gm(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def f(x):
    return f"{x:.3f}x" if x else "-"


cand, auto = load(sys.argv[1]), load(sys.argv[2])
shapes = list(cand) + [s for s in auto if s not in cand]
names = []
for rs in cand.values():
    for r in rs:
        if r["config"] != "cublas" and r["config"] not in names:
            names.append(r["config"])
rows = next(iter(cand.values()))
print(f"### FP64, narrowest side 17-128: {len(shapes)} shapes, {len(names)} candidates "
      f"({rows[0].get('device', '?')}, {rows[0].get('date', '?')}); x = cuBLAS time / engine time")
print()
print("| shape | cuBLAS us | --auto | config | best candidate | candidate | better of the two |")
print("|---|---:|---:|---|---:|---|---:|")
cols = {"auto": [], "cand": [], "both": []}
per = {n: [] for n in names}
wins = {n: [] for n in names}
failed = {n: 0 for n in names}
for s in shapes:
    cr, ar = ratios(cand.get(s, [])), ratios(auto.get(s, []))
    for r in cand.get(s, []):
        if r["config"] in failed and r["status"] != "ok":
            failed[r["config"]] += 1
    a = max(ar.values()) if ar else None
    aname = max(ar, key=ar.get) if ar else "-"
    best = max(cr, key=cr.get) if cr else None
    b = cr[best] if best else None
    both = max(x for x in (a, b, 0) if x is not None) or None
    for n in names:
        per[n].append(cr.get(n, 0.0))
    if best and (a is None or b > a):
        wins[best].append(s)
    cub = [r["ms"] for r in cand.get(s, []) + auto.get(s, []) if r["config"] == "cublas" and r.get("ms")]
    cols["auto"].append(a or 0.0)
    cols["cand"].append(b or 0.0)
    cols["both"].append(both or 0.0)
    print(f"| {s} | {cub[0] * 1000:.1f} | {f(a)} | {aname} | {f(b)} | {best or '-'} | {f(both)} |" if cub else
          f"| {s} | - | {f(a)} | {aname} | {f(b)} | {best or '-'} | {f(both)} |")
print()
print("| over the shapes | geometric mean | minimum |")
print("|---|---:|---:|")
for key, label in (("auto", "--auto (today)"), ("cand", "best candidate"), ("both", "better of the two")):
    xs = cols[key]
    print(f"| {label} | {f(gm(xs))} | {f(min(xs)) if xs else '-'} |")
print()
print("| candidate | geometric mean | minimum | failed | beats --auto and the others at |")
print("|---|---:|---:|---:|---|")
for n in names:
    xs = per[n]
    print(f"| {n} | {f(gm(xs))} | {f(min(xs)) if xs else '-'} | {failed[n]} | {', '.join(wins[n]) or '-'} |")
PY
}

case "${1:-}" in
  --shapes)
    [ $# -eq 1 ] || { echo "usage: bench/narrow_f64.sh [--shapes | --table DIR]" >&2; exit 2; }
    shapes
    exit $?
    ;;
  --table)
    [ $# -eq 2 ] || { echo "usage: bench/narrow_f64.sh --table DIR" >&2; exit 2; }
    for f in "$2/narrow.jsonl" "$2/auto.jsonl"; do
      [ -r "$f" ] || { echo "narrow_f64: $f: cannot read" >&2; exit 2; }
    done
    table "$2"
    exit $?
    ;;
  "") ;;
  *)
    echo "usage: bench/narrow_f64.sh [--shapes | --table DIR]" >&2
    exit 2
    ;;
esac
. bench/lib.sh
[ -x "$E" ] || { echo "narrow_f64: $E is missing: run make first" >&2; exit 2; }
[ -r "$LIST" ] || { echo "narrow_f64: $LIST: cannot read" >&2; exit 2; }
list=$(shapes | paste -sd, -)
[ "${PIPESTATUS[0]}" = 0 ] && [ -n "$list" ] || exit 2
mkdir -p "$OUTDIR"
device=$(device_name "$E")
echo "narrow_f64: $(echo "$list" | tr , '\n' | wc -l) shapes, the candidates of $LIST; rows in $OUTDIR"
# shellcheck disable=SC2086 # ENGINE_ARGS: options, split at spaces
$E bench "@$LIST" --dtype f64 --shapes "$list" --runs "${RUNS:-5}" --format jsonl ${ENGINE_ARGS:-} \
  2>"$OUTDIR/narrow.err" | stamp_rows "$device" >"$OUTDIR/narrow.jsonl"
# shellcheck disable=SC2086
$E bench --auto --dtype f64 --shapes "$list" --runs "${RUNS:-5}" --format jsonl ${ENGINE_ARGS:-} \
  2>"$OUTDIR/auto.err" | stamp_rows "$device" >"$OUTDIR/auto.jsonl"
for f in narrow auto; do
  [ -s "$OUTDIR/$f.jsonl" ] || { echo "narrow_f64: no rows in $OUTDIR/$f.jsonl: $(tail -1 "$OUTDIR/$f.err")" >&2; exit 3; }
done
echo
table "$OUTDIR"
