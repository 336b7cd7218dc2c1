/* fuzz_cache.c — a cache entry's bytes, as cache_get reads them from disk: whatever the file holds,
 * the parser refuses it or returns buffers of exactly the sizes it checked, and an entry it
 * accepts writes back to the same bytes. */
#include "cache.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cache_entry e;
    char why[256];
    if (cache_entry_parse((const char *)data, size, NULL, &e, why, sizeof why) == 0) {
        if (e.log_size + e.ptx_size + e.cubin_size > size)
            abort();
        /* The key is the second header line: "key <64 hex>". */
        const char *k = memchr(data, '\n', size);
        if (!k || (size_t)(k - (const char *)data) + 70 > size)
            abort();
        char key[65];
        memcpy(key, k + 5, 64);
        key[64] = '\0';
        size_t len = 0;
        char *again = cache_entry_format(key, &e, &len);
        if (!again || len != size || memcmp(again, data, size) != 0)
            abort();
        free(again);
        cache_entry_free(&e);
    }
    return 0;
}
