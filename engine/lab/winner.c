/* winner.c — see winner.h: the winner of a tune written as a ready config, or kept in wisdom. */
#define _GNU_SOURCE /* realpath */
#include "winner.h"

#include "accuracy.h"
#include "arch.h"
#include "paths.h"
#include "util.h"
#include "wisdom.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int winner_write(const result_row *r, const char *name, const char *src_config_path, const char *out_path, err_t *err)
{
    if (!r->status || strcmp(r->status, "ok") != 0)
        return err_set(err, ERR_INPUT, out_path, 0, 0,
                       "refusing to write point \"%s\" as a config: its status is %s, not ok", r->key ? r->key : "",
                       r->status ? r->status : "unset"),
               -1;
    if (!name || !*name)
        return err_set(err, ERR_INPUT, out_path, 0, 0, "a tuned config needs a name"), -1;
    const char *slash = strrchr(out_path, '/');
    const char *base = slash ? slash + 1 : out_path;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return err_set(err, ERR_INPUT, out_path, 0, 0, "the output path must name a file"), -1;
    char *dir = path_dirname(out_path);
    char *rdir = realpath(dir, NULL);
    if (!rdir) {
        err_set(err, ERR_INPUT, out_path, 0, 0, "cannot write the config: directory %s: %s", dir, strerror(errno));
        free(dir);
        return -1;
    }
    char *target = xasprintf("%s/%s", strcmp(rdir, "/") == 0 ? "" : rdir, base);
    char *rsrc = src_config_path ? realpath(src_config_path, NULL) : NULL;
    bool same = rsrc && strcmp(rsrc, target) == 0;
    free(rsrc);
    free(target);
    free(rdir);
    if (same) {
        free(dir);
        return err_set(err, ERR_INPUT, out_path, 0, 0,
                       "refusing to overwrite the source config %s with the tuned one; choose another output path",
                       src_config_path),
               -1;
    }

    strbuf sb;
    sb_init(&sb);
    sb_add(&sb, "{\n  \"name\": ");
    sb_add_json_string(&sb, name);
    sb_add(&sb, ",\n  \"template\": ");
    sb_add_json_string(&sb, r->tmpl);
    sb_add(&sb, ",\n  \"dtype\": ");
    sb_add_json_string(&sb, r->dtype);
    sb_add(&sb, ",\n  \"params\": {");
    for (size_t i = 0; i < r->nparams; i++) {
        if (i)
            sb_add(&sb, ", ");
        sb_add_json_string(&sb, r->param_names[i]);
        sb_addf(&sb, ": %lld", (long long)r->param_values[i]);
    }
    sb_add(&sb, "},\n  \"description\": ");
    strbuf d;
    sb_init(&d);
    sb_addf(&d, "tuned by engine tune for %lldx%lldx%lld", (long long)r->M, (long long)r->N, (long long)r->K);
    if (r->device && *r->device)
        sb_addf(&d, " on %s", r->device);
    char *today = r->time ? NULL : utc_now(); /* a row not read from a log: measured just now */
    const char *when = r->time ? r->time : today;
    if (strlen(when) >= 10)
        sb_addf(&d, " (%.10s)", when);
    free(today);
    sb_add(&d, ":");
    const char *sep = " ";
    if (r->tflops >= 0) {
        sb_addf(&d, "%s%.2f TFLOP/s", sep, r->tflops);
        sep = ", ";
    }
    if (r->pct_cublas >= 0) {
        sb_addf(&d, "%s%.1f %% of cuBLAS", sep, r->pct_cublas);
        sep = ", ";
    }
    if (r->runs >= 0) {
        sb_addf(&d, "%smedian of %d runs", sep, r->runs);
        sep = ", ";
    } else {
        sb_addf(&d, "%s%.4f ms", sep, r->ms);
        sep = ", ";
    }
    if (r->ms > 0 && r->ms_min >= 0 && r->ms_max >= 0)
        sb_addf(&d, "%sspread %.1f%%", sep, 100.0 * (r->ms_max - r->ms_min) / r->ms);
    sb_add_json_string(&sb, d.buf);
    sb_free(&d);
    sb_add(&sb, "\n}\n");

    free(dir);
    /* Atomically: a reader sees the old file or the whole new one, never half of it. */
    int rc = 0, step = write_file_atomic(out_path, sb.buf, sb.len);
    if (step != WRITE_OK) {
        err_set(err, step == WRITE_DATA ? ERR_SYSTEM : ERR_INPUT, out_path, 0, 0, "cannot write the config: %s",
                strerror(errno));
        rc = -1;
    }
    sb_free(&sb);
    return rc;
}

