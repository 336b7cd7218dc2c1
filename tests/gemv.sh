#!/usr/bin/env bash
# gemv.cu without a GPU: which loop each op takes (LDOT) and on which side the vectors lie (VM), the
# vector loads the alignment allows and their fallback, column groups past NV, split-K's launches,
# every dtype from one config without spills (bf16, f16: 16-byte loads of 8 halves, FP32 sums, split-K
# only through the FP32 workspace), and the refusals of its constraints (exit 2, the rule named). The
# GPU tests (tests/gpu/tiles.sh, sections gemv and gemv-half) verify the results.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
E=${BUILD:-build}/engine
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
C=configs/gemv.json

# switches NAME EXPECTED ARGS...: compiles, without spills, and the switches include EXPECTED
switches() {
  local name=$1 want=$2
  shift 2
  out=$($E compile "$C" "$@" 2>&1)
  rc=$?
  row=$(printf '%s\n' "$out" | grep '^gemv')
  spill=$(printf '%s\n' "$row" | awk '{print $8 + $9}')
  if [ "$rc" = 0 ] && [ -n "$row" ] && [ "$spill" = 0 ] && printf '%s\n' "$row" | grep -q -- "$want"; then
    pass "$name"
  else fail "$name (exit $rc, spills ${spill:-?})" "$out"; fi
}
echo "== the loops and the sides, every op, both dtypes"
for dt in f32 f64; do
  switches "$dt NN, N = 1: dot loop over A's rows" "VM=0 NJ=1 LDOT=1" --dtype $dt --m 8192 --n 1 --k 512
  switches "$dt TN, N = 1: A stored K x M, rows loop" "VM=0 NJ=1 LDOT=0" --dtype $dt --op TN --m 8192 --n 1 --k 512
  switches "$dt NN, M = 1: B's rows loop" "VM=1 NJ=1 LDOT=0" --dtype $dt --m 1 --n 8192 --k 512
  switches "$dt NT, M = 1: B stored N x K, dot loop" "VM=1 NJ=1 LDOT=1" --dtype $dt --op NT --m 1 --n 8192 --k 512
  switches "$dt TT, M = 3: dot loop over B^T" "VM=1 NJ=3 LDOT=1" --dtype $dt --op TT --m 3 --n 1000 --k 999
  switches "$dt NN, N = 4 <= NV" "VM=0 NJ=4 LDOT=1" --dtype $dt --m 1000 --n 4 --k 1000
  switches "$dt NN, neither side small: groups of NV vectors along the narrower side" "VM=1 NJ=4 LDOT=0" --dtype $dt --m 100 --n 900 --k 77
  switches "$dt split-K mode 2 in one launch" "SK=8 SPLIT_SERIAL=1" --dtype $dt --m 8 --n 1 --k 65536 --set SPLITK=8 --set SPLITK_MODE=2
  switches "$dt SPLITK 0: 64 splits where one block holds every row and K is long" "SK=64 SPLIT_SERIAL=1" --dtype $dt --m 1 --n 100 --k 65536
  switches "$dt SPLITK 0: no split where the rows fill the GPU" "SK=1 SPLIT_SERIAL=0" --dtype $dt --m 65536 --n 1 --k 4096
  switches "$dt SPLITK 0: no split of a K under 4 x SPLIT_DEPTH (511: 512 deep)" "SD=512 SK=1 SPLIT_SERIAL=0" --dtype $dt --m 1 --n 128 --k 511
  switches "$dt SPLITK 0: splits SPLIT_DEPTH deep from K = 4 x SPLIT_DEPTH (1023 in 4)" "SD=128 SK=4 SPLIT_SERIAL=1" --dtype $dt --m 1 --n 128 --k 1023
  switches "$dt SPLITK 0: SPLIT_DEPTH 512 (K = 1023 whole)" "SK=1 SPLIT_SERIAL=0" --dtype $dt --m 1 --n 128 --k 1023 --set SPLIT_DEPTH=512
  switches "$dt SPLITK 0: two groups of vectors split 512 deep (K = 16381 in 16)" "SD=512 SK=16" --dtype $dt --m 7 --n 128 --k 16381
  switches "$dt SPLITK 0: a grid past SPLIT_BLOCKS / 8 blocks splits 512 deep (128 blocks, K = 512 whole)" "SD=512 SK=1" --dtype $dt --m 8192 --n 1 --k 512 --set THREADS=512 --set LANES=8 --set ROWS=1 --set KW=1
  switches "$dt SPLITK 0: none where the rows fill a quarter of SPLIT_BLOCKS" "SK=1 SPLIT_SERIAL=0" --dtype $dt --m 1 --n 8192 --k 65536 --set SPLIT_BLOCKS=16
  switches "$dt SPLITK 0: no split at a padded ldc (scale_c and W index C packed)" "SK=1" --dtype $dt --m 1 --n 100 --k 65536 --ldc +1
  switches "$dt SPLITK 0: none in a batch (grid z)" "SK=1" --dtype $dt --m 1 --n 100 --k 65536 --batch 2
  switches "$dt strided batch" "BATCHED=1" --dtype $dt --batch 3 --m 1 --n 500 --k 300
