/* fuzz_range.c — tune ranges (`a:b:step`, `a:b:*f`, `v1,v2,...`): parsed values must be distinct,
 * at most RANGE_MAX_VALUES, and a range must never return values together with an error. */
#include "range.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = xstrndup((const char *)data, size);
    int64_t *v = NULL;
    size_t n = 0;
    char why[256];
    int rc = range_parse(text, &v, &n, why, sizeof why);
    if (rc != 0 && (v || n))
        abort();
    if (rc == 0 && (n == 0 || n > RANGE_MAX_VALUES))
        abort();
    for (size_t i = 0; rc == 0 && i < n; i++)
        for (size_t j = i + 1; j < n && j < i + 64; j++)
            if (v[i] == v[j])
                abort();
    free(v);
    free(text);
    return 0;
}
