/* test_results.c — the tune result log: rows to and from JSON, the append-only file (resume, a cut
 * tail, concurrent writers), ranking, the winner as a config, and merging logs. */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "config.h"
#include "merge.h"
#include "rank.h"
#include "result.h"
#include "tunelog.h"
#include "winner.h"
#include "util.h"

static const char *const k_names[] = {"BM", "BN", "BK", "TM", "TN", "THREADS"};
#define NPARAMS 6

/* A temporary directory per test, removed (with what it holds) afterwards. */
static char g_dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/engine-results-XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    DIR *d = opendir(g_dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char *p = xasprintf("%s/%s", g_dir, e->d_name);
            unlink(p);
            free(p);
        }
        closedir(d);
    }
    rmdir(g_dir);
    return 0;
}

static char *in_dir(const char *name)
{
    return xasprintf("%s/%s", g_dir, name);
}

/* A timed blocktile point at M^3 on an H100; bm tells points apart. */
static void make_row(result_row *r, int64_t bm, int stage, const char *status, double ms)
{
    result_row_init(r);
    int64_t values[NPARAMS] = {bm, 64, 16, 8, 4, 128};
    result_row_set_params(r, k_names, values, NPARAMS);
    r->key = result_make_key("blocktile", "f32", 90, 4096, 4096, 4096, 1.0, 0.0, k_names, values, NPARAMS);
    r->time = xstrdup("2026-11-22T19:04:05Z");
    r->config = xstrdup("bank_pad_vec");
    r->tmpl = xstrdup("blocktile");
    r->dtype = xstrdup("f32");
    r->arch = xstrdup("sm_90");
    r->device = xstrdup("NVIDIA H100 80GB HBM3");
    r->device_index = 0;
    r->M = r->N = r->K = 4096;
    r->alpha = 1.0;
    r->beta = 0.0;
    r->seed = 1;
    r->stage = stage;
    r->status = xstrdup(status);
    r->reason = xstrdup(strcmp(status, "ok") == 0 ? "" : "it broke");
    r->switches = xstrdup("FULL_M=1 FULL_N=1");
    r->args = xstrdup("engine bench configs/bank_pad_vec.json --set BM=64");
    if (ms >= 0) {
        r->t_compile = 0.41;
        r->t_verify = 0.052;
        r->t_bench = 0.031;
        r->ms = ms;
        r->ms_min = ms * 0.99;
        r->ms_max = ms * 1.01;
        r->runs = stage == 2 ? 10 : 3;
        r->tflops = 137.44 / ms;
        r->pct_cublas = 100 * 2.68 / ms;
        r->cublas_ms = 2.68;
        r->regs = 128;
        r->spill_bytes = 0;
        r->smem_bytes = 16384;
        r->threads = 128;
        r->occ_pct = 25.0;
        r->clock_mhz = 1980;
        r->power_w = 512.3;
        r->from_cache = true;
    }
}

static void write_text(const char *path, const char *text, const char *mode)
{
    FILE *f = fopen(path, mode);
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static off_t file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_size;
}

/* Append n rows (bm = first, first+1, ...) to a new log at path; returns the file. */
static void write_log(const char *path, int64_t first, size_t n, int stage)
{
    tunelog_t l;
    err_t err;
    err_clear(&err);
    assert_int_equal(tunelog_open(&l, path, false, &err), 0);
    for (size_t i = 0; i < n; i++) {
        result_row r;
        make_row(&r, first + (int64_t)i, stage, "ok", 3.0 + (double)i);
        assert_int_equal(tunelog_append(&l, &r, &err), 0);
        result_row_free(&r);
    }
    tunelog_close(&l);
}

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
    assert_int_equal(n, 40); /* every field of the format */
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

static void test_open_new_and_refuse_existing(void **state)
{
    (void)state;
    char *path = in_dir("tune.jsonl");
    tunelog_t l;
    err_t err;
    err_clear(&err);
    assert_int_equal(tunelog_open(&l, path, false, &err), 0);
    assert_int_equal(l.nrows, 0);
    assert_false(l.truncated_tail);
    tunelog_close(&l);
    assert_int_equal(file_size(path), 0);
    assert_int_equal(tunelog_open(&l, path, false, &err), 0); /* empty: fine */
    tunelog_close(&l);
    write_log(path, 1, 2, 1);
    assert_int_equal(tunelog_open(&l, path, false, &err), -1);
    assert_int_equal(err.code, EXIT_INPUT);
    assert_int_equal(l.fd, -1);
    char buf[2048], want[1024];
    err_format(&err, buf, sizeof buf);
    snprintf(want, sizeof want, "%s: already holds 2 results; pass --resume to continue it or choose another --log",
             path);
    assert_string_equal(buf, want);
    err_clear(&err);
    char *nodir = in_dir("no/such/dir.jsonl");
    assert_int_equal(tunelog_open(&l, nodir, true, &err), -1);
    assert_non_null(strstr(err.text, "cannot open the log"));
    free(nodir);
    free(path);
}

