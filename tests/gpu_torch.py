"""engine.matmul against torch.matmul on the GPU (tests/gpu.sh, library section). Run from the
repository root with PYTHONPATH=python and ENGINE_LIB=build/libengine.so.

Every op (a and b each contiguous or a transposed view) x odd shapes (1x1x1, 17x33x5, 127x129x131,
1000x1001x999) x beta 0 / 0.5 x float32 / float64, with out contiguous, a sub-matrix view (ld padded)
or a transposed view, and 3-D batches (one of them with a shared 2-D b); the reference is
torch.matmul in float64, the bound per element 2 (k + 2) u (|alpha| |a||b| + |beta| |c0|). Then the
framework's current stream is used (a side stream, no synchronisation by engine) and errors are
ValueErrors naming the argument. Then the same through DLPack alone: torch tensors wrapped in an
object with only __dlpack__/__dlpack_device__ (as a framework without __cuda_array_interface__ hands
them over), every op as transposed views, out contiguous or padded, and 3-D batches (3 and 64
products, b transposed); `python3 tests/gpu_torch.py dlpack` runs those alone. Prints "ok"/"FAIL" lines and "N passed, N failed"."""

import sys

import torch

import engine

U = {torch.float32: 2.0 ** -24, torch.float64: 2.0 ** -53}
dev = torch.device("cuda")
passed = failed = 0


def report(ok, name, why=""):
    global passed, failed
    passed += ok
    failed += not ok
    print(("ok " if ok else "FAIL ") + name + ("" if ok else ": " + why))
    sys.stdout.flush()


def run(name, f):
    """f() then a synchronisation; a failure (engine's EngineError, a CUDA error) is this case's FAIL."""
    try:
        f()
        torch.cuda.synchronize()
        return True
    except Exception as e:  # noqa: BLE001 (every failure is reported, the next case still runs)
        report(False, name, f"{type(e).__name__}: {e}")
        return False


def operand(rows, cols, dtype, trans, gen, batch=None):
    """A rows x cols operand, stored transposed (a .T view) when trans."""
    shape = (cols, rows) if trans else (rows, cols)
    if batch:
        shape = (batch,) + shape
    x = torch.rand(shape, dtype=dtype, device=dev, generator=gen) * 2 - 1
    return x.transpose(-1, -2) if trans else x


def output(rows, cols, dtype, kind, batch=None):
    """C as matmul writes it: contiguous, a sub-matrix of a wider one (ld padded by 3), or a .T view."""
    lead = (batch,) if batch else ()
    if kind == "pad":
        return torch.full(lead + (rows, cols + 3), float("nan"), dtype=dtype, device=dev)[..., :cols]
    if kind == "T":
        return torch.full(lead + (cols, rows), float("nan"), dtype=dtype, device=dev).transpose(-1, -2)
    return torch.full(lead + (rows, cols), float("nan"), dtype=dtype, device=dev)


