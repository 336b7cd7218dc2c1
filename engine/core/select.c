/* select.c — see select.h. */
#include "select.h"

#include "accuracy.h"
#include "arch.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Registers per thread assumed where an entry has no measured occupancy: most shipped tiles use
 * 100 to 255; 128 gives their usual one to four blocks per SM. */
#define SELECT_REGS_GUESS 128

void select_gpu_init(select_gpu *g, int arch, int sms, double clock_hz)
{
    const arch_info *ai = arch_lookup(arch_sm(arch));
    g->arch = arch;
    g->arch_guessed = false;
    g->sms = sms > 0 ? sms : 1;
    g->clock_hz = clock_hz > 0 ? clock_hz : 1.5e9;
    g->dram_bps = 3.0e12;
    g->smem_limit = ai->smem_optin;
}

/* FLOP/s of one SM on the unit the candidate's template uses. */
static double peak_sm(const select_t *s, const config_t *c)
{
    const arch_info *ai = arch_lookup(arch_sm(s->gpu.arch));
    int lanes = dtype_half(c->dtype) ? arch_half_tc_lanes(ai)
                : c->dtype == DTYPE_F32 ? (c->tpl.tensor && ai->tf32_tc_lanes > 0 ? ai->tf32_tc_lanes : ai->fp32_lanes)
                : c->tpl.tensor && ai->fp64_tc_lanes > 0 ? ai->fp64_tc_lanes
                                                        : ai->fp64_lanes;
    return 2.0 * lanes * s->gpu.clock_hz;
}

static int64_t rup64(int64_t a, int64_t m) { return (a + m - 1) / m * m; }

double select_extra_time(const select_gpu *g, const plan_t *p)
{
    double t = 0, es = (double)dtype_size(p->dtype);
    for (size_t i = 0; i < p->nlaunches; i++) {
        if ((int)i == p->main_launch)
            continue;
        const plan_launch *x = &p->launches[i];
        double threads = (double)(x->grid[0] * x->grid[1] * x->grid[2]) * (double)(x->block[0] * x->block[1] * x->block[2]);
        double elems = x->traffic >= 0 ? (double)x->traffic : 2.0 * threads;
        t += SELECT_T_LAUNCH + es * elems / g->dram_bps;
    }
    return t;
}

/* The model's time with efficiency eff, from a plan at the shape (select.h). */
static double model_time(const select_t *s, const select_cand *c, const plan_t *p, double eff)
{
    const plan_launch *l = &p->launches[p->main_launch];
    /* Blocks that get work: a grid rounded up to whole supertiles launches blocks that exit at once.
     * A persistent launch's grid[0] is its work items, exactly (kernel.h): with split-K more than
     * the tiles, each a tile's share of K. Clamped to the tiles, a split tile was modelled as one
     * whole-K item, so an entry measured where few tiles split well had its efficiency fitted up
     * to 1.6x too high, and won larger shapes it ran 2-3x slower at (session 18, hws SPLITK 4:
     * 2855x1024x13377 0.43 ms chosen over 0.18). */
    double tiles = (double)((p->M + p->tile[0] - 1) / p->tile[0]) * (double)((p->N + p->tile[1] - 1) / p->tile[1]);
    double items = (double)(l->grid[0] * l->grid[1]);
    double blocks = (l->persistent ? items : fmin(items, tiles)) * (double)l->grid[2];
    double warps = (double)((l->block[0] * l->block[1] * l->block[2] + 31) / 32);
    double sms = s->gpu.sms, occ = c->occ;
    /* A block taking turns (p->turns tiles at once, each at that share of its rate) takes that many
     * items a round, so a round costs that many items' work: where the items are fewer than the
     * blocks could take, a whole tile runs at a fraction of the block's rate (hws's PINGPONG at
     * 128x128x128 ran 5.7 us where its shared tiles ran 4.2; session 18). */
    double turns = (double)p->turns;
    double n = ceil(blocks / (sms * turns));
    double busy = fmin(1.0, fmin(n, occ) * warps / SELECT_WSAT);
    double work = n * turns * 2.0 * (double)rup64(p->M, p->tile[0]) * (double)rup64(p->N, p->tile[1]) *
                  (double)rup64(p->K, p->tile[2]) * (double)p->lay.batch / blocks;
    double t = work / (peak_sm(s, &c->cfg) * eff * busy) + ceil(n / occ) * SELECT_T_ROUND;
    double es = (double)dtype_size(p->dtype);
    t += select_extra_time(&s->gpu, p);
    t += (double)p->atomics * SELECT_T_ATOMIC / sms;
    t += (double)p->M * (double)p->N * (double)p->lay.batch * es / s->gpu.dram_bps;
    return t * (double)p->slow_pct / 100.0;
}

