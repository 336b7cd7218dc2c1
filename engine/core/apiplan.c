/* apiplan.c — see apiplan.h. */
#include "apiplan.h"

#include "arch.h"
#include "jit.h"
#include "paths.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static engine_status fail(engine_status st, err_t *err) { return api_fail(st, err); }

/* Host memory that ran out below the entry point (the plan's source, NVRTC's output) is named by
 * the entry point, as its own objects' is, with where it ran out: "fn: no host memory for the
 * pasted source (configs/x.json)". Other failures keep their config's place. */
static engine_status build_fail(engine_status st, const char *fn, err_t *err)
{
    if (st != ENGINE_ERROR_OUT_OF_MEMORY)
        return fail(st, err);
    char text[ERR_TEXT_LEN + ERR_SOURCE_LEN + 8];
    snprintf(text, sizeof text, "%s (%s)", err->text, err->source);
    return api_fail_text(st, fn, text);
}

/* ---- choosing a config ---------------------------------------------------------------------- */

/* The context's pick for dtype, op (the kernels' 2 ta + tb) and kind (batched: a batch of products),
 * loaded on first use: the entries of that op for that kind (else NN's, pick.h), planned in that op.
 * Called with the lock held. */
pick_t *apiplan_pick(engine_ctx *c, dtype_t dtype, int op, int batched, const char *fn, err_t *err)
{
    if (c->picks[dtype][op][batched])
        return c->picks[dtype][op][batched];
    pick_t *pk = try_calloc(1, sizeof *pk);
    if (!pk)
        return err_set(err, ERR_ALLOC, fn, 0, 0, "no host memory for the context's pick"), NULL;
    pick_params pp = {.device = c->device, .probe = false, .arch = c->arch, .arch_guessed = c->arch_guessed, .sms = c->sms,
                      .device_name = c->device_name, .dtype = dtype, .op = op, .batch = batched ? 2 : 1,
                      .wisdom_dir = c->wisdom_dir, .user_dir = c->user_wisdom_dir, .warn = NULL};
    const bool was_set = err_isset(err);
    if (pick_init_with(pk, &pp, NULL, 0, err)) {
        free(pk);
        /* Host memory that ran out reading wisdom or loading a candidate's config is named by the
         * entry point, with where it ran out. */
        if (!was_set && err->cause == ERR_ALLOC && strcmp(err->source, fn) != 0) {
            err_t at = *err;
            err_clear(err);
            err_set(err, ERR_ALLOC, fn, 0, 0, "%s (%s)", at.text, at.source);
        }
        return NULL;
    }
    c->picks[dtype][op][batched] = pk;
    return pk;
}

/* Where the config came from, as a JSON object's members, appended to sb: the entry (its op, batch
 * and alignment class) and what was weighed ("basis": the entries of the call's op, or NN's where there are none,
 * at the call's batch). */
/* -1 when the host had no memory for the text. */
static int why_json(strbuf *sb, const pick_t *pk, const select_result *r, int op)
{
    const select_cand *cd = &pk->sel.cands[r->chosen];
    double t = -1;
    for (size_t j = 0; j < r->nw; j++)
        if (r->w[j].cand == r->chosen)
            t = r->w[j].t_est;
    sb_add(sb, "\"chosen_by\":\"wisdom\",\"wisdom\":{\"file\":");
    sb_add_json_string(sb, cd->file->path);
    sb_addf(sb, ",\"line\":%d,\"entry_shape\":\"%lldx%lldx%lld\",\"entry_op\":\"%s\",\"entry_batch\":%lld,\"exact\":%s",
            cd->entry->line, (long long)cd->entry->shape.m, (long long)cd->entry->shape.n,
            (long long)cd->entry->shape.k, wisdom_op_name(cd->entry->op), (long long)wisdom_batch(cd->entry),
            r->exact ? "true" : "false");
    sb_addf(sb, ",\"entry_align\":[%d,%d,%d]", cd->align.a, cd->align.b, cd->align.c);
    char *basis = pk->op_note ? try_asprintf("%s, at batch %lld", pk->op_note, (long long)r->batch)
                              : try_asprintf("the %s entries, at batch %lld", wisdom_op_name(op), (long long)r->batch);
    if (!basis)
        return -1;
    sb_add(sb, ",\"basis\":");
    sb_add_json_string(sb, basis);
    free(basis);
    if (!r->exact && t >= 0)
        sb_addf(sb, ",\"est_us\":%.3f,\"weighed\":%zu", t * 1e6, r->nw);
    sb_add(sb, "}");
    return 0;
}

/* ---- modules -------------------------------------------------------------------------------- */

/* Index of the module of key (for stream when stateful), loading it when new. Lock held. */
static int module_get(engine_ctx *c, const jit_result *jit, engine_stream stream, const char *label, size_t *out,
                      err_t *err)
{
    for (size_t i = 0; i < c->nmods; i++)
        if (c->mods[i].stream == stream && strcmp(c->mods[i].key, jit->key) == 0) {
            *out = i;
            return 0;
        }
    gpu_module m;
    if (gpu_module_load(&c->gpu, jit->cubin, label, &m, err))
        return -1;
    apiplan_module *mods = try_realloc(c->mods, (c->nmods + 1) * sizeof *c->mods);
    if (!mods) {
        gpu_module_unload(&c->gpu, &m);
        return err_set(err, ERR_ALLOC, label, 0, 0, "no host memory for the context's module table");
    }
    c->mods = mods;
    apiplan_module *x = &c->mods[c->nmods];
    memset(x, 0, sizeof *x);
    snprintf(x->key, sizeof x->key, "%s", jit->key);
    x->stream = stream;
    x->mod = m;
    *out = c->nmods++;
    return 0;
}

