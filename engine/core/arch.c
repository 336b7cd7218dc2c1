/* arch.c — per-architecture throughput and limits. Figures are from NVIDIA's CUDA C Programming
 * Guide (arithmetic instruction throughput; compute capability tables); the TF32 tensor-core
 * rates from the architecture whitepapers' dense TF32 peaks divided by SMs x boost clock x 2
 * (A100 156 TFLOP/s, H100 SXM 495, GA102/AD102 one quarter of A100's per SM). */
#include "arch.h"

#include <nvrtc.h>
#include <stdio.h>
#include <string.h>

static const arch_info k_arch[] = {
    /* sm  fp32 fp64 dmma tf32  smem-opt-in  threads/SM  blocks/SM  smem/SM  reserved/block */
    {70, 64, 32, 0, 0, 98304, 2048, 32, 98304, 0},
    {75, 64, 2, 0, 0, 65536, 1024, 16, 65536, 0},
    {80, 64, 32, 64, 512, 166912, 2048, 32, 167936, 1024},
    {86, 128, 2, 2, 128, 101376, 1536, 16, 102400, 1024},
    {87, 128, 2, 2, 128, 166912, 1536, 16, 167936, 1024},
    {89, 128, 2, 2, 128, 101376, 1536, 24, 102400, 1024},
    {90, 128, 64, 128, 1024, 232448, 2048, 32, 233472, 1024},
    {100, 128, 64, 128, 0, 232448, 2048, 32, 233472, 1024},
    {103, 128, 64, 128, 0, 232448, 2048, 32, 233472, 1024},
    {110, 128, 64, 128, 0, 232448, 2048, 32, 233472, 1024},
    {120, 128, 2, 2, 128, 101376, 1536, 32, 102400, 1024},
    {121, 128, 2, 2, 128, 101376, 1536, 32, 102400, 1024},
};

const char *arch_name(int target, char *buf, size_t len)
{
    snprintf(buf, len, "sm_%d%s", arch_sm(target), arch_specific(target) ? "a" : "");
    return buf;
}

const arch_info *arch_lookup(int sm)
{
    sm = arch_sm(sm);
    /* Table is sorted: keep the last entry not above sm, preferring the same major version. */
    const size_t n = sizeof k_arch / sizeof k_arch[0];
    const arch_info *same = NULL, *lower = NULL;
    for (size_t i = 0; i < n; i++) {
        if (k_arch[i].sm > sm)
            continue;
        lower = &k_arch[i];
        if (k_arch[i].sm / 10 == sm / 10)
            same = &k_arch[i];
    }
    return same ? same : lower ? lower : &k_arch[0];
}

int arch_nvrtc_supports(int sm)
{
    int n = 0;
    if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0 || n > 128)
        return 0;
    int archs[128];
    if (nvrtcGetSupportedArchs(archs) != NVRTC_SUCCESS)
        return 0;
    for (int i = 0; i < n; i++)
        if (archs[i] == sm)
            return 1;
    return 0;
}

void arch_nvrtc_list(char *buf, size_t len)
{
    buf[0] = '\0';
    int n = 0;
    if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0 || n > 128)
        return;
    int archs[128];
    if (nvrtcGetSupportedArchs(archs) != NVRTC_SUCCESS)
        return;
    size_t used = 0;
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%ssm_%d", i ? ", " : "", archs[i]);
}

int arch_parse(const char *text, int *sm, err_t *err)
{
    const char *digits = text;
    if (strncmp(text, "sm_", 3) == 0)
        digits = text + 3;
    int v = 0, nd = 0;
    bool specific = false;
    for (const char *p = digits; *p; p++, nd++) {
        if (*p == 'a' && p[1] == '\0' && nd >= 2) {
            specific = true;
            break;
        }
        if (*p < '0' || *p > '9' || nd > 3) {
            nd = -1;
            break;
        }
        v = v * 10 + (*p - '0');
    }
    if (nd < 2)
        return err_set(err, ERR_INPUT, "--arch", 0, 0,
                       "\"%s\" is not an architecture: expected sm_XX or sm_XXa, e.g. sm_86, sm_90 or sm_90a", text);
    if (!arch_nvrtc_supports(v)) {
        char list[512];
        arch_nvrtc_list(list, sizeof list);
        int major = 0, minor = 0;
        nvrtcVersion(&major, &minor);
        return err_set(err, ERR_INPUT, "--arch", 0, 0,
                       "sm_%d is not supported by NVRTC %d.%d (it targets %s)", v, major, minor, list);
    }
    if (specific && v < 90)
        return err_set(err, ERR_INPUT, "--arch", 0, 0,
                       "%s: architecture-specific targets (the \"a\" suffix) begin with sm_90a", text);
    *sm = v + (specific ? ARCH_SPECIFIC : 0);
    return 0;
}

int arch_occupancy(const arch_info *ai, int threads, int regs, int smem)
{
    if (threads < 1 || regs < 0 || smem < 0)
        return 0;
    int warps = (threads + 31) / 32;
    /* Registers are given out per warp in units of 256; the SM has 64K. */
    int per_warp = (regs * 32 + 255) / 256 * 256;
    int by_regs = per_warp > 0 ? 65536 / per_warp / warps : ai->max_blocks_sm;
    int by_threads = ai->max_threads_sm / (warps * 32);
    int by_smem = smem > 0 ? ai->smem_sm / (smem + ai->smem_reserved) : ai->max_blocks_sm;
    int b = ai->max_blocks_sm;
    if (by_regs < b)
        b = by_regs;
    if (by_threads < b)
        b = by_threads;
    if (by_smem < b)
        b = by_smem;
    return b;
}

double arch_peak_flops(int lanes, int sms, double clock_hz) { return 2.0 * lanes * sms * clock_hz; }
