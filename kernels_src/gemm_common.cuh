/* gemm_common.cuh — what every template shares.
 *
 * The engine pastes, before the template, one #define per template parameter and per shape switch,
 * plus T (the element type of A, B, C and W), ELEM (sizeof(T)), F64 (0/1) and ARCH (e.g. 90). For
 * the half dtypes (a template that lists "bf16" or "f16" in "dtypes") T is half_bits (below), the
 * raw 16 bits of a bfloat16 or binary16 (NVRTC has no CUDA headers here: half_to_float and
 * float2_to_half2 below convert; T(0) is +0 in both), and it adds TC float (the compute type: alpha, beta and the
 * accumulation, as cublasGemmEx's CUBLAS_COMPUTE_32F), IS_HALF 1 and BF16 (1: bfloat16, 0: binary16).
 * For f32 and f64 TC is T and IS_HALF, BF16 are 0 (the defaults below). Every kernel of every
 * template takes the same arguments, GEMM_ARGS, so one launcher runs them all (engine/core/kernel.c):
 *   C = alpha * op(A) * op(B) + beta * C for each of a batch of products, row-major: op(A) is
 *   M x K, op(B) is K x N, C is M x N; W is scratch the template asked for ("workspace"), or null.
 *   The layout (engine/core/layout.h) comes last, so that adding it moved no earlier argument: lda,
 *   ldb, ldc are the elements between stored rows (A stored K x M when transposed, B N x K), sa,
 *   sb, sc the elements between products. A template reads them only where its shape switches
 *   say the layout is not packed NN with one product (the plan's TA, TB, LD_PACKED, BATCH), and
 *   refuses by a "requires" rule the layouts it cannot do.
 * beta == 0 means C is not read: a NaN already in C must not reach the result. */
#pragma once

/* The half dtypes' T: their bits, one word so that T(0) parses. */
typedef unsigned short half_bits;
#ifndef TC
#define TC T
#endif
#ifndef IS_HALF
#define IS_HALF 0
#endif
#ifndef BF16
#define BF16 0
#endif

/* The problem's part of the arguments, which helpers inside a template may take as they are. */
#define GEMM_OPERANDS                                                                              \
    int M, int N, int K, TC alpha, const T *__restrict__ A, const T *__restrict__ B, TC beta,     \
        T *__restrict__ C, T *__restrict__ W
#define GEMM_ARGS GEMM_OPERANDS, int lda, int ldb, int ldc, long long sa, long long sb, long long sc

#ifndef MINB
#define MINB 0
#endif
/* Register budget: MINB blocks of `threads` must fit on an SM (0: let the compiler choose). */
#if MINB > 0
#define LAUNCH_BOUNDS(threads) __launch_bounds__(threads, MINB)
#else
#define LAUNCH_BOUNDS(threads) __launch_bounds__(threads)
#endif

/* Element offsets into A, B, C: 32-bit integers while every matrix of the problem has fewer than
 * 2^31 elements, which the engine pastes as IDX64 0; 64-bit past that (IDX64 1). Only the shape
 * decides, so the common shapes keep the cheaper 32-bit address arithmetic and the same CUBIN. */
#ifndef IDX64
#define IDX64 0
#endif
#if IDX64
typedef long long idx_t;
#else
typedef int idx_t;
#endif

/* Programmatic dependent launch, for templates that declare "pdl": true (engine/core/template.h). On
 * sm_90+ the engine launches their kernels with programmatic stream serialization, so a kernel's
 * blocks may start while the kernel ahead of it in the stream is still running. Every kernel calls
 * this first: it waits until that kernel has finished and its writes are visible (no read or write
 * of A, B, C or W comes before it), then lets the next kernel in the stream be scheduled. Its blocks
 * only take SM slots freed by this grid's blocks (all of which have started by the time the last
 * one signals) and wait here in turn, so what overlaps is the next launch's latency and its blocks'
 * start-up, not memory traffic. Without PDL both instructions do nothing. */
