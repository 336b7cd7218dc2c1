/* wisdom.c — the best config per (device, arch, dtype, shape): files read strictly, and lookup
 * with fallback by level and shape distance. Recording a new winner into a device's file is
 * wisdom_write.c's. */
#include "wisdom.h"
#include "wisdom_impl.h"

#include "arch.h"
#include "jsonloc.h"
#include "jsonrd.h"
#include "layout.h"
#include "paths.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const k_file_keys[] = {"version", "device", "arch", "entries", NULL};
static const char *const k_entry_keys[] = {"dtype", "op", "batch", "align", "shape", "config", "set", "tflops", "vs_cublas", "occ", "source", NULL};

/* ---------------------------------------------------------------------------------------------- */
/* Entries and files                                                                               */

void wisdom_entry_free(wisdom_entry *e)
{
    free(e->config);
    for (size_t i = 0; i < e->nsets; i++)
        param_set_free(&e->sets[i]);
    free(e->sets);
    free(e->source);
    memset(e, 0, sizeof *e);
}

int wisdom_entry_copy(wisdom_entry *dst, const wisdom_entry *src)
{
    *dst = *src;
    dst->nsets = 0;
    dst->config = try_strdup(src->config);
    dst->source = try_strdup(src->source);
    dst->sets = try_calloc(src->nsets ? src->nsets : 1, sizeof *dst->sets);
    if (!dst->config || (src->source && !dst->source) || !dst->sets) {
        wisdom_entry_free(dst);
        return -1;
    }
    for (size_t i = 0; i < src->nsets; i++) {
        param_set *ps = &dst->sets[dst->nsets++];
        ps->text = try_strdup(src->sets[i].text);
        ps->key = try_strdup(src->sets[i].key);
        ps->value = src->sets[i].value;
        if (!ps->text || !ps->key) {
            wisdom_entry_free(dst);
            return -1;
        }
    }
    return 0;
}

void wisdom_file_free(wisdom_file *f)
{
    for (size_t i = 0; i < f->nentries; i++)
        wisdom_entry_free(&f->entries[i]);
    free(f->entries);
    free(f->path);
    free(f->device);
    memset(f, 0, sizeof *f);
}

void wisdom_init(wisdom_t *w)
{
    memset(w, 0, sizeof *w);
}

void wisdom_free(wisdom_t *w)
{
    for (size_t i = 0; i < w->nfiles; i++)
        wisdom_file_free(&w->files[i]);
    free(w->files);
    wisdom_init(w);
}

/* Move f into w after every file whose path sorts before it or equal: w stays in path order, and a
 * path loaded twice keeps its load order. w->files has room for one more. */
static void insert_file(wisdom_t *w, wisdom_file *f)
{
    size_t at = w->nfiles;
    while (at > 0 && strcmp(w->files[at - 1].path, f->path) > 0)
        at--;
    memmove(&w->files[at + 1], &w->files[at], (w->nfiles - at) * sizeof *w->files);
    w->files[at] = *f;
    w->nfiles++;
    memset(f, 0, sizeof *f);
}

