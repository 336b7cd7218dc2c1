/* cli.c — see cli.h. The option table below is the only place an option is described. */
#define _GNU_SOURCE
#include "cli.h"

#include "arch.h"
#include "configlist.h"
#include "err.h"
#include "paths.h"
#include "range.h"
#include "report.h"
#include "util.h"

#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define RUNS (CMD_BENCH | CMD_VERIFY)          /* commands that run configs on the GPU */
#define BUILDS (RUNS | CMD_COMPILE | CMD_TUNE) /* commands that compile configs */

typedef struct cli_opt cli_opt;
/* Check arg and store it in o; print one line and return EXIT_INPUT when it is bad. */
typedef int (*opt_parser)(const cli_opt *d, const char *arg, opts_t *o);

struct cli_opt {
    const char *name; /* long option, without the dashes */
    const char *meta; /* what the value looks like in help ("N"), NULL for a flag */
    int cmds;         /* CMD_* bits of the commands that take it */
    opt_parser parse;
    size_t field;     /* offsetof(opts_t, ...) for the generic parsers */
    int64_t min, max; /* accepted range for the integer parsers */
    const char *help; /* one line */
    const char *def;  /* default shown in help, NULL when there is none to show */
};

int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "engine: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return EXIT_INPUT;
}

/* ---- value parsers ------------------------------------------------------------------------- */

#define FIELD(o, d, type) ((type *)((char *)(o) + (d)->field))

static int p_flag(const cli_opt *d, const char *arg, opts_t *o)
{
    (void)arg;
    *FIELD(o, d, bool) = true;
    return 0;
}

/* A whole number in d->min..d->max, stored as an int (p_int) or an int64_t (p_i64). */
static int whole(const cli_opt *d, const char *arg, int64_t *v)
{
    if (parse_i64(arg, v) || *v < d->min || *v > d->max)
        return usage_error("--%s %s: expected a whole number from %lld to %lld", d->name, arg, (long long)d->min,
                           (long long)d->max);
    return 0;
}

static int p_int(const cli_opt *d, const char *arg, opts_t *o)
{
    int64_t v;
    if (whole(d, arg, &v))
        return EXIT_INPUT;
    *FIELD(o, d, int) = (int)v;
    return 0;
}

static int p_i64(const cli_opt *d, const char *arg, opts_t *o) { return whole(d, arg, FIELD(o, d, int64_t)); }

static int p_seed(const cli_opt *d, const char *arg, opts_t *o)
{
    int64_t v;
    if (parse_i64(arg, &v) || v < 0)
        return usage_error("--%s %s: expected a whole number >= 0", d->name, arg);
    o->seed = (uint64_t)v;
    return 0;
}

static int p_positive(const cli_opt *d, const char *arg, opts_t *o)
{
    double v;
    if (parse_double(arg, &v) || !(v > 0) || v > (double)d->max)
        return usage_error("--%s %s: expected a number of seconds above 0 and at most %lld", d->name, arg,
                           (long long)d->max);
    *FIELD(o, d, double) = v;
    return 0;
}

static int p_percent(const cli_opt *d, const char *arg, opts_t *o)
{
    double v;
    if (parse_double(arg, &v) || v < 0 || v > 100)
        return usage_error("--%s %s: expected a percentage from 0 to 100", d->name, arg);
    *FIELD(o, d, double) = v;
    return 0;
}

/* --auto-tune or --auto-tune=SECONDS (GPU seconds per new shape, default 1). */
static int p_auto_tune(const cli_opt *d, const char *arg, opts_t *o)
{
    double v = 1.0;
    if (arg && (parse_double(arg, &v) || !(v > 0) || v > (double)d->max))
        return usage_error("--auto-tune=%s: expected seconds above 0 and at most %lld", arg, (long long)d->max);
    o->auto_tune_s = v;
    return 0;
}

static int p_string(const cli_opt *d, const char *arg, opts_t *o)
{
    if (!*arg)
        return usage_error("--%s: the value must not be empty", d->name);
    *FIELD(o, d, const char *) = arg;
    return 0;
}

static int p_scalar(const cli_opt *d, const char *arg, opts_t *o)
{
    double v;
    if (parse_double(arg, &v))
        return usage_error("--%s %s: expected a finite number", d->name, arg);
    bool alpha = strcmp(d->name, "alpha") == 0;
    *(alpha ? &o->alpha : &o->beta) = v;
    *(alpha ? &o->alpha_given : &o->beta_given) = true;
    return 0;
}

