/* template.c — load a template's parameter block; plan a launch for one shape. */
#include "template.h"


#include "arch.h"
#include "expr.h"
#include "jsonloc.h"
#include "paths.h"
#include "util.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define MARKER "engine:template"

const char *dtype_name(dtype_t d) { return d == DTYPE_F64 ? "f64" : "f32"; }
size_t dtype_size(dtype_t d) { return d == DTYPE_F64 ? 8 : 4; }

/* ---- scope ---------------------------------------------------------------------------------- */

void scope_init(tpl_scope *s)
{
    s->n = 0;
    s->tpl = NULL;
    memset(s->slot, 0, sizeof s->slot);
}

/* FNV-1a over the name: where its search starts in the scope's index. */
static size_t name_hash(const char *name, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)name[i]) * 16777619u;
    return h & (SCOPE_SLOTS - 1);
}

/* The slot that holds name, or the empty one where it would go. */
static size_t find_slot(const tpl_scope *s, const char *name, size_t len)
{
    size_t h = name_hash(name, len);
    for (;;) {
        unsigned char e = s->slot[h];
        if (e == 0 || (s->lens[e - 1] == len && memcmp(s->names[e - 1], name, len) == 0))
            return h;
        h = (h + 1) & (SCOPE_SLOTS - 1);
    }
}

typedef struct tpl_prog {
    const char *text; /* the template's own string: looked up by address */
    expr_prog *prog;
} tpl_prog;

static int cmp_prog(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const tpl_prog *)a)->text, y = (uintptr_t)((const tpl_prog *)b)->text;
    return x < y ? -1 : x > y;
}

static void add_prog(template_t *t, size_t *cap, const char *text)
{
    if (!text)
        return;
    expr_prog *p = expr_compile(text);
    if (!p) /* a syntax error: left to expr_eval, which reports it where it always has */
        return;
    if (t->nprogs == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        t->progs = xrealloc(t->progs, *cap * sizeof *t->progs);
    }
    t->progs[t->nprogs++] = (tpl_prog){text, p};
}

/* Compile every expression of t (template.h, progs). */
static void compile_progs(template_t *t)
{
    size_t cap = 0;
    for (size_t i = 0; i < t->nderived; i++)
        add_prog(t, &cap, t->derived[i].expr);
    for (size_t i = 0; i < t->nconstraints; i++)
        add_prog(t, &cap, t->constraints[i].rule);
    for (size_t i = 0; i < t->nrequires; i++)
        add_prog(t, &cap, t->requires[i].rule);
    for (size_t i = 0; i < t->nswitches; i++)
        add_prog(t, &cap, t->switches[i].expr);
    for (size_t i = 0; i < t->nlets; i++)
        add_prog(t, &cap, t->lets[i].expr);
    const char *one[] = {t->workspace, t->traffic, t->compile_cost, t->model_tile[0], t->model_tile[1],
                         t->model_tile[2], t->model_atomics, t->model_slow};
    for (size_t i = 0; i < sizeof one / sizeof one[0]; i++)
        add_prog(t, &cap, one[i]);
    for (size_t i = 0; i < t->nlaunches; i++) {
        const tpl_launch *l = &t->launches[i];
        add_prog(t, &cap, l->cond);
        add_prog(t, &cap, l->smem);
        for (int d = 0; d < 3; d++) {
            add_prog(t, &cap, l->grid[d]);
            add_prog(t, &cap, l->block[d]);
        }
    }
    if (t->nprogs)
        qsort(t->progs, t->nprogs, sizeof *t->progs, cmp_prog);
}

void scope_set(tpl_scope *s, const char *name, int64_t v)
{
    size_t len = strlen(name), h = find_slot(s, name, len);
    if (s->slot[h]) {
        s->values[s->slot[h] - 1] = v;
        return;
    }
    if (s->n < SCOPE_MAX) {
        s->names[s->n] = name;
        s->lens[s->n] = len;
        s->values[s->n++] = v;
        s->slot[h] = (unsigned char)s->n;
    }
}

static bool scope_lookup(void *ctx, const char *name, size_t len, int64_t *v)
{
    const tpl_scope *s = ctx;
    unsigned char e = s->slot[find_slot(s, name, len)];
    if (!e)
        return false;
    *v = s->values[e - 1];
    return true;
}

void scope_add_params(tpl_scope *s, const template_t *t, const int64_t *values, dtype_t dtype, int arch)
{
    s->tpl = t;
    for (size_t i = 0; i < t->nparams; i++)
        scope_set(s, t->params[i].name, values[i]);
    scope_set(s, "ELEM", (int64_t)dtype_size(dtype));
    scope_set(s, "F64", dtype == DTYPE_F64);
    scope_set(s, "ARCH", arch_sm(arch));
    scope_set(s, "ARCH_SPECIFIC", arch_specific(arch));
}

