/* setup.c — see setup.h. */
#define _POSIX_C_SOURCE 200809L
#include "setup.h"

#include "arch.h"
#include "blas.h"
#include "jit.h"
#include "labjit.h"
#include "util.h"
#include "worker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int setup_cache(setup_t *su, const opts_t *o, bool workers, err_t *err)
{
    if (o->no_cache) {
        if (!workers)
            return 0;
        if (cache_open_temp(&su->cache, err))
            return -1;
    } else if (o->cache_dir) {
        if (cache_open(&su->cache, o->cache_dir, err))
            return -1;
    } else if (cache_open(&su->cache, NULL, err)) {
        /* The default place is unusable (no HOME, read-only): a cache saves time, not results. */
        err_print(stderr, err);
        fprintf(stderr, "engine: using a temporary CUBIN cache for this run (--cache DIR picks another place)\n");
        err_clear(err);
        if (cache_open_temp(&su->cache, err))
            return -1;
    }
    su->have_cache = true;
    jit_set_cache(lab_jit(), &su->cache);
    return 0;
}

int setup_target(setup_t *su, const opts_t *o, int device, bool need_gpu, err_t *err)
{
    /* The workers read ENGINE_CUBLAS_MATH too, and ENGINE_SETUP_TIMEOUT sets their set-up's deadline:
     * a bad value of either is refused here, before any GPU work. */
    if (need_gpu && (blas_math_from_env(&su->cublas_pedantic, err) || worker_setup_env_check(err)))
        return -1;
    /* With --arch the engine needs no driver: its workers open the GPU and report on it. */
    if (need_gpu && !o->arch) {
        if (gpu_probe(&su->gpu, device, err))
            return -1;
        su->have_gpu = true;
    } else if (gpu_driver_present()) {
        err_t ignored;
        err_clear(&ignored);
        su->have_gpu = gpu_probe(&su->gpu, device, &ignored) == 0;
    }
    su->arch_guessed = !o->arch;
    if (o->arch)
        su->arch = o->arch;
    else if (su->have_gpu)
        su->arch = su->gpu.sm;
    else {
        su->arch = 90;
        fprintf(stderr, "engine: no GPU found; compiling for sm_90 (use --arch to choose)\n");
    }
    su->smem_limit = su->have_gpu && su->gpu.sm == arch_sm(su->arch) && su->gpu.smem_optin > 0
                         ? su->gpu.smem_optin
                         : arch_lookup(su->arch)->smem_optin;
    return 0;
}

int setup_pool(setup_t *su, const opts_t *o, err_t *err)
{
    if (pool_init(&su->pool, o->jobs))
        return err_set(err, ERR_SYSTEM, "engine", 0, 0, "cannot start %d compile threads", o->jobs);
    su->have_pool = true;
    return 0;
}

void setup_free(setup_t *su)
{
    if (su->have_pool)
        pool_free(&su->pool);
    /* Results in memory point nowhere once the cache goes: drop them first. */
    jit_cache_free(lab_jit());
    jit_set_cache(lab_jit(), NULL);
    if (su->have_cache)
        cache_close(&su->cache);
    memset(su, 0, sizeof *su);
}

char **setup_entry_sets(const opts_t *o, const entry_t *e, size_t *n)
{
    char **v = xcalloc(o->nsets + e->nsets + 1, sizeof *v);
    *n = 0;
    for (size_t i = 0; i < o->nsets; i++) {
        const char *eq = strchr(o->set_text[i], '=');
        size_t klen = eq ? (size_t)(eq - o->set_text[i]) : strlen(o->set_text[i]);
        bool shadowed = false;
        for (size_t j = 0; j < e->nsets && !shadowed; j++)
            shadowed = strncmp(e->sets[j], o->set_text[i], klen) == 0 && e->sets[j][klen] == '=';
        if (!shadowed)
            v[(*n)++] = xstrdup(o->set_text[i]);
    }
    for (size_t j = 0; j < e->nsets; j++)
        v[(*n)++] = xstrdup(e->sets[j]);
    return v;
}

void setup_sets_free(char **sets, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(sets[i]);
    free(sets);
}

int setup_load_entry(const opts_t *o, const entry_t *e, int arch, const char *const *sets, size_t nsets,
                     config_t *c, err_t *err)
{
    param_set ps[2 * CLI_MAX_SETS];
    size_t n = 0;
    int rc = 0;
    for (size_t i = 0; i < nsets && n < 2 * CLI_MAX_SETS && !rc; i++) {
        /* An override the entry's @LIST line gave (setup_entry_sets passes them as they are) is
         * reported at that line; the others are the command line's --set. */
        bool listed = false;
        for (size_t j = 0; j < e->nsets && !listed; j++)
            listed = strcmp(sets[i], e->sets[j]) == 0;
        const char *file = listed ? e->list : NULL;
        if (param_set_parse_at(sets[i], file, file ? e->line : 0, &ps[n], err) == 0)
            n++;
        else
            rc = -1;
    }
    /* A list line naming a config that is not there: the line is where to fix it. */
    if (!rc && e->list && access(e->path, F_OK) != 0)
        rc = err_set(err, ERR_INPUT, e->list, e->line, 0, "%s: cannot read config: %s", e->path, strerror(errno));
    if (!rc)
        rc = config_load_guess(e->path, ps, n, o->dtype, arch, !o->arch, c, err);
    for (size_t i = 0; i < n; i++)
        param_set_free(&ps[i]);
    return rc;
}
