/* util.h — small helpers shared by every module: allocation that cannot return NULL, file reading,
 * string building. Allocation failure is fatal: the engine cannot do anything useful without memory
 * for a few kilobytes of metadata, and checking every strdup would bury the logic. */
#ifndef ENGINE_UTIL_H
#define ENGINE_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

void *xmalloc(size_t n);
/* What happens when xmalloc and its kin find no host memory: fn(bytes) is called (the command's
 * prints one line and exits 3); if it returns, or with none set (the library), the process aborts.
 * Below the library's entry points allocation failure is not a status: nothing there can continue
 * without the memory (the entry points' own objects use try_*, below). */
void util_set_oom(void (*fn)(size_t));
/* What xmalloc does when n bytes could not be had: the handler, else abort. For an object made by a
 * try_* function where its caller cannot go on without it (the command's). */
void xoom(size_t n) __attribute__((noreturn));
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same that give NULL when the host has no memory, for the objects the library's entry points
 * make (a context, a plan, a forced config, a call's entry and the table of them, a pick, a loaded
 * module's slot) and what a kernel's build makes below them (the plan's switches and pasted source,
 * NVRTC's options and output, the compile's key and memory cache entry, the disk cache entry read
 * and copied, the descriptions) and a context's pick (the wisdom read, its candidates, each one's
 * config and template: config.c, template*.c, expr.c; the selection's scratch arrays, a tile
 * variant's config, the shipped configs a plan falls back to), the disk cache's names and the entry
 * it writes (cache.c) and the template, config and wisdom directories' names (paths.c): their
 * callers get ENGINE_ERROR_OUT_OF_MEMORY rather than an abort. try_strdup(NULL) is NULL too: the caller tells the two apart. */
void *try_calloc(size_t n, size_t size);
void *try_malloc(size_t n);
void *try_realloc(void *p, size_t n);
char *try_strdup(const char *s);
char *try_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Tests: of this thread's next try_* allocations the first n succeed and the rest fail, as if the
 * host had no memory; n < 0 (the default): none fail. */
void util_try_fail_after(int n);

/* Read a whole file into a NUL-terminated buffer. Returns NULL and sets errno on failure. */
char *read_file(const char *path, size_t *len);
/* The same in try_* memory: NULL with errno ENOMEM when the host has none (where a file that cannot
 * be read is not an error, its caller must tell the two apart). */
char *try_read_file(const char *path, size_t *len);

/* A growable string. sb_init/sb_free pair; sb.buf is always NUL-terminated. */
typedef struct {
    char *buf;
    size_t len;
    size_t cap;
    bool soft;   /* made by sb_try_init: grown with try_* memory */
    bool failed; /* soft only: the host had no memory for an addition, dropped with all after it */
} strbuf;
void sb_init(strbuf *sb);
/* A strbuf for text the library builds below its entry points (pasted source, descriptions):
 * where the host has no memory it fails rather than exits. -1 (sb->failed) when even its first
 * buffer could not be had; additions that cannot grow it set failed and are dropped, and then
 * sb_steal gives NULL. sb_free it either way. */
int sb_try_init(strbuf *sb);
void sb_free(strbuf *sb);
void sb_add(strbuf *sb, const char *s);
void sb_addn(strbuf *sb, const char *s, size_t n);
void sb_addf(strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A finite double as JSON: the shortest of %.15g, %.16g, %.17g that reads back as v, with ".0"
 * added to whole numbers so it reads as a real (51.2, not 51.200000000000003 as jansson writes it;
 * 1.0, not 1). */
void sb_add_double(strbuf *sb, double v);
/* s as a JSON string, quoted: quotes, backslashes and control characters escaped, invalid UTF-8
 * replaced by U+FFFD (jansson, and every other reader, refuses it). NULL is written as "". */
void sb_add_json_string(strbuf *sb, const char *s);
/* Hand over the buffer; sb becomes empty. NULL for a soft strbuf that failed (its buffer freed). */
char *sb_steal(strbuf *sb);

/* Median of v[0..n), sorting v; 0 when n is 0. */
double median(double *v, size_t n);

/* Parse a whole decimal integer (optional sign); 0 on success. */
int parse_i64(const char *s, int64_t *out);
/* Parse a whole floating-point number; 0 on success. */
int parse_double(const char *s, double *out);

/* Whether s is one of the strings of the NULL-terminated list (known keys of a JSON object). */
bool str_in_list(const char *const *list, const char *s);

/* Write all len bytes of data to fd, retrying short writes and EINTR: 0, or -1 with errno. */
int write_all(int fd, const void *data, size_t len);

/* Replace path by len bytes of data atomically: a temporary file beside it (".NAME.XXXXXX"),
 * written, fsync'd, mode 0644, then renamed over path, so a reader sees the old file or the whole
 * new one. Returns WRITE_OK, or the step that failed with errno set; no temporary file is left. */
enum { WRITE_OK = 0, WRITE_CREATE, WRITE_DATA, WRITE_COMMIT };
int write_file_atomic(const char *path, const void *data, size_t len);

/* FNV-1a, for cache keys. */
uint64_t hash64(const void *data, size_t len, uint64_t seed);

/* Now, UTC, as "2026-11-22T19:04:05Z", newly allocated. */
char *utc_now(void);

/* Monotonic wall clock in milliseconds. */
double now_ms(void);

/* Whether path is a directory (following links). */
bool is_dir(const char *path);
/* mkdir -p. Returns 0, or -1 with errno from the component that failed (ENOMEM: no host memory for
 * its copy of path). */
int mkdir_p(const char *path, mode_t mode);

/* strcmp for qsort over an array of char *. */
int cmp_strp(const void *a, const void *b);

#endif
