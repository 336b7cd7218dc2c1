"""engine's tuned GEMM kernels on CUDA arrays, through libengine (ctypes; no compiled extension).

    import torch, engine
    c = engine.matmul(a, b)            # a, b: CUDA float32/float64/bfloat16/float16 arrays (torch, cupy, DLPack)
    engine.explain(a, b)               # the path (engine or cuBLAS) and the config, as a dict

The transpose flags and leading dimensions come from the arrays' strides (a transposed view or a
sub-matrix costs no copy); 3-D arrays are strided batches; the work goes on the framework's current
stream unless stream= names one, and nothing is synchronised. A new problem's first calls run on
cuBLAS while its kernel compiles on a background thread (engine.wait_compiles() waits for those
compiles; ENGINE_JIT=sync compiles before the first call returns). libengine.so is looked for in
$ENGINE_LIB, next to this package, in the engine build tree (build/libengine.so), then the system's
library path."""

import ctypes
import json
import sys
import threading

from . import _layout
from ._lib import EngineError, library

__all__ = ["matmul", "explain", "warm", "wait_compiles", "Context", "EngineError"]
__version__ = "0.3.0"


def _stream_of(x, stream):
    """A stream handle (int) for the call: the one given, else the framework's current stream."""
    if stream is not None:
        return int(getattr(stream, "cuda_stream", getattr(stream, "ptr", stream)))
    mod = type(x).__module__.split(".")[0]
    if mod == "torch":
        import torch
        return int(torch.cuda.current_stream(x.device).cuda_stream)
    if mod == "cupy":
        import cupy
        return int(cupy.cuda.get_current_stream().ptr)
    cai = getattr(x, "__cuda_array_interface__", None)
    s = cai.get("stream") if isinstance(cai, dict) else None
    return 0 if s in (None, 1) else int(s)  # 1: the legacy default stream, which NULL names


def _empty_like(a, shape):
    mod = type(a).__module__.split(".")[0]
    if mod == "torch":
        import torch
        return torch.empty(shape, dtype=a.dtype, device=a.device)
    if mod == "cupy":
        import cupy
        return cupy.empty(shape, dtype=a.dtype)
    raise TypeError(f"out: required for arrays of type {type(a).__name__} (engine allocates torch and cupy arrays only)")


