/* results.h — the result log of `engine tune`: one JSON object per evaluated point, one per line.
 *
 * The log is append-only JSON Lines. Each row is written with a single write() on an O_APPEND
 * descriptor, so several tuners (or a tuner and `engine merge`) never interleave or half-write a
 * line; a crash can at worst leave the last line truncated, which resume cuts off. Rows are read
 * back strictly: a missing field, a wrong type, an unknown status or an unknown field (a typo) is an
 * error naming file:line:column and the rule broken; fields whose names start with "x_" are
 * extensions and are skipped.
 *
 *   {"log":"engine-tune","version":1,"time":"2026-11-22T19:04:05Z","key":"warptile f32 sm_90 ...",
 *    "config":"warptile_db","template":"warptile","dtype":"f32","arch":"sm_90",
 *    "device":"NVIDIA H100 80GB HBM3","device_index":0,"M":4096,"N":4096,"K":4096,
 *    "alpha":1.0,"beta":0.0,"seed":1,"stage":1,"configuration":{"BM":128,...},
 *    "status":"ok","invalidity":"correct","reason":"",
 *    "times":{"compilation":0.41,"verification":0.052,"benchmark":0.031},
 *    "measurements":[{"name":"time","value":3.012,"unit":"ms"},...],
 *    "ms":3.012,"ms_min":2.99,"ms_max":3.05,"runs":3,"tflops":45.63,"pct_cublas":89.1,
 *    "cublas_ms":2.68,"regs":128,"spill_bytes":0,"smem_bytes":16384,"threads":256,"occ_pct":25.0,
 *    "clock_mhz":1980,"power_w":512.3,"from_cache":true,"switches":"FULL_M=1 FULL_N=1",
 *    "args":"engine bench configs/warptile_db.json ..."}
 *
 * Every field is always present; an unknown number is JSON null. The module also ranks the points
 * of one or several logs and writes the winner as a ready config. */
#ifndef ENGINE_RESULTS_H
#define ENGINE_RESULTS_H

#include "err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RESULTS_LOG_NAME "engine-tune" /* value of "log" in every row */
#define RESULTS_VERSION 1              /* value of "version"; a reader refuses any other */

/* One evaluated point. Strings are owned (result_row_free frees them); a NULL string is written as "".
 * Every number documented as "-1 = null" is unknown when negative and is written as JSON null. */
typedef struct {
    char *time;         /* "2026-11-22T19:04:05Z", UTC, when the row was written; NULL: result_row_to_json fills now */
    char *key;          /* identity of the point (results_make_key); with stage, identifies a row */
    char *config;       /* name of the config the point came from: "warptile_db" */
    char *tmpl;         /* template name: "warptile" ("template" in the log) */
    char *dtype;        /* "f32" / "f64" */
    char *arch;         /* target: "sm_90" */
    char *device;       /* GPU name; "" when the point never reached a GPU */
    int device_index;   /* CUDA device ordinal; -1 when the point never reached a GPU */
    int64_t M, N, K;    /* problem shape, >= 1 */
    double alpha, beta; /* the GEMM scalars (finite, any sign: never null) */
    uint64_t seed;      /* input generator seed, 0 .. 2^63-1 (the log holds a signed 64-bit integer) */
    int stage;          /* 0 = not timed (pruned, filtered, failed); 1 = brief timing; 2 = re-timed (finalists) */
    char **param_names; /* "configuration": every template parameter, in the template's order */
    int64_t *param_values; /* their values, aligned with param_names */
    size_t nparams;
    char *status;     /* ok | pruned | filtered | compile | FAIL | fault | timeout | error */
    char *invalidity; /* Kernel Tuner T4 word for status; informational: to_json derives it from status */
    char *reason;     /* why the point is not ok (constraint, compile error, CUDA error); "" when ok */
    double t_compile, t_verify, t_bench; /* seconds spent compiling / verifying / timing; -1 = null */
    double ms, ms_min, ms_max;           /* per launch: median, fastest, slowest run; -1 = null */
    int runs;                            /* timed runs behind ms; -1 = null */
    double tflops;                       /* 2*M*N*K / median time, TFLOP/s; -1 = null */
    double pct_cublas;                   /* cuBLAS time / ours, %; -1 = null */
    double cublas_ms;                    /* cuBLAS median on the same problem in the same run; -1 = null */
    int regs;                            /* registers per thread; -1 = null */
    int spill_bytes;                     /* spill stores + loads, bytes; -1 = null */
    int smem_bytes;                      /* static + dynamic shared memory per block, bytes; -1 = null */
    int threads;                         /* per block; -1 = null */
    double occ_pct;                      /* resident threads / max threads per SM, %; -1 = null */
    double clock_mhz;                    /* SM clock seen after timing, MHz; -1 = null */
    double power_w;                      /* board power while timing, W; -1 = null */
    bool from_cache;                     /* the CUBIN came from the compile cache */
    char *switches;                      /* shape switches compiled in: "FULL_M=1 FULL_N=1" */
    char *args;                          /* command that reruns this point alone */
} result_row;

