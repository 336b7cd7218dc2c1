#!/usr/bin/env bash
# The scripts of bench/ that judge numbers, on the CPU: the fake worker (tests/fake_worker.py)
# stands in for the GPU. bench/random_shapes.sh (deterministic, the documented distribution),
# bench/shapes.sh with SEED/RANDOM, bench/oracle.sh, bench/classes.sh (a seed's shapes by class, from a fixture
# data file and run with the fake worker), bench/narrow_f64.sh (its shapes, its candidates compiled, a
# run with the fake worker), and the regression guard bench/regress.sh
# (a baseline written, a run that holds, a slowed run caught, a corrupt baseline refused).
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ENGINE_WORKER=$PWD/tests/fake_worker.py XDG_CACHE_HOME=${XDG_CACHE_HOME:-$tmp/xdg}
B=${BUILD:-build}

echo "== bench/random_shapes.sh"
bash bench/random_shapes.sh 7 300 >"$tmp/r1" && bash bench/random_shapes.sh 7 300 >"$tmp/r2"
check_rc "random_shapes.sh 7 300" 0 $?
cmp -s "$tmp/r1" "$tmp/r2" && pass "the same seed gives the same shapes" || fail "the same seed gives the same shapes"
bash bench/random_shapes.sh 8 300 | cmp -s - "$tmp/r1" && fail "another seed gives other shapes" || pass "another seed gives other shapes"
# The classes overlap (129 is odd and near 128; 128 is a power of two), so each is counted by what only
# it makes: a multiple of 128 (the near class makes one only at offset 0), an odd side more than 3 from
# any power of two or multiple of 64 (only the odd class), an even side that is no multiple of 128
# (only the near class: offsets -2, 0, +2). Seed 7 gives about 39%, 21% and 12% of its sides so; the
# floors are about half that, and a generator that never draws a class gives none or a few percent.
cat >"$tmp/classes.py" <<'PY'
import sys
lines = open(sys.argv[1]).read().split()
assert len(lines) == 300, len(lines)
pow2 = lambda v: any(abs(v - 2 ** e) <= 3 for e in range(15))
near = lambda v: pow2(v) or abs(v - 64 * round(v / 64)) <= 3
sides = []
for l in lines:
    m, n, k = map(int, l.split("x"))
    assert 2 ** 18 <= m * n * k <= 2 ** 36, l
    for v in (m, n, k):
        assert 1 <= v <= 16384, l
        assert v % 128 == 0 or v % 2 == 1 or near(v), (l, v)
        sides.append(v)
only = {"multiple of 128": (sum(v % 128 == 0 for v in sides), 0.2),
        "odd, not near": (sum(v % 2 == 1 and not near(v) for v in sides), 0.1),
        "near, even, no multiple of 128": (sum(v % 2 == 0 and v % 128 != 0 for v in sides), 0.05)}
for cls, (c, floor) in only.items():
    assert c >= floor * len(sides), f"{cls}: {c} of {len(sides)} sides, below {floor:.0%}"
PY
python3 "$tmp/classes.py" "$tmp/r1" 2>/dev/null &&
  pass "300 shapes MxNxK, sides in [1, 16384], M*N*K in [2^18, 2^36], each of the three classes drawn (counted by what only it makes)" ||
  fail "random shapes follow the documented distribution" "$(python3 "$tmp/classes.py" "$tmp/r1" 2>&1 | tail -1)"
# The check itself: a generator that never draws one of the classes fails it.
for c in 0 1 2; do
  others=$(printf '%s\n' 0 1 2 | grep -vx $c | paste -sd, -)
  sed "s/cls = rng.randrange(3)/cls = rng.choice([$others])/" bench/random_shapes.sh >"$tmp/no$c.sh"
  if cmp -s bench/random_shapes.sh "$tmp/no$c.sh"; then
    fail "a generator without class $c: no line 'cls = rng.randrange(3)' in bench/random_shapes.sh to change"
  elif bash "$tmp/no$c.sh" 7 300 >"$tmp/no$c" && ! python3 "$tmp/classes.py" "$tmp/no$c" 2>/dev/null; then
    pass "the class check fails a generator that never draws class $c"
  else
    fail "the class check fails a generator that never draws class $c"
  fi
done
bash bench/random_shapes.sh x 3 >/dev/null 2>&1
check_rc "random_shapes.sh with a seed that is not a number: exit 2" 2 $?

echo "== bench/shapes.sh and bench/oracle.sh on random shapes"
mkdir -p "$tmp/wisdom"
cat >"$tmp/wisdom/fake-gpu-0.json" <<EOF
{"version": 1, "device": "Fake GPU 0", "arch": "sm_90", "entries": [
  {"dtype": "f32", "shape": "512x512x512", "config": "configs/warptile_splitk.json", "set": {"SPLITK": 2, "PDL": 1}, "tflops": 1, "vs_cublas": 1},
  {"dtype": "f32", "shape": "4096x4096x4096", "config": "configs/warptile_db.json", "tflops": 40, "vs_cublas": 0.9}
]}
EOF
SEED=3 RANDOM=4 DTYPES=f32 RUNS=2 OUT=$tmp/shapes ENGINE_ARGS="--arch sm_90 --wisdom $tmp/wisdom" ENGINE_BIN=$B/engine \
  bash bench/shapes.sh >"$tmp/shapes.out" 2>&1
