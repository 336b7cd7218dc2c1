/* tunelog.h — the result log of `engine tune`: one JSON object per evaluated point, one per line
 * (result.h).
 *
 * The log is append-only JSON Lines. Each row is written with a single write() on an O_APPEND
 * descriptor, so several tuners (or a tuner and `engine merge`) never interleave or half-write a
 * line; a crash can at worst leave the last line truncated, which resume cuts off. */
#ifndef ENGINE_TUNELOG_H
#define ENGINE_TUNELOG_H

#include "err.h"
#include "result.h"

#include <stdbool.h>
#include <stddef.h>

/* A hash of (key, stage) → row index, open addressing: a log's lookup, and merge's duplicates. */
typedef struct {
    size_t *slots; /* row index + 1, 0 = empty; cap entries, cap a power of two (or 0) */
    size_t cap;
    size_t count; /* occupied slots */
} tunelog_index;

/* A log open for appending. rows holds every row of the file: the nresumed rows it held when it was
 * opened, then each row appended through this handle (as written, time filled in). */
typedef struct {
    char *path;       /* as given */
    int fd;           /* O_RDWR|O_APPEND; -1 when closed */
    result_row *rows; /* every row, in file order */
    size_t nrows;
    size_t caprows;      /* allocated entries of rows */
    size_t nresumed;     /* rows the file held when opened */
    bool truncated_tail; /* the last line was an interrupted write and has been cut off */
    tunelog_index index; /* (key, stage) → first row with them */
} tunelog_t;

/* Open path for appending, creating it (0644) when missing.
 * resume = false: the file must not exist or be empty, else EXIT_INPUT
 *   "<path>: already holds N results; pass --resume to continue it or choose another --log".
 * resume = true: read every complete line. A corrupt line that is not the last is EXIT_INPUT naming
 *   path:line and the rule broken, and nothing is changed. A last line without '\n' that is not
 *   complete JSON is the remnant of an interrupted write: the file is cut (ftruncate) to the end of
 *   the last complete line and truncated_tail is set. A last line without '\n' that parses is kept
 *   and the missing '\n' is appended. A last line that is complete JSON but breaks a rule is an error.
 * Reading and cutting happen under an exclusive flock(), and tunelog_append holds a shared one, so a
 * resume never cuts the line another engine process is writing. On failure l is left closed (fd -1,
 * nothing to free); tunelog_close is still safe to call. */
int tunelog_open(tunelog_t *l, const char *path, bool resume, err_t *err);

/* Append r as one line with a single write(), and add it to l->rows and the index (pointers
 * returned by tunelog_lookup before the call may move). The line is parsed back before it is
 * written: a row the log could not read (unknown status, empty key, ...) is refused with EXIT_INPUT
 * and nothing is written. A failed or short write is EXIT_SYSTEM; a short write leaves a truncated
 * last line, so the handle closes its descriptor (later appends fail) and the next resume cuts the
 * line off. No fsync: rows survive a crash of the process, not of the machine. */
int tunelog_append(tunelog_t *l, const result_row *r, err_t *err);

/* Close the descriptor and free everything l holds; l is left closed. Safe on a closed log. */
void tunelog_close(tunelog_t *l);

/* The row of l for (key, stage), or NULL. stage -1: the row with the highest stage for key. When
 * the log holds the same (key, stage) more than once, the first row wins. */
const result_row *tunelog_lookup(const tunelog_t *l, const char *key, int stage);

/* Read a whole log without opening it for writing (merge, plots): same rules as resume, but a
 * truncated tail is only reported (*truncated_tail = true) and skipped, and the file is never
 * modified. On success *rows (free with result_rows_free) holds *n rows; on failure *rows is NULL,
 * *n is 0, and err says why (EXIT_INPUT: unreadable file or corrupt line). */
int tunelog_read(const char *path, result_row **rows, size_t *n, bool *truncated_tail, err_t *err);

/* Add rows[i] to x unless (key, stage) is already there; false when it was (the first one stays).
 * rows may move between calls (x holds indices); pair with tunelog_index_free. */
bool tunelog_index_add(tunelog_index *x, const result_row *rows, size_t i);
void tunelog_index_free(tunelog_index *x);

#endif
