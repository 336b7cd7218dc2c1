#!/usr/bin/env python3
"""Workloads as data: the products a program makes, one JSON file per program (bench/workloads/,
schema in its README.md), each call timed with engine.matmul and with torch.matmul in one process
and both results checked against an FP64 reference of the same inputs.

  python3 bench/workload.py [FILES...]             run every call of FILES (default bench/workloads/*.json)
      --out DATA.jsonl                             one row per call (default bench/data/<gpu>-workload-<date>.jsonl)
      --runs R                                     per call: the median of R synchronised single calls (20)
      --budget-ms MS                               the GPU time one batch of back-to-back calls may queue (100):
                                                   the 50 queued and 200 host calls shrink to fit a long call
      --engine-only                                time engine alone (torch still makes inputs and the reference)
  python3 bench/workload.py --dry-run [FILES...]   check the files, list their calls with FLOP counts (no torch, no GPU)
  python3 bench/workload.py --table DATA.jsonl     the tables a run prints at its end, from its data file (no torch)

Each call, in order: inputs uniform in [-1, 1] from a generator seeded by the workload and call name
(the same inputs in every run and for both libraries); the FP64 reference alpha * A @ B + beta * C0;
engine warmed up (then engine.wait_compiles() where the package has it, so that a kernel compiled in
the background is the one timed, then warmed up again); the checked call of each library into a C
poisoned with NaN (beta = 0) or holding C0; then the times:
  per call  median over R of: event; one call; event; synchronize (what one synchronised call costs)
  queued    N calls back to back between two events, / N (the median of 3); N = 50, or fewer where
            50 would queue more than --budget-ms, at least 5
  host      wall time of N calls without synchronisation (after a synchronize, before the one that
            ends the loop), / N; N = 200, or fewer likewise, at least 10
The check: ||out - ref||_F / ||ref||_F <= u_h + u (2 sqrt(k) + 4) (u the unit roundoff of the sums:
the dtype's, FP32's 2^-24 for bf16 and f16; u_h the result's one rounding to the dtype: 2^-8 bf16,
2^-11 f16, 0 f32 and f64); a NaN or Inf in the result fails it. Rounding errors of a K-long sum grow
like sqrt(k) u; the factor leaves a margin of about 5 over a plain FP32 loop at the workloads' K and
none to TF32 (2^-11, 3e-4 here), so a product with TF32 inputs fails. bf16 and f16 mirror the
library's classes of those names (engine/core/accuracy.h): FP32 sums and one rounding to the type,
so sums kept in the half type (about sqrt(k) u_h / 2, several u_h) fail. Their inputs are FP32
uniforms rounded to the type, the reference the FP64 product of those rounded values, and torch's
reduced-precision reductions are turned off, as TF32 is for f32. For an f64 call the reference is cuBLAS's own FP64 product (torch
has no wider type on the GPU): engine_err is then its distance from cuBLAS, and torch_err that of
torch's call (addmm_ where alpha or beta is not 1, 0) from torch.matmul's.

A row (one JSON line per call, written as the call ends): workload, call, dtype, op, m, n, k, batch,
alpha, beta; engine_/torch_ms_call, _ms_queued (ms), _host_us (us), _err (null: not measured, or NaN/Inf
in the result), _ok; tol; label (explain's "label", else "config"), path and why (explain's, where the
package gives them: "cublas" when engine handed the call to cuBLAS); device, date (UTC); error (the
text of any exception, null when none); queued_n, host_n (the N used), seed. The tables give per call
torch / engine (> 1: engine is faster) and their geometric means and minima per workload and dtype,
over the calls that passed.

Exit: 0 every call ran and passed its check; 1 a row holds an error or a failed check (every call still
ran: one bad call never stops the run); 2 bad input (a workload or data file, an argument), one line
naming the file and the call or field.
"""
import argparse
import datetime
import glob
import json
import math
import os
import re
import statistics
import sys
import time
import zlib

