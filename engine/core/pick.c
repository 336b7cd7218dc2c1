/* pick.c — see pick.h. */
#include "pick.h"

#include "arch.h"
#include "gpu.h"
#include "paths.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A wisdom entry's config: as written when it names a file from here (an absolute path, or one
 * relative to the working directory), else relative to the directory above the wisdom file's, where
 * the shipped wisdom/ sits beside configs/. */
static char *resolve_config(const char *config, const char *wisdom_path)
{
    if (config[0] == '/' || access(config, R_OK) == 0)
        return try_strdup(config);
    char *dir = try_path_dirname(wisdom_path);
    char *root = dir ? try_path_join(dir, "..") : NULL;
    char *p = root ? try_path_join(root, config) : NULL;
    free(root);
    free(dir);
    return p;
}

/* The host had no memory for what the pick holds (of the wisdom in dir): ERR_ALLOC. */
static int no_memory(err_t *err, const char *dir, const char *what)
{
    return err_set(err, ERR_ALLOC, dir, 0, 0, "no host memory %s", what), -1;
}

/* Index of the entry with this path and these overrides (n of sets), adding it when new;
 * (size_t)-1 when the host had no memory for it (the pick's entries as they were). */
static size_t entry_of_sets(pick_t *p, const char *path, const param_set *sets, size_t n)
{
    char **kv = try_calloc(n ? n : 1, sizeof *kv);
    bool ok = kv != NULL;
    for (size_t k = 0; ok && k < n; k++)
        ok = (kv[k] = try_asprintf("%s=%lld", sets[k].key, (long long)sets[k].value)) != NULL;
    size_t at = (size_t)-1;
    for (size_t i = 0; ok && i < p->nentries && at == (size_t)-1; i++) {
        entry_t *x = &p->entries[i];
        if (strcmp(x->path, path) != 0 || x->nsets != n)
            continue;
        size_t same = 0;
        for (size_t k = 0; k < n; k++)
            same += strcmp(kv[k], x->sets[k]) == 0;
        if (same == n)
            at = i;
    }
    if (ok && at == (size_t)-1) {
        entry_t *grown = try_realloc(p->entries, (p->nentries + 1) * sizeof *p->entries);
        char *copy = try_strdup(path);
        if (grown)
            p->entries = grown;
        if (grown && copy) { /* from wisdom: no list, no line */
            p->entries[p->nentries] = (entry_t){.path = copy, .sets = kv, .nsets = n};
            return p->nentries++;
        }
        free(copy);
    }
    for (size_t k = 0; kv && k < n; k++)
        free(kv[k]);
    free(kv);
    return at;
}

static size_t entry_of(pick_t *p, const char *path, const wisdom_entry *e)
{
    return entry_of_sets(p, path, e->sets, e->nsets);
}

size_t pick_entry_of_cand(pick_t *p, size_t c)
{
    if (p->entry_of_cand[c] == (size_t)-1)
        p->entry_of_cand[c] = entry_of(p, p->sel.cands[c].path, p->sel.cands[c].entry);
    return p->entry_of_cand[c];
}

/* The user's wisdom, one file at a time: a damaged file is reported in one line and left out (it
 * stays on disk as it is: --auto-tune then refuses to write over it), the others are read. A file
 * that could not be read for lack of host memory is no damage: -1 with ERR_ALLOC in err. */
static int load_user(wisdom_t *w, const char *dir, FILE *warn, err_t *out)
{
    size_t n;
    char **names = wisdom_list_dir(dir, &n);
    if (!names)
        return errno == ENOMEM ? no_memory(out, dir, "to list the user's wisdom directory") : 0;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char *path = rc ? NULL : try_path_join(dir, names[i]);
        err_t err;
        err_clear(&err);
        if (!rc && !path)
            rc = no_memory(out, dir, "for a user wisdom file's path");
        else if (!rc && wisdom_load_file(w, path, &err) && err.cause == ERR_ALLOC) {
            *out = err;
            rc = -1;
        } else if (!rc && err_isset(&err) && warn) {
            char line[ERR_SOURCE_LEN + ERR_TEXT_LEN + 64];
            err_format(&err, line, sizeof line);
            fprintf(warn, "engine: %s (this user wisdom file is ignored; fix or remove it)\n", line);
        }
        free(path);
        free(names[i]);
    }
    free(names);
    return rc;
}

