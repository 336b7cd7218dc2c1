/* wrong_k.cu — a deliberately wrong kernel that verification must catch: it drops the product
 * term k = K/2 from every dot product (at K = 1 that is the only term). Test fixture only.
 *
 * engine:template
{
  "summary": "test fixture: drops one term of every dot product",
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
        if (k != K / 2)
            acc += A[row * K + k] * B[k * N + col];
    store_c<1>(&C[row * N + col], &acc, alpha, beta);
}
