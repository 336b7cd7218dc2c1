/* gpu_lib.c — libengine on the GPU, built as a user's program (engine.h, libengine.so, cuBLAS as the
 * reference). Run by tests/gpu.sh's library section and build/lib_gpu.sh.
 * Long: one program, built against the installed header and library as a user's would be, so that
 * the GPU suite links one binary; its modes share the case tables and the cuBLAS reference.
 *
 *   gpu_lib check [SHAPES]   every op (NN NT TN TT) x shapes (default 1x1x1,17x33x5,127x129x131,
 *                            1000x1001x999, and 33x17x0: C = beta C) x beta 0 / 0.5 x f32 / f64 x row / column-major x
 *                            {packed, lds padded by 3, a batch of 3 with padded strides}, half through
 *                            engine_[sd]gemm*, half through a plan, against cuBLAS; C's padding must be
 *                            left as it was (NaN where beta = 0: an unwritten element fails too)
 *   gpu_lib threads          the same cases (1x1x1 to 127x129x131) split over two host threads, each on
 *                            its own stream, on one context at once
 *   gpu_lib overhead         host time per engine_plan_execute at 64^3 f32, median of 10000 back-to-back
 *                            calls, cublasSgemm's beside it
 *   gpu_lib tc32             on an sm_90 GPU: f32 NN at 1024^3 and 2048x4096x4096, row- and column-major, beta 0 /
 *                            0.5, through a plan whose description must name a tc32 config (wisdom's
 *                            3xTF32 entries there, built for sm_90a by the library as by the CLI), against cuBLAS
 *   gpu_lib async DIR        a new problem's first call (2048x2048x512 f32) with DIR as the cache: its wall
 *                            time beside cuBLAS's, its path (cuBLAS while the kernel builds), then
 *                            engine_wait and the engine's kernel; run twice on one DIR: cold, then warm
 *   gpu_lib capture          a never-called problem captured into a CUDA graph (records cuBLAS), then,
 *                            after engine_wait, captured again (records the engine's kernel); both replayed
 *                            and checked against cuBLAS
 *   gpu_lib firstcall DIR    with DIR as the CUBIN cache, a new context's first plan (64^3 f32: wisdom
 *                            loaded), then the first call of another config (2048^3): each plan's
 *                            origin and NVRTC time, the wall time of create + first execute + sync
 * Each prints "ok ..." / "FAIL ..." lines and ends with "N passed, N failed"; exit 1 on a failure.
 */
#define _GNU_SOURCE
#include <engine.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    int f64, order, ta, tb;
    int m, n, k;
    int pad, batch;
    double beta;
    int via_plan;
} tcase;

static engine_ctx *g_ctx;
/* What the last plan of this thread ran (engine_plan_describe), for a failure's line. */
static __thread char t_plan[1024];
static pthread_mutex_t g_print = PTHREAD_MUTEX_INITIALIZER;

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Stored rows x cols of a matrix and the length its ld must reach, in the case's order. */
static void stored(const tcase *c, char which, int64_t *rows, int64_t *cols)
{
    int64_t r = which == 'A' ? (c->ta ? c->k : c->m) : which == 'B' ? (c->tb ? c->n : c->k) : c->m;
    int64_t cl = which == 'A' ? (c->ta ? c->m : c->k) : which == 'B' ? (c->tb ? c->k : c->n) : c->n;
    *rows = r, *cols = cl;
}

typedef struct {
    int64_t ld, size, stride, total; /* elements */
} mat;

static mat mat_of(const tcase *c, char which)
{
    int64_t r, cl;
    stored(c, which, &r, &cl);
    int row = c->order == ENGINE_ROW_MAJOR;
    int64_t inner = row ? cl : r, outer = row ? r : cl;
    mat x;
    x.ld = (inner > 0 ? inner : 1) + c->pad;
    x.size = outer * x.ld;
    x.stride = c->batch > 1 ? x.size + 5 : 0; /* a stride that is not the packed one */
    x.total = x.size + (c->batch - 1) * x.stride;
    if (x.total < 1)
        x.total = 1;
    return x;
}

static void fill(void *h, int f64, int64_t n, uint64_t seed)
{
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        double v = (double)(seed >> 11) / 9007199254740992.0 * 2 - 1;
        if (f64)
            ((double *)h)[i] = v;
        else
            ((float *)h)[i] = (float)v;
    }
}

static void absolute(void *dst, const void *src, int f64, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        if (f64)
            ((double *)dst)[i] = fabs(((const double *)src)[i]);
        else
            ((float *)dst)[i] = fabsf(((const float *)src)[i]);
    }
}

static double get(const void *h, int f64, int64_t i) { return f64 ? ((const double *)h)[i] : ((const float *)h)[i]; }

/* cuBLAS in the case's order: row-major is the column-major product with A and B swapped. */
static cublasStatus_t reference(cublasHandle_t h, const tcase *c, double alpha, const void *A, const mat *ma,
                                const void *B, const mat *mb, double beta, void *C, const mat *mc)
{
    cublasOperation_t oa = c->ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = c->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cudaDataType t = c->f64 ? CUDA_R_64F : CUDA_R_32F;
    cublasComputeType_t ct = c->f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F_PEDANTIC;
    float af = (float)alpha, bf = (float)beta;
    const void *pa = c->f64 ? (const void *)&alpha : &af, *pb = c->f64 ? (const void *)&beta : &bf;
    if (c->order == ENGINE_ROW_MAJOR)
        return cublasGemmStridedBatchedEx(h, ob, oa, c->n, c->m, c->k, pa, B, t, (int)mb->ld, mb->stride, A, t,
                                          (int)ma->ld, ma->stride, pb, C, t, (int)mc->ld, mc->stride, c->batch, ct,
                                          CUBLAS_GEMM_DEFAULT);
    return cublasGemmStridedBatchedEx(h, oa, ob, c->m, c->n, c->k, pa, A, t, (int)ma->ld, ma->stride, B, t,
                                      (int)mb->ld, mb->stride, pb, C, t, (int)mc->ld, mc->stride, c->batch, ct,
                                      CUBLAS_GEMM_DEFAULT);
}

