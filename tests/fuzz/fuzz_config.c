/* fuzz_config.c — a config's text, loaded and checked against the real templates (kernels_src and
 * tests/templates), then planned for a small shape: JSON, strict keys, types, every parameter's
 * range and every constraint and launch expression of the template it names. No NVRTC, no GPU. */
#define _GNU_SOURCE
#include "config.h"
#include "paths.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("ENGINE_TEMPLATES", "kernels_src:tests/templates", 1);
    paths_init(NULL);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    config_t cfg;
    err_t err;
    err_clear(&err);
    if (config_parse("fuzz.json", (const char *)data, size, NULL, 0, NULL, 90, &cfg, &err) == 0) {
        static const int64_t shapes[][3] = {{1, 1, 1}, {67, 45, 37}, {256, 256, 256}};
        for (size_t i = 0; i < 3; i++) {
            plan_t plan;
            err_clear(&err);
            template_plan(&cfg.tpl, cfg.path, cfg.name, cfg.values, cfg.dtype, 90, shapes[i][0], shapes[i][1],
                          shapes[i][2], 232448, &plan, &err);
            plan_free(&plan);
        }
        config_free(&cfg);
    }
    return 0;
}
