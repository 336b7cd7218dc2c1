/* buildjob.c — see buildjob.h. */
#include "buildjob.h"

#include "labjit.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

void build_job_init(build_job *j, const config_t *cfg, int arch, int64_t smem_limit, int64_t M, int64_t N, int64_t K)
{
    memset(j, 0, sizeof *j);
    j->cfg = cfg;
    j->arch = cfg->arch ? cfg->arch : arch; /* the config's own target (sm_90a for a wgmma one) */
    j->smem_limit = smem_limit;
    j->M = M;
    j->N = N;
    j->K = K;
    layout_packed(&j->lay, 0, 0, M, N, K, 1);
    layout_align_ld(&j->lay, dtype_size(cfg->dtype), &j->align);
}

void build_job_run(void *arg)
{
    build_job *j = arg;
    double t0 = now_ms();
    err_clear(&j->err);
    plan_target to = {.arch = j->arch,
                      .smem_limit = j->smem_limit,
                      .M = j->M,
                      .N = j->N,
                      .K = j->K,
                      .lay = &j->lay,
                      .align = &j->align};
    j->rc = kernel_build(lab_jit(), j->cfg, &to, &j->k, &j->origin, &j->err);
    j->ms = now_ms() - t0;
}

static int by_cost_desc(const void *a, const void *b)
{
    const build_job *x = *(build_job *const *)a, *y = *(build_job *const *)b;
    if (x->cfg->compile_cost != y->cfg->compile_cost)
        return x->cfg->compile_cost > y->cfg->compile_cost ? -1 : 1;
    return x < y ? -1 : x > y; /* jobs come from one array: keep their order among equals */
}

void build_jobs_order(build_job **jobs, size_t n) { qsort(jobs, n, sizeof *jobs, by_cost_desc); }

void build_jobs_run(pool_t *pool, build_job **jobs, size_t n)
{
    build_jobs_order(jobs, n);
    pool_run_all(pool, build_job_run, (void **)jobs, n);
}

void build_job_free(build_job *j) { kernel_free(&j->k); }
