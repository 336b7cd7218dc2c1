/* engine.h — libengine: the tuned GEMM kernels of `engine`, called in-process on device pointers.
 *
 *   engine_ctx *ctx;
 *   engine_options opt;
 *   engine_options_init(&opt);
 *   if (engine_create(&ctx, &opt) != ENGINE_SUCCESS) { puts(engine_last_error(NULL)); ... }
 *   engine_sgemm(ctx, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_TRANS, m, n, k, 1.0f, A, lda, B, ldb,
 *                0.0f, C, ldc, stream);
 *
 * Conventions (CBLAS and cuBLAS): device pointers, an explicit stream on every call (NULL: the legacy
 * default stream), nothing synchronised behind the caller's back. Every call returns a status; on a
 * failure nothing was launched and engine_last_error gives the one line `engine` would print for it.
 *
 * A context belongs to one GPU. Its calls work in the device's primary context (the one the CUDA
 * runtime, cuBLAS and torch use), so pointers from cudaMalloc or torch work as they are, and give
 * the calling thread's current context back as they return (none included). Several host threads may call into one context at once; a plan is immutable after creation
 * and may be executed from several threads and streams at once.
 *
 * Which kernel runs: a config forced by engine_set_config, else wisdom's choice for the problem (the
 * user's wisdom, then the shipped one, then the selection model: the same code as `engine bench
 * --auto`, given the call's op and batch: a TN call weighs TN entries, a batched one counts every
 * product's tiles and takes an entry of its batch as exact). Kernels are compiled with NVRTC on first
 * use, kept as CUBINs in the on-disk cache that `engine` uses, and loaded once per context.
 *
 * Calls never wait for the compiler (engine_options.jit, ENGINE_JIT_ASYNC, the default): the first
 * call of a problem (shape, layout, pointer alignment) queues its kernel's build on a background
 * thread and runs on cuBLAS at once, as do the calls after it until the build is done; the next call
 * loads the kernel and runs it from then on. A stream being captured into a CUDA graph never loads or
 * compiles: until the kernel is loaded, captured calls record cuBLAS. engine_wait waits for the builds;
 * engine_gemm_describe says which path a call takes and why. ENGINE_JIT_SYNC (or ENGINE_JIT=sync in
 * the environment) builds before the first call returns instead. engine_plan_create always builds. */
#ifndef ENGINE_H
#define ENGINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ENGINE_VERSION_MAJOR 0
#define ENGINE_VERSION_MINOR 5

#if defined(__GNUC__)
#define ENGINE_API __attribute__((visibility("default")))
#else
#define ENGINE_API
#endif

typedef struct engine_ctx engine_ctx;
typedef struct engine_plan engine_plan;
/* cudaStream_t and CUstream are both this type, so either may be passed without a cast. */
struct CUstream_st;
typedef struct CUstream_st *engine_stream;

typedef enum {
    ENGINE_SUCCESS = 0,
    ENGINE_ERROR_INVALID_ARGUMENT = 1, /* a null pointer, a negative size, an ld too small, batch < 1, a bad enum */
    ENGINE_ERROR_MISALIGNED = 2,       /* a pointer not a multiple of the element size (or the plan's alignment) */
    ENGINE_ERROR_DTYPE_MISMATCH = 3,   /* the forced config is of the other dtype */
    ENGINE_ERROR_NO_GPU = 4,           /* no driver, no such device, or a context made without one */
    ENGINE_ERROR_CONFIG = 5,           /* a config or wisdom file that does not load; no config for the problem */
    ENGINE_ERROR_NOT_SUPPORTED = 6,    /* the chosen template refuses this layout or shape */
    ENGINE_ERROR_COMPILE = 7,          /* NVRTC failed on the kernel */
    ENGINE_ERROR_CUDA = 8,             /* a driver call failed: module load, launch, a fault */
    ENGINE_ERROR_OUT_OF_MEMORY = 9,    /* GPU memory for a workspace or a module ran out, or host memory
                                        * for a context, a plan or a forced config */
    ENGINE_ERROR_VERSION = 10,         /* a struct larger than this library's: the program was built
                                        * against a newer engine.h (its size field) */
} engine_status;

