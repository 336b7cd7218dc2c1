/* entries.h — CONFIG arguments and the configs they name: a file, a shipped config's name, a
 * directory (its .json files, in name order) or an @LIST file (one config a line, each with
 * overrides of its own: "warptile_db BM=64 BN=128"; '#' starts a comment). */
#ifndef ENGINE_ENTRIES_H
#define ENGINE_ENTRIES_H

#include "err.h"

#include <stddef.h>

/* A config as named on the command line: the file, and the overrides its @LIST line gave it
 * (they take precedence over the command line's --set). */
typedef struct {
    char *path;
    char **sets; /* "KEY=VALUE", owned */
    size_t nsets;
    char *list; /* the @LIST file whose line named it, owned; NULL: the command line */
    int line;   /* that line, 1-based: its errors name LIST:LINE, where the fix is made */
} entry_t;

/* Expand one CONFIG argument into entries, appended to *entries (*n of them). 0, or EXIT_INPUT
 * with err set (a list that cannot be read, a directory without configs, lists nested too deep). */
int entries_expand(const char *arg, entry_t **entries, size_t *n, err_t *err);
void entries_free(entry_t *e, size_t n);

/* The file a config's name stands for, newly allocated: name taken relative to dir (NULL or ".": as
 * given; an absolute name as it is) when that exists; else, for a bare name (no '/'), the shipped
 * config of that name ("warptile_db" or "warptile_db.json" under the shipped configs) when there is
 * one; else name relative to dir, so that the error which follows names the file looked for. The
 * one place a name is resolved: CONFIG arguments, @LIST lines (dir: the list's), space files. */
char *entries_resolve(const char *dir, const char *name);
/* The same in try_* memory (util.h), for the library: NULL when the host has none. */
char *entries_try_resolve(const char *dir, const char *name);

#endif