/* SMs of a GPU of this arch when there is none to ask: the usual data-centre part of each. */
static int usual_sms(int arch)
{
    switch (arch_sm(arch)) {
    case 80:
        return 108;
    case 86:
        return 84;
    case 89:
        return 128;
    default:
        return 132;
    }
}

/* The entries of w at level as candidates, appended to entries, files and paths (n of them): -1 when
 * the host has no memory (those added so far are kept, n counting them). */
static int add_candidates(pick_t *p, const wisdom_t *w, int level, dtype_t dtype, const char *device,
                          const wisdom_entry ***entries, const wisdom_file ***files, char ***paths, size_t *n)
{
    size_t count = wisdom_level_entries(w, device, p->arch, dtype, level, NULL, 0);
    wisdom_choice *ch = try_calloc(count ? count : 1, sizeof *ch);
    if (!ch)
        return -1;
    wisdom_level_entries(w, device, p->arch, dtype, level, ch, count);
    const wisdom_entry **e = try_realloc(*entries, (*n + count + 1) * sizeof **entries);
    if (e)
        *entries = e;
    const wisdom_file **f = e ? try_realloc(*files, (*n + count + 1) * sizeof **files) : NULL;
    if (f)
        *files = f;
    char **pa = f ? try_realloc(*paths, (*n + count + 1) * sizeof **paths) : NULL;
    if (pa)
        *paths = pa;
    int rc = pa ? 0 : -1;
    for (size_t i = 0; i < count && rc == 0; i++) {
        (*entries)[*n] = ch[i].entry;
        (*files)[*n] = ch[i].file;
        if (!((*paths)[*n] = resolve_config(ch[i].entry->config, ch[i].file->path)))
            rc = -1;
        else
            (*n)++;
    }
    free(ch);
    return rc;
}

/* Keep the candidates measured in the problem's op (wisdom_entry.op). Where the level holds none for
 * the problem's kind (one product, or a batch: a batch's entries are no witness for one product, nor
 * the reverse), keep those measured in NN (the layout the entries were tuned in before layouts). Where
 * it holds a few (fewer than PICK_OP_ENOUGH of the op in all), keep them and the NN ones: a handful
 * tuned at one class of shapes (FP64 Gram products in TN) must not become the only witnesses for every
 * product of the op, and for the shapes they were tuned at they still win (exact_op: only they are
 * exact). The note for --explain says which (note, of notelen; "" when the op's own were kept alone);
 * returns whether NN's were mixed in. The dropped paths are freed. */
static bool keep_op(int op, int64_t batch, const wisdom_entry **entries, const wisdom_file **files, char **paths,
                    size_t *n, char *note, size_t notelen)
{
    size_t have = 0, other = 0;
    for (size_t i = 0; i < *n; i++)
        if (entries[i]->op == op) {
            if ((wisdom_batch(entries[i]) > 1) == (batch > 1))
                have++;
            else
                other++;
        }
    const bool mix = op != 0 && have && have + other < PICK_OP_ENOUGH;
    const int keep = have ? op : 0;
    size_t k = 0;
    for (size_t i = 0; i < *n; i++) {
        if (entries[i]->op != keep && !(mix && entries[i]->op == 0)) {
            free(paths[i]);
            continue;
        }
        entries[k] = entries[i];
        files[k] = files[i];
        paths[k++] = paths[i];
    }
    *n = k;
    note[0] = 0;
    if (mix)
        snprintf(note, notelen, "%zu wisdom entries of op %s at this level (fewer than %d): weighed with the NN entries",
                 have + other, wisdom_op_name(op), PICK_OP_ENOUGH);
    else if (have || op == 0)
        return false;
    else if (other)
        snprintf(note, notelen, "no wisdom entry of op %s for %s at this level (its entries are %s'): weighed the NN entries",
                 wisdom_op_name(op), batch > 1 ? "batches" : "one product", batch > 1 ? "single products" : "batches");
    else
        snprintf(note, notelen, "no wisdom entry of op %s at this level: weighed the NN entries", wisdom_op_name(op));
    return mix;
}

