/* results.c — the tune result log: rows to and from JSON lines, the append-only file, ranking,
 * merging, and the winner written as a config. */
#define _GNU_SOURCE /* flock, realpath, mkstemp, gmtime_r */
#include "results.h"

#include "arch.h"

#include "jsonloc.h"
#include "paths.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
                    r->device, r->status, r->invalidity, r->reason, r->switches, r->args};
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

void results_rows_free(result_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        result_row_free(&rows[i]);
    free(rows);
}

char *results_make_key(const char *tmpl, const char *dtype, int arch, int64_t M, int64_t N, int64_t K, double alpha,
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

const char *results_invalidity(const char *status)
{
    for (size_t i = 0; status && i < NSTATUS; i++)
        if (strcmp(k_status[i][0], status) == 0)
            return k_status[i][1];
    return NULL;
}

/* ---------------------------------------------------------------------------------------------- */
/* Writing a row                                                                                   */

/* Length of the valid UTF-8 sequence at p (2 to 4 bytes, p[0] >= 0x80), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *p)
{
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (p[0] >= 0xC2 && p[0] <= 0xDF)
        n = 2;
    else if (p[0] >= 0xE0 && p[0] <= 0xEF) {
        n = 3;
        if (p[0] == 0xE0)
            lo = 0xA0; /* overlong */
        if (p[0] == 0xED)
            hi = 0x9F; /* surrogates */
    } else if (p[0] >= 0xF0 && p[0] <= 0xF4) {
        n = 4;
        if (p[0] == 0xF0)
            lo = 0x90; /* overlong */
        if (p[0] == 0xF4)
            hi = 0x8F; /* above U+10FFFF */
    } else
        return 0;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return n;
}

/* s as a JSON string: quotes, backslashes and control characters escaped, invalid UTF-8 replaced by
 * U+FFFD (jansson, and every other reader, refuses it). NULL is written as "". */
static void add_json_string(strbuf *sb, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    sb_add(sb, "\"");
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        unsigned char c = *p;
        size_t n;
        if (c == '"' || c == '\\') {
            char esc[3] = {'\\', (char)c, 0};
            sb_add(sb, esc);
            p++;
        } else if (c < 0x20) {
            const char *e = c == '\n'   ? "\\n"
                            : c == '\r' ? "\\r"
                            : c == '\t' ? "\\t"
                            : c == '\b' ? "\\b"
                            : c == '\f' ? "\\f"
                                        : NULL;
            if (e) {
                sb_add(sb, e);
            } else {
                char u[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
                sb_add(sb, u);
            }
            p++;
        } else if (c < 0x80) {
            sb_addn(sb, (const char *)p, 1);
            p++;
        } else if ((n = utf8_len(p)) != 0) {
            sb_addn(sb, (const char *)p, n);
            p += n;
        } else {
            sb_add(sb, "\xEF\xBF\xBD");
            p++;
        }
    }
    sb_add(sb, "\"");
}

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

/* "2026-11-22T19:04:05Z", newly allocated. */
static char *utc_now(void)
{
    time_t t = time(NULL);
    struct tm tm;
    char buf[32];
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return xstrdup(buf);
}

char *result_row_to_json(const result_row *r)
{
    strbuf sb;
    sb_init(&sb);
    char *now = r->time ? NULL : utc_now();
    const char *inv = results_invalidity(r->status);
    sb_addf(&sb, "{\"log\":\"%s\",\"version\":%d", RESULTS_LOG_NAME, RESULTS_VERSION);
    add_key(&sb, "time", false);
    add_json_string(&sb, r->time ? r->time : now);
    add_key(&sb, "key", false);
    add_json_string(&sb, r->key);
    add_key(&sb, "config", false);
    add_json_string(&sb, r->config);
    add_key(&sb, "template", false);
    add_json_string(&sb, r->tmpl);
    add_key(&sb, "dtype", false);
    add_json_string(&sb, r->dtype);
    add_key(&sb, "arch", false);
    add_json_string(&sb, r->arch);
    add_key(&sb, "device", false);
    add_json_string(&sb, r->device);
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
        add_json_string(&sb, r->param_names[i]);
        sb_addf(&sb, ":%lld", (long long)r->param_values[i]);
    }
    sb_add(&sb, "}");
    add_key(&sb, "status", false);
    add_json_string(&sb, r->status);
    add_key(&sb, "invalidity", false);
    add_json_string(&sb, inv ? inv : "");
    add_key(&sb, "reason", false);
    add_json_string(&sb, r->reason);
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
    sb_addf(&sb, ",\"from_cache\":%s", r->from_cache ? "true" : "false");
    add_key(&sb, "switches", false);
    add_json_string(&sb, r->switches);
    add_key(&sb, "args", false);
    add_json_string(&sb, r->args);
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
    NULL};

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
    err_vset(c->err, EXIT_INPUT, c->path, c->lineno, col, fmt, ap);
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

