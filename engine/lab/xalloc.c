/* xalloc.c — the aborting family of util.h (x*, sb_init, read_file, utc_now) and of paths.h
 * (path_join, path_dirname): the lab's and the command's, which stop when the host has no memory.
 * It lives above core so that the library cannot reach it: core allocates with try_* and hands
 * the failure back (tests/layers.sh fails on a core object that names one of these). */
#define _POSIX_C_SOURCE 200809L
#include "paths.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Host memory ran out: the command prints and exits (util_set_oom); with no handler (a test, a
 * tool) the process aborts, as an assertion would. */
static void (*g_oom)(size_t);

void util_set_oom(void (*fn)(size_t)) { g_oom = fn; }

void xoom(size_t n)
{
    if (g_oom)
        g_oom(n);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        xoom(n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        xoom(n * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        xoom(n);
    return p;
}

char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

char *xstrndup(const char *s, size_t n)
{
    char *d = xmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = util_vformat(xmalloc, fmt, ap); /* never NULL: xmalloc does not return without memory */
    va_end(ap);
    return s;
}

void sb_init(strbuf *sb)
{
    *sb = (strbuf){.buf = xmalloc(256), .cap = 256, .oom = xoom};
    sb->buf[0] = '\0';
}

char *read_file(const char *path, size_t *len)
{
    strbuf sb;
    sb_init(&sb);
    return sb_read_file(&sb, path, len);
}

char *utc_now(void)
{
    time_t t = time(NULL);
    struct tm tm;
    char buf[32];
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return xstrdup(buf);
}

/* path_dirname and path_join: paths.c's try_* ones, stopping where they had no memory. */
char *path_dirname(const char *path)
{
    char *d = try_path_dirname(path);
    if (!d)
        xoom(strlen(path) + 1);
    return d;
}

char *path_join(const char *dir, const char *name)
{
    char *p = try_path_join(dir, name);
    if (!p)
        xoom((dir ? strlen(dir) : 0) + strlen(name) + 2);
    return p;
}
