/* test_template.c — parameter blocks, planning a launch, pasting the source. */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "config.h"
#include "template.h"
#include "arch.h"

static int setup(void **state)
{
    (void)state;
    use_repo_templates();
    return 0;
}

static void test_load_blocktile(void **state)
{
    (void)state;
    template_t t;
    err_t err;
    err_clear(&err);
    assert_int_equal(template_load("blocktile", &t, &err), 0);
    assert_true(t.dtypes[DTYPE_F32] && t.dtypes[DTYPE_F64]);
    assert_true(t.nparams > 20);
    assert_true(t.nconstraints > 10);
    assert_int_equal(template_param_index(&t, "BM"), 0);
    assert_false(t.params[0].has_default);
    int vec = template_param_index(&t, "VEC_A");
    assert_int_equal(t.params[vec].nvalues, 3);
    template_free(&t);
    assert_int_equal(template_load("no_such_template", &t, &err), -1);
    assert_non_null(strstr(err.text, "not found"));
}

/* A plan request for test template tp at values v (f32, "t.cu") for m x n x k on arch a, with the
 * H100's opt-in shared memory per block. */
#define TREQ(tp, v, a, m, n, k)                                                                                        \
    (&(plan_req){.tpl = (tp),                                                                                          \
                 .label = "t.cu",                                                                                      \
                 .config_name = "t",                                                                                   \
                 .values = (v),                                                                                        \
                 .dtype = DTYPE_F32,                                                                                   \
                 .to = {.arch = (a), .smem_limit = 232448, .M = (m), .N = (n), .K = (k)}})

/* The plan points into the config's template: both are freed together by done(). */
static config_t g_cfg;

static void plan_config_set(const char *path, const param_set *set, size_t nset, int64_t m, int64_t n, int64_t k,
                            plan_t *p, err_t *err)
{
    if (config_load(path, set, nset, NULL, 90, &g_cfg, err) != 0)
        fail_msg("%s: %s", path, err->text);
    plan_req r = config_plan_req(&g_cfg, &(plan_target){.arch = 90, .smem_limit = 232448, .M = m, .N = n, .K = k});
    if (template_plan(&r, p, err))
        fail_msg("%s", err->text);
}

static void plan_config(const char *path, int64_t m, int64_t n, int64_t k, plan_t *p, err_t *err)
{
    plan_config_set(path, NULL, 0, m, n, k, p, err);
}

static void done(plan_t *p)
{
    plan_free(p);
    config_free(&g_cfg);
}