# The files' reader and schema (bench/workload_file.py); OPS and load are here for other scripts.
from workload_file import DTYPES, OPS, Invalid, load, load_all  # noqa: F401
from rows import open_rows  # data files, plain or gzip-compressed

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOADS = os.path.join(ROOT, "bench", "workloads")
TORCH_DTYPES = {"f32": "float32", "f64": "float64", "bf16": "bfloat16", "f16": "float16"}
WARMUP = 3  # calls before wait_compiles and again after it
QUEUED, QUEUED_MIN, QUEUED_REPS = 50, 5, 3
HOST, HOST_MIN = 200, 10


# --- the calls -----------------------------------------------------------------------------------

def flop(c):
    return 2.0 * c["batch"] * c["m"] * c["n"] * c["k"]


def operand_bytes(c, dtype):
    """A, B and C in the call's dtype (the FP64 reference needs as much again for f64, twice for f32,
    four times for bf16 and f16)."""
    return c["batch"] * (c["m"] * c["k"] + c["k"] * c["n"] + c["m"] * c["n"]) * DTYPES[dtype][0]


def tolerance(dtype, k):
    """The bound on a call's relative Frobenius error: u_h + u (2 sqrt(k) + 4) (the module's text)."""
    _, u, u_h = DTYPES[dtype]
    return u_h + u * (2 * math.sqrt(k) + 4)


def shape(c):
    s = f"{c['m']}x{c['n']}x{c['k']}"
    return f"{c['batch']} x {s}" if c["batch"] > 1 else s


def dry_run(docs):
    total = 0.0
    for d in docs:
        gf = sum(flop(c) for c in d["calls"]) / 1e9
        total += gf
        print(f"{d['name']} ({d['path']}): {d['dtype']}, {len(d['calls'])} calls, {gf:.1f} GFLOP")
        for i, c in enumerate(d["calls"]):
            ab = "" if (c["alpha"], c["beta"]) == (1, 0) else f" alpha {c['alpha']} beta {c['beta']}"
            print(f"  {d['name']}[{i}] {c['name']}: {d['dtype']} {c['op']} {shape(c)}{ab}, "
                  f"{flop(c) / 1e9:.3f} GFLOP, {operand_bytes(c, d['dtype']) / 2 ** 20:.0f} MiB")
    print(f"{sum(len(d['calls']) for d in docs)} calls in {len(docs)} files, {total:.1f} GFLOP")


# --- the tables, from rows (a run's, or a data file's) -----------------------------------------

def failed(r):
    """Why a row is not a pass ('' when it is): an error, a result over its bound or with NaN."""
    if r.get("error"):
        return r["error"]
    why = []
    for lib in ("engine", "torch"):
        if r.get(f"{lib}_ok") is False:
            err = r.get(f"{lib}_err")
            why.append(f"{lib}: " + (f"error {err:.1e} over {r.get('tol') or float('nan'):.1e}" if err is not None
                                     else "NaN or Inf in the result"))
    return "; ".join(why)


def ratio(r, key):
    e, t = r.get(f"engine_{key}"), r.get(f"torch_{key}")
    return t / e if e and t else None


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def _x(v, digits=2):
    return f"{v:.{digits}f}x" if v is not None else "-"


def _us(v):
    return f"{v:.1f}" if v is not None else "-"


def _err(v):
    return f"{v:.1e}" if v is not None else "-"


def summary_row(name, dtype, rows):
    """| name | dtype | calls | failed | on cuBLAS | timed | per call geomean | min | queued geomean | min |:
    the means over the rows that passed and have both times (a failed call's speed is no speed).
    "on cuBLAS" counts the calls engine handed to cuBLAS (explain's path), whose ratios say nothing
    of engine's kernels."""
    ok = [r for r in rows if not failed(r)]
    pc = [x for x in (ratio(r, "ms_call") for r in ok) if x]
    qu = [x for x in (ratio(r, "ms_queued") for r in ok) if x]
    cublas = sum(1 for r in rows if r.get("path") == "cublas")
    cells = [name, dtype, str(len(rows)), str(len(rows) - len(ok)), str(cublas), str(len(pc))]
    for xs in (pc, qu):
        cells += [_x(geomean(xs), 3), _x(min(xs), 3)] if xs else ["-", "-"]
    return "| " + " | ".join(cells) + " |"


