# tests/lib.sh — counting helpers shared by the test scripts. Source it; call check_rc/pass/fail/skip,
# then summary, which prints the `N passed, N failed, N skipped` line and returns non-zero when
# anything failed.
PASSED=0
FAILED=0
SKIPPED=0
FAILED_NAMES=()
SKIPPED_NAMES=()
pass() { PASSED=$((PASSED + 1)); printf '  ok    %s\n' "$1"; }
fail() { FAILED=$((FAILED + 1)); FAILED_NAMES+=("$1"); printf '  FAIL  %s\n' "$1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/        /'; return 0; }
# skip NAME WHY: a check that could not run here (a tool missing); counted, never a pass.
skip() { SKIPPED=$((SKIPPED + 1)); SKIPPED_NAMES+=("$1 ($2)"); printf '  SKIP  %s (%s)\n' "$1" "$2"; }
# check NAME EXPECTED_RC ACTUAL_RC [detail]
check_rc() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1 (exit $3, expected $2)" "${4:-}"; fi; }
summary() {
  echo
  if [ "$SKIPPED" -gt 0 ]; then
    echo "skipped:"; for n in "${SKIPPED_NAMES[@]}"; do echo "  $n"; done
  fi
  if [ "$FAILED" -gt 0 ]; then
    echo "failed:"; for n in "${FAILED_NAMES[@]}"; do echo "  $n"; done
  fi
  echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
  [ "$FAILED" -eq 0 ]
}
