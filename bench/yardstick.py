#!/usr/bin/env python3
"""Which cuBLAS is the yardstick? (issue 39: "the bench and the program disagree"). At each shape,
one run: engine bench --auto's own cuBLAS in pedantic math (ENGINE_CUBLAS_MATH=pedantic, the bench's
yardstick until 2026-11-28) and in cuBLAS's default math (the bench's since: engine/lab/blas.h says
what this script measured), and torch.matmul (TF32 off) on operands laid
out as the op says, each timed with the L2 flushed before every call; engine's kernel beside them.
If torch's time matches the default-math yardstick where it beats the pedantic one, the math mode
is the difference; if neither cuBLAS time matches torch's, it lives elsewhere (the call torch makes,
its workspace).

  python3 bench/yardstick.py [--shapes MxNxK:OP:DTYPE,...] [--runs R] [--out DATA.jsonl]
  python3 bench/yardstick.py --dry-run        the shapes and the engine commands (no GPU, no torch)

Default shapes: FP64 Gram products (TN, long K) and blocked-LU updates (NN) of bench/workloads/lu_f64.json,
FP32 layers of llama7b_f32.json. A row per shape: shape, op, dtype, cublas_pedantic_ms,
cublas_default_ms, torch_ms, engine_ms (--auto's kernel, pedantic run), engine_config, device, date.
Exit: 0; 1 a shape lost a measurement (the rest still ran); 2 bad input.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPES = ("32x32x262144:TN:f64,64x64x65536:TN:f64,128x128x65536:TN:f64,96x96x50000:TN:f64,"
          "7936x7936x256:NN:f64,3584x3584x512:NN:f64,"
          "128x4096x11008:NT:f32,2048x11008x4096:NT:f32,2048x2048x2048:NN:f32")
MATHS = ("pedantic", "default")


def parse_shapes(text):
    out = []
    for item in text.split(","):
        m = re.fullmatch(r"(\d+)x(\d+)x(\d+):(NN|NT|TN):(f32|f64)", item.strip())
        if not m or min(int(m.group(i)) for i in (1, 2, 3)) < 1:
            raise ValueError(f"--shapes: {item!r} is not MxNxK:OP:DTYPE (OP NN, NT or TN; DTYPE f32 or f64; sides >= 1)")
        out.append({"m": int(m.group(1)), "n": int(m.group(2)), "k": int(m.group(3)), "op": m.group(4),
                    "dtype": m.group(5), "shape": f"{m.group(1)}x{m.group(2)}x{m.group(3)}"})
    return out


def commands(engine, shapes, runs):
    """(dtype, op, math, argv) for each group of shapes of one dtype and op, in each math."""
    groups = {}
    for s in shapes:
        groups.setdefault((s["dtype"], s["op"]), []).append(s["shape"])
    return [(d, op, math, [engine, "bench", "--auto", "--dtype", d, "--op", op, "--shapes", ",".join(sh),
                           "--runs", str(runs), "--format", "jsonl"])
            for (d, op), sh in groups.items() for math in MATHS]


def engine_rows(cmds):
    """{(dtype, op, shape): {"cublas_<math>_ms", "engine_ms", "engine_config"}} from the runs."""
    got = {}
    for d, op, math, argv in cmds:
        p = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, ENGINE_CUBLAS_MATH=math),
                           timeout=600)
        if p.returncode not in (0, 1):
            print(f"yardstick: {' '.join(argv)} (ENGINE_CUBLAS_MATH={math}): exit {p.returncode}: "
                  f"{p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ''}", file=sys.stderr)
        for line in p.stdout.splitlines():
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            g = got.setdefault((d, op, f"{r['M']}x{r['N']}x{r['K']}"), {})
            if r.get("config") == "cublas":
                g[f"cublas_{math}_ms"] = r.get("ms")
            elif math == "pedantic" and r.get("status") == "ok":
                g["engine_ms"], g["engine_config"] = r.get("ms"), r.get("config")
    return got


def torch_ms(runner, torch, s, runs):
    dt = torch.float64 if s["dtype"] == "f64" else torch.float32
    g = torch.Generator(device="cuda")
    g.manual_seed(1)
    u = lambda *d: torch.rand(d, dtype=dt, device="cuda", generator=g).mul_(2).sub_(1)  # noqa: E731
    a = u(s["k"], s["m"]).t() if s["op"] == "TN" else u(s["m"], s["k"])
    b = u(s["n"], s["k"]).t() if s["op"] == "NT" else u(s["k"], s["n"])
    out = torch.empty(s["m"], s["n"], dtype=dt, device="cuda")
    return runner.time(lambda: torch.matmul(a, b, out=out), runs)[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--engine", default=os.path.join(ROOT, "build", "engine"))
    ap.add_argument("--out")
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args()
    try:
        shapes = parse_shapes(a.shapes)
        if a.runs < 1:
            raise ValueError("--runs must be at least 1")
    except ValueError as e:
        print(f"yardstick: {e}", file=sys.stderr)
        return 2
    cmds = commands(a.engine, shapes, a.runs)
    if a.dry_run:
        for s in shapes:
            print(f"{s['shape']} {s['op']} {s['dtype']}")
        for _, _, math, argv in cmds:
            print(f"ENGINE_CUBLAS_MATH={math} {' '.join(argv)}")
        return 0
    import torch  # only for a run
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import peers  # its L2-flushed timing (Runner.time)
    torch.backends.cuda.matmul.allow_tf32 = False
    runner = peers.Runner(torch, a, [])
    got = engine_rows(cmds)
    device = torch.cuda.get_device_name(0)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    out = a.out or os.path.join(ROOT, "bench", "data", f"{re.sub('[^a-z0-9]+', '-', device.lower()).strip('-')}-yardstick-{date}.jsonl")
    rc, rows = 0, []
    with open(out, "a") as f:
        for s in shapes:
            g = got.get((s["dtype"], s["op"], s["shape"]), {})
            row = {"shape": s["shape"], "op": s["op"], "dtype": s["dtype"],
                   "cublas_pedantic_ms": g.get("cublas_pedantic_ms"), "cublas_default_ms": g.get("cublas_default_ms"),
                   "torch_ms": torch_ms(runner, torch, s, a.runs), "engine_ms": g.get("engine_ms"),
                   "engine_config": g.get("engine_config"), "device": device, "date": date}
            rc |= any(row[k] is None for k in ("cublas_pedantic_ms", "cublas_default_ms", "engine_ms"))
            f.write(json.dumps(row) + "\n")
            rows.append(row)
    print(f"| shape | op | dtype | cuBLAS pedantic ms | cuBLAS default ms | torch ms | engine ms | x pedantic | x torch |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    x = lambda num, den: f"{num / den:.3f}" if num and den else "-"  # noqa: E731
    for r in rows:
        print(f"| {r['shape']} | {r['op']} | {r['dtype']} | {r['cublas_pedantic_ms'] or '-'} | {r['cublas_default_ms'] or '-'} "
              f"| {r['torch_ms']:.4f} | {r['engine_ms'] or '-'} | {x(r['cublas_pedantic_ms'], r['engine_ms'])} "
              f"| {x(r['torch_ms'], r['engine_ms'])} |")
    print(f"rows: {out}")
    return 1 if rc else 0


if __name__ == "__main__":
    sys.exit(main())
