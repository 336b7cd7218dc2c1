/* test_plan_layout.c — plans in a layout (plan_target's lay and align): the names expressions see, the
 * switches naive pastes, the batch on grid z, and the tile templates' declared refusals. */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "config.h"
#include "template.h"

static int setup(void **state)
{
    (void)state;
    use_repo_templates();
    return 0;
}

/* Every layout name, pasted through switches of a template of our own. */
static void test_names(void **state)
{
    (void)state;
    const char *text =
        "/* engine:template\n{\"summary\": \"t\", \"dtypes\": [\"f32\", \"f64\"], \"params\": {\"B\": {\"default\": 4}},"
        " \"switches\": {\"S_T\": \"TA * 10 + TB\", \"S_LD\": \"LDA * 1000000 + LDB * 1000 + LDC\","
        " \"S_P\": \"LD_PACKED\", \"S_B\": \"BATCH\", \"S_S\": \"SA + SB + SC\","
        " \"S_AL\": \"ALIGN_A * 100 + ALIGN_B * 10 + ALIGN_C\"},"
        " \"launches\": [{\"kernel\": \"gemm\", \"grid\": [1, 1, \"BATCH\"], \"block\": [\"B\", 1, 1]}]}\n*/\n";
    err_t err;
    err_clear(&err);
    template_t t;
    if (template_parse("t", "t.cu", text, &t, &err))
        fail_msg("%s", err.text);
    int64_t values[1] = {4};
    plan_t p;
    /* Packed NN, one product: strides are not the kernel's business (0). */
    assert_int_equal(template_plan(&(plan_req){.tpl = &t,
                                               .label = "t.cu",
                                               .config_name = "t",
                                               .values = values,
                                               .dtype = DTYPE_F32,
                                               .to = {.arch = 90, .smem_limit = 232448, .M = 8, .N = 12, .K = 16}},
                                   &p, &err),
                     0);
    assert_string_equal(p.switches, "S_T=0 S_LD=16012012 S_P=1 S_B=1 S_S=0 S_AL=444");
    plan_free(&p);
    /* TN, lda padded by 1 (A stored 16 x 8, ld 9), a batch of 3 with packed strides, doubles. */
    layout_t l;
    layout_packed(&l, 1, 0, 8, 12, 16, 3);
    l.lda = 9;
    l.sa = 16 * 9;
    layout_align al;
    layout_align_ld(&l, 8, &al);
    plan_req r = {.tpl = &t,
                  .label = "t.cu",
                  .config_name = "t",
                  .values = values,
                  .dtype = DTYPE_F64,
                  .to = {.arch = 90, .smem_limit = 232448, .M = 8, .N = 12, .K = 16, .lay = &l, .align = &al}};
    assert_int_equal(template_plan(&r, &p, &err), 0);
    assert_string_equal(p.switches, "S_T=10 S_LD=9012012 S_P=0 S_B=3 S_S=432 S_AL=122");
    assert_int_equal(p.launches[0].grid[2], 3);
    assert_int_equal(p.lay.lda, 9);
    assert_int_equal(p.align.a, 1);
    plan_free(&p);
    template_free(&t);
}

static config_t g_cfg;

/* Plan configs/NAME.json, with the override SET ("KEY=VALUE", or NULL), for M x N x K in layout l;
 * returns template_plan's result. */
static int plan_set(const char *name, const char *set, int64_t M, int64_t N, int64_t K, const layout_t *l, plan_t *p,
                    err_t *err)
{
    char path[128];
    snprintf(path, sizeof path, "configs/%s.json", name);
    param_set ps[4]; /* set: "KEY=VALUE[,KEY=VALUE...]" */
    size_t nps = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", set ? set : "");
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); set && tok && nps < 4; tok = strtok_r(NULL, ",", &save))
        if (param_set_parse(tok, &ps[nps++], err) != 0)
            fail_msg("%s: %s", tok, err->text);
    const int rc = config_load(path, nps ? ps : NULL, nps, NULL, 90, &g_cfg, err);
    for (size_t i = 0; i < nps; i++)
        param_set_free(&ps[i]);
    if (rc != 0)
        fail_msg("%s: %s", path, err->text);
    layout_align al;
    layout_align_ld(l, dtype_size(g_cfg.dtype), &al);
    plan_req r = config_plan_req(
        &g_cfg, &(plan_target){.arch = 90, .smem_limit = 232448, .M = M, .N = N, .K = K, .lay = l, .align = &al});
    return template_plan(&r, p, err);
}

