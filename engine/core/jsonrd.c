/* jsonrd.c — the strict JSON reader's rules, once (see jsonrd.h). */
#include "jsonrd.h"

#include "jsonloc.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

static int vfail(const jsonrd *rd, size_t base, const char *const *keys, size_t depth, bool at_key,
                 const char *fmt, va_list ap)
{
    size_t off = base;
    at_key = at_key || rd->at_keys;
    /* A member inside an array element has no path of keys: point at the deepest one that has. */
    while (depth && jsonloc_offset(rd->text, base, keys, depth, at_key, &off) != 0)
        depth--;
    int line = 0, col = 0;
    if (depth || !rd->unplaced || base) {
        if (!depth)
            jsonloc_offset(rd->text, base, NULL, 0, false, &off);
        jsonloc_position(rd->text, off, &line, &col);
        col = line == 1 ? rd->col + col - 1 : col;
        line = rd->line + line - 1;
    }
    err_vset(rd->err, ERR_INPUT, rd->file, line, col, fmt, ap);
    return -1;
}

int jsonrd_fail_path(const jsonrd *rd, const char *const *keys, size_t depth, bool at_key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(rd, 0, keys, depth, at_key, fmt, ap);
    va_end(ap);
    return -1;
}

int jsonrd_fail(const jsonrd_obj *o, const char *key, bool at_key, const char *fmt, ...)
{
    const char *keys[5];
    memcpy(keys, o->keys, o->depth * sizeof *keys);
    size_t depth = o->depth;
    if (key)
        keys[depth++] = key;
    va_list ap;
    va_start(ap, fmt);
    vfail(o->rd, o->base, keys, depth, at_key, fmt, ap);
    va_end(ap);
    return -1;
}

/* Whether two of jansson's errors are the same error at the same place. */
static bool same_error(const json_error_t *a, const json_error_t *b)
{
    return a->line == b->line && a->column == b->column && a->position == b->position && strcmp(a->text, b->text) == 0;
}

int jsonrd_load(const jsonrd *rd, size_t len, size_t flags, const char *what, json_t **root)
{
    json_error_t jerr;
    *root = json_loadb(rd->text, len, JSON_REJECT_DUPLICATES | flags, &jerr);
    if (*root)
        return 0;
    /* jansson gives NULL when its malloc does, but says so only at some sites (code out of memory);
     * at others it leaves no text, or reports the token it could not copy as a syntax error. A
     * syntax error is the same error at the same place when parsed again; a failed allocation
     * rarely is: parsed once more, a different error (or none) was the host's memory, and a library
     * call says ENGINE_ERROR_OUT_OF_MEMORY rather than send the caller to fix valid JSON. */
    bool nomem = json_error_code(&jerr) == json_error_out_of_memory || !jerr.text[0];
    if (!nomem) {
        json_error_t again;
        *root = json_loadb(rd->text, len, JSON_REJECT_DUPLICATES | flags, &again);
        if (*root)
            return 0; /* the memory is back */
        nomem = !same_error(&jerr, &again);
    }
    if (nomem)
        return err_set(rd->err, ERR_ALLOC, rd->file, 0, 0, "no host memory to parse the JSON (%zu bytes)", len), -1;
    int line = jerr.line > 0 ? jerr.line : 0, col = jerr.column > 0 ? jerr.column : 0;
    if (line) {
        col = line == 1 && col ? rd->col + col - 1 : col;
        line = rd->line + line - 1;
    }
    err_set(rd->err, ERR_INPUT, rd->file, line, col, "%s: %s", what, jerr.text);
    return -1;
}

jsonrd_obj jsonrd_at(const jsonrd *rd, json_t *obj, size_t base, const char *name)
{
    jsonrd_obj o;
    memset(&o, 0, sizeof o);
    o.rd = rd;
    o.obj = obj;
    o.base = base;
    snprintf(o.name, sizeof o.name, "%s", name);
    return o;
}

int jsonrd_top(const jsonrd *rd, json_t *root, const char *what, jsonrd_obj *o)
{
    *o = jsonrd_at(rd, root, 0, "");
    if (!json_is_object(root))
        return jsonrd_fail(o, NULL, false, "%s must be a JSON object, got %s", what, jsonloc_kind(root));
    return 0;
}

jsonrd_obj jsonrd_member(const jsonrd_obj *o, const char *key, json_t *v, const char *name)
{
    jsonrd_obj c = *o;
    c.obj = v;
    if (c.depth < sizeof c.keys / sizeof c.keys[0])
        c.keys[c.depth++] = key;
    /* NAME.key, cut at sizeof c.name (still a name to read). */
    const char *parts[] = {name ? name : o->name, name || !o->name[0] ? "" : ".", name ? "" : key};
    size_t n = 0;
    for (int i = 0; i < 3; i++)
        for (const char *p = parts[i]; *p && n + 1 < sizeof c.name; p++)
            c.name[n++] = *p;
    c.name[n] = '\0';
    return c;
}

const char *jsonrd_field(const jsonrd_obj *o, const char *key, char *buf, size_t len)
{
    if (o->name[0])
        snprintf(buf, len, "%s.%s", o->name, key);
    else
        snprintf(buf, len, "\"%s\"", key);
    return buf;
}

