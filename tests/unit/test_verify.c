/* test_verify.c — the tolerance, NaN handling, the generator and the CPU reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "verify.h"

static void test_rng(void **state)
{
    (void)state;
    float a[1000], b[1000];
    rng_fill(a, DTYPE_F32, 1000, 7, 1);
    rng_fill(b, DTYPE_F32, 1000, 7, 1);
    assert_memory_equal(a, b, sizeof a); /* seeded: the same every time */
    rng_fill(b, DTYPE_F32, 1000, 7, 2);
    assert_true(memcmp(a, b, sizeof a) != 0); /* streams differ */
    double lo = 1, hi = -1, sum = 0;
    for (int i = 0; i < 1000; i++) {
        assert_true(a[i] >= -1.0f && a[i] < 1.0f);
        lo = fmin(lo, a[i]);
        hi = fmax(hi, a[i]);
        sum += a[i];
    }
    assert_true(lo < -0.9 && hi > 0.9 && fabs(sum / 1000) < 0.1); /* spread over the range */
}

static void test_tolerance_grows_with_k(void **state)
{
    (void)state;
    double u = verify_unit_roundoff(DTYPE_F32);
    assert_true(u == ldexp(1.0, -24));
    assert_true(verify_tol_factor(DTYPE_F32, 1) == u * 24);
    assert_true(verify_tol_factor(DTYPE_F32, 2048) > verify_tol_factor(DTYPE_F32, 128));
    assert_true(verify_tol_factor(DTYPE_F64, 2048) < 1e-13);
}

static void test_compare(void **state)
{
    (void)state;
    float want[4] = {1.0f, -2.0f, 3.0f, 0.0f}, bound[4] = {10.f, 10.f, 10.f, 10.f}, got[4];
    verify_report rep;
    memcpy(got, want, sizeof got);
    assert_int_equal(verify_compare(got, want, bound, DTYPE_F32, 2, 2, 64, &rep), 0);
    assert_int_equal(rep.checked, 4);
    /* Within tolerance: a few ulps of the bound. */
    got[1] = want[1] + 10.f * 8 * ldexpf(1.f, -24);
    assert_int_equal(verify_compare(got, want, bound, DTYPE_F32, 2, 2, 64, &rep), 0);
    /* A whole missing product term (|a b| ~ bound / K) is caught. */
    got[1] = want[1] + 10.f / 64;
    assert_int_equal(verify_compare(got, want, bound, DTYPE_F32, 2, 2, 64, &rep), -1);
    assert_int_equal(rep.bad, 1);
    assert_int_equal(rep.shown[0].row, 0);
    assert_int_equal(rep.shown[0].col, 1);
    /* NaN and Inf never pass, whatever the tolerance. */
    memcpy(got, want, sizeof got);
    got[3] = NAN;
    got[2] = INFINITY;
    float huge[4] = {1e30f, 1e30f, 1e30f, 1e30f};
    assert_int_equal(verify_compare(got, want, huge, DTYPE_F32, 2, 2, 64, &rep), -1);
    assert_int_equal(rep.bad, 2);
    assert_int_equal(rep.nonfinite, 2);
    /* A NaN in the reference fails too. */
    memcpy(got, want, sizeof got);
    float want_nan[4] = {1.0f, -2.0f, 3.0f, NAN};
    got[3] = NAN;
    assert_int_equal(verify_compare(got, want_nan, bound, DTYPE_F32, 2, 2, 64, &rep), -1);
}

static void test_reference_known_products(void **state)
{
    (void)state;
    /* [1 2; 3 4] x [5 6; 7 8] = [19 22; 43 50]; alpha 2, beta 0.5 over C0 = [1 1; 1 1]. */
    double A[4] = {1, 2, 3, 4}, B[4] = {5, 6, 7, 8}, C0[4] = {1, 1, 1, 1}, out[4], bound[4];
    ref_gemm_kahan(DTYPE_F64, 2, 2, 2, 2.0, A, B, 0.5, C0, out, bound);
    assert_true(out[0] == 38.5 && out[1] == 44.5 && out[2] == 86.5 && out[3] == 100.5);
    assert_true(bound[0] == 2.0 * 19 + 0.5);
    /* beta = 0 never reads C0: a NaN there must not reach the result. */
    double C0nan[4] = {NAN, NAN, NAN, NAN};
    ref_gemm_kahan(DTYPE_F64, 2, 2, 2, 1.0, A, B, 0.0, C0nan, out, NULL);
    assert_true(out[3] == 50.0);
    /* Non-square, f32 inputs: (1x3) x (3x2). */
    float a[3] = {1, 2, 3}, b[6] = {1, 0, 0, 1, 1, 1};
    ref_gemm_kahan(DTYPE_F32, 1, 2, 3, 1.0, a, b, 0.0, NULL, out, NULL);
    assert_true(out[0] == 4.0 && out[1] == 5.0);
}

static void test_reference_is_compensated(void **state)
{
    (void)state;
    /* 1 + 1e-16 * 1e4 terms: a plain double sum loses every small term, Kahan keeps them. */
    enum { K = 10001 };
    static double A[K], B[K];
    A[0] = 1.0;
    B[0] = 1.0;
    for (int k = 1; k < K; k++) {
        A[k] = 1e-16;
        B[k] = 1.0;
    }
    double out;
    ref_gemm_kahan(DTYPE_F64, 1, 1, K, 1.0, A, B, 0.0, NULL, &out, NULL);
    assert_true(fabs(out - (1.0 + 1e-12)) < 1e-15);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rng),
        cmocka_unit_test(test_tolerance_grows_with_k),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_reference_known_products),
        cmocka_unit_test(test_reference_is_compensated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
