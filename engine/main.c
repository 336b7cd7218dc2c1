/* main.c — the command line: `engine bench|verify|compile|info`. Parsing and orchestration only;
 * every piece of work is in its own module. */
#define _GNU_SOURCE
#include "arch.h"
#include "bench.h"
#include "blas.h"
#include "config.h"
#include "err.h"
#include "gpu.h"
#include "jit.h"
#include "paths.h"
#include "report.h"
#include "session.h"
#include "util.h"
#include "verify.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_DIM 65536
#define MAX_ELEMS 2147483647LL /* kernels index with 32-bit ints */
#define MAX_SETS 64
#define MAX_SHAPES 32
#define ENTRY_SEP '\x1f' /* separates a list entry's path from its own overrides */

typedef struct {
    int64_t m, n, k;
} shape_t;

typedef struct {
    const char *cmd;
    shape_t shape;
    double alpha, beta;
    bool alpha_given, beta_given;
    int warmup, iters, runs;
    uint64_t seed;
    param_set sets[MAX_SETS];
    size_t nsets;
    int arch; /* 0 = the GPU's (or sm_90 when compiling without one) */
    int device;
    int format;
    bool cross_check;
    const char *dtype;
    const char *emit;
    bool verbose; /* compile: print NVRTC's log (ptxas -v) for each config */
    shape_t shapes[MAX_SHAPES];
    size_t nshapes;
    char **configs;
    size_t nconfigs;
} opts_t;

static const shape_t k_verify_shapes[] = {
    {1, 1, 1}, {17, 33, 5}, {127, 129, 131}, {1000, 1000, 1000}, {2048, 2048, 2048}};

static void usage_main(FILE *f)
{
    fprintf(f,
            "usage: engine <command> [options] [CONFIG...]\n"
            "\n"
            "Turns JSON tile configs into GPU kernels at run time (NVRTC), verifies them against cuBLAS\n"
            "and times them beside it.\n"
            "\n"
            "commands:\n"
            "  bench CONFIG...    verify, then time each config beside cuBLAS (no CONFIG: the default walk)\n"
            "  verify CONFIG...   check each config at many shapes, beta = 0 and beta != 0\n"
            "  compile CONFIG...  compile only (no GPU needed); print registers, spills, shared memory\n"
            "  info               the GPU, its peaks, and the driver, NVRTC and cuBLAS versions\n"
            "\n"
            "CONFIG is a path to a .json file, a shipped config's name (ldg_wider2), a directory of\n"
            "configs, or @LIST, a file of config paths one per line. `engine COMMAND --help` lists\n"
            "every option.\n"
            "\n"
            "exit codes: 0 ok; 1 a verification failed; 2 bad input (usage, config, constraint, shape,\n"
            "arch, or a config that fails to compile); 3 CUDA or system failure (no driver or GPU, out of\n"
            "memory, kernel fault). With several configs a bad one is reported and skipped, and the exit\n"
            "code is the worst outcome.\n");
}

static void usage_cmd(const char *cmd, FILE *f)
{
    bool timed = strcmp(cmd, "bench") == 0, ver = strcmp(cmd, "verify") == 0, comp = strcmp(cmd, "compile") == 0;
    if (strcmp(cmd, "info") == 0) {
        fprintf(f, "usage: engine info [--device N]\n\n"
                   "  --device N        GPU ordinal (default 0)\n"
                   "  --bandwidth       also measure DRAM and L2 copy bandwidth and the SM clock\n"
                   "  --help            this text\n");
        return;
    }
    fprintf(f, "usage: engine %s [options] %s\n\n", cmd, timed ? "[CONFIG...]" : "CONFIG...");
    if (timed || comp)
        fprintf(f, "  --size S          M = N = K = S (default 2048)\n"
                   "  --m M, --n N, --k K  problem shape (default 2048 each)\n");
    if (timed || ver)
        fprintf(f, "  --alpha A         alpha (default %s)\n"
                   "  --beta B          beta (default %s)\n",
                timed ? "1" : "1.25", timed ? "0" : "-0.5; verify always runs beta = 0 too");
    if (ver)
        fprintf(f, "  --shapes LIST     MxNxK,... (default 1x1x1,17x33x5,127x129x131,1000x1000x1000,2048x2048x2048)\n");
    if (timed)
        fprintf(f, "  --warmup W        untimed launches first (default 3)\n"
                   "  --runs R          timed runs, L2 flushed before each; median and spread over them (default 7)\n"
                   "  --iters I         launches per timed run (default 5)\n");
    if (timed || ver)
        fprintf(f, "  --seed S          input generator seed (default 1)\n");
    fprintf(f, "  --set KEY=VALUE   override a template param without editing the file (repeatable)\n"
               "  --dtype f32|f64   override the configs' dtype\n"
               "  --arch sm_XX      target architecture (default: the GPU's; sm_90 without one)\n");
    if (timed || ver)
        fprintf(f, "  --device N        GPU ordinal (default 0)\n");
    if (timed)
        fprintf(f, "  --format F        table, csv, jsonl or md (default table)\n");
    if (timed || ver)
        fprintf(f, "  --cross-check     first check cuBLAS against an FP64 Kahan CPU GEMM (128^3 and 77x65x129)\n");
    if (comp)
        fprintf(f, "  --emit DIR        write each config's pasted .cu, .ptx and .cubin to DIR\n"
                   "  --verbose         print NVRTC's log (with ptxas -v) for each config\n");
    fprintf(f, "  --help            this text\n");
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "engine: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return EXIT_INPUT;
}

static int check_dim(const char *flag, const char *text, int64_t *out)
{
    int64_t v;
    if (parse_i64(text, &v))
        return usage_error("%s %s: expected a whole number", flag, text);
    if (v < 1 || v > MAX_DIM)
        return usage_error("%s %s: sizes must be between 1 and %d", flag, text, MAX_DIM);
    *out = v;
    return 0;
}

