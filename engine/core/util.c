/* util.c — see util.h. */
#define _POSIX_C_SOURCE 200809L
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* util_try_fail_after's countdown, per thread: how many try_* allocations succeed still (< 0: all). */
static _Thread_local int t_try_left = -1;

void util_try_fail_after(int n)
{
    t_try_left = n;
}

/* Whether this try_* allocation is to fail (tests). */
static bool try_fails(void)
{
    if (t_try_left < 0)
        return false;
    if (t_try_left == 0)
        return true;
    t_try_left--;
    return false;
}

void *try_calloc(size_t n, size_t size)
{
    return try_fails() ? NULL : calloc(n ? n : 1, size ? size : 1);
}

void *try_realloc(void *p, size_t n)
{
    return try_fails() ? NULL : realloc(p, n ? n : 1);
}

void *try_malloc(size_t n)
{
    return try_fails() ? NULL : malloc(n ? n : 1);
}

char *try_strdup(const char *s)
{
    return !s || try_fails() ? NULL : strdup(s);
}

char *util_vformat(void *(*alloc)(size_t), const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    char *s = n < 0 ? NULL : alloc((size_t)n + 1);
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

char *try_asprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = util_vformat(try_malloc, fmt, ap);
    va_end(ap);
    return s;
}

char *sb_read_file(strbuf *sb, const char *path, size_t *len)
{
    FILE *f = sb->failed ? NULL : fopen(path, "rb");
    if (!f) {
        int e = sb->failed ? ENOMEM : errno; /* fopen's reason, whatever sb_free does to errno */
        sb_free(sb);
        errno = e;
        return NULL;
    }
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0 && !sb->failed)
        sb_addn(sb, chunk, n);
    int bad = ferror(f);
    fclose(f);
    if (bad || sb->failed) {
        errno = sb->failed ? ENOMEM : EIO;
        sb_free(sb);
        return NULL;
    }
    if (len)
        *len = sb->len;
    return sb_steal(sb);
}

char *try_read_file(const char *path, size_t *len)
{
    strbuf sb;
    sb_try_init(&sb);
    return sb_read_file(&sb, path, len);
}

int sb_try_init(strbuf *sb)
{
    sb->len = 0;
    sb->oom = NULL;
    sb->buf = try_malloc(256);
    sb->failed = !sb->buf;
    sb->cap = sb->failed ? 0 : 256;
    if (sb->buf)
        sb->buf[0] = '\0';
    return sb->failed ? -1 : 0;
}

/* Room for n more bytes and the NUL; false (a soft strbuf, failed) when there is none to be had. */
static bool sb_room(strbuf *sb, size_t n)
{
    if (sb->failed)
        return false;
    if (sb->len + n + 1 <= sb->cap)
        return true;
    size_t cap = sb->cap;
    while (sb->len + n + 1 > cap)
        cap *= 2;
    /* A strbuf of the lab's (sb_init) grows with malloc's memory, not try_*'s: a test's failing
     * allocations are the library's, and its handler (xoom) does not return. */
    char *b = sb->oom ? realloc(sb->buf, cap) : try_realloc(sb->buf, cap);
    if (!b) {
        if (sb->oom)
            sb->oom(cap);
        sb->failed = true;
        return false;
    }
    sb->buf = b;
    sb->cap = cap;
    return true;
}

void sb_free(strbuf *sb)
{
    free(sb->buf);
    sb->buf = NULL;
    sb->len = sb->cap = 0;
}

void sb_addn(strbuf *sb, const char *s, size_t n)
{
    if (!sb_room(sb, n))
        return;
    memcpy(sb->buf + sb->len, s, n);
    sb->len += n;
    sb->buf[sb->len] = '\0';
}

void sb_add(strbuf *sb, const char *s) { sb_addn(sb, s, strlen(s)); }

void sb_addf(strbuf *sb, const char *fmt, ...)
{
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    /* Formatted in place: no scratch allocation to fail. */
    if (n >= 0 && sb_room(sb, (size_t)n)) {
        vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
        sb->len += (size_t)n;
    }
    va_end(ap);
}