static void test_resume_and_lookup(void **state)
{
    (void)state;
    char *path = in_dir("tune.jsonl");
    tunelog_t l;
    err_t err;
    err_clear(&err);
    assert_int_equal(tunelog_open(&l, path, false, &err), 0);
    result_row r;
    make_row(&r, 128, 1, "ok", 3.0); /* A, stage 1 */
    char *key_a = xstrdup(r.key);
    assert_int_equal(tunelog_append(&l, &r, &err), 0);
    result_row_free(&r);
    make_row(&r, 128, 2, "ok", 2.9); /* A, stage 2 */
    assert_int_equal(tunelog_append(&l, &r, &err), 0);
    result_row_free(&r);
    make_row(&r, 7, 0, "pruned", -1); /* B, stage 0 */
    char *key_b = xstrdup(r.key);
    assert_int_equal(tunelog_append(&l, &r, &err), 0);
    result_row_free(&r);
    make_row(&r, 128, 1, "ok", 9.0); /* A, stage 1 again: the first one wins */
    assert_int_equal(tunelog_append(&l, &r, &err), 0);
    result_row_free(&r);
    for (int i = 0; i < 300; i++) { /* enough to grow the index a few times */
        make_row(&r, 1000 + i, 1, "ok", 1.0 + i);
        assert_int_equal(tunelog_append(&l, &r, &err), 0);
        result_row_free(&r);
    }
    /* A row the log could not read back is refused, and nothing is written. */
    off_t before = file_size(path);
    make_row(&r, 1, 1, "bogus", 1.0);
    assert_int_equal(tunelog_append(&l, &r, &err), -1);
    assert_int_equal(err.code, EXIT_INPUT);
    assert_non_null(strstr(err.text, "refusing to append a row the log could not read back: \"status\" must be"));
    result_row_free(&r);
    assert_int_equal(file_size(path), before);
    assert_int_equal(l.nrows, 304);
    assert_int_equal(tunelog_lookup(&l, key_a, -1)->stage, 2);
    tunelog_close(&l);

    err_clear(&err);
    assert_int_equal(tunelog_open(&l, path, true, &err), 0);
    assert_int_equal(l.nrows, 304);
    assert_int_equal(l.nresumed, 304);
    assert_false(l.truncated_tail);
    const result_row *x = tunelog_lookup(&l, key_a, 1);
    assert_non_null(x);
    assert_true(x->ms == 3.0);
    x = tunelog_lookup(&l, key_a, 2);
    assert_true(x && x->ms == 2.9);
    x = tunelog_lookup(&l, key_a, -1);
    assert_true(x && x->stage == 2);
    x = tunelog_lookup(&l, key_b, -1);
    assert_true(x && x->stage == 0 && strcmp(x->status, "pruned") == 0);
    assert_null(tunelog_lookup(&l, key_b, 1));
    assert_null(tunelog_lookup(&l, "no such point", -1));
    for (int i = 0; i < 300; i++) {
        make_row(&r, 1000 + i, 1, "ok", 1.0);
        x = tunelog_lookup(&l, r.key, 1);
        assert_true(x && x->param_values[0] == 1000 + i);
        result_row_free(&r);
    }
    /* Appended rows join the index. */
    make_row(&r, 5, 1, "ok", 1.5);
    assert_null(tunelog_lookup(&l, r.key, -1));
    assert_int_equal(tunelog_append(&l, &r, &err), 0);
    x = tunelog_lookup(&l, r.key, -1);
    assert_true(x && x->ms == 1.5 && strcmp(x->time, "2026-11-22T19:04:05Z") == 0);
    assert_int_equal(l.nrows, 305);
    assert_int_equal(l.nresumed, 304);
    result_row_free(&r);
    tunelog_close(&l);
    tunelog_close(&l); /* twice is harmless */
    free(key_a);
    free(key_b);
    free(path);
}

