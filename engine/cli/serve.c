/* serve.c — `engine __worker`: the process that owns one GPU (worker.h explains why there is one).
 *
 * It opens the device, its cuBLAS handle and the L2 flush buffer once, says hello (the device's
 * properties and, when asked, its measured bandwidth), then answers requests read one per line on
 * stdin, one reply line each on stdout:
 *
 *   {"op": "run", "id": 7, "path": "configs/x.json", "sets": ["BM=128"], "dtype": "f32" | null,
 *    "arch": 90, "M": .., "N": .., "K": .., "alpha": .., "beta": .., "seed": 1,
 *    "ta": 0, "tb": 0, "lda": .., "ldb": .., "ldc": .., "batch": 1, "sa": .., "sb": .., "sc": ..
 *    (the layout, layout.h: packed NN, one product, by default),
 *    "verify": true, "time": true, "warmup": 3, "runs": 7, "iters": 5 (0: as many as make a run
 *    last about 2 ms, judged by cuBLAS),
 *    "baseline": true,      time cuBLAS once per problem and timing settings, and report it; for a
 *                           config of accuracy class tf32 also cuBLAS FAST_TF32 (cublas_tf32_ms)
 *    "interleave": false}   time the kernel and cuBLAS with their runs interleaved (tune finalists)
 *   {"op": "cross_check", "dtypes": ["f32"], "seed": 1}
 *
 * Before the kernel of a "run" first executes, the worker sends {"op": "started", "id": 7}: the
 * set-up (inputs, the cuBLAS reference and baseline) is done, and the engine's watchdog for the
 * kernel starts counting there.
 *
 * A reply carries "id", "status" (ok | FAIL | error | fault), "code" (an exit code), "error" (one
 * line) and what was measured: resources, verification counts and the first mismatches, the
 * median and spread of the kernel and of cuBLAS, the SM clock after timing, power. The CUBIN
 * normally comes from the cache the engine filled before sending the request. After a fault the
 * context is gone: the worker replies with "broken": true and exits, and the engine starts a new
 * one for the next request. */
#define _GNU_SOURCE
#include "serve.h"

#include "arch.h"
#include "bench.h"
#include "cache.h"
#include "jit.h"
#include "labjit.h"
#include "nvml.h"
#include "session.h"
#include "util.h"
#include "worker.h"
#include "verify.h"

#include <jansson.h>
#include <math.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

/* The length of one timed run that "iters": 0 aims at: long against launch overhead and event
 * resolution (microseconds), short enough to screen hundreds of points. */
#define AUTO_RUN_MS 2.0

/* cuBLAS timed once per problem and timing settings, for "baseline" requests. */
typedef struct {
    bool valid;
    dtype_t dtype;
    int64_t M, N, K;
    double alpha, beta;
    uint64_t seed;
    bench_opts bo;
    bench_stats st;
    double clock_mhz, power_w;
    layout_t lay; /* cuBLAS ran in the problem's layout */
} baseline_t;

typedef struct {
    session_t s;
    nvml_t nvml;
    baseline_t base;
    baseline_t base_tf32; /* cuBLAS FAST_TF32, the yardstick of tf32-class configs' speed */
    int64_t auto_M, auto_N, auto_K; /* the problem auto_iters was chosen for */
    dtype_t auto_dtype;
    int auto_iters;
    FILE *out; /* replies; stdout itself is pointed at stderr so nothing else can reach the engine */
} server_t;

static void reply_err(json_t *r, const err_t *err)
{
    char line[ERR_SOURCE_LEN + ERR_TEXT_LEN + 64];
    err_format(err, line, sizeof line);
    json_object_set_new(r, "code", json_integer(err->code ? err->code : EXIT_SYSTEM));
    json_object_set_new(r, "error", json_string(line));
}

static bool flag(json_t *req, const char *key) { return json_is_true(json_object_get(req, key)); }

static int bench_kernel_fn(void *ctx, err_t *err)
{
    void **c = ctx;
    return problem_enqueue(c[0], c[1], err);
}

static int bench_cublas_fn(void *ctx, err_t *err)
{
    session_t *s = ctx;
    return problem_cublas(s, s->prob.C, err);
}

