/* pickcmd.h — the command line's side of pick (core/pick.h): a pick made from the options
 * (--device, --arch, --sms, --device-name, --wisdom, --dtype, --op, --batch and the layout's
 * --lda/--ldb/--ldc/--stride-*), and `engine pick`. */
#ifndef ENGINE_PICKCMD_H
#define ENGINE_PICKCMD_H

#include "cli.h"
#include "pick.h"

/* Choose for every shape, as pick_init_with does, from the command line's options; damaged user
 * wisdom reported on stderr, and with --verbose each entry left out too (else see below). */
int pickcmd_init(pick_t *p, const opts_t *o, const shape_t *shapes, size_t nshapes, err_t *err);

/* The entries of p left out (their config does not load), counted by reason on f, a line a reason:
 * "engine: N wisdom entries left out: REASON (--verbose lists them)". Nothing with --verbose (o),
 * which listed each one already. A hundred entries of one config that does not build for the target
 * (tc32 on sm_90, not sm_90a) are one line, not a hundred. */
void pickcmd_left_out(const pick_t *p, const opts_t *o, FILE *f);

/* `engine pick`: print the choice for each --shapes, with the weighing (table) or as JSON lines. */
int pickcmd_main(const opts_t *o);

#endif
