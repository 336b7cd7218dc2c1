/* kernel.c — see kernel.h. */
#include "kernel.h"

#include "paths.h"

#include <stdio.h>
#include <string.h>

/* Whether the PTX defines kernel name (".entry name("). */
static bool ptx_has_entry(const char *ptx, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = ptx ? strstr(ptx, ".entry ") : NULL; p; p = strstr(p + 7, ".entry "))
        if (strncmp(p + 7, name, n) == 0 && p[7 + n] == '(')
            return true;
    return false;
}

/* The include path of cfg's compile: the template's own directory first, then the template path,
 * where gemm_common.cuh lives. Returns how many of inc it filled. */
static size_t include_dirs(const config_t *cfg, const char *inc[JIT_MAX_INCLUDES])
{
    const char *const *dirs;
    size_t ndirs = paths_template_dirs(&dirs);
    size_t ninc = 0;
    inc[ninc++] = cfg->tpl.dir;
    for (size_t i = 0; i < ndirs && ninc < JIT_MAX_INCLUDES; i++)
        inc[ninc++] = dirs[i];
    return ninc;
}

int kernel_build(jit_t *jit, const config_t *cfg, const plan_target *to, kernel_t *k, jit_origin *origin, err_t *err)
{
    memset(k, 0, sizeof *k);
    k->cfg = cfg;
    if (layout_check(to->lay, to->M, to->N, to->K, err))
        return -1;
    /* A template that cannot do the layout refuses it through its "requires". */
    plan_req r = config_plan_req(cfg, to);
    if (template_plan(&r, &k->plan, err))
        return -1;
    char prog[160];
    snprintf(prog, sizeof prog, "%s.cu", cfg->name);
    const char *inc[JIT_MAX_INCLUDES];
    size_t ninc = include_dirs(cfg, inc);
    if (jit_compile(jit, prog, k->plan.source, inc, ninc, to->arch, cfg->path, &k->jit, origin, err))
        return -1;
    /* Every kernel the plan launches is in the module: a template whose #if leaves one out fails
     * here, by name and without a GPU, not when a GPU cannot find the function. */
    for (size_t i = 0; i < k->plan.nlaunches; i++)
        if (!ptx_has_entry(k->jit->ptx, k->plan.launches[i].kernel))
            return err_set(err, ERR_CONFIG, cfg->tpl.path, 0, 0,
                           "launch %zu runs kernel \"%s\", which the compiled module does not define (switches %s)",
                           i + 1, k->plan.launches[i].kernel, k->plan.switches),
                   -1;
    k->info = jit_func(k->jit, "gemm");
    return 0;
}

int kernel_prepare(jit_t *jit, const config_t *cfg, const plan_target *to, jit_origin *origin, err_t *err)
{
    if (layout_check(to->lay, to->M, to->N, to->K, err))
        return -1;
    plan_t plan;
    memset(&plan, 0, sizeof plan);
    plan_req r = config_plan_req(cfg, to);
    if (template_plan(&r, &plan, err)) {
        plan_free(&plan);
        return -1;
    }
    char prog[160];
    snprintf(prog, sizeof prog, "%s.cu", cfg->name);
    const char *inc[JIT_MAX_INCLUDES];
    size_t ninc = include_dirs(cfg, inc);
    int rc = jit_prepare(jit, prog, plan.source, inc, ninc, to->arch, cfg->path, origin, err);
    plan_free(&plan);
    return rc;
}

int kernel_load(gpu_t *g, int pdl, kernel_t *k, err_t *err)
{
    if (gpu_module_load(g, k->jit->cubin, k->cfg->path, &k->mod, err))
        return -1;
    k->gpu = g;
    for (size_t i = 0; i < k->plan.nlaunches; i++) {
        const plan_launch *l = &k->plan.launches[i];
        if (gpu_function(g, &k->mod, l->kernel, &k->fn[i], err) || gpu_set_smem(g, k->fn[i], (int)l->smem, err))
            return -1;
    }
    if (kernel_fit(k, err))
        return -1;
    k->pdl = false;
    if (k->plan.pdl && pdl != 0) {
        int blocks = 0, threads = 0;
        if (kernel_occupancy(k, &blocks, &threads, err))
            return -1;
        k->pdl = pdl == 1 || plan_use_pdl(&k->plan, g->sms, blocks);
    }
    k->loaded = true;
    return 0;
}

