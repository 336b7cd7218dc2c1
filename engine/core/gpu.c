/* gpu.c — the CUDA driver API through dlopen. */
#define _GNU_SOURCE
#include "gpu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* cuda.h maps many names to versioned symbols (cuMemAlloc -> cuMemAlloc_v2). Expanding the name
 * before stringifying it asks dlsym for exactly the symbol the header would have linked. */
#define STR_(x) #x
#define STR(x) STR_(x)

#define CU_FUNCS(X)                                                                                \
    X(cuGetErrorName)                                                                              \
    X(cuGetErrorString)                                                                            \
    X(cuInit)                                                                                      \
    X(cuDriverGetVersion)                                                                          \
    X(cuDeviceGetCount)                                                                            \
    X(cuDeviceGet)                                                                                 \
    X(cuDeviceGetName)                                                                             \
    X(cuDeviceGetAttribute)                                                                        \
    X(cuDeviceTotalMem)                                                                            \
    X(cuDeviceGetPCIBusId)                                                                         \
    X(cuDevicePrimaryCtxRetain)                                                                    \
    X(cuDevicePrimaryCtxRelease)                                                                   \
    X(cuCtxSetCurrent)                                                                             \
    X(cuCtxGetCurrent)                                                                             \
    X(cuCtxSynchronize)                                                                            \
    X(cuStreamCreate)                                                                              \
    X(cuStreamDestroy)                                                                             \
    X(cuStreamSynchronize)                                                                         \
    X(cuStreamIsCapturing)                                                                         \
    X(cuModuleLoadData)                                                                            \
    X(cuModuleUnload)                                                                              \
    X(cuModuleGetFunction)                                                                         \
    X(cuFuncGetAttribute)                                                                          \
    X(cuFuncSetAttribute)                                                                          \
    X(cuLaunchKernel)                                                                              \
    X(cuMemAlloc)                                                                                  \
    X(cuMemFree)                                                                                   \
    X(cuMemGetInfo)                                                                                \
    X(cuMemcpyHtoD)                                                                                \
    X(cuMemcpyDtoH)                                                                                \
    X(cuMemcpyDtoDAsync)                                                                           \
    X(cuMemsetD32Async)                                                                            \
    X(cuEventCreate)                                                                               \
    X(cuEventDestroy)                                                                              \
    X(cuEventRecord)                                                                               \
    X(cuEventSynchronize)                                                                          \
    X(cuEventElapsedTime)                                                                          \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor)

static struct {
#define X(f) __typeof__(&f) f;
    CU_FUNCS(X)
#undef X
} cu;

/* Optional: drivers before CUDA 12 lack it, and then nothing is launched with PDL. */
static __typeof__(&cuLaunchKernelEx) cu_launch_ex;
/* Optional likewise: without it no template with tensor maps runs (gpu_tensor_map says so). */
static __typeof__(&cuTensorMapEncodeTiled) cu_tmap_encode;

static void *g_lib;
static char g_dlerror[512];

static int load_driver_locked(void)
{
    if (g_lib)
        return 0;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(g_dlerror, sizeof g_dlerror, "%s", e ? e : "unknown dlopen error");
        return -1;
    }
#define X(f)                                                                                       \
    {                                                                                              \
        void *sym = dlsym(lib, STR(f));                                                            \
        if (!sym) {                                                                                \
            snprintf(g_dlerror, sizeof g_dlerror, "libcuda.so.1 has no symbol %s (driver too old)", STR(f)); \
            dlclose(lib);                                                                          \
            return -1;                                                                             \
        }                                                                                          \
        memcpy(&cu.f, &sym, sizeof sym);                                                           \
    }
    CU_FUNCS(X)
#undef X
    void *ex = dlsym(lib, STR(cuLaunchKernelEx));
    memcpy(&cu_launch_ex, &ex, sizeof ex);
    void *tm = dlsym(lib, STR(cuTensorMapEncodeTiled));
    memcpy(&cu_tmap_encode, &tm, sizeof tm);
    g_lib = lib;
    return 0;
}

/* Contexts may be created on several threads at once: the driver is loaded once, under a lock, and
 * its table (cu, cu_launch_ex, cu_tmap_encode, g_lib) is read-only from then on. A failed load's
 * reason is copied out under the lock (why, may be NULL): another thread may be trying again. */
static pthread_mutex_t g_load_lock = PTHREAD_MUTEX_INITIALIZER;
static int load_driver_why(char *why, size_t n)
{
    pthread_mutex_lock(&g_load_lock);
    int rc = load_driver_locked();
    if (rc && why)
        snprintf(why, n, "%s", g_dlerror);
    pthread_mutex_unlock(&g_load_lock);
    return rc;
}
static int load_driver(void) { return load_driver_why(NULL, 0); }

