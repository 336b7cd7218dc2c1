/* test_layout.c — layouts: packed strides, each rule of layout_check named in its error, spans,
 * op names, alignment classes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "layout.h"

#include <string.h>

/* l's leading dimensions and strides are these. */
static void expect(const layout_t *l, const int64_t want[6])
{
    const int64_t got[6] = {l->lda, l->ldb, l->ldc, l->sa, l->sb, l->sc};
    for (int i = 0; i < 6; i++)
        assert_int_equal(got[i], want[i]);
}

static void test_packed(void **state)
{
    (void)state;
    layout_t l;
    layout_packed(&l, 0, 0, 3, 5, 7, 1);
    expect(&l, (const int64_t[6]){7, 5, 5, 21, 35, 15});
    assert_true(layout_is_packed(&l, 3, 5, 7));
    layout_packed(&l, 1, 1, 3, 5, 7, 2);
    assert_int_equal(l.lda, 3); /* A^T stored K x M */
    assert_int_equal(l.ldb, 7); /* B^T stored N x K */
    assert_true(layout_is_packed(&l, 3, 5, 7));
    l.ldc = 6;
    assert_false(layout_is_packed(&l, 3, 5, 7));
    layout_packed(&l, 0, 0, 3, 5, 7, 2);
    l.sa = 0; /* a broadcast A is not the packed batch */
    assert_false(layout_is_packed(&l, 3, 5, 7));
    l.batch = 1; /* but strides of a single product never matter */
    assert_true(layout_is_packed(&l, 3, 5, 7));
}

/* The error text layout_check gives, "" when it passes. */
static const char *check(const layout_t *l, int64_t M, int64_t N, int64_t K)
{
    static char buf[ERR_TEXT_LEN + ERR_SOURCE_LEN];
    err_t e;
    err_clear(&e);
    int rc = layout_check(l, M, N, K, &e);
    if (!rc)
        return "";
    assert_int_equal(e.code, EXIT_INPUT);
    err_format(&e, buf, sizeof buf);
    return buf;
}

static void test_check_rules(void **state)
{
    (void)state;
    layout_t l;
    layout_packed(&l, 0, 0, 4, 6, 8, 3);
    assert_string_equal(check(&l, 4, 6, 8), "");
    layout_t b = l;
    b.ta = 2;
    assert_string_equal(check(&b, 4, 6, 8), "layout: op: transposes are 0 (N) or 1 (T), not 2 and 0");
    b = l;
    b.lda = 7;
    assert_string_equal(check(&b, 4, 6, 8),
                        "layout: lda: 7 is below the row length of A (M x K, op N) as stored (8): rows would overlap");
    b = l;
    b.ta = 1; /* A^T: stored K x M, rows of M = 4 */
    b.lda = 4;
    assert_string_equal(check(&b, 4, 6, 8), "");
    b.lda = 3;
    assert_non_null(strstr(check(&b, 4, 6, 8), "lda: 3 is below the row length of A (K x M, op T) as stored (4)"));
    b = l;
    b.tb = 1;
    b.ldb = 6; /* B^T stored N x K: rows of K = 8 */
    assert_non_null(strstr(check(&b, 4, 6, 8), "ldb: 6 is below the row length of B (N x K, op T) as stored (8)"));
    b = l;
    b.ldc = 5;
    assert_non_null(strstr(check(&b, 4, 6, 8), "ldc: 5 is below the row length of C (M x N) as stored (6)"));
    b = l;
    b.ldc = LAYOUT_MAX_LD;
    b.sc = 4 * LAYOUT_MAX_LD;
    assert_non_null(strstr(check(&b, 4, 6, 8), "ldc: 2147483648 is not below 2^31"));
    b = l;
    b.batch = 0;
    assert_string_equal(check(&b, 4, 6, 8), "layout: batch: 0 is below 1");
    b = l;
    b.sa = -1;
    assert_non_null(strstr(check(&b, 4, 6, 8), "stride-a: -1 is negative"));
    b = l;
    b.sb = -8;
    assert_non_null(strstr(check(&b, 4, 6, 8), "stride-b: -8 is negative"));
    b = l;
    b.sa = b.sb = 0; /* broadcast A and B */
    assert_string_equal(check(&b, 4, 6, 8), "");
    b = l;
    b.sc = 3 * 6 + 5; /* one short of (M-1)*ldc + N */
    assert_non_null(strstr(check(&b, 4, 6, 8), "stride-c: 23 is below the span of one C ((M-1)*ldc + N = 24)"));
    b.sc = 24;
    assert_string_equal(check(&b, 4, 6, 8), "");
    /* With ldc past the row, one C spans (M-1)*ldc + N, not M*N: a packed stride overlaps. */
    b.ldc = 10;
    assert_non_null(strstr(check(&b, 4, 6, 8), "stride-c: 24 is below the span of one C ((M-1)*ldc + N = 36)"));
    b.sc = 36;
    assert_string_equal(check(&b, 4, 6, 8), "");
    b.batch = 1; /* one product: its strides are never used */
    b.sc = 0;
    assert_string_equal(check(&b, 4, 6, 8), "");
    assert_non_null(strstr(check(&l, -1, 6, 8), "sizes must not be negative"));
    /* K = 0: A's rows are empty, ld 1 is enough. */
    layout_packed(&b, 0, 0, 4, 6, 0, 1);
    assert_int_equal(b.lda, 1);
    assert_string_equal(check(&b, 4, 6, 0), "");
    b.lda = 0;
    assert_non_null(strstr(check(&b, 4, 6, 0), "lda: 0 is below the row length of A (M x K, op N) as stored (1)"));
}

