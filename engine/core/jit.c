/* jit.c — NVRTC compilation, ptxas resource parsing, the in-memory and on-disk caches. */
#define _GNU_SOURCE
#include "jit.h"

#include "arch.h"
#include "sha256.h"
#include "util.h"

#include <errno.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every NVRTC call goes through this, so a failure names the call that failed. */
static int nvrtc_check(nvrtcResult rc, const char *call, const char *file, int line, err_t *err)
{
    if (rc == NVRTC_SUCCESS)
        return 0;
    return err_set(err, ERR_SYSTEM, file, line, 0, "%s failed: %s", call, nvrtcGetErrorString(rc));
}
#define NVRTC_CHECK(call, err) nvrtc_check((call), #call, __FILE__, __LINE__, (err))

/* A request for one key: READY holds the result; PENDING is being compiled by some thread (wait on
 * jit->done); FAILED keeps the error, so every shape of a broken config reports it without
 * recompiling (and without printing the log again). */
typedef enum { ENTRY_PENDING, ENTRY_READY, ENTRY_FAILED } entry_state;

typedef struct mem_entry {
    char key[65];
    entry_state state;
    jit_result res;
    err_t err; /* FAILED */
    struct mem_entry *next;
} mem_entry;

/* One compiler's state (jit.h): a library context owns one, the command one for its process. */
struct jit {
    pthread_mutex_t lock; /* guards entries, stats, disk, disk_users and the entries' states */
    pthread_cond_t done;  /* an entry left PENDING */
    mem_entry *entries;
    jit_stats stats;
    const cache_t *disk;
    /* Threads reading or writing disk now (outside lock: file IO): jit_set_cache waits for none
     * before it replaces the cache, whose owner may free it right after. */
    int disk_users;
    pthread_cond_t disk_idle;
    jit_reporter report; /* jit_set_reporter's; zero: nothing reported */
    int warned;          /* a cache that cannot be written was reported (once) */
};

jit_t *jit_new(void)
{
    jit_t *j = try_calloc(1, sizeof *j);
    if (!j)
        return NULL;
    pthread_mutex_init(&j->lock, NULL);
    pthread_cond_init(&j->done, NULL);
    pthread_cond_init(&j->disk_idle, NULL);
    return j;
}

void jit_free(jit_t *j)
{
    if (!j)
        return;
    jit_cache_free(j);
    pthread_cond_destroy(&j->disk_idle);
    pthread_cond_destroy(&j->done);
    pthread_mutex_destroy(&j->lock);
    free(j);
}

size_t jit_parse_ptxas(const char *log, jit_func_info *funcs, size_t max)
{
    size_t n = 0;
    jit_func_info *cur = NULL;
    const char *p = log;
    while (p && *p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line - 1 ? len : sizeof line - 1), p);
        char name[128];
        const char *q;
        if ((q = strstr(line, "Compiling entry function '")) || (q = strstr(line, "Function properties for "))) {
            if (q[0] == 'C')
                sscanf(q, "Compiling entry function '%127[^']'", name);
            else
                sscanf(q, "Function properties for %127s", name);
            cur = NULL;
            for (size_t i = 0; i < n; i++)
                if (strcmp(funcs[i].name, name) == 0)
                    cur = &funcs[i];
            if (!cur && n < max) {
                cur = &funcs[n++];
                memset(cur, 0, sizeof *cur);
                snprintf(cur->name, sizeof cur->name, "%s", name);
            }
        } else if (cur && (q = strstr(line, "bytes stack frame"))) {
            const char *s = line;
            while (*s && (*s < '0' || *s > '9'))
                s++;
            sscanf(s, "%d bytes stack frame, %d bytes spill stores, %d bytes spill loads", &cur->stack,
                   &cur->spill_stores, &cur->spill_loads);
        } else if (cur && (q = strstr(line, "Used "))) {
            sscanf(q, "Used %d registers", &cur->regs);
            const char *b = strstr(line, "barriers");
            if (b) {
                const char *s = b;
                while (s > line && s[-1] == ' ')
                    s--;
                while (s > line && s[-1] >= '0' && s[-1] <= '9')
                    s--;
                cur->barriers = atoi(s);
            }
            const char *sm = strstr(line, " bytes smem");
            if (sm) {
                const char *s = sm;
                while (s > line && s[-1] >= '0' && s[-1] <= '9')
                    s--;
                cur->smem_static = atoi(s);
            }
        }
        p = eol ? eol + 1 : NULL;
    }
    return n;
}

