/* pick.c — see pick.h. */
#include "pick.h"

#include "gpu.h"
#include "paths.h"
#include "util.h"
#include "wisdom.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A wisdom entry's config: as written when it names a file from here (an absolute path, or one
 * relative to the working directory), else relative to the directory above the wisdom file's, where
 * the shipped wisdom/ sits beside configs/. */
static char *resolve_config(const char *config, const char *wisdom_path)
{
    if (config[0] == '/' || access(config, R_OK) == 0)
        return xstrdup(config);
    char *dir = path_dirname(wisdom_path);
    char *root = path_join(dir, "..");
    char *p = path_join(root, config);
    free(root);
    free(dir);
    return p;
}

/* Index of the entry with this path and these overrides, adding it when new. */
static size_t entry_of(pick_t *p, char *path, const wisdom_entry *e)
{
    for (size_t i = 0; i < p->nentries; i++) {
        entry_t *x = &p->entries[i];
        if (strcmp(x->path, path) != 0 || x->nsets != e->nsets)
            continue;
        size_t same = 0;
        for (size_t k = 0; k < e->nsets; k++) {
            char *kv = xasprintf("%s=%lld", e->sets[k].key, (long long)e->sets[k].value);
            same += strcmp(kv, x->sets[k]) == 0;
            free(kv);
        }
        if (same == e->nsets) {
            free(path);
            return i;
        }
    }
    p->entries = xrealloc(p->entries, (p->nentries + 1) * sizeof *p->entries);
    entry_t *x = &p->entries[p->nentries];
    x->path = path;
    x->nsets = e->nsets;
    x->sets = xcalloc(e->nsets ? e->nsets : 1, sizeof *x->sets);
    for (size_t k = 0; k < e->nsets; k++)
        x->sets[k] = xasprintf("%s=%lld", e->sets[k].key, (long long)e->sets[k].value);
    return p->nentries++;
}

int pick_init(pick_t *p, const opts_t *o, const shape_t *shapes, size_t nshapes, err_t *err)
{
    memset(p, 0, sizeof *p);
    /* The GPU's name and arch, without a context; with no GPU, the arch of --arch (or sm_90) still
     * reaches the arch and default levels, and the run itself reports the missing GPU. */
    gpu_t g;
    memset(&g, 0, sizeof g);
    err_t ignored;
    err_clear(&ignored);
    bool have_gpu = gpu_driver_present() && gpu_probe(&g, o->device, &ignored) == 0;
    int arch = o->arch ? o->arch : have_gpu ? g.sm : 90;
    p->device = xstrdup(have_gpu ? g.name : "");
    dtype_t dtype = o->dtype && strcmp(o->dtype, "f64") == 0 ? DTYPE_F64 : DTYPE_F32;
    const char *dir = o->wisdom ? o->wisdom : paths_wisdom_dir();
    wisdom_t w;
    wisdom_init(&w);
    if (wisdom_load_dir(&w, dir, err)) {
        pick_free(p);
        return -1;
    }
    p->nshapes = nshapes;
    p->of_shape = xcalloc(nshapes ? nshapes : 1, sizeof *p->of_shape);
    p->why = xcalloc(nshapes ? nshapes : 1, sizeof *p->why);
    int rc = 0;
    for (size_t s = 0; s < nshapes && !rc; s++) {
        wisdom_choice c;
        if (wisdom_lookup(&w, have_gpu ? g.name : NULL, arch, dtype, &shapes[s], &c)) {
            rc = err_set(err, EXIT_INPUT, dir, 0, 0,
                         "--auto: no wisdom for %s at %lldx%lldx%lld (no device, arch or default entry of that dtype)",
                         dtype_name(dtype), (long long)shapes[s].m, (long long)shapes[s].n, (long long)shapes[s].k);
            break;
        }
        p->of_shape[s] = entry_of(p, resolve_config(c.entry->config, c.file->path), c.entry);
        p->why[s] = wisdom_choice_format(&c);
    }
    wisdom_free(&w);
    if (rc)
        pick_free(p);
    return rc ? -1 : 0;
}

void pick_free(pick_t *p)
{
    entries_free(p->entries, p->nentries);
    for (size_t s = 0; p->why && s < p->nshapes; s++)
        free(p->why[s]);
    free(p->why);
    free(p->of_shape);
    free(p->device);
    memset(p, 0, sizeof *p);
}
