/* blocktile.cu — one block per BM x BN tile of C; each of its THREADS = (BM/TM)(BN/TN) threads
 * accumulates a TM x TN sub-tile in registers while BM x BK slices of A and BK x BN slices of B
 * pass through shared memory.
 *
 * This one template covers the profile-driven FP32 walk from `tiled` to `ldg_wider2`, siboehm's
 * kernels 3-9, the walk's block-geometry sweep, split-K and multi-buffered cp.async, and NVIDIA's
 * shared-memory DGEMM: each published step is a switch below, not a copy of the kernel.
 *
 * Thread (tx, ty) = (tid % (BN/TN), tid / (BN/TN)) owns rows ty*TM + i of the tile and columns
 * tx*TN + j (contiguous: C and B can be moved as vectors) or j*(BN/TN) + tx (STRIDED_COLS: a warp
 * touches consecutive columns in every scalar access). A is kept as As[m][k] and read down a
 * column (a broadcast across the lanes of one row), or k-major As[k][m] (A_KMAJOR) so that a
 * thread's TM values at one k are contiguous. Any M, N, K: partial tiles are guarded unless the
 * FULL_* switches say the shape has none; vector widths fall back to 2, then 1, when rows are not
 * aligned to them (EVEC_*). Example: configs/bank_pad_vec.json.
 *
 * engine:template
{
  "summary": "block-tiled GEMM: register blocking, padding, vector loads/stores, supertiles, split-K, cp.async",
  "dtypes": ["f32", "f64"],
  "pdl": true,
  "peak": "fma",
  "params": {
    "BM": {"doc": "rows of C per block tile", "min": 1},
    "BN": {"doc": "columns of C per block tile", "min": 1},
    "BK": {"doc": "depth of the A and B slices staged in shared memory per step", "min": 1},
    "TM": {"doc": "rows of C per thread", "min": 1},
    "TN": {"doc": "columns of C per thread", "min": 1},
    "THREADS": {"doc": "threads per block, (BM/TM)*(BN/TN)", "min": 32, "max": 1024},
    "STRIDED_COLS": {"default": 0, "values": [0, 1], "doc": "1: a thread's columns are tx, tx+BN/TN, ... (coalesced scalar stores); 0: contiguous"},
    "A_KMAJOR": {"default": 0, "values": [0, 1], "doc": "1: store A transposed, As[k][m]"},
    "PAD_A": {"default": 0, "min": 0, "max": 32, "doc": "elements added to each stored row of A"},
    "PAD_B": {"default": 0, "min": 0, "max": 32, "doc": "elements added to each stored row of B"},
    "VEC_A": {"default": 1, "values": [1, 2, 4], "doc": "elements per global load of A (4 floats = LDG.128)"},
    "VEC_B": {"default": 1, "values": [1, 2, 4], "doc": "elements per global load of B"},
    "LDS_A": {"default": 1, "values": [1, 2, 4, 8], "doc": "elements per shared-memory read of an A fragment (needs A_KMAJOR)"},
    "LDS_B": {"default": 1, "values": [1, 2, 4, 8], "doc": "elements per shared-memory read of a B fragment (LDS.128 = 4 floats)"},
    "VEC_C": {"default": 1, "values": [1, 2, 4], "doc": "elements per load/store of C (STG.128 = 4 floats)"},
    "B_LINEAR": {"default": 0, "values": [0, 1], "doc": "1: siboehm kernel 7's linearized B layout in shared memory"},
    "SUPER": {"default": 0, "min": 0, "max": 32, "doc": "supertile width: blocks walk SUPER x SUPER squares of tiles (0 or 1: off)"},
    "TPB": {"default": 1, "min": 1, "max": 4, "doc": "each block computes TPB x TPB neighbouring tiles in turn ..."},
    "TPB_MIN_BLOCKS": {"default": 128, "min": 1, "doc": "... when that still leaves at least this many blocks"},
    "KUNROLL": {"default": 8, "min": 1, "max": 64, "doc": "unroll factor of the k loop over a stage (more: more loads hoisted, more registers)"},
    "MINB": {"default": 0, "min": 0, "max": 32, "doc": "__launch_bounds__ min blocks per SM (0: none)"},
    "STAGES": {"default": 1, "min": 1, "max": 4, "doc": "shared-memory buffers; 2 without ASYNC = register-staged double buffering"},
    "ASYNC": {"default": 0, "values": [0, 1], "doc": "1: cp.async global-to-shared copies, VEC_A/VEC_B elements each"},
    "SPLITK": {"default": 1, "min": 1, "max": 64, "doc": "split K over blockIdx.z"},
    "SPLITK_MODE": {"default": 0, "values": [0, 1, 2], "doc": "0: atomicAdd into C pre-scaled by beta; 1: deterministic two-pass reduction through W; 2: one launch, the first split to finish writes the tile and the others add with atomics after it (splitk.cuh)"},
    "PDL": {"default": 2, "values": [0, 1, 2], "doc": "programmatic dependent launch on sm_90+ (gemm_common.cuh): 0 off, 1 on, 2 on unless a grid of one partial wave would land unevenly behind itself (plan_use_pdl, engine/core/template.h)"}
  },
  "constraints": [
    {"rule": "BM % TM == 0", "why": "each thread owns TM whole rows of the block tile"},
    {"rule": "BN % TN == 0", "why": "each thread owns TN whole columns of the block tile"},
    {"rule": "THREADS == (BM / TM) * (BN / TN)", "why": "one thread per TM x TN sub-tile"},
    {"rule": "BK % VEC_A == 0", "why": "A is loaded VEC_A elements along K at a time"},
    {"rule": "BN % VEC_B == 0", "why": "B is loaded VEC_B elements along N at a time"},
    {"rule": "TM % LDS_A == 0", "why": "a thread's TM rows are read LDS_A at a time"},
    {"rule": "TN % LDS_B == 0", "why": "a thread's TN columns are read LDS_B at a time"},
    {"rule": "TN % VEC_C == 0", "why": "a thread's TN columns of C are stored VEC_C at a time"},
    {"rule": "A_KMAJOR == 1 || LDS_A == 1", "why": "vector reads of a thread's rows need A stored k-major"},
    {"rule": "A_KMAJOR == 0 || (BM + PAD_A) % LDS_A == 0", "why": "LDS_A-wide reads need every stored row of A aligned"},
    {"rule": "(BN + PAD_B) % LDS_B == 0", "why": "LDS_B-wide reads need every stored row of B aligned"},
    {"rule": "STRIDED_COLS == 0 || (LDS_B == 1 && VEC_C == 1 && B_LINEAR == 0)", "why": "vector reads and stores need each thread's columns contiguous"},
    {"rule": "B_LINEAR == 0 || (PAD_B == 0 && LDS_B == 1)", "why": "the linearized B layout has no row padding and is read one element at a time"},
    {"rule": "ASYNC == 0 || ARCH >= 80", "why": "cp.async needs sm_80 or newer"},
    {"rule": "ASYNC == 0 || STAGES >= 2", "why": "an asynchronous pipeline needs at least two buffers"},
    {"rule": "ASYNC == 1 || STAGES <= 2", "why": "without cp.async there is one buffer, or two with register staging"},
    {"rule": "ASYNC == 0 || A_KMAJOR == 1 || (BK + PAD_A) % VEC_A == 0", "why": "each VEC_A-element copy into a stored row of A must stay aligned"},
    {"rule": "ASYNC == 0 || B_LINEAR == 1 || (BN + PAD_B) % VEC_B == 0", "why": "each VEC_B-element copy into a stored row of B must stay aligned"},
    {"rule": "SPLITK == 1 || TPB == 1", "why": "split-K blocks each compute a single tile"}
  ],
  "requires": [
    "transposed_loads",
    "split_k_packed_c"
  ],
  "switches": {
    "FULL_M": "M % BM == 0",
    "FULL_N": "N % BN == 0",
    "FULL_K": "K % BK == 0",
    "EVEC_A": "(TA ? M : K) % VEC_A == 0 && ALIGN_A >= min(VEC_A, 16 / ELEM) ? VEC_A : (TA ? M : K) % 2 == 0 && VEC_A > 2 && ALIGN_A >= 2 ? 2 : 1",
    "EVEC_B": "(TB ? K : N) % VEC_B == 0 && ALIGN_B >= min(VEC_B, 16 / ELEM) ? VEC_B : (TB ? K : N) % 2 == 0 && VEC_B > 2 && ALIGN_B >= 2 ? 2 : 1",
    "EVEC_C": "N % VEC_C == 0 && ALIGN_C >= min(VEC_C, 16 / ELEM) ? VEC_C : N % 2 == 0 && VEC_C > 2 && ALIGN_C >= 2 ? 2 : 1",
    "TPB_EFF": "TPB > 1 && cdiv(M, BM) * cdiv(N, BN) >= TPB * TPB * TPB_MIN_BLOCKS ? TPB : 1",
    "SPLIT_SERIAL": "SPLITK > 1 && SPLITK_MODE == 2 && cdiv(M, BM) * cdiv(N, BN) <= 4096",
    "BATCHED": "BATCH > 1",
    "OP_TA": "TA",
    "OP_TB": "TB",
    "LDP": "LD_PACKED"
  },
  "let": {
    "GX": "cdiv(cdiv(N, BN), TPB_EFF)",
    "GY": "cdiv(cdiv(M, BM), TPB_EFF)",
    "SW": "SUPER > 1 ? SUPER : 1",
    "SPLITS": "SPLITK > 1 && SPLITK_MODE != 1 && !SPLIT_SERIAL && K > 0 ? cdiv(cdiv(K, BK), cdiv(cdiv(K, BK), SPLITK)) : SPLITK",
    "SMEM": "STAGES * (rup(A_KMAJOR ? BK * (BM + PAD_A) : BM * (BK + PAD_A), 16 / ELEM) + rup(BK * (BN + PAD_B), 16 / ELEM)) * ELEM"
  },
  "workspace": "SPLITK > 1 && SPLITK_MODE == 1 ? SPLITK * M * N : 0",
  "stream_state": "SPLIT_SERIAL",
  "traffic": "BATCH * (M * K * cdiv(N, BN) + K * N * cdiv(M, BM) + M * N)",
  "compile_cost": "100 + TM * TN * BK / 5",
  "model": {"tile": ["BM", "BN", "BK"], "atomics": "SPLITK > 1 && SPLITK_MODE != 1 ? M * N * (SPLIT_SERIAL ? SPLITS - 1 : SPLITS) : 0", "slow": "EVEC_B < VEC_B ? 105 : 100"},
  "launches": [
    {"kernel": "scale_c", "if": "SPLITK > 1 && SPLITK_MODE != 1 && !SPLIT_SERIAL", "grid": ["cdiv(M * N, 256)", 1, 1], "block": [256, 1, 1]},
    {"kernel": "gemm", "grid": ["SW > 1 ? cdiv(GX, SW) * cdiv(GY, SW) * SW * SW : GX", "SW > 1 ? 1 : GY", "BATCH > 1 ? BATCH : SPLITS"],
     "block": ["THREADS", 1, 1], "smem": "SMEM"},
    {"kernel": "reduce", "if": "SPLITK > 1 && SPLITK_MODE == 1", "grid": ["cdiv(M * N, 256)", 1, 1], "block": [256, 1, 1]}
  ]
}
*/
#include "gemm_common.cuh"
#define PIPE_STAGES STAGES
#define PIPE_ASYNC ASYNC
#include "tile_pipeline.cuh"
#include "splitk.cuh"