/* The same, making the room: -1 (f and w as they were) when the host has no memory for it. */
static int add_file(wisdom_t *w, wisdom_file *f)
{
    wisdom_file *files = try_realloc(w->files, (w->nfiles + 1) * sizeof *w->files);
    if (!files)
        return -1;
    w->files = files;
    insert_file(w, f);
    return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* Rules shared by reading a file and recording an entry                                           */

const char *wisdom_op_name(int op)
{
    static const char *const names[] = {"NN", "NT", "TN", "TT"};
    return op >= 0 && op <= 3 ? names[op] : "?";
}

void wisdom_packed_align(const wisdom_entry *e, layout_align *al)
{
    layout_t lay;
    layout_packed(&lay, e->op / 2, e->op % 2, e->shape.m, e->shape.n, e->shape.k, wisdom_batch(e));
    layout_align_ld(&lay, dtype_size(e->dtype), al);
}

void wisdom_align(const wisdom_entry *e, layout_align *al)
{
    if (e->align.a > 0)
        *al = e->align;
    else
        wisdom_packed_align(e, al);
}

bool wisdom_align_packed(const wisdom_entry *e)
{
    layout_align have, packed;
    wisdom_align(e, &have);
    wisdom_packed_align(e, &packed);
    return layout_align_eq(&have, &packed);
}

const char *wisdom_align_text(const layout_align *al, char *buf, size_t len)
{
    snprintf(buf, len, "%d,%d,%d", al->a, al->b, al->c);
    return buf;
}

/* "MxNxK" with whole decimal numbers: no sign, no space, no leading zero (one spelling per shape,
 * so a file never holds the same shape twice under two names). 0, or -1 with the reason in why. */
static int parse_shape(const char *text, shape_t *s, char *why, size_t len)
{
    const char *names[3] = {"M", "N", "K"};
    int64_t v[3] = {0, 0, 0};
    const char *p = text;
    for (int i = 0; i < 3; i++) {
        const char *start = p;
        while (*p >= '0' && *p <= '9')
            p++;
        int digits = (int)(p - start);
        if (digits == 0 || (digits > 1 && *start == '0') || *p != (i < 2 ? 'x' : '\0')) {
            snprintf(why, len,
                     "must look like MxNxK with whole numbers (no signs or leading zeros), e.g. 4096x4096x4096");
            return -1;
        }
        for (const char *q = start; q < p && v[i] <= SHAPE_MAX_DIM; q++)
            v[i] = v[i] * 10 + (*q - '0');
        if (v[i] > SHAPE_MAX_DIM) { /* said with the digits as written: v stopped growing past the limit */
            snprintf(why, len, "%s = %.*s must be between %d and %d", names[i], digits > 24 ? 24 : digits, start,
                     i == 2 ? 0 : 1, SHAPE_MAX_DIM);
            return -1;
        }
        if (i < 2)
            p++;
    }
    s->m = v[0];
    s->n = v[1];
    s->k = v[2];
    return shape_rule(s, why, len);
}

void wisdom_format_shape(const shape_t *s, char *buf, size_t len)
{
    snprintf(buf, len, "%lldx%lldx%lld", (long long)s->m, (long long)s->n, (long long)s->k);
}

/* A key of "set": a parameter name, as --set takes it (letters, digits, _). */
bool wisdom_param_name_ok(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return false;
    return true;
}

/* ---------------------------------------------------------------------------------------------- */
/* Reading                                                                                         */

/* The host had no memory for what an entry or a file holds: ERR_ALLOC at the file (what, e.g.
 * "for the wisdom entry's config"). */
static int no_memory(const jsonrd *rd, int line, const char *what)
{
    return err_set(rd->err, ERR_ALLOC, rd->file, line, 0, "no host memory %s", what), -1;
}

static int parse_entry(const jsonrd *rd, const wisdom_file *f, size_t idx, size_t base, int line, json_t *obj,
                       wisdom_entry *e)
{
    memset(e, 0, sizeof *e);
    char name[32];
    snprintf(name, sizeof name, "entries[%zu]", idx);
    jsonrd_obj o = jsonrd_at(rd, obj, base, name);
    if (!json_is_object(obj))
        return jsonrd_fail(&o, NULL, false, "%s must be an object, got %s", name, jsonloc_kind(obj));
    if (jsonrd_only(&o, k_entry_keys, "an entry"))
        return -1;
    e->line = line;

    const char *s;
    if (jsonrd_string(&o, "dtype", JSONRD_REQUIRED | JSONRD_NONEMPTY, DTYPE_LIST, &s) < 0)
        return -1;
    if (dtype_parse(s, &e->dtype))
        return jsonrd_fail(&o, "dtype", false, "%s.dtype must be \"f32\", \"f64\", \"bf16\" or \"f16\", got \"%.64s\"",
                           name, s);
    /* The op the entry was measured in (layout.h); entries without one are NN, as every file
     * before layouts. */
    json_t *op = json_object_get(obj, "op");
    if (op) {
        int ta, tb;
        if (!json_is_string(op) || layout_op_parse(json_string_value(op), &ta, &tb))
            return jsonrd_fail(&o, "op", false, "%s.op must be \"NN\", \"NT\", \"TN\" or \"TT\"", name);
        e->op = 2 * ta + tb;
    }
    /* The products of the strided batch it was measured on (packed strides); absent: one. */
    char rule[96];
    snprintf(rule, sizeof rule, "a whole number of products, 1 to %d", WISDOM_MAX_BATCH);
    e->batch = 1;
    if (jsonrd_int(&o, "batch", 0, 1, WISDOM_MAX_BATCH, rule, &e->batch) < 0)
        return -1;
    /* The alignment class it was measured at: [A, B, C] in elements, each a power of two up to
     * 16 bytes (layout_align_ld's range); absent: the packed layout's at its shape. */
    json_t *align = json_object_get(obj, "align");
    if (align) {
        const int most = (int)(16 / dtype_size(e->dtype));
        int v[3] = {0, 0, 0};
        bool ok = json_is_array(align) && json_array_size(align) == 3;
        for (size_t i = 0; ok && i < 3; i++) {
            json_t *x = json_array_get(align, i);
            ok = json_is_integer(x) && json_integer_value(x) >= 1 && json_integer_value(x) <= most &&
                 (json_integer_value(x) & (json_integer_value(x) - 1)) == 0;
            v[i] = ok ? (int)json_integer_value(x) : 0;
        }
        if (!ok)
            return jsonrd_fail(&o, "align", false,
                               "%s.align must be [A, B, C]: each operand's alignment in %s elements, a power of "
                               "two from 1 to %d",
                               name, dtype_name(e->dtype), most);
        e->align = (layout_align){v[0], v[1], v[2]};
    }
    if (jsonrd_string(&o, "shape", JSONRD_REQUIRED | JSONRD_NONEMPTY, "MxNxK, e.g. 4096x4096x4096", &s) < 0)
        return -1;
    char why[256];
    if (parse_shape(s, &e->shape, why, sizeof why))
        return jsonrd_fail(&o, "shape", false, "%s.shape \"%.64s\": %s", name, s, why);
    layout_align mine, theirs;
    wisdom_align(e, &mine);
    for (size_t i = 0; i < idx; i++) {
        const wisdom_entry *d = &f->entries[i];
        char bt[32] = "", at[48] = "", al[32];
        if (e->batch > 1)
            snprintf(bt, sizeof bt, " (batch %lld)", (long long)e->batch);
        if (!wisdom_align_packed(e))
            snprintf(at, sizeof at, " (align %s)", wisdom_align_text(&mine, al, sizeof al));
        wisdom_align(d, &theirs);
        if (d->dtype == e->dtype && d->op == e->op && d->batch == e->batch && layout_align_eq(&mine, &theirs) &&
            d->shape.m == e->shape.m && d->shape.n == e->shape.n && d->shape.k == e->shape.k)
            return jsonrd_fail(&o, "shape", false,
                               "%s: %s %s %s%s%s is already in this file (line %d); keep one entry per dtype, op, "
                               "batch, alignment and shape",
                               name, dtype_name(e->dtype), wisdom_op_name(e->op), s, bt, at, d->line);
    }
    if (jsonrd_string(&o, "config", JSONRD_REQUIRED | JSONRD_NONEMPTY, "the config's path, e.g. configs/warptile_db.json",
                      &s) < 0)
        return -1;
    if (!(e->config = try_strdup(s)))
        return no_memory(rd, line, "for the wisdom entry's config");

    jsonrd_obj set;
    int has = jsonrd_object(&o, "set", 0, "an object of parameter values", &set);
    if (has < 0)
        return -1;
    if (has) {
        e->sets = try_calloc(json_object_size(set.obj) ? json_object_size(set.obj) : 1, sizeof *e->sets);
        if (!e->sets)
            return no_memory(rd, line, "for the wisdom entry's overrides");
        const char *key;
        json_t *v;
        json_object_foreach(set.obj, key, v)
        {
            int64_t x;
            if (!wisdom_param_name_ok(key))
                return jsonrd_fail(&set, key, true, "%s: \"%.64s\" is not a parameter name (letters, digits, _)",
                                   set.name, key);
            if (jsonrd_int(&set, key, 0, INT64_MIN, INT64_MAX, NULL, &x) < 0)
                return -1;
            param_set *ps = &e->sets[e->nsets++];
            ps->key = try_strdup(key);
            ps->value = x;
            ps->text = try_asprintf("%s=%lld", key, (long long)x);
            if (!ps->key || !ps->text)
                return no_memory(rd, line, "for the wisdom entry's overrides");
        }
    }
    /* tflops and vs_cublas: numbers, finite, >= 0 (-0 is stored as 0). */
    const char *measures[] = {"tflops", "vs_cublas"};
    double *to[] = {&e->tflops, &e->vs_cublas};
    for (int i = 0; i < 2; i++) {
        double d = 0;
        if (jsonrd_number(&o, measures[i], JSONRD_REQUIRED, "a number >= 0; 0 when not measured", &d) < 0)
            return -1;
        if (!isfinite(d) || d < 0)
            return jsonrd_fail(&o, measures[i], false, "%s.%s = %g must be finite and >= 0", name, measures[i], d);
        *to[i] = d == 0 ? 0 : d;
    }
    int64_t occ = 0;
    if (jsonrd_int(&o, "occ", 0, 1, 64, "a whole number of blocks per SM, 1 to 64", &occ) < 0)
        return -1;
    e->occ = (int)occ;
    s = NULL;
    if (jsonrd_string(&o, "source", 0, NULL, &s) < 0)
        return -1;
    e->source = try_strdup(s);
    if (s && !e->source)
        return no_memory(rd, line, "for the wisdom entry's source");
    return 0;
}

/* Parse text into f (path set by the caller); on failure f holds what was read so far. */
static int parse_file(const jsonrd *rd, json_t *root, wisdom_file *f)
{
    jsonrd_obj top;
    if (jsonrd_top(rd, root, "a wisdom file", &top) || jsonrd_only(&top, k_file_keys, "a wisdom file"))
        return -1;
    json_t *ver = json_object_get(root, "version");
    if (!ver)
        return jsonrd_fail(&top, NULL, false, "missing key \"version\" (%d)", WISDOM_VERSION);
    if (!json_is_integer(ver) || json_integer_value(ver) != WISDOM_VERSION) {
        if (json_is_integer(ver))
            return jsonrd_fail(&top, "version", false, "\"version\" must be %d, got %lld (a newer engine wrote this file?)",
                               WISDOM_VERSION, (long long)json_integer_value(ver));
        return jsonrd_fail(&top, "version", false, "\"version\" must be %d, got %s", WISDOM_VERSION, jsonloc_kind(ver));
    }
    const char *dev = NULL, *arch = NULL;
    if (jsonrd_string(&top, "device", 0, NULL, &dev) < 0)
        return -1;
    if (dev && !*dev)
        return jsonrd_fail(&top, "device", false, "\"device\" must not be empty (leave it out for an arch-level file)");
    f->device = try_strdup(dev);
    if (dev && !f->device)
        return no_memory(rd, 0, "for the wisdom file's device");
    if (jsonrd_string(&top, "arch", 0, NULL, &arch) < 0)
        return -1;
    if (arch) {
        err_t aerr;
        err_clear(&aerr);
        if (arch_parse(arch, &f->arch, &aerr))
            return jsonrd_fail(&top, "arch", false, "\"arch\": %s", aerr.text);
    } else if (dev) {
        return jsonrd_fail(&top, "device", true,
                           "a file with \"device\" must name its \"arch\" too (only the default file has neither)");
    }
    json_t *entries;
    if (jsonrd_array(&top, "entries", JSONRD_REQUIRED, "an array, may be empty", &entries) < 0)
        return -1;
    const char *pent[] = {"entries"};
    size_t arr = 0;
    jsonloc_offset(rd->text, 0, pent, 1, false, &arr);
    size_t n = json_array_size(entries);
    f->entries = try_calloc(n ? n : 1, sizeof *f->entries);
    if (!f->entries)
        return no_memory(rd, 0, "for the wisdom file's entries");
    /* One pass over the array: each entry's offset and line from the one before it. */
    size_t base = arr, at = 0;
    int line = 1, col = 1;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 ? jsonloc_element(rd->text, arr, 0, &base) : jsonloc_next_element(rd->text, base, &base))
            base = arr;
        if (base < at) {
            at = 0;
            line = col = 1;
        }
        jsonloc_advance(rd->text, at, base, &line, &col);
        at = base;
        int rc = parse_entry(rd, f, i, base, line, json_array_get(entries, i), &f->entries[i]);
        f->nentries++; /* counted even when it failed: file_free frees what it holds */
        if (rc)
            return -1;
    }
    return 0;
}

