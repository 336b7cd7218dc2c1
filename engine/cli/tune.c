/* tune.c — `engine tune`: search a space of tile parameters for the fastest verified kernel.
 *
 * For each shape: enumerate the space (space.h) and keep the feasible points of this --shard;
 * choose which to evaluate (every one, a random sample of --budget, or a guided search that spends
 * --budget on the neighbourhoods of the best points so far); run them through the dispatcher
 * (dispatch.h: parallel compile, one kernel at a time per GPU, crash-isolated) with verification and
 * a brief timing (3 runs) against a cuBLAS baseline; then re-time the --top K with --runs runs,
 * each run of the kernel interleaved with one of cuBLAS in the same worker, on the first GPU, so
 * the finalists are compared with each other and with cuBLAS under the same conditions. Every
 * point, pruned ones included, is one line of the --log (tunelog.h), written as it finishes, so
 * an interrupted tune loses nothing and --resume takes it up where it stopped. */
#define _GNU_SOURCE
#include "tune.h"

#include "arch.h"
#include "jit.h"
#include "jitlog.h"
#include "labjit.h"
#include "model.h"
#include "progress.h"
#include "rank.h"
#include "report.h"
#include "tunelog.h"
#include "dispatch.h"
#include "setup.h"
#include "space.h"
#include "util.h"
#include "winner.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POINTS 2000000ULL /* a space larger than this is refused: tune it in shards or narrow it */

/* One feasible point of this shard. */
typedef struct {
    const space_point *sp;
    uint64_t fidx;   /* its place among all feasible points (shards and --dry-run count this) */
    char *key;       /* result_make_key */
    char **sets;     /* NAME=value of each dimension of the space: what the worker applies */
    size_t nsets;
    dispatch_point sch;
    result_row r[3]; /* by stage: [1] brief timing or the failure, [2] re-timing; from the log when resumed */
    bool has[3];
    bool expanded;   /* guided search: its neighbours were queued */
} tpoint;

typedef struct {
    const opts_t *o;
    setup_t su;
    space_t sp;
    int *devices;
    size_t ndevices;
    tunelog_t log;
    bool have_log;
    progress_t prog;
    shape_t shape;
    space_point *pts; /* the space for this shape */
    size_t npts;
    space_counts counts;
    tpoint *tp; /* feasible points of this shard */
    size_t ntp;
    tpoint **by_index; /* cartesian index -> tpoint, NULL for removed points and other shards */
    dispatch_t disp;
    bool have_disp;
    /* counts for the progress line and the summary */
    size_t planned, done, compiled, nvrtc, cached, timed, failed, finalists, logged;
    size_t wrong; /* points whose results failed verification (FAIL): the tune exits 1 (EXIT_VERIFY) */
    double best_tflops, best_pct, t0;
    int stage;
} tuner_t;

static void on_signal(int sig)
{
    (void)sig;
    dispatch_stop = 1;
}

