#!/usr/bin/env python3
"""bench/half_tune.sh's archive into the repository (no GPU): its tuned bf16/f16 wisdom entries into the
H100's file, its rows into bench/data.

  python3 bench/half_merge.py OUT/half-tune.tgz [--date 2026-11-28] [--tag h200] [--into wisdom/nvidia-h100-80gb-hbm3.json]

Writes bench/data/TAG-half-tune-DATE.jsonl (the tune logs, every point), TAG-half-judge-seedS-{before,after}-DATE.jsonl
(the judge seed's --auto rows; S read from the archive's summary) and TAG-workload-bf16-DATE.jsonl (where
the archive has them), then merges the half-precision entries of the archive's tuned wisdom file into
--into: an entry of the same (dtype, op, batch, align, shape) there is replaced, the others are kept
line for line, and the new ones follow the file's last entry in the writer's order (dtype, op, batch,
M, N, K). Each entry's "source" says where it was measured: "measured on an H200 (bench/half_tune.sh,
DATE, bench/data/...), not on the H100 this file is for: " and the tune's own text. Config paths are
made the repository's (configs/NAME.json). Exit 0; 2 bad input (one line)."""
import argparse
import io
import json
import os
import re
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wisdom_file import entry_line, key, order  # noqa: E402  (entries as the engine writes them)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HALF = ("bf16", "f16")


class Invalid(Exception):
    pass


def members(path):
    """{name without './': bytes} of the archive (or of a directory, the same layout)."""
    out = {}
    if os.path.isdir(path):
        for dirpath, _, files in os.walk(path):
            for f in files:
                full = os.path.join(dirpath, f)
                out[os.path.relpath(full, path)] = open(full, "rb").read()
        return out
    try:
        with tarfile.open(path) as t:
            for m in t.getmembers():
                if m.isfile():
                    out[os.path.normpath(m.name)] = t.extractfile(m).read()
    except (OSError, tarfile.TarError) as e:
        raise Invalid(f"{path}: not a readable archive: {e}")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("archive")
    ap.add_argument("--date", default="2026-11-28")
    ap.add_argument("--tag", default="h200", help="the measuring GPU's tag in the data file names (h200)")
    ap.add_argument("--gpu", default="an H200", help="the measuring GPU in the sources' text")
    ap.add_argument("--into", default=os.path.join(ROOT, "wisdom", "nvidia-h100-80gb-hbm3.json"))
    ap.add_argument("--data-dir", default=os.path.join(ROOT, "bench", "data"))
    a = ap.parse_args(argv)
    try:
        files = members(a.archive)
        tuned = sorted(n for n in files if n.startswith("tuned/") and n.endswith(".json"))
        if not tuned:
            raise Invalid(f"{a.archive}: no tuned/*.json (bench/half_tune.sh's tuned wisdom)")
        summary = files.get("summary.txt", b"").decode()
        m = re.search(r"judge seed (\d+)", summary)
        seed = m.group(1) if m else "unknown"
        # The rows, to bench/data.
        os.makedirs(a.data_dir, exist_ok=True)
        tune_name = f"{a.tag}-half-tune-{a.date}.jsonl"
        written = []
        logs = sorted(n for n in files if re.fullmatch(r"tune-.*\.jsonl", n))
        outs = [(tune_name, logs)]
        for when in ("before", "after"):
            outs.append((f"{a.tag}-half-judge-seed{seed}-{when}-{a.date}.jsonl", [f"judge-{when}.jsonl"]))
        outs.append((f"{a.tag}-workload-bf16-{a.date}.jsonl", ["workload-after.jsonl"]))
        for name, srcs in outs:
            data = b"".join(files[s] for s in srcs if s in files)
            if data:
                with open(os.path.join(a.data_dir, name), "wb") as f:
                    f.write(data)
                written.append(name)
        # The entries.
        new = []
        for n in tuned:
            try:
                doc = json.loads(files[n])
            except ValueError as e:
                raise Invalid(f"{a.archive}: {n}: not JSON: {e}")
            for e in doc.get("entries", []):
                if e.get("dtype") not in HALF:
                    continue
                e = dict(e)
                e["config"] = "configs/" + os.path.basename(e["config"])
                e["source"] = (f"measured on {a.gpu}, not on the H100 this file is for (bench/half_tune.sh, {a.date}, "
                               f"bench/data/{tune_name}): {e.get('source', 'engine tune')}")
                new.append(e)
        if not new:
            raise Invalid(f"{a.archive}: {', '.join(tuned)}: no bf16 or f16 entries")
        text = open(a.into).read()
        doc = json.loads(text)
        keys = {key(e) for e in new}
        lines = text.split("\n")
        # One entry a line (the writer's layout): drop the lines of entries the new ones replace.
        kept, replaced = [], 0
        for line in lines:
            s = line.strip().rstrip(",")
            if s.startswith("{\"dtype\""):
                if key(json.loads(s)) in keys:
                    replaced += 1
                    continue
            kept.append(line)
        entry_lines = [i for i, line in enumerate(kept) if line.strip().startswith("{\"dtype\"")]
        if not entry_lines:
            raise Invalid(f"{a.into}: no entry lines")
        last = entry_lines[-1]
        kept[last] = kept[last].rstrip().rstrip(",") + ","
        add = [entry_line(e) + "," for e in sorted(new, key=order)]
        add[-1] = add[-1].rstrip(",")
        out = "\n".join(kept[: last + 1] + add + kept[last + 1:])
        merged = json.loads(out)  # still one JSON document, every entry there
        if len(merged["entries"]) != len(doc["entries"]) - replaced + len(new):
            raise Invalid(f"{a.into}: the merge lost entries")
        with open(a.into + ".tmp", "w") as f:
            f.write(out)
        os.replace(a.into + ".tmp", a.into)
    except Invalid as e:
        print(e, file=sys.stderr)
        return 2
    counts = ", ".join(f"{d} {sum(e['dtype'] == d for e in new)}" for d in HALF)
    print(f"{a.into}: {len(new)} entries ({counts}), {replaced} replaced; bench/data: {', '.join(written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
