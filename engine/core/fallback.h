/* fallback.h — cuBLAS, loaded at run time, for the library's calls whose own kernel is not loaded
 * yet (it compiles on a background thread: apicall.h). libengine links no cuBLAS: like the driver
 * (gpu.h), libcublas is dlopen()ed, so a program that never needs the fallback never pays for it and
 * a machine without it still compiles and plans; where torch has loaded its libcublas already, the
 * same library is found by its soname.
 *
 * One handle per context, guarded by a mutex: a handle is not safe on several streams at once, and
 * the fallback serves only the first calls of a problem, so contention is rare. */
#ifndef ENGINE_FALLBACK_H
#define ENGINE_FALLBACK_H

#include "apiarg.h"
#include "cublasdl.h"
#include "err.h"

#include <cuda.h>
#include <pthread.h>
#include <stdbool.h>

typedef struct {
    const cublasdl_t *bl;  /* libcublas's functions (cublasdl.h: loaded once a process, then immutable) */
    void *handle;          /* cublasHandle_t, created in fallback_open */
    pthread_mutex_t lock;  /* guards the handle (its stream is set per call) */
    bool open;
} fallback_t;

/* Load libcublas and create a handle on the current context (the caller makes the GPU's primary
 * context current). Fails with EXIT_SYSTEM and a line naming what is missing. */
int fallback_open(fallback_t *f, err_t *err);
void fallback_close(fallback_t *f);

/* Whether cuBLAS can take p at all: its sizes, lds and strides fit its 32-bit ints. */
bool fallback_fits(const apiarg_problem *p);

/* C = alpha op(A) op(B) + beta C for the kernels' row-major problem p (A and B the kernels': already
 * swapped for a column-major call), enqueued on stream. */
int fallback_gemm(fallback_t *f, const apiarg_problem *p, double alpha, CUdeviceptr A, CUdeviceptr B, double beta,
                  CUdeviceptr C, CUstream stream, err_t *err);

#endif