static void test_plan_walk_steps(void **state)
{
    (void)state;
    err_t err;
    err_clear(&err);
    plan_t p;
    /* bank_pad_vec: 64x64 tiles, 2x2 tiles per block when the grid is large. */
    plan_config("configs/bank_pad_vec.json", 2048, 2048, 2048, &p, &err);
    assert_int_equal(p.nlaunches, 1);
    assert_int_equal(p.launches[0].grid[0], 16);
    assert_int_equal(p.launches[0].grid[1], 16);
    assert_int_equal(p.launches[0].block[0], 128);
    assert_int_equal(p.launches[0].smem, 33024); /* the published 33,024 B */
    assert_non_null(strstr(p.switches, "TPB_EFF=2"));
    assert_non_null(strstr(p.source, "#define BM 64\n"));
    assert_non_null(strstr(p.source, "#define T float\n"));
    assert_non_null(strstr(p.source, "#line 1 \""));
    done(&p);
    /* A small grid keeps one tile per block; odd shapes turn the guards on. */
    plan_config("configs/bank_pad_vec.json", 127, 129, 131, &p, &err);
    assert_non_null(strstr(p.switches, "FULL_M=0 FULL_N=0 FULL_K=0"));
    assert_non_null(strstr(p.switches, "TPB_EFF=1"));
    assert_int_equal(p.launches[0].grid[0], 3);
    assert_int_equal(p.launches[0].grid[1], 2);
    done(&p);
    /* ldg_wider2: 1-D grid padded to whole 8x8 supertiles, 82,944 B of shared memory. */
    plan_config("configs/ldg_wider2.json", 2048, 2048, 2048, &p, &err);
    assert_int_equal(p.launches[0].grid[0], 4 * 1 * 8 * 8); /* 32x8 tiles in 8x8 squares */
    assert_int_equal(p.launches[0].grid[1], 1);
    assert_int_equal(p.launches[0].smem, 82944);
    assert_non_null(strstr(p.switches, "EVEC_A=4"));
    done(&p);
    plan_config("configs/ldg_wider2.json", 2048, 2046, 2048, &p, &err);
    assert_non_null(strstr(p.switches, "EVEC_B=2")); /* N % 4 == 2: B in 2-element loads */
    assert_non_null(strstr(p.switches, "EVEC_C=2"));
    done(&p);
    plan_config("configs/ldg_wider2.json", 2048, 2045, 2048, &p, &err);
    assert_non_null(strstr(p.switches, "EVEC_B=1")); /* N odd: scalar loads of B */
    done(&p);
    plan_config("configs/sb10_warptiling.json", 2048, 2046, 2048, &p, &err);
    assert_non_null(strstr(p.switches, "EVEC_B=1")); /* warptile keeps scalar loads (measured) */
    assert_int_equal(p.nlaunches, 1);
    done(&p);
    /* ...unless B is packed first (warptile_db: PACK_B 3, where N's rows are unaligned and K's are
     * not): a pack_b launch over rup(N, 128) columns and cdiv(K, 4) row groups, into a workspace of
     * K x rup(N, 128) elements, and B's loads at full width. */
    plan_config("configs/warptile_db.json", 2048, 2046, 2048, &p, &err);
    assert_non_null(strstr(p.switches, "PACKB=1 EVEC_B=4"));
    assert_int_equal(p.nlaunches, 2);
    assert_string_equal(p.launches[0].kernel, "pack_b");
    assert_int_equal(p.launches[0].grid[0], 2048 / 256);
    assert_int_equal(p.launches[0].grid[1], 2048 / 4);
    assert_int_equal(p.main_launch, 1);
    assert_int_equal(p.workspace, 2048 * 2048);
    done(&p);
    plan_config("configs/warptile_db.json", 2048, 2046, 2047, &p, &err); /* K odd: not packed */
    assert_non_null(strstr(p.switches, "PACKB=0 EVEC_B=1"));
    assert_int_equal(p.nlaunches, 1);
    assert_int_equal(p.workspace, 0);
    done(&p);
    /* C_STAGE 2: C's tile staged where N's rows are unaligned and K is odd or at most 1024 (the stores
     * a large share: 0.18x the time at 2251x11601x4, docs/RESULTS.md), not at K = 2048 (3.5% slower). */
    plan_config("configs/warptile_db.json", 2251, 11601, 4, &p, &err);
    assert_non_null(strstr(p.switches, "CSTAGE=1"));
    done(&p);
    plan_config("configs/warptile_db.json", 2251, 11601, 1024, &p, &err);
    assert_non_null(strstr(p.switches, "CSTAGE=1"));
    done(&p);
    plan_config("configs/warptile_db.json", 2251, 11601, 2048, &p, &err);
    assert_non_null(strstr(p.switches, "CSTAGE=0"));
    done(&p);
    plan_config("configs/warptile_db.json", 2251, 11601, 2047, &p, &err); /* K odd: staged at any K */
    assert_non_null(strstr(p.switches, "CSTAGE=1"));
    done(&p);
    plan_config("configs/warptile_db.json", 2251, 11600, 4, &p, &err); /* N aligned: never */
    assert_non_null(strstr(p.switches, "CSTAGE=0"));
    done(&p);
    plan_config("configs/dgemm_simt.json", 1000, 999, 999, &p, &err); /* PACK_B 2: K odd too */
    assert_non_null(strstr(p.switches, "PACKB=1 EVEC_B=2"));
    assert_int_equal(p.workspace, 999 * 1024);
    done(&p);
}

