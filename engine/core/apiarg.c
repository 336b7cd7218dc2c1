/* apiarg.c — see apiarg.h. */
#include "apiarg.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static int bad(err_t *err, const char *fn, engine_status st, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int bad(err_t *err, const char *fn, engine_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_vset(err, st == ENGINE_ERROR_NO_GPU ? EXIT_SYSTEM : EXIT_INPUT, fn, 0, 0, fmt, ap);
    va_end(ap);
    return (int)st;
}

static const char *order_name(int order) { return order == ENGINE_ROW_MAJOR ? "row-major" : "column-major"; }

/* One matrix's leading dimension: stored rows x cols in the caller's order, so ld must reach the
 * length of a row (row-major) or of a column (column-major). */
static int check_ld(const apiarg_desc *d, char name, int trans, int64_t ld, int64_t rows, int64_t cols, err_t *err)
{
    int64_t need = d->order == ENGINE_ROW_MAJOR ? cols : rows;
    if (need < 1)
        need = 1;
    if (ld >= need)
        return 0;
    return bad(err, d->fn, ENGINE_ERROR_INVALID_ARGUMENT,
               "ld%c = %lld is too small: %c is stored %lld x %lld %s%s, so ld%c must be >= %lld", name - 'A' + 'a',
               (long long)ld, name, (long long)rows, (long long)cols, order_name(d->order),
               trans ? " (transposed)" : "", name - 'A' + 'a', (long long)need);
}

_Static_assert((int)ENGINE_F32 == (int)DTYPE_F32 && (int)ENGINE_F64 == (int)DTYPE_F64 &&
                   (int)ENGINE_BF16 == (int)DTYPE_BF16 && (int)ENGINE_F16 == (int)DTYPE_F16,
               "engine_dtype and dtype_t name the types by the same values");

engine_status apiarg_check(const apiarg_desc *d, apiarg_problem *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    if (d->dtype != ENGINE_F32 && d->dtype != ENGINE_F64 && d->dtype != ENGINE_BF16 && d->dtype != ENGINE_F16)
        return bad(err, d->fn, ENGINE_ERROR_INVALID_ARGUMENT,
                   "dtype = %d is not ENGINE_F32, ENGINE_F64, ENGINE_BF16 or ENGINE_F16", d->dtype);
    if (d->order != ENGINE_ROW_MAJOR && d->order != ENGINE_COL_MAJOR)
        return bad(err, d->fn, ENGINE_ERROR_INVALID_ARGUMENT,
                   "order = %d is neither ENGINE_ROW_MAJOR (101) nor ENGINE_COL_MAJOR (102)", d->order);
    const int tr[2] = {d->transa, d->transb};
    for (int i = 0; i < 2; i++)
        if (tr[i] != ENGINE_NO_TRANS && tr[i] != ENGINE_TRANS)
            return bad(err, d->fn, ENGINE_ERROR_INVALID_ARGUMENT,
                       "trans%c = %d is neither ENGINE_NO_TRANS (111) nor ENGINE_TRANS (112)", "ab"[i], tr[i]);
    const int64_t sz[3] = {d->m, d->n, d->k};
    for (int i = 0; i < 3; i++) {
        if (sz[i] < 0)
            return bad(err, d->fn, ENGINE_ERROR_INVALID_ARGUMENT, "%c = %lld is negative", "mnk"[i], (long long)sz[i]);
        if (sz[i] > INT_MAX)
            return bad(err, d->fn, ENGINE_ERROR_INVALID_ARGUMENT,
                       "%c = %lld is more than %d: the kernels take 32-bit sizes", "mnk"[i], (long long)sz[i], INT_MAX);
    }
    if (d->batch < 1)
        return bad(err, d->fn, ENGINE_ERROR_INVALID_ARGUMENT, "batch_count = %lld is less than 1", (long long)d->batch);
    int ta = d->transa == ENGINE_TRANS, tb = d->transb == ENGINE_TRANS;
    /* Stored shapes in the caller's order: op(A) is m x k, op(B) k x n. */
    int64_t ar = ta ? d->k : d->m, ac = ta ? d->m : d->k;
    int64_t br = tb ? d->n : d->k, bc = tb ? d->k : d->n;
    int rc = check_ld(d, 'A', ta, d->lda, ar, ac, err);
    rc = rc ? rc : check_ld(d, 'B', tb, d->ldb, br, bc, err);
    rc = rc ? rc : check_ld(d, 'C', 0, d->ldc, d->m, d->n, err);
    if (rc)
        return (engine_status)rc;
    if (d->batch > 1) {
        const int64_t st[3] = {d->stride_a, d->stride_b, d->stride_c};
        for (int i = 0; i < 3; i++)
            if (st[i] < 0)
                return bad(err, d->fn, ENGINE_ERROR_INVALID_ARGUMENT, "stride_%c = %lld is negative", "abc"[i],
                           (long long)st[i]);
        /* C's matrices may not overlap: two products would write the same elements at once. */
        int64_t outer = d->order == ENGINE_ROW_MAJOR ? d->m : d->n, inner = d->order == ENGINE_ROW_MAJOR ? d->n : d->m;
        int64_t span = outer && inner ? (outer - 1) * d->ldc + inner : 0;
        if (d->stride_c < span)
            return bad(err, d->fn, ENGINE_ERROR_INVALID_ARGUMENT,
                       "stride_c = %lld is less than %lld, the elements of one C (%lld x %lld, ldc %lld): the batch's outputs would overlap",
                       (long long)d->stride_c, (long long)span, (long long)d->m, (long long)d->n, (long long)d->ldc);
    }
    out->dtype = (dtype_t)d->dtype; /* the same values (engine.h, template.h) */
    out->K = d->k;
    out->ldc = d->ldc;
    out->batch = d->batch;
    out->sc = d->batch > 1 ? d->stride_c : 0;
    if (d->order == ENGINE_ROW_MAJOR) {
        out->M = d->m, out->N = d->n;
        out->ta = ta, out->tb = tb;
        out->lda = d->lda, out->ldb = d->ldb;
        out->sa = d->batch > 1 ? d->stride_a : 0, out->sb = d->batch > 1 ? d->stride_b : 0;
    } else {
        out->M = d->n, out->N = d->m;
        out->ta = tb, out->tb = ta;
        out->lda = d->ldb, out->ldb = d->lda;
        out->sa = d->batch > 1 ? d->stride_b : 0, out->sb = d->batch > 1 ? d->stride_a : 0;
        out->swapped = true;
    }
    return ENGINE_SUCCESS;
}

