/* warmcmd.c — see warmcmd.h. */
#define _GNU_SOURCE
#include "warmcmd.h"

#include "arch.h"
#include "cache.h"
#include "gpu.h"
#include "jit.h"
#include "jitlog.h"
#include "labjit.h"
#include "progress.h"
#include "util.h"
#include "warm.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void show(void *user, const warm_stats *st, const char *label)
{
    progress_show(user, st->done == st->total, "warm: %zu/%zu kernels (compiled %zu, cached %zu, failed %zu) %s",
                  st->done, st->total, st->compiled, st->cached, st->failed, label);
}

int warm_main(const opts_t *o)
{
    err_t err;
    err_clear(&err);
    cache_t cache;
    if (cache_open(&cache, o->cache_dir, &err)) {
        err_print(stderr, &err);
        return EXIT_SYSTEM;
    }
    jit_set_cache(lab_jit(), &cache);
    jitlog_init(true); /* a failed compile is one line of the summary, not a log */
    /* Every dtype, op and kind of product: each pick holds the entries wisdom weighs for it. */
    pick_t *picks[DTYPE_COUNT * 4 * 2];
    size_t n = 0;
    int rc = EXIT_OK;
    for (int d = 0; d < DTYPE_COUNT && !rc; d++)
        for (int op = 0; op < 4 && !rc; op++)
            for (int b = 0; b < 2 && !rc; b++) {
                pick_params pp = {.device = o->device, .probe = true, .arch = o->arch, .sms = o->sms,
                                  .device_name = o->device_name, .wisdom_dir = o->wisdom, .warn = NULL,
                                  .dtype = (dtype_t)d, .op = op, .batch = b ? 2 : 1};
                pick_t *pk = xcalloc(1, sizeof *pk);
                if (pick_init_with(pk, &pp, NULL, 0, &err)) {
                    free(pk);
                    rc = EXIT_INPUT;
                } else {
                    picks[n++] = pk;
                }
            }
    if (!rc) {
        gpu_t g = {0};
        err_t ignored;
        err_clear(&ignored);
        int arch = n ? picks[0]->arch : 90;
        const arch_info *ai = arch_lookup(arch);
        int64_t smem = gpu_driver_present() && gpu_probe(&g, o->device, &ignored) == 0 && g.smem_optin > 0 && !o->arch
                           ? g.smem_optin
                           : ai ? ai->smem_optin : 232448;
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        int jobs = o->jobs > 0 ? o->jobs : cores > 0 ? (int)cores : 1;
        progress_t prog;
        progress_init(&prog);
        warm_stats st;
        err_t first;
        err_clear(&first);
        char name[16];
        printf("warm: wisdom of %s (%s) into %s, %d threads\n", *picks[0]->device ? picks[0]->device : "no GPU",
               arch_name(arch, name, sizeof name), cache.dir, jobs);
        fflush(stdout);
        int wr = warm_run(lab_jit(), picks, n, smem, jobs, show, &prog, &st, &first);
        progress_clear(&prog);
        printf("warm: %zu kernels in %.1f s: %zu compiled, %zu already cached, %zu failed\n", st.total, st.ms / 1e3,
               st.compiled, st.cached, st.failed);
        if (wr == -2) { /* no host memory for the list of kernels: exit 3, as the command's xoom does */
            err_print(stderr, &first);
            rc = first.code;
        } else if (wr) {
            fprintf(stderr, "warm: the first failure: ");
            err_print(stderr, &first);
            rc = EXIT_INPUT;
        }
    } else {
        err_print(stderr, &err);
    }
    for (size_t i = 0; i < n; i++) {
        pick_free(picks[i]);
        free(picks[i]);
    }
    jit_set_cache(lab_jit(), NULL);
    jit_cache_free(lab_jit());
    cache_close(&cache);
    return rc;
}
