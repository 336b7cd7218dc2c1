/* blas.c — see blas.h. cuBLAS is loaded by the first blas_open (core/cublasdl.h, the table the
 * library's fallback uses too), not linked: starting a process linked to libcublas costs about 0.08 s
 * of CPU (its relocations: 27k page faults), which every run of the command paid, though most
 * (compile, pick, the CLI's errors, a tune's parent) never call it; make test starts 1,700 of them. */
#define _GNU_SOURCE
#include "blas.h"

#include "cublasdl.h"

#include <cublas_v2.h>
#include <stdio.h>
#include <string.h>

/* libcublas's functions (core/cublasdl.h), once the first handle is opened. */
static const cublasdl_t *cb;

int blas_load(err_t *err)
{
    const cublasdl_t *t = cublasdl_load(err);
    if (!t)
        return -1;
    cb = t;
    return 0;
}

/* call is the call's text, "cb->cublasSgemm(...)": named without the table, as the function it calls. */
static int cublas_check(cublasStatus_t rc, const char *call, const char *file, int line, err_t *err)
{
    if (rc == CUBLAS_STATUS_SUCCESS)
        return 0;
    if (strncmp(call, "cb->", 4) == 0)
        call += 4;
    return err_set(err, ERR_CUDA, file, line, 0, "%s failed: %s (%s)", call, cb->cublasGetStatusName(rc),
                   cb->cublasGetStatusString(rc));
}
#define CUBLAS_CHECK(call, err) cublas_check((call), #call, __FILE__, __LINE__, (err))

int blas_math_from_env(bool *pedantic, err_t *err)
{
    const char *v = getenv("ENGINE_CUBLAS_MATH");
    *pedantic = false;
    if (!v || !*v || strcmp(v, "default") == 0)
        return 0;
    if (strcmp(v, "pedantic") == 0) {
        *pedantic = true;
        return 0;
    }
    return err_set(err, ERR_INPUT, "engine", 0, 0,
                   "ENGINE_CUBLAS_MATH=%s: must be default (cuBLAS's own choice, as a program gets it: the "
                   "default) or pedantic (strict FP32/FP64)",
                   v);
}

int blas_open(blas_t *b, gpu_t *g, err_t *err)
{
    memset(b, 0, sizeof *b);
    if (blas_math_from_env(&b->pedantic, err) || blas_load(err))
        return -1;
    cublasHandle_t h;
    if (CUBLAS_CHECK(cb->cublasCreate(&h), err))
        return -1;
    /* CUstream and cudaStream_t are the same type: both name struct CUstream_st. */
    if (CUBLAS_CHECK(cb->cublasSetStream(h, (cudaStream_t)g->stream), err) ||
        CUBLAS_CHECK(cb->cublasSetMathMode(h, b->pedantic ? CUBLAS_PEDANTIC_MATH : CUBLAS_DEFAULT_MATH), err) ||
        CUBLAS_CHECK(cb->cublasGetVersion(h, &b->version), err)) {
        cb->cublasDestroy(h);
        return -1;
    }
    b->handle = h;
    return 0;
}

void blas_close(blas_t *b)
{
    if (b->handle)
        cb->cublasDestroy((cublasHandle_t)b->handle);
    b->handle = NULL;
}

int blas_gemm(blas_t *b, dtype_t dtype, int M, int N, int K, const void *alpha, CUdeviceptr A, CUdeviceptr B,
              const void *beta, CUdeviceptr C, err_t *err)
{
    cublasHandle_t h = b->handle;
    /* cuBLAS is column-major. A row-major M x N matrix is its column-major N x M transpose, and
     * C^T = B^T A^T, so the row-major product is the column-major one with A and B swapped. A
     * leading dimension must be at least 1 even when K = 0 (then C = beta*C). */
    int lda = K > 0 ? K : 1;
    if (dtype == DTYPE_F64)
        return CUBLAS_CHECK(cb->cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, (const double *)alpha,
                                        (const double *)B, N, (const double *)A, lda, (const double *)beta,
                                        (double *)C, N),
                            err);
    return CUBLAS_CHECK(cb->cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, (const float *)alpha, (const float *)B,
                                    N, (const float *)A, lda, (const float *)beta, (float *)C, N),
                        err);
}

int blas_gemm_tf32(blas_t *b, int M, int N, int K, const void *alpha, CUdeviceptr A, CUdeviceptr B, const void *beta,
                   CUdeviceptr C, err_t *err)
{
    int lda = K > 0 ? K : 1;
    return CUBLAS_CHECK(cb->cublasGemmEx(b->handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, alpha, (const void *)B, CUDA_R_32F,
                                     N, (const void *)A, CUDA_R_32F, lda, beta, (void *)C, CUDA_R_32F, N,
                                     CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT),
                        err);
}

