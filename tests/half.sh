#!/usr/bin/env bash
# The half dtypes (bf16, f16) without a GPU: the walk of configs/half.list compiles for sm_80, sm_86
# and sm_90 in both dtypes and every op at a packed shape, and at odd ones (2-byte copies, M = 1), with
# no spills; h01's and h02's copies through registers at 8 and 16 bytes carry no VIMNMX with a
# predicate output in sm_90 SASS (where cuobjdump is found); the pasted source names the types (T
# half_bits, TC float, BF16) while an f32 config's pasted source is unchanged (its CUBIN cache keys
# stay); the refusals (sm_75, a half dtype on an f32 template, an unknown dtype) are one line each
# with exit 2; the dtype is part of selection's key (no f32 wisdom answers for bf16); without device
# entries the arch defaults (wisdom/sm_90.json: hws, h04_tuned) or default.json's h04_tuned are weighed;
# bench/half_merge.py merges a tuned archive's half entries.
# tests/gpu/half.sh runs the kernels.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
E=${BUILD:-build}/engine
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mapfile -t walk < <(grep -v '^#' configs/half.list | sed 's#^#configs/#')
[ "${#walk[@]}" -ge 4 ] && pass "configs/half.list lists ${#walk[@]} configs" || fail "configs/half.list lists ${#walk[@]} configs, expected 4 or more"

echo "== the walk compiles without spills: sm_80, sm_86, sm_90 x bf16, f16 x every op at 4096^3; odd shapes on two"
runs=()
for arch in sm_80 sm_86 sm_90; do
  for dt in bf16 f16; do
    for op in NN NT TN TT; do runs+=("$arch $dt $op --size 4096"); done
  done
done
for op in NN NT TN TT; do
  for shape in "--m 127 --n 255 --k 33" "--m 1 --n 4096 --k 11008"; do
    runs+=("sm_86 f16 $op $shape" "sm_90 bf16 $op $shape")
  done
done
for run in "${runs[@]}"; do
  read -r arch dt op shape <<<"$run"
  # shellcheck disable=SC2086
  out=$($E compile "${walk[@]}" --arch $arch --dtype $dt --op $op $shape 2>&1)
  rc=$?
  bad=
  for c in "${walk[@]}"; do
    name=$(basename "$c" .json)
    row=$(printf '%s\n' "$out" | grep "^$name .* $arch  *$dt ")
    spill=$(printf '%s\n' "$row" | awk '{print $8 + $9}')
    [ -n "$row" ] && [ "$spill" = 0 ] || bad="$bad $name(spills ${spill:-none})"
  done
  if [ "$rc" = 0 ] && [ -z "$bad" ]; then pass "$arch $dt $op $shape"
  else fail "$arch $dt $op $shape: exit $rc,$bad" "$out"; fi
done

echo "== what the kernels see"
$E compile configs/h01_mma.json --arch sm_86 --emit "$T/bf" >/dev/null 2>&1
$E compile configs/h01_mma.json --arch sm_86 --dtype f16 --emit "$T/f16" >/dev/null 2>&1
$E compile configs/tiled.json --arch sm_86 --emit "$T/f32" >/dev/null 2>&1
grep -q '^#define T half_bits$' "$T/bf/h01_mma.cu" && grep -q '^#define TC float$' "$T/bf/h01_mma.cu" &&
  grep -q '^#define BF16 1$' "$T/bf/h01_mma.cu" && grep -q '^#define ELEM 2$' "$T/bf/h01_mma.cu" &&
  pass "bf16: T half_bits, TC float, BF16 1, ELEM 2 pasted" || fail "bf16's pasted types" "$(head -12 "$T/bf/h01_mma.cu")"
grep -q '^#define BF16 0$' "$T/f16/h01_mma.cu" && grep -q '^#define IS_HALF 1$' "$T/f16/h01_mma.cu" &&
  pass "f16: IS_HALF 1, BF16 0 pasted" || fail "f16's pasted types" "$(head -12 "$T/f16/h01_mma.cu")"
grep -q '^#define T float$' "$T/f32/tiled.cu" && ! grep -q '^#define \(TC\|IS_HALF\|BF16\) ' "$T/f32/tiled.cu" &&
  pass "f32: T float, and no TC, IS_HALF or BF16 pasted (its pasted source as before)" || fail "f32's pasted source changed" "$(head -12 "$T/f32/tiled.cu")"
grep -q 'mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32' "$T/bf/h01_mma.ptx" && ! grep -q 'f16.f16.f32' "$T/bf/h01_mma.ptx" &&
  pass "bf16's PTX: mma m16n8k16 .bf16" || fail "bf16's PTX has no bf16 mma"
