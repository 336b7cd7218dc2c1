/* warptile.cu — siboehm's warp tiling (kernel 10) and its double-buffering variants (11, 12), and
 * the register-prefetching kernel we tune past cuBLAS.
 *
 * The BM x BN block tile is split among THREADS/32 warps, each owning a WM x WN warp tile; a warp
 * covers its tile in WMITER x WNITER steps of (WM/WMITER) x (WN/WNITER), with every lane holding a
 * TM x TN piece of each step. So a thread owns WMITER*TM rows and WNITER*TN columns, and the
 * lanes of a warp read A and B fragments that are contiguous and shared: a k-step costs
 * WMITER*TM/4 + WNITER*TN/4 LDS.128 for WMITER*WNITER*TM*TN FFMAs. A is stored k-major
 * (As[k][m], transposed on the way in), B row-major.
 *
 * DB picks how tiles reach shared memory:
 *   0  one buffer: load, barrier, compute, barrier (kernel 10);
 *   1  kernel 11: two buffers; the two halves of the block take turns loading the next tile while
 *      the other half computes, with three block-wide barriers per pair of k-tiles (the published
 *      kernel put its barriers inside divergent branches; ours are all at the top level);
 *   2  kernel 12: STAGES buffers filled by cp.async (A one element per copy, transposing; B 16 bytes);
 *   3  two buffers, register-staged: the next tile's global loads are in flight during compute.
 * LANES 1 lays the lanes of a warp step out so that shared memory serves both fragments at its
 * doubled (paired-lane) rate, and SNAKE 1 orders the outer product so consecutive FMAs share an
 * operand; both are off in the published kernels' configs and on in warptile_db and dgemm_simt.
 * SLICEK > 1 runs SLICEK groups of those warps on each block tile (sliced K, as in CUTLASS): group g
 * computes the g-th BK/SLICEK of every k-tile's steps, and slice_sum adds the groups' accumulators
 * through shared memory before the epilogue. Where output tiles are few (large K with a small
 * M x N, skinny and small shapes) it multiplies the warps working on each tile without shrinking
 * the warp tile or splitting K across blocks; the cost is one pass through shared memory per tile.
 * Any shape (guards compile away when the FULL_* switches hold); rows not aligned to a vector width
 * take scalar loads and stores (2-element ones measured slower here than in blocktile,
 * docs/NOTES.md "Partial tiles"), or, for B with PACK_B, are first copied into the workspace with
 * padded rows (pack_b), so that the tiles load B as at a whole shape. Example:
 * configs/sb10_warptiling.json.
 *
 * engine:template
{
  "summary": "warp-tiled GEMM (siboehm kernels 10-12) with register-prefetch double buffering",
  "dtypes": ["f32", "f64"],
  "pdl": true,
  "peak": "fma",
  "params": {
    "BM": {"doc": "rows of C per block tile", "min": 1},
    "BN": {"doc": "columns of C per block tile", "min": 1},
    "BK": {"doc": "depth of the slices staged in shared memory per step", "min": 1},
    "WM": {"doc": "rows of C per warp tile", "min": 1},
    "WN": {"doc": "columns of C per warp tile", "min": 1},
    "WNITER": {"doc": "steps a warp takes across its tile along N", "min": 1},
    "TM": {"doc": "rows per thread per step (a power of two)", "min": 1},
    "TN": {"doc": "columns per thread per step (a power of two)", "min": 1},
    "THREADS": {"doc": "threads per block: 32 per warp tile", "min": 32, "max": 1024},
    "PAD_A": {"default": 0, "min": 0, "max": 32, "doc": "elements added to each stored (k-major) row of A"},
    "PAD_B": {"default": 0, "min": 0, "max": 32, "doc": "elements added to each stored row of B"},
    "PAD_BT": {"default": 0, "min": 0, "max": 32, "doc": "with B transposed (TB), elements added to each stored row of B in place of PAD_B (0: PAD_B). B^T's chunks along K go down the tile's columns as scalar stores; with VEC_B 4 and BK 8 the two lanes that share a column write rows 4 apart, on one bank unless 4 * (BN + PAD) is 16 off a multiple of 32: 4 with BN 128"},
    "VEC_A": {"default": 4, "values": [1, 2, 4], "doc": "elements per global load of A"},
    "VEC_B": {"default": 4, "values": [1, 2, 4], "doc": "elements per global load (or cp.async) of B"},
    "VEC_C": {"default": 4, "values": [1, 2, 4], "doc": "elements per load/store of C"},
    "DB": {"default": 0, "values": [0, 1, 2, 3], "doc": "0 single buffer, 1 staggered halves, 2 cp.async, 3 register-staged double buffer"},
    "STAGES": {"default": 2, "min": 2, "max": 4, "doc": "cp.async buffers (DB 2)"},
    "KUNROLL": {"default": 16, "min": 1, "max": 64, "doc": "unroll factor of the k loop over a stage"},
    "SUPER": {"default": 0, "min": 0, "max": 32, "doc": "supertile width (0 or 1: off)"},
    "SNAKE": {"default": 0, "values": [0, 1], "doc": "1: walk each row of the outer product in alternating directions, so consecutive FMAs share an operand"},
    "LANES": {"default": 0, "values": [0, 1], "doc": "lane layout of a warp step: 0 row-major, 1 paired (lanes 2i, 2i+1 share A rows, lanes i, i^2 share B columns)"},
    "MINB": {"default": 0, "min": 0, "max": 32, "doc": "__launch_bounds__ min blocks per SM (0: none)"},
    "SPLITK": {"default": 1, "min": 1, "max": 64, "doc": "split K over blockIdx.z (splitk.cuh)"},
    "SPLITK_MODE": {"default": 0, "values": [0, 1, 2], "doc": "0: atomicAdd into C pre-scaled by beta; 1: deterministic two-pass reduction through W; 2: one launch, the first split to finish writes the tile and the others add with atomics after it (splitk.cuh)"},
    "SLICEK": {"default": 1, "min": 1, "max": 16, "doc": "warp groups sharing each output tile: group g takes the g-th BK/SLICEK of every k-tile's steps, and the groups' accumulators are summed through shared memory before the epilogue (sliced-K: more warps per tile where tiles are few)"},
    "B_ASYNC": {"default": 0, "values": [0, 1, 2], "doc": "DB 3: 1 brings B's tiles by cp.async instead of through registers (A still register-staged); 2 does so only where N is not a multiple of VEC_B (B's rows not aligned to the vector: 4-byte copies, as cuBLAS makes, instead of scalar loads and stores)"},
    "C_STAGE": {"default": 2, "values": [0, 1, 2], "doc": "1: the epilogue passes C's tile through shared memory so that consecutive threads store consecutive columns; 2: only where N is not a multiple of VEC_C (each thread's scalar stores would touch a sector each) and either K is not a multiple of VEC_A or K <= 1024, where the stores are a large share of the work (at 2251x11601xK staging took 0.18x the time at K = 4, 0.98x at 1024, 1.035x at 2048, and 7% more at 4096x4095x4096: docs/NOTES.md); 0: never. Not with split-K, stream-K or sliced K, nor where the tile would take over 100 KB"},
    "LOAD_AHEAD": {"default": 0, "values": [0, 1], "doc": "DB 3: 1 issues the loads of tile t + 2 at the end of tile t, after tile t + 1 is stored and before the barrier, instead of at the start of tile t + 1 (ptxas cannot sink them onto their stores; faster at 2500^3, slower at 1999^3 and 4096x4095x4096: docs/NOTES.md)"},
    "EDGE": {"default": 2, "values": [0, 1, 2, 3], "doc": "1: tiles wholly inside C run an unguarded copy of the tile code, only edge tiles the guarded one (tile_pipeline.cuh); 0: one guarded copy for all; 2: 1 where K is a multiple of VEC_A, else 0 (with K's loads narrowed too, the second copy cost 2-3%: docs/NOTES.md); 3: as 1, with the guarded copy a function of its own (not inlined), so the kernel's registers are allocated for the unguarded one"},
    "STREAMK": {"default": 0, "min": 0, "max": 65536, "doc": "stream-K: this many blocks share all tiles' k-iterations equally, parts of tiles added with atomics into C pre-scaled by beta (0: off)"},
    "PACK_B": {"default": 0, "values": [0, 1, 2, 3], "doc": "1: a first launch (pack_b) copies B into the workspace with its rows padded to a whole number of block tiles (zeros past N), so every tile's B loads are full-width vectors and unguarded; 2: only where N is not a multiple of VEC_B (B's rows not aligned to the vector); 3: as 2, and only where K is a multiple of VEC_A (with A's loads narrowed, warptile_db ran 8% slower packed: docs/NOTES.md). The copy is timed with the GEMM"},
    "PDL": {"default": 2, "values": [0, 1, 2], "doc": "programmatic dependent launch on sm_90+ (gemm_common.cuh): 0 off, 1 on, 2 on unless a grid of one partial wave would land unevenly behind itself (plan_use_pdl, engine/core/template.h)"}
  },
  "constraints": [
    {"rule": "BM % WM == 0", "why": "warp tiles cover the block tile's rows"},
    {"rule": "BN % WN == 0", "why": "warp tiles cover the block tile's columns"},
    {"rule": "THREADS == 32 * (BM / WM) * (BN / WN) * SLICEK", "why": "one warp per warp tile in each of the SLICEK groups"},
    {"rule": "BK % SLICEK == 0", "why": "the groups take equal shares of a k-tile's steps"},
    {"rule": "DB != 1 || SLICEK == 1", "why": "the staggered halves of DB 1 are not k-slice groups"},
    {"rule": "LOAD_AHEAD == 0 || (DB == 3 && B_ASYNC == 0)", "why": "loads two tiles ahead are a schedule of the register-staged pipeline with both tiles in registers"},
    {"rule": "WN % WNITER == 0", "why": "a warp takes WNITER equal steps along N"},
    {"rule": "(WM * WN) % (32 * TM * TN * WNITER) == 0", "why": "a warp tile splits into WMITER x WNITER steps of 32 lanes x TM x TN"},
    {"rule": "WM % ((WM * WN) / (32 * TM * TN * WNITER)) == 0", "why": "a warp takes WMITER equal steps along M"},
    {"rule": "(WN / WNITER) % TN == 0", "why": "a step's columns split into TN-wide lane pieces"},
    {"rule": "(WM / ((WM * WN) / (32 * TM * TN * WNITER))) % TM == 0", "why": "a step's rows split into TM-high lane pieces"},
    {"rule": "((WM / ((WM * WN) / (32 * TM * TN * WNITER))) / TM) * ((WN / WNITER) / TN) == 32", "why": "the lanes of a warp tile one step exactly"},
    {"rule": "pow2(TM) && pow2(TN)", "why": "fragments are read as power-of-two vectors"},
    {"rule": "BK % VEC_A == 0", "why": "A is loaded VEC_A elements along K at a time"},
    {"rule": "BN % VEC_B == 0", "why": "B is loaded VEC_B elements along N at a time"},
    {"rule": "TN % VEC_C == 0", "why": "a thread's TN columns of C are stored VEC_C at a time"},
    {"rule": "(BM + PAD_A) % min(TM, 16 / ELEM) == 0", "why": "vector reads of A fragments need aligned stored rows"},
    {"rule": "(BN + PAD_B) % min(TN, 16 / ELEM) == 0", "why": "vector reads of B fragments need aligned stored rows"},
    {"rule": "DB != 2 || ARCH >= 80", "why": "cp.async needs sm_80 or newer"},
    {"rule": "DB != 2 || (BN + PAD_B) % VEC_B == 0", "why": "each cp.async into a stored row of B must stay aligned"},
    {"rule": "PAD_BT == 0 || ((BN + PAD_BT) % min(TN, 16 / ELEM) == 0 && (BN + PAD_BT) % VEC_B == 0)", "why": "PAD_BT pads B's stored rows as PAD_B does, and they must stay as aligned"},
    {"rule": "DB != 1 || THREADS % 64 == 0", "why": "the staggered scheme splits the block into two halves of whole warps"},
    {"rule": "LANES == 0 || ((WN / WNITER) / TN >= 2 && (WN / WNITER) / TN <= 16)", "why": "the paired lane layout needs 2 to 16 lanes across a warp step"},
    "split_or_stream_k",
    {"rule": "B_ASYNC == 0 || (DB == 3 && ARCH >= 80)", "why": "B by cp.async inside the register-staged double buffer (DB 3) needs sm_80 or newer"},
    {"rule": "B_ASYNC == 0 || (BN + PAD_B) % VEC_B == 0", "why": "each cp.async into a stored row of B must stay aligned"},
    {"rule": "PACK_B == 0 || SPLITK == 1 || SPLITK_MODE != 1", "why": "the packed B and the two-pass split-K partial tiles would both take the workspace"}
  ],
  "requires": [
    "transposed_loads",
    "split_stream_k_packed_c"
  ],
  "switches": {
    "FULL_M": "M % BM == 0",
    "FULL_N": "N % BN == 0",
    "FULL_K": "K % BK == 0",
    "EVEC_A": "(TA ? M : K) % VEC_A == 0 && ALIGN_A >= min(VEC_A, 16 / ELEM) ? VEC_A : 1",
    "PACKB": "BATCH == 1 && TB == 0 && K > 0 && (PACK_B == 1 || (PACK_B >= 2 && N % VEC_B != 0 && (PACK_B == 2 || K % VEC_A == 0))) && K * rup(N, BN) < 2147483648",
    "EVEC_B": "PACKB || ((TB ? K : N) % VEC_B == 0 && ALIGN_B >= min(VEC_B, 16 / ELEM)) ? VEC_B : 1",
    "EVEC_C": "N % VEC_C == 0 && ALIGN_C >= min(VEC_C, 16 / ELEM) ? VEC_C : 1",
    "B_PAD": "TB && PAD_BT > 0 ? PAD_BT : PAD_B",
    "SPLIT_SERIAL": "SPLITK > 1 && SPLITK_MODE == 2 && cdiv(M, BM) * cdiv(N, BN) <= 4096",
    "BASYNC": "B_ASYNC == 1 || (B_ASYNC == 2 && EVEC_B < VEC_B)",
    "EDGE_ON": "EDGE == 1 || (EDGE == 2 && K % VEC_A == 0) || EDGE == 3",
    "EDGE_CALL": "EDGE == 3 && (M % BM != 0 || N % BN != 0)",
    "CSTAGE": "SPLITK == 1 && STREAMK == 0 && SLICEK == 1 && BM * (BN + 1) * ELEM <= 102400 && (C_STAGE == 1 || (C_STAGE == 2 && N % VEC_C != 0 && (K % VEC_A != 0 || K <= 1024)))",
    "BATCHED": "BATCH > 1",
    "OP_TA": "TA",
    "OP_TB": "TB",
    "LDP": "LD_PACKED"
  },
  "let": {
    "GX": "cdiv(N, BN)",
    "GY": "cdiv(M, BM)",
    "SW": "SUPER > 1 ? SUPER : 1",
    "SPLITS": "SPLITK > 1 && SPLITK_MODE != 1 && !SPLIT_SERIAL && K > 0 ? cdiv(cdiv(K, BK), cdiv(cdiv(K, BK), SPLITK)) : SPLITK",
    "NBUF": "DB == 2 ? STAGES : DB == 0 ? 1 : 2"
  },
  "traffic": "BATCH * (M * K * cdiv(N, BN) + K * N * cdiv(M, BM) + M * N + (PACKB ? K * N + K * rup(N, BN) : 0))",
  "compile_cost": "150 + (WM * WN / 32) * min(KUNROLL, BK / SLICEK) * 2 / 5",
  "model": {"tile": ["BM", "BN", "BK"], "atomics": "STREAMK > 0 ? M * N + STREAMK * BM * BN : SPLITK > 1 && SPLITK_MODE != 1 ? M * N * (SPLIT_SERIAL ? SPLITS - 1 : SPLITS) : 0", "slow": "EVEC_B < VEC_B ? 105 : 100"},
  "workspace": "SPLITK > 1 && SPLITK_MODE == 1 ? SPLITK * M * N : PACKB ? K * rup(N, BN) : 0",
  "stream_state": "SPLIT_SERIAL",
  "launches": [
    {"kernel": "pack_b", "if": "PACKB", "grid": ["cdiv(rup(N, BN), 256)", "min(cdiv(K, 4), 65535)", 1], "block": [256, 1, 1]},
    {"kernel": "scale_c", "if": "(SPLITK > 1 && SPLITK_MODE != 1 && !SPLIT_SERIAL) || STREAMK > 0", "grid": ["cdiv(M * N, 256)", 1, 1], "block": [256, 1, 1]},
    {"kernel": "gemm", "grid": ["STREAMK > 0 ? STREAMK : SW > 1 ? cdiv(GX, SW) * cdiv(GY, SW) * SW * SW : GX", "STREAMK > 0 || SW > 1 ? 1 : GY", "BATCH > 1 ? BATCH : SPLITS"],
     "block": ["THREADS", 1, 1],
     "smem": "max(max(NBUF * (rup(BK * (BM + PAD_A), 16 / ELEM) + rup(BK * (BN + B_PAD), 16 / ELEM)), (SLICEK - 1) * BM * BN), CSTAGE ? BM * (BN + 1) : 0) * ELEM"},
    {"kernel": "reduce", "if": "SPLITK > 1 && SPLITK_MODE == 1", "grid": ["cdiv(M * N, 256)", 1, 1], "block": [256, 1, 1]}
  ]
}
*/
#include "gemm_common.cuh"

