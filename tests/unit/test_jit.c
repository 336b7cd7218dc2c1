/* test_jit.c — NVRTC to CUBIN without a GPU, the resource report, the memory and disk caches (keys
 * that follow included headers, one compile for concurrent requests), compile errors, and two jit_t
 * (two library contexts) sharing nothing but the disk cache's directory, host memory running out. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "jit.h"
#include "util.h"

static jit_t *J; /* the tests' compiler (main) */

static const char *k_log = "ptxas info    : 0 bytes gmem\n"
                           "ptxas info    : Compiling entry function 'scale_c' for 'sm_90'\n"
                           "ptxas info    : Function properties for scale_c\n"
                           "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
                           "ptxas info    : Used 10 registers, used 0 barriers\n"
                           "ptxas info    : Compiling entry function 'gemm' for 'sm_90'\n"
                           "ptxas info    : Function properties for gemm\n"
                           "ptxas         .     24 bytes stack frame, 20 bytes spill stores, 16 bytes spill loads\n"
                           "ptxas info    : Used 168 registers, used 1 barriers, 8192 bytes smem, 400 bytes cmem[0]\n";

static void test_parse_ptxas(void **state)
{
    (void)state;
    jit_func_info f[4];
    assert_int_equal(jit_parse_ptxas(k_log, f, 4), 2);
    assert_string_equal(f[1].name, "gemm");
    assert_int_equal(f[1].regs, 168);
    assert_int_equal(f[1].stack, 24);
    assert_int_equal(f[1].spill_stores, 20);
    assert_int_equal(f[1].spill_loads, 16);
    assert_int_equal(f[1].smem_static, 8192);
    assert_int_equal(f[1].barriers, 1);
    assert_int_equal(f[0].regs, 10);
    assert_int_equal(f[0].smem_static, 0);
}

static const char *k_src = "extern \"C\" __global__ void gemm(float *a) {\n"
                           "  __shared__ float s[64];\n"
                           "  s[threadIdx.x] = a[threadIdx.x];\n"
                           "  __syncthreads();\n"
                           "  a[threadIdx.x] = s[63 - threadIdx.x] * 2.0f;\n"
                           "}\n";

static void test_compile_and_cache(void **state)
{
    (void)state;
    const jit_result *r1, *r2;
    jit_origin o1, o2;
    err_t err;
    err_clear(&err);
    assert_int_equal(jit_compile(J, "t.cu", k_src, NULL, 0, 80, "test", &r1, &o1, &err), 0);
    assert_true(r1->cubin_size > 0);
    assert_true(r1->ptx_size > 0 && strstr(r1->ptx, ".entry gemm"));
    const jit_func_info *f = jit_func(r1, "gemm");
    assert_non_null(f);
    assert_true(f->regs > 0);
    assert_int_equal(f->smem_static, 256);
    assert_int_equal(o1, JIT_COMPILED);
    assert_int_equal(jit_compile(J, "t.cu", k_src, NULL, 0, 80, "test", &r2, &o2, &err), 0);
    assert_ptr_equal(r1, r2);
    assert_int_equal(o2, JIT_MEMORY);
    /* Another architecture is another entry. */
    assert_int_equal(jit_compile(J, "t.cu", k_src, NULL, 0, 86, "test", &r2, &o2, &err), 0);
    assert_ptr_not_equal(r1, r2);
    assert_int_equal(o2, JIT_COMPILED);
    jit_stats st;
    jit_get_stats(J, &st);
    assert_int_equal(st.nvrtc, 2);
    assert_int_equal(st.mem_hits, 1);
    jit_cache_free(J);
}

static void test_compile_error(void **state)
{
    (void)state;
    const jit_result *r;
    err_t err;
    err_clear(&err);
    FILE *saved = stderr;
    stderr = fopen("/dev/null", "w"); /* the banner and numbered source are for people */
    int rc = jit_compile(J, "bad.cu", "extern \"C\" __global__ void gemm() { undeclared = 1; }\n", NULL, 0, 80,
                         "configs/bad.json", &r, NULL, &err);
    /* A failure is remembered: asking again gives the same error without compiling again. */
    err_t err2;
    err_clear(&err2);
    int rc2 = jit_compile(J, "bad.cu", "extern \"C\" __global__ void gemm() { undeclared = 1; }\n", NULL, 0, 80,
                          "configs/bad.json", &r, NULL, &err2);
    fclose(stderr);
    stderr = saved;
    assert_int_equal(rc, -1);
    assert_int_equal(rc2, -1);
    assert_int_equal(err.code, EXIT_INPUT);
    assert_string_equal(err.source, "configs/bad.json");
    assert_non_null(strstr(err.text, "undeclared"));
    assert_string_equal(err2.text, err.text);
    jit_stats st;
    jit_get_stats(J, &st);
    assert_int_equal(st.nvrtc, 1);
    jit_cache_free(J);
}