/* A deterministic generator for sampling (splitmix64), seeded from --seed. */
static uint64_t next_random(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void shuffle(tpoint **v, size_t n, uint64_t seed)
{
    uint64_t s = seed ^ 0x5eed5eed5eedULL;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(next_random(&s) % i);
        tpoint *t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

static const char *const *param_names(const space_t *s)
{
    static const char *names[SCOPE_MAX];
    for (size_t i = 0; i < s->base.tpl.nparams && i < SCOPE_MAX; i++)
        names[i] = s->base.tpl.params[i].name;
    return names;
}

static char *point_key(const tuner_t *t, const int64_t *values)
{
    const template_t *tp = &t->sp.base.tpl;
    return result_make_key(tp->name, dtype_name(t->sp.base.dtype), t->su.arch, t->shape.m, t->shape.n, t->shape.k,
                           t->o->alpha, t->o->beta, param_names(&t->sp), values, tp->nparams);
}

/* The command that reruns one point alone. */
static char *rerun_args(const tuner_t *t, const tpoint *p)
{
    strbuf sb;
    sb_init(&sb);
    char name[16];
    sb_addf(&sb, "engine bench %s --m %lld --n %lld --k %lld --alpha %g --beta %g --seed %llu --dtype %s --arch %s",
            t->sp.base.path, (long long)t->shape.m, (long long)t->shape.n, (long long)t->shape.k, t->o->alpha,
            t->o->beta, (unsigned long long)t->o->seed, dtype_name(t->sp.base.dtype),
            arch_name(t->su.arch, name, sizeof name));
    for (size_t i = 0; i < p->nsets; i++)
        sb_addf(&sb, " --set %s", p->sets[i]);
    return sb_steal(&sb);
}

/* A row with what every row of this point shares. */
static void row_base(const tuner_t *t, const int64_t *values, const char *key, int stage, result_row *r)
{
    result_row_init(r);
    const template_t *tp = &t->sp.base.tpl;
    r->key = xstrdup(key);
    r->config = xstrdup(t->sp.base.name);
    r->tmpl = xstrdup(tp->name);
    r->dtype = xstrdup(dtype_name(t->sp.base.dtype));
    r->arch = xstrdup(arch_name(t->su.arch, (char[16]){0}, 16));
    r->device = xstrdup("");
    r->M = t->shape.m;
    r->N = t->shape.n;
    r->K = t->shape.k;
    r->alpha = t->o->alpha;
    r->beta = t->o->beta;
    r->seed = t->o->seed;
    r->stage = stage;
    result_row_set_params(r, param_names(&t->sp), values, tp->nparams);
    r->reason = xstrdup("");
    r->switches = xstrdup("");
    r->args = xstrdup("");
}

static void append(tuner_t *t, const result_row *r)
{
    if (!t->have_log)
        return;
    err_t err;
    err_clear(&err);
    if (tunelog_append(&t->log, r, &err)) {
        /* A full disk must not cost the measurements still in memory: say so once, go on. */
        if (t->logged != (size_t)-1)
            err_print(stderr, &err);
        t->logged = (size_t)-1;
    } else if (t->logged != (size_t)-1) {
        t->logged++;
    }
}

/* A re-timing (stage 2) does not verify again: its row takes the class and errors that the point's
 * first stage verified, where it has none of its own (winner_record records only a row verified in
 * its dtype's own class). For a reply, and for a row read back from the log by --resume. */
static void carry_class(const tpoint *p, result_row *r)
{
    if ((r->acc_class && *r->acc_class) || !p->has[1] || !p->r[1].acc_class || !*p->r[1].acc_class)
        return;
    free(r->acc_class);
    r->acc_class = xstrdup(p->r[1].acc_class);
    r->err_max_u = p->r[1].err_max_u;
    r->err_mean_u = p->r[1].err_mean_u;
    r->cublas_err_max_u = p->r[1].cublas_err_max_u;
    r->cublas_err_mean_u = p->r[1].cublas_err_mean_u;
}

/* The row of a point that has finished a stage, from its reply. */
static void row_of(tuner_t *t, tpoint *p, result_row *r)
{
    dispatch_point *s = &p->sch;
    json_t *rep = s->reply;
    const char *status = dispatch_status(s);
    bool ok = strcmp(status, "ok") == 0;
    row_base(t, p->sp->values, p->key, s->stage == 2 ? 2 : ok ? 1 : 0, r);
    free(r->status);
    r->status = xstrdup(result_invalidity(status) ? status : "error");
    if (!ok) {
        free(r->reason);
        const char *why = json_string_value(json_object_get(rep, "error"));
        r->reason = xstrdup(why ? why : "no reason given");
    }
    if (s->slot >= 0) {
        free(r->device);
        r->device = xstrdup(t->disp.slots[s->slot].name);
        r->device_index = t->devices[s->slot];
    }
    const jit_func_info *fi = s->compiled ? s->job.k.info : NULL;
    if (s->stage != 2 && s->compiled) {
        r->t_compile = s->job.ms * 1e-3;
        r->from_cache = s->job.origin != JIT_COMPILED;
        free(r->switches);
        r->switches = xstrdup(s->job.k.plan.switches ? s->job.k.plan.switches : "");
    } else {
        r->from_cache = true;
        const char *sw = json_string_value(json_object_get(rep, "switches"));
        free(r->switches);
        r->switches = xstrdup(sw ? sw : "");
    }
    if (fi) {
        r->regs = fi->regs;
        r->spill_bytes = fi->spill_stores + fi->spill_loads;
    }
    r->regs = (int)worker_num(rep, "regs", r->regs);
    r->spill_bytes = (int)worker_num(rep, "spill_bytes", r->spill_bytes);
    r->smem_bytes = (int)worker_num(rep, "smem_bytes", -1);
    r->threads = (int)worker_num(rep, "threads", -1);
    r->occ_pct = worker_num(rep, "occ_pct", -1);
    r->t_verify = worker_num(rep, "t_verify", -1);
    r->t_bench = worker_num(rep, "t_bench", -1);
    if (ok) {
        double flops = 2.0 * t->shape.m * t->shape.n * t->shape.k * (double)t->disp.c.lay.batch; /* every product */
        r->ms = worker_num(rep, "ms", -1);
        r->ms_min = worker_num(rep, "ms_min", -1);
        r->ms_max = worker_num(rep, "ms_max", -1);
        r->runs = (int)worker_num(rep, "runs", -1);
        r->cublas_ms = worker_num(rep, "cublas_ms", -1);
        r->tflops = r->ms > 0 ? flops / (r->ms * 1e-3) / 1e12 : -1;
        r->pct_cublas = r->ms > 0 && r->cublas_ms > 0 ? 100.0 * r->cublas_ms / r->ms : -1;
        r->clock_mhz = worker_num(rep, "clock_mhz", -1);
        double w = worker_num(rep, "power_w", -1);
        r->power_w = w > 0 ? w : -1;
    }
    /* What verification measured against the FP64 reference (accuracy.h), wrong results included. */
    if (json_is_string(json_object_get(rep, "class"))) {
        free(r->acc_class);
        r->acc_class = xstrdup(json_string_value(json_object_get(rep, "class")));
        r->err_max_u = worker_num(rep, "err_max_u", -1);
        r->err_mean_u = worker_num(rep, "err_mean_u", -1);
        r->cublas_err_max_u = worker_num(rep, "ref_err_max_u", -1);
        r->cublas_err_mean_u = worker_num(rep, "ref_err_mean_u", -1);
    } else if (s->stage == 2) {
        carry_class(p, r);
    }
    free(r->args);
    r->args = rerun_args(t, p);
}

static void show_progress(tuner_t *t, bool force)
{
    if (!t->prog.on)
        return;
    double el = (now_ms() - t->t0) * 1e-3;
    char eta[32] = "?";
    if (t->done > 0 && t->planned > t->done)
        progress_duration(el / t->done * (t->planned - t->done), eta, sizeof eta);
    else if (t->planned <= t->done)
        snprintf(eta, sizeof eta, "0s");
    char best[64] = "-";
    if (t->best_tflops > 0)
        snprintf(best, sizeof best, "%.2f TFLOP/s (%.2fx cuBLAS)", t->best_tflops, t->best_pct / 100);
    progress_show(&t->prog, force, "tune %lldx%lldx%lld stage %d: %zu/%zu points | compiled %zu (%zu cached) | timed %zu | failed %zu | best %s | ETA %s",
                  (long long)t->shape.m, (long long)t->shape.n, (long long)t->shape.k, t->stage, t->done, t->planned,
                  t->compiled, t->cached, t->timed, t->failed, best, eta);
}

static void on_tick(void *ctx) { show_progress(ctx, false); }

static void on_compiled(void *ctx, dispatch_point *s)
{
    tuner_t *t = ctx;
    if (!s->compiled)
        return;
    t->compiled++;
    t->cached += s->job.origin != JIT_COMPILED;
    t->nvrtc += s->job.origin == JIT_COMPILED;
}

static void on_done(void *ctx, dispatch_point *s)
{
    tuner_t *t = ctx;
    tpoint *p = s->user;
    int stage = s->stage == 2 ? 2 : 1;
    if (p->has[stage])
        result_row_free(&p->r[stage]);
    row_of(t, p, &p->r[stage]);
    p->has[stage] = true;
    append(t, &p->r[stage]);
    t->done++;
    const result_row *r = &p->r[stage];
    t->finalists += stage == 2;
    if (strcmp(r->status, "ok") == 0) {
        t->timed += stage == 1;
        if (r->tflops > t->best_tflops) {
            t->best_tflops = r->tflops;
            t->best_pct = r->pct_cublas;
        }
    } else {
        t->failed++;
        t->wrong += strcmp(r->status, "FAIL") == 0;
    }
    /* What the compile left in memory is not needed again: the worker reads the disk cache. */
    if (s->compiled || s->job.k.plan.source) {
        if (s->job.k.jit)
            jit_forget(lab_jit(), s->job.k.jit);
        build_job_free(&s->job);
        s->compiled = false;
    }
    json_decref(s->reply);
    s->reply = NULL;
    show_progress(t, false);
}

/* ---- stages ------------------------------------------------------------------------------------ */

static int run_batch(tuner_t *t, tpoint **batch, size_t n, int stage, err_t *err)
{
    if (n == 0)
        return 0;
    dispatch_point **sp = xcalloc(n, sizeof *sp);
    for (size_t i = 0; i < n; i++) {
        dispatch_point *s = &batch[i]->sch;
        s->cfg = t->sp.base;
        s->cfg.values = (int64_t *)batch[i]->sp->values;
        s->sets = batch[i]->sets;
        s->nsets = batch[i]->nsets;
        s->stage = stage;
        s->pin_first = stage == 2;
        s->user = batch[i];
        sp[i] = s;
    }
    t->stage = stage;
    int rc = dispatch_run(&t->disp, sp, n, err);
    free(sp);
    return rc;
}

static bool evaluated(const tpoint *p) { return p->has[1]; }

static double stage1_ms(const tpoint *p)
{
    return p->has[1] && strcmp(p->r[1].status, "ok") == 0 && p->r[1].ms > 0 ? p->r[1].ms : INFINITY;
}

static int cmp_stage1(const void *a, const void *b)
{
    const tpoint *x = *(tpoint *const *)a, *y = *(tpoint *const *)b;
    double u = stage1_ms(x), v = stage1_ms(y);
    if (u != v)
        return u < v ? -1 : 1;
    return x->fidx < y->fidx ? -1 : x->fidx > y->fidx;
}

/* Evaluate the points of list that have no result yet, at most `room` of them. */
static int evaluate_new(tuner_t *t, tpoint **list, size_t n, size_t room, err_t *err)
{
    tpoint **todo = xcalloc(n ? n : 1, sizeof *todo);
    size_t k = 0;
    for (size_t i = 0; i < n && k < room; i++)
        if (!evaluated(list[i]))
            todo[k++] = list[i];
    t->planned += k;
    int rc = run_batch(t, todo, k, 1, err);
    free(todo);
    return rc;
}

static size_t count_evaluated(const tuner_t *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->ntp; i++)
        n += evaluated(&t->tp[i]);
    return n;
}

/* The model of the points timed so far (model.h); idx and ms have room for every point. */
static void fit(const tuner_t *t, model_t *m, uint64_t *idx, double *ms)
{
    size_t n = 0;
    for (size_t i = 0; i < t->ntp; i++)
        if (isfinite(stage1_ms(&t->tp[i]))) {
            idx[n] = t->tp[i].sp->index;
            ms[n++] = stage1_ms(&t->tp[i]);
        }
    model_fit(m, &t->sp, idx, ms, n);
}

typedef struct {
    tpoint *p;
    double y;
} scored;

static int cmp_scored(const void *a, const void *b)
{
    const scored *x = a, *y = b;
    if (x->y != y->y)
        return x->y < y->y ? -1 : 1;
    return x->p->fidx < y->p->fidx ? -1 : x->p->fidx > y->p->fidx;
}

#define GUIDED_BATCH 8

/* Guided search, in three phases over the budget: a random third; then batches of the points the
 * additive model (refitted after each batch) predicts fastest, until three quarters are spent;
 * then the neighbourhoods of the best points so far (one step along one dimension, two steps when
 * none is left). Chosen on a landscape measured on the H100 (all 460 points of tune/warptile.json
 * at 4096^3, replayed by tests/fake_worker.py): with a quarter of the evaluations it ends within
 * 3% of the exhaustive best for 188 of 200 seeds, against 166 for a random sample of the same size
 * and 72 for best-first local search alone (docs/archive/NOTES-history.md, "Round 2: a search that
 * beats sampling"). */
static int guided_search(tuner_t *t, tpoint **order, size_t budget, err_t *err)
{
    size_t first = budget / 3 > 8 ? budget / 3 : budget < 8 ? budget : 8;
    size_t model_end = budget - budget / 4;
    int rc = evaluate_new(t, order, t->ntp, first, err);
    scored *sc = xcalloc(t->ntp ? t->ntp : 1, sizeof *sc);
    tpoint **cand = xcalloc(t->ntp ? t->ntp : 1, sizeof *cand);
    uint64_t *idx = xcalloc(t->ntp ? t->ntp : 1, sizeof *idx);
    double *ms = xcalloc(t->ntp ? t->ntp : 1, sizeof *ms);
    while (!rc && count_evaluated(t) < model_end) {
        model_t m;
        fit(t, &m, idx, ms);
        size_t n = 0;
        for (size_t i = 0; i < t->ntp; i++)
            if (!evaluated(&t->tp[i]))
                sc[n++] = (scored){&t->tp[i], model_predict(&m, &t->sp, t->tp[i].sp->index)};
        model_free(&m);
        if (n == 0)
            break;
        qsort(sc, n, sizeof *sc, cmp_scored);
        size_t room = model_end - count_evaluated(t), k = 0;
        for (size_t i = 0; i < n && k < GUIDED_BATCH && k < room; i++)
            cand[k++] = sc[i].p;
        rc = evaluate_new(t, cand, k, k, err);
    }
    uint64_t nb[64], nb2[64];
    while (!rc && count_evaluated(t) < budget) {
        tpoint *best = NULL;
        for (size_t i = 0; i < t->ntp; i++) {
            tpoint *p = &t->tp[i];
            if (!p->expanded && isfinite(stage1_ms(p)) && (!best || cmp_stage1(&p, &best) < 0))
                best = p;
        }
        if (!best)
            break;
        best->expanded = true;
        size_t nc = 0;
        for (int steps = 1; steps <= 2 && nc == 0; steps++) {
            size_t n1 = space_neighbours(&t->sp, best->sp->index, nb, 64);
            for (size_t i = 0; i < n1; i++) {
                size_t n2 = 1;
                nb2[0] = nb[i];
                if (steps == 2)
                    n2 = space_neighbours(&t->sp, nb[i], nb2, 64);
                for (size_t j = 0; j < n2 && nc < t->ntp; j++) {
                    tpoint *q = t->by_index[nb2[j]];
                    bool dup = false;
                    for (size_t k = 0; k < nc && !dup; k++)
                        dup = cand[k] == q;
                    if (q && !evaluated(q) && !dup)
                        cand[nc++] = q;
                }
            }
        }
        rc = evaluate_new(t, cand, nc, budget - count_evaluated(t), err);
    }
    free(sc);
    free(cand);
    free(idx);
    free(ms);
    return rc;
}

static int stage_one(tuner_t *t, err_t *err)
{
    const opts_t *o = t->o;
    tpoint **order = xcalloc(t->ntp ? t->ntp : 1, sizeof *order);
    for (size_t i = 0; i < t->ntp; i++)
        order[i] = &t->tp[i];
    const char *strategy = o->strategy ? o->strategy : o->budget ? "random" : "exhaustive";
    size_t budget = o->budget > 0 && (size_t)o->budget < t->ntp ? (size_t)o->budget : t->ntp;
    int rc;
    if (strcmp(strategy, "exhaustive") == 0) {
        rc = evaluate_new(t, order, t->ntp, t->ntp, err);
    } else {
        shuffle(order, t->ntp, o->seed);
        if (strcmp(strategy, "random") == 0) {
            /* Points of the sample already in the log count against the budget. */
            rc = evaluate_new(t, order, budget, budget, err);
        } else {
            rc = guided_search(t, order, budget, err);
        }
    }
    free(order);
    return rc;
}

static int stage_two(tuner_t *t, err_t *err)
{
    tpoint **order = xcalloc(t->ntp ? t->ntp : 1, sizeof *order);
    for (size_t i = 0; i < t->ntp; i++)
        order[i] = &t->tp[i];
    qsort(order, t->ntp, sizeof *order, cmp_stage1);
    size_t k = 0;
    tpoint **todo = xcalloc(t->ntp ? t->ntp : 1, sizeof *todo);
    for (size_t i = 0; i < t->ntp && i < (size_t)t->o->top && isfinite(stage1_ms(order[i])); i++)
        if (!order[i]->has[2])
            todo[k++] = order[i];
    t->planned += k;
    int rc = run_batch(t, todo, k, 2, err);
    free(todo);
    free(order);
    return rc;
}

/* ---- output ------------------------------------------------------------------------------------ */

/* The winner's file for one shape: FILE itself, or FILE with -MxNxK before .json when several. */
static char *emit_path(const tuner_t *t, size_t nshapes)
{
    const char *f = t->o->emit_best;
    if (nshapes <= 1)
        return xstrdup(f);
    const char *dot = strrchr(f, '.');
    size_t stem = dot && strcmp(dot, ".json") == 0 ? (size_t)(dot - f) : strlen(f);
    return xasprintf("%.*s-%lldx%lldx%lld.json", (int)stem, f, (long long)t->shape.m, (long long)t->shape.n,
                     (long long)t->shape.k);
}

static int report(tuner_t *t, size_t nshapes, err_t *err)
{
    size_t nrows = 0;
    result_row *rows = xcalloc(2 * t->ntp + 1, sizeof *rows);
    for (size_t i = 0; i < t->ntp; i++)
        for (int s = 1; s <= 2; s++)
            if (t->tp[i].has[s])
                rows[nrows++] = t->tp[i].r[s]; /* shallow: owned by the points */
    size_t nranked = 0;
    const result_row **ranked = rank_rows(rows, nrows, &nranked);
    int rc = 0;
    if (nranked == 0) {
        printf("no point of the space passed verification and timing at %lldx%lldx%lld\n", (long long)t->shape.m,
               (long long)t->shape.n, (long long)t->shape.k);
        rc = EXIT_VERIFY;
    } else {
        rank_print(stdout, ranked, nranked, (size_t)t->o->top);
        const result_row *w = ranked[0];
        /* The winner against cuBLAS's median over the finalists, not against the cuBLAS runs
         * beside the winner alone (rank_cublas_ms says why). */
        const double cub = rank_cublas_ms(rows, nrows);
        const double vs = cub > 0 && w->ms > 0 ? cub / w->ms : w->pct_cublas / 100;
        printf("best at %lldx%lldx%lld: %.2f TFLOP/s, %.4f ms (median of %d runs, spread %.1f%%), %.3fx cuBLAS%s, SM clock %.0f MHz, on %s\n",
               (long long)t->shape.m, (long long)t->shape.n, (long long)t->shape.k, w->tflops, w->ms, w->runs,
               w->ms > 0 ? 100.0 * (w->ms_max - w->ms_min) / w->ms : 0, vs,
               w->stage == 2 ? " (cuBLAS: median over the finalists, each run beside it)" : " (brief timing only)",
               w->clock_mhz, w->device);
        printf("  rerun: %s\n", w->args);
        if (t->o->emit_best) {
            char *path = emit_path(t, nshapes);
            char *name = xasprintf("%s_tuned", t->sp.base.name);
            if (winner_write(w, name, t->sp.base.path, path, err))
                rc = -1;
            else
                printf("  wrote %s\n", path);
            free(name);
            free(path);
        }
        if (t->o->wisdom && rc == 0 && winner_record(w, &t->sp.base, t->o->wisdom, vs, &t->disp.c.lay, err))
            rc = -1;
    }
    free(ranked);
    free(rows);
    return rc;
}

/* ---- per shape --------------------------------------------------------------------------------- */

static void free_shape(tuner_t *t)
{
    for (size_t i = 0; i < t->ntp; i++) {
        tpoint *p = &t->tp[i];
        free(p->key);
        setup_sets_free(p->sets, p->nsets);
        for (int s = 0; s < 3; s++)
            if (p->has[s])
                result_row_free(&p->r[s]);
        if (p->sch.job.k.plan.source || p->sch.compiled)
            build_job_free(&p->sch.job);
        json_decref(p->sch.reply);
    }
    free(t->tp);
    free(t->by_index);
    space_points_free(t->pts, t->npts);
    space_counts_free(&t->counts);
    t->tp = NULL;
    t->by_index = NULL;
    t->pts = NULL;
    t->ntp = t->npts = 0;
}

static bool in_shard(const opts_t *o, uint64_t i) { return o->shard_n == 0 || i % (uint64_t)o->shard_n == (uint64_t)o->shard_i; }

/* Enumerate the space for t->shape and keep this shard's feasible points. */
static int prepare_shape(tuner_t *t, err_t *err)
{
    space_device dev = {t->su.arch, t->su.smem_limit};
    if (space_enumerate(&t->sp, &dev, &t->shape, 1, MAX_POINTS, &t->pts, &t->npts, &t->counts, err))
        return -1;
    t->tp = xcalloc(t->counts.feasible ? t->counts.feasible : 1, sizeof *t->tp);
    t->by_index = xcalloc(t->npts ? t->npts : 1, sizeof *t->by_index);
    uint64_t fidx = 0;
    for (size_t i = 0; i < t->npts; i++) {
        if (t->pts[i].pruned)
            continue;
        if (in_shard(t->o, fidx)) {
            tpoint *p = &t->tp[t->ntp++];
            p->sp = &t->pts[i];
            p->fidx = fidx;
            p->key = point_key(t, p->sp->values);
            p->sets = xcalloc(t->sp.ndims + 1, sizeof *p->sets);
            for (size_t d = 0; d < t->sp.ndims; d++)
                p->sets[p->nsets++] = xasprintf("%s=%lld", t->sp.dims[d].name,
                                                (long long)p->sp->values[t->sp.dims[d].param]);
            t->by_index[i] = p;
        }
        fidx++;
    }
    return 0;
}

static void dry_run(tuner_t *t, size_t nshapes)
{
    const opts_t *o = t->o;
    if (o->format == FORMAT_JSONL) {
        for (size_t i = 0; i < t->ntp; i++) {
            const tpoint *p = &t->tp[i];
            json_t *cfg = json_object();
            for (size_t k = 0; k < t->sp.base.tpl.nparams; k++)
                json_object_set_new(cfg, t->sp.base.tpl.params[k].name, json_integer(p->sp->values[k]));
            json_t *line = json_pack("{s:I, s:s, s:o}", "point", (json_int_t)p->fidx, "key", p->key, "configuration", cfg);
            if (nshapes > 1)
                json_object_set_new(line, "shape", json_pack("[I,I,I]", (json_int_t)t->shape.m, (json_int_t)t->shape.n,
                                                             (json_int_t)t->shape.k));
            char *s = json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER);
            printf("%s\n", s);
            free(s);
            json_decref(line);
        }
        return;
    }
    printf("shape %lldx%lldx%lld, target %s\n", (long long)t->shape.m, (long long)t->shape.n, (long long)t->shape.k,
           arch_name(t->su.arch, (char[16]){0}, 16));
    space_print_counts(stdout, &t->sp, &t->counts);
    if (o->shard_n)
        printf("  shard %d/%d: %zu of the %llu feasible points\n", o->shard_i, o->shard_n, t->ntp,
               (unsigned long long)t->counts.feasible);
    const char *strategy = o->strategy ? o->strategy : o->budget ? "random" : "exhaustive";
    size_t n = o->budget > 0 && (size_t)o->budget < t->ntp ? (size_t)o->budget : t->ntp;
    printf("  %s search: %zu points would be compiled, verified and timed (3 runs), then the best %d re-timed (%d runs)\n",
           strategy, n, o->top < (int)n ? o->top : (int)n, o->runs);
}

