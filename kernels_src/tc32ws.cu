/* tc32ws.cu — FP32 GEMM on Hopper's tensor cores (wgmma, sm_90a) as 3xTF32 (PASSES = 3, class f32)
 * or 1xTF32 (PASSES = 1, class tf32), fed by the bulk tensor copy engine (TMA) and warp-specialised:
 * one producer warpgroup whose single thread issues the copies, and WGS consumer warpgroups that
 * only issue wgmmas (and, with B's operand in registers, read and split its fragments). tc32.cu runs
 * the same arithmetic with every thread loading, splitting and multiplying; its counters said the
 * loads and the split stood in the tensor cores' way (docs/NOTES.md, "The Hopper pipeline"). Here:
 *
 * - The operands' roles are swapped as in tc32's SWAP: the tensor cores compute C's tile transposed,
 *   D = B^T A^T. Consumer warpgroup w owns 64 columns of C's BM x BN tile (BN = 64 WGS): wgmma's M
 *   is those columns, its N is BM, and A's tile is a shared-memory operand, K-major as wgmma wants
 *   TF32. B's operand (BREG): 0 from shared memory too, B^T rounded and split into K-major rows in
 *   the workspace by a first launch (prep_bt), so the consumers only issue wgmmas; 1 from registers,
 *   each consumer thread reading its fragments from B's stage as stored and splitting them (big =
 *   rna(x), small = rna(x - big)), so B is never copied (a skinny product's large weights); 2 (1xTF32)
 *   as 0, but in op NT with 16-byte rows copied as stored with the copy engine's TF32 type, which
 *   rounds (switch B_RAW).
 *   Measured (H200, 4096^3 3xTF32): 0 runs 2.18x strict SGEMM, 1 1.87x; the register operand's
 *   wgmmas of N = 128 issue less densely (docs/NOTES.md).
 * - A reaches the copy engine in the tensor cores' form: prep_a writes A rounded to TF32, and for
 *   3xTF32 its remainder, as K-major rows (transposed when A is stored K x M) of rup(K, 4) into the
 *   workspace, whatever A's op, ld or alignment; the cost is one pass over A. APRE 0 (1xTF32, A
 *   stored M x K with 16-byte rows; APRE 2, the default, where it can) copies A as stored with the
 *   copy engine's TF32 type instead. Under BREG 1, B's rows that are not 16-byte aligned are first
 *   copied padded into the workspace (prep_b, switch PACKB).
 * - A ring of STAGES stages of one k-tile (BK = 32: one 128-byte swizzled row per tile row) each:
 *   [A big][A small][B (big)][B small], filled by box copies, handed over by mbarriers (tma.cuh).
 * - Persistent: the grid is at most what the GPU keeps resident; each block strides over the work
 *   items of its product, GROUP rows of tiles at a time, so that the blocks running together share
 *   A's rows and B's columns in L2. The ring runs on across items: the producer fetches the next
 *   item's k-tiles while the consumers finish and store the last. SPLITK > 1 cuts K into slices that
 *   are items of their own (skinny shapes); C is scaled by beta first and the slices add with atomics.
 * - KPROMOTE > 0: the tensor cores sum KPROMOTE / BK k-tiles (all three products into one
 *   accumulator), then ordinary FP32 adds fold the chain into total (tc32.cu's promotion with FOLD;
 *   without it 3xTF32 errs past class f32 at K = 4096). The consumers' chains are offset by half a
 *   chain, so one drains while the other multiplies.
 *
 * B's stage under BREG 1: stored N x K (op NT, X W^T) as BN rows of 128 bytes (one box); stored K x N
 * as BN / 32 blocks of 32 k rows x 128 bytes (boxes of 32 x 32). Every box lands with the 128-byte
 * swizzle: 16-byte chunk c of row r at c ^ (r % 8). A thread's fragment (PTX ISA, "Register
 * Fragments" for wgmma .tf32 from registers): in warp q of the warpgroup, a[0..3] = rows 16q + g +
 * 8 (i % 2), k t + 4 (i / 2) of the k-step (g = lane / 4, t = lane % 4). Reading N x K, row n = 16q
 * + g (+ 8) and chunk 2s ^ (n % 8): eight rows of distinct n % 8, all 32 banks. Reading K x N, row
 * k = 8s + t, chunk ((n % 32) / 4) ^ t: two lanes a bank.
 *
 * Any M, N, K (the copy engine reads zeros past the edges, stores past them are skipped), every op,
 * leading dimension and strided batch. Examples: configs/tc32ws_3x.json, tc32ws_3x_rs.json,
 * tc32ws_1x.json, tc32ws_1x_nt.json.
 *
 * engine:template
{
  "summary": "FP32 GEMM as 3xTF32 or 1xTF32 on wgmma (sm_90a), TMA-fed, warp-specialised, persistent",
  "dtypes": ["f32"],
  "pdl": true,
  "arch_specific": true,
  "peak": "tensor",
  "params": {
    "BM": {"default": 128, "values": [64, 128, 256], "doc": "rows of C per tile: wgmma's N (the operands' roles swapped)"},
    "WGS": {"default": 2, "values": [1, 2], "doc": "consumer warpgroups, each 64 columns of C: BN = 64 WGS"},
    "PASSES": {"default": 3, "values": [1, 3], "doc": "TF32 products per element pair: 3 (big*big + big*small + small*big, FP32 accuracy) or 1 (TF32 accuracy, declare \"accuracy\": \"tf32\")"},
    "STAGES": {"default": 4, "min": 2, "max": 8, "doc": "k-tiles in the shared-memory ring: STAGES - 1 copies in flight ahead of the consumers"},
    "KPROMOTE": {"default": 128, "values": [0, 32, 64, 128, 256], "doc": "elements of K the tensor cores sum before FP32 adds fold the partial sum into total (0: the tensor cores sum all of K)"},
    "GROUP": {"default": 8, "min": 1, "max": 64, "doc": "rows of tiles a persistent block's schedule walks together (L2 reuse of B's columns)"},
    "BREG": {"default": 1, "values": [0, 1, 2], "doc": "B's operand: 1 from registers (each consumer thread reads its fragments from B's stage as stored and splits them); 0 from shared memory like A's (B^T rounded and split into K-major rows in the workspace by a first launch, prep_bt): no fragment loads; 2 (1xTF32, B stored N x K with 16-byte rows) from shared memory, copied as stored with the copy engine's TF32 type where B is stored N x K with 16-byte rows (op NT), else as 0"},
    "SPLITK": {"default": 1, "min": 1, "max": 32, "doc": "K cut into SPLITK slices, each a work item of its own (for shapes whose tiles leave SMs idle): C = beta C first (scale_c), then every slice adds alpha times its part with atomics (splitk.cuh's mode 0)"},
    "APRE": {"default": 2, "values": [0, 1, 2], "doc": "how A reaches the copy engine: 1 rounded (and split) into K-major rows in the workspace by a first launch; 0 as stored, with the copy engine's TF32 type rounding it (1xTF32, A stored M x K with 16-byte rows); 2 (default) 0 where it can, else 1"},
    "PDL": {"default": 1, "values": [0, 1, 2], "doc": "programmatic dependent launch on sm_90+ (gemm_common.cuh): 0 off, 1 on, 2 decided from the grid (plan_use_pdl)"}
  },
  "derived": {
    "BN": "64 * WGS",
    "THREADS": "128 * (WGS + 1)",
    "PARTS": "PASSES == 3 ? 2 : 1",
    "WN": "BM",
    "STAGE_BYTES": "(PARTS * BM + (BREG ? 1 : PARTS) * BN) * 128"
  },
  "constraints": [
    {"rule": "ARCH_SPECIFIC == 1 && ARCH == 90", "why": "wgmma and setmaxnreg exist only on the architecture-specific target sm_90a (--arch sm_90a)"},
    {"rule": "BM <= 128 || KPROMOTE == 0", "why": "a consumer holds BM / 2 accumulator registers, twice with promotion, plus two k-tiles of fragments: at 256 only without promotion (3xTF32 then errs past class f32 at long K: the tensor cores' sums truncate)"},
    {"rule": "KPROMOTE % 32 == 0", "why": "promotion happens between k-tiles"},
    {"rule": "APRE != 0 || PASSES == 1", "why": "3xTF32 needs A's remainder, which only the first launch writes"},
    {"rule": "BREG != 2 || PASSES == 1", "why": "3xTF32 needs B's remainder, which only prep_bt writes (BREG 0) or the consumers compute (BREG 1)"}
  ],
  "requires": [
    {"rule": "APRE != 0 || (PASSES == 1 && TA == 0 && LDA % 4 == 0 && ALIGN_A >= 4 && (BATCH == 1 || (SA > 0 && SA % 4 == 0)))", "why": "APRE 0 copies A as stored (1xTF32): rows of K, 16-byte aligned"},
    "split_k_packed_c"
  ],
  "switches": {
    "A_RAW_OK": "PASSES == 1 && TA == 0 && LDA % 4 == 0 && ALIGN_A >= 4 && (BATCH == 1 || (SA > 0 && SA % 4 == 0))",
    "PRE_A": "APRE == 1 || (APRE == 2 && !A_RAW_OK)",
    "OP_TA": "TA",
    "OP_TB": "TB",
    "LDP": "LD_PACKED",
    "BATCHED": "BATCH > 1",
    "B_RAW": "BREG == 2 && TB == 1 && LDB % 4 == 0 && ALIGN_B >= 4 && (BATCH == 1 || (SB > 0 && SB % 4 == 0))",
    "B_PRE": "BREG == 0 || (BREG == 2 && !B_RAW)",
    "PACKB": "BREG == 1 && (LDB % 4 != 0 || ALIGN_B < 4 || (BATCH > 1 && (SB <= 0 || SB % 4 != 0)))"
  },
  "let": {
    "KP": "rup(K, 4)",
    "BL": "TB ? K : N",
    "BR": "TB ? N : K",
    "BLP": "rup(BL, 4)",
    "B_AT": "PRE_A ? PARTS * BATCH * M * KP : 0",
    "TILES": "cdiv(N, BN) * cdiv(M, BM)",
    "SPLITS": "K > 0 ? cdiv(cdiv(K, 32), cdiv(cdiv(K, 32), SPLITK)) : 1"
  },
  "traffic": "BATCH * (PARTS * M * KP * cdiv(N, BN) + (BREG ? 1 : PARTS) * K * N * cdiv(M, BM) + M * N) + (PRE_A ? BATCH * (1 + PARTS) * M * K : 0) + (PACKB ? 2 * BATCH * K * N : 0) + (B_PRE ? BATCH * (1 + PARTS) * N * K : 0)",
  "workspace": "B_AT + (PACKB ? BATCH * BR * BLP : 0) + (B_PRE ? PARTS * BATCH * N * KP : 0)",
  "compile_cost": "300",
  "model": {"tile": ["BM", "BN", 32], "atomics": "SPLITS > 1 ? M * N * SPLITS : 0"},
  "launches": [
    {"kernel": "prep_a", "if": "PRE_A && K > 0", "grid": ["cdiv(KP, 32)", "cdiv(M, 32)", "BATCH"], "block": [32, 8, 1], "smem": "0", "traffic": "BATCH * M * (K + PARTS * KP)"},
    {"kernel": "prep_bt", "if": "B_PRE && K > 0", "grid": ["cdiv(KP, 32)", "cdiv(N, 32)", "BATCH"], "block": [32, 8, 1], "smem": "0", "traffic": "BATCH * N * (K + PARTS * KP)"},
    {"kernel": "prep_b", "if": "PACKB && K > 0", "grid": ["cdiv(BLP, 128)", "min(cdiv(BR, 4), 65535)", "BATCH"], "block": [128, 1, 1], "smem": "0", "traffic": "BATCH * BR * (BL + BLP)"},
    {"kernel": "scale_c", "if": "SPLITS > 1", "grid": ["cdiv(M * N, 256)", 1, 1], "block": [256, 1, 1]},
    {"kernel": "gemm", "grid": ["TILES * SPLITS", 1, "BATCH"], "block": ["THREADS", 1, 1], "persistent": true,
     "smem": "STAGES * STAGE_BYTES + 1024"}
  ],
  "tensor_maps": [
    {"tensor": "W", "if": "PRE_A", "dims": ["KP", "M", "BATCH"], "strides": ["KP", "M * KP"], "box": [32, "BM", 1]},
    {"tensor": "A", "if": "!PRE_A", "type": "tf32", "dims": ["K", "M", "BATCH"], "strides": ["LDA", "BATCH > 1 ? SA : LDA * M"], "box": [32, "BM", 1]},
    {"tensor": "W", "if": "PASSES == 3", "offset": "BATCH * M * KP", "dims": ["KP", "M", "BATCH"], "strides": ["KP", "M * KP"], "box": [32, "BM", 1]},
    {"tensor": "B", "if": "BREG == 1 && !PACKB", "dims": ["BL", "BR", "BATCH"], "strides": ["LDB", "BATCH > 1 ? SB : LDB * BR"], "box": [32, "TB ? BN : 32", 1]},
    {"tensor": "W", "if": "PACKB", "offset": "B_AT", "dims": ["BL", "BR", "BATCH"], "strides": ["BLP", "BR * BLP"], "box": [32, "TB ? BN : 32", 1]},
    {"tensor": "W", "if": "B_PRE", "offset": "B_AT", "dims": ["KP", "N", "BATCH"], "strides": ["KP", "N * KP"], "box": [32, "BN", 1]},
    {"tensor": "W", "if": "B_PRE && PASSES == 3", "offset": "B_AT + BATCH * N * KP", "dims": ["KP", "N", "BATCH"], "strides": ["KP", "N * KP"], "box": [32, "BN", 1]},
    {"tensor": "B", "if": "B_RAW", "type": "tf32", "dims": ["K", "N", "BATCH"], "strides": ["LDB", "BATCH > 1 ? SB : LDB * N"], "box": [32, "BN", 1]}
  ]
}
*/
#include "gemm_common.cuh"
#include "tma.cuh"