/* An empty row: strings NULL, every nullable number -1 (null), device_index -1, stage 0, no params.
 * Pair with result_row_free. */
void result_row_init(result_row *r);
/* Free what r owns and leave it as result_row_init does. */
void result_row_free(result_row *r);
/* Replace r's configuration by a copy of names[0..n) / values[0..n). */
void result_row_set_params(result_row *r, const char *const *names, const int64_t *values, size_t n);
/* Free an array of n rows (as returned by results_read) and the array itself. */
void results_rows_free(result_row *rows, size_t n);

/* The identity of a point, newly allocated:
 *   "<template> <dtype> sm_<arch> <M>x<N>x<K> a=<alpha %g> b=<beta %g> P1=v1 P2=v2 ..."
 * with the params in the order given (the template's). */
char *results_make_key(const char *tmpl, const char *dtype, int arch, int64_t M, int64_t N, int64_t K, double alpha,
                       double beta, const char *const *names, const int64_t *values, size_t n);

/* The invalidity word for a status: ok→correct, pruned/filtered→constraints, compile→compile,
 * FAIL→correctness, fault/error→runtime, timeout→timeout. NULL for an unknown status. */
const char *results_invalidity(const char *status);

/* One row as one JSON line ending in '\n', newly allocated. Fills "log", "version", "invalidity"
 * (from status, "" when the status is unknown), "measurements" (time, throughput, cublas_time and
 * power, the ones known) and "time" (now, UTC) when r->time is NULL. Numbers are written in the
 * shortest form that reads back to the same double; strings are escaped (an invalid UTF-8 byte
 * becomes U+FFFD), so the line never holds a raw newline. Does not check the row: results_append does. */
char *result_row_to_json(const result_row *r);

/* Parse one line (a trailing '\n' is allowed) into r (initialised here; free with result_row_free).
 * Strict: an empty line, a JSON syntax error, a missing field, a field of the wrong type or out of
 * range, an unknown status, an invalidity that does not match the status, a row with status "ok"
 * that is not timed (stage 0 or ms null), or an unknown field (names starting with "x_" excepted)
 * returns -1 and sets err (EXIT_INPUT, source = path, line = lineno, column = the member at fault,
 * or jansson's column on a syntax error) with a one-line reason naming the field; r is left empty.
 * "measurements" is checked for shape (objects with a string name, a number value and a string
 * unit) but not stored: it is derived from the row's own fields. */
int result_row_from_json(const char *line, const char *path, int lineno, result_row *r, err_t *err);

/* Private to results.c: a hash of (key, stage) → row index, open addressing. */
typedef struct {
    size_t *slots; /* row index + 1, 0 = empty; cap entries, cap a power of two (or 0) */
    size_t cap;
    size_t count; /* occupied slots */
} results_index;

/* A log open for appending. rows holds every row of the file: the nresumed rows it held when it was
 * opened, then each row appended through this handle (as written, time filled in). */
typedef struct {
    char *path;       /* as given */
    int fd;           /* O_RDWR|O_APPEND; -1 when closed */
    result_row *rows; /* every row, in file order */
    size_t nrows;
    size_t caprows;      /* allocated entries of rows */
    size_t nresumed;     /* rows the file held when opened */
    bool truncated_tail; /* the last line was an interrupted write and has been cut off */
    results_index index; /* (key, stage) → first row with them */
} results_log;

/* Open path for appending, creating it (0644) when missing.
 * resume = false: the file must not exist or be empty, else EXIT_INPUT
 *   "<path>: already holds N results; pass --resume to continue it or choose another --log".
 * resume = true: read every complete line. A corrupt line that is not the last is EXIT_INPUT naming
 *   path:line and the rule broken, and nothing is changed. A last line without '\n' that is not
 *   complete JSON is the remnant of an interrupted write: the file is cut (ftruncate) to the end of
 *   the last complete line and truncated_tail is set. A last line without '\n' that parses is kept
 *   and the missing '\n' is appended. A last line that is complete JSON but breaks a rule is an error.
 * Reading and cutting happen under an exclusive flock(), and results_append holds a shared one, so a
 * resume never cuts the line another engine process is writing. On failure l is left closed (fd -1,
 * nothing to free); results_close is still safe to call. */
int results_open(results_log *l, const char *path, bool resume, err_t *err);

/* Append r as one line with a single write(), and add it to l->rows and the index (pointers
 * returned by results_lookup before the call may move). The line is parsed back before it is
 * written: a row the log could not read (unknown status, empty key, ...) is refused with EXIT_INPUT
 * and nothing is written. A failed or short write is EXIT_SYSTEM; a short write leaves a truncated
 * last line, so the handle closes its descriptor (later appends fail) and the next resume cuts the
 * line off. No fsync: rows survive a crash of the process, not of the machine. */
