#!/usr/bin/env python3
"""A tune's wisdom file (engine tune --wisdom DIR, any dtype) into a shipped file (no GPU).

  python3 bench/merge_tuned.py TUNED.json --data bench/data/NAME.jsonl [--into wisdom/nvidia-h100-80gb-hbm3.json]
                               [--gpu "an H200"] [--date YYYY-MM-DD] [--skip DTYPE:OP:MxNxK ...]
                               [--ab BEFORE.jsonl AFTER.jsonl] [--margin 0.02]

Each entry of TUNED.json (but those named by --skip: entries an A/B in the same call found no faster
than what --auto ran before) replaces the entry of the same (dtype, op, batch, align, shape) in
--into, or joins it; every other line of --into is kept as it is (bench/wisdom_file.py writes the
file as the engine does). Config paths are made the repository's (configs/NAME.json). Where the
tuned file's device is not --into's, the entry's "source" says so: measured on GPU (DATE, the data
file), not on the device the file is for, then the tune's own text. --ab reads `engine bench --auto
--format jsonl` rows at the tuned shapes, timed in one call with the wisdom before the merge and
with every tuned entry in: an entry goes in only where its row is verified (status ok) and at least
MARGIN faster than the row before (a loss, a tie or no row keeps what was there). Exit 0; 2 bad input (one line)."""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wisdom_file import key, write  # noqa: E402  (entries as the engine writes them)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def skip_key(text):
    parts = text.split(":")
    if len(parts) != 3 or parts[0] not in ("f32", "f64", "bf16", "f16") or parts[1] not in ("NN", "NT", "TN", "TT"):
        raise ValueError(f"--skip {text}: must be DTYPE:OP:MxNxK (dtype f32/f64/bf16/f16, op NN/NT/TN/TT)")
    return tuple(parts)


def ab_wins(before, after, margin):
    """(dtype, op, shape) of each shape whose row after the merge is verified and MARGIN faster
    than before (or before had no verified row). Rows of one product: a batch's shape is its own."""
    def rows(path):
        out = {}
        with open(path) as f:
            for line in f:
                if not line.strip().startswith("{"):
                    continue
                r = json.loads(line)
                if r.get("template") == "cublas":
                    continue
                out[(r["dtype"], r.get("op", "NN"), f"{r['M']}x{r['N']}x{r['K']}")] = r
        return out
    b, a = rows(before), rows(after)
    wins = set()
    for k, r in a.items():
        old = b.get(k)
        win = r.get("status") == "ok" and r.get("ms") and (
            not old or old.get("status") != "ok" or r["ms"] <= (1 - margin) * old["ms"])
        print(f"merge_tuned: {k[0]} {k[1]} {k[2]}: before {old.get('ms') if old else None} ms, after "
              f"{r.get('ms')} ms ({r.get('status')}): {'in' if win else 'left out'}")
        if win:
            wins.add(k)
    return wins


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tuned")
    ap.add_argument("--into", default=os.path.join(ROOT, "wisdom/nvidia-h100-80gb-hbm3.json"))
    ap.add_argument("--data", required=True, help="the data file holding the tune's rows, named in each source")
    ap.add_argument("--gpu", default="an H200")
    ap.add_argument("--date", default=time.strftime("%Y-%m-%d", time.gmtime()), help="when it was measured (default: today, UTC)")
    ap.add_argument("--skip", action="append", default=[])
    ap.add_argument("--ab", nargs=2, metavar=("BEFORE", "AFTER"))
    ap.add_argument("--margin", type=float, default=0.02)
    a = ap.parse_args(argv)
    try:
        skips = {skip_key(s) for s in a.skip}
        wins = ab_wins(a.ab[0], a.ab[1], a.margin) if a.ab else None
        with open(a.tuned) as f:
            tuned = json.load(f)
        with open(a.into) as f:
            into = json.load(f)
    except (OSError, ValueError, KeyError) as e:
        print(f"merge_tuned: {e}", file=sys.stderr)
        return 2
    foreign = tuned.get("device") != into.get("device")
    have = {key(e): i for i, e in enumerate(into["entries"])}
    added = replaced = skipped = 0
    for e in tuned["entries"]:
        k = (e["dtype"], e.get("op", "NN"), e["shape"])
        if k in skips or (wins is not None and k not in wins):  # --ab: no row, no entry
            skipped += 1
            continue
        e = dict(e)
        e["config"] = "configs/" + os.path.basename(e["config"])
        if not os.path.exists(os.path.join(ROOT, e["config"])):
            print(f"merge_tuned: {a.tuned}: entry {e['dtype']} {e['shape']}: config {e['config']} is not in the "
                  "repository", file=sys.stderr)
            return 2
        if foreign:
            e["source"] = (f"measured on {a.gpu}, not on the {into.get('device', 'arch')} this file is for "
                           f"({a.date}, {a.data}): {e.get('source', 'engine tune')}")
        k = key(e)
        if k in have:
            into["entries"][have[k]] = e
            replaced += 1
        else:
            have[k] = len(into["entries"])
            into["entries"].append(e)
            added += 1
    write(a.into, into)
    print(f"merge_tuned: {a.into}: {added} added, {replaced} replaced, {skipped} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
