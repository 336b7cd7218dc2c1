"""What a CUDA array is to libengine: its pointer, dtype, shape and strides (from
__cuda_array_interface__ or DLPack), and how a matrix with those strides is passed to a CBLAS-shaped
call (storage order, transpose flag, leading dimension, batch stride). Needs no GPU and no library:
the CPU tests run it on plain dicts."""

import ctypes
from collections import namedtuple

F32, F64, BF16, F16 = 0, 1, 2, 3  # engine_dtype
DTYPE_NAMES = {F32: "float32", F64: "float64", BF16: "bfloat16", F16: "float16"}
ROW_MAJOR, COL_MAJOR = 101, 102
NO_TRANS, TRANS = 111, 112

# ptr: device address; dtype: F32/F64/BF16/F16; shape and strides (in elements) of every dimension;
# device: CUDA ordinal or None when the array does not say.
Operand = namedtuple("Operand", "ptr dtype shape strides device")

# kind: "R" (rows contiguous: row-major with ld between rows) or "C" (columns contiguous);
# ld: elements between rows ("R") or columns ("C"); stride: elements between the matrices of a batch.
Matrix = namedtuple("Matrix", "rows cols kind ld stride")

# (bfloat16 has no typestr: torch refuses __cuda_array_interface__ for it, and DLPack carries it.)
_TYPESTR = {"<f4": F32, "=f4": F32, "f4": F32, "<f8": F64, "=f8": F64, "f8": F64, "<f2": F16, "=f2": F16, "f2": F16}
_ITEMSIZE = {F32: 4, F64: 8, BF16: 2, F16: 2}