int wisdom_parse(wisdom_t *w, const char *path, const char *text, size_t len, err_t *err)
{
    /* Exactly len bytes: a NUL inside is for the JSON parser to refuse, not to cut the text. */
    char *copy = try_malloc(len + 1);
    wisdom_file f;
    memset(&f, 0, sizeof f);
    f.path = try_strdup(path);
    int rc = -1;
    jsonrd rd = {path, copy, 1, 1, false, false, err};
    json_t *root;
    if (!copy || !f.path) {
        err_set(err, ERR_ALLOC, path, 0, 0, "no host memory to read the wisdom file");
        goto out;
    }
    memcpy(copy, text, len);
    copy[len] = '\0';
    if (jsonrd_load(&rd, len, 0, "invalid JSON", &root))
        goto out;
    rc = parse_file(&rd, root, &f);
    json_decref(root);
    if (rc == 0 && add_file(w, &f))
        rc = (err_set(err, ERR_ALLOC, path, 0, 0, "no host memory for the list of wisdom files"), -1);
out:
    wisdom_file_free(&f);
    free(copy);
    return rc;
}

int wisdom_load_file(wisdom_t *w, const char *path, err_t *err)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return err_set(err, ERR_INPUT, path, 0, 0, "is a directory, not a wisdom file"), -1;
    size_t len = 0;
    char *text = try_read_file(path, &len);
    if (!text && errno == ENOMEM)
        return err_set(err, ERR_ALLOC, path, 0, 0, "no host memory to read the wisdom file"), -1;
    if (!text)
        return err_set(err, ERR_INPUT, path, 0, 0, "cannot read wisdom: %s", strerror(errno)), -1;
    int rc = wisdom_parse(w, path, text, len, err);
    free(text);
    return rc;
}

