/* rows.h — shared by the tests of the tune log's modules (result, tunelog, rank, winner, merge): a
 * made-up timed point, and a scratch directory per test. Include after cmocka.h. */
#ifndef TEST_ROWS_H
#define TEST_ROWS_H

#include <dirent.h>
#include <stdio.h>

#include "result.h"
#include "util.h"

static const char *const k_names[] = {"BM", "BN", "BK", "TM", "TN", "THREADS"};
#define NPARAMS 6

/* A temporary directory per test, removed (with what it holds) afterwards. */
static char g_dir[64];

static inline int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/engine-results-XXXXXX");
    assert_non_null(mkdtemp(g_dir));
    return 0;
}

static inline int teardown(void **state)
{
    (void)state;
    DIR *d = opendir(g_dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char *p = xasprintf("%s/%s", g_dir, e->d_name);
            unlink(p);
            free(p);
        }
        closedir(d);
    }
    rmdir(g_dir);
    return 0;
}

static inline char *in_dir(const char *name)
{
    return xasprintf("%s/%s", g_dir, name);
}

/* A timed blocktile point at M^3 on an H100; bm tells points apart. */
static inline void make_row(result_row *r, int64_t bm, int stage, const char *status, double ms)
{
    result_row_init(r);
    int64_t values[NPARAMS] = {bm, 64, 16, 8, 4, 128};
    result_row_set_params(r, k_names, values, NPARAMS);
    r->key = result_make_key("blocktile", "f32", 90, 4096, 4096, 4096, 1.0, 0.0, k_names, values, NPARAMS);
    r->time = xstrdup("2026-11-22T19:04:05Z");
    r->config = xstrdup("bank_pad_vec");
    r->tmpl = xstrdup("blocktile");
    r->dtype = xstrdup("f32");
    r->arch = xstrdup("sm_90");
    r->device = xstrdup("NVIDIA H100 80GB HBM3");
    r->device_index = 0;
    r->M = r->N = r->K = 4096;
    r->alpha = 1.0;
    r->beta = 0.0;
    r->seed = 1;
    r->stage = stage;
    r->status = xstrdup(status);
    r->reason = xstrdup(strcmp(status, "ok") == 0 ? "" : "it broke");
    r->switches = xstrdup("FULL_M=1 FULL_N=1");
    r->args = xstrdup("engine bench configs/bank_pad_vec.json --set BM=64");
    if (ms >= 0) {
        r->t_compile = 0.41;
        r->t_verify = 0.052;
        r->t_bench = 0.031;
        r->ms = ms;
        r->ms_min = ms * 0.99;
        r->ms_max = ms * 1.01;
        r->runs = stage == 2 ? 10 : 3;
        r->tflops = 137.44 / ms;
        r->pct_cublas = 100 * 2.68 / ms;
        r->cublas_ms = 2.68;
        r->regs = 128;
        r->spill_bytes = 0;
        r->smem_bytes = 16384;
        r->threads = 128;
        r->occ_pct = 25.0;
        r->clock_mhz = 1980;
        r->power_w = 512.3;
        r->acc_class = xstrdup("f32");
        r->err_max_u = 3.25;
        r->err_mean_u = 0.27;
        r->cublas_err_max_u = 7.5;
        r->cublas_err_mean_u = 0.28;
        r->from_cache = true;
    }
}

static inline void write_text(const char *path, const char *text, const char *mode)
{
    FILE *f = fopen(path, mode);
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

#endif
