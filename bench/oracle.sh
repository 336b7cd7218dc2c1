#!/usr/bin/env bash
# The oracle of selection: at each shape, every entry of this GPU's shipped wisdom of the dtype
# (its config with its overrides) is timed beside cuBLAS, and the best of them counts. What --auto
# could reach if it always chose right among what is shipped (bench/shapes.sh does the timing and
# the summary; the full rows, every entry at every shape, are what selection models are fitted on).
#   SEED=S RANDOM=N bash bench/oracle.sh     at N random shapes of seed S (bench/random_shapes.sh)
#   SUITE=file bash bench/oracle.sh          at the shapes of a suite file
#   DTYPES=f32  RUNS=5 (default)  WISDOM_FILE=wisdom/<device>.json  OUT=dir (default build/oracle)
#   ENGINE_ARGS="--op NT"                  every entry timed in that op (one product; entries that
#                                          refuse the op by a declared rule give error rows)
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh
E=${ENGINE_BIN:-build/engine}
[ -x "$E" ] || { echo "oracle: $E is missing: run make first"; exit 2; }
OUTDIR=${OUT:-build/oracle}
mkdir -p "$OUTDIR"
if [ -z "${WISDOM_FILE:-}" ]; then
  name=$(device_name "$E")
  [ -n "$name" ] || { echo "oracle: no GPU found, and no WISDOM_FILE given"; exit 2; }
  WISDOM_FILE=wisdom/$(slug "$name").json
fi
[ -f "$WISDOM_FILE" ] || { echo "oracle: no wisdom file $WISDOM_FILE"; exit 2; }
# RANDOM as the caller gave it (bash's own $RANDOM is a new random number at every read).
NRANDOM=$(tr '\0' '\n' </proc/$$/environ 2>/dev/null | sed -n 's/^RANDOM=//p')
rc=0
for dt in ${DTYPES:-f32 f64}; do
  list=$OUTDIR/entries-$dt.list
  # One line per distinct (config, overrides): the same tile chosen at several shapes runs once.
  python3 - "$WISDOM_FILE" "$dt" "$PWD" >"$list" <<'PY'
import json, sys
path, dt, root = sys.argv[1:4]
seen = set()
for e in json.load(open(path))["entries"]:
    if e["dtype"] != dt:
        continue
    line = " ".join([f'{root}/{e["config"]}'] + [f"{k}={v}" for k, v in e.get("set", {}).items()])
    if line not in seen:
        seen.add(line)
        print(line)
PY
  [ -s "$list" ] || continue
  env ${NRANDOM:+RANDOM=$NRANDOM} OUT=$OUTDIR DTYPES=$dt RUNS=${RUNS:-5} bash bench/shapes.sh "@$list"
  r=$?
  [ $r -gt $rc ] && rc=$r
done
exit $rc
