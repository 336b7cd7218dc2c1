/* wrong_edge.cu — a deliberately wrong kernel: it never writes the last row of C, the classic
 * missing edge guard. With beta = 0 the NaN poison must show it. Test fixture only.
 *
 * engine:template
{
  "summary": "test fixture: leaves the last row of C unwritten",
  "dtypes": ["f32", "f64"],
  "params": {"BX": {"default": 16}, "BY": {"default": 16}},
  "launches": [{"kernel": "gemm", "grid": ["cdiv(N, BX)", "cdiv(M, BY)", 1], "block": ["BX", "BY", 1]}]
}
*/
#include "gemm_common.cuh"

extern "C" __global__ void gemm(GEMM_ARGS)
{
    const int col = blockIdx.x * BX + threadIdx.x, row = blockIdx.y * BY + threadIdx.y;
    if (row >= M - 1 || col >= N)
        return;
    T acc = T(0);
    for (int k = 0; k < K; ++k)
        acc += A[row * K + k] * B[k * N + col];
    store_c<1>(&C[row * N + col], &acc, alpha, beta);
}
