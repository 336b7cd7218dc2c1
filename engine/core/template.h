/* template.h — kernel templates: `kernels_src/<name>.cu` files that declare their own parameters,
 * constraints, shape switches and launches in a JSON block, and the plan that turns a validated
 * config plus a problem shape into pasted CUDA source and launch geometry.
 *
 * The block sits in a comment that opens with `engine:template`:
 *
 *   /+ engine:template
 *   { "summary": "...", "dtypes": ["f32", "f64"], "peak": "fma",
 *     "params":      {"BM": {"doc": "rows of C per block", "min": 1}, "PAD": {"default": 0}},
 *     "derived":     {"WARPS": "THREADS / 32"},                  names computed from the params
 *     "constraints": [{"rule": "BM % TM == 0", "why": "each thread owns TM rows"}],
 *     "requires":    [{"rule": "K % 4 == 0", "why": "..."}],       shapes the kernel refuses
 *     "switches":    {"FULL": "M % BM == 0 && N % BN == 0"},      per-shape #defines
 *     "let":         {"GX": "cdiv(N, BN)"},                        names for the launches
 *     "workspace":   "0",                                          scratch elements
 *     "traffic":     "M*K*cdiv(N,BN) + K*N*cdiv(M,BM)",            elements loaded, for the roofline
 *     "compile_cost": "100 + TM*TN*BK/5",                          rough NVRTC ms on one core
 *     "model":       {"tile": ["BM", "BN", "BK"], "atomics": "0", "slow": "100", "turns": "1"},  for select.h
 *     "pdl":         true,                 every kernel calls grid_dep_wait() first (gemm_common.cuh)
 *     "accuracy":    "tf32",               the accuracy class (accuracy.h; default the dtype's own)
 *     "launches":    [{"kernel": "gemm", "grid": ["GX", "cdiv(M,BM)", 1], "block": ["THREADS", 1, 1],
 *                      "smem": "BM*BK*ELEM", "if": "1", "persistent": false, "traffic": "2*M*K"}],
 *     "tensor_maps": [{"tensor": "B", "dims": ["K", "N", "BATCH"], "strides": ["LDB", "SB"],
 *                      "box": [32, "BN", 1], "offset": "0", "type": "f32", "if": "1"}] }
 *   +/
 *
 * Expressions (expr.h) see the params, ELEM (bytes per element), F64, IS_HALF, BF16 (0/1), ARCH (e.g. 90) and
 * the derived names; requires, switches, let, workspace, traffic and launches also see M, N, K,
 * the layout's names (plan_target), and the switches and lets declared before them. Every param, derived name and switch reaches
 * the kernel as a #define, along with T (the element type) and TC (the compute type: gemm_common.cuh). The engine has no per-template code: one launcher runs them all.
 * A "persistent" launch's grid[0] is its work items (tiles): the launcher caps it at the blocks the GPU
 * keeps resident (SMs x blocks per SM), and the kernel strides over the items by gridDim.x.
 * A launch's "traffic" is the elements it reads and writes in DRAM: the selection model's cost of a
 * launch besides the main one (select.h); without it the model counts two elements a thread, which
 * a first launch that reads a tile and writes its rounded and split parts (tc32ws's prep_a) moves
 * several times over.
 * "tensor_maps" (sm_90+: the bulk tensor copy engine, TMA) describe up to TPL_MAX_TMAPS views of A, B,
 * C or W (the workspace) as rank-3 tensors (dims innermost first, strides in elements between steps of
 * dims 1 and 2, the box one copy moves, 128-byte swizzle, zeros read past the dims); the launcher
 * encodes them for the call's pointers and passes them, after the layout's arguments, as kernel
 * parameters (const __grid_constant__ TensorMap tmap0, tmap1, ...: gemm_common.cuh), every map named
 * (those switched off too), then the batch's count (int) for a kernel whose grid does not carry it.
 * "type" "tf32" has the copy engine hand FP32 values over as TF32.
 * A launch whose kernel the compiled module lacks (an #if that left it out) is refused when the kernel is built (kernel.c). */
#ifndef ENGINE_TEMPLATE_H
#define ENGINE_TEMPLATE_H

#include "err.h"
#include "layout.h"
#include "template_rules.h" /* tpl_rule */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The element type of A, B and C. bf16 and f16 (bfloat16, IEEE binary16) accumulate in FP32 and
 * take alpha and beta as float, as cublasGemmEx with CUBLAS_COMPUTE_32F does; f32 and f64 compute
 * in their own type. */
