/* tune.h — `engine tune` (see tune.c). */
#ifndef ENGINE_TUNE_H
#define ENGINE_TUNE_H

#include "cli.h"

int tune_main(const opts_t *o);

#endif