static int check_shape(const shape_t *s)
{
    const int64_t prods[3] = {s->m * s->k, s->k * s->n, s->m * s->n};
    const char *names[3] = {"M*K", "K*N", "M*N"};
    for (int i = 0; i < 3; i++)
        if (prods[i] > MAX_ELEMS)
            return usage_error("shape %lldx%lldx%lld: %s = %lld elements exceeds 2^31-1 (kernels index with 32-bit integers)",
                               (long long)s->m, (long long)s->n, (long long)s->k, names[i], (long long)prods[i]);
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
    if (check_dim("--shapes", buf, &s->m) || check_dim("--shapes", x1 + 1, &s->n) ||
        check_dim("--shapes", x2 + 1, &s->k))
        return EXIT_INPUT;
    return check_shape(s);
}

static int parse_count(const char *flag, const char *text, int min, int max, int *out)
{
    int64_t v;
    if (parse_i64(text, &v) || v < min || v > max)
        return usage_error("%s %s: expected a whole number from %d to %d", flag, text, min, max);
    *out = (int)v;
    return 0;
}

/* ---- config arguments ------------------------------------------------------------------------ */

typedef struct {
    char **v;
    size_t n, cap;
} strvec;

static void sv_push(strvec *s, char *x)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->v = xrealloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = x;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int expand_arg(const char *arg, strvec *out, int depth);

static int expand_list(const char *path, strvec *out, int depth)
{
    char *text = read_file(path, NULL);
    if (!text)
        return usage_error("@%s: cannot read config list", path);
    char *dir = path_dirname(path), *save = NULL;
    int rc = 0;
    for (char *line = strtok_r(text, "\n", &save); line && !rc; line = strtok_r(NULL, "\n", &save)) {
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *s = line, *e = line + strlen(line);
        while (*s == ' ' || *s == '\t')
            s++;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
            *--e = '\0';
        if (!*s)
            continue;
        /* "path KEY=VALUE ...": the overrides apply to this entry only (a sweep in one file). */
        char *sp = s;
        while (*sp && *sp != ' ' && *sp != '\t')
            sp++;
        char *rest = sp;
        while (*rest == ' ' || *rest == '\t')
            rest++;
        *sp = '\0';
        char *p = path_join(dir, s);
        if (*rest) {
            for (char *q = rest; *q; q++)
                if (*q == ' ' || *q == '\t')
                    *q = ENTRY_SEP;
            char *entry = xasprintf("%s%c%s", p, ENTRY_SEP, rest);
            sv_push(out, entry);
        } else {
            rc = expand_arg(p, out, depth + 1);
        }
        free(p);
    }
    free(dir);
    free(text);
    return rc;
}

static int expand_arg(const char *arg, strvec *out, int depth)
{
    if (depth > 8)
        return usage_error("%s: config lists nest too deeply", arg);
    if (arg[0] == '@')
        return expand_list(arg + 1, out, depth);
    struct stat st;
    if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
        DIR *d = opendir(arg);
        if (!d)
            return usage_error("%s: cannot read directory", arg);
        strvec found = {0};
        struct dirent *de;
        while ((de = readdir(d))) {
            size_t n = strlen(de->d_name);
            if (n > 5 && strcmp(de->d_name + n - 5, ".json") == 0)
                sv_push(&found, xasprintf("%s/%s", arg, de->d_name));
        }
        closedir(d);
        qsort(found.v, found.n, sizeof *found.v, cmp_str);
        for (size_t i = 0; i < found.n; i++)
            sv_push(out, found.v[i]);
        free(found.v);
        return 0;
    }
    /* A bare name that is not a file is a shipped config. */
    if (stat(arg, &st) != 0 && !strchr(arg, '/') && paths_configs_dir()) {
        const char *dot = strrchr(arg, '.');
        char *p = xasprintf("%s/%s%s", paths_configs_dir(), arg, dot && strcmp(dot, ".json") == 0 ? "" : ".json");
        if (stat(p, &st) == 0) {
            sv_push(out, p);
            return 0;
        }
        free(p);
    }
    sv_push(out, xstrdup(arg));
    return 0;
}

/* ---- option parsing -------------------------------------------------------------------------- */

enum { OPT_SIZE = 256, OPT_M, OPT_N, OPT_K, OPT_ALPHA, OPT_BETA, OPT_WARMUP, OPT_ITERS, OPT_RUNS, OPT_SEED,
       OPT_SET, OPT_ARCH, OPT_DEVICE, OPT_FORMAT, OPT_CROSS, OPT_DTYPE, OPT_EMIT, OPT_SHAPES, OPT_HELP,
       OPT_BANDWIDTH, OPT_VERBOSE };