check_rc "SEED=3 RANDOM=4 bench/shapes.sh" 0 $? "$(tail -5 "$tmp/shapes.out")"
bash bench/random_shapes.sh 3 4 | cmp -s - "$tmp/shapes/random-3-4.txt" && grep -q 'f32: 4 shapes: geometric mean' "$tmp/shapes.out" &&
  pass "shapes.sh times the 4 shapes of seed 3" || fail "shapes.sh times the 4 shapes of seed 3" "$(cat "$tmp/shapes.out")"
SEED=3 bash bench/shapes.sh >"$tmp/half.out" 2>&1
check_rc "SEED without RANDOM: exit 2" 2 $? "$(cat "$tmp/half.out")"
SEED=3 RANDOM=4 DTYPES=f32 RUNS=2 OUT=$tmp/oracle WISDOM_FILE=$tmp/wisdom/fake-gpu-0.json ENGINE_ARGS="--arch sm_90" \
  ENGINE_BIN=$B/engine bash bench/oracle.sh >"$tmp/oracle.out" 2>&1
check_rc "SEED=3 RANDOM=4 bench/oracle.sh" 0 $? "$(tail -5 "$tmp/oracle.out")"
n=$(grep -c '"config":"warptile' "$tmp/oracle/shapes-f32.jsonl")
[ "$n" = 8 ] && grep -q 'f32: 4 shapes: geometric mean' "$tmp/oracle.out" &&
  pass "oracle.sh runs both wisdom entries at each of the 4 shapes (8 rows) and keeps the best" ||
  fail "oracle.sh: 8 rows" "$n rows; $(tail -3 "$tmp/oracle.out")"

echo "== bench/leave_one_out.sh"
DEVICE="Fake GPU 0" WISDOM_FILE=$tmp/wisdom/fake-gpu-0.json DTYPES=f32 RUNS=2 OUT=$tmp/loo ENGINE_BIN=$B/engine \
  ENGINE_ARGS="--arch sm_90" PICK_ARGS="--arch sm_90" bash bench/leave_one_out.sh >"$tmp/loo.out" 2>&1
check_rc "leave_one_out.sh" 0 $? "$(tail -5 "$tmp/loo.out")"
grep -q 'f32: leave-one-out over 2 entries: geometric mean' "$tmp/loo.out" && python3 - "$tmp/loo" <<'PY' && pass "each entry left out in turn: the model chooses from the other, both timed at its shape" || fail "leave-one-out rows" "$(cat "$tmp/loo.out")"
import json, os, sys
d = sys.argv[1]
rows = [json.loads(l) for l in open(os.path.join(d, "loo-f32.jsonl"))]
assert [r["shape"] for r in rows] == ["512x512x512", "4096x4096x4096"], rows
for i, r in enumerate(rows):
    w = json.load(open(os.path.join(d, f"wisdom-f32-{i}", "fake-gpu-0.json")))
    assert len(w["entries"]) == 1 and w["entries"][0]["shape"] != r["shape"], w  # the entry itself is out
    assert r["own"]["status"] == "ok" and r["chosen"]["status"] == "ok", r
PY

echo "== bench/pick_cost.sh"
ENGINE_BIN=$B/engine bash bench/pick_cost.sh >"$tmp/pc.out" 2>&1
check_rc "pick_cost.sh" 0 $? "$(cat "$tmp/pc.out")"
grep -qE '^f32: [0-9.]+ us a shape \(median of 3 runs of 64 shapes\)' "$tmp/pc.out" && grep -qE '^f64: [0-9.]+ us a shape' "$tmp/pc.out" &&
  pass "it times engine pick over 64 random shapes per dtype (the figure itself is the bench's to judge)" || fail "pick_cost output" "$(cat "$tmp/pc.out")"

