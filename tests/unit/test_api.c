/* test_api.c — libengine (include/engine.h) without a GPU: the argument checks and their messages
 * (apiarg.h), the column-major mapping, engine_create's refusal where there is no driver, and plans
 * chosen from the shipped wisdom and compiled for sm_90 by a context made with no_device (host
 * out of memory: test_api_oom.c). */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>

#include "../../include/engine.h"
#include "apiarg.h"
#include "apictx.h"
#include "apiplan.h"
#include "gpu.h"
#include "util.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static apiarg_desc row_nn(int64_t m, int64_t n, int64_t k)
{
    return (apiarg_desc){.fn = "engine_sgemm", .dtype = ENGINE_F32, .order = ENGINE_ROW_MAJOR,
                         .transa = ENGINE_NO_TRANS, .transb = ENGINE_NO_TRANS, .m = m, .n = n, .k = k,
                         .lda = k, .ldb = n, .ldc = n, .batch = 1};
}

/* The status of d's check and its message (err_format's line) in line. */
static engine_status check(const apiarg_desc *d, apiarg_problem *p, char *line, size_t len)
{
    err_t err;
    err_clear(&err);
    engine_status st = apiarg_check(d, p, &err);
    err_format(&err, line, len);
    return st;
}

static void test_sizes_and_enums(void **state)
{
    (void)state;
    apiarg_problem p;
    char line[1600];
    apiarg_desc d = row_nn(-1, 4, 4);
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_ERROR_INVALID_ARGUMENT);
    assert_string_equal(line, "engine_sgemm: m = -1 is negative");
    d = row_nn(4, 4, 3000000000LL);
    d.lda = d.k;
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(line, "k = 3000000000 is more than"));
    d = row_nn(4, 4, 4);
    d.order = 7;
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(line, "order = 7 is neither"));
    d = row_nn(4, 4, 4);
    d.transb = 0;
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(line, "transb = 0 is neither"));
    d = row_nn(4, 4, 4);
    d.batch = 0;
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_ERROR_INVALID_ARGUMENT);
    assert_string_equal(line, "engine_sgemm: batch_count = 0 is less than 1");
    /* BLAS's empty problems are fine: m = 0, k = 0. */
    d = row_nn(0, 4, 0);
    d.lda = 1;
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_SUCCESS);
}

static void test_leading_dimensions(void **state)
{
    (void)state;
    apiarg_problem p;
    char line[1600];
    apiarg_desc d = row_nn(5, 7, 3);
    d.lda = 2; /* A is 5 x 3 row-major: lda >= 3 */
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_ERROR_INVALID_ARGUMENT);
    assert_string_equal(line, "engine_sgemm: lda = 2 is too small: A is stored 5 x 3 row-major, so lda must be >= 3");
    d = row_nn(5, 7, 3);
    d.transb = ENGINE_TRANS; /* B stored 7 x 3: ldb >= 3 */
    d.ldb = 3;
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_SUCCESS);
    d.ldb = 2;
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(line, "B is stored 7 x 3 row-major (transposed), so ldb must be >= 3"));
    /* Column-major: the ld is a column's length. C 5 x 7: ldc >= 5, not 7. */
    d = row_nn(5, 7, 3);
    d.order = ENGINE_COL_MAJOR;
    d.lda = 5, d.ldb = 3, d.ldc = 5;
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_SUCCESS);
    d.ldc = 4;
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_ERROR_INVALID_ARGUMENT);
    assert_string_equal(line, "engine_sgemm: ldc = 4 is too small: C is stored 5 x 7 column-major, so ldc must be >= 5");
    /* ld >= 1 even for an empty row. */
    d = row_nn(5, 7, 0);
    d.lda = 0;
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_ERROR_INVALID_ARGUMENT);
}

static void test_batches(void **state)
{
    (void)state;
    apiarg_problem p;
    char line[1600];
    apiarg_desc d = row_nn(4, 6, 5);
    d.batch = 3, d.stride_a = 20, d.stride_b = 0, d.stride_c = 24;
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_SUCCESS);
    assert_int_equal(p.sa, 20);
    assert_int_equal(p.sb, 0); /* one B for every product */
    d.stride_c = 23;           /* (4 - 1) * 6 + 6 = 24 elements in one C */
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(line, "stride_c = 23 is less than 24"));
    d.stride_c = 24, d.stride_a = -1;
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_ERROR_INVALID_ARGUMENT);
    assert_string_equal(line, "engine_sgemm: stride_a = -1 is negative");
    /* batch 1: strides are ignored, as cuBLAS does. */
    d.batch = 1;
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_SUCCESS);
    assert_int_equal(p.sa, 0);
}

/* One C spans (rows - 1) * ldc + the row length, not rows x cols: with ldc past the row, a stride
 * of one packed C makes the products write over each other, in either order. */
static void test_batches_overlap_with_ldc(void **state)
{
    (void)state;
    apiarg_problem p;
    char line[1600];
    /* Row-major C 4 x 6 with ldc 10: rows of 6 elements, 10 apart; one C spans 3 * 10 + 6 = 36. */
    apiarg_desc d = row_nn(4, 6, 5);
    d.ldc = 10, d.batch = 2, d.stride_a = 20, d.stride_b = 30;
    d.stride_c = 4 * 6; /* packed: the second C's row 0 lands on the first's row 2 */
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(line, "stride_c = 24 is less than 36"));
    d.stride_c = 35;
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_ERROR_INVALID_ARGUMENT);
    d.stride_c = 36;
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_SUCCESS);
    /* Column-major C 4 x 6 with ldc 10: 6 columns of 4, 10 apart; one C spans 5 * 10 + 4 = 54 (the
     * row-major reading, 3 * 10 + 6 = 36, would let the last two columns overlap the next C). */
    d.order = ENGINE_COL_MAJOR, d.lda = 4, d.ldb = 5;
    d.stride_c = 36;
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(line, "stride_c = 36 is less than 54"));
    d.stride_c = 53;
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_ERROR_INVALID_ARGUMENT);
    d.stride_c = 54;
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_SUCCESS);
    assert_int_equal(p.sc, 54);
}

