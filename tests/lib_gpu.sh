#!/usr/bin/env bash
# lib_gpu.sh — libengine on the GPU in one call (< 8 minutes; prebuilt binaries only: build/ carried
# to the GPU machine, no compiler, no jansson headers, no pip). Copied to build/lib_gpu.sh by make.
# Run from anywhere: bash build/lib_gpu.sh. Logs under $OUT (default build/lib-gpu-out).
#   1  GPU_ONLY=library tests/gpu.sh: examples/sgemm PASS against cuBLAS; gpu_lib check (every op x 1x1x1,
#      17x33x5, 127x129x131, 1000x1001x999, 33x17x0 x beta 0/0.5 x f32/f64 x row/col-major x {packed,
#      ld+3, batch 3}, against cuBLAS); gpu_lib threads (two host threads on one context); memcheck of
#      gpu_lib; engine.matmul against torch.matmul (views, batches, the current stream)
#   2  host time per engine_plan_execute at 64^3, median of 10000 back-to-back calls (target <= 5 us),
#      engine_sgemm's and cublasSgemm's beside it
#   3  a cold NVRTC compile (a fresh cache directory: origin nvrtc, compile_ms from the plan), then the
#      first call of the same config from the warm disk cache in a new process, after that context's
#      first plan of another shape loaded wisdom (origin disk, target <= 20 ms; the first plan's time beside)
#   3b a new problem's first call with async jit (gpu_lib async): cold cache, then warm
#   3c engine warm into a fresh cache, then bench/hostpath.py first from it (a process's first call,
#      target <= 20 ms) and from a fresh cache (a new shape's first call, target <= cuBLAS + 1 ms)
#   3d bench/hostpath.py host: host time per engine.matmul beside torch.matmul (target <= 15 us 2-D,
#      <= 20 us a batch)
#   4  engine.matmul on torch tensors at 4096^3 f32 against the same config and overrides through
#      `engine bench` (target >= 0.98x), cuBLAS's time from the same bench beside them
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build/lib-gpu-out}
mkdir -p "$OUT"
E=build/engine
export ENGINE_LIB=$PWD/build/libengine.so PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
rows=()
row() { rows+=("$(printf '%-44s | %-26s | %s' "$1" "$2" "$3")"); }
t0=$(date +%s)

echo "== 1 correctness (tests/gpu.sh library section)"
GPU_ONLY=library GPU_LOG_DIR=$OUT/logs timeout 330 bash tests/gpu.sh >"$OUT/1-gpu-library.txt" 2>&1
rc=$?
grep -E '^  (ok|FAIL|SKIP) ' "$OUT/1-gpu-library.txt"
sum=$(tail -n 1 "$OUT/1-gpu-library.txt")
row "library section: example, C, threads, memcheck, torch" "exit $rc" "$sum"

echo "== 2 host overhead at 64^3"
timeout 120 build/gpu_lib overhead >"$OUT/2-overhead.txt" 2>&1
rc=$?
cat "$OUT/2-overhead.txt"
r=$(sed -n 's/^RESULT //p' "$OUT/2-overhead.txt")
row "engine_plan_execute host us/call (<= 5)" "exit $rc" "${r:-no result}"

echo "== 3 cold compile, then the first call from the warm disk cache"
cache=$(mktemp -d)
timeout 120 build/gpu_lib firstcall "$cache" >"$OUT/3-cold.txt" 2>&1
rc1=$?
timeout 60 build/gpu_lib firstcall "$cache" >"$OUT/3-warm.txt" 2>&1
rc2=$?
cat "$OUT/3-cold.txt" "$OUT/3-warm.txt"
cold=$(sed -n 's/^plan 2048^3: .*"origin":"\([a-z]*\)","compile_ms":\([0-9.]*\).*/origin \1, compile_ms \2/p' "$OUT/3-cold.txt")
warm_o=$(sed -n 's/^plan 2048^3: .*"origin":"\([a-z]*\)".*/\1/p' "$OUT/3-warm.txt")
warm=$(sed -n 's/^RESULT first_ms=\([0-9.]*\) ctx_first_ms=\([0-9.]*\)/\1 ms (a new context'"'"'s first plan, wisdom loaded: \2 ms)/p' "$OUT/3-warm.txt")
row "cold compile 2048^3 (fresh cache)" "exit $rc1" "${cold:-no plan}"
row "first call of a config, warm disk cache (<= 20 ms)" "exit $rc2, origin ${warm_o:-?}" "${warm:-?}"
rm -rf "$cache"

echo "== 3b a new problem's first call with async jit: cold cache, then warm (gpu_lib async)"
cache=$(mktemp -d)
timeout 120 build/gpu_lib async "$cache" >"$OUT/3b-async-cold.txt" 2>&1
rc1=$?
timeout 60 build/gpu_lib async "$cache" >"$OUT/3b-async-warm.txt" 2>&1
rc2=$?
cat "$OUT/3b-async-cold.txt" "$OUT/3b-async-warm.txt"
for w in cold warm; do
  r=$(sed -n 's/^RESULT //p' "$OUT/3b-async-$w.txt")
  row "async first call 2048x2048x512, $w cache" "exit $([ $w = cold ] && echo $rc1 || echo $rc2)" "${r:-no result}"
