/* result.c — see result.h: one evaluated point as a row, its key, and its JSON line. */
#include "result.h"

#include "arch.h"
#include "jsonloc.h"
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

/* What a row parser needs to point at a member of the line. */
typedef struct {
    const char *text; /* the line, NUL-terminated */
    const char *path; /* file, for messages */
    int lineno;
    err_t *err;
} row_ctx;

/* Error at member parent.key (parent NULL: top level), at its key or its value; -1. */
static int fail_at(row_ctx *c, const char *parent, const char *key, bool want_key, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int fail_at(row_ctx *c, const char *parent, const char *key, bool want_key, const char *fmt, ...)
{
    int line = 0, col = 0;
    if (key) {
        const char *p2[] = {parent, key};
        const char *p1[] = {key};
        if (jsonloc_find(c->text, parent ? p2 : p1, parent ? 2 : 1, want_key, &line, &col) != 0)
            col = 0;
    }
    va_list ap;
    va_start(ap, fmt);
    err_vset(c->err, ERR_INPUT, c->path, c->lineno, col, fmt, ap);
    va_end(ap);
    return -1;
}

/* The member parent.key of obj, or -1 with "missing field". */
static int member(row_ctx *c, json_t *obj, const char *parent, const char *key, json_t **out)
{
    *out = json_object_get(obj, key);
    if (*out)
        return 0;
    if (parent)
        return fail_at(c, NULL, parent, false, "missing field \"%s.%s\"", parent, key);
    return fail_at(c, NULL, NULL, false, "missing field \"%s\"", key);
}

#define FIELD_FMT "\"%s%s%s\""
#define FIELD_ARGS(parent, key) parent ? parent : "", parent ? "." : "", key

static int get_string(row_ctx *c, json_t *obj, const char *parent, const char *key, bool nonempty, char **out)
{
    json_t *v;
    if (member(c, obj, parent, key, &v))
        return -1;
    if (!json_is_string(v))
        return fail_at(c, parent, key, false, FIELD_FMT " must be a string, got %s", FIELD_ARGS(parent, key),
                       jsonloc_kind(v));
    if (nonempty && json_string_length(v) == 0)
        return fail_at(c, parent, key, false, FIELD_FMT " must not be empty", FIELD_ARGS(parent, key));
    if (out)
        *out = xstrdup(json_string_value(v));
    return 0;
}

/* An integer in [lo, hi]; null gives -1 when nullable. */
static int get_int(row_ctx *c, json_t *obj, const char *key, int64_t lo, int64_t hi, bool nullable, int64_t *out)
{
    json_t *v;
    if (member(c, obj, NULL, key, &v))
        return -1;
    if (nullable && json_is_null(v)) {
        *out = -1;
        return 0;
    }
    if (!json_is_integer(v))
        return fail_at(c, NULL, key, false, "\"%s\" must be an integer%s, got %s", key, nullable ? " or null" : "",
                       jsonloc_kind(v));
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
        return fail_at(c, NULL, key, false, "\"%s\" = %lld must be between %lld and %lld", key, (long long)x,
                       (long long)lo, (long long)hi);
    *out = (int64_t)x;
    return 0;
}

static int get_opt_int(row_ctx *c, json_t *obj, const char *key, int *out)
{
    int64_t x;
    if (get_int(c, obj, key, 0, INT_MAX, true, &x))
        return -1;
    *out = (int)x;
    return 0;
}

/* A number (integer or real); nullable ones must be >= 0, and null gives -1. */
static int get_number(row_ctx *c, json_t *obj, const char *parent, const char *key, bool nullable, double *out)
{
    json_t *v;
    if (member(c, obj, parent, key, &v))
        return -1;
    if (nullable && json_is_null(v)) {
        *out = -1;
        return 0;
    }
    if (!json_is_number(v))
        return fail_at(c, parent, key, false, FIELD_FMT " must be a number%s, got %s", FIELD_ARGS(parent, key),
                       nullable ? " or null" : "", jsonloc_kind(v));
    double x = json_number_value(v);
    if (nullable && x < 0)
        return fail_at(c, parent, key, false, FIELD_FMT " = %g must not be negative (an unknown value is null)",
                       FIELD_ARGS(parent, key), x);
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

static int get_configuration(row_ctx *c, json_t *root, result_row *r)
{
    json_t *v;
    if (member(c, root, NULL, "configuration", &v))
        return -1;
    if (!json_is_object(v))
        return fail_at(c, NULL, "configuration", false, "\"configuration\" must be an object, got %s", jsonloc_kind(v));
    size_t n = json_object_size(v);
    r->param_names = xcalloc(n, sizeof *r->param_names);
    r->param_values = xcalloc(n, sizeof *r->param_values);
    const char *name;
    json_t *x;
    json_object_foreach(v, name, x)
    {
        if (!json_is_integer(x))
            return fail_at(c, "configuration", name, false, "\"configuration.%s\" must be an integer, got %s", name,
                           jsonloc_kind(x));
        if (!*name)
            return fail_at(c, "configuration", name, true, "\"configuration\" holds a parameter without a name");
        r->param_names[r->nparams] = xstrdup(name);
        r->param_values[r->nparams++] = json_integer_value(x);
    }
    return 0;
}

static int get_times(row_ctx *c, json_t *root, result_row *r)
{
    json_t *v;
    if (member(c, root, NULL, "times", &v))
        return -1;
    if (!json_is_object(v))
        return fail_at(c, NULL, "times", false, "\"times\" must be an object, got %s", jsonloc_kind(v));
    const char *name;
    json_t *x;
    json_object_foreach(v, name, x)
    {
        if (!str_in_list(k_times, name))
            return fail_at(c, "times", name, true,
                           "unknown field \"times.%s\" (times holds compilation, verification, benchmark)", name);
    }
    return get_number(c, v, "times", "compilation", true, &r->t_compile) ||
                   get_number(c, v, "times", "verification", true, &r->t_verify) ||
                   get_number(c, v, "times", "benchmark", true, &r->t_bench)
               ? -1
               : 0;
}

/* measurements: checked for shape only; the values are the row's own fields. */
static int check_measurements(row_ctx *c, json_t *root)
{
    json_t *v;
    if (member(c, root, NULL, "measurements", &v))
        return -1;
    if (!json_is_array(v))
        return fail_at(c, NULL, "measurements", false, "\"measurements\" must be an array, got %s", jsonloc_kind(v));
    size_t i;
    json_t *m;
    json_array_foreach(v, i, m)
    {
        if (!json_is_object(m))
            return fail_at(c, NULL, "measurements", false, "\"measurements[%zu]\" must be an object, got %s", i,
                           jsonloc_kind(m));
        json_t *name = json_object_get(m, "name"), *value = json_object_get(m, "value"),
               *unit = json_object_get(m, "unit");
        if (json_object_size(m) != 3 || !json_is_string(name) || !json_is_number(value) || !json_is_string(unit))
            return fail_at(c, NULL, "measurements", false,
                           "\"measurements[%zu]\" must be {\"name\": string, \"value\": number, \"unit\": string}", i);
    }
    return 0;
}

int result_row_parse(const char *text, size_t len, const char *path, int lineno, result_row *r, bool *syntax,
                     err_t *err)
{
    row_ctx ctx = {text, path, lineno, err}, *c = &ctx;
    result_row_init(r);
    if (syntax)
        *syntax = false;
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
        len--;
    if (len == 0)
        return err_set(err, ERR_INPUT, path, lineno, 0, "empty line (a log holds one JSON object per line)"), -1;
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        if (syntax)
            *syntax = true;
        err_set(err, ERR_INPUT, path, lineno, jerr.column > 0 ? jerr.column : 0, "invalid JSON: %s", jerr.text);
        return -1;
    }
    int rc = -1;
    if (!json_is_object(root)) {
        fail_at(c, NULL, NULL, false, "a log line must be a JSON object, got %s", jsonloc_kind(root));
        goto out;
    }
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v)
    {
        if (!str_in_list(k_fields, key) && strncmp(key, "x_", 2) != 0) {
            fail_at(c, NULL, key, true, "unknown field \"%s\" (a field of your own must start with x_)", key);
            goto out;
        }
    }
    char *log = NULL;
    if (get_string(c, root, NULL, "log", false, &log))
        goto out;
    bool is_log = strcmp(log, RESULT_LOG_NAME) == 0;
    free(log);
    if (!is_log) {
        fail_at(c, NULL, "log", false, "\"log\" must be \"%s\": this is not an engine tune log", RESULT_LOG_NAME);
        goto out;
    }
    int64_t x;
    if (get_int(c, root, "version", 0, INT_MAX, false, &x))
        goto out;
    if (x != RESULT_VERSION) {
        fail_at(c, NULL, "version", false, "\"version\" %lld is not one this engine reads (%d)", (long long)x,
                RESULT_VERSION);
        goto out;
    }
    if (get_string(c, root, NULL, "time", true, &r->time))
        goto out;
    if (!is_utc_time(r->time)) {
        fail_at(c, NULL, "time", false, "\"time\" must be UTC as YYYY-MM-DDTHH:MM:SSZ, got \"%s\"", r->time);
        goto out;
    }
    if (get_string(c, root, NULL, "key", true, &r->key) || get_string(c, root, NULL, "config", true, &r->config) ||
        get_string(c, root, NULL, "template", true, &r->tmpl) || get_string(c, root, NULL, "dtype", true, &r->dtype) ||
        get_string(c, root, NULL, "arch", true, &r->arch))
        goto out;
    if (strncmp(r->arch, "sm_", 3) != 0 || !r->arch[3]) {
        fail_at(c, NULL, "arch", false, "\"arch\" must look like sm_90, got \"%s\"", r->arch);
        goto out;
    }
    if (get_string(c, root, NULL, "device", false, &r->device) ||
        get_int(c, root, "device_index", -1, INT_MAX, false, &x))
        goto out;
    r->device_index = (int)x;
    if (get_int(c, root, "M", 1, INT64_MAX, false, &r->M) || get_int(c, root, "N", 1, INT64_MAX, false, &r->N) ||
        get_int(c, root, "K", 1, INT64_MAX, false, &r->K) || get_number(c, root, NULL, "alpha", false, &r->alpha) ||
        get_number(c, root, NULL, "beta", false, &r->beta) || get_int(c, root, "seed", 0, INT64_MAX, false, &x))
        goto out;
    r->seed = (uint64_t)x;
    if (get_int(c, root, "stage", 0, 2, false, &x))
        goto out;
    r->stage = (int)x;
    if (get_configuration(c, root, r) || get_string(c, root, NULL, "status", true, &r->status))
        goto out;
    const char *inv = result_invalidity(r->status);
    if (!inv) {
        fail_at(c, NULL, "status", false,
                "\"status\" must be ok, pruned, filtered, compile, FAIL, fault, timeout or error, got \"%s\"",
                r->status);
        goto out;
    }
    if (get_string(c, root, NULL, "invalidity", true, &r->invalidity))
        goto out;
    if (strcmp(inv, r->invalidity) != 0) {
        fail_at(c, NULL, "invalidity", false, "\"invalidity\" must be \"%s\" for status \"%s\", got \"%s\"", inv,
                r->status, r->invalidity);
        goto out;
    }
    if (get_string(c, root, NULL, "reason", false, &r->reason) || get_times(c, root, r) ||
        check_measurements(c, root) || get_number(c, root, NULL, "ms", true, &r->ms) ||
        get_number(c, root, NULL, "ms_min", true, &r->ms_min) ||
        get_number(c, root, NULL, "ms_max", true, &r->ms_max) || get_opt_int(c, root, "runs", &r->runs) ||
        get_number(c, root, NULL, "tflops", true, &r->tflops) ||
        get_number(c, root, NULL, "pct_cublas", true, &r->pct_cublas) ||
        get_number(c, root, NULL, "cublas_ms", true, &r->cublas_ms) || get_opt_int(c, root, "regs", &r->regs) ||
        get_opt_int(c, root, "spill_bytes", &r->spill_bytes) || get_opt_int(c, root, "smem_bytes", &r->smem_bytes) ||
        get_opt_int(c, root, "threads", &r->threads) || get_number(c, root, NULL, "occ_pct", true, &r->occ_pct) ||
        get_number(c, root, NULL, "clock_mhz", true, &r->clock_mhz) ||
        get_number(c, root, NULL, "power_w", true, &r->power_w))
        goto out;
    /* The accuracy fields: absent in logs written before them (null then). */
    if (json_object_get(root, "class") && get_string(c, root, NULL, "class", false, &r->acc_class))
        goto out;
    const char *errs[] = {"err_max_u", "err_mean_u", "cublas_err_max_u", "cublas_err_mean_u"};
    double *errv[] = {&r->err_max_u, &r->err_mean_u, &r->cublas_err_max_u, &r->cublas_err_mean_u};
    for (size_t i = 0; i < 4; i++)
        if (json_object_get(root, errs[i]) && get_number(c, root, NULL, errs[i], true, errv[i]))
            goto out;
    v = json_object_get(root, "from_cache");
    if (!v) {
        fail_at(c, NULL, NULL, false, "missing field \"from_cache\"");
        goto out;
    }
    if (!json_is_boolean(v)) {
        fail_at(c, NULL, "from_cache", false, "\"from_cache\" must be true or false, got %s", jsonloc_kind(v));
        goto out;
    }
    r->from_cache = json_is_true(v);
    if (get_string(c, root, NULL, "switches", false, &r->switches) ||
        get_string(c, root, NULL, "args", false, &r->args))
        goto out;
    /* The ranking sorts ok rows by their time: an ok row without one could not be placed. */
    if (strcmp(r->status, "ok") == 0 && (r->stage < 1 || r->ms < 0)) {
        fail_at(c, NULL, r->stage < 1 ? "stage" : "ms", false,
                "a row with status \"ok\" must be timed (stage 1 or 2, ms known), got stage %d and ms %s", r->stage,
                r->ms < 0 ? "null" : "known");
        goto out;
    }
    rc = 0;
out:
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
