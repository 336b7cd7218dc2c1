/* cache.h — the on-disk CUBIN cache: what one NVRTC compile produced (log, PTX, CUBIN, how long it
 * took), stored under a content key so that a tune or a repeated bench never compiles the same
 * source twice, across runs and across processes.
 *
 * Content-addressed: the caller computes the key, 64 lowercase hex characters of SHA-256 over
 * everything that decides the CUBIN (format version, pasted source, included headers, options, NVRTC
 * version, arch). An entry lives at <dir>/v1/<key[0..1]>/<key>; the v1 level lets a later format sit
 * beside this one.
 *
 * Several processes (parallel `engine` runs, a Slurm array on a shared filesystem) and several
 * threads may use one cache directory at once. Writers write a private temporary file in the entry's
 * directory and rename() it into place, so a reader sees either no entry or a complete one; every
 * entry carries its own checksum, so damage from outside (a crash before the data reached the disk,
 * a full disk, a stray edit) is detected, the entry removed, and the kernel recompiled. No function
 * here keeps mutable state outside its arguments, except an atomic counter used to name temporary
 * files. */
#ifndef ENGINE_CACHE_H
#define ENGINE_CACHE_H

#include "err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CACHE_KEY_LEN 64 /* characters of a key, without the terminating NUL */

typedef struct {
    char *dir;      /* root directory of the cache, absolute (entries are under dir/v1) */
    bool temporary; /* made by cache_open_temp for one run: cache_close removes it with its entries */
    pid_t owner;    /* process that called cache_open_temp; only it removes the tree (forked children
                       that inherit the struct and close it leave the directory alone) */
} cache_t;

/* The default root: $XDG_CACHE_HOME/engine when XDG_CACHE_HOME is set to an absolute path, else
 * $HOME/.cache/engine when HOME is. Returns a newly allocated string, or NULL with err set
 * (EXIT_SYSTEM) when neither variable is usable (ERR_ALLOC: the host had no memory for it). */
char *cache_default_dir(err_t *err);

/* Open the cache rooted at dir (NULL: cache_default_dir), creating it and its missing parents with
 * mode 0755. Returns 0, or -1 with err set (EXIT_SYSTEM, source = the path) when the directory cannot
 * be created or is not a writable directory (ERR_ALLOC where the host had no memory for a name).
 * cache_close undoes it. */
int cache_open(cache_t *c, const char *dir, err_t *err);

/* Open a private cache in a fresh directory made by mkdtemp under $TMPDIR (or /tmp), for --no-cache:
 * nothing is read from or left in the user's cache, yet worker processes given c->dir still find the
 * CUBINs the parent compiled. cache_close in the same process removes the directory and everything in
 * it. Returns 0, or -1 with err set (EXIT_SYSTEM). */
int cache_open_temp(cache_t *c, err_t *err);

/* Free c; when it is temporary and this is the process that made it, remove its directory tree. */
void cache_close(cache_t *c);

/* Whether key has the shape of a cache key: exactly 64 characters of [0-9a-f]. */
bool cache_key_valid(const char *key);

/* What one compile produced. Each buffer holds exactly its _size bytes as given to cache_put; the
 * buffers that cache_get and cache_entry_parse return are followed by a NUL byte that the size does
 * not count, so the text fields can be used as C strings. A buffer may be NULL when its size is 0. */
typedef struct {
    char *log;         /* NVRTC + ptxas -v output, text, may be empty */
    size_t log_size;   /* bytes */
    char *ptx;         /* PTX, text */
    size_t ptx_size;   /* bytes */
    char *cubin;       /* CUBIN, binary */
    size_t cubin_size; /* bytes */
    double compile_ms; /* wall time of the original compile, milliseconds (stored to the microsecond) */
} cache_entry;

/* Free the buffers of an entry filled by cache_get or cache_entry_parse and zero it. */
void cache_entry_free(cache_entry *e);

