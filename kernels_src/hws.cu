/* hws.cu — BF16 and FP16 GEMM on Hopper's tensor cores (wgmma, sm_90a), fed by the bulk tensor copy
 * engine (TMA) and warp-specialised: tc32ws.cu's pipeline (the ring of stages and its barriers in
 * tma.cuh, one producer thread, consumer warpgroups that only issue wgmmas, persistent blocks over
 * grouped tiles) with the 16-bit types' instruction, m64nBNk16 with FP32 accumulators. A, B and C
 * in the half type, alpha and beta as floats, each result rounded once (as cublasGemmEx with
 * CUBLAS_COMPUTE_32F). hmma.cu (mma.sync) is the sm_80/86/89 template; this one is Hopper's.
 *
 * Unlike TF32, wgmma reads 16-bit operands in either major order (the instruction's imm-trans), so
 * every op runs as stored, with no first launch: the copy engine lands each operand's tile as 64-k
 * rows of 128 bytes (K-major: A stored M x K, B stored N x K) or as 64-element rows along M or N,
 * one per k (MN-major: A stored K x M, B stored K x N), in boxes of 64 columns; the descriptors
 * (wgmma.cuh's desc, desc_mn) say which. The roles are not swapped as in tc32ws: consumer
 * warpgroup w owns rows [w BM / WGS, (w + 1) BM / WGS) of C's BM x BN tile, as MI = BM / (64 WGS)
 * instructions of 64 rows, each across the tile's BN columns (the instruction's N). A stage is
 * [A's tile, BM x 64][B's tile, 64 x BN], 128 (BM + BN) bytes.
 *
 * PINGPONG 1: the consumer warpgroups take turns instead, warpgroup w the block's items w, w + WGS,
 * ... each whole (MI = BM / 64 instructions), each from a ring of STAGES / WGS stages of its own.
 * The producer fills them in the items' order, so the next warpgroup's k-tiles arrive as the last
 * one's run out: its wgmmas start while the other stores its tile, and the tensor cores do not wait
 * for the epilogue (CUTLASS's "ping-pong"). One ring would not do: a warpgroup that passed over the
 * other's k-tiles would wait on a stage's barrier two phases ahead of it, which a parity cannot tell
 * (measured: launch failures at 4096^3 with two items a block).
 *
 * ZI (ZITEMS 1, or the default 2 where there is a batch and no split-K): a strided batch's products
 * are work items of one persistent loop (item w: product w / tiles, tile w % tiles) over at most the
 * resident blocks, instead of a grid z of products each looping over its own tiles. A batch of few
 * tiles a product (attention's 1024^2 x 64 scores: 32 tiles, 64 products) otherwise gives every
 * block one tile, which it loads, multiplies and stores with nothing behind it; here a block's
 * producer loads its next tile, of whichever product, while its consumers store the last (H200:
 * those scores 0.135 -> 0.060 ms, 512^2 x 128 x 32 0.021 -> 0.011). The launcher passes the batch's
 * count after the tensor maps.
 *
 * SPLITK > 1: K cut into slices that are work items of their own (item w: slice w / tiles of tile
 * w % tiles, so the blocks running together share one k-range of A and B); each writes its FP32
 * partial tile to the workspace, and a last launch (reduce) adds the slices in a fixed order,
 * applies alpha and beta and rounds once: as without split-K, one rounding a result.
 *
 * EPI (the epilogue): 0 stores C from the accumulator registers, a 32-bit pair a thread, so that a
 * warp's store covers 8 rows x 16 bytes (half of each sector) and a 64 x 256 tile takes each thread
 * 128 stores while the tensor cores wait. 1 stages it through shared memory: each consumer
 * warpgroup rounds 64 x 64 sub-tiles into one of two 8 KB buffers of its own (stmatrix, the copy
 * engine's 128-byte swizzle: no bank conflicts) and writes them as rows of 16 bytes, a warp 4 whole
 * 128-byte rows (16 stores a thread for 64 x 256); where C's rows are off 16 bytes (an odd ldc),
 * whole aligned 16-byte chunks shifted into place and the rows' ends 2 bytes each
 * (store_row_unaligned). 2 has the copy engine store each sub-tile through a tensor map of C (rows
 * 16-byte aligned, switch TMA_C; else as 1). beta reads C where the
 * registers sit, as EPI 0 does, so each result is still rounded once; split-K's FP32 partials go
 * out as with EPI 0. 1 and 2 take 16 KB a warpgroup beside the ring: 128x256 fits 4 stages. At
 * K = 0 no wgmma writes the accumulators: 1 and 2 zero them; EPI 0 reads them unwritten, but never
 * runs there: kernel_launch refuses K < 1 and the engine makes C = beta C itself (session.c,
 * apiplan.c's scale), so `v k0` in bench/hws_gpu.sh checks that path, not this kernel.
 *
 * KPROMOTE > 0: the tensor cores sum KPROMOTE elements of K, then FP32 adds fold the chain into a
 * second set of registers (hmma.cu's promotion; the tensor cores' sums truncate, docs/NOTES.md,
 * "BF16 and FP16"); it doubles the accumulators, so it fits only MI BN <= 128.
 *
 * Any M, N, K (the copy engine reads zeros past the edges; stores past them are skipped), every op,
 * leading dimension and strided batch. The copy engine reads rows that start 16-byte aligned: an
 * operand whose pointer, leading dimension or batch stride is not a multiple of 8 elements is first
 * copied as stored, its rows padded to a multiple of 8, into the workspace (prep_a, prep_b; switches
 * PACKA, PACKB): one pass over it. Examples: configs/hws_bf16.json, hws_f16.json.
 *
 * engine:template
{
  "summary": "BF16 / FP16 GEMM with FP32 accumulation on wgmma (sm_90a), TMA-fed, warp-specialised, persistent",
  "dtypes": ["bf16", "f16"],
  "pdl": true,
  "arch_specific": true,
  "peak": "tensor",
  "params": {
    "BM": {"default": 128, "values": [64, 128, 256], "doc": "rows of C per tile, shared by the consumer warpgroups: BM / WGS each, whole instructions of 64"},
    "BN": {"default": 256, "values": [64, 128, 256], "doc": "columns of C per tile: the instruction's N"},
    "WGS": {"default": 2, "values": [1, 2], "doc": "consumer warpgroups"},
    "STAGES": {"default": 4, "min": 2, "max": 8, "doc": "k-tiles of 64 in the shared-memory ring: STAGES - 1 copies in flight ahead of the consumers"},
    "KPROMOTE": {"default": 0, "values": [0, 128, 256, 512, 1024], "doc": "elements of K the tensor cores sum before FP32 adds fold the partial sum into total (0: the tensor cores sum all of K)"},
    "GROUP": {"default": 8, "min": 1, "max": 64, "doc": "rows of tiles a persistent block's schedule walks together (L2 reuse of B's columns)"},
    "SPLITK": {"default": 1, "min": 1, "max": 32, "doc": "K cut into SPLITK slices, each a work item of its own (few tiles: a few tokens through a layer): each slice writes its FP32 partial tile to the workspace and a last launch (reduce) adds them in a fixed order, applies alpha and beta and rounds once"},
    "ZITEMS": {"default": 2, "values": [0, 1, 2], "doc": "1: the batch's products are items of one persistent loop over at most the resident blocks (a block loads its next tile, of any product, while it stores the last); 0: a grid z of products, each looping over its own tiles; 2: 1 where there is a batch and no split-K (the switch ZI), else 0 (one product's code is then the same as 0's). Not where the items come within 2^16 of 2^31 (the loop's int would wrap): there a grid z, as 0"},
    "PINGPONG": {"default": 0, "values": [0, 1], "doc": "0: the consumer warpgroups share each tile, BM / WGS rows each; 1: they take turns, each a whole tile of its own, so that one stores its tile while the other multiplies"},
    "PDL": {"default": 1, "values": [0, 1, 2], "doc": "programmatic dependent launch on sm_90+ (gemm_common.cuh): 0 off, 1 on, 2 decided from the grid (plan_use_pdl)"},
    "EPI": {"default": 0, "values": [0, 1, 2], "doc": "the epilogue: 0 stores C straight from the accumulator registers (32-bit pairs, 8 rows x 16 bytes a warp's store); 1 stages each consumer warpgroup's tile through shared memory, 64 x 64 sub-tiles in two 8 KB buffers, and writes rows of 16 bytes (a warp 4 whole rows of 128 bytes; rows off 16 bytes: aligned chunks shifted into place, the ends 2 bytes each); 2 as 1, but the copy engine stores each sub-tile (TMA, a tensor map of C) where C's rows are 16-byte aligned, else as 1"}
  },
  "derived": {
    "THREADS": "128 * (WGS + 1)",
    "MI": "PINGPONG ? BM / 64 : BM / (64 * WGS)",
    "WN": "BN",
    "STAGE_BYTES": "(BM + BN) * 128",
    "EPI_BYTES": "EPI ? WGS * 16384 : 0"
  },
  "constraints": [
    {"rule": "ARCH_SPECIFIC == 1 && ARCH == 90", "why": "wgmma and setmaxnreg exist only on the architecture-specific target sm_90a (--arch sm_90a)"},
    {"rule": "BM % (PINGPONG ? 64 : 64 * WGS) == 0", "why": "each consumer warpgroup owns whole instructions of 64 rows"},
    {"rule": "MI * BN * (KPROMOTE > 0 ? 2 : 1) <= 256", "why": "a consumer thread holds MI BN / 2 accumulator registers, twice with promotion, of its 232"},
    {"rule": "STAGES * STAGE_BYTES + 1024 <= 232448", "why": "the ring must fit the 227 KB of shared memory a block may take on sm_90"},
    {"rule": "KPROMOTE % 64 == 0", "why": "promotion happens between k-tiles of 64"},
    {"rule": "ZITEMS != 1 || SPLITK == 1", "why": "ZITEMS gives w / tiles to the batch's products, where split-K gives it to K's slices (and reduce reads the partials by the grid's z)"},
    {"rule": "PINGPONG == 0 || (STAGES % WGS == 0 && STAGES / WGS >= 2)", "why": "taking turns, each consumer warpgroup has a ring of STAGES / WGS stages of its own, two at least"},
    {"rule": "EPI == 0 || STAGES * STAGE_BYTES + 1024 + EPI_BYTES + 1024 <= 232448", "why": "the ring, its alignment slack, the staged epilogue's two 8 KB sub-tiles per consumer warpgroup and the 1 KB of static shared memory (the ring's barriers, padded to the dynamic part's 1024-byte alignment) must fit the 227 KB a block may take on sm_90: take fewer STAGES"}
  ],
  "switches": {
    "OP_TA": "TA",
    "OP_TB": "TB",
    "LDP": "LD_PACKED",
    "BATCHED": "BATCH > 1",
    "EVEC_C": "EPI ? ALIGN_C : (ALIGN_C >= 2 ? 2 : 1)",
    "TMA_C": "EPI == 2 && ALIGN_C >= 8 && K > 0",
    "PACKA": "ALIGN_A < 8",
    "PACKB": "ALIGN_B < 8",
    "ZI": "(ZITEMS == 1 || (ZITEMS == 2 && BATCH > 1 && SPLITK == 1)) && cdiv(N, BN) * cdiv(M, BM) * BATCH <= 2147418112"
  },
  "let": {
    "TILES": "cdiv(N, BN) * cdiv(M, BM)",
    "AL": "TA ? M : K",
    "AR": "TA ? K : M",
    "ALP": "rup(AL, 8)",
    "BL": "TB ? K : N",
    "BR": "TB ? N : K",
    "BLP": "rup(BL, 8)",
    "B_AT": "PACKA ? BATCH * AR * ALP : 0",
    "P_AT": "B_AT + (PACKB ? BATCH * BR * BLP : 0)",
    "NKT": "cdiv(K, 64)",
    "SPLITS": "K > 0 ? cdiv(NKT, cdiv(NKT, SPLITK)) : 1"
  },
  "traffic": "BATCH * (M * K * cdiv(N, BN) + K * N * cdiv(M, BM) + M * N) + (PACKA ? 2 * BATCH * M * K : 0) + (PACKB ? 2 * BATCH * K * N : 0) + (SPLITS > 1 ? 4 * SPLITS * BATCH * M * N : 0)",
  "workspace": "P_AT + (SPLITS > 1 ? 2 * SPLITS * BATCH * M * N : 0)",
  "compile_cost": "250",
  "model": {"tile": ["BM", "BN", 64], "turns": "PINGPONG ? WGS : 1"},
  "launches": [
    {"kernel": "prep_a", "if": "PACKA && K > 0", "grid": ["cdiv(ALP, 128)", "min(cdiv(AR, 8), 65535)", "BATCH"], "block": [128, 1, 1], "smem": "0", "traffic": "BATCH * AR * (AL + ALP)"},
    {"kernel": "prep_b", "if": "PACKB && K > 0", "grid": ["cdiv(BLP, 128)", "min(cdiv(BR, 8), 65535)", "BATCH"], "block": [128, 1, 1], "smem": "0", "traffic": "BATCH * BR * (BL + BLP)"},
    {"kernel": "gemm", "grid": ["ZI ? TILES * BATCH : TILES * SPLITS", 1, "ZI ? 1 : BATCH"], "block": ["THREADS", 1, 1], "persistent": true,
     "smem": "STAGES * STAGE_BYTES + 1024 + EPI_BYTES"},
    {"kernel": "reduce", "if": "SPLITS > 1", "grid": ["cdiv(M * N, 256)", 1, "BATCH"], "block": [256, 1, 1], "smem": "0", "traffic": "BATCH * M * N * (2 * SPLITS + 1)"}
  ],
  "tensor_maps": [
    {"tensor": "A", "if": "!PACKA", "dims": ["AL", "AR", "BATCH"], "strides": ["LDA", "BATCH > 1 ? SA : LDA * AR"], "box": [64, "TA ? 64 : BM", 1]},
    {"tensor": "W", "if": "PACKA", "dims": ["AL", "AR", "BATCH"], "strides": ["ALP", "AR * ALP"], "box": [64, "TA ? 64 : BM", 1]},
    {"tensor": "B", "if": "!PACKB", "dims": ["BL", "BR", "BATCH"], "strides": ["LDB", "BATCH > 1 ? SB : LDB * BR"], "box": [64, "TB ? BN : 64", 1]},
    {"tensor": "W", "if": "PACKB", "offset": "B_AT", "dims": ["BL", "BR", "BATCH"], "strides": ["BLP", "BR * BLP"], "box": [64, "TB ? BN : 64", 1]},
    {"tensor": "C", "if": "TMA_C", "dims": ["N", "M", "BATCH"], "strides": ["LDC", "BATCH > 1 ? SC : LDC * M"], "box": [64, 64, 1]}
  ]
}
*/
#include "gemm_common.cuh"
#include "tma.cuh"

