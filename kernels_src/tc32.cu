/* tc32.cu — FP32 GEMM on Hopper's tensor cores: wgmma (sm_90a) with TF32 operands, as 3xTF32
 * (PASSES = 3: FP32 accuracy, class f32) or 1xTF32 (PASSES = 1: class tf32, which the config
 * must declare with "accuracy": "tf32"). dmma.cu runs the same arithmetic on mma.sync for sm_80+.
 *
 * A block of BM / 64 warpgroups computes a BM x BN tile of C; warpgroup w owns rows 64w..64w+63,
 * all BN columns, as one wgmma m64nBNk8 accumulator (two under 3xTF32 without FOLD: big*big in
 * part, big*small + small*big in corr; summed into one accumulator over all of K the small terms
 * would be cut away against big*big, Ootomo & Yokota 2022). With KPROMOTE > 0 the tensor cores
 * sum KPROMOTE / BK k-tiles at a time and FP32 adds fold each chain into total (promotion; FOLD = 1
 * then sums the correction products into part, which a short chain allows). Per k-tile of BK = 32
 * every thread loads its float4 chunks of A (BM x 32) and B (32 x BN) into registers, splits each
 * element into big = tf32(x) and small = tf32(x - big) (tf32_split, gemm_common.cuh) and stores
 * them into the next of STAGES shared-memory stages while the tensor cores work on this one. With
 * STAGES = 3 the wgmmas of one k-tile are still running when the next k-tile's are issued
 * (wait_group 1): the tensor cores do not idle at each k-tile's barrier as with 2 (wait_group 0).
 * PREFETCH = 1 loads each k-tile into the registers a whole k-tile before its stores (main loop).
 * RAW_STAGES = R > 0 takes the loads out of the registers: cp.async copies the FP32 tiles as they
 * are into R raw shared-memory stages, R k-tiles ahead, and the threads split k-tile kt + 1 from
 * its raw stage into the operand stages while the wgmmas of kt run (main loop, docs/NOTES.md).
 * SWAP = 1 (shipped) swaps the operands' roles: the tensor cores compute C's tile transposed,
 * D = B^T A^T, warpgroup w owning columns 64w..64w+63 of the tile: B's fragments are the register
 * operand, read by each thread straight from B's raw stage (BFrag), and A's raw tile, already K-major,
 * is the shared-memory operand, so nothing is stored transposed (the loop in SwapPipe::step).
 *
 * Shared-memory layout: wgmma takes TF32 operands K-major only, so A's tile is stored as rows of
 * A (As[m][k]) and B's transposed (Bs[n][k]); a row of BK = 32 TF32 values is 128 bytes, stored
 * with the 128-byte swizzle (16-byte chunk c of row r lands at chunk c ^ (r % 8)), so that eight
 * rows make one 1024-byte swizzle atom and the stores of a quarter-warp and the tensor cores'
 * reads spread over all banks. A descriptor (PTX ISA, "Matrix Descriptor Format") gives the start
 * address, the stride between 8-row groups (SBO = 1024 bytes) and the swizzle mode; the k-th step
 * of 8 within the row starts 32 k bytes further on (the swizzle is applied to the address bits, so
 * the atoms must be 1024-byte aligned). Any M, N, K: loads past the matrix read zeros, stores past
 * it are skipped. Layouts: leading dimensions in every mode (the lda, ldb, ldc arguments where
 * a row is not packed, LDP 0; 16-byte copies where they keep rows aligned, 4-byte ones otherwise,
 * or with PACK_LD A and B copied packed first, pack_ld.cuh); under SWAP every op: B stored N x K
 * (op NT, X W^T) has its raw tile as rows of K like A's, and BFrag takes the fragments by ldmatrix;
 * A stored K x M (TN, TT) has its raw tile as rows of M (raw_at), which split_a_t transposes into
 * the K-major operand (TSPLIT). The other modes take NN only. Split-K (SPLITK > 1, splitk.cuh's
 * three modes) for shapes whose tiles leave SMs idle: a split runs its slice of K as a GEMM of its
 * own (A and B offset to the slice's first k, K its length), so the pipelines are unchanged; only
 * the epilogue adds. Example: configs/tc32_3x.json.
 *
 * engine:template
{
  "summary": "FP32 GEMM as 3xTF32 (or 1xTF32) on Hopper's wgmma tensor cores (sm_90a)",
  "dtypes": ["f32"],
  "pdl": true,
  "arch_specific": true,
  "peak": "tensor",
  "params": {
    "BM": {"default": 128, "values": [64, 128, 192, 256], "doc": "rows of C per block tile: one warpgroup (128 threads) per 64 rows"},
    "BN": {"default": 128, "values": [64, 128, 256], "doc": "columns of C per block tile: the wgmma's N"},
    "BK": {"default": 32, "values": [32], "doc": "depth of a k-tile: one 128-byte swizzled row of TF32 per row of a tile"},
    "PASSES": {"default": 3, "values": [1, 3], "doc": "TF32 products per element pair: 3 (big*big + big*small + small*big, FP32 accuracy) or 1 (big*big: TF32 accuracy, declare \"accuracy\": \"tf32\")"},
    "STAGES": {"default": 3, "values": [2, 3, 4], "doc": "operand (split) shared-memory stages: S keeps S - 2 k-tiles' wgmmas in flight while the next are issued (2 waits for them at every k-tile; 4 fits 1xTF32's shared memory only); with RAW_STAGES > 0 the split of the next k-tile waits instead, for S - 1"},
    "KPROMOTE": {"default": 128, "values": [0, 32, 64, 128, 256], "doc": "elements of K the tensor cores accumulate before the partial sum is added into FP32 registers by ordinary adds (0: never, the tensor cores sum all of K)"},
    "FOLD": {"default": 0, "values": [0, 1], "doc": "3xTF32 with promotion: 1 accumulates the correction products into big*big's tensor-core accumulator between promotions (one register set fewer), 0 keeps them apart"},
    "PREFETCH": {"default": 0, "values": [0, 1], "doc": "when the next k-tile's global loads are issued: 0 at the start of the k-tile before it (their latency exposed, hidden only by the wgmma issue), 1 right after the previous tile's split stores, a whole k-tile earlier (same registers)"},
    "RAW_STAGES": {"default": 0, "values": [0, 2, 3, 4, 5, 6], "doc": "0: global loads staged through registers (PREFETCH decides when); R > 0: cp.async of the raw FP32 tiles into R shared-memory stages, R k-tiles in flight (R - 2 under SWAP), split from there into the STAGES operand stages"},
    "AREG": {"default": 0, "values": [0, 1], "doc": "1: A's operand from registers (needs RAW_STAGES > 0): each thread reads its fragment rows from the raw stage and splits them in registers, so A has no split stores and the tensor cores read only B from shared memory; K is permuted within a k-tile (B's split stores follow), so a thread's eight k of a row are two 16-byte reads"},
    "BMAP": {"default": 0, "values": [0, 1, 2], "doc": "which chunks of B a warp stages: 0 eight k rows of 64 bytes (transposed stores two-way bank conflicted), 1 sixteen k rows of 32 bytes (conflict-free), 2 all 32 k rows of 16 bytes (conflict-free also with AREG's permuted k; from raw stages only)"},
    "SWAP": {"default": 0, "values": [0, 1], "doc": "1: the operands' roles swapped (needs RAW_STAGES >= 3): the tensor cores compute C's tile transposed, D = B^T A^T, with B's operand from registers (each thread reads its fragment straight from B's raw stage: no transposed stores) and A's from shared memory as it is (wgmma's K-major operand is A's own row-major tile): straight from the raw stage for 1xTF32 with ROUND 0, else from an elementwise split of it. Warpgroups over N (64 columns each), wgmma's N = BM; a k-tile's wgmmas run while the next k-tile's are issued (two fragment buffers)"},
    "ROUND": {"default": 1, "values": [0, 1], "doc": "1xTF32 under SWAP: 1 rounds both operands to TF32 (cvt.rna, as 3xTF32's big part), 0 hands the FP32 bits to the tensor cores, which use the top 19 (truncation) and need no pass over A at all"},
    "TSPLIT": {"default": 2, "values": [0, 1, 2], "doc": "A stored K x M (op TN, TT): how the split transposes it into the K-major operand: 0 a thread's 16-byte k-row pieces stored as 4-byte elements; 1 blocks of 4 k x 4 rows transposed in registers, 16-byte stores (a quarter of the store instructions), blocks dealt diagonally so that each quarter-warp's reads and stores fall on distinct banks; 2 (default) 1 at TN, 0 at TT, as measured (3xTF32 at 4096^3 on the H100: TN 1.776 against 1.895 ms, TT 1.837 against 1.811)"},
    "PACK_LD": {"default": 0, "values": [0, 1], "doc": "one product: where A's or B's stored rows are not 16-byte aligned (a leading dimension or pointer off 4 floats) though their length is a multiple of 4, a first launch (pack_ld, pack_ld.cuh) copies that matrix packed into the workspace and the tiles load it with 16-byte copies; the copy is timed with the GEMM"},
    "SUPER": {"default": 0, "min": 0, "max": 32, "doc": "supertile width (0 or 1: off)"},
    "SPLITK": {"default": 1, "min": 1, "max": 64, "doc": "split K over blockIdx.z (splitk.cuh): each split runs the k-loop of its slice as a GEMM of its own (A and B offset to the slice's first k), for shapes whose M x N tiles leave SMs idle (skinny, or large K with a small M x N)"},
    "SPLITK_MODE": {"default": 0, "values": [0, 1, 2], "doc": "0: atomicAdd into C pre-scaled by beta; 1: deterministic two-pass reduction through W; 2: one launch, the first split to finish writes the tile and the others add with atomics after it (splitk.cuh)"},
    "MINB": {"default": 1, "values": [1, 2], "doc": "__launch_bounds__ min blocks per SM: 2 holds a thread to 128 registers so that two blocks share an SM (a tile of 128 x 64 or 64 x 128 whose shared memory fits twice), one block's barrier and epilogue then hidden behind the other's wgmmas"},
    "PDL": {"default": 2, "values": [0, 1, 2], "doc": "programmatic dependent launch on sm_90+ (gemm_common.cuh): 0 off, 1 on, 2 on unless a grid of one partial wave would land unevenly behind itself (plan_use_pdl, engine/core/template.h)"}
  },
  "derived": {
    "THREADS": "SWAP ? 2 * BN : 2 * BM",
    "PARTS": "PASSES == 3 ? 2 : 1",
    "WN": "SWAP ? BM : BN",
    "OPROWS": "SWAP ? (PASSES == 3 || ROUND == 1 ? BM : 0) : BN + (AREG ? 0 : BM)"
  },
  "constraints": [
    {"rule": "ARCH_SPECIFIC == 1 && ARCH == 90", "why": "wgmma exists only on the architecture-specific target sm_90a (--arch sm_90a); dmma.cu's f32 path runs elsewhere"},
    {"rule": "WN <= 128 || (PASSES == 1 && KPROMOTE == 0)", "why": "each accumulator set is WN / 2 registers a thread (WN: wgmma's N, BN or under SWAP BM); 3xTF32 holds two or three sets, promotion one more: at 256 only 1xTF32 without promotion (one set of 128) fits in 255 registers"},
    {"rule": "SWAP == 0 || (RAW_STAGES >= 3 && AREG == 0 && BMAP == 0)", "why": "SWAP reads both operands from raw stages, copied R - 2 k-tiles ahead of their use; B comes from registers and A from shared memory as it is, so AREG and BMAP (B's transposed split) do not apply"},
    {"rule": "SWAP == 0 || WN != 192", "why": "wgmma's N is BM under SWAP: 64, 128 or 256 (the instruction forms written out)"},
    {"rule": "ROUND == 1 || (SWAP == 1 && PASSES == 1)", "why": "only 1xTF32 under SWAP hands raw FP32 to the tensor cores; 3xTF32's split needs the rounded big part"},
    {"rule": "KPROMOTE % BK == 0", "why": "promotion happens between k-tiles"},
    {"rule": "FOLD == 0 || (PASSES == 3 && KPROMOTE > 0)", "why": "folding the correction products is a 3xTF32 choice, and only short chains keep them from being rounded away"},
    {"rule": "RAW_STAGES == 0 || PREFETCH == 0", "why": "PREFETCH times loads staged through registers; with RAW_STAGES > 0 cp.async loads RAW_STAGES k-tiles ahead instead"},
    {"rule": "BMAP < 2 || RAW_STAGES > 0", "why": "BMAP 2 reads 16 bytes of each of 32 rows: cheap from a raw shared-memory stage, half-used sectors from global memory"},
    {"rule": "AREG == 0 || RAW_STAGES > 0", "why": "A's fragments are read from the raw shared-memory stage that cp.async fills"},
    {"rule": "BM * BN <= 128 * 256", "why": "the block's staging registers and shared memory grow with the tile; past 128 x 256 they no longer fit"}
  ],
  "requires": [
    {"rule": "TA == 0 || (SWAP == 1 && (PASSES == 3 || ROUND == 1))", "why": "wgmma takes TF32 operands K-major only: A stored K x M is transposed by SWAP's split of A (split_a_t), which 1xTF32 with ROUND 0 skips; the other modes read A's rows as stored"},
    {"rule": "TB == 0 || SWAP == 1", "why": "B stored N x K is read as it is only under SWAP (its fragments by ldmatrix from rows of K); the other modes stage B transposed from K x N"},
    "split_k_packed_c"
  ],
  "switches": {
    "PACKLD_A": "PACK_LD && BATCH == 1 && SPLITK == 1 && (TA ? M : K) % 4 == 0 && ALIGN_A < 4 && M * K > 0 && M * K < 2147483648",
    "PACKLD_B": "PACK_LD && BATCH == 1 && SPLITK == 1 && (TB ? K : N) % 4 == 0 && ALIGN_B < 4 && K * N > 0 && K * N < 2147483648",
    "EVEC_A": "PACKLD_A || ((TA ? M : K) % 4 == 0 && ALIGN_A >= 4) ? 4 : 1",
    "EVEC_B": "PACKLD_B || ((TB ? K : N) % 4 == 0 && ALIGN_B >= 4) ? 4 : 1",
    "EVEC_C": "N % 2 == 0 && ALIGN_C >= 2 ? 2 : 1",
    "BATCHED": "BATCH > 1",
    "TSPLIT_ON": "TA && (TSPLIT == 1 || (TSPLIT == 2 && !TB))",
    "OP_TA": "TA",
    "OP_TB": "TB",
    "LDP": "LD_PACKED",
    "SPLIT_SERIAL": "SPLITK > 1 && SPLITK_MODE == 2 && cdiv(M, BM) * cdiv(N, BN) <= 4096"
  },
  "let": {
    "GX": "cdiv(N, BN)",
    "GY": "cdiv(M, BM)",
    "SW": "SUPER > 1 ? SUPER : 1",
    "SPLITS": "SPLITK > 1 && SPLITK_MODE != 1 && !SPLIT_SERIAL && K > 0 ? cdiv(cdiv(K, BK), cdiv(cdiv(K, BK), SPLITK)) : SPLITK"
  },
  "traffic": "BATCH * (M * K * cdiv(N, BN) + K * N * cdiv(M, BM) + M * N) + (PACKLD_A ? 2 * M * K : 0) + (PACKLD_B ? 2 * K * N : 0)",
  "workspace": "SPLITK > 1 && SPLITK_MODE == 1 ? SPLITK * M * N : (PACKLD_A ? rup(M * K, 4) : 0) + (PACKLD_B ? K * N : 0)",
  "stream_state": "SPLIT_SERIAL",
  "compile_cost": "400",
  "model": {"tile": ["BM", "BN", "BK"], "atomics": "SPLITK > 1 && SPLITK_MODE != 1 ? M * N * (SPLIT_SERIAL ? SPLITS - 1 : SPLITS) : 0", "slow": "EVEC_A < 4 && EVEC_B < 4 ? 137 : EVEC_A < 4 || EVEC_B < 4 ? 119 : 100"},
  "launches": [
    {"kernel": "pack_ld", "if": "PACKLD_A || PACKLD_B", "grid": ["cdiv(max(PACKLD_A ? (TA ? M : K) : 0, PACKLD_B ? (TB ? K : N) : 0), 256)", "min(cdiv((PACKLD_A ? (TA ? K : M) : 0) + (PACKLD_B ? (TB ? N : K) : 0), 4), 65535)", 1], "block": [256, 1, 1]},
    {"kernel": "scale_c", "if": "SPLITK > 1 && SPLITK_MODE != 1 && !SPLIT_SERIAL", "grid": ["cdiv(M * N, 256)", 1, 1], "block": [256, 1, 1]},
    {"kernel": "gemm", "grid": ["SW > 1 ? cdiv(GX, SW) * cdiv(GY, SW) * SW * SW : GX", "SW > 1 ? 1 : GY", "BATCH > 1 ? BATCH : SPLITS"],
     "block": ["THREADS", 1, 1],
     "smem": "(STAGES * PARTS * OPROWS + RAW_STAGES * (BM + BN)) * BK * 4 + 1024"},
    {"kernel": "reduce", "if": "SPLITK > 1 && SPLITK_MODE == 1", "grid": ["cdiv(M * N, 256)", 1, 1], "block": [256, 1, 1]}
  ]
}
*/
#include "gemm_common.cuh"
#include "splitk.cuh"