/* Take what the log already holds for this shape's points; log the pruned points it lacks. */
static void resume_shape(tuner_t *t)
{
    if (!t->have_log)
        return;
    for (size_t i = 0; i < t->ntp; i++) {
        tpoint *p = &t->tp[i];
        for (int s = 0; s <= 2; s++) {
            const result_row *r = tunelog_lookup(&t->log, p->key, s);
            if (r) {
                int slot = s == 0 ? 1 : s;
                if (p->has[slot])
                    result_row_free(&p->r[slot]);
                result_row_copy(&p->r[slot], r);
                p->has[slot] = true;
            }
        }
        if (p->has[2])
            carry_class(p, &p->r[2]);
    }
    int64_t *vals = xmalloc(t->sp.base.tpl.nparams * sizeof *vals);
    for (size_t i = 0; i < t->npts; i++) {
        const space_point *sp = &t->pts[i];
        if (!sp->pruned || !in_shard(t->o, sp->index) || space_values(&t->sp, sp->index, vals))
            continue;
        char *key = point_key(t, vals);
        if (!tunelog_lookup(&t->log, key, -1)) {
            result_row r;
            row_base(t, vals, key, 0, &r);
            free(r.status);
            r.status = xstrdup("pruned");
            free(r.reason);
            r.reason = xstrdup(sp->reason ? sp->reason : "removed before compiling");
            append(t, &r);
            result_row_free(&r);
        }
        free(key);
    }
    free(vals);
}

