/* wrong_beta.cu — a deliberately wrong kernel: it always computes alpha*acc + beta*C, reading C
 * even when beta = 0, so the NaN poison leaks into the result. Test fixture only.
 *
 * engine:template
{
  "summary": "test fixture: reads C when beta is 0",
  "dtypes": ["f32", "f64"],
  "params": {"BX": {"default": 16}, "BY": {"default": 16}},
  "launches": [{"kernel": "gemm", "grid": ["cdiv(N, BX)", "cdiv(M, BY)", 1], "block": ["BX", "BY", 1]}]
}
*/
#include "gemm_common.cuh"

extern "C" __global__ void gemm(GEMM_ARGS)
{
    const int col = blockIdx.x * BX + threadIdx.x, row = blockIdx.y * BY + threadIdx.y;
    if (row >= M || col >= N)
        return;
    T acc = T(0);
    for (int k = 0; k < K; ++k)
        acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = alpha * acc + beta * C[row * N + col];
}