static int plan(const char *name, int64_t M, int64_t N, int64_t K, const layout_t *l, plan_t *p, err_t *err)
{
    return plan_set(name, NULL, M, N, K, l, p, err);
}

static void done(plan_t *p)
{
    plan_free(p);
    config_free(&g_cfg);
}

/* naive takes every layout; at packed NN its switches are those of the code it always was. */
static void test_naive(void **state)
{
    (void)state;
    err_t err;
    err_clear(&err);
    plan_t p;
    layout_t l;
    layout_packed(&l, 0, 0, 17, 33, 5, 1);
    assert_int_equal(plan("naive", 17, 33, 5, &l, &p, &err), 0);
    assert_string_equal(p.switches, "OP_TA=0 OP_TB=0 LDP=1 BATCHED=0");
    assert_int_equal(p.launches[0].grid[2], 1);
    done(&p);
    const int ops[4][2] = {{0, 1}, {1, 0}, {1, 1}, {0, 0}};
    for (int i = 0; i < 4; i++) {
        layout_packed(&l, ops[i][0], ops[i][1], 17, 33, 5, 7);
        l.ldc = 40;
        l.sc = 17 * 40;
        assert_int_equal(plan("naive", 17, 33, 5, &l, &p, &err), 0);
        char want[64];
        snprintf(want, sizeof want, "OP_TA=%d OP_TB=%d LDP=0 BATCHED=1", ops[i][0], ops[i][1]);
        assert_string_equal(p.switches, want);
        assert_int_equal(p.launches[0].grid[2], 7);
        done(&p);
    }
}

/* The tile templates take strided batches (grid z) and every op. */
static void test_tile_layouts(void **state)
{
    (void)state;
    const char *names[] = {"warptile_db", "dgemm_dmma", "gmem_vec"};
    for (int i = 0; i < 3; i++) {
        err_t err;
        plan_t p;
        layout_t l;
        layout_packed(&l, 0, 0, 64, 64, 64, 1);
        err_clear(&err);
        assert_int_equal(plan(names[i], 64, 64, 64, &l, &p, &err), 0); /* packed NN plans */
        assert_non_null(strstr(p.switches, "BATCHED=0"));
        assert_int_equal(p.launches[p.main_launch].grid[2], 1);
        done(&p);
        layout_packed(&l, 0, 0, 64, 64, 64, 9);
        l.sa = 5000; /* padded strides */
        assert_int_equal(plan(names[i], 64, 64, 64, &l, &p, &err), 0);
        assert_non_null(strstr(p.switches, "BATCHED=1"));
        assert_int_equal(p.launches[p.main_launch].grid[2], 9);
        assert_int_equal(p.nlaunches, 1); /* no pack_b, no scale_c */
        done(&p);
        /* Every op plans, its transposes pasted (OP_TA, OP_TB) and rows packed (LDP 1). */
        for (int op = 1; op < 4; op++) {
            layout_packed(&l, op >> 1, op & 1, 64, 64, 64, 1);
            assert_int_equal(plan(names[i], 64, 64, 64, &l, &p, &err), 0);
            char want[64];
            snprintf(want, sizeof want, "OP_TA=%d OP_TB=%d LDP=1", op >> 1, op & 1);
            assert_non_null(strstr(p.switches, want));
            done(&p);
        }
    }
}

/* The value of switch NAME in a plan's switches text (-1 when absent). */
static long sw(const plan_t *p, const char *name)
{
    char key[40];
    snprintf(key, sizeof key, " %s=", name);
    char text[1024];
    snprintf(text, sizeof text, " %s", p->switches);
    const char *at = strstr(text, key);
    return at ? strtol(at + strlen(key), NULL, 10) : -1;
}

/* The vector switches follow the dimension a transposed operand's rows run along (A's along M,
 * B's along K) and the leading dimensions' alignment; PACK_B is off where B is transposed. */
