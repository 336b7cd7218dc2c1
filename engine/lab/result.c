/* result.c — see result.h: one evaluated point as a row, its key, and its JSON line. */
#include "result.h"

#include "arch.h"
#include "jsonloc.h"
#include "jsonrd.h"
#include "util.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------- */
/* Rows                                                                                            */

void result_row_init(result_row *r)
{
    memset(r, 0, sizeof *r);
    r->device_index = -1;
    r->t_compile = r->t_verify = r->t_bench = -1;
    r->ms = r->ms_min = r->ms_max = -1;
    r->runs = -1;
    r->tflops = r->pct_cublas = r->cublas_ms = -1;
    r->regs = r->spill_bytes = r->smem_bytes = r->threads = -1;
    r->occ_pct = r->clock_mhz = r->power_w = -1;
    r->err_max_u = r->err_mean_u = r->cublas_err_max_u = r->cublas_err_mean_u = -1;
}

static void free_params(result_row *r)
{
    for (size_t i = 0; i < r->nparams; i++)
        free(r->param_names[i]);
    free(r->param_names);
    free(r->param_values);
    r->param_names = NULL;
    r->param_values = NULL;
    r->nparams = 0;
}

void result_row_free(result_row *r)
{
    char *strs[] = {r->time,   r->key,    r->config,     r->tmpl,   r->dtype,    r->arch,
                    r->device, r->status, r->invalidity, r->reason, r->switches, r->args, r->acc_class};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        free(strs[i]);
    free_params(r);
    result_row_init(r);
}

void result_row_set_params(result_row *r, const char *const *names, const int64_t *values, size_t n)
{
    free_params(r);
    r->param_names = xcalloc(n, sizeof *r->param_names);
    r->param_values = xcalloc(n, sizeof *r->param_values);
    for (size_t i = 0; i < n; i++) {
        r->param_names[i] = xstrdup(names[i]);
        r->param_values[i] = values[i];
    }
    r->nparams = n;
}

void result_rows_free(result_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        result_row_free(&rows[i]);
    free(rows);
}

void result_row_copy(result_row *dst, const result_row *src)
{
    char *line = result_row_to_json(src);
    err_t err;
    err_clear(&err);
    if (result_row_from_json(line, "copy", 0, dst, &err))
        result_row_init(dst);
    free(line);
}

char *result_make_key(const char *tmpl, const char *dtype, int arch, int64_t M, int64_t N, int64_t K, double alpha,
                      double beta, const char *const *names, const int64_t *values, size_t n)
{
    strbuf sb;
    sb_init(&sb);
    char name[16];
    sb_addf(&sb, "%s %s %s %lldx%lldx%lld a=%g b=%g", tmpl, dtype, arch_name(arch, name, sizeof name), (long long)M,
            (long long)N, (long long)K, alpha, beta);
    for (size_t i = 0; i < n; i++)
        sb_addf(&sb, " %s=%lld", names[i], (long long)values[i]);
    return sb_steal(&sb);
}

static const char *const k_status[][2] = {
    {"ok", "correct"},       {"pruned", "constraints"}, {"filtered", "constraints"}, {"compile", "compile"},
    {"FAIL", "correctness"}, {"fault", "runtime"},      {"error", "runtime"},        {"timeout", "timeout"},
};
#define NSTATUS (sizeof k_status / sizeof k_status[0])

const char *result_invalidity(const char *status)
{
    for (size_t i = 0; status && i < NSTATUS; i++)
        if (strcmp(k_status[i][0], status) == 0)
            return k_status[i][1];
    return NULL;
}

/* ---------------------------------------------------------------------------------------------- */
/* Writing a row                                                                                   */

/* A nullable number: negative or not finite is null. */
static void add_opt_double(strbuf *sb, double v)
{
    if (v < 0 || !isfinite(v))
        sb_add(sb, "null");
    else
        sb_add_double(sb, v);
}