static engine_status run_engine(const tcase *c, double alpha, const void *A, const mat *ma, const void *B,
                                const mat *mb, double beta, void *C, const mat *mc, cudaStream_t s)
{
    if (c->via_plan) {
        engine_plan_desc d;
        engine_plan_desc_init(&d, c->f64 ? ENGINE_F64 : ENGINE_F32, c->order, c->ta ? ENGINE_TRANS : ENGINE_NO_TRANS,
                              c->tb ? ENGINE_TRANS : ENGINE_NO_TRANS, c->m, c->n, c->k);
        d.lda = ma->ld, d.ldb = mb->ld, d.ldc = mc->ld;
        d.batch = c->batch, d.stride_a = ma->stride, d.stride_b = mb->stride, d.stride_c = mc->stride;
        engine_plan *p;
        engine_status st = engine_plan_create(g_ctx, &d, &p);
        if (st)
            return st;
        engine_plan_describe(p, t_plan, sizeof t_plan);
        st = engine_plan_execute(p, alpha, A, B, beta, C, s);
        cudaStreamSynchronize(s); /* the plan may go only after its work ran: it owns nothing queued, but be plain */
        engine_plan_destroy(p);
        return st;
    }
    engine_transpose ta = c->ta ? ENGINE_TRANS : ENGINE_NO_TRANS, tb = c->tb ? ENGINE_TRANS : ENGINE_NO_TRANS;
    if (c->f64)
        return engine_dgemm_strided_batched(g_ctx, c->order, ta, tb, c->m, c->n, c->k, alpha, A, ma->ld, ma->stride,
                                            B, mb->ld, mb->stride, beta, C, mc->ld, mc->stride, c->batch, s);
    if (c->batch == 1)
        return engine_sgemm(g_ctx, c->order, ta, tb, c->m, c->n, c->k, (float)alpha, A, ma->ld, B, mb->ld,
                            (float)beta, C, mc->ld, s);
    return engine_sgemm_strided_batched(g_ctx, c->order, ta, tb, c->m, c->n, c->k, (float)alpha, A, ma->ld,
                                        ma->stride, B, mb->ld, mb->stride, (float)beta, C, mc->ld, mc->stride,
                                        c->batch, s);
}

/* After engine_wait, a call of c must take the engine's own kernel (engine_gemm_describe, not waiting). */
static int path_is_engine(const tcase *c, const mat *ma, const mat *mb, const mat *mc, const void *A, const void *B,
                          const void *C, char *why, size_t wlen)
{
    engine_plan_desc d;
    engine_plan_desc_init(&d, c->f64 ? ENGINE_F64 : ENGINE_F32, c->order, c->ta ? ENGINE_TRANS : ENGINE_NO_TRANS,
                          c->tb ? ENGINE_TRANS : ENGINE_NO_TRANS, c->m, c->n, c->k);
    d.lda = ma->ld, d.ldb = mb->ld, d.ldc = mc->ld;
    d.batch = c->batch, d.stride_a = ma->stride, d.stride_b = mb->stride, d.stride_c = mc->stride;
    if (engine_gemm_describe(g_ctx, &d, A, B, C, 0, t_plan, sizeof t_plan, NULL)) {
        snprintf(why, wlen, "engine_gemm_describe: %s", engine_last_error(g_ctx));
        return 0;
    }
    if (!strstr(t_plan, "\"path\":\"engine\"")) {
        snprintf(why, wlen, "after engine_wait the call does not run the engine's kernel: %.300s", t_plan);
        return 0;
    }
    return 1;
}

