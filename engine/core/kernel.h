/* kernel.h — one config made into a kernel for one problem, and its launch on caller-owned buffers.
 * A kernel is planned and compiled without a GPU (kernel_build), loaded into a context
 * (kernel_load), then launched on any stream (kernel_launch) as often as wanted. Nothing here
 * needs a session, cuBLAS or the CLI: the engine's worker and the library stand on the same code. */
#ifndef ENGINE_KERNEL_H
#define ENGINE_KERNEL_H

#include "config.h"
#include "err.h"
#include "gpu.h"
#include "jit.h"
#include "layout.h"
#include "template.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    const config_t *cfg;
    plan_t plan; /* with the layout and the pointers' alignment class it was built for */
    const jit_result *jit;
    const jit_func_info *info; /* of kernel "gemm" */
    gpu_t *gpu;                /* where it is loaded; NULL before kernel_load */
    gpu_module mod;
    CUfunction fn[TPL_MAX_LAUNCHES];
    bool pdl; /* launched with programmatic dependent launch: decided by kernel_load */
    /* Per launch: the blocks the GPU keeps resident (SMs x blocks per SM) where the launch is
     * persistent, its grid[0] capped to it (kernel_fit); 0 for the others. */
    int64_t resident[TPL_MAX_LAUNCHES];
    bool loaded;
} kernel_t;

/* One product (or strided batch of them): C = alpha op(A) op(B) + beta C, operands on the device
 * as lay says. alpha and beta are converted to the dtype. */
typedef struct {
    dtype_t dtype;
    int64_t M, N, K;
    layout_t lay;
    double alpha, beta;
    CUdeviceptr A, B, C;
} gemm_call;

/* Plan cfg at target `to` (its arch, shape, layout and alignment class) and compile it for that
 * arch with jit (or find it compiled: origin, may be NULL, says where it came from; the result is
 * jit's, k->jit valid while jit keeps it). No GPU needed. to->lay
 * must be given and pass layout_check; a template that cannot do it refuses with EXIT_INPUT. */
int kernel_build(jit_t *jit, const config_t *cfg, const plan_target *to, kernel_t *k, jit_origin *origin, err_t *err);
/* The same plan and compile, only to put the CUBIN into the disk cache (jit_prepare): nothing is
 * kept (engine warm). */
int kernel_prepare(jit_t *jit, const config_t *cfg, const plan_target *to, jit_origin *origin, err_t *err);
/* Load the CUBIN into g's context and look up its kernels. pdl: -1 the config's PDL parameter
 * decides (plan_use_pdl, from the occupancy on g), 0 never, 1 always where the template allows it. */
int kernel_load(gpu_t *g, int pdl, kernel_t *k, err_t *err);
/* Size k's persistent launches to the GPU it is loaded on (k->gpu, k->fn set): kernel_load does it;
 * a caller that sets k->fn itself (the library's shared modules) calls it after. */
int kernel_fit(kernel_t *k, err_t *err);
/* Unload (when loaded) and free the plan. */
void kernel_free(kernel_t *k);

/* Scratch bytes the launch needs in W (0: W may be 0). */
size_t kernel_workspace_bytes(const kernel_t *k, const gemm_call *c);
/* Enqueue every launch of the kernel on stream: c must be the problem it was built for (dtype,
 * shape, layout) with pointers of at least its alignment class, and K >= 1 (C = beta C is the
 * caller's). Nothing is synchronised. EXIT_INPUT, with nothing launched, when c does not fit. */
int kernel_launch(const kernel_t *k, const gemm_call *c, CUdeviceptr W, CUstream stream, err_t *err);

/* Registers per thread, spill bytes (stores + loads) and shared memory per block (static + dynamic)
 * of kernel "gemm". Registers and static shared memory come from the loaded function (the driver
 * is the authority); spills from ptxas's report, -1 when it gave none. */
int kernel_resources(const kernel_t *k, int *regs, int *spill_bytes, int *smem_bytes, err_t *err);
/* Resident blocks per SM of kernel "gemm" and its threads per block. */
int kernel_occupancy(const kernel_t *k, int *blocks, int *threads, err_t *err);

#endif