/* Kernel `name` of module i, with at least smem bytes of dynamic shared memory opted in (never
 * lowered: another plan of the same module may need more). Lock held. */
static int module_function(engine_ctx *c, size_t i, const char *name, int64_t smem, CUfunction *f, err_t *err)
{
    apiplan_module *x = &c->mods[i];
    if (gpu_function(&c->gpu, &x->mod, name, f, err))
        return -1;
    size_t j;
    for (j = 0; j < x->nnames && strcmp(x->names[j], name) != 0; j++)
        ;
    if (j == x->nnames) {
        if (j == TPL_MAX_LAUNCHES)
            return err_set(err, ERR_SYSTEM, name, 0, 0, "more than %d kernels in one module", TPL_MAX_LAUNCHES);
        char *copy = try_strdup(name);
        if (!copy)
            return err_set(err, ERR_ALLOC, name, 0, 0, "no host memory for the module's kernel names");
        x->names[x->nnames++] = copy;
        x->smem[j] = -1;
    }
    if (smem > x->smem[j]) {
        if (gpu_set_smem(&c->gpu, *f, (int)smem, err))
            return -1;
        x->smem[j] = smem;
    }
    return 0;
}

/* The plan's kernels from module i into fn. Lock held. */
static int plan_functions(engine_ctx *c, const engine_plan *pl, size_t i, CUfunction *fn, err_t *err)
{
    for (size_t l = 0; l < pl->k.plan.nlaunches; l++)
        if (module_function(c, i, pl->k.plan.launches[l].kernel, pl->k.plan.launches[l].smem, &fn[l], err))
            return -1;
    return 0;
}

/* ---- K = 0: C = beta C ---------------------------------------------------------------------- */

/* The one kernel the engine needs beside the templates: BLAS's C = beta C when there is no inner
 * dimension, with ldc and batch strides (beta = 0 writes zeros, so NaN in C does not survive). */
static const char scale_src[] =
    "extern \"C\" __global__ void engine_scale_c(T *C, long long ldc, long long sc, int M, int N, int batch, TC beta)\n"
    "{\n"
    "    for (int b = blockIdx.z; b < batch; b += gridDim.z)\n"
    "        for (int i = blockIdx.y; i < M; i += gridDim.y)\n"
    "            for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < N; j += gridDim.x * blockDim.x) {\n"
    "                T *p = C + b * sc + i * ldc + j;\n"
    "                *p = beta == TC(0) ? TO_T(TC(0)) : TO_T(beta * FROM_T(*p));\n"
    "            }\n"
    "}\n";
/* What scale_src needs of each dtype: T the element, TC alpha's and beta's type, FROM_T and TO_T the
 * conversions (the half types' bits through float: kernels_src/gemm_common.cuh's way, no headers). */
static const char scale_plain[] = "#define TC T\n#define FROM_T(x) (x)\n#define TO_T(x) (x)\n";
static const char scale_half[] =
    "#define TC float\n"
    "__device__ float FROM_T(unsigned short h) {\n"
    "#if BF16\n"
    "  return __uint_as_float((unsigned)h << 16);\n"
    "#else\n"
    "  float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f;\n"
    "#endif\n"
    "}\n"
    "__device__ unsigned short TO_T(float x) {\n"
    "  unsigned r;\n"
    "#if BF16\n"
    "  asm(\"cvt.rn.bf16x2.f32 %0, %1, %2;\" : \"=r\"(r) : \"f\"(0.0f), \"f\"(x));\n"
    "#else\n"
    "  asm(\"cvt.rn.f16x2.f32 %0, %1, %2;\" : \"=r\"(r) : \"f\"(0.0f), \"f\"(x));\n"
    "#endif\n"
    "  return (unsigned short)(r & 0xFFFFu);\n"
    "}\n";

static int build_scale(engine_ctx *c, engine_plan *pl, err_t *err)
{
    dtype_t d = pl->p.dtype;
    char *src = try_asprintf("#define T %s\n#define BF16 %d\n%s%s",
                             d == DTYPE_F64 ? "double" : dtype_half(d) ? "unsigned short" : "float", d == DTYPE_BF16,
                             dtype_half(d) ? scale_half : scale_plain, scale_src);
    if (!src)
        return err_set(err, ERR_ALLOC, "engine_scale_c", 0, 0, "no host memory for the C = beta C kernel's source"), -1;
    double t0 = now_ms();
    int rc =
        jit_compile(c->jit, "engine_scale_c.cu", src, NULL, 0, c->arch, "engine_scale_c", &pl->k.jit, &pl->origin, err);
    free(src);
    pl->build_ms = now_ms() - t0;
    if (rc)
        return -1;
    pl->compile_ms = pl->k.jit->compile_ms;
    pl->k.plan.nlaunches = 1;
    pl->k.plan.launches[0].kernel = "engine_scale_c";
    int64_t M = pl->p.M, N = pl->p.N, B = pl->p.batch;
    pl->k.plan.launches[0].grid[0] = N < 256 * 1024 ? (N + 255) / 256 : 1024;
    pl->k.plan.launches[0].grid[1] = M < 65535 ? M : 65535;
    pl->k.plan.launches[0].grid[2] = B < 65535 ? B : 65535;
    pl->k.plan.launches[0].block[0] = 256;
    pl->k.plan.launches[0].block[1] = pl->k.plan.launches[0].block[2] = 1;
    return 0;
}

