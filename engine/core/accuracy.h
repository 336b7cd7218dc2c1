/* accuracy.h — how far a kernel's C is from the exact product, and whether that is the error of its
 * accuracy class.
 *
 * Verification's first screen (verify.h) bounds each element's distance from cuBLAS by
 * u (16 + 8 sqrt(K)) S; it admits TF32 rounding and, at K = 65536, a dropped k-step. So every
 * verification also measures each element's error against an FP64-accurate reference
 * (reference.h), in units of u S, where u is the dtype's unit roundoff and
 *     S[i][j] = |alpha| sum_k |A[i][k]| |B[k][j]| + |beta| |C0[i][j]|,
 * and takes the largest and the mean over C. cuBLAS's own result on the same inputs is measured the
 * same way, and a class bounds the kernel's figures by cuBLAS's:
 *     f32   max <= 2 max(SGEMM) + 16 u,   mean <= 2 mean(SGEMM) + 4 u   (strict FP32 kernels)
 *     f64   the same against DGEMM                                       (FP64 kernels)
 *     tf32  the same against TF32 arithmetic: the larger (max and mean apart) of cuBLAS FAST_TF32's
 *           error and that of strict SGEMM on the inputs rounded to TF32 (acc_tf32_round), since
 *           cuBLAS FAST_TF32 does not always take the TF32 path (at K = 1 it computes in FP32)
 *     bf16, f16  the same against cuBLAS GemmEx (CUBLAS_COMPUTE_32F) on the same inputs, with u
 *           FP32's (2^-24: the accumulation's) and each element's error taken beyond its last
 *           rounding, the one to the output type: max(0, |got - exact| - u_h |exact| - eta) with
 *           u_h = 2^-8 (bf16) or 2^-11 (f16), eta half of f16's least subnormal (2^-25; 0 in bf16).
 *           A kernel that accumulates in FP32 and rounds once errs by its FP32 sums alone, as an
 *           f32 kernel does; one that accumulates in the half type errs by about sqrt(K) u_h times
 *           its partial sums, thousands of these u (tests/unit/test_accuracy.c)
 * Measured on the H100 at 4096^3: SGEMM max 7.4 u, mean 0.28 u; TF32 max 497 u, mean 73 u. A
 * dropped k-step at K moves its elements by about 2^24 / K u (256 u at 65536), far beyond the f32
 * class; summation orders of FP32 kernels (split-K, sliced K) stay within it. */
#ifndef ENGINE_ACCURACY_H
#define ENGINE_ACCURACY_H

#include "template.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum { ACC_NATIVE = 0, ACC_TF32 } acc_kind; /* native: the dtype's own class (f32, f64, bf16, f16) */
typedef enum { ACC_F32 = 0, ACC_F64, ACC_CLASS_TF32, ACC_BF16, ACC_F16 } acc_class;

/* The class of a kernel of this dtype: its own for ACC_NATIVE, tf32 for ACC_TF32. */
acc_class acc_class_of(acc_kind kind, dtype_t dtype);
const char *acc_class_name(acc_class c);
/* The unit roundoff of the class's arithmetic: 2^-24 (f32; bf16 and f16, which accumulate in FP32),
 * 2^-53 (f64), 2^-11 (tf32: 10 bits kept of each input), for the per-element screen (verify.h) of a
 * kernel of that class. */
double acc_unit_roundoff(acc_class c);
/* A dtype's name (its own class) or "tf32" (a config's or template's "accuracy"): 0, or -1 when unknown. */
int acc_kind_parse(const char *text, acc_kind *kind);

typedef struct {
    double max_u;  /* largest |got - exact| / (u S) over C; +inf when an element is not finite */
    double mean_u; /* its mean */
    bool measured; /* false: no reference (it did not fit in memory), nothing to judge */
} acc_err;

/* What one verification found: the kernel's class, its errors and its yardstick's. */
typedef struct {
    acc_class cls;
    acc_err kernel;
    acc_err yardstick; /* cuBLAS SGEMM / DGEMM / TF32 / GemmEx on the same inputs */
    const char *reference; /* "dgemm" (f32 inputs widened), "dd" (double-double), "none" */
} acc_verdict;

/* Errors of n elements of got (a dtype array) against ref (double), S in bound (dtype_compute(dtype)):
 * in units of u S, u the class's (beyond the last rounding in bf16 and f16, above). An element with
 * S = 0 counts 0 when it is within that rounding of the reference and +inf otherwise. */
void acc_measure(const void *got, dtype_t dtype, const double *ref, const void *bound, size_t n, acc_err *out);

/* x rounded to TF32 as cvt.rna.tf32.f32 does: to nearest, ties away from zero, 10 of the 23
 * mantissa bits kept (the other 13 zero); Inf and NaN unchanged. */
float acc_tf32_round(float x);
/* The same for n floats in place. */
void acc_tf32_round_all(float *x, size_t n);
/* The larger of two measurements, max and mean apart (the tf32 class's yardstick). */
acc_err acc_err_larger(const acc_err *a, const acc_err *b);

/* Whether kernel's errors are those of class c, given the errors of its cuBLAS yardstick on the
 * same inputs. When not, why says which bound broke and by how much ("max error 812 u > 30.8 u
 * (2 x cuBLAS's 7.4 u + 16 u)"). */
bool acc_check(acc_class c, const acc_err *kernel, const acc_err *yardstick, char *why, size_t whylen);

#endif
