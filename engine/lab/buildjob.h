/* buildjob.h — one config for one shape, planned and compiled on a thread of the pool (pool.h):
 * what bench, verify and tune compile before they time, and the order that keeps the pool busy. */
#ifndef ENGINE_BUILDJOB_H
#define ENGINE_BUILDJOB_H

#include "config.h"
#include "jit.h"
#include "kernel.h"
#include "layout.h"
#include "pool.h"

/* One config for one shape, planned and compiled on a pool thread. */
typedef struct {
    const config_t *cfg;
    int arch;
    int64_t smem_limit;
    int64_t M, N, K;
    layout_t lay;       /* packed NN unless the caller sets another before running it */
    layout_align align; /* the alignment class built for: what lay allows on 16-byte-aligned buffers */
    kernel_t k;        /* the plan and the compile result */
    jit_origin origin; /* compiled now, or found in memory or on disk */
    double ms;         /* wall time of the build in this run */
    int rc;            /* 0, or err is set */
    err_t err;
    void *user;        /* the caller's */
} build_job;

void build_job_init(build_job *j, const config_t *cfg, int arch, int64_t smem_limit, int64_t M, int64_t N, int64_t K);
/* pool_fn: runs kernel_build. */
void build_job_run(void *job);
/* Order jobs[0..n) longest compile first (the configs' compile_cost), equals as they were. */
void build_jobs_order(build_job **jobs, size_t n);
/* Run jobs[0..n) on the pool in that order and wait for all: a long compile started late would
 * set the wall time alone (measured: the 49 shipped configs on 16 cores took 0.125-0.135 of the
 * serial time in file order, 0.11 longest first). Reorders jobs. */
void build_jobs_run(pool_t *pool, build_job **jobs, size_t n);
void build_job_free(build_job *j);

#endif
