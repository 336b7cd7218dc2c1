#!/usr/bin/env bash
# Does a change move the generated code? Builds engine at REV (default HEAD) in a scratch worktree,
# then emits the PTX of every shipped config (at 2048^3 and 4095x4093x4091, whole and partial tiles)
# and of every entry of the shipped wisdom at its own shape, op and batch, for sm_90 (sm_90a for
# templates that declare arch_specific), with REV's and with this
# checkout's engine and templates, and lists the kernels whose PTX differs. No GPU needed. Run it
# before spending device time on a restructure: identical PTX needs no new measurement.
#   tools/ptx_diff.sh [REV]        exit 0: every PTX identical; 1: some differ (listed); 2: error
set -u
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
here=$PWD
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/old" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
git worktree add -q --detach "$tmp/old" "$rev" || { echo "ptx_diff: cannot check out $rev"; exit 2; }
make -s -C "$tmp/old" build/engine >"$tmp/build.log" 2>&1 || { echo "ptx_diff: $rev does not build"; tail -5 "$tmp/build.log"; exit 2; }
make -s build/engine >"$tmp/build-new.log" 2>&1 || { echo "ptx_diff: this checkout does not build"; exit 2; }
# The runs: "label|args" lines, the same for both sides (configs and wisdom of this checkout).
python3 - >"$tmp/runs" <<'PY'
import glob, json, os
def arch(config):
    # Templates that declare "arch_specific" (tc32: wgmma) build for sm_90a only.
    t = json.load(open(config)).get("template", "")
    src = f"kernels_src/{t}.cu"
    return "sm_90a" if os.path.exists(src) and '"arch_specific": true' in open(src).read() else "sm_90"
for c in sorted(glob.glob("configs/*.json")):
    name = os.path.basename(c)[:-5]
    print(f"{name}-2048|{arch(c)}|{c} --size 2048")
    print(f"{name}-odd|{arch(c)}|{c} --m 4095 --n 4093 --k 4091")
for w in sorted(glob.glob("wisdom/*.json")):
    d = json.load(open(w))
    # The .dev-seeds.json points reuse the tuned entries' configs at hundreds of random shapes:
    # left out (their kernels are the tuned entries' own; compiling them would take an hour here).
    if d.get("arch") not in ("sm_90", "sm_90a") or w.endswith(".dev-seeds.json"):
        continue
    for i, e in enumerate(d["entries"]):
        m, n, k = e["shape"].split("x")
        sets = " ".join(f"--set {k2}={v}" for k2, v in e.get("set", {}).items())
        # The entry's own op and batch: a transposed or batched product is other code.
        lay = (f" --op {e['op']}" if e.get("op") else "") + (f" --batch {e['batch']}" if e.get("batch") else "")
        print(f"{os.path.basename(w)[:-5]}-{i}|{arch(e['config'])}|{e['config']} --m {m} --n {n} --k {k} --dtype {e['dtype']}{lay} {sets}")
PY
emit() { # side dir engine-root
  local side=$1 root=$2 label arch args
  while IFS='|' read -r label arch args; do
    mkdir -p "$tmp/$side/$label"
    # shellcheck disable=SC2086
    (cd "$root" && build/engine compile $args --arch "$arch" --no-cache --emit "$tmp/$side/$label" >/dev/null 2>"$tmp/$side/$label.err") ||
      echo "compile failed" >"$tmp/$side/$label/FAILED"
  done <"$tmp/runs"
}
emit old "$tmp/old"
emit new "$here"
# Line information (.loc, .file, inlining strings) follows the template's line numbers, which any
# edit above a kernel moves; the instructions are what must stay. Parameter declarations too are
# left out: arguments appended to GEMM_ARGS (the layout's) add .param lines to every kernel, while
# the code that reads the old ones stays the same (ld.param names them by index, which does not move).
# The .debug_str section (the names of inlined functions, which .loc lines cite) is left out too:
# renaming a helper moves no instruction.
code() { cat "$@" 2>/dev/null | awk '/^[[:space:]]*\.section[[:space:]]+\.debug_str/ { skip = 1 } /^[[:space:]]*\.section/ && !/debug_str/ { skip = 0 } !skip' | grep -v -E '^[[:space:]]*\.(loc|file)[[:space:]]|info_string|^[[:space:]]*//|^[[:space:]]*\.param[[:space:]]' | md5sum; }
differ=0
while IFS='|' read -r label _; do
  a=$(code "$tmp/old/$label"/*.ptx "$tmp/old/$label/FAILED")
  b=$(code "$tmp/new/$label"/*.ptx "$tmp/new/$label/FAILED")
  if [ "$a" != "$b" ]; then
    echo "differs: $label"
    differ=$((differ + 1))
  fi
done <"$tmp/runs"
echo "ptx_diff: $(wc -l <"$tmp/runs") kernels compiled against $rev, $differ differ"
[ $differ -eq 0 ]