static_assert(BK == 32, "a k-tile row is one 128-byte swizzle row of TF32");

constexpr int ROW_BYTES = BK * 4;              /* bytes per stored row of a tile */
/* SWAP: the operand stages hold A's split only (B's operand comes from registers), and none at
 * all for 1xTF32 with ROUND 0, whose wgmmas read A's raw stage. */
constexpr bool SPLITA = !SWAP || PASSES == 3 || ROUND;
constexpr int A_PART = AREG && !SWAP ? 0 : BM * ROW_BYTES; /* bytes of one part (big or small) of A's tile (none when A is in registers) */
constexpr int B_PART = SWAP ? 0 : BN * ROW_BYTES; /* ... of B's tile (stored transposed: BN rows) */
constexpr int STAGE = SPLITA ? PARTS * (A_PART + B_PART) : 0; /* bytes of one stage: [A big][A small][B big][B small] */
constexpr int NACC = WN / 2;                   /* accumulator registers per thread and accumulator (WN: wgmma's N) */
constexpr bool CORR = PASSES == 3;
/* Promotion (KPROMOTE > 0): the tensor cores sum KPROMOTE / BK k-tiles into a fresh accumulator
 * (the chain's first wgmma has scale-d = 0), which ordinary FP32 adds then fold into total. The
 * tensor cores' own accumulation is not IEEE round-to-nearest (docs/NOTES.md): over all of a long K
 * its error grows with K past SGEMM's; over a chain it stays that of a short sum. */
