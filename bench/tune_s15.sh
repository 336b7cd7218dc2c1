#!/usr/bin/env bash
# Session 15's device call: one run on one Hopper GPU (an H200: no H100 is lent) with the prebuilt
# build/engine, about 8 minutes, in three phases, each under its own deadline:
#   a  tc32ws_3x tuned (tune/tc32ws_suite.json) at the tuned-on FP32 workloads' few-token layers
#      (bench/workloads/{llama7b,llama13b,tinyllama}_f32.json: NT at 8-512 tokens, NN dX and TN dW at
#      512; issue 39's weak class), --auto timed at the same shapes first (what wisdom runs there today)
#   b  FP64 at a narrowest side of 17-128 (issue 42): --auto with the shipped wisdom and with it less
#      the entries bench/merge_s15.py narrow derived from session 14's rows, at those rows' shapes, the
#      next 12 of each design seed (bench/narrow_f64.sh --shapes, COUNT 24) and the suite's of the class
#   c  tc32ws's shipped entries (four of them) beside --auto (the point's own config) at the
#      development seeds' FP32 points, tc32_3x's first (largest first), then split-K tiles', in chunks
#      of each op until the deadline: rows for bench/oracle_entries.py (stand-in rows)
# Everything lands in $OUT (default build/s15) and goes home as one archive, $OUT/s15.tgz (the device
# tool brings back a few files only); bench/merge_s15.py ARCHIVE turns it into data files and wisdom.
#   bash bench/tune_s15.sh                 run (GPU)
#   bash bench/tune_s15.sh --shapes        each phase's shapes, one "phase op shapes" line per list (no GPU)
# BUDGET_S (default 490): seconds from the start by which the last phase ends; A_S (230) and B_S (60):
# phase a's and b's shares. CHUNK (24): shapes of one op per engine call in phase c. ENGINE_ARGS: more
# options for every bench and tune (a dry run with tests/fake_worker.py: --arch sm_90a).
set -u
cd "$(dirname "$0")/.." || exit 2
E=${ENGINE_BIN:-build/engine}
O=${OUT:-build/s15}
WISDOM_H100=wisdom/nvidia-h100-80gb-hbm3.json

# phase_a_shapes OP: the workloads' distinct shapes of that op at 8-512 tokens (NT: M tokens; NN: the
# dX products, M tokens; TN: the dW products, K tokens), issue 39's tokens first, without the shapes a
# tc32ws entry already holds in that op (session 14 tuned the same space there); in NT two suite
# squares before them. Batched calls (attention) are left out: tc32ws's first launches are per product.
phase_a_shapes() {
  python3 - "$1" "$WISDOM_H100" <<'PY'
import json, sys
op, wpath = sys.argv[1], sys.argv[2]
have = {(e.get("op", "NN"), e["shape"]) for e in json.load(open(wpath))["entries"]
        if e["dtype"] == "f32" and "tc32ws" in e["config"]}
tokens = {"NT": (8, 32, 128, 512), "NN": (512,), "TN": (512,)}[op]
# First the suite's NT squares where costing tc32ws's first launches by their traffic moved engine
# pick off tc32ws (its nearest NT entries lie far): measured, they are exact either way.
out = ["2048x2048x2048", "4000x4000x4000"] if op == "NT" else []
for t in tokens:
    for f in ("llama7b", "llama13b", "tinyllama"):
        for c in json.load(open(f"bench/workloads/{f}_f32.json"))["calls"]:
            s = f"{c['m']}x{c['n']}x{c['k']}"
            if c["op"] == op and c.get("batch", 1) == 1 and (c["k"] if op == "TN" else c["m"]) == t \
                    and (op, s) not in have and s not in out:
                out.append(s)
print(",".join(out))
PY
}

# phase_b_shapes: issue 42's class, as bench/narrow_f64.sh lists it, 24 of each design seed, then the
# suite's shapes of the class (the model moves some of them to the new entries' configs).
phase_b_shapes() {
  { COUNT=24 bash bench/narrow_f64.sh --shapes; grep -v '^#' bench/suites/shapes.txt | python3 bench/shape_class.py "narrow 17-128" 50; } |
    awk 'NF && !seen[$0]++' | paste -sd, -
}

