/* gemv.cu — a matrix times a few vectors: C = alpha * op(A) * op(B) + beta * C, built for shapes
 * where one side of C is small (N or M at most NV). No tile of the other templates suits them: an
 * N = 1 problem in a 16-column tile wastes 15/16 of its arithmetic, and even a tile one column wide
 * stages the long operand through shared memory for nothing, since each of its elements is used
 * once per vector. Here the long operand L (R rows of K) streams from global memory (L2 when it fits
 * there) straight into registers, and the vectors V (K x NJ) are read through L1, where every block
 * of the grid finds them.
 *
 *   VM 0 (N the narrow side): L = op(A), R = M; V = op(B); C(r, j) = C[r][j].
 *   VM 1 (M the narrow side): L = op(B)^T, R = N; V = op(A)^T; C(r, j) = C[j][r] (C^T = op(B)^T op(A)^T).
 * A block takes NJ = min(NV, the narrow side) vectors; grid y walks groups of NJ when the narrow side
 * is wider than NV, re-reading L for each group, so any shape runs (slowly when neither side is small).
 *
 * Which way L is stored picks the loop (LDOT):
 *   LDOT 1, a row of L contiguous along K (NN/NT A at VM 0, NT/TT B at VM 1): LANES threads share a
 *     row, each reading VL elements a step, and the lanes' partial sums meet by shuffles; a group
 *     of LANES threads keeps ROWS rows in flight. A block covers (THREADS / LANES) * ROWS rows.
 *   LDOT 0, L stored K x R, contiguous along its rows (TN/TT A at VM 0, NN/TN B at VM 1): a thread
 *     owns VL neighbouring rows, a warp reads 32 * VL of them at one k, and KW groups of threads
 *     take every KW-th k; their sums meet in shared memory. A block covers (THREADS / KW) * VL rows.
 * UNROLL steps' loads are issued before their arithmetic, so that enough bytes are in flight to
 * keep the memory system busy. K can be split over grid z (SPLITK, the three modes of splitk.cuh),
 * for shapes with few rows and a long K. Any M, N, K and layout; vector loads where the alignment
 * of the rows allows (EVEC_L; V's by VEC_V and, for one vector, a check of its pointer). Example:
 * configs/gemv.json.
 *
 * bf16 and f16 (class bf16/f16, as cublasGemmEx with CUBLAS_COMPUTE_32F): A, B and C in the type,
 * loaded as stored (VEC 8: 8 halves a 16-byte load) and widened to float only for the products
 * (tc); sums, alpha and beta in FP32; C read (beta != 0) and written in the type, rounded once to
 * nearest even (gemm_common.cuh's float_to_half). A split of K goes through W as FP32 partials,
 * added by reduce before the one rounding (switch SKMODE 1; SPLITK_MODE 0 and 2 refused there).
 * sm_80+. Not yet timed on a GPU (tune/shapes_gemv_half.json).
 *
 * engine:template
{
  "summary": "a matrix times a few vectors (N or M at most NV): the long operand streamed into registers, no shared-memory tiles; bf16/f16 with FP32 sums and one rounding",
  "dtypes": ["f32", "f64", "bf16", "f16"],
  "pdl": true,
  "peak": "fma",
  "params": {
    "NV": {"default": 4, "min": 1, "max": 16, "doc": "vectors a block takes: C's narrow side, in groups of NV over grid y"},
    "THREADS": {"default": 256, "min": 32, "max": 1024, "doc": "threads per block"},
    "VEC": {"default": 4, "values": [1, 2, 4, 8], "doc": "elements of L per load, at most 16 bytes (VL: 4 floats, 2 doubles at VEC 4 or 8; 4 or 8 halves)"},
    "LANES": {"default": 32, "values": [1, 2, 4, 8, 16, 32], "doc": "LDOT 1: threads sharing one row of L along K"},
    "ROWS": {"default": 2, "min": 1, "max": 8, "doc": "LDOT 1: rows of L per group of LANES threads"},
    "KW": {"default": 8, "values": [1, 2, 4, 8, 16, 32], "doc": "LDOT 0: groups of threads along K in a block (every KW-th k to each)"},
    "UNROLL": {"default": 4, "min": 1, "max": 8, "doc": "steps along K whose loads are issued together"},
    "MINB": {"default": 0, "min": 0, "max": 32, "doc": "__launch_bounds__ min blocks per SM (0: none)"},
    "SPLITK": {"default": 0, "min": 0, "max": 64, "doc": "split K over grid z; 0: as the shape needs (switch SK: 1 where the grid has SPLIT_BLOCKS / SPLIT_WHOLE blocks or more, else the largest power of two at most SPLIT_BLOCKS / blocks (rounded up), K / SD and 64: a split's waits and atomics cost a short kernel more than it gains)"},
    "SPLIT_BLOCKS": {"default": 528, "min": 1, "max": 65536, "doc": "SPLITK 0: the blocks to aim for (528: four an SM of an H100, enough loads in flight for DRAM)"},
    "SPLIT_WHOLE": {"default": 4, "min": 1, "max": 64, "doc": "SPLITK 0: a grid of SPLIT_BLOCKS / SPLIT_WHOLE blocks or more runs K whole"},
    "SPLIT_DEPTH": {"default": 128, "min": 16, "max": 65536, "doc": "SPLITK 0: the least K a split takes (switch SD) where the narrow side is one group of vectors, K >= 4 x SPLIT_DEPTH and the grid has at most SPLIT_BLOCKS / 8 blocks; 512 elsewhere: several groups, a short K or a fuller grid lost more to a split's waits than they gained (docs/RESULTS.md, session 11)"},
    "SPLITK_MODE": {"default": 0, "values": [0, 1, 2], "doc": "0: atomicAdd into C pre-scaled by beta; 1: deterministic two-pass reduction through W; 2: one launch, the first split of a block's rows writes and the others add after it (splitk.cuh). bf16/f16 split through W only (FP32 partials, one rounding: switch SKMODE 1), whatever this says under SPLITK 0"},
    "PDL": {"default": 2, "values": [0, 1, 2], "doc": "programmatic dependent launch on sm_90+ (gemm_common.cuh): 0 off, 1 on, 2 on unless a grid of one partial wave would land unevenly behind itself (plan_use_pdl, engine/core/template.h)"}
  },
  "constraints": [
    {"rule": "THREADS % 32 == 0", "why": "whole warps: the lanes' shuffles assume them, and KW (at most 32) groups of equal size"},
    {"rule": "UNROLL * (cdiv(min(VEC * ELEM, 16), 4) * ROWS + min(VEC, 16 / ELEM) * max(1, ELEM / 4) * NV) <= 160", "why": "UNROLL steps of loads (ROWS rows and NV vectors, VEC elements each) are held in registers: at most 160 (a vector read element by element takes a register an element, a 2-byte one too)"},
    {"rule": "KW == 1 || THREADS * min(VEC, 16 / ELEM) * NV * max(ELEM, 4) <= 49152", "why": "the KW groups' sums (FP32 for bf16/f16) meet in at most 48 KB of static shared memory"},
    {"rule": "ELEM != 2 || ARCH >= 80", "why": "bf16/f16: C's rounding to the half type (cvt.rn.bf16x2.f32) needs sm_80 or newer"},
    {"rule": "ELEM != 2 || SPLITK <= 1 || SPLITK_MODE == 1", "why": "bf16/f16: the splits' FP32 sums must all be added before C's one rounding, which only SPLITK_MODE 1 does (FP32 partials in W, added by reduce); modes 0 and 2 add into a bf16/f16 C with atomics, a rounding at every add (SPLITK 0 splits through W by itself)"}
  ],
  "requires": [
    {"rule": "LDC == N || SPLITK <= 1", "why": "split-K's scale_c, reduce and workspace index C as packed M x N (SPLITK 0 does not split there)"},
    {"rule": "BATCH == 1 || SPLITK <= 1", "why": "a batch takes grid z, which split-K's splits take otherwise (SPLITK 0 does not split there)"}
  ],
  "switches": {
    "VM": "N <= NV ? 0 : M <= NV ? 1 : N <= M ? 0 : 1",
    "NJ": "min(NV, VM ? M : N)",
    "LDOT": "VM ? TB : 1 - TA",
    "EVEC_L": "(VM ? ALIGN_B : ALIGN_A) >= min(VEC, 16 / ELEM) ? min(VEC, 16 / ELEM) : (VM ? ALIGN_B : ALIGN_A) >= 4 && min(VEC, 16 / ELEM) > 4 ? 4 : (VM ? ALIGN_B : ALIGN_A) >= 2 && VEC > 2 ? 2 : 1",
    "VK1": "(VM ? (TA ? LDA : 1) : (TB ? 1 : LDB)) == 1",
    "VEC_V": "VK1 && (NJ == 1 || (VM ? ALIGN_A : ALIGN_B) >= EVEC_L) ? 1 : 0",
    "SD": "cdiv(VM ? M : N, NJ) == 1 && K >= 4 * SPLIT_DEPTH && 8 * cdiv(VM ? N : M, LDOT ? THREADS / LANES * ROWS : THREADS / KW * min(VEC, 16 / ELEM)) <= SPLIT_BLOCKS ? SPLIT_DEPTH : 512",
    "SK": "SPLITK > 0 ? SPLITK : LDC != N || BATCH > 1 || SPLIT_WHOLE * cdiv(VM ? N : M, LDOT ? THREADS / LANES * ROWS : THREADS / KW * min(VEC, 16 / ELEM)) * cdiv(VM ? M : N, NJ) >= SPLIT_BLOCKS ? 1 : min(64, min(cdiv(SPLIT_BLOCKS, cdiv(VM ? N : M, LDOT ? THREADS / LANES * ROWS : THREADS / KW * min(VEC, 16 / ELEM)) * cdiv(VM ? M : N, NJ)), max(1, K / SD))) >= 64 ? 64 : min(64, min(cdiv(SPLIT_BLOCKS, cdiv(VM ? N : M, LDOT ? THREADS / LANES * ROWS : THREADS / KW * min(VEC, 16 / ELEM)) * cdiv(VM ? M : N, NJ)), max(1, K / SD))) >= 32 ? 32 : min(64, min(cdiv(SPLIT_BLOCKS, cdiv(VM ? N : M, LDOT ? THREADS / LANES * ROWS : THREADS / KW * min(VEC, 16 / ELEM)) * cdiv(VM ? M : N, NJ)), max(1, K / SD))) >= 16 ? 16 : min(64, min(cdiv(SPLIT_BLOCKS, cdiv(VM ? N : M, LDOT ? THREADS / LANES * ROWS : THREADS / KW * min(VEC, 16 / ELEM)) * cdiv(VM ? M : N, NJ)), max(1, K / SD))) >= 8 ? 8 : min(64, min(cdiv(SPLIT_BLOCKS, cdiv(VM ? N : M, LDOT ? THREADS / LANES * ROWS : THREADS / KW * min(VEC, 16 / ELEM)) * cdiv(VM ? M : N, NJ)), max(1, K / SD))) >= 4 ? 4 : min(64, min(cdiv(SPLIT_BLOCKS, cdiv(VM ? N : M, LDOT ? THREADS / LANES * ROWS : THREADS / KW * min(VEC, 16 / ELEM)) * cdiv(VM ? M : N, NJ)), max(1, K / SD))) >= 2 ? 2 : 1",
    "SPLIT_SERIAL": "SK > 1 && SPLITK_MODE == 2 && ELEM != 2 && cdiv(VM ? N : M, LDOT ? THREADS / LANES * ROWS : THREADS / KW * min(VEC, 16 / ELEM)) * cdiv(VM ? M : N, NJ) <= 4096",
    "SKMODE": "ELEM == 2 ? 1 : SPLITK_MODE",
    "BATCHED": "BATCH > 1",
    "OP_TA": "TA",
    "OP_TB": "TB",
    "LDP": "LD_PACKED"
  },
  "let": {
    "RB": "LDOT ? THREADS / LANES * ROWS : THREADS / KW * min(VEC, 16 / ELEM)",
    "GX": "cdiv(VM ? N : M, RB)",
    "GY": "cdiv(VM ? M : N, NJ)",
    "SPLITS": "SK > 1 && SKMODE != 1 && !SPLIT_SERIAL && K > 0 ? cdiv(cdiv(K, 16), cdiv(cdiv(K, 16), SK)) : SK"
  },
  "workspace": "SK > 1 && SKMODE == 1 ? SK * M * N * (ELEM == 2 ? 2 : 1) : 0",
  "stream_state": "SPLIT_SERIAL",
  "traffic": "BATCH * (M * K * (VM ? 1 : GY) + K * N * (VM ? GY : 1) + M * N)",
  "compile_cost": "60 + UNROLL * min(VEC, 16 / ELEM) * ROWS * NV / 2",
  "model": {"tile": ["VM ? NJ : RB", "VM ? RB : NJ", 1], "atomics": "SK > 1 && SKMODE != 1 ? M * N * (SPLIT_SERIAL ? SPLITS - 1 : SPLITS) : 0", "slow": "EVEC_L < min(VEC, 16 / ELEM) ? 110 : 100"},
  "launches": [
    {"kernel": "scale_c", "if": "SK > 1 && SKMODE != 1 && !SPLIT_SERIAL", "grid": ["cdiv(M * N, 256)", 1, 1], "block": [256, 1, 1]},
    {"kernel": "gemm", "grid": ["GX", "GY", "BATCH > 1 ? BATCH : SPLITS"], "block": ["THREADS", 1, 1]},
    {"kernel": "reduce", "if": "SK > 1 && SKMODE == 1", "grid": ["cdiv(M * N, 256)", 1, 1], "block": [256, 1, 1]}
  ]
}
*/
#include "gemm_common.cuh"
#define BK 16 /* a split's share of K is a whole number of BK (splitk.cuh) */
/* The splits this shape runs: SPLITK, or under SPLITK 0 the switch SK's choice; splitk.cuh reads SPLITK. */
#undef SPLITK
#define SPLITK SK
/* ... and in the mode of switch SKMODE: SPLITK_MODE, or 1 for bf16/f16. Their splits write FP32
 * partials to W and reduce adds them before C's one rounding (class bf16/f16, as cublasGemmEx):
 * modes 0 and 2 add into C with atomics, which for a bf16/f16 C would round at every add. A
 * constraint refuses SPLITK > 1 in those modes; SPLITK 0 takes mode 1 whatever SPLITK_MODE says. */