constexpr bool PROM = KPROMOTE > 0;
constexpr int KPT = PROM ? KPROMOTE / BK : 1; /* k-tiles per chain */
constexpr bool SEPC = CORR && !FOLD;          /* the correction products in an accumulator of their own */

/* Byte offset of element (r, k) of a stored tile row r: the 128-byte swizzle. */
__device__ __forceinline__ int sw(int r, int k) { return r * ROW_BYTES + ((((k >> 2) ^ (r & 7))) << 4) + ((k & 3) << 2); }

#include "wgmma_tf32.cuh"

/* One thread's share of a k-tile in registers between the global loads and the split stores.
 * A chunk v of A: row v / 8, k 4(v % 8): a warp reads four whole 128-byte rows. A chunk v of B
 * under BMAP = 0: k row 8(v / (2 BN)) + v % 8, columns 4((v / 8) % (BN / 4)): a warp reads 64
 * contiguous bytes of each of eight rows, and each of its transposed 4-byte stores (one element e
 * of every lane's chunk) falls on 16 banks: n % 8 takes two values, k / 4 two, so the swizzled
 * chunk (k / 4) ^ (n % 8) four, times k % 4. Under BMAP = 1: k row v % 16 + 16((v / 32) % 2),
 * columns 4((v / 16) % 2 + 2(v / 64)): a warp reads 32 bytes of each of sixteen rows; k / 4 takes
 * four values whose XOR with n % 8's two covers all eight chunks, so the stores hit 32 banks. Under
 * BMAP = 2 (raw stages only): k row v % 32, columns 4(v / 32): a warp covers all 32 k of one chunk,
 * whose stored positions span the eight swizzle chunks times four words, with or without AREG's
 * permutation (enumerated: one way). */