static void test_truncated_tail(void **state)
{
    (void)state;
    char *path = in_dir("tune.jsonl");
    write_log(path, 1, 3, 1);
    off_t three = file_size(path);
    result_row r;
    make_row(&r, 4, 1, "ok", 4.0);
    char *line = result_row_to_json(&r);
    result_row_free(&r);
    line[strlen(line) / 2] = '\0';
    write_text(path, line, "a");
    free(line);
    off_t with_tail = file_size(path);
    assert_true(with_tail > three);

    /* Reading only reports the tail and leaves the file alone. */
    result_row *rows;
    size_t n;
    bool cut = false;
    err_t err;
    err_clear(&err);
    assert_int_equal(tunelog_read(path, &rows, &n, &cut, &err), 0);
    assert_int_equal(n, 3);
    assert_true(cut);
    assert_int_equal(file_size(path), with_tail);
    result_rows_free(rows, n);

    tunelog_t l;
    assert_int_equal(tunelog_open(&l, path, true, &err), 0);
    assert_true(l.truncated_tail);
    assert_int_equal(l.nrows, 3);
    assert_int_equal(file_size(path), three);
    make_row(&r, 4, 1, "ok", 4.0);
    assert_int_equal(tunelog_append(&l, &r, &err), 0);
    result_row_free(&r);
    tunelog_close(&l);

    assert_int_equal(tunelog_read(path, &rows, &n, &cut, &err), 0);
    assert_int_equal(n, 4);
    assert_false(cut);
    assert_int_equal(rows[3].param_values[0], 4);
    result_rows_free(rows, n);
    free(path);
}

/* Child of the short-write test: a file-size limit lets only part of the next line in. */
static int append_over_limit(const char *path)
{
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {(rlim_t)file_size(path) + 100, RLIM_INFINITY};
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
        return 10;
    tunelog_t l;
    err_t err;
    err_clear(&err);
    if (tunelog_open(&l, path, true, &err) != 0)
        return 11;
    result_row r;
    make_row(&r, 99, 1, "ok", 1.0);
    int rc = tunelog_append(&l, &r, &err);
    bool said = err.code == EXIT_SYSTEM && strstr(err.text, "short write: 100 of ") != NULL;
    err_clear(&err);
    bool closed = tunelog_append(&l, &r, &err) != 0 && l.fd == -1; /* nothing more through this handle */
    result_row_free(&r);
    tunelog_close(&l);
    return rc != 0 && said && closed ? 0 : 12;
}

static void test_short_write(void **state)
{
    (void)state;
    char *path = in_dir("tune.jsonl");
    write_log(path, 1, 2, 1);
    off_t two = file_size(path);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(append_over_limit(path));
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(file_size(path), two + 100);
    tunelog_t l;
    err_t err;
    err_clear(&err);
    assert_int_equal(tunelog_open(&l, path, true, &err), 0);
    assert_true(l.truncated_tail);
    assert_int_equal(l.nrows, 2);
    assert_int_equal(file_size(path), two);
    tunelog_close(&l);
    free(path);
}

static void test_corrupt_line(void **state)
{
    (void)state;
    char *path = in_dir("tune.jsonl");
    write_log(path, 1, 1, 1);
    write_text(path, "{\"log\":\"engine-tune\", this is not json}\n", "a");
    result_row r;
    make_row(&r, 3, 1, "ok", 3.0);
    char *line = result_row_to_json(&r);
    result_row_free(&r);
    write_text(path, line, "a");
    line[strlen(line) / 3] = '\0';
    write_text(path, line, "a"); /* and a cut tail: the corrupt line still wins */
    free(line);
    size_t len0;
    char *before = read_file(path, &len0);

    tunelog_t l;
    err_t err;
    err_clear(&err);
    assert_int_equal(tunelog_open(&l, path, true, &err), -1);
    assert_int_equal(err.code, EXIT_INPUT);
    assert_string_equal(err.source, path);
    assert_int_equal(err.line, 2);
    assert_true(err.column > 0);
    assert_non_null(strstr(err.text, "invalid JSON"));
    assert_int_equal(l.fd, -1);
    size_t len1;
    char *after = read_file(path, &len1);
    assert_int_equal(len0, len1);
    assert_memory_equal(before, after, len0);
    free(after);

    /* tunelog_read says the same. */
    result_row *rows;
    size_t n;
    err_clear(&err);
    assert_int_equal(tunelog_read(path, &rows, &n, NULL, &err), -1);
    assert_int_equal(err.line, 2);
    assert_null(rows);

    /* A last line that is complete JSON but breaks a rule is not an interrupted write: refused. */
    unlink(path);
    write_log(path, 1, 1, 1);
    make_row(&r, 3, 1, "ok", 3.0);
    line = result_row_to_json(&r);
    result_row_free(&r);
    char *bad = strstr(line, "\"status\":\"ok\"");
    memcpy(bad, "\"status\":\"no\"", 13);
    line[strlen(line) - 1] = '\0';
    write_text(path, line, "a");
    free(line);
    off_t size = file_size(path);
    err_clear(&err);
    assert_int_equal(tunelog_open(&l, path, true, &err), -1);
    assert_int_equal(err.line, 2);
    assert_non_null(strstr(err.text, "\"status\" must be"));
    assert_int_equal(file_size(path), size);
    free(before);
    free(path);
}

