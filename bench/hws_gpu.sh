#!/usr/bin/env bash
# GPU checks of hws (issue 41: BF16/FP16 on wgmma, fed by the copy engine, warp-specialised,
# persistent) on one Hopper GPU with the prebuilt build/engine. Logs under $OUT/hws (or
# /tmp/hws-gpu); the last lines are a short table. About 4-6 minutes without the epi sections. In order:
#   1. verify, bf16 and f16: odd shapes in every op, rows padded by 8, a strided batch, tile
#      variants (256x128, 128x128, one consumer warpgroup, promotion); odd shapes and rows padded
#      by 1 or 3 take the first launches that copy A or B into 16-byte aligned rows (PACKA, PACKB)
#      split-K (SPLITK: FP32 partials, reduced last), turns (PINGPONG)
#   2. accuracy: classes bf16 and f16 at K = 1 ... 65536, with and without promotion, split-K
#   3. compute-sanitizer memcheck (op TN) and racecheck (NN) at 127x129x131
#   4. bench beside cuBLAS GemmEx at 4096^3 and 8192^3 (NN, NT) with h04_tuned (mma.sync) beside it,
#      the transformer's NT layers, and (HWS_TUNE=1) engine tune over tune/hws.json at 4096^3 NN
#   epi: the staged epilogues (EPI 1: through shared memory, 16-byte rows; EPI 2: the copy engine
#      stores), never run before: verify at odd shapes in every op and both dtypes, C's rows padded
#      by 1, 2, 4 and 8 at N = 129, 1001, 72 (EVEC_C 1, 2, 4 and 8 among them; EPI 2 stores through
#      the copy engine at 8 only, else as EPI 1), batches, every variant (tiles, one warpgroup,
#      turns, split-K, promotion), K = 0, several tiles a block; beta = 0 and beta != 0 each
#      (verify's default) and alpha, beta given; and K = 0 with EPI 0
#   epi-san: memcheck and racecheck of EPI 1 and 2 (the warpgroups' named barriers, two buffers),
#      one tile a block and several
#   epi-bench: 4096^3 and 8192^3 with EPI 0, 1, 2 beside cuBLAS (NN, NT, both dtypes; turns)
# HWS_SECTIONS="verify acc san bench epi epi-san epi-bench" (the default) or some of them, for
# shorter device calls (the epilogues alone: "epi", "epi-san" and "epi-bench" as three calls, a few
# minutes each by estimate: not yet timed);
# HWS_TAR=1: the logs go home as one archive, $OUT/hws.tgz.
set -u
cd "$(dirname "$0")/.." || exit 2
E=build/engine
L=${OUT:-/tmp/hws-gpu}/hws
mkdir -p "$L"
export XDG_CACHE_HOME=${TMPDIR:-/tmp}/hws-cache XDG_DATA_HOME=${TMPDIR:-/tmp}/hws-data
[ -x "$E" ] || { echo "hws_gpu: needs build/engine"; exit 2; }
T0=$(date +%s)
RESULTS=()
note() { RESULTS+=("$1"); echo "$1"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv >"$L/smi.csv" 2>&1
v() {
  local name=$1; shift
  timeout 300 $E verify "$@" >"$L/v-$name.txt" 2>&1
  local rc=$? last; last=$(grep -a '^verify:' "$L/v-$name.txt" | tail -1)
  [ $rc = 0 ] && note "ok    verify $name: $last" || note "FAIL  verify $name (exit $rc): ${last:-$(tail -1 "$L/v-$name.txt")}"
}
b() {
  local name=$1; shift
  timeout 300 $E bench "$@" --runs 5 --format jsonl >"$L/b-$name.jsonl" 2>"$L/b-$name.err"
  echo "bench $name exit $?" >>"$L/b-$name.err"
}
HB=configs/hws_bf16.json HF=configs/hws_f16.json
ODD=1x1x1,17x33x5,127x129x131,1000x1001x999,4096x4096x7,1x4096x1104,300x8x704,64x64x65
want() { [[ " ${HWS_SECTIONS:-verify acc san bench epi epi-san epi-bench} " == *" $1 "* ]]; }
if want verify; then
echo "== 1. verify"
for op in NN NT TN TT; do v "$op" $HB $HF --op $op --shapes $ODD; done
v pad $HB $HF --op NT --lda +8 --ldb +8 --ldc +3 --shapes 127x129x131,64x64x64
v pad-NN $HB $HF --lda +8 --ldb +16 --ldc +1 --shapes 127x129x131,300x200x100
v batch $HB $HF --batch 3 --shapes 127x129x131,64x200x64
v batch-TN $HB --op TN --batch 5 --shapes 65x130x96
v 256x128 $HB $HF --set BM=256 --set BN=128 --op TN --shapes 127x129x131,1000x1001x999
v 128x128 $HB --set BN=128 --shapes 127x129x131,1000x1001x999
v wgs1 $HB --set WGS=1 --set BM=64 --set BN=128 --op NT --shapes 127x129x131,1000x1001x999
v prom $HB $HF --set BN=128 --set KPROMOTE=256 --shapes 127x129x1310,1000x1001x999
v pp $HB $HF --set PINGPONG=1 --set BN=128 --op TN --shapes $ODD,2048x2048x1024,4096x4096x4096
v pp-64x256 $HB --set PINGPONG=1 --set BM=64 --op NT --lda +8 --shapes 127x129x131,1000x1001x999
v pp-batch $HF --set PINGPONG=1 --set BN=128 --batch 3 --op TT --shapes 127x129x131,64x200x64,1024x1024x1024
v splitk $HB $HF --set SPLITK=4 --shapes 1x1x1,127x129x1310,1x4096x1100,128x4096x4096,64x64x65
v splitk-NT $HB --set SPLITK=7 --set PINGPONG=1 --set BN=128 --op NT --beta -0.5 --shapes 8x4096x4096,33x65x999,300x8x7000,512x4096x4096
v splitk-many $HB --set SPLITK=8 --set BN=128 --op NT --shapes 8x4096x4096,32x4096x11008,512x4096x4096
v splitk-batch $HB --set SPLITK=3 --batch 3 --op TN --ldc +5 --shapes 127x129x1310,17x33x500
v ld1 $HB $HF --op TT --lda +1 --ldb +3 --ldc +1 --batch 2 --shapes 64x64x64,127x129x131
fi
if want epi; then
echo "== 1b. the staged epilogues (EPI 1, 2)"
# K = 0 with EPI 0 too: its accumulators are never written when no k-tile runs (EPI 1 and 2 zero them).
v k0 $HB $HF --shapes 5x5x0,64x33x0,300x520x0
MANY=2048x2048x1024,4096x4096x512 # more tiles than blocks: several items a block, the buffers reused across tiles
for e in 1 2; do
  for op in NN NT TN TT; do v "epi$e-$op" $HB $HF --set EPI=$e --op $op --shapes $ODD,$MANY; done
  for p in 1 2 4 8; do v "epi$e-ldc$p" $HB --set EPI=$e --ldc +$p --shapes 127x129x131,1000x1001x999,64x72x64; done
  v "epi$e-ab" $HB $HF --set EPI=$e --alpha 0.75 --beta -1.25 --op NT --shapes 127x129x131,1000x1001x999,$MANY
  v "epi$e-batch" $HB $HF --set EPI=$e --batch 3 --shapes 127x129x131,64x200x64,1000x1001x999
  v "epi$e-batch-ld" $HB --set EPI=$e --batch 2 --op TN --ldc +8 --stride-c 300000 --shapes 127x129x131,520x264x64
  v "epi$e-k0" $HB $HF --set EPI=$e --shapes 5x5x0,64x33x0,300x520x0
  v "epi$e-256x128" $HB $HF --set EPI=$e --set BM=256 --set BN=128 --op TN --shapes 127x129x131,1000x1001x999,$MANY
  v "epi$e-128x128" $HB --set EPI=$e --set BN=128 --shapes 127x129x131,1000x1001x999,$MANY
  v "epi$e-wgs1" $HB --set EPI=$e --set WGS=1 --set BM=64 --set BN=128 --op NT --shapes 127x129x131,1000x1001x999,$MANY
  v "epi$e-wgs1-64" $HB --set EPI=$e --set WGS=1 --set BM=64 --set BN=64 --op TT --shapes 127x129x131,1000x1001x999
  v "epi$e-prom" $HB $HF --set EPI=$e --set BN=128 --set KPROMOTE=256 --shapes 127x129x1310,1000x1001x999
  v "epi$e-pp" $HB $HF --set EPI=$e --set PINGPONG=1 --set BN=128 --op TN --shapes $ODD,$MANY,4096x4096x4096
  v "epi$e-pp-64x256" $HB --set EPI=$e --set PINGPONG=1 --set BM=64 --op NT --lda +8 --shapes 127x129x131,1000x1001x999,$MANY
  v "epi$e-pp-batch" $HF --set EPI=$e --set PINGPONG=1 --set BN=128 --batch 3 --op TT --shapes 127x129x131,64x200x64,1024x1024x1024
  v "epi$e-splitk" $HB $HF --set EPI=$e --set SPLITK=4 --shapes 1x1x1,127x129x1310,1x4096x1100,128x4096x4096,64x64x65
  v "epi$e-splitk-pp" $HB --set EPI=$e --set SPLITK=7 --set PINGPONG=1 --set BN=128 --op NT --beta -0.5 --shapes 8x4096x4096,33x65x999,512x4096x4096
done
fi
if want epi-san; then
echo "== 3b. compute-sanitizer: the staged epilogues"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
if [ -n "$CS" ]; then
  for run in memcheck:1:TN memcheck:2:NT racecheck:1:NN racecheck:2:NN racecheck:1:TT-pp; do
    IFS=: read -r tool e op <<<"$run"
    extra=; [ "${op#*-}" = pp ] && extra="--set PINGPONG=1 --set BN=128"
    # shellcheck disable=SC2086
    timeout 200 "$CS" --tool $tool --target-processes all --error-exitcode 9 $E verify $HB --set EPI=$e $extra --op ${op%-*} \
      --shapes 127x129x131,2100x4100x64 --no-cache >"$L/cs-$tool-epi$e-$op.txt" 2>&1
    rc=$?; [ $rc = 0 ] && note "ok    $tool EPI=$e $op" || note "FAIL  $tool EPI=$e $op (exit $rc): $(grep -a -m1 'ERROR\|error' "$L/cs-$tool-epi$e-$op.txt")"
  done
else
  note "skip  compute-sanitizer (epi): not found"
fi
fi
if want acc; then
echo "== 2. accuracy"
ACC=33x65x1,33x65x7,129x127x64,257x255x4096,128x128x16384,64x64x65536
v acc $HB $HF --shapes $ACC
v acc-prom $HB $HF --set BN=128 --set KPROMOTE=256 --shapes $ACC
v acc-pp-split $HB $HF --set PINGPONG=1 --set BN=128 --set SPLITK=8 --shapes $ACC
fi
if want san; then
echo "== 3. compute-sanitizer"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
if [ -n "$CS" ]; then
  for tool_op in memcheck:TN racecheck:NN; do
    tool=${tool_op%:*} op=${tool_op#*:}
    timeout 200 "$CS" --tool $tool --target-processes all --error-exitcode 9 $E verify $HB --op $op --shapes 127x129x131 --no-cache \
      >"$L/cs-$tool-$op.txt" 2>&1
    rc=$?; [ $rc = 0 ] && note "ok    $tool $op" || note "FAIL  $tool $op (exit $rc): $(grep -a -m1 'ERROR\|error' "$L/cs-$tool-$op.txt")"
  done
else
  note "skip  compute-sanitizer: not found"
fi
fi
if want bench; then
echo "== 4. bench"
for dt in bf16 f16; do
  b sq-$dt $HB configs/h04_tuned.json --dtype $dt --shapes 4096x4096x4096,8192x8192x8192
  b nt-$dt $HB configs/h04_tuned.json --dtype $dt --op NT --shapes 4096x4096x4096,8192x8192x8192,2048x11008x4096,512x4096x4096
done
b odd-bf16 $HB configs/h04_tuned.json --shapes 4095x4097x4099,1000x1001x999
b skinny-bf16 $HB configs/h04_tuned.json --op NT --shapes 8x4096x4096,32x4096x11008,128x4096x4096,512x4096x4096,1000x1000x1000
for sk in 2 4 8; do
  b "skinny-sk$sk" $HB --set PINGPONG=1 --set BN=128 --set SPLITK=$sk --op NT --shapes 8x4096x4096,32x4096x11008,128x4096x4096,512x4096x4096,1000x1000x1000
done
for set in "PINGPONG=1 --set BN=128" "PINGPONG=1 --set BM=64" "PINGPONG=1 --set BN=128 --set STAGES=6" "BM=256 --set BN=128" "BN=128 --set KPROMOTE=256"; do
  b "v-${set// /_}" $HB --set $set --shapes 4096x4096x4096,8192x8192x8192
done
if [ "${HWS_TUNE:-0}" = 1 ]; then
  timeout 300 $E tune tune/hws.json --log "$L/tune.jsonl" >"$L/tune.txt" 2>&1
  note "tune  exit $?: $(grep -a -m1 -i 'best' "$L/tune.txt" | cut -c1-120)"
fi
fi
if want epi-bench; then
echo "== 4b. bench: the epilogues (EPI 0, 1, 2) beside cuBLAS"
for e in 0 1 2; do
  b "epi$e" $HB $HF --set EPI=$e --shapes 4096x4096x4096,8192x8192x8192
  b "epi$e-NT" $HB --set EPI=$e --op NT --shapes 4096x4096x4096,8192x8192x8192,2048x11008x4096
  b "epi$e-pp" $HB --set EPI=$e --set PINGPONG=1 --set BN=128 --shapes 4096x4096x4096,8192x8192x8192
  b "epi$e-pp-64x256" $HB --set EPI=$e --set PINGPONG=1 --set BM=64 --shapes 4096x4096x4096,8192x8192x8192
done
fi
python3 bench/rows_table.py "$L" | tee "$L/table.txt"
echo "== hws_gpu: $(( $(date +%s) - T0 )) s"
printf '%s\n' "${RESULTS[@]}" | tee "$L/results.txt"
if [ "${HWS_TAR:-0}" = 1 ]; then
  tar czf "$L.tgz" -C "$(dirname "$L")" "$(basename "$L")" && rm -rf "$L"
fi