static void test_spans(void **state)
{
    (void)state;
    layout_t l;
    layout_packed(&l, 0, 1, 4, 6, 8, 3);
    l.lda = 10;
    l.sa = 50;
    assert_int_equal(layout_span_a(&l, 4, 8), 2 * 50 + 3 * 10 + 8);
    assert_int_equal(layout_span_b(&l, 6, 8), 3 * 48);
    assert_int_equal(layout_span_c(&l, 4, 6), 3 * 24);
    l.batch = 1;
    assert_int_equal(layout_span_a(&l, 4, 8), 38);
    assert_int_equal(layout_span_c(&l, 0, 6), 0);
}

static void test_op_names(void **state)
{
    (void)state;
    const char *ops[] = {"NN", "NT", "TN", "TT"};
    for (int i = 0; i < 4; i++) {
        int ta = -1, tb = -1;
        assert_int_equal(layout_op_parse(ops[i], &ta, &tb), 0);
        assert_int_equal(ta, i >> 1);
        assert_int_equal(tb, i & 1);
        layout_t l;
        layout_packed(&l, ta, tb, 2, 2, 2, 1);
        assert_string_equal(layout_op_name(&l), ops[i]);
    }
    int ta, tb;
    assert_int_equal(layout_op_parse("nt", &ta, &tb), -1);
    assert_int_equal(layout_op_parse("NTN", &ta, &tb), -1);
    assert_int_equal(layout_op_parse("", &ta, &tb), -1);
    assert_int_equal(layout_op_parse(NULL, &ta, &tb), -1);
}

static void test_align(void **state)
{
    (void)state;
    assert_int_equal(layout_align_of(256, 4, 4096, 0), 4);  /* 16 bytes of floats */
    assert_int_equal(layout_align_of(256, 8, 4096, 0), 2);  /* 16 bytes of doubles */
    assert_int_equal(layout_align_of(256, 4, 4097, 0), 1);  /* odd ld */
    assert_int_equal(layout_align_of(256, 4, 4098, 0), 2);
    assert_int_equal(layout_align_of(264, 4, 4096, 0), 2);  /* address 8 bytes past 16 */
    assert_int_equal(layout_align_of(256, 4, 4096, 6), 2);  /* batch stride */
    layout_t l;
    layout_packed(&l, 0, 0, 128, 128, 129, 2);
    layout_align al;
    layout_align_ld(&l, 4, &al);
    assert_int_equal(al.a, 1); /* lda = K = 129 */
    assert_int_equal(al.b, 4);
    assert_int_equal(al.c, 4);
    l.batch = 1;
    l.sc = 3; /* unused */
    layout_align_ld(&l, 4, &al);
    assert_int_equal(al.c, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_packed),
        cmocka_unit_test(test_check_rules),
        cmocka_unit_test(test_spans),
        cmocka_unit_test(test_op_names),
        cmocka_unit_test(test_align),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
