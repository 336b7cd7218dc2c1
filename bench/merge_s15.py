#!/usr/bin/env python3
"""Session 15's measurements into wisdom (no GPU): the rows of bench/tune_s15.sh's device call, and
the FP64 narrow entries that session 14's rows already decide.

  python3 bench/merge_s15.py narrow            FP64 at a narrowest side of 17-128: at each design-seed
                                               shape of bench/data/h200-narrow-f64-2026-11-28.jsonl where
                                               the best candidate beat --auto by MARGIN in the same run,
                                               an entry in wisdom/nvidia-h100-80gb-hbm3.json
  python3 bench/merge_s15.py ARCHIVE|DIR       the call's archive (s15.tgz) or its unpacked directory:
                                               its rows into bench/data, phase a's tc32ws winners into
                                               the tuned file where they beat --auto, and the
                                               development points rebuilt (bench/oracle_entries.py
                                               weighs phase c's rows as a stand-in's)
  python3 bench/merge_s15.py --summary DIR     the call's table, from its files (tune_s15.sh prints it)

Rules: only verified rows (status ok; a tune records only winners verified in class f32); an entry
goes in only where it beat, in the same call, what --auto ran there, by MARGIN (the runs' spread);
at a shape an entry already holds, --auto ran that entry, so the same test decides whether it is
replaced. The H200 stands in for the H100 (none is lent): entries go into the H100 file, their
source naming the H200, the date and the data file. Exit: 0, 2 bad input (one line).
"""
import glob, json, math, os, shutil, subprocess, sys, tarfile, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wisdom_file  # noqa: E402  (the file as the engine writes it)
from oracle_entries import config_of  # noqa: E402  (a row's config and overrides, as wisdom names them)
from rows import find, open_rows  # noqa: E402  (plain or .gz, as bench/data ships them)

DATE = "2026-11-28"
DATA = "bench/data"
WISDOM = "wisdom/nvidia-h100-80gb-hbm3.json"
DEV_SEEDS = "wisdom/nvidia-h100-80gb-hbm3.dev-seeds.json"
MARGIN = 0.03  # an entry must beat --auto by this fraction (RUNS 3-7: medians spread 1-2 %)
ISSUE_42 = {"129x11747x258", "97x11289x128"}  # the issue's own shapes: judged, never made entries
OPS = {"NN": 0, "NT": 1, "TN": 2, "TT": 3}


def die(msg):
    print(f"merge_s15: {msg}", file=sys.stderr)
    sys.exit(2)


def rows(path):
    out = []
    if not os.path.exists(find(path)):
        return out
    for i, line in enumerate(open_rows(path), 1):
        line = line.strip()
        if line:
            try:
                out.append(json.loads(line))
            except ValueError:
                die(f"{path}:{i}: not a JSON line")
    return out


def shape(r):
    return f'{r["M"]}x{r["N"]}x{r["K"]}'


def ratios(rs):
    """{shape: (cuBLAS ms / best ok row's ms, that row)} over rows of one run (its own cuBLAS rows)."""
    cub, best = {}, {}
    for r in rs:
        if r.get("status") != "ok" or not r.get("ms"):
            continue
        s = shape(r)
        if r["config"] == "cublas":
            cub.setdefault(s, r["ms"])
        elif s not in best or r["ms"] < best[s]["ms"]:
            best[s] = r
    return {s: (cub[s] / r["ms"], r) for s, r in best.items() if s in cub}


def place(doc, e, auto_ratio, what):
    """Put entry e into doc unless it fails to beat --auto's ratio there; returns a line saying what."""
    k = (e["dtype"], e.get("op", "NN"), e.get("batch", 1), e["shape"])
    old = [x for x in doc["entries"] if (x["dtype"], x.get("op", "NN"), x.get("batch", 1), x["shape"]) == k and "align" not in x]
    tag = f'{e["dtype"]} {e.get("op", "NN")} {e["shape"]}'
    if e["vs_cublas"] < auto_ratio * (1 + MARGIN):
        return f"  kept out  {tag}: {what} {e['vs_cublas']:.3f}x, --auto {auto_ratio:.3f}x"
    for x in old:
        doc["entries"].remove(x)
    doc["entries"].append(e)
    return f"  {'replaced' if old else 'added   '}  {tag}: {what} {e['vs_cublas']:.3f}x, --auto {auto_ratio:.3f}x"


def auto_label(r):
    return r["config"].split("[")[0]


