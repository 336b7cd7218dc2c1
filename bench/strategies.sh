#!/usr/bin/env bash
# Search strategies compared on a landscape measured once on the GPU and replayed on the CPU: the
# fake worker (tests/fake_worker.py, FAKE_REPLAY) answers every point with the stage-1 time the
# exhaustive tune logged for it. For each seed, random and guided search get the same budget (a
# quarter of the feasible points by default); a run succeeds when its winner is within 3% of the
# exhaustive best. NVRTC still compiles each point (once: the cache serves later seeds).
#   bash bench/strategies.sh [LOG] [SEEDS] [BUDGET]
#   default LOG: bench/data/h100-warptile-4096.jsonl (tune/warptile.json at 4096^3, H100, 2026-11-22)
set -u
cd "$(dirname "$0")/.."
LOG=${1:-bench/data/h100-warptile-4096.jsonl}
SEEDS=${2:-20}
E=build/engine
export ENGINE_WORKER=$PWD/tests/fake_worker.py FAKE_REPLAY=$PWD/$LOG
best=$(python3 -c "
import json
print(min(r['ms'] for r in map(json.loads, open('$LOG')) if r['stage'] == 1 and r['status'] == 'ok'))")
feasible=$(python3 -c "
import json
print(sum(1 for r in map(json.loads, open('$LOG')) if r['stage'] == 1 and r['status'] == 'ok'))")
BUDGET=${3:-$((feasible / 4))}
echo "landscape: $LOG, $feasible points, best stage-1 time $best ms; budget $BUDGET"
for strategy in random guided; do
  ok=0
  for seed in $(seq 1 "$SEEDS"); do
    ms=$($E tune tune/warptile.json --arch sm_90 --strategy $strategy --budget "$BUDGET" --seed "$seed" --top 1 |
      sed -n 's/^best at [0-9x]*: [0-9.]* TFLOP\/s, \([0-9.]*\) ms.*/\1/p')
    awk -v m="$ms" -v b="$best" 'BEGIN { exit !(m != "" && m <= b / 0.97) }' && ok=$((ok + 1))
  done
  echo "$strategy: within 3% of the best in $ok of $SEEDS seeds"
done