echo "== bench/regress.sh"
reg() { # extra env assignments, then the run; output in $tmp/reg.out
  env DEVICE="Fake GPU 0" WISDOM=$tmp/wisdom CONFIGS="configs/tiled.json configs/warptile_db.json configs/sb10_warptiling.json configs/gemv.json" \
    BASELINE=$tmp/base.jsonl RUNS=2 ENGINE_ARGS="--arch sm_90" ENGINE_BIN=$B/engine OUT=$tmp/regress "$@" \
    bash bench/regress.sh >"$tmp/reg.out" 2>&1
}
reg UPDATE=1
check_rc "UPDATE=1 writes a baseline" 0 $? "$(tail -5 "$tmp/reg.out")"
rows=$(wc -l <"$tmp/base.jsonl")
[ "$rows" = 6 ] && grep -q '"key": "sb10_warptiling 4096x4096x4096"' "$tmp/base.jsonl" &&
  grep -q '"key": "gemv 8192x1x4096"' "$tmp/base.jsonl" &&
  grep -q '"key": "wisdom f32 512x512x512"' "$tmp/base.jsonl" && grep -q '"key": "tiled 2048x2048x2048"' "$tmp/base.jsonl" &&
  pass "the baseline has a row per config (siboehm's at 4096^3, thin.list's at 8192x1x4096, others at 2048^3) and per wisdom entry" ||
  fail "baseline rows" "$rows rows: $(cat "$tmp/base.jsonl")"
reg CHECK=1
check_rc "CHECK=1 against its own baseline: exit 0" 0 $? "$(cat "$tmp/reg.out")"
grep -q 'regress: 6 rows timed, 6 in the baseline: 0 dropped' "$tmp/reg.out" && pass "no row dropped" || fail "no row dropped" "$(cat "$tmp/reg.out")"
reg CHECK=1 FAKE_SLOW=1.2
check_rc "CHECK=1 with every kernel 20% slower: exit 1" 1 $? "$(cat "$tmp/reg.out")"
[ "$(grep -c ' DROP$' "$tmp/reg.out")" = 6 ] && pass "each of the 6 rows is marked DROP" || fail "6 DROP rows" "$(cat "$tmp/reg.out")"
reg FAKE_SLOW=1.2
check_rc "without CHECK a drop is reported, exit 0" 0 $? "$(cat "$tmp/reg.out")"
reg CHECK=1 FAKE_SLOW=1.02
check_rc "2% slower is inside max(3%, 3 x spread): exit 0" 0 $? "$(cat "$tmp/reg.out")"
reg PDL_AB=1
grep -q 'PDL off  PDL on' "$tmp/reg.out" && grep -q '^PDL: ' "$tmp/reg.out" &&
  pass "PDL_AB=1 adds the PDL off / on columns and the PDL summary" || fail "PDL_AB=1 columns" "$(cat "$tmp/reg.out")"
