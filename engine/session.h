/* session.h — what one `engine bench` or `engine verify` holds while it runs: the GPU and its
 * cuBLAS handle, the current problem (inputs, cuBLAS reference, error bounds, on host and device)
 * and kernels built from configs. A kernel is planned and compiled without a GPU (kernel_build),
 * then loaded, verified and timed with one (kernel_load, kernel_verify, kernel_enqueue). */
#ifndef ENGINE_SESSION_H
#define ENGINE_SESSION_H

#include "accuracy.h"
#include "bench.h"
#include "blas.h"
#include "config.h"
#include "err.h"
#include "gpu.h"
#include "jit.h"
#include "reference.h"
#include "template.h"
#include "verify.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    dtype_t dtype;
    int64_t M, N, K;
    double alpha, beta;
    uint64_t seed;
    void *hA, *hB, *hC0; /* inputs, dtype */
    void *hRef;          /* cuBLAS result */
    void *hBound;        /* S = |alpha| |A||B| + |beta| |C0| (verify.h) */
    void *hGot;          /* a kernel's result, downloaded */
    double *hRef64;      /* the FP64-accurate product (reference.h); NULL when it did not fit */
    acc_err cublas_err;  /* cuBLAS's own error against it (accuracy.h) */
    acc_err tf32_err;    /* cuBLAS TF32's, measured when a tf32-class kernel first asks */
    CUdeviceptr A, B, C, C0, Ref;
    bool ready;
} problem_t;

typedef struct {
    gpu_t gpu;
    bool gpu_open;
    blas_t blas;
    bench_flush flush;
    reference_t ref;
    problem_t prob;
    CUdeviceptr W; /* split-K and other scratch, grown on demand */
    size_t W_bytes;
    /* ENGINE_PDL: -1 (unset) each config's PDL parameter decides (plan_use_pdl); 0 never;
     * 1 always, where the template allows it (for A/B runs). */
    int pdl;
} session_t;

int session_open(session_t *s, int device, err_t *err);
void session_close(session_t *s);

/* Make (dtype, shape, alpha, beta, seed) the current problem: draw inputs, upload them, run cuBLAS
 * for the reference and for the bound. Keeps the current one when nothing changed. */
int problem_setup(session_t *s, dtype_t dtype, int64_t M, int64_t N, int64_t K, double alpha, double beta,
                  uint64_t seed, err_t *err);

/* Enqueue the cuBLAS product C = alpha*A*B + beta*C on the current problem. */
int problem_cublas(session_t *s, CUdeviceptr C, err_t *err);

typedef struct {
    const config_t *cfg;
    plan_t plan;
    const jit_result *jit;
    const jit_func_info *info; /* of kernel "gemm" */
    gpu_module mod;
    CUfunction fn[TPL_MAX_LAUNCHES];
    bool pdl; /* launched with programmatic dependent launch: decided by kernel_load */
    bool loaded;
} kernel_t;

/* Plan cfg for the shape and compile it for sm_<arch> (or find it compiled: origin, may be NULL,
 * says where it came from). No GPU needed. */
int kernel_build(const config_t *cfg, int arch, int64_t smem_limit, int64_t M, int64_t N, int64_t K, kernel_t *k,
                 jit_origin *origin, err_t *err);
/* Load the CUBIN into the session's context and look up its kernels. */
int kernel_load(session_t *s, kernel_t *k, err_t *err);
void kernel_free(session_t *s, kernel_t *k);

/* Enqueue every launch of the kernel on the current problem, writing C. */
int kernel_enqueue(session_t *s, kernel_t *k, err_t *err);

/* Prepare C (NaN when beta = 0, so unwritten or beta-polluted outputs fail; C0 otherwise), run
 * once, check every element against cuBLAS (verify.h), then the errors against the FP64 reference
 * against the config's accuracy class (accuracy.h). Returns 0 and fills rep and acc; EXIT_VERIFY in
 * err when an element is wrong or the errors are not the class's. */
int kernel_verify(session_t *s, kernel_t *k, verify_report *rep, acc_verdict *acc, err_t *err);

/* Registers per thread, spill bytes (stores + loads) and shared memory per block (static + dynamic)
 * of kernel "gemm". Registers and static shared memory come from the loaded function (the driver
 * is the authority); spills from ptxas's report, -1 when it gave none. */
int kernel_resources(session_t *s, kernel_t *k, int *regs, int *spill_bytes, int *smem_bytes, err_t *err);

/* Resident blocks per SM of kernel "gemm" and its threads per block. */
int kernel_occupancy(session_t *s, kernel_t *k, int *blocks, int *threads, err_t *err);

#endif
