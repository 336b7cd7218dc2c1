/* wisdom.h — the best known config for each (device, arch, dtype, shape), kept as JSON files and
 * looked up with fallback, like CLBlast's database: what `engine bench --auto` runs and what
 * `engine tune --wisdom` records.
 *
 * One file per device, wisdom/<slug>.json (wisdom_slug: "NVIDIA H100 80GB HBM3" is
 * nvidia-h100-80gb-hbm3.json), read strictly (an unknown key is an error naming it):
 *
 *   {
 *     "version": 1,
 *     "device": "NVIDIA H100 80GB HBM3",
 *     "arch": "sm_90",
 *     "entries": [
 *       {"dtype": "f32", "shape": "4096x4096x4096", "config": "configs/warptile_db.json", "tflops": 51.2, ...}
 *     ]
 *   }
 *
 * A file without "device" is an arch-level file; a file with neither "device" nor "arch" is a
 * default-level file (wisdom/default.json); a file with "device" must name its "arch". An entry has
 * dtype, op, batch, align, shape, config, set, tflops, vs_cublas, occ and source, of which "op"
 * (NN), "batch" (1), "align" (the packed layout's class), "set" (overrides of the config's params,
 * like --set), "occ" (blocks per SM measured there, 1 to 64) and "source" (free text: the command
 * and date that measured it) are optional. One file holds each (dtype, op, batch, align, shape) at
 * most once. wisdom/README.md has the details.
 *
 * Lookup for (device D, arch A, dtype T, shape S) tries three levels in order and stops at the
 * first that holds any entry of dtype T:
 *   1. device:  files whose "device" is D exactly;
 *   2. arch:    arch-level files for A, and device files of other devices for A;
 *   3. default: files with neither device nor arch.
 * Archs match on the compute capability: sm_90 and sm_90a are the same hardware. Within the level
 * the entry of shape S wins, else the nearest by log distance
 *   sqrt(ln(M1/M2)^2 + ln(N1/N2)^2 + ln(max(K1,1)/max(K2,1))^2)
 * (a shape twice as large in one dimension is as far as one half as large), ties going to the
 * first entry in file order, files in path order. */
#ifndef ENGINE_WISDOM_H
#define ENGINE_WISDOM_H

#include "config.h"
#include "err.h"
#include "layout.h"
#include "shape.h"
#include "template.h"

#include <stdbool.h>
#include <stddef.h>

#define WISDOM_VERSION 1 /* value of "version"; a reader refuses any other */
#define WISDOM_MAX_BATCH 65535 /* as --batch: the batch takes grid z */

/* One measured winner. Strings are owned by the wisdom_file that holds the entry. */
typedef struct {
    dtype_t dtype;
    int op;          /* "op": 0 NN, 1 NT, 2 TN, 3 TT (2 * ta + tb, layout.h); absent in the file: NN */
    int64_t batch;   /* "batch": products of a packed strided batch it was measured on, 1 to
                      * WISDOM_MAX_BATCH; absent in the file: 1 (0 in a struct built in code is 1 too) */
    layout_align align; /* "align": [A, B, C], each operand's alignment class in elements (layout.h's
                         * layout_align_ld: what the leading dimensions it was measured with allow on
                         * 16-byte-aligned buffers), a power of two up to 16 bytes; absent in the file
                         * (and all 0 in a struct built in code): the packed layout's class at the
                         * entry's own op, batch and shape, what every entry before "align" was
                         * measured at (wisdom_align) */
    shape_t shape;   /* M, N >= 1, K >= 0, each at most SHAPE_MAX_DIM */
    char *config;    /* path of the config as written in the file: "configs/warptile_db.json" */
    param_set *sets; /* "set": overrides of the config's params, in file order (config_load takes them) */
    size_t nsets;
    double tflops;    /* TFLOP/s measured, finite, >= 0 (0: not measured, e.g. the shipped defaults) */
    double vs_cublas; /* cuBLAS time / ours (0.91: 91 % of cuBLAS), finite, >= 0 */
    int occ;          /* "occ": blocks of the main kernel resident per SM, measured at the entry's shape;
                       * 0 when not known (the selection model then estimates it: select.h) */
    char *source;     /* how it was measured, free text; NULL when absent */
    int line;         /* 1-based line of the entry in its file; 0 for an entry not read from a file */
} wisdom_entry;

