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


char *path_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return xstrdup(".");
    if (slash == path)
        return xstrdup("/");
    return xstrndup(path, (size_t)(slash - path));
}

char *path_join(const char *dir, const char *name)
{
    if (name[0] == '/' || !dir || !*dir || strcmp(dir, ".") == 0)
        return xstrdup(name);
    return xasprintf("%s/%s", dir, name);
}

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

static char *canonical(const char *dir, const char *rel)
{
    char *joined = xasprintf("%s/%s", dir, rel), resolved[PATH_MAX];
    if (realpath(joined, resolved)) {
        free(joined);
        return xstrdup(resolved);
    }
    return joined;
}

static void add_dir(char *d)
{
    if (g_ndirs < sizeof g_dirs / sizeof g_dirs[0] && is_dir(d))
        g_dirs[g_ndirs++] = d;
    else
        free(d);
}

static void init_from(char *exe_dir);

void paths_init(const char *argv0)
{
    paths_free();
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *exe_dir;
    if (n > 0) {
        exe[n] = '\0';
        g_exe = xstrdup(exe);
        exe_dir = path_dirname(exe);
    } else {
        exe_dir = path_dirname(argv0 ? argv0 : ".");
    }
    init_from(exe_dir);
}

void paths_init_beside(const char *file)
{
    paths_free();
    init_from(path_dirname(file));
}

/* Everything but the executable's path, from the directory it lies in (taken over). */
static void init_from(char *exe_dir)
{
    const char *env = getenv("ENGINE_TEMPLATES");
    if (env && *env) {
        char *copy = xstrdup(env), *save = NULL;
        for (char *tok = strtok_r(copy, ":", &save); tok; tok = strtok_r(NULL, ":", &save))
            add_dir(xstrdup(tok));
        free(copy);
    }
    /* Canonical paths: messages that list them should not read build/../kernels_src. */
    const char *rel[] = {"../kernels_src", "../share/engine/kernels_src"};
    for (size_t i = 0; i < 2; i++)
        add_dir(canonical(exe_dir, rel[i]));
    char *c = canonical(exe_dir, "../configs");
    if (!is_dir(c)) {
        free(c);
        c = canonical(exe_dir, "../share/engine/configs");
    }
    if (is_dir(c))
        g_configs = c;
    else
        free(c);
    char *t = canonical(exe_dir, "../tune");
    if (!is_dir(t)) {
        free(t);
        t = canonical(exe_dir, "../share/engine/tune");
    }
    if (is_dir(t))
        g_tune = t;
    else
        free(t);
    /* Wisdom: $ENGINE_WISDOM, else next to the binary as the configs are (it need not exist). */
    const char *w = getenv("ENGINE_WISDOM");
    if (w && *w) {
        g_wisdom = xstrdup(w);
    } else {
        g_wisdom = canonical(exe_dir, "../wisdom");
        if (!is_dir(g_wisdom)) {
            char *share = canonical(exe_dir, "../share/engine/wisdom");
            if (is_dir(share)) {
                free(g_wisdom);
                g_wisdom = share;
            } else {
                free(share);
            }
        }
    }
    free(exe_dir);
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