#define A_KMAJOR 1
#if DB == 2
#define PIPE_ASYNC 1
#define PIPE_STAGES STAGES
#elif DB == 3
#define PIPE_ASYNC 0
#define PIPE_STAGES 2
#define PIPE_B_ASYNC BASYNC
#define PIPE_AHEAD LOAD_AHEAD
#else
#define PIPE_ASYNC 0
#define PIPE_STAGES 1
#endif
#include "tile_pipeline.cuh"
#include "splitk.cuh"

constexpr int WMITER = (WM * WN) / (32 * TM * TN * WNITER);
constexpr int WSUBM = WM / WMITER; /* rows of one warp step */
constexpr int WSUBN = WN / WNITER; /* columns of one warp step */
constexpr int TILE_WARPS = (BM / WM) * (BN / WN); /* warps covering the block tile once */
constexpr int KSLICE = BK / SLICEK;               /* k-steps of each k-tile per group (SLICEK) */
constexpr int ACC = WMITER * TM * WNITER * TN;    /* accumulators per thread */

/* The first k-step of this thread's group inside each k-tile: a member only with SLICEK > 1 (an
 * unused member changed NVRTC's code for warptile_db). */
template <bool SLICED> struct KGroup {
    static constexpr int kg = 0;
    __device__ __forceinline__ void set_kg(int) {}
};
template <> struct KGroup<true> {
    int kg;
    __device__ __forceinline__ void set_kg(int k) { kg = k; }
};

