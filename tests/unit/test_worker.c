/* test_worker.c — worker processes, with tests/fake_worker.py standing in for `engine __worker`
 * (its FAKE_* switches make chosen points crash, hang, fault or fail) and small shell scripts for
 * the timings the fake cannot make: the hello, a reply, a crash that costs a row and brings a fresh
 * worker, a hang that hits the deadline, the "started" notice that moves the deadline, a worker
 * without a GPU, one that cannot be started, one that writes what is not JSON. Each test takes
 * well under 5 s. */
#include "helpers.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <sys/stat.h>

#include "util.h"
#include "worker.h"

#define FAKE "tests/fake_worker.py"

static const char *const k_fake_env[] = {"FAKE_FAULT", "FAKE_CRASH", "FAKE_HANG", "FAKE_WRONG",
                                         "FAKE_NOGPU", "FAKE_DELAY", "FAKE_LOG",  "FAKE_REPLAY"};

static int clean_env(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof k_fake_env / sizeof k_fake_env[0]; i++)
        unsetenv(k_fake_env[i]);
    return 0;
}

static worker_conf fake_conf(void)
{
    worker_conf c = {FAKE, NULL, false, 10.0};
    return c;
}

/* A "run" request for a point given by its --set overrides ("BX=8,BY=4"). */
static json_t *run_request(int id, const char *sets, bool time)
{
    json_t *s = json_array();
    char *copy = xstrdup(sets), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        json_array_append_new(s, json_string(t));
    free(copy);
    return json_pack("{s:s, s:i, s:o, s:i, s:i, s:i, s:b, s:b, s:i}", "op", "run", "id", id, "sets", s, "M", 256,
                     "N", 256, "K", 256, "verify", 1, "time", time, "runs", 3);
}

static void start(worker_t *w, int device, const worker_conf *c)
{
    worker_init(w, device);
    err_t err;
    err_clear(&err);
    int rc = worker_ensure(w, c, &err);
    if (rc)
        err_print(stderr, &err);
    assert_int_equal(rc, 0);
    assert_true(worker_running(w));
    assert_non_null(w->hello);
}

/* One request that must be answered: its reply (json_decref it). */
static json_t *call_ok(worker_t *w, json_t *req, double timeout_s)
{
    json_t *reply = NULL;
    worker_status st = worker_call(w, req, 5.0, timeout_s, &reply);
    json_decref(req);
    if (st != WORKER_OK)
        fprintf(stderr, "worker_call: %d (%s)\n", st, w->ended);
    assert_int_equal(st, WORKER_OK);
    assert_non_null(reply);
    return reply;
}

/* A shell script as a worker, in a fresh temporary file (unlink and free it). */
static char *script_worker(const char *body)
{
    char *path = strdup("/tmp/engine-worker-XXXXXX.sh");
    int fd = mkstemps(path, 3);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "#!/bin/sh\n%s", body);
    fclose(f);
    assert_int_equal(chmod(path, 0755), 0);
    return path;
}

/* ---- tests ---- */

static void test_spawn_hello_reply(void **state)
{
    (void)state;
    worker_conf c = fake_conf();
    worker_t w;
    start(&w, 3, &c);
    assert_int_equal(w.starts, 1);
    assert_int_equal(w.device, 3);
    /* The device was passed on as --device, and the worker has its own process group. */
    assert_string_equal(json_string_value(json_object_get(w.hello, "name")), "Fake GPU 3");
    assert_int_equal(json_integer_value(json_object_get(w.hello, "pid")), w.pid);
    assert_int_equal(getpgid(w.pid), w.pid);
    pid_t pid = w.pid;

    json_t *r = call_ok(&w, run_request(41, "BX=8,BY=4", true), 5.0);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 41);
    assert_string_equal(json_string_value(json_object_get(r, "status")), "ok");
    assert_string_equal(json_string_value(json_object_get(r, "params")), "BX=8 BY=4");
    assert_true(json_real_value(json_object_get(r, "ms")) > 0);
    json_decref(r);
    /* The "started" notice never reaches the caller of worker_call; nothing is left over. */
    assert_false(worker_has_line(&w));

    /* A second request goes to the same process; ensure does not start another. */
    err_t err;
    err_clear(&err);
    assert_int_equal(worker_ensure(&w, &c, &err), 0);
    assert_int_equal(w.starts, 1);
    r = call_ok(&w, run_request(42, "BX=16", false), 5.0);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 42);
    assert_null(json_object_get(r, "ms")); /* not timed */
    json_decref(r);
    assert_int_equal(w.pid, pid);

    /* Stopping closes its input: it exits by itself, with status 0. */
    worker_stop(&w);
    assert_false(worker_running(&w));
    assert_string_equal(w.ended, "the worker exited with status 0");
    assert_null(w.hello);
    assert_int_equal(kill(pid, 0), -1); /* reaped */
    worker_free(&w);
}

