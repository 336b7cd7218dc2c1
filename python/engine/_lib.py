"""libengine.so through ctypes: finding it, the signatures of engine.h, statuses as EngineError."""

import ctypes
import ctypes.util
import os
import sys

class EngineError(RuntimeError):
    """A libengine call failed: status is the engine_status name (the library's own,
    engine_status_string), the message engine's one line."""

    def __init__(self, status, message, name=None):
        self.code = status
        self.status = name or f"status {status}"
        super().__init__(f"{self.status}: {message}")


class _Options(ctypes.Structure):  # engine_options; size: sizeof it (engine.h's sized structs)
    _fields_ = [("size", ctypes.c_size_t), ("device", ctypes.c_int), ("cache_dir", ctypes.c_char_p), ("wisdom_dir", ctypes.c_char_p),
                ("user_wisdom_dir", ctypes.c_char_p), ("no_device", ctypes.c_int), ("arch", ctypes.c_int),
                ("sms", ctypes.c_int), ("device_name", ctypes.c_char_p), ("jit", ctypes.c_int)]

_JIT = {None: 0, "async": 1, "sync": 2}  # engine_jit
_WARM_PROGRESS = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_char_p)
# The library this package speaks to: engine_version() of libengine, major * 1000 + minor. A
# library of another major, or an older minor, lays out its structs differently (0.4: bfloat16, float16;
# 0.5: the structs open with their size).
_VERSION = (0, 5)


class _PlanDesc(ctypes.Structure):  # engine_plan_desc; size as _Options's
    _fields_ = [("size", ctypes.c_size_t), ("dtype", ctypes.c_int), ("order", ctypes.c_int), ("transa", ctypes.c_int), ("transb", ctypes.c_int),
                ("m", ctypes.c_int64), ("n", ctypes.c_int64), ("k", ctypes.c_int64), ("lda", ctypes.c_int64),
                ("ldb", ctypes.c_int64), ("ldc", ctypes.c_int64), ("batch", ctypes.c_int64),
                ("stride_a", ctypes.c_int64), ("stride_b", ctypes.c_int64), ("stride_c", ctypes.c_int64),
                ("alignment", ctypes.c_int)]


def _candidates(environ=None, here=None):
    """Where libengine.so is looked for, in order: (path or name for dlopen, where it comes from).
    ENGINE_LIB alone when it is set; else the library shipped beside the package (a wheel built from
    a tree with build/libengine.so carries it: setup.py), the repository's build/ when the package is
    run from a checkout, then the system's: an installed PREFIX/lib (make install) under this
    Python's prefix or /usr/local, and what the dynamic linker finds (ldconfig, LD_LIBRARY_PATH)."""
    environ = os.environ if environ is None else environ
    env = environ.get("ENGINE_LIB")
    if env:
        return [(env, "ENGINE_LIB")]  # named: that one or an error, never a surprise from elsewhere
    here = here or os.path.dirname(os.path.abspath(__file__))
    out = [(os.path.join(here, "libengine.so"), "beside the package")]
    root = os.path.dirname(os.path.dirname(here))
    if os.path.exists(os.path.join(root, "include", "engine.h")):  # python/engine in an engine checkout
        out.append((os.path.join(root, "build", "libengine.so"), "the checkout's build/"))
    for prefix in dict.fromkeys([sys.prefix, "/usr/local"]):
        out.append((os.path.join(prefix, "lib", "libengine.so"), "an installed PREFIX/lib"))
    out.append((ctypes.util.find_library("engine") or "libengine.so", "the dynamic linker's search"))
    return out


def _not_found(tried, environ=None):
    """The one line that says the library is missing, each place looked at and what to do."""
    environ = os.environ if environ is None else environ
    where = ([] if environ.get("ENGINE_LIB") else ["ENGINE_LIB (unset)"]) + tried
    return ("libengine.so not found; looked at: " + "; ".join(where) +
            ". Build it (make), then set ENGINE_LIB to its path, or pip install ./python from a tree that has "
            "build/libengine.so, or make install")


def _b(s):
    return s.encode() if isinstance(s, str) else s


