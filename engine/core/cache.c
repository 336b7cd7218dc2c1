/* cache.c — see cache.h.
 *
 * Entry file, format 1 (text header, then the payload):
 *
 *     engine-cubin 1\n
 *     key <64 hex>\n            the key the entry is stored under (must equal the file name)
 *     compile_us <decimal>\n    wall time of the original compile, microseconds
 *     log <decimal>\n           bytes of log in the payload
 *     ptx <decimal>\n           bytes of PTX in the payload
 *     cubin <decimal>\n         bytes of CUBIN in the payload
 *     sha256 <64 hex>\n         SHA-256 of the header lines above this one, then the payload
 *     \n
 *     <log bytes><ptx bytes><cubin bytes>
 *
 * Numbers are plain decimal (no sign, no leading zeros), so the file reads the same in any locale.
 * The checksum covers every byte but its own line and the blank line, so damage anywhere is caught;
 * the sizes must add up to the file's length exactly, so truncation and trailing bytes are caught
 * before the checksum is even computed. */
#define _GNU_SOURCE /* syscall(SYS_gettid), GNU strerror_r */
#include "cache.h"

#include "sha256.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAGIC "engine-cubin 1"
#define FORMAT_DIR "v1"
#define TEMP_PREFIX ".tmp-"
/* No compile produces a gigabyte; a file larger than this is damage, and is not read whole. */
#define MAX_ENTRY_BYTES ((size_t)1 << 30)
/* Longest header line we look for a newline in, bytes: "sha256 " + 64 hex, with room to spare. */
#define MAX_HEADER_LINE 128

/* Numbers the temporary files of this process, together with pid and thread id. */
static atomic_ulong g_temp_counter;

static const char *errstr(int e, char *buf, size_t len) { return strerror_r(e, buf, len); }

bool cache_key_valid(const char *key)
{
    if (!key)
        return false;
    for (int i = 0; i < CACHE_KEY_LEN; i++) {
        char ch = key[i];
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
            return false; /* also stops at a NUL before 64 characters */
    }
    return key[CACHE_KEY_LEN] == '\0';
}

/* ---- directories ---- */

/* dir + "/" + name, without doubling the slash when dir ends in one; NULL when the host has no
 * memory for it. */
static char *join_trimmed(const char *dir, const char *name)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    return try_asprintf("%.*s/%s", (int)n, dir, name);
}

/* rm -r of name in the directory at, without following symbolic links; best effort. Each child is
 * named relative to its directory's descriptor, so no path is built: nothing to run out of memory
 * for (cache_close cannot report it, and a temporary cache would be left behind). */
static void remove_at(int at, const char *name)
{
    struct stat st;
    if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return;
    if (!S_ISDIR(st.st_mode)) {
        unlinkat(at, name, 0);
        return;
    }
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (d) {
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                continue;
            remove_at(dirfd(d), de->d_name);
        }
        closedir(d);
    } else if (fd >= 0) {
        close(fd);
    }
    unlinkat(at, name, AT_REMOVEDIR);
}

static void remove_tree(const char *path) { remove_at(AT_FDCWD, path); }

/* The host had no memory for what (a name, an entry's bytes): ERR_ALLOC, -1. */
static int no_memory(err_t *err, const char *source, const char *what)
{
    err_set(err, ERR_ALLOC, source, 0, 0, "no host memory for %s", what);
    return -1;
}

char *cache_default_dir(err_t *err)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char *d;
    if (xdg && xdg[0] == '/') { /* the XDG spec says to ignore a relative path */
        d = join_trimmed(xdg, "engine");
    } else if (home && home[0] == '/') {
        d = join_trimmed(home, ".cache/engine");
    } else {
        err_set(err, ERR_SYSTEM, "engine", 0, 0,
                "no cache directory: neither XDG_CACHE_HOME nor HOME is set to an absolute path");
        return NULL;
    }
    if (!d)
        no_memory(err, "engine", "the cache directory's name");
    return d;
}

/* Make root usable as a cache root: a writable directory with the format directory in it. On
 * success c->dir is its absolute path. */
