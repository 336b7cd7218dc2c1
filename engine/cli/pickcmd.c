/* pickcmd.c — see pickcmd.h. */
#include "pickcmd.h"

#include "arch.h"
#include "report.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The command line's layout at shape sh, and the alignment class that --lda/--ldb/--ldc and the
 * batch strides allow on its 256-byte-aligned buffers. A layout that breaks a rule was refused when
 * the options were read; here it falls back to the packed one. */
static void options_layout(const opts_t *o, const shape_t *sh, dtype_t dtype, layout_t *lay, layout_align *al)
{
    err_t ignored;
    err_clear(&ignored);
    if (layout_with(lay, o->ta, o->tb, sh->m, sh->n, sh->k, o->batch, o->ld, o->ld_plus, o->stride, &ignored))
        layout_packed(lay, o->ta, o->tb, sh->m, sh->n, sh->k, o->batch > 1 ? o->batch : 1);
    layout_align_ld(lay, dtype_size(dtype), al);
}

int pickcmd_init(pick_t *p, const opts_t *o, const shape_t *shapes, size_t nshapes, err_t *err)
{
    pick_params pp = {.device = o->device, .probe = true, .arch = o->arch, .sms = o->sms,
                      .device_name = o->device_name, .wisdom_dir = o->wisdom, .warn = stderr,
                      .left_out = o->verbose ? stderr : NULL,
                      .dtype = DTYPE_F32,
                      .op = 2 * o->ta + o->tb, .batch = o->batch};
    if (o->dtype)
        dtype_parse(o->dtype, &pp.dtype); /* checked when the options were read */
    layout_align *al = xcalloc(nshapes ? nshapes : 1, sizeof *al);
    layout_t *lays = xcalloc(nshapes ? nshapes : 1, sizeof *lays);
    for (size_t s = 0; s < nshapes; s++)
        options_layout(o, &shapes[s], pp.dtype, &lays[s], &al[s]);
    pp.aligns = al;
    pp.layouts = lays;
    int rc = pick_init_with(p, &pp, shapes, nshapes, err);
    free(lays);
    free(al);
    return rc;
}

/* One line per candidate that loaded: its entry, config, fitted efficiency and where it is. */
static void list_candidates(const select_t *s)
{
    for (size_t c = 0; c < s->ncands; c++) {
        const select_cand *x = &s->cands[c];
        char al[32], at[48] = "";
        if (!x->align_packed)
            snprintf(at, sizeof at, " align %s", wisdom_align_text(&x->align, al, sizeof al));
        if (x->loaded)
            printf("  entry %lldx%lldx%lld%s%.0lld%s %s: eff %.2f, occ %d%s, %.1f us there (%s:%d)\n",
                   (long long)x->entry->shape.m, (long long)x->entry->shape.n, (long long)x->entry->shape.k,
                   x->entry->batch > 1 ? " batch " : "", x->entry->batch > 1 ? (long long)x->entry->batch : 0LL, at,
                   x->label, x->eff, x->occ, x->occ_estimated ? " (estimated)" : "", x->t_entry * 1e6, x->file->path,
                   x->entry->line);
    }
}

/* Reasons shown one a line before the rest are summed into one. */
#define PICKCMD_REASONS 3

void pickcmd_left_out(const pick_t *p, const opts_t *o, FILE *f)
{
    if (o->verbose)
        return;
    const select_t *s = &p->sel;
    size_t *count = xcalloc(s->ncands ? s->ncands : 1, sizeof *count); /* at a reason's first candidate */
    size_t nreasons = 0, shown = 0, rest = 0;
    for (size_t c = 0; c < s->ncands; c++) {
        if (s->cands[c].loaded)
            continue;
        size_t first = 0;
        while (s->cands[first].loaded || strcmp(s->cands[first].err_text, s->cands[c].err_text) != 0)
            first++;
        nreasons += first == c;
        count[first]++;
    }
    for (size_t c = 0; c < s->ncands; c++) {
        if (!count[c])
            continue;
        if (shown < PICKCMD_REASONS || nreasons == PICKCMD_REASONS + 1) {
            fprintf(f, "engine: %zu wisdom %s left out: %s (--verbose lists %s)\n", count[c],
                    count[c] == 1 ? "entry" : "entries", s->cands[c].err_text, count[c] == 1 ? "it" : "them");
            shown++;
        } else {
            rest += count[c];
        }
    }
    if (rest)
        fprintf(f, "engine: %zu more wisdom %s left out, for %zu other reasons (--verbose lists them)\n", rest,
                rest == 1 ? "entry" : "entries", nreasons - shown);
    free(count);
}

