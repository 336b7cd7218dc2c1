/* reference.c — see reference.h. */
#include "reference.h"

#include "jit.h"
#include "labjit.h"

#include <string.h>

/* ref_dd: one thread per element of C, 16 x 16 tiles of A and B through shared memory, in any
 * layout (layout.h; grid z walks the batch). (hi, lo)
 * is the running sum as a double-double: each product a*b is p + e exactly (e = fma(a, b, -p)),
 * added by TwoSum and renormalised. widen: floats to doubles. */
static const char k_ref_src[] =
    "#define TS 16\n"
    "__device__ __forceinline__ void dd_add(double &hi, double &lo, double p, double e) {\n"
    "  double s = __dadd_rn(hi, p), bb = __dsub_rn(s, hi);\n"
    "  double t = __dadd_rn(__dsub_rn(hi, __dsub_rn(s, bb)), __dsub_rn(p, bb));\n"
    "  t = __dadd_rn(t, __dadd_rn(lo, e));\n"
    "  hi = __dadd_rn(s, t);\n"
    "  lo = __dsub_rn(t, __dsub_rn(hi, s));\n"
    "}\n"
    "extern \"C\" __global__ void ref_dd(long long M, long long N, long long K, double alpha, const double *A,\n"
    "                                   const double *B, double beta, const double *C0, double *out, long long lda,\n"
    "                                   long long ldb, long long ldc, int ta, int tb, long long sa, long long sb,\n"
    "                                   long long sc, long long batch) {\n"
    "  __shared__ double As[TS][TS + 1], Bs[TS][TS + 1];\n"
    "  const int tx = threadIdx.x, ty = threadIdx.y;\n"
    "  const long long i = (long long)blockIdx.y * TS + ty, j = (long long)blockIdx.x * TS + tx;\n"
    "  for (long long z = blockIdx.z; z < batch; z += gridDim.z) {\n"
    "  const double *a_ = A + z * sa, *b_ = B + z * sb;\n"
    "  double hi = 0.0, lo = 0.0;\n"
    "  for (long long k0 = 0; k0 < K; k0 += TS) {\n"
    "    As[ty][tx] = i < M && k0 + tx < K ? (ta ? a_[(k0 + tx) * lda + i] : a_[i * lda + k0 + tx]) : 0.0;\n"
    "    Bs[ty][tx] = k0 + ty < K && j < N ? (tb ? b_[j * ldb + k0 + ty] : b_[(k0 + ty) * ldb + j]) : 0.0;\n"
    "    __syncthreads();\n"
    "    for (int k = 0; k < TS; ++k) {\n"
    "      double a = As[ty][k], b = Bs[k][tx], p = __dmul_rn(a, b);\n"
    "      dd_add(hi, lo, p, __fma_rn(a, b, -p));\n"
    "    }\n"
    "    __syncthreads();\n"
    "  }\n"
    "  if (i >= M || j >= N) continue;\n"
    "  double ah = __dmul_rn(alpha, hi), rh = 0.0, rl = 0.0;\n"
    "  dd_add(rh, rl, ah, __dadd_rn(__fma_rn(alpha, hi, -ah), __dmul_rn(alpha, lo)));\n"
    "  const long long o = z * sc + i * ldc + j;\n"
    "  if (beta != 0.0) {\n"
    "    double c = C0[o], bc = __dmul_rn(beta, c);\n"
    "    dd_add(rh, rl, bc, __fma_rn(beta, c, -bc));\n"
    "  }\n"
    "  out[o] = __dadd_rn(rh, rl);\n"
    "  }\n"
    "}\n"
    "extern \"C\" __global__ void widen(const float *src, double *dst, long long n) {\n"
    "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)\n"
    "    dst[i] = (double)src[i];\n"
    "}\n"
    "extern \"C\" __global__ void widen16(const unsigned short *src, double *dst, long long n, int bf16) {\n"
    "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {\n"
    "    float f;\n"
    "    if (bf16) f = __uint_as_float((unsigned)src[i] << 16);\n"
    "    else asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(src[i]));\n"
    "    dst[i] = (double)f;\n"
    "  }\n"
    "}\n";