static void test_read_by_hand(void **state)
{
    (void)state;
    worker_conf c = fake_conf();
    worker_t w;
    start(&w, 0, &c);
    json_t *req = run_request(7, "BX=32", false);
    assert_int_equal(worker_send(&w, req), 0);
    json_decref(req);
    /* The started notice, then the reply, read with worker_read as a poll loop would. */
    json_t *msgs[2] = {NULL, NULL};
    int got = 0;
    double t0 = now_ms();
    while (got < 2 && now_ms() - t0 < 5000) {
        json_t *m = NULL;
        worker_status st = worker_read(&w, &m);
        if (st == WORKER_OK) {
            msgs[got++] = m;
        } else {
            assert_int_equal(st, WORKER_AGAIN);
            usleep(1000);
        }
    }
    assert_int_equal(got, 2);
    assert_true(worker_is_started(msgs[0]));
    assert_false(worker_is_started(msgs[1]));
    assert_int_equal(json_integer_value(json_object_get(msgs[1], "id")), 7);
    json_decref(msgs[0]);
    json_decref(msgs[1]);
    /* End of input: WORKER_DIED with how it ended. */
    close(w.in_fd);
    w.in_fd = -1;
    json_t *m = NULL;
    worker_status st;
    t0 = now_ms();
    while ((st = worker_read(&w, &m)) == WORKER_AGAIN && now_ms() - t0 < 5000)
        usleep(1000);
    assert_int_equal(st, WORKER_DIED);
    assert_null(m);
    assert_false(worker_running(&w));
    assert_string_equal(w.ended, "the worker exited with status 0");
    worker_free(&w);
}

/* A point that kills its worker: the caller sees WORKER_DIED (a row with the reason), and the next
 * request gets a fresh process. */
static void test_crash_then_fresh_worker(void **state)
{
    (void)state;
    setenv("FAKE_CRASH", "BX=13", 1);
    worker_conf c = fake_conf();
    worker_t w;
    start(&w, 0, &c);
    pid_t first = w.pid;
    json_t *reply = NULL;
    json_t *req = run_request(1, "BX=13,BY=2", true);
    worker_status st = worker_call(&w, req, 5.0, 5.0, &reply);
    json_decref(req);
    assert_int_equal(st, WORKER_DIED);
    assert_null(reply);
    assert_false(worker_running(&w));
    assert_non_null(strstr(w.ended, "killed by signal 6"));
    assert_null(w.hello);

    err_t err;
    err_clear(&err);
    assert_int_equal(worker_ensure(&w, &c, &err), 0);
    assert_int_equal(w.starts, 2);
    assert_true(worker_running(&w));
    assert_int_not_equal(w.pid, first);
    json_t *r = call_ok(&w, run_request(2, "BX=16,BY=2", true), 5.0);
    assert_string_equal(json_string_value(json_object_get(r, "status")), "ok");
    json_decref(r);
    worker_free(&w);
}

/* A fault: the reply says so and the worker exits (its context is lost); the next call finds it
 * gone, whichever way (the request cannot be written, or no reply comes). */
static void test_fault_then_gone(void **state)
{
    (void)state;
    setenv("FAKE_FAULT", "BX=64", 1);
    worker_conf c = fake_conf();
    worker_t w;
    start(&w, 0, &c);
    json_t *r = call_ok(&w, run_request(1, "BX=64", true), 5.0);
    assert_string_equal(json_string_value(json_object_get(r, "status")), "fault");
    assert_true(json_is_true(json_object_get(r, "broken")));
    assert_int_equal(json_integer_value(json_object_get(r, "code")), EXIT_SYSTEM);
    json_decref(r);
    usleep(100000); /* it exits */
    json_t *reply = NULL;
    json_t *req = run_request(2, "BX=8", false);
    worker_status st = worker_call(&w, req, 5.0, 5.0, &reply);
    json_decref(req);
    assert_int_equal(st, WORKER_DIED);
    assert_null(reply);
    assert_false(worker_running(&w));
    assert_true(strstr(w.ended, "exited with status 0") || strstr(w.ended, "gone before the request"));
    worker_free(&w);
}

