/* pick.h — `engine bench --auto` and `engine verify --auto`: for each shape of the run, the config
 * that wisdom (wisdom.h) chose for this GPU, its arch and the dtype (--dtype, else f32).
 *
 * The choices become the run's entries, one per distinct (config, overrides), and each shape
 * records which entry runs there and why, so a row can say where its config came from. A config
 * named on the command line always wins over wisdom (cli.c drops --auto then). */
#ifndef ENGINE_PICK_H
#define ENGINE_PICK_H

#include "cli.h"
#include "err.h"

#include <stddef.h>

typedef struct {
    entry_t *entries; /* the distinct choices, as CONFIG arguments would be */
    size_t nentries;
    size_t *of_shape; /* per shape: index into entries */
    char **why;       /* per shape: "warptile_db (wisdom/x.json:12, device, exact)" */
    size_t nshapes;
    char *device;     /* the GPU's name as wisdom saw it ("" without a GPU) */
} pick_t;

/* Look up every shape. The GPU named by --device is probed without a context for its name and
 * arch (--arch wins for the arch); the wisdom comes from --wisdom DIR or paths_wisdom_dir().
 * Fails (EXIT_INPUT) on a malformed wisdom file or a shape no level of wisdom covers. */
int pick_init(pick_t *p, const opts_t *o, const shape_t *shapes, size_t nshapes, err_t *err);
void pick_free(pick_t *p);

/* Whether entry i runs at shape s: always without a pick. */
static inline int pick_runs(const pick_t *p, size_t s, size_t i) { return !p || p->of_shape[s] == i; }

#endif
