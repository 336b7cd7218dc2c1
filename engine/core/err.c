/* err.c — error values and their one-line rendering. */
#include "err.h"

#include <string.h>

void err_clear(err_t *e) { memset(e, 0, sizeof *e); }

int err_vset(err_t *e, int code, const char *source, int line, int column, const char *fmt, va_list ap)
{
    if (e == NULL || e->code != 0)
        return code;
    e->code = code;
    snprintf(e->source, sizeof e->source, "%s", source ? source : "");
    e->line = line;
    e->column = column;
    vsnprintf(e->text, sizeof e->text, fmt, ap);
    /* One line, always: a message that spans lines cannot be grepped or jumped to. */
    for (char *p = e->text; *p; ++p)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return code;
}

int err_set(err_t *e, int code, const char *source, int line, int column, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_vset(e, code, source, line, column, fmt, ap);
    va_end(ap);
    return code;
}

void err_format(const err_t *e, char *buf, size_t len)
{
    if (e->source[0] && e->line > 0 && e->column > 0)
        snprintf(buf, len, "%s:%d:%d: %s", e->source, e->line, e->column, e->text);
    else if (e->source[0] && e->line > 0)
        snprintf(buf, len, "%s:%d: %s", e->source, e->line, e->text);
    else if (e->source[0])
        snprintf(buf, len, "%s: %s", e->source, e->text);
    else
        snprintf(buf, len, "%s", e->text);
}

void err_print(FILE *f, const err_t *e)
{
    char buf[ERR_SOURCE_LEN + ERR_TEXT_LEN + 64];
    err_format(e, buf, sizeof buf);
    fprintf(f, "%s\n", buf);
}

static int rank(int code)
{
    switch (code) {
    case EXIT_SYSTEM: return 3;
    case EXIT_INPUT: return 2;
    case EXIT_VERIFY: return 1;
    default: return 0;
    }
}

int exit_worst(int a, int b) { return rank(a) >= rank(b) ? a : b; }
