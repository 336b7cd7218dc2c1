/* shape.c — see shape.h. */
#include "shape.h"

#include <stdio.h>

int shape_elems_rule(const shape_t *s, char *why, size_t len)
{
    const int64_t prods[3] = {s->m * s->k, s->k * s->n, s->m * s->n};
    const char *names[3] = {"M*K", "K*N", "M*N"};
    for (int i = 0; i < 3; i++)
        if (prods[i] > SHAPE_MAX_ELEMS) {
            snprintf(why, len, "%s = %lld elements exceeds 2^40, more than any GPU holds", names[i],
                     (long long)prods[i]);
            return -1;
        }
    return 0;
}

int shape_rule(const shape_t *s, char *why, size_t len)
{
    const char *names[3] = {"M", "N", "K"};
    const int64_t dims[3] = {s->m, s->n, s->k};
    for (int i = 0; i < 3; i++) {
        int64_t lo = i == 2 ? 0 : 1;
        if (dims[i] < lo || dims[i] > SHAPE_MAX_DIM) {
            snprintf(why, len, "%s = %lld must be between %lld and %d", names[i], (long long)dims[i], (long long)lo,
                     SHAPE_MAX_DIM);
            return -1;
        }
    }
    return shape_elems_rule(s, why, len);
}
