#!/usr/bin/env python3
"""The README's figure tables, rendered from the data files the bench scripts write, so that a
table cannot drift from its data.

  python3 bench/tables.py --check README.md   exit 1, naming the table and its first differing line,
                                               where a block <!-- table:NAME --> ... <!-- /table -->
                                               is not what its data renders, or where a figure
                                               (1.04x, 5.47 TFLOP/s, 0.341 ms, 57% of cuBLAS) stands
                                               outside such a block and code
  python3 bench/tables.py --write README.md   rewrite every block from its data
  python3 bench/tables.py --print NAME        one table on stdout (NAME: see TABLES)
  python3 bench/tables.py --md FILE.jsonl     rows of `engine bench --format jsonl` as the engine's own
                                               `--format md` table (bench/walk.sh prints its tables so)
  --data DIR                                   read the data files from DIR (default bench/data)

The data (bench/data/): <tag>-{walk,siboehm,dgemm}.jsonl from bench/walk.sh, <tag>-targets.jsonl
from bench/targets.sh, the shape suite's rows from bench/shapes.sh (SUITE below names the run shown);
each row carries the "date" and "device" of its run. published.json holds other people's figures,
with their sources. To show a new run: put its files in bench/data (and name a new suite run in
SUITE), then --write, and commit the data with the README.
"""
import argparse
import json
import math
import os
import re
import sys
from decimal import ROUND_HALF_UP, Decimal

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEVICE = "H100"  # the column label of our figures
WALK, SIBOEHM, DGEMM = "h100-walk.jsonl", "h100-siboehm.jsonl", "h100-dgemm.jsonl"
TARGETS = "h100-targets.jsonl"
SUITE = {"FP32": "h100-suite-f32-auto-2026-11-26-s11.jsonl", "FP64": "h100-suite-f64-auto-2026-11-26-s11.jsonl"}
OURS = "warptile_db"  # the siboehm table's last kernel, in bold
DGEMM_LABELS = {
    "dgemm_smem": "dgemm_smem (16x16x16 tiles)",
    "dgemm_pipelined": "dgemm_pipelined (64x64x32, 2-stage cp.async, DMMA)",
    "dgemm_simt": "dgemm_simt (ours, CUDA cores)",
    "dgemm_dmma": "dgemm_dmma (ours, tensor cores)",
    "cublas": "cuBLAS DGEMM",
}
# A figure in prose: a ratio, a rate, a time, a share of cuBLAS. Outside the generated blocks the
# README says where to find figures, never a figure itself.
FIGURE = re.compile(r"\b\d+\.\d+x\b|\d TFLOP/s|\b\d+\.\d+ ms\b|\d% (of )?cuBLAS")
BEGIN = re.compile(r"^<!-- table:([a-z0-9_-]+) -->$")
END = "<!-- /table -->"


def rows_of(data, name):
    path = os.path.join(data, name)
    with open(path) as f:
        return [json.loads(line) for line in f if line.startswith("{")]


def published(data, key):
    with open(os.path.join(data, "published.json")) as f:
        return json.load(f)[key]


def dec(value, places):
    """value rounded half up to `places` decimals, as published figures are read."""
    return str(Decimal(str(value)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))


def provenance(data, names, rows_by_name):
    """The line under a table: its files, with the device and dates of their runs and where copied
    rows came from (files that say the same are named together)."""
    said = {}
    for name in names:
        rows = rows_by_name[name]
        dates = sorted({r["date"] for r in rows if r.get("date")})
        devices = sorted({r["device"] for r in rows if r.get("device")})
        sources = sorted({r["source"] for r in rows if r.get("source")})
        what = ", ".join(devices + dates) or "undated"
        if sources:
            what += "; figures copied from " + " and ".join(sources)
        said.setdefault(what, []).append(f"`{os.path.relpath(os.path.join(data, name), ROOT)}`")
    return "Data: " + "; ".join(f"{', '.join(files)} ({what})" for what, files in said.items()) + "."


def notes(rows):
    """Rows with a "note" are marked * and the notes printed under the table."""
    return [f"\\* {r['note']}" for r in rows if r.get("note")]


def timed(r):
    return r.get("status") == "ok" and r.get("ms", 0) > 0


def table_walk(data):
    rows = rows_of(data, WALK)
    pub = published(data, "rtx3050-walk")
    label = pub["device"].split(" (")[0].replace("NVIDIA GeForce ", "").replace(" Laptop GPU", "")
    out = [f"| step | config | {label} ms | {DEVICE} ms | {DEVICE} TFLOP/s | {DEVICE} % cuBLAS |",
           "|---:|---|---:|---:|---:|---:|"]
    step = 0
    for r in rows:
        ref = r["config"] == "cublas"
        theirs = pub["figures"].get(r["config"])
        theirs = dec(theirs, 2) if theirs is not None else "–"
        name = "cuBLAS" if ref else r["config"]
        num = "" if ref else str(step)
        step += not ref
        if not timed(r):
            out.append(f"| {num} | {name} | {theirs} | {r.get('status', '?')} | | |")
            continue
        pct = "100" if ref else f"{r['pct_cublas']:.1f}"
        out.append(f"| {num} | {name} | {theirs} | {r['ms']:.3f} | {r['tflops']:.2f} | {pct} |")
    out += ["", provenance(data, [WALK], {WALK: rows}) + f" {label}: {pub['source'].split(',')[0]} (GitHub; its address in bench/data/published.json)."]
    return out