/* ---- plans ---------------------------------------------------------------------------------- */

/* Plan and compile pl->cfg for the plan's problem and alignment class. */
static engine_status build(engine_ctx *c, engine_plan *pl, const layout_t *lay, err_t *err)
{
    const apiarg_problem *p = &pl->p;
    double t0 = now_ms();
    /* The config's own target (sm_90a for an arch-specific template on sm_90, config_load_guess). */
    plan_target to = {.arch = pl->cfg->arch,
                      .smem_limit = c->smem_limit,
                      .M = p->M,
                      .N = p->N,
                      .K = p->K,
                      .lay = lay,
                      .align = &pl->al};
    if (kernel_build(c->jit, pl->cfg, &to, &pl->k, &pl->origin, err)) {
        engine_status st = api_status_of(err);
        kernel_free(&pl->k);
        return st;
    }
    pl->build_ms = now_ms() - t0;
    pl->compile_ms = pl->k.jit->compile_ms;
    pl->stateful = pl->k.plan.stream_state;
    return ENGINE_SUCCESS;
}

/* base with variant v's values (a tile side halved): the context's copy, made on first use. The copy
 * shares base's template and text; its values, label and overrides are its own. NULL with ERR_ALLOC
 * in err when the host had no memory for it. Lock held. */
static const config_t *variant_of(engine_ctx *c, const config_t *base, const select_variant *v, err_t *err)
{
    for (size_t i = 0; i < c->nvariants; i++) {
        const struct apiplan_variant *x = &c->variants[i];
        if (x->base == base && strcmp(x->v.key, v->key) == 0 && x->v.value == v->value &&
            strcmp(x->v.key2, v->key2) == 0 && x->v.value2 == v->value2)
            return x->cfg;
    }
    /* The table's slot first: what follows cannot fail once the copy is made. */
    struct apiplan_variant *table = try_realloc(c->variants, (c->nvariants + 1) * sizeof *c->variants);
    config_t *cfg = table ? try_malloc(sizeof *cfg) : NULL;
    if (table)
        c->variants = table;
    if (!cfg)
        return err_set(err, ERR_ALLOC, base->label, 0, 0, "no host memory for the tile variant's config"), NULL;
    *cfg = *base;
    cfg->values = try_malloc((base->tpl.nparams ? base->tpl.nparams : 1) * sizeof *cfg->values);
    const char *keys[2] = {v->key, v->key2};
    const int64_t vals[2] = {v->value, v->value2};
    char set[96];
    select_variant_text(v, set, sizeof set);
    size_t n = strlen(base->label);
    cfg->label = base->label[n ? n - 1 : 0] == ']' ? try_asprintf("%.*s,%s]", (int)(n - 1), base->label, set)
                                                 : try_asprintf("%s[%s]", base->label, set);
    /* As the command line reruns it: --set KEY=VALUE for each override. */
    strbuf ov;
    sb_try_init(&ov);
    sb_add(&ov, base->overrides ? base->overrides : "");
    for (int j = 0; j < 2 && *keys[j]; j++)
        sb_addf(&ov, "%s--set %s=%lld", ov.len ? " " : "", keys[j], (long long)vals[j]);
    cfg->overrides = sb_steal(&ov);
    if (!cfg->values || !cfg->label || !cfg->overrides) {
        free(cfg->values), free(cfg->label), free(cfg->overrides), free(cfg);
        return err_set(err, ERR_ALLOC, base->label, 0, 0, "no host memory for the tile variant's values"), NULL;
    }
    memcpy(cfg->values, base->values, base->tpl.nparams * sizeof *cfg->values);
    for (int j = 0; j < 2 && *keys[j]; j++) {
        int at = template_param_index(&base->tpl, keys[j]);
        if (at >= 0)
            cfg->values[at] = vals[j];
    }
    c->variants[c->nvariants++] = (struct apiplan_variant){.base = base, .v = *v, .cfg = cfg};
    return cfg;
}

/* The shipped config NAME in dtype, loaded into *slot on first use (NULL where it does not load, as
 * naive in bf16). NULL with ERR_ALLOC in err, *slot left empty, where the host had no memory to load
 * it: no verdict on the config. Lock held. */