typedef enum { DTYPE_F32 = 0, DTYPE_F64 = 1, DTYPE_BF16 = 2, DTYPE_F16 = 3, DTYPE_COUNT } dtype_t;
const char *dtype_name(dtype_t d);
size_t dtype_size(dtype_t d); /* bytes per element */
/* "f32", "f64", "bf16" or "f16": 0, or -1 when text names none of them. */
int dtype_parse(const char *text, dtype_t *d);
/* bf16 or f16: 16-bit elements, FP32 accumulation and scalars. */
static inline bool dtype_half(dtype_t d) { return d == DTYPE_BF16 || d == DTYPE_F16; }
/* The type of alpha, beta and the accumulation: f32 for the half types, else the dtype itself. */
static inline dtype_t dtype_compute(dtype_t d) { return dtype_half(d) ? DTYPE_F32 : d; }
/* The names, for messages: "f32, f64, bf16 or f16". */
#define DTYPE_LIST "f32, f64, bf16 or f16"

typedef struct {
    char *name;
    char *doc;        /* one line, shown in errors about the param */
    bool has_default; /* false: every config must set it */
    int64_t def;
    bool has_min, has_max;
    int64_t min, max;
    int64_t *values; /* allowed values, when the set is small (vector widths) */
    size_t nvalues;
} tpl_param;

typedef struct {
    char *name;
    char *expr;
} tpl_named;

#define TPL_MAX_LAUNCHES 6
typedef struct {
    char *kernel;   /* extern "C" function name in the template */
    char *cond;     /* launched only when non-zero; NULL = always */
    char *grid[3];  /* blocks */
    char *block[3]; /* threads */
    char *smem;     /* dynamic shared memory, bytes */
    bool persistent; /* grid[0] work items, capped at the resident blocks (kernel_load) */
    char *traffic;  /* elements read and written in DRAM, for the selection model; NULL: 2 a thread */
} tpl_launch;

#define TPL_MAX_TMAPS 8
typedef struct {
    char *cond;       /* NULL: always */
    char tensor;      /* 'A', 'B', 'C' or 'W' */
    bool tf32;        /* "type": "tf32" */
    char *offset;     /* elements from the tensor's base */
    char *dims[3];    /* elements, innermost first */
    char *strides[2]; /* elements between steps of dims 1 and 2 */
    char *box[3];     /* elements one copy moves along each dim */
} tpl_tmap;

typedef struct {
    char *name;    /* file stem, what configs refer to */
    char *path;    /* file it was read from */
    char *dir;     /* its directory: the include path for NVRTC */
    char *text;    /* whole file */
    char *summary; /* one line */
    bool dtypes[DTYPE_COUNT]; /* the dtypes its kernels take ("dtypes") */
    bool tensor; /* "peak": "tensor": % of peak is taken against the tensor-core rate */
    /* "pdl": true promises that every kernel of the template waits (grid_dep_wait) before it
     * touches global memory, so on sm_90+ it may be launched with programmatic stream
     * serialization: its blocks start while the kernel before it in the stream finishes. */
    bool pdl;
    /* "arch_specific": true: its kernels need the architecture-specific target (sm_90a: wgmma), so
     * where no --arch names the target they are built for it (arch_for_template); every other
     * template's are built for the portable one. */
    bool arch_specific;
    /* "accuracy": the class its kernels are verified against, as accuracy.h's acc_kind (which
     * config.h turns it into): 0 the dtype's own ("f32"/"f64", the default), 1 "tf32". A config may
     * say otherwise. */
    int accuracy;
    tpl_param *params;
    size_t nparams;
    tpl_named *derived; /* shape-independent names computed from the params and ARCH */
    size_t nderived;
    tpl_rule *constraints;
    size_t nconstraints;
    tpl_rule *requires;
    size_t nrequires;
    tpl_named *switches;
    size_t nswitches;
    tpl_named *lets;
    size_t nlets;
    char *workspace; /* elements of type T, may be NULL */
    /* "stream_state": non-zero where the plan's kernels keep state in their module between launches
     * (serial split-K's tile counters, reset by the last split), so launches on two streams at once
     * must not share a module: the library loads one per stream for such a plan. NULL: none. */
    char *stream_state;
    char *traffic;   /* elements moved between L2 and the SMs, may be NULL */
    /* Roughly how many milliseconds NVRTC takes on one core for a config, from its params (e.g.
     * accumulators x unrolled k-steps); may be NULL. Only an order: parallel compiles start the
     * longest first, so the last to finish is not a long one started late. */
    char *compile_cost;
    /* "model": what the selection model (select.h) needs beyond the launches, as expressions over
     * everything the launches see: "tile" [rows, cols, depth] that M, N, K are padded up to,
     * "atomics" the elements added into C with atomics (split-K, stream-K), "slow" a slowdown in
     * percent where the shape takes a slower path (narrower vectors), "turns" the tiles a block
     * works on at once, each at that share of its rate (hws's PINGPONG: a consumer warpgroup a
     * tile). NULL: 1, 0, 100, 1. */
    char *model_tile[3];
    char *model_atomics;
    char *model_slow;
    char *model_turns;
    tpl_launch launches[TPL_MAX_LAUNCHES];
    size_t nlaunches;
    tpl_tmap tmaps[TPL_MAX_TMAPS];
    size_t ntmaps;
    /* Every expression above compiled once (expr.h), sorted by the address of its text: scopes made
     * by scope_add_params run these instead of parsing the text at each evaluation. */
    struct tpl_prog *progs;
    size_t nprogs;
} template_t;

