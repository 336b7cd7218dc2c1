/* space.c — see space.h. */
#define _GNU_SOURCE
#include "space.h"

#include "configlist.h"
#include "expr.h"
#include "jsonloc.h"
#include "jsonrd.h"
#include "paths.h"
#include "range.h"
#include "template.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- loading ------------------------------------------------------------------------------- */

/* An expression that parses but cannot be evaluated for these values (it divides by zero, say):
 * that removes a point; any other failure (an unknown name, a syntax error) is the user's typo. */
static bool value_dependent(const char *msg)
{
    return strstr(msg, "by zero") || strstr(msg, "by a value <= 0") || strstr(msg, "not a power of two");
}

static void dim_free(space_dim *d)
{
    free(d->name);
    free(d->values);
    free(d->expr);
    free(d->origin);
}

void space_free(space_t *s)
{
    for (size_t i = 0; i < s->ndims; i++)
        dim_free(&s->dims[i]);
    free(s->dims);
    for (size_t i = 0; i < s->nrules; i++) {
        free(s->rules[i].rule);
        free(s->rules[i].why);
        free(s->rules[i].origin);
    }
    free(s->rules);
    free(s->path);
    if (s->base.name)
        config_free(&s->base);
    memset(s, 0, sizeof *s);
}

/* Add or replace the dimension `name` (a template parameter): text is a range or an expression. */
static int add_dim(space_t *s, const char *name, const char *text, const int64_t *vals, size_t nvals,
                   const char *origin, err_t *err)
{
    const template_t *t = &s->base.tpl;
    int p = template_param_index(t, name);
    if (p < 0) {
        strbuf sb;
        sb_init(&sb);
        for (size_t i = 0; i < t->nparams; i++)
            sb_addf(&sb, "%s%s", i ? ", " : "", t->params[i].name);
        err_set(err, ERR_INPUT, origin, 0, 0, "template %s has no parameter \"%s\" (it takes %s)", t->name, name,
                sb.buf);
        sb_free(&sb);
        return -1;
    }
    space_dim d = {xstrdup(name), p, NULL, 0, NULL, xstrdup(origin)};
    if (vals) {
        d.values = xmalloc((nvals ? nvals : 1) * sizeof *d.values);
        memcpy(d.values, vals, nvals * sizeof *vals);
        d.nvalues = nvals;
    } else {
        char why[256];
        int rc = range_parse(text, &d.values, &d.nvalues, why, sizeof why);
        if (rc < 0) {
            dim_free(&d);
            return err_set(err, ERR_INPUT, origin, 0, 0, "%s: %s", name, why), -1;
        }
        if (rc == 1) {
            /* Not a range: an expression of the other parameters. Check it parses, and that every
             * name in it is known, with all parameters at their base values. */
            tpl_scope sc;
            scope_init(&sc);
            scope_add_params(&sc, t, s->base.values, s->base.dtype, s->arch);
            int64_t v;
            char msg[512];
            if (scope_eval(&sc, text, &v, msg, sizeof msg) && !value_dependent(msg)) {
                dim_free(&d);
                return err_set(err, ERR_INPUT, origin, 0, 0,
                               "%s = %s is neither a range (a:b:step, a:b:*2, v1,v2,...) nor an expression of the parameters: %s",
                               name, text, msg),
                       -1;
            }
            d.expr = xstrdup(text);
        }
    }
    for (size_t i = 0; i < s->ndims; i++)
        if (s->dims[i].param == p) {
            dim_free(&s->dims[i]);
            s->dims[i] = d;
            return 0;
        }
    s->dims = xrealloc(s->dims, (s->ndims + 1) * sizeof *s->dims);
    s->dims[s->ndims++] = d;
    return 0;
}

static void add_rule(space_t *s, const char *rule, const char *why, const char *origin)
{
    s->rules = xrealloc(s->rules, (s->nrules + 1) * sizeof *s->rules);
    s->rules[s->nrules++] = (space_rule){xstrdup(rule), xstrdup(why ? why : ""), xstrdup(origin)};
}

