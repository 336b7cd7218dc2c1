#!/usr/bin/env bash
# Runs one command N times, each with a time limit, and when a run overruns it looks at the hung
# processes before anything is killed: the process tree with each thread's kernel wait channel and
# system call, nvidia-smi's utilisation (twice, a second apart: a kernel that spins keeps the GPU
# busy, a host that waits leaves it idle) and its compute processes, and where cuda-gdb is installed
# the GPU kernels running and every host thread's stack. Then the tree is killed and the next run starts.
#   bash bench/hang_probe.sh N LIMIT_S LOGDIR CMD [ARGS...]
#   e.g. bash bench/hang_probe.sh 8 40 build/hang build/engine verify --auto --dtype f32 --shapes 8191x8193x8191
# Prints one line a run (exit, seconds) and "hung: N of M"; the state of each hang in LOGDIR/hang-I.txt.
# Exit: 0 (whatever the runs did); 2 bad arguments.
set -u
[ $# -ge 4 ] || { echo "usage: hang_probe.sh N LIMIT_S LOGDIR CMD [ARGS...]"; exit 2; }
n=$1 limit=$2 dir=$3
shift 3
mkdir -p "$dir"
smi=$(command -v nvidia-smi)
cgdb=$(command -v cuda-gdb || ls /usr/local/cuda/bin/cuda-gdb 2>/dev/null)
# tree PID: PID and its descendants.
tree() {
  local p=$1 c
  echo "$p"
  for c in $(pgrep -P "$p"); do tree "$c"; done
}
hung=0
for i in $(seq 1 "$n"); do
  t0=$SECONDS
  setsid "$@" >"$dir/run-$i.txt" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null && [ $((SECONDS - t0)) -lt "$limit" ]; do sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then
    hung=$((hung + 1))
    f=$dir/hang-$i.txt
    {
      echo "# run $i overran ${limit} s: $*"
      for p in $(tree "$pid"); do
        echo "## process $p: $(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null)"
        for t in /proc/"$p"/task/*; do
          echo "  thread ${t##*/} $(cat "$t"/comm 2>/dev/null) wchan=$(cat "$t"/wchan 2>/dev/null) syscall=$(cut -d' ' -f1 "$t"/syscall 2>/dev/null) state=$(sed -n 's/^State:\s*//p' "$t"/status 2>/dev/null)"
        done
      done
      if [ -n "$smi" ]; then
        for k in 1 2; do
          "$smi" --query-gpu=utilization.gpu,memory.used,clocks.sm,power.draw --format=csv,noheader
          sleep 1
        done
        "$smi" --query-compute-apps=pid,used_memory --format=csv,noheader
      fi
      if [ -n "$cgdb" ]; then
        for p in $(tree "$pid"); do
          echo "## cuda-gdb on $p"
          timeout 60 "$cgdb" -batch -p "$p" -ex "info cuda kernels" -ex "info cuda blocks" -ex "thread apply all bt 40" 2>&1 | head -n 300
        done
      fi
    } >"$f" 2>&1
    kill -KILL -- -"$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    echo "run $i: HUNG after ${limit} s (state in $f)"
  else
    wait "$pid"
    echo "run $i: exit $? after $((SECONDS - t0)) s"
  fi
done
echo "hung: $hung of $n"