int scope_eval(const tpl_scope *s, const char *expr, int64_t *out, char *errbuf, size_t errlen)
{
    if (s->tpl && s->tpl->nprogs) {
        tpl_prog key = {expr, NULL};
        const tpl_prog *p = bsearch(&key, s->tpl->progs, s->tpl->nprogs, sizeof key, cmp_prog);
        if (p && expr_run(p->prog, scope_lookup, (void *)s, out) == 0)
            return 0;
    }
    return expr_eval(expr, scope_lookup, (void *)s, out, errbuf, errlen);
}

/* Evaluate the derived names into s in order; -1 at the first that fails, its index in *bad and
 * the reason in msg. */
static int derive(tpl_scope *s, const template_t *t, size_t *bad, char *msg, size_t msglen)
{
    for (size_t i = 0; i < t->nderived; i++) {
        int64_t v;
        if (scope_eval(s, t->derived[i].expr, &v, msg, msglen)) {
            *bad = i;
            return -1;
        }
        scope_set(s, t->derived[i].name, v);
    }
    return 0;
}

int scope_add_derived(tpl_scope *s, const template_t *t, err_t *err)
{
    char msg[512];
    size_t bad = 0;
    if (derive(s, t, &bad, msg, sizeof msg))
        return err_set(err, EXIT_INPUT, t->path, 0, 0, "derived %s: %s", t->derived[bad].name, msg), -1;
    return 0;
}

/* The params and derived names of one set of values; -1 with the reason in msg when a derived
 * name cannot be evaluated. */
static int values_scope(tpl_scope *s, const template_t *t, const int64_t *values, dtype_t dtype, int arch, char *msg,
                        size_t msglen)
{
    size_t bad;
    scope_init(s);
    scope_add_params(s, t, values, dtype, arch);
    return derive(s, t, &bad, msg, msglen);
}

int template_check(const template_t *t, const int64_t *values, dtype_t dtype, int arch, int *index, char *msg,
                   size_t msglen)
{
    for (size_t i = 0; i < t->nparams; i++) {
        const tpl_param *p = &t->params[i];
        int64_t v = values[i];
        bool ok = p->nvalues == 0;
        for (size_t j = 0; j < p->nvalues && !ok; j++)
            ok = p->values[j] == v;
        if (!ok || (p->has_min && v < p->min) || (p->has_max && v > p->max)) {
            *index = (int)i;
            return TPL_BAD_VALUE;
        }
    }
    tpl_scope s;
    if (values_scope(&s, t, values, dtype, arch, msg, msglen))
        return -1;
    for (size_t i = 0; i < t->nconstraints; i++) {
        int64_t ok;
        if (scope_eval(&s, t->constraints[i].rule, &ok, msg, msglen))
            return -1;
        if (!ok) {
            *index = (int)i;
            return TPL_BAD_CONSTRAINT;
        }
    }
    return TPL_OK;
}

int template_compile_cost(const template_t *t, const int64_t *values, dtype_t dtype, int arch, int64_t *cost,
                          char *msg, size_t msglen)
{
    *cost = 1;
    if (!t->compile_cost)
        return 0;
    tpl_scope s;
    if (values_scope(&s, t, values, dtype, arch, msg, msglen))
        return -1;
    int64_t v;
    if (scope_eval(&s, t->compile_cost, &v, msg, msglen))
        return -1;
    *cost = v > 1 ? v : 1;
    return 0;
}

/* ---- loading -------------------------------------------------------------------------------- */

typedef struct {
    const template_t *t;
    const char *json;  /* the parameter block's text */
    int first_line;    /* file line of the block's first line */
    int first_col;     /* file column where the block starts on that line */
    err_t *err;
} loader;

/* Report an error at the member path[0..depth) of the block (or at its start). */
static int load_fail(loader *ld, const char *const *path, size_t depth, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int load_fail(loader *ld, const char *const *path, size_t depth, const char *fmt, ...)
{
    int line = 1, col = 1;
    if (depth)
        jsonloc_find(ld->json, path, depth, true, &line, &col);
    int fline = ld->first_line + line - 1;
    int fcol = line == 1 ? ld->first_col + col - 1 : col;
    va_list ap;
    va_start(ap, fmt);
    err_vset(ld->err, EXIT_INPUT, ld->t->path, fline, fcol, fmt, ap);
    va_end(ap);
    return -1;
}

/* root's optional boolean `key` into *out (false when absent); -1 with the error when not a boolean. */
static int get_flag(loader *ld, json_t *root, const char *key, bool *out)
{
    json_t *v = json_object_get(root, key);
    const char *p[] = {key};
    if (v && !json_is_boolean(v))
        return load_fail(ld, p, 1, "\"%s\" must be true or false", key);
    *out = v && json_is_true(v);
    return 0;
}

static int check_keys(loader *ld, json_t *obj, const char *const *path, size_t depth,
                      const char *const *allowed, const char *what)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        bool ok = false;
        for (const char *const *a = allowed; *a; a++)
            ok = ok || strcmp(*a, key) == 0;
        if (!ok) {
            const char *p[4];
            for (size_t i = 0; i < depth; i++)
                p[i] = path[i];
            p[depth] = key;
            return load_fail(ld, p, depth + 1, "unknown key \"%s\" in %s", key, what);
        }
    }
    return 0;
}

