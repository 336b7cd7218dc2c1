/* configlist.c — see configlist.h. */
#define _GNU_SOURCE
#include "configlist.h"

#include "paths.h"
#include "util.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A command-line error: printed as "engine: <text>", like the rest of the command line's. */
static int usage(err_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage(err_t *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_vset(err, ERR_INPUT, "engine", 0, 0, fmt, ap);
    va_end(ap);
    return EXIT_INPUT;
}

char *entries_resolve(const char *dir, const char *name)
{
    char *p = entries_try_resolve(dir, name);
    if (!p) /* entries_try_resolve's only failure */
        xoom((dir ? strlen(dir) : 0) + strlen(name) + 2);
    return p;
}

static void push_entry(entry_t **v, size_t *n, char *path)
{
    *v = xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = (entry_t){path, NULL, 0, NULL, 0};
}

static int expand(const char *arg, entry_t **v, size_t *n, int depth, err_t *err);

static int expand_list(const char *path, entry_t **v, size_t *n, int depth, err_t *err)
{
    char *text = read_file(path, NULL);
    if (!text)
        return usage(err, "@%s: cannot read config list", path);
    char *dir = path_dirname(path);
    int rc = 0, lineno = 0;
    /* Line by line, empty ones counted too (strtok would skip them): errors name LIST:LINE. */
    for (char *line = text, *next; line && !rc; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        size_t first_entry = *n;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        /* "path KEY=VALUE ...": the overrides apply to this entry only (a sweep in one file). */
        char *tok_save = NULL, *first = strtok_r(line, " \t\r", &tok_save);
        if (!first)
            continue;
        char *p = entries_resolve(dir, first);
        char *tok = strtok_r(NULL, " \t\r", &tok_save);
        if (!tok) {
            rc = expand(p, v, n, depth + 1, err);
            free(p);
        } else {
            push_entry(v, n, p);
            entry_t *e = &(*v)[*n - 1];
            for (; tok; tok = strtok_r(NULL, " \t\r", &tok_save)) {
                e->sets = xrealloc(e->sets, (e->nsets + 1) * sizeof *e->sets);
                e->sets[e->nsets++] = xstrdup(tok);
            }
        }
        /* The configs of this line (a directory's are many) come from it, unless an inner list named them. */
        for (size_t i = first_entry; i < *n; i++)
            if (!(*v)[i].list) {
                (*v)[i].list = xstrdup(path);
                (*v)[i].line = lineno;
            }
    }
    free(dir);
    free(text);
    return rc;
}

static int expand(const char *arg, entry_t **v, size_t *n, int depth, err_t *err)
{
    if (depth > 8)
        return usage(err, "%s: config lists nest too deeply", arg);
    if (arg[0] == '@')
        return expand_list(arg + 1, v, n, depth, err);
    struct stat st;
    if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
        DIR *d = opendir(arg);
        if (!d)
            return usage(err, "%s: cannot read directory", arg);
        char **found = NULL;
        size_t nfound = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
            size_t len = strlen(de->d_name);
            if (len > 5 && strcmp(de->d_name + len - 5, ".json") == 0) {
                found = xrealloc(found, (nfound + 1) * sizeof *found);
                found[nfound++] = xasprintf("%s/%s", arg, de->d_name);
            }
        }
        closedir(d);
        if (nfound == 0)
            return usage(err, "%s: the directory holds no .json configs", arg);
        qsort(found, nfound, sizeof *found, cmp_strp);
        for (size_t i = 0; i < nfound; i++)
            push_entry(v, n, found[i]);
        free(found);
        return 0;
    }
    push_entry(v, n, entries_resolve(NULL, arg));
    return 0;
}

int entries_expand(const char *arg, entry_t **entries, size_t *n, err_t *err)
{
    return expand(arg, entries, n, 0, err);
}