#define TX (BN / TN) /* threads along a row of the tile */

/* One thread's TM x TN accumulators and the step that feeds them from one stage of the tiles. */
struct Frag {
    T acc[TM][TN];
    int tx, ty;

    __device__ __forceinline__ void compute(const T *As, const T *Bs)
    {
#pragma unroll KUNROLL
        for (int k = 0; k < BK; ++k) {
            T a[TM], b[TN];
#if A_KMAJOR
#pragma unroll
            for (int i = 0; i < TM; i += LDS_A)
                vcopy<LDS_A>(&a[i], &As[k * tile::A_LD + ty * TM + i]);
#else
#pragma unroll
            for (int i = 0; i < TM; ++i)
                a[i] = As[(ty * TM + i) * tile::A_LD + k];
#endif
#if STRIDED_COLS
#pragma unroll
            for (int j = 0; j < TN; ++j)
                b[j] = Bs[k * tile::B_LD + j * TX + tx];
#elif B_LINEAR
#pragma unroll
            for (int j = 0; j < TN; ++j)
                b[j] = Bs[(k * TN + j) * TX + tx];
#else
#pragma unroll
            for (int j = 0; j < TN; j += LDS_B)
                vcopy<LDS_B>(&b[j], &Bs[k * tile::B_LD + tx * TN + j]);
#endif
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] += a[i] * b[j];
        }
    }
};

