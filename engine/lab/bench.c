/* bench.c — see bench.h. */
#include "bench.h"

#include "jit.h"
#include "labjit.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* Each thread spins until its SM's clock has advanced `cycles`; with one block per SM the kernel
 * takes cycles / f seconds, whatever f is. Also the wait after a flush (bench.h). */
static const char k_probe_src[] =
    "extern \"C\" __global__ void spin(long long cycles, long long *out) {\n"
    "  long long t0 = clock64(), t = t0;\n"
    "  while (t - t0 < cycles) t = clock64();\n"
    "  if (threadIdx.x == 0) out[blockIdx.x] = t - t0;\n"
    "}\n";

static int spin_module(gpu_t *g, const char *label, gpu_module *mod, CUfunction *f, err_t *err)
{
    const jit_result *jr;
    return jit_compile(lab_jit(), "clock_probe.cu", k_probe_src, NULL, 0, g->sm, label, &jr, NULL, err) ||
           gpu_module_load(g, jr->cubin, label, mod, err) || gpu_function(g, mod, "spin", f, err);
}

int bench_flush_init(gpu_t *g, bench_flush *f, err_t *err)
{
    memset(f, 0, sizeof *f);
    f->bytes = (size_t)(g->l2_bytes > 0 ? g->l2_bytes : 64 << 20) * 2;
    return gpu_alloc(g, f->bytes, &f->buf, err) || spin_module(g, "queue wait", &f->mod, &f->spin, err) ? -1 : 0;
}

void bench_flush_free(gpu_t *g, bench_flush *f)
{
    gpu_free(g, f->buf);
    gpu_module_unload(g, &f->mod);
    memset(f, 0, sizeof *f);
}

/* Flush L2, then hold the GPU while the host queues the run's `iters` launches (bench.h): 0.1 ms
 * and 20 us a launch at 2 GHz, at most 20 ms. A cuBLAS call costs the host 9-13 us (measured:
 * a run of 167 calls at 64^3 read 9-13 us a call, 4.6 us when queued ahead). */
static int flush_and_wait(gpu_t *g, const bench_flush *f, int r, int iters, err_t *err)
{
    if (!f || !f->buf)
        return 0;
    long long cycles = 200000 + 40000LL * (iters < 500 ? iters : 500);
    CUdeviceptr out = f->buf;   /* the spin's one word lands in the scratch buffer */
    void *args[] = {&cycles, &out};
    const int64_t grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
    return gpu_fill32(g, f->buf, (uint32_t)r, f->bytes / 4, err) || gpu_launch(g, f->spin, grid, block, 0, args, err)
               ? -1
               : 0;
}

static void stats_of(double *times, int runs, bench_stats *st)
{
    st->runs = runs;
    st->min_ms = st->max_ms = times[0];
    for (int r = 1; r < runs; r++) {
        if (times[r] < st->min_ms)
            st->min_ms = times[r];
        if (times[r] > st->max_ms)
            st->max_ms = times[r];
    }
    st->median_ms = median(times, runs > 0 ? (size_t)runs : 0);
}

int bench_time_n(gpu_t *g, size_t n, const bench_fn *fns, void *const *ctxs, const bench_opts *o,
                 const bench_flush *flush, bench_stats *st, err_t *err)
{
    int runs = o->runs > 0 ? o->runs : 1;
    CUevent start = NULL, stop = NULL;
    double *times = calloc(n * (size_t)runs, sizeof *times);
    int rc = -1;
    if (!times)
        return err_set(err, ERR_SYSTEM, "engine", 0, 0, "out of host memory");
    memset(st, 0, n * sizeof *st);
    if (gpu_event_create(g, &start, err) || gpu_event_create(g, &stop, err))
        goto out;
    for (size_t j = 0; j < n; j++)
        for (int i = 0; i < o->warmup; i++)
            if (fns[j](ctxs[j], err))
                goto out;
    if (gpu_sync(g, err))
        goto out;
    for (int r = 0; r < runs; r++) {
        for (size_t j = 0; j < n; j++) {
            if (flush_and_wait(g, flush, r, o->iters, err))
                goto out;
            if (gpu_event_record(g, start, err))
                goto out;
            for (int i = 0; i < o->iters; i++)
                if (fns[j](ctxs[j], err))
                    goto out;
            if (gpu_event_record(g, stop, err))
                goto out;
            float ms = 0.f;
            if (gpu_event_elapsed(g, start, stop, &ms, err))
                goto out;
            times[j * (size_t)runs + (size_t)r] = (double)ms / o->iters;
        }
    }
    for (size_t j = 0; j < n; j++)
        stats_of(times + j * (size_t)runs, runs, &st[j]);
    rc = 0;
out:
    gpu_event_destroy(g, start);
    gpu_event_destroy(g, stop);
    free(times);
    return rc;
}

int bench_time(gpu_t *g, bench_fn fn, void *ctx, const bench_opts *o, const bench_flush *flush, bench_stats *st,
               err_t *err)
{
    return bench_time_n(g, 1, &fn, &ctx, o, flush, st, err);
}

