/* pool.c — see pool.h. */
#define _GNU_SOURCE
#include "pool.h"

#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int pool_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static void *run(void *arg)
{
    pool_t *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        while (!p->head && !p->stopping)
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->stopping) {
            pthread_mutex_unlock(&p->lock);
            return NULL;
        }
        pool_task *t = p->head;
        p->head = t->next;
        if (!p->head)
            p->tail = NULL;
        pthread_mutex_unlock(&p->lock);
        t->fn(t->arg);
        /* A pointer is far below PIPE_BUF: the write is atomic, and a full pipe only makes this
         * thread wait until the owner takes results. */
        void *done = t->arg;
        free(t);
        ssize_t w;
        do
            w = write(p->done_pipe[1], &done, sizeof done);
        while (w < 0 && errno == EINTR);
    }
}

int pool_init(pool_t *p, int nthreads)
{
    memset(p, 0, sizeof *p);
    if (nthreads <= 0)
        nthreads = pool_cores();
    if (pipe2(p->done_pipe, O_CLOEXEC))
        return -1;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    p->threads = xcalloc((size_t)nthreads, sizeof *p->threads);
    for (int i = 0; i < nthreads; i++) {
        if (pthread_create(&p->threads[i], NULL, run, p)) {
            p->nthreads = i;
            pool_free(p);
            return -1;
        }
        p->nthreads = i + 1;
    }
    return 0;
}

void pool_free(pool_t *p)
{
    if (!p->threads)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    /* Threads blocked on a full pipe need it drained to finish. */
    int fl = fcntl(p->done_pipe[0], F_GETFL);
    fcntl(p->done_pipe[0], F_SETFL, fl | O_NONBLOCK);
    for (int i = 0; i < p->nthreads; i++) {
        void *junk;
        while (pthread_tryjoin_np(p->threads[i], NULL) == EBUSY) {
            while (read(p->done_pipe[0], &junk, sizeof junk) > 0)
                ;
            usleep(1000);
        }
    }
    while (p->head) {
        pool_task *t = p->head;
        p->head = t->next;
        free(t);
    }
    close(p->done_pipe[0]);
    close(p->done_pipe[1]);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->wake);
    free(p->threads);
    memset(p, 0, sizeof *p);
}

void pool_submit(pool_t *p, pool_fn fn, void *arg)
{
    pool_task *t = xcalloc(1, sizeof *t);
    t->fn = fn;
    t->arg = arg;
    pthread_mutex_lock(&p->lock);
    if (p->tail)
        p->tail->next = t;
    else
        p->head = t;
    p->tail = t;
    p->pending++;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
}

size_t pool_cancel(pool_t *p)
{
    pthread_mutex_lock(&p->lock);
    size_t n = 0;
    while (p->head) {
        pool_task *t = p->head;
        p->head = t->next;
        free(t);
        n++;
    }
    p->tail = NULL;
    p->pending -= n;
    pthread_mutex_unlock(&p->lock);
    return n;
}

int pool_fd(const pool_t *p) { return p->done_pipe[0]; }

size_t pool_pending(const pool_t *p) { return p->pending; }

void *pool_take(pool_t *p, bool block)
{
    int fl = fcntl(p->done_pipe[0], F_GETFL);
    fcntl(p->done_pipe[0], F_SETFL, block ? fl & ~O_NONBLOCK : fl | O_NONBLOCK);
    void *arg = NULL;
    ssize_t r;
    do
        r = read(p->done_pipe[0], &arg, sizeof arg);
    while (r < 0 && errno == EINTR);
    if (r != (ssize_t)sizeof arg)
        return NULL;
    p->pending--;
    return arg;
}

void pool_run_all(pool_t *p, pool_fn fn, void **args, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pool_submit(p, fn, args[i]);
    for (size_t i = 0; i < n; i++)
        pool_take(p, true);
}
