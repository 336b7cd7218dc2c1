/* tune.h — `engine tune` (see tune.c). Exit codes as every command's, and 1 (EXIT_VERIFY) when any
 * point evaluated computed wrong results (status FAIL), whatever won: a wrong kernel is a bug to see. */
#ifndef ENGINE_TUNE_H
#define ENGINE_TUNE_H

#include "cli.h"

int tune_main(const opts_t *o);

#endif