int bench_clock_mhz(gpu_t *g, double *mhz, err_t *err)
{
    gpu_module mod = {0};
    CUfunction f;
    CUdeviceptr out = 0;
    CUevent a = NULL, b = NULL;
    int rc = -1;
    if (spin_module(g, "clock probe", &mod, &f, err) ||
        gpu_alloc(g, (size_t)g->sms * sizeof(long long), &out, err) || gpu_event_create(g, &a, err) ||
        gpu_event_create(g, &b, err))
        goto out;
    long long cycles = 20LL * 1000 * 1000; /* ~10 ms at 2 GHz: long against launch overhead */
    void *args[] = {&cycles, &out};
    int64_t grid[3] = {g->sms, 1, 1}, block[3] = {32, 1, 1};
    if (gpu_launch(g, f, grid, block, 0, args, err) || gpu_sync(g, err)) /* first launch wakes the GPU */
        goto out;
    float ms = 0.f;
    if (gpu_event_record(g, a, err) || gpu_launch(g, f, grid, block, 0, args, err) ||
        gpu_event_record(g, b, err) || gpu_event_elapsed(g, a, b, &ms, err))
        goto out;
    *mhz = ms > 0.f ? (double)cycles / ((double)ms * 1e3) : 0.0;
    rc = 0;
out:
    gpu_event_destroy(g, a);
    gpu_event_destroy(g, b);
    gpu_free(g, out);
    gpu_module_unload(g, &mod);
    return rc;
}

static int copy_rate(gpu_t *g, size_t bytes, int reps, double *bps, err_t *err)
{
    CUdeviceptr src = 0, dst = 0;
    CUevent a = NULL, b = NULL;
    int rc = -1;
    if (gpu_alloc(g, bytes, &src, err) || gpu_alloc(g, bytes, &dst, err) || gpu_event_create(g, &a, err) ||
        gpu_event_create(g, &b, err) || gpu_fill32(g, src, 0x3f800000u, bytes / 4, err))
        goto out;
    double best = 0.0;
    for (int trial = 0; trial < 3; trial++) {
        if (gpu_copy(g, dst, src, bytes, err) || gpu_event_record(g, a, err))
            goto out;
        for (int i = 0; i < reps; i++)
            if (gpu_copy(g, dst, src, bytes, err))
                goto out;
        float ms = 0.f;
        if (gpu_event_record(g, b, err) || gpu_event_elapsed(g, a, b, &ms, err))
            goto out;
        double r = 2.0 * (double)bytes * reps / ((double)ms * 1e-3);
        if (r > best)
            best = r;
    }
    *bps = best;
    rc = 0;
out:
    gpu_event_destroy(g, a);
    gpu_event_destroy(g, b);
    gpu_free(g, src);
    gpu_free(g, dst);
    return rc;
}

/* Every thread streams float4s of a buffer that fits in L2 with ld.global.cg (cached in L2 only, so
 * L1 cannot answer), many times over: bytes read per second is what the SMs can pull from L2. */
static const char k_l2_src[] =
    "extern \"C\" __global__ void l2read(const float4 *p, long long n4, int reps, float *out) {\n"
    "  float acc = 0.f;\n"
    "  const long long stride = (long long)gridDim.x * blockDim.x;\n"
    "  for (int r = 0; r < reps; ++r)\n"
    "    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += stride) {\n"
    "      float4 v = __ldcg(p + i);\n"
    "      acc += v.x + v.y + v.z + v.w;\n"
    "    }\n"
    "  if (acc == 1234.5f) out[0] = acc; /* never true: keeps the loads alive */\n"
    "}\n";

static int l2_read_rate(gpu_t *g, size_t bytes, double *bps, err_t *err)
{
    const jit_result *jr;
    gpu_module mod = {0};
    CUfunction f;
    CUdeviceptr buf = 0, out = 0;
    CUevent a = NULL, b = NULL;
    int rc = -1;
    if (jit_compile(lab_jit(), "l2_probe.cu", k_l2_src, NULL, 0, g->sm, "L2 probe", &jr, NULL, err))
        return -1;
    if (gpu_module_load(g, jr->cubin, "L2 probe", &mod, err) || gpu_function(g, &mod, "l2read", &f, err) ||
        gpu_alloc(g, bytes, &buf, err) || gpu_alloc(g, 64, &out, err) || gpu_event_create(g, &a, err) ||
        gpu_event_create(g, &b, err) || gpu_fill32(g, buf, 0x3f800000u, bytes / 4, err))
        goto out;
    long long n4 = (long long)(bytes / 16);
    int reps = 20;
    void *args[] = {&buf, &n4, &reps, &out};
    int64_t grid[3] = {(int64_t)g->sms * 4, 1, 1}, block[3] = {512, 1, 1};
    double best = 0.0;
    for (int trial = 0; trial < 4; trial++) { /* the first trial also warms L2 */
        float ms = 0.f;
        if (gpu_event_record(g, a, err) || gpu_launch(g, f, grid, block, 0, args, err) ||
            gpu_event_record(g, b, err) || gpu_event_elapsed(g, a, b, &ms, err))
            goto out;
        double r = (double)bytes * reps / ((double)ms * 1e-3);
        if (trial > 0 && r > best)
            best = r;
    }
    *bps = best;
    rc = 0;
out:
    gpu_event_destroy(g, a);
    gpu_event_destroy(g, b);
    gpu_free(g, buf);
    gpu_free(g, out);
    gpu_module_unload(g, &mod);
    return rc;
}

int bench_bandwidth(gpu_t *g, double *dram_bps, double *l2_bps, err_t *err)
{
    size_t l2 = (size_t)(g->l2_bytes > 0 ? g->l2_bytes : 4 << 20);
    size_t big = l2 * 16 > ((size_t)1 << 30) ? l2 * 16 : ((size_t)1 << 30);
    size_t free_b = 0, total_b = 0;
    if (gpu_mem_info(g, &free_b, &total_b, err))
        return -1;
    if (big > free_b / 4)
        big = free_b / 4;
    /* DRAM: a copy far larger than L2 (bytes read + written). L2: reads of a quarter of L2. */
    return copy_rate(g, big, 4, dram_bps, err) || l2_read_rate(g, l2 / 4, l2_bps, err) ? -1 : 0;
}
