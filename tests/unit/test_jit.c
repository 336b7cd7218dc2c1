/* test_jit.c — NVRTC to CUBIN without a GPU, the resource report, the cache, compile errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "jit.h"

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
    err_t err;
    err_clear(&err);
    assert_int_equal(jit_compile("t.cu", k_src, NULL, 0, 80, "test", &r1, &err), 0);
    assert_true(r1->cubin_size > 0);
    assert_true(r1->ptx_size > 0 && strstr(r1->ptx, ".entry gemm"));
    const jit_func_info *f = jit_func(r1, "gemm");
    assert_non_null(f);
    assert_true(f->regs > 0);
    assert_int_equal(f->smem_static, 256);
    assert_false(r1->from_cache);
    assert_int_equal(jit_compile("t.cu", k_src, NULL, 0, 80, "test", &r2, &err), 0);
    assert_ptr_equal(r1, r2);
    assert_true(r2->from_cache);
    /* Another architecture is another entry. */
    assert_int_equal(jit_compile("t.cu", k_src, NULL, 0, 86, "test", &r2, &err), 0);
    assert_ptr_not_equal(r1, r2);
    jit_cache_free();
}

static void test_compile_error(void **state)
{
    (void)state;
    const jit_result *r;
    err_t err;
    err_clear(&err);
    FILE *saved = stderr;
    stderr = fopen("/dev/null", "w"); /* the banner and numbered source are for people */
    int rc = jit_compile("bad.cu", "extern \"C\" __global__ void gemm() { undeclared = 1; }\n", NULL, 0, 80,
                         "configs/bad.json", &r, &err);
    fclose(stderr);
    stderr = saved;
    assert_int_equal(rc, -1);
    assert_int_equal(err.code, EXIT_INPUT);
    assert_string_equal(err.source, "configs/bad.json");
    assert_non_null(strstr(err.text, "undeclared"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_ptxas),
        cmocka_unit_test(test_compile_and_cache),
        cmocka_unit_test(test_compile_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