#undef SPLITK_MODE
#define SPLITK_MODE SKMODE
#include "splitk.cuh"

/* Elements of L per load: VEC, at most 16 bytes, so that one config serves every dtype. */
#define VL (VEC * ELEM > 16 ? 16 / ELEM : VEC)

/* An element of A or B in the compute type TC, in which every product and sum is formed: bf16 and
 * f16 widened to float after their load (gemm_common.cuh), so that the loads stay 2 bytes an
 * element; f32 and f64 as they are. */
__device__ __forceinline__ TC tc(T x)
{
#if IS_HALF
    return half_to_float(x);
#else
    return x;
#endif
}

/* The long operand L (R x K), this block's J <= NJ vectors V (K x J) and C(r, j), as pointers and
 * strides. Columns past J read column J - 1 (vcol), so that the loops need no guards. */
struct Operands {
    const T *L, *V;
    int R, ldl;      /* L(r, k) = L[r * ldl + k] (LDOT) or L[k * ldl + r] */
    int vk, vj;      /* V(k, j) = V[k * vk + vcol[j]] */
    idx_t vcol[NJ];  /* min(j, J - 1) * vj */
    int J, j0;       /* this block's vectors: C's columns (VM 0) or rows (VM 1) j0 ... j0 + J - 1 */
    int ck, cj;      /* C(r, j) = C[r * ck + (j0 + j) * cj] */
};