/* Parse text[0..len) (NUL-terminated at len) into r. *syntax tells a JSON syntax error (the shape of
 * an interrupted write) from a row that breaks a rule. Errors go to c->err. */
static int parse_row(const char *text, size_t len, const char *path, int lineno, result_row *r, bool *syntax,
                     err_t *err)
{
    row_ctx ctx = {text, path, lineno, err}, *c = &ctx;
    result_row_init(r);
    if (syntax)
        *syntax = false;
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
        len--;
    if (len == 0)
        return err_set(err, EXIT_INPUT, path, lineno, 0, "empty line (a log holds one JSON object per line)"), -1;
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        if (syntax)
            *syntax = true;
        err_set(err, EXIT_INPUT, path, lineno, jerr.column > 0 ? jerr.column : 0, "invalid JSON: %s", jerr.text);
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
    bool is_log = strcmp(log, RESULTS_LOG_NAME) == 0;
    free(log);
    if (!is_log) {
        fail_at(c, NULL, "log", false, "\"log\" must be \"%s\": this is not an engine tune log", RESULTS_LOG_NAME);
        goto out;
    }
    int64_t x;
    if (get_int(c, root, "version", 0, INT_MAX, false, &x))
        goto out;
    if (x != RESULTS_VERSION) {
        fail_at(c, NULL, "version", false, "\"version\" %lld is not one this engine reads (%d)", (long long)x,
                RESULTS_VERSION);
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
    const char *inv = results_invalidity(r->status);
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
    if (parse_row(line, strlen(line), path, lineno, r, NULL, &local) == 0)
        return 0;
    err_set(err, local.code, local.source, local.line, local.column, "%s", local.text);
    return -1;
}

/* ---------------------------------------------------------------------------------------------- */
/* The (key, stage) index                                                                          */

static uint64_t key_hash(const char *key, int stage)
{
    return hash64(key, strlen(key), 0x9E3779B97F4A7C15ULL * (uint64_t)(stage + 1));
}

/* Slot of (key, stage): the one holding it, or the empty one where it would go. x->cap > 0. */
static size_t index_slot(const results_index *x, const result_row *rows, const char *key, int stage)
{
    size_t mask = x->cap - 1, i = (size_t)key_hash(key, stage) & mask;
    while (x->slots[i]) {
        const result_row *r = &rows[x->slots[i] - 1];
        if (r->stage == stage && strcmp(r->key, key) == 0)
            return i;
        i = (i + 1) & mask;
    }
    return i;
}

/* Add rows[i] unless (key, stage) is already there; false when it was (the first one stays). */
static bool index_add(results_index *x, const result_row *rows, size_t i)
{
    if ((x->count + 1) * 2 > x->cap) {
        results_index bigger = {xcalloc(x->cap ? x->cap * 2 : 64, sizeof(size_t)), x->cap ? x->cap * 2 : 64, 0};
        for (size_t s = 0; s < x->cap; s++) {
            if (!x->slots[s])
                continue;
            const result_row *r = &rows[x->slots[s] - 1];
            bigger.slots[index_slot(&bigger, rows, r->key, r->stage)] = x->slots[s];
            bigger.count++;
        }
        free(x->slots);
        *x = bigger;
    }
    size_t s = index_slot(x, rows, rows[i].key, rows[i].stage);
    if (x->slots[s])
        return false;
    x->slots[s] = i + 1;
    x->count++;
    return true;
}

static const result_row *index_get(const results_index *x, const result_row *rows, const char *key, int stage)
{
    if (!x->cap || !key)
        return NULL;
    size_t s = index_slot(x, rows, key, stage);
    return x->slots[s] ? &rows[x->slots[s] - 1] : NULL;
}

static void index_free(results_index *x)
{
    free(x->slots);
    memset(x, 0, sizeof *x);
}

/* ---------------------------------------------------------------------------------------------- */
/* The log file                                                                                    */

typedef enum {
    TAIL_NONE,      /* the file ends with '\n' (or is empty) */
    TAIL_REMNANT,   /* the last line is an interrupted write: not JSON, no '\n' */
    TAIL_NO_NEWLINE /* the last line is a complete row that only lacks its '\n' */
} tail_kind;

/* Parse every line of text[0..len) (text[len] == '\0'; newlines are overwritten). A broken line is an
 * error unless it is the unterminated last line and is not JSON: then *tail = TAIL_REMNANT and
 * *tail_off is where it starts. */
static int parse_log(const char *path, char *text, size_t len, result_row **rows_out, size_t *n_out, tail_kind *tail,
                     size_t *tail_off, err_t *err)
{
    result_row *rows = NULL;
    size_t n = 0, cap = 0, off = 0;
    int lineno = 0;
    *tail = TAIL_NONE;
    *tail_off = len;
    while (off < len) {
        lineno++;
        char *nl = memchr(text + off, '\n', len - off);
        size_t end = nl ? (size_t)(nl - text) : len;
        text[end] = '\0';
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            rows = xrealloc(rows, cap * sizeof *rows);
        }
        err_t lerr;
        err_clear(&lerr);
        bool syntax;
        if (parse_row(text + off, end - off, path, lineno, &rows[n], &syntax, &lerr) != 0) {
            if (!nl && syntax) {
                *tail = TAIL_REMNANT;
                *tail_off = off;
                break;
            }
            err_set(err, lerr.code, lerr.source, lerr.line, lerr.column, "%s", lerr.text);
            results_rows_free(rows, n);
            *rows_out = NULL;
            *n_out = 0;
            return -1;
        }
        n++;
        if (!nl)
            *tail = TAIL_NO_NEWLINE;
        off = end + 1;
    }
    *rows_out = rows;
    *n_out = n;
    return 0;
}