/* A leading dimension of alignment class al for rows of length len whose packed class is pk: the
 * packed one where the classes agree; else the next that has class al (len + al where al < pk, the
 * next multiple of al where al > pk; classes are powers of two, pk divides len). */
static int64_t ld_of_class(int64_t len, int al, int pk)
{
    if (al == pk)
        return len;
    return al < pk ? len + al : (len + al - 1) / al * al;
}

/* The layout a candidate is planned in at sh: the packed one of op and batch, with the leading
 * dimensions (and the batch strides that follow them) of the operands whose class al gives
 * otherwise moved to that class. So a template that takes packed rows only refuses a padded
 * problem here, as it will at the call, and the plan's vector switches are those of the class.
 * al NULL: packed. */
static void class_layout(layout_t *lay, int op, const shape_t *sh, int64_t batch, dtype_t dtype, const layout_align *al)
{
    layout_packed(lay, op / 2, op % 2, sh->m, sh->n, sh->k, batch > 1 ? batch : 1);
    layout_align pk;
    layout_align_ld(lay, dtype_size(dtype), &pk);
    if (!al || layout_align_eq(al, &pk))
        return;
    lay->lda = ld_of_class(layout_a_cols(lay, sh->m, sh->k), al->a, pk.a);
    lay->ldb = ld_of_class(layout_b_cols(lay, sh->n, sh->k), al->b, pk.b);
    lay->ldc = ld_of_class(sh->n > 0 ? sh->n : 1, al->c, pk.c);
    if (lay->batch > 1) {
        lay->sa = layout_a_rows(lay, sh->m, sh->k) * lay->lda;
        lay->sb = layout_b_rows(lay, sh->n, sh->k) * lay->ldb;
        lay->sc = sh->m * lay->ldc;
    }
}

/* The candidate's plan at sh in the problem's layout `given`, or where that is not known (NULL) in
 * the layout of op, batch products and alignment class al (NULL: packed). */
static int plan_in(const select_t *s, const select_cand *c, const shape_t *sh, int op, int64_t batch,
                   const layout_align *al, const layout_t *given, plan_t *p)
{
    err_t err;
    err_clear(&err);
    layout_t lay;
    if (given)
        lay = *given;
    else
        class_layout(&lay, op, sh, batch, c->cfg.dtype, al);
    plan_req r = config_plan_req(
        &c->cfg,
        &(plan_target){
            .arch = c->cfg.arch, .smem_limit = s->gpu.smem_limit, .M = sh->m, .N = sh->n, .K = sh->k, .lay = &lay});
    return template_plan_geometry(&r, p, &err);
}

static int plan_at(const select_t *s, const select_cand *c, const shape_t *sh, int op, int64_t batch,
                   const layout_align *al, plan_t *p)
{
    return plan_in(s, c, sh, op, batch, al, NULL, p);
}

/* Fit eff so that the model gives the entry's own time at its own shape (bisection in log space:
 * the time falls as eff grows). Capped at 1.5: a kernel the model cannot explain keeps that. */
static double fit_eff(const select_t *s, const select_cand *c, const plan_t *p)
{
    if (c->t_entry <= 0)
        return SELECT_EFF_UNKNOWN;
    double lo = 1e-4, hi = 1.5;
    if (model_time(s, c, p, hi) >= c->t_entry)
        return hi;
    for (int i = 0; i < 60; i++) {
        double mid = sqrt(lo * hi);
        if (model_time(s, c, p, mid) > c->t_entry)
            lo = mid;
        else
            hi = mid;
    }
    return sqrt(lo * hi);
}

