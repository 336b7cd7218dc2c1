#!/usr/bin/env bash
# The regression guard. Times every shipped config at its reference shape and every wisdom entry of
# this GPU at its own shape, op and batch (a row's name says op and batch where they are not NN and
# one product), each as a ratio to cuBLAS in the same run, and compares the ratios with
# the committed baseline bench/baseline/<device>.jsonl (device named as wisdom names it).
#   bash bench/regress.sh              the table; a row that dropped is marked DROP
#   CHECK=1 bash bench/regress.sh      ... and exit 1 when any row dropped
#   UPDATE=1 bash bench/regress.sh     write this run as the baseline (commit it, saying why)
#   PDL_AB=1 bash bench/regress.sh     also time every row with PDL forced off and on (two more
#                                      columns, not judged): configs with --set PDL=0 / PDL=1 in
#                                      the same run, wisdom entries with ENGINE_PDL=0 / 1
#   RUNS=7 (default)  ONLY="configs" or "wisdom"  ENGINE_BIN=another/engine  BASELINE=file
#   CONFIGS="configs/a.json ..." (default configs/*.json)  WISDOM=dir (default wisdom)
#   WISDOM_FILE=file                   the entries to time (default WISDOM/<this GPU>.json): a GPU that
#                                      stands in for another times that one's file, e.g. on an H200
#                                      WISDOM_FILE=wisdom/nvidia-h100-80gb-hbm3.json (--auto runs each
#                                      entry at its shape, the file being arch-level there)
#   ENGINE_ARGS="--arch sm_90"  more options for every engine bench
#   ROWS=rows.jsonl                    judge the rows of an earlier run ($OUT/rows.jsonl) again,
#                                      timing nothing (DEVICE names its GPU)
# Reference shapes: configs/siboehm.list's configs at 4096^3 (the siboehm table), configs/thin.list's
# (a matrix times a few vectors) at 8192x1x4096, every other config at 2048^3 (the walk and DGEMM
# tables), alpha 1, beta 0. A row drops when its ratio falls
# by more than max(3%, 3 x spread), spread being the larger of the baseline's and this run's: half
# the relative range over runs of ours plus half of cuBLAS's. Rows missing from either side, or
# whose wisdom entry changed, are listed, not judged. Logs go to $OUT (default build/regress).
# Needs a GPU and the prebuilt build/engine; exit 2 when it cannot run at all.
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh
# The baseline's ratios were timed against cuBLAS in pedantic math (the yardstick until 2026-11-28,
# engine/lab/blas.h): the guard keeps that math, so a ratio moves only when our time does.
export ENGINE_CUBLAS_MATH=${ENGINE_CUBLAS_MATH:-pedantic}
E=${ENGINE_BIN:-build/engine}
[ -x "$E" ] || { echo "regress: $E is missing: run make first"; exit 2; }
OUTDIR=${OUT:-build/regress}
RUNS=${RUNS:-7}
mkdir -p "$OUTDIR"
# DEVICE: the GPU's name as the driver gives it, when `engine info` cannot tell (tests).
[ -n "${ROWS:-}" ] && [ -z "${DEVICE:-}" ] && { echo "regress: ROWS needs DEVICE"; exit 2; }
name=$(device_name "$E")
[ -n "$name" ] || { echo "regress: no GPU found ($($E info 2>&1 | head -1))"; exit 2; }
slug=$(slug "$name")
BASE=${BASELINE:-bench/baseline/$slug.jsonl}
echo "regress: $name, baseline $BASE, $RUNS runs a row"

# One bench invocation per reference shape over an @LIST: each config, and with PDL_AB its two
# forced-PDL twins, so that all of them share the shape's inputs and cuBLAS timing.
want() { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]; }
rows=${ROWS:-$OUTDIR/rows.jsonl}
[ -n "${ROWS:-}" ] && ONLY=none
[ -n "${ROWS:-}" ] || : >"$rows"
if want configs; then
  sib=" $(grep -v '^ *#' configs/siboehm.list | awk 'NF {print $1}' | tr '\n' ' ') "
  thin=" $(grep -v '^ *#' configs/thin.list | awk 'NF {print $1}' | tr '\n' ' ') "
  for size in 2048 4096 thin; do
    list=$OUTDIR/configs-$size.list
    : >"$list"
    for c in ${CONFIGS:-configs/*.json}; do
      b=${c##*/}
      ref=2048
      [[ "$sib" == *" $b "* ]] && ref=4096
      [[ "$thin" == *" $b "* ]] && ref=thin
      [ $ref = $size ] || continue
      echo "$PWD/$c" >>"$list"
      [ "${PDL_AB:-0}" = 1 ] && printf '%s PDL=0\n%s PDL=1\n' "$PWD/$c" "$PWD/$c" >>"$list"
    done
    [ -s "$list" ] || continue
    shape=(--size $size)
    [ $size = thin ] && shape=(--m 8192 --n 1 --k 4096)
    $E bench "@$list" "${shape[@]}" --runs "$RUNS" --format jsonl ${ENGINE_ARGS:-} >"$OUTDIR/configs-$size.jsonl" 2>"$OUTDIR/configs-$size.err"
    sed 's/^{/{"set":"configs",/' "$OUTDIR/configs-$size.jsonl" >>"$rows"
  done
