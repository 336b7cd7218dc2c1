#!/usr/bin/env bash
# bench/workload.py without a GPU (or torch): --dry-run over the shipped workload files (a line per
# call, its FLOP count 2 b m n k), its refusals of broken files (exit 2, one line naming the file and
# the call or field), and --table over a synthetic data file: the geometric means and minima of
# torch time / engine time over the calls that passed, the failed ones counted and left out.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
W="python3 bench/workload.py"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

echo "== --dry-run over bench/workloads/*.json"
$W --dry-run bench/workloads/*.json >"$T/dry" 2>"$T/err"
check_rc "--dry-run bench/workloads/*.json" 0 $? "$(cat "$T/err")"
# What each line must say, read from the files here, not from workload.py: NAME[i] CALL: ... GFLOP.
python3 - bench/workloads/*.json >"$T/want" <<'EOF'
import json, sys
for path in sys.argv[1:]:
    d = json.load(open(path))
    for i, c in enumerate(d["calls"]):
        print(f"{d['name']}[{i}] {c['name']}: {2 * c.get('batch', 1) * c['m'] * c['n'] * c['k'] / 1e9:.3f}")
EOF
want=$(wc -l <"$T/want")
sed -n 's/^  \([^ ]*\[[0-9]*\] [^:]*\): .*, \([0-9.]*\) GFLOP, .*/\1: \2/p' "$T/dry" >"$T/got"
got=$(wc -l <"$T/got")
[ "$want" -gt 0 ] && [ "$got" = "$want" ] && pass "a line per call ($got calls)" || fail "a line per call" "$got lines, $want calls"
d=$(diff "$T/want" "$T/got") && pass "each line's GFLOP is 2 b m n k" || fail "each line's GFLOP is 2 b m n k" "$d"
for f in bench/workloads/*.json; do
  n=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["calls"]))' "$f")
  [ "$n" -ge 20 ] && [ "$n" -le 60 ] && pass "$f: $n calls (20-60)" || fail "$f: 20-60 calls" "$n"
done
# A call's A, B and C under 1 GiB: with the FP64 reference's copies beside them, under 4 GiB.
big=$(awk '/ MiB$/ { mib = $(NF - 1); if (mib + 0 > 1024) print }' "$T/dry")
[ -z "$big" ] && pass "every call's operands under 1 GiB" || fail "every call's operands under 1 GiB" "$big"
$W --dry-run >"$T/dry2" 2>&1
check_rc "--dry-run with no files: bench/workloads/*.json" 0 $?
[ "$(grep -c 'GFLOP, ' "$T/dry2")" = "$want" ] && pass "...the same calls" || fail "...the same calls" "$(tail -n 1 "$T/dry2")"

echo "== broken files: exit 2, one line naming the file and what is wrong"
good='{"name": "ok", "dtype": "f32", "calls": [{"name": "a", "m": 8, "n": 8, "k": 8, "op": "NN"}]}'
refused() { # NAME NEEDLE PATTERN FILE_TEXT: --dry-run on a file of that text exits 2 with one line
  # FILE:LINE:COL: PATTERN, LINE:COL where NEEDLE first stands in the text (found here by awk)
  local name=$1 pat=$3 f="$T/$(echo "$1" | tr -c 'a-z0-9\n' _).json" at
  printf '%s\n' "$4" >"$f"
  at=$(awk -v n="$2" '{ i = index($0, n); if (i) { print NR ":" i; exit } }' "$f")
  $W --dry-run "$f" >"$T/out" 2>"$T/err"
  local rc=$? lines
  lines=$(wc -l <"$T/err")
  if [ "$rc" = 2 ] && [ "$lines" = 1 ] && [ -n "$at" ] && grep -q -- "^$f:$at: $pat" "$T/err" && [ ! -s "$T/out" ]; then pass "$name"
  else fail "$name (exit $rc, $lines lines, want $f:$at)" "$(cat "$T/err" "$T/out")"; fi
}
printf '%s\n' "$good" >"$T/good.json"
$W --dry-run "$T/good.json" >/dev/null 2>&1
check_rc "the good file the broken ones are made from passes" 0 $?
refused "unknown call key" '"mm"' 'calls\[0\] (a): unknown key "mm"' \
  '{"name": "x", "dtype": "f32", "calls": [{"name": "a", "m": 8, "mm": 8, "n": 8, "k": 8, "op": "NN"}]}'
refused "unknown top-level key" '"call"' 'unknown key "call"' '{"name": "x", "dtype": "f32", "calls": [], "call": []}'
refused 'op "XY"' '"XY"' 'calls\[1\] (b): op: must be one of NN, NT, TN, got "XY"' \
  '{"name": "x", "dtype": "f32", "calls": [{"name": "a", "m": 8, "n": 8, "k": 8, "op": "NN"},
    {"name": "b", "m": 8, "n": 8, "k": 8, "op": "XY"}]}'
refused "m = 0" '0,' 'calls\[0\] (a): m: must be a positive integer, got 0' \
  '{"name": "x", "dtype": "f32", "calls": [{"name": "a", "m": 0, "n": 8, "k": 8, "op": "NN"}]}'
refused "k a string" '"8"' 'calls\[0\] (a): k: must be a positive integer, got "8"' \
  '{"name": "x", "dtype": "f32", "calls": [{"name": "a", "m": 8, "n": 8, "k": "8", "op": "NN"}]}'
refused "batch true" 'true' 'calls\[0\] (a): batch: must be a positive integer, got true' \
  '{"name": "x", "dtype": "f32", "calls": [{"name": "a", "m": 8, "n": 8, "k": 8, "op": "NN", "batch": true}]}'
refused "beta a string" '"1"' 'calls\[0\] (a): beta: must be a finite number' \
  '{"name": "x", "dtype": "f64", "calls": [{"name": "a", "m": 8, "n": 8, "k": 8, "op": "NN", "beta": "1"}]}'
refused "missing op" '{"name": "a"' 'calls\[0\] (a): op: missing' '{"name": "x", "dtype": "f32", "calls": [{"name": "a", "m": 8, "n": 8, "k": 8}]}'
refused "a call not an object" '[8' 'calls\[0\]: must be an object' '{"name": "x", "dtype": "f32", "calls": [[8, 8, 8]]}'
refused "two calls of one name" '"a", "m": 9' 'calls\[1\] (a): name: a second call' \
  '{"name": "x", "dtype": "f32", "calls": [{"name": "a", "m": 8, "n": 8, "k": 8, "op": "NN"},
    {"name": "a", "m": 9, "n": 8, "k": 8, "op": "NN"}]}'
refused 'dtype "bfloat16"' '"bfloat16"' 'dtype: must be one of f32, f64, bf16, f16, got "bfloat16"' '{"name": "x", "dtype": "bfloat16", "calls": []}'
refused 'dtype "f8"' '"f8"' 'dtype: must be one of f32, f64, bf16, f16, got "f8"' '{"name": "x", "dtype": "f8", "calls": []}'
refused "no calls" '[]' 'calls: empty' '{"name": "x", "dtype": "f32", "calls": []}'
refused "malformed JSON" '}' 'not JSON: ' '{"name": "x", "dtype": "f32", "calls": [}'
refused "a duplicate key" '"m": 9' 'duplicate key "m"' \
  '{"name": "x", "dtype": "f32", "calls": [{"name": "a", "m": 8, "m": 9, "n": 8, "k": 8, "op": "NN"}]}'
# engine's limits (engine/core/shape.h, wisdom.h): a side at most 2^24, a matrix at most 2^40
# elements, a batch at most 65535; refused before torch is asked for the memory.
refused "m past 2^24" '16777217' 'calls\[0\] (a): m: 16777217 is more than 16777216' \
  '{"name": "x", "dtype": "f32", "calls": [{"name": "a", "m": 16777217, "n": 8, "k": 8, "op": "NN"}]}'
refused "M*N past 2^40" '16777216, "k"' 'calls\[0\] (a): m\*n = 281474976710656 elements exceeds 2^40' \
  '{"name": "x", "dtype": "f32", "calls": [{"name": "a", "m": 16777216, "n": 16777216, "k": 1, "op": "NN"}]}'
refused "batch past 65535" '65536' 'calls\[0\] (a): batch: 65536 is more than 65535' \
  '{"name": "x", "dtype": "f32", "calls": [{"name": "a", "m": 8, "n": 8, "k": 8, "op": "NN", "batch": 65536}]}'
# A place on a later line: the unknown key on line 3 of a file laid out as the shipped ones are.
refused "a place on line 3" '"alhpa"' 'calls\[1\] (b): unknown key "alhpa"' \
  '{"name": "x", "dtype": "f32", "calls": [
    {"name": "a", "m": 8, "n": 8, "k": 8, "op": "NN"},
    {"name": "b", "m": 8, "n": 8, "k": 8, "op": "NN", "alhpa": 2}]}'
printf '%s\n' '{"name": "x", "dtype": "f32", "calls": [{"name": "a", "m": 0, "n": 8, "k": 8, "op": "NN"}]}' >"$T/bad.json"
$W --dry-run "$T/good.json" "$T/bad.json" >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" = 2 ] && grep -q "^$T/bad.json:1:60: calls\[0\] (a): m:" "$T/err" && [ ! -s "$T/out" ] &&
  pass "a good file and a bad one: exit 2, nothing run" || fail "a good file and a bad one: exit 2" "exit $rc: $(cat "$T/err")"
$W --dry-run "$T/good.json" "$T/good.json" >/dev/null 2>"$T/err"
rc=$?
[ "$rc" = 2 ] && grep -q 'name: "ok" is also the name of' "$T/err" && pass "two files of one workload name: exit 2" ||
  fail "two files of one workload name: exit 2" "exit $rc: $(cat "$T/err")"
$W --dry-run "$T/nonesuch.json" >/dev/null 2>"$T/err"
rc=$?
[ "$rc" = 2 ] && grep -q "^$T/nonesuch.json: cannot read" "$T/err" && pass "a missing file: exit 2" ||
  fail "a missing file: exit 2" "exit $rc: $(cat "$T/err")"

echo "== the half types: bf16 and f16"
# Each file a type's: its calls say it, its operands are 2 bytes an element (512 x 512 x 512: three
# 512 x 512 matrices, 1.5 MiB), and the bound is the library's class (accuracy.h): FP32 sums
# (2^-24 (2 sqrt(k) + 4)) beside the result's one rounding to the type (2^-8 bf16, 2^-11 f16).
for dt in bf16 f16; do
  printf '{"name": "h_%s", "dtype": "%s", "calls": [{"name": "a", "m": 512, "n": 512, "k": 512, "op": "NT"}]}\n' "$dt" "$dt" >"$T/$dt.json"
  $W --dry-run "$T/$dt.json" >"$T/out" 2>"$T/err"
  check_rc "--dry-run of an $dt file" 0 $? "$(cat "$T/err")"
  grep -qxF "  h_$dt[0] a: $dt NT 512x512x512, 0.268 GFLOP, 2 MiB" "$T/out" && pass "...its call: $dt, 2-byte operands" ||
    fail "...its call: $dt, 2-byte operands" "$(cat "$T/out")"
done
for f in bench/workloads/*_bf16.json bench/workloads/judge/*_bf16.json; do
  grep -q '"dtype": "bf16"' "$f" && pass "$f: a bf16 workload" || fail "$f: a bf16 workload"
done
for pair in llama7b attention; do # the BF16 files make the FP32 files' calls
  python3 -c 'import json, sys; a, b = (json.load(open(p))["calls"] for p in sys.argv[1:]); sys.exit(a != b)' \
    "bench/workloads/${pair}_f32.json" "bench/workloads/${pair}_bf16.json" &&
    pass "${pair}_bf16.json: the calls of ${pair}_f32.json" || fail "${pair}_bf16.json: the calls of ${pair}_f32.json"
done
got=$(cd bench && python3 -c 'import workload as w; print(" ".join("%.6e" % w.tolerance(d, k) for d in ("f32", "f64", "bf16", "f16") for k in (1, 4096)))')
want=$(awk 'BEGIN { split("1 4096", ks); n = split("24:0 53:0 24:8 24:11", ds)
  for (i = 1; i <= n; i++) { split(ds[i], e, ":"); for (j = 1; j <= 2; j++) {
    t = 2 ^ -e[1] * (2 * sqrt(ks[j]) + 4) + (e[2] ? 2 ^ -e[2] : 0); printf "%s%.6e", (i + j > 2 ? " " : ""), t } } }')
[ "$got" = "$want" ] && pass "the bounds: u_h + u (2 sqrt(k) + 4), u_h 0 / 0 / 2^-8 / 2^-11" || fail "the bounds" "got $got, want $want"

echo "== --table from a data file"
# Two workloads. wl_a (f32): five calls with both times, of which one failed its check and one
# holds an error, so three count; one call of NaN results; wl_b (f64): two calls that engine handed
# to cuBLAS (explain's path), counted in "on cuBLAS" and still in the means. The values are
# chosen here and the expected means worked out here by awk, not by workload.py.
row() { # WORKLOAD DTYPE CALL ENGINE_MS TORCH_MS ENGINE_Q TORCH_Q ENGINE_OK ERR ERROR [PATH]
  printf '{"workload": "%s", "call": "%s", "dtype": "%s", "op": "NN", "m": 64, "n": 64, "k": 64, "batch": 1, "alpha": 1, "beta": 0, "engine_ms_call": %s, "torch_ms_call": %s, "engine_ms_queued": %s, "torch_ms_queued": %s, "engine_host_us": 12.5, "torch_host_us": 8.4, "engine_err": %s, "torch_err": 1e-07, "engine_ok": %s, "torch_ok": true, "tol": 1e-06, "label": "warptile_db", "path": %s, "device": "NVIDIA H100 80GB HBM3", "date": "2026-11-28", "error": %s}\n' \
    "$1" "$3" "$2" "$4" "$5" "$6" "$7" "$9" "$8" "${11:-null}" "${10}"
}
A_CALL="1.0:2.0 2.0:1.0 0.5:2.0" # engine ms : torch ms of wl_a's three passing calls (ratios 2, 0.5, 4)
A_QUEUED="0.8:1.0 1.0:1.5 2.0:1.0"
B_CALL="3.0:3.3 1.0:0.9"
B_QUEUED="1.0:1.25 4.0:3.0"
{
  set -- $A_QUEUED
  i=0
  for p in $A_CALL; do
    q=$1
    shift
    row wl_a f32 "call $i" "${p%:*}" "${p#*:}" "${q%:*}" "${q#*:}" true 2e-07 null
    i=$((i + 1))
  done
  row wl_a f32 "wrong" 1.0 100.0 1.0 100.0 false 0.5 null
  row wl_a f32 "error" 1.0 100.0 1.0 100.0 true 1e-07 '"engine: EngineError: ENGINE_ERROR_CONFIG: no wisdom"'
  row wl_a f32 "nan" 1.0 100.0 1.0 100.0 false null null
  set -- $B_QUEUED
  i=0
  for p in $B_CALL; do
    q=$1
    shift
    row wl_b f64 "call $i" "${p%:*}" "${p#*:}" "${q%:*}" "${q#*:}" true 1e-16 null '"cublas"'
    i=$((i + 1))
  done
  printf '{"workload": "wl_b", "call": "trunc'  # an interrupted run's last line
} >"$T/data.jsonl"

means() { # PAIRS...: "geomean min" of torch / engine over engine:torch pairs, %.3f as the table prints
  printf '%s\n' "$@" | awk -F: '{ r = $2 / $1; s += log(r); n++; if (n == 1 || r < m) m = r }
    END { printf "%.3fx | %.3fx\n", exp(s / n), m }'
}
want_a="| wl_a | f32 | 6 | 3 | 0 | 3 | $(means $A_CALL) | $(means $A_QUEUED) |"
want_b="| wl_b | f64 | 2 | 0 | 2 | 2 | $(means $B_CALL) | $(means $B_QUEUED) |"
want_f32="| all f32 | f32 | 6 | 3 | 0 | 3 | $(means $A_CALL) | $(means $A_QUEUED) |"
$W --table "$T/data.jsonl" >"$T/table" 2>"$T/err"
check_rc "--table DATA.jsonl" 0 $? "$(cat "$T/err")"
for want in "$want_a" "$want_b" "$want_f32"; do
  grep -qxF "$want" "$T/table" && pass "summary row: $want" || fail "summary row: $want" "$(grep '^| \(wl_\|all\)' "$T/table")"
done
grep -q "^| all f64 | f64 | 2 | 0 | 2 | 2 |" "$T/table" && pass "a summary row per dtype" || fail "a summary row per dtype" "$(cat "$T/table")"
grep -q '^| wrong | .* | FAIL engine: error 5.0e-01 over 1.0e-06 |$' "$T/table" && pass "a result over its bound: FAIL, the error and the bound" ||
  fail "a result over its bound: FAIL" "$(grep '^| wrong' "$T/table")"
grep -q '^| nan | .* | FAIL engine: NaN or Inf in the result |$' "$T/table" && pass "NaN results: FAIL, never a pass" ||
  fail "NaN results: FAIL" "$(grep '^| nan' "$T/table")"
grep -q '^| error | .* | FAIL engine: EngineError: ENGINE_ERROR_CONFIG: no wisdom |$' "$T/table" && pass "an error: FAIL and its text" ||
  fail "an error: FAIL and its text" "$(grep '^| error' "$T/table")"
# wl_a's call 0: torch 2.0 / engine 1.0 ms; queued 1.0 / 0.8; host 12.5 / 8.4 us.
grep -qxF '| call 0 | NN | 64x64x64 | 2.00x | 1.25x | 12.5 / 8.4 | 2.0e-07 / 1.0e-07 | warptile_db |  |' "$T/table" &&
  pass "a call's row: ratios, host us, errors, config" || fail "a call's row" "$(grep '^| call 0' "$T/table")"
grep -q '^| call 1 | NN | 64x64x64 | .* | warptile_db (cublas) |  |$' "$T/table" && pass "the path beside the config" ||
  fail "the path beside the config" "$(grep '^| call 1' "$T/table")"
[ "$(grep -c '^### ' "$T/table")" = 3 ] && pass "a table per workload and one of means" || fail "a table per workload" "$(grep '^###' "$T/table")"
last=$(($(wc -l <"$T/data.jsonl") + 1)) # the truncated line has no newline
grep -q "data.jsonl:$last: does not parse, skipped" "$T/err" && pass "the truncated last line is said on stderr and skipped" ||
  fail "the truncated last line is said on stderr" "$(cat "$T/err")"
$W --table "$T/data.jsonl" >"$T/table2" 2>/dev/null && cmp -s "$T/table" "$T/table2" && pass "the same table twice" || fail "the same table twice"
$W --table "$T/nonesuch.jsonl" >/dev/null 2>"$T/err"
rc=$?
[ "$rc" = 2 ] && grep -q "nonesuch.jsonl: cannot read" "$T/err" && pass "--table on a missing file: exit 2" || fail "--table on a missing file" "exit $rc"
echo '{"a": 1}' >"$T/other.jsonl"
$W --table "$T/other.jsonl" >/dev/null 2>"$T/err"
rc=$?
[ "$rc" = 2 ] && grep -q "other.jsonl:1: not a workload row" "$T/err" && pass "--table on another kind of rows: exit 2" ||
  fail "--table on another kind of rows" "exit $rc: $(cat "$T/err")"

# The judge files (other models' sizes, never tuned on) are workloads of the same schema.
python3 bench/workload.py --dry-run bench/workloads/judge/*.json >"$T/judge" 2>&1
check_rc "--dry-run bench/workloads/judge/*.json" 0 $? "$(tail -3 "$T/judge")"
n=$(grep -c '^  [a-z0-9_]*\[[0-9]*\] ' "$T/judge")
[ "$n" -ge 50 ] && pass "...a line per judged call ($n)" || fail "...a line per judged call" "$(head -5 "$T/judge")"

echo "== no torch needed"
# --dry-run and --table import torch lazily: with a torch that fails on import they still run.
mkdir -p "$T/fake/torch"
echo 'raise ImportError("torch must not be imported by --dry-run or --table")' >"$T/fake/torch/__init__.py"
PYTHONPATH="$T/fake" $W --dry-run "$T/good.json" >/dev/null 2>"$T/err"
check_rc "--dry-run does not import torch" 0 $? "$(cat "$T/err")"
PYTHONPATH="$T/fake" $W --table "$T/data.jsonl" >/dev/null 2>"$T/err"
check_rc "--table does not import torch" 0 $? "$(cat "$T/err")"
PYTHONPATH="$T/fake" $W "$T/good.json" >/dev/null 2>"$T/err"
rc=$?
[ "$rc" = 2 ] && grep -q '^a run needs torch' "$T/err" && pass "a run without torch: exit 2, one line" ||
  fail "a run without torch: exit 2, one line" "exit $rc: $(cat "$T/err")"

summary