struct Frag : KGroup<(SLICEK > 1)> {
    T acc[WMITER * TM][WNITER * TN];
    int m0, n0; /* this thread's first row and column inside the block tile */

    __device__ __forceinline__ void compute(const T *As, const T *Bs)
    {
#pragma unroll KUNROLL
        for (int kk = 0; kk < KSLICE; ++kk) {
            const int k = this->kg + kk;
            T a[WMITER * TM], b[WNITER * TN];
#pragma unroll
            for (int wm = 0; wm < WMITER; ++wm)
                vcopy<TM>(&a[wm * TM], &As[k * tile::A_LD + m0 + wm * WSUBM]);
#pragma unroll
            for (int wn = 0; wn < WNITER; ++wn)
                vcopy<TN>(&b[wn * TN], &Bs[k * tile::B_LD + n0 + wn * WSUBN]);
#pragma unroll
            for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
                for (int jj = 0; jj < WNITER * TN; ++jj) {
                    /* An FMA whose three operands all come from the register file costs an extra
                     * issue cycle (measured: DFMA on the H100, docs/NOTES.md); the snake order
                     * lets the turn between rows keep b[j] in the operand reuse cache. */
                    const int j = SNAKE && (i & 1) ? WNITER * TN - 1 - jj : jj;
                    acc[i][j] += a[i] * b[j];
                }
        }
    }
};