/* The whole of fd from offset 0, NUL-terminated; NULL with errno on failure. */
static char *read_fd(int fd, size_t *len)
{
    strbuf sb;
    sb_init(&sb);
    char chunk[65536];
    off_t at = 0;
    for (;;) {
        ssize_t got = pread(fd, chunk, sizeof chunk, at);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            sb_free(&sb);
            errno = e;
            return NULL;
        }
        if (got == 0)
            break;
        sb_addn(&sb, chunk, (size_t)got);
        at += got;
    }
    *len = sb.len;
    return sb_steal(&sb);
}

/* Lines in text[0..len), counting an unterminated last one. */
static size_t count_lines(const char *text, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += text[i] == '\n';
    return n + (len && text[len - 1] != '\n');
}

/* flock, best effort: some file systems (NFS with a read-only descriptor) refuse it, and a log that
 * only one process writes needs no lock. */
static void lock(int fd, int op)
{
    while (flock(fd, op) != 0 && errno == EINTR)
        ;
}

int results_open(results_log *l, const char *path, bool resume, err_t *err)
{
    memset(l, 0, sizeof *l);
    l->fd = -1;
    int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return err_set(err, EXIT_INPUT, path, 0, 0, "cannot open the log for appending: %s", strerror(errno)), -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return err_set(err, EXIT_INPUT, path, 0, 0, "a log must be a regular file"), -1;
    }
    lock(fd, LOCK_EX);
    size_t len = 0;
    char *text = read_fd(fd, &len);
    if (!text) {
        err_set(err, EXIT_INPUT, path, 0, 0, "cannot read the log: %s", strerror(errno));
        goto fail;
    }
    if (!resume) {
        if (len > 0) {
            err_set(err, EXIT_INPUT, path, 0, 0,
                    "already holds %zu results; pass --resume to continue it or choose another --log",
                    count_lines(text, len));
            goto fail;
        }
    } else {
        tail_kind tail;
        size_t tail_off;
        if (parse_log(path, text, len, &l->rows, &l->nrows, &tail, &tail_off, err) != 0)
            goto fail;
        l->caprows = l->nrows;
        if (tail == TAIL_REMNANT) {
            if (ftruncate(fd, (off_t)tail_off) != 0) {
                err_set(err, EXIT_SYSTEM, path, 0, 0, "cannot cut off the interrupted last line: %s", strerror(errno));
                goto fail;
            }
            l->truncated_tail = true;
        } else if (tail == TAIL_NO_NEWLINE) {
            ssize_t w;
            while ((w = write(fd, "\n", 1)) < 0 && errno == EINTR)
                ;
            if (w != 1) {
                err_set(err, EXIT_SYSTEM, path, 0, 0, "cannot end the last line with a newline: %s",
                        w < 0 ? strerror(errno) : "nothing written");
                goto fail;
            }
        }
        for (size_t i = 0; i < l->nrows; i++)
            index_add(&l->index, l->rows, i);
    }
    lock(fd, LOCK_UN);
    free(text);
    l->nresumed = l->nrows;
    l->path = xstrdup(path);
    l->fd = fd;
    return 0;
