/* pick.h — `engine bench --auto`, `engine verify --auto` and `engine pick`: for each shape of the
 * run, the config to use on this GPU, its arch and the dtype (--dtype, else f32).
 *
 * Wisdom (wisdom.h) is read from two places: the user's ($XDG_DATA_HOME/engine/wisdom, where
 * --auto-tune records; a damaged file there is reported in one line and left out) and then the
 * shipped one (--wisdom DIR, else paths_wisdom_dir(); a damaged file there is an error). A shape that
 * has an entry of its own runs it, the user's first; any other shape goes to the selection model
 * (select.h) over the entries of the first level that holds the dtype (and the levels below it
 * while fewer than PICK_OP_ENOUGH of them are of the problem's op or NN). Of those, only entries
 * measured in the problem's op (--op; wisdom_entry.op) count, or the NN ones where the level holds
 * none of that op for the problem's kind (one product, or a batch: the NT entries of batches are no
 * witness for one NT product), or where every one of them is left out for the target (op_note says
 * which). Entries carry the batch they were measured on ("batch"): at
 * --batch B only an entry of B products is exact, and the model weighs the others at B products.
 * And the alignment class ("align"): the problem's is what --lda/--ldb/--ldc (and the batch
 * strides) allow on the command's 16-byte-aligned buffers (layout_align_ld); only an entry of that
 * class is exact, and one of another class weighs less (select_pick_align).
 *
 * The choices become the run's entries, one per distinct (config, overrides), and each shape
 * records which entry runs there and why, so a row can say where its config came from. A config
 * named on the command line always wins over wisdom (cli.c drops --auto then).
 *
 * Choose for every shape with pick_init_with: fails (EXIT_INPUT) on a malformed shipped wisdom file
 * or a shape that nothing covers, and with ERR_ALLOC where the host had no memory to read wisdom
 * or load a candidate's config, or for the command's shapes' entries and texts (try_* memory,
 * util.h: nothing here stops the process). */
#ifndef ENGINE_PICK_H
#define ENGINE_PICK_H

#include "entries.h"
#include "err.h"
#include "select.h"
#include "wisdom.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct {
    entry_t *entries; /* the distinct choices, as CONFIG arguments would be */
    size_t nentries;
    size_t *of_shape; /* per shape: index into entries */
    char **why;       /* per shape: "warptile_db (wisdom/x.json:12, device, exact)" */
    char **explain;   /* per shape: the model's weighing, several lines (select_explain) */
    select_result *result; /* per shape: what the model found (the candidates' ranks, for --auto-tune) */
    size_t nshapes;
    char *device;     /* the GPU's name as wisdom saw it ("" without a GPU) */
    int arch;
    char *user_dir;   /* the user's wisdom directory, NULL when there is none to use */
    wisdom_t user, shipped;
    select_t sel;     /* the candidates */
    size_t *entry_of_cand; /* per candidate: index into entries, or (size_t)-1 when not chosen */
    size_t *tune;     /* --auto-tune: per shape, PICK_TUNE_MAX entry indexes to time, in that order */
    size_t *ntune;    /* per shape: how many (0 at a shape wisdom holds) */
    char *op_note;    /* the problem's op has no entry at the level: the NN entries were weighed (a
                       * line for --explain); NULL otherwise */
} pick_t;

/* An op with fewer entries than this at a level (of both kinds, one product and batches) has them
 * weighed together with the level's NN entries (pick.c keep_op). */
#define PICK_OP_ENOUGH 16

/* A shape whose chosen config pads its tile runs that config with the tile side halved where the
 * model estimates it at least this much faster (select_tile_variant). */
#define PICK_TILE_GAIN 1.3
/* Whether tile variants are taken: unless ENGINE_TILE_VARIANTS=0 (wisdom's configs as they are, for
 * A/B runs). */
bool pick_tile_variants(void);

/* --auto-tune times per shape at most PICK_TUNE_MODEL of the model's candidates (its choice first)
 * and PICK_TUNE_NEAR variants of its choice (select_neighbours). */
#define PICK_TUNE_MODEL 4
#define PICK_TUNE_NEAR 6
#define PICK_TUNE_MAX (PICK_TUNE_MODEL + PICK_TUNE_NEAR)

/* What the choice is made from: the GPU (probed without a context for its name, arch and SM count,
 * unless named), the problem's dtype, op, batch and layout, and where wisdom is read. The command
 * fills it from its options (cli/pickcmd.h), the library from its call. */
typedef struct {
    int device;              /* probed for its name, arch and SMs when probe is set */
    bool probe;
    int arch;                /* 0: the GPU's, else sm_90 */
    bool arch_guessed;       /* arch is the GPU's own, not named (the library): as arch 0 for the
                              * targets of arch-specific templates (arch.h, arch_for_template) */
    int sms;                 /* 0: the GPU's, else the arch's usual part */
    const char *device_name; /* NULL: the GPU's, else none */
    dtype_t dtype;
    int op;                  /* 2 * ta + tb (layout.h): only entries of this op are weighed, or NN's
                              * where the level holds none (pick_t.op_note); 0: NN */
    int64_t batch;           /* products of the shapes' strided batch (0 or 1: one): an exact entry
                              * has this batch, others are weighed at it (select_pick_batch) */
    const layout_align *aligns; /* per shape: the problem's alignment class (elements, layout.h): an
                              * exact entry has it, others of another class weigh less
                              * (select_pick_align); NULL: the packed layout's at each shape */
    const layout_t *layouts; /* per shape: the problem's layout, in which every candidate is planned
                              * (select_pick_in: one that refuses it is never chosen); NULL: one of
                              * the class `aligns` gives */
    const char *wisdom_dir;  /* NULL: paths_wisdom_dir() */
    const char *user_dir;    /* NULL: paths_user_wisdom_dir(); "": no user wisdom */
    FILE *warn;              /* where damaged user wisdom is reported; NULL: nowhere */
    FILE *left_out;          /* where each entry left out (its config does not load) is listed, one
                              * line each; NULL: nowhere (the candidates that did not load say why) */
} pick_params;
int pick_init_with(pick_t *p, const pick_params *pp, const shape_t *shapes, size_t nshapes, err_t *err);
void pick_free(pick_t *p);

/* Index into entries of candidate c, adding it when new (--auto-tune times candidates that were not
 * chosen); (size_t)-1 when the host had no memory for it. */
size_t pick_entry_of_cand(pick_t *p, size_t c);

/* For --auto-tune: at each shape without an entry of its own, the model's choice, its variants a
 * step away in split depth, tile or stages (select_neighbours, planned in layouts[s]; NULL: packed)
 * and the model's next candidates become entries (tune, ntune: the choice first, then variants and
 * candidates in turn, each fastest estimate first). 0, or -1 when the host had no memory for them
 * (the pick as whole as before: pick_free it; the command stops). */
int pick_tune_candidates(pick_t *p, const shape_t *shapes, const layout_t *layouts);

/* Whether entry i runs at shape s: always without a pick. */
static inline int pick_runs(const pick_t *p, size_t s, size_t i) { return !p || p->of_shape[s] == i; }

#endif