/* The staggered double buffer of kernel 11 (DB 1), with every barrier at the top level. A pair
 * of k-tiles takes three phases; in each, one half of the block computes on a buffer while the
 * other loads or computes:
 *   phase        0              1              2
 *   first half   compute t      compute t+1    load t+2 -> buffer 0
 *   second half  load t+1 -> 1  compute t      compute t+1
 * The phases run as one loop with a single call of f.compute, whose buffer the phase picks.
 * Written out as four calls, NVRTC optimised four unrolled copies of the 8x8 x BK outer
 * products: sb11 took 19% of the compile time of all shipped configs and ran at 13.8 TFLOP/s at
 * 4096^3 on the H100, against 34.5 as one loop (docs/NOTES.md). */
template <bool FM, bool FN>
__device__ __forceinline__ void staggered(Frag &f, T *As, T *Bs, const T *A, const T *B, int M, int N, int K,
                                          int lda, int ldb, int row0, int col0, int kt0, int kt1, int tid)
{
    constexpr int HALF = THREADS / 2;
    typedef tile::Staging<HALF> Half;
    const bool second = tid >= HALF;
    const int ltid = tid % HALF, kend = min(K, kt1 * BK), nkt = kt1 - kt0;
    if (!second && nkt > 0)
        Half::template copy<FM, FN>(As, Bs, A, B, M, N, lda, ldb, row0, col0, kt0 * BK, kend, ltid);
    __syncthreads();
    for (int t = 0; t < nkt; t += 2) {
#pragma unroll 1
        for (int phase = 0; phase < 3; ++phase) {
            /* s: which tile of the pair this half works on in this phase (0: t, 1: t+1);
             * -1 and 2 are the loads of the second and first half. */
            const int s = second ? phase - 1 : phase;
            if (s == 0 || (s == 1 && t + 1 < nkt)) {
                f.compute(As + s * tile::A_STAGE, Bs + s * tile::B_STAGE);
            } else if (s == -1 || s == 2) {
                const int kt = t + (second ? 1 : 2), buf = second ? 1 : 0;
                if (kt < nkt)
                    Half::template copy<FM, FN>(As + buf * tile::A_STAGE, Bs + buf * tile::B_STAGE, A, B, M, N, lda, ldb, row0, col0,
                               (kt0 + kt) * BK, kend, ltid);
            }
            __syncthreads();
        }
    }
}