static void add_opt_int(strbuf *sb, int v)
{
    if (v < 0)
        sb_add(sb, "null");
    else
        sb_addf(sb, "%d", v);
}

static void add_key(strbuf *sb, const char *key, bool first)
{
    if (!first)
        sb_add(sb, ",");
    sb_addf(sb, "\"%s\":", key);
}

static void add_measurement(strbuf *sb, bool *first, const char *name, double value, const char *unit)
{
    if (value < 0 || !isfinite(value))
        return;
    sb_addf(sb, "%s{\"name\":\"%s\",\"value\":", *first ? "" : ",", name);
    sb_add_double(sb, value);
    sb_addf(sb, ",\"unit\":\"%s\"}", unit);
    *first = false;
}

char *result_row_to_json(const result_row *r)
{
    strbuf sb;
    sb_init(&sb);
    char *now = r->time ? NULL : utc_now();
    const char *inv = result_invalidity(r->status);
    sb_addf(&sb, "{\"log\":\"%s\",\"version\":%d", RESULT_LOG_NAME, RESULT_VERSION);
    add_key(&sb, "time", false);
    sb_add_json_string(&sb, r->time ? r->time : now);
    add_key(&sb, "key", false);
    sb_add_json_string(&sb, r->key);
    add_key(&sb, "config", false);
    sb_add_json_string(&sb, r->config);
    add_key(&sb, "template", false);
    sb_add_json_string(&sb, r->tmpl);
    add_key(&sb, "dtype", false);
    sb_add_json_string(&sb, r->dtype);
    add_key(&sb, "arch", false);
    sb_add_json_string(&sb, r->arch);
    add_key(&sb, "device", false);
    sb_add_json_string(&sb, r->device);
    sb_addf(&sb, ",\"device_index\":%d,\"M\":%lld,\"N\":%lld,\"K\":%lld", r->device_index, (long long)r->M,
            (long long)r->N, (long long)r->K);
    add_key(&sb, "alpha", false);
    sb_add_double(&sb, isfinite(r->alpha) ? r->alpha : 0);
    add_key(&sb, "beta", false);
    sb_add_double(&sb, isfinite(r->beta) ? r->beta : 0);
    sb_addf(&sb, ",\"seed\":%llu,\"stage\":%d", (unsigned long long)r->seed, r->stage);
    add_key(&sb, "configuration", false);
    sb_add(&sb, "{");
    for (size_t i = 0; i < r->nparams; i++) {
        if (i)
            sb_add(&sb, ",");
        sb_add_json_string(&sb, r->param_names[i]);
        sb_addf(&sb, ":%lld", (long long)r->param_values[i]);
    }
    sb_add(&sb, "}");
    add_key(&sb, "status", false);
    sb_add_json_string(&sb, r->status);
    add_key(&sb, "invalidity", false);
    sb_add_json_string(&sb, inv ? inv : "");
    add_key(&sb, "reason", false);
    sb_add_json_string(&sb, r->reason);
    sb_add(&sb, ",\"times\":{\"compilation\":");
    add_opt_double(&sb, r->t_compile);
    sb_add(&sb, ",\"verification\":");
    add_opt_double(&sb, r->t_verify);
    sb_add(&sb, ",\"benchmark\":");
    add_opt_double(&sb, r->t_bench);
    sb_add(&sb, "},\"measurements\":[");
    bool first = true;
    add_measurement(&sb, &first, "time", r->ms, "ms");
    add_measurement(&sb, &first, "throughput", r->tflops, "TFLOP/s");
    add_measurement(&sb, &first, "cublas_time", r->cublas_ms, "ms");
    add_measurement(&sb, &first, "power", r->power_w, "W");
    sb_add(&sb, "]");
    const struct {
        const char *name;
        double v;
    } d1[] = {{"ms", r->ms}, {"ms_min", r->ms_min}, {"ms_max", r->ms_max}};
    for (size_t i = 0; i < 3; i++) {
        add_key(&sb, d1[i].name, false);
        add_opt_double(&sb, d1[i].v);
    }
    add_key(&sb, "runs", false);
    add_opt_int(&sb, r->runs);
    const struct {
        const char *name;
        double v;
    } d2[] = {{"tflops", r->tflops}, {"pct_cublas", r->pct_cublas}, {"cublas_ms", r->cublas_ms}};
    for (size_t i = 0; i < 3; i++) {
        add_key(&sb, d2[i].name, false);
        add_opt_double(&sb, d2[i].v);
    }
    const struct {
        const char *name;
        int v;
    } i1[] = {
        {"regs", r->regs}, {"spill_bytes", r->spill_bytes}, {"smem_bytes", r->smem_bytes}, {"threads", r->threads}};
    for (size_t i = 0; i < 4; i++) {
        add_key(&sb, i1[i].name, false);
        add_opt_int(&sb, i1[i].v);
    }
    const struct {
        const char *name;
        double v;
    } d3[] = {{"occ_pct", r->occ_pct}, {"clock_mhz", r->clock_mhz}, {"power_w", r->power_w}};
    for (size_t i = 0; i < 3; i++) {
        add_key(&sb, d3[i].name, false);
        add_opt_double(&sb, d3[i].v);
    }
    add_key(&sb, "class", false);
    sb_add_json_string(&sb, r->acc_class);
    const struct {
        const char *name;
        double v;
    } d4[] = {{"err_max_u", r->err_max_u},
              {"err_mean_u", r->err_mean_u},
              {"cublas_err_max_u", r->cublas_err_max_u},
              {"cublas_err_mean_u", r->cublas_err_mean_u}};
    for (size_t i = 0; i < 4; i++) {
        add_key(&sb, d4[i].name, false);
        add_opt_double(&sb, d4[i].v);
    }
    sb_addf(&sb, ",\"from_cache\":%s", r->from_cache ? "true" : "false");
    add_key(&sb, "switches", false);
    sb_add_json_string(&sb, r->switches);
    add_key(&sb, "args", false);
    sb_add_json_string(&sb, r->args);
    sb_add(&sb, "}\n");
    free(now);
    return sb_steal(&sb);
}

