#!/usr/bin/env bash
# make test-gpu — everything that needs the GPU, run with the prebuilt build/engine (the GPU machine
# has no jansson headers, so nothing is rebuilt here). Logs go to $GPU_LOG_DIR (default build/gpu-logs).
#   every shipped config verified at 1x1x1, 17x33x5, 127x129x131, 1000^3 and 2048^3, beta = 0 and != 0
#   f64 runs of the templates that take both types; the cuBLAS cross-check against the CPU
#   the warp tile's paired lane layout at every width it allows
#   deliberately wrong fixtures that verification must catch (one only on a second launch); exit codes of the error paths
#   --format jsonl and --set; compute-sanitizer memcheck, racecheck, initcheck and synccheck on
#   each template; K = 0; 65536x65536x16 (64-bit offsets) and the refusal of what does not fit;
#   half (tests/gpu/half.sh, also runnable by itself): the bf16/f16 walk (configs/half.list) verified in
#   NN and NT at odd shapes, padded rows and batches, classes bf16 and f16 at K up to 65536, the
#   fixture that accumulates in the half type rejected, engine.matmul on torch bf16/f16; half-san: memcheck
#   and racecheck of the walk;
#   half-bench: the walk timed beside cuBLAS GemmEx at 4096^3 and 8192^3 (a table in $GPU_LOG_DIR/half-table.md);
#   a template that requires sm_90a; tc32, tc32ws (TMA, warp-specialised) and hws (BF16/FP16 wgmma) in every op, ld and batch; split-K in warptile, DMMA and blocktile at shapes one past a tile, three modes
#   (all of it launched with programmatic dependent launch on sm_90; split-K also without, ENGINE_PDL=0);
#   stream-K in warptile and DMMA, runs that start and end inside tiles; interior tiles unguarded and
#   edge tiles guarded (EDGE 1, 0 and 3), B by cp.async (B_ASYNC), B packed first (PACK_B), loads two
#   tiles ahead (LOAD_AHEAD) and C through shared memory (C_STAGE) at odd shapes;
#   layouts (section layouts): op NN NT TN TT at 1x1x1, 17x33x5, 127x129x131, 1000x1001x999, f32 and
#   f64, leading dimensions padded by 1, 8 and 64, strided batches (packed, padded, broadcast A), C's
#   padding left untouched (verify checks it), memcheck, a bench row carrying the layout; strided
#   batches in warptile, DMMA and blocktile; transposes and padded rows in them (every loader path),
#   split-K and stream-K in every op; --auto at op TT (the NN entries weighed) and at NT and TN (their
#   own points); their refusal of a
#   padded C with split-K or stream-K, and of a batch with split-K;
#   layouts-tb (also in layouts): DMMA's n-major B^T at even K (16-byte copies, partial k-tiles,
#   register-staged, split-K, stream-K, memcheck), warptile's PAD_BT in every DB path, DMMA's
#   STAGES_NARROW and ODD_LD at ld + 1 and odd K (every op, batches with odd strides, memcheck),
#   its ROWCOPY copies dealt by rows (the default's TN rule and both operands: every op, memcheck);
#   rows aligned to 2 but not 4 elements; the skinny warp tiles and FP64 tensor-core tiles of the shipped
#   wisdom, DMMA's PREFETCH_C and C_STAGE (forced on in every op, f32, batches, other tiles; the
#   defaults' rules at odd shapes; memcheck, racecheck); sliced K in warptile
#   gemv (a matrix times a few vectors): both loops in every op, f32 and f64, odd shapes with N or M
#   of 1-5, LANES and KW variants, ld + 1 and + 8, batches, split-K's three modes with empty splits,
#   column groups past NV, memcheck and racecheck; bf16 and f16 (class bf16/f16) in every op at N = 1,
#   3, 16 and M = 1, 5, odd K, ld + 1 and + 4, batches, NV 16, split-K through the FP32 workspace
#   crash isolation: a faulting config among good ones in bench and verify; engine tune over a
#   space holding a faulting and a hanging kernel; a second tune served from the CUBIN cache; a
#   tune of 100 warptile points at 4096^3 whose winner verifies
#   accuracy classes: wrong_k (a k-step dropped) caught by class f32, not the element screen, at
#   K = 65536 and 131072; inputs rounded to TF32 rejected by class f32 and passed by class tf32;
#   every shipped config within its class at K = 1, 7, 64, 4096, 65536, its errors by K beside
#   cuBLAS's written to $GPU_LOG_DIR/accuracy-by-k.md (for docs/RESULTS.md)
#   the shipped wisdom of this GPU's arch, generated from wisdom/*.json: verify --auto at every
#   entry's shape and at odd shapes near it (wisdom; wisdom-f32 and wisdom-f64 run one dtype's
#   half, each within a device call's 10 minutes, where the whole section is not), memcheck of each
#   distinct configuration (config + set) near its entry (wisdom-memcheck, a section of its own so
#   that each fits a device call); verify --auto at 16 random odd shapes (bench/random_shapes.sh 424242 16)
#   the regression guard: CHECK=1 bench/regress.sh against bench/baseline/<device>.jsonl, which must exist
#   the library (library): examples/sgemm PASS against cuBLAS; on an sm_90 GPU, f32 plans where wisdom
#   holds tc32 entries choose them and match cuBLAS (gpu_lib tc32); build/gpu_lib (tests/gpu_lib.c) every op x
#   odd shapes x beta x f32/f64 x row/column-major x ld padding x batch through libengine against cuBLAS,
#   the same from two host threads at once, compute-sanitizer memcheck of it; engine.matmul against
#   torch.matmul (tests/gpu_torch.py, PYTHONPATH=python, ENGINE_LIB=build/libengine.so)
# The sections live in tests/gpu/{kernels,layouts,tiles,wisdom,tools}.sh by concern, sourced below
# after the helpers. Every check looks at what it claims, never at an exit code alone: a verify passes when its summary
# counts every row asked for (configs x shapes x 2 betas) passed, a sanitizer run when its own
# summary is clean and so is the verify inside it, a tune when it logged points, none of them a wrong
# result (engine tune exits 1 when one is), a refusal when its message names the reason.
# tests/gpu_stub.sh (in make test) runs this script against a stub engine that prints nothing: every
# check must fail there. A check that cannot run here (no python3, no compute-sanitizer) is counted
# as skipped. ENGINE_BIN, COMPUTE_SANITIZER and PYTHON override the programs used; GPU_SANITIZE=0
# skips the sanitizer runs of the sanitize and wisdom-memcheck sections; GPU_ARCH=sm_XX stands in
# for the arch `engine info` reports (the wisdom sections read it), BASELINE for regress.sh's.
# GPU_JOBS=N runs the sections as N processes at once (tests/gpu/jobs.sh), GPU_DEADLINE=S starting
# none after S seconds.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
E=${ENGINE_BIN:-build/engine}
LOG=${GPU_LOG_DIR:-build/gpu-logs}
# GPU_ONLY="edges sanitize" runs only those sections, so that a device call can stay inside its time
# limit; default all. A name not in SECTIONS is an error (exit 2). WISDOM_PART=own or near: of the
# wisdom sections, only the checks at the entries' own shapes or at the odd shapes near them.
SECTIONS="device verify f64 lanes wrong accuracy errors edges layouts layouts-tb splitk streamk interior vec2 skinny slicek gemv sm90a half half-san half-bench wisdom wisdom-f32 wisdom-f64 wisdom-memcheck auto isolation tune-faults tune formats sanitize regress library"
for s in ${GPU_ONLY:-}; do
  [[ " $SECTIONS " == *" $s "* ]] || { echo "GPU_ONLY: no section \"$s\"; the sections are: $SECTIONS"; exit 2; }