/* An expression is a JSON string or integer. */
static int get_expr(loader *ld, json_t *v, const char *const *path, size_t depth, char **out)
{
    if (json_is_string(v)) {
        *out = xstrdup(json_string_value(v));
        return 0;
    }
    if (json_is_integer(v)) {
        *out = xasprintf("%lld", (long long)json_integer_value(v));
        return 0;
    }
    return load_fail(ld, path, depth, "%s must be an expression (string or integer)", path[depth - 1]);
}

static int load_rules(loader *ld, json_t *arr, const char *key, tpl_rule **out, size_t *n)
{
    const char *path[] = {key};
    if (!arr)
        return 0;
    if (!json_is_array(arr))
        return load_fail(ld, path, 1, "\"%s\" must be an array of {\"rule\", \"why\"}", key);
    *n = json_array_size(arr);
    *out = xcalloc(*n, sizeof **out);
    for (size_t i = 0; i < *n; i++) {
        json_t *r = json_array_get(arr, i), *rule = json_object_get(r, "rule"), *why = json_object_get(r, "why");
        if (!json_is_object(r) || !json_is_string(rule) || !json_is_string(why) || json_object_size(r) != 2)
            return load_fail(ld, path, 1, "\"%s\"[%zu] must be {\"rule\": \"...\", \"why\": \"...\"}", key, i);
        (*out)[i].rule = xstrdup(json_string_value(rule));
        (*out)[i].why = xstrdup(json_string_value(why));
    }
    return 0;
}

static int load_named(loader *ld, json_t *obj, const char *key, tpl_named **out, size_t *n)
{
    const char *path[2] = {key, NULL};
    if (!obj)
        return 0;
    if (!json_is_object(obj))
        return load_fail(ld, path, 1, "\"%s\" must be an object of NAME: expression", key);
    *out = xcalloc(json_object_size(obj), sizeof **out);
    const char *name;
    json_t *v;
    json_object_foreach(obj, name, v)
    {
        path[1] = name;
        tpl_named *nd = &(*out)[(*n)++];
        nd->name = xstrdup(name);
        if (get_expr(ld, v, path, 2, &nd->expr))
            return -1;
    }
    return 0;
}

static int load_param(loader *ld, const char *name, json_t *spec, tpl_param *p)
{
    static const char *const allowed[] = {"doc", "default", "min", "max", "values", NULL};
    const char *path[] = {"params", name, NULL};
    p->name = xstrdup(name);
    if (!json_is_object(spec))
        return load_fail(ld, path, 2, "params.%s must be an object", name);
    if (check_keys(ld, spec, path, 2, allowed, "a parameter"))
        return -1;
    json_t *doc = json_object_get(spec, "doc"), *def = json_object_get(spec, "default"),
           *mn = json_object_get(spec, "min"), *mx = json_object_get(spec, "max"),
           *vals = json_object_get(spec, "values");
    p->doc = xstrdup(json_is_string(doc) ? json_string_value(doc) : "");
    if (def) {
        path[2] = "default";
        if (!json_is_integer(def))
            return load_fail(ld, path, 3, "params.%s.default must be an integer", name);
        p->has_default = true;
        p->def = json_integer_value(def);
    }
    if (mn) {
        path[2] = "min";
        if (!json_is_integer(mn))
            return load_fail(ld, path, 3, "params.%s.min must be an integer", name);
        p->has_min = true;
        p->min = json_integer_value(mn);
    }
    if (mx) {
        path[2] = "max";
        if (!json_is_integer(mx))
            return load_fail(ld, path, 3, "params.%s.max must be an integer", name);
        p->has_max = true;
        p->max = json_integer_value(mx);
    }
    if (vals) {
        path[2] = "values";
        if (!json_is_array(vals) || json_array_size(vals) == 0)
            return load_fail(ld, path, 3, "params.%s.values must be a non-empty array of integers", name);
        p->nvalues = json_array_size(vals);
        p->values = xcalloc(p->nvalues, sizeof *p->values);
        for (size_t i = 0; i < p->nvalues; i++) {
            json_t *e = json_array_get(vals, i);
            if (!json_is_integer(e))
                return load_fail(ld, path, 3, "params.%s.values must be a non-empty array of integers", name);
            p->values[i] = json_integer_value(e);
        }
    }
    return 0;
}