/* Write the sub-tile: C itself, or atomically (split-K, modes 0 and 2), or this split's slice of W. */
__device__ __forceinline__ void epilogue(const Frag &f, int M, int N, int ldc, int row0, int col0, T alpha, T beta,
                                         T *C, T *W, bool plain)
{
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int gr = row0 + f.ty * TM + i;
        if (!FULL_M && gr >= M)
            continue;
#if STRIDED_COLS || SPLITK > 1
        constexpr int CV = 1;
#else
        constexpr int CV = EVEC_C;
#endif
#pragma unroll
        for (int j = 0; j < TN; j += CV) {
            const int gc = col0 + (STRIDED_COLS ? j * TX + f.tx : f.tx * TN + j);
            if (!FULL_N && gc >= N)
                continue;
#if SPLITK > 1
            if (!plain) {
                split_put(C, W, (idx_t)gr * N + gc, M, N, f.acc[i][j], alpha);
                continue;
            }
#endif
            store_c<CV>(&C[(idx_t)gr * ldc + gc], &f.acc[i][j], alpha, beta);
        }
    }
}

extern "C" __global__ void LAUNCH_BOUNDS(THREADS) gemm(GEMM_ARGS)
{
    grid_dep_sync();
#if BATCHED
    BATCH_SELECT(false);
#endif
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *As = reinterpret_cast<T *>(smem_raw);
    T *Bs = As + STAGES * tile::A_STAGE;
    const int tid = threadIdx.x;
    const tile::Strides ld = tile::strides(M, N, K, lda, ldb, ldc);
    const int tiles_x = cdiv(N, BN), tiles_y = cdiv(M, BM);
    int bx, by;
    if (!block_coords<SUPER>(cdiv(tiles_x, TPB_EFF), cdiv(tiles_y, TPB_EFF), bx, by))
        return;
    int kt0, kt1;
    split_range(K, kt0, kt1);
#pragma unroll 1
    for (int t = 0; t < TPB_EFF * TPB_EFF; ++t) {
        const int tile_x = bx * TPB_EFF + t % TPB_EFF, tile_y = by * TPB_EFF + t / TPB_EFF;
        if (tile_x >= tiles_x || tile_y >= tiles_y) /* uniform across the block */
            continue;
        const int row0 = tile_y * BM, col0 = tile_x * BN;
        Frag f;
        f.tx = tid % TX;
        f.ty = tid / TX;
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j)
                f.acc[i][j] = T(0);
        tile::mainloop<THREADS>(f, As, Bs, A, B, M, N, K, ld.a, ld.b, row0, col0, kt0, kt1, tid);
        const bool plain = split_begin(tile_y * tiles_x + tile_x);
        epilogue(f, M, N, ld.c, row0, col0, alpha, beta, C, W, plain);
        split_end(tile_y * tiles_x + tile_x);
    }
}
