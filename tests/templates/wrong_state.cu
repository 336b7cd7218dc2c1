/* wrong_state.cu — a deliberately wrong kernel: right on a module's first launch, wrong on every
 * later one. It counts its launches in a module variable (the last block to finish raises it, so
 * no block of the same launch sees the new count) and adds the count to C. Verification checks the
 * second of two launches from the same C, so it must be caught. Test fixture only.
 *
 * engine:template
{
  "summary": "test fixture: keeps state between launches",
  "dtypes": ["f32", "f64"],
  "params": {"BX": {"default": 16}, "BY": {"default": 16}},
  "launches": [{"kernel": "gemm", "grid": ["cdiv(N, BX)", "cdiv(M, BY)", 1], "block": ["BX", "BY", 1]}]
}
*/
#include "gemm_common.cuh"

__device__ unsigned int launches, finished;

extern "C" __global__ void gemm(GEMM_ARGS)
{
    const int col = blockIdx.x * BX + threadIdx.x, row = blockIdx.y * BY + threadIdx.y;
    const unsigned int before = *(volatile unsigned int *)&launches;
    if (row < M && col < N) {
        T acc = T(0);
        for (int k = 0; k < K; ++k)
            acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = alpha * acc + (beta == T(0) ? T(0) : beta * C[row * N + col]) + T(before);
    }
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0 && atomicAdd(&finished, 1u) == gridDim.x * gridDim.y - 1) {
        finished = 0;
        atomicAdd(&launches, 1u);
    }
}
