/* progress.c — see progress.h. */
#include "progress.h"

#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void progress_init(progress_t *p)
{
    memset(p, 0, sizeof *p);
    const char *env = getenv("ENGINE_PROGRESS");
    p->on = isatty(STDERR_FILENO) && !(env && strcmp(env, "0") == 0);
}

void progress_show(progress_t *p, bool force, const char *fmt, ...)
{
    if (!p->on)
        return;
    double now = now_ms();
    if (!force && now - p->last_ms < 100)
        return;
    p->last_ms = now;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (n >= (int)sizeof line)
        n = (int)sizeof line - 1;
    fprintf(stderr, "\r%s%*s", line, p->width > n ? p->width - n : 0, "");
    fflush(stderr);
    p->width = n;
}

void progress_clear(progress_t *p)
{
    if (!p->on || p->width == 0)
        return;
    fprintf(stderr, "\r%*s\r", p->width, "");
    fflush(stderr);
    p->width = 0;
}

void progress_duration(double s, char *buf, int len)
{
    if (s < 0)
        s = 0;
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, (size_t)len, "%ldh%02ldm", t / 3600, (t / 60) % 60);
    else if (t >= 60)
        snprintf(buf, (size_t)len, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(buf, (size_t)len, "%lds", t);
}