/* CBLAS's values, so CblasRowMajor and CblasNoTrans may be passed as they are. */
typedef enum { ENGINE_ROW_MAJOR = 101, ENGINE_COL_MAJOR = 102 } engine_order;
typedef enum { ENGINE_NO_TRANS = 111, ENGINE_TRANS = 112 } engine_transpose;
/* BF16 and F16 (bfloat16, IEEE binary16): A, B and C in the type, FP32 accumulation, alpha and beta
 * converted to float (cublasGemmEx with CUBLAS_COMPUTE_32F); where wisdom holds no entry of the type
 * the shipped configs/h04_tuned.json runs. */
typedef enum { ENGINE_F32 = 0, ENGINE_F64 = 1, ENGINE_BF16 = 2, ENGINE_F16 = 3 } engine_dtype;
/* Where a call's first kernel build happens (see the top of this file). DEFAULT: async, unless the
 * environment says ENGINE_JIT=sync. */
typedef enum { ENGINE_JIT_DEFAULT = 0, ENGINE_JIT_ASYNC = 1, ENGINE_JIT_SYNC = 2 } engine_jit;

/* The structs a program fills (engine_options, engine_plan_desc) open with their size: sizeof the
 * struct as the program was built, set by their init function. The library reads that many bytes, so
 * a program built against an older engine.h, whose struct is smaller, keeps working (the fields it
 * lacks take their defaults), and one built against a newer engine.h is refused with
 * ENGINE_ERROR_VERSION rather than read past its end. A size of 0 (the init function not called)
 * is ENGINE_ERROR_INVALID_ARGUMENT. A field added in a later version starts past the end of the
 * earlier struct, tail padding included, so that it is never read from an older program's padding. */
typedef struct {
    size_t size;                 /* sizeof(engine_options) as the program was built: engine_options_init */
    int device;                  /* CUDA device ordinal; default 0 */
    const char *cache_dir;       /* CUBIN cache; NULL: $XDG_CACHE_HOME/engine, else ~/.cache/engine (each
                                    context its own; contexts naming one directory share its entries) */
    const char *wisdom_dir;      /* shipped wisdom; NULL: $ENGINE_WISDOM, else the one installed with the library */
    const char *user_wisdom_dir; /* NULL: $XDG_DATA_HOME/engine/wisdom, else ~/.local/share/engine/wisdom; "": none */
    int no_device;               /* 1: open no GPU; plans are created and described for `arch`, never executed */
    int arch;                    /* with no_device: the target (90 = sm_90); 0 means 90 as a GPU reports
                                  * it (an arch-specific template then builds for sm_90a, as on the
                                  * GPU and as the CLI without --arch; 90 named: it is refused) */
    int sms;                     /* with no_device: SMs the selection model assumes; 0: the arch's usual part */
    const char *device_name;     /* with no_device: the GPU name wisdom's device level is matched with; NULL: none */
    engine_jit jit;              /* the calls' compiles: background (cuBLAS meanwhile) or before the call returns */
} engine_options;

/* ENGINE_VERSION_MAJOR * 1000 + ENGINE_VERSION_MINOR of the library loaded (a program built against
 * another header can tell; the Python package checks it). */
ENGINE_API int engine_version(void);

/* Defaults: device 0, every path NULL (as `engine` finds them), a GPU; size set. */
ENGINE_API void engine_options_init(engine_options *opt);

/* Open a context (opt NULL: defaults). On failure *ctx is NULL and engine_last_error(NULL) says why. */
ENGINE_API engine_status engine_create(engine_ctx **ctx, const engine_options *opt);
/* Wait for the work queued in the device's primary context (kernels of this context's modules may
 * still be running), then unload the modules and free the workspaces. Plans of it must be
 * destroyed first. */
ENGINE_API void engine_destroy(engine_ctx *ctx);

/* Force one config for every later plan and call of ctx: the path of a config file or its JSON text
 * (a string starting with '{'). NULL: back to wisdom's choice. A plan of the other dtype then fails
 * with ENGINE_ERROR_DTYPE_MISMATCH. Plans made earlier keep their config. */
ENGINE_API engine_status engine_set_config(engine_ctx *ctx, const char *json_or_path);

/* C = alpha op(A) op(B) + beta C, m x n, CBLAS argument order. m, n or k = 0 behave as BLAS: with
 * k = 0, C = beta C; with m or n = 0, nothing. The first call of a problem plans it (kept in the
 * context for later calls of the same problem); engine_plan_create does that explicitly. */
ENGINE_API engine_status engine_sgemm(engine_ctx *ctx, engine_order order, engine_transpose transa,
                                      engine_transpose transb, int64_t m, int64_t n, int64_t k, float alpha,
                                      const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                                      int64_t ldc, engine_stream stream);
