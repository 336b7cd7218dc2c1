/* fuzz_config.c — a config's text and `--set` overrides, loaded the way the command line loads them
 * and checked against the real templates (kernels_src and tests/templates), then planned at a few
 * shapes. No NVRTC, no GPU.
 *
 * The input is the config's JSON, then optionally a line "--" and one override per line, each as
 * given to --set ("BM=128"). The overrides pass the command line's rules (cli.c: at most
 * CLI_MAX_SETS, no key twice) and param_set_parse, then config_parse (config_load on text in memory)
 * applies them: JSON, strict keys, types, every parameter's range and every constraint of the
 * template. Whatever fails must say why (an error with its text set). A config that loads is planned
 * at each shape: the plan fails with a reason, or it is sane — a "gemm" launch among at most
 * TPL_MAX_LAUNCHES, grids of 1..2^31-1 x 1..65535 x 1..65535 blocks, 1..1024 threads per block,
 * shared memory within the limit, a workspace of 0 or more elements, pasted source. Anything else
 * aborts, and libFuzzer keeps the input. */
#define _GNU_SOURCE
#include "cli.h"
#include "config.h"
#include "paths.h"
#include "util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMEM_LIMIT 232448 /* bytes per block, sm_90's opt-in limit */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("ENGINE_TEMPLATES", "kernels_src:tests/templates", 1);
    paths_init(NULL, NULL);
    return 0;
}

static void insane(const char *what, const char *config, int64_t M, int64_t N, int64_t K)
{
    fprintf(stderr, "fuzz_config: %s (config %s at %lldx%lldx%lld)\n", what, config, (long long)M, (long long)N,
            (long long)K);
    abort();
}

/* A failure must carry its reason, as every error the CLI prints does. */
static void check_reason(const err_t *err, const char *where)
{
    if (!err_isset(err) || !err->text[0]) {
        fprintf(stderr, "fuzz_config: %s failed without an error message\n", where);
        abort();
    }
}

static void check_plan(const plan_t *p, const config_t *cfg, int64_t M, int64_t N, int64_t K)
{
    if (p->nlaunches < 1 || p->nlaunches > TPL_MAX_LAUNCHES)
        insane("a plan without launches, or too many", cfg->label, M, N, K);
    if (p->main_launch < 0 || (size_t)p->main_launch >= p->nlaunches ||
        strcmp(p->launches[p->main_launch].kernel, "gemm") != 0)
        insane("the main launch is not a launch of \"gemm\"", cfg->label, M, N, K);
    for (size_t i = 0; i < p->nlaunches; i++) {
        const plan_launch *l = &p->launches[i];
        if (l->grid[0] < 1 || l->grid[1] < 1 || l->grid[2] < 1 || l->grid[0] > 2147483647LL || l->grid[1] > 65535 ||
            l->grid[2] > 65535)
            insane("a grid outside 1..2^31-1 x 1..65535 x 1..65535", cfg->label, M, N, K);
        if (l->block[0] < 1 || l->block[1] < 1 || l->block[2] < 1 || l->block[0] * l->block[1] * l->block[2] > 1024)
            insane("a block outside 1..1024 threads", cfg->label, M, N, K);
        if (l->smem < 0 || l->smem > SMEM_LIMIT)
            insane("shared memory outside 0..the limit", cfg->label, M, N, K);
    }
    if (p->workspace < 0)
        insane("a negative workspace", cfg->label, M, N, K);
    if (!p->source || !p->switches)
        insane("no pasted source or switches", cfg->label, M, N, K);
}

/* The overrides, one a line, into sets by the command line's rules; returns how many, or -1 (and
 * nothing held) where the command line would refuse them: a usage error, or one param_set_parse
 * rejects. */
static int parse_sets(const char *text, param_set *sets)
{
    int n = 0;
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char *arg = xstrndup(p, len);
        p += len + (eol != NULL);
        if (!arg[0]) {
            free(arg);
            continue;
        }
        /* cli.c p_set: at most CLI_MAX_SETS, and no key given twice. */
        size_t klen = strcspn(arg, "=");
        bool again = n == CLI_MAX_SETS;
        for (int i = 0; i < n && !again; i++)
            again = strlen(sets[i].key) == klen && strncmp(sets[i].key, arg, klen) == 0;
        err_t err;
        err_clear(&err);
        int rc = again ? -1 : param_set_parse(arg, &sets[n], &err);
        if (rc && !again)
            check_reason(&err, "param_set_parse");
        free(arg);
        if (rc) {
            while (n > 0)
                param_set_free(&sets[--n]);
            return -1;
        }
        n++;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The config part is kept whole (config_parse refuses a NUL inside the JSON); a NUL ends the
     * overrides, as it ends a command-line argument. */
    const char *sep = memmem(data, size, "\n--\n", 4);
    size_t clen = sep ? (size_t)(sep - (const char *)data) : size;
    char *text = sep ? xstrndup(sep + 4, size - clen - 4) : NULL;
    param_set sets[CLI_MAX_SETS];
    int nsets = text ? parse_sets(text, sets) : 0;
    free(text);
    if (nsets < 0)
        return 0;
    config_t cfg;
    err_t err;
    err_clear(&err);
    if (config_parse("fuzz.json", (const char *)data, clen, sets, (size_t)nsets, NULL, 90, &cfg, &err) == 0) {
        /* Corners and odd sizes; K = 0 (C = beta*C); C of 2^32 elements (64-bit offsets). */
        static const int64_t shapes[][3] = {{1, 1, 1}, {67, 45, 37},      {256, 256, 256},
                                            {5, 5, 0}, {4097, 17, 65537}, {65536, 65536, 16}};
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            plan_t plan;
            err_clear(&err);
            const int64_t M = shapes[i][0], N = shapes[i][1], K = shapes[i][2];
            plan_req r =
                config_plan_req(&cfg, &(plan_target){.arch = 90, .smem_limit = SMEM_LIMIT, .M = M, .N = N, .K = K});
            if (template_plan(&r, &plan, &err))
                check_reason(&err, "template_plan");
            else
                check_plan(&plan, &cfg, M, N, K);
            plan_free(&plan);
        }
        config_free(&cfg);
    } else {
        check_reason(&err, "config_parse");
    }
    for (int i = 0; i < nsets; i++)
        param_set_free(&sets[i]);
    return 0;
}
