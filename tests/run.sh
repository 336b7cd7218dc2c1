#!/usr/bin/env bash
# make test: everything that needs no GPU. Ends with one line, "N passed, N failed", over all suites
# (", N skipped" added when a suite skipped checks).
set -u
cd "$(dirname "$0")/.."
total_pass=0
total_fail=0
total_skip=0
failed=()
tally() { # name, log: adds the suite's "N passed, N failed[, N skipped]" line to the totals
  local line p f s
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$2" | tail -n 1)
  if [ -z "$line" ]; then
    total_fail=$((total_fail + 1)); failed+=("$1 (no summary line)"); return
  fi
  read -r p _ f _ s _ <<<"${line//,/}"
  total_pass=$((total_pass + p)); total_fail=$((total_fail + f)); total_skip=$((total_skip + ${s:-0}))
  [ "$f" -gt 0 ] && failed+=("$1: $f failed")
  return 0
}
log=$(mktemp)
# Tests keep their CUBINs to themselves: a fresh cache, removed at the end.
export XDG_CACHE_HOME=$(mktemp -d)
# ... and no user wisdom ($XDG_DATA_HOME/engine/wisdom, read first by --auto) but what a test writes.
export XDG_DATA_HOME=$(mktemp -d)
trap 'rm -rf "$log" "$XDG_CACHE_HOME" "$XDG_DATA_HOME"' EXIT

echo "== unit tests (cmocka)"
for t in "${BUILD:-build}"/tests/test_*; do
  case $t in *.d) continue ;; esac
  "$t" >"$log" 2>&1
  rc=$?
  ok=$(grep -a -c '^\[       OK \]' "$log")
  bad=$(grep -a -c '^\[  FAILED  \] [a-z]' "$log")
  [ "$rc" != 0 ] && [ "$bad" = 0 ] && bad=1
  printf '  %-28s %d passed, %d failed\n' "${t##*/}" "$ok" "$bad"
  [ "$bad" -gt 0 ] && { grep -a -E 'ERROR|LINE|FAILED' "$log" | sed 's/^/    /'; failed+=("${t##*/}"); }
  total_pass=$((total_pass + ok)); total_fail=$((total_fail + bad))
done

for suite in layers invalid compile_matrix tc32 gemv cli tools scripts tune bench docs gpu_stub python workload; do
  echo "== $suite"
  bash "tests/$suite.sh" >"$log" 2>&1
  if [ "$suite" = compile_matrix ]; then grep -v '^  ok ' "$log"; else grep -v '^  ok ' "$log" | grep -v '^[0-9]* passed' ; fi
  tally "$suite" "$log"
  tail -n 1 "$log" | sed 's/^/  /'
done

echo
echo "== skipped: GPU tests (this machine is not asked to run them; on a GPU machine run make test-gpu):"
echo "   every config verified at 1x1x1, 17x33x5, 127x129x131, 1000^3, 2048^3 with beta = 0 (NaN-poisoned C) and"
echo "   beta != 0; f64 runs of the f32 templates; the warp tile's paired lanes at every width; the cuBLAS"
echo "   cross-check against the CPU; the wrong fixtures (wrong_k, wrong_edge, wrong_beta) caught; fault and"
echo "   refusal exit codes; --format jsonl and --set on the GPU; K = 0; 65536x65536x16 (64-bit offsets)"
echo "   and the refusal of a problem that does not fit; an sm_90a-only template; crash isolation and tune"
echo "   on the GPU; compute-sanitizer memcheck, racecheck, initcheck and synccheck on every template;"
echo "   gemv (a matrix times a few vectors): both loops in every op, f32 and f64, split-K's modes, column groups;"
echo "   accuracy classes (wrong_k at K = 65536 and 131072 and TF32-rounded inputs rejected, every config"
echo "   within its class at K = 1 to 65536); the shipped wisdom by verify --auto at and near every entry,"
echo "   memcheck of each of its configurations; --auto at random odd shapes; bench/regress.sh CHECK=1;"
echo "   libengine (examples/sgemm, build/gpu_lib against cuBLAS on both paths: cuBLAS while a kernel builds and the
   kernel after engine_wait, two threads, graph capture, memcheck) and engine.matmul against torch"
echo
[ ${#failed[@]} -gt 0 ] && printf 'failed: %s\n' "${failed[@]}"
if [ "$total_skip" -gt 0 ]; then echo "$total_pass passed, $total_fail failed, $total_skip skipped"; else echo "$total_pass passed, $total_fail failed"; fi
[ "$total_fail" -eq 0 ]