/* One shape's answer as a JSON line: the chosen entry (config, label, sets, exact, its own shape,
 * batch and alignment class), the model's estimate, the tile variant (v; NULL: none) and the
 * candidates weighed. */
static void pick_row_jsonl(const pick_t *p, const shape_t *sh, const select_result *res, const select_variant *v,
                           const char *vtext)
{
    const select_cand *c = &p->sel.cands[res->chosen];
    double t = -1;
    for (size_t j = 0; j < res->nw; j++)
        if (res->w[j].cand == res->chosen)
            t = res->w[j].t_est;
    strbuf sb;
    sb_init(&sb);
    sb_addf(&sb, "{\"shape\":\"%lldx%lldx%lld\",\"batch\":%lld,\"dtype\":\"%s\",\"config\":", (long long)sh->m,
            (long long)sh->n, (long long)sh->k, (long long)res->batch, dtype_name(p->sel.dtype));
    sb_add_json_string(&sb, c->path);
    sb_add(&sb, ",\"label\":");
    sb_add_json_string(&sb, c->label);
    sb_add(&sb, ",\"set\":{");
    for (size_t k = 0; k < c->entry->nsets; k++)
        sb_addf(&sb, "%s\"%s\":%lld", k ? "," : "", c->entry->sets[k].key, (long long)c->entry->sets[k].value);
    sb_addf(&sb, "},\"exact\":%s,\"entry\":\"%lldx%lldx%lld\",\"entry_batch\":%lld,",
            res->exact ? "true" : "false", (long long)c->entry->shape.m, (long long)c->entry->shape.n,
            (long long)c->entry->shape.k, (long long)wisdom_batch(c->entry));
    sb_addf(&sb, "\"align\":[%d,%d,%d],\"entry_align\":[%d,%d,%d],\"est_us\":", res->align.a,
            res->align.b, res->align.c, c->align.a, c->align.b, c->align.c);
    if (t >= 0)
        sb_addf(&sb, "%.3f", t * 1e6);
    else
        sb_add(&sb, "null");
    sb_add(&sb, ",\"variant\":");
    if (v) {
        sb_add_json_string(&sb, vtext);
        sb_addf(&sb, ",\"variant_est_us\":%.3f", v->t_est * 1e6);
    } else {
        sb_add(&sb, "null");
    }
    sb_add(&sb, ",\"candidates\":[");
    for (size_t j = 0; j < res->nw; j++) {
        sb_add(&sb, j ? "," : "");
        sb_add_json_string(&sb, p->sel.cands[res->w[j].cand].label);
    }
    sb_add(&sb, "]}");
    char *line = sb_steal(&sb);
    printf("%s\n", line);
    free(line);
}

/* One shape's answer for the table: the choice and the model's weighing (select_explain), the tile
 * variant it runs with (v; NULL: none) and how the op was weighed. */
static void pick_row_table(const pick_t *p, const shape_t *sh, const select_result *res, const select_variant *v,
                           const char *vtext)
{
    const select_cand *c = &p->sel.cands[res->chosen];
    char *ex = select_explain(&p->sel, sh, res);
    if (!ex) /* core hands it back: the command cannot go on */
        xoom(p->sel.ncands * 128);
    printf("\n%lldx%lldx%lld: %s\n%s", (long long)sh->m, (long long)sh->n, (long long)sh->k, c->label, ex);
    if (v)
        printf("  runs it with %s: its tile is padded at this shape (the model estimates %.1f us)\n", vtext,
               v->t_est * 1e6);
    if (p->op_note)
        printf("%s\n", p->op_note);
    free(ex);
}

