/* hmma.cu — BF16 and FP16 GEMM on the tensor cores with mma.sync (sm_80+: sm_80, 86, 89, and 90,
 * where wgmma would be faster): A, B and C in the half type, FP32 accumulation, alpha and beta as
 * floats, C = alpha op(A) op(B) + beta C with each result rounded once to the type (as cublasGemmEx
 * with CUBLAS_COMPUTE_32F). bf16 and f16 share the code: the instruction's type, the conversions
 * (gemm_common.cuh's half_to_float, float2_to_half2) follow the pasted BF16.
 *
 * Each warp owns a WM x WN warp tile of (WM/16) x (WN/8) accumulator tiles, one
 * mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16} each per k-step of 16. Fragment layout (PTX ISA,
 * m16n8k16 with .bf16/.f16), g = lane/4, t = lane%4: A registers a0..a3 hold the pairs
 * A[g][2t..2t+1], A[g+8][2t..], A[g][2t+8..], A[g+8][2t+8..]; B registers b0, b1 the pairs
 * B[2t..2t+1][g], B[2t+8..][g]; C registers c0..c3 C[g][2t], C[g][2t+1], C[g+8][2t], C[g+8][2t+1].
 * LDMATRIX = 1 reads them with ldmatrix.x4 (four 8x8 matrices of 16-bit elements per instruction,
 * each lane giving one row's address): A stored M x K and B^T (op NT: B stored N x K) as they are
 * stored, A stored K x M (TN, TT) and B stored K x N (NN, TN) with .trans, which hands each lane
 * the pair along K the instruction wants. LDMATRIX = 0 reads each 32-bit register with its own
 * shared-memory load (a pair along K across two stored rows as two 16-bit loads): the first step of
 * the walk (configs/h01_mma.json).
 *
 * Tiles reach shared memory as stored: As[m][k] (BK + PAD_A per row) or at TN, TT As[k][m] (BM +
 * PAD_A), Bs[k][n] (BN + PAD_B) or at NT, TT Bs[n][k] (BK + PAD_B): a padding of 8 elements makes a row an odd number of 16-byte units at the
 * shipped tile sizes, so the 8 rows one ldmatrix matrix reads fall in distinct banks. ASYNC = 1
 * copies them with cp.async, STAGES k-tiles in flight (STAGES = 1: copy, wait, compute); ASYNC = 0
 * loads through registers into one stage. Copies move EV_A / EV_B elements (16, 8, 4 bytes;
 * 2-byte loads where a leading dimension or pointer is odd), the widest the layout's alignment
 * allows (ALIGN_A, ALIGN_B); a copy that crosses the matrix's edge reads only its valid elements
 * and zero-fills the rest (cp.async's src-size), so any M, N, K works. Promotion (KPROMOTE > 0):
 * every KPROMOTE / BK k-tiles the accumulators are added into a second set (total) by FP32 adds
 * and restart from zero, because the tensor cores' accumulation rounds toward zero (Fasi et al.
 * 2021) and its error grows with the chain's length, as in tc32.cu; it costs a second set of
 * accumulator registers (64 a thread at 64x32 warp tiles). Layouts: every op (NT is x W^T, a
 * transformer's linear layer), any leading dimensions, strided batches on grid z. Example:
 * configs/h04_tuned.json; the walk: configs/half.list.
 *
 * engine:template
{
  "summary": "BF16 / FP16 GEMM with FP32 accumulation on mma.sync m16n8k16 (sm_80+), ldmatrix and a cp.async pipeline",
  "dtypes": ["bf16", "f16"],
  "pdl": true,
  "peak": "tensor",
  "params": {
    "BM": {"default": 128, "min": 16, "max": 256, "doc": "rows of C per block tile"},
    "BN": {"default": 128, "min": 16, "max": 256, "doc": "columns of C per block tile"},
    "BK": {"default": 32, "values": [16, 32, 64], "doc": "depth of a k-tile (a multiple of the instruction's k, 16)"},
    "WM": {"default": 64, "min": 16, "max": 128, "doc": "rows of C per warp tile: WM / 16 instruction tiles"},
    "WN": {"default": 64, "min": 16, "max": 128, "doc": "columns of C per warp tile: WN / 8 instruction tiles"},
    "STAGES": {"default": 3, "min": 1, "max": 6, "doc": "shared-memory stages: with ASYNC, STAGES - 1 k-tiles are copied while one is computed (1: copy, wait, compute)"},
    "ASYNC": {"default": 1, "values": [0, 1], "doc": "1: tiles copied by cp.async; 0: loaded through registers (one stage)"},
    "LDMATRIX": {"default": 1, "values": [0, 1], "doc": "1: fragments read by ldmatrix.x4 (.trans for B at op NN); 0: one 32-bit shared-memory load per register"},
    "PAD_A": {"default": 8, "values": [0, 8, 16], "doc": "elements added to each stored row of A's tile (8: ldmatrix's rows in distinct banks)"},
    "PAD_B": {"default": 8, "values": [0, 8, 16], "doc": "elements added to each stored row of B's tile"},
    "KPROMOTE": {"default": 256, "values": [0, 64, 128, 256, 512, 1024], "doc": "elements of K the tensor cores accumulate before the partial sums are added into FP32 registers by ordinary adds (0: never): the tensor cores' own FP32 accumulation truncates, and over all of a long K its error outgrows cuBLAS's (which splits K)"},
    "SUPER": {"default": 0, "min": 0, "max": 32, "doc": "supertile width: blocks in S x S squares of tiles, sharing A's rows and B's columns in L2 (0 or 1: off)"},
    "MINB": {"default": 0, "min": 0, "max": 8, "doc": "__launch_bounds__ min blocks per SM (0: none)"},
    "PDL": {"default": 2, "values": [0, 1, 2], "doc": "programmatic dependent launch on sm_90+ (gemm_common.cuh): 0 off, 1 on, 2 on unless a grid of one partial wave would land unevenly behind itself (plan_use_pdl, engine/core/template.h)"}
  },
  "derived": {
    "THREADS": "32 * (BM / WM) * (BN / WN)"
  },
  "constraints": [
    {"rule": "ARCH >= 80", "why": "mma.sync m16n8k16 with bf16 operands, cp.async and cvt to bf16x2 need sm_80 or newer"},
    "warp_tiles",
    {"rule": "WM % 16 == 0", "why": "a warp tile is made of whole instruction tiles of 16 rows"},
    {"rule": "WN % 16 == 0", "why": "one ldmatrix.x4 feeds two instruction tiles of 8 columns"},
    {"rule": "THREADS <= 1024", "why": "one warp per warp tile, and a block holds at most 32 warps"},
    {"rule": "ASYNC == 1 || STAGES == 1", "why": "without cp.async the tiles are loaded through registers into one stage"},
    {"rule": "KPROMOTE % BK == 0", "why": "partial sums are promoted between k-tiles"}
  ],
  "switches": {
    "EV_A": "ALIGN_A >= 8 ? 8 : ALIGN_A >= 4 ? 4 : ALIGN_A >= 2 ? 2 : 1",
    "EV_B": "ALIGN_B >= 8 ? 8 : ALIGN_B >= 4 ? 4 : ALIGN_B >= 2 ? 2 : 1",
    "EVEC_C": "ALIGN_C >= 2 ? 2 : 1",
    "BATCHED": "BATCH > 1",
    "OP_TA": "TA",
    "OP_TB": "TB",
    "LDP": "LD_PACKED"
  },
  "let": {
    "GX": "cdiv(N, BN)",
    "GY": "cdiv(M, BM)",
    "SW": "SUPER > 1 ? SUPER : 1"
  },
  "traffic": "BATCH * (M * K * cdiv(N, BN) + K * N * cdiv(M, BM) + M * N)",
  "compile_cost": "200",
  "model": {"tile": ["BM", "BN", "BK"]},
  "launches": [
    {"kernel": "gemm", "grid": ["SW > 1 ? cdiv(GX, SW) * cdiv(GY, SW) * SW * SW : GX", "SW > 1 ? 1 : GY", "BATCH"],
     "block": ["THREADS", 1, 1],
     "smem": "STAGES * ((TA ? BK * (BM + PAD_A) : BM * (BK + PAD_A)) + (TB ? BN * (BK + PAD_B) : BK * (BN + PAD_B))) * ELEM"}
  ]
}
*/
#include "gemm_common.cuh"

