/* run.c — `engine bench` and `engine verify`.
 *
 * The engine loads and checks every config, compiles them all on the compile pool (into the CUBIN
 * cache), then hands each (config, shape, beta) to a worker process on the GPU (worker.h) and prints
 * what comes back. A kernel that faults or hangs costs its own row and a fresh worker; the rest
 * still runs, and the exit code is the worst outcome. */
#define _DEFAULT_SOURCE /* realpath */
#include "run.h"

#include "arch.h"
#include "jit.h"
#include "pickcmd.h"
#include "report.h"
#include "setup.h"
#include "util.h"
#include "verify.h"
#include "worker.h"

#include <jansson.h>
#include <math.h>
#include <nvrtc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* The yardsticks of a row: peak rates at the maximum SM clock and measured bandwidths. */
typedef struct {
    double fp32, fp64, fp64_tc, tf32_tc; /* FLOP/s; tf32_tc 0 where the arch has no TF32 tensor cores */
    double half_tc;                      /* BF16/FP16 on the tensor cores, FP32 accumulation (arch_half_tc_lanes) */
    double dram_bps, l2_bps;
} machine_t;

typedef struct {
    const opts_t *o;
    setup_t su;
    worker_conf wc;
    worker_t w;
    config_t **cfgs;  /* one per entry, NULL when it failed to load */
    char ***sets;     /* each entry's overrides, as sent to the worker */
    size_t *nsets;
    const pick_t *pick; /* --auto: which entry runs at which shape; NULL: every entry everywhere */
    int worst;
} runner_t;

static const shape_t k_verify_shapes[] = {
    {1, 1, 1}, {17, 33, 5}, {127, 129, 131}, {1000, 1000, 1000}, {2048, 2048, 2048}};

static const char *jstr(json_t *o, const char *k, const char *def)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : def;
}

/* ---- set-up ---------------------------------------------------------------------------------- */

/* Free what load_all made. */
static void free_all(runner_t *r)
{
    for (size_t i = 0; r->cfgs && i < r->o->nentries; i++) {
        if (r->cfgs[i]) {
            config_free(r->cfgs[i]);
            free(r->cfgs[i]);
        }
        setup_sets_free(r->sets[i], r->nsets[i]);
    }
    free(r->cfgs);
    free(r->sets);
    free(r->nsets);
    r->cfgs = NULL;
    r->sets = NULL;
    r->nsets = NULL;
}

/* Load every entry for the target; bad ones are reported and left NULL. Returns how many loaded. */
static size_t load_all(runner_t *r)
{
    const opts_t *o = r->o;
    size_t ok = 0;
    r->cfgs = xcalloc(o->nentries, sizeof *r->cfgs);
    r->sets = xcalloc(o->nentries, sizeof *r->sets);
    r->nsets = xcalloc(o->nentries, sizeof *r->nsets);
    for (size_t i = 0; i < o->nentries; i++) {
        err_t err;
        err_clear(&err);
        r->sets[i] = setup_entry_sets(o, &o->entries[i], &r->nsets[i]);
        config_t *c = xcalloc(1, sizeof *c);
        if (setup_load_entry(o, &o->entries[i], r->su.arch, (const char *const *)r->sets[i], r->nsets[i], c, &err)) {
            err_print(stderr, &err);
            r->worst = exit_worst(r->worst, err.code);
            free(c);
            c = NULL;
        }
        r->cfgs[i] = c;
        ok += c != NULL;
    }
    return ok;
}

static int runner_open(runner_t *r, const opts_t *o, bool bandwidth)
{
    memset(r, 0, sizeof *r);
    r->o = o;
    worker_init(&r->w, o->device);
    err_t err;
    err_clear(&err);
    signal(SIGPIPE, SIG_IGN);
    /* Bad configs are refused before any GPU work: load them against --arch (or sm_90) first. */
    int first_arch = o->arch ? o->arch : 90;
    r->su.arch = first_arch;
    if (load_all(r) == 0)
        return -1;
    if (setup_target(&r->su, o, o->device, true, &err) || setup_cache(&r->su, o, true, &err) ||
        setup_pool(&r->su, o, &err)) {
        err_print(stderr, &err);
        r->worst = exit_worst(r->worst, err.code);
        return -1;
    }
    if (!o->arch && r->su.arch != first_arch) {
        /* Constraints may mention ARCH: check again against the GPU's architecture. */
        free_all(r);
        if (load_all(r) == 0)
            return -1;
    }
    r->wc = (worker_conf){worker_default_exe(), r->su.cache.dir, bandwidth, 600};
    if (worker_ensure(&r->w, &r->wc, &err)) {
        err_print(stderr, &err);
        r->worst = exit_worst(r->worst, err.code);
        return -1;
    }
    return 0;
}

static void runner_close(runner_t *r)
{
    worker_free(&r->w);
    free_all(r);
    setup_free(&r->su);
}

/* Compile every loaded config for every shape on the pool. jobs[s * nentries + i]. */
static build_job *build_all(runner_t *r, const shape_t *shapes, size_t nshapes)
{
    size_t n = r->o->nentries;
    build_job *jobs = xcalloc(nshapes * n, sizeof *jobs);
    build_job **args = xcalloc(nshapes * n, sizeof *args);
    size_t na = 0;
    for (size_t s = 0; s < nshapes; s++)
        for (size_t i = 0; i < n; i++) {
            build_job *j = &jobs[s * n + i];
            if (!r->cfgs[i] || !pick_runs(r->pick, s, i))
                continue;
            build_job_init(j, r->cfgs[i], r->su.arch, r->su.smem_limit, shapes[s].m, shapes[s].n, shapes[s].k);
            /* The layout of the options at this shape: a rule it breaks is the job's error. */
            if (cli_layout(r->o, &shapes[s], &j->lay, &j->err)) {
                j->rc = j->err.code;
                continue;
            }
            layout_align_ld(&j->lay, dtype_size(r->cfgs[i]->dtype), &j->align);
            args[na++] = j;
        }
    build_jobs_run(&r->su.pool, args, na);
    free(args);
    return jobs;
}