int reference_init(gpu_t *g, reference_t *r, err_t *err)
{
    memset(r, 0, sizeof *r);
    const jit_result *jr;
    if (jit_compile(lab_jit(), "reference.cu", k_ref_src, NULL, 0, g->sm, "FP64 reference", &jr, NULL, err) ||
        gpu_module_load(g, jr->cubin, "FP64 reference", &r->mod, err) ||
        gpu_function(g, &r->mod, "ref_dd", &r->dd, err) || gpu_function(g, &r->mod, "widen", &r->widen, err) ||
        gpu_function(g, &r->mod, "widen16", &r->widen16, err))
        return -1;
    r->ready = true;
    return 0;
}

void reference_free(gpu_t *g, reference_t *r)
{
    if (r->ready)
        gpu_module_unload(g, &r->mod);
    memset(r, 0, sizeof *r);
}

size_t reference_scratch_bytes(dtype_t dtype, int64_t span_a, int64_t span_b)
{
    return dtype == DTYPE_F64 ? 0 : (size_t)(span_a + span_b) * sizeof(double);
}

/* n elements of dtype (f32, bf16, f16) at src as doubles at dst. */
static int widen(reference_t *r, gpu_t *g, dtype_t dtype, CUdeviceptr src, CUdeviceptr dst, int64_t n, err_t *err)
{
    long long count = n;
    int bf16 = dtype == DTYPE_BF16;
    void *args[] = {&src, &dst, &count, &bf16};
    int64_t blocks = (n + 255) / 256;
    const int64_t grid[3] = {blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536, 1, 1}, block[3] = {256, 1, 1};
    return gpu_launch(g, dtype_half(dtype) ? r->widen16 : r->widen, grid, block, 0, args, err);
}

int reference_gemm(reference_t *r, gpu_t *g, blas_t *b, dtype_t dtype, int64_t M, int64_t N, int64_t K,
                   const layout_t *lay, double alpha, CUdeviceptr A, CUdeviceptr B, double beta, CUdeviceptr C0,
                   CUdeviceptr out64, int64_t span_a, int64_t span_b, int64_t span_c, err_t *err)
{
    if (dtype == DTYPE_F64) {
        long long m = M, n = N, k = K, lda = lay->lda, ldb = lay->ldb, ldc = lay->ldc, batch = lay->batch;
        long long one = batch > 1, sa = one * lay->sa, sb = one * lay->sb, sc = one * lay->sc;
        int ta = lay->ta, tb = lay->tb;
        void *args[] = {&m, &n, &k, &alpha, &A, &B, &beta, &C0, &out64, &lda, &ldb, &ldc, &ta, &tb, &sa, &sb, &sc, &batch};
        const int64_t grid[3] = {(N + 15) / 16, (M + 15) / 16, batch < 65535 ? batch : 65535}, block[3] = {16, 16, 1};
        return gpu_launch(g, r->dd, grid, block, 0, args, err);
    }
    /* The whole stored buffers are widened, padding (NaN, never read) included, so the layout stays. */
    CUdeviceptr A64 = 0, B64 = 0;
    int rc = gpu_alloc(g, (size_t)span_a * sizeof(double), &A64, err) ||
             gpu_alloc(g, (size_t)span_b * sizeof(double), &B64, err) || widen(r, g, dtype, A, A64, span_a, err) ||
             widen(r, g, dtype, B, B64, span_b, err) || widen(r, g, dtype, C0, out64, span_c, err) ||
             blas_gemm_layout(b, DTYPE_F64, false, (int)M, (int)N, (int)K, lay, &alpha, A64, B64, &beta, out64, err) ||
             gpu_sync(g, err);
    gpu_free(g, A64);
    gpu_free(g, B64);
    return rc ? -1 : 0;
}
