#!/usr/bin/env bash
# Leave-one-out over the shipped suite: for each entry of this GPU's wisdom file, the entry is taken
# out, the selection model (engine pick) chooses for its shape from the rest, and the choice is timed
# beside the entry's own config at that shape, in the same run. The figure is the entry's time over
# the choice's (1.0: the model found a config as fast as the one tuned there), per shape, with the
# geometric mean and the minimum per dtype. Targets (issue 22): geomean >= 0.95, none below 0.8;
# CHECK=1 exits 1 when missed.
#   bash bench/leave_one_out.sh          DTYPES="f32 f64" (default)  RUNS=5 (default)
# The file's .dev-seeds.json (measured points) is weighed too, as --auto does.
# Full rows go to $OUT (default build/loo). Needs a GPU and the prebuilt build/engine; DEVICE and
# WISDOM_FILE stand in for the GPU's name and file (tests, with the fake worker).
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh
E=${ENGINE_BIN:-build/engine}
[ -x "$E" ] || { echo "leave_one_out: $E is missing: run make first"; exit 2; }
OUTDIR=${OUT:-build/loo}
mkdir -p "$OUTDIR"
name=$(device_name "$E")
[ -n "$name" ] || { echo "leave_one_out: no GPU found"; exit 2; }
slug=$(slug "$name")
W=${WISDOM_FILE:-wisdom/$slug.json}
[ -f "$W" ] || { echo "leave_one_out: no wisdom file $W"; exit 2; }
rc=0
for dt in ${DTYPES:-f32 f64}; do
  rows=$OUTDIR/loo-$dt.jsonl
  : >"$rows"
  n=$(python3 -c "import json,sys; print(sum(e['dtype']==sys.argv[2] for e in json.load(open(sys.argv[1]))['entries']))" "$W" "$dt")
  for ((i = 0; i < n; i++)); do
    d=$OUTDIR/wisdom-$dt-$i
    rm -rf "$d"
    mkdir -p "$d"
    # The file without entry i of the dtype (configs made absolute: the copy lies elsewhere); the
    # entry's own config and overrides as a list line.
    shape=$(python3 - "$W" "$dt" "$i" "$d" "$PWD" <<'PY'
import json, os, sys
path, dt, i, d, root = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
w = json.load(open(path))
mine = [e for e in w["entries"] if e["dtype"] == dt]
e = mine[i]
base = os.path.dirname(os.path.abspath(path))
for x in w["entries"]:  # as the engine resolves them (pick.c): from here, else beside wisdom/
    if not x["config"].startswith("/"):
        here = os.path.join(root, x["config"])
        x["config"] = os.path.normpath(here if os.path.exists(here) else os.path.join(base, "..", x["config"]))
w["entries"] = [x for x in w["entries"] if x is not e]
json.dump(w, open(os.path.join(d, os.path.basename(path)), "w"), indent=1)
# The measured points beside the tuned file (<device>.dev-seeds.json) are part of what the model
# weighs: copied too, configs made absolute the same way.
pts = path[:-len(".json")] + ".dev-seeds.json"
if os.path.exists(pts):
    p = json.load(open(pts))
    for x in p["entries"]:
        if not x["config"].startswith("/"):
            here = os.path.join(root, x["config"])
            x["config"] = os.path.normpath(here if os.path.exists(here) else os.path.join(base, "..", x["config"]))
    json.dump(p, open(os.path.join(d, os.path.basename(pts)), "w"), indent=1)
with open(os.path.join(d, "own.list"), "w") as f:
    f.write(" ".join([e["config"]] + [f"{k}={v}" for k, v in e.get("set", {}).items()]) + "\n")
print(e["shape"])
PY
)
    $E pick --wisdom "$d" --device-name "$name" --dtype "$dt" --shapes "$shape" --format jsonl ${PICK_ARGS:-} >"$d/pick.jsonl" 2>"$d/pick.err"
    python3 - "$d/pick.jsonl" >>"$d/own.list" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
print(" ".join([r["config"]] + [f"{k}={v}" for k, v in r["set"].items()]))
PY
    $E bench "@$d/own.list" --dtype "$dt" --shapes "$shape" --runs "${RUNS:-5}" --format jsonl ${ENGINE_ARGS:-} 2>"$d/bench.err" |
      python3 -c "
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.startswith('{')]
mine = [r for r in rows if r['config'] != 'cublas']
print(json.dumps({'shape': sys.argv[1], 'own': mine[0] if mine else None, 'chosen': mine[1] if len(mine) > 1 else mine[0] if mine else None,
                  'same': len(mine) == 1}))" "$shape" >>"$rows"
  done
  python3 - "$rows" "$dt" "${CHECK:-0}" <<'PY' || rc=1
import json, math, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
dt = sys.argv[2]
print(f"\n{dt}: {'shape':>20} {'own':>10} {'chosen':>10} {'ratio':>6}  chosen config")
ratios = []
for r in rows:
    o, c = r["own"], r["chosen"]
    if not o or not c or o["status"] != "ok" or c["status"] != "ok":
        print(f"{dt}: {r['shape']:>20} {'-':>10} {'-':>10} {0:6.2f}  (a row is missing or failed)")
        ratios.append(0.0)
        continue
    q = o["ms"] / c["ms"]
    ratios.append(q)
    name = "(the same config)" if r["same"] else c["config"]
    print(f"{dt}: {r['shape']:>20} {o['ms']*1e3:9.1f}u {c['ms']*1e3:9.1f}u {q:6.2f}  {name[:60]}")
pos = [x for x in ratios if x > 0]
g = math.exp(sum(map(math.log, pos)) / len(pos)) if pos else 0
print(f"{dt}: leave-one-out over {len(ratios)} entries: geometric mean {g:.3f} of the entries' own times, minimum {min(ratios):.3f}")
if sys.argv[3] == "1":
    ok = g >= 0.95 and min(ratios) >= 0.8
    print(f"  {'met   ' if ok else 'MISSED'}  {dt} leave-one-out geomean {g:.3f} (target 0.95), minimum {min(ratios):.3f} (target 0.8)")
    sys.exit(0 if ok else 1)
PY
done
exit $rc
