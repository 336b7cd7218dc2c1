/* test_tunelog.c — the append-only log file: a new log and one that is not, resume and lookup, a
 * cut tail, a short write, a corrupt line, a last line without its newline, concurrent writers. */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "result.h"
#include "tunelog.h"
#include "util.h"
#include "rows.h"

static off_t file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_size;
}

/* Append n rows (bm = first, first+1, ...) to a new log at path; returns the file. */
static void write_log(const char *path, int64_t first, size_t n, int stage)
{
    tunelog_t l;
    err_t err;
    err_clear(&err);
    assert_int_equal(tunelog_open(&l, path, false, &err), 0);
    for (size_t i = 0; i < n; i++) {
        result_row r;
        make_row(&r, first + (int64_t)i, stage, "ok", 3.0 + (double)i);
        assert_int_equal(tunelog_append(&l, &r, &err), 0);
        result_row_free(&r);
    }
    tunelog_close(&l);
}

static void test_open_new_and_refuse_existing(void **state)
{
    (void)state;
    char *path = in_dir("tune.jsonl");
    tunelog_t l;
    err_t err;
    err_clear(&err);
    assert_int_equal(tunelog_open(&l, path, false, &err), 0);
    assert_int_equal(l.nrows, 0);
    assert_false(l.truncated_tail);
    tunelog_close(&l);
    assert_int_equal(file_size(path), 0);
    assert_int_equal(tunelog_open(&l, path, false, &err), 0); /* empty: fine */
    tunelog_close(&l);
    write_log(path, 1, 2, 1);
    assert_int_equal(tunelog_open(&l, path, false, &err), -1);
    assert_int_equal(err.code, EXIT_INPUT);
    assert_int_equal(l.fd, -1);
    char buf[2048], want[1024];
    err_format(&err, buf, sizeof buf);
    snprintf(want, sizeof want, "%s: already holds 2 results; pass --resume to continue it or choose another --log",
             path);
    assert_string_equal(buf, want);
    err_clear(&err);
    char *nodir = in_dir("no/such/dir.jsonl");
    assert_int_equal(tunelog_open(&l, nodir, true, &err), -1);
    assert_non_null(strstr(err.text, "cannot open the log"));
    free(nodir);
    free(path);
}

static void test_resume_and_lookup(void **state)
{
    (void)state;
    char *path = in_dir("tune.jsonl");
    tunelog_t l;
    err_t err;
    err_clear(&err);
    assert_int_equal(tunelog_open(&l, path, false, &err), 0);
    result_row r;
    make_row(&r, 128, 1, "ok", 3.0); /* A, stage 1 */
    char *key_a = xstrdup(r.key);
    assert_int_equal(tunelog_append(&l, &r, &err), 0);
    result_row_free(&r);
    make_row(&r, 128, 2, "ok", 2.9); /* A, stage 2 */
    assert_int_equal(tunelog_append(&l, &r, &err), 0);
    result_row_free(&r);
    make_row(&r, 7, 0, "pruned", -1); /* B, stage 0 */
    char *key_b = xstrdup(r.key);
    assert_int_equal(tunelog_append(&l, &r, &err), 0);
    result_row_free(&r);
    make_row(&r, 128, 1, "ok", 9.0); /* A, stage 1 again: the first one wins */
    assert_int_equal(tunelog_append(&l, &r, &err), 0);
    result_row_free(&r);
    for (int i = 0; i < 300; i++) { /* enough to grow the index a few times */
        make_row(&r, 1000 + i, 1, "ok", 1.0 + i);
        assert_int_equal(tunelog_append(&l, &r, &err), 0);
        result_row_free(&r);
    }
    /* A row the log could not read back is refused, and nothing is written. */
    off_t before = file_size(path);
    make_row(&r, 1, 1, "bogus", 1.0);
    assert_int_equal(tunelog_append(&l, &r, &err), -1);
    assert_int_equal(err.code, EXIT_INPUT);
    assert_non_null(strstr(err.text, "refusing to append a row the log could not read back: \"status\" must be"));
    result_row_free(&r);
    assert_int_equal(file_size(path), before);
    assert_int_equal(l.nrows, 304);
    assert_int_equal(tunelog_lookup(&l, key_a, -1)->stage, 2);
    tunelog_close(&l);

    err_clear(&err);
    assert_int_equal(tunelog_open(&l, path, true, &err), 0);
    assert_int_equal(l.nrows, 304);
    assert_int_equal(l.nresumed, 304);
    assert_false(l.truncated_tail);
    const result_row *x = tunelog_lookup(&l, key_a, 1);
    assert_non_null(x);
    assert_true(x->ms == 3.0);
    x = tunelog_lookup(&l, key_a, 2);
    assert_true(x && x->ms == 2.9);
    x = tunelog_lookup(&l, key_a, -1);
    assert_true(x && x->stage == 2);
    x = tunelog_lookup(&l, key_b, -1);
    assert_true(x && x->stage == 0 && strcmp(x->status, "pruned") == 0);
    assert_null(tunelog_lookup(&l, key_b, 1));
    assert_null(tunelog_lookup(&l, "no such point", -1));
    for (int i = 0; i < 300; i++) {
        make_row(&r, 1000 + i, 1, "ok", 1.0);
        x = tunelog_lookup(&l, r.key, 1);
        assert_true(x && x->param_values[0] == 1000 + i);
        result_row_free(&r);
    }
    /* Appended rows join the index. */
    make_row(&r, 5, 1, "ok", 1.5);
    assert_null(tunelog_lookup(&l, r.key, -1));
    assert_int_equal(tunelog_append(&l, &r, &err), 0);
    x = tunelog_lookup(&l, r.key, -1);
    assert_true(x && x->ms == 1.5 && strcmp(x->time, "2026-11-22T19:04:05Z") == 0);
    assert_int_equal(l.nrows, 305);
    assert_int_equal(l.nresumed, 304);
    result_row_free(&r);
    tunelog_close(&l);
    tunelog_close(&l); /* twice is harmless */
    free(key_a);
    free(key_b);
    free(path);
}