/* ---------------------------------------------------------------------------------------------- */
/* Reading a row                                                                                   */

static const char *const k_fields[] = {
    "log",        "version",       "time",    "key",        "config",     "template",   "dtype",        "arch",
    "device",     "device_index",  "M",       "N",          "K",          "alpha",      "beta",         "seed",
    "stage",      "configuration", "status",  "invalidity", "reason",     "times",      "measurements", "ms",
    "ms_min",     "ms_max",        "runs",    "tflops",     "pct_cublas", "cublas_ms",  "regs",         "spill_bytes",
    "smem_bytes", "threads",       "occ_pct", "clock_mhz",  "power_w",    "from_cache", "switches",     "args",
    "class",      "err_max_u",     "err_mean_u", "cublas_err_max_u", "cublas_err_mean_u", NULL};

static const char *const k_times[] = {"compilation", "verification", "benchmark", NULL};

/* How a row's messages name member key of o: "key" or "parent.key", quoted (the log's fields). */
static const char *field(const jsonrd_obj *o, const char *key, char *buf, size_t len)
{
    snprintf(buf, len, "\"%s%s%s\"", o->name, o->name[0] ? "." : "", key);
    return buf;
}

/* The member key of o, or -1 with "missing field" at o. */
static int member(const jsonrd_obj *o, const char *key, json_t **out)
{
    char f[256];
    *out = json_object_get(o->obj, key);
    return *out ? 0 : jsonrd_fail(o, NULL, false, "missing field %s", field(o, key, f, sizeof f));
}

static int get_string(const jsonrd_obj *o, const char *key, bool nonempty, char **out)
{
    json_t *v;
    const char *s;
    if (member(o, key, &v) || jsonrd_string(o, key, nonempty ? JSONRD_NONEMPTY : 0, NULL, &s) < 0)
        return -1;
    if (out)
        *out = xstrdup(s);
    return 0;
}

