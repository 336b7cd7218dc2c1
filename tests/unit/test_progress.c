/* test_progress.c — the live status line: nothing at all when stderr is a file or a pipe, or when
 * ENGINE_PROGRESS=0; on a terminal (a pseudo-terminal here) the line as drawn, rewritten in place
 * with the rest of a longer previous line blanked, at most every 100 ms unless forced, blanked by
 * progress_clear; and the durations the ETA is written in. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "progress.h"
#include "util.h"

/* ---- helpers ---- */

static int g_saved_stderr = -1;

/* Point stderr at fd (until restore_stderr). */
static void stderr_to(int fd)
{
    fflush(stderr);
    g_saved_stderr = dup(STDERR_FILENO);
    assert_true(g_saved_stderr >= 0);
    assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
}

static void restore_stderr(void)
{
    fflush(stderr);
    dup2(g_saved_stderr, STDERR_FILENO);
    close(g_saved_stderr);
    g_saved_stderr = -1;
}

/* A pseudo-terminal in raw mode (no \n -> \r\n): *master is read back, the slave is returned. */
static int open_pty(int *master)
{
    *master = posix_openpt(O_RDWR | O_NOCTTY);
    assert_true(*master >= 0);
    assert_int_equal(grantpt(*master), 0);
    assert_int_equal(unlockpt(*master), 0);
    int slave = open(ptsname(*master), O_RDWR | O_NOCTTY);
    assert_true(slave >= 0);
    struct termios t;
    assert_int_equal(tcgetattr(slave, &t), 0);
    cfmakeraw(&t);
    assert_int_equal(tcsetattr(slave, TCSANOW, &t), 0);
    return slave;
}

/* What the terminal received since the last call (waits up to 200 ms for the first byte). */
static char *drain(int master)
{
    strbuf sb;
    sb_init(&sb);
    sb_add(&sb, "");
    int wait_ms = 200;
    for (;;) {
        struct pollfd pf = {master, POLLIN, 0};
        if (poll(&pf, 1, wait_ms) <= 0)
            break;
        char buf[1024];
        ssize_t r = read(master, buf, sizeof buf);
        if (r <= 0)
            break;
        sb_addn(&sb, buf, (size_t)r);
        wait_ms = 20;
    }
    return sb_steal(&sb);
}

/* A failed assertion skips the test's own restore: stderr comes back here. */
static int teardown(void **state)
{
    (void)state;
    if (g_saved_stderr >= 0)
        restore_stderr();
    unsetenv("ENGINE_PROGRESS");
    return 0;
}

static int file_size(int fd)
{
    off_t n = lseek(fd, 0, SEEK_END);
    return (int)n;
}

/* ---- tests ---- */

static void test_off_when_not_a_terminal(void **state)
{
    (void)state;
    unsetenv("ENGINE_PROGRESS");
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    stderr_to(fileno(tmp));
    progress_t p;
    progress_init(&p);
    bool on = p.on;
    progress_show(&p, true, "tune stage 1: %d/%d points | best %s | ETA %s", 3, 10, "41.2 TFLOP/s", "1m20s");
    progress_show(&p, false, "again");
    progress_clear(&p);
    restore_stderr();
    assert_false(on);
    assert_int_equal(p.width, 0);
    assert_int_equal(file_size(fileno(tmp)), 0); /* not a byte */
    fclose(tmp);

    /* A pipe: the same. */
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    stderr_to(fds[1]);
    progress_init(&p);
    on = p.on;
    progress_show(&p, true, "x");
    restore_stderr();
    close(fds[1]);
    char c;
    assert_false(on);
    assert_int_equal(read(fds[0], &c, 1), 0);
    close(fds[0]);
}

static void test_terminal_and_env(void **state)
{
    (void)state;
    int master, slave = open_pty(&master);
    stderr_to(slave);
    unsetenv("ENGINE_PROGRESS");
    progress_t p;
    progress_init(&p);
    bool on_tty = p.on;
    setenv("ENGINE_PROGRESS", "0", 1);
    progress_init(&p);
    bool on_env0 = p.on;
    progress_show(&p, true, "hidden");
    setenv("ENGINE_PROGRESS", "1", 1);
    progress_init(&p);
    bool on_env1 = p.on;
    unsetenv("ENGINE_PROGRESS");
    restore_stderr();
    char *got = drain(master);
    assert_true(on_tty);
    assert_false(on_env0);
    assert_true(on_env1);
    assert_string_equal(got, ""); /* ENGINE_PROGRESS=0 drew nothing */
    free(got);
    close(slave);
    close(master);
}

