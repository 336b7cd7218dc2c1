#!/usr/bin/env bash
# GPU checks of the FP32 tensor-core kernels (issue 26, fifth round: SWAP, the operands' roles
# swapped so that B's fragments come from registers and A's raw tile is the tensor cores' shared-
# memory operand) on one H100, with the prebuilt build/engine only. Logs under $OUT/tc32 (or
# /tmp/tc32-gpu); the last lines are a short table. TC32_QUICK=1: about 2-3 minutes (<= 4); the
# whole script about 5 (under 8). Checks, in order:
#   1. verify (no --arch) at 1x1x1, 17x33x5, 127x129x131, 1000x1001x999, 4096x4096x7 and 260x196x100
#      (the last: rows of 16 bytes, so the 16-byte cp.async with edges in M, N and K), beta = 0 (C
#      NaN-poisoned) and 0.5, 12 rows each, all ok: the shipped tc32_3x and tc32_1x (SWAP), tc32_sync,
#      and the candidates: 3x_areg4 and 1x_areg4 (the fourth round's shipped kernels), 3x_sw_r5 (5
#      raw stages), 3x_sw_s16 (supertile 16), 1x_sw128_r1 (1xTF32 at 128 x 128 with promotion);
#      without TC32_QUICK also the controls (the register-staged path, tc32_3x_async, tc32_3x_areg,
#      tc32_1x_async); tc32_3x and tc32_1x on a strided batch of 3 (grid z) and at op NT with padded rows; --op TN refused (exit 2)
#   2. (not TC32_QUICK) targets without --arch: the rerun line of tc32_3x says sm_90a, those of
#      tc32_sync and warptile_db sm_90 (only arch-specific templates leave the portable target)
#   3. accuracy classes at K = 1, 7, 64, 4096, 16384, 65536 (both betas, 12 rows): the 3-pass
#      candidates pass class f32, the 1-pass ones class tf32 (judged as tf32); 1x_sw_r0 (ROUND 0:
#      the FP32 bits unrounded, which the tensor cores truncate) fails class tf32 at every K; without TC32_QUICK also the shipped configs and
#      tc32_sync, the 1-pass kernel held to class f32 fails every row, the fixture tf32_inputs fails
#      class f32 and tf32_inputs_tf32 passes class tf32
#   4. compute-sanitizer memcheck of tc32_3x, tc32_1x and 1x_sw128_r1 at 127x129x131; without TC32_QUICK also at 260x196x100, and
#      racecheck
#   5. bench at 4096^3, 8192^3, 12288^3, --runs 7, beside cuBLAS strict SGEMM (row cublas) and
#      FAST_TF32 (row cublas_tf32), SM clock, board power and blocks an SM (occ) in each row: the
#      shipped tc32_3x and tc32_1x and the candidates; must exit 0 (every row within its class), every row of the tc32_* configs ok
#   6. (TC32_OLD=1 only) the second round's speed variants at 4096^3, already measured (RESULTS.md)
# TC32_BENCH_SHAPES=LIST replaces section 5's shapes (a device call short of time).
# Usage: TC32_QUICK=1 bash bench/tc32_gpu.sh   (from the repository root, after make; build/ carried)
set -u
cd "$(dirname "$0")/.." || exit 2
E=build/engine
L=${OUT:-/tmp/tc32-gpu}/tc32
mkdir -p "$L/var"
export XDG_CACHE_HOME=${TMPDIR:-/tmp}/tc32-cache XDG_DATA_HOME=${TMPDIR:-/tmp}/tc32-data
[ -x "$E" ] && [ -f kernels_src/tc32.cu ] || { echo "tc32_gpu: needs build/engine and kernels_src/tc32.cu"; exit 2; }
T0=$(date +%s)
RESULTS=()
note() { RESULTS+=("$1"); echo "$1"; }
SHAPES=1x1x1,17x33x5,127x129x131,1000x1001x999,4096x4096x7,260x196x100
ACC=33x65x1,33x65x7,129x127x64,257x255x4096,128x128x16384,64x64x65536
smi() { nvidia-smi --query-gpu=name,compute_cap,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv >"$L/smi-$1.csv" 2>&1; }
smi start
cat "$L/smi-start.csv"