struct Staging {
    static constexpr int A_IT = BM * BK / 4 / THREADS;
    static constexpr int B_IT = BK * BN / 4 / THREADS;
    static_assert(A_IT * THREADS * 4 == BM * BK && B_IT * THREADS * 4 == BK * BN, "whole chunks per thread");
    float4 a[A_IT], b[B_IT];

    static __device__ __forceinline__ int a_row(int v) { return v / 8; }
    static __device__ __forceinline__ int a_k(int v) { return 4 * (v % 8); }
    static __device__ __forceinline__ int b_k(int v)
    {
        return BMAP == 2 ? v % BK : BMAP ? v % 16 + 16 * ((v / 32) % 2) : 8 * (v / (2 * BN)) + v % 8;
    }
    static __device__ __forceinline__ int b_col(int v)
    {
        return BMAP == 2 ? 4 * (v / BK) : BMAP ? 4 * ((v / 16) % 2 + 2 * (v / 64)) : 4 * ((v / 8) % (BN / 4));
    }
    /* Where k of the k-tile sits in B's stored rows: k itself, or under AREG the permutation that
     * matches A's fragments (AFrag below): stored position 8 s + j of k-step s holds k = 8 (j % 4)
     * + 2 s + j / 4, so k goes to 8 ((k % 8) / 2) + k / 8 + 4 (k % 2). */
    static __device__ __forceinline__ int b_pos(int k) { return AREG ? 8 * ((k & 7) >> 1) + (k >> 3) + 4 * (k & 1) : k; }