fail:
    lock(fd, LOCK_UN);
    close(fd);
    free(text);
    results_rows_free(l->rows, l->nrows);
    index_free(&l->index);
    memset(l, 0, sizeof *l);
    l->fd = -1;
    return -1;
}

int results_append(results_log *l, const result_row *r, err_t *err)
{
    if (l->fd < 0)
        return err_set(err, EXIT_SYSTEM, l->path, 0, 0, "the log is not open"), -1;
    char *line = result_row_to_json(r);
    size_t len = strlen(line);
    result_row back;
    err_t lerr;
    err_clear(&lerr);
    if (parse_row(line, len, l->path, 0, &back, NULL, &lerr) != 0) {
        err_set(err, EXIT_INPUT, l->path, 0, 0, "refusing to append a row the log could not read back: %s", lerr.text);
        free(line);
        return -1;
    }
    lock(l->fd, LOCK_SH);
    ssize_t w;
    while ((w = write(l->fd, line, len)) < 0 && errno == EINTR)
        ;
    int e = errno;
    lock(l->fd, LOCK_UN);
    free(line);
    if (w < 0 || (size_t)w != len) {
        result_row_free(&back);
        if (w < 0)
            return err_set(err, EXIT_SYSTEM, l->path, 0, 0, "cannot append to the log: %s", strerror(e)), -1;
        /* The partial line must stay the last one: nothing more goes through this handle. */
        close(l->fd);
        l->fd = -1;
        return err_set(err, EXIT_SYSTEM, l->path, 0, 0,
                       "short write: %zd of %zu bytes (disk full?); the log is closed; --resume cuts the partial line",
                       w, len),
               -1;
    }
    if (l->nrows == l->caprows) {
        l->caprows = l->caprows ? l->caprows * 2 : 64;
        l->rows = xrealloc(l->rows, l->caprows * sizeof *l->rows);
    }
    l->rows[l->nrows] = back;
    index_add(&l->index, l->rows, l->nrows);
    l->nrows++;
    return 0;
}

void results_close(results_log *l)
{
    if (l->fd >= 0)
        close(l->fd);
    results_rows_free(l->rows, l->nrows);
    index_free(&l->index);
    free(l->path);
    memset(l, 0, sizeof *l);
    l->fd = -1;
}

const result_row *results_lookup(const results_log *l, const char *key, int stage)
{
    if (stage >= 0)
        return index_get(&l->index, l->rows, key, stage);
    for (int s = 2; s >= 0; s--) {
        const result_row *r = index_get(&l->index, l->rows, key, s);
        if (r)
            return r;
    }
    return NULL;
}

int results_read(const char *path, result_row **rows, size_t *n, bool *truncated_tail, err_t *err)
{
    *rows = NULL;
    *n = 0;
    if (truncated_tail)
        *truncated_tail = false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return err_set(err, EXIT_INPUT, path, 0, 0, "cannot read the log: %s", strerror(errno)), -1;
    lock(fd, LOCK_EX); /* no append is half done while we read */
    size_t len = 0;
    char *text = read_fd(fd, &len);
    int e = errno;
    lock(fd, LOCK_UN);
    close(fd);
    if (!text)
        return err_set(err, EXIT_INPUT, path, 0, 0, "cannot read the log: %s", strerror(e)), -1;
    tail_kind tail;
    size_t tail_off;
    int rc = parse_log(path, text, len, rows, n, &tail, &tail_off, err);
    free(text);
    if (rc == 0 && truncated_tail)
        *truncated_tail = tail == TAIL_REMNANT;
    return rc;
}

