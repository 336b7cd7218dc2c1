/* test_pool.c — the thread pool: every task runs exactly once on any number of threads and comes
 * back through pool_take (and the descriptor poll() watches), one thread runs tasks one at a time
 * in the order submitted, zero tasks, cancelling what has not started, and stopping a busy pool;
 * compiles handed to it longest first. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool.h"
#include "setup.h"
#include "util.h"

/* ---- tasks ---- */

typedef struct {
    int id;
    atomic_int runs;      /* how many times it ran */
    int result;           /* what it computed */
    int order;            /* when it started, among all tasks */
    pthread_t thread;     /* which thread ran it */
    int usleep_us;        /* work to simulate */
} job;

static atomic_int g_started;
static atomic_int g_running, g_max_running;

static void work(void *arg)
{
    job *j = arg;
    j->order = atomic_fetch_add(&g_started, 1);
    int now = atomic_fetch_add(&g_running, 1) + 1;
    int prev = atomic_load(&g_max_running);
    while (now > prev && !atomic_compare_exchange_weak(&g_max_running, &prev, now))
        ;
    j->thread = pthread_self();
    if (j->usleep_us)
        usleep((useconds_t)j->usleep_us);
    j->result = j->id * j->id;
    atomic_fetch_add(&j->runs, 1);
    atomic_fetch_sub(&g_running, 1);
}

static void reset_counters(void)
{
    atomic_store(&g_started, 0);
    atomic_store(&g_running, 0);
    atomic_store(&g_max_running, 0);
}

static job *make_jobs(int n, int usleep_us)
{
    job *jobs = xcalloc((size_t)(n ? n : 1), sizeof *jobs);
    for (int i = 0; i < n; i++) {
        jobs[i].id = i;
        atomic_init(&jobs[i].runs, 0);
        jobs[i].usleep_us = usleep_us;
    }
    return jobs;
}

/* ---- tests ---- */

static void run_all_with(int nthreads, int njobs)
{
    reset_counters();
    pool_t p;
    assert_int_equal(pool_init(&p, nthreads), 0);
    assert_int_equal(p.nthreads, nthreads > 0 ? nthreads : pool_cores());
    job *jobs = make_jobs(njobs, 200);
    void **args = xcalloc((size_t)(njobs ? njobs : 1), sizeof *args);
    for (int i = 0; i < njobs; i++)
        args[i] = &jobs[i];
    pool_run_all(&p, work, args, (size_t)njobs);
    /* pool_run_all returned: every task has finished, each exactly once, with its result. */
    for (int i = 0; i < njobs; i++) {
        assert_int_equal(atomic_load(&jobs[i].runs), 1);
        assert_int_equal(jobs[i].result, i * i);
    }
    assert_int_equal(atomic_load(&g_started), njobs);
    assert_int_equal(pool_pending(&p), 0);
    assert_null(pool_take(&p, false)); /* nothing left over */
    assert_true(atomic_load(&g_max_running) <= (nthreads > 0 ? nthreads : pool_cores()));
    pool_free(&p);
    free(args);
    free(jobs);
}

static void test_run_all_many_threads(void **state)
{
    (void)state;
    run_all_with(4, 200);
    run_all_with(8, 3); /* more threads than tasks */
    run_all_with(0, 50); /* one per core */
    run_all_with(3, 1);
}

static void test_zero_jobs(void **state)
{
    (void)state;
    run_all_with(4, 0);
    run_all_with(1, 0);
    pool_t p;
    assert_int_equal(pool_init(&p, 2), 0);
    assert_int_equal(pool_pending(&p), 0);
    assert_null(pool_take(&p, false));
    assert_int_equal(pool_cancel(&p), 0);
    pool_free(&p);
    /* pool_free leaves the struct zeroed, and a second free is harmless. */
    assert_null(p.threads);
    pool_free(&p);
}

