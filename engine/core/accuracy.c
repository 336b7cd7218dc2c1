/* accuracy.c — see accuracy.h. */
#include "accuracy.h"

#include "verify.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The class bounds: a kernel may err twice as much as its yardstick plus this many u. */
#define ACC_MAX_SLACK_U 16.0
#define ACC_MEAN_SLACK_U 4.0

acc_class acc_class_of(acc_kind kind, dtype_t dtype)
{
    if (kind == ACC_TF32)
        return ACC_CLASS_TF32;
    return dtype == DTYPE_F64 ? ACC_F64 : dtype == DTYPE_BF16 ? ACC_BF16 : dtype == DTYPE_F16 ? ACC_F16 : ACC_F32;
}

double acc_unit_roundoff(acc_class c) { return ldexp(1.0, c == ACC_F64 ? -53 : c == ACC_CLASS_TF32 ? -11 : -24); }

const char *acc_class_name(acc_class c)
{
    switch (c) {
    case ACC_F64: return "f64";
    case ACC_CLASS_TF32: return "tf32";
    case ACC_BF16: return "bf16";
    case ACC_F16: return "f16";
    default: return "f32";
    }
}

int acc_kind_parse(const char *text, acc_kind *kind)
{
    dtype_t d;
    if (dtype_parse(text, &d) == 0) {
        *kind = ACC_NATIVE;
        return 0;
    }
    if (strcmp(text, "tf32") == 0) {
        *kind = ACC_TF32;
        return 0;
    }
    return -1;
}

void acc_measure(const void *got, dtype_t dtype, const double *ref, const void *bound, size_t n, acc_err *out)
{
    /* The half types: FP32's u, and the output's own rounding taken off (accuracy.h). */
    const double u = verify_unit_roundoff(dtype_compute(dtype));
    const double u_last = dtype_half(dtype) ? verify_unit_roundoff(dtype) : 0.0;
    const double eta = dtype == DTYPE_F16 ? ldexp(1.0, -25) : 0.0;
    const dtype_t bt = dtype_compute(dtype);
    double max = 0.0, sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        double g = elem_get(got, dtype, i), s = fabs(elem_get(bound, bt, i));
        double d = fabs(g - ref[i]), e;
        if (u_last > 0.0) {
            double last = u_last * fabs(ref[i]) + eta;
            d = d <= last ? 0.0 : d - last; /* a NaN d stays NaN */
        }
        if (!isfinite(g))
            e = INFINITY;
        else if (s > 0.0)
            e = d / (u * s);
        else
            e = d == 0.0 ? 0.0 : INFINITY;
        if (!(e <= max)) /* NaN-safe: a NaN error is the largest */
            max = isnan(e) ? INFINITY : e;
        sum += e;
    }
    out->max_u = max;
    out->mean_u = n ? sum / (double)n : 0.0;
    out->measured = true;
}

float acc_tf32_round(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    if ((b & 0x7F800000u) == 0x7F800000u) /* Inf, NaN */
        return x;
    /* Half of the lowest kept bit (bit 13) added to the magnitude bits: a tie rounds away from zero,
     * a carry into the exponent is the rounding up it is (to Inf past the largest float). */
    b = (b + 0x1000u) & 0xFFFFE000u;
    memcpy(&x, &b, sizeof x);
    return x;
}

void acc_tf32_round_all(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = acc_tf32_round(x[i]);
}

acc_err acc_err_larger(const acc_err *a, const acc_err *b)
{
    acc_err r = *a;
    if (!b->measured)
        return r;
    if (!a->measured)
        return *b;
    /* NaN-safe: a NaN figure is the larger */
    r.max_u = a->max_u >= b->max_u || isnan(a->max_u) ? a->max_u : b->max_u;
    r.mean_u = a->mean_u >= b->mean_u || isnan(a->mean_u) ? a->mean_u : b->mean_u;
    return r;
}

bool acc_check(acc_class c, const acc_err *kernel, const acc_err *yardstick, char *why, size_t whylen)
{
    double max_lim = 2.0 * yardstick->max_u + ACC_MAX_SLACK_U;
    double mean_lim = 2.0 * yardstick->mean_u + ACC_MEAN_SLACK_U;
    const char *who = c == ACC_F64 ? "DGEMM" : c == ACC_CLASS_TF32 ? "TF32" : c == ACC_F32 ? "SGEMM" : "GemmEx";
    if (!(kernel->max_u <= max_lim)) {
        snprintf(why, whylen, "accuracy class %s: max error %.4g u > %.4g u (2 x %s's %.3g u + %g u)", acc_class_name(c),
                 kernel->max_u, max_lim, who, yardstick->max_u, ACC_MAX_SLACK_U);
        return false;
    }
    if (!(kernel->mean_u <= mean_lim)) {
        snprintf(why, whylen, "accuracy class %s: mean error %.4g u > %.4g u (2 x %s's %.3g u + %g u)",
                 acc_class_name(c), kernel->mean_u, mean_lim, who, yardstick->mean_u, ACC_MEAN_SLACK_U);
        return false;
    }
    if (whylen)
        why[0] = '\0';
    return true;
}
