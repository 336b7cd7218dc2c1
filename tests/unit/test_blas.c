/* test_blas.c — cuBLAS loaded at run time (blas.c): every function the command calls resolves in the
 * toolkit's libcublas, without a GPU, and a second load is the first one's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "blas.h"

static void test_load(void **state)
{
    (void)state;
    err_t err;
    err_clear(&err);
    int rc = blas_load(&err);
    if (rc)
        print_error("%s\n", err.text);
    assert_int_equal(rc, 0);
    assert_false(err_isset(&err));
    assert_int_equal(blas_load(&err), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_load)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