static int load_launch(loader *ld, size_t idx, json_t *l, tpl_launch *out)
{
    static const char *const allowed[] = {"kernel", "grid", "block", "smem", "if", NULL};
    char idxs[32];
    snprintf(idxs, sizeof idxs, "launches[%zu]", idx);
    const char *path[] = {"launches", NULL};
    if (!json_is_object(l))
        return load_fail(ld, path, 1, "%s must be an object", idxs);
    if (check_keys(ld, l, path, 0, allowed, idxs))
        return -1;
    json_t *k = json_object_get(l, "kernel");
    if (!json_is_string(k))
        return load_fail(ld, path, 1, "%s.kernel must be a string", idxs);
    out->kernel = xstrdup(json_string_value(k));
    const char *dims[] = {"grid", "block"};
    for (int d = 0; d < 2; d++) {
        json_t *a = json_object_get(l, dims[d]);
        if (!json_is_array(a) || json_array_size(a) != 3)
            return load_fail(ld, path, 1, "%s.%s must be an array of 3 expressions", idxs, dims[d]);
        for (size_t i = 0; i < 3; i++) {
            const char *p2[] = {"launches", dims[d]};
            char **slot = d == 0 ? &out->grid[i] : &out->block[i];
            if (get_expr(ld, json_array_get(a, i), p2, 1, slot))
                return -1;
        }
    }
    json_t *smem = json_object_get(l, "smem"), *cond = json_object_get(l, "if");
    out->smem = xstrdup("0");
    if (smem) {
        free(out->smem);
        out->smem = NULL;
        if (get_expr(ld, smem, path, 1, &out->smem))
            return -1;
    }
    if (cond && get_expr(ld, cond, path, 1, &out->cond))
        return -1;
    return 0;
}

static int parse_block(loader *ld, template_t *t)
{
    static const char *const allowed[] = {"summary", "dtypes", "peak", "params", "derived", "constraints",
                                          "requires", "switches", "let", "workspace", "traffic",
                                          "compile_cost", "pdl", "arch_specific", "accuracy", "model", "launches", NULL};
    json_error_t jerr;
    json_t *root = json_loads(ld->json, JSON_REJECT_DUPLICATES | JSON_DISABLE_EOF_CHECK, &jerr);
    if (!root) {
        int fline = ld->first_line + jerr.line - 1;
        int fcol = jerr.line == 1 ? ld->first_col + jerr.column - 1 : jerr.column;
        err_set(ld->err, EXIT_INPUT, t->path, fline, fcol, "template parameter block: %s", jerr.text);
        return -1;
    }
    int rc = -1;
    if (!json_is_object(root)) {
        load_fail(ld, NULL, 0, "template parameter block must be a JSON object");
        goto out;
    }
    if (check_keys(ld, root, NULL, 0, allowed, "the template parameter block"))
        goto out;
    json_t *summary = json_object_get(root, "summary");
    t->summary = xstrdup(json_is_string(summary) ? json_string_value(summary) : "");

    json_t *dtypes = json_object_get(root, "dtypes");
    const char *p_dtypes[] = {"dtypes"};
    if (!json_is_array(dtypes) || json_array_size(dtypes) == 0) {
        load_fail(ld, p_dtypes, dtypes ? 1 : 0, "\"dtypes\" must list \"f32\" and/or \"f64\"");
        goto out;
    }
    for (size_t i = 0; i < json_array_size(dtypes); i++) {
        const char *d = json_string_value(json_array_get(dtypes, i));
        if (d && strcmp(d, "f32") == 0)
            t->dtypes[DTYPE_F32] = true;
        else if (d && strcmp(d, "f64") == 0)
            t->dtypes[DTYPE_F64] = true;
        else {
            load_fail(ld, p_dtypes, 1, "\"dtypes\" must list \"f32\" and/or \"f64\"");
            goto out;
        }
    }
    json_t *peak = json_object_get(root, "peak");
    const char *p_peak[] = {"peak"};
    if (peak && !(json_is_string(peak) && (strcmp(json_string_value(peak), "fma") == 0 ||
                                           strcmp(json_string_value(peak), "tensor") == 0))) {
        load_fail(ld, p_peak, 1, "\"peak\" must be \"fma\" or \"tensor\"");
        goto out;
    }
    t->tensor = peak && strcmp(json_string_value(peak), "tensor") == 0;
    if (get_flag(ld, root, "pdl", &t->pdl) || get_flag(ld, root, "arch_specific", &t->arch_specific))
        goto out;
    json_t *acc = json_object_get(root, "accuracy");
    const char *p_acc[] = {"accuracy"};
    /* The codes of accuracy.h's acc_kind: the dtype's own class (0) or tf32 (1). */
    const char *av = json_string_value(acc);
    t->accuracy = !acc ? 0 : av && (strcmp(av, "f32") == 0 || strcmp(av, "f64") == 0) ? 0 : av && strcmp(av, "tf32") == 0 ? 1 : -1;
    if (t->accuracy < 0) {
        load_fail(ld, p_acc, 1, "\"accuracy\" must be \"f32\", \"f64\" or \"tf32\" (accuracy.h)");
        goto out;
    }

    json_t *params = json_object_get(root, "params");
    const char *p_params[] = {"params"};
    if (!json_is_object(params)) {
        load_fail(ld, p_params, params ? 1 : 0, "\"params\" must be an object of parameter specs");
        goto out;
    }
    t->params = xcalloc(json_object_size(params), sizeof *t->params);
    const char *name;
    json_t *spec;
    json_object_foreach(params, name, spec)
    {
        if (load_param(ld, name, spec, &t->params[t->nparams++]))
            goto out;
    }
    if (load_named(ld, json_object_get(root, "derived"), "derived", &t->derived, &t->nderived) ||
        load_rules(ld, json_object_get(root, "constraints"), "constraints", &t->constraints, &t->nconstraints) ||
        load_rules(ld, json_object_get(root, "requires"), "requires", &t->requires, &t->nrequires) ||
        load_named(ld, json_object_get(root, "switches"), "switches", &t->switches, &t->nswitches) ||
        load_named(ld, json_object_get(root, "let"), "let", &t->lets, &t->nlets))
        goto out;
    const char *p_ws[] = {"workspace"}, *p_tr[] = {"traffic"}, *p_cc[] = {"compile_cost"};
    json_t *ws = json_object_get(root, "workspace"), *tr = json_object_get(root, "traffic");
    json_t *cc = json_object_get(root, "compile_cost");
    if ((ws && get_expr(ld, ws, p_ws, 1, &t->workspace)) || (tr && get_expr(ld, tr, p_tr, 1, &t->traffic)) ||
        (cc && get_expr(ld, cc, p_cc, 1, &t->compile_cost)))
        goto out;

    json_t *model = json_object_get(root, "model");
    if (model) {
        static const char *const model_keys[] = {"tile", "atomics", "slow", NULL};
        const char *p_m[] = {"model", "tile"}, *p_a[] = {"model", "atomics"}, *p_s[] = {"model", "slow"};
        if (!json_is_object(model)) {
            load_fail(ld, p_m, 1, "\"model\" must be an object (tile, atomics, slow)");
            goto out;
        }
        if (check_keys(ld, model, p_m, 1, model_keys, "\"model\""))
            goto out;
        json_t *tile = json_object_get(model, "tile"), *at = json_object_get(model, "atomics");
        json_t *slow = json_object_get(model, "slow");
        if (tile && (!json_is_array(tile) || json_array_size(tile) != 3)) {
            load_fail(ld, p_m, 2, "\"tile\" must be [rows, columns, depth]: the block tile C is padded to");
            goto out;
        }
        for (size_t d = 0; tile && d < 3; d++)
            if (get_expr(ld, json_array_get(tile, d), p_m, 2, &t->model_tile[d]))
                goto out;
        if ((at && get_expr(ld, at, p_a, 2, &t->model_atomics)) || (slow && get_expr(ld, slow, p_s, 2, &t->model_slow)))
            goto out;
    }

    json_t *launches = json_object_get(root, "launches");
    const char *p_l[] = {"launches"};
    if (!json_is_array(launches) || json_array_size(launches) == 0 ||
        json_array_size(launches) > TPL_MAX_LAUNCHES) {
        load_fail(ld, p_l, launches ? 1 : 0, "\"launches\" must be an array of 1 to %d launches",
                  TPL_MAX_LAUNCHES);
        goto out;
    }
    bool has_gemm = false;
    for (size_t i = 0; i < json_array_size(launches); i++) {
        if (load_launch(ld, i, json_array_get(launches, i), &t->launches[t->nlaunches++]))
            goto out;
        has_gemm = has_gemm || strcmp(t->launches[i].kernel, "gemm") == 0;
    }
    if (!has_gemm) {
        load_fail(ld, p_l, 1, "one launch must run the kernel \"gemm\" (the one whose resources are reported)");
        goto out;
    }
    rc = 0;
out:
    json_decref(root);
    return rc;
}

