/* dispatch.c — see dispatch.h. */
#define _GNU_SOURCE
#include "dispatch.h"

#include "arch.h"
#include "jit.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

volatile sig_atomic_t dispatch_stop;

#define MAX_START_FAILURES 3

void dispatch_init(dispatch_t *s, const dispatch_conf *c, pool_t *pool, const worker_conf *wc, const int *devices,
                size_t ndevices)
{
    memset(s, 0, sizeof *s);
    s->c = *c;
    s->pool = pool;
    s->wc = *wc;
    s->nslots = ndevices;
    s->slots = xcalloc(ndevices, sizeof *s->slots);
    for (size_t i = 0; i < ndevices; i++)
        worker_init(&s->slots[i].w, devices[i]);
}

void dispatch_free(dispatch_t *s)
{
    for (size_t i = 0; i < s->nslots; i++) {
        if (s->slots[i].state == SLOT_BUSY || s->slots[i].state == SLOT_STARTING)
            worker_kill(&s->slots[i].w);
        worker_free(&s->slots[i].w);
    }
    free(s->slots);
    memset(s, 0, sizeof *s);
}

const char *dispatch_status(const dispatch_point *p)
{
    const char *st = p->reply ? json_string_value(json_object_get(p->reply, "status")) : NULL;
    return st ? st : "error";
}

static json_t *failure(const char *status, const char *why)
{
    return json_pack("{s:s, s:i, s:s}", "status", status, "code", EXIT_SYSTEM, "error", why);
}

/* After compiling: the second stage of feasibility, on what ptxas reported. */
static json_t *filter(const dispatch_t *s, const dispatch_point *p)
{
    const jit_func_info *fi = p->job.k.info;
    if (!fi)
        return NULL;
    int spill = fi->spill_stores + fi->spill_loads;
    if (s->c.max_spill >= 0 && spill > s->c.max_spill) {
        char why[128];
        snprintf(why, sizeof why, "spills %d bytes, more than --max-spill %lld", spill, (long long)s->c.max_spill);
        return json_pack("{s:s, s:i, s:s}", "status", "filtered", "code", 0, "error", why);
    }
    if (s->c.min_occupancy > 0) {
        const plan_launch *l = &p->job.k.plan.launches[p->job.k.plan.main_launch];
        int threads = (int)(l->block[0] * l->block[1] * l->block[2]);
        const arch_info *ai = arch_lookup(s->c.arch);
        int blocks = arch_occupancy(ai, threads, fi->regs, fi->smem_static + (int)l->smem);
        double pct = 100.0 * blocks * threads / ai->max_threads_sm;
        if (pct < s->c.min_occupancy) {
            char why[160];
            snprintf(why, sizeof why, "occupancy %.1f%% (%d blocks of %d threads, %d registers) is below --min-occupancy %g%%",
                     pct, blocks, threads, fi->regs, s->c.min_occupancy);
            return json_pack("{s:s, s:i, s:s}", "status", "filtered", "code", 0, "error", why);
        }
    }
    return NULL;
}

static void finish(dispatch_t *s, dispatch_point *p, json_t *reply, int slot, size_t *ndone)
{
    p->reply = reply;
    p->slot = slot;
    p->done = true;
    (*ndone)++;
    if (s->c.on_done)
        s->c.on_done(s->c.ctx, p);
}

static json_t *request(dispatch_t *s, const dispatch_point *p)
{
    json_t *sets = json_array();
    for (size_t i = 0; i < p->nsets; i++)
        json_array_append_new(sets, json_string(p->sets[i]));
    const bench_opts *bo = p->stage == 2 ? &s->c.full : &s->c.brief;
    json_t *req = json_pack("{s:s, s:I, s:s, s:o, s:s, s:i, s:I, s:I, s:I, s:f, s:f, s:I, s:b, s:b, s:i, s:i, s:i, s:b, s:b}",
                     "op", "run", "id", (json_int_t)++s->requests, "path", s->c.path, "sets", sets, "dtype", s->c.dtype, "arch",
                     s->c.arch, "M", (json_int_t)s->c.M, "N", (json_int_t)s->c.N, "K", (json_int_t)s->c.K, "alpha",
                     s->c.alpha, "beta", s->c.beta, "seed", (json_int_t)s->c.seed, "verify", p->stage != 2, "time", 1,
                     "warmup", bo->warmup, "runs", bo->runs, "iters", bo->iters, "baseline", p->stage != 2,
                     "interleave", p->stage == 2);
    worker_put_layout(req, &s->c.lay);
    return req;
}

