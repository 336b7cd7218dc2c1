/* blas.h — cuBLAS as the reference and the yardstick: row-major C = alpha*A*B + beta*C in strict
 * FP32 (CUBLAS_PEDANTIC_MATH: no TF32, no reduced-precision shortcuts) or FP64, on the engine's
 * stream in the device's primary context.
 *
 * ENGINE_CUBLAS_MATH=default runs FP32 and FP64 in cuBLAS's default math instead (what torch.matmul
 * gets with TF32 off: still no TF32, but cuBLAS free to choose its own algorithms), for both the
 * reference and the yardstick: a program's cuBLAS. torch.matmul's queued time against the pedantic
 * yardstick's at the same calls: FP32, 49 workload calls (H200), median 1.01x (0.92-1.22x); FP64 Gram
 * products (TN, K 65536-262144, H100) 0.77-0.93x, faster (docs/NOTES.md, "The yardstick"). This
 * setting lets one run say whether the math mode is the difference. */
#ifndef ENGINE_BLAS_H
#define ENGINE_BLAS_H

#include "err.h"
#include "gpu.h"
#include "layout.h"
#include "template.h"

typedef struct {
    void *handle;  /* cublasHandle_t */
    int version;   /* e.g. 130100 */
    bool pedantic; /* strict math (the default), or cuBLAS's default math (ENGINE_CUBLAS_MATH=default) */
} blas_t;

/* The math ENGINE_CUBLAS_MATH asks for: 0 with *pedantic set ("pedantic" or unset: true,
 * "default": false), or -1 with err naming the variable, its value and the two allowed (exit 2). */
int blas_math_from_env(bool *pedantic, err_t *err);

/* Load libcublas (once; the command does not link it): 0, or EXIT_SYSTEM with err naming what failed
 * (the library not found, a symbol missing). blas_open calls it; needs no GPU. */
int blas_load(err_t *err);
int blas_open(blas_t *b, gpu_t *g, err_t *err);
void blas_close(blas_t *b);

/* Row-major GEMM: A is M x K, B is K x N, C is M x N, all contiguous. alpha and beta point at a
 * float or a double, as dtype says. */
int blas_gemm(blas_t *b, dtype_t dtype, int M, int N, int K, const void *alpha, CUdeviceptr A, CUdeviceptr B,
              const void *beta, CUdeviceptr C, err_t *err);

/* The same in f32 on the TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32): the yardstick of the
 * tf32 accuracy class (accuracy.h). alpha and beta point at floats. */
int blas_gemm_tf32(blas_t *b, int M, int N, int K, const void *alpha, CUdeviceptr A, CUdeviceptr B, const void *beta,
                   CUdeviceptr C, err_t *err);

/* The same product in any layout (layout.h), batches included: cublasGemmStridedBatchedEx with
 * A and B swapped and the transposes carried over (row-major C = op(A) op(B) is column-major
 * C^T = op(B)^T op(A)^T). tf32: the TF32 tensor cores (f32 only); otherwise FP32 or FP64, pedantic
 * unless b says not.
 * Packed NN with one product takes blas_gemm's path (or blas_gemm_tf32's), so the yardstick there
 * is the call it always was. */
int blas_gemm_layout(blas_t *b, dtype_t dtype, bool tf32, int M, int N, int K, const layout_t *lay, const void *alpha,
                     CUdeviceptr A, CUdeviceptr B, const void *beta, CUdeviceptr C, err_t *err);

/* The half dtypes (bf16, f16): A and B of dtype, C of c_dtype (dtype, or f32 for the error bound
 * S, verify.h), alpha and beta floats, CUBLAS_COMPUTE_32F with reduced-precision reductions
 * disallowed (CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION: split-K sums stay FP32, as the
 * engine's kernels keep theirs) and the tensor cores allowed (default math for the call, pedantic
 * again after it). cublasGemmEx at packed NN with one product, cublasGemmStridedBatchedEx otherwise.
 * blas_gemm_layout takes this path for the half dtypes. */
int blas_gemm_half(blas_t *b, dtype_t dtype, dtype_t c_dtype, int M, int N, int K, const layout_t *lay,
                   const float *alpha, CUdeviceptr A, CUdeviceptr B, const float *beta, CUdeviceptr C, err_t *err);

/* x = alpha * x for n contiguous elements (K = 0: C = beta*C). f32 and f64. */
int blas_scal(blas_t *b, dtype_t dtype, size_t n, const void *alpha, CUdeviceptr x, err_t *err);

#endif