/* One file as read. */
typedef struct {
    char *path;            /* as given to wisdom_load_file, or dir/name from wisdom_load_dir */
    char *device;          /* device name; NULL for an arch-level or default-level file */
    int arch;              /* target as arch_parse gives it (90, 90 + ARCH_SPECIFIC); 0: default level */
    wisdom_entry *entries; /* in file order */
    size_t nentries;
} wisdom_file;

/* Every file loaded, sorted by path (then by load order for the same path). */
typedef struct {
    wisdom_file *files;
    size_t nfiles;
} wisdom_t;

typedef enum { WISDOM_DEVICE = 1, WISDOM_ARCH, WISDOM_DEFAULT } wisdom_level;

/* What a lookup found. Pointers into the wisdom_t: valid until it is freed or loaded into. */
typedef struct {
    const wisdom_entry *entry;
    const wisdom_file *file;
    wisdom_level level;
    bool exact;      /* entry->shape is the shape asked for */
    double distance; /* log distance from the shape asked for; 0 when exact */
} wisdom_choice;

/* Empty wisdom; pair with wisdom_free. */
void wisdom_init(wisdom_t *w);
/* Free everything w holds and leave it empty. */
void wisdom_free(wisdom_t *w);

/* Load every *.json of dir (names starting with '.' excepted) in sorted order. A missing dir is
 * empty wisdom, not an error; a path that is not a directory, an unreadable file and a malformed
 * file are (EXIT_INPUT): err names file:line:column and the rule broken. On an error w is left as it
 * was (no file of dir is added). */
int wisdom_load_dir(wisdom_t *w, const char *dir, err_t *err);
/* The wisdom files of dir (*.json, no dot files), sorted by name: n of them, each and the array to
 * free; NULL (errno set) when dir cannot be read. */
char **wisdom_list_dir(const char *dir, size_t *n);
/* Load one file (it must exist), on the same terms. */
int wisdom_load_file(wisdom_t *w, const char *path, err_t *err);
/* The same from a file's text in memory (path names it in errors and in choices; the fuzzer uses
 * this). Exactly len bytes are read: a NUL inside is the JSON parser's to refuse. Refused:
 * invalid JSON (jansson's line and column), a member of the wrong type, an unknown key, a
 * "version" other than 1, a bad "arch", a "device" without "arch" or empty, a missing "entries"
 * or entry member, an unknown dtype, a shape that is not MxNxK (M, N >= 1, K >= 0, no signs or
 * leading zeros, each at most SHAPE_MAX_DIM), an empty "config", a "set" value that is not an integer
 * or a "set" key that is not a parameter name, a tflops or vs_cublas that is negative, an "op" other
 * than "NN", "NT", "TN", "TT", a "batch" that is not a whole number from 1 to WISDOM_MAX_BATCH, an
 * "align" that is not three powers of two from 1 to 16 bytes' worth of the dtype's elements, and a
 * (dtype, op, batch, alignment class, shape) that the file already holds. */
int wisdom_parse(wisdom_t *w, const char *path, const char *text, size_t len, err_t *err);

/* The entry for (device_name, arch, dtype, shape) by the levels and distance above. device_name may
 * be NULL (no device level), arch 0 (no arch level). Returns 0 and fills *choice, or -1 ("no
 * choice": no entry of dtype at any level; *choice zeroed). */
int wisdom_lookup(const wisdom_t *w, const char *device_name, int arch, dtype_t dtype, const shape_t *shape,
                  wisdom_choice *choice);

/* The first level (above) that holds an entry of dtype, 0 when none does. */
int wisdom_first_level(const wisdom_t *w, const char *device_name, int arch, dtype_t dtype);
/* Every entry of dtype at `level`, in file order, as choices (exact false, distance 0): the
 * candidates of the selection model (select.h). Returns how many; at most max are stored. */
