/* template.c — load a template's parameter block; plan a launch for one shape. */
#define TEMPLATE_LOADER /* template_rules.h's loader part */
#include "template.h"
#include "template_rules.h"

#include "arch.h"
#include "expr.h"
#include "jsonloc.h"
#include "jsonrd.h"
#include "paths.h"
#include "util.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define MARKER "engine:template"

static const char *const k_dtype_names[DTYPE_COUNT] = {"f32", "f64", "bf16", "f16"};
static const size_t k_dtype_sizes[DTYPE_COUNT] = {4, 8, 2, 2};

const char *dtype_name(dtype_t d) { return d >= 0 && d < DTYPE_COUNT ? k_dtype_names[d] : "?"; }
size_t dtype_size(dtype_t d) { return d >= 0 && d < DTYPE_COUNT ? k_dtype_sizes[d] : 0; }

int dtype_parse(const char *text, dtype_t *d)
{
    for (int i = 0; text && i < DTYPE_COUNT; i++)
        if (strcmp(text, k_dtype_names[i]) == 0) {
            *d = (dtype_t)i;
            return 0;
        }
    return -1;
}

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

/* text compiled into t->progs; nothing once *nomem is set (the host had no memory). */
static void add_prog(template_t *t, size_t *cap, const char *text, bool *nomem)
{
    if (!text || *nomem)
        return;
    expr_prog *p = expr_compile(text, nomem);
    if (!p) /* a syntax error: left to expr_eval, which reports it where it always has */
        return;
    if (t->nprogs == *cap) {
        tpl_prog *grown = try_realloc(t->progs, 2 * (*cap ? *cap : 32) * sizeof *t->progs);
        if (!grown) {
            expr_prog_free(p);
            *nomem = true;
            return;
        }
        t->progs = grown;
        *cap = 2 * (*cap ? *cap : 32);
    }
    t->progs[t->nprogs++] = (tpl_prog){text, p};
}