# cfg NAME TEMPLATE PARAMS [ACCURACY]: a variant config under $L/var
cfg() {
  printf '{"name": "%s", "template": "%s", "dtype": "f32", %s"params": %s, "description": "tc32_gpu.sh variant"}\n' \
    "$1" "$2" "${4:+\"accuracy\": \"$4\", }" "$3" >"$L/var/$1.json"
}
B3='"BM": 128, "BN": 128, "PASSES": 3'
V=$L/var
cfg 3x_bmap1 tc32 "{$B3, \"KPROMOTE\": 128, \"FOLD\": 1, \"SUPER\": 8, \"BMAP\": 1}"
cfg 3x_pf tc32 "{$B3, \"KPROMOTE\": 128, \"FOLD\": 1, \"SUPER\": 8, \"PREFETCH\": 1}"
cfg 3x_pf_bmap1 tc32 "{$B3, \"KPROMOTE\": 128, \"FOLD\": 1, \"SUPER\": 8, \"PREFETCH\": 1, \"BMAP\": 1}"
cfg 1x_pf tc32 '{"BM": 128, "BN": 128, "PASSES": 1, "KPROMOTE": 128, "SUPER": 8, "PREFETCH": 1}' tf32
cfg 1x_pf_s4 tc32 '{"BM": 128, "BN": 128, "PASSES": 1, "KPROMOTE": 128, "SUPER": 8, "PREFETCH": 1, "STAGES": 4}' tf32
cfg 3x_nopromote tc32 "{$B3, \"KPROMOTE\": 0, \"SUPER\": 8}"
cfg 3x_sep tc32 "{$B3, \"KPROMOTE\": 128, \"FOLD\": 0, \"SUPER\": 8}"
cfg 3x_p256_regstage tc32 "{$B3, \"KPROMOTE\": 256, \"FOLD\": 1, \"SUPER\": 8}"
cfg sync_nopromote dmma '{"BM": 128, "BN": 128, "BK": 32, "WM": 64, "WN": 32, "THREADS": 256, "STAGES": 2, "VEC_A": 4, "VEC_B": 4, "PAD_A": 4, "PAD_B": 8, "SUPER": 8, "PASSES": 3, "KPROMOTE": 0}'
# The controls: the register-staged path shipped until the fourth round (tc32_3x and tc32_1x's old
# parameters), kept for the A/B.
cfg 3x_regstage tc32 "{$B3, \"KPROMOTE\": 128, \"FOLD\": 1, \"SUPER\": 8}"
cfg 1x_regstage tc32 '{"BM": 128, "BN": 128, "PASSES": 1, "KPROMOTE": 128, "SUPER": 8}' tf32
# The fifth round (SWAP: D = B^T A^T, B's fragments from registers read straight from its raw
# stage, A's raw tile the shared-memory operand; two fragment buffers, wait_group 1) is shipped:
# tc32_3x (128 x 128, 4 raw stages) and tc32_1x (256 x 128, rounded, 3 raw stages). The controls
# are the fourth round's shipped kernels (A from registers, B's transposed split), one change each
# from the shipped: 5 raw stages, supertile 16, 1xTF32 at 128 x 128 with promotion. 1x_sw_r0 hands
# the FP32 bits to the tensor cores unrounded: it must fail class tf32 (section 3).
S1='"BM": 128, "PASSES": 1, "STAGES": 2, "BMAP": 2, "AREG": 1'
SW='"SUPER": 8, "SWAP": 1'
cfg 3x_areg4 tc32 '{"BM": 128, "BN": 128, "PASSES": 3, "KPROMOTE": 128, "FOLD": 1, "SUPER": 8, "STAGES": 2, "RAW_STAGES": 4, "BMAP": 2, "AREG": 1}'
cfg 1x_areg4 tc32 "{$S1, \"BN\": 128, \"KPROMOTE\": 128, \"SUPER\": 8, \"RAW_STAGES\": 4}" tf32
cfg 3x_sw_r5 tc32 "{\"BM\": 128, \"BN\": 128, \"PASSES\": 3, \"KPROMOTE\": 128, \"FOLD\": 1, \"STAGES\": 2, \"RAW_STAGES\": 5, $SW}"
cfg 3x_sw_s16 tc32 '{"BM": 128, "BN": 128, "PASSES": 3, "KPROMOTE": 128, "FOLD": 1, "SUPER": 16, "STAGES": 2, "RAW_STAGES": 4, "SWAP": 1}'
cfg 1x_sw128_r1 tc32 "{\"BM\": 128, \"BN\": 128, \"PASSES\": 1, \"KPROMOTE\": 128, \"STAGES\": 2, \"RAW_STAGES\": 4, \"ROUND\": 1, $SW}" tf32
cfg 1x_sw_r0 tc32 "{\"BM\": 256, \"BN\": 128, \"PASSES\": 1, \"KPROMOTE\": 0, \"RAW_STAGES\": 4, \"ROUND\": 0, $SW}" tf32
cfg tc32_1x_as_f32 tc32 "{$S1, \"BN\": 128, \"KPROMOTE\": 128, \"SUPER\": 8, \"RAW_STAGES\": 4}"
CAND3N="3x_areg4 3x_sw_r5 3x_sw_s16"
CAND1N="1x_areg4 1x_sw128_r1"
CAND3=$(for c in $CAND3N; do printf "%s " "$V/$c.json"; done)
CAND1=$(for c in $CAND1N; do printf "%s " "$V/$c.json"; done)
SAN="configs/tc32_3x.json configs/tc32_1x.json $V/1x_sw128_r1.json"
NSAN=3
CTRL="" CTRLN=""
if [ -z "${TC32_QUICK:-}" ]; then
  CTRL="$V/3x_regstage.json $V/1x_regstage.json configs/tc32_3x_async.json configs/tc32_3x_areg.json configs/tc32_1x_async.json"
  CTRLN="3x_regstage 1x_regstage tc32_3x_async tc32_3x_areg tc32_1x_async"