/* K's range of this block's split (splitk.cuh's split_range, in steps of BK): every split starts
 * aligned to a vector. */
__device__ __forceinline__ void split_k(int K, int &k0, int &k1)
{
    int kt0, kt1;
    split_range(K, kt0, kt1);
    k0 = kt0 * BK;
    k1 = min(K, kt1 * BK);
}

/* One element of C: written as a kernel without split-K would, or this split's part added. */
__device__ __forceinline__ void put_c(T *C, T *W, const Operands &o, int M, int N, int r, int j, TC v, TC alpha,
                                      TC beta, bool plain)
{
    const idx_t at = (idx_t)r * o.ck + (idx_t)(o.j0 + j) * o.cj;
#if SPLITK > 1
    if (!plain) {
        split_put(C, W, at, M, N, v, alpha);
        return;
    }
#endif
#if IS_HALF /* C read (beta != 0) and written in the half type, rounded once to nearest even */
    float x = alpha * v;
    if (beta != 0.0f)
        x += beta * half_to_float(C[at]);
    C[at] = float_to_half(x);
#else
    store_c<1>(&C[at], &v, alpha, beta);
#endif
}

#if LDOT
constexpr int GROUPS = THREADS / LANES;
constexpr int RB = GROUPS * ROWS;

/* The dot-product loop of one group of LANES threads over [k0, k1): ROWS rows at rows[], V's
 * columns read as vectors (VV) or element by element. UNROLL steps' loads are issued before their
 * FMAs; the steps left over run one at a time (the same step, written out: as a template of the
 * step count the compiler ordered the set-up differently, and this code is the one measured).
 * Folding the two loops' step into shared load and FMA functions (tried 2026-11-28) moved the PTX
 * too: here at N = 1 in NT, in LDOT 0 below wherever the vectors are several (67 of the shipped
 * wisdom's 333 gemv kernels), so both stay written out until a GPU session can time the fold. */