/* An integer in [lo, hi]; null gives -1 when nullable. */
static int get_int(const jsonrd_obj *o, const char *key, int64_t lo, int64_t hi, bool nullable, int64_t *out)
{
    json_t *v;
    char f[256];
    if (member(o, key, &v))
        return -1;
    if (nullable && json_is_null(v)) {
        *out = -1;
        return 0;
    }
    if (!json_is_integer(v))
        return jsonrd_fail(o, key, false, "%s must be an integer%s, got %s", field(o, key, f, sizeof f),
                           nullable ? " or null" : "", jsonloc_kind(v));
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
        return jsonrd_fail(o, key, false, "%s = %lld must be between %lld and %lld", field(o, key, f, sizeof f),
                           (long long)x, (long long)lo, (long long)hi);
    *out = (int64_t)x;
    return 0;
}

static int get_opt_int(const jsonrd_obj *o, const char *key, int *out)
{
    int64_t x;
    if (get_int(o, key, 0, INT_MAX, true, &x))
        return -1;
    *out = (int)x;
    return 0;
}

/* A number (integer or real); nullable ones must be >= 0, and null gives -1. */
static int get_number(const jsonrd_obj *o, const char *key, bool nullable, double *out)
{
    json_t *v;
    char f[256];
    if (member(o, key, &v))
        return -1;
    if (nullable && json_is_null(v)) {
        *out = -1;
        return 0;
    }
    if (!json_is_number(v))
        return jsonrd_fail(o, key, false, "%s must be a number%s, got %s", field(o, key, f, sizeof f),
                           nullable ? " or null" : "", jsonloc_kind(v));
    double x = json_number_value(v);
    if (nullable && x < 0)
        return jsonrd_fail(o, key, false, "%s = %g must not be negative (an unknown value is null)",
                           field(o, key, f, sizeof f), x);
    *out = x;
    return 0;
}

static bool is_utc_time(const char *s)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
    if (strlen(s) != sizeof shape - 1)
        return false;
    for (size_t i = 0; shape[i]; i++)
        if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i])
            return false;
    return true;
}

static int get_configuration(const jsonrd_obj *top, result_row *r)
{
    json_t *v;
    jsonrd_obj cfg;
    if (member(top, "configuration", &v) || jsonrd_object(top, "configuration", 0, NULL, &cfg) < 0)
        return -1;
    size_t n = json_object_size(v);
    r->param_names = xcalloc(n, sizeof *r->param_names);
    r->param_values = xcalloc(n, sizeof *r->param_values);
    const char *name;
    json_t *x;
    char f[256];
    json_object_foreach(v, name, x)
    {
        if (!json_is_integer(x))
            return jsonrd_fail(&cfg, name, false, "%s must be an integer, got %s", field(&cfg, name, f, sizeof f),
                               jsonloc_kind(x));
        if (!*name)
            return jsonrd_fail(&cfg, name, true, "\"configuration\" holds a parameter without a name");
        r->param_names[r->nparams] = xstrdup(name);
        r->param_values[r->nparams++] = json_integer_value(x);
    }
    return 0;
}

static int get_times(const jsonrd_obj *top, result_row *r)
{
    json_t *v;
    jsonrd_obj t;
    if (member(top, "times", &v) || jsonrd_object(top, "times", 0, NULL, &t) < 0)
        return -1;
    const char *name;
    json_t *x;
    json_object_foreach(v, name, x)
    {
        if (!str_in_list(k_times, name))
            return jsonrd_fail(&t, name, true,
                               "unknown field \"times.%s\" (times holds compilation, verification, benchmark)", name);
    }
    return get_number(&t, "compilation", true, &r->t_compile) || get_number(&t, "verification", true, &r->t_verify) ||
                   get_number(&t, "benchmark", true, &r->t_bench)
               ? -1
               : 0;
}

