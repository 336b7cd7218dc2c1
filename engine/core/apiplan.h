/* apiplan.h — the library's context and plans (include/engine.h): choosing a config for a problem
 * (forced, else wisdom through pick.h as `engine --auto` does), building its kernel (kernel.h: the
 * command's plan and compile), loading modules once per context, per-stream workspaces, launching.
 * api.c holds the public entry points and their argument checks (apiarg.h). */
#ifndef ENGINE_APIPLAN_H
#define ENGINE_APIPLAN_H

#include "../../include/engine.h"
#include "apiarg.h"
#include "config.h"
#include "entries.h"
#include "fallback.h"
#include "gpu.h"
#include "cache.h"
#include "pick.h"
#include "kernel.h"
#include "layout.h"

#include <pthread.h>
#include <stdbool.h>

/* A module loaded into the context, per (CUBIN key, stream): a kernel that keeps state in its module
 * (split-K's serial counters, SPLIT_SERIAL) gets a module per stream, so two streams never share
 * those counters; every other kernel one module for all. */
typedef struct {
    char key[65];
    engine_stream stream; /* NULL for a stateless module */
    gpu_module mod;
    int64_t smem[TPL_MAX_LAUNCHES]; /* dynamic shared memory opted in per launch's kernel so far */
    char *names[TPL_MAX_LAUNCHES];
    size_t nnames;
} apiplan_module;

/* Scratch for split-K (the plan's workspace), one per stream: two streams at once never share one,
 * and launches on one stream are ordered. Grown, never shrunk; outgrown buffers are kept until the
 * context goes, as work already queued may still use them. */
typedef struct {
    engine_stream stream;
    CUdeviceptr ptr;
    size_t bytes;
} apiplan_workspace;

struct engine_ctx {
    pthread_mutex_t lock;
    int device;
    bool have_gpu;
    gpu_t gpu;            /* when have_gpu: its primary context retained */
    int arch;             /* target */
    bool arch_guessed;    /* the GPU's own (or no_device with arch 0), not named: an arch-specific
                           * template's configs build for sm_90a on sm_90, as the CLI's without --arch */
    int sms;              /* 0 with no_device: the arch's usual part */
    int64_t smem_limit;   /* per-block opt-in shared memory of the target */
    char *device_name;    /* matched against wisdom's device level; NULL: none */
    char *wisdom_dir, *user_wisdom_dir; /* NULL: as `engine` finds them */
    jit_t *jit;           /* the context's own compiler (memory cache, counts), on its own disk cache */
    cache_t cache;
    bool have_cache;
    /* guarded by lock: */
    const config_t *forced; /* engine_set_config's, or NULL */
    unsigned forced_gen;    /* changes with every engine_set_config: cached plans of another are not reused */
    config_t **forced_all;
    size_t nforced_all;
    pick_t *picks[DTYPE_COUNT][4][2]; /* per dtype, op (2 ta + tb of the kernels' problem) and kind (one product,
                             * a batch), loaded on first use: a TN call weighs the TN entries of its
                             * kind (pick.h) */
    config_t *naive[DTYPE_COUNT]; /* per dtype: the shipped naive config, the fallback for any layout
                                   * (NULL for bf16 and f16, which naive does not take) */
    config_t *half_default[DTYPE_COUNT]; /* bf16, f16: configs/h04_tuned.json, where wisdom has none */
    /* Wisdom's configs with a tile side halved (pick.h PICK_TILE_GAIN), made on first use: each a
     * copy of its candidate's config sharing the template (freed here, the template with the pick). */
    struct apiplan_variant {
        const config_t *base;
        select_variant v;
        config_t *cfg;
    } *variants;
    size_t nvariants;
    apiplan_module *mods;
    size_t nmods;
    apiplan_workspace *ws;
    size_t nws;
    CUdeviceptr *retired;
    size_t nretired;
    /* engine_sgemm's and engine_gemm's plans (apicall.h): open addressing over entries that never
     * move (a background build holds its entry while the table grows) */
    struct apicall_entry **plans;
    size_t plans_cap, nplans;
    /* The calls' compiles (apicall.h): async runs a problem's first calls on cuBLAS while its kernel
     * builds on a background thread; sync (ENGINE_JIT=sync) builds before the first call returns. */
    bool jit_async;
    fallback_t blas;                 /* open when jit_async: the runs while a kernel builds */
    struct apicall_entry *queue_head, *queue_tail; /* builds not yet started, FIFO */
    size_t building;                 /* builds queued or running */
    pthread_cond_t work, idle;       /* a build was queued; building fell to 0 */
    pthread_t threads[4];
    size_t nthreads;
    bool stopping;                   /* engine_destroy: the threads finish their build and leave */
};