const jit_func_info *jit_func(const jit_result *r, const char *name)
{
    for (size_t i = 0; i < r->nfuncs; i++)
        if (strcmp(r->funcs[i].name, name) == 0)
            return &r->funcs[i];
    return NULL;
}

void jit_print_numbered(FILE *f, const char *source)
{
    const char *p = source;
    int prelude = 1, line = 0, pre = 0;
    while (*p) {
        const char *eol = strchr(p, '\n');
        int len = eol ? (int)(eol - p) : (int)strlen(p);
        if (prelude && strncmp(p, "#line 1 ", 8) == 0) {
            fprintf(f, "      | %.*s\n", len, p);
            prelude = 0;
            line = 0;
        } else if (prelude) {
            fprintf(f, "  p%-3d| %.*s\n", ++pre, len, p);
        } else {
            fprintf(f, "  %4d| %.*s\n", ++line, len, p);
        }
        if (!eol)
            break;
        p = eol + 1;
    }
}

/* The options every compile gets; the cache key covers them. Their count, or -1 (ERR_ALLOC in err)
 * when the host had no memory for one: free_opts either way. */
static int build_opts(int arch, const char *const *include_dirs, size_t ninc, char **owned, const char **opts,
                      const char *label, err_t *err)
{
    int n = 0;
    char name[16];
    opts[n++] = owned[0] = try_asprintf("--gpu-architecture=%s", arch_name(arch, name, sizeof name));
    /* -lineinfo: profilers and compute-sanitizer map SASS back to template lines (#line keeps them
     * the template's own). -Xptxas -v: the resource report, without a GPU. */
    opts[n++] = "-lineinfo";
    opts[n++] = "--ptxas-options=-v";
    opts[n++] = "--std=c++17";
    /* Since 12.9 NVRTC reuses CUBINs from the driver's compute cache, and a cache hit comes back
     * without ptxas's resource report (and with a compile time that measures nothing). */
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) == NVRTC_SUCCESS && (major > 12 || (major == 12 && minor >= 9)))
        opts[n++] = "--no-cache";
    size_t ni = ninc < JIT_MAX_INCLUDES ? ninc : JIT_MAX_INCLUDES;
    for (size_t i = 0; i < ni; i++)
        opts[n++] = owned[1 + i] = try_asprintf("--include-path=%s", include_dirs[i]);
    /* ENGINE_PTXAS_OPTIONS: extra ptxas options for experiments (e.g. --register-usage-level=10),
     * applied to every compile of the process and its workers; the cache key covers them. */
    const char *px = getenv("ENGINE_PTXAS_OPTIONS");
    if (px && *px)
        opts[n++] = owned[1 + JIT_MAX_INCLUDES] = try_asprintf("--ptxas-options=%s", px);
    for (int i = 0; i < n; i++)
        if (!opts[i])
            return err_set(err, ERR_ALLOC, label, 0, 0, "no host memory for NVRTC's options"), -1;
    return n;
}

/* NVRTC's output of size bytes copied out (what: the log, the CUBIN, the PTX), or NULL with
 * ERR_ALLOC in err. */
static char *result_buf(size_t size, const char *what, const char *label, err_t *err)
{
    char *b = try_malloc(size);
    if (!b)
        err_set(err, ERR_ALLOC, label, 0, 0, "no host memory for NVRTC's %s (%zu bytes)", what, size);
    return b;
}

static void free_opts(char **owned, size_t ninc)
{
    for (size_t i = 0; i < 1 + (ninc < JIT_MAX_INCLUDES ? ninc : JIT_MAX_INCLUDES); i++)
        free(owned[i]);
    free(owned[1 + JIT_MAX_INCLUDES]);
}

