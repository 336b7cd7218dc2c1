/* test_api_oom.c — libengine when the host runs out of memory: every allocation an entry point makes
 * through try_* (util_try_fail_after) fails in turn, and the call gives ENGINE_ERROR_OUT_OF_MEMORY
 * naming what could not be had, leaves the context usable and leaks nothing (the ASan build checks
 * that), where it used to abort in xoom. Split from test_api.c, whose no-device context it shares
 * (apictx.h). */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../include/engine.h"
#include "apictx.h"
#include "util.h"

#include <jansson.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* No-device options as apictx.h's context has them, over this wisdom and user wisdom. */
static void oom_options(engine_options *o, const char *wisdom, const char *user)
{
    engine_options_init(o);
    o->no_device = 1;
    o->wisdom_dir = wisdom;
    o->user_wisdom_dir = user;
    o->device_name = "NVIDIA H100 80GB HBM3";
}

/* The library's first context works out where templates, configs and wisdom lie (paths_init_beside):
 * with no host memory for their names that engine_create is ENGINE_ERROR_OUT_OF_MEMORY with nothing
 * made, not an exit, and the next one tries again. Runs first, while the paths are not worked out. */
static void test_paths_out_of_memory(void **state)
{
    (void)state;
    engine_options o;
    oom_options(&o, "wisdom", "");
    int n = 0;
    for (;; n++) {
        engine_ctx *ctx = (engine_ctx *)0x1;
        util_try_fail_after(n);
        engine_status st = engine_create(&ctx, &o);
        util_try_fail_after(-1);
        assert_int_equal(st, ENGINE_ERROR_OUT_OF_MEMORY);
        assert_null(ctx);
        if (!strstr(engine_last_error(NULL), "directories")) /* past the paths: the context's own */
            break;
        assert_non_null(strstr(engine_last_error(NULL), "engine_create: no host memory for the names of"));
    }
    assert_true(n >= 5); /* the library's directory, the variable's copy and directory, canonical names */
    /* The paths the later attempt worked out are whole: a plan finds its templates. */
    engine_ctx *ctx = no_device_ctx();
    engine_plan_desc d;
    engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 64, 64, 64);
    engine_plan *plan = NULL;
    assert_int_equal(engine_plan_create(ctx, &d, &plan), ENGINE_SUCCESS);
    engine_plan_destroy(plan);
    engine_destroy(ctx);
}

/* Host memory that runs out for an entry point's own objects (a context and its names, a forced
 * config, a plan) is ENGINE_ERROR_OUT_OF_MEMORY with nothing made, not an abort. */
static void test_host_out_of_memory(void **state)
{
    (void)state;
    engine_options o;
    oom_options(&o, "wisdom", "");
    for (int n = 0; n < 4; n++) { /* the context, then each of its three names */
        engine_ctx *ctx = (engine_ctx *)0x1;
        util_try_fail_after(n);
        assert_int_equal(engine_create(&ctx, &o), ENGINE_ERROR_OUT_OF_MEMORY);
        util_try_fail_after(-1);
        assert_null(ctx);
        assert_non_null(strstr(engine_last_error(NULL), "engine_create: no host memory"));
    }
    engine_ctx *ctx = no_device_ctx();
    for (int n = 0; n < 2; n++) { /* the config, then the context's list of them */
        util_try_fail_after(n);
        assert_int_equal(engine_set_config(ctx, "configs/naive.json"), ENGINE_ERROR_OUT_OF_MEMORY);
        util_try_fail_after(-1);
        assert_non_null(strstr(engine_last_error(ctx), "engine_set_config: no host memory"));
    }
    assert_int_equal(engine_set_config(ctx, "configs/naive.json"), ENGINE_SUCCESS);
    engine_plan_desc d;
    engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 64, 64, 64);
    engine_plan *plan = (engine_plan *)0x1;
    util_try_fail_after(0);
    assert_int_equal(engine_plan_create(ctx, &d, &plan), ENGINE_ERROR_OUT_OF_MEMORY);
    util_try_fail_after(-1);
    assert_null(plan);
    assert_non_null(strstr(engine_last_error(ctx), "engine_plan_create: no host memory"));
    assert_int_equal(engine_plan_create(ctx, &d, &plan), ENGINE_SUCCESS);
    engine_plan_destroy(plan);
    engine_destroy(ctx);
}