done
switches "f32 SPLITK 0: SPLIT_WHOLE 1 splits a grid under SPLIT_BLOCKS (64 blocks of 256 in 4)" "SK=4" --m 1 --n 8192 --k 65536 --set SPLIT_BLOCKS=256 --set SPLIT_WHOLE=1
switches "f32 SPLITK 0: SPLIT_WHOLE 4 keeps 64 blocks of 256 whole" "SK=1" --m 1 --n 8192 --k 65536 --set SPLIT_BLOCKS=256
switches "f32 VEC 4: 16-byte loads of A's rows where lda allows" "EVEC_L=4" --m 8192 --n 1 --k 512
switches "f64 VEC 4 is two doubles" "EVEC_L=2" --dtype f64 --m 8192 --n 1 --k 512
switches "lda + 1: A's rows one element at a time" "EVEC_L=1" --m 8192 --n 1 --k 512 --lda +1
switches "lda + 2: two elements at a time" "EVEC_L=2" --m 8192 --n 1 --k 512 --lda +2
switches "one packed vector read as vectors along K" "VK1=1 VEC_V=1" --m 8192 --n 1 --k 512
switches "N = 2 row-major B: V not contiguous along K, read element by element" "VK1=0 VEC_V=0" --m 8192 --n 2 --k 512

echo "== bf16 and f16: the loops, 8 halves a load where the rows allow, split-K only through W (switch SKMODE 1)"
for dt in bf16 f16; do
  switches "$dt NT, N = 1, the shipped VEC 8: rows of A 16 bytes a load" "VM=0 NJ=1 LDOT=1 EVEC_L=8 VK1=1 VEC_V=1" --dtype $dt --op NT --m 4096 --n 1 --k 4096
  switches "$dt NT, N = 1, VEC 4: 8 bytes" "EVEC_L=4" --dtype $dt --op NT --m 4096 --n 1 --k 4096 --set VEC=4
  switches "$dt NN, lda + 4: 4 halves a load" "EVEC_L=4" --dtype $dt --m 4096 --n 1 --k 4096 --set VEC=8 --lda +4
  switches "$dt NN, lda + 2: 2 halves a load" "EVEC_L=2" --dtype $dt --m 4096 --n 1 --k 4096 --set VEC=8 --lda +2
  switches "$dt NT, odd K: one half a load" "EVEC_L=1" --dtype $dt --op NT --m 2304 --n 1 --k 8189 --set VEC=8
  switches "$dt TN, N = 3: rows loop, 8 rows a load" "VM=0 NJ=3 LDOT=0 EVEC_L=8" --dtype $dt --op TN --m 2544 --n 3 --k 1923 --set VEC=8
  switches "$dt TT, M = 5: dot loop over B^T" "VM=1 NJ=4 LDOT=1" --dtype $dt --op TT --m 5 --n 1000 --k 999 --set VEC=8
  switches "$dt NN, M = 1: B's rows loop, KW 32" "VM=1 NJ=1 LDOT=0" --dtype $dt --m 1 --n 8192 --k 512 --set VEC=8 --set KW=32
  switches "$dt SPLITK 0 under SPLITK_MODE 2: 64 splits through W (SKMODE 1), not in one launch" "SK=64 SPLIT_SERIAL=0 SKMODE=1" --dtype $dt --m 1 --n 100 --k 65536
  switches "$dt SPLITK 4 SPLITK_MODE 1" "SK=4 SPLIT_SERIAL=0 SKMODE=1" --dtype $dt --m 128 --n 1 --k 8195 --set SPLITK=4 --set SPLITK_MODE=1
  switches "$dt strided batch, NV 16" "NJ=16 .*BATCHED=1" --dtype $dt --batch 3 --m 1000 --n 16 --k 301 --set NV=16 --set UNROLL=1 --set KW=1
done
rep_f32="$($E compile "$C" --m 1 --n 100 --k 65536 2>&1 | grep '^gemv')"
printf '%s\n' "$rep_f32" | grep -q "SK=64 SPLIT_SERIAL=1 SKMODE=2" && pass "f32 keeps SPLITK_MODE 2 (SKMODE 2, one launch)" ||
  fail "f32 keeps SPLITK_MODE 2" "$rep_f32"
