/* helpers.h — shared by the unit tests: temporary config files, the template path, invalid inputs as data. */
#ifndef TEST_HELPERS_H
#define TEST_HELPERS_H

#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paths.h"
#include "util.h"
#include "wisdom.h"

/* Tests run from the repository root (tests/run.sh does that). */
static inline void use_repo_templates(void)
{
    setenv("ENGINE_TEMPLATES", "kernels_src:tests/templates", 1);
    paths_init(NULL, NULL);
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

/* Invalid inputs as data: each folder of dir (in name order, dot files skipped) is a case whose
 * `expected` file holds the exact error line. load(DIR/CASE, got, len) reads the case's input and
 * returns -1 with the error line in got, or 0 when it loaded. Each mismatch is printed; returns
 * how many cases ran, -1 when one did not give its line. */
static inline int run_fixtures(const char *dir, int (*load)(const char *case_dir, char *got, size_t len))
{
    struct dirent **cases = NULL;
    int n = scandir(dir, &cases, NULL, alphasort), ran = 0, bad = 0;
    for (int i = 0; i < n; i++) {
        if (cases[i]->d_name[0] != '.') {
            char *case_dir = xasprintf("%s/%s", dir, cases[i]->d_name), *exp_path = xasprintf("%s/expected", case_dir);
            char *want = read_file(exp_path, NULL), got[ERR_SOURCE_LEN + ERR_TEXT_LEN + 64] = "(loaded)";
            if (want)
                want[strcspn(want, "\n")] = '\0';
            if (load(case_dir, got, sizeof got) != -1 || !want || strcmp(got, want) != 0) {
                fprintf(stderr, "case %s:\n  got:  %s\n  want: %s\n", cases[i]->d_name, got, want ? want : "(no expected file)");
                bad++;
            }
            ran++;
            free(want);
            free(exp_path);
            free(case_dir);
        }
        free(cases[i]);
    }
    free(cases);
    return bad ? -1 : ran;
}

#endif
