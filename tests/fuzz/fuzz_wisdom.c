/* fuzz_wisdom.c — one wisdom file. A file that parses must: answer lookups (the entry chosen has
 * the dtype asked for, an exact choice has the shape asked for, a distance is finite and >= 0);
 * write back (wisdom_file_to_json) to a text that parses to the same text again; and survive
 * wisdom_record of its first entries into a fresh file, which must then load with those entries. */
#define _GNU_SOURCE
#include "util.h"
#include "wisdom.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One scratch directory per process; each input records into a file that is removed afterwards,
 * and the directory goes when the fuzzer exits. */
static char g_dir[64];

static void remove_dir(void)
{
    rmdir(g_dir);
}

static void check_lookup(const wisdom_t *w, const char *device, int arch, dtype_t d, shape_t s)
{
    wisdom_choice c;
    if (wisdom_lookup(w, device, arch, d, &s, &c) != 0) {
        if (c.entry)
            abort();
        return;
    }
    if (!c.entry || !c.file || c.entry->dtype != d || !isfinite(c.distance) || c.distance < 0)
        abort();
    if (c.exact && (c.entry->shape.m != s.m || c.entry->shape.n != s.n || c.entry->shape.k != s.k))
        abort();
    char *f = wisdom_choice_format(&c);
    free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!g_dir[0]) {
        snprintf(g_dir, sizeof g_dir, "/tmp/fuzz-wisdom-XXXXXX");
        if (!mkdtemp(g_dir))
            abort();
        atexit(remove_dir);
    }
    wisdom_t w;
    wisdom_init(&w);
    err_t err;
    err_clear(&err);
    if (wisdom_parse(&w, "fuzz.json", (const char *)data, size, &err) != 0) {
        if (!err_isset(&err) || w.nfiles != 0)
            abort();
        wisdom_free(&w);
        return 0;
    }
    const wisdom_file *f = &w.files[0];
    const shape_t shapes[] = {{1, 1, 0}, {4096, 4096, 4096}, {127, 129, 131}, {65536, 1, 1}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int d = DTYPE_F32; d <= DTYPE_F64; d++) {
            check_lookup(&w, f->device, f->arch, (dtype_t)d, shapes[i]);
            check_lookup(&w, "another device", f->arch ? f->arch : 90, (dtype_t)d, shapes[i]);
            check_lookup(&w, NULL, 0, (dtype_t)d, shapes[i]);
        }
    for (size_t i = 0; i < f->nentries && i < 4; i++)
        check_lookup(&w, f->device, f->arch, f->entries[i].dtype, f->entries[i].shape);

    /* In memory: written, read, written again is the same text. */
    char *a = wisdom_file_to_json(f);
    if (!a)
        abort(); /* every string came from jansson: it is UTF-8 */
    wisdom_t w2;
    wisdom_init(&w2);
    err_clear(&err);
    if (wisdom_parse(&w2, "fuzz.json", a, strlen(a), &err) != 0) {
        err_print(stderr, &err);
        abort();
    }
    char *b = wisdom_file_to_json(&w2.files[0]);
    if (!b || strcmp(a, b) != 0)
        abort();
    free(a);
    free(b);
    wisdom_free(&w2);

    /* Through wisdom_record: a few entries into a fresh file, then read back. */
    char *path = xasprintf("%s/w.json", g_dir);
    size_t n = f->nentries < 3 ? f->nentries : 3;
    for (size_t i = 0; i < n; i++) {
        wisdom_outcome what;
        err_clear(&err);
        if (wisdom_record(path, f->device, f->arch, &f->entries[i], &what, &err) != 0) {
            err_print(stderr, &err);
            abort();
        }
        if (what != (i == 0 ? WISDOM_CREATED : WISDOM_ADDED))
            abort(); /* a parsed file holds each (dtype, shape) once */
    }
    if (n) {
        wisdom_t w3;
        wisdom_init(&w3);
        err_clear(&err);
        if (wisdom_load_file(&w3, path, &err) != 0 || w3.files[0].nentries != n)
            abort();
        /* Recording the same entry again keeps it: its tflops is not higher. */
        wisdom_outcome what;
        err_clear(&err);
        if (wisdom_record(path, f->device, f->arch, &f->entries[0], &what, &err) != 0 || what != WISDOM_KEPT)
            abort();
        wisdom_free(&w3);
        unlink(path);
    }
    free(path);
    wisdom_free(&w);
    return 0;
}
