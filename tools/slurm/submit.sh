#!/usr/bin/env bash
# Submits one tune over N GPUs: a job array of N tasks (tools/slurm/tune.sbatch), then the merge,
# which starts when every task has succeeded (afterok). Prints both job ids and where results go.
#   usage: tools/slurm/submit.sh N CONFIG [tune options...]
#   env:   ENGINE, LOGDIR (see tune.sbatch); SBATCH_OPTS, extra sbatch options for both jobs
#          (e.g. "--partition=gpu --account=me"); MERGE_OPTS, for the merge only (default
#          --gres=none: the merge needs no GPU); SBATCH, the sbatch binary.
set -u
sbatch=${SBATCH:-sbatch}
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 2 ] && [ "$1" -gt 0 ] 2>/dev/null || { sed -n '4p' "$0" | sed 's/^# *//' >&2; exit 2; }
n=$1 config=$2
shift 2
name=${config##*/}
export LOGDIR=${LOGDIR:-$PWD/tune-${name%.json}}
read -r -a extra <<<"${SBATCH_OPTS:-}"
read -r -a merge_extra <<<"${MERGE_OPTS:---gres=none}"

array=$("$sbatch" --parsable "${extra[@]}" --array="0-$((n - 1))" "$here/tune.sbatch" "$config" "$@") || exit
array=${array%%;*} # --parsable prints "jobid[;cluster]"
merge=$("$sbatch" --parsable "${extra[@]}" "${merge_extra[@]}" --job-name=engine-merge --output=%x-%j.out \
  --dependency="afterok:$array" "$here/tune.sbatch" --merge "$config") || exit
merge=${merge%%;*}
echo "array job $array: $n tasks, logs in $LOGDIR/shard-*.jsonl"
echo "merge job $merge: after all of $array succeed, writes $LOGDIR/merged.jsonl and $LOGDIR/best.json"