static void free_jobs(runner_t *r, build_job *jobs, size_t nshapes)
{
    for (size_t i = 0; i < nshapes * r->o->nentries; i++)
        if (jobs[i].cfg)
            build_job_free(&jobs[i]);
    free(jobs);
}

/* Send a request, (re)starting the worker; one that dies or hangs is a reply of status fault or timeout,
 * one whose set-up stalls past setup_s runs once more ("setup_retried" says why). NULL: no worker. */
static json_t *call(runner_t *r, json_t *req, double setup_s)
{
    char stalled[sizeof r->w.ended] = "";
    for (err_t err;;) {
        err_clear(&err);
        if (worker_ensure(&r->w, &r->wc, &err)) {
            err_print(stderr, &err);
            r->worst = exit_worst(r->worst, err.code);
            return NULL;
        }
        json_t *reply = NULL;
        worker_status st = worker_call(&r->w, req, setup_s, r->o->timeout_s, &reply);
        if (st == WORKER_STALLED && !*stalled) {
            snprintf(stalled, sizeof stalled, "%s", r->w.ended);
            fprintf(stderr, "engine: %s; trying the request once more on a new worker\n", stalled);
            continue;
        }
        if (st != WORKER_OK)
            return json_pack("{s:s, s:i, s:s}", "status", st == WORKER_DIED ? "fault" : "timeout", "code", EXIT_SYSTEM,
                             "error", r->w.ended);
        if (json_is_true(json_object_get(reply, "broken")))
            worker_stop(&r->w);
        if (*stalled)
            json_object_set_new(reply, "setup_retried", json_string(stalled));
        return reply;
    }
}

static json_t *run_request(runner_t *r, size_t entry, const build_job *j, double alpha, double beta, bool time)
{
    const opts_t *o = r->o;
    json_t *sets = json_array();
    for (size_t i = 0; i < r->nsets[entry]; i++)
        json_array_append_new(sets, json_string(r->sets[entry][i]));
    json_t *req = json_pack("{s:s, s:s, s:o, s:o, s:i, s:I, s:I, s:I, s:f, s:f, s:I, s:b, s:b, s:i, s:i, s:i, s:b}",
                            "op", "run", "path", o->entries[entry].path, "sets", sets, "dtype",
                            o->dtype ? json_string(o->dtype) : json_null(), "arch", j->arch, "M", (json_int_t)j->M,
                            "N", (json_int_t)j->N, "K", (json_int_t)j->K, "alpha", alpha, "beta", beta, "seed",
                            (json_int_t)o->seed, "verify", 1, "time", time, "warmup", o->warmup, "runs", o->runs,
                            "iters", o->iters, "baseline", time);
    worker_put_layout(req, &j->lay);
    json_t *reply = call(r, req, worker_setup_allowance_s(req, r->cfgs[entry]->dtype));
    json_decref(req);
    return reply;
}

static void print_mismatches(json_t *reply)
{
    json_t *m = json_object_get(reply, "mismatches");
    size_t i;
    json_t *e;
    json_array_foreach(m, i, e)
    {
        double got = json_is_number(json_array_get(e, 2)) ? json_number_value(json_array_get(e, 2)) : NAN;
        double want = json_is_number(json_array_get(e, 3)) ? json_number_value(json_array_get(e, 3)) : NAN;
        double tol = json_number_value(json_array_get(e, 4));
        fprintf(stderr, "    C[%lld][%lld]: got %.9g want %.9g (|diff| %.3g, tol %.3g)\n",
                (long long)json_integer_value(json_array_get(e, 0)), (long long)json_integer_value(json_array_get(e, 1)),
                got, want, fabs(got - want), tol);
    }
    size_t bad = (size_t)worker_num(reply, "bad", 0);
    if (bad > json_array_size(m))
        fprintf(stderr, "    ... and %zu more\n", bad - json_array_size(m));
}

/* The reply's failure, if any, printed; returns its exit code. */
static int report_failure(json_t *reply)
{
    int code = (int)worker_num(reply, "code", EXIT_SYSTEM);
    if (code == EXIT_OK)
        return EXIT_OK;
    fprintf(stderr, "%s\n", jstr(reply, "error", "the worker gave no reason"));
    if (strcmp(jstr(reply, "status", ""), "FAIL") == 0)
        print_mismatches(reply);
    return code;
}

/* Lines to out (stdout, or stderr beside verify's JSON rows). */
static void cross_check(runner_t *r, FILE *out)
{
    bool used[DTYPE_COUNT] = {false};
    for (size_t i = 0; i < r->o->nentries; i++)
        if (r->cfgs[i])
            used[r->cfgs[i]->dtype] = true;
    json_t *dts = json_array();
    for (int d = 0; d < DTYPE_COUNT; d++)
        if (used[d])
            json_array_append_new(dts, json_string(dtype_name((dtype_t)d)));
    json_t *req = json_pack("{s:s, s:o, s:I}", "op", "cross_check", "dtypes", dts, "seed", (json_int_t)r->o->seed);
    json_t *reply = call(r, req, worker_setup_allowance_s(req, DTYPE_F32));
    json_decref(req);
    if (!reply)
        return;
    size_t i;
    json_t *l;
    json_array_foreach(json_object_get(reply, "lines"), i, l)
    {
        if (json_is_string(l))
            fprintf(out, "%s\n", json_string_value(l));
        else
            print_mismatches(l);
    }
    int code = (int)worker_num(reply, "code", EXIT_SYSTEM);
    if (code != EXIT_OK && code != EXIT_VERIFY)
        fprintf(stderr, "%s\n", jstr(reply, "error", "cross-check failed"));
    r->worst = exit_worst(r->worst, code);
    json_decref(reply);
}