constexpr int BK = 64;      /* one 128-byte row of 16-bit elements */
constexpr int NACC = BN / 2; /* accumulator registers per thread and instruction */
#include "wgmma.cuh"
#include "ws_ring.cuh"

constexpr bool PROM = KPROMOTE > 0;
constexpr int KPT = PROM ? KPROMOTE / BK : 1; /* k-tiles per promotion chain */
constexpr int A_BYTES = BM * 128;             /* A's tile within a stage; B's follows */
constexpr int CONSUMER_REGS = WGS == 2 ? 232 : 240, PRODUCER_REGS = 40;
constexpr int SPR = PINGPONG ? STAGES / WGS : STAGES; /* stages a ring: one ring a warpgroup taking turns, else one for all */
constexpr unsigned MN_LBO = BK * 128; /* bytes between 64-element groups of an MN-major tile (one box each) */
static_assert(STAGE_BYTES % 1024 == 0, "stages keep the swizzle atoms 1024-byte aligned");

/* The instruction: imm-trans-a 1 where A is MN-major (stored K x M), imm-trans-b 1 where B is
 * MN-major (stored K x N: wgmma's B is K x N, K-major when stored N x K). */
#if OP_TA
#define WH_TA "1"
#else
#define WH_TA "0"
#endif
#if OP_TB
#define WH_TB "0"
#else
#define WH_TB "1"
#endif
#if BF16
#define WH_TYPE "bf16"
#else
#define WH_TYPE "f16"
#endif
#define WH_ASM2(tail, pred) "{\n.reg .pred p;\nsetp.ne.b32 p, " pred ", 0;\n" \
    "wgmma.mma_async.sync.aligned.m64n" WG_XSTR(WN) "k16.f32." WH_TYPE "." WH_TYPE " {" WG_D "}, " tail
