/* cublasdl.h — libcublas opened at run time (dlopen) rather than linked, for the library's first
 * calls (fallback.c) and for the command's reference and timing (lab/blas.c). Neither links it: a
 * process that never calls cuBLAS never pays its relocations (about 0.08 s of CPU a process start),
 * and in a torch process the soname finds torch's copy. One table, loaded once per process. */
#ifndef ENGINE_CUBLASDL_H
#define ENGINE_CUBLASDL_H

#include "err.h"

#include <cublas_v2.h>

/* Every cuBLAS function engine calls. */
#define CUBLASDL_FUNCS(X)                                                                          \
    X(cublasCreate)                                                                                \
    X(cublasDestroy)                                                                               \
    X(cublasSetStream)                                                                             \
    X(cublasSetMathMode)                                                                           \
    X(cublasGetVersion)                                                                            \
    X(cublasGetStatusName)                                                                         \
    X(cublasGetStatusString)                                                                       \
    X(cublasSgemm)                                                                                 \
    X(cublasDgemm)                                                                                 \
    X(cublasSgemmStridedBatched)                                                                   \
    X(cublasDgemmStridedBatched)                                                                   \
    X(cublasGemmEx)                                                                                \
    X(cublasGemmStridedBatchedEx)                                                                  \
    X(cublasSscal)                                                                                 \
    X(cublasDscal)

typedef struct {
#define X(f) __typeof__(&f) f;
    CUBLASDL_FUNCS(X)
#undef X
} cublasdl_t;

/* The table, libcublas loaded on the first call (the newest soname engine builds with first);
 * NULL with err set (why it could not be loaded, or the symbol it lacks). Thread-safe. */
const cublasdl_t *cublasdl_load(err_t *err);

#endif