size_t wisdom_level_entries(const wisdom_t *w, const char *device_name, int arch, dtype_t dtype, int level,
                            wisdom_choice *out, size_t max);

/* The log distance between two shapes (see above); symmetric, 0 for equal shapes. */
double wisdom_distance(const shape_t *a, const shape_t *b);
/* An entry's batch: 1 where it has none (0 in a struct built in code). */
static inline int64_t wisdom_batch(const wisdom_entry *e) { return e->batch > 1 ? e->batch : 1; }
/* The packed layout's alignment class at e's op, batch and shape (layout_align_ld). */
void wisdom_packed_align(const wisdom_entry *e, layout_align *al);
/* e's alignment class: its "align", else the packed one. */
void wisdom_align(const wisdom_entry *e, layout_align *al);
/* Whether e was measured at the packed layout's class (no "align", or one equal to it): the
 * alignment its shape gives, which the selection model sees by planning at the shape. */
bool wisdom_align_packed(const wisdom_entry *e);
/* "1,4,4": a class for messages, into buf; returns buf. */
const char *wisdom_align_text(const layout_align *al, char *buf, size_t len);

/* A choice for people, newly allocated (try_* memory, util.h: NULL when the host has none):
 *   warptile_db[BM=128] (wisdom/nvidia-h100-80gb-hbm3.json:12, device, nearest 4096x4096x4096 at distance 0.03)
 *   dgemm_dmma (wisdom/default.json:5, default, exact 4096x4096x4096)
 * The name is the config's file name without ".json". */
char *wisdom_choice_format(const wisdom_choice *c);

/* What wisdom_record did. */
typedef enum {
    WISDOM_CREATED = 1, /* the file did not exist: written with this one entry */
    WISDOM_ADDED,       /* no entry of this (dtype, shape): added */
    WISDOM_REPLACED,    /* an entry of this (dtype, shape) with lower tflops: replaced */
    WISDOM_KEPT,        /* an entry of this (dtype, shape) with tflops as high or higher: the file is untouched */
} wisdom_outcome;

/* Record e in the wisdom file at path for device_name and arch (device_name NULL: an arch-level
 * file, or with arch 0 too a default-level one; a device needs an arch): read the file (a missing
 * one is created; its directory is created when missing, one level), add e or replace the entry of
 * the same (dtype, shape) when e has higher tflops, sort the entries by dtype then M, N, K, and
 * write the file back atomically (a temp file in the same directory, fsync, rename), one entry per
 * line so diffs stay readable. e->line is ignored. Read-modify-write happens under an exclusive
 * flock() of the directory, so concurrent recorders in that directory do not lose entries.
 * Refused (EXIT_INPUT, nothing written): a corrupt existing file (its own error), a file that
 * belongs to another device or arch, and an entry that breaks a rule of wisdom_parse or holds a
 * string that is not UTF-8. An I/O error is EXIT_SYSTEM, and leaves the file as it was. *outcome
 * (may be NULL) says what happened. */
int wisdom_record(const char *path, const char *device_name, int arch, const wisdom_entry *e, wisdom_outcome *outcome,
                  err_t *err);

/* A file as wisdom_record writes it (entries in the order held), newly allocated; NULL when a
 * string of it is not UTF-8 (jansson could not read the file back). */
char *wisdom_file_to_json(const wisdom_file *f);

/* "NN", "NT", "TN" or "TT" for an entry's op (wisdom_entry.op). */
const char *wisdom_op_name(int op);

/* "nvidia-h100-80gb-hbm3" for "NVIDIA H100 80GB HBM3": lower case, each run of other characters
 * than ASCII letters and digits one '-', none at either end; "device" when nothing is left. Newly
 * allocated in try_* memory (util.h): NULL when the host has none. */
char *wisdom_slug(const char *device_name);
/* dir/<slug>.json for device_name, newly allocated in try_* memory: NULL when the host has none. */
char *wisdom_device_path(const char *dir, const char *device_name);

#endif
