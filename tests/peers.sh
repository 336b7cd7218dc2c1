#!/usr/bin/env bash
# bench/peers.py without a GPU (or torch): --dry-run (the default shapes, each line's GFLOP 2 m n k,
# the libraries and the Triton configs), its refusals of bad arguments and data files (exit 2, one
# line), --table over a synthetic data file (x SGEMM, the per-library geometric means and minima,
# issue 40's ratios, worked out here by awk, not by peers.py), and a --cli run with the fake worker
# standing in for the GPU (engine bench's rows, its cuBLAS the yardstick where torch is missing).
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
B=${BUILD:-build} P="python3 bench/peers.py"

echo "== --dry-run"
$P --dry-run >"$T/dry" 2>"$T/err"
check_rc "--dry-run" 0 $? "$(cat "$T/err")"
# The default list as issue 40 asks: squares 2048, 4096, 8192; the three transformer shapes at NT.
for s in "2048x2048x2048 NN" "4096x4096x4096 NN" "8192x8192x8192 NN" "128x4096x11008 NT" "2048x11008x4096 NT" \
  "8192x4096x4096 NT"; do
  grep -q "^  $s: " "$T/dry" && pass "the default list holds $s" || fail "the default list holds $s" "$(cat "$T/dry")"
done
awk '/^  [0-9]+x[0-9]+x[0-9]+ (NN|NT|TN): / {
  split($1, d, "x"); want = sprintf("%.1f", 2 * d[1] * d[2] * d[3] / 1e9); n++
  if ($3 != want) { print $1 ": " $3 " GFLOP, want " want; bad++ } }
  END { if (n < 9) print "only " n " shapes"; exit (bad > 0 || n < 9) }' "$T/dry" >"$T/gf"
check_rc "each shape's GFLOP is 2 m n k (at least 9 shapes)" 0 $? "$(cat "$T/gf")"
for lib in cublas cublas_tf32 engine engine:tc32_3x engine:tc32_1x triton_tf32x3 triton_tf32 triton_ieee; do
  grep -q "^  $lib: class " "$T/dry" && pass "library $lib" || fail "library $lib" "$(cat "$T/dry")"
done
grep -q '^  engine:tc32_1x: class tf32 ' "$T/dry" && grep -q '^  engine:tc32_3x: class f32 ' "$T/dry" &&
  pass "a forced config's class comes from its file (tc32_1x: tf32)" || fail "tc32_1x is class tf32" "$(cat "$T/dry")"
n=$(grep -c '^  BM=[0-9]*,BN=[0-9]*,BK=[0-9]*,GM=[0-9]*,W=[0-9]*,S=[0-9]*: [0-9]* KiB' "$T/dry")
[ "$n" -ge 4 ] && pass "the Triton configs are listed ($n)" || fail "the Triton configs are listed" "$n"
# Every Triton config's FP32 stages fit the H100's 227 KiB of shared memory.
big=$(awk '/^  BM=.*KiB/ { if ($2 + 0 > 227) print }' "$T/dry")
[ -z "$big" ] && pass "every Triton config fits 227 KiB" || fail "every Triton config fits 227 KiB" "$big"
$P --dry-run --cli --shapes 64x64x64,32x16x8:NT --libs engine,triton_ieee >"$T/dry2" 2>&1
check_rc "--dry-run --cli --shapes --libs" 0 $? "$(cat "$T/dry2")"
grep -q '^2 shapes, 4 libraries (cublas, engine, triton_ieee, engine_cli)' "$T/dry2" &&
  grep -q 'cli: .*engine bench --auto --dtype f32 --op NN --shapes 64x64x64 ' "$T/dry2" &&
  grep -q 'cli: .*--op NT --shapes 32x16x8 ' "$T/dry2" &&
  pass "cuBLAS strict always runs; --cli: one engine bench per op" || fail "--libs and --cli" "$(cat "$T/dry2")"

echo "== bad input: exit 2, one line"
refused() { # NAME PATTERN ARGS...: peers.py ARGS exits 2 with one line on stderr matching PATTERN
  local name=$1 pat=$2
  shift 2
  $P "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  if [ "$rc" = 2 ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -q -- "$pat" "$T/err"; then pass "$name"
  else fail "$name (exit $rc)" "$(cat "$T/err" "$T/out")"; fi
}
refused "a shape of two sides" '--shapes: "4096x4096" is not MxNxK' --dry-run --shapes 4096x4096
refused "op TT" 'op must be one of NN, NT, TN, got TT' --dry-run --shapes 8x8x8:TT
refused "a side of 0" 'every side must be at least 1' --dry-run --shapes 0x8x8
refused "an unknown library" '--libs: unknown library "cublaz"' --dry-run --libs cublaz
refused "a config that does not exist" '--libs: engine:nonesuch: no config' --dry-run --libs engine:nonesuch
refused "--runs 0" '--runs must be at least 1' --dry-run --runs 0
refused "--table of a missing file" "$T/none.jsonl: cannot read" --table "$T/none.jsonl"
echo '{"shape": "8x8x8", "op": "NN"}' >"$T/nolib.jsonl"
refused "--table: a row with no lib" "$T/nolib.jsonl:1: not a peers row (no lib)" --table "$T/nolib.jsonl"
echo '{"shape": "8x8x8", "op": "NN", "lib": "cublas", "ms": "fast"}' >"$T/badms.jsonl"
refused "--table: ms a string" "$T/badms.jsonl: row 1 (8x8x8 cublas): ms: must be a non-negative number" --table "$T/badms.jsonl"
: >"$T/empty.jsonl"
refused "--table: an empty file" "$T/empty.jsonl: no rows" --table "$T/empty.jsonl"
# A run with neither torch nor --cli has nothing to time (where torch is installed but no GPU is,
# it says that instead).
if python3 -c 'import torch' 2>/dev/null; then
  refused "a run without a GPU" 'no CUDA device' --shapes 8x8x8