int winner_check_class(const config_t *base, err_t *err)
{
    acc_class own = acc_class_of(ACC_NATIVE, base->dtype), held = acc_class_of(base->accuracy, base->dtype);
    if (held != own)
        return err_set(err, ERR_INPUT, base->path, 0, 0,
                       "--wisdom: config %s is held to accuracy class %s, and --auto runs %s entries as %s kernels: tune it without --wisdom",
                       base->name, acc_class_name(held), dtype_name(base->dtype), acc_class_name(own)),
               -1;
    return 0;
}

/* Whether two entries have the same key: dtype, op, batch, alignment class and shape. */
static bool same_key(const wisdom_entry *a, const wisdom_entry *b)
{
    layout_align x, y;
    wisdom_align(a, &x);
    wisdom_align(b, &y);
    return a->dtype == b->dtype && a->op == b->op && wisdom_batch(a) == wisdom_batch(b) && layout_align_eq(&x, &y) &&
           a->shape.m == b->shape.m && a->shape.n == b->shape.n && a->shape.k == b->shape.k;
}

/* Where this device's file holds no entry for e's key, the entry of another GPU of the same arch
 * that --auto would run there instead (the arch level of the lookup, wisdom.h) with the best ratio
 * to cuBLAS; NULL if there is none, or this device already has one (wisdom_record compares with
 * it). A first tune of a narrow space on a new GPU would otherwise shadow a better entry measured on
 * its sibling (an H200 tuning tc32 alone took thin shapes from the H100's SIMT entries). */
static const wisdom_entry *arch_rival(const char *wisdom_dir, const char *device, int arch, const wisdom_entry *e,
                                      wisdom_t *w, const wisdom_file **in)
{
    err_t ignored;
    err_clear(&ignored);
    if (wisdom_load_dir(w, wisdom_dir, &ignored))
        return NULL; /* a damaged file is wisdom_record's to refuse */
    const wisdom_entry *best = NULL;
    for (size_t i = 0; i < w->nfiles; i++) {
        const wisdom_file *f = &w->files[i];
        bool mine = f->device && device && strcmp(f->device, device) == 0;
        bool sibling = !mine && f->arch && arch_sm(f->arch) == arch_sm(arch);
        for (size_t j = 0; j < f->nentries; j++) {
            const wisdom_entry *x = &f->entries[j];
            if (!same_key(x, e))
                continue;
            if (mine)
                return NULL;
            if (sibling && x->vs_cublas > 0 && (!best || x->vs_cublas > best->vs_cublas)) {
                best = x;
                *in = f;
            }
        }
    }
    return best;
}

