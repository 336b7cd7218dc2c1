/* api.c — libengine (include/engine.h): contexts, plans and the CBLAS-shaped calls, on the same
 * planning (pick.h, select.h), config loading (config.h), compile and cache (kernel.h, jit.h) and
 * launch code (kernel_launch) as the `engine` command.
 *
 * Locking: one mutex per context guards its tables (the picks per dtype and op, loaded modules, the plans
 * of engine_sgemm and friends, the forced configs, the workspaces per stream). Compiles run outside
 * it (jit.c is thread-safe and compiles a source once however many threads ask). A plan is immutable
 * once made; executing it takes the lock only to find its stream's workspace. */
#define _GNU_SOURCE
#include "../../include/engine.h"

#include "apiarg.h"
#include "apicall.h"
#include "apiplan.h"
#include "arch.h"
#include "cache.h"
#include "jit.h"
#include "paths.h"
#include "util.h"
#include "warm.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *engine_status_string(engine_status st)
{
    static const char *const names[] = {"ENGINE_SUCCESS",
                                        "ENGINE_ERROR_INVALID_ARGUMENT",
                                        "ENGINE_ERROR_MISALIGNED",
                                        "ENGINE_ERROR_DTYPE_MISMATCH",
                                        "ENGINE_ERROR_NO_GPU",
                                        "ENGINE_ERROR_CONFIG",
                                        "ENGINE_ERROR_NOT_SUPPORTED",
                                        "ENGINE_ERROR_COMPILE",
                                        "ENGINE_ERROR_CUDA",
                                        "ENGINE_ERROR_OUT_OF_MEMORY",
                                        "ENGINE_ERROR_VERSION"};
    return (unsigned)st < sizeof names / sizeof names[0] ? names[st] : "ENGINE_ERROR_UNKNOWN";
}

