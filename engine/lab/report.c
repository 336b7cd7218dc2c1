/* report.c — see report.h. */
#include "report.h"

#include <stdarg.h>
#include <string.h>

int report_format_parse(const char *s)
{
    if (strcmp(s, "table") == 0)
        return FORMAT_TABLE;
    if (strcmp(s, "csv") == 0)
        return FORMAT_CSV;
    if (strcmp(s, "jsonl") == 0)
        return FORMAT_JSONL;
    if (strcmp(s, "md") == 0)
        return FORMAT_MD;
    return -1;
}

void report_init(report_t *r, report_format fmt, FILE *out)
{
    memset(r, 0, sizeof *r);
    r->fmt = fmt;
    r->out = out;
}

void report_note(report_t *r, const char *fmt, ...)
{
    if (r->fmt != FORMAT_TABLE)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(r->out, fmt, ap);
    va_end(ap);
    fputc('\n', r->out);
}

static void json_str(FILE *f, const char *key, const char *v, bool comma)
{
    fprintf(f, "\"%s\":\"", key);
    for (const char *p = v ? v : ""; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if ((unsigned char)*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fprintf(f, "\"%s", comma ? "," : "");
}

static void csv_str(FILE *f, const char *v, bool comma)
{
    fputc('"', f);
    for (const char *p = v ? v : ""; *p; p++) {
        if (*p == '"')
            fputc('"', f);
        fputc(*p, f);
    }
    fprintf(f, "\"%s", comma ? "," : "");
}

static const char *k_csv_header =
    "config,template,dtype,M,N,K,alpha,beta,status,ms,ms_min,ms_max,tflops,pct_cublas,pct_peak,regs,"
    "spill_bytes,smem_bytes,threads,occ_blocks,occ_pct,clock_mhz,power_w,floor_ms,bound,max_err_ratio,class,err_max_u,"
    "err_mean_u,cublas_err_max_u,cublas_err_mean_u,cubin,switches,params,args,op,lda,ldb,ldc,batch";

/* The row's layout: its own, or packed NN with one product. */
static layout_t row_layout(const report_row *w)
{
    layout_t l;
    if (w->lay)
        return *w->lay;
    layout_packed(&l, 0, 0, w->M, w->N, w->K, 1);
    return l;
}

/* An error in u, or nothing (CSV) / null (JSON) when not measured. */
static void err_num(FILE *f, const char *key, double v)
{
    if (key)
        fprintf(f, "\"%s\":", key);
    if (v >= 0)
        fprintf(f, "%.4g", v);
    else if (key)
        fputs("null", f);
    fputc(',', f);
}

/* The table: a header before the first row, then columns of fixed width; "-" where unknown. */
static void row_table(report_t *r, const report_row *w)
{
    FILE *f = r->out;
    bool timed = w->ms > 0.0;
    if (!r->header_done) {
        fprintf(f, "%-18s %-6s %9s %7s %8s %7s %6s %5s %5s %7s %10s %14s %6s %5s %s\n", "config", "status", "ms",
                "spread", "TFLOP/s", "%cuBLAS", "%peak", "regs", "spill", "smem", "occupancy", "floor ms",
                "MHz", "W", "cubin");
        r->header_done = true;
    }
    char regs[16] = "-", spill[16] = "-", smem[16] = "-", occ[24] = "-", floor_s[32] = "-", ms[16] = "-",
         spread[16] = "-", tf[16] = "-", pr[16] = "-", pp[16] = "-", mhz[16] = "-", watts[16] = "-";
    if (w->regs >= 0) {
        snprintf(regs, sizeof regs, "%d", w->regs);
        snprintf(spill, sizeof spill, "%d", w->spill_bytes);
        snprintf(smem, sizeof smem, "%d", w->smem_bytes);
        snprintf(occ, sizeof occ, "%dx%d %3.0f%%", w->occ_blocks, w->threads, w->occ_pct);
    }
    if (timed) {
        snprintf(ms, sizeof ms, "%.4f", w->ms);
        snprintf(spread, sizeof spread, "%.1f%%", w->ms > 0 ? 100.0 * (w->ms_max - w->ms_min) / w->ms : 0);
        snprintf(tf, sizeof tf, "%.2f", w->tflops);
        snprintf(pr, sizeof pr, "%.1f", w->pct_ref);
        snprintf(pp, sizeof pp, "%.1f", w->pct_peak);
        if (w->clock_mhz > 0)
            snprintf(mhz, sizeof mhz, "%.0f", w->clock_mhz);
        if (w->power_w > 0)
            snprintf(watts, sizeof watts, "%.0f", w->power_w);
    }
    if (w->floor_ms > 0)
        snprintf(floor_s, sizeof floor_s, "%.4f %s", w->floor_ms, w->bound ? w->bound : "");
    fprintf(f, "%-18s %-6s %9s %7s %8s %7s %6s %5s %5s %7s %10s %14s %6s %5s %s\n", w->config, w->status,
            ms, spread, tf, pr, pp, regs, spill, smem, occ, floor_s, mhz, watts,
            w->cubin && *w->cubin ? w->cubin : "-");
}

/* CSV: k_csv_header before the first row; every field, empty or -1 where unknown. */
static void row_csv(report_t *r, const report_row *w)
{
    FILE *f = r->out;
    if (!r->header_done) {
        fprintf(f, "%s\n", k_csv_header);
        r->header_done = true;
    }
    csv_str(f, w->config, true);
    csv_str(f, w->tmpl, true);
    csv_str(f, w->dtype, true);
    fprintf(f, "%lld,%lld,%lld,%g,%g,", (long long)w->M, (long long)w->N, (long long)w->K, w->alpha, w->beta);
    csv_str(f, w->status, true);
    fprintf(f, "%.6f,%.6f,%.6f,%.4f,%.2f,%.2f,%d,%d,%d,%d,%d,%.1f,%.0f,", w->ms, w->ms_min, w->ms_max,
            w->tflops, w->pct_ref, w->pct_peak, w->regs, w->spill_bytes, w->smem_bytes, w->threads,
            w->occ_blocks, w->occ_pct, w->clock_mhz);
    if (w->power_w > 0) /* empty when unknown */
        fprintf(f, "%.1f", w->power_w);
    fprintf(f, ",%.6f,", w->floor_ms);
    csv_str(f, w->bound, true);
    fprintf(f, "%.4g,", w->max_ratio);
    csv_str(f, w->acc_class, true);
    err_num(f, NULL, w->acc_class ? w->err_max_u : -1);
    err_num(f, NULL, w->acc_class ? w->err_mean_u : -1);
    err_num(f, NULL, w->acc_class ? w->ref_err_max_u : -1);
    err_num(f, NULL, w->acc_class ? w->ref_err_mean_u : -1);
    csv_str(f, w->cubin, true);
    csv_str(f, w->switches, true);
    csv_str(f, w->params, true);
    csv_str(f, w->args, true);
    {
        layout_t l = row_layout(w);
        fprintf(f, "%s,%lld,%lld,%lld,%lld\n", layout_op_name(&l), (long long)l.lda, (long long)l.ldb,
                (long long)l.ldc, (long long)l.batch);
    }
}

/* One JSON object a line; the accuracy figures only where the row has a class. */
static void row_jsonl(report_t *r, const report_row *w)
{
    FILE *f = r->out;
    fputc('{', f);
    json_str(f, "config", w->config, true);
    json_str(f, "template", w->tmpl, true);
    json_str(f, "dtype", w->dtype, true);
    fprintf(f, "\"M\":%lld,\"N\":%lld,\"K\":%lld,\"alpha\":%.17g,\"beta\":%.17g,", (long long)w->M,
            (long long)w->N, (long long)w->K, w->alpha, w->beta);
    {
        layout_t l = row_layout(w);
        fprintf(f, "\"op\":\"%s\",\"lda\":%lld,\"ldb\":%lld,\"ldc\":%lld,\"batch\":%lld,", layout_op_name(&l),
                (long long)l.lda, (long long)l.ldb, (long long)l.ldc, (long long)l.batch);
    }
    json_str(f, "status", w->status, true);
    fprintf(f,
            "\"ms\":%.6f,\"ms_min\":%.6f,\"ms_max\":%.6f,\"tflops\":%.4f,\"pct_cublas\":%.2f,\"pct_peak\":%.2f,"
            "\"regs\":%d,\"spill_bytes\":%d,\"smem_bytes\":%d,\"threads\":%d,\"occ_blocks\":%d,"
            "\"occ_pct\":%.1f,\"clock_mhz\":%.0f,",
            w->ms, w->ms_min, w->ms_max, w->tflops, w->pct_ref, w->pct_peak, w->regs, w->spill_bytes,
            w->smem_bytes, w->threads, w->occ_blocks, w->occ_pct, w->clock_mhz);
    if (w->power_w > 0)
        fprintf(f, "\"power_w\":%.1f,", w->power_w);
    else
        fputs("\"power_w\":null,", f);
    fprintf(f, "\"floor_ms\":%.6f,", w->floor_ms);
    json_str(f, "bound", w->bound, true);
    fprintf(f, "\"max_err_ratio\":%.4g,", w->max_ratio);
    if (w->acc_class) {
        json_str(f, "class", w->acc_class, true);
        err_num(f, "err_max_u", w->err_max_u);
        err_num(f, "err_mean_u", w->err_mean_u);
        err_num(f, "cublas_err_max_u", w->ref_err_max_u);
        err_num(f, "cublas_err_mean_u", w->ref_err_mean_u);
    }
    json_str(f, "cubin", w->cubin, true);
    if (w->pdl >= 0)
        fprintf(f, "\"pdl\":%s,", w->pdl ? "true" : "false");
    json_str(f, "switches", w->switches, true);
    json_str(f, "params", w->params, true);
    if (w->chosen)
        json_str(f, "chosen", w->chosen, true);
    json_str(f, "args", w->args, false);
    fputs("}\n", f);
}

/* Markdown for the walk: steps numbered, each one's gain over the step before (cuBLAS unnumbered). */
static void row_md(report_t *r, const report_row *w)
{
    FILE *f = r->out;
    bool timed = w->ms > 0.0;
    if (!r->header_done) {
        fprintf(f, "| step | config | ms | TFLOP/s | %% cuBLAS | %% peak | step gain | floor ms (bound) | regs | smem | "
                   "occupancy |\n");
        fprintf(f, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        r->header_done = true;
    }
    bool is_ref = strcmp(w->tmpl, "cublas") == 0;
    char step[16] = "", gain[16] = "–";
    if (!is_ref) {
        snprintf(step, sizeof step, "%d", r->step++);
        if (timed && r->prev_ms > 0)
            snprintf(gain, sizeof gain, "%.2fx", r->prev_ms / w->ms);
        if (timed)
            r->prev_ms = w->ms;
    }
    char floor_s[32] = "";
    if (w->floor_ms > 0)
        snprintf(floor_s, sizeof floor_s, "%.3f (%s)", w->floor_ms, w->bound ? w->bound : "");
    if (!timed) {
        fprintf(f, "| %s | %s | %s | | | | | | | | |\n", step, w->config, w->status);
    } else if (w->regs >= 0) {
        fprintf(f, "| %s | %s | %.3f | %.2f | %.1f | %.1f | %s | %s | %d | %d | %d×%d (%.0f%%) |\n", step,
                w->config, w->ms, w->tflops, w->pct_ref, w->pct_peak, gain, floor_s, w->regs,
                w->smem_bytes, w->occ_blocks, w->threads, w->occ_pct);
    } else {
        fprintf(f, "| %s | %s | %.3f | %.2f | %.1f | %.1f | %s | %s | | | |\n", step, w->config, w->ms,
                w->tflops, w->pct_ref, w->pct_peak, gain, floor_s);
    }
}

void report_row_print(report_t *r, const report_row *w)
{
    switch (r->fmt) {
    case FORMAT_TABLE: row_table(r, w); break;
    case FORMAT_CSV: row_csv(r, w); break;
    case FORMAT_JSONL: row_jsonl(r, w); break;
    case FORMAT_MD: row_md(r, w); break;
    }
    fflush(r->out);
}