void sb_add_double(strbuf *sb, double v)
{
    char buf[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    sb_add(sb, buf);
    if (!strpbrk(buf, ".eE"))
        sb_add(sb, ".0");
}

/* Length of the valid UTF-8 sequence at p (2 to 4 bytes, p[0] >= 0x80), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *p)
{
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (p[0] >= 0xC2 && p[0] <= 0xDF)
        n = 2;
    else if (p[0] >= 0xE0 && p[0] <= 0xEF) {
        n = 3;
        if (p[0] == 0xE0)
            lo = 0xA0; /* overlong */
        if (p[0] == 0xED)
            hi = 0x9F; /* surrogates */
    } else if (p[0] >= 0xF0 && p[0] <= 0xF4) {
        n = 4;
        if (p[0] == 0xF0)
            lo = 0x90; /* overlong */
        if (p[0] == 0xF4)
            hi = 0x8F; /* above U+10FFFF */
    } else
        return 0;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return n;
}

/* s as a JSON string: quotes, backslashes and control characters escaped, invalid UTF-8 replaced by
 * U+FFFD (jansson, and every other reader, refuses it). NULL is written as "". */
void sb_add_json_string(strbuf *sb, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    sb_add(sb, "\"");
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        unsigned char c = *p;
        size_t n;
        if (c == '"' || c == '\\') {
            char esc[3] = {'\\', (char)c, 0};
            sb_add(sb, esc);
            p++;
        } else if (c < 0x20) {
            const char *e = c == '\n'   ? "\\n"
                            : c == '\r' ? "\\r"
                            : c == '\t' ? "\\t"
                            : c == '\b' ? "\\b"
                            : c == '\f' ? "\\f"
                                        : NULL;
            if (e) {
                sb_add(sb, e);
            } else {
                char u[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
                sb_add(sb, u);
            }
            p++;
        } else if (c < 0x80) {
            sb_addn(sb, (const char *)p, 1);
            p++;
        } else if ((n = utf8_len(p)) != 0) {
            sb_addn(sb, (const char *)p, n);
            p += n;
        } else {
            sb_add(sb, "\xEF\xBF\xBD");
            p++;
        }
    }
    sb_add(sb, "\"");
}

char *sb_steal(strbuf *sb)
{
    if (sb->failed) {
        sb_free(sb);
        return NULL;
    }
    char *s = sb->buf;
    sb->buf = NULL;
    sb->len = sb->cap = 0;
    return s;
}

int parse_i64(const char *s, int64_t *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end != '\0' || end == s)
        return -1;
    *out = (int64_t)v;
    return 0;
}

int parse_double(const char *s, double *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end != '\0' || end == s || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

uint64_t hash64(const void *data, size_t len, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603ULL ^ seed;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

bool str_in_list(const char *const *list, const char *s)
{
    for (; *list; list++)
        if (strcmp(*list, s) == 0)
            return true;
    return false;
}

int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int write_file_atomic(const char *path, const void *data, size_t len)
{
    const char *slash = strrchr(path, '/');
    char *tmp = slash ? try_asprintf("%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1)
                      : try_asprintf(".%s.XXXXXX", path);
    int step = WRITE_OK, saved = 0;
    int fd = tmp ? mkstemp(tmp) : -1; /* no memory for the temporary's name: it cannot be created */
    if (!tmp) {
        step = WRITE_CREATE;
        saved = ENOMEM;
    } else if (fd < 0) {
        step = WRITE_CREATE;
        saved = errno;
    } else if (fchmod(fd, 0644) != 0 || write_all(fd, data, len) != 0 || fsync(fd) != 0) {
        step = WRITE_DATA;
        saved = errno;
        close(fd);
        unlink(tmp);
    } else if (close(fd) != 0 || rename(tmp, path) != 0) { /* NFS reports write errors at close */
        step = WRITE_COMMIT;
        saved = errno;
        unlink(tmp);
    }
    free(tmp);
    errno = saved;
    return step;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median(double *v, size_t n)
{
    if (n == 0)
        return 0.0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int cmp_strp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int mkdir_p(const char *path, mode_t mode)
{
    if (path[0] == '\0') {
        errno = ENOENT;
        return -1;
    }
    char *p = try_strdup(path); /* the cache's writes use it: no memory is their failure, not an exit */
    if (!p) {
        errno = ENOMEM;
        return -1;
    }
    int rc = 0, e = 0;
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char saved = *s;
        *s = '\0';
        if (mkdir(p, mode) != 0 && errno != EEXIST) {
            e = errno;
            if (!is_dir(p)) { /* EACCES or EROFS on a parent that exists is fine */
                rc = -1;
                break;
            }
        }
        *s = saved;
        if (saved == '\0')
            break;
    }
    free(p);
    errno = e;
    return rc;
}