template <bool VV>
__device__ __forceinline__ void dot_loop(const Operands &o, const T *const (&rows)[ROWS], int k0, int k1, int lane,
                                         TC (&acc)[ROWS][NJ])
{
    constexpr int EV = EVEC_L, STEP = LANES * EV;
    const int kv = k0 + (k1 - k0) / EV * EV; /* end of the whole vectors */
    int k = k0 + lane * EV;
#pragma unroll 1
    for (; k + (UNROLL - 1) * STEP + EV <= kv; k += UNROLL * STEP) {
        T l[UNROLL][ROWS][EV], v[UNROLL][NJ][EV];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const int kk = k + u * STEP;
#pragma unroll
            for (int i = 0; i < ROWS; ++i)
                vcopy<EV>(l[u][i], rows[i] + kk);
#pragma unroll
            for (int j = 0; j < NJ; ++j) {
                if constexpr (VV)
                    vcopy<EV>(v[u][j], o.V + o.vcol[j] + kk);
                else
#pragma unroll
                    for (int e = 0; e < EV; ++e)
                        v[u][j][e] = o.V[(idx_t)(kk + e) * o.vk + o.vcol[j]];
            }
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
            for (int i = 0; i < ROWS; ++i)
#pragma unroll
                for (int j = 0; j < NJ; ++j)
#pragma unroll
                    for (int e = 0; e < EV; ++e)
                        acc[i][j] += tc(l[u][i][e]) * tc(v[u][j][e]);
    }
#pragma unroll 1
    for (; k + EV <= kv; k += STEP) {
        T l[ROWS][EV], v[NJ][EV];
#pragma unroll
        for (int i = 0; i < ROWS; ++i)
            vcopy<EV>(l[i], rows[i] + k);
#pragma unroll
        for (int j = 0; j < NJ; ++j) {
            if constexpr (VV)
                vcopy<EV>(v[j], o.V + o.vcol[j] + k);
            else
#pragma unroll
                for (int e = 0; e < EV; ++e)
                    v[j][e] = o.V[(idx_t)(k + e) * o.vk + o.vcol[j]];
        }
#pragma unroll
        for (int i = 0; i < ROWS; ++i)
#pragma unroll
            for (int j = 0; j < NJ; ++j)
#pragma unroll
                for (int e = 0; e < EV; ++e)
                    acc[i][j] += tc(l[i][e]) * tc(v[j][e]);
    }
    /* The last K % EV elements of the range, one a lane. Not unrolled: unrolled, it cost f64 at
     * NJ 4 a spill (ptxas). */
#pragma unroll 1
    for (int kk = kv + lane; kk < k1; kk += LANES)
#pragma unroll
        for (int i = 0; i < ROWS; ++i)
#pragma unroll
            for (int j = 0; j < NJ; ++j)
                acc[i][j] += tc(rows[i][kk]) * tc(o.V[(idx_t)kk * o.vk + o.vcol[j]]);
}