/* log M, N, K and the batch, as select_distance takes them (a side of 0 counts as 1). */
static void shape_logs(const shape_t *sh, int64_t batch, double *l)
{
    l[0] = log((double)(sh->m > 0 ? sh->m : 1));
    l[1] = log((double)(sh->n > 0 ? sh->n : 1));
    l[2] = log((double)(sh->k > 0 ? sh->k : 1));
    l[3] = log((double)(batch > 1 ? batch : 1));
}

/* Whether candidates a and b run one config with the same overrides. */
static bool same_set(const select_cand *a, const select_cand *b)
{
    if (a->entry->nsets != b->entry->nsets || strcmp(a->path, b->path) != 0)
        return false;
    for (size_t k = 0; k < a->entry->nsets; k++)
        if (strcmp(a->entry->sets[k].key, b->entry->sets[k].key) != 0 ||
            a->entry->sets[k].value != b->entry->sets[k].value)
            return false;
    return true;
}

/* An earlier loaded candidate with the same config file and overrides as candidate c, or -1. The
 * entries of a wisdom share a few dozen configs among hundreds of shapes, and loading one (its
 * template read and checked) costs far more than the plan and fit each entry needs. */
static long same_config(const select_t *s, size_t upto, const select_cand *c)
{
    for (size_t j = 0; j < upto; j++)
        if (s->cands[j].loaded && same_set(&s->cands[j], c))
            return (long)j;
    return -1;
}

/* An entry never measured (tflops 0) has no efficiency of its own. Where the same config with the
 * same overrides was measured at other candidates, it takes theirs (their geometric mean) instead
 * of SELECT_EFF_UNKNOWN: default.json's bf16 h04_tuned (not measured) joined sm_90's few bf16
 * entries at 0.5 while sm_90.json's own h04_tuned entry had it at 0.27, and won shapes where it
 * then ran 0.18-0.43x cuBLAS (an H200, seed 16180339; hws ran 0.6-1.4x at neighbouring shapes). */
static void lend_eff(select_t *s)
{
    for (size_t i = 0; i < s->ncands; i++) {
        select_cand *c = &s->cands[i];
        if (!c->loaded || c->t_entry > 0)
            continue;
        double logs = 0;
        int n = 0;
        for (size_t j = 0; j < s->ncands; j++) {
            const select_cand *x = &s->cands[j];
            if (x->loaded && x->t_entry > 0 && same_set(c, x)) {
                logs += log(x->eff);
                n++;
            }
        }
        if (n)
            c->eff = exp(logs / n);
    }
}

