/* apicall.c — see apicall.h. */
#define _GNU_SOURCE
#include "apicall.h"

#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The problem, the pointers' alignment class and the forced config's generation make the key. */
typedef struct {
    apiarg_problem p;
    layout_align al;
    unsigned gen;
} plan_key;

typedef enum {
    CALL_PENDING, /* its build is queued or running: calls run cuBLAS */
    CALL_BUILT,   /* built, not loaded yet: the next call that is not being captured loads it */
    CALL_READY,   /* loaded: calls run it */
    CALL_FAILED,  /* the build or the load failed: calls run cuBLAS (async) */
} call_state;

struct apicall_entry {
    plan_key key;
    uint64_t hash;
    call_state state;
    bool loading;         /* a thread is loading it (others run cuBLAS meanwhile) */
    const char *fn;       /* the API function of its first call, for messages (a literal) */
    engine_plan *plan;    /* BUILT, READY */
    engine_status st;     /* FAILED: why */
    char *why;            /* its copy of the reason, or why_lost (never freed): set_why */
    unsigned long fallback_calls; /* calls that ran cuBLAS */
    struct apicall_entry *next;   /* the build queue */
};

static uint64_t key_hash(const plan_key *k) { return hash64(k, sizeof *k, 0x9e3779b97f4a7c15ULL); }

static void key_of(engine_ctx *c, const apiarg_problem *p, const layout_align *al, plan_key *k)
{
    memset(k, 0, sizeof *k); /* padding too: the key is compared and hashed as bytes */
    k->p.dtype = p->dtype, k->p.M = p->M, k->p.N = p->N, k->p.K = p->K, k->p.ta = p->ta, k->p.tb = p->tb;
    k->p.lda = p->lda, k->p.ldb = p->ldb, k->p.ldc = p->ldc, k->p.batch = p->batch;
    k->p.sa = p->sa, k->p.sb = p->sb, k->p.sc = p->sc, k->p.swapped = p->swapped;
    k->al = *al;
    k->gen = c->forced_gen;
}

/* Slot of key in the table (its entry, or the free slot where it goes). Lock held. */
static struct apicall_entry **slot_of(engine_ctx *c, const plan_key *k, uint64_t h)
{
    size_t i = (size_t)h & (c->plans_cap - 1);
    while (c->plans[i] && (c->plans[i]->hash != h || memcmp(&c->plans[i]->key, k, sizeof *k) != 0))
        i = (i + 1) & (c->plans_cap - 1);
    return &c->plans[i];
}

static struct apicall_entry *find(engine_ctx *c, const plan_key *k, uint64_t h)
{
    if (!c->plans_cap)
        return NULL;
    return *slot_of(c, k, h);
}

/* A new entry for k, in the table; NULL, with the same entries (the table perhaps grown), when the
 * host has no memory for it. Lock held. */
static struct apicall_entry *insert(engine_ctx *c, const plan_key *k, uint64_t h, const char *fn)
{
    if (2 * (c->nplans + 1) > c->plans_cap) {
        size_t cap = c->plans_cap ? 2 * c->plans_cap : 64;
        struct apicall_entry **old = c->plans;
        size_t old_cap = c->plans_cap;
        struct apicall_entry **grown = try_calloc(cap, sizeof *c->plans);
        if (!grown)
            return NULL;
        c->plans = grown;
        c->plans_cap = cap;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i])
                *slot_of(c, &old[i]->key, old[i]->hash) = old[i];
        free(old);
    }
    struct apicall_entry *e = try_calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->key = *k;
    e->hash = h;
    e->fn = fn;
    *slot_of(c, k, h) = e;
    c->nplans++;
    return e;
}

/* An entry's reason where the host had no memory for its copy: the status (e->st) is kept all the
 * same, and only the line is lost. Static and read-only, never freed (free_why). */
static const char why_lost[] = "its kernel could not be built or loaded (no host memory to keep the reason)";

static void free_why(struct apicall_entry *e)
{
    if (e->why != why_lost)
        free(e->why);
    e->why = NULL;
}

