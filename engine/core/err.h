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

/* Why something failed. err_set takes a cause; err_t keeps it and the exit code it maps to
 * (err_exit_code, the one place causes become exit codes); the library maps causes to engine_status
 * in one place too (api.c). The first three are the generic causes, numerically the exit codes they
 * map to, so a site that knows no more than the class says just that. */
typedef enum {
    ERR_NONE = 0,
    ERR_VERIFY = EXIT_VERIFY, /* a kernel computed a wrong result */
    ERR_INPUT = EXIT_INPUT,   /* bad input: usage, a file, a value, a rule (generic) */
    ERR_SYSTEM = EXIT_SYSTEM, /* the system failed (generic) */
    ERR_ARGUMENT = 16,        /* a library call's argument: null, negative, a bad enum */
    ERR_MISALIGNED,           /* a pointer not of the alignment asked */
    ERR_DTYPE,                /* a config of the other dtype */
    ERR_CONFIG,               /* a config, template or wisdom file that does not load; nothing to run */
    ERR_UNSUPPORTED,          /* a template refuses this layout, shape or target */
    ERR_COMPILE,              /* NVRTC failed on a kernel */
    ERR_NO_GPU,               /* no driver, no such device */
    ERR_CUDA,                 /* a driver call failed */
    ERR_ALLOC,                /* out of memory, host or device */
    ERR_INTERRUPTED,          /* a signal stopped the run (exit 130, as a shell reports SIGINT) */
} err_cause;

/* The exit code of a cause: 1 verify, 2 input (ARGUMENT to COMPILE), 3 system (NO_GPU to ALLOC),
 * 130 interrupted. */
int err_exit_code(int cause);
const char *err_cause_name(int cause);

#define ERR_SOURCE_LEN 512
#define ERR_TEXT_LEN 1024

typedef struct {
    int code;                    /* the exit code of cause (EXIT_*); 0 while no error is set */
    int cause;                   /* an err_cause */
    char source[ERR_SOURCE_LEN]; /* file path, "--set KEY=VALUE", "engine", ...; may be empty */
    int line;                    /* 1-based line in source, 0 when not known */
    int column;                  /* 1-based column in source, 0 when not known */
    char text[ERR_TEXT_LEN];     /* the rule broken, in one line */
} err_t;

void err_clear(err_t *e);
static inline bool err_isset(const err_t *e) { return e->code != 0; }

/* Record an error of this cause unless one is already recorded. Returns the cause's exit code, so
 * `return err_set(...)` reads well. */
int err_set(err_t *e, int cause, const char *source, int line, int column, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
int err_vset(err_t *e, int cause, const char *source, int line, int column, const char *fmt, va_list ap);
/* Say more precisely why the recorded error happened (a compile, a refused plan), where the site
 * that set it knew only the class; the exit code follows. Nothing when no error is set. */
void err_set_cause(err_t *e, int cause);

/* Print "source:line:column: text" (the parts that are known), one line, like a compiler does. */
void err_print(FILE *f, const err_t *e);
/* The same line into buf. */
void err_format(const err_t *e, char *buf, size_t len);

/* Worst of two exit codes: system > input > verify > ok. */
int exit_worst(int a, int b);

#endif
