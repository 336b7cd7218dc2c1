/* util.h — small helpers shared by every module: allocation, file reading, string building.
 * Core (libengine) allocates with the try_* family only and hands a failure back as a value (NULL,
 * -1 with errno ENOMEM, a failed strbuf), so the library's entry points return
 * ENGINE_ERROR_OUT_OF_MEMORY. The aborting family below (x*, sb_init, read_file, utc_now) is for the
 * lab and the command, which cannot go on without a few kilobytes of metadata and would only bury
 * their logic in checks: it is declared here but defined in engine/lab/xalloc.c, so a core file
 * that calls it does not link into libengine.so (--no-undefined) and fails tests/layers.sh. */
#ifndef ENGINE_UTIL_H
#define ENGINE_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The aborting family (engine/lab/xalloc.c; lab, command and tests only). When there is no host
 * memory, fn(bytes) is called (the command's prints one line and exits 3); if it returns, or with
 * none set, the process aborts. xoom is that, for an object made by a try_* function where the
 * lab's or the command's caller cannot go on without it. */
void util_set_oom(void (*fn)(size_t));
void xoom(size_t n) __attribute__((noreturn));
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same that give NULL when the host has no memory: every allocation of core's (the library's
 * objects and all below them: plans, builds, the caches, a pick and its wisdom, configs, templates,
 * the explanations and descriptions, the directories' names). Each caller hands the failure on as
 * its module does (err_t ERR_ALLOC, a status, NULL), so the library's entry points return
 * ENGINE_ERROR_OUT_OF_MEMORY, and the command decides (xoom). try_strdup(NULL) is NULL too: the
 * caller tells the two apart. */
void *try_calloc(size_t n, size_t size);
void *try_malloc(size_t n);
void *try_realloc(void *p, size_t n);
char *try_strdup(const char *s);
char *try_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* fmt formatted into memory from alloc (try_malloc, the lab's xmalloc), NULL when it gives none. */
char *util_vformat(void *(*alloc)(size_t), const char *fmt, va_list ap);
/* Tests: of this thread's next try_* allocations the first n succeed and the rest fail, as if the
 * host had no memory; n < 0 (the default): none fail. */
void util_try_fail_after(int n);

/* Read a whole file into a NUL-terminated buffer (the aborting family's). Returns NULL and sets
 * errno on failure. */
char *read_file(const char *path, size_t *len);
/* The same in try_* memory: NULL with errno ENOMEM when the host has none (where a file that cannot
 * be read is not an error, its caller must tell the two apart). */
char *try_read_file(const char *path, size_t *len);

/* A growable string. sb_init/sb_free pair; sb.buf is always NUL-terminated. */
typedef struct {
    char *buf;
    size_t len;
    size_t cap;
    void (*oom)(size_t); /* made by sb_init: called (xoom) where there is no memory to grow it; NULL:
                            made by sb_try_init, grown with try_* memory */
    bool failed;         /* sb_try_init's only: the host had no memory for an addition, dropped with all after it */
} strbuf;
/* The aborting family's (engine/lab/xalloc.c): it never fails, the process stops instead. */
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
/* The whole file at path read into sb (made by the caller: sb_try_init or sb_init) and handed over
 * as sb_steal does; NULL with errno (ENOMEM: sb failed) and sb freed when it cannot be read. */
char *sb_read_file(strbuf *sb, const char *path, size_t *len);

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
 * new one. Returns WRITE_OK, or the step that failed with errno set (WRITE_CREATE with ENOMEM: no
 * host memory for the temporary's name); no temporary file is left. */
enum { WRITE_OK = 0, WRITE_CREATE, WRITE_DATA, WRITE_COMMIT };
int write_file_atomic(const char *path, const void *data, size_t len);

/* FNV-1a, for cache keys. */
uint64_t hash64(const void *data, size_t len, uint64_t seed);

/* Now, UTC, as "2026-11-22T19:04:05Z", newly allocated (the aborting family's). */
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