static int parse_opts(int argc, char **argv, opts_t *o, bool *bandwidth)
{
    static const struct option longopts[] = {
        {"size", required_argument, 0, OPT_SIZE},   {"m", required_argument, 0, OPT_M},
        {"n", required_argument, 0, OPT_N},         {"k", required_argument, 0, OPT_K},
        {"alpha", required_argument, 0, OPT_ALPHA}, {"beta", required_argument, 0, OPT_BETA},
        {"warmup", required_argument, 0, OPT_WARMUP}, {"iters", required_argument, 0, OPT_ITERS},
        {"runs", required_argument, 0, OPT_RUNS},   {"seed", required_argument, 0, OPT_SEED},
        {"set", required_argument, 0, OPT_SET},     {"arch", required_argument, 0, OPT_ARCH},
        {"device", required_argument, 0, OPT_DEVICE}, {"format", required_argument, 0, OPT_FORMAT},
        {"cross-check", no_argument, 0, OPT_CROSS}, {"dtype", required_argument, 0, OPT_DTYPE},
        {"emit", required_argument, 0, OPT_EMIT},   {"shapes", required_argument, 0, OPT_SHAPES},
        {"help", no_argument, 0, OPT_HELP},         {"bandwidth", no_argument, 0, OPT_BANDWIDTH},
        {"verbose", no_argument, 0, OPT_VERBOSE},
        {0, 0, 0, 0}};
    /* Which options each command accepts: anything else is a usage error, not silently ignored. */
    const char *cmd = o->cmd;
    bool timed = strcmp(cmd, "bench") == 0, ver = strcmp(cmd, "verify") == 0, comp = strcmp(cmd, "compile") == 0,
         info = strcmp(cmd, "info") == 0;
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        const char *name = NULL;
        for (const struct option *lo = longopts; lo->name; lo++)
            if (lo->val == c)
                name = lo->name;
        bool allowed;
        switch (c) {
        case OPT_SIZE: case OPT_M: case OPT_N: case OPT_K: allowed = timed || comp; break;
        case OPT_ALPHA: case OPT_BETA: case OPT_SEED: case OPT_CROSS: allowed = timed || ver; break;
        case OPT_WARMUP: case OPT_ITERS: case OPT_RUNS: case OPT_FORMAT: allowed = timed; break;
        case OPT_SET: case OPT_ARCH: case OPT_DTYPE: allowed = !info; break;
        case OPT_DEVICE: allowed = timed || ver || info; break;
        case OPT_EMIT: case OPT_VERBOSE: allowed = comp; break;
        case OPT_SHAPES: allowed = ver; break;
        case OPT_BANDWIDTH: allowed = info; break;
        case OPT_HELP: allowed = true; break;
        default: allowed = false; break;
        }
        if (c == '?' || c == ':' || !allowed) {
            const char *bad = argv[optind - 1];
            if (c == ':' || (c == '?' && optopt))
                return usage_error("%s: %s", bad, c == ':' ? "needs a value" : "unknown option");
            if (c == '?')
                return usage_error("%s: unknown option for `engine %s` (see engine %s --help)", bad, cmd, cmd);
            return usage_error("--%s: not an option of `engine %s` (see engine %s --help)", name, cmd, cmd);
        }
        int rc = 0;
        switch (c) {
        case OPT_SIZE:
            rc = check_dim("--size", optarg, &o->shape.m);
            o->shape.n = o->shape.k = o->shape.m;
            break;
        case OPT_M: rc = check_dim("--m", optarg, &o->shape.m); break;
        case OPT_N: rc = check_dim("--n", optarg, &o->shape.n); break;
        case OPT_K: rc = check_dim("--k", optarg, &o->shape.k); break;
        case OPT_ALPHA:
            if (parse_double(optarg, &o->alpha))
                rc = usage_error("--alpha %s: expected a finite number", optarg);
            o->alpha_given = true;
            break;
        case OPT_BETA:
            if (parse_double(optarg, &o->beta))
                rc = usage_error("--beta %s: expected a finite number", optarg);
            o->beta_given = true;
            break;
        case OPT_WARMUP: rc = parse_count("--warmup", optarg, 0, 1000, &o->warmup); break;
        case OPT_ITERS: rc = parse_count("--iters", optarg, 1, 10000, &o->iters); break;
        case OPT_RUNS: rc = parse_count("--runs", optarg, 1, 1000, &o->runs); break;
        case OPT_SEED: {
            int64_t v;
            if (parse_i64(optarg, &v) || v < 0)
                rc = usage_error("--seed %s: expected a whole number >= 0", optarg);
            o->seed = (uint64_t)v;
            break;
        }
        case OPT_SET: {
            err_t err;
            err_clear(&err);
            if (o->nsets == MAX_SETS)
                return usage_error("--set: at most %d overrides", MAX_SETS);
            if (param_set_parse(optarg, &o->sets[o->nsets], &err)) {
                err_print(stderr, &err);
                return EXIT_INPUT;
            }
            for (size_t i = 0; i < o->nsets; i++)
                if (strcmp(o->sets[i].key, o->sets[o->nsets].key) == 0) {
                    param_set_free(&o->sets[o->nsets]);
                    return usage_error("--set %s: %s is already set by --set %s", optarg, o->sets[i].key,
                                       o->sets[i].text);
                }
            o->nsets++;
            break;
        }
        case OPT_ARCH: {
            err_t err;
            err_clear(&err);
            if (arch_parse(optarg, &o->arch, &err)) {
                err_print(stderr, &err);
                return EXIT_INPUT;
            }
            break;
        }
        case OPT_DEVICE: rc = parse_count("--device", optarg, 0, 1023, &o->device); break;
        case OPT_FORMAT:
            o->format = report_format_parse(optarg);
            if (o->format < 0)
                rc = usage_error("--format %s: expected table, csv, jsonl or md", optarg);
            break;
        case OPT_CROSS: o->cross_check = true; break;
        case OPT_DTYPE:
            if (strcmp(optarg, "f32") != 0 && strcmp(optarg, "f64") != 0)
                rc = usage_error("--dtype %s: expected f32 or f64", optarg);
            o->dtype = optarg;
            break;
        case OPT_EMIT: o->emit = optarg; break;
        case OPT_VERBOSE: o->verbose = true; break;
        case OPT_SHAPES: {
            char *copy = xstrdup(optarg), *save = NULL;
            o->nshapes = 0;
            for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
                if (o->nshapes == MAX_SHAPES)
                    rc = usage_error("--shapes: at most %d shapes", MAX_SHAPES);
                else
                    rc = parse_shape(t, &o->shapes[o->nshapes++]);
            }
            free(copy);
            if (!rc && o->nshapes == 0)
                rc = usage_error("--shapes: give at least one MxNxK");
            break;
        }
        case OPT_HELP: usage_cmd(cmd, stdout); exit(0);
        case OPT_BANDWIDTH: *bandwidth = true; break;
        }
        if (rc)
            return rc;
    }
    if (check_shape(&o->shape))
        return EXIT_INPUT;
    if (ver && o->beta_given && o->beta == 0.0)
        return usage_error("--beta 0: verify always runs beta = 0; --beta sets the other, non-zero, case");
    strvec cfgs = {0};
    for (int i = optind; i < argc; i++) {
        int rc = expand_arg(argv[i], &cfgs, 0);
        if (rc)
            return rc;
    }
    if (cfgs.n == 0 && timed) {
        if (!paths_configs_dir())
            return usage_error("no CONFIG given and no shipped configs found for the default walk");
        char *list = xasprintf("%s/walk.list", paths_configs_dir());
        int rc = expand_list(list, &cfgs, 0);
        free(list);
        if (rc)
            return rc;
    }
    if (cfgs.n == 0 && (ver || comp))
        return usage_error("`engine %s` needs at least one CONFIG (see engine %s --help)", cmd, cmd);
    if (info && cfgs.n)
        return usage_error("`engine info` takes no CONFIG");
    o->configs = cfgs.v;
    o->nconfigs = cfgs.n;
    return 0;
}