static void test_column_major_swaps(void **state)
{
    (void)state;
    apiarg_problem p;
    char line[1600];
    /* Column-major C (5 x 7) = A^T (A stored 3 x 5) * B (3 x 7): row-major C^T (7 x 5) = B^T A. */
    apiarg_desc d = {.fn = "engine_dgemm", .dtype = ENGINE_F64, .order = ENGINE_COL_MAJOR, .transa = ENGINE_TRANS,
                     .transb = ENGINE_NO_TRANS, .m = 5, .n = 7, .k = 3, .lda = 4, .ldb = 9, .ldc = 6, .batch = 2,
                     .stride_a = 100, .stride_b = 200, .stride_c = 300};
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_SUCCESS);
    assert_int_equal(p.dtype, DTYPE_F64);
    assert_true(p.swapped);
    assert_int_equal(p.M, 7);
    assert_int_equal(p.N, 5);
    assert_int_equal(p.K, 3);
    assert_int_equal(p.ta, 0); /* B's flag, now the kernels' A */
    assert_int_equal(p.tb, 1);
    assert_int_equal(p.lda, 9);
    assert_int_equal(p.ldb, 4);
    assert_int_equal(p.ldc, 6);
    assert_int_equal(p.sa, 200);
    assert_int_equal(p.sb, 100);
    assert_int_equal(p.sc, 300);
}

static void test_pointers(void **state)
{
    (void)state;
    apiarg_problem p;
    char line[1600];
    apiarg_desc d = row_nn(4, 4, 4);
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_SUCCESS);
    err_t err;
    err_clear(&err);
    const void *A = (const void *)0x1000, *B = (const void *)0x2000;
    void *C = (void *)0x3000;
    assert_int_equal(apiarg_check_pointers("engine_sgemm", &p, A, B, C, &err), ENGINE_SUCCESS);
    assert_int_equal(apiarg_check_pointers("engine_sgemm", &p, NULL, B, C, &err), ENGINE_ERROR_INVALID_ARGUMENT);
    err_format(&err, line, sizeof line);
    assert_string_equal(line, "engine_sgemm: A is a null pointer");
    err_clear(&err);
    assert_int_equal(apiarg_check_pointers("engine_sgemm", &p, A, (const void *)0x2002, C, &err),
                     ENGINE_ERROR_MISALIGNED);
    err_format(&err, line, sizeof line);
    assert_non_null(strstr(line, "B = 0x2002 is not a multiple of 4 bytes, the size of a f32"));
    err_clear(&err);
    /* k = 0 reads neither A nor B; m = 0 touches nothing. */
    d = row_nn(4, 4, 0);
    d.lda = 1;
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_SUCCESS);
    assert_int_equal(apiarg_check_pointers("engine_sgemm", &p, NULL, NULL, C, &err), ENGINE_SUCCESS);
    assert_int_equal(apiarg_check_pointers("engine_sgemm", &p, NULL, NULL, NULL, &err), ENGINE_ERROR_INVALID_ARGUMENT);
    d = row_nn(0, 4, 4);
    assert_int_equal(check(&d, &p, line, sizeof line), ENGINE_SUCCESS);
    assert_int_equal(apiarg_check_pointers("engine_sgemm", &p, NULL, NULL, NULL, &err), ENGINE_SUCCESS);
}

static void test_status_strings(void **state)
{
    (void)state;
    assert_string_equal(engine_status_string(ENGINE_SUCCESS), "ENGINE_SUCCESS");
    assert_string_equal(engine_status_string(ENGINE_ERROR_NO_GPU), "ENGINE_ERROR_NO_GPU");
    assert_string_equal(engine_status_string(ENGINE_ERROR_OUT_OF_MEMORY), "ENGINE_ERROR_OUT_OF_MEMORY");
    assert_string_equal(engine_status_string(ENGINE_ERROR_VERSION), "ENGINE_ERROR_VERSION");
    assert_string_equal(engine_status_string((engine_status)99), "ENGINE_ERROR_UNKNOWN");
    assert_int_equal(engine_struct_size("engine_options"), sizeof(engine_options));
    assert_int_equal(engine_struct_size("engine_plan_desc"), sizeof(engine_plan_desc));
    assert_int_equal(engine_struct_size("engine_ctx"), 0);
    assert_int_equal(engine_struct_size(NULL), 0);
}

/* No driver on this machine: engine_create fails cleanly, saying so. */
static void test_create_without_gpu(void **state)
{
    (void)state;
    if (gpu_driver_present())
        skip();
    engine_ctx *ctx = (engine_ctx *)0x1;
    assert_int_equal(engine_create(&ctx, NULL), ENGINE_ERROR_NO_GPU);
    assert_null(ctx);
    assert_non_null(strstr(engine_last_error(NULL), "no CUDA driver"));
    assert_int_equal(engine_create(NULL, NULL), ENGINE_ERROR_INVALID_ARGUMENT);
}

/* A sized struct as two versions of engine.h lay it out: the newer adds b, whose default is 7,
 * past the older one's end (engine.h). */
typedef struct {
    size_t size;
    int64_t a;
} toy_v1;
typedef struct {
    size_t size;
    int64_t a;
    int b;
} toy_v2;