/* One thread: tasks run one at a time, on that thread, in the order submitted. */
static void test_one_thread_is_serial(void **state)
{
    (void)state;
    reset_counters();
    pool_t p;
    assert_int_equal(pool_init(&p, 1), 0);
    assert_int_equal(p.nthreads, 1);
    enum { N = 40 };
    job *jobs = make_jobs(N, 300);
    for (int i = 0; i < N; i++)
        pool_submit(&p, work, &jobs[i]);
    assert_int_equal(pool_pending(&p), N);
    /* Results come back in the order they finished: with one thread, the order submitted. */
    for (int i = 0; i < N; i++) {
        job *j = pool_take(&p, true);
        assert_ptr_equal(j, &jobs[i]);
        assert_int_equal(j->order, i);
        assert_int_equal(atomic_load(&j->runs), 1);
        assert_true(pthread_equal(j->thread, jobs[0].thread));
        assert_false(pthread_equal(j->thread, pthread_self()));
    }
    assert_int_equal(atomic_load(&g_max_running), 1);
    assert_int_equal(pool_pending(&p), 0);
    pool_free(&p);
    free(jobs);
}

/* Several threads really run at once, and results can be collected through the descriptor. */
static void test_parallel_and_fd(void **state)
{
    (void)state;
    reset_counters();
    pool_t p;
    assert_int_equal(pool_init(&p, 4), 0);
    enum { N = 16 };
    job *jobs = make_jobs(N, 50000); /* 50 ms each: 4 at once take ~200 ms, serially 800 ms */
    double t0 = now_ms();
    for (int i = 0; i < N; i++)
        pool_submit(&p, work, &jobs[i]);
    bool seen[N] = {false};
    int got = 0;
    while (got < N) {
        struct pollfd pf = {pool_fd(&p), POLLIN, 0};
        int pr = poll(&pf, 1, 5000);
        assert_int_equal(pr, 1); /* readable: a task finished */
        job *j;
        while ((j = pool_take(&p, false)) != NULL) {
            int idx = (int)(j - jobs);
            assert_true(idx >= 0 && idx < N);
            assert_false(seen[idx]);
            seen[idx] = true;
            got++;
        }
    }
    double ms = now_ms() - t0;
    assert_int_equal(pool_pending(&p), 0);
    assert_true(atomic_load(&g_max_running) >= 2);
    assert_true(atomic_load(&g_max_running) <= 4);
    assert_true(ms < 700); /* well below the serial 800 ms even on a loaded machine */
    for (int i = 0; i < N; i++)
        assert_int_equal(atomic_load(&jobs[i].runs), 1);
    /* Nothing is readable once all are taken. */
    struct pollfd pf = {pool_fd(&p), POLLIN, 0};
    assert_int_equal(poll(&pf, 1, 0), 0);
    pool_free(&p);
    free(jobs);
}

/* A gate a task waits on, so the test decides when it finishes. */
static pthread_mutex_t g_gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_gate_cond = PTHREAD_COND_INITIALIZER;
static bool g_gate_open;

static void gated(void *arg)
{
    pthread_mutex_lock(&g_gate_lock);
    while (!g_gate_open)
        pthread_cond_wait(&g_gate_cond, &g_gate_lock);
    pthread_mutex_unlock(&g_gate_lock);
    work(arg);
}

static void open_gate(bool open)
{
    pthread_mutex_lock(&g_gate_lock);
    g_gate_open = open;
    pthread_cond_broadcast(&g_gate_cond);
    pthread_mutex_unlock(&g_gate_lock);
}

/* Wait (at most 5 s) until the first task still queued is `arg`: the ones before it were taken. */
static void wait_queue_head(pool_t *p, void *arg)
{
    bool there = false;
    for (int i = 0; i < 5000 && !there; i++) {
        pthread_mutex_lock(&p->lock);
        there = p->head && p->head->arg == arg;
        pthread_mutex_unlock(&p->lock);
        if (!there)
            usleep(1000);
    }
    assert_true(there);
}

static void *open_gate_later(void *arg)
{
    (void)arg;
    usleep(50000);
    open_gate(true);
    return NULL;
}

/* Cancel drops the queued tasks (never run, never announced); the running one finishes. */
static void test_cancel(void **state)
{
    (void)state;
    reset_counters();
    open_gate(false);
    pool_t p;
    assert_int_equal(pool_init(&p, 1), 0);
    enum { N = 10 };
    job *jobs = make_jobs(N, 0);
    for (int i = 0; i < N; i++)
        pool_submit(&p, gated, &jobs[i]);
    /* Wait until the thread has taken the first task (it blocks on the gate). */
    wait_queue_head(&p, &jobs[1]);
    size_t dropped = pool_cancel(&p);
    assert_int_equal(dropped, N - 1);
    assert_int_equal(pool_pending(&p), 1);
    open_gate(true);
    assert_ptr_equal(pool_take(&p, true), &jobs[0]);
    assert_int_equal(pool_pending(&p), 0);
    usleep(20000);
    assert_null(pool_take(&p, false));
    assert_int_equal(atomic_load(&jobs[0].runs), 1);
    for (int i = 1; i < N; i++)
        assert_int_equal(atomic_load(&jobs[i].runs), 0);
    /* The pool still works after a cancel. */
    pool_submit(&p, work, &jobs[5]);
    assert_ptr_equal(pool_take(&p, true), &jobs[5]);
    assert_int_equal(atomic_load(&jobs[5].runs), 1);
    pool_free(&p);
    free(jobs);
}