/* ---- shared steps ---------------------------------------------------------------------------- */

/* Load one entry of the config list: a path, and for lines of a @LIST file its own KEY=VALUE
 * overrides, which take precedence over the command line's --set. */
static int load_one(const opts_t *o, const char *entry, int arch, config_t *c, err_t *err)
{
    char *path = xstrdup(entry), *own = strchr(path, ENTRY_SEP);
    param_set sets[2 * MAX_SETS];
    size_t n = 0, nown = 0;
    int rc = 0;
    if (own)
        *own++ = '\0';
    for (char *tok = own; tok && *tok && !rc;) {
        char *end = strchr(tok, ENTRY_SEP);
        if (end)
            *end = '\0';
        if (*tok) {
            if (nown == MAX_SETS)
                rc = err_set(err, EXIT_INPUT, path, 0, 0, "at most %d overrides per list entry", MAX_SETS);
            else if (param_set_parse(tok, &sets[MAX_SETS + nown], err) == 0)
                nown++;
            else
                rc = -1;
        }
        tok = end ? end + 1 : NULL;
    }
    for (size_t i = 0; i < o->nsets && !rc; i++) {
        bool shadowed = false;
        for (size_t j = 0; j < nown; j++)
            shadowed = shadowed || strcmp(o->sets[i].key, sets[MAX_SETS + j].key) == 0;
        if (!shadowed)
            sets[n++] = o->sets[i];
    }
    for (size_t j = 0; j < nown && !rc; j++)
        sets[n++] = sets[MAX_SETS + j];
    if (!rc)
        rc = config_load(path, sets, n, o->dtype, arch, c, err);
    for (size_t j = 0; j < nown; j++)
        param_set_free(&sets[MAX_SETS + j]);
    free(path);
    return rc;
}

/* Load every config; the bad ones are reported and left NULL. Returns the worst exit code. */
static int load_configs(const opts_t *o, int arch, config_t **out)
{
    int worst = EXIT_OK;
    for (size_t i = 0; i < o->nconfigs; i++) {
        err_t err;
        err_clear(&err);
        config_t *c = xcalloc(1, sizeof *c);
        if (load_one(o, o->configs[i], arch, c, &err)) {
            err_print(stderr, &err);
            worst = exit_worst(worst, err.code);
            free(c);
            c = NULL;
        }
        out[i] = c;
    }
    return worst;
}

static char *rerun_args(const opts_t *o, const config_t *c, int64_t m, int64_t n, int64_t k, double alpha,
                        double beta, int arch)
{
    return xasprintf("engine bench %s --m %lld --n %lld --k %lld --alpha %g --beta %g --seed %llu --dtype %s --arch sm_%d%s%s",
                     c->path, (long long)m, (long long)n, (long long)k, alpha, beta, (unsigned long long)o->seed,
                     dtype_name(c->dtype), arch, c->overrides[0] ? " " : "", c->overrides);
}

static void print_mismatches(const verify_report *rep)
{
    for (size_t i = 0; i < rep->nshown; i++)
        fprintf(stderr, "    C[%lld][%lld]: got %.9g want %.9g (|diff| %.3g, tol %.3g)\n", (long long)rep->shown[i].row,
                (long long)rep->shown[i].col, rep->shown[i].got, rep->shown[i].want,
                fabs(rep->shown[i].got - rep->shown[i].want), rep->shown[i].tol);
    if (rep->bad > rep->nshown)
        fprintf(stderr, "    ... and %zu more\n", rep->bad - rep->nshown);
}

/* cuBLAS against an FP64 Kahan CPU product, at two shapes, each dtype in use. */
static int cross_check(session_t *s, const opts_t *o, config_t **cfgs)
{
    static const shape_t shapes[] = {{128, 128, 128}, {77, 65, 129}};
    bool used[2] = {false, false};
    for (size_t i = 0; i < o->nconfigs; i++)
        if (cfgs[i])
            used[cfgs[i]->dtype] = true;
    int worst = EXIT_OK;
    for (int d = 0; d < 2; d++) {
        if (!used[d])
            continue;
        for (size_t si = 0; si < 2; si++) {
            for (int bi = 0; bi < 2; bi++) {
                double beta = bi ? -0.5 : 0.0, alpha = 1.25;
                err_t err;
                err_clear(&err);
                const shape_t *sh = &shapes[si];
                if (problem_setup(s, (dtype_t)d, sh->m, sh->n, sh->k, alpha, beta, o->seed, &err)) {
                    err_print(stderr, &err);
                    return exit_worst(worst, err.code);
                }
                problem_t *p = &s->prob;
                size_t nC = (size_t)(sh->m * sh->n);
                double *ref = xmalloc(nC * sizeof *ref), *bound = xmalloc(nC * sizeof *bound);
                ref_gemm_kahan(p->dtype, sh->m, sh->n, sh->k, alpha, p->hA, p->hB, beta, p->hC0, ref, bound);
                /* Compare in the problem's dtype: narrow the CPU reference and bound. */
                void *ref_t = xmalloc(nC * dtype_size(p->dtype)), *bound_t = xmalloc(nC * dtype_size(p->dtype));
                for (size_t j = 0; j < nC; j++) {
                    if (p->dtype == DTYPE_F64) {
                        ((double *)ref_t)[j] = ref[j];
                        ((double *)bound_t)[j] = bound[j];
                    } else {
                        ((float *)ref_t)[j] = (float)ref[j];
                        ((float *)bound_t)[j] = (float)bound[j];
                    }
                }
                verify_report rep;
                int bad = verify_compare(p->hRef, ref_t, bound_t, p->dtype, sh->m, sh->n, sh->k, &rep);
                printf("cross-check %s cuBLAS vs FP64 Kahan CPU at %lldx%lldx%lld beta=%g: %s (max err %.3g, max err/tol %.3f)\n",
                       dtype_name(p->dtype), (long long)sh->m, (long long)sh->n, (long long)sh->k, beta,
                       bad ? "FAIL" : "ok", rep.max_err, rep.max_ratio);
                if (bad) {
                    print_mismatches(&rep);
                    worst = exit_worst(worst, EXIT_VERIFY);
                }
                free(ref);
                free(bound);
                free(ref_t);
                free(bound_t);
            }
        }
    }
    return worst;
}

