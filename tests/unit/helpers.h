/* helpers.h — shared by the unit tests: temporary config files and the template path. */
#ifndef TEST_HELPERS_H
#define TEST_HELPERS_H

#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paths.h"
#include "wisdom.h"

/* Tests run from the repository root (tests/run.sh does that). */
static inline void use_repo_templates(void)
{
    setenv("ENGINE_TEMPLATES", "kernels_src:tests/templates", 1);
    paths_init(NULL);
}

/* Write text to a fresh temporary .json file; returns its path (free it). */
static inline char *temp_config(const char *text)
{
    char *path = strdup("/tmp/engine-test-XXXXXX.json");
    int fd = mkstemps(path, 5);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

/* The shipped wisdom (wisdom/, tests run from the repository root) into w; 0 when it loads. */
static inline int load_shipped_wisdom(wisdom_t *w)
{
    err_t err;
    err_clear(&err);
    wisdom_init(w);
    int rc = wisdom_load_dir(w, "wisdom", &err);
    if (rc)
        err_print(stderr, &err);
    return rc;
}

#endif
