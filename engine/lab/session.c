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

/* alpha or beta as the dtype's kernels and cuBLAS take it: a double for f64, else a float. */
static void scalar(dtype_t d, double v, void *out)
{
    if (dtype_compute(d) == DTYPE_F64)
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
    return blas_gemm_layout(&s->blas, p->dtype, false, (int)p->M, (int)p->N, (int)p->K, &p->lay, a, p->A, p->B, b, C,
                            err);
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
        if (dtype_half(d)) /* the sign bit cleared; the padding's NaN stays NaN */
            ((uint16_t *)dst)[i] = ((const uint16_t *)src)[i] & 0x7FFFu;
        else if (d == DTYPE_F64)
            ((double *)dst)[i] = fabs(((const double *)src)[i]);
        else
            ((float *)dst)[i] = fabsf(((const float *)src)[i]);
    }
}

/* Bytes of a device buffer of n elements of es bytes: whole 4-byte words, so that gpu_fill32 covers
 * every element of a half-type buffer of odd length (the word's last two bytes are no element). */
static size_t buf_bytes(size_t n, size_t es)
{
    return (n * es + 3) / 4 * 4;
}

/* Element offset of (row, col) of product b of a matrix stored rows ld apart, products stride apart. */
static size_t at(int64_t b, int64_t stride, int64_t row, int64_t ld, int64_t col)
{
    return (size_t)(b * stride + row * ld + col);
}

/* The stored matrices of the batch from their packed logical values (batch x rows x cols, as drawn),
 * es bytes each: every other element of the buffer (rows' padding, gaps between products) keeps the
 * all-ones bytes it was filled with, a NaN in float and double, so a kernel that reads it computes
 * NaN and one that writes it is caught (problem_verify). */
static void scatter(void *stored, const void *packed, size_t es, int64_t batch, int64_t rows, int64_t cols, int64_t ld,
                    int64_t stride)
{
    for (int64_t b = 0; b < batch; b++)
        for (int64_t r = 0; r < rows; r++)
            memcpy((char *)stored + at(b, stride, r, ld, 0) * es,
                   (const char *)packed + (size_t)((b * rows + r) * cols) * es, (size_t)cols * es);
}

/* The reverse: the batch's M x N products of a stored C, packed one after the other. */
static void gather(void *packed, const void *stored, size_t es, const problem_t *p)
{
    for (int64_t b = 0; b < p->lay.batch; b++)
        for (int64_t r = 0; r < p->M; r++)
            memcpy((char *)packed + (size_t)((b * p->M + r) * p->N) * es,
                   (const char *)stored + at(b, p->lay.sc, r, p->lay.ldc, 0) * es, (size_t)p->N * es);
}

/* How many elements of C's buffer outside every product (the padding a kernel must leave alone)
 * are no longer all-ones bytes; the first one's offset in *where. */
static size_t padding_touched(const problem_t *p, const unsigned char *stored, size_t es, size_t *where)
{
    size_t bad = 0, n = (size_t)p->sC;
    unsigned char *mine = xcalloc(n, 1); /* 1: inside a product */
    for (int64_t b = 0; b < p->lay.batch; b++)
        for (int64_t r = 0; r < p->M; r++)
            memset(mine + at(b, p->lay.sc, r, p->lay.ldc, 0), 1, (size_t)p->N);
    for (size_t i = 0; i < n; i++) {
        if (mine[i])
            continue;
        for (size_t j = 0; j < es; j++)
            if (stored[i * es + j] != 0xFF) {
                if (!bad)
                    *where = i;
                bad++;
                break;
            }
    }
    free(mine);
    return bad;
}

/* Download C's buffer (sC elements of es bytes, or of doubles with es = 8) into a scratch and gather
 * its products into packed. */
static int download_gather(session_t *s, void *packed, CUdeviceptr C, size_t es, err_t *err)
{
    problem_t *p = &s->prob;
    void *raw = xmalloc((size_t)p->sC * es);
    int rc = gpu_download(&s->gpu, raw, C, (size_t)p->sC * es, err);
    if (!rc)
        gather(packed, raw, es, p);
    free(raw);
    return rc ? -1 : 0;
}

