/* test_cache_oom.c — the on-disk CUBIN cache when the host runs out of memory: every allocation of a
 * write (cache_put), of a walk (cache_info, cache_clear) and of opening the cache fails in turn
 * (util_try_fail_after), and the call reports ERR_ALLOC and -1 where it used to exit in xoom; a write
 * leaves neither an entry nor a temporary file, a walk stops, then the call succeeds. Split from
 * test_cache.c (its reads when out of memory are there: test_get_out_of_memory). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "sha256.h"
#include "util.h"

#include "cachefix.h"

/* An entry of cubin_size bytes (more than the format's first buffer: its growth is swept too). */
static cache_entry make_entry(size_t cubin_size)
{
    cache_entry e = {.log = xstrdup("ptxas info    : Used 32 registers\n"), .ptx = xstrdup(".version 8.0\n"),
                     .cubin = xcalloc(cubin_size, 1), .cubin_size = cubin_size, .compile_ms = 12.5};
    e.log_size = strlen(e.log);
    e.ptx_size = strlen(e.ptx) + 1;
    for (size_t i = 0; i < cubin_size; i++)
        e.cubin[i] = (char)(i * 31);
    return e;
}

static void expect_nomem(int rc, const err_t *err)
{
    assert_int_equal(rc, -1);
    assert_int_equal(err->cause, ERR_ALLOC);
    assert_int_equal(err->code, EXIT_SYSTEM);
}

/* How many files under dir have a name starting with prefix. */
static int count_named(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL)
        n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

/* A write out of memory at each of its allocations in turn (the entry's bytes and their growth, the
 * shard's and the entry's names, the temporary file's name, mkdir_p's copy of the shard's name as
 * the first entry of its shard makes it, the temporary name again): -1 with ERR_ALLOC, the process
 * goes on, and nothing is cached, neither an entry nor a temporary file (jit's caller keeps its
 * kernel, as after any failed write); then the write succeeds and reads back. */
static void test_put_out_of_memory(void **state)
{
    fixture *f = *state;
    char key[CACHE_KEY_LEN + 1];
    key_for("put out of memory", key);
    cache_entry e = make_entry(100000);
    int n = 0;
    for (;; n++) {
        err_t err;
        err_clear(&err);
        util_try_fail_after(n);
        int rc = cache_put(&f->c, key, &e, &err);
        util_try_fail_after(-1);
        if (rc == 0)
            break;
        expect_nomem(rc, &err);
        cache_entry got;
        err_clear(&err);
        assert_int_equal(cache_get(&f->c, key, &got, &err), CACHE_MISS);
        cache_stats st;
        assert_int_equal(cache_info(&f->c, &st, &err), 0);
        assert_int_equal(st.entries, 0);
        assert_int_equal(st.temp_files, 0);
    }
    /* The buffer, its growth to hold 100 KB, shard, path, temp name, mkdir_p's copy, temp name. */
    assert_int_equal(n, 7);
    cache_entry got;
    err_t err;
    err_clear(&err);
    assert_int_equal(cache_get(&f->c, key, &got, &err), CACHE_HIT);
    assert_int_equal(got.cubin_size, e.cubin_size);
    assert_memory_equal(got.cubin, e.cubin, e.cubin_size);
    cache_entry_free(&got);
    /* The shard exists now: a second entry there needs no directory, and fails the same way. */
    char key2[CACHE_KEY_LEN + 1];
    memcpy(key2, key, sizeof key2);
    key2[CACHE_KEY_LEN - 1] = key2[CACHE_KEY_LEN - 1] == '0' ? '1' : '0';
    for (n = 0;; n++) {
        err_clear(&err);
        util_try_fail_after(n);
        int rc = cache_put(&f->c, key2, &e, &err);
        util_try_fail_after(-1);
        if (rc == 0)
            break;
        expect_nomem(rc, &err);
        assert_int_equal(cache_get(&f->c, key2, &got, &err), CACHE_MISS);
    }
    assert_int_equal(n, 5);
    cache_entry_free(&e);
}

/* Size accounting and clearing out of memory at each name the walk builds (the format directory's,
 * each shard's, each file's): -1 with ERR_ALLOC, the walk stopped (a clearing removes no more than
 * it had reached), then the whole count and the whole clearing. */
