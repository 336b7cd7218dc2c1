/* test_model.c — the additive model of log(time) that the guided search fits: on a full grid of
 * times that are additive in log, it predicts every point; from a part of the grid, the points
 * not timed too; with no point, 0. */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "model.h"

/* Two free dimensions of 3 and 2 values (the last varies fastest: index = 2 * v0 + v1). */
static space_t two_dims(space_dim *dims)
{
    memset(dims, 0, 2 * sizeof *dims);
    dims[0].nvalues = 3;
    dims[1].nvalues = 2;
    space_t sp;
    memset(&sp, 0, sizeof sp);
    sp.dims = dims;
    sp.ndims = sp.nfree = 2;
    return sp;
}

static const double k_a[3] = {0.0, 0.7, -0.4}, k_b[2] = {0.2, -0.3};

static double additive_ms(uint64_t index)
{
    return exp(1.5 + k_a[index / 2] + k_b[index % 2]);
}

static void test_full_grid(void **state)
{
    (void)state;
    space_dim dims[2];
    space_t sp = two_dims(dims);
    uint64_t index[6];
    double ms[6];
    for (uint64_t i = 0; i < 6; i++) {
        index[i] = i;
        ms[i] = additive_ms(i);
    }
    model_t m;
    model_fit(&m, &sp, index, ms, 6);
    for (uint64_t i = 0; i < 6; i++)
        assert_float_equal(model_predict(&m, &sp, i), log(additive_ms(i)), 1e-9);
    model_free(&m);
}

static void test_part_of_the_grid(void **state)
{
    (void)state;
    space_dim dims[2];
    space_t sp = two_dims(dims);
    /* Every value of each dimension seen once at least, two points left out. */
    uint64_t index[4] = {0, 1, 3, 5};
    double ms[4];
    for (int i = 0; i < 4; i++)
        ms[i] = additive_ms(index[i]);
    model_t m;
    model_fit(&m, &sp, index, ms, 4);
    for (uint64_t i = 0; i < 6; i++)
        assert_float_equal(model_predict(&m, &sp, i), log(additive_ms(i)), 1e-3);
    /* Faster in log is faster: the order of the points left out is right. */
    assert_true((model_predict(&m, &sp, 2) < model_predict(&m, &sp, 4)) == (additive_ms(2) < additive_ms(4)));
    model_free(&m);
}

static void test_no_point(void **state)
{
    (void)state;
    space_dim dims[2];
    space_t sp = two_dims(dims);
    model_t m;
    model_fit(&m, &sp, NULL, NULL, 0);
    for (uint64_t i = 0; i < 6; i++)
        assert_float_equal(model_predict(&m, &sp, i), 0, 0);
    model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_grid),
        cmocka_unit_test(test_part_of_the_grid),
        cmocka_unit_test(test_no_point),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
