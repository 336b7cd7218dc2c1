/* fuzz_expr.c — the template expression language: any text, with names A..Z and the shape letters
 * bound to values drawn from the input's first bytes (overflow, division by zero, deep nesting,
 * lazy branches), and the identifier walk the error messages use. */
#include "expr.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int64_t g_vals[26];

static bool lookup(void *ctx, const char *name, size_t len, int64_t *v)
{
    (void)ctx;
    if (len == 1 && name[0] >= 'A' && name[0] <= 'Z') {
        *v = g_vals[name[0] - 'A'];
        return true;
    }
    return false;
}

static void count(void *ctx, const char *name, size_t len)
{
    (void)name;
    *(size_t *)ctx += len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Eight bytes of values (spread over the names, extremes included), then the expression. */
    size_t nv = size < 8 ? size : 8;
    for (size_t i = 0; i < 26; i++) {
        uint8_t b = nv ? data[i % nv] : 0;
        g_vals[i] = b == 255 ? INT64_MAX : b == 254 ? INT64_MIN : b == 253 ? -1 : (int64_t)b - 8;
    }
    char *src = malloc(size - nv + 1);
    memcpy(src, data + nv, size - nv);
    src[size - nv] = '\0';
    int64_t out;
    char err[256];
    expr_eval(src, lookup, NULL, &out, err, sizeof err);
    size_t total = 0;
    expr_idents(src, count, &total);
    free(src);
    return 0;
}