static void start_slot(dispatch_t *s, dispatch_slot *sl, err_t *fatal)
{
    err_t err;
    err_clear(&err);
    if (worker_spawn(&sl->w, &s->wc, &err)) {
        *fatal = err;
        sl->state = SLOT_DEAD;
        return;
    }
    sl->state = SLOT_STARTING;
    sl->deadline = now_ms() + s->wc.start_timeout_s * 1e3;
}

/* A message from a worker that is starting: its hello, or why it could not start. */
static void on_hello(dispatch_slot *sl, json_t *msg, err_t *fatal)
{
    json_t *e = json_object_get(msg, "error");
    if (json_is_string(e)) {
        json_t *code = json_object_get(msg, "code");
        err_clear(fatal);
        err_set(fatal, json_is_integer(code) ? (int)json_integer_value(code) : EXIT_SYSTEM, "", 0, 0,
                "GPU %d: %s", sl->w.device, json_string_value(e));
        worker_stop(&sl->w);
        sl->state = SLOT_DEAD;
        json_decref(msg);
        return;
    }
    const char *name = json_string_value(json_object_get(msg, "name"));
    snprintf(sl->name, sizeof sl->name, "%s", name ? name : "?");
    json_decref(sl->w.hello);
    sl->w.hello = msg;
    sl->state = SLOT_IDLE;
    sl->start_failures = 0;
}

/* The slot's worker is gone while starting or busy: count it, and give up on a slot whose worker
 * never comes up. */
static void lost(dispatch_slot *sl, bool starting, err_t *fatal)
{
    sl->state = SLOT_DOWN;
    sl->cur = NULL;
    if (starting && ++sl->start_failures >= MAX_START_FAILURES) {
        err_clear(fatal);
        err_set(fatal, ERR_SYSTEM, "", 0, 0, "the worker for GPU %d failed to start %d times: %s", sl->w.device,
                MAX_START_FAILURES, sl->w.ended);
        sl->state = SLOT_DEAD;
    }
}

/* One batch on its way through: the compiled points waiting for a GPU, and the counts. */
typedef struct {
    dispatch_point **ready; /* FIFO; taken entries are NULL */
    size_t nready, head;
    size_t compiling;       /* submitted to the pool, not yet taken back */
    size_t ndone;
    err_t fatal;            /* why no worker can start, when none can */
} batch_t;

/* Point p's worker is gone. A fault of the point, unless the worker was stopped from outside or
 * after the engine was told to stop: a Slurm requeue, preemption or scancel signals every process
 * of the job, the worker as well as the engine, and in whichever order they die the point did
 * nothing wrong. It then stays unfinished, so --resume runs it again, and the run stops as
 * interrupted. */
static void worker_gone(dispatch_t *s, dispatch_slot *sl, dispatch_point *p, batch_t *b)
{
    if (dispatch_stop || worker_stopped_from_outside(&sl->w)) {
        dispatch_stop = 1;
        return;
    }
    finish(s, p, failure("fault", sl->w.ended), (int)(sl - s->slots), &b->ndone);
}

/* Hand ready points to idle workers (finalists to the first GPU only); start workers that are
 * needed and down. */