/* A size from 1 (0 for K: BLAS defines K = 0 as C = beta*C) to SHAPE_MAX_DIM. */
static int check_dim(const char *flag, const char *text, int64_t *out, int64_t min)
{
    int64_t v;
    if (parse_i64(text, &v))
        return usage_error("%s %s: expected a whole number", flag, text);
    if (v < min || v > SHAPE_MAX_DIM)
        return usage_error("%s %s: %s must be between %lld and %d", flag, text, min ? "sizes" : "K",
                           (long long)min, SHAPE_MAX_DIM);
    *out = v;
    return 0;
}

int cli_check_shape(const shape_t *s)
{
    char why[128];
    if (shape_elems_rule(s, why, sizeof why))
        return usage_error("shape %lldx%lldx%lld: %s", (long long)s->m, (long long)s->n, (long long)s->k, why);
    return 0;
}

static int p_dim(const cli_opt *d, const char *arg, opts_t *o)
{
    char flag[32];
    snprintf(flag, sizeof flag, "--%s", d->name);
    int64_t *dst = d->name[0] == 'm' ? &o->shape.m : d->name[0] == 'n' ? &o->shape.n : &o->shape.k;
    o->shape_given = true;
    return check_dim(flag, arg, dst, d->name[0] == 'k' ? 0 : 1);
}

static int p_size(const cli_opt *d, const char *arg, opts_t *o)
{
    (void)d;
    o->shape_given = true;
    if (check_dim("--size", arg, &o->shape.m, 1))
        return EXIT_INPUT;
    o->shape.n = o->shape.k = o->shape.m;
    return 0;
}

static int parse_shape(const char *text, shape_t *s)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", text);
    char *x1 = strchr(buf, 'x');
    char *x2 = x1 ? strchr(x1 + 1, 'x') : NULL;
    if (!x1 || !x2)
        return usage_error("--shapes %s: each shape must look like MxNxK, e.g. 127x129x131", text);
    *x1 = *x2 = '\0';
    if (check_dim("--shapes", buf, &s->m, 1) || check_dim("--shapes", x1 + 1, &s->n, 1) ||
        check_dim("--shapes", x2 + 1, &s->k, 0))
        return EXIT_INPUT;
    return cli_check_shape(s);
}

static int p_shapes(const cli_opt *d, const char *arg, opts_t *o)
{
    (void)d;
    char *copy = xstrdup(arg), *save = NULL;
    int rc = 0;
    o->nshapes = 0;
    for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
        if (o->nshapes == SHAPE_MAX_LIST)
            rc = usage_error("--shapes: at most %d shapes", SHAPE_MAX_LIST);
        else
            rc = parse_shape(t, &o->shapes[o->nshapes++]);
    }
    free(copy);
    if (!rc && o->nshapes == 0)
        rc = usage_error("--shapes: give at least one MxNxK");
    return rc;
}

static int p_sizes(const cli_opt *d, const char *arg, opts_t *o)
{
    (void)d;
    int64_t *v = NULL;
    size_t n = 0;
    char why[256];
    int rc = range_parse(arg, &v, &n, why, sizeof why);
    if (rc == 1)
        return usage_error("--sizes %s: expected a range a:b:step, a:b:*2 or a list v1,v2,...", arg);
    if (rc < 0)
        return usage_error("--sizes %s: %s", arg, why);
    if (n > SHAPE_MAX_LIST) {
        free(v);
        return usage_error("--sizes %s: %zu sizes; at most %d", arg, n, SHAPE_MAX_LIST);
    }
    char flag[] = "--sizes";
    for (size_t i = 0; i < n && !rc; i++) {
        char text[32];
        snprintf(text, sizeof text, "%lld", (long long)v[i]);
        rc = check_dim(flag, text, &o->shapes[i].m, 1);
        o->shapes[i].n = o->shapes[i].k = o->shapes[i].m;
        rc = rc ? rc : cli_check_shape(&o->shapes[i]);
    }
    free(v);
    o->nshapes = rc ? 0 : n;
    return rc;
}

static int p_set(const cli_opt *d, const char *arg, opts_t *o)
{
    (void)d;
    if (o->nsets == CLI_MAX_SETS)
        return usage_error("--set: at most %d overrides", CLI_MAX_SETS);
    const char *eq = strchr(arg, '=');
    size_t klen = eq ? (size_t)(eq - arg) : strlen(arg);
    for (size_t i = 0; i < o->nsets; i++) {
        const char *prev = o->set_text[i], *peq = strchr(prev, '=');
        size_t plen = peq ? (size_t)(peq - prev) : strlen(prev);
        if (plen == klen && strncmp(prev, arg, klen) == 0)
            return usage_error("--set %s: %.*s is already set by --set %s", arg, (int)klen, arg, prev);
    }
    if (o->cmd != CMD_TUNE) {
        /* A tune reads --set as a range or an expression (space.c); every other command as a value. */
        err_t err;
        err_clear(&err);
        if (param_set_parse(arg, &o->sets[o->nsets], &err)) {
            err_print(stderr, &err);
            return EXIT_INPUT;
        }
    } else if (!eq || eq == arg || !eq[1]) {
        return usage_error("--set %s: must look like KEY=RANGE, e.g. BM=64:256:*2, BK=8,16 or THREADS=32*(BM/WM)", arg);
    }
    o->set_text[o->nsets++] = xstrdup(arg);
    return 0;
}

