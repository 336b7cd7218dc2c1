#!/usr/bin/env bash
# A random seed's shapes by class (issue 42): engine (--auto) over cuBLAS, geometric mean and minimum
# per class, f32 and f64, so that a weak kind of shape shows as a class and not as one shape.
#   bench/classes.sh SEED [N]            run: bench/shapes.sh with SEED=SEED RANDOM=N (default 60), both
#                                        dtypes (DTYPES, RUNS, ENGINE_ARGS, ENGINE_BIN as shapes.sh takes
#                                        them; rows in $OUT/shapes-<dtype>.jsonl, default build/classes-SEED),
#                                        then the table. Needs a GPU.
#   bench/classes.sh SEED DATA.jsonl...  the table from data files of that seed (rows of engine bench
#                                        --format jsonl, as shapes.sh or oracle.sh wrote them; either
#                                        dtype, one file or several): no GPU. Every shape in them must be
#                                        one of the seed's first shapes (bench/random_shapes.sh SEED).
# The classes (issue 42; bench/shape_class.py defines them): narrowest side min(M, N) of 1-4, 5-16;
# K < 64; narrowest side 17-128; an odd leading dimension at max(M, N, K) >= 2048; the rest.
# Per shape, engine's ratio is cuBLAS ms / the fastest ok row's ms (shapes.sh's); a shape with no ok
# row counts 0 in the minimum and is left out of the mean (the "failed" column). Exit 0 (whatever the
# ratios), 2 bad input (one line), else shapes.sh's exit status.
set -u
cd "$(dirname "$0")/.."
usage="usage: bench/classes.sh SEED [N] | bench/classes.sh SEED DATA.jsonl..."
[ $# -ge 1 ] && [[ "$1" =~ ^[0-9]+$ ]] || { echo "$usage" >&2; exit 2; }
seed=$1
shift
rc=0
if [ $# -eq 0 ] || { [ $# -eq 1 ] && [[ "$1" =~ ^[0-9]+$ ]]; }; then
  n=${1:-60}
  [ "$n" -ge 1 ] || { echo "classes: N must be at least 1" >&2; exit 2; }
  out=${OUT:-build/classes-$seed}
  SEED=$seed RANDOM=$n OUT=$out bash bench/shapes.sh
  rc=$?
  set --
  for dt in ${DTYPES:-f32 f64}; do
    [ -s "$out/shapes-$dt.jsonl" ] && set -- "$@" "$out/shapes-$dt.jsonl"
  done
  [ $# -gt 0 ] || { echo "classes: shapes.sh wrote no rows in $out (exit $rc)" >&2; exit $((rc ? rc : 3)); }
  echo
fi
for f in "$@"; do
  [ -r "$f" ] || { echo "classes: $f: cannot read" >&2; exit 2; }
done
python3 - "$seed" "$@" <<'PY' || exit $?
import json, math, subprocess, sys

seed, files = sys.argv[1], sys.argv[2:]


def bad(msg):
    print(f"classes: {msg}", file=sys.stderr)
    sys.exit(2)


sys.path.insert(0, "bench")
import workload  # its reader of JSON Lines data files
from shape_class import CLASSES, klass

rows = []
for path in files:
    try:
        got = workload.read_rows(path, lambda r: ("M", "N", "K", "dtype", "config", "status"), "bench")
    except workload.Invalid as e:
        bad(str(e))
    for i, r in enumerate(got, 1):
        for k in ("M", "N", "K"):
            if not isinstance(r[k], int) or isinstance(r[k], bool) or r[k] < 1:
                bad(f"{path}: row {i}: {k}: must be a positive integer, got {json.dumps(r[k])}")
        if r["status"] == "ok" and not (isinstance(r.get("ms"), (int, float)) and r["ms"] > 0):
            bad(f"{path}: row {i}: ms: an ok row needs a positive time, got {json.dumps(r.get('ms'))}")
    rows += got
if not rows:
    bad(f"no rows in {', '.join(files)}")

# Every shape must be one of the seed's (a data file of another seed would be judged by the wrong name).
by = {}
for r in rows:
    by.setdefault((r["dtype"], r["M"], r["N"], r["K"]), []).append(r)
nshapes = len({key[1:] for key in by})
gen = subprocess.run(["bash", "bench/random_shapes.sh", seed, str(max(nshapes, 1) * 4)], capture_output=True, text=True)
drawn = {tuple(map(int, line.split("x"))) for line in gen.stdout.split()}
stray = sorted({key[1:] for key in by} - drawn)
if stray:
    bad(f"{len(stray)} shapes are not seed {seed}'s (the first: {'x'.join(map(str, stray[0]))}): "
        "the data files are of another seed or suite")

stats = {}  # (dtype, class) -> [ratios], failed count, minimum shape
for (dt, m, n, k), rs in by.items():
    cub = [r for r in rs if r["config"] == "cublas" and r["status"] == "ok"]
    mine = [r for r in rs if r["config"] != "cublas" and r["status"] == "ok"]
    ratio = cub[0]["ms"] / min(r["ms"] for r in mine) if cub and mine else 0.0
    r0 = rs[0]
    for c in (klass(m, n, k, r0.get("op", "NN"), (r0.get("lda"), r0.get("ldb"), r0.get("ldc"))), "all"):
        s = stats.setdefault((dt, c), {"ratios": [], "failed": 0, "worst": None})
        s["ratios"].append(ratio)
        s["failed"] += ratio == 0.0
        if s["worst"] is None or ratio < s["worst"][0]:
            s["worst"] = (ratio, f"{m}x{n}x{k}")

dtypes = sorted({key[0] for key in by})
devices = sorted({r.get("device") or "?" for r in rows})
dates = sorted({r.get("date") or "?" for r in rows})
print(f"### seed {seed}: {nshapes} shapes by class, engine over cuBLAS ({', '.join(devices)}, {', '.join(dates)})")
print()
head = ["class"]
for dt in dtypes:
    head += [f"{dt} shapes", "failed", "geomean", "minimum", "at"]
print("| " + " | ".join(head) + " |")
print("|---|" + "---:|---:|---:|---:|---|" * len(dtypes))
for c in CLASSES + ("all",):
    cells = [c]
    for dt in dtypes:
        s = stats.get((dt, c))
        if not s:
            cells += ["0", "", "", "", ""]
            continue
        ok = [x for x in s["ratios"] if x > 0]
        g = math.exp(sum(map(math.log, ok)) / len(ok)) if ok else None
        cells += [str(len(s["ratios"])), str(s["failed"]), f"{g:.3f}x" if g else "-", f"{s['worst'][0]:.3f}x", s["worst"][1]]
    print("| " + " | ".join(cells) + " |")
PY
exit $rc
