/* winner.h — the winner of a tune written as a ready config (--emit-best). */
#ifndef ENGINE_WINNER_H
#define ENGINE_WINNER_H

#include "err.h"
#include "result.h"

/* Write the winner r as a ready config at out_path:
 *   {"name": name, "template": r->tmpl, "dtype": r->dtype, "params": {every param, in order},
 *    "description": "tuned by engine tune for <M>x<N>x<K> on <device> (<date>): <tflops> TFLOP/s,
 *    <pct> % of cuBLAS, median of <runs> runs, spread <x>%"}
 * laid out like the shipped configs (2-space indent, params on one line), written atomically (a
 * temp file in the same directory, fsync, rename). Parts of the description whose numbers are unknown
 * are left out. Refuses with EXIT_INPUT (one line, nothing written) a row whose status is not "ok",
 * and an out_path that names the same file as src_config_path (realpath of out_path's directory +
 * its basename against realpath of the source; out_path may not exist yet; src_config_path may be
 * NULL). A directory that is missing or not writable is EXIT_INPUT, an I/O error while writing
 * EXIT_SYSTEM; either way the temp file is removed and out_path is left as it was. */
int winner_write(const result_row *r, const char *name, const char *src_config_path, const char *out_path, err_t *err);

#endif