fi

# run_verify LOG ARGS...: one verify run (several configs), its exit code in $VRC
run_verify() {
  local log=$L/$1.txt
  shift
  timeout 150 $E verify "$@" >"$log" 2>&1
  VRC=$?
}
# rows LOG NAME STATUS: how many rows of config NAME in LOG have STATUS (ok or FAIL)
rows() { grep -a -c -E "^$3 +$2 " "$L/$1.txt"; }
# want LOG NAME N WHAT: all N rows of NAME ok
want() {
  local ok bad
  ok=$(rows "$1" "$2" ok)
  bad=$(rows "$1" "$2" FAIL)
  if [ "$ok" = "$3" ] && [ "$bad" = 0 ]; then note "ok    $2 $4: $ok of $3 rows ok"
  else note "FAIL  $2 $4: $ok of $3 rows ok, $bad FAIL"; grep -a -m 4 -E "^FAIL +$2 " "$L/$1.txt"; fi
}

echo "== 1. verify at odd shapes (no --arch), a batch, a refused layout"
run_verify v configs/tc32_3x.json configs/tc32_1x.json configs/tc32_sync.json $CTRL --beta 0.5 --shapes $SHAPES
[ $VRC = 0 ] || note "FAIL  verify of the shipped configs at odd shapes (exit $VRC): $(grep -a '^verify:' "$L/v.txt" | tail -1)"
for c in tc32_3x tc32_1x tc32_sync $CTRLN; do want v $c 12 "at odd shapes"; done
run_verify v-new $CAND3 $CAND1 --beta 0.5 --shapes $SHAPES
[ $VRC = 0 ] || note "FAIL  verify of the candidates at odd shapes (exit $VRC): $(grep -a '^verify:' "$L/v-new.txt" | tail -1)"
for c in $CAND3N $CAND1N; do want v-new $c 12 "at odd shapes"; done
if [ $VRC = 124 ]; then # a kernel that does not finish: keep the candidates out of the rest (8 minutes)
  note "FAIL  verify of the candidates timed out: they are left out of sections 3-5"
  CAND3="" CAND1="" CAND3N="" CAND1N="" SAN=""