static int do_compile(const jit_t *j, const char *prog_name, const char *source, const char **opts, size_t nopts, int arch,
                      const char *label, jit_result *res, err_t *err)
{
    nvrtcProgram prog;
    if (NVRTC_CHECK(nvrtcCreateProgram(&prog, source, prog_name, 0, NULL, NULL), err))
        return -1;
    int rc = -1;
    double t0 = now_ms();
    nvrtcResult crc = nvrtcCompileProgram(prog, (int)nopts, opts);
    res->compile_ms = now_ms() - t0;
    size_t log_size = 0;
    if (NVRTC_CHECK(nvrtcGetProgramLogSize(prog, &log_size), err))
        goto out_destroy_program;
    if (!(res->log = result_buf(log_size + 1, "log", label, err)))
        goto out_destroy_program;
    res->log[0] = '\0';
    if (NVRTC_CHECK(nvrtcGetProgramLog(prog, res->log), err))
        goto out_destroy_program;
    if (crc != NVRTC_SUCCESS && j->report.compile_failed)
        j->report.compile_failed(j->report.user, label, prog_name, arch, nvrtcGetErrorString(crc), res->log, source);
    if (crc != NVRTC_SUCCESS) {
        /* First line of the log that says "error" is the most useful one-liner. */
        const char *e = strstr(res->log, "error");
        const char *bol = e;
        while (bol && bol > res->log && bol[-1] != '\n')
            bol--;
        char first[512] = "see the log above";
        if (bol) {
            const char *eol = strchr(bol, '\n');
            snprintf(first, sizeof first, "%.*s", (int)(eol ? eol - bol : (long)strlen(bol)), bol);
        }
        char name[16];
        err_set(err, ERR_COMPILE, label, 0, 0, "NVRTC could not compile it for %s: %s", arch_name(arch, name, sizeof name),
                first);
        goto out_destroy_program;
    }
    if (NVRTC_CHECK(nvrtcGetCUBINSize(prog, &res->cubin_size), err))
        goto out_destroy_program;
    if (!(res->cubin = result_buf(res->cubin_size, "CUBIN", label, err)))
        goto out_destroy_program;
    if (NVRTC_CHECK(nvrtcGetCUBIN(prog, res->cubin), err))
        goto out_destroy_program;
    if (NVRTC_CHECK(nvrtcGetPTXSize(prog, &res->ptx_size), err))
        goto out_destroy_program;
    if (!(res->ptx = result_buf(res->ptx_size, "PTX", label, err)))
        goto out_destroy_program;
    if (NVRTC_CHECK(nvrtcGetPTX(prog, res->ptx), err))
        goto out_destroy_program;
    res->nfuncs = jit_parse_ptxas(res->log, res->funcs, JIT_MAX_FUNCS);
    rc = 0;
out_destroy_program:
    nvrtcDestroyProgram(&prog);
    return rc;
}

static void result_free(jit_result *r)
{
    free(r->cubin);
    free(r->ptx);
    free(r->log);
    memset(r, 0, sizeof *r);
}

/* Feed the headers a source includes ("..." form, found on the include path, recursively) into
 * the key: editing gemm_common.cuh must not hit CUBINs built from the old one. -1 when the host had
 * no memory (a key without a header would be wrong, not merely slow). */
static int hash_includes(sha256_ctx *h, const char *text, const char *const *dirs, size_t ndirs, char ***seen,
                          size_t *nseen, int depth)
{
    for (const char *p = strstr(text, "#include"); p && depth < 16; p = strstr(p + 8, "#include")) {
        const char *q = p + 8;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q != '"')
            continue;
        const char *end = strchr(q + 1, '"');
        const char *eol = strchr(q, '\n');
        if (!end || (eol && end > eol))
            continue;
        char *name = try_asprintf("%.*s", (int)(end - q - 1), q + 1);
        if (!name)
            return -1;
        bool dup = false;
        for (size_t i = 0; i < *nseen && !dup; i++)
            dup = strcmp((*seen)[i], name) == 0;
        if (dup) {
            free(name);
            continue;
        }
        char **grown = try_realloc(*seen, (*nseen + 1) * sizeof **seen);
        if (!grown) {
            free(name);
            return -1;
        }
        *seen = grown;
        (*seen)[(*nseen)++] = name;
        for (size_t i = 0; i < ndirs; i++) {
            char *path = try_asprintf("%s/%s", dirs[i], name);
            size_t len = 0;
            errno = 0;
            char *body = path ? try_read_file(path, &len) : NULL;
            free(path);
            if (!path || (!body && errno == ENOMEM))
                return -1;
            if (!body)
                continue;
            sha256_update(h, name, strlen(name) + 1);
            sha256_update(h, body, len + 1);
            int rc = hash_includes(h, body, dirs, ndirs, seen, nseen, depth + 1);
            free(body);
            if (rc)
                return -1;
            break;
        }
    }
    return 0;
}