#define WH_ASM(form) WH_ASM2(form)

/* d = A (64 x 16, descriptor da) * B (16 x BN, descriptor db) + (acc_d ? d : 0), asynchronously. */
__device__ __forceinline__ void wgmma_h(float (&d)[NACC], unsigned long long da, unsigned long long db, int acc_d)
{
    asm volatile(WH_ASM(WG_SS_T(", " WH_TA ", " WH_TB)) : WG_DOUT(d) : "l"(da), "l"(db), "r"(acc_d));
}

/* k-step s (16 of the tile's 64 k) of a tile whose first row (K-major) or first 64-element group
 * (MN-major) is at sa: 32 bytes along a K-major row, two 8-row groups of an MN-major tile. */
template <bool MN> __device__ __forceinline__ unsigned long long op_desc(unsigned sa, int s)
{
    return MN ? desc_mn(sa + s * 2048, MN_LBO) : desc(sa + s * 32);
}

/* An operand stored as rows x len (ld apart, batch sx apart) copied into out with its rows padded
 * to lp = rup(len, 8) by zeros, the batch rows x lp apart (tma.cuh's pad_rows; the plan's grid
 * gives a block 8 rows at a time, the 16 bytes a thread has in flight). */
__device__ __forceinline__ void pack_rows(const T *x, int len, int rows, int ld, long long sx, T *out)
{
    const int lp = rup(len, 8);
    pad_rows<8>(x, sx, len, rows, ld, lp, out);
}