fi
run_verify v-batch configs/tc32_3x.json configs/tc32_1x.json --batch 3 --beta 0.5 --shapes 127x129x131,64x64x64
for c in tc32_3x tc32_1x; do want v-batch $c 4 "on a batch of 3"; done
run_verify v-nt configs/tc32_3x.json configs/tc32_1x.json --op NT --lda +8 --ldb +8 --ldc +8 --shapes 127x129x131,64x64x64
for c in tc32_3x tc32_1x; do want v-nt $c 4 "op NT, lda/ldb/ldc + 8"; done
timeout 60 $E verify configs/tc32_3x.json --op TN --shapes 64x64x64 >"$L/v-tn.txt" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q 'requires TA == 0' "$L/v-tn.txt"; then note "ok    tc32_3x --op TN refused (exit 2)"
else note "FAIL  tc32_3x --op TN refused (exit $rc)"; tail -2 "$L/v-tn.txt"; fi
echo "   $(( $(date +%s) - T0 )) s so far"

if [ -z "${TC32_QUICK:-}" ]; then
echo "== 2. targets without --arch"
timeout 90 $E bench configs/tc32_3x.json configs/tc32_sync.json configs/warptile_db.json --size 1024 --runs 3 \
  --format jsonl >"$L/targets.jsonl" 2>"$L/targets.err"
rc=$?
a3=$(grep -c '"config":"tc32_3x".*"args":"[^"]*--arch sm_90a"' "$L/targets.jsonl")
as=$(grep -c '"config":"tc32_sync".*"args":"[^"]*--arch sm_90"' "$L/targets.jsonl")
aw=$(grep -c '"config":"warptile_db".*"args":"[^"]*--arch sm_90"' "$L/targets.jsonl")
if [ $rc = 0 ] && [ "$a3" = 1 ] && [ "$as" = 1 ] && [ "$aw" = 1 ]; then
  note "ok    targets: tc32_3x sm_90a, tc32_sync and warptile_db sm_90"
else note "FAIL  targets (exit $rc; sm_90a rows of tc32_3x $a3, sm_90 rows of tc32_sync $as, warptile_db $aw)"; fi

fi

echo "== 3. accuracy classes at K = 1, 7, 64, 4096, 16384, 65536"
# The candidates always; the shipped configs (verified under their old names in the third round)
# and the fixtures without TC32_QUICK.
SHIP3="" SHIP1=""
[ -z "${TC32_QUICK:-}" ] && SHIP3="tc32_3x tc32_sync" SHIP1="tc32_1x"
SHIPC=$(for c in $SHIP3 $SHIP1; do printf '%s ' "configs/$c.json"; done)
# shellcheck disable=SC2086
run_verify acc $SHIPC $CAND3 $CAND1 --shapes $ACC
for c in $SHIP3 $CAND3N; do want acc $c 12 "class f32"; done
for c in $SHIP1 $CAND1N; do
  want acc $c 12 "class tf32"
  n=$(grep -a -c -E "^ok +$c .* tf32 err " "$L/acc.txt")
  [ "$n" = 12 ] && note "ok    $c judged as class tf32 (12 rows)" || note "FAIL  $c judged as class tf32 ($n of 12 rows)"
done
if [ -z "${TC32_QUICK:-}" ]; then
run_verify acc-1x-f32 $V/tc32_1x_as_f32.json --shapes $ACC
nf=$(grep -a -c -E '^FAIL +tc32_1x_as_f32 .* f32 err ' "$L/acc-1x-f32.txt")
[ $VRC = 1 ] && [ "$nf" = 12 ] && note "ok    1xTF32 held to class f32 fails every row (12)" ||
  note "FAIL  1xTF32 held to class f32 fails every row (exit $VRC, $nf of 12 FAIL with f32 errors)"
FIXT="env ENGINE_TEMPLATES=tests/templates:kernels_src"
$FIXT timeout 120 $E verify tests/configs/gpu/tf32_inputs.json --shapes $ACC >"$L/acc-fix-f32.txt" 2>&1
rc=$?
nf=$(grep -a -c '^FAIL ' "$L/acc-fix-f32.txt")
[ $rc = 1 ] && [ "$nf" = 12 ] && note "ok    tf32_inputs fails class f32 at every K (12 rows)" ||
  note "FAIL  tf32_inputs fails class f32 at every K (exit $rc, $nf of 12 FAIL)"