/* Outcomes of cache_get. Whatever it returns other than CACHE_HIT and CACHE_NOMEM, the caller
 * compiles and may cache_put the result; CACHE_NOMEM is the caller's failure (a compile would need
 * more memory still). */
enum {
    CACHE_NOMEM = -2,  /* the host had no memory to read the entry: warn says so (ERR_ALLOC); the entry stays */
    CACHE_ERROR = -1,  /* the entry could not be read (permissions, I/O, a malformed key): warn says why */
    CACHE_HIT = 0,     /* e holds the entry */
    CACHE_MISS = 1,    /* there is no entry for key */
    CACHE_CORRUPT = 2, /* there was a damaged entry; it has been removed and warn names it and the damage */
};

/* Look key up. On CACHE_HIT e is filled (free it with cache_entry_free); on anything else e is zeroed,
 * never partly filled. An entry is corrupt when it is truncated, has a bad header, sizes that do not
 * add up to the file's length, a key other than its file name, or a checksum that does not match; it
 * is then removed (unless another process has replaced it meanwhile) and warn gets one line,
 * "<path>: corrupt cache entry (<what>); it will be rebuilt", code EXIT_SYSTEM. Safe to call from
 * several threads and processes at once, also while others cache_put the same key. */
int cache_get(const cache_t *c, const char *key, cache_entry *e, err_t *warn);

/* Store e under key, replacing any entry there. The whole entry is written to a temporary file in the
 * entry's directory (named .tmp-<pid>-<tid>-<counter>-<random>, created exclusively) and renamed over
 * the final name, so concurrent writers of one key leave one complete entry and readers never see a
 * partial one. No fsync: an entry lost or truncated by a crash is caught by its checksum later.
 * Returns 0, or -1 with err set (EXIT_SYSTEM, source = the path; ERR_ALLOC when the host had no
 * memory for the entry's bytes or a name); a failed put leaves no file behind and nothing worse than
 * a later recompile, so callers may treat it as a warning. */
int cache_put(const cache_t *c, const char *key, const cache_entry *e, err_t *err);

/* Parse the bytes of an entry file, checking everything cache_get checks; expect_key is the key the
 * file is stored under (NULL accepts any well-formed key). Returns 0 and fills e (free it with
 * cache_entry_free), or -1 with e zeroed and a one-line reason in why (at most whylen bytes with the
 * NUL); CACHE_PARSE_NOMEM (e zeroed, why says so) when the entry is sound but the host had no memory
 * for its copy. Sizes in the header are checked against len before any is used. Exposed for tests and fuzzers. */
enum { CACHE_PARSE_NOMEM = -2 };
int cache_entry_parse(const char *buf, size_t len, const char *expect_key, cache_entry *e, char *why, size_t whylen);

/* Serialize e as an entry file stored under key. Returns a newly allocated buffer (try_* memory) and
 * its length in *len, or NULL when key is not a valid key or the host had no memory for it. Exposed
 * for tests. */
char *cache_entry_format(const char *key, const cache_entry *e, size_t *len);

/* What the cache holds. */
typedef struct {
    size_t entries;    /* entry files */
    uint64_t bytes;    /* bytes of the entry files together */
    size_t temp_files; /* temporary files: writes in progress now, or leftovers of interrupted ones */
} cache_stats;

/* Count the entries of the cache (format v1 only). Returns 0, or -1 with err set (EXIT_SYSTEM;
 * ERR_ALLOC when the host had no memory for a file's name, where the count stops). */
int cache_info(const cache_t *c, cache_stats *st, err_t *err);

/* Remove every entry and temporary file (format v1 only); *removed (may be NULL) is how many entries.
 * Only files named like entries or temporary files are touched; the directories stay. A cache_put
 * running at the same moment may fail (its temporary file is gone); it loses nothing but the entry.
 * Returns 0, or -1 with err set (EXIT_SYSTEM) naming the first file or directory that could not be
 * removed, or ERR_ALLOC when the host had no memory for a name (the clearing stops there). */
int cache_clear(const cache_t *c, size_t *removed, err_t *err);

#endif
