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

# K = 0 (C = beta C): every shipped config plans and compiles; nothing to load is no launch to make
# (PACK_LD's pack launch once asked for a grid of 0 blocks there, found only on the GPU).
# Without --arch (sm_90 guessed, sm_90a for the arch-specific template), as the GPU tests run them.
out=$($E compile "${all[@]}" --m 5 --n 5 --k 0 2>&1)
rc=$?
if [ "$rc" = 0 ] && printf '%s\n' "$out" | grep -q "^compile: ${#all[@]} of ${#all[@]} configs"; then
  pass "every shipped config compiles at 5x5x0 (K = 0)"
else fail "every shipped config compiles at 5x5x0 (K = 0): exit $rc" "$(printf '%s\n' "$out" | grep -v '^[a-z_0-9]* *[a-z0-9_]* *sm_' | tail -4)"; fi

# Every entry of the shipped wisdom compiles at its own shape, with its overrides, for its file's
# arch (the default file's entries for sm_80 and sm_90): a template change that breaks a tuned
# choice fails here, without a GPU. An entry of an arch-specific template (tc32.cu) is built, as
# the GPU builds it without --arch, for sm_90a.
echo "== wisdom"
python3 - wisdom/*.json >"${TMPDIR:-/tmp}/wisdom-entries.$$" <<'PY'
import json, re, sys
def specific(config):
    tpl = json.load(open(config))["template"]
    return bool(re.search(r'"arch_specific": *true', open(f"kernels_src/{tpl}.cu").read()))
for path in sys.argv[1:]:
    w = json.load(open(path))
    archs = [w["arch"]] if "arch" in w else ["sm_80", "sm_90"]
    for e in w["entries"]:
        m, n, k = e["shape"].split("x")
        sets = " ".join(f"--set {key}={val}" for key, val in e.get("set", {}).items())
        for arch in archs:
            if specific(e["config"]):
                if arch != "sm_90":
                    continue
                arch = "sm_90a"
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