/* measurements: checked for shape only; the values are the row's own fields. */
static int check_measurements(const jsonrd_obj *top)
{
    json_t *v;
    if (member(top, "measurements", &v) || jsonrd_array(top, "measurements", 0, NULL, &v) < 0)
        return -1;
    size_t i;
    json_t *m;
    json_array_foreach(v, i, m)
    {
        if (!json_is_object(m))
            return jsonrd_fail(top, "measurements", false, "\"measurements[%zu]\" must be an object, got %s", i,
                               jsonloc_kind(m));
        json_t *name = json_object_get(m, "name"), *value = json_object_get(m, "value"),
               *unit = json_object_get(m, "unit");
        if (json_object_size(m) != 3 || !json_is_string(name) || !json_is_number(value) || !json_is_string(unit))
            return jsonrd_fail(top, "measurements", false,
                               "\"measurements[%zu]\" must be {\"name\": string, \"value\": number, \"unit\": string}",
                               i);
    }
    return 0;
}

/* The row's fields after the configuration, in the order of the format. */
static int get_outcome(const jsonrd_obj *c, result_row *r)
{
    if (get_string(c, "status", true, &r->status))
        return -1;
    const char *inv = result_invalidity(r->status);
    if (!inv)
        return jsonrd_fail(
            c, "status", false,
            "\"status\" must be ok, pruned, filtered, compile, FAIL, fault, timeout or error, got \"%s\"", r->status);
    if (get_string(c, "invalidity", true, &r->invalidity))
        return -1;
    if (strcmp(inv, r->invalidity) != 0)
        return jsonrd_fail(c, "invalidity", false, "\"invalidity\" must be \"%s\" for status \"%s\", got \"%s\"", inv,
                           r->status, r->invalidity);
    if (get_string(c, "reason", false, &r->reason) || get_times(c, r) || check_measurements(c) ||
        get_number(c, "ms", true, &r->ms) || get_number(c, "ms_min", true, &r->ms_min) ||
        get_number(c, "ms_max", true, &r->ms_max) || get_opt_int(c, "runs", &r->runs) ||
        get_number(c, "tflops", true, &r->tflops) || get_number(c, "pct_cublas", true, &r->pct_cublas) ||
        get_number(c, "cublas_ms", true, &r->cublas_ms) || get_opt_int(c, "regs", &r->regs) ||
        get_opt_int(c, "spill_bytes", &r->spill_bytes) || get_opt_int(c, "smem_bytes", &r->smem_bytes) ||
        get_opt_int(c, "threads", &r->threads) || get_number(c, "occ_pct", true, &r->occ_pct) ||
        get_number(c, "clock_mhz", true, &r->clock_mhz) || get_number(c, "power_w", true, &r->power_w))
        return -1;
    /* The accuracy fields: absent in logs written before them (null then). */
    if (json_object_get(c->obj, "class") && get_string(c, "class", false, &r->acc_class))
        return -1;
    const char *errs[] = {"err_max_u", "err_mean_u", "cublas_err_max_u", "cublas_err_mean_u"};
    double *errv[] = {&r->err_max_u, &r->err_mean_u, &r->cublas_err_max_u, &r->cublas_err_mean_u};
    for (size_t i = 0; i < 4; i++)
        if (json_object_get(c->obj, errs[i]) && get_number(c, errs[i], true, errv[i]))
            return -1;
    json_t *v;
    if (member(c, "from_cache", &v) || jsonrd_bool(c, "from_cache", 0, &r->from_cache) < 0 ||
        get_string(c, "switches", false, &r->switches) || get_string(c, "args", false, &r->args))
        return -1;
    /* The ranking sorts ok rows by their time: an ok row without one could not be placed. */
    if (strcmp(r->status, "ok") == 0 && (r->stage < 1 || r->ms < 0))
        return jsonrd_fail(c, r->stage < 1 ? "stage" : "ms", false,
                           "a row with status \"ok\" must be timed (stage 1 or 2, ms known), got stage %d and ms %s",
                           r->stage, r->ms < 0 ? "null" : "known");
    return 0;
}

