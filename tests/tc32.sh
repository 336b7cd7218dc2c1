#!/usr/bin/env bash
# The FP32 tensor-core kernels without a GPU: tc32.cu (wgmma, sm_90a) and dmma.cu's f32 path
# (mma.sync TF32, sm_80+). Refusals of wrong targets and parameters (exit 2, the rule named), CUBINs
# for sm_90a and sm_80 with their registers and spills, the tensor-core instructions in the PTX (and
# in the SASS where cuobjdump is on PATH), and the accuracy class each config declares.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
E=${BUILD:-build}/engine
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# refused NAME PATTERN ARGS...: exit 2 and the one line naming the rule
refused() {
  local name=$1 pat=$2
  shift 2
  out=$($E compile "$@" 2>&1)
  rc=$?
  if [ "$rc" = 2 ] && printf '%s\n' "$out" | grep -q -- "$pat"; then pass "$name"; else fail "$name (exit $rc)" "$out"; fi
}
refused "tc32 for sm_90 is refused: wgmma needs sm_90a" 'only on the architecture-specific target sm_90a' \
  configs/tc32_3x.json --arch sm_90
refused "tc32 for sm_80 is refused" 'ARCH_SPECIFIC == 1 && ARCH == 90' configs/tc32_3x.json --arch sm_80
refused "3xTF32 with BN = 256 is refused: two accumulators of 128 registers" 'PASSES == 1 || BN <= 128' \
  configs/tc32_3x.json --arch sm_90a --set BN=256
refused "BM = 96 is not a warpgroup multiple" 'params.BM = 96' configs/tc32_3x.json --arch sm_90a --set BM=96
refused "PASSES = 2 is not a choice" 'params.PASSES = 2' configs/tc32_3x.json --arch sm_90a --set PASSES=2
refused "BK = 16 is refused: one 128-byte swizzle row" 'params.BK = 16' configs/tc32_3x.json --arch sm_90a --set BK=16
refused "a 256x256 tile is refused" 'BM \* BN <= 128 \* 256' configs/tc32_1x.json --arch sm_90a --set BM=256 --set BN=256
refused "tc32 has no f64" 'f64' configs/tc32_3x.json --arch sm_90a --dtype f64
refused "mma.sync TF32 for sm_75 is refused" 'ARCH >= 80' configs/tc32_sync.json --arch sm_75
refused "in f32 dmma takes only TF32's m16n8k8" 'F64 || SHAPE == 1688' configs/tc32_sync.json --arch sm_90 --set MMA=884
refused "an f32 vector of 8 is refused" 'params.VEC_A = 8' configs/tc32_sync.json --arch sm_80 --set VEC_A=8

# built NAME ARCH PTX_PATTERN SASS_PATTERN CONFIG ARGS...: compiles, no spills, the instruction in
# its PTX (and SASS when cuobjdump is here)
built() {
  local name=$1 arch=$2 ptx=$3 sass=$4 cfg=$5
  shift 5
  local d="$T/$name"
  out=$($E compile "$cfg" --arch "$arch" --emit "$d" "$@" 2>&1)
  rc=$?
  printf '%s\n' "$out" | sed -n '1,2p' | sed 's/^/    /'
  local stem
  stem=$(basename "$cfg" .json)
  if [ "$rc" != 0 ]; then fail "$name compiles for $arch" "$out"; return; fi
  pass "$name compiles for $arch"
  if printf '%s\n' "$out" | awk -v s="$stem" '$1 ~ "^"s && $8 + $9 == 0 {ok = 1} END {exit !ok}'; then
    pass "$name: no spills"
  else
    fail "$name: no spills" "$out"
  fi
  if grep -q -- "$ptx" "$d"/*.ptx; then pass "$name: PTX has $ptx"; else fail "$name: PTX has $ptx"; fi
  if command -v cuobjdump >/dev/null; then
    if cuobjdump -sass "$d"/*.cubin | grep -q -- "$sass"; then pass "$name: SASS has $sass"; else fail "$name: SASS has $sass"; fi
  else
    skip "$name: SASS has $sass" "no cuobjdump on PATH"
  fi
}
built tc32_3x sm_90a 'wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32' HGMMA configs/tc32_3x.json --size 4096
built tc32_1x sm_90a 'wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32' HGMMA configs/tc32_1x.json --m 127 --n 129 --k 131
built tc32_sync_80 sm_80 'mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32' 'HMMA.1684.F32.TF32' configs/tc32_sync.json --size 4096
built tc32_sync_86 sm_86 'cvt.rna.tf32.f32' 'HMMA.1684.F32.TF32' configs/tc32_sync.json --m 127 --n 129 --k 131

# 3xTF32 issues three wgmmas per k-step and 1xTF32 one: the PTX of each says so.
n3=$(grep -c 'wgmma.mma_async' "$T"/tc32_3x/*.ptx)
n1=$(grep -c 'wgmma.mma_async' "$T"/tc32_1x/*.ptx)
if [ "$n3" = $((3 * n1)) ] && [ "$n1" -gt 0 ]; then pass "3xTF32 has three times 1xTF32's wgmmas ($n3, $n1)"
else fail "3xTF32 has three times 1xTF32's wgmmas ($n3, $n1)"; fi
# ... and the split: a round-to-nearest cvt (never the truncating .rz of plain TF32 use).
if grep -q 'cvt.rna.tf32.f32' "$T"/tc32_3x/*.ptx && ! grep -q 'cvt.rz.tf32' "$T"/tc32_3x/*.ptx; then
  pass "the split rounds to nearest (cvt.rna)"
else fail "the split rounds to nearest (cvt.rna)"; fi

# The accuracy class: the 1-pass config declares tf32, the 3-pass ones their dtype's own (f32).
for c in tc32_1x:tf32 tc32_3x:f32 tc32_sync:f32; do
  cfg=${c%%:*} want=${c##*:}
  got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("accuracy", "f32"))' "configs/$cfg.json")
  if [ "$got" = "$want" ]; then pass "$cfg is held to class $want"; else fail "$cfg is held to class $want (says $got)"; fi
done
summary