static void test_line_drawn_in_place(void **state)
{
    (void)state;
    unsetenv("ENGINE_PROGRESS");
    int master, slave = open_pty(&master);
    stderr_to(slave);
    progress_t p;
    progress_init(&p);
    assert_true(p.on);

    /* The line as given: done/total, best, ETA — after a carriage return, nothing else. */
    char eta[16];
    progress_duration(80, eta, sizeof eta);
    progress_show(&p, true, "tune 4096x4096x4096 stage %d: %zu/%zu points | best %s | ETA %s", 1, (size_t)37,
                  (size_t)120, "41.2 TFLOP/s (61%)", eta);
    char *got = drain(master);
    assert_string_equal(got, "\rtune 4096x4096x4096 stage 1: 37/120 points | best 41.2 TFLOP/s (61%) | ETA 1m20s");
    assert_int_equal(p.width, (int)strlen(got) - 1);
    free(got);

    /* Within 100 ms an unforced update is skipped... */
    progress_show(&p, false, "skipped");
    got = drain(master);
    assert_string_equal(got, "");
    free(got);
    /* ...after it, drawn; a shorter line blanks what is left of the longer one. */
    int before = p.width;
    usleep(120000);
    progress_show(&p, false, "38/120");
    got = drain(master);
    char *want = xasprintf("\r38/120%*s", before - 6, "");
    assert_string_equal(got, want);
    free(want);
    free(got);
    assert_int_equal(p.width, 6);

    /* A forced update is drawn at once. */
    progress_show(&p, true, "120/120 done");
    got = drain(master);
    assert_string_equal(got, "\r120/120 done");
    free(got);

    /* Clear: blanks the line and returns to its start; a second clear writes nothing. */
    progress_clear(&p);
    got = drain(master);
    assert_string_equal(got, "\r            \r");
    free(got);
    assert_int_equal(p.width, 0);
    progress_clear(&p);
    got = drain(master);
    assert_string_equal(got, "");
    free(got);

    /* A line longer than the buffer is cut, never overrun. */
    char long_text[700];
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    progress_show(&p, true, "%s", long_text);
    got = drain(master);
    assert_int_equal(got[0], '\r');
    assert_int_equal(strlen(got), 1 + 511);
    assert_int_equal(p.width, 511);
    free(got);
    progress_clear(&p);
    free(drain(master));

    restore_stderr();
    close(slave);
    close(master);
}

static void test_duration(void **state)
{
    (void)state;
    static const struct {
        double s;
        const char *text;
    } cases[] = {
        {0, "0s"},         {-5, "0s"},        {0.4, "0s"},       {0.5, "1s"},        {45, "45s"},
        {59.4, "59s"},     {59.6, "1m00s"},   {60, "1m00s"},     {80, "1m20s"},      {605, "10m05s"},
        {3599, "59m59s"},  {3600, "1h00m"},   {7380, "2h03m"},   {7439, "2h03m"},    {360000, "100h00m"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[32];
        memset(buf, '#', sizeof buf);
        progress_duration(cases[i].s, buf, sizeof buf);
        if (strcmp(buf, cases[i].text) != 0)
            fprintf(stderr, "progress_duration(%g) = \"%s\", expected \"%s\"\n", cases[i].s, buf, cases[i].text);
        assert_string_equal(buf, cases[i].text);
    }
    /* A short buffer is cut, and terminated. */
    char small[4];
    progress_duration(80, small, sizeof small);
    assert_string_equal(small, "1m2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_off_when_not_a_terminal, teardown),
        cmocka_unit_test_teardown(test_terminal_and_env, teardown),
        cmocka_unit_test_teardown(test_line_drawn_in_place, teardown),
        cmocka_unit_test(test_duration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
