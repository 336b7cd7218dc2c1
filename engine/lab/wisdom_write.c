/* wisdom_write.c — recording a new winner into a device's wisdom file (wisdom_record) and a file
 * as JSON (wisdom_file_to_json): the writing half of wisdom.h. Reading and lookup are wisdom.c's;
 * this file only calls into it (wisdom_impl.h, wisdom_parse), never the other way. */
#define _GNU_SOURCE /* flock, mkstemp */
#include "wisdom.h"
#include "wisdom_impl.h"

#include "arch.h"
#include "paths.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------------------------- */
/* Writing                                                                                         */

/* s as a JSON string (jansson escapes it); false when s is not UTF-8. */
static bool add_json_string(strbuf *sb, const char *s)
{
    json_t *j = json_string(s);
    if (!j)
        return false;
    char *d = json_dumps(j, JSON_ENCODE_ANY);
    json_decref(j);
    if (!d)
        return false;
    sb_add(sb, d);
    free(d);
    return true;
}

char *wisdom_file_to_json(const wisdom_file *f)
{
    strbuf sb;
    sb_init(&sb);
    bool ok = true;
    sb_addf(&sb, "{\n  \"version\": %d,\n", WISDOM_VERSION);
    if (f->device) {
        sb_add(&sb, "  \"device\": ");
        ok = ok && add_json_string(&sb, f->device);
        sb_add(&sb, ",\n");
    }
    if (f->arch) {
        char a[16];
        sb_addf(&sb, "  \"arch\": \"%s\",\n", arch_name(f->arch, a, sizeof a));
    }
    sb_add(&sb, "  \"entries\": [");
    for (size_t i = 0; i < f->nentries; i++) {
        const wisdom_entry *e = &f->entries[i];
        char shape[64];
        wisdom_format_shape(&e->shape, shape, sizeof shape);
        sb_addf(&sb, "%s\n    {\"dtype\": \"%s\", ", i ? "," : "", dtype_name(e->dtype));
        if (e->op) /* NN is written as before layouts: no key */
            sb_addf(&sb, "\"op\": \"%s\", ", wisdom_op_name(e->op));
        if (wisdom_batch(e) > 1) /* one product is written as before batches: no key */
            sb_addf(&sb, "\"batch\": %lld, ", (long long)e->batch);
        if (!wisdom_align_packed(e)) { /* the packed layout's class is written as before: no key */
            layout_align al;
            wisdom_align(e, &al);
            sb_addf(&sb, "\"align\": [%d, %d, %d], ", al.a, al.b, al.c);
        }
        sb_addf(&sb, "\"shape\": \"%s\", \"config\": ", shape);
        ok = ok && add_json_string(&sb, e->config);
        if (e->nsets) {
            sb_add(&sb, ", \"set\": {");
            for (size_t k = 0; k < e->nsets; k++) {
                if (k)
                    sb_add(&sb, ", ");
                ok = ok && add_json_string(&sb, e->sets[k].key);
                sb_addf(&sb, ": %lld", (long long)e->sets[k].value);
            }
            sb_add(&sb, "}");
        }
        sb_add(&sb, ", \"tflops\": ");
        sb_add_double(&sb, e->tflops);
        sb_add(&sb, ", \"vs_cublas\": ");
        sb_add_double(&sb, e->vs_cublas);
        if (e->occ > 0)
            sb_addf(&sb, ", \"occ\": %d", e->occ);
        if (e->source) {
            sb_add(&sb, ", \"source\": ");
            ok = ok && add_json_string(&sb, e->source);
        }
        sb_add(&sb, "}");
    }
    sb_add(&sb, f->nentries ? "\n  ]\n}\n" : "]\n}\n");
    if (!ok) {
        sb_free(&sb);
        return NULL;
    }
    return sb_steal(&sb);
}

/* Order of entries in a written file: dtype, op, batch, M, N, K, then the alignment class (A, B, C,
 * the best aligned last: entries without "align" keep the order they had before it) (0: the same
 * key). */
