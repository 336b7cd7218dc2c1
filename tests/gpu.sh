#!/usr/bin/env bash
# make test-gpu — everything that needs the GPU, run with the prebuilt build/engine (the GPU machine
# has no jansson headers, so nothing is rebuilt here). Logs go to $GPU_LOG_DIR (default build/gpu-logs).
#   every shipped config verified at 1x1x1, 17x33x5, 127x129x131, 1000^3 and 2048^3, beta = 0 and != 0
#   f64 runs of the templates that take both types; the cuBLAS cross-check against the CPU
#   the warp tile's paired lane layout at every width it allows
#   deliberately wrong fixtures that verification must catch (one only on a second launch); exit codes of the error paths
#   --format jsonl and --set; compute-sanitizer memcheck, racecheck, initcheck and synccheck on
#   each template; K = 0; 65536x65536x16 (64-bit offsets) and the refusal of what does not fit;
#   a template that requires sm_90a; split-K in warptile, DMMA and blocktile at shapes one past a tile, three modes
#   (all of it launched with programmatic dependent launch on sm_90; split-K also without, ENGINE_PDL=0);
#   stream-K in warptile and DMMA, runs that start and end inside tiles; interior tiles unguarded and
#   edge tiles guarded (EDGE 1, 0 and 3), B by cp.async (B_ASYNC), B packed first (PACK_B), loads two
#   tiles ahead (LOAD_AHEAD) and C through shared memory (C_STAGE) at odd shapes;
#   rows aligned to 2 but not 4 elements; the skinny warp tiles and FP64 tensor-core tiles of the shipped
#   wisdom; sliced K in warptile
#   crash isolation: a faulting config among good ones in bench and verify; engine tune over a
#   space holding a faulting and a hanging kernel; a second tune served from the CUBIN cache; a
#   tune of 100 warptile points at 4096^3 whose winner verifies
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
E=build/engine
LOG=${GPU_LOG_DIR:-build/gpu-logs}
mkdir -p "$LOG"
[ -x "$E" ] || { echo "build/engine is missing: run make first"; exit 2; }
FIX="env ENGINE_TEMPLATES=tests/templates:kernels_src"
# GPU_ONLY="edges sanitize" runs only those sections (names below: device verify f64 lanes wrong
# errors edges splitk streamk interior vec2 skinny slicek sm90a isolation tune-faults tune formats sanitize), so that a
# device call can stay inside its time limit; default all.
want() { [ -z "${GPU_ONLY:-}" ] || [[ " $GPU_ONLY " == *" $1 "* ]]; }
# compute-sanitizer into CS: CUDA_HOME's, else the one on PATH; returns 1 when there is none.
find_sanitizer() {
  CS=${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer
  [ -x "$CS" ] || CS=$(command -v compute-sanitizer)
}
# sanitize_verify LABEL LOGBASE "TOOLS" VERIFY_ARGS...: each compute-sanitizer tool of TOOLS over
# `engine verify VERIFY_ARGS` (the kernels run in a worker, so every process is followed), one
# check each, named "TOOL LABEL"; logs in $LOG/LOGBASE-TOOL.txt. Call after find_sanitizer.
sanitize_verify() {
  local label=$1 base=$2 tools=$3 tool
  shift 3
  for tool in $tools; do
    "$CS" --tool "$tool" --target-processes all --error-exitcode 99 $E verify "$@" >"$LOG/$base-$tool.txt" 2>&1
    check_rc "$tool $label" 0 $? "$(grep -E 'ERROR|hazard|Invalid|error' "$LOG/$base-$tool.txt" | head -8)"
  done
}

if want device; then
echo "== device"
$E info --bandwidth | tee "$LOG/info.txt"
check_rc "engine info" 0 "${PIPESTATUS[0]}"
fi

if want verify; then
echo "== verify every shipped config (f32 and f64 as shipped), with the cuBLAS cross-check"
$E verify --cross-check configs/*.json >"$LOG/verify.txt" 2>&1
rc=$?
grep -E '^(FAIL|error)|cross-check' "$LOG/verify.txt"
tail -1 "$LOG/verify.txt"
check_rc "verify configs/*.json" 0 "$rc" "$(grep -A3 -E '^(FAIL|error)' "$LOG/verify.txt" | head -40)"
grep -q 'cross-check f32 .* ok' "$LOG/verify.txt" && pass "cross-check f32 cuBLAS vs CPU" || fail "cross-check f32 cuBLAS vs CPU"
grep -q 'cross-check f64 .* ok' "$LOG/verify.txt" && pass "cross-check f64 cuBLAS vs CPU" || fail "cross-check f64 cuBLAS vs CPU"
fi

if want f64; then
echo "== the f32 templates in f64"
F64="configs/tiled.json configs/regblock.json configs/bank_pad_vec.json configs/ldg_wider2.json configs/sb06_vectorize.json
     configs/sb07_linearize.json configs/sb10_warptiling.json configs/sb11_double_buffer.json configs/sb12_double_buffer2.json
     configs/warptile_db.json configs/splitk3.json configs/splitk4_2pass.json configs/multibuf_b3.json configs/ldg_async.json configs/naive.json"
$E verify --dtype f64 --shapes 1x1x1,17x33x5,127x129x131,1000x1000x1000 $F64 >"$LOG/verify-f64.txt" 2>&1
rc=$?
grep -E '^(FAIL|error)' "$LOG/verify-f64.txt"
tail -1 "$LOG/verify-f64.txt"
check_rc "verify --dtype f64" 0 "$rc" "$(grep -A3 -E '^(FAIL|error)' "$LOG/verify-f64.txt" | head -40)"
fi

if want lanes; then
echo "== the paired lane layout (LANES 1) at 2, 4, 8 and 16 lanes across a warp step, f32 and f64"
for geo in "WM=64 WN=32 WNITER=2 TN=8" "WM=32 WN=64 WNITER=2 TN=8" "WM=32 WN=64 WNITER=1 TN=8" "WM=32 WN=64 WNITER=1 TN=4"; do
  sets=""
  for kv in $geo LANES=1 SNAKE=1; do sets="$sets --set $kv"; done
  for dt in f32 f64; do
    # shellcheck disable=SC2086
    $E verify configs/warptile_db.json $sets --dtype $dt --shapes 1x1x1,17x33x5,127x129x131,1000x1000x1000 >"$LOG/lanes.txt" 2>&1
    check_rc "verify warptile LANES=1 $geo ($dt)" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/lanes.txt" | head -20)"
  done
done
fi

if want wrong; then
echo "== wrong kernels must be caught"
for t in wrong_k wrong_edge wrong_beta wrong_state; do
  $FIX $E verify tests/configs/gpu/$t.json --shapes 1x1x1,127x129x131 >"$LOG/$t.txt" 2>&1
  rc=$?
  nfail=$(grep -c '^FAIL' "$LOG/$t.txt")
  if [ "$rc" = 1 ] && [ "$nfail" -ge 1 ]; then pass "$t is caught ($nfail FAIL lines, exit 1)"; else fail "$t is caught (exit $rc, $nfail FAIL lines)" "$(head -20 "$LOG/$t.txt")"; fi
done
grep -q 'beta=0 .*NaN' "$LOG/wrong_beta.txt" 2>/dev/null || grep -q 'NaN/Inf' "$LOG/wrong_beta.txt"
[ $? = 0 ] && pass "wrong_beta: the NaN poison leaks and is reported" || fail "wrong_beta: NaN poison not reported"
fi

if want errors; then
echo "== error paths"
$FIX $E verify tests/configs/gpu/fault.json --shapes 64x64x64 >"$LOG/fault.txt" 2>&1
check_rc "kernel fault exits 3" 3 $? "$(cat "$LOG/fault.txt")"
grep -q 'CUDA_ERROR_' "$LOG/fault.txt" && pass "kernel fault names the CUDA error" || fail "kernel fault names the CUDA error" "$(cat "$LOG/fault.txt")"
$FIX $E verify tests/configs/gpu/needs_k4.json --shapes 16x16x6 >"$LOG/refuse.txt" 2>&1
check_rc "declared shape requirement refuses K=6 (exit 2)" 2 $? "$(cat "$LOG/refuse.txt")"
grep -q 'requires K % 4 == 0' "$LOG/refuse.txt" && pass "refusal names the requirement" || fail "refusal names the requirement"
$FIX $E verify tests/configs/gpu/needs_k4.json --shapes 16x16x8 >"$LOG/accept.txt" 2>&1
check_rc "declared shape requirement accepts K=8" 0 $? "$(cat "$LOG/accept.txt")"
$E verify configs/tiled.json --device 99 >"$LOG/device.txt" 2>&1
check_rc "--device 99 exits 3" 3 $? "$(cat "$LOG/device.txt")"
$E verify configs/tiled.json --arch sm_80 --shapes 64x64x64 >"$LOG/arch.txt" 2>&1
check_rc "an sm_80 CUBIN on this GPU exits 2" 2 $? "$(cat "$LOG/arch.txt")"
echo '{"name": "x", "template": "blocktile", "params": {"BM": 64,}}' >"$LOG/bad.json"
$E bench "$LOG/bad.json" configs/tiled.json --size 256 --runs 2 >"$LOG/bad.txt" 2>&1
check_rc "a bad config among good ones: reported, the rest run, exit 2" 2 $? "$(cat "$LOG/bad.txt")"
grep -q '^tiled ' "$LOG/bad.txt" && pass "the good config still ran" || fail "the good config still ran" "$(cat "$LOG/bad.txt")"
fi

if want edges; then
echo "== BLAS edges: K = 0 is C = beta*C; matrices of 2^31 elements and more"
$E verify configs/*.json --shapes 5x5x0,64x33x0 >"$LOG/k0.txt" 2>&1
check_rc "K = 0: every shipped config, beta = 0 and beta != 0" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/k0.txt" | head -20)"
$E verify configs/warptile_db.json configs/dgemm_dmma.json --beta 1 --shapes 17x9x0 >"$LOG/k0-beta1.txt" 2>&1
check_rc "K = 0, beta = 1: C unchanged" 0 $? "$(tail -5 "$LOG/k0-beta1.txt")"
# 65536 x 65536 x 16: C alone is 2^32 elements (17 GB in f32); the kernels take 64-bit offsets
# (IDX64). The host fills, checks and bounds every element, so this one takes a minute or two.
$E verify configs/warptile_db.json --shapes 65536x65536x16 >"$LOG/big-f32.txt" 2>&1
check_rc "65536x65536x16 f32 verifies (warptile_db)" 0 $? "$(tail -8 "$LOG/big-f32.txt")"
$E verify configs/dgemm_dmma.json --shapes 65536x65536x16 >"$LOG/big-refused.txt" 2>&1
check_rc "65536x65536x16 f64 does not fit: exit 3" 3 $? "$(cat "$LOG/big-refused.txt")"
grep -qE 'needs [0-9.]+ GB, [0-9.]+ GB free' "$LOG/big-refused.txt" && pass "the refusal names the memory needed and free" ||
  fail "the refusal names the memory needed and free" "$(cat "$LOG/big-refused.txt")"
fi

if want splitk; then
echo "== split-K in the warp-tiled, DMMA and block-tiled templates: odd shapes (each dimension 1 past a tile), three modes"
SK="configs/warptile_splitk.json configs/dgemm_dmma_splitk.json"
# Mode 2: one launch, the first split of a tile to finish writes it, the others wait and add.
# Verification checks the second of two launches, so the tile counters must be left at zero;
# 4160x4160x64 has 65x65 blocktile tiles, more than the module's 4096 counters: mode 2 falls back
# to scale_c and atomics.
# shellcheck disable=SC2086
$E verify $SK configs/splitk2.json --set SPLITK_MODE=2 --shapes 1x1x1,65x33x4097,129x129x8193,127x129x131,255x257x259 \
  >"$LOG/splitk.txt" 2>&1
check_rc "split-K, one-launch mode" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/splitk.txt" | head -20)"
$E verify configs/splitk2.json --set SPLITK_MODE=2 --shapes 4160x4160x64 >"$LOG/splitk-many.txt" 2>&1
check_rc "split-K, one-launch mode past 4096 tiles" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/splitk-many.txt" | head -20)"
# shellcheck disable=SC2086
$E verify $SK --set SPLITK_MODE=0 --shapes 1x1x1,65x33x4097,129x129x8193,127x129x131 >"$LOG/splitk0.txt" 2>&1
check_rc "split-K, atomic mode" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/splitk0.txt" | head -20)"
# shellcheck disable=SC2086
$E verify $SK --set SPLITK_MODE=1 --shapes 1x1x1,17x33x5,65x33x4097,127x129x131 >"$LOG/splitk2.txt" 2>&1
check_rc "split-K, deterministic two-pass mode" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/splitk2.txt" | head -20)"
# The same plans launched plainly (ENGINE_PDL=0): the path of GPUs before sm_90.
# shellcheck disable=SC2086
ENGINE_PDL=0 $E verify $SK --set SPLITK_MODE=1 --shapes 1x1x1,127x129x131 >"$LOG/splitk-nopdl.txt" 2>&1
check_rc "split-K, two-pass mode, without PDL" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/splitk-nopdl.txt" | head -20)"
if find_sanitizer; then
  for c in splitk2 warptile_splitk dgemm_dmma_splitk; do
    sanitize_verify "$c, one-launch mode" "splitk-$c" "memcheck racecheck" configs/$c.json --set SPLITK_MODE=2 --shapes 67x45x37
  done
else
  fail "compute-sanitizer not found"
fi
fi

if want streamk; then
echo "== stream-K in warptile and DMMA: runs across tile boundaries, more blocks than k-tiles, odd shapes"
SK="configs/warptile_streamk.json configs/dgemm_dmma_streamk.json"
# shellcheck disable=SC2086
$E verify $SK --shapes 1x1x1,17x33x5,129x65x4097,257x129x131,1000x1000x1000 >"$LOG/streamk.txt" 2>&1
check_rc "stream-K at odd shapes" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/streamk.txt" | head -20)"
# 7 and 1 blocks: runs of uneven length that start and end inside tiles; one block doing everything.
for n in 7 1; do
  # shellcheck disable=SC2086
  $E verify $SK --set STREAMK=$n --shapes 129x129x257,65x33x1001 >"$LOG/streamk-$n.txt" 2>&1
  check_rc "stream-K with $n blocks" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/streamk-$n.txt" | head -20)"
done
fi

if want interior; then
echo "== interior and edge tiles (EDGE): tiles inside C unguarded, edge tiles guarded; both settings, odd shapes"
# Shapes with interior tiles and partial tiles along M, N or both, K partial or whole; with split-K,
# stream-K and sliced K, whose epilogues differ for the two kinds of tile.
IE="configs/warptile_db.json configs/dgemm_simt.json configs/dgemm_dmma.json configs/warptile_splitk.json configs/dgemm_dmma_splitk.json configs/warptile_streamk.json configs/dgemm_dmma_streamk.json"
for edge in 1 0; do
  # shellcheck disable=SC2086
  $E verify $IE --set EDGE=$edge --shapes 257x385x131,1000x1001x999,513x512x64,512x515x67,4095x129x257 >"$LOG/interior-$edge.txt" 2>&1
  check_rc "EDGE=$edge: interior and edge tiles at odd shapes" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/interior-$edge.txt" | head -20)"
done
# EDGE 3 (warptile only): the guarded copy called as a function of its own.
IEW="configs/warptile_db.json configs/dgemm_simt.json configs/warptile_splitk.json configs/warptile_streamk.json"
# shellcheck disable=SC2086
$E verify $IEW --set EDGE=3 --shapes 257x385x131,1000x1001x999,513x512x64,512x515x67,4095x129x257,1x1x1 >"$LOG/interior-3.txt" 2>&1
check_rc "EDGE=3: interior and edge tiles at odd shapes" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/interior-3.txt" | head -20)"
# B by cp.async inside the register-staged double buffer (B_ASYNC 1; 2 where N % 4 != 0), f32 and f64.
for ba in 1 2; do
  # shellcheck disable=SC2086
  $E verify configs/warptile_db.json configs/warptile_splitk.json --set B_ASYNC=$ba --shapes 1x1x1,17x33x5,257x385x131,1000x1001x999,129x65x4097 \
    >"$LOG/basync-$ba.txt" 2>&1
  check_rc "B_ASYNC=$ba at odd shapes" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/basync-$ba.txt" | head -20)"
done
$E verify configs/warptile_db.json --dtype f64 --set B_ASYNC=1 --shapes 17x33x5,257x385x131 >"$LOG/basync-f64.txt" 2>&1
check_rc "B_ASYNC=1 in f64" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/basync-f64.txt" | head -20)"
# Register-staged loads two tiles ahead (LOAD_AHEAD 1), f32 and f64, with split-K and stream-K (parts
# of one and two k-tiles: the prologue's second load and the last iterations' skipped ones).
# shellcheck disable=SC2086
$E verify configs/warptile_db.json configs/warptile_splitk.json configs/warptile_streamk.json --set LOAD_AHEAD=1 \
  --shapes 1x1x1,17x33x5,257x385x131,1000x1001x999,129x65x4097,128x128x8,128x128x16,256x256x24 >"$LOG/ahead.txt" 2>&1
check_rc "LOAD_AHEAD=1 at odd and whole shapes" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/ahead.txt" | head -20)"
$E verify configs/warptile_db.json configs/dgemm_simt.json --dtype f64 --set DB=3 --set LOAD_AHEAD=1 --shapes 17x33x5,257x385x131,128x128x16 >"$LOG/ahead-f64.txt" 2>&1
check_rc "LOAD_AHEAD=1 in f64" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/ahead-f64.txt" | head -20)"
# B packed into the workspace first (PACK_B 1 at every shape; 2 where N % VEC_B != 0; 3 where also
# K % VEC_A == 0): every pipeline (DB 0 sb10, 1 sb11, 2 dgemm_simt and sb12, 3 warptile_db), split-K
# by atomics, stream-K, loads two tiles ahead, EDGE 3; M, N, K = 1 mod the 128x128x8 tile, N = 2 mod 4,
# and K past one pack row group.
PK="configs/warptile_db.json configs/dgemm_simt.json configs/sb10_warptiling.json configs/sb11_double_buffer.json configs/sb12_double_buffer2.json configs/warptile_splitk.json configs/warptile_streamk.json"
for pb in 1 2 3; do
  # shellcheck disable=SC2086
  $E verify $PK --set PACK_B=$pb --shapes 1x1x1,17x33x5,129x129x9,257x385x131,1000x1001x999,66x130x34,129x65x4097,256x256x64 \
    >"$LOG/packb-$pb.txt" 2>&1
  check_rc "PACK_B=$pb at odd and whole shapes" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/packb-$pb.txt" | head -20)"
done
$E verify configs/warptile_db.json configs/dgemm_simt.json --dtype f64 --set PACK_B=1 --set EDGE=3 --shapes 1x1x1,129x129x9,257x385x131 >"$LOG/packb-f64.txt" 2>&1
check_rc "PACK_B=1 with EDGE=3 in f64" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/packb-f64.txt" | head -20)"
$E verify configs/warptile_db.json --set PACK_B=1 --set LOAD_AHEAD=1 --set EDGE=3 --shapes 1x1x1,129x129x9,257x385x131 >"$LOG/packb-ahead.txt" 2>&1
check_rc "PACK_B=1 with LOAD_AHEAD=1 and EDGE=3" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/packb-ahead.txt" | head -20)"
# C's tile through shared memory (C_STAGE 1 everywhere; 2, the default, where N % VEC_C != 0), f32 and f64.
# shellcheck disable=SC2086
$E verify configs/warptile_db.json configs/dgemm_simt.json configs/sb10_warptiling.json --set C_STAGE=1 \
  --shapes 1x1x1,17x33x5,257x385x131,1000x1001x999,129x65x4097,256x256x64 >"$LOG/cstage.txt" 2>&1
check_rc "C_STAGE=1 at odd and whole shapes" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/cstage.txt" | head -20)"
if find_sanitizer; then
  sanitize_verify "of interior and edge tiles (warptile_db, dgemm_dmma_streamk)" interior "memcheck racecheck" \
    configs/warptile_db.json configs/dgemm_dmma_streamk.json --shapes 257x385x131
  sanitize_verify "of B by cp.async in the register-staged pipeline" basync "memcheck racecheck synccheck" \
    configs/warptile_db.json --set B_ASYNC=1 --shapes 257x385x131
  sanitize_verify "of the edge tiles' code called as a function (EDGE 3)" edge3 "memcheck racecheck" \
    configs/warptile_db.json --set EDGE=3 --shapes 257x385x132
  sanitize_verify "of B packed into the workspace first (PACK_B)" packb "memcheck racecheck initcheck" \
    configs/warptile_db.json configs/dgemm_simt.json --set PACK_B=1 --shapes 257x385x131
  sanitize_verify "of loads two tiles ahead" ahead "memcheck racecheck synccheck" \
    configs/warptile_db.json --set LOAD_AHEAD=1 --shapes 257x385x131
  sanitize_verify "of C's tile through shared memory" cstage "memcheck racecheck synccheck" \
    configs/warptile_db.json --set C_STAGE=1 --shapes 257x385x131
else
  fail "compute-sanitizer not found"
fi
fi

if want vec2; then
echo "== rows aligned to 2 elements but not 4 (M, N, K = 2 mod 4): half-width loads, B read in strided groups"
$E verify configs/*.json --shapes 66x130x34,2x6x2 >"$LOG/vec2.txt" 2>&1
check_rc "every shipped config at 66x130x34 and 2x6x2" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/vec2.txt" | head -20)"
fi

if want skinny; then
echo "== skinny and tiny warp tiles (16-row blocks with BK 32 and the one-warp tile, as the shipped wisdom picks them; 16-column blocks): odd shapes, sanitizers"
SKM="--set BM=16 --set WM=16 --set WN=32 --set WNITER=1 --set TN=4 --set BK=32 --set THREADS=128 --set MINB=4"
SKN="--set BN=16 --set WN=16 --set WM=32 --set WNITER=1 --set TN=4 --set THREADS=128 --set MINB=4"
# The one-warp tile with 32-deep k-slices that the tiny shapes pick, split 4 ways.
SKT="--set BM=16 --set BN=32 --set BK=32 --set WM=16 --set WN=32 --set WNITER=1 --set TM=2 --set TN=4 --set THREADS=32 --set MINB=16 --set SPLITK=4"
for v in SKM SKN SKT; do
  # shellcheck disable=SC2086
  $E verify configs/warptile_splitk.json ${!v} --shapes 1x1x1,17x65x4097,65x17x4097,17x8193x1025 >"$LOG/skinny-$v.txt" 2>&1
  check_rc "skinny tile $v at odd shapes" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/skinny-$v.txt" | head -20)"
  find_sanitizer || { fail "compute-sanitizer not found"; continue; }
  # shellcheck disable=SC2086
  sanitize_verify "skinny tile $v" "skinny-$v" "memcheck racecheck" configs/warptile_splitk.json ${!v} --shapes 17x65x37
done
fi

if want skinny; then
echo "== the tiny-shape DMMA tile the shipped wisdom picks (32x32 blocks of four 16x16 warp tiles, BK 32): odd shapes, sanitizers"
SKD="--set BM=32 --set BN=32 --set BK=32 --set WM=16 --set WN=16 --set MMA=1688 --set THREADS=128"
for sk in 1 4; do
  # shellcheck disable=SC2086
  $E verify configs/dgemm_dmma_splitk.json $SKD --set SPLITK=$sk --shapes 1x1x1,17x33x5,33x33x33,127x129x131,255x257x259 \
    >"$LOG/tiny-dmma-$sk.txt" 2>&1
  check_rc "tiny DMMA tile, SPLITK $sk, at odd shapes" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/tiny-dmma-$sk.txt" | head -20)"
done
if find_sanitizer; then
  # shellcheck disable=SC2086
  sanitize_verify "tiny DMMA tile" tiny-dmma "memcheck racecheck" configs/dgemm_dmma_splitk.json $SKD --set SPLITK=1 --shapes 67x45x37
else
  fail "compute-sanitizer not found"
fi
fi

if want skinny; then
echo "== the FP64 tensor-core tiles the shipped wisdom picks beyond the tiny ones: odd shapes, sanitizers"
# 128x64 and 64x128 blocks of 64x32 warp tiles with m16n8k16 (large squares); blocks one
# instruction tile tall (16 rows, BK 64; 16x8192x8192); 64x64 blocks of eight 32x16 warps with
# m16n8k16 (1024^3).
DT1="configs/dgemm_dmma.json --set BM=128 --set MMA=16816 --set WM=64"
DT2="configs/dgemm_dmma.json --set BN=128 --set MMA=16816 --set WM=64"
DT3="configs/dgemm_dmma_splitk.json --set BM=16 --set BK=64 --set MMA=1688 --set WM=16 --set WN=16 --set SPLITK=4"
DT4="configs/dgemm_dmma_splitk.json --set MMA=16816 --set WN=16 --set THREADS=256 --set SPLITK=1"
# 64x128 blocks of the 64x32 m16n8k16 warp tiles split 32 ways (512x512x65536); 32x16 blocks of
# four 16x8 warp tiles (8192x16x8192).
DT5="configs/dgemm_dmma_splitk.json --set BN=128 --set MMA=16816 --set WM=64 --set SPLITK=32"
DT6="configs/dgemm_dmma_splitk.json --set BM=32 --set BN=16 --set BK=64 --set MMA=1688 --set WM=16 --set WN=8 --set SPLITK=1"
for v in DT1 DT2 DT3 DT4 DT5 DT6; do
  # shellcheck disable=SC2086
  $E verify ${!v} --shapes 1x1x1,17x33x5,33x65x129,127x129x131,65x33x4097 >"$LOG/dmma-tile-$v.txt" 2>&1
  check_rc "FP64 tile $v at odd shapes" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/dmma-tile-$v.txt" | head -20)"
done
if find_sanitizer; then
  for v in DT1 DT3 DT6; do
    # shellcheck disable=SC2086
    sanitize_verify "FP64 tile $v" "dmma-tile-$v" "memcheck racecheck" ${!v} --shapes 131x67x45
  done
else
  fail "compute-sanitizer not found"
fi
fi

if want slicek; then
echo "== sliced K in warptile (groups of warps sharing a tile's k-steps, summed through shared memory): odd shapes, both schedules, with split-K and stream-K, sanitizers"
# 64x64 tiles of four 32x32 warps, in 2 or 4 groups; 32x64 tiles of four 16x32 warps in 4 groups of 4-step slices.
SL2="--set BM=64 --set BN=64 --set BK=32 --set WM=32 --set WN=32 --set WNITER=1 --set TM=4 --set TN=4 --set SLICEK=2 --set THREADS=256 --set MINB=2"
SL4="--set BM=64 --set BN=64 --set BK=32 --set WM=32 --set WN=32 --set WNITER=1 --set TM=4 --set TN=4 --set SLICEK=4 --set THREADS=512 --set MINB=1"
SLT="--set BM=32 --set BN=64 --set BK=16 --set WM=16 --set WN=32 --set WNITER=1 --set TM=2 --set TN=4 --set SLICEK=4 --set THREADS=512 --set MINB=1"
# The tiles the shipped wisdom picks for large K (32x64 blocks of two 32x32 warps, two groups),
# for 512^3 (the same block in four groups) ...
SLW="--set BM=32 --set BN=64 --set BK=32 --set WN=32 --set WNITER=1 --set TN=4 --set SLICEK=2 --set THREADS=128 --set MINB=4"
SL5="--set BM=32 --set BN=64 --set BK=32 --set WN=32 --set WNITER=1 --set TN=4 --set SLICEK=4 --set THREADS=256 --set MINB=2"
# ... and for 8192x16x8192: a 64x16 block of one warp tile in four groups.
SLN="--set BM=64 --set BN=16 --set BK=32 --set WM=64 --set WN=16 --set WNITER=1 --set TN=4 --set SLICEK=4 --set THREADS=128 --set MINB=4"
for v in SL2 SL4 SLT SLW SL5 SLN; do
  i=0
  for extra in "--set SPLITK=1 --set DB=3" "--set SPLITK=4 --set DB=2 --set STAGES=3" "--set SPLITK=64 --set DB=2 --set STAGES=3" "--set SPLITK=1 --set STREAMK=7"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    $E verify configs/warptile_splitk.json ${!v} $extra --shapes 1x1x1,17x33x5,65x65x33,127x129x131,33x65x4097 \
      >"$LOG/slicek-$v-$i.txt" 2>&1
    check_rc "sliced K $v ($extra) at odd shapes" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/slicek-$v-$i.txt" | head -20)"
  done
done
# f64 takes the same code path with twice the shared memory.
# shellcheck disable=SC2086
$E verify configs/warptile_splitk.json $SL4 --set SPLITK=2 --dtype f64 --shapes 1x1x1,127x129x131,65x63x1025 >"$LOG/slicek-f64.txt" 2>&1
check_rc "sliced K in f64 at odd shapes" 0 $? "$(grep -A3 -E '^(FAIL|error)' "$LOG/slicek-f64.txt" | head -20)"
if find_sanitizer; then
  # shellcheck disable=SC2086
  sanitize_verify "sliced K" slicek "memcheck racecheck synccheck initcheck" configs/warptile_splitk.json $SL4 --set SPLITK=2 \
    --shapes 67x45x133
else
  fail "compute-sanitizer not found"
fi
fi

if want sm90a; then
echo "== sm_90a: a template that requires the architecture-specific target"
$FIX $E verify tests/configs/gpu/needs_sm90a.json --arch sm_90a --shapes 1x1x1,64x64x64,127x129x131 >"$LOG/sm90a.txt" 2>&1
check_rc "verify --arch sm_90a" 0 $? "$(tail -5 "$LOG/sm90a.txt")"
$FIX $E verify tests/configs/gpu/needs_sm90a.json --shapes 64x64x64 >"$LOG/sm90a-refused.txt" 2>&1
check_rc "the same template for sm_90 is refused (exit 2)" 2 $? "$(cat "$LOG/sm90a-refused.txt")"
$E verify configs/warptile_db.json --arch sm_90a --shapes 127x129x131 >"$LOG/sm90a-any.txt" 2>&1
check_rc "any template runs as sm_90a" 0 $? "$(tail -5 "$LOG/sm90a-any.txt")"
fi

if want isolation; then
echo "== crash isolation: a faulting kernel second in a list of four"
LIST="configs/tiled.json tests/configs/gpu/fault.json configs/naive.json configs/bank_pad_vec.json"
# shellcheck disable=SC2086
$FIX $E bench $LIST --size 256 --runs 2 >"$LOG/iso-bench.txt" 2>&1
check_rc "bench: the fault is the worst outcome (exit 3)" 3 $? "$(cat "$LOG/iso-bench.txt")"
n=$(grep -cE '^(tiled|naive|bank_pad_vec) +ok ' "$LOG/iso-bench.txt")
grep -qE '^fault +fault ' "$LOG/iso-bench.txt" && [ "$n" = 3 ] && pass "bench: the fault is one row, the three others ran" ||
  fail "bench: the fault is one row, the three others ran ($n ok)" "$(cat "$LOG/iso-bench.txt")"
# shellcheck disable=SC2086
$FIX $E verify $LIST --shapes 64x64x64,127x129x131 >"$LOG/iso-verify.txt" 2>&1
check_rc "verify: exit 3" 3 $? "$(tail -5 "$LOG/iso-verify.txt")"
grep -q '^verify: 12 passed, 0 failed, 4 errors' "$LOG/iso-verify.txt" && pass "verify: 12 checks passed around 4 faults" ||
  fail "verify: 12 checks passed around 4 faults" "$(tail -3 "$LOG/iso-verify.txt")"
fi

if want tune-faults; then
echo "== engine tune: a space holding a faulting and a hanging kernel"
export XDG_CACHE_HOME="$LOG/xdg"
rm -rf "$XDG_CACHE_HOME" "$LOG"/toy*.jsonl
$FIX $E tune tests/configs/tune/toy_space.json --log "$LOG/toy.jsonl" --timeout 10 --top 3 >"$LOG/toy.txt" 2>&1
check_rc "tune finishes despite the fault and the hang" 0 $? "$(cat "$LOG/toy.txt")"
python3 - "$LOG/toy.jsonl" <<'PY' && pass "exactly the fault and the hang are marked; every other point verified and timed" || fail "toy tune rows" "$(cat "$LOG/toy.txt")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
first = [r for r in rows if r["stage"] in (0, 1) and r["status"] != "pruned"]
bad = {(r["configuration"]["MODE"], r["status"]) for r in first if r["status"] != "ok"}
assert bad == {(1, "fault"), (2, "timeout")}, bad
ok = [r for r in first if r["status"] == "ok"]
assert len(ok) == 12 and all(r["configuration"]["MODE"] == 0 and r["ms"] > 0 and r["pct_cublas"] > 0 for r in ok), ok
assert any(r["stage"] == 2 for r in rows)
PY
$FIX $E tune tests/configs/tune/toy_space.json --log "$LOG/toy2.jsonl" --timeout 10 --top 3 >"$LOG/toy2.txt" 2>&1
check_rc "a second tune of the same space" 0 $? "$(cat "$LOG/toy2.txt")"
grep -q '(0 NVRTC compiles, 14 from the cache; the workers compiled 0)' "$LOG/toy2.txt" &&
  pass "the second tune compiled nothing: 14 CUBINs from the cache" || fail "second tune served from the cache" "$(head -1 "$LOG/toy2.txt")"
fi

if want tune; then
echo "== engine tune: 100 warptile points at 4096^3"
$E tune tune/warptile.json --strategy random --budget 100 --log "$LOG/warptile.jsonl" --emit-best "$LOG/wt-best.json" \
  >"$LOG/warptile.txt" 2>&1
check_rc "tune 100 warptile points" 0 $? "$(tail -5 "$LOG/warptile.txt")"
head -n 1 "$LOG/warptile.txt"
python3 - "$LOG/warptile.jsonl" <<'PY' && pass "100 points logged, each verified and timed or with its reason" || fail "warptile tune rows"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
first = [r for r in rows if r["status"] != "pruned" and r["stage"] < 2]
assert len(first) == 100, len(first)
assert all(r["status"] == "ok" or r["reason"] for r in first)
assert sum(r["status"] == "ok" for r in first) >= 90
PY
$E verify "$LOG/wt-best.json" --shapes 1x1x1,127x129x131,1000x1000x1000 >"$LOG/wt-best-verify.txt" 2>&1
check_rc "the emitted winner is a valid config that verifies" 0 $? "$(tail -3 "$LOG/wt-best-verify.txt")"
unset XDG_CACHE_HOME
fi

if want formats; then
echo "== output formats and --set"
$E bench configs/bank_pad_vec.json --size 1024 --runs 3 --format jsonl >"$LOG/jsonl.txt" 2>"$LOG/jsonl.err"
rc=$?
check_rc "bench --format jsonl" 0 $rc "$(cat "$LOG/jsonl.err")"
python3 - "$LOG/jsonl.txt" <<'PY' && pass "jsonl: one JSON object per row, config and cuBLAS rows" || fail "jsonl rows" "$(cat "$LOG/jsonl.txt")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert [r["config"] for r in rows] == ["bank_pad_vec", "cublas"], rows
assert rows[0]["status"] == "ok" and rows[0]["ms"] > 0 and rows[0]["pct_cublas"] > 0
PY
$E bench configs/bank_pad_vec.json --size 1024 --runs 3 --format csv --set BM=128 --set THREADS=256 >"$LOG/set.txt" 2>&1
check_rc "bench --set BM=128 --set THREADS=256" 0 $? "$(cat "$LOG/set.txt")"
grep -q 'BM=128' "$LOG/set.txt" && grep -q -- '--set BM=128' "$LOG/set.txt" && pass "--set reaches the kernel and the rerun command" || fail "--set reaches the kernel" "$(cat "$LOG/set.txt")"
$E bench configs/bank_pad_vec.json --size 1024 --runs 3 --set TM=12 >"$LOG/set-bad.txt" 2>&1
check_rc "--set TM=12 breaks a constraint: exit 2" 2 $? "$(cat "$LOG/set-bad.txt")"
fi

if want sanitize; then
echo "== compute-sanitizer (memcheck, racecheck, initcheck, synccheck), one odd shape per template and schedule"
if [ "${GPU_SANITIZE:-1}" = 0 ]; then
  echo "  skipped (GPU_SANITIZE=0)"
elif find_sanitizer; then
  for c in naive tiled bank_pad_vec ldg_wider2 sb07_linearize multibuf_b3 ldg_async splitk2 splitk4_2pass warptile_splitk dgemm_dmma_splitk \
           warptile_streamk \
           sb10_warptiling sb11_double_buffer sb12_double_buffer2 warptile_db dgemm_simt dgemm_pipelined dgemm_dmma; do
    for tool in ${GPU_SANITIZE_TOOLS:-memcheck racecheck initcheck synccheck}; do
      # The kernels run in a worker process: the sanitizer must follow it, and every process's
      # summary must be clean.
      "$CS" --tool $tool --target-processes all --error-exitcode 99 $E verify configs/$c.json --shapes 67x45x37 \
        >"$LOG/cs-$tool-$c.txt" 2>&1
      rc=$?
      if [ $rc = 0 ] && grep -q 'ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards' "$LOG/cs-$tool-$c.txt" &&
         ! grep -qE '(ERROR|RACECHECK) SUMMARY: [1-9]' "$LOG/cs-$tool-$c.txt" && grep -q '^ok ' "$LOG/cs-$tool-$c.txt"; then
        pass "$tool $c"
      else
        fail "$tool $c (exit $rc)" "$(grep -E 'ERROR|hazard|Invalid|error' "$LOG/cs-$tool-$c.txt" | head -8)"
      fi
    done
  done
else
  fail "compute-sanitizer not found"
fi
fi

summary