done
want() { [ -z "${GPU_ONLY:-}" ] || [[ " $GPU_ONLY " == *" $1 "* ]]; }
[ -x "$E" ] || { echo "$E is missing: run make first"; exit 2; }
mkdir -p "$LOG"
TPL_FIX=tests/templates:kernels_src
FIX="env ENGINE_TEMPLATES=$TPL_FIX"
# compute-sanitizer: $COMPUTE_SANITIZER, else CUDA_HOME's, else the one on PATH; empty when there is none.
if [ -n "${COMPUTE_SANITIZER:-}" ]; then
  CS=$COMPUTE_SANITIZER
else
  CS=${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer
  [ -x "$CS" ] || CS=$(command -v compute-sanitizer)
fi
[ -n "$CS" ] && [ -x "$CS" ] || CS=""

# verify_rows VERIFY_ARGS...: the rows `engine verify VERIFY_ARGS` runs: every config (an argument
# ending in .json; with --auto and none, the one wisdom picks per shape) at every shape of --shapes
# (run.c's 5 without it), beta = 0 and beta != 0.
verify_rows() {
  local a prev="" nc=0 ns=5 commas auto=0
  for a in "$@"; do
    if [ "$prev" = --shapes ]; then commas=${a//[^,]/}; ns=$((${#commas} + 1)); fi
    [[ $a == *.json ]] && nc=$((nc + 1))
    [ "$a" = --auto ] && auto=1
    prev=$a
  done
  [ "$nc" = 0 ] && nc=$auto
  echo $((nc * ns * 2))
}
# verify_summary LOG: the last "verify: N passed, N failed, N errors" line of LOG (run.c), or "no verify summary".
verify_summary() {
  local l
  l=$(sed -n '/^verify: /h; ${x;p;}' "$1")
  echo "${l:-no verify summary}"
}
# verify_judged LOG: "ROWS GOOD" over the rows of `engine verify --format jsonl` in LOG (run.c's
# verify_row): how many there are, and how many this suite judges good itself, not trusting the
# engine's verdict or its summary: status ok, every element within the screen's tolerance
# (max_ratio a number <= 1, no NaN/Inf), and where the class's figures were measured, within its
# bound (accuracy.h: max <= 2 x cuBLAS's + 16 u, mean <= 2 x cuBLAS's + 4 u).
verify_judged() {
  awk '
    function num(k) { return match($0, "\"" k "\":[-+0-9.eE]+") ? substr($0, RSTART + length(k) + 3, RLENGTH - length(k) - 3) : "" }
    /^\{"config":/ {
      n++
      r = num("max_ratio"); nf = num("nonfinite")
      ok = $0 ~ /"status":"ok"/ && r != "" && r + 0 <= 1 && (nf == "" || nf + 0 == 0)
      em = num("err_max_u"); ea = num("err_mean_u"); rm = num("ref_err_max_u"); ra = num("ref_err_mean_u")
      if (ok && em != "")
        ok = ea != "" && rm != "" && ra != "" && em + 0 <= 2 * rm + 16 && ea + 0 <= 2 * ra + 4
      good += ok
    }
    END { print n + 0, good + 0 }' "$1"
}
# check_verify NAME LOG RC ROWS: a verify --format jsonl exited 0 with ROWS rows, every one judged
# good here (verify_judged), and its summary says the same (a verify that ran nothing, fewer rows
# than asked, or an engine that miscounts or misjudges its rows does not pass).
check_verify() {
  local got judged retried
  got=$(verify_summary "$2")
  judged=$(verify_judged "$2")
  if [ "$3" = 0 ] && [ "$judged" = "$4 $4" ] && [ "$got" = "verify: $4 passed, 0 failed, 0 errors" ]; then
    # A row whose set-up stalled and ran on a second worker (run.c call()) passes, and is counted.
    retried=$(grep -a -c '"setup_retried":"' "$2")
    pass "$1 ($4 rows$([ "$retried" = 0 ] || echo "; $retried set up again after a stall"))"
  else
    fail "$1 (exit $3, $got; rows read, judged good: $judged; expected $4 of $4)" \
      "$(grep -a -m 5 -E '"status":"(FAIL|error)"|^(FAIL|error)' "$2")"
  fi
}
# run_verify NAME LOGBASE VERIFY_ARGS...: `engine verify --format jsonl VERIFY_ARGS` into
# $LOG/LOGBASE.txt (stderr too), checked for every row the arguments ask for. Environment
# assignments before it reach the engine.
run_verify() {
  local name=$1 log=$LOG/$2.txt
  shift 2
  $E verify --format jsonl "$@" >"$log" 2>&1
  check_verify "$name" "$log" $? "$(verify_rows "$@")"
}
# sanitize_verify LABEL LOGBASE "TOOLS" VERIFY_ARGS...: each compute-sanitizer tool of TOOLS over
# `engine verify VERIFY_ARGS` (the kernels run in a worker, so every process is followed), one
# check each, named "TOOL LABEL"; logs in $LOG/LOGBASE-TOOL.txt. Passes when the sanitizer exits 0,
# prints its clean summary (ERROR SUMMARY: 0 errors; racecheck's RACECHECK SUMMARY: 0 hazards) and
# no other, and the verify it ran passed every row asked for. Skipped without a compute-sanitizer,
# or with the reason in SAN_SKIP.
sanitize_verify() {
  local label=$1 base=$2 tools=$3 tool log rc rows clean want got judged
  shift 3
  rows=$(verify_rows "$@")
  for tool in $tools; do
    if [ -n "${SAN_SKIP:-}" ] || [ -z "$CS" ]; then
      skip "$tool $label" "${SAN_SKIP:-no compute-sanitizer}"
      continue
    fi
    log=$LOG/$base-$tool.txt
    "$CS" --tool "$tool" --target-processes all --error-exitcode 99 $E verify --format jsonl "$@" >"$log" 2>&1
    rc=$?
    want='ERROR SUMMARY: 0 errors'
    [ "$tool" = racecheck ] && want='(ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards)'
    clean=$(grep -a -cE "$want" "$log")
    got=$(verify_summary "$log")
    judged=$(verify_judged "$log")
    if [ $rc = 0 ] && [ "$clean" -ge 1 ] && ! grep -a -qE '(ERROR|RACECHECK) SUMMARY: [1-9]' "$log" &&
      [ "$judged" = "$rows $rows" ] && [ "$got" = "verify: $rows passed, 0 failed, 0 errors" ]; then
      pass "$tool $label"
    else
      fail "$tool $label (exit $rc, $clean clean summaries, $got; rows read, judged good: $judged; expected $rows of $rows)" \
        "$(grep -a -m 8 -E 'ERROR|hazard|Invalid|error' "$log")"
    fi
  done
}
# check_says NAME RC WANT_RC LOG ERE: the command exited WANT_RC and its output (LOG) matches ERE; an
# exit code alone could come from any failure, a missing GPU or a stub.
check_says() {
  if [ "$2" = "$3" ] && grep -a -qE -- "$5" "$4"; then pass "$1"; else fail "$1 (exit $2, expected $3 and /$5/)" "$(head -20 "$4")"; fi
}
# class_broken LOG CLASS: how many FAIL lines of LOG show errors beyond the bound of accuracy class
# CLASS, read from the line's "CLASS err MAX/MEAN u (cuBLAS MAX/MEAN)" (run.c): max > 2 x cuBLAS's
# + 16 u or mean > 2 x cuBLAS's + 4 u (accuracy.h).
class_broken() {
  sed -n "s/^FAIL .* $2 err \([^/ ]*\)\/\([^ ]*\) u (cuBLAS \([^/]*\)\/\([^)]*\)).*/\1 \2 \3 \4/p" "$1" |
    awk '$1 + 0 > 2 * $3 + 16 || $2 + 0 > 2 * $4 + 4 {n++} END {print n + 0}'
}
# check_class_fail NAME RC LOGBASE ROWS CLASS [class]: a verify (stdout in LOGBASE.txt, stderr in
# LOGBASE.err) exited 1 with all ROWS rows failed, each FAIL line's figures beyond class CLASS's
# bound. With "class", a second check: the element screen passed every row (no "N of M wrong"
# count) and stderr says each time that it was the accuracy class that failed.
check_class_fail() {
  local got broken counted said
  got=$(verify_summary "$3.txt")
  broken=$(class_broken "$3.txt" "$5")
  if [ "$2" = 1 ] && [ "$got" = "verify: 0 passed, $4 failed, 0 errors" ] && [ "$broken" = "$4" ]; then
    pass "$1: all $4 rows FAIL, their errors beyond class $5's bound"
  else
    fail "$1: all rows FAIL beyond class $5's bound (exit $2, $got; $broken of $4 FAIL lines beyond the bound)" \
      "$(grep -a -m 6 -E '^(ok|FAIL|error)' "$3.txt")"
  fi
  [ "${6:-}" = class ] || return 0
  counted=$(grep -c '^FAIL .* wrong (' "$3.txt")
  said=$(grep -c "verification failed at [0-9x]* beta=[^:]*: accuracy class $5: " "$3.err")
  if [ "$broken" = "$4" ] && [ "$counted" = 0 ] && [ "$said" = "$4" ]; then
    pass "$1: the element screen passed it, the class caught it ($4 times \"accuracy class $5\")"
  else
    fail "$1: caught by the class, not the screen ($counted FAIL lines with an element count, $said of $4 stderr lines name accuracy class $5)" \
      "$(grep -a -m 4 'verification failed' "$3.err")"
  fi
}
# check_tune NAME RC JSONL: a tune that logged points, none of them a wrong result (status FAIL),
# and exited as documented: 1 when any point's result was wrong, else 0.
check_tune() {
  local rows nfail want=0
  rows=$(cat "$3" 2>/dev/null | grep -c '"status":')
  nfail=$(cat "$3" 2>/dev/null | grep -c '"status":"FAIL"')
  [ "$nfail" -gt 0 ] && want=1
  if [ "$rows" -gt 0 ] && [ "$nfail" = 0 ] && [ "$2" = "$want" ]; then
    pass "$1 ($rows rows, none wrong)"
  else
    fail "$1 (exit $2, expected $want; $rows rows, $nfail wrong results)" "$(grep '"status":"FAIL"' "$3" 2>/dev/null | head -3)"
  fi
}
# python3 ($PYTHON overrides it); have_py: whether there is one.
PY=${PYTHON:-python3}
have_py() { command -v "$PY" >/dev/null; }
# check_py NAME FILE [DETAIL] <<'PY': the Python program on stdin, given FILE, must exit 0;
# skipped without python3.
check_py() {
  local out
  if ! have_py; then
    cat >/dev/null
    skip "$1" "no python3"
    return
  fi
  if out=$("$PY" - "$2" 2>&1); then pass "$1"; else fail "$1" "$(tail -n 3 <<<"$out")${3:+
$3}"; fi
}
# jfield KEY: the string field KEY of each JSON line on stdin (the engine writes them compactly).
jfield() { sed -n 's/.*"'"$1"'":"\([^"]*\)".*/\1/p'; }

# cap_shapes: MxNxK lines on stdin as one comma list, each side made odd (1 added to an even one),
# then M and N shrunk in proportion until C has at most 2^27 elements, K at most 65537.
cap_shapes() {
  awk -F x 'function odd(v) { return v % 2 ? v : v + 1 }
    NF == 3 { m = odd($1); n = odd($2); k = odd($3); c = 2 ^ 27
      if (m * n > c) { f = sqrt(c / (m * n)); m = int(m * f); n = int(n * f) }
      if (m < 1) m = 1; if (n < 1) n = 1; if (k > 65537) k = 65537
      printf "%s%dx%dx%d", sep, m, n, k; sep = "," }'
}

# --auto in the wisdom and auto sections reads the shipped wisdom only: XDG_DATA_HOME names a folder
# without any, so no user wisdom ($XDG_DATA_HOME/engine/wisdom, read first) gets in.
SHIPPED_ONLY=$LOG/xdg-data

# The sections, by concern (each file sourced here, in this order; SECTIONS above lists their names).
# GPU_SECTIONS_SOURCED tells a section file that can also run by itself (half.sh) that it is sourced.
GPU_SECTIONS_SOURCED=1
if [ "${GPU_JOBS:-1}" -gt 1 ]; then
  . tests/gpu/jobs.sh # the sections as GPU_JOBS processes at once; exits with their summary
  exit $?
fi
for part in kernels layouts tiles half wisdom tools; do
  # shellcheck source=/dev/null
  . "tests/gpu/$part.sh"
done

summary