engine_status apiarg_check_pointers(const char *fn, const apiarg_problem *p, const void *A, const void *B,
                                    const void *C, err_t *err)
{
    size_t es = dtype_size(p->dtype);
    /* With m or n = 0 nothing is touched; with k = 0 only C (C = beta C). */
    bool touch_c = p->M > 0 && p->N > 0, touch_ab = touch_c && p->K > 0;
    const void *ptr[3] = {A, B, C};
    const bool used[3] = {touch_ab, touch_ab, touch_c};
    for (int i = 0; i < 3; i++) {
        if (!used[i])
            continue;
        if (!ptr[i])
            return bad(err, fn, ENGINE_ERROR_INVALID_ARGUMENT, "%c is a null pointer", "ABC"[i]);
        uintptr_t v = (uintptr_t)ptr[i];
        if (v % es)
            return bad(err, fn, ENGINE_ERROR_MISALIGNED, "%c = %p is not a multiple of %zu bytes, the size of a %s",
                       "ABC"[i], ptr[i], es, dtype_name(p->dtype));
    }
    return ENGINE_SUCCESS;
}

engine_status apiarg_sized(const char *fn, const char *type, const void *given, size_t oldest, size_t ours, void *out,
                           err_t *err)
{
    size_t size;
    memcpy(&size, given, sizeof size); /* the first member of every sized struct */
    if (size > ours)
        return bad(err, fn, ENGINE_ERROR_VERSION,
                   "%s.size is %zu bytes, larger than this library's %zu (libengine %d.%d): the program was built "
                   "against a newer engine.h",
                   type, size, ours, ENGINE_VERSION_MAJOR, ENGINE_VERSION_MINOR);
    if (size < oldest)
        return bad(err, fn, ENGINE_ERROR_INVALID_ARGUMENT,
                   "%s.size is %zu bytes, below the %zu of the first sized %s: fill it with %s_init", type, size,
                   oldest, type, type);
    memcpy(out, given, size);
    memcpy(out, &ours, sizeof ours);
    return ENGINE_SUCCESS;
}

/* ---- errors: the message of each thread's last failure ---------------------------------------- */

/* The last failure of this thread, as `engine` would print it. */
static _Thread_local char t_error[ERR_SOURCE_LEN + ERR_TEXT_LEN + 32];

engine_status api_status_of(const err_t *err)
{
    switch (err->cause) {
    case ERR_ARGUMENT: return ENGINE_ERROR_INVALID_ARGUMENT;
    case ERR_MISALIGNED: return ENGINE_ERROR_MISALIGNED;
    case ERR_DTYPE: return ENGINE_ERROR_DTYPE_MISMATCH;
    case ERR_NO_GPU: return ENGINE_ERROR_NO_GPU;
    case ERR_UNSUPPORTED: return ENGINE_ERROR_NOT_SUPPORTED;
    case ERR_COMPILE: return ENGINE_ERROR_COMPILE;
    case ERR_ALLOC: return ENGINE_ERROR_OUT_OF_MEMORY;
    case ERR_INPUT:
    case ERR_CONFIG: return ENGINE_ERROR_CONFIG;
    default: return ENGINE_ERROR_CUDA; /* the system's: a driver call, a fault */
    }
}

engine_status api_fail(engine_status st, const err_t *err)
{
    err_format(err, t_error, sizeof t_error);
    return st;
}

engine_status api_fail_text(engine_status st, const char *fn, const char *text)
{
    snprintf(t_error, sizeof t_error, "%s: %s", fn, text);
    return st;
}

const char *engine_last_error(const engine_ctx *ctx)
{
    (void)ctx; /* per thread, not per context: two threads on one context keep their own */
    return t_error;
}