__device__ __forceinline__ void grid_dep_sync()
{
#if ARCH >= 90
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* p as a pointer NVVM cannot see through (an inline-asm move), for a base computed from a runtime
 * offset: an operand packed into W (pack_ld.cuh), a strided batch's product. Why: given the sum,
 * NVVM folds the offset into every unrolled copy's address (a 64-bit cvt, add and shift where a
 * pointer argument's code has one mul.wide); tc32_3x's k-loop, which issue slots bind, ran 5% slower
 * for it (docs/NOTES.md, "The pack's hidden cost"). Only for operands that cp.async copies: such a
 * pointer is no longer the kernel's restrict argument, so plain loads through it lose ld.global.nc,
 * and stores through it lose their folded offsets (C stays a plain sum). */
template <typename P> __device__ __forceinline__ P *opaque(P *p)
{
    unsigned long long v;
    asm("mov.b64 %0, %1;" : "=l"(v) : "l"(p));
    return reinterpret_cast<P *>(v);
}
template <bool HIDE, typename P> __device__ __forceinline__ P *batch_at(P *p, long long offset)
{
    if constexpr (HIDE)
        return opaque(p + offset);
    else
        return p + offset;
}

/* Product blockIdx.z of a strided batch (engine/core/layout.h): from here on the kernel sees one. ASYNC:
 * A and B are read by cp.async only, and go through opaque. */
#define BATCH_SELECT(ASYNC)                            \
    do {                                               \
        A = batch_at<(ASYNC)>(A, blockIdx.z * sa);     \
        B = batch_at<(ASYNC)>(B, blockIdx.z * sb);     \
        C += blockIdx.z * sc;                          \
    } while (0)

/* The elements between stored rows of A, B and C, for templates that index them directly (naive.cu,
 * gemv.cu): with packed rows (the switch LDP) the shape's own row lengths, constants the compiler
 * can fold, as before layouts; else the arguments. */
#if defined(LDP) && LDP
#define LD_A (OP_TA ? M : K)
#define LD_B (OP_TB ? K : N)
#define LD_C N
#else
#define LD_A lda
#define LD_B ldb
#define LD_C ldc
#endif

__host__ __device__ constexpr int cdiv(int a, int b) { return (a + b - 1) / b; }
__host__ __device__ constexpr int rup(int a, int m) { return cdiv(a, m) * m; }
__host__ __device__ constexpr bool pow2(int a) { return a > 0 && (a & (a - 1)) == 0; }

/* The native vector type of N elements of U, for N * sizeof(U) <= 16 bytes. */
template <typename U, int N> struct VecType;
template <> struct VecType<float, 1> { typedef float type; };
template <> struct VecType<float, 2> { typedef float2 type; };
template <> struct VecType<float, 4> { typedef float4 type; };
template <> struct VecType<double, 1> { typedef double type; };
template <> struct VecType<double, 2> { typedef double2 type; };
template <> struct VecType<half_bits, 1> { typedef unsigned short type; };
template <> struct VecType<half_bits, 2> { typedef unsigned type; };
template <> struct VecType<half_bits, 4> { typedef uint2 type; };
template <> struct VecType<half_bits, 8> { typedef uint4 type; };

/* Copy N elements as the widest accesses that fit (16 bytes at most: LDG.128, LDS.128, STG.128).
 * Both pointers must be aligned to the access: callers guarantee it through the templates'
 * constraints and the EVEC_* shape switches. */
template <int N> __device__ __forceinline__ void vcopy(T *dst, const T *src)
{
    static_assert(pow2(N), "vector widths are powers of two");
    if constexpr (N * sizeof(T) > 16) {
        vcopy<N / 2>(dst, src);
        vcopy<N / 2>(dst + N / 2, src + N / 2);
    } else {
        typedef typename VecType<T, N>::type V;
        *reinterpret_cast<V *>(dst) = *reinterpret_cast<const V *>(src);
    }
}

template <int N> __device__ __forceinline__ void vzero(T *dst)
{
#pragma unroll
    for (int i = 0; i < N; ++i)
        dst[i] = T(0);
}

/* cp.async (sm_80+): copy BYTES from global to shared memory without a register round trip. When
 * valid is false nothing is read and the destination is zero-filled, which is how partial tiles
 * at the matrix edges get their zeros. */
template <int BYTES> __device__ __forceinline__ void cp_async(T *smem, const T *gmem, bool valid)
{
#if ARCH >= 80
    if constexpr (BYTES > 16) {
        cp_async<16>(smem, gmem, valid);
        cp_async<BYTES - 16>(smem + 16 / sizeof(T), gmem + 16 / sizeof(T), valid);
    } else {
        const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
        const int src_bytes = valid ? BYTES : 0;
        if constexpr (BYTES == 16)
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(src_bytes));
        else
            asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(gmem), "n"(BYTES),
                         "r"(src_bytes));
    }
#endif
}

__device__ __forceinline__ void cp_async_commit()
{
#if ARCH >= 80
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

/* Wait until at most PENDING committed groups are still in flight. */
template <int PENDING> __device__ __forceinline__ void cp_async_wait()
{
#if ARCH >= 80
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING));
#endif
}

/* Which output tile (group) this block computes. With a supertile width S > 1 the grid is 1-D and
 * consecutive blocks cover an S x S square of tiles, so blocks running at the same time share rows
 * of A and columns of B in L2. The grid is padded to whole squares; blocks of the padding return
 * false. gx, gy: tile groups along N and M. */
template <int S> __device__ __forceinline__ bool block_coords(int gx, int gy, int &bx, int &by)
{
    if constexpr (S > 1) {
        const int id = blockIdx.x;
        const int sid = id / (S * S), sub = id % (S * S);
        const int nsx = cdiv(gx, S);
        bx = (sid % nsx) * S + sub % S;
        by = (sid / nsx) * S + sub / S;
        return bx < gx && by < gy;
    } else {
        bx = blockIdx.x;
        by = blockIdx.y;
        return true;
    }
}

/* 3xTF32 (dmma.cu in f32, tc32.cu): x = big + small + (what neither holds), big = x rounded to
 * nearest TF32 (cvt.rna, not toward zero: the remainder is then at most half a TF32 unit of x),
 * small = the remainder rounded the same way; both as the bit patterns the tensor cores take.
 * big*big + big*small + small*big misses only small*small and small's own rounding, about 2^-22
 * of |x y|: FP32 accuracy. sm_80+. */
