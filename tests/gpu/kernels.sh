# tests/gpu/kernels.sh — sourced by tests/gpu.sh (its helpers, $E, $LOG and want() in scope): the shipped configs verified, f64, lanes, wrong kernels, accuracy classes, error paths, BLAS edges.
# shellcheck shell=bash

if want device; then
echo "== device"
$E info --bandwidth | tee "$LOG/info.txt"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] && grep -qE '^device [0-9]+: ' "$LOG/info.txt" && grep -q '^  measured: DRAM [0-9]' "$LOG/info.txt" &&
  pass "engine info names the device and measures it" || fail "engine info names the device and measures it (exit $rc)"
fi

if want verify; then
echo "== verify every shipped config (f32 and f64 as shipped), with the cuBLAS cross-check"
run_verify "verify configs/*.json" verify --cross-check configs/*.json
grep -E '"status":"(FAIL|error)"|cross-check' "$LOG/verify.txt"
tail -1 "$LOG/verify.txt"
# Each dtype is cross-checked at two shapes, beta = 0 and beta != 0 (serve.c): four lines, all ok.
for dt in f32 f64; do
  n=$(grep -c "^cross-check $dt cuBLAS vs .*: ok (" "$LOG/verify.txt")
  bad=$(grep -c "^cross-check $dt .*: FAIL" "$LOG/verify.txt")
  [ "$n" = 4 ] && [ "$bad" = 0 ] && pass "cross-check $dt cuBLAS vs CPU (4 ok)" ||
    fail "cross-check $dt cuBLAS vs CPU ($n ok, $bad FAIL; expected 4 ok)" "$(grep "^cross-check $dt" "$LOG/verify.txt")"
done
fi

if want f64; then
echo "== the f32 templates in f64"
F64="configs/tiled.json configs/regblock.json configs/bank_pad_vec.json configs/ldg_wider2.json configs/sb06_vectorize.json
     configs/sb07_linearize.json configs/sb10_warptiling.json configs/sb11_double_buffer.json configs/sb12_double_buffer2.json
     configs/warptile_db.json configs/splitk3.json configs/splitk4_2pass.json configs/multibuf_b3.json configs/ldg_async.json configs/naive.json
     configs/gemv.json"
# shellcheck disable=SC2086
run_verify "verify --dtype f64" verify-f64 --dtype f64 --shapes 1x1x1,17x33x5,127x129x131,1000x1000x1000 $F64
grep -E '"status":"(FAIL|error)"' "$LOG/verify-f64.txt"
tail -1 "$LOG/verify-f64.txt"
fi

if want lanes; then
echo "== the paired lane layout (LANES 1) at 2, 4, 8 and 16 lanes across a warp step, f32 and f64"
for geo in "WM=64 WN=32 WNITER=2 TN=8" "WM=32 WN=64 WNITER=2 TN=8" "WM=32 WN=64 WNITER=1 TN=8" "WM=32 WN=64 WNITER=1 TN=4"; do
  sets=""
  for kv in $geo LANES=1 SNAKE=1; do sets="$sets --set $kv"; done
  for dt in f32 f64; do
    # shellcheck disable=SC2086
    run_verify "verify warptile LANES=1 $geo ($dt)" lanes configs/warptile_db.json $sets --dtype $dt \
      --shapes 1x1x1,17x33x5,127x129x131,1000x1000x1000
  done
done
fi

if want wrong; then
echo "== wrong kernels must be caught"
# Each runs 4 rows (2 shapes x 2 betas): all of them must run, and at least one must FAIL.
for t in wrong_k wrong_edge wrong_beta wrong_state; do
  $FIX $E verify tests/configs/gpu/$t.json --shapes 1x1x1,127x129x131 >"$LOG/$t.txt" 2>&1
  rc=$?
  sum=$(verify_summary "$LOG/$t.txt")
  read -r _ np _ nf _ ne _ <<<"${sum//,/}"
  if [ "$rc" = 1 ] && [[ "$np $nf $ne" =~ ^[0-9]+\ [1-9][0-9]*\ 0$ ]] && [ $((np + nf)) = 4 ]; then
    pass "$t is caught ($nf of 4 rows FAIL, exit 1)"
  else
    fail "$t is caught (exit $rc, $sum; expected exit 1, 4 rows, 1 or more failed)" "$(head -20 "$LOG/$t.txt")"
  fi
done
# wrong_beta reads C at beta = 0, where C holds NaN: every beta = 0 row must FAIL and count NaN/Inf
# elements ("FAIL  label dtype shape beta=0     N of M wrong (N NaN/Inf), ...", run.c).
b0=$(grep -cE '^[A-Za-z]+ +[^ ]+ +f(32|64) +[0-9x]+ +beta=0 ' "$LOG/wrong_beta.txt")
nan=$(grep -cE '^FAIL .* beta=0 .*\([1-9][0-9]* NaN/Inf\)' "$LOG/wrong_beta.txt")
[ "$b0" = 2 ] && [ "$nan" = 2 ] && pass "wrong_beta: the NaN poison leaks and is reported (NaN/Inf counted at beta = 0)" ||
  fail "wrong_beta: NaN poison reported in $nan of $b0 beta = 0 rows (expected 2 of 2)" "$(grep ' beta=0 ' "$LOG/wrong_beta.txt")"
fi

if want accuracy; then
echo "== accuracy classes against an FP64 reference: fixtures that must fail them, every shipped config within its class at K = 1 to 65536"
# wrong_k drops the k-step K/2: at K = 65536 and beyond that is inside the element screen's bound,
# (16 + 8 sqrt(K)) u S, and only class f32 (max <= 2 x SGEMM's + 16 u, mean <= 2 x SGEMM's + 4 u) sees it.
$FIX $E verify tests/configs/gpu/wrong_k.json --shapes 64x64x65536,32x32x131072 >"$LOG/acc-wrong_k.txt" 2>"$LOG/acc-wrong_k.err"
check_class_fail "wrong_k at K = 65536 and 131072" $? "$LOG/acc-wrong_k" 4 f32 class
# tf32_inputs rounds A and B to TF32 (10 mantissa bits) and sums in FP32: class f32 must reject it
# at every K (at small K the screen may too); the same kernel held to class tf32 passes.
ACC_TF32_SHAPES=129x127x64,257x255x4096,64x64x65536
$FIX $E verify tests/configs/gpu/tf32_inputs.json --shapes $ACC_TF32_SHAPES >"$LOG/acc-tf32.txt" 2>"$LOG/acc-tf32.err"
check_class_fail "tf32_inputs as class f32 at K = 64, 4096, 65536" $? "$LOG/acc-tf32" 6 f32
ENGINE_TEMPLATES=$TPL_FIX run_verify "tf32_inputs_tf32 (class tf32) at K = 64, 4096, 65536" acc-tf32-tf32 \
  tests/configs/gpu/tf32_inputs_tf32.json --shapes $ACC_TF32_SHAPES
n=$(grep -c '^{"config":.*"status":"ok".*"class":"tf32","err_max_u":[0-9]' "$LOG/acc-tf32-tf32.txt")
[ "$n" = 6 ] && pass "tf32_inputs_tf32 is judged as class tf32, against cuBLAS TF32 (6 rows)" ||
  fail "tf32_inputs_tf32 judged as class tf32 ($n of 6 ok rows show tf32 errors)" "$(grep -a -m 6 '^{"config":' "$LOG/acc-tf32-tf32.txt")"
# Every shipped config within its class (f32 or f64) at K = 1, 7, 64, 4096 and 65536, beta = 0 and != 0.
run_verify "every shipped config within its accuracy class at K = 1, 7, 64, 4096, 65536" acc-configs configs/*.json \
  --shapes 33x65x1,33x65x7,129x127x64,257x255x4096,64x64x65536
# Their errors by K beside cuBLAS's, for docs/RESULTS.md: $LOG/accuracy-by-k.md.
rm -f "$LOG/accuracy-by-k.md"
check_py "the errors by K of every shipped config, beside cuBLAS's, in $LOG/accuracy-by-k.md" "$LOG/acc-configs.txt" <<'PY'
import collections, glob, json, os, sys
log = sys.argv[1]
ks = [1, 7, 64, 4096, 65536]
cells = collections.defaultdict(dict)  # (config, class) -> K -> [max, mean, cuBLAS max, cuBLAS mean], worst of both betas
for l in open(log, errors="replace"):  # verify --format jsonl's rows (run.c's verify_row)
    if not l.startswith('{"config":'):
        continue
    r = json.loads(l)
    if "err_max_u" not in r:
        continue
    got = [float(r[f]) for f in ("err_max_u", "err_mean_u", "ref_err_max_u", "ref_err_mean_u")]
    old = cells[(r["config"], r["class"])].get(r["K"])
    cells[(r["config"], r["class"])][r["K"]] = got if old is None else [max(a, b) for a, b in zip(old, got)]
nconf = len(glob.glob("configs/*.json"))
assert len(cells) == nconf, f"{len(cells)} configs with error figures, {nconf} shipped"
short = [f"{c} K={k}" for (c, _), row in cells.items() for k in ks if k not in row]
assert not short, "no figures for " + ", ".join(short[:8])
g = lambda x: f"{x:.3g}"
out = ["Error against the FP64 reference in u of sum |a||b| (accuracy.h): the kernel's max/mean, cuBLAS's",
       "(SGEMM, DGEMM) on the same inputs in parentheses; the worse of beta = 0 and beta = -0.5.", "",
       "| config | class | " + " | ".join(f"K={k}" for k in ks) + " |", "|---|---|" + "---|" * len(ks)]
for (c, cls), row in sorted(cells.items(), key=lambda x: (x[0][1], x[0][0])):
    out.append(f"| {c} | {cls} | " + " | ".join(f"{g(r[0])}/{g(r[1])} ({g(r[2])}/{g(r[3])})" for r in (row[k] for k in ks)) + " |")
open(os.path.join(os.path.dirname(log), "accuracy-by-k.md"), "w").write("\n".join(out) + "\n")
PY
[ -f "$LOG/accuracy-by-k.md" ] && cat "$LOG/accuracy-by-k.md"
fi

if want errors; then
echo "== error paths"
$FIX $E verify tests/configs/gpu/fault.json --shapes 64x64x64 >"$LOG/fault.txt" 2>&1
check_says "kernel fault exits 3 and names the CUDA error" $? 3 "$LOG/fault.txt" 'CUDA_ERROR_[A-Z_]+'
$FIX $E verify tests/configs/gpu/needs_k4.json --shapes 16x16x6 >"$LOG/refuse.txt" 2>&1
check_says "declared shape requirement refuses K=6 (exit 2), naming the requirement" $? 2 "$LOG/refuse.txt" 'requires K % 4 == 0'
ENGINE_TEMPLATES=$TPL_FIX run_verify "declared shape requirement accepts K=8" accept tests/configs/gpu/needs_k4.json --shapes 16x16x8
$E verify configs/tiled.json --device 99 >"$LOG/device.txt" 2>&1
check_says "--device 99 exits 3, naming the GPU that is not there" $? 3 "$LOG/device.txt" 'there is no GPU 99'
$E verify configs/tiled.json --arch sm_80 --shapes 64x64x64 >"$LOG/arch.txt" 2>&1
check_says "an sm_80 CUBIN on this GPU exits 2 and says why" $? 2 "$LOG/arch.txt" 'the CUBIN cannot run on this sm_'
echo '{"name": "x", "template": "blocktile", "params": {"BM": 64,}}' >"$LOG/bad.json"
$E bench "$LOG/bad.json" configs/tiled.json --size 256 --runs 2 >"$LOG/bad.txt" 2>&1
check_says "a bad config among good ones: reported, the good one runs (its row ok), exit 2" $? 2 "$LOG/bad.txt" '^tiled +ok '
fi

if want edges; then
echo "== BLAS edges: K = 0 is C = beta*C; matrices of 2^31 elements and more"
run_verify "K = 0: every shipped config, beta = 0 and beta != 0" k0 configs/*.json --shapes 5x5x0,64x33x0
run_verify "K = 0, beta = 1: C unchanged" k0-beta1 configs/warptile_db.json configs/dgemm_dmma.json --beta 1 --shapes 17x9x0
# 65536 x 65536 x 16: C alone is 2^32 elements (17 GB in f32); the kernels take 64-bit offsets
# (IDX64). The host fills, checks and bounds every element, so this one takes a minute or two.
run_verify "65536x65536x16 f32 verifies (warptile_db)" big-f32 configs/warptile_db.json --shapes 65536x65536x16
$E verify configs/dgemm_dmma.json --shapes 65536x65536x16 >"$LOG/big-refused.txt" 2>&1
# Refused by whichever runs short first: the GPU's memory, or the host's (the FP64 reference of C).
check_says "65536x65536x16 f64 does not fit: exit 3, naming the memory needed and free" $? 3 "$LOG/big-refused.txt" \
  'needs [0-9.]+ GB( to verify)?, [0-9.]+ GB (free|available)'
fi
