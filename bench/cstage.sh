#!/usr/bin/env bash
# bench/cstage.sh — where C's tile should pass through shared memory (warptile's C_STAGE). With N not a
# multiple of VEC_C each thread's scalar stores of C touch a sector each; staging the tile makes
# consecutive threads store consecutive columns. At large K the stores are a small share and staging
# cost 7% at 4096x4095x4096 (docs/NOTES.md), so C_STAGE 2 stages only where K is odd too; at small K
# the stores are nearly all the work (a random shape, 2251x11601x4, ran at 0.20x cuBLAS unstaged).
# This times C_STAGE 0 against 1 for warptile_db and a 64 x 64 warptile_splitk tile at an odd N over
# K = 4 .. 2048, each beside cuBLAS, and prints the staged/unstaged time ratio per K.
#   bash bench/cstage.sh        RUNS=5 (default)  SHAPES="MxN" (default 2251x11601)  KS="4 16 ..."
# Logs (JSON Lines) in $OUT (default build/cstage). Needs a GPU and build/engine.
set -u
cd "$(dirname "$0")/.."
E=${ENGINE_BIN:-build/engine}
[ -x "$E" ] || { echo "cstage: $E is missing: run make first"; exit 2; }
OUTDIR=${OUT:-build/cstage}
mkdir -p "$OUTDIR"
KS=${KS:-4 8 16 32 64 128 256 512 1024 2048}
shapes=$(for mn in ${SHAPES:-2251x11601}; do for k in $KS; do printf '%sx%s,' "$mn" "$k"; done; done)
shapes=${shapes%,}
SPLITK_TILE="--set BM=64 --set BN=64 --set BK=16 --set WN=32 --set WNITER=1 --set TM=2 --set TN=4 --set THREADS=128 --set MINB=4 --set SPLITK=1"
rc=0
for cs in 0 1; do
  "$E" bench configs/warptile_db.json --set C_STAGE=$cs --shapes "$shapes" --runs "${RUNS:-5}" --format jsonl \
    >"$OUTDIR/db-$cs.jsonl" 2>"$OUTDIR/db-$cs.err" || rc=1
  # shellcheck disable=SC2086 # the --set words split on purpose
  "$E" bench configs/warptile_splitk.json $SPLITK_TILE --set C_STAGE=$cs --shapes "$shapes" --runs "${RUNS:-5}" \
    --format jsonl >"$OUTDIR/sk-$cs.jsonl" 2>"$OUTDIR/sk-$cs.err" || rc=1
done
python3 - "$OUTDIR" <<'PY'
import json, sys
d = sys.argv[1]
def load(f):
    out = {}
    for l in open(f"{d}/{f}"):
        if l.startswith("{"):
            r = json.loads(l)
            out[(r["M"], r["N"], r["K"], r["config"] == "cublas")] = r
    return out
print(f"{'kernel':<16} {'shape':>16} {'unstaged ms':>11} {'staged ms':>10} {'staged/unstaged':>15} {'x cuBLAS (0 / 1)':>17}")
for k in ("db", "sk"):
    a, b = load(f"{k}-0.jsonl"), load(f"{k}-1.jsonl")
    for key in sorted(x for x in a if not x[3]):
        r0, r1, c = a[key], b.get(key), a.get(key[:3] + (True,))
        if not r1 or r0["status"] != "ok" or r1["status"] != "ok":
            print(f"{k:<16} {'x'.join(map(str, key[:3])):>16} {r0['status']} / {r1['status'] if r1 else 'no row'}")
            continue
        name = "warptile_db" if k == "db" else "splitk 64x64"
        cx = f"{c['ms'] / r0['ms']:.2f} / {c['ms'] / r1['ms']:.2f}" if c else "-"
        print(f"{name:<16} {'x'.join(map(str, key[:3])):>16} {r0['ms']:11.4f} {r1['ms']:10.4f} {r1['ms'] / r0['ms']:15.3f} {cx:>17}")
PY
exit $rc