static void assign(dispatch_t *s, batch_t *b)
{
    for (size_t i = 0; i < s->nslots; i++) {
        dispatch_slot *sl = &s->slots[i];
        if (sl->state != SLOT_IDLE && sl->state != SLOT_DOWN)
            continue;
        size_t pick = b->nready;
        for (size_t j = b->head; j < b->nready && pick == b->nready; j++)
            if (b->ready[j] && (!b->ready[j]->pin_first || i == 0))
                pick = j;
        if (pick == b->nready)
            continue;
        if (sl->state == SLOT_DOWN) {
            start_slot(s, sl, &b->fatal);
            continue;
        }
        dispatch_point *p = b->ready[pick];
        b->ready[pick] = NULL;
        while (b->head < b->nready && !b->ready[b->head])
            b->head++;
        json_t *req = request(s, p);
        int sent = worker_send(&sl->w, req);
        /* Before it says "started", a request has its set-up's allowance (a new problem costs the
         * worker its inputs, the cuBLAS reference and baseline); then --timeout. */
        sl->setup_s = worker_setup_allowance_s(req, p->cfg.dtype);
        json_decref(req);
        if (sent) {
            lost(sl, false, &b->fatal);
            worker_gone(s, sl, p, b);
            continue;
        }
        sl->cur = p;
        sl->state = SLOT_BUSY;
        sl->deadline = now_ms() + sl->setup_s * 1e3;
        sl->started = false;
    }
}

/* Sleep until a compile finishes, a worker writes, or the nearest deadline (at most 100 ms, for
 * the progress line and Ctrl-C). */
static void wait_for_events(dispatch_t *s, const batch_t *b, struct pollfd *pfd)
{
    size_t np = 0;
    int wait = 100;
    double now = now_ms();
    if (b->compiling)
        pfd[np++] = (struct pollfd){pool_fd(s->pool), POLLIN, 0};
    for (size_t i = 0; i < s->nslots; i++) {
        dispatch_slot *sl = &s->slots[i];
        if (sl->state != SLOT_STARTING && sl->state != SLOT_BUSY)
            continue;
        pfd[np++] = (struct pollfd){sl->w.out_fd, POLLIN, 0};
        int left = (int)(sl->deadline - now) + 1;
        if (left < wait)
            wait = left < 0 ? 0 : left;
        if (worker_has_line(&sl->w))
            wait = 0;
    }
    poll(pfd, np, wait);
}

/* Compiles that finished: failures and filtered points end here, the rest wait for a GPU. */
static void take_compiles(dispatch_t *s, batch_t *b)
{
    while (b->compiling) {
        build_job *j = pool_take(s->pool, false);
        if (!j)
            break;
        b->compiling--;
        dispatch_point *p = j->user;
        p->compiled = j->rc == 0;
        if (s->c.on_compiled)
            s->c.on_compiled(s->c.ctx, p);
        if (j->rc) {
            char line[ERR_SOURCE_LEN + ERR_TEXT_LEN + 64];
            err_format(&j->err, line, sizeof line);
            json_t *f = failure(j->err.code == EXIT_INPUT ? "compile" : "error", line);
            json_object_set_new(f, "code", json_integer(j->err.code));
            finish(s, p, f, -1, &b->ndone);
        } else {
            json_t *f = filter(s, p);
            if (f)
                finish(s, p, f, -1, &b->ndone);
            else
                b->ready[b->nready++] = p;
        }
    }
}

