#!/usr/bin/env bash
# The shell tooling around `engine tune`, `merge` and `bench --sizes`, on synthetic data (no GPU):
# tools/plot.sh (gnuplot), tools/slurm/tune.sbatch and submit.sh (run as plain bash with stub
# engine and sbatch), and the sharding of `engine tune --dry-run` checked with GNU parallel.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Inside a Slurm job (or with these set by hand) the tune.sbatch checks would see the wrong values.
unset ENGINE LOGDIR SBATCH SBATCH_OPTS MERGE_OPTS GNUPLOT SLURM_SUBMIT_DIR \
  SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT SLURM_ARRAY_TASK_MIN SLURM_ARRAY_TASK_MAX

# --- every script parses ------------------------------------------------------------------------
for f in tools/*.sh tools/slurm/*.sh tools/slurm/*.sbatch tests/*.sh bench/*.sh bench/probes/*.sh; do
  [ -f "$f" ] || continue
  err=$(bash -n "$f" 2>&1) && pass "bash -n $f" || fail "bash -n $f" "$err"
done

# A PNG that plot.sh claims to have written: it exists, starts with the PNG signature, > 5 kB.
check_png() { # name path
  local magic size
  if [ ! -f "$2" ]; then fail "$1: $2 written" "no such file"; return; fi
  magic=$(head -c 8 "$2" | od -An -tx1 | tr -d ' \n')
  size=$(wc -c <"$2")
  if [ "$magic" = 89504e470d0a1a0a ] && [ "$size" -gt 5120 ]; then
    pass "$1: $2 is a PNG ($size bytes)"
  else
    fail "$1: $2 is a PNG over 5 kB" "signature $magic, $size bytes"
  fi
}

command -v gnuplot >/dev/null && pass "gnuplot is installed" ||
  fail "gnuplot is installed" "run: bash tools/deps.sh /usr/local/cuda --with-tests (make test runs it once: rm build/.deps-test)"

# --- tools/plot.sh on a tune log ----------------------------------------------------------------
# 40 keys at stage 1, six of them failed; five keys have a stage-2 row as well: three faster, one
# failed (so it is not plotted although its stage-1 row is ok), and one slower. Then a truncated
# line, as an interrupted run leaves. expect.txt holds what the plot must show: the number of
# points, the best TFLOP/s, the cuBLAS TFLOP/s.
mkdir -p "$tmp/tune"
python3 - "$tmp/tune" <<'EOF'
import json, os, random, statistics, sys
random.seed(1)
M = N = K = 4096
flop = 2.0 * M * N * K
rows, plotted, cublas_ms = [], [], []
space = [(bm, bn, bk, wm, wn, wniter) for bm in (64, 128, 256) for bn in (64, 128, 256) for bk in (8, 16)
         for wm in (32, 64) for wn in (32, 64) for wniter in (1, 2)][:40]
for i, (bm, bn, bk, wm, wn, wniter) in enumerate(space):
    cfg = {"BM": bm, "BN": bn, "BK": bk, "WM": wm, "WN": wn, "WNITER": wniter, "TM": 8, "TN": 4,
           "THREADS": 32 * (bm // wm) * (bn // wn)}
    key = ",".join(f"{k}={v}" for k, v in cfg.items())
    base = {"key": key, "config": "warptile_db", "template": "warptile", "dtype": "f32",
            "device": "NVIDIA H100 80GB HBM3", "M": M, "N": N, "K": K, "configuration": cfg}

    def row(stage, status, ms):
        cb = round(2.68 + 0.02 * random.random(), 4) if ms else None
        r = dict(base, stage=stage, status=status, ms=ms, ms_min=ms and ms * 0.99, ms_max=ms and ms * 1.01,
                 tflops=ms and flop / (ms * 1e-3) / 1e12, pct_cublas=ms and 100 * cb / ms, cublas_ms=cb)
        rows.append(r)
        return r

    failed = i % 7 == 3
    ms1 = None if failed else round(2.9 + 6 * random.random(), 4)
    last = row(1, random.choice(["FAIL", "compile", "timeout"]) if failed else "ok", ms1)
    if not failed and i % 8 == 0:
        last = {0: lambda: row(2, "FAIL", None), 8: lambda: row(2, "ok", round(ms1 * 1.05, 4))}.get(
            i, lambda: row(2, "ok", round(ms1 * 0.97, 4)))()
    if last["status"] == "ok":
        plotted.append(last)
with open(os.path.join(sys.argv[1], "run.jsonl"), "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
    f.write('{"key": "BM=256,BN=256", "config": "warptile_db", "stage": 1, "status": "o')
best = max(r["tflops"] for r in plotted)
ref = flop / (statistics.median(r["cublas_ms"] for r in plotted) * 1e-3) / 1e12
with open(os.path.join(sys.argv[1], "expect.txt"), "w") as f:
    f.write(f"{len(plotted)} {best:.6g} {ref:.6g}\n")
EOF
read -r want_n want_best want_ref <"$tmp/tune/expect.txt"

tools/plot.sh "$tmp/tune/run.jsonl" --param BM >"$tmp/out" 2>"$tmp/err"
check_rc "plot.sh LOG --param BM" 0 $? "$(cat "$tmp/err")"
check_png "tune log" "$tmp/tune/run-rank.png"
check_png "tune log --param BM" "$tmp/tune/run-BM.png"
grep -qx "$tmp/tune/run-rank.png" "$tmp/out" && grep -qx "$tmp/tune/run-BM.png" "$tmp/out" &&
  pass "plot.sh prints the paths it wrote" || fail "plot.sh prints the paths it wrote" "$(cat "$tmp/out")"
grep -q 'run.jsonl:.*last line does not parse' "$tmp/err" &&
  pass "the truncated last line is skipped and said on stderr" || fail "the truncated last line is said on stderr" "$(cat "$tmp/err")"

# What gets drawn: one point per key (its stage-2 row if any, else stage 1), status ok only.
mkdir -p "$tmp/data"
python3 tools/plot_data.py tune "$tmp/tune/run.jsonl" "$tmp/data" WNITER 2>/dev/null
got_n=$(wc -l <"$tmp/data/rank.dat")
got_best=$(head -n 1 "$tmp/data/rank.dat" | cut -d' ' -f2)
[ "$got_n" = "$want_n" ] && [ "$got_best" = "$want_best" ] &&
  pass "rank plot: $want_n points (stage 2 over stage 1, failed rows left out), best $want_best TFLOP/s" ||
  fail "rank plot data" "got $got_n points, best $got_best; want $want_n, best $want_best"
sort -k2,2gr -c "$tmp/data/rank.dat" 2>/dev/null && pass "rank plot: best first" || fail "rank plot: best first"
got_ref=$(sed -n 's/^cublas = //p' "$tmp/data/meta.gp")
[ "$got_ref" = "$want_ref" ] && pass "cuBLAS line: 2MNK / median cublas_ms = $want_ref TFLOP/s" ||
  fail "cuBLAS line" "got '$got_ref', want $want_ref"
grep -q 'title = "warptile_db f32 4096x4096x4096 on NVIDIA H100 80GB HBM3: '"$want_n"' points"' "$tmp/data/meta.gp" &&
  pass "title: config dtype MxNxK on device: N points" || fail "title" "$(grep title "$tmp/data/meta.gp")"
grep -qx 'log2 = 1' "$tmp/data/meta.gp" && pass "--param: log2 x axis for powers of two" || fail "--param: log2 x axis" "$(cat "$tmp/data/meta.gp")"
python3 tools/plot_data.py tune "$tmp/tune/run.jsonl" "$tmp/data" THREADS 2>/dev/null
grep -qx 'log2 = 1' "$tmp/data/meta.gp" && pass "--param THREADS: log2 axis (all powers of two)" || fail "--param THREADS: log2 axis"

mkdir -p "$tmp/elsewhere"
tools/plot.sh "$tmp/tune/run.jsonl" --out "$tmp/elsewhere/plots" >/dev/null 2>&1
check_rc "plot.sh --out DIR" 0 $?
check_png "--out DIR" "$tmp/elsewhere/plots/run-rank.png"

tools/plot.sh "$tmp/tune/run.jsonl" --param NOPE >/dev/null 2>"$tmp/err"
check_rc "--param with an unknown name exits 2" 2 $?
grep -q 'available: BK, BM, BN, THREADS, TM, TN, WM, WN, WNITER' "$tmp/err" &&
  pass "...and lists the available names" || fail "...and lists the available names" "$(cat "$tmp/err")"
[ ! -e "$tmp/tune/run-NOPE.png" ] && pass "...and writes no PNG" || fail "...and writes no PNG"
: >"$tmp/tune/empty.jsonl"
tools/plot.sh "$tmp/tune/empty.jsonl" >/dev/null 2>"$tmp/err"
check_rc "an empty log exits 2" 2 $? "$(cat "$tmp/err")"
grep -v '"status": "ok"' "$tmp/tune/run.jsonl" >"$tmp/tune/failed.jsonl"
tools/plot.sh "$tmp/tune/failed.jsonl" >/dev/null 2>&1
check_rc "a log without an ok row exits 2" 2 $?
tools/plot.sh "$tmp/tune/missing.jsonl" >/dev/null 2>&1
check_rc "a missing file exits 2" 2 $?
GNUPLOT=/nonexistent/gnuplot tools/plot.sh "$tmp/tune/run.jsonl" >/dev/null 2>"$tmp/err"
check_rc "gnuplot missing exits 3" 3 $?
grep -q 'apt-get install -y --no-install-recommends gnuplot-nox' "$tmp/err" &&
  pass "...and prints the apt-get command" || fail "...and prints the apt-get command" "$(cat "$tmp/err")"

# --- tools/plot.sh --sizes ----------------------------------------------------------------------
# Two configs and cuBLAS at 512..8192 in `engine bench --format csv`'s columns, and the same rows
# with the columns in another order and one more column: the plot reads columns by name.
mkdir -p "$tmp/sizes"
python3 - "$tmp/sizes" <<'EOF'
import csv, os, sys
cols = ("config,template,dtype,M,N,K,alpha,beta,status,ms,ms_min,ms_max,tflops,pct_cublas,pct_peak,regs,"
        "spill_bytes,smem_bytes,threads,occ_blocks,occ_pct,clock_mhz,floor_ms,bound,max_err_ratio,switches,"
        "params,args").split(",")
rows = []
for s in (512, 1024, 2048, 4096, 8192):
    for config, template, eff in (("cublas", "cublas", 1.0), ("warptile_db", "warptile", 0.9),
                                  ("ldg_wider2", "blocktile", 0.7)):
        tf = 51.0 * eff * s / (s + 700)
        ms = 2.0 * s ** 3 / (tf * 1e12) * 1e3
        r = dict.fromkeys(cols, 0)
        r.update(config=config, template=template, dtype="f32", M=s, N=s, K=s, alpha=1, beta=0, status="ok",
                 ms=ms, ms_min=ms, ms_max=ms, tflops=round(tf, 4), bound="dram", switches="VEC=1",
                 params="BM=128, BN=128", args=f"engine bench {config} --size {s}")
        rows.append(r)
rows.append(dict(rows[1], M=300, N=300, K=300, status="FAIL", tflops=0))
for name, order in (("sweep.csv", cols), ("shuffled.csv", ["extra"] + cols[::-1])):
    with open(os.path.join(sys.argv[1], name), "w", newline="") as f:
        f.write(",".join(order) + "\n")
        w = csv.writer(f, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
        for r in rows:
            w.writerow([dict(r, extra="x, y").get(c) for c in order])
EOF
tools/plot.sh --sizes "$tmp/sizes/sweep.csv" >"$tmp/out" 2>"$tmp/err"
check_rc "plot.sh --sizes SWEEP.csv" 0 $? "$(cat "$tmp/err")"
check_png "size sweep" "$tmp/sizes/sweep-sizes.png"
grep -qx "$tmp/sizes/sweep-sizes.png" "$tmp/out" && pass "--sizes prints the path" || fail "--sizes prints the path" "$(cat "$tmp/out")"
mkdir -p "$tmp/d1" "$tmp/d2"
python3 tools/plot_data.py sizes "$tmp/sizes/sweep.csv" "$tmp/d1" && python3 tools/plot_data.py sizes "$tmp/sizes/shuffled.csv" "$tmp/d2"
check_rc "plot_data.py sizes on both column orders" 0 $?
lines=$(cat "$tmp/d1"/s*.dat | wc -l)
[ "$lines" = 15 ] && diff -r "$tmp/d1" "$tmp/d2" >/dev/null &&
  pass "--sizes: 3 lines x 5 sizes, the same data whatever the column order" ||
  fail "--sizes data" "$lines rows; $(diff -r "$tmp/d1" "$tmp/d2")"
grep -q 'names\[3\] = \["ldg_wider2", "warptile_db", "cuBLAS"\]' "$tmp/d1/meta.gp" && grep -qx 'nref = 1' "$tmp/d1/meta.gp" &&
  pass "--sizes: one line per config, cuBLAS drawn as the reference" || fail "--sizes series" "$(cat "$tmp/d1/meta.gp")"
grep -qx 'log2 = 1' "$tmp/d1/meta.gp" && grep -qx '512 .* 512' "$tmp/d1/s1.dat" &&
  pass "--sizes: x = M on a log2 axis" || fail "--sizes: x = M on a log2 axis" "$(cat "$tmp/d1/s1.dat")"

# --- tools/slurm/tune.sbatch, run as plain bash -------------------------------------------------
# The stub engine writes its arguments, one per line, to $STUB_ARGS and exits with $STUB_RC.
cat >"$tmp/engine-stub" <<'EOF'
#!/usr/bin/env bash
printf '%s\n' "$@" >"$STUB_ARGS"
exit "${STUB_RC:-0}"
EOF
chmod +x "$tmp/engine-stub"
export STUB_ARGS=$tmp/args
logs=$tmp/slurm/logs
args_are() { # name expected-args...: the stub's last call
  local want
  want=$(printf '%s\n' "${@:2}")
  [ "$(cat "$STUB_ARGS" 2>/dev/null)" = "$want" ] && pass "$1" ||
    fail "$1" "got:  $(tr '\n' ' ' <"$STUB_ARGS" 2>/dev/null)
want: $(tr '\n' ' ' <<<"$want")"
}
sb=tools/slurm/tune.sbatch

SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_COUNT=4 ENGINE=$tmp/engine-stub LOGDIR=$logs \
  bash $sb configs/warptile_db.json --set 'THREADS=32*(BM/WM)*(BN/WN)' --size 4096 >"$tmp/out" 2>&1
check_rc "tune.sbatch as task 2 of 4" 0 $? "$(cat "$tmp/out")"
args_are "task 2 of 4 runs engine tune CONFIG ... --shard 2/4 --log LOGDIR/shard-2.jsonl --resume" \
  tune configs/warptile_db.json --set 'THREADS=32*(BM/WM)*(BN/WN)' --size 4096 --shard 2/4 --log "$logs/shard-2.jsonl" --resume
[ -d "$logs" ] && pass "the task creates LOGDIR" || fail "the task creates LOGDIR"
grep -q '^#SBATCH --gres=gpu:1$' $sb && pass "one GPU per task (#SBATCH --gres=gpu:1)" || fail "#SBATCH --gres=gpu:1"

SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=4 SLURM_ARRAY_TASK_COUNT=4 ENGINE=$tmp/engine-stub \
  SLURM_SUBMIT_DIR=$tmp/slurm bash $sb configs/warptile_db.json >/dev/null 2>&1
args_are "--array=1-4: task 3 is shard 2/4; LOGDIR defaults to tune-<config> in the submit directory" \
  tune configs/warptile_db.json --shard 2/4 --log "$tmp/slurm/tune-warptile_db/shard-2.jsonl" --resume

SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=4 ENGINE=$tmp/engine-stub LOGDIR=$logs STUB_RC=1 bash $sb c.json >/dev/null 2>&1
check_rc "engine exit 1 (points failed verification, logged): the task succeeds" 0 $?
SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=4 ENGINE=$tmp/engine-stub LOGDIR=$logs STUB_RC=3 bash $sb c.json >/dev/null 2>&1
check_rc "engine exit 3 (CUDA failure): the task fails with it" 3 $?
env -u SLURM_ARRAY_TASK_ID -u SLURM_ARRAY_TASK_COUNT ENGINE="$tmp/engine-stub" bash $sb c.json >/dev/null 2>"$tmp/err"
check_rc "outside a job array: exit 2" 2 $? "$(cat "$tmp/err")"
SLURM_ARRAY_TASK_ID=4 SLURM_ARRAY_TASK_COUNT=4 ENGINE=$tmp/engine-stub bash $sb c.json >/dev/null 2>&1
check_rc "a task id outside 0..N-1: exit 2" 2 $?

for i in 0 1 2 3; do : >"$logs/shard-$i.jsonl"; done
ENGINE=$tmp/engine-stub LOGDIR=$logs bash $sb --merge >"$tmp/out" 2>&1
check_rc "tune.sbatch --merge" 0 $? "$(cat "$tmp/out")"
args_are "--merge runs engine merge SHARDS... --log LOGDIR/merged.jsonl --emit-best LOGDIR/best.json" \
  merge "$logs/shard-0.jsonl" "$logs/shard-1.jsonl" "$logs/shard-2.jsonl" "$logs/shard-3.jsonl" \
  --log "$logs/merged.jsonl" --emit-best "$logs/best.json"
ENGINE=$tmp/engine-stub LOGDIR=$tmp/slurm/none bash $sb --merge >/dev/null 2>&1
check_rc "--merge without shard logs: exit 2" 2 $?

# submit.sh with a stub sbatch: the array, then the merge depending on it.
cat >"$tmp/sbatch-stub" <<'EOF'
#!/usr/bin/env bash
n=$(($(cat "$SBATCH_CALLS" 2>/dev/null | wc -l) + 1))
echo "$*" >>"$SBATCH_CALLS"
echo "$((1000 + n));cluster"
EOF
chmod +x "$tmp/sbatch-stub"
export SBATCH_CALLS=$tmp/sbatch-calls
(cd "$tmp/slurm" && SBATCH=$tmp/sbatch-stub "$OLDPWD/tools/slurm/submit.sh" 8 configs/warptile_db.json --size 4096) >"$tmp/out" 2>&1
check_rc "submit.sh 8 CONFIG ..." 0 $? "$(cat "$tmp/out")"
first=$(sed -n 1p "$SBATCH_CALLS") second=$(sed -n 2p "$SBATCH_CALLS")
[[ $first == "--parsable --array=0-7 "*"/tools/slurm/tune.sbatch configs/warptile_db.json --size 4096" ]] &&
  pass "submit.sh: sbatch --array=0-7 tune.sbatch CONFIG ..." || fail "submit.sh: the array" "$first"
[[ $second == *"--dependency=afterok:1001 "*"/tools/slurm/tune.sbatch --merge configs/warptile_db.json" ]] &&
  pass "submit.sh: the merge waits for the array (afterok:<array job id>)" || fail "submit.sh: the merge" "$second"
grep -q '^array job 1001: 8 tasks' "$tmp/out" && grep -q '^merge job 1002:' "$tmp/out" &&
  pass "submit.sh prints both job ids" || fail "submit.sh prints both job ids" "$(cat "$tmp/out")"

# --- sharding: engine tune --dry-run --shard I/4, four shards at once under GNU parallel --------
# check_sharding PREFIX...: runs PREFIX (the unsharded dry run), then PREFIX --shard I/4 for I in
# 0..3 concurrently, and checks the shards cover the list, are disjoint and balanced, and give each
# point the index it has in the full list. Prints what is wrong; returns non-zero if anything is.
check_sharding() {
  local dir dir_q cmd
  dir=$(mktemp -d "$tmp/shards.XXXX")
  "$@" >"$dir/all.jsonl" 2>"$dir/all.err" || { echo "unsharded run failed: $(cat "$dir/all.err")"; return 1; }
  cmd=$(printf '%q ' "$@")
  dir_q=$(printf %q "$dir")
  parallel --will-cite -j4 "$cmd --shard {}/4 >$dir_q/shard-{}.jsonl 2>$dir_q/shard-{}.err" ::: 0 1 2 3 ||
    { echo "a shard run failed: $(cat "$dir"/shard-*.err)"; return 1; }
  python3 - "$dir" 4 <<'EOF'
import json, os, sys
d, n = sys.argv[1], int(sys.argv[2])

def points(name):
    with open(os.path.join(d, name)) as f:
        return [json.loads(line) for line in f if line.strip()]

errors = []
full = points("all.jsonl")
index = {p["key"]: p["point"] for p in full}
if len(index) != len(full):
    errors.append(f"the unsharded list repeats keys ({len(full)} points, {len(index)} keys)")
seen = {}
for i in range(n):
    shard = points(f"shard-{i}.jsonl")
    lo, hi = len(full) // n, -(-len(full) // n)
    if not lo <= len(shard) <= hi:
        errors.append(f"shard {i}/{n} has {len(shard)} points; a balanced shard of {len(full)} has {lo} to {hi}")
    for p in shard:
        if p["key"] in seen:
            errors.append(f"not disjoint: {p['key']} is in shards {seen[p['key']]} and {i}")
        seen.setdefault(p["key"], i)
        if p["key"] in index and p["point"] != index[p["key"]]:
            errors.append(f"shard {i}: {p['key']} is point {p['point']}, but point {index[p['key']]} unsharded")
extra = sorted(set(seen) - set(index))
missing = sorted(set(index) - set(seen))
if extra:
    errors.append(f"not covering: {len(extra)} keys of the shards not in the unsharded list, e.g. {extra[0]}")
if missing:
    errors.append(f"not covering: {len(missing)} of the unsharded keys in no shard, e.g. {missing[0]}")
for e in errors[:10]:
    print(e)
if not errors:
    print(f"{len(full)} points in {n} shards of {', '.join(str(list(seen.values()).count(i)) for i in range(n))}")
sys.exit(1 if errors else 0)
EOF
}

if ! command -v parallel >/dev/null || ! parallel --version 2>/dev/null | grep -q 'GNU parallel'; then
  fail "GNU parallel is installed" "run: bash tools/deps.sh /usr/local/cuda --with-tests (make test runs it once: rm build/.deps-test)"
else
  # The stubs get the real command's arguments, so the quoting through parallel is tested too.
  stub=(python3 tests/fixtures/tune_dryrun_stub.py)
  rest=(tune configs/warptile_db.json --set BM=64,128,256 --set BN=64,128,256 --set BK=8,16 --set WM=32,64
    --set WN=32,64 --set WNITER=1,2 --set TM=4,8 --set TN=4,8 --set 'THREADS=32*(BM/WM)*(BN/WN)'
    --size 4096 --arch sm_90 --dry-run --format jsonl)
  out=$(check_sharding "${stub[@]}" "${rest[@]}") && pass "sharding checker accepts a correct round robin ($out)" ||
    fail "sharding checker on the correct stub" "$out"
  for wrong in dup:'not disjoint' missing:'in no shard' skew:'balanced shard'; do
    name="sharding checker flags a ${wrong%%:*} stub"
    if out=$(check_sharding "${stub[@]}" --wrong="${wrong%%:*}" "${rest[@]}"); then
      fail "$name" "it accepted: $out"
    elif grep -q "${wrong#*:}" <<<"$out"; then
      pass "$name: $(grep -m 1 "${wrong#*:}" <<<"$out")"
    else
      fail "$name" "$out"
    fi
  done
  if "${BUILD:-build}"/engine tune --help >/dev/null 2>&1; then
    out=$(check_sharding "${BUILD:-build}"/engine "${rest[@]}") &&
      pass "engine tune --dry-run --shard I/4 covers, is disjoint and balanced ($out)" ||
      fail "engine tune --dry-run --shard I/4" "$out"
  else
    echo "  skipped: engine tune not available yet"
  fi
fi
summary