else
  refused "a run without torch" 'torch is not installed.*nothing to run' --shapes 8x8x8
fi

echo "== --table from a data file"
# Two shapes. Strict cuBLAS 2.0 ms and 4.0 ms; the other libraries' ms below; engine:tc32_3x holds
# an error at the second shape (no time: left out of its means); triton_tf32 was skipped.
row() { # SHAPE OP LIB CLASS MS ERR_FRO [ERROR]
  printf '{"shape": "%s", "m": 1, "n": 1, "k": 1, "op": "%s", "lib": "%s", "class": "%s", "ms": %s, "tflops": 1.0, "err_fro": %s, "err_max": 2e-06, "config": "c", "error": %s, "device": "NVIDIA H200", "date": "2026-11-28"}\n' \
    "$1" "$2" "$3" "$4" "$5" "$6" "${7:-null}"
}
MS="cublas:2.0:4.0 cublas_tf32:1.0:1.6 engine:1.6:3.2 engine:tc32_3x:1.25:null triton_tf32x3:1.0:2.5 engine:tc32_1x:0.8:2.0"
{
  for e in $MS; do
    lib=${e%:*:*} rest=${e#$lib:}
    a=${rest%:*} b=${rest#*:}
    cls=f32
    case $lib in *tf32 | *1x) cls=tf32 ;; esac
    row 4096x4096x4096 NN "$lib" "$cls" "$a" 1e-06
    if [ "$b" = null ]; then row 128x4096x11008 NT "$lib" "$cls" null null '"RuntimeError: boom"'
    else row 128x4096x11008 NT "$lib" "$cls" "$b" 3e-04; fi
  done
  echo '{"lib": "triton_tf32", "skip": "triton is not installed", "device": "NVIDIA H200", "date": "2026-11-28"}'
} >"$T/data.jsonl"
$P --table "$T/data.jsonl" >"$T/table" 2>"$T/err"
check_rc "--table DATA" 0 $? "$(cat "$T/err")"
# x SGEMM per row: strict cuBLAS's ms / the row's ms, at each shape.
for e in $MS; do
  lib=${e%:*:*} rest=${e#$lib:}
  a=${rest%:*} b=${rest#*:}
  for sh in "4096x4096x4096 NN 2.0 $a" "128x4096x11008 NT 4.0 $b"; do
    set -- $sh
    [ "$4" = null ] && continue
    want=$(awk -v c="$3" -v t="$4" 'BEGIN { printf "%.3f", c / t }')
    grep -q "^| $1 | $2 | $lib | [a-z0-9]* | [0-9.]* | [0-9.]* | $want | " "$T/table" && pass "$lib at $1: $want x SGEMM" ||
      fail "$lib at $1: $want x SGEMM" "$(grep "| $lib |" "$T/table")"
  done
  # Per library: the geometric mean and the minimum over the shapes with a time.
  want=$(awk -v a="$a" -v b="$b" 'BEGIN { x = 2.0 / a; if (b == "null") { printf "1 | %.3f | %.3f", x, x; exit }
    y = 4.0 / b; printf "2 | %.3f | %.3f", sqrt(x * y), (x < y ? x : y) }')
  grep -q "^| $lib | [a-z0-9]* | $want | " "$T/table" && pass "$lib: shapes | geomean | min = $want" ||
    fail "$lib: shapes | geomean | min = $want" "$(grep "^| $lib |" "$T/table")"
done
grep -q '^| 128x4096x11008 | NT | engine:tc32_3x | .*RuntimeError: boom |$' "$T/table" && pass "a row's error is shown" ||
  fail "a row's error is shown" "$(cat "$T/table")"
# Issue 40's ratios: tc32_3x over Triton tf32x3 at 4096 (1.0 / 1.25), nothing at the second shape;
# tc32_1x over cuBLAS TF32 (1.0 / 0.8 and 1.6 / 2.0).
grep -q '^| 4096x4096x4096 | NN | 0.800 | 0.625 | 1.250 |$' "$T/table" &&
  grep -q '^| 128x4096x11008 | NT | - | 0.781 | 0.800 |$' "$T/table" &&
  grep -q '^| geomean / min | | 0.800 / 0.800 | 0.699 / 0.625 | 1.000 / 0.800 |$' "$T/table" &&
  pass "issue 40's ratios per shape, their geomean and minimum" || fail "issue 40's ratios" "$(sed -n '/issue 40/,$p' "$T/table")"
grep -q '^skipped: triton_tf32: triton is not installed$' "$T/table" && pass "a skipped library is said, with why" ||
  fail "a skipped library is said" "$(tail -3 "$T/table")"
grep -q '^### peers: 2 shapes (NVIDIA H200, 2026-11-28;' "$T/table" && pass "the title names the device and date" ||
  fail "the title" "$(head -1 "$T/table")"

echo "== a --cli run with the fake worker (no torch needed)"
if [ -x "$B/engine" ]; then
  ENGINE_WORKER=$PWD/tests/fake_worker.py XDG_CACHE_HOME=${XDG_CACHE_HOME:-$T/xdg} DEVICE="Fake GPU 0" \
    ENGINE_ARGS="--arch sm_90" ENGINE_BIN=$B/engine \
    $P --cli --libs engine_cli --shapes 512x512x512,128x4096x1100:NT,96x96x96 --runs 2 --out "$T/cli.jsonl" >"$T/cli.out" 2>&1
  rc=$?
  if python3 -c 'import torch' 2>/dev/null; then
    check_rc "--cli where torch has no GPU: exit 2" 2 $rc "$(cat "$T/cli.out")"
  else
    check_rc "--cli without torch: engine bench alone" 0 $rc "$(cat "$T/cli.out")"
    python3 - "$T/cli.jsonl" <<'EOF' && pass "a row per shape from engine bench, with its config and cuBLAS time" ||
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
cli = [r for r in rows if r["lib"] == "engine_cli"]
assert [(r["shape"], r["op"]) for r in cli] == [("512x512x512", "NN"), ("96x96x96", "NN"), ("128x4096x1100", "NT")], cli
for r in cli:
    assert r["ms"] > 0 and r["cublas_ms"] > 0 and r["config"] and not r["error"], r
    assert r["device"] == "Fake GPU 0", r
skips = {r["lib"] for r in rows if r.get("skip")}
assert skips == {"cublas"}, skips  # the yardstick is skipped with its reason; nothing else was asked
EOF
      fail "engine_cli rows" "$(cat "$T/cli.jsonl")"
    $P --table "$T/cli.jsonl" >"$T/cli.table" 2>&1
    sed -n '/^### peers/,$p' "$T/cli.out" | cmp -s - "$T/cli.table" && pass "--table of the run's file prints the run's tables" ||
      fail "--table of the run's file prints the run's tables" "$(diff <(sed -n '/^### peers/,$p' "$T/cli.out") "$T/cli.table")"
    grep -q '^| engine_cli | f32 | 3 | ' "$T/cli.table" && pass "engine bench's own cuBLAS is the yardstick without torch" ||
      fail "x SGEMM from engine bench's cuBLAS" "$(cat "$T/cli.table")"
  fi
else
  skip "--cli with the fake worker" "no $B/engine: run make"
fi

echo "== bench/yardstick.py: which cuBLAS is the yardstick (no GPU: --dry-run and bad input)"
Y="python3 bench/yardstick.py"
$Y --dry-run --shapes 64x64x65536:TN:f64,96x96x50000:TN:f64,2048x2048x2048:NN:f32 >"$T/y.out" 2>"$T/y.err"
check_rc "yardstick --dry-run" 0 $? "$(cat "$T/y.err")"
# One engine bench per dtype and op, in each math: the two TN f64 shapes share a command.
[ "$(grep -c '^ENGINE_CUBLAS_MATH=' "$T/y.out")" = 4 ] &&
  grep -qx 'ENGINE_CUBLAS_MATH=default .*/engine bench --auto --dtype f64 --op TN --shapes 64x64x65536,96x96x50000 --runs 10 --format jsonl' "$T/y.out" &&
  grep -qx 'ENGINE_CUBLAS_MATH=pedantic .*/engine bench --auto --dtype f32 --op NN --shapes 2048x2048x2048 --runs 10 --format jsonl' "$T/y.out" &&
  pass "...one bench per dtype and op, pedantic and default" || fail "...one bench per dtype and op, pedantic and default" "$(cat "$T/y.out")"
for bad in 64x64:TN:f64 64x64x64:TT:f64 64x64x64:NN:f16 0x64x64:NN:f32; do
  $Y --dry-run --shapes "$bad" >"$T/y.out" 2>"$T/y.err"
  rc=$?
  [ "$rc" = 2 ] && [ "$(wc -l <"$T/y.err")" = 1 ] && grep -q "^yardstick: --shapes: '$bad' is not" "$T/y.err" && [ ! -s "$T/y.out" ] &&
    pass "yardstick --shapes $bad: exit 2, one line" || fail "yardstick --shapes $bad: exit 2, one line" "exit $rc: $(cat "$T/y.err")"
done

summary
