#!/usr/bin/env python3
"""Peers in the same run (issue 40): engine's FP32 GEMM beside cuBLAS (strict FP32 and TF32) and an
autotuned Triton matmul (input_precision "tf32x3", "tf32", "ieee") at a list of shapes, one process,
the L2 flushed before every timed call, each result's error against an FP64 product of the same inputs.

  python3 bench/peers.py                          the default shapes (SHAPES below), every library
      --shapes 4096x4096x4096,128x4096x11008:NT   shapes MxNxK[:OP], OP one of NN (default), NT, TN
      --libs cublas,engine,triton_tf32x3          the libraries (default: every one of LIBS but engine_cli);
                                                  engine:CONFIG forces a config (a shipped name or a path)
      --cli                                       also build/engine bench --auto per shape (lib engine_cli)
      --runs R                                    timed calls per library and shape (20); the median
      --out DATA.jsonl                            the rows (default bench/data/<gpu>-peers-<date>.jsonl)
      ENGINE_ARGS="--wisdom DIR"                  more options for --cli's engine bench
  python3 bench/peers.py --dry-run                the shapes, libraries, Triton configs and CLI commands a
                                                  run would use (no torch, no GPU)
  python3 bench/peers.py --table DATA.jsonl       the tables a run prints at its end, from its data file

The libraries (a row each per shape; cuBLAS strict always runs: it is the yardstick):
  cublas          torch.matmul with fp32_precision "ieee" (allow_tf32 False): cuBLAS SGEMM       class f32
  cublas_tf32     torch.matmul with fp32_precision "tf32" (allow_tf32 True)                       class tf32
  engine          engine.matmul: wisdom's choice for the shape (SIMT or 3xTF32, class f32), after
                  engine.wait_compiles(), so the kernel and not cuBLAS standing in is timed        class f32
  engine:tc32_3x  a Context forced to configs/tc32_3x.json (3xTF32 on wgmma; sm_90a)              class f32
  engine:tc32_1x  a Context forced to configs/tc32_1x.json (TF32 on wgmma; sm_90a)                class tf32
  triton_tf32x3   the tutorial's matmul kernel (written out below), tl.dot input_precision
  triton_tf32     "tf32x3" / "tf32" / "ieee", each autotuned at each shape over TRITON_CONFIGS:
  triton_ieee     every config timed 5 times (L2 flushed), the fastest kept and timed like the rest
  engine_cli      (--cli) build/engine bench --auto at the shape in a process of its own: its own
                  timing (L2 flushed before each run of 5 launches) and its own error, in units of u
A library whose module is missing (torch, triton, the engine package) is skipped with one line saying
why (and a row with "skip"); without torch only engine_cli can run.

Timing: 3 warm-up calls, then R calls, each after writing a buffer of max(2 x L2, 256 MiB) (so no
operand is left in L2), between its own pair of events; the median (ms_min, ms_max the spread).
Inputs uniform in [-1, 1] from a generator seeded by the shape; the reference is torch.matmul in
FP64 (cuBLAS DGEMM) of the same FP32 inputs. Errors: err_fro = ||C - R||_F / ||R||_F and err_max =
max |C - R| / max |R| (R the reference); NaN or Inf in C gives null errors and an "error".

A row (one JSON line per library and shape, written as it ends): shape, m, n, k, op, lib, class,
ms, ms_min, ms_max, runs, tflops, err_fro, err_max, config (engine: explain's label; triton: the
config that won), path (engine: "engine" or "cublas", where engine handed the call to cuBLAS),
tuned (triton: every config tried, with its ms or why it failed), error, device, date, torch,
triton, seed; engine_cli's also cublas_ms (engine bench's cuBLAS beside it: the yardstick where no
cublas row is), err_max_u, cublas_err_max_u, chosen (wisdom's entry behind the config), args (its
rerun). A skipped library: {"lib", "skip": why, device, date}. The tables: per shape and library,
ms, TFLOP/s, time of strict SGEMM / time (x SGEMM, > 1 faster), errors; per library, the geometric
mean and minimum of x SGEMM; issue 40's ratios per shape (engine:tc32_3x over Triton tf32x3,
engine:tc32_1x over cuBLAS TF32).

Exit: 0 every library ran at every shape; 1 a row holds an error (the others still ran); 2 bad input
(an argument, a data file), one line.
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import time
import zlib

import workload  # bench/workload.py (this script's folder is on sys.path): its row reader and names
from workload import Invalid, geomean

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPS = ("NN", "NT", "TN")
# Squares, the transformer's layers (op NT: x @ W^T, W stored N x K), odd sides (no side a multiple
# of 16; the narrow and small-K shapes issue 42 found weakest).
SHAPES = ("2048x2048x2048", "4096x4096x4096", "8192x8192x8192",
          "128x4096x11008:NT", "2048x11008x4096:NT", "8192x4096x4096:NT",
          "4097x4095x4093", "1000x3000x777:NT", "318x2699x67", "129x11747x258")
LIBS = ("cublas", "cublas_tf32", "engine", "engine:tc32_3x", "engine:tc32_1x",
        "triton_tf32x3", "triton_tf32", "triton_ieee", "engine_cli")
DEFAULT_LIBS = tuple(x for x in LIBS if x != "engine_cli")
TRITON_PREC = {"triton_tf32x3": "tf32x3", "triton_tf32": "tf32", "triton_ieee": "ieee"}
CLASS = {"cublas": "f32", "cublas_tf32": "tf32", "engine": "f32", "triton_tf32x3": "f32", "triton_tf32": "tf32",
         "triton_ieee": "f32", "engine_cli": "f32"}
# Triton's autotuning space: (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages), the
# tutorial's list cut to what FP32 tiles fit in the H100's 227 KiB of shared memory
# (stages x (BM + BN) x BK x 4 bytes), with wider K steps and a narrow tile for small M.
TRITON_CONFIGS = ((128, 256, 32, 8, 8, 3), (256, 128, 32, 8, 8, 3), (128, 128, 32, 8, 4, 4),
                  (128, 128, 64, 8, 8, 3), (128, 64, 32, 8, 4, 4), (64, 128, 32, 8, 4, 4),
                  (64, 64, 64, 8, 4, 4), (32, 128, 64, 8, 4, 4))
TUNE_RUNS = 5
WARMUP = 3
FLUSH_MIN = 256 << 20


def parse_shapes(text):
    """'MxNxK[:OP],...' -> [{"shape", "m", "n", "k", "op"}]; Invalid names the first bad item."""
    out = []
    for item in text.split(","):
        item = item.strip()
        mt = re.fullmatch(r"([0-9]+)x([0-9]+)x([0-9]+)(?::([A-Z]+))?", item)
        if not mt:
            raise Invalid(f"--shapes: {json.dumps(item)} is not MxNxK or MxNxK:OP")
        m, n, k = (int(mt.group(i)) for i in (1, 2, 3))
        op = mt.group(4) or "NN"
        if min(m, n, k) < 1:
            raise Invalid(f"--shapes: {item}: every side must be at least 1")
        if op not in OPS:
            raise Invalid(f"--shapes: {item}: op must be one of {', '.join(OPS)}, got {op}")
        out.append({"shape": f"{m}x{n}x{k}", "m": m, "n": n, "k": k, "op": op})
    return out


def config_path(name):
    """engine:NAME's config file: a path as given, else configs/NAME.json."""
    if os.path.sep in name or name.endswith(".json"):
        return name
    return os.path.join(ROOT, "configs", name + ".json")