/* apiarg_sized: an older program's smaller struct is read with the newer fields' defaults; a newer
 * program's larger struct is refused by an older library; a size never set is refused. */
static void test_sized_copy(void **state)
{
    (void)state;
    err_t err;
    err_clear(&err);
    toy_v1 old = {sizeof old, 3};
    toy_v2 out = {0, 0, 7};
    assert_int_equal(apiarg_sized("f", "toy", &old, sizeof(toy_v1), sizeof out, &out, &err), ENGINE_SUCCESS);
    assert_int_equal(out.size, sizeof(toy_v2));
    assert_int_equal(out.a, 3);
    assert_int_equal(out.b, 7);
    toy_v2 newer = {sizeof newer, 3, 4};
    toy_v1 mine = {0, 0};
    assert_int_equal(apiarg_sized("f", "toy", &newer, sizeof(toy_v1), sizeof mine, &mine, &err), ENGINE_ERROR_VERSION);
    assert_non_null(strstr(err.text, "toy.size is"));
    assert_non_null(strstr(err.text, "newer engine.h"));
    err_clear(&err);
    old.size = 0;
    assert_int_equal(apiarg_sized("f", "toy", &old, sizeof(toy_v1), sizeof out, &out, &err),
                     ENGINE_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(err.text, "fill it with toy_init"));
}

/* The library's own sized structs: the init functions set size; a larger one (a newer engine.h) is
 * ENGINE_ERROR_VERSION, 0 or one short of the first sized layout ENGINE_ERROR_INVALID_ARGUMENT, each
 * before any GPU work. */
static void test_sized_structs(void **state)
{
    (void)state;
    struct {
        engine_options o;
        char newer[16]; /* the fields a newer engine.h would add */
    } big;
    memset(&big, 0, sizeof big);
    engine_options_init(&big.o);
    assert_int_equal(big.o.size, sizeof(engine_options));
    big.o.no_device = 1;
    big.o.size = sizeof big;
    engine_ctx *ctx = (engine_ctx *)0x1;
    assert_int_equal(engine_create(&ctx, &big.o), ENGINE_ERROR_VERSION);
    assert_null(ctx);
    assert_non_null(strstr(engine_last_error(NULL), "engine_create: engine_options.size is"));
    big.o.size = 0;
    assert_int_equal(engine_create(&ctx, &big.o), ENGINE_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(engine_last_error(NULL), "engine_options_init"));

    ctx = no_device_ctx();
    struct {
        engine_plan_desc d;
        char newer[16];
    } desc;
    memset(&desc, 0, sizeof desc);
    engine_plan_desc_init(&desc.d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 64, 64, 64);
    assert_int_equal(desc.d.size, sizeof(engine_plan_desc));
    engine_plan *plan = NULL;
    desc.d.size = sizeof desc;
    assert_int_equal(engine_plan_create(ctx, &desc.d, &plan), ENGINE_ERROR_VERSION);
    assert_null(plan);
    assert_non_null(strstr(engine_last_error(ctx), "engine_plan_desc.size is"));
    assert_int_equal(engine_gemm(ctx, &desc.d, 1, NULL, NULL, 0, NULL, NULL), ENGINE_ERROR_VERSION);
    char text[256];
    assert_int_equal(engine_gemm_describe(ctx, &desc.d, NULL, NULL, NULL, 0, text, sizeof text, NULL),
                     ENGINE_ERROR_VERSION);
    desc.d.size = 0;
    assert_int_equal(engine_plan_create(ctx, &desc.d, &plan), ENGINE_ERROR_INVALID_ARGUMENT);
    desc.d.size = offsetof(engine_plan_desc, alignment); /* no alignment field: below the first layout */
    assert_int_equal(engine_plan_create(ctx, &desc.d, &plan), ENGINE_ERROR_INVALID_ARGUMENT);
    desc.d.size = sizeof desc.d;
    assert_int_equal(engine_plan_create(ctx, &desc.d, &plan), ENGINE_SUCCESS);
    engine_plan_destroy(plan);
    engine_destroy(ctx);
}

/* The workspace a plan needs is known before it runs: a two-pass split-K config needs SPLITK x M x N
 * elements, the packed warp tile none; execute_ws refuses a short, a misaligned or a missing one
 * (then for want of a GPU: a context without one never launches). */
static void test_workspace(void **state)
{
    (void)state;
    engine_ctx *ctx = no_device_ctx();
    char *path = temp_config("{\"name\": \"two_pass\", \"template\": \"warptile\", \"dtype\": \"f32\", \"params\": {"
                             "\"BM\": 128, \"BN\": 128, \"BK\": 8, \"WM\": 32, \"WN\": 64, \"WNITER\": 2, \"TM\": 4, "
                             "\"TN\": 8, \"THREADS\": 256, \"DB\": 3, \"SPLITK\": 4, \"SPLITK_MODE\": 1}}");
    assert_int_equal(engine_set_config(ctx, path), ENGINE_SUCCESS);
    engine_plan_desc d;
    engine_plan *plan = NULL;
    engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 256, 384, 4096);
    engine_status st = engine_plan_create(ctx, &d, &plan);
    if (st)
        fail_msg("%s", engine_last_error(ctx));
    const size_t want = (size_t)4 * 256 * 384 * sizeof(float);
    assert_int_equal(engine_plan_workspace_size(plan), want);
    const float *A = (const float *)0x10000, *B = (const float *)0x20000;
    float *C = (float *)0x30000;
    void *W = (void *)0x100000;
    assert_int_equal(engine_plan_execute_ws(plan, 1, A, B, 0, C, W, want - 4, NULL), ENGINE_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(engine_last_error(ctx), "engine_plan_workspace_size"));
    assert_int_equal(engine_plan_execute_ws(plan, 1, A, B, 0, C, (char *)W + 16, want, NULL), ENGINE_ERROR_INVALID_ARGUMENT);
    assert_int_equal(engine_plan_execute_ws(plan, 1, A, B, 0, C, NULL, 0, NULL), ENGINE_ERROR_INVALID_ARGUMENT);
    assert_int_equal(engine_plan_execute_ws(plan, 1, A, B, 0, C, W, want, NULL), ENGINE_ERROR_NO_GPU);
    assert_int_equal(engine_plan_execute_ws(NULL, 1, A, B, 0, C, W, want, NULL), ENGINE_ERROR_INVALID_ARGUMENT);
    assert_int_equal(engine_plan_workspace_size(NULL), 0);
    engine_plan_destroy(plan);
    assert_int_equal(engine_set_config(ctx, "configs/warptile_db.json"), ENGINE_SUCCESS);
    assert_int_equal(engine_plan_create(ctx, &d, &plan), ENGINE_SUCCESS);
    assert_int_equal(engine_plan_workspace_size(plan), 0);
    engine_plan_destroy(plan);
    unlink(path);
    free(path);
    engine_destroy(ctx);
}

