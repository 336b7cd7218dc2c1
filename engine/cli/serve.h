/* serve.h — `engine __worker --device N [--cache DIR] [--bandwidth]`: the process that owns one
 * GPU and answers verification and timing requests on stdin/stdout (the protocol is described at
 * the top of serve.c; worker.h is the engine's side). */
#ifndef ENGINE_SERVE_H
#define ENGINE_SERVE_H

#include "cli.h"

/* Serve until stdin ends, an "exit" request, or a fault that breaks the context. Returns an exit
 * code (the failure's when the GPU could not be opened). */
int serve_main(const opts_t *o);

#endif
