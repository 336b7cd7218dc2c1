/* layout.h — how a GEMM's operands sit in memory: transposes, leading dimensions and strided
 * batches. Storage is row-major (a column-major caller maps onto it by swapping A and B:
 * row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T). op(A) is M x K, op(B) is K x N,
 * C is M x N, for each of `batch` products. No GPU, no session: plain data and its rules. */
#ifndef ENGINE_LAYOUT_H
#define ENGINE_LAYOUT_H

#include "err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int ta, tb;            /* 1: op(A) = A^T, A stored K x M; op(B) = B^T, B stored N x K */
    int64_t lda, ldb, ldc; /* elements between consecutive stored rows, >= the stored row length */
    int64_t batch;         /* products, >= 1 */
    int64_t sa, sb, sc;    /* elements between consecutive products' A, B, C (0 for A or B: broadcast) */
} layout_t;

/* Leading dimensions the kernels take as 32-bit ints (GEMM_ARGS): one below 2^31 is any real matrix. */
#define LAYOUT_MAX_LD ((int64_t)1 << 31)

/* Rows and row length of each matrix as stored. */
static inline int64_t layout_a_rows(const layout_t *l, int64_t M, int64_t K) { return l->ta ? K : M; }
static inline int64_t layout_a_cols(const layout_t *l, int64_t M, int64_t K) { return l->ta ? M : K; }
static inline int64_t layout_b_rows(const layout_t *l, int64_t N, int64_t K) { return l->tb ? N : K; }
static inline int64_t layout_b_cols(const layout_t *l, int64_t N, int64_t K) { return l->tb ? K : N; }

/* Rows packed one after the other (ld = row length, at least 1), products packed one after the other. */
void layout_packed(layout_t *l, int ta, int tb, int64_t M, int64_t N, int64_t K, int64_t batch);
/* The packed layout of (ta, tb, batch) at M x N x K with parts replaced, as the command line's
 * --lda/--ldb/--ldc and --stride-a/-b/-c give them: ld[i] > 0 is the leading dimension of A, B, C
 * (i = 0, 1, 2), or with plus[i] the packed one plus ld[i]; stride[i] >= 0 is the batch stride,
 * else the products sit one after the other with their rows ld apart. Then layout_check (its
 * return and err). */
int layout_with(layout_t *l, int ta, int tb, int64_t M, int64_t N, int64_t K, int64_t batch, const int64_t ld[3],
                const bool plus[3], const int64_t stride[3], err_t *err);
/* Whether l is the packed layout of its own ta, tb, batch. */
int layout_is_packed(const layout_t *l, int64_t M, int64_t N, int64_t K);

/* Check l for an M x N x K problem: ta/tb 0 or 1; lda, ldb, ldc at least the stored row length (and
 * at least 1) and below LAYOUT_MAX_LD; batch >= 1; sa, sb >= 0; sc such that the products' C do not
 * overlap (sc >= (M-1)*ldc + N) when batch > 1. Returns 0, or EXIT_INPUT with err naming the field
 * and the rule (source "layout"). */
int layout_check(const layout_t *l, int64_t M, int64_t N, int64_t K, err_t *err);

/* Elements spanned by each matrix over the whole batch: what a buffer must hold. */
int64_t layout_span_a(const layout_t *l, int64_t M, int64_t K);
int64_t layout_span_b(const layout_t *l, int64_t N, int64_t K);
int64_t layout_span_c(const layout_t *l, int64_t M, int64_t N);

/* "NN", "NT", "TN" or "TT" (A's letter first). */
const char *layout_op_name(const layout_t *l);
/* " op NT lda=.. ldb=.. ldc=.." (and " batch=.. sa=.. sb=.. sc=.." for a batch) into buf, for
 * messages and reports; "" for packed NN with one product. Returns the text. */
const char *layout_text(const layout_t *l, int64_t M, int64_t N, int64_t K, char *buf, size_t len);
/* Parse one of those into ta, tb; -1 for anything else. */
int layout_op_parse(const char *s, int *ta, int *tb);

/* Alignment of an operand in elements: the largest power of two dividing both the address (bytes)
 * and every offset the kernel adds to it (ld and the batch stride, in elements), capped at 16 bytes
 * (the widest vector access). What the templates' vector switches (ALIGN_A/B/C) are chosen from. */
int layout_align_of(uint64_t addr, size_t elem, int64_t ld, int64_t stride);

/* The alignment class of a call's three operands (layout_align_of), in elements. A kernel built for
 * a class runs on pointers aligned at least that well. */
typedef struct {
    int a, b, c;
} layout_align;
/* The best class for a layout on pointers aligned to 16 bytes (the CLI's buffers, which are 256-byte
 * aligned): what the leading dimensions and strides allow. */
void layout_align_ld(const layout_t *l, size_t elem, layout_align *al);
/* Whether two classes are the same for every operand. */
static inline bool layout_align_eq(const layout_align *x, const layout_align *y)
{
    return x->a == y->a && x->b == y->b && x->c == y->c;
}

#endif