static int resolve_arch(const opts_t *o, const session_t *s) { return o->arch ? o->arch : s->gpu.sm; }

static int64_t smem_limit_for(int arch, const session_t *s)
{
    if (s && s->gpu_open && s->gpu.sm == arch && s->gpu.smem_optin > 0)
        return s->gpu.smem_optin;
    return arch_lookup(arch)->smem_optin;
}

/* The start both GPU commands share: load every config (reporting the bad ones), and when any is
 * left, open the GPU and settle the target architecture. Without --arch that is the GPU's, so
 * the configs are checked again against it: constraints may mention ARCH. Returns false when
 * there is nothing to run (*worst says why). */
static bool open_for_configs(const opts_t *o, config_t **cfgs, session_t *s, int *arch, int *worst)
{
    memset(s, 0, sizeof *s);
    *worst = load_configs(o, o->arch ? o->arch : 90, cfgs);
    size_t nvalid = 0;
    for (size_t i = 0; i < o->nconfigs; i++)
        nvalid += cfgs[i] != NULL;
    if (nvalid == 0)
        return false;
    err_t err;
    err_clear(&err);
    if (session_open(s, o->device, &err)) {
        err_print(stderr, &err);
        *worst = exit_worst(*worst, err.code);
        return false;
    }
    *arch = resolve_arch(o, s);
    if (o->arch)
        return true;
    for (size_t i = 0; i < o->nconfigs; i++) {
        if (!cfgs[i])
            continue;
        config_free(cfgs[i]);
        err_clear(&err);
        if (load_one(o, o->configs[i], *arch, cfgs[i], &err)) {
            err_print(stderr, &err);
            *worst = exit_worst(*worst, err.code);
            free(cfgs[i]);
            cfgs[i] = NULL;
        }
    }
    return true;
}

static void free_configs(const opts_t *o, config_t **cfgs)
{
    for (size_t i = 0; i < o->nconfigs; i++) {
        if (cfgs[i])
            config_free(cfgs[i]);
        free(cfgs[i]);
    }
    free(cfgs);
}

/* ---- bench ----------------------------------------------------------------------------------- */

typedef struct {
    double fp32, fp64, fp64_tc; /* FLOP/s at the maximum SM clock */
    double dram_bps, l2_bps;
} machine_t;

static double peak_for(const machine_t *mc, dtype_t d, bool tensor)
{
    if (d == DTYPE_F32)
        return mc->fp32;
    return tensor ? mc->fp64_tc : mc->fp64;
}

static int bench_kernel_fn(void *ctx, err_t *err)
{
    void **c = ctx;
    return kernel_enqueue(c[0], c[1], err);
}

static int bench_cublas_fn(void *ctx, err_t *err)
{
    session_t *s = ctx;
    return problem_cublas(s, s->prob.C, err);
}

static void fill_roofline(report_row *row, const machine_t *mc, const plan_t *plan, dtype_t d, bool tensor,
                          double beta)
{
    double flops = 2.0 * plan->M * plan->N * plan->K, es = (double)dtype_size(d);
    double t_flop = flops / peak_for(mc, d, tensor);
    double dram_bytes = es * ((double)plan->M * plan->K + (double)plan->K * plan->N +
                              (double)plan->M * plan->N * (beta != 0.0 ? 2 : 1));
    double t_dram = mc->dram_bps > 0 ? dram_bytes / mc->dram_bps : 0;
    double t_l2 = plan->traffic >= 0 && mc->l2_bps > 0 ? es * (double)plan->traffic / mc->l2_bps : 0;
    row->floor_ms = 1e3 * t_flop;
    row->bound = "flop";
    if (1e3 * t_dram > row->floor_ms) {
        row->floor_ms = 1e3 * t_dram;
        row->bound = "dram";
    }
    if (1e3 * t_l2 > row->floor_ms) {
        row->floor_ms = 1e3 * t_l2;
        row->bound = "l2";
    }
}