int select_init(select_t *s, const select_gpu *g, dtype_t dtype, const wisdom_entry *const *entries,
                const wisdom_file *const *files, char **paths, size_t n, err_t *out_err)
{
    memset(s, 0, sizeof *s);
    s->gpu = *g;
    s->dtype = dtype;
    s->exact_op = -1;
    s->cands = try_calloc(n ? n : 1, sizeof *s->cands);
    if (!s->cands) {
        for (size_t i = 0; i < n; i++)
            free(paths[i]);
        return err_set(out_err, ERR_ALLOC, n ? files[0]->path : "", 0, 0, "no host memory for the wisdom candidates"), -1;
    }
    /* Every path taken over at once: select_free frees them whatever is left undone. */
    s->ncands = n;
    for (size_t i = 0; i < n; i++) {
        s->cands[i].entry = entries[i];
        s->cands[i].file = files[i];
        s->cands[i].path = paths[i];
    }
    for (size_t i = 0; i < n; i++) {
        select_cand *c = &s->cands[i];
        const wisdom_entry *e = entries[i];
        wisdom_align(e, &c->align);
        wisdom_packed_align(e, &c->align_pk);
        c->align_packed = layout_align_eq(&c->align, &c->align_pk);
        err_t err;
        err_clear(&err);
        const char *dt = dtype_name(dtype);
        long twin = same_config(s, i, c);
        if (twin >= 0) {
            c->cfg = s->cands[twin].cfg;
            c->cfg_shared = true;
        } else if (config_load_guess(c->path, e->sets, e->nsets, dt, g->arch, g->arch_guessed, &c->cfg, &err)) {
            /* A config that did not load for lack of memory is no verdict on the entry: leaving it
             * out would change the pick for good. */
            if (err.cause == ERR_ALLOC) {
                if (!err_isset(out_err))
                    *out_err = err;
                return -1;
            }
            err_format(&err, c->err_text, sizeof c->err_text);
            if (!(c->label = try_strdup(c->path)))
                return err_set(out_err, ERR_ALLOC, c->file->path, e->line, 0, "no host memory for a candidate's label"), -1;
            continue;
        }
        if (!(c->label = try_strdup(c->cfg.label))) {
            if (!c->cfg_shared)
                config_free(&c->cfg);
            return err_set(out_err, ERR_ALLOC, c->file->path, e->line, 0, "no host memory for a candidate's label"), -1;
        }
        /* --auto runs an entry of a dtype as that dtype's kernel: one whose config is held to another
         * accuracy class (a 1xTF32 config, class tf32, in an f32 entry) is left out, with the rule. */
        acc_class held = acc_class_of(c->cfg.accuracy, c->cfg.dtype), own = acc_class_of(ACC_NATIVE, c->cfg.dtype);
        if (held != own) {
            snprintf(c->err_text, sizeof c->err_text,
                     "%s is held to accuracy class %s, and --auto runs %s entries as %s kernels", c->label,
                     acc_class_name(held), dtype_name(c->cfg.dtype), acc_class_name(own));
            if (!c->cfg_shared)
                config_free(&c->cfg);
            continue;
        }
        plan_t p;
        if (plan_at(s, c, &e->shape, e->op, wisdom_batch(e), &c->align, &p) || e->shape.k == 0) {
            snprintf(c->err_text, sizeof c->err_text, "%s does not plan at its own shape", c->label);
            if (!c->cfg_shared)
                config_free(&c->cfg);
            continue;
        }
        c->loaded = true;
        shape_logs(&e->shape, wisdom_batch(e), c->logs);
        const plan_launch *l = &p.launches[p.main_launch];
        int threads = (int)(l->block[0] * l->block[1] * l->block[2]);
        c->occ = e->occ;
        if (c->occ <= 0) {
            c->occ = arch_occupancy(arch_lookup(arch_sm(g->arch)), threads, SELECT_REGS_GUESS, (int)l->smem);
            c->occ = c->occ > 0 ? c->occ : 1;
            c->occ_estimated = true;
        }
        c->t_entry = e->tflops > 0 ? 2.0 * (double)e->shape.m * e->shape.n * e->shape.k * (double)wisdom_batch(e) /
                                         (e->tflops * 1e12)
                                   : 0;
        c->eff = fit_eff(s, c, &p);
        plan_free(&p);
    }
    lend_eff(s);
    return 0;
}

void select_free(select_t *s)
{
    for (size_t i = 0; i < s->ncands; i++) {
        if (s->cands[i].loaded && !s->cands[i].cfg_shared)
            config_free(&s->cands[i].cfg);
        free(s->cands[i].path);
        free(s->cands[i].label);
    }
    free(s->cands);
    memset(s, 0, sizeof *s);
}

double select_estimate(const select_t *s, size_t c, const shape_t *sh) { return select_estimate_batch(s, c, sh, 1); }

double select_estimate_batch(const select_t *s, size_t c, const shape_t *sh, int64_t batch)
{
    const select_cand *x = &s->cands[c];
    if (!x->loaded)
        return -1;
    plan_t p;
    if (plan_at(s, x, sh, s->op, batch, NULL, &p))
        return -1;
    double t = sh->k == 0 ? 0 : model_time(s, x, &p, x->eff);
    plan_free(&p);
    return t;
}

/* How much less a candidate is trusted: its distance and the operands of another alignment class
 * (select.h); an estimate times this is its score, and the nearest entries are the least of it. */
static double doubt(double dist, int align_off)
{
    return (1.0 + SELECT_DIST_PENALTY * dist) * (1.0 + SELECT_ALIGN_PENALTY * align_off);
}

double select_score(const select_weighed *w) { return w->t_est * doubt(w->dist, w->align_off); }

/* Whether one operand's classes count against a candidate: they differ, and not both are packed. */
static int off1(int e, int e_pk, int p, int p_pk) { return e != p && !(e == e_pk && p == p_pk); }

int select_align_operands(const select_cand *c, const layout_align *al, const layout_align *pk)
{
    return off1(c->align.a, c->align_pk.a, al->a, pk->a) + off1(c->align.b, c->align_pk.b, al->b, pk->b) +
           off1(c->align.c, c->align_pk.c, al->c, pk->c);
}