grep -c '"config":"tiled\[PDL=[01]\]"' "$tmp/regress/configs-2048.jsonl" | grep -qx 2 &&
  pass "PDL_AB=1 times each config with --set PDL=0 and PDL=1 in the same run" || fail "PDL twins" "$(grep -o '"config":"[^"]*"' "$tmp/regress/configs-2048.jsonl")"
echo '{"key": broken' >>"$tmp/base.jsonl"
reg CHECK=1
check_rc "a corrupt baseline line: exit 2" 2 $? "$(cat "$tmp/reg.out")"
grep -q "base.jsonl:7: not a baseline row" "$tmp/reg.out" && pass "... naming the file and line" || fail "corrupt baseline named" "$(cat "$tmp/reg.out")"
# Wisdom entries are timed as recorded: at one shape an NN entry, a batch entry and an NT entry are
# three rows (three bench calls: --batch 64, --op NT), named apart in the baseline.
mkdir -p "$tmp/wisdom2"
cat >"$tmp/wisdom2/fake-gpu-0.json" <<EOF
{"version": 1, "device": "Fake GPU 0", "arch": "sm_90", "entries": [
  {"dtype": "f32", "shape": "512x512x512", "config": "configs/warptile_db.json", "tflops": 1, "vs_cublas": 1},
  {"dtype": "f32", "shape": "512x512x512", "batch": 64, "config": "configs/warptile_db.json", "tflops": 1, "vs_cublas": 1},
  {"dtype": "f32", "shape": "512x512x512", "op": "NT", "config": "configs/warptile_db.json", "tflops": 1, "vs_cublas": 1}
]}
EOF
reg UPDATE=1 ONLY=wisdom WISDOM=$tmp/wisdom2 BASELINE=$tmp/base2.jsonl
keys=$(python3 -c 'import json,sys; print(";".join(sorted(json.loads(l)["key"] for l in open(sys.argv[1]))))' "$tmp/base2.jsonl" 2>&1)
[ "$keys" = "wisdom f32 512x512x512;wisdom f32 512x512x512 NT;wisdom f32 512x512x512 batch 64" ] &&
  grep -q '"batch":64' "$tmp/regress/rows.jsonl" && grep -q '"op":"NT"' "$tmp/regress/rows.jsonl" &&
  pass "wisdom entries timed in their own op and batch, one baseline row each" ||
  fail "wisdom entries in their own op and batch" "$keys $(tail -3 "$tmp/reg.out")"
# A stand-in GPU times another device's file (WISDOM_FILE): arch-level on this GPU, each entry exact.
mkdir -p "$tmp/wisdom3"
sed 's/"device": "Fake GPU 0"/"device": "Other GPU"/' "$tmp/wisdom2/fake-gpu-0.json" >"$tmp/wisdom3/other-gpu.json"
reg UPDATE=1 ONLY=wisdom WISDOM=$tmp/wisdom3 BASELINE=$tmp/base3.jsonl
grep -q 'regress: no wisdom file .*/wisdom3/fake-gpu-0.json for this GPU: wisdom rows skipped' "$tmp/reg.out" &&
  pass "without WISDOM_FILE another device's file is not timed (said)" || fail "another device's file without WISDOM_FILE" "$(cat "$tmp/reg.out")"
reg UPDATE=1 ONLY=wisdom WISDOM=$tmp/wisdom3 WISDOM_FILE=$tmp/wisdom3/other-gpu.json BASELINE=$tmp/base3.jsonl
keys=$(python3 -c 'import json,sys; print(";".join(sorted(json.loads(l)["key"] for l in open(sys.argv[1]))))' "$tmp/base3.jsonl" 2>&1)
[ "$keys" = "wisdom f32 512x512x512;wisdom f32 512x512x512 NT;wisdom f32 512x512x512 batch 64" ] &&
  pass "WISDOM_FILE: a stand-in times another device's entries, one row each" || fail "WISDOM_FILE" "$keys $(tail -3 "$tmp/reg.out")"

# bench/layouts.sh, quick mode, its checks skipped (nothing to check on the fake worker): the 12
# f64 rows at 4096^3 in the table and again in the steady-state table, whose requests carry the
# warm-up; the candidates judged against the shipped ld + 1 row; the fastest-run ratio and spread
# columns filled from ms_min and ms_max (the fake's 0.99x and 1.01x: spread 2.0%).
FAKE_LOG=$tmp/lay.req LAYOUTS_CHECKS=0 LAYOUTS_QUICK=1 RUNS=2 STEADY_WARMUP=9 OUT=$tmp/lay ENGINE_ARGS="--arch sm_90" \
  ENGINE_BIN=$B/engine bash bench/layouts.sh >"$tmp/lay.out" 2>&1
check_rc "layouts.sh LAYOUTS_QUICK=1 (fake worker)" 0 $? "$(tail -5 "$tmp/lay.out")"
for t in table table-steady; do
  n=$(grep -c '^f64/4096x4096x4096/[NT]' "$tmp/lay/$t.txt")
  [ "$n" = 12 ] && pass "...$t.txt holds the 12 f64 rows" || fail "...$t.txt holds the 12 f64 rows" "$n: $(cat "$tmp/lay/$t.txt")"
done
grep -qE '^f64/4096x4096x4096/NN/ld\+1/ODD_LD=1 +ok .* 2\.0% +1980  \(A/B: x f64/4096x4096x4096/NN/ld\+1\)$' "$tmp/lay/table.txt" &&
  pass "...ODD_LD judged against the shipped ld + 1 row, with spread and clock" ||
  fail "...ODD_LD judged against the shipped ld + 1 row, with spread and clock" "$(cat "$tmp/lay/table.txt")"
grep -qE '^f64/4096x4096x4096/NT +ok .* met: x NN' "$tmp/lay/table-steady.txt" && pass "...NT's target judged in the steady table" ||
  fail "...NT's target judged in the steady table" "$(cat "$tmp/lay/table-steady.txt")"
n=$(grep -c '"M":4096,.*"warmup":9,' "$tmp/lay.req")
[ "$n" = 12 ] && pass "...the steady rows' 12 requests carry STEADY_WARMUP" || fail "...the steady rows' 12 requests carry STEADY_WARMUP" "$n"

# A tf32-class config (1xTF32) is timed beside cuBLAS FAST_TF32 as well: a cublas_tf32 row after
# the cuBLAS one, its % cuBLAS against strict SGEMM (the fake worker's TF32 runs 8x as fast); an
# f32-class config alone gets no such row.
$B/engine bench configs/tc32_1x.json configs/tc32_3x.json --arch sm_90a --size 512 >"$tmp/tf32.out" 2>&1
check_rc "bench of 1xTF32 and 3xTF32 (fake worker)" 0 $? "$(cat "$tmp/tf32.out")"
if awk '$1 == "cublas" {c = NR} $1 == "cublas_tf32" && c == NR - 1 && $6 == "800.0" {ok = 1} END {exit !ok}' "$tmp/tf32.out"; then
  pass "... a cublas_tf32 row after cuBLAS's, at 800 % of strict SGEMM"
else fail "... a cublas_tf32 row after cuBLAS's, at 800 % of strict SGEMM" "$(cat "$tmp/tf32.out")"; fi
$B/engine bench configs/tc32_3x.json --arch sm_90a --size 512 >"$tmp/f32.out" 2>&1
if [ $? = 0 ] && grep -q '^cublas ' "$tmp/f32.out" && ! grep -q '^cublas_tf32' "$tmp/f32.out"; then
  pass "3xTF32 alone (class f32): no cublas_tf32 row"
else fail "3xTF32 alone (class f32): no cublas_tf32 row" "$(cat "$tmp/f32.out")"; fi
echo "== the development points and the files they come from (bench/oracle_files.py)"
# The shipped points are built from bench/data's rows only: rebuilt here, they must come out byte
# for byte (a row file changed or added without rebuilding them, or the reverse, is caught).
python3 bench/oracle_entries.py --device "NVIDIA H100 80GB HBM3" --arch sm_90 --skip wisdom/nvidia-h100-80gb-hbm3.json \
  $(python3 bench/oracle_files.py) 2>/dev/null | cmp -s - wisdom/nvidia-h100-80gb-hbm3.dev-seeds.json &&
  pass "wisdom/nvidia-h100-80gb-hbm3.dev-seeds.json rebuilds byte for byte from bench/data" ||
  fail "wisdom/nvidia-h100-80gb-hbm3.dev-seeds.json rebuilds byte for byte from bench/data (rebuild it: bench/oracle_files.py)"
# A later session's rows supersede an earlier one's that time only templates it times again.
mkdir -p "$tmp/od"
python3 - "$tmp/od" <<'PY' && pass "oracle_files: s11's gemv rows supersede s10's; s9's (other templates) and op files stay apart" ||
import json, os, sys
d = sys.argv[1]
row = lambda t: json.dumps({"template": t, "config": t}) + "\n"
files = {"h100-random-3-oracle-f32.jsonl": [], "h100-random-3-oracle-f64.jsonl": [],
         "h100-random-3-oracle-s9-f32.jsonl": ["tc32", "cublas"], "h100-random-3-oracle-s10-f32.jsonl": ["gemv", "cublas"],
         "h100-random-3-oracle-s11-f32.jsonl": ["gemv", "cublas"], "h100-random-3-oracle-s11-nt-f32.jsonl": ["gemv"]}
for f, ts in files.items():
    open(os.path.join(d, f), "w").write("".join(map(row, ts)))
sys.path.insert(0, "bench")
import oracle_files as of
of.DATA = d
names = lambda fs: [os.path.basename(f) for f in fs]
assert names(of.extra_files(3, "f32")) == ["h100-random-3-oracle-s9-f32.jsonl", "h100-random-3-oracle-s11-f32.jsonl"], of.extra_files(3, "f32")
assert names(of.extra_files(3, "f32", "NT")) == ["h100-random-3-oracle-s11-nt-f32.jsonl"]
assert of.extra_files(3, "f64") == [] and of.rows_file(3, "f32", "NT") is None
assert of.seeds() == [3]
PY
  fail "oracle_files: s11's gemv rows supersede s10's; s9's (other templates) and op files stay apart"
# Another GPU's rows (a stand-in) decide a point only against the point's own config timed on it.
mkdir -p "$tmp/si"
python3 - "$tmp/si" <<'PY' && pass "oracle_entries: a stand-in's faster row replaces a point only beside the point's own config there" ||
import json, os, subprocess, sys
d = sys.argv[1]
H, S = "NVIDIA H100 80GB HBM3", "NVIDIA H200"
def row(dev, cfg, shape, ms, sets=""):
    m, n, k = map(int, shape.split("x"))
    args = f"engine bench /x/configs/{cfg}.json --m {m} --n {n} --k {k} --dtype f32{sets}"
    return json.dumps({"device": dev, "config": "cublas" if cfg == "cublas" else cfg, "dtype": "f32", "M": m, "N": n, "K": k,
                       "status": "ok", "ms": ms, "tflops": 2e-9 * m * n * k / ms, "args": args, "date": "2026-11-28"}) + "\n"
h100 = [row(H, c, s, ms) for s in ("100x100x100", "200x200x200", "300x300x300") for c, ms in (("cublas", 1.0), ("a", 0.5))]
h200 = [row(S, "cublas", s, 0.8) for s in ("100x100x100", "200x200x200", "300x300x300")]
h200 += [row(S, "a", "100x100x100", 0.4), row(S, "b", "100x100x100", 0.2, " --set X=2"),   # b wins on the H200
         row(S, "a", "200x200x200", 0.4), row(S, "b", "200x200x200", 0.395),                # within the margin
         row(S, "b", "300x300x300", 0.1)]                                                    # a never ran there
for name, rows in (("h100-random-3-oracle-f32.jsonl", h100), ("h200-random-3-oracle-s15-f32.jsonl", h200)):
    open(os.path.join(d, name), "w").write("".join(rows))
open(os.path.join(d, "w.json"), "w").write('{"version": 1, "entries": []}')
out = subprocess.run([sys.executable, "bench/oracle_entries.py", "--device", H, "--arch", "sm_90", "--skip", os.path.join(d, "w.json"),
                      os.path.join(d, "h100-random-3-oracle-f32.jsonl"), os.path.join(d, "h200-random-3-oracle-s15-f32.jsonl")],
                     capture_output=True, text=True, check=True).stdout
e = {x["shape"]: x for x in json.loads(out)["entries"]}
assert e["100x100x100"]["config"] == "configs/b.json" and e["100x100x100"]["set"] == {"X": 2}, e
assert abs(e["100x100x100"]["vs_cublas"] - 4.0) < 1e-9 and "H200" in e["100x100x100"]["source"], e
assert "h200-random-3-oracle-s15-f32.jsonl" in e["100x100x100"]["source"], e
for s in ("200x200x200", "300x300x300"):
    assert e[s]["config"] == "configs/a.json" and e[s]["vs_cublas"] == 2.0 and "H200" not in e[s]["source"], e[s]
sys.path.insert(0, "bench")
import oracle_files as of
of.DATA = d
assert [os.path.basename(f) for f in of.stand_in_files(3, "f32")] == ["h200-random-3-oracle-s15-f32.jsonl"]
assert of.extra_files(3, "f32") == [] and of.stand_in_files(3, "f32", "NT") == []
PY
  fail "oracle_entries: a stand-in's faster row replaces a point only beside the point's own config there"
echo "== bench/classes.sh (issue 42's classes)"
# The fixture: 13 of seed 7's shapes in f32 (two in f64), cuBLAS 1.0 ms each and engine's rows
# chosen for these ratios: narrow 1-4 2.0 (the fastest of two ok rows; a faster FAIL row ignored),
# 0.5; narrow 5-16 1.2 and one shape with no ok row; K < 64 0.8, 1.25; narrow 17-128 1.5 (op TN),
# 0.6; odd ld 0.7 (lda 1567), 1.4, 0.9 (1024x3072x128: even sides, its row's ldc 3073); the rest
# 1.1 (op NT), 0.9. f64: 1.0, 0.5. The lines below are worked out by hand from these.
bash bench/classes.sh 7 tests/fixtures/classes/seed-7.jsonl >"$tmp/classes.out" 2>&1
check_rc "classes.sh 7 FIXTURE" 0 $? "$(cat "$tmp/classes.out")"
while IFS= read -r want; do
  grep -qxF "$want" "$tmp/classes.out" && pass "class line: ${want:0:60}" ||
    fail "class line: $want" "$(cat "$tmp/classes.out")"
done <<'EOF2'
| narrow 1-4 | 2 | 0 | 1.000x | 0.500x | 2x128x1152 | 1 | 0 | 1.000x | 1.000x | 896x3x163 |
| narrow 5-16 | 2 | 1 | 1.200x | 0.000x | 1655x13x3328 | 0 |  |  |  |  |
| K < 64 | 2 | 0 | 1.000x | 0.800x | 1187x384x3 | 0 |  |  |  |  |
| narrow 17-128 | 2 | 0 | 0.949x | 0.600x | 128x128x1792 | 1 | 0 | 0.500x | 0.500x | 128x128x1792 |
| odd ld >= 2048 | 3 | 0 | 0.959x | 0.700x | 8190x768x1567 | 0 |  |  |  |  |
| the rest | 2 | 0 | 0.995x | 0.900x | 514x8960x256 | 0 |  |  |  |  |
| all | 13 | 1 | 0.995x | 0.000x | 1655x13x3328 | 2 | 0 | 0.707x | 0.500x | 128x128x1792 |
EOF2
grep -q '^### seed 7: 13 shapes by class, engine over cuBLAS (NVIDIA H100 80GB HBM3, 2026-11-28)$' "$tmp/classes.out" &&
  pass "the title: seed, shapes, device, date" || fail "the title" "$(head -1 "$tmp/classes.out")"
classes_refused() { # NAME PATTERN ARGS...: exit 2 and one line on stderr matching PATTERN, nothing on stdout
  local name=$1 pat=$2
  shift 2
  bash bench/classes.sh "$@" >"$tmp/c.out" 2>"$tmp/c.err"
  local rc=$?
  [ "$rc" = 2 ] && [ "$(wc -l <"$tmp/c.err")" = 1 ] && grep -q -- "$pat" "$tmp/c.err" && [ ! -s "$tmp/c.out" ] && pass "$name" ||
    fail "$name (exit $rc)" "$(cat "$tmp/c.err" "$tmp/c.out")"
}
classes_refused "another seed's data: exit 2" "13 shapes are not seed 8's" 8 tests/fixtures/classes/seed-7.jsonl
classes_refused "no seed: exit 2 and the usage" "^usage: bench/classes.sh SEED" tests/fixtures/classes/seed-7.jsonl
classes_refused "a missing file: exit 2" "$tmp/none.jsonl: cannot read" 7 "$tmp/none.jsonl"
echo '{"M": 896, "N": 3, "K": 163, "dtype": "f32", "status": "ok", "ms": 1}' >"$tmp/noconfig.jsonl"
classes_refused "a row with no config: exit 2" "noconfig.jsonl:1: not a bench row (no config)" 7 "$tmp/noconfig.jsonl"
echo '{"M": 896, "N": "3", "K": 163, "dtype": "f32", "config": "cublas", "status": "ok", "ms": 1}' >"$tmp/strn.jsonl"
classes_refused "N a string: exit 2" 'strn.jsonl: row 1: N: must be a positive integer, got "3"' 7 "$tmp/strn.jsonl"
echo '{"M": 896, "N": 3, "K": 163, "dtype": "f32", "config": "cublas", "status": "ok", "ms": null}' >"$tmp/noms.jsonl"
classes_refused "an ok row without a time: exit 2" 'noms.jsonl: row 1: ms: an ok row needs a positive time' 7 "$tmp/noms.jsonl"
OUT=$tmp/classes DTYPES=f32 RUNS=2 ENGINE_ARGS="--arch sm_90 --wisdom $tmp/wisdom" ENGINE_BIN=$B/engine \
  bash bench/classes.sh 3 4 >"$tmp/crun.out" 2>&1
check_rc "classes.sh 3 4: shapes.sh runs seed 3's 4 shapes (fake worker), then the table" 0 $? "$(tail -5 "$tmp/crun.out")"
grep -q '^| all | 4 | 0 | [0-9.]*x | [0-9.]*x | ' "$tmp/crun.out" && [ -s "$tmp/classes/shapes-f32.jsonl" ] &&
  pass "... a class table over the 4 shapes, from the rows it wrote" || fail "classes.sh run: the table" "$(cat "$tmp/crun.out")"

echo "== bench/tune_s15.sh's shapes (no GPU)"
out=$(bash bench/tune_s15.sh --shapes 2>&1)
nt=$(echo "$out" | sed -n 's/^a NT //p')
[ "$(echo "$out" | cut -d' ' -f1 | sort -u | tr '\n' ' ')" = "a b c " ] && echo ",$nt," | grep -q ',4000x4000x4000,8x12288x4096,' &&
  ! echo ",$nt," | grep -q ',128x4096x4096,' && echo "$out" | grep -q '^b f64 .*8192x64x8192' &&
  pass "tune_s15.sh --shapes: three phases; NT two suite squares, then from 8 tokens, less the shapes a tc32ws entry holds; the suite's narrow FP64 shapes" ||
  fail "tune_s15.sh --shapes: three phases; NT from 8 tokens, less the shapes a tc32ws entry holds" "$(echo "$out" | cut -c1-200)"
echo "== bench/narrow_f64.sh and its candidates (issue 42)"
bash bench/narrow_f64.sh --shapes >"$tmp/nshapes" 2>"$tmp/nshapes.err"
check_rc "narrow_f64.sh --shapes" 0 $? "$(cat "$tmp/nshapes.err")"
# The two shapes of the issue first, then 12 a seed of two seeds, each of the class by its definition
# (min(M, N) 17-128, K >= 64), none twice within a seed's draw; the same list every time.
head -2 "$tmp/nshapes" | paste -sd' ' | grep -qx '129x11747x258 97x11289x128' && [ "$(wc -l <"$tmp/nshapes")" = 26 ] &&
  pass "the issue's two shapes, then 12 of each of 2 seeds (26)" || fail "narrow_f64.sh --shapes: 26 lines" "$(cat "$tmp/nshapes")"
odd=$(tail -n +3 "$tmp/nshapes" | awk -Fx '{ n = ($1 < $2 ? $1 : $2); if (n < 17 || n > 128 || $3 < 64) print }')
[ -z "$odd" ] && pass "every drawn shape has a narrowest side of 17-128 and K >= 64" || fail "drawn shapes of the class" "$odd"
bash bench/narrow_f64.sh --shapes | cmp -s - "$tmp/nshapes" && pass "the same shapes every time" || fail "narrow_f64 shapes are deterministic"
SEEDS=5 COUNT=3 bash bench/narrow_f64.sh --shapes >"$tmp/n5"
want=$(bash bench/random_shapes.sh 5 400 | awk -Fx '{ n = ($1 < $2 ? $1 : $2); if (n >= 17 && n <= 128 && $3 >= 64) print }' | head -3)
[ "$(tail -n +3 "$tmp/n5")" = "$want" ] && pass "SEEDS=5 COUNT=3: the first 3 of seed 5's shapes of the class" ||
  fail "SEEDS=5 COUNT=3" "$(cat "$tmp/n5") / want $want"
SHAPES=1x2 bash bench/narrow_f64.sh --shapes >"$tmp/c.out" 2>"$tmp/c.err"
[ $? = 2 ] && [ "$(wc -l <"$tmp/c.err")" = 1 ] && grep -q 'SHAPES must be MxNxK' "$tmp/c.err" && pass "a bad SHAPES: exit 2, one line" ||
  fail "a bad SHAPES: exit 2" "$(cat "$tmp/c.err")"
bash bench/narrow_f64.sh --table "$tmp/nonesuch" >"$tmp/c.out" 2>"$tmp/c.err"
[ $? = 2 ] && grep -q "nonesuch/narrow.jsonl: cannot read" "$tmp/c.err" && pass "--table of a missing run: exit 2" ||
  fail "--table of a missing run: exit 2" "$(cat "$tmp/c.err")"
bash bench/narrow_f64.sh --bogus >/dev/null 2>"$tmp/c.err"
[ $? = 2 ] && grep -q '^usage: bench/narrow_f64.sh' "$tmp/c.err" && pass "an unknown option: exit 2 and the usage" ||
  fail "an unknown option: exit 2" "$(cat "$tmp/c.err")"
# Every candidate compiles for sm_80, sm_86 and sm_90 at a shape of the class, with no spills.
for arch in sm_80 sm_86 sm_90; do
  $B/engine compile @configs/narrow_f64.list --arch $arch --m 97 --n 11289 --k 128 >"$tmp/nc.out" 2>&1
  rc=$?
  spills=$(awk '$1 ~ /^dgemm_narrow/ && ($7 != 0 || $8 != 0) { print $1 ": " $7 " " $8 }' "$tmp/nc.out")
  n=$(grep -c '^dgemm_narrow' "$tmp/nc.out")
  [ "$rc" = 0 ] && [ "$n" = "$(grep -c '^dgemm_narrow' configs/narrow_f64.list)" ] && [ -z "$spills" ] &&
    pass "$arch: the $n candidates of configs/narrow_f64.list compile, no spills" ||
    fail "$arch: the candidates compile with no spills (exit $rc, $n rows)" "$spills$(tail -3 "$tmp/nc.out")"
done
# A run with the fake worker: two candidates at three shapes, the table, and --table from its rows.
printf 'dgemm_narrow_m128.json\ndgemm_narrow_k.json SPLITK=2\n' >"$tmp/two.list"
sed -i "s|^|$PWD/configs/|" "$tmp/two.list"
DEVICE="Fake GPU 0" OUT=$tmp/narrow LIST=$tmp/two.list SHAPES=97x11289x128,64x3000x500,2000x33x700 RUNS=2 \
  ENGINE_ARGS="--arch sm_90" ENGINE_BIN=$B/engine bash bench/narrow_f64.sh >"$tmp/nrun.out" 2>&1
check_rc "narrow_f64.sh with the fake worker" 0 $? "$(tail -5 "$tmp/nrun.out")"
for s in 97x11289x128 64x3000x500 2000x33x700; do
  grep -qE "^\| $s \| [0-9.]+ \| [0-9.]+x \| [^|]+ \| [0-9.]+x \| dgemm_narrow_(m128|k\[SPLITK=2\]) \| [0-9.]+x \|$" "$tmp/nrun.out" &&
    pass "a table row at $s: cuBLAS, --auto, the best candidate, the better of the two" || fail "table row $s" "$(cat "$tmp/nrun.out")"
done
python3 - "$tmp/nrun.out" "$tmp/narrow" <<'PY' && pass "the better of the two is the larger ratio; the candidates' means are of their rows" ||
import json, math, os, re, sys
text = open(sys.argv[1]).read()
rows = [l.split("|")[1:-1] for l in text.splitlines() if re.match(r"^\| [0-9]+x", l)]
assert len(rows) == 3, rows
for r in rows:
    a, b, both = (float(r[i].strip().rstrip("x")) for i in (2, 4, 6))
    assert abs(both - max(a, b)) < 0.0015, r
# dgemm_narrow_m128's geometric mean, recomputed from the rows the run wrote.
cand = [json.loads(l) for l in open(os.path.join(sys.argv[2], "narrow.jsonl"))]
cub = {(r["M"], r["N"], r["K"]): r["ms"] for r in cand if r["config"] == "cublas"}
xs = [cub[(r["M"], r["N"], r["K"])] / r["ms"] for r in cand if r["config"] == "dgemm_narrow_m128" and r["status"] == "ok"]
g = math.exp(sum(map(math.log, xs)) / len(xs))
assert re.search(rf"^\| dgemm_narrow_m128 \| {g:.3f}x \| {min(xs):.3f}x \| 0 \| ", text, re.M), (g, text)
PY
  fail "the table's figures" "$(cat "$tmp/nrun.out")"
bash bench/narrow_f64.sh --table "$tmp/narrow" >"$tmp/ntable.out" 2>&1
sed -n '/^### FP64/,$p' "$tmp/nrun.out" | cmp -s - "$tmp/ntable.out" && pass "--table DIR prints the run's table" ||
  fail "--table DIR prints the run's table" "$(diff <(sed -n '/^### FP64/,$p' "$tmp/nrun.out") "$tmp/ntable.out")"

summary