extern "C" __global__ void __launch_bounds__(128) prep_a(GEMM_ARGS)
{
    grid_dep_sync();
    pack_rows(A, OP_TA ? M : K, OP_TA ? K : M, LD_A, sa, W);
}

/* After A's part of the workspace (the template's B_AT). */
extern "C" __global__ void __launch_bounds__(128) prep_b(GEMM_ARGS)
{
    grid_dep_sync();
    const long long at = PACKA ? (long long)gridDim.z * (OP_TA ? K : M) * rup(OP_TA ? M : K, 8) : 0;
    pack_rows(B, OP_TB ? K : N, OP_TB ? N : K, LD_B, sb, W + at);
}

/* The FP32 partial tiles of split-K, after the packed operands (the template's P_AT): slice z of
 * product b at ((z BATCH + b) M) N, row-major M x N. */
__device__ __forceinline__ float *partials(T *W, int M, int N, int K)
{
    const long long batch = gridDim.z;
    const long long at = (PACKA ? batch * (OP_TA ? K : M) * rup(OP_TA ? M : K, 8) : 0) +
                         (PACKB ? batch * (OP_TB ? N : K) * rup(OP_TB ? K : N, 8) : 0);
    return reinterpret_cast<float *>(W + at);
}

/* K's k-tiles per slice and the slices that get any (the template's SPLITS). */
__device__ __forceinline__ void slices(int nk, int &per, int &count)
{
    per = SPLITK == 1 ? nk : cdiv(nk, SPLITK);
    count = SPLITK == 1 || nk == 0 ? 1 : cdiv(nk, per);
}

/* Split-K's last launch: C = alpha (the slices' partials added in order) + beta C, rounded once. */
extern "C" __global__ void __launch_bounds__(256) reduce(GEMM_ARGS)
{
    grid_dep_sync();
    const long long i = (long long)blockIdx.x * 256 + threadIdx.x, mn = (long long)M * N;
    if (i >= mn)
        return;
    int per, count;
    slices(cdiv(K, BK), per, count);
    const int b = blockIdx.z, m = (int)(i / N), n = (int)(i % N);
    const float *p = partials(W, M, N, K) + (long long)b * mn + i;
    float sum = 0.0f;
    for (int z = 0; z < count; ++z)
        sum += p[(long long)z * gridDim.z * mn];
    T *c = C + (long long)m * LD_C + n;
#if BATCHED
    c += (long long)b * sc;
#endif
    float v = alpha * sum;
    if (beta != 0.0f)
        v += beta * half_to_float(*c);
    *c = float_to_half(v);
}