/* Entries of entries[0..n) that a problem of op can weigh: its own, or NN's. */
static size_t usable(const wisdom_entry *const *entries, size_t n, int op)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += entries[i]->op == op || entries[i]->op == 0;
    return k;
}

/* One line on warn (NULL: none) for each candidate of s that did not load, and why. */
static void warn_left_out(const select_t *s, FILE *warn)
{
    for (size_t c = 0; c < s->ncands && warn; c++)
        if (!s->cands[c].loaded)
            fprintf(warn, "engine: %s:%d: this wisdom entry is left out: %s\n", s->cands[c].file->path,
                    s->cands[c].entry->line, s->cands[c].err_text);
}

/* "name[SETS] (file:line, level, ...)": where a shape's config came from; NULL when the host had no
 * memory for it. */
static char *why_of(const select_t *s, const select_result *r, const char *device)
{
    const select_cand *c = &s->cands[r->chosen];
    /* The level the chosen entry's file is at for this GPU (wisdom.c's rule). */
    const char *lv = c->file->device && device && strcmp(c->file->device, device) == 0 ? "device"
                     : c->file->arch                                                   ? "arch"
                                                                                       : "default";
    char shape[96];
    snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)c->entry->shape.m, (long long)c->entry->shape.n,
             (long long)c->entry->shape.k);
    if (wisdom_batch(c->entry) > 1)
        snprintf(shape + strlen(shape), sizeof shape - strlen(shape), " batch %lld", (long long)c->entry->batch);
    if (!c->align_packed) {
        char al[32];
        snprintf(shape + strlen(shape), sizeof shape - strlen(shape), " align %s",
                 wisdom_align_text(&c->align, al, sizeof al));
    }
    if (r->exact)
        return try_asprintf("%s (%s:%d, %s, exact %s)", c->label, c->file->path, c->entry->line, lv, shape);
    double t = 0;
    for (size_t j = 0; j < r->nw; j++)
        if (r->w[j].cand == r->chosen)
            t = r->w[j].t_est;
    return try_asprintf("%s (%s:%d, %s, model: %.1f us estimated, of the %zu nearest entries; its own %s)", c->label,
                        c->file->path, c->entry->line, lv, t * 1e6, r->nw, shape);
}

static size_t variant_entry(pick_t *p, size_t c, const select_variant *v);

bool pick_tile_variants(void)
{
    const char *tv = getenv("ENGINE_TILE_VARIANTS");
    return !(tv && strcmp(tv, "0") == 0);
}

/* How the problem's op was weighed against the level's entries (keep_op): a note for --explain
 * (note[0] == 0: none), and whether the op's own entries were mixed with NN's. */
typedef struct {
    char note[192];
    bool mixed;
} op_weighing;

/* The levels' candidates weighed into p->sel (select_init): the first level wisdom holds for the
 * dtype (the user's or the shipped), and below it as needed; p's wisdom is loaded. ow says how the
 * problem's op was weighed. 0, or -1 with err set (the select freed; the caller frees p). */