def narrow():
    src = f"{DATA}/h200-narrow-f64-{DATE}.jsonl"
    cand, auto = ratios(rows(src)), ratios(rows(f"{DATA}/h200-narrow-f64-auto-{DATE}.jsonl"))
    if not cand or not auto:
        die(f"no rows in {src} or its -auto- file")
    doc = json.load(open(WISDOM))
    print(f"merge_s15: FP64 narrow entries from {src} (best candidate against --auto, same run, margin {MARGIN:.0%})")
    for s in cand:
        if s in ISSUE_42 or s not in auto:
            continue
        (v, r), (av, ar) = cand[s], auto[s]
        cfg, sets = config_of(r)
        e = {"dtype": "f64", "shape": s, "config": cfg}
        if sets:
            e["set"] = sets
        e.update(tflops=r["tflops"], vs_cublas=v)
        if r.get("occ_blocks"):
            e["occ"] = r["occ_blocks"]
        e["source"] = (f"bench/narrow_f64.sh on an H200 (session 14, no H100 lent; --auto's {auto_label(ar)} {av:.2f}x "
                       f"in the same run), {src}, {DATE}")
        line = place(doc, e, av, r["config"])
        if not line.startswith("  kept out"):
            print(line)
    wisdom_file.write(WISDOM, doc)


# ---- the device call's archive ------------------------------------------------------------------

def unpack(arg):
    if os.path.isdir(arg):
        return arg, None
    if not os.path.isfile(arg):
        die(f"{arg}: no such archive or directory")
    tmp = tempfile.mkdtemp(prefix="s15-")
    with tarfile.open(arg) as t:
        t.extractall(tmp, filter="data") if hasattr(tarfile, "data_filter") else t.extractall(tmp)
    return tmp, tmp


def dev_seed_of(d):
    """{(op, shape): [seeds]} from the call's list of development points."""
    out = {}
    p = os.path.join(d, "dev-points.txt")
    for line in open(p) if os.path.exists(p) else []:
        op, seed, s = line.split()
        out.setdefault((op, s), []).append(int(seed))
    return out


def copy_rows(d):
    """The call's rows into bench/data under this session's names; returns {name: rows written}."""
    written = {}

    def put(name, rs):
        if rs:
            with open(f"{DATA}/{name}", "w") as f:
                f.writelines(json.dumps(r) + "\n" for r in rs)
            written[name] = len(rs)

    put(f"h200-s15-tune-{DATE}.jsonl", [r for op in OPS for r in rows(f"{d}/tune-{op}.jsonl")])
    put(f"h200-s15-tune-auto-{DATE}.jsonl", [r for op in OPS for r in rows(f"{d}/auto-{op}.jsonl")])
    put(f"h200-narrow-f64-s15-with-{DATE}.jsonl", rows(f"{d}/f64-new.jsonl"))
    put(f"h200-narrow-f64-s15-without-{DATE}.jsonl", rows(f"{d}/f64-old.jsonl"))
    seeds = dev_seed_of(d)
    per = {}
    for op in ("NN", "NT", "TN"):
        for r in rows(f"{d}/dev-{op}.jsonl"):
            for seed in seeds.get((op, shape(r)), []):
                suffix = "" if op == "NN" else "-" + op.lower()
                per.setdefault(f"h200-random-{seed}-oracle-s15{suffix}-f32.jsonl", []).append(r)
    for name, rs in sorted(per.items()):
        put(name, rs)
    logs = [f for f in ("phases.txt", "summary.txt", "info.txt") if os.path.exists(f"{d}/{f}")]
    with open(f"{DATA}/h200-s15-{DATE}.txt", "w") as f:
        f.write(f"# session 15's device call (bench/tune_s15.sh, {DATE}): its log, table and GPU\n")
        for name in logs:
            f.write(f"## {name}\n" + open(f"{d}/{name}").read())
    return written


def merge(arg):
    d, tmp = unpack(arg)
    if not os.path.exists(f"{d}/phases.txt"):
        die(f"{arg}: no phases.txt: not bench/tune_s15.sh's output")
    written = copy_rows(d)
    for name, n in written.items():
        print(f"merge_s15: {DATA}/{name}: {n} rows")
    doc = json.load(open(WISDOM))
    data = f"{DATA}/h200-s15-tune-{DATE}.jsonl"
    print(f"merge_s15: phase a's winners into {WISDOM} (against --auto in the same call, margin {MARGIN:.0%})")
    ok = {(op, shape(r)) for op in OPS for r in rows(f"{d}/tune-{op}.jsonl") if r.get("status") == "ok"}
    for wf in sorted(glob.glob(f"{d}/wisdom/*.json")):
        for w in json.load(open(wf))["entries"]:
            op = w.get("op", "NN")
            auto = ratios(rows(f"{d}/auto-{op}.jsonl"))
            if w["dtype"] != "f32" or (op, w["shape"]) not in ok:
                continue
            if w["shape"] not in auto:
                print(f"  kept out  f32 {op} {w['shape']}: no --auto row to compare with")
                continue
            av, ar = auto[w["shape"]]
            cfg = w["config"][w["config"].rfind("configs/"):]
            e = {k: w[k] for k in ("dtype", "op") if k in w}
            e.update(shape=w["shape"], config=cfg)
            if w.get("set"):
                e["set"] = w["set"]
            e.update(tflops=w["tflops"], vs_cublas=w["vs_cublas"])
            if w.get("occ"):
                e["occ"] = w["occ"]
            e["source"] = (f"engine tune tune/tc32ws_suite.json at the tuned-on FP32 workloads' few-token layers on an H200 "
                           f"(session 15, no H100 lent; --auto's {auto_label(ar)} {av:.2f}x in the same run), {data}, {DATE}")
            label = os.path.basename(cfg)[:-5] + ("[" + ",".join(f"{k}={v}" for k, v in w["set"].items()) + "]" if w.get("set") else "")
            print(place(doc, e, av, label))
    wisdom_file.write(WISDOM, doc)
    before = {(e.get("op", "NN"), e["shape"]): e["config"] for e in json.load(open(DEV_SEEDS))["entries"] if e["dtype"] == "f32"}
    files = subprocess.run([sys.executable, "bench/oracle_files.py"], capture_output=True, text=True, check=True).stdout.split()
    out = subprocess.run([sys.executable, "bench/oracle_entries.py", "--device", "NVIDIA H100 80GB HBM3", "--arch", "sm_90",
                          "--skip", WISDOM] + files, capture_output=True, text=True)
    if out.returncode:
        die(f"oracle_entries: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}")
    with open(DEV_SEEDS, "w") as f:
        f.write(out.stdout)
    after = {(e.get("op", "NN"), e["shape"]): e["config"] for e in json.loads(out.stdout)["entries"] if e["dtype"] == "f32"}
    moved = [k for k in after if before.get(k) != after[k]]
    print(f"merge_s15: {DEV_SEEDS}: {len(moved)} FP32 points changed config "
          f"({', '.join(f'{op} {s}' for op, s in moved[:12])}{' ...' if len(moved) > 12 else ''})")
    if tmp:
        shutil.rmtree(tmp)


