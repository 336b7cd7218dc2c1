#!/usr/bin/env python3
"""The data half of tools/plot.sh: reads a tune log or a size sweep and writes what gnuplot draws.

    usage: tools/plot_data.py tune LOG.jsonl DIR [PARAM]
           tools/plot_data.py sizes SWEEP.csv DIR

Writes into DIR (a scratch directory owned by plot.sh):
  meta.gp     gnuplot assignments: titles, the cuBLAS TFLOP/s, axis choices
  rank.dat    tune: "rank TFLOP/s", best first
  param.dat   tune with PARAM: "x TFLOP/s label", x the value (or its index when not numeric)
  s<i>.dat    sizes: one file per series, "x TFLOP/s tic-label", in size order

Which tune rows count: per key, the row of its highest stage (stage 2, else stage 1, else 0), the
last one when a key repeats within a stage (merged or resumed logs); plotted only if its status is
"ok" and it has a TFLOP/s. A last line that does not parse is an interrupted run: skipped, said on
stderr. Any other bad line is an error. Exit codes: 0 ok, 2 bad input (message on stderr).
"""
import csv
import json
import math
import os
import statistics
import sys


class BadInput(Exception):
    pass


def gp_str(s):
    """A gnuplot double-quoted string literal."""
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def is_pow2(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 1 and float(v).is_integer() \
        and (int(v) & (int(v) - 1)) == 0


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def distinct(values):
    """The distinct values in first-seen order, joined by "/" (a merged log may mix them)."""
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return "/".join(str(v) for v in seen)


def read_tune_log(path):
    """The rows of a JSONL tune log, skipping a truncated last line."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    rows = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError("not a JSON object")
        except ValueError as e:
            if i == len(lines):
                print(f"{path}:{i}: last line does not parse (an interrupted run?): skipped", file=sys.stderr)
                break
            raise BadInput(f"{path}:{i}: not a JSON object: {e}")
        rows.append(row)
    return rows


def row_tflops(r):
    if is_number(r.get("tflops")) and r["tflops"] > 0:
        return float(r["tflops"])
    if is_number(r.get("ms")) and r["ms"] > 0 and all(is_number(r.get(d)) for d in "MNK"):
        return 2.0 * r["M"] * r["N"] * r["K"] / (r["ms"] * 1e-3) / 1e12
    return None


def select_points(rows):
    """Per key, its highest-stage row; of those, the "ok" ones with a TFLOP/s."""
    best = {}
    for r in rows:
        key = r.get("key")
        if key is None:
            key = json.dumps(r.get("configuration"), sort_keys=True)
        stage = r.get("stage") if is_number(r.get("stage")) else 0
        if key not in best or stage >= best[key][0]:
            best[key] = (stage, r)
    out = []
    for _, r in best.values():
        tf = row_tflops(r)
        if r.get("status") == "ok" and tf is not None:
            out.append((tf, r))
    return out


def cublas_tflops(points):
    """2MNK over the median cuBLAS time of the plotted rows; None when no row has one."""
    times = [(r["cublas_ms"], r) for _, r in points if is_number(r.get("cublas_ms")) and r["cublas_ms"] > 0]
    if not times:
        return None
    shapes = {(r.get("M"), r.get("N"), r.get("K")) for _, r in times}
    if len(shapes) == 1:
        M, N, K = shapes.pop()
        return 2.0 * M * N * K / (statistics.median(t for t, _ in times) * 1e-3) / 1e12
    # A log over several shapes: the median of each row's cuBLAS rate instead.
    print("plot: the log mixes problem shapes; the cuBLAS line is the median of the rows' cuBLAS TFLOP/s",
          file=sys.stderr)
    return statistics.median(2.0 * r["M"] * r["N"] * r["K"] / (t * 1e-3) / 1e12 for t, r in times)


def tune(path, out, param):
    points = select_points(read_tune_log(path))
    if not points:
        raise BadInput(f"{path}: no plottable rows (no key whose last stage has status \"ok\" and a time)")
    available = sorted({k for _, r in points if isinstance(r.get("configuration"), dict) for k in r["configuration"]})
    if param is not None and param not in available:
        raise BadInput(f"--param {param}: not a configuration parameter of {path}; available: {', '.join(available)}")

    points.sort(key=lambda p: -p[0])
    rs = [r for _, r in points]
    shape = distinct(f"{r.get('M')}x{r.get('N')}x{r.get('K')}" for r in rs)
    title = f"{distinct(r.get('config', '?') for r in rs)} {distinct(r.get('dtype', '?') for r in rs)} " \
            f"{shape} on {distinct(r.get('device', '?') for r in rs)}: {len(points)} points"
    ref = cublas_tflops(points)
    meta = [f"title = {gp_str(title)}", f"has_cublas = {0 if ref is None else 1}", f"cublas = {ref or 0:.6g}"]

    with open(os.path.join(out, "rank.dat"), "w") as f:
        for i, (tf, _) in enumerate(points, 1):
            f.write(f"{i} {tf:.6g}\n")

    if param is not None:
        vals = [r["configuration"].get(param) for r in rs]
        have = [(v, tf) for v, (tf, _) in zip(vals, points) if v is not None]
        numeric = all(is_number(v) for v, _ in have)
        log2 = numeric and all(is_pow2(v) for v, _ in have)
        cats = [] if numeric else sorted({json.dumps(v) for v, _ in have})
        with open(os.path.join(out, "param.dat"), "w") as f:
            for v, tf in have:
                if numeric:
                    f.write(f"{v:.10g} {tf:.6g} {v:.10g}\n")
                else:
                    label = json.dumps(v).strip('"').replace(" ", "_")
                    f.write(f"{cats.index(json.dumps(v)) + 1} {tf:.6g} {label}\n")
        xs = sorted({float(v) for v, _ in have}) if numeric else list(range(1, len(cats) + 1))
        lo, hi = xs[0], xs[-1]
        if log2:
            lo, hi = lo / 1.5, hi * 1.5
        else:
            pad = (hi - lo) * 0.08 if hi > lo else 1.0
            lo, hi = lo - pad, hi + pad
        meta += [f"param = {gp_str(param)}", f"log2 = {int(log2)}", f"categorical = {int(not numeric)}",
                 f"xlo = {lo:.10g}", f"xhi = {hi:.10g}", f"few_values = {int(len(xs) <= 16)}"]
    with open(os.path.join(out, "meta.gp"), "w") as f:
        f.write("\n".join(meta) + "\n")


def sizes(path, out):
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        reader = csv.DictReader(f)
        need = ["config", "dtype", "M", "N", "K", "status", "tflops"]
        lack = [c for c in need if c not in (reader.fieldnames or [])]
        if lack:
            raise BadInput(f"{path}: not a `engine bench --format csv` sweep: no column {', '.join(lack)} in the header")
        rows = []
        for r in reader:
            if r["config"] == "config" or r["status"] != "ok":  # a repeated header, or a row not timed
                continue
            try:
                shape = (int(r["M"]), int(r["N"]), int(r["K"]))
                tf = float(r["tflops"])
            except (TypeError, ValueError):
                raise BadInput(f"{path}:{reader.line_num}: M, N, K or tflops is not a number")
            if tf > 0:
                rows.append((r["config"], r["dtype"], shape, tf))
    if not rows:
        raise BadInput(f"{path}: no plottable rows (no row with status \"ok\" and a TFLOP/s)")

    several_dtypes = len({d for _, d, _, _ in rows}) > 1
    series = {}  # name -> shape -> [TFLOP/s]: cuBLAS may be timed once per config at each size
    for config, dtype, shape, tf in rows:
        name = "cuBLAS" if config == "cublas" else config
        if several_dtypes:
            name += f" {dtype}"
        series.setdefault(name, {}).setdefault(shape, []).append(tf)

    shapes = sorted({s for _, _, s, _ in rows}, key=lambda s: (s[0] * s[1] * s[2], s))
    # Each shape sits at the cube root of MNK on a log2 axis (M itself when M = N = K); when two
    # shapes would share a position, they are spaced evenly instead, in order of MNK.
    pos = {s: (s[0] * s[1] * s[2]) ** (1 / 3) for s in shapes}
    if len({round(p, 6) for p in pos.values()}) < len(shapes):
        pos, log2 = {s: i + 1 for i, s in enumerate(shapes)}, 0
    else:
        log2 = 1
    tic = {s: str(s[0]) if s[0] == s[1] == s[2] else f"{s[0]}x{s[1]}x{s[2]}" for s in shapes}

    names = sorted(n for n in series if not n.startswith("cuBLAS")) + sorted(n for n in series if n.startswith("cuBLAS"))
    for i, name in enumerate(names, 1):
        with open(os.path.join(out, f"s{i}.dat"), "w") as f:
            for s in sorted(series[name], key=lambda s: pos[s]):
                f.write(f"{pos[s]:.10g} {statistics.median(series[name][s]):.6g} {tic[s]}\n")
    nref = sum(1 for n in names if n.startswith("cuBLAS"))
    dtypes = distinct(d for _, d, _, _ in rows)
    meta = [f"title = {gp_str(f'TFLOP/s against problem size ({dtypes})')}",
            f"n = {len(names) - nref}", f"nref = {nref}", f"log2 = {log2}",
            f"array names[{len(names)}] = [{', '.join(gp_str(n) for n in names)}]"]
    with open(os.path.join(out, "meta.gp"), "w") as f:
        f.write("\n".join(meta) + "\n")


def main(argv):
    if len(argv) < 4 or argv[1] not in ("tune", "sizes"):
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        if argv[1] == "tune":
            tune(argv[2], argv[3], argv[4] if len(argv) > 4 else None)
        else:
            sizes(argv[2], argv[3])
    except BadInput as e:
        print(f"plot: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"plot: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
