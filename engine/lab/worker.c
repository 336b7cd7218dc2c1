/* worker.c — see worker.h. */
#define _GNU_SOURCE
#include "worker.h"

#include "paths.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

void worker_init(worker_t *w, int device)
{
    memset(w, 0, sizeof *w);
    w->device = device;
    w->in_fd = w->out_fd = -1;
    sb_init(&w->rbuf);
}

bool worker_running(const worker_t *w) { return w->pid > 0; }

bool worker_stopped_from_outside(const worker_t *w)
{
    return w->signal == SIGTERM || w->signal == SIGINT || w->signal == SIGHUP;
}

const char *worker_default_exe(void)
{
    const char *fake = getenv("ENGINE_WORKER");
    return fake && *fake ? fake : paths_exe();
}

static void describe(worker_t *w, int st)
{
    w->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    if (WIFSIGNALED(st))
        snprintf(w->ended, sizeof w->ended, "the worker was killed by signal %d (%s)", WTERMSIG(st),
                 strsignal(WTERMSIG(st)));
    else
        snprintf(w->ended, sizeof w->ended, "the worker exited with status %d", WEXITSTATUS(st));
}

/* Reap the process (it has exited or been killed) and say how it ended. */
static void reap(worker_t *w)
{
    if (w->in_fd >= 0)
        close(w->in_fd);
    if (w->out_fd >= 0)
        close(w->out_fd);
    w->in_fd = w->out_fd = -1;
    if (w->pid > 0) {
        int st = 0;
        while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR)
            ;
        describe(w, st);
    }
    w->pid = 0;
    w->rbuf.len = 0;
    if (w->rbuf.buf)
        w->rbuf.buf[0] = '\0';
    json_decref(w->hello);
    w->hello = NULL;
}

int worker_spawn(worker_t *w, const worker_conf *c, err_t *err)
{
    int to[2], from[2];
    if (pipe2(to, O_CLOEXEC))
        return err_set(err, ERR_SYSTEM, "engine", 0, 0, "cannot create a pipe for a worker: %s", strerror(errno));
    if (pipe2(from, O_CLOEXEC)) {
        close(to[0]);
        close(to[1]);
        return err_set(err, ERR_SYSTEM, "engine", 0, 0, "cannot create a pipe for a worker: %s", strerror(errno));
    }
    char dev[16];
    snprintf(dev, sizeof dev, "%d", w->device);
    const char *argv[10];
    int n = 0;
    argv[n++] = c->exe;
    argv[n++] = "__worker";
    argv[n++] = "--device";
    argv[n++] = dev;
    if (c->cache_dir) {
        argv[n++] = "--cache";
        argv[n++] = c->cache_dir;
    }
    if (c->bandwidth)
        argv[n++] = "--bandwidth";
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, to[0], 0);
    posix_spawn_file_actions_adddup2(&fa, from[1], 1);
    posix_spawnattr_init(&at);
    /* Its own process group: a Ctrl-C at the terminal reaches the engine, which decides. */
    posix_spawnattr_setpgroup(&at, 0);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&at, &none);
    sigset_t dfl;
    sigemptyset(&dfl);
    sigaddset(&dfl, SIGPIPE);
    sigaddset(&dfl, SIGINT);
    posix_spawnattr_setsigdefault(&at, &dfl);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    int rc = posix_spawn(&pid, c->exe, &fa, &at, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(to[0]);
    close(from[1]);
    if (rc) {
        close(to[1]);
        close(from[0]);
        return err_set(err, ERR_SYSTEM, c->exe, 0, 0, "cannot start a worker: %s", strerror(rc));
    }
    w->pid = pid;
    w->in_fd = to[1];
    w->out_fd = from[0];
    w->starts++;
    w->rbuf.len = 0;
    return 0;
}

/* A whole line in rbuf, parsed; *msg NULL when none yet. A line that is not JSON is the worker's
 * bug: it becomes a message with an "error" so the caller records it. */
static void take_line(worker_t *w, json_t **msg)
{
    *msg = NULL;
    char *nl = w->rbuf.buf ? memchr(w->rbuf.buf, '\n', w->rbuf.len) : NULL;
    if (!nl)
        return;
    size_t len = (size_t)(nl - w->rbuf.buf);
    json_error_t je;
    *msg = json_loadb(w->rbuf.buf, len, 0, &je);
    if (!*msg || !json_is_object(*msg)) {
        json_decref(*msg);
        *msg = json_pack("{s:s, s:i, s:s#}", "status", "error", "code", EXIT_SYSTEM, "error", w->rbuf.buf,
                         (int)(len > 200 ? 200 : len));
    }
    memmove(w->rbuf.buf, nl + 1, w->rbuf.len - len - 1);
    w->rbuf.len -= len + 1;
    w->rbuf.buf[w->rbuf.len] = '\0';
}