# ---- the table ----------------------------------------------------------------------------------

def gm(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else 0


def summary(d):
    if not os.path.isdir(d):
        die(f"{d}: no such directory")
    print("### bench/tune_s15.sh: " + (open(f"{d}/phases.txt").readline().strip() if os.path.exists(f"{d}/phases.txt") else d))
    print()
    print("| phase | shapes | what | x cuBLAS (geomean, min) |")
    print("|---|---:|---|---|")
    wins = {}
    for wf in glob.glob(f"{d}/wisdom/*.json"):
        for w in json.load(open(wf))["entries"]:
            wins[(w.get("op", "NN"), w["shape"])] = w["vs_cublas"]
    for op in ("NT", "NN", "TN"):
        auto = ratios(rows(f"{d}/auto-{op}.jsonl"))
        tuned = {s for s in auto} | {s for (o, s) in wins if o == op}
        if not tuned:
            continue
        w = {s: v for (o, s), v in wins.items() if o == op}
        both = [s for s in w if s in auto]
        beat = [s for s in both if w[s] >= auto[s][0] * (1 + MARGIN)]
        a = [auto[s][0] for s in both]
        t = [max(w[s], auto[s][0]) for s in both]
        print(f"| a tune {op} | {len(w)} of {len(auto)} | tc32ws's winner beats --auto by {MARGIN:.0%} at {len(beat)} | "
              f"--auto {gm(a):.3f} ({min(a, default=0):.3f}), with the winners {gm(t):.3f} ({min(t, default=0):.3f}) |")
    new, old = ratios(rows(f"{d}/f64-new.jsonl")), ratios(rows(f"{d}/f64-old.jsonl"))
    if new or old:
        both = [s for s in new if s in old]
        nv, ov = [new[s][0] for s in both], [old[s][0] for s in both]
        print(f"| b f64 narrow | {len(both)} | --auto with the narrow entries against without | "
              f"{gm(nv):.3f} ({min(nv, default=0):.3f}) against {gm(ov):.3f} ({min(ov, default=0):.3f}) |")
    for op in ("NN", "NT", "TN"):
        rs = rows(f"{d}/dev-{op}.jsonl")
        if not rs:
            continue
        auto = ratios([r for r in rs if "chosen" in r or r["config"] == "cublas"])
        ws = ratios([r for r in rs if r.get("template") == "tc32ws" or r["config"] == "cublas"])
        both = [s for s in ws if s in auto]
        faster = [s for s in both if ws[s][0] > auto[s][0] * 1.02]
        t = [max(ws[s][0], auto[s][0]) for s in both]
        a = [auto[s][0] for s in both]
        print(f"| c points {op} | {len(both)} | tc32ws faster than the point's own config at {len(faster)} | "
              f"points {gm(a):.3f} ({min(a, default=0):.3f}), the better of the two {gm(t):.3f} ({min(t, default=0):.3f}) |")
    bad = sum(1 for f in glob.glob(f"{d}/*.jsonl") for r in rows(f) if r.get("status") not in ("ok", "pruned", None))
    print()
    print(f"rows not ok (failed, wrong, timed out): {bad}; the steps: {d}/phases.txt")


def main(argv):
    if argv == ["narrow"]:
        narrow()
    elif len(argv) == 2 and argv[0] == "--summary":
        summary(argv[1])
    elif len(argv) == 1 and not argv[0].startswith("-"):
        merge(argv[0])
    else:
        die("usage: python3 bench/merge_s15.py narrow | ARCHIVE|DIR | --summary DIR")


if __name__ == "__main__":
    main(sys.argv[1:])