/* Compile every expression of t (template.h, progs); ERR_ALLOC when the host had no memory. */
static int compile_progs(template_t *t, err_t *err)
{
    size_t cap = 0;
    bool nm = false, *nomem = &nm;
    for (size_t i = 0; i < t->nderived; i++)
        add_prog(t, &cap, t->derived[i].expr, nomem);
    for (size_t i = 0; i < t->nconstraints; i++)
        add_prog(t, &cap, t->constraints[i].rule, nomem);
    for (size_t i = 0; i < t->nrequires; i++)
        add_prog(t, &cap, t->requires[i].rule, nomem);
    for (size_t i = 0; i < t->nswitches; i++)
        add_prog(t, &cap, t->switches[i].expr, nomem);
    for (size_t i = 0; i < t->nlets; i++)
        add_prog(t, &cap, t->lets[i].expr, nomem);
    const char *one[] = {t->workspace, t->traffic, t->stream_state, t->compile_cost, t->model_tile[0],
                         t->model_tile[1], t->model_tile[2], t->model_atomics, t->model_slow, t->model_turns};
    for (size_t i = 0; i < sizeof one / sizeof one[0]; i++)
        add_prog(t, &cap, one[i], nomem);
    for (size_t i = 0; i < t->nlaunches; i++) {
        const tpl_launch *l = &t->launches[i];
        add_prog(t, &cap, l->cond, nomem);
        add_prog(t, &cap, l->smem, nomem);
        add_prog(t, &cap, l->traffic, nomem);
        for (int d = 0; d < 3; d++) {
            add_prog(t, &cap, l->grid[d], nomem);
            add_prog(t, &cap, l->block[d], nomem);
        }
    }
    for (size_t i = 0; i < t->ntmaps; i++) {
        const tpl_tmap *m = &t->tmaps[i];
        add_prog(t, &cap, m->cond, nomem);
        add_prog(t, &cap, m->offset, nomem);
        for (int d = 0; d < 3; d++) {
            add_prog(t, &cap, m->dims[d], nomem);
            add_prog(t, &cap, m->box[d], nomem);
        }
        add_prog(t, &cap, m->strides[0], nomem);
        add_prog(t, &cap, m->strides[1], nomem);
    }
    if (nm)
        return err_set(err, ERR_ALLOC, t->path, 0, 0, "no host memory for the template's compiled expressions"), -1;
    if (t->nprogs)
        qsort(t->progs, t->nprogs, sizeof *t->progs, cmp_prog);
    return 0;
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
    scope_set(s, "IS_HALF", dtype_half(dtype));
    scope_set(s, "BF16", dtype == DTYPE_BF16);
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
        return err_set(err, ERR_INPUT, t->path, 0, 0, "derived %s: %s", t->derived[bad].name, msg), -1;
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

/* rules_loader, load_fail and no_memory: template_rules.h. */

/* An expression is a JSON string or integer. */
static int get_expr(rules_loader *ld, json_t *v, const char *const *path, size_t depth, char **out)
{
    if (json_is_string(v) || json_is_integer(v)) {
        *out = json_is_string(v) ? try_strdup(json_string_value(v))
                                 : try_asprintf("%lld", (long long)json_integer_value(v));
        return *out ? 0 : no_memory(ld, "for a template expression");
    }
    return load_fail(ld, path, depth, "%s must be an expression (string or integer)", path[depth - 1]);
}

static int load_named(rules_loader *ld, json_t *obj, const char *key, tpl_named **out, size_t *n)
{
    const char *path[2] = {key, NULL};
    if (!obj)
        return 0;
    if (!json_is_object(obj))
        return load_fail(ld, path, 1, "\"%s\" must be an object of NAME: expression", key);
    if (!(*out = try_calloc(json_object_size(obj), sizeof **out)))
        return no_memory(ld, "for the template's named expressions");
    const char *name;
    json_t *v;
    json_object_foreach(obj, name, v)
    {
        path[1] = name;
        tpl_named *nd = &(*out)[(*n)++];
        if (!(nd->name = try_strdup(name)))
            return no_memory(ld, "for a template expression's name");
        if (get_expr(ld, v, path, 2, &nd->expr))
            return -1;
    }
    return 0;
}

static int load_param(rules_loader *ld, const jsonrd_obj *params, const char *name, json_t *spec, tpl_param *p)
{
    static const char *const allowed[] = {"doc", "default", "min", "max", "values", NULL};
    const char *path[] = {"params", name, NULL};
    if (!(p->name = try_strdup(name)))
        return no_memory(ld, "for a template parameter's name");
    jsonrd_obj po = jsonrd_member(params, name, spec, NULL);
    if (!json_is_object(spec))
        return load_fail(ld, path, 2, "params.%s must be an object", name);
    if (jsonrd_only(&po, allowed, "a parameter"))
        return -1;
    const char *doc = "";
    if (jsonrd_string(&po, "doc", 0, NULL, &doc) < 0)
        return -1;
    if (!(p->doc = try_strdup(doc)))
        return no_memory(ld, "for a template parameter's doc");
    const char *ints[] = {"default", "min", "max"};
    int64_t *slot[] = {&p->def, &p->min, &p->max};
    bool *has[] = {&p->has_default, &p->has_min, &p->has_max};
    for (int i = 0; i < 3; i++) {
        int rc = jsonrd_int(&po, ints[i], 0, INT64_MIN, INT64_MAX, NULL, slot[i]);
        if (rc < 0)
            return -1;
        *has[i] = rc > 0;
    }
    json_t *vals = json_object_get(spec, "values");
    if (vals) {
        path[2] = "values";
        if (!json_is_array(vals) || json_array_size(vals) == 0)
            return load_fail(ld, path, 3, "params.%s.values must be a non-empty array of integers", name);
        if (!(p->values = try_calloc(json_array_size(vals), sizeof *p->values)))
            return no_memory(ld, "for a template parameter's values");
        p->nvalues = json_array_size(vals);
        for (size_t i = 0; i < p->nvalues; i++) {
            json_t *e = json_array_get(vals, i);
            if (!json_is_integer(e))
                return load_fail(ld, path, 3, "params.%s.values must be a non-empty array of integers", name);
            p->values[i] = json_integer_value(e);
        }
    }
    return 0;
}

static int load_launch(rules_loader *ld, size_t idx, json_t *l, tpl_launch *out)
{
    static const char *const allowed[] = {"kernel", "grid", "block", "smem", "if", "persistent", "traffic", NULL};
    char idxs[32];
    snprintf(idxs, sizeof idxs, "launches[%zu]", idx);
    const char *path[] = {"launches", NULL};
    jsonrd_obj lo = jsonrd_member(&ld->top, "launches", l, idxs);
    if (!json_is_object(l))
        return load_fail(ld, path, 1, "%s must be an object", idxs);
    if (jsonrd_only(&lo, allowed, "a launch"))
        return -1;
    json_t *k = json_object_get(l, "kernel");
    if (!json_is_string(k))
        return load_fail(ld, path, 1, "%s.kernel must be a string", idxs);
    if (!(out->kernel = try_strdup(json_string_value(k))))
        return no_memory(ld, "for a launch's kernel name");
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
    if (!smem && !(out->smem = try_strdup("0")))
        return no_memory(ld, "for a template expression");
    if (smem && get_expr(ld, smem, path, 1, &out->smem))
        return -1;
    if (cond && get_expr(ld, cond, path, 1, &out->cond))
        return -1;
    if (jsonrd_bool(&lo, "persistent", 0, &out->persistent) < 0)
        return -1;
    json_t *traffic = json_object_get(l, "traffic");
    if (traffic && !json_is_string(traffic) && !json_is_integer(traffic))
        return load_fail(ld, path, 1, "%s.traffic must be an expression (string or integer)", idxs);
    if (traffic && get_expr(ld, traffic, path, 1, &out->traffic))
        return -1;
    return 0;
}

/* An array of n expressions at key of m (what names it in errors). */
static int load_exprs(rules_loader *ld, json_t *m, const char *key, size_t n, const char *what, char **out)
{
    const char *path[] = {"tensor_maps", key};
    json_t *a = json_object_get(m, key);
    if (!json_is_array(a) || json_array_size(a) != n)
        return load_fail(ld, path, 1, "%s.%s must be an array of %zu expressions", what, key, n);
    for (size_t i = 0; i < n; i++)
        if (get_expr(ld, json_array_get(a, i), path, 2, &out[i]))
            return -1;
    return 0;
}

static int load_tmap(rules_loader *ld, size_t idx, json_t *m, tpl_tmap *out)
{
    static const char *const allowed[] = {"tensor", "if", "offset", "dims", "strides", "box", "type", NULL};
    char what[48];
    snprintf(what, sizeof what, "tensor_maps[%zu]", idx);
    const char *path[] = {"tensor_maps", NULL};
    jsonrd_obj mo = jsonrd_member(&ld->top, "tensor_maps", m, what);
    if (!json_is_object(m))
        return load_fail(ld, path, 1, "%s must be an object", what);
    if (jsonrd_only(&mo, allowed, "a tensor map"))
        return -1;
    const char *tensor = json_string_value(json_object_get(m, "tensor"));
    if (!tensor || strlen(tensor) != 1 || !strchr("ABCW", tensor[0]))
        return load_fail(ld, path, 1, "%s.tensor must be \"A\", \"B\", \"C\" or \"W\"", what);
    out->tensor = tensor[0];
    json_t *type = json_object_get(m, "type");
    const char *ts = type ? json_string_value(type) : "f32";
    if (!ts || (strcmp(ts, "f32") != 0 && strcmp(ts, "tf32") != 0))
        return load_fail(ld, path, 1, "%s.type must be \"f32\" (the element type as stored) or \"tf32\"", what);
    out->tf32 = strcmp(ts, "tf32") == 0;
    json_t *cond = json_object_get(m, "if"), *off = json_object_get(m, "offset");
    const char *p_if[] = {"tensor_maps", "if"}, *p_off[] = {"tensor_maps", "offset"};
    if ((cond && get_expr(ld, cond, p_if, 1, &out->cond)) || (off && get_expr(ld, off, p_off, 1, &out->offset)))
        return -1;
    if (!out->offset && !(out->offset = try_strdup("0")))
        return no_memory(ld, "for a template expression");
    return load_exprs(ld, m, "dims", 3, what, out->dims) || load_exprs(ld, m, "strides", 2, what, out->strides) ||
           load_exprs(ld, m, "box", 3, what, out->box);
}

/* What kind of template this is: its summary, dtypes, peak, pdl, arch_specific and accuracy. */
static int load_kind(rules_loader *ld, json_t *root, template_t *t)
{
    const char *summary = "";
    if (jsonrd_string(&ld->top, "summary", 0, NULL, &summary) < 0)
        return -1;
    if (!(t->summary = try_strdup(summary)))
        return no_memory(ld, "for the template's summary");
    json_t *dtypes = json_object_get(root, "dtypes");
    const char *p_dtypes[] = {"dtypes"};
    if (!json_is_array(dtypes) || json_array_size(dtypes) == 0)
        return load_fail(ld, p_dtypes, dtypes ? 1 : 0,
                         "\"dtypes\" must list some of \"f32\", \"f64\", \"bf16\", \"f16\"");
    for (size_t i = 0; i < json_array_size(dtypes); i++) {
        dtype_t d;
        if (dtype_parse(json_string_value(json_array_get(dtypes, i)), &d))
            return load_fail(ld, p_dtypes, 1, "\"dtypes\" must list some of \"f32\", \"f64\", \"bf16\", \"f16\"");
        t->dtypes[d] = true;
    }
    json_t *peak = json_object_get(root, "peak");
    const char *p_peak[] = {"peak"};
    if (peak && !(json_is_string(peak) && (strcmp(json_string_value(peak), "fma") == 0 ||
                                           strcmp(json_string_value(peak), "tensor") == 0)))
        return load_fail(ld, p_peak, 1, "\"peak\" must be \"fma\" or \"tensor\"");
    t->tensor = peak && strcmp(json_string_value(peak), "tensor") == 0;
    if (jsonrd_bool(&ld->top, "pdl", 0, &t->pdl) < 0 || jsonrd_bool(&ld->top, "arch_specific", 0, &t->arch_specific) < 0)
        return -1;
    json_t *acc = json_object_get(root, "accuracy");
    const char *p_acc[] = {"accuracy"};
    /* The codes of accuracy.h's acc_kind: the dtype's own class (0) or tf32 (1). */
    const char *av = json_string_value(acc);
    t->accuracy = !acc ? 0 : av && (strcmp(av, "f32") == 0 || strcmp(av, "f64") == 0) ? 0 : av && strcmp(av, "tf32") == 0 ? 1 : -1;
    if (t->accuracy < 0)
        return load_fail(ld, p_acc, 1, "\"accuracy\" must be \"f32\", \"f64\" or \"tf32\" (accuracy.h)");
    return 0;
}

/* The parameters, the named expressions and rules, and the plan's expressions (workspace, traffic,
 * compile cost, per-stream state). */
static int load_params_rules(rules_loader *ld, json_t *root, template_t *t)
{
    json_t *params = json_object_get(root, "params");
    const char *p_params[] = {"params"};
    if (!json_is_object(params))
        return load_fail(ld, p_params, params ? 1 : 0, "\"params\" must be an object of parameter specs");
    jsonrd_obj po = jsonrd_member(&ld->top, "params", params, NULL);
    if (!(t->params = try_calloc(json_object_size(params), sizeof *t->params)))
        return no_memory(ld, "for the template's parameters");
    const char *name;
    json_t *spec;
    json_object_foreach(params, name, spec)
    {
        if (load_param(ld, &po, name, spec, &t->params[t->nparams++]))
            return -1;
    }
    if (load_named(ld, json_object_get(root, "derived"), "derived", &t->derived, &t->nderived) ||
        template_load_rules(ld, json_object_get(root, "constraints"), "constraints", &t->constraints, &t->nconstraints) ||
        template_load_rules(ld, json_object_get(root, "requires"), "requires", &t->requires, &t->nrequires) ||
        load_named(ld, json_object_get(root, "switches"), "switches", &t->switches, &t->nswitches) ||
        load_named(ld, json_object_get(root, "let"), "let", &t->lets, &t->nlets))
        return -1;
    const char *p_ws[] = {"workspace"}, *p_tr[] = {"traffic"}, *p_cc[] = {"compile_cost"}, *p_ss[] = {"stream_state"};
    json_t *ws = json_object_get(root, "workspace"), *tr = json_object_get(root, "traffic");
    json_t *cc = json_object_get(root, "compile_cost"), *ss = json_object_get(root, "stream_state");
    if ((ws && get_expr(ld, ws, p_ws, 1, &t->workspace)) || (tr && get_expr(ld, tr, p_tr, 1, &t->traffic)) ||
        (cc && get_expr(ld, cc, p_cc, 1, &t->compile_cost)) || (ss && get_expr(ld, ss, p_ss, 1, &t->stream_state)))
        return -1;
    return 0;
}

/* The selection model's figures (select.h): "model": {tile, atomics, slow, turns}, all optional. */
static int load_model(rules_loader *ld, json_t *root, template_t *t)
{
    json_t *model = json_object_get(root, "model");
    if (!model)
        return 0;
    static const char *const model_keys[] = {"tile", "atomics", "slow", "turns", NULL};
    const char *p_m[] = {"model", "tile"}, *p_a[] = {"model", "atomics"}, *p_s[] = {"model", "slow"},
               *p_t[] = {"model", "turns"};
    if (!json_is_object(model))
        return load_fail(ld, p_m, 1, "\"model\" must be an object (tile, atomics, slow, turns)");
    jsonrd_obj mo = jsonrd_member(&ld->top, "model", model, NULL);
    if (jsonrd_only(&mo, model_keys, "a model"))
        return -1;
    json_t *tile = json_object_get(model, "tile"), *at = json_object_get(model, "atomics");
    json_t *slow = json_object_get(model, "slow"), *turns = json_object_get(model, "turns");
    if (tile && (!json_is_array(tile) || json_array_size(tile) != 3))
        return load_fail(ld, p_m, 2, "\"tile\" must be [rows, columns, depth]: the block tile C is padded to");
    for (size_t d = 0; tile && d < 3; d++)
        if (get_expr(ld, json_array_get(tile, d), p_m, 2, &t->model_tile[d]))
            return -1;
    if ((at && get_expr(ld, at, p_a, 2, &t->model_atomics)) || (slow && get_expr(ld, slow, p_s, 2, &t->model_slow)) ||
        (turns && get_expr(ld, turns, p_t, 2, &t->model_turns)))
        return -1;
    return 0;
}

/* The launches (one of kernel "gemm") and the tensor maps. */
static int load_launches(rules_loader *ld, json_t *root, template_t *t)
{
    json_t *launches = json_object_get(root, "launches");
    const char *p_l[] = {"launches"};
    if (!json_is_array(launches) || json_array_size(launches) == 0 || json_array_size(launches) > TPL_MAX_LAUNCHES)
        return load_fail(ld, p_l, launches ? 1 : 0, "\"launches\" must be an array of 1 to %d launches",
                         TPL_MAX_LAUNCHES);
    bool has_gemm = false;
    for (size_t i = 0; i < json_array_size(launches); i++) {
        if (load_launch(ld, i, json_array_get(launches, i), &t->launches[t->nlaunches++]))
            return -1;
        has_gemm = has_gemm || strcmp(t->launches[i].kernel, "gemm") == 0;
    }
    if (!has_gemm)
        return load_fail(ld, p_l, 1, "one launch must run the kernel \"gemm\" (the one whose resources are reported)");
    json_t *tmaps = json_object_get(root, "tensor_maps");
    const char *p_t[] = {"tensor_maps"};
    if (tmaps && (!json_is_array(tmaps) || json_array_size(tmaps) > TPL_MAX_TMAPS))
        return load_fail(ld, p_t, 1, "\"tensor_maps\" must be an array of at most %d tensor maps", TPL_MAX_TMAPS);
    for (size_t i = 0; tmaps && i < json_array_size(tmaps); i++)
        if (load_tmap(ld, i, json_array_get(tmaps, i), &t->tmaps[t->ntmaps++]))
            return -1;
    return 0;
}

static int parse_block(rules_loader *ld, template_t *t)
{
    static const char *const allowed[] = {"summary", "dtypes", "peak", "params", "derived", "constraints",
                                          "requires", "switches", "let", "workspace", "traffic",
                                          "stream_state", "compile_cost", "pdl", "arch_specific", "accuracy", "model", "launches",
                                          "tensor_maps", NULL};
    json_t *root;
    if (jsonrd_load(&ld->rd, strlen(ld->rd.text), JSON_DISABLE_EOF_CHECK, "template parameter block", &root))
        return -1;
    int rc = jsonrd_top(&ld->rd, root, "template parameter block", &ld->top) ||
                     jsonrd_only(&ld->top, allowed, "the template parameter block") || load_kind(ld, root, t) ||
                     load_params_rules(ld, root, t) || load_model(ld, root, t) || load_launches(ld, root, t)
                 ? -1
                 : 0;
    json_decref(root);
    return rc;
}

static int template_parse_block(template_t *t, err_t *err);

int template_load(const char *name, template_t *t, err_t *err)
{
    memset(t, 0, sizeof *t);
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return err_set(err, ERR_INPUT, NULL, 0, 0,
                           "template \"%s\" is not a template name (letters, digits and _ only)", name);
    const char *const *dirs;
    size_t ndirs = paths_template_dirs(&dirs);
    for (size_t i = 0; i < ndirs && !t->text; i++) {
        char *path = try_asprintf("%s/%s.cu", dirs[i], name);
        if (!path)
            return err_set(err, ERR_ALLOC, dirs[i], 0, 0, "no host memory for the template's path"), -1;
        t->text = try_read_file(path, NULL);
        if (!t->text && errno == ENOMEM) {
            err_set(err, ERR_ALLOC, path, 0, 0, "no host memory to read the template");
            free(path);
            return -1;
        }
        if (t->text) {
            t->path = path;
            t->dir = try_strdup(dirs[i]);
        } else {
            free(path);
        }
    }
    if (!t->text) {
        strbuf sb;
        sb_try_init(&sb);
        for (size_t i = 0; i < ndirs; i++)
            sb_addf(&sb, "%s%s", i ? ", " : "", dirs[i]);
        if (sb.failed)
            err_set(err, ERR_ALLOC, NULL, 0, 0, "no host memory for the template directories' names");
        else
            err_set(err, ERR_INPUT, NULL, 0, 0, "template \"%s\" not found (searched: %s)", name,
                    ndirs ? sb.buf : "no template directory; set ENGINE_TEMPLATES");
        sb_free(&sb);
        return -1;
    }
    if (!t->dir || !(t->name = try_strdup(name))) {
        err_set(err, ERR_ALLOC, t->path, 0, 0, "no host memory for the template's name");
        template_free(t);
        return -1;
    }
    return template_parse_block(t, err);
}

int template_parse(const char *name, const char *path, const char *text, template_t *t, err_t *err)
{
    memset(t, 0, sizeof *t);
    if (!(t->name = try_strdup(name)) || !(t->path = try_strdup(path)) || !(t->dir = try_path_dirname(path)) ||
        !(t->text = try_strdup(text))) {
        err_set(err, ERR_ALLOC, path, 0, 0, "no host memory for the template's text");
        template_free(t);
        return -1;
    }
    return template_parse_block(t, err);
}

/* The parameter block of t->text, into t; frees t on failure. */
static int template_parse_block(template_t *t, err_t *err)
{
    const char *m = strstr(t->text, MARKER);
    if (!m) {
        err_set(err, ERR_INPUT, t->path, 1, 1, "no \"%s\" parameter block in the template", MARKER);
        template_free(t);
        return -1;
    }
    const char *start = m + strlen(MARKER);
    const char *end = strstr(start, "*/");
    if (!end) {
        err_set(err, ERR_INPUT, t->path, 1, 1, "the \"%s\" comment is never closed", MARKER);
        template_free(t);
        return -1;
    }
    char *json = try_malloc((size_t)(end - start) + 1);
    if (!json) {
        err_set(err, ERR_ALLOC, t->path, 0, 0, "no host memory for the template's parameter block");
        template_free(t);
        return -1;
    }
    memcpy(json, start, (size_t)(end - start));
    json[end - start] = '\0';
    rules_loader ld = {t->path, t->dir, {t->path, json, 1, 1, false, true, err}, {.obj = NULL}, NULL, NULL, NULL};
    jsonloc_position(t->text, (size_t)(start - t->text), &ld.rd.line, &ld.rd.col);
    int rc = parse_block(&ld, t);
    if (rc == 0)
        rc = compile_progs(t, err);
    json_decref(ld.rules);
    free(ld.rules_text);
    free(ld.rules_path);
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
    free(t->stream_state);
    free(t->compile_cost);
    for (int d = 0; d < 3; d++)
        free(t->model_tile[d]);
    free(t->model_atomics);
    free(t->model_slow);
    free(t->model_turns);
    for (size_t i = 0; i < t->nprogs; i++)
        expr_prog_free(t->progs[i].prog);
    free(t->progs);
    for (size_t i = 0; i < t->nlaunches; i++) {
        tpl_launch *l = &t->launches[i];
        free(l->kernel);
        free(l->cond);
        free(l->smem);
        free(l->traffic);
        for (int d = 0; d < 3; d++) {
            free(l->grid[d]);
            free(l->block[d]);
        }
    }
    for (size_t i = 0; i < t->ntmaps; i++) {
        tpl_tmap *m = &t->tmaps[i];
        free(m->cond);
        free(m->offset);
        for (int d = 0; d < 3; d++) {
            free(m->dims[d]);
            free(m->box[d]);
        }
        free(m->strides[0]);
        free(m->strides[1]);
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

bool scope_get(const tpl_scope *s, const char *name, int64_t *v)
{
    return scope_lookup((void *)s, name, strlen(name), v);
}