    /* Four elements from p on, e of them (< 4 only at an edge) read, the rest zero; aligned
     * 16-byte load when the width allows. */
    template <int EV> static __device__ __forceinline__ float4 get4(const float *p, int e)
    {
        if (EV == 4 && e == 4)
            return *reinterpret_cast<const float4 *>(p);
        float x[4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
            x[i] = i < e ? p[i] : 0.0f;
        return make_float4(x[0], x[1], x[2], x[3]);
    }

    __device__ __forceinline__ void load(const float *A, const float *B, int M, int N, int K, int lda, int ldb,
                                         int row0, int col0, int k0, int tid)
    {
#pragma unroll
        for (int it = 0; it < A_IT; ++it) {
            const int v = tid + it * THREADS, r = row0 + a_row(v), k = k0 + a_k(v);
            const int e = r < M ? min(4, max(0, K - k)) : 0;
            a[it] = get4<EVEC_A>(A + (e > 0 ? (idx_t)r * lda + k : 0), e);
        }
#pragma unroll
        for (int it = 0; it < B_IT; ++it) {
            const int v = tid + it * THREADS, k = k0 + b_k(v), c = col0 + b_col(v);
            const int e = k < K ? min(4, max(0, N - c)) : 0;
            b[it] = get4<EVEC_B>(B + (e > 0 ? (idx_t)k * ldb + c : 0), e);
        }
    }

    /* RAW_STAGES > 0: the raw stage holds A's tile as BM rows of BK floats (128 bytes) and B's as
     * BK rows of BN floats, each row's 16-byte chunks swizzled by the row's low three bits (chunk c
     * of row r at c ^ (r % 8)), so that the eight chunks a quarter-warp copies or reads in (one
     * row of A; one chunk of eight rows of B under either BMAP) fall on all 32 banks. */
    static __device__ __forceinline__ int raw_a(int r, int k) { return sw(r, k); }
    static __device__ __forceinline__ int raw_b(int k, int n)
    {
        return BM * ROW_BYTES + k * BN * 4 + ((((n >> 2) ^ raw_b_xor(k))) << 4) + ((n & 3) << 2);
    }
    /* Under SWAP a warp's fragment reads (BFrag) take 8 bytes at k rows t and t + 4 (t = lane % 4) of
     * chunks 4 w + g / 2 (g = lane / 4): XOR-ing odd rows' chunks with 4 as well spreads them over all
     * eight chunk positions (two wavefronts, the least for 256 bytes) instead of four. */
    static __device__ __forceinline__ int raw_b_xor(int k) { return SWAP ? (k & 7) ^ ((k & 1) << 2) : k & 7; }
    /* OP_TB (B stored N x K, under SWAP): the raw stage holds B's tile as it is stored, BN rows of
     * BK floats like A's, chunk c of row n at c ^ ((n / 2) % 8): BFrag's ldmatrix reads eight rows
     * n = 2i + h (i = 0..7) at once, whose chunks this spreads over all eight positions (n % 8 would
     * give four: two-way conflicts); a quarter-warp's copies still fill one whole row. */
    static __device__ __forceinline__ int raw_bt(int n, int k)
    {
        return BM * ROW_BYTES + n * ROW_BYTES + ((((k >> 2) ^ ((n >> 1) & 7))) << 4) + ((k & 3) << 2);
    }
    /* OP_TA (A stored K x M, under SWAP): the raw stage holds A's tile as it is stored, BK rows of BM
     * floats, chunk c of row k at c ^ (k % 8) (as B's rows without SWAP); split_a_t transposes it
     * into the K-major operand stage. */
    static __device__ __forceinline__ int raw_at(int k, int m)
    {
        return k * BM * 4 + ((((m >> 2) ^ (k & 7))) << 4) + ((m & 3) << 2);
    }

    /* Issue the cp.async copies of k-tile k0 into the raw stage at s: a warp copies four whole rows
     * of A or one of B (coalesced). Where a row's chunks are 16-byte aligned (EVEC 4: K or N a
     * multiple of 4 and the pointer aligned) a chunk is all in or all out of the matrix and moves as
     * one 16-byte copy (.cg, past L1); otherwise element by element (4 bytes, .ca), which any
     * alignment allows. Past the matrix the copies zero-fill. */
    static __device__ __forceinline__ void copy(unsigned char *s, const float *A, const float *B, int M, int N,
                                                int K, int lda, int ldb, int row0, int col0, int k0, int tid)
    {
#pragma unroll
        for (int it = 0; it < A_IT; ++it) {
            if constexpr (OP_TA) { /* rows of A^T: k = v / (BM / 4), columns 4 (v % (BM / 4)) */
                const int v = tid + it * THREADS, k = v / (BM / 4), m = 4 * (v % (BM / 4)), gk = k0 + k, gm = row0 + m;
                const int e = gk < K ? min(4, max(0, M - gm)) : 0;
                copy4<EVEC_A>(s + raw_at(k, m), A + (e > 0 ? (idx_t)gk * lda + gm : 0), e);
            } else {
                const int v = tid + it * THREADS, r = a_row(v), k = a_k(v), gr = row0 + r, gk = k0 + k;
                const int e = gr < M ? min(4, max(0, K - gk)) : 0;
                copy4<EVEC_A>(s + raw_a(r, k), A + (e > 0 ? (idx_t)gr * lda + gk : 0), e);
            }
        }
#pragma unroll
        for (int it = 0; it < B_IT; ++it) {
            if constexpr (OP_TB) { /* rows of B^T as A's rows: n = v / 8, k = 4 (v % 8) */
                const int v = tid + it * THREADS, n = v / 8, k = 4 * (v % 8), gn = col0 + n, gk = k0 + k;
                const int e = gn < N ? min(4, max(0, K - gk)) : 0;
                copy4<EVEC_B>(s + raw_bt(n, k), B + (e > 0 ? (idx_t)gn * ldb + gk : 0), e);
            } else {
                const int v = tid + it * THREADS, k = v / (BN / 4), n = 4 * (v % (BN / 4)), gk = k0 + k, gc = col0 + n;
                const int e = gk < K ? min(4, max(0, N - gc)) : 0;
                copy4<EVEC_B>(s + raw_b(k, n), B + (e > 0 ? (idx_t)gk * ldb + gc : 0), e);
            }
        }
    }
    /* Four elements from p on into d, e of them (< 4 only at an edge) read, the rest zero-filled:
     * one 16-byte copy when the width allows (then e is 0 or 4), else four of 4 bytes. */
    template <int EV> static __device__ __forceinline__ void copy4(unsigned char *d, const float *p, int e)
    {
        float *f = reinterpret_cast<float *>(d);
        if constexpr (EV == 4) {
            cp_async<16>(f, p, e > 0);
        } else {
#pragma unroll
            for (int i = 0; i < 4; ++i)
                cp_async<4>(f + i, p + (i < e ? i : 0), i < e);
        }
    }

    /* This thread's chunks of the k-tile from the raw stage at s: the same chunks load() takes from
     * global memory, so the split stores are shared by both paths. A and B apart, so that only
     * one operand's chunks need registers at a time. */
    __device__ __forceinline__ void load_raw_a(const unsigned char *s, int tid)
    {
#pragma unroll
        for (int it = 0; it < A_IT; ++it) {
            const int v = tid + it * THREADS;
            a[it] = *reinterpret_cast<const float4 *>(s + raw_a(a_row(v), a_k(v)));
        }
    }
    __device__ __forceinline__ void load_raw_b(const unsigned char *s, int tid)
    {
#pragma unroll
        for (int it = 0; it < B_IT; ++it) {
            const int v = tid + it * THREADS;
            b[it] = *reinterpret_cast<const float4 *>(s + raw_b(b_k(v), b_col(v)));
        }
    }

    /* Split and store into the stage at s (a generic pointer to 1024-byte aligned shared memory). */
    __device__ __forceinline__ void store(unsigned char *s, int tid) const
    {
        store_a(s, tid);
        store_b(s, tid);
    }
    /* The split from raw stage r into operand stage s. */
    __device__ __forceinline__ void split_raw(unsigned char *s, const unsigned char *r, int tid)
    {
        load_raw_a(r, tid);
        store_a(s, tid);
        load_raw_b(r, tid);
        store_b(s, tid);
    }
    __device__ __forceinline__ void store_a(unsigned char *s, int tid) const
    {
#pragma unroll
        for (int it = 0; it < A_IT; ++it) {
            const int v = tid + it * THREADS, o = sw(a_row(v), a_k(v));
            uint4 big, small;
            tf32_split(a[it].x, big.x, small.x);
            tf32_split(a[it].y, big.y, small.y);
            tf32_split(a[it].z, big.z, small.z);
            tf32_split(a[it].w, big.w, small.w);
            *reinterpret_cast<uint4 *>(s + o) = big;
            if constexpr (CORR)
                *reinterpret_cast<uint4 *>(s + A_PART + o) = small;
        }
    }
    __device__ __forceinline__ void store_b(unsigned char *s, int tid) const
    {
        unsigned char *bs = s + PARTS * A_PART;
#pragma unroll
        for (int it = 0; it < B_IT; ++it) {
            const int v = tid + it * THREADS, k = b_k(v), n = b_col(v);
            const float x[4] = {b[it].x, b[it].y, b[it].z, b[it].w};
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                unsigned big, small;
                tf32_split(x[e], big, small);
                const int o = sw(n + e, b_pos(k));
                *reinterpret_cast<unsigned *>(bs + o) = big;
                if constexpr (CORR)
                    *reinterpret_cast<unsigned *>(bs + B_PART + o) = small;
            }
        }
    }
};

