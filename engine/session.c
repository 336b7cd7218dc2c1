/* session.c — see session.h. */
#include "session.h"

#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int session_open(session_t *s, int device, err_t *err)
{
    memset(s, 0, sizeof *s);
    const char *pdl = getenv("ENGINE_PDL");
    s->pdl = pdl && strcmp(pdl, "0") == 0 ? 0 : pdl && strcmp(pdl, "1") == 0 ? 1 : -1;
    if (gpu_open(&s->gpu, device, err))
        return -1;
    s->gpu_open = true;
    if (blas_open(&s->blas, &s->gpu, err) || bench_flush_init(&s->gpu, &s->flush, err) ||
        reference_init(&s->gpu, &s->ref, err)) {
        session_close(s);
        return -1;
    }
    return 0;
}

static void problem_release(session_t *s)
{
    problem_t *p = &s->prob;
    free(p->hA);
    free(p->hB);
    free(p->hC0);
    free(p->hRef);
    free(p->hBound);
    free(p->hGot);
    free(p->hRef64);
    if (s->gpu_open) {
        gpu_free(&s->gpu, p->A);
        gpu_free(&s->gpu, p->B);
        gpu_free(&s->gpu, p->C);
        gpu_free(&s->gpu, p->C0);
        gpu_free(&s->gpu, p->Ref);
    }
    memset(p, 0, sizeof *p);
}

void session_close(session_t *s)
{
    problem_release(s);
    if (s->gpu_open) {
        gpu_free(&s->gpu, s->W);
        reference_free(&s->gpu, &s->ref);
        bench_flush_free(&s->gpu, &s->flush);
        blas_close(&s->blas);
        gpu_close(&s->gpu);
    }
    s->gpu_open = false;
}

static void scalar(dtype_t d, double v, void *out)
{
    if (d == DTYPE_F64)
        *(double *)out = v;
    else
        *(float *)out = (float)v;
}

int problem_cublas(session_t *s, CUdeviceptr C, err_t *err)
{
    problem_t *p = &s->prob;
    double a[1], b[1];
    scalar(p->dtype, p->alpha, a);
    scalar(p->dtype, p->beta, b);
    return blas_gemm(&s->blas, p->dtype, (int)p->M, (int)p->N, (int)p->K, a, p->A, p->B, b, C, err);
}

/* Bytes of host memory the kernel says are available (MemAvailable), or 0 when it does not say. */
static size_t host_mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    char line[256];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return (size_t)kb * 1024;
}

static void abs_array(void *dst, const void *src, dtype_t d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (d == DTYPE_F64)
            ((double *)dst)[i] = fabs(((const double *)src)[i]);
        else
            ((float *)dst)[i] = fabsf(((const float *)src)[i]);
    }
}

/* The FP64-accurate product of the current problem on the host (hRef64) and cuBLAS's error against
 * it. Skipped, with nothing measured, where its memory does not fit beside the problem's (the 2^32
 * elements of C at 65536x65536x16): the per-element screen still runs there. */
static int reference_setup(session_t *s, err_t *err)
{
    problem_t *p = &s->prob;
    gpu_t *g = &s->gpu;
    size_t nC = (size_t)(p->M * p->N);
    size_t dev_need = nC * sizeof(double) + reference_scratch_bytes(p->dtype, p->M, p->N, p->K);
    size_t free_b = 0, total_b = 0, host_free = host_mem_available();
    if (gpu_mem_info(g, &free_b, &total_b, err))
        return -1;
    if (dev_need + (64u << 20) > free_b || (host_free && nC * sizeof(double) + (256u << 20) > host_free) || p->K == 0)
        return 0;
    CUdeviceptr out = 0;
    p->hRef64 = xmalloc(nC * sizeof(double));
    int rc = gpu_alloc(g, nC * sizeof(double), &out, err) ||
             reference_gemm(&s->ref, g, &s->blas, p->dtype, p->M, p->N, p->K, p->alpha, p->A, p->B, p->beta, p->C0, out,
                            err) ||
             gpu_download(g, p->hRef64, out, nC * sizeof(double), err);
    gpu_free(g, out);
    if (rc)
        return -1;
    acc_measure(p->hRef, p->dtype, p->hRef64, p->hBound, nC, &p->cublas_err);
    return 0;
}