/* One case: 0 when every element of every C is within the bound and the padding is untouched. */
static int run_case(const tcase *c, cublasHandle_t h, cudaStream_t s, char *why, size_t wlen)
{
    int es = c->f64 ? 8 : 4;
    mat ma = mat_of(c, 'A'), mb = mat_of(c, 'B'), mc = mat_of(c, 'C');
    size_t bA = ma.total * es, bB = mb.total * es, bC = mc.total * es;
    void *hA = malloc(bA), *hB = malloc(bB), *hC0 = malloc(bC), *hGot = malloc(bC), *hRef = malloc(bC), *hS = malloc(bC);
    void *tmpA = malloc(bA), *tmpB = malloc(bB), *tmpC = malloc(bC);
    fill(hA, c->f64, ma.total, 1 + c->m), fill(hB, c->f64, mb.total, 2 + c->n), fill(hC0, c->f64, mc.total, 3 + c->k);
    void *A, *B, *C, *R;
    int rc = 1;
    double alpha = 1.25;
    cudaMalloc(&A, bA), cudaMalloc(&B, bB), cudaMalloc(&C, bC), cudaMalloc(&R, bC);
    /* The bound S = |alpha| |A||B| + |beta| |C0| by cuBLAS on absolute values (as engine verify does). */
    absolute(tmpA, hA, c->f64, ma.total), absolute(tmpB, hB, c->f64, mb.total), absolute(tmpC, hC0, c->f64, mc.total);
    /* Everything on the case's stream (non-blocking: the legacy stream would not order it). */
    cudaMemcpyAsync(A, tmpA, bA, cudaMemcpyHostToDevice, s), cudaMemcpyAsync(B, tmpB, bB, cudaMemcpyHostToDevice, s);
    cudaMemcpyAsync(R, tmpC, bC, cudaMemcpyHostToDevice, s);
    cublasSetStream(h, s);
    if (reference(h, c, fabs(alpha), A, &ma, B, &mb, fabs(c->beta), R, &mc) != CUBLAS_STATUS_SUCCESS) {
        snprintf(why, wlen, "cuBLAS refused the bound's product");
        goto out;
    }
    cudaMemcpyAsync(hS, R, bC, cudaMemcpyDeviceToHost, s);
    cudaMemcpyAsync(A, hA, bA, cudaMemcpyHostToDevice, s), cudaMemcpyAsync(B, hB, bB, cudaMemcpyHostToDevice, s);
    cudaMemcpyAsync(R, hC0, bC, cudaMemcpyHostToDevice, s);
    if (c->beta == 0) /* NaN everywhere: beta = 0 must overwrite, and padding must stay NaN */
        for (int64_t i = 0; i < mc.total; i++) {
            if (c->f64)
                ((double *)hC0)[i] = NAN;
            else
                ((float *)hC0)[i] = NAN;
        }
    cudaMemcpyAsync(C, hC0, bC, cudaMemcpyHostToDevice, s);
    if (reference(h, c, alpha, A, &ma, B, &mb, c->beta, R, &mc) != CUBLAS_STATUS_SUCCESS) {
        snprintf(why, wlen, "cuBLAS refused the product");
        goto out;
    }
    /* A call's first run takes whichever path the library gives it (cuBLAS while its kernel builds,
     * with async jit); after engine_wait the second must run the engine's kernel, and both must pass. */
    int bad = 0;
    for (int pass = 0; pass < (c->via_plan ? 1 : 2) && !bad; pass++) {
        if (pass == 1) {
            if (engine_wait(g_ctx)) {
                snprintf(why, wlen, "engine_wait: %s", engine_last_error(g_ctx));
                goto out;
            }
            cudaMemcpyAsync(C, hC0, bC, cudaMemcpyHostToDevice, s);
            if (!path_is_engine(c, &ma, &mb, &mc, A, B, C, why, wlen))
                goto out;
        }
        engine_status st = run_engine(c, alpha, A, &ma, B, &mb, c->beta, C, &mc, s);
        if (st) {
            snprintf(why, wlen, "%s: %s", engine_status_string(st), engine_last_error(g_ctx));
            goto out;
        }
        cudaMemcpyAsync(hGot, C, bC, cudaMemcpyDeviceToHost, s);
        cudaMemcpyAsync(hRef, R, bC, cudaMemcpyDeviceToHost, s);
        cudaError_t ce = cudaStreamSynchronize(s);
        if (ce != cudaSuccess) {
            snprintf(why, wlen, "CUDA: %s", cudaGetErrorString(ce));
            goto out;
        }
        /* Each C element: |got - ref| <= 2 (k + 2) u S (both are sums of k products, rounded). */
        double u = c->f64 ? 1.1102230246251565e-16 : 5.9604644775390625e-08;
        int row = c->order == ENGINE_ROW_MAJOR;
        int64_t outer = row ? c->m : c->n, inner = row ? c->n : c->m;
        for (int b = 0; b < c->batch && !bad; b++)
            for (int64_t o = 0; o < outer && !bad; o++)
                for (int64_t i = 0; i < mc.ld; i++) {
                    int64_t at = b * mc.stride + o * mc.ld + i;
                    double got = get(hGot, c->f64, at);
                    if (i >= inner) { /* padding: exactly as it was (memcmp: NaN compares unequal) */
                        if (memcmp((char *)hGot + at * es, (char *)hC0 + at * es, es) != 0) {
                            snprintf(why, wlen, "padding element %lld of C (batch %d) was written: %g", (long long)at, b, got);
                            bad = 1;
                            break;
                        }
                        continue;
                    }
                    double ref = get(hRef, c->f64, at), tol = 2.0 * (c->k + 2) * u * get(hS, c->f64, at) + 1e-300;
                    if (!(fabs(got - ref) <= tol)) { /* NaN fails */
                        snprintf(why, wlen, "C[%d][%lld][%lld] = %.17g, cuBLAS %.17g (bound %.3g)", b, (long long)o,
                                 (long long)i, got, ref, tol);
                        bad = 1;
                        break;
                    }
                }
    }
    rc = bad;
out:
    cudaFree(A), cudaFree(B), cudaFree(C), cudaFree(R);
    free(hA), free(hB), free(hC0), free(hGot), free(hRef), free(hS), free(tmpA), free(tmpB), free(tmpC);
    return rc;
}

static void case_name(const tcase *c, char *buf, size_t len)
{
    snprintf(buf, len, "%s %s %c%c %dx%dx%d beta=%g pad=%d batch=%d %s", c->f64 ? "f64" : "f32",
             c->order == ENGINE_ROW_MAJOR ? "row" : "col", c->ta ? 'T' : 'N', c->tb ? 'T' : 'N', c->m, c->n, c->k,
             c->beta, c->pad, c->batch, c->via_plan ? "plan" : "call");
}

static tcase *make_cases(const char *shapes, size_t *n)
{
    tcase *v = NULL;
    *n = 0;
    char *copy = strdup(shapes), *save = NULL;
    const int layouts[3][2] = {{0, 1}, {3, 1}, {0, 3}}; /* pad, batch */
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int m, nn, k;
        if (sscanf(tok, "%dx%dx%d", &m, &nn, &k) != 3)
            continue;
        for (int f64 = 0; f64 < 2; f64++)
            for (int order = ENGINE_ROW_MAJOR; order <= ENGINE_COL_MAJOR; order++)
                for (int op = 0; op < 4; op++)
                    for (int beta = 0; beta < 2; beta++)
                        for (int l = 0; l < 3; l++) {
                            v = realloc(v, (*n + 1) * sizeof *v);
                            v[*n] = (tcase){f64, order, op >> 1, op & 1, m, nn, k, layouts[l][0], layouts[l][1],
                                            beta ? 0.5 : 0.0, (int)(*n % 2)};
                            (*n)++;
                        }
    }
    free(copy);
    return v;
}

typedef struct {
    tcase *cases;
    size_t n, first, step;
    int pass, fail;
} worker;

static void *run_cases(void *arg)
{
    worker *w = arg;
    cublasHandle_t h;
    cudaStream_t s;
    cublasCreate(&h);
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    for (size_t i = w->first; i < w->n; i += w->step) {
        char name[160], why[512] = "";
        case_name(&w->cases[i], name, sizeof name);
        t_plan[0] = '\0';
        int bad = run_case(&w->cases[i], h, s, why, sizeof why);
        pthread_mutex_lock(&g_print);
        if (bad && t_plan[0])
            printf("FAIL %s: %s; the plan: %s\n", name, why, t_plan);
        else if (bad)
            printf("FAIL %s: %s\n", name, why);
        else
            printf("ok %s\n", name);
        fflush(stdout);
        pthread_mutex_unlock(&g_print);
        w->pass += !bad, w->fail += bad;
    }
    cudaStreamDestroy(s);
    cublasDestroy(h);
    return NULL;
}

