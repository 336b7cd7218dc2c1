/* api.c — libengine (include/engine.h): contexts, plans and the CBLAS-shaped calls, on the same
 * planning (pick.h, select.h), config loading (config.h), compile and cache (kernel.h, jit.h) and
 * launch code (kernel_launch) as the `engine` command.
 *
 * Locking: one mutex per context guards its tables (the picks per dtype and op, loaded modules, the plans
 * of engine_sgemm and friends, the forced configs, the workspaces per stream). Compiles run outside
 * it (jit.c is thread-safe and compiles a source once however many threads ask). A plan is immutable
 * once made; executing it takes the lock only to find its stream's workspace. */
#define _GNU_SOURCE
#include "../include/engine.h"

#include "apiarg.h"
#include "apiplan.h"
#include "arch.h"
#include "cache.h"
#include "jit.h"
#include "paths.h"
#include "util.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

const char *engine_status_string(engine_status st)
{
    static const char *const names[] = {"ENGINE_SUCCESS", "ENGINE_ERROR_INVALID_ARGUMENT", "ENGINE_ERROR_MISALIGNED",
                                        "ENGINE_ERROR_DTYPE_MISMATCH", "ENGINE_ERROR_NO_GPU", "ENGINE_ERROR_CONFIG",
                                        "ENGINE_ERROR_NOT_SUPPORTED", "ENGINE_ERROR_COMPILE", "ENGINE_ERROR_CUDA"};
    return (unsigned)st < sizeof names / sizeof names[0] ? names[st] : "ENGINE_ERROR_UNKNOWN";
}

void engine_options_init(engine_options *o) { memset(o, 0, sizeof *o); }

/* Templates, shipped configs and wisdom are found next to the library, as the command finds them
 * next to itself: build/libengine.so -> kernels_src/, PREFIX/lib -> PREFIX/share/engine/. */
static pthread_once_t g_paths_once = PTHREAD_ONCE_INIT;
static const char g_anchor; /* an address inside the library, for dladdr */
static void paths_once(void)
{
    Dl_info info;
    if (dladdr(&g_anchor, &info) && info.dli_fname)
        paths_init_beside(info.dli_fname);
    else
        paths_init(NULL);
    jit_set_quiet(true); /* a library never prints: a failed compile is its status and first error line */
}

static pthread_mutex_t g_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static const engine_ctx *g_cache_owner; /* whose cache jit.c uses */

