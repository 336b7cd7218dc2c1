/* fp64_core.cu — how fast the FP64 pipe of one SM runs the SIMT DGEMM's inner loop, without global
 * memory: the probes behind docs/NOTES.md "Rounds 6 and 7: counters, then the register file".
 *
 *   dfma_only   independent DFMA chains (a and b the same for every lane: they sit in uniform
 *               registers, so each DFMA reads only its accumulator from the register file);
 *   outer       the 8x8-per-thread outer product with its fragments read from shared memory (the
 *               paired lane layout of warptile.cu, LANES 1), walked in ORDER: 0 rows in order,
 *               1 snake (every other row backwards), 2 in 2x2 blocks.
 *
 * Rate = lane-DFMAs per SM clock, from clock64() spans per SM (%smid), against the 64 the H100 can
 * issue. Built with nvcc by `make probes` and run by bench/probes/run.sh: a probe, not part of the
 * engine. */
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CUDA_CHECK(x) cuda_check((x), #x, __FILE__, __LINE__)
static void cuda_check(cudaError_t e, const char *call, const char *file, int line)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, call, cudaGetErrorString(e));
        exit(3);
    }
}

constexpr int THREADS = 128;            /* one warp per scheduler per block */
constexpr int BK = 16;                  /* k steps between checks of the loop counter */
constexpr int A_LD = 66, B_LD = 128;    /* stored rows of the A (k-major) and B tiles, in doubles */

/* Per block: the SM it ran on and its clock64() span. */
struct Span {
    long long t0, t1, sm;
};

__device__ __forceinline__ void start(Span *spans)
{
    __syncthreads();
    if (threadIdx.x == 0)
        spans[blockIdx.x].t0 = clock64();
}

__device__ __forceinline__ void record(Span *spans)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        spans[blockIdx.x].t1 = clock64();
        spans[blockIdx.x].sm = sm;
    }
}

template <int NACC> __global__ void __launch_bounds__(THREADS) dfma_only(double *out, Span *spans, double a, double b, int iters)
{
    double acc[NACC];
#pragma unroll
    for (int i = 0; i < NACC; ++i)
        acc[i] = threadIdx.x + i;
    start(spans);
#pragma unroll 1
    for (int it = 0; it < iters; ++it)
#pragma unroll
        for (int k = 0; k < BK; ++k) /* BK x NACC DFMAs per pass, as many as the outer product's */
#pragma unroll
            for (int i = 0; i < NACC; ++i)
                acc[i] = fma(acc[i], a, b);
    record(spans);
    double s = 0;
#pragma unroll
    for (int i = 0; i < NACC; ++i)
        s += acc[i];
    out[blockIdx.x * THREADS + threadIdx.x] = s;
}

template <int ORDER> __global__ void __launch_bounds__(THREADS, 1) outer(double *out, Span *spans, int iters)
{
    __shared__ __align__(16) double As[BK * A_LD], Bs[BK * B_LD];
    for (int i = threadIdx.x; i < BK * A_LD; i += THREADS)
        As[i] = 1.0 + i * 1e-6;
    for (int i = threadIdx.x; i < BK * B_LD; i += THREADS)
        Bs[i] = 1.0 - i * 1e-6;
    /* The paired lanes of warptile.cu with 4 lanes across and 8 down each 32x16 warp step. */
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, hi = lane >> 2;
    const int ln = (lane & 1) | (hi % 2) << 1, lm = (lane >> 1 & 1) | (hi / 2) << 1;
    const int m0 = lm * 4, n0 = warp * 32 + ln * 4;
    double acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] = 0;
    start(spans);
#pragma unroll 1
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            double a[8], b[8];
            const double2 *pa = reinterpret_cast<const double2 *>(&As[k * A_LD + m0]);
            const double2 *pb = reinterpret_cast<const double2 *>(&Bs[k * B_LD + n0]);
            /* Two 4-row (4-column) pieces per thread, one warp step apart. */
            const double2 v[8] = {pa[0], pa[1], pa[16], pa[17], pb[0], pb[1], pb[8], pb[9]};
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                a[2 * q] = v[q].x, a[2 * q + 1] = v[q].y;
                b[2 * q] = v[4 + q].x, b[2 * q + 1] = v[4 + q].y;
            }
