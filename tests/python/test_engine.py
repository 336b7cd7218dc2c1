"""The Python package without a GPU: stride inference and argument errors on fake arrays (plain
objects exposing __cuda_array_interface__ dicts), and, when build/libengine.so is there, the calls
through ctypes on a context made with no_device (checks run, explain chooses from wisdom, matmul is
refused for want of a GPU). Run from the repository root: python3 -m unittest tests/python/test_engine.py"""

import ctypes
import os
import sys
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

import engine  # noqa: E402
from engine import _layout as L  # noqa: E402


class Fake:
    """A CUDA array as far as __cuda_array_interface__ goes: shape, strides in bytes, dtype, pointer."""

    def __init__(self, shape, strides=None, typestr="<f4", ptr=0x10000, itemsize=None):
        item = itemsize or int(typestr[-1])
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": typestr, "data": (ptr, False), "version": 3,
            "strides": None if strides is None else tuple(s * item for s in strides)}


class FakeDL:
    """A CUDA array as far as DLPack goes (no __cuda_array_interface__): __dlpack__ returns a
    "dltensor" capsule over a DLTensor held by the object; strides in elements, None: C-contiguous."""

    def __init__(self, shape, strides=None, bits=32, code=2, device_type=2, ptr=0x10000, offset=0):
        n = len(shape)
        i64p = ctypes.POINTER(ctypes.c_int64)
        self._shape = (ctypes.c_int64 * n)(*shape)
        self._strides = (ctypes.c_int64 * n)(*strides) if strides is not None else None
        self._t = L._DLTensor(ptr, L._DLDevice(device_type, 0), n, L._DLDataType(code, bits, 1),
                              ctypes.cast(self._shape, i64p),
                              ctypes.cast(self._strides, i64p) if self._strides is not None else i64p(), offset)

    def __dlpack__(self, stream=None):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self._t), b"dltensor", None)

    def __dlpack_device__(self):
        return (self._t.device.device_type, 0)


def call(a, b, out):
    return L.plan_call(L.operand(a, "a"), L.operand(b, "b"), L.operand(out, "out"))


