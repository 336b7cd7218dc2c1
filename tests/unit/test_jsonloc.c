/* test_jsonloc.c — finding a member's line and column in a JSON text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "jsonloc.h"

static const char *k_text = "{\n"
                            "  \"name\": \"x\",\n"
                            "  \"nested\": {\"a\": [1, {\"b\": 2}], \"s\": \"}{,\\\"\"},\n"
                            "  \"params\": {\n"
                            "    \"BM\": 128,\n"
                            "    \"TM\":   12\n"
                            "  }\n"
                            "}\n";

static void test_values_and_keys(void **state)
{
    (void)state;
    int line = 0, col = 0;
    const char *tm[] = {"params", "TM"};
    assert_int_equal(jsonloc_find(k_text, tm, 2, false, &line, &col), 0);
    assert_int_equal(line, 6);
    assert_int_equal(col, 13);
    assert_int_equal(jsonloc_find(k_text, tm, 2, true, &line, &col), 0);
    assert_int_equal(line, 6);
    assert_int_equal(col, 5);
    const char *name[] = {"name"};
    assert_int_equal(jsonloc_find(k_text, name, 1, false, &line, &col), 0);
    assert_int_equal(line, 2);
    assert_int_equal(col, 11);
}

static void test_skips_strings_and_arrays(void **state)
{
    (void)state;
    int line = 0, col = 0;
    const char *bm[] = {"params", "BM"};
    /* The nested object holds braces and commas inside a string: they must not confuse the scan. */
    assert_int_equal(jsonloc_find(k_text, bm, 2, false, &line, &col), 0);
    assert_int_equal(line, 5);
    assert_int_equal(col, 11);
}

static void test_missing(void **state)
{
    (void)state;
    int line = -1, col = -1;
    const char *none[] = {"params", "BK"};
    assert_int_equal(jsonloc_find(k_text, none, 2, false, &line, &col), -1);
    assert_int_equal(line, -1);
    const char *deep[] = {"name", "x"};
    assert_int_equal(jsonloc_find(k_text, deep, 2, false, &line, &col), -1);
}

static void test_position_counts_characters(void **state)
{
    (void)state;
    int line, col;
    jsonloc_position("ab\n\xc3\xa9x", 5, &line, &col); /* 'é' is two bytes, one column */
    assert_int_equal(line, 2);
    assert_int_equal(col, 2);
}

/* Members of array elements: the offset of "nested", then of its array "a", then of element 1
 * ({"b": 2}), then of "b" inside it. */
static void test_offset_and_element(void **state)
{
    (void)state;
    size_t nested, a, el, b;
    const char *pn[] = {"nested"}, *pa[] = {"a"}, *pb[] = {"b"};
    assert_int_equal(jsonloc_offset(k_text, 0, pn, 1, false, &nested), 0);
    assert_int_equal(k_text[nested], '{');
    assert_int_equal(jsonloc_offset(k_text, nested, pa, 1, false, &a), 0);
    assert_int_equal(k_text[a], '[');
    assert_int_equal(jsonloc_element(k_text, a, 0, &el), 0);
    assert_int_equal(k_text[el], '1');
    assert_int_equal(jsonloc_element(k_text, a, 1, &el), 0);
    assert_int_equal(k_text[el], '{');
    assert_int_equal(jsonloc_offset(k_text, el, pb, 1, true, &b), 0);
    int line, col;
    jsonloc_position(k_text, b, &line, &col);
    assert_int_equal(line, 3);
    assert_int_equal(col, 24);
    /* depth 0: the value itself, past white space */
    assert_int_equal(jsonloc_offset(k_text, 1, NULL, 0, false, &b), 0);
    assert_int_equal(k_text[b], '"');
    /* no element 2; not an array; an empty array */
    size_t keep = 7;
    assert_int_equal(jsonloc_element(k_text, a, 2, &keep), -1);
    assert_int_equal(jsonloc_element(k_text, nested, 0, &keep), -1);
    assert_int_equal(jsonloc_element("[ ]", 0, 0, &keep), -1);
    assert_int_equal(keep, 7);
}

/* Walking an array element by element gives the offsets jsonloc_element gives one at a time, and
 * moving a position on from one element to the next gives jsonloc_position's line and column. */
static void test_next_element_and_advance(void **state)
{
    (void)state;
    const char *t = "[ {\"a\": \"x,]\"},\n  [1, 2],\n  \"\u00e9\" , 7 ]";
    size_t el = 0, want, prev = 0;
    int line = 1, col = 1;
    assert_int_equal(jsonloc_element(t, 0, 0, &el), 0);
    for (size_t i = 1; i < 4; i++) {
        jsonloc_advance(t, prev, el, &line, &col);
        int l2, c2;
        jsonloc_position(t, el, &l2, &c2);
        assert_int_equal(line, l2);
        assert_int_equal(col, c2);
        prev = el;
        assert_int_equal(jsonloc_next_element(t, el, &el), 0);
        assert_int_equal(jsonloc_element(t, 0, i, &want), 0);
        assert_int_equal(el, want);
    }
    assert_int_equal(t[el], '7');
    size_t keep = 5;
    assert_int_equal(jsonloc_next_element(t, el, &keep), -1); /* the last element */
    assert_int_equal(keep, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_and_keys),
        cmocka_unit_test(test_skips_strings_and_arrays),
        cmocka_unit_test(test_missing),
        cmocka_unit_test(test_position_counts_characters),
        cmocka_unit_test(test_offset_and_element),
        cmocka_unit_test(test_next_element_and_advance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
