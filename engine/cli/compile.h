/* compile.h — `engine compile`: every config compiled on the pool of NVRTC threads (no GPU
 * needed), with the resources ptxas reports, whether the CUBIN came from the cache, and --emit. */
#ifndef ENGINE_COMPILE_H
#define ENGINE_COMPILE_H

#include "cli.h"

int compile_main(const opts_t *o);

#endif