/* A kernel that never returns, after the worker said "started": the deadline is timeout_s from the
 * notice, however long the set-up allowance was, and the worker is killed. */
static void test_hang_hits_deadline(void **state)
{
    (void)state;
    setenv("FAKE_HANG", "BX=7", 1);
    worker_conf c = fake_conf();
    worker_t w;
    start(&w, 0, &c);
    pid_t pid = w.pid;
    json_t *reply = NULL;
    json_t *req = run_request(1, "BX=7", true);
    double t0 = now_ms();
    worker_status st = worker_call(&w, req, 4.0, 0.5, &reply);
    double ms = now_ms() - t0;
    json_decref(req);
    assert_int_equal(st, WORKER_TIMEOUT);
    assert_null(reply);
    assert_true(ms >= 450);
    assert_true(ms < 2500); /* not the 4.5 s of set-up + timeout: the notice restarted the clock */
    assert_false(worker_running(&w));
    assert_string_equal(w.ended, "no reply within 0.5 s: the worker was killed");
    assert_int_equal(kill(pid, 0), -1); /* killed and reaped */
    /* And a fresh one serves the next point. */
    err_t err;
    err_clear(&err);
    assert_int_equal(worker_ensure(&w, &c, &err), 0);
    json_t *r = call_ok(&w, run_request(2, "BX=8", false), 5.0);
    json_decref(r);
    assert_int_equal(w.starts, 2);
    worker_free(&w);
}

/* A request without a "started" notice (not a run) has the set-up's deadline alone, and missing it
 * is a stall (WORKER_STALLED), not a kernel's timeout. */
static void test_hang_before_started(void **state)
{
    (void)state;
    setenv("FAKE_HANG", "BX=7", 1);
    worker_conf c = fake_conf();
    worker_t w;
    start(&w, 0, &c);
    json_t *req = json_pack("{s:s, s:i, s:[s]}", "op", "probe", "id", 1, "sets", "BX=7");
    json_t *reply = NULL;
    double t0 = now_ms();
    worker_status st = worker_call(&w, req, 0.6, 0.4, &reply);
    double ms = now_ms() - t0;
    json_decref(req);
    assert_int_equal(st, WORKER_STALLED);
    assert_true(ms >= 550);
    assert_true(ms < 3000);
    assert_non_null(strstr(w.ended, "set-up made no progress"));
    assert_false(worker_running(&w));
    worker_free(&w);
}

/* The notice ends the set-up's deadline and starts the timeout's: set-up 1.5 s, the kernel starts
 * at 1.0 s, so the reply at 2.3 s is in time (1.0 + 1.6 = 2.6 s); a reply after that is not. */
static void test_started_extends_deadline(void **state)
{
    (void)state;
    char *exe = script_worker("echo '{\"op\": \"hello\", \"device\": 0}'\n"
                              "read line\n"
                              "sleep 1\n"
                              "echo '{\"op\": \"started\", \"id\": 5}'\n"
                              "sleep 1.3\n"
                              "echo '{\"id\": 5, \"status\": \"ok\"}'\n"
                              "read line\n"
                              "echo '{\"op\": \"started\", \"id\": 6}'\n"
                              "sleep 3\n"
                              "echo '{\"id\": 6, \"status\": \"ok\"}'\n"
                              "read line\n");
    worker_conf c = {exe, NULL, false, 10.0};
    worker_t w;
    start(&w, 0, &c);
    json_t *req = json_pack("{s:s, s:i}", "op", "run", "id", 5);
    json_t *reply = NULL;
    double t0 = now_ms();
    worker_status st = worker_call(&w, req, 1.5, 1.6, &reply);
    double ms = now_ms() - t0;
    json_decref(req);
    if (st != WORKER_OK)
        fprintf(stderr, "status %d after %.0f ms: %s\n", st, ms, w.ended);
    assert_int_equal(st, WORKER_OK);
    assert_true(ms >= 2000);
    assert_int_equal(json_integer_value(json_object_get(reply, "id")), 5);
    json_decref(reply);
    req = json_pack("{s:s, s:i}", "op", "run", "id", 6);
    st = worker_call(&w, req, 1.5, 1.6, &reply);
    json_decref(req);
    assert_int_equal(st, WORKER_TIMEOUT);
    assert_non_null(strstr(w.ended, "no reply within"));
    worker_free(&w);
    unlink(exe);
    free(exe);
}