/* A call failing for host memory at its nth try_* allocation, n = 0, 1, ...: each failure is
 * ENGINE_ERROR_OUT_OF_MEMORY naming fn and leaves the context usable (what it made before the
 * failure, a pick, may stay), and the sweep ends at a success. Returns the failures seen. */
typedef engine_status (*oom_call)(engine_ctx *ctx, void *arg);
static int oom_sweep_seen(engine_ctx *ctx, oom_call call, void *arg, const char *fn, strbuf *seen)
{
    for (int n = 0; n < 100000; n++) {
        util_try_fail_after(n);
        engine_status st = call(ctx, arg);
        util_try_fail_after(-1);
        if (st == ENGINE_SUCCESS)
            return n;
        const char *why = engine_last_error(ctx);
        if (st != ENGINE_ERROR_OUT_OF_MEMORY)
            fail_msg("allocation %d: %s: %s", n, engine_status_string(st), why);
        if (!strstr(why, fn) || !strstr(why, "no host memory"))
            fail_msg("allocation %d: %s", n, why);
        if (seen)
            sb_addf(seen, "%s\n", why);
    }
    fail_msg("%s: no success within 100000 allocations", fn);
    return -1;
}

static int oom_sweep(engine_ctx *ctx, oom_call call, void *arg, const char *fn)
{
    return oom_sweep_seen(ctx, call, arg, fn, NULL);
}

/* The second problem of the sweep below: other switches than 96x80x64, so a CUBIN of its own. */
static void engine_desc_init_97(engine_plan_desc *d)
{
    engine_plan_desc_init(d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 97, 81, 65);
}

static engine_status describe_call(engine_ctx *ctx, void *arg)
{
    const engine_plan_desc *d = arg;
    char text[512];
    size_t need = 0;
    const void *ptr = (const void *)(uintptr_t)0x10000;
    return engine_gemm_describe(ctx, d, ptr, ptr, ptr, 0, text, sizeof text, &need);
}

static engine_status plan_call(engine_ctx *ctx, void *arg)
{
    engine_plan *p = NULL;
    engine_status st = engine_plan_create(ctx, arg, &p);
    engine_plan_destroy(p);
    return st;
}

/* Whether every site of sites (NULL-terminated) is in seen's messages; fails naming the first
 * one that is not. */
static void assert_sites(const strbuf *seen, const char *const *sites)
{
    for (const char *const *s = sites; *s; s++)
        if (!strstr(seen->buf, *s))
        {
            fprintf(stderr, "%s", seen->buf);
            fail_msg("no failure at \"%s\" in the sweep", *s);
        }
}

/* A no-device context as apictx.h's over the small wisdom of tests/fixtures/wisdom_oom (its user
 * directory and its shipped one): a sweep through the context's first pick fails each of the pick's
 * allocations in turn, and the shipped wisdom's thousands of entries would take thousands of runs. */
static engine_ctx *fixture_ctx(void)
{
    engine_options o;
    oom_options(&o, "tests/fixtures/wisdom_oom/shipped", "tests/fixtures/wisdom_oom/user");
    engine_ctx *ctx = NULL;
    assert_int_equal(engine_create(&ctx, &o), ENGINE_SUCCESS);
    return ctx;
}

/* Deeper than the entry points' own objects: a call's entry and the context's table of them
 * (engine_sgemm's first call takes the same path as engine_gemm_describe), the context's pick of
 * wisdom per dtype and op, and engine_warm's picks; below kernel_build, the plan's switches and
 * pasted source, NVRTC's options, the headers read for the compile's key and the memory cache's
 * entry (NVRTC's own output: test_jit), the disk cache's entry read and copied (its path, its bytes,
 * its copy); and the descriptions, the plan's and the call's. */
