/* test_cache.c — the on-disk CUBIN cache: round trip, default directory, corrupt entries detected and
 * rebuilt, the parser on every truncation, concurrent writers in two processes and two threads, info
 * and clear, the temporary cache. Each test gets a fresh directory from mkdtemp and removes it. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache.h"
#include "sha256.h"
#include "util.h"

#include "cachefix.h"

/* ---- helpers ---- */

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static char *path_of(const cache_t *c, const char *key) { return xasprintf("%s/v1/%.2s/%s", c->dir, key, key); }

/* An entry whose cubin is binary (NUL bytes included) and depends on seed. The buffers are owned by
 * the caller: free with cache_entry_free. */
static cache_entry make_entry(unsigned seed, size_t cubin_size)
{
    cache_entry e;
    e.log = xasprintf("ptxas info    : Used %u registers, used 1 barriers\n", 32 + seed);
    e.log_size = strlen(e.log);
    e.ptx = xasprintf(".version 8.0\n.target sm_90\n// seed %u\n", seed);
    e.ptx_size = strlen(e.ptx) + 1; /* NVRTC counts the NUL */
    e.cubin = xmalloc(cubin_size ? cubin_size : 1);
    for (size_t i = 0; i < cubin_size; i++)
        e.cubin[i] = (char)(i % 7 == 0 ? 0 : (i * 31 + seed * 17) & 0xff);
    e.cubin_size = cubin_size;
    e.compile_ms = 250.125 + seed;
    return e;
}

static bool entry_equal(const cache_entry *a, const cache_entry *b)
{
    return a->log_size == b->log_size && a->ptx_size == b->ptx_size && a->cubin_size == b->cubin_size &&
           memcmp(a->log, b->log, a->log_size) == 0 && memcmp(a->ptx, b->ptx, a->ptx_size) == 0 &&
           memcmp(a->cubin, b->cubin, a->cubin_size) == 0;
}

static void put_ok(const cache_t *c, const char *key, const cache_entry *e)
{
    err_t err;
    err_clear(&err);
    int rc = cache_put(c, key, e, &err);
    if (rc != 0)
        err_print(stderr, &err);
    assert_int_equal(rc, 0);
}

/* An entry made from seed and stored under the key of name (key filled); its file's path (free it). */
static char *stored(const cache_t *c, const char *name, unsigned seed, size_t cubin_size, char *key, cache_entry *e)
{
    key_for(name, key);
    *e = make_entry(seed, cubin_size);
    put_ok(c, key, e);
    return path_of(c, key);
}

/* A host out of memory at each allocation of a read in turn (the entry's path, its bytes and their
 * growth, its three copies): CACHE_NOMEM with ERR_ALLOC and nothing filled, and the entry stays (it
 * is not damaged); then the read succeeds. Where jit's caller is the library, that is
 * ENGINE_ERROR_OUT_OF_MEMORY rather than an abort (test_api_oom). */
static void test_get_out_of_memory(void **state)
{
    fixture *f = *state;
    char key[65];
    cache_entry e, got;
    char *path = stored(&f->c, "out of memory", 3, 100000, key, &e);
    int n = 0;
    for (;; n++) {
        err_t warn;
        err_clear(&warn);
        util_try_fail_after(n);
        int rc = cache_get(&f->c, key, &got, &warn);
        util_try_fail_after(-1);
        if (rc == CACHE_HIT)
            break;
        assert_int_equal(rc, CACHE_NOMEM);
        assert_int_equal(warn.cause, ERR_ALLOC);
        assert_non_null(strstr(warn.text, "no host memory"));
        assert_null(got.log);
        assert_null(got.cubin);
        assert_true(exists(path));
    }
    assert_int_equal(n, 6);
    assert_true(entry_equal(&e, &got));
    cache_entry_free(&got);
    cache_entry_free(&e);
    free(path);
}

