#!/usr/bin/env bash
# The FP32 tensor-core kernels without a GPU: tc32.cu (wgmma, sm_90a) and dmma.cu's f32 path
# (mma.sync TF32, sm_80+). Refusals of wrong targets and parameters (exit 2, the rule named), CUBINs
# for sm_90a and sm_80 with their registers and spills, the tensor-core instructions in the PTX (and
# in the SASS where cuobjdump is found: tools/cuobjdump.sh), and the accuracy class each config declares.
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
refused "3xTF32 with wgmma N = 256 is refused: two accumulators of 128 registers" 'WN <= 128 || (PASSES == 1 && KPROMOTE == 0)' \
  configs/tc32_3x.json --arch sm_90a --set BM=256
refused "... also without SWAP (BN = 256)" 'WN <= 128 || (PASSES == 1 && KPROMOTE == 0)' \
  configs/tc32_3x_areg.json --arch sm_90a --set BN=256
refused "1xTF32 with wgmma N = 256 and promotion is refused: two sets of 128 registers" 'WN <= 128 || (PASSES == 1' \
  configs/tc32_1x.json --arch sm_90a --set KPROMOTE=128
refused "SWAP reads raw stages: 2 are too few (R - 2 k-tiles ahead)" 'SWAP == 0 || (RAW_STAGES >= 3' \
  configs/tc32_3x.json --arch sm_90a --set RAW_STAGES=2
refused "SWAP excludes AREG" 'SWAP == 0 || (RAW_STAGES >= 3 && AREG == 0' configs/tc32_3x.json --arch sm_90a --set AREG=1
refused "SWAP has no wgmma N of 192" 'SWAP == 0 || WN != 192' configs/tc32_1x.json --arch sm_90a --set BM=192
refused "unrounded TF32 only for 1xTF32 under SWAP" 'ROUND == 1 || (SWAP == 1 && PASSES == 1)' \
  configs/tc32_3x.json --arch sm_90a --set ROUND=0
refused "promotion between k-tiles only" 'params.KPROMOTE = 48' configs/tc32_3x.json --arch sm_90a --set KPROMOTE=48
refused "FOLD without promotion is refused" 'FOLD == 0 || (PASSES == 3 && KPROMOTE > 0)' \
  configs/tc32_3x.json --arch sm_90a --set KPROMOTE=0
refused "FOLD under 1xTF32 is refused" 'FOLD == 0 || (PASSES == 3' configs/tc32_1x.json --arch sm_90a --set FOLD=1
refused "dmma: promotion is an f32 choice" 'KPROMOTE == 0 || (!F64' configs/dgemm_pipelined.json --arch sm_90 \
  --set KPROMOTE=128
refused "dmma: FOLD without promotion is refused" 'FOLD == 0 || (!F64' configs/tc32_sync.json --arch sm_80 \
  --set KPROMOTE=0
refused "BM = 96 is not a warpgroup multiple" 'params.BM = 96' configs/tc32_3x.json --arch sm_90a --set BM=96
refused "PASSES = 2 is not a choice" 'params.PASSES = 2' configs/tc32_3x.json --arch sm_90a --set PASSES=2
refused "BK = 16 is refused: one 128-byte swizzle row" 'params.BK = 16' configs/tc32_3x.json --arch sm_90a --set BK=16
refused "a 256x256 tile is refused" 'BM \* BN <= 128 \* 256' configs/tc32_1x.json --arch sm_90a --set BM=256 --set BN=256 \
  --set KPROMOTE=0
refused "tc32 has no f64" 'f64' configs/tc32_3x.json --arch sm_90a --dtype f64
refused "3xTF32 with 4 stages does not fit shared memory" 'needs 263168 bytes of shared memory per block' \
  configs/tc32_3x.json --arch sm_90a --set STAGES=4
refused "tc32 refuses A transposed outside SWAP (a requires rule: wgmma's TF32 operands are K-major)" \
  'TA == 0 || (SWAP == 1 && (PASSES == 3 || ROUND == 1))' configs/tc32_3x_areg.json --arch sm_90a --op TN --size 128
refused "... and under 1xTF32 with ROUND 0 (no split to transpose A in)" 'TA == 0 || (SWAP == 1' configs/tc32_1x.json \
  --arch sm_90a --set ROUND=0 --op TT --size 128
refused "... and B transposed outside SWAP" 'TB == 0 || SWAP == 1' configs/tc32_3x_areg.json --arch sm_90a --op NT --size 128
# Under SWAP every op: A^T's raw rows transposed by split_a_t (OP_TA; in 4 x 4 blocks at TN,
# TSPLIT 2), B^T's read by ldmatrix
# (OP_TB); leading dimensions as arguments (LDP 0), 16-byte copies where they keep rows aligned
# (+8); where not (+1) A and B copied packed first (PACK_LD, the shipped configs), or without it
# 4-byte copies.
for lay in "NT:--op NT:OP_TA=0 OP_TB=1 LDP=1" "TN:--op TN:TSPLIT_ON=1 OP_TA=1 OP_TB=0 LDP=1" \
  "TT:--op TT:TSPLIT_ON=0 OP_TA=1 OP_TB=1 LDP=1" "TT TSPLIT 1:--op TT --set TSPLIT=1:TSPLIT_ON=1 OP_TA=1 OP_TB=1" \
  "NN+8:--lda +8 --ldb +8 --ldc +8:EVEC_A=4 EVEC_B=4 EVEC_C=2 BATCHED=0 TSPLIT_ON=0 OP_TA=0 OP_TB=0 LDP=0" \
  "NT+1:--op NT --lda +1 --ldb +1 --ldc +1:PACKLD_A=1 PACKLD_B=1 EVEC_A=4 EVEC_B=4 EVEC_C=1 BATCHED=0 TSPLIT_ON=0 OP_TA=0 OP_TB=1 LDP=0" \
  "TT+1 PACK_LD 0:--op TT --lda +1 --ldb +1 --ldc +1 --set PACK_LD=0:PACKLD_A=0 PACKLD_B=0 EVEC_A=1 EVEC_B=1 EVEC_C=1"; do
  IFS=: read -r name args want <<<"$lay"
  # shellcheck disable=SC2086 # the args split on purpose
  out=$($E compile configs/tc32_3x.json configs/tc32_1x.json --arch sm_90a --size 256 $args --emit "$T/lay-$name" 2>&1)
  if [ "$(printf '%s\n' "$out" | grep -c -- "$want")" = 2 ] && { [ "${name#NT}" = "$name" ] ||
    [ "$(cat "$T/lay-$name"/tc32_3x*.ptx | grep -c 'ldmatrix.sync.aligned.m8n8.x4.shared.b16')" -ge 1 ]; }; then
    pass "tc32_3x and tc32_1x compile at $name ($want)"
  else fail "tc32_3x and tc32_1x compile at $name ($want)" "$out"; fi