/* Find `name` on the template path (paths.h) and parse its parameter block. Errors carry the
 * template's file and the line/column inside the block. */
int template_load(const char *name, template_t *t, err_t *err);
void template_free(template_t *t);
/* The same from a template's text in memory (path names it in errors; the fuzzers use this). */
int template_parse(const char *name, const char *path, const char *text, template_t *t, err_t *err);
int template_param_index(const template_t *t, const char *name);

/* Names and values an expression can see. */
#define SCOPE_MAX 128
#define SCOPE_SLOTS 256 /* open-addressed index of the names: a power of two above SCOPE_MAX */
typedef struct {
    const char *names[SCOPE_MAX];
    size_t lens[SCOPE_MAX]; /* strlen of each name */
    int64_t values[SCOPE_MAX];
    size_t n;
    unsigned char slot[SCOPE_SLOTS]; /* hash of a name -> its index + 1; 0: empty */
    const template_t *tpl; /* whose compiled expressions scope_eval may use; NULL: parse each time */
} tpl_scope;
void scope_init(tpl_scope *s);
void scope_set(tpl_scope *s, const char *name, int64_t v);
/* params (values aligned with t->params), ELEM, F64, ARCH. */
void scope_add_params(tpl_scope *s, const template_t *t, const int64_t *values, dtype_t dtype, int arch);
int scope_eval(const tpl_scope *s, const char *expr, int64_t *out, char *errbuf, size_t errlen);
/* The value of name in s (a parameter, derived name, switch or let); false when s has none. */
bool scope_get(const tpl_scope *s, const char *name, int64_t *v);
/* Evaluate the template's derived names into s (after scope_add_params). Errors are the
 * template's: err names its file. */
int scope_add_derived(tpl_scope *s, const template_t *t, err_t *err);

/* Which rule a set of values breaks first. */
typedef enum {
    TPL_OK = 0,
    TPL_BAD_VALUE,      /* index: a parameter outside its allowed values or min..max */
    TPL_BAD_CONSTRAINT, /* index: a constraint that evaluates to 0 */
} tpl_violation;

/* Check values (aligned with t->params) against the parameters' allowed values and ranges, then
 * the constraints, in the template's order, stopping at the first broken rule: sets *index and
 * returns what kind it is. A derived name or constraint that cannot be evaluated (division by
 * zero for these values, say) is -1 with the reason in msg. */
int template_check(const template_t *t, const int64_t *values, dtype_t dtype, int arch, int *index, char *msg,
                   size_t msglen);

/* The template's compile_cost for these values (1 when it gives none; never below 1). Returns 0,
 * or -1 with the reason in msg. */
int template_compile_cost(const template_t *t, const int64_t *values, dtype_t dtype, int arch, int64_t *cost,
                          char *msg, size_t msglen);

/* A config made concrete for one shape and architecture. */
typedef struct {
    const char *kernel;
    int64_t grid[3];
    int64_t block[3];
    int64_t smem;
    bool persistent; /* grid[0] is capped at the resident blocks when launched (kernel.h) */
    int64_t traffic; /* elements read and written in DRAM (the template's "traffic"); -1: not given */
} plan_launch;

/* A tensor map made concrete for a shape (template.h's tpl_tmap); on = false: its "if" is 0, the
 * kernel gets zeros in its place. */
typedef struct {
    bool on, tf32;
    char tensor;
    int64_t offset, dims[3], strides[2], box[3];
} plan_tmap;