/* Replace the file at path with len bytes of data. */
static void write_bytes(const char *path, const char *data, size_t len)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(data, 1, len, fp), len);
    assert_int_equal(fclose(fp), 0);
}

/* cache_get must report key as corrupt, naming the file and the reason, and remove the file. */
static void expect_corrupt(const cache_t *c, const char *key, const char *reason)
{
    char *path = path_of(c, key);
    cache_entry got;
    err_t warn;
    err_clear(&warn);
    assert_int_equal(cache_get(c, key, &got, &warn), CACHE_CORRUPT);
    assert_null(got.cubin);
    assert_int_equal(warn.code, EXIT_SYSTEM);
    assert_string_equal(warn.source, path);
    assert_non_null(strstr(warn.text, "corrupt cache entry ("));
    assert_non_null(strstr(warn.text, "); it will be rebuilt"));
    if (!strstr(warn.text, reason))
        fail_msg("expected \"%s\" in: %s", reason, warn.text);
    assert_false(exists(path));
    /* Gone for good: the next look-up is a plain miss. */
    err_clear(&warn);
    assert_int_equal(cache_get(c, key, &got, &warn), CACHE_MISS);
    assert_int_equal(warn.code, 0);
    free(path);
}

/* ---- tests ---- */

static void test_put_get(void **state)
{
    fixture *f = *state;
    char key[65], other[65];
    key_for("put_get", key);
    key_for("never stored", other);
    cache_entry e = make_entry(1, 100000), got;
    err_t warn;
    err_clear(&warn);

    assert_int_equal(cache_get(&f->c, key, &got, &warn), CACHE_MISS);
    put_ok(&f->c, key, &e);
    assert_int_equal(cache_get(&f->c, key, &got, &warn), CACHE_HIT);
    assert_int_equal(warn.code, 0);
    assert_true(entry_equal(&e, &got));
    assert_true(got.compile_ms > 251.124 && got.compile_ms < 251.126);
    assert_int_equal(got.log[got.log_size], '\0'); /* usable as C strings */
    assert_string_equal(got.log, e.log);
    cache_entry_free(&got);
    assert_null(got.cubin);

    assert_int_equal(cache_get(&f->c, other, &got, &warn), CACHE_MISS);
    assert_null(got.cubin);

    /* Another handle on the same directory (as another process would open it) sees the entry. */
    cache_t c2;
    err_t err;
    err_clear(&err);
    assert_int_equal(cache_open(&c2, f->root, &err), 0);
    assert_int_equal(cache_get(&c2, key, &got, &warn), CACHE_HIT);
    assert_true(entry_equal(&e, &got));
    cache_entry_free(&got);
    cache_close(&c2);

    /* A put over an existing entry replaces it. */
    cache_entry e2 = make_entry(2, 5000);
    put_ok(&f->c, key, &e2);
    assert_int_equal(cache_get(&f->c, key, &got, &warn), CACHE_HIT);
    assert_true(entry_equal(&e2, &got));
    cache_entry_free(&got);

    /* An entry with nothing in it (NULL buffers, zero sizes) round-trips too. */
    cache_entry empty = {0};
    put_ok(&f->c, other, &empty);
    assert_int_equal(cache_get(&f->c, other, &got, &warn), CACHE_HIT);
    assert_int_equal(got.log_size + got.ptx_size + got.cubin_size, 0);
    assert_string_equal(got.log, "");
    cache_entry_free(&got);

    cache_entry_free(&e);
    cache_entry_free(&e2);
}

static void test_layout(void **state)
{
    fixture *f = *state;
    char key[65];
    key_for("layout", key);
    cache_entry e = make_entry(3, 64);
    put_ok(&f->c, key, &e);
    char *path = xasprintf("%s/v1/%c%c/%s", f->c.dir, key[0], key[1], key);
    assert_true(exists(path));
    /* The file begins with the documented header. */
    size_t len;
    char *text = read_file(path, &len);
    assert_non_null(text);
    char *head = xasprintf("engine-cubin 1\nkey %s\ncompile_us 253125\nlog %zu\nptx %zu\ncubin 64\nsha256 ", key,
                           e.log_size, e.ptx_size);
    assert_memory_equal(text, head, strlen(head));
    free(head);
    free(text);
    free(path);
    cache_entry_free(&e);
}

