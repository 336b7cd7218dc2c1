/* tune.h — `engine tune` and `engine merge` (see tune.c). */
#ifndef ENGINE_TUNE_H
#define ENGINE_TUNE_H

#include "cli.h"

int tune_main(const opts_t *o);
int tune_merge(const opts_t *o);

#endif