done
refused "cp.async loads (RAW_STAGES) and PREFETCH's register staging exclude each other" 'RAW_STAGES == 0 || PREFETCH == 0' \
  configs/tc32_3x_async.json --arch sm_90a --set PREFETCH=1
refused "3xTF32 with three operand stages and two raw ones does not fit shared memory" 'needs 263168 bytes of shared memory per block' \
  configs/tc32_3x_async.json --arch sm_90a --set STAGES=3 --set RAW_STAGES=2
refused "one raw stage is not a choice (no load would be in flight)" 'params.RAW_STAGES = 1' configs/tc32_3x_async.json \
  --arch sm_90a --set RAW_STAGES=1
refused "mma.sync TF32 for sm_75 is refused" 'ARCH >= 80' configs/tc32_sync.json --arch sm_75
refused "in f32 dmma takes only TF32's m16n8k8" 'F64 || SHAPE == 1688' configs/tc32_sync.json --arch sm_90 --set MMA=884
refused "an f32 vector of 8 is refused" 'params.VEC_A = 8' configs/tc32_sync.json --arch sm_80 --set VEC_A=8

# Compiles of one config (one NVRTC thread) run in the background, as many at a time as there are
# cores: spawn NAME CMD... starts one (its output in T/NAME.out); reap NAME waits for it and sets out and rc.
ncores=$(nproc 2>/dev/null || echo 2)
declare -A pid
spawn() {
  local n=$1
  shift
  while [ "$(jobs -rp | wc -l)" -ge "$ncores" ]; do wait -n; done
  "$@" >"$T/$n.out" 2>&1 &
  pid[$n]=$!
}
reap() { wait "${pid[$1]}"; rc=$?; out=$(cat "$T/$1.out"); }