static const config_t *shipped(engine_ctx *c, config_t **slot, const char *name, dtype_t dtype, err_t *err)
{
    if (*slot)
        return *slot;
    config_t *cfg = try_calloc(1, sizeof *cfg);
    /* The shipped configs beside the library, else beside the wisdom (wisdom/../configs), as a
     * wisdom entry's config is found. */
    char *path = cfg ? entries_try_resolve(NULL, name) : NULL;
    if (path && access(path, R_OK) != 0) {
        char *root = try_path_join(c->wisdom_dir ? c->wisdom_dir : paths_wisdom_dir(), "..");
        char *file = try_asprintf("configs/%s.json", name);
        free(path);
        path = root && file ? try_path_join(root, file) : NULL;
        free(root);
        free(file);
    }
    if (!path) {
        free(cfg);
        return err_set(err, ERR_ALLOC, name, 0, 0, "no host memory for the shipped config's path"), NULL;
    }
    err_t e;
    err_clear(&e);
    if (config_load_guess(path, NULL, 0, dtype_name(dtype), c->arch, c->arch_guessed, cfg, &e)) {
        if (e.cause == ERR_ALLOC && !err_isset(err))
            *err = e;
        free(cfg);
        cfg = NULL;
    }
    free(path);
    *slot = cfg;
    return cfg;
}

/* The shipped naive config for dtype, the fallback for any layout (NULL in bf16 and f16). Lock held. */
static const config_t *naive_for(engine_ctx *c, dtype_t dtype, err_t *err)
{
    return shipped(c, &c->naive[dtype], "naive", dtype, err);
}

/* The config a half dtype runs where wisdom holds no entry of it: the half walk's last step. Lock held. */
#define HALF_DEFAULT "h04_tuned"
static const config_t *half_default_for(engine_ctx *c, dtype_t dtype, err_t *err)
{
    return dtype_half(dtype) ? shipped(c, &c->half_default[dtype], HALF_DEFAULT, dtype, err) : NULL;
}

/* Wisdom's choice refused the layout (a template that cannot do it says so by a declared rule): the
 * other candidates the model weighed, best score first, then the shipped naive config, which takes
 * every layout. Correct results at some speed beat a refusal; the description says what happened
 * (pl->refused). Returns the first refusal's status and err when nothing takes it. */
static engine_status fall_back(engine_ctx *c, engine_plan *pl, const layout_t *lay, const pick_t *pk,
                               const select_result *r, err_t *err)
{
    char first[ERR_SOURCE_LEN + ERR_TEXT_LEN + 8];
    err_format(err, first, sizeof first);
    const config_t *refused = pl->cfg;
    select_weighed w[SELECT_K];
    size_t n = 0;
    for (size_t j = 0; pk && j < r->nw; j++) { /* insertion by score */
        if (r->w[j].t_est < 0 || r->w[j].cand == r->chosen)
            continue;
        size_t at = n++;
        while (at > 0 && select_score(&w[at - 1]) > select_score(&r->w[j])) {
            w[at] = w[at - 1];
            at--;
        }
        w[at] = r->w[j];
    }
    for (size_t j = 0; j <= n; j++) {
        const config_t *cfg;
        if (j < n) {
            cfg = &pk->sel.cands[w[j].cand].cfg;
        } else {
            err_t e;
            err_clear(&e);
            pthread_mutex_lock(&c->lock);
            cfg = naive_for(c, pl->p.dtype, &e);
            pthread_mutex_unlock(&c->lock);
            if (!cfg && e.cause == ERR_ALLOC)
                return *err = e, ENGINE_ERROR_OUT_OF_MEMORY;
        }
        if (!cfg)
            break;
        pl->cfg = cfg;
        err_t e2;
        err_clear(&e2);
        engine_status st = build(c, pl, lay, &e2);
        if (st == ENGINE_SUCCESS) {
            pl->refused = try_strdup(refused->label);
            pl->refused_why = try_strdup(first);
            if (!pl->refused || !pl->refused_why)
                return err_clear(err), err_set(err, ERR_ALLOC, refused->label, 0, 0, "no host memory for the refused config's reason"),
                       ENGINE_ERROR_OUT_OF_MEMORY;
            return ENGINE_SUCCESS;
        }
        if (st != ENGINE_ERROR_NOT_SUPPORTED) {
            *err = e2;
            return st;
        }
    }
    pl->cfg = refused;
    return ENGINE_ERROR_NOT_SUPPORTED;
}

/* The layout the kernels see. */
static void layout_of(const apiarg_problem *p, layout_t *l)
{
    *l = (layout_t){.ta = p->ta, .tb = p->tb, .lda = p->lda, .ldb = p->ldb, .ldc = p->ldc, .batch = p->batch,
                    .sa = p->sa, .sb = p->sb, .sc = p->sc};
}

/* The plan's description (engine_plan_describe) into pl->describe; -1 (NULL there) when the host
 * had no memory for it. */