static int tune_shape(tuner_t *t, size_t nshapes, err_t *err)
{
    if (prepare_shape(t, err))
        return -1;
    if (t->o->dry_run) {
        dry_run(t, nshapes);
        return 0;
    }
    resume_shape(t);
    t->planned = t->done = t->compiled = t->nvrtc = t->cached = t->timed = t->failed = t->finalists = t->wrong = 0;
    t->best_tflops = t->best_pct = 0;
    t->t0 = now_ms();
    size_t before = count_evaluated(t);
    if (stage_one(t, err) || stage_two(t, err)) {
        progress_clear(&t->prog);
        return -1;
    }
    progress_clear(&t->prog);
    double s = (now_ms() - t->t0) * 1e-3;
    size_t fresh = count_evaluated(t) - before;
    printf("tune %lldx%lldx%lld: %llu points in the space, %llu feasible, %zu in this part; %zu evaluated now (%zu were in the log): %zu verified and timed, %zu failed, %zu finalists re-timed; compiled %zu (%zu NVRTC compiles, %zu from the cache; the workers compiled %lu); %.1f s, %.0f points/min\n",
           (long long)t->shape.m, (long long)t->shape.n, (long long)t->shape.k, (unsigned long long)t->counts.total,
           (unsigned long long)t->counts.feasible, t->ntp, fresh, before, t->timed, t->failed, t->finalists, t->compiled,
           t->nvrtc, t->cached, t->disp.nvrtc, s, s > 0 ? 60.0 * fresh / s : 0);
    int rc = report(t, nshapes, err);
    if (rc >= 0 && t->wrong) {
        /* A kernel that computes wrong results is a bug to see, whatever the winner: exit 1. */
        fprintf(stderr, "engine: %zu point%s at %lldx%lldx%lld computed wrong results (status FAIL in the log)\n",
                t->wrong, t->wrong == 1 ? "" : "s", (long long)t->shape.m, (long long)t->shape.n, (long long)t->shape.k);
        rc = exit_worst(rc, EXIT_VERIFY);
    }
    return rc;
}

