#!/usr/bin/env bash
# tests/gpu.sh, the GPU tests, against stubs on this machine: an engine and a compute-sanitizer that
# print nothing and exit 0, then 1, 2 and 3. Every GPU check must fail against each: a check that
# passes there looks at an exit code or at nothing, and is named. Also: without python3 or
# compute-sanitizer the checks that need them are counted as skipped, never passed; an unknown
# GPU_ONLY section is refused; given an arch (GPU_ARCH), the wisdom sections' generated checks fail
# too. Takes seconds: the stubs return at once.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# stub DIR BODY: DIR/engine, a shell script of BODY (a stand-in that prints nothing).
stub() {
  mkdir -p "$1"
  printf '#!/bin/sh\n%s\n' "$2" >"$1/engine"
  chmod +x "$1/engine"
}
# gpu RC [VAR=VALUE...]: tests/gpu.sh with stubs that exit RC, output in $tmp/out-RC; prints its
# exit code and the counts of its summary line ("P F S", empty when there is none).
gpu() {
  local rc=$1 d=$tmp/stub-$1
  shift
  stub "$d" "exit $rc"
  cp "$d/engine" "$d/compute-sanitizer"
  env -u GPU_ONLY -u GPU_SANITIZE -u GPU_SANITIZE_TOOLS -u PYTHON ENGINE_BIN="$d/engine" \
    COMPUTE_SANITIZER="$d/compute-sanitizer" GPU_LOG_DIR="$d/logs" "$@" bash tests/gpu.sh >"$tmp/out-$rc" 2>&1
  echo "$? $(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' "$tmp/out-$rc" | tail -n 1)"
}

total=""
for rc in 0 1 2 3; do
  read -r grc p f s <<<"$(gpu $rc)"
  if [ -z "${p:-}" ]; then
    fail "stub engine exiting $rc: gpu.sh printed no summary (exit $grc)" "$(tail -n 5 "$tmp/out-$rc")"
  elif [ "$p" = 0 ] && [ "$s" = 0 ] && [ "$f" -gt 0 ] && [ "$grc" = 1 ]; then
    pass "stub engine exiting $rc: all $f GPU checks fail"
  else
    fail "stub engine exiting $rc: $p of $((p + f + s)) GPU checks passed, $s skipped (gpu.sh exit $grc)" \
      "$(grep -E '^  (ok|SKIP) ' "$tmp/out-$rc")"
  fi
  [ "$rc" = 0 ] && total=$((${p:-0} + ${f:-0} + ${s:-0}))
done

# Without python3 and compute-sanitizer: the same checks, those that need them skipped.
read -r grc p f s <<<"$(gpu 0 PYTHON=/nonexistent/python3 COMPUTE_SANITIZER=/nonexistent/compute-sanitizer)"
nsan=$(grep -c '^  SKIP .* (no compute-sanitizer)$' "$tmp/out-0")
npy=$(grep -c '^  SKIP .* (no python3)$' "$tmp/out-0")
if [ "${p:-x}" = 0 ] && [ "$nsan" -gt 0 ] && [ "$npy" -gt 0 ] && [ "$s" = $((nsan + npy)) ] && [ $((f + s)) = "$total" ] &&
  grep -q '^skipped:$' "$tmp/out-0"; then
  pass "without python3 and compute-sanitizer: $s of $total checks skipped ($nsan sanitizer, $npy python), listed, none passed"
else
  fail "without python3 and compute-sanitizer (exit $grc; ${p:-?} passed, ${f:-?} failed, ${s:-?} skipped of $total; $nsan + $npy SKIP lines)" \
    "$(tail -n 5 "$tmp/out-0")"
fi

grc=$(gpu 0 GPU_ONLY="edges typo" | cut -d' ' -f1)
grep -q '^GPU_ONLY: no section "typo"; the sections are: device verify .* sanitize regress library$' "$tmp/out-0" && [ "$grc" = 2 ] &&
  pass "an unknown GPU_ONLY section: exit 2, the known sections listed" ||
  fail "an unknown GPU_ONLY section (exit $grc, expected 2 and the list)" "$(cat "$tmp/out-0")"