static int bench_cublas_tf32_fn(void *ctx, err_t *err)
{
    session_t *s = ctx;
    problem_t *p = &s->prob;
    float a = (float)p->alpha, b = (float)p->beta;
    return blas_gemm_tf32(&s->blas, (int)p->M, (int)p->N, (int)p->K, &a, p->A, p->B, &b, p->C, err);
}

static void put_stats(json_t *r, const char *prefix, const bench_stats *st)
{
    char k[64];
    snprintf(k, sizeof k, "%sms", prefix);
    json_object_set_new(r, k, json_real(st->median_ms));
    snprintf(k, sizeof k, "%sms_min", prefix);
    json_object_set_new(r, k, json_real(st->min_ms));
    snprintf(k, sizeof k, "%sms_max", prefix);
    json_object_set_new(r, k, json_real(st->max_ms));
}

/* cuBLAS for the current problem with these timing settings, measured once. */
/* tf32: cuBLAS FAST_TF32 (f32 problems only) instead of strict SGEMM / DGEMM. */
static int baseline(server_t *sv, const bench_opts *bo, bool tf32, err_t *err)
{
    problem_t *p = &sv->s.prob;
    baseline_t *b = tf32 ? &sv->base_tf32 : &sv->base;
    if (b->valid && b->dtype == p->dtype && b->M == p->M && b->N == p->N && b->K == p->K && b->alpha == p->alpha &&
        b->beta == p->beta && b->seed == p->seed && b->bo.warmup == bo->warmup && b->bo.runs == bo->runs &&
        b->bo.iters == bo->iters && memcmp(&b->lay, &p->lay, sizeof p->lay) == 0)
        return 0;
    b->valid = false;
    size_t bytes = (size_t)p->sC * dtype_size(p->dtype);
    nvml_mark m0 = nvml_now(&sv->nvml);
    if (gpu_copy(&sv->s.gpu, p->C, p->C0, bytes, err) ||
        bench_time(&sv->s.gpu, tf32 ? bench_cublas_tf32_fn : bench_cublas_fn, &sv->s, bo, &sv->s.flush, &b->st, err))
        return -1;
    b->power_w = nvml_watts(&sv->nvml, m0, nvml_now(&sv->nvml));
    b->clock_mhz = 0;
    bench_clock_mhz(&sv->s.gpu, &b->clock_mhz, err);
    *b = (baseline_t){true, p->dtype, p->M, p->N, p->K, p->alpha, p->beta, p->seed, *bo, b->st, b->clock_mhz,
                      b->power_w, p->lay};
    return 0;
}

static void put_mismatches(json_t *r, const verify_report *vr)
{
    json_object_set_new(r, "checked", json_integer((json_int_t)vr->checked));
    json_object_set_new(r, "bad", json_integer((json_int_t)vr->bad));
    json_object_set_new(r, "nonfinite", json_integer((json_int_t)vr->nonfinite));
    json_object_set_new(r, "max_ratio", json_real(isfinite(vr->max_ratio) ? vr->max_ratio : -1));
    json_t *a = json_array();
    for (size_t i = 0; i < vr->nshown; i++) {
        const mismatch *m = &vr->shown[i];
        /* NaN is not JSON: a non-finite value travels as null. */
        json_array_append_new(a, json_pack("[I,I,o,o,o]", (json_int_t)m->row, (json_int_t)m->col,
                                           isfinite(m->got) ? json_real(m->got) : json_null(),
                                           isfinite(m->want) ? json_real(m->want) : json_null(),
                                           json_real(m->tol)));
    }
    json_object_set_new(r, "mismatches", a);
}

/* A number, or null where it is not finite (NaN and Inf are not JSON). */
static json_t *finite_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* The errors against the FP64 reference (accuracy.h), null when there was none. */
static void put_accuracy(json_t *r, const acc_verdict *a)
{
    json_object_set_new(r, "class", json_string(acc_class_name(a->cls)));
    json_object_set_new(r, "reference", json_string(a->reference ? a->reference : "none"));
    bool m = a->kernel.measured;
    json_object_set_new(r, "err_max_u", m ? finite_or_null(a->kernel.max_u) : json_null());
    json_object_set_new(r, "err_mean_u", m ? finite_or_null(a->kernel.mean_u) : json_null());
    json_object_set_new(r, "ref_err_max_u", m ? finite_or_null(a->yardstick.max_u) : json_null());
    json_object_set_new(r, "ref_err_mean_u", m ? finite_or_null(a->yardstick.mean_u) : json_null());
}

