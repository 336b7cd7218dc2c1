/* setup.h — what every command that compiles or runs kernels sets up first: the CUBIN cache, the
 * target architecture (from the GPU, probed without a context, unless --arch names one), the pool
 * of compile threads, and the configs named on the command line. The build job the pool runs is
 * lab/buildjob.h. */
#ifndef ENGINE_SETUP_H
#define ENGINE_SETUP_H

#include "cache.h"
#include "cli.h"
#include "gpu.h"
#include "buildjob.h"
#include "pool.h"
#include "session.h"

typedef struct {
    cache_t cache;
    bool have_cache;
    pool_t pool;
    bool have_pool;
    int arch;           /* target, e.g. 90: --arch's, else the GPU's compute capability */
    bool arch_guessed;  /* no --arch: a config's template may ask for sm_90a (arch_for_template) */
    int64_t smem_limit; /* bytes of shared memory a block may opt in to on the target */
    gpu_t gpu;          /* the GPU's properties (no context), when have_gpu */
    bool have_gpu;
    bool cublas_pedantic; /* the workers' cuBLAS in strict math (ENGINE_CUBLAS_MATH, blas.h) */
} setup_t;

/* The CUBIN cache for this run: --cache DIR, the default directory, or with --no-cache none at
 * all (workers == false) or a private temporary one (workers == true: the worker processes must
 * find what the engine compiled). An unusable default directory is reported and replaced by a
 * temporary one; an unusable --cache DIR is an error. Makes it jit's cache. */
int setup_cache(setup_t *su, const opts_t *o, bool workers, err_t *err);

/* The target: --arch, else the GPU `device`'s, probed without a context (need_gpu: no GPU is then
 * an error; otherwise sm_90 and a note on stderr). Without --arch the target is guessed: configs
 * whose template declares "arch_specific" (tc32.cu: wgmma) are then loaded and built for sm_90a on
 * sm_90 (setup_load_entry, arch_for_template), so wisdom and --auto can choose them; all others for
 * sm_90. With --arch no driver is needed here: the worker processes find out whether there is a GPU. */
int setup_target(setup_t *su, const opts_t *o, int device, bool need_gpu, err_t *err);

/* The compile pool, --jobs threads (default: one per core). */
int setup_pool(setup_t *su, const opts_t *o, err_t *err);

void setup_free(setup_t *su);

/* Overrides for one entry: the command line's --set, then the entry's own (which win). */
char **setup_entry_sets(const opts_t *o, const entry_t *e, size_t *n);
void setup_sets_free(char **sets, size_t n);

/* Load one entry for arch, applying its overrides; without --arch (o->arch 0) arch counts as
 * guessed, and the config's target (c->arch) is its template's (arch_for_template). */
int setup_load_entry(const opts_t *o, const entry_t *e, int arch, const char *const *sets, size_t nsets,
                     config_t *c, err_t *err);

#endif