constexpr int MT = WM / 16; /* instruction tiles per warp tile, down */
constexpr int NT = WN / 8;  /* ... and across */
constexpr int LDS_A = OP_TA ? BM + PAD_A : BK + PAD_A;    /* elements between stored rows of As */
constexpr int LDS_B = OP_TB ? BK + PAD_B : BN + PAD_B;    /* ... of Bs */
constexpr int A_STAGE = OP_TA ? BK * LDS_A : BM * LDS_A;  /* elements of one stage */
constexpr int B_STAGE = OP_TB ? BN * LDS_B : BK * LDS_B;
static_assert(BK % 16 == 0, "a k-tile is whole k-steps of the instruction");
static_assert(LDS_A % 8 == 0 && LDS_B % 8 == 0, "stored rows start 16-byte aligned: cp.async's 16-byte copies and ldmatrix's row addresses need it");

/* One instruction: c += a * b, FP32 accumulators. */
__device__ __forceinline__ void mma(float (&c)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
#if BF16
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
#else
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
#endif
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* Four 8x8 matrices of 16-bit elements; lane l gives the address of row l % 8 of matrix l / 8. */
template <bool TRANS> __device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const T *p)
{
    const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
    if constexpr (TRANS)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(a));
    else
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                     : "r"(a));
}