static int cmd_bench(opts_t *o)
{
    config_t **cfgs = xcalloc(o->nconfigs, sizeof *cfgs);
    session_t s;
    int arch = 0, worst = EXIT_OK;
    err_t err;
    err_clear(&err);
    if (!open_for_configs(o, cfgs, &s, &arch, &worst))
        goto out;
    const arch_info *ai = arch_lookup(s.gpu.sm);
    double clock_hz = s.gpu.clock_khz * 1e3;
    machine_t mc = {arch_peak_flops(ai->fp32_lanes, s.gpu.sms, clock_hz),
                    arch_peak_flops(ai->fp64_lanes, s.gpu.sms, clock_hz),
                    arch_peak_flops(ai->fp64_tc_lanes > 0 ? ai->fp64_tc_lanes : ai->fp64_lanes, s.gpu.sms, clock_hz),
                    0, 0};
    err_clear(&err);
    if (bench_bandwidth(&s.gpu, &mc.dram_bps, &mc.l2_bps, &err)) {
        err_print(stderr, &err);
        worst = exit_worst(worst, err.code);
        goto out;
    }
    report_t rep;
    report_init(&rep, (report_format)o->format, stdout);
    double alpha = o->alpha_given ? o->alpha : 1.0, beta = o->beta_given ? o->beta : 0.0;
    int nv_major = 0, nv_minor = 0;
    nvrtcVersion(&nv_major, &nv_minor);
    report_note(&rep, "device %d: %s, sm_%d, %d SMs, max clock %d MHz, L2 %d MB; driver %d.%d, NVRTC %d.%d, cuBLAS %d; kernels built for sm_%d",
                o->device, s.gpu.name, s.gpu.sm, s.gpu.sms, s.gpu.clock_khz / 1000, s.gpu.l2_bytes >> 20,
                s.gpu.driver_version / 1000, (s.gpu.driver_version % 1000) / 10, nv_major, nv_minor, s.blas.version,
                arch);
    report_note(&rep, "peaks: FP32 %.1f TFLOP/s, FP64 %.1f (CUDA cores), FP64 %.1f (tensor cores); measured bandwidth: DRAM %.0f GB/s (copy), L2 %.0f GB/s (reads)",
                mc.fp32 / 1e12, mc.fp64 / 1e12, mc.fp64_tc / 1e12, mc.dram_bps / 1e9, mc.l2_bps / 1e9);
    report_note(&rep, "problem: C = alpha*A*B + beta*C, %lldx%lldx%lld, alpha=%g beta=%g, seed %llu; timing: %d warm-up, median of %d runs x %d launches, L2 flushed before each run; cuBLAS in strict FP32/FP64 (pedantic math)",
                (long long)o->shape.m, (long long)o->shape.n, (long long)o->shape.k, alpha, beta,
                (unsigned long long)o->seed, o->warmup, o->runs, o->iters);
    if (o->cross_check)
        worst = exit_worst(worst, cross_check(&s, o, cfgs));
    bench_opts bo = {o->warmup, o->runs, o->iters};
    /* One pass per dtype, so each has its cuBLAS row right after its configs. */
    for (int d = 0; d < 2 && !s.gpu.broken; d++) {
        report_row ref_row;
        bool have_ref = false;
        for (size_t i = 0; i < o->nconfigs && !s.gpu.broken; i++) {
            config_t *c = cfgs[i];
            if (!c || (int)c->dtype != d)
                continue;
            err_clear(&err);
            if (!have_ref) {
                bench_stats st;
                if (problem_setup(&s, c->dtype, o->shape.m, o->shape.n, o->shape.k, alpha, beta, o->seed, &err) ||
                    gpu_copy(&s.gpu, s.prob.C, s.prob.C0, (size_t)(o->shape.m * o->shape.n) * dtype_size(c->dtype), &err) ||
                    bench_time(&s.gpu, bench_cublas_fn, &s, &bo, &s.flush, &st, &err)) {
                    err_print(stderr, &err);
                    worst = exit_worst(worst, err.code);
                    goto out;
                }
                double mhz = 0;
                bench_clock_mhz(&s.gpu, &mhz, &err);
                double flops = 2.0 * o->shape.m * o->shape.n * o->shape.k;
                ref_row = (report_row){.config = "cublas", .tmpl = "cublas", .dtype = dtype_name(c->dtype),
                                       .M = o->shape.m, .N = o->shape.n, .K = o->shape.k, .alpha = alpha,
                                       .beta = beta, .status = "ok", .ms = st.median_ms, .ms_min = st.min_ms,
                                       .ms_max = st.max_ms, .tflops = flops / (st.median_ms * 1e-3) / 1e12,
                                       .pct_ref = 100.0, .regs = -1, .clock_mhz = mhz, .bound = "",
                                       .switches = "", .params = "",
                                       .args = c->dtype == DTYPE_F64 ? "cublasDgemm" : "cublasSgemm, CUBLAS_PEDANTIC_MATH"};
                ref_row.pct_peak = 100.0 * flops / (st.median_ms * 1e-3) /
                                   (c->dtype == DTYPE_F64 && ai->fp64_tc_lanes > 0 ? mc.fp64_tc : peak_for(&mc, c->dtype, false));
                have_ref = true;
            }
            report_row row = {.config = c->label, .tmpl = c->tpl.name, .dtype = dtype_name(c->dtype),
                              .M = o->shape.m, .N = o->shape.n, .K = o->shape.k, .alpha = alpha, .beta = beta,
                              .status = "error", .regs = -1, .bound = "", .switches = "", .params = "", .args = ""};
            char *params = config_params_string(c);
            char *args = rerun_args(o, c, o->shape.m, o->shape.n, o->shape.k, alpha, beta, arch);
            row.params = params;
            row.args = args;
            kernel_t k;
            verify_report vr;
            memset(&vr, 0, sizeof vr);
            int blocks = 0, threads = 0;
            bench_stats st;
            if (kernel_build(c, arch, smem_limit_for(arch, &s), o->shape.m, o->shape.n, o->shape.k, &k, &err) ||
                kernel_load(&s, &k, &err) || kernel_occupancy(&s, &k, &blocks, &threads, &err)) {
                err_print(stderr, &err);
                worst = exit_worst(worst, err.code);
                goto row_done;
            }
            row.switches = k.plan.switches;
            if (kernel_resources(&s, &k, &row.regs, &row.spill_bytes, &row.smem_bytes, &err)) {
                err_print(stderr, &err);
                worst = exit_worst(worst, err.code);
                goto row_done;
            }
            row.threads = threads;
            row.occ_blocks = blocks;
            row.occ_pct = 100.0 * blocks * threads / s.gpu.max_threads_sm;
            fill_roofline(&row, &mc, &k.plan, c->dtype, c->tpl.tensor, beta);
            if (kernel_verify(&s, &k, &vr, &err)) {
                err_print(stderr, &err);
                if (err.code == EXIT_VERIFY) {
                    row.status = "FAIL";
                    print_mismatches(&vr);
                }
                worst = exit_worst(worst, err.code);
                goto row_done;
            }
            row.max_ratio = vr.max_ratio;
            void *ctx[2] = {&s, &k};
            if (bench_time(&s.gpu, bench_kernel_fn, ctx, &bo, &s.flush, &st, &err)) {
                err_print(stderr, &err);
                worst = exit_worst(worst, err.code);
                goto row_done;
            }
            bench_clock_mhz(&s.gpu, &row.clock_mhz, &err);
            row.status = "ok";
            row.ms = st.median_ms;
            row.ms_min = st.min_ms;
            row.ms_max = st.max_ms;
            {
                double flops = 2.0 * o->shape.m * o->shape.n * o->shape.k;
                row.tflops = flops / (st.median_ms * 1e-3) / 1e12;
                row.pct_ref = 100.0 * ref_row.ms / st.median_ms;
                row.pct_peak = 100.0 * flops / (st.median_ms * 1e-3) / peak_for(&mc, c->dtype, c->tpl.tensor);
            }
        row_done:
            report_row_print(&rep, &row);
            kernel_free(&s, &k);
            free(params);
            free(args);
        }
        if (have_ref)
            report_row_print(&rep, &ref_row);
    }
    if (s.gpu.broken)
        fprintf(stderr, "engine: the GPU context was lost to a kernel fault; the remaining configs were not run\n");
out:
    session_close(&s);
    free_configs(o, cfgs);
    return worst;
}

