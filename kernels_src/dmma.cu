/* dmma.cu — FP64 GEMM on the tensor cores: mma.sync (DMMA) fed from a cp.async pipeline, the
 * technique of NVIDIA's pipelined DGEMM tutorial (which builds it from cuBLASDx; this is our own
 * template of the same shape). In f32 the same kernel runs TF32 mma.sync (m16n8k8, sm_80+) with
 * PASSES = 3 (3xTF32: each operand x split into big = tf32(x) and small = tf32(x - big) as its
 * fragment leaves shared memory; big*big into one accumulator, big*small + small*big into another,
 * the two added before the epilogue: FP32 accuracy, class f32) or PASSES = 1 (big*big only: class
 * tf32, which the config must declare). The portable FP32 tensor-core path; tc32.cu is sm_90a's.
 *
 * Each warp owns a WM x WN warp tile made of (WM/IM) x (WN/8) accumulator tiles of IM x 8, where
 * the instruction is m8n8k4 (MMA = 884, sm_80+, IM = 8) or one of Hopper's m16n8k4, m16n8k8,
 * m16n8k16 (MMA = 1684, 1688, 16816, sm_90+, IM = 16); MMA = 0 picks m16n8k8 where the target has
 * it and m8n8k4 elsewhere (on the H100 m8n8k4 reaches only about half of the FP64 tensor-core
 * rate: docs/RESULTS.md). Per k-step of IK it loads the A and B
 * fragments of every tile from shared memory and issues one mma per accumulator tile. Fragment
 * layout (PTX ISA, .f64 shapes), with g = lane/4 and t = lane%4: A register r holds
 * A[g + 8(r % (IM/8))][t + 4(r / (IM/8))], B register r holds B[t + 4r][g], and C register r holds
 * C[g + 8(r/2)][2t + r%2]. In f64 SLICEK > 1 gives each warp tile SLICEK warps, one per k-slice
 * (every SLICEK-th k-step of a k-tile), whose sums meet in shared memory before the epilogue: a narrow
 * tile with the warps of a wide one (configs/dgemm_narrow_k.json). Tiles reach shared memory through tile_pipeline.cuh (A as As[m][k]); a
 * padding of 4 doubles per row keeps the fragment reads conflict-free (in f32: PAD_A 4 with BK 32,
 * PAD_B 8 with BN a multiple of 32). Any shape.
 * Example: configs/dgemm_pipelined.json.
 *
 * engine:template
{
  "summary": "FP64 (DMMA) or FP32 (3xTF32 / 1xTF32) tensor-core GEMM on mma.sync with a cp.async pipeline",
  "dtypes": ["f64", "f32"],
  "pdl": true,
  "peak": "tensor",
  "params": {
    "BM": {"doc": "rows of C per block tile", "min": 8},
    "BN": {"doc": "columns of C per block tile", "min": 8},
    "BK": {"doc": "depth of the slices staged per step", "min": 4},
    "MMA": {"default": 0, "values": [0, 884, 1684, 1688, 16816], "doc": "instruction shape: m8n8k4, or Hopper's m16n8k4, m16n8k8, m16n8k16; 0: the best the target has"},
    "WM": {"doc": "rows of C per warp tile", "min": 8},
    "WN": {"doc": "columns of C per warp tile", "min": 8},
    "THREADS": {"doc": "threads per block: 32 per warp tile and k-slice", "min": 32, "max": 1024},
    "PAD_A": {"default": 4, "min": 0, "max": 32, "doc": "elements added to each stored row of A"},
    "PAD_B": {"default": 4, "min": 0, "max": 32, "doc": "elements added to each stored row of B"},
    "BT_NMAJOR": {"default": 1, "values": [0, 1], "doc": "f64 with B transposed (TB): 1 keeps B's tile n-major, Bs[n][k] (chunks along K land in one stored row: 16-byte copies), 0 k-major as in NN, Bs[k][n] (one-element copies down its columns)"},
    "VEC_A": {"default": 2, "values": [1, 2, 4], "doc": "elements per global load or cp.async of A"},
    "VEC_B": {"default": 2, "values": [1, 2, 4], "doc": "elements per global load or cp.async of B"},
    "PASSES": {"default": 3, "values": [1, 3], "doc": "f32 only: TF32 products per element pair: 3 (big*big + big*small + small*big, FP32 accuracy) or 1 (big*big: TF32 accuracy, declare \"accuracy\": \"tf32\")"},
    "KPROMOTE": {"default": 0, "values": [0, 32, 64, 128, 256], "doc": "f32 only: elements of K the tensor cores accumulate before the fragments are added into FP32 registers by ordinary adds (0: never)"},
    "FOLD": {"default": 0, "values": [0, 1], "doc": "f32 3xTF32 with promotion: 1 sums the correction products into big*big's fragments between promotions (one register set fewer), 0 keeps them apart"},
    "STAGES": {"default": 2, "min": 1, "max": 4, "doc": "shared-memory buffers"},
    "SLICEK": {"default": 1, "values": [1, 2, 4, 8], "doc": "f64: warps along K (k-slices): SLICEK groups of (BM/WM) x (BN/WN) warps share each staged k-tile, group s taking its k-steps s, s + SLICEK, ..., and their sums meet in shared memory before the epilogue: more warps, and more k-steps in flight, for a narrow tile (issue 42)"},
    "ODD_LD": {"default": 0, "values": [0, 1], "doc": "f64 with rows narrowed to one element (an odd leading dimension or K, N: rows alternately 16-byte aligned): 1 copies each 2-element chunk whose source is aligned as one 16-byte cp.async (A's and B^T's rows dealt so that a warp's rows share a parity), only the others as two 8-byte ones; 0: every chunk as two"},
    "MINB_ODD": {"default": 0, "min": 0, "max": 32, "doc": "__launch_bounds__ min blocks per SM where ODD_LD's copies apply, in place of MINB (0: MINB): choosing a copy per chunk costs registers (174 at 64x64 tiles: two blocks per SM; 3 holds it to 168)"},
    "STAGES_NARROW": {"default": 0, "values": [0, 2, 3, 4], "doc": "cp.async buffers where A's or B's rows are narrowed (EVEC_A < VEC_A or EVEC_B < VEC_B: an odd leading dimension or K, N in f64, so every 16-byte copy becomes two 8-byte ones); 0: STAGES"},
    "PACK_LD": {"default": 0, "values": [0, 1], "doc": "f64, one product, no split: where A's or B's stored rows are not 16-byte aligned (an odd leading dimension, or an odd pointer) though their length is even, a first launch (pack_ld) copies that matrix packed into the workspace and the tiles load it as at a packed shape (16-byte copies); the copy is timed with the GEMM"},
    "ROWCOPY": {"default": 4, "values": [0, 1, 2, 3, 4], "doc": "cp.async chunks along stored rows dealt by rows (tile_pipeline.cuh): a thread's chunks of a k-tile in one row, one address per k-tile instead of one per chunk; bit 1: A stored K x M (TN, TT), bit 2: B stored K x N (NN, TN); where the tile's chunks divide evenly. 4 (default): as measured on the H100 (docs/NOTES.md, \"Copies dealt by rows\"): B's rows in f64 at TN where BM >= 128 (1.01-1.06x at wisdom's shapes of 128 x 64 tiles; smaller tiles 0.86-1.02x, NN 0.86-1.0x, A's rows at TT 0.95x), otherwise none"},
    "ASYNC": {"default": 1, "values": [0, 1], "doc": "1: cp.async copies (needs STAGES >= 2)"},
    "KUNROLL": {"default": 8, "min": 1, "max": 64, "doc": "unroll factor of the k loop, in steps of 4"},
    "SUPER": {"default": 0, "min": 0, "max": 32, "doc": "supertile width (0 or 1: off)"},
    "MINB": {"default": 0, "min": 0, "max": 32, "doc": "__launch_bounds__ min blocks per SM (0: none)"},
    "SPLITK": {"default": 1, "min": 1, "max": 256, "doc": "split K over blockIdx.z (splitk.cuh; up to 256 for FP64 Gram products over K of 10^5 and more, whose M x N is a tile or two)"},
    "STREAMK": {"default": 0, "min": 0, "max": 65536, "doc": "stream-K: this many blocks share all tiles' k-iterations equally, parts of tiles added with atomics into C pre-scaled by beta (0: off; splitk.cuh)"},
    "EDGE": {"default": 1, "values": [0, 1], "doc": "1: tiles wholly inside C run an unguarded copy of the tile code, only edge tiles the guarded one (tile_pipeline.cuh); 0: one guarded copy for all"},
    "SPLITK_MODE": {"default": 0, "values": [0, 1, 2], "doc": "0: atomicAdd into C pre-scaled by beta; 1: deterministic two-pass reduction through W; 2: one launch, the first split to finish writes the tile and the others add with atomics after it (splitk.cuh)"},
    "PDL": {"default": 2, "values": [0, 1, 2], "doc": "programmatic dependent launch on sm_90+ (gemm_common.cuh): 0 off, 1 on, 2 on unless a grid of one partial wave would land unevenly behind itself (plan_use_pdl, engine/core/template.h)"},
    "C_STAGE": {"default": 2, "values": [0, 1, 2], "doc": "1: the epilogue passes C's tile through shared memory (the k-tiles' buffers, free by then), so that consecutive threads store consecutive columns of a row; 2: only where C's rows are not aligned to a pair of elements (EVEC_C 1: an odd N or ldc; 16 bytes in f64), K is at most 1024 and C holds 2 MiB or more: from the registers such rows go out a thread's element at a time, each sector written twice (Nsight Compute: 2.1-2.4x C's sectors, L2 85-89% busy, at 13505x4569x128 and 5122x10369x5 f64; staged, 1.1-2.1x faster at K 16-128), while at K 2048-8192 it moved within 2% either way and a small C's tile pays the stage's two barriers for nothing (0.85-0.97x under 1 MB); 0: never. Not with split-K, stream-K or sliced K, nor where the tile would take over 99 KB (what sm_86 and sm_89 let a block take)"},
    "PREFETCH_C": {"default": 2, "values": [0, 1, 2], "doc": "1: where beta != 0, a tile asks L2 for its part of C (prefetch.global.L2) before its K loop, so that the epilogue's reads of C find it there instead of waiting on memory after the last k-step; 0: C is read when the epilogue needs it; 2: 1 where K < 256 and C is over 40 MiB (the switch PFC; H200, beta 1: 1.01-1.31x at K 64-192 with C over 50 MB, 1.5-3% slower where C, 19-31 MB, fits the 50 MB L2, within 3.5% either way at K 256-512). Not with split-K or stream-K"}
  },
  "derived": {
    "SHAPE": "MMA != 0 ? MMA : !F64 || ARCH >= 90 ? 1688 : 884",
    "IM": "SHAPE == 884 ? 8 : 16",
    "IK": "SHAPE % 100 == 84 ? 4 : SHAPE == 1688 ? 8 : 16"
  },
  "constraints": [
    {"rule": "ARCH >= 80", "why": "mma.sync with f64 operands (DMMA) or tf32 operands needs sm_80 or newer"},
    {"rule": "F64 || SHAPE == 1688", "why": "in f32 the instruction is TF32's m16n8k8 (MMA 0 or 1688)"},
    {"rule": "KPROMOTE == 0 || (!F64 && KPROMOTE % BK == 0)", "why": "promotion is an f32 choice (DMMA accumulates in FP64) and happens between k-tiles"},
    {"rule": "FOLD == 0 || (!F64 && PASSES == 3 && KPROMOTE > 0)", "why": "folding the correction products is a 3xTF32 choice, and only short chains keep them from being rounded away"},
    {"rule": "VEC_A * ELEM <= 16 && VEC_B * ELEM <= 16", "why": "a global load or cp.async moves 16 bytes at most"},
    {"rule": "BM % WM == 0", "why": "warp tiles cover the block tile's rows"},
    {"rule": "BN % WN == 0", "why": "warp tiles cover the block tile's columns"},
    {"rule": "THREADS == 32 * (BM / WM) * (BN / WN) * SLICEK", "why": "one warp per warp tile and k-slice"},
    {"rule": "SLICEK == 1 || (F64 && STREAMK == 0 && BK % (IK * SLICEK) == 0)", "why": "k-slices are built for FP64's data-parallel and split-K tiles, and each takes whole instruction k-steps (IK) of every k-tile"},
    {"rule": "SHAPE == 884 || ARCH >= 90 || !F64", "why": "the m16n8kX shapes with f64 operands need sm_90 or newer"},
    {"rule": "WM % IM == 0", "why": "a warp tile is made of whole instruction tiles (IM = 8 rows for m8n8k4, 16 otherwise)"},
    {"rule": "WN % 8 == 0", "why": "a warp tile is made of whole instruction tiles (8 columns)"},
    {"rule": "BK % IK == 0", "why": "each mma consumes K in steps of its k (IK = 4, 8 or 16)"},
    {"rule": "BK % VEC_A == 0", "why": "A is loaded VEC_A elements along K at a time"},
    {"rule": "BN % VEC_B == 0", "why": "B is loaded VEC_B elements along N at a time"},
    {"rule": "ASYNC == 0 || STAGES >= 2", "why": "an asynchronous pipeline needs at least two buffers"},
    {"rule": "ASYNC == 1 || STAGES <= 2", "why": "without cp.async there is one buffer, or two with register staging"},
    {"rule": "STAGES_NARROW == 0 || ASYNC == 1", "why": "STAGES_NARROW deepens the cp.async pipeline; the register-staged one has two buffers"},
    {"rule": "ASYNC == 0 || ((BK + PAD_A) % VEC_A == 0 && (BN + PAD_B) % VEC_B == 0)", "why": "each cp.async into a stored row must stay aligned"},
    "split_or_stream_k"
  ],
  "requires": [
    "transposed_loads",
    "split_stream_k_packed_c"
  ],
  "switches": {
    "FULL_M": "M % BM == 0",
    "FULL_N": "N % BN == 0",
    "FULL_K": "K % BK == 0",
    "PACKLD_A": "PACK_LD && F64 && BATCH == 1 && SPLITK == 1 && STREAMK == 0 && (TA ? M : K) % VEC_A == 0 && ALIGN_A < min(VEC_A, 16 / ELEM) && M * K > 0 && M * K < 2147483648",
    "PACKLD_B": "PACK_LD && F64 && BATCH == 1 && SPLITK == 1 && STREAMK == 0 && (TB ? K : N) % VEC_B == 0 && ALIGN_B < min(VEC_B, 16 / ELEM) && K * N > 0 && K * N < 2147483648",
    "EVEC_A": "PACKLD_A || ((TA ? M : K) % VEC_A == 0 && ALIGN_A >= min(VEC_A, 16 / ELEM)) ? VEC_A : 1",
    "EVEC_B": "PACKLD_B || ((TB ? K : N) % VEC_B == 0 && ALIGN_B >= min(VEC_B, 16 / ELEM)) ? VEC_B : 1",
    "EVEC_C": "N % 2 == 0 && ALIGN_C >= 2 ? 2 : 1",
    "ODD_ROWS": "ODD_LD && F64 && ASYNC && (EVEC_A < VEC_A || EVEC_B < VEC_B)",
    "PSTAGES": "STAGES_NARROW > 0 && (EVEC_A < VEC_A || EVEC_B < VEC_B) ? STAGES_NARROW : STAGES",
    "SPLIT_SERIAL": "SPLITK > 1 && SPLITK_MODE == 2 && cdiv(M, BM) * cdiv(N, BN) <= 4096",
    "BATCHED": "BATCH > 1",
    "ROW_DEAL": "ROWCOPY == 4 ? (F64 && TA && !TB && BM >= 128 ? 2 : 0) : ROWCOPY",
    "OP_TA": "TA",
    "OP_TB": "TB",
    "LDP": "LD_PACKED",
    "CSTAGE": "SPLITK == 1 && STREAMK == 0 && SLICEK == 1 && BM * (BN + 8) * ELEM <= 101376 && (C_STAGE == 1 || (C_STAGE == 2 && EVEC_C == 1 && K <= 1024 && BATCH * M * N * ELEM >= 2097152))",
    "PFC": "SPLITK == 1 && STREAMK == 0 && (PREFETCH_C == 1 || (PREFETCH_C == 2 && K < 256 && BATCH * M * N * ELEM > 41943040))"
  },
  "let": {
    "GX": "cdiv(N, BN)",
    "GY": "cdiv(M, BM)",
    "SW": "SUPER > 1 ? SUPER : 1",
    "SPLITS": "SPLITK > 1 && SPLITK_MODE != 1 && !SPLIT_SERIAL && K > 0 ? cdiv(cdiv(K, BK), cdiv(cdiv(K, BK), SPLITK)) : SPLITK"
  },
  "traffic": "BATCH * (M * K * cdiv(N, BN) + K * N * cdiv(M, BM) + M * N) + (PACKLD_A ? 2 * M * K : 0) + (PACKLD_B ? 2 * K * N : 0)",
  "compile_cost": "250",
  "model": {"tile": ["BM", "BN", "BK"], "atomics": "STREAMK > 0 ? M * N + STREAMK * BM * BN : SPLITK > 1 && SPLITK_MODE != 1 ? M * N * (SPLIT_SERIAL ? SPLITS - 1 : SPLITS) : 0", "slow": "EVEC_B < VEC_B ? 105 : 100"},
  "workspace": "SPLITK > 1 && SPLITK_MODE == 1 ? SPLITK * M * N : (PACKLD_A ? rup(M * K, 2) : 0) + (PACKLD_B ? K * N : 0)",
  "stream_state": "SPLIT_SERIAL",
  "launches": [
    {"kernel": "pack_ld", "if": "PACKLD_A || PACKLD_B", "grid": ["cdiv(max(PACKLD_A ? (TA ? M : K) : 0, PACKLD_B ? (TB ? K : N) : 0), 256)", "min(cdiv((PACKLD_A ? (TA ? K : M) : 0) + (PACKLD_B ? (TB ? N : K) : 0), 4), 65535)", 1], "block": [256, 1, 1]},
    {"kernel": "scale_c", "if": "(SPLITK > 1 && SPLITK_MODE != 1 && !SPLIT_SERIAL) || STREAMK > 0", "grid": ["cdiv(M * N, 256)", 1, 1], "block": [256, 1, 1]},
    {"kernel": "gemm", "grid": ["STREAMK > 0 ? STREAMK : SW > 1 ? cdiv(GX, SW) * cdiv(GY, SW) * SW * SW : GX", "STREAMK > 0 || SW > 1 ? 1 : GY", "BATCH > 1 ? BATCH : SPLITS"],
     "block": ["THREADS", 1, 1],
     "smem": "max(max(PSTAGES * (rup(TA ? BK * (BM + PAD_A) : BM * (BK + PAD_A), 2) + rup(TB && F64 && BT_NMAJOR ? BN * (BK + PAD_B) : BK * (BN + PAD_B), 2)), (SLICEK - 1) * BM * BN), CSTAGE ? BM * (BN + 8) : 0) * ELEM"},
    {"kernel": "reduce", "if": "SPLITK > 1 && SPLITK_MODE == 1", "grid": ["cdiv(M * N, 256)", 1, 1], "block": [256, 1, 1]}
  ]
}
*/
#include "gemm_common.cuh"
#if ODD_ROWS && MINB_ODD > 0 /* the register budget of the odd-row copies (tile_pipeline.cuh) */
#undef LAUNCH_BOUNDS
#define LAUNCH_BOUNDS(threads) __launch_bounds__(threads, MINB_ODD)
#endif

