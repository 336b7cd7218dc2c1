/* jit.c — NVRTC compilation, ptxas resource parsing, in-memory cache. */
#include "jit.h"

#include "util.h"

#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every NVRTC call goes through this, so a failure names the call that failed. */
static int nvrtc_check(nvrtcResult rc, const char *call, const char *file, int line, err_t *err)
{
    if (rc == NVRTC_SUCCESS)
        return 0;
    return err_set(err, EXIT_SYSTEM, file, line, 0, "%s failed: %s", call, nvrtcGetErrorString(rc));
}
#define NVRTC_CHECK(call, err) nvrtc_check((call), #call, __FILE__, __LINE__, (err))

typedef struct cache_entry {
    uint64_t key;
    char *source; /* compared in full: the hash only picks the bucket */
    int arch;
    jit_result res;
    struct cache_entry *next;
} cache_entry;

static cache_entry *g_cache;

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

static int do_compile(const char *prog_name, const char *source, const char *const *include_dirs, size_t ninc,
                      int arch, const char *label, jit_result *res, err_t *err)
{
    nvrtcProgram prog;
    if (NVRTC_CHECK(nvrtcCreateProgram(&prog, source, prog_name, 0, NULL, NULL), err))
        return -1;
    char opt_arch[32];
    snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=sm_%d", arch);
    /* -lineinfo: profilers and compute-sanitizer map SASS back to template lines (#line keeps them
     * the template's own). -Xptxas -v: the resource report, without a GPU. */
    const char *opts[6 + JIT_MAX_INCLUDES] = {opt_arch, "-lineinfo", "--ptxas-options=-v", "--std=c++17"};
    int nopts = 4;
    /* Since 12.9 NVRTC reuses CUBINs from the driver's compute cache, and a cache hit comes back
     * without ptxas's resource report (and with a compile time that measures nothing). */
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) == NVRTC_SUCCESS && (major > 12 || (major == 12 && minor >= 9)))
        opts[nopts++] = "--no-cache";
    char *inc[JIT_MAX_INCLUDES];
    size_t ni = ninc < JIT_MAX_INCLUDES ? ninc : JIT_MAX_INCLUDES;
    for (size_t i = 0; i < ni; i++)
        opts[nopts++] = inc[i] = xasprintf("--include-path=%s", include_dirs[i]);
    int rc = -1;
    double t0 = now_ms();
    nvrtcResult crc = nvrtcCompileProgram(prog, nopts, opts);
    for (size_t i = 0; i < ni; i++)
        free(inc[i]);
    res->compile_ms = now_ms() - t0;
    size_t log_size = 0;
    if (NVRTC_CHECK(nvrtcGetProgramLogSize(prog, &log_size), err))
        goto out_destroy_program;
    res->log = xmalloc(log_size + 1);
    res->log[0] = '\0';
    if (NVRTC_CHECK(nvrtcGetProgramLog(prog, res->log), err))
        goto out_destroy_program;
    if (crc != NVRTC_SUCCESS) {
        fprintf(stderr, "==== compile of config %s (program %s, sm_%d) failed: %s ====\n", label, prog_name,
                arch, nvrtcGetErrorString(crc));
        fprintf(stderr, "%s\n---- pasted source ----\n", res->log);
        jit_print_numbered(stderr, source);
        fprintf(stderr, "==== end of %s ====\n", prog_name);
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
        err_set(err, EXIT_INPUT, label, 0, 0, "NVRTC could not compile it for sm_%d: %s", arch, first);
        goto out_destroy_program;
    }
    if (NVRTC_CHECK(nvrtcGetCUBINSize(prog, &res->cubin_size), err))
        goto out_destroy_program;
    res->cubin = xmalloc(res->cubin_size);
    if (NVRTC_CHECK(nvrtcGetCUBIN(prog, res->cubin), err))
        goto out_destroy_program;
    if (NVRTC_CHECK(nvrtcGetPTXSize(prog, &res->ptx_size), err))
        goto out_destroy_program;
    res->ptx = xmalloc(res->ptx_size);
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

int jit_compile(const char *prog_name, const char *source, const char *const *include_dirs, size_t ninc,
                int arch, const char *label, const jit_result **out, err_t *err)
{
    uint64_t key = hash64(source, strlen(source), (uint64_t)arch);
    for (cache_entry *e = g_cache; e; e = e->next) {
        if (e->key == key && e->arch == arch && strcmp(e->source, source) == 0) {
            e->res.from_cache = true;
            *out = &e->res;
            return 0;
        }
    }
    cache_entry *e = xcalloc(1, sizeof *e);
    if (do_compile(prog_name, source, include_dirs, ninc, arch, label, &e->res, err)) {
        result_free(&e->res);
        free(e);
        return -1;
    }
    e->key = key;
    e->arch = arch;
    e->source = xstrdup(source);
    e->next = g_cache;
    g_cache = e;
    *out = &e->res;
    return 0;
}

void jit_cache_free(void)
{
    while (g_cache) {
        cache_entry *e = g_cache;
        g_cache = e->next;
        result_free(&e->res);
        free(e->source);
        free(e);
    }
}
