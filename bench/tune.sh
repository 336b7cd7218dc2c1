#!/usr/bin/env bash
# The speed targets of `engine tune` (issue 7), on the GPU found, with the prebuilt build/engine.
# Prints a table last; full logs under $TUNE_OUT (default build/tune-bench).
#   compile: every shipped config, cold cache, --jobs $(nproc) vs --jobs 1 (target: <= 1/8 of the
#            time; three pairs, the median ratio: one pair moved 0.108-0.125 on the H100 host),
#            then warm (target: <= 1 s in total)
#   tune:    tune/warptile.json (460 feasible warptile points) at 4096^3, every point verified and
#            timed, then the top 8 re-timed (target: >= 200 points in <= 2 minutes); points/min
#   resume:  the same command with --resume on the finished log (target: <= 5 s)
#   guided:  --strategy guided with a quarter of the evaluations; its winner and the exhaustive
#            winner timed side by side in one `engine bench` (target: within 3%)
set -u
cd "$(dirname "$0")/.."
E=build/engine
X=${TUNE_EXTRA:-} # e.g. "--arch sm_90" to run the script with a fake worker (ENGINE_WORKER) where there is no GPU
OUT=${TUNE_OUT:-build/tune-bench}
rm -rf "$OUT"
mkdir -p "$OUT"
export XDG_CACHE_HOME="$OUT/xdg"
cores=$(nproc)
status=0
rows=()
secs() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.4f\", $1 }"; } # bc may be missing on the GPU machine
row() { rows+=("$(printf '| %-44s | %14s | %-22s | %-4s |' "$1" "$2" "$3" "$4")"); }
verdict() { awk -v v="$1" -v t="$2" -v op="$3" 'BEGIN { ok = (op == "<=") ? (v <= t) : (v >= t); print ok ? "met" : "MISSED"; exit !ok }'; }

