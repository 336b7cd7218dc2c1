/* config.c — strict loading and validation of tile configs. */
#include "config.h"

#include "accuracy.h"

#include "arch.h"
#include "expr.h"
#include "jsonrd.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char *const k_keys[] = {"name", "template", "dtype", "params", "description", "accuracy", NULL};

int param_set_parse_at(const char *text, const char *file, int line, param_set *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    /* Where the override was written: the @LIST line, else the command line's option. */
    const char *src = file ? file : "--set";
    line = file ? line : 0;
    const char *eq = strchr(text, '=');
    if (!eq || eq == text)
        return err_set(err, ERR_INPUT, src, line, 0, "\"%s\" must look like KEY=VALUE, e.g. BM=128", text);
    for (const char *p = text; p < eq; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_'))
            return err_set(err, ERR_INPUT, src, line, 0, "\"%s\": KEY must be a parameter name (letters, digits, _)",
                           text);
    int64_t v;
    if (parse_i64(eq + 1, &v))
        return err_set(err, ERR_INPUT, src, line, 0, "\"%s\": VALUE must be a whole number", text);
    out->text = try_strdup(text);
    out->key = try_strdup(text);
    if (!out->text || !out->key) {
        param_set_free(out);
        return err_set(err, ERR_ALLOC, src, line, 0, "no host memory for the override \"%s\"", text);
    }
    out->key[eq - text] = '\0';
    out->value = v;
    out->file = file;
    out->line = line;
    return 0;
}

int param_set_parse(const char *text, param_set *out, err_t *err)
{
    return param_set_parse_at(text, NULL, 0, out, err);
}

/* An error caused by override s of the config at path: "PATH (--set KEY=VALUE): text" for the
 * command line's, "FILE:LINE: PATH (KEY=VALUE): text" for an @LIST line's (s NULL: not known). */
static int fail_set(err_t *err, const char *path, const param_set *s, const char *text)
{
    if (s && s->file)
        return err_set(err, ERR_INPUT, s->file, s->line, 0, "%s (%s): %s", path, s->text, text);
    char src[ERR_SOURCE_LEN];
    snprintf(src, sizeof src, "%s (--set %s)", path, s ? s->text : "?");
    return err_set(err, ERR_INPUT, src, 0, 0, "%s", text);
}

void param_set_free(param_set *s)
{
    free(s->text);
    free(s->key);
    memset(s, 0, sizeof *s);
}

/* The config's file as a JSON document: an error at its top has no position. */
static jsonrd reader(const config_t *cfg, err_t *err)
{
    return (jsonrd){cfg->path, cfg->text, 1, 1, true, false, err};
}

/* fmt appended to the NUL-terminated buf of len bytes, cut where it is full: the lists in messages,
 * no longer than a message (ERR_TEXT_LEN) and built without memory that could run out. */
static void buf_addf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void buf_addf(char *buf, size_t len, const char *fmt, ...)
{
    size_t at = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + at, len - at, fmt, ap);
    va_end(ap);
}

static void list_params(const template_t *t, char *buf, size_t len)
{
    buf[0] = '\0';
    for (size_t i = 0; i < t->nparams; i++)
        buf_addf(buf, len, "%s%s", i ? ", " : "", t->params[i].name);
}

/* Where a message about param i should point: its value in the file, or where it was overridden. */
typedef struct {
    const config_t *cfg;
    err_t *err;
    const param_set *sets;
    size_t nsets;
} ctx_t;