/* A stored K x M (TA) is kept k-major, As[k][m], so that its chunks along M land as vector stores
 * and its fragments are read as B's are (consecutive m across g, k across t: with the default
 * PAD_A 4 and BM a multiple of 16, stored rows sit 4 doubles off a multiple of 16, so a half-warp's
 * reads fall in distinct banks). */
#define A_KMAJOR OP_TA
/* B stored N x K (TB) is kept n-major in f64, Bs[n][k], the mirror of A_KMAJOR: its chunks along K
 * then land as one stored row (16-byte cp.async, where Bs[k][n] took two 8-byte copies down a
 * column, four lanes of a warp on one bank pair), and its fragments are read as A's are (n across
 * g, k across t: rows BK + PAD_B apart, 4 doubles off a multiple of 16 with the default PAD_B 4,
 * so a half-warp's reads fall in distinct banks). In f32 the same rows would sit 8 floats off a
 * multiple of 32 with the default PAD_B 8 (two-way conflicts on every B fragment): f32 keeps
 * Bs[k][n], as does BT_NMAJOR 0 (the path before, kept for comparison). */
#define B_NMAJOR (OP_TB && F64 && BT_NMAJOR)
#define PIPE_ASYNC ASYNC
#define PIPE_STAGES PSTAGES /* STAGES, or STAGES_NARROW where rows are narrowed */
#include "tile_pipeline.cuh"
#include "splitk.cuh"

