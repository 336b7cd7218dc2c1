/* gpu.h — the CUDA driver, loaded at run time.
 *
 * libcuda.so.1 exists only where there is an NVIDIA driver. The engine dlopen()s it on first use, so
 * the same binary runs compile-only commands (and `make test`) on machines without a GPU. Every
 * driver call in the engine is in gpu.c and goes through CU_CHECK, so a failure message always
 * names the call. The device's primary context is used, which is the one the CUDA runtime (and so
 * cuBLAS) uses too: kernels and cuBLAS share memory and a stream. */
#ifndef ENGINE_GPU_H
#define ENGINE_GPU_H

#include "err.h"

#include <cuda.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int ordinal;
    CUdevice dev;
    CUcontext ctx; /* primary context, retained */
    CUstream stream;
    bool broken;   /* a sticky error (kernel fault) killed the context: no more work on it */
    char name[256];
    int sm;             /* compute capability x10 */
    int sms;            /* multiprocessors */
    int clock_khz;      /* maximum SM clock */
    int mem_clock_khz;  /* memory clock */
    int bus_bits;       /* memory bus width */
    int l2_bytes;
    int smem_optin;     /* shared memory one block may opt in to */
    int max_threads_sm; /* resident threads per SM */
    size_t total_mem;
    int driver_version; /* e.g. 13000 */
    char pci_bus_id[32]; /* "0000:19:00.0": how NVML finds the same GPU */
} gpu_t;

/* Whether libcuda.so.1 can be loaded at all (no error is recorded). */
bool gpu_driver_present(void);

/* Number of GPUs the driver sees. Fails with EXIT_SYSTEM when there is no driver. */
int gpu_count(int *count, err_t *err);

/* Fill g with device `ordinal`'s properties without creating a context: a process that only
 * compiles (and hands the GPU work to worker processes) learns the target this way. */
int gpu_probe(gpu_t *g, int ordinal, err_t *err);

/* gpu_probe, then retain the device's primary context and make it current, create a stream.
 * Fails with EXIT_SYSTEM when there is no driver or no such device. */
int gpu_open(gpu_t *g, int ordinal, err_t *err);
void gpu_close(gpu_t *g);
/* Make g's (primary) context current on the calling thread: a library is called from threads it did
 * not open the GPU on. */
int gpu_set_current(gpu_t *g, err_t *err);
/* The calling thread's current context in *ctx (NULL: none); false when the driver cannot tell
 * (not installed). gpu_make_current makes one current again, NULL included. */
bool gpu_current(CUcontext *ctx);
/* Wait for all work queued in the current context (g's, made current by the caller). */
int gpu_synchronize(gpu_t *g, err_t *err);
void gpu_make_current(CUcontext ctx);
/* For a library call: make g's context current on this thread, the caller's in *prev; true when it
 * switched (then gpu_leave gives the caller's back, none included). Only on an open g. */
bool gpu_enter(gpu_t *g, CUcontext *prev);
void gpu_leave(gpu_t *g, bool entered, CUcontext prev);
/* Whether stream is being captured into a CUDA graph (or its capture was invalidated): work that
 * would load modules or allocate must not happen on its behalf then. */
int gpu_capturing(gpu_t *g, CUstream stream, bool *capturing, err_t *err);

/* Device memory. */
int gpu_alloc(gpu_t *g, size_t bytes, CUdeviceptr *p, err_t *err);
void gpu_free(gpu_t *g, CUdeviceptr p);
int gpu_upload(gpu_t *g, CUdeviceptr dst, const void *src, size_t bytes, err_t *err);
int gpu_download(gpu_t *g, void *dst, CUdeviceptr src, size_t bytes, err_t *err);
int gpu_copy(gpu_t *g, CUdeviceptr dst, CUdeviceptr src, size_t bytes, err_t *err);
/* Fill n 32-bit words with value, on the stream. */
int gpu_fill32(gpu_t *g, CUdeviceptr dst, uint32_t value, size_t n, err_t *err);
int gpu_sync(gpu_t *g, err_t *err);
int gpu_mem_info(gpu_t *g, size_t *free_bytes, size_t *total_bytes, err_t *err);

/* Modules and launches. */
typedef struct {
    CUmodule mod;
} gpu_module;
int gpu_module_load(gpu_t *g, const void *cubin, const char *label, gpu_module *m, err_t *err);
void gpu_module_unload(gpu_t *g, gpu_module *m);
int gpu_function(gpu_t *g, gpu_module *m, const char *name, CUfunction *f, err_t *err);
/* Let f use more than 48 KB of dynamic shared memory when it needs to. */
int gpu_set_smem(gpu_t *g, CUfunction f, int bytes, err_t *err);
int gpu_launch(gpu_t *g, CUfunction f, const int64_t grid[3], const int64_t block[3], int smem, void **args,
               err_t *err);
/* The same on `stream` (not necessarily the engine's), with programmatic stream serialization when pdl
 * is set, the GPU is sm_90+ and the driver has cuLaunchKernelEx (otherwise a plain launch): f's blocks may start before the kernel ahead of
 * it in the stream has finished, so f must execute griddepcontrol.wait before it reads or writes
 * anything that kernel may touch (kernels_src/gemm_common.cuh, grid_dep_wait). */
int gpu_launch_pdl(gpu_t *g, CUfunction f, const int64_t grid[3], const int64_t block[3], int smem, void **args,
                   CUstream stream, bool pdl, err_t *err);
/* Encode a rank-3 tiled tensor map of base (dims innermost first, strides in bytes between steps of
 * dims 1 and 2, the box one copy moves; 128-byte swizzle, zeros read past the dims) for the bulk
 * tensor copy engine (sm_90+). */
int gpu_tensor_map(gpu_t *g, CUtensorMap *map, CUtensorMapDataType type, CUdeviceptr base, const uint64_t dims[3],
                   const uint64_t strides_bytes[2], const uint32_t box[3], err_t *err);
/* Resident blocks per SM for f at this block size and dynamic shared memory. */
int gpu_occupancy(gpu_t *g, CUfunction f, int threads, int smem, int *blocks, err_t *err);
int gpu_func_attr(gpu_t *g, CUfunction f, CUfunction_attribute a, int *v, err_t *err);

/* Events on the engine's stream. */
int gpu_event_create(gpu_t *g, CUevent *e, err_t *err);
void gpu_event_destroy(gpu_t *g, CUevent e);
int gpu_event_record(gpu_t *g, CUevent e, err_t *err);
/* Milliseconds between two recorded events (waits for the second). */
int gpu_event_elapsed(gpu_t *g, CUevent a, CUevent b, float *ms, err_t *err);

#endif
