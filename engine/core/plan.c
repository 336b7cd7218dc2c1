/* plan.c — the planning half of template.h: a validated config's values plus a problem (shape,
 * layout, alignment, arch) become the switches and derived names, the pasted CUDA source and the
 * launch geometry (template_plan*, plan_free), and plan_use_pdl decides programmatic dependent
 * launch from a plan and the GPU's occupancy. template.c loads and checks templates; this file only
 * evaluates them, through the scope (scope_*) that template.c keeps. */
#include "template.h"
#include "arch.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* ---- planning ------------------------------------------------------------------------------- */

/* An expression of the template failed to evaluate: that is the template's bug, not the user's. */
static int tpl_expr_fail(const template_t *t, err_t *err, const char *what, const char *msg)
{
    return err_set(err, ERR_CONFIG, t->path, 0, 0, "%s: %s", what, msg);
}

static int plan_eval(const plan_req *r, bool paste, plan_t *plan, err_t *err);

int template_plan(const plan_req *r, plan_t *plan, err_t *err)
{
    return plan_eval(r, true, plan, err);
}

int template_plan_geometry(const plan_req *r, plan_t *plan, err_t *err)
{
    return plan_eval(r, false, plan, err);
}

/* The template's tensor maps at this shape (template.h): what the copy engine accepts is checked
 * here, without a GPU, so that a template's mistake is a config error naming the map, not a
 * cuTensorMapEncodeTiled failure at the first launch. */
static int plan_tmaps(const template_t *t, const char *label, const tpl_scope *s, dtype_t dtype, plan_t *plan,
                      err_t *err)
{
    char msg[512];
    const int64_t es = (int64_t)dtype_size(dtype);
    for (size_t i = 0; i < t->ntmaps; i++) {
        const tpl_tmap *m = &t->tmaps[i];
        plan_tmap *pm = &plan->tmaps[plan->ntmaps++];
        int64_t v = 1;
        if (m->cond && scope_eval(s, m->cond, &v, msg, sizeof msg))
            return tpl_expr_fail(t, err, "tensor map condition", msg);
        if (!v)
            continue;
        pm->on = true;
        pm->tensor = m->tensor;
        pm->tf32 = m->tf32;
        if (scope_eval(s, m->offset, &pm->offset, msg, sizeof msg) ||
            scope_eval(s, m->strides[0], &pm->strides[0], msg, sizeof msg) ||
            scope_eval(s, m->strides[1], &pm->strides[1], msg, sizeof msg))
            return tpl_expr_fail(t, err, "tensor map", msg);
        for (int d = 0; d < 3; d++)
            if (scope_eval(s, m->dims[d], &pm->dims[d], msg, sizeof msg) ||
                scope_eval(s, m->box[d], &pm->box[d], msg, sizeof msg))
                return tpl_expr_fail(t, err, "tensor map", msg);
        const char *why = NULL;
        for (int d = 0; d < 3 && !why; d++)
            if (pm->dims[d] < 1 || pm->dims[d] > ((int64_t)1 << 32))
                why = "each dimension must be 1 to 2^32 elements";
            else if (pm->box[d] < 1 || pm->box[d] > 256)
                why = "each box dimension must be 1 to 256 elements";
        if (!why && pm->box[0] * es > 128)
            why = "the box's inner dimension must fit the 128-byte swizzle span";
        if (!why && (pm->box[0] * es) % 16 != 0)
            why = "the box's inner dimension must be a multiple of 16 bytes";
        for (int d = 0; d < 2 && !why; d++)
            if (pm->strides[d] < 1 || (pm->strides[d] * es) % 16 != 0 || pm->strides[d] * es >= ((int64_t)1 << 40))
                why = "each stride must be a positive multiple of 16 bytes below 2^40";
        if (!why && (pm->offset < 0 || (pm->offset * es) % 16 != 0))
            why = "the offset must be a non-negative multiple of 16 bytes";
        if (why)
            return err_set(err, ERR_CONFIG, label, 0, 0,
                           "tensor map %zu of template %s (%c: dims %lldx%lldx%lld, strides %lld %lld, box %lldx%lldx%lld, offset %lld) is refused: %s",
                           i, t->name, pm->tensor, (long long)pm->dims[0], (long long)pm->dims[1],
                           (long long)pm->dims[2], (long long)pm->strides[0], (long long)pm->strides[1],
                           (long long)pm->box[0], (long long)pm->box[1], (long long)pm->box[2],
                           (long long)pm->offset, why);
    }
    return 0;
}

