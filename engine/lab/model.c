/* model.c — see model.h. */
#include "model.h"

#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The digit of free dimension d in a cartesian index (the last free dimension varies fastest). */
static size_t digit_of(const space_t *sp, uint64_t index, size_t d)
{
    for (size_t i = sp->nfree; i-- > d + 1;)
        index /= sp->dims[i].nvalues;
    return (size_t)(index % sp->dims[d].nvalues);
}

void model_fit(model_t *m, const space_t *sp, const uint64_t *index, const double *ms, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += log(ms[i]);
    m->mu = n ? sum / n : 0;
    m->nfree = sp->nfree;
    m->e = xcalloc(sp->nfree ? sp->nfree : 1, sizeof *m->e);
    for (size_t d = 0; d < sp->nfree; d++)
        m->e[d] = xcalloc(sp->dims[d].nvalues, sizeof **m->e);
    double *acc = NULL;
    size_t *cnt = NULL;
    for (int iter = 0; iter < 10 && n; iter++) {
        for (size_t d = 0; d < sp->nfree; d++) {
            size_t k = sp->dims[d].nvalues;
            acc = xrealloc(acc, k * sizeof *acc);
            cnt = xrealloc(cnt, k * sizeof *cnt);
            memset(acc, 0, k * sizeof *acc);
            memset(cnt, 0, k * sizeof *cnt);
            for (size_t i = 0; i < n; i++) {
                double r = log(ms[i]) - m->mu;
                for (size_t e = 0; e < sp->nfree; e++)
                    if (e != d)
                        r -= m->e[e][digit_of(sp, index[i], e)];
                size_t v = digit_of(sp, index[i], d);
                acc[v] += r;
                cnt[v]++;
            }
            for (size_t v = 0; v < k; v++)
                m->e[d][v] = cnt[v] ? acc[v] / cnt[v] : 0;
        }
    }
    free(acc);
    free(cnt);
}

double model_predict(const model_t *m, const space_t *sp, uint64_t index)
{
    double y = m->mu;
    for (size_t d = 0; d < m->nfree; d++)
        y += m->e[d][digit_of(sp, index, d)];
    return y;
}

void model_free(model_t *m)
{
    for (size_t d = 0; d < m->nfree; d++)
        free(m->e[d]);
    free(m->e);
    memset(m, 0, sizeof *m);
}