/* ---- bench ----------------------------------------------------------------------------------- */

static double peak_for(const machine_t *mc, dtype_t d, bool tensor)
{
    if (dtype_half(d)) /* the tensor cores' rate, whatever runs it (cuBLAS GemmEx does) */
        return mc->half_tc;
    if (d == DTYPE_F32) /* an f32 tensor-core kernel (3xTF32, 1xTF32) is held to the TF32 rate */
        return tensor && mc->tf32_tc > 0 ? mc->tf32_tc : mc->fp32;
    return tensor ? mc->fp64_tc : mc->fp64;
}

static void fill_roofline(report_row *row, const machine_t *mc, const plan_t *plan, dtype_t d, bool tensor,
                          double beta)
{
    double flops = 2.0 * plan->M * plan->N * plan->K, es = (double)dtype_size(d);
    double t_flop = flops / peak_for(mc, d, tensor);
    double dram_bytes = es * ((double)plan->M * plan->K + (double)plan->K * plan->N +
                              (double)plan->M * plan->N * (beta != 0.0 ? 2 : 1));
    double t_dram = mc->dram_bps > 0 ? dram_bytes / mc->dram_bps : 0;
    double t_l2 = plan->traffic >= 0 && mc->l2_bps > 0 ? es * (double)plan->traffic / mc->l2_bps : 0;
    row->floor_ms = 1e3 * t_flop;
    row->bound = "flop";
    if (1e3 * t_dram > row->floor_ms) {
        row->floor_ms = 1e3 * t_dram;
        row->bound = "dram";
    }
    if (1e3 * t_l2 > row->floor_ms) {
        row->floor_ms = 1e3 * t_l2;
        row->bound = "l2";
    }
}

static char *rerun_args(const opts_t *o, const config_t *c, const shape_t *sh, const layout_t *l, double alpha,
                        double beta, int arch)
{
    char name[16], lay[192] = "";
    if (l->ta || l->tb || l->batch > 1 || !layout_is_packed(l, sh->m, sh->n, sh->k))
        snprintf(lay, sizeof lay, " --op %s --lda %lld --ldb %lld --ldc %lld --batch %lld --stride-a %lld --stride-b %lld --stride-c %lld",
                 layout_op_name(l), (long long)l->lda, (long long)l->ldb, (long long)l->ldc, (long long)l->batch,
                 (long long)l->sa, (long long)l->sb, (long long)l->sc);
    return xasprintf("engine bench %s --m %lld --n %lld --k %lld%s --alpha %g --beta %g --seed %llu --dtype %s --arch %s%s%s",
                     c->path, (long long)sh->m, (long long)sh->n, (long long)sh->k, lay, alpha, beta,
                     (unsigned long long)o->seed, dtype_name(c->dtype), arch_name(arch, name, sizeof name),
                     c->overrides[0] ? " " : "", c->overrides);
}

static machine_t machine_of(json_t *hello)
{
    int sm = (int)worker_num(hello, "sm", 90), sms = (int)worker_num(hello, "sms", 1);
    const arch_info *ai = arch_lookup(sm);
    double hz = worker_num(hello, "clock_khz", 0) * 1e3;
    double dram = worker_num(hello, "dram_bps", 0), l2 = worker_num(hello, "l2_bps", 0);
    return (machine_t){arch_peak_flops(ai->fp32_lanes, sms, hz), arch_peak_flops(ai->fp64_lanes, sms, hz),
                       arch_peak_flops(ai->fp64_tc_lanes > 0 ? ai->fp64_tc_lanes : ai->fp64_lanes, sms, hz),
                       arch_peak_flops(ai->tf32_tc_lanes, sms, hz), arch_peak_flops(arch_half_tc_lanes(ai), sms, hz),
                       dram, l2};
}

/* The row of a cuBLAS timing a reply carries under prefix ("cublas_", "cublas_tf32_"); % cuBLAS
 * against ref_ms, strict cuBLAS's time. */
static void cublas_row(report_t *rep, json_t *reply, const char *prefix, const char *name, const char *args,
                       dtype_t d, const shape_t *sh, const layout_t *lay, double alpha, double beta, double peak,
                       double ref_ms)
{
    char k[64];
    snprintf(k, sizeof k, "%sms", prefix);
    double flops = 2.0 * sh->m * sh->n * sh->k * lay->batch, ms = worker_num(reply, k, 0);
    report_row row = {.config = name, .tmpl = "cublas", .dtype = dtype_name(d), .M = sh->m, .N = sh->n, .K = sh->k,
                      .lay = lay,
                      .alpha = alpha, .beta = beta, .status = "ok", .ms = ms, .tflops = flops / (ms * 1e-3) / 1e12,
                      .pct_ref = 100.0 * ref_ms / ms, .pct_peak = 100.0 * flops / (ms * 1e-3) / peak, .regs = -1,
                      .pdl = -1, .power_w = -1, .bound = "", .switches = "", .params = "", .args = args};
    snprintf(k, sizeof k, "%sms_min", prefix);
    row.ms_min = worker_num(reply, k, 0);
    snprintf(k, sizeof k, "%sms_max", prefix);
    row.ms_max = worker_num(reply, k, 0);
    snprintf(k, sizeof k, "%sclock_mhz", prefix);
    row.clock_mhz = worker_num(reply, k, 0);
    snprintf(k, sizeof k, "%spower_w", prefix);
    row.power_w = worker_num(reply, k, -1);
    report_row_print(rep, &row);
}