# phase_c_points: the development seeds' FP32 points that tc32ws could take, one "OP SEED SHAPE" a
# line in the order they are timed: tc32_3x's points (largest first), then split-K warp tiles' whose
# narrow side is 32 or more (largest first). gemv's and the thin ones' are left out (a read of one
# operand at memory speed: no tiles).
phase_c_points() {
  python3 - <<'PY'
import json, math, re
pts = []
for e in json.load(open("wisdom/nvidia-h100-80gb-hbm3.dev-seeds.json"))["entries"]:
    if e["dtype"] != "f32":
        continue
    m, n, k = map(int, e["shape"].split("x"))
    seed = re.search(r"random-(\d+)-oracle", e["source"]).group(1)
    cls = 0 if "tc32_3x" in e["config"] else 1 if "warptile_splitk" in e["config"] and min(m, n) >= 32 else None
    if cls is not None:
        pts.append((cls, -m * n * k, e.get("op", "NN"), seed, e["shape"]))
for p in sorted(pts):
    print(*p[2:])
PY
}

if [ "${1:-}" = "--shapes" ]; then
  for op in NT NN TN; do echo "a $op $(phase_a_shapes $op)"; done
  echo "b f64 $(phase_b_shapes)"
  phase_c_points | awk '{ s[$1] = s[$1] (s[$1] ? "," : "") $3; n[$1]++ } END { for (o in s) print "c " o " (" n[o] " points) " s[o] }' | sort
  exit 0
