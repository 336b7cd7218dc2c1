/* dispatch.h — runs a batch of tune points: compiles them on the pool (all cores), hands each
 * compiled one to the first idle worker (one process per GPU, strictly one kernel at a time on
 * each), and overlaps the two, so the GPUs start as soon as the first CUBINs exist. Each request
 * has a deadline; a worker that misses it is killed, and one that dies or faults is replaced for
 * the next point. Every point ends in exactly one reply: the worker's, or one made here
 * ("compile", "filtered", "fault", "timeout"). */
#ifndef ENGINE_DISPATCH_H
#define ENGINE_DISPATCH_H

#include "bench.h"
#include "pool.h"
#include "buildjob.h"
#include "worker.h"

#include <jansson.h>
#include <signal.h>

typedef struct {
    /* in */
    config_t cfg;    /* the base config with this point's values (a shallow copy: not freed here) */
    char **sets;     /* KEY=VALUE overrides that make the base config this point, for the worker */
    size_t nsets;
    int stage;       /* 1: verify, brief timing, cuBLAS baseline; 2: re-time interleaved with cuBLAS */
    bool pin_first;  /* only the first GPU (finalists are compared on one device) */
    void *user;      /* the caller's */
    /* out */
    build_job job;   /* the compile (stage 1) */
    bool compiled;
    json_t *reply;   /* the worker's reply, or the failure made here; status says which */
    int slot;        /* index of the worker that ran it, -1 when none did */
    bool done;
} dispatch_point;

typedef struct {
    int64_t M, N, K;
    layout_t lay; /* the problem's layout (layout.h) */
    double alpha, beta;
    uint64_t seed;
    int arch;
    int64_t smem_limit;
    const char *dtype;      /* the points' dtype */
    const char *path;       /* the base config's file, sent to the workers */
    bench_opts brief, full; /* timing of stage 1 and stage 2 */
    double timeout_s;       /* per request */
    int64_t max_spill;      /* -1: no filter */
    double min_occupancy;   /* percent of resident threads; 0: no filter */
    /* Called on the main thread: as each compile finishes, as each point finishes, and about ten
     * times a second. */
    void (*on_compiled)(void *ctx, dispatch_point *p);
    void (*on_done)(void *ctx, dispatch_point *p);
    void (*on_tick)(void *ctx);
    void *ctx;
} dispatch_conf;

enum { SLOT_DOWN, SLOT_STARTING, SLOT_IDLE, SLOT_BUSY, SLOT_DEAD };

typedef struct {
    worker_t w;
    int state;
    dispatch_point *cur;
    double deadline;       /* ms (now_ms), while STARTING or BUSY */
    double setup_s;        /* the current request's set-up allowance (worker_setup_allowance_s) */
    bool started;          /* its "started" came: the deadline is --timeout's */
    int start_failures;    /* in a row */
    char name[256];        /* the GPU's name, from the hello */
} dispatch_slot;

typedef struct {
    dispatch_conf c;
    pool_t *pool;
    worker_conf wc;
    dispatch_slot *slots;
    size_t nslots;
    unsigned long requests; /* sent so far, for ids */
    unsigned long nvrtc;    /* NVRTC compiles the workers reported (0 when the cache served them) */
} dispatch_t;

/* Set when the user interrupts (SIGINT, SIGTERM), or when a worker is stopped by such a signal from
 * outside (worker_stopped_from_outside): dispatch_run returns, leaving unfinished points. */
extern volatile sig_atomic_t dispatch_stop;

void dispatch_init(dispatch_t *s, const dispatch_conf *c, pool_t *pool, const worker_conf *wc, const int *devices,
                size_t ndevices);
void dispatch_free(dispatch_t *s);

/* Run every point to its end. Returns 0, or -1 with err set when no worker can start at all, or
 * when interrupted (dispatch_stop; err then says so). */
int dispatch_run(dispatch_t *s, dispatch_point *const *pts, size_t n, err_t *err);

/* The reply's status ("ok", "FAIL", "compile", ...). */
const char *dispatch_status(const dispatch_point *p);

#endif