static int describe(engine_plan *pl, const pick_t *pk, const select_result *r)
{
    const apiarg_problem *p = &pl->p;
    strbuf sb;
    sb_try_init(&sb);
    bool short_of_memory = false;
    char arch[16];
    sb_addf(&sb, "{\"dtype\":\"%s\",\"arch\":\"%s\",\"m\":%lld,\"n\":%lld,\"k\":%lld,\"layout\":\"%c%c\",",
            dtype_name(p->dtype), arch_name(pl->ctx->arch, arch, sizeof arch), (long long)p->M, (long long)p->N,
            (long long)p->K, p->ta ? 'T' : 'N', p->tb ? 'T' : 'N');
    sb_addf(&sb, "\"lda\":%lld,\"ldb\":%lld,\"ldc\":%lld,\"batch\":%lld,\"stride_a\":%lld,\"stride_b\":%lld,"
                 "\"stride_c\":%lld,\"swapped\":%s,\"align_elems\":[%d,%d,%d],",
            (long long)p->lda, (long long)p->ldb, (long long)p->ldc, (long long)p->batch, (long long)p->sa,
            (long long)p->sb, (long long)p->sc, p->swapped ? "true" : "false", pl->al.a, pl->al.b, pl->al.c);
    if (pl->run) {
        char *params = config_params_try(pl->cfg);
        short_of_memory = !params;
        sb_add(&sb, "\"config\":");
        sb_add_json_string(&sb, pl->cfg->path);
        sb_add(&sb, ",\"label\":");
        sb_add_json_string(&sb, pl->cfg->label);
        sb_add(&sb, ",\"overrides\":");
        sb_add_json_string(&sb, pl->cfg->overrides ? pl->cfg->overrides : "");
        sb_add(&sb, ",\"params\":");
        sb_add_json_string(&sb, params);
        sb_add(&sb, ",\"switches\":");
        sb_add_json_string(&sb, pl->k.plan.switches ? pl->k.plan.switches : "");
        sb_addf(&sb, ",\"launches\":%zu,\"workspace_elems\":%lld,", pl->k.plan.nlaunches,
                (long long)pl->k.plan.workspace);
        free(params);
        if (pk)
            short_of_memory = why_json(&sb, pk, r, 2 * p->ta + p->tb) || short_of_memory;
        else if (pl->by_default)
            sb_addf(&sb, "\"chosen_by\":\"default: no wisdom for %s at this problem (%s)\"", dtype_name(p->dtype),
                    HALF_DEFAULT);
        else
            sb_add(&sb, "\"chosen_by\":\"forced\"");
        if (pk && pl->has_variant) { /* wisdom's choice with a tile side halved */
            char set[96];
            sb_addf(&sb, ",\"tile_variant\":\"%s\",\"tile_variant_est_us\":%.3f",
                    select_variant_text(&pl->variant, set, sizeof set), pl->variant.t_est * 1e6);
        }
        if (pl->refused) {
            sb_add(&sb, ",\"fallback\":{\"refused\":");
            sb_add_json_string(&sb, pl->refused);
            sb_add(&sb, ",\"why\":");
            sb_add_json_string(&sb, pl->refused_why);
            sb_add(&sb, "}");
        }
    } else {
        sb_addf(&sb, "\"config\":null,\"chosen_by\":\"%s\"", pl->scale ? "k=0: C = beta C (engine_scale_c)" : "m or n = 0: nothing");
    }
    if (pl->k.jit)
        sb_addf(&sb, ",\"origin\":\"%s\",\"compile_ms\":%.1f,\"build_ms\":%.2f,\"load_ms\":%.2f",
                pl->origin == JIT_COMPILED ? "nvrtc" : pl->origin == JIT_DISK ? "disk" : "memory", pl->compile_ms,
                pl->build_ms, pl->load_ms);
    sb_add(&sb, "}");
    if (short_of_memory)
        sb_free(&sb);
    pl->describe = short_of_memory ? NULL : sb_steal(&sb);
    return pl->describe ? 0 : -1;
}

size_t engine_plan_describe(const engine_plan *pl, char *buf, size_t len)
{
    const char *text = pl && pl->describe ? pl->describe : "";
    size_t n = strlen(text);
    if (buf && len) {
        size_t c = n < len - 1 ? n : len - 1;
        memcpy(buf, text, c);
        buf[c] = '\0';
    }
    return n;
}

void engine_plan_destroy(engine_plan *pl)
{
    if (!pl)
        return;
    if (pl->scale)
        memset(&pl->k.plan, 0, sizeof pl->k.plan); /* launches[0].kernel is a literal */
    kernel_free(&pl->k); /* k.mod is never set: the module belongs to the context */
    free(pl->describe);
    free(pl->refused);
    free(pl->refused_why);
    free(pl);
}