static int p_arch(const cli_opt *d, const char *arg, opts_t *o)
{
    (void)d;
    err_t err;
    err_clear(&err);
    if (arch_parse(arg, &o->arch, &err)) {
        err_print(stderr, &err);
        return EXIT_INPUT;
    }
    return 0;
}

static int p_format(const cli_opt *d, const char *arg, opts_t *o)
{
    (void)d;
    o->format = report_format_parse(arg);
    if ((o->cmd == CMD_TUNE || o->cmd == CMD_VERIFY) && o->format != FORMAT_TABLE && o->format != FORMAT_JSONL)
        return usage_error("--format %s: expected table or jsonl", arg);
    if (o->format < 0)
        return usage_error("--format %s: expected table, csv, jsonl or md", arg);
    return 0;
}

static int p_dtype(const cli_opt *d, const char *arg, opts_t *o)
{
    (void)d;
    dtype_t dt;
    if (dtype_parse(arg, &dt))
        return usage_error("--dtype %s: expected " DTYPE_LIST, arg);
    o->dtype = arg;
    return 0;
}

static int p_devices(const cli_opt *d, const char *arg, opts_t *o)
{
    (void)d;
    o->ndevices = 0;
    o->all_devices = strcmp(arg, "all") == 0;
    if (o->all_devices)
        return 0;
    char *copy = xstrdup(arg), *save = NULL;
    int rc = 0;
    for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
        int64_t v;
        if (parse_i64(t, &v) || v < 0 || v > 1023)
            rc = usage_error("--devices %s: expected GPU ordinals 0,1,... or all", arg);
        else if (o->ndevices == CLI_MAX_DEVICES)
            rc = usage_error("--devices %s: at most %d GPUs", arg, CLI_MAX_DEVICES);
        for (size_t i = 0; i < o->ndevices && !rc; i++)
            if (o->devices[i] == (int)v)
                rc = usage_error("--devices %s: GPU %lld is named twice", arg, (long long)v);
        if (!rc)
            o->devices[o->ndevices++] = (int)v;
    }
    free(copy);
    if (!rc && o->ndevices == 0)
        rc = usage_error("--devices %s: name at least one GPU", arg);
    return rc;
}

static int p_shard(const cli_opt *d, const char *arg, opts_t *o)
{
    (void)d;
    const char *slash = strchr(arg, '/');
    int64_t i, n;
    char *head = slash ? xstrndup(arg, (size_t)(slash - arg)) : NULL;
    int bad = !slash || parse_i64(head, &i) || parse_i64(slash + 1, &n) || n < 1 || n > 100000 || i < 0 || i >= n;
    free(head);
    if (bad)
        return usage_error("--shard %s: expected I/N with 0 <= I < N, e.g. 0/4", arg);
    o->shard_i = (int)i;
    o->shard_n = (int)n;
    return 0;
}

static int p_op(const cli_opt *d, const char *arg, opts_t *o)
{
    (void)d;
    if (layout_op_parse(arg, &o->ta, &o->tb))
        return usage_error("--op %s: expected NN, NT, TN or TT (op(A) then op(B); T: transposed)", arg);
    return 0;
}

/* --lda/--ldb/--ldc: a leading dimension N, or +P (the packed row length plus P). Which one is
 * d->field (0, 1, 2); the rule against the shape is layout_check's, once the shape is known. */
static int p_ld(const cli_opt *d, const char *arg, opts_t *o)
{
    int i = (int)d->field;
    int64_t v;
    bool plus = arg[0] == '+';
    if (parse_i64(arg + plus, &v) || v < (plus ? 0 : 1) || v >= LAYOUT_MAX_LD)
        return usage_error("--%s %s: expected a leading dimension from 1 to 2^31-1, or +P (packed plus P elements)",
                           d->name, arg);
    o->ld[i] = v;
    o->ld_plus[i] = plus;
    return 0;
}

static int p_stride(const cli_opt *d, const char *arg, opts_t *o)
{
    int64_t v;
    if (parse_i64(arg, &v) || v < 0 || v > ((int64_t)1 << 46))
        return usage_error("--%s %s: expected a whole number of elements from 0 to 2^46", d->name, arg);
    o->stride[d->field] = v;
    return 0;
}

