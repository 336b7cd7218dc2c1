/* half.c: bfloat16 and binary16 to and from float, rounding to nearest even as cvt.rn does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "half.h"

/* Every 16-bit pattern that is not a NaN survives the trip through float; a NaN stays a NaN. */
static void test_round_trip(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = f16_to_float((uint16_t)h), b = bf16_to_float((uint16_t)h);
        if (isnan(f))
            assert_true(isnan(f16_to_float(float_to_f16(f))));
        else
            assert_int_equal(float_to_f16(f), h);
        if (isnan(b))
            assert_true(isnan(bf16_to_float(float_to_bf16(b))));
        else
            assert_int_equal(float_to_bf16(b), h);
    }
}

static void test_f16_rounding(void **state)
{
    (void)state;
    assert_true(f16_to_float(0x3C00) == 1.0f);
    assert_true(f16_to_float(0x0001) == 0x1p-24f);     /* least subnormal */
    assert_true(f16_to_float(0x7BFF) == 65504.0f);     /* largest finite */
    assert_true(f16_to_float(float_to_f16(1.0f + 0x1p-11f)) == 1.0f);           /* tie: to even */
    assert_true(f16_to_float(float_to_f16(1.0f + 3 * 0x1p-11f)) == 1.0f + 0x1p-9f); /* tie: to even */
    assert_true(f16_to_float(float_to_f16(1.0f + 0x1p-11f + 0x1p-20f)) == 1.0f + 0x1p-10f);
    assert_true(f16_to_float(float_to_f16(-2.5f)) == -2.5f);
    assert_int_equal(float_to_f16(65519.0f), 0x7BFF);
    assert_int_equal(float_to_f16(65520.0f), 0x7C00); /* Inf */
    assert_int_equal(float_to_f16(-INFINITY), 0xFC00);
    assert_int_equal(float_to_f16(0x1p-25f), 0x0000);      /* tie between 0 and the least subnormal */
    assert_int_equal(float_to_f16(3 * 0x1p-26f), 0x0001);
    assert_int_equal(float_to_f16(0x1p-14f - 0x1p-26f), 0x0400); /* rounds up into the normals */
    assert_true(isnan(f16_to_float(float_to_f16(NAN))));
}

static void test_bf16_rounding(void **state)
{
    (void)state;
    assert_true(bf16_to_float(0x3F80) == 1.0f);
    assert_true(bf16_to_float(float_to_bf16(1.0f + 0x1p-8f)) == 1.0f);               /* tie: to even */
    assert_true(bf16_to_float(float_to_bf16(1.0f + 3 * 0x1p-8f)) == 1.0f + 0x1p-6f); /* tie: to even */
    assert_true(bf16_to_float(float_to_bf16(1.0f + 0x1p-8f + 0x1p-20f)) == 1.0f + 0x1p-7f);
    assert_int_equal(float_to_bf16(3.4e38f), 0x7F80); /* past the largest finite bf16: Inf */
    assert_true(isnan(bf16_to_float(float_to_bf16(NAN))));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_f16_rounding),
        cmocka_unit_test(test_bf16_rounding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