grep -q 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32' "$T/f16/h01_mma.ptx" &&
  pass "f16's PTX: mma m16n8k16 .f16" || fail "f16's PTX has no f16 mma"
$E compile configs/h02_ldmatrix.json --arch sm_86 --emit "$T/ld" >/dev/null 2>&1
grep -q 'ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16' "$T/ld/h02_ldmatrix.ptx" &&
  pass "h02's PTX: ldmatrix .trans for B at NN" || fail "h02's PTX has no ldmatrix.trans"
$E compile configs/h03_async.json --arch sm_86 --emit "$T/as" >/dev/null 2>&1
grep -q 'cp.async.cg.shared.global' "$T/as/h03_async.ptx" && ! grep -q 'cp.async' "$T/ld/h02_ldmatrix.ptx" &&
  pass "h03's PTX: cp.async (h02's none)" || fail "cp.async: h03 has none or h02 has some"

echo "== h01, h02 (copies through registers) at wide vectors: the whole-vector test is not fused into VIMNMX (sm_90 SASS)"
# copy_chunk's `n == EV` after load_tile's clamp became one VIMNMX.RELU with a predicate output (the
# SASS of `clamp(n) == n`), and on an H200 copies with nothing left took the vector path: h01 and h02
# wrong at 1x4096x1100. Fixed by testing the unclamped count; this looks for the fused form again.
cuobjdump=$(bash tools/cuobjdump.sh 2>/dev/null)
for dt in bf16 f16; do
  $E compile configs/h01_mma.json configs/h02_ldmatrix.json --arch sm_90 --dtype $dt --m 3 --n 4096 --k 1100 \
    --emit "$T/wide-$dt" >"$T/wide-$dt.txt" 2>&1
  for c in h01_mma h02_ldmatrix; do
    name="$c $dt sm_90 3x4096x1100 (EV_A=4 EV_B=8): 8- and 16-byte copies, no VIMNMX with a predicate output"
    if [ -z "$cuobjdump" ]; then
      skip "$name" "no cuobjdump: tools/deps.sh --with-tests installs it"
      continue
    fi
    sass=$("$cuobjdump" -sass "$T/wide-$dt/$c.cubin" 2>&1)
    fused=$(printf '%s\n' "$sass" | grep -E 'VIMNMX[.A-Z0-9]* +[A-Z0-9]+, P[0-6],')
    if grep -q 'EV_A=4 EV_B=8' "$T/wide-$dt.txt" && printf '%s\n' "$sass" | grep -q 'LDG.E.64.CONSTANT' &&
      printf '%s\n' "$sass" | grep -q 'LDG.E.128.CONSTANT' && [ -z "$fused" ]; then pass "$name"
    else fail "$name" "$(grep -E "^$c |switches" "$T/wide-$dt.txt")
$fused"; fi
  done
done

echo "== refusals: one line, exit 2"
# refuse NAME WANT ARGS...: exit 2 and the last line of stderr is WANT
refuse() {
  local name=$1 want=$2
  shift 2
  got=$("$E" "$@" 2>&1 >/dev/null | tail -n 1)
  "$E" "$@" >/dev/null 2>&1
  rc=$?
  if [ "$rc" = 2 ] && [ "$got" = "$want" ]; then pass "$name"; else fail "$name (exit $rc)" "got:  $got
want: $want"; fi
}
echo "== hws (wgmma, sm_90a): every op in both dtypes, its variants, no spills; rows the copy engine cannot read packed first"
for dt in bf16 f16; do
  for op in NN NT TN TT; do
    for set in "" "--set BM=256 --set BN=128" "--set WGS=1 --set BM=64 --set BN=128" "--set SPLITK=4 --set PINGPONG=1 --set BN=128" "--set BN=128 --set KPROMOTE=256" "--set ZITEMS=1"; do
      # shellcheck disable=SC2086
      out=$($E compile configs/hws_bf16.json --arch sm_90a --dtype $dt --op $op --size 4096 $set 2>&1)
      rc=$?
      row=$(printf '%s\n' "$out" | grep "^hws_bf16.* sm_90a $dt ")
      spill=$(printf '%s\n' "$row" | awk '{print $7 + $8 + $9}')
      [ "$rc" = 0 ] && [ -n "$row" ] && [ "$spill" = 0 ] && pass "hws $dt $op ${set:-(as shipped)}: compiles, no stack or spills" ||
        fail "hws $dt $op $set: exit $rc, stack+spills ${spill:-none}" "$out"
    done
  done
