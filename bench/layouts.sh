#!/usr/bin/env bash
# bench/layouts.sh — issue 25's layout targets on one GPU (H100): verify the paths a transposed B and
# narrowed rows take, then time every op and padded leading dimensions beside cuBLAS in the same
# layout, and say which target is met. Plain bash and awk; the prebuilt build/engine only (build/
# carried). Logs under $OUT (default build/layouts-out); the table last. < 8 minutes on an H100.
#   1. GPU_ONLY=layouts-tb tests/gpu.sh (GPU_SECTIONS overrides: "layouts" runs the whole layouts
#      section, layouts-tb included, in about twice the time): DMMA's n-major B^T at even K (16-byte
#      copies, partial k-tiles, ld + 8, register-staged and its scalar fallback, split-K, stream-K,
#      memcheck), warptile's PAD_BT in each DB path, DMMA's STAGES_NARROW at ld + 1 and odd K, its
#      ODD_LD (every op, batches, memcheck at NN and TN) and PACK_LD (every op, memcheck at TT).
#   2. bench (it verifies first; --runs 7, median; cuBLAS's cublasGemmStridedBatchedEx in the same
#      layout in the same call): warptile_db f32, dgemm_dmma f64 and tc32_3x (group tc32: 3xTF32 on
#      an sm_90 GPU, against its own NN; also ld + 1 and + 8 at 2048x4096x4096), as shipped, in NN NT TN TT at
#      4096^3 and 2048x4096x4096; the transposed-B paths they replaced at NT and TT (warptile
#      PAD_BT 0, DMMA BT_NMAJOR 0) for the A/B; lda = ldb = ldc padded by 1, 8, 64 at 4096^3 (op NN);
#      f64 ld + 1 also with the candidates for the one padded case below 0.9x: STAGES_NARROW 4 (a
#      deeper pipeline for the 8-byte copies), register-staged (ASYNC 0), ODD_LD 1 (aligned chunks
#      as 16-byte copies; MINB_ODD 3), both of the last two, PACK_LD 1 (A and B copied packed into the
#      workspace first, the copy timed with the GEMM); TT at ld + 1 as shipped, with ODD_LD, with PACK_LD.
#   3. The table: every row (ms, TFLOP/s, x cuBLAS, x its reference), then each target met or missed:
#      op != NN: >= 0.95x that dtype's NN at the shape, and x cuBLAS within 0.05 of NN's; ld + P:
#      >= 0.9x the packed row of its op; the replaced paths and candidates: x the shipped row they compete with.
#      "x ref (min)" compares the fastest runs (ms_min) instead of the medians, and "spread" is a
#      row's slowest run over its fastest less 1: FP64 at 4096^3 draws the card down to 1,750-1,900 MHz
#      within a row's runs (first run: spreads of 9-18%, where FP32 stays under 0.5% and the FP64
#      2048-row medians sit at their fastest runs), so a median lands wherever the clock happened to
#      be; the fastest run is the one at the highest clock.
#   4. Steady state (f64 at 4096^3): the same rows again, each after STEADY_WARMUP untimed launches
#      (default 200, about 0.6 s: long enough for the clock to settle where the power limit holds
#      it), in a second table; a target met in one table and missed in the other is the clock's.
# LAYOUTS_QUICK=1 (about 2-3 minutes): step 1 with GPU_SECTIONS=layouts-tb, then only the f64 rows
# at 4096^3 (NN, NT, TT; NN at ld + 1 with its candidates; TT at ld + 1 with ODD_LD and PACK_LD)
# and their steady-state table. ENGINE_ARGS are added to every bench call; LAYOUTS_CHECKS=0 skips step 1;
# LAYOUTS_GROUPS="tc32" (any of f32 f64 tc32) times only those groups in step 2, and LAYOUTS_STEADY=0
# skips step 4.
set -u
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-build/layouts-out}
mkdir -p "$OUT"
E=${ENGINE_BIN:-build/engine}
RUNS=${RUNS:-7}
QUICK=${LAYOUTS_QUICK:-0}
STEADY_WARMUP=${STEADY_WARMUP:-200}
t0=$(date +%s)
[ -x "$E" ] || { echo "layouts.sh: $E is missing (run make, and carry build/)"; exit 2; }

