/* test_rank.c — ranking the points of a log (finalists first, then by time, one per key), cuBLAS's
 * median time, and the printed table. */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rank.h"
#include "result.h"
#include "rows.h"

static void test_rank_and_print(void **state)
{
    (void)state;
    result_row rows[9];
    make_row(&rows[0], 32, 1, "ok", 2.0);   /* A: stage 1 ... */
    make_row(&rows[1], 32, 2, "ok", 2.5);   /* ... its stage-2 row counts, and finalists rank first */
    make_row(&rows[2], 64, 1, "ok", 1.0);   /* B */
    make_row(&rows[3], 16, 1, "FAIL", -1);  /* C: failed, left out */
    make_row(&rows[4], 96, 1, "ok", 1.0);   /* D: ties with B, after it by key */
    make_row(&rows[5], 8, 0, "pruned", -1); /* E: left out */
    make_row(&rows[6], 48, 2, "fault", -1); /* F: the stage-2 run faulted ... */
    make_row(&rows[7], 48, 1, "ok", 3.0);   /* ... so its stage-1 row is ranked */
    make_row(&rows[8], 64, 1, "ok", 0.5);   /* B again, same stage: the first one wins */
    size_t n;
    const result_row **ranked = rank_rows(rows, 9, &n);
    assert_int_equal(n, 4);
    assert_ptr_equal(ranked[0], &rows[1]);
    assert_ptr_equal(ranked[1], &rows[2]);
    assert_ptr_equal(ranked[2], &rows[4]);
    assert_ptr_equal(ranked[3], &rows[7]);
    assert_true(strcmp(rows[2].key, rows[4].key) < 0);

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    rank_print(f, ranked, n, 3);
    fclose(f);
    assert_non_null(strstr(buf, "top 3 of 4 points ranked; common to every row shown: BN=64 BK=16 TM=8 TN=4 "
                                "THREADS=128\n"));
    assert_non_null(strstr(buf, "rank  TFLOP/s        ms  spread % cuBLAS stage  runs  regs   occ  configuration\n"));
    assert_non_null(strstr(buf, "   1    54.98    2.5000    2.0%    107.2     2    10   128   25%  BM=32\n"));
    assert_non_null(strstr(buf, "   2   137.44    1.0000    2.0%    268.0     1     3   128   25%  BM=64\n"));
    assert_null(strstr(buf, "BM=48"));
    free(buf);
    buf = NULL;
    f = open_memstream(&buf, &len);
    rank_print(f, ranked, 0, 10);
    fclose(f);
    assert_string_equal(buf, "no point has status ok: nothing to rank\n");
    free(buf);
    free(ranked);
    for (int i = 0; i < 9; i++)
        result_row_free(&rows[i]);
}

static void test_cublas_median(void **state)
{
    (void)state;
    result_row rows[6];
    make_row(&rows[0], 32, 2, "ok", 1.0);
    make_row(&rows[1], 48, 2, "ok", 1.1);
    make_row(&rows[2], 64, 2, "ok", 1.2);
    make_row(&rows[3], 96, 2, "ok", 1.3);
    make_row(&rows[4], 16, 1, "ok", 0.9);   /* stage 1: not counted while finalists have one */
    make_row(&rows[5], 8, 2, "FAIL", -1);   /* failed: not counted */
    rows[0].cublas_ms = 3.86;
    rows[1].cublas_ms = 27.97; /* the outlier one finalist saw at 64^3 f64 */
    rows[2].cublas_ms = 3.85;
    rows[3].cublas_ms = 3.87;
    rows[4].cublas_ms = 1.0;
    rows[5].cublas_ms = 1.0;
    assert_float_equal(rank_cublas_ms(rows, 6), 3.865, 1e-12); /* median of 3.85 3.86 3.87 27.97 */
    assert_float_equal(rank_cublas_ms(rows, 3), 3.86, 1e-12);  /* odd count: the middle one */
    assert_float_equal(rank_cublas_ms(&rows[4], 1), 1.0, 1e-12); /* no finalist: stage 1 */
    assert_float_equal(rank_cublas_ms(&rows[5], 1), -1, 1e-12);  /* none */
    for (int i = 0; i < 6; i++)
        result_row_free(&rows[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank_and_print),
        cmocka_unit_test(test_cublas_median),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