static void test_last_line_without_newline(void **state)
{
    (void)state;
    char *path = in_dir("tune.jsonl");
    write_log(path, 1, 1, 1);
    result_row r;
    make_row(&r, 2, 1, "ok", 2.0);
    char *line = result_row_to_json(&r);
    result_row_free(&r);
    line[strlen(line) - 1] = '\0';
    write_text(path, line, "a");
    free(line);
    off_t size = file_size(path);

    result_row *rows;
    size_t n;
    bool cut = true;
    err_t err;
    err_clear(&err);
    assert_int_equal(tunelog_read(path, &rows, &n, &cut, &err), 0);
    assert_int_equal(n, 2);
    assert_false(cut);
    result_rows_free(rows, n);
    assert_int_equal(file_size(path), size);

    tunelog_t l;
    assert_int_equal(tunelog_open(&l, path, true, &err), 0);
    assert_int_equal(l.nrows, 2);
    assert_false(l.truncated_tail);
    assert_int_equal(file_size(path), size + 1);
    make_row(&r, 3, 1, "ok", 3.0);
    assert_int_equal(tunelog_append(&l, &r, &err), 0);
    result_row_free(&r);
    tunelog_close(&l);
    size_t len;
    char *text = read_file(path, &len);
    assert_int_equal(text[size], '\n');
    assert_int_equal(text[len - 1], '\n');
    free(text);
    assert_int_equal(tunelog_read(path, &rows, &n, &cut, &err), 0);
    assert_int_equal(n, 3);
    result_rows_free(rows, n);
    free(path);
}

/* Child of the concurrency test: resume the log and append 500 rows; exit status 0 when all went in. */
static int append_500(const char *path, int child)
{
    tunelog_t l;
    err_t err;
    err_clear(&err);
    if (tunelog_open(&l, path, true, &err) != 0)
        return 1;
    char *reason = xmalloc(5000);
    memset(reason, 'x', 4999);
    reason[4999] = '\0';
    for (int i = 0; i < 500; i++) {
        result_row r;
        make_row(&r, child * 10000 + i, 1, i % 2 ? "ok" : "compile", i % 2 ? 1.0 + i : -1);
        if (i % 2 == 0) { /* long lines cross page boundaries */
            free(r.reason);
            r.reason = xstrdup(reason + (i % 4999));
        }
        int rc = tunelog_append(&l, &r, &err);
        result_row_free(&r);
        if (rc != 0)
            return 1;
    }
    free(reason);
    tunelog_close(&l);
    return 0;
}