class Library:
    def __init__(self, path=None):
        tried = []
        self.path = None
        for p, origin in [(path, "given")] if path else _candidates():
            if os.path.sep in p and not os.path.exists(p):
                tried.append(f"{p} ({origin}: no such file)")
                continue
            try:
                self.dll = ctypes.CDLL(p)
                self.path = p
                break
            except OSError as e:
                tried.append(f"{p} ({origin}: {e})")
        if self.path is None:
            raise OSError(_not_found(tried))
        d = self.dll
        if not hasattr(d, "engine_version"):
            raise OSError(f"{self.path} is libengine before 0.2 (no engine_version); this package needs "
                          f"{_VERSION[0]}.{_VERSION[1]}: rebuild it (make) or set ENGINE_LIB")
        d.engine_version.restype = ctypes.c_int
        v = d.engine_version()
        if v // 1000 != _VERSION[0] or v % 1000 < _VERSION[1]:
            raise OSError(f"{self.path} is libengine {v // 1000}.{v % 1000}; this package needs "
                          f"{_VERSION[0]}.{_VERSION[1]} or a later minor: rebuild it (make) or set ENGINE_LIB")
        # The structs this package lays out must be the library's: same size, else it says which.
        d.engine_struct_size.argtypes = [ctypes.c_char_p]
        d.engine_struct_size.restype = ctypes.c_size_t
        for name, ours in (("engine_options", _Options), ("engine_plan_desc", _PlanDesc)):
            theirs = d.engine_struct_size(name.encode())
            if theirs != ctypes.sizeof(ours):
                raise OSError(f"{self.path}: {name} is {theirs} bytes in the library, {ctypes.sizeof(ours)} in "
                              f"this package: they were built from different engine.h; rebuild (make) or set ENGINE_LIB")
        d.engine_status_string.argtypes = [ctypes.c_int]
        d.engine_status_string.restype = ctypes.c_char_p
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
        d.engine_gemm.argtypes = [vp, vp, ctypes.c_double, vp, vp, ctypes.c_double, vp, vp]
        d.engine_gemm.restype = st
        d.engine_gemm_describe.argtypes = [vp, ctypes.POINTER(_PlanDesc), vp, vp, vp, st, ctypes.c_char_p,
                                           ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
        d.engine_wait.argtypes = [vp]
        d.engine_warm.argtypes = [vp, st, _WARM_PROGRESS, vp]
        d.engine_warm.restype = st
        for f in (d.engine_create, d.engine_set_config, d.engine_plan_create, d.engine_gemm_describe, d.engine_wait):
            f.restype = st
        self._gemm = d.engine_gemm

    def _check(self, status, ctx):
        if status:
            raise EngineError(status, (self.dll.engine_last_error(ctx) or b"").decode(errors="replace"),
                              (self.dll.engine_status_string(status) or b"").decode())

    def create(self, device, cache_dir, wisdom_dir, user_wisdom_dir, no_device, arch, sms, device_name, jit=None):
        if jit not in _JIT:
            raise ValueError(f"jit: {jit!r} is not 'async', 'sync' or None")
        o = _Options(ctypes.sizeof(_Options), device, _b(cache_dir), _b(wisdom_dir), _b(user_wisdom_dir), int(bool(no_device)), arch, sms,
                     _b(device_name), _JIT[jit])
        ctx = ctypes.c_void_p()
        self._check(self.dll.engine_create(ctypes.byref(ctx), ctypes.byref(o)), None)
        return ctx

    def destroy(self, ctx):
        self.dll.engine_destroy(ctx)

    def set_config(self, ctx, json_or_path):
        self._check(self.dll.engine_set_config(ctx, _b(json_or_path)), ctx)

    def warm(self, ctx, jobs, progress):
        """engine_warm; progress(done, total, label) after each kernel (None: no calls)."""
        if progress:
            cb = _WARM_PROGRESS(lambda _u, done, total, label: progress(done, total, label.decode(errors="replace")))
        else:
            cb = _WARM_PROGRESS()  # NULL
        self._check(self.dll.engine_warm(ctx, int(jobs), cb, None), ctx)

    def wait(self, ctx):
        self._check(self.dll.engine_wait(ctx), ctx)

    @staticmethod
    def desc(call):
        """The engine_plan_desc of a _layout.Call (alignment 0: engine_gemm takes the pointers' own)."""
        return _PlanDesc(ctypes.sizeof(_PlanDesc), call.dtype, call.order, call.transa, call.transb, call.m, call.n,
                         call.k, call.lda, call.ldb, call.ldc, call.batch, call.stride_a, call.stride_b, call.stride_c, 0)

    def gemm(self, ctx, desc_addr, alpha, A, B, beta, C, stream):
        """engine_gemm with the desc at address desc_addr: eight arguments, the host path's whole cost."""
        status = self._gemm(ctx, desc_addr, alpha, A, B, beta, C, stream)
        if status:
            self._check(status, ctx)

    def describe(self, ctx, desc, A, B, C, wait):
        n = ctypes.c_size_t(0)
        size = 4096
        while True:
            buf = ctypes.create_string_buffer(size)
            self._check(self.dll.engine_gemm_describe(ctx, ctypes.byref(desc), A, B, C, int(bool(wait)), buf, size,
                                                      ctypes.byref(n)), ctx)
            if n.value < size:
                return buf.value.decode()
            size = n.value + 1


_lib = None


def library():
    """The process's Library, loaded on first use."""
    global _lib
    if _lib is None:
        _lib = Library()
    return _lib