/* e->why: a copy of text, or why_lost when the host has no memory for one (not an exit: the library's
 * calls go on, on cuBLAS, and describe says what it can). */
static void set_why(struct apicall_entry *e, const char *text)
{
    free_why(e);
    e->why = try_strdup(text);
    if (!e->why)
        e->why = (char *)why_lost; /* only ever read (describe) or compared (free_why) */
}

static void fail_entry(struct apicall_entry *e, engine_status st)
{
    e->state = CALL_FAILED;
    e->st = st;
    set_why(e, engine_last_error(NULL)); /* this thread's: the failed call's own line */
}

/* ---- the background builds ----------------------------------------------------------------- */

static void *builder(void *arg)
{
    engine_ctx *c = arg;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        while (!c->stopping && !c->queue_head)
            pthread_cond_wait(&c->work, &c->lock);
        if (c->stopping)
            break;
        struct apicall_entry *e = c->queue_head;
        c->queue_head = e->next;
        if (!c->queue_head)
            c->queue_tail = NULL;
        e->next = NULL;
        pthread_mutex_unlock(&c->lock);
        engine_plan *pl = NULL;
        engine_status st = apiplan_build(c, &e->key.p, &e->key.al, e->fn, &pl);
        pthread_mutex_lock(&c->lock);
        if (st) {
            fail_entry(e, st);
        } else {
            e->plan = pl;
            e->state = CALL_BUILT;
        }
        c->building--;
        pthread_cond_broadcast(&c->idle); /* describe waits for one entry, apicall_wait for all */
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* Queue e's build, starting a thread when fewer run than there are builds (at most half the CPUs,
 * at most 4: NVRTC is CPU-bound and the program goes on beside it). Lock held. */
static void enqueue(engine_ctx *c, struct apicall_entry *e)
{
    e->state = CALL_PENDING;
    if (c->queue_tail)
        c->queue_tail->next = e;
    else
        c->queue_head = e;
    c->queue_tail = e;
    c->building++;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t most = cpus >= 8 ? 4 : cpus >= 2 ? (size_t)cpus / 2 : 1;
    if (c->nthreads < most && c->nthreads < c->building &&
        pthread_create(&c->threads[c->nthreads], NULL, builder, c) == 0)
        c->nthreads++;
    if (!c->nthreads) { /* no thread to build it: the problem stays on cuBLAS, and says why */
        c->queue_head = c->queue_tail = NULL;
        c->building--;
        e->state = CALL_FAILED;
        e->st = ENGINE_ERROR_CUDA;
        set_why(e, "no background thread could be started to build its kernel");
        return;
    }
    pthread_cond_signal(&c->work);
}

/* ---- calls ---------------------------------------------------------------------------------- */

void apicall_init(engine_ctx *c, bool async)
{
    c->jit_async = async;
    pthread_cond_init(&c->work, NULL);
    pthread_cond_init(&c->idle, NULL);
}

/* Load e's plan on this thread when it is built and nobody else is loading it; lock held on entry
 * and on return (dropped while loading). Returns whether e is READY now. */
static bool load_entry(engine_ctx *c, struct apicall_entry *e)
{
    if (e->state != CALL_BUILT || e->loading)
        return e->state == CALL_READY;
    e->loading = true;
    pthread_mutex_unlock(&c->lock);
    engine_status st = apiplan_load(e->plan, e->fn);
    pthread_mutex_lock(&c->lock);
    e->loading = false;
    if (st) {
        engine_plan_destroy(e->plan);
        e->plan = NULL;
        fail_entry(e, st);
        return false;
    }
    e->state = CALL_READY;
    return true;
}

static engine_status run_fallback(engine_ctx *c, const apiarg_problem *p, const char *fn, double alpha,
                                  const void *kA, const void *kB, double beta, void *C, engine_stream stream)
{
    err_t err;
    err_clear(&err);
    if (fallback_gemm(&c->blas, p, alpha, (CUdeviceptr)(uintptr_t)kA, (CUdeviceptr)(uintptr_t)kB, beta,
                      (CUdeviceptr)(uintptr_t)C, (CUstream)stream, &err)) {
        snprintf(err.source, sizeof err.source, "%s", fn);
        return api_fail(api_status_of(&err), &err);
    }
    return ENGINE_SUCCESS;
}