template <int BYTES> struct Raw;
template <> struct Raw<16> { typedef uint4 type; };
template <> struct Raw<8> { typedef uint2 type; };
template <> struct Raw<4> { typedef unsigned type; };
template <> struct Raw<2> { typedef unsigned short type; };

/* EV elements from src to dst, of which the first n (0..EV) are inside the matrix; the rest of dst
 * gets zeros. cp.async where ASYNC and the copy is 4 bytes or more (src-size n * 2: nothing is read
 * past the valid elements); otherwise through registers, as one vector when full (n == EV).
 * load_tile decides full on the unclamped count: for sm_90, ptxas 13.0 turned `n == EV` after the
 * clamp into one VIMNMX.RELU with a predicate output, the same SASS it gives `clamp(left) == left`,
 * and on an H200 a copy with nothing left (left == 0: rows past M, k past K) took the vector path and
 * put EV elements from the matrix's start where zeros belong (h01, h02 at 1x4096x1100). */
template <int EV> __device__ __forceinline__ void copy_chunk(T *dst, const T *src, int n, bool full)
{
    if constexpr (ASYNC && EV >= 2) {
        const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
        if constexpr (EV == 8)
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(2 * n));
        else
            asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(d), "l"(src), "n"(2 * EV), "r"(2 * n));
    } else {
        typedef typename Raw<2 * EV>::type V;
        if (full) {
            *reinterpret_cast<V *>(dst) = *reinterpret_cast<const V *>(src);
        } else {
#pragma unroll
            for (int i = 0; i < EV; ++i)
                dst[i] = i < n ? src[i] : T(0);
        }
    }
}

/* A ROWS x COLS tile of a row-major matrix (rows ld apart) from row r0, column c0, into dst (rows
 * DLD apart); rows at or past nrows and columns at or past ncols are zeros. */
template <int ROWS, int COLS, int EV, int DLD>
__device__ __forceinline__ void load_tile(T *dst, const T *src, int ld, int r0, int c0, int nrows, int ncols)
{
    constexpr int CPR = COLS / EV, TOTAL = ROWS * CPR;
    static_assert(COLS % EV == 0, "a tile's row is whole copies");
    /* 2-byte copies (an odd leading dimension) are many: unrolled, their addresses took the
     * accumulators' registers (spills at 128x128 tiles). */
#pragma unroll(EV == 1 ? 1 : 64)
    for (int it = 0; it < cdiv(TOTAL, THREADS); ++it) {
        const int c = threadIdx.x + it * THREADS;
        if (TOTAL % THREADS != 0 && c >= TOTAL)
            break;
        const int r = c / CPR, col = (c % CPR) * EV, gr = r0 + r, gc = c0 + col;
        const int left = gr < nrows ? ncols - gc : 0;
        const int n = left < 0 ? 0 : left > EV ? EV : left;
        /* EV == 1 keeps n == 1: its SASS has no such VIMNMX, and its PTX stays as measured. */
        const bool full = EV == 1 ? n == 1 : left >= EV;
        copy_chunk<EV>(dst + r * DLD + col, n > 0 ? src + (idx_t)gr * ld + gc : src, n, full);
    }
}

