"""engine's tuned GEMM kernels on CUDA arrays, through libengine (ctypes; no compiled extension).

    import torch, engine
    c = engine.matmul(a, b)            # a, b: CUDA float32/float64 arrays (torch, cupy, DLPack)
    engine.explain(a, b)               # the config wisdom chose, as a dict

The transpose flags and leading dimensions come from the arrays' strides (a transposed view or a
sub-matrix costs no copy); 3-D arrays are strided batches; the work goes on the framework's current
stream unless stream= names one, and nothing is synchronised. libengine.so is looked for in
$ENGINE_LIB, next to this package, in the engine build tree (build/libengine.so), then the system's
library path."""

import json

from . import _layout
from ._lib import EngineError, library

__all__ = ["matmul", "explain", "Context", "EngineError"]
__version__ = "0.1.0"


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
    no_device=True makes one without a GPU, for a target arch: explain() works, matmul() refuses."""

    def __init__(self, device=0, *, cache_dir=None, wisdom_dir=None, user_wisdom_dir=None, no_device=False,
                 arch=0, sms=0, device_name=None, lib=None):
        self._lib = lib or library()
        self._ctx = self._lib.create(device, cache_dir, wisdom_dir, user_wisdom_dir, no_device, arch, sms, device_name)
        self.device = device

    def close(self):
        if self._ctx:
            self._lib.destroy(self._ctx)
            self._ctx = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def set_config(self, json_or_path):
        """Force one config (a file path or JSON text) for every later call; None: wisdom again."""
        self._lib.set_config(self._ctx, json_or_path)

    def _call(self, a, b, out):
        oa, ob = _layout.operand(a, "a"), _layout.operand(b, "b")
        if out is None:
            ma, mb = _layout.matrix(oa, "a"), _layout.matrix(ob, "b")
            batch = [x.shape[0] for x in (oa, ob) if len(x.shape) == 3]
            shape = tuple(batch[:1]) + (ma.rows, mb.cols)
            return oa, ob, shape
        return oa, ob, None

    def matmul(self, a, b, out=None, *, alpha=1.0, beta=0.0, stream=None):
        """out = alpha * a @ b + beta * out, on the GPU; returns out (allocated when None, then beta
        must be 0)."""
        oa, ob, shape = self._call(a, b, out)
        if out is None:
            if beta != 0:
                raise ValueError("beta: must be 0 when out is not given (there is no C to scale)")
            out = _empty_like(a, shape)
        oc = _layout.operand(out, "out")
        call = _layout.plan_call(oa, ob, oc)
        self._lib.gemm(self._ctx, call, alpha, oa.ptr, ob.ptr, beta, oc.ptr, _stream_of(a, stream))
        return out

    def explain(self, a, b, out=None):
        """The plan matmul(a, b, out) would run, as a dict (engine_plan_describe)."""
        oa, ob, shape = self._call(a, b, out)
        if out is None:
            # The result's layout as matmul would allocate it: row-major, packed.
            dims = shape if len(shape) == 3 else (1,) + shape
            strides = (dims[1] * dims[2], dims[2], 1)[3 - len(shape):]
            oc = _layout.Operand(0, oa.dtype, shape, strides, oa.device)
        else:
            oc = _layout.operand(out, "out")
        call = _layout.plan_call(oa, ob, oc)
        ptrs = [oa.ptr, ob.ptr] + ([oc.ptr] if out is not None else [])
        return json.loads(self._lib.describe(self._ctx, call, _alignment(ptrs, call.dtype)))


def _alignment(ptrs, dtype):
    """The alignment class of the pointers, as libengine's calls work it out (apiarg_alignment)."""
    es = 8 if dtype == _layout.F64 else 4
    a = 16
    allp = 16
    for p in ptrs:
        allp |= p
    while a > es and allp % a:
        a //= 2
    return a


_default = {}


def _context(x):
    op_dev = _layout._framework_device(x)
    dev = op_dev if op_dev is not None else 0
    if dev not in _default:
        _default[dev] = Context(dev)
    return _default[dev]


def matmul(a, b, out=None, *, alpha=1.0, beta=0.0, stream=None):
    """out = alpha * a @ b + beta * out with engine's kernels (see Context.matmul)."""
    return _context(a).matmul(a, b, out, alpha=alpha, beta=beta, stream=stream)


def explain(a, b, out=None):
    """The config matmul(a, b, out) would run, with the wisdom entry behind it (a dict)."""
    return _context(a).explain(a, b, out)