char **wisdom_list_dir(const char *dir, size_t *n)
{
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char **names = try_malloc(sizeof *names);
    struct dirent *de;
    while (names && (de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        /* Dot files are skipped: wisdom_record's temp files, editors' backups. */
        if (de->d_name[0] == '.' || l < 6 || strcmp(de->d_name + l - 5, ".json") != 0)
            continue;
        char **more = try_realloc(names, (*n + 1) * sizeof *names);
        char *name = more ? try_strdup(de->d_name) : NULL;
        if (more)
            names = more;
        if (!name) {
            for (size_t i = 0; i < *n; i++)
                free(names[i]);
            free(names);
            names = NULL;
            break;
        }
        names[(*n)++] = name;
    }
    closedir(d);
    if (!names) {
        *n = 0;
        errno = ENOMEM;
        return NULL;
    }
    if (*n > 1)
        qsort(names, *n, sizeof *names, cmp_strp);
    return names;
}

int wisdom_load_dir(wisdom_t *w, const char *dir, err_t *err)
{
    size_t n;
    char **names = wisdom_list_dir(dir, &n);
    if (!names) {
        if (errno == ENOENT)
            return 0; /* no wisdom yet: every lookup finds nothing */
        if (errno == ENOMEM)
            return err_set(err, ERR_ALLOC, dir, 0, 0, "no host memory to list the wisdom directory"), -1;
        return err_set(err, ERR_INPUT, dir, 0, 0, "cannot read the wisdom directory: %s", strerror(errno)), -1;
    }
    /* Into a scratch wisdom first, so that a bad file leaves w as it was. */
    wisdom_t tmp;
    wisdom_init(&tmp);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        char *p = try_path_join(dir, names[i]);
        rc = p ? wisdom_load_file(&tmp, p, err)
               : (err_set(err, ERR_ALLOC, dir, 0, 0, "no host memory for a wisdom file's path"), -1);
        free(p);
    }
    /* Room for them all first, so that w takes every file or none. */
    wisdom_file *room = rc == 0 ? try_realloc(w->files, (w->nfiles + tmp.nfiles + 1) * sizeof *w->files) : NULL;
    if (room)
        w->files = room;
    else if (rc == 0)
        rc = (err_set(err, ERR_ALLOC, dir, 0, 0, "no host memory for the list of wisdom files"), -1);
    for (size_t i = 0; i < tmp.nfiles && rc == 0; i++)
        insert_file(w, &tmp.files[i]);
    wisdom_free(&tmp);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

/* ---------------------------------------------------------------------------------------------- */
/* Lookup                                                                                          */

static double log_ratio(int64_t a, int64_t b)
{
    return log((double)a / (double)b);
}

double wisdom_distance(const shape_t *a, const shape_t *b)
{
    /* K may be 0 (C = beta*C): it counts as 1, so K = 0 and K = 1 are the same distance away. */
    double dm = log_ratio(a->m > 0 ? a->m : 1, b->m > 0 ? b->m : 1);
    double dn = log_ratio(a->n > 0 ? a->n : 1, b->n > 0 ? b->n : 1);
    double dk = log_ratio(a->k > 0 ? a->k : 1, b->k > 0 ? b->k : 1);
    return sqrt(dm * dm + dn * dn + dk * dk);
}

static bool same_device(const wisdom_file *f, const char *device_name)
{
    return device_name && f->device && strcmp(f->device, device_name) == 0;
}

static bool in_level(const wisdom_file *f, wisdom_level level, const char *device_name, int arch)
{
    switch (level) {
    case WISDOM_DEVICE:
        return same_device(f, device_name);
    case WISDOM_ARCH:
        return arch && f->arch && arch_sm(f->arch) == arch_sm(arch) && !same_device(f, device_name);
    case WISDOM_DEFAULT:
        return !f->device && !f->arch;
    }
    return false;
}

int wisdom_lookup(const wisdom_t *w, const char *device_name, int arch, dtype_t dtype, const shape_t *shape,
                  wisdom_choice *choice)
{
    memset(choice, 0, sizeof *choice);
    for (wisdom_level level = WISDOM_DEVICE; level <= WISDOM_DEFAULT; level++) {
        const wisdom_entry *best = NULL;
        const wisdom_file *best_file = NULL;
        double best_d = INFINITY;
        bool best_exact = false;
        for (size_t i = 0; i < w->nfiles; i++) {
            const wisdom_file *f = &w->files[i];
            if (!in_level(f, level, device_name, arch))
                continue;
            for (size_t j = 0; j < f->nentries; j++) {
                const wisdom_entry *e = &f->entries[j];
                if (e->dtype != dtype)
                    continue;
                bool exact = e->shape.m == shape->m && e->shape.n == shape->n && e->shape.k == shape->k;
                double d = exact ? 0 : wisdom_distance(&e->shape, shape);
                /* Strictly better only: the first in file order keeps a tie. An exact shape beats
                 * a different one at distance 0 (K = 0 against K = 1). */
                if (!best || (exact && !best_exact) || (exact == best_exact && d < best_d)) {
                    best = e;
                    best_file = f;
                    best_d = d;
                    best_exact = exact;
                }
            }
        }
        if (best) {
            choice->entry = best;
            choice->file = best_file;
            choice->level = level;
            choice->exact = best_exact;
            choice->distance = best_d;
            return 0;
        }
    }
    return -1;
}

int wisdom_first_level(const wisdom_t *w, const char *device_name, int arch, dtype_t dtype)
{
    for (wisdom_level level = WISDOM_DEVICE; level <= WISDOM_DEFAULT; level++)
        for (size_t i = 0; i < w->nfiles; i++)
            if (in_level(&w->files[i], level, device_name, arch))
                for (size_t j = 0; j < w->files[i].nentries; j++)
                    if (w->files[i].entries[j].dtype == dtype)
                        return (int)level;
    return 0;
}

size_t wisdom_level_entries(const wisdom_t *w, const char *device_name, int arch, dtype_t dtype, int level,
                            wisdom_choice *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < w->nfiles; i++) {
        const wisdom_file *f = &w->files[i];
        if (level < WISDOM_DEVICE || !in_level(f, (wisdom_level)level, device_name, arch))
            continue;
        for (size_t j = 0; j < f->nentries; j++) {
            if (f->entries[j].dtype != dtype)
                continue;
            if (n < max)
                out[n] = (wisdom_choice){&f->entries[j], f, (wisdom_level)level, false, 0};
            n++;
        }
    }
    return n;
}