/* The layout into scope s (layout.h): transposes, leading dimensions, the batch and its strides,
 * and the alignment class of the pointers in elements (ALIGN_A/B/C); LD_PACKED says every matrix's
 * rows are packed (lda, ldb, ldc the row lengths), as the templates assumed before layouts; IDX64,
 * 64-bit element offsets once one product's matrix (rows ld apart) reaches 2^31 elements
 * (gemm_common.cuh, idx_t; kernels step between products in 64 bits). Returns IDX64. */
static int scope_add_layout(tpl_scope *s, const layout_t *lay, const layout_align *al, int64_t M, int64_t N, int64_t K)
{
    layout_t pk;
    layout_packed(&pk, lay->ta, lay->tb, M, N, K, lay->batch);
    const int one = lay->batch > 1; /* a single product's strides are never used: 0 */
    const char *lnames[] = {"TA", "TB", "LDA", "LDB", "LDC", "LD_PACKED", "BATCH", "SA", "SB", "SC",
                            "ALIGN_A", "ALIGN_B", "ALIGN_C"};
    const int64_t lvals[] = {lay->ta, lay->tb, lay->lda, lay->ldb, lay->ldc,
                             lay->lda == pk.lda && lay->ldb == pk.ldb && lay->ldc == pk.ldc, lay->batch,
                             one * lay->sa, one * lay->sb, one * lay->sc, al->a, al->b, al->c};
    for (size_t i = 0; i < sizeof lnames / sizeof lnames[0]; i++)
        scope_set(s, lnames[i], lvals[i]);
    /* Packed NN: M*K, K*N, M*N. */
    const int64_t big = (int64_t)1 << 31;
    layout_t one_product = *lay;
    one_product.batch = 1;
    const int idx64 = layout_span_a(&one_product, M, K) >= big || layout_span_b(&one_product, N, K) >= big ||
                      layout_span_c(&one_product, M, N) >= big;
    scope_set(s, "IDX64", idx64);
    return idx64;
}

/* The template's requires (a refusal names the shape and the rule), switches (with paste, their
 * text for reports into plan->switches) and lets, evaluated into s in that order. */
static int plan_rules(const plan_req *r, bool paste, tpl_scope *s, plan_t *plan, err_t *err)
{
    const template_t *t = r->tpl;
    const int64_t M = plan->M, N = plan->N, K = plan->K;
    char msg[512];
    int64_t v;
    for (size_t i = 0; i < t->nrequires; i++) {
        if (scope_eval(s, t->requires[i].rule, &v, msg, sizeof msg))
            return tpl_expr_fail(t, err, "requires", msg);
        if (!v)
            return err_set(err, ERR_UNSUPPORTED, r->label, 0, 0,
                           "shape %lldx%lldx%lld%s is refused: template %s requires %s (%s)", (long long)M,
                           (long long)N, (long long)K, layout_text(&plan->lay, M, N, K, (char[160]){0}, 160), t->name,
                           t->requires[i].rule, t->requires[i].why);
    }
    strbuf sw;
    if (paste)
        sb_try_init(&sw);
    else
        memset(&sw, 0, sizeof sw);
    for (size_t i = 0; i < t->nswitches; i++) {
        if (scope_eval(s, t->switches[i].expr, &v, msg, sizeof msg)) {
            sb_free(&sw);
            return tpl_expr_fail(t, err, t->switches[i].name, msg);
        }
        scope_set(s, t->switches[i].name, v);
        if (paste) /* the text is for reports; the model plans too often to format it */
            sb_addf(&sw, "%s%s=%lld", i ? " " : "", t->switches[i].name, (long long)v);
    }
    if (paste && !(plan->switches = sb_steal(&sw)))
        return err_set(err, ERR_ALLOC, r->label, 0, 0, "no host memory for the text of the plan's switches");
    for (size_t i = 0; i < t->nlets; i++) {
        if (scope_eval(s, t->lets[i].expr, &v, msg, sizeof msg))
            return tpl_expr_fail(t, err, t->lets[i].name, msg);
        scope_set(s, t->lets[i].name, v);
    }
    return 0;
}