def parse_libs(text, cli):
    libs = []
    for name in (text.split(",") if text else DEFAULT_LIBS):
        name = name.strip()
        if name.startswith("engine:"):
            path = config_path(name[len("engine:"):])
            if not os.path.isfile(path):
                raise Invalid(f"--libs: {name}: no config {path}")
        elif name not in LIBS:
            raise Invalid(f"--libs: unknown library {json.dumps(name)} (known: {', '.join(LIBS)}, engine:CONFIG)")
        if name not in libs:
            libs.append(name)
    if "cublas" not in libs:
        libs.insert(0, "cublas")  # the yardstick of every ratio
    if cli and "engine_cli" not in libs:
        libs.append("engine_cli")
    return libs


def lib_class(lib):
    """A library's accuracy class: an engine config's "accuracy" key (f32 where it has none)."""
    if lib.startswith("engine:"):
        try:
            with open(config_path(lib[len("engine:"):])) as f:
                return json.load(f).get("accuracy", "f32")
        except (OSError, ValueError):
            return "?"
    return CLASS.get(lib, "?")


def flop(s):
    return 2.0 * s["m"] * s["n"] * s["k"]


def cli_command(engine_bin, op, shapes, runs):
    """engine bench --auto at shapes of one op; ENGINE_ARGS: more options (split at spaces)."""
    return [engine_bin, "bench", "--auto", "--dtype", "f32", "--op", op, "--shapes", ",".join(shapes),
            "--runs", str(runs), "--format", "jsonl"] + os.environ.get("ENGINE_ARGS", "").split()


