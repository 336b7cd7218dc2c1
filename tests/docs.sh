#!/usr/bin/env bash
# The docs, on the CPU: the README's tables equal what bench/tables.py renders from bench/data (an
# edited figure, a figure typed into the prose and a broken marker are caught; --write repairs);
# bench/walk.sh and bench/targets.sh, run with the fake worker, write data files that tables.py
# renders; the README stays within 200 lines; every local link of the docs resolves; every engine
# command in their code blocks exists and takes the options shown.
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
B=${BUILD:-build}
T="python3 bench/tables.py"

echo "== the README's tables against bench/data"
out=$($T --check README.md 2>&1)
check_rc "tables.py --check README.md" 0 $? "$out"
n=$(wc -l <README.md)
[ "$n" -le 200 ] && pass "README.md is $n lines (at most 200)" || fail "README.md is at most 200 lines" "it has $n"
# The current-figures and notes pages stay readable; their history lives in docs/archive/.
for f in docs/RESULTS.md:500 docs/NOTES.md:800; do
  n=$(wc -l <"${f%:*}")
  [ "$n" -le "${f#*:}" ] && pass "${f%:*} is $n lines (at most ${f#*:})" || fail "${f%:*} is at most ${f#*:} lines" "it has $n"
done
for t in walk siboehm dgemm shapes targets; do
  grep -qx "<!-- table:$t -->" README.md && pass "README.md shows table $t" || fail "README.md shows table $t"
done

# One figure edited by hand: warp_rebalance's H100 ms in the walk table.
sed 's/^| 4 | warp_rebalance | \([0-9.]*\) | \([0-9]\)\.\([0-9]*\) |/| 4 | warp_rebalance | \1 | \2.\39 |/' README.md >"$tmp/edited.md"
cmp -s README.md "$tmp/edited.md" && fail "the walk table's warp_rebalance row was edited (test setup)"
$T --check "$tmp/edited.md" >"$tmp/edited.out" 2>&1
check_rc "an edited figure: --check exits 1" 1 $? "$(cat "$tmp/edited.out")"
line=$(grep -n '^| 4 | warp_rebalance' "$tmp/edited.md" | cut -d: -f1)
grep -q "^$tmp/edited.md:$line: table:walk differs from its data" "$tmp/edited.out" &&
  grep -q "README: | 4 | warp_rebalance" "$tmp/edited.out" &&
  pass "... naming the table, the line ($line) and both versions of it" ||
  fail "... naming the table, the line ($line) and both versions of it" "$(cat "$tmp/edited.out")"
$T --write "$tmp/edited.md" && cmp -s README.md "$tmp/edited.md" &&
  pass "--write puts the figure back: the file equals README.md" || fail "--write restores the edited table"

# A figure typed into the prose, outside every table.
sed 's/^## Layout$/The FP32 walk runs at 35.15 TFLOP\/s.\n\n## Layout/' README.md >"$tmp/prose.md"
$T --check "$tmp/prose.md" >"$tmp/prose.out" 2>&1
check_rc "a figure in the prose: --check exits 1" 1 $? "$(cat "$tmp/prose.out")"
grep -q "a figure outside a generated table" "$tmp/prose.out" && pass "... saying it is outside a table" ||
  fail "... saying it is outside a table" "$(cat "$tmp/prose.out")"

# A table opened and never closed; an unknown table.
awk 'done || $0 != "<!-- /table -->" {print; next} {done = 1}' README.md >"$tmp/open.md"
$T --check "$tmp/open.md" >"$tmp/open.out" 2>&1
check_rc "a table never closed: exit 2" 2 $? "$(cat "$tmp/open.out")"
sed 's/<!-- table:dgemm -->/<!-- table:dgemmm -->/' README.md >"$tmp/unknown.md"
$T --check "$tmp/unknown.md" >"$tmp/unknown.out" 2>&1
check_rc "an unknown table: exit 2" 2 $? "$(cat "$tmp/unknown.out")"
grep -q 'table:dgemmm: no such table' "$tmp/unknown.out" && pass "... naming it" || fail "... naming it" "$(cat "$tmp/unknown.out")"

echo "== bench scripts write what tables.py renders (fake worker)"
export ENGINE_WORKER=$PWD/tests/fake_worker.py XDG_CACHE_HOME=${XDG_CACHE_HOME:-$tmp/xdg}
data=$tmp/data
mkdir -p "$data"
cp bench/data/published.json "$data/"
DATA=$data TAG=h100 DEVICE="Fake GPU 0" TABLES="walk dgemm" WALK_LOG_DIR=$tmp/walk ENGINE_BIN=$B/engine \
  bash bench/walk.sh --arch sm_90 --runs 2 >"$tmp/walk.out" 2>&1
check_rc "bench/walk.sh (walk and dgemm tables)" 0 $? "$(tail -5 "$tmp/walk.out")"
today=$(date -u +%F)
for t in walk dgemm; do
  f=$data/h100-$t.jsonl
  [ -s "$f" ] && head -1 "$f" | grep -q "^{\"date\":\"$today\",\"device\":\"Fake GPU 0\",\"config\":" &&
    pass "walk.sh wrote $t rows stamped with the date and the device" || fail "walk.sh wrote stamped $t rows" "$(head -c 300 "$f" 2>&1)"
