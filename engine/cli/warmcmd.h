/* warmcmd.h — `engine warm`: every wisdom entry of the GPU found (or --arch) compiled into the CUBIN
 * cache on --jobs threads (warm.h), with a progress line and a summary. */
#ifndef ENGINE_WARMCMD_H
#define ENGINE_WARMCMD_H

#include "cli.h"

int warm_main(const opts_t *o);

#endif