/* The cache key of a compile; -1 (ERR_ALLOC in err) when the host had no memory to read its headers. */
static int make_key(const char *source, const char **opts, size_t nopts, const char *const *dirs, size_t ndirs,
                    char out[65], const char *label, err_t *err)
{
    sha256_ctx h;
    sha256_init(&h);
    const char magic[] = "engine-jit 1";
    sha256_update(&h, magic, sizeof magic);
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    char ver[32];
    int n = snprintf(ver, sizeof ver, "nvrtc %d.%d", major, minor);
    sha256_update(&h, ver, (size_t)n + 1);
    for (size_t i = 0; i < nopts; i++)
        sha256_update(&h, opts[i], strlen(opts[i]) + 1);
    sha256_update(&h, source, strlen(source) + 1);
    char **seen = NULL;
    size_t nseen = 0;
    int rc = hash_includes(&h, source, dirs, ndirs, &seen, &nseen, 0);
    for (size_t i = 0; i < nseen; i++)
        free(seen[i]);
    free(seen);
    if (rc)
        return err_set(err, ERR_ALLOC, label, 0, 0, "no host memory for the headers of the compile's key"), -1;
    uint8_t d[32];
    sha256_final(&h, d);
    sha256_hex(d, out);
    return 0;
}

/* The compile's options and key; -1 with err set (options freed by the caller either way). */
static int opts_and_key(const char *source, int arch, const char *const *include_dirs, size_t ninc, char **owned,
                        const char **opts, size_t *nopts, char key[65], const char *label, err_t *err)
{
    int n = build_opts(arch, include_dirs, ninc, owned, opts, label, err);
    if (n < 0)
        return -1;
    *nopts = (size_t)n;
    return make_key(source, opts, *nopts, include_dirs, ninc < JIT_MAX_INCLUDES ? ninc : JIT_MAX_INCLUDES, key,
                    label, err);
}

/* The disk cache for one use, held until disk_release (NULL: none). */
static const cache_t *disk_acquire(jit_t *j)
{
    pthread_mutex_lock(&j->lock);
    const cache_t *d = j->disk;
    if (d)
        j->disk_users++;
    pthread_mutex_unlock(&j->lock);
    return d;
}

static void disk_release(jit_t *j, const cache_t *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&j->lock);
    if (--j->disk_users == 0)
        pthread_cond_broadcast(&j->disk_idle);
    pthread_mutex_unlock(&j->lock);
}

/* Serve from the disk cache: 0 on a hit (res filled), -1 otherwise. A damaged entry is reported
 * and left for the caller to rebuild; -2 (ERR_ALLOC in err) when the host had no memory to read
 * it: the caller fails rather than compiles. */
static int from_disk(jit_t *j, const cache_t *disk, const char *key, jit_result *res, err_t *err)
{
    if (!disk)
        return -1;
    cache_entry e;
    err_t warn;
    err_clear(&warn);
    int rc = cache_get(disk, key, &e, &warn);
    if (rc == CACHE_NOMEM) {
        if (err && !err_isset(err))
            *err = warn;
        return -2;
    }
    if (rc == CACHE_CORRUPT || rc == CACHE_ERROR) {
        if (j->report.cache_warning) /* the entry is rebuilt either way, and counted */
            j->report.cache_warning(j->report.user, &warn);
        pthread_mutex_lock(&j->lock);
        j->stats.corrupt++;
        pthread_mutex_unlock(&j->lock);
        return -1;
    }
    if (rc != CACHE_HIT)
        return -1;
    /* The entry's buffers become the result's. */
    res->log = e.log;
    res->ptx = e.ptx;
    res->ptx_size = e.ptx_size;
    res->cubin = e.cubin;
    res->cubin_size = e.cubin_size;
    res->compile_ms = e.compile_ms;
    res->nfuncs = jit_parse_ptxas(res->log, res->funcs, JIT_MAX_FUNCS);
    return 0;
}

