# tests/gpu/half.sh — the half dtypes (bf16, f16) on the GPU: the walk of configs/half.list
# verified in both dtypes, every op, at odd shapes, padded rows and batches, with the cuBLAS
# cross-check; within accuracy classes bf16 and f16 at K = 1 to 65536; the fixture that accumulates
# in the half type rejected by them; memcheck and racecheck; engine.matmul on torch
# bfloat16/float16 tensors (tests/gpu_torch_half.py); then each config timed
# beside cuBLAS GemmEx at 4096^3 and 8192^3, op NN and NT (x W^T), in a table (the last thing printed).
#
# Sourced by tests/gpu.sh as sections "half" (verification, the library), "half-san" (memcheck and
# racecheck) and "half-bench" (the timings and their table) of make test-gpu, or run by itself on a
# machine with the prebuilt binaries (nothing is built):
#   BUILD=build bash tests/gpu/half.sh        logs under $OUT/half-logs if OUT is set, else build/gpu-logs
# which runs tests/gpu.sh with GPU_ONLY="half half-san half-bench" and prints the timing table after
# its summary; HALF_SECTIONS="half" (or half-san, half-bench) runs some of them, for device calls of
# 10 minutes.
# shellcheck shell=bash

if [ -z "${GPU_SECTIONS_SOURCED:-}" ]; then
  # By itself: tests/gpu.sh runs this section (its helpers, counting and summary), then the table.
  cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
  log=${OUT:+$OUT/half-logs}
  log=${log:-${GPU_LOG_DIR:-${BUILD:-build}/gpu-logs}}
  GPU_ONLY=${HALF_SECTIONS:-half half-san half-bench} ENGINE_BIN=${ENGINE_BIN:-${BUILD:-build}/engine} GPU_LOG_DIR=$log bash tests/gpu.sh
  rc=$?
  [[ " ${HALF_SECTIONS:-half-bench} " == *" half-bench "* ]] && [ -f "$log/half-table.md" ] && { echo; cat "$log/half-table.md"; }
  exit $rc
fi

# The walk's files, as arguments (run_verify counts the rows asked for by the .json arguments).
HALF_WALK=$(grep -v '^#' configs/half.list | sed 's#^#configs/#')

if want half; then
echo "== half dtypes: the walk (configs/half.list) in bf16 and f16"
# 1x4096x1100, 3x4096x1100: 8- and 16-byte copies (EV_A 4, EV_B 8) with k-tiles and rows past the
# matrix; h01 and h02 (copies through registers) got them wrong on sm_90 before copy_chunk's fix.
HALF_SHAPES=1x1x1,17x33x5,127x255x33,128x128x128,1000x1001x999,1x4096x1100,3x4096x1100,4096x4096x4096
for dt in bf16 f16; do
  run_verify "half walk $dt, op NN, with the cuBLAS cross-check" half-$dt --cross-check $HALF_WALK \
    --dtype $dt --shapes $HALF_SHAPES
  n=$(grep -c "^cross-check $dt cuBLAS vs .*: ok (" "$LOG/half-$dt.txt")
  bad=$(grep -c "^cross-check $dt .*: FAIL" "$LOG/half-$dt.txt")
  [ "$n" = 4 ] && [ "$bad" = 0 ] && pass "cross-check $dt cuBLAS GemmEx vs CPU (4 ok)" ||
    fail "cross-check $dt cuBLAS GemmEx vs CPU ($n ok, $bad FAIL; expected 4 ok)" "$(grep "^cross-check $dt" "$LOG/half-$dt.txt")"
  # x W^T as a transformer calls it: one token (M = 1) through an MLP's 4096 -> 11008 projection.
  run_verify "half walk $dt, op NT" half-$dt-nt $HALF_WALK --dtype $dt --op NT \
    --shapes 1x1x1,127x255x33,1x4096x1100,1x11008x4096,1x4096x11008,4096x4096x4096
  # Rows padded by 1 (2-byte copies), by 8; C padded; strided batches; every loader path.
  run_verify "half walk $dt, NN rows padded by 1, C by 3" half-$dt-ld1 $HALF_WALK --dtype $dt \
    --lda +1 --ldb +1 --ldc +3 --shapes 17x33x5,127x255x33,300x200x100
  run_verify "half walk $dt, NT rows padded by 8, batch of 3" half-$dt-batch $HALF_WALK --dtype $dt \
    --op NT --lda +8 --ldb +8 --ldc +8 --batch 3 --shapes 17x33x5,127x255x33,256x256x256
  # 3x4096x1100 with lda 1104 (16-byte copies of A): a copy with 4 of its 8 elements inside.
  run_verify "half walk $dt, NN rows padded by 4 (8-byte copies), batch of 2" half-$dt-ld4 $HALF_WALK \
    --dtype $dt --lda +4 --ldb +4 --batch 2 --shapes 127x255x36,64x64x64,3x4096x1100
  # A stored K x M: its fragments by ldmatrix.trans.
  run_verify "half walk $dt, op TN" half-$dt-tn $HALF_WALK --dtype $dt --op TN \
    --shapes 1x1x1,17x33x5,127x255x33,1000x1001x999,3x4096x1100,4096x4096x4096
  run_verify "half walk $dt, op TT, rows padded by 1, batch of 2" half-$dt-tt $HALF_WALK --dtype $dt --op TT \
    --lda +1 --ldb +1 --ldc +1 --batch 2 --shapes 17x33x5,127x255x33,256x256x256
done