read -r grc p f s <<<"$(gpu 0 GPU_ONLY=formats)"
[ "$grc" = 1 ] && [ "${p:-x}" = 0 ] && [ "${f:-0}" -gt 0 ] && [ "$f" -lt "$total" ] && ! grep -q '^== verify' "$tmp/out-0" &&
  pass "GPU_ONLY=formats runs that section alone ($f checks)" || fail "GPU_ONLY=formats (exit $grc, ${f:-?} checks)" "$(head -5 "$tmp/out-0")"
# The wisdom sections with an arch given (a stub cannot name one): every check they generate from
# wisdom/*.json, verify --auto and memcheck, fails too.
read -r grc p f s <<<"$(gpu 0 GPU_ONLY="wisdom wisdom-memcheck" GPU_ARCH=sm_90)"
nv=$(grep -c '^  FAIL  verify --auto f[36][24] ' "$tmp/out-0")
nm=$(grep -c '^  FAIL  memcheck wisdom f[36][24] ' "$tmp/out-0")
[ "$grc" = 1 ] && [ "${p:-x}" = 0 ] && [ "${s:-x}" = 0 ] && [ "$nv" -gt 0 ] && [ "$nm" -gt 0 ] && [ "$f" = $((nv + nm)) ] &&
  pass "GPU_ONLY=\"wisdom wisdom-memcheck\" GPU_ARCH=sm_90: all $f checks generated from the wisdom fail ($nv verify --auto, $nm memcheck)" ||
  fail "GPU_ONLY=\"wisdom wisdom-memcheck\" GPU_ARCH=sm_90 (exit $grc; ${p:-?} passed, ${f:-?} failed, ${s:-?} skipped; $nv verify, $nm memcheck)" \
    "$(grep -E '^  (ok|SKIP|FAIL) ' "$tmp/out-0" | head -n 8)"
# wisdom-f32 and wisdom-f64: each dtype's half of the wisdom section alone, the halves together its verifies.
read -r grc p f3 s <<<"$(gpu 0 GPU_ONLY=wisdom-f32 GPU_ARCH=sm_90)"
o32=$(grep -c '^  FAIL  verify --auto f64 ' "$tmp/out-0")
read -r grc p f6 s <<<"$(gpu 0 GPU_ONLY=wisdom-f64 GPU_ARCH=sm_90)"
o64=$(grep -c '^  FAIL  verify --auto f32 ' "$tmp/out-0")
[ "${f3:-0}" -gt 0 ] && [ "${f6:-0}" -gt 0 ] && [ "$o32" = 0 ] && [ "$o64" = 0 ] && [ $((f3 + f6)) = "$nv" ] &&
  pass "GPU_ONLY=wisdom-f32 and wisdom-f64: $f3 and $f6 of the section's $nv verify --auto checks, one dtype each" ||
  fail "GPU_ONLY=wisdom-f32 / wisdom-f64 (${f3:-?} + ${f6:-?} checks, section $nv; other dtype's $o32, $o64)"
# WISDOM_PART=near / own: the checks at odd shapes near the entries, or at their own shapes, alone.
read -r grc p fn s <<<"$(gpu 0 GPU_ONLY=wisdom-f32 WISDOM_PART=near GPU_ARCH=sm_90)"
nn=$(grep -c '^  FAIL  verify --auto f32 at odd shapes near' "$tmp/out-0")
read -r grc p fo s <<<"$(gpu 0 GPU_ONLY=wisdom-f32 WISDOM_PART=own GPU_ARCH=sm_90)"
no=$(grep -c "^  FAIL  verify --auto f32 at the entries' own shapes" "$tmp/out-0")
[ "${fn:-0}" -gt 0 ] && [ "$fn" = "$nn" ] && [ "${fo:-0}" -gt 0 ] && [ "$fo" = "$no" ] && [ $((fn + fo)) = "${f3:-x}" ] &&
  pass "WISDOM_PART=near and own: $fn and $fo of wisdom-f32's $f3 checks" ||
  fail "WISDOM_PART=near / own (${fn:-?} near of $nn, ${fo:-?} own of $no; wisdom-f32 ${f3:-?})"
