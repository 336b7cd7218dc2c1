#!/usr/bin/env bash
# The Python package's CPU tests (tests/python/test_engine.py): stride inference and argument errors on
# fake arrays, and the calls through build/libengine.so on a context without a GPU. Ends with
# "N passed, N failed" (", N skipped": the library's tests where build/libengine.so is missing).
set -u
cd "$(dirname "$0")/.."
if ! command -v python3 >/dev/null; then
  echo "SKIP python: no python3 on this machine (the package's tests need one)"
  echo "0 passed, 0 failed, 1 skipped"
  exit 0
fi
export ENGINE_LIB=${ENGINE_LIB:-$PWD/${BUILD:-build}/libengine.so}
# A library built with the sanitizers (make sanitize) needs their runtimes loaded first in python3,
# whose own allocations are not this project's leaks.
pre=$(ldd "$ENGINE_LIB" 2>/dev/null | awk '/lib(asan|ubsan)\.so/ {print $3}' | tr '\n' ' ')
[ -n "$pre" ] && export LD_PRELOAD="$pre" ASAN_OPTIONS=detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
python3 -m unittest -v tests/python/test_engine.py >"$log" 2>&1
rc=$?
pass=$(grep -c ' \.\.\. ok$' "$log")
fail=$(grep -cE ' \.\.\. (FAIL|ERROR)$' "$log")
skip=$(grep -c ' \.\.\. skipped' "$log")
[ "$rc" != 0 ] && [ "$fail" = 0 ] && fail=1
# One line a test, as tests/lib.sh prints checks: ok, FAIL, or SKIP with unittest's reason.
sed -nE -e "s/^(.*) \.\.\. ok$/  ok    \1/p" -e "s/^(.*) \.\.\. (FAIL|ERROR)$/  FAIL  \1/p" \
  -e "s/^(.*) \.\.\. skipped '?([^']*)'?$/  SKIP  \1 (\2)/p" "$log"
[ "$fail" -gt 0 ] && sed -n '/^=====/,$p' "$log"
if [ "$skip" -gt 0 ]; then echo "$pass passed, $fail failed, $skip skipped"; else echo "$pass passed, $fail failed"; fi
[ "$fail" -eq 0 ]