done
echo "== hws's epilogues (EPI 0: from the registers; 1: staged through shared memory, 16-byte rows; 2: staged, the copy engine stores): no spills, the stores each names"
# Every op in both dtypes as shipped; the variants in bf16 NN and f16 TT (EPI 0's are the loop above).
runs=()
for dt in bf16 f16; do
  for op in NN NT TN TT; do runs+=("$dt $op"); done
done
for v in "--set BN=128" "--set WGS=1 --set BM=64 --set BN=128" "--set WGS=1 --set BM=64 --set BN=64" "--set PINGPONG=1 --set BN=128" "--set PINGPONG=1 --set BM=64" "--set SPLITK=4 --set PINGPONG=1 --set BN=128" "--set BN=128 --set KPROMOTE=256" "--set BM=256 --set BN=128" "--set ZITEMS=1 --set PINGPONG=1 --set BN=128"; do
  runs+=("bf16 NN $v" "f16 TT $v")
done
for run in "${runs[@]}"; do
  read -r dt op set <<<"$run"
  for e in 1 2; do
    # shellcheck disable=SC2086
    out=$($E compile configs/hws_bf16.json --arch sm_90a --dtype $dt --op $op --size 4096 --set EPI=$e $set 2>&1)
    rc=$?
    row=$(printf '%s\n' "$out" | grep "^hws_bf16.* sm_90a $dt ")
    spill=$(printf '%s\n' "$row" | awk '{print $7 + $8 + $9}')
    [ "$rc" = 0 ] && [ -n "$row" ] && [ "$spill" = 0 ] && pass "hws EPI=$e $dt $op ${set:-(as shipped)}: compiles, $(printf '%s\n' "$row" | awk '{print $6}') registers, no stack or spills" ||
      fail "hws EPI=$e $dt $op $set: exit $rc, stack+spills ${spill:-none}" "$out"
  done
done
# ptx FILE: the kernel's code without line information
ptx_code() { grep -v -E '^[[:space:]]*\.(loc|file)[[:space:]]|^[[:space:]]*//' "$1"; }
for e in 0 1 2; do
  $E compile configs/hws_bf16.json --arch sm_90a --set EPI=$e --emit "$T/epi$e" >"$T/epi$e.txt" 2>&1
  $E compile configs/hws_bf16.json --arch sm_90a --set EPI=$e --ldc +1 --batch 2 --emit "$T/epi$e-ld1" >"$T/epi$e-ld1.txt" 2>&1
done
$E compile configs/hws_bf16.json --arch sm_90a --emit "$T/epi-default" >/dev/null 2>&1
cmp -s <(ptx_code "$T/epi0/hws_bf16.ptx") <(ptx_code "$T/epi-default/hws_bf16.ptx") && ! grep -q 'stmatrix\|st.global.v4\|cp.async.bulk.tensor.3d.global' "$T/epi0/hws_bf16.ptx" &&
  pass "hws EPI 0 is the default: the same code, no stmatrix, 16-byte or bulk stores" || fail "hws EPI 0's PTX" "$(grep -c stmatrix "$T/epi0/hws_bf16.ptx")"
p="$T/epi1/hws_bf16.ptx"
[ "$(grep -c 'stmatrix.sync.aligned.m8n8.x4.shared.b16' "$p")" = 16 ] && [ "$(grep -c 'st.global.v4' "$p")" = 16 ] &&
  ! grep -q 'st.global.b32\|st.global.u32\|cp.async.bulk.tensor.3d.global' "$p" && grep -q 'EVEC_C=8 TMA_C=0' "$T/epi1.txt" &&
  pass "hws EPI 1 (128x256, 2 warpgroups): 4 sub-tiles a warpgroup, 4 stmatrix.x4 and 4 st.global.v4 each, no 32-bit stores" ||
  fail "hws EPI 1's stores" "$(grep -c stmatrix "$p") stmatrix, $(grep -c st.global.v4 "$p") st.global.v4; $(tail -2 "$T/epi1.txt")"
p="$T/epi2/hws_bf16.ptx"
[ "$(grep -c 'cp.async.bulk.tensor.3d.global.shared::cta.bulk_group' "$p")" = 4 ] && grep -q 'cp.async.bulk.wait_group.read 1' "$p" &&
  grep -q 'fence.proxy.async.shared::cta' "$p" && ! grep -q 'st.global.v4' "$p" && grep -q 'EVEC_C=8 TMA_C=1' "$T/epi2.txt" &&
  pass "hws EPI 2 (C's rows 16-byte aligned): the copy engine stores the 4 sub-tiles, fenced, waited on" ||
  fail "hws EPI 2's stores" "$(tail -2 "$T/epi2.txt")"
