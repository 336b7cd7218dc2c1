/* Accuracy classes (accuracy.h): the errors against an exact product, the class bounds, and the two
 * holes of the per-element screen that the classes close, simulated on the CPU: a dropped k-step at
 * K = 65536 and inputs rounded to TF32 pass the screen (verify.h) and fail class f32. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "accuracy.h"
#include "util.h"
#include "verify.h"

static void test_measure(void **state)
{
    (void)state;
    const double u = ldexp(1.0, -24);
    float got[4] = {1.0f, 2.0f, 0.0f, 5.0f};
    double ref[4] = {1.0, 2.0 + 4 * u * 2.0, 0.0, 5.0};
    float bound[4] = {1.0f, 2.0f, 0.0f, 10.0f};
    acc_err e;
    acc_measure(got, DTYPE_F32, ref, bound, 4, &e);
    assert_true(e.measured);
    assert_true(fabs(e.max_u - 4.0) < 1e-9);        /* 4 u of S = 2 */
    assert_true(fabs(e.mean_u - 1.0) < 1e-9);       /* (0 + 4 + 0 + 0) / 4 */
    got[2] = 1e-30f;                                 /* S = 0 and not exact: infinite */
    acc_measure(got, DTYPE_F32, ref, bound, 4, &e);
    assert_true(isinf(e.max_u));
    got[2] = NAN;                                    /* NaN never passes */
    acc_measure(got, DTYPE_F32, ref, bound, 4, &e);
    assert_true(isinf(e.max_u));
    char why[256];
    acc_err yard = {7.4, 0.28, true};
    assert_false(acc_check(ACC_F32, &e, &yard, why, sizeof why));
    assert_non_null(strstr(why, "accuracy class f32: max error"));
}

static void test_classes(void **state)
{
    (void)state;
    char why[256];
    acc_err yard = {7.4, 0.28, true};
    acc_err ok = {30.8, 4.56, true}, over_max = {30.81, 0.3, true}, over_mean = {3.0, 4.57, true};
    assert_true(acc_check(ACC_F32, &ok, &yard, why, sizeof why));
    assert_string_equal(why, "");
    assert_false(acc_check(ACC_F32, &over_max, &yard, why, sizeof why));
    assert_non_null(strstr(why, "max error 30.81 u > 30.8 u (2 x SGEMM's 7.4 u + 16 u)"));
    assert_false(acc_check(ACC_F64, &over_mean, &yard, why, sizeof why));
    assert_non_null(strstr(why, "accuracy class f64: mean error 4.57 u > 4.56 u (2 x DGEMM's 0.28 u + 4 u)"));
    assert_int_equal(acc_class_of(ACC_NATIVE, DTYPE_F32), ACC_F32);
    assert_int_equal(acc_class_of(ACC_NATIVE, DTYPE_F64), ACC_F64);
    assert_int_equal(acc_class_of(ACC_TF32, DTYPE_F32), ACC_CLASS_TF32);
    assert_string_equal(acc_class_name(ACC_CLASS_TF32), "tf32");
    acc_kind k;
    assert_int_equal(acc_kind_parse("tf32", &k), 0);
    assert_int_equal(k, ACC_TF32);
    assert_int_equal(acc_kind_parse("f64", &k), 0);
    assert_int_equal(k, ACC_NATIVE);
    assert_int_equal(acc_kind_parse("bf16", &k), 0); /* a dtype's name is its own class */
    assert_int_equal(k, ACC_NATIVE);
    assert_int_equal(acc_kind_parse("f8", &k), -1);
    assert_int_equal(acc_class_of(ACC_NATIVE, DTYPE_BF16), ACC_BF16);
    assert_int_equal(acc_class_of(ACC_NATIVE, DTYPE_F16), ACC_F16);
    assert_string_equal(acc_class_name(ACC_BF16), "bf16");
    assert_string_equal(acc_class_name(ACC_F16), "f16");
    /* The half classes accumulate in FP32: FP32's u. */
    assert_true(acc_unit_roundoff(ACC_BF16) == ldexp(1.0, -24));
    assert_true(acc_unit_roundoff(ACC_F16) == ldexp(1.0, -24));
    /* The screen's unit roundoff follows the class: TF32 keeps 10 bits of each input. */
    assert_true(acc_unit_roundoff(ACC_F32) == ldexp(1.0, -24));
    assert_true(acc_unit_roundoff(ACC_F64) == ldexp(1.0, -53));
    assert_true(acc_unit_roundoff(ACC_CLASS_TF32) == ldexp(1.0, -11));
}