/* ---- verify ---------------------------------------------------------------------------------- */

static int cmd_verify(opts_t *o)
{
    config_t **cfgs = xcalloc(o->nconfigs, sizeof *cfgs);
    session_t s;
    int arch = 0, worst = EXIT_OK;
    size_t passed = 0, failed = 0, errors = 0;
    err_t err;
    err_clear(&err);
    bool ready = open_for_configs(o, cfgs, &s, &arch, &worst);
    for (size_t i = 0; i < o->nconfigs; i++)
        errors += cfgs[i] == NULL;
    if (!ready)
        goto out;
    if (o->cross_check)
        worst = exit_worst(worst, cross_check(&s, o, cfgs));
    const shape_t *shapes = o->nshapes ? o->shapes : k_verify_shapes;
    size_t nshapes = o->nshapes ? o->nshapes : sizeof k_verify_shapes / sizeof k_verify_shapes[0];
    double alpha = o->alpha_given ? o->alpha : 1.25, betas[2] = {0.0, o->beta_given ? o->beta : -0.5};
    for (int d = 0; d < 2 && !s.gpu.broken; d++) {
        for (size_t si = 0; si < nshapes && !s.gpu.broken; si++) {
            for (int bi = 0; bi < 2 && !s.gpu.broken; bi++) {
                bool setup = false;
                for (size_t i = 0; i < o->nconfigs && !s.gpu.broken; i++) {
                    config_t *c = cfgs[i];
                    if (!c || (int)c->dtype != d)
                        continue;
                    const shape_t *sh = &shapes[si];
                    err_clear(&err);
                    if (!setup) {
                        if (problem_setup(&s, c->dtype, sh->m, sh->n, sh->k, alpha, betas[bi], o->seed, &err)) {
                            err_print(stderr, &err);
                            worst = exit_worst(worst, err.code);
                            goto out;
                        }
                        setup = true;
                    }
                    kernel_t k;
                    verify_report vr;
                    memset(&vr, 0, sizeof vr);
                    char shape[64];
                    snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)sh->m, (long long)sh->n, (long long)sh->k);
                    if (kernel_build(c, arch, smem_limit_for(arch, &s), sh->m, sh->n, sh->k, &k, &err) ||
                        kernel_load(&s, &k, &err)) {
                        err_print(stderr, &err);
                        worst = exit_worst(worst, err.code);
                        printf("error %-22s %s %-16s beta=%-5g\n", c->label, dtype_name(c->dtype), shape, betas[bi]);
                        errors++;
                    } else if (kernel_verify(&s, &k, &vr, &err)) {
                        printf("FAIL  %-22s %s %-16s beta=%-5g %zu of %zu wrong (%zu NaN/Inf), max err/tol %.3g\n",
                               c->label, dtype_name(c->dtype), shape, betas[bi], vr.bad, vr.checked, vr.nonfinite,
                               vr.max_ratio);
                        if (err.code == EXIT_VERIFY)
                            print_mismatches(&vr);
                        else
                            err_print(stderr, &err);
                        worst = exit_worst(worst, err.code);
                        failed++;
                    } else {
                        printf("ok    %-22s %s %-16s beta=%-5g max err/tol %.3g  [%s]\n", c->label,
                               dtype_name(c->dtype), shape, betas[bi], vr.max_ratio, k.plan.switches);
                        passed++;
                    }
                    fflush(stdout);
                    kernel_free(&s, &k);
                }
            }
        }
    }
    if (s.gpu.broken)
        fprintf(stderr, "engine: the GPU context was lost to a kernel fault; the remaining checks were not run\n");
out:
    printf("verify: %zu passed, %zu failed, %zu errors\n", passed, failed, errors);
    session_close(&s);
    free_configs(o, cfgs);
    return worst;
}

/* ---- compile --------------------------------------------------------------------------------- */

static int write_out(const char *dir, const char *name, const char *ext, const void *data, size_t len, err_t *err)
{
    char *path = xasprintf("%s/%s%s", dir, name, ext);
    FILE *f = fopen(path, "wb");
    int rc = 0;
    if (!f || fwrite(data, 1, len, f) != len)
        rc = err_set(err, EXIT_SYSTEM, path, 0, 0, "cannot write: %s", strerror(errno));
    if (f && fclose(f) != 0 && !rc)
        rc = err_set(err, EXIT_SYSTEM, path, 0, 0, "cannot write: %s", strerror(errno));
    free(path);
    return rc;
}