static int pick_candidates(pick_t *p, const pick_params *pp, const select_gpu *sg, op_weighing *ow, err_t *err)
{
    const char *dir = pp->wisdom_dir ? pp->wisdom_dir : paths_wisdom_dir();
    const dtype_t dtype = pp->dtype;
    const char *dev = *p->device ? p->device : NULL;
    const int lu = wisdom_first_level(&p->user, dev, p->arch, dtype),
              ls = wisdom_first_level(&p->shipped, dev, p->arch, dtype);
    int level = lu && (!ls || lu <= ls) ? lu : ls;
    char *note = ow->note;
    const size_t notelen = sizeof ow->note;
    const wisdom_entry **entries = NULL;
    const wisdom_file **files = NULL;
    char **paths = NULL;
    size_t n = 0;
    int rc = 0;
    const char *op_note = NULL;
    note[0] = 0;
    ow->mixed = false;
    /* A level with few entries the problem's op can use (its own or NN's: a user's first --auto-tune
     * on a GPU without shipped entries of its own writes a device-level file of one or two) does not
     * shadow the levels below: they join it until there are PICK_OP_ENOUGH. Exact entries are looked
     * for in candidate order, so the more specific level's still win at their own shapes. Entries the
     * target cannot run count for nothing: where fewer than PICK_OP_ENOUGH of the level's load (hws's
     * on sm_90 without its a, which leaves only the bf16 gemv entries tuned for 1-16 columns), the
     * levels below join too and the candidates are built again (gemv had won 4096^3 at 12 ms). */
    int last = level;
    for (;;) {
        if (level) {
            if (lu == level)
                rc = add_candidates(p, &p->user, level, dtype, dev, &entries, &files, &paths, &n);
            if (ls == level && rc == 0)
                rc = add_candidates(p, &p->shipped, level, dtype, dev, &entries, &files, &paths, &n);
        }
        for (int l = level + 1; rc == 0 && level && l <= last; l++) {
            rc = add_candidates(p, &p->user, l, dtype, dev, &entries, &files, &paths, &n);
            if (rc == 0)
                rc = add_candidates(p, &p->shipped, l, dtype, dev, &entries, &files, &paths, &n);
        }
        while (rc == 0 && level && last < WISDOM_DEFAULT && usable(entries, n, pp->op) < PICK_OP_ENOUGH) {
            last++;
            rc = add_candidates(p, &p->user, last, dtype, dev, &entries, &files, &paths, &n);
            if (rc == 0)
                rc = add_candidates(p, &p->shipped, last, dtype, dev, &entries, &files, &paths, &n);
        }
        /* A copy of the level's candidates, for the NN entries where every entry of the op is left out
         * (below). */
        const size_t n_all = n;
        const wisdom_entry **entries_all = rc ? NULL : try_malloc((n ? n : 1) * sizeof *entries_all);
        const wisdom_file **files_all = rc ? NULL : try_malloc((n ? n : 1) * sizeof *files_all);
        char **paths_all = rc ? NULL : try_calloc(n ? n : 1, sizeof *paths_all);
        rc = rc || !entries_all || !files_all || !paths_all;
        for (size_t i = 0; i < n && !rc; i++) {
            entries_all[i] = entries[i], files_all[i] = files[i], paths_all[i] = try_strdup(paths[i]);
            rc = !paths_all[i];
        }
        if (rc) {
            for (size_t i = 0; i < n; i++)
                free(paths[i]), free(paths_all ? paths_all[i] : NULL);
            free(entries), free(files), free(paths);
            free(entries_all), free(files_all), free(paths_all);
            return no_memory(err, dir, "for the wisdom candidates");
        }
        ow->mixed = keep_op(pp->op, pp->batch, entries, files, paths, &n, note, notelen);
        op_note = *note ? note : NULL;
        rc = select_init(&p->sel, sg, dtype, entries, files, paths, n, err);
        /* The op's entries, all left out (3xTF32 ones where the target is not sm_90a), are as good as
         * none: weigh the NN entries instead, as where the level holds none of the op. */
        bool any = false;
        for (size_t c = 0; rc == 0 && c < n; c++)
            any = any || p->sel.cands[c].loaded;
        if (rc == 0 && pp->op && (!op_note || ow->mixed) && n && !any) {
            warn_left_out(&p->sel, pp->left_out);
            select_free(&p->sel);
            n = n_all;
            for (size_t i = 0; i < n; i++)
                entries[i] = entries_all[i], files[i] = files_all[i], paths[i] = paths_all[i], paths_all[i] = NULL;
            keep_op(0, pp->batch, entries, files, paths, &n, note, notelen);
            snprintf(note, notelen, "every wisdom entry of op %s at this level is left out: weighed the NN entries",
                     wisdom_op_name(pp->op));
            op_note = note;
            ow->mixed = false;
            rc = select_init(&p->sel, sg, dtype, entries, files, paths, n, err);
        }
        for (size_t i = 0; i < n_all; i++)
            free(paths_all[i]);
        free(entries_all);
        free(files_all);
        free(paths_all);
        size_t loaded = 0;
        for (size_t c = 0; rc == 0 && c < n; c++)
            loaded += p->sel.cands[c].loaded;
        if (rc == 0 && level && last < WISDOM_DEFAULT && loaded < PICK_OP_ENOUGH) {
            select_free(&p->sel); /* again with the next level: the candidates' paths are the select's */
            memset(&p->sel, 0, sizeof p->sel);
            free(entries), free(files), free(paths);
            entries = NULL, files = NULL, paths = NULL, n = 0;
            last++;
            continue;
        }
        break;
    }
    free(entries);
    free(files);
    free(paths);
    return rc ? -1 : 0;
}

