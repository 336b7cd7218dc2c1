#!/usr/bin/env bash
# Tune tc32ws_3x (tune/tc32ws_suite.json) at the FP32 suite's 3xTF32 shapes in each op, beside what
# --auto runs there today (the shipped wisdom), on one Hopper GPU with the prebuilt build/engine.
# Winners go to $OUT/wisdom/<device>.json (a fresh directory: every winner is kept), the tune's
# points to $OUT/tune-OP.jsonl, --auto's rows to $OUT/auto-OP.jsonl; bench/tc32ws_merge.py then
# compares them. About 4 minutes on an H200.
set -u
cd "$(dirname "$0")/.." || exit 2
E=build/engine
O=${OUT:-/tmp/tc32ws-tune}
mkdir -p "$O/wisdom"
export XDG_CACHE_HOME=${TMPDIR:-/tmp}/tcws-cache XDG_DATA_HOME=${TMPDIR:-/tmp}/tcws-data
declare -A SH=(
  [NN]=16x8192x128,64x4096x4096,128x8192x128,256x256x16384,512x512x65536,512x4096x4096,512x4096x11008,512x11008x4096,1024x1024x1024,1024x1024x8192,1999x1999x1999,2048x2048x2048,2048x4096x128,2048x4096x4096,2500x2500x2500,4000x4000x4000,4096x4096x4096,5000x5000x5000,8192x64x8192,8192x8192x8192,12288x12288x12288,2048x2048x512,512x512x512,128x128x128
  [NT]=32x4096x11008,32x5120x13824,128x2048x5632,128x4096x4096,128x4096x11008,128x5120x13824,2048x2048x512,512x512x512,128x128x128
  [TN]=2048x2048x512,512x512x512,128x128x128
  [TT]=2048x2048x512,512x512x512,128x128x128
)
for op in NN NT TN TT; do
  t0=$(date +%s)
  timeout 900 $E tune tune/tc32ws_suite.json --op $op --shapes "${SH[$op]}" --runs 7 --top 4 --wisdom "$O/wisdom" \
    --log "$O/tune-$op.jsonl" >"$O/tune-$op.txt" 2>&1
  echo "tune $op: exit $? in $(( $(date +%s) - t0 )) s"
  timeout 600 $E bench --auto --op $op --shapes "${SH[$op]}" --runs 7 --format jsonl >"$O/auto-$op.jsonl" 2>"$O/auto-$op.err"
  echo "auto $op: exit $?"
done
# The device tool brings back a few files only: everything goes home as one archive.
tar czf "${TMPDIR:-/tmp}/tune.tgz" -C "$O" . 2>/dev/null && rm -rf "${O:?}"/* && mv "${TMPDIR:-/tmp}/tune.tgz" "$O/"
