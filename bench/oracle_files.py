#!/usr/bin/env python3
"""Which oracle rows under bench/data stand for the development seeds (bench/oracle.sh: every shipped
entry timed at each seed's shapes beside cuBLAS). bench/select_cv.py replays selection from them, and
the shipped development points (wisdom/<device>.dev-seeds.json) are built from the same list:

  python3 bench/oracle_entries.py --device "NVIDIA H100 80GB HBM3" --arch sm_90 \\
      --skip wisdom/nvidia-h100-80gb-hbm3.json $(python3 bench/oracle_files.py) \\
      > wisdom/nvidia-h100-80gb-hbm3.dev-seeds.json

  python3 bench/oracle_files.py [--leave-out SEED]     the files, in the order oracle_entries reads them
"""
import json, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rows import find, glob_rows, open_rows  # noqa: E402  (the large files ship gzip-compressed)

TAG = "h100"
DATA = "bench/data"
OPS = ("NN", "NT", "TN")


def seeds():
    return sorted({int(re.search(r"random-(\d+)-oracle", f).group(1))
                   for f in glob_rows(f"{DATA}/{TAG}-random-*-oracle-f32.jsonl")})


def rows_file(seed, dt, op="NN"):
    """A seed's oracle rows: the second oracle (oracle2: timed again on later kernels, more entries)
    where there is one, else the first; an op other than NN has second-oracle rows only (None where
    that dtype has none)."""
    if op != "NN":
        f = find(f"{DATA}/{TAG}-random-{seed}-oracle2-{op.lower()}-{dt}.jsonl")
        return f if os.path.exists(f) else None
    f2 = find(f"{DATA}/{TAG}-random-{seed}-oracle2-{dt}.jsonl")
    return f2 if os.path.exists(f2) else find(f"{DATA}/{TAG}-random-{seed}-oracle-{dt}.jsonl")


def extra_files(seed, dt, op="NN"):
    """Rows of configs added to wisdom after the oracles, timed at the seed's shapes in a later session
    (oracle-s<session>[-<op>]-<dtype>: bench/oracle.sh with WISDOM_FILE naming only the new entries). A
    file whose every template a later session's file times again is left out: that session re-timed
    those entries (their template changed, or they were re-tuned) and its rows stand for them."""
    suffix = "" if op == "NN" else "-" + op.lower()
    pat = re.compile(rf"{TAG}-random-{seed}-oracle-s(\d+){suffix}-{dt}\.jsonl(\.gz)?$")
    found = sorted((int(m.group(1)), f) for f in glob_rows(f"{DATA}/{TAG}-random-{seed}-oracle-s*-{dt}.jsonl")
                   if (m := pat.search(f)))
    tpl = {f: {json.loads(l).get("template") for l in open_rows(f)} - {None, "cublas"} for _, f in found}
    return [f for n, f in found if not tpl[f] <= set().union(*(tpl[g] for m, g in found if m > n))]


def stand_in_files(seed, dt, op="NN"):
    """Rows another GPU timed at the seed's shapes (<tag>-random-<seed>-oracle-s<session>[-<op>]-<dtype>,
    a tag other than TAG: an H200 where no H100 was lent), beside the points' own configs there:
    oracle_entries weighs them on that GPU alone, never against this one's times."""
    suffix = "" if op == "NN" else "-" + op.lower()
    pat = re.compile(rf"/([a-z0-9]+)-random-{seed}-oracle-s(\d+){suffix}-{dt}\.jsonl(\.gz)?$")
    found = sorted((m.group(1), int(m.group(2)), f) for f in glob_rows(f"{DATA}/*-random-{seed}-oracle-s*-{dt}.jsonl")
                   if (m := pat.search(f)) and m.group(1) != TAG)
    return [f for _, _, f in found]


def point_files(leave_out=None, ops=OPS, extra=True):
    """The rows the development points come from, in oracle_entries' order: the later sessions' rows
    first (it keeps the last cuBLAS time it reads at a shape, and the oracles' cuBLAS rows are the
    ones judged against), then the oracles', then another GPU's (stand_in_files); NN's, then each
    other op's (an op's entries are the points --auto weighs for one product in that op)."""
    out = []
    for op in ops:
        ss = [s for s in seeds() if s != leave_out]
        if extra:
            out += [f for s in ss for d in ("f32", "f64") for f in extra_files(s, d, op)]
        out += [f for s in ss for d in ("f32", "f64") if (f := rows_file(s, d, op))]
        if extra:
            out += [f for s in ss for d in ("f32", "f64") for f in stand_in_files(s, d, op)]
    return out


if __name__ == "__main__":
    leave = int(sys.argv[2]) if len(sys.argv) == 3 and sys.argv[1] == "--leave-out" else None
    print("\n".join(point_files(leave)))