/* Python's spelling of a restriction (Kernel Tuner) in the template's expression language. */
static char *from_python(const char *src)
{
    strbuf sb;
    sb_init(&sb);
    for (const char *p = src; *p;) {
        bool word_start = p == src || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
        if (word_start && strncmp(p, "and", 3) == 0 && !(isalnum((unsigned char)p[3]) || p[3] == '_')) {
            sb_add(&sb, "&&");
            p += 3;
        } else if (word_start && strncmp(p, "or", 2) == 0 && !(isalnum((unsigned char)p[2]) || p[2] == '_')) {
            sb_add(&sb, "||");
            p += 2;
        } else if (word_start && strncmp(p, "not", 3) == 0 && !(isalnum((unsigned char)p[3]) || p[3] == '_')) {
            sb_add(&sb, "!");
            p += 3;
        } else if (word_start && strncmp(p, "True", 4) == 0 && !(isalnum((unsigned char)p[4]) || p[4] == '_')) {
            sb_add(&sb, "1");
            p += 4;
        } else if (word_start && strncmp(p, "False", 5) == 0 && !(isalnum((unsigned char)p[5]) || p[5] == '_')) {
            sb_add(&sb, "0");
            p += 5;
        } else if (strncmp(p, "//", 2) == 0) {
            sb_add(&sb, "/");
            p += 2;
        } else {
            sb_addn(&sb, p, 1);
            p++;
        }
    }
    return sb_steal(&sb);
}

/* The config a space file names: a path relative to the file, else as the command line takes it
 * (relative to the working directory, or a shipped config's name). */
static char *resolve_config(const char *file, const char *name)
{
    char *dir = path_dirname(file), *p = path_join(dir, name);
    free(dir);
    struct stat st;
    if (stat(p, &st) == 0)
        return p;
    free(p);
    return entries_resolve(NULL, name);
}

static int load_base(space_t *s, const char *path, const char *dtype, int arch, err_t *err)
{
    if (config_load_guess(path, NULL, 0, dtype, arch, s->arch_guessed, &s->base, err))
        return -1;
    s->arch = s->base.arch; /* sm_90a for an arch-specific template without --arch */
    return 0;
}