/* Where this thread's accumulators sit inside a block tile (f.m0, f.n0). */
__device__ __forceinline__ void frag_origin(Frag &f, int warp, int lane)
{
    const int wrow = warp / (BN / WN), wcol = warp % (BN / WN);
    constexpr int LANES_N = WSUBN / TN; /* lanes across one warp step */
    int lm = lane / LANES_N, ln = lane % LANES_N;
    if constexpr (LANES != 0) {
        /* Shared memory returns 128 B (one register per lane) per cycle, twice that when
         * lanes i and i^1, or i and i^2, read the same address. Row-major lanes pair only
         * on A; here bit 0 of the lane picks the column and bit 1 the row, so A's reads
         * pair on i^1 and B's on i^2, and every fragment load takes half the cycles. */
        const int hi = lane >> 2;
        ln = (lane & 1) | (hi % (LANES_N / 2)) << 1;
        lm = (lane >> 1 & 1) | (hi / (LANES_N / 2)) << 1;
    }
    f.m0 = wrow * WM + lm * TM;
    f.n0 = wcol * WN + ln * TN;
}

/* Sliced K: group g (threads [g, g + 1) * THREADS / SLICEK) has summed only its share of each
 * k-tile. Groups 1.. put their accumulators in shared memory (the tile stages are free by then),
 * thread t's element e of group g at ((g - 1) * ACC + e) * GT + t so a warp's stores and loads hit
 * 32 consecutive words; group 0 adds them in group order (the sum does not depend on timing) and
 * alone runs the epilogue. */
