#!/usr/bin/env bash
# `engine tune --devices all` against one GPU on the same space (issue 7: >= 1.7x faster on two
# GPUs), both with the CUBIN cache warm so that only the timing differs. Run on a host with
# several GPUs, with the prebuilt build/engine. Logs under $TUNE_OUT (default build/tune-gpus).
set -u
cd "$(dirname "$0")/.."
E=build/engine
OUT=${TUNE_OUT:-build/tune-gpus}
rm -rf "$OUT"
mkdir -p "$OUT"
export XDG_CACHE_HOME="$OUT/xdg"
SPACE=${SPACE:-tune/warptile.json}
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
nvidia-smi -L
echo "== warm the cache (every GPU)"
$E tune "$SPACE" --devices all --log "$OUT/warm.jsonl" >"$OUT/warm.txt" 2>&1 || { cat "$OUT/warm.txt"; exit 1; }
head -n 1 "$OUT/warm.txt"
secs() { date +%s.%N; }
run() { # name devices
  local t0 t1
  t0=$(secs)
  $E tune "$SPACE" --devices "$2" --log "$OUT/$1.jsonl" >"$OUT/$1.txt" 2>&1
  t1=$(secs)
  head -n 1 "$OUT/$1.txt" >&2
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
one=$(run one 0)
all=$(run all all)
speedup=$(awk -v a="$one" -v b="$all" 'BEGIN { printf "%.2f", a / b }')
per=$(python3 -c "
import json, collections
c = collections.Counter(json.loads(l)['device_index'] for l in open('$OUT/all.jsonl') if json.loads(l)['stage'] == 1)
print(', '.join('GPU %d: %d' % kv for kv in sorted(c.items())))")
echo
echo "device: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) x $ngpu; $(date -u +%Y-%m-%d)"
echo "| run | wall s | points per GPU |"
echo "|---|---:|---|"
echo "| --devices 0 | $one | |"
echo "| --devices all | $all | $per |"
echo "speedup $speedup (target >= 1.7)"
awk -v s="$speedup" 'BEGIN { exit !(s >= 1.7) }'