/* SHAPE (the instruction), IM (its rows) and IK (its k) come derived from MMA and ARCH. */
constexpr int AR = IM * IK / 32;                              /* A registers per lane */
constexpr int BR = IK / 4;                                    /* B registers per lane */
constexpr int CR = IM / 4;                                    /* C registers per lane */
constexpr int MTILES = WM / IM;                               /* instruction tiles per warp tile */
constexpr int NTILES = WN / 8;

/* One instruction: c += a * b. asm, not asm volatile, so the compiler may schedule it among the
 * shared-memory loads. */
#if !F64
/* TF32 m16n8k8 (sm_80+): the operands are tf32 bit patterns (tf32_split's). */
__device__ __forceinline__ void mma(float (&c)[CR], const unsigned (&a)[AR], const unsigned (&b)[BR])
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#else
__device__ __forceinline__ void mma(double (&c)[CR], const double (&a)[AR], const double (&b)[BR])
{
#if SHAPE == 884
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
        : "+d"(c[0]), "+d"(c[1])
        : "d"(a[0]), "d"(b[0]));
#elif SHAPE == 1684
    asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(b[0]));
#elif SHAPE == 1688
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#else
    asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7, %8, %9, %10, %11}, "
        "{%12, %13, %14, %15}, {%0, %1, %2, %3};\n"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
          "d"(b[1]), "d"(b[2]), "d"(b[3]));