ENGINE_API engine_status engine_dgemm(engine_ctx *ctx, engine_order order, engine_transpose transa,
                                      engine_transpose transb, int64_t m, int64_t n, int64_t k, double alpha,
                                      const double *A, int64_t lda, const double *B, int64_t ldb, double beta,
                                      double *C, int64_t ldc, engine_stream stream);

/* The same with the element type named: A, B and C of dtype (ENGINE_BF16 and ENGINE_F16 for the
 * half types, which accumulate in FP32; alpha and beta converted to float, but for ENGINE_F64). As
 * cublasGemmEx with one type for all three and CUBLAS_COMPUTE_32F (64F for ENGINE_F64). */
ENGINE_API engine_status engine_gemm_ex(engine_ctx *ctx, engine_dtype dtype, engine_order order,
                                        engine_transpose transa, engine_transpose transb, int64_t m, int64_t n,
                                        int64_t k, double alpha, const void *A, int64_t lda, const void *B,
                                        int64_t ldb, double beta, void *C, int64_t ldc, engine_stream stream);

/* batch_count products; matrix i of A starts at A + i * stride_a elements (and so for B, C).
 * stride_a or stride_b may be 0 (one matrix for every product); C's matrices may not overlap. */
ENGINE_API engine_status engine_sgemm_strided_batched(engine_ctx *ctx, engine_order order, engine_transpose transa,
                                                      engine_transpose transb, int64_t m, int64_t n, int64_t k,
                                                      float alpha, const float *A, int64_t lda, int64_t stride_a,
                                                      const float *B, int64_t ldb, int64_t stride_b, float beta,
                                                      float *C, int64_t ldc, int64_t stride_c, int64_t batch_count,
                                                      engine_stream stream);
ENGINE_API engine_status engine_dgemm_strided_batched(engine_ctx *ctx, engine_order order, engine_transpose transa,
                                                      engine_transpose transb, int64_t m, int64_t n, int64_t k,
                                                      double alpha, const double *A, int64_t lda, int64_t stride_a,
                                                      const double *B, int64_t ldb, int64_t stride_b, double beta,
                                                      double *C, int64_t ldc, int64_t stride_c, int64_t batch_count,
                                                      engine_stream stream);

/* Block until every kernel build the calls queued has finished, then load the built kernels on this
 * thread, so that the next calls run the engine's kernels. */
ENGINE_API engine_status engine_wait(engine_ctx *ctx);

/* Compile the kernel of every wisdom entry for the context's GPU, each at its entry's shape, op, batch
 * and alignment class, into the on-disk CUBIN cache on jobs threads (< 1: one a core), so that the
 * first calls of those problems find them there. progress (may be NULL) is called after each kernel,
 * one call at a time, from the thread that compiled it. Nothing is loaded and nothing stays in
 * memory. Fails (ENGINE_ERROR_COMPILE, the first failure's line) when some kernel did not compile;
 * the others are cached all the same. ENGINE_ERROR_OUT_OF_MEMORY, with nothing compiled, when the
 * host had no memory for its picks, its list of kernels or its threads. */
typedef void (*engine_warm_progress)(void *user, size_t done, size_t total, const char *label);
ENGINE_API engine_status engine_warm(engine_ctx *ctx, int jobs, engine_warm_progress progress, void *user);

/* One problem, planned once and executed many times. */
typedef struct {
    size_t size; /* sizeof(engine_plan_desc) as the program was built: engine_plan_desc_init */
    engine_dtype dtype;
    engine_order order;
    engine_transpose transa, transb;
    int64_t m, n, k;
    int64_t lda, ldb, ldc;
    int64_t batch;                      /* >= 1; 1 and the strides ignored: one product */
    int64_t stride_a, stride_b, stride_c; /* elements between the matrices of a batch */
    int alignment; /* bytes every A, B and C given to execute are a multiple of (16 lets the kernels
                      use vector loads where the lds and strides allow); 0: any (the element size).
                      execute refuses a pointer that breaks it (ENGINE_ERROR_MISALIGNED). With the
                      lds it is the alignment class wisdom's entries are matched at: cudaMalloc's
                      pointers are 16 (the class the shipped entries were measured at) */
} engine_plan_desc;