/* The FP64-accurate product of the current problem on the host (hRef64) and cuBLAS's error against
 * it. Skipped, with nothing measured, where its memory does not fit beside the problem's (the 2^32
 * elements of C at 65536x65536x16): the per-element screen still runs there. */
static int reference_setup(session_t *s, err_t *err)
{
    problem_t *p = &s->prob;
    gpu_t *g = &s->gpu;
    size_t nC = (size_t)(p->lay.batch * p->M * p->N), sC = (size_t)p->sC;
    size_t dev_need = sC * sizeof(double) + reference_scratch_bytes(p->dtype, p->sA, p->sB);
    size_t free_b = 0, total_b = 0, host_free = host_mem_available();
    if (gpu_mem_info(g, &free_b, &total_b, err))
        return -1;
    if (dev_need + (64u << 20) > free_b || (host_free && (nC + sC) * sizeof(double) + (256u << 20) > host_free) ||
        p->K == 0)
        return 0;
    CUdeviceptr out = 0;
    p->hRef64 = xmalloc(nC * sizeof(double));
    int rc = gpu_alloc(g, sC * sizeof(double), &out, err) ||
             reference_gemm(&s->ref, g, &s->blas, p->dtype, p->M, p->N, p->K, &p->lay, p->alpha, p->A, p->B, p->beta,
                            p->C0, out, p->sA, p->sB, p->sC, err) ||
             download_gather(s, p->hRef64, out, sizeof(double), err);
    gpu_free(g, out);
    if (rc)
        return -1;
    acc_measure(p->hRef, p->dtype, p->hRef64, p->hBound, nC, &p->cublas_err);
    return 0;
}

/* The tf32 class's yardstick on the current problem, measured once: the larger of cuBLAS FAST_TF32's
 * error and that of TF32 arithmetic itself (strict SGEMM on the inputs rounded to TF32 as
 * cvt.rna does), because cuBLAS FAST_TF32 picks its kernel, and at K = 1 it computes in FP32, so its
 * error alone is not TF32's at every K. */
static int tf32_setup(session_t *s, err_t *err)
{
    problem_t *p = &s->prob;
    if (p->tf32_err.measured || !p->hRef64)
        return 0;
    size_t nC = (size_t)(p->lay.batch * p->M * p->N);
    float a = (float)p->alpha, b = (float)p->beta;
    float *host = xmalloc(nC * sizeof(float));
    float *rA = xmalloc((size_t)p->sA * sizeof(float)), *rB = xmalloc((size_t)p->sB * sizeof(float));
    memcpy(rA, p->hA, (size_t)p->sA * sizeof(float));
    memcpy(rB, p->hB, (size_t)p->sB * sizeof(float));
    acc_tf32_round_all(rA, (size_t)p->sA); /* the padding's NaN stays NaN */
    acc_tf32_round_all(rB, (size_t)p->sB);
    CUdeviceptr dA = 0, dB = 0;
    acc_err fast = {0}, emulated = {0};
    int rc = gpu_copy(&s->gpu, p->C, p->C0, (size_t)p->sC * sizeof(float), err) ||
             blas_gemm_layout(&s->blas, DTYPE_F32, true, (int)p->M, (int)p->N, (int)p->K, &p->lay, &a, p->A, p->B, &b,
                              p->C, err) ||
             download_gather(s, host, p->C, sizeof(float), err);
    if (!rc)
        acc_measure(host, DTYPE_F32, p->hRef64, p->hBound, nC, &fast);
    rc = rc || gpu_alloc(&s->gpu, (size_t)p->sA * sizeof(float), &dA, err) ||
         gpu_alloc(&s->gpu, (size_t)p->sB * sizeof(float), &dB, err) ||
         gpu_upload(&s->gpu, dA, rA, (size_t)p->sA * sizeof(float), err) ||
         gpu_upload(&s->gpu, dB, rB, (size_t)p->sB * sizeof(float), err) ||
         gpu_copy(&s->gpu, p->C, p->C0, (size_t)p->sC * sizeof(float), err) ||
         blas_gemm_layout(&s->blas, DTYPE_F32, false, (int)p->M, (int)p->N, (int)p->K, &p->lay, &a, dA, dB, &b, p->C,
                          err) ||
         download_gather(s, host, p->C, sizeof(float), err);
    if (!rc) {
        acc_measure(host, DTYPE_F32, p->hRef64, p->hBound, nC, &emulated);
        p->tf32_err = acc_err_larger(&fast, &emulated);
    }
    gpu_free(&s->gpu, dA);
    gpu_free(&s->gpu, dB);
    free(rA);
    free(rB);
    free(host);
    return rc ? -1 : 0;
}