#endif
}
#endif

/* 3xTF32 keeps big*small + small*big in an accumulator of their own: added into big*big's, the
 * small terms would be rounded away against it at every step (Ootomo & Yokota 2022), unless the
 * chains are short (FOLD with promotion). Promotion (KPROMOTE > 0): every KPROMOTE / BK k-tiles the
 * fragments are added into total by ordinary FP32 adds and restart from zero, because the tensor
 * cores' own accumulation is not IEEE round-to-nearest and its error grows with K (tc32.cu). */
constexpr bool CORR = !F64 && PASSES == 3;
constexpr bool SEPC = CORR && !FOLD;
constexpr bool PROM = !F64 && KPROMOTE > 0;

struct Frag {
    T acc[MTILES][NTILES][CR];
    T corr[SEPC ? MTILES : 1][SEPC ? NTILES : 1][CR]; /* 3xTF32 without FOLD: big*small + small*big */
    T total[PROM ? MTILES : 1][PROM ? NTILES : 1][CR]; /* promotion: the sum of the chains so far */
    int chain;  /* promotion: k-tiles in acc since the last promotion */
    int m0, n0; /* warp tile origin inside the block tile */
#if SLICEK > 1
    int ks; /* this warp's k-slice: its k-steps of IK are ks, ks + SLICEK, ... of each k-tile */
#endif
    int g, t;   /* lane / 4 and lane % 4: the fragment coordinates */