static void test_tile_transposed(void **state)
{
    (void)state;
    err_t err;
    err_clear(&err);
    plan_t p;
    layout_t l;
    /* warptile_db at 63x64x64: NN reads A along K (64: vectors), TN along M (63: scalars). At
     * 64x63x64 NN packs B first (PACK_B 3: N not a multiple of 4, K is); NT reads B along K (64:
     * vectors) and never packs it. */
    const struct {
        int ta, tb, M, N;
        const char *sw;
        long want;
    } cases[] = {{0, 0, 63, 64, "EVEC_A", 4}, {1, 0, 63, 64, "EVEC_A", 1}, {1, 0, 63, 64, "EVEC_B", 4},
                 {0, 0, 64, 63, "PACKB", 1},  {0, 1, 64, 63, "PACKB", 0},  {0, 1, 64, 63, "EVEC_B", 4}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        layout_packed(&l, cases[i].ta, cases[i].tb, cases[i].M, cases[i].N, 64, 1);
        assert_int_equal(plan("warptile_db", cases[i].M, cases[i].N, 64, &l, &p, &err), 0);
        if (sw(&p, cases[i].sw) != cases[i].want)
            fail_msg("case %zu: %s = %ld, expected %ld (%s)", i, cases[i].sw, sw(&p, cases[i].sw), cases[i].want,
                     p.switches);
        if (cases[i].tb)
            assert_int_equal(p.nlaunches, 1); /* no pack_b launch */
        done(&p);
    }
    /* Padded rows: LDP 0; by 1 no operand is aligned to a vector, by 8 every one is. */
    const int pads[2] = {1, 8}, vec[2] = {1, 4};
    for (int i = 0; i < 2; i++) {
        layout_packed(&l, 1, 1, 64, 64, 64, 1);
        l.lda += pads[i];
        l.ldb += pads[i];
        l.ldc += pads[i];
        assert_int_equal(plan("warptile_db", 64, 64, 64, &l, &p, &err), 0);
        assert_int_equal(sw(&p, "LDP"), 0);
        assert_int_equal(sw(&p, "EVEC_A"), vec[i]);
        assert_int_equal(sw(&p, "EVEC_B"), vec[i]);
        assert_int_equal(sw(&p, "EVEC_C"), vec[i]);
        done(&p);
    }
    /* dgemm_dmma keeps a transposed A k-major: BK x (BM + PAD_A) per stage, not BM x (BK + PAD_A). */
    layout_packed(&l, 0, 0, 64, 64, 64, 1);
    assert_int_equal(plan("dgemm_dmma", 64, 64, 64, &l, &p, &err), 0);
    const int64_t smem_nn = p.launches[p.main_launch].smem;
    done(&p);
    layout_packed(&l, 1, 0, 64, 64, 64, 1);
    assert_int_equal(plan("dgemm_dmma", 64, 64, 64, &l, &p, &err), 0);
    /* 3 stages x (16 x 68 - 64 x 20) doubles */
    assert_int_equal(p.launches[p.main_launch].smem - smem_nn, 3 * (16 * 68 - 64 * 20) * 8);
    done(&p);
}

/* The switches chosen by layout for a transposed B and narrowed rows: dgemm_dmma keeps B n-major
 * in f64 (BN x (BK + PAD_B) per stage) unless BT_NMAJOR 0, FP32's dmma keeps it k-major; its
 * STAGES_NARROW and ODD_LD act only where rows are narrowed (ld + 1, not ld + 8); warptile's
 * PAD_BT pads B's rows only where B is transposed. */
