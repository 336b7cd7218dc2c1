/* reference.h — the FP64-accurate product that verification measures errors against (accuracy.h).
 *
 * f32 problems: A, B and C0 widened to double on the device and multiplied by cuBLAS DGEMM. A
 * product of two floats is exact in double and the sums add at most K 2^-53 of S, 2^-13 of an f32
 * unit roundoff at K = 65536: the reference is exact as far as an f32 kernel can tell.
 * bf16 and f16 problems: the same, from their 16-bit inputs (exact in double, and so are their
 * products: the reference is exact as far as their kernels can tell, FP32 accumulation included).
 * f64 problems: a double-double GEMM kernel of ours. Each product is split exactly into a double
 * and its rounding error (fma), and the sum is kept as an unevaluated pair of doubles, so the result
 * is within about one ulp of the exact one for any K. The intrinsics (__dmul_rn, __dadd_rn,
 * __fma_rn) keep the compiler from fusing the error-free transformations. `--cross-check` compares
 * it with the same arithmetic on the CPU (verify.h, ref_gemm_dd). */
#ifndef ENGINE_REFERENCE_H
#define ENGINE_REFERENCE_H

#include "blas.h"
#include "err.h"
#include "gpu.h"
#include "template.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    gpu_module mod;
    CUfunction dd, widen, widen16;
    bool ready;
} reference_t;

int reference_init(gpu_t *g, reference_t *r, err_t *err);
void reference_free(gpu_t *g, reference_t *r);

/* Device memory reference_gemm takes besides its output (widened inputs, for f32), from the elements
 * the stored A and B span (layout_span_a/b). */
size_t reference_scratch_bytes(dtype_t dtype, int64_t span_a, int64_t span_b);

/* out64 (doubles, laid out as C: ldc, sc; span_c of them) = alpha * op(A) op(B) + beta * C0 to FP64
 * accuracy or better, for each product of the batch; A, B and C0 are dtype arrays in the layout lay
 * (span_a, span_b, span_c elements). Enqueued on the GPU's stream. */
int reference_gemm(reference_t *r, gpu_t *g, blas_t *b, dtype_t dtype, int64_t M, int64_t N, int64_t K,
                   const layout_t *lay, double alpha, CUdeviceptr A, CUdeviceptr B, double beta, CUdeviceptr C0,
                   CUdeviceptr out64, int64_t span_a, int64_t span_b, int64_t span_c, err_t *err);

#endif