static int get_row(const jsonrd_obj *c, result_row *r)
{
    const char *key;
    json_t *v;
    json_object_foreach(c->obj, key, v)
    {
        if (!str_in_list(k_fields, key) && strncmp(key, "x_", 2) != 0)
            return jsonrd_fail(c, key, true, "unknown field \"%s\" (a field of your own must start with x_)", key);
    }
    char *log = NULL;
    if (get_string(c, "log", false, &log))
        return -1;
    bool is_log = strcmp(log, RESULT_LOG_NAME) == 0;
    free(log);
    if (!is_log)
        return jsonrd_fail(c, "log", false, "\"log\" must be \"%s\": this is not an engine tune log", RESULT_LOG_NAME);
    int64_t x;
    if (get_int(c, "version", 0, INT_MAX, false, &x))
        return -1;
    if (x != RESULT_VERSION)
        return jsonrd_fail(c, "version", false, "\"version\" %lld is not one this engine reads (%d)", (long long)x,
                           RESULT_VERSION);
    if (get_string(c, "time", true, &r->time))
        return -1;
    if (!is_utc_time(r->time))
        return jsonrd_fail(c, "time", false, "\"time\" must be UTC as YYYY-MM-DDTHH:MM:SSZ, got \"%s\"", r->time);
    if (get_string(c, "key", true, &r->key) || get_string(c, "config", true, &r->config) ||
        get_string(c, "template", true, &r->tmpl) || get_string(c, "dtype", true, &r->dtype) ||
        get_string(c, "arch", true, &r->arch))
        return -1;
    if (strncmp(r->arch, "sm_", 3) != 0 || !r->arch[3])
        return jsonrd_fail(c, "arch", false, "\"arch\" must look like sm_90, got \"%s\"", r->arch);
    if (get_string(c, "device", false, &r->device) || get_int(c, "device_index", -1, INT_MAX, false, &x))
        return -1;
    r->device_index = (int)x;
    if (get_int(c, "M", 1, INT64_MAX, false, &r->M) || get_int(c, "N", 1, INT64_MAX, false, &r->N) ||
        get_int(c, "K", 1, INT64_MAX, false, &r->K) || get_number(c, "alpha", false, &r->alpha) ||
        get_number(c, "beta", false, &r->beta) || get_int(c, "seed", 0, INT64_MAX, false, &x))
        return -1;
    r->seed = (uint64_t)x;
    if (get_int(c, "stage", 0, 2, false, &x))
        return -1;
    r->stage = (int)x;
    return get_configuration(c, r) || get_outcome(c, r) ? -1 : 0;
}

int result_row_parse(const char *text, size_t len, const char *path, int lineno, result_row *r, bool *syntax,
                     err_t *err)
{
    /* The line's own number for every message; a field's column in it where the text has one. */
    jsonrd rd = {.file = path, .text = text, .line = lineno, .col = 1, .err = err};
    result_row_init(r);
    if (syntax)
        *syntax = false;
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
        len--;
    if (len == 0)
        return err_set(err, ERR_INPUT, path, lineno, 0, "empty line (a log holds one JSON object per line)"), -1;
    json_t *root;
    if (jsonrd_load(&rd, len, 0, "invalid JSON", &root)) {
        if (syntax)
            *syntax = true;
        return -1;
    }
    jsonrd_obj top;
    int rc = jsonrd_top(&rd, root, "a log line", &top) || get_row(&top, r) ? -1 : 0;
    json_decref(root);
    if (rc)
        result_row_free(r);
    return rc;
}

int result_row_from_json(const char *line, const char *path, int lineno, result_row *r, err_t *err)
{
    err_t local;
    err_clear(&local);
    if (result_row_parse(line, strlen(line), path, lineno, r, NULL, &local) == 0)
        return 0;
    err_set(err, local.cause, local.source, local.line, local.column, "%s", local.text);
    return -1;
}
