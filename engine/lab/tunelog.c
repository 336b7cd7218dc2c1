/* tunelog.c — see tunelog.h: the log file, append-only JSON Lines, and its (key, stage) index. */
#define _GNU_SOURCE /* flock */
#include "tunelog.h"

#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------------------------- */
/* The (key, stage) index                                                                          */

static uint64_t key_hash(const char *key, int stage)
{
    return hash64(key, strlen(key), 0x9E3779B97F4A7C15ULL * (uint64_t)(stage + 1));
}

/* Slot of (key, stage): the one holding it, or the empty one where it would go. x->cap > 0. */
static size_t index_slot(const tunelog_index *x, const result_row *rows, const char *key, int stage)
{
    size_t mask = x->cap - 1, i = (size_t)key_hash(key, stage) & mask;
    while (x->slots[i]) {
        const result_row *r = &rows[x->slots[i] - 1];
        if (r->stage == stage && strcmp(r->key, key) == 0)
            return i;
        i = (i + 1) & mask;
    }
    return i;
}

bool tunelog_index_add(tunelog_index *x, const result_row *rows, size_t i)
{
    if ((x->count + 1) * 2 > x->cap) {
        tunelog_index bigger = {xcalloc(x->cap ? x->cap * 2 : 64, sizeof(size_t)), x->cap ? x->cap * 2 : 64, 0};
        for (size_t s = 0; s < x->cap; s++) {
            if (!x->slots[s])
                continue;
            const result_row *r = &rows[x->slots[s] - 1];
            bigger.slots[index_slot(&bigger, rows, r->key, r->stage)] = x->slots[s];
            bigger.count++;
        }
        free(x->slots);
        *x = bigger;
    }
    size_t s = index_slot(x, rows, rows[i].key, rows[i].stage);
    if (x->slots[s])
        return false;
    x->slots[s] = i + 1;
    x->count++;
    return true;
}

static const result_row *index_get(const tunelog_index *x, const result_row *rows, const char *key, int stage)
{
    if (!x->cap || !key)
        return NULL;
    size_t s = index_slot(x, rows, key, stage);
    return x->slots[s] ? &rows[x->slots[s] - 1] : NULL;
}

void tunelog_index_free(tunelog_index *x)
{
    free(x->slots);
    memset(x, 0, sizeof *x);
}

/* ---------------------------------------------------------------------------------------------- */
/* The log file                                                                                    */

typedef enum {
    TAIL_NONE,      /* the file ends with '\n' (or is empty) */
    TAIL_REMNANT,   /* the last line is an interrupted write: not JSON, no '\n' */
    TAIL_NO_NEWLINE /* the last line is a complete row that only lacks its '\n' */
} tail_kind;

/* Parse every line of text[0..len) (text[len] == '\0'; newlines are overwritten). A broken line is an
 * error unless it is the unterminated last line and is not JSON: then *tail = TAIL_REMNANT and
 * *tail_off is where it starts. */
static int parse_log(const char *path, char *text, size_t len, result_row **rows_out, size_t *n_out, tail_kind *tail,
                     size_t *tail_off, err_t *err)
{
    result_row *rows = NULL;
    size_t n = 0, cap = 0, off = 0;
    int lineno = 0;
    *tail = TAIL_NONE;
    *tail_off = len;
    while (off < len) {
        lineno++;
        char *nl = memchr(text + off, '\n', len - off);
        size_t end = nl ? (size_t)(nl - text) : len;
        text[end] = '\0';
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            rows = xrealloc(rows, cap * sizeof *rows);
        }
        err_t lerr;
        err_clear(&lerr);
        bool syntax;
        if (result_row_parse(text + off, end - off, path, lineno, &rows[n], &syntax, &lerr) != 0) {
            if (!nl && syntax) {
                *tail = TAIL_REMNANT;
                *tail_off = off;
                break;
            }
            err_set(err, lerr.cause, lerr.source, lerr.line, lerr.column, "%s", lerr.text);
            result_rows_free(rows, n);
            *rows_out = NULL;
            *n_out = 0;
            return -1;
        }
        n++;
        if (!nl)
            *tail = TAIL_NO_NEWLINE;
        off = end + 1;
    }
    *rows_out = rows;
    *n_out = n;
    return 0;
}

/* The whole of fd from offset 0, NUL-terminated; NULL with errno on failure. */
static char *read_fd(int fd, size_t *len)
{
    strbuf sb;
    sb_init(&sb);
    char chunk[65536];
    off_t at = 0;
    for (;;) {
        ssize_t got = pread(fd, chunk, sizeof chunk, at);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            sb_free(&sb);
            errno = e;
            return NULL;
        }
        if (got == 0)
            break;
        sb_addn(&sb, chunk, (size_t)got);
        at += got;
    }
    *len = sb.len;
    return sb_steal(&sb);
}

/* Lines in text[0..len), counting an unterminated last one. */
static size_t count_lines(const char *text, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += text[i] == '\n';
    return n + (len && text[len - 1] != '\n');
}

/* flock, best effort: some file systems (NFS with a read-only descriptor) refuse it, and a log that
 * only one process writes needs no lock. */
static void lock(int fd, int op)
{
    while (flock(fd, op) != 0 && errno == EINTR)
        ;
}