/* Shape s's choice into p's tables: the selection's pick (its entry, why, explanation), and where
 * its tile is padded (tile_variants) the variant the model prefers. 0, or non-zero with err set. */
static int pick_shape(pick_t *p, const pick_params *pp, const shape_t *sh, size_t s, const char *dev,
                      const char *op_note, bool tile_variants, err_t *err)
{
    const char *dir = pp->wisdom_dir ? pp->wisdom_dir : paths_wisdom_dir();
    const size_t n = p->sel.ncands;
    int sr = select_pick_in(&p->sel, sh, pp->batch, pp->aligns ? &pp->aligns[s] : NULL,
                            pp->layouts ? &pp->layouts[s] : NULL, &p->result[s]);
    if (sr == SELECT_NOMEM)
        return no_memory(err, dir, "for the selection's distances");
    if (sr) {
        const char *why = n ? "no entry's config plans at this shape" : "no device, arch or default entry of that dtype";
        for (size_t c = 0; c < n && !p->sel.cands[c].loaded; c++)
            why = p->sel.cands[c].err_text;
        return err_set(err, ERR_INPUT, dir, 0, 0, "--auto: no wisdom for %s at %lldx%lldx%lld (%s)",
                       dtype_name(pp->dtype), (long long)sh->m, (long long)sh->n, (long long)sh->k, why);
    }
    p->of_shape[s] = pick_entry_of_cand(p, p->result[s].chosen);
    p->why[s] = why_of(&p->sel, &p->result[s], dev);
    if (p->of_shape[s] == (size_t)-1 || !p->why[s])
        return no_memory(err, dir, "for the chosen entry");
    select_variant v;
    int tv = tile_variants ? select_tile_variant(&p->sel, &p->result[s], sh, pp->layouts ? &pp->layouts[s] : NULL,
                                                 PICK_TILE_GAIN, &v)
                           : 0;
    if (tv == SELECT_NOMEM)
        return no_memory(err, dir, "for the selection's tile variants");
    if (tv) {
        p->of_shape[s] = variant_entry(p, p->result[s].chosen, &v);
        char set[96];
        char *w = p->of_shape[s] == (size_t)-1
                      ? NULL
                      : try_asprintf("%s with %s (its tile padded at this shape: the model estimates %.1f us)",
                                     p->why[s], select_variant_text(&v, set, sizeof set), v.t_est * 1e6);
        if (!w)
            return no_memory(err, dir, "for the tile variant's entry");
        free(p->why[s]);
        p->why[s] = w;
    }
    p->explain[s] = select_explain(&p->sel, sh, &p->result[s]);
    if (p->explain[s] && op_note) {
        char *ex = try_asprintf("%s%s\n", p->explain[s], op_note);
        free(p->explain[s]);
        p->explain[s] = ex;
    }
    if (!p->explain[s])
        return no_memory(err, dir, "for the choice's explanation");
    return 0;
}