/* Workers: hellos, "started" notices, replies, deaths, missed deadlines. */
static void take_replies(dispatch_t *s, batch_t *b)
{
    double now = now_ms();
    for (size_t i = 0; i < s->nslots; i++) {
        dispatch_slot *sl = &s->slots[i];
        if (sl->state != SLOT_STARTING && sl->state != SLOT_BUSY)
            continue;
        struct pollfd one = {sl->w.out_fd, POLLIN, 0};
        json_t *msg = NULL;
        worker_status st = WORKER_AGAIN;
        if (worker_has_line(&sl->w) || poll(&one, 1, 0) > 0)
            st = worker_read(&sl->w, &msg);
        bool starting = sl->state == SLOT_STARTING;
        if (st == WORKER_OK && !starting && worker_is_started(msg)) {
            /* Set-up done: from here the kernel has --timeout. */
            json_decref(msg);
            sl->deadline = now + s->c.timeout_s * 1e3;
            sl->started = true;
        } else if (st == WORKER_OK && starting) {
            on_hello(sl, msg, &b->fatal);
        } else if (st == WORKER_OK) {
            dispatch_point *p = sl->cur;
            sl->cur = NULL;
            sl->state = SLOT_IDLE;
            json_t *nv = json_object_get(msg, "nvrtc");
            s->nvrtc += json_is_integer(nv) ? (unsigned long)json_integer_value(nv) : 0;
            if (json_is_true(json_object_get(msg, "broken"))) {
                worker_stop(&sl->w);
                sl->state = SLOT_DOWN;
            }
            finish(s, p, msg, (int)i, &b->ndone);
        } else if (st == WORKER_DIED) {
            dispatch_point *p = sl->cur;
            lost(sl, starting, &b->fatal);
            if (p)
                worker_gone(s, sl, p, b);
        } else if (now > sl->deadline) {
            dispatch_point *p = sl->cur;
            worker_kill(&sl->w);
            char why[160];
            if (starting)
                snprintf(why, sizeof why, "no hello within %.0f s: the worker was killed", s->wc.start_timeout_s);
            else if (!sl->started)
                worker_stall_text(why, sizeof why, sl->setup_s);
            else
                snprintf(why, sizeof why, "still running after %.0f s: the worker was killed", s->c.timeout_s);
            snprintf(sl->w.ended, sizeof sl->w.ended, "%s", why);
            lost(sl, starting, &b->fatal);
            if (p)
                finish(s, p, failure("timeout", why), (int)i, &b->ndone);
        }
    }
}

int dispatch_run(dispatch_t *s, dispatch_point *const *pts, size_t n, err_t *err)
{
    batch_t b = {.ready = xcalloc(n ? n : 1, sizeof *b.ready)};
    err_clear(&b.fatal);
    for (size_t i = 0; i < n; i++) {
        dispatch_point *p = pts[i];
        p->done = false;
        p->slot = -1;
        if (p->stage == 2) {
            /* Finalists are compiled already (the worker finds them in the cache). */
            b.ready[b.nready++] = p;
            continue;
        }
        build_job_init(&p->job, &p->cfg, s->c.arch, s->c.smem_limit, s->c.M, s->c.N, s->c.K);
        p->job.lay = s->c.lay;
        layout_align_ld(&p->job.lay, dtype_size(p->cfg.dtype), &p->job.align);
        p->job.user = p;
        pool_submit(s->pool, build_job_run, &p->job);
        b.compiling++;
    }
    struct pollfd *pfd = xcalloc(s->nslots + 1, sizeof *pfd);
    while (b.ndone < n && !dispatch_stop) {
        assign(s, &b);
        bool alive = false;
        for (size_t i = 0; i < s->nslots; i++)
            alive = alive || s->slots[i].state != SLOT_DEAD;
        if (!alive)
            break;
        wait_for_events(s, &b, pfd);
        if (s->c.on_tick)
            s->c.on_tick(s->c.ctx);
        take_compiles(s, &b);
        take_replies(s, &b);
    }
    free(b.ready);
    free(pfd);
    if (b.ndone == n)
        return 0;
    /* Stopped early: compiles not started are dropped, running ones finish (they write into the
     * points, which the caller frees next), and nothing they produce is used. */
    b.compiling -= pool_cancel(s->pool);
    while (b.compiling && pool_take(s->pool, true))
        b.compiling--;
    if (dispatch_stop)
        return err_set(err, ERR_INTERRUPTED, "", 0, 0, "interrupted"), -1;
    if (!err_isset(&b.fatal))
        err_set(&b.fatal, ERR_SYSTEM, "", 0, 0, "the dispatcher stopped with %zu of %zu points unfinished", n - b.ndone, n);
    *err = b.fatal;
    return -1;
}