__device__ __forceinline__ void slice_sum(Frag &f, T *red, int tid)
{
    constexpr int GT = THREADS / SLICEK;
    const int g = tid / GT, t = tid % GT;
    __syncthreads(); /* every group has finished reading the last k-tile */
    if (g > 0) {
#pragma unroll
        for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
            for (int j = 0; j < WNITER * TN; ++j)
                red[((g - 1) * ACC + i * WNITER * TN + j) * GT + t] = f.acc[i][j];
    }
    __syncthreads();
    if (g == 0) {
#pragma unroll 1
        for (int s = 0; s < SLICEK - 1; ++s)
#pragma unroll
            for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
                for (int j = 0; j < WNITER * TN; ++j)
                    f.acc[i][j] += red[(s * ACC + i * WNITER * TN + j) * GT + t];
    }
}

/* Output tile (bx, by) over its k-tiles [kt0, kt1): accumulate, then write C. With split-K each
 * split adds its part (split_put); with stream-K a block adds a part of a tile with atomics
 * (`part`) and writes a whole tile as alpha * acc + C, C having been scaled by beta already
 * (splitk.cuh). FM, FN: no guards along M, N (the tile lies inside C that way). */
template <bool FM, bool FN>
__device__ __forceinline__ void output_tile(Frag &f, T *As, T *Bs, const T *A, const T *B, T *C, T *W, int M, int N,
                                            int K, T alpha, T beta, int bx, int by, int kt0, int kt1, bool part,
                                            tile::Strides ld)
{
    const int tid = threadIdx.x, row0 = by * BM, col0 = bx * BN;
    frag_origin(f, SLICEK > 1 ? tid / 32 % TILE_WARPS : tid / 32, tid % 32);
    f.set_kg(tid / 32 / TILE_WARPS * KSLICE);
#pragma unroll
    for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
        for (int j = 0; j < WNITER * TN; ++j)
            f.acc[i][j] = T(0);
    /* B as the loads see it: packed (PACK_B), rows NB = rup(N, BN) apart and no column to guard. */
    const T *Bl = PACKB ? W : B;
    const int NB = PACKB ? rup(N, BN) : N, ldb = PACKB ? NB : ld.b;
#if DB == 1
    staggered<FM, FN || PACKB>(f, As, Bs, A, Bl, M, NB, K, ld.a, ldb, row0, col0, kt0, kt1, tid);
#else
    tile::mainloop<THREADS, FM, FN || PACKB>(f, As, Bs, A, Bl, M, NB, K, ld.a, ldb, row0, col0, kt0, kt1, tid);
#endif
    if constexpr (SLICEK > 1)
        slice_sum(f, As, tid);
    /* The epilogue: each element's offset from the thread's first row and column is a
     * compile-time constant, compared with how many rows and columns are left. All the
     * accumulators are live here; MINB 2 keeps warptile_db's guarded shapes at 128 registers. */
    const int r0 = row0 + f.m0, c0 = col0 + f.n0;
    const int rows_left = M - r0, cols_left = N - c0;
    T *Ct = C + (idx_t)r0 * ld.c + c0;
    const T beta_c = tile_beta(beta);
    const bool plain = split_begin(SPLIT_SERIAL ? by * cdiv(N, BN) + bx : 0);
    const bool writes = SLICEK == 1 || tid < THREADS / SLICEK; /* group 0 (slice_sum) */
#if CSTAGE
    /* C's tile through shared memory (the tile stages are free once every thread has left the K
     * loop): each thread puts its accumulators at their place in the tile, then the block stores
     * the tile row by row, consecutive threads on consecutive columns. Where C's rows are not
     * aligned to a vector, a thread's own TN columns would go out as scalar stores a sector
     * apart across the warp, 4-8 times the store requests (docs/NOTES.md, "Interior tiles"). */
    constexpr int CS_LD = BN + 1;
    /* The thread's index read again (volatile: not merged with the first read), and its place in
     * the tile derived from it anew, so that none of it stays live across the K loop: holding
     * them cost warptile_db 5 reloads from local memory in every k-tile. */
    int t;
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(t));
    frag_origin(f, t / 32, t % 32);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
        for (int j = 0; j < WNITER * TN; ++j)
            As[(f.m0 + (i / TM) * WSUBM + i % TM) * CS_LD + f.n0 + (j / TN) * WSUBN + j % TN] = f.acc[i][j];
    __syncthreads();
    store_staged<CS_LD, false, FM, FN>(C + (idx_t)row0 * ld.c + col0, ld.c, As, M - row0, N - col0, alpha,
                                       beta_c, t);
    (void)rows_left;
    (void)cols_left;
    (void)Ct;
    (void)writes;