/* Our own space file: {"config", "space", "constraints", "shapes", "description"}. */
static int load_native(space_t *s, const jsonrd_obj *top, const char *dtype, int arch)
{
    static const char *const keys[] = {"config", "space", "constraints", "shapes", "description", NULL};
    const char *file = top->rd->file, *key;
    err_t *err = top->rd->err;
    json_t *v, *root = top->obj;
    if (jsonrd_only(top, keys, "a space file"))
        return -1;
    json_t *cfg = json_object_get(root, "config"), *space = json_object_get(root, "space");
    if (!json_is_string(cfg))
        return jsonrd_fail(top, "config", false, "\"config\" must name the config the space varies");
    if (!json_is_object(space))
        return jsonrd_fail(top, "space", false, "\"space\" must be an object of parameter: values");
    char *cpath = resolve_config(file, json_string_value(cfg));
    int rc = load_base(s, cpath, dtype, arch, err);
    free(cpath);
    if (rc)
        return -1;
    json_object_foreach(space, key, v)
    {
        const char *p[] = {"space", key};
        int line = 0, col = 0;
        jsonloc_find(top->rd->text, p, 2, false, &line, &col);
        char *origin = xasprintf("%s:%d:%d", file, line, col);
        int64_t *vals = NULL;
        size_t n = 0;
        if (json_is_integer(v)) {
            int64_t one = json_integer_value(v);
            rc = add_dim(s, key, NULL, &one, 1, origin, err);
        } else if (json_is_string(v)) {
            rc = add_dim(s, key, json_string_value(v), NULL, 0, origin, err);
        } else if (json_is_array(v) && json_array_size(v) > 0) {
            size_t i;
            json_t *e;
            rc = 0;
            json_array_foreach(v, i, e)
            {
                if (!json_is_integer(e)) {
                    rc = err_set(err, ERR_INPUT, origin, 0, 0, "space.%s: every value must be an integer", key);
                    break;
                }
                char why[128];
                if (range_push(&vals, &n, json_integer_value(e), why, sizeof why)) {
                    rc = err_set(err, ERR_INPUT, origin, 0, 0, "space.%s: %s", key, why);
                    break;
                }
            }
            char why[128];
            if (!rc && range_check_distinct(vals, n, why, sizeof why))
                rc = err_set(err, ERR_INPUT, origin, 0, 0, "space.%s: %s", key, why);
            if (!rc)
                rc = add_dim(s, key, NULL, vals, n, origin, err);
        } else {
            rc = err_set(err, ERR_INPUT, origin, 0, 0,
                         "space.%s must be a list of integers, an integer, or a string (a range or an expression)", key);
        }
        free(vals);
        free(origin);
        if (rc)
            return -1;
    }
    json_t *cons = json_object_get(root, "constraints");
    if (cons && !json_is_array(cons))
        return jsonrd_fail(top, "constraints", false,
                           "\"constraints\" must be a list of {\"rule\": ..., \"why\": ...}");
    size_t i;
    json_t *c;
    json_array_foreach(cons, i, c)
    {
        json_t *rule = json_object_get(c, "rule"), *why = json_object_get(c, "why");
        if (!json_is_string(rule) || (why && !json_is_string(why)) || json_object_size(c) != (why ? 2u : 1u))
            return jsonrd_fail(top, "constraints", false,
                               "constraints[%zu] must be {\"rule\": \"...\", \"why\": \"...\"}", i);
        char *origin = xasprintf("%s: constraints[%zu]", file, i);
        add_rule(s, json_string_value(rule), why ? json_string_value(why) : "", origin);
        free(origin);
    }
    json_t *shapes = json_object_get(root, "shapes");
    json_array_foreach(shapes, i, c)
    {
        long long m, n, k;
        char tail;
        const char *str = json_string_value(c);
        if (!str || sscanf(str, "%lldx%lldx%lld%c", &m, &n, &k, &tail) != 3 || m < 1 || n < 1 || k < 1 ||
            m > SHAPE_MAX_DIM || n > SHAPE_MAX_DIM || k > SHAPE_MAX_DIM || s->nshapes == SHAPE_MAX_LIST)
            return jsonrd_fail(top, "shapes", false,
                               "shapes[%zu] must be a string MxNxK with sizes from 1 to %d (at most %d shapes)", i,
                               SHAPE_MAX_DIM, SHAPE_MAX_LIST);
        s->shapes[s->nshapes++] = (shape_t){m, n, k};
    }
    if (shapes && !json_is_array(shapes))
        return jsonrd_fail(top, "shapes", false, "\"shapes\" must be a list of \"MxNxK\" strings");
    return 0;
}

/* Kernel Tuner's T1 input format: ConfigurationSpace.TuningParameters [{Name, Type, Values}] and
 * Conditions [{Parameters, Expression}]; KernelSpecification.KernelName names our config. */
static int load_t1(space_t *s, const jsonrd_obj *top, const char *dtype, int arch)
{
    const char *file = top->rd->file;
    err_t *err = top->rd->err;
    json_t *root = top->obj;
    json_t *ks = json_object_get(root, "KernelSpecification"), *cs = json_object_get(root, "ConfigurationSpace");
    const char *kname = json_string_value(json_object_get(ks, "KernelName"));
    if (!kname)
        return jsonrd_fail(top, "KernelSpecification", false,
                           "KernelSpecification.KernelName must name an engine config");
    char *cpath = resolve_config(file, kname);
    int rc = load_base(s, cpath, dtype, arch, err);
    free(cpath);
    if (rc)
        return -1;
    json_t *tps = json_object_get(cs, "TuningParameters");
    if (!json_is_array(tps))
        return jsonrd_fail(top, "ConfigurationSpace", false, "ConfigurationSpace.TuningParameters must be a list");
    size_t i;
    json_t *tp;
    json_array_foreach(tps, i, tp)
    {
        const char *name = json_string_value(json_object_get(tp, "Name"));
        const char *type = json_string_value(json_object_get(tp, "Type"));
        json_t *vals = json_object_get(tp, "Values");
        char *origin = xasprintf("%s: TuningParameters[%zu]", file, i);
        if (!name || !vals || (type && strcmp(type, "int") != 0 && strcmp(type, "uint") != 0)) {
            err_set(err, ERR_INPUT, origin, 0, 0, "each tuning parameter needs Name, Type int or uint, and Values");
            free(origin);
            return -1;
        }
        /* Values is a string holding a list, "[16, 32, 64]", or (leniently) a JSON list. */
        json_t *list = NULL;
        if (json_is_string(vals)) {
            json_error_t je;
            list = json_loads(json_string_value(vals), 0, &je);
        } else {
            list = json_incref(vals);
        }
        int64_t *v = NULL;
        size_t n = 0;
        rc = json_is_array(list) && json_array_size(list) > 0 ? 0 : -1;
        size_t j;
        json_t *e;
        json_array_foreach(list, j, e)
        {
            char why[128];
            if (rc || !json_is_integer(e) || range_push(&v, &n, json_integer_value(e), why, sizeof why))
                rc = -1;
        }
        char why[128];
        if (!rc && range_check_distinct(v, n, why, sizeof why))
            rc = -1;
        json_decref(list);
        if (rc)
            err_set(err, ERR_INPUT, origin, 0, 0, "%s: Values must be a list of distinct integers, e.g. \"[16, 32, 64]\"",
                    name);
        else
            rc = add_dim(s, name, NULL, v, n, origin, err);
        free(v);
        free(origin);
        if (rc)
            return -1;
    }
    json_t *conds = json_object_get(cs, "Conditions");
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        const char *expr = json_string_value(json_object_get(c, "Expression"));
        char *origin = xasprintf("%s: Conditions[%zu]", file, i);
        if (!expr) {
            err_set(err, ERR_INPUT, origin, 0, 0, "each condition needs an Expression");
            free(origin);
            return -1;
        }
        char *rule = from_python(expr);
        add_rule(s, rule, "a condition of the T1 file", origin);
        free(rule);
        free(origin);
    }
    return 0;
}

