/* merge.h — `engine merge`: the logs of a tune run in parts (shards, machines) joined, checked to
 * describe one problem, written as one log and ranked again. */
#ifndef ENGINE_MERGE_H
#define ENGINE_MERGE_H

#include "cli.h"
#include "err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Options of `engine merge`. */
typedef struct {
    const char *const *logs; /* paths of the logs to merge, in priority order (first kept on a duplicate) */
    size_t nlogs;
    bool force;            /* merge logs of different problems */
    const char *out_path;  /* write every kept row here (a new log), or NULL */
    size_t top;            /* rows of the ranking to print; 0 = all */
    const char *emit_best; /* write the winner here as a config (name: its config + "_tuned"), or NULL */
} merge_opts;

/* engine merge: read every log (tunelog_read), check that they describe the same problem — the
 * same M, N, K, dtype, alpha, beta and, for rows with stage >= 1, the same device name — unless
 * o->force; the first disagreement is EXIT_INPUT naming both files and the field
 *   "b.jsonl:3: M = 2048 but a.jsonl holds M = 4096; pass --force to merge logs of different problems".
 * Rows with the same (key, stage) in several logs (or twice in one): the first is kept, the others
 * counted as duplicates. Then writes the kept rows to o->out_path (refused like tunelog_open when it
 * exists and is not empty), prints to out a note per log with a truncated tail, a summary line
 * ("merged 2 logs: 812 rows kept, 17 duplicates dropped, 301 points ranked") and the ranking, and
 * with o->emit_best writes the winner through winner_write. Returns EXIT_OK, or err's code. */
int merge_logs(const merge_opts *o, FILE *out, err_t *err);

/* The command: merge_logs over the LOG arguments with --force, --log, --top and --emit-best, to
 * stdout; an error is printed to stderr. Returns the exit code. */
int merge_main(const opts_t *o);

#endif