double select_distance(const wisdom_entry *e, const shape_t *sh, int64_t batch)
{
    double d = wisdom_distance(&e->shape, sh), db = log((double)wisdom_batch(e) / (double)(batch > 1 ? batch : 1));
    return sqrt(d * d + db * db);
}

int select_pick(const select_t *s, const shape_t *sh, select_result *r) { return select_pick_batch(s, sh, 1, r); }

int select_pick_batch(const select_t *s, const shape_t *sh, int64_t batch, select_result *r)
{
    return select_pick_align(s, sh, batch, NULL, r);
}

int select_pick_align(const select_t *s, const shape_t *sh, int64_t batch, const layout_align *al, select_result *r)
{
    return select_pick_in(s, sh, batch, al, NULL, r);
}

/* Whether candidate c's config plans in the problem's layout (always where that is not given). */
static bool runs_in(const select_t *s, const select_cand *c, const shape_t *sh, const layout_t *lay)
{
    plan_t p;
    if (!lay)
        return true;
    if (plan_in(s, c, sh, s->op, lay->batch, NULL, lay, &p))
        return false;
    plan_free(&p);
    return true;
}

int select_pick_in(const select_t *s, const shape_t *sh, int64_t batch, const layout_align *al, const layout_t *lay,
                   select_result *r)
{
    memset(r, 0, sizeof *r);
    r->batch = batch > 1 ? batch : 1;
    layout_t pk;
    layout_packed(&pk, s->op / 2, s->op % 2, sh->m, sh->n, sh->k, r->batch);
    layout_align_ld(&pk, dtype_size(s->dtype), &r->align_pk);
    r->align = al ? *al : r->align_pk;
    r->align_packed = layout_align_eq(&r->align, &r->align_pk);
    for (size_t i = 0; i < s->ncands; i++) {
        const shape_t *e = &s->cands[i].entry->shape;
        if (s->cands[i].loaded && e->m == sh->m && e->n == sh->n && e->k == sh->k &&
            (s->exact_op < 0 || s->cands[i].entry->op == s->exact_op) &&
            wisdom_batch(s->cands[i].entry) == r->batch && layout_align_eq(&s->cands[i].align, &r->align) &&
            runs_in(s, &s->cands[i], sh, lay)) {
            r->chosen = i;
            r->exact = true;
            return 0;
        }
    }
    /* The SELECT_K nearest entries whose config can run the problem, nearest first (ties: candidate
     * order). Those that cannot (a plan refused: a batch where a template splits K, a layout it does
     * not take) are passed over, so a problem whose nearest entries all refuse it still gets the
     * nearest that do. The distance is select_distance's, from logs taken once (hundreds of entries
     * a lookup); each distinct config is planned once (entries that share a config plan alike at a
     * shape, only their fitted efficiency and occupancy differ). */
    double ls[4];
    shape_logs(sh, r->batch, ls);
    /* Nearest by doubt (distance, and operands of another alignment class): with every class alike
     * that is the order of the distance. */
    double *dist = try_malloc((s->ncands ? s->ncands : 1) * sizeof *dist);
    double *key = try_malloc((s->ncands ? s->ncands : 1) * sizeof *key);
    if (!dist || !key) {
        free(dist);
        free(key);
        return SELECT_NOMEM;
    }
    for (size_t i = 0; i < s->ncands; i++) {
        const double *le = s->cands[i].logs;
        dist[i] = !s->cands[i].loaded ? INFINITY
                                      : sqrt((le[0] - ls[0]) * (le[0] - ls[0]) + (le[1] - ls[1]) * (le[1] - ls[1]) +
                                             (le[2] - ls[2]) * (le[2] - ls[2]) + (le[3] - ls[3]) * (le[3] - ls[3]));
        key[i] = !s->cands[i].loaded ? INFINITY
                                     : doubt(dist[i], select_align_operands(&s->cands[i], &r->align, &r->align_pk));
    }
    enum { PLANS = 16 };
    plan_t plans[PLANS];
    const int64_t *planned[PLANS];
    int plan_rc[PLANS];
    size_t np = 0;
    while (r->nw < SELECT_K) {
        size_t i = s->ncands;
        for (size_t x = 0; x < s->ncands; x++)
            if (key[x] < INFINITY && (i == s->ncands || key[x] < key[i]))
                i = x;
        if (i == s->ncands)
            break;
        double d = dist[i];
        key[i] = INFINITY;
        const select_cand *c = &s->cands[i];
        size_t k = 0;
        while (k < np && planned[k] != c->cfg.values)
            k++;
        plan_t once;
        plan_t *p = k < np ? &plans[k] : np < PLANS ? &plans[np] : &once;
        int rc = k < np ? plan_rc[k] : plan_in(s, c, sh, s->op, r->batch, &r->align, lay, p);
        if (k == np && np < PLANS) {
            planned[np] = c->cfg.values;
            plan_rc[np++] = rc;
        }
        double t = rc ? -1 : sh->k == 0 ? 0 : model_time(s, c, p, c->eff);
        if (p == &once && rc == 0)
            plan_free(&once);
        if (t >= 0)
            r->w[r->nw++] = (select_weighed){i, d, t, select_align_operands(c, &r->align, &r->align_pk)};
    }
    for (size_t k = 0; k < np; k++)
        if (plan_rc[k] == 0)
            plan_free(&plans[k]);
    free(dist);
    free(key);
    int best = -1;
    for (size_t j = 0; j < r->nw; j++) {
        if (r->w[j].t_est >= 0 && (best < 0 || select_score(&r->w[j]) < select_score(&r->w[best])))
            best = (int)j;
    }
    if (best < 0)
        return -1;
    r->chosen = r->w[best].cand;
    return 0;
}