/* The 32 bits at p (two elements, p 4-byte aligned). */
__device__ __forceinline__ unsigned lds32(const T *p) { return *reinterpret_cast<const unsigned *>(p); }

/* Elements (k, c) and (k + 1, c) of a tile stored k-major (rows ld apart), as one register: k's in
 * the low half. */
__device__ __forceinline__ unsigned pair(const T *s, int k, int c, int ld)
{
    return s[k * ld + c] | static_cast<unsigned>(s[(k + 1) * ld + c]) << 16;
}

extern "C" __global__ void LAUNCH_BOUNDS(THREADS) gemm(GEMM_ARGS)
{
    grid_dep_sync();
#if BATCHED
    BATCH_SELECT(ASYNC);
#endif
    int bx, by;
    if (!block_coords<(SUPER > 1 ? SUPER : 1)>(cdiv(N, BN), cdiv(M, BM), bx, by))
        return;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *As = reinterpret_cast<T *>(smem_raw);
    T *Bs = As + STAGES * A_STAGE;
    const int m_blk = by * BM, n_blk = bx * BN;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int wm0 = (warp / (BN / WN)) * WM, wn0 = (warp % (BN / WN)) * WN;
    const int g = lane / 4, t = lane % 4;

    constexpr bool PROM = KPROMOTE > 0;
    float acc[MT][NT][4] = {}, total[PROM ? MT : 1][PROM ? NT : 1][4] = {};
    /* Promotion: acc added into total, acc restarted. */
    auto promote = [&] {
        if constexpr (PROM) {
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j)
#pragma unroll
                    for (int r = 0; r < 4; ++r) {
                        total[i][j][r] += acc[i][j][r];
                        acc[i][j][r] = 0.0f;
                    }
        }
    };

    /* k-tile kt into stage s. */
    auto load_stage = [&](int s, int kt) {
        const int k0 = kt * BK;
#if OP_TA
        load_tile<BK, BM, EV_A, LDS_A>(As + s * A_STAGE, A, LD_A, k0, m_blk, K, M);
#else
        load_tile<BM, BK, EV_A, LDS_A>(As + s * A_STAGE, A, LD_A, m_blk, k0, M, K);
#endif
#if OP_TB
        load_tile<BN, BK, EV_B, LDS_B>(Bs + s * B_STAGE, B, LD_B, n_blk, k0, N, K);
#else
        load_tile<BK, BN, EV_B, LDS_B>(Bs + s * B_STAGE, B, LD_B, k0, n_blk, K, N);
#endif
    };

    /* The k-steps of stage s. */
    auto compute = [&](int s) {
        const T *as = As + s * A_STAGE, *bs = Bs + s * B_STAGE;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            unsigned a[MT][4], b[NT][2];
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                const int row = wm0 + i * 16;
#if LDMATRIX && OP_TA /* As[k][m], transposed: matrices (k 0-7, m 0-7), (k 0-7, m 8-15), (k 8-15, m 0-7), (k 8-15, m 8-15) */
                ldmatrix_x4<true>(a[i], as + (kk + (lane / 16) * 8 + lane % 8) * LDS_A + row + ((lane / 8) % 2) * 8);
#elif LDMATRIX /* As[m][k]: matrices (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15), (m 8-15, k 8-15) */
                ldmatrix_x4<false>(a[i], as + (row + lane % 16) * LDS_A + kk + (lane / 16) * 8);
#elif OP_TA
                a[i][0] = pair(as, kk + 2 * t, row + g, LDS_A);
                a[i][1] = pair(as, kk + 2 * t, row + g + 8, LDS_A);
                a[i][2] = pair(as, kk + 2 * t + 8, row + g, LDS_A);
                a[i][3] = pair(as, kk + 2 * t + 8, row + g + 8, LDS_A);
#else
                a[i][0] = lds32(as + (row + g) * LDS_A + kk + 2 * t);
                a[i][1] = lds32(as + (row + g + 8) * LDS_A + kk + 2 * t);
                a[i][2] = lds32(as + (row + g) * LDS_A + kk + 2 * t + 8);
                a[i][3] = lds32(as + (row + g + 8) * LDS_A + kk + 2 * t + 8);
#endif
            }