fi
[ $# -eq 0 ] || { echo "usage: bash bench/tune_s15.sh [--shapes]" >&2; exit 2; }
. bench/lib.sh
[ -x "$E" ] || { echo "tune_s15: $E is missing: build it first" >&2; exit 2; }
# The engine must be this tree's: tc32ws's launches declare "traffic", which an older one refuses.
"$E" compile configs/tc32ws_3x.json --arch sm_90a --no-cache >/dev/null 2>&1 ||
  { echo "tune_s15: $E cannot compile configs/tc32ws_3x.json: build this tree's engine first" >&2; exit 2; }
mkdir -p "$O/wisdom" "$O/old/wisdom"
export XDG_CACHE_HOME=${TMPDIR:-/tmp}/s15-cache XDG_DATA_HOME=${TMPDIR:-/tmp}/s15-data
t0=$(date +%s)
end=$((t0 + ${BUDGET_S:-490}))
left() { echo $(($1 - $(date +%s))); } # seconds to a deadline
device=$(device_name "$E")
echo "tune_s15: $device; rows in $O" | tee "$O/phases.txt"
"$E" info >"$O/info.txt" 2>&1
# log LABEL RC T0 SECS: a step's exit and seconds, in phases.txt and on the screen.
log() { echo "$1: exit $2 in $(($(date +%s) - $3)) s (limit $4 s)" | tee -a "$O/phases.txt"; }
# run_bench LABEL SECONDS OUTFILE ARGS...: engine bench's JSON lines, stamped with the date and the
# device, appended to OUTFILE; stopped after SECONDS (its worker goes with it: PDEATHSIG).
run_bench() {
  local label=$1 secs=$2 f=$3 t rc
  shift 3
  [ "$secs" -ge 5 ] || { echo "$label: skipped (no time left)" | tee -a "$O/phases.txt"; return 124; }
  t=$(date +%s)
  # shellcheck disable=SC2086 # ENGINE_ARGS: options, split at spaces
  timeout -k 10 "$secs" "$E" bench "$@" --format jsonl ${ENGINE_ARGS:-} 2>>"${f%.jsonl}.err" | stamp_rows "$device" >>"$f"
  rc=${PIPESTATUS[0]}
  log "$label" "$rc" "$t" "$secs"
  return "$rc"
}
# run_tune LABEL SECONDS OP LIST: phase a's tune of OP at LIST; winners into $O/wisdom (a fresh
# directory: every winner is kept), points into $O/tune-OP.jsonl. A tune stopped by the time limit
# keeps every finished shape's winner and points.
run_tune() {
  local label=$1 secs=$2 op=$3 list=$4 t rc
  [ "$secs" -ge 5 ] || { echo "$label: skipped (no time left)" | tee -a "$O/phases.txt"; return 124; }
  t=$(date +%s)
  # shellcheck disable=SC2086
  timeout -k 10 "$secs" "$E" tune tune/tc32ws_suite.json --op "$op" --shapes "$list" --runs 7 --top 4 --timeout 30 \
    --wisdom "$O/wisdom" --log "$O/tune-$op.jsonl" ${ENGINE_ARGS:-} >>"$O/tune-$op.txt" 2>&1
  rc=$?
  log "$label" "$rc" "$t" "$secs"
  return "$rc"
}
# untuned OP LIST: the shapes of LIST with no row in phase a's log of OP (a tune stops at a shape
# where every point fails; the rest are tuned again).
untuned() {
  python3 - "$O/tune-$1.jsonl" "$2" <<'PY'
import json, os, sys
done = set()
if os.path.exists(sys.argv[1]):
    for line in open(sys.argv[1]):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        done.add(f"{r.get('M')}x{r.get('N')}x{r.get('K')}")
print(",".join(s for s in sys.argv[2].split(",") if s and s not in done))
PY
}

# ---- a: tc32ws at the workloads' few-token layers -----------------------------------------------
a_end=$((t0 + ${A_S:-230}))
share=(NT:62 NN:16 TN:22) # percent of phase a per op, by its count of shapes; time one op leaves goes on
pct=0
for s in "${share[@]}"; do
  op=${s%:*}
  pct=$((pct + ${s#*:}))
  op_end=$((t0 + (a_end - t0) * pct / 100))
  list=$(phase_a_shapes "$op")
  [ -n "$list" ] || continue
  run_bench "a auto $op" $(($(left "$op_end") / 5)) "$O/auto-$op.jsonl" --auto --op "$op" --shapes "$list" --runs 7
  for try in 1 2 3; do
    rest=$(untuned "$op" "$list")
    [ -n "$rest" ] || break
    run_tune "a tune $op ($(echo "$rest" | tr , '\n' | wc -l) shapes, try $try)" "$(left "$op_end")" "$op" "$rest"
    [ "$(left "$op_end")" -gt 10 ] || break
  done
done

# ---- b: FP64 narrow, --auto with and without the entries derived from session 14's rows ----------
b_end=$(($(date +%s) + ${B_S:-60}))
[ "$b_end" -gt "$end" ] && b_end=$end
# The wisdom before those entries: the shipped files, the H100 file less them, configs beside it.
python3 - "$O/old/wisdom" <<'PY'
import glob, json, os, shutil, sys
for f in glob.glob("wisdom/*.json"):
    shutil.copy(f, sys.argv[1])
p = os.path.join(sys.argv[1], "nvidia-h100-80gb-hbm3.json")
w = json.load(open(p))
w["entries"] = [e for e in w["entries"] if "bench/narrow_f64.sh" not in e.get("source", "")]
json.dump(w, open(p, "w"), indent=1)
PY
ln -sfn "$PWD/configs" "$O/old/configs"
list=$(phase_b_shapes)
run_bench "b auto f64 (with the narrow entries)" $(($(left "$b_end") / 2)) "$O/f64-new.jsonl" \
  --auto --dtype f64 --shapes "$list" --runs 5
run_bench "b auto f64 (without them)" "$(left "$b_end")" "$O/f64-old.jsonl" \
  --auto --dtype f64 --shapes "$list" --runs 5 --wisdom "$O/old/wisdom"

# ---- c: tc32ws's entries at the development seeds' FP32 points -----------------------------------
c_end=$((end - 5))
printf '%s\n' "$PWD/configs/tc32ws_3x.json" "$PWD/configs/tc32ws_3x.json STAGES=4 BREG=1" \
  "$PWD/configs/tc32ws_3x.json STAGES=4 BREG=1 SPLITK=4" "$PWD/configs/tc32ws_3x.json BM=64 STAGES=4 BREG=1 SPLITK=4" \
  >"$O/tc32ws.list"
phase_c_points >"$O/dev-points.txt"
round=0
while [ "$(left "$c_end")" -gt 15 ]; do
  any=0
  for op in NN NT TN; do
    list=$(awk -v op="$op" -v r="$round" -v c="${CHUNK:-24}" '$1 == op { if (n >= r * c && n < (r + 1) * c) s = s (s ? "," : "") $3; n++ } END { print s }' "$O/dev-points.txt")
    [ -n "$list" ] || continue
    any=1
    [ "$(left "$c_end")" -gt 15 ] || break
    # --auto first: a tc32ws row counts only beside the point's own config (oracle_entries).
    run_bench "c $op round $round: --auto" $(($(left "$c_end") / 3)) "$O/dev-$op.jsonl" --auto --op "$op" --shapes "$list" --runs 5
    run_bench "c $op round $round: tc32ws" "$(left "$c_end")" "$O/dev-$op.jsonl" \
      "@$O/tc32ws.list" --op "$op" --shapes "$list" --runs 5
  done
  [ "$any" = 1 ] || break
  round=$((round + 1))
done

echo "tune_s15: done in $(($(date +%s) - t0)) s" | tee -a "$O/phases.txt"
python3 bench/merge_s15.py --summary "$O" >"$O/summary.txt" 2>&1
cp "$O/summary.txt" "${TMPDIR:-/tmp}/s15-summary.txt"
# The device tool brings back a few files only: everything goes home as one archive.
rm -rf "$O/old"
tar czf "${TMPDIR:-/tmp}/s15.tgz" -C "$O" . 2>/dev/null && rm -rf "${O:?}"/* && mv "${TMPDIR:-/tmp}/s15.tgz" "$O/"
ls -l "$O"
echo
cat "${TMPDIR:-/tmp}/s15-summary.txt"