/* Draw n values of a stored matrix: its logical batch x rows x cols values from the generator (the
 * same values, in the same order, as a packed problem's), scattered into a buffer of NaN. */
static void *draw(dtype_t dtype, uint64_t seed, uint64_t stream, int64_t span, int64_t batch, int64_t rows,
                  int64_t cols, int64_t ld, int64_t stride)
{
    size_t es = dtype_size(dtype), n = (size_t)(batch * rows * cols);
    void *stored = xmalloc(span > 0 ? (size_t)span * es : es);
    memset(stored, 0xFF, (size_t)span * es);
    void *packed = xmalloc(n ? n * es : es);
    rng_fill(packed, dtype, n, seed, stream);
    scatter(stored, packed, es, batch, rows, cols, ld, stride);
    free(packed);
    return stored;
}

/* The half types' bound S = |alpha| |A||B| + |beta| |C0| (A and B on the device hold their absolute
 * values, problem_setup's) in float: GemmEx with a float C, from |C0| widened on the host. f16 would
 * overflow at 65504 and both would round S to 8 or 11 bits. */
static int half_bound(session_t *s, err_t *err)
{
    problem_t *p = &s->prob;
    size_t sC = (size_t)p->sC;
    float *absC = xmalloc(sC * sizeof(float));
    for (size_t i = 0; i < sC; i++)
        absC[i] = (float)fabs(elem_get(p->hC0, p->dtype, i));
    float a = (float)fabs(p->alpha), b = (float)fabs(p->beta);
    CUdeviceptr S = 0;
    int rc = gpu_alloc(&s->gpu, sC * sizeof(float), &S, err) || gpu_upload(&s->gpu, S, absC, sC * sizeof(float), err) ||
             blas_gemm_half(&s->blas, p->dtype, DTYPE_F32, (int)p->M, (int)p->N, (int)p->K, &p->lay, &a, p->A, p->B,
                            &b, S, err) ||
             download_gather(s, p->hBound, S, sizeof(float), err);
    gpu_free(&s->gpu, S);
    free(absC);
    return rc ? -1 : 0;
}

