/* test_arch.c — architecture parsing, the per-arch table, peak rates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "arch.h"

static void test_parse(void **state)
{
    (void)state;
    int sm = 0;
    err_t err;
    err_clear(&err);
    assert_int_equal(arch_parse("sm_90", &sm, &err), 0);
    assert_int_equal(sm, 90);
    assert_int_equal(arch_parse("86", &sm, &err), 0);
    assert_int_equal(sm, 86);
    assert_int_equal(arch_parse("banana", &sm, &err), EXIT_INPUT);
    assert_non_null(strstr(err.text, "not an architecture"));
    err_clear(&err);
    assert_int_equal(arch_parse("sm_99", &sm, &err), EXIT_INPUT);
    assert_non_null(strstr(err.text, "not supported by NVRTC"));
    assert_true(arch_nvrtc_supports(80) && arch_nvrtc_supports(86) && arch_nvrtc_supports(90));
}

static void test_table_and_peaks(void **state)
{
    (void)state;
    const arch_info *h100 = arch_lookup(90), *ga = arch_lookup(86), *a100 = arch_lookup(80);
    assert_int_equal(h100->fp32_lanes, 128);
    assert_int_equal(h100->fp64_lanes, 64);
    assert_int_equal(h100->smem_optin, 232448);
    assert_int_equal(ga->fp64_lanes, 2);
    assert_int_equal(ga->smem_optin, 101376);
    assert_int_equal(a100->fp32_lanes, 64);
    assert_int_equal(arch_lookup(89)->sm, 89);
    assert_int_equal(arch_lookup(91)->sm, 90); /* nearest known of the same major */
    /* DEVICE.md: 132 SMs x 128 lanes x 2 x 1.98 GHz = 66.9 TFLOP/s; FP64 33.5. */
    assert_true(fabs(arch_peak_flops(128, 132, 1.98e9) - 66.9e12) < 0.1e12);
    assert_true(fabs(arch_peak_flops(64, 132, 1.98e9) - 33.45e12) < 0.1e12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_table_and_peaks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
