#!/usr/bin/env bash
# The command line on a machine without a GPU: help texts, exit codes of commands that need a GPU,
# lists and per-entry overrides, --emit, and `make install` into a scratch prefix (the installed tree checked file
# by file, and used without the source tree).
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
E=${BUILD:-build}/engine
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for cmd in bench verify compile tune merge cache info pick warm; do
  $E $cmd --help >"$tmp/help" 2>&1
  check_rc "engine $cmd --help" 0 $?
  grep -q -- '--help' "$tmp/help" && pass "engine $cmd --help lists its flags" || fail "engine $cmd --help lists its flags"
done
grep -q -- '--warmup W .*default 3' <($E bench --help) && pass "bench --help gives defaults" || fail "bench --help gives defaults"
$E >/dev/null 2>&1
check_rc "engine with no command exits 2" 2 $?
# verify --format: table or jsonl; jsonl keeps stdout to rows (none here without a GPU) and the
# summary on stderr.
$E verify --format csv configs/naive.json >"$tmp/out" 2>&1
[ $? = 2 ] && [ "$(cat "$tmp/out")" = "engine: --format csv: expected table or jsonl" ] &&
  pass "verify --format csv: exit 2, one line" || fail "verify --format csv" "$(cat "$tmp/out")"
$E verify --format jsonl configs/naive.json --shapes 17x33x5 >"$tmp/out" 2>"$tmp/err"
! grep -qv '^{"config":' "$tmp/out" && grep -q '^verify: [0-9]* passed, [0-9]* failed, [0-9]* errors$' "$tmp/err" &&
  pass "verify --format jsonl: stdout only rows, the summary on stderr" || fail "verify --format jsonl" "$(cat "$tmp/out" "$tmp/err")"
# Through the fake worker (tests/fake_worker.py): a row a config, shape and beta, each with the
# worker's figures and where the time went (t_setup, t_compile, t_verify, t_call: numbers).
ENGINE_WORKER=$PWD/tests/fake_worker.py $E verify --format jsonl configs/naive.json --shapes 17x33x5 --arch sm_90 \
  >"$tmp/out" 2>"$tmp/err"
python3 - "$tmp/out" <<'PY' && pass "verify --format jsonl rows (fake worker): 2, each with the error figures and t_setup, t_compile, t_verify, t_call" ||
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["beta"] for r in rows] == [0.0, -0.5] and all(r["status"] == "ok" for r in rows), rows
for r in rows:
    for k in ("max_ratio", "err_max_u", "ref_err_mean_u", "t_setup", "t_compile", "t_verify", "t_call"):
        assert isinstance(r[k], (int, float)) and r[k] >= 0, (k, r)
PY
  fail "verify --format jsonl rows (fake worker)" "$(cat "$tmp/out" "$tmp/err")"
# A set-up that stalls (no "started" within worker_setup_allowance_s, here ENGINE_SETUP_TIMEOUT=1)
# is tried once more on a new worker, and its row says so; one that stalls again is a timeout row.
ENGINE_SETUP_TIMEOUT=1 FAKE_STALL=$tmp/stalled ENGINE_WORKER=$PWD/tests/fake_worker.py $E verify --format jsonl \
  configs/naive.json --shapes 17x33x5 --arch sm_90 >"$tmp/out" 2>"$tmp/err"
rc=$?
python3 - "$tmp/out" <<'PY' && [ $rc = 0 ] && grep -q "set-up made no progress in 1 s.*trying the request once more" "$tmp/err" &&
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["status"] for r in rows] == ["ok", "ok"], rows
assert "made no progress in 1 s" in rows[0]["setup_retried"] and rows[1]["setup_retried"] is None, rows
PY
  pass "a stalled set-up: killed after ENGINE_SETUP_TIMEOUT, retried once on a new worker, its row says so" ||
  fail "a stalled set-up retried" "rc $rc: $(cat "$tmp/out" "$tmp/err")"
ENGINE_SETUP_TIMEOUT=1 FAKE_STALL=always ENGINE_WORKER=$PWD/tests/fake_worker.py $E verify --format jsonl \
  configs/naive.json --shapes 17x33x5 --arch sm_90 >"$tmp/out" 2>"$tmp/err"
rc=$?
python3 - "$tmp/out" <<'PY' && [ $rc = 3 ] &&
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["status"] for r in rows] == ["timeout", "timeout"], rows
PY
  pass "a set-up that stalls twice: each row a timeout, exit 3, the sweep goes on" ||
  fail "a set-up that stalls twice" "rc $rc: $(cat "$tmp/out" "$tmp/err")"

if $E info >/dev/null 2>&1; then
  echo "  (a GPU is present: the no-GPU checks below are skipped)"
else
  $E info >"$tmp/out" 2>&1
  check_rc "engine info without a GPU exits 3" 3 $?
  grep -q 'no CUDA driver' "$tmp/out" && pass "the missing driver is named" || fail "the missing driver is named" "$(cat "$tmp/out")"
  $E __worker --device 0 --cache "$tmp/wc" </dev/null >"$tmp/out" 2>&1
  check_rc "a worker without a GPU exits 3" 3 $?
  grep -q '^{"op":"hello","code":3,"error":"engine: no CUDA driver' "$tmp/out" && pass "...after a hello that says why (one JSON line)" ||
    fail "the worker's hello without a GPU" "$(cat "$tmp/out")"
  $E bench configs/naive.json --size 64 >"$tmp/out" 2>&1
  check_rc "bench of a valid config without a GPU exits 3" 3 $?
  [ "$(grep -c . "$tmp/out")" -le 2 ] && pass "...with a short message" || fail "...with a short message" "$(cat "$tmp/out")"
fi

for v in abc 0 -5 12x; do
  ENGINE_SETUP_TIMEOUT=$v $E verify configs/naive.json --shapes 8x8x8 >/dev/null 2>"$tmp/out"
  rc=$?
  [ $rc = 2 ] && [ "$(cat "$tmp/out")" = "engine: ENGINE_SETUP_TIMEOUT=$v: must be seconds, a number > 0" ] &&
    pass "ENGINE_SETUP_TIMEOUT=$v: exit 2, one line" || fail "ENGINE_SETUP_TIMEOUT=$v (exit $rc)" "$(cat "$tmp/out")"