#if EPI
/* The staged epilogue (EPI 1, 2). A consumer warpgroup writes its tile a 64 x 64 sub-tile at a time
 * (one instruction's 64 rows, 64 of its columns) into one of its two 8 KB buffers after the ring, as
 * 64 rows of 128 bytes laid out as the copy engine's 128-byte swizzle: the 16-byte chunk c of row r
 * at r 128 + ((c ^ r % 8) 16) (the layout a tensor map with CU_TENSOR_MAP_SWIZZLE_128B reads, the
 * buffers 1024-byte aligned). The swizzle, not padding, keeps shared memory free of bank conflicts
 * both ways: stmatrix's 8 lanes of a phase give 8 rows' same chunk, which land in 8 different
 * chunks (all 32 banks); a 16-byte read's 8 lanes of a phase take one row's 8 chunks. */

/* Named barrier id among the 128 threads of one consumer warpgroup (ids 1, 2: 0 is __syncthreads'). */
__device__ __forceinline__ void wg_bar(int id)
{
    asm volatile("bar.sync %0, 128;\n" ::"r"(id) : "memory");
}

/* Four 8 x 8 matrices of 16-bit pairs from the registers into shared memory (sm_90): register x of
 * lane 4r + c holds row r, columns 2c and 2c + 1 of matrix x (the accumulators' layout: g = r,
 * t = c); lanes 8x ... 8x + 7 give the addresses of matrix x's rows 0 ... 7. */
__device__ __forceinline__ void stmatrix4(unsigned addr, unsigned r0, unsigned r1, unsigned r2, unsigned r3)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0), "r"(r1),
                 "r"(r2), "r"(r3)
                 : "memory");
}

__device__ __forceinline__ uint4 lds128(unsigned addr)
{
    uint4 v;
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(addr)
                 : "memory");
    return v;
}

/* C's element for beta: under TMA_C the kernel writes C only through the copy engine, so the
 * compiler would read it on the non-coherent path (ld.global.nc); each element is read before its
 * own sub-tile's store, so that would hold today, but read past L1 (ld.global.cg) it stays right
 * whatever order a later edit gives the stores. EPI 1 writes C itself: a plain read. */
__device__ __forceinline__ float c_elem(const T *p)
{
#if TMA_C
    unsigned short v;
    asm volatile("ld.global.cg.u16 %0, [%1];" : "=h"(v) : "l"(p));
    return half_to_float(v);
#else
    return half_to_float(*p);
#endif
}

/* Eight elements (v, lowest address first) to cp, where C's rows are 16-byte aligned (EVEC_C 8), of
 * which `left` lie inside C (its last columns): one 16-byte store, or 2-byte stores at C's right
 * edge. Rows off 16 bytes take store_row_unaligned, below. */
__device__ __forceinline__ void store8(T *cp, uint4 v, int left)
{
    if (left >= 8) {
        *reinterpret_cast<uint4 *>(cp) = v;
    } else {
#pragma unroll
        for (int e = 0; e < 8; ++e)
            if (e < left) {
                const unsigned x = e < 2 ? v.x : e < 4 ? v.y : e < 6 ? v.z : v.w;
                cp[e] = static_cast<T>(e % 2 ? x >> 16 : x & 0xFFFFu);
            }
    }
}

/* Two elements of a swizzled sub-tile row in shared memory (row at `row`, swizzle `sw` = its row % 8):
 * element e sits in chunk e / 8, moved to chunk (e / 8) ^ sw. */
__device__ __forceinline__ unsigned short lds16(unsigned row, int sw, int e)
{
    unsigned short v;
    asm volatile("ld.shared.u16 %0, [%1];\n" : "=h"(v) : "r"(row + ((((e >> 3) ^ sw) << 4) | ((e & 7) << 1))) : "memory");
    return v;
}

/* One row of a staged sub-tile (len of its 64 elements inside C) to cp, where C's rows are not all
 * 16-byte aligned (EVEC_C < 8: an odd leading dimension or pointer). Storing elements one at a time
 * costs each thread 8 stores a chunk and ran a large product at a quarter of DRAM's write rate
 * (11135x14915x31, 0.80 ms against cuBLAS's 0.23). Instead this row's 8 threads (lane j of them)
 * find where the row's first 16-byte boundary falls, h elements in (the same for the 8: cp is
 * theirs), and store whole aligned 16-byte chunks from there, lane j chunk j, each made of two of
 * shared memory's chunks shifted by h elements; the elements before the first boundary and after
 * the last whole chunk (8 of them in a full row, up to 14 at C's right edge) go out two bytes each,
 * lane j the j-th and (j + 8)-th of them. Two stores a lane instead of eight. */
