/* test_wisdom_align.c — wisdom entries carry the alignment class they were measured at ("align"):
 * read, checked and written back only where it is not the packed layout's; an exact choice has the
 * problem's class, and an entry of another class weighs less (select.c) without changing what a
 * packed problem picks from packed wisdom. The command line's --lda/--ldb/--ldc give the problem's
 * class (pick_init). No GPU. */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <sys/stat.h>

#include "layout.h"
#include "pickcmd.h"
#include "select.h"
#include "util.h"
#include "wisdom.h"

#define H100 "NVIDIA H100 80GB HBM3"

static char g_dir[64]; /* a temporary directory, removed afterwards */

static int setup(void **state)
{
    (void)state;
    use_repo_templates();
    snprintf(g_dir, sizeof g_dir, "/tmp/engine-align-XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void assert_align(const layout_align *al, int a, int b, int c)
{
    if (al->a != a || al->b != b || al->c != c)
        fail_msg("align %d,%d,%d, expected %d,%d,%d", al->a, al->b, al->c, a, b, c);
}

/* ---------------------------------------------------------------------------------------------- */

/* "align" read, resolved (absent: the packed layout's class at the entry's own shape, which an odd
 * K makes 1 for A), and written back only where it is not that: a file of entries without it
 * reads and writes as before, and one entry per (dtype, op, batch, class, shape). */
static void test_parse_and_write(void **state)
{
    (void)state;
    const char *text = "{\n"
                       "  \"version\": 1,\n"
                       "  \"device\": \"NVIDIA H100 80GB HBM3\",\n"
                       "  \"arch\": \"sm_90\",\n"
                       "  \"entries\": [\n"
                       "    {\"dtype\": \"f32\", \"shape\": \"4096x4096x4095\", \"config\": \"c.json\", \"tflops\": 40.0, \"vs_cublas\": 0.9},\n"
                       "    {\"dtype\": \"f32\", \"shape\": \"4096x4096x4096\", \"config\": \"c.json\", \"tflops\": 50.0, \"vs_cublas\": 0.9},\n"
                       "    {\"dtype\": \"f32\", \"align\": [1, 4, 4], \"shape\": \"4096x4096x4096\", \"config\": \"c.json\", \"tflops\": 44.0, \"vs_cublas\": 0.9},\n"
                       "    {\"dtype\": \"f64\", \"align\": [2, 2, 1], \"shape\": \"4096x4096x4096\", \"config\": \"d.json\", \"tflops\": 40.0, \"vs_cublas\": 0.9},\n"
                       "    {\"dtype\": \"f64\", \"op\": \"TN\", \"batch\": 8, \"align\": [2, 1, 2], \"shape\": \"512x512x512\", \"config\": \"d.json\", \"tflops\": 30.0, \"vs_cublas\": 0.9}\n"
                       "  ]\n"
                       "}\n";
    wisdom_t w;
    wisdom_init(&w);
    err_t err;
    err_clear(&err);
    int rc = wisdom_parse(&w, "w.json", text, strlen(text), &err);
    if (rc)
        err_print(stderr, &err);
    assert_int_equal(rc, 0);
    const wisdom_entry *e = w.files[0].entries;
    layout_align al;
    wisdom_align(&e[0], &al);
    assert_align(&al, 1, 4, 4); /* packed, K = 4095: A's rows are 4095 elements apart */
    assert_true(wisdom_align_packed(&e[0]));
    wisdom_align(&e[1], &al);
    assert_align(&al, 4, 4, 4);
    assert_true(wisdom_align_packed(&e[1]));
    wisdom_align(&e[2], &al);
    assert_align(&al, 1, 4, 4);
    assert_false(wisdom_align_packed(&e[2]));
    wisdom_align(&e[3], &al);
    assert_align(&al, 2, 2, 1); /* f64: 16 bytes are 2 elements */
    assert_false(wisdom_align_packed(&e[3]));
    wisdom_packed_align(&e[4], &al);
    assert_align(&al, 2, 2, 2);
    /* Written back as read: "align" where it is not the packed class, nothing where there is none. */
    char *again = wisdom_file_to_json(&w.files[0]);
    assert_non_null(again);
    assert_string_equal(again, text);
    free(again);
    /* An "align" equal to the packed class is that class: written without the key. */
    const char *same = "{\"version\": 1, \"arch\": \"sm_90\", \"entries\": [{\"dtype\": \"f32\", \"align\": [1, 4, 4], "
                       "\"shape\": \"4096x4096x4095\", \"config\": \"c.json\", \"tflops\": 1, \"vs_cublas\": 1}]}";
    wisdom_t w2;
    wisdom_init(&w2);
    assert_int_equal(wisdom_parse(&w2, "same.json", same, strlen(same), &err), 0);
    assert_true(wisdom_align_packed(&w2.files[0].entries[0]));
    again = wisdom_file_to_json(&w2.files[0]);
    assert_null(strstr(again, "align"));
    free(again);
    wisdom_free(&w2);
    wisdom_free(&w);
}

/* Every shipped wisdom file reads and writes back byte for byte: none holds "align", and the
 * packed class each entry resolves to is never written. */
static void test_shipped_unchanged(void **state)
{
    (void)state;
    wisdom_t w;
    assert_int_equal(load_shipped_wisdom(&w), 0);
    assert_true(w.nfiles >= 2);
    for (size_t i = 0; i < w.nfiles; i++) {
        char *text = read_file(w.files[i].path, NULL);
        char *again = wisdom_file_to_json(&w.files[i]);
        assert_non_null(text);
        if (strcmp(text, again) != 0)
            fail_msg("%s does not write back as it reads", w.files[i].path);
        assert_null(strstr(again, "\"align\""));
        for (size_t j = 0; j < w.files[i].nentries; j++)
            assert_true(wisdom_align_packed(&w.files[i].entries[j]));
        free(text);
        free(again);
    }
    wisdom_free(&w);
}

/* wisdom_record keys on the class: a class-1 winner is added beside the packed one, replaces only
 * a slower one of its own class, and an entry built in code with a class out of range is refused. */
static void test_record(void **state)
{
    (void)state;
    char *path = xasprintf("%s/rec/nvidia-h100-80gb-hbm3.json", g_dir);
    wisdom_entry e;
    memset(&e, 0, sizeof e);
    e.dtype = DTYPE_F32;
    e.shape = (shape_t){2048, 2048, 2048};
    e.config = "c.json";
    e.tflops = 40;
    e.vs_cublas = 0.9;
    err_t err;
    err_clear(&err);
    wisdom_outcome what = 0;
    assert_int_equal(wisdom_record(path, H100, 90, &e, &what, &err), 0); /* align all 0: packed */
    assert_int_equal(what, WISDOM_CREATED);
    wisdom_entry odd = e;
    odd.align = (layout_align){1, 4, 4};
    odd.tflops = 30;
    assert_int_equal(wisdom_record(path, H100, 90, &odd, &what, &err), 0);
    assert_int_equal(what, WISDOM_ADDED);
    odd.tflops = 20;
    assert_int_equal(wisdom_record(path, H100, 90, &odd, &what, &err), 0);
    assert_int_equal(what, WISDOM_KEPT);
    odd.tflops = 35;
    assert_int_equal(wisdom_record(path, H100, 90, &odd, &what, &err), 0);
    assert_int_equal(what, WISDOM_REPLACED);
    wisdom_entry packed = e; /* an explicit class equal to the packed one is the packed entry */
    packed.align = (layout_align){4, 4, 4};
    packed.tflops = 45;
    assert_int_equal(wisdom_record(path, H100, 90, &packed, &what, &err), 0);
    assert_int_equal(what, WISDOM_REPLACED);
    char *text = read_file(path, NULL);
    assert_non_null(strstr(text, "{\"dtype\": \"f32\", \"align\": [1, 4, 4], \"shape\": \"2048x2048x2048\", "
                                 "\"config\": \"c.json\", \"tflops\": 35.0,"));
    assert_non_null(strstr(text, "{\"dtype\": \"f32\", \"shape\": \"2048x2048x2048\", \"config\": \"c.json\", "
                                 "\"tflops\": 45.0,"));
    /* One shape: the class-1 entry before the best aligned one. */
    assert_true(strstr(text, "\"align\"") < strstr(text, "\"tflops\": 45.0"));
    free(text);
    wisdom_entry bad = e;
    bad.align = (layout_align){8, 4, 4};
    assert_int_equal(wisdom_record(path, H100, 90, &bad, &what, &err), -1);
    assert_non_null(strstr(err.text, "align 8,4,4: each must be a power of two from 1 to 4 (f32 elements)"));
    bad.dtype = DTYPE_F64;
    bad.align = (layout_align){4, 2, 2};
    err_clear(&err); /* the first error wins */
    assert_int_equal(wisdom_record(path, H100, 90, &bad, &what, &err), -1);
    if (!strstr(err.text, "align 4,2,2: each must be a power of two from 1 to 2 (f64 elements)"))
        fail_msg("%s", err.text);
    free(path);
}

/* ---------------------------------------------------------------------------------------------- */
/* Choosing                                                                                        */

/* A pick over g_dir/pick's wisdom for f32 NN at shapes, each of class al[i] (NULL: packed). */
static int pick_at(pick_t *p, const shape_t *shapes, size_t n, const layout_align *al)
{
    char *dir = xasprintf("%s/pick", g_dir);
    pick_params pp = {.probe = false, .arch = 90, .sms = 132, .device_name = H100, .dtype = DTYPE_F32,
                      .wisdom_dir = dir, .user_dir = "", .aligns = al};
    err_t err;
    err_clear(&err);
    int rc = pick_init_with(p, &pp, shapes, n, &err);
    if (rc)
        err_print(stderr, &err);
    free(dir);
    return rc;
}

static const layout_align *chosen_align(const pick_t *p, size_t s)
{
    return &p->sel.cands[p->result[s].chosen].align;
}

static void write_pick_wisdom(const char *entries)
{
    char *dir = xasprintf("%s/pick", g_dir);
    mkdir(dir, 0755);
    char *path = xasprintf("%s/nvidia-h100-80gb-hbm3.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"version\": 1, \"device\": \"%s\", \"arch\": \"sm_90\", \"entries\": [\n%s\n]}\n", H100, entries);
    fclose(f);
    free(path);
    free(dir);
}

/* An ld + 1 problem (class 1 for A) takes the entry tuned at its class over the packed one at the
 * same shape, exactly; a packed problem takes the packed entry and passes the class-1 one over. */
static void test_exact_needs_the_class(void **state)
{
    (void)state;
    write_pick_wisdom(
        "  {\"dtype\": \"f32\", \"shape\": \"4096x4096x4096\", \"config\": \"configs/warptile_db.json\", \"tflops\": 46, \"vs_cublas\": 0.9, \"occ\": 2},\n"
        "  {\"dtype\": \"f32\", \"align\": [1, 4, 4], \"shape\": \"4096x4096x4096\", \"config\": \"configs/naive.json\", \"tflops\": 2, \"vs_cublas\": 0.1}");
    const shape_t sh[] = {{4096, 4096, 4096}, {4096, 4096, 4096}, {4096, 4096, 4096}};
    const layout_align al[] = {{1, 4, 4}, {4, 4, 4}, {4, 4, 1}};
    pick_t p;
    assert_int_equal(pick_at(&p, sh, 3, al), 0);
    assert_true(p.result[0].exact);
    assert_align(chosen_align(&p, 0), 1, 4, 4);
    assert_non_null(strstr(p.why[0], "naive"));
    assert_non_null(strstr(p.why[0], "exact 4096x4096x4096 align 1,4,4"));
    assert_non_null(strstr(p.explain[0], "wisdom holds this shape align 1,4,4"));
    assert_true(p.result[1].exact);
    assert_align(chosen_align(&p, 1), 4, 4, 4);
    assert_non_null(strstr(p.why[1], "warptile_db"));
    /* C padded: no entry of that class; both weighed, each with the operands that differ. */
    assert_false(p.result[2].exact);
    assert_int_equal(p.result[2].nw, 2);
    for (size_t j = 0; j < 2; j++) {
        const select_weighed *w = &p.result[2].w[j];
        assert_int_equal(w->align_off, p.sel.cands[w->cand].align.a == 4 ? 1 : 2);
    }
    assert_non_null(strstr(p.explain[2], "align 4,4,1 on 132 SMs"));
    assert_non_null(strstr(p.explain[2], "(2 off)"));
    pick_free(&p);
    /* No class given: each shape's packed one. */
    assert_int_equal(pick_at(&p, sh, 1, NULL), 0);
    assert_true(p.result[0].exact);
    assert_align(chosen_align(&p, 0), 4, 4, 4);
    pick_free(&p);
}

/* Away from any exact entry, two entries of one config and one measured speed differ only in their
 * class: the problem's class decides, both ways. Packed wisdom alone gives an ld + 1 problem the
 * choice the packed problem gets, and a packed problem at an odd K (class 1 from its own rows)
 * counts no operand against packed entries measured at even shapes. */
static void test_weighing(void **state)
{
    (void)state;
    write_pick_wisdom(
        "  {\"dtype\": \"f32\", \"shape\": \"2048x2048x2048\", \"config\": \"configs/warptile_db.json\", \"tflops\": 40, \"vs_cublas\": 0.9, \"occ\": 2},\n"
        "  {\"dtype\": \"f32\", \"align\": [1, 4, 4], \"shape\": \"2048x2048x2048\", \"config\": \"configs/warptile_db.json\", \"tflops\": 40, \"vs_cublas\": 0.9, \"occ\": 2},\n"
        "  {\"dtype\": \"f32\", \"shape\": \"256x256x256\", \"config\": \"configs/warptile_splitk.json\", \"tflops\": 5.0, \"vs_cublas\": 0.9}");
    const shape_t sh[] = {{3000, 3000, 3000}, {3000, 3000, 3000}};
    const layout_align al[] = {{1, 4, 4}, {4, 4, 4}};
    pick_t p;
    assert_int_equal(pick_at(&p, sh, 2, al), 0);
    assert_false(p.result[0].exact || p.result[1].exact);
    assert_align(chosen_align(&p, 0), 1, 4, 4);
    assert_align(chosen_align(&p, 1), 4, 4, 4);
    pick_free(&p);

    write_pick_wisdom(
        "  {\"dtype\": \"f32\", \"shape\": \"2048x2048x2048\", \"config\": \"configs/warptile_db.json\", \"tflops\": 40, \"vs_cublas\": 0.9, \"occ\": 2},\n"
        "  {\"dtype\": \"f32\", \"shape\": \"256x256x256\", \"config\": \"configs/warptile_splitk.json\", \"tflops\": 5.0, \"vs_cublas\": 0.9}");
    const shape_t many[] = {{3000, 3000, 3000}, {300, 300, 300}, {1000, 700, 500}, {64, 64, 64}};
    layout_align odd[4];
    for (size_t s = 0; s < 4; s++)
        odd[s] = (layout_align){1, 4, 4};
    pick_t packed, padded;
    assert_int_equal(pick_at(&packed, many, 4, NULL), 0);
    assert_int_equal(pick_at(&padded, many, 4, odd), 0);
    for (size_t s = 0; s < 4; s++) {
        assert_int_equal(packed.result[s].chosen, padded.result[s].chosen);
        assert_int_equal(padded.result[s].w[0].align_off, 1);
        assert_int_equal(packed.result[s].w[0].align_off, 0);
    }
    pick_free(&packed);
    pick_free(&padded);
    const shape_t oddk = {3000, 3000, 2999};
    assert_int_equal(pick_at(&packed, &oddk, 1, NULL), 0);
    assert_true(packed.result[0].align_packed);
    assert_int_equal(packed.result[0].align.a, 1);
    for (size_t j = 0; j < packed.result[0].nw; j++)
        assert_int_equal(packed.result[0].w[j].align_off, 0);
    assert_null(strstr(packed.explain[0], "align"));
    pick_free(&packed);
}

/* The score: (1 + SELECT_ALIGN_PENALTY) for each operand whose class counts against it. */
static void test_score(void **state)
{
    (void)state;
    select_weighed w = {0, 0.5, 1e-3, 0};
    double base = select_score(&w);
    assert_true(fabs(base - 1.5e-3) < 1e-15);
    w.align_off = 3;
    assert_true(fabs(select_score(&w) - base * (1 + 3 * SELECT_ALIGN_PENALTY)) < 1e-15);
    select_cand c;
    memset(&c, 0, sizeof c);
    c.align = c.align_pk = (layout_align){4, 4, 4}; /* measured packed at an even shape */
    const layout_align ones = {1, 1, 1}, fours = {4, 4, 4}, twos = {2, 2, 2};
    /* A packed problem whose odd rows give class 1: the model's plan at its shape sees that. */
    assert_int_equal(select_align_operands(&c, &ones, &ones), 0);
    /* --lda +1 --ldc +1 at 4096^3: A and C. */
    assert_int_equal(select_align_operands(&c, &(layout_align){1, 4, 1}, &fours), 2);
    /* --lda +1 at 70^3 (rows of 70 elements: class 2 packed): only A, not what 70 does to B and C. */
    assert_int_equal(select_align_operands(&c, &(layout_align){1, 2, 2}, &twos), 1);
    /* Measured at 4 where its packed layout gave A 1 (an odd K with --lda padded to a multiple of 4). */
    c.align_pk = (layout_align){1, 4, 4};
    assert_int_equal(select_align_operands(&c, &fours, &fours), 0);
    assert_int_equal(select_align_operands(&c, &ones, &ones), 1);
    assert_int_equal(select_align_operands(&c, &(layout_align){4, 2, 4}, &fours), 1);
}

/* The command line's options give the class: --lda +1 at 4096^3 is A's 1, through pick_init. */
static void test_options(void **state)
{
    (void)state;
    write_pick_wisdom(
        "  {\"dtype\": \"f32\", \"shape\": \"4096x4096x4096\", \"config\": \"configs/warptile_db.json\", \"tflops\": 46, \"vs_cublas\": 0.9, \"occ\": 2},\n"
        "  {\"dtype\": \"f32\", \"align\": [1, 4, 4], \"shape\": \"4096x4096x4096\", \"config\": \"configs/naive.json\", \"tflops\": 2, \"vs_cublas\": 0.1}");
    setenv("XDG_DATA_HOME", g_dir, 1); /* no user wisdom there */
    err_t err;
    err_clear(&err);
    opts_t o;
    memset(&o, 0, sizeof o);
    o.arch = 90;
    o.device_name = H100;
    o.wisdom = xasprintf("%s/pick", g_dir);
    o.stride[0] = o.stride[1] = o.stride[2] = -1;
    o.ld[0] = 1; /* --lda +1 */
    o.ld_plus[0] = true;
    const shape_t sh = {4096, 4096, 4096};
    pick_t p;
    assert_int_equal(pickcmd_init(&p, &o, &sh, 1, &err), 0);
    assert_true(p.result[0].exact);
    assert_align(&p.result[0].align, 1, 4, 4);
    assert_non_null(strstr(p.why[0], "naive"));
    pick_free(&p);
    o.ld[0] = 8; /* +8 keeps 16-byte rows: the packed class */
    assert_int_equal(pickcmd_init(&p, &o, &sh, 1, &err), 0);
    assert_true(p.result[0].exact && p.result[0].align_packed);
    assert_non_null(strstr(p.why[0], "warptile_db"));
    pick_free(&p);
    free((char *)o.wisdom);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_and_write), cmocka_unit_test(test_shipped_unchanged),
        cmocka_unit_test(test_record),          cmocka_unit_test(test_exact_needs_the_class),
        cmocka_unit_test(test_weighing),        cmocka_unit_test(test_score),
        cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