static void send_line(server_t *sv, json_t *msg);

/* Tell the engine that the set-up is over and the kernel is about to run: its deadline for this
 * request starts now (a new problem's inputs and cuBLAS reference may take much longer). */
static void started(server_t *sv, json_t *req)
{
    json_t *m = json_pack("{s:s, s:O}", "op", "started", "id", json_object_get(req, "id") ? json_object_get(req, "id") : json_null());
    send_line(sv, m);
    json_decref(m);
}

/* The layout of a request: "ta", "tb", "batch" (default packed NN, one product), then "lda",
 * "ldb", "ldc", "sa", "sb", "sc" where given (packed otherwise). problem_setup checks it. */
static void request_layout(json_t *req, int64_t M, int64_t N, int64_t K, layout_t *lay)
{
    layout_packed(lay, (int)worker_num(req, "ta", 0), (int)worker_num(req, "tb", 0), M, N, K,
                  (int64_t)worker_num(req, "batch", 1));
    lay->lda = (int64_t)worker_num(req, "lda", (double)lay->lda);
    lay->ldb = (int64_t)worker_num(req, "ldb", (double)lay->ldb);
    lay->ldc = (int64_t)worker_num(req, "ldc", (double)lay->ldc);
    /* Packed strides follow the leading dimensions when those are padded. */
    lay->sa = (int64_t)worker_num(req, "sa", (double)(layout_a_rows(lay, M, K) * lay->lda));
    lay->sb = (int64_t)worker_num(req, "sb", (double)(layout_b_rows(lay, N, K) * lay->ldb));
    lay->sc = (int64_t)worker_num(req, "sc", (double)(M * lay->ldc));
}

/* The kernel of a request: its config loaded with the request's overrides, the problem set up,
 * the CUBIN built (from the cache, normally) and loaded; what it uses goes into the reply. */
static int prepare(server_t *sv, json_t *req, json_t *r, config_t *cfg, bool *loaded, kernel_t *k, err_t *err)
{
    session_t *s = &sv->s;
    const char *path = json_string_value(json_object_get(req, "path"));
    int arch = (int)worker_num(req, "arch", s->gpu.sm);
    int64_t M = (int64_t)worker_num(req, "M", 0), N = (int64_t)worker_num(req, "N", 0),
            K = (int64_t)worker_num(req, "K", -1);
    if (!path || M < 1 || N < 1 || K < 0) /* K = 0 is BLAS's C = beta*C */
        return err_set(err, ERR_SYSTEM, "engine", 0, 0, "a worker request needs path, M, N and K");
    param_set sets[CLI_MAX_SETS];
    size_t nsets = 0;
    json_t *jsets = json_object_get(req, "sets");
    int rc = 0;
    for (size_t i = 0; i < json_array_size(jsets) && nsets < CLI_MAX_SETS && !rc; i++) {
        const char *t = json_string_value(json_array_get(jsets, i));
        if (!t || param_set_parse(t, &sets[nsets], err))
            rc = err_set(err, ERR_SYSTEM, "engine", 0, 0, "a worker request's sets must be KEY=VALUE strings");
        else
            nsets++;
    }
    double t0 = now_ms();
    rc = rc ? rc : config_load(path, sets, nsets, json_string_value(json_object_get(req, "dtype")), arch, cfg, err);
    for (size_t i = 0; i < nsets; i++)
        param_set_free(&sets[i]);
    if (rc)
        return -1;
    *loaded = true;
    layout_t lay;
    request_layout(req, M, N, K, &lay);
    if (problem_setup(s, cfg->dtype, M, N, K, &lay, worker_num(req, "alpha", 1), worker_num(req, "beta", 0),
                      (uint64_t)worker_num(req, "seed", 1), err))
        return -1;
    json_object_set_new(r, "t_setup", json_real((now_ms() - t0) * 1e-3));
    int64_t smem = s->gpu.sm == arch_sm(arch) && s->gpu.smem_optin > 0 ? s->gpu.smem_optin : arch_lookup(arch)->smem_optin;
    jit_origin origin = JIT_COMPILED;
    double tc = now_ms();
    /* The kernel is built for the alignment the buffers really have (they are 256-byte aligned, so
     * the leading dimensions and strides decide). */
    const problem_t *p = &s->prob;
    size_t es = dtype_size(cfg->dtype);
    int one = p->lay.batch > 1;
    layout_align al = {layout_align_of(p->A, es, p->lay.lda, one * p->lay.sa),
                       layout_align_of(p->B, es, p->lay.ldb, one * p->lay.sb),
                       layout_align_of(p->C, es, p->lay.ldc, one * p->lay.sc)};
    if (kernel_build(
            lab_jit(), cfg, &(plan_target){.arch = arch, .smem_limit = smem, .M = M, .N = N, .K = K, .lay = &p->lay, .align = &al},
            k, &origin, err))
        return -1;
    char *params = config_params_try(cfg);
    if (!params) /* a few bytes: the command cannot go on */
        xoom(cfg->tpl.nparams * 32);
    json_object_set_new(r, "t_compile", json_real((now_ms() - tc) * 1e-3));
    json_object_set_new(r, "from_cache", json_boolean(origin != JIT_COMPILED));
    json_object_set_new(r, "label", json_string(cfg->label));
    json_object_set_new(r, "template", json_string(cfg->tpl.name));
    json_object_set_new(r, "dtype", json_string(dtype_name(cfg->dtype)));
    json_object_set_new(r, "switches", json_string(k->plan.switches));
    json_object_set_new(r, "params", json_string(params));
    free(params);
    int blocks = 0, threads = 0, regs = -1, spill = -1, smem_bytes = -1;
    if (kernel_load(&s->gpu, s->pdl, k, err) || kernel_occupancy(k, &blocks, &threads, err) ||
        kernel_resources(k, &regs, &spill, &smem_bytes, err))
        return -1;
    json_object_set_new(r, "regs", json_integer(regs));
    json_object_set_new(r, "spill_bytes", json_integer(spill));
    json_object_set_new(r, "smem_bytes", json_integer(smem_bytes));
    json_object_set_new(r, "threads", json_integer(threads));
    json_object_set_new(r, "occ_blocks", json_integer(blocks));
    json_object_set_new(r, "pdl", json_boolean(k->pdl));
    json_object_set_new(r, "occ_pct", json_real(100.0 * blocks * threads / s->gpu.max_threads_sm));
    return 0;
}

