/* info.c — see info.h. */
#include "info.h"

#include "arch.h"
#include "bench.h"
#include "cache.h"
#include "session.h"

#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int info_main(const opts_t *o)
{
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    char archs[512];
    arch_nvrtc_list(archs, sizeof archs);
    printf("NVRTC %d.%d: targets %s\n", major, minor, archs);
    session_t s;
    err_t err;
    err_clear(&err);
    if (session_open(&s, o->device, &err)) {
        err_print(stderr, &err);
        return err.code;
    }
    const gpu_t *g = &s.gpu;
    const arch_info *ai = arch_lookup(g->sm);
    double hz = g->clock_khz * 1e3;
    printf("device %d: %s\n", o->device, g->name);
    printf("  arch sm_%d, %d SMs, max SM clock %d MHz, %d threads/SM\n", g->sm, g->sms, g->clock_khz / 1000,
           g->max_threads_sm);
    printf("  memory %.1f GiB, %d-bit bus at %d MHz (%.0f GB/s theoretical), L2 %d MB\n",
           g->total_mem / 1073741824.0, g->bus_bits, g->mem_clock_khz / 1000,
           2.0 * g->mem_clock_khz * 1e3 * g->bus_bits / 8 / 1e9, g->l2_bytes >> 20);
    printf("  shared memory per block (opt-in) %d bytes\n", g->smem_optin);
    printf("  peak FP32 %.1f TFLOP/s (%d lanes/SM); FP64 %.1f TFLOP/s on CUDA cores (%d lanes/SM), %.1f on tensor cores\n",
           arch_peak_flops(ai->fp32_lanes, g->sms, hz) / 1e12, ai->fp32_lanes,
           arch_peak_flops(ai->fp64_lanes, g->sms, hz) / 1e12, ai->fp64_lanes,
           arch_peak_flops(ai->fp64_tc_lanes > 0 ? ai->fp64_tc_lanes : ai->fp64_lanes, g->sms, hz) / 1e12);
    printf("  peak TF32 %.1f TFLOP/s on tensor cores (%d lanes/SM, dense; 0: none known)\n",
           arch_peak_flops(ai->tf32_tc_lanes, g->sms, hz) / 1e12, ai->tf32_tc_lanes);
    printf("  driver %d.%d, cuBLAS %d\n", g->driver_version / 1000, (g->driver_version % 1000) / 10, s.blas.version);
    int rc = EXIT_OK;
    if (o->bandwidth) {
        double dram = 0, l2 = 0, mhz = 0;
        if (bench_bandwidth(&s.gpu, &dram, &l2, &err) || bench_clock_mhz(&s.gpu, &mhz, &err)) {
            err_print(stderr, &err);
            rc = err.code;
        } else {
            printf("  measured: DRAM %.0f GB/s (copy, read + write), L2 %.0f GB/s (reads); SM clock %.0f MHz\n", dram / 1e9,
                   l2 / 1e9, mhz);
        }
    }
    session_close(&s);
    return rc;
}

int info_cache(const opts_t *o)
{
    cache_t c;
    err_t err;
    err_clear(&err);
    if (cache_open(&c, o->cache_dir, &err)) {
        err_print(stderr, &err);
        return err.code;
    }
    int rc = EXIT_OK;
    if (strcmp(o->args[0], "info") == 0) {
        cache_stats st;
        if (cache_info(&c, &st, &err)) {
            err_print(stderr, &err);
            rc = err.code;
        } else {
            printf("cache %s: %zu entries, %.1f MB", c.dir, st.entries, st.bytes / 1e6);
            if (st.temp_files)
                printf(", %zu temporary files left by interrupted writes", st.temp_files);
            printf("\n");
        }
    } else {
        size_t removed = 0;
        if (cache_clear(&c, &removed, &err)) {
            err_print(stderr, &err);
            rc = err.code;
        } else {
            printf("cache %s: removed %zu entries\n", c.dir, removed);
        }
    }
    cache_close(&c);
    return rc;
}