class Strides(unittest.TestCase):
    def test_contiguous_is_nn_row_major(self):
        c = call(Fake((5, 3)), Fake((3, 7)), Fake((5, 7)))
        self.assertEqual((c.order, c.transa, c.transb), (L.ROW_MAJOR, L.NO_TRANS, L.NO_TRANS))
        self.assertEqual((c.m, c.n, c.k, c.lda, c.ldb, c.ldc, c.batch), (5, 7, 3, 3, 7, 7, 1))

    def test_transposed_view_is_t(self):
        # b = w.T where w is 7 x 3 row-major: shape (3, 7), strides (1, 3)
        c = call(Fake((5, 3)), Fake((3, 7), strides=(1, 3)), Fake((5, 7)))
        self.assertEqual((c.transa, c.transb, c.ldb), (L.NO_TRANS, L.TRANS, 3))

    def test_submatrix_keeps_its_leading_dimension(self):
        # a = big[:, :3] of a 5 x 10 matrix: strides (10, 1)
        c = call(Fake((5, 3), strides=(10, 1)), Fake((3, 7)), Fake((5, 7), strides=(9, 1)))
        self.assertEqual((c.lda, c.ldc), (10, 9))

    def test_column_major_output_flips_the_order(self):
        # out stored column-major (a transposed view): the call is column-major and the row-major
        # operands are passed transposed.
        c = call(Fake((5, 3)), Fake((3, 7)), Fake((5, 7), strides=(1, 5)))
        self.assertEqual((c.order, c.transa, c.transb, c.lda, c.ldb, c.ldc), (L.COL_MAJOR, L.TRANS, L.TRANS, 3, 7, 5))

    def test_batches(self):
        c = call(Fake((4, 5, 3)), Fake((4, 3, 7)), Fake((4, 5, 7)))
        self.assertEqual((c.batch, c.stride_a, c.stride_b, c.stride_c), (4, 15, 21, 35))
        # a 2-D operand (or a batch of one) is shared by every product: stride 0
        c = call(Fake((4, 5, 3)), Fake((3, 7)), Fake((4, 5, 7)))
        self.assertEqual((c.batch, c.stride_b), (4, 0))
        c = call(Fake((1, 5, 3)), Fake((4, 3, 7)), Fake((4, 5, 7)))
        self.assertEqual((c.batch, c.stride_a), (4, 0))

    def test_vectors_and_ones(self):
        c = call(Fake((1, 1)), Fake((1, 1)), Fake((1, 1)))
        self.assertEqual((c.m, c.n, c.k, c.lda, c.ldb, c.ldc), (1, 1, 1, 1, 1, 1))
        # a column taken out of a row-major matrix: shape (5, 1), strides (8, 1)
        c = call(Fake((5, 1), strides=(8, 1)), Fake((1, 7)), Fake((5, 7)))
        self.assertEqual((c.transa, c.lda), (L.NO_TRANS, 8))

    def test_strides_it_cannot_express(self):
        for strides in ((2, 2), (6, 2), (0, 1), (-3, 1)):
            with self.assertRaises(ValueError) as e:
                call(Fake((5, 3), strides=strides), Fake((3, 7)), Fake((5, 7)))
            self.assertIn("a: strides", str(e.exception))
            self.assertIn(str(strides), str(e.exception))
        with self.assertRaises(ValueError) as e:
            call(Fake((5, 3)), Fake((3, 7)), Fake((2, 5, 7), strides=(0, 7, 1)))
        self.assertIn("out: batch stride 0", str(e.exception))

    def test_byte_strides_not_whole_elements(self):
        f = Fake((5, 3))
        f.__cuda_array_interface__["strides"] = (12, 2)
        with self.assertRaises(ValueError) as e:
            L.operand(f, "a")
        self.assertIn("a: stride 2 bytes of dimension 1", str(e.exception))

    def test_shapes_and_dtypes(self):
        with self.assertRaises(ValueError) as e:
            call(Fake((5, 3)), Fake((4, 7)), Fake((5, 7)))
        self.assertIn("b: 4 rows do not match the 3 columns of a", str(e.exception))
        with self.assertRaises(ValueError) as e:
            call(Fake((5, 3)), Fake((3, 7)), Fake((5, 6)))
        self.assertIn("out: shape 5 x 6, expected 5 x 7", str(e.exception))
        with self.assertRaises(TypeError) as e:
            call(Fake((5, 3)), Fake((3, 7), typestr="<f8"), Fake((5, 7)))
        self.assertIn("b: dtype float64 differs from a's float32", str(e.exception))
        with self.assertRaises(TypeError) as e:
            L.operand(Fake((5, 3), typestr="<i4"), "a")
        self.assertIn("a: dtype '<i4' is not supported", str(e.exception))
        self.assertEqual(L.operand(Fake((5, 3), typestr="<f2"), "a").dtype, L.F16)
        with self.assertRaises(TypeError) as e:
            call(Fake((5, 3), typestr="<f2"), Fake((3, 7)), Fake((5, 7), typestr="<f2"))
        self.assertIn("b: dtype float32 differs from a's float16", str(e.exception))
        with self.assertRaises(ValueError) as e:
            L.matrix(L.operand(Fake((2, 2, 2, 2)), "a"), "a")
        self.assertIn("4-D", str(e.exception))
        with self.assertRaises(TypeError) as e:
            L.operand(object(), "b")
        self.assertIn("b: object is not a CUDA array", str(e.exception))

    def test_out_required_for_unknown_arrays(self):
        with self.assertRaises(TypeError) as e:
            engine._empty_like(Fake((2, 2)), (2, 2))
        self.assertIn("out: required", str(e.exception))


class FakeTorch:
    """Stands in for torch in sys.modules: a Tensor type with the accessors the fast path reads, and
    the raw current-stream call. No GPU: the calls go to a recording library."""

    class device:
        def __init__(self, index):
            self.index, self.type = index, "cuda"

        def __eq__(self, o):
            return isinstance(o, FakeTorch.device) and o.index == self.index

        def __hash__(self):
            return hash(self.index)

    class Tensor:
        def __init__(self, shape, strides=None, ptr=0x10000, typestr="<f4", index=0):
            self._fake = Fake(shape, strides, typestr, ptr)
            self.__cuda_array_interface__ = self._fake.__cuda_array_interface__
            self.shape, self.dtype, self.device = tuple(shape), typestr, FakeTorch.device(index)
            self._strides = tuple(strides) if strides else tuple(
                int(__import__("math").prod(shape[i + 1:])) for i in range(len(shape)))
            self._ptr = ptr

        def stride(self):
            return self._strides

        def data_ptr(self):
            return self._ptr

        def new_empty(self, shape):
            return FakeTorch.Tensor(shape, ptr=0x900000, typestr=self.dtype, index=self.device.index)

        def detach(self):
            t = FakeTorch.Tensor.__new__(FakeTorch.Tensor)
            t.__dict__.update(self.__dict__)
            t.__cuda_array_interface__ = self._fake.__cuda_array_interface__
            return t

    class Parameter(Tensor):
        """As torch's: __cuda_array_interface__ refuses while it requires grad; detach() gives it."""

        @property
        def __cuda_array_interface__(self):
            raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad")

        @__cuda_array_interface__.setter
        def __cuda_array_interface__(self, v):
            pass

    class _C:
        @staticmethod
        def _cuda_getCurrentRawStream(index):
            return 0x5000 + index