/* 64 tokens through wisdom's 128-row tc32 tile: the plan halves the tile side (pick.h
 * PICK_TILE_GAIN) and says so in its label; ENGINE_TILE_VARIANTS=0 keeps wisdom's config; a shape
 * that pads no tile keeps it too. */
static void test_tile_variant(void **state)
{
    (void)state;
    const struct {
        int64_t m, n, k;
        const char *env;
        bool halved;
    } cases[] = {{64, 4096, 14336, NULL, true}, {64, 4096, 14336, "0", false}, {2048, 2048, 2048, NULL, false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].env)
            setenv("ENGINE_TILE_VARIANTS", cases[i].env, 1);
        else
            unsetenv("ENGINE_TILE_VARIANTS");
        engine_ctx *ctx = no_device_ctx();
        engine_plan_desc d;
        engine_plan *plan = NULL;
        engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_TRANS, cases[i].m, cases[i].n,
                              cases[i].k);
        d.alignment = 16;
        engine_status st = engine_plan_create(ctx, &d, &plan);
        if (st)
            fail_msg("%s", engine_last_error(ctx));
        char text[8192];
        engine_plan_describe(plan, text, sizeof text);
        const char *label = strstr(text, "\"label\":");
        assert_non_null(label);
        const char *end = strchr(label + 9, '"');
        end = end ? strchr(end + 1, '"') : NULL;
        assert_non_null(end);
        char lab[256];
        snprintf(lab, sizeof lab, "%.*s", (int)(end - label), label);
        if ((strstr(text, "\"tile_variant\":\"BM=64\"") != NULL) != cases[i].halved)
            fail_msg("tile_variant in the description: %s", text);
        if ((strstr(lab, ",BM=64]") != NULL) != cases[i].halved)
            fail_msg("%lldx%lldx%lld (ENGINE_TILE_VARIANTS=%s): %s", (long long)cases[i].m, (long long)cases[i].n,
                     (long long)cases[i].k, cases[i].env ? cases[i].env : "unset", lab);
        engine_plan_destroy(plan);
        engine_destroy(ctx);
    }
    unsetenv("ENGINE_TILE_VARIANTS");
}

/* A context without a GPU: every check runs, then the call is refused for want of one. */
static void test_calls_without_device(void **state)
{
    (void)state;
    engine_ctx *ctx = no_device_ctx();
    const float *A = (const float *)0x1000, *B = (const float *)0x2000;
    float *C = (float *)0x3000;
    assert_int_equal(engine_sgemm(ctx, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 4, 4, 4, 1, NULL, 4, B, 4, 0,
                                  C, 4, NULL),
                     ENGINE_ERROR_INVALID_ARGUMENT);
    assert_string_equal(engine_last_error(ctx), "engine_sgemm: A is a null pointer");
    assert_int_equal(engine_sgemm(ctx, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 4, 4, 4, 1, A, 3, B, 4, 0,
                                  C, 4, NULL),
                     ENGINE_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(engine_last_error(ctx), "lda = 3 is too small"));
    assert_int_equal(engine_dgemm(ctx, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 4, 4, 4, 1,
                                  (const double *)0x1004, 4, (const double *)B, 4, 0, (double *)C, 4, NULL),
                     ENGINE_ERROR_MISALIGNED);
    assert_int_equal(engine_sgemm_strided_batched(ctx, ENGINE_COL_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 4, 4, 4, 1,
                                                  A, 4, 16, B, 4, 16, 0, C, 4, 16, 0, NULL),
                     ENGINE_ERROR_INVALID_ARGUMENT);
    assert_int_equal(engine_sgemm(ctx, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 4, 4, 4, 1, A, 4, B, 4, 0,
                                  C, 4, NULL),
                     ENGINE_ERROR_NO_GPU);
    assert_non_null(strstr(engine_last_error(ctx), "without a GPU"));
    engine_destroy(ctx);
}

