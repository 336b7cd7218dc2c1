/* tile_pipeline.cuh — moving BM x BK tiles of A and BK x BN tiles of B from global into shared
 * memory, and the K loop around a template's own compute step. Shared by blocktile.cu,
 * warptile.cu and dmma.cu, which differ in how threads map onto the tile, not in how tiles arrive.
 *
 * Expects: BM BN BK (tile), A_KMAJOR (A stored As[k][m] instead of As[m][k]), PAD_A PAD_B
 * (elements added to each stored row against bank conflicts), EVEC_A EVEC_B (elements per global
 * load, after the shape switches), FULL_M FULL_N FULL_K (no partial tiles: guards compile away),
 * PIPE_STAGES and PIPE_ASYNC (see mainloop), and optionally B_LINEAR with TN (siboehm's kernel 7
 * layout). */
#pragma once

#ifndef B_LINEAR
#define B_LINEAR 0
#endif

namespace tile {

constexpr int A_LD = A_KMAJOR ? BM + PAD_A : BK + PAD_A; /* elements between stored rows of A */
constexpr int B_LD = BN + PAD_B;                         /* elements between stored rows of B */
constexpr int ALIGN = 16 / sizeof(T);                    /* elements in 16 bytes */
/* One stage (buffer) of each tile, rounded up so every stage starts 16-byte aligned. */
constexpr int A_STAGE = rup(A_KMAJOR ? BK * A_LD : BM * A_LD, ALIGN);
constexpr int B_STAGE = rup(BK * B_LD, ALIGN);

/* Where element (m, k) of the A tile and (k, n) of the B tile are stored. */
__device__ __forceinline__ int a_at(int m, int k) { return A_KMAJOR ? k * A_LD + m : m * A_LD + k; }
__device__ __forceinline__ int b_at(int k, int n)
{
#if B_LINEAR
    /* Kernel 7's "linearized" B: the TN values a thread reads at step k sit BN/TN apart, so the
     * scalar reads of a warp fall on consecutive words. */
    return (k * TN + n % TN) * (BN / TN) + n / TN;
#else
    return k * B_LD + n;
#endif
}

/* Global -> registers -> shared memory by NT threads; ltid is this thread's index among them.
 * Splitting load() from store() lets a kernel issue the loads of the next tile, compute on the
 * current one while they are in flight, and only then store (register-staged double buffering). */
template <int NT> struct Staging {
    static constexpr int A_VECS = BM * BK / EVEC_A;
    static constexpr int B_VECS = BK * BN / EVEC_B;
    static constexpr int A_ITERS = cdiv(A_VECS, NT);
    static constexpr int B_ITERS = cdiv(B_VECS, NT);
    T a[A_ITERS][EVEC_A];
    T b[B_ITERS][EVEC_B];

    __device__ __forceinline__ void load(const T *A, const T *B, int M, int N, int K, int row0, int col0, int k0,
                                         int kend, int ltid)
    {
#pragma unroll
        for (int it = 0; it < A_ITERS; ++it) {
            const int v = ltid + it * NT;
            const int r = v / (BK / EVEC_A), kk = (v % (BK / EVEC_A)) * EVEC_A;
            const int gr = row0 + r, gk = k0 + kk;
            if ((A_VECS % NT == 0 || v < A_VECS) && (FULL_M || gr < M) && (FULL_K || gk < kend))
                vcopy<EVEC_A>(a[it], A + (idx_t)gr * K + gk);
            else
                vzero<EVEC_A>(a[it]);
        }
#pragma unroll
        for (int it = 0; it < B_ITERS; ++it) {
            const int v = ltid + it * NT;
            const int kr = v / (BN / EVEC_B), n = (v % (BN / EVEC_B)) * EVEC_B;
            const int gk = k0 + kr, gc = col0 + n;
            if ((B_VECS % NT == 0 || v < B_VECS) && (FULL_K || gk < kend) && (FULL_N || gc < N))
                vcopy<EVEC_B>(b[it], B + (idx_t)gk * N + gc);
            else
                vzero<EVEC_B>(b[it]);
        }
    }

    /* load() then store() one vector at a time: nothing waits in registers for the whole tile,
     * which keeps single-buffered kernels from spilling. */
    static __device__ __forceinline__ void copy(T *As, T *Bs, const T *A, const T *B, int M, int N, int K, int row0,
                                         int col0, int k0, int kend, int ltid)
    {
#pragma unroll
        for (int it = 0; it < A_ITERS; ++it) {
            const int v = ltid + it * NT;
            const int r = v / (BK / EVEC_A), kk = (v % (BK / EVEC_A)) * EVEC_A;
            const int gr = row0 + r, gk = k0 + kk;
            if (A_VECS % NT != 0 && v >= A_VECS)
                continue;
            T x[EVEC_A];
            if ((FULL_M || gr < M) && (FULL_K || gk < kend))
                vcopy<EVEC_A>(x, A + (idx_t)gr * K + gk);
            else
                vzero<EVEC_A>(x);
            put_a(As, r, kk, x);
        }
#pragma unroll
        for (int it = 0; it < B_ITERS; ++it) {
            const int v = ltid + it * NT;
            const int kr = v / (BN / EVEC_B), n = (v % (BN / EVEC_B)) * EVEC_B;
            const int gk = k0 + kr, gc = col0 + n;
            if (B_VECS % NT != 0 && v >= B_VECS)
                continue;
            T x[EVEC_B];
            if ((FULL_K || gk < kend) && (FULL_N || gc < N))
                vcopy<EVEC_B>(x, B + (idx_t)gk * N + gc);
            else
                vzero<EVEC_B>(x);
            put_b(Bs, kr, n, x);
        }
    }

    static __device__ __forceinline__ void put_a(T *As, int r, int kk, const T *x)
    {
        if constexpr (!A_KMAJOR && A_LD % EVEC_A == 0) {
            vcopy<EVEC_A>(&As[r * A_LD + kk], x);
        } else {
#pragma unroll
            for (int j = 0; j < EVEC_A; ++j)
                As[a_at(r, kk + j)] = x[j];
        }
    }

    static __device__ __forceinline__ void put_b(T *Bs, int kr, int n, const T *x)
    {
        if constexpr (!B_LINEAR && B_LD % EVEC_B == 0) {
            vcopy<EVEC_B>(&Bs[kr * B_LD + n], x);
        } else {
#pragma unroll
            for (int j = 0; j < EVEC_B; ++j)
                Bs[b_at(kr, n + j)] = x[j];
        }
    }

    __device__ __forceinline__ void store(T *As, T *Bs, int ltid) const
    {
#pragma unroll
        for (int it = 0; it < A_ITERS; ++it) {
            const int v = ltid + it * NT;
            if (A_VECS % NT == 0 || v < A_VECS)
                put_a(As, v / (BK / EVEC_A), (v % (BK / EVEC_A)) * EVEC_A, a[it]);
        }
#pragma unroll
        for (int it = 0; it < B_ITERS; ++it) {
            const int v = ltid + it * NT;
            if (B_VECS % NT == 0 || v < B_VECS)
                put_b(Bs, v / (BN / EVEC_B), (v % (BN / EVEC_B)) * EVEC_B, b[it]);
        }
    }
};

/* Global -> shared memory with cp.async, no registers involved. A stored k-major (or B linearized)
 * cannot be written by a vector copy, so those go one element per copy, as in siboehm's kernel 12. */
template <int NT>
__device__ __forceinline__ void issue_async(T *As, T *Bs, const T *A, const T *B, int M, int N, int K, int row0,
                                            int col0, int k0, int kend, int ltid)
{
    constexpr int AV = A_KMAJOR ? 1 : EVEC_A, BV = B_LINEAR ? 1 : EVEC_B;
    constexpr int A_VECS = BM * BK / AV, B_VECS = BK * BN / BV;
#pragma unroll
    for (int it = 0; it < cdiv(A_VECS, NT); ++it) {
        const int v = ltid + it * NT;
        if (A_VECS % NT != 0 && v >= A_VECS)
            continue;
        const int r = v / (BK / AV), kk = (v % (BK / AV)) * AV;
        const int gr = row0 + r, gk = k0 + kk;
        const bool ok = (FULL_M || gr < M) && (FULL_K || gk < kend);
        cp_async<AV * sizeof(T)>(&As[a_at(r, kk)], ok ? A + (idx_t)gr * K + gk : A, ok);
    }
#pragma unroll
    for (int it = 0; it < cdiv(B_VECS, NT); ++it) {
        const int v = ltid + it * NT;
        if (B_VECS % NT != 0 && v >= B_VECS)
            continue;
        const int kr = v / (BN / BV), n = (v % (BN / BV)) * BV;
        const int gk = k0 + kr, gc = col0 + n;
        const bool ok = (FULL_K || gk < kend) && (FULL_N || gc < N);
        cp_async<BV * sizeof(T)>(&Bs[b_at(kr, n)], ok ? B + (idx_t)gk * N + gc : B, ok);
    }
}

/* The K loop of one output tile over k-tiles [kt0, kt1), calling f.compute(As, Bs) once per
 * k-tile with that tile's stage. Three schedules:
 *   PIPE_ASYNC:       PIPE_STAGES-deep cp.async pipeline, one barrier per k-tile;
 *   PIPE_STAGES == 2: register-staged double buffer: loads of tile k+1 are in flight while tile k is
 *                     computed, then stored into the other buffer; one barrier per k-tile;
 *   otherwise:        load, barrier, compute, barrier. */
template <int NT, typename F>
__device__ __forceinline__ void mainloop(F &f, T *As, T *Bs, const T *A, const T *B, int M, int N, int K, int row0,
                                         int col0, int kt0, int kt1, int ltid)
{
    const int kend = min(K, kt1 * BK);
    __syncthreads(); /* the previous output tile of this block may still be reading shared memory */
#if PIPE_ASYNC
    const int nkt = kt1 - kt0;
#pragma unroll
    for (int s = 0; s < PIPE_STAGES - 1; ++s) {
        if (s < nkt)
            issue_async<NT>(As + s * A_STAGE, Bs + s * B_STAGE, A, B, M, N, K, row0, col0, (kt0 + s) * BK, kend, ltid);
        cp_async_commit(); /* empty groups keep the group count, and so wait_group, uniform */
    }
    for (int t = 0; t < nkt; ++t) {
        cp_async_wait<PIPE_STAGES - 2>(); /* this thread's copies of k-tile t have landed */
        __syncthreads();             /* ... and everyone's; stage (t-1) % PIPE_STAGES is free */
        const int nt = t + PIPE_STAGES - 1;
        if (nt < nkt)
            issue_async<NT>(As + (nt % PIPE_STAGES) * A_STAGE, Bs + (nt % PIPE_STAGES) * B_STAGE, A, B, M, N, K, row0, col0,
                            (kt0 + nt) * BK, kend, ltid);
        cp_async_commit();
        f.compute(As + (t % PIPE_STAGES) * A_STAGE, Bs + (t % PIPE_STAGES) * B_STAGE);
    }
#elif PIPE_STAGES == 2
    Staging<NT> st;
    if (kt0 < kt1) {
        st.load(A, B, M, N, K, row0, col0, kt0 * BK, kend, ltid);
        st.store(As, Bs, ltid);
    }
    __syncthreads();
    for (int kt = kt0; kt < kt1; ++kt) {
        const int cur = (kt - kt0) & 1;
        const bool more = kt + 1 < kt1;
        if (more)
            st.load(A, B, M, N, K, row0, col0, (kt + 1) * BK, kend, ltid);
        f.compute(As + cur * A_STAGE, Bs + cur * B_STAGE);
        /* The other buffer was last read in the previous iteration, before its barrier. */
        if (more)
            st.store(As + (cur ^ 1) * A_STAGE, Bs + (cur ^ 1) * B_STAGE, ltid);
        __syncthreads();
    }
#else
    for (int kt = kt0; kt < kt1; ++kt) {
        Staging<NT>::copy(As, Bs, A, B, M, N, K, row0, col0, kt * BK, kend, ltid);
        __syncthreads();
        f.compute(As, Bs);
        __syncthreads();
    }
#endif
}

} // namespace tile