static void test_plan_splitk_launches(void **state)
{
    (void)state;
    err_t err;
    err_clear(&err);
    plan_t p;
    plan_config("configs/splitk2.json", 1024, 1024, 1024, &p, &err);
    assert_int_equal(p.nlaunches, 2);
    assert_string_equal(p.launches[0].kernel, "scale_c");
    assert_string_equal(p.launches[1].kernel, "gemm");
    assert_int_equal(p.launches[1].grid[2], 2);
    assert_int_equal(p.main_launch, 1);
    assert_int_equal(p.workspace, 0);
    done(&p);
    plan_config("configs/splitk4_2pass.json", 1024, 1024, 1024, &p, &err);
    assert_int_equal(p.nlaunches, 2);
    assert_string_equal(p.launches[1].kernel, "reduce");
    assert_int_equal(p.workspace, 4LL * 1024 * 1024);
    done(&p);
    /* SPLITK_MODE 2 in the three templates: one launch while the tiles fit the module's counters
     * (SPLIT_SERIAL), scale_c first as in mode 0 beyond them. */
    param_set one[] = {{"SPLITK_MODE=2", "SPLITK_MODE", 2, NULL, 0}};
    const char *one_launch[] = {"configs/warptile_splitk.json", "configs/dgemm_dmma_splitk.json", "configs/splitk2.json"};
    const int64_t splits[] = {8, 8, 2};
    for (int i = 0; i < 3; i++) {
        plan_config_set(one_launch[i], one, 1, 127, 129, 4097, &p, &err);
        assert_int_equal(p.nlaunches, 1);
        assert_string_equal(p.launches[0].kernel, "gemm");
        assert_int_equal(p.launches[0].grid[2], splits[i]);
        assert_non_null(strstr(p.switches, "SPLIT_SERIAL=1"));
        assert_int_equal(p.workspace, 0);
        done(&p);
    }
    plan_config_set("configs/warptile_splitk.json", one, 1, 8192, 8192, 64, &p, &err); /* 64 x 64 tiles of 128^2 */
    assert_int_equal(p.nlaunches, 1);
    done(&p);
    plan_config_set("configs/warptile_splitk.json", one, 1, 8192, 8320, 64, &p, &err); /* 64 x 65 tiles */
    assert_int_equal(p.nlaunches, 2);
    assert_string_equal(p.launches[0].kernel, "scale_c");
    assert_non_null(strstr(p.switches, "SPLIT_SERIAL=0"));
    done(&p);
    plan_config("configs/warptile_splitk.json", 127, 129, 4097, &p, &err); /* mode 0, as shipped */
    assert_int_equal(p.nlaunches, 2);
    assert_string_equal(p.launches[0].kernel, "scale_c");
    assert_int_equal(p.launches[1].grid[2], 8);
    done(&p);
    /* Mode 0 launches only the splits that get k-tiles (SPLITS): K = 9 is one k-tile of 8 (warptile_splitk
     * BK 8, SPLITK 8) ... two k-tiles, so two splits of one; K = 17, three; K = 57, eight k-tiles of 8. */
    const int64_t ks[] = {9, 17, 57, 64, 65};
    const int64_t want_splits[] = {2, 3, 8, 8, 5};
    for (int i = 0; i < 5; i++) {
        plan_config("configs/warptile_splitk.json", 127, 129, ks[i], &p, &err);
        if (p.launches[1].grid[2] != want_splits[i])
            fail_msg("K = %lld: %lld splits launched, want %lld", (long long)ks[i], (long long)p.launches[1].grid[2],
                     (long long)want_splits[i]);
        done(&p);
    }
    /* ... not in the two-pass mode, whose reduction sums all SPLITK slices of W. */
    plan_config("configs/splitk4_2pass.json", 64, 64, 9, &p, &err);
    assert_int_equal(p.launches[0].grid[2], 4);
    done(&p);
    /* Stream-K: C scaled by beta first, then a 1-D grid of exactly STREAMK blocks. */
    plan_config("configs/warptile_streamk.json", 2500, 2500, 2500, &p, &err);
    assert_int_equal(p.nlaunches, 2);
    assert_string_equal(p.launches[0].kernel, "scale_c");
    assert_int_equal(p.launches[0].grid[0], (2500 * 2500 + 255) / 256);
    assert_string_equal(p.launches[1].kernel, "gemm");
    assert_int_equal(p.launches[1].grid[0], 528);
    assert_int_equal(p.launches[1].grid[1], 1);
    assert_int_equal(p.launches[1].grid[2], 1);
    assert_int_equal(p.main_launch, 1);
    assert_int_equal(p.workspace, 0);
    done(&p);
    /* Without STREAMK the same template keeps its 2-D (or supertile) grid and one launch. */
    plan_config("configs/warptile_db.json", 4096, 4096, 4096, &p, &err);
    assert_int_equal(p.nlaunches, 1);
    assert_int_equal(p.launches[0].grid[0], 32 * 32); /* 8x8 supertiles: 1-D */
    assert_int_equal(p.launches[0].grid[1], 1);
    done(&p);
    /* Stream-K and split-K together are refused by the template's constraint. */
    param_set both[] = {{"SPLITK=4", "SPLITK", 4, NULL, 0}};
    config_t c;
    assert_int_not_equal(config_load("configs/warptile_streamk.json", both, 1, NULL, 90, &c, &err), 0);
    assert_non_null(strstr(err.text, "STREAMK == 0 || SPLITK == 1"));
}