constexpr int BK = 32;
#include "splitk.cuh"
constexpr int NACC = WN / 2; /* accumulator registers per thread */
#include "wgmma_tf32.cuh"
#include "ws_ring.cuh"

constexpr bool PROM = KPROMOTE > 0;
constexpr int KPT = PROM ? KPROMOTE / BK : 1; /* k-tiles per promotion chain */
constexpr int A_BYTES = BM * 128;             /* one part (big or small) of A's tile */
constexpr int B_OFF = PARTS * A_BYTES;        /* B's tile within a stage */
constexpr int CONSUMER_REGS = WGS == 2 ? 232 : 240, PRODUCER_REGS = 40;
static_assert(STAGE_BYTES % 1024 == 0, "stages keep the swizzle atoms 1024-byte aligned");

/* A (prep_a) or B^T (prep_bt: BREG 0) as K-major rows of KP = rup(K, 4) in the workspace: rounded
 * to TF32 (big), and for 3xTF32 the remainder rounded likewise (small) BATCH rows KP elements
 * further; zeros from K to KP. Element (r, k) of the rows x K operand is x[k ld + r] where TR (A
 * stored K x M, B stored K x N), else x[r ld + k]. A block moves a 32 x 32 tile through shared
 * memory, so that both the reads (along the stored rows) and the writes (along k) are coalesced. */
