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

Rows of another device (a stand-in: an H200 where no H100 was lent) never compete with --device's by
time. They count only where the stand-in also ran the point's own config at the shape (an --auto
row, which runs the point there): if its fastest other row beat that by STAND_IN_MARGIN on the same
device, the point becomes that row's config with the stand-in's figures (bench/tune_s15.sh's
h200-random-SEED-oracle-s15 files: tc32ws beside the tc32_3x points).
"""
import argparse, json, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rows import open_rows  # noqa: E402  (the large row files ship gzip-compressed)

STAND_IN_MARGIN = 0.02  # a stand-in's row must beat the point's own config there by this fraction (run-to-run spread)


def config_of(r):
    """A row's config as wisdom names it (relative to the repository: the run was elsewhere) and its
    overrides, from its rerun line (engine bench CONFIG ... --set K=V ...)."""
    argv = r["args"].split()
    cfg = argv[2]
    sets = {}
    for i, t in enumerate(argv[:-1]):
        if t == "--set":
            k, v = argv[i + 1].split("=", 1)
            sets[k] = int(v)
    return cfg[cfg.rfind("configs/"):], sets


def main():
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
    alt, alt_cub, alt_src = {}, {}, {}  # the stand-ins' rows: key -> [rows], cuBLAS ms, file
    for path in a.oracles:
        for line in open_rows(path):
            r = json.loads(line)
            if r.get("status") != "ok" or not r.get("ms"):
                continue
            key = (r["dtype"], r.get("op", "NN"), f'{r["M"]}x{r["N"]}x{r["K"]}')
            if r.get("device", a.device) != a.device:  # rows before 2026-11-25 carry no device
                if r["config"] == "cublas":
                    alt_cub[key] = r["ms"]
                else:
                    alt.setdefault(key, []).append(r)
                    alt_src[key] = os.path.basename(path)
                continue
            if r["config"] == "cublas":
                cub[key] = r["ms"]
            elif key not in best or r["ms"] < best[key]["ms"]:
                best[key], src[key] = r, os.path.basename(path)
    note = {}
    for key, rows in alt.items():
        if key not in best or key not in alt_cub:
            continue
        own = config_of(best[key])
        mine = [r for r in rows if config_of(r) == own]
        others = [r for r in rows if config_of(r) != own]
        if not mine or not others:
            continue
        here, b = min(r["ms"] for r in mine), min(others, key=lambda r: r["ms"])
        if b["ms"] < here * (1 - STAND_IN_MARGIN):
            best[key], src[key], cub[key] = b, alt_src[key], alt_cub[key]
            note[key] = (f'measured on an {b["device"].replace("NVIDIA ", "")} (no H100 lent): the fastest there, '
                         f'{alt_cub[key] / b["ms"]:.2f}x cuBLAS, beside the point\'s own {os.path.basename(own[0])[:-5]} at {alt_cub[key] / here:.2f}x')
    out = []
    for key in sorted(best, key=lambda k: (k[0], [int(x) for x in k[2].split("x")])):
        if key in have:
            continue
        r = best[key]
        cfg, sets = config_of(r)
        e = {"dtype": key[0]}
        if key[1] != "NN":
            e["op"] = key[1]  # where the engine's wisdom writer puts it (the file writes back byte for byte)
        e.update(shape=key[2], config=cfg)
        if sets:
            e["set"] = sets
        e["tflops"] = r["tflops"]
        e["vs_cublas"] = cub[key] / r["ms"] if key in cub else 0
        if r.get("occ_blocks"):
            e["occ"] = r["occ_blocks"]
        e["source"] = (f"bench/oracle.sh (the fastest shipped entry here), {src[key]}, {r.get('date', '2026-11-24')}" if key not in note else
                       f"bench/oracle.sh's rows of some entries, {note[key]}, {src[key]}, {r.get('date', '2026-11-24')}")
        out.append(e)
    sys.stdout.write('{\n  "version": 1,\n  "device": %s,\n  "arch": %s,\n  "entries": [\n' % (json.dumps(a.device), json.dumps(a.arch)))
    sys.stdout.write(",\n".join("    " + json.dumps(e) for e in out))
    sys.stdout.write("\n  ]\n}\n")
    print(f"oracle_entries: {len(out)} entries", file=sys.stderr)


if __name__ == "__main__":
    main()
