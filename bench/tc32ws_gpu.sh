#!/usr/bin/env bash
# GPU checks of tc32ws (issue 40: the TMA-fed, warp-specialised, persistent 3xTF32/1xTF32 kernels)
# on one Hopper GPU, with the prebuilt build/engine only. Logs under $OUT/tc32ws (or /tmp/tc32ws-gpu);
# the last lines are a short table. About 3-5 minutes. In order:
#   1. verify at odd shapes in every op, with padded rows, a strided batch, beta 0 (C NaN-poisoned)
#      and -0.5: the four tc32ws configs, A copied raw or rounded first (APRE 0 / 1), split-K,
#      64-row tiles, one consumer warpgroup
#   2. accuracy: tc32ws_3x in class f32 at K = 1 ... 65536
#   3. compute-sanitizer memcheck and racecheck at 127x129x131 (NN and NT)
#   4. Nsight Compute counters of tc32ws_3x, tc32_3x and tc32ws_1x at 4096^3 (TCWS_NCU=0: skipped)
#   5. bench beside cuBLAS (strict and TF32) at the squares and the transformer shapes: tc32ws_3x
#      (and _rs) against tc32_3x, tc32ws_1x (and _nt) against tc32_1x, split-K at skinny shapes, and
#      a few of tc32ws's params moved
# TCWS_BENCH_SHAPES=LIST replaces section 5's shapes; TCWS_VARIANTS=0 skips the moved params,
# TCWS_NCU=0 the counters, TCWS_NT=0 the NT and skinny benches.
set -u
cd "$(dirname "$0")/.." || exit 2
E=build/engine
L=${OUT:-/tmp/tc32ws-gpu}/tc32ws
mkdir -p "$L"
export XDG_CACHE_HOME=${TMPDIR:-/tmp}/tc32ws-cache XDG_DATA_HOME=${TMPDIR:-/tmp}/tc32ws-data
[ -x "$E" ] || { echo "tc32ws_gpu: needs build/engine"; exit 2; }
T0=$(date +%s)
RESULTS=()
note() { RESULTS+=("$1"); echo "$1"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv >"$L/smi.csv" 2>&1
# v NAME ARGS...: one verify run; ok when it exits 0
v() {
  local name=$1; shift
  timeout 300 $E verify "$@" >"$L/v-$name.txt" 2>&1
  local rc=$? last; last=$(grep -a '^verify:' "$L/v-$name.txt" | tail -1)
  [ $rc = 0 ] && note "ok    verify $name: $last" || note "FAIL  verify $name (exit $rc): ${last:-$(tail -1 "$L/v-$name.txt")}"
}
W3=configs/tc32ws_3x.json W1=configs/tc32ws_1x.json R3=configs/tc32ws_3x_rs.json N1=configs/tc32ws_1x_nt.json
ODD=1x1x1,17x33x5,127x129x131,1000x1001x999,4096x4096x7,1x4096x1100,300x8x700
echo "== 1. verify"
for op in NN NT TN TT; do v "$op" $W3 $W1 $R3 $N1 --op $op --shapes $ODD; done
v pad-NT $W3 $W1 $R3 $N1 --op NT --lda +8 --ldb +4 --ldc +3 --shapes 127x129x131,64x64x64
v batch $W3 $W1 $R3 $N1 --batch 3 --shapes 127x129x131,64x200x64
v batch-NT $W3 --batch 5 --op NT --shapes 65x130x96
v raw-A $W1 --set APRE=0 --shapes 127x129x132,1000x1001x1000
v pre-A $W1 --set APRE=1 --shapes 127x129x132,1000x1001x1000
v ldb-odd $W3 $W1 --op NT --ldb +1 --lda +3 --shapes 64x64x64,100x37x129
v splitk $W3 $W1 --set SPLITK=4 --shapes 128x4096x1100,127x129x1310,1x64x4096
v splitk-NT $W3 --set SPLITK=7 --op NT --shapes 128x4096x1100,33x65x999
v bm64 $W3 $W1 --set BM=64 --shapes 127x129x131,1000x1001x999
v wgs1 $W3 --set WGS=1 --shapes 127x129x131,1000x1001x999
echo "== 2. accuracy"
v acc $W3 --shapes 33x65x1,33x65x7,129x127x64,257x255x4096,128x128x16384,64x64x65536
echo "== 3. compute-sanitizer"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
if [ -n "$CS" ]; then
  for tool in memcheck racecheck; do
    for op in NN NT; do
      timeout 240 "$CS" --tool $tool --target-processes all --error-exitcode 9 $E verify $W3 --op $op --shapes 127x129x131 --no-cache \
        >"$L/cs-$tool-$op.txt" 2>&1
      rc=$?; [ $rc = 0 ] && note "ok    $tool $op" || note "FAIL  $tool $op (exit $rc): $(grep -a -m1 'ERROR\|error' "$L/cs-$tool-$op.txt")"
    done
  done
else
  note "skip  compute-sanitizer: not found"
fi
echo "== 4. counters"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
if [ -n "$NCU" ] && [ "${TCWS_NCU:-1}" = 1 ]; then
  for c in $W3 configs/tc32_3x.json $W1; do
    n=$(basename $c .json)
    timeout 240 "$NCU" --target-processes all -k regex:^gemm -c 1 --launch-skip 2 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats \
      --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum \
      $E bench $c --size 4096 --runs 1 --iters 1 --warmup 1 --no-cache >"$L/ncu-$n.txt" 2>&1
    note "ncu   $n: exit $? ($(grep -a -m1 'gmma_cycles_active' "$L/ncu-$n.txt" | awk '{print $NF}') % tensor pipe)"
  done
else
  note "skip  ncu: not found"
fi
echo "== 5. bench"
SH=${TCWS_BENCH_SHAPES:-4096x4096x4096,8192x8192x8192}
b() {
  local name; name=$(printf %s "$1" | tr -c 'A-Za-z0-9_.\n-' _); shift
  timeout 400 $E bench "$@" --runs 5 --format jsonl >"$L/b-$name.jsonl" 2>"$L/b-$name.err"
  echo "bench $name exit $?" >>"$L/b-$name.err"
}
b sq $W3 $R3 configs/tc32_3x.json $W1 $N1 configs/tc32_1x.json --shapes $SH
[ "${TCWS_NT:-1}" = 1 ] && b nt $W3 configs/tc32_3x.json $W1 configs/tc32_1x.json --op NT --shapes 2048x11008x4096,8192x4096x4096
[ "${TCWS_NT:-1}" = 1 ] && for set in "SPLITK=4" "SPLITK=8" "BM=64 --set SPLITK=4"; do
  b "skinny-${set// /_}" $W3 $W1 --set $set --op NT --shapes 128x4096x11008,32x4096x4096,512x11008x4096
done
if [ "${TCWS_VARIANTS:-1}" = 1 ]; then
  for set in "BREG=1 --set STAGES=4" "STAGES=2" "GROUP=16"; do b "v3-${set// /_}" $W3 --set $set --shapes 4096x4096x4096; done
  for set in APRE=1 STAGES=3; do b "v1-${set// /_}" $W1 --set $set --shapes 4096x4096x4096; done
fi
python3 bench/rows_table.py "$L" | tee "$L/table.txt"
echo "== tc32ws_gpu: $(( $(date +%s) - T0 )) s"
printf '%s\n' "${RESULTS[@]}" | tee "$L/results.txt"
# The device tool brings back a few files only: with TCWS_TAR=1 the logs go home as one archive.
if [ "${TCWS_TAR:-0}" = 1 ]; then
  tar czf "$L.tgz" -C "$(dirname "$L")" "$(basename "$L")" && rm -rf "$L"
fi