/* iters 0: as many launches per run as make it last about AUTO_RUN_MS, judged by cuBLAS (timed
 * once per problem with one launch per run), so that tiny shapes are not all launch overhead and
 * large ones cost no more than they must. */
static int auto_iters(server_t *sv, bench_opts *bo, err_t *err)
{
    problem_t *p = &sv->s.prob;
    if (!(sv->auto_M == p->M && sv->auto_N == p->N && sv->auto_K == p->K && sv->auto_dtype == p->dtype)) {
        bench_opts one = {bo->warmup, bo->runs, 1};
        if (baseline(sv, &one, false, err))
            return -1;
        double per = sv->base.st.median_ms > 0 ? sv->base.st.median_ms : AUTO_RUN_MS;
        int it = (int)ceil(AUTO_RUN_MS / per);
        sv->auto_iters = it < 1 ? 1 : it > 1000 ? 1000 : it;
        sv->auto_M = p->M;
        sv->auto_N = p->N;
        sv->auto_K = p->K;
        sv->auto_dtype = p->dtype;
    }
    bo->iters = sv->auto_iters;
    return 0;
}

/* Time the kernel: alone after the cuBLAS baseline, or interleaved with cuBLAS run by run. */
static int time_kernel(server_t *sv, json_t *req, json_t *r, kernel_t *k, const bench_opts *bo, err_t *err)
{
    session_t *s = &sv->s;
    double tb = now_ms();
    void *kctx[2] = {s, k};
    bench_stats st[2];
    if (flag(req, "interleave")) {
        bench_fn fns[2] = {bench_kernel_fn, bench_cublas_fn};
        void *ctxs[2] = {kctx, s};
        if (bench_time_n(&s->gpu, 2, fns, ctxs, bo, &s->flush, st, err))
            return -1;
        put_stats(r, "cublas_", &st[1]);
    } else {
        if (flag(req, "baseline")) {
            put_stats(r, "cublas_", &sv->base.st);
            json_object_set_new(r, "cublas_clock_mhz", json_real(sv->base.clock_mhz));
            json_object_set_new(r, "cublas_power_w", json_real(sv->base.power_w));
        }
        nvml_mark m0 = nvml_now(&sv->nvml);
        if (bench_time(&s->gpu, bench_kernel_fn, kctx, bo, &s->flush, &st[0], err))
            return -1;
        json_object_set_new(r, "power_w", json_real(nvml_watts(&sv->nvml, m0, nvml_now(&sv->nvml))));
    }
    put_stats(r, "", &st[0]);
    json_object_set_new(r, "runs", json_integer(st[0].runs));
    double mhz = 0;
    if (bench_clock_mhz(&s->gpu, &mhz, err))
        return -1;
    json_object_set_new(r, "clock_mhz", json_real(mhz));
    json_object_set_new(r, "t_bench", json_real((now_ms() - tb) * 1e-3));
    return 0;
}