/* The set-up's allowance grows with the problem's bytes and products, FP64's reference counts
 * more, timing adds its launches, and ENGINE_SETUP_TIMEOUT replaces it. */
static void test_setup_allowance(void **state)
{
    (void)state;
    unsetenv("ENGINE_SETUP_TIMEOUT");
    json_t *tiny = json_pack("{s:s, s:s, s:i, s:i, s:i}", "op", "run", "dtype", "f32", "M", 17, "N", 33, "K", 5);
    json_t *big = json_pack("{s:s, s:s, s:i, s:i, s:i}", "op", "run", "dtype", "f32", "M", 8192, "N", 8192, "K", 8192);
    json_t *big64 =
        json_pack("{s:s, s:s, s:i, s:i, s:i}", "op", "run", "dtype", "f64", "M", 8192, "N", 8192, "K", 8192);
    json_t *timed = json_pack("{s:s, s:s, s:i, s:i, s:i, s:b, s:b, s:i, s:i, s:i}", "op", "run", "dtype", "f32", "M",
                              8192, "N", 8192, "K", 8192, "time", 1, "baseline", 1, "warmup", 3, "runs", 7, "iters", 5);
    double t = worker_setup_allowance_s(tiny, DTYPE_F32), b = worker_setup_allowance_s(big, DTYPE_F32);
    double b64 = worker_setup_allowance_s(big64, DTYPE_F64), bt = worker_setup_allowance_s(timed, DTYPE_F32);
    assert_true(t >= 60 && t < 61);
    assert_true(b > 100 && b < 125); /* 2.4 GB of host memory, three products of 1.1 TFLOP */
    assert_true(b64 > 2 * b);
    assert_true(bt > b + 100); /* 100 timed launches */
    setenv("ENGINE_SETUP_TIMEOUT", "2.5", 1);
    assert_true(worker_setup_allowance_s(big, DTYPE_F32) == 2.5);
    err_t err;
    err_clear(&err);
    assert_int_equal(worker_setup_env_check(&err), 0);
    setenv("ENGINE_SETUP_TIMEOUT", "soon", 1);
    assert_int_equal(worker_setup_env_check(&err), 2);
    assert_int_equal(err.code, ERR_INPUT);
    assert_true(worker_setup_allowance_s(tiny, DTYPE_F32) == t);
    unsetenv("ENGINE_SETUP_TIMEOUT");
    json_decref(tiny);
    json_decref(big);
    json_decref(big64);
    json_decref(timed);
}

static void test_no_gpu(void **state)
{
    (void)state;
    setenv("FAKE_NOGPU", "1", 1);
    worker_conf c = fake_conf();
    worker_t w;
    worker_init(&w, 0);
    err_t err;
    err_clear(&err);
    assert_int_not_equal(worker_ensure(&w, &c, &err), 0);
    assert_int_equal(err.code, EXIT_SYSTEM);
    assert_non_null(strstr(err.text, "no CUDA driver: fake"));
    assert_false(worker_running(&w));
    assert_null(w.hello);
    worker_free(&w);
}

static void test_cannot_start(void **state)
{
    (void)state;
    worker_conf c = {"/nonexistent/engine-worker", NULL, false, 1.0};
    worker_t w;
    worker_init(&w, 0);
    err_t err;
    err_clear(&err);
    assert_int_equal(worker_spawn(&w, &c, &err), EXIT_SYSTEM);
    assert_non_null(strstr(err.text, "cannot start a worker"));
    assert_string_equal(err.source, "/nonexistent/engine-worker");
    assert_false(worker_running(&w));
    worker_free(&w);

    /* One that exits before its hello. */
    char *exe = script_worker("exit 7\n");
    worker_conf c2 = {exe, NULL, false, 5.0};
    worker_init(&w, 2);
    err_clear(&err);
    assert_int_not_equal(worker_ensure(&w, &c2, &err), 0);
    assert_int_equal(err.code, EXIT_SYSTEM);
    assert_non_null(strstr(err.text, "the worker for GPU 2 did not start: the worker exited with status 7"));
    assert_false(worker_running(&w));
    worker_free(&w);
    unlink(exe);
    free(exe);
}