class Recording:
    """A Library that records engine_gemm's arguments and the descs made (no libengine)."""

    def __init__(self):
        self.calls, self.descs = [], 0

    def create(self, *args):
        return ctypes.c_void_p(1)

    def destroy(self, ctx):
        pass

    def desc(self, call):
        self.descs += 1
        return engine._lib.Library.desc(call)

    def gemm(self, ctx, desc_addr, alpha, A, B, beta, C, stream):
        d = engine._lib._PlanDesc.from_address(desc_addr)
        self.calls.append(((d.transa, d.transb, d.m, d.n, d.k, d.lda, d.ldb, d.ldc, d.batch), A, B, C, stream))


class TorchFastPath(unittest.TestCase):
    """engine.matmul on torch tensors works out a call's description once per shapes, strides, dtype
    and device, and reads only data_ptr() and the raw stream on later calls."""

    def setUp(self):
        self.saved = sys.modules.get("torch")
        sys.modules["torch"] = FakeTorch
        engine._torch = None
        self.lib = Recording()
        self.ctx = engine.Context(lib=self.lib)

    def tearDown(self):
        if self.saved is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = self.saved
        engine._torch = None

    def test_described_once_per_signature(self):
        T = FakeTorch.Tensor
        a, w = T((8, 64)), T((32, 64), ptr=0x20000)
        wt = T((64, 32), strides=(1, 64), ptr=0x20000)  # w.T, as x @ W.T passes it
        out = self.ctx.matmul(a, wt)
        self.assertEqual(out.shape, (8, 32))
        self.ctx.matmul(T((8, 64), ptr=0x30000), wt)  # same signature, other pointers
        self.assertEqual(self.lib.descs, 1)
        (d1, A1, B1, C1, s1), (d2, A2, _, _, _) = self.lib.calls
        self.assertEqual(d1, (L.NO_TRANS, L.TRANS, 8, 32, 64, 64, 64, 32, 1))
        self.assertEqual(d1, d2)
        self.assertEqual((A1, B1, C1, s1, A2), (0x10000, 0x20000, 0x900000, 0x5000, 0x30000))
        # The same as the interface-reading path describes it.
        slow = call(a._fake, wt._fake, Fake((8, 32)))
        self.assertEqual(d1[:8], (slow.transa, slow.transb, slow.m, slow.n, slow.k, slow.lda, slow.ldb, slow.ldc))
        self.ctx.matmul(a, T((64, 32), ptr=0x20000))  # other strides: described anew, NN
        self.assertEqual(self.lib.descs, 2)
        self.assertEqual(self.lib.calls[-1][0][:2], (L.NO_TRANS, L.NO_TRANS))
        self.ctx.matmul(a, wt, T((8, 32), ptr=0x40000), beta=0.5)  # out given: another signature
        self.assertEqual(self.lib.descs, 3)
        self.assertEqual(self.lib.calls[-1][3], 0x40000)

    def test_parameters_take_the_fast_path(self):
        # x @ layer.weight.T: a Parameter (a Tensor subclass that requires grad) as b.
        w = FakeTorch.Parameter((32, 64), ptr=0x20000)
        wt = FakeTorch.Parameter((64, 32), strides=(1, 64), ptr=0x20000)
        with self.assertRaises(RuntimeError):
            w.__cuda_array_interface__
        out = self.ctx.matmul(FakeTorch.Tensor((8, 64)), wt)
        self.assertEqual(out.shape, (8, 32))
        self.assertEqual(self.lib.calls[-1][0][:2], (L.NO_TRANS, L.TRANS))
        self.assertEqual(self.lib.calls[-1][2], 0x20000)

    def test_errors_on_the_fast_path(self):
        T = FakeTorch.Tensor
        with self.assertRaises(ValueError) as e:
            self.ctx.matmul(T((8, 64)), T((63, 32)))
        self.assertIn("b: 63 rows do not match the 64 columns of a", str(e.exception))
        with self.assertRaises(TypeError):
            self.ctx.matmul(T((8, 64)), T((64, 32), typestr="<f8"))
        with self.assertRaises(ValueError) as e:
            self.ctx.matmul(T((8, 64)), T((64, 32)), beta=1.0)
        self.assertIn("beta: must be 0", str(e.exception))
        self.assertEqual(self.lib.calls, [])