done
# ENGINE_CUBLAS_MATH (lab/blas.h): a value other than default or pedantic is bad input, refused in
# one line on stderr before the GPU is looked for (exit 2 with or without one); bench, verify, tune.
for cmd in "bench configs/naive.json --size 64" "verify configs/naive.json --shapes 8x8x8" "tune tune/warptile.json --shapes 64x64x64"; do
  ENGINE_CUBLAS_MATH=fast $E $cmd >/dev/null 2>"$tmp/out"
  rc=$?
  [ "$rc" = 2 ] && [ "$(grep -c . "$tmp/out")" = 1 ] &&
    grep -qx 'engine: ENGINE_CUBLAS_MATH=fast: must be default (.*) or pedantic (strict FP32/FP64)' "$tmp/out" &&
    pass "ENGINE_CUBLAS_MATH=fast: engine ${cmd%% *} exits 2, one line" ||
    fail "ENGINE_CUBLAS_MATH=fast: engine ${cmd%% *} exits 2, one line" "exit $rc: $(cat "$tmp/out")"
done

# Layout options: each bad value gets one line naming the option (or field) and the rule, exit 2,
# and nothing is compiled or run.
bad_layout() { # NAME EXPECTED-LINE ARGS...
  local name=$1 want=$2
  shift 2
  $E "$@" >"$tmp/out" 2>&1
  local rc=$?
  if [ $rc = 2 ] && [ "$(cat "$tmp/out")" = "$want" ]; then pass "$name: exit 2, one line"; else fail "$name (exit $rc)" "$(head -3 "$tmp/out")"; fi
}
bad_layout "--op XY" "engine: --op XY: expected NN, NT, TN or TT (op(A) then op(B); T: transposed)" \
  bench --op XY configs/naive.json
bad_layout "--op nt (lower case)" "engine: --op nt: expected NN, NT, TN or TT (op(A) then op(B); T: transposed)" \
  verify --op nt configs/naive.json
bad_layout "--lda below the row length" "engine: shape 8x8x8: lda: 7 is below the row length of A (M x K, op N) as stored (8): rows would overlap" \
  bench --m 8 --n 8 --k 8 --lda 7 configs/naive.json
bad_layout "--lda below the row length of A^T" "engine: shape 8x6x9: lda: 7 is below the row length of A (K x M, op T) as stored (8): rows would overlap" \
  bench --m 8 --n 6 --k 9 --op TN --lda 7 configs/naive.json
bad_layout "--ldb below the row length of B^T" "engine: shape 4x6x9: ldb: 8 is below the row length of B (N x K, op T) as stored (9): rows would overlap" \
  compile --m 4 --n 6 --k 9 --op NT --ldb 8 configs/naive.json
bad_layout "--ldc at one shape of a list" "engine: shape 33x40x5: ldc: 33 is below the row length of C (M x N) as stored (40): rows would overlap" \
  verify --shapes 17x33x5,33x40x5 --ldc 33 configs/naive.json
bad_layout "--ldc 0" "engine: --ldc 0: expected a leading dimension from 1 to 2^31-1, or +P (packed plus P elements)" \
  bench --ldc 0 configs/naive.json
bad_layout "--lda absurd" "engine: --lda 99999999999: expected a leading dimension from 1 to 2^31-1, or +P (packed plus P elements)" \
  bench --lda 99999999999 configs/naive.json
bad_layout "--ldb +-1" "engine: --ldb +-1: expected a leading dimension from 1 to 2^31-1, or +P (packed plus P elements)" \
  bench --ldb +-1 configs/naive.json
bad_layout "--batch 0" "engine: --batch 0: expected a whole number from 1 to 65535" bench --batch 0 configs/naive.json
bad_layout "--batch 70000" "engine: --batch 70000: expected a whole number from 1 to 65535" tune --batch 70000 configs/naive.json
bad_layout "--stride-a -1" "engine: --stride-a -1: expected a whole number of elements from 0 to 2^46" \
  bench --batch 2 --stride-a -1 configs/naive.json
bad_layout "--stride-c overlapping products" "engine: shape 4x4x4: stride-c: 10 is below the span of one C ((M-1)*ldc + N = 16): products would write over each other" \
  bench --size 4 --batch 2 --stride-c 10 configs/naive.json
bad_layout "--auto-tune with a batch's own strides" "engine: --auto-tune: wisdom entries record the op, the batch and the alignment class, not a batch's own strides; give no --stride-* (or no --auto-tune)" \
  bench --auto --auto-tune --op NT --batch 2 --ldc +4 --stride-c 5000000
bad_layout "tune --wisdom with a batch's own strides" "engine: --wisdom: wisdom entries record the op, the batch and the alignment class, not a batch's own strides; give no --stride-* (or no --wisdom)" \
  tune --batch 4 --stride-a 0 --wisdom /tmp configs/naive.json
bad_layout "pick: --lda below the row length" "engine: shape 64x64x64: lda: 63 is below the row length of A (M x K, op N) as stored (64): rows would overlap" \
  pick --shapes 64x64x64 --lda 63
# engine pick answers first: its choice per shape and why, then a line of totals; the candidates and
# the entries left out (at sm_90 the shipped tc32 entries, which need sm_90a) only with --verbose,
# else the entries left out are counted by reason, on stderr, after the answer.
pick_args=(pick --arch sm_90 --shapes 512x512x128,128x128x64)
$E "${pick_args[@]}" >"$tmp/pick.out" 2>"$tmp/pick.err"
check_rc "engine pick" 0 $? "$(cat "$tmp/pick.err")"
$E "${pick_args[@]}" --verbose >"$tmp/pickv.out" 2>"$tmp/pickv.err"
check_rc "engine pick --verbose" 0 $? "$(cat "$tmp/pickv.err")"
python3 - "$tmp/pick.out" "$tmp/pick.err" "$tmp/pickv.out" "$tmp/pickv.err" <<'PY' 2>"$tmp/py.err" &&
import re, sys
out, err, vout, verr = (open(f).read().splitlines() for f in sys.argv[1:])
shapes = ["512x512x128", "128x128x64"]
# The answer first: the header, then each shape's choice, its weighing and the chosen line.
assert out[0].startswith("pick: ") and out[1] == "", out[:3]
heads = [i for i, l in enumerate(out) if re.match(r"^\d+x\d+x\d+: ", l)]
assert [out[i].split(":")[0] for i in heads] == shapes and heads[0] == 2, heads
assert sum(l.startswith("  chosen: ") for l in out) == len(shapes), out
assert not any(l.startswith("  entry ") for l in out), "candidates listed without --verbose"
assert out[-2].startswith("pick: 2 shapes in ") and "--verbose" in out[-1], out[-2:]
# The entries left out: each on its own line with --verbose, else counted by reason, a few lines.
each = [l for l in verr if "this wisdom entry is left out: " in l]
counted = [re.match(r"^engine: (\d+) wisdom entr(?:y|ies) left out: (.+) \(--verbose lists (?:it|them)\)$", l) for l in err]
assert each and all(counted) and 1 <= len(counted) <= 4, err
assert sum(int(m.group(1)) for m in counted) == len(each), (len(each), err)
assert {m.group(2) for m in counted} == {l.split("this wisdom entry is left out: ", 1)[1] for l in each}, err
# --verbose: the same answer, then every candidate that loaded; with those left out, the header's count.
vheads = [i for i, l in enumerate(vout) if re.match(r"^\d+x\d+x\d+: ", l)]
entries = [i for i, l in enumerate(vout) if l.startswith("  entry ")]
n = int(re.search(r"; (\d+) candidates \(loaded in", vout[0]).group(1))
assert [vout[i] for i in vheads] == [out[i] for i in heads], (vheads, heads)
assert entries and min(entries) > max(vheads) and len(entries) + len(each) == n, (len(entries), len(each), n)
PY
  pass "pick: the answer first, candidates and each entry left out only with --verbose (else counted by reason)" ||
  fail "pick: the answer first, candidates and each entry left out only with --verbose" "$(tail -1 "$tmp/py.err")"