bool gpu_driver_present(void) { return load_driver() == 0; }

/* Errors after which the context is unusable: every later call fails with the same code. */
static bool sticky(CUresult rc)
{
    return rc == CUDA_ERROR_ILLEGAL_ADDRESS || rc == CUDA_ERROR_LAUNCH_FAILED ||
           rc == CUDA_ERROR_ILLEGAL_INSTRUCTION || rc == CUDA_ERROR_MISALIGNED_ADDRESS ||
           rc == CUDA_ERROR_INVALID_ADDRESS_SPACE || rc == CUDA_ERROR_INVALID_PC ||
           rc == CUDA_ERROR_HARDWARE_STACK_ERROR || rc == CUDA_ERROR_ASSERT ||
           rc == CUDA_ERROR_LAUNCH_TIMEOUT || rc == CUDA_ERROR_ECC_UNCORRECTABLE;
}

/* g (NULL where a call has none) is marked broken by a sticky error: its own, never another
 * context's (the worker reads it; two library contexts share nothing here). */
static int cu_check(gpu_t *g, CUresult rc, const char *call, const char *file, int line, err_t *err)
{
    if (rc == CUDA_SUCCESS)
        return 0;
    const char *name = NULL, *text = NULL;
    if (cu.cuGetErrorName)
        cu.cuGetErrorName(rc, &name);
    if (cu.cuGetErrorString)
        cu.cuGetErrorString(rc, &text);
    if (sticky(rc) && g)
        __atomic_store_n(&g->broken, true, __ATOMIC_RELAXED);
    return err_set(err, rc == CUDA_ERROR_OUT_OF_MEMORY ? ERR_ALLOC : ERR_CUDA, file, line, 0, "%s failed: %s (%s)", call, name ? name : "CUDA error",
                   text ? text : "no description");
}
#define CU_CHECK(call, err) cu_check(NULL, (call), #call, __FILE__, __LINE__, (err))
#define GPU_CHECK(g, call, err) cu_check((g), (call), #call, __FILE__, __LINE__, (err))

static int attr(gpu_t *g, CUdevice_attribute a, int *v, err_t *err)
{
    return GPU_CHECK(g, cu.cuDeviceGetAttribute(v, a, g->dev), err);
}

int gpu_count(int *count, err_t *err)
{
    *count = 0;
    char why[sizeof g_dlerror];
    if (load_driver_why(why, sizeof why))
        return err_set(err, ERR_NO_GPU, "engine", 0, 0,
                       "no CUDA driver: %s (this command needs an NVIDIA GPU; `engine compile` does not)", why);
    if (CU_CHECK(cu.cuInit(0), err) || CU_CHECK(cu.cuDeviceGetCount(count), err))
        return -1;
    return 0;
}

int gpu_probe(gpu_t *g, int ordinal, err_t *err)
{
    memset(g, 0, sizeof *g);
    g->ordinal = ordinal;
    int count = 0;
    if (gpu_count(&count, err))
        return -1;
    if (ordinal < 0 || ordinal >= count)
        return err_set(err, ERR_NO_GPU, "--device", 0, 0, "there is no GPU %d (this machine has %d)", ordinal,
                       count);
    int major = 0, minor = 0;
    if (GPU_CHECK(g, cu.cuDeviceGet(&g->dev, ordinal), err) ||
        GPU_CHECK(g, cu.cuDeviceGetName(g->name, sizeof g->name, g->dev), err) ||
        GPU_CHECK(g, cu.cuDeviceGetPCIBusId(g->pci_bus_id, sizeof g->pci_bus_id, g->dev), err) ||
        attr(g, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major, err) ||
        attr(g, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor, err) ||
        attr(g, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &g->sms, err) ||
        attr(g, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &g->clock_khz, err) ||
        attr(g, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, &g->mem_clock_khz, err) ||
        attr(g, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, &g->bus_bits, err) ||
        attr(g, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &g->l2_bytes, err) ||
        attr(g, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &g->smem_optin, err) ||
        attr(g, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, &g->max_threads_sm, err) ||
        GPU_CHECK(g, cu.cuDeviceTotalMem(&g->total_mem, g->dev), err) ||
        GPU_CHECK(g, cu.cuDriverGetVersion(&g->driver_version), err))
        return -1;
    g->sm = major * 10 + minor;
    return 0;
}

int gpu_open(gpu_t *g, int ordinal, err_t *err)
{
    if (gpu_probe(g, ordinal, err))
        return -1;
    if (GPU_CHECK(g, cu.cuDevicePrimaryCtxRetain(&g->ctx, g->dev), err))
        return -1;
    if (GPU_CHECK(g, cu.cuCtxSetCurrent(g->ctx), err) ||
        GPU_CHECK(g, cu.cuStreamCreate(&g->stream, CU_STREAM_DEFAULT), err)) {
        cu.cuDevicePrimaryCtxRelease(g->dev);
        g->ctx = NULL;
        return -1;
    }
    return 0;
}

