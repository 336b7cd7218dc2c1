# tests/lib.sh — counting helpers shared by the test scripts. Source it; call check/pass/fail, then
# summary, which prints the `N passed, N failed` line and returns non-zero when anything failed.
PASSED=0
FAILED=0
FAILED_NAMES=()
pass() { PASSED=$((PASSED + 1)); printf '  ok    %s\n' "$1"; }
fail() { FAILED=$((FAILED + 1)); FAILED_NAMES+=("$1"); printf '  FAIL  %s\n' "$1"; [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/        /'; return 0; }
# check NAME EXPECTED_RC ACTUAL_RC [detail]
check_rc() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1 (exit $3, expected $2)" "${4:-}"; fi; }
summary() {
  echo
  if [ "$FAILED" -gt 0 ]; then
    echo "failed:"; for n in "${FAILED_NAMES[@]}"; do echo "  $n"; done
  fi
  echo "$PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
}