template <bool TR> __device__ __forceinline__ void prep_kmajor(const float *x, int rows, int K, int ld, long long sx, float *out)
{
    __shared__ float tile[32][33];
    const int kp = rup(K, 4), k0 = blockIdx.x * 32, r0 = blockIdx.y * 32;
    const long long b = blockIdx.z;
    x += b * sx;
    const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int j = ty + 8 * i;
        /* Row r0 + j, column k0 + tx; TR: stored row k0 + j, column r0 + tx. */
        const int r = TR ? r0 + tx : r0 + j, k = TR ? k0 + j : k0 + tx;
        const float v = r < rows && k < K ? x[TR ? (long long)k * ld + r : (long long)r * ld + k] : 0.0f;
        if (TR)
            tile[tx][j] = v;
        else
            tile[j][tx] = v;
    }
    __syncthreads();
    float *big = out + b * rows * kp, *small = out + ((long long)gridDim.z + b) * rows * kp;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int j = ty + 8 * i, r = r0 + j, k = k0 + tx;
        if (r >= rows || k >= kp)
            continue;
        unsigned hi, lo;
        tf32_split(tile[j][tx], hi, lo);
        big[(long long)r * kp + k] = __uint_as_float(hi);
        if (PASSES == 3)
            small[(long long)r * kp + k] = __uint_as_float(lo);
    }
}

