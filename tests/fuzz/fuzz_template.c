/* fuzz_template.c — a template's text: the engine:template parameter block (params, derived names,
 * constraints, requires, switches, lets, launches), then, when every parameter has a default, the
 * checks and a plan at a few shapes, which evaluate every expression the block holds. */
#include "paths.h"
#include "template.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = xstrndup((const char *)data, size);
    template_t t;
    err_t err;
    err_clear(&err);
    if (template_parse("fuzz", "tests/fuzz/fuzz.cu", text, &t, &err) == 0) {
        int64_t *v = xcalloc(t.nparams + 1, sizeof *v);
        bool defaults = true;
        for (size_t i = 0; i < t.nparams; i++) {
            defaults = defaults && t.params[i].has_default;
            v[i] = t.params[i].def;
        }
        int idx;
        char msg[256];
        if (defaults && template_check(&t, v, DTYPE_F32, 90, &idx, msg, sizeof msg) == TPL_OK) {
            static const int64_t shapes[][3] = {{1, 1, 1}, {127, 129, 131}, {4096, 4096, 4096}};
            for (size_t i = 0; i < 3; i++) {
                plan_t plan;
                err_clear(&err);
                template_plan(&(plan_req){.tpl = &t,
                                          .label = "fuzz",
                                          .config_name = "fuzz",
                                          .values = v,
                                          .dtype = DTYPE_F64,
                                          .to = {.arch = 90,
                                                 .smem_limit = 232448,
                                                 .M = shapes[i][0],
                                                 .N = shapes[i][1],
                                                 .K = shapes[i][2]}},
                              &plan, &err);
                plan_free(&plan);
            }
        }
        free(v);
        template_free(&t);
    }
    free(text);
    return 0;
}
