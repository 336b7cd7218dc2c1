/* test_range.c — ranges: every form, every broken one, and text that is no range at all (an
 * expression, say). */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "range.h"
#include "util.h"

/* Parse text as a range that must be good; checks the values. */
static void range_is(const char *text, const int64_t *want, size_t nwant)
{
    int64_t *v = NULL;
    size_t n = 99;
    char why[256] = "";
    int rc = range_parse(text, &v, &n, why, sizeof why);
    if (rc != 0)
        fprintf(stderr, "range_parse(\"%s\") = %d: %s\n", text, rc, why);
    assert_int_equal(rc, 0);
    assert_int_equal(n, nwant);
    assert_non_null(v);
    for (size_t i = 0; i < nwant; i++)
        assert_int_equal(v[i], want[i]);
    free(v);
}

/* Parse text as a broken range: -1, a reason containing `reason`, no values. */
static void range_broken(const char *text, const char *reason)
{
    int64_t *v = (int64_t *)(uintptr_t)1;
    size_t n = 99;
    char why[256] = "";
    int rc = range_parse(text, &v, &n, why, sizeof why);
    if (rc != -1 || !strstr(why, reason))
        fprintf(stderr, "range_parse(\"%.60s\") = %d, why \"%s\"; expected -1 and \"%s\"\n", text, rc, why, reason);
    assert_int_equal(rc, -1);
    assert_non_null(strstr(why, reason));
    assert_null(v);
    assert_int_equal(n, 0);
}

/* Text that is not a range at all: 1 and no values. */
static void not_range(const char *text)
{
    int64_t *v = (int64_t *)(uintptr_t)1;
    size_t n = 99;
    char why[256] = "";
    assert_int_equal(range_parse(text, &v, &n, why, sizeof why), 1);
    assert_null(v);
    assert_int_equal(n, 0);
}

static void test_range_forms(void **state)
{
    (void)state;
    range_is("64:256:64", (int64_t[]){64, 128, 192, 256}, 4);
    range_is("1:10:4", (int64_t[]){1, 5, 9}, 3); /* the end need not be hit */
    range_is("64:256:*2", (int64_t[]){64, 128, 256}, 3);
    range_is("1:1000:*10", (int64_t[]){1, 10, 100, 1000}, 4);
    range_is("3:40:*3", (int64_t[]){3, 9, 27}, 3);
    range_is("1:3", (int64_t[]){1, 2, 3}, 3); /* step 1 by default */
    range_is("5:5:1", (int64_t[]){5}, 1);
    range_is("-3:3:3", (int64_t[]){-3, 0, 3}, 3);
    range_is(" 4 : 8 : 2 ", (int64_t[]){4, 6, 8}, 3);
    range_is("8:32: *2", (int64_t[]){8, 16, 32}, 3);
    range_is("8,16,32", (int64_t[]){8, 16, 32}, 3);
    range_is("32,8,16", (int64_t[]){32, 8, 16}, 3); /* lists keep their order */
    range_is("8, 16 ,32", (int64_t[]){8, 16, 32}, 3);
    range_is("128", (int64_t[]){128}, 1);
    range_is("-7", (int64_t[]){-7}, 1);
    /* Near INT64_MAX the walk stops without overflowing (UBSan would report it). */
    range_is("9223372036854775000:9223372036854775807:500",
             (int64_t[]){9223372036854775000LL, 9223372036854775500LL}, 2);
    int64_t *v = NULL;
    size_t n = 0;
    char why[256];
    assert_int_equal(range_parse("1:9223372036854775807:*2", &v, &n, why, sizeof why), 0);
    assert_int_equal(n, 63);
    assert_int_equal(v[0], 1);
    assert_int_equal(v[62], INT64_C(1) << 62);
    free(v);
    /* Exactly RANGE_MAX_VALUES values are allowed. */
    assert_int_equal(range_parse("1:100000:1", &v, &n, why, sizeof why), 0);
    assert_int_equal(n, RANGE_MAX_VALUES);
    assert_int_equal(v[RANGE_MAX_VALUES - 1], RANGE_MAX_VALUES);
    free(v);
}

static void test_range_broken(void **state)
{
    (void)state;
    range_broken("1:8:0", "step must be at least 1");
    range_broken("1:8:-2", "step must be at least 1");
    range_broken("8:1", "starts above its end (8 > 1)");
    range_broken("8:1:*2", "starts above its end");
    range_broken("1:64:*1", "f >= 2");
    range_broken("1:64:*0", "f >= 2");
    range_broken("0:64:*2", "a >= 1");
    range_broken("-4:64:*2", "a >= 1");
    range_broken("16,32,16", "16 is listed twice");
    range_broken("7,7", "7 is listed twice");
    range_broken("1:100001:1", "more than 100000 values");
    range_broken("-9223372036854775807:9223372036854775807:1", "more than 100000 values");
    /* A list one value too long. */
    strbuf sb;
    sb_init(&sb);
    for (int i = 0; i <= RANGE_MAX_VALUES; i++)
        sb_addf(&sb, "%s%d", i ? "," : "", i);
    range_broken(sb.buf, "more than 100000 values");
    sb_free(&sb);
}

static void test_range_not_a_range(void **state)
{
    (void)state;
    not_range("");
    not_range("BM");
    not_range("32*(BM/WM)*(BN/WN)");
    not_range("BM*2");
    not_range("1:x");
    not_range("x:8");
    not_range("1:8:");
    not_range("1:8:*");
    not_range("1:8:*x");
    not_range("1:2:3:4");
    not_range("1,,2");
    not_range("4,");
    not_range(",4");
    not_range("1, BM");
    not_range("0x10");
    not_range("1e3");
    not_range("99999999999999999999"); /* does not fit: not a number of ours */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_range_forms),
        cmocka_unit_test(test_range_broken),
        cmocka_unit_test(test_range_not_a_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
