/* test_pick.c — what `--auto` runs: wisdom's choice per shape turned into the run's entries. No GPU
 * here, so the lookup goes by --arch (arch and default levels). */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/stat.h>

#include "config.h"
#include "pickcmd.h"
#include "select.h"
#include "util.h"
#include "template.h"
#include "wisdom.h"

static char g_dir[64];     /* a temporary root holding wisdom/ */
static char g_wisdom[128]; /* g_dir/wisdom */

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    use_repo_templates();
    snprintf(g_dir, sizeof g_dir, "/tmp/engine-pick-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    snprintf(g_wisdom, sizeof g_wisdom, "%s/wisdom", g_dir);
    mkdir(g_wisdom, 0755);
    /* Configs beside wisdom/ (cfg/), named relative to the directory above it as the shipped files
     * do: a small split-K warp tile, the big warp tile, the DMMA tile, copied from configs/. */
    char cfg[192];
    snprintf(cfg, sizeof cfg, "%s/cfg", g_dir);
    mkdir(cfg, 0755);
    const char *from[] = {"configs/warptile_splitk.json", "configs/warptile_db.json", "configs/dgemm_dmma.json"};
    const char *to[] = {"a.json", "b.json", "d.json"};
    for (int i = 0; i < 3; i++) {
        char *text = read_file(from[i], NULL);
        assert_non_null(text);
        write_file(cfg, to[i], text);
        free(text);
    }
    /* An arch-level file for sm_90: two shapes share one config and overrides, a third differs;
     * the times are of the order the H100 gives, which the selection model scales. */
    write_file(g_wisdom, "sm_90.json",
               "{\"version\": 1, \"arch\": \"sm_90\", \"entries\": [\n"
               "  {\"dtype\": \"f32\", \"shape\": \"64x64x64\", \"config\": \"cfg/a.json\", \"set\": {\"SPLITK\": 2}, \"tflops\": 0.05, \"vs_cublas\": 1},\n"
               "  {\"dtype\": \"f32\", \"shape\": \"4096x4096x4096\", \"config\": \"cfg/b.json\", \"tflops\": 46, \"vs_cublas\": 0.9, \"occ\": 2},\n"
               "  {\"dtype\": \"f32\", \"shape\": \"128x128x128\", \"config\": \"cfg/a.json\", \"set\": {\"SPLITK\": 2}, \"tflops\": 0.3, \"vs_cublas\": 1}\n"
               "]}\n");
    write_file(g_wisdom, "default.json",
               "{\"version\": 1, \"entries\": [\n"
               "  {\"dtype\": \"f64\", \"shape\": \"1024x1024x1024\", \"config\": \"cfg/d.json\", \"tflops\": 0, \"vs_cublas\": 0}\n"
               "]}\n");
    /* No user wisdom unless a test makes some. */
    char data[192];
    snprintf(data, sizeof data, "%s/data", g_dir);
    setenv("XDG_DATA_HOME", data, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static opts_t opts(int arch, const char *dtype, const char *wisdom)
{
    opts_t o;
    memset(&o, 0, sizeof o);
    o.arch = arch;
    o.dtype = dtype;
    o.wisdom = wisdom;
    return o;
}

static void test_choices_become_entries(void **state)
{
    (void)state;
    opts_t o = opts(90, NULL, g_wisdom);
    const shape_t shapes[] = {{64, 64, 64}, {4000, 4000, 4000}, {128, 128, 128}, {100, 100, 100}};
    pick_t p;
    err_t err;
    err_clear(&err);
    assert_int_equal(pickcmd_init(&p, &o, shapes, 4, &err), 0);
    /* Three shapes chose a.json with SPLITK=2 (one entry), one chose b.json. */
    assert_int_equal(p.nentries, 2);
    assert_int_equal(p.nshapes, 4);
    size_t a = p.of_shape[0], b = p.of_shape[1];
    assert_int_not_equal(a, b);
    assert_int_equal(p.of_shape[2], a);
    assert_int_equal(p.of_shape[3], a); /* the small tile, estimated faster at 100^3 */
    char want[256];
    snprintf(want, sizeof want, "%s/../cfg/a.json", g_wisdom);
    assert_string_equal(p.entries[a].path, want);
    assert_int_equal(p.entries[a].nsets, 1);
    assert_string_equal(p.entries[a].sets[0], "SPLITK=2");
    assert_int_equal(p.entries[b].nsets, 0);
    assert_non_null(strstr(p.why[0], "sm_90.json:2, arch, exact 64x64x64"));
    assert_non_null(strstr(p.why[1], "sm_90.json:3, arch, model: "));
    assert_non_null(strstr(p.why[1], "its own 4096x4096x4096"));
    assert_non_null(strstr(p.explain[1], "the 3 nearest entries"));
    assert_non_null(strstr(p.explain[0], "wisdom holds this shape"));
    assert_true(p.result[1].nw == 3 && !p.result[1].exact && p.result[0].exact);
    assert_string_equal(p.device, "");
    assert_true(pick_runs(&p, 0, a) && !pick_runs(&p, 0, b));
    assert_true(pick_runs(NULL, 0, b)); /* without a pick every entry runs everywhere */
    pick_free(&p);
}

/* Only entries of the problem's op are weighed, the NN ones where the level holds none (said in
 * op_note). */
static void test_op(void **state)
{
    (void)state;
    char dir[256];
    snprintf(dir, sizeof dir, "%s/wisdom-op", g_dir);
    mkdir(dir, 0755);
    write_file(dir, "sm_90.json",
               "{\"version\": 1, \"arch\": \"sm_90\", \"entries\": [\n"
               "  {\"dtype\": \"f32\", \"op\": \"TN\", \"shape\": \"4096x4096x4096\", \"config\": \"cfg/a.json\", \"tflops\": 1, \"vs_cublas\": 0.1},\n"
               "  {\"dtype\": \"f32\", \"shape\": \"4096x4096x4096\", \"config\": \"cfg/b.json\", \"tflops\": 46, \"vs_cublas\": 0.9}\n"
               "]}\n");
    const char *want[4] = {"b.json", "b.json", "a.json", "b.json"}; /* NN, NT (no entry: NN's), TN, TT */
    for (int op = 0; op < 4; op++) {
        opts_t o = opts(90, NULL, dir);
        o.ta = op >> 1;
        o.tb = op & 1;
        const shape_t s = {4096, 4096, 4096};
        pick_t p;
        err_t err;
        err_clear(&err);
        assert_int_equal(pickcmd_init(&p, &o, &s, 1, &err), 0);
        const char *path = p.entries[p.of_shape[0]].path;
        if (strcmp(path + strlen(path) - strlen(want[op]), want[op]) != 0)
            fail_msg("op %d chose %s, expected %s", op, path, want[op]);
        if (op == 1 || op == 3)
            assert_non_null(p.op_note && strstr(p.op_note, "weighed the NN entries"));
        else if (op == 2) /* one TN entry: weighed with NN's, and exact at its own shape */
            assert_non_null(p.op_note && strstr(p.op_note, "weighed with the NN entries"));
        else
            assert_null(p.op_note);
        pick_free(&p);
    }
}

/* An op with a few entries (fewer than PICK_OP_ENOUGH) has them weighed with the NN ones: a slow
 * TN entry tuned at one shape does not become the only candidate of every TN product, yet stays the
 * exact choice at its own shape, where the NN entry of that shape is not exact for TN. With
 * PICK_OP_ENOUGH entries of the op the NN ones are left out. */
static void test_op_few(void **state)
{
    (void)state;
    char dir[256];
    snprintf(dir, sizeof dir, "%s/wisdom-op-few", g_dir);
    mkdir(dir, 0755);
    write_file(dir, "sm_90.json",
               "{\"version\": 1, \"arch\": \"sm_90\", \"entries\": [\n"
               "  {\"dtype\": \"f32\", \"op\": \"TN\", \"shape\": \"64x64x65536\", \"config\": \"cfg/a.json\", \"tflops\": 0.5, \"vs_cublas\": 0.9},\n"
               "  {\"dtype\": \"f32\", \"shape\": \"64x64x65536\", \"config\": \"cfg/b.json\", \"tflops\": 0.4, \"vs_cublas\": 0.8},\n"
               "  {\"dtype\": \"f32\", \"shape\": \"4096x4096x4096\", \"config\": \"cfg/b.json\", \"tflops\": 46, \"vs_cublas\": 0.9}\n"
               "]}\n");
    opts_t o = opts(90, NULL, dir);
    o.ta = 1;
    const shape_t s[2] = {{4096, 4096, 4096}, {64, 64, 65536}};
    pick_t p;
    err_t err;
    err_clear(&err);
    assert_int_equal(pickcmd_init(&p, &o, s, 2, &err), 0);
    assert_int_equal(p.sel.ncands, 3);
    const char *big = p.entries[p.of_shape[0]].path, *gram = p.entries[p.of_shape[1]].path;
    if (strcmp(big + strlen(big) - 6, "b.json") != 0)
        fail_msg("TN 4096^3 chose %s: the NN entry there should win over the slow TN one", big);
    assert_false(p.result[0].exact); /* an NN entry is no exact witness for TN */
    if (strcmp(gram + strlen(gram) - 6, "a.json") != 0 || !p.result[1].exact)
        fail_msg("TN 64x64x65536 chose %s (exact %d): the TN entry of that shape is exact", gram, p.result[1].exact);
    pick_free(&p);
    /* PICK_OP_ENOUGH TN entries: the op's own alone. */
    strbuf sb;
    sb_init(&sb);
    sb_add(&sb, "{\"version\": 1, \"arch\": \"sm_90\", \"entries\": [\n");
    for (int i = 0; i < PICK_OP_ENOUGH; i++)
        sb_addf(&sb, "  {\"dtype\": \"f32\", \"op\": \"TN\", \"shape\": \"64x64x%d\", \"config\": \"cfg/a.json\", \"tflops\": 0.5, \"vs_cublas\": 0.9},\n",
                65536 + i);
    sb_add(&sb, "  {\"dtype\": \"f32\", \"shape\": \"4096x4096x4096\", \"config\": \"cfg/b.json\", \"tflops\": 46, \"vs_cublas\": 0.9}\n]}\n");
    char *text = sb_steal(&sb);
    write_file(dir, "sm_90.json", text);
    free(text);
    err_clear(&err);
    assert_int_equal(pickcmd_init(&p, &o, s, 1, &err), 0);
    assert_int_equal(p.sel.ncands, PICK_OP_ENOUGH);
    assert_null(p.op_note);
    pick_free(&p);
}

/* --auto-tune's list at a shape without an entry: the model's choice first, then variants of it a
 * step away (split depth, tile, stages) and the model's other candidates, each variant an entry of
 * the choice's config with one or two overrides changed, every one valid and distinct. */
static void test_tune_candidates(void **state)
{
    (void)state;
    opts_t o = opts(90, NULL, g_wisdom);
    const shape_t shapes[] = {{96, 96, 96}, {64, 64, 64}};
    pick_t p;
    err_t err;
    err_clear(&err);
    assert_int_equal(pickcmd_init(&p, &o, shapes, 2, &err), 0);
    assert_int_equal(pick_tune_candidates(&p, shapes, NULL), 0);
    assert_int_equal(p.ntune[1], 0); /* an exact entry: nothing to tune */
    assert_true(p.ntune[0] >= 3 && p.ntune[0] <= PICK_TUNE_MAX);
    const size_t chosen = p.of_shape[0];
    assert_int_equal(p.tune[0], chosen);
    const entry_t *c = &p.entries[chosen];
    int splitk_var = 0, other_cfg = 0;
    for (size_t k = 0; k < p.ntune[0]; k++) {
        const entry_t *e = &p.entries[p.tune[k]];
        for (size_t j = 0; j < k; j++)
            assert_true(p.tune[j] != p.tune[k]);
        if (strcmp(e->path, c->path) != 0) {
            other_cfg++;
            continue;
        }
        /* a variant: the choice's overrides with one value changed or added (two where a tile side
         * moves with its threads or warp tile) */
        size_t differ = 0;
        for (size_t i = 0; i < e->nsets; i++) {
            bool same = false;
            for (size_t j = 0; j < c->nsets; j++)
                same = same || strcmp(e->sets[i], c->sets[j]) == 0;
            differ += !same;
            if (!same && strncmp(e->sets[i], "SPLITK=", 7) == 0)
                splitk_var++;
        }
        assert_true(k == 0 ? differ == 0 : differ == 1 || differ == 2);
        assert_true(e->nsets >= c->nsets && e->nsets <= c->nsets + 2);
    }
    /* a.json (warptile_splitk, SPLITK=2) is the choice at 96^3: SPLITK 1, 4 and 8 are its variants */
    assert_true(strstr(c->path, "a.json") != NULL);
    assert_true(splitk_var >= 2);
    assert_true(other_cfg >= 1);
    /* every variant is a config the template accepts */
    for (size_t k = 0; k < p.ntune[0]; k++) {
        const entry_t *e = &p.entries[p.tune[k]];
        param_set ps[16];
        size_t n = 0;
        for (size_t i = 0; i < e->nsets && n < 16; i++)
            assert_int_equal(param_set_parse(e->sets[i], &ps[n++], &err), 0);
        config_t cfg;
        err_clear(&err);
        int rc = config_load(e->path, ps, n, NULL, 90, &cfg, &err);
        if (rc)
            fail_msg("tune entry %s: %s", e->path, err.text);
        config_free(&cfg);
        for (size_t i = 0; i < n; i++)
            param_set_free(&ps[i]);
    }
    pick_free(&p);
}

/* A user's device-level file of one TN entry (a first --auto-tune on a GPU whose shipped wisdom is
 * at the arch level) does not shadow the shipped arch level: an NT problem still finds candidates
 * (it failed with "no wisdom" before), and the TN entry is exact at its own shape. */
static void test_few_user_entries(void **state)
{
    (void)state;
    char data[256], dir[300];
    snprintf(data, sizeof data, "%s/data-few", g_dir);
    mkdir(data, 0755);
    snprintf(dir, sizeof dir, "%s/engine", data);
    mkdir(dir, 0755);
    snprintf(dir, sizeof dir, "%s/engine/wisdom", data);
    mkdir(dir, 0755);
    char cfg[300];
    snprintf(cfg, sizeof cfg, "%s/cfg/a.json", g_dir);
    char text[1024];
    snprintf(text, sizeof text,
             "{\"version\": 1, \"device\": \"Some GPU\", \"arch\": \"sm_90\", \"entries\": [\n"
             "  {\"dtype\": \"f32\", \"op\": \"TN\", \"shape\": \"96x96x50000\", \"config\": \"%s\", \"tflops\": 10, \"vs_cublas\": 1.2}\n"
             "]}\n", cfg);
    write_file(dir, "some-gpu.json", text);
    const char *old = getenv("XDG_DATA_HOME");
    char *keep = old ? strdup(old) : NULL;
    setenv("XDG_DATA_HOME", data, 1);
    opts_t o = opts(90, NULL, g_wisdom);
    o.device_name = "Some GPU";
    const shape_t s[2] = {{96, 96, 50000}, {4000, 4000, 4000}};
    pick_t p;
    err_t err;
    for (int op = 1; op <= 2; op++) {
        o.ta = op >> 1;
        o.tb = op & 1;
        err_clear(&err);
        if (pickcmd_init(&p, &o, s, 2, &err))
            fail_msg("op %d: %s", op, err.text);
        if (op == 2) {
            assert_true(p.result[0].exact);
            assert_non_null(strstr(p.entries[p.of_shape[0]].path, "a.json"));
            assert_non_null(strstr(p.why[0], "some-gpu.json:2, device, exact"));
        }
        assert_false(p.result[1].exact);
        if (op == 1 && (!strstr(p.why[1], "sm_90.json") || !strstr(p.why[1], ", arch, model")))
            fail_msg("NT at 4000^3: %s", p.why[1]);
        pick_free(&p);
    }
    if (keep) {
        setenv("XDG_DATA_HOME", keep, 1);
        free(keep);
    }
}

static void test_dtype_and_levels(void **state)
{
    (void)state;
    const shape_t s = {64, 64, 64};
    pick_t p;
    err_t err;
    /* f64 has no sm_90 entry: the default level answers. */
    opts_t o = opts(90, "f64", g_wisdom);
    err_clear(&err);
    assert_int_equal(pickcmd_init(&p, &o, &s, 1, &err), 0);
    assert_non_null(strstr(p.why[0], "default.json:2, default"));
    pick_free(&p);
    /* f32 on sm_86: no arch-level file for it and no f32 default: refused, naming dtype and shape. */
    o = opts(86, NULL, g_wisdom);
    err_clear(&err);
    assert_int_equal(pickcmd_init(&p, &o, &s, 1, &err), -1);
    assert_int_equal(err.code, EXIT_INPUT);
    assert_non_null(strstr(err.text, "no wisdom for f32 at 64x64x64"));
    assert_null(p.entries);
}

static void test_malformed_and_missing(void **state)
{
    (void)state;
    const shape_t s = {64, 64, 64};
    pick_t p;
    err_t err;
    /* A missing directory is empty wisdom: nothing to choose from. */
    opts_t o = opts(90, NULL, "/nonexistent/engine-wisdom");
    err_clear(&err);
    assert_int_equal(pickcmd_init(&p, &o, &s, 1, &err), -1);
    assert_non_null(strstr(err.text, "no wisdom for f32"));
    /* A malformed file stops everything, naming file:line:column; nothing leaks (LeakSanitizer). */
    char bad[192];
    snprintf(bad, sizeof bad, "%s/bad", g_dir);
    mkdir(bad, 0755);
    write_file(bad, "x.json", "{\"version\": 1, \"arch\": \"sm_90\", \"entries\": [\n  {\"dtype\": \"f16\"}]}\n");
    o = opts(90, NULL, bad);
    err_clear(&err);
    assert_int_equal(pickcmd_init(&p, &o, &s, 1, &err), -1);
    assert_int_equal(err.code, EXIT_INPUT);
    assert_non_null(strstr(err.source, "x.json"));
    assert_int_equal(err.line, 2);
    assert_null(p.device);
}

/* Every entry of the shipped wisdom still makes a valid config for its shape: the config with the
 * entry's overrides passes its template's constraints, and its plan (switches, launches, shared
 * memory against the H100's 227 KB) is accepted. A template parameter renamed or a constraint
 * tightened would otherwise only show when --auto picks the entry on a GPU. */
static void test_shipped_entries_plan(void **state)
{
    (void)state;
    wisdom_t w;
    assert_int_equal(load_shipped_wisdom(&w), 0);
    err_t err;
    err_clear(&err);
    size_t n = 0;
    for (size_t i = 0; i < w.nfiles; i++)
        for (size_t j = 0; j < w.files[i].nentries; j++, n++) {
            const wisdom_entry *e = &w.files[i].entries[j];
            const char *dt = dtype_name(e->dtype);
            config_t c;
            plan_t p;
            /* sm_90 guessed, as on the H100 without --arch: tc32 entries load for sm_90a */
            if (config_load_guess(e->config, e->sets, e->nsets, dt, 90, true, &c, &err))
                fail_msg("%s:%d: %s", w.files[i].path, e->line, err.text);
            plan_req r = config_plan_req(
                &c, &(plan_target){
                        .arch = c.arch, .smem_limit = 232448, .M = e->shape.m, .N = e->shape.n, .K = e->shape.k});
            if (template_plan(&r, &p, &err))
                fail_msg("%s:%d: %s", w.files[i].path, e->line, err.text);
            plan_free(&p);
            config_free(&c);
        }
    assert_true(n >= 52); /* the H100 file alone holds the 26 suite shapes in two dtypes */
    wisdom_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_choices_become_entries),
        cmocka_unit_test(test_op),
        cmocka_unit_test(test_op_few),
        cmocka_unit_test(test_tune_candidates),
        cmocka_unit_test(test_few_user_entries),
        cmocka_unit_test(test_dtype_and_levels),
        cmocka_unit_test(test_malformed_and_missing),
        cmocka_unit_test(test_shipped_entries_plan),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