void engine_options_init(engine_options *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

/* The size of each struct's first sized layout (0.5; its last field's end rounded up to the struct's
 * alignment): the smallest size taken. A field added later must start at or past the size of every
 * earlier layout, never in its tail padding, which an older program's struct leaves undefined
 * (engine.h says so); its default is what the init function gives it. */
#define SIZE_UP_TO(type, field)                                                                                        \
    ((offsetof(type, field) + sizeof(((type *)0)->field) + _Alignof(type) - 1) / _Alignof(type) * _Alignof(type))
#define OPTIONS_OLDEST SIZE_UP_TO(engine_options, jit)
#define PLAN_DESC_OLDEST SIZE_UP_TO(engine_plan_desc, alignment)

int engine_version(void) { return ENGINE_VERSION_MAJOR * 1000 + ENGINE_VERSION_MINOR; }

size_t engine_struct_size(const char *name)
{
    if (!name)
        return 0;
    if (strcmp(name, "engine_options") == 0)
        return sizeof(engine_options);
    if (strcmp(name, "engine_plan_desc") == 0)
        return sizeof(engine_plan_desc);
    return 0;
}

/* Templates, shipped configs and wisdom are found next to the library, as the command finds them
 * next to itself: build/libengine.so -> kernels_src/, PREFIX/lib -> PREFIX/share/engine/. Worked
 * out by the first engine_create that finds host memory for their names: one that finds none fails
 * with ENGINE_ERROR_OUT_OF_MEMORY and leaves the work to the next (a once that failed for good would
 * fail every later context too). Read-only once done. */
static pthread_mutex_t g_paths_lock = PTHREAD_MUTEX_INITIALIZER;
static bool g_paths_done;
static const char g_anchor; /* an address inside the library, for dladdr */
static int paths_ready(err_t *err)
{
    int rc = 0;
    pthread_mutex_lock(&g_paths_lock);
    if (!g_paths_done) {
        Dl_info info;
        if (dladdr(&g_anchor, &info) && info.dli_fname)
            rc = paths_init_beside(info.dli_fname, err);
        else
            rc = paths_init(NULL, err);
        g_paths_done = rc == 0;
    }
    pthread_mutex_unlock(&g_paths_lock);
    /* No jit reporter: a library never prints; a failed compile is its status and first error line. */
    return rc;
}

/* A call works in the context's (primary) CUDA context and gives the caller's current one back as
 * it returns, none included (engine.h): scope_in before the work, scope_out with its status. */
typedef struct {
    CUcontext prev;
    bool entered;
} api_scope;

static api_scope scope_in(engine_ctx *c)
{
    api_scope s = {NULL, false};
    if (c && c->have_gpu)
        s.entered = gpu_enter(&c->gpu, &s.prev);
    return s;
}

static engine_status scope_out(engine_ctx *c, api_scope s, engine_status st)
{
    if (s.entered)
        gpu_leave(&c->gpu, true, s.prev);
    return st;
}

static engine_status create(engine_ctx **out, const engine_options *opt);

engine_status engine_create(engine_ctx **out, const engine_options *opt)
{
    /* gpu_open makes the primary context current: the caller's (or none) is given back after. */
    CUcontext prev = NULL;
    bool known = gpu_current(&prev);
    engine_status st = create(out, opt);
    if (known && out && *out && (*out)->have_gpu)
        gpu_make_current(prev);
    return st;
}

static engine_status create(engine_ctx **out, const engine_options *given)
{
    if (!out)
        return api_fail_text(ENGINE_ERROR_INVALID_ARGUMENT, "engine_create", "ctx is a null pointer");
    *out = NULL;
    /* The caller's options in this library's layout: defaults where an older struct has no field. */
    engine_options mine;
    engine_options_init(&mine);
    if (given) {
        err_t bad;
        err_clear(&bad);
        engine_status st =
            apiarg_sized("engine_create", "engine_options", given, OPTIONS_OLDEST, sizeof mine, &mine, &bad);
        if (st)
            return api_fail(st, &bad);
    }
    const engine_options *opt = &mine;
    err_t nopaths;
    err_clear(&nopaths);
    if (paths_ready(&nopaths))
        return api_fail_text(api_status_of(&nopaths), "engine_create", nopaths.text);
    engine_ctx *c = try_calloc(1, sizeof *c);
    jit_t *jit = c ? jit_new() : NULL;
    if (!jit) {
        free(c);
        return api_fail_text(ENGINE_ERROR_OUT_OF_MEMORY, "engine_create", "no host memory for the context");
    }
    c->jit = jit;
    pthread_mutex_init(&c->lock, NULL);
    err_t err;
    err_clear(&err);
    c->device = opt->device;
    if (opt->no_device) {
        if (opt->arch && !arch_lookup(arch_sm(opt->arch))) {
            jit_free(c->jit);
            free(c);
            return api_fail_text(ENGINE_ERROR_INVALID_ARGUMENT, "engine_create", "arch is not a known architecture");
        }
        c->arch = opt->arch ? opt->arch : 90;
        c->arch_guessed = !opt->arch;
        c->smem_limit = arch_lookup(arch_sm(c->arch))->smem_optin;
        c->sms = opt->sms;
        c->device_name = try_strdup(opt->device_name);
    } else {
        if (opt->device < 0) {
            jit_free(c->jit);
            free(c);
            return api_fail_text(ENGINE_ERROR_INVALID_ARGUMENT, "engine_create", "device is negative");
        }
        if (gpu_open(&c->gpu, opt->device, &err)) {
            jit_free(c->jit);
            free(c);
            return api_fail(ENGINE_ERROR_NO_GPU, &err);
        }
        c->have_gpu = true;
        c->arch = c->gpu.sm;
        c->arch_guessed = true;
        c->sms = c->gpu.sms;
        c->smem_limit = c->gpu.smem_optin > 0 ? c->gpu.smem_optin : arch_lookup(c->arch)->smem_optin;
        c->device_name = try_strdup(c->gpu.name);
    }
    /* Compiles in the background, cuBLAS meanwhile (apicall.h), unless told otherwise or cuBLAS cannot
     * be had (then every first call waits for its build, as before). */
    const char *env = getenv("ENGINE_JIT");
    bool async = opt->jit == ENGINE_JIT_ASYNC ||
                 (opt->jit == ENGINE_JIT_DEFAULT && !(env && strcmp(env, "sync") == 0));
    if (opt->jit < ENGINE_JIT_DEFAULT || opt->jit > ENGINE_JIT_SYNC) {
        if (c->have_gpu)
            gpu_close(&c->gpu);
        free(c->device_name);
        jit_free(c->jit);
        free(c);
        return api_fail_text(ENGINE_ERROR_INVALID_ARGUMENT, "engine_create", "jit must be ENGINE_JIT_DEFAULT, _ASYNC or _SYNC");
    }
    if (async && c->have_gpu) {
        err_t why;
        err_clear(&why);
        async = gpu_set_current(&c->gpu, &why) == 0 && fallback_open(&c->blas, &why) == 0;
    }
    apicall_init(c, async && c->have_gpu);
    c->wisdom_dir = try_strdup(opt->wisdom_dir);
    c->user_wisdom_dir = try_strdup(opt->user_wisdom_dir);
    /* CUBINs on disk as `engine` keeps them; without a usable directory, in memory only. */
    err_t ignored;
    err_clear(&ignored);
    if (cache_open(&c->cache, opt->cache_dir, &ignored) == 0) {
        c->have_cache = true;
        jit_set_cache(c->jit, &c->cache); /* the context's own compiler: no other context reads it */
    }
    /* A name given (or the GPU's) whose copy found no memory: the whole context is undone. */
    if ((opt->wisdom_dir && !c->wisdom_dir) || (opt->user_wisdom_dir && !c->user_wisdom_dir) ||
        ((c->have_gpu || opt->device_name) && !c->device_name)) {
        engine_destroy(c);
        return api_fail_text(ENGINE_ERROR_OUT_OF_MEMORY, "engine_create", "no host memory for the context");
    }
    *out = c;
    return ENGINE_SUCCESS;
}

void engine_destroy(engine_ctx *c)
{
    if (!c)
        return;
    api_scope s = scope_in(c);
    apicall_free(c);
    apiplan_ctx_free(c);
    fallback_close(&c->blas);
    jit_free(c->jit); /* its results first: nothing of the context's needs them now */
    if (c->have_cache)
        cache_close(&c->cache);
    if (s.entered)
        gpu_leave(&c->gpu, true, s.prev);
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
    config_t *cfg = try_calloc(1, sizeof *cfg);
    if (!cfg)
        return api_fail_text(ENGINE_ERROR_OUT_OF_MEMORY, "engine_set_config", "no host memory for the config");
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
        char *path = entries_try_resolve(NULL, json_or_path);
        rc = path ? config_load_guess(path, NULL, 0, NULL, c->arch, c->arch_guessed, cfg, &err)
                  : err_set(&err, ERR_ALLOC, json_or_path, 0, 0, "no host memory for the config's path");
        free(path);
    }
    if (rc && err.cause == ERR_ALLOC) {
        /* named by the entry point, as its own objects' are, with where it ran out */
        char text[ERR_TEXT_LEN + ERR_SOURCE_LEN + 8];
        snprintf(text, sizeof text, "%s (%s)", err.text, err.source);
        free(cfg);
        return api_fail_text(ENGINE_ERROR_OUT_OF_MEMORY, "engine_set_config", text);
    }
    if (rc) {
        free(cfg);
        return api_fail(ENGINE_ERROR_CONFIG, &err);
    }
    pthread_mutex_lock(&c->lock);
    /* Kept until the context goes: plans made with an earlier one still point at it. */
    config_t **all = try_realloc(c->forced_all, (c->nforced_all + 1) * sizeof *c->forced_all);
    if (!all) {
        pthread_mutex_unlock(&c->lock);
        config_free(cfg);
        free(cfg);
        return api_fail_text(ENGINE_ERROR_OUT_OF_MEMORY, "engine_set_config", "no host memory for the config");
    }
    c->forced_all = all;
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
    d->size = sizeof *d;
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

/* The caller's desc in this library's layout (engine_plan_desc.size): desc itself when it is, else
 * copied into *room with zeros where an older one has no field. NULL (a null desc, a size refused)
 * with the failure recorded as fn's. */
static const engine_plan_desc *desc_in(const char *fn, const engine_plan_desc *desc, engine_plan_desc *room,
                                       engine_status *st)
{
    *st = ENGINE_SUCCESS;
    if (!desc) {
        *st = api_fail_text(ENGINE_ERROR_INVALID_ARGUMENT, fn, "desc is a null pointer");
        return NULL;
    }
    if (desc->size == sizeof *desc)
        return desc; /* the common case, engine_gemm's every call: no copy */
    memset(room, 0, sizeof *room);
    err_t err;
    err_clear(&err);
    *st = apiarg_sized(fn, "engine_plan_desc", desc, PLAN_DESC_OLDEST, sizeof *room, room, &err);
    if (*st) {
        api_fail(*st, &err);
        return NULL;
    }
    return room;
}

static void desc_of(apiarg_desc *d, const char *fn, const engine_plan_desc *p)
{
    *d = (apiarg_desc){.fn = fn, .dtype = p->dtype, .order = p->order, .transa = p->transa, .transb = p->transb,
                       .m = p->m, .n = p->n, .k = p->k, .lda = p->lda, .ldb = p->ldb, .ldc = p->ldc,
                       .batch = p->batch, .stride_a = p->stride_a, .stride_b = p->stride_b, .stride_c = p->stride_c};
}

/* c given, *desc read at its size (desc_in: *desc becomes the library's layout, perhaps room), checked
 * and mapped onto the kernels' problem (the failure recorded as fn's). */
static engine_status problem_of(const char *fn, const engine_ctx *c, const engine_plan_desc **desc,
                                engine_plan_desc *room, apiarg_problem *p)
{
    if (!c)
        return api_fail_text(ENGINE_ERROR_INVALID_ARGUMENT, fn, "ctx is a null pointer");
    engine_status st;
    if (!(*desc = desc_in(fn, *desc, room, &st)))
        return st;
    apiarg_desc d;
    desc_of(&d, fn, *desc);
    err_t err;
    err_clear(&err);
    st = apiarg_check(&d, p, &err);
    return st ? api_fail(st, &err) : ENGINE_SUCCESS;
}

static engine_status plan_create(engine_ctx *c, const engine_plan_desc *desc, engine_plan **plan);

engine_status engine_plan_create(engine_ctx *c, const engine_plan_desc *desc, engine_plan **plan)
{
    api_scope s = scope_in(c);
    return scope_out(c, s, plan_create(c, desc, plan));
}

static engine_status plan_create(engine_ctx *c, const engine_plan_desc *desc, engine_plan **plan)
{
    const char *fn = "engine_plan_create";
    if (!plan)
        return api_fail_text(ENGINE_ERROR_INVALID_ARGUMENT, fn, "plan is a null pointer");
    *plan = NULL;
    engine_plan_desc room;
    apiarg_problem p;
    engine_status st = problem_of(fn, c, &desc, &room, &p);
    if (st)
        return st;
    if (desc->alignment < 0 || desc->alignment > 256 || (desc->alignment & (desc->alignment - 1)))
        return api_fail_text(ENGINE_ERROR_INVALID_ARGUMENT, fn, "alignment must be 0 or a power of two up to 256 bytes");
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
    engine_ctx *c = plan->ctx;
    api_scope s = scope_in(c);
    return scope_out(c, s, apiplan_execute(plan, "engine_plan_execute", alpha, A, B, beta, C, stream));
}

size_t engine_plan_workspace_size(const engine_plan *plan) { return plan ? apiplan_workspace_bytes(plan) : 0; }

engine_status engine_plan_execute_ws(const engine_plan *plan, double alpha, const void *A, const void *B, double beta,
                                     void *C, void *workspace, size_t workspace_bytes, engine_stream stream)
{
    if (!plan)
        return api_fail_text(ENGINE_ERROR_INVALID_ARGUMENT, "engine_plan_execute_ws", "plan is a null pointer");
    engine_ctx *c = plan->ctx;
    api_scope s = scope_in(c);
    return scope_out(c, s,
                     apiplan_execute_ws(plan, "engine_plan_execute_ws", alpha, A, B, beta, C, workspace, workspace_bytes,
                                        true, stream));
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
    api_scope s = scope_in(c);
    return scope_out(c, s, apicall_gemm(c, &p, d->fn, alpha, A, B, beta, C, stream));
}

engine_status engine_gemm(engine_ctx *c, const engine_plan_desc *desc, double alpha, const void *A, const void *B,
                          double beta, void *C, engine_stream stream)
{
    engine_plan_desc room;
    engine_status st;
    if (!(desc = desc_in("engine_gemm", desc, &room, &st)))
        return st;
    apiarg_desc d;
    desc_of(&d, "engine_gemm", desc);
    return gemm(c, &d, alpha, A, B, beta, C, stream);
}

engine_status engine_gemm_describe(engine_ctx *c, const engine_plan_desc *desc, const void *A, const void *B,
                                   const void *C, int wait, char *buf, size_t len, size_t *needed)
{
    const char *fn = "engine_gemm_describe";
    engine_plan_desc room;
    apiarg_problem p;
    engine_status st = problem_of(fn, c, &desc, &room, &p);
    if (st)
        return st;
    err_t err;
    err_clear(&err);
    if ((st = apiarg_check_pointers(fn, &p, A, B, C, &err)) != ENGINE_SUCCESS)
        return api_fail(st, &err);
    char *json = NULL;
    api_scope s = scope_in(c);
    st = scope_out(c, s, apicall_describe(c, &p, fn, A, B, C, wait != 0, &json));
    if (st)
        return st;
    size_t n = strlen(json);
    if (needed)
        *needed = n;
    if (buf && len) {
        size_t k = n < len - 1 ? n : len - 1;
        memcpy(buf, json, k);
        buf[k] = '\0';
    }
    free(json);
    return ENGINE_SUCCESS;
}

engine_status engine_wait(engine_ctx *c)
{
    if (!c)
        return api_fail_text(ENGINE_ERROR_INVALID_ARGUMENT, "engine_wait", "ctx is a null pointer");
    api_scope s = scope_in(c);
    return scope_out(c, s, apicall_wait(c));
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

engine_status engine_gemm_ex(engine_ctx *c, engine_dtype dtype, engine_order order, engine_transpose transa,
                             engine_transpose transb, int64_t m, int64_t n, int64_t k, double alpha, const void *A,
                             int64_t lda, const void *B, int64_t ldb, double beta, void *C, int64_t ldc,
                             engine_stream stream)
{
    apiarg_desc d = {.fn = "engine_gemm_ex", .dtype = dtype, .order = order, .transa = transa, .transb = transb,
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

typedef struct {
    engine_warm_progress fn;
    void *user;
} warm_cb;

static void warm_report(void *user, const warm_stats *st, const char *label)
{
    const warm_cb *cb = user;
    cb->fn(cb->user, st->done, st->total, label);
}

engine_status engine_warm(engine_ctx *c, int jobs, engine_warm_progress progress, void *user)
{
    const char *fn = "engine_warm";
    if (!c)
        return api_fail_text(ENGINE_ERROR_INVALID_ARGUMENT, fn, "ctx is a null pointer");
    if (!c->have_cache)
        return api_fail_text(ENGINE_ERROR_CONFIG, fn, "the context has no CUBIN cache directory to fill");
    pick_t *picks[2 * 4 * 2];
    size_t n = 0;
    err_t err;
    err_clear(&err);
    err_t oom;
    err_clear(&oom);
    pthread_mutex_lock(&c->lock);
    for (int d = 0; d < 2; d++)
        for (int op = 0; op < 4; op++)
            for (int b = 0; b < 2; b++) {
                err_t e;
                err_clear(&e);
                pick_t *pk = apiplan_pick(c, d ? DTYPE_F64 : DTYPE_F32, op, b, fn, &e);
                if (pk)
                    picks[n++] = pk;
                else if (e.cause == ERR_ALLOC && !err_isset(&oom))
                    oom = e; /* not a pick without wisdom: warming the others would leave these out */
                else if (!err_isset(&err))
                    err = e;
            }
    pthread_mutex_unlock(&c->lock);
    if (err_isset(&oom))
        return api_fail(ENGINE_ERROR_OUT_OF_MEMORY, &oom);
    if (!n)
        return api_fail(err.cause == ERR_ALLOC ? ENGINE_ERROR_OUT_OF_MEMORY : ENGINE_ERROR_CONFIG, &err);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    warm_cb cb = {progress, user};
    warm_stats st;
    err_t first;
    err_clear(&first);
    /* The picks are the context's and stay (nothing frees them before engine_destroy). */
    int wr = warm_run(c->jit, picks, n, c->smem_limit, jobs > 0 ? jobs : cores > 0 ? (int)cores : 1,
                      progress ? warm_report : NULL, &cb, &st, &first);
    if (wr == -2) { /* no host memory for the list of kernels or the threads: nothing was prepared */
        snprintf(first.source, sizeof first.source, "%s", fn);
        return api_fail(ENGINE_ERROR_OUT_OF_MEMORY, &first);
    }
    if (wr)
        return api_fail(ENGINE_ERROR_COMPILE, &first);
    return ENGINE_SUCCESS;
}
