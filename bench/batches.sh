#!/usr/bin/env bash
# bench/batches.sh — issue 25's strided-batch targets on one GPU, in one call (< 8 minutes on an
# H100; prebuilt build/ only: no compiler, no jansson headers, no pip). Logs and the tuned wisdom
# under $OUT (default build/batches); a table last.
#   1  `bench --auto` at each batch of bench/suites/batches.txt (BATCHxMxNxK: packed strides), f32
#      and f64, with the shipped wisdom: the batch-aware model's choice (no entry of a batch yet),
#      its ratio to cublasGemmStridedBatchedEx in the same run (RUNS >= 7, default 7)
#   2  `tune --batch B --wisdom wisdom` at each, the small spaces first so that every batch gets an
#      entry: f32 tune/batches_warptile_db.json (warptile_db's 64/128 tiles, supertiles on or off),
#      f64 tune/batches_dmma.json, then f32 tune/batches_warptile.json (small tiles of 16/32-row warp
#      tiles); each winner is recorded with "batch" in this copy's wisdom/ (config paths stay
#      configs/...) when faster than the entry there, and the device's file is copied to
#      $OUT/wisdom/ to be committed; BATCHES_SPACES="dtype:space ..." replaces the list (e.g.
#      "f32:tune/batches_tc32.json": 3xTF32 on the tensor cores, class f32, sm_90a only)
#   3  `bench --auto` again with that wisdom: each batch runs its exact entry (target >= 0.9x cuBLAS)
#   4  python3 tests/gpu_torch.py dlpack: engine.matmul on torch tensors seen through DLPack only
#      (every op, padded out, batches of 3 and 64), against torch.matmul (skipped without torch)
# Each tune gets at most TUNE_S seconds (default 75) and none starts once the tunes have taken 200 s
# (TUNES_S), so that 3 and 4 still run. Exits 1 when a target is missed or a step failed.
set -u
cd "$(dirname "$0")/.."
. bench/lib.sh
E=build/engine
[ -x "$E" ] || { echo "build/engine is missing: run make first"; exit 2; }
OUT=${OUT:-build/batches}
RUNS=${RUNS:-7}
TUNE_S=${TUNE_S:-75}
TUNES_S=${TUNES_S:-200}
SUITE=${SUITE:-bench/suites/batches.txt}
X=${BATCHES_EXTRA:-} # e.g. "--arch sm_90" with a fake worker (ENGINE_WORKER, DEVICE) where there is no GPU
W=${BATCHES_WISDOM:-wisdom} # the wisdom read and tuned into (tests: a copy elsewhere)
mkdir -p "$OUT/wisdom"
# No user wisdom ($XDG_DATA_HOME/engine/wisdom): only the wisdom named here counts.
export XDG_DATA_HOME=${TMPDIR:-/tmp}/engine-batches-no-user-wisdom
t_start=$(date +%s)
device=$(device_name "$E")
file=$W/$(slug "$device").json
lines=$(grep -v '^ *#' "$SUITE" | awk 'NF {print $1}')
status=0

bench_all() { # TAG: --auto at every batch of the suite, both dtypes, into $OUT/TAG-<dtype>.jsonl
  local dt l
  for dt in f32 f64; do
    : >"$OUT/$1-$dt.jsonl"
    for l in $lines; do
      $E bench $X --auto --wisdom "$W" --dtype "$dt" --shapes "${l#*x}" --batch "${l%%x*}" --runs "$RUNS" \
        --format jsonl 2>>"$OUT/$1-$dt.err" | stamp_rows "$device" >>"$OUT/$1-$dt.jsonl" || status=1
    done
    echo "  $1 $dt: $(grep -v '"config":"cublas"' "$OUT/$1-$dt.jsonl" | grep -c '"status":"ok"') of $(echo "$lines" | wc -l) rows ok"
  done
}

echo "== 1 --auto with the shipped wisdom ($device)"
bench_all before

echo "== 2 tune each batch into $file"
t_tune=$(date +%s)
for sp in ${BATCHES_SPACES:-f32:tune/batches_warptile_db.json f64:tune/batches_dmma.json f32:tune/batches_warptile.json}; do
  for l in $lines; do
    left=$((TUNES_S - ($(date +%s) - t_tune)))
    if [ $left -le 10 ]; then
      echo "  skipped ${sp#*:} at $l: past the tuning budget"
      status=1
      continue
    fi
    [ $left -gt "$TUNE_S" ] && left=$TUNE_S
    log=$OUT/tune-${sp%%:*}-$l-$(basename "${sp#*:}" .json).txt
    timeout "$left" $E tune $X "${sp#*:}" --shapes "${l#*x}" --batch "${l%%x*}" --wisdom "$W" >"$log" 2>&1
    rc=$?
    best=$(sed -n 's/^best at [^:]*: \([0-9.]* TFLOP\/s\).*, \([0-9.]*x cuBLAS\).*/\1, \2/p' "$log")
    echo "  ${sp#*:} at $l: exit $rc; ${best:-no winner}; wisdom: $(sed -n 's/^  wisdom [^ ]*: //p' "$log")"
    [ $rc = 0 ] || status=1
  done
done
cp "$file" "$OUT/wisdom/" && echo "  $(grep -c '"batch"' "$file") batch entries in $OUT/wisdom/$(basename "$file")"

echo "== 3 --auto with the tuned wisdom"
bench_all after

echo "== 4 DLPack inputs against torch.matmul"
if python3 -c 'import torch' 2>/dev/null; then
  ENGINE_LIB=$PWD/build/libengine.so PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH} \
    timeout 140 python3 tests/gpu_torch.py dlpack >"$OUT/dlpack.txt" 2>&1
  rc=$?
  grep -E '^FAIL' "$OUT/dlpack.txt" | head -20
  dl="exit $rc: $(tail -n 1 "$OUT/dlpack.txt")"
  [ $rc = 0 ] || status=1
else
  dl="skipped: no torch"
fi
echo "  $dl"

echo
echo "device: $device; $(date -u +%F); RUNS $RUNS; $(($(date +%s) - t_start)) s"
python3 - "$OUT" <<'EOF' || status=1
import json, sys
out = sys.argv[1]
def rows(tag, dt):
    r = {}
    for line in open(f"{out}/{tag}-{dt}.jsonl"):
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if j.get("config") != "cublas":  # cuBLAS's own row of the same run
            r[(j["batch"], j["M"], j["N"], j["K"])] = j
    return r
print("| dtype | batch x M x N x K | shipped --auto x cuBLAS | tuned --auto x cuBLAS | TFLOP/s | config (tuned) | >= 0.9 |")
print("|---|---|---:|---:|---:|---|---|")
missed = 0
for dt in ("f32", "f64"):
    b, a = rows("before", dt), rows("after", dt)
    for key in sorted(set(b) | set(a), key=lambda k: -k[0]):
        x, y = b.get(key, {}), a.get(key, {})
        rb = x.get("pct_cublas") if x.get("status") == "ok" else None
        ra = y.get("pct_cublas") if y.get("status") == "ok" else None
        ok = ra is not None and ra >= 90
        missed += not ok
        f = lambda v: "-" if v is None else f"{v / 100:.3f}"
        print(f"| {dt} | {key[0]} x {key[1]}x{key[2]}x{key[3]} | {f(rb)} | {f(ra)} | {y.get('tflops', '-')} | "
              f"{y.get('chosen', y.get('status', 'no row'))} | {'met' if ok else 'MISSED'} |")
sys.exit(1 if missed else 0)
EOF
echo "DLPack: $dl"
exit $status
