/* test_plan_layout.c — plans in a layout (template_plan_layout): the names expressions see, the
 * switches naive pastes, the batch on grid z, and the tile templates' declared refusals. */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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
    assert_int_equal(template_plan(&t, "t.cu", "t", values, DTYPE_F32, 90, 8, 12, 16, 232448, &p, &err), 0);
    assert_string_equal(p.switches, "S_T=0 S_LD=16012012 S_P=1 S_B=1 S_S=0 S_AL=444");
    plan_free(&p);
    /* TN, lda padded by 1 (A stored 16 x 8, ld 9), a batch of 3 with packed strides, doubles. */
    layout_t l;
    layout_packed(&l, 1, 0, 8, 12, 16, 3);
    l.lda = 9;
    l.sa = 16 * 9;
    layout_align al;
    layout_align_ld(&l, 8, &al);
    assert_int_equal(template_plan_layout(&t, "t.cu", "t", values, DTYPE_F64, 90, 8, 12, 16, &l, &al, 232448, &p, &err), 0);
    assert_string_equal(p.switches, "S_T=10 S_LD=9012012 S_P=0 S_B=3 S_S=432 S_AL=122");
    assert_int_equal(p.launches[0].grid[2], 3);
    assert_int_equal(p.lay.lda, 9);
    assert_int_equal(p.align.a, 1);
    plan_free(&p);
    template_free(&t);
}

static config_t g_cfg;

/* Plan configs/NAME.json for M x N x K in layout l; returns template_plan_layout's result. */
static int plan(const char *name, int64_t M, int64_t N, int64_t K, const layout_t *l, plan_t *p, err_t *err)
{
    char path[128];
    snprintf(path, sizeof path, "configs/%s.json", name);
    if (config_load(path, NULL, 0, NULL, 90, &g_cfg, err) != 0)
        fail_msg("%s: %s", path, err->text);
    layout_align al;
    layout_align_ld(l, dtype_size(g_cfg.dtype), &al);
    return template_plan_layout(&g_cfg.tpl, g_cfg.path, g_cfg.name, g_cfg.values, g_cfg.dtype, 90, M, N, K, l, &al,
                                232448, p, err);
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

/* The tile templates take strided batches of packed NN products (grid z) and refuse what their
 * loaders cannot do yet, by the rules they declare; split-K and stream-K take no batch. */
static void test_tile_layouts(void **state)
{
    (void)state;
    const char *names[] = {"warptile_db", "dgemm_dmma", "gmem_vec"};
    const char *tpl[] = {"warptile", "dmma", "blocktile"};
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
        for (int c = 0; c < 2; c++) {
            layout_packed(&l, c == 0, 0, 64, 64, 64, 1);
            if (c == 1)
                l.ldb = 65;
            err_clear(&err);
            assert_int_not_equal(plan(names[i], 64, 64, 64, &l, &p, &err), 0);
            assert_int_equal(err.code, EXIT_INPUT);
            char want[160];
            snprintf(want, sizeof want, "is refused: template %s requires TA == 0 && TB == 0 && LD_PACKED (", tpl[i]);
            assert_non_null(strstr(err.text, want));
            assert_non_null(strstr(err.text, c == 0 ? "op TN lda=64" : "ldb=65"));
            done(&p);
        }
    }
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
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_naive),
        cmocka_unit_test(test_tile_layouts),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
