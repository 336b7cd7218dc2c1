/* test_pick_oom.c — a context's first pick when the host runs out of memory: pick_init_with as the
 * library calls it (no shapes, apiplan_pick) over a small wisdom (tests/fixtures/wisdom_oom: a user
 * directory and a shipped one, every level, two configs with overrides), with its nth try_*
 * allocation failing for n = 0, 1, ... (util_try_fail_after; jansson's too, through
 * json_set_alloc_funcs as test_api_oom does). Each failure is ERR_ALLOC, never a pick made from
 * fewer candidates (a config that did not load for lack of memory used to be left out of the
 * candidates for good), nor a crash or a leak (the ASan build), until the pick succeeds and is the
 * one made with memory to spare. The command's pick (shapes given) and --auto-tune's candidates
 * under the same sweep: core hands their failures back too, where it used to stop the process.
 * No GPU. */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "pick.h"
#include "util.h"

#define H100 "NVIDIA H100 80GB HBM3"
#define FIXTURE "tests/fixtures/wisdom_oom"

/* The pick of the fixture's wisdom at the n shapes (none: the library's). */
static int pick_at(pick_t *p, const shape_t *shapes, size_t n, err_t *err)
{
    pick_params pp = {.probe = false, .arch = 90, .arch_guessed = true, .device_name = H100, .dtype = DTYPE_F32,
                      .batch = 1, .wisdom_dir = FIXTURE "/shipped", .user_dir = FIXTURE "/user"};
    err_clear(err);
    return pick_init_with(p, &pp, shapes, n, err);
}

static int pick_fixture(pick_t *p, err_t *err) { return pick_at(p, NULL, 0, err); }

/* The candidates of p as text, one line each: label, loaded or why not. */
static char *cands_text(const pick_t *p)
{
    strbuf sb;
    sb_init(&sb);
    for (size_t c = 0; c < p->sel.ncands; c++)
        sb_addf(&sb, "%s %s %s\n", p->sel.cands[c].label, p->sel.cands[c].loaded ? "loaded" : "left out:",
                p->sel.cands[c].err_text);
    return sb_steal(&sb);
}

/* The model's choice at each of a few shapes, as labels. */
static char *choices_text(const pick_t *p)
{
    static const shape_t shapes[] = {{1000, 1000, 1000}, {64, 64, 64}, {32, 4096, 4096}, {96, 160, 200}, {4096, 4096, 4096}};
    strbuf sb;
    sb_init(&sb);
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        select_result r;
        if (select_pick_in(&p->sel, &shapes[s], 1, NULL, NULL, &r))
            sb_add(&sb, "none\n");
        else
            sb_addf(&sb, "%s\n", p->sel.cands[r.chosen].label);
    }
    return sb_steal(&sb);
}

static void *jansson_try_malloc(size_t n) { return try_malloc(n); }

/* pick(p) with its nth try_* allocation failing, for n = 0, 1, ... until it succeeds (p then holds
 * that pick): each failure ERR_ALLOC "no host memory ...", its text a line of *seen (sb_init'd
 * here). Returns n. */
static int sweep(int (*pick)(pick_t *, err_t *), pick_t *p, strbuf *seen)
{
    err_t err;
    sb_init(seen);
    int n = 0;
    for (;; n++) {
        util_try_fail_after(n);
        int rc = pick(p, &err);
        util_try_fail_after(-1);
        if (rc == 0)
            break;
        if (err.cause != ERR_ALLOC || !strstr(err.text, "no host memory"))
            fail_msg("allocation %d: %s: %s: %s", n, err_cause_name(err.cause), err.source, err.text);
        sb_addf(seen, "%s\n", err.text);
        assert_true(n < 100000);
    }
    return n;
}

static void test_pick_out_of_memory(void **state)
{
    (void)state;
    pick_t p;
    err_t err;
    assert_int_equal(pick_fixture(&p, &err), 0);
    char *want = cands_text(&p), *want_choice = choices_text(&p);
    pick_free(&p);
    /* every entry of f32 at every level, both configs loaded */
    assert_non_null(strstr(want, "warptile_db loaded"));
    assert_non_null(strstr(want, "warptile_splitk[BM=16,BN=32,BK=32,WM=16,WN=32,WNITER=1,TM=2,TN=4,THREADS=32"));

    json_set_alloc_funcs(jansson_try_malloc, free);
    strbuf seen;
    int n = sweep(pick_fixture, &p, &seen);
    json_set_alloc_funcs(malloc, free);
    char *got = cands_text(&p), *got_choice = choices_text(&p);
    pick_free(&p);
    assert_string_equal(got, want);
    assert_string_equal(got_choice, want_choice);
    free(got), free(got_choice), free(want), free(want_choice);
    /* the sites: listing and reading both directories, the wisdom's own strings, the candidates and
     * the pick's tables, and a candidate's config (its JSON, through jansson) */
    static const char *const sites[] = {"to list the user's wisdom directory", "for a user wisdom file's path",
                                        "to list the wisdom directory", "for a wisdom file's path",
                                        "to read the wisdom file", "to parse the JSON", "for the wisdom file's device",
                                        "for the wisdom file's entries", "for the wisdom entry's config",
                                        "for the wisdom entry's overrides", "for the wisdom entry's source",
                                        "for the list of wisdom files", "for the wisdom candidates",
                                        "for a candidate's label", "for the pick's tables",
                                        /* a candidate's config and its template (config.c, template*.c, expr.c) */
                                        "to read the config", "for the config's text", "for the config's name",
                                        "for the config's values", "for the config's overrides", "for the config's label",
                                        "for the template's path", "to read the template", "for the template's name",
                                        "for the template's parameter block", "for the template's summary",
                                        "for the template's parameters", "for a template parameter's name",
                                        "for a template parameter's doc", "for a template parameter's values",
                                        "for the template's named expressions", "for a template expression's name",
                                        "for a template expression", "for the template's rules",
                                        "for a template rule's text", "for the shared rules' path",
                                        "to read the shared rules", "for a launch's kernel name",
                                        "for the template's compiled expressions", NULL};
    int missing = 0;
    for (const char *const *s = sites; *s; s++)
        if (!strstr(seen.buf, *s))
            print_error("no failure \"%s\" in the sweep of %d\n", *s, n), missing++;
    if (missing)
        fail_msg("%d sites not reached; the sweep's failures:\n%s", missing, seen.buf);
    sb_free(&seen);
}