int kernel_fit(kernel_t *k, err_t *err)
{
    for (size_t i = 0; i < k->plan.nlaunches; i++) {
        const plan_launch *l = &k->plan.launches[i];
        k->resident[i] = 0;
        if (!l->persistent)
            continue;
        int blocks = 0;
        if (gpu_occupancy(k->gpu, k->fn[i], (int)(l->block[0] * l->block[1] * l->block[2]), (int)l->smem, &blocks, err))
            return -1;
        if (blocks < 1)
            return err_set(err, ERR_UNSUPPORTED, k->cfg ? k->cfg->path : l->kernel, 0, 0,
                           "kernel %s: not one block of %lld threads with %lld bytes of shared memory fits an SM",
                           l->kernel, (long long)(l->block[0] * l->block[1] * l->block[2]), (long long)l->smem);
        k->resident[i] = (int64_t)blocks * k->gpu->sms;
    }
    return 0;
}

void kernel_free(kernel_t *k)
{
    if (k->mod.mod && k->gpu)
        gpu_module_unload(k->gpu, &k->mod);
    plan_free(&k->plan);
    memset(k, 0, sizeof *k);
}

size_t kernel_workspace_bytes(const kernel_t *k, const gemm_call *c)
{
    return (size_t)k->plan.workspace * dtype_size(c->dtype);
}

/* Whether the call is the problem k was built for. */
static int call_fits(const kernel_t *k, const gemm_call *c, CUdeviceptr W, err_t *err)
{
    const char *label = k->cfg ? k->cfg->path : "kernel";
    const layout_t *a = &k->plan.lay, *b = &c->lay;
    if (!k->loaded)
        return err_set(err, ERR_INPUT, label, 0, 0, "kernel_launch: the kernel is not loaded");
    if (c->dtype != k->plan.dtype || c->M != k->plan.M || c->N != k->plan.N || c->K != k->plan.K)
        return err_set(err, ERR_INPUT, label, 0, 0,
                       "kernel_launch: the call is %s %lldx%lldx%lld, the kernel was built for %s %lldx%lldx%lld",
                       dtype_name(c->dtype), (long long)c->M, (long long)c->N, (long long)c->K,
                       dtype_name(k->plan.dtype), (long long)k->plan.M, (long long)k->plan.N, (long long)k->plan.K);
    if (a->ta != b->ta || a->tb != b->tb || a->lda != b->lda || a->ldb != b->ldb || a->ldc != b->ldc ||
        a->batch != b->batch || (a->batch > 1 && (a->sa != b->sa || a->sb != b->sb || a->sc != b->sc)))
        return err_set(err, ERR_INPUT, label, 0, 0, "kernel_launch: the call's layout is not the one the kernel was built for");
    if (c->K < 1)
        return err_set(err, ERR_INPUT, label, 0, 0, "kernel_launch: K = 0 is C = beta*C, which the caller does");
    if (!c->A || !c->B || !c->C)
        return err_set(err, ERR_INPUT, label, 0, 0, "kernel_launch: a null pointer (%s)", !c->A ? "A" : !c->B ? "B" : "C");
    size_t es = dtype_size(c->dtype);
    if (layout_align_of(c->A, es, 0, 0) < k->plan.align.a || layout_align_of(c->B, es, 0, 0) < k->plan.align.b ||
        layout_align_of(c->C, es, 0, 0) < k->plan.align.c)
        return err_set(err, ERR_INPUT, label, 0, 0,
                       "kernel_launch: a pointer is less aligned than the kernel was built for (A %d, B %d, C %d elements)",
                       k->plan.align.a, k->plan.align.b, k->plan.align.c);
    if (kernel_workspace_bytes(k, c) && !W)
        return err_set(err, ERR_INPUT, label, 0, 0, "kernel_launch: the kernel needs %zu bytes of workspace and W is null",
                       kernel_workspace_bytes(k, c));
    return 0;
}

/* The tensor map m of the plan (template.h) for this call's pointers; zeros where its "if" was 0.
 * Encoded at every launch: the map holds the address, and a call may bring other buffers. */