static void bench_notes(runner_t *r, report_t *rep, const machine_t *mc)
{
    json_t *h = r->w.hello;
    int nvrtc = (int)worker_num(h, "nvrtc", 0), drv = (int)worker_num(h, "driver", 0);
    char name[16], specific[16];
    /* Without --arch an arch-specific template's kernels are built for sm_90a (arch_for_template). */
    int sa = arch_for_template(r->su.arch, r->su.arch_guessed, true);
    char also[64] = "";
    if (sa != r->su.arch)
        snprintf(also, sizeof also, " (%s for arch-specific templates)", arch_name(sa, specific, sizeof specific));
    report_note(rep,
                "device %d: %s, sm_%d, %d SMs, max clock %d MHz, L2 %d MB; driver %d.%d, NVRTC %d.%d, cuBLAS %d; "
                "kernels built for %s%s",
                r->o->device, jstr(h, "name", "?"), (int)worker_num(h, "sm", 0), (int)worker_num(h, "sms", 0),
                (int)worker_num(h, "clock_khz", 0) / 1000, (int)worker_num(h, "l2_bytes", 0) >> 20, drv / 1000,
                (drv % 1000) / 10, nvrtc / 1000, (nvrtc % 1000) / 10, (int)worker_num(h, "cublas", 0),
                arch_name(r->su.arch, name, sizeof name), also);
    report_note(rep, "peaks: FP32 %.1f TFLOP/s, FP64 %.1f (CUDA cores), FP64 %.1f (tensor cores), TF32 %.1f (tensor cores), BF16/FP16 %.1f (tensor cores); measured bandwidth: DRAM %.0f GB/s (copy), L2 %.0f GB/s (reads)",
                mc->fp32 / 1e12, mc->fp64 / 1e12, mc->fp64_tc / 1e12, mc->tf32_tc / 1e12, mc->half_tc / 1e12, mc->dram_bps / 1e9,
                mc->l2_bps / 1e9);
}

/* One config's row from its reply. Strings point into reply and job: print before freeing them. */
static void bench_row(report_row *row, json_t *reply, const build_job *j, const config_t *c,
                      const machine_t *mc, double beta)
{
    row->status = jstr(reply, "status", "error");
    if (strcmp(row->status, "ok") != 0)
        return;
    row->regs = (int)worker_num(reply, "regs", -1);
    row->spill_bytes = (int)worker_num(reply, "spill_bytes", -1);
    row->smem_bytes = (int)worker_num(reply, "smem_bytes", -1);
    row->threads = (int)worker_num(reply, "threads", 0);
    row->occ_blocks = (int)worker_num(reply, "occ_blocks", 0);
    row->pdl = json_is_boolean(json_object_get(reply, "pdl")) ? json_is_true(json_object_get(reply, "pdl")) : -1;
    row->occ_pct = worker_num(reply, "occ_pct", 0);
    row->max_ratio = worker_num(reply, "max_ratio", 0);
    row->acc_class = json_is_string(json_object_get(reply, "class")) ? jstr(reply, "class", "") : NULL;
    row->err_max_u = worker_num(reply, "err_max_u", -1);
    row->err_mean_u = worker_num(reply, "err_mean_u", -1);
    row->ref_err_max_u = worker_num(reply, "ref_err_max_u", -1);
    row->ref_err_mean_u = worker_num(reply, "ref_err_mean_u", -1);
    row->ms = worker_num(reply, "ms", 0);
    row->ms_min = worker_num(reply, "ms_min", 0);
    row->ms_max = worker_num(reply, "ms_max", 0);
    row->clock_mhz = worker_num(reply, "clock_mhz", 0);
    row->power_w = worker_num(reply, "power_w", -1);
    double flops = 2.0 * j->M * j->N * j->K * j->lay.batch, cublas = worker_num(reply, "cublas_ms", 0);
    row->tflops = flops / (row->ms * 1e-3) / 1e12;
    row->pct_ref = cublas > 0 ? 100.0 * cublas / row->ms : 0;
    row->pct_peak = 100.0 * flops / (row->ms * 1e-3) / peak_for(mc, c->dtype, c->tpl.tensor);
    fill_roofline(row, mc, &j->k.plan, c->dtype, c->tpl.tensor, beta);
}

/* --auto: wisdom's choice per shape becomes the run's entries (auto_o, a copy of o). */
static int pick_open(const opts_t **o, opts_t *auto_o, pick_t *pick, const shape_t *shapes, size_t nshapes)
{
    if (!(*o)->auto_pick)
        return 0;
    err_t err;
    err_clear(&err);
    if (pickcmd_init(pick, *o, shapes, nshapes, &err)) {
        err_print(stderr, &err);
        return err.code;
    }
    pickcmd_left_out(pick, *o, stderr);
    if ((*o)->auto_tune_s > 0) {
        /* Variants are planned in the run's layout at each shape (packed where it is refused: the
         * run refuses it too). */
        layout_t *lays = xcalloc(nshapes ? nshapes : 1, sizeof *lays);
        for (size_t s = 0; s < nshapes; s++) {
            err_t lerr;
            err_clear(&lerr);
            if (cli_layout(*o, &shapes[s], &lays[s], &lerr))
                layout_packed(&lays[s], (*o)->ta, (*o)->tb, shapes[s].m, shapes[s].n, shapes[s].k, 1);
        }
        if (pick_tune_candidates(pick, shapes, lays)) /* core hands it back: the command cannot go on */
            xoom(sizeof *pick->tune * PICK_TUNE_MAX);
        free(lays);
    }
    *auto_o = **o;
    auto_o->entries = pick->entries;
    auto_o->nentries = pick->nentries;
    *o = auto_o;
    return 0;
}

/* --explain: the model's weighing under each shape's "auto" line: a note in a table, stderr beside
 * a machine-readable format (stdout stays one row per line). */
static void explain(const opts_t *o, const pick_t *pick, size_t s, bool table)
{
    if (!o->explain)
        return;
    fputs(pick->explain[s], table ? stdout : stderr);
}

/* --auto-tune: at each shape wisdom has no entry for, time the model's best candidates (fastest
 * estimate first) until SECONDS of GPU time are spent, keep the fastest that verifies, record it in
 * the user's wisdom (--wisdom DIR when named) and run it. Lines go to out. */