/* TF32 keeps 10 bits of the mantissa: round to nearest, ties away (cvt.rna.tf32.f32). */
/* C = A B (beta 0, alpha 1) for an 8 x 8 x K problem: the exact product (double, each product of
 * floats is exact and the sum of 2^16 of them in double is far below f32's u), an SGEMM-like float
 * sum (eight interleaved FMA accumulators, added at the end), and the same kernel with a defect:
 * the k-step `drop` left out, or the inputs rounded to TF32 first. Returns the class verdict of the
 * defective kernel and whether the per-element screen passed it. */
static bool simulate(int64_t K, int64_t drop, bool tf32, bool *screen_ok)
{
    enum { M = 8, N = 8 };
    float *A = xmalloc(sizeof(float) * M * K), *B = xmalloc(sizeof(float) * K * N);
    rng_fill(A, DTYPE_F32, (size_t)(M * K), 1, 1);
    rng_fill(B, DTYPE_F32, (size_t)(K * N), 1, 2);
    double exact[M * N];
    float yard[M * N], bad[M * N], bound[M * N];
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double sum = 0, abs_sum = 0;
            float acc[8] = {0}, acc_bad[8] = {0};
            for (int64_t k = 0; k < K; k++) {
                float a = A[i * K + k], b = B[k * N + j];
                sum += (double)a * b;
                abs_sum += fabs((double)a * b);
                acc[k % 8] = fmaf(a, b, acc[k % 8]);
                if (k != drop)
                    acc_bad[k % 8] = tf32 ? fmaf(acc_tf32_round(a), acc_tf32_round(b), acc_bad[k % 8]) : fmaf(a, b, acc_bad[k % 8]);
            }
            float y = 0, z = 0;
            for (int t = 0; t < 8; t++) {
                y += acc[t];
                z += acc_bad[t];
            }
            exact[i * N + j] = sum;
            yard[i * N + j] = y;
            bad[i * N + j] = z;
            bound[i * N + j] = (float)abs_sum;
        }
    }
    acc_err ey, eb;
    acc_measure(yard, DTYPE_F32, exact, bound, M * N, &ey);
    acc_measure(bad, DTYPE_F32, exact, bound, M * N, &eb);
    verify_report rep;
    *screen_ok = verify_compare(bad, yard, bound, DTYPE_F32, M, N, K, &rep) == 0;
    char why[256];
    bool ok = acc_check(ACC_F32, &eb, &ey, why, sizeof why);
    free(A);
    free(B);
    return ok;
}

static void test_dropped_k_step(void **state)
{
    (void)state;
    bool screen;
    /* The defect-free kernel passes its class. */
    assert_true(simulate(65536, -1, false, &screen));
    assert_true(screen);
    /* One k-step left out: the screen lets it through at K = 65536 and 131072 (issue 24), the class
     * does not. */
    for (int64_t K = 65536; K <= 131072; K *= 2) {
        assert_false(simulate(K, K / 2, false, &screen));
        assert_true(screen);
    }
}

static void test_tf32_inputs(void **state)
{
    (void)state;
    bool screen;
    const int64_t ks[] = {64, 4096, 65536};
    for (int i = 0; i < 3; i++) {
        assert_false(simulate(ks[i], -1, true, &screen)); /* not FP32's error, at any K */
    }
    assert_true(screen); /* and at K = 65536 the screen passes it */
}

/* cvt.rna.tf32.f32's rounding: to nearest with 10 mantissa bits, ties away from zero (not to even). */
static void test_tf32_round(void **state)
{
    (void)state;
    const uint32_t in[] = {0x3F800000u, 0x3F800FFFu, 0x3F801000u, 0xBF801000u, 0x3F801001u, 0x3F803000u,
                           0x00001000u, 0x7F7FFFFFu, 0x7F800000u, 0xFF800000u};
    const uint32_t out[] = {0x3F800000u, 0x3F800000u, 0x3F802000u, 0xBF802000u, 0x3F802000u, 0x3F804000u,
                            0x00002000u, 0x7F800000u, 0x7F800000u, 0xFF800000u};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
        assert_int_equal(f32_bits(acc_tf32_round(f32_from_bits(in[i]))), out[i]);
    assert_true(isnan(acc_tf32_round(NAN)));
    float v[3] = {1.0f + 0x1p-11f, NAN, -3.0f};
    acc_tf32_round_all(v, 3);
    assert_true(v[0] == 1.0f + 0x1p-10f && isnan(v[1]) && v[2] == -3.0f);
}

static void test_err_larger(void **state)
{
    (void)state;
    acc_err a = {3.0, 1.0, true}, b = {2.0, 5.0, true}, none = {0}, inf = {INFINITY, 0.5, true};
    acc_err r = acc_err_larger(&a, &b);
    assert_true(r.max_u == 3.0 && r.mean_u == 5.0 && r.measured);
    r = acc_err_larger(&none, &b);
    assert_true(r.max_u == 2.0 && r.mean_u == 5.0 && r.measured);
    r = acc_err_larger(&a, &none);
    assert_true(r.max_u == 3.0 && r.mean_u == 1.0);
    r = acc_err_larger(&a, &inf);
    assert_true(isinf(r.max_u) && r.mean_u == 1.0);
}