def dry_run(shapes, libs, args):
    print(f"{len(shapes)} shapes, {len(libs)} libraries ({', '.join(libs)}), {args.runs} timed calls each")
    for s in shapes:
        mib = (s["m"] * s["k"] + s["k"] * s["n"] + s["m"] * s["n"]) * 4 / 2 ** 20
        print(f"  {s['shape']} {s['op']}: {flop(s) / 1e9:.1f} GFLOP, {mib:.0f} MiB in FP32 (and twice that in the FP64 reference)")
    for lib in libs:
        extra = f" ({config_path(lib[7:])})" if lib.startswith("engine:") else ""
        print(f"  {lib}: class {lib_class(lib)}{extra}")
    if any(lib in TRITON_PREC for lib in libs):
        print(f"triton configs (BM, BN, BK, GROUP_M, warps, stages), each timed {TUNE_RUNS} times per shape and precision:")
        for c in TRITON_CONFIGS:
            smem = c[5] * (c[0] + c[1]) * c[2] * 4
            print(f"  {triton_label(c)}: {smem // 1024} KiB of shared memory")
    if "engine_cli" in libs:
        for op in OPS:
            mine = [s["shape"] for s in shapes if s["op"] == op]
            if mine:
                print("cli: " + " ".join(cli_command(args.engine_bin, op, mine, args.runs)))


def triton_label(c):
    return f"BM={c[0]},BN={c[1]},BK={c[2]},GM={c[3]},W={c[4]},S={c[5]}"


# --- the tables, from rows (a run's, or a data file's) -----------------------------------------

def _f(v, fmt):
    return format(v, fmt) if v is not None else "-"


def speedups(rows):
    """{(shape, op): strict SGEMM ms}: the cublas rows', else (a run without torch) the cuBLAS time
    engine bench measured beside engine_cli."""
    base = {(r["shape"], r["op"]): r["cublas_ms"] for r in rows if r.get("lib") == "engine_cli" and r.get("cublas_ms")}
    base.update({(r["shape"], r["op"]): r["ms"] for r in rows if r.get("lib") == "cublas" and r.get("ms")})
    return base