class DLPackOnly:
    """A torch tensor seen through DLPack only: no __cuda_array_interface__, no .device, no module
    engine knows, so engine reads its pointer, shape and strides from the capsule."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None):
        return self.t.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def one_case(prefix, wrap, gen, dtype, mnk, ta, tb, beta, kind):
    """engine.matmul(wrap(a), wrap(b), wrap(c), alpha=1.25, beta) of one op, shape and out kind,
    checked against torch.matmul."""
    m, n, k = mnk
    a = operand(m, k, dtype, ta, gen)
    b = operand(k, n, dtype, tb, gen)
    c = output(m, n, dtype, kind)
    if beta:
        c.copy_(torch.rand((m, n), dtype=dtype, device=dev, generator=gen))
    c0 = c.clone()
    parent = c._base if kind == "pad" else None
    name = f"{prefix}{str(dtype)[6:]} {m}x{n}x{k} {'T' if ta else 'N'}{'T' if tb else 'N'} beta={beta} out={kind}"
    if not run(name, lambda: engine.matmul(wrap(a), wrap(b), wrap(c), alpha=1.25, beta=beta)):
        return
    check(name, a, b, c, 1.25, beta, c0, parent)
    # The first call ran cuBLAS while the kernel compiled (async jit); once the compiles are waited
    # for, the same call must run the engine's own kernel, and be right too.
    engine.wait_compiles()
    c.copy_(c0)
    path = engine.explain(wrap(a), wrap(b), wrap(c), wait=False).get("path")
    if path != "engine":
        report(False, name + " after wait_compiles", f"path {path!r}, not the engine's kernel")
        return
    if run(name + " (engine's kernel)", lambda: engine.matmul(wrap(a), wrap(b), wrap(c), alpha=1.25, beta=beta)):
        check(name + " (engine's kernel)", a, b, c, 1.25, beta, c0, parent)


def dlpack_cases(gen):
    """engine.matmul on DLPackOnly operands against torch.matmul (out given: engine allocates torch
    and cupy arrays only)."""
    assert not hasattr(DLPackOnly(torch.zeros(1)), "__cuda_array_interface__")
    for dtype in (torch.float32, torch.float64):
        for m, n, k in [(127, 129, 131)]:  # one odd shape of several tiles: each op and out is a CUBIN to compile
            for ta in (False, True):
                for tb in (False, True):
                    for beta, kind in ((0.0, "contig"), (0.5, "pad")):
                        one_case("dlpack ", DLPackOnly, gen, dtype, (m, n, k), ta, tb, beta, kind)
        for batch, (m, n, k) in ((3, (127, 129, 131)), (64, (128, 128, 128))):
            a = operand(m, k, dtype, False, gen, batch=batch)
            b = operand(k, n, dtype, True, gen, batch=batch)
            c = output(m, n, dtype, "contig", batch=batch)
            name = f"dlpack {str(dtype)[6:]} batch {batch} x {m}x{n}x{k} NT"
            if run(name, lambda: engine.matmul(DLPackOnly(a), DLPackOnly(b), DLPackOnly(c))):
                check(name, a, b, c, 1.0, 0.0, c)
    # What DLPack cannot give engine is refused by name: a host tensor.
    try:
        x = torch.rand((8, 8))
        engine.matmul(DLPackOnly(x), DLPackOnly(x), DLPackOnly(x))
        report(False, "dlpack: a host tensor is refused", "no error")
    except ValueError as e:
        report("a: DLPack device type 1 is not CUDA memory" in str(e), "dlpack: a host tensor is refused: " + str(e)[:80], str(e))


def check(name, a, b, c, alpha, beta, c0, parent=None):
    k = a.shape[-1]
    ref = alpha * torch.matmul(a.double(), b.double()) + (beta * c0.double() if beta else 0)
    bound = abs(alpha) * torch.matmul(a.double().abs(), b.double().abs()) + (abs(beta) * c0.double().abs() if beta else 0)
    tol = 2 * (k + 2) * U[a.dtype] * bound + 1e-300
    err = (c.double() - ref).abs()
    bad = ~(err <= tol)  # NaN is bad
    if bad.any():
        i = bad.nonzero()[0].tolist()
        report(False, name, f"at {i}: {c[tuple(i)].item()!r}, torch.matmul {ref[tuple(i)].item()!r} ({int(bad.sum())} bad)")
        return
    if parent is not None and not torch.isnan(parent[..., c.shape[-1]:]).all():
        report(False, name, "the padding beside out was written")
        return
    report(True, name)


def main():
    gen = torch.Generator(device=dev)
    gen.manual_seed(1)
    if sys.argv[1:] == ["dlpack"]:
        dlpack_cases(gen)
        print(f"{passed} passed, {failed} failed")
        return 1 if failed or not passed else 0
    shapes = [(1, 1, 1), (17, 33, 5), (127, 129, 131), (1000, 1001, 999)]
    for dtype in (torch.float32, torch.float64):
        for m, n, k in shapes:
            for ta in (False, True):
                for tb in (False, True):
                    for beta in (0.0, 0.5):
                        for kind in ("contig", "pad", "T"):
                            one_case("", lambda x: x, gen, dtype, (m, n, k), ta, tb, beta, kind)
        # Batches: 3-D a and b (b transposed), and a 2-D b shared by every product.
        for m, n, k in shapes[:3]:
            a = operand(m, k, dtype, False, gen, batch=3)
            b = operand(k, n, dtype, True, gen, batch=3)
            name = f"{str(dtype)[6:]} batch 3 x {m}x{n}x{k} NT, out allocated"
            got = []
            if run(name, lambda: got.append(engine.matmul(a, b))):
                check(name, a, b, got[0], 1.0, 0.0, got[0])
            b2 = operand(k, n, dtype, False, gen)
            c = output(m, n, dtype, "pad", batch=3)
            name = f"{str(dtype)[6:]} batch 3 x {m}x{n}x{k} shared b, out padded"
            if run(name, lambda: engine.matmul(a, b2, c)):
                check(name, a, b2, c, 1.0, 0.0, c, c._base)
    # The current stream: queued behind a slow product on a side stream, engine's work must wait for it.
    s = torch.cuda.Stream()
    try:
        with torch.cuda.stream(s):
            x = torch.rand((2048, 2048), device=dev, generator=gen)
            y = x @ x  # queued on s
            a = y[:64, :64]
            c = engine.matmul(a, a)
            ok = torch.allclose(c, a @ a, rtol=1e-4, atol=1e-3)
        torch.cuda.synchronize()
        report(ok, "engine.matmul on torch's current stream (a side stream) waits for the work queued there")
    except Exception as e:  # noqa: BLE001
        report(False, "engine.matmul on torch's current stream", f"{type(e).__name__}: {e}")
    # x @ layer.weight.T with an nn.Parameter (requires grad: torch refuses __cuda_array_interface__ on
    # it; engine reads its detached data, no autograd).
    try:
        w = torch.nn.Parameter(torch.rand((96, 80), device=dev, generator=gen))
        x = torch.rand((40, 80), device=dev, generator=gen)
        got = engine.matmul(x, w.T)
        torch.cuda.synchronize()
        check("x @ W.T with W an nn.Parameter", x, w.detach().T, got, 1.0, 0.0, got)
    except Exception as e:  # noqa: BLE001
        report(False, "x @ W.T with W an nn.Parameter", f"{type(e).__name__}: {e}")
    # Strides it cannot take: one clear ValueError naming the argument.
    x = torch.rand((64, 64), device=dev)
    try:
        engine.matmul(x[::2, ::2], x[:32, :32])
        report(False, "a view with two non-unit strides is refused", "no error")
    except ValueError as e:
        report("a: strides (128, 2)" in str(e), "a view with two non-unit strides is refused: " + str(e)[:80], str(e))
    try:
        info = engine.explain(x, x)
        report(bool(info.get("chosen_by") in ("wisdom", "forced") and info.get("config")),
               "engine.explain names the config: " + str(info.get("label")), repr(info))
    except Exception as e:  # noqa: BLE001
        report(False, "engine.explain", f"{type(e).__name__}: {e}")
    graph_cases(gen)
    dlpack_cases(gen)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


def graph_cases(gen):
    """engine.matmul inside torch.cuda.graph: a problem never called before is captured as cuBLAS (no
    compile, load or allocation inside a capture); after wait_compiles a new capture holds the engine's
    kernel. Each graph is replayed on fresh inputs and checked, with out= given and allocated."""
    for shape in ((320, 192, 96), (96, 160, 224)):
        m, n, k = shape
        for given in (True, False):
            a = torch.rand((m, k), device=dev, generator=gen)
            b = torch.rand((k, n), device=dev, generator=gen)
            c = torch.full((m, n), float("nan"), device=dev) if given else None
            for stage in ("before its kernel is built", "after wait_compiles"):
                if stage == "after wait_compiles":
                    engine.wait_compiles()
                name = f"graph capture {m}x{n}x{k} out={'given' if given else 'allocated'}, {stage}"
                try:
                    torch.cuda.synchronize()
                    g = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(g):
                        got = engine.matmul(a, b, c) if given else engine.matmul(a, b)
                    path = engine.explain(a, b, got, wait=False).get("path")
                    # Only the first capture of a shape meets it unbuilt; every one after wait_compiles
                    # must hold the engine's kernel.
                    want = "engine" if stage.startswith("after") else "cublas" if given else path
                    a.copy_(torch.rand((m, k), device=dev, generator=gen))
                    got.fill_(float("nan"))
                    g.replay()
                    torch.cuda.synchronize()
                    if path != want:
                        report(False, name, f"path {path!r}, expected {want!r}")
                        continue
                    check(name + f" (path {path})", a, b, got, 1.0, 0.0, got)
                except Exception as e:  # noqa: BLE001
                    report(False, name, f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    sys.exit(main())
