#!/usr/bin/env bash
# Every shipped config compiled by NVRTC for sm_80, sm_86, sm_90 and sm_90a (no GPU needed): each must
# compile, and its resource table (registers, stack, spills, shared memory) is printed. Spills are
# reported, not failed: several published walk steps spill by design of their register budget.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
E=${BUILD:-build}/engine
configs=(configs/*.json)
for arch in sm_80 sm_86 sm_90 sm_90a; do
  echo "== $arch"
  out=$($E compile "${configs[@]}" --arch $arch 2>&1)
  rc=$?
  printf '%s\n' "$out" | sed 's/^/  /'
  [ "$rc" = 0 ] || fail "compile matrix $arch exits $rc"
  for c in "${configs[@]}"; do
    name=$(basename "$c" .json)
    if printf '%s\n' "$out" | grep -q "^$name .* $arch "; then pass "$arch $name"; else fail "$arch $name did not compile"; fi
  done
  spills=$(printf '%s\n' "$out" | awk 'NR > 1 && $1 != "compile:" && $8 + $9 > 0 {print $1 " (" $8 "+" $9 " bytes)"}' | tr '\n' ' ')
  [ -n "$spills" ] && echo "  spills on $arch: $spills"
done
summary
