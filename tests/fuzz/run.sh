#!/usr/bin/env bash
# make fuzz: run every harness of build-fuzz for FUZZ_SECONDS each (default 60), each with a corpus
# seeded from the repository: shipped and invalid configs, templates, spaces, a measured tune log,
# cache entries made by the engine, the shipped wisdom, and tests/fuzz/seeds. A crash, a leak,
# undefined behaviour or a broken round trip fails the harness, and so does a process that ran no
# input at all; the input that did it is kept in build-fuzz/crash-*. Corpora persist in
# build-fuzz/corpus between runs. Ends with "N passed, N failed, N skipped".
# A long campaign: FUZZ_RUNS=N runs N executions per harness in all (no time limit unless
# FUZZ_SECONDS is also given), split over FUZZ_JOBS processes sharing the corpus; FUZZ_ONLY="a b"
# runs only those harnesses. Example: make fuzz FUZZ_RUNS=10000000 FUZZ_JOBS=8
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
F=build-fuzz
T=${FUZZ_SECONDS:-60}
RUNS=${FUZZ_RUNS:-}
JOBS=${FUZZ_JOBS:-1}
ONLY=${FUZZ_ONLY:-}
E=${BUILD:-build}/engine
seed() { # harness files...: copy seeds into its corpus
  local dir=$F/corpus/$1
  shift
  mkdir -p "$dir"
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$dir/$(echo "$f" | tr '/' '_')"; done
}
seed config configs/*.json tests/configs/invalid/*/config.json tests/configs/gpu/*.json tests/configs/tune/toy.json \
  tests/fuzz/seeds/config/*
seed template kernels_src/*.cu tests/templates/*.cu
seed space tune/*.json tests/configs/tune/*.json tests/fuzz/seeds/space/*
seed expr tests/fuzz/seeds/expr/*
seed range tests/fuzz/seeds/range/*
seed wisdom wisdom/*.json tests/fixtures/wisdom/invalid/*/wisdom.json tests/fuzz/seeds/wisdom/*
mkdir -p "$F/corpus/result" "$F/corpus/cache"
head -n 40 bench/data/h100-warptile-4096.jsonl | split -l 1 - "$F/corpus/result/h100-"
if [ -x "$E" ] && [ -z "$(ls "$F/corpus/cache")" ]; then
  $E compile configs/tiled.json configs/naive.json --arch sm_90 --cache "$F/seedcache" >/dev/null 2>&1
  find "$F/seedcache" -type f -name '[0-9a-f]*' -exec cp {} "$F/corpus/cache/" \;
fi
for h in "$F"/fuzz_*; do
  [ -x "$h" ] || continue
  name=${h##*/fuzz_}
  [ -n "$ONLY" ] && [[ " $ONLY " != *" $name "* ]] && continue
  dict=""
  case $name in config | template | space | result | wisdom) dict=-dict=tests/fuzz/json.dict ;; esac
  limit="-max_total_time=$T"
  if [ -n "$RUNS" ]; then
    limit="-runs=$(((RUNS + JOBS - 1) / JOBS))"
    [ -n "${FUZZ_SECONDS:-}" ] && limit="$limit -max_total_time=$T"
  fi
  start=$(date +%s)
  pids=()
  for j in $(seq 1 "$JOBS"); do
    # shellcheck disable=SC2086
    "$h" $limit -print_final_stats=1 -timeout=10 -rss_limit_mb=4096 -artifact_prefix="$F/crash-$name-" \
      $dict "$F/corpus/$name" >"$F/$name.$j.log" 2>&1 &
    pids+=($!)
  done
  rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=$?; done
  secs=$(($(date +%s) - start))
  # Executions of each process: libFuzzer's "Done N runs" line, else its "#N DONE" line, else the
  # final stats; a process that ran none (it died in its setup, or was given no time) fails.
  execs=0
  idle=0
  for j in $(seq 1 "$JOBS"); do
    n=$(sed -n -e 's/^Done \([0-9][0-9]*\) runs in .*/\1/p' -e 's/^#\([0-9][0-9]*\)[[:space:]]*DONE .*/\1/p' \
      -e 's/^stat::number_of_executed_units: *\([0-9][0-9]*\)$/\1/p' "$F/$name.$j.log" | head -n 1)
    [ "${n:-0}" -gt 0 ] || idle=$((idle + 1))
    execs=$((execs + ${n:-0}))
  done
  units=$(find "$F/corpus/$name" -type f | wc -l)
  if [ $rc = 0 ] && [ $idle = 0 ]; then
    pass "$name: $execs executions in $secs s ($JOBS process(es)), corpus of $units inputs"
  elif [ $rc = 0 ]; then
    fail "$name: $idle of $JOBS process(es) ran no input ($execs executions in all)" "$(tail -n 6 "$F/$name".*.log)"
  else
    fail "$name: exit $rc after $execs executions" "$(cat "$F/$name".*.log | grep -E 'ERROR|SUMMARY|Test unit written|runtime error' | head -6)"
  fi
done
summary