int cli_layout(const opts_t *o, const shape_t *s, layout_t *lay, err_t *err)
{
    return layout_with(lay, o->ta, o->tb, s->m, s->n, s->k, o->batch, o->ld, o->ld_plus, o->stride, err);
}

/* Every shape the command runs, with the layout options: one line for the first that breaks a rule. */
static int check_layouts(const opts_t *o)
{
    const shape_t *list = o->nshapes ? o->shapes : &o->shape;
    size_t n = o->nshapes ? o->nshapes : 1;
    for (size_t i = 0; i < n; i++) {
        layout_t lay;
        err_t err;
        err_clear(&err);
        if (cli_layout(o, &list[i], &lay, &err))
            return usage_error("shape %lldx%lldx%lld: %s", (long long)list[i].m, (long long)list[i].n,
                               (long long)list[i].k, err.text);
    }
    return 0;
}

static int p_strategy(const cli_opt *d, const char *arg, opts_t *o)
{
    (void)d;
    if (strcmp(arg, "exhaustive") != 0 && strcmp(arg, "random") != 0 && strcmp(arg, "guided") != 0)
        return usage_error("--strategy %s: expected exhaustive, random or guided", arg);
    o->strategy = arg;
    return 0;
}

/* ---- the table ----------------------------------------------------------------------------- */

#define OFF(f) offsetof(opts_t, f)