/* The enabled launches into plan->launches, each one's geometry, shared memory and traffic checked
 * against the limits (block 1024 threads, grid 2^31-1 x 65535 x 65535, the target's smem). */
static int plan_launches(const plan_req *r, const tpl_scope *s, plan_t *plan, err_t *err)
{
    const template_t *t = r->tpl;
    const char *label = r->label;
    char msg[512];
    int64_t v;
    for (size_t i = 0; i < t->nlaunches; i++) {
        const tpl_launch *l = &t->launches[i];
        if (l->cond) {
            if (scope_eval(s, l->cond, &v, msg, sizeof msg))
                return tpl_expr_fail(t, err, "launch condition", msg);
            if (!v)
                continue;
        }
        plan_launch *pl = &plan->launches[plan->nlaunches];
        pl->kernel = l->kernel;
        for (int d = 0; d < 3; d++) {
            if (scope_eval(s, l->grid[d], &pl->grid[d], msg, sizeof msg) ||
                scope_eval(s, l->block[d], &pl->block[d], msg, sizeof msg))
                return tpl_expr_fail(t, err, "launch geometry", msg);
        }
        if (scope_eval(s, l->smem, &pl->smem, msg, sizeof msg))
            return tpl_expr_fail(t, err, "launch smem", msg);
        int64_t threads = pl->block[0] * pl->block[1] * pl->block[2];
        if (pl->block[0] < 1 || pl->block[1] < 1 || pl->block[2] < 1 || threads > 1024)
            return err_set(err, ERR_CONFIG, label, 0, 0,
                           "kernel %s would launch %lldx%lldx%lld threads per block; the limit is 1024",
                           l->kernel, (long long)pl->block[0], (long long)pl->block[1], (long long)pl->block[2]);
        if (pl->grid[0] < 1 || pl->grid[1] < 1 || pl->grid[2] < 1 || pl->grid[0] > 2147483647LL ||
            pl->grid[1] > 65535 || pl->grid[2] > 65535)
            return err_set(err, ERR_UNSUPPORTED, label, 0, 0,
                           "kernel %s would launch a grid of %lldx%lldx%lld blocks, outside 1..2^31-1 x 1..65535 x 1..65535",
                           l->kernel, (long long)pl->grid[0], (long long)pl->grid[1], (long long)pl->grid[2]);
        if (pl->smem < 0 || pl->smem > r->to.smem_limit)
            return err_set(err, ERR_UNSUPPORTED, label, 0, 0,
                           "kernel %s needs %lld bytes of shared memory per block; %s allows %lld", l->kernel,
                           (long long)pl->smem, arch_name(plan->arch, (char[16]){0}, 16), (long long)r->to.smem_limit);
        pl->persistent = l->persistent;
        pl->traffic = -1;
        if (l->traffic && scope_eval(s, l->traffic, &pl->traffic, msg, sizeof msg))
            return tpl_expr_fail(t, err, "launch traffic", msg);
        if (l->traffic && pl->traffic < 0)
            return err_set(err, ERR_CONFIG, t->path, 0, 0, "kernel %s's traffic is %lld elements; it must be 0 or more",
                           l->kernel, (long long)pl->traffic);
        if (strcmp(l->kernel, "gemm") == 0)
            plan->main_launch = (int)plan->nlaunches;
        plan->nlaunches++;
    }
    return 0;
}