static void auto_tune(runner_t *r, pick_t *pick, const shape_t *shapes, size_t nshapes, double alpha, double beta,
                      FILE *out)
{
    const opts_t *o = r->o;
    for (size_t s = 0; s < nshapes; s++) {
        if (!pick->ntune || pick->ntune[s] == 0)
            continue;
        const shape_t *sh = &shapes[s];
        double spent = 0, best_ms = 0, best_cub = 0;
        int best = -1, best_occ = 0;
        strbuf sb;
        sb_init(&sb);
        for (size_t k = 0; k < pick->ntune[s] && (k == 0 || spent < o->auto_tune_s); k++) {
            size_t e = pick->tune[s * PICK_TUNE_MAX + k];
            if (!r->cfgs[e])
                continue;
            build_job job, *jp = &job;
            memset(&job, 0, sizeof job);
            build_job_init(&job, r->cfgs[e], r->su.arch, r->su.smem_limit, sh->m, sh->n, sh->k);
            /* Timed in the problem's layout, which is what the entry will say it was measured in. */
            if (cli_layout(o, sh, &job.lay, &job.err) == 0)
                layout_align_ld(&job.lay, dtype_size(r->cfgs[e]->dtype), &job.align);
            build_jobs_run(&r->su.pool, &jp, 1);
            json_t *reply = job.rc ? NULL : run_request(r, e, &job, alpha, beta, true);
            const char *st = reply ? jstr(reply, "status", "error") : "error";
            double ms = reply ? worker_num(reply, "ms", 0) : 0;
            spent += reply ? worker_num(reply, "t_verify", 0) + worker_num(reply, "t_bench", 0) : 0;
            sb_addf(&sb, "%s%s %s", k ? ", " : "", r->cfgs[e]->label, strcmp(st, "ok") == 0 ? "" : st);
            if (strcmp(st, "ok") == 0) {
                sb_addf(&sb, "%.1f us", ms * 1e3);
                if (best < 0 || ms < best_ms) {
                    best = (int)e;
                    best_ms = ms;
                    best_cub = worker_num(reply, "cublas_ms", 0);
                    best_occ = (int)worker_num(reply, "occ_blocks", 0);
                }
            }
            json_decref(reply);
            build_job_free(&job);
        }
        char *times = sb_steal(&sb);
        fprintf(out, "auto-tune %lldx%lldx%lld: %s; %.2f s of GPU time", (long long)sh->m, (long long)sh->n,
                (long long)sh->k, times, spent);
        free(times);
        if (best < 0) {
            fprintf(out, "; none verified, the model's choice stays\n");
            continue;
        }
        pick->of_shape[s] = (size_t)best;
        free(pick->why[s]);
        pick->why[s] = xasprintf("%s (auto-tune: the fastest of the model's candidates timed here)", r->cfgs[best]->label);
        const char *dir = o->wisdom ? o->wisdom : pick->user_dir;
        const char *device = jstr(r->w.hello, "name", "");
        if (!dir || !*device) {
            fprintf(out, "; kept %s for this run (no wisdom directory to record it in)\n", r->cfgs[best]->label);
            continue;
        }
        /* The entry: the config by absolute path (user wisdom lies nowhere near configs/). */
        char abs[4096];
        const entry_t *en = &o->entries[best];
        double batch = o->batch > 1 ? (double)o->batch : 1;
        wisdom_entry we = {.dtype = r->cfgs[best]->dtype, .op = 2 * o->ta + o->tb, .batch = (int64_t)batch, .shape = *sh,
                           .tflops = 2.0 * sh->m * sh->n * sh->k * batch / (best_ms * 1e-3) / 1e12,
                           .vs_cublas = best_cub > 0 ? best_cub / best_ms : 0, .occ = best_occ > 0 && best_occ <= 64 ? best_occ : 0};
        /* The class --lda/--ldb/--ldc leave, not the leading dimensions (wisdom.h). */
        layout_t lay;
        err_t lerr;
        err_clear(&lerr);
        if (cli_layout(o, sh, &lay, &lerr) == 0)
            layout_align_ld(&lay, dtype_size(we.dtype), &we.align);
        we.config = realpath(en->path, abs) ? abs : en->path;
        param_set *sets = xcalloc(r->nsets[best] + 1, sizeof *sets);
        err_t err;
        err_clear(&err);
        for (size_t i = 0; i < r->nsets[best]; i++)
            if (param_set_parse(r->sets[best][i], &sets[we.nsets], &err) == 0)
                we.nsets++;
        we.sets = sets;
        time_t now = time(NULL);
        char day[32];
        strftime(day, sizeof day, "%Y-%m-%d", gmtime(&now));
        char *src = xasprintf("engine %s --auto-tune, %s", o->cmd_name, day);
        we.source = src;
        char *path = wisdom_device_path(dir, device);
        if (!path) /* core hands it back: the command cannot go on */
            xoom(strlen(dir) + strlen(device) + 8);
        wisdom_outcome outc = 0;
        mkdir_p(dir, 0755); /* the user's ($XDG_DATA_HOME/engine/wisdom) may not exist yet */
        if (wisdom_record(path, device, r->su.arch, &we, &outc, &err) == 0)
            fprintf(out, "; kept %s, recorded in %s\n", r->cfgs[best]->label, path);
        else {
            char line[ERR_SOURCE_LEN + ERR_TEXT_LEN + 64];
            err_format(&err, line, sizeof line);
            fprintf(out, "; kept %s for this run, not recorded: %s\n", r->cfgs[best]->label, line);
        }
        free(path);
        free(src);
        for (size_t i = 0; i < we.nsets; i++)
            param_set_free(&sets[i]);
        free(sets);
    }
}

/* The problem a bench pass times: shape, layout and scalars. */
typedef struct {
    const shape_t *sh;
    const layout_t *lay;
    double alpha, beta;
} bench_problem;

