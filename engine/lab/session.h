/* session.h — what one `engine bench` or `engine verify` holds while it runs: the GPU and its
 * cuBLAS handle, the current problem (inputs, cuBLAS reference, error bounds, on host and device),
 * and the runs of kernels (kernel.h) on it: problem_enqueue, problem_verify. */
#ifndef ENGINE_SESSION_H
#define ENGINE_SESSION_H

#include "accuracy.h"
#include "bench.h"
#include "blas.h"
#include "config.h"
#include "err.h"
#include "gpu.h"
#include "jit.h"
#include "kernel.h"
#include "layout.h"
#include "reference.h"
#include "template.h"
#include "verify.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    dtype_t dtype;
    int64_t M, N, K;
    layout_t lay;        /* how A, B, C sit in their buffers */
    int64_t sA, sB, sC;  /* elements each buffer spans (layout_span_*): padding and batch included */
    double alpha, beta;
    uint64_t seed;
    void *hA, *hB, *hC0; /* inputs, dtype, as stored (sA, sB, sC elements; padding all-ones bytes, NaN) */
    /* The rest are the batch's M x N products packed one after the other (batch * M * N elements),
     * gathered from C's layout: */
    void *hRef;          /* cuBLAS result (in the same layout) */
    void *hBound;        /* S = |alpha| |A||B| + |beta| |C0| (verify.h) */
    void *hGot;          /* a kernel's result, downloaded */
    double *hRef64;      /* the FP64-accurate product (reference.h); NULL when it did not fit */
    acc_err cublas_err;  /* cuBLAS's own error against it (accuracy.h) */
    acc_err tf32_err;    /* TF32 arithmetic's (accuracy.h), measured when a tf32-class kernel first asks */
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

/* Make (dtype, shape, layout, alpha, beta, seed) the current problem: draw inputs (the stored
 * matrices, padding filled with NaN), upload them, run cuBLAS in the same layout for the reference
 * and for the bound, and the FP64 reference. lay NULL: packed NN, one product. Keeps the current
 * one when nothing changed. EXIT_INPUT when lay breaks a rule (layout_check). */
int problem_setup(session_t *s, dtype_t dtype, int64_t M, int64_t N, int64_t K, const layout_t *lay, double alpha,
                  double beta, uint64_t seed, err_t *err);

/* Enqueue the cuBLAS product C = alpha*op(A)*op(B) + beta*C on the current problem, in its layout. */
int problem_cublas(session_t *s, CUdeviceptr C, err_t *err);

/* Enqueue every launch of k (built for the current problem) on the session's stream, writing C;
 * with K = 0, C = beta*C instead (BLAS), which no template needs to do. */
int problem_enqueue(session_t *s, const kernel_t *k, err_t *err);

/* Prepare C (NaN when beta = 0, so unwritten or beta-polluted outputs fail; C0 otherwise), run
 * twice, check that C's padding (all-ones bytes) is untouched, every element against cuBLAS
 * (verify.h), then the errors against the FP64 reference against the config's accuracy class
 * (accuracy.h). Returns 0 and fills rep and acc; EXIT_VERIFY in
 * err when an element is wrong or the errors are not the class's. */
int problem_verify(session_t *s, const kernel_t *k, verify_report *rep, acc_verdict *acc, err_t *err);

#endif