/* Where B's part of the workspace starts (the template's B_AT): after A's parts. */
__device__ __forceinline__ long long b_at(int M, int K) { return PRE_A ? (long long)PARTS * gridDim.z * M * rup(K, 4) : 0; }

extern "C" __global__ void __launch_bounds__(256) prep_a(GEMM_ARGS)
{
    grid_dep_sync();
    prep_kmajor<OP_TA>(A, M, K, LD_A, sa, W);
}

extern "C" __global__ void __launch_bounds__(256) prep_bt(GEMM_ARGS)
{
    grid_dep_sync();
    prep_kmajor<!OP_TB>(B, N, K, LD_B, sb, W + b_at(M, K));
}

/* prep_b (PACKB: B's rows not 16-byte aligned, or its batch stride not): B as stored, its rows
 * (BL = K or N elements) padded to rup(BL, 4) with zeros, into W after A's parts (tma.cuh's
 * pad_rows; the plan's grid gives a block 4 rows at a time, the 16 bytes a thread has in flight:
 * one row a thread copied 7671 x 14547 in 1.29 ms of 63x14547x7671's 1.31). */
extern "C" __global__ void __launch_bounds__(128) prep_b(GEMM_ARGS)
{
    grid_dep_sync();
    const int bl = OP_TB ? K : N, br = OP_TB ? N : K, blp = rup(bl, 4);
    pad_rows<4>(B, sb, bl, br, LD_B, blp, W + b_at(M, K));
}