int results_append(results_log *l, const result_row *r, err_t *err);

/* Close the descriptor and free everything l holds; l is left closed. Safe on a closed log. */
void results_close(results_log *l);

/* The row of l for (key, stage), or NULL. stage -1: the row with the highest stage for key. When
 * the log holds the same (key, stage) more than once, the first row wins. */
const result_row *results_lookup(const results_log *l, const char *key, int stage);

/* Read a whole log without opening it for writing (merge, plots): same rules as resume, but a
 * truncated tail is only reported (*truncated_tail = true) and skipped, and the file is never
 * modified. On success *rows (free with results_rows_free) holds *n rows; on failure *rows is NULL,
 * *n is 0, and err says why (EXIT_INPUT: unreadable file or corrupt line). */
int results_read(const char *path, result_row **rows, size_t *n, bool *truncated_tail, err_t *err);

/* Ranking: one entry per key among rows with status "ok" and a known time at stage 1 or 2 — its
 * stage-2 row when it has one, else its stage-1 row (the first when repeated) — the re-timed
 * finalists (stage 2) first, each stage sorted by ms ascending, ties by key (so the order is
 * deterministic). Returns a newly allocated array of *nranked pointers into rows (free it; never
 * NULL). */
const result_row **results_rank(const result_row *rows, size_t n, size_t *nranked);

/* cuBLAS's time for the shape of these rows, in ms: the median of the cuBLAS times of the re-timed
 * finalists (stage 2, status "ok"), or of the stage-1 rows when no finalist has one; -1 when no row
 * has one. Every finalist times the same cuBLAS call beside itself, so one finalist's reading is
 * an outlier when it differs from the others (it did: 28 us against 3.9 us at 64^3, one finalist
 * of four), and the median of them is the figure to divide by. */
double results_cublas_ms(const result_row *rows, size_t n);

/* Print the first `top` (0 = all) ranked rows as an aligned table: rank, TFLOP/s, ms, spread
 * ((max-min)/median, %), % cuBLAS, stage, runs, regs, occupancy and the configuration. The
 * configuration column shows only the params that differ between the printed rows; a line above the
 * table names the ones they share. Unknown numbers print as "-". */
void results_print_ranking(FILE *f, const result_row *const *ranked, size_t n, size_t top);

/* Write the winner r as a ready config at out_path:
 *   {"name": name, "template": r->tmpl, "dtype": r->dtype, "params": {every param, in order},
 *    "description": "tuned by engine tune for <M>x<N>x<K> on <device> (<date>): <tflops> TFLOP/s,
 *    <pct> % of cuBLAS, median of <runs> runs, spread <x>%"}
 * laid out like the shipped configs (2-space indent, params on one line), written atomically (a
 * temp file in the same directory, fsync, rename). Parts of the description whose numbers are unknown
 * are left out. Refuses with EXIT_INPUT (one line, nothing written) a row whose status is not "ok",
 * and an out_path that names the same file as src_config_path (realpath of out_path's directory +
 * its basename against realpath of the source; out_path may not exist yet; src_config_path may be
 * NULL). A directory that is missing or not writable is EXIT_INPUT, an I/O error while writing
 * EXIT_SYSTEM; either way the temp file is removed and out_path is left as it was. */
int results_emit_config(const result_row *r, const char *name, const char *src_config_path, const char *out_path,
                        err_t *err);

/* Options of `engine merge`. */
typedef struct {
    const char *const *logs; /* paths of the logs to merge, in priority order (first kept on a duplicate) */
    size_t nlogs;
    bool force;            /* merge logs of different problems */
    const char *out_path;  /* write every kept row here (a new log), or NULL */
    size_t top;            /* rows of the ranking to print; 0 = all */
    const char *emit_best; /* write the winner here as a config (name: its config + "_tuned"), or NULL */
} merge_opts;

/* engine merge: read every log (results_read), check that they describe the same problem — the
 * same M, N, K, dtype, alpha, beta and, for rows with stage >= 1, the same device name — unless
 * o->force; the first disagreement is EXIT_INPUT naming both files and the field
 *   "b.jsonl:3: M = 2048 but a.jsonl holds M = 4096; pass --force to merge logs of different problems".
 * Rows with the same (key, stage) in several logs (or twice in one): the first is kept, the others
 * counted as duplicates. Then writes the kept rows to o->out_path (refused like results_open when it
 * exists and is not empty), prints to out a note per log with a truncated tail, a summary line
 * ("merged 2 logs: 812 rows kept, 17 duplicates dropped, 301 points ranked") and the ranking, and
 * with o->emit_best writes the winner through results_emit_config. Returns EXIT_OK, or err's code. */
int results_merge(const merge_opts *o, FILE *out, err_t *err);

#endif
