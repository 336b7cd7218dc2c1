# bench/lib.sh — sourced by the bench scripts: whose rows become data files of bench/data/ (the ones
# bench/tables.py renders into the README), those that find this GPU's wisdom or baseline, and those
# that run a series of tunes within a budget.
#
# device_name ENGINE: the name of GPU 0 as the driver gives it ("NVIDIA H100 80GB HBM3"); DEVICE,
# when set, wins (tests, and runs on a machine whose `engine info` cannot tell).
device_name() { [ -n "${DEVICE:-}" ] && echo "$DEVICE" || "$1" info 2>/dev/null | sed -n 's/^device 0: //p' | head -1; }
# device_tag NAME: the short name that prefixes a device's data files, h100 for the name above (the
# first word that is not NVIDIA, GeForce, RTX, Tesla or Quadro, lower case); TAG, when set, wins.
device_tag() {
  [ -n "${TAG:-}" ] && { echo "$TAG"; return; }
  echo "$1" | tr 'A-Z' 'a-z' | tr -cs 'a-z0-9' '\n' | grep -vxE 'nvidia|geforce|rtx|tesla|quadro' | head -1
}
# stamp_rows NAME: JSON lines on stdin with the run's "date" (UTC) and "device" first, on stdout.
stamp_rows() { sed "s/^{/{\"date\":\"$(date -u +%F)\",\"device\":\"$1\",/"; }
# slug NAME: the file stem of a device's wisdom and baseline files, as engine/core/wisdom.c's wisdom_slug
# makes it ("NVIDIA H100 80GB HBM3" -> nvidia-h100-80gb-hbm3).
slug() { echo "$1" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9][^a-z0-9]*/-/g; s/^-//; s/-$//'; }
# tune_seconds START: the seconds the next tune of a series may take: TUNE_S (its own budget), cut to
# what is left of TUNES_S (the series', counted from START, seconds since the epoch); 0 when 5 or
# fewer are left, so that the steps after the tunes still run.
tune_seconds() {
  local left=$((TUNES_S - ($(date +%s) - $1)))
  [ "$left" -gt 5 ] || left=0
  [ "$left" -gt "$TUNE_S" ] && left=$TUNE_S
  echo "$left"
}
# A device call's steps within one budget (bench/s16_gpu.sh, s17_gpu.sh): CALL_TAG names the call in
# $OUT/summary.txt's lines, BUDGET its seconds from CALL_T0 (set by call_start).
# call_run NAME SECONDS CMD...: CMD under timeout (at most what is left), its output in $OUT/NAME.log.
call_start() { CALL_TAG=$1 CALL_T0=$(date +%s); }
# call_begin SESSION [CALL]: a session script's call set up (bench/s18_gpu.sh on): E the engine
# ($ENGINE_BIN), CALL ($CALL, else the argument), DEST the caller's $OUT (the device tool's), OUT
# build/SESSION-CALL, BUDGET (560 s unless set), the engine's cache and wisdom folders of its own
# under $TMPDIR, call_start, and run / log for call_run / call_log.
call_begin() {
  E=${ENGINE_BIN:-build/engine}
  DEST=${OUT:-}
  CALL=${CALL:-${2:-}}
  OUT=build/$1-$CALL
  BUDGET=${BUDGET:-560}
  mkdir -p "$OUT"
  export XDG_CACHE_HOME=${TMPDIR:-/tmp}/$1-cache XDG_DATA_HOME=${TMPDIR:-/tmp}/$1-data
  call_start "$1-$CALL"
  run() { call_run "$@"; }
  log() { call_log "$@"; }
}
call_left() { echo $((BUDGET - ($(date +%s) - CALL_T0))); }
call_log() { echo "$CALL_TAG: $*" | tee -a "$OUT/summary.txt"; }
call_run() {
  local name=$1 s=$2
  shift 2
  [ "$(call_left)" -lt "$s" ] && s=$(call_left)
  if [ "$s" -le 5 ]; then call_log "$name: skipped (no time left)"; return; fi
  timeout "$s" "$@" >"$OUT/$name.log" 2>&1
  call_log "$name: exit $? after $(($(date +%s) - CALL_T0)) s"
}
# call_pack DEST: $OUT packed into $OUT/$CALL_TAG.tgz (earlier archives left out), logged; the archive
# and summary.txt copied into DEST where it is set (the device tool brings back a few files of $OUT).
call_pack() {
  tar czf "$OUT/$CALL_TAG.tgz" -C "$OUT" --exclude='*.tgz' . 2>/dev/null
  call_log "packed $OUT/$CALL_TAG.tgz"
  [ -z "$1" ] || cp "$OUT/$CALL_TAG.tgz" "$OUT/summary.txt" "$1/"
}
# call_merge_ab TUNED ALL FIN DATA SECONDS BENCH_ARGS...: a tune's winners (TUNED, its wisdom file)
# A/B before they ship, as bench/merge_tuned.py --ab wants: ALL and FIN made afresh as copies of
# wisdom/, ALL with every winner merged in; --auto at the tuned shapes with wisdom/ and with ALL
# (BENCH_ARGS: the dtype and the like; each under call_run, at most SECONDS), rows in
# $OUT/ab-before.log and ab-after.log; then FIN gets the winners --auto ran >= 2% faster (DATA names
# the data file in their sources), merge_tuned.py's lines in $OUT/merge.log, FIN's H100 file copied
# to $OUT. Uses the caller's E (the engine) and OUT.
call_merge_ab() {
  local tuned=$1 all=$2 fin=$3 data=$4 s=$5 sh
  shift 5
  rm -rf "$all" "$fin" && cp -r wisdom "$all" && cp -r wisdom "$fin"
  python3 bench/merge_tuned.py "$tuned" --into "$all/nvidia-h100-80gb-hbm3.json" --data x >/dev/null
  sh=$(python3 -c 'import json,sys; print(",".join(e["shape"] for e in json.load(open(sys.argv[1]))["entries"]))' "$tuned")
  call_run ab-before "$s" "$E" bench --auto --wisdom wisdom "$@" --shapes "$sh" --runs 7 --format jsonl
  call_run ab-after "$s" "$E" bench --auto --wisdom "$all" "$@" --shapes "$sh" --runs 7 --format jsonl
  python3 bench/merge_tuned.py "$tuned" --into "$fin/nvidia-h100-80gb-hbm3.json" --data "$data" \
    --ab "$OUT/ab-before.log" "$OUT/ab-after.log" >"$OUT/merge.log" 2>&1
  call_log "merge: exit $? ($(tail -1 "$OUT/merge.log"))"
  cp "$fin/nvidia-h100-80gb-hbm3.json" "$OUT/"
}
# lu_shapes OP: the beta-1 updates (M >= 1024) of the FP64 workload files lu_f64 and factor_judge_f64
# in that op, MxNxK,... (bench/s22_gpu.sh, s23_gpu.sh).
lu_shapes() {
  python3 - "$1" <<'PY'
import json, sys
s = []
for f in ("bench/workloads/lu_f64.json", "bench/workloads/judge/factor_judge_f64.json"):
    for c in json.load(open(f))["calls"]:
        if c["op"] == sys.argv[1] and c.get("beta") == 1 and c["m"] >= 1024:
            s.append("%dx%dx%d" % (c["m"], c["n"], c["k"]))
print(",".join(s))
PY
}
