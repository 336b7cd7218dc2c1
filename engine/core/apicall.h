/* apicall.h — the context's plans for the CBLAS-shaped calls (engine_sgemm and friends, engine_gemm):
 * one per problem, alignment class of the pointers and forced config, made on the problem's first
 * call and kept until engine_destroy; and where those plans are built.
 *
 * With jit_async (the default) a call never waits for NVRTC: a problem's first call queues its build
 * (choosing the config, compiling or finding its CUBIN: apiplan_build, no GPU call) for a background
 * thread and runs on cuBLAS (fallback.h) at once, as do the calls after it until the build is done.
 * The next call after that loads the kernel on the caller's own thread (a module load needs the
 * context, and a graph being captured must see neither a load nor an allocation: a capturing stream
 * runs cuBLAS instead) and runs it from then on. A build that fails leaves the problem on cuBLAS,
 * with the reason kept for engine_gemm_describe. With sync (ENGINE_JIT=sync, or the option) the
 * first call builds and loads before it runs, as engine_plan_create does. */
#ifndef ENGINE_APICALL_H
#define ENGINE_APICALL_H

#include "apiplan.h"

/* Start the context's plan table in the given mode (engine_create; no thread starts before the first
 * build is queued). */
void apicall_init(engine_ctx *c, bool async);

/* One call: the checked problem p with the caller's pointers (apiarg.h: the swap is done here). */
engine_status apicall_gemm(engine_ctx *c, const apiarg_problem *p, const char *fn, double alpha, const void *A,
                           const void *B, double beta, void *C, engine_stream stream);

/* What a call of p with these pointers runs now, as one JSON object (malloc'ed into *json): "path"
 * ("engine" or "cublas"), "why", "jit", "fallback_calls" and the plan's own description
 * (engine_plan_describe) once it is built. wait: build (or wait for the build) and load first, so the
 * answer is the kernel's. */
engine_status apicall_describe(engine_ctx *c, const apiarg_problem *p, const char *fn, const void *A, const void *B,
                               const void *C, bool wait, char **json);

/* Wait until no build is queued or running, then load every built plan on this thread. */
engine_status apicall_wait(engine_ctx *c);

/* Stop the threads (a build under way is finished, queued ones are dropped) and free every plan. */
void apicall_free(engine_ctx *c);

#endif
