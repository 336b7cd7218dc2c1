/* paths.h — where templates and shipped configs live at run time.
 *
 * Templates are read when a config is run, never compiled into the binary, so editing one needs no
 * rebuild. The same binary works from the source tree (build/engine next to kernels_src/) and when
 * installed (PREFIX/bin/engine next to PREFIX/share/engine/). */
#ifndef ENGINE_PATHS_H
#define ENGINE_PATHS_H

#include "err.h"

#include <stdbool.h>
#include <stddef.h>

/* Work out the directories once, from /proc/self/exe (argv0 as a fallback). Returns 0, or -1 with
 * err set (ERR_ALLOC) and no directory known when the host had no memory for their names: the
 * library's context creation reports ENGINE_ERROR_OUT_OF_MEMORY, the command exits 3. */
int paths_init(const char *argv0, err_t *err);
/* The same for a library: the directories next to file (libengine.so in build/ or PREFIX/lib finds
 * ../kernels_src or ../share/engine/kernels_src as the binary does). */
int paths_init_beside(const char *file, err_t *err);
void paths_free(void);

/* Template directories, searched in order: each entry of $ENGINE_TEMPLATES (colon-separated), then
 * <exe>/../kernels_src, then <exe>/../share/engine/kernels_src. */
size_t paths_template_dirs(const char *const **dirs);

/* Directory of the shipped configs (<exe>/../configs, or <exe>/../share/engine/configs), or NULL. */
const char *paths_configs_dir(void);

/* Directory of the shipped tuning spaces (<exe>/../tune, or <exe>/../share/engine/tune), or NULL. */
const char *paths_tune_dir(void);

/* This executable's path (workers are started from it). */
const char *paths_exe(void);
/* The wisdom directory: $ENGINE_WISDOM, else ../wisdom or ../share/engine/wisdom next to the
 * binary (wisdom.h). */
const char *paths_wisdom_dir(void);

/* The user's wisdom (written by --auto-tune, read before the shipped one): $XDG_DATA_HOME/engine/wisdom,
 * else $HOME/.local/share/engine/wisdom; newly allocated (try_* memory), NULL when neither variable
 * is set, or with *nomem true when the host had no memory for it. */
char *paths_user_wisdom_dir(bool *nomem);

/* Directory part of path ("." when there is none), newly allocated in try_* memory (util.h): NULL
 * when the host has no memory. */
char *try_path_dirname(const char *path);
/* Join dir and name unless name is absolute, newly allocated in try_* memory: NULL when the host
 * has no memory. */
char *try_path_join(const char *dir, const char *name);
/* The same two that stop the process instead (util.h's aborting family: engine/lab/xalloc.c, for
 * the lab's and the command's callers). */
char *path_dirname(const char *path);
char *path_join(const char *dir, const char *name);

#endif