static const cli_opt k_opts[] = {
    {"size", "S", CMD_BENCH | CMD_COMPILE | CMD_TUNE, p_size, 0, 0, 0, "M = N = K = S", "2048"},
    {"m", "M", CMD_BENCH | CMD_COMPILE | CMD_TUNE, p_dim, 0, 0, 0, "rows of A and C", "2048"},
    {"n", "N", CMD_BENCH | CMD_COMPILE | CMD_TUNE, p_dim, 0, 0, 0, "columns of B and C", "2048"},
    {"k", "K", CMD_BENCH | CMD_COMPILE | CMD_TUNE, p_dim, 0, 0, 0, "the inner dimension", "2048"},
    {"sizes", "RANGE", CMD_BENCH, p_sizes, 0, 0, 0, "run at every size of RANGE (a:b:step, a:b:*2 or v1,v2,...), M = N = K", NULL},
    {"shapes", "LIST", CMD_VERIFY, p_shapes, 0, 0, 0, "MxNxK,...", "1x1x1,17x33x5,127x129x131,1000x1000x1000,2048x2048x2048"},
    {"shapes", "LIST", CMD_TUNE, p_shapes, 0, 0, 0, "tune for each shape MxNxK,... (instead of --size)", NULL},
    {"shapes", "LIST", CMD_BENCH, p_shapes, 0, 0, 0, "run at each shape MxNxK,... (instead of --size)", NULL},
    {"shapes", "LIST", CMD_PICK, p_shapes, 0, 0, 0, "the shapes to choose a config for, MxNxK,...", NULL},
    {"alpha", "A", CMD_BENCH | CMD_TUNE, p_scalar, 0, 0, 0, "alpha", "1"},
    {"alpha", "A", CMD_VERIFY, p_scalar, 0, 0, 0, "alpha", "1.25"},
    {"beta", "B", CMD_BENCH | CMD_TUNE, p_scalar, 0, 0, 0, "beta", "0"},
    {"beta", "B", CMD_VERIFY, p_scalar, 0, 0, 0, "beta; verify always runs beta = 0 too", "-0.5"},
    {"op", "NN|NT|TN|TT", BUILDS | CMD_PICK, p_op, 0, 0, 0, "transposes: op(A) then op(B); T reads A stored K x M, B stored N x K", "NN"},
    {"lda", "N|+P", BUILDS | CMD_PICK, p_ld, 0, 0, 0, "elements between stored rows of A (+P: packed plus P)", "packed"},
    {"ldb", "N|+P", BUILDS | CMD_PICK, p_ld, 1, 0, 0, "elements between stored rows of B", "packed"},
    {"ldc", "N|+P", BUILDS | CMD_PICK, p_ld, 2, 0, 0, "elements between rows of C", "packed"},
    {"batch", "COUNT", BUILDS | CMD_PICK, p_i64, OFF(batch), 1, 65535, "products of a strided batch (grid z)", "1"},
    {"stride-a", "N", BUILDS | CMD_PICK, p_stride, 0, 0, 0, "elements between the batch's A (0: one A for all)", "packed"},
    {"stride-b", "N", BUILDS | CMD_PICK, p_stride, 1, 0, 0, "elements between the batch's B (0: one B for all)", "packed"},
    {"stride-c", "N", BUILDS | CMD_PICK, p_stride, 2, 0, 0, "elements between the batch's C", "packed"},
    {"warmup", "W", CMD_BENCH | CMD_TUNE, p_int, OFF(warmup), 0, 1000, "untimed launches first", "3"},
    {"runs", "R", CMD_BENCH, p_int, OFF(runs), 1, 1000, "timed runs, L2 flushed before each; median and spread over them", "7"},
    {"runs", "R", CMD_TUNE, p_int, OFF(runs), 3, 1000, "timed runs of each finalist, interleaved with cuBLAS (every point first gets 3)", "11"},
    {"iters", "I", CMD_BENCH | CMD_TUNE, p_int, OFF(iters), 1, 10000, "launches per timed run", "5"},
    {"seed", "S", RUNS | CMD_TUNE, p_seed, 0, 0, 0, "input generator seed (and the tune's sampling seed)", "1"},
    {"set", "KEY=VALUE", BUILDS & ~CMD_TUNE, p_set, 0, 0, 0, "override a template param without editing the file (repeatable)", NULL},
    {"set", "KEY=RANGE", CMD_TUNE, p_set, 0, 0, 0, "a dimension: a:b:step, a:b:*2, v1,v2,..., a value, or an expression of the other params (repeatable)", NULL},
    {"dtype", "f32|f64|bf16|f16", BUILDS, p_dtype, 0, 0, 0, "override the configs' dtype", NULL},
    {"dtype", "f32|f64|bf16|f16", CMD_PICK, p_dtype, 0, 0, 0, "the dtype to choose for", "f32"},
    {"arch", "sm_XX", BUILDS | CMD_PICK | CMD_WARM, p_arch, 0, 0, 0, "target architecture", "the GPU's; sm_90 without one"},
    {"device", "N", RUNS | CMD_INFO | CMD_WORKER | CMD_PICK | CMD_WARM, p_int, OFF(device), 0, 1023, "GPU ordinal", "0"},
    {"devices", "LIST", CMD_TUNE, p_devices, 0, 0, 0, "time on these GPUs, one worker each: 0,1,... or all", "0"},
    {"format", "F", CMD_BENCH, p_format, 0, 0, 0, "table, csv, jsonl or md", "table"},
    {"format", "F", CMD_TUNE, p_format, 0, 0, 0, "table or jsonl (with --dry-run: every feasible point, one per line)", "table"},
    {"format", "F", CMD_PICK, p_format, 0, 0, 0, "table (with the weighing) or jsonl (one line per shape)", "table"},
    {"format", "F", CMD_VERIFY, p_format, 0, 0, 0, "table, or jsonl: a row a config, shape and beta (status, errors, class), the rest on stderr", "table"},
    {"auto", NULL, RUNS, p_flag, OFF(auto_pick), 0, 0, "no CONFIG: run, for each shape, the config wisdom chose for this GPU", NULL},
    {"explain", NULL, RUNS, p_flag, OFF(explain), 0, 0, "with --auto: print, per shape, the candidates the selection model weighed and why one won", NULL},
    {"auto-tune", "[=SECONDS]", RUNS, p_auto_tune, 0, 0, 3600, "with --auto: at a shape wisdom has no entry for, time the model's best candidates for up to SECONDS of GPU time, keep the fastest verified one in the user's wisdom", "1"},
    {"wisdom", "DIR", RUNS | CMD_PICK | CMD_WARM, p_string, OFF(wisdom), 0, 0, "the wisdom read by --auto (and written by --auto-tune); the user's wisdom ($XDG_DATA_HOME/engine/wisdom) is read first", "the shipped wisdom/"},
    {"device-name", "NAME", CMD_PICK | CMD_WARM, p_string, OFF(device_name), 0, 0, "the GPU whose wisdom to use, as the driver names it (\"NVIDIA H100 80GB HBM3\")", "the GPU found, else none"},
    {"sms", "N", CMD_PICK | CMD_WARM, p_int, OFF(sms), 1, 100000, "SMs of the GPU the model plans for", "the GPU's; without one 132 (sm_90), 108 (sm_80), 84 (sm_86), 128 (sm_89)"},
    {"wisdom", "DIR", CMD_TUNE, p_string, OFF(wisdom), 0, 0, "record each shape's winner in DIR/<device>.json (kept when faster than what is there)", NULL},
    {"cross-check", NULL, RUNS, p_flag, OFF(cross_check), 0, 0, "first check cuBLAS against an FP64 Kahan CPU GEMM (128^3 and 77x65x129)", NULL},
    {"emit", "DIR", CMD_COMPILE, p_string, OFF(emit), 0, 0, "write each config's pasted .cu, .ptx and .cubin to DIR", NULL},
    {"verbose", NULL, CMD_COMPILE, p_flag, OFF(verbose), 0, 0, "print NVRTC's log (with ptxas -v) for each config", NULL},
    {"verbose", NULL, CMD_PICK, p_flag, OFF(verbose), 0, 0, "after the answer, list the candidates (wisdom entries), and each entry left out with its reason", NULL},
    {"jobs", "N", BUILDS | CMD_WARM, p_int, OFF(jobs), 1, 1024, "NVRTC compiles in parallel (threads)", "the number of cores"},
    {"cache", "DIR", BUILDS | CMD_CACHE | CMD_WORKER | CMD_WARM, p_string, OFF(cache_dir), 0, 0, "CUBIN cache directory", "$XDG_CACHE_HOME/engine, else ~/.cache/engine"},
    {"no-cache", NULL, BUILDS, p_flag, OFF(no_cache), 0, 0, "neither read nor write the CUBIN cache", NULL},
    {"timeout", "SEC", RUNS, p_positive, OFF(timeout_s), 0, 86400, "per kernel: one still running after SEC seconds is stopped (its worker killed)", "600"},
    {"timeout", "SEC", CMD_TUNE, p_positive, OFF(timeout_s), 0, 86400, "per point: one still running after SEC seconds is stopped and logged as timeout", "60"},
    {"dry-run", NULL, CMD_TUNE, p_flag, OFF(dry_run), 0, 0, "print the size of the space and what each constraint removed; compile nothing", NULL},
    {"log", "FILE", CMD_TUNE, p_string, OFF(log), 0, 0, "append one JSON line per point to FILE", NULL},
    {"log", "FILE", CMD_MERGE, p_string, OFF(log), 0, 0, "write the merged rows to FILE (a new log)", NULL},
    {"resume", NULL, CMD_TUNE, p_flag, OFF(resume), 0, 0, "skip the points --log FILE already holds (a truncated last line is cut off)", NULL},
    {"top", "K", CMD_TUNE, p_int, OFF(top), 1, 1000, "finalists re-timed with --runs runs", "8"},
    {"top", "K", CMD_MERGE, p_int, OFF(top), 1, 100000, "rows of the ranking shown", "10"},
    {"emit-best", "FILE", CMD_TUNE | CMD_MERGE, p_string, OFF(emit_best), 0, 0, "write the winner as a ready config (never over the source config)", NULL},
    {"budget", "N", CMD_TUNE, p_i64, OFF(budget), 1, 100000000, "evaluate at most N points (a random sample, or the guided search's limit)", NULL},
    {"strategy", "S", CMD_TUNE, p_strategy, 0, 0, 0, "exhaustive, random, or guided (a model of the times picks what to try next)", "exhaustive; random with --budget"},
    {"max-spill", "BYTES", CMD_TUNE, p_i64, OFF(max_spill), 0, 1000000, "after compiling, drop points that spill more than BYTES", NULL},
    {"min-occupancy", "PCT", CMD_TUNE, p_percent, OFF(min_occupancy), 0, 0, "after compiling, drop points with fewer resident threads per SM than PCT % of the maximum", NULL},
    {"shard", "I/N", CMD_TUNE, p_shard, 0, 0, 0, "take only the I-th of N disjoint parts of the space (also with --dry-run)", NULL},
    {"force", NULL, CMD_MERGE, p_flag, OFF(force), 0, 0, "merge logs of different problems or devices", NULL},
    {"bandwidth", NULL, CMD_INFO | CMD_WORKER, p_flag, OFF(bandwidth), 0, 0, "also measure DRAM and L2 copy bandwidth and the SM clock", NULL},
    {"help", NULL, ~0, NULL, 0, 0, 0, "this text", NULL},
};
#define NOPTS (sizeof k_opts / sizeof k_opts[0])