#if LDMATRIX
#pragma unroll
            for (int j = 0; j < NT; j += 2) {
                unsigned r[4];
                const int col = wn0 + j * 8;
#if OP_TB /* Bs[n][k]: matrices (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15) */
                ldmatrix_x4<false>(r, bs + (col + (lane / 16) * 8 + lane % 8) * LDS_B + kk + ((lane / 8) % 2) * 8);
#else /* Bs[k][n], transposed: matrices (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15) */
                ldmatrix_x4<true>(r, bs + (kk + lane % 16) * LDS_B + col + (lane / 16) * 8);
#endif
                b[j][0] = r[0];
                b[j][1] = r[1];
                b[j + 1][0] = r[2];
                b[j + 1][1] = r[3];
            }
#else
#pragma unroll
            for (int j = 0; j < NT; ++j) {
                const int n = wn0 + j * 8 + g;
#if OP_TB
                b[j][0] = lds32(bs + n * LDS_B + kk + 2 * t);
                b[j][1] = lds32(bs + n * LDS_B + kk + 2 * t + 8);
#else
                b[j][0] = pair(bs, kk + 2 * t, n, LDS_B);
                b[j][1] = pair(bs, kk + 2 * t + 8, n, LDS_B);
#endif
            }
#endif
#pragma unroll
            for (int i = 0; i < MT; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j)
                    mma(acc[i][j], a[i], b[j]);
        }
    };

    /* The pipeline: STAGES - 1 k-tiles in flight before the first is computed; at k-tile kt, once
     * its copies have landed (wait_group STAGES - 2) and every warp is done with kt - 1, the copy of
     * kt + STAGES - 1 goes into kt - 1's stage and kt is computed. One commit per k-tile, empty
     * past the end, keeps the group count. STAGES = 1: copy, wait, compute, and a barrier before the
     * next copy overwrites the stage. */
    const int KT = cdiv(K, BK);
    auto commit = [] {
        if constexpr (ASYNC)
            cp_async_commit();
    };
#pragma unroll 1
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < KT)
            load_stage(s, s);
        commit();
    }
#pragma unroll 1
    for (int kt = 0; kt < KT; ++kt) {
        if constexpr (STAGES == 1) {
            load_stage(0, kt);
            commit();
        }
        if constexpr (ASYNC)
            cp_async_wait<(STAGES >= 2 ? STAGES - 2 : 0)>();
        __syncthreads();
        if constexpr (STAGES > 1) {
            const int next = kt + STAGES - 1;
            if (next < KT)
                load_stage(next % STAGES, next);
            commit();
        }
        compute(kt % STAGES);
        if constexpr (PROM)
            if (kt % (KPROMOTE / BK) == KPROMOTE / BK - 1)
                promote();
        if constexpr (STAGES == 1)
            __syncthreads();
    }
    promote(); /* the last chain (an empty one adds zeros) */
    if constexpr (ASYNC)
        cp_async_wait<0>();

    /* C = alpha acc + beta C, rounded once to T; pairs of columns as one 32-bit access where C's
     * alignment allows (EVEC_C). beta == 0 does not read C. */
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = m_blk + wm0 + i * 16 + g + 8 * h;
            if (row >= M)
                continue;
#pragma unroll
            for (int j = 0; j < NT; ++j) {
                const int col = n_blk + wn0 + j * 8 + 2 * t;
                if (col >= N)
                    continue;
                T *c = C + (idx_t)row * LD_C + col;
                const bool pair = col + 1 < N;
                const float(&sum)[4] = PROM ? total[PROM ? i : 0][PROM ? j : 0] : acc[i][j];
                float v0 = alpha * sum[2 * h], v1 = alpha * sum[2 * h + 1];
                if (beta != 0.0f) {
                    v0 += beta * half_to_float(c[0]);
                    if (pair)
                        v1 += beta * half_to_float(c[1]);
                }
                const unsigned packed = float2_to_half2(v0, v1);
                if (EVEC_C == 2 && pair) {
                    *reinterpret_cast<unsigned *>(c) = packed;
                } else {
                    c[0] = static_cast<T>(packed & 0xFFFFu);
                    if (pair)
                        c[1] = static_cast<T>(packed >> 16);
                }
            }
        }
}
