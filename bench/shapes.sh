#!/usr/bin/env bash
# The shape suite (bench/suites/shapes.txt, or SUITE=file) in f32 and f64, each shape timed beside
# cuBLAS in the same run. Per shape: the config that ran (with --auto, the one wisdom chose, and
# from which entry), its TFLOP/s and its ratio to cuBLAS; then the geometric mean and the minimum.
#   bench/shapes.sh                    --auto: wisdom picks the config per shape
#   bench/shapes.sh CONFIG...          the best of these configs per shape (configs of the other
#                                      dtype are left out of that dtype's half; an @LIST runs in
#                                      each dtype, with --dtype)
#   ENGINE_ARGS="--wisdom DIR"         more options for every engine bench
#   DTYPES=f32 bench/shapes.sh         one dtype only;  RUNS=11 (default) timed runs per row
#   SEED=S RANDOM=N bench/shapes.sh    N random shapes of seed S (bench/random_shapes.sh) instead of
#                                      the suite file: how selection is judged on shapes never tuned on
# Full rows (JSON Lines, each stamped with the run's date and device) go to $OUT/shapes-<dtype>.jsonl
# (default build/shapes); copied to bench/data/<tag>-shapes-<dtype>-<what>.jsonl and named in
# bench/tables.py's SUITE, a run becomes the README's suite table. Needs a GPU and the
# prebuilt build/engine. Targets (issue 8): f32 geomean >= 0.95, min >= 0.7; f64 geomean >= 1.05,
# min >= 0.8. Exits 0 whatever the ratios unless CHECK=1, which prints met/MISSED per target and
# exits 1 when one is missed.
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh
E=${ENGINE_BIN:-build/engine} # ENGINE_BIN: another build, for A/B runs
[ -x "$E" ] || { echo "build/engine is missing: run make first"; exit 2; }
SUITE=${SUITE:-bench/suites/shapes.txt}
OUTDIR=${OUT:-build/shapes}
mkdir -p "$OUTDIR"
# bash gives $RANDOM a new random number at every read: the caller's RANDOM=N is read from this
# process's starting environment instead.
NRANDOM=$(tr '\0' '\n' </proc/$$/environ 2>/dev/null | sed -n 's/^RANDOM=//p')
if [ -n "${SEED:-}" ] || [ -n "$NRANDOM" ]; then
  [ -n "${SEED:-}" ] && [ -n "$NRANDOM" ] || { echo "shapes: SEED=S and RANDOM=N go together"; exit 2; }
  SUITE=$OUTDIR/random-$SEED-$NRANDOM.txt
  bash bench/random_shapes.sh "$SEED" "$NRANDOM" >"$SUITE" || exit 2
fi
device=$(device_name "$E")
shapes=$(grep -v '^ *#' "$SUITE" | awk 'NF {print $1}' | paste -sd, -)
rc=0
for dt in ${DTYPES:-f32 f64}; do
  log=$OUTDIR/shapes-$dt.jsonl
  if [ $# -eq 0 ]; then
    $E bench --auto --dtype "$dt" --shapes "$shapes" --runs "${RUNS:-11}" --format jsonl ${ENGINE_ARGS:-} 2>"$OUTDIR/shapes-$dt.err" |
      stamp_rows "$device" >"$log"
  else
    mine=()
    dtflag=()
    for c in "$@"; do
      case $c in
        @*) mine+=("$c"); dtflag=(--dtype "$dt") ;; # a list runs in every dtype
        *)
          want=$(sed -n 's/.*"dtype": *"\(f[0-9]*\)".*/\1/p' "$c" | head -1)
          [ "${want:-f32}" = "$dt" ] && mine+=("$c")
          ;;
      esac
    done
    [ ${#mine[@]} -eq 0 ] && continue
    $E bench "${mine[@]}" "${dtflag[@]}" --shapes "$shapes" --runs "${RUNS:-11}" --format jsonl ${ENGINE_ARGS:-} 2>"$OUTDIR/shapes-$dt.err" |
      stamp_rows "$device" >"$log"
  fi
  r=${PIPESTATUS[0]}
  [ $r -gt $rc ] && rc=$r
  python3 - "$log" "$dt" "${CHECK:-0}" <<'PY' || rc=1
import json, math, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
dt = sys.argv[2]
by = {}
for r in rows:
    by.setdefault((r["M"], r["N"], r["K"]), []).append(r)
print(f"\n{dt}: {'shape':>20} {'config':<34} {'TFLOP/s':>8} {'cuBLAS':>8} {'ratio':>6} {'MHz':>5}")
ratios = []
for shape, rs in by.items():
    cub = [r for r in rs if r["config"] == "cublas"]
    mine = [r for r in rs if r["config"] != "cublas" and r["status"] == "ok"]
    name = "x".join(map(str, shape))
    if not cub or not mine:
        bad = [r for r in rs if r["config"] != "cublas"]
        print(f"{dt}: {name:>20} {(bad[0]['config'] + ' ' + bad[0]['status']) if bad else 'no row':<34}")
        ratios.append(0.0)
        continue
    best = max(mine, key=lambda r: r["tflops"])
    ratio = cub[0]["ms"] / best["ms"]
    ratios.append(ratio)
    print(f"{dt}: {name:>20} {best.get('chosen', best['config'])[:34]:<34} {best['tflops']:8.2f} {cub[0]['tflops']:8.2f} "
          f"{ratio:6.2f} {best['clock_mhz']:5.0f}")
if ratios:
    pos = [r for r in ratios if r > 0]
    g = math.exp(sum(map(math.log, pos)) / len(pos)) if pos else 0
    print(f"{dt}: {len(ratios)} shapes: geometric mean {g:.3f}x cuBLAS, minimum {min(ratios):.3f}x")
    if sys.argv[3] == "1":
        want = {"f32": (0.95, 0.7), "f64": (1.05, 0.8)}[dt]
        ok = True
        for what, v, t in (("geometric mean", g, want[0]), ("minimum", min(ratios), want[1])):
            print(f"  {'met   ' if v >= t else 'MISSED'}  {dt} {what} {v:.3f}x cuBLAS, target {t}")
            ok = ok and v >= t
        sys.exit(0 if ok else 1)
PY
done
exit $rc