$FIXT timeout 120 $E verify tests/configs/gpu/tf32_inputs_tf32.json --shapes $ACC >"$L/acc-fix-tf32.txt" 2>&1
rc=$?
sum=$(grep -a '^verify:' "$L/acc-fix-tf32.txt" | tail -1)
[ $rc = 0 ] && [ "$sum" = "verify: 12 passed, 0 failed, 0 errors" ] && note "ok    tf32_inputs_tf32 passes class tf32 at every K: $sum" ||
  note "FAIL  tf32_inputs_tf32 passes class tf32 at every K (exit $rc, $sum)"
fi
run_verify acc-r0 $V/1x_sw_r0.json --shapes $ACC
nf=$(grep -a -c -E '^FAIL +1x_sw_r0 .* tf32 err ' "$L/acc-r0.txt")
[ $VRC = 1 ] && [ "$nf" = 12 ] && note "ok    1xTF32 unrounded (ROUND 0: the tensor cores truncate) fails class tf32 at every K (12)" ||
  note "FAIL  1xTF32 unrounded fails class tf32 at every K (exit $VRC, $nf of 12 FAIL)"
if [ -n "${TC32_OLD:-}" ]; then
run_verify acc-var $V/3x_nopromote.json $V/3x_sep.json $V/3x_p256_regstage.json $V/sync_nopromote.json --shapes $ACC
for c in 3x_nopromote 3x_sep 3x_p256_regstage sync_nopromote; do
  note "info  $c: $(rows acc-var $c ok) of 12 rows within class f32"
done
fi
echo "-- errors by K (kernel max/mean u, the yardstick's in parentheses):"
grep -a -h -E '^(ok|FAIL) ' "$L"/acc-*.txt | sed -n 's/^\([a-zA-Z]*\) *\([^ ]*\) *f32 \([0-9x]*\) *beta=\([^ ]*\) .* \(f32\|tf32\) err \([^ ]*\) u (cuBLAS \([^)]*\)).*/\1 \2 \3 beta=\4 \5 \6 (\7)/p' | tee "$L/acc-by-k.txt"
echo "   $(( $(date +%s) - T0 )) s so far"

echo "== 4. compute-sanitizer: SWAP (the shipped tc32_3x and tc32_1x, and 1xTF32 at 128 x 128 with promotion) (memcheck at 127x129x131; the whole script also 260x196x100 and racecheck)"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1)
SSH=127x129x131 TOOLS=memcheck NS=$((NSAN * 2))
[ -z "${TC32_QUICK:-}" ] && SSH=127x129x131,260x196x100 TOOLS="memcheck racecheck" NS=$((NSAN * 4))
if [ -z "$CS" ] || [ -z "$SAN" ]; then note "SKIP  sanitizers: ${CS:+no configs left}${CS:-no compute-sanitizer}"; else
  for tool in $TOOLS; do
    log=$L/san-$tool.txt
    # shellcheck disable=SC2086
    timeout 200 "$CS" --tool $tool --target-processes all --error-exitcode 99 $E verify $SAN --beta 0.5 --shapes $SSH >"$log" 2>&1
    rc=$?
    sum=$(grep -a '^verify:' "$log" | tail -1)
    if [ $rc = 0 ] && ! grep -a -qE '(ERROR|RACECHECK) SUMMARY: [1-9]' "$log" && [ "$sum" = "verify: $NS passed, 0 failed, 0 errors" ]; then
      note "ok    $tool at $SSH: tc32_3x tc32_1x 1x_sw128_r1 ($sum)"
    else note "FAIL  $tool (exit $rc, ${sum:-no summary}; want $NS passed)"; grep -a -m 5 -E 'ERROR|hazard|Invalid' "$log"; fi
  done
fi
echo "   $(( $(date +%s) - T0 )) s so far"