static int template_parse_block(template_t *t, err_t *err);

int template_load(const char *name, template_t *t, err_t *err)
{
    memset(t, 0, sizeof *t);
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return err_set(err, EXIT_INPUT, NULL, 0, 0,
                           "template \"%s\" is not a template name (letters, digits and _ only)", name);
    const char *const *dirs;
    size_t ndirs = paths_template_dirs(&dirs);
    for (size_t i = 0; i < ndirs && !t->text; i++) {
        char *path = xasprintf("%s/%s.cu", dirs[i], name);
        t->text = read_file(path, NULL);
        if (t->text) {
            t->path = path;
            t->dir = xstrdup(dirs[i]);
        } else {
            free(path);
        }
    }
    if (!t->text) {
        strbuf sb;
        sb_init(&sb);
        for (size_t i = 0; i < ndirs; i++)
            sb_addf(&sb, "%s%s", i ? ", " : "", dirs[i]);
        err_set(err, EXIT_INPUT, NULL, 0, 0, "template \"%s\" not found (searched: %s)", name,
                ndirs ? sb.buf : "no template directory; set ENGINE_TEMPLATES");
        sb_free(&sb);
        return -1;
    }
    t->name = xstrdup(name);
    return template_parse_block(t, err);
}

int template_parse(const char *name, const char *path, const char *text, template_t *t, err_t *err)
{
    memset(t, 0, sizeof *t);
    t->name = xstrdup(name);
    t->path = xstrdup(path);
    t->dir = path_dirname(path);
    t->text = xstrdup(text);
    return template_parse_block(t, err);
}