# built NAME ARCH PTX_PATTERN SASS_PATTERN CONFIG ARGS...: compiles, no spills, the instruction in
# its PTX (and SASS when cuobjdump is found). The compile starts now; its checks run, in the order the
# builds were asked for, at the next built_checks (before anything reads T/NAME).
queued=()
cuobjdump=$(bash tools/cuobjdump.sh 2>/dev/null)
built() {
  local name=$1 arch=$2 ptx=$3 sass=$4 cfg=$5
  shift 5
  spawn "$name" "$E" compile "$cfg" --arch "$arch" --emit "$T/$name" "$@"
  queued+=("$name|$arch|$ptx|$sass|$cfg")
}
built_checks() {
  local q name arch ptx sass cfg stem d
  for q in "${queued[@]}"; do
    IFS='|' read -r name arch ptx sass cfg <<<"$q"
    d="$T/$name"
    reap "$name"
    printf '%s\n' "$out" | sed -n '1,2p' | sed 's/^/    /'
    stem=$(basename "$cfg" .json)
    if [ "$rc" != 0 ]; then fail "$name compiles for $arch" "$out"; continue; fi
    pass "$name compiles for $arch"
    if printf '%s\n' "$out" | awk -v s="$stem" '$1 ~ "^"s && $8 + $9 == 0 {ok = 1} END {exit !ok}'; then
      pass "$name: no spills"
    else
      fail "$name: no spills" "$out"
    fi
    if grep -q -- "$ptx" "$d"/*.ptx; then pass "$name: PTX has $ptx"; else fail "$name: PTX has $ptx"; fi
    if [ -n "$cuobjdump" ]; then
      if "$cuobjdump" -sass "$d"/*.cubin | grep -q -- "$sass"; then pass "$name: SASS has $sass"; else fail "$name: SASS has $sass"; fi
    else
      skip "$name: SASS has $sass" "no cuobjdump: tools/deps.sh --with-tests installs it"
    fi
  done
  queued=()
}
built tc32_3x sm_90a 'wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32' HGMMA configs/tc32_3x.json --size 4096
built tc32_1x sm_90a 'wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32' HGMMA configs/tc32_1x.json --m 127 --n 129 --k 131
# mma.sync's TF32 m16n8k8 is one HMMA.1688.F32.TF32 in SASS (M16 N8 K8 in the name, as cuobjdump
# prints it for sm_80, sm_86 and sm_90); HMMA.1684 would be the m16n8k4 shape, which dmma.cu's f32
# path never issues (its rule: F64 || SHAPE == 1688).
built tc32_sync_80 sm_80 'mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32' 'HMMA.1688.F32.TF32' configs/tc32_sync.json --size 4096
built tc32_sync_86 sm_86 'cvt.rna.tf32.f32' 'HMMA.1688.F32.TF32' configs/tc32_sync.json --m 127 --n 129 --k 131
# A strided batch runs on grid z: the BATCHED switch, and the vector widths narrow where a stride
# breaks the 16-byte alignment (an odd K: A's rows and products start at odd offsets).
spawn batch3 "$E" compile configs/tc32_3x.json --arch sm_90a --batch 3 --m 128 --n 128 --k 128 --no-cache
spawn batch3k "$E" compile configs/tc32_3x.json --arch sm_90a --batch 3 --m 128 --n 128 --k 131 --no-cache
reap batch3
if printf '%s\n' "$out" | grep -q 'EVEC_A=4 EVEC_B=4 EVEC_C=2 BATCHED=1'; then pass "tc32 batch of 3: BATCHED=1, full vectors"
else fail "tc32 batch of 3: BATCHED=1, full vectors" "$out"; fi
reap batch3k
if printf '%s\n' "$out" | grep -q 'EVEC_A=1 EVEC_B=4 EVEC_C=2 BATCHED=1'; then pass "tc32 batch with odd K: A's vectors narrow"
else fail "tc32 batch with odd K: A's vectors narrow" "$out"; fi

# The variants the GPU script times (bench/tc32_gpu.sh) compile without spills too; those of the
# register-staged path (shipped until the fourth round) take the shipped configs back to it (and,
# for tc32_1x, to the 128 x 128 tile with promotion it had then, P1).
OLD="--set SWAP=0 --set STAGES=3 --set RAW_STAGES=0 --set AREG=0"
P1="--set BM=128 --set KPROMOTE=128"
built tc32_3x_p32 sm_90a 'wgmma.mma_async' HGMMA configs/tc32_3x_areg.json --size 4096 --set KPROMOTE=32
built tc32_3x_p256 sm_90a 'wgmma.mma_async' HGMMA configs/tc32_3x.json --size 4096 --set KPROMOTE=256
built tc32_3x_regstage sm_90a 'wgmma.mma_async' HGMMA configs/tc32_3x.json --size 4096 $OLD --set BMAP=0
built tc32_3x_pf sm_90a 'wgmma.mma_async' HGMMA configs/tc32_3x.json --size 4096 $OLD --set BMAP=0 --set PREFETCH=1
built tc32_3x_pf_bmap1 sm_90a 'wgmma.mma_async' HGMMA configs/tc32_3x.json --m 127 --n 129 --k 131 $OLD --set PREFETCH=1 \
  --set BMAP=1
built tc32_1x_pf sm_90a 'wgmma.mma_async' HGMMA configs/tc32_1x.json --size 4096 $P1 $OLD --set BMAP=0 --set PREFETCH=1
built tc32_1x_pf_s4 sm_90a 'wgmma.wait_group.sync.aligned 2' HGMMA configs/tc32_1x.json --size 4096 $P1 --set PREFETCH=1 \
  --set STAGES=4 --set SWAP=0 --set RAW_STAGES=0 --set AREG=0 --set BMAP=0
built tc32_3x_bmap1 sm_90a 'wgmma.mma_async' HGMMA configs/tc32_3x.json --m 127 --n 129 --k 131 $OLD --set BMAP=1
built tc32_3x_s2 sm_90a 'wgmma.mma_async' HGMMA configs/tc32_3x.json --size 4096 --set SWAP=0 --set RAW_STAGES=0 --set AREG=0 --set BMAP=0
built tc32_1x_promote sm_90a 'wgmma.mma_async' HGMMA configs/tc32_1x_async.json --size 4096
built tc32_1x_nopromote sm_90a 'wgmma.mma_async' HGMMA configs/tc32_1x_async.json --size 4096 --set KPROMOTE=0
built tc32_sync_p32 sm_90 'mma.sync.aligned.m16n8k8' 'HMMA.1688.F32.TF32' configs/tc32_sync.json --size 4096 --set KPROMOTE=32

# Third round: the loads by cp.async into raw stages (RAW_STAGES), split from shared memory, and A's
# operand from registers (AREG). Aligned rows copy 16-byte chunks (.cg: LDGSTS in SASS); an odd K or
# N falls back to 4-byte copies (.ca), never a misaligned 16-byte one; the register-staged control
# has no cp.async at all.
built tc32_3x_async sm_90a 'cp.async.cg.shared.global' LDGSTS configs/tc32_3x_async.json --size 4096
built tc32_3x_async_r2 sm_90a 'cp.async.wait_group 1' HGMMA configs/tc32_3x_async.json --size 4096 --set RAW_STAGES=2
built tc32_3x_areg sm_90a 'cp.async.wait_group 2' HGMMA configs/tc32_3x_areg.json --size 4096
# The shipped configs (fifth round) swap the operands' roles (SWAP): every wgmma takes B's fragments
# from registers, raw stages R - 2 k-tiles ahead (tc32_3x 4: wait_group 1; tc32_1x 3: wait_group 0),
# and a k-tile waits only for the one before it (wgmma.wait_group 1). B is never stored transposed:
# the only st.shared are A's elementwise split (16-byte stores).
built_checks
for c in tc32_3x:1 tc32_1x:0; do
  n=${c%%:*} w=${c##*:}
  nr=$(grep -c 'wgmma.mma_async.*}, {%r[0-9]*, %r[0-9]*, %r[0-9]*, %r[0-9]*}, %rd' "$T"/$n/*.ptx)
  na=$(grep -c 'wgmma.mma_async' "$T"/$n/*.ptx)
  ns=$(grep -c 'st.shared.b32\|st.shared.u32\|st.shared.f32' "$T"/$n/*.ptx)
  if grep -q "cp.async.wait_group $w" "$T"/$n/*.ptx && grep -q 'wgmma.wait_group.sync.aligned 1' "$T"/$n/*.ptx &&
    [ "$nr" = "$na" ] && [ "$na" -gt 0 ] && [ "$ns" = 0 ]; then
    pass "shipped $n: SWAP, cp.async.wait_group $w, wgmma.wait_group 1, all $na wgmmas with a register operand, no 4-byte st.shared"
  else fail "shipped $n: SWAP (cp.async.wait_group $w; $nr of $na wgmmas with a register operand; $ns 4-byte st.shared)"; fi
done
built tc32_1x_async sm_90a 'cp.async.wait_group 2' HGMMA configs/tc32_1x_async.json --size 4096
built tc32_1x_areg sm_90a 'cp.async.wait_group 3' HGMMA configs/tc32_1x.json --m 260 --n 196 --k 100 $P1 --set SWAP=0 \
  --set RAW_STAGES=4 --set AREG=1 --set BMAP=2
# SWAP's other forms: 1xTF32 unrounded (ROUND 0: no operand stage, A's raw stage is the operand, so
# no st.shared at all and no cvt), and 3xTF32 at odd shapes (4-byte copies).
built tc32_1x_round0 sm_90a 'wgmma.mma_async' HGMMA configs/tc32_1x.json --size 4096 --set ROUND=0 --set RAW_STAGES=4
built_checks
if ! grep -q 'st.shared' "$T"/tc32_1x_round0/*.ptx && ! grep -q 'cvt.rna' "$T"/tc32_1x_round0/*.ptx; then
  pass "ROUND 0: no st.shared, no cvt"
else fail "ROUND 0: no st.shared, no cvt"; fi
built tc32_3x_swap_odd sm_90a 'cp.async.ca.shared.global' LDGSTS configs/tc32_3x.json --m 127 --n 129 --k 131
built tc32_1x_async_odd sm_90a 'cp.async.ca.shared.global' LDGSTS configs/tc32_1x_async.json --m 127 --n 129 --k 131
built_checks
if grep -q 'cp.async.cg' "$T"/tc32_1x_async_odd/*.ptx; then fail "odd rows: no 16-byte cp.async"; else pass "odd rows: no 16-byte cp.async"; fi
if grep -q 'cp.async' "$T"/tc32_3x_regstage/*.ptx; then fail "RAW_STAGES 0 stages through registers: no cp.async"
else pass "RAW_STAGES 0 stages through registers: no cp.async"; fi
# k-tiles in flight: the prologue's copies of RAW_STAGES k-tiles, then one a k-tile (16-byte chunks:
# 4 of A and 4 of B a thread at 128x128); so 3 raw stages issue 8 more copies than 2.
n2=$(grep -c 'cp.async.cg' "$T"/tc32_3x_async_r2/*.ptx)
n3=$(grep -c 'cp.async.cg' "$T"/tc32_3x_async/*.ptx)
if [ "$n2" = 24 ] && [ "$n3" = 32 ]; then pass "cp.async copies in flight: 2 and 3 raw stages ($n2, $n3 copies in the PTX)"
else fail "cp.async copies in flight: 2 and 3 raw stages (want 24 and 32, got $n2 and $n3)"; fi
# AREG: every wgmma takes A from four registers, and A's shared-memory operand is gone (smaller stage).
nr=$(grep -c 'wgmma.mma_async.*}, {%r[0-9]*, %r[0-9]*, %r[0-9]*, %r[0-9]*}, %rd' "$T"/tc32_3x_areg/*.ptx)
na=$(grep -c 'wgmma.mma_async' "$T"/tc32_3x_areg/*.ptx)
if [ "$nr" = "$na" ] && [ "$na" = 12 ]; then pass "tc32_3x_areg: all 12 wgmmas take A from registers"
else fail "tc32_3x_areg: all 12 wgmmas take A from registers ($nr of $na)"; fi
if grep -q '}, %rd[0-9]*, %rd[0-9]*, p' "$T"/tc32_3x_areg/*.ptx; then fail "tc32_3x_areg: no descriptor-A wgmma"
else pass "tc32_3x_areg: no descriptor-A wgmma"; fi
refused "A from registers needs the raw stages" 'AREG == 0 || RAW_STAGES > 0' configs/tc32_3x_areg.json --arch sm_90a \
  --set RAW_STAGES=0 --set BMAP=0
refused "BMAP 2 only from raw stages" 'BMAP < 2 || RAW_STAGES > 0' configs/tc32_3x_areg.json --arch sm_90a --set RAW_STAGES=0 \
  --set AREG=0
built tc32_3x_areg_odd sm_90a 'cp.async.ca.shared.global' LDGSTS configs/tc32_3x_areg.json --m 127 --n 129 --k 131
# MINB = 2 (fourth round): two blocks an SM, so the PTX asks for them and a thread gets at most 128
# registers (a 128 x 64 tile: 107520 bytes of shared memory, twice within the SM's 228 KiB); the
# default 1 is the bound every config had before.
spawn minb2 "$E" compile configs/tc32_3x_areg.json --arch sm_90a --size 4096 --set BN=64 --set MINB=2 --emit "$T/minb2"
built_checks
reap minb2
if [ "$rc" = 0 ] && grep -q '^\.minnctapersm 2' "$T"/minb2/*.ptx &&
  printf '%s\n' "$out" | awk 'NR == 2 {exit !($6 <= 128 && $11 == 107520)}'; then
  pass "MINB 2: two blocks an SM asked for, <= 128 registers ($(printf '%s\n' "$out" | awk 'NR == 2 {print $6 " registers, " $8 + $9 " bytes spilled"}'))"
else fail "MINB 2: two blocks an SM asked for, <= 128 registers" "$out"; fi
if grep -q '^\.minnctapersm 1' "$T"/tc32_3x_areg/*.ptx; then pass "MINB defaults to one block an SM"
else fail "MINB defaults to one block an SM"; fi
# A spill known and accepted (reported): 1xTF32 at 128x256 (the register-staged path spills there too).
for spec in "tc32_1x_async --size 4096 --set BN=256 --set KPROMOTE=0 --set STAGES=2 --set RAW_STAGES=2"; do
  # shellcheck disable=SC2086
  out=$($E compile configs/${spec%% *}.json --arch sm_90a ${spec#* } 2>&1)
  if [ $? = 0 ]; then pass "compiles: $spec ($(printf '%s\n' "$out" | awk 'NR == 2 {print $6 " registers, " $8 + $9 " bytes spilled"}'))"
  else fail "compiles: $spec" "$out"; fi
done
# The index maps of the raw path and of AREG (copy, raw reads, split stores, the fragment rows and the
# k permutation) enumerated against a product on the CPU: tests/tc32_maps.py mirrors tc32.cu's maps.
if out=$(python3 tests/tc32_maps.py 2>&1); then pass "tc32 index maps: $out"; else fail "tc32 index maps" "$out"; fi

# Promotion: 1xTF32 without it adds nothing outside the tensor cores; with it the chain ends drain
# the wgmmas (a second wait_group 0) and fold the 64 accumulators of a thread into FP32 registers.
a1=$(grep -c 'add.f32' "$T"/tc32_1x_promote/*.ptx)
a0=$(grep -c 'add.f32' "$T"/tc32_1x_nopromote/*.ptx)
w1=$(grep -c 'wgmma.wait_group.sync.aligned 0' "$T"/tc32_1x_promote/*.ptx)
w0=$(grep -c 'wgmma.wait_group.sync.aligned 0' "$T"/tc32_1x_nopromote/*.ptx)
if [ "$a1" -ge $((a0 + 64)) ] && [ "$w1" -gt "$w0" ]; then pass "tc32_1x_async promotes: FP32 adds ($a1 vs $a0), a drain ($w1 vs $w0)"
else fail "tc32_1x_async promotes: FP32 adds ($a1 vs $a0), a drain ($w1 vs $w0)"; fi

# Targets without --arch (this machine has no GPU: sm_90 is guessed): only a template that declares
# "arch_specific" (tc32.cu) is built for sm_90a; every other config stays sm_90, with the same
# CUBIN (a cache hit for --arch sm_90) and the same rerun target.
C="$T/cache"
out=$($E compile configs/tc32_3x.json configs/tc32_sync.json configs/warptile_db.json --size 512 --cache "$C" 2>&1)
if printf '%s
' "$out" | awk '$1 == "tc32_3x" && $3 == "sm_90a" {a = 1} $1 == "tc32_sync" && $3 == "sm_90" {b = 1}
    $1 == "warptile_db" && $3 == "sm_90" {c = 1} END {exit !(a && b && c)}'; then
  pass "without --arch: tc32 for sm_90a, dmma and warptile for sm_90"
else fail "without --arch: tc32 for sm_90a, dmma and warptile for sm_90" "$out"; fi
out=$($E compile configs/tc32_sync.json configs/warptile_db.json --size 512 --arch sm_90 --cache "$C" 2>&1)
if printf '%s
' "$out" | grep -q '0 NVRTC compiles, 2 from the cache'; then
  pass "the portable configs' CUBINs without --arch are those of --arch sm_90 (cache hits)"
else fail "the portable configs' CUBINs without --arch are those of --arch sm_90 (cache hits)" "$out"; fi
out=$($E compile configs/tc32_3x.json --size 512 --arch sm_90a --cache "$C" 2>&1)
if printf '%s
' "$out" | grep -q '0 NVRTC compiles, 1 from the cache'; then
  pass "tc32 without --arch is the CUBIN of --arch sm_90a"
else fail "tc32 without --arch is the CUBIN of --arch sm_90a" "$out"; fi
# "arch_specific" must be a boolean.
mkdir -p "$T/tpl"
sed 's/"arch_specific": true/"arch_specific": "yes"/' tests/templates/needs_sm90a.cu >"$T/tpl/needs_sm90a.cu"
out=$(ENGINE_TEMPLATES="$T/tpl:kernels_src" $E compile tests/configs/gpu/needs_sm90a.json --arch sm_90a 2>&1)
rc=$?
if [ "$rc" = 2 ] && printf '%s
' "$out" | grep -q '"arch_specific" must be true or false'; then
  pass "a non-boolean arch_specific is refused (exit 2)"
else fail "a non-boolean arch_specific is refused (exit 2, got $rc)" "$out"; fi

# 3xTF32 issues three wgmmas per k-step and 1xTF32 one: the PTX of each says so.
n3=$(grep -c 'wgmma.mma_async' "$T"/tc32_3x/*.ptx)
n1=$(grep -c 'wgmma.mma_async' "$T"/tc32_1x/*.ptx)
if [ "$n3" = $((3 * n1)) ] && [ "$n1" -gt 0 ]; then pass "3xTF32 has three times 1xTF32's wgmmas ($n3, $n1)"
else fail "3xTF32 has three times 1xTF32's wgmmas ($n3, $n1)"; fi
# ... and the split: a round-to-nearest cvt (never the truncating .rz of plain TF32 use).
if grep -q 'cvt.rna.tf32.f32' "$T"/tc32_3x/*.ptx && ! grep -q 'cvt.rz.tf32' "$T"/tc32_3x/*.ptx; then
  pass "the split rounds to nearest (cvt.rna)"
else fail "the split rounds to nearest (cvt.rna)"; fi

# Selection: on sm_86 the shipped wisdom keeps SIMT kernels for f32 (no tc32, no dmma); with an
# entry for tc32_3x in a device file, the H100 (sm_90 guessed, no --arch) chooses it at its shape,
# and --arch sm_90 (or sm_86) leaves that entry out, naming the rule, and takes the SIMT entry.
out=$(XDG_DATA_HOME="$T/xdg" $E pick --arch sm_86 --dtype f32 --format jsonl \
  --shapes 4096x4096x4096,127x129x131,1024x1024x8192,8192x8192x8192 2>&1)
if [ "$(printf '%s\n' "$out" | grep -c '"config":')" = 4 ] && ! printf '%s\n' "$out" | grep -q 'tc32\|dmma\|dgemm'; then
  pass "pick --arch sm_86 --dtype f32 keeps SIMT kernels"
else fail "pick --arch sm_86 --dtype f32 keeps SIMT kernels" "$out"; fi
mkdir -p "$T/w"
entries='"entries": [
    {"dtype": "f32", "shape": "4096x4096x4096", "config": "configs/tc32_3x.json", "set": {}, "tflops": 60.5, "vs_cublas": 1.16, "occ": 1, "source": "test"},
    {"dtype": "f32", "shape": "4000x4000x4000", "config": "configs/warptile_db.json", "set": {}, "tflops": 40.0, "vs_cublas": 0.8, "occ": 1, "source": "test"}
  ]'
printf '{"version": 1, "device": "NVIDIA H100 80GB HBM3", "arch": "sm_90",\n  %s\n}\n' "$entries" >"$T/w/h100.json"
H100="NVIDIA H100 80GB HBM3"
out=$(XDG_DATA_HOME="$T/xdg" $E pick --wisdom "$T/w" --device-name "$H100" --shapes 4096x4096x4096 --format jsonl 2>&1)
if printf '%s\n' "$out" | grep -q '"config":"configs/tc32_3x.json".*"exact":true'; then
  pass "an H100 entry for tc32_3x is chosen without --arch"
else fail "an H100 entry for tc32_3x is chosen without --arch" "$out"; fi
for a in sm_90 sm_86; do
  out=$(XDG_DATA_HOME="$T/xdg" $E pick --wisdom "$T/w" --device-name "$H100" --arch $a --shapes 4096x4096x4096 \
    --format jsonl 2>&1)
  if printf '%s\n' "$out" | grep -q '"config":"configs/warptile_db.json"' &&
    printf '%s\n' "$out" | grep -q 'left out: .*only on the architecture-specific target sm_90a'; then
    pass "--arch $a leaves the tc32 entry out, naming the rule"
  else fail "--arch $a leaves the tc32 entry out, naming the rule" "$out"; fi
done

# ... and where no entry is exact, the model weighs the tc32 entry as a candidate (an H100 without
# --arch: loaded for sm_90a) or leaves it out (--arch sm_90: the rule named), at the same shape.
out=$(XDG_DATA_HOME="$T/xdg" $E pick --wisdom "$T/w" --device-name "$H100" --shapes 6000x6000x6000 --format jsonl 2>&1)
if printf '%s\n' "$out" | grep -q '"config":"configs/tc32_3x.json".*"exact":false' &&
  printf '%s\n' "$out" | grep -q '"candidates":\["tc32_3x","warptile_db"\]'; then
  pass "the model weighs the tc32 entry at a shape without one (no --arch)"
else fail "the model weighs the tc32 entry at a shape without one (no --arch)" "$out"; fi
out=$(XDG_DATA_HOME="$T/xdg" $E pick --wisdom "$T/w" --device-name "$H100" --arch sm_90 --shapes 6000x6000x6000 --format jsonl 2>&1)
if printf '%s\n' "$out" | grep -q '"config":"configs/warptile_db.json".*"exact":false' &&
  printf '%s\n' "$out" | grep -q '"candidates":\["warptile_db"\]' &&
  printf '%s\n' "$out" | grep -q 'left out: .*only on the architecture-specific target sm_90a'; then
  pass "--arch sm_90: the model's candidates leave the tc32 entry out, naming the rule"
else fail "--arch sm_90: the model's candidates leave the tc32 entry out, naming the rule" "$out"; fi
# bench --auto, not only pick (a fake worker stands in for the H100): --arch sm_90 runs the SIMT
# entry and says why the tc32 one was left out; --arch sm_90a runs tc32 and its rerun line says so.
mkdir -p "$T/wf"
printf '{"version": 1, "device": "Fake GPU 0", "arch": "sm_90",\n  %s\n}\n' "$entries" >"$T/wf/fake.json"
for a in sm_90:warptile_db sm_90a:tc32_3x; do
  out=$(ENGINE_WORKER=$PWD/tests/fake_worker.py XDG_DATA_HOME="$T/xdg" XDG_CACHE_HOME="$T/cache" $E bench --auto \
    --arch "${a%%:*}" --wisdom "$T/wf" --shapes 4096x4096x4096 --runs 2 --format jsonl 2>&1)
  row=$(printf '%s\n' "$out" | grep '^{' | grep -v '"config":"cublas"')
  if printf '%s\n' "$row" | grep -q "^{\"config\":\"${a#*:}\".*\"status\":\"ok\".*--arch ${a%%:*}\"}$" &&
    { [ "${a#*:}" = tc32_3x ] || printf '%s\n' "$out" | grep -q 'left out: .*only on the architecture-specific target sm_90a'; }; then
    pass "bench --auto --arch ${a%%:*} runs ${a#*:}"
  else fail "bench --auto --arch ${a%%:*} runs ${a#*:}" "$out"; fi
done

# FP32 wisdom stays FP32-accurate at lookup too: a hand-written f32 entry naming the 1xTF32 config
# (class tf32) is left out, naming the class, and the SIMT entry beside it is taken.
mkdir -p "$T/w32"
printf '{"version": 1, "device": "NVIDIA H100 80GB HBM3", "arch": "sm_90",\n  "entries": [\n    %s,\n    %s\n  ]\n}\n' \
  '{"dtype": "f32", "shape": "4096x4096x4096", "config": "configs/tc32_1x.json", "set": {}, "tflops": 190.0, "vs_cublas": 3.6, "occ": 1, "source": "test"}' \
  '{"dtype": "f32", "shape": "4000x4000x4000", "config": "configs/warptile_db.json", "set": {}, "tflops": 40.0, "vs_cublas": 0.8, "occ": 1, "source": "test"}' \
  >"$T/w32/h100.json"
out=$(XDG_DATA_HOME="$T/xdg" $E pick --wisdom "$T/w32" --device-name "$H100" --shapes 4096x4096x4096 --format jsonl 2>&1)
if printf '%s\n' "$out" | grep -q '"config":"configs/warptile_db.json"' &&
  printf '%s\n' "$out" | grep -q 'left out: .*held to accuracy class tf32'; then
  pass "an f32 entry naming a tf32-class config is left out, naming the class"
else fail "an f32 entry naming a tf32-class config is left out, naming the class" "$out"; fi

# A tc32 entry without SWAP takes no transposes (its requires rules): the shipped H100 wisdom's
# batch entries at NN are tc32_3x with SWAP 0 (64 x 512^3 exact for the packed NN batch); the NT, TN
# and TT batches have SWAP 1 entries of their own (exact at 64 x 512^3 NT). At a batch shape with
# no entry (64 x 256^3 NT) the model plans its candidates in the problem's layout, so it
# passes over the SWAP 0 entries nearest to it rather than choose one the run would refuse.
out=$(XDG_DATA_HOME="$T/xdg" $E pick --device-name "$H100" --shapes 512x512x512 --batch 64 --dtype f32 --format jsonl 2>&1)
outnt=$(XDG_DATA_HOME="$T/xdg" $E pick --device-name "$H100" --shapes 512x512x512 --batch 64 --dtype f32 --op NT --format jsonl 2>&1)
if printf '%s\n' "$out" | grep -q '"config":"configs/tc32_3x.json".*"SWAP":0.*"exact":true' &&
  printf '%s\n' "$outnt" | grep -q '"config":"configs/tc32_3x.json".*"exact":true' && ! printf '%s\n' "$outnt" | grep -q '"SWAP":0'; then
  pass "64 x 512^3 takes its exact tc32 entry: SWAP 0 at NN, SWAP 1 at NT"
else fail "64 x 512^3 takes its exact tc32 entries at NN and NT" "$out $outnt"; fi
out=$(XDG_DATA_HOME="$T/xdg" $E pick --device-name "$H100" --shapes 256x256x256 --batch 64 --dtype f32 --op NT --format jsonl 2>&1)
if printf '%s\n' "$out" | grep -q '"config":' && ! printf '%s\n' "$out" | grep -q '"SWAP":0'; then
  pass "at op NT with no entry at its shape, the SWAP 0 batch entries are passed over"
else fail "at op NT with no entry at its shape, the SWAP 0 batch entries are passed over" "$out"; fi
# An exact entry plans in the problem's layout: lda + 8 keeps rows 16-byte aligned (the class of the
# packed entry at 4096^3, a tc32ws_3x one since 2026-11-28, tc32_3x's before), which both tc32
# templates take (leading dimensions as arguments), and op TN goes to a tc32 entry too.
out8=$(XDG_DATA_HOME="$T/xdg" $E pick --device-name "$H100" --shapes 4096x4096x4096 --dtype f32 --lda +8 --format jsonl 2>&1)
outtn=$(XDG_DATA_HOME="$T/xdg" $E pick --device-name "$H100" --shapes 4096x4096x4096 --dtype f32 --op TN --format jsonl 2>&1)
if printf '%s\n' "$out8" | grep -Eq '"config":"configs/tc32(ws)?_3x.json".*"exact":true' &&
  printf '%s\n' "$outtn" | grep -Eq '"config":"configs/tc32(ws)?_3x.json"'; then
  pass "4096^3: the tc32 entry at lda + 8 (same class, rows padded, exact) and at op TN"
else fail "4096^3: the tc32 entry at lda + 8 and at op TN" "$out8 $outtn"; fi

# PACK_LD's GEMM reads pack_ld's copies as it would the user's packed buffers: through packed_at
# (pack_ld.cuh) its PTX is the packed shape's but for the pointer set-up. Given W + offset plainly,
# NVVM folded the offset into every copy's address (tc32_3x: +46 instructions, 21 more cvt.s64, and
# its GEMM 5% slower on the H100; docs/NOTES.md, "The pack's hidden cost").
# gemm_code FILE: the gemm entry's instructions (no directives, labels or debug lines).
gemm_code() { awk '/\.entry gemm/ {on = 1} on && /^\t[a-z@]/ && !/^\t\./ {print}' "$1"; }
for c in "tc32_3x:sm_90a" "dgemm_dmma:sm_90"; do
  cfg=${c%%:*} arch=${c##*:}
  spawn "pk-p-$cfg" "$E" compile "configs/$cfg.json" --arch "$arch" --m 2048 --n 4096 --k 4096 --emit "$T/pk-p-$cfg" --no-cache
  spawn "pk-l-$cfg" "$E" compile "configs/$cfg.json" --arch "$arch" --m 2048 --n 4096 --k 4096 --lda +1 --ldb +1 \
    --emit "$T/pk-l-$cfg" --no-cache
done
for c in "tc32_3x:sm_90a" "dgemm_dmma:sm_90"; do
  cfg=${c%%:*} arch=${c##*:}
  reap "pk-p-$cfg"
  reap "pk-l-$cfg"
  np=$(gemm_code "$T/pk-p-$cfg/$cfg.ptx" | wc -l) nl=$(gemm_code "$T/pk-l-$cfg/$cfg.ptx" | wc -l)
  cp_=$(gemm_code "$T/pk-p-$cfg/$cfg.ptx" | grep -c 'cvt.s64.s32') cl=$(gemm_code "$T/pk-l-$cfg/$cfg.ptx" | grep -c 'cvt.s64.s32')
  if grep -q 'PACKLD_A=1 PACKLD_B=1' "$T/pk-l-$cfg.out" && grep -q '\.entry pack_ld(' "$T/pk-l-$cfg/$cfg.ptx" &&
    [ "$np" -gt 100 ] && [ $((nl - np)) -le 12 ] && [ "$cp_" = "$cl" ]; then
    pass "$cfg at ld + 1 (PACK_LD): pack_ld is in the module, the GEMM's PTX the packed one's but for $((nl - np)) set-up instructions"
  else
    fail "$cfg at ld + 1 (PACK_LD): pack_ld is in the module, the GEMM's PTX the packed one's" \
      "packed $np instructions ($cp_ cvt.s64), PACK_LD $nl ($cl); entries: $(grep -c '\.entry' "$T/pk-l-$cfg/$cfg.ptx")"
  fi
done

# A template whose #if leaves out a kernel its plan launches is refused when it is built (exit 2, the
# kernel named), not at load time on a GPU: templates with pack_ld's definition cut out of pack_ld.cuh.
mkdir -p "$T/nopack"
cp kernels_src/* "$T/nopack/"
python3 - "$T/nopack/pack_ld.cuh" <<'PY'
import sys
s = open(sys.argv[1]).read()
i, j = s.index('extern "C" __global__ void pack_ld'), s.index('#else')
open(sys.argv[1], 'w').write(s[:i] + s[j:])
PY
out=$(ENGINE_TEMPLATES="$T/nopack" $E compile configs/tc32_3x.json --arch sm_90a --m 130 --n 66 --k 72 --lda +1 --no-cache 2>&1)
rc=$?
if [ "$rc" = 2 ] && printf '%s\n' "$out" | grep -q 'launch 1 runs kernel "pack_ld", which the compiled module does not define'; then
  pass "a plan's kernel missing from the module is refused at build time, by name (exit 2)"
else fail "a plan's kernel missing from the module is refused at build time, by name (exit $rc)" "$out"; fi
out=$(ENGINE_TEMPLATES="$T/nopack" $E compile configs/tc32_3x.json --arch sm_90a --m 130 --n 66 --k 72 --no-cache 2>&1)
check_rc "... while a layout that launches no pack_ld still builds" 0 $? "$out"

# The same for a strided batch (BATCH_SELECT, gemm_common.cuh): A and B of product z reach the copies
# through opaque, so the batched GEMM's PTX (2048x2048x512, 16 products) is the single product's
# plus its set-up and C's offset in the epilogue (tc32_3x +81 instructions, dgemm_dmma +24). Folded,
# the copies' addresses cost tc32_3x +155 and dmma +42 (tc32_3x's batches ran 1-3% slower on an H200).
for c in "tc32_3x:sm_90a:96" "dgemm_dmma:sm_90:32"; do
  IFS=: read -r cfg arch allow <<<"$c"
  spawn "bt-1-$cfg" "$E" compile "configs/$cfg.json" --arch "$arch" --m 2048 --n 2048 --k 512 --emit "$T/bt-1-$cfg" --no-cache
  spawn "bt-16-$cfg" "$E" compile "configs/$cfg.json" --arch "$arch" --m 2048 --n 2048 --k 512 --batch 16 \
    --emit "$T/bt-16-$cfg" --no-cache
done
for c in "tc32_3x:sm_90a:96" "dgemm_dmma:sm_90:32"; do
  IFS=: read -r cfg arch allow <<<"$c"
  reap "bt-1-$cfg"
  reap "bt-16-$cfg"
  n1=$(gemm_code "$T/bt-1-$cfg/$cfg.ptx" | wc -l) n16=$(gemm_code "$T/bt-16-$cfg/$cfg.ptx" | wc -l)
  if grep -q 'BATCHED=1' "$T/bt-16-$cfg.out" && [ "$n1" -gt 100 ] && [ $((n16 - n1)) -le "$allow" ]; then
    pass "$cfg, a batch of 16: the GEMM's PTX is one product's plus $((n16 - n1)) instructions (<= $allow)"
  else
    fail "$cfg, a batch of 16: the GEMM's PTX is one product's plus <= $allow instructions" "one product $n1, the batch $n16"
  fi
done

# Split-K in tc32 (SPLITK > 1): each split's k-loop is the loop without split-K (A and B offset to
# the slice, K its length), so the GEMM's PTX has the unsplit kernel's wgmmas and cp.async copies,
# one for one, and atomic adds in place of its stores (mode 0); the plan launches scale_c first
# (mode 0) or reduce after (mode 1); a padded ldc is refused by the declared rule (split-K indexes C
# as packed M x N), before anything compiles.
spawn sk-1 "$E" compile configs/tc32_3x.json --arch sm_90a --m 64 --n 4096 --k 4096 --emit "$T/sk-1" --no-cache
spawn sk-4 "$E" compile configs/tc32_3x.json --arch sm_90a --m 64 --n 4096 --k 4096 --set SPLITK=4 --emit "$T/sk-4" --no-cache
for mode in 0 1 2; do
  spawn "sk-mode$mode" "$E" compile configs/tc32_3x.json --arch sm_90a --m 130 --n 66 --k 1000 --set SPLITK=3 \
    --set SPLITK_MODE=$mode --op TN --no-cache
done
reap sk-1
reap sk-4
count() { gemm_code "$1" | grep -c "$2"; }
w1=$(grep -c wgmma.mma_async "$T/sk-1/tc32_3x.ptx") w4=$(grep -c wgmma.mma_async "$T/sk-4/tc32_3x.ptx") # in gemm only
c1=$(count "$T/sk-1/tc32_3x.ptx" cp.async.cg) c4=$(count "$T/sk-4/tc32_3x.ptx" cp.async.cg)
a4=$(count "$T/sk-4/tc32_3x.ptx" 'atom.global.add.f32\|red.global.add.f32') s4=$(count "$T/sk-4/tc32_3x.ptx" st.global)
if [ "$w1" -gt 0 ] && [ "$w4" = "$w1" ] && [ "$c1" -gt 0 ] && [ "$c4" = "$c1" ] && [ "$a4" -gt 0 ] && [ "$s4" = 0 ] &&
  grep -q '\.entry scale_c' "$T/sk-4/tc32_3x.ptx"; then
  pass "tc32_3x SPLITK 4: the unsplit k-loop ($w4 wgmmas, $c4 cp.async), atomic adds for stores, scale_c in the module"
else
  fail "tc32_3x SPLITK 4: the unsplit k-loop, atomic adds for stores, scale_c in the module" \
    "wgmma $w1/$w4, cp.async $c1/$c4, atomics $a4, stores $s4"
fi
for mode in 0 1 2; do
  reap "sk-mode$mode"
  if [ $rc = 0 ] && printf '%s\n' "$out" | grep -E '^tc32_3x' | awk '{exit !($8 == 0 && $9 == 0)}'; then
    pass "tc32_3x SPLITK 3, mode $mode, op TN compiles without spills"
  else fail "tc32_3x SPLITK 3, mode $mode, op TN compiles without spills (exit $rc)" "$out"; fi
done
out=$($E compile configs/tc32_3x.json --arch sm_90a --m 130 --n 66 --k 1000 --set SPLITK=2 --ldc +1 --no-cache 2>&1)
rc=$?
if [ $rc = 2 ] && printf '%s\n' "$out" | grep -q 'LDC == N || SPLITK == 1'; then
  pass "tc32_3x split-K with a padded ldc is refused by its rule (exit 2)"
else fail "tc32_3x split-K with a padded ldc is refused by its rule (exit $rc)" "$out"; fi

# The accuracy class: the 1-pass config declares tf32, the 3-pass ones their dtype's own (f32).
for c in tc32_1x:tf32 tc32_3x:f32 tc32_sync:f32 tc32_1x_async:tf32 tc32_3x_async:f32 tc32_3x_areg:f32; do
  cfg=${c%%:*} want=${c##*:}
  got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("accuracy", "f32"))' "configs/$cfg.json")
  if [ "$got" = "$want" ]; then pass "$cfg is held to class $want"; else fail "$cfg is held to class $want (says $got)"; fi
done
built_checks # none should be left, but a build queued at the end would be checked here
summary