/* cuBLAS TF32's error on the current problem: the yardstick of the tf32 class, measured once. */
static int tf32_setup(session_t *s, err_t *err)
{
    problem_t *p = &s->prob;
    if (p->tf32_err.measured || !p->hRef64)
        return 0;
    size_t nC = (size_t)(p->M * p->N);
    float a = (float)p->alpha, b = (float)p->beta;
    void *host = xmalloc(nC * sizeof(float));
    int rc = gpu_copy(&s->gpu, p->C, p->C0, nC * sizeof(float), err) ||
             blas_gemm_tf32(&s->blas, (int)p->M, (int)p->N, (int)p->K, &a, p->A, p->B, &b, p->C, err) ||
             gpu_download(&s->gpu, host, p->C, nC * sizeof(float), err);
    if (!rc)
        acc_measure(host, DTYPE_F32, p->hRef64, p->hBound, nC, &p->tf32_err);
    free(host);
    return rc ? -1 : 0;
}

int problem_setup(session_t *s, dtype_t dtype, int64_t M, int64_t N, int64_t K, double alpha, double beta,
                  uint64_t seed, err_t *err)
{
    problem_t *p = &s->prob;
    if (p->ready && p->dtype == dtype && p->M == M && p->N == N && p->K == K && p->alpha == alpha &&
        p->beta == beta && p->seed == seed)
        return 0;
    problem_release(s);
    gpu_t *g = &s->gpu;
    size_t es = dtype_size(dtype);
    size_t nA = (size_t)(M * K), nB = (size_t)(K * N), nC = (size_t)(M * N);
    size_t need = (nA + nB + 3 * nC) * es;
    size_t free_b = 0, total_b = 0;
    if (gpu_mem_info(g, &free_b, &total_b, err))
        return -1;
    if (need + (64u << 20) > free_b)
        return err_set(err, EXIT_SYSTEM, "engine", 0, 0,
                       "out of device memory: %lldx%lldx%lld %s needs %.2f GB, %.2f GB free", (long long)M,
                       (long long)N, (long long)K, dtype_name(dtype), need / 1e9, free_b / 1e9);
    /* The host keeps A, B, C0, the reference, the bound and the result, and briefly |A| and |B|. */
    size_t host_need = (2 * nA + 2 * nB + 4 * nC) * es, host_free = host_mem_available();
    if (host_free && host_need + (256u << 20) > host_free)
        return err_set(err, EXIT_SYSTEM, "engine", 0, 0,
                       "out of host memory: %lldx%lldx%lld %s needs %.2f GB to verify, %.2f GB available",
                       (long long)M, (long long)N, (long long)K, dtype_name(dtype), host_need / 1e9, host_free / 1e9);
    p->dtype = dtype;
    p->M = M;
    p->N = N;
    p->K = K;
    p->alpha = alpha;
    p->beta = beta;
    p->seed = seed;
    layout_packed(&p->lay, 0, 0, M, N, K, 1);
    p->hA = xmalloc(nA * es);
    p->hB = xmalloc(nB * es);
    p->hC0 = xmalloc(nC * es);
    p->hRef = xmalloc(nC * es);
    p->hBound = xmalloc(nC * es);
    p->hGot = xmalloc(nC * es);
    rng_fill(p->hA, dtype, nA, seed, 1);
    rng_fill(p->hB, dtype, nB, seed, 2);
    rng_fill(p->hC0, dtype, nC, seed, 3);
    if (gpu_alloc(g, nA * es, &p->A, err) || gpu_alloc(g, nB * es, &p->B, err) ||
        gpu_alloc(g, nC * es, &p->C, err) || gpu_alloc(g, nC * es, &p->C0, err) ||
        gpu_alloc(g, nC * es, &p->Ref, err))
        goto fail;
    /* The bound S needs |A| |B| + |C0|: run cuBLAS on absolute values, in the buffers that will
     * hold the real inputs a moment later. */
    abs_array(p->hGot, p->hC0, dtype, nC);
    {
        void *absA = xmalloc(nA * es), *absB = xmalloc(nB * es);
        abs_array(absA, p->hA, dtype, nA);
        abs_array(absB, p->hB, dtype, nB);
        int rc = gpu_upload(g, p->A, absA, nA * es, err) || gpu_upload(g, p->B, absB, nB * es, err) ||
                 gpu_upload(g, p->Ref, p->hGot, nC * es, err);
        free(absA);
        free(absB);
        if (rc)
            goto fail;
    }
    {
        double a[1], b[1];
        scalar(dtype, fabs(alpha), a);
        scalar(dtype, fabs(beta), b);
        if (blas_gemm(&s->blas, dtype, (int)M, (int)N, (int)K, a, p->A, p->B, b, p->Ref, err) ||
            gpu_download(g, p->hBound, p->Ref, nC * es, err))
            goto fail;
    }
    if (gpu_upload(g, p->A, p->hA, nA * es, err) || gpu_upload(g, p->B, p->hB, nB * es, err) ||
        gpu_upload(g, p->C0, p->hC0, nC * es, err) || gpu_copy(g, p->Ref, p->C0, nC * es, err) ||
        problem_cublas(s, p->Ref, err) || gpu_download(g, p->hRef, p->Ref, nC * es, err) ||
        reference_setup(s, err))
        goto fail;
    p->ready = true;
    return 0;
fail:
    problem_release(s);
    return -1;
}