static void handle_run(server_t *sv, json_t *req, json_t *r)
{
    session_t *s = &sv->s;
    err_t err;
    err_clear(&err);
    config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    kernel_t k;
    memset(&k, 0, sizeof k);
    bool loaded = false;
    bench_opts bo = {(int)worker_num(req, "warmup", 3), (int)worker_num(req, "runs", 7),
                     (int)worker_num(req, "iters", 5)};
    json_object_set_new(r, "status", json_string("error"));
    if (prepare(sv, req, r, &cfg, &loaded, &k, &err))
        goto out;
    const bool tf32 = cfg.dtype == DTYPE_F32 && cfg.accuracy == ACC_TF32;
    if (flag(req, "time") && flag(req, "baseline") && !flag(req, "interleave")) {
        if ((bo.iters == 0 && auto_iters(sv, &bo, &err)) || baseline(sv, &bo, false, &err) ||
            (tf32 && baseline(sv, &bo, true, &err)))
            goto out;
        if (tf32) {
            put_stats(r, "cublas_tf32_", &sv->base_tf32.st);
            json_object_set_new(r, "cublas_tf32_clock_mhz", json_real(sv->base_tf32.clock_mhz));
            json_object_set_new(r, "cublas_tf32_power_w", json_real(sv->base_tf32.power_w));
        }
    }
    json_object_set_new(r, "iters", json_integer(bo.iters));
    started(sv, req);
    if (flag(req, "verify")) {
        verify_report vr;
        memset(&vr, 0, sizeof vr);
        acc_verdict acc;
        double tv = now_ms();
        int vrc = problem_verify(s, &k, &vr, &acc, &err);
        json_object_set_new(r, "t_verify", json_real((now_ms() - tv) * 1e-3));
        if (vrc && err.code == EXIT_VERIFY)
            json_object_set_new(r, "status", json_string("FAIL"));
        if (!vrc || err.code == EXIT_VERIFY) {
            put_mismatches(r, &vr);
            put_accuracy(r, &acc);
        }
        if (vrc)
            goto out;
    }
    if (flag(req, "time") && time_kernel(sv, req, r, &k, &bo, &err))
        goto out;
    json_object_set_new(r, "status", json_string("ok"));
    json_object_set_new(r, "code", json_integer(0));
out:
    if (err_isset(&err)) {
        reply_err(r, &err);
        if (s->gpu.broken)
            json_object_set_new(r, "status", json_string("fault"));
    }
    kernel_free(&k);
    if (loaded)
        config_free(&cfg);
}