static int open_root(cache_t *c, const char *root, err_t *err)
{
    char eb[128];
    if (mkdir_p(root, 0755) != 0) { /* ENOMEM: no host memory for its copy of the name */
        err_set(err, errno == ENOMEM ? ERR_ALLOC : ERR_SYSTEM, root, 0, 0, "cannot create the cache directory: %s",
                errstr(errno, eb, sizeof eb));
        return -1;
    }
    if (!is_dir(root)) {
        err_set(err, ERR_SYSTEM, root, 0, 0, "the cache directory is not a directory");
        return -1;
    }
    if (access(root, W_OK | X_OK) != 0) {
        err_set(err, ERR_SYSTEM, root, 0, 0, "the cache directory is not writable: %s", errstr(errno, eb, sizeof eb));
        return -1;
    }
    char *abs = realpath(root, NULL);
    if (!abs) {
        err_set(err, ERR_SYSTEM, root, 0, 0, "cannot resolve the cache directory: %s", errstr(errno, eb, sizeof eb));
        return -1;
    }
    char *vdir = join_trimmed(abs, FORMAT_DIR);
    if (!vdir) {
        no_memory(err, abs, "the cache directory's name");
        goto out_fail;
    }
    if (mkdir(vdir, 0755) != 0 && errno != EEXIST) {
        err_set(err, ERR_SYSTEM, vdir, 0, 0, "cannot create the cache directory: %s", errstr(errno, eb, sizeof eb));
        goto out_fail;
    }
    if (!is_dir(vdir)) {
        err_set(err, ERR_SYSTEM, vdir, 0, 0, "the cache directory is not a directory");
        goto out_fail;
    }
    free(vdir);
    c->dir = abs;
    return 0;

out_fail:
    free(vdir);
    free(abs);
    return -1;
}

int cache_open(cache_t *c, const char *dir, err_t *err)
{
    memset(c, 0, sizeof *c);
    char *def = NULL;
    if (!dir) {
        def = cache_default_dir(err);
        if (!def)
            return -1;
        dir = def;
    }
    int rc = open_root(c, dir, err);
    free(def);
    return rc;
}

int cache_open_temp(cache_t *c, err_t *err)
{
    memset(c, 0, sizeof *c);
    const char *tmp = getenv("TMPDIR");
    if (!tmp || tmp[0] == '\0')
        tmp = "/tmp";
    char *tmpl = join_trimmed(tmp, "engine-cache-XXXXXX");
    if (!tmpl)
        return no_memory(err, tmp, "the temporary cache directory's name");
    if (!mkdtemp(tmpl)) {
        char eb[128];
        err_set(err, ERR_SYSTEM, tmpl, 0, 0, "cannot create a temporary cache directory: %s",
                errstr(errno, eb, sizeof eb));
        free(tmpl);
        return -1;
    }
    int rc = open_root(c, tmpl, err);
    if (rc == 0) {
        c->temporary = true;
        c->owner = getpid();
    } else {
        remove_tree(tmpl);
    }
    free(tmpl);
    return rc;
}

void cache_close(cache_t *c)
{
    if (c->dir && c->temporary && c->owner == getpid())
        remove_tree(c->dir);
    free(c->dir);
    memset(c, 0, sizeof *c);
}

/* ---- entry format ---- */

void cache_entry_free(cache_entry *e)
{
    free(e->log);
    free(e->ptx);
    free(e->cubin);
    memset(e, 0, sizeof *e);
}

static uint64_t ms_to_us(double ms)
{
    if (!(ms > 0)) /* negative or NaN */
        return 0;
    if (ms > 1e12) /* thirty years: clamp rather than overflow */
        ms = 1e12;
    return (uint64_t)(ms * 1000.0 + 0.5);
}

static void hash_payload(sha256_ctx *h, const cache_entry *e)
{
    sha256_update(h, e->log, e->log_size);
    sha256_update(h, e->ptx, e->ptx_size);
    sha256_update(h, e->cubin, e->cubin_size);
}