p="$T/epi2-ld1/hws_bf16.ptx"
# Rows off 16 bytes (store_row_unaligned): aligned 16-byte chunks shifted into place, and the rows'
# ends 2 bytes each; no bulk store.
grep -q 'EVEC_C=1 TMA_C=0' "$T/epi2-ld1.txt" && ! grep -q 'cp.async.bulk.tensor.3d.global' "$p" && grep -q 'stmatrix' "$p" &&
  grep -q 'st.global.v4' "$p" && grep -q 'st.global.u16' "$p" && cmp -s <(ptx_code "$p") <(ptx_code "$T/epi1-ld1/hws_bf16.ptx") &&
  pass "hws EPI 2, ldc packed + 1 (rows not 16-byte aligned): EPI 1's code, aligned 16-byte chunks and 2-byte ends" || fail "hws EPI 2 at ldc + 1" "$(tail -2 "$T/epi2-ld1.txt")"
out=$($E compile configs/hws_bf16.json --arch sm_90a --set EPI=2 --m 64 --n 33 --k 0 2>&1)
printf '%s\n' "$out" | grep -q 'TMA_C=0' && pass "hws EPI 2 at K = 0: no tensor maps, EPI 1's stores" || fail "hws EPI 2 at K = 0" "$out"
out=$($E compile configs/hws_bf16.json --arch sm_90a --op TN --m 127 --n 129 --k 131 2>&1)
printf '%s\n' "$out" | grep -q "PACKA=1 PACKB=1" && pass "hws at 127x129x131 TN: A and B packed first (rows of 127 and 129)" || fail "hws 127x129x131 packs" "$out"
out=$($E compile configs/hws_bf16.json --arch sm_90a --op NT --m 128 --n 256 --k 512 --ldb +3 2>&1)
printf '%s\n' "$out" | grep -q "PACKA=0 PACKB=1" && pass "hws NT, ldb padded by 3: only B packed" || fail "hws NT ldb +3 packs" "$out"
refuse "hws on sm_90 (not sm_90a)" "configs/hws_bf16.json:6:3: params break \"ARCH_SPECIFIC == 1 && ARCH == 90\" (target sm_90): wgmma and setmaxnreg exist only on the architecture-specific target sm_90a (--arch sm_90a)" \
  compile configs/hws_bf16.json --arch sm_90
# The launcher passes the batch's count after every map the template names (5, C's included where it
# is off): the kernel's parameter 20, GEMM_ARGS's 15 then the maps (read anywhere else, it was a map's
# bytes: on the GPU, no product ran).
for e in 0 2; do
  $E compile configs/hws_bf16.json --arch sm_90a --op NT --batch 8 --set ZITEMS=1 --set EPI=$e --emit "$T/zit$e" >"$T/zit$e.txt" 2>&1
  p="$T/zit$e/hws_bf16.ptx"
  [ "$(grep -c '^[[:space:]]*\.param .* gemm_param_[0-9]*\(\[[0-9]*\]\)\?,\?$' "$p")" = 21 ] && grep -q '\.param \.u32 gemm_param_20$' "$p" && grep -q 'ld.param.u32[^;]*\[gemm_param_20\]' "$p" &&
    pass "hws ZITEMS (EPI $e): the batch's count is parameter 20, after GEMM_ARGS and all 5 maps, and is read" ||
    fail "hws ZITEMS (EPI $e)'s parameters" "$(grep -c '^[[:space:]]*\.param .* gemm_param_[0-9]*\(\[[0-9]*\]\)\?,\?$' "$p") params; $(grep 'gemm_param_20' "$p" | head -2)"
done
refuse "hws: a batch's products in one loop take no split-K" "configs/hws_bf16.json (--set ZITEMS=1): params break \"ZITEMS != 1 || SPLITK == 1\" (ZITEMS = 1, SPLITK = 4): ZITEMS gives w / tiles to the batch's products, where split-K gives it to K's slices (and reduce reads the partials by the grid's z)" \
  compile configs/hws_bf16.json --arch sm_90a --set ZITEMS=1 --set SPLITK=4
refuse "hws: turns need a ring each" "configs/hws_bf16.json (--set PINGPONG=1): params break \"PINGPONG == 0 || (STAGES % WGS == 0 && STAGES / WGS >= 2)\" (PINGPONG = 1, STAGES = 3, WGS = 2): taking turns, each consumer warpgroup has a ring of STAGES / WGS stages of its own, two at least" \
  compile configs/hws_bf16.json --arch sm_90a --set PINGPONG=1 --set BN=128 --set STAGES=3