/* The floor under any library's call: the driver's launch of an empty kernel (PTX loaded here), plain
 * and with the programmatic-serialization attribute the engine's kernels launch with on sm_90.
 * Median host microseconds over calls launches on stream s; < 0 where the driver cannot be had. */
typedef int (*cu_mod_load_fn)(void **, const void *);
typedef int (*cu_mod_fn_fn)(void **, void *, const char *);
typedef int (*cu_launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                            void **, void **);
static double launch_floor(cudaStream_t s, int calls)
{
    static const char ptx[] = ".version 7.0\n.target sm_80\n.address_size 64\n"
                              ".visible .entry empty(.param .u64 p)\n{\n ret;\n}\n";
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    cu_mod_load_fn load = lib ? (cu_mod_load_fn)dlsym(lib, "cuModuleLoadData") : NULL;
    cu_mod_fn_fn getf = lib ? (cu_mod_fn_fn)dlsym(lib, "cuModuleGetFunction") : NULL;
    cu_launch_fn launch = lib ? (cu_launch_fn)dlsym(lib, "cuLaunchKernel") : NULL;
    void *mod = NULL, *f = NULL;
    if (!load || !getf || !launch || load(&mod, ptx) || getf(&f, mod, "empty"))
        return -1;
    unsigned long long arg = 0;
    void *args[] = {&arg};
    double *t = malloc(calls * sizeof *t);
    for (int i = 0; i < 100; i++)
        launch(f, 1, 1, 1, 32, 1, 1, 0, s, args, NULL);
    cudaStreamSynchronize(s);
    for (int i = 0; i < calls; i++) {
        double t0 = now_us();
        launch(f, 1, 1, 1, 32, 1, 1, 0, s, args, NULL);
        t[i] = now_us() - t0;
    }
    cudaStreamSynchronize(s);
    qsort(t, calls, sizeof *t, cmp_d);
    double med = t[calls / 2];
    free(t);
    return med;
}

static int overhead(void)
{
    const int n = 64, calls = 10000;
    float *A, *B, *C;
    cudaMalloc((void **)&A, n * n * 4), cudaMalloc((void **)&B, n * n * 4), cudaMalloc((void **)&C, n * n * 4);
    cudaMemset(A, 0, n * n * 4), cudaMemset(B, 0, n * n * 4);
    cudaDeviceSynchronize();
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    engine_plan_desc d;
    engine_plan *p;
    engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, n, n, n);
    if (engine_plan_create(g_ctx, &d, &p)) {
        printf("FAIL overhead: %s\n0 passed, 1 failed\n", engine_last_error(g_ctx));
        return 1;
    }
    double *t = malloc(calls * sizeof *t), *tc = malloc(calls * sizeof *tc), *tg = malloc(calls * sizeof *tg);
    int bad = 0;
    for (int i = 0; i < 100; i++) /* warm up */
        bad |= engine_plan_execute(p, 1.0, A, B, 0.0, C, s) != ENGINE_SUCCESS;
    cudaStreamSynchronize(s);
    for (int i = 0; i < calls; i++) {
        double t0 = now_us();
        bad |= engine_plan_execute(p, 1.0, A, B, 0.0, C, s) != ENGINE_SUCCESS;
        t[i] = now_us() - t0;
    }
    /* engine_sgemm's first call queues its build (async jit): wait for it, so the engine's kernel is timed. */
    bad |= engine_sgemm(g_ctx, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n,
                        s) != ENGINE_SUCCESS;
    bad |= engine_wait(g_ctx) != ENGINE_SUCCESS;
    for (int i = 0; i < 100; i++)
        bad |= engine_sgemm(g_ctx, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, n, n, n, 1.0f, A, n, B, n, 0.0f,
                            C, n, s) != ENGINE_SUCCESS;
    cudaStreamSynchronize(s);
    for (int i = 0; i < calls; i++) {
        double t0 = now_us();
        bad |= engine_sgemm(g_ctx, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, n, n, n, 1.0f, A, n, B, n, 0.0f,
                            C, n, s) != ENGINE_SUCCESS;
        tg[i] = now_us() - t0;
    }
    cudaStreamSynchronize(s);
    char text[2048] = "";
    engine_gemm_describe(g_ctx, &d, A, B, C, 0, text, sizeof text, NULL);
    if (!strstr(text, "\"path\":\"engine\"")) {
        printf("FAIL overhead: engine_sgemm did not run the engine's kernel after engine_wait: %.300s\n", text);
        bad = 1;
    }
    double *te = malloc(calls * sizeof *te);
    for (int i = 0; i < calls; i++) {
        double t0 = now_us();
        bad |= engine_gemm(g_ctx, &d, 1.0, A, B, 0.0, C, s) != ENGINE_SUCCESS;
        te[i] = now_us() - t0;
    }
    cudaStreamSynchronize(s);
    qsort(te, calls, sizeof *te, cmp_d);
    cublasHandle_t h;
    cublasCreate(&h);
    cublasSetStream(h, s);
    const float one = 1, zero = 0;
    for (int i = 0; i < 100; i++)
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, B, n, A, n, &zero, C, n);
    cudaStreamSynchronize(s);
    for (int i = 0; i < calls; i++) {
        double t0 = now_us();
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, B, n, A, n, &zero, C, n);
        tc[i] = now_us() - t0;
    }
    cudaStreamSynchronize(s);
    qsort(t, calls, sizeof *t, cmp_d), qsort(tc, calls, sizeof *tc, cmp_d), qsort(tg, calls, sizeof *tg, cmp_d);
    double med = t[calls / 2];
    printf("%s overhead: engine_plan_execute %.2f us median host time per call over %d back-to-back calls at 64^3 "
           "(p90 %.2f), engine_sgemm %.2f, engine_gemm %.2f, cublasSgemm %.2f (target <= 5 us)\n",
           !bad && med <= 5.0 ? "ok" : "FAIL", med, calls, t[calls * 9 / 10], tg[calls / 2], te[calls / 2], tc[calls / 2]);
    double floor_us = launch_floor(s, calls);
    printf("launch floor: cuLaunchKernel of an empty kernel %.2f us median host time per call (the driver's alone)\n",
           floor_us);
    printf("RESULT overhead_us=%.2f sgemm_us=%.2f gemm_us=%.2f cublas_us=%.2f launch_us=%.2f\n", med, tg[calls / 2],
           te[calls / 2], tc[calls / 2], floor_us);
    free(te);
    engine_plan_destroy(p);
    cublasDestroy(h);
    cudaFree(A), cudaFree(B), cudaFree(C);
    int ok = !bad && med <= 5.0;
    printf("%d passed, %d failed\n", ok, !ok);
    return !ok;
}

