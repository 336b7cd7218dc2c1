#!/usr/bin/env python3
"""Wisdom entries from oracle rows: at each shape of the given oracle files (bench/oracle.sh: every
shipped entry timed there beside cuBLAS), the fastest verified row becomes an entry, so the selection
model finds a measured point near shapes the suite does not hold (docs/NOTES.md, "Selection ... third
round"). Shapes the tuned wisdom (--skip FILE) already holds are left out.

  python3 bench/oracle_entries.py --device NAME --arch sm_90 --skip wisdom/<device>.json ORACLE.jsonl... > FILE

The shipped development points are built from the rows bench/oracle_files.py lists (its docstring has
the command): the development seeds' oracles (FP32 at NN, NT and TN, FP64 at NN) and the later
sessions' rows of configs added since (gemv's at the seeds' thin and narrow shapes in NN, NT and TN).
Rows in an op other than NN (ENGINE_ARGS="--op NT" bash bench/oracle.sh) become entries of that op:
the points --auto weighs for one product in it.
"""
import argparse, json, os, re, sys

ap = argparse.ArgumentParser()
ap.add_argument("--device", required=True)
ap.add_argument("--arch", required=True)
ap.add_argument("--skip", action="append", default=[])
ap.add_argument("oracles", nargs="+")
a = ap.parse_args()
have = set()
for f in a.skip:
    for e in json.load(open(f))["entries"]:
        have.add((e["dtype"], e.get("op", "NN"), e["shape"]))
best, cub, src = {}, {}, {}
for path in a.oracles:
    for line in open(path):
        r = json.loads(line)
        if r.get("status") != "ok" or not r.get("ms") or r.get("device", a.device) != a.device:  # rows before 2026-11-25 carry no device
            continue
        key = (r["dtype"], r.get("op", "NN"), f'{r["M"]}x{r["N"]}x{r["K"]}')
        if r["config"] == "cublas":
            cub[key] = r["ms"]
        elif key not in best or r["ms"] < best[key]["ms"]:
            best[key], src[key] = r, os.path.basename(path)
out = []
for key in sorted(best, key=lambda k: (k[0], [int(x) for x in k[2].split("x")])):
    if key in have:
        continue
    r = best[key]
    argv = r["args"].split()  # engine bench CONFIG ... --set K=V ...
    # The config as the shipped wisdom names it: relative to the repository (the oracle ran elsewhere).
    cfg = argv[2]
    e = {"dtype": key[0]}
    if key[1] != "NN":
        e["op"] = key[1]  # where the engine's wisdom writer puts it (the file writes back byte for byte)
    e.update(shape=key[2], config=cfg[cfg.rfind("configs/"):])
    sets = {}
    for i, t in enumerate(argv[:-1]):
        if t == "--set":
            k, v = argv[i + 1].split("=", 1)
            sets[k] = int(v)
    if sets:
        e["set"] = sets
    e["tflops"] = r["tflops"]
    e["vs_cublas"] = cub[key] / r["ms"] if key in cub else 0
    if r.get("occ_blocks"):
        e["occ"] = r["occ_blocks"]
    e["source"] = f"bench/oracle.sh (the fastest shipped entry here), {src[key]}, {r.get('date', '2026-11-24')}"
    out.append(e)
sys.stdout.write('{\n  "version": 1,\n  "device": %s,\n  "arch": %s,\n  "entries": [\n' % (json.dumps(a.device), json.dumps(a.arch)))
sys.stdout.write(",\n".join("    " + json.dumps(e) for e in out))
sys.stdout.write("\n  ]\n}\n")
print(f"oracle_entries: {len(out)} entries", file=sys.stderr)
