/* apiarg.h — the library's argument checks (engine.h), made before any GPU work and without a
 * context, and the mapping of a caller's problem (row- or column-major, CBLAS argument order) onto
 * the row-major problem the kernels compute; and the message of each thread's last failure
 * (api_fail, engine_last_error), which every part of the library reports through.
 *
 * Column-major C (m x n, ldc) is, read row-major, C^T (n x m, ldc); C^T = op(B)^T op(A)^T, and a
 * column-major matrix read row-major is its own transpose. So a column-major call is the row-major
 * call with A and B swapped, m and n swapped, lda and ldb swapped, each keeping its own transpose
 * flag. */
#ifndef ENGINE_APIARG_H
#define ENGINE_APIARG_H

#include "../../include/engine.h"
#include "err.h"
#include "template.h"

#include <stdbool.h>
#include <stdint.h>

/* A call as the caller made it. */
typedef struct {
    const char *fn;      /* the API function, the source of every message ("engine_sgemm") */
    int dtype;           /* engine_dtype */
    int order, transa, transb;
    int64_t m, n, k;
    int64_t lda, ldb, ldc;
    int64_t batch;                        /* 1 for a plain call */
    int64_t stride_a, stride_b, stride_c; /* elements */
} apiarg_desc;

/* The same problem as the kernels see it: row-major, op(A) M x K, op(B) K x N, C M x N. */
typedef struct {
    dtype_t dtype;
    int64_t M, N, K;
    int ta, tb;              /* 1: the matrix is stored transposed */
    int64_t lda, ldb, ldc;   /* elements */
    int64_t batch;
    int64_t sa, sb, sc;      /* elements; 0 when batch is 1 */
    bool swapped;            /* column-major: the caller's A is the kernels' B */
} apiarg_problem;

/* Check desc (enums, sizes, lds, batch and strides) and map it. Returns ENGINE_SUCCESS, or the status
 * with err set to the one-line message (source: desc->fn). */
engine_status apiarg_check(const apiarg_desc *desc, apiarg_problem *out, err_t *err);

/* Check the pointers of one call of p: none null where its matrix is read or written, each a multiple
 * of the element size. A, B and C are the caller's (the swap is the caller of this function's
 * business; a plan's own alignment class is checked by apiplan.c). */
engine_status apiarg_check_pointers(const char *fn, const apiarg_problem *p, const void *A, const void *B,
                                    const void *C, err_t *err);

/* A caller-filled public struct (engine.h: its first member is its size) as this library lays it
 * out: the caller's first `size` bytes copied over out (ours bytes, defaults already in it), so the
 * fields an older, smaller struct lacks keep their defaults, and out's size set to ours. A size
 * below oldest (the first sized layout's: 0 is an init function never called)
 * is ENGINE_ERROR_INVALID_ARGUMENT, one above ours (a newer engine.h) ENGINE_ERROR_VERSION, with
 * err set to the one-line message naming type (source: fn). */
engine_status apiarg_sized(const char *fn, const char *type, const void *given, size_t oldest, size_t ours, void *out,
                           err_t *err);

/* Keep the failure's one-line message (err, or "fn: text") as this thread's last error
 * (engine_last_error) and return st: every failing call of the library ends here. */
engine_status api_fail(engine_status st, const err_t *err);
/* The status of an error's cause (err.h): the one place causes become engine_status. */
engine_status api_status_of(const err_t *err);
engine_status api_fail_text(engine_status st, const char *fn, const char *text);

#endif
