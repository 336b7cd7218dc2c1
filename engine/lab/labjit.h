/* labjit.h — the command's compiler: one jit_t (core/jit.h) for the whole process. A library
 * context owns its own; the command, its workers and lab's probe kernels are one user of core, so
 * they share one, made on first use and kept until the process ends (its results are freed by
 * jit_cache_free where a command is done with them). */
#ifndef ENGINE_LABJIT_H
#define ENGINE_LABJIT_H

#include "jit.h"

/* The process's jit: never NULL (no host memory for it is xmalloc's failure: util.h). */
jit_t *lab_jit(void);

#endif