refuse "hws: the staged epilogue's buffers must fit beside the ring" "configs/hws_bf16.json (--set EPI=1): params break \"EPI == 0 || STAGES * STAGE_BYTES + 1024 + EPI_BYTES + 1024 <= 232448\" (EPI = 1, STAGES = 7): the ring, its alignment slack, the staged epilogue's two 8 KB sub-tiles per consumer warpgroup and the 1 KB of static shared memory (the ring's barriers, padded to the dynamic part's 1024-byte alignment) must fit the 227 KB a block may take on sm_90: take fewer STAGES" \
  compile configs/hws_bf16.json --arch sm_90a --set BN=128 --set STAGES=7 --set EPI=1
out=$($E compile configs/hws_bf16.json --arch sm_90a --set BN=128 --set STAGES=7 2>&1)
[ $? = 0 ] && pass "hws 128x128, 7 stages, EPI 0: still fits" || fail "hws 128x128 7 stages EPI 0" "$out"
refuse "hws on f32" "configs/hws_bf16.json: --dtype f32: template hws does not support f32" \
  compile configs/hws_bf16.json --arch sm_90a --dtype f32

refuse "sm_75 refused" "configs/h04_tuned.json:6:3: params break \"ARCH >= 80\" (target sm_75): mma.sync m16n8k16 with bf16 operands, cp.async and cvt to bf16x2 need sm_80 or newer" \
  compile configs/h04_tuned.json --arch sm_75
refuse "--dtype f32 on hmma" "configs/h04_tuned.json: --dtype f32: template hmma does not support f32" \
  compile configs/h04_tuned.json --arch sm_90 --dtype f32
refuse "--dtype bf16 on an f32 template" "configs/warptile_db.json: --dtype bf16: template warptile does not support bf16" \
  compile configs/warptile_db.json --arch sm_90 --dtype bf16
refuse "--dtype bf16 on an f32 template, bench (no GPU work)" "configs/warptile_db.json: --dtype bf16: template warptile does not support bf16" \
  bench configs/warptile_db.json --dtype bf16
refuse "--dtype F16 (names are lower case)" "engine: --dtype F16: expected f32, f64, bf16 or f16" \
  compile configs/h04_tuned.json --dtype F16

echo "== selection: the dtype is part of the key; without device entries the model weighs the dtype's templates"
pk() { $E pick --device-name "NVIDIA H100 80GB HBM3" --format jsonl "$@" 2>&1; }
mkdir -p "$T/archonly" && cp wisdom/sm_90.json wisdom/default.json "$T/archonly/"
for dt in bf16 f16; do
  out=$(pk --dtype $dt --shapes 4096x4096x4096,8192x8192x8192,17x33x5)
  n=$(printf '%s\n' "$out" | grep -c "\"config\": *\"configs/hws_$dt.json\"")
  $E pick --wisdom "$T/archonly" --device-name "NVIDIA H100 80GB HBM3" --dtype $dt --shapes 4096x4096x4096 2>&1 | grep -q "archonly/sm_90.json" && [ "$n" -ge 2 ] &&
    pass "pick $dt on the H100 (sm_90a): hws at the squares; without the device's file, sm_90.json's arch defaults" || fail "pick $dt on the H100" "$out"
  out=$($E pick --format jsonl --dtype $dt --arch sm_86 --shapes 4096x4096x4096,17x33x5 2>&1)
  [ "$(printf '%s\n' "$out" | grep -c '"config": *"configs/h04_tuned.json"')" = 2 ] && ! printf '%s\n' "$out" | grep -q 'left out' &&
    pass "pick $dt on sm_86: h04_tuned (wisdom/default.json), nothing left out" || fail "pick $dt on sm_86" "$out"
  out=$(pk --dtype $dt --arch sm_90 --shapes 4096x4096x4096)
  printf '%s\n' "$out" | grep -q 'configs/h04_tuned.json' && printf '%s\n' "$out" | grep -q "hws_$dt.json.*left out\|left out.*ARCH_SPECIFIC" &&
    pass "pick $dt on sm_90 (not sm_90a): hws left out with its rule, h04_tuned runs" || fail "pick $dt on sm_90 (not sm_90a)" "$out"