engine_status apiplan_build(engine_ctx *c, const apiarg_problem *p, const layout_align *al, const char *fn,
                            engine_plan **out)
{
    err_t err;
    err_clear(&err);
    engine_plan *pl = try_calloc(1, sizeof *pl);
    if (!pl)
        return api_fail_text(ENGINE_ERROR_OUT_OF_MEMORY, fn, "no host memory for the plan");
    pl->ctx = c;
    pl->p = *p;
    pl->al = *al;
    pl->run = p->M > 0 && p->N > 0 && p->K > 0;
    pl->scale = p->M > 0 && p->N > 0 && p->K == 0;
    const pick_t *pk = NULL;
    layout_t lay; /* the call's: wisdom's choice must plan in it */
    layout_of(p, &lay);
    select_result r;
    memset(&r, 0, sizeof r);
    engine_status st = ENGINE_SUCCESS;
    pthread_mutex_lock(&c->lock);
    if (c->forced) {
        pl->cfg = c->forced;
        if (pl->cfg->dtype != p->dtype) {
            err_set(&err, ERR_INPUT, fn, 0, 0, "the config forced by engine_set_config (%s) is %s, the call is %s",
                    pl->cfg->path, dtype_name(pl->cfg->dtype), dtype_name(p->dtype));
            st = ENGINE_ERROR_DTYPE_MISMATCH;
        }
    } else if (pl->run) {
        pick_t *pick = apiplan_pick(c, p->dtype, 2 * p->ta + p->tb, p->batch > 1, fn, &err);
        shape_t sh = {p->M, p->N, p->K};
        int sr = pick ? select_pick_in(&pick->sel, &sh, p->batch, al, &lay, &r) : 0;
        int tv = pick && !sr && pick_tile_variants()
                     ? select_tile_variant(&pick->sel, &r, &sh, &lay, PICK_TILE_GAIN, &pl->variant)
                     : 0;
        if (!pick) {
            st = err.cause == ERR_ALLOC ? ENGINE_ERROR_OUT_OF_MEMORY : ENGINE_ERROR_CONFIG;
        } else if (sr == SELECT_NOMEM || tv == SELECT_NOMEM) {
            err_set(&err, ERR_ALLOC, pick->sel.ncands ? pick->sel.cands[0].path : "", 0, 0,
                    "no host memory for the selection's %s", tv ? "tile variants" : "distances");
            st = ENGINE_ERROR_OUT_OF_MEMORY;
        } else if (!sr) {
            pk = pick;
            pl->cfg = &pick->sel.cands[r.chosen].cfg;
            if (tv) {
                pl->cfg = variant_of(c, pl->cfg, &pl->variant, &err);
                pl->has_variant = true;
                st = pl->cfg ? st : ENGINE_ERROR_OUT_OF_MEMORY;
            }
        } else if ((pl->cfg = half_default_for(c, p->dtype, &err))) {
            /* bf16, f16 where wisdom has nothing for the call: the half walk's last step */
            memset(&r, 0, sizeof r);
            pl->by_default = true;
        } else if (err.cause == ERR_ALLOC) {
            st = ENGINE_ERROR_OUT_OF_MEMORY;
        } else {
            /* As pick_init says it: the first entry left out says why, else nothing covers the shape. */
            const char *why = pick->sel.ncands ? "no entry's config plans at this shape" : "no device, arch or default entry of that dtype";
            for (size_t i = 0; i < pick->sel.ncands && !pick->sel.cands[i].loaded; i++)
                why = pick->sel.cands[i].err_text;
            err_set(&err, ERR_INPUT, fn, 0, 0, "no wisdom for %s at %lldx%lldx%lld (%s)", dtype_name(p->dtype),
                    (long long)p->M, (long long)p->N, (long long)p->K, why);
            st = ENGINE_ERROR_CONFIG;
        }
    }
    pthread_mutex_unlock(&c->lock);
    if (st) {
        free(pl);
        /* the pick's own failures are named by fn already (apiplan_pick) */
        return strcmp(err.source, fn) == 0 ? fail(st, &err) : build_fail(st, fn, &err);
    }
    /* Plan and compile (or find the CUBIN) outside the lock: a compile takes seconds. */
    if (pl->run) {
        st = build(c, pl, &lay, &err);
        /* wisdom's choice, not a forced config, that refuses the problem (or whose template cannot
         * plan it: a template's bug at this shape) falls back to the naive kernel */
        if ((st == ENGINE_ERROR_NOT_SUPPORTED || st == ENGINE_ERROR_CONFIG) && pk)
            st = fall_back(c, pl, &lay, pk, &r, &err);
        if (st) {
            engine_plan_destroy(pl);
            return build_fail(st, fn, &err);
        }
    } else if (pl->scale && build_scale(c, pl, &err)) {
        engine_plan_destroy(pl);
        return build_fail(api_status_of(&err), fn, &err);
    }
    pl->pk = pk;
    pl->r = r;
    if (!c->have_gpu && describe(pl, pk, &r)) {
        engine_plan_destroy(pl);
        return api_fail_text(ENGINE_ERROR_OUT_OF_MEMORY, fn, "no host memory for the plan's description");
    }
    *out = pl;
    return ENGINE_SUCCESS;
}

engine_status apiplan_load(engine_plan *pl, const char *fn)
{
    engine_ctx *c = pl->ctx;
    err_t err;
    err_clear(&err);
    if (c->have_gpu && pl->k.jit && !pl->stateful) {
        double t0 = now_ms();
        pthread_mutex_lock(&c->lock);
        int rc = gpu_set_current(&c->gpu, &err) || module_get(c, pl->k.jit, NULL, pl->cfg ? pl->cfg->path : fn, &pl->mod, &err) ||
                 plan_functions(c, pl, pl->mod, pl->k.fn, &err);
        pthread_mutex_unlock(&c->lock);
        pl->k.gpu = &c->gpu;
        rc = rc || kernel_fit(&pl->k, &err);
        pl->k.pdl = false;
        if (!rc && pl->run && pl->k.plan.pdl) { /* as kernel_load decides it with the config's PDL parameter */
            int blocks = 0, threads = 0;
            rc = kernel_occupancy(&pl->k, &blocks, &threads, &err);
            pl->k.pdl = !rc && plan_use_pdl(&pl->k.plan, c->gpu.sms, blocks);
        }
        if (rc)
            return fail(api_status_of(&err), &err);
        pl->k.loaded = true;
        pl->load_ms = now_ms() - t0;
    }
    free(pl->describe);
    if (describe(pl, pl->pk, &pl->r))
        return api_fail_text(ENGINE_ERROR_OUT_OF_MEMORY, fn, "no host memory for the plan's description");
    return ENGINE_SUCCESS;
}