done
[ ! -e "$data/h100-siboehm.jsonl" ] && pass "TABLES leaves the other tables' data alone" || fail "TABLES leaves the other tables' data alone"
$B/engine bench @configs/dgemm.list --size 2048 --alpha 0.9 --beta 1.1 --arch sm_90 --runs 2 --format md >"$tmp/dgemm.md" 2>/dev/null
$T --md "$data/h100-dgemm.jsonl" | cmp -s - "$tmp/dgemm.md" &&
  pass "tables.py --md renders the rows as the engine's own --format md" ||
  fail "tables.py --md renders the rows as the engine's own --format md" "$(diff <($T --md "$data/h100-dgemm.jsonl") "$tmp/dgemm.md")"
grep -q '^| 4 | dgemm_dmma |' "$tmp/walk.out" && pass "walk.sh prints each table in Markdown" || fail "walk.sh prints each table" "$(cat "$tmp/walk.out")"
for t in walk dgemm; do
  out=$($T --data "$data" --print $t 2>&1)
  [ $? = 0 ] && echo "$out" | grep -q "h100-$t.jsonl\` (Fake GPU 0, $today)" &&
    pass "the README's $t table renders from walk.sh's file, naming it with its device and date" ||
    fail "the README's $t table renders from walk.sh's file" "$out"
done
DATA=$data TAG=h100 DEVICE="Fake GPU 0" RUNS=2 ENGINE_ARGS="--arch sm_90" OUT=$tmp/targets ENGINE_BIN=$B/engine \
  bash bench/targets.sh >"$tmp/targets.out" 2>&1
rc=$?
[ "$rc" -le 1 ] && pass "bench/targets.sh runs (exit $rc: the fake GPU misses some targets)" || fail "bench/targets.sh runs (exit $rc)" "$(tail -5 "$tmp/targets.out")"
n=$(grep -c '"target":' "$data/h100-targets.jsonl" 2>/dev/null)
[ "$n" = "$(grep -c '^  \(met   \|MISSED\)' "$tmp/targets.out")" ] && [ "$n" = 13 ] &&
  pass "targets.sh wrote one row per target and size ($n), as it printed them" || fail "targets.sh wrote a row per target" "$n rows"
out=$($T --data "$data" --print targets 2>&1)
[ $? = 0 ] && [ "$(echo "$out" | grep -c '^| .* | \(met\|missed\) |$')" = 6 ] &&
  pass "the README's targets table renders from targets.sh's file (6 targets)" || fail "the targets table renders from targets.sh's file" "$out"

echo "== links and commands in the docs"
python3 - README.md docs/*.md docs/archive/*.md wisdom/README.md >"$tmp/links.out" 2>&1 <<'PY'
import os, re, sys
def slug(h):  # GitHub's anchor of a heading
    return re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
bad = 0
for path in sys.argv[1:]:
    text = open(path).read()
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://", target):  # issue 43: the docs link nothing outside the repository
            print(f"{path}: link to {target}: outside the repository"); bad += 1
            continue
        file, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        if not os.path.exists(dest):
            print(f"{path}: link to {target}: no file {dest}"); bad += 1
        elif anchor and dest.endswith(".md"):
            heads = {slug(h) for h in re.findall(r"^#+ (.*)$", open(dest).read(), re.M)}
            if anchor not in heads:
                print(f"{path}: link to {target}: no heading #{anchor} in {dest}"); bad += 1
print(f"{bad} broken links")
sys.exit(bad > 0)
PY
check_rc "every local link of README.md, docs/*.md, docs/archive/*.md and wisdom/README.md resolves" 0 $? "$(cat "$tmp/links.out")"
python3 - "$B/engine" README.md docs/GUIDE.md >"$tmp/cmds.out" 2>&1 <<'PY'
import os, re, subprocess, sys
engine, bad, seen = sys.argv[1], 0, 0
helps = {}
for path in sys.argv[2:]:
    fenced = False
    for n, line in enumerate(open(path), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        m = re.match(r"\s*(?:\w+=\S+ )*(build/engine |bash |tools/)(\S+)(.*)", line) if fenced else None
        if not m:
            continue
        seen += 1
        if m[1] != "build/engine ":
            script = m[2] if m[1] == "bash " else m[1] + m[2]
            if not os.path.exists(script):
                print(f"{path}:{n}: {script} does not exist"); bad += 1
            continue
        cmd = m[2]
        if cmd not in helps:
            r = subprocess.run([engine, cmd, "--help"], capture_output=True, text=True)
            helps[cmd] = r.stdout if r.returncode == 0 else None
        if helps[cmd] is None:
            print(f"{path}:{n}: engine {cmd}: no such command"); bad += 1
            continue
        for opt in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", m[3].split("#")[0]):
            if not re.search(rf"^\s*{re.escape(opt)}\b", helps[cmd], re.M):
                print(f"{path}:{n}: engine {cmd} has no option {opt}"); bad += 1
print(f"{seen} commands, {bad} wrong")
sys.exit(bad > 0 or seen == 0)
PY
check_rc "every command in the code blocks of README.md and docs/GUIDE.md exists, with the options shown" 0 $? "$(cat "$tmp/cmds.out")"
tail -1 "$tmp/cmds.out" | sed 's/^/  /'

summary
