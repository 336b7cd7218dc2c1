/* syntax_error.cu — a template that NVRTC cannot compile: the engine must print the log and the
 * numbered source, report one line, exit 2. Test fixture only.
 *
 * engine:template
{
  "summary": "test fixture: does not compile",
  "dtypes": ["f32"],
  "params": {"BX": {"default": 16}},
  "launches": [{"kernel": "gemm", "grid": [1, 1, 1], "block": ["BX", 1, 1]}]
}
*/
#include "gemm_common.cuh"

extern "C" __global__ void gemm(GEMM_ARGS)
{
    C[threadIdx.x] = alpha * not_declared_anywhere;
}