$E "${pick_args[@]}" --format jsonl >"$tmp/pick.out" 2>/dev/null
[ "$(grep -c '^{"shape":' "$tmp/pick.out")" = 2 ] && [ "$(wc -l <"$tmp/pick.out")" = 2 ] &&
  pass "pick --format jsonl: one line per shape on stdout, nothing else" || fail "pick --format jsonl: one line per shape" "$(cat "$tmp/pick.out")"
# engine pick with leading dimensions: the alignment class they leave (ld + 1: A's rows 8 bytes
# apart in f64) is the problem's; the shipped wisdom holds packed entries only, so none is exact there.
# (f64: its DMMA entries take every layout; the f32 tensor-core entries take packed rows only,
# tests/tc32.sh.)
$E pick --arch sm_90 --device-name "NVIDIA H100 80GB HBM3" --dtype f64 --shapes 4096x4096x4096 --lda +1 --format jsonl >"$tmp/out" 2>&1
grep -q '"shape":"4096x4096x4096",.*"exact":false,.*"align":\[1,2,2\],"entry_align":\[2,2,2\]' "$tmp/out" &&
  pass "pick --lda +1: class 1,2,2, the packed entry weighed, not exact" || fail "pick --lda +1" "$(cat "$tmp/out")"
$E pick --arch sm_90 --device-name "NVIDIA H100 80GB HBM3" --dtype f64 --shapes 4096x4096x4096 --lda +8 --format jsonl >"$tmp/out" 2>&1
grep -q '"exact":true,.*"align":\[2,2,2\],"entry_align":\[2,2,2\]' "$tmp/out" &&
  pass "pick --lda +8: rows still 16-byte aligned, the packed entry exact" || fail "pick --lda +8" "$(cat "$tmp/out")"
# Tile variants: 64 tokens through wisdom's 128-row tc32 tile runs it with BM halved (pick.h
# PICK_TILE_GAIN), said in "variant"; ENGINE_TILE_VARIANTS=0 keeps wisdom's config; 2048^3 pads no tile.
$E pick --arch sm_90a --device-name "NVIDIA H100 80GB HBM3" --op NT --shapes 64x4096x14336,2048x2048x2048 --format jsonl >"$tmp/out" 2>/dev/null
ENGINE_TILE_VARIANTS=0 $E pick --arch sm_90a --device-name "NVIDIA H100 80GB HBM3" --op NT --shapes 64x4096x14336 --format jsonl >"$tmp/out0" 2>/dev/null
grep -q '"shape":"64x4096x14336".*"variant":"BM=64"' "$tmp/out" && grep -q '"shape":"2048x2048x2048".*"variant":null' "$tmp/out" &&
  grep -q '"shape":"64x4096x14336".*"variant":null' "$tmp/out0" &&
  pass "pick: a padded tile's side halved (64 tokens, BM 128 -> 64), not at 2048^3, not with ENGINE_TILE_VARIANTS=0" ||
  fail "pick: a padded tile's side halved" "$(cat "$tmp/out" "$tmp/out0")"
# engine pick at a batch: weighed at the batch's products where wisdom has no entry of that batch
# (the shipped H100 wisdom holds 128^3 at batch 512, not at 384), exact where it has one.
$E pick --arch sm_90 --device-name "NVIDIA H100 80GB HBM3" --dtype f64 --shapes 128x128x128 --batch 384 --format jsonl >"$tmp/out" 2>&1
check_rc "pick --batch 384" 0 $? "$(cat "$tmp/out")"
grep -q '"shape":"128x128x128","batch":384,.*"exact":false' "$tmp/out" && pass "...weighed at the batch" || fail "...weighed at the batch" "$(cat "$tmp/out")"
$E pick --arch sm_90 --device-name "NVIDIA H100 80GB HBM3" --dtype f64 --shapes 128x128x128 --batch 512 --format jsonl >"$tmp/out" 2>&1
grep -q '"shape":"128x128x128","batch":512,.*"exact":true,.*"entry_batch":512' "$tmp/out" && pass "...exact at the batch wisdom holds" || fail "...exact at the batch wisdom holds" "$(cat "$tmp/out")"
# The layout reaches the plan: naive and the tile templates compile with its switches; split-K refuses a padded C.
$E compile configs/naive.json --m 17 --n 33 --k 5 --op TN --lda +1 --batch 3 --arch sm_90 --no-cache >"$tmp/out" 2>&1
check_rc "compile naive --op TN --lda +1 --batch 3" 0 $? "$(cat "$tmp/out")"
grep -q 'OP_TA=1 OP_TB=0 LDP=0 BATCHED=1' "$tmp/out" && pass "...with the layout's switches" || fail "...with the layout's switches" "$(cat "$tmp/out")"
$E compile configs/warptile_db.json --m 17 --n 33 --k 5 --op NT --ldb +1 --arch sm_90 --no-cache >"$tmp/out" 2>&1
check_rc "compile warptile_db --op NT --ldb +1" 0 $? "$(cat "$tmp/out")"
grep -q 'EVEC_B=1 .*OP_TA=0 OP_TB=1 LDP=0' "$tmp/out" && pass "...with the layout's switches" || fail "...with the layout's switches" "$(cat "$tmp/out")"
$E compile configs/warptile_splitk.json --m 17 --n 33 --k 5 --op NT --ldc +1 --arch sm_90 --no-cache >"$tmp/out" 2>&1
check_rc "compile warptile_splitk --ldc +1 is refused" 2 $?
grep -q 'shape 17x33x5 op NT lda=5 ldb=5 ldc=34 is refused: template warptile requires LDC == N || (SPLITK == 1 && STREAMK == 0) (' "$tmp/out" &&
  pass "...by its declared rule" || fail "...by its declared rule" "$(cat "$tmp/out")"
