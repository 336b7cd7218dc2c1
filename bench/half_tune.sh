#!/usr/bin/env bash
# BF16 wisdom for sm_90, judged at a fresh random seed, in one GPU call (about 6.5 minutes on an
# H200) with the prebuilt build/ (engine, libengine.so) and python3 with torch:
#   1  engine bench --auto --dtype DT at the judge seed's shapes (bench/random_shapes.sh SEED 60, op
#      NN) beside cuBLAS GemmEx, with the shipped wisdom (before: wisdom/sm_90.json's arch defaults,
#      hws and h04_tuned weighed by the model)
#   2  engine tune tune/hws_wide.json (BM 64/128/256, BN 128/256, STAGES 3-5, GROUP 8/16; guided,
#      BUDGET_PTS points a shape) --wisdom into a fresh directory (tuned/: every winner kept, none
#      weighed against wisdom/sm_90.json's estimates), then copied beside the shipped files: NT at the shipped bf16
#      workloads' distinct unbatched (m, n, k) of op NT (bench/workloads/*_bf16.json; 2 m n k <= CAP
#      FLOP), NN at theirs, the squares and odd sides (1000^3, 2048^3, 4096^3, 4095x4097x4099) and
#      the design seed's first DESIGN_N shapes (bench/random_shapes.sh DESIGN, a seed for design only:
#      docs/RESULTS.md, "Seeds used"), then TN at theirs; each op's tune under its share of the time
#      left (a stopped tune loses only the shape it was on: winners are recorded shape by shape)
#   3  step 1 again with the tuned copy (--wisdom): the judge figure, before and after, one run
#   4  bench/workload.py over the bf16 workloads (tuned on: bench/workloads/*_bf16.json; never
#      tuned on: bench/workloads/judge/*_bf16.json) with ENGINE_WISDOM the tuned copy, beside
#      torch.matmul
# Every step under `timeout`, inside BUDGET seconds in all (default 400). Everything lands in $OUT
# (default build/half-tune) as one archive, half-tune.tgz (the device tool brings back a few files),
# and summary.txt beside it. Merge the winners into the H100's file on this machine with
#   python3 bench/half_merge.py OUT/half-tune.tgz --date 2026-11-28
# (bench/half_merge.py says what it writes). Seeds: SEED (judge, default 16180339: never used
# before, not to be used again once judged), DESIGN (default 42042: design only, never judged).
set -u
cd "$(dirname "$0")/.." || exit 2
E=${ENGINE_BIN:-build/engine}
OUT=${OUT:-build/half-tune}
DT=${DT:-bf16}
SEED=${SEED:-16180339}
DESIGN=${DESIGN:-42042}
DESIGN_N=${DESIGN_N:-10}
CAP=${CAP:-220000000000}
BUDGET=${BUDGET:-400}
BUDGET_PTS=${BUDGET_PTS:-14}
RUNS=${RUNS:-5}
mkdir -p "$OUT"
W=$(mktemp -d "${TMPDIR:-/tmp}/half-tune.XXXXXX")
mkdir -p "$W/wis" "$W/tuned" "$W/cache" "$W/data"
cp wisdom/*.json "$W/wis/"
# A fresh CUBIN cache and no user wisdom: the shipped files and the tuned copy are all --auto reads.
export XDG_CACHE_HOME=$W/cache XDG_DATA_HOME=$W/data ENGINE_LIB=$PWD/build/libengine.so PYTHONUNBUFFERED=1
t0=$(date +%s)
el() { echo $(($(date +%s) - t0)); }
left() { # RESERVE [FRACTION%]: seconds for this step: FRACTION% of what the budget leaves beyond RESERVE (at least 10)
  local s=$(((BUDGET - $(el) - $1) * ${2:-100} / 100))
  [ "$s" -lt 10 ] && s=10
  echo "$s"
}
say() { echo "$*" | tee -a "$W/summary.txt"; }

say "== half_tune.sh: $DT on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1), $(date -u +%Y-%m-%dT%H:%MZ); judge seed $SEED (60 shapes, NN), design seed $DESIGN (first $DESIGN_N)"
JUDGE=$(bash bench/random_shapes.sh "$SEED" 60 | paste -sd, -)
DESIGNS=$(bash bench/random_shapes.sh "$DESIGN" "$DESIGN_N" | paste -sd, -)
# The workloads' distinct unbatched shapes of each op, under CAP FLOP, as OP=M1xN1xK1,... lines.
python3 - "$CAP" bench/workloads/*_bf16.json >"$W/workload-shapes.txt" <<'PY'
import json, sys
cap, seen = float(sys.argv[1]), {"NN": [], "NT": [], "TN": []}
for path in sys.argv[2:]:
    for c in json.load(open(path))["calls"]:
        s = f"{c['m']}x{c['n']}x{c['k']}"
        if c.get("batch", 1) == 1 and 2 * c["m"] * c["n"] * c["k"] <= cap and s not in seen[c["op"]]:
            seen[c["op"]].append(s)
for op, shapes in seen.items():  # the largest first: a tune stopped by its time loses the thinnest
    shapes.sort(key=lambda s: -eval(s.replace("x", "*")))
    print(f"{op}={','.join(shapes)}")
PY
sh_of() { sed -n "s/^$1=//p" "$W/workload-shapes.txt"; }
NT=$(sh_of NT)
NN=$(sh_of NN)
NN=${NN:+$NN,}1000x1000x1000,2048x2048x2048,4096x4096x4096,4095x4097x4099,$DESIGNS
TN=$(sh_of TN)
for op in NT NN TN; do
  v=${!op}
  say "tune $op: $(echo "$v" | tr , '\n' | grep -c x) shapes: $v"
done

auto() { # NAME WISDOM_DIR: the judge seed's shapes through --auto beside cuBLAS
  timeout "$(left "$3")" $E bench --auto --dtype "$DT" --shapes "$JUDGE" --runs "$RUNS" --format jsonl --wisdom "$2" \
    >"$W/judge-$1.jsonl" 2>"$W/judge-$1.err"
  say "judge $1: exit $? ($(el) s, $(grep -c '"status"' "$W/judge-$1.jsonl") rows)"
}

say "== 1 judge seed $SEED, shipped wisdom"
auto before wisdom 330

say "== 2 tune $DT (tune/hws_wide.json, guided, $BUDGET_PTS points a shape)"
tune() { # OP SHAPES FRACTION%
  timeout "$(left 150 "$3")" $E tune tune/hws_wide.json --dtype "$DT" --arch sm_90a --op "$1" --shapes "$2" \
    --strategy guided --budget "$BUDGET_PTS" --runs "$RUNS" --top 3 --wisdom "$W/tuned" --log "$W/tune-$DT-$1.jsonl" \
    >"$W/tune-$DT-$1.txt" 2>&1
  say "tune $1: exit $? ($(el) s), $(grep -c '^best at' "$W/tune-$DT-$1.txt") shapes recorded"
  grep '^best at' "$W/tune-$DT-$1.txt" | sed 's/ (cuBLAS: median.*//; s/, SM clock.*//' | tee -a "$W/summary.txt"
}
tune NT "$NT" 40
tune NN "$NN" 60
tune TN "$TN" 100