static const char *level_name(wisdom_level l)
{
    return l == WISDOM_DEVICE ? "device" : l == WISDOM_ARCH ? "arch" : "default";
}

char *wisdom_choice_format(const wisdom_choice *c)
{
    const wisdom_entry *e = c->entry;
    strbuf sb;
    sb_try_init(&sb); /* failed: additions dropped, sb_steal gives NULL */
    const char *base = strrchr(e->config, '/');
    base = base ? base + 1 : e->config;
    size_t bl = strlen(base);
    if (bl > 5 && strcmp(base + bl - 5, ".json") == 0)
        bl -= 5;
    sb_addn(&sb, base, bl);
    for (size_t i = 0; i < e->nsets; i++)
        sb_addf(&sb, "%s%s", i ? "," : "[", e->sets[i].text);
    if (e->nsets)
        sb_add(&sb, "]");
    char shape[64];
    wisdom_format_shape(&e->shape, shape, sizeof shape);
    sb_addf(&sb, " (%s:%d, %s, ", c->file->path, e->line, level_name(c->level));
    if (c->exact)
        sb_addf(&sb, "exact %s)", shape);
    else
        sb_addf(&sb, "nearest %s at distance %.2f)", shape, c->distance);
    return sb_steal(&sb);
}

/* ---------------------------------------------------------------------------------------------- */
/* Names                                                                                           */

char *wisdom_slug(const char *device_name)
{
    strbuf sb;
    sb_try_init(&sb);
    bool dash = false;
    for (const char *p = device_name; *p; p++) {
        unsigned char c = (unsigned char)*p;
        /* ASCII only: isalnum would take bytes of UTF-8 sequences as letters in some locales. */
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum) {
            dash = sb.len > 0;
            continue;
        }
        if (dash)
            sb_add(&sb, "-");
        dash = false;
        char lc = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        sb_addn(&sb, &lc, 1);
    }
    if (sb.len == 0)
        sb_add(&sb, "device");
    return sb_steal(&sb);
}

char *wisdom_device_path(const char *dir, const char *device_name)
{
    char *slug = wisdom_slug(device_name);
    char *p = slug ? try_asprintf("%s/%s.json", dir, slug) : NULL;
    free(slug);
    return p;
}
