/* warm.c — see warm.h. */
#define _GNU_SOURCE
#include "warm.h"

#include "kernel.h"
#include "sha256.h"
#include "util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const config_t *cfg;
    int64_t M, N, K;
    layout_t lay;
    layout_align al;
    char *key; /* label, shape, op, batch, class: duplicates across picks share it */
    char *src; /* the kernel's: arch and pasted source, hashed (entries of one config at shapes that
                * plan alike are one kernel); the key where it does not plan (the build says why) */
} warm_task;

typedef struct {
    jit_t *jit;
    warm_task *tasks;
    size_t ntasks, next;
    int64_t smem_limit;
    warm_progress_fn cb;
    void *user;
    warm_stats *st;
    err_t *first;
    double t0;
    pthread_mutex_t lock;
} warm_work;

static int by_key(const void *a, const void *b)
{
    return strcmp(((const warm_task *)a)->key, ((const warm_task *)b)->key);
}

static int by_src(const void *a, const void *b)
{
    int c = strcmp(((const warm_task *)a)->src, ((const warm_task *)b)->src);
    return c ? c : by_key(a, b);
}

/* NULL when the host has no memory for the key (a plan that fails for memory falls back to the
 * entry's key like any plan that fails: its build says why). */
static char *source_key(const warm_task *t, int64_t smem_limit)
{
    plan_t plan;
    memset(&plan, 0, sizeof plan);
    err_t err;
    err_clear(&err);
    const config_t *c = t->cfg;
    plan_req r = config_plan_req(c, &(plan_target){.arch = c->arch,
                                                   .smem_limit = smem_limit,
                                                   .M = t->M,
                                                   .N = t->N,
                                                   .K = t->K,
                                                   .lay = &t->lay,
                                                   .align = &t->al});
    if (template_plan(&r, &plan, &err) || !plan.source) {
        plan_free(&plan);
        return try_strdup(t->key);
    }
    sha256_ctx h;
    sha256_init(&h);
    char arch[32];
    snprintf(arch, sizeof arch, "%d", c->arch);
    sha256_update(&h, arch, strlen(arch) + 1);
    sha256_update(&h, plan.source, strlen(plan.source));
    plan_free(&plan);
    uint8_t d[32];
    sha256_final(&h, d);
    char *hex = try_malloc(65);
    if (!hex)
        return NULL;
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    return hex;
}

static void *worker(void *arg)
{
    warm_work *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->lock);
        size_t i = w->next++;
        pthread_mutex_unlock(&w->lock);
        if (i >= w->ntasks)
            return NULL;
        const warm_task *t = &w->tasks[i];
        jit_origin origin = JIT_MEMORY;
        err_t err;
        err_clear(&err);
        /* The config's own target: sm_90a for an arch-specific template on sm_90 (config_load_guess). */
        plan_target to = {.arch = t->cfg->arch,
                          .smem_limit = w->smem_limit,
                          .M = t->M,
                          .N = t->N,
                          .K = t->K,
                          .lay = &t->lay,
                          .align = &t->al};
        int rc = kernel_prepare(w->jit, t->cfg, &to, &origin, &err);
        pthread_mutex_lock(&w->lock);
        w->st->done++;
        if (rc) {
            w->st->failed++;
            if (!err_isset(w->first))
                *w->first = err;
        } else if (origin == JIT_COMPILED) {
            w->st->compiled++;
        } else {
            w->st->cached++;
        }
        w->st->ms = now_ms() - w->t0;
        if (w->cb)
            w->cb(w->user, w->st, t->key);
        pthread_mutex_unlock(&w->lock);
    }
}

/* The tasks and their names, freed. */
static void free_tasks(warm_work *w)
{
    for (size_t i = 0; i < w->ntasks; i++) {
        free(w->tasks[i].key);
        free(w->tasks[i].src);
    }
    free(w->tasks);
    w->tasks = NULL;
    w->ntasks = 0;
}