/* Plans from the shipped wisdom, compiled for sm_90 with no GPU; a forced config of the other dtype. */
static void test_plans_without_device(void **state)
{
    (void)state;
    engine_ctx *ctx = no_device_ctx();
    engine_plan_desc d;
    engine_plan *plan = NULL;
    engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 4096, 4096, 4096);
    d.alignment = 16; /* cudaMalloc's pointers: the class the shipped entries were measured at */
    engine_status st = engine_plan_create(ctx, &d, &plan);
    if (st)
        fprintf(stderr, "%s\n", engine_last_error(ctx));
    assert_int_equal(st, ENGINE_SUCCESS);
    size_t need = engine_plan_describe(plan, NULL, 0);
    assert_true(need > 0);
    char *text = malloc(need + 1);
    assert_int_equal(engine_plan_describe(plan, text, need + 1), need);
    assert_int_equal(strlen(text), need);
    assert_non_null(strstr(text, "\"chosen_by\":\"wisdom\""));
    assert_non_null(strstr(text, "\"exact\":true")); /* 4096^3 f32 has an entry of its own */
    assert_non_null(strstr(text, "\"file\":\"wisdom/"));
    assert_non_null(strstr(text, "\"arch\":\"sm_90\""));
    assert_non_null(strstr(text, "\"origin\":"));
    char small[8];
    assert_int_equal(engine_plan_describe(plan, small, sizeof small), need);
    assert_int_equal(strlen(small), 7); /* cut, and terminated */
    free(text);
    assert_int_equal(engine_plan_execute(plan, 1, (void *)0x1000, (void *)0x2000, 0, (void *)0x3000, NULL),
                     ENGINE_ERROR_NO_GPU);
    engine_plan_destroy(plan);

    assert_int_equal(engine_set_config(ctx, "configs/no_such_config.json"), ENGINE_ERROR_CONFIG);
    assert_non_null(strstr(engine_last_error(ctx), "no_such_config.json"));
    assert_int_equal(engine_set_config(ctx, "configs/dgemm_dmma.json"), ENGINE_SUCCESS);
    assert_int_equal(engine_plan_create(ctx, &d, &plan), ENGINE_ERROR_DTYPE_MISMATCH);
    assert_null(plan);
    assert_non_null(strstr(engine_last_error(ctx), "is f64, the call is f32"));
    d.dtype = ENGINE_F64;
    d.m = d.n = d.k = 256;
    d.lda = d.ldb = d.ldc = 256;
    assert_int_equal(engine_plan_create(ctx, &d, &plan), ENGINE_SUCCESS);
    need = engine_plan_describe(plan, NULL, 0);
    text = malloc(need + 1);
    engine_plan_describe(plan, text, need + 1);
    assert_non_null(strstr(text, "\"chosen_by\":\"forced\""));
    assert_non_null(strstr(text, "dgemm_dmma"));
    free(text);
    engine_plan_destroy(plan);
    /* JSON text; a malformed one is named by the call. */
    assert_int_equal(engine_set_config(ctx, "{\"name\": \"x\", \"template\": \"warptile\", \"params\": {\"BM\": 7"),
                     ENGINE_ERROR_CONFIG);
    assert_non_null(strstr(engine_last_error(ctx), "engine_set_config:1:"));
    assert_int_equal(engine_set_config(ctx, NULL), ENGINE_SUCCESS);
    engine_destroy(ctx);
}

/* The description of a plan of x W^T (row-major, B transposed) at 4096^3 in a half dtype, into text. */
static void half_nt_plan_text(engine_ctx *ctx, engine_dtype dt, char *text, size_t len)
{
    engine_plan_desc d;
    engine_plan *plan = NULL;
    engine_plan_desc_init(&d, dt, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_TRANS, 4096, 4096, 4096);
    d.alignment = 16;
    engine_status st = engine_plan_create(ctx, &d, &plan);
    if (st)
        fprintf(stderr, "%s\n", engine_last_error(ctx));
    assert_int_equal(st, ENGINE_SUCCESS);
    engine_plan_describe(plan, text, len);
    engine_plan_destroy(plan);
}

/* The half types: the typed entry's checks; the shipped wisdom weighed by the model on the H100 (hws at
 * 4096^3 NT: bf16's tuned device entries, f16's mirrored from them, bench/half_mirror.py); where wisdom has no entry of
 * the type (a directory of FP32 entries only) the shipped h04_tuned plans (NT and, column-major, TN:
 * compiled here), K = 0's scale kernel compiles for them; a forced f32 config is the other dtype. */