echo "== 5. bench beside cuBLAS SGEMM (strict) and FAST_TF32, --runs 7"
# Board power and SM clock sampled every 200 ms through the bench (NVML's per-row power may be null).
nvidia-smi --query-gpu=timestamp,power.draw,clocks.sm --format=csv,noheader,nounits -lms 200 >"$L/smi-bench.csv" 2>/dev/null &
SMI_PID=$!
timeout 330 $E bench configs/tc32_3x.json configs/tc32_1x.json $CAND3 $CAND1 --runs 7 \
  --shapes ${TC32_BENCH_SHAPES:-4096x4096x4096,8192x8192x8192,12288x12288x12288} --format jsonl >"$L/bench.jsonl" 2>"$L/bench.err"
rc=$?
kill "$SMI_PID" 2>/dev/null
wait "$SMI_PID" 2>/dev/null
if [ -s "$L/smi-bench.csv" ]; then
  note "info  during the bench: $(sort -t, -k2 -g "$L/smi-bench.csv" | awk -F', *' '{p[NR] = $2; c[NR] = $3} END {if (NR) printf "%d samples, power median %.0f W max %.0f W, SM clock at the median-power sample %s MHz", NR, p[int((NR + 1) / 2)], p[NR], c[int((NR + 1) / 2)]}')"
fi
n=$(grep -c '"config":"tc32_[a-z0-9_]*",.*"status":"ok"' "$L/bench.jsonl")
nb=$(( 2 * $(tr , "\n" <<<"${TC32_BENCH_SHAPES:-a,b,c}" | grep -c .) )) # the tc32_* configs x shapes
nall=$(grep -c '"status":"ok"' "$L/bench.jsonl")
if [ $rc = 0 ] && [ "$n" = $nb ]; then note "ok    bench (exit 0, the $nb rows of tc32_* configs ok, $nall rows ok in all)"
else note "FAIL  bench (exit $rc, $n of $nb tc32_* rows ok, $nall rows ok in all)"; tail -5 "$L/bench.err"; fi
echo "   $(( $(date +%s) - T0 )) s so far"

if [ -n "${TC32_OLD:-}" ]; then
echo "== 6. speed variants at 4096^3 (second round)"
cfg 3x_p64 tc32 "{$B3, \"KPROMOTE\": 64, \"FOLD\": 1, \"SUPER\": 8}"
cfg 3x_stages2 tc32 "{$B3, \"KPROMOTE\": 128, \"FOLD\": 1, \"SUPER\": 8, \"STAGES\": 2}"
cfg 3x_super0 tc32 "{$B3, \"KPROMOTE\": 128, \"FOLD\": 1, \"SUPER\": 0}"
cfg 3x_super16 tc32 "{$B3, \"KPROMOTE\": 128, \"FOLD\": 1, \"SUPER\": 16}"
cfg 3x_bmap1_p256 tc32 "{$B3, \"KPROMOTE\": 256, \"FOLD\": 1, \"SUPER\": 8, \"BMAP\": 1}"
cfg 1x_bmap1 tc32 '{"BM": 128, "BN": 128, "PASSES": 1, "KPROMOTE": 128, "SUPER": 8, "BMAP": 1}' tf32
cfg 3x_bm64 tc32 '{"BM": 64, "BN": 128, "PASSES": 3, "KPROMOTE": 128, "FOLD": 1, "SUPER": 8, "STAGES": 2}'
cfg 1x_bn256 tc32 '{"BM": 128, "BN": 256, "PASSES": 1, "KPROMOTE": 0, "SUPER": 8}' tf32
cfg 1x_nopromote tc32 '{"BM": 128, "BN": 128, "PASSES": 1, "KPROMOTE": 0, "SUPER": 8}' tf32
cfg 3x_pf_bmap1_p256 tc32 "{$B3, \"KPROMOTE\": 256, \"FOLD\": 1, \"SUPER\": 8, \"PREFETCH\": 1, \"BMAP\": 1}"
timeout 150 $E bench $V/3x_pf_bmap1.json $V/3x_pf_bmap1_p256.json $V/1x_pf.json $V/1x_pf_s4.json $V/3x_bmap1.json \
  $V/3x_bmap1_p256.json $V/3x_p64.json $V/3x_p256_regstage.json $V/3x_stages2.json $V/3x_super0.json $V/3x_super16.json $V/3x_bm64.json $V/3x_sep.json $V/1x_bmap1.json $V/1x_bn256.json \
  $V/3x_nopromote.json $V/1x_nopromote.json $V/sync_nopromote.json --runs 7 --size 4096 --format jsonl \
  >"$L/bench-var.jsonl" 2>"$L/bench-var.err"