# ODD_LD's copies (tile_pipeline.cuh's ODD_ROWS path) mirrored on the CPU: in bounds, no partial 16-byte
# copy, each element once (tests/odd_chunks.py); the mirror of the code before the fix must fail; and the
# path compiles at a partial tile (N 129) with ld + 1 in every op.
if out=$(python3 tests/odd_chunks.py 2>&1); then pass "ODD_LD copies: $out"; else fail "ODD_LD copies" "$out"; fi
out=$(python3 tests/odd_chunks.py --old 2>&1)
[ $? = 1 ] && grep -q 'copy reads elements .* allocation' <<<"$out" && pass "...its mirror of the old row end reads past B" ||
  fail "...its mirror of the old row end reads past B" "$out"
for op in NN TT; do
  $E compile configs/dgemm_dmma.json --m 127 --n 129 --k 131 --op $op --lda +1 --ldb +1 --ldc +1 --set ODD_LD=1 \
    --set MINB_ODD=3 --arch sm_90 --no-cache >"$tmp/out" 2>&1
  check_rc "compile dgemm_dmma ODD_LD op $op at 127x129x131, ld + 1" 0 $? "$(cat "$tmp/out")"
  grep -q 'ODD_ROWS=1' "$tmp/out" && pass "...with ODD_ROWS 1" || fail "...with ODD_ROWS 1" "$(cat "$tmp/out")"
done

# ROWCOPY's copies dealt by rows (tile_pipeline.cuh's async_rows) mirrored on the CPU
# (tests/row_deal.py), its wrong mirror failing; and the default's rule (ROWCOPY 4): B's rows in f64
# at TN on tiles of BM >= 128 only, as measured (ROW_DEAL 2), none at NN, in f32, or on 64-row tiles.
if out=$(python3 tests/row_deal.py 2>&1); then pass "ROWCOPY copies: $out"; else fail "ROWCOPY copies" "$out"; fi
out=$(python3 tests/row_deal.py --old 2>&1)
[ $? = 1 ] && grep -q 'outside the tile\|not exactly once' <<<"$out" && pass "...its wrong mirror fails" ||
  fail "...its wrong mirror fails" "$out"
for case in "TN:f64:BM=128 --set WM=64:2" "NN:f64:BM=128 --set WM=64:0" "TT:f64:BM=128 --set WM=64:0" "TN:f64:BM=64:0" \
  "TN:f32:BM=128 --set WM=64:0" "TN:f64:BM=128 --set WM=64 --set ROWCOPY=3:3"; do
  IFS=: read -r op dt set want <<<"$case"
  # shellcheck disable=SC2086
  $E compile configs/dgemm_dmma.json --dtype $dt --set $set --op $op --size 256 --arch sm_90 \
    --no-cache >"$tmp/out" 2>&1
  grep -q "ROW_DEAL=$want " "$tmp/out" && pass "dgemm_dmma $dt op $op $set: ROW_DEAL $want" ||
    fail "dgemm_dmma $dt op $op $set: ROW_DEAL $want" "$(cat "$tmp/out")"
done
# emit CONFIG DTYPE MxNxK DIR [ARGS...]: CONFIG compiled for sm_90 at that shape (no cache), its .cu,
# .ptx and .cubin in $tmp/DIR (emptied first), the command's output in $tmp/out.
emit() {
  local c=$1 dt=$2 dir=$tmp/$4 m n k
  IFS=x read -r m n k <<<"$3"
  shift 4
  rm -rf "$dir"
  $E compile "configs/$c.json" --dtype "$dt" --m "$m" --n "$n" --k "$k" "$@" --arch sm_90 --no-cache --emit "$dir" \
    >"$tmp/out" 2>&1
}
# PREFETCH_C's default (2): C asked of L2 before the K loop where K < 256 and C is over 40 MiB, as
# measured (an LU update's beta-1 C that does not stay in L2); not where C fits (1984^2 f64, 2896^2
# f32), at K 256, under split-K, or with 0; 1 everywhere else; a batch counts its whole C; the
# prefetch is in the PTX only where the switch is on.
for case in "4032x4032x64:f64::1" "1984x1984x64:f64::0" "4032x4032x256:f64::0" "4032x4032x255:f64::1" \
  "2896x2896x64:f32::0" "4096x4096x64:f32::1" "1000x1000x64:f64:--batch 8:1" "4032x4032x64:f64:--set SPLITK=2:0" \
  "4032x4032x64:f64:--set PREFETCH_C=0:0" "64x64x4096:f64:--set PREFETCH_C=1:1"; do
  IFS=: read -r shape dt extra want <<<"$case"
  # shellcheck disable=SC2086
  emit dgemm_dmma $dt $shape pfc $extra
  pf=$(grep -c 'prefetch.global.L2' "$tmp/pfc/dgemm_dmma.ptx" 2>/dev/null)
  ok=0
  [ "$want" = 1 ] && [ "${pf:-0}" -gt 0 ] && ok=1
  [ "$want" = 0 ] && [ "${pf:-0}" = 0 ] && ok=1
  if [ $ok = 1 ] && grep -q "PFC=$want\b" "$tmp/out"; then
    pass "dgemm_dmma $dt $shape $extra: PFC $want, $pf prefetches in the PTX"
  else
    fail "dgemm_dmma $dt $shape $extra: PFC $want" "$pf prefetches; $(tail -2 "$tmp/out")"
  fi