echo "== bf16, f16 compile without spills: sm_86 and sm_90, every op, N or M of 1, 3, 16, odd K, padded lda, a batch"
for arch in sm_86 sm_90; do
  for dt in bf16 f16; do
    for op in NN NT TN TT; do
      bad=
      for shape in "--m 4096 --n 1 --k 4096" "--m 2304 --n 3 --k 8189" "--m 1000 --n 16 --k 999" "--m 1 --n 4096 --k 4095" \
        "--m 5 --n 2545 --k 1923" "--m 16 --n 1000 --k 1000" "--m 3000 --n 2 --k 1000 --lda +4 --ldb +3" "--m 7 --n 3001 --k 17 --batch 3"; do
        for set in "--set VEC=8" ""; do
          # shellcheck disable=SC2086
          out=$($E compile "$C" --arch $arch --dtype $dt --op $op $shape $set 2>&1)
          row=$(printf '%s\n' "$out" | grep '^gemv')
          spill=$(printf '%s\n' "$row" | awk '{print $7 + $8 + $9}')
          [ -n "$row" ] && [ "$spill" = 0 ] || bad="$bad [$shape $set: ${spill:-refused}]"
        done
      done
      [ -z "$bad" ] && pass "$arch $dt $op: 16 shapes and VECs, no stack or spills" || fail "$arch $dt $op:$bad"
    done
  done
done

echo "== the PTX: 16-byte loads where the rows allow, none where they do not"
ptx() { # DIR ARGS...: the pasted kernel's PTX in DIR
  local d=$1
  shift
  mkdir -p "$d"
  $E compile "$C" --emit "$d" "$@" >/dev/null 2>&1 && cat "$d"/gemv.ptx
}
v4=$(ptx "$T/a" --m 8192 --n 1 --k 512 | grep -c 'ld\.global[.a-z]*\.v4\.f32')
[ "$v4" -gt 0 ] && pass "packed NN, N = 1: A's rows and x by ld.global.v4 ($v4)" || fail "packed NN loads 16 bytes" "$v4 v4 loads"
v4=$(ptx "$T/b" --m 8192 --n 1 --k 512 --lda +1 --ldb +1 | grep -c 'ld\.global[.a-z]*\.v4\.f32')
[ "$v4" = 0 ] && pass "lda + 1: no 16-byte load" || fail "lda + 1: no 16-byte load" "$v4 v4 loads"
p=$(ptx "$T/c" --m 1 --n 8192 --k 512)
if printf '%s\n' "$p" | grep -q 'ld\.global[.a-z]*\.v4\.f32' && printf '%s\n' "$p" | grep -q 'st\.shared\.f32' &&
  printf '%s\n' "$p" | grep -q 'bar\.sync'; then pass "packed NN, M = 1: B's rows by 16-byte loads, the KW groups' sums through shared memory"
else fail "packed NN, M = 1: 16-byte loads and a shared-memory reduction" "$(printf '%s\n' "$p" | grep -c ld.global)"; fi
n=$(ptx "$T/d" --m 1 --n 8192 --k 512 --set KW=1 | grep -c 'st\.shared')
[ "$n" = 0 ] && pass "KW 1: no shared memory" || fail "KW 1: no shared memory" "$n shared stores"
n=$(ptx "$T/e" --m 8192 --n 1 --k 512 --set SPLITK=4 | grep -c 'atom\.global\.add\.f32\|red\.global\.add\.f32')
[ "$n" -gt 0 ] && pass "split-K adds with atomics ($n)" || fail "split-K adds with atomics"
p=$(ptx "$T/h1" --dtype bf16 --op NT --m 4096 --n 1 --k 4096 --set VEC=8)
if printf '%s\n' "$p" | grep -q 'ld\.global\.nc\.v4\.u32' && printf '%s\n' "$p" | grep -q 'fma\.rn\.f32' &&
  printf '%s\n' "$p" | grep -q 'cvt\.rn\.bf16x2\.f32' && printf '%s\n' "$p" | grep -q 'st\.global\.u16'; then
  pass "bf16 NT, VEC 8: 16-byte loads, FP32 FMAs, C rounded by cvt.rn.bf16x2 and stored as 2 bytes"
else fail "bf16 NT, VEC 8: 16-byte loads, FP32 FMAs, cvt.rn.bf16x2" "$(printf '%s\n' "$p" | grep -c ld.global)"; fi
p=$(ptx "$T/h2" --dtype f16 --op TN --m 1000 --n 3 --k 999)
printf '%s\n' "$p" | grep -q 'cvt\.f32\.f16' && printf '%s\n' "$p" | grep -q 'cvt\.rn\.f16x2\.f32' && printf '%s\n' "$p" | grep -q 'st\.shared\.f32' &&
  pass "f16 TN: widened by cvt.f32.f16, the KW groups' sums in FP32 shared memory, rounded once" || fail "f16 TN: cvt.f32.f16, FP32 sums" ""