note "info  bench variants (exit $?; rows not ok: $(grep -vc '"status":"ok"' "$L/bench-var.jsonl"))"
fi
smi end
cat "$L/smi-end.csv"

echo
echo "== summary ($(( $(date +%s) - T0 )) s)"
printf '%s\n' "${RESULTS[@]}"
echo
cat "$L/bench.jsonl" "$L/bench-var.jsonl" >"$L/all.jsonl" 2>/dev/null
python3 - "$L/all.jsonl" <<'PY' || grep -o '"config":"[^"]*"\|"M":[0-9]*\|"tflops":[0-9.]*\|"pct_cublas":[0-9.]*' "$L/all.jsonl"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
shape = lambda r: f"{r['M']}x{r['N']}x{r['K']}"
ref = {}
for r in rows:
    if r["config"] in ("cublas", "cublas_tf32"):
        ref.setdefault((shape(r), r["config"]), r["ms"])
print("TFLOP/s beside cuBLAS strict SGEMM (x SGEMM) and FAST_TF32 (x TF32), the first cuBLAS rows of each shape;")
print("err: max/mean u against the FP64 reference, the class yardstick's in parentheses; MHz: SM clock; occ: blocks an SM")
print(f"{'config':<14} {'shape':>17} {'ms':>8} {'TFLOP/s':>8} {'xSGEMM':>7} {'xTF32':>6} {'MHz':>5} {'W':>4} {'regs':>4} {'spill':>5} {'occ':>3} {'status':<6} err")
seen, best = set(), {}
for r in rows:
    s, ms = shape(r), r["ms"]
    if r["config"].startswith("cublas"):
        if (s, r["config"]) in seen:
            continue
        seen.add((s, r["config"]))
    xs = ref.get((s, "cublas"), float("nan")) / ms if ms > 0 else float("nan")
    xt = ref.get((s, "cublas_tf32"), float("nan")) / ms if ms > 0 else float("nan")
    err = f"{r['err_max_u']:.3g}/{r['err_mean_u']:.3g} ({r.get('cublas_err_max_u', 0):.3g}/{r.get('cublas_err_mean_u', 0):.3g})" if "err_max_u" in r else ""
    print(f"{r['config']:<14} {s:>17} {ms:>8.3f} {r['tflops']:>8.1f} {xs:>7.2f} {xt:>6.2f} {r.get('clock_mhz') or 0:>5.0f} "
          f"{r.get('power_w') or 0:>4.0f} {r.get('regs', -1):>4} {r.get('spill_bytes', -1):>5} {r.get('occ_blocks') or 0:>3} {r.get('status', '?'):<6} {err}")
    if not r["config"].startswith("cublas") and ms > 0:
        best.setdefault(s, {})
        kind = "tf32" if r.get("class") == "tf32" else "f32"
        if r.get("status") == "ok" and (kind not in best[s] or ms < best[s][kind][1]):
            best[s][kind] = (r["config"], ms, xs, xt)
# The targets (issue 26): 3 passes >= 1.5x strict SGEMM, 1 pass >= 0.8x FAST_TF32; rows within their class only.
print()
print("best of each class per shape (issue 26 targets: f32 >= 1.50 x SGEMM, tf32 >= 0.80 x TF32)")
for s, b in best.items():
    for kind, want, col in (("f32", 1.5, 2), ("tf32", 0.8, 3)):
        if kind in b:
            c = b[kind]
            print(f"  {s:>17} {kind:<4} {c[0]:<14} {c[col]:5.2f} x {'SGEMM' if kind == 'f32' else 'TF32 '} "
                  f"{'met' if c[col] >= want else 'missed'}")
PY