fi
if want wisdom; then
  W=${WISDOM_FILE:-${WISDOM:-wisdom}/$slug.json}
  if [ -f "$W" ]; then
    # One bench per (dtype, op, batch) of the entries, each entry timed as it was recorded: a batch
    # entry as its batch of products, an op's entry in its op (packed strides, as tune records them).
    python3 -c "
import json, sys
g = {}
for e in json.load(open(sys.argv[1]))['entries']:
    g.setdefault((e['dtype'], e.get('op', 'NN'), int(e.get('batch', 1))), []).append(e['shape'])
for (dt, op, b), sh in sorted(g.items()):
    print(dt, op, b, ','.join(sh))" "$W" >"$OUTDIR/wisdom-groups.txt"
    while read -r dt op b shapes; do
      tag=$dt$([ "$op" = NN ] || echo "-$op")$([ "$b" = 1 ] || echo "-b$b")
      modes="auto"
      [ "${PDL_AB:-0}" = 1 ] && modes="auto 0 1"
      for m in $modes; do
        if [ "$m" = auto ]; then
          $E bench --auto --wisdom "${WISDOM:-wisdom}" --dtype $dt --op $op --batch $b --shapes "$shapes" --runs "$RUNS" --format jsonl ${ENGINE_ARGS:-} >"$OUTDIR/wisdom-$tag.jsonl" 2>"$OUTDIR/wisdom-$tag.err" </dev/null
          sed 's/^{/{"set":"wisdom",/' "$OUTDIR/wisdom-$tag.jsonl" >>"$rows"
        else
          ENGINE_PDL=$m $E bench --auto --wisdom "${WISDOM:-wisdom}" --dtype $dt --op $op --batch $b --shapes "$shapes" --runs "$RUNS" --format jsonl ${ENGINE_ARGS:-} >"$OUTDIR/wisdom-$tag-pdl$m.jsonl" 2>"$OUTDIR/wisdom-$tag-pdl$m.err" </dev/null
          sed "s/^{/{\"set\":\"wisdom\",\"pdl_forced\":$m,/" "$OUTDIR/wisdom-$tag-pdl$m.jsonl" >>"$rows"
        fi
      done
    done <"$OUTDIR/wisdom-groups.txt"
  else
    echo "regress: no wisdom file $W for this GPU: wisdom rows skipped"
  fi
fi

python3 - "$rows" "$BASE" "${CHECK:-0}" "${UPDATE:-0}" "$name" <<'PY'
import json, os, re, subprocess, sys, time
rows_path, base_path, check, update, device = sys.argv[1:6]
rows = [json.loads(l) for l in open(rows_path) if l.startswith("{")]

def forced(r):
    """Which PDL the row was forced to: None (the config's own choice), 0 or 1. A wisdom row is
    forced only by ENGINE_PDL (pdl_forced): an entry's own PDL in its set is its choice."""
    if "pdl_forced" in r or r["set"] == "wisdom":
        return r.get("pdl_forced")
    m = re.search(r"[\[,]PDL=([01])[\],]", r["config"])
    return int(m.group(1)) if m else None

def base_name(r):
    return re.sub(r"\[PDL=[01]\]$", "", re.sub(r",PDL=[01]\]", "]", r["config"]))

# cuBLAS per (set, dtype, shape, op, batch, forced): the row that follows a group in the same invocation.
def lay(r):
    return r.get("op", "NN"), int(r.get("batch", 1))
cub = {}
for r in rows:
    if r["config"] == "cublas":
        cub[(r["set"], r["dtype"], r["M"], r["N"], r["K"]) + lay(r) + (r.get("pdl_forced"),)] = r
def key_of(r):
    """A row's name: a wisdom entry's dtype and shape, and its op and batch where they are not NN and
    one product (an entry is timed as it was recorded); a config's name and shape."""
    shape = f'{r["M"]}x{r["N"]}x{r["K"]}'
    op, b = lay(r)
    more = ("" if op == "NN" else f" {op}") + ("" if b == 1 else f" batch {b}")
    return f'wisdom {r["dtype"]} {shape}{more}' if r["set"] == "wisdom" else f'{base_name(r)} {shape}'

