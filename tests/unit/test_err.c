/* test_err.c — error values, their rendering, exit-code precedence, number parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "err.h"
#include "util.h"

static void test_first_error_wins(void **state)
{
    (void)state;
    err_t e;
    err_clear(&e);
    assert_false(err_isset(&e));
    assert_int_equal(err_set(&e, EXIT_INPUT, "a.json", 3, 12, "first %d", 1), EXIT_INPUT);
    err_set(&e, EXIT_SYSTEM, "b.json", 1, 1, "second");
    assert_int_equal(e.code, EXIT_INPUT);
    char buf[256];
    err_format(&e, buf, sizeof buf);
    assert_string_equal(buf, "a.json:3:12: first 1");
}

static void test_format_variants(void **state)
{
    (void)state;
    err_t e;
    char buf[256];
    err_clear(&e);
    err_set(&e, EXIT_INPUT, "x.json", 0, 0, "no position");
    err_format(&e, buf, sizeof buf);
    assert_string_equal(buf, "x.json: no position");
    err_clear(&e);
    err_set(&e, EXIT_INPUT, NULL, 0, 0, "line\nbreak");
    err_format(&e, buf, sizeof buf);
    assert_string_equal(buf, "line break"); /* messages stay on one line */
}

/* Causes map to exit codes in one place; err_set_cause refines the recorded one; the first error's
 * cause is kept like its text. */
static void test_causes(void **state)
{
    (void)state;
    const int input[] = {ERR_INPUT, ERR_ARGUMENT, ERR_MISALIGNED, ERR_DTYPE, ERR_CONFIG, ERR_UNSUPPORTED, ERR_COMPILE};
    const int system[] = {ERR_SYSTEM, ERR_NO_GPU, ERR_CUDA, ERR_ALLOC};
    for (size_t i = 0; i < sizeof input / sizeof input[0]; i++)
        assert_int_equal(err_exit_code(input[i]), EXIT_INPUT);
    for (size_t i = 0; i < sizeof system / sizeof system[0]; i++)
        assert_int_equal(err_exit_code(system[i]), EXIT_SYSTEM);
    assert_int_equal(err_exit_code(ERR_VERIFY), EXIT_VERIFY);
    assert_int_equal(err_exit_code(ERR_INTERRUPTED), 130);
    assert_int_equal(err_exit_code(ERR_NONE), EXIT_OK);
    err_t e;
    err_clear(&e);
    err_set_cause(&e, ERR_CUDA); /* nothing recorded: nothing to refine */
    assert_false(err_isset(&e));
    assert_int_equal(err_set(&e, ERR_COMPILE, "k.cu", 0, 0, "nvrtc"), EXIT_INPUT);
    assert_int_equal(e.cause, ERR_COMPILE);
    err_set(&e, ERR_ALLOC, NULL, 0, 0, "later");
    assert_int_equal(e.cause, ERR_COMPILE);
    assert_int_equal(e.code, EXIT_INPUT);
    err_set_cause(&e, ERR_ALLOC);
    assert_int_equal(e.cause, ERR_ALLOC);
    assert_int_equal(e.code, EXIT_SYSTEM);
    assert_string_equal(err_cause_name(ERR_UNSUPPORTED), "unsupported");
}

static void test_exit_worst(void **state)
{
    (void)state;
    assert_int_equal(exit_worst(EXIT_OK, EXIT_VERIFY), EXIT_VERIFY);
    assert_int_equal(exit_worst(EXIT_INPUT, EXIT_VERIFY), EXIT_INPUT);
    assert_int_equal(exit_worst(EXIT_INPUT, EXIT_SYSTEM), EXIT_SYSTEM);
    assert_int_equal(exit_worst(EXIT_SYSTEM, EXIT_OK), EXIT_SYSTEM);
}

static void test_parse_numbers(void **state)
{
    (void)state;
    int64_t v;
    double d;
    assert_int_equal(parse_i64("128", &v), 0);
    assert_int_equal(v, 128);
    assert_int_equal(parse_i64("-3", &v), 0);
    assert_int_equal(v, -3);
    assert_int_equal(parse_i64("12x", &v), -1);
    assert_int_equal(parse_i64("", &v), -1);
    assert_int_equal(parse_i64("99999999999999999999", &v), -1);
    assert_int_equal(parse_double("0.5", &d), 0);
    assert_true(d == 0.5);
    assert_int_equal(parse_double("nan", &d), -1);
    assert_int_equal(parse_double("1e999", &d), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_error_wins),
        cmocka_unit_test(test_format_variants),
        cmocka_unit_test(test_causes),
        cmocka_unit_test(test_exit_worst),
        cmocka_unit_test(test_parse_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