# GPU_JOBS: the sections as processes at once (tests/gpu/jobs.sh) fail the same checks the serial
# run does (wisdom's arch check once for each dtype's half), each section a line in sections.txt.
read -r grc p f s <<<"$(gpu 0 GPU_JOBS=3)"
nsec=$(grep -c . "$tmp/stub-0/logs/sections.txt")
[ "$grc" = 1 ] && [ "${p:-x}" = 0 ] && [ "${s:-x}" = 0 ] && [ "${f:-0}" -ge "$total" ] && [ "$f" -le $((total + 1)) ] && [ "$nsec" = 31 ] &&
  pass "GPU_JOBS=3: all $f checks fail, 31 sections each a line" ||
  fail "GPU_JOBS=3 (exit $grc; ${p:-?} passed, ${f:-?} failed, ${s:-?} skipped, serial $total; $nsec section lines)" "$(tail -n 5 "$tmp/out-0")"
# GPU_ONLY=layouts-tb (a part of layouts) with GPU_JOBS runs that part, as the serial run does.
read -r grc p ft s <<<"$(gpu 0 GPU_ONLY=layouts-tb)"
read -r grc p fj s <<<"$(gpu 0 GPU_ONLY=layouts-tb GPU_JOBS=2)"
[ "${ft:-0}" -gt 0 ] && [ "$fj" = "$ft" ] && pass "GPU_ONLY=layouts-tb GPU_JOBS=2: its $fj checks, as serially" ||
  fail "GPU_ONLY=layouts-tb GPU_JOBS=2 (${fj:-?} checks failed, serially ${ft:-?})" "$(tail -n 5 "$tmp/out-0")"
# GPU_DEADLINE: an engine that takes 2 s a call; no section starts after 1 s, those left skipped by
# name (the longest first: verify and f64 start, lanes and device do not).
d=$tmp/stub-slow
stub "$d" "sleep 2; exit 0"
env ENGINE_BIN="$d/engine" GPU_LOG_DIR="$d/logs" GPU_JOBS=2 GPU_DEADLINE=1 GPU_ONLY="device verify f64 lanes" \
  bash tests/gpu.sh >"$tmp/out-slow" 2>&1
nlate=$(grep -c '^  SKIP  section \(lanes\|device\) (not started: GPU_DEADLINE=1 s passed)$' "$tmp/out-slow")
[ "$nlate" = 2 ] && grep -q '^  verify ' "$tmp/out-slow" && grep -q '^  f64 ' "$tmp/out-slow" &&
  pass "GPU_DEADLINE=1: the two sections started ran, the two left are skipped by name" ||
  fail "GPU_DEADLINE=1 ($nlate of 2 sections skipped by name)" "$(tail -n 8 "$tmp/out-slow")"
# Stopped by a time limit (SIGTERM): the sections still running are stopped with their engines
# (a stub that would sleep 30 s: one left running is found), each named unfinished with its counts
# so far, and the summary is printed.
d=$tmp/stub-stop
stub "$d" "sleep 30; exit 0"
timeout 4 env ENGINE_BIN="$d/engine" GPU_LOG_DIR="$d/logs" GPU_JOBS=3 GPU_ONLY="verify f64 lanes" bash tests/gpu.sh \
  >"$tmp/out-stop" 2>&1
sleep 1
# Processes whose command line names the stub (no procps needed; [e] keeps grep from finding itself).
left=$(grep -l -a -e "$d/engin[e]" /proc/[0-9]*/cmdline 2>/dev/null | wc -l)
nun=$(grep -cE '^  (verify|f64|lanes) +[0-9]+ s  unfinished: 0 passed, 0 failed so far$' "$tmp/out-stop")
[ "$nun" = 3 ] && grep -qE '^0 passed, 3 failed, 0 skipped$' "$tmp/out-stop" && [ "$left" = 0 ] &&
  pass "stopped by a time limit: the 3 running sections named unfinished, the summary printed, no engine left" ||
  fail "stopped by a time limit ($nun of 3 sections named unfinished, $left engines left)" "$(tail -n 6 "$tmp/out-stop")"