#pragma unroll
            for (int n = 0; n < 64; ++n) {
                int i = n / 8, j = n % 8;
                if (ORDER == 1 && (i & 1))
                    j = 7 - j;
                if (ORDER == 2) /* 2x2 block n / 4, then (0,0) (0,1) (1,1) (1,0) inside it */
                    i = n / 16 * 2 + (n % 4) / 2, j = n / 4 % 4 * 2 + ((n % 4) == 1 || (n % 4) == 2);
                acc[i][j] = fma(a[i], b[j], acc[i][j]);
            }
        }
        asm volatile("" ::: "memory"); /* reload the fragments every pass, as the real loop does */
    }
    record(spans);
    double s = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            s += acc[i][j];
    out[blockIdx.x * THREADS + threadIdx.x] = s;
}

/* Launch blocks_per_sm blocks on every SM and print the lane-DFMA rate per SM clock: for each SM,
 * the DFMAs of its blocks over the span from its first start to its last end, averaged over SMs. */
template <typename Launch>
static void probe(const char *what, Launch launch, int blocks_per_sm, double dfma_per_block, int sms)
{
    const int grid = sms * blocks_per_sm;
    double *out;
    Span *d_spans;
    CUDA_CHECK(cudaMalloc(&out, sizeof(double) * grid * THREADS));
    CUDA_CHECK(cudaMalloc(&d_spans, sizeof(Span) * grid));
    for (int pass = 0; pass < 2; ++pass) { /* the first pass warms up the clocks */
        launch(grid, out, d_spans);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    Span *spans = static_cast<Span *>(malloc(sizeof(Span) * grid));
    CUDA_CHECK(cudaMemcpy(spans, d_spans, sizeof(Span) * grid, cudaMemcpyDeviceToHost));
    double rate = 0;
    int counted = 0;
    for (int sm = 0; sm < sms; ++sm) {
        long long lo = 0, hi = 0;
        int blocks = 0;
        for (int b = 0; b < grid; ++b) {
            if (spans[b].sm != sm)
                continue;
            lo = blocks == 0 || spans[b].t0 < lo ? spans[b].t0 : lo;
            hi = blocks == 0 || spans[b].t1 > hi ? spans[b].t1 : hi;
            ++blocks;
        }
        if (blocks > 0 && hi > lo) {
            rate += blocks * dfma_per_block / double(hi - lo);
            ++counted;
        }
    }
    rate /= counted > 0 ? counted : 1;
    printf("| %-44s | %d | %5.1f | %5.1f%% |\n", what, blocks_per_sm, rate, 100.0 * rate / 64);
    free(spans);
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaFree(d_spans));
}

int main()
{
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    printf("%s, sm_%d%d, %d SMs; rates in lane-DFMAs per SM clock (64 is the FP64 peak)\n\n", prop.name, prop.major,
           prop.minor, sms);
    printf("| probe | warps per scheduler | lane-DFMA/clk/SM | of peak |\n|---|---:|---:|---:|\n");
    const int iters = 256;
    const double per_block = double(THREADS) * 64 * iters * BK;
    for (int w = 1; w <= 3; ++w)
        probe("DFMA only, 64 independent chains",
              [&](int grid, double *out, Span *sp) { dfma_only<64><<<grid, THREADS>>>(out, sp, 1.0000001, 1e-9, iters); },
              w, per_block, sms);
    for (int w = 1; w <= 2; ++w) {
        probe("8x8 outer product from smem, rows in order",
              [&](int grid, double *out, Span *sp) { outer<0><<<grid, THREADS>>>(out, sp, iters); }, w, per_block, sms);
        probe("8x8 outer product from smem, snake order",
              [&](int grid, double *out, Span *sp) { outer<1><<<grid, THREADS>>>(out, sp, iters); }, w, per_block, sms);
        probe("8x8 outer product from smem, 2x2 blocks",
              [&](int grid, double *out, Span *sp) { outer<2><<<grid, THREADS>>>(out, sp, iters); }, w, per_block, sms);
    }
    return 0;
}