int winner_record(const result_row *w, const config_t *base, const char *wisdom_dir, double vs_cublas,
                  const layout_t *lay, err_t *err)
{
    /* The class the worker verified the winner in, which must be the dtype's own: a check of the row
     * itself, beside winner_check_class's of the config. */
    dtype_t dt = DTYPE_F32;
    if (dtype_parse(w->dtype, &dt))
        return err_set(err, ERR_INPUT, wisdom_dir, 0, 0, "not recorded: the winner's dtype \"%s\" is not one of " DTYPE_LIST,
                       w->dtype ? w->dtype : ""),
               -1;
    const char *own = acc_class_name(acc_class_of(ACC_NATIVE, dt));
    if (!w->acc_class || strcmp(w->acc_class, own) != 0)
        return err_set(err, ERR_VERIFY, wisdom_dir, 0, 0,
                       "not recorded: the winner at %lldx%lldx%lld was verified in accuracy class %s, not %s",
                       (long long)w->M, (long long)w->N, (long long)w->K,
                       w->acc_class && *w->acc_class ? w->acc_class : "none (a log from before accuracy classes)", own),
               -1;
    int arch = 0;
    if (arch_parse(w->arch, &arch, err))
        return -1;
    wisdom_entry e = {.dtype = dt,
                      .op = 2 * lay->ta + lay->tb,
                      .batch = lay->batch > 1 ? lay->batch : 1,
                      .shape = {w->M, w->N, w->K},
                      .tflops = w->tflops,
                      .vs_cublas = vs_cublas > 0 ? vs_cublas : 0};
    layout_align_ld(lay, dtype_size(e.dtype), &e.align); /* written only where it is not the packed one */
    /* Blocks per SM at this shape, for the selection model (select.h): from the occupancy the driver
     * gave (resident threads / the SM's) and the block's threads. */
    if (w->occ_pct > 0 && w->threads > 0) {
        double blocks = w->occ_pct / 100.0 * arch_lookup(arch_sm(arch))->max_threads_sm / w->threads;
        e.occ = blocks >= 1 && blocks <= 64 ? (int)(blocks + 0.5) : 0;
    }
    char root[4096], cfg[4096];
    const char *config = base->path;
    if (realpath(wisdom_dir, root) && realpath(base->path, cfg)) {
        char *slash = strrchr(root, '/');
        if (slash && slash != root)
            *slash = '\0';
        size_t n = strlen(root);
        if (strncmp(cfg, root, n) == 0 && cfg[n] == '/')
            config = cfg + n + 1;
    }
    e.config = (char *)config;
    e.sets = xcalloc(w->nparams + 1, sizeof *e.sets);
    for (size_t k = 0; k < w->nparams && k < base->tpl.nparams; k++)
        if (w->param_values[k] != base->values[k])
            e.sets[e.nsets++] = (param_set){.text = xasprintf("%s=%lld", w->param_names[k], (long long)w->param_values[k]),
                                            .key = w->param_names[k], .value = w->param_values[k]};
    time_t now = time(NULL);
    char day[32];
    strftime(day, sizeof day, "%Y-%m-%d", gmtime(&now));
    char *src = xasprintf("engine tune %s, %s", base->name, day);
    e.source = src;
    char *path = wisdom_device_path(wisdom_dir, w->device);
    if (!path) /* core hands it back: the tune cannot go on */
        xoom(strlen(wisdom_dir) + strlen(w->device) + 8);
    wisdom_t all;
    wisdom_init(&all);
    const wisdom_file *rf = NULL;
    const wisdom_entry *rival = e.vs_cublas > 0 ? arch_rival(wisdom_dir, w->device, arch, &e, &all, &rf) : NULL;
    if (rival && rival->vs_cublas >= e.vs_cublas) {
        printf("  wisdom %s: kept the arch's faster entry (%s:%d, another GPU of this arch: %.3fx cuBLAS there, "
               "this winner %.3fx here)\n",
               path, rf->path, rival->line, rival->vs_cublas, e.vs_cublas);
        wisdom_free(&all);
        free(path);
        free(src);
        for (size_t k = 0; k < e.nsets; k++)
            free(e.sets[k].text);
        free(e.sets);
        return 0;
    }
    wisdom_free(&all);
    wisdom_outcome out = 0;
    int rc = wisdom_record(path, w->device, arch, &e, &out, err);
    char al[32], at[48] = "";
    if (!wisdom_align_packed(&e))
        snprintf(at, sizeof at, " (alignment class %s)", wisdom_align_text(&e.align, al, sizeof al));
    if (rc == 0)
        printf("  wisdom %s: %s%s\n", path,
               out == WISDOM_KEPT ? "kept the faster entry already there" : out == WISDOM_REPLACED ? "replaced a slower entry"
                                                                          : "added", at);
    free(path);
    free(src);
    for (size_t k = 0; k < e.nsets; k++)
        free(e.sets[k].text);
    free(e.sets);
    return rc;
}
