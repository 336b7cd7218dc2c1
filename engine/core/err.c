/* err.c — error values and their one-line rendering. */
#include "err.h"

#include <string.h>

void err_clear(err_t *e) { memset(e, 0, sizeof *e); }

int err_exit_code(int cause)
{
    switch (cause) {
    case ERR_NONE: return EXIT_OK;
    case ERR_VERIFY: return EXIT_VERIFY;
    case ERR_SYSTEM:
    case ERR_NO_GPU:
    case ERR_CUDA:
    case ERR_ALLOC: return EXIT_SYSTEM;
    case ERR_INTERRUPTED: return 130;
    default: return EXIT_INPUT;
    }
}

const char *err_cause_name(int cause)
{
    switch (cause) {
    case ERR_NONE: return "none";
    case ERR_VERIFY: return "verify";
    case ERR_INPUT: return "input";
    case ERR_SYSTEM: return "system";
    case ERR_ARGUMENT: return "argument";
    case ERR_MISALIGNED: return "misaligned";
    case ERR_DTYPE: return "dtype";
    case ERR_CONFIG: return "config";
    case ERR_UNSUPPORTED: return "unsupported";
    case ERR_COMPILE: return "compile";
    case ERR_NO_GPU: return "no-gpu";
    case ERR_CUDA: return "cuda";
    case ERR_ALLOC: return "alloc";
    case ERR_INTERRUPTED: return "interrupted";
    default: return "unknown";
    }
}

void err_set_cause(err_t *e, int cause)
{
    if (e && e->code) {
        e->cause = cause;
        e->code = err_exit_code(cause);
    }
}

int err_vset(err_t *e, int cause, const char *source, int line, int column, const char *fmt, va_list ap)
{
    const int code = err_exit_code(cause);
    if (e == NULL || e->code != 0)
        return code;
    e->code = code;
    e->cause = cause;
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

int err_set(err_t *e, int cause, const char *source, int line, int column, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = err_vset(e, cause, source, line, column, fmt, ap);
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
