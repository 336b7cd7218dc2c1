/* naive.cu — one thread per element of C, reading A and B straight from global memory: the first
 * rung of every GEMM ladder (the walk's `naive`, siboehm's kernels 1 and 2, NVIDIA's naive DGEMM).
 *
 * The block is BX x BY threads. MAP chooses which way threadIdx.x runs: MAP = 0 walks down a
 * column of C, so the 32 lanes of a warp read 32 different rows of A and store 32 elements N
 * apart (siboehm's kernel 1, uncoalesced on purpose); MAP = 1 walks along a row, so a warp reads
 * 32 consecutive elements of B and stores 32 consecutive elements of C (kernel 2). Any shape, any
 * layout (engine/core/layout.h): transposes, leading dimensions, batches on grid z. At packed NN with one
 * product the switches make it the code it always was. Example: configs/naive.json.
 *
 * engine:template
{
  "summary": "one thread per output element, no shared memory",
  "dtypes": ["f32", "f64"],
  "pdl": true,
  "peak": "fma",
  "params": {
    "BX": {"doc": "threads per block along threadIdx.x", "min": 1, "max": 1024},
    "BY": {"doc": "threads per block along threadIdx.y", "min": 1, "max": 1024},
    "MAP": {"default": 1, "values": [0, 1], "doc": "0: threadIdx.x runs down a column (uncoalesced); 1: along a row"},
    "PDL": {"default": 2, "values": [0, 1, 2], "doc": "programmatic dependent launch on sm_90+ (gemm_common.cuh): 0 off, 1 on, 2 on unless a grid of one partial wave would land unevenly behind itself (plan_use_pdl, engine/core/template.h)"}
  },
  "constraints": [
    {"rule": "BX * BY <= 1024", "why": "a block holds at most 1024 threads"}
  ],
  "switches": {
    "OP_TA": "TA",
    "OP_TB": "TB",
    "LDP": "LD_PACKED",
    "BATCHED": "BATCH > 1"
  },
  "traffic": "BATCH * (M * K * cdiv(N, MAP ? BX : BY) + K * N * cdiv(M, MAP ? BY : BX) + M * N)",
  "compile_cost": "70",
  "model": {"tile": ["BY", "BX", 1]},
  "launches": [
    {"kernel": "gemm", "grid": ["MAP ? cdiv(N, BX) : cdiv(M, BX)", "MAP ? cdiv(M, BY) : cdiv(N, BY)", "BATCH"],
     "block": ["BX", "BY", 1]}
  ]
}
*/
#include "gemm_common.cuh"

/* Where element (row, k) of op(A), (k, col) of op(B) and (row, col) of C are stored (LD_A, LD_B,
 * LD_C: gemm_common.cuh). */
#define A_AT(r, k) (OP_TA ? (idx_t)(k) * LD_A + (r) : (idx_t)(r) * LD_A + (k))
#define B_AT(k, c) (OP_TB ? (idx_t)(c) * LD_B + (k) : (idx_t)(k) * LD_B + (c))

extern "C" __global__ void __launch_bounds__(BX * BY) gemm(GEMM_ARGS)
{
    grid_dep_sync();
#if BATCHED
    BATCH_SELECT(false);
#endif
#if MAP == 0
    const int row = blockIdx.x * BX + threadIdx.x, col = blockIdx.y * BY + threadIdx.y;
#else
    const int col = blockIdx.x * BX + threadIdx.x, row = blockIdx.y * BY + threadIdx.y;
#endif
    if (row >= M || col >= N)
        return;
    T acc = T(0);
    for (int k = 0; k < K; ++k)
        acc += A[A_AT(row, k)] * B[B_AT(k, col)];
    store_c<1>(&C[(idx_t)row * LD_C + col], &acc, alpha, beta);
}
