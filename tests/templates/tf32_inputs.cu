/* tf32_inputs.cu — a kernel that silently rounds its inputs to TF32 (10 bits of mantissa, round to
 * nearest as cvt.rna.tf32.f32 does) and accumulates in FP32: what a TF32 tensor-core kernel computes.
 * Test fixture only: the per-element screen passes it at large K, accuracy class f32 must not, and
 * class tf32 (tf32_inputs_tf32.json) must. f32 only.
 *
 * engine:template
{
  "summary": "test fixture: inputs rounded to TF32, FP32 sums",
  "dtypes": ["f32"],
  "params": {"BX": {"default": 16}, "BY": {"default": 16}},
  "launches": [{"kernel": "gemm", "grid": ["cdiv(N, BX)", "cdiv(M, BY)", 1], "block": ["BX", "BY", 1]}]
}
*/
#include "gemm_common.cuh"

__device__ __forceinline__ float tf32(float x)
{
    unsigned int b = __float_as_uint(x);
    return __uint_as_float((b + 0x1000u) & 0xFFFFE000u);
}

extern "C" __global__ void gemm(GEMM_ARGS)
{
    const int col = blockIdx.x * BX + threadIdx.x, row = blockIdx.y * BY + threadIdx.y;
    if (row >= M || col >= N)
        return;
    T acc = T(0);
    for (int k = 0; k < K; ++k)
        acc = fmaf(tf32(A[(long long)row * K + k]), tf32(B[(long long)k * N + col]), acc);
    store_c<1>(&C[row * N + col], &acc, alpha, beta);
}