def table(rows):
    """The markdown a run prints at its end: a table per workload, then the geometric means."""
    out = []
    order = []
    for r in rows:
        if r["workload"] not in order:
            order.append(r["workload"])
    for w in order:
        rs = [r for r in rows if r["workload"] == w]
        devices = sorted({r.get("device") or "?" for r in rs})
        dates = sorted({r.get("date") or "?" for r in rs})
        out += [f"### {w} ({rs[0]['dtype']}, {len(rs)} calls; {', '.join(devices)}, {', '.join(dates)})", "",
                "| call | op | shape | per call torch/engine | queued torch/engine | host us engine / torch "
                "| rel. error engine / torch | config | failed |",
                "|---|---|---|---:|---:|---:|---|---|---|"]
        for r in rs:
            label = (r.get("label") or "-") + (f" ({r['path']})" if r.get("path") else "")
            why = failed(r).replace("|", "/").replace("\n", " ")
            out.append(f"| {r['call']} | {r['op']} | {shape(r)} | {_x(ratio(r, 'ms_call'))} | "
                       f"{_x(ratio(r, 'ms_queued'))} | {_us(r.get('engine_host_us'))} / {_us(r.get('torch_host_us'))} | "
                       f"{_err(r.get('engine_err'))} / {_err(r.get('torch_err'))} | {label} | "
                       f"{('FAIL ' + why[:160]) if why else ''} |")
        out.append("")
    out += ["### geometric means of torch time / engine time (> 1: engine is faster), over the calls that passed", "",
            "| workload | dtype | calls | failed | on cuBLAS | timed | per call geomean | per call min | queued geomean | queued min |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for w in order:
        rs = [r for r in rows if r["workload"] == w]
        out.append(summary_row(w, rs[0]["dtype"], rs))
    for dt in sorted({r["dtype"] for r in rows}):
        out.append(summary_row(f"all {dt}", dt, [r for r in rows if r["dtype"] == dt]))
    return "\n".join(out)


ROW_KEYS = ("workload", "call", "dtype", "op", "m", "n", "k", "batch")


def read_rows(path, need=lambda r: ROW_KEYS, what="workload"):
    """A data file's rows; a line that does not parse (an interrupted run's last) is said on stderr
    and skipped. need(row): the keys a row must have (bench/peers.py reads its rows here too)."""
    try:
        f = open_rows(path)  # plain, or gzip-compressed (bench/rows.py)
    except OSError as e:
        raise Invalid(f"{path}: cannot read: {e.strerror}")
    rows = []
    with f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                print(f"{path}:{i}: does not parse, skipped", file=sys.stderr)
                continue
            missing = [k for k in need(r) if k not in r] if isinstance(r, dict) else ["an object"]
            if missing:
                raise Invalid(f"{path}:{i}: not a {what} row (no {', '.join(missing)})")
            rows.append(r)
    if not rows:
        raise Invalid(f"{path}: no rows")
    return rows


# --- the run (torch from here on) ---------------------------------------------------------------

def device_tag(name):
    """bench/lib.sh's device_tag: the first word of the GPU's name that is not a brand, lower case
    ("NVIDIA H100 80GB HBM3" -> h100); TAG, when set, wins."""
    if os.environ.get("TAG"):
        return os.environ["TAG"]
    words = [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w and w not in ("nvidia", "geforce", "rtx", "tesla", "quadro")]
    return words[0] if words else "gpu"


def default_out(device, date, kind="workload"):
    base = os.path.join(ROOT, "bench", "data", f"{device_tag(device)}-{kind}-{date}")
    path, n = base + ".jsonl", 2
    while os.path.exists(path):  # a second run of the day keeps the first's rows
        path, n = f"{base}-{n}.jsonl", n + 1
    return path


class Runner:
    def __init__(self, torch, engine, args):
        self.torch, self.engine, self.args = torch, engine, args
        self.dev = torch.device("cuda")
        self.start, self.stop = (torch.cuda.Event(enable_timing=True) for _ in range(2))

    # The three timings of one library at one call; fn is the call, C already allocated.
    def per_call(self, fn):
        ts = []
        for _ in range(self.args.runs):
            self.start.record()
            fn()
            self.stop.record()
            self.stop.synchronize()
            ts.append(self.start.elapsed_time(self.stop))
        return statistics.median(ts)

    def queued(self, fn, n):
        ts = []
        for _ in range(QUEUED_REPS):
            self.start.record()
            for _ in range(n):
                fn()
            self.stop.record()
            self.stop.synchronize()
            ts.append(self.start.elapsed_time(self.stop) / n)
        return statistics.median(ts)

    def host(self, fn, n):
        self.torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()
        self.torch.cuda.synchronize()
        return (t1 - t0) / n * 1e6

    def operands(self, c, dtype, seed):
        """A (m x k), B (k x n) and C0 (beta != 0) as the op stores them: NT's B is the transposed view of
        an n x k W, TN's A that of a k x m X; a leading batch dimension where batch > 1."""
        torch = self.torch
        gen = torch.Generator(device=self.dev)
        gen.manual_seed(seed)
        lead = (c["batch"],) if c["batch"] > 1 else ()

        def uniform(*dims):
            if dtype in (torch.bfloat16, torch.float16):  # FP32 uniforms rounded to the type
                x = torch.rand(lead + dims, dtype=torch.float32, device=self.dev, generator=gen)
                return x.mul_(2).sub_(1).to(dtype)
            x = torch.rand(lead + dims, dtype=dtype, device=self.dev, generator=gen)
            return x.mul_(2).sub_(1)

        a = uniform(c["k"], c["m"]).transpose(-1, -2) if c["op"] == "TN" else uniform(c["m"], c["k"])
        b = uniform(c["n"], c["k"]).transpose(-1, -2) if c["op"] == "NT" else uniform(c["k"], c["n"])
        c0 = uniform(c["m"], c["n"]) if c["beta"] != 0 else None
        return a, b, c0

    def check(self, out, ref, refnorm, tol):
        """(relative Frobenius error or None where the result holds NaN or Inf, ok)."""
        torch = self.torch
        if not bool(torch.isfinite(out).all()):
            return None, False
        d = out.to(torch.float64, copy=True)  # a copy also for f64: out stays the result
        d.sub_(ref)
        err = float(torch.linalg.vector_norm(d)) / refnorm if refnorm else float(torch.linalg.vector_norm(d))
        return err, err <= tol

    def call(self, w, c):
        """One row: both libraries checked and timed at one call of workload w."""
        torch, engine, args = self.torch, self.engine, self.args
        dtype = getattr(torch, TORCH_DTYPES[w["dtype"]])
        alpha, beta = c["alpha"], c["beta"]
        row = {"workload": w["name"], "call": c["name"], "dtype": w["dtype"], "op": c["op"], "m": c["m"],
               "n": c["n"], "k": c["k"], "batch": c["batch"], "alpha": alpha, "beta": beta,
               "engine_ms_call": None, "torch_ms_call": None, "engine_ms_queued": None, "torch_ms_queued": None,
               "engine_host_us": None, "torch_host_us": None, "engine_err": None, "torch_err": None,
               "engine_ok": None, "torch_ok": None, "tol": None, "label": None, "path": None, "why": None,
               "device": self.device, "date": self.date, "error": None, "queued_n": None, "host_n": None,
               "seed": None}
        errors = []
        # The workload's and call's names seed the inputs: the same in every run, for both libraries.
        seed = zlib.crc32(f"{w['name']}/{c['name']}".encode())
        row["seed"] = seed
        tol = tolerance(w["dtype"], c["k"])
        row["tol"] = tol
        a, b, c0 = self.operands(c, dtype, seed)
        ref = torch.matmul(a.to(torch.float64), b.to(torch.float64))
        if alpha != 1:
            ref.mul_(alpha)
        if c0 is not None:
            ref.add_(c0.to(torch.float64), alpha=beta)
        refnorm = float(torch.linalg.vector_norm(ref))
        out = torch.empty(ref.shape, dtype=dtype, device=self.dev)

        def fresh():
            # beta = 0: NaN, which a kernel that reads C anyway carries into the result; else C0.
            if c0 is None:
                out.fill_(float("nan"))
            else:
                out.copy_(c0)

        def run_engine():
            engine.matmul(a, b, out, alpha=alpha, beta=beta)

        # torch: one library call each. alpha 1, beta 0: torch.matmul(out=) (cuBLAS gemm or strided
        # batched gemm, beta 0); else addmm_ / baddbmm_ in place, cuBLAS's gemm with alpha and beta on
        # C itself (beta = 0 ignores C's NaN, as the documentation of both says).
        if alpha == 1 and beta == 0:
            def run_torch():
                torch.matmul(a, b, out=out)
        elif c["batch"] > 1:
            def run_torch():
                out.baddbmm_(a, b, beta=beta, alpha=alpha)
        else:
            def run_torch():
                out.addmm_(a, b, beta=beta, alpha=alpha)

        libs = [("engine", run_engine)] + ([] if args.engine_only else [("torch", run_torch)])
        timed = []
        for lib, fn in libs:
            try:
                fresh()
                for _ in range(WARMUP):
                    fn()
                if lib == "engine" and hasattr(engine, "wait_compiles"):
                    # A kernel compiling in the background while cuBLAS stands in: wait for it, so the
                    # checked and timed calls are the kernel's own.
                    torch.cuda.synchronize()
                    engine.wait_compiles()
                    for _ in range(WARMUP):
                        fn()
                torch.cuda.synchronize()
                fresh()
                fn()
                torch.cuda.synchronize()
                err, ok = self.check(out, ref, refnorm, tol)
                row[f"{lib}_err"], row[f"{lib}_ok"] = err, ok
                if lib == "engine":
                    try:
                        ex = engine.explain(a, b, out)
                        row["label"] = ex.get("label") or ex.get("config")
                        row["path"] = ex.get("path")
                        row["why"] = ex.get("why")  # why that path (cuBLAS's: no kernel, still compiling...)
                    except Exception as e:  # noqa: BLE001 (said in the row, the timing still runs)
                        errors.append(f"engine.explain: {type(e).__name__}: {e}")
                row[f"{lib}_ms_call"] = self.per_call(fn)
                timed.append((lib, fn))
            except Exception as e:  # noqa: BLE001 (the row says it; the next library and call still run)
                errors.append(f"{lib}: {type(e).__name__}: {e}")
        try:
            # The slower library's time sizes both back-to-back batches, so both see the same N.
            slowest = max([row[f"{lib}_ms_call"] for lib, _ in timed] or [1.0])
            nq = max(QUEUED_MIN, min(QUEUED, int(args.budget_ms / slowest)))
            nh = max(HOST_MIN, min(HOST, int(args.budget_ms / slowest)))
            row["queued_n"], row["host_n"] = nq, nh
            for lib, fn in timed:
                row[f"{lib}_ms_queued"] = self.queued(fn, nq)
            for lib, fn in timed:
                row[f"{lib}_host_us"] = self.host(fn, nh)
        except Exception as e:  # noqa: BLE001
            errors.append(f"timing: {type(e).__name__}: {e}")
        row["error"] = "; ".join(errors) or None
        return row

    def run(self, docs, out_path):
        torch = self.torch
        self.device = torch.cuda.get_device_name(0)
        self.date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
        out_path = out_path or default_out(self.device, self.date)
        os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
        total = sum(len(d["calls"]) for d in docs)
        print(f"{self.device}, torch {torch.__version__}, engine {getattr(self.engine, '__version__', '?')} "
              f"({self.engine.__file__}); {total} calls; rows to {out_path}", flush=True)
        rows = []
        t0 = time.perf_counter()
        with open(out_path, "w") as f:
            for d in docs:
                for i, c in enumerate(d["calls"]):
                    try:
                        row = self.call(d, c)
                    except Exception as e:  # noqa: BLE001 (making inputs, the reference: the row says it)
                        row = {"workload": d["name"], "call": c["name"], "dtype": d["dtype"], "op": c["op"],
                               "m": c["m"], "n": c["n"], "k": c["k"], "batch": c["batch"], "alpha": c["alpha"],
                               "beta": c["beta"], "device": self.device, "date": self.date,
                               "error": f"{type(e).__name__}: {e}"}
                    finally:
                        torch.cuda.empty_cache()  # the next call's operands, not this one's, in memory
                    rows.append(row)
                    f.write(json.dumps(row) + "\n")
                    f.flush()  # an interrupted run keeps the rows it made
                    why = failed(row)
                    print(f"{len(rows):3d}/{total} {d['name']}[{i}] {c['name']} {c['op']} {shape(c)}: "
                          f"per call {_x(ratio(row, 'ms_call'))} queued {_x(ratio(row, 'ms_queued'))} "
                          f"(engine {row.get('engine_ms_call') or 0:.4f} ms, {row.get('path') or 'path ?'}) "
                          f"err {_err(row.get('engine_err'))}"
                          + (f" FAIL {why}" if why else ""), flush=True)
        print(f"\n{len(rows)} calls in {time.perf_counter() - t0:.0f} s; rows in {out_path}\n")
        print(table(rows))
        return 1 if any(failed(r) for r in rows) else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", help="workload files (default bench/workloads/*.json); with --table, the data file")
    ap.add_argument("--out", help="the rows (default bench/data/<gpu>-workload-<date>.jsonl)")
    ap.add_argument("--runs", type=int, default=20, help="per-call timing: the median of this many calls (20)")
    ap.add_argument("--budget-ms", type=float, default=100.0,
                    help="GPU time one back-to-back batch may queue; the 50 queued and 200 host calls shrink to fit (100)")
    ap.add_argument("--dry-run", action="store_true", help="check the files, list the calls; no torch, no GPU")
    ap.add_argument("--engine-only", action="store_true", help="time engine alone")
    ap.add_argument("--table", action="store_true", help="print the tables of a data file (FILES: one .jsonl)")
    args = ap.parse_args(argv)
    try:
        if args.table:
            if len(args.files) != 1:
                raise Invalid("--table: give one data file")
            print(table(read_rows(args.files[0])))
            return 0
        if args.runs < 1 or args.budget_ms <= 0:
            raise Invalid("--runs must be at least 1 and --budget-ms positive")
        files = args.files or sorted(glob.glob(os.path.join(WORKLOADS, "*.json")))
        if not files:
            raise Invalid(f"no workload files (none in {WORKLOADS})")
        docs = load_all(files)
    except Invalid as e:
        print(e, file=sys.stderr)
        return 2
    if args.dry_run:
        dry_run(docs)
        return 0

    try:
        import torch  # only here: --dry-run and --table run where torch is not installed
    except ImportError as e:
        print(f"a run needs torch ({e}); --dry-run and --table need neither torch nor a GPU", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("no CUDA device (torch.cuda.is_available() is False); --dry-run checks the files without one", file=sys.stderr)
        return 2
    # This checkout's package, over an installed one, unless PYTHONPATH names one (a copy to compare).
    if not any(os.path.isdir(os.path.join(p, "engine")) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p):
        sys.path.insert(0, os.path.join(ROOT, "python"))
    import engine
    # FP32 products in strict FP32 in cuBLAS, as engine's FP32 kernels are (TF32 would fail the check).
    # torch 2.9 replaced allow_tf32 with fp32_precision and warns at the old names; either says "off".
    if hasattr(torch.backends.cuda.matmul, "fp32_precision"):
        torch.backends.cuda.matmul.fp32_precision = "ieee"
        if hasattr(torch.backends.cudnn, "fp32_precision"):
            torch.backends.cudnn.fp32_precision = "ieee"
    else:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    # BF16 and FP16 products with FP32 sums in cuBLAS (CUBLAS_COMPUTE_32F, no reduced-precision
    # split-K reductions), the library's classes bf16 and f16.
    for name in ("allow_bf16_reduced_precision_reduction", "allow_fp16_reduced_precision_reduction"):
        if hasattr(torch.backends.cuda.matmul, name):
            setattr(torch.backends.cuda.matmul, name, False)
    return Runner(torch, engine, args).run(docs, args.out)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `| head`: the reader has what it wanted; no traceback at exit either
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
