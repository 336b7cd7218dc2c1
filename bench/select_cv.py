#!/usr/bin/env python3
"""The selection model replayed offline, one development seed left out at a time: wisdom = the tuned
files plus the oracle entries (bench/oracle_entries.py) of the other seeds; engine pick chooses at
the held-out seed's shapes; each choice's time is read from that seed's oracle rows (every shipped
entry timed at every shape beside cuBLAS). Prints per seed and dtype the geometric mean and minimum
of cuBLAS time / chosen time, and the oracle's (best entry per shape). No GPU needed.

  python3 bench/select_cv.py [--engine build/engine] [-v] [--op NT]   (the rows: bench/oracle_files.py)
"""
import argparse, collections, glob, json, math, os, re, shutil, subprocess, sys, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--engine", default="build/engine")
ap.add_argument("--device", default="NVIDIA H100 80GB HBM3")
ap.add_argument("-v", action="store_true", help="the worst choices of each seed")
ap.add_argument("--op", default="NN", choices=["NN", "NT", "TN", "TT"],
                help="judge one-product choices in this op, from the seeds' oracle2-<op> rows (NN's points always go in)")
ap.add_argument("--no-op-points", action="store_true", help="with --op: leave the op's own points out (the NN fallback)")
ap.add_argument("--no-extra-points", action="store_true",
                help="leave the later configs' rows (oracle-s<N>: configs added to wisdom after the oracles) out of the points; they still time the choices")
a = ap.parse_args()
slug = re.sub(r"[^a-z0-9]+", "-", a.device.lower()).strip("-")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle_files import extra_files, point_files, rows_file, seeds as dev_seeds  # noqa: E402
from rows import open_rows  # noqa: E402

seeds = dev_seeds()
dtypes = [d for d in ("f32", "f64") if rows_file(seeds[0], d, a.op)]
norm = lambda l: re.sub(r",?PDL=\d", "", l).replace("[]", "")  # PDL changed on some entries since the oldest rows


def geo(x):
    return math.exp(sum(map(math.log, x)) / len(x)) if x else float("nan")


summary = collections.defaultdict(list)
for held in seeds:
    with tempfile.TemporaryDirectory() as wdir:
        for f in glob.glob("wisdom/*.json"):
            if not f.endswith(".dev-seeds.json"):
                shutil.copy(f, wdir)
        ops = ("NN",) if a.op == "NN" or a.no_op_points else ("NN", a.op)
        others = point_files(held, ops, not a.no_extra_points)
        with open(os.path.join(wdir, f"{slug}.dev-seeds.json"), "w") as out:
            subprocess.run([sys.executable, "bench/oracle_entries.py", "--device", a.device, "--arch", "sm_90", "--skip",
                            f"wisdom/{slug}.json"] + others, stdout=out, stderr=subprocess.DEVNULL, check=True)
        for dt in dtypes:
            by = collections.defaultdict(dict)
            # A later session's rows time the configs it added; its cuBLAS row is left to the oracle's.
            # The judged shapes are the oracle's own (a later session may time its configs at more
            # shapes of the seed: those rows are points for the other seeds, not judged here).
            for f in [rows_file(held, dt, a.op)] + extra_files(held, dt, a.op):
                for line in open_rows(f):
                    r = json.loads(line)
                    if r.get("status") == "ok" and r.get("ms"):
                        k, c = (r["M"], r["N"], r["K"]), norm(r["config"])
                        if c == "cublas" and "cublas" in by[k]:
                            continue
                        if f != rows_file(held, dt, a.op) and k not in by:
                            continue
                        by[k][c] = min(r["ms"], by[k].get(c, 1e9))
            shapes = sorted(by)
            env = dict(os.environ, XDG_DATA_HOME=os.path.join(wdir, "none"))
            out = subprocess.run([a.engine, "pick", "--sms", "132", "--dtype", dt, "--op", a.op, "--format", "jsonl",
                                  "--wisdom", wdir, "--device-name", a.device, "--shapes",
                                  ",".join("%dx%dx%d" % s for s in shapes)], capture_output=True, text=True, env=env)
            chosen = {tuple(map(int, j["shape"].split("x"))): norm(j["label"])
                      for j in map(json.loads, filter(lambda l: l.startswith("{"), out.stdout.splitlines()))}
            got, best, worst, unmeasured = [], [], [], 0
            for s in shapes:
                cub = by[s].get("cublas")
                mine = {c: t for c, t in by[s].items() if c != "cublas"}
                if not cub or not mine:
                    continue
                best.append(cub / min(mine.values()))
                if chosen.get(s) not in mine:
                    unmeasured += 1  # chosen a config the oldest oracle rows do not hold
                    continue
                got.append(cub / mine[chosen[s]])
                worst.append((got[-1], s, chosen[s], best[-1]))
            summary[dt].append((geo(got), min(got)))
            print(f"seed {held:>3} {dt}: chosen {geo(got):.3f} (min {min(got):.3f}; {len(got)} shapes, {unmeasured} not in "
                  f"the rows)   oracle {geo(best):.3f} (min {min(best):.3f})")
            for w in sorted(worst)[:6] if a.v else []:
                print("      %.3f %s %s (best entry %.3f)" % (w[0], "x".join(map(str, w[1])), w[2][:70], w[3]))
for dt, v in summary.items():
    print(f"{dt}: mean of the seeds' geomeans {sum(g for g, _ in v) / len(v):.3f}, mean minimum {sum(m for _, m in v) / len(v):.3f}, "
          f"lowest {min(m for _, m in v):.3f}")