/* The library's tensor-core path: where wisdom holds tc32_3x entries (f32 NN, 1024^3, 2048x4096x4096
 * on the H100), a plan must choose one (the context builds it for sm_90a, tc32's target) and its
 * result must pass the same bound as every other case. Fails when the plan names another config. */
static int tc32_cases(void)
{
    const int shapes[2][3] = {{1024, 1024, 1024}, {2048, 4096, 4096}};
    cublasHandle_t h;
    cudaStream_t s;
    cublasCreate(&h);
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    int pass = 0, fail = 0;
    for (int i = 0; i < 2; i++)
        for (int order = ENGINE_ROW_MAJOR; order <= ENGINE_COL_MAJOR; order++)
            for (int beta = 0; beta < 2; beta++) {
                tcase c = {0, order, 0, 0, shapes[i][0], shapes[i][1], shapes[i][2], 0, 1, beta ? 0.5 : 0.0, 1};
                char name[160], why[512] = "", text[4096] = "";
                case_name(&c, name, sizeof name);
                engine_plan_desc d;
                engine_plan *p = NULL;
                engine_plan_desc_init(&d, ENGINE_F32, order, ENGINE_NO_TRANS, ENGINE_NO_TRANS, c.m, c.n, c.k);
                int bad = 0;
                if (engine_plan_create(g_ctx, &d, &p)) {
                    snprintf(why, sizeof why, "plan: %s", engine_last_error(g_ctx));
                    bad = 1;
                } else {
                    engine_plan_describe(p, text, sizeof text);
                    engine_plan_destroy(p);
                    if (!strstr(text, "tc32")) {
                        snprintf(why, sizeof why, "the plan chose no tc32 config: %.300s", text);
                        bad = 1;
                    }
                }
                if (!bad)
                    bad = run_case(&c, h, s, why, sizeof why);
                if (bad)
                    printf("FAIL %s: %s\n", name, why);
                else
                    printf("ok %s (tc32 chosen)\n", name);
                pass += !bad, fail += bad;
            }
    cudaStreamDestroy(s);
    cublasDestroy(h);
    printf("%d passed, %d failed\n", pass, fail);
    return fail > 0 || pass == 0;
}

/* Wall time of plan_create + first execute + synchronisation of an f32 NN n^3 plan, its description in text. */
static double first_call(engine_ctx *ctx, int n, float *A, float *B, float *C, char *text, size_t len, int *bad)
{
    engine_plan_desc d;
    engine_plan *p = NULL;
    engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, n, n, n);
    double t0 = now_us();
    engine_status st = engine_plan_create(ctx, &d, &p);
    st = st ? st : engine_plan_execute(p, 1.0, A, B, 0.0, C, NULL);
    cudaError_t ce = cudaDeviceSynchronize();
    double ms = (now_us() - t0) / 1e3;
    if (st || ce != cudaSuccess) {
        printf("FAIL firstcall %d^3: %s %s\n", n, engine_last_error(ctx), cudaGetErrorString(ce));
        *bad = 1;
    }
    if (p)
        engine_plan_describe(p, text, len);
    engine_plan_destroy(p);
    return ms;
}

/* The context's first plan (64^3: wisdom and its candidates loaded) and then the first call of another
 * config (2048^3: its CUBIN from DIR, compiled there by an earlier run, loaded): what a program pays
 * the first time it meets a problem. */
static int firstcall(const char *dir)
{
    engine_options o;
    engine_options_init(&o);
    o.cache_dir = dir;
    double t0 = now_us();
    engine_ctx *ctx;
    if (engine_create(&ctx, &o)) {
        printf("FAIL firstcall: %s\n0 passed, 1 failed\n", engine_last_error(NULL));
        return 1;
    }
    double t_ctx = (now_us() - t0) / 1e3;
    const int n = 2048;
    float *A, *B, *C;
    cudaMalloc((void **)&A, (size_t)n * n * 4), cudaMalloc((void **)&B, (size_t)n * n * 4),
        cudaMalloc((void **)&C, (size_t)n * n * 4);
    cudaDeviceSynchronize();
    char text[4096] = "", small[4096] = "";
    int bad = 0;
    double t_ctx_first = first_call(ctx, 64, A, B, C, small, sizeof small, &bad);
    double t_first = first_call(ctx, n, A, B, C, text, sizeof text, &bad);
    printf("plan 64^3: %s\nplan 2048^3: %s\n", small, text);
    printf("firstcall: context %.1f ms; its first plan (64^3, wisdom loaded) %.2f ms; then the first call of a "
           "config (2048^3: plan_create + execute + sync) %.2f ms\n", t_ctx, t_ctx_first, t_first);
    printf("RESULT first_ms=%.2f ctx_first_ms=%.2f\n", t_first, t_ctx_first);
    engine_destroy(ctx);
    cudaFree(A), cudaFree(B), cudaFree(C);
    printf("%d passed, %d failed\n", !bad, bad);
    return bad;
}

/* max |got - ref| / max |ref| over n floats on the device (0 when they agree; NaN fails as 1e30). */
static double rel_diff(const float *dgot, const float *dref, size_t n)
{
    float *g = malloc(n * 4), *r = malloc(n * 4);
    cudaMemcpy(g, dgot, n * 4, cudaMemcpyDeviceToHost), cudaMemcpy(r, dref, n * 4, cudaMemcpyDeviceToHost);
    double md = 0, mr = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)g[i] - r[i]);
        if (!(d == d))
            d = 1e30;
        md = d > md ? d : md;
        mr = fabs(r[i]) > mr ? fabs(r[i]) : mr;
    }
    free(g), free(r);
    return mr > 0 ? md / mr : md;
}