/* The entry of p at these pointers, made (and, sync, built and loaded) when new. Lock held on return
 * when *e is set; on a failed synchronous build, or no host memory for the entry
 * (ENGINE_ERROR_OUT_OF_MEMORY), NULL, the status returned and the lock released. */
static engine_status entry_for(engine_ctx *c, const apiarg_problem *p, const layout_align *al, const char *fn,
                               bool build_now, struct apicall_entry **out)
{
    plan_key k;
    pthread_mutex_lock(&c->lock);
    key_of(c, p, al, &k);
    uint64_t h = key_hash(&k);
    struct apicall_entry *e = find(c, &k, h);
    if (e) {
        *out = e;
        return ENGINE_SUCCESS;
    }
    if (!build_now) {
        e = insert(c, &k, h, fn);
        if (!e) {
            pthread_mutex_unlock(&c->lock);
            *out = NULL;
            return api_fail_text(ENGINE_ERROR_OUT_OF_MEMORY, fn, "no host memory for the call's entry");
        }
        enqueue(c, e);
        *out = e;
        return ENGINE_SUCCESS;
    }
    /* Made outside the lock; when two threads make the same plan at once, the first one kept wins. */
    pthread_mutex_unlock(&c->lock);
    engine_plan *pl = NULL;
    engine_status st = apiplan_make(c, p, al, fn, &pl);
    if (st) {
        *out = NULL;
        return st;
    }
    pthread_mutex_lock(&c->lock);
    e = find(c, &k, h);
    if (!e)
        e = insert(c, &k, h, fn);
    if (!e) {
        pthread_mutex_unlock(&c->lock);
        engine_plan_destroy(pl);
        *out = NULL;
        return api_fail_text(ENGINE_ERROR_OUT_OF_MEMORY, fn, "no host memory for the call's entry");
    }
    if (e->state == CALL_READY || e->state == CALL_BUILT) { /* another thread's came first */
        engine_plan_destroy(pl);
    } else { /* new, or one that failed before: ours is kept */
        e->plan = pl;
        e->state = CALL_READY;
    }
    *out = e;
    return ENGINE_SUCCESS;
}

engine_status apicall_gemm(engine_ctx *c, const apiarg_problem *p, const char *fn, double alpha, const void *A,
                           const void *B, double beta, void *C, engine_stream stream)
{
    /* The kernels' A is the caller's B for a column-major call (apiarg.h). */
    const void *kA = p->swapped ? B : A, *kB = p->swapped ? A : B;
    layout_align al;
    apiplan_align_of(p, kA, kB, C, &al);
    bool async = c->jit_async && fallback_fits(p);
    struct apicall_entry *e;
    engine_status st = entry_for(c, p, &al, fn, !async, &e);
    if (st)
        return st;
    if (e->state == CALL_BUILT && !e->loading) {
        bool capturing = false;
        err_t err;
        err_clear(&err);
        pthread_mutex_unlock(&c->lock);
        int rc = gpu_capturing(&c->gpu, (CUstream)stream, &capturing, &err);
        pthread_mutex_lock(&c->lock);
        if (rc) {
            pthread_mutex_unlock(&c->lock);
            return api_fail(api_status_of(&err), &err);
        }
        if (!capturing)
            load_entry(c, e);
    }
    if (e->state == CALL_READY) {
        const engine_plan *pl = e->plan;
        pthread_mutex_unlock(&c->lock);
        return apiplan_execute(pl, fn, alpha, A, B, beta, C, stream);
    }
    if (!async) { /* a plan that failed to load in sync mode (a build failure returned above) */
        engine_status why = e->st;
        pthread_mutex_unlock(&c->lock);
        return api_fail_text(why ? why : ENGINE_ERROR_CUDA, fn, "the kernel of this problem could not be loaded");
    }
    e->fallback_calls++;
    pthread_mutex_unlock(&c->lock);
    return run_fallback(c, p, fn, alpha, kA, kB, beta, C, stream);
}