static void test_half_plans(void **state)
{
    (void)state;
    engine_ctx *ctx = no_device_ctx();
    engine_plan_desc d;
    char text[4096];
    engine_plan *plan = NULL;
    const engine_dtype hdt[2] = {ENGINE_BF16, ENGINE_F16};
    for (int i = 0; i < 2; i++) {
        half_nt_plan_text(ctx, hdt[i], text, sizeof text);
        assert_non_null(strstr(text, "\"chosen_by\":\"wisdom\""));
        /* bf16: the device file's tuned entries (bench/half_tune.sh); f16: bf16's mirrored there */
        assert_non_null(strstr(text, "wisdom/nvidia-h100-80gb-hbm3.json"));
        assert_non_null(strstr(text, i ? "configs/hws_f16.json" : "configs/hws_bf16.json"));
    }
    engine_destroy(ctx);
    /* No half entries anywhere: FP32's default only (in the checkout, whose configs/ holds h04_tuned as
     * wisdom/../configs does). */
    char dir[] = "./.test-api-wisdom-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *path = xasprintf("%s/default.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"version\": 1, \"entries\": [{\"dtype\": \"f32\", \"shape\": \"4096x4096x4096\", "
               "\"config\": \"configs/warptile_db.json\", \"tflops\": 0, \"vs_cublas\": 0}]}\n");
    fclose(f);
    engine_options o;
    engine_options_init(&o);
    o.no_device = 1;
    o.wisdom_dir = dir;
    o.user_wisdom_dir = "";
    o.device_name = "NVIDIA H100 80GB HBM3";
    ctx = NULL;
    assert_int_equal(engine_create(&ctx, &o), ENGINE_SUCCESS);
    const void *A = (const void *)0x1000, *B = (const void *)0x2000;
    void *C = (void *)0x3000;
    assert_int_equal(engine_gemm_ex(ctx, (engine_dtype)7, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 4, 4, 4, 1,
                                    A, 4, B, 4, 0, C, 4, NULL),
                     ENGINE_ERROR_INVALID_ARGUMENT);
    assert_string_equal(engine_last_error(ctx),
                        "engine_gemm_ex: dtype = 7 is not ENGINE_F32, ENGINE_F64, ENGINE_BF16 or ENGINE_F16");
    assert_int_equal(engine_gemm_ex(ctx, ENGINE_BF16, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 4, 4, 4, 1,
                                    (const void *)0x1001, 4, B, 4, 0, C, 4, NULL),
                     ENGINE_ERROR_MISALIGNED); /* 2-byte elements */
    assert_int_equal(engine_gemm_ex(ctx, ENGINE_F16, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 4, 4, 4, 1,
                                    (const void *)0x1002, 4, B, 4, 0, C, 4, NULL),
                     ENGINE_ERROR_NO_GPU);
    const engine_dtype dts[2] = {ENGINE_BF16, ENGINE_F16};
    for (int i = 0; i < 2; i++) {
        const char *name = i ? "f16" : "bf16";
        char want[128];
        half_nt_plan_text(ctx, dts[i], text, sizeof text);
        snprintf(want, sizeof want, "\"chosen_by\":\"default: no wisdom for %s at this problem (h04_tuned)\"", name);
        assert_non_null(strstr(text, want));
        snprintf(want, sizeof want, "{\"dtype\":\"%s\",", name);
        assert_non_null(strstr(text, want));
        assert_non_null(strstr(text, "\"layout\":\"NT\""));
        assert_non_null(strstr(text, "configs/h04_tuned.json"));
        /* A transposed, column-major (the kernels' problem is TN with A and B swapped): hmma too. */
        engine_plan_desc_init(&d, dts[i], ENGINE_COL_MAJOR, ENGINE_NO_TRANS, ENGINE_TRANS, 127, 255, 33);
        assert_int_equal(engine_plan_create(ctx, &d, &plan), ENGINE_SUCCESS);
        engine_plan_describe(plan, text, sizeof text);
        assert_non_null(strstr(text, "\"layout\":\"TN\""));
        assert_non_null(strstr(text, "configs/h04_tuned.json"));
        engine_plan_destroy(plan);
        engine_plan_desc_init(&d, dts[i], ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 33, 17, 0);
        assert_int_equal(engine_plan_create(ctx, &d, &plan), ENGINE_SUCCESS);
        engine_plan_describe(plan, text, sizeof text);
        assert_non_null(strstr(text, "k=0: C = beta C (engine_scale_c)"));
        engine_plan_destroy(plan);
    }
    assert_int_equal(engine_set_config(ctx, "configs/warptile_db.json"), ENGINE_SUCCESS);
    engine_plan_desc_init(&d, ENGINE_BF16, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 64, 64, 64);
    assert_int_equal(engine_plan_create(ctx, &d, &plan), ENGINE_ERROR_DTYPE_MISMATCH);
    assert_non_null(strstr(engine_last_error(ctx), "is f32, the call is bf16"));
    engine_destroy(ctx);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
    free(path);
}

/* BLAS's empty products (k = 0: C = beta C by the scale kernel, compiled here; m = 0: nothing), a plan's
 * promised alignment held to at execute, and a bad alignment refused. */
static void test_edge_plans(void **state)
{
    (void)state;
    engine_ctx *ctx = no_device_ctx();
    engine_plan_desc d;
    engine_plan *plan = NULL;
    char text[4096];
    engine_plan_desc_init(&d, ENGINE_F64, ENGINE_COL_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 33, 17, 0);
    assert_int_equal(engine_plan_create(ctx, &d, &plan), ENGINE_SUCCESS);
    engine_plan_describe(plan, text, sizeof text);
    assert_non_null(strstr(text, "\"config\":null,\"chosen_by\":\"k=0: C = beta C (engine_scale_c)\""));
    assert_non_null(strstr(text, "\"m\":17,\"n\":33,\"k\":0")); /* column-major: the kernels' m is n */
    assert_int_equal(engine_plan_execute(plan, 1, NULL, NULL, 0, NULL, NULL), ENGINE_ERROR_INVALID_ARGUMENT);
    assert_string_equal(engine_last_error(ctx), "engine_plan_execute: C is a null pointer");
    engine_plan_destroy(plan);
    engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 0, 17, 5);
    assert_int_equal(engine_plan_create(ctx, &d, &plan), ENGINE_SUCCESS);
    engine_plan_describe(plan, text, sizeof text);
    assert_non_null(strstr(text, "m or n = 0: nothing"));
    engine_plan_destroy(plan);
    engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 4096, 4096, 4096);
    d.alignment = 3;
    assert_int_equal(engine_plan_create(ctx, &d, &plan), ENGINE_ERROR_INVALID_ARGUMENT);
    d.alignment = 16;
    assert_int_equal(engine_plan_create(ctx, &d, &plan), ENGINE_SUCCESS);
    engine_plan_describe(plan, text, sizeof text);
    assert_non_null(strstr(text, "\"align_elems\":[4,4,4]"));
    assert_int_equal(engine_plan_execute(plan, 1, (void *)0x1004, (void *)0x2000, 0, (void *)0x3000, NULL),
                     ENGINE_ERROR_MISALIGNED);
    assert_string_equal(engine_last_error(ctx),
                        "engine_plan_execute: A is not a multiple of 16 bytes, the alignment the plan was made for");
    engine_plan_destroy(plan);
    /* A layout wisdom's choice refuses (padded rows, transposed A, column-major): another config that
     * takes it runs, and the description keeps the refusal. */
    engine_plan_desc_init(&d, ENGINE_F64, ENGINE_COL_MAJOR, ENGINE_TRANS, ENGINE_NO_TRANS, 127, 129, 131);
    d.lda += 3;
    assert_int_equal(engine_plan_create(ctx, &d, &plan), ENGINE_SUCCESS);
    engine_plan_describe(plan, text, sizeof text);
    assert_non_null(strstr(text, "\"layout\":\"NT\",\"lda\":131,\"ldb\":134,\"ldc\":127"));
    char *fb = strstr(text, "\"fallback\":{\"refused\":");
    if (fb)
        assert_non_null(strstr(fb, "is refused"));
    engine_plan_destroy(plan);
    /* A forced config never falls back: its refusal is the answer. */
    assert_int_equal(engine_set_config(ctx, "configs/dgemm_dmma.json"), ENGINE_SUCCESS);
    if (fb) {
        assert_int_equal(engine_plan_create(ctx, &d, &plan), ENGINE_ERROR_NOT_SUPPORTED);
        assert_non_null(strstr(engine_last_error(ctx), "is refused"));
    }
    engine_destroy(ctx);
}