void gpu_close(gpu_t *g)
{
    if (!g->ctx)
        return;
    if (g->stream)
        cu.cuStreamDestroy(g->stream);
    cu.cuDevicePrimaryCtxRelease(g->dev);
    g->ctx = NULL;
    g->stream = NULL;
}

int gpu_alloc(gpu_t *g, size_t bytes, CUdeviceptr *p, err_t *err)
{
    (void)g;
    *p = 0;
    return GPU_CHECK(g, cu.cuMemAlloc(p, bytes ? bytes : 16), err);
}

void gpu_free(gpu_t *g, CUdeviceptr p)
{
    (void)g;
    if (p)
        cu.cuMemFree(p);
}

int gpu_upload(gpu_t *g, CUdeviceptr dst, const void *src, size_t bytes, err_t *err)
{
    /* The stream is a blocking one, so this synchronous copy (legacy stream) is ordered after the
     * work queued on it and before the work queued after it. */
    if (gpu_sync(g, err))
        return -1;
    return bytes ? GPU_CHECK(g, cu.cuMemcpyHtoD(dst, src, bytes), err) : 0; /* K = 0: A and B are empty */
}

int gpu_download(gpu_t *g, void *dst, CUdeviceptr src, size_t bytes, err_t *err)
{
    if (gpu_sync(g, err))
        return -1;
    return bytes ? GPU_CHECK(g, cu.cuMemcpyDtoH(dst, src, bytes), err) : 0;
}

int gpu_copy(gpu_t *g, CUdeviceptr dst, CUdeviceptr src, size_t bytes, err_t *err)
{
    return bytes ? GPU_CHECK(g, cu.cuMemcpyDtoDAsync(dst, src, bytes, g->stream), err) : 0;
}

int gpu_fill32(gpu_t *g, CUdeviceptr dst, uint32_t value, size_t n, err_t *err)
{
    return GPU_CHECK(g, cu.cuMemsetD32Async(dst, value, n, g->stream), err);
}

int gpu_sync(gpu_t *g, err_t *err) { return GPU_CHECK(g, cu.cuStreamSynchronize(g->stream), err); }

int gpu_mem_info(gpu_t *g, size_t *free_bytes, size_t *total_bytes, err_t *err)
{
    (void)g;
    return GPU_CHECK(g, cu.cuMemGetInfo(free_bytes, total_bytes), err);
}

int gpu_module_load(gpu_t *g, const void *cubin, const char *label, gpu_module *m, err_t *err)
{
    (void)g;
    m->mod = NULL;
    CUresult rc = cu.cuModuleLoadData(&m->mod, cubin);
    if (rc == CUDA_ERROR_NO_BINARY_FOR_GPU || rc == CUDA_ERROR_INVALID_IMAGE ||
        rc == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
        return err_set(err, ERR_UNSUPPORTED, label, 0, 0,
                       "the CUBIN cannot run on this sm_%d GPU (compile for its architecture: drop --arch)",
                       g->sm);
    return GPU_CHECK(g, rc, err);
}

void gpu_module_unload(gpu_t *g, gpu_module *m)
{
    (void)g;
    if (m->mod)
        cu.cuModuleUnload(m->mod);
    m->mod = NULL;
}

int gpu_function(gpu_t *g, gpu_module *m, const char *name, CUfunction *f, err_t *err)
{
    (void)g;
    return GPU_CHECK(g, cu.cuModuleGetFunction(f, m->mod, name), err);
}

int gpu_set_smem(gpu_t *g, CUfunction f, int bytes, err_t *err)
{
    (void)g;
    /* 48 KB is what every block gets without asking; more needs the opt-in attribute. */
    if (bytes <= 48 * 1024)
        return 0;
    return GPU_CHECK(g, cu.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes), err);
}

int gpu_launch_pdl(gpu_t *g, CUfunction f, const int64_t grid[3], const int64_t block[3], int smem, void **args,
                   CUstream stream, bool pdl, err_t *err)
{
    if (pdl && cu_launch_ex && g->sm >= 90) {
        CUlaunchAttribute a;
        memset(&a, 0, sizeof a);
        a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        a.value.programmaticStreamSerializationAllowed = 1;
        CUlaunchConfig c = {.gridDimX = (unsigned)grid[0], .gridDimY = (unsigned)grid[1],
                            .gridDimZ = (unsigned)grid[2], .blockDimX = (unsigned)block[0],
                            .blockDimY = (unsigned)block[1], .blockDimZ = (unsigned)block[2],
                            .sharedMemBytes = (unsigned)smem, .hStream = stream, .attrs = &a, .numAttrs = 1};
        return GPU_CHECK(g, cu_launch_ex(&c, f, args, NULL), err);
    }
    return GPU_CHECK(g, cu.cuLaunchKernel(f, (unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2],
                                      (unsigned)block[0], (unsigned)block[1], (unsigned)block[2],
                                      (unsigned)smem, stream, args, NULL),
                    err);
}