static void test_truncated_tail(void **state)
{
    (void)state;
    char *path = in_dir("tune.jsonl");
    write_log(path, 1, 3, 1);
    off_t three = file_size(path);
    result_row r;
    make_row(&r, 4, 1, "ok", 4.0);
    char *line = result_row_to_json(&r);
    result_row_free(&r);
    line[strlen(line) / 2] = '\0';
    write_text(path, line, "a");
    free(line);
    off_t with_tail = file_size(path);
    assert_true(with_tail > three);

    /* Reading only reports the tail and leaves the file alone. */
    result_row *rows;
    size_t n;
    bool cut = false;
    err_t err;
    err_clear(&err);
    assert_int_equal(tunelog_read(path, &rows, &n, &cut, &err), 0);
    assert_int_equal(n, 3);
    assert_true(cut);
    assert_int_equal(file_size(path), with_tail);
    result_rows_free(rows, n);

    tunelog_t l;
    assert_int_equal(tunelog_open(&l, path, true, &err), 0);
    assert_true(l.truncated_tail);
    assert_int_equal(l.nrows, 3);
    assert_int_equal(file_size(path), three);
    make_row(&r, 4, 1, "ok", 4.0);
    assert_int_equal(tunelog_append(&l, &r, &err), 0);
    result_row_free(&r);
    tunelog_close(&l);

    assert_int_equal(tunelog_read(path, &rows, &n, &cut, &err), 0);
    assert_int_equal(n, 4);
    assert_false(cut);
    assert_int_equal(rows[3].param_values[0], 4);
    result_rows_free(rows, n);
    free(path);
}

/* Child of the short-write test: a file-size limit lets only part of the next line in. */
static int append_over_limit(const char *path)
{
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {(rlim_t)file_size(path) + 100, RLIM_INFINITY};
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
        return 10;
    tunelog_t l;
    err_t err;
    err_clear(&err);
    if (tunelog_open(&l, path, true, &err) != 0)
        return 11;
    result_row r;
    make_row(&r, 99, 1, "ok", 1.0);
    int rc = tunelog_append(&l, &r, &err);
    bool said = err.code == EXIT_SYSTEM && strstr(err.text, "short write: 100 of ") != NULL;
    err_clear(&err);
    bool closed = tunelog_append(&l, &r, &err) != 0 && l.fd == -1; /* nothing more through this handle */
    result_row_free(&r);
    tunelog_close(&l);
    return rc != 0 && said && closed ? 0 : 12;
}

static void test_short_write(void **state)
{
    (void)state;
    char *path = in_dir("tune.jsonl");
    write_log(path, 1, 2, 1);
    off_t two = file_size(path);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(append_over_limit(path));
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(file_size(path), two + 100);
    tunelog_t l;
    err_t err;
    err_clear(&err);
    assert_int_equal(tunelog_open(&l, path, true, &err), 0);
    assert_true(l.truncated_tail);
    assert_int_equal(l.nrows, 2);
    assert_int_equal(file_size(path), two);
    tunelog_close(&l);
    free(path);
}