/* ---- entry points ------------------------------------------------------------------------------ */

static int pick_devices(tuner_t *t, err_t *err)
{
    const opts_t *o = t->o;
    if (o->all_devices) {
        int n = 0;
        if (gpu_count(&n, err))
            return -1;
        if (n == 0)
            return err_set(err, ERR_SYSTEM, "--devices", 0, 0, "this machine has no GPU");
        t->ndevices = (size_t)n;
        t->devices = xcalloc((size_t)n, sizeof *t->devices);
        for (int i = 0; i < n; i++)
            t->devices[i] = i;
    } else {
        t->ndevices = o->ndevices ? o->ndevices : 1;
        t->devices = xcalloc(t->ndevices, sizeof *t->devices);
        for (size_t i = 0; i < t->ndevices; i++)
            t->devices[i] = o->ndevices ? o->devices[i] : 0;
    }
    /* One target for all: the GPUs must share an architecture. */
    for (size_t i = 1; i < t->ndevices && t->su.have_gpu && !o->dry_run; i++) {
        gpu_t g;
        if (gpu_probe(&g, t->devices[i], err))
            return -1;
        if (g.sm != t->su.gpu.sm)
            return err_set(err, ERR_INPUT, "--devices", 0, 0, "GPU %d is sm_%d but GPU %d is sm_%d: tune GPUs of one architecture at a time",
                           t->devices[i], g.sm, t->devices[0], t->su.gpu.sm);
    }
    return 0;
}

