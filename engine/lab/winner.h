/* winner.h — the winner of a tune written as a ready config (--emit-best) and recorded in wisdom
 * (--wisdom). */
#ifndef ENGINE_WINNER_H
#define ENGINE_WINNER_H

#include "config.h"
#include "err.h"
#include "layout.h"
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

/* tune --wisdom DIR: keep the winner w as DIR/<device>.json's entry for its dtype and shape when it
 * is faster than the one there (wisdom_record), with its occupancy in blocks per SM. The config is
 * the space's base (written relative to the directory above DIR when it lies under it, as the
 * shipped wisdom/ and configs/ do), with the parameters the winner changed as overrides. Prints
 * what happened; vs_cublas <= 0: not known. lay: the layout it was measured in, of which the entry
 * keeps the op, the products of the strided batch and the alignment class its leading dimensions
 * allow (wisdom_entry.op, .batch, .align), not the leading dimensions themselves; w->tflops counts
 * every product. Only a row verified in its dtype's own accuracy class is recorded
 * (winner_check_class says why); another class, or none (a row of a log from before classes), is
 * EXIT_VERIFY and nothing is written. */
int winner_record(const result_row *w, const config_t *base, const char *wisdom_dir, double vs_cublas,
                  const layout_t *lay, err_t *err);

/* tune --wisdom, before anything runs: --auto runs wisdom's entries for a dtype as that dtype's
 * kernels, so what `--dtype f32` gets must be FP32-accurate. A base config held to another accuracy
 * class (a 1xTF32 config declares "accuracy": "tf32") is refused: EXIT_INPUT, naming the config. */
int winner_check_class(const config_t *base, err_t *err);

#endif