#else
    const bool direct = !(SPLITK > 1 && !plain) && !(STREAMK > 0 && part);
#pragma unroll
    for (int i = 0; i < WMITER * TM; ++i) {
        const int di = (i / TM) * WSUBM + i % TM;
        if ((!FM && di >= rows_left) || !writes)
            continue;
        /* The row's C (beta != 0) read before any of it is stored: its reads in flight together,
         * not a round trip per vector (per element where N's rows are unaligned; sliced K at
         * 359x907x258 and 511x254x61, beta 1: 1.29x and 1.50x faster). Aligned for vcopy's vector
         * stores into it (the PTX is the same without: the row stays in registers). */
        alignas(16) T old[WNITER * TN];
        if (STREAMK == 0 && direct && beta_c != T(0)) {
#pragma unroll
            for (int j = 0; j < WNITER * TN; j += EVEC_C) {
                const int dj = (j / TN) * WSUBN + j % TN;
                if (FN || dj < cols_left)
                    vcopy<EVEC_C>(&old[j], &Ct[(idx_t)di * ld.c + dj]);
            }
        }
#pragma unroll
        for (int j = 0; j < WNITER * TN; j += EVEC_C) {
            const int dj = (j / TN) * WSUBN + j % TN;
            if (SPLITK > 1 && !plain) {
#pragma unroll
                for (int e = 0; e < EVEC_C; ++e)
                    if (FN || dj + e < cols_left)
                        split_put(C, W, (idx_t)(r0 + di) * N + c0 + dj + e, M, N, f.acc[i][j + e], alpha);
            } else if (STREAMK > 0 && part) {
#pragma unroll
                for (int e = 0; e < EVEC_C; ++e)
                    if (FN || dj + e < cols_left)
                        atomicAdd(&Ct[(idx_t)di * ld.c + dj + e], alpha * f.acc[i][j + e]);
            } else if (FN || dj < cols_left) {
                if constexpr (STREAMK == 0)
                    put_c<EVEC_C>(&Ct[(idx_t)di * ld.c + dj], &f.acc[i][j], alpha, beta_c, &old[j]);
                else /* stream-K's whole tiles: grouped reads spilled (warptile_streamk) */
                    store_c<EVEC_C>(&Ct[(idx_t)di * ld.c + dj], &f.acc[i][j], alpha, beta_c);
            }
        }
    }
#endif
    split_end(SPLIT_SERIAL ? by * cdiv(N, BN) + bx : 0);
}

#if EDGE_CALL
/* EDGE 3: the guarded tile code as a function of its own (not inlined), so that ptxas allocates
 * the kernel's registers for the unguarded copy alone, as at a full shape (inlined, the edge copy
 * changed the interior loop's register assignment: 57% more FFMAs reading two sources from one
 * register bank at 4096x4064x4096, docs/NOTES.md). Its accumulators are its own, not the caller's,
 * so that nothing of the interior path has to live in memory. */
