/* jsonrd.h — one strict reader for the JSON that core reads: configs, templates' parameter
 * blocks and the rule sets they share (kernels_src/rules.json), wisdom files.
 *
 * The rules live here once: a document is parsed rejecting duplicate keys; an object takes no key
 * but those it names (jsonrd_only: the unknown key and the keys allowed, in one line); a member of
 * the wrong type says which type was wanted and which was found ("\"name\" must be a string, got
 * an integer"); a missing required member says so at its object. Every error is an err_t (file,
 * line and column from jsonloc, the text naming the member's path, e.g. entries[3].set.BM), so the
 * readers keep only what is theirs: their keys, their ranges, their own sentences. */
#ifndef ENGINE_JSONRD_H
#define ENGINE_JSONRD_H

#include "err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One document being read. Stateless beyond what the caller owns: nothing to free. */
typedef struct {
    const char *file; /* errors name it */
    const char *text; /* the document, NUL-terminated: positions are found in it */
    int line, col;    /* where text starts in file: 1, 1 for a whole file */
    bool unplaced;    /* an error at the top value itself gives no line and column (configs) */
    bool at_keys;     /* errors point at a member's key, never its value (templates) */
    err_t *err;
} jsonrd;

/* An object being read: where it is, and how messages name it. */
typedef struct {
    const jsonrd *rd;
    json_t *obj;
    size_t base;         /* byte offset in rd->text of the value keys[] start from */
    const char *keys[4]; /* the object's path of keys from base */
    size_t depth;
    char name[96]; /* "" at the top (members are "\"key\""), else NAME (members NAME.key, errors "NAME: ...") */
} jsonrd_obj;

enum { JSONRD_REQUIRED = 1, JSONRD_NONEMPTY = 2 };

/* Parse len bytes of rd->text (JSON_REJECT_DUPLICATES | flags); on a syntax error "WHAT: text" at
 * its place and -1; ERR_ALLOC ("no host memory to parse the JSON") and -1 where jansson's malloc
 * failed, as far as that can be told (jsonrd.c). */
int jsonrd_load(const jsonrd *rd, size_t len, size_t flags, const char *what, json_t **root);

/* The top value as an object o; -1 with "WHAT must be a JSON object, got KIND" when it is not one. */
int jsonrd_top(const jsonrd *rd, json_t *root, const char *what, jsonrd_obj *o);
/* An object found by the caller: at byte offset base of the text (an array's element), named name. */
jsonrd_obj jsonrd_at(const jsonrd *rd, json_t *obj, size_t base, const char *name);
/* Member key of o (not checked: any value), named name (NULL: NAME.key as the getters say it). */
jsonrd_obj jsonrd_member(const jsonrd_obj *o, const char *key, json_t *v, const char *name);

/* An error at member key of o (NULL: o itself), at its key or its value; at the nearest enclosing
 * member that can be found when it cannot. Returns -1. */
int jsonrd_fail(const jsonrd_obj *o, const char *key, bool at_key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The same at the member reached by keys[0..depth) from the top. */
int jsonrd_fail_path(const jsonrd *rd, const char *const *keys, size_t depth, bool at_key, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* No keys but allowed (NULL-terminated): else "[NAME: ]unknown key \"K\" (WHAT has A, B, C)" and -1. */
int jsonrd_only(const jsonrd_obj *o, const char *const *allowed, const char *what);

/* The getters: 1 with *out set when the member is there, 0 when it is absent and may be, -1 with
 * the error set. Absent and JSONRD_REQUIRED: "[NAME: ]missing key \"K\"[ (hint)]" at o. */
int jsonrd_string(const jsonrd_obj *o, const char *key, unsigned flags, const char *hint, const char **out);
int jsonrd_number(const jsonrd_obj *o, const char *key, unsigned flags, const char *hint, double *out);
int jsonrd_bool(const jsonrd_obj *o, const char *key, unsigned flags, bool *out);
int jsonrd_array(const jsonrd_obj *o, const char *key, unsigned flags, const char *hint, json_t **out);
/* An integer from min to max. rule NULL: "FIELD must be an integer, got KIND" or "FIELD = V must be
 * from MIN to MAX"; else "FIELD must be RULE" for both (a rule that says the range itself). */
int jsonrd_int(const jsonrd_obj *o, const char *key, unsigned flags, int64_t min, int64_t max, const char *rule,
               int64_t *out);
/* An object, as child: "FIELD must be WHAT, got KIND" (WHAT NULL: "an object"). */
int jsonrd_object(const jsonrd_obj *o, const char *key, unsigned flags, const char *what, jsonrd_obj *child);

/* How messages name member key of o: "\"key\"" at the top, NAME.key below it. */
const char *jsonrd_field(const jsonrd_obj *o, const char *key, char *buf, size_t len);

#endif