static void test_tile_b_transposed(void **state)
{
    (void)state;
    err_t err;
    err_clear(&err);
    plan_t p;
    layout_t l;
    int64_t smem[2][2]; /* [config][tb] */
    const char *names[2] = {"dgemm_dmma", "tc32_sync"};
    for (int c = 0; c < 2; c++)
        for (int tb = 0; tb < 2; tb++) {
            layout_packed(&l, 0, tb, 64, 64, 64, 1);
            assert_int_equal(plan(names[c], 64, 64, 64, &l, &p, &err), 0);
            smem[c][tb] = p.launches[p.main_launch].smem;
            done(&p);
        }
    assert_int_equal(smem[0][1] - smem[0][0], 3 * (64 * 20 - 16 * 68) * 8); /* 3 stages, doubles */
    assert_int_equal(smem[1][1], smem[1][0]);
    layout_packed(&l, 0, 1, 64, 64, 64, 1);
    assert_int_equal(plan_set("dgemm_dmma", "BT_NMAJOR=0", 64, 64, 64, &l, &p, &err), 0);
    assert_int_equal(p.launches[p.main_launch].smem, smem[0][0]);
    done(&p);

    const int pads[3] = {0, 1, 8}, want_stages[3] = {3, 4, 3};
    for (int i = 0; i < 3; i++) {
        layout_packed(&l, 0, 0, 64, 64, 64, 1);
        l.lda += pads[i];
        l.ldb += pads[i];
        l.ldc += pads[i];
        /* PACK_LD off: dgemm_dmma ships with it, and packed rows need no narrower stages */
        assert_int_equal(plan_set("dgemm_dmma", "STAGES_NARROW=4,PACK_LD=0", 64, 64, 64, &l, &p, &err), 0);
        if (sw(&p, "PSTAGES") != want_stages[i])
            fail_msg("ld + %d: PSTAGES = %ld, expected %d (%s)", pads[i], sw(&p, "PSTAGES"), want_stages[i], p.switches);
        assert_int_equal(p.launches[p.main_launch].smem, smem[0][0] / 3 * want_stages[i]);
        done(&p);
    }
    /* K odd narrows A's rows at packed NN too; the config as shipped never deepens. */
    layout_packed(&l, 0, 0, 64, 64, 63, 1);
    assert_int_equal(plan_set("dgemm_dmma", "STAGES_NARROW=4", 64, 64, 63, &l, &p, &err), 0);
    assert_int_equal(sw(&p, "PSTAGES"), 4);
    done(&p);
    assert_int_equal(plan("dgemm_dmma", 64, 64, 63, &l, &p, &err), 0);
    assert_int_equal(sw(&p, "PSTAGES"), 3);
    done(&p);
    /* STAGES_NARROW needs the cp.async pipeline. */
    const char *sets[3] = {"STAGES_NARROW=4", "ASYNC=0", "STAGES=2"};
    param_set ps[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(param_set_parse(sets[i], &ps[i], &err), 0);
    assert_int_not_equal(config_load("configs/dgemm_dmma.json", ps, 3, NULL, 90, &g_cfg, &err), 0);
    assert_non_null(strstr(err.text, "STAGES_NARROW == 0 || ASYNC == 1"));
    for (int i = 0; i < 3; i++)
        param_set_free(&ps[i]);

    /* ODD_LD's copies apply in f64 where rows are narrowed: ld + 1, or K odd packed; not at ld + 8. */
    const struct {
        const char *name;
        int pad, K, want;
    } odd[] = {{"dgemm_dmma", 1, 64, 1}, {"dgemm_dmma", 0, 63, 1}, {"dgemm_dmma", 8, 64, 0}, {"dgemm_dmma", 0, 64, 0},
               {"tc32_sync", 1, 64, 0}};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        layout_packed(&l, 0, 0, 64, 64, odd[i].K, 1);
        l.lda += odd[i].pad;
        l.ldb += odd[i].pad;
        l.ldc += odd[i].pad;
        /* PACK_LD off (dgemm_dmma ships with it): packed copies leave no row to narrow */
        assert_int_equal(plan_set(odd[i].name, "ODD_LD=1,PACK_LD=0", 64, 64, odd[i].K, &l, &p, &err), 0);
        if (sw(&p, "ODD_ROWS") != odd[i].want)
            fail_msg("case %zu: ODD_ROWS = %ld, expected %d (%s)", i, sw(&p, "ODD_ROWS"), odd[i].want, p.switches);
        done(&p);
    }

    /* PACK_LD packs a matrix whose rows are not 16-byte aligned (ld + 1) but of even length, one
     * product, no split: a pack_ld launch first, A then B in the workspace (A rounded to 2
     * elements), full-width copies after it. Not at ld + 8, not where K is odd (A's rows) or N is
     * (B's), not for a batch, not where K = 0 (nothing to pack: no launch of 0 blocks). */
    const struct {
        int tb, pad, N, K, batch, pa, pb;
    } pk[] = {{0, 1, 64, 64, 1, 1, 1}, {1, 1, 64, 64, 1, 1, 1}, {0, 8, 64, 64, 1, 0, 0}, {0, 1, 64, 63, 1, 0, 1},
              {0, 1, 63, 64, 1, 1, 0}, {0, 1, 64, 64, 2, 0, 0}, {0, 1, 64, 0, 1, 0, 0}};
    for (size_t i = 0; i < sizeof pk / sizeof pk[0]; i++) {
        const int M = 48;
        layout_packed(&l, 0, pk[i].tb, M, pk[i].N, pk[i].K, pk[i].batch);
        l.lda += pk[i].pad;
        l.ldb += pk[i].pad;
        l.ldc += pk[i].pad;
        if (pk[i].batch > 1) {
            l.sa = (int64_t)l.lda * M;
            l.sb = (int64_t)l.ldb * (pk[i].tb ? pk[i].N : pk[i].K);
            l.sc = (int64_t)l.ldc * M;
        }
        assert_int_equal(plan_set("dgemm_dmma", "PACK_LD=1", M, pk[i].N, pk[i].K, &l, &p, &err), 0);
        if (sw(&p, "PACKLD_A") != pk[i].pa || sw(&p, "PACKLD_B") != pk[i].pb)
            fail_msg("case %zu: PACKLD_A %ld, PACKLD_B %ld, expected %d, %d (%s)", i, sw(&p, "PACKLD_A"),
                     sw(&p, "PACKLD_B"), pk[i].pa, pk[i].pb, p.switches);
        const int64_t ws = (pk[i].pa ? (M * pk[i].K + 1) / 2 * 2 : 0) + (pk[i].pb ? pk[i].K * pk[i].N : 0);
        assert_int_equal(p.workspace, ws);
        const bool packs = pk[i].pa || pk[i].pb;
        assert_int_equal(p.nlaunches, packs ? 2 : 1);
        assert_string_equal(p.launches[0].kernel, packs ? "pack_ld" : "gemm");
        if (pk[i].pa)
            assert_int_equal(sw(&p, "EVEC_A"), 2);
        if (pk[i].pb)
            assert_int_equal(sw(&p, "EVEC_B"), 2);
        done(&p);
    }

    for (int tb = 0; tb < 2; tb++) {
        layout_packed(&l, 0, tb, 128, 128, 64, 1);
        assert_int_equal(plan_set("warptile_db", "PAD_BT=4", 128, 128, 64, &l, &p, &err), 0);
        assert_int_equal(sw(&p, "B_PAD"), tb ? 4 : 0);
        done(&p);
    }
}