/* What each command is, and what its positional arguments are. */
typedef struct {
    int cmd;
    const char *name, *args, *summary;
} cmd_info;

static const cmd_info k_cmds[] = {
    {CMD_BENCH, "bench", "[CONFIG...]", "verify, then time each config beside cuBLAS (no CONFIG: the default walk)"},
    {CMD_VERIFY, "verify", "CONFIG...", "check each config at many shapes, beta = 0 and beta != 0"},
    {CMD_COMPILE, "compile", "CONFIG...", "compile only (no GPU needed); print registers, spills, shared memory"},
    {CMD_TUNE, "tune", "CONFIG|SPACE.json", "search a space of tile parameters; log, rank and keep the best"},
    {CMD_MERGE, "merge", "LOG...", "join tune logs (shards, machines) and rank their points again"},
    {CMD_CACHE, "cache", "info|clear", "what the CUBIN cache holds, or empty it"},
    {CMD_INFO, "info", "", "the GPU, its peaks, and the driver, NVRTC and cuBLAS versions"},
    {CMD_PICK, "pick", "", "the config --auto would run at each shape, the candidates weighed and why (no GPU needed)"},
    {CMD_WARM, "warm", "", "compile every wisdom entry of the GPU (or --arch) into the CUBIN cache, in parallel"},
    {CMD_WORKER, "__worker", "", "(internal) serve verification and timing requests on one GPU"},
};