static void to_disk(jit_t *j, const cache_t *disk, const char *key, const jit_result *res)
{
    if (!disk)
        return;
    cache_entry e = {.log = res->log, .log_size = strlen(res->log), .ptx = res->ptx, .ptx_size = res->ptx_size,
                     .cubin = res->cubin, .cubin_size = res->cubin_size, .compile_ms = res->compile_ms};
    err_t err;
    err_clear(&err);
    /* A cache that cannot be written costs time, not correctness: say so once and go on. */
    if (cache_put(disk, key, &e, &err) && j->report.cache_warning && !__atomic_exchange_n(&j->warned, 1, __ATOMIC_RELAXED))
        j->report.cache_warning(j->report.user, &err);
}

/* Whether a failed entry failed for want of host memory, which may be had now: such a failure is
 * not kept as the compile's answer, as a failed compile is. Called with the lock held. */
static bool retry_alloc(const mem_entry *e)
{
    return e->state == ENTRY_FAILED && e->err.cause == ERR_ALLOC;
}

int jit_compile(jit_t *j, const char *prog_name, const char *source, const char *const *include_dirs, size_t ninc,
                int arch, const char *label, const jit_result **out, jit_origin *origin, err_t *err)
{
    char *owned[2 + JIT_MAX_INCLUDES] = {0};
    const char *opts[8 + JIT_MAX_INCLUDES];
    size_t nopts = 0;
    char key[65];
    if (opts_and_key(source, arch, include_dirs, ninc, owned, opts, &nopts, key, label, err)) {
        free_opts(owned, ninc);
        return -1;
    }

    pthread_mutex_lock(&j->lock);
    mem_entry *e = j->entries;
    while (e && strcmp(e->key, key) != 0)
        e = e->next;
    while (e && e->state == ENTRY_PENDING)
        pthread_cond_wait(&j->done, &j->lock);
    if (e && retry_alloc(e)) {
        e->state = ENTRY_PENDING; /* built again, in its entry: others wait on it as on a new one */
        err_clear(&e->err);
        pthread_mutex_unlock(&j->lock);
    } else if (e) {
        int rc = 0;
        if (e->state == ENTRY_FAILED) {
            if (err && !err_isset(err))
                *err = e->err;
            rc = -1;
        } else {
            j->stats.mem_hits++;
            *out = &e->res;
            if (origin)
                *origin = JIT_MEMORY;
        }
        pthread_mutex_unlock(&j->lock);
        free_opts(owned, ninc);
        return rc;
    } else {
        e = try_calloc(1, sizeof *e);
        if (!e) {
            pthread_mutex_unlock(&j->lock);
            free_opts(owned, ninc);
            return err_set(err, ERR_ALLOC, label, 0, 0, "no host memory for the compile's memory cache entry"), -1;
        }
        memcpy(e->key, key, sizeof key);
        e->state = ENTRY_PENDING;
        e->next = j->entries;
        j->entries = e;
        pthread_mutex_unlock(&j->lock);
    }

    jit_origin got = JIT_DISK;
    const cache_t *disk = disk_acquire(j);
    int rc = from_disk(j, disk, key, &e->res, &e->err);
    if (rc == -1) {
        got = JIT_COMPILED;
        pthread_mutex_lock(&j->lock);
        j->stats.nvrtc++;
        pthread_mutex_unlock(&j->lock);
        rc = do_compile(j, prog_name, source, opts, nopts, arch, label, &e->res, &e->err);
        if (rc == 0)
            to_disk(j, disk, key, &e->res);
    }
    disk_release(j, disk);
    free_opts(owned, ninc);
    memcpy(e->res.key, key, sizeof key);
    pthread_mutex_lock(&j->lock);
    if (rc) {
        result_free(&e->res);
        e->state = ENTRY_FAILED;
        if (err && !err_isset(err))
            *err = e->err;
    } else {
        e->state = ENTRY_READY;
        if (got == JIT_DISK)
            j->stats.disk_hits++;
        *out = &e->res;
        if (origin)
            *origin = got;
    }
    pthread_cond_broadcast(&j->done);
    pthread_mutex_unlock(&j->lock);
    return rc ? -1 : 0;
}