/* " batch 512" for a batch of products, "" for one. */
static const char *batch_text(int64_t batch, char *buf, size_t len)
{
    buf[0] = '\0';
    if (batch > 1)
        snprintf(buf, len, " batch %lld", (long long)batch);
    return buf;
}

/* Whether any weighed candidate had operands of another alignment class. */
static bool off_any(const select_result *r)
{
    for (size_t j = 0; j < r->nw; j++)
        if (r->w[j].align_off)
            return true;
    return false;
}

char *select_explain(const select_t *s, const shape_t *sh, const select_result *r)
{
    char bt[32], ebt[32];
    strbuf sb;
    sb_try_init(&sb); /* failed: its additions are dropped and sb_steal gives NULL */
    const select_cand *ch = &s->cands[r->chosen];
    char pal[48] = "", al[32];
    if (!r->align_packed) /* the problem's class, where a leading dimension or a pointer set it */
        snprintf(pal, sizeof pal, " align %s", wisdom_align_text(&r->align, al, sizeof al));
    if (r->exact) {
        sb_addf(&sb, "  %s: wisdom holds this shape%s%s (%s:%d); no model needed\n", ch->label,
                batch_text(r->batch, bt, sizeof bt), pal, ch->file->path, ch->entry->line);
        return sb_steal(&sb);
    }
    sb_addf(&sb, "  the %zu nearest entries, each config's time estimated at %lldx%lldx%lld%s%s on %d SMs (select.h):\n",
            r->nw, (long long)sh->m, (long long)sh->n, (long long)sh->k, batch_text(r->batch, bt, sizeof bt), pal,
            s->gpu.sms);
    for (size_t j = 0; j < r->nw; j++) {
        const select_weighed *w = &r->w[j];
        const select_cand *c = &s->cands[w->cand];
        char shp[64], est[48];
        snprintf(shp, sizeof shp, "%lldx%lldx%lld%s", (long long)c->entry->shape.m, (long long)c->entry->shape.n,
                 (long long)c->entry->shape.k, batch_text(wisdom_batch(c->entry), ebt, sizeof ebt));
        if (w->t_est >= 0)
            snprintf(est, sizeof est, "%10.2f us", w->t_est * 1e6);
        else
            snprintf(est, sizeof est, "%13s", "cannot run");
        char off[64] = "";
        if (w->align_off) /* the entry's class, where it counts against it */
            snprintf(off, sizeof off, "  align %s (%d off)", wisdom_align_text(&c->align, al, sizeof al), w->align_off);
        sb_addf(&sb, "  %s %s  entry %-18s dist %.2f  eff %.2f  occ %d%s  %s%s\n", w->cand == r->chosen ? "*" : " ", est,
                shp, w->dist, c->eff, c->occ, c->occ_estimated ? "?" : " ", c->label, off);
    }
    double best = 0, next = 0;
    for (size_t j = 0; j < r->nw; j++) {
        if (r->w[j].cand == r->chosen)
            best = select_score(&r->w[j]);
    }
    for (size_t j = 0; j < r->nw; j++) {
        double t = select_score(&r->w[j]);
        if (r->w[j].cand != r->chosen && r->w[j].t_est >= 0 && (next == 0 || t < next))
            next = t;
    }
    char why[96] = "";
    if (off_any(r))
        snprintf(why, sizeof why, " x (1 + %.2f x operands of another alignment class)", SELECT_ALIGN_PENALTY);
    if (next > 0)
        sb_addf(&sb, "  chosen: %s, scoring %.2fx better than the next (estimate x (1 + %.2f x distance)%s)\n",
                ch->label, next / best, SELECT_DIST_PENALTY, why);
    else
        sb_addf(&sb, "  chosen: %s, the only candidate that runs the shape\n", ch->label);
    return sb_steal(&sb);
}

