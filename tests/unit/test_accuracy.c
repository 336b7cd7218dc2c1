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
    assert_int_equal(acc_kind_parse("bf16", &k), -1);
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

static float from_bits(uint32_t b)
{
    float x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static uint32_t bits_of(float x)
{
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
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
        assert_int_equal(bits_of(acc_tf32_round(from_bits(in[i]))), out[i]);
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
        cmocka_unit_test(test_err_larger),  cmocka_unit_test(test_tf32_yardstick_k1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
