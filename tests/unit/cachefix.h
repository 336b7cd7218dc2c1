/* cachefix.h — the fixture test_cache and test_cache_oom share: a cache opened on a fresh mkdtemp
 * directory, removed with everything in it afterwards, and keys named by a text. Include after
 * cmocka.h, with cache.h, sha256.h, util.h, ftw.h and stdio.h. */
#ifndef TEST_CACHEFIX_H
#define TEST_CACHEFIX_H

typedef struct {
    char root[64]; /* the mkdtemp directory the test's cache lives in */
    cache_t c;     /* the cache opened on root */
} fixture;

static inline int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static inline void rm_tree(const char *path) { nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static inline int setup(void **state)
{
    fixture *f = xcalloc(1, sizeof *f);
    snprintf(f->root, sizeof f->root, "/tmp/engine-cache-test-XXXXXX");
    if (!mkdtemp(f->root))
        return -1;
    err_t err;
    err_clear(&err);
    if (cache_open(&f->c, f->root, &err) != 0)
        return -1;
    *state = f;
    return 0;
}

static inline int teardown(void **state)
{
    fixture *f = *state;
    cache_close(&f->c);
    rm_tree(f->root);
    free(f);
    return 0;
}

/* A key: the SHA-256 of a name. */
static inline void key_for(const char *name, char key[CACHE_KEY_LEN + 1])
{
    uint8_t d[SHA256_DIGEST_LEN];
    sha256(name, strlen(name), d);
    sha256_hex(d, key);
}

#endif