/* Two host threads planning the same problems on one context at once (the picks, the compile and the
 * context's tables under its lock): every plan made, and the same problem described the same way. */
typedef struct {
    engine_ctx *ctx;
    int ok;
    char text[4][4096];
} planner;

static void *plan_some(void *arg)
{
    planner *w = arg;
    const int64_t sizes[4][3] = {{4096, 4096, 4096}, {1000, 1001, 999}, {127, 129, 131}, {17, 33, 5}};
    for (int i = 0; i < 4; i++) {
        engine_plan_desc d;
        engine_plan *plan;
        engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, sizes[i][0],
                              sizes[i][1], sizes[i][2]);
        if (engine_plan_create(w->ctx, &d, &plan) != ENGINE_SUCCESS)
            return NULL;
        engine_plan_describe(plan, w->text[i], sizeof w->text[i]);
        engine_plan_destroy(plan);
    }
    w->ok = 1;
    return NULL;
}

static void test_two_threads_plan(void **state)
{
    (void)state;
    engine_ctx *ctx = no_device_ctx();
    planner w[2] = {{.ctx = ctx}, {.ctx = ctx}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, plan_some, &w[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    assert_true(w[0].ok && w[1].ok);
    for (int i = 0; i < 4; i++) {
        /* The same config and entry; only where the CUBIN came from may differ (one thread compiled it). */
        char *a = strstr(w[0].text[i], "\"origin\""), *b = strstr(w[1].text[i], "\"origin\"");
        assert_non_null(a);
        assert_non_null(b);
        assert_int_equal(a - w[0].text[i], b - w[1].text[i]);
        assert_memory_equal(w[0].text[i], w[1].text[i], (size_t)(a - w[0].text[i]));
    }
    engine_destroy(ctx);
}

/* The plan's choice goes through the CLI's pick with the call's op, batch and alignment class: a TN
 * call takes the TN entry of its shape, an NN call at that shape does not, a batched call takes the
 * entry of its batch and is weighed at its batch otherwise, an op wisdom lacks weighs NN's and says
 * so, and an entry is exact only at the class of the call's leading dimensions and pointers. */
static void test_plans_weigh_op_and_batch(void **state)
{
    (void)state;
    char dir[] = "/tmp/engine-api-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *path = xasprintf("%s/nvidia-h100-80gb-hbm3.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    const char *cwd = getenv("PWD") ? getenv("PWD") : ".";
    fprintf(f, "{\"version\": 1, \"device\": \"NVIDIA H100 80GB HBM3\", \"arch\": \"sm_90\", \"entries\": [\n"
               "  {\"dtype\": \"f32\", \"op\": \"TN\", \"shape\": \"300x300x300\", \"config\": \"%s/configs/naive.json\", "
               "\"tflops\": 1, \"vs_cublas\": 0.1},\n"
               "  {\"dtype\": \"f32\", \"align\": [1, 4, 4], \"shape\": \"300x300x300\", \"config\": \"%s/configs/naive.json\", "
               "\"tflops\": 1, \"vs_cublas\": 0.1},\n"
               "  {\"dtype\": \"f32\", \"batch\": 512, \"shape\": \"128x128x128\", \"config\": \"%s/configs/naive.json\", "
               "\"tflops\": 1, \"vs_cublas\": 0.1}\n]}\n",
            cwd, cwd, cwd);
    fclose(f);
    engine_options o;
    engine_options_init(&o);
    o.no_device = 1;
    o.arch = 90;
    o.wisdom_dir = "wisdom";
    o.user_wisdom_dir = dir;
    o.device_name = "NVIDIA H100 80GB HBM3";
    engine_ctx *ctx = NULL;
    assert_int_equal(engine_create(&ctx, &o), ENGINE_SUCCESS);
    struct {
        engine_transpose ta, tb;
        int64_t size, batch;
        const char *want[3]; /* in the description */
        bool naive;          /* the user's entry (naive) chosen */
        int64_t lda_pad;     /* elements added to lda */
        int alignment;       /* bytes the pointers are promised to be a multiple of (0: 16) */
    } cases[] = {
        {ENGINE_TRANS, ENGINE_NO_TRANS, 300, 1, {"\"entry_op\":\"TN\",\"entry_batch\":1,\"exact\":true",
                                                  "\"basis\":\"the TN entries, at batch 1\"", "\"layout\":\"TN\""}, true, 0, 0},
        {ENGINE_NO_TRANS, ENGINE_NO_TRANS, 300, 1, {"\"entry_op\":\"NN\"", "\"exact\":false",
                                                     "\"basis\":\"the NN entries, at batch 1\""}, false, 0, 0},
        {ENGINE_NO_TRANS, ENGINE_NO_TRANS, 128, 512, {"\"entry_batch\":512,\"exact\":true",
                                                       "\"basis\":\"the NN entries, at batch 512\"", "\"batch\":512"}, true, 0, 0},
        {ENGINE_NO_TRANS, ENGINE_NO_TRANS, 128, 64, {"\"exact\":false", "\"basis\":\"the NN entries, at batch 64\"",
                                                      "\"batch\":64"}, false, 0, 0},
        /* one product in NT: the development points measured in NT (dev-seeds) are its basis */
        {ENGINE_NO_TRANS, ENGINE_TRANS, 300, 1, {"\"entry_op\":\"NT\"", "\"basis\":\"the NT entries, at batch 1\"",
                                                  "\"layout\":\"NT\""}, false, 0, 0},
        {ENGINE_TRANS, ENGINE_TRANS, 300, 1, {"\"entry_op\":\"NN\"",
                                               /* the shipped TT entries are batches' (3xTF32): no witness for one product */
                                               "\"basis\":\"no wisdom entry of op TT for one product at this level (its entries are batches'): weighed the NN entries, at batch 1\"",
                                               "\"layout\":\"TT\""}, false, 0, 0},
        /* The alignment class picks too: an ld + 1 call takes the entry measured at its class
         * exactly; the same call with pointers only 4-byte aligned (class 1 everywhere) has no
         * exact entry, nor does a packed call with them. */
        {ENGINE_NO_TRANS, ENGINE_NO_TRANS, 300, 1, {"\"align_elems\":[1,4,4]", "\"exact\":true,\"entry_align\":[1,4,4]",
                                                     "\"lda\":301"}, true, 1, 16},
        {ENGINE_NO_TRANS, ENGINE_NO_TRANS, 300, 1, {"\"align_elems\":[1,1,1]", "\"exact\":false", "\"lda\":301"},
         false, 1, 4},
        /* ... and in TN, with no exact entry, the model weighs every TN entry: the user's and the
         * development points measured in TN (dev-seeds), one of which it takes */
        {ENGINE_TRANS, ENGINE_NO_TRANS, 300, 1, {"\"align_elems\":[1,1,1]", "\"exact\":false",
                                                  "\"basis\":\"the TN entries, at batch 1\""}, false, 0, 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        engine_plan_desc d;
        engine_plan *plan = NULL;
        int64_t s = cases[i].size;
        engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, cases[i].ta, cases[i].tb, s, s, s);
        d.lda += cases[i].lda_pad;
        d.alignment = cases[i].alignment ? cases[i].alignment : 16;
        d.batch = cases[i].batch;
        d.stride_a = d.stride_b = d.stride_c = s * s;
        engine_status st = engine_plan_create(ctx, &d, &plan);
        if (st)
            fprintf(stderr, "case %zu: %s\n", i, engine_last_error(ctx));
        assert_int_equal(st, ENGINE_SUCCESS);
        char text[4096];
        engine_plan_describe(plan, text, sizeof text);
        for (int k = 0; k < 3; k++)
            if (!strstr(text, cases[i].want[k]))
                fail_msg("case %zu: no %s in %s", i, cases[i].want[k], text);
        if ((strstr(text, "\"label\":\"naive\"") != NULL) != cases[i].naive)
            fail_msg("case %zu: the user's entry (naive) %s: %s", i, cases[i].naive ? "not chosen" : "chosen", text);
        engine_plan_destroy(plan);
    }
    engine_destroy(ctx);
    unlink(path);
    rmdir(dir);
    free(path);
}

/* The class engine_sgemm plans and picks with comes from the real pointers (and the lds), operand by
 * operand: what a describe's "align_elems" and an entry's "align" compare. */
static void test_pointer_class(void **state)
{
    (void)state;
    apiarg_problem p;
    memset(&p, 0, sizeof p);
    p.dtype = DTYPE_F32, p.M = p.N = p.K = 300, p.lda = p.ldb = 300, p.ldc = 302, p.batch = 1;
    layout_align al;
    apiplan_align_of(&p, (void *)0x1000, (void *)0x2004, (void *)0x3000, &al);
    assert_true(al.a == 4 && al.b == 1 && al.c == 2); /* B 4 bytes off, C's rows 2 elements apart */
    p.dtype = DTYPE_F64, p.lda = 301;
    apiplan_align_of(&p, (void *)0x1000, (void *)0x2008, (void *)0x3010, &al);
    assert_true(al.a == 1 && al.b == 1 && al.c == 2);
}

int main(void)
{
    /* Before the first engine_create: the library reads its paths once. */
    setenv("ENGINE_TEMPLATES", "kernels_src", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_and_enums),
        cmocka_unit_test(test_leading_dimensions),
        cmocka_unit_test(test_batches),
        cmocka_unit_test(test_column_major_swaps),
        cmocka_unit_test(test_batches_overlap_with_ldc),
        cmocka_unit_test(test_pointers),
        cmocka_unit_test(test_status_strings),
        cmocka_unit_test(test_create_without_gpu),
        cmocka_unit_test(test_calls_without_device),
        cmocka_unit_test(test_plans_without_device),
        cmocka_unit_test(test_two_threads_plan),
        cmocka_unit_test(test_edge_plans),
        cmocka_unit_test(test_half_plans),
        cmocka_unit_test(test_plans_weigh_op_and_batch),
        cmocka_unit_test(test_pointer_class),
        cmocka_unit_test(test_workspace),
        cmocka_unit_test(test_tile_variant),
        cmocka_unit_test(test_sized_copy),
        cmocka_unit_test(test_sized_structs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
