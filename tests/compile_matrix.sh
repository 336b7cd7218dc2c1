#!/usr/bin/env bash
# Every shipped config compiled by NVRTC for sm_80, sm_86, sm_90 and sm_90a (no GPU needed): each must
# compile, and its resource table (registers, stack, spills, shared memory) is printed. Spills are
# reported, not failed: several published walk steps spill by design of their register budget.
# Then every entry of the shipped wisdom, at its shape, for its arch.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
E=${BUILD:-build}/engine
# Configs whose template requires the architecture-specific target (tc32.cu's wgmma: sm_90a only)
# compile for sm_90a alone; for every other arch each must be refused (exit 2) naming that rule.
all=(configs/*.json) configs=() specific=()
for c in "${all[@]}"; do
  tpl=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["template"])' "$c")
  if grep -q 'ARCH_SPECIFIC == 1' "kernels_src/$tpl.cu"; then specific+=("$c"); else configs+=("$c"); fi
done
for arch in sm_80 sm_86 sm_90; do
  for c in "${specific[@]}"; do
    out=$($E compile "$c" --arch $arch 2>&1)
    rc=$?
    if [ "$rc" = 2 ] && printf '%s\n' "$out" | grep -q 'only on the architecture-specific target sm_90a'; then
      pass "$arch $(basename "$c" .json) refused (sm_90a only)"
    else
      fail "$arch $(basename "$c" .json) is refused with exit 2 naming sm_90a" "$(printf '%s\n' "$out" | tail -2)"
    fi
  done
done
for arch in sm_80 sm_86 sm_90 sm_90a; do
  echo "== $arch"
  [ "$arch" = sm_90a ] && configs+=("${specific[@]}")
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

# Every entry of the shipped wisdom compiles at its own shape, with its overrides, for its file's
# arch (the default file's entries for sm_80 and sm_90): a template change that breaks a tuned
# choice fails here, without a GPU.
echo "== wisdom"
python3 - wisdom/*.json >"${TMPDIR:-/tmp}/wisdom-entries.$$" <<'PY'
import json, sys
for path in sys.argv[1:]:
    w = json.load(open(path))
    archs = [w["arch"]] if "arch" in w else ["sm_80", "sm_90"]
    for e in w["entries"]:
        m, n, k = e["shape"].split("x")
        sets = " ".join(f"--set {key}={val}" for key, val in e.get("set", {}).items())
        for arch in archs:
            print(f"{path}|{arch}|{e['dtype']}|{e['shape']}|{e['config']} --dtype {e['dtype']} --m {m} --n {n} --k {k} --arch {arch} {sets}")
PY
while IFS='|' read -r file arch dtype shape args; do
  # shellcheck disable=SC2086
  out=$($E compile $args 2>&1)
  if [ $? = 0 ] && printf '%s\n' "$out" | grep -q " $arch .*$dtype "; then
    pass "$file: $dtype $shape for $arch"
  else
    fail "$file: $dtype $shape for $arch compiles" "$(printf '%s\n' "$out" | tail -3)"
  fi
done <"${TMPDIR:-/tmp}/wisdom-entries.$$"
rm -f "${TMPDIR:-/tmp}/wisdom-entries.$$"
summary