/* The steps select_neighbours takes: a param, and the factors (or, for STAGES, the offsets) tried. */
static const struct {
    const char *key;
    bool add;        /* offsets instead of factors */
    int64_t step[3]; /* multiply by step, or divide by -step; 0 ends the list */
} near_steps[] = {
    {"SPLITK", false, {-2, 2, 4}},
    {"BM", false, {-2, 2, 0}},
    {"BN", false, {-2, 2, 0}},
    {"BK", false, {-2, 2, 0}},
    {"STAGES", true, {-1, 1, 0}},
};

size_t select_neighbours(const select_t *s, size_t ci, const shape_t *sh, const layout_t *lay, select_variant *out,
                         size_t max, bool *nomem)
{
    *nomem = false;
    const select_cand *c = &s->cands[ci];
    if (!c->loaded)
        return 0;
    const template_t *t = &c->cfg.tpl;
    const arch_info *ai = arch_lookup(arch_sm(s->gpu.arch));
    layout_t pk;
    if (!lay) {
        layout_packed(&pk, s->op / 2, s->op % 2, sh->m, sh->n, sh->k, 1);
        lay = &pk;
    }
    /* The candidate's own estimated occupancy: a variant's measured one is unknown, so c's measured
     * occupancy is scaled by the ratio of the two estimates (a larger tile keeps fewer blocks). */
    plan_t base;
    err_t err;
    err_clear(&err);
    plan_req r = config_plan_req(
        &c->cfg,
        &(plan_target){
            .arch = c->cfg.arch, .smem_limit = s->gpu.smem_limit, .M = sh->m, .N = sh->n, .K = sh->k, .lay = lay});
    if (template_plan_geometry(&r, &base, &err))
        return 0;
    const plan_launch *bl = &base.launches[base.main_launch];
    int occ_base = arch_occupancy(ai, (int)(bl->block[0] * bl->block[1] * bl->block[2]), SELECT_REGS_GUESS, (int)bl->smem);
    plan_free(&base);
    int64_t *values = try_malloc((t->nparams ? t->nparams : 1) * sizeof *values);
    if (!values) {
        *nomem = true;
        return 0;
    }
    size_t n = 0;
    for (size_t d = 0; d < sizeof near_steps / sizeof near_steps[0]; d++) {
        int at = template_param_index(t, near_steps[d].key);
        if (at < 0)
            continue;
        const int64_t v = c->cfg.values[at];
        if (strcmp(near_steps[d].key, "SPLITK") == 0 && v < 1)
            continue; /* 0: the template chooses the split itself */
        for (int j = 0; j < 3 && near_steps[d].step[j]; j++) {
            const int64_t st = near_steps[d].step[j];
            int64_t nv = near_steps[d].add ? v + st : st > 0 ? v * st : (v % -st == 0 ? v / -st : 0);
            if (nv < 1 || nv == v)
                continue;
            select_variant x;
            memset(&x, 0, sizeof x);
            snprintf(x.key, sizeof x.key, "%s", near_steps[d].key);
            x.value = nv;
            memcpy(values, c->cfg.values, t->nparams * sizeof *values);
            values[at] = nv;
            int bad;
            char msg[256];
            bool ok = template_check(t, values, c->cfg.dtype, c->cfg.arch, &bad, msg, sizeof msg) == 0;
            /* A tile side alone often breaks the rules that tie it to the threads or the warp
             * tile: scale one of those with it. */
            const char *with = strcmp(x.key, "BM") == 0 ? "WM" : strcmp(x.key, "BN") == 0 ? "WN" : NULL;
            const char *mates[2] = {"THREADS", with};
            for (int m = 0; !ok && with && m < 2; m++) {
                int at2 = template_param_index(t, mates[m]);
                if (at2 < 0)
                    continue;
                int64_t v2 = c->cfg.values[at2];
                int64_t nv2 = st > 0 ? v2 * st : (v2 % -st == 0 ? v2 / -st : 0);
                if (nv2 < 1)
                    continue;
                memcpy(values, c->cfg.values, t->nparams * sizeof *values);
                values[at] = nv;
                values[at2] = nv2;
                ok = template_check(t, values, c->cfg.dtype, c->cfg.arch, &bad, msg, sizeof msg) == 0;
                if (ok) {
                    snprintf(x.key2, sizeof x.key2, "%s", mates[m]);
                    x.value2 = nv2;
                }
            }
            if (!ok)
                continue;
            plan_t p;
            err_clear(&err);
            r.values = values; /* the variant's */
            if (template_plan_geometry(&r, &p, &err))
                continue;
            const plan_launch *l = &p.launches[p.main_launch];
            int occ = arch_occupancy(ai, (int)(l->block[0] * l->block[1] * l->block[2]), SELECT_REGS_GUESS, (int)l->smem);
            select_cand v2 = *c;
            v2.occ = occ_base > 0 && occ > 0 ? (int)fmax(1.0, round((double)c->occ * occ / occ_base)) : c->occ;
            x.t_est = model_time(s, &v2, &p, c->eff);
            plan_free(&p);
            /* Kept sorted by estimate, the max fastest. */
            size_t k;
            if (n < max)
                k = n++;
            else if (max > 0 && x.t_est < out[max - 1].t_est)
                k = max - 1;
            else
                continue;
            while (k > 0 && out[k - 1].t_est > x.t_est) {
                out[k] = out[k - 1];
                k--;
            }
            out[k] = x;
        }
    }
    free(values);
    return n;
}

