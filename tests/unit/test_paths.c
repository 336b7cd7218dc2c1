/* test_paths.c — paths_init and paths_init_beside when the host runs out of memory: each allocation
 * (the executable's path and directory, $ENGINE_TEMPLATES's copy and each of its directories, each
 * canonical name, the wisdom directory) fails in turn (util_try_fail_after), and the call returns -1
 * with ERR_ALLOC and no directory known, where it used to exit in xoom; then it finds what it finds
 * with memory. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "paths.h"
#include "util.h"

/* What paths_init found, copied. */
typedef struct {
    char *dirs[16];
    size_t ndirs;
    char *configs, *tune, *wisdom, *exe;
} found;

static char *dup_or_null(const char *s) { return s ? xstrdup(s) : NULL; }

static found snapshot(void)
{
    found f = {.ndirs = 0};
    const char *const *dirs;
    f.ndirs = paths_template_dirs(&dirs);
    for (size_t i = 0; i < f.ndirs; i++)
        f.dirs[i] = xstrdup(dirs[i]);
    f.configs = dup_or_null(paths_configs_dir());
    f.tune = dup_or_null(paths_tune_dir());
    f.wisdom = xstrdup(paths_wisdom_dir());
    f.exe = xstrdup(paths_exe());
    return f;
}

static void found_free(found *f)
{
    for (size_t i = 0; i < f->ndirs; i++)
        free(f->dirs[i]);
    free(f->configs);
    free(f->tune);
    free(f->wisdom);
    free(f->exe);
}

static void assert_same_str(const char *a, const char *b)
{
    if (a && b)
        assert_string_equal(a, b);
    else
        assert_ptr_equal(a, b);
}

static void assert_found(const found *want)
{
    found got = snapshot();
    assert_int_equal(got.ndirs, want->ndirs);
    for (size_t i = 0; i < want->ndirs; i++)
        assert_string_equal(got.dirs[i], want->dirs[i]);
    assert_same_str(got.configs, want->configs);
    assert_same_str(got.tune, want->tune);
    assert_string_equal(got.wisdom, want->wisdom);
    assert_string_equal(got.exe, want->exe);
    found_free(&got);
}

/* A failed init keeps nothing: no template directory, no configs, the defaults for the rest. */
static void assert_none(void)
{
    const char *const *dirs;
    assert_int_equal(paths_template_dirs(&dirs), 0);
    assert_null(paths_configs_dir());
    assert_null(paths_tune_dir());
    assert_string_equal(paths_wisdom_dir(), "wisdom");
    assert_string_equal(paths_exe(), "/proc/self/exe");
}

/* Sweep init (paths_init, or paths_init_beside of beside) until it succeeds; how many failed. */
static int sweep(const char *beside)
{
    int n = 0;
    for (;; n++) {
        err_t err;
        err_clear(&err);
        util_try_fail_after(n);
        int rc = beside ? paths_init_beside(beside, &err) : paths_init(NULL, &err);
        util_try_fail_after(-1);
        if (rc == 0)
            return n;
        assert_int_equal(rc, -1);
        assert_int_equal(err.cause, ERR_ALLOC);
        assert_int_equal(err.code, EXIT_SYSTEM);
        assert_non_null(strstr(err.text, "no host memory"));
        assert_none();
    }
}

static void test_init_out_of_memory(void **state)
{
    (void)state;
    /* Two template directories of $ENGINE_TEMPLATES (both exist: tests run from the repository root),
     * and the wisdom directory worked out next to the binary. */
    setenv("ENGINE_TEMPLATES", "kernels_src:tests/templates", 1);
    unsetenv("ENGINE_WISDOM");
    err_t err;
    err_clear(&err);
    assert_int_equal(paths_init(NULL, &err), 0);
    found want = snapshot();
    assert_true(want.ndirs >= 2);
    /* The executable's path, its directory, the variable's copy, its two directories, two canonical
     * template directories, two each for configs and tune (or one where the first is there), two for
     * wisdom: more than ten, each failing in turn. */
    assert_true(sweep(NULL) >= 10);
    assert_found(&want);
    /* $ENGINE_WISDOM copied instead. */
    setenv("ENGINE_WISDOM", "/nonexistent/wisdom", 1);
    assert_true(sweep(NULL) >= 8);
    assert_string_equal(paths_wisdom_dir(), "/nonexistent/wisdom");
    unsetenv("ENGINE_WISDOM");
    /* The library's: beside a file, without the executable's path. */
    char *beside = xasprintf("%s", want.exe);
    assert_true(sweep(beside) >= 8);
    const char *const *dirs;
    assert_int_equal(paths_template_dirs(&dirs), want.ndirs);
    assert_string_equal(paths_exe(), "/proc/self/exe");
    free(beside);
    found_free(&want);
    paths_free();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
