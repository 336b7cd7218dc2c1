/* merge.c — see merge.h: several logs of one problem joined, checked and ranked again. */
#include "merge.h"

#include "rank.h"
#include "tunelog.h"
#include "util.h"
#include "winner.h"

#include <stdlib.h>
#include <string.h>

/* The first field in which row r describes another problem than ref: its name and both values,
 * formatted; false when they agree. The device counts only when both rows reached a GPU (stage >= 1). */
static bool problem_differs(const result_row *r, const result_row *ref, const char **field, char *mine, char *theirs,
                            size_t len)
{
    const char *dims[] = {"M", "N", "K"};
    const int64_t m[] = {r->M, r->N, r->K}, t[] = {ref->M, ref->N, ref->K};
    for (int i = 0; i < 3; i++) {
        if (m[i] != t[i]) {
            *field = dims[i];
            snprintf(mine, len, "%lld", (long long)m[i]);
            snprintf(theirs, len, "%lld", (long long)t[i]);
            return true;
        }
    }
    const struct {
        const char *name;
        double a, b;
    } scalars[] = {{"alpha", r->alpha, ref->alpha}, {"beta", r->beta, ref->beta}};
    if (strcmp(r->dtype, ref->dtype) != 0) {
        *field = "dtype";
        snprintf(mine, len, "%s", r->dtype);
        snprintf(theirs, len, "%s", ref->dtype);
        return true;
    }
    for (int i = 0; i < 2; i++) {
        if (scalars[i].a != scalars[i].b) {
            *field = scalars[i].name;
            snprintf(mine, len, "%g", scalars[i].a);
            snprintf(theirs, len, "%g", scalars[i].b);
            return true;
        }
    }
    if (r->stage >= 1 && ref->stage >= 1 && strcmp(r->device, ref->device) != 0) {
        *field = "device";
        snprintf(mine, len, "\"%s\"", r->device);
        snprintf(theirs, len, "\"%s\"", ref->device);
        return true;
    }
    return false;
}

int merge_logs(const merge_opts *o, FILE *out, err_t *err)
{
    if (o->nlogs == 0)
        return err_set(err, ERR_INPUT, "engine merge", 0, 0, "no log to merge");
    result_row **rows = xcalloc(o->nlogs, sizeof *rows);
    size_t *nrows = xcalloc(o->nlogs, sizeof *nrows);
    bool *cut = xcalloc(o->nlogs, sizeof *cut);
    result_row *kept = NULL;
    const result_row **ranked = NULL;
    tunelog_index index = {0};
    size_t total = 0, nkept = 0, dups = 0, nranked = 0;
    int rc = -1;

    for (size_t i = 0; i < o->nlogs; i++) {
        if (tunelog_read(o->logs[i], &rows[i], &nrows[i], &cut[i], err) != 0)
            goto out;
        total += nrows[i];
    }
    if (!o->force) {
        /* Every row against the first row, and every timed row against the first timed row. */
        const result_row *ref = NULL, *tref = NULL;
        const char *ref_path = NULL, *tref_path = NULL;
        for (size_t i = 0; i < o->nlogs; i++) {
            for (size_t j = 0; j < nrows[i]; j++) {
                const result_row *r = &rows[i][j];
                const char *field;
                char mine[256], theirs[256];
                const char *against = NULL;
                if (ref && problem_differs(r, ref, &field, mine, theirs, sizeof mine))
                    against = ref_path;
                else if (tref && r->stage >= 1 && problem_differs(r, tref, &field, mine, theirs, sizeof mine))
                    against = tref_path;
                if (against) {
                    /* Every line of a log is a row, so j + 1 is its line. */
                    err_set(err, ERR_INPUT, o->logs[i], (int)(j + 1), 0,
                            "%s = %s but %s holds %s = %s; pass --force to merge logs of different problems", field,
                            mine, against, field, theirs);
                    goto out;
                }
                if (!ref) {
                    ref = r;
                    ref_path = o->logs[i];
                }
                if (!tref && r->stage >= 1) {
                    tref = r;
                    tref_path = o->logs[i];
                }
            }
        }
    }
    /* Shallow copies: the strings stay owned by rows[]. */
    kept = xcalloc(total, sizeof *kept);
    for (size_t i = 0; i < o->nlogs; i++) {
        for (size_t j = 0; j < nrows[i]; j++) {
            kept[nkept] = rows[i][j];
            if (tunelog_index_add(&index, kept, nkept))
                nkept++;
            else
                dups++;
        }
    }
    if (o->out_path) {
        tunelog_t lo;
        if (tunelog_open(&lo, o->out_path, false, err) != 0)
            goto out;
        for (size_t i = 0; i < nkept; i++) {
            if (tunelog_append(&lo, &kept[i], err) != 0) {
                tunelog_close(&lo);
                goto out;
            }
        }
        tunelog_close(&lo);
    }
    for (size_t i = 0; i < o->nlogs; i++)
        if (cut[i])
            fprintf(out, "%s: the last line is an interrupted write; left out\n", o->logs[i]);
    ranked = rank_rows(kept, nkept, &nranked);
    fprintf(out, "merged %zu log%s: %zu row%s kept, %zu duplicate%s dropped, %zu point%s ranked", o->nlogs,
            o->nlogs == 1 ? "" : "s", nkept, nkept == 1 ? "" : "s", dups, dups == 1 ? "" : "s", nranked,
            nranked == 1 ? "" : "s");
    if (o->out_path)
        fprintf(out, "; written to %s", o->out_path);
    fprintf(out, "\n");
    rank_print(out, ranked, nranked, o->top);
    if (o->emit_best) {
        if (nranked == 0) {
            err_set(err, ERR_INPUT, o->emit_best, 0, 0, "no point has status ok: there is no winner to write");
            goto out;
        }
        char *name = xasprintf("%s_tuned", ranked[0]->config);
        int erc = winner_write(ranked[0], name, NULL, o->emit_best, err);
        free(name);
        if (erc != 0)
            goto out;
        fprintf(out, "wrote %s: %s\n", o->emit_best, ranked[0]->key);
    }
    rc = 0;
out:
    free(ranked);
    free(kept);
    tunelog_index_free(&index);
    for (size_t i = 0; i < o->nlogs; i++)
        result_rows_free(rows[i], nrows[i]);
    free(rows);
    free(nrows);
    free(cut);
    return rc == 0 ? EXIT_OK : err && err->code ? err->code : EXIT_INPUT;
}

int merge_main(const opts_t *o)
{
    merge_opts m = {(const char *const *)o->args, o->nargs, o->force, o->log, (size_t)o->top, o->emit_best};
    err_t err;
    err_clear(&err);
    int rc = merge_logs(&m, stdout, &err);
    if (rc)
        err_print(stderr, &err);
    return rc;
}