struct engine_plan {
    engine_ctx *ctx;
    select_variant variant; /* has_variant: wisdom's config with this tile side halved (pick.h) */
    bool has_variant;
    bool by_default;      /* bf16, f16 without wisdom for the call: the shipped HALF_DEFAULT config */
    apiarg_problem p;
    layout_align al;      /* elements the kernels' A, B, C (and their lds, strides) are multiples of */
    bool run;             /* a GEMM kernel runs (M, N, K > 0) */
    bool scale;           /* K = 0: C = beta C by the context's scale kernel */
    kernel_t k;
    const config_t *cfg;
    bool stateful;        /* its module keeps state between launches: a module per stream */
    size_t mod;           /* index into ctx->mods (stateless modules) */
    jit_origin origin;
    double compile_ms;    /* NVRTC wall time of its CUBIN (0 when none was needed) */
    double build_ms;      /* this plan's build: plan, compile or cache lookup */
    double load_ms;       /* module load */
    char *refused;        /* wisdom's choice that refused the layout (a fallback runs), or NULL */
    char *refused_why;    /* its refusal, one line */
    char *describe;
    const pick_t *pk;     /* the wisdom behind the choice (NULL: forced or no GEMM) and its weighing */
    select_result r;
};

/* Make a plan of p for operands of alignment class al (layout.h; the kernels' A, B, C) and load it
 * into the context's GPU. fn names the caller in messages. */
engine_status apiplan_make(engine_ctx *c, const apiarg_problem *p, const layout_align *al, const char *fn,
                           engine_plan **out);
/* The two halves of apiplan_make: build chooses the config and compiles (or finds) its CUBIN, with
 * no GPU call (a background thread runs it); load puts it into the context's GPU (modules, shared
 * memory opt-in, PDL) and writes its description. */
engine_status apiplan_build(engine_ctx *c, const apiarg_problem *p, const layout_align *al, const char *fn,
                            engine_plan **out);
engine_status apiplan_load(engine_plan *pl, const char *fn);
/* The alignment class of the kernels' A, B, C at these addresses with p's lds and strides. */
void apiplan_align_of(const apiarg_problem *p, const void *A, const void *B, const void *C, layout_align *al);
engine_status apiplan_execute(const engine_plan *plan, const char *fn, double alpha, const void *A, const void *B,
                              double beta, void *C, engine_stream stream);
/* The same with the caller's workspace (given: ws, at least apiplan_workspace_bytes at a multiple of
 * 256 bytes; the context's per-stream one is not touched). */
engine_status apiplan_execute_ws(const engine_plan *pl, const char *fn, double alpha, const void *A, const void *B,
                                 double beta, void *C, void *ws, size_t ws_bytes, bool given, engine_stream stream);
/* Bytes of workspace the plan's launches use (0: none). */
size_t apiplan_workspace_bytes(const engine_plan *pl);
/* The context's pick for dtype, op (the kernels' 2 ta + tb) and kind (batched), loaded on first use
 * (wisdom's entries for it, pick.h). Lock held. NULL on failure: no host memory for it is err
 * ERR_ALLOC, naming fn. */
pick_t *apiplan_pick(engine_ctx *c, dtype_t dtype, int op, int batched, const char *fn, err_t *err);
/* Everything the context holds but its GPU, cache and paths. */
void apiplan_ctx_free(engine_ctx *c);

#endif
