#!/usr/bin/env bash
# What the selection costs the host: engine pick over 64 random shapes (bench/random_shapes.sh 99 64)
# per dtype, three times, on the CPU (no GPU needed). Prints the median microseconds a shape of the
# lookups alone (the candidates' loading, once per run, is printed beside it). Target (issue 22):
# at most 50 us a shape; CHECK=1 exits 1 when the median is above it.
#   bash bench/pick_cost.sh        ARCH=sm_90 (default)  SMS=132 (default)
set -u
cd "$(dirname "$0")/.."
E=${ENGINE_BIN:-build/engine}
[ -x "$E" ] || { echo "pick_cost: $E is missing: run make first"; exit 2; }
shapes=$(bash bench/random_shapes.sh 99 64 | paste -sd, -)
rc=0
for dt in f32 f64; do
  for i in 1 2 3; do
    $E pick --arch "${ARCH:-sm_90}" --sms "${SMS:-132}" --dtype $dt --shapes "$shapes" | sed -n 's/^pick: \(.*candidates (loaded in [0-9.]* ms)\)/\1/p; s/^pick: 64 shapes in [0-9.]* ms, \([0-9.]*\) us a shape/\1/p'
  done | python3 -c "
import sys
lines = sys.stdin.read().split('\n')
us = sorted(float(l) for l in lines if l.replace('.', '', 1).isdigit())
load = [l for l in lines if 'candidates' in l]
med = us[len(us) // 2] if us else float('inf')
print(f'$dt: {med:.1f} us a shape (median of {len(us)} runs of 64 shapes); {load[0] if load else \"?\"}')
if '${CHECK:-0}' == '1':
    print(f'  {\"met   \" if med <= 50 else \"MISSED\"}  at most 50 us a shape')
    sys.exit(0 if med <= 50 else 1)
" || rc=1
done
exit $rc