/* Order the derived dimensions so that each is evaluated after those it mentions. */
typedef struct {
    const space_t *s;
    size_t self;
    bool *needs; /* needs[j]: the expression mentions derived dimension j */
} dep_ctx;

static void on_dep(void *ctx, const char *name, size_t len)
{
    dep_ctx *d = ctx;
    for (size_t j = d->s->nfree; j < d->s->ndims; j++)
        if (strlen(d->s->dims[j].name) == len && strncmp(d->s->dims[j].name, name, len) == 0)
            d->needs[j] = true;
}

static int order_dims(space_t *s, err_t *err)
{
    /* Free dimensions first, in the order given. */
    size_t nf = 0;
    for (size_t i = 0; i < s->ndims; i++)
        if (!s->dims[i].expr) {
            space_dim t = s->dims[i];
            memmove(&s->dims[nf + 1], &s->dims[nf], (i - nf) * sizeof t);
            s->dims[nf++] = t;
        }
    s->nfree = nf;
    /* Even one derived dimension is checked: it may not mention itself (it would read the base
     * config's value of its own parameter). */
    if (s->ndims == nf)
        return 0;
    bool *needs = xcalloc(s->ndims * s->ndims, sizeof *needs);
    for (size_t i = nf; i < s->ndims; i++) {
        dep_ctx d = {s, i, needs + i * s->ndims};
        expr_idents(s->dims[i].expr, on_dep, &d);
        if (d.needs[i]) {
            err_set(err, ERR_INPUT, s->dims[i].origin, 0, 0, "%s = %s refers to itself", s->dims[i].name,
                    s->dims[i].expr);
            free(needs);
            return -1;
        }
    }
    space_dim *sorted = xcalloc(s->ndims, sizeof *sorted);
    bool *placed = xcalloc(s->ndims, sizeof *placed);
    memcpy(sorted, s->dims, nf * sizeof *sorted);
    size_t n = nf;
    while (n < s->ndims) {
        bool progress = false;
        for (size_t i = nf; i < s->ndims; i++) {
            if (placed[i])
                continue;
            bool ready = true;
            for (size_t j = nf; j < s->ndims && ready; j++)
                ready = !needs[i * s->ndims + j] || placed[j];
            if (ready) {
                sorted[n++] = s->dims[i];
                placed[i] = progress = true;
            }
        }
        if (!progress) {
            size_t i = nf;
            while (placed[i])
                i++;
            err_set(err, ERR_INPUT, s->dims[i].origin, 0, 0, "the expressions of the derived dimensions refer to each other in a cycle (%s = %s)",
                    s->dims[i].name, s->dims[i].expr);
            free(sorted);
            free(placed);
            free(needs);
            return -1;
        }
    }
    memcpy(s->dims, sorted, s->ndims * sizeof *sorted);
    free(sorted);
    free(placed);
    free(needs);
    return 0;
}

