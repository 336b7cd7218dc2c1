/* test_jsonloc.c — finding a member's line and column in a JSON text; the strict reader on top (jsonrd). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "jsonloc.h"
#include "jsonrd.h"

#include <string.h>

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

/* jsonrd: each rule's message, at the member's place; a document placed inside a file (a template's
 * block) is placed there; a config's top has no place. */
static void test_reader_rules(void **state)
{
    (void)state;
    err_t err;
    jsonrd rd = {"f.json", k_text, 1, 1, false, false, &err};
    json_t *root;
    jsonrd_obj top, params, nested;
    err_clear(&err);
    assert_int_equal(jsonrd_load(&rd, strlen(k_text), 0, "invalid JSON", &root), 0);
    assert_int_equal(jsonrd_top(&rd, root, "a test", &top), 0);
    static const char *const few[] = {"name", "params", NULL};
    assert_int_equal(jsonrd_only(&top, few, "a test"), -1);
    assert_string_equal(err.text, "unknown key \"nested\" (a test has name, params)");
    assert_int_equal(err.line, 3);
    assert_int_equal(err.column, 3);
    const char *s = NULL;
    err_clear(&err);
    assert_int_equal(jsonrd_string(&top, "name", JSONRD_REQUIRED | JSONRD_NONEMPTY, NULL, &s), 1);
    assert_string_equal(s, "x");
    assert_int_equal(jsonrd_string(&top, "none", 0, NULL, &s), 0);
    assert_int_equal(jsonrd_string(&top, "none", JSONRD_REQUIRED, "a hint", &s), -1);
    assert_string_equal(err.text, "missing key \"none\" (a hint)");
    assert_int_equal(err.line, 1);
    err_clear(&err);
    assert_int_equal(jsonrd_object(&top, "params", JSONRD_REQUIRED, NULL, &params), 1);
    assert_string_equal(params.name, "params");
    int64_t v = 0;
    assert_int_equal(jsonrd_int(&params, "TM", 0, 1, 16, NULL, &v), 1);
    assert_int_equal(v, 12);
    assert_int_equal(jsonrd_int(&params, "BM", 0, 1, 64, NULL, &v), -1);
    assert_string_equal(err.text, "params.BM = 128 must be from 1 to 64");
    assert_int_equal(err.line, 5);
    assert_int_equal(err.column, 11);
    err_clear(&err);
    assert_int_equal(jsonrd_string(&params, "BM", 0, NULL, &s), -1);
    assert_string_equal(err.text, "params.BM must be a string, got an integer");
    err_clear(&err);
    bool b;
    assert_int_equal(jsonrd_bool(&top, "name", 0, &b), -1);
    assert_string_equal(err.text, "\"name\" must be true or false, got a string");
    err_clear(&err);
    assert_int_equal(jsonrd_object(&top, "nested", 0, NULL, &nested), 1);
    json_t *arr;
    assert_int_equal(jsonrd_array(&nested, "s", 0, NULL, &arr), -1);
    assert_string_equal(err.text, "nested.s must be an array, got a string");
    assert_int_equal(err.line, 3);
    err_clear(&err);
    /* Members of an array's element: the nearest member that can be found, here "a" (its value). */
    jsonrd_obj el = jsonrd_member(&nested, "a", json_array_get(json_object_get(nested.obj, "a"), 1), "nested.a[1]");
    assert_int_equal(jsonrd_int(&el, "b", 0, 3, 4, NULL, &v), -1);
    assert_string_equal(err.text, "nested.a[1].b = 2 must be from 3 to 4");
    assert_int_equal(err.line, 3);
    assert_int_equal(err.column, 19);
    /* Placed at line 10, column 5 of a file; keys only; a config's top has no place. */
    jsonrd in_file = {"t.cu", k_text, 10, 5, false, true, &err};
    err_clear(&err);
    jsonrd_fail_path(&in_file, NULL, 0, false, "top");
    assert_int_equal(err.line, 10);
    assert_int_equal(err.column, 5);
    const char *name[] = {"name"};
    err_clear(&err);
    jsonrd_fail_path(&in_file, name, 1, false, "at name");
    assert_int_equal(err.line, 11);
    assert_int_equal(err.column, 3);
    jsonrd config = {"c.json", k_text, 1, 1, true, false, &err};
    err_clear(&err);
    jsonrd_fail_path(&config, NULL, 0, false, "top");
    assert_int_equal(err.line, 0);
    assert_int_equal(err.column, 0);
    json_decref(root);
    jsonrd bad = {"b.json", "{\"a\": 1, \"a\": 2}", 1, 1, false, false, &err};
    err_clear(&err);
    assert_int_equal(jsonrd_load(&bad, strlen(bad.text), 0, "invalid JSON", &root), -1);
    assert_non_null(strstr(err.text, "invalid JSON: duplicate object key"));
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
        cmocka_unit_test(test_reader_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