done
mkdir -p "$T/f32only"
printf '{"version": 1, "entries": [{"dtype": "f32", "shape": "4096x4096x4096", "config": "configs/warptile_db.json", "tflops": 0, "vs_cublas": 0}]}\n' >"$T/f32only/default.json"
out=$($E pick --arch sm_90 --dtype bf16 --wisdom "$T/f32only" --shapes 4096x4096x4096 2>&1)
rc=$?
if [ "$rc" = 2 ] && printf '%s\n' "$out" | grep -q '^engine: --auto: no wisdom for bf16 at 4096x4096x4096' &&
  printf '%s\n' "$out" | grep -q 'bf16; 0 candidates'; then pass "pick bf16 over f32 wisdom only: no candidates"
else fail "pick bf16 over f32 wisdom only (exit $rc)" "$out"; fi
out=$($E pick --arch sm_90 --dtype f32 --shapes 4096x4096x4096 2>&1)
printf '%s\n' "$out" | grep -q 'f32; [1-9][0-9]* candidates' && pass "pick f32 still has its candidates" || fail "pick f32" "$out"

echo "== bench/half_merge.py: a tuned archive's half entries into a device file"
mkdir -p "$T/arch/tuned" "$T/data"
printf '== half_tune.sh: bf16 on X; judge seed 123 (60 shapes, NN)\n' >"$T/arch/summary.txt"
printf '{"version": 1, "device": "NVIDIA H200", "arch": "sm_90a", "entries": [\n%s,\n%s,\n%s\n]}\n' \
  '{"dtype": "bf16", "op": "NT", "shape": "520x4104x4096", "config": "/elsewhere/configs/hws_bf16.json", "set": {"BM": 128, "BN": 128}, "tflops": 400, "vs_cublas": 0.8, "source": "engine tune"}' \
  '{"dtype": "bf16", "shape": "1008x1000x1000", "config": "configs/hws_bf16.json", "set": {"BN": 128}, "tflops": 200, "vs_cublas": 0.9, "source": "engine tune"}' \
  '{"dtype": "f32", "shape": "64x64x64", "config": "configs/naive.json", "tflops": 1, "vs_cublas": 0.1}' >"$T/arch/tuned/nvidia-h200.json"
echo '{"M": 1}' >"$T/arch/tune-bf16-NT.jsonl"
cp wisdom/nvidia-h100-80gb-hbm3.json "$T/h100.json"
before=$(grep -c '"dtype"' "$T/h100.json")
python3 bench/half_merge.py "$T/arch" --into "$T/h100.json" --data-dir "$T/data" >"$T/out" 2>&1
check_rc "half_merge.py" 0 $? "$(cat "$T/out")"
[ "$(grep -c '"dtype"' "$T/h100.json")" = $((before + 2)) ] && [ -s "$T/data/h200-half-tune-2026-11-28.jsonl" ] &&
  pass "...two bf16 entries added (the f32 one not), the tune log to bench/data" || fail "...two bf16 entries" "$(cat "$T/out")"
grep -q '"config": "configs/hws_bf16.json", "set": {"BM": 128, "BN": 128}.*"source": "measured on an H200, not on the H100 this file is for (bench/half_tune.sh, 2026-11-28, bench/data/h200-half-tune-2026-11-28.jsonl): engine tune"' "$T/h100.json" &&
  pass "...config paths the repository's, the source says where and when" || fail "...sources" "$(grep bf16 "$T/h100.json")"
python3 bench/half_merge.py "$T/arch" --into "$T/h100.json" --data-dir "$T/data" >"$T/out" 2>&1
[ "$(grep -c '"dtype"' "$T/h100.json")" = $((before + 2)) ] && grep -q ' 2 replaced' "$T/out" && pass "...merged twice: replaced, not doubled" ||
  fail "...merged twice" "$(cat "$T/out")"
