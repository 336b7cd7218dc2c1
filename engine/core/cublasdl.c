/* cublasdl.c — see cublasdl.h. */
#define _GNU_SOURCE
#include "cublasdl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* cublas_v2.h maps names to versioned symbols (cublasCreate -> cublasCreate_v2): expanding before
 * stringifying asks dlsym for exactly the symbol the header would have linked (as gpu.c does). */
#define STR_(x) #x
#define STR(x) STR_(x)

static cublasdl_t g_table;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static void *g_lib;
static char g_why[512];

/* The sonames of the toolkits engine builds with, newest first; then the unversioned name. Found
 * through the process's run path (the Makefile's -rpath to CUDA's libraries) or torch's. */
static void load_once(void)
{
    static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    void *lib = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(g_why, sizeof g_why, "libcublas could not be loaded (%s)", e ? e : "not found");
        return;
    }
#define X(f)                                                                                       \
    {                                                                                              \
        void *sym = dlsym(lib, STR(f));                                                            \
        if (!sym) {                                                                                \
            snprintf(g_why, sizeof g_why, "libcublas has no symbol %s", STR(f));                   \
            dlclose(lib);                                                                          \
            return;                                                                                \
        }                                                                                          \
        memcpy(&g_table.f, &sym, sizeof sym);                                                      \
    }
    CUBLASDL_FUNCS(X)
#undef X
    g_lib = lib;
}

const cublasdl_t *cublasdl_load(err_t *err)
{
    pthread_once(&g_once, load_once);
    if (!g_lib) {
        err_set(err, ERR_SYSTEM, "engine", 0, 0, "%s", g_why);
        return NULL;
    }
    return &g_table;
}