/* Fill desc for a packed problem (lds the row length of each matrix in its order, batch 1), size set. */
ENGINE_API void engine_plan_desc_init(engine_plan_desc *desc, engine_dtype dtype, engine_order order,
                                      engine_transpose transa, engine_transpose transb, int64_t m, int64_t n,
                                      int64_t k);

/* Check desc, choose the config, compile (or find in the cache) and load its kernel. */
ENGINE_API engine_status engine_plan_create(engine_ctx *ctx, const engine_plan_desc *desc, engine_plan **plan);
/* Enqueue the product on stream. alpha and beta are converted to the plan's dtype. Launches only,
 * with one exception: a plan that needs a workspace takes the context's for that stream, allocated
 * (or grown) on the stream's first need of it, and a plan whose kernels keep state between launches
 * (serial split-K) loads its module once per stream. A program that must never allocate there
 * passes its own workspace (engine_plan_execute_ws) and runs each plan once per stream before a
 * capture. */
ENGINE_API engine_status engine_plan_execute(const engine_plan *plan, double alpha, const void *A, const void *B,
                                             double beta, void *C, engine_stream stream);
/* Bytes of GPU workspace the plan's launches use: 0 for most; split-K in two passes and packed
 * operands need some. */
ENGINE_API size_t engine_plan_workspace_size(const engine_plan *plan);
/* As engine_plan_execute with the caller's workspace: at least engine_plan_workspace_size bytes at
 * a multiple of 256 bytes (cudaMalloc's are), used by nothing else until the launch is done (one a
 * stream, as cuBLAS's). Ignored (may be NULL) when the plan needs none; too small or misaligned:
 * ENGINE_ERROR_INVALID_ARGUMENT, nothing launched. Never allocates. */
ENGINE_API engine_status engine_plan_execute_ws(const engine_plan *plan, double alpha, const void *A, const void *B,
                                                double beta, void *C, void *workspace, size_t workspace_bytes,
                                                engine_stream stream);
/* What the plan runs, as one JSON object: the config (path, label with overrides, every param), the
 * wisdom entry behind it (its file, line, shape, op and batch, and "basis": the entries weighed,
 * those of the call's op at its batch, or NN's where wisdom holds none of that op) or "forced", the
 * layout, where its CUBIN came from ("nvrtc", "disk", "memory") and the NVRTC time in ms. Writes at most len bytes (NUL-terminated when len > 0) and
 * returns the length of the whole text, as snprintf does. */
ENGINE_API size_t engine_plan_describe(const engine_plan *plan, char *buf, size_t len);
ENGINE_API void engine_plan_destroy(engine_plan *plan);

/* The call C = alpha op(A) op(B) + beta C described by desc (any dtype; desc->alignment is ignored:
 * the pointers' own alignment class is used, as engine_sgemm does), through the context's plans as
 * engine_sgemm and friends are. One entry for every dtype and batch: fewer arguments to pass from a
 * binding that holds desc ready. */
ENGINE_API engine_status engine_gemm(engine_ctx *ctx, const engine_plan_desc *desc, double alpha, const void *A,
                                     const void *B, double beta, void *C, engine_stream stream);
/* What engine_gemm(ctx, desc, ..., A, B, ..., C, ...) runs now, as one JSON object: "path" ("engine"
 * or "cublas"), "why", "jit", "fallback_calls" (calls that ran cuBLAS so far) and, once built, the
 * members engine_plan_describe gives. wait != 0: first build (or wait for the build) and load, so the
 * answer is the engine's kernel (or why it is not). A problem not called before has its build
 * queued. Writes at most len bytes (NUL-terminated when len > 0); *needed (may be NULL) gets the
 * whole text's length. */
ENGINE_API engine_status engine_gemm_describe(engine_ctx *ctx, const engine_plan_desc *desc, const void *A,
                                              const void *B, const void *C, int wait, char *buf, size_t len,
                                              size_t *needed);

/* The message of this thread's last failed call (ctx may be NULL), "" when there was none. */
ENGINE_API const char *engine_last_error(const engine_ctx *ctx);
/* "ENGINE_ERROR_MISALIGNED" and so on; "ENGINE_ERROR_UNKNOWN" past the last. */
ENGINE_API const char *engine_status_string(engine_status status);
/* sizeof the public struct named ("engine_options", "engine_plan_desc") as this library was built,
 * 0 for another name: the largest size field it takes; a binding that lays the structs out itself
 * (Python's ctypes) checks it. */
ENGINE_API size_t engine_struct_size(const char *name);

#ifdef __cplusplus
}
#endif

#endif