/* Work item w of a product: split w / tiles of tile w % tiles (the splits outermost, so that the
 * blocks running together share A's rows and B's columns of one k-range), its k-tiles [kt0, kt1). */
__device__ __forceinline__ void item_at(int w, int tiles, int gx, int gy, int nk, int &bm, int &bn, int &kt0, int &kt1)
{
    tile_at(w % tiles, gx, gy, bm, bn);
    if constexpr (SPLITK == 1) {
        kt0 = 0;
        kt1 = nk;
    } else {
        const int per = cdiv(nk, SPLITK);
        kt0 = min(nk, (w / tiles) * per);
        kt1 = min(nk, kt0 + per);
    }
}

/* A consumer thread's fragments of B for one k-tile: per k-step s, big (or rounded) and small. */
struct Frag {
    unsigned big[4][4], small[PASSES == 3 ? 4 : 1][4];

    /* From B's stage at sb (shared address): rows n = 16 q + g + 8 (i % 2) of this warpgroup's 64
     * columns (col: their first within the tile), k = 8 s + t + 4 (i / 2). */
    __device__ __forceinline__ void load(unsigned sb, int col, int q, int g, int t)
    {
#pragma unroll
        for (int s = 0; s < 4; ++s)
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int n = col + 16 * q + g + 8 * (i % 2), k = 8 * s + t + 4 * (i / 2);
                const unsigned off = OP_TB ? n * 128 + ((((k >> 2) ^ (n & 7))) << 4) + ((k & 3) << 2)
                                           : (n >> 5) * 4096 + k * 128 + (((((n & 31) >> 2) ^ (k & 7))) << 4) + ((n & 3) << 2);
                float x;
                asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(x) : "r"(sb + off));
                unsigned lo;
                tf32_split(x, big[s][i], lo);
                if constexpr (PASSES == 3)
                    small[s][i] = lo;
            }
    }
};

