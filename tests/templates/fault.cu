/* fault.cu — a kernel that writes far outside C: the engine must report the fault as a CUDA
 * failure (exit 3) instead of a wrong result. Test fixture only.
 *
 * engine:template
{
  "summary": "test fixture: out-of-bounds store",
  "dtypes": ["f32", "f64"],
  "params": {"BX": {"default": 16}},
  "launches": [{"kernel": "gemm", "grid": [1, 1, 1], "block": ["BX", 1, 1]}]
}
*/
#include "gemm_common.cuh"

extern "C" __global__ void gemm(GEMM_ARGS)
{
    C[(long long)M * N + (1LL << 40) + threadIdx.x] = alpha;
}