def _from_cai(cai, name):
    typestr = cai.get("typestr")
    if typestr not in _TYPESTR:
        raise TypeError(f"{name}: dtype {typestr!r} is not supported (float32 '<f4', float64 '<f8' or float16 '<f2')")
    dtype = _TYPESTR[typestr]
    shape = tuple(int(s) for s in cai["shape"])
    data = cai.get("data")
    if not isinstance(data, tuple) or len(data) != 2:
        raise ValueError(f"{name}: __cuda_array_interface__ 'data' must be (pointer, read_only)")
    ptr = int(data[0]) if data[0] is not None else 0
    itemsize = _ITEMSIZE[dtype]
    strides = cai.get("strides")
    if strides is None:  # C-contiguous
        el, acc = [], 1
        for s in reversed(shape):
            el.append(acc)
            acc *= max(s, 1)
        strides_el = tuple(reversed(el))
    else:
        strides_el = []
        for i, sb in enumerate(strides):
            if sb % itemsize:
                raise ValueError(f"{name}: stride {sb} bytes of dimension {i} is not a whole number of "
                                 f"{itemsize}-byte elements")
            strides_el.append(sb // itemsize)
        strides_el = tuple(strides_el)
    return Operand(ptr, dtype, shape, strides_el, None)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DL_CUDA, _DL_CUDA_MANAGED, _DL_FLOAT, _DL_BFLOAT = 2, 13, 2, 4
_DL_DTYPES = {(_DL_FLOAT, 32): F32, (_DL_FLOAT, 64): F64, (_DL_FLOAT, 16): F16, (_DL_BFLOAT, 16): BF16}


def _from_dlpack(x, name):
    """Read a DLPack capsule's tensor (the capsule is left unconsumed: its destructor frees it, the
    array itself stays alive in the caller's hands)."""
    cap = x.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    t = _DLTensor.from_address(get(cap, b"dltensor"))
    if t.device.device_type not in (_DL_CUDA, _DL_CUDA_MANAGED):
        raise ValueError(f"{name}: DLPack device type {t.device.device_type} is not CUDA memory")
    dtype = _DL_DTYPES.get((t.dtype.code, t.dtype.bits))
    if dtype is None or t.dtype.lanes != 1:
        raise TypeError(f"{name}: DLPack dtype (code {t.dtype.code}, {t.dtype.bits} bits) is not float32, float64, "
                        f"bfloat16 or float16")
    shape = tuple(t.shape[i] for i in range(t.ndim))
    if t.strides:
        strides = tuple(t.strides[i] for i in range(t.ndim))
    else:
        el, acc = [], 1
        for s in reversed(shape):
            el.append(acc)
            acc *= max(s, 1)
        strides = tuple(reversed(el))
    return Operand((t.data or 0) + t.byte_offset, dtype, shape, strides, t.device.device_id)


def _framework_device(x):
    dev = getattr(x, "device", None)
    for attr in ("index", "id"):  # torch.device.index, cupy.cuda.Device.id
        v = getattr(dev, attr, None)
        if isinstance(v, int):
            return v
    return None


def operand(x, name):
    """The Operand of a CUDA array x; name (a, b, out) is used in messages."""
    try:  # older torch raises TypeError for a dtype the interface has no name for (bfloat16): DLPack has
        cai = getattr(x, "__cuda_array_interface__", None) if not isinstance(x, dict) else x
    except TypeError:
        cai = None
    # torch 2.11 gives bfloat16 an interface with the opaque typestr '<V2': where the interface names
    # no type we know and DLPack is there, DLPack (which names bfloat16) decides.
    if cai is not None and (cai.get("typestr") in _TYPESTR or not hasattr(x, "__dlpack__")):
        op = _from_cai(cai, name)
        return op._replace(device=_framework_device(x))
    if hasattr(x, "__dlpack__"):
        return _from_dlpack(x, name)
    raise TypeError(f"{name}: {type(x).__name__} is not a CUDA array (it has neither __cuda_array_interface__ nor __dlpack__)")


def matrix(op, name):
    """How the last two dimensions of op are passed: rows and columns contiguous ("R") or columns
    contiguous ("C"), with the leading dimension; the batch stride of a 3-D array."""
    if len(op.shape) not in (2, 3):
        raise ValueError(f"{name}: {len(op.shape)}-D array; matmul takes 2-D matrices or 3-D batches")
    r, c = op.shape[-2:]
    sr, sc = op.strides[-2:]
    stride = op.strides[0] if len(op.shape) == 3 else 0
    if len(op.shape) == 3 and op.shape[0] > 1 and stride < 0:
        raise ValueError(f"{name}: batch stride {stride} elements is negative")
    # A dimension of length 1 has no step to speak of: its stride is whatever fits.
    if c <= 1 or r <= 1:
        if c <= 1 and r <= 1:
            return Matrix(r, c, "R", max(c, 1), stride)
        if r <= 1 and sc == 1:
            return Matrix(r, c, "R", max(c, 1), stride)
        if c <= 1 and sr == 1:
            return Matrix(r, c, "C", max(r, 1), stride)
        if r <= 1 and sc >= 1:
            return Matrix(r, c, "C", sc, stride)
        if c <= 1 and sr >= 1:
            return Matrix(r, c, "R", sr, stride)
    elif sc == 1 and sr >= c:
        return Matrix(r, c, "R", sr, stride)
    elif sr == 1 and sc >= r:
        return Matrix(r, c, "C", sc, stride)
    raise ValueError(f"{name}: strides {tuple(op.strides)} (elements) of a {tuple(op.shape)} array cannot be "
                     f"passed with a leading dimension: one of the last two strides must be 1 and the other at "
                     f"least the length of that row or column (make it contiguous first)")


# The call: order, transa, transb, m, n, k, lda, ldb, ldc, batch, stride_a, stride_b, stride_c.
Call = namedtuple("Call", "dtype order transa transb m n k lda ldb ldc batch stride_a stride_b stride_c")


def plan_call(a, b, out, names=("a", "b", "out")):
    """The CBLAS-shaped call computing out = a @ b for three Operands (out may have the shape only).
    C's storage decides the order; each operand stored the other way is passed transposed."""
    dt = a.dtype
    for op, nm in ((b, names[1]), (out, names[2])):
        if op.dtype != dt:
            raise TypeError(f"{nm}: dtype {DTYPE_NAMES[op.dtype]} differs from {names[0]}'s {DTYPE_NAMES[dt]}")
    ma, mb, mc = matrix(a, names[0]), matrix(b, names[1]), matrix(out, names[2])
    if ma.cols != mb.rows:
        raise ValueError(f"{names[1]}: {mb.rows} rows do not match the {ma.cols} columns of {names[0]}")
    if (mc.rows, mc.cols) != (ma.rows, mb.cols):
        raise ValueError(f"{names[2]}: shape {mc.rows} x {mc.cols}, expected {ma.rows} x {mb.cols}")
    batches = {len(x.shape) == 3 and x.shape[0] for x in (a, b, out)} - {False}
    batch = 1
    if batches:
        if len(out.shape) != 3:
            raise ValueError(f"{names[2]}: 2-D, but an operand is a 3-D batch; out must be 3-D too")
        batch = out.shape[0]
        for x, nm in ((a, names[0]), (b, names[1])):
            if len(x.shape) == 3 and x.shape[0] not in (batch, 1):
                raise ValueError(f"{nm}: batch of {x.shape[0]}, {names[2]} has {batch}")
    order = ROW_MAJOR if mc.kind == "R" else COL_MAJOR

    def pass_(m, x):
        trans = NO_TRANS if m.kind == mc.kind else TRANS
        # A 2-D operand, or a batch of one, is shared by every product: stride 0.
        return trans, m.ld, (m.stride if len(x.shape) == 3 and x.shape[0] > 1 else 0)

    ta, lda, sa = pass_(ma, a)
    tb, ldb, sb = pass_(mb, b)
    if batch > 1 and mc.stride == 0:
        raise ValueError(f"{names[2]}: batch stride 0: every product would write the same matrix")
    return Call(dt, order, ta, tb, ma.rows, mb.cols, ma.cols, lda, ldb, mc.ld, batch, sa, sb, mc.stride)
