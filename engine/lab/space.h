/* space.h — tuning spaces: which values each template parameter may take, how they combine, and
 * which combinations are feasible before anything is compiled.
 *
 * A space varies one config (its base): every dimension names a template parameter and gives
 * either a list of candidate values (free dimensions, enumerated as a cartesian product) or an
 * expression of the other parameters in the template's expression language (derived dimensions,
 * e.g. THREADS = 32*(BM/WM)*(BN/WN), so users enumerate only what is free). Parameters the
 * space leaves out keep the base config's values.
 *
 * Spaces come from `--set KEY=RANGE` arguments, a space file
 *   {"config": "warptile_db", "space": {"BM": [64, 128], "BN": "64:256:*2", "THREADS": "32*(BM/WM)*(BN/WN)"},
 *    "constraints": [{"rule": "BM * BN <= 128 * 256", "why": "..."}], "shapes": ["4096x4096x4096"]}
 * or a Kernel Tuner T1 file (KernelSpecification.ConfigurationSpace: TuningParameters and
 * Restrictions), whose parameter names must be the template's.
 *
 * Feasibility, in order, each point charged to the first check it fails: the template's allowed
 * values and ranges, its constraints, the space's own constraints, and the device's limits
 * (threads per block, shared memory, grid) at every shape of the tune. What ptxas reports
 * (spills, registers, occupancy) is the second stage, after compiling (tune.c). */
#ifndef ENGINE_SPACE_H
#define ENGINE_SPACE_H

#include "config.h"
#include "err.h"
#include "shape.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *name;       /* template parameter */
    int param;        /* its index in the template */
    int64_t *values;  /* candidates, in order (free dimensions) */
    size_t nvalues;
    char *expr;       /* derived dimensions: the expression, NULL for free ones */
    char *origin;     /* where it was given, for messages: "--set BM=64:256:*2", "tune/x.json" */
} space_dim;

typedef struct {
    char *rule;   /* expression over the parameters (and ELEM, F64, ARCH) that must be non-zero */
    char *why;
    char *origin;
} space_rule;

/* Why a point was removed before compiling. */
typedef enum {
    PRUNE_NONE = 0,
    PRUNE_VALUE,      /* a value outside the template's allowed values or range */
    PRUNE_TEMPLATE,   /* a template constraint */
    PRUNE_SPACE,      /* a constraint of the space */
    PRUNE_DEVICE,     /* threads, shared memory or grid beyond the device's limits, or a refused shape */
    PRUNE_EXPR,       /* a derived dimension's expression could not be evaluated (e.g. division by zero) */
} prune_kind;

typedef struct {
    config_t base;           /* the config the space varies */
    char *path;              /* the space file, or NULL */
    space_dim *dims;         /* free ones first, in the order given; derived ones after */
    size_t ndims, nfree;
    space_rule *rules;
    size_t nrules;
    shape_t shapes[SHAPE_MAX_LIST]; /* from the space file (the command line's --size/--shapes win) */
    size_t nshapes;
    int arch; /* the target: expressions and constraints see it as ARCH (the base config's) */
    bool arch_guessed; /* no --arch: the base config's template picks the target (arch_for_template) */
} space_t;

/* Build a space from the command line: CONFIG is a config (then every --set is a dimension) or a
 * space file (then --set adds or replaces dimensions). dtype may be NULL (the config's). arch is
 * the target (constraints may mention ARCH); guessed: no --arch named it, so the base config's
 * template may ask for sm_90a (s->arch says what was chosen). Errors name the file and field or
 * the --set. */
int space_load(space_t *s, const char *config_arg, char *const *set_text, size_t nsets, const char *dtype, int arch,
               bool guessed, err_t *err);
void space_free(space_t *s);

/* Points in the cartesian product of the free dimensions (saturates at UINT64_MAX). */
uint64_t space_size(const space_t *s);

/* What the device allows, for the last feasibility check. */
typedef struct {
    int arch;
    int64_t smem_limit; /* bytes of shared memory one block may opt in to */
} space_device;

typedef struct {
    uint64_t index;    /* position in the cartesian product */
    int64_t *values;   /* every template parameter, aligned with base.tpl.params; NULL when removed */
    prune_kind pruned;
    int rule;          /* which constraint (template or space) or parameter removed it, -1 none */
    char *reason;      /* one line, NULL when feasible */
} space_point;

/* Counts of what removed points, for --dry-run. */
typedef struct {
    uint64_t total, feasible;
    uint64_t *by_value;      /* per template parameter */
    uint64_t *by_template;   /* per template constraint */
    uint64_t *by_space;      /* per space rule */
    uint64_t by_device, by_expr;
} space_counts;

/* Walk the whole space in a fixed order (the last free dimension fastest), classify each point
 * and keep them all (feasible and removed) in *points. shapes are checked against the device's
 * limits. Refuses (EXIT_INPUT) spaces of more than max_points. */
int space_enumerate(const space_t *s, const space_device *dev, const shape_t *shapes, size_t nshapes,
                    uint64_t max_points, space_point **points, size_t *npoints, space_counts *counts, err_t *err);
void space_points_free(space_point *p, size_t n);

/* Every template parameter's value at cartesian index `index` (removed points keep no values;
 * this recomputes them). Returns -1 when a derived dimension cannot be evaluated there. */
int space_values(const space_t *s, uint64_t index, int64_t *values);
void space_counts_free(space_counts *c);

/* Print the dry-run summary: the size of the space, its dimensions, and how many points each
 * check removed, with its reason. */
void space_print_counts(FILE *f, const space_t *s, const space_counts *c);

/* "BM=128 BN=64 ..." for a point: every template parameter, in template order. */
char *space_point_string(const space_t *s, const int64_t *values);

/* Neighbours of a point for local search: the points that differ in one free dimension by one
 * step of its value list. Writes up to max cartesian indices; returns how many. */
size_t space_neighbours(const space_t *s, uint64_t index, uint64_t *out, size_t max);

#endif