static void rand_dev(float *d, size_t n, unsigned seed)
{
    float *h = malloc(n * 4);
    srand(seed);
    for (size_t i = 0; i < n; i++)
        h[i] = (float)rand() / RAND_MAX * 2 - 1;
    cudaMemcpy(d, h, n * 4, cudaMemcpyHostToDevice);
    free(h);
}

/* Whether describe of the f32 NN n x n x k call on A, B, C says path (and, when want_why, that why). */
static int path_says(engine_ctx *ctx, int n, int k, const float *A, const float *B, float *C, const char *path,
                     char *text, size_t len)
{
    engine_plan_desc d;
    engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, n, n, k);
    text[0] = '\0';
    if (engine_gemm_describe(ctx, &d, A, B, C, 0, text, len, NULL))
        snprintf(text, len, "engine_gemm_describe: %s", engine_last_error(ctx));
    char want[64];
    snprintf(want, sizeof want, "\"path\":\"%s\"", path);
    return strstr(text, want) != NULL;
}

/* A new problem's first call with a cold cache (DIR fresh) must not wait for NVRTC: its wall time
 * (call + sync) beside cuBLAS's own for the same product, the path it took, then engine_wait's time
 * and the engine's result beside cuBLAS's. A second run with the same DIR (warm cache) times a
 * process's first call (engine_create included) and the wait until its kernel is loaded. */
static int async_first(const char *dir)
{
    const int n = 2048, k = 512;
    cudaFree(0); /* as a program that uses the GPU already (torch) would have it */
    float *A, *B, *C, *R;
    size_t nn = (size_t)n * n, nk = (size_t)n * k;
    cudaMalloc((void **)&A, nk * 4), cudaMalloc((void **)&B, nk * 4), cudaMalloc((void **)&C, nn * 4),
        cudaMalloc((void **)&R, nn * 4);
    rand_dev(A, nk, 1), rand_dev(B, nk, 2);
    cublasHandle_t h;
    cublasCreate(&h);
    const float one = 1, zero = 0;
    for (int i = 0; i < 3; i++)
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, k, &one, B, n, A, k, &zero, R, n);
    cudaDeviceSynchronize();
    double t0 = now_us();
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, k, &one, B, n, A, k, &zero, R, n);
    cudaDeviceSynchronize();
    double cublas_ms = (now_us() - t0) / 1e3;
    engine_options o;
    engine_options_init(&o);
    o.cache_dir = dir;
    int pass = 0, fail = 0;
    t0 = now_us();
    engine_ctx *ctx;
    if (engine_create(&ctx, &o)) {
        printf("FAIL async: %s\n0 passed, 1 failed\n", engine_last_error(NULL));
        return 1;
    }
    double create_ms = (now_us() - t0) / 1e3;
    double t1 = now_us();
    engine_status st = engine_sgemm(ctx, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, n, n, k, 1.0f, A, k, B,
                                    n, 0.0f, C, n, NULL);
    cudaError_t ce = cudaDeviceSynchronize();
    double first_ms = (now_us() - t1) / 1e3, process_first_ms = (now_us() - t0) / 1e3;
    char text[4096];
    int took_cublas = path_says(ctx, n, k, A, B, C, "cublas", text, sizeof text);
    double e1 = rel_diff(C, R, nn);
    int ok = !st && ce == cudaSuccess && e1 <= 1e-5;
    printf("%s async first call 2048x2048x512: %.2f ms (call + sync; engine_create before it %.2f ms), cuBLAS alone "
           "%.2f ms, path now: %.200s; error against cuBLAS %.2g\n",
           ok ? "ok" : "FAIL", first_ms, create_ms, cublas_ms, text, e1);
    pass += ok, fail += !ok;
    t1 = now_us();
    st = engine_wait(ctx);
    double wait_ms = (now_us() - t1) / 1e3;
    cudaMemset(C, 0xff, nn * 4); /* NaN: an unwritten element fails */
    st = st ? st : engine_sgemm(ctx, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, n, n, k, 1.0f, A, k, B, n, 0.0f,
                                C, n, NULL);
    ce = cudaDeviceSynchronize();
    int engine_path = path_says(ctx, n, k, A, B, C, "engine", text, sizeof text);
    double e2 = rel_diff(C, R, nn);
    ok = !st && ce == cudaSuccess && engine_path && e2 <= 1e-4;
    printf("%s after engine_wait (%.1f ms) the engine's kernel runs: %.300s; error against cuBLAS %.2g\n",
           ok ? "ok" : "FAIL", wait_ms, text, e2);
    pass += ok, fail += !ok;
    printf("RESULT first_ms=%.3f cublas_ms=%.3f create_ms=%.2f process_first_ms=%.2f wait_ms=%.1f cublas_first=%d\n",
           first_ms, cublas_ms, create_ms, process_first_ms, wait_ms, took_cublas);
    engine_destroy(ctx);
    cublasDestroy(h);
    cudaFree(A), cudaFree(B), cudaFree(C), cudaFree(R);
    printf("%d passed, %d failed\n", pass, fail);
    return fail > 0;
}

/* CUDA graph capture: a problem never called before, captured, records cuBLAS (no compile, load or
 * allocation inside the capture) and its replay is right; after engine_wait a new capture records the
 * engine's kernel, whose replay is right too. Global capture mode: any forbidden call in any thread fails. */