class Context:
    """One libengine context (engine_create): a GPU, its loaded kernels and their workspaces.
    no_device=True makes one without a GPU, for a target arch: explain() works, matmul() refuses.
    jit: "async" (a new problem's first calls run cuBLAS while its kernel compiles on a background
    thread), "sync" (the first call compiles), None (the library's default: async unless
    ENGINE_JIT=sync). Usable as a context manager: leaving it closes the context."""

    def __init__(self, device=0, *, cache_dir=None, wisdom_dir=None, user_wisdom_dir=None, no_device=False,
                 arch=0, sms=0, device_name=None, jit=None, lib=None):
        self._lib = lib or library()
        self._ctx = self._lib.create(device, cache_dir, wisdom_dir, user_wisdom_dir, no_device, arch, sms, device_name,
                                     jit)
        self.device = device
        # What repeats between calls with the same arrays' shapes, strides, dtype and device, worked
        # out once: the call's engine_plan_desc (kept alive here, passed by address) and C's shape.
        self._calls = {}
        self._explained = {}

    def close(self):
        if self._ctx:
            self._lib.destroy(self._ctx)
            self._ctx = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def set_config(self, json_or_path):
        """Force one config (a file path or JSON text) for every later call; None: wisdom again."""
        self._lib.set_config(self._ctx, json_or_path)
        self._explained.clear()

    def wait(self):
        """Block until the kernels the calls queued have compiled, and load them: the calls after it
        run the engine's kernels (engine_wait)."""
        self._lib.wait(self._ctx)

    def warm(self, jobs=0, progress=True):
        """Compile every wisdom entry for this GPU into the CUBIN cache, jobs threads at once (0: a
        core each), so that programs' first calls find their kernels on disk (engine_warm).
        progress: True prints one line on stderr, rewritten in place; a callable gets (done, total,
        label) after each kernel; False: silent."""
        if progress is True:
            def progress(done, total, label):
                end = "\n" if done == total else ""
                sys.stderr.write(f"\rwarm: {done}/{total} kernels {label[:60]:<60}{end}")
                sys.stderr.flush()
        self._lib.warm(self._ctx, jobs, progress or None)

    def _describe(self, a, b, out):
        """The call's engine_plan_desc, C's shape (when out is None) and the three Operands, from the
        arrays' interfaces (the slow path: __cuda_array_interface__ or DLPack)."""
        # torch refuses __cuda_array_interface__ on a tensor that requires grad (a Parameter): its
        # data, detached, is the same memory. engine's product takes no part in autograd.
        t = _torch_tensor()
        if t is not None:
            a, b, out = (x.detach() if isinstance(x, t) else x for x in (a, b, out))
        oa, ob = _layout.operand(a, "a"), _layout.operand(b, "b")
        shape = None
        if out is None:
            ma, mb = _layout.matrix(oa, "a"), _layout.matrix(ob, "b")
            batch = [x.shape[0] for x in (oa, ob) if len(x.shape) == 3]
            shape = tuple(batch[:1]) + (ma.rows, mb.cols)
            # C as matmul allocates it: row-major, packed, at an address any allocator's blocks have.
            dims = shape if len(shape) == 3 else (1,) + shape
            strides = (dims[1] * dims[2], dims[2], 1)[3 - len(shape):]
            oc = _layout.Operand(256, oa.dtype, shape, strides, oa.device)
        else:
            oc = _layout.operand(out, "out")
        return self._lib.desc(_layout.plan_call(oa, ob, oc)), shape, oa, ob, oc

    def matmul(self, a, b, out=None, *, alpha=1.0, beta=0.0, stream=None):
        """out = alpha * a @ b + beta * out, on the GPU; returns out (allocated when None, then beta
        must be 0)."""
        if out is None and beta != 0:
            raise ValueError("beta: must be 0 when out is not given (there is no C to scale)")
        t = _torch_tensor()
        if t is not None and isinstance(a, t) and isinstance(b, t) and (out is None or isinstance(out, t)):
            # torch: the key from the tensors' own accessors, no __cuda_array_interface__ dict per call.
            key = (a.dtype, a.device, a.shape, a.stride(), b.dtype, b.device, b.shape, b.stride(),
                   None if out is None else (out.dtype, out.device, out.shape, out.stride()))
            hit = self._calls.get(key)
            if hit is None:
                desc, shape, _, _, _ = self._describe(a, b, out)
                hit = self._calls[key] = (ctypes.addressof(desc), shape, a.device.index, desc)
            if out is None:
                out = a.new_empty(hit[1])
            s = _torch_stream(hit[2]) if stream is None else _stream_of(a, stream)
            self._lib.gemm(self._ctx, hit[0], alpha, a.data_ptr(), b.data_ptr(), beta, out.data_ptr(), s)
            return out
        desc, shape, oa, ob, oc = self._describe(a, b, out)
        if out is None:
            out = _empty_like(a, shape)
            oc = _layout.operand(out, "out")
        self._lib.gemm(self._ctx, ctypes.addressof(desc), alpha, oa.ptr, ob.ptr, beta, oc.ptr, _stream_of(a, stream))
        return out

    def explain(self, a, b, out=None, *, wait=True):
        """What matmul(a, b, out) runs, as a dict (engine_gemm_describe): "path" ("engine" or "cublas")
        and "why", then the plan (config, label, wisdom entry, origin of the CUBIN). wait: compile and
        load first, so the answer is the engine's kernel; False: what a call would run right now."""
        desc, _, oa, ob, oc = self._describe(a, b, out)
        key = (bytes(desc), oa.ptr % 256, ob.ptr % 256, oc.ptr % 256)
        info = self._explained.get(key)
        if info is None:
            info = json.loads(self._lib.describe(self._ctx, desc, oa.ptr, ob.ptr, oc.ptr, wait))
            if info.get("path") == "engine":  # final until set_config: kept
                self._explained[key] = info
        return dict(info)


_torch = None


def _torch_tensor():
    """torch.Tensor when the program has imported torch (never imported here), else None."""
    global _torch
    if not _torch:
        _torch = sys.modules.get("torch")
    return _torch.Tensor if _torch else None


def _torch_stream(index):
    """The current stream of CUDA device index as an int, without making a Stream object."""
    raw = getattr(_torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(index)
    return int(_torch.cuda.current_stream(index).cuda_stream)


_default = {}
_default_lock = threading.Lock()


def _context(x):
    op_dev = _layout._framework_device(x)
    d = op_dev if op_dev is not None else 0
    ctx = _default.get(d)
    if ctx is None:
        with _default_lock:  # one context per device, however many threads make the first call
            ctx = _default.get(d)
            if ctx is None:
                ctx = _default[d] = Context(d)
    return ctx


def matmul(a, b, out=None, *, alpha=1.0, beta=0.0, stream=None):
    """out = alpha * a @ b + beta * out with engine's kernels (see Context.matmul)."""
    return _context(a).matmul(a, b, out, alpha=alpha, beta=beta, stream=stream)


def explain(a, b, out=None, *, wait=True):
    """The path and config matmul(a, b, out) runs, with the wisdom entry behind it (a dict; see
    Context.explain)."""
    return _context(a).explain(a, b, out, wait=wait)


def warm(device=0, jobs=0, progress=True):
    """Compile every wisdom entry of GPU device into the CUBIN cache (see Context.warm)."""
    ctx = _default.get(device)
    if ctx is None:
        with _default_lock:
            ctx = _default.get(device)
            if ctx is None:
                ctx = _default[device] = Context(device)
    ctx.warm(jobs, progress)


def wait_compiles():
    """Block until every kernel the default contexts' calls queued has compiled, and load them."""
    for ctx in list(_default.values()):
        ctx.wait()