int tunelog_open(tunelog_t *l, const char *path, bool resume, err_t *err)
{
    memset(l, 0, sizeof *l);
    l->fd = -1;
    int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return err_set(err, ERR_INPUT, path, 0, 0, "cannot open the log for appending: %s", strerror(errno)), -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return err_set(err, ERR_INPUT, path, 0, 0, "a log must be a regular file"), -1;
    }
    lock(fd, LOCK_EX);
    size_t len = 0;
    char *text = read_fd(fd, &len);
    if (!text) {
        err_set(err, ERR_INPUT, path, 0, 0, "cannot read the log: %s", strerror(errno));
        goto fail;
    }
    if (!resume) {
        if (len > 0) {
            err_set(err, ERR_INPUT, path, 0, 0,
                    "already holds %zu results; pass --resume to continue it or choose another --log",
                    count_lines(text, len));
            goto fail;
        }
    } else {
        tail_kind tail;
        size_t tail_off;
        if (parse_log(path, text, len, &l->rows, &l->nrows, &tail, &tail_off, err) != 0)
            goto fail;
        l->caprows = l->nrows;
        if (tail == TAIL_REMNANT) {
            if (ftruncate(fd, (off_t)tail_off) != 0) {
                err_set(err, ERR_SYSTEM, path, 0, 0, "cannot cut off the interrupted last line: %s", strerror(errno));
                goto fail;
            }
            l->truncated_tail = true;
        } else if (tail == TAIL_NO_NEWLINE) {
            ssize_t w;
            while ((w = write(fd, "\n", 1)) < 0 && errno == EINTR)
                ;
            if (w != 1) {
                err_set(err, ERR_SYSTEM, path, 0, 0, "cannot end the last line with a newline: %s",
                        w < 0 ? strerror(errno) : "nothing written");
                goto fail;
            }
        }
        for (size_t i = 0; i < l->nrows; i++)
            tunelog_index_add(&l->index, l->rows, i);
    }
    lock(fd, LOCK_UN);
    free(text);
    l->nresumed = l->nrows;
    l->path = xstrdup(path);
    l->fd = fd;
    return 0;
fail:
    lock(fd, LOCK_UN);
    close(fd);
    free(text);
    result_rows_free(l->rows, l->nrows);
    tunelog_index_free(&l->index);
    memset(l, 0, sizeof *l);
    l->fd = -1;
    return -1;
}

int tunelog_append(tunelog_t *l, const result_row *r, err_t *err)
{
    if (l->fd < 0)
        return err_set(err, ERR_SYSTEM, l->path, 0, 0, "the log is not open"), -1;
    char *line = result_row_to_json(r);
    size_t len = strlen(line);
    result_row back;
    err_t lerr;
    err_clear(&lerr);
    if (result_row_parse(line, len, l->path, 0, &back, NULL, &lerr) != 0) {
        err_set(err, ERR_INPUT, l->path, 0, 0, "refusing to append a row the log could not read back: %s", lerr.text);
        free(line);
        return -1;
    }
    lock(l->fd, LOCK_SH);
    ssize_t w;
    while ((w = write(l->fd, line, len)) < 0 && errno == EINTR)
        ;
    int e = errno;
    lock(l->fd, LOCK_UN);
    free(line);
    if (w < 0 || (size_t)w != len) {
        result_row_free(&back);
        if (w < 0)
            return err_set(err, ERR_SYSTEM, l->path, 0, 0, "cannot append to the log: %s", strerror(e)), -1;
        /* The partial line must stay the last one: nothing more goes through this handle. */
        close(l->fd);
        l->fd = -1;
        return err_set(err, ERR_SYSTEM, l->path, 0, 0,
                       "short write: %zd of %zu bytes (disk full?); the log is closed; --resume cuts the partial line",
                       w, len),
               -1;
    }
    if (l->nrows == l->caprows) {
        l->caprows = l->caprows ? l->caprows * 2 : 64;
        l->rows = xrealloc(l->rows, l->caprows * sizeof *l->rows);
    }
    l->rows[l->nrows] = back;
    tunelog_index_add(&l->index, l->rows, l->nrows);
    l->nrows++;
    return 0;
}

void tunelog_close(tunelog_t *l)
{
    if (l->fd >= 0)
        close(l->fd);
    result_rows_free(l->rows, l->nrows);
    tunelog_index_free(&l->index);
    free(l->path);
    memset(l, 0, sizeof *l);
    l->fd = -1;
}

const result_row *tunelog_lookup(const tunelog_t *l, const char *key, int stage)
{
    if (stage >= 0)
        return index_get(&l->index, l->rows, key, stage);
    for (int s = 2; s >= 0; s--) {
        const result_row *r = index_get(&l->index, l->rows, key, s);
        if (r)
            return r;
    }
    return NULL;
}

int tunelog_read(const char *path, result_row **rows, size_t *n, bool *truncated_tail, err_t *err)
{
    *rows = NULL;
    *n = 0;
    if (truncated_tail)
        *truncated_tail = false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return err_set(err, ERR_INPUT, path, 0, 0, "cannot read the log: %s", strerror(errno)), -1;
    lock(fd, LOCK_EX); /* no append is half done while we read */
    size_t len = 0;
    char *text = read_fd(fd, &len);
    int e = errno;
    lock(fd, LOCK_UN);
    close(fd);
    if (!text)
        return err_set(err, ERR_INPUT, path, 0, 0, "cannot read the log: %s", strerror(e)), -1;
    tail_kind tail;
    size_t tail_off;
    int rc = parse_log(path, text, len, rows, n, &tail, &tail_off, err);
    free(text);
    if (rc == 0 && truncated_tail)
        *truncated_tail = tail == TAIL_REMNANT;
    return rc;
}