class DLPack(unittest.TestCase):
    """The same inference from DLPack capsules (arrays without __cuda_array_interface__)."""

    def test_batches_views_and_offsets(self):
        # a: a batch of 4 row-major 5 x 3; b: a batch of 4 transposed views (each stored 7 x 3);
        # out: a batch of 4 sub-matrices 5 x 7 of 5 x 9 rows.
        c = call(FakeDL((4, 5, 3)), FakeDL((4, 3, 7), strides=(21, 1, 3)), FakeDL((4, 5, 7), strides=(45, 9, 1)))
        self.assertEqual((c.order, c.transa, c.transb), (L.ROW_MAJOR, L.NO_TRANS, L.TRANS))
        self.assertEqual((c.m, c.n, c.k, c.lda, c.ldb, c.ldc), (5, 7, 3, 3, 3, 9))
        self.assertEqual((c.batch, c.stride_a, c.stride_b, c.stride_c), (4, 15, 21, 45))
        op = L.operand(FakeDL((2, 2), bits=64, ptr=0x20000, offset=64), "a")
        self.assertEqual((op.ptr, op.dtype, op.strides), (0x20040, L.F64, (2, 1)))
        # The half types: kDLBfloat (code 4) and kDLFloat with 16 bits.
        self.assertEqual(L.operand(FakeDL((2, 2), bits=16, code=4), "a").dtype, L.BF16)
        self.assertEqual(L.operand(FakeDL((2, 2), bits=16), "a").dtype, L.F16)
        self.assertFalse(hasattr(FakeDL((1, 1)), "__cuda_array_interface__"))

    def test_interface_refused_dlpack_taken(self):
        # torch's bfloat16: __cuda_array_interface__ raises TypeError (no typestr for it), DLPack has it.
        class Refusing(FakeDL):
            @property
            def __cuda_array_interface__(self):
                raise TypeError("Can't get __cuda_array_interface__ on Tensor of type torch.bfloat16")
        c = call(Refusing((5, 3), bits=16, code=4), Refusing((3, 7), bits=16, code=4), Refusing((5, 7), bits=16, code=4))
        self.assertEqual((c.dtype, c.m, c.n, c.k), (L.BF16, 5, 7, 3))

    def test_opaque_typestr_dlpack_taken(self):
        # torch 2.11's bfloat16: an interface whose typestr is the opaque '<V2'; DLPack names the type.
        class Opaque(FakeDL):
            @property
            def __cuda_array_interface__(self):
                return {"shape": (2, 2), "typestr": "<V2", "data": (0x10000, False), "version": 3, "strides": None}
        self.assertEqual(L.operand(Opaque((2, 2), bits=16, code=4), "a").dtype, L.BF16)
        # The bare interface (no DLPack to ask) keeps its one line.
        with self.assertRaises(TypeError) as e:
            L.operand({"shape": (2, 2), "typestr": "<V2", "data": (0x10000, False), "version": 3}, "a")
        self.assertIn("a: dtype '<V2' is not supported", str(e.exception))

    def test_refusals_name_the_argument(self):
        with self.assertRaises(ValueError) as e:
            L.operand(FakeDL((2, 2), device_type=1), "a")
        self.assertIn("a: DLPack device type 1 is not CUDA memory", str(e.exception))
        with self.assertRaises(TypeError) as e:
            L.operand(FakeDL((2, 2), bits=8), "b")
        self.assertIn("b: DLPack dtype (code 2, 8 bits) is not float32, float64, bfloat16 or float16", str(e.exception))
        with self.assertRaises(TypeError) as e:
            L.operand(FakeDL((2, 2), bits=32, code=4), "b")  # kDLBfloat has 16 bits only
        self.assertIn("b: DLPack dtype (code 4, 32 bits)", str(e.exception))
        with self.assertRaises(ValueError) as e:  # two non-unit strides, as from __cuda_array_interface__
            call(FakeDL((4, 4), strides=(8, 2)), FakeDL((4, 4)), FakeDL((4, 4)))
        self.assertIn("a: strides (8, 2)", str(e.exception))