static void test_host_out_of_memory_deeper(void **state)
{
    (void)state;
    engine_plan_desc d;
    /* The kernels in the disk cache first (a context of its own), so that the sweep reads them there. */
    engine_ctx *ctx = fixture_ctx();
    engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 96, 80, 64);
    assert_int_equal(describe_call(ctx, &d), ENGINE_SUCCESS);
    engine_desc_init_97(&d);
    assert_int_equal(describe_call(ctx, &d), ENGINE_SUCCESS);
    engine_destroy(ctx);
    ctx = fixture_ctx();
    /* the context's pick for f32 NN first, at a problem of its own: every allocation of the pick
     * (the wisdom read, the candidates and their configs) fails in turn; once it is made, the next
     * retry has the allocations to spare for the kernel, so the sites below it are the next sweep's */
    engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 200, 200, 200);
    strbuf seen;
    sb_init(&seen);
    assert_true(oom_sweep_seen(ctx, describe_call, &d, "engine_gemm_describe", &seen) >= 100);
    static const char *const picking[] = {"for the plan\n", "for the context's pick", "to list the user's wisdom directory",
                                          "for a user wisdom file's path", "to list the wisdom directory",
                                          "to read the wisdom file", "for the wisdom entry's overrides",
                                          "for the wisdom candidates", "for a candidate's label", "for the pick's tables",
                                          /* a candidate's config and its template */
                                          "to read the config", "for the config's label", "to read the template",
                                          "for the template's rules", "for the template's compiled expressions",
                                          "for the selection's distances", NULL};
    assert_sites(&seen, picking);
    sb_free(&seen);
    /* wisdom's choice with the pick there: the plan, the kernel, the call's entry (the table of calls
     * is kept from the call above, so the retry that reaches the table has the slot to spare that the
     * entry needs) */
    engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 96, 80, 64);
    sb_init(&seen);
    assert_true(oom_sweep_seen(ctx, describe_call, &d, "engine_gemm_describe", &seen) >= 12);
    static const char *const first[] = {"for the plan\n", "for the text of the plan's switches",
                                        "for the pasted source", "for NVRTC's options", "for the headers of the compile's key",
                                        "for the compile's memory cache entry", "for the plan's description",
                                        "for the call's entry", "for the description\n", "for the disk cache entry's path",
                                        "to read the disk cache entry", "for the disk cache entry's copy", NULL};
    assert_sites(&seen, first);
    sb_free(&seen);
    /* the pick and the table are there now: the plan, the kernel (other switches: its own CUBIN), the
     * call's entry */
    engine_desc_init_97(&d);
    sb_init(&seen);
    assert_true(oom_sweep_seen(ctx, describe_call, &d, "engine_gemm_describe", &seen) >= 10);
    static const char *const again[] = {"for the plan\n", "for the selection's distances", "for the pasted source",
                                        "for the headers of the compile's key",
                                        "to read the disk cache entry",
                                        "for the plan's description", "for the call's entry", NULL};
    assert_sites(&seen, again);
    assert_null(strstr(seen.buf, "pick"));
    sb_free(&seen);
    /* another op: a pick of its own */
    engine_plan_desc_init(&d, ENGINE_F64, ENGINE_ROW_MAJOR, ENGINE_TRANS, ENGINE_NO_TRANS, 64, 64, 64);
    assert_true(oom_sweep(ctx, plan_call, &d, "engine_plan_create") >= 2);
    engine_destroy(ctx);
    /* engine_warm when no pick can be made */
    ctx = fixture_ctx();
    util_try_fail_after(0);
    engine_status st = engine_warm(ctx, 1, NULL, NULL);
    util_try_fail_after(-1);
    assert_int_equal(st, ENGINE_ERROR_OUT_OF_MEMORY);
    assert_non_null(strstr(engine_last_error(ctx), "no host memory"));
    engine_destroy(ctx);
}

static engine_status warm_call(engine_ctx *ctx, void *arg)
{
    (void)arg;
    return engine_warm(ctx, 2, NULL, NULL);
}

/* engine_warm with every allocation of its thread failing in turn, past the picks (their sweep is
 * above): its list of kernels, their labels and source keys (and the plans those are hashed from),
 * the threads. Each is ENGINE_ERROR_OUT_OF_MEMORY naming engine_warm, with nothing compiled, nothing
 * leaked (the ASan build) and no thread left running, where warm.c's xasprintf, xrealloc, xstrdup,
 * xmalloc and xcalloc exited; the sweep ends at a warm that finds the fixture's kernels cached. Only
 * this thread's allocations fail (util_try_fail_after is per thread): the workers' compiles are
 * test_jit's and test_cache_oom's. */