# The card and its clocks: timings compare only within one run on one card.
dev=$(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader 2>/dev/null | head -1)
echo "== device: ${dev:-unknown (no nvidia-smi)}"
if [ "${LAYOUTS_CHECKS:-1}" = 0 ]; then # tests/bench.sh: the fake worker has no kernels to check
  grc=skipped summary="checks skipped (LAYOUTS_CHECKS=0)"
else
  echo "== GPU_ONLY=${GPU_SECTIONS:-layouts-tb} tests/gpu.sh"
  GPU_ONLY=${GPU_SECTIONS:-layouts-tb} ENGINE_BIN=$E GPU_LOG_DIR="$OUT/gpu-logs" bash tests/gpu.sh >"$OUT/gpu.txt" 2>&1
  grc=$?
  grep -E '^  (FAIL|SKIP) ' "$OUT/gpu.txt"
  summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$OUT/gpu.txt" | tail -1)
  echo "${summary:-no summary} (gpu.sh exit $grc, $(($(date +%s) - t0)) s)"
fi

# ROWS: one line per bench row: key status ms tflops pct_cublas cublas_ms ms_min ms_max clock_mhz
# (- where absent); the clock is the bench's probe right after the row's runs.
ROWS="$OUT/rows.tsv"
: >"$ROWS"
# bench_row KEY CONFIG DTYPE ARGS...: one bench call, its kernel row and cuBLAS's into ROWS.
n=0
bench_row() {
  local key=$1 cfg=$2 dt=$3 log k c status ms tf pct cms mn mx clk
  shift 3
  n=$((n + 1))
  log="$OUT/bench-$n-${key//\//_}.jsonl"
  # shellcheck disable=SC2086
  $E bench "configs/$cfg.json" --dtype "$dt" --runs "$RUNS" --format jsonl ${ENGINE_ARGS:-} "$@" >"$log" \
    2>"${log%.jsonl}.err"
  k=$(grep "\"config\":\"${cfg}[\"[]" "$log" | head -1)
  c=$(grep '"config":"cublas"' "$log" | head -1)
  status=$(sed -n 's/.*"status":"\([a-zA-Z_]*\)".*/\1/p' <<<"$k")
  ms=$(sed -n 's/.*"ms":\([0-9.]*\),.*/\1/p' <<<"$k")
  tf=$(sed -n 's/.*"tflops":\([0-9.]*\),.*/\1/p' <<<"$k")
  pct=$(sed -n 's/.*"pct_cublas":\([0-9.]*\),.*/\1/p' <<<"$k")
  cms=$(sed -n 's/.*"ms":\([0-9.]*\),.*/\1/p' <<<"$c")
  mn=$(sed -n 's/.*"ms_min":\([0-9.]*\),.*/\1/p' <<<"$k")
  mx=$(sed -n 's/.*"ms_max":\([0-9.]*\),.*/\1/p' <<<"$k")
  clk=$(sed -n 's/.*"clock_mhz":\([0-9.]*\),.*/\1/p' <<<"$k")
  [ -z "$k" ] && status=error
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$key" "${status:-error}" "${ms:--}" "${tf:--}" "${pct:--}" \
    "${cms:--}" "${mn:--}" "${mx:--}" "${clk:--}" >>"$ROWS"
}
# The f64 ld + 1 candidates at 4096^3 (for the one padded case below 0.9x); ARGS go to every call.
f64_ld1_rows() {
  local c=dgemm_dmma p=f64/4096x4096x4096 ld=(--size 4096 --lda +1 --ldb +1 --ldc +1)
  bench_row "$p/NN/ld+1/STAGES_NARROW=4" $c f64 "${ld[@]}" --set STAGES_NARROW=4 "$@"
  bench_row "$p/NN/ld+1/ASYNC=0" $c f64 "${ld[@]}" --set ASYNC=0 --set STAGES=2 "$@"
  bench_row "$p/NN/ld+1/ODD_LD=1" $c f64 "${ld[@]}" --set ODD_LD=1 --set MINB_ODD=3 "$@"
  bench_row "$p/NN/ld+1/ODD_LD=1+STAGES_NARROW=4" $c f64 "${ld[@]}" --set ODD_LD=1 --set MINB_ODD=3 \
    --set STAGES_NARROW=4 "$@"
  bench_row "$p/NN/ld+1/PACK_LD=1" $c f64 "${ld[@]}" --set PACK_LD=1 "$@"
  bench_row "$p/TT/ld+1" $c f64 "${ld[@]}" --op TT "$@"
  bench_row "$p/TT/ld+1/ODD_LD=1" $c f64 "${ld[@]}" --op TT --set ODD_LD=1 --set MINB_ODD=3 "$@"
  bench_row "$p/TT/ld+1/PACK_LD=1" $c f64 "${ld[@]}" --op TT --set PACK_LD=1 "$@"
}
# The f64 rows at 4096^3 that the quick mode and the steady-state table time: NN, NT, TT, NN at
# ld + 1 and the candidates.
f64_rows() {
  local op
  for op in NN NT TT; do
    bench_row "f64/4096x4096x4096/$op" dgemm_dmma f64 --size 4096 --op $op "$@"
  done
  bench_row "f64/4096x4096x4096/NN/ld+1" dgemm_dmma f64 --size 4096 --lda +1 --ldb +1 --ldc +1 "$@"
  f64_ld1_rows "$@"
}
if [ "$QUICK" = 1 ]; then
  f64_rows