typedef struct {
    int64_t M, N, K;
    layout_t lay;       /* the layout planned for (packed NN, one product, unless the target names one) */
    layout_align align; /* and the pointers' alignment class */
    int arch;
    dtype_t dtype;
    plan_launch launches[TPL_MAX_LAUNCHES];
    size_t nlaunches;
    plan_tmap tmaps[TPL_MAX_TMAPS];
    size_t ntmaps;
    int main_launch;   /* index of the launch of kernel "gemm": its resources are the ones reported */
    /* Programmatic dependent launch (template's "pdl", ARCH >= 90): 0 launch plainly, 1 with
     * programmatic stream serialization, 2 decided when the kernel is loaded, from its grid and
     * occupancy (session.c). The template's PDL parameter gives it; 1 when it declares none. */
    int pdl;
    int64_t workspace; /* elements */
    bool stream_state; /* the template's "stream_state" at this plan */
    int64_t traffic;   /* elements loaded from L2 by all blocks; -1 when the template gives none */
    int64_t tile[3];   /* the template's "model": tile C is padded to, */
    int64_t atomics;   /* elements added with atomics, */
    int64_t slow_pct;  /* and slowness of this shape's paths, percent (100: none) */
    int64_t turns;     /* and the tiles a block works on at once (1: one) */
    char *switches;    /* "FULL=1 EVEC_A=4", for reports */
    char *source;      /* pasted CUDA source */
} plan_t;

/* What a config is planned for: the target and the problem. */
typedef struct {
    int arch;           /* the target: sm number, ARCH_SPECIFIC added for sm_90a (arch.h) */
    int64_t smem_limit; /* bytes of shared memory per block the target allows (opt-in) */
    int64_t M, N, K;
    const layout_t *lay;       /* checked by layout_check; NULL: packed NN, one product */
    const layout_align *align; /* the pointers' alignment class, elements; NULL: what lay allows on
                                * 16-byte-aligned buffers */
} plan_target;

/* One plan asked for: a config's values for a template, at a target. The pointers are borrowed for
 * the call; the plan points into tpl only. */
typedef struct {
    const template_t *tpl;
    const char *label;       /* names the config in errors (its file) */
    const char *config_name; /* in the pasted source's first line */
    const int64_t *values;   /* aligned with tpl->params */
    dtype_t dtype;
    plan_target to;
} plan_req;

/* Evaluate requires/switches/let/launches for r's problem and paste the source. Expressions see TA
 * TB LDA LDB LDC LD_PACKED BATCH SA SB SC ALIGN_A ALIGN_B ALIGN_C besides M, N, K; a template that
 * cannot do a layout refuses it through its "requires". Returns 0, or non-zero with err set; call
 * plan_free either way. The plan points into r->tpl: free it first. */
int template_plan(const plan_req *r, plan_t *plan, err_t *err);
/* The same without the source (source and switches stay NULL; r->config_name unused): launch
 * geometry, workspace and the model's figures only, for the selection model, which plans
 * candidates at many shapes. */
int template_plan_geometry(const plan_req *r, plan_t *plan, err_t *err);
void plan_free(plan_t *plan);

/* Whether to launch the plan with programmatic dependent launch on a GPU of `sms` SMs where its
 * main kernel keeps `blocks_per_sm` blocks resident. Modes 0 and 1 say it outright; mode 2 decides.
 * Launched plainly, a grid of one partial wave is spread breadth-first, even = cdiv(blocks, sms)
 * per SM at most. Launched early behind the same grid (a timed run, a model's repeated layer), its
 * blocks first fill the slots that grid leaves free, breadth-first, and once those are taken the
 * rest go to whichever SMs free slots first, packing them to blocks_per_sm. So mode 2 says no where
 * even < blocks_per_sm, the grid is larger than the free slots (blocks > sms * blocks_per_sm -
 * blocks), and `even` blocks already keep an SM busy (PDL_BUSY_WARPS warps or more), so the packed
 * SMs set the time: 256 blocks of 4 warps at 3 per SM on 132 SMs run 2 per SM plainly and up to 3
 * with PDL, 34% slower. Where even blocks leave an SM idle (one-warp tiles of tiny shapes), a packed
 * SM costs little and PDL's hidden launch latency is most of the time (docs/NOTES.md, "PDL only
 * where it helps"). */
#define PDL_BUSY_WARPS 8
bool plan_use_pdl(const plan_t *plan, int sms, int blocks_per_sm);

#endif