int problem_setup(session_t *s, dtype_t dtype, int64_t M, int64_t N, int64_t K, const layout_t *lay, double alpha,
                  double beta, uint64_t seed, err_t *err)
{
    problem_t *p = &s->prob;
    layout_t packed;
    if (!lay) {
        layout_packed(&packed, 0, 0, M, N, K, 1);
        lay = &packed;
    }
    if (p->ready && p->dtype == dtype && p->M == M && p->N == N && p->K == K && p->alpha == alpha &&
        p->beta == beta && p->seed == seed && memcmp(&p->lay, lay, sizeof *lay) == 0)
        return 0;
    problem_release(s);
    if (layout_check(lay, M, N, K, err))
        return -1;
    gpu_t *g = &s->gpu;
    size_t es = dtype_size(dtype);
    /* Buffers hold the stored matrices, padding and gaps between products included. */
    int64_t sA = layout_span_a(lay, M, K), sB = layout_span_b(lay, N, K), sC = layout_span_c(lay, M, N);
    size_t nC = (size_t)(lay->batch * M * N);
    size_t need = ((size_t)sA + (size_t)sB + 3 * (size_t)sC) * es;
    size_t free_b = 0, total_b = 0;
    if (gpu_mem_info(g, &free_b, &total_b, err))
        return -1;
    if (need + (64u << 20) > free_b)
        return err_set(err, ERR_SYSTEM, "engine", 0, 0,
                       "out of device memory: %lldx%lldx%lld %s needs %.2f GB, %.2f GB free", (long long)M,
                       (long long)N, (long long)K, dtype_name(dtype), need / 1e9, free_b / 1e9);
    /* The host keeps A, B, C0, the reference, the bound and the result, and briefly |A|, |B|, |C0|. */
    size_t host_need = (2 * (size_t)sA + 2 * (size_t)sB + 2 * (size_t)sC + 3 * nC) * es, host_free = host_mem_available();
    if (host_free && host_need + (256u << 20) > host_free)
        return err_set(err, ERR_SYSTEM, "engine", 0, 0,
                       "out of host memory: %lldx%lldx%lld %s needs %.2f GB to verify, %.2f GB available",
                       (long long)M, (long long)N, (long long)K, dtype_name(dtype), host_need / 1e9, host_free / 1e9);
    p->dtype = dtype;
    p->M = M;
    p->N = N;
    p->K = K;
    p->lay = *lay;
    p->sA = sA;
    p->sB = sB;
    p->sC = sC;
    p->alpha = alpha;
    p->beta = beta;
    p->seed = seed;
    int64_t bt = lay->batch;
    p->hA = draw(dtype, seed, 1, sA, bt, layout_a_rows(lay, M, K), layout_a_cols(lay, M, K), lay->lda, lay->sa);
    p->hB = draw(dtype, seed, 2, sB, bt, layout_b_rows(lay, N, K), layout_b_cols(lay, N, K), lay->ldb, lay->sb);
    p->hC0 = draw(dtype, seed, 3, sC, bt, M, N, lay->ldc, lay->sc);
    p->hRef = xmalloc(nC * es);
    p->hBound = xmalloc(nC * dtype_size(dtype_compute(dtype))); /* S: float for the half types (verify.h) */
    p->hGot = xmalloc(nC * es);
    if (gpu_alloc(g, buf_bytes((size_t)sA, es), &p->A, err) || gpu_alloc(g, buf_bytes((size_t)sB, es), &p->B, err) ||
        gpu_alloc(g, buf_bytes((size_t)sC, es), &p->C, err) || gpu_alloc(g, buf_bytes((size_t)sC, es), &p->C0, err) ||
        gpu_alloc(g, buf_bytes((size_t)sC, es), &p->Ref, err))
        goto fail;
    /* The bound S needs |A| |B| + |C0|: run cuBLAS on absolute values, in the buffers that will
     * hold the real inputs a moment later. */
    {
        void *absA = xmalloc((size_t)sA * es), *absB = xmalloc((size_t)sB * es), *absC = xmalloc((size_t)sC * es);
        abs_array(absA, p->hA, dtype, (size_t)sA);
        abs_array(absB, p->hB, dtype, (size_t)sB);
        abs_array(absC, p->hC0, dtype, (size_t)sC);
        int rc = gpu_upload(g, p->A, absA, (size_t)sA * es, err) || gpu_upload(g, p->B, absB, (size_t)sB * es, err) ||
                 gpu_upload(g, p->Ref, absC, (size_t)sC * es, err);
        free(absA);
        free(absB);
        free(absC);
        if (rc)
            goto fail;
    }
    if (dtype_half(dtype)) {
        if (half_bound(s, err))
            goto fail;
    } else {
        double a[1], b[1];
        scalar(dtype, fabs(alpha), a);
        scalar(dtype, fabs(beta), b);
        if (blas_gemm_layout(&s->blas, dtype, false, (int)M, (int)N, (int)K, lay, a, p->A, p->B, b, p->Ref, err) ||
            download_gather(s, p->hBound, p->Ref, es, err))
            goto fail;
    }
    if (gpu_upload(g, p->A, p->hA, (size_t)sA * es, err) || gpu_upload(g, p->B, p->hB, (size_t)sB * es, err) ||
        gpu_upload(g, p->C0, p->hC0, (size_t)sC * es, err) || gpu_copy(g, p->Ref, p->C0, (size_t)sC * es, err) ||
        problem_cublas(s, p->Ref, err) || download_gather(s, p->hRef, p->Ref, es, err) || reference_setup(s, err))
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
         * path); beta = 0 overwrites C, so neither NaN nor anything else already there survives.
         * Packed C is one array; other layouts go through cuBLAS, which keeps C's padding. */
        double b[1];
        scalar(p->dtype, p->beta, b);
        size_t n = (size_t)(p->M * p->N);
        if (p->lay.batch > 1 || !layout_is_packed(&p->lay, p->M, p->N, p->K))
            return problem_cublas(s, p->C, err);
        if (p->beta == 0.0)
            return gpu_fill32(&s->gpu, p->C, 0, buf_bytes(n, dtype_size(p->dtype)) / 4, err);
        if (dtype_half(p->dtype)) /* no scal for them in the table: GemmEx with K = 0 is C = beta*C */
            return p->beta == 1.0 ? 0 : problem_cublas(s, p->C, err);
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
    size_t nC = (size_t)(p->lay.batch * p->M * p->N), es = dtype_size(p->dtype), sC = (size_t)p->sC;
    /* Two launches from the same C, and the second one's C is checked: a kernel that keeps state
     * between launches (split-K's tile counters, kernels_src/splitk.cuh) must leave it as the
     * next launch needs it, which the timed runs rely on and a single launch would not show. */
    for (int launch = 0; launch < 2; launch++) {
        /* All-ones bits are a NaN in every dtype; C0's padding is all ones too. */
        if (p->beta == 0.0) {
            if (gpu_fill32(&s->gpu, p->C, 0xFFFFFFFFu, buf_bytes(sC, es) / 4, err))
                return -1;
        } else if (gpu_copy(&s->gpu, p->C, p->C0, sC * es, err)) {
            return -1;
        }
        if (problem_enqueue(s, k, err))
            return -1;
    }
    unsigned char *raw = xmalloc(sC * es);
    if (gpu_sync(&s->gpu, err) || gpu_download(&s->gpu, raw, p->C, sC * es, err)) {
        free(raw);
        return -1;
    }
    gather(p->hGot, raw, es, p);
    size_t where = 0, touched = padding_touched(p, raw, es, &where);
    free(raw);
    memset(rep, 0, sizeof *rep);
    if (touched)
        return err_set(err, ERR_VERIFY, k->cfg->path, 0, 0,
                       "verification failed at %lldx%lldx%lld beta=%g: %zu elements of C outside the products were written (the first at offset %zu; ldc=%lld)",
                       (long long)p->M, (long long)p->N, (long long)p->K, p->beta, touched, where,
                       (long long)p->lay.ldc);
    memset(acc, 0, sizeof *acc);
    acc->cls = acc_class_of(k->cfg->accuracy, p->dtype);
    /* The batch's products one under the other: a mismatch's row is product * M + row. */
    int screen = verify_compare_u(p->hGot, p->hRef, p->hBound, p->dtype, acc_unit_roundoff(acc->cls),
                                  p->lay.batch * p->M, p->N, p->K, rep);
    acc->reference = !p->hRef64 ? "none" : p->dtype == DTYPE_F64 ? "dd" : "dgemm";
    if (p->hRef64) {
        acc_measure(p->hGot, p->dtype, p->hRef64, p->hBound, nC, &acc->kernel);
        if (acc->cls == ACC_CLASS_TF32 && tf32_setup(s, err))
            return -1;
        acc->yardstick = acc->cls == ACC_CLASS_TF32 ? p->tf32_err : p->cublas_err;
    }
    if (screen)
        return err_set(err, ERR_VERIFY, k->cfg->path, 0, 0,
                       "verification failed at %lldx%lldx%lld beta=%g: %zu of %zu elements wrong (%zu NaN/Inf)",
                       (long long)p->M, (long long)p->N, (long long)p->K, p->beta, rep->bad, rep->checked,
                       rep->nonfinite);
    char why[256];
    if (p->hRef64 && !acc_check(acc->cls, &acc->kernel, &acc->yardstick, why, sizeof why))
        return err_set(err, ERR_VERIFY, k->cfg->path, 0, 0, "verification failed at %lldx%lldx%lld beta=%g: %s",
                       (long long)p->M, (long long)p->N, (long long)p->K, p->beta, why);
    return 0;
}