echo "== half dtypes: accuracy classes bf16 and f16"
for dt in bf16 f16; do
  run_verify "half walk $dt within class $dt at K = 1, 7, 64, 4096, 65536" half-acc-$dt $HALF_WALK \
    --dtype $dt --shapes 33x65x1,33x65x7,129x127x64,257x255x4096,64x64x65536
  n=$(grep -c "^{\"config\":.*\"status\":\"ok\".*\"class\":\"$dt\",\"err_max_u\":[0-9]" "$LOG/half-acc-$dt.txt")
  [ "$n" = 40 ] && pass "half walk $dt judged as class $dt against cuBLAS GemmEx (40 rows)" ||
    fail "half walk $dt judged as class $dt ($n of 40 ok rows show $dt errors)" "$(grep -a -m 6 '^{"config":' "$LOG/half-acc-$dt.txt")"
  # The fixture: partial sums rounded to the type. Every row must fail, beyond the class's bound.
  $FIX $E verify tests/configs/gpu/half_acc.json --dtype $dt --shapes 64x64x64,64x64x4096,64x64x65536 \
    >"$LOG/half-acc-fixture-$dt.txt" 2>"$LOG/half-acc-fixture-$dt.err"
  check_class_fail "half_acc (accumulates in $dt) at K = 64, 4096, 65536" $? "$LOG/half-acc-fixture-$dt" 6 $dt
done

echo "== half dtypes: the library, engine.matmul on torch bfloat16 and float16 against torch.matmul"
if have_py; then
  PYTHONPATH=python ENGINE_LIB="$(dirname "$E")/libengine.so" "$PY" tests/gpu_torch_half.py >"$LOG/half-torch.txt" 2>&1
  check_says "engine.matmul on torch bf16/f16, NN, NT, TN, TT x 6 shapes, cuBLAS first then its kernel, against the float64 product" \
    $? 0 "$LOG/half-torch.txt" '^[1-9][0-9]* passed, 0 failed$'
else
  skip "engine.matmul on torch bf16/f16" "no python3"
fi

fi

if want half-san; then
echo "== half dtypes: sanitizers"
if [ "${GPU_SANITIZE:-1}" = 0 ]; then SAN_SKIP="GPU_SANITIZE=0"; fi
sanitize_verify "half walk bf16 NN at odd shapes" half-san "memcheck racecheck" $HALF_WALK --dtype bf16 \
  --shapes 17x33x5,127x255x33
sanitize_verify "half walk f16 NT, rows padded by 1, batch of 2" half-san-nt "memcheck" $HALF_WALK \
  --dtype f16 --op NT --lda +1 --ldb +1 --ldc +1 --batch 2 --shapes 65x129x77
sanitize_verify "half walk bf16 TN" half-san-tn "memcheck" $HALF_WALK --dtype bf16 --op TN --shapes 65x129x77
sanitize_verify "half walk bf16 TT" half-san-tt "memcheck" $HALF_WALK --dtype bf16 --op TT --shapes 65x129x77
unset SAN_SKIP

fi

if want half-bench; then
echo "== half dtypes: timed beside cuBLAS GemmEx, 4096^3 and 8192^3, NN and NT"
for dt in bf16 f16; do
  for op in NN NT; do
    $E bench $HALF_WALK --dtype $dt --op $op --sizes 4096,8192 --format jsonl >"$LOG/half-bench-$dt-$op.jsonl" \
      2>"$LOG/half-bench-$dt-$op.err"
    rc=$?
    nok=$(grep -c '"status":"ok"' "$LOG/half-bench-$dt-$op.jsonl")
    ncb=$(grep -c '"config":"cublas"' "$LOG/half-bench-$dt-$op.jsonl")
    [ "$rc" = 0 ] && [ "$nok" = 10 ] && [ "$ncb" = 2 ] && pass "bench $dt $op: 4 configs and cuBLAS at 2 sizes, all ok" ||
      fail "bench $dt $op (exit $rc, $nok ok rows of 10, $ncb cuBLAS rows of 2)" "$(tail -3 "$LOG/half-bench-$dt-$op.err")"
  done
done
rm -f "$LOG/half-table.md"
check_py "the half walk's timings in $LOG/half-table.md" "$LOG" <<'PY'
import json, os, sys
log = sys.argv[1]
rows = {}
for dt in ("bf16", "f16"):
    for op in ("NN", "NT"):
        for l in open(os.path.join(log, f"half-bench-{dt}-{op}.jsonl")):
            r = json.loads(l)
            if r.get("status") == "ok":
                rows[(r["config"], dt, op, r["M"])] = r
configs = [l.strip()[:-5] for l in open("configs/half.list") if l.strip() and not l.startswith("#")] + ["cublas"]
sizes = (4096, 8192)
out = ["TFLOP/s (% of cuBLAS GemmEx, CUBLAS_COMPUTE_32F), median of 7 runs; NT is x W^T.", "",
       "| config | " + " | ".join(f"{dt} {op} {s}" for dt in ("bf16", "f16") for op in ("NN", "NT") for s in sizes) + " |",
       "|---|" + "---:|" * 8]
missing = []
for c in configs:
    cells = []
    for dt in ("bf16", "f16"):
        for op in ("NN", "NT"):
            for s in sizes:
                r = rows.get((c, dt, op, s))
                if r is None:
                    missing.append(f"{c} {dt} {op} {s}")
                    cells.append("–")
                else:
                    cells.append(f"{r['tflops']:.0f} ({r['pct_cublas']:.0f}%)")
    out.append(f"| {c} | " + " | ".join(cells) + " |")
open(os.path.join(log, "half-table.md"), "w").write("\n".join(out) + "\n")
assert not missing, "no timing for " + ", ".join(missing[:6])
PY
fi