else
  # group config dtype replaced-path: tc32 is FP32 on the tensor cores (3xTF32, sm_90a), judged
  # against its own NN (its rows' first key part); LAYOUTS_GROUPS picks groups (default all three).
  for spec in "f32 warptile_db f32 PAD_BT=0" "f64 dgemm_dmma f64 BT_NMAJOR=0" "tc32 tc32_3x f32 -"; do
    read -r grp cfg dt old <<<"$spec"
    [[ " ${LAYOUTS_GROUPS:-f32 f64 tc32} " == *" $grp "* ]] || continue
    for shape in "4096 4096 4096" "2048 4096 4096"; do
      read -r m nn k <<<"$shape"
      for op in NN NT TN TT; do
        bench_row "$grp/${m}x${nn}x${k}/$op" "$cfg" "$dt" --m "$m" --n "$nn" --k "$k" --op "$op"
      done
      [ "$old" = - ] && continue
      for op in NT TT; do
        bench_row "$grp/${m}x${nn}x${k}/$op/$old" "$cfg" "$dt" --m "$m" --n "$nn" --k "$k" --op "$op" --set "$old"
      done
    done
    for pad in 1 8 64; do
      bench_row "$grp/4096x4096x4096/NN/ld+$pad" "$cfg" "$dt" --size 4096 --lda +$pad --ldb +$pad --ldc +$pad
    done
    [ "$grp" = tc32 ] && bench_row "tc32/2048x4096x4096/NN/ld+1" "$cfg" "$dt" --m 2048 --n 4096 --k 4096 \
      --lda +1 --ldb +1 --ldc +1
    [ "$grp" = tc32 ] && bench_row "tc32/2048x4096x4096/NN/ld+8" "$cfg" "$dt" --m 2048 --n 4096 --k 4096 \
      --lda +8 --ldb +8 --ldc +8
    [ "$grp" = f64 ] && f64_ld1_rows
  done
fi
# Steady state: the f64 rows again after STEADY_WARMUP untimed launches each (the header, step 4).
ROWS_MAIN=$ROWS
ROWS="$OUT/rows-steady.tsv"
: >"$ROWS"
[ "${LAYOUTS_STEADY:-1}" = 1 ] && f64_rows --warmup "$STEADY_WARMUP"
ROWS=$ROWS_MAIN

