#!/usr/bin/env bash
# Invalid inputs as data: each folder of tests/configs/invalid/ holds a config.json (optional), an
# `args` line (default: compile CONFIG --arch sm_90; CONFIG is the folder's config.json), the exact
# last line the engine must print on stderr (`expected`; <repo> stands for the checkout's path)
# and, optionally, the exit code (`code`, default 2). Bad input must never reach the GPU, so these
# pass on machines without one: a bench that got as far as opening a GPU would exit 3 there.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
E=${BUILD:-build}/engine
repo=$(pwd -P)
for dir in tests/configs/invalid/*/; do
  case=${dir%/}
  name=${case##*/}
  args="compile CONFIG --arch sm_90"
  [ -f "$case/args" ] && args=$(cat "$case/args")
  args=${args//CONFIG/$case/config.json}
  want_code=2
  [ -f "$case/code" ] && want_code=$(cat "$case/code")
  # shellcheck disable=SC2086
  err=$(ENGINE_TEMPLATES=tests/templates:kernels_src $E $args 2>&1 >/dev/null)
  rc=$?
  got=$(printf '%s\n' "$err" | tail -n 1)
  got=${got//$repo/<repo>}
  if [ ! -f "$case/expected" ]; then
    fail "$name: no expected file; the engine printed: $got"
    continue
  fi
  want=$(cat "$case/expected")
  if [ "$rc" != "$want_code" ]; then
    fail "$name: exit $rc, expected $want_code" "$got"
  elif [ "$got" != "$want" ]; then
    fail "$name: wrong message" "got:  $got
want: $want"
  else
    pass "$name: $got"
  fi
done
summary