cp "$W"/tuned/*.json "$W/wis/" 2>/dev/null
say "tuned entries: $(cat "$W"/tuned/*.json 2>/dev/null | grep -c '"dtype"')"
say "== 3 judge seed $SEED, tuned wisdom"
auto after "$W/wis" 90

say "== 4 bf16 workloads beside torch.matmul, tuned wisdom"
ENGINE_WISDOM=$W/wis timeout "$(left 8)" python3 bench/workload.py bench/workloads/*_bf16.json bench/workloads/judge/*_bf16.json \
  --runs 10 --out "$W/workload-after.jsonl" >"$W/workload-after.txt" 2>&1
say "workloads: exit $? ($(el) s)"
sed -n '/^### geometric means/,$p' "$W/workload-after.txt" | grep '^|' | tee -a "$W/summary.txt"

say "== summary: the judge seed x cuBLAS GemmEx (geomean, min, over rows ok in both runs), choices changed"
python3 - "$W/judge-before.jsonl" "$W/judge-after.jsonl" <<'PY' | tee -a "$W/summary.txt"
import json, math, sys
def rows(p):
    out = {}
    for line in open(p):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r, dict) and "M" in r and r.get("status") == "ok" and r.get("pct_cublas"):
            out[(r["M"], r["N"], r["K"], r.get("op", "NN"))] = r
    return out
b, a = rows(sys.argv[1]), rows(sys.argv[2])
both = sorted(set(b) & set(a))
for name, d in (("before", b), ("after", a)):
    xs = [d[k]["pct_cublas"] / 100 for k in both]
    if xs:
        g = math.exp(sum(map(math.log, xs)) / len(xs))
        lo = min(both, key=lambda k: d[k]["pct_cublas"])
        print(f"{name}: {g:.3f}x geomean over {len(xs)} shapes, min {min(xs):.3f}x at {'x'.join(map(str, lo[:3]))} ({d[lo]['config']})")
ch = [k for k in both if b[k]["config"] != a[k]["config"]]
print(f"{len(ch)} of {len(both)} choices changed; rows ok before {len(b)}, after {len(a)} of 60")
PY
say "total $(el) s"
cp "$W/summary.txt" "$OUT/summary.txt"
rm -rf "$W/cache" "$W/data" "$W/wis"  # wis: the shipped files and tuned/'s, nothing of its own
tar czf "$OUT/half-tune.tgz" -C "$W" . && rm -rf "$W"
ls -l "$OUT"
