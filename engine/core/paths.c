/* paths.c — see paths.h. */
#define _DEFAULT_SOURCE
#include "paths.h"

#include "util.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *g_dirs[16];
static size_t g_ndirs;
static char *g_configs;
static char *g_exe;
static char *g_tune;
static char *g_wisdom;


char *try_path_join(const char *dir, const char *name)
{
    if (name[0] == '/' || !dir || !*dir || strcmp(dir, ".") == 0)
        return try_strdup(name);
    return try_asprintf("%s/%s", dir, name);
}

char *try_path_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *d = try_strdup(!slash ? "." : slash == path ? "/" : path);
    if (d && slash && slash != path)
        d[slash - path] = '\0';
    return d;
}

/* dir/rel, resolved when it exists; NULL when the host had no memory for it. */
static char *canonical(const char *dir, const char *rel)
{
    char *joined = try_asprintf("%s/%s", dir, rel), resolved[PATH_MAX];
    if (joined && realpath(joined, resolved)) {
        free(joined);
        return try_strdup(resolved);
    }
    return joined;
}

/* Keep d (taken over) as a template directory when it is one; false when d is NULL, a name the host
 * had no memory for. */
static bool add_dir(char *d)
{
    if (!d)
        return false;
    if (g_ndirs < sizeof g_dirs / sizeof g_dirs[0] && is_dir(d))
        g_dirs[g_ndirs++] = d;
    else
        free(d);
    return true;
}

/* The first of exe_dir/first and exe_dir/second that is a directory, canonical, in *out (NULL when
 * neither is); -1 when the host had no memory for a name. */
static int first_dir(const char *exe_dir, const char *first, const char *second, char **out)
{
    const char *rel[] = {first, second};
    *out = NULL;
    for (size_t i = 0; i < 2; i++) {
        char *d = canonical(exe_dir, rel[i]);
        if (!d)
            return -1;
        if (is_dir(d)) {
            *out = d;
            return 0;
        }
        free(d);
    }
    return 0;
}

static int init_from(char *exe_dir);

/* The end of paths_init and paths_init_beside: with no memory for a name, none of the paths is kept
 * (a half-set table would find templates in some directories and not others) and err says so. */
static int init_done(int rc, err_t *err)
{
    if (rc == 0)
        return 0;
    paths_free();
    err_set(err, ERR_ALLOC, "engine", 0, 0,
            "no host memory for the names of the template, config and wisdom directories");
    return -1;
}

int paths_init(const char *argv0, err_t *err)
{
    paths_free();
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *exe_dir = NULL;
    if (n > 0) {
        exe[n] = '\0';
        g_exe = try_strdup(exe);
        exe_dir = g_exe ? try_path_dirname(exe) : NULL;
    } else {
        exe_dir = try_path_dirname(argv0 ? argv0 : ".");
    }
    return init_done(init_from(exe_dir), err);
}

int paths_init_beside(const char *file, err_t *err)
{
    paths_free();
    return init_done(init_from(try_path_dirname(file)), err);
}

/* Everything but the executable's path, from the directory it lies in (taken over; NULL: the host
 * had no memory for it). 0, or -1 when the host had no memory for a name. */
static int init_from(char *exe_dir)
{
    int rc = -1;
    if (!exe_dir)
        return -1;
    const char *env = getenv("ENGINE_TEMPLATES");
    if (env && *env) {
        char *copy = try_strdup(env), *save = NULL;
        if (!copy)
            goto out;
        bool ok = true;
        for (char *tok = strtok_r(copy, ":", &save); tok && ok; tok = strtok_r(NULL, ":", &save))
            ok = add_dir(try_strdup(tok));
        free(copy);
        if (!ok)
            goto out;
    }
    /* Canonical paths: messages that list them should not read build/../kernels_src. */
    const char *rel[] = {"../kernels_src", "../share/engine/kernels_src"};
    for (size_t i = 0; i < 2; i++)
        if (!add_dir(canonical(exe_dir, rel[i])))
            goto out;
    if (first_dir(exe_dir, "../configs", "../share/engine/configs", &g_configs) != 0 ||
        first_dir(exe_dir, "../tune", "../share/engine/tune", &g_tune) != 0)
        goto out;
    /* Wisdom: $ENGINE_WISDOM, else next to the binary as the configs are (it need not exist). */
    const char *w = getenv("ENGINE_WISDOM");
    if (w && *w)
        g_wisdom = try_strdup(w);
    else if (first_dir(exe_dir, "../wisdom", "../share/engine/wisdom", &g_wisdom) == 0 && !g_wisdom)
        g_wisdom = canonical(exe_dir, "../wisdom");
    rc = g_wisdom ? 0 : -1;
out:
    free(exe_dir);
    return rc;
}

void paths_free(void)
{
    for (size_t i = 0; i < g_ndirs; i++)
        free(g_dirs[i]);
    g_ndirs = 0;
    free(g_configs);
    g_configs = NULL;
    free(g_exe);
    g_exe = NULL;
    free(g_tune);
    g_tune = NULL;
    free(g_wisdom);
    g_wisdom = NULL;
}

const char *paths_tune_dir(void) { return g_tune; }
const char *paths_wisdom_dir(void) { return g_wisdom ? g_wisdom : "wisdom"; }

char *paths_user_wisdom_dir(bool *nomem)
{
    const char *x = getenv("XDG_DATA_HOME"), *h = getenv("HOME");
    char *d = x && *x ? try_asprintf("%s/engine/wisdom", x) : h && *h ? try_asprintf("%s/.local/share/engine/wisdom", h)
                                                                    : NULL;
    *nomem = !d && ((x && *x) || (h && *h));
    return d;
}

const char *paths_exe(void) { return g_exe ? g_exe : "/proc/self/exe"; }

size_t paths_template_dirs(const char *const **dirs)
{
    *dirs = (const char *const *)g_dirs;
    return g_ndirs;
}

const char *paths_configs_dir(void) { return g_configs; }
