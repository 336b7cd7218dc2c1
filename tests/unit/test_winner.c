/* test_winner.c — the winner written as a ready config: its fields and description, loaded back by
 * the engine, never over its source however spelled, and nothing left behind on a refusal. */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>

#include "config.h"
#include "result.h"
#include "util.h"
#include "winner.h"
#include "rows.h"

static void test_emit_config(void **state)
{
    (void)state;
    use_repo_templates();
    result_row r;
    make_row(&r, 64, 2, "ok", 3.0);
    r.tflops = 45.63;
    r.pct_cublas = 89.1;
    r.ms_min = 2.97;
    r.ms_max = 3.03;
    char *src = in_dir("src.json");
    write_text(src, "{\"name\": \"src\", \"template\": \"blocktile\"}\n", "w");
    char *out = in_dir("src_tuned.json");
    err_t err;
    err_clear(&err);
    assert_int_equal(winner_write(&r, "src_tuned", src, out, &err), 0);
    json_error_t jerr;
    json_t *o = json_load_file(out, 0, &jerr);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(o, "name")), "src_tuned");
    assert_string_equal(json_string_value(json_object_get(o, "template")), "blocktile");
    assert_string_equal(json_string_value(json_object_get(o, "dtype")), "f32");
    json_t *params = json_object_get(o, "params");
    assert_int_equal(json_object_size(params), NPARAMS);
    const char *key;
    json_t *v;
    size_t i = 0;
    json_object_foreach(params, key, v)
    {
        assert_string_equal(key, r.param_names[i]);
        assert_int_equal(json_integer_value(v), r.param_values[i]);
        i++;
    }
    assert_string_equal(json_string_value(json_object_get(o, "description")),
                        "tuned by engine tune for 4096x4096x4096 on NVIDIA H100 80GB HBM3 (2026-11-22): 45.63 "
                        "TFLOP/s, 89.1 % of cuBLAS, median of 10 runs, spread 2.0%");
    json_decref(o);
    size_t len;
    char *text = read_file(out, &len);
    assert_true(strncmp(text, "{\n  \"name\": \"src_tuned\",\n  \"template\": \"blocktile\",\n", 51) == 0);
    free(text);
    /* It is a ready config: the engine loads it. */
    config_t cfg;
    assert_int_equal(config_load(out, NULL, 0, NULL, 90, &cfg, &err), 0);
    assert_string_equal(cfg.name, "src_tuned");
    config_free(&cfg);
    /* Writing again replaces it. */
    assert_int_equal(winner_write(&r, "src_tuned", src, out, &err), 0);

    /* Never over the source, however it is spelled. */
    size_t srclen;
    char *before = read_file(src, &srclen);
    assert_int_equal(winner_write(&r, "x", src, src, &err), -1);
    assert_int_equal(err.code, EXIT_INPUT);
    assert_non_null(strstr(err.text, "refusing to overwrite the source config"));
    const char *leaf = strrchr(g_dir, '/') + 1;
    char *spelled = xasprintf("%s/../%s/./src.json", g_dir, leaf);
    err_clear(&err);
    assert_int_equal(winner_write(&r, "x", src, spelled, &err), -1);
    assert_int_equal(err.code, EXIT_INPUT);
    err_clear(&err);
    assert_int_equal(winner_write(&r, "x", spelled, src, &err), -1);
    assert_int_equal(err.code, EXIT_INPUT);
    free(spelled);
    char *after = read_file(src, &len);
    assert_int_equal(len, srclen);
    assert_memory_equal(before, after, len);
    free(before);
    free(after);

    /* Only an ok row; a directory that is not there. */
    free(r.status);
    r.status = xstrdup("FAIL");
    err_clear(&err);
    assert_int_equal(winner_write(&r, "x", NULL, out, &err), -1);
    assert_non_null(strstr(err.text, "its status is FAIL, not ok"));
    free(r.status);
    r.status = xstrdup("ok");
    char *nodir = in_dir("nodir/x.json");
    err_clear(&err);
    assert_int_equal(winner_write(&r, "x", NULL, nodir, &err), -1);
    assert_non_null(strstr(err.text, "cannot write the config"));
    free(nodir);

    /* No temp file left behind: the directory holds src.json and src_tuned.json only. */
    DIR *d = opendir(g_dir);
    struct dirent *e;
    size_t files = 0;
    while ((e = readdir(d)) != NULL)
        files += e->d_name[0] != '.';
    closedir(d);
    assert_int_equal(files, 2);
    result_row_free(&r);
    free(src);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_emit_config, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
