#define _GNU_SOURCE
/* test_report.c — table, CSV, JSON Lines and Markdown rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "report.h"

static report_row row(const char *name, double ms, int regs)
{
    report_row r = {.config = name, .tmpl = regs < 0 ? "cublas" : "blocktile", .dtype = "f32", .M = 2048,
                    .N = 2048, .K = 2048, .alpha = 1, .beta = 0, .status = "ok", .ms = ms, .ms_min = ms,
                    .ms_max = ms, .tflops = 17.18 / ms, .pct_ref = 50, .pct_peak = 25, .regs = regs,
                    .spill_bytes = 0, .smem_bytes = 33024, .threads = 128, .occ_blocks = 3, .occ_pct = 18.75,
                    .pdl = regs < 0 ? -1 : 1,
                    .clock_mhz = 1980, .floor_ms = 0.3, .bound = "flop", .max_ratio = 0.01,
                    .switches = "FULL_M=1", .params = "BM=64", .args = "engine bench \"x\""};
    return r;
}

static char *render(report_format fmt, const report_row *rows, int n)
{
    static char buf[8192];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    report_t r;
    report_init(&r, fmt, f);
    report_note(&r, "note line");
    for (int i = 0; i < n; i++)
        report_row_print(&r, &rows[i]);
    fclose(f);
    return buf;
}

static void test_csv(void **state)
{
    (void)state;
    report_row rows[2] = {row("a", 1.0, 168), row("b", 0.5, 96)};
    char *s = render(FORMAT_CSV, rows, 2);
    assert_true(strncmp(s, "config,template,dtype,M,N,K,", 28) == 0); /* header once, no note */
    assert_null(strstr(s, "note line"));
    assert_non_null(strstr(s, "\n\"a\",\"blocktile\",\"f32\",2048,2048,2048,1,0,\"ok\",1.000000,"));
    /* quotes doubled; the layout last: packed NN with one product where the row gives none */
    assert_non_null(strstr(s, "\"engine bench \"\"x\"\"\",NN,2048,2048,2048,1\n"));
    int lines = 0;
    for (char *p = s; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 3);
}

static void test_jsonl(void **state)
{
    (void)state;
    report_row rows[1] = {row("a", 2.0, 168)};
    char *s = render(FORMAT_JSONL, rows, 1);
    assert_true(s[0] == '{');
    assert_non_null(strstr(s, "\"config\":\"a\""));
    assert_non_null(strstr(s, "\"regs\":168"));
    assert_non_null(strstr(s, "\"beta\":0,\"op\":\"NN\",\"lda\":2048,\"ldb\":2048,\"ldc\":2048,\"batch\":1,\"status\""));
    assert_non_null(strstr(s, "\"pdl\":true,\"switches\""));
    rows[0].pdl = -1; /* unknown (cuBLAS): no key */
    s = render(FORMAT_JSONL, rows, 1);
    assert_null(strstr(s, "\"pdl\""));
    assert_non_null(strstr(s, "\"args\":\"engine bench \\\"x\\\"\"}\n"));
    /* A row's own layout. */
    layout_t l;
    layout_packed(&l, 1, 0, 2048, 2048, 2048, 3);
    l.ldc = 2056;
    rows[0].lay = &l;
    s = render(FORMAT_JSONL, rows, 1);
    assert_non_null(strstr(s, "\"op\":\"TN\",\"lda\":2048,\"ldb\":2048,\"ldc\":2056,\"batch\":3,"));
    s = render(FORMAT_CSV, rows, 1);
    assert_non_null(strstr(s, ",TN,2048,2048,2056,3\n"));
}

static void test_md_step_gain(void **state)
{
    (void)state;
    report_row rows[3] = {row("a", 2.0, 168), row("b", 1.0, 96), row("cublas", 0.5, -1)};
    char *s = render(FORMAT_MD, rows, 3);
    assert_non_null(strstr(s, "| 0 | a | 2.000 |"));
    assert_non_null(strstr(s, "| 1 | b | 1.000 | 17.18 | 50.0 | 25.0 | 2.00x | 0.300 (flop) | 96 | 33024 | 3×128 (19%) |"));
    assert_non_null(strstr(s, "|  | cublas | 0.500 |"));
}

static void test_table(void **state)
{
    (void)state;
    report_row rows[1] = {row("bank_pad_vec", 0.6, 168)};
    char *s = render(FORMAT_TABLE, rows, 1);
    assert_true(strncmp(s, "note line\nconfig ", 17) == 0);
    assert_non_null(strstr(s, "bank_pad_vec"));
    assert_non_null(strstr(s, "0.3000 flop"));
    assert_int_equal(report_format_parse("jsonl"), FORMAT_JSONL);
    assert_int_equal(report_format_parse("xml"), -1);
}

/* Board power: a number where NVML had a long enough window, null (JSON), empty (CSV) or "-"
 * (table) where it did not; never a made-up 0. */
static void test_power(void **state)
{
    (void)state;
    report_row rows[2] = {row("a", 2.0, 168), row("cublas", 1.0, -1)};
    rows[0].power_w = 612.46;
    rows[1].power_w = -1;
    char *s = render(FORMAT_JSONL, rows, 2);
    assert_non_null(strstr(s, "\"clock_mhz\":1980,\"power_w\":612.5,\"floor_ms\""));
    assert_non_null(strstr(s, "\"clock_mhz\":1980,\"power_w\":null,\"floor_ms\""));
    s = render(FORMAT_CSV, rows, 2);
    assert_non_null(strstr(s, ",clock_mhz,power_w,floor_ms,"));
    assert_non_null(strstr(s, ",1980,612.5,0.300000,"));
    assert_non_null(strstr(s, ",1980,,0.300000,"));
    s = render(FORMAT_TABLE, rows, 2);
    assert_non_null(strstr(s, " MHz     W cubin"));
    assert_non_null(strstr(s, "  1980   612 "));
    assert_non_null(strstr(s, "  1980     - "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv),
        cmocka_unit_test(test_jsonl),
        cmocka_unit_test(test_md_step_gain),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_power),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