/* AREG: this thread's A operand for one k-tile in registers. The wgmma fragment of k-step s needs
 * rows r0 = 16 w + lane / 4 and r0 + 8 of the warpgroup's 64, at k = lane % 4 and lane % 4 + 4 of
 * the step; with k permuted within the k-tile (Staging::b_pos) those are k = 8 (lane % 4) + 2 s and
 * 8 (lane % 4) + 2 s + 1 of the stored tile, so over the four steps a thread takes eight
 * consecutive k of each of its two rows: four 16-byte reads from the raw stage (conflict-free: the
 * raw rows are swizzled and r0 % 8 = lane / 4 % 8), split in registers. */
struct AFrag {
    float raw[16];                   /* row r0: k 8t .. 8t + 7, then row r0 + 8 */
    unsigned big[BK / 8][4], small[BK / 8][4];

    __device__ __forceinline__ void load(const unsigned char *rs, int wg, int warp, int lane)
    {
        const int r0 = wg * 64 + warp * 16 + lane / 4, k = 8 * (lane % 4);
#pragma unroll
        for (int h = 0; h < 4; ++h) {
            const float4 x = *reinterpret_cast<const float4 *>(rs + Staging::raw_a(r0 + 8 * (h / 2), k + 4 * (h % 2)));
            raw[4 * h] = x.x;
            raw[4 * h + 1] = x.y;
            raw[4 * h + 2] = x.z;
            raw[4 * h + 3] = x.w;
        }
    }
    /* Fragment register i of step s: row r0 + 8 (i % 2), stored k 8t + 2s + i / 2. The empty asm
     * first ties the registers to this point, after the wait for the wgmmas that read them (the
     * volatile asms keep their order), so the new values cannot be written before it. */
    __device__ __forceinline__ void split()
    {
#pragma unroll
        for (int st = 0; st < BK / 8; ++st)
            asm volatile("" : "+r"(big[st][0]), "+r"(big[st][1]), "+r"(big[st][2]), "+r"(big[st][3]), "+r"(small[st][0]),
                         "+r"(small[st][1]), "+r"(small[st][2]), "+r"(small[st][3]));
#pragma unroll
        for (int st = 0; st < BK / 8; ++st)
#pragma unroll
            for (int i = 0; i < 4; ++i)
                tf32_split(raw[8 * (i % 2) + 2 * st + i / 2], big[st][i], small[st][i]);
    }
};

/* One wgmma of k-step ks with A's part at a_part (descriptor form) or in af (AREG). */
__device__ __forceinline__ void mul(float (&d)[NACC], unsigned a_part, const unsigned (&af)[4], unsigned b_part, int ks,
                                   int acc_d)
{
    if constexpr (AREG)
        wgmma_ra(d, af, desc(b_part + ks * 32), acc_d);
    else
        wgmma(d, desc(a_part + ks * 32), desc(b_part + ks * 32), acc_d);
}

/* The tensor cores' work on one stage: BK / 8 k-steps, each one to three wgmmas per warpgroup.
 * fresh: this stage starts a promotion chain, so each accumulator's first wgmma ignores its old
 * value (promoted already). Under FOLD the correction products go first into part, so that they
 * are summed while part is still small. */
template <int NC> /* a template, so that the discarded branches are not compiled against one-element arrays */
__device__ __forceinline__ void mma_stage(float (&part)[NACC], float (&corr)[NC], unsigned stage, int wg, bool fresh,
                                          const AFrag &af)
{
    const unsigned a_big = stage + wg * 64 * ROW_BYTES, a_small = a_big + A_PART;
    const unsigned b_big = stage + PARTS * A_PART, b_small = b_big + B_PART;
#pragma unroll
    for (int ks = 0; ks < BK / 8; ++ks) { /* a k-step of 8 TF32 values: 32 bytes of a stored row */
        const int keep = !(fresh && ks == 0);
        if constexpr (SEPC) {
            mul(corr, a_big, af.big[ks], b_small, ks, keep);
            mul(corr, a_small, af.small[ks], b_big, ks, 1);
        } else if constexpr (CORR) {
            mul(part, a_big, af.big[ks], b_small, ks, keep);
            mul(part, a_small, af.small[ks], b_big, ks, 1);
        }
        mul(part, a_big, af.big[ks], b_big, ks, CORR && !SEPC ? 1 : keep);
    }
}

/* After a k-tile's wgmmas: where a promotion chain ends (chain_end), drain this warpgroup's wgmmas
 * and add the chain into total; otherwise wait until at most PENDING groups are still running. */
template <int PENDING, int NC, int NT>
__device__ __forceinline__ void settle(bool chain_end, float (&part)[NACC], float (&corr)[NC], float (&total)[NT])
{
    if (chain_end) {
        wgmma_wait<0>();
#pragma unroll
        for (int i = 0; i < NACC; ++i)
            total[PROM ? i : 0] += SEPC ? part[i] + corr[SEPC ? i : 0] : part[i];
    } else {
        wgmma_wait<PENDING>();
    }
}

#include "tc32_swap.cuh"

/* RAW_STAGES > 0: the split of a k-tile from raw stage r into operand stage s; under AREG only B's
 * goes to s, and A's rows are read into af's registers (split there before the wgmmas). */
__device__ __forceinline__ void split_next(Staging &st, AFrag &af, unsigned char *s, const unsigned char *r, int wg,
                                           int warp, int lane, int tid)
{
    if constexpr (AREG) {
        st.load_raw_b(r, tid);
        st.store_b(s, tid);
        af.load(r, wg, warp, lane);
    } else {
        st.split_raw(s, r, tid);
    }
}

/* C[gr][gc] and C[gr][gc + 1] = alpha v + beta C (the second only where gc + 1 < N), rows ldc
 * apart: one 8-byte access where C's rows allow it (gc is even). */
__device__ __forceinline__ void store_pair(T *C, int gr, int gc, int N, int ldc, const float *v, T alpha, T beta)
{
    if (EVEC_C == 2 && gc < N) {
        store_c<EVEC_C>(&C[(idx_t)gr * ldc + gc], v, alpha, beta);
    } else {
#pragma unroll
        for (int e = 0; e < 2; ++e)
            if (gc + e < N)
                store_c<1>(&C[(idx_t)gr * ldc + gc + e], &v[e], alpha, beta);
    }
}

