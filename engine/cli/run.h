/* run.h — `engine bench` and `engine verify`: configs compiled on the pool, then verified (and
 * timed beside cuBLAS) by a worker process on the GPU, one row or line per config and shape. */
#ifndef ENGINE_RUN_H
#define ENGINE_RUN_H

#include "cli.h"

int run_bench(const opts_t *o);
int run_verify(const opts_t *o);

#endif
