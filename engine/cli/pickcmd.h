/* pickcmd.h — the command line's side of pick (core/pick.h): a pick made from the options
 * (--device, --arch, --sms, --device-name, --wisdom, --dtype, --op, --batch and the layout's
 * --lda/--ldb/--ldc/--stride-*), and `engine pick`. */
#ifndef ENGINE_PICKCMD_H
#define ENGINE_PICKCMD_H

#include "cli.h"
#include "pick.h"

/* Choose for every shape, as pick_init_with does, from the command line's options; warnings to
 * stderr. */
int pickcmd_init(pick_t *p, const opts_t *o, const shape_t *shapes, size_t nshapes, err_t *err);

/* `engine pick`: print the choice for each --shapes, with the weighing (table) or as JSON lines. */
int pickcmd_main(const opts_t *o);

#endif