static int capture(void)
{
    const int n = 384, k = 256;
    float *A, *B, *C, *R;
    size_t nn = (size_t)n * n, nk = (size_t)n * k;
    cudaMalloc((void **)&A, nk * 4), cudaMalloc((void **)&B, nk * 4), cudaMalloc((void **)&C, nn * 4),
        cudaMalloc((void **)&R, nn * 4);
    rand_dev(A, nk, 3), rand_dev(B, nk, 4);
    cublasHandle_t h;
    cublasCreate(&h);
    const float one = 1, zero = 0;
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, k, &one, B, n, A, k, &zero, R, n);
    cudaDeviceSynchronize();
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    int pass = 0, fail = 0;
    for (int round = 0; round < 2; round++) {
        if (round == 1 && engine_wait(g_ctx)) {
            printf("FAIL engine_wait: %s\n", engine_last_error(g_ctx));
            fail++;
            break;
        }
        cudaGraph_t g = NULL;
        cudaGraphExec_t ge = NULL;
        cudaMemset(C, 0xff, nn * 4);
        cudaDeviceSynchronize();
        cudaError_t ce = cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
        engine_status st = engine_sgemm(g_ctx, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, n, n, k, 1.0f, A, k,
                                        B, n, 0.0f, C, n, s);
        char err[512] = "";
        if (st)
            snprintf(err, sizeof err, "%s", engine_last_error(g_ctx));
        cudaError_t ce2 = cudaStreamEndCapture(s, &g);
        cudaError_t ce3 = ce2 == cudaSuccess ? cudaGraphInstantiate(&ge, g, 0) : ce2;
        cudaError_t ce4 = ce3 == cudaSuccess ? cudaGraphLaunch(ge, s) : ce3;
        cudaError_t ce5 = cudaStreamSynchronize(s);
        char text[4096];
        const char *want = round == 0 ? "cublas" : "engine";
        int path_ok = path_says(g_ctx, n, k, A, B, C, want, text, sizeof text);
        double e = rel_diff(C, R, nn);
        int ok = ce == cudaSuccess && !st && ce2 == cudaSuccess && ce3 == cudaSuccess && ce4 == cudaSuccess &&
                 ce5 == cudaSuccess && path_ok && e <= 1e-4;
        printf("%s capture %s: engine_sgemm captured, the graph replayed, path %s (%.200s), error against cuBLAS %.2g%s%s "
               "[%s %s %s %s %s]\n",
               ok ? "ok" : "FAIL", round == 0 ? "before the kernel is built" : "after engine_wait", want, text, e,
               err[0] ? "; " : "", err, cudaGetErrorString(ce), cudaGetErrorString(ce2), cudaGetErrorString(ce3),
               cudaGetErrorString(ce4), cudaGetErrorString(ce5));
        pass += ok, fail += !ok;
        if (ge)
            cudaGraphExecDestroy(ge);
        if (g)
            cudaGraphDestroy(g);
        cudaGetLastError();
    }
    cudaStreamDestroy(s);
    cublasDestroy(h);
    cudaFree(A), cudaFree(B), cudaFree(C), cudaFree(R);
    printf("%d passed, %d failed\n", pass, fail);
    return fail > 0 || pass == 0;
}

/* The caller's current CUDA context is given back (engine.h): none current, then a context of the
 * test's own (not the primary one engine computes in), each around calls on both paths (cuBLAS
 * while the kernel builds, the engine's after engine_wait), a plan execute and a describe; the
 * products right. The driver is opened here by dlopen (the test links only the runtime). */
typedef int (*cu_ctx_get_fn)(void **);
typedef int (*cu_ctx_set_fn)(void *);
typedef int (*cu_ctx_create_fn)(void **, unsigned, int);
typedef int (*cu_ctx_destroy_fn)(void *);
static int ctx_restore(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    cu_ctx_get_fn get = lib ? (cu_ctx_get_fn)dlsym(lib, "cuCtxGetCurrent") : NULL;
    cu_ctx_set_fn set = lib ? (cu_ctx_set_fn)dlsym(lib, "cuCtxSetCurrent") : NULL;
    cu_ctx_create_fn create = lib ? (cu_ctx_create_fn)dlsym(lib, "cuCtxCreate_v2") : NULL;
    cu_ctx_destroy_fn destroy = lib ? (cu_ctx_destroy_fn)dlsym(lib, "cuCtxDestroy_v2") : NULL;
    if (!get || !set || !create || !destroy) {
        printf("FAIL the driver's context calls: %s\n0 passed, 1 failed\n", dlerror());
        return 1;
    }
    const int n = 200, k = 72;
    float *A, *B, *C, *R;
    size_t nn = (size_t)n * n, nk = (size_t)n * k;
    cudaMalloc((void **)&A, nk * 4), cudaMalloc((void **)&B, nk * 4), cudaMalloc((void **)&C, nn * 4),
        cudaMalloc((void **)&R, nn * 4);
    rand_dev(A, nk, 5), rand_dev(B, nk, 6);
    cublasHandle_t h;
    cublasCreate(&h);
    const float one = 1, zero = 0;
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, k, &one, B, n, A, k, &zero, R, n);
    cudaDeviceSynchronize();
    void *primary = NULL, *mine = NULL;
    get(&primary);
    engine_plan_desc d;
    engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, n, n, k);
    engine_plan *plan = NULL;
    int pass = 0, fail = 0;
    for (int who = 0; who < 2; who++) {
        if (who == 1 && create(&mine, 0, 0) != 0) { /* current on this thread from here */
            printf("FAIL cuCtxCreate\n");
            fail++;
            break;
        }
        void *want = who == 0 ? NULL : mine;
        const char *name = who == 0 ? "no context" : "the caller's own context";
        for (int step = 0; step < 5; step++) {
            set(want);
            engine_status st = ENGINE_SUCCESS;
            char text[256];
            size_t need;
            if (step == 0 || step == 2) /* first call (cuBLAS, or the kernel loaded in round 2) */
                st = engine_sgemm(g_ctx, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, n, n, k, 1.0f, A, k, B, n,
                                  0.0f, C, n, NULL);
            else if (step == 1)
                st = engine_wait(g_ctx);
            else if (step == 3)
                st = plan ? engine_plan_execute(plan, 1.0, A, B, 0.0, C, NULL) : engine_plan_create(g_ctx, &d, &plan);
            else
                st = engine_gemm_describe(g_ctx, &d, A, B, C, 1, text, sizeof text, &need);
            void *now = (void *)1;
            get(&now);
            int ok = !st && now == want;
            if (ok && (step == 0 || step == 2 || (step == 3 && who == 1))) {
                set(primary);
                cudaDeviceSynchronize();
                double e = rel_diff(C, R, nn);
                ok = e < 1e-5;
                if (!ok)
                    printf("FAIL %s, step %d: product off by %.3g\n", name, step, e);
                cudaMemset(C, 0xff, nn * 4);
                cudaDeviceSynchronize();
            }
            if (ok)
                pass++;
            else {
                fail++;
                printf("FAIL %s, step %d: status %d (%s), current after the call %p, before %p\n", name, step, (int)st,
                       st ? engine_last_error(g_ctx) : "", now, want);
            }
        }
    }
    set(primary);
    if (mine)
        destroy(mine);
    set(primary);
    engine_plan_destroy(plan);
    cublasDestroy(h);
    cudaFree(A), cudaFree(B), cudaFree(C), cudaFree(R);
    printf("%d passed, %d failed\n", pass, fail);
    return fail > 0 || pass == 0;
}