/* cuBLAS against an FP64 Kahan CPU product, at two shapes, for each dtype asked. */
static void handle_cross_check(server_t *sv, json_t *req, json_t *r)
{
    static const int64_t shapes[2][3] = {{128, 128, 128}, {77, 65, 129}};
    session_t *s = &sv->s;
    json_t *lines = json_array(), *dts = json_object_get(req, "dtypes");
    uint64_t seed = (uint64_t)worker_num(req, "seed", 1);
    int worst = EXIT_OK;
    for (size_t d = 0; d < json_array_size(dts); d++) {
        dtype_t dt = DTYPE_F32;
        dtype_parse(json_string_value(json_array_get(dts, d)), &dt); /* the command's own names */
        for (size_t si = 0; si < 2; si++) {
            for (int bi = 0; bi < 2; bi++) {
                double beta = bi ? -0.5 : 0.0, alpha = 1.25;
                const int64_t *sh = shapes[si];
                err_t err;
                err_clear(&err);
                if (problem_setup(s, dt, sh[0], sh[1], sh[2], NULL, alpha, beta, seed, &err)) {
                    reply_err(r, &err);
                    worst = exit_worst(worst, err.code);
                    goto out;
                }
                problem_t *p = &s->prob;
                size_t nC = (size_t)(sh[0] * sh[1]), es = dtype_size(dt);
                double *ref = xmalloc(nC * sizeof *ref), *bound = xmalloc(nC * sizeof *bound);
                ref_gemm_kahan(dt, sh[0], sh[1], sh[2], alpha, p->hA, p->hB, beta, p->hC0, ref, bound);
                /* Compare in the problem's dtype: narrow the CPU reference, and the bound to the
                 * compute type (verify.h). */
                void *ref_t = xmalloc(nC * es), *bound_t = xmalloc(nC * dtype_size(dtype_compute(dt)));
                for (size_t j = 0; j < nC; j++) {
                    elem_set(ref_t, dt, j, ref[j]);
                    elem_set(bound_t, dtype_compute(dt), j, bound[j]);
                }
                /* The FP64 reference of the accuracy classes (reference.h) against the CPU's
                 * double-double: within a few units of 2^-53 S (f32: K of them, DGEMM's sums). */
                if (p->hRef64) {
                    double *dd = xmalloc(nC * sizeof *dd);
                    ref_gemm_dd(dt, sh[0], sh[1], sh[2], alpha, p->hA, p->hB, beta, p->hC0, dd);
                    double far = 0, lim = dt == DTYPE_F64 ? 4.0 : 4.0 + (double)sh[2];
                    for (size_t j = 0; j < nC; j++) {
                        double e = fabs(p->hRef64[j] - dd[j]) / (ldexp(1.0, -53) * (bound[j] > 0 ? bound[j] : 1e-300));
                        far = e > far || isnan(e) ? e : far;
                    }
                    free(dd);
                    bool rok = far <= lim;
                    char *rl = xasprintf("reference check %s (%s) vs CPU double-double at %lldx%lldx%lld beta=%g: %s (max err %.3g, limit %g, in 2^-53 S)",
                                         dtype_name(dt), dt == DTYPE_F64 ? "double-double on the GPU" : "DGEMM of the widened inputs",
                                         (long long)sh[0], (long long)sh[1], (long long)sh[2], beta, rok ? "ok" : "FAIL",
                                         far, lim);
                    json_array_append_new(lines, json_string(rl));
                    free(rl);
                    if (!rok)
                        worst = exit_worst(worst, EXIT_VERIFY);
                }
                verify_report rep;
                int bad = verify_compare_u(p->hRef, ref_t, bound_t, dt, acc_unit_roundoff(acc_class_of(ACC_NATIVE, dt)),
                                           sh[0], sh[1], sh[2], &rep);
                char *line = xasprintf(
                    "cross-check %s cuBLAS vs FP64 Kahan CPU at %lldx%lldx%lld beta=%g: %s (max err %.3g, max err/tol %.3f)",
                    dtype_name(dt), (long long)sh[0], (long long)sh[1], (long long)sh[2], beta, bad ? "FAIL" : "ok",
                    rep.max_err, rep.max_ratio);
                json_array_append_new(lines, json_string(line));
                free(line);
                if (bad) {
                    worst = exit_worst(worst, EXIT_VERIFY);
                    json_t *m = json_object();
                    put_mismatches(m, &rep);
                    json_array_append_new(lines, m);
                }
                free(ref);
                free(bound);
                free(ref_t);
                free(bound_t);
            }
        }
    }
out:
    json_object_set_new(r, "lines", lines);
    if (!json_object_get(r, "code"))
        json_object_set_new(r, "code", json_integer(worst));
    json_object_set_new(r, "status", json_string(worst == EXIT_OK ? "ok" : worst == EXIT_VERIFY ? "FAIL" : "error"));
}