done
rm -rf "$cache"

echo "== 3c engine warm into a fresh cache, then Python's first calls from it"
cache=$(mktemp -d)
XDG_CACHE_HOME=$cache timeout 240 $E warm >"$OUT/3c-warm.txt" 2>&1
rc=$?
tail -n 2 "$OUT/3c-warm.txt"
row "engine warm (fresh cache)" "exit $rc" "$(tail -n 1 "$OUT/3c-warm.txt" | cut -c1-120)"
PYTHONUNBUFFERED=1 timeout 120 python3 bench/hostpath.py first --cache "$cache" >"$OUT/3c-first-warm.txt" 2>&1
rc=$?
cat "$OUT/3c-first-warm.txt" | tail -n 4
row "Python first calls, warm cache (<= 20 ms)" "exit $rc" "$(grep -m1 'first ' "$OUT/3c-first-warm.txt" | grep -v '^{' | cut -c1-150)"
cache2=$(mktemp -d)
PYTHONUNBUFFERED=1 timeout 120 python3 bench/hostpath.py first --cache "$cache2" >"$OUT/3c-first-cold.txt" 2>&1
rc=$?
cat "$OUT/3c-first-cold.txt" | tail -n 4
row "Python first calls, cold cache (<= cuBLAS + 1 ms)" "exit $rc" "$(grep -v '^{' "$OUT/3c-first-cold.txt" | grep -m1 'first ' | cut -c1-150)"
rm -rf "$cache" "$cache2"

echo "== 3d host time per engine.matmul beside torch.matmul (200 calls in a loop)"
PYTHONUNBUFFERED=1 timeout 240 python3 bench/hostpath.py host >"$OUT/3d-host.txt" 2>&1
rc=$?
cat "$OUT/3d-host.txt" | grep -v '^{'
row "engine.matmul host time (<= 15 us 2-D, 20 batch)" "exit $rc" "$(grep -c ': met' "$OUT/3d-host.txt") met, $(grep -c ': missed' "$OUT/3d-host.txt") missed"

echo "== 4 engine.matmul at 4096^3 against the same kernel through engine bench"
timeout 150 python3 - >"$OUT/4-matmul.json" 2>"$OUT/4-matmul.err" <<'PY'
import json, statistics, torch, engine
n = 4096
a = torch.rand((n, n), device="cuda"); b = torch.rand((n, n), device="cuda"); c = torch.empty((n, n), device="cuda")
for _ in range(5):
    engine.matmul(a, b, c)
engine.wait_compiles()  # the first calls ran cuBLAS while the kernel compiled: time the engine's kernel
for _ in range(3):
    engine.matmul(a, b, c)
torch.cuda.synchronize()
def timed(f):
    ms = []
    for _ in range(15):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(5):
            f()
        e1.record(); e1.synchronize()
        ms.append(e0.elapsed_time(e1) / 5)
    return statistics.median(ms)
t = timed(lambda: engine.matmul(a, b, c))
tt = timed(lambda: torch.matmul(a, b, out=c))
info = engine.explain(a, b, c)
print(json.dumps({"ms": t, "torch_ms": tt, "config": info.get("config"), "overrides": info.get("overrides", ""),
                  "label": info.get("label")}))
PY
rc=$?
cat "$OUT/4-matmul.json" "$OUT/4-matmul.err" | head -20
read -r py_ms torch_ms cfg ovr < <(python3 -c '
import json,sys
d=json.load(open(sys.argv[1])); print(d["ms"], d["torch_ms"], d["config"], d["overrides"] or "-")' "$OUT/4-matmul.json" 2>/dev/null)
if [ -n "${cfg:-}" ]; then
  [ "$ovr" = - ] && ovr=""
  # shellcheck disable=SC2086 # the overrides are "--set K=V" words
  timeout 150 $E bench "$cfg" $ovr --size 4096 --format jsonl >"$OUT/4-bench.jsonl" 2>"$OUT/4-bench.err"
  read -r cli_ms cub_ms < <(python3 -c '
import json,sys
rows=[json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
k=[r["ms"] for r in rows if r["template"]!="cublas"]; c=[r["ms"] for r in rows if r["template"]=="cublas"]
print(k[0] if k else 0, c[0] if c else 0)' "$OUT/4-bench.jsonl" 2>/dev/null)
  ratio=$(python3 -c "print('%.3f' % (float('${cli_ms:-0}') / float('$py_ms')) if float('$py_ms') > 0 else 'n/a')")
  row "engine.matmul 4096^3 f32 / CLI (>= 0.98)" "$cfg $ovr" "py ${py_ms} ms, CLI ${cli_ms:-?} ms, ratio ${ratio}, cuBLAS ${cub_ms:-?} ms, torch ${torch_ms} ms"
else
  row "engine.matmul 4096^3 f32 / CLI (>= 0.98)" "exit $rc" "no result ($(head -c 200 "$OUT/4-matmul.err"))"
fi

echo
echo "== summary ($(($(date +%s) - t0)) s)"
printf '%-44s | %-26s | %s\n' "check" "status" "result"
printf '%s\n' "${rows[@]}"