int pickcmd_main(const opts_t *o)
{
    pick_t p;
    err_t err;
    err_clear(&err);
    double t0 = now_ms();
    if (pickcmd_init(&p, o, NULL, 0, &err)) {
        err_print(stderr, &err);
        return err.code;
    }
    double t_load = now_ms() - t0;
    /* The lookups alone, timed: what --auto adds per shape once the candidates are loaded. */
    select_result *res = xcalloc(o->nshapes ? o->nshapes : 1, sizeof *res);
    int rc = EXIT_OK;
    layout_align *al = xcalloc(o->nshapes ? o->nshapes : 1, sizeof *al);
    layout_t *lays = xcalloc(o->nshapes ? o->nshapes : 1, sizeof *lays);
    for (size_t s = 0; s < o->nshapes; s++)
        options_layout(o, &o->shapes[s], p.sel.dtype, &lays[s], &al[s]);
    double t1 = now_ms();
    for (size_t s = 0; s < o->nshapes; s++) {
        int sr = select_pick_in(&p.sel, &o->shapes[s], o->batch, &al[s], &lays[s], &res[s]);
        if (sr == SELECT_NOMEM)
            xoom(p.sel.ncands * sizeof(double));
        if (sr)
            res[s].nw = (size_t)-1;
    }
    double t_pick = now_ms() - t1;
    char arch[16];
    if (o->format == FORMAT_TABLE)
        printf("pick: %s, %s, %d SMs, %s; %zu candidates (loaded in %.1f ms)\n",
               *p.device ? p.device : "no device", arch_name(p.arch, arch, sizeof arch), p.sel.gpu.sms,
               dtype_name(p.sel.dtype), p.sel.ncands, t_load);
    for (size_t s = 0; s < o->nshapes; s++) {
        const shape_t *sh = &o->shapes[s];
        if (res[s].nw == (size_t)-1) {
            fprintf(stderr, "engine: --auto: no wisdom for %s at %lldx%lldx%lld\n", dtype_name(p.sel.dtype),
                    (long long)sh->m, (long long)sh->n, (long long)sh->k);
            rc = EXIT_INPUT;
            continue;
        }
        select_variant v;
        const int tv = pick_tile_variants() ? select_tile_variant(&p.sel, &res[s], sh, &lays[s], PICK_TILE_GAIN, &v) : 0;
        if (tv == SELECT_NOMEM)
            xoom(sizeof v);
        const bool var = tv == 1;
        char vtext[96] = "";
        if (var)
            select_variant_text(&v, vtext, sizeof vtext);
        if (o->format == FORMAT_JSONL)
            pick_row_jsonl(&p, sh, &res[s], var ? &v : NULL, vtext);
        else
            pick_row_table(&p, sh, &res[s], var ? &v : NULL, vtext);
    }
    /* The answer first; what it was chosen from after it, on request (--verbose). */
    if (o->format == FORMAT_TABLE && o->verbose) {
        printf("\ncandidates (the wisdom entries loaded, each config fitted at its entry's shape):\n");
        list_candidates(&p.sel);
    }
    if (o->format == FORMAT_TABLE)
        printf("\npick: %zu shapes in %.3f ms, %.1f us a shape\n", o->nshapes, t_pick,
               o->nshapes ? 1e3 * t_pick / (double)o->nshapes : 0);
    if (o->format == FORMAT_TABLE && !o->verbose)
        printf("(--verbose lists the %zu candidates and each entry left out)\n", p.sel.ncands);
    fflush(stdout); /* the answer before the count of entries left out, also where stdout is a pipe */
    pickcmd_left_out(&p, o, stderr);
    free(res);
    free(lays);
    free(al);
    pick_free(&p);
    return rc;
}