engine_status apicall_describe(engine_ctx *c, const apiarg_problem *p, const char *fn, const void *A, const void *B,
                               const void *C, bool wait, char **json)
{
    *json = NULL;
    const void *kA = p->swapped ? B : A, *kB = p->swapped ? A : B;
    layout_align al;
    apiplan_align_of(p, kA, kB, C, &al);
    bool async = c->jit_async && fallback_fits(p) && c->have_gpu;
    struct apicall_entry *e;
    /* Without a GPU nothing runs: the plan is made at once, for its description. */
    engine_status st = entry_for(c, p, &al, fn, !async, &e);
    if (st)
        return st;
    if (wait) {
        while (e->state == CALL_PENDING)
            pthread_cond_wait(&c->idle, &c->lock);
        while (e->state == CALL_BUILT && e->loading) { /* another thread loads it: let it finish */
            pthread_mutex_unlock(&c->lock);
            usleep(100);
            pthread_mutex_lock(&c->lock);
        }
        load_entry(c, e);
    }
    strbuf sb;
    sb_try_init(&sb);
    const char *path, *why;
    switch (e->state) {
    case CALL_READY:
        path = "engine", why = c->have_gpu ? "its kernel is loaded" : "planned without a GPU: nothing runs";
        break;
    case CALL_BUILT:
        path = "cublas", why = "its kernel is built; the next call that is not being captured loads it";
        break;
    case CALL_PENDING:
        path = "cublas", why = "its kernel is building on a background thread";
        break;
    default:
        path = "cublas", why = e->why;
        break;
    }
    sb_addf(&sb, "{\"path\":\"%s\",\"why\":", path);
    sb_add_json_string(&sb, why);
    sb_addf(&sb, ",\"jit\":\"%s\",\"fallback_calls\":%lu", c->jit_async ? "async" : "sync", e->fallback_calls);
    const char *plan = e->plan && e->plan->describe ? e->plan->describe : NULL;
    if (plan && plan[0] == '{' && plan[1] != '}') {
        sb_add(&sb, ",");
        sb_add(&sb, plan + 1);
    } else {
        sb_add(&sb, "}");
    }
    pthread_mutex_unlock(&c->lock);
    if (!(*json = sb_steal(&sb)))
        return api_fail_text(ENGINE_ERROR_OUT_OF_MEMORY, fn, "no host memory for the description");
    return ENGINE_SUCCESS;
}

engine_status apicall_wait(engine_ctx *c)
{
    pthread_mutex_lock(&c->lock);
    while (c->building)
        pthread_cond_wait(&c->idle, &c->lock);
    for (size_t i = 0; i < c->plans_cap; i++)
        if (c->plans[i])
            load_entry(c, c->plans[i]); /* drops the lock while loading; the table may grow: */
    pthread_mutex_unlock(&c->lock);   /* entries never move, but a rehash may skip one: loaded on its next call */
    return ENGINE_SUCCESS;
}

void apicall_free(engine_ctx *c)
{
    pthread_mutex_lock(&c->lock);
    c->stopping = true;
    for (struct apicall_entry *e = c->queue_head; e; e = e->next)
        c->building--;
    c->queue_head = c->queue_tail = NULL;
    pthread_cond_broadcast(&c->work);
    pthread_mutex_unlock(&c->lock);
    for (size_t i = 0; i < c->nthreads; i++)
        pthread_join(c->threads[i], NULL);
    c->nthreads = 0;
    for (size_t i = 0; i < c->plans_cap; i++)
        if (c->plans[i]) {
            engine_plan_destroy(c->plans[i]->plan);
            free_why(c->plans[i]);
            free(c->plans[i]);
        }
    free(c->plans);
    c->plans = NULL;
    c->plans_cap = c->nplans = 0;
    pthread_cond_destroy(&c->work);
    pthread_cond_destroy(&c->idle);
}
