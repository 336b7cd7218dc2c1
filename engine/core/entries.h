/* entries.h — the configs a command runs (entry_t: a file and its overrides) and how a config's
 * name is resolved to its file. The CONFIG arguments that name them (files, directories, @LIST
 * files) are expanded above core: engine/lab/configlist.h. */
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

void entries_free(entry_t *e, size_t n);

/* The file a config's name stands for, newly allocated in try_* memory (util.h; NULL when the host
 * has none): name taken relative to dir (NULL or ".": as given; an absolute name as it is) when
 * that exists; else, for a bare name (no '/'), the shipped config of that name ("warptile_db" or
 * "warptile_db.json" under the shipped configs) when there is one; else name relative to dir, so
 * that the error which follows names the file looked for. The one place a name is resolved: the
 * library's forced configs, and (configlist.h's entries_resolve) CONFIG arguments, @LIST lines
 * (dir: the list's), space files. */
char *entries_try_resolve(const char *dir, const char *name);

#endif