now, ab = {}, {}
bad_rows = []
for r in rows:
    if r["template"] == "cublas":  # cuBLAS's rows: SGEMM / DGEMM, and FAST_TF32 beside tf32-class configs
        continue
    c = cub.get((r["set"], r["dtype"], r["M"], r["N"], r["K"]) + lay(r) + (r.get("pdl_forced"),))
    k = key_of(r)
    if r["status"] != "ok" or not c or r["ms"] <= 0:
        bad_rows.append((k, r["status"]))
        continue
    ratio = c["ms"] / r["ms"]
    spread = 0.5 * (r["ms_max"] - r["ms_min"]) / r["ms"] + 0.5 * (c["ms_max"] - c["ms_min"]) / c["ms"]
    rec = {"key": k, "config": r["config"], "dtype": r["dtype"], "shape": f'{r["M"]}x{r["N"]}x{r["K"]}',
           "ratio": round(ratio, 4), "spread": round(spread, 4), "ms": r["ms"], "cublas_ms": c["ms"],
           "clock_mhz": r["clock_mhz"], "cublas_clock_mhz": c.get("clock_mhz", 0), "pdl": r.get("pdl")}
    f = forced(r)
    if f is None:
        now[k] = rec
    else:
        ab.setdefault(k, {})[f] = rec

base = {}
if os.path.exists(base_path):
    for i, l in enumerate(open(base_path), 1):
        if not l.strip():
            continue
        try:
            b = json.loads(l)
            base[b["key"]] = b
        except (ValueError, KeyError) as e:
            print(f"{base_path}:{i}: not a baseline row ({e}): fix or regenerate it with UPDATE=1")
            sys.exit(2)

drops, missing, changed = [], [], []
print(f"\n{'row':<58} {'base':>6} {'now':>6} {'change':>7} {'allowed':>7} {'pdl':>4}"
      + (f" {'PDL off':>7} {'PDL on':>7}" if ab else "") + "  verdict")
for k in sorted(set(now) | set(base), key=lambda k: (k.startswith("wisdom"), k)):
    n, b = now.get(k), base.get(k)
    if not n:
        missing.append(k)
        continue
    extra = ""
    if ab:
        a = ab.get(k, {})
        extra = " " + " ".join(f"{a[m]['ratio']:7.3f}" if m in a else f"{'-':>7}" for m in (0, 1))
    pdl = {True: "on", False: "off", None: "-"}[n.get("pdl")]
    if not b:
        print(f"{k[:58]:<58} {'-':>6} {n['ratio']:6.3f} {'':>7} {'':>7} {pdl:>4}{extra}  new")
        continue
    if k.startswith("wisdom") and b.get("config") != n["config"]:
        changed.append(k)
        print(f"{k[:58]:<58} {b['ratio']:6.3f} {n['ratio']:6.3f} {'':>7} {'':>7} {pdl:>4}{extra}  entry changed")
        continue
    change = n["ratio"] / b["ratio"] - 1
    allowed = max(0.03, 3 * max(n["spread"], b.get("spread", 0)))
    verdict = "DROP" if change < -allowed else "ok"
    if verdict == "DROP":
        drops.append(k)
    print(f"{k[:58]:<58} {b['ratio']:6.3f} {n['ratio']:6.3f} {100*change:6.1f}% {100*allowed:6.1f}% {pdl:>4}{extra}  {verdict}")
for k, st in bad_rows:
    print(f"{k[:58]:<58} {'':>6} {'':>6} {'':>7} {'':>7} {'':>4}  {st}")

if ab:
    slower = [k for k in now if 0 in ab.get(k, {}) and 1 in ab.get(k, {})
              and now[k]["ratio"] < ab[k][0]["ratio"] * (1 - max(0.03, 3 * now[k]["spread"]))]
    print(f"\nPDL: {len(slower)} rows slower with their own PDL choice than with PDL off"
          + (": " + ", ".join(slower) if slower else ""))
print(f"\nregress: {len(now)} rows timed, {len(base)} in the baseline: {len(drops)} dropped, "
      f"{len(missing)} missing now, {len(changed)} wisdom entries changed, {len(bad_rows)} not ok")
for k in missing:
    print(f"  missing now: {k}")
if update == "1":
    os.makedirs(os.path.dirname(base_path) or ".", exist_ok=True)
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = ""
    stamp = time.strftime("%Y-%m-%d", time.gmtime())
    with open(base_path, "w") as f:
        for k in sorted(now):
            f.write(json.dumps(dict(now[k], device=device, date=stamp, commit=commit), sort_keys=True) + "\n")
    print(f"regress: wrote {len(now)} rows to {base_path}")
if check == "1" and (drops or bad_rows):
    sys.exit(1)
PY