static char *write_header(const char *dir, const char *body)
{
    char *path = NULL;
    assert_true(asprintf(&path, "%s/part.cuh", dir) > 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(body, f);
    fclose(f);
    return path;
}

/* The disk cache: a second process (here: an emptied memory cache) gets the CUBIN without NVRTC,
 * and editing an included header changes the key. */
static void test_disk_cache(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/engine-jit-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    char *cdir = NULL;
    assert_true(asprintf(&cdir, "%s/cache", tmpl) > 0);
    cache_t c;
    err_t err;
    err_clear(&err);
    assert_int_equal(cache_open(&c, cdir, &err), 0);
    jit_set_cache(J, &c);
    char *hdr = write_header(tmpl, "#define SCALE 2.0f\n");
    const char *dirs[] = {tmpl};
    const char *src = "#include \"part.cuh\"\nextern \"C\" __global__ void gemm(float *a) { a[threadIdx.x] *= SCALE; }\n";
    const jit_result *r;
    jit_origin o;
    assert_int_equal(jit_compile(J, "d.cu", src, dirs, 1, 80, "test", &r, &o, &err), 0);
    assert_int_equal(o, JIT_COMPILED);
    char key1[65];
    memcpy(key1, r->key, sizeof key1);
    size_t size1 = r->cubin_size;
    jit_cache_free(J);
    assert_int_equal(jit_compile(J, "d.cu", src, dirs, 1, 80, "test", &r, &o, &err), 0);
    assert_int_equal(o, JIT_DISK);
    assert_string_equal(r->key, key1);
    assert_int_equal(r->cubin_size, size1);
    assert_non_null(jit_func(r, "gemm")); /* the resource report survives the cache */
    jit_stats st;
    jit_get_stats(J, &st);
    assert_int_equal(st.nvrtc, 0);
    assert_int_equal(st.disk_hits, 1);
    /* The same source with another header is another kernel. */
    free(write_header(tmpl, "#define SCALE 3.0f\n"));
    jit_cache_free(J);
    assert_int_equal(jit_compile(J, "d.cu", src, dirs, 1, 80, "test", &r, &o, &err), 0);
    assert_int_equal(o, JIT_COMPILED);
    assert_string_not_equal(r->key, key1);
    jit_cache_free(J);
    jit_set_cache(J, NULL);
    cache_close(&c);
    char *cmd = NULL;
    assert_true(asprintf(&cmd, "rm -rf %s", tmpl) > 0);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(hdr);
    free(cdir);
}

typedef struct {
    const char *src;
    const jit_result *r;
    int rc;
} compile_arg;

static void *compile_thread(void *p)
{
    compile_arg *a = p;
    err_t err;
    err_clear(&err);
    a->rc = jit_compile(J, "c.cu", a->src, NULL, 0, 80, "test", &a->r, NULL, &err);
    return NULL;
}

/* Threads asking for the same source at once: one NVRTC compile, one result for all. */
static void test_concurrent_same_source(void **state)
{
    (void)state;
    compile_arg a[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (compile_arg){k_src, NULL, -1};
        assert_int_equal(pthread_create(&th[i], NULL, compile_thread, &a[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    jit_stats st;
    jit_get_stats(J, &st);
    assert_int_equal(st.nvrtc, 1);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(a[i].rc, 0);
        assert_ptr_equal(a[i].r, a[0].r);
    }
    jit_cache_free(J);
}

typedef struct {
    int n, bad, disk;
} prepare_arg;

static void *prepare_thread(void *p)
{
    prepare_arg *a = p;
    for (int i = 0; i < a->n; i++) {
        err_t err;
        err_clear(&err);
        jit_origin o = JIT_MEMORY;
        if (jit_prepare(J, "p.cu", k_src, NULL, 0, 80, "test", &o, &err))
            a->bad++;
        a->disk += o == JIT_DISK;
    }
    return NULL;
}

/* The disk cache replaced while other threads read it (a library context going while another's
 * background builds run): jit_set_cache waits for the readers, so the old cache may be freed right
 * after it (make sanitize: a read of a freed cache is a use after free). jit_prepare reads the disk
 * on every call (it keeps nothing in memory). */
static void test_cache_replaced_under_readers(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/engine-jit-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    cache_t *cur = malloc(sizeof *cur);
    err_t err;
    err_clear(&err);
    assert_int_equal(cache_open(cur, tmpl, &err), 0);
    jit_set_cache(J, cur);
    jit_origin o;
    assert_int_equal(jit_prepare(J, "p.cu", k_src, NULL, 0, 80, "test", &o, &err), 0);
    assert_int_equal(o, JIT_COMPILED);
    prepare_arg a[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (prepare_arg){150, 0, 0};
        assert_int_equal(pthread_create(&th[i], NULL, prepare_thread, &a[i]), 0);
    }
    for (int i = 0; i < 150; i++) { /* a new cache over the same directory, the old one freed */
        cache_t *next = malloc(sizeof *next);
        assert_int_equal(cache_open(next, tmpl, &err), 0);
        jit_set_cache(J, next);
        cache_close(cur);
        memset(cur, 0xa5, sizeof *cur);
        free(cur);
        cur = next;
    }
    int disk = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(a[i].bad, 0);
        disk += a[i].disk;
    }
    assert_int_equal(disk, 4 * 150); /* every one found it on disk: no second compile */
    jit_stats st;
    jit_get_stats(J, &st);
    assert_int_equal(st.nvrtc, 1);
    jit_set_cache(J, NULL);
    cache_close(cur);
    free(cur);
    jit_cache_free(J);
    char *cmd = NULL;
    assert_true(asprintf(&cmd, "rm -rf %s", tmpl) > 0);
    assert_int_equal(system(cmd), 0);
    free(cmd);
}

/* Two compilers are two contexts' state: a compile in one is not in the other's memory or counts,
 * a failure remembered by one is not the other's, and freeing one leaves the other's results. */
static void test_two_jits_share_nothing(void **state)
{
    (void)state;
    jit_t *a = jit_new(), *b = jit_new();
    assert_non_null(a);
    assert_non_null(b);
    const jit_result *ra, *rb;
    jit_origin oa, ob;
    err_t err;
    err_clear(&err);
    assert_int_equal(jit_compile(a, "t.cu", k_src, NULL, 0, 80, "test", &ra, &oa, &err), 0);
    assert_int_equal(jit_compile(b, "t.cu", k_src, NULL, 0, 80, "test", &rb, &ob, &err), 0);
    assert_int_equal(oa, JIT_COMPILED);
    assert_int_equal(ob, JIT_COMPILED); /* not a's memory */
    assert_ptr_not_equal(ra, rb);
    assert_string_equal(ra->key, rb->key);
    jit_stats sa, sb;
    jit_get_stats(a, &sa);
    jit_get_stats(b, &sb);
    assert_int_equal(sa.nvrtc, 1);
    assert_int_equal(sb.nvrtc, 1);
    assert_int_equal(sb.mem_hits, 0);
    jit_free(a); /* b's result stays b's */
    assert_true(rb->cubin_size > 0 && strstr(rb->ptx, ".entry gemm"));
    assert_int_equal(jit_compile(b, "t.cu", k_src, NULL, 0, 80, "test", &ra, &ob, &err), 0);
    assert_ptr_equal(ra, rb);
    assert_int_equal(ob, JIT_MEMORY);
    jit_free(b);
    jit_free(NULL);
}

/* Host memory that runs out in a compile (its options, its memory cache entry, NVRTC's log, CUBIN and
 * PTX copied out) is an error (ERR_ALLOC) naming what it was for, not an exit; and such a failure is
 * not kept as the source's answer, as a failed compile is: the next request compiles again. */
static void test_out_of_memory(void **state)
{
    (void)state;
    strbuf seen;
    sb_init(&seen);
    const jit_result *r = NULL;
    jit_origin o;
    int n = 0, rc = -1;
    for (; n < 64 && rc; n++) { /* a fresh jit_t each time: the nth allocation of one first compile */
        jit_t *j = jit_new();
        err_t err;
        err_clear(&err);
        util_try_fail_after(n);
        rc = jit_compile(j, "t.cu", k_src, NULL, 0, 80, "test", &r, &o, &err);
        util_try_fail_after(-1);
        if (rc) {
            assert_int_equal(err.cause, ERR_ALLOC);
            assert_string_equal(err.source, "test");
            sb_addf(&seen, "%s\n", err.text);
        } else {
            assert_int_equal(o, JIT_COMPILED);
            assert_true(r->cubin_size > 0 && strstr(r->ptx, ".entry gemm"));
        }
        jit_free(j);
    }
    assert_int_equal(rc, 0);
    const char *sites[] = {"no host memory for NVRTC's options", "no host memory for the compile's memory cache entry",
                           "no host memory for NVRTC's log", "no host memory for NVRTC's CUBIN",
                           "no host memory for NVRTC's PTX", NULL};
    for (const char **site = sites; *site; site++)
        if (!strstr(seen.buf, *site))
            fail_msg("no failure at %s; failures: %s", *site, seen.buf);
    sb_free(&seen);
    /* The entry that failed for memory compiles again on the next request. */
    jit_t *j = jit_new();
    err_t err;
    err_clear(&err);
    util_try_fail_after(2); /* the options, the entry, then not the log */
    assert_int_equal(jit_compile(j, "t.cu", k_src, NULL, 0, 80, "test", &r, &o, &err), -1);
    util_try_fail_after(-1);
    assert_non_null(strstr(err.text, "NVRTC's log"));
    err_clear(&err);
    assert_int_equal(jit_compile(j, "t.cu", k_src, NULL, 0, 80, "test", &r, &o, &err), 0);
    assert_int_equal(o, JIT_COMPILED);
    jit_stats st;
    jit_get_stats(j, &st);
    assert_int_equal(st.nvrtc, 2);
    jit_free(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_ptxas),
        cmocka_unit_test(test_compile_and_cache),
        cmocka_unit_test(test_compile_error),
        cmocka_unit_test(test_disk_cache),
        cmocka_unit_test(test_concurrent_same_source),
        cmocka_unit_test(test_cache_replaced_under_readers),
        cmocka_unit_test(test_two_jits_share_nothing),
        cmocka_unit_test(test_out_of_memory),
    };
    J = jit_new();
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    jit_free(J);
    return rc;
}