/* 64-bit offsets exactly when some matrix reaches 2^31 elements: A (M*K), B (K*N) or C (M*N). */
static void test_plan_idx64(void **state)
{
    (void)state;
    const struct {
        int64_t m, n, k;
        bool big;
    } cases[] = {{4096, 4096, 4096, false}, {46340, 46340, 16, false}, {65536, 65536, 16, true},
                 {32768, 65536, 16, true}, {16, 16, 1 << 27, true}, {16, 1 << 27, 16, true}, {1 << 19, 4095, 4095, false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        plan_t p;
        err_t err;
        err_clear(&err);
        plan_config("configs/naive.json", cases[i].m, cases[i].n, cases[i].k, &p, &err);
        const char *want = cases[i].big ? "#define IDX64 1\n" : "#define IDX64 0\n";
        if (!strstr(p.source, want))
            fail_msg("%lldx%lldx%lld: the source lacks %s", (long long)cases[i].m, (long long)cases[i].n,
                     (long long)cases[i].k, want);
        done(&p);
    }
}

static void test_plan_refusals(void **state)
{
    (void)state;
    err_t err;
    err_clear(&err);
    config_t c;
    plan_t p;
    assert_int_equal(config_load("tests/configs/gpu/needs_k4.json", NULL, 0, NULL, 90, &c, &err), 0);
    plan_req r = config_plan_req(&c, &(plan_target){.arch = 90, .smem_limit = 232448, .M = 16, .N = 16, .K = 6});
    assert_int_not_equal(template_plan(&r, &p, &err), 0);
    assert_non_null(strstr(err.text, "requires K % 4 == 0"));
    plan_free(&p);
    err_clear(&err);
    r = config_plan_req(&c, &(plan_target){.arch = 90, .smem_limit = 232448, .M = 16, .N = 16, .K = 8});
    assert_int_equal(template_plan(&r, &p, &err), 0);
    plan_free(&p);
    config_free(&c);
    /* More shared memory than the target allows is refused before compiling. */
    assert_int_equal(config_load("configs/ldg_wider2.json", NULL, 0, NULL, 86, &c, &err), 0);
    r = config_plan_req(&c, &(plan_target){.arch = 86, .smem_limit = 65536, .M = 64, .N = 64, .K = 64});
    assert_int_not_equal(template_plan(&r, &p, &err), 0);
    assert_non_null(strstr(err.text, "82944 bytes of shared memory"));
    plan_free(&p);
    config_free(&c);
}

/* A config's compile_cost orders parallel compiles; the shipped templates' estimates must put the
 * compiles measured longest (sb11's 128 accumulators over 16 unrolled k-steps: 1.0 s on the H100
 * host) before the short ones (warptile_db 0.3 s, naive 0.06 s). */
static void test_compile_cost(void **state)
{
    (void)state;
    err_t err;
    err_clear(&err);
    const char *paths[] = {"configs/sb11_double_buffer.json", "configs/warptile_db.json", "configs/naive.json"};
    int64_t cost[3];
    for (int i = 0; i < 3; i++) {
        config_t c;
        if (config_load(paths[i], NULL, 0, NULL, 90, &c, &err))
            fail_msg("%s", err.text);
        cost[i] = c.compile_cost;
        config_free(&c);
    }
    assert_true(cost[0] > cost[1]);
    assert_true(cost[1] > cost[2]);
    assert_true(cost[2] > 1);

    /* No estimate counts as 1, an estimate below 1 too; one that cannot be evaluated is an error. */
    const char *fmt = "/* engine:template\n{\"summary\": \"t\", \"dtypes\": [\"f32\"], \"params\": {\"B\": "
                      "{\"default\": 4}}, %s \"launches\": [{\"kernel\": \"gemm\", \"grid\": [1, 1, 1], "
                      "\"block\": [\"B\", 1, 1]}]}\n*/\n";
    const char *extra[] = {"", "\"compile_cost\": \"B - 100\",", "\"compile_cost\": \"B * 10\",",
                           "\"compile_cost\": \"B * NOPE\","};
    const int64_t want[] = {1, 1, 40, -1};
    for (int i = 0; i < 4; i++) {
        char text[512];
        snprintf(text, sizeof text, fmt, extra[i]);
        template_t t;
        if (template_parse("t", "t.cu", text, &t, &err))
            fail_msg("%s", err.text);
        int64_t values[1] = {4}, c = 0;
        char msg[256] = "";
        int rc = template_compile_cost(&t, values, DTYPE_F32, 90, &c, msg, sizeof msg);
        if (want[i] < 0) {
            assert_int_equal(rc, -1);
            assert_non_null(strstr(msg, "NOPE"));
        } else {
            assert_int_equal(rc, 0);
            assert_int_equal(c, want[i]);
        }
        template_free(&t);
    }
}

/* Rules several templates share are written once (rules.json beside the template) and named from
 * "requires" or "constraints"; a name rules.json lacks, or a missing file, is refused naming both. */
static void test_shared_rules(void **state)
{
    (void)state;
    char dir[] = "/tmp/engine-rules-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128], rules[128];
    snprintf(path, sizeof path, "%s/t.cu", dir);
    snprintf(rules, sizeof rules, "%s/rules.json", dir);
    const char *text = "/* engine:template\n{\"summary\": \"t\", \"dtypes\": [\"f32\"], \"params\": {\"B\": "
                       "{\"default\": 4}}, \"constraints\": [\"small\", {\"rule\": \"B > 1\", \"why\": \"own\"}], "
                       "\"requires\": [\"%s\"], \"launches\": [{\"kernel\": \"gemm\", \"grid\": [1, 1, 1], "
                       "\"block\": [\"B\", 1, 1]}]}\n*/\n";
    char buf[1024];
    snprintf(buf, sizeof buf, text, "square");
    template_t t;
    err_t err;
    err_clear(&err);
    assert_int_not_equal(template_parse("t", path, buf, &t, &err), 0); /* no rules.json yet */
    assert_non_null(strstr(err.text, "rules.json does not load"));
    FILE *f = fopen(rules, "w");
    assert_non_null(f);
    fputs("{\"small\": [{\"rule\": \"B <= 64\", \"why\": \"a small block\"}],\n"
          " \"square\": [{\"rule\": \"M == N\", \"why\": \"square only\"}, {\"rule\": \"K > 0\", \"why\": \"some K\"}]}\n", f);
    fclose(f);
    err_clear(&err);
    if (template_parse("t", path, buf, &t, &err))
        fail_msg("%s", err.text);
    assert_int_equal(t.nconstraints, 2);
    assert_string_equal(t.constraints[0].rule, "B <= 64");
    assert_string_equal(t.constraints[1].why, "own");
    assert_int_equal(t.nrequires, 2);
    assert_string_equal(t.requires[1].rule, "K > 0");
    int64_t values[1] = {4};
    plan_t p;
    err_clear(&err);
    assert_int_not_equal(template_plan(&(plan_req){.tpl = &t,
                                                   .label = path,
                                                   .config_name = "t",
                                                   .values = values,
                                                   .dtype = DTYPE_F32,
                                                   .to = {.arch = 90, .smem_limit = 232448, .M = 8, .N = 16, .K = 8}},
                                       &p, &err),
                         0);
    assert_non_null(strstr(err.text, "requires M == N (square only)"));
    assert_int_equal(err.cause, ERR_UNSUPPORTED);
    plan_free(&p);
    template_free(&t);
    snprintf(buf, sizeof buf, text, "round");
    err_clear(&err);
    assert_int_not_equal(template_parse("t", path, buf, &t, &err), 0);
    assert_non_null(strstr(err.text, "has no rule set \"round\""));
    unlink(rules);
    rmdir(dir);
}

/* A broken rules.json as data: each folder of tests/fixtures/rules/invalid/ holds a rules.json (none:
 * the file is missing), optionally its own t.cu (else k_rules_user, which names set "a" in
 * "constraints" and "b" in "requires"), and the exact error line loading t.cu must give
 * (`expected`). rules.json is read as strictly as any other file: whole, at its own line and
 * column, the set and rule named. Adding a case is adding a folder. */
#define RULES_DIR "tests/fixtures/rules/invalid"

static const char *const k_rules_user =
    "/* engine:template\n"
    "{\"summary\": \"t\", \"dtypes\": [\"f32\"], \"params\": {\"B\": {\"default\": 4}},\n"
    " \"constraints\": [{\"rule\": \"B > 1\", \"why\": \"own\"}, \"a\"],\n"
    " \"requires\": [\"b\"],\n"
    " \"launches\": [{\"kernel\": \"gemm\", \"grid\": [1, 1, 1], \"block\": [\"B\", 1, 1]}]}\n"
    "*/\n";

static int load_rules_case(const char *case_dir, char *got, size_t len)
{
    char *path = xasprintf("%s/t.cu", case_dir), *text = read_file(path, NULL);
    template_t t;
    err_t err;
    err_clear(&err);
    int rc = template_parse("t", path, text ? text : k_rules_user, &t, &err);
    if (rc == 0)
        template_free(&t);
    else
        err_format(&err, got, len);
    assert_int_equal(rc ? err.code : EXIT_INPUT, EXIT_INPUT);
    free(text);
    free(path);
    return rc;
}

static void test_rules_invalid(void **state)
{
    (void)state;
    assert_true(run_fixtures(RULES_DIR, load_rules_case) >= 15);
}

/* "pdl": a boolean; the plan asks for programmatic dependent launch only on sm_90 and newer (the
 * griddepcontrol instructions exist there), and never for a template that did not promise to wait. */
static void test_pdl(void **state)
{
    (void)state;
    err_t err;
    err_clear(&err);
    const char *fmt = "/* engine:template\n{\"summary\": \"t\", \"dtypes\": [\"f32\"], %s \"params\": {\"B\": "
                      "{\"default\": 4}}, \"launches\": [{\"kernel\": \"gemm\", \"grid\": [1, 1, 1], "
                      "\"block\": [\"B\", 1, 1]}]}\n*/\n";
    const char *extra[] = {"", "\"pdl\": false,", "\"pdl\": true,"};
    for (int i = 0; i < 3; i++) {
        char text[512];
        snprintf(text, sizeof text, fmt, extra[i]);
        template_t t;
        if (template_parse("t", "t.cu", text, &t, &err))
            fail_msg("%s", err.text);
        assert_int_equal(t.pdl, i == 2);
        int64_t values[1] = {4};
        for (int arch = 80; arch <= 90; arch += 10) {
            plan_t p;
            if (template_plan(TREQ(&t, values, arch, 8, 8, 8), &p, &err))
                fail_msg("%s", err.text);
            assert_int_equal(p.pdl, i == 2 && arch >= 90);
            plan_free(&p);
        }
        template_free(&t);
    }
    char text[512];
    snprintf(text, sizeof text, fmt, "\"pdl\": 1,");
    template_t t;
    assert_int_not_equal(template_parse("t", "t.cu", text, &t, &err), 0);
    assert_non_null(strstr(err.text, "\"pdl\" must be true or false"));
    assert_string_equal(err.source, "t.cu");
    assert_int_equal(err.line, 2);
    assert_int_equal(err.code, EXIT_INPUT);
    /* Every shipped template waits before touching memory, and says so. */
    const char *shipped[] = {"naive", "blocktile", "warptile", "dmma", "tc32"};
    for (int i = 0; i < 5; i++) {
        if (template_load(shipped[i], &t, &err))
            fail_msg("%s", err.text);
        assert_true(t.pdl);
        assert_non_null(strstr(t.text, "grid_dep_sync();"));
        /* ... and lets a config choose: PDL 2 (even grids only) unless a config says otherwise. */
        int pi = template_param_index(&t, "PDL");
        assert_true(pi >= 0);
        assert_int_equal(t.params[pi].def, 2);
        template_free(&t);
    }
}

/* The PDL parameter reaches the plan; mode 2 refuses PDL exactly where spread evenly the grid would
 * leave SMs (132 here) fewer blocks than they hold, it does not fit the slots the same grid leaves
 * free, and the even share holds 8 warps or more (template.h). */
static void test_pdl_modes(void **state)
{
    (void)state;
    err_t err;
    err_clear(&err);
    const char *text = "/* engine:template\n{\"summary\": \"t\", \"dtypes\": [\"f32\"], \"pdl\": true, "
                       "\"params\": {\"G\": {\"default\": 1}, \"W\": {\"default\": 1}, "
                       "\"PDL\": {\"default\": 2, \"values\": [0, 1, 2]}}, "
                       "\"launches\": [{\"kernel\": \"gemm\", \"grid\": [\"G\", 1, 1], \"block\": [\"32 * W\", 1, 1]}]}\n*/\n";
    template_t t;
    if (template_parse("t", "t.cu", text, &t, &err))
        fail_msg("%s", err.text);
    struct {
        int64_t grid, warps, mode;
        int occ;
        bool want;
    } cases[] = {
        {256, 4, 2, 3, false}, /* the walk's 64x64 blocktile at 2048^3: 2 per SM evenly, 3 with PDL */
        {256, 4, 2, 2, true},  /* ... at 2 per SM: evenly 2 as well (measured: no loss) */
        {200, 4, 2, 3, false}, {264, 4, 2, 3, false}, {1, 4, 2, 3, true},    {132, 4, 2, 3, true},
        {133, 4, 2, 3, true},  /* 133 blocks fit the 263 slots left free: all placed breadth-first */
        {265, 4, 2, 3, true},  {395, 4, 2, 3, true},  {1000, 4, 2, 3, true}, {256, 4, 2, 1, true},
        {133, 8, 2, 4, true},  {640, 1, 2, 16, true}, /* one-warp tiles: an SM is not busy */
        {1100, 1, 2, 16, false}, {256, 4, 1, 3, true}, {256, 4, 0, 3, false}, {1, 1, 0, 1, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t values[3] = {cases[i].grid, cases[i].warps, cases[i].mode};
        plan_t p;
        if (template_plan(TREQ(&t, values, 90, 8, 8, 8), &p, &err))
            fail_msg("%s", err.text);
        assert_int_equal(p.pdl, cases[i].mode);
        if (plan_use_pdl(&p, 132, cases[i].occ) != cases[i].want)
            fail_msg("grid %lld of %lld warps, mode %lld, %d blocks/SM: want %d", (long long)cases[i].grid,
                     (long long)cases[i].warps, (long long)cases[i].mode, cases[i].occ, cases[i].want);
        plan_free(&p);
        /* Before sm_90 there is no PDL, whatever the parameter says. */
        if (template_plan(TREQ(&t, values, 86, 8, 8, 8), &p, &err))
            fail_msg("%s", err.text);
        assert_int_equal(p.pdl, 0);
        assert_false(plan_use_pdl(&p, 132, cases[i].occ));
        plan_free(&p);
    }
    template_free(&t);
}

/* A launch's "traffic" (the elements it moves in DRAM, for the selection model) is evaluated per
 * shape: tc32ws's first launches give theirs (A and B^T read once, written as two parts of rows of
 * rup(K, 4)), the main launch and a template without it give -1; a malformed one is refused by the
 * parser, one with an unknown name or a negative value by the plan. */
static void test_launch_traffic(void **state)
{
    (void)state;
    err_t err;
    err_clear(&err);
    template_t t;
    if (template_load("tc32ws", &t, &err))
        fail_msg("%s", err.text);
    int64_t values[32]; /* tc32ws_3x's: B^T split into the workspace too (BREG 0, 3 stages) */
    for (size_t i = 0; i < t.nparams; i++)
        values[i] = strcmp(t.params[i].name, "BREG") == 0 ? 0 : strcmp(t.params[i].name, "STAGES") == 0 ? 3 : t.params[i].def;
    plan_t p;
    if (template_plan(TREQ(&t, values, 90 + ARCH_SPECIFIC, 127, 129, 131), &p, &err))
        fail_msg("%s", err.text);
    assert_int_equal(p.nlaunches, 3);
    assert_string_equal(p.launches[0].kernel, "prep_a");
    assert_int_equal(p.launches[0].traffic, 127 * (131 + 2 * 132));
    assert_string_equal(p.launches[1].kernel, "prep_bt");
    assert_int_equal(p.launches[1].traffic, 129 * (131 + 2 * 132));
    assert_int_equal(p.launches[p.main_launch].traffic, -1);
    plan_free(&p);
    template_free(&t);
    const char *fmt = "/* engine:template\n{\"summary\": \"t\", \"dtypes\": [\"f32\"], \"params\": {\"B\": "
                      "{\"default\": 4}}, \"launches\": [{\"kernel\": \"pre\", \"grid\": [1, 1, 1], \"block\": [32, 1, 1], "
                      "\"traffic\": %s}, {\"kernel\": \"gemm\", \"grid\": [1, 1, 1], \"block\": [\"B\", 1, 1]}]}\n*/\n";
    struct {
        const char *traffic, *want;
        bool parse_fails;
        int64_t value;
    } cases[] = {
        {"\"M * K\"", NULL, false, 8 * 16},
        {"7", NULL, false, 7},
        {"[1]", "launches[0].traffic must be an expression (string or integer)", true, 0},
        {"\"M * Q\"", "launch traffic", false, 0},
        {"\"0 - M\"", "kernel pre's traffic is -8 elements; it must be 0 or more", false, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[768];
        snprintf(text, sizeof text, fmt, cases[i].traffic);
        err_clear(&err);
        int rc = template_parse("t", "t.cu", text, &t, &err);
        if (cases[i].parse_fails) {
            assert_int_not_equal(rc, 0);
            assert_int_equal(err.code, EXIT_INPUT);
            assert_int_equal(err.line, 2);
        } else {
            if (rc)
                fail_msg("%s", err.text);
            int64_t x[1] = {32};
            rc = template_plan(TREQ(&t, x, 90, 8, 8, 16), &p, &err);
            if (!cases[i].want) {
                if (rc)
                    fail_msg("case %zu: %s", i, err.text);
                assert_int_equal(p.launches[0].traffic, cases[i].value);
                assert_int_equal(p.launches[1].traffic, -1);
            } else {
                assert_int_not_equal(rc, 0);
            }
            plan_free(&p);
            template_free(&t);
        }
        if (cases[i].want && !strstr(err.text, cases[i].want))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.text, cases[i].want);
    }
}

/* The model's "turns" (tiles a block works on at once: hws's PINGPONG) reaches the plan as an
 * expression over the params, 1 without it; fewer than 1 is refused by the plan, naming it. */
static void test_model_turns(void **state)
{
    (void)state;
    err_t err;
    err_clear(&err);
    template_t t;
    if (template_load("hws", &t, &err))
        fail_msg("%s", err.text);
    int64_t values[32];
    for (int pp = 0; pp < 2; pp++) {
        for (size_t i = 0; i < t.nparams; i++)
            values[i] = strcmp(t.params[i].name, "PINGPONG") == 0 ? pp : t.params[i].def;
        plan_t p;
        plan_req *rq = TREQ(&t, values, 90 + ARCH_SPECIFIC, 4096, 4096, 4096);
        rq->dtype = DTYPE_BF16;
        if (template_plan(rq, &p, &err))
            fail_msg("%s", err.text);
        assert_int_equal(p.turns, pp ? 2 : 1); /* WGS 2 by default */
        plan_free(&p);
    }
    template_free(&t);
    const char *fmt = "/* engine:template\n{\"summary\": \"t\", \"dtypes\": [\"f32\"], \"params\": {\"B\": "
                      "{\"default\": 4}}, \"model\": {\"turns\": %s}, \"launches\": [{\"kernel\": \"gemm\", "
                      "\"grid\": [1, 1, 1], \"block\": [\"B\", 1, 1]}]}\n*/\n";
    const char *turns[] = {"\"B / 2\"", "\"B - 4\""};
    for (int i = 0; i < 2; i++) {
        char text[512];
        snprintf(text, sizeof text, fmt, turns[i]);
        err_clear(&err);
        if (template_parse("t", "t.cu", text, &t, &err))
            fail_msg("%s", err.text);
        int64_t x[1] = {4};
        plan_t p;
        int rc = template_plan(TREQ(&t, x, 90, 8, 8, 16), &p, &err);
        if (i == 0) {
            if (rc)
                fail_msg("%s", err.text);
            assert_int_equal(p.turns, 2);
        } else {
            assert_int_not_equal(rc, 0);
            assert_non_null(strstr(err.text, "model turns"));
        }
        plan_free(&p); /* a refused plan too: what it made before the refusal (test_launch_traffic) */
        template_free(&t);
    }
}

/* tc32ws's tensor maps at a shape with odd rows (B packed into the workspace, PACKB) and the
 * persistent launch; a map the copy engine would refuse is refused by the plan, naming the map and
 * the rule; a malformed map or persistent flag by the parser, with file and line. */
static void test_tensor_maps(void **state)
{
    (void)state;
    err_t err;
    err_clear(&err);
    template_t t;
    if (template_load("tc32ws", &t, &err))
        fail_msg("%s", err.text);
    int64_t values[32];
    for (size_t i = 0; i < t.nparams; i++)
        values[i] = t.params[i].def;
    plan_t p;
    if (template_plan(TREQ(&t, values, 90 + ARCH_SPECIFIC, 127, 129, 131), &p, &err))
        fail_msg("%s", err.text);
    const int64_t kp = 132, m = 127;
    assert_int_equal(p.ntmaps, 8);
    assert_false(p.tmaps[5].on || p.tmaps[6].on || p.tmaps[7].on); /* BREG 1: B from registers */
    assert_true(p.tmaps[0].on); /* A rounded into W (APRE 1) */
    assert_int_equal(p.tmaps[0].tensor, 'W');
    assert_int_equal(p.tmaps[0].dims[0], kp);
    assert_int_equal(p.tmaps[0].dims[1], m);
    assert_int_equal(p.tmaps[0].box[1], 128);
    assert_false(p.tmaps[1].on); /* A as stored: APRE 0 only */
    assert_true(p.tmaps[2].on);  /* A's remainder after the rounded part */
    assert_int_equal(p.tmaps[2].offset, m * kp);
    assert_false(p.tmaps[3].on); /* B's rows of 129 floats are not 16-byte aligned: packed */
    assert_true(p.tmaps[4].on);
    assert_int_equal(p.tmaps[4].offset, 2 * m * kp);
    assert_int_equal(p.tmaps[4].dims[0], 129);
    assert_int_equal(p.tmaps[4].strides[0], 132);
    assert_int_equal(p.workspace, 2 * m * kp + 131 * 132);
    assert_int_equal(p.nlaunches, 3);
    assert_string_equal(p.launches[1].kernel, "prep_b");
    assert_true(p.launches[2].persistent);
    assert_false(p.launches[0].persistent);
    plan_free(&p);
    /* Aligned rows: B straight from its own buffer. */
    if (template_plan(TREQ(&t, values, 90 + ARCH_SPECIFIC, 128, 256, 64), &p, &err))
        fail_msg("%s", err.text);
    assert_true(p.tmaps[3].on);
    assert_false(p.tmaps[4].on);
    assert_int_equal(p.tmaps[3].tensor, 'B');
    assert_int_equal(p.nlaunches, 2);
    plan_free(&p);
    template_free(&t);

    const char *fmt = "/* engine:template\n{\"summary\": \"t\", \"dtypes\": [\"f32\"], \"params\": {\"X\": "
                      "{\"default\": 32}}, \"launches\": [{\"kernel\": \"gemm\", \"grid\": [1, 1, 1], "
                      "\"block\": [32, 1, 1]%s}],\n\"tensor_maps\": [%s]}\n*/\n";
    struct {
        const char *launch, *map, *want;
        bool parse_fails;
    } cases[] = {
        {"", "{\"tensor\": \"X\", \"dims\": [1, 1, 1], \"strides\": [4, 4], \"box\": [1, 1, 1]}",
         "tensor must be \"A\", \"B\", \"C\" or \"W\"", true},
        {"", "{\"tensor\": \"A\", \"dims\": [1, 1], \"strides\": [4, 4], \"box\": [1, 1, 1]}",
         "dims must be an array of 3 expressions", true},
        {"", "{\"tensor\": \"A\", \"dims\": [\"K\", \"M\", 1], \"strides\": [\"K\", 4], \"box\": [4, 8, 1], \"swizzle\": 64}",
         "unknown key \"swizzle\"", true},
        {", \"persistent\": 1", "", "persistent must be true or false", true},
        {"", "{\"tensor\": \"A\", \"dims\": [\"K\", \"M\", 1], \"strides\": [\"K\", 4], \"box\": [\"X * 2\", 8, 1]}",
         "the box's inner dimension must fit the 128-byte swizzle span", false},
        {"", "{\"tensor\": \"A\", \"dims\": [\"K\", \"M\", 1], \"strides\": [\"K + 1\", 4], \"box\": [32, 8, 1]}",
         "each stride must be a positive multiple of 16 bytes", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, fmt, cases[i].launch, cases[i].map);
        err_clear(&err);
        int rc = template_parse("t", "t.cu", text, &t, &err);
        if (cases[i].parse_fails) {
            assert_int_not_equal(rc, 0);
            assert_int_equal(err.code, EXIT_INPUT);
            if (err.line < 2)
                fail_msg("case %zu: line %d: %s", i, err.line, err.text);
        } else {
            if (rc)
                fail_msg("%s", err.text);
            int64_t x[1] = {32};
            rc = template_plan(TREQ(&t, x, 90, 64, 64, 64), &p, &err);
            plan_free(&p);
            template_free(&t);
            assert_int_not_equal(rc, 0);
            assert_non_null(strstr(err.text, "tensor map 0 of template t"));
        }
        if (!strstr(err.text, cases[i].want))
            fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.text, cases[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_blocktile),
        cmocka_unit_test(test_plan_walk_steps),
        cmocka_unit_test(test_plan_splitk_launches),
        cmocka_unit_test(test_plan_idx64),
        cmocka_unit_test(test_plan_refusals),
        cmocka_unit_test(test_compile_cost),
        cmocka_unit_test(test_shared_rules),
        cmocka_unit_test(test_rules_invalid),
        cmocka_unit_test(test_pdl),
        cmocka_unit_test(test_pdl_modes),
        cmocka_unit_test(test_tensor_maps),
        cmocka_unit_test(test_launch_traffic),
        cmocka_unit_test(test_model_turns),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
