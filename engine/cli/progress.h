/* progress.h — one live status line on stderr while a long command runs (points done of total,
 * compiled, timed, failed, best so far, time left), rewritten in place at most ten times a second.
 * Only on a terminal: in a pipe, a file or a log nothing of it appears. */
#ifndef ENGINE_PROGRESS_H
#define ENGINE_PROGRESS_H

#include <stdbool.h>

typedef struct {
    bool on;        /* stderr is a terminal (and ENGINE_PROGRESS is not 0) */
    double last_ms; /* when the line was last drawn */
    int width;      /* characters of the line now on screen, to blank it */
} progress_t;

void progress_init(progress_t *p);
/* Draw the line (at most every 100 ms unless force). */
void progress_show(progress_t *p, bool force, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Blank the line, so that normal output starts on a clean one. */
void progress_clear(progress_t *p);

/* "1m20s", "45s", "2h03m" for a duration in seconds. */
void progress_duration(double s, char *buf, int len);

#endif