int pick_init_with(pick_t *p, const pick_params *pp, const shape_t *shapes, size_t nshapes, err_t *err)
{
    const bool tile_variants = pick_tile_variants();
    memset(p, 0, sizeof *p);
    wisdom_init(&p->user);
    wisdom_init(&p->shipped);
    /* The GPU's name, arch and SMs, without a context; with no GPU, --arch (or sm_90) still reaches
     * the arch and default levels, and a run reports the missing GPU itself. */
    gpu_t g;
    memset(&g, 0, sizeof g);
    err_t ignored;
    err_clear(&ignored);
    bool have_gpu = pp->probe && gpu_driver_present() && gpu_probe(&g, pp->device, &ignored) == 0;
    p->arch = pp->arch ? pp->arch : have_gpu ? g.sm : 90;
    p->device = try_strdup(pp->device_name ? pp->device_name : have_gpu ? g.name : "");
    int sms = pp->sms ? pp->sms : have_gpu ? g.sms : usual_sms(p->arch);
    double clock = have_gpu && g.clock_khz > 0 ? g.clock_khz * 1e3 : 1.98e9;
    const char *dir = pp->wisdom_dir ? pp->wisdom_dir : paths_wisdom_dir();
    bool nomem = false;
    p->user_dir = !pp->user_dir ? paths_user_wisdom_dir(&nomem) : *pp->user_dir ? try_strdup(pp->user_dir) : NULL;
    if (!p->device || nomem || (pp->user_dir && *pp->user_dir && !p->user_dir)) {
        pick_free(p);
        return no_memory(err, dir,
                         nomem ? "for the user wisdom directory's name" : "for the pick's device and directory names");
    }
    if ((p->user_dir && load_user(&p->user, p->user_dir, pp->warn, err)) || wisdom_load_dir(&p->shipped, dir, err)) {
        pick_free(p);
        return -1;
    }
    select_gpu sg;
    select_gpu_init(&sg, p->arch, sms, clock);
    sg.arch_guessed = !pp->arch || pp->arch_guessed;
    op_weighing ow;
    if (pick_candidates(p, pp, &sg, &ow, err)) {
        pick_free(p);
        return -1;
    }
    const size_t n = p->sel.ncands;
    const char *dev = *p->device ? p->device : NULL, *op_note = ow.note[0] ? ow.note : NULL;
    p->op_note = op_note ? try_strdup(op_note) : NULL;
    p->sel.op = pp->op;
    if (ow.mixed)
        p->sel.exact_op = pp->op;
    p->entry_of_cand = try_calloc(n ? n : 1, sizeof *p->entry_of_cand);
    p->nshapes = nshapes;
    p->of_shape = try_calloc(nshapes ? nshapes : 1, sizeof *p->of_shape);
    p->why = try_calloc(nshapes ? nshapes : 1, sizeof *p->why);
    p->explain = try_calloc(nshapes ? nshapes : 1, sizeof *p->explain);
    p->result = try_calloc(nshapes ? nshapes : 1, sizeof *p->result);
    if ((op_note && !p->op_note) || !p->entry_of_cand || !p->of_shape || !p->why || !p->explain || !p->result) {
        pick_free(p);
        return no_memory(err, dir, "for the pick's tables");
    }
    warn_left_out(&p->sel, pp->left_out);
    for (size_t c = 0; c < n; c++)
        p->entry_of_cand[c] = (size_t)-1;
    for (size_t s = 0; s < nshapes; s++)
        if (pick_shape(p, pp, &shapes[s], s, dev, op_note, tile_variants, err)) {
            pick_free(p);
            return -1;
        }
    return 0;
}

/* Add entry e to shape s's list to time, unless it is there already (two entries of one config and
 * overrides are one candidate): 0, or -1 for no entry ((size_t)-1: the host had no memory for it). */
static int tune_add(pick_t *p, size_t s, size_t e)
{
    if (e == (size_t)-1)
        return -1;
    size_t k;
    for (k = 0; k < p->ntune[s] && p->tune[s * PICK_TUNE_MAX + k] != e; k++)
        ;
    if (k == p->ntune[s] && k < PICK_TUNE_MAX)
        p->tune[s * PICK_TUNE_MAX + p->ntune[s]++] = e;
    return 0;
}