/* The plan's workspace, traffic and per-stream state, and what the selection model reads
 * (select.h): the tile C is padded to, atomic additions, slowness, turns. */
static int plan_figures(const template_t *t, const tpl_scope *s, plan_t *plan, err_t *err)
{
    char msg[512];
    int64_t v;
    if (t->workspace && scope_eval(s, t->workspace, &plan->workspace, msg, sizeof msg))
        return tpl_expr_fail(t, err, "workspace", msg);
    if (t->traffic && scope_eval(s, t->traffic, &plan->traffic, msg, sizeof msg))
        return tpl_expr_fail(t, err, "traffic", msg);
    if (t->stream_state) {
        if (scope_eval(s, t->stream_state, &v, msg, sizeof msg))
            return tpl_expr_fail(t, err, "stream_state", msg);
        plan->stream_state = v != 0;
    }
    for (int d = 0; d < 3; d++) {
        plan->tile[d] = 1;
        if (t->model_tile[d] && (scope_eval(s, t->model_tile[d], &plan->tile[d], msg, sizeof msg) || plan->tile[d] < 1))
            return tpl_expr_fail(t, err, "model tile", plan->tile[d] < 1 ? "a tile dimension below 1" : msg);
    }
    plan->atomics = 0;
    plan->slow_pct = 100;
    plan->turns = 1;
    if ((t->model_atomics && scope_eval(s, t->model_atomics, &plan->atomics, msg, sizeof msg)) ||
        (t->model_slow && scope_eval(s, t->model_slow, &plan->slow_pct, msg, sizeof msg)) ||
        (t->model_turns && scope_eval(s, t->model_turns, &plan->turns, msg, sizeof msg)))
        return tpl_expr_fail(t, err, "model", msg);
    if (plan->turns < 1)
        return tpl_expr_fail(t, err, "model turns", "fewer than 1 tile a block at once");
    return 0;
}

/* The source NVRTC compiles: the config's values, the derived names and the switches as #defines
 * before the template's text, into plan->source. */
static int plan_paste(const plan_req *r, const tpl_scope *s, int idx64, plan_t *plan, err_t *err)
{
    const template_t *t = r->tpl;
    const dtype_t dtype = r->dtype;
    const int arch = plan->arch;
    strbuf src;
    sb_try_init(&src);
    /* No shape here: shapes with the same switches share one CUBIN (and one cache entry). */
    sb_addf(&src, "/* pasted by engine: config %s, template %s, %s, %s */\n", r->config_name, t->name,
            dtype_name(dtype), arch_name(arch, (char[16]){0}, 16));
    sb_addf(&src, "#define T %s\n#define ELEM %zu\n#define F64 %d\n#define ARCH %d\n#define ARCH_SPECIFIC %d\n#define IDX64 %d\n",
            dtype == DTYPE_F64 ? "double" : dtype_half(dtype) ? "half_bits" : "float", dtype_size(dtype),
            dtype == DTYPE_F64, arch_sm(arch), arch_specific(arch), idx64);
    /* Only the half types name their compute type: f32's and f64's pasted source (and CUBIN cache
     * keys) stay what they were; gemm_common.cuh defaults TC to T, IS_HALF and BF16 to 0. */
    if (dtype_half(dtype))
        sb_addf(&src, "#define TC float\n#define IS_HALF 1\n#define BF16 %d\n", dtype == DTYPE_BF16);
    for (size_t i = 0; i < t->nparams; i++)
        sb_addf(&src, "#define %s %lld\n", t->params[i].name, (long long)r->values[i]);
    for (size_t i = 0; i < t->nderived; i++) {
        int64_t dv = 0;
        scope_get(s, t->derived[i].name, &dv);
        sb_addf(&src, "#define %s %lld\n", t->derived[i].name, (long long)dv);
    }
    for (size_t i = 0; i < t->nswitches; i++) {
        int64_t sv = 0;
        scope_get(s, t->switches[i].name, &sv);
        sb_addf(&src, "#define %s %lld\n", t->switches[i].name, (long long)sv);
    }
    sb_addf(&src, "#line 1 \"%s\"\n", t->path);
    sb_add(&src, t->text);
    /* Source pasted with a failed addition is NULL, never compiled short. */
    if (!(plan->source = sb_steal(&src)))
        return err_set(err, ERR_ALLOC, r->label, 0, 0, "no host memory for the pasted source");
    return 0;
}