int jit_prepare(jit_t *j, const char *prog_name, const char *source, const char *const *include_dirs, size_t ninc, int arch,
                const char *label, jit_origin *origin, err_t *err)
{
    char *owned[2 + JIT_MAX_INCLUDES] = {0};
    const char *opts[8 + JIT_MAX_INCLUDES];
    size_t nopts = 0;
    char key[65];
    if (opts_and_key(source, arch, include_dirs, ninc, owned, opts, &nopts, key, label, err)) {
        free_opts(owned, ninc);
        return -1;
    }
    int rc = 0;
    pthread_mutex_lock(&j->lock);
    mem_entry *e = j->entries;
    while (e && strcmp(e->key, key) != 0)
        e = e->next;
    while (e && e->state == ENTRY_PENDING)
        pthread_cond_wait(&j->done, &j->lock);
    if (e && !retry_alloc(e)) {
        if (e->state == ENTRY_FAILED) {
            if (err && !err_isset(err))
                *err = e->err;
            rc = -1;
        }
        *origin = JIT_MEMORY;
        pthread_mutex_unlock(&j->lock);
        free_opts(owned, ninc);
        return rc;
    }
    pthread_mutex_unlock(&j->lock);
    jit_result res;
    memset(&res, 0, sizeof res);
    *origin = JIT_DISK;
    const cache_t *disk = disk_acquire(j);
    int got = from_disk(j, disk, key, &res, err);
    if (got == -2) {
        rc = -1;
    } else if (got) {
        *origin = JIT_COMPILED;
        pthread_mutex_lock(&j->lock);
        j->stats.nvrtc++;
        pthread_mutex_unlock(&j->lock);
        rc = do_compile(j, prog_name, source, opts, nopts, arch, label, &res, err);
        if (rc == 0)
            to_disk(j, disk, key, &res);
    } else {
        pthread_mutex_lock(&j->lock);
        j->stats.disk_hits++;
        pthread_mutex_unlock(&j->lock);
    }
    disk_release(j, disk);
    result_free(&res);
    free_opts(owned, ninc);
    return rc ? -1 : 0;
}

void jit_forget(jit_t *j, const jit_result *r)
{
    pthread_mutex_lock(&j->lock);
    for (mem_entry **pe = &j->entries; *pe; pe = &(*pe)->next) {
        mem_entry *e = *pe;
        if (&e->res == r && e->state == ENTRY_READY) {
            *pe = e->next;
            result_free(&e->res);
            free(e);
            break;
        }
    }
    pthread_mutex_unlock(&j->lock);
}

void jit_set_cache(jit_t *j, const cache_t *c)
{
    pthread_mutex_lock(&j->lock);
    while (j->disk_users)
        pthread_cond_wait(&j->disk_idle, &j->lock);
    j->disk = c;
    pthread_mutex_unlock(&j->lock);
}

void jit_set_reporter(jit_t *j, const jit_reporter *r)
{
    if (r)
        j->report = *r;
    else
        memset(&j->report, 0, sizeof j->report);
}

void jit_get_stats(jit_t *j, jit_stats *s)
{
    pthread_mutex_lock(&j->lock);
    *s = j->stats;
    pthread_mutex_unlock(&j->lock);
}

void jit_cache_free(jit_t *j)
{
    pthread_mutex_lock(&j->lock);
    while (j->entries) {
        mem_entry *e = j->entries;
        j->entries = e->next;
        result_free(&e->res);
        free(e);
    }
    memset(&j->stats, 0, sizeof j->stats);
    pthread_mutex_unlock(&j->lock);
}