bool worker_has_line(const worker_t *w) { return w->rbuf.buf && memchr(w->rbuf.buf, '\n', w->rbuf.len) != NULL; }

worker_status worker_read(worker_t *w, json_t **msg)
{
    take_line(w, msg);
    if (*msg)
        return WORKER_OK;
    char buf[65536];
    ssize_t r;
    do
        r = read(w->out_fd, buf, sizeof buf);
    while (r < 0 && errno == EINTR);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return WORKER_AGAIN;
    if (r <= 0) {
        reap(w);
        return WORKER_DIED;
    }
    sb_addn(&w->rbuf, buf, (size_t)r);
    take_line(w, msg);
    return *msg ? WORKER_OK : WORKER_AGAIN;
}

bool worker_is_started(json_t *msg)
{
    const char *op = json_string_value(json_object_get(msg, "op"));
    return op && strcmp(op, "started") == 0;
}

/* Wait for one whole line, at most setup_s until the worker says the kernel started and then at
 * most timeout_s (setup_s < 0: no set-up, as for the hello); kills the worker when none comes. */
static worker_status wait_line(worker_t *w, double setup_s, double timeout_s, json_t **msg)
{
    bool started = setup_s < 0;
    double deadline = now_ms() + (started ? timeout_s : setup_s) * 1e3;
    for (;;) {
        take_line(w, msg);
        if (*msg && worker_is_started(*msg)) {
            json_decref(*msg);
            *msg = NULL;
            deadline = now_ms() + timeout_s * 1e3;
            started = true;
            continue;
        }
        if (*msg)
            return WORKER_OK;
        double left = deadline - now_ms();
        if (left <= 0) {
            worker_kill(w);
            if (started)
                snprintf(w->ended, sizeof w->ended, "no reply within %g s: the worker was killed", timeout_s);
            else
                worker_stall_text(w->ended, sizeof w->ended, setup_s);
            return started ? WORKER_TIMEOUT : WORKER_STALLED;
        }
        struct pollfd pf = {w->out_fd, POLLIN, 0};
        int pr = poll(&pf, 1, left > 1e9 ? 1000000000 : (int)left + 1);
        if (pr < 0 && errno != EINTR) {
            worker_kill(w);
            return WORKER_DIED;
        }
        if (pr <= 0)
            continue;
        worker_status st = worker_read(w, msg);
        if (st == WORKER_OK) {
            /* Back to the top, where a "started" notice is told from the reply. */
            json_t *m = *msg;
            *msg = NULL;
            if (worker_is_started(m)) {
                json_decref(m);
                deadline = now_ms() + timeout_s * 1e3;
                started = true;
                continue;
            }
            *msg = m;
            return WORKER_OK;
        }
        if (st != WORKER_AGAIN)
            return st;
    }
}

int worker_await_hello(worker_t *w, double timeout_s, err_t *err)
{
    json_t *hello = NULL;
    worker_status st = wait_line(w, -1, timeout_s, &hello);
    if (st != WORKER_OK)
        return err_set(err, ERR_SYSTEM, "engine", 0, 0, "the worker for GPU %d did not start: %s", w->device,
                       w->ended);
    json_t *e = json_object_get(hello, "error");
    if (e && json_is_string(e)) {
        json_t *code = json_object_get(hello, "code");
        err_set(err, code && json_is_integer(code) ? (int)json_integer_value(code) : EXIT_SYSTEM, "", 0, 0, "%s",
                json_string_value(e));
        json_decref(hello);
        worker_stop(w);
        return -1;
    }
    w->hello = hello;
    return 0;
}

int worker_ensure(worker_t *w, const worker_conf *c, err_t *err)
{
    if (worker_running(w) && w->hello)
        return 0;
    if (!worker_running(w) && worker_spawn(w, c, err))
        return -1;
    return worker_await_hello(w, c->start_timeout_s, err);
}

int worker_send(worker_t *w, json_t *request)
{
    /* The line and its newline; a worker that is gone makes write fail with EPIPE (SIGPIPE is
     * ignored by the engine). */
    char *line = json_dumps(request, JSON_COMPACT);
    char *full = xasprintf("%s\n", line);
    free(line);
    size_t len = strlen(full), off = 0;
    int rc = 0;
    while (off < len) {
        ssize_t wr = write(w->in_fd, full + off, len - off);
        if (wr < 0 && errno == EINTR)
            continue;
        if (wr <= 0) {
            rc = -1;
            break;
        }
        off += (size_t)wr;
    }
    free(full);
    if (rc) {
        worker_kill(w);
        snprintf(w->ended, sizeof w->ended, "the worker was gone before the request reached it");
    }
    return rc;
}

