#!/usr/bin/env bash
# make test-slurm: tools/slurm/submit.sh and tune.sbatch against a real Slurm on this machine.
# Installs Debian's slurm-wlm and munge the Makefile's way (tools/deps.sh: apt-get as root, else the
# command to run), then starts munged, slurmctld and slurmd on localhost with a generated config
# (one node with this machine's CPUs and two GPUs that are only names: the fake worker,
# tests/fake_worker.py, stands in for them), everything under one temporary directory. Submits a
# small tune as a job array and its merge, requeues one array task midway (as preemption or a
# node failure does), and checks the merged log, the winner, and that the requeued task resumed
# its shard without running a finished point again. Then cancels a task of a second tune midway
# (scancel), brings it back as tune.sbatch's header says, and checks the same. Every daemon it
# started is stopped on exit. Where the packages cannot be installed it prints one SKIP line and
# exits 0.
#   env: KEEP=1 keeps the temporary directory (the logs of every daemon and job); CUDA_HOME.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
repo=$PWD
E=$repo/${BUILD:-build}/engine
skip() { echo "SKIP make test-slurm: $*"; exit 0; }

command -v python3 >/dev/null || skip "python3 not found (the fake GPU worker needs it)"
export PATH=$PATH:/usr/sbin:/sbin # the daemons live there, often off a user's PATH
[ -x "$E" ] || { echo "test-slurm: $E not found: run make first" >&2; exit 2; }
if ! deps=$(bash tools/deps.sh "${CUDA_HOME:-/usr/local/cuda}" --with-slurm 2>&1); then
  skip "$(printf '%s\n' "$deps" | tail -n 1 | sed 's/^.*deps *//')"
fi
printf '%s\n' "$deps" | grep -v -e ' cuda ' -e ' jansson '

tmp=$(mktemp -d /tmp/engine-slurm.XXXXXX) # short: munged's socket path must fit in 108 bytes
chmod 755 "$tmp"                           # slurmd and the jobs reach into it as SlurmUser
t_start=$(date +%s)
elapsed() { echo "$(($(date +%s) - t_start)) s"; }
daemons=()   # "name pid" of every daemon started here
jobs_here=() # job ids submitted here

