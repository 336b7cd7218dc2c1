/* test_arch.c — architecture parsing, the per-arch table, peak rates, resident blocks per SM. */
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

/* arch_occupancy against the CUDA occupancy calculator's arithmetic: registers in units of 256 per
 * warp out of 64K, warps out of the SM's threads, shared memory with 1 KiB reserved per block, and
 * the blocks-per-SM cap; the smallest limit wins. */
static void test_occupancy(void **state)
{
    (void)state;
    const arch_info *h100 = arch_lookup(90), *ga = arch_lookup(86), *tu = arch_lookup(75);
    /* Registers limit: 128 regs x 256 threads = 16 warps' worth of 4096 each: 2 blocks (25 %). */
    assert_int_equal(arch_occupancy(h100, 256, 128, 16384), 2);
    /* Threads limit: 256-thread blocks, 2048 threads per SM. */
    assert_int_equal(arch_occupancy(h100, 256, 32, 0), 8);
    assert_int_equal(arch_occupancy(h100, 1024, 32, 0), 2);
    /* Registers rounded up per warp: 255 -> 8192 per warp, 8 warps per SM: one 256-thread block. */
    assert_int_equal(arch_occupancy(h100, 256, 255, 0), 1);
    assert_int_equal(arch_occupancy(h100, 256, 57, 0), 4); /* 57*32 = 1824 -> 2048 per warp: 32 warps */
    /* Blocks-per-SM cap: tiny blocks. */
    assert_int_equal(arch_occupancy(h100, 32, 16, 0), 32);
    assert_int_equal(arch_occupancy(h100, 32, 0, 0), 32);
    /* Partial warps count whole: 33 threads are two warps. */
    assert_int_equal(arch_occupancy(h100, 33, 32, 0), 32);
    assert_int_equal(arch_occupancy(h100, 96, 32, 0), 21); /* 2048 / 96 */
    /* Shared memory with the 1 KiB the system keeps per block. */
    assert_int_equal(arch_occupancy(h100, 128, 32, 100000), 2);        /* 233472 / 101024 */
    assert_int_equal(arch_occupancy(h100, 128, 32, 232448), 1);        /* the whole opt-in */
    assert_int_equal(arch_occupancy(h100, 128, 32, 232449), 0);        /* more than an SM holds */
    assert_int_equal(arch_occupancy(h100, 128, 32, 57344), 4);         /* 56 KiB + 1 KiB -> 4 */
    assert_int_equal(arch_occupancy(h100, 128, 32, 57345), 3);
    /* Other architectures' limits: 1536 threads and 16 blocks on sm_86; no reservation on sm_75. */
    assert_int_equal(arch_occupancy(ga, 256, 32, 0), 6);
    assert_int_equal(arch_occupancy(ga, 64, 16, 0), 16);
    assert_int_equal(arch_occupancy(ga, 128, 32, 50176), 2); /* 102400 / (50176 + 1024) */
    assert_int_equal(arch_occupancy(tu, 1024, 32, 0), 1);
    assert_int_equal(arch_occupancy(tu, 128, 32, 32768), 2); /* 65536 / 32768, nothing reserved */
    /* Nonsense in, nothing resident. */
    assert_int_equal(arch_occupancy(h100, 0, 32, 0), 0);
    assert_int_equal(arch_occupancy(h100, 128, -1, 0), 0);
    assert_int_equal(arch_occupancy(h100, 128, 32, -1), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_table_and_peaks),
        cmocka_unit_test(test_occupancy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