double worker_num(const json_t *msg, const char *key, double def)
{
    json_t *v = json_object_get(msg, key);
    return json_is_number(v) ? json_number_value(v) : def;
}

/* The one wording of a stalled set-up, for worker_call's and dispatch's kills alike. */
void worker_stall_text(char *buf, size_t len, double setup_s)
{
    snprintf(buf, len, "the problem's set-up made no progress in %.0f s: the worker was killed", setup_s);
}

/* ENGINE_SETUP_TIMEOUT's seconds: 0 when unset or empty, -1 when not a number > 0. */
static double setup_env(void)
{
    const char *env = getenv("ENGINE_SETUP_TIMEOUT");
    double v = 0;
    if (!env || !*env)
        return 0;
    return parse_double(env, &v) == 0 && v > 0 && v < 1e9 ? v : -1;
}

int worker_setup_env_check(err_t *err)
{
    if (setup_env() >= 0)
        return 0;
    return err_set(err, ERR_INPUT, "engine", 0, 0, "ENGINE_SETUP_TIMEOUT=%s: must be seconds, a number > 0",
                   getenv("ENGINE_SETUP_TIMEOUT"));
}

/* What a set-up does, at rates below any GPU's and host's we run on, so that only a stall misses it
 * (session 20: a worker spun in a cuBLAS launch with the GPU idle, at shapes whose set-up takes
 * 0.1-5 s): 60 s, 20 s per GB of the host memory it fills (2 x (A + B) + 5 x C; the H200 host
 * draws about 280 MB/s), and its products at 1 TFLOP/s (FP64 0.1): the bound, cuBLAS's result and
 * the FP64 reference (f64's is double-double, about 20 products' work), and the baseline's timed
 * launches, twice for a tf32 config. */
double worker_setup_allowance_s(const json_t *req, dtype_t dtype)
{
    double forced = setup_env();
    if (forced > 0)
        return forced;
    double M = worker_num(req, "M", 1), N = worker_num(req, "N", 1), K = worker_num(req, "K", 1),
           b = worker_num(req, "batch", 1);
    bool f64 = dtype == DTYPE_F64;
    double es = (double)dtype_size(dtype);
    double bytes = es * b * (2 * (M * K + N * K) + 5 * M * N);
    double flops = 2 * M * N * K * b, rate = f64 ? 1e11 : 1e12, products = f64 ? 22 : 3, extra = 0;
    if (json_is_true(json_object_get(req, "time")) && json_is_true(json_object_get(req, "baseline")) &&
        !json_is_true(json_object_get(req, "interleave"))) {
        double runs = worker_num(req, "warmup", 3) + worker_num(req, "runs", 7), iters = worker_num(req, "iters", 5);
        products += 2 * runs * (iters > 0 ? iters : 1);
        extra = iters > 0 ? 0 : 2 * runs * 0.002; /* iters 0: each run about 2 ms (serve.c's AUTO_RUN_MS) */
    }
    return 60 + 20 * bytes / 1e9 + products * flops / rate + extra;
}

worker_status worker_call(worker_t *w, json_t *request, double setup_s, double timeout_s, json_t **reply)
{
    *reply = NULL;
    if (worker_send(w, request))
        return WORKER_DIED;
    return wait_line(w, setup_s, timeout_s, reply);
}

void worker_kill(worker_t *w)
{
    if (w->pid > 0)
        kill(w->pid, SIGKILL);
    reap(w);
}

void worker_stop(worker_t *w)
{
    if (w->pid <= 0)
        return;
    close(w->in_fd);
    w->in_fd = -1;
    /* An idle worker exits at end of input; give it a moment to release the GPU cleanly. */
    for (int i = 0; i < 200; i++) {
        int st;
        pid_t r = waitpid(w->pid, &st, WNOHANG);
        if (r == w->pid) {
            describe(w, st);
            w->pid = 0;
            reap(w);
            return;
        }
        usleep(10000);
    }
    worker_kill(w);
}

void worker_free(worker_t *w)
{
    worker_stop(w);
    sb_free(&w->rbuf);
    json_decref(w->hello);
    w->hello = NULL;
}

void worker_put_layout(json_t *req, const layout_t *l)
{
    const char *keys[] = {"lda", "ldb", "ldc", "batch", "sa", "sb", "sc"};
    const int64_t vals[] = {l->lda, l->ldb, l->ldc, l->batch, l->sa, l->sb, l->sc};
    json_object_set_new(req, "ta", json_integer(l->ta));
    json_object_set_new(req, "tb", json_integer(l->tb));
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        json_object_set_new(req, keys[i], json_integer((json_int_t)vals[i]));
}