__device__ __noinline__ void edge_tile(T *As, T *Bs, const T *A, const T *B, T *C, T *W, int M, int N, int K, T alpha,
                                       T beta, int bx, int by, int kt0, int kt1, bool part, tile::Strides ld)
{
    Frag f;
    output_tile<FULL_M, FULL_N>(f, As, Bs, A, B, C, W, M, N, K, alpha, beta, bx, by, kt0, kt1, part, ld);
}
#endif

/* Output tile (bx, by), unguarded where it lies inside C and the shape asks for the split
 * (tile_pipeline.cuh, EDGE_SPLIT), guarded otherwise. */
__device__ __forceinline__ void any_tile(Frag &f, T *As, T *Bs, const T *A, const T *B, T *C, T *W, int M, int N,
                                         int K, T alpha, T beta, int bx, int by, int kt0, int kt1, bool part,
                                         tile::Strides ld)
{
#if EDGE_SPLIT
    if (tile::interior_tile(bx, by, M, N))
        output_tile<true, true>(f, As, Bs, A, B, C, W, M, N, K, alpha, beta, bx, by, kt0, kt1, part, ld);
    else
#endif
#if EDGE_CALL
        edge_tile(As, Bs, A, B, C, W, M, N, K, alpha, beta, bx, by, kt0, kt1, part, ld);
#else
        output_tile<FULL_M, FULL_N>(f, As, Bs, A, B, C, W, M, N, K, alpha, beta, bx, by, kt0, kt1, part, ld);
#endif
}

#if PACKB
/* PACK_B: B's rows copied into W, NB = rup(N, BN) elements apart, zeros past N. Where N is not a
 * multiple of the vector width, B's rows start unaligned and the tile loads go out as scalars:
 * 2.5 times the load requests of aligned rows, which queue with the fragment reads in shared
 * memory (4096x4095x4096, docs/NOTES.md "N - 1"); a copy costs one read and one write of B and
 * gives every tile the loads of a full shape. Block (x, y) takes 256 columns of rows 4y to 4y + 3,
 * then of the four rows gridDim.y * 4 further on, and so on (grid.y is cdiv(K, 4), at most 65535);
 * all four rows' loads are issued before any store, so that enough bytes are in flight to run at
 * memory bandwidth (measured 3.1 TB/s, the device-to-device copy's rate). */
extern "C" __global__ void pack_b(GEMM_ARGS)
{
    grid_dep_sync();
    constexpr int ROWS = 4;
    const int NB = rup(N, BN), c = blockIdx.x * 256 + threadIdx.x;
    if (c >= NB)
        return;
    for (int k0 = blockIdx.y * ROWS; k0 < K; k0 += gridDim.y * ROWS) {
        T v[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; ++r)
            v[r] = c < N && k0 + r < K ? B[(idx_t)(k0 + r) * (LDP ? N : ldb) + c] : T(0);
#pragma unroll
        for (int r = 0; r < ROWS; ++r)
            if (k0 + r < K)
                W[(idx_t)(k0 + r) * NB + c] = v[r];
    }
}
#endif

extern "C" __global__ void LAUNCH_BOUNDS(THREADS) gemm(GEMM_ARGS)
{
    grid_dep_sync();
#if BATCHED
    BATCH_SELECT(false);
#endif
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *As = reinterpret_cast<T *>(smem_raw);
    T *Bs = As + (DB == 2 ? STAGES : DB == 0 ? 1 : 2) * tile::A_STAGE;
    Frag f;
    const tile::Strides ld = tile::strides(M, N, K, lda, ldb, ldc);
#if STREAMK > 0
    streamk_runs(cdiv(N, BN), cdiv(M, BM), cdiv(K, BK), [&](int bx, int by, int kt0, int kt1, bool part) {
        any_tile(f, As, Bs, A, B, C, W, M, N, K, alpha, beta, bx, by, kt0, kt1, part, ld);
    });
#else
    /* NVRTC's code for warptile_db depends on the order of these steps: two other orders gave
     * different address code (docs/NOTES.md, "Stream-K"); this one was measured equal to the
     * kernel before stream-K. */
    int bx, by;
    if (!block_coords<SUPER>(cdiv(N, BN), cdiv(M, BM), bx, by))
        return;
    int kt0, kt1;
    split_range(K, kt0, kt1);
    any_tile(f, As, Bs, A, B, C, W, M, N, K, alpha, beta, bx, by, kt0, kt1, false, ld);
#endif
}
