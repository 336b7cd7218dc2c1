/* info.h — what is on this machine: `engine info` (the GPU, its peaks, the driver, NVRTC and
 * cuBLAS versions, optionally measured bandwidth) and `engine cache info|clear` (the CUBIN cache). */
#ifndef ENGINE_INFO_H
#define ENGINE_INFO_H

#include "cli.h"

int info_main(const opts_t *o);
int info_cache(const opts_t *o);

#endif
