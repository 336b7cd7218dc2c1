/* jit.h — NVRTC: pasted template source to a CUBIN for one architecture, with the resource usage
 * ptxas reports, cached in memory for the life of the process (a verify sweep compiles each
 * config once per distinct set of shape switches). Needs no GPU. */
#ifndef ENGINE_JIT_H
#define ENGINE_JIT_H

#include "err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct {
    char name[128];   /* kernel (entry function) name */
    int regs;         /* registers per thread */
    int stack;        /* bytes of stack frame per thread */
    int spill_stores; /* bytes */
    int spill_loads;  /* bytes */
    int smem_static;  /* bytes of static shared memory */
    int barriers;
} jit_func_info;

#define JIT_MAX_FUNCS 8
typedef struct {
    char *cubin;
    size_t cubin_size;
    char *ptx;
    size_t ptx_size;
    char *log;         /* NVRTC + ptxas output */
    double compile_ms; /* wall time of nvrtcCompileProgram */
    jit_func_info funcs[JIT_MAX_FUNCS];
    size_t nfuncs;
    bool from_cache; /* this request was served without compiling */
} jit_result;

#define JIT_MAX_INCLUDES 16

/* Compile source for sm_<arch>. prog_name names the NVRTC program (it shows up in profilers and in
 * messages); include_dirs are searched in order by #include "..."; label is the config. The
 * result belongs to the cache: do not free it. A compile error prints the log and the numbered
 * source to stderr under a banner and sets err to EXIT_INPUT. */
int jit_compile(const char *prog_name, const char *source, const char *const *include_dirs, size_t ninc,
                int arch, const char *label, const jit_result **out, err_t *err);

/* Resource usage of one kernel of a result, or NULL when ptxas did not mention it. */
const jit_func_info *jit_func(const jit_result *r, const char *name);

/* Parse ptxas -v output into funcs (exposed for tests). Returns how many kernels it found. */
size_t jit_parse_ptxas(const char *log, jit_func_info *funcs, size_t max);

/* Drop every cached result. */
void jit_cache_free(void);

/* Print source with line numbers: lines before the `#line 1` directive are the pasted prelude
 * (numbered p1, p2, ...), the rest carry the template's own line numbers. */
void jit_print_numbered(FILE *f, const char *source);

#endif
