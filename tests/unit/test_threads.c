/* test_threads.c — the library's contract on threads, without a GPU: contexts made, used and
 * destroyed on many threads at once (each its own, and one shared), plans and descriptions of the
 * same and of different problems racing, and two contexts sharing nothing: each compiles into its
 * own cache while the other is made and destroyed.
 * make test runs it as it is; make tsan runs it under ThreadSanitizer, where a data race fails it. */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>

#include "../../include/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 8

static char g_cache[64];

static engine_ctx *make_ctx_in(const char *cache_dir)
{
    engine_options o;
    engine_options_init(&o);
    o.no_device = 1;
    o.arch = 90;
    o.wisdom_dir = "wisdom";
    o.user_wisdom_dir = "";
    o.device_name = "NVIDIA H100 80GB HBM3";
    o.cache_dir = cache_dir;
    engine_ctx *ctx = NULL;
    return engine_create(&ctx, &o) == ENGINE_SUCCESS ? ctx : NULL;
}

static engine_ctx *make_ctx(void) { return make_ctx_in(g_cache); }

typedef struct {
    engine_ctx *shared; /* a context all threads plan on; NULL: each makes its own, twice over */
    int id;
    int ok;
    char why[512];
} job;

/* Plans of the forced naive config at three shapes (two shared by every thread, one its own) and a
 * description of each call, on the shared context or on contexts of the thread's own. */
static void *work(void *arg)
{
    job *j = arg;
    j->ok = 1;
    for (int round = 0; round < 2 && j->ok; round++) {
        engine_ctx *ctx = j->shared ? j->shared : make_ctx();
        if (!ctx) {
            snprintf(j->why, sizeof j->why, "engine_create: %s", engine_last_error(NULL));
            j->ok = 0;
            break;
        }
        if (!j->shared && engine_set_config(ctx, "configs/naive.json")) {
            snprintf(j->why, sizeof j->why, "engine_set_config: %s", engine_last_error(ctx));
            j->ok = 0;
        }
        const int64_t sides[3] = {64, 96, 128 + 8 * j->id};
        for (int s = 0; s < 3 && j->ok; s++) {
            engine_plan_desc d;
            engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_TRANS, sides[s], sides[s], 32);
            engine_plan *p = NULL;
            if (engine_plan_create(ctx, &d, &p)) {
                snprintf(j->why, sizeof j->why, "plan %lld: %s", (long long)sides[s], engine_last_error(ctx));
                j->ok = 0;
                break;
            }
            char text[256];
            if (engine_plan_describe(p, text, sizeof text) == 0 || !strstr(text, "naive"))
                j->ok = 0, snprintf(j->why, sizeof j->why, "describe: %s", text);
            size_t need = 0;
            const void *ptr = (const void *)(uintptr_t)0x10000;
            if (engine_gemm_describe(ctx, &d, ptr, ptr, ptr, 0, text, sizeof text, &need) || need == 0)
                j->ok = 0, snprintf(j->why, sizeof j->why, "gemm_describe: %s", engine_last_error(ctx));
            engine_plan_destroy(p);
        }
        if (!j->shared)
            engine_destroy(ctx);
    }
    return NULL;
}

static void run(engine_ctx *shared)
{
    job jobs[NTHREADS];
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        jobs[i] = (job){.shared = shared, .id = i};
        assert_int_equal(pthread_create(&th[i], NULL, work, &jobs[i]), 0);
    }
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < NTHREADS; i++)
        if (!jobs[i].ok)
            fail_msg("thread %d: %s", i, jobs[i].why);
}

/* Each thread its own contexts, made and destroyed twice while the others use theirs: each with its
 * own compiler over one cache directory (engine.h). */
static void test_own_contexts(void **state)
{
    (void)state;
    run(NULL);
}

/* One context, every thread planning on it at once: the same problems and different ones. */
static void test_shared_context(void **state)
{
    (void)state;
    engine_ctx *ctx = make_ctx();
    assert_non_null(ctx);
    assert_int_equal(engine_set_config(ctx, "configs/naive.json"), ENGINE_SUCCESS);
    run(ctx);
    engine_destroy(ctx);
}

/* Regular files under dir (the cache's entries). */
static int count_files(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "find %s -type f 2>/dev/null | wc -l", dir);
    FILE *f = popen(cmd, "r");
    int n = -1;
    if (f && fscanf(f, "%d", &n) != 1)
        n = -1;
    if (f)
        pclose(f);
    return n;
}

typedef struct {
    engine_ctx *ctx;
    int ok;
    char why[256];
} planner;

static void *plan_many(void *arg)
{
    planner *p = arg;
    p->ok = 1;
    for (int i = 0; i < 6 && p->ok; i++) {
        engine_plan_desc d;
        engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 40 + i, 72, 24);
        engine_plan *pl = NULL;
        if (engine_plan_create(p->ctx, &d, &pl))
            p->ok = 0, snprintf(p->why, sizeof p->why, "plan %d: %s", i, engine_last_error(p->ctx));
        engine_plan_destroy(pl);
    }
    return NULL;
}

/* Two contexts on two cache directories: a context's compiles go to its own directory only (one
 * disk cache per process, the newest context's, was the old rule), and one context planning while
 * another is made and destroyed beside it reads nothing of the other's. */
static void test_contexts_share_nothing(void **state)
{
    (void)state;
    char da[80], db[80];
    snprintf(da, sizeof da, "%s/a", g_cache);
    snprintf(db, sizeof db, "%s/b", g_cache);
    engine_ctx *a = make_ctx_in(da), *b = make_ctx_in(db);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(engine_set_config(a, "configs/naive.json"), ENGINE_SUCCESS);
    assert_int_equal(engine_set_config(b, "configs/naive.json"), ENGINE_SUCCESS);
    int a0 = count_files(da), b0 = count_files(db);
    engine_plan_desc d;
    engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 33, 65, 17);
    engine_plan *p = NULL;
    assert_int_equal(engine_plan_create(a, &d, &p), ENGINE_SUCCESS);
    engine_plan_destroy(p);
    assert_true(count_files(da) > a0);
    assert_int_equal(count_files(db), b0); /* b was made last: its cache is not a's */
    planner pa = {.ctx = a};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, plan_many, &pa), 0);
    for (int i = 0; i < 4; i++) { /* b goes and comes back while a compiles */
        engine_destroy(b);
        b = make_ctx_in(db);
        assert_non_null(b);
    }
    pthread_join(th, NULL);
    if (!pa.ok)
        fail_msg("%s", pa.why);
    assert_int_equal(count_files(db), b0);
    engine_destroy(b);
    engine_destroy(a);
}

int main(void)
{
    use_repo_templates();
    snprintf(g_cache, sizeof g_cache, "/tmp/engine-threads-XXXXXX");
    if (!mkdtemp(g_cache))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_contexts),
        cmocka_unit_test(test_shared_context),
        cmocka_unit_test(test_contexts_share_nothing),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_cache);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