#include "pack_ld.cuh"

extern "C" __global__ void __launch_bounds__(THREADS, MINB) gemm(GEMM_ARGS)
{
    grid_dep_sync();
#if BATCHED
    BATCH_SELECT(RAW_STAGES > 0);
#endif
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    /* The swizzle atoms must sit on 1024-byte boundaries; the launch asks for 1024 bytes of slack. */
    const unsigned raw = static_cast<unsigned>(__cvta_generic_to_shared(smem_raw));
    unsigned char *smem = smem_raw + ((1024 - (raw & 1023)) & 1023);
    const unsigned sbase = raw + ((1024 - (raw & 1023)) & 1023);
    const int tid = threadIdx.x, wg = tid / 128, warp = (tid % 128) / 32, lane = tid % 32;
    int bx, by;
    if (!block_coords<SUPER>(cdiv(N, BN), cdiv(M, BM), bx, by))
        return;
    const int row0 = by * BM, col0 = bx * BN;
    /* Elements between stored rows: the packed ones where every row is (LDP), so that packed code is
     * the code it was, or where PACK_LD packed the matrix; otherwise the layout's (A's rows are of M
     * under OP_TA, B's of K under OP_TB). */
    const int ld_a = PACKLD_A || LDP ? (OP_TA ? M : K) : lda, ld_b = PACKLD_B || LDP ? (OP_TB ? K : N) : ldb;
    const int ld_c = LDP ? N : ldc;
#if PACKLD_A || PACKLD_B
    /* PACK_LD: the operands pack_ld copied packed into W, read from there (rows their length apart). */
    if (PACKLD_A)
        A = packed_at(W, 0);
    if (PACKLD_B)
        B = packed_at(W, pack_wb(M, K));
#endif
    /* Split-K: this split's k-tiles [kt0, kt1) run as a GEMM of their own, A and B offset to the
     * slice's first k and K its length, so the pipelines below are the code without split-K (the
     * leading dimensions were taken from the whole K above). */
    if constexpr (SPLITK > 1) {
        int kt0, kt1;
        split_range(K, kt0, kt1);
        const int k0 = kt0 * BK;
        A += OP_TA ? (idx_t)k0 * ld_a : k0;
        B += OP_TB ? k0 : (idx_t)k0 * ld_b;
        K = min(K, kt1 * BK) - k0;
    }

    /* part: the tensor cores' sum (of a chain under promotion); corr: the correction products
     * apart from it (3xTF32 without FOLD); total: the promoted sum in FP32 registers. */
    float part[NACC], corr[SEPC ? NACC : 1], total[PROM ? NACC : 1];
#pragma unroll
    for (int i = 0; i < NACC; ++i) {
        part[i] = 0.0f;
        corr[SEPC ? i : 0] = 0.0f;
        total[PROM ? i : 0] = 0.0f;
    }
    /* The warpgroups' chains are offset by half a chain, so that one warpgroup's promotion (its
     * wgmmas drained, then its adds) overlaps the other's wgmmas on the tensor cores. */
    const int phase = wg * (KPT / 2);
    Staging st;
    AFrag af; /* AREG: A's operand of the k-tile in registers (unused otherwise) */
    const int nk = cdiv(K, BK);
    if constexpr (SWAP) {
        /* Raw stage j % R receives k-tile j, copied by cp.async group j: the prologue issues k-tiles
         * 0 .. R - 2, k-tile kt issues kt + R - 1 into the stage of kt - 1, whose wgmmas (they read
         * it under ROUND 0) every warpgroup has waited for before kt's barrier, and whose split and
         * fragment reads (the other modes) ended a k-tile earlier. So R - 2 k-tiles of loads are in
         * flight beyond the next one. The fragments of kt + 1 go into the other of two buffers
         * while the wgmmas of kt run, and kt + 1's wgmmas are issued before kt's are waited for:
         * each k-tile waits for the one before it (wait_group 1), not for itself. */
        unsigned char *raw = smem + STAGES * STAGE;
        const unsigned rbase = sbase + STAGES * STAGE;
        constexpr int RAW_STAGE = (BM + BN) * ROW_BYTES;
#pragma unroll
        for (int j = 0; j < RAW_STAGES - 1; ++j) {
            if (j < nk)
                Staging::copy(raw + j * RAW_STAGE, A, B, M, N, K, ld_a, ld_b, row0, col0, j * BK, tid);
            cp_async_commit();
        }
        cp_async_wait<RAW_STAGES - 2>();
        fence_async_smem(); /* the copies are read by the tensor cores under ROUND 0 */
        __syncthreads();
        BFrag bf[2];
        if (nk > 0) {
            if constexpr (SPLITA)
                split_a(smem, raw, tid);
            bf[0].load(raw, wg, warp, lane);
        }
        if constexpr (SPLITA) {
            fence_async_smem();
            __syncthreads();
        }
        const SwapPipe pipe{smem, raw,  sbase, rbase, A,    B,    M,   N,     K,
                            ld_a, ld_b, row0,  col0,  tid,  wg,   warp, lane, nk, phase};
        int kt = 0;
        for (; kt + 1 < nk; kt += 2) {
            pipe.step<0>(kt, part, corr, total, bf);
            pipe.step<1>(kt + 1, part, corr, total, bf);
        }
        if (kt < nk)
            pipe.step<0>(kt, part, corr, total, bf);
    } else if constexpr (RAW_STAGES == 0) {
        if (nk > 0) {
            st.load(A, B, M, N, K, ld_a, ld_b, row0, col0, 0, tid);
            st.store(smem, tid);
            if (PREFETCH && nk > 1)
                st.load(A, B, M, N, K, ld_a, ld_b, row0, col0, BK, tid);
        }
        fence_async_smem();
        __syncthreads();
        /* Stage (kt + 1) % STAGES was last read by the wgmmas of k-tile kt + 1 - STAGES: waited for
         * by every warpgroup (wait_group STAGES - 2, then the barrier) at the end of k-tile kt - 1.
         * The registers of st hold k-tile kt + 1 when it is stored: loaded here (PREFETCH = 0: in
         * flight only while the wgmmas are issued) or after the stores of the k-tile before
         * (PREFETCH = 1: in flight through that k-tile's wait and barrier too). */
        for (int kt = 0; kt < nk; ++kt) {
            const int cur = kt % STAGES;
            const bool more = kt + 1 < nk;
            if (!PREFETCH && more)
                st.load(A, B, M, N, K, ld_a, ld_b, row0, col0, (kt + 1) * BK, tid);
            wgmma_fence();
            mma_stage(part, corr, sbase + cur * STAGE, wg, PROM && kt > 0 && (kt + phase) % KPT == 0, af);
            wgmma_commit();
            if (more) {
                st.store(smem + ((kt + 1) % STAGES) * STAGE, tid);
                if (PREFETCH && kt + 2 < nk)
                    st.load(A, B, M, N, K, ld_a, ld_b, row0, col0, (kt + 2) * BK, tid);
                fence_async_smem();
            }
            settle<STAGES - 2>(PROM && (!more || (kt + 1 + phase) % KPT == 0), part, corr, total);
            __syncthreads();
        }
    } else {
        /* Raw stage j % RAW_STAGES receives k-tile j, copied by cp.async group j: the prologue
         * issues k-tiles 0 .. R - 1, k-tile kt issues kt + R into the stage k-tile kt left (split
         * before the barrier that ended k-tile kt - 1), so R k-tiles of loads are in flight while
         * the wgmmas of kt run. Empty groups past the end keep the count: k-tile j's copies are in
         * once at most R - 1 groups are pending after the j + R groups before them are committed. */
        unsigned char *raw = smem + STAGES * STAGE;
        constexpr int RAW_STAGE = (BM + BN) * ROW_BYTES;
#pragma unroll
        for (int j = 0; j < RAW_STAGES; ++j) {
            if (j < nk)
                Staging::copy(raw + j * RAW_STAGE, A, B, M, N, K, ld_a, ld_b, row0, col0, j * BK, tid);
            cp_async_commit();
        }
        cp_async_wait<RAW_STAGES - 1>();
        __syncthreads();
        if (nk > 0)
            split_next(st, af, smem, raw, wg, warp, lane, tid);
        fence_async_smem();
        __syncthreads();
        /* The split of k-tile kt + 1 goes into operand stage (kt + 1) % STAGES, last read by the
         * wgmmas of kt + 1 - STAGES: each warpgroup waits for them (at most STAGES - 1 groups, kt's
         * among them, still running) and the barrier joins the warpgroups, so the tensor cores
         * work on kt (and, with three stages, kt - 1) through the split. Under AREG the registers
         * of A's fragments are the tensor cores' until their wgmmas are done, so every k-tile
         * ends with wait_group 0; the next k-tile's A is read from the raw stage into other
         * registers during the split of B and split in registers only once the wgmmas are done. */
        for (int kt = 0; kt < nk; ++kt) {
            const bool more = kt + 1 < nk;
            if (kt + RAW_STAGES < nk)
                Staging::copy(raw + (kt % RAW_STAGES) * RAW_STAGE, A, B, M, N, K, ld_a, ld_b, row0, col0,
                              (kt + RAW_STAGES) * BK, tid);
            cp_async_commit();
            if constexpr (AREG)
                af.split();
            wgmma_fence();
            mma_stage(part, corr, sbase + (kt % STAGES) * STAGE, wg, PROM && kt > 0 && (kt + phase) % KPT == 0, af);
            wgmma_commit();
            if (more) {
                if constexpr (!AREG)
                    wgmma_wait<STAGES - 1>();
                cp_async_wait<RAW_STAGES - 1>(); /* k-tile kt + 1 is in its raw stage (this thread's copies) */
                __syncthreads();                 /* ... everyone's; and every warpgroup is done with the stage */
                split_next(st, af, smem + ((kt + 1) % STAGES) * STAGE, raw + ((kt + 1) % RAW_STAGES) * RAW_STAGE, wg, warp,
                           lane, tid);
                fence_async_smem();
            }
            /* A chain's promotion after the split, so that the split overlaps its last wgmmas too. */
            settle<AREG ? 0 : STAGES - 1>(PROM && (!more || (kt + 1 + phase) % KPT == 0), part, corr, total);
            if (more)
                __syncthreads();
        }
    }
    wgmma_wait<0>();
    /* The result: the promoted total, or without promotion big*big plus the correction. */
    float *acc = part;
    if constexpr (PROM) {
        acc = total;
    } else if constexpr (SEPC) {
#pragma unroll
        for (int i = 0; i < NACC; ++i)
            part[i] += corr[SEPC ? i : 0];
    }

    /* The accumulator layout of wgmma .f32 (PTX ISA): in warp w of the warpgroup, register
     * 4j + 2h + e holds row 16w + 8h + lane / 4, column 8j + 2(lane % 4) + e. */
    const T beta_c = beta;
    const int g = lane / 4, t = lane % 4;
    /* Split-K: where this split does not write the tile (splitk.cuh), it adds its part into C. */
    const int tile = SPLIT_SERIAL ? by * cdiv(N, BN) + bx : 0;
    const bool plain = split_begin(tile);
    auto put = [&](int gr, int gc, const float *v) {
        if (SPLITK > 1 && !plain) {
#pragma unroll
            for (int e = 0; e < 2; ++e)
                if (gc + e < N)
                    split_put(C, W, (idx_t)gr * N + gc + e, M, N, v[e], alpha);
        } else {
            store_pair(C, gr, gc, N, ld_c, v, alpha, beta_c);
        }
    };
    if constexpr (SWAP) {
        /* D = B^T A^T: register 4j + 2h + e holds D's row 16w + 8h + g, column n = 16w + 2g + h of
         * the warpgroup's 64 (BFrag), and D's column 8j + 2t + e, row m of C's tile: for each j and
         * e a thread writes columns n and n + 1 of one row of C. */
        const int gc = col0 + wg * 64 + warp * 16 + 2 * g;
#pragma unroll
        for (int j = 0; j < BM / 8; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int gr = row0 + 8 * j + 2 * t + e;
                if (gr >= M)
                    continue;
                const float v[2] = {acc[4 * j + e], acc[4 * j + 2 + e]};
                put(gr, gc, v);
            }
    } else {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int gr = row0 + wg * 64 + warp * 16 + 8 * h + g;
            if (gr >= M)
                continue;
#pragma unroll
            for (int j = 0; j < BN / 8; ++j) {
                const int gc = col0 + 8 * j + 2 * t;
                put(gr, gc, &acc[4 * j + 2 * h]);
            }
        }
    }
    split_end(tile);
}
