/* model.h — an additive model of log(time) over a space's free dimensions, which the guided search
 * of `engine tune` refits after each batch to choose what to time next:
 *   log t = mu + sum_d e[d][v_d]   (v_d: the value of free dimension d, as an index into its list)
 * fitted by backfitting on the points timed so far. Cheap, and it captures what matters most in
 * tile spaces (each parameter's own effect) from few points; the search's refinement phase
 * catches what interactions it misses. */
#ifndef ENGINE_MODEL_H
#define ENGINE_MODEL_H

#include "space.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    double mu;    /* mean of log(ms) over the points fitted; 0 with none */
    double **e;   /* e[d][v]: effect of value v of free dimension d */
    size_t nfree; /* free dimensions of the space */
} model_t;

/* Fit m to n timed points: index[i] is a point's cartesian index in sp, ms[i] its time (> 0,
 * finite). Ten backfitting sweeps; with n = 0 every effect is 0. Pair with model_free. */
void model_fit(model_t *m, const space_t *sp, const uint64_t *index, const double *ms, size_t n);
/* The predicted log(time) of the point at cartesian index in sp. */
double model_predict(const model_t *m, const space_t *sp, uint64_t index);
void model_free(model_t *m);

#endif
