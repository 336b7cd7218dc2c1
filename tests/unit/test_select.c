/* The selection model (select.h) on the shipped H100 wisdom, without a GPU: what it estimates moves
 * the way tiles, waves and depth say it must, the suite's own shapes go to their entries, and the
 * user's wisdom comes first (a damaged user file is reported and left out). */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "arch.h"
#include "pickcmd.h"
#include "select.h"
#include "util.h"
#include "wisdom.h"

static char g_dir[64];

static int setup(void **state)
{
    (void)state;
    use_repo_templates();
    snprintf(g_dir, sizeof g_dir, "/tmp/engine-select-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    setenv("XDG_DATA_HOME", g_dir, 1); /* no user wisdom unless a test writes some */
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static opts_t opts(const char *dtype)
{
    opts_t o;
    memset(&o, 0, sizeof o);
    o.arch = 0; /* guessed, as on the H100 without --arch: tc32 entries load for sm_90a */
    o.dtype = dtype;
    o.wisdom = "wisdom";
    o.device_name = "NVIDIA H100 80GB HBM3";
    o.sms = 132;
    return o;
}

/* The index of the candidate whose entry is (dtype of the pick) at this shape, one product. */
static size_t cand_at(const pick_t *p, int64_t m, int64_t n, int64_t k)
{
    for (size_t c = 0; c < p->sel.ncands; c++) {
        const shape_t *s = &p->sel.cands[c].entry->shape;
        if (s->m == m && s->n == n && s->k == k && wisdom_batch(p->sel.cands[c].entry) == 1)
            return c;
    }
    fail_msg("no entry at %lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
    return 0;
}

/* The first candidate labelled exactly label (a config without overrides), one product. */
static size_t cand_label(const pick_t *p, const char *label)
{
    for (size_t c = 0; c < p->sel.ncands; c++)
        if (strcmp(p->sel.cands[c].label, label) == 0 && wisdom_batch(p->sel.cands[c].entry) == 1)
            return c;
    fail_msg("no candidate %s", label);
    return 0;
}

static void test_suite_shapes_are_exact(void **state)
{
    (void)state;
    const char *dts[] = {"f32", "f64"};
    for (int d = 0; d < 2; d++) {
        opts_t o = opts(dts[d]);
        pick_t p;
        err_t err;
        err_clear(&err);
        assert_int_equal(pickcmd_init(&p, &o, NULL, 0, &err), 0);
        assert_true(p.sel.ncands >= 26);
        for (size_t c = 0; c < p.sel.ncands; c++) {
            const select_cand *x = &p.sel.cands[c];
            if (!x->loaded)
                fail_msg("%s: %s", x->label, x->err_text);
            assert_false(x->occ_estimated); /* the shipped entries carry their measured occupancy */
            /* eff is FLOP/s over the FMA (or tensor) peak, 1.5 the cap where the model is slower than the
             * entry. A matrix times a few vectors (gemv.cu) does 2 flops per element of the long operand
             * it reads, so memory holds it at 1-5% of that peak: its floor is lower. */
            const double floor = strcmp(x->cfg.tpl.name, "gemv") == 0 ? 0.005 : 0.05;
            assert_true(x->eff > floor && x->eff <= 1.5);
            select_result r;
            assert_int_equal(select_pick_batch(&p.sel, &x->entry->shape, wisdom_batch(x->entry), &r), 0);
            assert_true(r.exact);
            assert_int_equal(r.chosen, c);
        }
        pick_free(&p);
    }
}

/* Entries that share a config and its overrides share one loaded config (select.c, same_config):
 * the shipped H100 wisdom has hundreds of entries over a few dozen configs. Each shared one is the
 * first such candidate's config, with the same label, and every candidate is still fitted at its
 * own entry. */
static void test_entries_share_loaded_configs(void **state)
{
    (void)state;
    opts_t o = opts("f64");
    pick_t p;
    err_t err;
    err_clear(&err);
    assert_int_equal(pickcmd_init(&p, &o, NULL, 0, &err), 0);
    size_t own = 0;
    for (size_t c = 0; c < p.sel.ncands; c++) {
        const select_cand *x = &p.sel.cands[c];
        assert_true(x->loaded);
        if (!x->cfg_shared) {
            own++;
            continue;
        }
        size_t j = 0;
        while (j < c && p.sel.cands[j].cfg.values != x->cfg.values)
            j++;
        assert_true(j < c);
        assert_false(p.sel.cands[j].cfg_shared);
        assert_string_equal(p.sel.cands[j].label, x->label);
        assert_string_equal(p.sel.cands[j].path, x->path);
        double t = select_estimate_batch(&p.sel, c, &x->entry->shape, wisdom_batch(x->entry));
        assert_true(x->t_entry > 0 && (x->eff >= 1.5 || fabs(t / x->t_entry - 1) < 1e-3)); /* 1.5: the cap */
    }
    assert_true(own > 0 && own * 4 < p.sel.ncands);
    pick_free(&p);
}

static void test_estimates_follow_the_work(void **state)
{
    (void)state;
    opts_t o = opts("f32");
    pick_t p;
    err_t err;
    err_clear(&err);
    assert_int_equal(pickcmd_init(&p, &o, NULL, 0, &err), 0);
    /* tc32_3x: 128 x 128 tiles, one launch (4096^3's entry until 2026-11-28; tc32ws_3x's first launches
     * add their own traffic per product). */
    size_t big = cand_label(&p, "tc32_3x[SUPER=0]");
    /* At its own shape the model gives the entry's measured time (that is what eff is fitted to). */
    const select_cand *c = &p.sel.cands[big];
    double t = select_estimate(&p.sel, big, &c->entry->shape);
    assert_true(fabs(t / c->t_entry - 1) < 1e-6);
    /* Twice the depth, twice the time (near enough: the rounds' start-up stays). */
    shape_t a = {4096, 4096, 2048}, b = {4096, 4096, 4096};
    double ta = select_estimate(&p.sel, big, &a), tb = select_estimate(&p.sel, big, &b);
    assert_true(tb > 1.9 * ta && tb < 2.01 * ta);
    /* Waves: 264 tiles fill 132 SMs twice; one tile more needs a third round on one SM. */
    shape_t full = {128 * 12, 128 * 22, 4096}, over = {128 * 12 + 1, 128 * 22, 4096};
    double tf = select_estimate(&p.sel, big, &full), to = select_estimate(&p.sel, big, &over);
    assert_true(to > 1.3 * tf);
    /* A grid far below one block per SM is not faster per block: 4 tiles take most of the time 132 do. */
    shape_t few = {256, 256, 4096}, many = {128 * 12, 128 * 11, 4096};
    assert_true(select_estimate(&p.sel, big, &few) > 0.3 * select_estimate(&p.sel, big, &many));
    /* Products of a strided batch are blocks of one grid (grid z): the model counts every product's
     * tiles in its waves, and a batch of small products chooses a tile that a single one would not.
     * One 128 x 128 tile per product: 264 products fill 132 SMs twice, one more needs a third round,
     * as 264 tiles of one product do above. */
    const shape_t one = {128, 128, 4096};
    double t264 = select_estimate_batch(&p.sel, big, &one, 264), t265 = select_estimate_batch(&p.sel, big, &one, 265);
    assert_true(t265 > 1.3 * t264);
    /* A batch is not its products one after another: 132 products take about the time of one. */
    double t1 = select_estimate_batch(&p.sel, big, &one, 1), t132 = select_estimate_batch(&p.sel, big, &one, 132);
    assert_true(t132 < 2 * t1);
    assert_true(select_estimate(&p.sel, big, &one) == t1);
    /* Writing C is a batch's too: 8 products of 128 x 128 x 4096 are 8 blocks, one wave as one block
     * is, so the batch adds nothing but 7 more C's bytes at the DRAM rate (select.h's last term). */
    double t8 = select_estimate_batch(&p.sel, big, &one, 8);
    double c_bytes = (double)one.m * (double)one.n * (double)dtype_size(c->cfg.dtype);
    assert_true(fabs((t8 - t1) / (7 * c_bytes / p.sel.gpu.dram_bps) - 1) < 1e-6);
    /* 384 products of 128^3 (wisdom holds 512, not 384): a one-warp tile spreads one product
     * over the SMs, but the batch's blocks fill them with a 128 x 128 tile too, which is then
     * estimated faster; for one product it is the other way round. (Which entries are weighed depends on the wisdom's points; the
     * model's ordering does not.) */
    const shape_t sh = {128, 128, 128};
    size_t tiny = cand_at(&p, 64, 64, 64); /* warptile_splitk, 16 x 32, one warp */
    assert_true(select_estimate_batch(&p.sel, big, &sh, 1) > select_estimate_batch(&p.sel, tiny, &sh, 1));
    assert_true(select_estimate_batch(&p.sel, big, &sh, 384) < select_estimate_batch(&p.sel, tiny, &sh, 384));
    select_result r1, rb;
    assert_int_equal(select_pick_batch(&p.sel, &sh, 1, &r1), 0);
    assert_int_equal(select_pick_batch(&p.sel, &sh, 384, &rb), 0);
    assert_int_equal(r1.batch, 1);
    assert_int_equal(rb.batch, 384);
    assert_false(rb.exact);
    /* The entries nearest to a batch of 384 include split-K tiles, which refuse batches: they are
     * passed over, and the SELECT_K nearest that can run it are weighed instead. */
    assert_int_equal(rb.nw, SELECT_K);
    size_t passed_over = 0;
    for (size_t c = 0; c < p.sel.ncands; c++) {
        bool weighed = false;
        for (size_t j = 0; j < rb.nw; j++)
            weighed |= rb.w[j].cand == c;
        if (!weighed && select_distance(p.sel.cands[c].entry, &sh, 384) < rb.w[SELECT_K - 1].dist) {
            assert_true(select_estimate_batch(&p.sel, c, &sh, 384) < 0);
            passed_over++;
        }
    }
    for (size_t j = 0; j < rb.nw; j++)
        assert_true(rb.w[j].t_est >= 0);
    assert_true(passed_over > 0);
    char *ex = select_explain(&p.sel, &sh, &rb);
    assert_non_null(strstr(ex, "estimated at 128x128x128 batch 384 on 132 SMs"));
    free(ex);
    /* The distance has the batch as a fourth log coordinate. */
    wisdom_entry e;
    memset(&e, 0, sizeof e);
    e.shape = sh;
    e.batch = 64;
    assert_true(fabs(select_distance(&e, &sh, 512) - log(8)) < 1e-12);
    assert_true(fabs(select_distance(&e, &(shape_t){256, 128, 128}, 64) - log(2)) < 1e-12);
    pick_free(&p);
}

/* A persistent launch's grid is its work items: with split-K, K slices of each tile that the SMs run
 * side by side, and a block taking turns (hws's PINGPONG) works on that many items at once, each at
 * that share of its rate (select.c's model_time; session 18 measured what each got wrong). */
static void test_persistent_items_and_turns(void **state)
{
    (void)state;
    opts_t o = opts("bf16");
    pick_t p;
    err_t err;
    err_clear(&err);
    assert_int_equal(pickcmd_init(&p, &o, NULL, 0, &err), 0);
    /* 128 x 64 tiles, K in 16 slices: one tile is 16 items, one round on 132 SMs; 66 tiles are 1056
     * items, 8 rounds of a slice each. Counted as whole-K tiles the two took one round alike. */
    size_t split = cand_label(&p, "hws_bf16[BN=64,STAGES=6,SPLITK=16]");
    shape_t one = {128, 64, 32768}, wide = {128, 64 * 66, 32768};
    double t1 = select_estimate(&p.sel, split, &one), t66 = select_estimate(&p.sel, split, &wide);
    assert_true(t1 > 0 && t66 > 4 * t1);
    /* Turns: a lone 128 x 128 tile runs on one of the block's two consumer warpgroups, so 264 tiles
     * (two a block) take about what one does; shared tiles would take twice. */
    size_t turns = cand_label(&p, "hws_bf16[BN=128,PINGPONG=1,EPI=1]");
    shape_t tile = {128, 128, 4096}, two = {128 * 12, 128 * 22, 4096};
    double tt = select_estimate(&p.sel, turns, &tile), t264 = select_estimate(&p.sel, turns, &two);
    assert_true(tt > 0 && t264 < 1.3 * tt);
    pick_free(&p);
}

/* The launches besides the main one cost a launch each and their bytes at the DRAM rate: the elements
 * a launch's "traffic" gives (tc32ws's prep_a reads A and writes its two parts), else two a thread
 * (scale_c reads and writes C's elements). */
static void test_extra_launches(void **state)
{
    (void)state;
    opts_t o = opts("f32");
    pick_t p;
    err_t err;
    err_clear(&err);
    assert_int_equal(pickcmd_init(&p, &o, NULL, 0, &err), 0);
    const select_cand *c = &p.sel.cands[cand_label(&p, "tc32ws_3x[BM=64,STAGES=4,BREG=1,SPLITK=4]")];
    const int64_t m = 128, n = 4096, k = 4096;
    plan_req r = config_plan_req(&c->cfg, &(plan_target){.arch = c->cfg.arch, .smem_limit = p.sel.gpu.smem_limit,
                                                          .M = m, .N = n, .K = k});
    plan_t pl;
    if (template_plan_geometry(&r, &pl, &err))
        fail_msg("%s", err.text);
    assert_int_equal(pl.nlaunches, 3); /* prep_a, scale_c, gemm */
    double elems = (double)m * (k + 2 * k) + 2.0 * (double)(m * n / 256 * 256);
    double want = 2 * SELECT_T_LAUNCH + 4.0 * elems / p.sel.gpu.dram_bps;
    double got = select_extra_time(&p.sel.gpu, &pl);
    if (fabs(got / want - 1) > 1e-9)
        fail_msg("extra launches %.9g s, want %.9g", got, want);
    plan_free(&pl);
    pick_free(&p);
}

static void test_choices_and_explanations(void **state)
{
    (void)state;
    opts_t o = opts("f32");
    /* Not in wisdom: a square near the big ones, a deep-K thin one, a small one. */
    const shape_t shapes[] = {{3000, 3000, 3000}, {256, 192, 20000}, {100, 120, 90}};
    pick_t p;
    err_t err;
    err_clear(&err);
    assert_int_equal(pickcmd_init(&p, &o, shapes, 3, &err), 0);
    for (int s = 0; s < 3; s++) {
        assert_false(p.result[s].exact);
        assert_int_equal(p.result[s].nw, SELECT_K);
        assert_non_null(strstr(p.why[s], ", model: "));
        assert_non_null(strstr(p.explain[s], "chosen: "));
        /* The winner has the lowest score (estimate discounted by distance) of those weighed. */
        double best = -1;
        for (size_t j = 0; j < p.result[s].nw; j++)
            if (p.result[s].w[j].cand == p.result[s].chosen)
                best = select_score(&p.result[s].w[j]);
        assert_true(best > 0);
        for (size_t j = 0; j < p.result[s].nw; j++)
            assert_true(p.result[s].w[j].t_est < 0 || select_score(&p.result[s].w[j]) >= best);
    }
    /* The big square runs a big tile; the deep thin shape splits K. */
    assert_int_equal(p.sel.cands[p.result[0].chosen].cfg.values[template_param_index(&p.sel.cands[p.result[0].chosen].cfg.tpl, "BM")], 128);
    const config_t *deep = &p.sel.cands[p.result[1].chosen].cfg;
    assert_true(deep->values[template_param_index(&deep->tpl, "SPLITK")] > 1 ||
                deep->values[template_param_index(&deep->tpl, "SLICEK")] > 1);
    pick_free(&p);
}

/* The user's H100 wisdom file holding one f32 entry of warptile_db: `members` are the entry's
 * other members ("batch", "shape", "set", ...). Returns its path. */
static char *write_user_entry(const char *members)
{
    char dir[128], parent[128];
    snprintf(parent, sizeof parent, "%s/engine", g_dir);
    snprintf(dir, sizeof dir, "%s/engine/wisdom", g_dir);
    mkdir(parent, 0755);
    mkdir(dir, 0755);
    char *path = xasprintf("%s/nvidia-h100-80gb-hbm3.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"version\": 1, \"device\": \"NVIDIA H100 80GB HBM3\", \"arch\": \"sm_90\", \"entries\": [\n"
               "  {\"dtype\": \"f32\", \"config\": \"%s/configs/warptile_db.json\", %s}\n]}\n",
            getenv("PWD") ? getenv("PWD") : ".", members);
    fclose(f);
    return path;
}

static void test_user_wisdom_first(void **state)
{
    (void)state;
    /* The user's entry at a shape the shipped file also holds wins there. */
    char *path = write_user_entry("\"shape\": \"4096x4096x4096\", \"set\": {\"BK\": 16}, \"tflops\": 47, \"vs_cublas\": 0.91");
    FILE *f;
    opts_t o = opts("f32");
    const shape_t s = {4096, 4096, 4096};
    pick_t p;
    err_t err;
    err_clear(&err);
    assert_int_equal(pickcmd_init(&p, &o, &s, 1, &err), 0);
    assert_true(p.result[0].exact);
    assert_string_equal(p.sel.cands[p.result[0].chosen].file->path, path);
    assert_int_equal(p.entries[p.of_shape[0]].nsets, 1);
    pick_free(&p);
    /* A damaged user file is left out (and reported): the shipped entry answers again. */
    f = fopen(path, "w");
    fputs("{\"version\": 1, \"entries\": [ {\"dtype\": \"f32\", \"shape\": \"4096x\"}\n", f);
    fclose(f);
    err_clear(&err);
    assert_int_equal(pickcmd_init(&p, &o, &s, 1, &err), 0);
    assert_true(p.result[0].exact);
    assert_non_null(strstr(p.sel.cands[p.result[0].chosen].file->path, "wisdom/nvidia-h100-80gb-hbm3.json"));
    assert_int_equal(p.user.nfiles, 0);
    pick_free(&p);
    unlink(path);
    free(path);
}

/* An entry never measured (tflops 0) takes the efficiency its config and overrides were measured
 * at elsewhere among the candidates (select.c, lend_eff), and SELECT_EFF_UNKNOWN only where they
 * never were. bf16 on sm_90 with no device file of it: an unmeasured h04_tuned entry (as
 * default.json's) beside a measured one (as sm_90.json's, 0.27): before, the guess 0.5 made it win
 * shapes where it ran 0.18x cuBLAS. On sm_86 f32 no entry is measured: each keeps the guess. */
static void test_unmeasured_entries_borrow(void **state)
{
    (void)state;
    /* An arch-level file of its own (the shipped one's bf16 entries are enough to keep default.json's
     * unmeasured h04_tuned out): the same config measured at 2048^3 and unmeasured (tflops 0) at 4096^3. */
    char dir[160];
    snprintf(dir, sizeof dir, "%s/borrow-wisdom", g_dir);
    mkdir(dir, 0755);
    char *path = xasprintf("%s/sm_90.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"version\": 1, \"arch\": \"sm_90\", \"entries\": [\n"
          "  {\"dtype\": \"bf16\", \"shape\": \"2048x2048x2048\", \"config\": \"configs/h04_tuned.json\", "
          "\"tflops\": 180.0, \"vs_cublas\": 0.26},\n"
          "  {\"dtype\": \"bf16\", \"shape\": \"4096x4096x4096\", \"config\": \"configs/h04_tuned.json\", "
          "\"tflops\": 0.0, \"vs_cublas\": 0.0}\n]}\n",
          f);
    fclose(f);
    opts_t o = opts("bf16");
    o.device_name = NULL;
    o.wisdom = dir;
    pick_t p;
    err_t err;
    err_clear(&err);
    assert_int_equal(pickcmd_init(&p, &o, NULL, 0, &err), 0);
    size_t unmeasured = 0, measured = 0;
    for (size_t c = 0; c < p.sel.ncands; c++) {
        const select_cand *x = &p.sel.cands[c];
        if (strcmp(x->label, "h04_tuned") != 0)
            continue;
        if (x->t_entry > 0)
            measured = c + 1;
        else
            unmeasured = c + 1;
    }
    assert_true(measured && unmeasured);
    const select_cand *m = &p.sel.cands[measured - 1], *u = &p.sel.cands[unmeasured - 1];
    assert_true(m->eff < 0.4); /* the premise: measured well under the guess */
    assert_true(fabs(u->eff - m->eff) < 1e-12);
    pick_free(&p);
    unlink(path);
    rmdir(dir);
    free(path);

    o = opts("f32");
    o.device_name = NULL;
    assert_int_equal(arch_parse("sm_86", &o.arch, &err), 0);
    err_clear(&err);
    assert_int_equal(pickcmd_init(&p, &o, NULL, 0, &err), 0);
    assert_true(p.sel.ncands >= 2);
    for (size_t c = 0; c < p.sel.ncands; c++) {
        assert_true(p.sel.cands[c].t_entry == 0);
        assert_true(p.sel.cands[c].eff == SELECT_EFF_UNKNOWN);
    }
    pick_free(&p);
}

/* An entry measured on a batch is exact at that shape and batch only; the shipped single-product
 * entry of the same shape still answers one product. */
static void test_batch_entry_exact(void **state)
{
    (void)state;
    char *path = write_user_entry("\"batch\": 512, \"shape\": \"256x256x256\", \"set\": {\"BM\": 64, \"BN\": 64, "
                                  "\"THREADS\": 64, \"MINB\": 8}, \"tflops\": 30, \"vs_cublas\": 0.95, \"occ\": 4");
    opts_t o = opts("f32");
    const shape_t s = {256, 256, 256};
    for (int64_t b = 1; b <= 1024; b *= 8) { /* 1, 8, 64, 512 */
        o.batch = b;
        pick_t p;
        err_t err;
        err_clear(&err);
        assert_int_equal(pickcmd_init(&p, &o, &s, 1, &err), 0);
        const select_cand *c = &p.sel.cands[p.result[0].chosen];
        if (b == 512) {
            assert_true(p.result[0].exact);
            assert_string_equal(c->file->path, path);
            assert_int_equal(c->entry->batch, 512);
            assert_non_null(strstr(p.why[0], "exact 256x256x256 batch 512"));
            assert_non_null(strstr(p.explain[0], "wisdom holds this shape batch 512"));
        } else if (b == 1) {
            assert_true(p.result[0].exact); /* the shipped 256^3 entry */
            assert_int_equal(wisdom_batch(c->entry), 1);
        } else {
            assert_false(p.result[0].exact);
        }
        pick_free(&p);
    }
    unlink(path);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suite_shapes_are_exact),
        cmocka_unit_test(test_entries_share_loaded_configs),
        cmocka_unit_test(test_estimates_follow_the_work),
        cmocka_unit_test(test_persistent_items_and_turns),
        cmocka_unit_test(test_extra_launches),
        cmocka_unit_test(test_choices_and_explanations),
        cmocka_unit_test(test_user_wisdom_first),
        cmocka_unit_test(test_batch_entry_exact),
        cmocka_unit_test(test_unmeasured_entries_borrow),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