/* The caller's workspace: a forced two-pass split-K config (SPLITK_MODE 1 keeps partial tiles in
 * the workspace) run by engine_plan_execute_ws on a buffer of exactly engine_plan_workspace_size
 * bytes, against cuBLAS; a short one refused with nothing launched (C untouched). */
static int workspace(void)
{
    const int m = 256, n = 384, k = 4096;
    const char *cfg = "{\"name\": \"two_pass\", \"template\": \"warptile\", \"dtype\": \"f32\", \"params\": {"
                      "\"BM\": 128, \"BN\": 128, \"BK\": 8, \"WM\": 32, \"WN\": 64, \"WNITER\": 2, \"TM\": 4, \"TN\": 8, "
                      "\"THREADS\": 256, \"DB\": 3, \"SPLITK\": 4, \"SPLITK_MODE\": 1}}";
    int pass = 0, fail = 0;
    if (engine_set_config(g_ctx, cfg)) {
        printf("FAIL engine_set_config: %s\n0 passed, 1 failed\n", engine_last_error(g_ctx));
        return 1;
    }
    float *A, *B, *C, *R;
    void *W;
    cudaMalloc((void **)&A, (size_t)m * k * 4), cudaMalloc((void **)&B, (size_t)k * n * 4),
        cudaMalloc((void **)&C, (size_t)m * n * 4), cudaMalloc((void **)&R, (size_t)m * n * 4);
    rand_dev(A, (size_t)m * k, 7), rand_dev(B, (size_t)k * n, 8);
    cublasHandle_t h;
    cublasCreate(&h);
    const float one = 1, zero = 0;
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, B, n, A, k, &zero, R, n);
    engine_plan_desc d;
    engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, m, n, k);
    engine_plan *plan = NULL;
    engine_status st = engine_plan_create(g_ctx, &d, &plan);
    size_t need = plan ? engine_plan_workspace_size(plan) : 0;
    if (st || need != (size_t)4 * m * n * 4) {
        printf("FAIL plan: status %d (%s), workspace %zu bytes\n", (int)st, st ? engine_last_error(g_ctx) : "", need);
        fail++;
    } else {
        cudaMalloc(&W, need);
        cudaMemset(C, 0, (size_t)m * n * 4);
        cudaDeviceSynchronize();
        st = engine_plan_execute_ws(plan, 1.0, A, B, 0.0, C, W, need - 256, NULL);
        cudaDeviceSynchronize();
        double untouched = rel_diff(C, R, (size_t)m * n); /* C is still zero: far from R */
        if (st == ENGINE_ERROR_INVALID_ARGUMENT && untouched > 0.5)
            pass++;
        else {
            printf("FAIL a short workspace: status %d, C moved (%.3g from R)\n", (int)st, untouched);
            fail++;
        }
        st = engine_plan_execute_ws(plan, 1.0, A, B, 0.0, C, W, need, NULL);
        cudaDeviceSynchronize();
        double e = rel_diff(C, R, (size_t)m * n);
        if (!st && e < 1e-5)
            pass++;
        else {
            printf("FAIL execute_ws: status %d (%s), off by %.3g\n", (int)st, st ? engine_last_error(g_ctx) : "", e);
            fail++;
        }
        cudaFree(W);
    }
    engine_plan_destroy(plan);
    engine_set_config(g_ctx, NULL);
    cublasDestroy(h);
    cudaFree(A), cudaFree(B), cudaFree(C), cudaFree(R);
    printf("%d passed, %d failed\n", pass, fail);
    return fail > 0 || pass == 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "check";
    if (strcmp(mode, "firstcall") == 0)
        return firstcall(argc > 2 ? argv[2] : "/tmp/engine-firstcall");
    if (strcmp(mode, "async") == 0)
        return async_first(argc > 2 ? argv[2] : "/tmp/engine-async");
    cudaFree(0); /* the runtime's context first: engine must find and share it */
    if (engine_create(&g_ctx, NULL)) {
        printf("FAIL engine_create: %s\n0 passed, 1 failed\n", engine_last_error(NULL));
        return 1;
    }
    int rc;
    if (strcmp(mode, "overhead") == 0) {
        rc = overhead();
    } else if (strcmp(mode, "tc32") == 0) {
        rc = tc32_cases();
    } else if (strcmp(mode, "capture") == 0) {
        rc = capture();
    } else if (strcmp(mode, "ctx") == 0) {
        rc = ctx_restore();
    } else if (strcmp(mode, "ws") == 0) {
        rc = workspace();
    } else {
        int threads = strcmp(mode, "threads") == 0 ? 2 : 1;
        const char *def = threads == 2 ? "1x1x1,17x33x5,127x129x131" : "1x1x1,17x33x5,127x129x131,1000x1001x999,33x17x0";
        size_t n;
        tcase *cases = make_cases(argc > 2 ? argv[2] : def, &n);
        worker w[2];
        pthread_t th[2];
        for (int i = 0; i < threads; i++) {
            w[i] = (worker){cases, n, (size_t)i, (size_t)threads, 0, 0};
            pthread_create(&th[i], NULL, run_cases, &w[i]);
        }
        int pass = 0, fail = 0;
        for (int i = 0; i < threads; i++) {
            pthread_join(th[i], NULL);
            pass += w[i].pass, fail += w[i].fail;
        }
        printf("%d passed, %d failed\n", pass, fail);
        rc = fail > 0 || pass == 0;
        free(cases);
    }
    engine_destroy(g_ctx);
    return rc;
}
