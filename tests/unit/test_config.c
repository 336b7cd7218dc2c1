/* test_config.c — strict loading of configs: what is accepted, and the exact error for what is not. */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "config.h"

static const char *k_good = "{\n"
                            "  \"name\": \"t\",\n"
                            "  \"template\": \"blocktile\",\n"
                            "  \"params\": {\"BM\": 64, \"BN\": 64, \"BK\": 16, \"TM\": 8, \"TN\": 4, \"THREADS\": 128}\n"
                            "}\n";

static int setup(void **state)
{
    (void)state;
    use_repo_templates();
    return 0;
}

/* Load text as a config; returns the error (code 0 when it loaded). */
static err_t load(const char *text, const param_set *sets, size_t nsets, config_t *cfg, char **path_out)
{
    err_t err;
    err_clear(&err);
    char *path = temp_config(text);
    if (config_load(path, sets, nsets, NULL, 90, cfg, &err) != 0)
        assert_true(err_isset(&err));
    if (path_out)
        *path_out = path;
    else {
        unlink(path);
        free(path);
    }
    return err;
}

static void test_good_config_and_defaults(void **state)
{
    (void)state;
    config_t c;
    err_t e = load(k_good, NULL, 0, &c, NULL);
    assert_int_equal(e.code, 0);
    assert_string_equal(c.name, "t");
    assert_int_equal(c.dtype, DTYPE_F32);
    assert_int_equal(c.values[template_param_index(&c.tpl, "BM")], 64);
    assert_int_equal(c.values[template_param_index(&c.tpl, "PAD_A")], 0); /* the template's default */
    assert_string_equal(c.label, "t");
    config_free(&c);
}

static void test_set_overrides(void **state)
{
    (void)state;
    err_t err;
    param_set sets[2];
    err_clear(&err);
    assert_int_equal(param_set_parse("BM=128", &sets[0], &err), 0);
    assert_int_equal(param_set_parse("TM=16", &sets[1], &err), 0);
    config_t c;
    err_t e = load(k_good, sets, 2, &c, NULL);
    assert_int_equal(e.code, 0);
    assert_int_equal(c.values[template_param_index(&c.tpl, "BM")], 128);
    assert_string_equal(c.overrides, "--set BM=128 --set TM=16");
    assert_string_equal(c.label, "t[BM=128,TM=16]");
    config_free(&c);
    param_set_free(&sets[0]);
    param_set_free(&sets[1]);
    assert_int_equal(param_set_parse("BM", &sets[0], &err), EXIT_INPUT);
    err_clear(&err);
    assert_int_equal(param_set_parse("BM=1.5", &sets[0], &err), EXIT_INPUT);
}

static void test_constraint_message_points_at_value(void **state)
{
    (void)state;
    const char *text = "{\n"
                       "  \"name\": \"t\",\n"
                       "  \"template\": \"blocktile\",\n"
                       "  \"params\": {\"BM\": 128, \"BN\": 64, \"BK\": 16,\n"
                       "             \"TM\": 12, \"TN\": 4, \"THREADS\": 128}\n"
                       "}\n";
    config_t c;
    char *path;
    err_t e = load(text, NULL, 0, &c, &path);
    assert_int_equal(e.code, EXIT_INPUT);
    assert_string_equal(e.source, path);
    assert_int_equal(e.line, 5);
    assert_int_equal(e.column, 20);
    assert_non_null(strstr(e.text, "params.TM = 12 does not divide params.BM = 128"));
    unlink(path);
    free(path);
}

static void test_strictness(void **state)
{
    (void)state;
    config_t c;
    err_t e = load("{\"name\": \"t\", \"template\": \"blocktile\", \"parms\": {}}", NULL, 0, &c, NULL);
    assert_int_equal(e.code, EXIT_INPUT);
    assert_non_null(strstr(e.text, "unknown key \"parms\""));
    assert_int_equal(e.column, 40);
    e = load("{\"name\": \"t\", \"template\": \"blocktile\", \"params\": {\"BK_\": 8}}", NULL, 0, &c, NULL);
    assert_non_null(strstr(e.text, "has no parameter \"BK_\""));
    e = load("{\"name\": \"t\", \"template\": \"blocktile\", \"params\": {\"BM\": \"64\"}}", NULL, 0, &c, NULL);
    assert_non_null(strstr(e.text, "params.BM must be an integer, got a string"));
    e = load("{\"name\": \"t\", \"template\": \"blocktile\", \"params\": {\"BM\": 64}}", NULL, 0, &c, NULL);
    assert_non_null(strstr(e.text, "params.BN is missing"));
    e = load("{\"name\": \"t\", \"template\": \"blocktile\",}", NULL, 0, &c, NULL);
    assert_int_equal(e.line, 1);
    assert_non_null(strstr(e.text, "invalid JSON"));
    e = load("{\"template\": \"blocktile\"}", NULL, 0, &c, NULL);
    assert_non_null(strstr(e.text, "missing key \"name\""));
    e = load("{\"name\": \"t\", \"template\": \"tc32\", \"dtype\": \"f64\", \"params\": {}}", NULL, 0, &c, NULL);
    assert_non_null(strstr(e.text, "does not support dtype f64"));
}

static void test_arch_rules(void **state)
{
    (void)state;
    const char *text = "{\"name\": \"t\", \"template\": \"blocktile\", \"params\": {\"BM\": 64, \"BN\": 64, \"BK\": 16,"
                       " \"TM\": 8, \"TN\": 4, \"THREADS\": 128, \"ASYNC\": 1, \"STAGES\": 2}}";
    char *path = temp_config(text);
    config_t c;
    err_t err;
    err_clear(&err);
    assert_int_equal(config_load(path, NULL, 0, NULL, 75, &c, &err), -1);
    assert_non_null(strstr(err.text, "target sm_75"));
    err_clear(&err);
    assert_int_equal(config_load(path, NULL, 0, NULL, 80, &c, &err), 0);
    config_free(&c);
    unlink(path);
    free(path);
}

static void test_shipped_configs_load(void **state)
{
    (void)state;
    const char *names[] = {"naive", "bank_pad_vec", "ldg_wider2", "sb10_warptiling", "warptile_db", "dgemm_pipelined"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "configs/%s.json", names[i]);
        config_t c;
        err_t err;
        err_clear(&err);
        if (config_load(path, NULL, 0, NULL, 90, &c, &err) != 0)
            fail_msg("%s: %s", path, err.text);
        char *p = config_params_try(&c);
        assert_non_null(strstr(p, "="));
        free(p);
        config_free(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_config_and_defaults),
        cmocka_unit_test(test_set_overrides),
        cmocka_unit_test(test_constraint_message_points_at_value),
        cmocka_unit_test(test_strictness),
        cmocka_unit_test(test_arch_rules),
        cmocka_unit_test(test_shipped_configs_load),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