/* One k-tile's wgmmas: A's parts at sa (shared address) as the descriptor operand. fresh: the
 * first ignores the accumulator (a chain's start). */
__device__ __forceinline__ void mma_ktile(float (&d)[NACC], const Frag &f, unsigned sa, bool fresh)
{
#pragma unroll
    for (int s = 0; s < 4; ++s) {
        wgmma_ra(d, f.big[s], desc(sa + s * 32), fresh && s == 0 ? 0 : 1);
        if constexpr (PASSES == 3) {
            wgmma_ra(d, f.big[s], desc(sa + A_BYTES + s * 32), 1);
            wgmma_ra(d, f.small[s], desc(sa + s * 32), 1);
        }
    }
}

/* The same with B^T's parts from shared memory too (BREG 0): this warpgroup's 64 rows of B^T big at
 * sb (small BN rows further), A's parts at sa. */
__device__ __forceinline__ void mma_ktile_ss(float (&d)[NACC], unsigned sb, unsigned sa, bool fresh)
{
#pragma unroll
    for (int s = 0; s < 4; ++s) {
        wgmma(d, desc(sb + s * 32), desc(sa + s * 32), fresh && s == 0 ? 0 : 1);
        if constexpr (PASSES == 3) {
            wgmma(d, desc(sb + s * 32), desc(sa + A_BYTES + s * 32), 1);
            wgmma(d, desc(sb + BN * 128 + s * 32), desc(sa + s * 32), 1);
        }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    gemm(GEMM_ARGS, TMAP_ARG(tmap_a), TMAP_ARG(tmap_araw), TMAP_ARG(tmap_as), TMAP_ARG(tmap_b), TMAP_ARG(tmap_bp),
         TMAP_ARG(tmap_btb), TMAP_ARG(tmap_bts), TMAP_ARG(tmap_btr))
{
    grid_dep_sync();
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    const unsigned raw = smem_addr(smem_raw);
    const unsigned sbase = raw + ((1024 - (raw & 1023)) & 1023); /* swizzle atoms on 1024-byte boundaries */
    const int wg = threadIdx.x / 128, q = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
    const unsigned full0 = smem_addr(&full[0]), empty0 = smem_addr(&empty[0]);
    ring_init(full0, empty0, STAGES, 4 * WGS); /* one arrival per consumer warp reading a stage */
    const int gx = cdiv(N, BN), gy = cdiv(M, BM), tiles = gx * gy, nk = cdiv(K, BK);
    const int items = tiles * (SPLITK == 1 ? 1 : cdiv(nk, cdiv(nk, SPLITK)));
    const int b = blockIdx.z;

    if (wg == 0) {
        /* The producer: one thread walks the block's tiles and k-tiles, a stage at a time. */
        if constexpr (WGS == 2)
            regs_give<PRODUCER_REGS>();
        if (threadIdx.x != 0)
            return;
        const TensorMap &ma = PRE_A ? tmap_a : tmap_araw;
        const TensorMap &mb = PACKB ? tmap_bp : tmap_b;
        unsigned it = 0;
        for (int w = blockIdx.x; w < items; w += gridDim.x) {
            int bm, bn, kt0, kt1;
            item_at(w, tiles, gx, gy, nk, bm, bn, kt0, kt1);
            for (int kt = kt0; kt < kt1; ++kt, ++it) {
                const unsigned s = it % STAGES, round = it / STAGES;
                const unsigned st = sbase + s * STAGE_BYTES;
                mbar_wait(empty0 + 8 * s, (round & 1) ^ 1);
                mbar_expect(full0 + 8 * s, STAGE_BYTES);
                tma_load(st, ma, kt * BK, bm * BM, b, full0 + 8 * s);
                if constexpr (PASSES == 3)
                    tma_load(st + A_BYTES, tmap_as, kt * BK, bm * BM, b, full0 + 8 * s);
                if constexpr (BREG != 1) {
                    tma_load(st + B_OFF, B_RAW ? tmap_btr : tmap_btb, kt * BK, bn * BN, b, full0 + 8 * s);
                    if constexpr (PASSES == 3)
                        tma_load(st + B_OFF + BN * 128, tmap_bts, kt * BK, bn * BN, b, full0 + 8 * s);
                } else if constexpr (OP_TB) {
                    tma_load(st + B_OFF, mb, kt * BK, bn * BN, b, full0 + 8 * s);
                } else {
#pragma unroll
                    for (int j = 0; j < BN / 32; ++j)
                        tma_load(st + B_OFF + j * 4096, mb, bn * BN + 32 * j, kt * BK, b, full0 + 8 * s);
                }
            }
        }
        return;
    }

    /* The consumers. */
    if constexpr (WGS == 2)
        regs_take<CONSUMER_REGS>();
    const int cw = wg - 1, g = lane / 4, t = lane % 4;
    const int phase = cw * (KPT / 2); /* chains offset by half a chain between the consumers */
    T *c = C;
#if BATCHED
    c += (long long)b * sc;
#endif
    float acc[NACC], total[PROM ? NACC : 1];
    Frag f[2];
    unsigned it = 0;
    for (int w = blockIdx.x; w < items; w += gridDim.x) {
        int bm, bn, kt0, kt1;
        item_at(w, tiles, gx, gy, nk, bm, bn, kt0, kt1);
        if (kt0 == kt1)
            continue; /* a split past the end of K: the producer skips it too */
#pragma unroll
        for (int i = 0; i < NACC; ++i)
            total[PROM ? i : 0] = 0.0f;
        StageHold hold; /* the stage before, until a wait says its wgmmas are done */
        /* One k-tile with fragment buffer P: k-tiles alternate buffers, so the fragments of kt are
         * read while the wgmmas of kt - 1, which read the other buffer, run. */
        auto step = [&](int kt, Frag &fr) {
            const unsigned s = it % STAGES, round = it / STAGES;
            const unsigned st = sbase + s * STAGE_BYTES;
            mbar_wait(full0 + 8 * s, round & 1);
            if constexpr (BREG == 1)
                fr.load(st + B_OFF, 64 * cw, q, g, t);
            const bool fresh = kt == kt0 || (PROM && (kt - kt0 + phase) % KPT == 0);
            wgmma_fence();
            if constexpr (BREG == 1)
                mma_ktile(acc, fr, st, fresh);
            else
                mma_ktile_ss(acc, st + B_OFF + cw * 64 * 128, st, fresh);
            wgmma_commit();
            const bool chain_end = kt + 1 == kt1 || (PROM && (kt + 1 - kt0 + phase) % KPT == 0);
            hold.committed(s, chain_end, empty0, lane);
            if (PROM && chain_end) {
#pragma unroll
                for (int i = 0; i < NACC; ++i)
                    total[PROM ? i : 0] += acc[i];
            }
            ++it;
        };
        int kt = kt0;
        for (; kt + 1 < kt1; kt += 2) {
            step(kt, f[0]);
            step(kt + 1, f[1]);
        }
        if (kt < kt1)
            step(kt, f[0]);

        /* The tile: register 4j + 2h + e holds D's row 16q + 8h + g (C's column) and column
         * 8j + 2t + e (C's row). */
        const float *res = PROM ? total : acc;
        const int n = bn * BN + 64 * cw + 16 * q + g;
#pragma unroll
        for (int j = 0; j < BM / 8; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int m = bm * BM + 8 * j + 2 * t + e;
                if (m >= M)
                    continue;
#pragma unroll
                for (int h = 0; h < 2; ++h)
                    if (n + 8 * h < N) {
                        if constexpr (SPLITK > 1)
                            atomicAdd(&c[(long long)m * LD_C + n + 8 * h], alpha * res[4 * j + 2 * h + e]);
                        else
                            store_c<1>(&c[(long long)m * LD_C + n + 8 * h], &res[4 * j + 2 * h + e], alpha, beta);
                    }
            }
    }
}