/* A line that is not JSON becomes an error message the caller can record; arguments are passed. */
static void test_not_json_and_arguments(void **state)
{
    (void)state;
    char *exe = script_worker("echo \"args: $*\"\n"
                              "read line\n");
    worker_conf c = {exe, "/tmp/cache dir", true, 5.0};
    worker_t w;
    worker_init(&w, 1);
    err_t err;
    err_clear(&err);
    assert_int_not_equal(worker_ensure(&w, &c, &err), 0);
    assert_int_equal(err.code, EXIT_SYSTEM);
    assert_string_equal(err.text, "args: __worker --device 1 --cache /tmp/cache dir --bandwidth");
    assert_false(worker_running(&w));
    worker_free(&w);
    unlink(exe);
    free(exe);
}

static void test_default_exe(void **state)
{
    (void)state;
    assert_int_equal(paths_init(NULL, NULL), 0);
    setenv("ENGINE_WORKER", FAKE, 1);
    assert_string_equal(worker_default_exe(), FAKE);
    setenv("ENGINE_WORKER", "", 1);
    assert_string_equal(worker_default_exe(), paths_exe());
    unsetenv("ENGINE_WORKER");
    assert_string_equal(worker_default_exe(), paths_exe());
}

/* Two workers at once, one per GPU: each answers for its own device. */
static void test_two_workers(void **state)
{
    (void)state;
    setenv("FAKE_DELAY", "0.2", 1);
    worker_conf c = fake_conf();
    worker_t w[2];
    start(&w[0], 0, &c);
    start(&w[1], 1, &c);
    assert_int_not_equal(w[0].pid, w[1].pid);
    for (int i = 0; i < 2; i++) {
        json_t *req = run_request(10 + i, "BX=8", true);
        assert_int_equal(worker_send(&w[i], req), 0);
        json_decref(req);
    }
    /* The replies, each from its own worker. */
    double t0 = now_ms();
    for (int i = 0; i < 2; i++) {
        json_t *m = NULL;
        worker_status st;
        do {
            st = worker_read(&w[i], &m);
            if (st == WORKER_AGAIN)
                usleep(1000);
            else if (st == WORKER_OK && worker_is_started(m)) {
                json_decref(m);
                m = NULL;
                st = WORKER_AGAIN;
            }
        } while (st == WORKER_AGAIN && now_ms() - t0 < 5000);
        assert_int_equal(st, WORKER_OK);
        assert_int_equal(json_integer_value(json_object_get(m, "id")), 10 + i);
        json_decref(m);
    }
    assert_string_equal(json_string_value(json_object_get(w[1].hello, "name")), "Fake GPU 1");
    worker_free(&w[0]);
    worker_free(&w[1]);
}

int main(void)
{
    /* As in the engine: a worker that is gone makes write fail with EPIPE instead of killing us. */
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_spawn_hello_reply, clean_env, clean_env),
        cmocka_unit_test_setup_teardown(test_read_by_hand, clean_env, clean_env),
        cmocka_unit_test_setup_teardown(test_crash_then_fresh_worker, clean_env, clean_env),
        cmocka_unit_test_setup_teardown(test_fault_then_gone, clean_env, clean_env),
        cmocka_unit_test_setup_teardown(test_hang_hits_deadline, clean_env, clean_env),
        cmocka_unit_test_setup_teardown(test_hang_before_started, clean_env, clean_env),
        cmocka_unit_test_setup_teardown(test_started_extends_deadline, clean_env, clean_env),
        cmocka_unit_test_setup_teardown(test_setup_allowance, clean_env, clean_env),
        cmocka_unit_test_setup_teardown(test_no_gpu, clean_env, clean_env),
        cmocka_unit_test_setup_teardown(test_cannot_start, clean_env, clean_env),
        cmocka_unit_test_setup_teardown(test_not_json_and_arguments, clean_env, clean_env),
        cmocka_unit_test(test_default_exe),
        cmocka_unit_test_setup_teardown(test_two_workers, clean_env, clean_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
