/* blas.h — cuBLAS as the reference and the yardstick: row-major C = alpha*A*B + beta*C in FP32 or
 * FP64, on the engine's stream in the device's primary context, in cuBLAS's default math: what a
 * program calling cublasSgemm/cublasDgemm or torch.matmul (TF32 off) gets. No TF32 either way.
 *
 * ENGINE_CUBLAS_MATH=pedantic runs them in CUBLAS_PEDANTIC_MATH instead, the yardstick of every
 * figure before 2026-11-28 and of the regression guard's baseline (bench/regress.sh pins it). Why
 * the default changed: bench/yardstick.py on an H200 (bench/data/h200-yardstick-2026-11-28.jsonl)
 * found FP32 the same in both maths (within 0.3%) but pedantic FP64 1.05-1.81x slower than default
 * (96x96x50000 TN 0.059 vs 0.033 ms, 7936x7936x256 NN 0.728 vs 0.576 ms), with torch.matmul within
 * a few percent of default: the pedantic yardstick flattered FP64 against what programs get. */
#ifndef ENGINE_BLAS_H
#define ENGINE_BLAS_H

#include "err.h"
#include "gpu.h"
#include "layout.h"
#include "template.h"

typedef struct {
    void *handle;  /* cublasHandle_t */
    int version;   /* e.g. 130100 */
    bool pedantic; /* cuBLAS's default math (the default), or strict (ENGINE_CUBLAS_MATH=pedantic) */
} blas_t;

/* The math ENGINE_CUBLAS_MATH asks for: 0 with *pedantic set ("default" or unset: false,
 * "pedantic": true), or -1 with err naming the variable, its value and the two allowed (exit 2). */
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
