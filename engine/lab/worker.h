/* worker.h — the processes that touch the GPU. The engine itself never runs a kernel: it spawns
 * one worker per GPU (`engine __worker`, serve.c) and sends it requests, one JSON object per line
 * on its stdin; each reply is one line on its stdout. A kernel that faults, hangs or breaks its
 * context takes only its worker down: the caller sees WORKER_DIED or WORKER_TIMEOUT, records
 * that one point, and the next request starts a fresh worker. Workers run in their own process
 * group (a Ctrl-C reaches only the engine, which then stops them) and die with the engine. */
#ifndef ENGINE_WORKER_H
#define ENGINE_WORKER_H

#include "err.h"
#include "layout.h"
#include "template.h"
#include "util.h"

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

/* How workers are started. */
typedef struct {
    const char *exe;       /* the program: this engine, or $ENGINE_WORKER (tests put a fake there) */
    const char *cache_dir; /* passed on: the worker finds the CUBINs the engine compiled there */
    bool bandwidth;        /* measure DRAM and L2 bandwidth at start (for the roofline column) */
    double start_timeout_s; /* for the hello: CUDA and cuBLAS start-up, the bandwidth probes */
} worker_conf;

typedef struct {
    int device;      /* CUDA ordinal it times on */
    pid_t pid;       /* 0: not running */
    int in_fd;       /* its stdin: requests */
    int out_fd;      /* its stdout: replies */
    strbuf rbuf;     /* bytes read that are not yet a whole line */
    json_t *hello;   /* its first message (device properties, measured bandwidth), NULL before */
    int starts;      /* how many processes this slot has started */
    char ended[256]; /* how the last process ended ("killed by signal 6 (Aborted)") */
    int signal;      /* the signal that ended the last process; 0 when it exited */
} worker_t;

typedef enum {
    WORKER_OK = 0,  /* a reply (or the hello) arrived */
    WORKER_AGAIN,   /* nothing whole yet (worker_read only) */
    WORKER_TIMEOUT, /* no reply in time after "started": the worker was killed */
    WORKER_STALLED, /* no "started" within the set-up allowance: the worker was killed */
    WORKER_DIED,    /* it exited or closed its stdout without replying; w->ended says how */
} worker_status;

/* A slot for GPU `device`, not started. */
void worker_init(worker_t *w, int device);
/* Start the process; returns at once (the hello comes later). EXIT_SYSTEM when it cannot start. */
int worker_spawn(worker_t *w, const worker_conf *c, err_t *err);
/* Wait for the hello of a spawned worker. A hello that reports a failure (no GPU) becomes err,
 * with the worker's code and message, and the worker is reaped. */
int worker_await_hello(worker_t *w, double timeout_s, err_t *err);
/* Spawn when not running, then wait for the hello. */
int worker_ensure(worker_t *w, const worker_conf *c, err_t *err);
bool worker_running(const worker_t *w);
/* Whether the last process was ended by SIGTERM, SIGINT or SIGHUP: signals sent from outside to a
 * whole job (Slurm's requeue, preemption and scancel signal every process of it; so do systemd and
 * kill(1) on a process list), never raised by a kernel that faults. */
bool worker_stopped_from_outside(const worker_t *w);

/* Send one request (one line). Returns 0, or -1 when the worker is gone (it is then reaped). */
int worker_send(worker_t *w, json_t *request);
/* Read what is available; WORKER_OK with *msg when a whole line arrived, WORKER_AGAIN when not
 * yet, WORKER_DIED at end of file. Never blocks when poll() said out_fd is readable. */
worker_status worker_read(worker_t *w, json_t **msg);
/* A whole line is already buffered: worker_read returns it without reading (poll would not wake
 * for it). */
bool worker_has_line(const worker_t *w);
/* Send, then wait for the reply: at most setup_s for the worker's set-up (until it says "started")
 * and timeout_s from there; kills the worker on a timeout (WORKER_STALLED before "started"). */
worker_status worker_call(worker_t *w, json_t *request, double setup_s, double timeout_s, json_t **reply);
/* The seconds a "run" request may take before the worker says "started" (its set-up: inputs drawn,
 * the bound and references made, cuBLAS timed when asked), from the request's shape and timing and
 * the config's dtype (the request's may be null); $ENGINE_SETUP_TIMEOUT (seconds) in its place
 * where set. */
double worker_setup_allowance_s(const json_t *request, dtype_t dtype);
/* Why a worker whose set-up missed that allowance was killed, into buf. */
void worker_stall_text(char *buf, size_t len, double setup_s);
/* 0, or exit 2 with err (ERR_INPUT) naming ENGINE_SETUP_TIMEOUT when it is set to anything but
 * a number of seconds > 0 (checked before any GPU work: worker_setup_allowance_s ignores a bad one). */
int worker_setup_env_check(err_t *err);
/* A number of a request or reply (the protocol's messages are our own: lenient), def where absent. */
double worker_num(const json_t *msg, const char *key, double def);
/* Whether a message is the worker's "started" notice (the kernel is about to run). */
bool worker_is_started(json_t *msg);

/* Ask it to exit (close its stdin), wait briefly, then kill. */
void worker_stop(worker_t *w);
/* SIGKILL and reap (a hung kernel never returns). */
void worker_kill(worker_t *w);
void worker_free(worker_t *w);

/* The program to run as a worker: $ENGINE_WORKER, else this executable. */
const char *worker_default_exe(void);

/* Put a layout into a "run" request: "ta", "tb", "lda", "ldb", "ldc", "batch", "sa", "sb", "sc"
 * (serve.c reads them back). */
void worker_put_layout(json_t *req, const layout_t *l);

#endif
