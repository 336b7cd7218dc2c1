/* configlist.h — CONFIG arguments and the configs they name: a file, a shipped config's name, a
 * directory (its .json files, in name order) or an @LIST file (one config a line, each with
 * overrides of its own: "warptile_db BM=64 BN=128"; '#' starts a comment). The command's and the
 * lab's: they stop when the host has no memory (xoom), where core's entries.h hands it back. */
#ifndef ENGINE_CONFIGLIST_H
#define ENGINE_CONFIGLIST_H

#include "entries.h"
#include "err.h"

#include <stddef.h>

/* Expand one CONFIG argument into entries, appended to *entries (*n of them). 0, or EXIT_INPUT
 * with err set (a list that cannot be read, a directory without configs, lists nested too deep). */
int entries_expand(const char *arg, entry_t **entries, size_t *n, err_t *err);

/* entries_try_resolve (entries.h), stopping the process where the host had no memory for it. */
char *entries_resolve(const char *dir, const char *name);

#endif