__device__ __forceinline__ void store_row_unaligned(T *cp, unsigned row, int sw, int j, int len)
{
    const int h0 = (8 - (int)((reinterpret_cast<unsigned long long>(cp) >> 1) & 7)) & 7;
    const int h = h0 < len ? h0 : len;          /* elements before the first 16-byte boundary */
    const int nb = (len - h) / 8;                /* whole aligned chunks after it */
    if (j < nb) {
        const uint4 a = lds128(row + ((j ^ sw) << 4));
        uint4 v = a;
        if (h) { /* elements h .. h + 7 of chunks j and j + 1 (j + 1 < 8: a row with h > 0 has 7 at most) */
            const uint4 b = lds128(row + (((j + 1) ^ sw) << 4));
            const unsigned long long q0 = a.x | (unsigned long long)a.y << 32, q1 = a.z | (unsigned long long)a.w << 32,
                                     q2 = b.x | (unsigned long long)b.y << 32, q3 = b.z | (unsigned long long)b.w << 32;
            const bool hi = h >= 4;
            const int bit = (h & 3) * 16;
            const unsigned long long x0 = hi ? q1 : q0, x1 = hi ? q2 : q1, x2 = hi ? q3 : q2;
            const unsigned long long o0 = bit ? (x0 >> bit) | (x1 << (64 - bit)) : x0;
            const unsigned long long o1 = bit ? (x1 >> bit) | (x2 << (64 - bit)) : x1;
            v = make_uint4((unsigned)o0, (unsigned)(o0 >> 32), (unsigned)o1, (unsigned)(o1 >> 32));
        }
        *reinterpret_cast<uint4 *>(cp + h + 8 * j) = v;
    }
    const int left = len - 8 * nb; /* the head's h and the tail's len - h - 8 nb */
#pragma unroll
    for (int x = 0; x < 2; ++x) {
        const int i = j + 8 * x;
        if (i < left) {
            const int e = i < h ? i : 8 * nb + i;
            cp[e] = static_cast<T>(lds16(row, sw, e));
        }
    }
}

#if TMA_C
/* The copy engine stores a 64 x 64 box of C (columns c0, rows c1, product c2) from shared memory at
 * src, laid out as the map's 128-byte swizzle; elements past C's edges are not written. One thread
 * issues it; the group is committed, and waited on before its buffer is written again. */