int select_tile_variant(const select_t *s, const select_result *r, const shape_t *sh, const layout_t *lay, double gain,
                        select_variant *out)
{
    if (r->exact)
        return 0;
    double t = -1;
    for (size_t j = 0; j < r->nw; j++)
        if (r->w[j].cand == r->chosen)
            t = r->w[j].t_est;
    if (t <= 0)
        return 0;
    select_variant v[16];
    bool nomem;
    size_t n = select_neighbours(s, r->chosen, sh, lay, v, 16, &nomem);
    if (nomem)
        return SELECT_NOMEM;
    const select_cand *c = &s->cands[r->chosen];
    for (size_t i = 0; i < n; i++) { /* fastest estimate first */
        if (strcmp(v[i].key, "BM") != 0 && strcmp(v[i].key, "BN") != 0)
            continue;
        int at = template_param_index(&c->cfg.tpl, v[i].key);
        if (at < 0 || v[i].value >= c->cfg.values[at] || v[i].t_est * gain > t)
            continue;
        /* Only where the shape pads the tile: a quarter of it or more beyond the side (M for BM, N
         * for BN). Elsewhere the estimate's gain would come from the occupancy it guesses, which
         * the measured entries do not bear out. */
        const int64_t side = v[i].key[1] == 'M' ? sh->m : sh->n, tile = c->cfg.values[at];
        const int64_t padded = (side + tile - 1) / tile * tile;
        if (4 * (padded - side) < padded)
            continue;
        *out = v[i];
        return 1;
    }
    return 0;
}

char *select_variant_text(const select_variant *v, char *buf, size_t len)
{
    int k = snprintf(buf, len, "%s=%lld", v->key, (long long)v->value);
    if (*v->key2 && k >= 0 && (size_t)k < len)
        snprintf(buf + k, len - (size_t)k, ",%s=%lld", v->key2, (long long)v->value2);
    return buf;
}

