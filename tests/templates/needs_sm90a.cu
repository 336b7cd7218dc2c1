/* needs_sm90a.cu — a correct naive GEMM that also issues wgmma.fence, an instruction only the
 * architecture-specific target sm_90a has: the template requires that target, so any other is
 * refused before NVRTC runs, and with --arch sm_90a NVRTC builds it; it declares "arch_specific", so
 * without --arch on sm_90 it is built for sm_90a. Test fixture only.
 *
 * engine:template
{
  "summary": "test fixture: needs an sm_90a-only instruction",
  "dtypes": ["f32", "f64"],
  "arch_specific": true,
  "params": {"BX": {"default": 16}, "BY": {"default": 16}},
  "constraints": [{"rule": "ARCH_SPECIFIC == 1 && ARCH == 90", "why": "wgmma.fence exists only on sm_90a"}],
  "launches": [{"kernel": "gemm", "grid": ["cdiv(N, BX)", "cdiv(M, BY)", 1], "block": ["BX", "BY", 1]}]
}
*/
#include "gemm_common.cuh"

extern "C" __global__ void gemm(GEMM_ARGS)
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
    const int col = blockIdx.x * BX + threadIdx.x, row = blockIdx.y * BY + threadIdx.y;
    if (row >= M || col >= N)
        return;
    T acc = T(0);
    for (int k = 0; k < K; ++k)
        acc += A[row * K + k] * B[k * N + col];
    store_c<1>(&C[row * N + col], &acc, alpha, beta);
}