static int cmd_compile(opts_t *o)
{
    int arch = o->arch;
    if (!arch) {
        /* No GPU work: only ask the driver, when there is one, which architecture it has. */
        gpu_t g;
        err_t err;
        err_clear(&err);
        if (gpu_driver_present() && gpu_open(&g, 0, &err) == 0) {
            arch = g.sm;
            gpu_close(&g);
        } else {
            arch = 90;
            fprintf(stderr, "engine: no GPU found; compiling for sm_90 (use --arch to choose)\n");
        }
    }
    if (o->emit) {
        struct stat st;
        if (stat(o->emit, &st) != 0 && mkdir(o->emit, 0755) != 0)
            return usage_error("--emit %s: cannot create directory: %s", o->emit, strerror(errno));
    }
    config_t **cfgs = xcalloc(o->nconfigs, sizeof *cfgs);
    int worst = load_configs(o, arch, cfgs);
    printf("%-20s %-10s %-6s %-4s %7s %5s %6s %6s %6s %8s %8s %8s  %s\n", "config", "template", "arch", "type",
           "threads", "regs", "stack", "spillS", "spillL", "smem-st", "smem-dyn", "ms", "switches");
    for (size_t i = 0; i < o->nconfigs; i++) {
        config_t *c = cfgs[i];
        if (!c)
            continue;
        kernel_t k;
        err_t err;
        err_clear(&err);
        if (kernel_build(c, arch, arch_lookup(arch)->smem_optin, o->shape.m, o->shape.n, o->shape.k, &k, &err)) {
            err_print(stderr, &err);
            worst = exit_worst(worst, err.code);
            kernel_free(NULL, &k);
            continue;
        }
        const plan_launch *l = &k.plan.launches[k.plan.main_launch];
        const jit_func_info *fi = k.info;
        printf("%-20s %-10s sm_%-3d %-4s %7lld %5d %6d %6d %6d %8d %8lld %8.1f  %s\n", c->label, c->tpl.name, arch,
               dtype_name(c->dtype), (long long)(l->block[0] * l->block[1] * l->block[2]), fi ? fi->regs : -1,
               fi ? fi->stack : -1, fi ? fi->spill_stores : -1, fi ? fi->spill_loads : -1,
               fi ? fi->smem_static : -1, (long long)l->smem, k.jit->compile_ms, k.plan.switches);
        if (o->verbose)
            printf("---- NVRTC log of %s ----\n%s", c->label, k.jit->log);
        if (o->emit) {
            if (write_out(o->emit, c->name, ".cu", k.plan.source, strlen(k.plan.source), &err) ||
                write_out(o->emit, c->name, ".ptx", k.jit->ptx, strlen(k.jit->ptx), &err) ||
                write_out(o->emit, c->name, ".cubin", k.jit->cubin, k.jit->cubin_size, &err)) {
                err_print(stderr, &err);
                worst = exit_worst(worst, err.code);
            }
        }
        kernel_free(NULL, &k);
    }
    free_configs(o, cfgs);
    return worst;
}

/* ---- info ------------------------------------------------------------------------------------ */

static int cmd_info(opts_t *o, bool bandwidth)
{
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    char archs[512];
    arch_nvrtc_list(archs, sizeof archs);
    printf("NVRTC %d.%d: targets %s\n", major, minor, archs);
    session_t s;
    err_t err;
    err_clear(&err);
    if (session_open(&s, o->device, &err)) {
        err_print(stderr, &err);
        return err.code;
    }
    const gpu_t *g = &s.gpu;
    const arch_info *ai = arch_lookup(g->sm);
    double hz = g->clock_khz * 1e3;
    printf("device %d: %s\n", o->device, g->name);
    printf("  arch sm_%d, %d SMs, max SM clock %d MHz, %d threads/SM\n", g->sm, g->sms, g->clock_khz / 1000,
           g->max_threads_sm);
    printf("  memory %.1f GiB, %d-bit bus at %d MHz (%.0f GB/s theoretical), L2 %d MB\n",
           g->total_mem / 1073741824.0, g->bus_bits, g->mem_clock_khz / 1000,
           2.0 * g->mem_clock_khz * 1e3 * g->bus_bits / 8 / 1e9, g->l2_bytes >> 20);
    printf("  shared memory per block (opt-in) %d bytes\n", g->smem_optin);
    printf("  peak FP32 %.1f TFLOP/s (%d lanes/SM); FP64 %.1f TFLOP/s on CUDA cores (%d lanes/SM), %.1f on tensor cores\n",
           arch_peak_flops(ai->fp32_lanes, g->sms, hz) / 1e12, ai->fp32_lanes,
           arch_peak_flops(ai->fp64_lanes, g->sms, hz) / 1e12, ai->fp64_lanes,
           arch_peak_flops(ai->fp64_tc_lanes > 0 ? ai->fp64_tc_lanes : ai->fp64_lanes, g->sms, hz) / 1e12);
    printf("  driver %d.%d, cuBLAS %d\n", g->driver_version / 1000, (g->driver_version % 1000) / 10, s.blas.version);
    int rc = EXIT_OK;
    if (bandwidth) {
        double dram = 0, l2 = 0, mhz = 0;
        if (bench_bandwidth(&s.gpu, &dram, &l2, &err) || bench_clock_mhz(&s.gpu, &mhz, &err)) {
            err_print(stderr, &err);
            rc = err.code;
        } else {
            printf("  measured: DRAM %.0f GB/s (copy, read + write), L2 %.0f GB/s (reads); SM clock %.0f MHz\n", dram / 1e9,
                   l2 / 1e9, mhz);
        }
    }
    session_close(&s);
    return rc;
}

int main(int argc, char **argv)
{
    paths_init(argv[0]);
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage_main(argc < 2 ? stderr : stdout);
        paths_free();
        return argc < 2 ? EXIT_INPUT : EXIT_OK;
    }
    opts_t o = {.cmd = argv[1], .shape = {2048, 2048, 2048}, .alpha = 1.0, .beta = 0.0, .warmup = 3, .iters = 5,
                .runs = 7, .seed = 1, .format = FORMAT_TABLE};
    const char *cmds[] = {"bench", "verify", "compile", "info"};
    bool known = false;
    for (size_t i = 0; i < 4; i++)
        known = known || strcmp(cmds[i], o.cmd) == 0;
    if (!known) {
        fprintf(stderr, "engine: unknown command \"%s\" (commands: bench, verify, compile, info)\n", o.cmd);
        paths_free();
        return EXIT_INPUT;
    }
    bool bandwidth = false;
    int rc = parse_opts(argc - 1, argv + 1, &o, &bandwidth);
    if (rc == 0) {
        if (strcmp(o.cmd, "bench") == 0)
            rc = cmd_bench(&o);
        else if (strcmp(o.cmd, "verify") == 0)
            rc = cmd_verify(&o);
        else if (strcmp(o.cmd, "compile") == 0)
            rc = cmd_compile(&o);
        else
            rc = cmd_info(&o, bandwidth);
    }
    for (size_t i = 0; i < o.nsets; i++)
        param_set_free(&o.sets[i]);
    for (size_t i = 0; i < o.nconfigs; i++)
        free(o.configs[i]);
    free(o.configs);
    jit_cache_free();
    paths_free();
    return rc;
}
