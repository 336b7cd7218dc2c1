/* labjit.c — see labjit.h. */
#include "labjit.h"

#include "util.h"

#include <pthread.h>

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static jit_t *g_jit; /* written once, under g_once */

static void make(void)
{
    g_jit = jit_new();
    if (!g_jit)
        xoom(sizeof(void *)); /* a few hundred bytes at the start: nothing can go on */
}

jit_t *lab_jit(void)
{
    pthread_once(&g_once, make);
    return g_jit;
}