/* The parameter block of t->text, into t; frees t on failure. */
static int template_parse_block(template_t *t, err_t *err)
{
    const char *m = strstr(t->text, MARKER);
    if (!m) {
        err_set(err, EXIT_INPUT, t->path, 1, 1, "no \"%s\" parameter block in the template", MARKER);
        template_free(t);
        return -1;
    }
    const char *start = m + strlen(MARKER);
    const char *end = strstr(start, "*/");
    if (!end) {
        err_set(err, EXIT_INPUT, t->path, 1, 1, "the \"%s\" comment is never closed", MARKER);
        template_free(t);
        return -1;
    }
    char *json = xstrndup(start, (size_t)(end - start));
    loader ld = {t, json, 1, 1, err};
    jsonloc_position(t->text, (size_t)(start - t->text), &ld.first_line, &ld.first_col);
    int rc = parse_block(&ld, t);
    if (rc == 0)
        compile_progs(t);
    free(json);
    if (rc) {
        template_free(t);
        return -1;
    }
    return 0;
}

static void free_rules(tpl_rule *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(r[i].rule);
        free(r[i].why);
    }
    free(r);
}

static void free_named(tpl_named *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(r[i].name);
        free(r[i].expr);
    }
    free(r);
}

void template_free(template_t *t)
{
    free(t->name);
    free(t->path);
    free(t->dir);
    free(t->text);
    free(t->summary);
    for (size_t i = 0; i < t->nparams; i++) {
        free(t->params[i].name);
        free(t->params[i].doc);
        free(t->params[i].values);
    }
    free(t->params);
    free_named(t->derived, t->nderived);
    free_rules(t->constraints, t->nconstraints);
    free_rules(t->requires, t->nrequires);
    free_named(t->switches, t->nswitches);
    free_named(t->lets, t->nlets);
    free(t->workspace);
    free(t->traffic);
    free(t->compile_cost);
    for (int d = 0; d < 3; d++)
        free(t->model_tile[d]);
    free(t->model_atomics);
    free(t->model_slow);
    for (size_t i = 0; i < t->nprogs; i++)
        expr_prog_free(t->progs[i].prog);
    free(t->progs);
    for (size_t i = 0; i < t->nlaunches; i++) {
        tpl_launch *l = &t->launches[i];
        free(l->kernel);
        free(l->cond);
        free(l->smem);
        for (int d = 0; d < 3; d++) {
            free(l->grid[d]);
            free(l->block[d]);
        }
    }
    memset(t, 0, sizeof *t);
}

