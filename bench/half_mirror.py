#!/usr/bin/env python3
"""f16 entries mirrored from a wisdom file's bf16 ones (no GPU): for each bf16 entry of configs/hws_bf16.json
or configs/gemv.json with no measured f16 entry at its (op, batch, align, shape), the same tile in
configs/hws_f16.json (gemv: the same config, which takes either type), with the bf16 figures and a
source that says they are bf16's; an f16 entry mirrored earlier is mirrored again from the bf16 entry
there now. gemv streams both types with the same loads and FP32 sums. hws runs the two types with the same instructions
(wgmma m64nNk16 at one rate), the same pipeline and the same bytes, and measured within 1-2% of each
other against cuBLAS at 4096^3 and 8192^3 (docs/RESULTS.md, "BF16 and FP16"); without these the f16
choices had two arch-level entries to go on. A tune in f16 (DT=f16 bash bench/half_tune.sh) replaces
them: a measured f16 entry is never touched.

  python3 bench/half_mirror.py [--into wisdom/nvidia-h100-80gb-hbm3.json]

Exit 0; 2 bad input (the file unreadable or not JSON: one line).
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
    try:
        with open(a.into) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"half_mirror: {a.into}: {e}", file=sys.stderr)
        return 2
    mark = "bf16's entry mirrored, not measured in f16"
    have = {key(e): i for i, e in enumerate(doc["entries"])}
    added = renewed = 0
    for e in list(doc["entries"]):
        if e["dtype"] != "bf16" or e["config"] not in ("configs/hws_bf16.json", "configs/gemv.json"):
            continue
        at = have.get(key(dict(e, dtype="f16")))
        if at is not None and not doc["entries"][at].get("source", "").startswith(mark):
            continue  # measured in f16
        gemv = e["config"] == "configs/gemv.json"
        m = dict(e, dtype="f16", config=e["config"] if gemv else "configs/hws_f16.json")
        m["source"] = (f"{mark} (bench/half_mirror.py: {'gemv' if gemv else 'hws'} runs both types alike): "
                       + e.get("source", ""))
        if at is None:
            doc["entries"].append(m)
            added += 1
        elif doc["entries"][at] != m:
            doc["entries"][at] = m
            renewed += 1
    write(a.into, doc)
    print(f"half_mirror: {added} f16 entries mirrored into {a.into}, {renewed} mirrored again")
    return 0


if __name__ == "__main__":
    sys.exit(main())