/* The entry of candidate c's config with its overrides changed as variant v says (one or two);
 * (size_t)-1 when the host had no memory for it. */
static size_t variant_entry(pick_t *p, size_t c, const select_variant *v)
{
    const select_cand *x = &p->sel.cands[c];
    const wisdom_entry *e = x->entry;
    param_set *sets = try_calloc(e->nsets + 2, sizeof *sets);
    if (!sets)
        return (size_t)-1;
    size_t n = 0;
    for (size_t k = 0; k < e->nsets; k++)
        sets[n++] = e->sets[k];
    const char *keys[2] = {v->key, v->key2};
    const int64_t vals[2] = {v->value, v->value2};
    for (int j = 0; j < 2 && *keys[j]; j++) {
        size_t k;
        for (k = 0; k < n && strcmp(sets[k].key, keys[j]) != 0; k++)
            ;
        if (k == n)
            sets[n++] = (param_set){.key = (char *)keys[j]};
        sets[k].value = vals[j];
    }
    size_t i = entry_of_sets(p, x->path, sets, n);
    free(sets);
    return i;
}

int pick_tune_candidates(pick_t *p, const shape_t *shapes, const layout_t *layouts)
{
    p->tune = try_calloc(p->nshapes ? p->nshapes * PICK_TUNE_MAX : 1, sizeof *p->tune);
    p->ntune = try_calloc(p->nshapes ? p->nshapes : 1, sizeof *p->ntune);
    if (!p->tune || !p->ntune)
        return -1;
    for (size_t s = 0; s < p->nshapes; s++) {
        const select_result *r = &p->result[s];
        if (r->exact)
            continue;
        /* The weighed candidates by estimate (a short insertion sort), those that can run. */
        select_weighed w[SELECT_K];
        size_t n = 0;
        for (size_t j = 0; j < r->nw; j++) {
            if (r->w[j].t_est < 0)
                continue;
            size_t at = n++;
            while (at > 0 && w[at - 1].t_est > r->w[j].t_est) {
                w[at] = w[at - 1];
                at--;
            }
            w[at] = r->w[j];
        }
        /* Around the model's choice: its config a step away in split depth, tile or stages. */
        select_variant v[PICK_TUNE_NEAR];
        bool nomem;
        size_t nv = select_neighbours(&p->sel, r->chosen, &shapes[s], layouts ? &layouts[s] : NULL, v,
                                      PICK_TUNE_NEAR, &nomem);
        if (nomem)
            return -1;
        /* The choice first, then its variants and the model's next candidates in turn, fastest
         * estimate first in each: a short budget times some of both. */
        size_t others[PICK_TUNE_MODEL], no = 0;
        for (size_t j = 0; j < n && no + 1 < PICK_TUNE_MODEL; j++)
            if (w[j].cand != r->chosen)
                others[no++] = w[j].cand;
        if (tune_add(p, s, pick_entry_of_cand(p, r->chosen)))
            return -1;
        for (size_t i = 0; i < nv || i < no; i++) {
            if (i < nv && tune_add(p, s, variant_entry(p, r->chosen, &v[i])))
                return -1;
            if (i < no && tune_add(p, s, pick_entry_of_cand(p, others[i])))
                return -1;
        }
    }
    return 0;
}

void pick_free(pick_t *p)
{
    entries_free(p->entries, p->nentries);
    for (size_t s = 0; s < p->nshapes; s++) {
        free(p->why ? p->why[s] : NULL);
        free(p->explain ? p->explain[s] : NULL);
    }
    free(p->why);
    free(p->explain);
    free(p->op_note);
    free(p->result);
    free(p->of_shape);
    free(p->device);
    free(p->user_dir);
    free(p->entry_of_cand);
    free(p->tune);
    free(p->ntune);
    select_free(&p->sel);
    wisdom_free(&p->user);
    wisdom_free(&p->shipped);
    memset(p, 0, sizeof *p);
}
