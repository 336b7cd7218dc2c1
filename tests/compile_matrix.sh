#!/usr/bin/env bash
# Every shipped config compiled by NVRTC for sm_80, sm_86, sm_90 and sm_90a (no GPU needed): each must
# compile, and its resource table (registers, stack, spills, shared memory) is printed. Spills are
# reported, not failed: several published walk steps spill by design of their register budget.
# Then every entry of the shipped wisdom, at its shape, op and batch, for its arch.
# Where the time goes: NVRTC (an arch's configs compile in one process, on --jobs threads, the number
# of cores by default) and, for the wisdom's 1,100-odd entries, one process each (an entry's shape is
# its own), about 0.1 s of CPU apiece just to start (the command links cuBLAS): they run as many at a
# time as there are cores, with a progress line every 20 s.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
E=${BUILD:-build}/engine
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
jobs=$(nproc 2>/dev/null || echo 2)
# Configs whose template requires the architecture-specific target (tc32.cu's wgmma: sm_90a only)
# compile for sm_90a alone; for every other arch each must be refused (exit 2) naming that rule.
all=(configs/*.json) configs=() specific=()
while IFS='|' read -r spec c; do
  if [ "$spec" = 1 ]; then specific+=("$c"); else configs+=("$c"); fi
done < <(python3 - "${all[@]}" <<'PY'
import json, sys
for c in sys.argv[1:]:
    tpl = json.load(open(c))["template"]
    print(f"{int('ARCH_SPECIFIC == 1' in open(f'kernels_src/{tpl}.cu').read())}|{c}")
PY
)
# One process an arch for the refusals: each config's own error line ("FILE:LINE:COL: ...") names the rule.
for arch in sm_80 sm_86 sm_90; do
  out=$($E compile "${specific[@]}" --arch $arch 2>&1)
  rc=$?
  for c in "${specific[@]}"; do
    if [ "$rc" = 2 ] && printf '%s\n' "$out" | grep -q "^$c:.*only on the architecture-specific target sm_90a"; then
      pass "$arch $(basename "$c" .json) refused (sm_90a only)"
    else
      fail "$arch $(basename "$c" .json) is refused with exit 2 naming sm_90a" "$(printf '%s\n' "$out" | grep "^$c:" | tail -2)"
    fi
  done
done
for arch in sm_80 sm_86 sm_90 sm_90a; do
  [ "$arch" = sm_90a ] && configs+=("${specific[@]}")
  echo "== $arch: ${#configs[@]} configs, $jobs at a time"
  out=$($E compile "${configs[@]}" --arch $arch 2>&1)
  rc=$?
  printf '%s\n' "$out" | sed 's/^/  /'
  [ "$rc" = 0 ] || fail "compile matrix $arch exits $rc"
  for c in "${configs[@]}"; do
    name=$(basename "$c" .json)
    if printf '%s\n' "$out" | grep -q "^$name .* $arch "; then pass "$arch $name"; else fail "$arch $name did not compile"; fi
  done
  spills=$(printf '%s\n' "$out" | awk 'NR > 1 && $1 != "compile:" && $8 + $9 > 0 {print $1 " (" $8 "+" $9 " bytes)"}' | tr '\n' ' ')
  [ -n "$spills" ] && echo "  spills on $arch: $spills"
done

# K = 0 (C = beta C): every shipped config plans and compiles; nothing to load is no launch to make
# (PACK_LD's pack launch once asked for a grid of 0 blocks there, found only on the GPU).
# Without --arch (sm_90 guessed, sm_90a for the arch-specific template), as the GPU tests run them.
out=$($E compile "${all[@]}" --m 5 --n 5 --k 0 2>&1)
rc=$?
if [ "$rc" = 0 ] && printf '%s\n' "$out" | grep -q "^compile: ${#all[@]} of ${#all[@]} configs"; then
  pass "every shipped config compiles at 5x5x0 (K = 0)"
else fail "every shipped config compiles at 5x5x0 (K = 0): exit $rc" "$(printf '%s\n' "$out" | grep -v '^[a-z_0-9]* *[a-z0-9_]* *sm_' | tail -4)"; fi

# Every entry of the shipped wisdom compiles at its own shape, op and batch, with its overrides, for
# its file's arch (the default file's entries for sm_80 and sm_90): a template change that breaks a
# tuned choice fails here, without a GPU. An entry of an arch-specific template (tc32.cu) is built,
# as the GPU builds it without --arch, for sm_90a.
python3 - wisdom/*.json >"$T/entries" <<'PY'
import json, re, sys
def specific(config):
    tpl = json.load(open(config))["template"]
    return bool(re.search(r'"arch_specific": *true', open(f"kernels_src/{tpl}.cu").read()))
i = 0
for path in sys.argv[1:]:
    w = json.load(open(path))
    archs = [w["arch"]] if "arch" in w else ["sm_80", "sm_90"]
    for e in w["entries"]:
        m, n, k = e["shape"].split("x")
        op, batch = e.get("op", "NN"), e.get("batch", 1)
        sets = " ".join(f"--set {key}={val}" for key, val in e.get("set", {}).items())
        for arch in archs:
            if specific(e["config"]):
                if arch != "sm_90":
                    continue
                arch = "sm_90a"
            what = f"{e['dtype']} {e['shape']}" + (f" {op}" if op != "NN" else "") + (f" batch {batch}" if batch != 1 else "")
            print(f"{i}|{path}|{arch}|{e['dtype']}|{what}|{e['config']} --dtype {e['dtype']} --m {m} --n {n} --k {k}"
                  f" --op {op} --batch {batch} --arch {arch} {sets}")
            i += 1
PY
n=$(wc -l <"$T/entries")
if [ "${MATRIX_WISDOM:-1}" = 0 ]; then
  # make sanitize: the host code these run (load, paste, plan, cache) ran above on every shipped config
  # for every arch; here it would be 1,144 instrumented processes, mostly waiting on NVRTC.
  echo "== wisdom: $n entries not compiled (MATRIX_WISDOM=0), counted as skipped"
  SKIPPED=$((SKIPPED + n))
  SKIPPED_NAMES+=("the $n wisdom entries (MATRIX_WISDOM=0)")
  summary
  exit
fi
echo "== wisdom: $n entries, one process each, $jobs at a time"
mkdir "$T/w"
# Shard s takes every jobs-th entry: NVRTC compiles and cache hits spread evenly. Each entry leaves
# its output (T/w/ID) and then its exit status (T/w/ID.rc): the .rc files count what is done.
for ((s = 0; s < jobs; s++)); do
  awk -F'|' -v j="$jobs" -v s="$s" 'NR % j == s' "$T/entries" | while IFS='|' read -r id _ _ _ _ args; do
    # shellcheck disable=SC2086 # the args split on purpose
    $E compile $args >"$T/w/$id" 2>&1
    echo $? >"$T/w/$id.rc"
  done &
done
t0=$SECONDS next=20
while [ -n "$(jobs -rp)" ]; do
  sleep 1
  if [ $((SECONDS - t0)) -ge $next ]; then
    echo "  $(find "$T/w" -name '*.rc' | wc -l) of $n entries compiled ($((SECONDS - t0)) s)"
    next=$((next + 20))
  fi
done
wait
# An entry passes when its process exited 0 and a row of its table has the arch and dtype asked for
# (read without a process per entry: 1,100 greps cost seconds).
while IFS='|' read -r id file arch dtype what _; do
  rc=none text=
  [ -f "$T/w/$id.rc" ] && read -r rc <"$T/w/$id.rc"
  [ -f "$T/w/$id" ] && IFS= read -r -d '' text <"$T/w/$id"
  row=" $arch [^"$'\n'"]*$dtype "
  if [ "$rc" = 0 ] && [[ $text =~ $row ]]; then
    pass "$file: $what for $arch"
  else
    fail "$file: $what for $arch compiles (exit $rc)" "$(tail -3 "$T/w/$id" 2>/dev/null)"
  fi
done <"$T/entries"
summary
