/* template_rules.c — a template's "constraints" and "requires": rules written in its block and shared
 * sets named from RULES_FILE beside it. */
#define TEMPLATE_LOADER /* template_rules.h's loader part */
#include "template_rules.h"

#include "jsonloc.h"
#include "paths.h"
#include "util.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* Rules several templates share are written once, in rules.json beside them: an element of
 * "constraints" or "requires" that is a string names a set there, whose rules take its place. The
 * file is read by jsonrd as strictly as a template's block, and whole, so a broken set is refused
 * even where no template names it: an object of NAME: [{"rule", "why"}, ...]. */
#define RULES_FILE "rules.json"

/* Element i (value v) of the array at key of rd's top object, to read as the object KEY[i]: its
 * errors point into the element. */
static jsonrd_obj rule_at(const jsonrd *rd, const char *key, size_t i, json_t *v)
{
    const char *path[] = {key};
    size_t arr = 0, base = 0;
    if (jsonloc_offset(rd->text, 0, path, 1, false, &arr) || jsonloc_element(rd->text, arr, i, &base))
        base = 0;
    char name[96];
    snprintf(name, sizeof name, "%s[%zu]", key, i);
    return jsonrd_at(rd, v, base, name);
}

/* One rule, o an object: {"rule": an expression that must hold, "why": the reason given when it does
 * not}, and no other key. Appended to *out (NULL: only checked). */
static int read_rule(rules_loader *ld, const jsonrd_obj *o, tpl_rule **out, size_t *n, size_t *cap)
{
    static const char *const keys[] = {"rule", "why", NULL};
    const char *rule, *why;
    if (jsonrd_only(o, keys, "a rule") ||
        jsonrd_string(o, "rule", JSONRD_REQUIRED, "an expression that must hold", &rule) < 0 ||
        jsonrd_string(o, "why", JSONRD_REQUIRED, "the reason, said when the rule is broken", &why) < 0)
        return -1;
    if (!out)
        return 0;
    if (*n == *cap) {
        tpl_rule *grown = try_realloc(*out, 2 * (*cap ? *cap : 4) * sizeof **out);
        if (!grown)
            return no_memory(ld, "for the template's rules");
        *out = grown;
        *cap = 2 * (*cap ? *cap : 4);
    }
    tpl_rule *r = &(*out)[*n];
    r->why = NULL;
    if (!(r->rule = try_strdup(rule)) || !(r->why = try_strdup(why))) {
        free(r->rule);
        return no_memory(ld, "for a template rule's text");
    }
    (*n)++;
    return 0;
}

static jsonrd rules_reader(const rules_loader *ld)
{
    return (jsonrd){ld->rules_path, ld->rules_text, 1, 1, false, false, ld->rd.err};
}

/* RULES_FILE read and checked into ld->rules, for "KEY"[i] naming set `name`; errors in the file
 * are placed in it, a file that cannot be read is the template's. */
static int rules_open(rules_loader *ld, const char *key, size_t i, const char *name)
{
    if (ld->rules)
        return 0;
    const char *path[] = {key};
    size_t len = 0;
    if (!(ld->rules_path = try_path_join(ld->dir, RULES_FILE)))
        return no_memory(ld, "for the shared rules' path");
    ld->rules_text = try_read_file(ld->rules_path, &len);
    if (!ld->rules_text && errno == ENOMEM)
        return err_set(ld->rd.err, ERR_ALLOC, ld->rules_path, 0, 0, "no host memory to read the shared rules"), -1;
    if (!ld->rules_text)
        return load_fail(ld, path, 1, "\"%s\"[%zu] names the shared rule set \"%s\", but %s does not load: %s", key, i,
                         name, ld->rules_path, strerror(errno));
    jsonrd rd = rules_reader(ld);
    jsonrd_obj top;
    if (jsonrd_load(&rd, len, 0, "invalid JSON", &ld->rules) || jsonrd_top(&rd, ld->rules, RULES_FILE, &top))
        return -1;
    const char *set_name;
    json_t *set;
    json_object_foreach(ld->rules, set_name, set)
    {
        if (jsonrd_array(&top, set_name, 0, NULL, &set) < 0)
            return -1;
        for (size_t k = 0; k < json_array_size(set); k++) {
            jsonrd_obj o = rule_at(&rd, set_name, k, json_array_get(set, k));
            if (!json_is_object(o.obj))
                return jsonrd_fail(&o, NULL, false, "%s must be {\"rule\": \"...\", \"why\": \"...\"}, got %s", o.name,
                                   jsonloc_kind(o.obj));
            if (read_rule(ld, &o, NULL, NULL, NULL))
                return -1;
        }
    }
    return 0;
}

/* The rules of shared set `name` appended to out; 0, or -1 with err set. */
static int add_shared(rules_loader *ld, const char *key, size_t i, const char *name, tpl_rule **out, size_t *n, size_t *cap)
{
    const char *path[] = {key};
    if (rules_open(ld, key, i, name))
        return -1;
    json_t *set = json_object_get(ld->rules, name);
    if (!set)
        return load_fail(ld, path, 1, "\"%s\"[%zu]: %s has no rule set \"%s\" (an array of {\"rule\", \"why\"})", key, i,
                         ld->rules_path, name);
    jsonrd rd = rules_reader(ld);
    for (size_t k = 0; k < json_array_size(set); k++) {
        jsonrd_obj o = rule_at(&rd, name, k, json_array_get(set, k));
        if (read_rule(ld, &o, out, n, cap))
            return -1;
    }
    return 0;
}

int template_load_rules(rules_loader *ld, json_t *arr, const char *key, tpl_rule **out, size_t *n)
{
    const char *path[] = {key};
    if (!arr)
        return 0;
    if (!json_is_array(arr))
        return load_fail(ld, path, 1, "\"%s\" must be an array of {\"rule\", \"why\"} (or names of shared sets)", key);
    size_t cap = 0;
    *n = 0;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *r = json_array_get(arr, i);
        if (json_is_string(r)) {
            if (add_shared(ld, key, i, json_string_value(r), out, n, &cap))
                return -1;
            continue;
        }
        if (!json_is_object(r))
            return load_fail(ld, path, 1, "\"%s\"[%zu] must be {\"rule\": \"...\", \"why\": \"...\"} or a shared set's name",
                             key, i);
        jsonrd_obj o = rule_at(&ld->rd, key, i, r);
        if (read_rule(ld, &o, out, n, &cap))
            return -1;
    }
    return 0;
}
