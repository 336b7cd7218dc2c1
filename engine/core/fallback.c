/* fallback.c — see fallback.h. */
#define _GNU_SOURCE
#include "fallback.h"

#include "cublasdl.h"

#include <cublas_v2.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

int fallback_open(fallback_t *f, err_t *err)
{
    memset(f, 0, sizeof *f);
    const cublasdl_t *t = cublasdl_load(err);
    if (!t)
        return -1;
    const cublasdl_t *bl = t;
    f->bl = t;
    cublasHandle_t h;
    cublasStatus_t st = bl->cublasCreate(&h);
    if (st != CUBLAS_STATUS_SUCCESS)
        return err_set(err, ERR_SYSTEM, "engine", 0, 0, "cublasCreate failed: status %d", (int)st);
    /* bf16 and f16 calls sum in FP32 all the way, as the engine's kernels do: no split-K partial sums
     * rounded to the output type (the default allows it). f32 and f64 are not affected. */
    st = bl->cublasSetMathMode(h, CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
    if (st != CUBLAS_STATUS_SUCCESS) {
        bl->cublasDestroy(h);
        return err_set(err, ERR_SYSTEM, "engine", 0, 0, "cublasSetMathMode failed: status %d", (int)st);
    }
    f->handle = h;
    pthread_mutex_init(&f->lock, NULL);
    f->open = true;
    return 0;
}

void fallback_close(fallback_t *f)
{
    if (!f->open)
        return;
    f->bl->cublasDestroy((cublasHandle_t)f->handle);
    pthread_mutex_destroy(&f->lock);
    f->open = false;
}

static bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

bool fallback_fits(const apiarg_problem *p)
{
    return fits_int(p->M) && fits_int(p->N) && fits_int(p->K) && fits_int(p->lda) && fits_int(p->ldb) &&
           fits_int(p->ldc) && fits_int(p->batch);
}

int fallback_gemm(fallback_t *f, const apiarg_problem *p, double alpha, CUdeviceptr A, CUdeviceptr B, double beta,
                  CUdeviceptr C, CUstream stream, err_t *err)
{
    if (!f->open)
        return err_set(err, ERR_SYSTEM, "engine", 0, 0, "the cuBLAS fallback is not open");
    if (p->M == 0 || p->N == 0)
        return 0;
    /* Row-major C (M x N) is column-major C^T = op(B)^T op(A)^T: cuBLAS gets B first, N x M, and each
     * operand's stored form read column-major is its transpose, so each keeps its own flag. */
    cublasOperation_t ob = p->tb ? CUBLAS_OP_T : CUBLAS_OP_N, oa = p->ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    int m = (int)p->N, n = (int)p->M, k = (int)p->K;
    int lda = (int)p->ldb, ldb = (int)p->lda, ldc = (int)p->ldc;
    cublasStatus_t st;
    pthread_mutex_lock(&f->lock);
    cublasHandle_t h = (cublasHandle_t)f->handle;
    const cublasdl_t *bl = f->bl;
    st = bl->cublasSetStream(h, (cudaStream_t)stream);
    if (st == CUBLAS_STATUS_SUCCESS) {
        if (dtype_half(p->dtype)) {
            /* cublasGemmEx with FP32 compute, as the engine's half kernels compute (engine.h). */
            float af = (float)alpha, bf = (float)beta;
            cudaDataType_t t = p->dtype == DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_16F;
            const void *a = (const void *)(uintptr_t)B, *b = (const void *)(uintptr_t)A;
            void *c = (void *)(uintptr_t)C;
            st = p->batch > 1 ? bl->cublasGemmStridedBatchedEx(h, ob, oa, m, n, k, &af, a, t, lda, p->sb, b, t, ldb, p->sa,
                                                               &bf, c, t, ldc, p->sc, (int)p->batch, CUBLAS_COMPUTE_32F,
                                                               CUBLAS_GEMM_DEFAULT)
                              : bl->cublasGemmEx(h, ob, oa, m, n, k, &af, a, t, lda, b, t, ldb, &bf, c, t, ldc,
                                                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        } else if (p->dtype == DTYPE_F64) {
            const double *a = (const double *)(uintptr_t)B, *b = (const double *)(uintptr_t)A;
            double *c = (double *)(uintptr_t)C;
            st = p->batch > 1 ? bl->cublasDgemmStridedBatched(h, ob, oa, m, n, k, &alpha, a, lda, p->sb, b, ldb, p->sa,
                                                             &beta, c, ldc, p->sc, (int)p->batch)
                              : bl->cublasDgemm(h, ob, oa, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
        } else {
            float af = (float)alpha, bf = (float)beta;
            const float *a = (const float *)(uintptr_t)B, *b = (const float *)(uintptr_t)A;
            float *c = (float *)(uintptr_t)C;
            st = p->batch > 1 ? bl->cublasSgemmStridedBatched(h, ob, oa, m, n, k, &af, a, lda, p->sb, b, ldb, p->sa,
                                                             &bf, c, ldc, p->sc, (int)p->batch)
                              : bl->cublasSgemm(h, ob, oa, m, n, k, &af, a, lda, b, ldb, &bf, c, ldc);
        }
    }
    pthread_mutex_unlock(&f->lock);
    if (st != CUBLAS_STATUS_SUCCESS)
        return err_set(err, ERR_SYSTEM, "engine", 0, 0, "cuBLAS (the fallback while the kernel compiles) failed: status %d",
                       (int)st);
    return 0;
}