/* At K = 1 cuBLAS FAST_TF32 computes in FP32 (seen on the H100), so its error is not TF32's: a TF32
 * kernel fails a class measured against it alone, and passes one whose yardstick includes TF32
 * arithmetic itself (the inputs rounded to TF32, multiplied exactly as SGEMM would). */
static void test_tf32_yardstick_k1(void **state)
{
    (void)state;
    enum { N = 64 };
    float a[N], b[N], fp32[N], tf32[N], bound[N];
    double exact[N];
    srand(7);
    for (int i = 0; i < N; i++) {
        a[i] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
        b[i] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
        exact[i] = (double)a[i] * b[i];
        fp32[i] = a[i] * b[i];
        tf32[i] = acc_tf32_round(a[i]) * acc_tf32_round(b[i]);
        bound[i] = fabsf(a[i] * b[i]);
    }
    acc_err fast, emulated, kernel;
    acc_measure(fp32, DTYPE_F32, exact, bound, N, &fast);
    acc_measure(tf32, DTYPE_F32, exact, bound, N, &emulated);
    acc_measure(tf32, DTYPE_F32, exact, bound, N, &kernel);
    char why[256];
    assert_false(acc_check(ACC_CLASS_TF32, &kernel, &fast, why, sizeof why));
    acc_err yard = acc_err_larger(&fast, &emulated);
    assert_true(acc_check(ACC_CLASS_TF32, &kernel, &yard, why, sizeof why));
    assert_false(acc_check(ACC_F32, &kernel, &fast, why, sizeof why)); /* f32 stays strict */
}

/* The half classes on an 8 x 8 x K problem (alpha 1, beta 0) of inputs drawn in the type (rng_fill
 * rounds them): the exact product in double; the yardstick as cuBLAS GemmEx computes, eight
 * interleaved FP32 accumulators rounded once to the type; a kernel under test that is one of
 *   HK_SEQ   one FP32 accumulator, rounded once (another order: must pass)
 *   HK_HALF  every partial sum rounded to the type (accumulating in half precision: must fail)
 *   HK_DROP  the yardstick's sums with k-step K/2 left out (must fail)
 * Returns the class verdict; *screen_ok says whether the element screen passed it. */
enum { HK_SEQ, HK_HALF, HK_DROP };

static double round_to(dtype_t d, double v)
{
    double h[1]; /* room for any dtype's element */
    elem_set(h, d, 0, v);
    return elem_get(h, d, 0);
}

static bool simulate_half(dtype_t dt, int64_t K, int kind, bool *screen_ok, acc_err *ek)
{
    enum { M = 8, N = 8 };
    uint16_t *A = xmalloc(sizeof(uint16_t) * M * K), *B = xmalloc(sizeof(uint16_t) * K * N);
    rng_fill(A, dt, (size_t)(M * K), 3, 1);
    rng_fill(B, dt, (size_t)(K * N), 3, 2);
    double exact[M * N];
    uint16_t yard[M * N], got[M * N];
    float bound[M * N];
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double sum = 0, abs_sum = 0, half_acc = 0;
            float acc[8] = {0}, seq = 0;
            for (int64_t k = 0; k < K; k++) {
                float a = (float)elem_get(A, dt, (size_t)(i * K + k)), b = (float)elem_get(B, dt, (size_t)(k * N + j));
                sum += (double)a * b;
                abs_sum += fabs((double)a * b);
                if (!(kind == HK_DROP && k == K / 2))
                    acc[k % 8] = fmaf(a, b, acc[k % 8]);
                seq = fmaf(a, b, seq);
                half_acc = round_to(dt, fmaf(a, b, (float)half_acc));
            }
            float y = 0;
            for (int t = 0; t < 8; t++)
                y += acc[t];
            exact[i * N + j] = sum;
            bound[i * N + j] = (float)abs_sum;
            elem_set(got, dt, (size_t)(i * N + j), kind == HK_SEQ ? seq : kind == HK_HALF ? half_acc : y);
            if (kind == HK_DROP) { /* the yardstick keeps every step */
                y = 0;
                for (int64_t k = 0; k < K; k++)
                    y = fmaf((float)elem_get(A, dt, (size_t)(i * K + k)), (float)elem_get(B, dt, (size_t)(k * N + j)), y);
            }
            elem_set(yard, dt, (size_t)(i * N + j), y);
        }
    }
    acc_err ey;
    acc_measure(yard, dt, exact, bound, M * N, &ey);
    acc_measure(got, dt, exact, bound, M * N, ek);
    verify_report rep;
    *screen_ok = verify_compare_u(got, yard, bound, dt, acc_unit_roundoff(acc_class_of(ACC_NATIVE, dt)), M, N, K, &rep) == 0;
    char why[256];
    bool ok = acc_check(acc_class_of(ACC_NATIVE, dt), ek, &ey, why, sizeof why);
    if (!ok)
        assert_non_null(strstr(why, dt == DTYPE_BF16 ? "accuracy class bf16: " : "accuracy class f16: "));
    free(A);
    free(B);
    return ok;
}

