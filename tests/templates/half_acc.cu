/* half_acc.cu — a kernel that accumulates in the half type: every partial sum rounded to bf16 or
 * f16, as a kernel with a half-precision accumulator (mma ... .f16.f16.f16.f16, or FP32 sums stored
 * back each k-step) computes. Test fixture only: accuracy classes bf16 and f16 must reject it
 * (tests/gpu/half.sh). Packed NN, one thread per element.
 *
 * engine:template
{
  "summary": "test fixture: partial sums rounded to the half type",
  "dtypes": ["bf16", "f16"],
  "params": {"BX": {"default": 16}, "BY": {"default": 16}},
  "constraints": [{"rule": "ARCH >= 80", "why": "cvt to bf16x2 needs sm_80"}],
  "requires": [{"rule": "TA == 0 && TB == 0 && LD_PACKED && BATCH == 1", "why": "a fixture: packed NN, one product"}],
  "launches": [{"kernel": "gemm", "grid": ["cdiv(N, BX)", "cdiv(M, BY)", 1], "block": ["BX", "BY", 1]}]
}
*/
#include "gemm_common.cuh"

extern "C" __global__ void gemm(GEMM_ARGS)
{
    const int col = blockIdx.x * BX + threadIdx.x, row = blockIdx.y * BY + threadIdx.y;
    if (row >= M || col >= N)
        return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc = half_to_float(float_to_half(fmaf(half_to_float(A[(long long)row * K + k]),
                                               half_to_float(B[(long long)k * N + col]), acc)));
    float v = alpha * acc;
    if (beta != 0.0f)
        v += beta * half_to_float(C[(long long)row * N + col]);
    C[(long long)row * N + col] = float_to_half(v);
}