def table(rows):
    out = []
    timed = [r for r in rows if not r.get("skip")]
    skipped = [r for r in rows if r.get("skip")]
    base = speedups(timed)
    devices = sorted({r.get("device") or "?" for r in rows})
    dates = sorted({r.get("date") or "?" for r in rows})
    order = []
    for r in timed:
        if (r["shape"], r["op"]) not in order:
            order.append((r["shape"], r["op"]))
    libs = []
    for r in timed:
        if r["lib"] not in libs:
            libs.append(r["lib"])
    out += [f"### peers: {len(order)} shapes ({', '.join(devices)}, {', '.join(dates)}; L2 flushed before every call, "
            "x SGEMM = strict cuBLAS time / time)", "",
            "| shape | op | library | class | ms | TFLOP/s | x SGEMM | rel. error Frobenius | max | config | error |",
            "|---|---|---|---|---:|---:|---:|---:|---:|---|---|"]
    for key in order:
        for r in [r for r in timed if (r["shape"], r["op"]) == key]:
            x = base[key] / r["ms"] if r.get("ms") and key in base else None
            cfg = (r.get("config") or "-") + (f" ({r['path']})" if r.get("path") and r["path"] != "engine" else "")
            err = (r.get("error") or "").replace("|", "/").replace("\n", " ")[:120]
            out.append(f"| {key[0]} | {key[1]} | {r['lib']} | {r.get('class', '?')} | {_f(r.get('ms'), '.4f')} | "
                       f"{_f(r.get('tflops'), '.2f')} | {_f(x, '.3f')} | {_f(r.get('err_fro'), '.1e')} | "
                       f"{_f(r.get('err_max'), '.1e')} | {cfg} | {err} |")
    out += ["", "### per library: x SGEMM over the shapes it ran (geometric mean, minimum), largest errors", "",
            "| library | class | shapes | geomean x SGEMM | min x SGEMM | at | max err Frobenius | max err max |",
            "|---|---|---:|---:|---:|---|---:|---:|"]
    for lib in libs:
        rs = [r for r in timed if r["lib"] == lib]
        xs = [(base[(r["shape"], r["op"])] / r["ms"], r) for r in rs if r.get("ms") and (r["shape"], r["op"]) in base]
        fro = [r["err_fro"] for r in rs if r.get("err_fro") is not None]
        mx = [r["err_max"] for r in rs if r.get("err_max") is not None]
        low = min(xs, key=lambda t: t[0]) if xs else None
        out.append(f"| {lib} | {rs[0].get('class', '?')} | {len(xs)} | {_f(geomean([x for x, _ in xs]) if xs else None, '.3f')} | "
                   f"{_f(low[0] if low else None, '.3f')} | {low[1]['shape'] + ' ' + low[1]['op'] if low else '-'} | "
                   f"{_f(max(fro) if fro else None, '.1e')} | {_f(max(mx) if mx else None, '.1e')} |")
    # Issue 40's targets: tc32_3x >= 1.1x Triton tf32x3 at every shape, tc32_1x >= 0.9x cuBLAS TF32.
    pairs = [("engine:tc32_3x", "triton_tf32x3"), ("engine", "triton_tf32x3"), ("engine:tc32_1x", "cublas_tf32"),
             ("engine:tc32_1x", "triton_tf32")]
    pairs = [(a, b) for a, b in pairs if a in libs and b in libs]
    if pairs:
        ms = {(r["shape"], r["op"], r["lib"]): r.get("ms") for r in timed}
        out += ["", "### issue 40's ratios: time of the second / time of the first (> 1: the first is faster)", "",
                "| shape | op | " + " | ".join(f"{a} over {b}" for a, b in pairs) + " |",
                "|---|---|" + "---:|" * len(pairs)]
        cols = [[] for _ in pairs]
        for key in order:
            cells = []
            for i, (a, b) in enumerate(pairs):
                ta, tb = ms.get(key + (a,)), ms.get(key + (b,))
                v = tb / ta if ta and tb else None
                if v:
                    cols[i].append(v)
                cells.append(_f(v, ".3f"))
            out.append(f"| {key[0]} | {key[1]} | " + " | ".join(cells) + " |")
        out.append("| geomean / min | | " + " | ".join(f"{geomean(c):.3f} / {min(c):.3f}" if c else "-" for c in cols) + " |")
    if skipped:
        out += [""] + [f"skipped: {r['lib']}: {r['skip']}" for r in skipped]
    return "\n".join(out)


ROW_KEYS = ("shape", "op", "lib")


def read_rows(path):
    """A data file's rows (workload.py's reader: a line that does not parse is said and skipped),
    each checked: a timed row's keys and numbers, a skipped library's lib and why."""
    rows = workload.read_rows(path, lambda r: ("lib", "skip") if r.get("skip") else ROW_KEYS, "peers")
    for i, r in enumerate(rows, 1):
        for k in ("ms", "err_fro", "err_max", "tflops"):
            v = r.get(k)
            if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0):
                raise Invalid(f"{path}: row {i} ({r.get('shape')} {r.get('lib')}): {k}: must be a non-negative number or null, got {json.dumps(v)}")
    return rows


# --- the run (torch from here on) ---------------------------------------------------------------

