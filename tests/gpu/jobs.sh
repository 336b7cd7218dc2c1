# tests/gpu/jobs.sh — make test-gpu's sections as several processes at once (GPU_JOBS=N, N > 1),
# sourced by tests/gpu.sh, which exits with this file's summary. One GPU shares its time between the
# processes; the whole suite one section after another takes longer than a device call may run.
# Each section runs as `GPU_ONLY=<section> bash tests/gpu.sh` with its own log folder ($LOG/<section>,
# its output in $LOG/<section>/out.txt), the longest first; the sections whose checks time kernels
# (regress, half-bench) and edges run after every other has ended, each alone: edges verifies
# 65536x65536x16, which holds about 86 GB of host memory for minutes (beside it on a 128 GB host,
# wisdom-f32's rows at 8193^2 made no progress for 6 minutes; session 19). GPU_DEADLINE=S: no section
# starts after S seconds from here; each left is one skipped check naming it, so a later call runs
# them (GPU_ONLY=...). $LOG/sections.txt gets one line a section: name, seconds, passed, failed, skipped.
# Stopped (SIGTERM or SIGINT: a device call's time limit), it stops the sections still running
# (each in a session of its own, engine and worker with it), names each as unfinished with the
# checks it had passed and failed so far, and prints the summary (exit 1).
# "wisdom" and "layouts-tb" are parts of other sections here (wisdom-f32 + wisdom-f64, layouts).
jobs_order="sanitize wisdom-memcheck half-san accuracy wisdom-f32 wisdom-f64 layouts tune library sm90a gemv
  verify half isolation tune-faults auto splitk streamk interior f64 skinny slicek vec2 lanes wrong
  errors formats device"
jobs_alone="edges half-bench regress"
jobs_t0=$SECONDS
jobs_deadline=${GPU_DEADLINE:-0}
: >"$LOG/sections.txt"
declare -A jobs_pid_of=() jobs_start=()
# jobs_pick LIST: the sections of LIST that this run asks for (GPU_ONLY, else all); layouts-tb, a
# part of layouts, runs as a section of its own where GPU_ONLY names it without layouts.
jobs_pick() {
  local s out=""
  for s in $1; do want "$s" || { [ "$s" = wisdom-f32 ] || [ "$s" = wisdom-f64 ] && want wisdom; } || continue
    out+="$s "
  done
  [[ " $1 " == *" layouts "* ]] && ! want layouts && want layouts-tb && out+="layouts-tb "
  echo "$out"
}
# jobs_fails SECTION: each check the section's output says failed, counted and named in this run's.
jobs_fails() {
  local n
  while IFS= read -r n; do FAILED=$((FAILED + 1)); FAILED_NAMES+=("$1: $n"); done < <(sed -n 's/^  FAIL  //p' "$LOG/$1/out.txt")
}
# jobs_end SECTION RC: a section's counts into this run's, its failed and skipped checks named.
jobs_end() {
  local s=$1 o=$LOG/$1/out.txt sum p f k n
  sum=$(grep -aE '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$o" | tail -n 1)
  read -r p f k <<<"$(sed -E 's/([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped/\1 \2 \3/' <<<"${sum:-0 0 0}")"
  echo "$s $((SECONDS - jobs_start[$s])) $p $f $k" >>"$LOG/sections.txt"
  printf '  %-16s %4d s  %s\n' "$s" $((SECONDS - jobs_start[$s])) "${sum:-no summary (exit $2)}"
  PASSED=$((PASSED + p))
  SKIPPED=$((SKIPPED + k))
  while IFS= read -r n; do SKIPPED_NAMES+=("$s: $n"); done < <(sed -n 's/^  SKIP  //p' "$o")
  if [ -z "$sum" ] || [ "$f" != 0 ] || [ "$2" != 0 ]; then
    [ -z "$sum" ] || [ "$f" = 0 ] && { FAILED=$((FAILED + 1)); FAILED_NAMES+=("$s (exit $2, ${sum:-no summary})"); }
    jobs_fails "$s"
    grep -a -A6 '^  FAIL  ' "$o" | head -n 40 | sed 's/^/    /'
  fi
}
# jobs_run SECTIONS MAX: SECTIONS, MAX at a time; each one not started by the deadline is skipped.
jobs_run() {
  local s pid
  for s in $1; do
    while [ "${#jobs_pid_of[@]}" -ge "$2" ]; do jobs_reap; done
    if [ "$jobs_deadline" -gt 0 ] && [ $((SECONDS - jobs_t0)) -ge "$jobs_deadline" ]; then
      skip "section $s" "not started: GPU_DEADLINE=$jobs_deadline s passed"
      continue
    fi
    mkdir -p "$LOG/$s"
    jobs_start[$s]=$SECONDS
    GPU_JOBS=1 GPU_ONLY=$s GPU_LOG_DIR=$LOG/$s setsid bash tests/gpu.sh >"$LOG/$s/out.txt" 2>&1 &
    jobs_pid_of[$s]=$!
  done
  while [ "${#jobs_pid_of[@]}" -gt 0 ]; do jobs_reap; done
}
# jobs_reap: waits for one section to end and counts it (bash 5.1's wait -n -p names the process).
jobs_reap() {
  local s pid rc
  wait -n -p pid
  rc=$?
  for s in "${!jobs_pid_of[@]}"; do
    [ "${jobs_pid_of[$s]}" = "$pid" ] || continue
    unset "jobs_pid_of[$s]"
    jobs_end "$s" "$rc"
  done
}
# jobs_stop: the sections still running stopped and counted as unfinished; the summary; exit 1.
jobs_stop() {
  local s p f
  trap "" TERM INT # a time limit may signal twice (timeout: the process and its group): once is enough
  for s in "${!jobs_pid_of[@]}"; do
    # its session (engine and worker with it); the process too, in case it has not yet left ours
    kill -TERM -- -"${jobs_pid_of[$s]}" "${jobs_pid_of[$s]}" 2>/dev/null
    p=$(grep -c '^  ok  ' "$LOG/$s/out.txt")
    f=$(grep -c '^  FAIL  ' "$LOG/$s/out.txt")
    printf '  %-16s %4d s  unfinished: %d passed, %d failed so far\n' "$s" $((SECONDS - jobs_start[$s])) "$p" "$f"
    echo "$s $((SECONDS - jobs_start[$s])) $p $f 0 unfinished" >>"$LOG/sections.txt"
    PASSED=$((PASSED + p))
    FAILED=$((FAILED + 1))
    FAILED_NAMES+=("$s (unfinished: stopped after $((SECONDS - jobs_start[$s])) s)")
    jobs_fails "$s"
  done
  summary
  exit 1
}
trap jobs_stop TERM INT
echo "== make test-gpu as $GPU_JOBS processes at once (logs in $LOG/<section>/out.txt)${GPU_DEADLINE:+; none starts after $GPU_DEADLINE s}"
jobs_run "$(jobs_pick "$jobs_order")" "$GPU_JOBS"
jobs_run "$(jobs_pick "$jobs_alone")" 1
summary
