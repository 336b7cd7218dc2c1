"""engine.matmul on torch bfloat16 and float16 tensors against torch.matmul (tests/gpu/half.sh). Run
from the repository root with PYTHONPATH=python and ENGINE_LIB=build/libengine.so.

Each dtype x ops NN, NT (x @ w.T, w stored n x k), TN, TT x shapes 1x1x1, 17x33x5, 127x255x33,
512x512x512, 1x11008x4096 and 4096x4096x4096, out allocated by engine; first call (cuBLAS GemmEx while
the kernel compiles), then after engine.wait_compiles() the engine's own kernel (explain's path must be
"engine", config hws (sm_90a) or h04_tuned: wisdom's half entries are the arch defaults and what a
tune added). The reference is
torch.matmul in float64 of the same tensors; the bound per element u_h |ref| (the result's one
rounding to the type, u_h = 2^-8 or 2^-11) + 2 (k + 2) 2^-24 sum |a||b| (FP32 sums) + 2^-24; NaN
never passes. Prints "ok"/"FAIL" lines and "N passed, N failed"."""

import os
import sys

import torch

import engine

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_torch import dev, report  # noqa: E402 (the counting of tests/gpu_torch.py)
import gpu_torch  # noqa: E402

UH = {torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11}


def check(name, a, b, c):
    k = a.shape[-1]
    ref = torch.matmul(a.double(), b.double())
    s = torch.matmul(a.double().abs(), b.double().abs())
    tol = UH[a.dtype] * ref.abs() + 2 * (k + 2) * 2.0 ** -24 * s + 2.0 ** -24
    err = (c.double() - ref).abs()
    bad = ~(err <= tol)  # NaN is bad
    if bad.any():
        i = bad.nonzero()[0].tolist()
        report(False, name, f"at {i}: {c[tuple(i)].item()!r}, float64 product {ref[tuple(i)].item()!r} ({int(bad.sum())} bad)")
        return False
    report(True, name)
    return True


def main():
    gen = torch.Generator(device=dev)
    gen.manual_seed(1)
    shapes = [(1, 1, 1), (17, 33, 5), (127, 255, 33), (512, 512, 512), (1, 11008, 4096), (4096, 4096, 4096)]
    for dtype in (torch.bfloat16, torch.float16):
        dn = str(dtype)[6:]
        for op in ("NN", "NT", "TN", "TT"):
            for m, n, k in shapes:
                name = f"{dn} {m}x{n}x{k} {op}"
                ta, tb = op[0] == "T", op[1] == "T"
                a = (torch.rand((k, m) if ta else (m, k), device=dev, generator=gen) * 2 - 1).to(dtype)
                b = (torch.rand((n, k) if tb else (k, n), device=dev, generator=gen) * 2 - 1).to(dtype)
                a = a.T if ta else a
                b = b.T if tb else b
                try:
                    c = engine.matmul(a, b)
                    torch.cuda.synchronize()
                except Exception as e:  # noqa: BLE001 (every failure is reported, the next case still runs)
                    report(False, name, f"{type(e).__name__}: {e}")
                    continue
                if c.dtype != dtype or tuple(c.shape) != (m, n):
                    report(False, name, f"out is {c.dtype} {tuple(c.shape)}")
                    continue
                check(name + " (first call)", a, b, c)
                engine.wait_compiles()
                info = engine.explain(a, b, c, wait=False)
                want = "engine"
                if info.get("path") != want:
                    report(False, name + " after wait_compiles", f"path {info.get('path')!r}, expected {want!r}: {info.get('why')}")
                    continue
                # A half-type config of the engine's: a tile (hmma, hws), or gemv at a few columns (it
                # takes bf16/f16 since session 17: wisdom's thin bf16/f16 entries name it).
                if want == "engine" and not any(t in str(info.get("config")) for t in ("h04_tuned", "hws_", "gemv")):
                    report(False, name + " after wait_compiles", f"config {info.get('config')!r}, expected h04_tuned, hws or gemv")
                    continue
                c.fill_(float("nan"))
                try:
                    engine.matmul(a, b, c)
                    torch.cuda.synchronize()
                except Exception as e:  # noqa: BLE001
                    report(False, name + f" ({want})", f"{type(e).__name__}: {e}")
                    continue
                check(name + f" ({want})", a, b, c)
    print(f"{gpu_torch.passed} passed, {gpu_torch.failed} failed")
    return 1 if gpu_torch.failed else 0


if __name__ == "__main__":
    sys.exit(main())