echo "== compile every shipped config: cold --jobs 1, cold --jobs $cores, warm"
lscpu 2>/dev/null | grep -E '^(Model name|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|CPU\(s\)):' | tee "$OUT/cpu.txt"
pairs=()
for rep in 1 2 3; do
  rm -rf "$OUT/c1" "$OUT/cN"
  t0=$(secs); $E compile configs/*.json --jobs 1 --cache "$OUT/c1" >"$OUT/compile-j1-$rep.txt" 2>&1; t1=$(secs)
  $E compile configs/*.json --jobs "$cores" --cache "$OUT/cN" >"$OUT/compile-jN-$rep.txt" 2>&1; t2=$(secs)
  pairs+=("$(calc "($t2 - $t1) / ($t1 - $t0)") $(calc "$t1 - $t0") $(calc "$t2 - $t1")")
  echo "  pair $rep: ${pairs[-1]} (ratio, --jobs 1 s, --jobs $cores s)"
done
t2=$(secs); $E compile configs/*.json --jobs "$cores" --cache "$OUT/cN" >"$OUT/compile-warm.txt" 2>&1; t3=$(secs)
warm=$(calc "$t3 - $t2")
tail -n 1 "$OUT/compile-j1-3.txt" "$OUT/compile-jN-3.txt" "$OUT/compile-warm.txt"
read -r ratio j1 jn <<<"$(printf '%s\n' "${pairs[@]}" | sort -n | sed -n 2p)" # the median pair
v=$(verdict "$ratio" 0.125 "<=") || status=1
nconf=$(ls configs/*.json | wc -l)
row "compile $nconf configs, cold: --jobs $cores / --jobs 1 (median of 3)" "$(printf '%.2f / %.2f s' "$jn" "$j1")" "ratio $(printf '%.3f' "$ratio") <= 0.125" "$v"
v=$(verdict "$warm" 1 "<=") || status=1
row "compile $nconf configs, warm cache" "$(printf '%.2f s' "$warm")" "<= 1 s" "$v"

echo "== tune tune/warptile.json at 4096^3 (exhaustive)"
t0=$(secs)
$E tune tune/warptile.json $X --log "$OUT/exhaustive.jsonl" --emit-best "$OUT/best-exhaustive.json" >"$OUT/tune.txt" 2>"$OUT/tune.err"
rc=$?
t1=$(secs)
cat "$OUT/tune.txt"
tail -n 3 "$OUT/tune.err"
wall=$(calc "$t1 - $t0")
npts=$(grep -o '[0-9]* evaluated now' "$OUT/tune.txt" | head -1 | cut -d' ' -f1)
ppm=$(calc "60 * ${npts:-0} / $wall")
[ "$rc" = 0 ] || status=1
v=$(verdict "$wall" 120 "<=") || status=1
[ "${npts:-0}" -ge 200 ] || { v=MISSED; status=1; }
row "tune $npts warptile points at 4096^3 (exit $rc)" "$(printf '%.1f s' "$wall")" "$(printf '%.0f' "$ppm") points/min; <= 120 s" "$v"

echo "== resume the finished tune"
t0=$(secs)
$E tune tune/warptile.json $X --log "$OUT/exhaustive.jsonl" --resume >"$OUT/resume.txt" 2>&1
rc=$?
t1=$(secs)
head -n 1 "$OUT/resume.txt"
res=$(calc "$t1 - $t0")
v=$(verdict "$res" 5 "<=") || status=1
grep -q ' 0 evaluated now' "$OUT/resume.txt" || { v=MISSED; status=1; }
row "--resume of the finished tune (exit $rc)" "$(printf '%.2f s' "$res")" "<= 5 s, nothing re-run" "$v"

echo "== guided search with a quarter of the evaluations"
feasible=$(grep -o '[0-9]* feasible' "$OUT/tune.txt" | head -1 | cut -d' ' -f1)
budget=$((feasible / 4))
$E tune tune/warptile.json $X --strategy guided --budget "$budget" --log "$OUT/guided.jsonl" \
  --emit-best "$OUT/best-guided.json" >"$OUT/guided.txt" 2>"$OUT/guided.err"
head -n 1 "$OUT/guided.txt"
grep -q '(0 NVRTC compiles' "$OUT/guided.txt" && echo "  (every CUBIN of the guided search came from the cache)"
$E bench $X "$OUT/best-exhaustive.json" "$OUT/best-guided.json" --size 4096 --runs 11 --format jsonl >"$OUT/guided-bench.jsonl" 2>&1
ex=$(grep '"config":"warptile_db_tuned"' "$OUT/guided-bench.jsonl" | sed -n '1s/.*"tflops":\([0-9.]*\).*/\1/p')
lo=$(grep '"config":"warptile_db_tuned"' "$OUT/guided-bench.jsonl" | sed -n '2s/.*"tflops":\([0-9.]*\).*/\1/p')
if [ -n "$ex" ] && [ -n "$lo" ] && awk -v a="$ex" -v b="$lo" 'BEGIN { exit !(a > 0 && b > 0) }'; then
  r=$(calc "$lo / $ex")
  v=$(verdict "$r" 0.97 ">=") || status=1
  row "guided search, $budget of $feasible evaluations" "$(printf '%.2f vs %.2f' "$lo" "$ex")" "TFLOP/s ratio $(printf '%.3f' "$r") >= 0.97" "$v"
else
  row "guided search" "-" "bench failed" "MISSED"
  status=1
fi

echo "== size sweep of the tuned config and warptile_db beside cuBLAS (for tools/plot.sh --sizes)"
$E bench $X configs/warptile_db.json "$OUT/best-exhaustive.json" --sizes 512:8192:*2 --runs 5 --format csv \
  >"$OUT/sizes.csv" 2>"$OUT/sizes.err"
grep -c . "$OUT/sizes.csv"

echo
echo "device: $(nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1); $(date -u +%Y-%m-%d)"
echo "| target | measured | required | |"
echo "|---|---:|---|---|"
printf '%s\n' "${rows[@]}"
exit $status