engine_status apiplan_make(engine_ctx *c, const apiarg_problem *p, const layout_align *al, const char *fn,
                           engine_plan **out)
{
    engine_plan *pl = NULL;
    engine_status st = apiplan_build(c, p, al, fn, &pl);
    if (!st && c->have_gpu && (st = apiplan_load(pl, fn)) != ENGINE_SUCCESS) {
        engine_plan_destroy(pl);
        pl = NULL;
    }
    *out = pl;
    return st;
}

/* ---- execution ------------------------------------------------------------------------------ */

/* The workspace of stream, at least bytes large. Lock held. */
static int workspace_for(engine_ctx *c, engine_stream stream, size_t bytes, CUdeviceptr *out, err_t *err)
{
    apiplan_workspace *w = NULL;
    for (size_t i = 0; i < c->nws && !w; i++)
        if (c->ws[i].stream == stream)
            w = &c->ws[i];
    if (!w) {
        apiplan_workspace *ws = try_realloc(c->ws, (c->nws + 1) * sizeof *c->ws);
        if (!ws)
            return err_set(err, ERR_ALLOC, "workspace", 0, 0, "no host memory for a stream's workspace entry"), -1;
        c->ws = ws;
        w = &c->ws[c->nws++];
        memset(w, 0, sizeof *w);
        w->stream = stream;
    }
    if (bytes > w->bytes) {
        size_t grow = w->bytes * 2 > bytes ? w->bytes * 2 : bytes;
        CUdeviceptr p = 0;
        CUdeviceptr *retired = c->retired;
        /* Room to retire the old buffer first: queued work may still read it (freed with the
         * context), so it must never be dropped for want of a slot. */
        if (w->ptr && !(retired = try_realloc(c->retired, (c->nretired + 1) * sizeof *c->retired)))
            return err_set(err, ERR_ALLOC, "workspace", 0, 0, "no host memory to retire a stream's workspace"), -1;
        c->retired = retired;
        if (gpu_alloc(&c->gpu, grow, &p, err))
            return -1;
        if (w->ptr)
            c->retired[c->nretired++] = w->ptr;
        w->ptr = p;
        w->bytes = grow;
    }
    *out = w->ptr;
    return 0;
}

size_t apiplan_workspace_bytes(const engine_plan *pl)
{
    return pl->run ? (size_t)pl->k.plan.workspace * dtype_size(pl->p.dtype) : 0;
}

engine_status apiplan_execute(const engine_plan *pl, const char *fn, double alpha, const void *A, const void *B,
                              double beta, void *C, engine_stream stream)
{
    return apiplan_execute_ws(pl, fn, alpha, A, B, beta, C, NULL, 0, false, stream);
}

