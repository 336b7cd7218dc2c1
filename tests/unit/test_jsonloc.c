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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_and_keys),
        cmocka_unit_test(test_skips_strings_and_arrays),
        cmocka_unit_test(test_missing),
        cmocka_unit_test(test_position_counts_characters),
        cmocka_unit_test(test_offset_and_element),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