mkdir -p "$T/w2" && cp wisdom/*.json "$T/w2/" && cp "$T/h100.json" "$T/w2/nvidia-h100-80gb-hbm3.json"
out=$($E pick --wisdom "$T/w2" --device-name "NVIDIA H100 80GB HBM3" --dtype bf16 --op NT --shapes 520x4104x4096 2>&1)
printf '%s\n' "$out" | grep -q 'hws_bf16\[BM=128,BN=128\].*exact\|wisdom holds this shape' && pass "...the merged file loads; its entry is exact at its shape" ||
  fail "...the merged file loads" "$out"

echo "== bench/merge_tuned.py: a tune's entries (any dtype) into a shipped file, an A/B deciding"
mkdir -p "$T/mt"
printf '{"version": 1, "device": "NVIDIA H200", "arch": "sm_90", "entries": [\n%s,\n%s,\n%s\n]}\n' \
  '{"dtype": "f64", "shape": "100x100x100", "config": "configs/dgemm_dmma.json", "tflops": 1, "vs_cublas": 1, "source": "engine tune"}' \
  '{"dtype": "f64", "op": "TN", "shape": "64x64x65537", "config": "/elsewhere/configs/dgemm_dmma_splitk.json", "set": {"SPLITK": 64}, "tflops": 20, "vs_cublas": 1.3, "source": "engine tune dgemm_dmma_splitk"}' \
  '{"dtype": "bf16", "shape": "1001x1003x1005", "config": "/elsewhere/configs/hws_bf16.json", "set": {"BN": 128}, "tflops": 200, "vs_cublas": 0.9, "source": "engine tune hws_bf16"}' >"$T/mt/tuned.json"
row() { printf '{"template": "%s", "dtype": "%s", "op": "%s", "M": %s, "N": %s, "K": %s, "status": "%s", "ms": %s}\n' "$@"; }
{ row dmma f64 TN 64 64 65537 ok 1.0; row cublas f64 TN 64 64 65537 ok 0.5; row hws bf16 NN 1001 1003 1005 ok 1.0; } >"$T/mt/before.jsonl"
{ row dmma f64 TN 64 64 65537 ok 0.9; row cublas f64 TN 64 64 65537 ok 0.1; row hws bf16 NN 1001 1003 1005 ok 0.99; } >"$T/mt/after.jsonl"
cp wisdom/nvidia-h100-80gb-hbm3.json "$T/mt/h100.json"
before=$(grep -c '"dtype"' "$T/mt/h100.json")
python3 bench/merge_tuned.py "$T/mt/tuned.json" --into "$T/mt/h100.json" --data bench/data/x.jsonl --date 2026-11-28 \
  --ab "$T/mt/before.jsonl" "$T/mt/after.jsonl" >"$T/out" 2>&1
check_rc "merge_tuned.py --ab" 0 $? "$(cat "$T/out")"
[ "$(grep -c '"dtype"' "$T/mt/h100.json")" = $((before + 1)) ] && grep -q '1 added, 0 replaced, 2 skipped' "$T/out" &&
  grep -q 'f64 TN 64x64x65537: before 1.0 ms, after 0.9 ms (ok): in' "$T/out" &&
  grep -q 'bf16 NN 1001x1003x1005: before 1.0 ms, after 0.99 ms (ok): left out' "$T/out" &&
  ! grep -q '100x100x100' "$T/mt/h100.json" &&
  pass "...10% faster goes in; 1% (within the margin) and an entry with no row stay out; cuBLAS's rows are not ours" || fail "...the A/B" "$(cat "$T/out")"
grep -q '"op": "TN", "shape": "64x64x65537", "config": "configs/dgemm_dmma_splitk.json", "set": {"SPLITK": 64}.*"source": "measured on an H200, not on the NVIDIA H100 80GB HBM3 this file is for (2026-11-28, bench/data/x.jsonl): engine tune dgemm_dmma_splitk"' "$T/mt/h100.json" &&
  pass "...the repository's config path; the source says where, when and which data" || fail "...the entry" "$(grep 65537 "$T/mt/h100.json")"
python3 bench/merge_tuned.py "$T/mt/tuned.json" --into "$T/mt/h100.json" --data x --skip bf16:NN:1001x1003x1005 >"$T/out" 2>&1
[ "$(grep -c '"dtype"' "$T/mt/h100.json")" = $((before + 2)) ] && grep -q '1 added, 1 replaced, 1 skipped' "$T/out" &&
  pass "...merged again: replaced, not doubled; --skip leaves an entry out" || fail "...merged again" "$(cat "$T/out")"
cp "$T/mt/h100.json" "$T/mt/keep.json"
for bad in "--skip bf16:XX:1x1x1" "--skip nope" "--ab $T/mt/none.jsonl $T/mt/after.jsonl"; do
  python3 bench/merge_tuned.py "$T/mt/tuned.json" --into "$T/mt/h100.json" --data x $bad >"$T/out" 2>&1
  rc=$?
  [ "$rc" = 2 ] && [ "$(grep -c . "$T/out")" = 1 ] && grep -q '^merge_tuned: ' "$T/out" && cmp -s "$T/mt/h100.json" "$T/mt/keep.json" &&
    pass "merge_tuned.py $bad: exit 2, one line, the file untouched" || fail "merge_tuned.py $bad (exit $rc)" "$(cat "$T/out")"
done
sed 's#/elsewhere/configs/hws_bf16.json#/elsewhere/configs/nosuch.json#' "$T/mt/tuned.json" >"$T/mt/bad.json"
python3 bench/merge_tuned.py "$T/mt/bad.json" --into "$T/mt/h100.json" --data x >"$T/out" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q 'config configs/nosuch.json is not in the repository' "$T/out" && cmp -s "$T/mt/h100.json" "$T/mt/keep.json" &&
  pass "merge_tuned.py: a config the repository lacks: exit 2, the file untouched" || fail "merge_tuned.py unknown config (exit $rc)" "$(cat "$T/out")"

echo "== bench/half_mirror.py: f16 entries from bf16's (hws and gemv), measured f16 never touched"
printf '{"version": 1, "device": "NVIDIA H100 80GB HBM3", "arch": "sm_90", "entries": [\n%s,\n%s,\n%s,\n%s,\n%s,\n%s\n]}\n' \
  '{"dtype": "bf16", "shape": "1024x1024x1024", "config": "configs/hws_bf16.json", "set": {"BN": 128}, "tflops": 300, "vs_cublas": 0.8, "source": "tuned A"}' \
  '{"dtype": "bf16", "op": "NT", "shape": "4096x1x4096", "config": "configs/gemv.json", "set": {"VEC": 8}, "tflops": 3, "vs_cublas": 1.4, "source": "tuned B"}' \
  '{"dtype": "bf16", "shape": "2048x2048x2048", "config": "configs/hws_bf16.json", "tflops": 600, "vs_cublas": 0.9, "source": "tuned C"}' \
  '{"dtype": "bf16", "shape": "512x512x512", "config": "configs/h04_tuned.json", "tflops": 50, "vs_cublas": 0.3, "source": "tuned D"}' \
  '{"dtype": "f16", "shape": "2048x2048x2048", "config": "configs/hws_f16.json", "tflops": 610, "vs_cublas": 0.91, "source": "measured in f16"}' \
  '{"dtype": "f16", "shape": "1024x1024x1024", "config": "configs/hws_f16.json", "tflops": 1, "vs_cublas": 0.1, "source": "bf16'"'"'s entry mirrored, not measured in f16 (old)"}' >"$T/mirror.json"
python3 bench/half_mirror.py --into "$T/mirror.json" >"$T/out" 2>&1
check_rc "half_mirror.py" 0 $? "$(cat "$T/out")"
grep -q '1 f16 entries mirrored into .*, 1 mirrored again' "$T/out" &&
  grep -q '"dtype": "f16", "op": "NT", "shape": "4096x1x4096", "config": "configs/gemv.json", "set": {"VEC": 8}' "$T/mirror.json" &&
  grep -q '"dtype": "f16", "shape": "1024x1024x1024", "config": "configs/hws_f16.json", "set": {"BN": 128}, "tflops": 300.0' "$T/mirror.json" &&
  grep -q '"dtype": "f16", "shape": "2048x2048x2048", .*"source": "measured in f16"' "$T/mirror.json" &&
  ! grep -q '"dtype": "f16", "shape": "512x512x512"' "$T/mirror.json" &&
  pass "...gemv mirrored as is, an old mirror renewed, the measured f16 entry and h04_tuned left alone" || fail "...the mirror" "$(cat "$T/out"; grep f16 "$T/mirror.json")"
cp "$T/mirror.json" "$T/mirror1.json"
python3 bench/half_mirror.py --into "$T/mirror.json" >"$T/out" 2>&1
grep -q ' 0 f16 entries mirrored into .*, 0 mirrored again' "$T/out" && cmp -s "$T/mirror.json" "$T/mirror1.json" &&
  pass "...a second run changes nothing" || fail "...a second run" "$(cat "$T/out")"
python3 bench/half_mirror.py --into "$T/none.json" >"$T/out" 2>&1
rc=$?
[ "$rc" = 2 ] && [ "$(grep -c . "$T/out")" = 1 ] && grep -q "^half_mirror: .*none.json" "$T/out" &&
  pass "half_mirror.py: a file that is not there: exit 2, one line" || fail "half_mirror.py missing file (exit $rc)" "$(cat "$T/out")"
cp wisdom/nvidia-h100-80gb-hbm3.json "$T/shipped.json"
python3 bench/half_mirror.py --into "$T/shipped.json" >"$T/out" 2>&1
cmp -s "$T/shipped.json" wisdom/nvidia-h100-80gb-hbm3.json && pass "...the shipped file is mirrored already (a run changes nothing)" ||
  fail "...the shipped file is not mirrored" "$(cat "$T/out")"
summary
