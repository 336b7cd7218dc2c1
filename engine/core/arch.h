/* arch.h — what the engine needs to know about each GPU architecture it can compile for, for the
 * cases where no GPU is there to ask (compile-only runs), and the throughput figures that turn a
 * clock and an SM count into peak FLOP rates. */
#ifndef ENGINE_ARCH_H
#define ENGINE_ARCH_H

#include "err.h"

#include <stdbool.h>
#include <stddef.h>

/* A target is the compute capability x10 (90 for sm_90), plus ARCH_SPECIFIC when the
 * architecture-specific variant is asked for ("sm_90a": it may use instructions such as wgmma
 * that only that architecture has, and its CUBIN runs on that architecture alone). Templates see
 * ARCH (90) and ARCH_SPECIFIC (0 or 1), and can require the latter. */
#define ARCH_SPECIFIC 1000
static inline int arch_sm(int target) { return target % ARCH_SPECIFIC; }
static inline bool arch_specific(int target) { return target >= ARCH_SPECIFIC; }
/* The target a template's kernels are built for. arch: --arch's, or where none was given
 * (guessed) the GPU's own compute capability (sm_90 on an H100). A guessed sm_90 becomes sm_90a
 * for a template that declares "arch_specific" (wgmma needs it; such CUBINs run on that GPU alone,
 * the one found); every other template keeps the portable target, so its CUBINs, cache keys and
 * rerun lines are those of sm_90. --arch is taken as given. */
static inline int arch_for_template(int arch, bool guessed, bool specific)
{
    return guessed && specific && arch == 90 ? 90 + ARCH_SPECIFIC : arch;
}
/* "sm_90" or "sm_90a", in buf (16 bytes are enough); returns buf. */
const char *arch_name(int target, char *buf, size_t len);

typedef struct {
    int sm;             /* compute capability x10: 80, 86, 90 */
    int fp32_lanes;     /* FP32 FMA results per clock per SM */
    int fp64_lanes;     /* FP64 FMA results per clock per SM on the CUDA cores */
    int fp64_tc_lanes;  /* FP64 FMA results per clock per SM on the tensor cores (DMMA) */
    int tf32_tc_lanes;  /* TF32 FMA results per clock per SM on the tensor cores, dense; 0: none or unknown */
    int smem_optin;     /* bytes of shared memory one block may opt in to */
    int max_threads_sm; /* resident threads per SM */
    int max_blocks_sm;  /* resident blocks per SM */
    int smem_sm;        /* bytes of shared memory per SM */
    int smem_reserved;  /* bytes of it the system keeps per resident block */
} arch_info;

/* Figures for sm, a target (the closest known lower architecture of the same major version when
 * sm itself is not in the table). Never NULL for sm >= 70. */
const arch_info *arch_lookup(int sm);

/* Parse "sm_90" (or "90"; "compute_90" is refused) into 90, and "sm_90a" into 90 + ARCH_SPECIFIC
 * (from sm_90 on). Checks it against the architectures this NVRTC can target. Returns 0 or sets
 * err (EXIT_INPUT). */
int arch_parse(const char *text, int *sm, err_t *err);

/* Whether NVRTC can target sm, and the list it can target ("sm_75 sm_80 ..."). */
int arch_nvrtc_supports(int sm);
void arch_nvrtc_list(char *buf, size_t len);

/* Resident blocks per SM for a kernel of `threads` threads per block, `regs` registers per thread
 * and `smem` bytes of shared memory per block (static + dynamic), from the limits above: what the
 * tuner filters on before a GPU is involved (the driver's own figure is in every bench row). */
int arch_occupancy(const arch_info *ai, int threads, int regs, int smem);

/* BF16 and FP16 FMA results per clock per SM on the tensor cores, dense, FP32 accumulation: twice
 * the TF32 rate on every architecture the table holds (A100 312 vs 156 TFLOP/s, H100 SXM 989 vs
 * 494, GA10x 2x as well); where TF32's is unknown, FP32's. */
static inline int arch_half_tc_lanes(const arch_info *ai)
{
    return ai->tf32_tc_lanes > 0 ? 2 * ai->tf32_tc_lanes : ai->fp32_lanes;
}

/* Peak rate in FLOP/s: lanes x SMs x 2 (an FMA is two flops) x clock. */
double arch_peak_flops(int lanes, int sms, double clock_hz);

#endif