static void test_concurrent_appends(void **state)
{
    (void)state;
    char *path = in_dir("tune.jsonl");
    write_log(path, 1, 0, 1);
    pid_t pids[2];
    for (int c = 0; c < 2; c++) {
        fflush(NULL);
        pids[c] = fork();
        assert_true(pids[c] >= 0);
        if (pids[c] == 0)
            _exit(append_500(path, c + 1));
    }
    for (int c = 0; c < 2; c++) {
        int status;
        assert_int_equal(waitpid(pids[c], &status, 0), pids[c]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    result_row *rows;
    size_t n;
    bool cut = true;
    err_t err;
    err_clear(&err);
    assert_int_equal(tunelog_read(path, &rows, &n, &cut, &err), 0);
    assert_int_equal(n, 1000);
    assert_false(cut);
    int per_child[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++)
        per_child[rows[i].param_values[0] / 10000]++;
    assert_int_equal(per_child[1], 500);
    assert_int_equal(per_child[2], 500);
    result_rows_free(rows, n);
    size_t len;
    char *text = read_file(path, &len);
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    assert_int_equal(lines, 1000);
    free(text);
    free(path);
}

static void test_rank_and_print(void **state)
{
    (void)state;
    result_row rows[9];
    make_row(&rows[0], 32, 1, "ok", 2.0);   /* A: stage 1 ... */
    make_row(&rows[1], 32, 2, "ok", 2.5);   /* ... its stage-2 row counts, and finalists rank first */
    make_row(&rows[2], 64, 1, "ok", 1.0);   /* B */
    make_row(&rows[3], 16, 1, "FAIL", -1);  /* C: failed, left out */
    make_row(&rows[4], 96, 1, "ok", 1.0);   /* D: ties with B, after it by key */
    make_row(&rows[5], 8, 0, "pruned", -1); /* E: left out */
    make_row(&rows[6], 48, 2, "fault", -1); /* F: the stage-2 run faulted ... */
    make_row(&rows[7], 48, 1, "ok", 3.0);   /* ... so its stage-1 row is ranked */
    make_row(&rows[8], 64, 1, "ok", 0.5);   /* B again, same stage: the first one wins */
    size_t n;
    const result_row **ranked = rank_rows(rows, 9, &n);
    assert_int_equal(n, 4);
    assert_ptr_equal(ranked[0], &rows[1]);
    assert_ptr_equal(ranked[1], &rows[2]);
    assert_ptr_equal(ranked[2], &rows[4]);
    assert_ptr_equal(ranked[3], &rows[7]);
    assert_true(strcmp(rows[2].key, rows[4].key) < 0);

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    rank_print(f, ranked, n, 3);
    fclose(f);
    assert_non_null(strstr(buf, "top 3 of 4 points ranked; common to every row shown: BN=64 BK=16 TM=8 TN=4 "
                                "THREADS=128\n"));
    assert_non_null(strstr(buf, "rank  TFLOP/s        ms  spread % cuBLAS stage  runs  regs   occ  configuration\n"));
    assert_non_null(strstr(buf, "   1    54.98    2.5000    2.0%    107.2     2    10   128   25%  BM=32\n"));
    assert_non_null(strstr(buf, "   2   137.44    1.0000    2.0%    268.0     1     3   128   25%  BM=64\n"));
    assert_null(strstr(buf, "BM=48"));
    free(buf);
    buf = NULL;
    f = open_memstream(&buf, &len);
    rank_print(f, ranked, 0, 10);
    fclose(f);
    assert_string_equal(buf, "no point has status ok: nothing to rank\n");
    free(buf);
    free(ranked);
    for (int i = 0; i < 9; i++)
        result_row_free(&rows[i]);
}

static void test_cublas_median(void **state)
{
    (void)state;
    result_row rows[6];
    make_row(&rows[0], 32, 2, "ok", 1.0);
    make_row(&rows[1], 48, 2, "ok", 1.1);
    make_row(&rows[2], 64, 2, "ok", 1.2);
    make_row(&rows[3], 96, 2, "ok", 1.3);
    make_row(&rows[4], 16, 1, "ok", 0.9);   /* stage 1: not counted while finalists have one */
    make_row(&rows[5], 8, 2, "FAIL", -1);   /* failed: not counted */
    rows[0].cublas_ms = 3.86;
    rows[1].cublas_ms = 27.97; /* the outlier one finalist saw at 64^3 f64 */
    rows[2].cublas_ms = 3.85;
    rows[3].cublas_ms = 3.87;
    rows[4].cublas_ms = 1.0;
    rows[5].cublas_ms = 1.0;
    assert_float_equal(rank_cublas_ms(rows, 6), 3.865, 1e-12); /* median of 3.85 3.86 3.87 27.97 */
    assert_float_equal(rank_cublas_ms(rows, 3), 3.86, 1e-12);  /* odd count: the middle one */
    assert_float_equal(rank_cublas_ms(&rows[4], 1), 1.0, 1e-12); /* no finalist: stage 1 */
    assert_float_equal(rank_cublas_ms(&rows[5], 1), -1, 1e-12);  /* none */
    for (int i = 0; i < 6; i++)
        result_row_free(&rows[i]);
}

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
        cmocka_unit_test(test_make_key_and_invalidity),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_from_json_missing_fields),
        cmocka_unit_test(test_from_json_errors),
        cmocka_unit_test_setup_teardown(test_open_new_and_refuse_existing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resume_and_lookup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_short_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_last_line_without_newline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_appends, setup, teardown),
        cmocka_unit_test(test_rank_and_print),
        cmocka_unit_test(test_cublas_median),
        cmocka_unit_test_setup_teardown(test_emit_config, setup, teardown),
        cmocka_unit_test_setup_teardown(test_merge, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