engine_status apiplan_execute_ws(const engine_plan *pl, const char *fn, double alpha, const void *A, const void *B,
                                 double beta, void *C, void *ws, size_t ws_bytes, bool given, engine_stream stream)
{
    engine_ctx *c = pl->ctx;
    err_t err;
    err_clear(&err);
    engine_status st = apiarg_check_pointers(fn, &pl->p, A, B, C, &err);
    if (st)
        return fail(st, &err);
    /* The kernels' A is the caller's B for a column-major call (apiarg.h). */
    const void *kA = pl->p.swapped ? B : A, *kB = pl->p.swapped ? A : B;
    if (pl->run) {
        layout_align got;
        apiplan_align_of(&pl->p, kA, kB, C, &got);
        if (got.a < pl->al.a || got.b < pl->al.b || got.c < pl->al.c) {
            size_t es = dtype_size(pl->p.dtype);
            const char *name = got.a < pl->al.a ? (pl->p.swapped ? "B" : "A") : got.b < pl->al.b ? (pl->p.swapped ? "A" : "B") : "C";
            int want = got.a < pl->al.a ? pl->al.a : got.b < pl->al.b ? pl->al.b : pl->al.c;
            err_set(&err, ERR_INPUT, fn, 0, 0, "%s is not a multiple of %zu bytes, the alignment the plan was made for",
                    name, want * es);
            return fail(ENGINE_ERROR_MISALIGNED, &err);
        }
    }
    const size_t need = given ? apiplan_workspace_bytes(pl) : 0;
    if (need && (!ws || ws_bytes < need || (uintptr_t)ws % 256)) {
        err_set(&err, ERR_ARGUMENT, fn, 0, 0,
                "the workspace must be %zu bytes (engine_plan_workspace_size) at a multiple of 256 bytes; got %zu bytes at %p",
                need, ws_bytes, ws);
        return fail(ENGINE_ERROR_INVALID_ARGUMENT, &err);
    }
    if (!c->have_gpu) {
        err_set(&err, ERR_NO_GPU, fn, 0, 0, "this context was made without a GPU (no_device): it plans, it does not run");
        return fail(ENGINE_ERROR_NO_GPU, &err);
    }
    if (!pl->run && !pl->scale)
        return ENGINE_SUCCESS;
    /* The context is current: every entry point that reaches here made it so (api.c scope_in). */
    if (pl->scale) {
        long long ldc = pl->p.ldc, sc = pl->p.sc;
        int M = (int)pl->p.M, N = (int)pl->p.N, batch = (int)pl->p.batch;
        CUdeviceptr dC = (CUdeviceptr)(uintptr_t)C;
        float bf = (float)beta;
        void *args[] = {&dC, &ldc, &sc, &M, &N, &batch, pl->p.dtype == DTYPE_F64 ? (void *)&beta : (void *)&bf};
        const plan_launch *l = &pl->k.plan.launches[0];
        return gpu_launch_pdl(&c->gpu, pl->k.fn[0], l->grid, l->block, 0, args, (CUstream)stream, false, &err)
                   ? fail(api_status_of(&err), &err)
                   : ENGINE_SUCCESS;
    }
    gemm_call call;
    memset(&call, 0, sizeof call);
    call.dtype = pl->p.dtype;
    call.M = pl->p.M, call.N = pl->p.N, call.K = pl->p.K;
    call.lay.ta = pl->p.ta, call.lay.tb = pl->p.tb;
    call.lay.lda = pl->p.lda, call.lay.ldb = pl->p.ldb, call.lay.ldc = pl->p.ldc;
    call.lay.batch = pl->p.batch, call.lay.sa = pl->p.sa, call.lay.sb = pl->p.sb, call.lay.sc = pl->p.sc;
    call.alpha = alpha, call.beta = beta;
    call.A = (CUdeviceptr)(uintptr_t)kA, call.B = (CUdeviceptr)(uintptr_t)kB, call.C = (CUdeviceptr)(uintptr_t)C;
    size_t wbytes = kernel_workspace_bytes(&pl->k, &call);
    CUdeviceptr W = 0;
    kernel_t stateful;
    const kernel_t *k = &pl->k;
    int rc = 0;
    if (given && wbytes)
        W = (CUdeviceptr)(uintptr_t)ws; /* checked above */
    if ((wbytes && !given) || pl->stateful) {
        pthread_mutex_lock(&c->lock);
        rc = wbytes && !given ? workspace_for(c, stream, wbytes, &W, &err) : 0;
        if (!rc && pl->stateful) {
            /* Its own module on this stream (apiplan.h); the plan itself stays untouched. */
            size_t mi;
            stateful = pl->k;
            stateful.gpu = &c->gpu;
            rc = module_get(c, pl->k.jit, stream, pl->cfg->path, &mi, &err) ||
                 plan_functions(c, pl, mi, stateful.fn, &err);
            stateful.loaded = true;
            k = &stateful;
        }
        pthread_mutex_unlock(&c->lock);
        if (rc)
            return build_fail(api_status_of(&err), fn, &err);
    }
    return kernel_launch(k, &call, W, (CUstream)stream, &err) ? fail(api_status_of(&err), &err) : ENGINE_SUCCESS;
}

void apiplan_align_of(const apiarg_problem *p, const void *A, const void *B, const void *C, layout_align *al)
{
    size_t es = dtype_size(p->dtype);
    bool b = p->batch > 1;
    al->a = layout_align_of((uintptr_t)A, es, p->lda, b ? p->sa : 0);
    al->b = layout_align_of((uintptr_t)B, es, p->ldb, b ? p->sb : 0);
    al->c = layout_align_of((uintptr_t)C, es, p->ldc, b ? p->sc : 0);
}

void apiplan_ctx_free(engine_ctx *c)
{
    if (c->have_gpu) {
        err_t ignored;
        err_clear(&ignored);
        gpu_set_current(&c->gpu, &ignored);
        /* Kernels still queued may use the modules and workspaces freed below (engine.h). */
        gpu_synchronize(&c->gpu, &ignored);
        for (size_t i = 0; i < c->nmods; i++)
            gpu_module_unload(&c->gpu, &c->mods[i].mod);
        for (size_t i = 0; i < c->nws; i++)
            gpu_free(&c->gpu, c->ws[i].ptr);
        for (size_t i = 0; i < c->nretired; i++)
            gpu_free(&c->gpu, c->retired[i]);
    }
    for (size_t i = 0; i < c->nmods; i++)
        for (size_t j = 0; j < c->mods[i].nnames; j++)
            free(c->mods[i].names[j]);
    free(c->mods);
    free(c->ws);
    free(c->retired);
    for (size_t i = 0; i < c->nvariants; i++) { /* before the picks: they own the templates */
        free(c->variants[i].cfg->values);
        free(c->variants[i].cfg->label);
        free(c->variants[i].cfg->overrides);
        free(c->variants[i].cfg);
    }
    free(c->variants);
    for (int d = 0; d < DTYPE_COUNT; d++)
        for (int op = 0; op < 4; op++)
            for (int b = 0; b < 2; b++)
                if (c->picks[d][op][b]) {
                    pick_free(c->picks[d][op][b]);
                    free(c->picks[d][op][b]);
                }
    for (int d = 0; d < DTYPE_COUNT; d++) {
        config_t *shipped_cfgs[2] = {c->naive[d], c->half_default[d]};
        for (int i = 0; i < 2; i++)
            if (shipped_cfgs[i]) {
                config_free(shipped_cfgs[i]);
                free(shipped_cfgs[i]);
            }
    }
    for (size_t i = 0; i < c->nforced_all; i++) {
        config_free(c->forced_all[i]);
        free(c->forced_all[i]);
    }
    free(c->forced_all);
}
