/* fuzz_result.c — one line of a tune log (result.h). A line that parses must write back to a line that
 * parses to the same line again (what --resume and engine merge rely on). */
#include "result.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *line = xstrndup((const char *)data, size);
    result_row r;
    err_t err;
    err_clear(&err);
    if (result_row_from_json(line, "fuzz.jsonl", 1, &r, &err) == 0) {
        char *a = result_row_to_json(&r);
        result_row r2;
        err_clear(&err);
        if (result_row_from_json(a, "fuzz.jsonl", 1, &r2, &err) != 0)
            abort();
        char *b = result_row_to_json(&r2);
        if (strcmp(a, b) != 0)
            abort();
        free(a);
        free(b);
        result_row_free(&r2);
        result_row_free(&r);
    }
    free(line);
    return 0;
}
