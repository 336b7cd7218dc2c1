/* rank.h — the points of tune logs in order (finalists first, then by time), cuBLAS's time for
 * them, and the ranking printed as a table (`engine tune`, `engine merge`). */
#ifndef ENGINE_RANK_H
#define ENGINE_RANK_H

#include "result.h"

#include <stddef.h>
#include <stdio.h>

/* Ranking: one entry per key among rows with status "ok" and a known time at stage 1 or 2 — its
 * stage-2 row when it has one, else its stage-1 row (the first when repeated) — the re-timed
 * finalists (stage 2) first, each stage sorted by ms ascending, ties by key (so the order is
 * deterministic). Returns a newly allocated array of *nranked pointers into rows (free it; never
 * NULL). */
const result_row **rank_rows(const result_row *rows, size_t n, size_t *nranked);

/* cuBLAS's time for the shape of these rows, in ms: the median of the cuBLAS times of the re-timed
 * finalists (stage 2, status "ok"), or of the stage-1 rows when no finalist has one; -1 when no row
 * has one. Every finalist times the same cuBLAS call beside itself, so one finalist's reading is
 * an outlier when it differs from the others (it did: 28 us against 3.9 us at 64^3, one finalist
 * of four), and the median of them is the figure to divide by. */
double rank_cublas_ms(const result_row *rows, size_t n);

/* Print the first `top` (0 = all) ranked rows as an aligned table: rank, TFLOP/s, ms, spread
 * ((max-min)/median, %), % cuBLAS, stage, runs, regs, occupancy and the configuration. The
 * configuration column shows only the params that differ between the printed rows; a line above the
 * table names the ones they share. Unknown numbers print as "-". */
void rank_print(FILE *f, const result_row *const *ranked, size_t n, size_t top);

#endif