/* ---------------------------------------------------------------------------------------------- */
/* Ranking                                                                                         */

/* By key, then highest stage first, then file order. */
static int cmp_key_stage(const void *a, const void *b)
{
    const result_row *x = *(const result_row *const *)a, *y = *(const result_row *const *)b;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    if (x->stage != y->stage)
        return y->stage - x->stage;
    return x < y ? -1 : x > y;
}

/* Finalists first: a stage-2 time (more runs, interleaved with cuBLAS) is not compared with the
 * brief stage-1 times of the others, which read lower at tiny shapes (docs/RESULTS.md, "Timing
 * tiny shapes"), so a point that was never re-timed cannot win. Then by ms, ties by key. */
static int cmp_ms_key(const void *a, const void *b)
{
    const result_row *x = *(const result_row *const *)a, *y = *(const result_row *const *)b;
    if (x->stage != y->stage)
        return y->stage - x->stage;
    if (x->ms != y->ms)
        return x->ms < y->ms ? -1 : 1;
    return strcmp(x->key, y->key);
}

const result_row **results_rank(const result_row *rows, size_t n, size_t *nranked)
{
    const result_row **c = xcalloc(n, sizeof *c);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const result_row *r = &rows[i];
        if (r->status && strcmp(r->status, "ok") == 0 && r->key && (r->stage == 1 || r->stage == 2) && r->ms >= 0 &&
            isfinite(r->ms))
            c[m++] = r;
    }
    qsort(c, m, sizeof *c, cmp_key_stage);
    size_t k = 0;
    for (size_t i = 0; i < m; i++)
        if (k == 0 || strcmp(c[k - 1]->key, c[i]->key) != 0)
            c[k++] = c[i];
    qsort(c, k, sizeof *c, cmp_ms_key);
    *nranked = k;
    return c;
}

double results_cublas_ms(const result_row *rows, size_t n)
{
    double *v = xcalloc(n + 1, sizeof *v);
    size_t m = 0;
    for (int stage = 2; stage >= 1 && m == 0; stage--)
        for (size_t i = 0; i < n; i++)
            if (rows[i].stage == stage && rows[i].status && strcmp(rows[i].status, "ok") == 0 &&
                rows[i].cublas_ms > 0 && isfinite(rows[i].cublas_ms))
                v[m++] = rows[i].cublas_ms;
    double med = m > 0 ? median(v, m) : -1;
    free(v);
    return med;
}

/* Index of name among r's params, or -1. */
static long find_param(const result_row *r, const char *name)
{
    for (size_t i = 0; i < r->nparams; i++)
        if (strcmp(r->param_names[i], name) == 0)
            return (long)i;
    return -1;
}