def table_siboehm(data):
    rows = rows_of(data, SIBOEHM)
    pub = published(data, "a6000-siboehm")
    label = pub["device"].split(" (")[0].replace("NVIDIA RTX ", "")
    heads, theirs, tf, pct = [], [], [], []
    for i, r in enumerate(rows):
        ref, ours = r["config"] == "cublas", r["config"] == OURS
        heads.append("cuBLAS" if ref else "ours" if ours else str(i + 1))
        star = "*" if r.get("note") else ""
        bold = (lambda s: f"**{s}**") if ours else (lambda s: s)
        p = pub["figures"].get(r["config"])
        theirs.append(dec(p / 1000, 2) if p is not None else "–")
        if not timed(r):
            tf.append(r.get("status", "?"))
            pct.append("")
            continue
        tf.append(bold(f"{r['tflops']:.2f}") + star)
        pct.append("100" if ref else bold(f"{r['pct_cublas']:.1f}") + star)
    line = lambda name, cells: f"| {name} | " + " | ".join(cells) + " |"
    out = [line("kernel", heads), "|---|" + "---:|" * len(heads),
           line(f"{label} TFLOP/s", theirs), line(f"{DEVICE} TFLOP/s", tf), line(f"{DEVICE} % cuBLAS", pct)]
    out += [""] + notes(rows)
    out += ["", provenance(data, [SIBOEHM], {SIBOEHM: rows})
            + f" {label} ({pub['shape'].split('x')[0]}^3): {pub['source'].split(',')[0]} (GitHub; its address in bench/data/published.json)."]
    return out


def table_dgemm(data):
    rows = rows_of(data, DGEMM)
    out = ["| config | TFLOP/s | % cuBLAS DGEMM | % peak |", "|---|---:|---:|---:|"]
    for r in rows:
        name = DGEMM_LABELS.get(r["config"], r["config"])
        if not timed(r):
            out.append(f"| {name} | {r.get('status', '?')} | | |")
            continue
        cores = "tensor cores" if r["template"] in ("dmma", "cublas") else "CUDA cores"
        pct = "100" if r["config"] == "cublas" else f"{r['pct_cublas']:.1f}"
        out.append(f"| {name} | {r['tflops']:.2f} | {pct} | {r['pct_peak']:.1f} (FP64 {cores}) |")
    return out + ["", provenance(data, [DGEMM], {DGEMM: rows})]


def suite_summary(rows):
    """(shapes, geometric mean, minimum, its shape) of ours over cuBLAS, as bench/shapes.sh reports
    them: per shape the fastest ok row against that shape's cuBLAS row; a shape without both is 0."""
    by = {}
    for r in rows:
        by.setdefault((r["M"], r["N"], r["K"]), []).append(r)
    ratios = []
    for shape, rs in by.items():
        cub = next((r for r in rs if r["config"] == "cublas"), None)
        mine = [r for r in rs if r["config"] != "cublas" and r["status"] == "ok"]
        ratio = cub["ms"] / max(mine, key=lambda r: r["tflops"])["ms"] if cub and mine else 0.0
        ratios.append((ratio, "x".join(map(str, shape))))
    pos = [r for r, _ in ratios if r > 0]
    g = math.exp(sum(map(math.log, pos)) / len(pos)) if pos else 0.0
    low = min(ratios)
    return len(ratios), g, low[0], low[1]


def table_shapes(data):
    out = ["| suite | shapes | geometric mean | minimum |", "|---|---:|---:|---|"]
    by = {}
    for dt, name in SUITE.items():
        by[name] = rows_of(data, name)
        n, g, low, where = suite_summary(by[name])
        blas = "cuBLAS DGEMM" if dt == "FP64" else "cuBLAS"
        out.append(f"| {dt} | {n} | **{g:.3f}x** {blas} | {low:.3f}x at {where} |")
    return out + ["", provenance(data, list(SUITE.values()), by)]


def table_targets(data):
    rows = rows_of(data, TARGETS)
    sizes = sorted({r["size"] for r in rows})
    groups = {}
    for r in rows:
        groups.setdefault((r["group"], r["target"], r["threshold"]), []).append(r)
    out = ["| target | goal | " + " | ".join(f"{s}^3" for s in sizes) + " | |",
           "|---|---|" + "---:|" * len(sizes) + "---|"]
    for (group, target, thr), rs in groups.items():
        unit = "x" if rs[0]["field"] == "ratio" else "%"
        fmt = (lambda v: f"{v:.3f}x") if unit == "x" else (lambda v: f"{v:.1f}%")
        cells = {r["size"]: fmt(r["value"]) if r.get("value") is not None else "no result" for r in rs}
        met = "met" if all(r["met"] for r in rs) else "missed"
        name = ("floor: " if group == "floor" else "") + target
        out.append(f"| {name} | >= {thr:g}{unit} | " + " | ".join(cells.get(s, "") for s in sizes) + f" | {met} |")
    return out + ["", provenance(data, [TARGETS], {TARGETS: rows})]