int tune_main(const opts_t *o)
{
    tuner_t t;
    memset(&t, 0, sizeof t);
    t.o = o;
    progress_init(&t.prog);
    err_t err;
    err_clear(&err);
    int rc = EXIT_OK;
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    dispatch_stop = 0;
    int first = o->ndevices ? o->devices[0] : 0;
    /* Everything that can be refused is checked before a GPU is touched or anything compiled. */
    if (setup_target(&t.su, o, first, !o->dry_run, &err) ||
        space_load(&t.sp, o->args[0], o->set_text, o->nsets, o->dtype, t.su.arch, t.su.arch_guessed, &err))
        goto fail;
    t.su.arch = t.sp.arch; /* the base config's target: sm_90a for an arch-specific template without --arch */
    if (o->wisdom && winner_check_class(&t.sp.base, &err))
        goto fail;
    if (pick_devices(&t, &err))
        goto fail;
    shape_t shapes[SHAPE_MAX_LIST];
    size_t nshapes = 0;
    if (o->nshapes) {
        memcpy(shapes, o->shapes, o->nshapes * sizeof *shapes);
        nshapes = o->nshapes;
    } else if (!o->shape_given && t.sp.nshapes) {
        memcpy(shapes, t.sp.shapes, t.sp.nshapes * sizeof *shapes);
        nshapes = t.sp.nshapes;
    } else {
        shapes[nshapes++] = o->shape;
    }
    for (size_t i = 0; i < nshapes; i++)
        if (cli_check_shape(&shapes[i])) {
            rc = EXIT_INPUT;
            goto out;
        }
    if (o->log && !o->dry_run) {
        if (tunelog_open(&t.log, o->log, o->resume, &err))
            goto fail;
        t.have_log = true;
        if (t.log.truncated_tail)
            fprintf(stderr, "engine: %s: the last line was cut off by an interrupted write; it was removed and that point will run again\n",
                    o->log);
    }
    if (!o->dry_run) {
        if (setup_cache(&t.su, o, true, &err) || setup_pool(&t.su, o, &err))
            goto fail;
        jitlog_init(true);
        worker_conf wc = {worker_default_exe(), t.su.cache.dir, false, 600};
        dispatch_conf sc = {.alpha = o->alpha, .beta = o->beta, .seed = o->seed, .arch = t.su.arch,
                         .smem_limit = t.su.smem_limit, .dtype = dtype_name(t.sp.base.dtype), .path = t.sp.base.path,
                         .brief = {1, 3, 0}, .full = {o->warmup, o->runs, o->iters}, .timeout_s = o->timeout_s,
                         .max_spill = o->max_spill, .min_occupancy = o->min_occupancy, .on_compiled = on_compiled, .on_done = on_done,
                         .on_tick = on_tick, .ctx = &t};
        dispatch_init(&t.disp, &sc, &t.su.pool, &wc, t.devices, t.ndevices);
        t.have_disp = true;
    }
    for (size_t i = 0; i < nshapes && rc == EXIT_OK; i++) {
        t.shape = shapes[i];
        t.disp.c.M = shapes[i].m;
        t.disp.c.N = shapes[i].n;
        t.disp.c.K = shapes[i].k;
        if (cli_layout(o, &shapes[i], &t.disp.c.lay, &err)) { /* checked when parsed: not expected here */
            rc = EXIT_INPUT;
            goto fail;
        }
        int src = tune_shape(&t, nshapes, &err);
        free_shape(&t);
        if (src < 0)
            goto fail;
        rc = exit_worst(rc, src);
    }
    goto out;
fail:
    progress_clear(&t.prog);
    if (err.code == 130) {
        fprintf(stderr, "engine: interrupted; %s\n",
                t.have_log ? "every finished point is in the log: run the same command with --resume to go on"
                           : "nothing was logged (use --log FILE to keep results)");
        rc = 130;
    } else {
        err_print(stderr, &err);
        rc = err.code ? err.code : EXIT_SYSTEM;
    }
out:
    free_shape(&t);
    if (t.have_disp)
        dispatch_free(&t.disp);
    if (t.have_log)
        tunelog_close(&t.log);
    if (t.sp.base.name || t.sp.ndims)
        space_free(&t.sp);
    free(t.devices);
    setup_free(&t.su);
    return rc;
}
