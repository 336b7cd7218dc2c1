/* entries.c — see entries.h. */
#define _GNU_SOURCE
#include "entries.h"

#include "paths.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void entries_free(entry_t *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(e[i].path);
        for (size_t j = 0; j < e[i].nsets; j++)
            free(e[i].sets[j]);
        free(e[i].sets);
        free(e[i].list);
    }
    free(e);
}

char *entries_try_resolve(const char *dir, const char *name)
{
    char *p = try_path_join(dir, name);
    struct stat st;
    if (!p || stat(p, &st) == 0 || strchr(name, '/') || !paths_configs_dir())
        return p;
    const char *dot = strrchr(name, '.'), *ext = dot && strcmp(dot, ".json") == 0 ? "" : ".json";
    char *shipped = try_asprintf("%s/%s%s", paths_configs_dir(), name, ext);
    if (!shipped) {
        free(p);
        return NULL;
    }
    if (stat(shipped, &st) == 0) {
        free(p);
        return shipped;
    }
    free(shipped);
    return p;
}