char *cache_entry_format(const char *key, const cache_entry *e, size_t *len)
{
    if (!cache_key_valid(key))
        return NULL;
    strbuf sb;
    sb_try_init(&sb); /* a cache_put with no memory for it fails, as any other write failure */
    sb_addf(&sb, MAGIC "\nkey %s\ncompile_us %" PRIu64 "\nlog %zu\nptx %zu\ncubin %zu\n", key, ms_to_us(e->compile_ms),
            e->log_size, e->ptx_size, e->cubin_size);
    if (sb.failed) {
        sb_free(&sb);
        return NULL;
    }
    sha256_ctx h;
    sha256_init(&h);
    sha256_update(&h, sb.buf, sb.len);
    hash_payload(&h, e);
    uint8_t digest[SHA256_DIGEST_LEN];
    char hex[SHA256_HEX_LEN + 1];
    sha256_final(&h, digest);
    sha256_hex(digest, hex);
    sb_addf(&sb, "sha256 %s\n\n", hex);
    if (e->log_size)
        sb_addn(&sb, e->log, e->log_size);
    if (e->ptx_size)
        sb_addn(&sb, e->ptx, e->ptx_size);
    if (e->cubin_size)
        sb_addn(&sb, e->cubin, e->cubin_size);
    *len = sb.len;
    return sb_steal(&sb); /* NULL when an addition found no memory */
}

/* A read position in an entry file. */
typedef struct {
    const char *p;   /* next byte to read */
    const char *end; /* one past the last byte of the file */
} cursor;

/* Take the next header line, which must be "<name> <value>" or, with name NULL, exactly value.
 * Returns 0 with the value in *val / *vlen (not NUL-terminated), or -1 with the reason in why. */
static int header_line(cursor *cur, const char *name, const char **val, size_t *vlen, char *why, size_t whylen)
{
    size_t avail = (size_t)(cur->end - cur->p);
    const char *nl = memchr(cur->p, '\n', avail < MAX_HEADER_LINE ? avail : MAX_HEADER_LINE);
    if (!nl) {
        if (avail < MAX_HEADER_LINE)
            snprintf(why, whylen, "truncated in the header");
        else
            snprintf(why, whylen, "header line %s is too long", name ? name : "1");
        return -1;
    }
    size_t llen = (size_t)(nl - cur->p);
    size_t nlen = name ? strlen(name) : 0;
    if (name && (llen < nlen + 1 || memcmp(cur->p, name, nlen) != 0 || cur->p[nlen] != ' ')) {
        snprintf(why, whylen, "header line \"%s ...\" missing or malformed", name);
        return -1;
    }
    *val = name ? cur->p + nlen + 1 : cur->p;
    *vlen = name ? llen - nlen - 1 : llen;
    cur->p = nl + 1;
    return 0;
}