static int encode_tmap(const kernel_t *k, const plan_tmap *m, const gemm_call *c, CUdeviceptr W, CUtensorMap *map,
                       err_t *err)
{
    memset(map, 0, sizeof *map);
    if (!m->on)
        return 0;
    const size_t es = dtype_size(c->dtype);
    CUdeviceptr base = m->tensor == 'A' ? c->A : m->tensor == 'B' ? c->B : m->tensor == 'C' ? c->C : W;
    base += (CUdeviceptr)m->offset * es;
    if (base % 16 != 0)
        return err_set(err, ERR_INPUT, k->cfg ? k->cfg->path : "kernel", 0, 0,
                       "kernel_launch: %c + %lld elements is not 16-byte aligned, as the copy engine needs",
                       m->tensor, (long long)m->offset);
    const uint64_t dims[3] = {(uint64_t)m->dims[0], (uint64_t)m->dims[1], (uint64_t)m->dims[2]};
    const uint64_t st[2] = {(uint64_t)m->strides[0] * es, (uint64_t)m->strides[1] * es};
    const uint32_t box[3] = {(uint32_t)m->box[0], (uint32_t)m->box[1], (uint32_t)m->box[2]};
    CUtensorMapDataType type = c->dtype == DTYPE_F64    ? CU_TENSOR_MAP_DATA_TYPE_FLOAT64
                               : c->dtype == DTYPE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                               : c->dtype == DTYPE_F16  ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                               : m->tf32                ? CU_TENSOR_MAP_DATA_TYPE_TFLOAT32
                                                        : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    return gpu_tensor_map(k->gpu, map, type, base, dims, st, box, err);
}

int kernel_launch(const kernel_t *k, const gemm_call *c, CUdeviceptr W, CUstream stream, err_t *err)
{
    if (call_fits(k, c, W, err))
        return -1;
    int M = (int)c->M, N = (int)c->N, K = (int)c->K;
    int lda = (int)c->lay.lda, ldb = (int)c->lay.ldb, ldc = (int)c->lay.ldc;
    long long sa = c->lay.sa, sb = c->lay.sb, sc = c->lay.sc;
    float af = (float)c->alpha, bf = (float)c->beta;
    double ad = c->alpha, bd = c->beta;
    void *a = c->dtype == DTYPE_F64 ? (void *)&ad : (void *)&af;
    void *b = c->dtype == DTYPE_F64 ? (void *)&bd : (void *)&bf;
    CUdeviceptr A = c->A, B = c->B, C = c->C, Wp = W;
    /* Every template kernel takes the same arguments (kernels_src/gemm_common.cuh, GEMM_ARGS); the
     * layout's come next, then the tensor maps, so a kernel that declares fewer reads the ones it has. */
    enum { NARGS = 15 }; /* GEMM_ARGS's count */
    CUtensorMap maps[TPL_MAX_TMAPS];
    void *args[NARGS + TPL_MAX_TMAPS + 1] = {&M, &N, &K, a, &A, &B, b, &C, &Wp, &lda, &ldb, &ldc, &sa, &sb, &sc};
    for (size_t i = 0; i < k->plan.ntmaps; i++) {
        args[NARGS + i] = &maps[i];
        if (encode_tmap(k, &k->plan.tmaps[i], c, W, &maps[i], err))
            return -1;
    }
    /* Then the batch's count, for a kernel whose grid does not carry it (hws's ZITEMS): after every
     * map the template names, those switched off too, so such a kernel declares them all; a kernel
     * that declares no such parameter never reads it. */
    int nbatch = (int)c->lay.batch;
    args[NARGS + k->plan.ntmaps] = &nbatch;
    for (size_t i = 0; i < k->plan.nlaunches; i++) {
        const plan_launch *l = &k->plan.launches[i];
        int64_t grid[3] = {l->grid[0], l->grid[1], l->grid[2]};
        if (k->resident[i] > 0 && grid[0] > k->resident[i])
            grid[0] = k->resident[i];
        if (gpu_launch_pdl(k->gpu, k->fn[i], grid, l->block, (int)l->smem, args, stream, k->pdl, err))
            return -1;
    }
    return 0;
}

int kernel_occupancy(const kernel_t *k, int *blocks, int *threads, err_t *err)
{
    const plan_launch *l = &k->plan.launches[k->plan.main_launch];
    *threads = (int)(l->block[0] * l->block[1] * l->block[2]);
    return gpu_occupancy(k->gpu, k->fn[k->plan.main_launch], *threads, (int)l->smem, blocks, err);
}

int kernel_resources(const kernel_t *k, int *regs, int *spill_bytes, int *smem_bytes, err_t *err)
{
    CUfunction f = k->fn[k->plan.main_launch];
    int static_smem = 0;
    if (gpu_func_attr(k->gpu, f, CU_FUNC_ATTRIBUTE_NUM_REGS, regs, err) ||
        gpu_func_attr(k->gpu, f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &static_smem, err))
        return -1;
    *spill_bytes = k->info ? k->info->spill_stores + k->info->spill_loads : -1;
    *smem_bytes = static_smem + (int)k->plan.launches[k->plan.main_launch].smem;
    return 0;
}
