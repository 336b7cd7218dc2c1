/* needs_k4.cu — a correct naive kernel that declares a shape requirement (K % 4 == 0), so the
 * engine's refusal of other shapes can be tested. Test fixture only.
 *
 * engine:template
{
  "summary": "test fixture: refuses K not a multiple of 4",
  "dtypes": ["f32", "f64"],
  "params": {"BX": {"default": 16}, "BY": {"default": 16}},
  "requires": [{"rule": "K % 4 == 0", "why": "the fixture pretends to read A as float4"}],
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
    store_c<1>(&C[row * N + col], &acc, alpha, beta);
}