# waitfor SECONDS WHAT COMMAND...: runs COMMAND every 0.2 s until it succeeds; fails after SECONDS.
waitfor() {
  local deadline=$(($(date +%s) + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then echo "  timed out after $(elapsed) waiting for $what"; return 1; fi
    sleep 0.2
  done
}

show_logs() { # the daemons' logs and what they printed, the jobs' output, the queue
  local f
  for f in "$tmp"/log/*.log "$tmp"/log/*.out "$tmp"/work/*.out; do
    [ -f "$f" ] || continue
    echo "---- ${f#"$tmp"/} (last 40 lines)"
    tail -n 40 "$f"
  done
  echo "---- squeue"
  squeue -a -o '%.12i %.10T %.20r %.6c %b %j' 2>&1
}

stop_all() { # on exit: cancel our jobs, print the logs if anything failed, stop our daemons
  local rc=$? name pid i
  trap - EXIT HUP INT TERM
  trap '' PIPE # a reader that went away must not stop the clean-up
  if [ ${#jobs_here[@]} -gt 0 ] && squeue -h -j "$(IFS=,; echo "${jobs_here[*]}")" 2>/dev/null | grep -q .; then
    echo "  cancelling jobs still queued or running: ${jobs_here[*]}"
    scancel "${jobs_here[@]}" 2>/dev/null
    waitfor 20 "the cancelled jobs to end" bash -c "! squeue -h -t R,CG -j $(IFS=,; echo "${jobs_here[*]}") | grep -q ."
  fi
  [ "$rc" != 0 ] || [ "$FAILED" -gt 0 ] && show_logs
  for ((i = ${#daemons[@]} - 1; i >= 0; i--)); do # the node first, MUNGE last
    read -r name pid <<<"${daemons[$i]}"
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then echo "  $name (pid $pid) ignored SIGTERM for 10 s: killed"; kill -9 "$pid"; fi
    wait "$pid" 2>/dev/null
  done
  [ ${#daemons[@]} -gt 0 ] && echo "  stopped ${#daemons[@]} daemons (slurmd, slurmctld, munged) after $(elapsed)"
  if [ -n "${KEEP:-}" ]; then echo "  kept $tmp"; else rm -rf "$tmp"; fi
  exit "$rc"
}
trap stop_all EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 141' PIPE
trap 'exit 143' TERM

start() { # name log command...: starts a daemon in the foreground of a background job
  local name=$1 log=$2
  shift 2
  "$@" >>"$log" 2>&1 &
  daemons+=("$name $!")
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# --- MUNGE, slurmctld and slurmd on localhost ---------------------------------------------------
echo "== a Slurm cluster of one node on localhost ($tmp)"
mkdir -p "$tmp"/{munge,log,state,spool,run,work} || exit 2
user=$(id -un)
host=$(uname -n)
host=${host%%.*} # slurmctld runs only where this is SlurmctldHost
node=engine-node
sock=$tmp/munge/munge.socket
export SLURM_CONF=$tmp/slurm.conf
# sbatch, squeue and scontrol must read our config and talk to our daemons only.
unset SLURM_JOB_ID SLURM_ARRAY_JOB_ID SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT SLURM_ARRAY_TASK_MIN \
  SLURM_ARRAY_TASK_MAX SLURM_SUBMIT_DIR SBATCH_PARTITION SBATCH_ACCOUNT SBATCH_GRES ENGINE LOGDIR SBATCH \
  SBATCH_OPTS MERGE_OPTS

mungekey --create --keyfile="$tmp/munge/munge.key" >"$tmp/log/mungekey.log" 2>&1 ||
  dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 700 "$tmp/munge" && chmod 400 "$tmp/munge/munge.key"
start munged "$tmp/log/munged.out" munged --foreground --force --socket="$sock" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/run/munged.pid" --log-file="$tmp/log/munged.log" --seed-file="$tmp/munge/munged.seed"
if waitfor 20 "munged to answer on $sock" bash -c "munge -n -S '$sock' | unmunge -S '$sock'"; then
  pass "munged answers on its own socket (credential encoded and decoded)"
else
  fail "munged starts"; exit 1
fi

read -r cpus mem < <(slurmd -C | sed -n 's/.*CPUs=\([0-9]*\).*RealMemory=\([0-9]*\).*/\1 \2/p')
[ -n "${cpus:-}" ] || { cpus=$(nproc) mem=1; }
ctld_port=$(free_port) slurmd_port=$(free_port)
cat >"$SLURM_CONF" <<EOF
# Generated by tests/slurm.sh: one node on localhost, no accounting, no cgroups (a container need
# not have them), jobs run as $user.
ClusterName=enginetest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
# cred_expire is also how long a requeued job waits before it may start again (default 120 s).
AuthInfo=socket=$sock,cred_expire=10
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerParameters=sched_interval=1,bf_interval=1
GresTypes=gpu
NodeName=$node NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem Gres=gpu:2 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
# Two GPUs that are links to /dev/null: tune.sbatch asks for --gres=gpu:1 per task as on a real
# cluster, Slurm hands each task one and sets CUDA_VISIBLE_DEVICES, and the fake worker stands in
# for the GPU. (slurmd drops a GPU without a File, and a File must be a device it can stat.)
mkdir -p "$tmp/dev" && ln -s /dev/null "$tmp/dev/nvidia0" && ln -s /dev/null "$tmp/dev/nvidia1"
echo "NodeName=$node Name=gpu File=$tmp/dev/nvidia[0-1]" >"$tmp/gres.conf"

start slurmctld "$tmp/log/slurmctld.out" slurmctld -D -i -f "$SLURM_CONF"
waitfor 30 "slurmctld to answer" bash -c 'scontrol ping | grep -q "is UP"' &&
  pass "slurmctld is up (port $ctld_port)" || { fail "slurmctld starts"; exit 1; }
start slurmd "$tmp/log/slurmd.out" slurmd -D -N "$node" -f "$SLURM_CONF"
waitfor 30 "node $node to be idle" bash -c "sinfo -h -n $node -o %T | grep -qx idle" &&
  pass "slurmd registered $node idle ($cpus CPUs, gres gpu:2) after $(elapsed)" ||
  { fail "slurmd registers the node"; exit 1; }

# --- tunes over job arrays: a task requeued, a task cancelled -------------------------------------
space=$repo/tests/configs/tune/toy_space.json
work=$tmp/work
# sbatch hands the submitting environment to the jobs: the engine, the fake GPU worker and a
# shared CUBIN cache, as a cluster's shared home directory would be. Each timed point takes 0.5 s,
# so a shard of 5 points runs about 5 s and an interruption finds its task halfway.
export ENGINE=$E ENGINE_WORKER=$repo/tests/fake_worker.py ENGINE_TEMPLATES=$repo/tests/templates:$repo/kernels_src \
  XDG_CACHE_HOME=$tmp/xdg FAKE_DELAY=0.5

rows() { # LOG PYTHON-EXPRESSION over the list `rows` (unreadable lines skipped): prints its value
  python3 -c "
import json, sys
rows = []
for line in open(sys.argv[1]):
    try: rows.append(json.loads(line))
    except ValueError: pass
print($2)" "$1" 2>/dev/null
}
job_field() { # JOB FIELD: that field of `scontrol show job JOB`, one line per job (each array task)
  scontrol -o show job "$1" 2>/dev/null | grep -o " $2=[^ ]*" | sed "s/^ $2=//"
}
ended() { # JOB: it has ended, every task of it if an array
  local s
  s=$(job_field "$1" JobState) && [ -n "$s" ] &&
    ! grep -qvxE 'COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|BOOT_FAIL|DEADLINE' <<<"$s"
}
shard_size() { # I N: how many feasible points shard I/N holds (the dry run says)
  "$E" tune "$space" --arch sm_90 --shard "$1/$2" --dry-run | sed -n "s|^ *shard $1/$2: \([0-9]*\) of the [0-9]* feasible points|\1|p"
}
submit() { # N: submit.sh N CONFIG from $work; sets array and merge
  (cd "$work" && SBATCH_OPTS=--cpus-per-task=1 "$repo/tools/slurm/submit.sh" "$1" "$space" --arch sm_90) >"$tmp/submit.out" 2>&1
  check_rc "submit.sh $1 toy_space.json --arch sm_90 (SBATCH_OPTS=--cpus-per-task=1: the node has $cpus CPUs)" 0 $? "$(cat "$tmp/submit.out")"
  array=$(sed -n 's/^array job \([0-9]*\): .*/\1/p' "$tmp/submit.out")
  merge=$(sed -n 's/^merge job \([0-9]*\): .*/\1/p' "$tmp/submit.out")
  [ -n "$array" ] && [ -n "$merge" ] || { fail "submit.sh prints both job ids" "$(cat "$tmp/submit.out")"; exit 1; }
  jobs_here+=("$array" "$merge")
  scontrol -o show job "$merge" | grep -q " Dependency=afterok:${array}_\*" &&
    pass "sbatch took the array ($array) and the merge ($merge), which waits for every task (afterok:${array}_*)" ||
    fail "the merge's dependency" "$(scontrol -o show job "$merge" | grep -o 'Dependency=[^ ]*')"
}
midway() { # LOG POINTS: the shard's task has timed two points and not all of them
  local s1
  s1=$(rows "$1" "sum(r['stage'] == 1 for r in rows)")
  [ "${s1:-0}" -ge 2 ] && [ "$s1" -lt "$2" ]
}
interrupt() { # TASK N LOGDIR COMMAND...: once task TASK has timed two points of its shard, runs COMMAND
  local log=$3/shard-$1.jsonl points
  points=$(shard_size "$1" "$2")
  shift 3
  if waitfor 90 "the task to time 2 of its $points points" midway "$log" "$points"; then
    "$@" >"$tmp/cmd.out" 2>&1
    check_rc "$* with $(rows "$log" "sum(r['stage'] == 1 for r in rows)") of $points points timed ($(elapsed))" 0 $? "$(cat "$tmp/cmd.out")"
  else
    fail "the task seen midway" "$(tail -n 3 "$log" 2>/dev/null)"
  fi
}
check_resumed() { # TASK N LOGDIR: the task ran twice and its second run took up its shard where the first stopped
  local out=$work/engine-tune-${array}_$1.out log=$3/shard-$1.jsonl points got now were nrows ndistinct nok
  points=$(shard_size "$1" "$2")
  [ "$(grep -c "^shard $1/$2 of " "$out" 2>/dev/null)" = 2 ] && pass "task $1's output holds both runs (--open-mode=append)" ||
    fail "two runs in $out" "$(cat "$out" 2>/dev/null)"
  got=$(grep "^tune 256x256x256: " "$out" | tail -n 1)
  read -r now were <<<"$(sed -n 's/.*; \([0-9]*\) evaluated now (\([0-9]*\) were in the log).*/\1 \2/p' <<<"$got")"
  [ "${were:-0}" -ge 2 ] && [ $((now + were)) = "$points" ] &&
    pass "its second run resumed the shard: $were points from the log, $now evaluated now" ||
    fail "its second run resumed the shard ($points points)" "$got"
  got=$(rows "$log" "len(rows), len({(r['key'], r['stage']) for r in rows}), sum(r['stage'] == 1 and r['status'] == 'ok' for r in rows)")
  read -r nrows ndistinct nok <<<"$got"
  [ -n "$nrows" ] && [ "$nrows" = "$ndistinct" ] && pass "no point is in its shard log twice ($nrows rows, one per point and stage)" ||
    fail "no point twice in $log" "$got"
  [ "${nok:-0}" = "$points" ] && pass "the shard log is complete: $nok of $points points verified and timed" ||
    fail "the shard log is complete: $points points verified and timed" "$(rows "$log" "[(r['stage'], r['status'], r['reason']) for r in rows if r['stage']]")"
}
check_merged() { # N LOGDIR: merged.jsonl holds every shard's rows, each point once; best.json is the tune's winner
  local total=0 f got best
  for f in "$2"/shard-*.jsonl; do total=$((total + $(rows "$f" "len(rows)"))); done
  got=$(rows "$2/merged.jsonl" "len(rows), len(set(r['key'] for r in rows if r['stage'] == 1)), sum(r['stage'] == 1 for r in rows)")
  [ "$got" = "$total $feasible $feasible" ] && pass "merged.jsonl: all $total rows of the $1 shards, each of the $feasible feasible points once" ||
    fail "merged.jsonl holds every shard's rows, each of the $feasible points once (rows, keys, stage-1 rows)" "$got"
  best=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['params'])" "$2/best.json" 2>&1)
  [ "$best" = "$want_best" ] && pass "best.json is the winner of the same tune run without Slurm ($best)" ||
    fail "best.json is the winner of the tune without Slurm" "got $best, want $want_best"
}

# What the tune finds without Slurm; it also fills the CUBIN cache the tasks share.
FAKE_DELAY=0 "$E" tune "$space" --arch sm_90 --log "$tmp/whole.jsonl" --emit-best "$tmp/whole-best.json" >"$tmp/whole.out" 2>&1 ||
  { fail "the tune without Slurm" "$(cat "$tmp/whole.out")"; exit 1; }
want_best=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['params'])" "$tmp/whole-best.json")
feasible=$(sed -n 's/.* \([0-9]*\) feasible, .*/\1/p' "$tmp/whole.out")

echo "== submit.sh 3: task 1 requeued midway (scontrol requeue: what preemption and a node failure do)"
t0=$(date +%s)
submit 3
interrupt 1 3 "$work/tune-toy_space" scontrol requeue "${array}_1"
waitfor 240 "the merge job $merge to end" ended "$merge"
state=$(job_field "$merge" JobState) code=$(job_field "$merge" ExitCode)
[ "$state" = COMPLETED ] && [ "$code" = 0:0 ] && pass "the merge job completed $(($(date +%s) - t0)) s after submission" ||
  fail "the merge job completed (state ${state:-?}, exit ${code:-?})"
got=$(job_field "$array" JobState | sort | uniq -c | tr -s ' ' | sed 's/^ //')
[ "$got" = "3 COMPLETED" ] && pass "every array task completed" || fail "every array task completed" "$got"
got=$(job_field "${array}_1" Restarts)
[ "$got" = 1 ] && pass "task 1 was requeued once (Restarts=1)" || fail "task 1 was requeued once (Restarts=${got:-?})"
check_resumed 1 3 "$work/tune-toy_space"
check_merged 3 "$work/tune-toy_space"
"$E" compile "$work/tune-toy_space/best.json" --arch sm_90 >"$tmp/compile.out" 2>&1
check_rc "best.json compiles" 0 $? "$(cat "$tmp/compile.out")"
got=$(sed -n 's/^shard .* (GPU \([^)]*\)).*/\1/p' "$work"/engine-tune-"$array"_*.out | sort -u | tr '\n' ' ')
[[ $got =~ ^[01]\ ([01]\ )?$ ]] && pass "Slurm set CUDA_VISIBLE_DEVICES in each task (values seen: $got)" ||
  fail "CUDA_VISIBLE_DEVICES set in each task" "$got"

echo "== submit.sh 2: task 0 cancelled midway (scancel), requeued by hand, the merge submitted again"
# scancel ends a task for good (#SBATCH --requeue covers preemption and node failure), and the
# merge's afterok can no longer be met; tune.sbatch's header gives the way back, followed here.
export LOGDIR=$work/cancelled
t0=$(date +%s)
submit 2
interrupt 0 2 "$LOGDIR" scancel "${array}_0"
waitfor 30 "task 0 to end" ended "${array}_0"
got=$(job_field "${array}_0" JobState)
[ "$got" = CANCELLED ] && pass "task 0 is CANCELLED, not requeued" || fail "task 0 is CANCELLED (${got:-?})"
scontrol requeue "${array}_0" >"$tmp/cmd.out" 2>&1
check_rc "scontrol requeue ${array}_0 (a cancelled task)" 0 $? "$(cat "$tmp/cmd.out")"
waitfor 120 "the array $array to end" ended "$array"
sleep 3 # a few scheduler passes: would the merge start now?
got=$(job_field "$merge" JobState)
if [ "$got" = PENDING ]; then
  pass "the merge submit.sh queued stays pending after the requeued task completed ($(job_field "$merge" Dependency))"
  scancel "$merge"
  merge=$(cd "$work" && sbatch --parsable --cpus-per-task=1 --gres=none --dependency="afterok:${array}_0" \
    "$repo/tools/slurm/tune.sbatch" --merge "$space" 2>"$tmp/cmd.out")
  merge=${merge%%;*}
  [ -n "$merge" ] && jobs_here+=("$merge") && pass "the merge submitted again (job $merge, afterok:${array}_0)" ||
    fail "the merge submitted again" "$(cat "$tmp/cmd.out")"
else
  pass "the merge submit.sh queued started after the requeued task (${got:-?})"
fi
waitfor 60 "the merge job $merge to end" ended "$merge"
state=$(job_field "$merge" JobState) code=$(job_field "$merge" ExitCode)
[ "$state" = COMPLETED ] && [ "$code" = 0:0 ] && pass "the merge job completed $(($(date +%s) - t0)) s after submission" ||
  fail "the merge job completed (state ${state:-?}, exit ${code:-?})"
check_resumed 0 2 "$LOGDIR"
check_merged 2 "$LOGDIR"

echo "== $(elapsed) in all"
summary
