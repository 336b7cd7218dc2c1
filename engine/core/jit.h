/* jit.h — NVRTC: pasted template source to a CUBIN for one architecture, with the resource usage
 * ptxas reports. A jit_t is one compiler's state: the results it keeps in memory (a verify sweep
 * compiles each config once per distinct set of shape switches), its counts, its reporter and the
 * on-disk cache it uses between runs and between processes (cache.h; the key is the SHA-256 of
 * everything the CUBIN depends on). Each library context owns one and the command one for its
 * process, so two contexts share no memory cache, counts or cache pointer: what they share is the
 * disk cache's directory, which is safe between processes already (atomic writes). Safe to call
 * from several threads at once (the compile pool does); a source being compiled by one thread is
 * waited for, not compiled twice. Needs no GPU. */
#ifndef ENGINE_JIT_H
#define ENGINE_JIT_H

#include "cache.h"
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
    double compile_ms; /* wall time of nvrtcCompileProgram when it was compiled (maybe by another run) */
    jit_func_info funcs[JIT_MAX_FUNCS];
    size_t nfuncs;
    char key[65]; /* the cache key: SHA-256 in hex */
} jit_result;

/* Where a request was served from. */
typedef enum { JIT_COMPILED = 0, JIT_MEMORY, JIT_DISK } jit_origin;

typedef struct jit jit_t;

/* A compiler with nothing in memory, no disk cache and no reporter; NULL when there is no host
 * memory for it. jit_free drops its results (jit_cache_free) and itself; NULL is ignored. */
jit_t *jit_new(void);
void jit_free(jit_t *j);

/* Counts since jit_new (or jit_cache_free). */
typedef struct {
    unsigned long nvrtc;      /* NVRTC compiles run */
    unsigned long disk_hits;  /* served from the on-disk cache */
    unsigned long mem_hits;   /* served from memory (compiled or loaded earlier by this process) */
    unsigned long corrupt;    /* damaged disk entries found (and rebuilt) */
} jit_stats;

#define JIT_MAX_INCLUDES 16

/* Compile source for sm_<arch>. prog_name names the NVRTC program (it shows up in profilers and in
 * messages); include_dirs are searched in order by #include "..."; label is the config. The
 * result belongs to j: do not free it. origin (may be NULL) says where it came from. A compile
 * error goes to j's reporter (once per source) and sets err to EXIT_INPUT. */
int jit_compile(jit_t *j, const char *prog_name, const char *source, const char *const *include_dirs, size_t ninc,
                int arch, const char *label, const jit_result **out, jit_origin *origin, err_t *err);

/* Make sure source's CUBIN is in the on-disk cache (or already in memory), without keeping it in
 * memory: compiled when neither has it, written to disk, freed (engine warm: hundreds of entries
 * would otherwise stay resident). origin says where it was found (JIT_COMPILED: compiled now). A
 * compile under way in another thread is waited for. Without a disk cache it only compiles. */
int jit_prepare(jit_t *j, const char *prog_name, const char *source, const char *const *include_dirs, size_t ninc, int arch,
                const char *label, jit_origin *origin, err_t *err);

/* Drop one result from memory (a tune of thousands of points keeps none it is done with; the
 * disk cache still has it). r must not be used afterwards. */
void jit_forget(jit_t *j, const jit_result *r);

/* Use c as the on-disk cache from now on; NULL: none. Waits until no thread reads or writes the
 * previous one (a compile that found no CUBIN holds it until it has written one), so the caller may
 * free the previous cache once this returns; c must stay alive until it is replaced. */
void jit_set_cache(jit_t *j, const cache_t *c);
void jit_get_stats(jit_t *j, jit_stats *s);

/* What jit has to say beyond a call's err: a failed compile's whole log with its pasted source, and a
 * cache entry that is damaged or cannot be written. Core prints nothing: these go to the reporter
 * the caller sets (the command's prints them on stderr: cli/jitlog.c). With none (the library's
 * case, and the default) they go nowhere: the first error line is the call's err, and a rebuilt
 * entry is counted in jit_stats. Either callback may be NULL. */
typedef struct {
    void (*compile_failed)(void *user, const char *label, const char *prog, int arch, const char *error,
                           const char *log, const char *source);
    void (*cache_warning)(void *user, const err_t *warning);
    void *user;
} jit_reporter;
/* Use r (copied; NULL: none) from now on. Set it before compiles start: it is read unlocked. */
void jit_set_reporter(jit_t *j, const jit_reporter *r);

/* Resource usage of one kernel of a result, or NULL when ptxas did not mention it. */
const jit_func_info *jit_func(const jit_result *r, const char *name);

/* Parse ptxas -v output into funcs (exposed for tests). Returns how many kernels it found. */
size_t jit_parse_ptxas(const char *log, jit_func_info *funcs, size_t max);

/* Drop every result kept in memory and reset the counts (the disk cache is left alone). */
void jit_cache_free(jit_t *j);

/* Print source with line numbers: lines before the `#line 1` directive are the pasted prelude
 * (numbered p1, p2, ...), the rest carry the template's own line numbers. */
void jit_print_numbered(FILE *f, const char *source);

#endif
