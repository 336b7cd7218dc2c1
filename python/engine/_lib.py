"""libengine.so through ctypes: finding it, the signatures of engine.h, statuses as EngineError."""

import ctypes
import ctypes.util
import os

_STATUS = ["ENGINE_SUCCESS", "ENGINE_ERROR_INVALID_ARGUMENT", "ENGINE_ERROR_MISALIGNED",
           "ENGINE_ERROR_DTYPE_MISMATCH", "ENGINE_ERROR_NO_GPU", "ENGINE_ERROR_CONFIG",
           "ENGINE_ERROR_NOT_SUPPORTED", "ENGINE_ERROR_COMPILE", "ENGINE_ERROR_CUDA"]


class EngineError(RuntimeError):
    """A libengine call failed: status is the engine_status name, the message engine's one line."""

    def __init__(self, status, message):
        self.status = _STATUS[status] if 0 <= status < len(_STATUS) else f"status {status}"
        super().__init__(f"{self.status}: {message}")


class _Options(ctypes.Structure):  # engine_options
    _fields_ = [("device", ctypes.c_int), ("cache_dir", ctypes.c_char_p), ("wisdom_dir", ctypes.c_char_p),
                ("user_wisdom_dir", ctypes.c_char_p), ("no_device", ctypes.c_int), ("arch", ctypes.c_int),
                ("sms", ctypes.c_int), ("device_name", ctypes.c_char_p)]


class _PlanDesc(ctypes.Structure):  # engine_plan_desc
    _fields_ = [("dtype", ctypes.c_int), ("order", ctypes.c_int), ("transa", ctypes.c_int), ("transb", ctypes.c_int),
                ("m", ctypes.c_int64), ("n", ctypes.c_int64), ("k", ctypes.c_int64), ("lda", ctypes.c_int64),
                ("ldb", ctypes.c_int64), ("ldc", ctypes.c_int64), ("batch", ctypes.c_int64),
                ("stride_a", ctypes.c_int64), ("stride_b", ctypes.c_int64), ("stride_c", ctypes.c_int64),
                ("alignment", ctypes.c_int)]


def _candidates():
    env = os.environ.get("ENGINE_LIB")
    if env:
        return [env]  # named: that one or an error, never a surprise from elsewhere
    here = os.path.dirname(os.path.abspath(__file__))
    out = [os.path.join(here, "libengine.so"), os.path.join(here, "..", "..", "build", "libengine.so")]
    found = ctypes.util.find_library("engine")
    return out + [found or "libengine.so"]


def _b(s):
    return s.encode() if isinstance(s, str) else s


class Library:
    def __init__(self, path=None):
        tried = []
        self.path = None
        for p in [path] if path else _candidates():
            if os.path.sep in p and not os.path.exists(p):
                tried.append(p + " (no such file)")
                continue
            try:
                self.dll = ctypes.CDLL(p)
                self.path = p
                break
            except OSError as e:
                tried.append(f"{p} ({e})")
        if self.path is None:
            raise OSError("libengine.so not found; set ENGINE_LIB to its path (tried: " + "; ".join(tried) + ")")
        d = self.dll
        vp, i64, st = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int
        d.engine_create.argtypes = [ctypes.POINTER(vp), ctypes.POINTER(_Options)]
        d.engine_destroy.argtypes = [vp]
        d.engine_set_config.argtypes = [vp, ctypes.c_char_p]
        d.engine_last_error.argtypes = [vp]
        d.engine_last_error.restype = ctypes.c_char_p
        d.engine_plan_create.argtypes = [vp, ctypes.POINTER(_PlanDesc), ctypes.POINTER(vp)]
        d.engine_plan_describe.argtypes = [vp, ctypes.c_char_p, ctypes.c_size_t]
        d.engine_plan_describe.restype = ctypes.c_size_t
        d.engine_plan_destroy.argtypes = [vp]
        for name, real in (("engine_sgemm_strided_batched", ctypes.c_float),
                           ("engine_dgemm_strided_batched", ctypes.c_double)):
            f = getattr(d, name)
            f.argtypes = [vp, st, st, st, i64, i64, i64, real, vp, i64, i64, vp, i64, i64, real, vp, i64, i64, i64, vp]
            f.restype = st
        for f in (d.engine_create, d.engine_set_config, d.engine_plan_create):
            f.restype = st

    def _check(self, status, ctx):
        if status:
            raise EngineError(status, (self.dll.engine_last_error(ctx) or b"").decode(errors="replace"))

    def create(self, device, cache_dir, wisdom_dir, user_wisdom_dir, no_device, arch, sms, device_name):
        o = _Options(device, _b(cache_dir), _b(wisdom_dir), _b(user_wisdom_dir), int(bool(no_device)), arch, sms,
                     _b(device_name))
        ctx = ctypes.c_void_p()
        self._check(self.dll.engine_create(ctypes.byref(ctx), ctypes.byref(o)), None)
        return ctx

    def destroy(self, ctx):
        self.dll.engine_destroy(ctx)

    def set_config(self, ctx, json_or_path):
        self._check(self.dll.engine_set_config(ctx, _b(json_or_path)), ctx)

    def gemm(self, ctx, call, alpha, A, B, beta, C, stream):
        f = self.dll.engine_dgemm_strided_batched if call.dtype == 1 else self.dll.engine_sgemm_strided_batched
        self._check(f(ctx, call.order, call.transa, call.transb, call.m, call.n, call.k, alpha, A, call.lda,
                      call.stride_a, B, call.ldb, call.stride_b, beta, C, call.ldc, call.stride_c, call.batch,
                      stream), ctx)

    def describe(self, ctx, call, alignment):
        desc = _PlanDesc(call.dtype, call.order, call.transa, call.transb, call.m, call.n, call.k, call.lda,
                         call.ldb, call.ldc, call.batch, call.stride_a, call.stride_b, call.stride_c, alignment)
        plan = ctypes.c_void_p()
        self._check(self.dll.engine_plan_create(ctx, ctypes.byref(desc), ctypes.byref(plan)), ctx)
        try:
            n = self.dll.engine_plan_describe(plan, None, 0)
            buf = ctypes.create_string_buffer(n + 1)
            self.dll.engine_plan_describe(plan, buf, n + 1)
            return buf.value.decode()
        finally:
            self.dll.engine_plan_destroy(plan)


_lib = None


def library():
    """The process's Library, loaded on first use."""
    global _lib
    if _lib is None:
        _lib = Library()
    return _lib