__device__ __forceinline__ void tf32_split(float x, unsigned &big, unsigned &small)
{
#if ARCH >= 80
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(big) : "f"(x));
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(small) : "f"(x - __uint_as_float(big)));
#else
    big = __float_as_uint(x);
    small = 0u;
#endif
}

/* C[idx] = alpha * acc + beta * C[idx] for N consecutive elements (one vector access when N > 1). */
template <int N> __device__ __forceinline__ void store_c(T *c, const T *acc, T alpha, T beta)
{
    T v[N];
    if (beta == T(0)) {
#pragma unroll
        for (int i = 0; i < N; ++i)
            v[i] = alpha * acc[i];
    } else {
        vcopy<N>(v, c);
#pragma unroll
        for (int i = 0; i < N; ++i)
            v[i] = alpha * acc[i] + beta * v[i];
    }
    vcopy<N>(c, v);
}

/* C[0..N) = alpha * acc + beta * old, old being C's N elements read earlier (beta != 0), one vector
 * store when N > 1: an epilogue that reads a row's C before storing any of it keeps those reads in
 * flight together, where store_c's read-then-store is a round trip per vector. */
template <int N> __device__ __forceinline__ void put_c(T *c, const T *acc, T alpha, T beta, const T *old)
{
    T v[N];
#pragma unroll
    for (int i = 0; i < N; ++i)
        v[i] = beta == T(0) ? alpha * acc[i] : alpha * acc[i] + beta * old[i];
    vcopy<N>(c, v);
}

/* The staged epilogue's stores (dmma's and warptile's C_STAGE, with the template's BM, BN and
 * THREADS): C's BM x BN tile, already in shared memory at Cs (rows CS_LD apart), goes out row by row
 * at Cb, consecutive threads on consecutive columns, so that a warp's stores cover a run of a row
 * and each sector is written once. A thread's BM * BN / THREADS elements are taken in chunks, C's
 * reads of a chunk (beta != 0) issued together before its stores: one read in flight at a time ran
 * beta 1 at 0.59-0.93x of the unstaged epilogue (dmma, f64: docs/NOTES.md, "C staged where its rows
 * are off 16 bytes"). UNROLLED: the chunks unrolled, else a loop of them (compile time: unrolled,
 * warptile_db's four chunks and sb10_warptiling's eight took NVRTC 1.3-3.4x as long). */
template <int CS_LD, bool UNROLLED, bool FM, bool FN>
__device__ __forceinline__ void store_staged(T *Cb, idx_t ldc, const T *Cs, int rows_left, int cols_left, T alpha,
                                             T beta, int tid)
{
    constexpr int PER = BM * BN / THREADS, CHUNK = PER % 16 == 0 ? 16 : PER % 8 == 0 ? 8 : PER;
    static_assert(PER * THREADS == BM * BN && PER % CHUNK == 0, "the staged tile is dealt evenly");
    constexpr int UNROLL = UNROLLED ? PER / CHUNK : 1;
#pragma unroll UNROLL
    for (int p0 = 0; p0 < PER; p0 += CHUNK) {
        T cv[CHUNK];
        if (beta != T(0)) {
#pragma unroll
            for (int q = 0; q < CHUNK; ++q) {
                const int x = tid + (p0 + q) * THREADS, r = x / BN, c = x % BN;
                cv[q] = (FM || r < rows_left) && (FN || c < cols_left) ? Cb[(idx_t)r * ldc + c] : T(0);
            }
        }
#pragma unroll
        for (int q = 0; q < CHUNK; ++q) {
            const int x = tid + (p0 + q) * THREADS, r = x / BN, c = x % BN;
            if ((FM || r < rows_left) && (FN || c < cols_left))
                Cb[(idx_t)r * ldc + c] = beta == T(0) ? alpha * Cs[r * CS_LD + c] : alpha * Cs[r * CS_LD + c] + beta * cv[q];
        }
    }
}

#if IS_HALF
/* The half types' conversions, on T's raw bits (sm_80+: cvt to bf16x2 is sm_80's). A bfloat16 is
 * the top half of a float, so widening is a shift; binary16 takes cvt. Narrowing rounds to nearest
 * even, as cuBLAS's epilogue does. */
__device__ __forceinline__ float half_to_float(unsigned short h)
{
#if BF16
    return __uint_as_float(static_cast<unsigned>(h) << 16);
#else
    float f;
    asm("cvt.f32.f16 %0, %1;\n" : "=f"(f) : "h"(h));
    return f;
#endif
}

/* (lo, hi) rounded to T and packed: lo in bits 0-15 (the lower address), hi in bits 16-31. */
__device__ __forceinline__ unsigned float2_to_half2(float lo, float hi)
{
    unsigned r;
#if BF16
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
#else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
#endif
    return r;
}

__device__ __forceinline__ unsigned short float_to_half(float x)
{
    return static_cast<unsigned short>(float2_to_half2(x, 0.0f) & 0xFFFFu);
}
#endif