/* What cuBLAS ran for dtype d (the rerun column of its row): the call and its compute type. */
static const char *cublas_call(dtype_t d, bool plain, bool pedantic)
{
    if (dtype_half(d))
        return plain ? "cublasGemmEx, CUBLAS_COMPUTE_32F, no reduced-precision reductions"
                     : "cublasGemmStridedBatchedEx, CUBLAS_COMPUTE_32F, no reduced-precision reductions";
    if (!plain)
        return d == DTYPE_F64 ? (pedantic ? "cublasGemmStridedBatchedEx, CUBLAS_COMPUTE_64F_PEDANTIC"
                                          : "cublasGemmStridedBatchedEx, CUBLAS_COMPUTE_64F")
               : pedantic ? "cublasGemmStridedBatchedEx, CUBLAS_COMPUTE_32F_PEDANTIC"
                          : "cublasGemmStridedBatchedEx, CUBLAS_COMPUTE_32F";
    return d == DTYPE_F64 ? (pedantic ? "cublasDgemm, CUBLAS_PEDANTIC_MATH" : "cublasDgemm, CUBLAS_DEFAULT_MATH")
           : pedantic    ? "cublasSgemm, CUBLAS_PEDANTIC_MATH"
                         : "cublasSgemm, CUBLAS_DEFAULT_MATH";
}

/* cuBLAS's rows after dtype d's configs: its time from last (a reply that carries it), and cuBLAS
 * FAST_TF32's from last_tf32 where a tf32-class config ran (its % cuBLAS against strict SGEMM, as
 * every row's). */
static void bench_cublas_rows(const runner_t *r, report_t *rep, const machine_t *mc, dtype_t d, const bench_problem *pb,
                              json_t *last, json_t *last_tf32)
{
    const layout_t *lay = pb->lay;
    const shape_t *sh = pb->sh;
    bool plain = !lay->ta && !lay->tb && lay->batch == 1 && layout_is_packed(lay, sh->m, sh->n, sh->k);
    /* cuBLAS DGEMM runs on the FP64 tensor cores where there are any. */
    double peak = d == DTYPE_F64 && arch_lookup((int)worker_num(r->w.hello, "sm", 90))->fp64_tc_lanes > 0
                      ? mc->fp64_tc
                      : peak_for(mc, d, false);
    cublas_row(rep, last, "cublas_", "cublas", cublas_call(d, plain, r->su.cublas_pedantic), d, sh, lay, pb->alpha,
               pb->beta, peak, worker_num(last, "cublas_ms", 0));
    if (last_tf32)
        cublas_row(rep, last_tf32, "cublas_tf32_", "cublas_tf32",
                   plain ? "cublasGemmEx, CUBLAS_COMPUTE_32F_FAST_TF32"
                         : "cublasGemmStridedBatchedEx, CUBLAS_COMPUTE_32F_FAST_TF32",
                   d, sh, lay, pb->alpha, pb->beta, peak_for(mc, d, true), worker_num(last, "cublas_ms", 0));
}

int run_bench(const opts_t *o)
{
    shape_t one = o->shape;
    const shape_t *shapes = o->nshapes ? o->shapes : &one;
    size_t nshapes = o->nshapes ? o->nshapes : 1;
    opts_t auto_o;
    pick_t pick = {0};
    int prc = pick_open(&o, &auto_o, &pick, shapes, nshapes);
    if (prc)
        return prc;
    runner_t r;
    if (runner_open(&r, o, true)) {
        int worst = r.worst;
        runner_close(&r);
        pick_free(&pick);
        return worst;
    }
    r.pick = o->auto_pick ? &pick : NULL;
    if (o->auto_tune_s > 0)
        auto_tune(&r, &pick, shapes, nshapes, o->alpha, o->beta, o->format == FORMAT_TABLE ? stdout : stderr);
    build_job *jobs = build_all(&r, shapes, nshapes);
    machine_t mc = machine_of(r.w.hello);
    report_t rep;
    report_init(&rep, (report_format)o->format, stdout);
    bench_notes(&r, &rep, &mc);
    if (o->cross_check)
        cross_check(&r, stdout);
    double alpha = o->alpha, beta = o->beta;
    for (size_t s = 0; s < nshapes; s++) {
        const shape_t *sh = &shapes[s];
        layout_t lay;
        err_t lerr;
        err_clear(&lerr);
        if (cli_layout(o, sh, &lay, &lerr)) /* refused at parse time already; here for the shape list */
            layout_packed(&lay, o->ta, o->tb, sh->m, sh->n, sh->k, 1);
        char ltext[192];
        report_note(&rep, "problem: C = alpha*op(A)*op(B) + beta*C, %lldx%lldx%lld%s, alpha=%g beta=%g, seed %llu; timing: %d warm-up, median of %d runs x %d launches, L2 flushed before each run; cuBLAS in %s (bf16/f16: GemmEx, FP32 compute), in the same layout, timed by the same worker",
                    (long long)sh->m, (long long)sh->n, (long long)sh->k,
                    layout_text(&lay, sh->m, sh->n, sh->k, ltext, sizeof ltext), alpha, beta,
                    (unsigned long long)o->seed, o->warmup, o->runs, o->iters,
                    r.su.cublas_pedantic ? "strict FP32/FP64 (ENGINE_CUBLAS_MATH=pedantic)"
                                         : "FP32/FP64 in its default math (no TF32)");
        if (r.pick) {
            report_note(&rep, "auto: %s", pick.why[s]);
            explain(o, &pick, s, o->format == FORMAT_TABLE);
        }
        /* One pass per dtype, so each has its cuBLAS row right after its configs. */
        for (int d = 0; d < DTYPE_COUNT; d++) {
            json_t *last = NULL;      /* a reply that carries this problem's cuBLAS timing */
            json_t *last_tf32 = NULL; /* ... and cuBLAS FAST_TF32's (a tf32-class config's reply) */
            for (size_t i = 0; i < o->nentries; i++) {
                config_t *c = r.cfgs[i];
                if (!c || (int)c->dtype != d || !pick_runs(r.pick, s, i))
                    continue;
                const build_job *j = &jobs[s * o->nentries + i];
                char *params = config_params_try(c);
                if (!params) /* a few bytes: the command cannot go on */
                    xoom(c->tpl.nparams * 32);
                char *args = rerun_args(o, c, sh, &lay, alpha, beta, c->arch);
                report_row row = {.config = c->label, .tmpl = c->tpl.name, .dtype = dtype_name(c->dtype),
                                  .M = sh->m, .N = sh->n, .K = sh->k, .lay = &lay, .alpha = alpha, .beta = beta,
                                  .status = "error", .regs = -1, .pdl = -1, .bound = "", .switches = "", .params = params,
                                  .args = args, .chosen = r.pick ? pick.why[s] : NULL};
                json_t *reply = NULL;
                if (j->rc) {
                    err_print(stderr, &j->err);
                    r.worst = exit_worst(r.worst, j->err.code);
                } else if ((reply = run_request(&r, i, j, alpha, beta, true))) {
                    row.switches = j->k.plan.switches;
                    row.cubin = j->origin == JIT_COMPILED ? "nvrtc" : "cache";
                    bench_row(&row, reply, j, c, &mc, beta);
                    r.worst = exit_worst(r.worst, report_failure(reply));
                } else {
                    free(params);
                    free(args);
                    goto out;
                }
                report_row_print(&rep, &row);
                free(params);
                free(args);
                if (reply && worker_num(reply, "cublas_tf32_ms", 0) > 0) {
                    json_decref(last_tf32);
                    last_tf32 = json_incref(reply);
                }
                if (reply && worker_num(reply, "cublas_ms", 0) > 0) {
                    json_decref(last);
                    last = reply;
                } else {
                    json_decref(reply);
                }
            }
            bench_problem pb = {sh, &lay, alpha, beta};
            if (last)
                bench_cublas_rows(&r, &rep, &mc, (dtype_t)d, &pb, last, last_tf32);
            json_decref(last);
            json_decref(last_tf32);
        }
    }
out:
    free_jobs(&r, jobs, nshapes);
    int worst = r.worst;
    runner_close(&r);
    pick_free(&pick);
    return worst;
}