void cli_help(int cmd, const char *cmd_name, FILE *f)
{
    const char *args = "";
    for (size_t i = 0; i < sizeof k_cmds / sizeof k_cmds[0]; i++)
        if (k_cmds[i].cmd == cmd) {
            args = k_cmds[i].args;
            fprintf(f, "usage: engine %s [options] %s\n\n%s.\n\n", cmd_name, args, k_cmds[i].summary);
        }
    for (size_t i = 0; i < NOPTS; i++) {
        const cli_opt *d = &k_opts[i];
        if (!(d->cmds & cmd))
            continue;
        char head[64];
        snprintf(head, sizeof head, "--%s%s%s", d->name, d->meta && d->meta[0] != '[' ? " " : "", d->meta ? d->meta : "");
        fprintf(f, "  %-22s %s", head, d->help);
        if (d->def)
            fprintf(f, " (default %s)", d->def);
        fputc('\n', f);
    }
}

/* Every option name once, for getopt_long; the table is searched again for the entry that fits
 * the command, so an option of another command gets its own message. */
static struct option *build_longopts(void)
{
    struct option *lo = xcalloc(NOPTS + 1, sizeof *lo);
    size_t n = 0;
    for (size_t i = 0; i < NOPTS; i++) {
        bool seen = false;
        for (size_t j = 0; j < n; j++)
            seen = seen || strcmp(lo[j].name, k_opts[i].name) == 0;
        if (seen)
            continue;
        int has = !k_opts[i].meta ? no_argument : k_opts[i].meta[0] == '[' ? optional_argument : required_argument;
        lo[n] = (struct option){k_opts[i].name, has, NULL, (int)(256 + n)};
        n++;
    }
    return lo;
}

static void set_defaults(int cmd, opts_t *o)
{
    o->shape = (shape_t){2048, 2048, 2048};
    o->alpha = cmd == CMD_VERIFY ? 1.25 : 1.0;
    o->beta = cmd == CMD_VERIFY ? -0.5 : 0.0;
    o->warmup = 3;
    o->iters = 5;
    o->runs = cmd == CMD_TUNE ? 11 : 7;
    o->seed = 1;
    o->format = FORMAT_TABLE;
    o->timeout_s = cmd == CMD_TUNE ? 60 : 600;
    o->top = cmd == CMD_MERGE ? 10 : 8;
    o->max_spill = -1;
    o->batch = 1;
    o->stride[0] = o->stride[1] = o->stride[2] = -1;
}

/* The configs a CONFIG argument names, added to o->entries; its error printed. */
static int add_entries(const char *arg, opts_t *o)
{
    err_t err;
    err_clear(&err);
    if (entries_expand(arg, &o->entries, &o->nentries, &err) == 0)
        return 0;
    err_print(stderr, &err);
    return EXIT_INPUT;
}

