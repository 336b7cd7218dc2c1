/* test_merge.c — engine merge: duplicates dropped, the merged log and the winner written, logs of
 * different problems or GPUs refused unless forced, a log that cannot be read. */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>

#include "merge.h"
#include "result.h"
#include "tunelog.h"
#include "util.h"
#include "rows.h"

/* A log of n rows of M^3 points on device, bm = first, first+1, ... */
static void write_problem_log(const char *path, int64_t first, size_t n, int64_t M, const char *device)
{
    tunelog_t l;
    err_t err;
    err_clear(&err);
    assert_int_equal(tunelog_open(&l, path, false, &err), 0);
    for (size_t i = 0; i < n; i++) {
        result_row r;
        make_row(&r, first + (int64_t)i, 1, "ok", 10.0 - (double)(first + (int64_t)i) / 100);
        r.M = M;
        free(r.key);
        r.key = result_make_key("blocktile", "f32", 90, M, M, M, 1.0, 0.0, k_names, r.param_values, NPARAMS);
        free(r.device);
        r.device = xstrdup(device);
        assert_int_equal(tunelog_append(&l, &r, &err), 0);
        result_row_free(&r);
    }
    tunelog_close(&l);
}

static char *merge_output(const merge_opts *o, int *code, err_t *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    err_clear(err);
    *code = merge_logs(o, f, err);
    fclose(f);
    return buf;
}

static void test_merge(void **state)
{
    (void)state;
    char *a = in_dir("a.jsonl"), *b = in_dir("b.jsonl"), *c = in_dir("c.jsonl"), *d = in_dir("d.jsonl"),
         *e = in_dir("e.jsonl"), *best = in_dir("best.json");
    write_problem_log(a, 1, 3, 4096, "NVIDIA H100 80GB HBM3"); /* BM 1, 2, 3 */
    write_problem_log(b, 3, 3, 4096, "NVIDIA H100 80GB HBM3"); /* BM 3 (a duplicate), 4, 5 */
    write_problem_log(d, 1, 2, 2048, "NVIDIA H100 80GB HBM3"); /* another shape */
    write_problem_log(e, 10, 1, 4096, "NVIDIA H200");          /* another GPU */
    const char *ab[] = {a, b};
    merge_opts o = {.logs = ab, .nlogs = 2, .out_path = c, .top = 3, .emit_best = best};
    int code;
    err_t err;
    char *s = merge_output(&o, &code, &err);
    assert_int_equal(code, EXIT_OK);
    char want[512];
    snprintf(want, sizeof want, "merged 2 logs: 5 rows kept, 1 duplicate dropped, 5 points ranked; written to %s\n", c);
    assert_true(strncmp(s, want, strlen(want)) == 0);
    assert_non_null(strstr(s, "top 3 of 5 points ranked"));
    assert_non_null(strstr(s, "BM=5\n"));
    snprintf(want, sizeof want, "wrote %s: ", best);
    assert_non_null(strstr(s, want));
    free(s);
    result_row *rows;
    size_t n;
    assert_int_equal(tunelog_read(c, &rows, &n, NULL, &err), 0);
    assert_int_equal(n, 5);
    result_rows_free(rows, n);
    json_t *cfg = json_load_file(best, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(cfg, "name")), "bank_pad_vec_tuned");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(cfg, "params"), "BM")), 5);
    json_decref(cfg);

    /* The output log is new: a second merge into it is refused. */
    s = merge_output(&o, &code, &err);
    assert_int_equal(code, EXIT_INPUT);
    assert_non_null(strstr(err.text, "already holds 5 results"));
    free(s);

    /* Different problems: refused naming both logs and the field, unless forced. */
    const char *ad[] = {a, d};
    merge_opts o2 = {.logs = ad, .nlogs = 2};
    s = merge_output(&o2, &code, &err);
    assert_int_equal(code, EXIT_INPUT);
    char line[2048];
    err_format(&err, line, sizeof line);
    snprintf(want, sizeof want,
             "%s:1: M = 2048 but %s holds M = 4096; pass --force to merge logs of different problems", d, a);
    assert_string_equal(line, want);
    free(s);
    o2.force = true;
    s = merge_output(&o2, &code, &err);
    assert_int_equal(code, EXIT_OK);
    assert_non_null(strstr(s, "merged 2 logs: 5 rows kept, 0 duplicates dropped, 5 points ranked\n"));
    free(s);
    const char *ae[] = {a, e};
    merge_opts o3 = {.logs = ae, .nlogs = 2};
    s = merge_output(&o3, &code, &err);
    assert_int_equal(code, EXIT_INPUT);
    assert_non_null(strstr(err.text, "device = \"NVIDIA H200\" but"));
    free(s);

    /* A log that cannot be read. */
    char *missing = in_dir("missing.jsonl");
    const char *am[] = {a, missing};
    merge_opts o4 = {.logs = am, .nlogs = 2};
    s = merge_output(&o4, &code, &err);
    assert_int_equal(code, EXIT_INPUT);
    assert_string_equal(err.source, missing);
    free(s);
    free(missing);
    free(a);
    free(b);
    free(c);
    free(d);
    free(e);
    free(best);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_merge, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