/* Plain decimal: 1 to 20 digits, no sign, no leading zero, no overflow. */
static int parse_u64_strict(const char *s, size_t n, uint64_t *out)
{
    if (n == 0 || n > 20 || (n > 1 && s[0] == '0'))
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static bool hex64(const char *s, size_t n)
{
    if (n != CACHE_KEY_LEN)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* A header line "<name> <decimal>". */
static int header_number(cursor *cur, const char *name, uint64_t *out, char *why, size_t whylen)
{
    const char *v;
    size_t n;
    if (header_line(cur, name, &v, &n, why, whylen) != 0)
        return -1;
    if (parse_u64_strict(v, n, out) != 0) {
        snprintf(why, whylen, "header line \"%s\" does not hold a plain decimal number", name);
        return -1;
    }
    return 0;
}

/* A NUL-terminated copy of n bytes; NULL when the host has no memory for it (try_* memory: a library
 * call reading the cache gets ENGINE_ERROR_OUT_OF_MEMORY, not an abort). */
static char *copy_bytes(const char *p, size_t n)
{
    char *d = try_malloc(n + 1);
    if (!d)
        return NULL;
    if (n)
        memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

int cache_entry_parse(const char *buf, size_t len, const char *expect_key, cache_entry *e, char *why, size_t whylen)
{
    char dummy[1];
    if (!why || whylen == 0) {
        why = dummy;
        whylen = sizeof dummy;
    }
    memset(e, 0, sizeof *e);
    if (len > MAX_ENTRY_BYTES) {
        snprintf(why, whylen, "%zu bytes, larger than any entry", len);
        return -1;
    }
    cursor cur = {buf, buf + len};
    const char *v;
    size_t n;

    if (header_line(&cur, NULL, &v, &n, why, whylen) != 0)
        return -1;
    if (n != strlen(MAGIC) || memcmp(v, MAGIC, n) != 0) {
        snprintf(why, whylen, "bad magic or format version, expected \"%s\"", MAGIC);
        return -1;
    }
    if (header_line(&cur, "key", &v, &n, why, whylen) != 0)
        return -1;
    if (!hex64(v, n)) {
        snprintf(why, whylen, "the key in the header is not 64 lowercase hex characters");
        return -1;
    }
    if (expect_key && (strlen(expect_key) != n || memcmp(v, expect_key, n) != 0)) {
        snprintf(why, whylen, "the key in the header, %.*s, does not match the file name", (int)n, v);
        return -1;
    }
    uint64_t compile_us, log_size, ptx_size, cubin_size;
    if (header_number(&cur, "compile_us", &compile_us, why, whylen) != 0 ||
        header_number(&cur, "log", &log_size, why, whylen) != 0 ||
        header_number(&cur, "ptx", &ptx_size, why, whylen) != 0 ||
        header_number(&cur, "cubin", &cubin_size, why, whylen) != 0)
        return -1;
    const char *sum_line = cur.p; /* the checksum covers [buf, sum_line) */
    const char *sum;
    size_t sum_len;
    if (header_line(&cur, "sha256", &sum, &sum_len, why, whylen) != 0)
        return -1;
    if (!hex64(sum, sum_len)) {
        snprintf(why, whylen, "the checksum in the header is not 64 lowercase hex characters");
        return -1;
    }
    if (header_line(&cur, NULL, &v, &n, why, whylen) != 0)
        return -1;
    if (n != 0) {
        snprintf(why, whylen, "no blank line after the header");
        return -1;
    }

    /* Sizes against what the file holds, one at a time, so that no sum can overflow. */
    uint64_t rest = (uint64_t)(cur.end - cur.p);
    if (log_size > rest || ptx_size > rest - log_size || cubin_size > rest - log_size - ptx_size) {
        snprintf(why, whylen, "truncated: the header announces more payload than the %" PRIu64 " bytes present", rest);
        return -1;
    }
    if (log_size + ptx_size + cubin_size != rest) {
        snprintf(why, whylen, "%" PRIu64 " bytes of trailing data after the payload",
                 rest - log_size - ptx_size - cubin_size);
        return -1;
    }

    const char *payload = cur.p;
    sha256_ctx h;
    sha256_init(&h);
    sha256_update(&h, buf, (size_t)(sum_line - buf));
    sha256_update(&h, payload, (size_t)rest);
    uint8_t digest[SHA256_DIGEST_LEN];
    char hex[SHA256_HEX_LEN + 1];
    sha256_final(&h, digest);
    sha256_hex(digest, hex);
    if (memcmp(hex, sum, SHA256_HEX_LEN) != 0) {
        snprintf(why, whylen, "payload checksum mismatch");
        return -1;
    }

    e->log_size = (size_t)log_size;
    e->ptx_size = (size_t)ptx_size;
    e->cubin_size = (size_t)cubin_size;
    e->log = copy_bytes(payload, e->log_size);
    e->ptx = copy_bytes(payload + e->log_size, e->ptx_size);
    e->cubin = copy_bytes(payload + e->log_size + e->ptx_size, e->cubin_size);
    e->compile_ms = (double)compile_us / 1000.0;
    if (!e->log || !e->ptx || !e->cubin) { /* the entry is sound: only the copy could not be had */
        snprintf(why, whylen, "no host memory for the disk cache entry's copy (%zu bytes)", len);
        cache_entry_free(e);
        return CACHE_PARSE_NOMEM;
    }
    return 0;
}

/* ---- get and put ---- */

static char *entry_path(const cache_t *c, const char *key)
{
    return try_asprintf("%s/" FORMAT_DIR "/%.2s/%s", c->dir, key, key);
}

/* Read fd to its end, at most MAX_ENTRY_BYTES + 1 bytes (enough to tell that a file is too large).
 * Returns a NUL-terminated buffer, or NULL with errno set (ENOMEM: the host had no memory for it). */
static char *read_fd(int fd, size_t hint, size_t *len)
{
    size_t cap = hint + 1 < 4096 ? 4096 : hint + 1, n = 0;
    if (cap > MAX_ENTRY_BYTES + 2)
        cap = MAX_ENTRY_BYTES + 2;
    char *buf = try_malloc(cap);
    if (!buf)
        return errno = ENOMEM, NULL;
    while (n <= MAX_ENTRY_BYTES) {
        if (n + 1 == cap) {
            cap = cap * 2 > MAX_ENTRY_BYTES + 2 ? MAX_ENTRY_BYTES + 2 : cap * 2;
            char *grown = try_realloc(buf, cap);
            if (!grown) {
                free(buf);
                return errno = ENOMEM, NULL;
            }
            buf = grown;
        }
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            errno = e;
            return NULL;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Remove the damaged file at path unless it is no longer the one we read (st): a writer may have
 * renamed a fresh entry over it since. A writer that does so in the instant between the check and the
 * unlink loses its entry, which costs one recompile later, nothing more. */
static void remove_if_same(const char *path, const struct stat *st)
{
    struct stat now;
    if (stat(path, &now) == 0 && now.st_dev == st->st_dev && now.st_ino == st->st_ino)
        unlink(path);
}

int cache_get(const cache_t *c, const char *key, cache_entry *e, err_t *warn)
{
    char eb[128];
    memset(e, 0, sizeof *e);
    if (!cache_key_valid(key)) {
        err_set(warn, ERR_SYSTEM, c->dir, 0, 0, "invalid cache key \"%.80s\"", key ? key : "(null)");
        return CACHE_ERROR;
    }
    char *path = entry_path(c, key);
    if (!path) {
        err_set(warn, ERR_ALLOC, c->dir, 0, 0, "no host memory for the disk cache entry's path");
        return CACHE_NOMEM;
    }
    int rc;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) {
            rc = CACHE_MISS;
        } else {
            err_set(warn, ERR_SYSTEM, path, 0, 0, "cannot read cache entry: %s", errstr(errno, eb, sizeof eb));
            rc = CACHE_ERROR;
        }
        goto out_free_path;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        err_set(warn, ERR_SYSTEM, path, 0, 0, "cannot read cache entry: %s", errstr(errno, eb, sizeof eb));
        rc = CACHE_ERROR;
        goto out_close;
    }
    if (!S_ISREG(st.st_mode)) {
        err_set(warn, ERR_SYSTEM, path, 0, 0, "cannot read cache entry: not a regular file");
        rc = CACHE_ERROR;
        goto out_close;
    }
    char why[256];
    if ((uint64_t)st.st_size > MAX_ENTRY_BYTES) { /* not worth reading */
        snprintf(why, sizeof why, "%jd bytes, larger than any entry", (intmax_t)st.st_size);
        goto out_corrupt;
    }
    size_t len;
    char *buf = read_fd(fd, (size_t)st.st_size, &len);
    if (!buf && errno == ENOMEM) {
        err_set(warn, ERR_ALLOC, path, 0, 0, "no host memory to read the disk cache entry (%jd bytes)", (intmax_t)st.st_size);
        rc = CACHE_NOMEM;
        goto out_close;
    }
    if (!buf) {
        err_set(warn, ERR_SYSTEM, path, 0, 0, "cannot read cache entry: %s", errstr(errno, eb, sizeof eb));
        rc = CACHE_ERROR;
        goto out_close;
    }
    int parsed = cache_entry_parse(buf, len, key, e, why, sizeof why);
    free(buf);
    if (parsed == 0) {
        rc = CACHE_HIT;
        goto out_close;
    }
    if (parsed == CACHE_PARSE_NOMEM) { /* not damage: the entry stays */
        err_set(warn, ERR_ALLOC, path, 0, 0, "%s", why);
        rc = CACHE_NOMEM;
        goto out_close;
    }
out_corrupt:
    remove_if_same(path, &st);
    err_set(warn, ERR_SYSTEM, path, 0, 0, "corrupt cache entry (%s); it will be rebuilt", why);
    rc = CACHE_CORRUPT;
out_close:
    close(fd);
out_free_path:
    free(path);
    return rc;
}

/* A temporary file name in dir that no other process or thread is using now: pid and thread id tell
 * writers on one host apart, the counter tells one thread's files apart, and the random part tells
 * hosts sharing a filesystem apart (O_EXCL settles the rest). */
static char *temp_name(const char *dir)
{
    unsigned long n = atomic_fetch_add(&g_temp_counter, 1);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)(uintptr_t)&ts ^ (n << 40);
    x ^= x >> 33; /* splitmix64 finaliser */
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return try_asprintf("%s/" TEMP_PREFIX "%ld-%ld-%lu-%08" PRIx32, dir, (long)getpid(), (long)syscall(SYS_gettid), n,
                        (uint32_t)x);
}

int cache_put(const cache_t *c, const char *key, const cache_entry *e, err_t *err)
{
    char eb[128];
    if (!cache_key_valid(key)) {
        err_set(err, ERR_SYSTEM, c->dir, 0, 0, "invalid cache key \"%.80s\"", key ? key : "(null)");
        return -1;
    }
    /* With no host memory for any of these the entry is not written, as on a full disk: the caller
     * has its kernel and only a later run recompiles. */
    size_t len;
    char *buf = cache_entry_format(key, e, &len);
    char *shard = buf ? try_asprintf("%s/" FORMAT_DIR "/%.2s", c->dir, key) : NULL;
    char *path = shard ? try_asprintf("%s/%s", shard, key) : NULL;
    char *tmp = NULL;
    int rc = -1, fd = -1, saved = 0;
    if (!path) {
        no_memory(err, c->dir, "the cache entry or its name");
        goto out_free;
    }

    for (int attempt = 0; attempt < 8 && fd < 0; attempt++) {
        free(tmp);
        if (!(tmp = temp_name(shard))) {
            saved = ENOMEM;
            break;
        }
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        saved = errno;
        if (fd < 0 && saved == ENOENT) { /* first entry in this shard, or the directory was removed */
            if (mkdir_p(shard, 0755) != 0) {
                saved = errno;
                break;
            }
        } else if (fd < 0 && saved != EEXIST) {
            break;
        }
    }
    if (fd < 0) { /* ENOMEM: no host memory for its name (temp_name) or the shard's (mkdir_p) */
        err_set(err, saved == ENOMEM ? ERR_ALLOC : ERR_SYSTEM, path, 0, 0,
                "cannot create a temporary file for the cache entry: %s", errstr(saved, eb, sizeof eb));
        goto out_free;
    }
    if (write_all(fd, buf, len) != 0) {
        saved = errno;
        close(fd);
        goto out_unlink;
    }
    if (close(fd) != 0) { /* NFS reports write errors here */
        saved = errno;
        goto out_unlink;
    }
    if (rename(tmp, path) != 0) {
        saved = errno;
        goto out_unlink;
    }
    rc = 0;
    goto out_free;

out_unlink:
    unlink(tmp);
    err_set(err, ERR_SYSTEM, path, 0, 0, "cannot write cache entry: %s", errstr(saved, eb, sizeof eb));
out_free:
    free(tmp);
    free(path);
    free(shard);
    free(buf);
    return rc;
}

/* ---- whole-cache operations ---- */

typedef enum { FILE_ENTRY, FILE_TEMP } file_kind;

/* Called for each regular file of the cache; a non-zero return stops the walk and is returned. */
typedef int (*visit_fn)(const char *path, file_kind kind, const struct stat *st, void *ctx, err_t *err);

static bool is_shard_name(const char *s)
{
    for (int i = 0; i < 2; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return s[2] == '\0';
}

/* Visit every entry and temporary file under dir/v1/<xx>/; files are named for what they are, and
 * anything else found there is left alone. A file that vanishes during the walk (another process
 * cleared or replaced it) is skipped. With no host memory for a name the walk stops there (a count
 * or a clearing that went on would be silently short): ERR_ALLOC, -1. */
static int walk(const cache_t *c, visit_fn fn, void *ctx, err_t *err)
{
    char eb[128];
    char *vdir = try_asprintf("%s/" FORMAT_DIR, c->dir);
    if (!vdir)
        return no_memory(err, c->dir, "the cache directory's name");
    int rc = 0;
    DIR *top = opendir(vdir);
    if (!top) {
        if (errno != ENOENT) {
            err_set(err, ERR_SYSTEM, vdir, 0, 0, "cannot list the cache directory: %s", errstr(errno, eb, sizeof eb));
            rc = -1;
        }
        goto out_free_vdir;
    }
    struct dirent *sd;
    while (rc == 0 && (sd = readdir(top)) != NULL) {
        if (!is_shard_name(sd->d_name))
            continue;
        char *shard = try_asprintf("%s/%s", vdir, sd->d_name);
        if (!shard) {
            rc = no_memory(err, vdir, "a cache directory's name");
            break;
        }
        DIR *d = opendir(shard);
        if (!d) {
            if (errno != ENOENT && errno != ENOTDIR) {
                err_set(err, ERR_SYSTEM, shard, 0, 0, "cannot list the cache directory: %s",
                        errstr(errno, eb, sizeof eb));
                rc = -1;
            }
            free(shard);
            continue;
        }
        struct dirent *fe;
        while (rc == 0 && (fe = readdir(d)) != NULL) {
            file_kind kind;
            if (cache_key_valid(fe->d_name) && memcmp(fe->d_name, sd->d_name, 2) == 0)
                kind = FILE_ENTRY;
            else if (strncmp(fe->d_name, TEMP_PREFIX, strlen(TEMP_PREFIX)) == 0)
                kind = FILE_TEMP;
            else
                continue;
            struct stat st;
            if (fstatat(dirfd(d), fe->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
                continue;
            char *path = try_asprintf("%s/%s", shard, fe->d_name);
            rc = path ? fn(path, kind, &st, ctx, err) : no_memory(err, shard, "a cache file's name");
            free(path);
        }
        closedir(d);
        free(shard);
    }
    closedir(top);
out_free_vdir:
    free(vdir);
    return rc;
}

static int count_file(const char *path, file_kind kind, const struct stat *st, void *ctx, err_t *err)
{
    (void)path;
    (void)err;
    cache_stats *s = ctx;
    if (kind == FILE_ENTRY) {
        s->entries++;
        s->bytes += (uint64_t)st->st_size;
    } else {
        s->temp_files++;
    }
    return 0;
}

int cache_info(const cache_t *c, cache_stats *st, err_t *err)
{
    memset(st, 0, sizeof *st);
    return walk(c, count_file, st, err);
}

static int remove_file(const char *path, file_kind kind, const struct stat *st, void *ctx, err_t *err)
{
    (void)st;
    size_t *removed = ctx;
    if (unlink(path) != 0) {
        if (errno == ENOENT) /* someone else removed it first */
            return 0;
        char eb[128];
        err_set(err, ERR_SYSTEM, path, 0, 0, "cannot remove: %s", errstr(errno, eb, sizeof eb));
        return -1;
    }
    if (kind == FILE_ENTRY)
        (*removed)++;
    return 0;
}

int cache_clear(const cache_t *c, size_t *removed, err_t *err)
{
    size_t n = 0;
    int rc = walk(c, remove_file, &n, err);
    if (removed)
        *removed = n;
    return rc;
}