TABLES = {"walk": table_walk, "siboehm": table_siboehm, "dgemm": table_dgemm, "shapes": table_shapes,
          "targets": table_targets}


def engine_md(rows):
    """The engine's `--format md` table (engine/lab/report.c) of rows of its `--format jsonl`."""
    out = ["| step | config | ms | TFLOP/s | % cuBLAS | % peak | step gain | floor ms (bound) | regs | smem | occupancy |",
           "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    step, prev = 0, 0.0
    for r in rows:
        ms = r.get("ms", 0)
        num, gain = "", "–"
        if r.get("template") != "cublas":
            num, step = str(step), step + 1
            if ms > 0 and prev > 0:
                gain = f"{prev / ms:.2f}x"
            if ms > 0:
                prev = ms
        floor = f"{r['floor_ms']:.3f} ({r.get('bound', '')})" if r.get("floor_ms", 0) > 0 else ""
        if ms <= 0:
            out.append(f"| {num} | {r['config']} | {r.get('status', '')} | | | | | | | | |")
            continue
        peak = f"{r['pct_peak']:.1f}" if "pct_peak" in r else ""  # rows copied from a table may lack it
        head = f"| {num} | {r['config']} | {ms:.3f} | {r['tflops']:.2f} | {r['pct_cublas']:.1f} | {peak} | {gain} | {floor} |"
        if r.get("regs", -1) >= 0 and "occ_blocks" in r:
            out.append(head + f" {r['regs']} | {r['smem_bytes']} | {r['occ_blocks']}×{r['threads']} ({r['occ_pct']:.0f}%) |")
        else:
            out.append(head + " | | |")
    return out


def blocks(lines):
    """(name, first line inside, end line) of each generated block; raises on a broken marker."""
    found, open_at = [], None
    for i, line in enumerate(lines):
        m = BEGIN.match(line)
        if m:
            if open_at:
                raise ValueError(f"line {i + 1}: table:{m[1]} opens inside table:{open_at[0]}")
            open_at = (m[1], i + 1)
        elif line == END:
            if not open_at:
                raise ValueError(f"line {i + 1}: {END} without a table")
            found.append((open_at[0], open_at[1], i))
            open_at = None
    if open_at:
        raise ValueError(f"table:{open_at[0]} is never closed with {END}")
    for name, _, _ in found:
        if name not in TABLES:
            raise ValueError(f"table:{name}: no such table (known: {', '.join(TABLES)})")
    return found


def stray_figures(lines, spans):
    """Lines outside the blocks and code fences that state a figure."""
    inside = {i for _, a, b in spans for i in range(a, b)}
    fenced, bad = False, []
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and i not in inside and FIGURE.search(line):
            bad.append((i + 1, line))
    return bad


def check(path, data):
    lines = open(path).read().split("\n")
    spans = blocks(lines)
    status = 0
    for name, a, b in spans:
        want, have = [l for l in TABLES[name](data)], lines[a:b]
        if want == have:
            continue
        status = 1
        k = next((k for k in range(min(len(want), len(have))) if want[k] != have[k]), min(len(want), len(have)))
        print(f"{path}:{a + k + 1}: table:{name} differs from its data (python3 bench/tables.py --write {path})")
        print(f"  README: {have[k] if k < len(have) else '(the table ends here)'}")
        print(f"  data:   {want[k] if k < len(want) else '(the table ends here)'}")
    for n, line in stray_figures(lines, spans):
        status = 1
        print(f"{path}:{n}: a figure outside a generated table (move it into one, or to docs/RESULTS.md): {line.strip()}")
    if status == 0:
        print(f"{path}: {len(spans)} tables match their data ({', '.join(n for n, _, _ in spans)})")
    return status


def write(path, data):
    lines = open(path).read().split("\n")
    for name, a, b in reversed(blocks(lines)):
        lines[a:b] = TABLES[name](data)
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.path.join(ROOT, "bench", "data"))
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--check", metavar="README")
    what.add_argument("--write", metavar="README")
    what.add_argument("--print", metavar="NAME", choices=sorted(TABLES))
    what.add_argument("--md", metavar="JSONL")
    a = ap.parse_args()
    try:
        if a.check:
            return check(a.check, a.data)
        if a.write:
            return write(a.write, a.data)
        if a.print:
            print("\n".join(TABLES[a.print](a.data)))
            return 0
        with open(a.md) as f:
            print("\n".join(engine_md([json.loads(l) for l in f if l.startswith("{")])))
        return 0
    except (OSError, ValueError, KeyError) as e:
        print(f"tables: {type(e).__name__}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