static int cmp_entry(const void *pa, const void *pb)
{
    const wisdom_entry *a = pa, *b = pb;
    if (a->dtype != b->dtype)
        return a->dtype < b->dtype ? -1 : 1;
    if (a->op != b->op)
        return a->op < b->op ? -1 : 1;
    if (wisdom_batch(a) != wisdom_batch(b))
        return wisdom_batch(a) < wisdom_batch(b) ? -1 : 1;
    const int64_t x[3] = {a->shape.m, a->shape.n, a->shape.k}, y[3] = {b->shape.m, b->shape.n, b->shape.k};
    for (int i = 0; i < 3; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    layout_align al, bl;
    wisdom_align(a, &al);
    wisdom_align(b, &bl);
    const int xa[3] = {al.a, al.b, al.c}, ya[3] = {bl.a, bl.b, bl.c};
    for (int i = 0; i < 3; i++)
        if (xa[i] != ya[i])
            return xa[i] < ya[i] ? -1 : 1;
    return 0;
}

/* The rule e breaks as an entry of a file (what wisdom_parse would refuse), in why; 0 when none. */
static int check_entry(const wisdom_entry *e, char *why, size_t len)
{
    char shape[64], sw[256];
    wisdom_format_shape(&e->shape, shape, sizeof shape);
    if (e->dtype < 0 || e->dtype >= DTYPE_COUNT)
        return snprintf(why, len, "dtype %d is not one of " DTYPE_LIST, (int)e->dtype), -1;
    if (e->op < 0 || e->op > 3)
        return snprintf(why, len, "op %d is not 0 to 3 (NN, NT, TN, TT)", e->op), -1;
    if (e->batch < 0 || e->batch > WISDOM_MAX_BATCH)
        return snprintf(why, len, "batch %lld is not 1 to %d", (long long)e->batch, WISDOM_MAX_BATCH), -1;
    if (shape_rule(&e->shape, sw, sizeof sw))
        return snprintf(why, len, "shape %s: %s", shape, sw), -1;
    const int al[3] = {e->align.a, e->align.b, e->align.c}, most = (int)(16 / dtype_size(e->dtype));
    for (int i = 0; i < 3 && (al[0] || al[1] || al[2]); i++)
        if (al[i] < 1 || al[i] > most || (al[i] & (al[i] - 1)))
            return snprintf(why, len, "align %d,%d,%d: each must be a power of two from 1 to %d (%s elements)", al[0],
                            al[1], al[2], most, dtype_name(e->dtype)),
                   -1;
    if (!e->config || !*e->config)
        return snprintf(why, len, "the entry names no config"), -1;
    if (!isfinite(e->tflops) || e->tflops < 0 || !isfinite(e->vs_cublas) || e->vs_cublas < 0)
        return snprintf(why, len, "tflops = %g and vs_cublas = %g must be finite and >= 0", e->tflops, e->vs_cublas),
               -1;
    if (e->occ < 0 || e->occ > 64)
        return snprintf(why, len, "occ = %d must be 1 to 64 blocks per SM (0: not known)", e->occ), -1;
    for (size_t i = 0; i < e->nsets; i++) {
        if (!e->sets[i].key || !wisdom_param_name_ok(e->sets[i].key))
            return snprintf(why, len, "set: \"%.64s\" is not a parameter name (letters, digits, _)",
                            e->sets[i].key ? e->sets[i].key : ""),
                   -1;
        for (size_t j = 0; j < i; j++)
            if (strcmp(e->sets[i].key, e->sets[j].key) == 0)
                return snprintf(why, len, "set: %s is given twice", e->sets[i].key), -1;
    }
    return 0;
}

static bool same_owner(const wisdom_file *f, const char *device_name, int arch)
{
    bool dev = (!f->device && !device_name) || (f->device && device_name && strcmp(f->device, device_name) == 0);
    return dev && ((!f->arch && !arch) || (f->arch && arch && arch_sm(f->arch) == arch_sm(arch)));
}

static void owner_name(const char *device_name, int arch, char *buf, size_t len)
{
    char a[16];
    if (device_name)
        snprintf(buf, len, "device \"%s\" (%s)", device_name, arch_name(arch, a, sizeof a));
    else if (arch)
        snprintf(buf, len, "arch %s", arch_name(arch, a, sizeof a));
    else
        snprintf(buf, len, "the default level");
}

int wisdom_record(const char *path, const char *device_name, int arch, const wisdom_entry *e, wisdom_outcome *outcome,
                  err_t *err)
{
    char why[512];
    if (outcome)
        *outcome = 0;
    if (device_name && (!*device_name || !arch))
        return err_set(err, ERR_INPUT, path, 0, 0, "cannot record: a device file needs a device name and an arch"), -1;
    if (check_entry(e, why, sizeof why))
        return err_set(err, ERR_INPUT, path, 0, 0, "cannot record: %s", why), -1;

    char *dir = path_dirname(path);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        err_set(err, ERR_INPUT, dir, 0, 0, "cannot create the wisdom directory: %s", strerror(errno));
        free(dir);
        return -1;
    }
    /* The file is replaced by rename, so the lock is taken on its directory, which stays. */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || flock(dfd, LOCK_EX) != 0) {
        err_set(err, ERR_INPUT, dir, 0, 0, "cannot lock the wisdom directory: %s", strerror(errno));
        if (dfd >= 0)
            close(dfd);
        free(dir);
        return -1;
    }

    int rc = -1;
    wisdom_t w;
    wisdom_init(&w);
    wisdom_file fresh;
    memset(&fresh, 0, sizeof fresh);
    wisdom_file *f = &fresh;
    char *text = NULL;
    wisdom_outcome what = WISDOM_CREATED;
    size_t len;
    char *old = read_file(path, &len);
    if (old) {
        int prc = wisdom_parse(&w, path, old, len, err);
        free(old);
        if (prc)
            goto out; /* never overwrite a file we cannot read: its entries would be lost */
        f = &w.files[0];
        if (!same_owner(f, device_name, arch)) {
            char mine[256], theirs[256];
            owner_name(f->device, f->arch, theirs, sizeof theirs);
            owner_name(device_name, arch, mine, sizeof mine);
            err_set(err, ERR_INPUT, path, 0, 0, "cannot record: the file holds wisdom for %s, not for %s", theirs,
                    mine);
            goto out;
        }
        what = WISDOM_ADDED;
    } else if (errno == ENOENT) {
        fresh.path = xstrdup(path);
        fresh.device = device_name ? xstrdup(device_name) : NULL;
        fresh.arch = arch;
        what = WISDOM_CREATED;
    } else {
        err_set(err, ERR_INPUT, path, 0, 0, "cannot read wisdom: %s", strerror(errno));
        goto out;
    }

    wisdom_entry *same = NULL;
    int copied = 0;
    for (size_t i = 0; i < f->nentries; i++)
        if (cmp_entry(&f->entries[i], e) == 0)
            same = &f->entries[i];
    if (same && !(e->tflops > same->tflops)) {
        what = WISDOM_KEPT;
        rc = 0;
        goto out;
    }
    if (same) {
        wisdom_entry_free(same);
        copied = wisdom_entry_copy(same, e);
        what = WISDOM_REPLACED;
    } else {
        f->entries = xrealloc(f->entries, (f->nentries + 1) * sizeof *f->entries);
        copied = wisdom_entry_copy(&f->entries[f->nentries++], e);
    }
    if (copied) {
        err_set(err, ERR_ALLOC, path, 0, 0, "no host memory for the wisdom entry");
        goto out;
    }
    qsort(f->entries, f->nentries, sizeof *f->entries, cmp_entry);
    text = wisdom_file_to_json(f);
    if (!text) {
        err_set(err, ERR_INPUT, path, 0, 0, "cannot record: a string of the entry is not valid UTF-8");
        goto out;
    }
    /* Read it back before writing, as any later reader will: a file we wrote must always load. */
    wisdom_t check;
    wisdom_init(&check);
    int crc = wisdom_parse(&check, path, text, strlen(text), err);
    wisdom_free(&check);
    if (crc)
        goto out;
    int step = write_file_atomic(path, text, strlen(text));
    if (step != WRITE_OK) {
        err_set(err, step == WRITE_CREATE ? ERR_INPUT : ERR_SYSTEM, path, 0, 0, "cannot write wisdom: %s",
                strerror(errno));
        goto out;
    }
    rc = 0;
out:
    if (rc == 0 && outcome)
        *outcome = what;
    free(text);
    wisdom_file_free(&fresh);
    wisdom_free(&w);
    flock(dfd, LOCK_UN);
    close(dfd);
    free(dir);
    return rc;
}