# The verify checks judge `engine verify --format jsonl`'s rows themselves (tests/gpu.sh's
# verify_judged and check_verify): a log with the right summary but no rows, or too few, or a row
# past the screen's tolerance, NaN, or beyond its class's bound, must fail; rows within all pass.
eval "$(sed -n '/^verify_summary()/,/^}/p; /^verify_judged()/,/^}/p; /^check_verify()/,/^}/p' tests/gpu.sh)"
# vrow STATUS MAX_RATIO NONFINITE ERR_MAX ERR_MEAN REF_MAX REF_MEAN: one row as run.c's verify_row writes it
vrow() {
  printf '{"config":"t[BM=64,BN=64]","dtype":"f32","M":127,"N":129,"K":131,"shape":"127x129x131","beta":0.0,"status":"%s","max_ratio":%s,"bad":0,"checked":16383,"nonfinite":%s,"class":"f32","err_max_u":%s,"err_mean_u":%s,"ref_err_max_u":%s,"ref_err_mean_u":%s,"switches":"EVEC_C=1 OP_TA=0"}\n' "$@"
}
# judged NAME WANT(ok|FAIL) ROWS LINE...: check_verify over a log of these lines, whether it passed
judged() {
  local name=$1 want=$2 rows=$3 got
  shift 3
  printf '%s\n' "$@" >"$tmp/vlog"
  got=$( (PASSED=0 FAILED=0 check_verify x "$tmp/vlog" 0 "$rows") | sed -n 's/^  \(ok\|FAIL\) .*/\1/p')
  [ "$got" = "$want" ] && pass "check_verify: $name" || fail "check_verify: $name (got ${got:-nothing}, expected $want)" "$(cat "$tmp/vlog")"
}
good=$(vrow ok 0.013 0 7.5 0.3 7.4 0.28)
sum2="verify: 2 passed, 0 failed, 0 errors"
judged "two good rows and their summary pass" ok 2 "$good" "$good" "$sum2"
judged "the summary alone fails" FAIL 2 "$sum2"
judged "one row short fails" FAIL 2 "$good" "$sum2"
judged "a row past the screen's tolerance fails" FAIL 2 "$good" "$(vrow ok 1.5 0 7.5 0.3 7.4 0.28)" "$sum2"
judged "a row with NaN (null, nonfinite) fails" FAIL 2 "$good" "$(vrow ok null 3 null null 7.4 0.28)" "$sum2"
judged "a row beyond the class's max bound fails" FAIL 2 "$good" "$(vrow ok 0.2 0 31.0 0.3 7.4 0.28)" "$sum2"
judged "a row beyond the class's mean bound fails" FAIL 2 "$good" "$(vrow ok 0.2 0 7.5 4.7 7.4 0.28)" "$sum2"
judged "a row the engine calls FAIL fails" FAIL 2 "$good" "$(vrow FAIL 0.2 0 7.5 0.3 7.4 0.28)" "$sum2"
judged "rows at the bounds pass" ok 2 "$(vrow ok 1 0 30.8 4.56 7.4 0.28)" "$good" "$sum2"
# A row run on a second worker after a stalled set-up (run.c call()) passes, and the check says so.
retried="${good%\}},\"setup_retried\":\"the set-up made no progress in 60 s\"}"
printf '%s\n' "$good" "$retried" "$sum2" >"$tmp/vlog"
got=$( (PASSED=0 FAILED=0 check_verify x "$tmp/vlog" 0 2) | grep -c '^  ok    x (2 rows; 1 set up again after a stall)$')
[ "$got" = 1 ] && pass "check_verify: a row set up again after a stall passes, counted in the check's name" ||
  fail "check_verify: a row set up again after a stall" "$( (PASSED=0 FAILED=0 check_verify x "$tmp/vlog" 0 2) 2>&1)"
summary