int problem_enqueue(session_t *s, const kernel_t *k, err_t *err)
{
    problem_t *p = &s->prob;
    if (p->K == 0) {
        /* BLAS: with no inner dimension, C = beta*C. The engine does it (no template needs a K = 0
         * path); beta = 0 overwrites C, so neither NaN nor anything else already there survives. */
        double b[1];
        scalar(p->dtype, p->beta, b);
        size_t n = (size_t)(p->M * p->N);
        if (p->beta == 0.0)
            return gpu_fill32(&s->gpu, p->C, 0, n * dtype_size(p->dtype) / 4, err);
        return p->beta == 1.0 ? 0 : blas_scal(&s->blas, p->dtype, n, b, p->C, err);
    }
    gemm_call c = {p->dtype, p->M, p->N, p->K, p->lay, p->alpha, p->beta, p->A, p->B, p->C};
    size_t wbytes = kernel_workspace_bytes(k, &c);
    if (wbytes > s->W_bytes) {
        gpu_free(&s->gpu, s->W);
        s->W = 0;
        s->W_bytes = 0;
        if (gpu_alloc(&s->gpu, wbytes, &s->W, err))
            return -1;
        s->W_bytes = wbytes;
    }
    return kernel_launch(k, &c, s->W, s->gpu.stream, err);
}

int problem_verify(session_t *s, const kernel_t *k, verify_report *rep, acc_verdict *acc, err_t *err)
{
    problem_t *p = &s->prob;
    size_t nC = (size_t)(p->M * p->N), es = dtype_size(p->dtype);
    /* Two launches from the same C, and the second one's C is checked: a kernel that keeps state
     * between launches (split-K's tile counters, kernels_src/splitk.cuh) must leave it as the
     * next launch needs it, which the timed runs rely on and a single launch would not show. */
    for (int launch = 0; launch < 2; launch++) {
        /* All-ones bits are a NaN in both float and double. */
        if (p->beta == 0.0) {
            if (gpu_fill32(&s->gpu, p->C, 0xFFFFFFFFu, nC * es / 4, err))
                return -1;
        } else if (gpu_copy(&s->gpu, p->C, p->C0, nC * es, err)) {
            return -1;
        }
        if (problem_enqueue(s, k, err))
            return -1;
    }
    if (gpu_sync(&s->gpu, err) || gpu_download(&s->gpu, p->hGot, p->C, nC * es, err))
        return -1;
    memset(acc, 0, sizeof *acc);
    acc->cls = acc_class_of(k->cfg->accuracy, p->dtype);
    int screen = verify_compare_u(p->hGot, p->hRef, p->hBound, p->dtype, acc_unit_roundoff(acc->cls), p->M, p->N, p->K, rep);
    acc->reference = !p->hRef64 ? "none" : p->dtype == DTYPE_F64 ? "dd" : "dgemm";
    if (p->hRef64) {
        acc_measure(p->hGot, p->dtype, p->hRef64, p->hBound, nC, &acc->kernel);
        if (acc->cls == ACC_CLASS_TF32 && tf32_setup(s, err))
            return -1;
        acc->yardstick = acc->cls == ACC_CLASS_TF32 ? p->tf32_err : p->cublas_err;
    }
    if (screen)
        return err_set(err, EXIT_VERIFY, k->cfg->path, 0, 0,
                       "verification failed at %lldx%lldx%lld beta=%g: %zu of %zu elements wrong (%zu NaN/Inf)",
                       (long long)p->M, (long long)p->N, (long long)p->K, p->beta, rep->bad, rep->checked,
                       rep->nonfinite);
    char why[256];
    if (p->hRef64 && !acc_check(acc->cls, &acc->kernel, &acc->yardstick, why, sizeof why))
        return err_set(err, EXIT_VERIFY, k->cfg->path, 0, 0, "verification failed at %lldx%lldx%lld beta=%g: %s",
                       (long long)p->M, (long long)p->N, (long long)p->K, p->beta, why);
    return 0;
}
