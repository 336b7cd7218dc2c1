/* toy.cu — a small, quick-to-compile GEMM for testing the tuner: one thread per element of C,
 * BX x BY threads per block, the k loop unrolled UNROLL times. MODE turns a point into a misbehaving
 * kernel, so that a tune over a space holding it must record the failure and go on:
 *   0 correct; 1 writes far outside C (a fault that kills the context); 2 never returns (a hang).
 * Test fixture only (tests/configs/tune/toy.json, tests/gpu.sh, tests/tune.sh).
 *
 * engine:template
{
  "summary": "test fixture: naive GEMM with a tunable block, and optional fault and hang",
  "dtypes": ["f32", "f64"],
  "params": {
    "BX": {"default": 16, "min": 1, "max": 1024, "doc": "threads per block along N"},
    "BY": {"default": 16, "min": 1, "max": 1024, "doc": "threads per block along M"},
    "UNROLL": {"default": 1, "values": [1, 2, 4, 8], "doc": "unroll factor of the k loop"},
    "MODE": {"default": 0, "values": [0, 1, 2], "doc": "0 correct, 1 faults, 2 hangs"}
  },
  "constraints": [
    {"rule": "BX * BY <= 1024", "why": "a block has at most 1024 threads"},
    {"rule": "BX * BY % 32 == 0", "why": "whole warps only"}
  ],
  "launches": [{"kernel": "gemm", "grid": ["cdiv(N, BX)", "cdiv(M, BY)", 1], "block": ["BX", "BY", 1]}]
}
*/
#include "gemm_common.cuh"

extern "C" __global__ void gemm(GEMM_ARGS)
{
    const int col = blockIdx.x * BX + threadIdx.x, row = blockIdx.y * BY + threadIdx.y;
#if MODE == 1
    C[(long long)M * N + (1LL << 40) + threadIdx.x] = alpha;
#elif MODE == 2
    /* clock64() reads a register the compiler cannot see through: the loop cannot be dropped. */
    while (clock64() >= 0)
        ;
#endif
    if (row >= M || col >= N)
        return;
    T acc = T(0);
#pragma unroll UNROLL
    for (int k = 0; k < K; ++k)
        acc += A[row * K + k] * B[k * N + col];
    store_c<1>(&C[row * N + col], &acc, alpha, beta);
}