int cli_parse(int cmd, const char *cmd_name, int argc, char **argv, opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->cmd = cmd;
    o->cmd_name = cmd_name;
    set_defaults(cmd, o);
    struct option *lo = build_longopts();
    opterr = 0;
    optind = 0; /* 0, not 1: glibc then forgets the previous parse (a short-option cluster it was in) */
    int c, rc = 0;
    /* The leading ':' makes a missing value ':' (not '?', which would read as an unknown option). */
    while (!rc && (c = getopt_long(argc, argv, ":", lo, NULL)) != -1) {
        if (c == '?' || c == ':') {
            const char *bad = argv[optind - 1];
            if (c == ':' || optopt)
                rc = usage_error("%s: %s", bad, c == ':' ? "needs a value" : "unknown option");
            else
                rc = usage_error("%s: unknown option for `engine %s` (see engine %s --help)", bad, cmd_name, cmd_name);
            break;
        }
        const char *name = lo[c - 256].name;
        const cli_opt *d = NULL;
        for (size_t i = 0; i < NOPTS && !d; i++)
            if (strcmp(k_opts[i].name, name) == 0 && (k_opts[i].cmds & cmd))
                d = &k_opts[i];
        if (!d) {
            rc = usage_error("--%s: not an option of `engine %s` (see engine %s --help)", name, cmd_name, cmd_name);
            break;
        }
        if (!d->parse) {
            cli_help(cmd, cmd_name, stdout);
            rc = -1;
            break;
        }
        rc = d->parse(d, optarg, o);
    }
    free(lo);
    if (rc)
        return rc;
    if (cli_check_shape(&o->shape))
        return EXIT_INPUT;
    if ((cmd & (BUILDS | CMD_PICK)) && check_layouts(o))
        return EXIT_INPUT;
    /* Wisdom entries record the op, the batch and the alignment class that --lda/--ldb/--ldc leave
     * (wisdom.h), not the batch's own strides: a time measured with those (a shared B, products
     * far apart) must not be recorded as the packed batch's. --auto itself takes any layout (pick.c). */
    bool strided = o->stride[0] >= 0 || o->stride[1] >= 0 || o->stride[2] >= 0;
    if (strided && (o->auto_tune_s > 0 || (cmd == CMD_TUNE && o->wisdom)))
        return usage_error("%s: wisdom entries record the op, the batch and the alignment class, not a batch's own strides; give no --stride-* (or no %s)",
                           o->auto_tune_s > 0 ? "--auto-tune" : "--wisdom", o->auto_tune_s > 0 ? "--auto-tune" : "--wisdom");
    if (cmd == CMD_VERIFY && o->beta_given && o->beta == 0.0)
        return usage_error("--beta 0: verify always runs beta = 0; --beta sets the other, non-zero, case");
    if (cmd == CMD_BENCH && o->nshapes && o->shape_given)
        return usage_error("--sizes or --shapes, and --size/--m/--n/--k: give one or the other");
    if (cmd == CMD_TUNE && o->nshapes && o->shape_given)
        return usage_error("--shapes and --size/--m/--n/--k: give one or the other");
    if (cmd == CMD_TUNE && o->resume && !o->log)
        return usage_error("--resume needs --log FILE (the log to continue)");
    if (cmd == CMD_TUNE && o->no_cache && o->cache_dir)
        return usage_error("--no-cache and --cache DIR: give one or the other");
    for (int i = optind; i < argc; i++) {
        if (cmd & (BUILDS & ~CMD_TUNE)) {
            if ((rc = add_entries(argv[i], o)))
                return rc;
        } else {
            o->args = xrealloc(o->args, (o->nargs + 1) * sizeof *o->args);
            o->args[o->nargs++] = xstrdup(argv[i]);
        }
    }
    if ((cmd & RUNS) && (o->explain || o->auto_tune_s > 0) && !o->auto_pick)
        return usage_error("--%s needs --auto (it explains or tunes wisdom's choice)", o->explain ? "explain" : "auto-tune");
    if (cmd == CMD_PICK && o->nshapes == 0)
        return usage_error("`engine pick` needs --shapes MxNxK,... (see engine pick --help)");
    if (cmd == CMD_PICK && o->nargs)
        return usage_error("`engine pick` takes no CONFIG: it chooses one");
    if ((cmd & RUNS) && o->auto_pick && o->nentries) {
        /* A config named on the command line always wins over wisdom. */
        fprintf(stderr, "engine: --auto ignored: the CONFIG named on the command line is run instead\n");
        o->auto_pick = false;
    }
    if (cmd == CMD_BENCH && o->nentries == 0 && !o->auto_pick) {
        if (!paths_configs_dir())
            return usage_error("no CONFIG given and no shipped configs found for the default walk");
        char *list = xasprintf("@%s/walk.list", paths_configs_dir());
        rc = add_entries(list, o);
        free(list);
        if (rc)
            return rc;
    }
    if ((cmd == CMD_VERIFY || cmd == CMD_COMPILE) && o->nentries == 0 && !o->auto_pick)
        return usage_error("`engine %s` needs at least one CONFIG (see engine %s --help)", cmd_name, cmd_name);
    if (cmd == CMD_TUNE && o->nargs != 1)
        return usage_error("`engine tune` takes one CONFIG or space file (see engine tune --help)");
    if (cmd == CMD_MERGE && o->nargs == 0)
        return usage_error("`engine merge` needs at least one LOG (see engine merge --help)");
    if (cmd == CMD_CACHE && (o->nargs != 1 || (strcmp(o->args[0], "info") != 0 && strcmp(o->args[0], "clear") != 0)))
        return usage_error("`engine cache` takes one of: info, clear");
    if ((cmd == CMD_INFO || cmd == CMD_WORKER) && o->nargs)
        return usage_error("`engine %s` takes no CONFIG", cmd_name);
    return 0;
}

void cli_free(opts_t *o)
{
    for (size_t i = 0; i < o->nsets; i++) {
        free(o->set_text[i]);
        param_set_free(&o->sets[i]);
    }
    entries_free(o->entries, o->nentries);
    for (size_t i = 0; i < o->nargs; i++)
        free(o->args[i]);
    free(o->args);
    memset(o, 0, sizeof *o);
}
