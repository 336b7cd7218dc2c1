/* test_expr.c — the template expression language. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "expr.h"

static bool lookup(void *ctx, const char *name, size_t len, int64_t *v)
{
    (void)ctx;
    static const struct { const char *n; int64_t v; } vars[] = {{"BM", 128}, {"TM", 8}, {"ZERO", 0}, {"K", 131}};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (strlen(vars[i].n) == len && strncmp(vars[i].n, name, len) == 0) {
            *v = vars[i].v;
            return true;
        }
    return false;
}

static int64_t eval_ok(const char *src)
{
    int64_t v = -999;
    char err[256] = "";
    int rc = expr_eval(src, lookup, NULL, &v, err, sizeof err);
    if (rc != 0)
        fail_msg("`%s` failed: %s", src, err);
    return v;
}

static void test_arithmetic_and_precedence(void **state)
{
    (void)state;
    assert_int_equal(eval_ok("1 + 2 * 3"), 7);
    assert_int_equal(eval_ok("(1 + 2) * 3"), 9);
    assert_int_equal(eval_ok("BM / TM - 1"), 15);
    assert_int_equal(eval_ok("K % 4"), 3);
    assert_int_equal(eval_ok("-TM + 10"), 2);
    assert_int_equal(eval_ok("BM % TM == 0 && TM <= 8"), 1);
    assert_int_equal(eval_ok("BM < 64 || !ZERO"), 1);
    assert_int_equal(eval_ok("1 < 2 == 1"), 1);
    assert_int_equal(eval_ok("TM >= 9"), 0);
    assert_int_equal(eval_ok("3 != 3"), 0);
}

static void test_functions(void **state)
{
    (void)state;
    assert_int_equal(eval_ok("cdiv(K, 64)"), 3);
    assert_int_equal(eval_ok("cdiv(128, 64)"), 2);
    assert_int_equal(eval_ok("rup(130, 16)"), 144);
    assert_int_equal(eval_ok("min(BM, TM) + max(3, 4)"), 12);
    assert_int_equal(eval_ok("log2(BM)"), 7);
    assert_int_equal(eval_ok("pow2(TM) + pow2(12)"), 1);
}

static void test_ternary_is_lazy(void **state)
{
    (void)state;
    assert_int_equal(eval_ok("ZERO > 1 ? BM / ZERO : 5"), 5);
    assert_int_equal(eval_ok("TM ? 1 : 2 ? 3 : 4"), 1);
    assert_int_equal(eval_ok("ZERO && BM / ZERO"), 0);
    assert_int_equal(eval_ok("1 || BM / ZERO"), 1);
}

static void test_errors(void **state)
{
    (void)state;
    int64_t v;
    char err[256];
    assert_int_equal(expr_eval("BM / ZERO", lookup, NULL, &v, err, sizeof err), -1);
    assert_non_null(strstr(err, "division by zero"));
    assert_int_equal(expr_eval("BM + BX", lookup, NULL, &v, err, sizeof err), -1);
    assert_non_null(strstr(err, "unknown name 'BX'"));
    /* An unknown name is reported even in a branch that is not taken: typos never hide. */
    assert_int_equal(expr_eval("ZERO ? TYPO : 1", lookup, NULL, &v, err, sizeof err), -1);
    assert_int_equal(expr_eval("(1 + 2", lookup, NULL, &v, err, sizeof err), -1);
    assert_int_equal(expr_eval("1 2", lookup, NULL, &v, err, sizeof err), -1);
    assert_int_equal(expr_eval("frob(1)", lookup, NULL, &v, err, sizeof err), -1);
    assert_non_null(strstr(err, "unknown function"));
    assert_int_equal(expr_eval("log2(12)", lookup, NULL, &v, err, sizeof err), -1);
    assert_int_equal(expr_eval("cdiv(4, 0)", lookup, NULL, &v, err, sizeof err), -1);
}

static void collect(void *ctx, const char *name, size_t len)
{
    char *buf = ctx;
    strncat(buf, name, len);
    strcat(buf, ",");
}

/* Found by tests/fuzz/fuzz_expr and fuzz_template: every 64-bit overflow is an error in a taken
 * branch (never undefined behaviour), and nesting is bounded. */
static void test_overflow_and_depth(void **state)
{
    (void)state;
    int64_t v;
    char err[256];
    const char *bad[] = {"99999999999999999999", "1111111111111111111 * 10", "9223372036854775807 + 1",
                         "0 - 9223372036854775807 - 2", "-(0 - 9223372036854775807 - 1)",
                         "(0 - 9223372036854775807 - 1) / -1", "(0 - 9223372036854775807 - 1) % -1",
                         "rup(9223372036854775807, 2)", "3037000500 * 3037000500"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        if (expr_eval(bad[i], lookup, NULL, &v, err, sizeof err) != -1)
            fail_msg("`%s` should overflow, gave %lld", bad[i], (long long)v);
        assert_true(strstr(err, "overflow") || strstr(err, "too large"));
    }
    /* An untaken branch may hold anything. */
    assert_int_equal(eval_ok("ZERO ? 9223372036854775807 * 2 : 5"), 5);
    assert_int_equal(eval_ok("ZERO && (9223372036854775807 + 1)"), 0);
    assert_int_equal(eval_ok("9223372036854775807"), INT64_MAX);
    assert_int_equal(eval_ok("cdiv(-5, 2)"), -2);
    assert_int_equal(eval_ok("rup(-5, 2)"), -4);
    assert_int_equal(eval_ok("cdiv(9223372036854775807, 2)"), 4611686018427387904LL);
    char deep[1024];
    size_t n = 0;
    for (int i = 0; i < 300; i++)
        deep[n++] = '(';
    deep[n++] = '1';
    for (int i = 0; i < 300; i++)
        deep[n++] = ')';
    deep[n] = '\0';
    assert_int_equal(expr_eval(deep, lookup, NULL, &v, err, sizeof err), -1);
    assert_non_null(strstr(err, "nests deeper than 200"));
    memset(deep, '-', 500);
    strcpy(deep + 500, "1");
    assert_int_equal(expr_eval(deep, lookup, NULL, &v, err, sizeof err), -1);
    assert_int_equal(eval_ok("((((((((((1))))))))))"), 1);
}

static void test_idents(void **state)
{
    (void)state;
    char buf[256] = "";
    expr_idents("BM % (4 * THREADS) == 0 && cdiv(K, BK) > 1", collect, buf);
    assert_string_equal(buf, "BM,THREADS,K,BK,");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arithmetic_and_precedence), cmocka_unit_test(test_functions),
        cmocka_unit_test(test_ternary_is_lazy),           cmocka_unit_test(test_errors),
        cmocka_unit_test(test_idents),
        cmocka_unit_test(test_overflow_and_depth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