engine_status engine_create(engine_ctx **out, const engine_options *opt)
{
    engine_options defaults;
    if (!out)
        return api_fail_text(ENGINE_ERROR_INVALID_ARGUMENT, "engine_create", "ctx is a null pointer");
    *out = NULL;
    if (!opt) {
        engine_options_init(&defaults);
        opt = &defaults;
    }
    pthread_once(&g_paths_once, paths_once);
    engine_ctx *c = xcalloc(1, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
    err_t err;
    err_clear(&err);
    c->device = opt->device;
    if (opt->no_device) {
        if (opt->arch && !arch_lookup(arch_sm(opt->arch))) {
            free(c);
            return api_fail_text(ENGINE_ERROR_INVALID_ARGUMENT, "engine_create", "arch is not a known architecture");
        }
        c->arch = opt->arch ? opt->arch : 90;
        c->arch_guessed = !opt->arch;
        c->smem_limit = arch_lookup(arch_sm(c->arch))->smem_optin;
        c->sms = opt->sms;
        c->device_name = opt->device_name ? xstrdup(opt->device_name) : NULL;
    } else {
        if (opt->device < 0) {
            free(c);
            return api_fail_text(ENGINE_ERROR_INVALID_ARGUMENT, "engine_create", "device is negative");
        }
        if (gpu_open(&c->gpu, opt->device, &err)) {
            free(c);
            return api_fail(ENGINE_ERROR_NO_GPU, &err);
        }
        c->have_gpu = true;
        c->arch = c->gpu.sm;
        c->arch_guessed = true;
        c->sms = c->gpu.sms;
        c->smem_limit = c->gpu.smem_optin > 0 ? c->gpu.smem_optin : arch_lookup(c->arch)->smem_optin;
        c->device_name = xstrdup(c->gpu.name);
    }
    c->wisdom_dir = opt->wisdom_dir ? xstrdup(opt->wisdom_dir) : NULL;
    c->user_wisdom_dir = opt->user_wisdom_dir ? xstrdup(opt->user_wisdom_dir) : NULL;
    /* CUBINs on disk as `engine` keeps them; without a usable directory, in memory only. */
    err_t ignored;
    err_clear(&ignored);
    if (cache_open(&c->cache, opt->cache_dir, &ignored) == 0) {
        c->have_cache = true;
        /* jit.c has one disk cache per process: the newest context's (documented in engine.h). */
        pthread_mutex_lock(&g_cache_lock);
        jit_set_cache(&c->cache);
        g_cache_owner = c;
        pthread_mutex_unlock(&g_cache_lock);
    }
    *out = c;
    return ENGINE_SUCCESS;
}

void engine_destroy(engine_ctx *c)
{
    if (!c)
        return;
    apiplan_ctx_free(c);
    if (c->have_cache) {
        pthread_mutex_lock(&g_cache_lock);
        if (g_cache_owner == c) {
            jit_set_cache(NULL);
            g_cache_owner = NULL;
        }
        pthread_mutex_unlock(&g_cache_lock);
        cache_close(&c->cache);
    }
    if (c->have_gpu)
        gpu_close(&c->gpu);
    free(c->device_name);
    free(c->wisdom_dir);
    free(c->user_wisdom_dir);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

engine_status engine_set_config(engine_ctx *c, const char *json_or_path)
{
    if (!c)
        return api_fail_text(ENGINE_ERROR_INVALID_ARGUMENT, "engine_set_config", "ctx is a null pointer");
    if (!json_or_path) {
        pthread_mutex_lock(&c->lock);
        c->forced = NULL;
        c->forced_gen++;
        pthread_mutex_unlock(&c->lock);
        return ENGINE_SUCCESS;
    }
    config_t *cfg = xcalloc(1, sizeof *cfg);
    err_t err;
    err_clear(&err);
    const char *p = json_or_path;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    /* JSON text names itself in errors as the call; a path as the file (a shipped name resolves too). */
    int rc;
    if (*p == '{') {
        rc = config_parse_guess("engine_set_config", json_or_path, strlen(json_or_path), NULL, 0, NULL, c->arch,
                                c->arch_guessed, cfg, &err);
    } else {
        char *path = entries_resolve(NULL, json_or_path);
        rc = config_load_guess(path, NULL, 0, NULL, c->arch, c->arch_guessed, cfg, &err);
        free(path);
    }
    if (rc) {
        free(cfg);
        return api_fail(ENGINE_ERROR_CONFIG, &err);
    }
    pthread_mutex_lock(&c->lock);
    /* Kept until the context goes: plans made with an earlier one still point at it. */
    c->forced_all = xrealloc(c->forced_all, (c->nforced_all + 1) * sizeof *c->forced_all);
    c->forced_all[c->nforced_all++] = cfg;
    c->forced = cfg;
    c->forced_gen++;
    pthread_mutex_unlock(&c->lock);
    return ENGINE_SUCCESS;
}

void engine_plan_desc_init(engine_plan_desc *d, engine_dtype dtype, engine_order order, engine_transpose transa,
                           engine_transpose transb, int64_t m, int64_t n, int64_t k)
{
    memset(d, 0, sizeof *d);
    d->dtype = dtype;
    d->order = order;
    d->transa = transa;
    d->transb = transb;
    d->m = m, d->n = n, d->k = k;
    bool row = order == ENGINE_ROW_MAJOR;
    /* Stored rows x cols of each matrix: the ld is a row's length (row-major) or a column's. */
    int64_t ar = transa == ENGINE_TRANS ? k : m, ac = transa == ENGINE_TRANS ? m : k;
    int64_t br = transb == ENGINE_TRANS ? n : k, bc = transb == ENGINE_TRANS ? k : n;
    d->lda = row ? ac : ar;
    d->ldb = row ? bc : br;
    d->ldc = row ? n : m;
    d->lda = d->lda < 1 ? 1 : d->lda;
    d->ldb = d->ldb < 1 ? 1 : d->ldb;
    d->ldc = d->ldc < 1 ? 1 : d->ldc;
    d->batch = 1;
}

static void desc_of(apiarg_desc *d, const char *fn, const engine_plan_desc *p)
{
    *d = (apiarg_desc){.fn = fn, .dtype = p->dtype, .order = p->order, .transa = p->transa, .transb = p->transb,
                       .m = p->m, .n = p->n, .k = p->k, .lda = p->lda, .ldb = p->ldb, .ldc = p->ldc,
                       .batch = p->batch, .stride_a = p->stride_a, .stride_b = p->stride_b, .stride_c = p->stride_c};
}

engine_status engine_plan_create(engine_ctx *c, const engine_plan_desc *desc, engine_plan **plan)
{
    const char *fn = "engine_plan_create";
    if (!plan)
        return api_fail_text(ENGINE_ERROR_INVALID_ARGUMENT, fn, "plan is a null pointer");
    *plan = NULL;
    if (!c || !desc)
        return api_fail_text(ENGINE_ERROR_INVALID_ARGUMENT, fn, !c ? "ctx is a null pointer" : "desc is a null pointer");
    if (desc->alignment < 0 || desc->alignment > 256 || (desc->alignment & (desc->alignment - 1)))
        return api_fail_text(ENGINE_ERROR_INVALID_ARGUMENT, fn, "alignment must be 0 or a power of two up to 256 bytes");
    apiarg_desc d;
    desc_of(&d, fn, desc);
    apiarg_problem p;
    err_t err;
    err_clear(&err);
    engine_status st = apiarg_check(&d, &p, &err);
    if (st)
        return api_fail(st, &err);
    /* The promised alignment as an address: every pointer given to execute is a multiple of it. */
    size_t es = dtype_size(p.dtype), bytes = (size_t)desc->alignment > es ? (size_t)desc->alignment : es;
    layout_align al;
    const void *at = (const void *)(uintptr_t)bytes;
    apiplan_align_of(&p, at, at, at, &al);
    return apiplan_make(c, &p, &al, fn, plan);
}

engine_status engine_plan_execute(const engine_plan *plan, double alpha, const void *A, const void *B, double beta,
                                  void *C, engine_stream stream)
{
    if (!plan)
        return api_fail_text(ENGINE_ERROR_INVALID_ARGUMENT, "engine_plan_execute", "plan is a null pointer");
    return apiplan_execute(plan, "engine_plan_execute", alpha, A, B, beta, C, stream);
}

/* engine_sgemm and friends: the checks, then the context's plan for this problem (made on first
 * use), executed. */
static engine_status gemm(engine_ctx *c, const apiarg_desc *d, double alpha, const void *A, const void *B,
                          double beta, void *C, engine_stream stream)
{
    if (!c)
        return api_fail_text(ENGINE_ERROR_INVALID_ARGUMENT, d->fn, "ctx is a null pointer");
    apiarg_problem p;
    err_t err;
    err_clear(&err);
    engine_status st = apiarg_check(d, &p, &err);
    if (!st)
        st = apiarg_check_pointers(d->fn, &p, A, B, C, &err);
    if (st)
        return api_fail(st, &err);
    if (!c->have_gpu)
        return api_fail_text(ENGINE_ERROR_NO_GPU, d->fn, "this context was made without a GPU (no_device): it plans, it does not run");
    const engine_plan *plan = NULL;
    layout_align al;
    apiplan_align_of(&p, p.swapped ? B : A, p.swapped ? A : B, C, &al);
    st = apiplan_cached(c, &p, &al, d->fn, &plan);
    return st ? st : apiplan_execute(plan, d->fn, alpha, A, B, beta, C, stream);
}

engine_status engine_sgemm(engine_ctx *c, engine_order order, engine_transpose transa, engine_transpose transb,
                           int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda, const float *B,
                           int64_t ldb, float beta, float *C, int64_t ldc, engine_stream stream)
{
    apiarg_desc d = {.fn = "engine_sgemm", .dtype = ENGINE_F32, .order = order, .transa = transa, .transb = transb,
                     .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc, .batch = 1};
    return gemm(c, &d, alpha, A, B, beta, C, stream);
}

engine_status engine_dgemm(engine_ctx *c, engine_order order, engine_transpose transa, engine_transpose transb,
                           int64_t m, int64_t n, int64_t k, double alpha, const double *A, int64_t lda,
                           const double *B, int64_t ldb, double beta, double *C, int64_t ldc, engine_stream stream)
{
    apiarg_desc d = {.fn = "engine_dgemm", .dtype = ENGINE_F64, .order = order, .transa = transa, .transb = transb,
                     .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc, .batch = 1};
    return gemm(c, &d, alpha, A, B, beta, C, stream);
}

engine_status engine_sgemm_strided_batched(engine_ctx *c, engine_order order, engine_transpose transa,
                                           engine_transpose transb, int64_t m, int64_t n, int64_t k, float alpha,
                                           const float *A, int64_t lda, int64_t stride_a, const float *B, int64_t ldb,
                                           int64_t stride_b, float beta, float *C, int64_t ldc, int64_t stride_c,
                                           int64_t batch_count, engine_stream stream)
{
    apiarg_desc d = {.fn = "engine_sgemm_strided_batched", .dtype = ENGINE_F32, .order = order, .transa = transa,
                     .transb = transb, .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc,
                     .batch = batch_count, .stride_a = stride_a, .stride_b = stride_b, .stride_c = stride_c};
    return gemm(c, &d, alpha, A, B, beta, C, stream);
}

engine_status engine_dgemm_strided_batched(engine_ctx *c, engine_order order, engine_transpose transa,
                                           engine_transpose transb, int64_t m, int64_t n, int64_t k, double alpha,
                                           const double *A, int64_t lda, int64_t stride_a, const double *B,
                                           int64_t ldb, int64_t stride_b, double beta, double *C, int64_t ldc,
                                           int64_t stride_c, int64_t batch_count, engine_stream stream)
{
    apiarg_desc d = {.fn = "engine_dgemm_strided_batched", .dtype = ENGINE_F64, .order = order, .transa = transa,
                     .transb = transb, .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc,
                     .batch = batch_count, .stride_a = stride_a, .stride_b = stride_b, .stride_c = stride_c};
    return gemm(c, &d, alpha, A, B, beta, C, stream);
}