/* No host memory for what: the tasks so far freed, nothing prepared (no thread has started). */
static int no_memory(warm_work *w, const char *what)
{
    free_tasks(w);
    err_set(w->first, ERR_ALLOC, "warm", 0, 0, "no host memory for %s", what);
    return -2;
}

int warm_run(jit_t *jit, pick_t *const *picks, size_t npicks, int64_t smem_limit, int jobs, warm_progress_fn cb,
             void *user, warm_stats *st, err_t *first)
{
    memset(st, 0, sizeof *st);
    warm_work w = {.jit = jit, .smem_limit = smem_limit, .cb = cb, .user = user, .st = st, .first = first, .t0 = now_ms()};
    for (size_t p = 0; p < npicks; p++) {
        const select_t *sel = &picks[p]->sel;
        for (size_t c = 0; c < sel->ncands; c++) {
            const select_cand *cd = &sel->cands[c];
            if (!cd->loaded)
                continue;
            const wisdom_entry *e = cd->entry;
            int64_t batch = wisdom_batch(e);
            warm_task t = {.cfg = &cd->cfg, .M = e->shape.m, .N = e->shape.n, .K = e->shape.k, .al = cd->align};
            layout_packed(&t.lay, e->op >> 1, e->op & 1, t.M, t.N, t.K, batch);
            t.key = try_asprintf("%s %lldx%lldx%lld %s batch %lld align %d,%d,%d", cd->label, (long long)t.M,
                              (long long)t.N, (long long)t.K, wisdom_op_name(e->op), (long long)batch, t.al.a, t.al.b,
                              t.al.c);
            if (!t.key)
                return no_memory(&w, "a kernel's label");
            warm_task *grown = try_realloc(w.tasks, (w.ntasks + 1) * sizeof *w.tasks);
            if (!grown) {
                free(t.key);
                return no_memory(&w, "the list of kernels");
            }
            w.tasks = grown;
            w.tasks[w.ntasks++] = t;
        }
    }
    if (w.ntasks)
        qsort(w.tasks, w.ntasks, sizeof *w.tasks, by_key);
    size_t n = 0;
    for (size_t i = 0; i < w.ntasks; i++) {
        if (n && strcmp(w.tasks[n - 1].key, w.tasks[i].key) == 0) {
            free(w.tasks[i].key);
            continue;
        }
        w.tasks[n++] = w.tasks[i];
    }
    w.ntasks = n;
    /* Entries that plan to the same source are one kernel: compiled once, not twice at once. */
    for (size_t i = 0; i < w.ntasks; i++)
        if (!(w.tasks[i].src = source_key(&w.tasks[i], smem_limit)))
            return no_memory(&w, "a kernel's source key"); /* the ones after it are NULL: free(NULL) */
    if (w.ntasks)
        qsort(w.tasks, w.ntasks, sizeof *w.tasks, by_src);
    n = 0;
    for (size_t i = 0; i < w.ntasks; i++) {
        if (n && strcmp(w.tasks[n - 1].src, w.tasks[i].src) == 0) {
            free(w.tasks[i].key);
            free(w.tasks[i].src);
            continue;
        }
        w.tasks[n++] = w.tasks[i];
    }
    w.ntasks = n;
    size_t nth = jobs < 1 ? 1 : (size_t)jobs;
    if (nth > n)
        nth = n ? n : 1;
    /* Before any thread starts: without it nothing has run, and nothing is left running. */
    pthread_t *th = try_calloc(nth, sizeof *th);
    if (!th)
        return no_memory(&w, "the threads");
    st->total = n;
    pthread_mutex_init(&w.lock, NULL);
    size_t started = 0;
    for (size_t i = 0; i < nth; i++)
        if (pthread_create(&th[i], NULL, worker, &w) == 0)
            started++;
    if (!started)
        worker(&w);
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    free(th);
    pthread_mutex_destroy(&w.lock);
    free_tasks(&w);
    st->ms = now_ms() - w.t0;
    return st->failed ? -1 : 0;
}