static cudaDataType_t cuda_type(dtype_t d)
{
    return d == DTYPE_F64 ? CUDA_R_64F : d == DTYPE_BF16 ? CUDA_R_16BF : d == DTYPE_F16 ? CUDA_R_16F : CUDA_R_32F;
}

int blas_gemm_half(blas_t *b, dtype_t dtype, dtype_t c_dtype, int M, int N, int K, const layout_t *lay,
                   const float *alpha, CUdeviceptr A, CUdeviceptr B, const float *beta, CUdeviceptr C, err_t *err)
{
    cublasHandle_t h = b->handle;
    cudaDataType_t t = cuda_type(dtype), tc = cuda_type(c_dtype);
    if (CUBLAS_CHECK(cb->cublasSetMathMode(h, CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION),
                     err))
        return -1;
    int rc;
    /* Column-major, as blas_gemm_layout's: A and B swapped, their transposes carried over. */
    if (!lay->ta && !lay->tb && lay->batch == 1 && layout_is_packed(lay, M, N, K))
        rc = CUBLAS_CHECK(cb->cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, alpha, (const void *)B, t, N,
                                           (const void *)A, t, K > 0 ? K : 1, beta, (void *)C, tc, N,
                                           CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                          err);
    else {
        long long one = lay->batch > 1;
        rc = CUBLAS_CHECK(cb->cublasGemmStridedBatchedEx(h, lay->tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                                                         lay->ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, alpha,
                                                         (const void *)B, t, (int)lay->ldb, one * lay->sb,
                                                         (const void *)A, t, (int)lay->lda, one * lay->sa, beta,
                                                         (void *)C, tc, (int)lay->ldc, one * lay->sc, (int)lay->batch,
                                                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                          err);
    }
    if (CUBLAS_CHECK(cb->cublasSetMathMode(h, b->pedantic ? CUBLAS_PEDANTIC_MATH : CUBLAS_DEFAULT_MATH), err))
        return -1;
    return rc;
}

int blas_gemm_layout(blas_t *b, dtype_t dtype, bool tf32, int M, int N, int K, const layout_t *lay, const void *alpha,
                     CUdeviceptr A, CUdeviceptr B, const void *beta, CUdeviceptr C, err_t *err)
{
    if (dtype_half(dtype))
        return blas_gemm_half(b, dtype, dtype, M, N, K, lay, alpha, A, B, beta, C, err);
    if (!lay->ta && !lay->tb && lay->batch == 1 && layout_is_packed(lay, M, N, K))
        return tf32 ? blas_gemm_tf32(b, M, N, K, alpha, A, B, beta, C, err)
                    : blas_gemm(b, dtype, M, N, K, alpha, A, B, beta, C, err);
    /* Column-major, B's stored rows are its columns: B stored K x N (op N) is op(B)^T as it
     * stands, B stored N x K (op T) is op(B), which cuBLAS transposes; the same for A. */
    cudaDataType_t t = cuda_type(dtype);
    cublasComputeType_t ct = dtype == DTYPE_F64 ? (b->pedantic ? CUBLAS_COMPUTE_64F_PEDANTIC : CUBLAS_COMPUTE_64F)
                             : tf32           ? CUBLAS_COMPUTE_32F_FAST_TF32
                             : b->pedantic    ? CUBLAS_COMPUTE_32F_PEDANTIC
                                              : CUBLAS_COMPUTE_32F;
    long long one = lay->batch > 1;
    return CUBLAS_CHECK(cb->cublasGemmStridedBatchedEx(b->handle, lay->tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                                                   lay->ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, alpha, (const void *)B,
                                                   t, (int)lay->ldb, one * lay->sb, (const void *)A, t, (int)lay->lda,
                                                   one * lay->sa, beta, (void *)C, t, (int)lay->ldc, one * lay->sc,
                                                   (int)lay->batch, ct, CUBLAS_GEMM_DEFAULT),
                        err);
}

int blas_scal(blas_t *b, dtype_t dtype, size_t n, const void *alpha, CUdeviceptr x, err_t *err)
{
    cublasHandle_t h = b->handle;
    size_t es = dtype_size(dtype);
    /* cuBLAS counts elements in int: scale 2^30 at a time. */
    for (size_t at = 0; at < n; at += (size_t)1 << 30) {
        int part = (int)(n - at < ((size_t)1 << 30) ? n - at : (size_t)1 << 30);
        CUdeviceptr p = x + at * es;
        int rc = dtype == DTYPE_F64 ? CUBLAS_CHECK(cb->cublasDscal(h, part, (const double *)alpha, (double *)p, 1), err)
                                    : CUBLAS_CHECK(cb->cublasSscal(h, part, (const float *)alpha, (float *)p, 1), err);
        if (rc)
            return rc;
    }
    return 0;
}