def make_triton_kernel(triton, tl):
    """The tutorial's matmul (grouped tile order for L2 reuse, masked loads at every edge), with
    tl.dot's input_precision a compile-time argument. C = A B, any strides, FP32 in and out."""

    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                      PRECISION: tl.constexpr):
        pid = tl.program_id(axis=0)
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        num_pid_in_group = GROUP_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
        offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
        offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
        offs_k = tl.arange(0, BLOCK_K)
        a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
        b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kk in range(0, tl.cdiv(K, BLOCK_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - kk * BLOCK_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - kk * BLOCK_K, other=0.0)
            acc = tl.dot(a, b, acc, input_precision=PRECISION)
            a_ptrs += BLOCK_K * stride_ak
            b_ptrs += BLOCK_K * stride_bk
        offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        tl.store(c_ptrs, acc, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))

    return matmul_kernel


def set_tf32(torch, on):
    """cuBLAS's FP32 mode for torch.matmul: TF32 (on) or strict. torch 2.9 replaced allow_tf32 with
    fp32_precision and warns at the old name."""
    m = torch.backends.cuda.matmul
    if hasattr(m, "fp32_precision"):
        m.fp32_precision = "tf32" if on else "ieee"
    else:
        m.allow_tf32 = on


class Runner:
    def __init__(self, torch, args, libs):
        self.torch, self.args, self.libs = torch, args, libs
        self.dev = torch.device("cuda")
        props = torch.cuda.get_device_properties(0)
        l2 = getattr(props, "L2_cache_size", 0) or 0
        # Writing it evicts everything an earlier call left in L2 (at least twice its size).
        self.flush = torch.empty(max(2 * l2, FLUSH_MIN), dtype=torch.int8, device=self.dev)
        self.device = torch.cuda.get_device_name(0)
        self.date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
        self.engine = self.triton = self.kernel = None
        self.skip = {}  # lib -> why it cannot run here
        self.contexts = {}  # engine:CONFIG -> its Context
        self.triton_version = None

    def setup(self):
        """Import what the libraries need; each one missing is a skip with its reason."""
        wants_engine = [lib for lib in self.libs if lib == "engine" or lib.startswith("engine:")]
        if wants_engine:
            # This checkout's package, over an installed one, unless PYTHONPATH names one.
            if not any(os.path.isdir(os.path.join(p, "engine")) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p):
                sys.path.insert(0, os.path.join(ROOT, "python"))
            try:
                import engine
                self.engine = engine
            except Exception as e:  # noqa: BLE001 (ImportError, or libengine not found)
                for lib in wants_engine:
                    self.skip[lib] = f"the engine package does not load ({type(e).__name__}: {e})"
            for lib in wants_engine:
                if lib.startswith("engine:") and self.engine:
                    try:
                        ctx = self.engine.Context(0)
                        ctx.set_config(config_path(lib[len("engine:"):]))
                        self.contexts[lib] = ctx
                    except Exception as e:  # noqa: BLE001
                        self.skip[lib] = f"{type(e).__name__}: {e}"
        wants_triton = [lib for lib in self.libs if lib in TRITON_PREC]
        if wants_triton:
            try:
                import triton
                import triton.language as tl
                self.triton = triton
                self.triton_version = triton.__version__
                self.kernel = make_triton_kernel(triton, tl)
            except Exception as e:  # noqa: BLE001
                for lib in wants_triton:
                    self.skip[lib] = f"triton is not installed or does not load ({type(e).__name__}: {e})"

    def time(self, fn, runs):
        """(median, min, max) ms of runs calls, each after the L2 flush, between its own events."""
        torch = self.torch
        for _ in range(WARMUP):
            fn()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
        stops = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
        for i in range(runs):
            self.flush.zero_()
            starts[i].record()
            fn()
            stops[i].record()
        torch.cuda.synchronize()
        ts = [a.elapsed_time(b) for a, b in zip(starts, stops)]
        return statistics.median(ts), min(ts), max(ts)

    def errors(self, out, ref, refnorm, refmax):
        """(err_fro, err_max), None for both where out holds NaN or Inf."""
        torch = self.torch
        if not bool(torch.isfinite(out).all()):
            return None, None
        d = out.to(torch.float64)
        d.sub_(ref)
        fro = float(torch.linalg.vector_norm(d)) / refnorm if refnorm else float(torch.linalg.vector_norm(d))
        mx = float(d.abs_().max()) / refmax if refmax else float(d.abs().max())
        return fro, mx

    def operands(self, s):
        torch = self.torch
        gen = torch.Generator(device=self.dev)
        seed = zlib.crc32(f"{s['shape']}:{s['op']}".encode())
        gen.manual_seed(seed)

        def uniform(*dims):
            return torch.rand(dims, dtype=torch.float32, device=self.dev, generator=gen).mul_(2).sub_(1)

        a = uniform(s["k"], s["m"]).t() if s["op"] == "TN" else uniform(s["m"], s["k"])
        b = uniform(s["n"], s["k"]).t() if s["op"] == "NT" else uniform(s["k"], s["n"])
        return a, b, seed

    def triton_fn(self, a, b, out, cfg, prec):
        bm, bn, bk, gm, warps, stages = cfg
        m, k = a.shape
        n = b.shape[1]
        grid = (self.triton.cdiv(m, bm) * self.triton.cdiv(n, bn),)
        kernel = self.kernel

        def fn():
            kernel[grid](a, b, out, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0),
                         out.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=gm, PRECISION=prec,
                         num_warps=warps, num_stages=stages)
        return fn

    def lib_fn(self, lib, a, b, out, row):
        """The call to time for lib (after its warm-up and whatever it needs first), with row's
        config and path filled in."""
        torch = self.torch
        if lib in ("cublas", "cublas_tf32"):
            row["config"] = "torch.matmul " + ("TF32" if lib == "cublas_tf32" else "strict FP32")
            return lambda: torch.matmul(a, b, out=out)
        if lib == "engine" or lib.startswith("engine:"):
            ctx = self.contexts.get(lib)
            call = ctx.matmul if ctx else self.engine.matmul
            fn = lambda: call(a, b, out)  # noqa: E731
            for _ in range(WARMUP):
                fn()
            torch.cuda.synchronize()
            # A kernel compiling in the background while cuBLAS stands in: wait for it.
            (ctx.wait if ctx else self.engine.wait_compiles)()
            ex = (ctx.explain if ctx else self.engine.explain)(a, b, out)
            row["config"] = ex.get("label") or ex.get("config")
            row["path"] = ex.get("path")
            return fn
        prec = TRITON_PREC[lib]
        tried, best = [], None
        for cfg in TRITON_CONFIGS:
            fn = self.triton_fn(a, b, out, cfg, prec)
            try:
                ms = self.time(fn, TUNE_RUNS)[0]
                tried.append([triton_label(cfg), round(ms, 5)])
                if best is None or ms < best[0]:
                    best = (ms, cfg, fn)
            except Exception as e:  # noqa: BLE001 (out of shared memory, a compile error: the next config)
                tried.append([triton_label(cfg), f"{type(e).__name__}: {str(e).splitlines()[0][:100] if str(e) else ''}"])
        row["tuned"] = tried
        if best is None:
            raise RuntimeError(f"no Triton config ran ({tried[0][1]})")
        row["config"] = triton_label(best[1])
        return best[2]

    def measure(self, s, lib, a, b, ref, refnorm, refmax):
        torch = self.torch
        row = {"shape": s["shape"], "m": s["m"], "n": s["n"], "k": s["k"], "op": s["op"], "lib": lib,
               "class": lib_class(lib), "ms": None, "ms_min": None, "ms_max": None, "runs": self.args.runs,
               "tflops": None, "err_fro": None, "err_max": None, "config": None, "path": None, "error": None,
               "device": self.device, "date": self.date, "torch": torch.__version__, "triton": self.triton_version}
        out = torch.empty((s["m"], s["n"]), dtype=torch.float32, device=self.dev)
        set_tf32(torch, lib == "cublas_tf32")
        try:
            fn = self.lib_fn(lib, a, b, out, row)
            out.fill_(float("nan"))  # a kernel that writes no element of C leaves a NaN there
            fn()
            torch.cuda.synchronize()
            row["err_fro"], row["err_max"] = self.errors(out, ref, refnorm, refmax)
            if row["err_fro"] is None:
                row["error"] = "NaN or Inf in the result"
            ms, lo, hi = self.time(fn, self.args.runs)
            row.update(ms=ms, ms_min=lo, ms_max=hi, tflops=flop(s) / (ms * 1e-3) / 1e12)
        except Exception as e:  # noqa: BLE001 (the row says it; the next library still runs)
            row["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:300]
        finally:
            set_tf32(torch, False)
        return row

    def shape_rows(self, s):
        torch = self.torch
        a, b, seed = self.operands(s)
        ref = torch.matmul(a.to(torch.float64), b.to(torch.float64))
        refnorm = float(torch.linalg.vector_norm(ref))
        refmax = float(ref.abs().max())
        rows = []
        for lib in self.libs:
            if lib in self.skip or lib == "engine_cli":
                continue
            row = self.measure(s, lib, a, b, ref, refnorm, refmax)
            row["seed"] = seed
            rows.append(row)
        del a, b, ref
        torch.cuda.empty_cache()
        return rows


def cli_rows(args, shapes, device, date):
    """engine_cli's rows: build/engine bench --auto per op, in a process of its own."""
    rows = []
    for op in OPS:
        mine = [s for s in shapes if s["op"] == op]
        if not mine:
            continue
        cmd = cli_command(args.engine_bin, op, [s["shape"] for s in mine], args.runs)
        got, cublas = {}, {}
        error = None
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            for line in p.stdout.splitlines():
                if line.startswith("{"):
                    r = json.loads(line)
                    key = f"{r['M']}x{r['N']}x{r['K']}"
                    if r.get("config") == "cublas":
                        cublas[key] = r.get("ms")
                    else:
                        got[key] = r
            if p.returncode not in (0, 1):
                error = f"engine bench exit {p.returncode}: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ''}"
        except (OSError, subprocess.SubprocessError, ValueError) as e:
            error = f"{type(e).__name__}: {e}"
        for s in mine:
            r = got.get(s["shape"])
            row = {"shape": s["shape"], "m": s["m"], "n": s["n"], "k": s["k"], "op": op, "lib": "engine_cli",
                   "class": r.get("class", "f32") if r else "f32", "ms": None, "ms_min": None, "ms_max": None,
                   "runs": args.runs, "tflops": None, "err_fro": None, "err_max": None, "config": None,
                   "path": None, "error": error, "device": device, "date": date,
                   "cublas_ms": cublas.get(s["shape"])}  # engine bench's own cuBLAS SGEMM, the same process
            if r and r.get("status") == "ok":
                row.update(ms=r["ms"], ms_min=r.get("ms_min"), ms_max=r.get("ms_max"), tflops=r.get("tflops"),
                           config=r.get("config"), chosen=r.get("chosen"), err_max_u=r.get("err_max_u"),
                           cublas_err_max_u=r.get("cublas_err_max_u"), pct_cublas=r.get("pct_cublas"),
                           args=r.get("args"))
            elif r:
                row["error"] = f"status {r.get('status')}"
            elif not error:
                row["error"] = "no row from engine bench"
            rows.append(row)
    return rows


def run(args, shapes, libs):
    try:
        import torch  # only here: --dry-run and --table run where torch is not installed
    except ImportError as e:
        torch, why = None, f"torch is not installed ({e})"
    else:
        why = None if torch.cuda.is_available() else "no CUDA device (torch.cuda.is_available() is False)"
    if why and "engine_cli" not in libs:
        print(f"{why}: nothing to run (--cli runs build/engine bench alone; --dry-run and --table need no GPU)",
              file=sys.stderr)
        return 2
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    if why:
        device = os.environ.get("DEVICE") or "?"  # DEVICE, when set, wins (as in bench/lib.sh)
        r = None if os.environ.get("DEVICE") else subprocess.run([args.engine_bin, "info"], capture_output=True, text=True) if os.access(args.engine_bin, os.X_OK) else None
        if r:
            mt = re.search(r"^device 0: (.*)$", r.stdout, re.M)
            device = mt.group(1) if mt else "?"
        runner = None
    else:
        runner = Runner(torch, args, libs)
        device = runner.device
        runner.setup()
    out_path = args.out or workload.default_out(device, date, "peers")
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    rows = []
    t0 = time.perf_counter()
    with open(out_path, "w") as f:
        def emit(row):
            rows.append(row)
            f.write(json.dumps(row) + "\n")
            f.flush()  # an interrupted run keeps the rows it made

        skips = dict(runner.skip) if runner else {lib: why for lib in libs if lib != "engine_cli"}
        print(f"{device}, torch {torch.__version__ if torch else '-'}, "
              f"triton {runner.triton_version if runner and runner.triton_version else '-'}; "
              f"{len(shapes)} shapes, libraries {', '.join(lib for lib in libs if lib not in skips)}; rows to {out_path}",
              flush=True)
        for lib, reason in skips.items():
            print(f"skipped: {lib}: {reason}", flush=True)
            emit({"lib": lib, "skip": reason, "device": device, "date": date})
        if "engine_cli" in libs:
            # First, while no tensor of this process holds GPU memory.
            for row in cli_rows(args, shapes, device, date):
                emit(row)
        if runner:
            for i, s in enumerate(shapes):
                try:
                    got = runner.shape_rows(s)
                except Exception as e:  # noqa: BLE001 (inputs or the reference failed: one row says it)
                    got = [{"shape": s["shape"], "m": s["m"], "n": s["n"], "k": s["k"], "op": s["op"], "lib": "cublas",
                            "class": "f32", "error": f"{type(e).__name__}: {e}".splitlines()[0][:300],
                            "device": device, "date": date}]
                    torch.cuda.empty_cache()
                base = next((r["ms"] for r in got if r["lib"] == "cublas" and r.get("ms")), None)
                for row in got:
                    emit(row)
                    x = f"{base / row['ms']:.3f}x SGEMM" if base and row.get("ms") else "-"
                    print(f"{i + 1:2d}/{len(shapes)} {s['shape']} {s['op']} {row['lib']:<15} "
                          f"{_f(row.get('tflops'), '8.2f')} TFLOP/s {x:>14} err {_f(row.get('err_fro'), '.1e')} "
                          f"{row.get('config') or ''}" + (f" ERROR {row['error']}" if row.get("error") else ""), flush=True)
    print(f"\n{len(rows)} rows in {time.perf_counter() - t0:.0f} s; rows in {out_path}\n")
    print(table(rows))
    return 1 if any(r.get("error") for r in rows) else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", default=",".join(SHAPES), help="MxNxK[:OP],... (default: SHAPES in this file)")
    ap.add_argument("--libs", help=f"libraries, comma-separated (default {','.join(DEFAULT_LIBS)})")
    ap.add_argument("--cli", action="store_true", help="also time build/engine bench --auto (lib engine_cli)")
    ap.add_argument("--engine-bin", default=os.environ.get("ENGINE_BIN", os.path.join(ROOT, "build", "engine")),
                    help="the engine command for --cli (default build/engine; ENGINE_BIN)")
    ap.add_argument("--runs", type=int, default=20, help="timed calls per library and shape (20)")
    ap.add_argument("--out", help="the rows (default bench/data/<gpu>-peers-<date>.jsonl)")
    ap.add_argument("--dry-run", action="store_true", help="what a run would do; no torch, no GPU")
    ap.add_argument("--table", metavar="DATA", help="print the tables of a data file (no torch, no GPU)")
    args = ap.parse_args(argv)
    try:
        if args.table:
            print(table(read_rows(args.table)))
            return 0
        if args.runs < 1:
            raise Invalid(f"--runs must be at least 1, got {args.runs}")
        shapes = parse_shapes(args.shapes)
        libs = parse_libs(args.libs, args.cli)
    except Invalid as e:
        print(e, file=sys.stderr)
        return 2
    if args.dry_run:
        dry_run(shapes, libs, args)
        return 0
    return run(args, shapes, libs)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