p=$(ptx "$T/h3" --dtype bf16 --m 128 --n 1 --k 8195 --set SPLITK=8 --set SPLITK_MODE=1)
if ! printf '%s\n' "$p" | grep -q 'atom\.\|red\.global' && printf '%s\n' "$p" | grep -q '^\.visible \.entry reduce' &&
  ! printf '%s\n' "$p" | grep -q '^\.visible \.entry scale_c' && printf '%s\n' "$p" | grep -q 'st\.global\.f32'; then
  pass "bf16 split-K: FP32 partials to W, reduce rounds once; no atomics, no scale_c"
else fail "bf16 split-K: FP32 partials through W, no atomics" "$(printf '%s\n' "$p" | grep -E '^\.visible|atom|red\.global')"; fi

echo "== refusals"
refused() { # NAME PATTERN ARGS...: exit 2 and the rule named
  local name=$1 pat=$2
  shift 2
  out=$($E compile "$C" "$@" 2>&1)
  rc=$?
  if [ "$rc" = 2 ] && printf '%s\n' "$out" | grep -q -- "$pat"; then pass "$name"; else fail "$name (exit $rc)" "$out"; fi
}
refused "THREADS not whole warps" 'THREADS % 32 == 0' --set THREADS=48 --set KW=1
refused "too many loads in flight for the registers" 'UNROLL \* (cdiv(min(VEC \* ELEM, 16), 4) \* ROWS + min(VEC, 16 / ELEM) \* max(1, ELEM / 4) \* NV) <= 160' --set UNROLL=8 --set ROWS=4
refused "the KW groups' sums past 48 KB of shared memory" 'KW == 1 || THREADS \* min(VEC, 16 / ELEM) \* NV \* max(ELEM, 4) <= 49152' \
  --set THREADS=1024 --set NV=4
refused "bf16: split-K in mode 2 (atomics would round C at every add)" 'ELEM != 2 || SPLITK <= 1 || SPLITK_MODE == 1.*a rounding at every add' \
  --dtype bf16 --m 128 --n 1 --k 8195 --set SPLITK=4 --set SPLITK_MODE=2
refused "f16: split-K in mode 0" 'ELEM != 2 || SPLITK <= 1 || SPLITK_MODE == 1' --dtype f16 --m 128 --n 1 --k 8195 --set SPLITK=4 --set SPLITK_MODE=0
refused "bf16 on sm_75" 'ELEM != 2 || ARCH >= 80' --dtype bf16 --arch sm_75 --m 128 --n 1 --k 8195
refused "bf16: the vectors' elements one register each" 'UNROLL \* (cdiv(min(VEC \* ELEM, 16), 4) \* ROWS' --dtype bf16 --set VEC=8 --set NV=8
refused "split-K with a padded ldc" 'LDC == N || SPLITK <= 1' --m 1 --n 512 --k 4096 --set SPLITK=4 --ldc +1
refused "split-K with a batch" 'BATCH == 1 || SPLITK <= 1' --m 1 --n 512 --k 4096 --set SPLITK=4 --batch 2

echo "== the shipped wisdom runs it at thin FP32 products in NT and TN"
# The H100's NT and TN points (wisdom/*.dev-seeds.json) are all --auto weighs in those ops; until
# they held gemv's rows, a decode step x * W^T at M = 1 (op NT) ran a tiled kernel (RESULTS, session 11).
picks() { # OP SHAPES: the labels engine pick chooses, one a line
  XDG_DATA_HOME="$T/none" $E pick --arch sm_90 --sms 132 --dtype f32 --op "$1" --device-name "NVIDIA H100 80GB HBM3" \
    --shapes "$2" --format jsonl 2>/dev/null | python3 -c 'import json, sys; [print(json.loads(l)["label"]) for l in sys.stdin if l.startswith("{")]'
}
out=$(picks NT 1x4096x4096,1x1024x8192,2x3000x5000)
[ "$(printf '%s\n' "$out" | grep -c '^gemv')" = 3 ] && pass "NT at 1x4096x4096, 1x1024x8192, 2x3000x5000: gemv" ||
  fail "NT at 1x4096x4096, 1x1024x8192, 2x3000x5000: gemv" "$out"
out=$(picks TN 4096x1x4096,1x4096x4096,5000x3x3000)
[ "$(printf '%s\n' "$out" | grep -c '^gemv')" = 3 ] && pass "TN at 4096x1x4096, 1x4096x4096, 5000x3x3000: gemv" ||
  fail "TN at 4096x1x4096, 1x4096x4096, 5000x3x3000: gemv" "$out"

summary