__device__ __forceinline__ void tma_store(const TensorMap &map, int c0, int c1, int c2, unsigned src)
{
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(
                     reinterpret_cast<unsigned long long>(&map)),
                 "r"(c0), "r"(c1), "r"(c2), "r"(src)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
/* Until at most N of this thread's committed bulk stores are still reading shared memory. */
template <int N> __device__ __forceinline__ void bulk_wait_read()
{
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
/* Until every one of them has finished, its writes done. */
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
#endif
#endif

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    gemm(GEMM_ARGS, TMAP_ARG(tmap_a), TMAP_ARG(tmap_ap), TMAP_ARG(tmap_b), TMAP_ARG(tmap_bp)
#if TMA_C || ZI /* the launcher passes every map the template names, C's too where it is off */
         , TMAP_ARG(tmap_c)
#endif
#if ZI
         , int nbatch
#endif
    )
{
    grid_dep_sync();
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    const unsigned raw = smem_addr(smem_raw);
    const unsigned sbase = raw + ((1024 - (raw & 1023)) & 1023); /* swizzle atoms on 1024-byte boundaries */
    const int wg = threadIdx.x / 128, q = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
    const unsigned full0 = smem_addr(&full[0]), empty0 = smem_addr(&empty[0]);
    ring_init(full0, empty0, STAGES, PINGPONG ? 4 : 4 * WGS); /* one arrival per consumer warp reading a stage */
    const int gx = cdiv(N, BN), gy = cdiv(M, BM), tiles = gx * gy, nk = cdiv(K, BK);
    int per, nsplit;
    slices(nk, per, nsplit);
#if ZI
    const int items = tiles * nbatch; /* (SPLITK 1) item w: product w / tiles, tile w % tiles */
#else
    const int items = tiles * nsplit, b = blockIdx.z;
#endif
    /* Work item w: tile w % tiles, its k-tiles [kt0, kt1) of slice w / tiles (under ZI: of product
     * w / tiles, all of K). */
    auto item_at = [&](int w, int &bm, int &bn, int &kt0, int &kt1) {
        tile_at(w % tiles, gx, gy, bm, bn);
        kt0 = ZI ? 0 : min(nk, (w / tiles) * per);
        kt1 = min(nk, kt0 + per);
    };

    if (wg == 0) {
        /* The producer: one thread walks the block's tiles and k-tiles, a stage at a time. */
        if constexpr (WGS == 2)
            regs_give<PRODUCER_REGS>();
        if (threadIdx.x != 0)
            return;
        const TensorMap &ma = PACKA ? tmap_ap : tmap_a, &mb = PACKB ? tmap_bp : tmap_b;
        unsigned its0 = 0, its1 = 0; /* k-tiles put into each ring so far (two scalars: no local array) */
        for (int i0 = 0, w = blockIdx.x; w < items; ++i0, w += gridDim.x) {
            int bm, bn, kt0, kt1;
            item_at(w, bm, bn, kt0, kt1);
#if ZI
            const int b = w / tiles;
#endif
            const int ring = PINGPONG ? i0 % WGS : 0;
            for (int kt = kt0; kt < kt1; ++kt) {
                const unsigned it = ring ? its1++ : its0++;
                const unsigned s = ring * SPR + it % SPR, round = it / SPR, bar = full0 + 8 * s;
                const unsigned st = sbase + s * STAGE_BYTES;
                mbar_wait(empty0 + 8 * s, (round & 1) ^ 1);
                mbar_expect(bar, STAGE_BYTES);
                if constexpr (OP_TA) {
#pragma unroll
                    for (int j = 0; j < BM / 64; ++j)
                        tma_load(st + j * MN_LBO, ma, bm * BM + 64 * j, kt * BK, b, bar);
                } else {
                    tma_load(st, ma, kt * BK, bm * BM, b, bar);
                }
                if constexpr (OP_TB) {
                    tma_load(st + A_BYTES, mb, kt * BK, bn * BN, b, bar);
                } else {
#pragma unroll
                    for (int j = 0; j < BN / 64; ++j)
                        tma_load(st + A_BYTES + j * MN_LBO, mb, bn * BN + 64 * j, kt * BK, b, bar);
                }
            }
        }
        return;
    }

    /* The consumers. */
    if constexpr (WGS == 2)
        regs_take<CONSUMER_REGS>();
    const int cw = wg - 1, g = lane / 4, t = lane % 4;
    const int phase = PINGPONG ? 0 : cw * (KPT / 2); /* chains offset by half a chain between consumers of a tile */
    const int row0 = PINGPONG ? 0 : cw * MI * 64;        /* this warpgroup's first row of the tile */
#if !ZI
    T *c = C;
#if BATCHED
    c += (long long)b * sc;
#endif
#endif
    float acc[MI][NACC], total[PROM ? MI : 1][PROM ? NACC : 1];
    const int ring = PINGPONG ? cw : 0;
    unsigned it = 0; /* k-tiles taken from the ring so far: the producer's count of it */
#if EPI
    const unsigned ebuf = sbase + STAGES * STAGE_BYTES + cw * 16384; /* this warpgroup's two sub-tile buffers */
    const int et = threadIdx.x % 128;
    unsigned ep = 0; /* sub-tiles staged so far: its parity picks the buffer */
#endif
    for (int i0 = 0, w = blockIdx.x; w < items; ++i0, w += gridDim.x) {
        if (PINGPONG && i0 % WGS != cw)
            continue; /* the other warpgroup's turn, from its own ring */
        int bm, bn, kt0, kt1;
        item_at(w, bm, bn, kt0, kt1);
#if ZI
        const int b = w / tiles;
        T *c = C + (long long)b * sc;
#endif
        if constexpr (PROM) {
#pragma unroll
            for (int i = 0; i < MI; ++i)
#pragma unroll
                for (int r = 0; r < NACC; ++r)
                    total[i][r] = 0.0f;
        }
        StageHold hold; /* the stage before, until a wait says its wgmmas are done */
        for (int kt = kt0; kt < kt1; ++kt, ++it) {
            const unsigned s = ring * SPR + it % SPR, round = it / SPR;
            const unsigned st = sbase + s * STAGE_BYTES;
            mbar_wait(full0 + 8 * s, round & 1);
            const bool fresh = kt == kt0 || (PROM && (kt - kt0 + phase) % KPT == 0);
            wgmma_fence();
#pragma unroll
            for (int ks = 0; ks < BK / 16; ++ks)
#pragma unroll
                for (int i = 0; i < MI; ++i)
                    wgmma_h(acc[i], op_desc<OP_TA>(st + (row0 + 64 * i) * 128, ks), op_desc<!OP_TB>(st + A_BYTES, ks),
                            fresh && ks == 0 ? 0 : 1);
            wgmma_commit();
            const bool chain_end = kt + 1 == kt1 || (PROM && (kt + 1 - kt0 + phase) % KPT == 0);
            hold.committed(s, chain_end, empty0, lane);
            if (PROM && chain_end) {
#pragma unroll
                for (int i = 0; i < MI; ++i)
#pragma unroll
                    for (int r = 0; r < NACC; ++r)
                        total[PROM ? i : 0][PROM ? r : 0] += acc[i][r];
            }
        }

#if EPI
        if (kt0 == kt1) { /* K = 0: no wgmma wrote the sums (C = beta C) */
#pragma unroll
            for (int i = 0; i < MI; ++i)
#pragma unroll
                for (int r = 0; r < NACC; ++r)
                    acc[i][r] = 0.0f;
        }
        if (SPLITK == 1 || nsplit <= 1) { /* (<= 1: below, the compiler knows nsplit > 1) */
            /* Staged: for each sub-tile (i, cb), rows mt + [0, 64) and columns nt + [0, 64) of C, (1) the
             * registers' values (alpha sum + beta C, C read where the registers sit, and rounded once)
             * go into buffer ep % 2 by stmatrix, x4 taking column groups j, j + 1 of rows 16q + [0, 16);
             * (2) the warpgroup's barrier; (3) each thread takes chunks et % 8 of rows et / 8 + 16 k to C
             * (EPI 1: a warp's store 4 rows of 128 bytes), or one thread has the copy engine store the
             * sub-tile (TMA_C). Two buffers, so that one barrier a pass keeps a buffer's reads before its
             * next writes: a thread writing buffer ep % 2 has passed pass ep - 1's barrier, which every
             * thread reached after its reads of pass ep - 2. The copy engine's reads are asynchronous:
             * the issuing thread waits until only the store just issued may still read (the one before,
             * of the other buffer, has), and a second barrier before the writes tells the others. */
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                const int mt = bm * BM + row0 + 64 * i;
                if (mt >= M)
                    break; /* the warpgroup's rows past C's (the same for all its threads) */
                const float *res = PROM ? total[PROM ? i : 0] : acc[i];
#pragma unroll
                for (int cb = 0; cb < BN / 64; ++cb) {
                    const int nt = bn * BN + 64 * cb;
                    if (nt >= N)
                        break;
                    const unsigned buf = ebuf + (ep++ & 1) * 8192;
#if TMA_C
                    wg_bar(1 + cw);
#endif
#pragma unroll
                    for (int u = 0; u < 4; ++u) {
                        unsigned r[4]; /* matrices (h, j) = (0, j0), (1, j0), (0, j0 + 1), (1, j0 + 1) */
#pragma unroll
                        for (int x = 0; x < 4; ++x) {
                            const int h = x & 1, j = 8 * cb + 2 * u + (x >> 1);
                            const int m = mt + 16 * q + 8 * h + g, n = bn * BN + 8 * j + 2 * t;
                            float v0 = alpha * res[4 * j + 2 * h], v1 = alpha * res[4 * j + 2 * h + 1];
                            if (beta != 0.0f && m < M && n < N) {
                                const T *cp = c + (idx_t)m * LD_C + n;
                                v0 += beta * c_elem(cp);
                                if (n + 1 < N)
                                    v1 += beta * c_elem(cp + 1);
                            }
                            r[x] = float2_to_half2(v0, v1);
                        }
                        const int mx = lane >> 3, rr = lane & 7, row = 16 * q + 8 * (mx & 1) + rr, chunk = 2 * u + (mx >> 1);
                        stmatrix4(buf + row * 128 + ((chunk ^ rr) << 4), r[0], r[1], r[2], r[3]);
                    }
#if TMA_C
                    fence_async_smem(); /* the writes seen by the copy engine */
                    wg_bar(1 + cw);
                    if (et == 0) {
                        tma_store(tmap_c, nt, mt, b, buf);
                        bulk_commit();
                        bulk_wait_read<1>();
                    }
#else
                    wg_bar(1 + cw);
#pragma unroll
                    for (int k = 0; k < 4; ++k) {
                        const int row = et / 8 + 16 * k, chunk = et % 8, m = mt + row, n = nt + 8 * chunk;
                        if (EVEC_C >= 8) {
                            const uint4 v = lds128(buf + row * 128 + ((chunk ^ (row & 7)) << 4));
                            if (m < M && n < N)
                                store8(c + (idx_t)m * LD_C + n, v, N - n);
                        } else if (m < M) {
                            store_row_unaligned(c + (idx_t)m * LD_C + nt, buf + row * 128, row & 7, chunk,
                                                N - nt < 64 ? N - nt : 64);
                        }
                    }
#endif
                }
            }
            continue;
        }
        /* Split-K: the slice's FP32 partial, for reduce, by EPI 0's code below. */
#endif
        /* The tile: register 4j + 2h + e of instruction i holds row row0 + 64 i + 16q + 8h + g and
         * column 8j + 2t + e; the pair e = 0, 1 goes out as one 32-bit store where C allows. */
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int m = bm * BM + row0 + 64 * i + 16 * q + 8 * h + g;
                if (m >= M)
                    continue;
#pragma unroll
                for (int j = 0; j < BN / 8; ++j) {
                    const int n = bn * BN + 8 * j + 2 * t;
                    if (n >= N)
                        continue;
                    const float *res = PROM ? total[PROM ? i : 0] : acc[i];
                    const bool pair = n + 1 < N;
                    if (SPLITK > 1 && nsplit > 1) { /* the slice's partial, for reduce */
                        float *p = partials(W, M, N, K) + ((long long)(w / tiles) * gridDim.z + b) * M * N + (long long)m * N + n;
                        p[0] = res[4 * j + 2 * h];
                        if (pair)
                            p[1] = res[4 * j + 2 * h + 1];
                        continue;
                    }
                    T *cp = c + (idx_t)m * LD_C + n;
                    float v0 = alpha * res[4 * j + 2 * h], v1 = alpha * res[4 * j + 2 * h + 1];
                    if (beta != 0.0f) {
                        v0 += beta * half_to_float(cp[0]);
                        if (pair)
                            v1 += beta * half_to_float(cp[1]);
                    }
                    const unsigned packed = float2_to_half2(v0, v1);
                    if (EVEC_C == 2 && pair) {
                        *reinterpret_cast<unsigned *>(cp) = packed;
                    } else {
                        cp[0] = static_cast<T>(packed & 0xFFFFu);
                        if (pair)
                            cp[1] = static_cast<T>(packed >> 16);
                    }
                }
            }
    }
#if TMA_C
    if (et == 0)
        bulk_wait_all(); /* the block's shared memory outlives the copy engine's last reads */
#endif
}
