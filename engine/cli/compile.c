/* compile.c — see compile.h. */
#include "compile.h"

#include "arch.h"
#include "jit.h"
#include "labjit.h"
#include "setup.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int write_out(const char *dir, const char *name, const char *ext, const void *data, size_t len, err_t *err)
{
    char *path = xasprintf("%s/%s%s", dir, name, ext);
    FILE *f = fopen(path, "wb");
    int rc = 0;
    if (!f || fwrite(data, 1, len, f) != len)
        rc = err_set(err, ERR_SYSTEM, path, 0, 0, "cannot write: %s", strerror(errno));
    if (f && fclose(f) != 0 && !rc)
        rc = err_set(err, ERR_SYSTEM, path, 0, 0, "cannot write: %s", strerror(errno));
    free(path);
    return rc;
}

int compile_main(const opts_t *o)
{
    setup_t su;
    memset(&su, 0, sizeof su);
    err_t err;
    err_clear(&err);
    int worst = EXIT_OK;
    config_t *cfgs = NULL;
    build_job *jobs = NULL;
    if (setup_target(&su, o, 0, false, &err) || setup_cache(&su, o, false, &err) || setup_pool(&su, o, &err)) {
        err_print(stderr, &err);
        worst = err.code;
        goto out;
    }
    if (o->emit) {
        struct stat st;
        if (stat(o->emit, &st) != 0 && mkdir(o->emit, 0755) != 0) {
            worst = usage_error("--emit %s: cannot create directory: %s", o->emit, strerror(errno));
            goto out;
        }
    }
    double t0 = now_ms();
    cfgs = xcalloc(o->nentries, sizeof *cfgs);
    jobs = xcalloc(o->nentries, sizeof *jobs);
    build_job **args = xcalloc(o->nentries, sizeof *args);
    size_t na = 0;
    for (size_t i = 0; i < o->nentries; i++) {
        err_clear(&err);
        size_t nsets;
        char **sets = setup_entry_sets(o, &o->entries[i], &nsets);
        int rc = setup_load_entry(o, &o->entries[i], su.arch, (const char *const *)sets, nsets, &cfgs[i], &err);
        setup_sets_free(sets, nsets);
        if (rc) {
            err_print(stderr, &err);
            worst = exit_worst(worst, err.code);
            continue;
        }
        build_job_init(&jobs[i], &cfgs[i], su.arch, su.smem_limit, o->shape.m, o->shape.n, o->shape.k);
        /* The options' layout (checked when they were parsed) and its alignment on aligned buffers. */
        if (cli_layout(o, &o->shape, &jobs[i].lay, &err) == 0)
            layout_align_ld(&jobs[i].lay, dtype_size(cfgs[i].dtype), &jobs[i].align);
        args[na++] = &jobs[i];
    }
    build_jobs_run(&su.pool, args, na);
    free(args);
    printf("%-20s %-10s %-6s %-4s %7s %5s %6s %6s %6s %8s %8s %8s %-6s %s\n", "config", "template", "arch", "type",
           "threads", "regs", "stack", "spillS", "spillL", "smem-st", "smem-dyn", "ms", "cubin", "switches");
    size_t built = 0;
    for (size_t i = 0; i < o->nentries; i++) {
        build_job *j = &jobs[i];
        if (!j->cfg)
            continue;
        const config_t *c = j->cfg;
        if (j->rc) {
            err_print(stderr, &j->err);
            worst = exit_worst(worst, j->err.code);
            continue;
        }
        built++;
        kernel_t *k = &j->k;
        const plan_launch *l = &k->plan.launches[k->plan.main_launch];
        const jit_func_info *fi = k->info;
        char an[16];
        printf("%-20s %-10s %-6s %-4s %7lld %5d %6d %6d %6d %8d %8lld %8.1f %-6s %s\n", c->label, c->tpl.name,
               arch_name(j->arch, an, sizeof an), dtype_name(c->dtype), (long long)(l->block[0] * l->block[1] * l->block[2]),
               fi ? fi->regs : -1, fi ? fi->stack : -1, fi ? fi->spill_stores : -1, fi ? fi->spill_loads : -1,
               fi ? fi->smem_static : -1, (long long)l->smem, k->jit->compile_ms,
               j->origin == JIT_COMPILED ? "nvrtc" : "cache", k->plan.switches);
        if (o->verbose)
            printf("---- NVRTC log of %s ----\n%s", c->label, k->jit->log);
        if (o->emit) {
            err_clear(&err);
            if (write_out(o->emit, c->name, ".cu", k->plan.source, strlen(k->plan.source), &err) ||
                write_out(o->emit, c->name, ".ptx", k->jit->ptx, strlen(k->jit->ptx), &err) ||
                write_out(o->emit, c->name, ".cubin", k->jit->cubin, k->jit->cubin_size, &err)) {
                err_print(stderr, &err);
                worst = exit_worst(worst, err.code);
            }
        }
    }
    jit_stats js;
    jit_get_stats(lab_jit(), &js);
    char aname[16];
    arch_name(su.arch, aname, sizeof aname);
    printf("compile: %zu of %zu configs for %s in %.2f s on %d threads: %lu NVRTC compiles, %lu from the cache%s%s\n",
           built, o->nentries, aname, (now_ms() - t0) * 1e-3, su.pool.nthreads, js.nvrtc, js.disk_hits + js.mem_hits,
           su.have_cache ? " " : " (--no-cache)", su.have_cache ? su.cache.dir : "");
out:
    for (size_t i = 0; jobs && i < o->nentries; i++)
        if (jobs[i].cfg) {
            build_job_free(&jobs[i]);
            config_free(&cfgs[i]);
        }
    free(jobs);
    free(cfgs);
    setup_free(&su);
    return worst;
}
