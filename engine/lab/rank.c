/* rank.c — see rank.h: the points of one or several logs in order, and printed as a table. */
#include "rank.h"

#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

const result_row **rank_rows(const result_row *rows, size_t n, size_t *nranked)
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

double rank_cublas_ms(const result_row *rows, size_t n)
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

void rank_print(FILE *f, const result_row *const *ranked, size_t n, size_t top)
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