int space_load(space_t *s, const char *config_arg, char *const *set_text, size_t nsets, const char *dtype, int arch,
               bool guessed, err_t *err)
{
    memset(s, 0, sizeof *s);
    s->arch = arch;
    s->arch_guessed = guessed;
    /* A shipped config's name, or a shipped space under tune/. */
    char *path = NULL;
    struct stat st;
    if (stat(config_arg, &st) != 0 && !strchr(config_arg, '/')) {
        path = entries_resolve(NULL, config_arg);
        if (stat(path, &st) != 0) {
            free(path);
            path = NULL;
        }
        if (!path && paths_tune_dir()) {
            char *p = xasprintf("%s/%s%s", paths_tune_dir(), config_arg,
                                strstr(config_arg, ".json") ? "" : ".json");
            if (stat(p, &st) == 0)
                path = p;
            else
                free(p);
        }
    }
    if (!path)
        path = xstrdup(config_arg);
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        err_set(err, ERR_INPUT, path, 0, 0, "`engine tune` takes one config or space file, not a directory");
        free(path);
        return -1;
    }
    size_t len = 0;
    char *text = read_file(path, &len);
    if (!text) {
        err_set(err, ERR_INPUT, path, 0, 0, "cannot read config or space file: %s", strerror(errno));
        free(path);
        return -1;
    }
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    jsonrd rd = {.file = path, .text = text, .line = 1, .col = 1, .unplaced = true, .err = err};
    jsonrd_obj top = jsonrd_at(&rd, root, 0, "");
    int rc = 0;
    if (root && json_is_object(root) && json_object_get(root, "space")) {
        s->path = xstrdup(path);
        rc = load_native(s, &top, dtype, arch);
    } else if (root && json_is_object(root) && json_object_get(root, "KernelSpecification")) {
        s->path = xstrdup(path);
        rc = load_t1(s, &top, dtype, arch);
    } else {
        /* A plain config (config_load reports its own JSON errors with line and column). */
        rc = load_base(s, path, dtype, arch, err);
    }
    json_decref(root);
    free(text);
    for (size_t i = 0; i < nsets && !rc; i++) {
        const char *eq = strchr(set_text[i], '=');
        char *name = xstrndup(set_text[i], (size_t)(eq - set_text[i]));
        char *origin = xasprintf("--set %s", set_text[i]);
        rc = add_dim(s, name, eq + 1, NULL, 0, origin, err);
        free(name);
        free(origin);
    }
    if (!rc)
        rc = order_dims(s, err);
    free(path);
    if (rc) {
        space_free(s);
        return -1;
    }
    return 0;
}

uint64_t space_size(const space_t *s)
{
    uint64_t n = 1;
    for (size_t i = 0; i < s->nfree; i++) {
        uint64_t k = s->dims[i].nvalues;
        if (k && n > UINT64_MAX / k)
            return UINT64_MAX;
        n *= k;
    }
    return n;
}

/* ---- enumeration --------------------------------------------------------------------------- */

/* Values of the point at cartesian index idx (last free dimension fastest); derived dimensions
 * evaluated in order. Returns 0, or -1 with the failing expression's reason in msg. */
static int point_values(const space_t *s, uint64_t idx, int64_t *values, int *bad_dim, char *msg, size_t msglen)
{
    memcpy(values, s->base.values, s->base.tpl.nparams * sizeof *values);
    for (size_t i = s->nfree; i-- > 0;) {
        const space_dim *d = &s->dims[i];
        values[d->param] = d->values[idx % d->nvalues];
        idx /= d->nvalues;
    }
    for (size_t i = s->nfree; i < s->ndims; i++) {
        tpl_scope sc;
        scope_init(&sc);
        scope_add_params(&sc, &s->base.tpl, values, s->base.dtype, s->arch);
        int64_t v;
        if (scope_eval(&sc, s->dims[i].expr, &v, msg, msglen)) {
            *bad_dim = (int)i;
            return -1;
        }
        values[s->dims[i].param] = v;
    }
    return 0;
}

