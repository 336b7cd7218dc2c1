/* jitlog.c — see jitlog.h. */
#define _POSIX_C_SOURCE 200809L
#include "jitlog.h"

#include "arch.h"
#include "jit.h"
#include "labjit.h"

#include <stdio.h>

static void compile_failed(void *user, const char *label, const char *prog, int arch, const char *error,
                           const char *log, const char *source)
{
    (void)user;
    char name[16];
    /* One banner at a time: compiles run on several threads. */
    flockfile(stderr);
    fprintf(stderr, "==== compile of config %s (program %s, %s) failed: %s ====\n", label, prog,
            arch_name(arch, name, sizeof name), error);
    fprintf(stderr, "%s\n---- pasted source ----\n", log);
    jit_print_numbered(stderr, source);
    fprintf(stderr, "==== end of %s ====\n", prog);
    funlockfile(stderr);
}

static void cache_warning(void *user, const err_t *w)
{
    (void)user;
    err_print(stderr, w);
}

void jitlog_init(bool quiet)
{
    const jit_reporter r = {.compile_failed = quiet ? NULL : compile_failed, .cache_warning = cache_warning};
    jit_set_reporter(lab_jit(), &r);
}