/* pool_free with tasks queued and running: the running ones finish, the queued ones are dropped
 * (never run), and it returns. */
static void test_free_busy(void **state)
{
    (void)state;
    reset_counters();
    open_gate(false);
    pool_t p;
    assert_int_equal(pool_init(&p, 2), 0);
    enum { N = 20 };
    job *jobs = make_jobs(N, 0);
    for (int i = 0; i < N; i++)
        pool_submit(&p, gated, &jobs[i]);
    wait_queue_head(&p, &jobs[2]); /* both threads hold a task, blocked on the gate */
    pthread_t opener;
    assert_int_equal(pthread_create(&opener, NULL, open_gate_later, NULL), 0);
    pool_free(&p); /* returns once the gate opens and the two running tasks end */
    pthread_join(opener, NULL);
    assert_int_equal(atomic_load(&jobs[0].runs), 1);
    assert_int_equal(atomic_load(&jobs[1].runs), 1);
    for (int i = 2; i < N; i++)
        assert_int_equal(atomic_load(&jobs[i].runs), 0);
    free(jobs);
}

/* Results nobody takes fill the pipe (64 KiB by default: 8192 pointers): pool_free drains it so the threads
 * blocked writing can stop. */
static void test_free_with_full_pipe(void **state)
{
    (void)state;
    reset_counters();
    pool_t p;
    assert_int_equal(pool_init(&p, 2), 0);
    enum { N = 20000 };
    job *jobs = make_jobs(N, 0);
    for (int i = 0; i < N; i++)
        pool_submit(&p, work, &jobs[i]);
    /* Let the threads run until the pipe is full and they block (nothing starts for 50 ms). */
    int before;
    do {
        before = atomic_load(&g_started);
        usleep(50000);
    } while (atomic_load(&g_started) != before);
    assert_true(before > 0);
    assert_true(before < N); /* blocked on the pipe: not everything ran */
    assert_int_equal(pool_pending(&p), N);
    pool_free(&p);
    int ran = 0;
    for (int i = 0; i < N; i++)
        ran += atomic_load(&jobs[i].runs);
    assert_int_equal(ran, atomic_load(&g_started));
    free(jobs);
}

static void test_cores(void **state)
{
    (void)state;
    int n = pool_cores();
    assert_true(n >= 1);
    assert_true(n <= sysconf(_SC_NPROCESSORS_CONF) || sysconf(_SC_NPROCESSORS_CONF) <= 0);
}

/* build_jobs_order: descending compile_cost, equal costs in their first order. */
static void test_jobs_longest_first(void **state)
{
    (void)state;
    const int64_t cost[] = {5, 9, 1, 5, 9, 7};
    config_t cfg[6];
    build_job job[6], *order[6];
    for (int i = 0; i < 6; i++) {
        memset(&cfg[i], 0, sizeof cfg[i]);
        cfg[i].compile_cost = cost[i];
        build_job_init(&job[i], &cfg[i], 90, 0, 1, 1, 1);
        order[i] = &job[i];
    }
    build_jobs_order(order, 6);
    const int want[] = {1, 4, 5, 0, 3, 2};
    for (int i = 0; i < 6; i++)
        assert_ptr_equal(order[i], &job[want[i]]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_all_many_threads),
        cmocka_unit_test(test_zero_jobs),
        cmocka_unit_test(test_one_thread_is_serial),
        cmocka_unit_test(test_parallel_and_fd),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_free_busy),
        cmocka_unit_test(test_free_with_full_pipe),
        cmocka_unit_test(test_cores),
        cmocka_unit_test(test_jobs_longest_first),
    };
    alarm(60); /* a pool that never stops fails the run instead of hanging it */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