int jsonrd_only(const jsonrd_obj *o, const char *const *allowed, const char *what)
{
    const char *key;
    json_t *v;
    json_object_foreach(o->obj, key, v)
    {
        if (str_in_list(allowed, key))
            continue;
        /* The list on the stack, not in memory that could fail: the message is at most an err_t's
         * text anyway. */
        char list[ERR_TEXT_LEN];
        size_t at = 0;
        list[0] = '\0';
        for (const char *const *a = allowed; *a && at < sizeof list; a++) {
            int n = snprintf(list + at, sizeof list - at, "%s%s", a == allowed ? "" : ", ", *a);
            at += n > 0 ? (size_t)n : 0;
        }
        return jsonrd_fail(o, key, true, "%s%sunknown key \"%s\" (%s has %s)", o->name, o->name[0] ? ": " : "", key,
                           what, list);
    }
    return 0;
}

/* Member key of o into *v: 1 there, 0 absent and optional, -1 absent and required. */
static int member(const jsonrd_obj *o, const char *key, unsigned flags, const char *hint, json_t **v)
{
    *v = json_object_get(o->obj, key);
    if (*v)
        return 1;
    if (!(flags & JSONRD_REQUIRED))
        return 0;
    return jsonrd_fail(o, NULL, false, "%s%smissing key \"%s\"%s%s%s", o->name, o->name[0] ? ": " : "", key,
                       hint ? " (" : "", hint ? hint : "", hint ? ")" : "");
}

/* "FIELD must be WANT, got KIND" at member key's value. */
static int wrong_type(const jsonrd_obj *o, const char *key, const char *want, const json_t *v)
{
    char f[256];
    return jsonrd_fail(o, key, false, "%s must be %s, got %s", jsonrd_field(o, key, f, sizeof f), want,
                       jsonloc_kind(v));
}

/* Member key of o, of one of types (bits 1 << JSON_*), into *v: as member, or -1 naming want. */
static int typed(const jsonrd_obj *o, const char *key, unsigned flags, const char *hint, unsigned types,
                 const char *want, json_t **v)
{
    int rc = member(o, key, flags, hint, v);
    if (rc > 0 && !(types & (1u << json_typeof(*v))))
        return wrong_type(o, key, want, *v);
    return rc;
}

int jsonrd_string(const jsonrd_obj *o, const char *key, unsigned flags, const char *hint, const char **out)
{
    json_t *v;
    int rc = typed(o, key, flags, hint, 1u << JSON_STRING, "a string", &v);
    char f[256];
    if (rc > 0 && (flags & JSONRD_NONEMPTY) && json_string_length(v) == 0)
        return jsonrd_fail(o, key, false, "%s must not be empty", jsonrd_field(o, key, f, sizeof f));
    if (rc > 0)
        *out = json_string_value(v);
    return rc;
}

int jsonrd_number(const jsonrd_obj *o, const char *key, unsigned flags, const char *hint, double *out)
{
    json_t *v;
    int rc = typed(o, key, flags, hint, 1u << JSON_INTEGER | 1u << JSON_REAL, "a number", &v);
    if (rc > 0)
        *out = json_number_value(v);
    return rc;
}

int jsonrd_bool(const jsonrd_obj *o, const char *key, unsigned flags, bool *out)
{
    json_t *v;
    int rc = typed(o, key, flags, NULL, 1u << JSON_TRUE | 1u << JSON_FALSE, "true or false", &v);
    if (rc > 0)
        *out = json_is_true(v);
    return rc;
}

int jsonrd_array(const jsonrd_obj *o, const char *key, unsigned flags, const char *hint, json_t **out)
{
    return typed(o, key, flags, hint, 1u << JSON_ARRAY, "an array", out);
}

int jsonrd_int(const jsonrd_obj *o, const char *key, unsigned flags, int64_t min, int64_t max, const char *rule,
               int64_t *out)
{
    json_t *v;
    int rc = member(o, key, flags, NULL, &v);
    if (rc <= 0)
        return rc;
    bool is_int = json_is_integer(v);
    int64_t x = is_int ? (int64_t)json_integer_value(v) : 0;
    if (is_int && x >= min && x <= max) {
        *out = x;
        return 1;
    }
    char f[256];
    jsonrd_field(o, key, f, sizeof f);
    if (rule)
        return jsonrd_fail(o, key, false, "%s must be %s", f, rule);
    if (!is_int)
        return wrong_type(o, key, "an integer", v);
    return jsonrd_fail(o, key, false, "%s = %lld must be from %lld to %lld", f, (long long)x, (long long)min,
                       (long long)max);
}

int jsonrd_object(const jsonrd_obj *o, const char *key, unsigned flags, const char *what, jsonrd_obj *child)
{
    json_t *v;
    int rc = typed(o, key, flags, NULL, 1u << JSON_OBJECT, what ? what : "an object", &v);
    if (rc > 0)
        *child = jsonrd_member(o, key, v, NULL);
    return rc;
}