static char *describe_value(const space_t *s, int p, const int64_t *values)
{
    const tpl_param *tp = &s->base.tpl.params[p];
    return xasprintf("%s = %lld is outside what the template allows (%s)", tp->name, (long long)values[p], tp->doc);
}

int space_enumerate(const space_t *s, const space_device *dev, const shape_t *shapes, size_t nshapes,
                    uint64_t max_points, space_point **points, size_t *npoints, space_counts *c, err_t *err)
{
    const template_t *t = &s->base.tpl;
    uint64_t total = space_size(s);
    *points = NULL;
    *npoints = 0;
    memset(c, 0, sizeof *c);
    if (total > max_points)
        return err_set(err, ERR_INPUT, s->path ? s->path : s->base.path, 0, 0,
                       "the space has %llu points; at most %llu can be enumerated (narrow the ranges, or tune in --shard parts)",
                       (unsigned long long)total, (unsigned long long)max_points),
               -1;
    c->total = total;
    c->by_value = xcalloc(t->nparams, sizeof *c->by_value);
    c->by_template = xcalloc(t->nconstraints + 1, sizeof *c->by_template);
    c->by_space = xcalloc(s->nrules + 1, sizeof *c->by_space);
    /* Shared reasons, one per rule: a million pruned points need not carry a million strings. */
    space_point *pts = xcalloc(total ? total : 1, sizeof *pts);
    int64_t *vals = xmalloc(t->nparams * sizeof *vals);
    char msg[512];
    for (uint64_t idx = 0; idx < total; idx++) {
        space_point *p = &pts[idx];
        p->index = idx;
        p->rule = -1;
        int bad = -1;
        if (point_values(s, idx, vals, &bad, msg, sizeof msg)) {
            p->pruned = PRUNE_EXPR;
            p->rule = bad;
            p->reason = xasprintf("%s = %s cannot be evaluated: %s", s->dims[bad].name, s->dims[bad].expr, msg);
            c->by_expr++;
            continue;
        }
        int i = -1;
        int kind = template_check(t, vals, s->base.dtype, dev->arch, &i, msg, sizeof msg);
        if (kind == TPL_BAD_VALUE) {
            p->pruned = PRUNE_VALUE;
            p->rule = i;
            p->reason = describe_value(s, i, vals);
            c->by_value[i]++;
            continue;
        }
        if (kind == TPL_BAD_CONSTRAINT || kind < 0) {
            p->pruned = PRUNE_TEMPLATE;
            p->rule = kind < 0 ? (int)t->nconstraints : i;
            p->reason = kind < 0 ? xasprintf("a template expression cannot be evaluated: %s", msg)
                                 : xasprintf("template constraint \"%s\": %s", t->constraints[i].rule, t->constraints[i].why);
            c->by_template[p->rule]++;
            continue;
        }
        tpl_scope sc;
        scope_init(&sc);
        scope_add_params(&sc, t, vals, s->base.dtype, dev->arch);
        err_t derr;
        err_clear(&derr);
        scope_add_derived(&sc, t, &derr);
        for (size_t r = 0; r < s->nrules && !p->pruned; r++) {
            int64_t ok;
            int erc = scope_eval(&sc, s->rules[r].rule, &ok, msg, sizeof msg);
            if (erc && !value_dependent(msg)) {
                free(vals);
                space_points_free(pts, (size_t)idx);
                space_counts_free(c);
                return err_set(err, ERR_INPUT, s->rules[r].origin, 0, 0, "rule \"%s\": %s", s->rules[r].rule, msg), -1;
            }
            if (erc || !ok) {
                p->pruned = PRUNE_SPACE;
                p->rule = (int)r;
                p->reason = xasprintf("space constraint \"%s\"%s%s", s->rules[r].rule, s->rules[r].why[0] ? ": " : "",
                                      s->rules[r].why);
                c->by_space[r]++;
            }
        }
        if (p->pruned)
            continue;
        /* The device: threads, shared memory, grid, and the shapes the template refuses. */
        for (size_t k = 0; k < nshapes && !p->pruned; k++) {
            plan_t plan;
            err_t perr;
            err_clear(&perr);
            plan_req req = config_plan_req(&s->base, &(plan_target){.arch = dev->arch,
                                                                    .smem_limit = dev->smem_limit,
                                                                    .M = shapes[k].m,
                                                                    .N = shapes[k].n,
                                                                    .K = shapes[k].k});
            req.values = vals; /* the point's */
            if (template_plan(&req, &plan, &perr)) {
                p->pruned = PRUNE_DEVICE;
                p->reason = xstrdup(perr.text);
                c->by_device++;
            }
            plan_free(&plan);
        }
        if (p->pruned)
            continue;
        p->values = xmalloc(t->nparams * sizeof *vals);
        memcpy(p->values, vals, t->nparams * sizeof *vals);
        c->feasible++;
    }
    free(vals);
    *points = pts;
    *npoints = (size_t)total;
    return 0;
}