echo
echo "== layouts on ${dev:-an unknown device}: ${summary:-no verify summary} (gpu.sh exit $grc); timings: median of $RUNS runs, cuBLAS in the same layout; $(($(date +%s) - t0)) s in all"
# Each row against its reference: op rows against NN at their shape (dtype/shape/NN), ld + P rows
# against packed NN at 4096^3, a replaced path or candidate (a fourth or fifth key part) against the
# shipped row it competes with (its key less the last part). "x ref" is the reference's ms over the
# row's (above 1: faster); "x ref (min)" the same over the fastest runs; "spread" the row's slowest
# run over its fastest, less 1; MHz the clock probed right after the row's runs.
table() { # ROWS-FILE: the table, then the targets met and missed
awk -F'\t' '
  { key[NR] = $1; st[$1] = $2; ms[$1] = $3; tf[$1] = $4; pct[$1] = $5; cms[$1] = $6; mn[$1] = $7; mx[$1] = $8; clk[$1] = $9 }
  function num(x) { return x != "-" && x != "" && x + 0 >= 0 }
  END {
    printf "%-42s %-6s %9s %8s %9s %9s %8s %8s %7s %5s  %s\n", "row (dtype/shape/op[/variant])", "status", "ms", "TFLOP/s", "cublas_ms", "x cuBLAS", "x ref", "ref(min)", "spread", "MHz", "target"
    met = 0; missed = 0
    for (i = 1; i <= NR; i++) {
      k = key[i]; np = split(k, p, "/"); ref = ""; target = ""
      if (np == 3 && p[3] != "NN") { ref = p[1] "/" p[2] "/NN"; kind = "op" }
      else if (np == 4 && p[4] ~ /^ld\+/) { ref = p[1] "/" p[2] "/" p[3]; kind = "ld" }
      else if (np >= 4) { ref = p[1] "/" p[2] "/" p[3]; if (np == 5) ref = ref "/" p[4]; kind = "ab" }
      xr = "-"; xc = "-"; xm = "-"; sp = "-"
      if (num(pct[k])) xc = sprintf("%.3f", pct[k] / 100)
      ok = st[k] == "ok" && num(ms[k])
      if (ref != "" && ok && st[ref] == "ok" && num(ms[ref])) xr = sprintf("%.3f", ms[ref] / ms[k])
      if (ref != "" && ok && st[ref] == "ok" && num(mn[ref]) && num(mn[k]) && mn[k] > 0) xm = sprintf("%.3f", mn[ref] / mn[k])
      if (ok && num(mn[k]) && num(mx[k]) && mn[k] > 0) sp = sprintf("%.1f%%", 100 * (mx[k] / mn[k] - 1))
      if (kind == "op" && ref != "") {
        if (xr == "-" || !num(pct[ref]) || !num(pct[k])) { target = "MISSED (no figure)"; missed++ }
        else {
          d = (pct[k] - pct[ref]) / 100; if (d < 0) d = -d
          good = (xr + 0 >= 0.95) && (d <= 0.05)
          target = sprintf("%s: x NN %s (>= 0.95); x cuBLAS %.3f vs NN %.3f (within 0.05)", good ? "met" : "MISSED", xr, pct[k] / 100, pct[ref] / 100)
          if (good) met++; else missed++
        }
      } else if (kind == "ld") {
        if (xr == "-") { target = "MISSED (no figure)"; missed++ }
        else { good = xr + 0 >= 0.9; target = sprintf("%s: x packed %s (>= 0.9)", good ? "met" : "MISSED", xr); if (good) met++; else missed++ }
      } else if (kind == "ab") {
        target = "(A/B: x " ref ")"
      }
      printf "%-42s %-6s %9s %8s %9s %9s %8s %8s %7s %5s  %s\n", k, st[k], ms[k], tf[k], cms[k], xc, xr, xm, sp, clk[k], target
      ref = ""; kind = ""
    }
    printf "targets: %d met, %d missed\n", met, missed
  }' "$1"
}
table "$ROWS" | tee "$OUT/table.txt"
echo
echo "== steady state: the f64 rows at 4096^3 after $STEADY_WARMUP untimed launches each (median of $RUNS runs)"
table "$OUT/rows-steady.tsv" | tee "$OUT/table-steady.txt"