static void test_half_classes(void **state)
{
    (void)state;
    const dtype_t dts[2] = {DTYPE_BF16, DTYPE_F16};
    const int64_t ks[] = {64, 4096};
    for (int d = 0; d < 2; d++) {
        for (int i = 0; i < 2; i++) {
            bool screen;
            acc_err e;
            /* Another FP32 order, rounded once: within the class and the screen. */
            assert_true(simulate_half(dts[d], ks[i], HK_SEQ, &screen, &e));
            assert_true(screen);
            /* Accumulating in the half type: far outside the class. */
            assert_false(simulate_half(dts[d], ks[i], HK_HALF, &screen, &e));
            assert_true(e.mean_u > 100.0);
            /* A k-step left out. */
            assert_false(simulate_half(dts[d], ks[i], HK_DROP, &screen, &e));
        }
    }
}

/* The half classes' measure: the output's own rounding is not an error, anything past it is, in
 * FP32's u; NaN never passes. */
static void test_half_measure(void **state)
{
    (void)state;
    const double u = ldexp(1.0, -24);
    uint16_t got[3];
    double ref[3] = {1.0 + ldexp(1.0, -9), 3.0, 0.0}; /* bf16's nearest to ref[0] is 1.0: 2^-9 away */
    float bound[3] = {2.0f, 4.0f, 0.0f};
    elem_set(got, DTYPE_BF16, 0, 1.0);
    elem_set(got, DTYPE_BF16, 1, 3.0 + 0.0625); /* 3.0625: 1/16 off, 2^-8 * 3 of it the rounding's */
    elem_set(got, DTYPE_BF16, 2, 0.0);
    acc_err e;
    acc_measure(got, DTYPE_BF16, ref, bound, 3, &e);
    double want1 = (0.0625 - 3.0 * ldexp(1.0, -8)) / (u * 4.0);
    assert_true(fabs(e.max_u - want1) < 1e-6 * want1);
    assert_true(fabs(e.mean_u - want1 / 3.0) < 1e-6 * want1);
    elem_set(got, DTYPE_BF16, 2, NAN);
    acc_measure(got, DTYPE_BF16, ref, bound, 3, &e);
    assert_true(isinf(e.max_u));
    acc_err yard = {1.0, 0.1, true};
    char why[256];
    assert_false(acc_check(ACC_BF16, &e, &yard, why, sizeof why));
    assert_non_null(strstr(why, "accuracy class bf16: max error inf u"));
    assert_non_null(strstr(why, "GemmEx"));
    /* The screen: a NaN fails it whatever the tolerance. */
    uint16_t want[3];
    elem_set(want, DTYPE_BF16, 0, 1.0);
    elem_set(want, DTYPE_BF16, 1, 3.0);
    elem_set(want, DTYPE_BF16, 2, 0.0);
    verify_report rep;
    assert_int_equal(verify_compare_u(got, want, bound, DTYPE_BF16, u, 1, 3, 1, &rep), -1);
    assert_int_equal(rep.nonfinite, 1);
}

/* The CPU double-double reference agrees with plain double where double is exact (small integers),
 * and beats it where it is not. */
static void test_dd_reference(void **state)
{
    (void)state;
    double A[3] = {1e16, 1.0, -1e16}, B[3] = {1.0, 1.0, 1.0}, C0[1] = {0.5}, out[1];
    ref_gemm_dd(DTYPE_F64, 1, 1, 3, 1.0, A, B, 0.0, C0, out);
    assert_true(out[0] == 1.0); /* double alone gives 0 or 2 */
    ref_gemm_dd(DTYPE_F64, 1, 1, 3, 2.0, A, B, 4.0, C0, out);
    assert_true(out[0] == 4.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_measure),     cmocka_unit_test(test_classes),  cmocka_unit_test(test_dropped_k_step),
        cmocka_unit_test(test_tf32_inputs), cmocka_unit_test(test_dd_reference), cmocka_unit_test(test_tf32_round),
        cmocka_unit_test(test_err_larger),  cmocka_unit_test(test_tf32_yardstick_k1), cmocka_unit_test(test_half_classes),
        cmocka_unit_test(test_half_measure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