static void fmt_opt(char *buf, size_t len, const char *fmt, double v)
{
    if (v < 0 || !isfinite(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, fmt, v);
}

void results_print_ranking(FILE *f, const result_row *const *ranked, size_t n, size_t top)
{
    size_t shown = top && top < n ? top : n;
    if (shown == 0) {
        fprintf(f, "no point has status ok: nothing to rank\n");
        return;
    }
    /* Params of the first row that every shown row has with the same value (only when comparing). */
    const result_row *r0 = ranked[0];
    bool *common = xcalloc(r0->nparams, sizeof *common);
    strbuf line;
    sb_init(&line);
    if (shown == n)
        sb_addf(&line, "%zu point%s ranked", n, n == 1 ? "" : "s");
    else
        sb_addf(&line, "top %zu of %zu points ranked", shown, n);
    if (shown > 1) {
        size_t ncommon = 0;
        for (size_t p = 0; p < r0->nparams; p++) {
            common[p] = true;
            for (size_t i = 1; i < shown && common[p]; i++) {
                long q = find_param(ranked[i], r0->param_names[p]);
                common[p] = q >= 0 && ranked[i]->param_values[q] == r0->param_values[p];
            }
            if (common[p])
                sb_addf(&line, "%s%s=%lld", ncommon++ ? " " : "; common to every row shown: ", r0->param_names[p],
                        (long long)r0->param_values[p]);
        }
    }
    fprintf(f, "%s\n", line.buf);
    sb_free(&line);
    fprintf(f, "%4s %8s %9s %7s %8s %5s %5s %5s %5s  %s\n", "rank", "TFLOP/s", "ms", "spread", "% cuBLAS", "stage",
            "runs", "regs", "occ", "configuration");
    for (size_t i = 0; i < shown; i++) {
        const result_row *r = ranked[i];
        char tf[24], ms[24], spread[24] = "-", pc[24], runs[16] = "-", regs[16] = "-", occ[16];
        fmt_opt(tf, sizeof tf, "%.2f", r->tflops);
        fmt_opt(ms, sizeof ms, "%.4f", r->ms);
        if (r->ms > 0 && r->ms_min >= 0 && r->ms_max >= 0)
            snprintf(spread, sizeof spread, "%.1f%%", 100.0 * (r->ms_max - r->ms_min) / r->ms);
        fmt_opt(pc, sizeof pc, "%.1f", r->pct_cublas);
        if (r->runs >= 0)
            snprintf(runs, sizeof runs, "%d", r->runs);
        if (r->regs >= 0)
            snprintf(regs, sizeof regs, "%d", r->regs);
        fmt_opt(occ, sizeof occ, "%.0f%%", r->occ_pct);
        strbuf cfg;
        sb_init(&cfg);
        for (size_t p = 0; p < r->nparams; p++) {
            long q = find_param(r0, r->param_names[p]);
            if (q >= 0 && common[q])
                continue;
            sb_addf(&cfg, "%s%s=%lld", cfg.len ? " " : "", r->param_names[p], (long long)r->param_values[p]);
        }
        fprintf(f, "%4zu %8s %9s %7s %8s %5d %5s %5s %5s  %s\n", i + 1, tf, ms, spread, pc, r->stage, runs, regs, occ,
                cfg.buf);
        sb_free(&cfg);
    }
    free(common);
}

/* ---------------------------------------------------------------------------------------------- */
/* The winner as a config                                                                          */

int results_emit_config(const result_row *r, const char *name, const char *src_config_path, const char *out_path,
                        err_t *err)
{
    if (!r->status || strcmp(r->status, "ok") != 0)
        return err_set(err, EXIT_INPUT, out_path, 0, 0,
                       "refusing to write point \"%s\" as a config: its status is %s, not ok", r->key ? r->key : "",
                       r->status ? r->status : "unset"),
               -1;
    if (!name || !*name)
        return err_set(err, EXIT_INPUT, out_path, 0, 0, "a tuned config needs a name"), -1;
    const char *slash = strrchr(out_path, '/');
    const char *base = slash ? slash + 1 : out_path;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return err_set(err, EXIT_INPUT, out_path, 0, 0, "the output path must name a file"), -1;
    char *dir = path_dirname(out_path);
    char *rdir = realpath(dir, NULL);
    if (!rdir) {
        err_set(err, EXIT_INPUT, out_path, 0, 0, "cannot write the config: directory %s: %s", dir, strerror(errno));
        free(dir);
        return -1;
    }
    char *target = xasprintf("%s/%s", strcmp(rdir, "/") == 0 ? "" : rdir, base);
    char *rsrc = src_config_path ? realpath(src_config_path, NULL) : NULL;
    bool same = rsrc && strcmp(rsrc, target) == 0;
    free(rsrc);
    free(target);
    free(rdir);
    if (same) {
        free(dir);
        return err_set(err, EXIT_INPUT, out_path, 0, 0,
                       "refusing to overwrite the source config %s with the tuned one; choose another output path",
                       src_config_path),
               -1;
    }

    strbuf sb;
    sb_init(&sb);
    sb_add(&sb, "{\n  \"name\": ");
    add_json_string(&sb, name);
    sb_add(&sb, ",\n  \"template\": ");
    add_json_string(&sb, r->tmpl);
    sb_add(&sb, ",\n  \"dtype\": ");
    add_json_string(&sb, r->dtype);
    sb_add(&sb, ",\n  \"params\": {");
    for (size_t i = 0; i < r->nparams; i++) {
        if (i)
            sb_add(&sb, ", ");
        add_json_string(&sb, r->param_names[i]);
        sb_addf(&sb, ": %lld", (long long)r->param_values[i]);
    }
    sb_add(&sb, "},\n  \"description\": ");
    strbuf d;
    sb_init(&d);
    sb_addf(&d, "tuned by engine tune for %lldx%lldx%lld", (long long)r->M, (long long)r->N, (long long)r->K);
    if (r->device && *r->device)
        sb_addf(&d, " on %s", r->device);
    char *today = r->time ? NULL : utc_now(); /* a row not read from a log: measured just now */
    const char *when = r->time ? r->time : today;
    if (strlen(when) >= 10)
        sb_addf(&d, " (%.10s)", when);
    free(today);
    sb_add(&d, ":");
    const char *sep = " ";
    if (r->tflops >= 0) {
        sb_addf(&d, "%s%.2f TFLOP/s", sep, r->tflops);
        sep = ", ";
    }
    if (r->pct_cublas >= 0) {
        sb_addf(&d, "%s%.1f %% of cuBLAS", sep, r->pct_cublas);
        sep = ", ";
    }
    if (r->runs >= 0) {
        sb_addf(&d, "%smedian of %d runs", sep, r->runs);
        sep = ", ";
    } else {
        sb_addf(&d, "%s%.4f ms", sep, r->ms);
        sep = ", ";
    }
    if (r->ms > 0 && r->ms_min >= 0 && r->ms_max >= 0)
        sb_addf(&d, "%sspread %.1f%%", sep, 100.0 * (r->ms_max - r->ms_min) / r->ms);
    add_json_string(&sb, d.buf);
    sb_free(&d);
    sb_add(&sb, "\n}\n");

    free(dir);
    /* Atomically: a reader sees the old file or the whole new one, never half of it. */
    int rc = 0, step = write_file_atomic(out_path, sb.buf, sb.len);
    if (step != WRITE_OK) {
        err_set(err, step == WRITE_DATA ? EXIT_SYSTEM : EXIT_INPUT, out_path, 0, 0, "cannot write the config: %s",
                strerror(errno));
        rc = -1;
    }
    sb_free(&sb);
    return rc;
}

/* ---------------------------------------------------------------------------------------------- */
/* Merge                                                                                           */

/* The first field in which row r describes another problem than ref: its name and both values,
 * formatted; false when they agree. The device counts only when both rows reached a GPU (stage >= 1). */
static bool problem_differs(const result_row *r, const result_row *ref, const char **field, char *mine, char *theirs,
                            size_t len)
{
    const char *dims[] = {"M", "N", "K"};
    const int64_t m[] = {r->M, r->N, r->K}, t[] = {ref->M, ref->N, ref->K};
    for (int i = 0; i < 3; i++) {
        if (m[i] != t[i]) {
            *field = dims[i];
            snprintf(mine, len, "%lld", (long long)m[i]);
            snprintf(theirs, len, "%lld", (long long)t[i]);
            return true;
        }
    }
    const struct {
        const char *name;
        double a, b;
    } scalars[] = {{"alpha", r->alpha, ref->alpha}, {"beta", r->beta, ref->beta}};
    if (strcmp(r->dtype, ref->dtype) != 0) {
        *field = "dtype";
        snprintf(mine, len, "%s", r->dtype);
        snprintf(theirs, len, "%s", ref->dtype);
        return true;
    }
    for (int i = 0; i < 2; i++) {
        if (scalars[i].a != scalars[i].b) {
            *field = scalars[i].name;
            snprintf(mine, len, "%g", scalars[i].a);
            snprintf(theirs, len, "%g", scalars[i].b);
            return true;
        }
    }
    if (r->stage >= 1 && ref->stage >= 1 && strcmp(r->device, ref->device) != 0) {
        *field = "device";
        snprintf(mine, len, "\"%s\"", r->device);
        snprintf(theirs, len, "\"%s\"", ref->device);
        return true;
    }
    return false;
}

int results_merge(const merge_opts *o, FILE *out, err_t *err)
{
    if (o->nlogs == 0)
        return err_set(err, EXIT_INPUT, "engine merge", 0, 0, "no log to merge");
    result_row **rows = xcalloc(o->nlogs, sizeof *rows);
    size_t *nrows = xcalloc(o->nlogs, sizeof *nrows);
    bool *cut = xcalloc(o->nlogs, sizeof *cut);
    result_row *kept = NULL;
    const result_row **ranked = NULL;
    results_index index = {0};
    size_t total = 0, nkept = 0, dups = 0, nranked = 0;
    int rc = -1;

    for (size_t i = 0; i < o->nlogs; i++) {
        if (results_read(o->logs[i], &rows[i], &nrows[i], &cut[i], err) != 0)
            goto out;
        total += nrows[i];
    }
    if (!o->force) {
        /* Every row against the first row, and every timed row against the first timed row. */
        const result_row *ref = NULL, *tref = NULL;
        const char *ref_path = NULL, *tref_path = NULL;
        for (size_t i = 0; i < o->nlogs; i++) {
            for (size_t j = 0; j < nrows[i]; j++) {
                const result_row *r = &rows[i][j];
                const char *field;
                char mine[256], theirs[256];
                const char *against = NULL;
                if (ref && problem_differs(r, ref, &field, mine, theirs, sizeof mine))
                    against = ref_path;
                else if (tref && r->stage >= 1 && problem_differs(r, tref, &field, mine, theirs, sizeof mine))
                    against = tref_path;
                if (against) {
                    /* Every line of a log is a row, so j + 1 is its line. */
                    err_set(err, EXIT_INPUT, o->logs[i], (int)(j + 1), 0,
                            "%s = %s but %s holds %s = %s; pass --force to merge logs of different problems", field,
                            mine, against, field, theirs);
                    goto out;
                }
                if (!ref) {
                    ref = r;
                    ref_path = o->logs[i];
                }
                if (!tref && r->stage >= 1) {
                    tref = r;
                    tref_path = o->logs[i];
                }
            }
        }
    }
    /* Shallow copies: the strings stay owned by rows[]. */
    kept = xcalloc(total, sizeof *kept);
    for (size_t i = 0; i < o->nlogs; i++) {
        for (size_t j = 0; j < nrows[i]; j++) {
            kept[nkept] = rows[i][j];
            if (index_add(&index, kept, nkept))
                nkept++;
            else
                dups++;
        }
    }
    if (o->out_path) {
        results_log lo;
        if (results_open(&lo, o->out_path, false, err) != 0)
            goto out;
        for (size_t i = 0; i < nkept; i++) {
            if (results_append(&lo, &kept[i], err) != 0) {
                results_close(&lo);
                goto out;
            }
        }
        results_close(&lo);
    }
    for (size_t i = 0; i < o->nlogs; i++)
        if (cut[i])
            fprintf(out, "%s: the last line is an interrupted write; left out\n", o->logs[i]);
    ranked = results_rank(kept, nkept, &nranked);
    fprintf(out, "merged %zu log%s: %zu row%s kept, %zu duplicate%s dropped, %zu point%s ranked", o->nlogs,
            o->nlogs == 1 ? "" : "s", nkept, nkept == 1 ? "" : "s", dups, dups == 1 ? "" : "s", nranked,
            nranked == 1 ? "" : "s");
    if (o->out_path)
        fprintf(out, "; written to %s", o->out_path);
    fprintf(out, "\n");
    results_print_ranking(out, ranked, nranked, o->top);
    if (o->emit_best) {
        if (nranked == 0) {
            err_set(err, EXIT_INPUT, o->emit_best, 0, 0, "no point has status ok: there is no winner to write");
            goto out;
        }
        char *name = xasprintf("%s_tuned", ranked[0]->config);
        int erc = results_emit_config(ranked[0], name, NULL, o->emit_best, err);
        free(name);
        if (erc != 0)
            goto out;
        fprintf(out, "wrote %s: %s\n", o->emit_best, ranked[0]->key);
    }
    rc = 0;
out:
    free(ranked);
    free(kept);
    index_free(&index);
    for (size_t i = 0; i < o->nlogs; i++)
        results_rows_free(rows[i], nrows[i]);
    free(rows);
    free(nrows);
    free(cut);
    return rc == 0 ? EXIT_OK : err && err->code ? err->code : EXIT_INPUT;
}