__device__ __forceinline__ void gemv_block(const Operands &o, int M, int N, int K, TC alpha, TC beta, T *C, T *W)
{
    const int lane = threadIdx.x % LANES, g = threadIdx.x / LANES;
    const int r0 = blockIdx.x * RB + g * ROWS;
    /* Rows past R read row R - 1 (valid memory, results dropped), so the loop needs no guards. */
    const T *rows[ROWS];
#pragma unroll
    for (int i = 0; i < ROWS; ++i)
        rows[i] = o.L + (idx_t)min(r0 + i, o.R - 1) * o.ldl;
    TC acc[ROWS][NJ];
#pragma unroll
    for (int i = 0; i < ROWS; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j)
            acc[i][j] = TC(0);
    int k0, k1;
    split_k(K, k0, k1);
    /* V's columns as vectors: contiguous along K (VEC_V), aligned as a whole column (one vector)
     * or through the alignment class of its rows; the pointer itself is checked here, since a
     * single column's alignment class says nothing of it. */
    bool vv = false;
    if constexpr (VEC_V && EVEC_L > 1)
        vv = NJ > 1 || ((unsigned long long)o.V % (EVEC_L * sizeof(T))) == 0;
    if (vv)
        dot_loop<true>(o, rows, k0, k1, lane, acc);
    else
        dot_loop<false>(o, rows, k0, k1, lane, acc);
    /* Every lane of the group ends with the group's sums. */
#pragma unroll
    for (int off = LANES / 2; off > 0; off /= 2)
#pragma unroll
        for (int i = 0; i < ROWS; ++i)
#pragma unroll
            for (int j = 0; j < NJ; ++j)
                acc[i][j] += __shfl_xor_sync(0xffffffffu, acc[i][j], off);
    const bool plain = split_begin(blockIdx.y * gridDim.x + blockIdx.x);
#pragma unroll
    for (int i = 0; i < ROWS; ++i)
#pragma unroll
        for (int j = 0; j < NJ; ++j)
            if ((i * NJ + j) % LANES == lane && r0 + i < o.R && j < o.J)
                put_c(C, W, o, M, N, r0 + i, j, acc[i][j], alpha, beta, plain);
    split_end(blockIdx.y * gridDim.x + blockIdx.x);
}

