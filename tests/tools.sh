#!/usr/bin/env bash
# The analysis tools under tools/ on fixtures with known answers (no GPU, no CUDA toolkit needed).
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
if ! command -v python3 >/dev/null; then
  echo "  skipped: python3 not found (tools/fma_operands.py and sass_mix.py need it)"
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

# sass_mix.py: a loop runs from a backward branch's target to the branch; k_nested's outer loop
# holds its inner one, so only the inner is listed; the trap at the end (a branch to itself) is
# not a loop.
fx=tests/fixtures/loops.sass
out=$(python3 tools/sass_mix.py "$fx" 2>&1)
check_rc "sass_mix.py on a listing" 0 $? "$out"
grep -qF "$fx k_loop loop 0x0010-0x0060: 6 instructions, 2 FMAs (33.3%), 4 others" <<<"$out" &&
  pass "a loop's instructions and FMA share" || fail "k_loop line" "$out"
grep -qF "$fx k_nested loop 0x0020-0x0050: 4 instructions, 3 FMAs (75.0%), 1 others" <<<"$out" &&
  pass "only the innermost of nested loops" || fail "k_nested line" "$out"
[ "$(grep -c ' loop 0x' <<<"$out")" = 2 ] && pass "no other loops (a branch to itself is not one)" ||
  fail "loop count" "$out"
grep -qE '^ +1  LDS\.128$' <<<"$out" && pass "opcodes keep their modifiers" || fail "LDS.128 row" "$out"
python3 tools/sass_mix.py >/dev/null 2>&1
check_rc "sass_mix.py with no FILE: usage, exit 1" 1 $?
summary
