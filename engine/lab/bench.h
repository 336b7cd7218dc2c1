/* bench.h — timing on the device, the way Triton's do_bench does it: warm up, then R timed runs of
 * I back-to-back launches each, one event pair per run, L2 flushed (a memset of twice its size)
 * before every run and outside the timed region; report the median and the spread over runs.
 * After the flush a one-block kernel spins for 0.1 ms plus 20 us per launch of the run (nvbench's
 * blocking kernel does the same job), so the run's launches are all queued before the GPU reaches
 * them: the events then time the GPU's work, not the host's calls (a cuBLAS call costs more host
 * time than a 64^3 GEMM takes on the GPU, so unqueued runs timed the caller; docs/RESULTS.md
 * "Timing tiny shapes").
 * Also two probes that give the numbers next to the timings their meaning: the SM clock actually
 * running, and the DRAM and L2 bandwidths the roofline divides by. */
#ifndef ENGINE_BENCH_H
#define ENGINE_BENCH_H

#include "err.h"
#include "gpu.h"

/* Enqueue one complete run of the work being timed on the engine's stream. */
typedef int (*bench_fn)(void *ctx, err_t *err);

typedef struct {
    int warmup; /* untimed runs first */
    int runs;   /* timed runs: the statistics are over these */
    int iters;  /* launches per timed run */
} bench_opts;

typedef struct {
    double median_ms; /* per launch */
    double min_ms;
    double max_ms;
    int runs;
} bench_stats;

typedef struct {
    CUdeviceptr buf; /* scratch written before each run to evict inputs from L2 */
    size_t bytes;
    gpu_module mod;  /* the spin kernel, launched after the flush */
    CUfunction spin;
} bench_flush;

int bench_flush_init(gpu_t *g, bench_flush *f, err_t *err);
void bench_flush_free(gpu_t *g, bench_flush *f);

int bench_time(gpu_t *g, bench_fn fn, void *ctx, const bench_opts *o, const bench_flush *flush, bench_stats *st,
               err_t *err);
/* Time n pieces of work the same way with their runs interleaved (run r of each in turn, each
 * after its own flush), so that a clock that drifts during the measurement moves them alike:
 * how a kernel is compared with cuBLAS "in the same run". st holds n results. */
int bench_time_n(gpu_t *g, size_t n, const bench_fn *fns, void *const *ctxs, const bench_opts *o,
                 const bench_flush *flush, bench_stats *st, err_t *err);

/* SM clock observed by a kernel that spins for a known number of cycles on every SM, in MHz. */
int bench_clock_mhz(gpu_t *g, double *mhz, err_t *err);

/* DRAM bandwidth: a device-to-device copy far larger than L2 (bytes read + written per second).
 * L2 bandwidth: what all SMs together read from a buffer resident in L2, bypassing L1. */
int bench_bandwidth(gpu_t *g, double *dram_bps, double *l2_bps, err_t *err);

#endif