static json_t *hello(server_t *sv, bool bandwidth, err_t *err)
{
    const gpu_t *g = &sv->s.gpu;
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    json_t *h = json_pack("{s:s, s:i, s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:I, s:i, s:i, s:s, s:i, s:b}", "op",
                          "hello", "device", g->ordinal, "name", g->name, "sm", g->sm, "sms", g->sms, "clock_khz",
                          g->clock_khz, "l2_bytes", g->l2_bytes, "smem_optin", g->smem_optin, "max_threads_sm",
                          g->max_threads_sm, "driver", g->driver_version, "total_mem", (json_int_t)g->total_mem,
                          "cublas", sv->s.blas.version, "nvrtc", major * 1000 + minor * 10, "pci_bus_id",
                          g->pci_bus_id, "pid", (int)getpid(), "nvml", sv->nvml.lib != NULL);
    if (bandwidth) {
        double dram = 0, l2 = 0;
        if (bench_bandwidth(&sv->s.gpu, &dram, &l2, err)) {
            json_decref(h);
            return NULL;
        }
        json_object_set_new(h, "dram_bps", json_real(dram));
        json_object_set_new(h, "l2_bps", json_real(l2));
    }
    return h;
}

static void send_line(server_t *sv, json_t *msg)
{
    char *line = json_dumps(msg, JSON_COMPACT);
    fprintf(sv->out, "%s\n", line);
    fflush(sv->out);
    free(line);
}

int serve_main(const opts_t *o)
{
    /* Die with the engine, even when stuck in a kernel that never returns. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    server_t sv;
    memset(&sv, 0, sizeof sv);
    int fd = dup(1);
    sv.out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!sv.out)
        return EXIT_SYSTEM;
    dup2(2, 1);
    cache_t cache;
    bool have_cache = false;
    err_t err;
    err_clear(&err);
    if (o->cache_dir) {
        if (cache_open(&cache, o->cache_dir, &err) == 0) {
            have_cache = true;
            jit_set_cache(lab_jit(), &cache);
        } else {
            err_print(stderr, &err); /* compiling again costs time, not correctness */
            err_clear(&err);
        }
    }
    json_t *h = NULL;
    if (session_open(&sv.s, o->device, &err) == 0) {
        nvml_open(&sv.nvml, sv.s.gpu.pci_bus_id);
        h = hello(&sv, o->bandwidth, &err);
    }
    if (!h) {
        json_t *bad = json_object();
        json_object_set_new(bad, "op", json_string("hello"));
        reply_err(bad, &err);
        send_line(&sv, bad);
        json_decref(bad);
        session_close(&sv.s);
        jit_set_cache(lab_jit(), NULL);
        if (have_cache)
            cache_close(&cache);
        fclose(sv.out);
        return err.code ? err.code : EXIT_SYSTEM;
    }
    send_line(&sv, h);
    json_decref(h);
    char *line = NULL;
    size_t cap = 0;
    while (!sv.s.gpu.broken && getline(&line, &cap, stdin) > 0) {
        json_error_t je;
        json_t *req = json_loads(line, 0, &je);
        json_t *r = json_object();
        json_object_set(r, "id", json_object_get(req, "id") ? json_object_get(req, "id") : json_null());
        const char *op = json_string_value(json_object_get(req, "op"));
        jit_stats js0;
        jit_get_stats(lab_jit(), &js0);
        if (!req || !op) {
            err_set(&err, ERR_SYSTEM, "engine", 0, 0, "worker: a request must be a JSON object with \"op\"");
            reply_err(r, &err);
        } else if (strcmp(op, "run") == 0) {
            handle_run(&sv, req, r);
        } else if (strcmp(op, "cross_check") == 0) {
            handle_cross_check(&sv, req, r);
        } else if (strcmp(op, "exit") == 0) {
            json_decref(req);
            json_decref(r);
            break;
        } else {
            err_clear(&err);
            err_set(&err, ERR_SYSTEM, "engine", 0, 0, "worker: unknown op \"%s\"", op);
            reply_err(r, &err);
        }
        jit_stats js1;
        jit_get_stats(lab_jit(), &js1);
        json_object_set_new(r, "nvrtc", json_integer((json_int_t)(js1.nvrtc - js0.nvrtc)));
        if (sv.s.gpu.broken)
            json_object_set_new(r, "broken", json_true());
        send_line(&sv, r);
        json_decref(req);
        json_decref(r);
    }
    free(line);
    nvml_close(&sv.nvml);
    session_close(&sv.s);
    jit_cache_free(lab_jit());
    if (have_cache)
        cache_close(&cache);
    fclose(sv.out);
    return EXIT_OK;
}
