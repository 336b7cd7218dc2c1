/* pool.h — a fixed set of threads that run tasks in the order they were submitted (NVRTC
 * compiles: each takes 0.2-1 s of one core and NVRTC runs concurrently in separate programs).
 * Finished tasks are announced on a pipe, so a caller that also waits on worker processes can
 * poll() one set of descriptors for both. */
#ifndef ENGINE_POOL_H
#define ENGINE_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

typedef void (*pool_fn)(void *arg);

typedef struct pool_task {
    pool_fn fn;
    void *arg;
    struct pool_task *next;
} pool_task;

typedef struct {
    pthread_t *threads;
    int nthreads;
    pthread_mutex_t lock;
    pthread_cond_t wake;   /* a task was queued, or the pool is stopping */
    pool_task *head, *tail; /* queued, not started */
    bool stopping;
    int done_pipe[2];      /* [0]: readable when a task finished; each finished task writes its arg */
    size_t pending;        /* submitted and not yet taken back with pool_take */
} pool_t;

/* Start nthreads threads (0: one per core). Returns 0, or -1 when threads cannot be created. */
int pool_init(pool_t *p, int nthreads);
/* Stop: queued tasks that have not started are dropped, running ones finish; joins the threads. */
void pool_free(pool_t *p);

/* Queue fn(arg). Never blocks. */
void pool_submit(pool_t *p, pool_fn fn, void *arg);
/* Drop the tasks that have not started (they will never be announced); returns how many. */
size_t pool_cancel(pool_t *p);
/* Descriptor that is readable while a finished task waits to be taken. */
int pool_fd(const pool_t *p);
/* The arg of a finished task; blocks until one finishes when block is true, else returns NULL
 * when none has. */
void *pool_take(pool_t *p, bool block);
/* Submitted tasks not yet taken back. */
size_t pool_pending(const pool_t *p);

/* Run fn on every element of args (n of them) and wait for all. */
void pool_run_all(pool_t *p, pool_fn fn, void **args, size_t n);

/* Cores this process may run on. */
int pool_cores(void);

#endif
