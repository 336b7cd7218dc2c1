/* test_result.c — a row of the tune log: its key and invalidity, to JSON and back, and every rule
 * the strict reader enforces. */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>

#include "result.h"
#include "util.h"
#include "rows.h"

/* A valid line as a jansson object, to break one field at a time. */
static json_t *good_object(void)
{
    result_row r;
    make_row(&r, 128, 1, "ok", 3.012);
    char *line = result_row_to_json(&r);
    json_t *o = json_loads(line, 0, NULL);
    assert_non_null(o);
    free(line);
    result_row_free(&r);
    return o;
}

/* Parse the compact dump of o; returns the error (code 0 when it parsed). */
static err_t parse_object(json_t *o, char **line_out)
{
    char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    result_row r;
    err_t err;
    err_clear(&err);
    if (result_row_from_json(line, "log.jsonl", 7, &r, &err) == 0)
        result_row_free(&r);
    if (line_out)
        *line_out = line;
    else
        free(line);
    return err;
}

static void test_make_key_and_invalidity(void **state)
{
    (void)state;
    const char *names[] = {"BM", "BN", "BK"};
    int64_t values[] = {128, 64, 8};
    char *k = result_make_key("warptile", "f32", 90, 4096, 2048, 512, 1.0, 0.5, names, values, 3);
    assert_string_equal(k, "warptile f32 sm_90 4096x2048x512 a=1 b=0.5 BM=128 BN=64 BK=8");
    free(k);
    k = result_make_key("dmma", "f64", 80, 1, 1, 1, -2.0, 0.0, NULL, NULL, 0);
    assert_string_equal(k, "dmma f64 sm_80 1x1x1 a=-2 b=0");
    free(k);
    const char *table[][2] = {{"ok", "correct"},      {"pruned", "constraints"}, {"filtered", "constraints"},
                              {"compile", "compile"}, {"FAIL", "correctness"},   {"fault", "runtime"},
                              {"error", "runtime"},   {"timeout", "timeout"}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        assert_string_equal(result_invalidity(table[i][0]), table[i][1]);
    assert_null(result_invalidity("fail"));
    assert_null(result_invalidity(NULL));
}

static void test_round_trip(void **state)
{
    (void)state;
    result_row a, b;
    make_row(&a, 128, 2, "ok", 3.012);
    free(a.reason);
    a.reason = xstrdup("say \"hi\" to C:\\path\nnext line\ttab \x01 end");
    free(a.device);
    a.device = xstrdup("GPU \xc3\xa9t\xc3\xa9"); /* UTF-8 passes through */
    a.t_verify = -1;                             /* nulls */
    a.power_w = -1;
    a.regs = -1;
    a.seed = (uint64_t)INT64_MAX;
    a.alpha = -0.75;
    a.beta = 0.1 + 0.2; /* needs 17 digits */
    char *line = result_row_to_json(&a);
    size_t len = strlen(line);
    assert_true(len > 0 && line[len - 1] == '\n');
    assert_null(memchr(line, '\n', len - 1)); /* one line */
    assert_non_null(strstr(line, "\"times\":{\"compilation\":0.41,\"verification\":null,\"benchmark\":0.031}"));
    assert_non_null(strstr(line, "{\"name\":\"time\",\"value\":3.012,\"unit\":\"ms\"}"));
    assert_non_null(strstr(line, "\"unit\":\"TFLOP/s\""));
    assert_null(strstr(line, "\"power\"")); /* not measured, not listed */
    assert_non_null(strstr(line, "\"power_w\":null"));
    assert_non_null(strstr(line, "\"invalidity\":\"correct\""));
    assert_non_null(strstr(line, "\"reason\":\"say \\\"hi\\\" to C:\\\\path\\nnext line\\ttab \\u0001 end\""));

    err_t err;
    err_clear(&err);
    assert_int_equal(result_row_from_json(line, "x.jsonl", 1, &b, &err), 0);
    assert_string_equal(b.time, a.time);
    assert_string_equal(b.key, a.key);
    assert_string_equal(b.config, a.config);
    assert_string_equal(b.tmpl, a.tmpl);
    assert_string_equal(b.dtype, a.dtype);
    assert_string_equal(b.arch, a.arch);
    assert_string_equal(b.device, a.device);
    assert_int_equal(b.device_index, a.device_index);
    assert_int_equal(b.M, a.M);
    assert_int_equal(b.N, a.N);
    assert_int_equal(b.K, a.K);
    assert_true(b.alpha == a.alpha && b.beta == a.beta);
    assert_true(b.seed == a.seed);
    assert_int_equal(b.stage, 2);
    assert_int_equal(b.nparams, NPARAMS);
    for (size_t i = 0; i < NPARAMS; i++) {
        assert_string_equal(b.param_names[i], a.param_names[i]);
        assert_int_equal(b.param_values[i], a.param_values[i]);
    }
    assert_string_equal(b.status, "ok");
    assert_string_equal(b.invalidity, "correct");
    assert_string_equal(b.reason, a.reason);
    assert_true(b.t_compile == a.t_compile && b.t_verify == -1 && b.t_bench == a.t_bench);
    assert_true(b.ms == a.ms && b.ms_min == a.ms_min && b.ms_max == a.ms_max);
    assert_int_equal(b.runs, a.runs);
    assert_true(b.tflops == a.tflops && b.pct_cublas == a.pct_cublas && b.cublas_ms == a.cublas_ms);
    assert_int_equal(b.regs, -1);
    assert_int_equal(b.spill_bytes, 0);
    assert_int_equal(b.smem_bytes, a.smem_bytes);
    assert_int_equal(b.threads, a.threads);
    assert_true(b.occ_pct == a.occ_pct && b.clock_mhz == a.clock_mhz && b.power_w == -1);
    assert_string_equal(b.acc_class, "f32");
    assert_true(b.err_max_u == 3.25 && b.err_mean_u == 0.27 && b.cublas_err_max_u == 7.5 && b.cublas_err_mean_u == 0.28);
    assert_true(b.from_cache);
    assert_string_equal(b.switches, a.switches);
    assert_string_equal(b.args, a.args);
    /* Serialising the parsed row gives the same line back. */
    char *again = result_row_to_json(&b);
    assert_string_equal(again, line);
    free(again);
    free(line);
    result_row_free(&b);

    /* A row that never reached a GPU: time filled in, every number null, from_cache false. */
    result_row_free(&a);
    result_row_init(&a);
    a.key = xstrdup("k");
    a.config = xstrdup("c");
    a.tmpl = xstrdup("t");
    a.dtype = xstrdup("f64");
    a.arch = xstrdup("sm_80");
    a.M = a.N = a.K = 17;
    a.alpha = 1;
    a.status = xstrdup("pruned");
    a.reason = xstrdup("BM % TM != 0");
    line = result_row_to_json(&a);
    assert_non_null(strstr(line, "\"device\":\"\",\"device_index\":-1"));
    assert_non_null(strstr(line, "\"alpha\":1.0,\"beta\":0.0"));
    assert_non_null(strstr(line, "\"measurements\":[]"));
    assert_non_null(strstr(line, "\"invalidity\":\"constraints\""));
    assert_int_equal(result_row_from_json(line, "x.jsonl", 1, &b, &err), 0);
    assert_int_equal(strlen(b.time), 20);
    assert_true(b.ms == -1 && b.runs == -1 && b.occ_pct == -1 && !b.from_cache && b.device_index == -1);
    assert_string_equal(b.switches, "");
    free(line);
    result_row_free(&b);

    /* Invalid UTF-8 becomes U+FFFD, so the line stays readable. */
    free(a.reason);
    a.reason = xstrdup("bad \xff byte");
    line = result_row_to_json(&a);
    assert_int_equal(result_row_from_json(line, "x.jsonl", 1, &b, &err), 0);
    assert_string_equal(b.reason, "bad \xef\xbf\xbd byte");
    free(line);
    result_row_free(&b);
    result_row_free(&a);
}

static void test_copy(void **state)
{
    (void)state;
    result_row r, c;
    make_row(&r, 128, 2, "ok", 3.012);
    result_row_copy(&c, &r);
    char *a = result_row_to_json(&r), *b = result_row_to_json(&c);
    assert_string_equal(a, b);
    assert_ptr_not_equal(c.key, r.key);
    free(a);
    free(b);
    result_row_free(&c);
    /* A row the log could not read back copies as an empty row. */
    free(r.status);
    r.status = xstrdup("no such status");
    result_row_copy(&c, &r);
    assert_null(c.key);
    assert_int_equal(c.stage, 0);
    result_row_free(&c);
    result_row_free(&r);
}

static void test_from_json_missing_fields(void **state)
{
    (void)state;
    json_t *o = good_object();
    const char *key;
    json_t *v;
    size_t n = 0;
    json_object_foreach(o, key, v)
    {
        json_t *copy = json_deep_copy(o);
        json_object_del(copy, key);
        /* The accuracy fields came later: a log without them reads back with them null. */
        if (strcmp(key, "class") == 0 || strstr(key, "err_m")) {
            result_row back;
            err_t e;
            err_clear(&e);
            char *line = json_dumps(copy, JSON_COMPACT | JSON_PRESERVE_ORDER);
            if (result_row_from_json(line, "log.jsonl", 7, &back, &e))
                fail_msg("without %s: %s", key, e.text);
            free(line);
            assert_true(strcmp(key, "class") == 0 ? back.acc_class == NULL
                        : strcmp(key, "err_max_u") == 0 ? back.err_max_u == -1 : true);
            result_row_free(&back);
            json_decref(copy);
            n++;
            continue;
        }
        err_t e = parse_object(copy, NULL);
        char want[64];
        snprintf(want, sizeof want, "missing field \"%s\"", key);
        if (e.code != EXIT_INPUT || !strstr(e.text, want))
            fail_msg("without %s: got \"%s\"", key, e.text);
        assert_string_equal(e.source, "log.jsonl");
        assert_int_equal(e.line, 7);
        json_decref(copy);
        n++;
    }
    assert_int_equal(n, 45); /* every field of the format */
    json_t *copy = json_deep_copy(o);
    json_object_del(json_object_get(copy, "times"), "verification");
    err_t e = parse_object(copy, NULL);
    assert_non_null(strstr(e.text, "missing field \"times.verification\""));
    json_decref(copy);
    json_decref(o);
}

static void test_from_json_errors(void **state)
{
    (void)state;
    json_t *o = good_object();
    char *line;

    /* Wrong type, pointing at the value. */
    json_object_set_new(o, "M", json_string("4096"));
    err_t e = parse_object(o, &line);
    assert_int_equal(e.code, EXIT_INPUT);
    assert_string_equal(e.text, "\"M\" must be an integer, got a string");
    assert_int_equal(e.column, (int)(strstr(line, "\"M\":") - line) + 5);
    free(line);
    json_object_set_new(o, "M", json_integer(4096));
    json_object_set_new(o, "ms", json_string("fast"));
    e = parse_object(o, NULL);
    assert_string_equal(e.text, "\"ms\" must be a number or null, got a string");
    json_object_set_new(o, "ms", json_real(-1.0));
    e = parse_object(o, NULL);
    assert_non_null(strstr(e.text, "\"ms\" = -1 must not be negative"));
    json_object_set_new(o, "ms", json_real(3.0));
    json_object_set_new(o, "from_cache", json_integer(1));
    e = parse_object(o, NULL);
    assert_string_equal(e.text, "\"from_cache\" must be true or false, got an integer");
    json_object_set_new(o, "from_cache", json_false());
    json_object_set_new(json_object_get(o, "configuration"), "BM", json_real(128.5));
    e = parse_object(o, NULL);
    assert_string_equal(e.text, "\"configuration.BM\" must be an integer, got a number with a fraction");
    json_object_set_new(json_object_get(o, "configuration"), "BM", json_integer(128));
    json_object_set_new(o, "stage", json_integer(3));
    e = parse_object(o, NULL);
    assert_string_equal(e.text, "\"stage\" = 3 must be between 0 and 2");
    json_object_set_new(o, "stage", json_integer(0));
    e = parse_object(o, NULL);
    assert_non_null(strstr(e.text, "a row with status \"ok\" must be timed"));
    json_object_set_new(o, "stage", json_integer(1));

    /* Unknown status; invalidity that does not match. */
    json_object_set_new(o, "status", json_string("fail"));
    e = parse_object(o, NULL);
    assert_string_equal(
        e.text, "\"status\" must be ok, pruned, filtered, compile, FAIL, fault, timeout or error, got \"fail\"");
    json_object_set_new(o, "status", json_string("FAIL"));
    e = parse_object(o, NULL);
    assert_string_equal(e.text, "\"invalidity\" must be \"correctness\" for status \"FAIL\", got \"correct\"");
    json_object_set_new(o, "status", json_string("ok"));

    /* Unknown field, pointing at its key; x_ fields are extensions. */
    json_object_set_new(o, "ms_mni", json_real(1.0));
    e = parse_object(o, &line);
    assert_string_equal(e.text, "unknown field \"ms_mni\" (a field of your own must start with x_)");
    assert_int_equal(e.column, (int)(strstr(line, "\"ms_mni\"") - line) + 1);
    free(line);
    json_object_del(o, "ms_mni");
    json_object_set_new(o, "x_note", json_string("tried on a quiet machine"));
    json_object_set_new(o, "x_extra", json_pack("{s:[i,i]}", "a", 1, 2));
    e = parse_object(o, NULL);
    assert_int_equal(e.code, 0);
    json_object_set_new(json_object_get(o, "times"), "linking", json_real(0.1));
    e = parse_object(o, NULL);
    assert_non_null(strstr(e.text, "unknown field \"times.linking\""));
    json_object_del(json_object_get(o, "times"), "linking");
    json_object_set_new(o, "version", json_integer(2));
    e = parse_object(o, NULL);
    assert_string_equal(e.text, "\"version\" 2 is not one this engine reads (1)");
    json_object_set_new(o, "version", json_integer(1));
    json_object_set_new(o, "measurements", json_pack("[{s:s}]", "name", "time"));
    e = parse_object(o, NULL);
    assert_non_null(strstr(e.text, "\"measurements[0]\" must be"));
    json_decref(o);

    /* Not JSON: jansson's column, the caller's line. */
    result_row r;
    err_clear(&e);
    assert_int_equal(result_row_from_json("{\"log\": \"engine-tune\", oops}", "a.jsonl", 12, &r, &e), -1);
    assert_int_equal(e.code, EXIT_INPUT);
    assert_string_equal(e.source, "a.jsonl");
    assert_int_equal(e.line, 12);
    assert_true(e.column > 20);
    assert_non_null(strstr(e.text, "invalid JSON"));
    err_clear(&e);
    assert_int_equal(result_row_from_json("[1, 2]", "a.jsonl", 1, &r, &e), -1);
    assert_string_equal(e.text, "a log line must be a JSON object, got an array");
    err_clear(&e);
    assert_int_equal(result_row_from_json("\n", "a.jsonl", 3, &r, &e), -1);
    assert_non_null(strstr(e.text, "empty line"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_make_key_and_invalidity),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_copy),
        cmocka_unit_test(test_from_json_missing_fields),
        cmocka_unit_test(test_from_json_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
