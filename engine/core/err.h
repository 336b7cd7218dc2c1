/* err.h — errors as values, shaped like jansson's json_error_t.
 *
 * Every function that can fail for a reason tied to one config (bad input, a failed compile, a CUDA
 * error while running it) fills an err_t and returns non-zero, so that a sweep can report the config
 * and go on to the next one. The first error set wins: later calls to err_set are ignored, so the
 * innermost, most precise message survives. */
#ifndef ENGINE_ERR_H
#define ENGINE_ERR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

/* Exit codes (documented in README.md and `engine --help`). The worst outcome of a run wins. */
enum {
    EXIT_OK = 0,
    EXIT_VERIFY = 1, /* a kernel computed a wrong result */
    EXIT_INPUT = 2,  /* usage, config, constraint, shape, arch, or a template that fails to compile */
    EXIT_SYSTEM = 3, /* no driver or GPU, out of memory, kernel fault, any other CUDA/system failure */
};

#define ERR_SOURCE_LEN 512
#define ERR_TEXT_LEN 1024

typedef struct {
    int code;                    /* one of the EXIT_* values; 0 while no error is set */
    char source[ERR_SOURCE_LEN]; /* file path, "--set KEY=VALUE", "engine", ...; may be empty */
    int line;                    /* 1-based line in source, 0 when not known */
    int column;                  /* 1-based column in source, 0 when not known */
    char text[ERR_TEXT_LEN];     /* the rule broken, in one line */
} err_t;

void err_clear(err_t *e);
static inline bool err_isset(const err_t *e) { return e->code != 0; }

/* Record an error unless one is already recorded. Returns code, so `return err_set(...)` reads well. */
int err_set(err_t *e, int code, const char *source, int line, int column, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
int err_vset(err_t *e, int code, const char *source, int line, int column, const char *fmt, va_list ap);

/* Print "source:line:column: text" (the parts that are known), one line, like a compiler does. */
void err_print(FILE *f, const err_t *e);
/* The same line into buf. */
void err_format(const err_t *e, char *buf, size_t len);

/* Worst of two exit codes: system > input > verify > ok. */
int exit_worst(int a, int b);

#endif