static void test_walk_out_of_memory(void **state)
{
    fixture *f = *state;
    const char *names[] = {"walk a", "walk b", "walk c"};
    char shards[3][3] = {{0}};
    size_t nshards = 0;
    cache_entry e = make_entry(100);
    for (size_t i = 0; i < 3; i++) {
        char key[CACHE_KEY_LEN + 1];
        key_for(names[i], key);
        err_t err;
        err_clear(&err);
        assert_int_equal(cache_put(&f->c, key, &e, &err), 0);
        bool seen = false;
        for (size_t s = 0; s < nshards; s++)
            seen = seen || memcmp(shards[s], key, 2) == 0;
        if (!seen)
            memcpy(shards[nshards++], key, 2);
    }
    cache_entry_free(&e);
    int names_built = 1 + (int)nshards + 3; /* v1, each shard, each file */
    int n = 0;
    cache_stats st;
    for (;; n++) {
        err_t err;
        err_clear(&err);
        util_try_fail_after(n);
        int rc = cache_info(&f->c, &st, &err);
        util_try_fail_after(-1);
        if (rc == 0)
            break;
        expect_nomem(rc, &err);
        assert_non_null(strstr(err.text, "no host memory"));
    }
    assert_int_equal(n, names_built);
    assert_int_equal(st.entries, 3);
    size_t total = 0;
    for (n = 0;; n++) {
        err_t err;
        err_clear(&err);
        size_t removed = 99;
        util_try_fail_after(n);
        int rc = cache_clear(&f->c, &removed, &err);
        util_try_fail_after(-1);
        assert_true(removed <= 3);
        total += removed;
        if (rc == 0)
            break;
        expect_nomem(rc, &err);
    }
    assert_true(n >= 1);
    assert_int_equal(total, 3);
    err_t err;
    err_clear(&err);
    assert_int_equal(cache_info(&f->c, &st, &err), 0);
    assert_int_equal(st.entries, 0);
}

/* Opening a cache out of memory at each allocation (the default directory's name, mkdir_p's copy,
 * the format directory's name; a temporary cache's template name): -1 with ERR_ALLOC and nothing
 * opened; a temporary cache leaves no directory behind. Closing a temporary cache needs no memory. */
static void test_open_out_of_memory(void **state)
{
    fixture *f = *state;
    char *saved_xdg = getenv("XDG_CACHE_HOME") ? xstrdup(getenv("XDG_CACHE_HOME")) : NULL;
    char *saved_tmp = getenv("TMPDIR") ? xstrdup(getenv("TMPDIR")) : NULL;
    char *xdg = xasprintf("%s/xdg", f->root);
    setenv("XDG_CACHE_HOME", xdg, 1);
    setenv("TMPDIR", f->root, 1);
    cache_t c;
    int n = 0;
    for (;; n++) {
        err_t err;
        err_clear(&err);
        util_try_fail_after(n);
        int rc = cache_open(&c, NULL, &err);
        util_try_fail_after(-1);
        if (rc == 0)
            break;
        expect_nomem(rc, &err);
        assert_null(c.dir);
    }
    assert_int_equal(n, 3);
    cache_close(&c);
    for (n = 0;; n++) {
        err_t err;
        err_clear(&err);
        util_try_fail_after(n);
        int rc = cache_open_temp(&c, &err);
        util_try_fail_after(-1);
        if (rc == 0)
            break;
        expect_nomem(rc, &err);
        assert_null(c.dir);
        assert_int_equal(count_named(f->root, "engine-cache-"), 0);
    }
    assert_int_equal(n, 3);
    assert_int_equal(count_named(f->root, "engine-cache-"), 1);
    util_try_fail_after(0);
    cache_close(&c);
    util_try_fail_after(-1);
    assert_int_equal(count_named(f->root, "engine-cache-"), 0);
    if (saved_xdg)
        setenv("XDG_CACHE_HOME", saved_xdg, 1);
    else
        unsetenv("XDG_CACHE_HOME");
    if (saved_tmp)
        setenv("TMPDIR", saved_tmp, 1);
    else
        unsetenv("TMPDIR");
    free(saved_xdg);
    free(saved_tmp);
    free(xdg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_put_out_of_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_out_of_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_out_of_memory, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
