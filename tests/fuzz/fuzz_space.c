/* fuzz_space.c — a tune space file (ours or Kernel Tuner T1), loaded against the toy config and
 * template of tests/ and enumerated when small: ranges, expressions, their order, constraints,
 * shapes. At most 512 points are enumerated, so the fuzzer spends its time on the parsers rather
 * than on evaluating the same rules over large products. The text goes through a file because
 * space files are read by path (in /dev/shm where there is one). */
#define _GNU_SOURCE
#include "paths.h"
#include "space.h"
#include "util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char g_path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("ENGINE_TEMPLATES", "kernels_src:tests/templates", 1);
    paths_init(NULL, NULL);
    snprintf(g_path, sizeof g_path, "%s/engine-fuzz-space-%d.json", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp",
             (int)getpid());
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fopen(g_path, "wb");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    space_t s;
    err_t err;
    err_clear(&err);
    /* The space's config is found next to the file or by name: toy.json is in tests/configs/tune. */
    if (space_load(&s, g_path, NULL, 0, NULL, 90, false, &err) == 0) {
        space_device dev = {90, 232448};
        shape_t shape = {64, 64, 64};
        space_point *pts;
        size_t n;
        space_counts c;
        err_clear(&err);
        if (space_enumerate(&s, &dev, &shape, 1, 512, &pts, &n, &c, &err) == 0) {
            space_points_free(pts, n);
            space_counts_free(&c);
        }
        space_free(&s);
    }
    unlink(g_path);
    return 0;
}
