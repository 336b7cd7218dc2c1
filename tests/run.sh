#!/usr/bin/env bash
# make test: everything that needs no GPU. Each suite's summary line ends with its time in seconds,
# wall and CPU (user + sys of everything it ran: on a loaded machine the wall time says little).
# Ends with one line, "N passed, N failed", over all suites (", N skipped" added when a check was skipped).
set -u
cd "$(dirname "$0")/.."
total_pass=0
total_fail=0
total_skip=0
failed=() left_out=()
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
# clock: "WALL_NS CPU_TICKS" now; CPU is the waited-for children of shell $me (this script, or the
# subshell that runs a suite beside it), user + sys (/proc/PID/stat fields 16 and 17, in clock
# ticks). took START: "N s, cpu N s" since START.
hz=$(getconf CLK_TCK) me=$$
clock() { local st; read -ra st </proc/$me/stat; echo "$(date +%s%N) $((st[15] + st[16]))"; }
took() {
  local w0 c0 w1 c1; read -r w0 c0 <<<"$1"; read -r w1 c1 <<<"$(clock)"
  awk -v w="$((w1 - w0))" -v c="$((c1 - c0))" -v hz="$hz" 'BEGIN { printf "%.1f s, cpu %.1f s", w / 1e9, c / hz }'
}
t_all=$(clock)
log=$(mktemp) cm_log=$(mktemp) cm_pid=
# Tests keep their CUBINs to themselves: a fresh cache, removed at the end.
export XDG_CACHE_HOME=$(mktemp -d)
# ... and no user wisdom ($XDG_DATA_HOME/engine/wisdom, read first by --auto) but what a test writes.
export XDG_DATA_HOME=$(mktemp -d)
trap 'rm -rf "$log" "$log.time" "$cm_log" "$cm_log.time" "$XDG_CACHE_HOME" "$XDG_DATA_HOME"' EXIT

# A unit test binary's counts come from cmocka's own summary lines, one set per group: "[  PASSED  ] N
# test(s).", "[  FAILED  ] N test(s), listed below:", "[  SKIPPED ] N test(s), listed below:" (a failed or
# skipped test's own line appears twice: once when it runs, once in the list below the summary). They
# must add up to "[==========] N test(s) run."; a binary that exits non-zero with no failure counted
# (a crash, a bad group setup) is one failure.
echo "== unit tests (cmocka)"
u_pass=0 u_fail=0 u_skip=0 t_unit=$(clock)
for t in "${BUILD:-build}"/tests/test_*; do
  case $t in *.d) continue ;; esac
  t0=$(clock)
  "$t" >"$log" 2>&1
  rc=$?
  read -r ok bad skp ran < <(awk '
    /^\[  PASSED  \] [0-9]+ test\(s\)\.$/ { p += $4 }
    /^\[  FAILED  \] [0-9]+ test\(s\), listed below:$/ { f += $4 }
    /^\[  SKIPPED \] [0-9]+ test\(s\), listed below:$/ { s += $4 }
    /^\[==========\] [0-9]+ test\(s\) run\.$/ { r += $2 }
    END { print p + 0, f + 0, s + 0, r + 0 }' "$log")
  why=
  if [ $((ok + bad + skp)) != "$ran" ]; then why="$ok passed + $bad failed + $skp skipped != $ran run"; bad=$((bad + 1))
  elif [ "$rc" != 0 ] && [ "$bad" = 0 ]; then why="exit $rc with no failed test"; bad=1; fi
  extra=; [ "$skp" -gt 0 ] && extra=", $skp skipped"
  printf '  %-28s %d passed, %d failed%s (%s)\n' "${t##*/}" "$ok" "$bad" "$extra" "$(took "$t0")"
  [ -n "$why" ] && echo "    $why"
  [ "$bad" -gt 0 ] && { grep -a -E 'ERROR|LINE|FAILED' "$log" | sed 's/^/    /'; failed+=("${t##*/}"); }
  [ "$skp" -gt 0 ] && grep -a -E '^\[  SKIPPED \] [a-z]' "$log" | sort -u | sed 's/^/    /'
  u_pass=$((u_pass + ok)); u_fail=$((u_fail + bad)); u_skip=$((u_skip + skp))
done
echo "  unit tests: $u_pass passed, $u_fail failed, $u_skip skipped ($(took "$t_unit"))"
total_pass=$((total_pass + u_pass)); total_fail=$((total_fail + u_fail)); total_skip=$((total_skip + u_skip))

# SUITES (make sanitize sets it): the suites to run, of these; the unit tests always run.
all_suites="layers invalid compile_matrix tc32 gemv half cli tools scripts tune bench docs gpu_stub python workload peers"
for suite in ${SUITES:-}; do
  [[ " $all_suites " == *" $suite "* ]] || { echo "SUITES: no suite $suite"; total_fail=$((total_fail + 1)); failed+=("SUITES: no suite $suite"); }
done
for suite in $all_suites; do
  if [ -n "${SUITES:-}" ] && [[ " $SUITES " != *" $suite "* ]]; then left_out+=("$suite"); continue; fi
  # compile_matrix runs beside the suites after it: its NVRTC compiles use every core while most
  # suites keep one busy. Its lines are shown when it ends (it shares only the CUBIN cache, which
  # processes share safely: its own wisdom entries run as many at a time).
  if [ "$suite" = compile_matrix ]; then
    echo "== compile_matrix: runs beside the suites below; its lines when it ends"
    ( me=$BASHPID; t0=$(clock); bash tests/compile_matrix.sh >"$cm_log" 2>&1; took "$t0" >"$cm_log.time" ) &
    cm_pid=$!
    continue
  fi
  echo "== $suite"
  # Shown as it runs (a suite's sections and progress lines), but for its passed checks and its
  # summary, which comes last with the time. Timed in a subshell of its own: this shell's CPU count
  # takes in compile_matrix's whenever that ends.
  ( me=$BASHPID; t0=$(clock)
    bash "tests/$suite.sh" 2>&1 | tee "$log" | grep -a --line-buffered -v -E '^  ok |^[0-9]+ passed, [0-9]+ failed'
    took "$t0" >"$log.time" )
  tally "$suite" "$log"
  echo "  $(tail -n 1 "$log") ($(cat "$log.time"))"
done

if [ -n "$cm_pid" ]; then
  wait "$cm_pid"
  echo "== compile_matrix"
  grep -a -v -E '^  ok |^[0-9]+ passed, [0-9]+ failed' "$cm_log"
  tally compile_matrix "$cm_log"
  echo "  $(tail -n 1 "$cm_log") ($(cat "$cm_log.time" 2>/dev/null))"
fi
[ ${#left_out[@]} -gt 0 ] && echo "== not run (SUITES=\"$SUITES\"): ${left_out[*]}"
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
echo "make test: $(took "$t_all")"
[ ${#failed[@]} -gt 0 ] && printf 'failed: %s\n' "${failed[@]}"
if [ "$total_skip" -gt 0 ]; then echo "$total_pass passed, $total_fail failed, $total_skip skipped"; else echo "$total_pass passed, $total_fail failed"; fi
[ "$total_fail" -eq 0 ]
