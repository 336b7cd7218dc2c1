/* result.h — one evaluated point of `engine tune`: the row, its key, and its JSON line, one object
 * per line of the tune log (tunelog.h). Rows are read back strictly: a missing field, a wrong type,
 * an unknown status or an unknown field (a typo) is an error naming file:line:column and the rule
 * broken; fields whose names start with "x_" are extensions and are skipped.
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
 *    "clock_mhz":1980,"power_w":512.3,"class":"f32","err_max_u":3.1,"err_mean_u":0.27,
 *    "cublas_err_max_u":7.4,"cublas_err_mean_u":0.28,"from_cache":true,"switches":"FULL_M=1 FULL_N=1",
 *    "args":"engine bench configs/warptile_db.json ..."}
 *
 * Every field is always written; an unknown number is JSON null. The accuracy fields (class,
 * err_*_u, cublas_err_*_u) came later: a log written before them reads back with them null. */
#ifndef ENGINE_RESULT_H
#define ENGINE_RESULT_H

#include "err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RESULT_LOG_NAME "engine-tune" /* value of "log" in every row */
#define RESULT_VERSION 1              /* value of "version"; a reader refuses any other */

/* One evaluated point. Strings are owned (result_row_free frees them); a NULL string is written as "".
 * Every number documented as "-1 = null" is unknown when negative and is written as JSON null. */
typedef struct {
    char *time;         /* "2026-11-22T19:04:05Z", UTC, when the row was written; NULL: result_row_to_json fills now */
    char *key;          /* identity of the point (result_make_key); with stage, identifies a row */
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
    char *acc_class;                     /* accuracy class verified (accuracy.h), "" when not verified */
    double err_max_u, err_mean_u;        /* errors against the FP64 reference, u of S; -1 = null */
    double cublas_err_max_u, cublas_err_mean_u; /* the class's cuBLAS yardstick's; -1 = null */
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
/* dst (initialised here) as a deep copy of src, made through its JSON line: the row a log would
 * read back. An empty row when src would not read back. */
void result_row_copy(result_row *dst, const result_row *src);
/* Free an array of n rows (as returned by tunelog_read) and the array itself. */
void result_rows_free(result_row *rows, size_t n);

/* The identity of a point, newly allocated:
 *   "<template> <dtype> sm_<arch> <M>x<N>x<K> a=<alpha %g> b=<beta %g> P1=v1 P2=v2 ..."
 * with the params in the order given (the template's). */
char *result_make_key(const char *tmpl, const char *dtype, int arch, int64_t M, int64_t N, int64_t K, double alpha,
                      double beta, const char *const *names, const int64_t *values, size_t n);

/* The invalidity word for a status: ok→correct, pruned/filtered→constraints, compile→compile,
 * FAIL→correctness, fault/error→runtime, timeout→timeout. NULL for an unknown status. */
const char *result_invalidity(const char *status);

/* One row as one JSON line ending in '\n', newly allocated. Fills "log", "version", "invalidity"
 * (from status, "" when the status is unknown), "measurements" (time, throughput, cublas_time and
 * power, the ones known) and "time" (now, UTC) when r->time is NULL. Numbers are written in the
 * shortest form that reads back to the same double; strings are escaped (an invalid UTF-8 byte
 * becomes U+FFFD), so the line never holds a raw newline. Does not check the row: tunelog_append does. */
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

/* result_row_from_json on text[0..len) (NUL-terminated at len), for readers of many lines: errors
 * go to err as they come, and *syntax (when not NULL) tells a JSON syntax error (the shape of an
 * interrupted write) from a row that breaks a rule. */
int result_row_parse(const char *text, size_t len, const char *path, int lineno, result_row *r, bool *syntax,
                     err_t *err);

#endif
