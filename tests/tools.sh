#!/usr/bin/env bash
# The analysis tools under tools/ on fixtures with known answers (no GPU, no CUDA toolkit needed).
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
if ! command -v python3 >/dev/null; then
  echo "  skipped: python3 not found (tools/fma_operands.py needs it)"
  summary
  exit
fi
fx=tests/fixtures/reuse.sass
out=$(python3 tools/fma_operands.py "$fx" 2>&1)
check_rc "fma_operands.py on a listing" 0 $? "$out"
# k_fma: the first DFMA reads 3 registers; the second gets R30 from the reuse cache (2); the LDS in
# between keeps the cache, but the third DFMA's slots were not kept by the second (3); the fourth
# gets R24 back (2); an immediate and a constant-bank operand are not register reads (2, 2).
want="| $fx | k_fma | 6 | 0/0/4/2 | 33.3% |"
row=$(grep -F "| k_fma |" <<<"$out")
[ "$row" = "$want" ] && pass "three-read FMAs counted with the reuse cache" || fail "k_fma row" "got:  $row
want: $want"
grep -q "k_none" <<<"$out" && fail "a kernel without FMAs is listed" "$out" || pass "kernels without FMAs are left out"
python3 tools/fma_operands.py >/dev/null 2>&1
check_rc "no FILE: usage, exit 1" 1 $?
summary