static int plan_eval(const plan_req *r, bool paste, plan_t *plan, err_t *err)
{
    const template_t *t = r->tpl;
    const dtype_t dtype = r->dtype;
    const int arch = r->to.arch;
    const int64_t M = r->to.M, N = r->to.N, K = r->to.K;
    const layout_t *lay = r->to.lay;
    const layout_align *al = r->to.align;
    /* No layout: packed NN, one product, on 16-byte-aligned buffers. */
    layout_t packed;
    layout_align packed_al;
    if (!lay) {
        layout_packed(&packed, 0, 0, M, N, K, 1);
        lay = &packed;
    }
    if (!al) {
        layout_align_ld(lay, dtype_size(dtype), &packed_al);
        al = &packed_al;
    }
    memset(plan, 0, sizeof *plan);
    plan->M = M;
    plan->N = N;
    plan->K = K;
    plan->lay = *lay;
    plan->align = *al;
    plan->arch = arch;
    plan->dtype = dtype;
    plan->main_launch = -1;
    plan->traffic = -1;
    int pdl_param = template_param_index(t, "PDL");
    plan->pdl = !(t->pdl && arch >= 90) ? 0 : pdl_param >= 0 ? (int)r->values[pdl_param] : 1;
    tpl_scope s;
    scope_init(&s);
    scope_add_params(&s, t, r->values, dtype, arch);
    if (scope_add_derived(&s, t, err))
        return -1;
    scope_set(&s, "M", M);
    scope_set(&s, "N", N);
    scope_set(&s, "K", K);
    const int idx64 = scope_add_layout(&s, lay, al, M, N, K);
    int rc = plan_rules(r, paste, &s, plan, err);
    rc = rc ? rc : plan_launches(r, &s, plan, err);
    /* An empty product launches nothing (K = 0 is the caller's C = beta C): no maps to check. */
    if (rc == 0 && M > 0 && N > 0 && K > 0 && plan_tmaps(t, r->label, &s, dtype, plan, err))
        return -1;
    if (rc == 0 && plan->main_launch < 0)
        return err_set(err, ERR_CONFIG, t->path, 0, 0, "no launch of kernel \"gemm\" is enabled for this config");
    rc = rc ? rc : plan_figures(t, &s, plan, err);
    if (rc || !paste)
        return rc;
    return plan_paste(r, &s, idx64, plan, err);
}

void plan_free(plan_t *plan)
{
    free(plan->switches);
    free(plan->source);
    plan->switches = plan->source = NULL;
}

bool plan_use_pdl(const plan_t *plan, int sms, int blocks_per_sm)
{
    if (plan->pdl != 2)
        return plan->pdl == 1;
    const plan_launch *l = &plan->launches[plan->main_launch];
    int64_t blocks = l->grid[0] * l->grid[1] * l->grid[2];
    int64_t warps = (l->block[0] * l->block[1] * l->block[2] + 31) / 32;
    int64_t even = (blocks + sms - 1) / sms;           /* blocks per SM when spread breadth-first */
    int64_t early = (int64_t)sms * blocks_per_sm - blocks; /* slots the same grid before it leaves free */
    return !(blocks > sms && even < blocks_per_sm && blocks > early && even * warps >= PDL_BUSY_WARPS);
}