/* ---- verify ---------------------------------------------------------------------------------- */

/* "f32 err 3.1/0.25 u (cuBLAS 7.4/0.28)": the class, the kernel's max and mean error against the
 * FP64 reference and its yardstick's (accuracy.h); "f32 err not measured" without a reference. */
static void accuracy_text(json_t *reply, char *buf, size_t len)
{
    const char *cls = jstr(reply, "class", "");
    json_t *mx = json_object_get(reply, "err_max_u");
    if (!*cls) {
        snprintf(buf, len, "-");
    } else if (!json_is_number(mx)) {
        snprintf(buf, len, "%s err %s", cls,
                 json_is_null(mx) && strcmp(jstr(reply, "reference", "none"), "none") != 0 ? "inf (not finite)"
                                                                                            : "not measured (no reference)");
    } else {
        snprintf(buf, len, "%s err %.3g/%.3g u (cuBLAS %.3g/%.3g)", cls, worker_num(reply, "err_max_u", 0),
                 worker_num(reply, "err_mean_u", 0), worker_num(reply, "ref_err_max_u", 0),
                 worker_num(reply, "ref_err_mean_u", 0));
    }
}

/* One row of verify --format jsonl on stdout: the config, the shape (and its layout's text), beta
 * and what the worker's reply says (NULL: the kernel could not be built, status "error"): the
 * status, the element screen (max_ratio: largest error over its tolerance; bad, nonfinite of
 * checked) and the accuracy class's figures in u (the kernel's and cuBLAS's on the same inputs),
 * so a test can judge each row itself rather than trust the summary line; and where the time went,
 * in seconds: the worker's set-up of the problem (t_setup: inputs drawn, bound and reference made,
 * skipped when the problem is the previous row's), its wait for the kernel (t_compile), the check
 * (t_verify), the whole request as the engine saw it (t_call; null where nothing ran); and why
 * it ran on a second worker (setup_retried: a stalled set-up, call()), else null. */
