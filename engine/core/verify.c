/* verify.c — see verify.h. */
#include "verify.h"

#include <float.h>
#include <math.h>
#include <string.h>

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

void rng_fill(void *buf, dtype_t dtype, size_t n, uint64_t seed, uint64_t stream)
{
    uint64_t base = splitmix64(seed ^ splitmix64(stream + 0x5851F42D4C957F2DULL));
    for (size_t i = 0; i < n; i++) {
        uint64_t r = splitmix64(base + i);
        double u = (double)(r >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) with 53 bits */
        elem_set(buf, dtype, i, 2.0 * u - 1.0);
    }
}

void elem_set(void *p, dtype_t d, size_t i, double v)
{
    switch (d) {
    case DTYPE_F64: ((double *)p)[i] = v; break;
    /* Through float: a double rounded to float and then to 16 bits can round twice, which only a
     * tie of the second rounding makes differ; the values stored are the type's either way. */
    case DTYPE_BF16: ((uint16_t *)p)[i] = float_to_bf16((float)v); break;
    case DTYPE_F16: ((uint16_t *)p)[i] = float_to_f16((float)v); break;
    default: ((float *)p)[i] = (float)v; break;
    }
}

double verify_unit_roundoff(dtype_t dtype)
{
    return ldexp(1.0, dtype == DTYPE_F64 ? -53 : dtype == DTYPE_BF16 ? -8 : dtype == DTYPE_F16 ? -11 : -24);
}

double verify_tol_factor(dtype_t dtype, int64_t K)
{
    return verify_unit_roundoff(dtype) * (16.0 + 8.0 * sqrt((double)K));
}

int verify_compare(const void *got, const void *want, const void *bound, dtype_t dtype, int64_t M, int64_t N,
                   int64_t K, verify_report *rep)
{
    return verify_compare_u(got, want, bound, dtype, verify_unit_roundoff(dtype), M, N, K, rep);
}

int verify_compare_u(const void *got, const void *want, const void *bound, dtype_t dtype, double u, int64_t M,
                     int64_t N, int64_t K, verify_report *rep)
{
    memset(rep, 0, sizeof *rep);
    const double f = u * (16.0 + 8.0 * sqrt((double)K));
    /* The half types: each side's last rounding to the type (verify.h); f16's results below 2^-14
     * are its subnormals, 2^-24 apart. */
    const double last = dtype_half(dtype) ? verify_unit_roundoff(dtype) : 0.0;
    const double tiny = dtype == DTYPE_F64 ? DBL_MIN : dtype == DTYPE_F16 ? ldexp(1.0, -24) : FLT_MIN;
    const dtype_t bt = dtype_compute(dtype);
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++) {
            size_t idx = (size_t)(i * N + j);
            double g = elem_get(got, dtype, idx), w = elem_get(want, dtype, idx);
            double tol = f * fabs(elem_get(bound, bt, idx)) + 2.0 * last * fabs(w) + tiny;
            double e = fabs(g - w);
            bool finite = isfinite(g) && isfinite(w);
            bool ok = finite && e <= tol;
            rep->checked++;
            if (finite) {
                if (e > rep->max_err)
                    rep->max_err = e;
                if (e / tol > rep->max_ratio)
                    rep->max_ratio = e / tol;
            } else if (!isfinite(g)) {
                rep->nonfinite++;
            }
            if (!ok) {
                rep->bad++;
                if (rep->nshown < VERIFY_MAX_SHOWN)
                    rep->shown[rep->nshown++] = (mismatch){i, j, g, w, tol};
            }
        }
    }
    return rep->bad ? -1 : 0;
}

/* Kahan summation keeps the reference's own error near one rounding of the final sum, so it
 * measures cuBLAS rather than itself. */
void ref_gemm_kahan(dtype_t dtype, int64_t M, int64_t N, int64_t K, double alpha, const void *A, const void *B,
                    double beta, const void *C0, double *out, double *out_bound)
{
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++) {
            double sum = 0.0, comp = 0.0, abs_sum = 0.0;
            for (int64_t k = 0; k < K; k++) {
                double p = elem_get(A, dtype, (size_t)(i * K + k)) * elem_get(B, dtype, (size_t)(k * N + j));
                double y = p - comp;
                double t = sum + y;
                comp = (t - sum) - y;
                sum = t;
                abs_sum += fabs(p);
            }
            double c = beta != 0.0 ? elem_get(C0, dtype, (size_t)(i * N + j)) : 0.0;
            out[i * N + j] = alpha * sum + beta * c;
            if (out_bound)
                out_bound[i * N + j] = fabs(alpha) * abs_sum + fabs(beta) * fabs(c);
        }
    }
}

/* (hi, lo) += (p, e): TwoSum of the leading parts, then the trailing parts, renormalised. */
static void dd_add(double *hi, double *lo, double p, double e)
{
    double s = *hi + p, bb = s - *hi;
    double t = (*hi - (s - bb)) + (p - bb);
    t += *lo + e;
    *hi = s + t;
    *lo = t - (*hi - s);
}

void ref_gemm_dd(dtype_t dtype, int64_t M, int64_t N, int64_t K, double alpha, const void *A, const void *B,
                 double beta, const void *C0, double *out)
{
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++) {
            double hi = 0.0, lo = 0.0;
            for (int64_t k = 0; k < K; k++) {
                double a = elem_get(A, dtype, (size_t)(i * K + k)), b = elem_get(B, dtype, (size_t)(k * N + j));
                double p = a * b;
                dd_add(&hi, &lo, p, fma(a, b, -p));
            }
            double ah = alpha * hi, rh = 0.0, rl = 0.0;
            dd_add(&rh, &rl, ah, fma(alpha, hi, -ah) + alpha * lo);
            if (beta != 0.0) {
                double c = elem_get(C0, dtype, (size_t)(i * N + j)), bc = beta * c;
                dd_add(&rh, &rl, bc, fma(beta, c, -bc));
            }
            out[i * N + j] = rh + rl;
        }
    }
}
