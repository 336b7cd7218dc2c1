/* verify.h — inputs, references and the element-wise check.
 *
 * Tolerance. Both the kernel and the reference round every product and partial sum; their
 * difference for C[i][j] is bounded by a multiple of the unit roundoff u times
 *     S[i][j] = |alpha| * sum_k |A[i][k]| |B[k][j]| + |beta| |C0[i][j]|
 * (Higham, Accuracy and Stability of Numerical Algorithms, sec. 3.1). The worst case grows like K,
 * but rounding errors of independent terms behave like a random walk (Higham & Mary's
 * probabilistic bound), so we allow
 *     tol[i][j] = u * (16 + 8 * sqrt(K)) * S[i][j] + tiny
 * with u = 2^-24 (f32) or 2^-53 (f64): 16u covers the epilogue (alpha*acc + beta*c, rounded in
 * either order, by both sides) and 8 sqrt(K) u is many standard deviations of the accumulated
 * error, whatever order a kernel sums in (split-K included). The half dtypes accumulate in FP32
 * and round the result once to their 8 (bf16) or 11 (f16) bits: there u is FP32's and each side's
 * last rounding is allowed on top, u_h |want| for each (u_h = 2^-8 or 2^-11), and S is held as
 * float (dtype_compute: f16's range ends at 65504). A missing or doubled product term
 * moves an element by |A[i][k] B[k][j]|, S/K on average: for K = 2048 that is 4.9e-4 S against
 * a tolerance of 2.3e-5 S. NaN and Inf never pass, whatever the tolerance. */
#ifndef ENGINE_VERIFY_H
#define ENGINE_VERIFY_H

#include "half.h"
#include "template.h"

#include <stddef.h>
#include <stdint.h>

/* Fill n elements with values uniform in [-1, 1) from (seed, stream): element i depends only on
 * (seed, stream, i), so A, B and C0 never share values and a shape change keeps the generator. In
 * the half dtypes each value is rounded to the type: what is stored is what every product reads. */
void rng_fill(void *buf, dtype_t dtype, size_t n, uint64_t seed, uint64_t stream);

/* Unit roundoff of the type (of its storage: 2^-8 for bf16, 2^-11 for f16) and the tolerance factor
 * above (u * (16 + 8 sqrt(K))). */
double verify_unit_roundoff(dtype_t dtype);
double verify_tol_factor(dtype_t dtype, int64_t K);

#define VERIFY_MAX_SHOWN 10
typedef struct {
    int64_t row, col;
    double got, want, tol;
} mismatch;

typedef struct {
    size_t checked;
    size_t bad;          /* elements outside tolerance, NaN/Inf included */
    size_t nonfinite;    /* of which NaN or Inf in the kernel's output */
    double max_err;      /* largest |got - want| over finite elements */
    double max_ratio;    /* largest |got - want| / tol: below 1 passes */
    mismatch shown[VERIFY_MAX_SHOWN];
    size_t nshown;
} verify_report;

/* Compare got with want element-wise; bound holds S (see above). All three are M x N row-major
 * arrays of dtype, bound of dtype_compute(dtype). Returns 0 when every element passes. */
int verify_compare(const void *got, const void *want, const void *bound, dtype_t dtype, int64_t M, int64_t N,
                   int64_t K, verify_report *rep);
/* The same with the unit roundoff u of the kernel's accuracy class instead of the dtype's: a TF32
 * kernel's inputs keep 10 bits, so its screen is u = 2^-11 (accuracy.h, acc_unit_roundoff). */
int verify_compare_u(const void *got, const void *want, const void *bound, dtype_t dtype, double u, int64_t M,
                     int64_t N, int64_t K, verify_report *rep);

/* Reference GEMM on the CPU in double precision with Kahan-compensated sums, for checking cuBLAS
 * itself (--cross-check). Inputs are dtype arrays; out and out_bound are double M x N
 * (out_bound gets S). */
void ref_gemm_kahan(dtype_t dtype, int64_t M, int64_t N, int64_t K, double alpha, const void *A, const void *B,
                    double beta, const void *C0, double *out, double *out_bound);

/* The product to double-double accuracy on the CPU (the arithmetic of reference.h's GPU kernel:
 * exact products through fma, compensated sums), rounded to double: checks that kernel in
 * --cross-check at small shapes. out is double M x N. */
void ref_gemm_dd(dtype_t dtype, int64_t M, int64_t N, int64_t K, double alpha, const void *A, const void *B,
                 double beta, const void *C0, double *out);

/* Element i of a dtype array as a double. */
static inline double elem_get(const void *p, dtype_t d, size_t i)
{
    switch (d) {
    case DTYPE_F64: return ((const double *)p)[i];
    case DTYPE_BF16: return (double)bf16_to_float(((const uint16_t *)p)[i]);
    case DTYPE_F16: return (double)f16_to_float(((const uint16_t *)p)[i]);
    default: return (double)((const float *)p)[i];
    }
}

/* v rounded to nearest in dtype, stored as element i of a dtype array. */
void elem_set(void *p, dtype_t d, size_t i, double v);

#endif