int space_values(const space_t *s, uint64_t index, int64_t *values)
{
    int bad;
    char msg[256];
    return point_values(s, index, values, &bad, msg, sizeof msg);
}

void space_points_free(space_point *p, size_t n)
{
    for (size_t i = 0; p && i < n; i++) {
        free(p[i].values);
        free(p[i].reason);
    }
    free(p);
}

void space_counts_free(space_counts *c)
{
    free(c->by_value);
    free(c->by_template);
    free(c->by_space);
    memset(c, 0, sizeof *c);
}

void space_print_counts(FILE *f, const space_t *s, const space_counts *c)
{
    const template_t *t = &s->base.tpl;
    fprintf(f, "space of %s (template %s, %s): %llu points =", s->base.name, t->name, dtype_name(s->base.dtype),
            (unsigned long long)c->total);
    for (size_t i = 0; i < s->nfree; i++)
        fprintf(f, "%s %s[%zu]", i ? " x" : "", s->dims[i].name, s->dims[i].nvalues);
    if (s->nfree == 0)
        fprintf(f, " the base config alone");
    fprintf(f, "\n");
    for (size_t i = s->nfree; i < s->ndims; i++)
        fprintf(f, "  derived: %s = %s\n", s->dims[i].name, s->dims[i].expr);
    for (size_t i = 0; i < t->nparams; i++)
        if (c->by_value[i])
            fprintf(f, "  %10llu removed: %s outside its allowed values (%s)\n", (unsigned long long)c->by_value[i],
                    t->params[i].name, t->params[i].doc);
    for (size_t i = 0; i <= t->nconstraints; i++)
        if (c->by_template[i])
            fprintf(f, "  %10llu removed by template constraint %s%s%s\n", (unsigned long long)c->by_template[i],
                    i < t->nconstraints ? t->constraints[i].rule : "(an expression that cannot be evaluated)",
                    i < t->nconstraints ? ": " : "", i < t->nconstraints ? t->constraints[i].why : "");
    for (size_t i = 0; i < s->nrules; i++)
        if (c->by_space[i])
            fprintf(f, "  %10llu removed by space constraint %s%s%s\n", (unsigned long long)c->by_space[i],
                    s->rules[i].rule, s->rules[i].why[0] ? ": " : "", s->rules[i].why);
    if (c->by_expr)
        fprintf(f, "  %10llu removed: a derived dimension cannot be evaluated\n", (unsigned long long)c->by_expr);
    if (c->by_device)
        fprintf(f, "  %10llu removed by device limits (threads, shared memory, grid, or a refused shape)\n",
                (unsigned long long)c->by_device);
    fprintf(f, "  %10llu feasible\n", (unsigned long long)c->feasible);
}

char *space_point_string(const space_t *s, const int64_t *values)
{
    strbuf sb;
    sb_init(&sb);
    for (size_t i = 0; i < s->base.tpl.nparams; i++)
        sb_addf(&sb, "%s%s=%lld", i ? " " : "", s->base.tpl.params[i].name, (long long)values[i]);
    return sb_steal(&sb);
}

size_t space_neighbours(const space_t *s, uint64_t index, uint64_t *out, size_t max)
{
    size_t n = 0;
    uint64_t stride = 1;
    for (size_t i = s->nfree; i-- > 0;) {
        uint64_t k = s->dims[i].nvalues, digit = (index / stride) % k;
        if (digit > 0 && n < max)
            out[n++] = index - stride;
        if (digit + 1 < k && n < max)
            out[n++] = index + stride;
        stride *= k;
    }
    return n;
}