LIB = os.environ.get("ENGINE_LIB") or os.path.join(ROOT, "build", "libengine.so")


@unittest.skipUnless(os.path.exists(LIB), "no libengine.so (run make)")
class ThroughTheLibrary(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.environ.setdefault("ENGINE_TEMPLATES", os.path.join(ROOT, "kernels_src"))
        # arch 0: sm_90 as an H100 reports it, so tc32's wisdom entries build for sm_90a as on the GPU
        cls.ctx = engine.Context(no_device=True, arch=0, wisdom_dir=os.path.join(ROOT, "wisdom"),
                                 user_wisdom_dir="", device_name="NVIDIA H100 80GB HBM3",
                                 lib=engine._lib.Library(LIB))

    def test_explain_chooses_from_wisdom(self):
        info = self.ctx.explain(Fake((4096, 4096)), Fake((4096, 4096)), Fake((4096, 4096)))
        self.assertEqual(info["chosen_by"], "wisdom")
        self.assertTrue(info["wisdom"]["exact"])
        self.assertEqual((info["m"], info["n"], info["k"], info["layout"]), (4096, 4096, 4096, "NN"))
        self.assertIn(info["origin"], ("nvrtc", "disk", "memory"))

    def test_explain_says_the_path(self):
        info = self.ctx.explain(Fake((256, 256)), Fake((256, 256)), Fake((256, 256)))
        self.assertEqual(info["path"], "engine")
        self.assertIn("without a GPU", info["why"])
        self.assertIn(info["jit"], ("async", "sync"))
        self.assertEqual(info["fallback_calls"], 0)

    def test_explain_takes_the_pointers_alignment(self):
        aligned = self.ctx.explain(Fake((256, 256)), Fake((256, 256)), Fake((256, 256)))
        off = self.ctx.explain(Fake((256, 256), ptr=0x10004), Fake((256, 256)), Fake((256, 256)))
        self.assertEqual(aligned["align_elems"], [4, 4, 4])
        self.assertEqual(off["align_elems"], [1, 4, 4])
        f64 = self.ctx.explain(Fake((64, 64), typestr="<f8", ptr=0x10008), Fake((64, 64), typestr="<f8"), None)
        self.assertEqual(f64["align_elems"], [1, 2, 2])

    def test_jit_mode_is_checked(self):
        with self.assertRaises(ValueError) as e:
            engine.Context(no_device=True, jit="later", lib=self.ctx._lib)
        self.assertIn("jit: 'later'", str(e.exception))
        with engine.Context(no_device=True, jit="sync", wisdom_dir=os.path.join(ROOT, "wisdom"), user_wisdom_dir="",
                            lib=self.ctx._lib) as c:
            self.assertEqual(c.explain(Fake((64, 64)), Fake((64, 64)), None)["jit"], "sync")
        self.assertIsNone(c._ctx)

    def test_warm_fills_the_cache(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            with engine.Context(no_device=True, arch=86, cache_dir=d, wisdom_dir=os.path.join(ROOT, "wisdom"),
                                user_wisdom_dir="", lib=self.ctx._lib) as c:
                seen = []
                c.warm(jobs=2, progress=lambda done, total, label: seen.append((done, total, label)))
            self.assertGreaterEqual(len(seen), 2)
            self.assertEqual([s[0] for s in seen], list(range(1, len(seen) + 1)))
            self.assertEqual(seen[-1][0], seen[-1][1])
            files = [f for _, _, fs in os.walk(d) for f in fs]
            self.assertGreaterEqual(len(files), 1)

    def test_explain_of_a_transposed_batch(self):
        b = Fake((3, 64, 32), strides=(2048, 1, 64), typestr="<f8")  # each matrix a transposed view
        info = self.ctx.explain(Fake((3, 16, 64), typestr="<f8"), b, None)
        self.assertEqual((info["layout"], info["batch"], info["ldb"], info["stride_b"]), ("NT", 3, 64, 2048))
        # Wisdom's choice runs it, or, where its template refuses the layout, a config that takes it,
        # with the refusal kept in the description.
        if "fallback" in info:
            self.assertIn("is refused", info["fallback"]["why"])
            self.assertNotEqual(info["fallback"]["refused"], info["label"])

    def test_matmul_is_checked_then_refused_without_gpu(self):
        with self.assertRaises(engine.EngineError) as e:
            self.ctx.matmul(Fake((4, 4), ptr=0x1002), Fake((4, 4)), Fake((4, 4)))
        self.assertEqual(e.exception.status, "ENGINE_ERROR_MISALIGNED")
        self.assertIn("A = 0x1002 is not a multiple of 4 bytes", str(e.exception))
        with self.assertRaises(engine.EngineError) as e:
            self.ctx.matmul(Fake((4, 4)), Fake((4, 4)), Fake((4, 4)))
        self.assertEqual(e.exception.status, "ENGINE_ERROR_NO_GPU")

    def test_forced_config_of_the_other_dtype(self):
        self.ctx.set_config("dgemm_dmma")
        try:
            with self.assertRaises(engine.EngineError) as e:
                self.ctx.explain(Fake((64, 64)), Fake((64, 64)), Fake((64, 64)))
            self.assertEqual(e.exception.status, "ENGINE_ERROR_DTYPE_MISMATCH")
        finally:
            self.ctx.set_config(None)

    def test_structs_checked_against_the_library(self):
        # a package whose engine_options is laid out otherwise than the library's is refused by name
        orig = engine._lib._Options

        class Longer(ctypes.Structure):
            _fields_ = orig._fields_ + [("extra", ctypes.c_int64)]

        engine._lib._Options = Longer
        try:
            with self.assertRaises(OSError) as e:
                engine._lib.Library(LIB)
            self.assertIn("engine_options is", str(e.exception))
        finally:
            engine._lib._Options = orig
        lib = engine._lib.Library(LIB)  # as built: the same sizes
        self.assertEqual(lib.dll.engine_struct_size(b"engine_plan_desc"), ctypes.sizeof(engine._lib._PlanDesc))
        # the library itself reads each struct's size: a larger one (a newer engine.h) is refused by status
        o = engine._lib._Options(ctypes.sizeof(engine._lib._Options) + 8)
        o.no_device = 1
        ctx = ctypes.c_void_p()
        with self.assertRaises(engine.EngineError) as e:
            lib._check(lib.dll.engine_create(ctypes.byref(ctx), ctypes.byref(o)), None)
        self.assertEqual(e.exception.status, "ENGINE_ERROR_VERSION")
        self.assertIn("engine_options.size is", str(e.exception))

    def test_status_names_are_the_librarys(self):
        lib = engine._lib.Library(LIB)
        with self.assertRaises(engine.EngineError) as e:
            lib._check(9, None)
        self.assertEqual(e.exception.status, "ENGINE_ERROR_OUT_OF_MEMORY")
        self.assertEqual(e.exception.code, 9)

    def test_missing_library_is_named(self):
        with self.assertRaises(OSError) as e:
            engine._lib.Library("/nonexistent/libengine.so")
        self.assertIn("ENGINE_LIB", str(e.exception))


class LocatingTheLibrary(unittest.TestCase):
    """Where the package looks for libengine.so (engine/_lib.py, _candidates) and what it says when
    the library is nowhere; an installed package carries the library of the tree it was built from."""

    def origins(self, cands):
        return [o for _, o in cands]

    def test_engine_lib_alone(self):
        here = os.path.join(ROOT, "python", "engine")
        self.assertEqual(engine._lib._candidates({"ENGINE_LIB": "/x/libengine.so"}, here),
                         [("/x/libengine.so", "ENGINE_LIB")])

    def test_order_in_a_checkout_and_outside(self):
        import tempfile
        inside = engine._lib._candidates({}, os.path.join(ROOT, "python", "engine"))
        self.assertEqual(inside[0], (os.path.join(ROOT, "python", "engine", "libengine.so"), "beside the package"))
        self.assertEqual(inside[1], (os.path.join(ROOT, "build", "libengine.so"), "the checkout's build/"))
        with tempfile.TemporaryDirectory() as d:  # site-packages/engine: no checkout above it
            here = os.path.join(d, "site-packages", "engine")
            outside = engine._lib._candidates({}, here)
        self.assertEqual(outside[0], (os.path.join(here, "libengine.so"), "beside the package"))
        self.assertNotIn("the checkout's build/", self.origins(outside))
        for cands in (inside, outside):  # then the system's: PREFIX/lib (make install), then the linker
            rest = self.origins(cands)[self.origins(cands).index("an installed PREFIX/lib"):]
            self.assertEqual(set(rest[:-1]), {"an installed PREFIX/lib"})
            self.assertEqual(rest[-1], "the dynamic linker's search")
            self.assertIn((os.path.join(sys.prefix, "lib", "libengine.so"), "an installed PREFIX/lib"), cands)
            self.assertIn(("/usr/local/lib/libengine.so", "an installed PREFIX/lib"), cands)

    def test_not_found_names_every_place(self):
        import tempfile
        saved_env, saved = os.environ.pop("ENGINE_LIB", None), engine._lib._candidates
        try:
            with tempfile.TemporaryDirectory() as d:
                cands = [(os.path.join(d, "engine", "libengine.so"), "beside the package"),
                         (os.path.join(d, "lib", "libengine.so"), "an installed PREFIX/lib"),
                         ("libengine-not-anywhere.so", "the dynamic linker's search")]
                engine._lib._candidates = lambda: cands
                with self.assertRaises(OSError) as e:
                    engine._lib.Library()
        finally:
            engine._lib._candidates = saved
            if saved_env is not None:
                os.environ["ENGINE_LIB"] = saved_env
        msg = str(e.exception)
        self.assertNotIn("\n", msg)
        self.assertTrue(msg.startswith("libengine.so not found; looked at: ENGINE_LIB (unset); "), msg)
        for path, origin in cands:
            self.assertIn(f"{path} ({origin}: ", msg)

    def build_from_tree(self, d, command):
        """Copy python/ and the built library into a tree d/tree as a checkout has them after make, and
        run setuptools there as pip's build does (setup.py when the package has one, else setup())."""
        import shutil
        import subprocess
        tree = os.path.join(d, "tree")
        shutil.copytree(os.path.join(ROOT, "python"), os.path.join(tree, "python"),
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "*.so"))
        os.makedirs(os.path.join(tree, "build"))
        shutil.copyfile(LIB, os.path.join(tree, "build", "libengine.so"))
        env = {k: v for k, v in os.environ.items() if k != "ENGINE_LIB"}
        return subprocess.run(command, cwd=os.path.join(tree, "python"), env=env, capture_output=True, text=True)

    def load_from(self, path, cwd):
        import subprocess
        env = {k: v for k, v in os.environ.items() if k not in ("ENGINE_LIB", "PYTHONPATH")}
        env["PYTHONPATH"] = path
        return subprocess.run([sys.executable, "-c", "import engine._lib as l; print(l.Library().path)"],
                              cwd=cwd, env=env, capture_output=True, text=True)

    @unittest.skipUnless(os.path.exists(LIB), "no libengine.so (run make)")
    def test_built_package_carries_the_library(self):
        import importlib.util
        import tempfile
        if importlib.util.find_spec("setuptools") is None:
            self.skipTest("no setuptools")
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out")
            build = ("import os, sys\nsys.argv = ['setup.py', '-q', 'build_py', '-d', sys.argv[1]]\n"
                     "if os.path.exists('setup.py'):\n    import runpy; runpy.run_path('setup.py', run_name='__main__')\n"
                     "else:\n    import setuptools; setuptools.setup()\n")
            r = self.build_from_tree(d, [sys.executable, "-c", build, out])
            self.assertEqual(r.returncode, 0, r.stderr)
            r = self.load_from(out, d)  # as installed: no ENGINE_LIB, no checkout around it
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.strip(), os.path.join(out, "engine", "libengine.so"))

    @unittest.skipUnless(os.path.exists(LIB), "no libengine.so (run make)")
    def test_pip_install_carries_the_library(self):
        import importlib.util
        import tempfile
        if any(importlib.util.find_spec(m) is None for m in ("pip", "setuptools", "wheel")):
            self.skipTest("pip cannot build the package offline here (needs pip, setuptools and wheel)")
        with tempfile.TemporaryDirectory() as d:
            site = os.path.join(d, "site")
            r = self.build_from_tree(d, [sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation",
                                         "--no-index", "--no-deps", "--target", site, "."])
            self.assertEqual(r.returncode, 0, r.stderr)
            r = self.load_from(site, d)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.strip(), os.path.join(site, "engine", "libengine.so"))


if __name__ == "__main__":
    unittest.main()