static void test_warm_out_of_memory(void **state)
{
    (void)state;
    engine_ctx *ctx = fixture_ctx();
    /* the picks first, and the kernels compiled: a sweep that made the picks on its way would reach
     * warm's own allocations only with thousands to spare (the picks' allocations are not redone) */
    assert_int_equal(engine_warm(ctx, 2, NULL, NULL), ENGINE_SUCCESS);
    strbuf seen;
    sb_init(&seen);
    assert_true(oom_sweep_seen(ctx, warm_call, NULL, "engine_warm", &seen) >= 8);
    static const char *const sites[] = {"engine_warm: no host memory for a kernel's label",
                                        "engine_warm: no host memory for the list of kernels",
                                        "engine_warm: no host memory for a kernel's source key",
                                        "engine_warm: no host memory for the threads", NULL};
    assert_sites(&seen, sites);
    sb_free(&seen);
    /* the picks are the context's: the first allocation is the first kernel's label */
    util_try_fail_after(0);
    assert_int_equal(engine_warm(ctx, 1, NULL, NULL), ENGINE_ERROR_OUT_OF_MEMORY);
    util_try_fail_after(-1);
    assert_non_null(strstr(engine_last_error(ctx), "engine_warm: no host memory for a kernel's label"));
    assert_int_equal(engine_warm(ctx, 1, NULL, NULL), ENGINE_SUCCESS);
    engine_destroy(ctx);
}

/* C = beta C (K = 0) takes a kernel of the library's own, not wisdom's: its source fails for host
 * memory like a config's, with the entry point's name. */
static void test_scale_out_of_memory(void **state)
{
    (void)state;
    engine_plan_desc d;
    engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 8, 8, 0);
    engine_ctx *ctx = fixture_ctx();
    strbuf seen;
    sb_init(&seen);
    assert_true(oom_sweep_seen(ctx, plan_call, &d, "engine_plan_create", &seen) >= 1);
    static const char *const sites[] = {"engine_plan_create: no host memory for the C = beta C kernel's source (engine_scale_c)",
                                        NULL};
    assert_sites(&seen, sites);
    sb_free(&seen);
    engine_destroy(ctx);
}

/* The configs the library makes beside wisdom's: a tile variant of wisdom's choice (64 tokens
 * through the shipped wisdom's 128-row tc32 tile, test_api's test_tile_variant) and the shipped
 * config a half dtype runs where wisdom has none (h04_tuned): each allocation of them, and of the
 * selection's scratch arrays, fails in turn; the pick is made beforehand (its sweep is above). */
static void test_variant_and_shipped_out_of_memory(void **state)
{
    (void)state;
    engine_plan_desc d, d0;
    engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_TRANS, 64, 4096, 14336);
    d.alignment = 16;
    engine_plan_desc_init(&d0, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_TRANS, 2048, 2048, 2048);
    d0.alignment = 16;
    engine_ctx *ctx = no_device_ctx();
    assert_int_equal(plan_call(ctx, &d0), ENGINE_SUCCESS); /* the pick of f32 NT */
    strbuf seen;
    sb_init(&seen);
    assert_true(oom_sweep_seen(ctx, plan_call, &d, "engine_plan_create", &seen) >= 4);
    static const char *const variant[] = {"for the selection's distances", "for the selection's tile variants",
                                          "for the tile variant's config", "for the tile variant's values", NULL};
    assert_sites(&seen, variant);
    sb_free(&seen);
    engine_destroy(ctx);
    /* bf16 over an empty wisdom directory: h04_tuned, found beside it (DIR/../configs) */
    char root[] = "/tmp/engine_oom_XXXXXX", wdir[64], cdir[64], repo[4096];
    assert_non_null(mkdtemp(root));
    snprintf(wdir, sizeof wdir, "%s/wisdom", root);
    snprintf(cdir, sizeof cdir, "%s/configs", root);
    assert_non_null(realpath("configs", repo));
    assert_int_equal(mkdir(wdir, 0700), 0);
    assert_int_equal(symlink(repo, cdir), 0);
    engine_options o;
    oom_options(&o, wdir, "");
    assert_int_equal(engine_create(&ctx, &o), ENGINE_SUCCESS);
    engine_plan_desc_init(&d, ENGINE_BF16, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_NO_TRANS, 64, 64, 64);
    /* the pick first, and only it: the first call to fail past it (in the selection, before the
     * shipped config is loaded and kept) */
    for (int n = 0;; n++) {
        util_try_fail_after(n);
        engine_status st = plan_call(ctx, &d);
        util_try_fail_after(-1);
        assert_int_equal(st, ENGINE_ERROR_OUT_OF_MEMORY);
        if (strstr(engine_last_error(ctx), "for the selection's distances"))
            break;
        assert_true(n < 100000);
    }
    sb_init(&seen);
    assert_true(oom_sweep_seen(ctx, plan_call, &d, "engine_plan_create", &seen) >= 4);
    static const char *const shipped[] = {"engine_plan_create: no host memory for the shipped config's path (h04_tuned)",
                                          "engine_plan_create: no host memory to read the config (", "h04_tuned.json)",
                                          NULL};
    assert_sites(&seen, shipped);
    sb_free(&seen);
    engine_destroy(ctx);
    unlink(cdir);
    rmdir(wdir);
    rmdir(root);
}