    __device__ __forceinline__ void compute(const T *As, const T *Bs)
    {
#if SLICEK > 1
#pragma unroll
        for (int step = 0; step < BK / (IK * SLICEK); ++step) {
            const int kk = (step * SLICEK + ks) * IK;
#else
#pragma unroll KUNROLL
        for (int kk = 0; kk < BK; kk += IK) {
#endif
            T a[MTILES][AR], b[NTILES][BR];
#pragma unroll
            for (int i = 0; i < MTILES; ++i)
#pragma unroll
                for (int r = 0; r < AR; ++r)
                    a[i][r] = As[tile::a_at(m0 + i * IM + g + 8 * (r % (IM / 8)), kk + t + 4 * (r / (IM / 8)))];
#pragma unroll
            for (int j = 0; j < NTILES; ++j)
#pragma unroll
                for (int r = 0; r < BR; ++r)
                    b[j][r] = Bs[tile::b_at(kk + t + 4 * r, n0 + j * 8 + g)];
#if F64
#pragma unroll
            for (int i = 0; i < MTILES; ++i)
#pragma unroll
                for (int j = 0; j < NTILES; ++j)
                    mma(acc[i][j], a[i], b[j]);
#else
            unsigned ab[MTILES][AR], as[MTILES][AR], bb[NTILES][BR], bs[NTILES][BR];
#pragma unroll
            for (int i = 0; i < MTILES; ++i)
#pragma unroll
                for (int r = 0; r < AR; ++r)
                    tf32_split(a[i][r], ab[i][r], as[i][r]);
#pragma unroll
            for (int j = 0; j < NTILES; ++j)
#pragma unroll
                for (int r = 0; r < BR; ++r)
                    tf32_split(b[j][r], bb[j][r], bs[j][r]);
#pragma unroll
            for (int i = 0; i < MTILES; ++i)
#pragma unroll
                for (int j = 0; j < NTILES; ++j) {
                    if constexpr (SEPC) {
                        mma(corr[i][j], ab[i], bs[j]);
                        mma(corr[i][j], as[i], bb[j]);
                    } else if constexpr (CORR) { /* FOLD: the small products first, while acc is small */
                        mma(acc[i][j], ab[i], bs[j]);
                        mma(acc[i][j], as[i], bb[j]);
                    }
                    mma(acc[i][j], ab[i], bb[j]);
                }
#endif
        }
        if constexpr (PROM) {
            if (++chain == KPROMOTE / BK) {
                promote();
                chain = 0;
            }
        }
    }

    /* f(i, j, r) for every accumulator element of the warp tile. */
    template <class F> static __device__ __forceinline__ void each(F f)
    {
#pragma unroll
        for (int i = 0; i < MTILES; ++i)
#pragma unroll
            for (int j = 0; j < NTILES; ++j)
#pragma unroll
                for (int r = 0; r < CR; ++r)
                    f(i, j, r);
    }

    /* total += acc (+ corr); the fragments restart from zero. */
    __device__ __forceinline__ void promote()
    {
        each([&](int i, int j, int r) {
            T &c = corr[SEPC ? i : 0][SEPC ? j : 0][r];
            total[PROM ? i : 0][PROM ? j : 0][r] += SEPC ? acc[i][j][r] + c : acc[i][j][r];
            acc[i][j][r] = T(0);
            c = T(0);
        });
    }

    /* The result into acc: the promoted total, or big*big plus, under 3xTF32, the correction terms. */
    __device__ __forceinline__ void finish()
    {
        if constexpr (PROM)
            promote();
        each([&](int i, int j, int r) {
            if constexpr (PROM)
                acc[i][j][r] = total[PROM ? i : 0][PROM ? j : 0][r];
            else if constexpr (SEPC)
                acc[i][j][r] += corr[SEPC ? i : 0][SEPC ? j : 0][r];
        });
    }
};

#if SLICEK > 1
/* The k-slices' sums meet in shared memory, over the staged tiles (free once every warp is past the
 * K loop; the next tile's K loop starts with a barrier): slices 1 ... SLICEK - 1 write their
 * fragments (lane-minor: a warp's stores and loads are consecutive), slice 0 adds them into its own
 * and alone runs the epilogue. */
__device__ __forceinline__ void slice_sum(Frag &f, T *red, int warp, int lane)
{
    constexpr int WMN = (BM / WM) * (BN / WN); /* warps per slice */
    constexpr int NREG = MTILES * NTILES * CR;  /* accumulators per lane */
    __syncthreads();
    if (f.ks > 0) {
        T *dst = red + ((f.ks - 1) * WMN + warp) * NREG * 32 + lane;
        Frag::each([&](int i, int j, int r) { dst[((i * NTILES + j) * CR + r) * 32] = f.acc[i][j][r]; });
    }
    __syncthreads();
    if (f.ks == 0)
        for (int s = 1; s < SLICEK; ++s) {
            const T *src = red + ((s - 1) * WMN + warp) * NREG * 32 + lane;
            Frag::each([&](int i, int j, int r) { f.acc[i][j][r] += src[((i * NTILES + j) * CR + r) * 32]; });
        }
}
#endif

/* Output tile (bx, by): the K loop, then the epilogue. FM, FN: no guards along M, N (the tile lies
 * inside C that way; tile_pipeline.cuh, EDGE). Under stream-K the block's run gives the k-tiles
 * [skt0, skt1), and `part` says they are not the whole tile: the piece is added into C with atomics
 * (C holds beta * C already, splitk.cuh); otherwise split_range gives them. */
template <bool FM, bool FN>
__device__ __forceinline__ void output_tile(T *As, T *Bs, GEMM_OPERANDS, int tid, int warp, int lane, int bx, int by,
                                            int skt0, int skt1, bool part, tile::Strides ld)
{
    const int row0 = by * BM, col0 = bx * BN;
    Frag f;
#if SLICEK > 1
    f.ks = warp / ((BM / WM) * (BN / WN));
    warp %= (BM / WM) * (BN / WN); /* the warp tile, the same in every slice */
#endif
    f.m0 = (warp / (BN / WN)) * WM;
    f.n0 = (warp % (BN / WN)) * WN;
    f.g = lane / 4;
    f.t = lane % 4;
#pragma unroll
    for (int i = 0; i < MTILES; ++i)
#pragma unroll
        for (int j = 0; j < NTILES; ++j)
#pragma unroll
            for (int r = 0; r < CR; ++r) {
                f.acc[i][j][r] = T(0);
                f.corr[SEPC ? i : 0][SEPC ? j : 0][r] = T(0);
                f.total[PROM ? i : 0][PROM ? j : 0][r] = T(0);
            }
    f.chain = 0;
    int kt0 = skt0, kt1 = skt1;
    if constexpr (STREAMK == 0)
        split_range(K, kt0, kt1);
    const T beta_c = tile_beta(beta);
#if PFC
    /* The tile's rows of C, a 128-byte line at a time (one more a row for a row that starts off a
     * line), asked of L2 now: the K loop hides the memory's latency that the epilogue would wait on. */
    if (beta_c != T(0)) {
        constexpr int LINE = 128 / (int)sizeof(T), LINES = (BN + LINE - 1) / LINE + 1;
        for (int l = tid; l < BM * LINES; l += THREADS) {
            const int r = row0 + l / LINES, c = col0 + min((l % LINES) * LINE, BN - 1);
            if ((FM || r < M) && (FN || c < N))
                asm volatile("prefetch.global.L2 [%0];" ::"l"(&C[(idx_t)r * ld.c + c]));
        }
    }
#endif
    tile::mainloop<THREADS, FM, FN>(f, As, Bs, A, B, M, N, K, ld.a, ld.b, row0, col0, kt0, kt1, tid);
    f.finish();
#if SLICEK > 1
    slice_sum(f, As, warp, lane);
#endif
    const bool plain = split_begin(SPLIT_SERIAL ? by * cdiv(N, BN) + bx : 0);
#if CSTAGE
    /* C's tile through shared memory: each thread puts its accumulators at their place in the tile,
     * then the block stores it row by row, consecutive threads on consecutive columns, so that a
     * warp's store covers a run of the row and each sector is written once. From the registers, a
     * row not 16-byte aligned takes each thread's pair as two 8-byte stores 16 bytes apart across the
     * warp: every sector written twice. Rows BN + 8 apart: NVRTC writes each thread's f64 pair as one
     * 16-byte store, whose quarter-warp (two rows of four threads) met two ways in a bank with rows
     * BN + 4 apart; BN + 8 ran 1.004-1.029x faster at all ten staged shapes timed (f64, beta 0 and 1). */
    constexpr int CS_LD = BN + 8;
    T *Cs = As;
    __syncthreads(); /* every warp has read its last k-tile */
#pragma unroll
    for (int i = 0; i < MTILES; ++i)
#pragma unroll
        for (int h = 0; h < CR / 2; ++h)
#pragma unroll
            for (int j = 0; j < NTILES; ++j)
#pragma unroll
                for (int e = 0; e < 2; ++e)
                    Cs[(f.m0 + i * IM + 8 * h + f.g) * CS_LD + f.n0 + j * 8 + 2 * f.t + e] = f.acc[i][j][2 * h + e];
    __syncthreads();
    store_staged<CS_LD, true, FM, FN>(C + (idx_t)row0 * ld.c + col0, ld.c, Cs, M - row0, N - col0, alpha,
                                      beta_c, tid);
    (void)plain;
#else
#pragma unroll
    for (int i = 0; i < MTILES; ++i) {
#pragma unroll
        for (int h = 0; h < CR / 2; ++h) { /* the 8-row halves of an instruction tile */
            const int gr = row0 + f.m0 + i * IM + 8 * h + f.g;
#if SLICEK > 1
            if ((!FM && gr >= M) || f.ks != 0) /* slice 0 holds the sums */
#else
            if (!FM && gr >= M)
#endif
                continue;
#pragma unroll
            for (int j = 0; j < NTILES; ++j) {
                const int gc = col0 + f.n0 + j * 8 + 2 * f.t;
                const T *v = &f.acc[i][j][2 * h];
                if (SPLITK > 1 && !plain) {
#pragma unroll
                    for (int e = 0; e < 2; ++e)
                        if (FN || gc + e < N)
                            split_put(C, W, (idx_t)gr * N + gc + e, M, N, v[e], alpha);
                } else if (STREAMK > 0 && part) {
#pragma unroll
                    for (int e = 0; e < 2; ++e)
                        if (FN || gc + e < N)
                            atomicAdd(&C[(idx_t)gr * ld.c + gc + e], alpha * v[e]);
                } else if (EVEC_C == 2 && (FN || gc < N)) {
                    store_c<EVEC_C>(&C[(idx_t)gr * ld.c + gc], v, alpha, beta_c);
                } else {
#pragma unroll
                    for (int e = 0; e < 2; ++e)
                        if (FN || gc + e < N)
                            store_c<1>(&C[(idx_t)gr * ld.c + gc + e], &v[e], alpha, beta_c);
                }
            }
        }
    }
#endif
    split_end(SPLIT_SERIAL ? by * cdiv(N, BN) + bx : 0);
}

#include "pack_ld.cuh"

extern "C" __global__ void LAUNCH_BOUNDS(THREADS) gemm(GEMM_ARGS)
{
    grid_dep_sync();
#if BATCHED
    BATCH_SELECT(ASYNC == 1);
#endif
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *As = reinterpret_cast<T *>(smem_raw);
    T *Bs = As + PIPE_STAGES * tile::A_STAGE;
    /* NVRTC's code depends on the order of these steps (docs/NOTES.md, "Stream-K"): the thread's
     * coordinates first, then the block's, as before output_tile was split out. */
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
#if PACKLD_A || PACKLD_B
    /* PACK_LD: the operands pack_ld copied packed into W, read from there (rows their length apart). */
    tile::Strides ld = tile::strides(M, N, K, lda, ldb, ldc);
    if (PACKLD_A) {
        A = packed_at(W, 0);
        ld.a = OP_TA ? M : K;
    }
    if (PACKLD_B) {
        B = packed_at(W, pack_wb(M, K));
        ld.b = OP_TB ? K : N;
    }
#else
    const tile::Strides ld = tile::strides(M, N, K, lda, ldb, ldc);
#endif
#if STREAMK > 0
    streamk_runs(cdiv(N, BN), cdiv(M, BM), cdiv(K, BK), [&](int bx, int by, int kt0, int kt1, bool part) {
#if EDGE_SPLIT
        if (tile::interior_tile(bx, by, M, N))
            output_tile<true, true>(As, Bs, M, N, K, alpha, A, B, beta, C, W, tid, warp, lane, bx, by, kt0, kt1, part, ld);
        else
#endif
            output_tile<FULL_M, FULL_N>(As, Bs, M, N, K, alpha, A, B, beta, C, W, tid, warp, lane, bx, by, kt0, kt1,
                                        part, ld);
    });
#else
    int bx, by;
    if (!block_coords<SUPER>(cdiv(N, BN), cdiv(M, BM), bx, by))
        return;
#if EDGE_SPLIT
    if (tile::interior_tile(bx, by, M, N))
        output_tile<true, true>(As, Bs, M, N, K, alpha, A, B, beta, C, W, tid, warp, lane, bx, by, 0, 0, false, ld);
    else
#endif
        output_tile<FULL_M, FULL_N>(As, Bs, M, N, K, alpha, A, B, beta, C, W, tid, warp, lane, bx, by, 0, 0, false, ld);
#endif
}