static int fail_param(ctx_t *c, int idx, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_param(ctx_t *c, int idx, const char *fmt, ...)
{
    const config_t *cfg = c->cfg;
    char text[ERR_TEXT_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (idx >= 0 && cfg->origin[idx] == FROM_SET) {
        const param_set *s = NULL;
        for (size_t i = 0; i < c->nsets; i++)
            if (strcmp(c->sets[i].key, cfg->tpl.params[idx].name) == 0)
                s = &c->sets[i];
        return fail_set(c->err, cfg->path, s, text), -1;
    }
    jsonrd rd = reader(cfg, c->err);
    if (idx >= 0 && cfg->origin[idx] == FROM_FILE) {
        const char *path[] = {"params", cfg->tpl.params[idx].name};
        return jsonrd_fail_path(&rd, path, 2, false, "%s", text);
    }
    const char *path[] = {"params"};
    return jsonrd_fail_path(&rd, path, 1, true, "%s", text);
}

static void values_list(const int64_t *v, size_t n, char *buf, size_t len)
{
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++)
        buf_addf(buf, len, "%s%lld", i ? (i + 1 == n ? " or " : ", ") : "", (long long)v[i]);
}

/* The message for a parameter outside its allowed values or range. */
static int value_error(ctx_t *c, int i)
{
    const tpl_param *p = &c->cfg->tpl.params[i];
    int64_t v = c->cfg->values[i];
    if (p->nvalues) {
        bool ok = false;
        for (size_t j = 0; j < p->nvalues; j++)
            ok = ok || p->values[j] == v;
        if (!ok) {
            char list[ERR_TEXT_LEN];
            values_list(p->values, p->nvalues, list, sizeof list);
            return fail_param(c, i, "params.%s = %lld must be %s (%s)", p->name, (long long)v, list, p->doc);
        }
    }
    if (p->has_min && v < p->min)
        return fail_param(c, i, "params.%s = %lld must be at least %lld (%s)", p->name, (long long)v,
                          (long long)p->min, p->doc);
    return fail_param(c, i, "params.%s = %lld must be at most %lld (%s)", p->name, (long long)v, (long long)p->max,
                      p->doc);
}

/* Collects the params a rule mentions, in order, without duplicates. */
typedef struct {
    const template_t *t;
    int idx[16];
    int n;
} mention;

static void on_ident(void *ctx, const char *name, size_t len)
{
    mention *m = ctx;
    for (size_t i = 0; i < m->t->nparams; i++) {
        if (strlen(m->t->params[i].name) != len || strncmp(m->t->params[i].name, name, len) != 0)
            continue;
        for (int j = 0; j < m->n; j++)
            if (m->idx[j] == (int)i)
                return;
        if (m->n < 16)
            m->idx[m->n++] = (int)i;
    }
}

/* "A % B == 0" with A and B plain names: the one rule common enough to deserve its own wording. */
static bool divides_form(const char *rule, char *a, char *b, size_t len)
{
    char x[64], y[64], tail[8];
    int n = 0;
    if (sscanf(rule, " %63[A-Za-z0-9_] %% %63[A-Za-z0-9_] == 0 %n%7s", x, y, &n, tail) < 2)
        return false;
    if (rule[n] != '\0' || isdigit((unsigned char)x[0]) || isdigit((unsigned char)y[0]))
        return false;
    snprintf(a, len, "%s", x);
    snprintf(b, len, "%s", y);
    return true;
}

static int check_rules(ctx_t *c, int arch)
{
    const config_t *cfg = c->cfg;
    const template_t *t = &cfg->tpl;
    int i = -1;
    char msg[512];
    switch (template_check(t, cfg->values, cfg->dtype, arch, &i, msg, sizeof msg)) {
    case TPL_OK: return 0;
    case TPL_BAD_VALUE: return value_error(c, i);
    case TPL_BAD_CONSTRAINT: break;
    default: return err_set(c->err, ERR_INPUT, t->path, 0, 0, "constraint: %s", msg), -1;
    }
    const tpl_rule *r = &t->constraints[i];
    mention m = {t, {0}, 0};
    expr_idents(r->rule, on_ident, &m);
    /* Point at what the user changed last: the first mentioned param given by --set, else the
     * first the file sets, else the first mentioned at all. */
    int at = m.n ? m.idx[0] : -1;
    for (param_origin want = FROM_FILE; want <= FROM_SET; want++)
        for (int j = m.n - 1; j >= 0; j--)
            if (cfg->origin[m.idx[j]] == want)
                at = m.idx[j];
    char a[64], b[64];
    int ia, ib;
    if (divides_form(r->rule, a, b, sizeof a) && (ia = template_param_index(t, a)) >= 0 &&
        (ib = template_param_index(t, b)) >= 0) {
        int where = cfg->origin[ib] == FROM_SET ? ib : cfg->origin[ia] == FROM_SET ? ia
                    : cfg->origin[ib] != FROM_DEFAULT ? ib : cfg->origin[ia] != FROM_DEFAULT ? ia : ib;
        return fail_param(c, where, "params.%s = %lld does not divide params.%s = %lld: %s", b,
                          (long long)cfg->values[ib], a, (long long)cfg->values[ia], r->why);
    }
    char list[ERR_TEXT_LEN] = "";
    for (int j = 0; j < m.n; j++)
        buf_addf(list, sizeof list, "%s%s = %lld", j ? ", " : "", t->params[m.idx[j]].name,
                 (long long)cfg->values[m.idx[j]]);
    /* When the target architecture is part of the rule, say which one: the fix may be --arch. */
    if (strstr(r->rule, "ARCH"))
        buf_addf(list, sizeof list, "%starget %s", m.n ? ", " : "", arch_name(arch, (char[16]){0}, 16));
    return fail_param(c, at, "params break \"%s\" (%s): %s", r->rule, list, r->why);
}

static int parse(const char *path, const char *text, size_t len, const param_set *sets, size_t nsets,
                 const char *dtype_override, int arch, bool guessed, config_t *cfg, err_t *err);

/* The host had no memory for what the config holds: ERR_ALLOC, first error winning. */
static void no_memory(err_t *err, const config_t *cfg, const char *what)
{
    err_set(err, ERR_ALLOC, cfg->path, 0, 0, "no host memory %s", what);
}

int config_load(const char *path, const param_set *sets, size_t nsets, const char *dtype_override,
                int arch, config_t *cfg, err_t *err)
{
    return config_load_guess(path, sets, nsets, dtype_override, arch, false, cfg, err);
}

int config_load_guess(const char *path, const param_set *sets, size_t nsets, const char *dtype_override, int arch,
                      bool guessed, config_t *cfg, err_t *err)
{
    size_t len = 0;
    char *text = try_read_file(path, &len);
    if (!text) {
        memset(cfg, 0, sizeof *cfg);
        if (errno == ENOMEM)
            return err_set(err, ERR_ALLOC, path, 0, 0, "no host memory to read the config"), -1;
        return err_set(err, ERR_INPUT, path, 0, 0, "cannot read config: %s", strerror(errno)), -1;
    }
    int rc = parse(path, text, len, sets, nsets, dtype_override, arch, guessed, cfg, err);
    free(text);
    return rc;
}

int config_parse(const char *path, const char *text, size_t len, const param_set *sets, size_t nsets,
                 const char *dtype_override, int arch, config_t *cfg, err_t *err)
{
    return parse(path, text, len, sets, nsets, dtype_override, arch, false, cfg, err);
}

int config_parse_guess(const char *path, const char *text, size_t len, const param_set *sets, size_t nsets,
                       const char *dtype_override, int arch, bool guessed, config_t *cfg, err_t *err)
{
    return parse(path, text, len, sets, nsets, dtype_override, arch, guessed, cfg, err);
}

static int parse(const char *path, const char *text, size_t len, const param_set *sets, size_t nsets,
                 const char *dtype_override, int arch, bool guessed, config_t *cfg, err_t *err)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->path = try_strdup(path);
    /* Exactly len bytes: a NUL inside is for the JSON parser to refuse, not to cut the text. */
    cfg->text = try_malloc(len + 1);
    if (!cfg->path || !cfg->text) {
        config_free(cfg);
        return err_set(err, ERR_ALLOC, path, 0, 0, "no host memory for the config's text"), -1;
    }
    memcpy(cfg->text, text, len);
    cfg->text[len] = '\0';
    jsonrd rd = reader(cfg, err);
    json_t *root;
    if (jsonrd_load(&rd, len, 0, "invalid JSON", &root)) {
        config_free(cfg);
        return -1;
    }
    int rc = -1;
    ctx_t c = {cfg, err, sets, nsets};
    jsonrd_obj top, params = {.obj = NULL};
    const char *name, *tname, *dtype = NULL, *description = "", *accuracy = NULL;
    if (jsonrd_top(&rd, root, "a config", &top) || jsonrd_only(&top, k_keys, "a config") ||
        jsonrd_string(&top, "name", JSONRD_REQUIRED | JSONRD_NONEMPTY, NULL, &name) < 0 ||
        jsonrd_string(&top, "template", JSONRD_REQUIRED | JSONRD_NONEMPTY, NULL, &tname) < 0 ||
        jsonrd_string(&top, "dtype", 0, NULL, &dtype) < 0 ||
        jsonrd_string(&top, "description", 0, NULL, &description) < 0 ||
        jsonrd_string(&top, "accuracy", 0, NULL, &accuracy) < 0)
        goto out;
    if (!(cfg->name = try_strdup(name)) || !(cfg->description = try_strdup(description))) {
        no_memory(err, cfg, "for the config's name");
        goto out;
    }
    acc_kind acc_given = ACC_NATIVE;
    if (accuracy && acc_kind_parse(accuracy, &acc_given)) {
        jsonrd_fail(&top, "accuracy", false, "\"accuracy\" must be \"f32\", \"f64\" or \"tf32\", got \"%s\"", accuracy);
        goto out;
    }
    const char *dsel = dtype_override ? dtype_override : dtype ? dtype : "f32";
    if (dtype_parse(dsel, &cfg->dtype)) {
        if (dtype_override)
            err_set(err, ERR_INPUT, "--dtype", 0, 0, "\"%s\" must be " DTYPE_LIST, dsel);
        else
            jsonrd_fail(&top, "dtype", false, "\"dtype\" must be \"f32\", \"f64\", \"bf16\" or \"f16\", got \"%s\"", dsel);
        goto out;
    }
    err_t terr;
    err_clear(&terr);
    if (template_load(tname, &cfg->tpl, &terr)) {
        if (terr.source[0] || terr.cause == ERR_ALLOC)
            *err = err_isset(err) ? *err : terr; /* the template file itself is broken */
        else
            jsonrd_fail(&top, "template", false, "%s", terr.text);
        goto out;
    }
    const template_t *t = &cfg->tpl;
    if (!t->dtypes[cfg->dtype]) {
        if (dtype_override)
            err_set(err, ERR_INPUT, cfg->path, 0, 0, "--dtype %s: template %s does not support %s",
                    dtype_name(cfg->dtype), t->name, dtype_name(cfg->dtype));
        else
            jsonrd_fail(&top, dtype ? "dtype" : NULL, false, "template %s does not support dtype %s", t->name,
                        dtype_name(cfg->dtype));
        goto out;
    }

    /* The accuracy class: the config's, else the template's; TF32 rounding only exists for f32. */
    cfg->accuracy = accuracy ? acc_given : (acc_kind)t->accuracy;
    if (cfg->accuracy == ACC_TF32 && cfg->dtype != DTYPE_F32) {
        jsonrd_fail(&top, accuracy ? "accuracy" : NULL, false, "accuracy class tf32 is for f32 kernels, not %s",
                    dtype_name(cfg->dtype));
        goto out;
    }
    cfg->values = try_calloc(t->nparams, sizeof *cfg->values);
    cfg->origin = try_calloc(t->nparams, sizeof *cfg->origin);
    if (!cfg->values || !cfg->origin) {
        no_memory(err, cfg, "for the config's values");
        goto out;
    }
    for (size_t i = 0; i < t->nparams; i++)
        cfg->values[i] = t->params[i].def;

    if (jsonrd_object(&top, "params", 0, NULL, &params) < 0)
        goto out;
    const char *key;
    json_t *v;
    json_object_foreach(params.obj, key, v)
    {
        int idx = template_param_index(t, key);
        if (idx < 0) {
            char list[ERR_TEXT_LEN];
            list_params(t, list, sizeof list);
            jsonrd_fail(&params, key, true, "params.%s: template %s has no parameter \"%s\" (it takes %s)", key,
                        t->name, key, list);
            goto out;
        }
        if (jsonrd_int(&params, key, 0, INT64_MIN, INT64_MAX, NULL, &cfg->values[idx]) < 0)
            goto out;
        cfg->origin[idx] = FROM_FILE;
    }
    strbuf ov;
    sb_try_init(&ov);
    for (size_t i = 0; i < nsets; i++) {
        int idx = template_param_index(t, sets[i].key);
        if (idx < 0) {
            char list[ERR_TEXT_LEN], text[ERR_TEXT_LEN] = "";
            list_params(t, list, sizeof list);
            buf_addf(text, sizeof text, "template %s has no parameter \"%s\" (it takes %s)", t->name, sets[i].key,
                     list);
            fail_set(err, cfg->path, &sets[i], text);
            sb_free(&ov);
            goto out;
        }
        cfg->values[idx] = sets[i].value;
        cfg->origin[idx] = FROM_SET;
        sb_addf(&ov, "%s--set %s", ov.len ? " " : "", sets[i].text);
    }
    if (!(cfg->overrides = sb_steal(&ov))) {
        no_memory(err, cfg, "for the config's overrides");
        goto out;
    }
    if (nsets) {
        /* Rows of a sweep must tell the variants apart: name[KEY=VALUE,...]. */
        strbuf lb;
        sb_try_init(&lb);
        sb_addf(&lb, "%s[", cfg->name);
        for (size_t i = 0; i < nsets; i++)
            sb_addf(&lb, "%s%s", i ? "," : "", sets[i].text);
        sb_add(&lb, "]");
        cfg->label = sb_steal(&lb);
    } else {
        cfg->label = try_strdup(cfg->name);
    }
    if (!cfg->label) {
        no_memory(err, cfg, "for the config's label");
        goto out;
    }
    for (size_t i = 0; i < t->nparams; i++) {
        if (cfg->origin[i] == FROM_DEFAULT && !t->params[i].has_default) {
            jsonrd_fail(params.obj ? &params : &top, NULL, true, "params.%s is missing: template %s needs it (%s)",
                        t->params[i].name, t->name, t->params[i].doc);
            goto out;
        }
    }
    arch = arch_for_template(arch, guessed, t->arch_specific);
    cfg->arch = arch;
    if (check_rules(&c, arch))
        goto out;
    char msg[512];
    if (template_compile_cost(t, cfg->values, cfg->dtype, arch, &cfg->compile_cost, msg, sizeof msg)) {
        err_set(err, ERR_INPUT, t->path, 0, 0, "compile_cost: %s", msg);
        goto out;
    }
    rc = 0;
out:
    json_decref(root);
    if (rc)
        config_free(cfg);
    return rc;
}

void config_free(config_t *cfg)
{
    free(cfg->path);
    free(cfg->text);
    free(cfg->name);
    free(cfg->description);
    free(cfg->values);
    free(cfg->origin);
    free(cfg->overrides);
    free(cfg->label);
    template_free(&cfg->tpl);
    memset(cfg, 0, sizeof *cfg);
}

char *config_params_try(const config_t *cfg)
{
    strbuf sb;
    sb_try_init(&sb);
    for (size_t i = 0; i < cfg->tpl.nparams; i++)
        sb_addf(&sb, "%s%s=%lld", i ? " " : "", cfg->tpl.params[i].name, (long long)cfg->values[i]);
    return sb_steal(&sb);
}

plan_req config_plan_req(const config_t *cfg, const plan_target *to)
{
    return (plan_req){.tpl = &cfg->tpl,
                      .label = cfg->path,
                      .config_name = cfg->name,
                      .values = cfg->values,
                      .dtype = cfg->dtype,
                      .to = *to};
}