static void test_corrupt_line(void **state)
{
    (void)state;
    char *path = in_dir("tune.jsonl");
    write_log(path, 1, 1, 1);
    write_text(path, "{\"log\":\"engine-tune\", this is not json}\n", "a");
    result_row r;
    make_row(&r, 3, 1, "ok", 3.0);
    char *line = result_row_to_json(&r);
    result_row_free(&r);
    write_text(path, line, "a");
    line[strlen(line) / 3] = '\0';
    write_text(path, line, "a"); /* and a cut tail: the corrupt line still wins */
    free(line);
    size_t len0;
    char *before = read_file(path, &len0);

    tunelog_t l;
    err_t err;
    err_clear(&err);
    assert_int_equal(tunelog_open(&l, path, true, &err), -1);
    assert_int_equal(err.code, EXIT_INPUT);
    assert_string_equal(err.source, path);
    assert_int_equal(err.line, 2);
    assert_true(err.column > 0);
    assert_non_null(strstr(err.text, "invalid JSON"));
    assert_int_equal(l.fd, -1);
    size_t len1;
    char *after = read_file(path, &len1);
    assert_int_equal(len0, len1);
    assert_memory_equal(before, after, len0);
    free(after);

    /* tunelog_read says the same. */
    result_row *rows;
    size_t n;
    err_clear(&err);
    assert_int_equal(tunelog_read(path, &rows, &n, NULL, &err), -1);
    assert_int_equal(err.line, 2);
    assert_null(rows);

    /* A last line that is complete JSON but breaks a rule is not an interrupted write: refused. */
    unlink(path);
    write_log(path, 1, 1, 1);
    make_row(&r, 3, 1, "ok", 3.0);
    line = result_row_to_json(&r);
    result_row_free(&r);
    char *bad = strstr(line, "\"status\":\"ok\"");
    memcpy(bad, "\"status\":\"no\"", 13);
    line[strlen(line) - 1] = '\0';
    write_text(path, line, "a");
    free(line);
    off_t size = file_size(path);
    err_clear(&err);
    assert_int_equal(tunelog_open(&l, path, true, &err), -1);
    assert_int_equal(err.line, 2);
    assert_non_null(strstr(err.text, "\"status\" must be"));
    assert_int_equal(file_size(path), size);
    free(before);
    free(path);
}

static void test_last_line_without_newline(void **state)
{
    (void)state;
    char *path = in_dir("tune.jsonl");
    write_log(path, 1, 1, 1);
    result_row r;
    make_row(&r, 2, 1, "ok", 2.0);
    char *line = result_row_to_json(&r);
    result_row_free(&r);
    line[strlen(line) - 1] = '\0';
    write_text(path, line, "a");
    free(line);
    off_t size = file_size(path);

    result_row *rows;
    size_t n;
    bool cut = true;
    err_t err;
    err_clear(&err);
    assert_int_equal(tunelog_read(path, &rows, &n, &cut, &err), 0);
    assert_int_equal(n, 2);
    assert_false(cut);
    result_rows_free(rows, n);
    assert_int_equal(file_size(path), size);

    tunelog_t l;
    assert_int_equal(tunelog_open(&l, path, true, &err), 0);
    assert_int_equal(l.nrows, 2);
    assert_false(l.truncated_tail);
    assert_int_equal(file_size(path), size + 1);
    make_row(&r, 3, 1, "ok", 3.0);
    assert_int_equal(tunelog_append(&l, &r, &err), 0);
    result_row_free(&r);
    tunelog_close(&l);
    size_t len;
    char *text = read_file(path, &len);
    assert_int_equal(text[size], '\n');
    assert_int_equal(text[len - 1], '\n');
    free(text);
    assert_int_equal(tunelog_read(path, &rows, &n, &cut, &err), 0);
    assert_int_equal(n, 3);
    result_rows_free(rows, n);
    free(path);
}

/* Child of the concurrency test: resume the log and append 500 rows; exit status 0 when all went in. */
static int append_500(const char *path, int child)
{
    tunelog_t l;
    err_t err;
    err_clear(&err);
    if (tunelog_open(&l, path, true, &err) != 0)
        return 1;
    char *reason = xmalloc(5000);
    memset(reason, 'x', 4999);
    reason[4999] = '\0';
    for (int i = 0; i < 500; i++) {
        result_row r;
        make_row(&r, child * 10000 + i, 1, i % 2 ? "ok" : "compile", i % 2 ? 1.0 + i : -1);
        if (i % 2 == 0) { /* long lines cross page boundaries */
            free(r.reason);
            r.reason = xstrdup(reason + (i % 4999));
        }
        int rc = tunelog_append(&l, &r, &err);
        result_row_free(&r);
        if (rc != 0)
            return 1;
    }
    free(reason);
    tunelog_close(&l);
    return 0;
}

static void test_concurrent_appends(void **state)
{
    (void)state;
    char *path = in_dir("tune.jsonl");
    write_log(path, 1, 0, 1);
    pid_t pids[2];
    for (int c = 0; c < 2; c++) {
        fflush(NULL);
        pids[c] = fork();
        assert_true(pids[c] >= 0);
        if (pids[c] == 0)
            _exit(append_500(path, c + 1));
    }
    for (int c = 0; c < 2; c++) {
        int status;
        assert_int_equal(waitpid(pids[c], &status, 0), pids[c]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    result_row *rows;
    size_t n;
    bool cut = true;
    err_t err;
    err_clear(&err);
    assert_int_equal(tunelog_read(path, &rows, &n, &cut, &err), 0);
    assert_int_equal(n, 1000);
    assert_false(cut);
    int per_child[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++)
        per_child[rows[i].param_values[0] / 10000]++;
    assert_int_equal(per_child[1], 500);
    assert_int_equal(per_child[2], 500);
    result_rows_free(rows, n);
    size_t len;
    char *text = read_file(path, &len);
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    assert_int_equal(lines, 1000);
    free(text);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_open_new_and_refuse_existing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resume_and_lookup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_short_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_last_line_without_newline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_appends, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