#else /* LDOT 0: L stored K x R */
constexpr int TX = THREADS / KW; /* threads along R */
constexpr int RB = TX * VL;

/* VL rows of L at k (element offsets off[], clamped to R - 1), as vectors when they all exist. */
__device__ __forceinline__ void load_rows(T (&l)[VL], const T *Lk, const int (&off)[VL], bool full)
{
    if (EVEC_L > 1 && full) {
#pragma unroll
        for (int e = 0; e < VL; e += EVEC_L)
            vcopy<EVEC_L>(&l[e], Lk + off[0] + e);
    } else {
#pragma unroll
        for (int e = 0; e < VL; ++e)
            l[e] = Lk[off[e]];
    }
}

__device__ __forceinline__ void gemv_block(const Operands &o, int M, int N, int K, TC alpha, TC beta, T *C, T *W)
{
    const int tx = threadIdx.x % TX, w = threadIdx.x / TX;
    const int rb = blockIdx.x * RB + tx * VL;
    const bool full = rb + VL <= o.R;
    int off[VL];
#pragma unroll
    for (int e = 0; e < VL; ++e)
        off[e] = min(rb + e, o.R - 1);
    TC acc[VL][NJ];
#pragma unroll
    for (int e = 0; e < VL; ++e)
#pragma unroll
        for (int j = 0; j < NJ; ++j)
            acc[e][j] = TC(0);
    int k0, k1;
    split_k(K, k0, k1);
    int k = k0 + w;
#pragma unroll 1
    for (; k + (UNROLL - 1) * KW < k1; k += UNROLL * KW) {
        T l[UNROLL][VL];
        TC v[UNROLL][NJ];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const int kk = k + u * KW;
            load_rows(l[u], o.L + (idx_t)kk * o.ldl, off, full);
#pragma unroll
            for (int j = 0; j < NJ; ++j)
                v[u][j] = tc(o.V[(idx_t)kk * o.vk + o.vcol[j]]);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
            for (int e = 0; e < VL; ++e)
#pragma unroll
                for (int j = 0; j < NJ; ++j)
                    acc[e][j] += tc(l[u][e]) * v[u][j];
    }
#pragma unroll 1
    for (; k < k1; k += KW) {
        T l[VL];
        load_rows(l, o.L + (idx_t)k * o.ldl, off, full);
#pragma unroll
        for (int j = 0; j < NJ; ++j) {
            const TC v = tc(o.V[(idx_t)k * o.vk + o.vcol[j]]);
#pragma unroll
            for (int e = 0; e < VL; ++e)
                acc[e][j] += tc(l[e]) * v;
        }
    }
    const bool plain = split_begin(blockIdx.y * gridDim.x + blockIdx.x);
#if KW == 1
#pragma unroll
    for (int e = 0; e < VL; ++e)
        if (rb + e < o.R)
#pragma unroll
            for (int j = 0; j < NJ; ++j)
                if (j < o.J)
                    put_c(C, W, o, M, N, rb + e, j, acc[e][j], alpha, beta, plain);
#else
    /* The KW groups' sums meet in shared memory, laid out so that the threads that add them up
     * store C's elements in the order they lie in memory: along r at VM 1 (C(r, j) = C[j][r]),
     * along j then r at VM 0. */
    __shared__ TC red[KW * RB * NJ];
    auto slot = [](int rr, int j) { return VM ? j * RB + rr : rr * NJ + j; };
#pragma unroll
    for (int e = 0; e < VL; ++e)
#pragma unroll
        for (int j = 0; j < NJ; ++j)
            red[w * RB * NJ + slot(tx * VL + e, j)] = acc[e][j];
    __syncthreads();
    for (int q = threadIdx.x; q < RB * NJ; q += THREADS) {
        const int rr = VM ? q % RB : q / NJ, j = VM ? q / RB : q % NJ;
        TC s = red[q];
#pragma unroll
        for (int g = 1; g < KW; ++g)
            s += red[g * RB * NJ + q];
        const int r = blockIdx.x * RB + rr;
        if (r < o.R && j < o.J)
            put_c(C, W, o, M, N, r, j, s, alpha, beta, plain);
    }
#endif
    split_end(blockIdx.y * gridDim.x + blockIdx.x);
}
#endif

extern "C" __global__ void LAUNCH_BOUNDS(THREADS) gemm(GEMM_ARGS)
{
    grid_dep_sync();
#if BATCHED
    BATCH_SELECT(false);
#endif
    Operands o;
#if VM == 0
    o.L = A;
    o.V = B;
    o.R = M;
    o.ldl = LD_A;
    o.vk = OP_TB ? 1 : LD_B;
    o.vj = OP_TB ? LD_B : 1;
    o.ck = LD_C;
    o.cj = 1;
    const int Jall = N;
#else
    o.L = B;
    o.V = A;
    o.R = N;
    o.ldl = LD_B;
    o.vk = OP_TA ? LD_A : 1;
    o.vj = OP_TA ? 1 : LD_A;
    o.ck = 1;
    o.cj = LD_C;
    const int Jall = M;
#endif
    o.j0 = blockIdx.y * NJ;
    o.J = min(NJ, Jall - o.j0);
    o.V += (idx_t)o.j0 * o.vj;
#pragma unroll
    for (int j = 0; j < NJ; ++j)
        o.vcol[j] = (idx_t)min(j, o.J - 1) * o.vj;
    gemv_block(o, M, N, K, alpha, beta, C, W);
}
