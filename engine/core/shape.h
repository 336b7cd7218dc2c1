/* shape.h — a GEMM problem's shape (M, N, K) and the limits every command and file holds it to. */
#ifndef ENGINE_SHAPE_H
#define ENGINE_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#define SHAPE_MAX_LIST 64 /* shapes in one list: --shapes, --sizes, a space file's "shapes" */
#define SHAPE_MAX_DIM (1 << 24)
/* Matrices past 2^31 elements are fine (templates switch to 64-bit offsets, IDX64); this only
 * refuses the absurd (4 TiB of f32) before anything is allocated. Whether a shape fits is decided
 * later against the memory actually free (session.c). */
#define SHAPE_MAX_ELEMS (1LL << 40)

typedef struct {
    int64_t m, n, k;
} shape_t;

/* The rule a shape's matrices break (one of M*K, K*N, M*N above SHAPE_MAX_ELEMS), in why: -1, or 0.
 * Shared by the command line and the files that name shapes (wisdom). */
int shape_elems_rule(const shape_t *s, char *why, size_t len);

/* The rule a shape breaks, in why (after the shape's own text), or 0 when it is a shape the kernels
 * can run: M, N >= 1, K >= 0, each at most SHAPE_MAX_DIM, no operand above SHAPE_MAX_ELEMS elements. */
int shape_rule(const shape_t *s, char *why, size_t len);

#endif