done
# C_STAGE's default (2): C's tile staged through shared memory where C's rows are not 16-byte
# aligned (odd N, odd ldc), K is at most 1024 and C holds 2 MiB or more, in f64 and f32; not at a
# packed even N, a small C, a long K, under split-K, or with 0; 1 everywhere else. Staged, the PTX stores C's elements one at a time (st.global.f64)
# after shared-memory writes; not staged, in pairs where the rows are aligned (st.global.v2).
for case in "1027x999x131:f64::1" "1024x1024x131:f64::0" "1024x1024x131:f64:--ldc +1:1" "1027x999x131:f32::1" \
  "128x705x128:f64::0" "4095x4097x2048:f64::0" "1027x999x131:f64:--set SPLITK=2:0" "1027x999x131:f64:--set C_STAGE=0:0" \
  "1024x1024x131:f64:--set C_STAGE=1:1"; do
  IFS=: read -r shape dt extra want <<<"$case"
  # shellcheck disable=SC2086
  emit dgemm_dmma $dt $shape cs $extra
  p="$tmp/cs/dgemm_dmma.ptx"
  ok=0
  [ "$want" = 1 ] && grep -q 'st.shared[.v24]*.f\(64\|32\)' "$p" && ! grep -q 'st.global.v2' "$p" && ok=1
  [ "$want" = 0 ] && [ -s "$p" ] && ! grep -q 'st.shared[.v24]*.f\(64\|32\)' "$p" && ok=1
  [ "$shape$extra" = 1024x1024x131 ] && ! grep -q 'st.global.v2' "$p" && ok=0
  if [ $ok = 1 ] && grep -q "CSTAGE=$want\b" "$tmp/out"; then
    pass "dgemm_dmma $dt $shape $extra: CSTAGE $want"
  else
    fail "dgemm_dmma $dt $shape $extra: CSTAGE $want" "$(grep -c 'st.shared' "$p" 2>/dev/null) shared stores; $(tail -2 "$tmp/out")"
  fi