int template_param_index(const template_t *t, const char *name)
{
    for (size_t i = 0; i < t->nparams; i++)
        if (strcmp(t->params[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* ---- planning ------------------------------------------------------------------------------- */

/* An expression of the template failed to evaluate: that is the template's bug, not the user's. */
static int tpl_expr_fail(const template_t *t, err_t *err, const char *what, const char *msg)
{
    return err_set(err, EXIT_INPUT, t->path, 0, 0, "%s: %s", what, msg);
}

static int plan_eval(const template_t *t, const char *label, const char *config_name, const int64_t *values,
                     dtype_t dtype, int arch, int64_t M, int64_t N, int64_t K, const layout_t *lay,
                     const layout_align *al, int64_t smem_limit, bool paste, plan_t *plan, err_t *err);

int template_plan(const template_t *t, const char *label, const char *config_name, const int64_t *values,
                  dtype_t dtype, int arch, int64_t M, int64_t N, int64_t K, int64_t smem_limit,
                  plan_t *plan, err_t *err)
{
    return plan_eval(t, label, config_name, values, dtype, arch, M, N, K, NULL, NULL, smem_limit, true, plan, err);
}

int template_plan_layout(const template_t *t, const char *label, const char *config_name, const int64_t *values,
                         dtype_t dtype, int arch, int64_t M, int64_t N, int64_t K, const layout_t *lay,
                         const layout_align *al, int64_t smem_limit, plan_t *plan, err_t *err)
{
    return plan_eval(t, label, config_name, values, dtype, arch, M, N, K, lay, al, smem_limit, true, plan, err);
}

int template_plan_geometry(const template_t *t, const char *label, const int64_t *values, dtype_t dtype, int arch,
                           int64_t M, int64_t N, int64_t K, int64_t smem_limit, plan_t *plan, err_t *err)
{
    return plan_eval(t, label, "", values, dtype, arch, M, N, K, NULL, NULL, smem_limit, false, plan, err);
}

static int plan_eval(const template_t *t, const char *label, const char *config_name, const int64_t *values,
                     dtype_t dtype, int arch, int64_t M, int64_t N, int64_t K, const layout_t *lay,
                     const layout_align *al, int64_t smem_limit, bool paste, plan_t *plan, err_t *err)
{
    /* No layout: packed NN, one product, on 16-byte-aligned buffers. */
    layout_t packed;
    layout_align packed_al;
    if (!lay) {
        layout_packed(&packed, 0, 0, M, N, K, 1);
        lay = &packed;
    }
    if (!al) {
        layout_align_ld(lay, dtype_size(dtype), &packed_al);
        al = &packed_al;
    }
    memset(plan, 0, sizeof *plan);
    plan->M = M;
    plan->N = N;
    plan->K = K;
    plan->lay = *lay;
    plan->align = *al;
    plan->arch = arch;
    plan->dtype = dtype;
    plan->main_launch = -1;
    plan->traffic = -1;
    int pdl_param = template_param_index(t, "PDL");
    plan->pdl = !(t->pdl && arch >= 90) ? 0 : pdl_param >= 0 ? (int)values[pdl_param] : 1;
    tpl_scope s;
    scope_init(&s);
    scope_add_params(&s, t, values, dtype, arch);
    if (scope_add_derived(&s, t, err))
        return -1;
    scope_set(&s, "M", M);
    scope_set(&s, "N", N);
    scope_set(&s, "K", K);
    /* The layout (layout.h): transposes, leading dimensions, the batch and its strides, and the
     * alignment class of the pointers in elements (ALIGN_A/B/C); LD_PACKED says every matrix's
     * rows are packed (lda, ldb, ldc the row lengths), as the templates assumed before layouts. */
    layout_t pk;
    layout_packed(&pk, lay->ta, lay->tb, M, N, K, lay->batch);
    const int one = lay->batch > 1; /* a single product's strides are never used: 0 */
    const char *lnames[] = {"TA", "TB", "LDA", "LDB", "LDC", "LD_PACKED", "BATCH", "SA", "SB", "SC",
                            "ALIGN_A", "ALIGN_B", "ALIGN_C"};
    const int64_t lvals[] = {lay->ta, lay->tb, lay->lda, lay->ldb, lay->ldc,
                             lay->lda == pk.lda && lay->ldb == pk.ldb && lay->ldc == pk.ldc, lay->batch,
                             one * lay->sa, one * lay->sb, one * lay->sc, al->a, al->b, al->c};
    for (size_t i = 0; i < sizeof lnames / sizeof lnames[0]; i++)
        scope_set(&s, lnames[i], lvals[i]);
    /* 64-bit element offsets once one product's matrix (rows ld apart) reaches 2^31 elements
     * (gemm_common.cuh, idx_t; kernels step between products in 64 bits). Packed NN: M*K, K*N, M*N. */
    const int64_t big = (int64_t)1 << 31;
    layout_t one_product = *lay;
    one_product.batch = 1;
    const int idx64 = layout_span_a(&one_product, M, K) >= big || layout_span_b(&one_product, N, K) >= big ||
                      layout_span_c(&one_product, M, N) >= big;
    scope_set(&s, "IDX64", idx64);
    char msg[512];
    int64_t v;

    for (size_t i = 0; i < t->nrequires; i++) {
        if (scope_eval(&s, t->requires[i].rule, &v, msg, sizeof msg))
            return tpl_expr_fail(t, err, "requires", msg);
        if (!v)
            return err_set(err, EXIT_INPUT, label, 0, 0,
                           "shape %lldx%lldx%lld%s is refused: template %s requires %s (%s)", (long long)M,
                           (long long)N, (long long)K, layout_text(lay, M, N, K, (char[160]){0}, 160), t->name,
                           t->requires[i].rule, t->requires[i].why);
    }
    strbuf sw;
    sb_init(&sw);
    for (size_t i = 0; i < t->nswitches; i++) {
        if (scope_eval(&s, t->switches[i].expr, &v, msg, sizeof msg)) {
            sb_free(&sw);
            return tpl_expr_fail(t, err, t->switches[i].name, msg);
        }
        scope_set(&s, t->switches[i].name, v);
        if (paste) /* the text is for reports; the model plans too often to format it */
            sb_addf(&sw, "%s%s=%lld", i ? " " : "", t->switches[i].name, (long long)v);
    }
    if (paste)
        plan->switches = sb_steal(&sw);
    else
        sb_free(&sw);
    for (size_t i = 0; i < t->nlets; i++) {
        if (scope_eval(&s, t->lets[i].expr, &v, msg, sizeof msg))
            return tpl_expr_fail(t, err, t->lets[i].name, msg);
        scope_set(&s, t->lets[i].name, v);
    }
    for (size_t i = 0; i < t->nlaunches; i++) {
        const tpl_launch *l = &t->launches[i];
        if (l->cond) {
            if (scope_eval(&s, l->cond, &v, msg, sizeof msg))
                return tpl_expr_fail(t, err, "launch condition", msg);
            if (!v)
                continue;
        }
        plan_launch *pl = &plan->launches[plan->nlaunches];
        pl->kernel = l->kernel;
        for (int d = 0; d < 3; d++) {
            if (scope_eval(&s, l->grid[d], &pl->grid[d], msg, sizeof msg) ||
                scope_eval(&s, l->block[d], &pl->block[d], msg, sizeof msg))
                return tpl_expr_fail(t, err, "launch geometry", msg);
        }
        if (scope_eval(&s, l->smem, &pl->smem, msg, sizeof msg))
            return tpl_expr_fail(t, err, "launch smem", msg);
        int64_t threads = pl->block[0] * pl->block[1] * pl->block[2];
        if (pl->block[0] < 1 || pl->block[1] < 1 || pl->block[2] < 1 || threads > 1024)
            return err_set(err, EXIT_INPUT, label, 0, 0,
                           "kernel %s would launch %lldx%lldx%lld threads per block; the limit is 1024",
                           l->kernel, (long long)pl->block[0], (long long)pl->block[1], (long long)pl->block[2]);
        if (pl->grid[0] < 1 || pl->grid[1] < 1 || pl->grid[2] < 1 || pl->grid[0] > 2147483647LL ||
            pl->grid[1] > 65535 || pl->grid[2] > 65535)
            return err_set(err, EXIT_INPUT, label, 0, 0,
                           "kernel %s would launch a grid of %lldx%lldx%lld blocks, outside 1..2^31-1 x 1..65535 x 1..65535",
                           l->kernel, (long long)pl->grid[0], (long long)pl->grid[1], (long long)pl->grid[2]);
        if (pl->smem < 0 || pl->smem > smem_limit)
            return err_set(err, EXIT_INPUT, label, 0, 0,
                           "kernel %s needs %lld bytes of shared memory per block; %s allows %lld",
                           l->kernel, (long long)pl->smem, arch_name(arch, (char[16]){0}, 16), (long long)smem_limit);
        if (strcmp(l->kernel, "gemm") == 0)
            plan->main_launch = (int)plan->nlaunches;
        plan->nlaunches++;
    }
    if (plan->main_launch < 0)
        return err_set(err, EXIT_INPUT, t->path, 0, 0, "no launch of kernel \"gemm\" is enabled for this config");
    if (t->workspace && scope_eval(&s, t->workspace, &plan->workspace, msg, sizeof msg))
        return tpl_expr_fail(t, err, "workspace", msg);
    if (t->traffic && scope_eval(&s, t->traffic, &plan->traffic, msg, sizeof msg))
        return tpl_expr_fail(t, err, "traffic", msg);
    /* What the selection model reads (select.h): the tile C is padded to, atomic additions, slowness. */
    for (int d = 0; d < 3; d++) {
        plan->tile[d] = 1;
        if (t->model_tile[d] && (scope_eval(&s, t->model_tile[d], &plan->tile[d], msg, sizeof msg) || plan->tile[d] < 1))
            return tpl_expr_fail(t, err, "model tile", plan->tile[d] < 1 ? "a tile dimension below 1" : msg);
    }
    plan->atomics = 0;
    plan->slow_pct = 100;
    if ((t->model_atomics && scope_eval(&s, t->model_atomics, &plan->atomics, msg, sizeof msg)) ||
        (t->model_slow && scope_eval(&s, t->model_slow, &plan->slow_pct, msg, sizeof msg)))
        return tpl_expr_fail(t, err, "model", msg);
    if (!paste)
        return 0;

    strbuf src;
    sb_init(&src);
    /* No shape here: shapes with the same switches share one CUBIN (and one cache entry). */
    sb_addf(&src, "/* pasted by engine: config %s, template %s, %s, %s */\n", config_name, t->name,
            dtype_name(dtype), arch_name(arch, (char[16]){0}, 16));
    sb_addf(&src, "#define T %s\n#define ELEM %zu\n#define F64 %d\n#define ARCH %d\n#define ARCH_SPECIFIC %d\n#define IDX64 %d\n",
            dtype == DTYPE_F64 ? "double" : "float", dtype_size(dtype), dtype == DTYPE_F64, arch_sm(arch),
            arch_specific(arch), idx64);
    for (size_t i = 0; i < t->nparams; i++)
        sb_addf(&src, "#define %s %lld\n", t->params[i].name, (long long)values[i]);
    for (size_t i = 0; i < t->nderived; i++) {
        int64_t dv = 0;
        scope_lookup(&s, t->derived[i].name, strlen(t->derived[i].name), &dv);
        sb_addf(&src, "#define %s %lld\n", t->derived[i].name, (long long)dv);
    }
    for (size_t i = 0; i < t->nswitches; i++) {
        int64_t sv = 0;
        scope_lookup(&s, t->switches[i].name, strlen(t->switches[i].name), &sv);
        sb_addf(&src, "#define %s %lld\n", t->switches[i].name, (long long)sv);
    }
    sb_addf(&src, "#line 1 \"%s\"\n", t->path);
    sb_add(&src, t->text);
    plan->source = sb_steal(&src);
    return 0;
}

void plan_free(plan_t *plan)
{
    free(plan->switches);
    free(plan->source);
    plan->switches = plan->source = NULL;
}

bool plan_use_pdl(const plan_t *plan, int sms, int blocks_per_sm)
{
    if (plan->pdl != 2)
        return plan->pdl == 1;
    const plan_launch *l = &plan->launches[plan->main_launch];
    int64_t blocks = l->grid[0] * l->grid[1] * l->grid[2];
    int64_t warps = (l->block[0] * l->block[1] * l->block[2] + 31) / 32;
    int64_t even = (blocks + sms - 1) / sms;           /* blocks per SM when spread breadth-first */
    int64_t early = (int64_t)sms * blocks_per_sm - blocks; /* slots the same grid before it leaves free */
    return !(blocks > sms && even < blocks_per_sm && blocks > early && even * warps >= PDL_BUSY_WARPS);
}
