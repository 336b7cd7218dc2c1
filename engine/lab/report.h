/* report.h — one row per config (and one for cuBLAS) as an aligned table for people, or CSV,
 * JSON Lines or a Markdown table for tools and docs. Every row carries the command that reruns it. */
#ifndef ENGINE_REPORT_H
#define ENGINE_REPORT_H

#include "layout.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef enum { FORMAT_TABLE, FORMAT_CSV, FORMAT_JSONL, FORMAT_MD } report_format;

/* Parse "table", "csv", "jsonl" or "md"; -1 when unknown. */
int report_format_parse(const char *s);

typedef struct {
    const char *config;    /* config name, or "cublas" */
    const char *tmpl;      /* template name, or "cublas" */
    const char *dtype;     /* "f32" / "f64" */
    int64_t M, N, K;
    const layout_t *lay;   /* op, lda, ldb, ldc, batch (layout.h); NULL: packed NN, one product */
    double alpha, beta;
    const char *status;    /* "ok", "FAIL" (verification), "error" */
    double ms, ms_min, ms_max; /* per launch: median and spread over runs */
    double tflops;
    double pct_ref;        /* % of cuBLAS in the same run (100 for the cuBLAS row) */
    double pct_peak;       /* % of the peak of the unit the kernel uses */
    int regs;              /* -1 when unknown (cuBLAS) */
    int spill_bytes;       /* spill stores + loads */
    int smem_bytes;        /* static + dynamic per block */
    int threads;           /* per block */
    int occ_blocks;        /* resident blocks per SM */
    int pdl;               /* launched with programmatic dependent launch: 1, 0, -1 unknown (cuBLAS) */
    double occ_pct;        /* resident threads / max threads per SM */
    double clock_mhz;      /* SM clock seen by the probe after timing */
    double power_w;        /* mean board power over the timed runs (NVML, windows of 500 ms or more,
                            * the L2 flushes between runs included); <= 0 when not known */
    double floor_ms;       /* roofline floor, 0 when unknown */
    const char *bound;     /* which term sets the floor: "flop", "dram", "l2" */
    double max_ratio;      /* largest error / tolerance seen in verification */
    const char *acc_class; /* accuracy class judged (accuracy.h): "f32", "f64", "tf32"; NULL: none */
    double err_max_u, err_mean_u;         /* errors against the FP64 reference, in u of S; < 0: not measured */
    double ref_err_max_u, ref_err_mean_u; /* the class's cuBLAS yardstick's, on the same inputs */
    const char *cubin;     /* "nvrtc" (compiled by this run), "cache" (found compiled), "" (cuBLAS) */
    const char *switches;  /* shape switches the kernel was compiled with */
    const char *params;    /* every param value */
    const char *args;      /* command that reruns this row */
    const char *chosen;    /* --auto: which wisdom entry chose the config; NULL otherwise */
} report_row;

typedef struct {
    report_format fmt;
    FILE *out;
    bool header_done;
    double prev_ms; /* for the step gain of a walk (Markdown) */
    int step;
} report_t;

void report_init(report_t *r, report_format fmt, FILE *out);
void report_row_print(report_t *r, const report_row *row);
/* A free-form line above the rows (table format only; other formats stay machine-readable). */
void report_note(report_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