/* try_malloc as jansson's malloc: the sweep then fails jansson's allocations too. Only in this test:
 * json_set_alloc_funcs is the process's, and a library must not take jansson over from the program
 * that links it, so the library tells a failed parse by jansson's own error (jsonrd_load). */
static void *jansson_try_malloc(size_t n) { return try_malloc(n); }

/* engine_set_config with every allocation failing in turn, jansson's among them (the config's JSON,
 * the template's block, the shared rules): ENGINE_ERROR_OUT_OF_MEMORY each time, where jansson's
 * NULL used to read as invalid JSON ("invalid JSON: invalid token", ENGINE_ERROR_CONFIG). */
static void test_set_config_out_of_memory(void **state)
{
    (void)state;
    engine_ctx *ctx = no_device_ctx();
    json_set_alloc_funcs(jansson_try_malloc, free);
    int n = 0, parse = 0;
    strbuf seen;
    sb_init(&seen);
    for (;; n++) {
        util_try_fail_after(n);
        engine_status st = engine_set_config(ctx, "configs/naive.json");
        util_try_fail_after(-1);
        if (st == ENGINE_SUCCESS)
            break;
        const char *why = engine_last_error(ctx);
        if (st != ENGINE_ERROR_OUT_OF_MEMORY || !strstr(why, "engine_set_config: no host memory"))
            fail_msg("allocation %d: %s: %s", n, engine_status_string(st), why);
        parse += strstr(why, "no host memory to parse the JSON") != NULL;
        sb_addf(&seen, "%s\n", why);
        assert_true(n < 100000);
    }
    json_set_alloc_funcs(malloc, free);
    assert_true(parse > 20); /* jansson's, in the config's text and the template's */
    /* the config's own memory, its template's (config.c, template*.c, expr.c) and the context's */
    static const char *const sites[] = {
        "to read the config", "for the config's text", "for the config's name", "for the config's values",
        "for the config's overrides", "for the config's label", "for the template's path", "to read the template",
        "for the template's name", "for the template's parameter block", "for the template's summary",
        "for the template's parameters", "for a template parameter's name", "for a template parameter's doc",
        "for a template parameter's values", "for a template expression", "for a template expression's name",
        "for the template's named expressions", "for the template's rules", "for a template rule's text",
        "for a launch's kernel name", "for the template's compiled expressions",
        "engine_set_config: no host memory for the config\n", NULL};
    assert_sites(&seen, sites);
    sb_free(&seen);
    engine_destroy(ctx);
}

int main(void)
{
    /* Before the first engine_create: the library reads its paths once. */
    setenv("ENGINE_TEMPLATES", "kernels_src", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths_out_of_memory),
        cmocka_unit_test(test_host_out_of_memory),
        cmocka_unit_test(test_host_out_of_memory_deeper),
        cmocka_unit_test(test_set_config_out_of_memory),
        cmocka_unit_test(test_variant_and_shipped_out_of_memory),
        cmocka_unit_test(test_scale_out_of_memory),
        cmocka_unit_test(test_warm_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