int gpu_tensor_map(gpu_t *g, CUtensorMap *map, CUtensorMapDataType type, CUdeviceptr base, const uint64_t dims[3],
                   const uint64_t strides_bytes[2], const uint32_t box[3], err_t *err)
{
    if (!cu_tmap_encode || g->sm < 90)
        return err_set(err, ERR_UNSUPPORTED, g->name, 0, 0,
                       "tensor maps need an sm_90+ GPU and a CUDA 12+ driver (this one: sm_%d, driver %d)", g->sm,
                       g->driver_version);
    const cuuint32_t elem_strides[3] = {1, 1, 1};
    const cuuint64_t d[3] = {dims[0], dims[1], dims[2]}, st[2] = {strides_bytes[0], strides_bytes[1]};
    const cuuint32_t b[3] = {box[0], box[1], box[2]};
    return GPU_CHECK(g, cu_tmap_encode(map, type, 3, (void *)(uintptr_t)base, d, st, b, elem_strides,
                                   CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                   CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                    err);
}

int gpu_launch(gpu_t *g, CUfunction f, const int64_t grid[3], const int64_t block[3], int smem, void **args,
               err_t *err)
{
    return gpu_launch_pdl(g, f, grid, block, smem, args, g->stream, false, err);
}

int gpu_occupancy(gpu_t *g, CUfunction f, int threads, int smem, int *blocks, err_t *err)
{
    (void)g;
    return GPU_CHECK(g, cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks, f, threads, (size_t)smem), err);
}

int gpu_func_attr(gpu_t *g, CUfunction f, CUfunction_attribute a, int *v, err_t *err)
{
    (void)g;
    return GPU_CHECK(g, cu.cuFuncGetAttribute(v, a, f), err);
}

int gpu_event_create(gpu_t *g, CUevent *e, err_t *err)
{
    (void)g;
    return GPU_CHECK(g, cu.cuEventCreate(e, CU_EVENT_DEFAULT), err);
}

void gpu_event_destroy(gpu_t *g, CUevent e)
{
    (void)g;
    if (e)
        cu.cuEventDestroy(e);
}

int gpu_event_record(gpu_t *g, CUevent e, err_t *err) { return GPU_CHECK(g, cu.cuEventRecord(e, g->stream), err); }

int gpu_event_elapsed(gpu_t *g, CUevent a, CUevent b, float *ms, err_t *err)
{
    (void)g;
    if (GPU_CHECK(g, cu.cuEventSynchronize(b), err))
        return -1;
    return GPU_CHECK(g, cu.cuEventElapsedTime(ms, a, b), err);
}

int gpu_set_current(gpu_t *g, err_t *err) { return GPU_CHECK(g, cu.cuCtxSetCurrent(g->ctx), err); }

bool gpu_current(CUcontext *ctx)
{
    *ctx = NULL;
    if (load_driver())
        return false;
    CUresult r = cu.cuCtxGetCurrent(ctx);
    if (r == CUDA_ERROR_NOT_INITIALIZED) {
        *ctx = NULL; /* no one has a context in this process yet */
        return true;
    }
    return r == CUDA_SUCCESS;
}

void gpu_make_current(CUcontext ctx) { cu.cuCtxSetCurrent(ctx); }

int gpu_synchronize(gpu_t *g, err_t *err)
{
    (void)g;
    return GPU_CHECK(g, cu.cuCtxSynchronize(), err);
}

bool gpu_enter(gpu_t *g, CUcontext *prev)
{
    *prev = NULL;
    if (cu.cuCtxGetCurrent(prev) != CUDA_SUCCESS)
        *prev = NULL;
    return *prev != g->ctx && cu.cuCtxSetCurrent(g->ctx) == CUDA_SUCCESS;
}

void gpu_leave(gpu_t *g, bool entered, CUcontext prev)
{
    (void)g;
    if (entered)
        cu.cuCtxSetCurrent(prev);
}

int gpu_capturing(gpu_t *g, CUstream stream, bool *capturing, err_t *err)
{
    (void)g;
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    *capturing = false;
    if (GPU_CHECK(g, cu.cuStreamIsCapturing(stream, &st), err))
        return -1;
    *capturing = st != CU_STREAM_CAPTURE_STATUS_NONE;
    return 0;
}
