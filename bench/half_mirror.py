#!/usr/bin/env python3
"""f16 entries mirrored from a wisdom file's bf16 ones (no GPU): for each bf16 entry of configs/hws_bf16.json
with no f16 entry at its (op, batch, align, shape), the same tile in configs/hws_f16.json, with the bf16
figures and a source that says they are bf16's. hws runs the two types with the same instructions
(wgmma m64nNk16 at one rate), the same pipeline and the same bytes, and measured within 1-2% of each
other against cuBLAS at 4096^3 and 8192^3 (docs/RESULTS.md, "BF16 and FP16"); without these the f16
choices had two arch-level entries to go on. A tune in f16 (DT=f16 bash bench/half_tune.sh) replaces
them: an f16 entry that is there is never touched.

  python3 bench/half_mirror.py [--into wisdom/nvidia-h100-80gb-hbm3.json]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wisdom_file import key, write  # noqa: E402  (entries as the engine writes them)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--into", default=os.path.join(ROOT, "wisdom", "nvidia-h100-80gb-hbm3.json"))
    a = ap.parse_args()
    doc = json.load(open(a.into))
    have = {key(e) for e in doc["entries"]}
    added = 0
    for e in list(doc["entries"]):
        if e["dtype"] != "bf16" or e["config"] != "configs/hws_bf16.json" or key(dict(e, dtype="f16")) in have:
            continue
        m = dict(e, dtype="f16", config="configs/hws_f16.json")
        m["source"] = "bf16's entry mirrored, not measured in f16 (bench/half_mirror.py: hws runs both types alike): " + e.get("source", "")
        doc["entries"].append(m)
        added += 1
    write(a.into, doc)
    print(f"half_mirror: {added} f16 entries mirrored into {a.into}")


if __name__ == "__main__":
    main()