done
# C's reads (beta != 0) in flight together: the PTX's longest run of loads of C (ld.global.f32/f64,
# .v2, .v4; A and B come by ld.global.nc or cp.async) with no store between. The staged epilogue
# (store_staged) reads a chunk, 16 here; one read at a time (warptile's first form: runs of 1) took
# 1.6-3.4x as long at beta 1 and K 4-128. warptile's unstaged epilogue reads a thread's row before
# storing it (put_c): 16 elements at an odd N, 4 vectors of 4 (f32) or 2 (f64) at an even one;
# dmma's still reads each pair (each element at an odd N) before its store. Predicated loads count.
for case in "warptile_db:f32:1027x999x131::16" "dgemm_simt:f64:1027x999x131::16" "dgemm_dmma:f64:1027x999x131::16" \
  "dgemm_dmma:f32:1027x999x131::16" "warptile_db:f32:1027x999x131:--set C_STAGE=0:16" \
  "warptile_db:f32:1024x1024x131::4" "dgemm_simt:f64:1024x1024x131::4" "dgemm_dmma:f64:1027x999x131:--set C_STAGE=0:1"; do
  IFS=: read -r c dt shape extra want <<<"$case"
  # shellcheck disable=SC2086
  emit $c $dt $shape cr $extra
  run=$(awk -v t="$dt" '$0 ~ "(^|[ \t])ld\\.global\\.(v[24]\\.)?" t "[ \t]" { r++; if (r > m) m = r }
    /st\.global/ { r = 0 } END { print m + 0 }' "$tmp/cr/$c.ptx" 2>/dev/null)
  [ "${run:-none}" = "$want" ] && pass "$c $dt $shape${extra:+ $extra}: C's reads in runs of $want" ||
    fail "$c $dt $shape${extra:+ $extra}: C's reads in runs of $want" "runs of ${run:-none}; $(tail -2 "$tmp/out")"
done
# K = 0 (C = beta * C, done by the engine) still plans every config's launches: a launch sized by K
# (warptile's pack_b) must not make the shape an error. N = 9 asks for the pack where it is enabled.
# sm_90a: the target every shipped config compiles for (tc32's wgmma needs it).
$E compile configs/*.json --m 17 --n 9 --k 0 --arch sm_90a --no-cache >"$tmp/out" 2>&1
check_rc "every shipped config plans at 17x9x0" 0 $? "$(grep -v '^ *[a-z0-9_]* *[a-z]* *sm_90' "$tmp/out" | head -5)"
$E compile configs/warptile_db.json configs/dgemm_simt.json --m 17 --n 9 --k 8 --arch sm_90 --no-cache >"$tmp/out" 2>&1
[ "$(grep -c 'PACKB=1' "$tmp/out")" = 2 ] && pass "...and at 17x9x8 warptile_db and dgemm_simt pack B (PACKB=1)" ||
  fail "warptile_db and dgemm_simt pack B at 17x9x8" "$(cat "$tmp/out")"
$E compile configs/warptile_db.json configs/dgemm_simt.json --m 17 --n 9 --k 0 --arch sm_90 --no-cache >"$tmp/out" 2>&1
[ "$(grep -c 'PACKB=0' "$tmp/out")" = 2 ] && pass "...but not at 17x9x0 (PACKB=0)" || fail "no pack at K = 0" "$(cat "$tmp/out")"

$E compile configs/ldg_wider2.json --arch sm_86 --emit "$tmp/emit" >/dev/null 2>&1
check_rc "compile --emit" 0 $?
for ext in cu ptx cubin; do
  [ -s "$tmp/emit/ldg_wider2.$ext" ] && pass "--emit wrote ldg_wider2.$ext" || fail "--emit wrote ldg_wider2.$ext"
done
grep -q '^#define BM 256$' "$tmp/emit/ldg_wider2.cu" && pass "pasted source carries the params" || fail "pasted source carries the params"
grep -q '\.target sm_86' "$tmp/emit/ldg_wider2.ptx" && pass "PTX is for sm_86" || fail "PTX is for sm_86"

printf 'configs/tiled.json BK=16\nconfigs/tiled.json\n# a comment\n' >"$tmp/sweep.list"
sed -i "s#configs/#$PWD/configs/#" "$tmp/sweep.list"
$E compile @"$tmp/sweep.list" --arch sm_90 >"$tmp/out" 2>&1
check_rc "compile @LIST with per-entry overrides" 0 $?
grep -q '^tiled\[BK=16\] ' "$tmp/out" && grep -q '^tiled ' "$tmp/out" && pass "list rows carry their overrides" || fail "list rows carry their overrides" "$(cat "$tmp/out")"
$E compile ldg_wider2 --arch sm_90 >"$tmp/out" 2>&1
check_rc "a shipped config by name" 0 $?
# A list line names a config as the command line does: a file next to the list first, else a
# shipped config's name, with overrides or without, wherever the list lies.
mkdir "$tmp/lists"
printf 'tiled BK=16\nldg_wider2\n' >"$tmp/lists/shipped.list"
$E compile @"$tmp/lists/shipped.list" --arch sm_90 >"$tmp/out" 2>&1
check_rc "compile @LIST of shipped names, one with overrides" 0 $? "$(cat "$tmp/out")"
grep -q '^tiled\[BK=16\] ' "$tmp/out" && grep -q '^ldg_wider2 ' "$tmp/out" && pass "...each line is the shipped config" ||
  fail "...each line is the shipped config" "$(cat "$tmp/out")"
e_abs=$(realpath "$E")
(cd "$tmp/lists" && "$e_abs" compile @shipped.list --arch sm_90) >"$tmp/out" 2>&1
check_rc "...and from the list's own directory" 0 $? "$(cat "$tmp/out")"
cp configs/naive.json "$tmp/lists/tiled.json"
printf 'tiled.json\ntiled.json BX=32\n' >"$tmp/lists/local.list"
$E compile @"$tmp/lists/local.list" --arch sm_90 >"$tmp/out" 2>&1
check_rc "compile @LIST of names with a file of that name beside the list" 0 $? "$(cat "$tmp/out")"
[ "$(grep -c '^naive' "$tmp/out")" = 2 ] && pass "...the file beside the list wins over the shipped config" ||
  fail "...the file beside the list wins over the shipped config" "$(cat "$tmp/out")"
# An @LIST line's error names the list's file and line (where to fix it), not --set: a malformed
# override, a parameter the template lacks, a value that breaks a rule, a config that is not there.
list_error() { # NAME LINES EXPECTED_START EXPECTED_PART...: one error line, exit 2
  printf "$2" >"$tmp/lists/bad.list"
  $E compile @"$tmp/lists/bad.list" --arch sm_90 >/dev/null 2>"$tmp/err"
  local rc=$? got name=$1 start=$3 ok=1 part
  got=$(grep -v '^compile: ' "$tmp/err")
  shift 3
  [ "$rc" = 2 ] && [ "$(printf '%s\n' "$got" | wc -l)" = 1 ] && [[ "$got" == "$start"* ]] || ok=0
  for part in "$@"; do [[ "$got" == *"$part"* ]] || ok=0; done
  [ $ok = 1 ] && pass "$name" || fail "$name" "exit $rc; want one line '$start...', with: $*; got: $got"
}
list_error "an @LIST line's malformed override names FILE:LINE" 'tiled\ntiled FOO\n' \
  "$tmp/lists/bad.list:2: " '"FOO" must look like KEY=VALUE'
list_error "an @LIST line's unknown parameter names FILE:LINE" 'tiled\n# a comment\ntiled BK=16 NOPE=3\n' \
  "$tmp/lists/bad.list:3: " 'tiled.json (NOPE=3): template ' 'has no parameter "NOPE"'
list_error "an @LIST line's value that breaks a rule names FILE:LINE" 'tiled TM=3\n' \
  "$tmp/lists/bad.list:1: " 'tiled.json (TM=3): ' 'params.TM = 3 does not divide'
list_error "an @LIST line's missing config names FILE:LINE" 'tiled\nno_such_config\n' \
  "$tmp/lists/bad.list:2: " 'no_such_config: cannot read config'
$E compile tiled --set FOO --arch sm_90 >/dev/null 2>"$tmp/err"
[ "$(cat "$tmp/err")" = '--set: "FOO" must look like KEY=VALUE, e.g. BM=128' ] &&
  pass "...the command line's --set is still named --set" || fail "the command line's --set is named --set" "$(cat "$tmp/err")"

# make help prints the Makefile's opening comment (the targets, one a line), and each target it
# names is one the Makefile has. (Its own make: under make test's -j the jobserver warns on stderr.)
MAKEFLAGS= MAKELEVEL= make -s help >"$tmp/help" 2>"$tmp/help.err"
check_rc "make help" 0 $? "$(head -3 "$tmp/help.err")"
sed -n '/^[^#]/q; s/^# \{0,1\}//p' Makefile | cmp -s - "$tmp/help" && grep -q '^  make help ' "$tmp/help" &&
  pass "...prints the Makefile's opening comment, make help among its lines" ||
  fail "...prints the Makefile's opening comment" "$(diff <(sed -n '/^[^#]/q; s/^# \{0,1\}//p' Makefile) "$tmp/help" | head -5)"
missing=
for t in $(sed -n 's/^  make \([a-z-]*\).*/\1/p' "$tmp/help"); do grep -q "^$t:" Makefile || missing="$missing $t"; done
[ -n "$(sed -n 's/^  make \([a-z-]*\).*/\1/p' "$tmp/help")" ] && [ -z "$missing" ] &&
  pass "...and every target it names is a rule of the Makefile" || fail "every target make help names is a rule" "missing:$missing"
make -s install B="${BUILD:-build}" PREFIX="$tmp/prefix" >/dev/null 2>&1
check_rc "make install PREFIX=..." 0 $?
# The installed tree, file by file, as a user relies on it (an install line dropped from the Makefile,
# or a path that still points into the source tree, fails here rather than at the user's build).
P=$tmp/prefix
out=$(env -u ENGINE_TEMPLATES -u ENGINE_WISDOM "$P/bin/engine" --help 2>&1)
rc=$?
[ "$rc" = 0 ] && printf '%s\n' "$out" | grep -q '^usage: engine <command>' && pass "installed: bin/engine runs (--help)" ||
  fail "installed: bin/engine runs (--help, exit $rc)" "$(printf '%s\n' "$out" | head -3)"
cmp -s include/engine.h "$P/include/engine.h" && pass "installed: include/engine.h, the repository's header" ||
  fail "installed: include/engine.h, the repository's header" "$(ls -l "$P/include" 2>&1)"
# The library's entry points: each ENGINE_API function of the header defined in the .so and the .a.
api=$(sed -n 's/^ENGINE_API [^(]*[ *]\(engine_[a-z_0-9]*\)(.*/\1/p' include/engine.h | sort -u)
so=$(nm -D --defined-only "$P/lib/libengine.so" 2>/dev/null | awk '$2 == "T" {print $3}' | sort -u)
ar=$(nm --defined-only "$P/lib/libengine.a" 2>/dev/null | awk '$2 == "T" {print $3}' | sort -u)
missing_so=$(comm -23 <(printf '%s\n' "$api") <(printf '%s\n' "$so") | tr '\n' ' ')
missing_ar=$(comm -23 <(printf '%s\n' "$api") <(printf '%s\n' "$ar") | tr '\n' ' ')
n_api=$(printf '%s\n' "$api" | grep -c .)
[ "$n_api" -gt 0 ] && [ -z "$missing_so" ] && pass "installed: lib/libengine.so defines the header's $n_api entry points" ||
  fail "installed: lib/libengine.so defines the header's $n_api entry points" "missing: $missing_so"
[ "$n_api" -gt 0 ] && [ -z "$missing_ar" ] && pass "installed: lib/libengine.a defines them too" ||
  fail "installed: lib/libengine.a defines the header's $n_api entry points" "missing: $missing_ar"
pc=$P/lib/pkgconfig/engine.pc
grep -qx "prefix=$P" "$pc" 2>/dev/null && ! grep -q '@[A-Z_]*@' "$pc" && pass "installed: engine.pc with the prefix substituted" ||
  fail "installed: engine.pc with the prefix substituted" "$(cat "$pc" 2>&1)"
if command -v pkg-config >/dev/null; then
  out=$(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --cflags --libs engine 2>&1)
  [[ " $out " == *" -I$P/include "* && " $out " == *" -L$P/lib "* && " $out " == *" -lengine "* ]] &&
    pass "installed: pkg-config engine points into the prefix ($out)" || fail "installed: pkg-config engine points into the prefix" "$out"
else
  skip "installed: pkg-config engine points into the prefix" "no pkg-config"
fi
# share/engine: every file the source tree ships of each kind.
for d in "kernels_src:*.cu *.cuh" "configs:*.json *.list" "tune:*.json" "wisdom:*.json"; do
  dir=${d%%:*} want=0 got=0
  for g in ${d#*:}; do
    want=$((want + $(find "$dir" -maxdepth 1 -name "$g" | wc -l)))
    got=$((got + $(find "$P/share/engine/$dir" -maxdepth 1 -name "$g" 2>/dev/null | wc -l)))
  done
  [ "$want" -gt 0 ] && [ "$got" = "$want" ] && pass "installed: share/engine/$dir holds its $want files" ||
    fail "installed: share/engine/$dir holds its $want files ($got there)"
done
# Without the source tree: templates are looked for beside the installed binary only (a config naming
# no template lists where it looked: only the prefix), and a shipped config compiles there for sm_90.
printf '{"name": "lost", "template": "no_such_template", "dtype": "f32", "params": {}}\n' >"$tmp/lost.json"
out=$(cd "$tmp" && env -u ENGINE_TEMPLATES -u ENGINE_WISDOM "$P/bin/engine" compile "$tmp/lost.json" --arch sm_90 --no-cache 2>&1)
searched=$(printf '%s\n' "$out" | sed -n 's/.*not found (searched: \(.*\))$/\1/p')
[ "$searched" = "$P/share/engine/kernels_src" ] && pass "installed: templates are looked for in the prefix alone ($searched)" ||
  fail "installed: templates are looked for in the prefix alone" "$out"
out=$(cd "$tmp" && env -u ENGINE_TEMPLATES -u ENGINE_WISDOM "$P/bin/engine" compile warptile_db --arch sm_90 --no-cache 2>&1)
rc=$?
[ "$rc" = 0 ] && printf '%s\n' "$out" | grep -q '^warptile_db .* sm_90 ' && pass "installed: engine compile warptile_db --arch sm_90 from the prefix" ||
  fail "installed: engine compile warptile_db --arch sm_90 from the prefix (exit $rc)" "$out"
(cd "$tmp" && "$tmp/prefix/bin/engine" compile ldg_wider2 --arch sm_86 >"$tmp/out" 2>&1)
check_rc "the installed engine finds its templates and configs from another directory" 0 $?
(cd "$tmp" && "$tmp/prefix/bin/engine" tune warptile --arch sm_90 --dry-run >"$tmp/out" 2>&1)
check_rc "...and its shipped tuning spaces (engine tune warptile)" 0 $? "$(cat "$tmp/out")"
# examples/sgemm.c builds as its top comment says, a user's way: the comment's own line, run in a
# folder of its own against the installed tree, with CUDA and PKG_CONFIG_PATH set as the comment asks,
# and CUDA nowhere but where CUDA says: cc runs with a root of the system's /usr/include, /usr/lib and
# /lib (links) and CUDA's folder, not /usr/local, where some machines (this one) link CUDA's headers
# and libraries, so a line that forgets CUDA's -I or -L fails here as on a user's machine.
ex_line=$(sed -n 's/^ \*   \(cc sgemm\.c .*\)$/\1/p' examples/sgemm.c)
cuda=${CUDA_HOME:-/usr/local/cuda}
if [ -z "$ex_line" ]; then
  fail "examples/sgemm.c's top comment has a build line (' *   cc sgemm.c ...')"
elif ! command -v pkg-config >/dev/null || [ ! -f "$cuda/include/cublas_v2.h" ]; then
  skip "examples/sgemm.c builds by its comment's line" "no pkg-config or no cuBLAS headers in $cuda"
else
  root="$tmp/root"
  mkdir -p "$root/usr" "$root$(dirname "$cuda")" "$tmp/ex" "$tmp/bin"
  for d in /lib /lib64 /usr/include /usr/lib /usr/lib64; do [ -e "$d" ] && ln -s "$d" "$root$d"; done
  ln -s "$cuda" "$root$cuda"
  printf '#!/bin/sh\nexec %s --sysroot=%s "$@"\n' "$(command -v cc)" "$root" >"$tmp/bin/cc" && chmod +x "$tmp/bin/cc"
  cp examples/sgemm.c "$tmp/ex/"
  (cd "$tmp/ex" && env -u LIBRARY_PATH -u CPATH -u C_INCLUDE_PATH PATH="$tmp/bin:$PATH" CUDA="$cuda" \
    PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" bash -c "$ex_line") >"$tmp/out" 2>&1
  check_rc "examples/sgemm.c builds by its comment's line against the installed tree: $ex_line" 0 $? "$(cat "$tmp/out")"
  readelf -d "$tmp/ex/a.out" 2>/dev/null | grep -q 'NEEDED.*\[libengine\.so\.[0-9][0-9]*\]' &&
    readelf -d "$tmp/ex/a.out" | grep -q "R.*PATH.*$tmp/prefix/lib" &&
    pass "...linked to the installed libengine.so, found by its run path" ||
    fail "...linked to the installed libengine.so, found by its run path" "$(readelf -d "$tmp/ex/a.out" 2>&1 | grep -E 'NEEDED|PATH')"
fi
# pkg-config on the installed tree: the plain form links libengine.so, --static libengine.a (with the
# libraries the archive needs after it, and no libengine.so), each program runs and reads the version.
if command -v pkg-config >/dev/null; then
  printf '#include <engine.h>\n#include <stdio.h>\nint main(void) { printf("%%d\\n", engine_version()); return 0; }\n' >"$tmp/ex/ver.c"
  want=$(sed -n 's/^#define ENGINE_VERSION_MAJOR \([0-9]*\)$/\1/p; s/^#define ENGINE_VERSION_MINOR \([0-9]*\)$/\1/p' include/engine.h |
    paste -sd' ' | awk '{print $1 * 1000 + $2}')
  # A library built under make sanitize carries ASan's and UBSan's calls: the program links their
  # runtimes too (as the sanitizer build's own programs do), first, or it cannot load or link it.
  san=; nm -D "${BUILD:-build}/libengine.so" 2>/dev/null | grep -q ' __asan_init' && san="-fsanitize=address,undefined"
  for form in shared static; do
    flag=; [ $form = static ] && flag=--static
    (cd "$tmp/ex" && PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" \
      bash -c "cc $san ver.c \$(pkg-config $flag --cflags --libs engine) -o ver-$form && ./ver-$form") >"$tmp/out" 2>&1
    rc=$?
    needed=$(readelf -d "$tmp/ex/ver-$form" 2>/dev/null | grep -c 'NEEDED.*\[libengine\.so\.[0-9][0-9]*\]')
    defined=$(nm "$tmp/ex/ver-$form" 2>/dev/null | grep -c ' T engine_version$')
    if [ $form = shared ]; then ok=$([ "$needed" = 1 ] && [ "$defined" = 0 ] && echo 1); else ok=$([ "$needed" = 0 ] && [ "$defined" = 1 ] && echo 1); fi
    lib=libengine.$([ $form = static ] && echo a || echo so)
    [ "$rc" = 0 ] && [ "$(cat "$tmp/out")" = "$want" ] && [ "$ok" = 1 ] &&
      pass "cc \$(pkg-config ${flag:+$flag }--cflags --libs engine) links $lib, not the other; the program runs (version $want)" ||
      fail "cc \$(pkg-config ${flag:+$flag }--cflags --libs engine) links $lib, not the other; the program runs" \
        "exit $rc, printed $(cat "$tmp/out"), NEEDED libengine.so $needed, engine_version defined $defined; flags: $(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config $flag --libs engine)"
  done
else
  skip "pkg-config --static links libengine.a" "no pkg-config"
fi
# ENGINE_PTXAS_OPTIONS (extra ptxas options, for experiments): the CUBIN cache keys on them, so the
# same config with and without them compiles twice and then comes from the cache; a bad option is
# ptxas's error, exit 2.
pc="$tmp/ptxas-cache"
ENGINE_PTXAS_OPTIONS=--register-usage-level=10 $E compile --cache "$pc" configs/naive.json >"$tmp/px1" 2>&1
$E compile --cache "$pc" configs/naive.json >"$tmp/px2" 2>&1
ENGINE_PTXAS_OPTIONS=--register-usage-level=10 $E compile --cache "$pc" configs/naive.json >"$tmp/px3" 2>&1
grep -q '1 NVRTC compiles, 0 from the cache' "$tmp/px2" && grep -q '0 NVRTC compiles, 1 from the cache' "$tmp/px3" &&
  pass "ENGINE_PTXAS_OPTIONS is part of the cache key" || fail "ENGINE_PTXAS_OPTIONS is part of the cache key" "$(tail -1 "$tmp/px2" "$tmp/px3")"
ENGINE_PTXAS_OPTIONS=--no-such-option $E compile --no-cache configs/naive.json >"$tmp/px4" 2>&1
check_rc "a bad ENGINE_PTXAS_OPTIONS exits 2" 2 $?
grep -q "Unknown option '-no-such-option'" "$tmp/px4" && pass "... and ptxas names the option" || fail "... and ptxas names the option" "$(head -3 "$tmp/px4")"

# engine warm: every wisdom entry of the target compiled into the cache (sm_86's level: a few entries),
# then found there; a wisdom directory that does not load is named, exit 2.
wc="$tmp/warm-cache"
$E warm --arch sm_86 --jobs 2 --cache "$wc" >"$tmp/w1" 2>&1
rc1=$?
$E warm --arch sm_86 --jobs 2 --cache "$wc" >"$tmp/w2" 2>&1
rc2=$?
n1=$(sed -n 's/^warm: \([0-9]*\) kernels in .*: \([0-9]*\) compiled, \([0-9]*\) already cached, 0 failed$/\1 \2 \3/p' "$tmp/w1")
n2=$(sed -n 's/^warm: \([0-9]*\) kernels in .*: \([0-9]*\) compiled, \([0-9]*\) already cached, 0 failed$/\1 \2 \3/p' "$tmp/w2")
read -r t1 c1 _ <<<"${n1:-0 0 0}"
read -r t2 c2 k2 <<<"${n2:-0 0 0}"
[ "$rc1" = 0 ] && [ "$t1" -ge 2 ] && [ "$c1" -ge 1 ] && pass "engine warm compiles the target's wisdom entries ($t1 kernels, $c1 compiled)" ||
  fail "engine warm compiles the target's wisdom entries (exit $rc1)" "$(cat "$tmp/w1")"
[ "$rc2" = 0 ] && [ "$t2" = "$t1" ] && [ "$c2" = 0 ] && [ "$k2" = "$t1" ] && pass "...and a second run finds every one in the cache" ||
  fail "...and a second run finds every one in the cache (exit $rc2)" "$(cat "$tmp/w2")"
[ "$(find "$wc" -type f | wc -l)" -ge "$c1" ] && pass "...which holds a file per compiled kernel" || fail "...which holds a file per compiled kernel" "$(find "$wc" | head)"
mkdir -p "$tmp/badwisdom"
echo '{"entries": [' >"$tmp/badwisdom/x.json"
$E warm --arch sm_86 --wisdom "$tmp/badwisdom" --cache "$wc" >"$tmp/w3" 2>&1
check_rc "engine warm with a damaged wisdom file exits 2" 2 $? "$(cat "$tmp/w3")"
grep -q "badwisdom/x.json" "$tmp/w3" && pass "...naming the file" || fail "...naming the file" "$(cat "$tmp/w3")"

summary
