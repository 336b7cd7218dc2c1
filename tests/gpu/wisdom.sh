# tests/gpu/wisdom.sh — sourced by tests/gpu.sh (its helpers, $E, $LOG and want() in scope): the shipped wisdom (verify --auto at each entry in its op and batch, memcheck of each configuration) and --auto at random shapes.
# shellcheck shell=bash

# wisdom_plan SECTION: the checks of the wisdom sections, generated from the shipped wisdom files
# whose arch is this GPU's (sm_90 and sm_90a alike) and default.json, read by Python (nothing here
# names an entry), into $LOG/wisdom-plan.txt. GPU_ARCH stands in for `engine info`'s arch
# (tests/gpu_stub.sh). Non-zero, with a failed or skipped check named after SECTION, when there is
# no plan. One line per check, tab-separated: "verify DTYPE LOGBASE WHAT SHAPES" (at most 64
# shapes, the engine's limit) or "memcheck DTYPE LOGBASE WHAT SHAPE CONFIG --set K=V ...". Own
# shapes as the entries have them (the largest, 12288^2, is 1.1 x 2^27 elements of C), so --auto
# finds each exactly; near ones M+1 x N-1 x K+1 and M-1 x N+1 x K-1, capped as cap_shapes caps;
# memcheck at the first entry of each (dtype, config, set), each side odd and at most 256 x 256 x 1024.
wisdom_plan() {
  local warch prc
  warch=${GPU_ARCH:-$($E info 2>/dev/null | sed -n 's/^  arch \(sm_[0-9]*a\{0,1\}\),.*/\1/p' | head -1)}
  if [ -z "$warch" ]; then
    fail "$1: engine info names this GPU's arch" "$($E info 2>&1 | head -3)"
    return 1
  elif ! have_py; then
    skip "$1: the wisdom entries for $warch" "no python3"
    return 1
  fi
  "$PY" - "$warch" wisdom >"$LOG/wisdom-plan.txt" 2>"$LOG/wisdom-plan.err" <<'PY'
import glob, json, math, os, sys
arch, wdir = sys.argv[1].rstrip("a"), sys.argv[2]
files = []
for f in sorted(glob.glob(os.path.join(wdir, "*.json"))):
    w = json.load(open(f))
    if ("arch" not in w and "device" not in w) or w.get("arch", "").rstrip("a") == arch:
        files.append((f, w))
entries = [e for _, w in files for e in w["entries"]]
# Entries taken from oracle rows (<device>.dev-seeds.json, bench/oracle_entries.py) are verified at
# their own shapes; the odd shapes near them are left to the tuned entries' (their configs are the
# tuned entries' own, and there are hundreds of them).
tuned = {id(e) for f, w in files if not f.endswith(".dev-seeds.json") for e in w["entries"]}
assert entries, f"no wisdom entries for {arch} in {wdir}"

def dims(s):
    return [int(x) for x in s.split("x")]

def cap(m, n, k):
    if m * n > 2 ** 27:
        f = math.sqrt(2 ** 27 / (m * n))
        m, n = int(m * f), int(n * f)
    return max(1, m), max(1, n), min(max(1, k), 65537)

def small(v, most):
    v = min(v, most)
    if v % 2 == 0:
        v = v + 1 if v + 1 <= most else v - 1
    return max(1, v)

def text(m, n, k):
    return f"{m}x{n}x{k}"

def unique(xs):
    return list(dict.fromkeys(xs))

print(f"# {len(entries)} entries of {', '.join(f for f, _ in files)} for {arch}")
for dt in ("f32", "f64"):
    es = [e for e in entries if e["dtype"] == dt]
    if not es:
        continue
    # Each entry at its own shape in its own op and batch (an op's points and batch entries are what
    # --auto picks from for problems of that op and kind); odd shapes near the tuned entries, NN.
    kinds = unique((e.get("op", "NN"), int(e.get("batch", 1))) for e in es)
    groups = [(op, b, unique(e["shape"] for e in es if (e.get("op", "NN"), int(e.get("batch", 1))) == (op, b)))
              for op, b in kinds]
    own = unique(e["shape"] for e in es)
    near = []
    for e in es:
        if id(e) not in tuned:
            continue
        m, n, k = dims(e["shape"])
        near += [text(*cap(m + 1, n - 1, k + 1)), text(*cap(m - 1, n + 1, k - 1))]
    near = [s for s in unique(near) if s not in own]
    for what, op, b, shapes in [("own", op, b, sh) for op, b, sh in groups] + [("near", "NN", 1, near)]:
        parts = [shapes[i:i + 64] for i in range(0, len(shapes), 64)]
        kind = ("" if op == "NN" else f"op {op}") + (f"{', ' if op != 'NN' else ''}batch {b}" if b > 1 else "")
        tag = "" if (op, b) == ("NN", 1) else f"-{op.lower()}{b}"
        for i, p in enumerate(parts, 1):
            label = ("at the entries' own shapes" if what == "own" else "at odd shapes near the entries") + \
                    f" ({len(p)} shape{'s' if len(p) > 1 else ''}" + (f", {kind}" if kind else "") + \
                    (f", part {i} of {len(parts)})" if len(parts) > 1 else ")")
            print("\t".join(["verify", dt, f"wisdom-{dt}-{what}{tag}-{i}", label, ",".join(p), f"--op {op} --batch {b}"]))
    seen = {}
    for e in es:
        key = (e["config"], tuple(sorted(e.get("set", {}).items())))
        if key in seen:
            continue
        seen[key] = e
        m, n, k = dims(e["shape"])
        sets = e.get("set", {})
        name = os.path.basename(e["config"])[:-len(".json")]
        name += "[" + ",".join(f"{a}={v}" for a, v in sets.items()) + "]" if sets else ""
        args = " ".join([e["config"]] + [f"--set {a}={v}" for a, v in sets.items()])
        shape = text(small(m, 256), small(n, 256), small(k, 1024))
        print("\t".join(["memcheck", dt, f"wisdom-{dt}-cs-{len(seen)}", f"{name} (entry {e['shape']})", shape, args]))
PY

  prc=$?
  grep '^#' "$LOG/wisdom-plan.txt"
  if [ $prc != 0 ] || ! grep -q '^verify' "$LOG/wisdom-plan.txt"; then
    fail "$1: the checks generated from wisdom/*.json for $warch (exit $prc)" "$(tail -n 3 "$LOG/wisdom-plan.err")"
    return 1
  fi
}