/* Split-K and stream-K take every op and padded A and B, but not a padded C (their scale_c,
 * reduce and workspace index C packed), nor a batch. */
static void test_tile_split_layouts(void **state)
{
    (void)state;
    const char *split[] = {"warptile_splitk", "dgemm_dmma_splitk", "warptile_streamk"};
    for (int i = 0; i < 3; i++) {
        err_t err;
        err_clear(&err);
        plan_t p;
        layout_t l;
        layout_packed(&l, 0, 0, 64, 64, 4096, 2);
        assert_int_not_equal(plan(split[i], 64, 64, 4096, &l, &p, &err), 0);
        assert_non_null(strstr(err.text, "requires BATCH == 1 || (SPLITK == 1 && STREAMK == 0) (a batch takes grid z"));
        done(&p);
        layout_packed(&l, 1, 1, 64, 64, 4096, 1);
        l.lda += 1;
        l.ldb += 8;
        assert_int_equal(plan(split[i], 64, 64, 4096, &l, &p, &err), 0);
        done(&p);
        l.ldc += 1;
        err_clear(&err);
        assert_int_not_equal(plan(split[i], 64, 64, 4096, &l, &p, &err), 0);
        assert_int_equal(err.code, EXIT_INPUT);
        assert_int_equal(err.cause, ERR_UNSUPPORTED); /* the library's ENGINE_ERROR_NOT_SUPPORTED */
        assert_non_null(strstr(err.text, "ldc=65 is refused: template"));
        assert_non_null(strstr(err.text, "requires LDC == N || (SPLITK == 1 && STREAMK == 0) (split-K's"));
        done(&p);
    }
}

/* A plan says whether its kernels keep state between launches (the template's "stream_state":
 * serial split-K's tile counters), which the library reads instead of the switches' text. */
static void test_stream_state(void **state)
{
    (void)state;
    const struct {
        const char *name, *set;
        bool want;
    } cases[] = {
        {"dgemm_dmma_splitk", "SPLITK=4,SPLITK_MODE=2", true},
        {"dgemm_dmma_splitk", "SPLITK=4,SPLITK_MODE=0", false},
        {"warptile_splitk", "SPLITK=4,SPLITK_MODE=2", true},
        {"warptile_splitk", "SPLITK=1", false},
        {"naive", NULL, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        err_t err;
        err_clear(&err);
        plan_t p;
        layout_t l;
        layout_packed(&l, 0, 0, 256, 256, 4096, 1);
        assert_int_equal(plan_set(cases[i].name, cases[i].set, 256, 256, 4096, &l, &p, &err), 0);
        if (p.stream_state != cases[i].want)
            fail_msg("%s %s: stream_state %d", cases[i].name, cases[i].set ? cases[i].set : "", p.stream_state);
        done(&p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_naive),
        cmocka_unit_test(test_tile_layouts),
        cmocka_unit_test(test_tile_transposed),
        cmocka_unit_test(test_tile_b_transposed),
        cmocka_unit_test(test_tile_split_layouts),
        cmocka_unit_test(test_stream_state),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