static void test_invalid_key(void **state)
{
    fixture *f = *state;
    cache_entry e = make_entry(4, 16), got;
    err_t err;
    const char *bad[] = {"",
                         "abc",
                         "../../etc/passwd",
                         NULL,
                         "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855",
                         "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b8550"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_false(cache_key_valid(bad[i]));
        err_clear(&err);
        assert_int_equal(cache_get(&f->c, bad[i], &got, &err), CACHE_ERROR);
        assert_int_equal(err.code, EXIT_SYSTEM);
        err_clear(&err);
        assert_int_equal(cache_put(&f->c, bad[i], &e, &err), -1);
        assert_int_equal(err.code, EXIT_SYSTEM);
        size_t len;
        assert_null(cache_entry_format(bad[i], &e, &len));
    }
    assert_true(cache_key_valid("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    cache_entry_free(&e);
}

/* Set or unset (value NULL) an environment variable. */
static void env(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

static void test_default_dir(void **state)
{
    fixture *f = *state;
    char *saved_xdg = getenv("XDG_CACHE_HOME") ? xstrdup(getenv("XDG_CACHE_HOME")) : NULL;
    char *saved_home = getenv("HOME") ? xstrdup(getenv("HOME")) : NULL;
    err_t err;
    err_clear(&err);
    char *d;

    env("XDG_CACHE_HOME", "/xdg/cache");
    env("HOME", "/home/u");
    d = cache_default_dir(&err);
    assert_string_equal(d, "/xdg/cache/engine");
    free(d);
    env("XDG_CACHE_HOME", "/xdg/cache/");
    d = cache_default_dir(&err);
    assert_string_equal(d, "/xdg/cache/engine");
    free(d);

    env("XDG_CACHE_HOME", ""); /* empty: not set */
    d = cache_default_dir(&err);
    assert_string_equal(d, "/home/u/.cache/engine");
    free(d);
    env("XDG_CACHE_HOME", "relative/cache"); /* the XDG spec: ignore relative paths */
    d = cache_default_dir(&err);
    assert_string_equal(d, "/home/u/.cache/engine");
    free(d);
    env("XDG_CACHE_HOME", NULL);
    d = cache_default_dir(&err);
    assert_string_equal(d, "/home/u/.cache/engine");
    free(d);
    assert_int_equal(err.code, 0);

    env("HOME", NULL);
    assert_null(cache_default_dir(&err));
    assert_int_equal(err.code, EXIT_SYSTEM);
    assert_non_null(strstr(err.text, "XDG_CACHE_HOME"));
    err_clear(&err);
    cache_t c;
    assert_int_equal(cache_open(&c, NULL, &err), -1);
    assert_int_equal(err.code, EXIT_SYSTEM);

    /* cache_open(NULL) creates the default directory, parents included. */
    char *xdg = xasprintf("%s/deep/er", f->c.dir);
    env("XDG_CACHE_HOME", xdg);
    err_clear(&err);
    assert_int_equal(cache_open(&c, NULL, &err), 0);
    char *want = xasprintf("%s/engine", xdg);
    assert_string_equal(c.dir, want);
    char *v1 = xasprintf("%s/v1", want);
    assert_true(exists(v1));
    assert_false(c.temporary);
    cache_close(&c);
    assert_true(exists(v1)); /* a cache that is not temporary stays */
    free(v1);
    free(want);
    free(xdg);

    env("XDG_CACHE_HOME", saved_xdg);
    env("HOME", saved_home);
    free(saved_xdg);
    free(saved_home);
}

static void test_open_errors(void **state)
{
    fixture *f = *state;
    cache_t c;
    err_t err;

    char *file = xasprintf("%s/a-file", f->root);
    write_bytes(file, "x", 1);
    err_clear(&err);
    assert_int_equal(cache_open(&c, file, &err), -1);
    assert_int_equal(err.code, EXIT_SYSTEM);
    assert_string_equal(err.source, file);
    assert_null(c.dir);

    char *under = xasprintf("%s/sub/cache", file);
    err_clear(&err);
    assert_int_equal(cache_open(&c, under, &err), -1);
    assert_int_equal(err.code, EXIT_SYSTEM);
    assert_string_equal(err.source, under);
    assert_non_null(strstr(err.text, "cannot create the cache directory"));

    if (geteuid() != 0) { /* root may write anywhere */
        char *ro = xasprintf("%s/read-only", f->root);
        assert_int_equal(mkdir(ro, 0555), 0);
        err_clear(&err);
        assert_int_equal(cache_open(&c, ro, &err), -1);
        assert_string_equal(err.source, ro);
        assert_non_null(strstr(err.text, "not writable"));
        chmod(ro, 0755);
        free(ro);
    }
    free(under);
    free(file);
}

static void test_corrupt_truncated(void **state)
{
    fixture *f = *state;
    char key[65];
    cache_entry e, got;
    char *path = stored(&f->c, "truncated", 5, 3000, key, &e);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(truncate(path, st.st_size - 1), 0);
    expect_corrupt(&f->c, key, "truncated");

    /* Rebuilt: the caller compiles again and puts a fresh entry. */
    put_ok(&f->c, key, &e);
    err_t warn;
    err_clear(&warn);
    assert_int_equal(cache_get(&f->c, key, &got, &warn), CACHE_HIT);
    assert_true(entry_equal(&e, &got));
    cache_entry_free(&got);

    /* An empty file (a crash before the data reached the disk) is corrupt too. */
    assert_int_equal(truncate(path, 0), 0);
    expect_corrupt(&f->c, key, "truncated in the header");

    /* So is one byte too many. */
    put_ok(&f->c, key, &e);
    FILE *fp = fopen(path, "ab");
    fputc('x', fp);
    fclose(fp);
    expect_corrupt(&f->c, key, "trailing data");
    free(path);
    cache_entry_free(&e);
}

static void test_corrupt_flipped_byte(void **state)
{
    fixture *f = *state;
    char key[65];
    key_for("flipped", key);
    cache_entry e = make_entry(6, 3000);
    char *path = path_of(&f->c, key);
    size_t len;

    /* In the cubin, in the log, and in a digit of the header's compile time: the checksum covers all. */
    for (int where = 0; where < 3; where++) {
        put_ok(&f->c, key, &e);
        char *bytes = read_file(path, &len);
        assert_non_null(bytes);
        size_t payload = len - e.log_size - e.ptx_size - e.cubin_size;
        size_t digit = (size_t)(strstr(bytes, "compile_us ") - bytes) + strlen("compile_us ") + 1;
        size_t at = where == 0 ? len - 1000 : where == 1 ? payload + 3 : digit;
        bytes[at] ^= where == 2 ? 0x01 : 0x20; /* a digit stays a digit: '5' becomes '4' */
        write_bytes(path, bytes, len);
        free(bytes);
        expect_corrupt(&f->c, key, "checksum mismatch");
    }
    free(path);
    cache_entry_free(&e);
}

static void test_corrupt_garbage_header(void **state)
{
    fixture *f = *state;
    char key[65];
    key_for("garbage", key);
    char *path = path_of(&f->c, key);
    cache_entry e = make_entry(7, 10);
    put_ok(&f->c, key, &e); /* makes the shard directory */

    const char *garbage = "\177ELF\002\001\001 this is not an entry\n\n\n";
    write_bytes(path, garbage, strlen(garbage));
    expect_corrupt(&f->c, key, "bad magic");

    char *next_version = xasprintf("engine-cubin 2\nkey %s\n", key);
    write_bytes(path, next_version, strlen(next_version));
    expect_corrupt(&f->c, key, "bad magic or format version");
    free(next_version);

    /* 300 bytes without a newline: the parser does not scan an unbounded line. */
    char line[300];
    memset(line, 'e', sizeof line);
    write_bytes(path, line, sizeof line);
    expect_corrupt(&f->c, key, "too long");

    cache_entry_free(&e);
    free(path);
}

static void test_corrupt_wrong_key(void **state)
{
    fixture *f = *state;
    char key[65], other[65];
    key_for("stored under", key);
    key_for("written for", other);
    cache_entry e = make_entry(8, 500);
    put_ok(&f->c, key, &e);
    size_t len;
    char *bytes = cache_entry_format(other, &e, &len);
    char *path = path_of(&f->c, key);
    write_bytes(path, bytes, len);
    expect_corrupt(&f->c, key, "does not match the file name");
    free(path);
    free(bytes);
    cache_entry_free(&e);
}

static void test_parse_every_prefix(void **state)
{
    (void)state;
    char key[65];
    key_for("prefix", key);
    cache_entry e = make_entry(9, 700), got;
    size_t len;
    char *bytes = cache_entry_format(key, &e, &len);
    char why[256];
    for (size_t n = 0; n < len; n++) {
        /* A fresh copy of exactly n bytes, so that reading past them would show under a sanitizer. */
        char *prefix = xmalloc(n ? n : 1);
        memcpy(prefix, bytes, n);
        why[0] = '\0';
        if (cache_entry_parse(prefix, n, key, &got, why, sizeof why) != -1)
            fail_msg("a prefix of %zu of %zu bytes was accepted", n, len);
        assert_true(why[0] != '\0');
        assert_null(strchr(why, '\n'));
        assert_null(got.cubin);
        free(prefix);
    }
    assert_int_equal(cache_entry_parse(bytes, len, key, &got, why, sizeof why), 0);
    assert_true(entry_equal(&e, &got));
    cache_entry_free(&got);
    assert_int_equal(cache_entry_parse(bytes, len, NULL, &got, why, sizeof why), 0); /* any key */
    cache_entry_free(&got);
    /* why may be left out */
    assert_int_equal(cache_entry_parse(bytes, len - 1, key, &got, NULL, 0), -1);
    free(bytes);
    cache_entry_free(&e);
}

/* Any one bit flipped anywhere in an entry, header or payload, is caught. */
static void test_parse_every_bit_flip(void **state)
{
    (void)state;
    char key[65];
    key_for("bit flips", key);
    cache_entry e = make_entry(15, 300), got;
    size_t len;
    char *bytes = cache_entry_format(key, &e, &len);
    char why[256];
    for (size_t i = 0; i < len; i++) {
        for (int bit = 0; bit < 8; bit++) {
            bytes[i] ^= (char)(1 << bit);
            if (cache_entry_parse(bytes, len, key, &got, why, sizeof why) != -1)
                fail_msg("flipping bit %d of byte %zu of %zu was not caught", bit, i, len);
            bytes[i] ^= (char)(1 << bit);
        }
    }
    assert_int_equal(cache_entry_parse(bytes, len, key, &got, why, sizeof why), 0);
    cache_entry_free(&got);
    free(bytes);
    cache_entry_free(&e);
}

/* Headers that lie about sizes, numbers that are not plain decimals: rejected before any size is used. */
static void test_parse_bad_sizes(void **state)
{
    (void)state;
    char key[65];
    key_for("sizes", key);
    const char *sum = "0000000000000000000000000000000000000000000000000000000000000000";
    static const struct {
        const char *log, *ptx, *cubin, *reason;
    } cases[] = {
        {"18446744073709551615", "1", "1", "truncated"}, /* would wrap when added */
        {"18446744073709551615", "18446744073709551615", "2", "truncated"},
        {"18446744073709551616", "0", "0", "plain decimal"}, /* 2^64 */
        {"99999999999999999999999", "0", "0", "plain decimal"},
        {"-1", "0", "0", "plain decimal"},
        {"01", "0", "0", "plain decimal"},
        {"1", "", "0", "plain decimal"},
        {"1 ", "0", "0", "plain decimal"},
        {"0x10", "0", "0", "plain decimal"},
        {"0", "0", "100", "truncated"},
        {"0", "0", "0", "trailing data"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = xasprintf("engine-cubin 1\nkey %s\ncompile_us 5\nlog %s\nptx %s\ncubin %s\nsha256 %s\n\nXYZ", key,
                               cases[i].log, cases[i].ptx, cases[i].cubin, sum);
        cache_entry got;
        char why[256] = "";
        assert_int_equal(cache_entry_parse(text, strlen(text), key, &got, why, sizeof why), -1);
        if (!strstr(why, cases[i].reason))
            fail_msg("case %zu: expected \"%s\" in: %s", i, cases[i].reason, why);
        free(text);
    }
    /* The right sizes with a wrong checksum. */
    char *text = xasprintf("engine-cubin 1\nkey %s\ncompile_us 5\nlog 1\nptx 1\ncubin 1\nsha256 %s\n\nXYZ", key, sum);
    cache_entry got;
    char why[256] = "";
    assert_int_equal(cache_entry_parse(text, strlen(text), key, &got, why, sizeof why), -1);
    assert_string_equal(why, "payload checksum mismatch");
    free(text);
    /* A missing line. */
    text = xasprintf("engine-cubin 1\nkey %s\nlog 1\nptx 1\ncubin 1\nsha256 %s\n\nXYZ", key, sum);
    assert_int_equal(cache_entry_parse(text, strlen(text), key, &got, why, sizeof why), -1);
    assert_non_null(strstr(why, "compile_us"));
    free(text);
}

/* Children write the same key again and again with payload A or B; the parent reads meanwhile. */
#define WRITES_PER_CHILD 200

static void test_two_writers(void **state)
{
    fixture *f = *state;
    char key[65];
    key_for("contended", key);
    cache_entry payload[2] = {make_entry(10, 256 * 1024), make_entry(11, 160 * 1024 + 3)};

    pid_t kids[2];
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        assert_true(kids[k] >= 0);
        if (kids[k] == 0) {
            for (int i = 0; i < WRITES_PER_CHILD; i++) {
                err_t err;
                err_clear(&err);
                if (cache_put(&f->c, key, &payload[k], &err) != 0) {
                    err_print(stderr, &err);
                    _exit(1);
                }
            }
            _exit(0);
        }
    }

    size_t hits[2] = {0, 0}, misses = 0, bad = 0, after_hit_miss = 0;
    char first_bad[ERR_TEXT_LEN + ERR_SOURCE_LEN + 64] = "";
    int status[2] = {-1, -1}, alive = 2;
    while (alive > 0) {
        cache_entry got;
        err_t warn;
        err_clear(&warn);
        int rc = cache_get(&f->c, key, &got, &warn);
        if (rc == CACHE_HIT) {
            if (entry_equal(&got, &payload[0]))
                hits[0]++;
            else if (entry_equal(&got, &payload[1]))
                hits[1]++;
            else
                bad++;
            cache_entry_free(&got);
        } else if (rc == CACHE_MISS) {
            misses++;
            if (hits[0] + hits[1] > 0)
                after_hit_miss++; /* once written, an entry is only ever replaced, never absent */
        } else {
            if (!bad)
                err_format(&warn, first_bad, sizeof first_bad);
            bad++;
        }
        for (int k = 0; k < 2; k++)
            if (status[k] == -1 && waitpid(kids[k], &status[k], WNOHANG) == kids[k])
                alive--;
    }
    for (int k = 0; k < 2; k++)
        assert_true(WIFEXITED(status[k]) && WEXITSTATUS(status[k]) == 0);
    print_message("      %zu hits of A, %zu of B, %zu misses\n", hits[0], hits[1], misses);
    if (bad)
        fail_msg("%zu bad reads; first: %s", bad, first_bad);
    assert_int_equal(after_hit_miss, 0);

    /* One complete entry is left, and no temporary file. */
    cache_entry got;
    err_t err;
    err_clear(&err);
    assert_int_equal(cache_get(&f->c, key, &got, &err), CACHE_HIT);
    assert_true(entry_equal(&got, &payload[0]) || entry_equal(&got, &payload[1]));
    cache_entry_free(&got);
    cache_stats st;
    assert_int_equal(cache_info(&f->c, &st, &err), 0);
    assert_int_equal(st.entries, 1);
    assert_int_equal(st.temp_files, 0);
    cache_entry_free(&payload[0]);
    cache_entry_free(&payload[1]);
}

/* The same within one process: two threads put, the test's thread gets. */
typedef struct {
    const cache_t *c;
    const char *key;
    const cache_entry *e;
    int failures;
} writer_arg;

static void *writer(void *p)
{
    writer_arg *a = p;
    for (int i = 0; i < WRITES_PER_CHILD; i++) {
        err_t err;
        err_clear(&err);
        if (cache_put(a->c, a->key, a->e, &err) != 0)
            a->failures++;
    }
    return NULL;
}

static void test_two_threads(void **state)
{
    fixture *f = *state;
    char key[65];
    key_for("threads", key);
    cache_entry payload[2] = {make_entry(12, 64 * 1024), make_entry(13, 48 * 1024)};
    writer_arg args[2] = {{&f->c, key, &payload[0], 0}, {&f->c, key, &payload[1], 0}};
    pthread_t t[2];
    for (int k = 0; k < 2; k++)
        assert_int_equal(pthread_create(&t[k], NULL, writer, &args[k]), 0);
    size_t bad = 0;
    for (int i = 0; i < 2000; i++) {
        cache_entry got;
        err_t warn;
        err_clear(&warn);
        int rc = cache_get(&f->c, key, &got, &warn);
        if (rc == CACHE_HIT) {
            if (!entry_equal(&got, &payload[0]) && !entry_equal(&got, &payload[1]))
                bad++;
            cache_entry_free(&got);
        } else if (rc != CACHE_MISS) {
            bad++;
        }
    }
    for (int k = 0; k < 2; k++)
        assert_int_equal(pthread_join(t[k], NULL), 0);
    assert_int_equal(bad, 0);
    assert_int_equal(args[0].failures + args[1].failures, 0);
    cache_stats st;
    err_t err;
    err_clear(&err);
    assert_int_equal(cache_info(&f->c, &st, &err), 0);
    assert_int_equal(st.entries, 1);
    assert_int_equal(st.temp_files, 0);
    cache_entry_free(&payload[0]);
    cache_entry_free(&payload[1]);
}

static void test_info_clear(void **state)
{
    fixture *f = *state;
    err_t err;
    err_clear(&err);
    cache_stats st;
    assert_int_equal(cache_info(&f->c, &st, &err), 0);
    assert_int_equal(st.entries, 0);
    assert_int_equal(st.bytes, 0);

    uint64_t bytes = 0;
    char key[65];
    for (unsigned i = 0; i < 5; i++) {
        char name[32];
        snprintf(name, sizeof name, "entry %u", i);
        key_for(name, key);
        cache_entry e = make_entry(i, 1000 * i);
        put_ok(&f->c, key, &e);
        size_t len;
        free(cache_entry_format(key, &e, &len));
        bytes += len;
        cache_entry_free(&e);
    }
    /* A leftover of an interrupted write, and a file that is none of the cache's business. */
    char *shard = xasprintf("%s/v1/%.2s", f->c.dir, key);
    char *leftover = xasprintf("%s/.tmp-123-456-7-deadbeef", shard);
    char *stranger = xasprintf("%s/notes.txt", shard);
    write_bytes(leftover, "engine-cubin 1\nkey", 18);
    write_bytes(stranger, "keep me", 7);

    assert_int_equal(cache_info(&f->c, &st, &err), 0);
    assert_int_equal(st.entries, 5);
    assert_int_equal(st.bytes, bytes);
    assert_int_equal(st.temp_files, 1);

    size_t removed = 99;
    assert_int_equal(cache_clear(&f->c, &removed, &err), 0);
    assert_int_equal(removed, 5);
    assert_int_equal(cache_info(&f->c, &st, &err), 0);
    assert_int_equal(st.entries, 0);
    assert_int_equal(st.bytes, 0);
    assert_int_equal(st.temp_files, 0);
    assert_false(exists(leftover));
    assert_true(exists(stranger));
    assert_true(exists(f->c.dir));
    cache_entry got;
    assert_int_equal(cache_get(&f->c, key, &got, &err), CACHE_MISS);

    /* Clearing an empty cache removes nothing; the cache still works afterwards. */
    assert_int_equal(cache_clear(&f->c, &removed, &err), 0);
    assert_int_equal(removed, 0);
    cache_entry e = make_entry(20, 10);
    put_ok(&f->c, key, &e);
    assert_int_equal(cache_get(&f->c, key, &got, &err), CACHE_HIT);
    cache_entry_free(&got);
    cache_entry_free(&e);
    assert_int_equal(err.code, 0);
    free(shard);
    free(leftover);
    free(stranger);
}

static void test_temp(void **state)
{
    fixture *f = *state;
    char *saved_tmp = getenv("TMPDIR") ? xstrdup(getenv("TMPDIR")) : NULL;
    env("TMPDIR", f->root);
    cache_t c;
    err_t err;
    err_clear(&err);
    assert_int_equal(cache_open_temp(&c, &err), 0);
    assert_true(c.temporary);
    char *prefix = xasprintf("%s/engine-cache-", f->c.dir);
    assert_memory_equal(c.dir, prefix, strlen(prefix));
    free(prefix);

    char key[65];
    key_for("temp", key);
    cache_entry e = make_entry(14, 4096), got;
    put_ok(&c, key, &e);
    char *dir = xstrdup(c.dir);

    /* A forked child that closes its copy leaves the directory to the parent. */
    pid_t kid = fork();
    assert_true(kid >= 0);
    if (kid == 0) {
        cache_entry mine;
        err_t w;
        err_clear(&w);
        int ok = cache_get(&c, key, &mine, &w) == CACHE_HIT;
        cache_close(&c);
        _exit(ok ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(kid, &status, 0), kid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_true(exists(dir));
    assert_int_equal(cache_get(&c, key, &got, &err), CACHE_HIT);
    cache_entry_free(&got);

    cache_close(&c);
    assert_false(exists(dir));
    assert_null(c.dir);
    free(dir);
    cache_entry_free(&e);

    /* TMPDIR unset or empty: /tmp. */
    env("TMPDIR", "");
    assert_int_equal(cache_open_temp(&c, &err), 0);
    assert_memory_equal(c.dir, "/tmp/engine-cache-", 18);
    dir = xstrdup(c.dir);
    cache_close(&c);
    assert_false(exists(dir));
    free(dir);

    env("TMPDIR", saved_tmp);
    free(saved_tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_put_get, setup, teardown),
        cmocka_unit_test_setup_teardown(test_get_out_of_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_truncated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_flipped_byte, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_garbage_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_wrong_key, setup, teardown),
        cmocka_unit_test(test_parse_every_prefix),
        cmocka_unit_test(test_parse_every_bit_flip),
        cmocka_unit_test(test_parse_bad_sizes),
        cmocka_unit_test_setup_teardown(test_two_writers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_info_clear, setup, teardown),
        cmocka_unit_test_setup_teardown(test_temp, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