/* The library's default user wisdom (user_dir NULL: $XDG_DATA_HOME/engine/wisdom, there none):
 * its name is try_* memory too, and the sweep reaches it. */
static void test_user_dir_out_of_memory(void **state)
{
    (void)state;
    const char *old = getenv("XDG_DATA_HOME");
    char *keep = old ? strdup(old) : NULL;
    setenv("XDG_DATA_HOME", "/nonexistent/engine-oom", 1);
    pick_params pp = {.probe = false, .arch = 90, .arch_guessed = true, .device_name = H100, .dtype = DTYPE_F32,
                      .batch = 1, .wisdom_dir = FIXTURE "/shipped", .user_dir = NULL};
    strbuf seen;
    sb_init(&seen);
    pick_t p;
    err_t err;
    for (int n = 0;; n++) {
        err_clear(&err);
        util_try_fail_after(n);
        int rc = pick_init_with(&p, &pp, NULL, 0, &err);
        util_try_fail_after(-1);
        if (rc == 0)
            break;
        if (err.cause != ERR_ALLOC)
            fail_msg("allocation %d: %s: %s", n, err.source, err.text);
        sb_addf(&seen, "%s\n", err.text);
        assert_true(n < 100000);
    }
    pick_free(&p);
    if (!strstr(seen.buf, "no host memory for the user wisdom directory's name"))
        fail_msg("no failure for the user wisdom directory's name in the sweep:\n%s", seen.buf);
    sb_free(&seen);
    if (keep)
        setenv("XDG_DATA_HOME", keep, 1);
    else
        unsetenv("XDG_DATA_HOME");
    free(keep);
}

/* The command's shapes: exact entries and the model's choice (the fixture has no tile variant). */
static const shape_t g_shapes[] = {{1000, 1000, 1000}, {96, 160, 200}, {4096, 4096, 4096}, {32, 4096, 4096}};
#define NSHAPES (sizeof g_shapes / sizeof *g_shapes)

/* pick_fixture with the command's shapes, then --auto-tune's candidates (pick_tune_candidates'
 * -1 as an ERR_ALLOC of its own, the pick freed). */
static int pick_shapes(pick_t *p, err_t *err)
{
    int rc = pick_at(p, g_shapes, NSHAPES, err);
    if (rc == 0 && pick_tune_candidates(p, g_shapes, NULL)) {
        err_set(err, ERR_ALLOC, "test", 0, 0, "no host memory for --auto-tune's candidates");
        pick_free(p);
        rc = -1;
    }
    return rc;
}

/* Each shape's entry, why and explanation, and its entries to time, as text. */
static char *shapes_text(const pick_t *p)
{
    strbuf sb;
    sb_init(&sb);
    for (size_t s = 0; s < p->nshapes; s++) {
        sb_addf(&sb, "%zu %s\n%s", p->of_shape[s], p->why[s], p->explain[s]);
        for (size_t k = 0; k < p->ntune[s]; k++) {
            const entry_t *e = &p->entries[p->tune[s * PICK_TUNE_MAX + k]];
            sb_addf(&sb, "  tune %s", e->path);
            for (size_t j = 0; j < e->nsets; j++)
                sb_addf(&sb, " %s", e->sets[j]);
            sb_add(&sb, "\n");
        }
    }
    return sb_steal(&sb);
}

static void test_shapes_out_of_memory(void **state)
{
    (void)state;
    pick_t p;
    err_t err;
    assert_int_equal(pick_shapes(&p, &err), 0);
    char *want = shapes_text(&p);
    pick_free(&p);
    assert_non_null(strstr(want, "exact"));
    assert_non_null(strstr(want, "model:"));
    assert_non_null(strstr(want, "  tune "));
    strbuf seen;
    int n = sweep(pick_shapes, &p, &seen);
    char *got = shapes_text(&p);
    pick_free(&p);
    assert_string_equal(got, want);
    /* the per-shape sites and the tune list's */
    static const char *const sites[] = {"for the chosen entry", "for the choice's explanation",
                                        "for --auto-tune's candidates", NULL};
    for (const char *const *site = sites; *site; site++)
        if (!strstr(seen.buf, *site))
            fail_msg("no failure \"%s\" in the sweep of %d:\n%s", *site, n, seen.buf);
    free(got), free(want);
    sb_free(&seen);
}

int main(void)
{
    use_repo_templates();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pick_out_of_memory),
        cmocka_unit_test(test_user_dir_out_of_memory),
        cmocka_unit_test(test_shapes_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