static void verify_row(const config_t *c, const shape_t *sh, const char *shape, double beta, json_t *reply,
                       const char *switches, double t_call)
{
    json_t *row = json_pack("{s:s, s:s, s:I, s:I, s:I, s:s, s:f, s:s}", "config", c->label, "dtype",
                            dtype_name(c->dtype), "M", (json_int_t)sh->m, "N", (json_int_t)sh->n, "K",
                            (json_int_t)sh->k, "shape", shape, "beta", beta, "status",
                            reply ? jstr(reply, "status", "error") : "error");
    if (!row)
        xoom(256);
    static const char *const keys[] = {"max_ratio", "bad",        "checked",       "nonfinite",      "class",
                                       "err_max_u", "err_mean_u", "ref_err_max_u", "ref_err_mean_u", "t_setup",
                                       "t_compile", "t_verify",   "setup_retried"};
    for (size_t k = 0; reply && k < sizeof keys / sizeof keys[0]; k++) {
        json_t *v = json_object_get(reply, keys[k]);
        json_object_set(row, keys[k], v ? v : json_null());
    }
    json_object_set_new(row, "t_call", t_call >= 0 ? json_real(t_call) : json_null());
    if (switches)
        json_object_set_new(row, "switches", json_string(switches));
    json_dumpf(row, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
    fflush(stdout);
    json_decref(row);
}

/* Rows verify passed, failed (the screen or the accuracy class) and could not run. */
typedef struct {
    size_t passed, failed, errors;
} verify_counts;

/* One verified row, counted into n: a jsonl row (verify_row), or a line of the table: ok with the
 * largest error over its tolerance and the class's figures; FAIL with how many elements were wrong,
 * or the class's figures alone where the screen passed them all; else the status (error, fault,
 * timeout). */
static void verify_print(const config_t *c, const shape_t *sh, const char *shape, double beta, json_t *reply,
                         const char *switches, bool jsonl, double t_call, verify_counts *n)
{
    const char *status = jstr(reply, "status", "error");
    const bool ok = strcmp(status, "ok") == 0, fail = strcmp(status, "FAIL") == 0;
    if (jsonl) {
        verify_row(c, sh, shape, beta, reply, switches, t_call);
        *(ok ? &n->passed : fail ? &n->failed : &n->errors) += 1;
        return;
    }
    char errs[160];
    accuracy_text(reply, errs, sizeof errs);
    if (ok) {
        printf("ok    %-22s %s %-16s beta=%-5g max err/tol %.3g  %s  [%s]\n", c->label, dtype_name(c->dtype), shape,
               beta, worker_num(reply, "max_ratio", 0), errs, switches);
        n->passed++;
    } else if (fail && worker_num(reply, "bad", 0) == 0) {
        /* every element within the screen's bound: the accuracy class failed */
        printf("FAIL  %-22s %s %-16s beta=%-5g %s\n", c->label, dtype_name(c->dtype), shape, beta, errs);
        n->failed++;
    } else if (fail) {
        printf("FAIL  %-22s %s %-16s beta=%-5g %lld of %lld wrong (%lld NaN/Inf), max err/tol %.3g  %s\n", c->label,
               dtype_name(c->dtype), shape, beta, (long long)worker_num(reply, "bad", 0),
               (long long)worker_num(reply, "checked", 0), (long long)worker_num(reply, "nonfinite", 0),
               worker_num(reply, "max_ratio", 0), errs);
        n->failed++;
    } else {
        printf("%-5s %-22s %s %-16s beta=%-5g\n", status, c->label, dtype_name(c->dtype), shape, beta);
        n->errors++;
    }
}

int run_verify(const opts_t *o)
{
    const shape_t *shapes = o->nshapes ? o->shapes : k_verify_shapes;
    size_t nshapes = o->nshapes ? o->nshapes : sizeof k_verify_shapes / sizeof k_verify_shapes[0];
    opts_t auto_o;
    pick_t pick = {0};
    int prc = pick_open(&o, &auto_o, &pick, shapes, nshapes);
    if (prc)
        return prc;
    runner_t r;
    verify_counts n = {0, 0, 0};
    /* --format jsonl: stdout holds one JSON row a config, shape and beta (verify_row); everything
     * else, the summary included, goes to stderr. */
    const bool jsonl = o->format == FORMAT_JSONL;
    FILE *info = jsonl ? stderr : stdout;
    int rc = runner_open(&r, o, false);
    for (size_t i = 0; r.cfgs && i < o->nentries; i++)
        n.errors += r.cfgs[i] == NULL;
    if (rc) {
        fprintf(info, "verify: %zu passed, %zu failed, %zu errors\n", n.passed, n.failed, n.errors);
        int worst = r.worst;
        runner_close(&r);
        pick_free(&pick);
        return worst;
    }
    r.pick = o->auto_pick ? &pick : NULL;
    if (o->auto_tune_s > 0)
        auto_tune(&r, &pick, shapes, nshapes, o->alpha, 0.0, info);
    for (size_t si = 0; r.pick && si < nshapes; si++) {
        fprintf(info, "auto  %lldx%lldx%lld: %s\n", (long long)shapes[si].m, (long long)shapes[si].n,
                (long long)shapes[si].k, pick.why[si]);
        explain(o, &pick, si, !jsonl);
    }
    build_job *jobs = build_all(&r, shapes, nshapes);
    if (o->cross_check)
        cross_check(&r, info);
    double alpha = o->alpha, betas[2] = {0.0, o->beta};
    for (int d = 0; d < DTYPE_COUNT; d++) {
        for (size_t si = 0; si < nshapes; si++) {
            for (int bi = 0; bi < 2; bi++) {
                for (size_t i = 0; i < o->nentries; i++) {
                    config_t *c = r.cfgs[i];
                    if (!c || (int)c->dtype != d || !pick_runs(r.pick, si, i))
                        continue;
                    const shape_t *sh = &shapes[si];
                    const build_job *j = &jobs[si * o->nentries + i];
                    char shape[256], ltext[192];
                    snprintf(shape, sizeof shape, "%lldx%lldx%lld%s", (long long)sh->m, (long long)sh->n,
                             (long long)sh->k, layout_text(&j->lay, sh->m, sh->n, sh->k, ltext, sizeof ltext));
                    if (j->rc) {
                        err_print(stderr, &j->err);
                        r.worst = exit_worst(r.worst, j->err.code);
                        if (jsonl)
                            verify_row(c, sh, shape, betas[bi], NULL, NULL, -1);
                        else
                            printf("error %-22s %s %-16s beta=%-5g\n", c->label, dtype_name(c->dtype), shape, betas[bi]);
                        n.errors++;
                        continue;
                    }
                    double t_call = now_ms();
                    json_t *reply = run_request(&r, i, j, alpha, betas[bi], false);
                    t_call = (now_ms() - t_call) * 1e-3;
                    if (!reply)
                        goto out;
                    verify_print(c, sh, shape, betas[bi], reply, j->k.plan.switches, jsonl, t_call, &n);
                    fflush(stdout);
                    r.worst = exit_worst(r.worst, report_failure(reply));
                    json_decref(reply);
                }
            }
        }
    }
out:
    fprintf(info, "verify: %zu passed, %zu failed, %zu errors\n", n.passed, n.failed, n.errors);
    free_jobs(&r, jobs, nshapes);
    int worst = r.worst;
    runner_close(&r);
    pick_free(&pick);
    return worst;
}