if want wisdom || want wisdom-f32 || want wisdom-f64; then
echo "== the shipped wisdom for this GPU: verify --auto at every entry's shape and at odd shapes near it, f32 and f64"
if wisdom_plan wisdom; then
  while IFS=$'\t' read -r -u 3 kind dt base what shapes args; do
    [ "$kind" = verify ] || continue
    want wisdom || want "wisdom-$dt" || continue # GPU_ONLY=wisdom-f32 or wisdom-f64: one dtype's half
    [[ $base == "wisdom-$dt-${WISDOM_PART:-}"* ]] || continue # WISDOM_PART=own or near: those checks only
    # shellcheck disable=SC2086
    XDG_DATA_HOME=$SHIPPED_ONLY run_verify "verify --auto $dt $what" "$base" --auto --dtype "$dt" --shapes "$shapes" $args
  done 3<"$LOG/wisdom-plan.txt"
fi
fi

if want wisdom-memcheck; then
echo "== the shipped wisdom for this GPU: memcheck of each distinct configuration (config + set) near its entry"
if wisdom_plan wisdom-memcheck; then
  [ "${GPU_SANITIZE:-1}" = 0 ] && SAN_SKIP="GPU_SANITIZE=0"
  while IFS=$'\t' read -r -u 3 kind dt base what shapes args; do
    [ "$kind" = memcheck ] || continue
    # shellcheck disable=SC2086
    sanitize_verify "wisdom $dt $what at $shapes" "$base" memcheck $args --dtype "$dt" --shapes "$shapes"
  done 3<"$LOG/wisdom-plan.txt"
  unset SAN_SKIP
fi
fi

if want auto; then
echo "== verify --auto at random odd shapes, f32 and f64 (bench/random_shapes.sh 424242 16, even sides made odd, capped)"
if have_py; then
  AUTO_SHAPES=$(bash bench/random_shapes.sh 424242 16 | cap_shapes)
  echo "shapes: $AUTO_SHAPES"
fi
for dt in f32 f64; do
  if have_py; then
    XDG_DATA_HOME=$SHIPPED_ONLY $E verify --format jsonl --auto --dtype $dt --shapes "$AUTO_SHAPES" >"$LOG/auto-$dt.txt" 2>&1
    check_verify "verify --auto $dt at 16 random odd shapes" "$LOG/auto-$dt.txt" $? 32
  else
    skip "verify --auto $dt at 16 random odd shapes (bench/random_shapes.sh)" "no python3"
  fi
done
fi
