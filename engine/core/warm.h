/* warm.h — `engine warm` and engine_warm: the kernel of every wisdom entry, planned at the entry's
 * own shape, op, batch and alignment class, compiled into the on-disk cache on several threads, so
 * that a program's first calls of those problems find their CUBINs on disk instead of waiting for
 * NVRTC. Nothing stays in memory (kernel_prepare). Entries that plan to the same source (one config
 * at shapes with the same switches) are one kernel, compiled once. A shape whose plan differs from
 * every entry's (other edge switches, another split) still compiles on its first call. */
#ifndef ENGINE_WARM_H
#define ENGINE_WARM_H

#include "err.h"
#include "jit.h"
#include "pick.h"

#include <stddef.h>

typedef struct {
    size_t total;    /* distinct kernels to prepare */
    size_t done;
    size_t compiled; /* by NVRTC now */
    size_t cached;   /* on disk or in memory already */
    size_t failed;   /* a plan refused or a compile failed: reported, the rest go on */
    double ms;       /* wall time so far */
} warm_stats;

/* Called after each kernel, from the thread that prepared it, one call at a time. */
typedef void (*warm_progress_fn)(void *user, const warm_stats *st, const char *label);

/* Prepare every loaded candidate of the picks (duplicates across picks once) with jobs threads
 * (< 1: one), through jit and its disk cache. Returns 0 when every one is in the cache, -1 when
 * some failed; first holds the first failure's line. -2 (ERR_ALLOC in first, source "warm") when
 * the host had no memory for the list of kernels, their labels or source keys, or the threads:
 * nothing was prepared, nothing is left allocated or running. */
int warm_run(jit_t *jit, pick_t *const *picks, size_t npicks, int64_t smem_limit, int jobs, warm_progress_fn cb,
             void *user, warm_stats *st, err_t *first);

#endif
