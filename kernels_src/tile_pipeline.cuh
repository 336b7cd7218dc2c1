/* tile_pipeline.cuh — moving BM x BK tiles of A and BK x BN tiles of B from global into shared
 * memory, and the K loop around a template's own compute step. Shared by blocktile.cu,
 * warptile.cu and dmma.cu, which differ in how threads map onto the tile, not in how tiles arrive.
 *
 * Expects: BM BN BK (tile), A_KMAJOR (A stored As[k][m] instead of As[m][k]), optionally B_NMAJOR
 * (B stored Bs[n][k] instead of Bs[k][n]), PAD_A PAD_B (B_PAD, where a template defines it, in
 * place of PAD_B)
 * (elements added to each stored row against bank conflicts), VEC_A VEC_B (elements per thread's
 * chunk of a tile) and EVEC_A EVEC_B (elements per global load, after the shape switches: VEC or
 * less where rows are not aligned to it), FULL_M FULL_N FULL_K (no partial tiles: guards compile away),
 * PIPE_STAGES and PIPE_ASYNC (see mainloop; optionally PIPE_B_ASYNC and PIPE_AHEAD), and
 * optionally B_LINEAR with TN (siboehm's kernel 7 layout). The loaders and the K loop take FM and
 * FN (this tile needs no guards along M, N) as template arguments, FULL_M and FULL_N by default: a
 * kernel may run the tiles that lie wholly inside C through an unguarded copy of its code
 * (EDGE_SPLIT, interior_tile).
 *
 * Layouts (engine/core/layout.h): OP_TA (A stored K x M), OP_TB (B stored N x K), and the rows' strides
 * lda, ldb, which the loaders take as arguments (the templates pass K and N where LDP says the rows
 * are packed, so the packed NN code is the code it was). A chunk always runs along a stored row:
 * A's along K (as before) or, transposed, along M like B's along N; B's along N or, transposed,
 * along K like A's. So every global load stays a vector along memory, and what changes with a
 * transpose is the shared-memory side: a chunk of A along M lands in one stored row of a k-major
 * tile (warptile's As[k][m]: vector stores, the natural case) or down a column of As[m][k] (scalar
 * stores); a chunk of B along K lands down a column of Bs[k][n] (scalar stores, one-element
 * cp.async copies) or, where the template keeps B n-major (B_NMAJOR, dmma in f64 when TB), in one
 * stored row of Bs[n][k] as vector stores and EVEC-wide copies, the mirror of A_KMAJOR. */
#pragma once

#ifndef B_LINEAR
#define B_LINEAR 0
#endif
#ifndef PIPE_B_ASYNC
#define PIPE_B_ASYNC 0
#endif
#ifndef PIPE_AHEAD
#define PIPE_AHEAD 0
#endif
#ifndef OP_TA
#define OP_TA 0
#endif
#ifndef OP_TB
#define OP_TB 0
#endif
#ifndef LDP
#define LDP 1
#endif
#ifndef B_NMAJOR
#define B_NMAJOR 0
#endif
#ifndef ODD_ROWS
#define ODD_ROWS 0
#endif
#ifndef B_PAD /* the pad of B's stored rows: PAD_B, unless a template's switch picks one by layout (warptile's PAD_BT) */
#define B_PAD PAD_B
#endif

namespace tile {

/* The elements between stored rows of A, B and C that a kernel indexes with: where LDP (every
 * row packed) the shape's own, so that packed code is the code it was (the arguments unread);
 * otherwise the layout's arguments (GEMM_ARGS). */
struct Strides {
    int a, b, c;
};
__device__ __forceinline__ Strides strides(int M, int N, int K, int lda, int ldb, int ldc)
{
    return LDP ? Strides{OP_TA ? M : K, OP_TB ? K : N, N} : Strides{lda, ldb, ldc};
}

constexpr int A_LD = A_KMAJOR ? BM + PAD_A : BK + PAD_A; /* elements between stored rows of A */
constexpr int B_LD = B_NMAJOR ? BK + B_PAD : BN + B_PAD; /* elements between stored rows of B */
constexpr int ALIGN = 16 / sizeof(T);                    /* elements in 16 bytes */
/* One stage (buffer) of each tile, rounded up so every stage starts 16-byte aligned. */
constexpr int A_STAGE = rup(A_KMAJOR ? BK * A_LD : BM * A_LD, ALIGN);
constexpr int B_STAGE = rup(B_NMAJOR ? BN * B_LD : BK * B_LD, ALIGN);

/* Where element (m, k) of the A tile and (k, n) of the B tile are stored. */
__device__ __forceinline__ int a_at(int m, int k) { return A_KMAJOR ? k * A_LD + m : m * A_LD + k; }
__device__ __forceinline__ int b_at(int k, int n)
{
#if B_LINEAR
    /* Kernel 7's "linearized" B: the TN values a thread reads at step k sit BN/TN apart, so the
     * scalar reads of a warp fall on consecutive words. */
    return (k * TN + n % TN) * (BN / TN) + n / TN;
#else
    return B_NMAJOR ? n * B_LD + k : k * B_LD + n;
#endif
}

/* Edges. A row of the A tile past M only feeds rows of C past M, and a column of the B tile past N
 * only columns of C past N; the epilogue stores neither. So loads never test M or N: they read a
 * clamped row (column) that exists instead, and what lands in those tile rows is never seen. The
 * clamp depends on the thread only, not on the k-tile, so it is computed once per tile and the
 * interior pays nothing (before this, the per-load tests cost warptile_db six registers and half
 * its occupancy at 4000^3, docs/NOTES.md). Only K is tested: every product along K is summed, so
 * the last, partial k-tile must bring zeros; the test is one compare per vector. A column is
 * clamped to N - vec (a multiple of vec when the vector width holds, by EVEC_B) so vector loads
 * stay aligned and inside the row. The cp.async path (issue_async) zero-fills columns past N
 * instead, which costs it nothing: the copy takes a source size either way. */
template <bool FM = FULL_M> __device__ __forceinline__ int clamp_row(int gr, int M) { return FM ? gr : min(gr, M - 1); }
template <int VEC, bool FN = FULL_N> __device__ __forceinline__ int clamp_col(int gc, int N)
{
    return FN ? gc : min(gc, N - VEC);
}

/* A chunk along K: VEC elements of stored row gr (of R rows, ld apart; clamped, FR: no clamp), from
 * k-column gk on. The chunk is the config's vector width even where the rows are not aligned to
 * it (EVEC < VEC): then it is read as narrower loads off the same base address, so an odd K
 * changes the width of the loads, not how many rows a thread touches, nor how many addresses it
 * keeps live across the k loop. Elements at or past kend read as zero. A's chunks (rows of M)
 * and, transposed, B's (rows of N). */
template <int VEC, int EVEC, bool FR>
__device__ __forceinline__ void load_kchunk(T *x, const T *P, int R, int ld, int gr, int gk, int kend)
{
    const T *p = P + (idx_t)clamp_row<FR>(gr, R) * ld + gk;
#pragma unroll
    for (int e = 0; e < VEC; e += EVEC) {
        if (FULL_K || gk + e < kend)
            vcopy<EVEC>(x + e, p + e);
        else
            vzero<EVEC>(x + e);
    }
}

/* A chunk along a stored row gk (rows ld apart) of a tile TW columns wide: VEC elements read as
 * VEC / EVEC groups of EVEC. Where the vector width holds (EVEC == VEC) that is one group: VEC
 * consecutive columns from gc. Where the rows are not aligned to it, group g sits TW / groups
 * columns after group g - 1, so that the lanes of a warp, which hold consecutive chunks, read
 * consecutive groups: every load instruction of the warp is coalesced (32 scalar loads 16 bytes
 * apart would touch four times the sectors). A group at or past NC (the columns) reads the chunk's
 * first group (the row's last whole group when that too is past NC); elements at or past kend are
 * zero. B's chunks (columns of N) and, transposed, A's (columns of M). */
template <int VEC, int EVEC, int TW, bool FC>
__device__ __forceinline__ void load_rchunk(T *x, const T *P, int NC, int ld, int gk, int gc, int kend)
{
    constexpr int GROUPS = VEC / EVEC, GSTRIDE = TW / GROUPS;
    if (!FULL_K && gk >= kend) {
        vzero<VEC>(x);
        return;
    }
    const int c = clamp_col<EVEC, FC>(gc, NC), left = NC - c;
    const T *p = P + (idx_t)gk * ld + c;
#pragma unroll
    for (int g = 0; g < GROUPS; ++g)
        vcopy<EVEC>(x + g * EVEC, p + (FC || g * GSTRIDE < left ? g * GSTRIDE : 0));
}

/* Groups of a chunk along the columns (load_rchunk) and the columns between them: B's along N
 * (A's along M, transposed, are written out where used: a namespace constant no kernel reads still
 * lands in the PTX as a global). */
constexpr int B_GROUPS = OP_TB ? 1 : VEC_B / EVEC_B;
constexpr int B_GSTRIDE = BN / (VEC_B / EVEC_B);
#define A_GROUPS (VEC_A / EVEC_A)
#define A_GSTRIDE (BM / A_GROUPS)

/* Global -> registers -> shared memory by NT threads; ltid is this thread's index among them.
 * Thread ltid moves chunks ltid, ltid + NT, ... of each tile (VEC_A or VEC_B elements each).
 * Splitting load() from store() lets a kernel issue the loads of the next tile, compute on the
 * current one while they are in flight, and only then store (register-staged double buffering).
 * lda, ldb: elements between the stored rows of A and B. */
template <int NT> struct Staging {
    static constexpr int A_VECS = BM * BK / VEC_A;
    static constexpr int B_VECS = BK * BN / VEC_B;
    static constexpr int A_ITERS = cdiv(A_VECS, NT);
    static constexpr int B_ITERS = cdiv(B_VECS, NT);
    T a[A_ITERS][VEC_A];
    T b[B_ITERS][VEC_B];

    /* Where chunk v of each tile starts: (row, k) of A, (k, column) of B; transposed (OP_TA,
     * OP_TB), A's chunks run along M from (a_row, a_k) and B's along K from (b_k, b_col). */
    static __device__ __forceinline__ int a_row(int v, int g = 0)
    {
        return OP_TA ? g * A_GSTRIDE + (v % (BM / VEC_A)) * EVEC_A : v / (BK / VEC_A);
    }
    static __device__ __forceinline__ int a_k(int v) { return OP_TA ? v / (BM / VEC_A) : (v % (BK / VEC_A)) * VEC_A; }
    static __device__ __forceinline__ int b_k(int v) { return OP_TB ? (v % (BK / VEC_B)) * VEC_B : v / (BN / VEC_B); }
    /* The column of group g of chunk v (all of it when B_GROUPS is 1). */
    static __device__ __forceinline__ int b_col(int v, int g = 0)
    {
        return OP_TB ? v / (BK / VEC_B) : g * B_GSTRIDE + (v % (BN / VEC_B)) * EVEC_B;
    }

    template <bool FM, bool FN>
    static __device__ __forceinline__ void load_a(T *x, const T *A, int M, int lda, int row0, int k0, int kend, int v)
    {
        if constexpr (OP_TA)
            load_rchunk<VEC_A, EVEC_A, BM, FM>(x, A, M, lda, k0 + a_k(v), row0 + a_row(v), kend);
        else
            load_kchunk<VEC_A, EVEC_A, FM>(x, A, M, lda, row0 + a_row(v), k0 + a_k(v), kend);
    }
    template <bool FM, bool FN>
    static __device__ __forceinline__ void load_b(T *x, const T *B, int N, int ldb, int col0, int k0, int kend, int v)
    {
        if constexpr (OP_TB)
            load_kchunk<VEC_B, EVEC_B, FN>(x, B, N, ldb, col0 + b_col(v), k0 + b_k(v), kend);
        else
            load_rchunk<VEC_B, EVEC_B, BN, FN>(x, B, N, ldb, k0 + b_k(v), col0 + b_col(v), kend);
    }

    template <bool FM = FULL_M, bool FN = FULL_N>
    __device__ __forceinline__ void load(const T *A, const T *B, int M, int N, int lda, int ldb, int row0, int col0,
                                         int k0, int kend, int ltid)
    {
#pragma unroll
        for (int it = 0; it < A_ITERS; ++it) {
            const int v = ltid + it * NT;
            if (A_VECS % NT == 0 || v < A_VECS)
                load_a<FM, FN>(a[it], A, M, lda, row0, k0, kend, v);
        }
#pragma unroll
        for (int it = 0; it < B_ITERS; ++it) {
            const int v = ltid + it * NT;
            if (!PIPE_B_ASYNC && (B_VECS % NT == 0 || v < B_VECS))
                load_b<FM, FN>(b[it], B, N, ldb, col0, k0, kend, v);
        }
    }

    /* load() then store() one chunk at a time: nothing waits in registers for the whole tile,
     * which keeps single-buffered kernels from spilling. */
    template <bool FM = FULL_M, bool FN = FULL_N>
    static __device__ __forceinline__ void copy(T *As, T *Bs, const T *A, const T *B, int M, int N, int lda, int ldb,
                                                int row0, int col0, int k0, int kend, int ltid)
    {
#pragma unroll
        for (int it = 0; it < A_ITERS; ++it) {
            const int v = ltid + it * NT;
            if (A_VECS % NT != 0 && v >= A_VECS)
                continue;
            T x[VEC_A];
            load_a<FM, FN>(x, A, M, lda, row0, k0, kend, v);
            put_a(As, v, x);
        }
#pragma unroll
        for (int it = 0; it < B_ITERS; ++it) {
            const int v = ltid + it * NT;
            if (B_VECS % NT != 0 && v >= B_VECS)
                continue;
            T x[VEC_B];
            load_b<FM, FN>(x, B, N, ldb, col0, k0, kend, v);
            put_b(Bs, b_k(v), v, x);
        }
    }

    static __device__ __forceinline__ void put_a(T *As, int v, const T *x)
    {
        if constexpr (OP_TA) {
            /* Groups along M at k-row a_k(v): one stored row of a k-major tile. */
#pragma unroll
            for (int g = 0; g < A_GROUPS; ++g) {
                const int m = a_row(v, g), k = a_k(v);
                if constexpr (A_KMAJOR && A_LD % EVEC_A == 0) {
                    vcopy<EVEC_A>(&As[k * A_LD + m], x + g * EVEC_A);
                } else {
#pragma unroll
                    for (int j = 0; j < EVEC_A; ++j)
                        As[a_at(m + j, k)] = x[g * EVEC_A + j];
                }
            }
        } else {
            const int r = a_row(v), kk = a_k(v);
            if constexpr (!A_KMAJOR && A_LD % VEC_A == 0) {
                vcopy<VEC_A>(&As[r * A_LD + kk], x);
            } else {
#pragma unroll
                for (int j = 0; j < VEC_A; ++j)
                    As[a_at(r, kk + j)] = x[j];
            }
        }
    }

    static __device__ __forceinline__ void put_b(T *Bs, int kr, int v, const T *x)
    {
        if constexpr (OP_TB) {
            /* VEC_B values along K of column b_col(v): one stored row of an n-major tile (EVEC_B
             * wide, as they were loaded), else down a column of Bs[k][n]. */
            const int n = b_col(v);
            if constexpr (B_NMAJOR && B_LD % EVEC_B == 0) {
#pragma unroll
                for (int j = 0; j < VEC_B; j += EVEC_B)
                    vcopy<EVEC_B>(&Bs[n * B_LD + kr + j], x + j);
            } else {
#pragma unroll
                for (int j = 0; j < VEC_B; ++j)
                    Bs[b_at(kr + j, n)] = x[j];
            }
        } else {
#pragma unroll
            for (int g = 0; g < B_GROUPS; ++g) {
                const int n = b_col(v, g);
                if constexpr (!B_LINEAR && !B_NMAJOR && B_LD % EVEC_B == 0) {
                    vcopy<EVEC_B>(&Bs[kr * B_LD + n], x + g * EVEC_B);
                } else {
#pragma unroll
                    for (int j = 0; j < EVEC_B; ++j)
                        Bs[b_at(kr, n + j)] = x[g * EVEC_B + j];
                }
            }
        }
    }

    __device__ __forceinline__ void store(T *As, T *Bs, int ltid) const
    {
#pragma unroll
        for (int it = 0; it < A_ITERS; ++it) {
            const int v = ltid + it * NT;
            if (A_VECS % NT == 0 || v < A_VECS)
                put_a(As, v, a[it]);
        }
#pragma unroll
        for (int it = 0; it < B_ITERS; ++it) {
            const int v = ltid + it * NT;
            if (!PIPE_B_ASYNC && (B_VECS % NT == 0 || v < B_VECS))
                put_b(Bs, b_k(v), v, b[it]);
        }
    }
};

/* Global -> shared memory with cp.async, no registers involved, in the same chunks as Staging.
 * A chunk whose elements are not consecutive in its stored tile row (A along K into a k-major
 * tile, A along M into As[m][k], B along K into Bs[k][n], B along N into Bs[n][k], B linearized)
 * goes one element per copy, as in
 * siboehm's kernel 12; the others one EVEC-wide copy at a time. Copies past kend read nothing and
 * zero-fill. */

/* A chunk along K (load_kchunk's): VEC elements of stored row gr (clamped) from gk, each copy W
 * elements, to dst(e) for element e. */
template <int VEC, int EVEC, int W, bool FR, typename Dst>
__device__ __forceinline__ void async_kchunk(Dst dst, const T *P, int R, int ld, int gr, int gk, int kend)
{
    const T *p = P + (idx_t)clamp_row<FR>(gr, R) * ld + gk;
#pragma unroll
    for (int e = 0; e < VEC; e += W) {
        const bool ok = FULL_K || gk + e < kend;
        cp_async<W * sizeof(T)>(dst(e), ok ? p + e : P, ok);
    }
}

/* A chunk along stored row gk (load_rchunk's groups), each copy W elements, group g's element e to
 * dst(g, e). Unlike the register-staged loads, a group past NC is not clamped onto the last
 * columns but zero-filled: with 8-byte copies, a warp whose lanes all copy one clamped address
 * cost the FP64 tile a third of its time at 128x129x128 (docs/NOTES.md). A group is wholly in or
 * out: EVEC > 1 only where NC is a multiple of it. */
template <int VEC, int EVEC, int TW, int W, bool FC, typename Dst>
__device__ __forceinline__ void async_rchunk(Dst dst, const T *P, int NC, int ld, int gk, int c, int kend)
{
    constexpr int GROUPS = VEC / EVEC, GSTRIDE = TW / GROUPS;
    const bool ok = FULL_K || gk < kend;
    const T *p = P + (idx_t)(ok ? gk : 0) * ld + c;
#pragma unroll
    for (int g = 0; g < GROUPS; ++g) {
        const bool in = ok && (FC || c + g * GSTRIDE < NC);
        const T *src = p + g * GSTRIDE;
#pragma unroll
        for (int e = 0; e < EVEC; e += W)
            cp_async<W * sizeof(T)>(dst(g, e), in ? src + e : P, in);
    }
}

/* ROW_DEAL (a template's switch; 0 where it has none; bit 1 A, bit 2 B): a k-tile's chunks along
 * stored rows (A stored K x M into its k-major tile, B stored K x N) dealt by rows. Chunk v otherwise
 * goes to thread v % NT, so a thread's chunks sit in different rows and each costs a 64-bit address,
 * (k0 + k) times ld, every k-tile (dmma at TN: 10% more instructions than at NN). Dealt by rows, L
 * consecutive threads share one stored row and a thread's ITERS chunks of it lie L chunks apart: one
 * address per thread and k-tile, the copies at constant offsets from it; a warp's copy covers 32 / L
 * rows, L contiguous chunks in each (at L 8, whole 128-byte lines). Fewer instructions, but not
 * everywhere faster: which tiles and ops gain is measured (docs/NOTES.md, "Copies dealt by rows";
 * dmma's ROWCOPY 4). Fits where NT divides the tile's chunks and a thread's chunks divide a row's. */
#ifndef ROW_DEAL
#define ROW_DEAL 0
#endif
template <int BIT, int VEC, int TW, int ROWS, int NT> __device__ constexpr bool rows_fit()
{
    return (ROW_DEAL & BIT) && (ROWS * (TW / VEC)) % NT == 0 && ROWS * (TW / VEC) >= NT &&
           (TW / VEC) % (ROWS * (TW / VEC) / NT) == 0;
}
/* Rows [0, ROWS) of a tile TW wide from stored row k0 and column c0 of P (NC columns, rows ld
 * apart), chunks of VEC elements (whole chunks past NC: NC a multiple of VEC), row kr's column col
 * to dst(kr, col). */
template <int VEC, int TW, int ROWS, int NT, bool FC, typename Dst>
__device__ __forceinline__ void async_rows(Dst dst, const T *P, int NC, int ld, int k0, int c0, int kend, int ltid)
{
    constexpr int CH = TW / VEC;          /* chunks per stored row of the tile */
    constexpr int ITERS = ROWS * CH / NT; /* chunks per thread, all in one row */
    constexpr int L = CH / ITERS;         /* threads per row */
    const int kr = ltid / L, c = (ltid % L) * VEC, gk = k0 + kr;
    const bool ok = FULL_K || gk < kend;
    const T *p = P + (idx_t)(ok ? gk : 0) * ld + c0 + c;
#pragma unroll
    for (int j = 0; j < ITERS; ++j) {
        const int col = c + j * L * VEC;
        const bool in = ok && (FC || c0 + col < NC);
        cp_async<VEC * sizeof(T)>(dst(kr, col), in ? p + j * L * VEC : P, in);
    }
}

/* Odd rows (ODD_ROWS, dmma's ODD_LD): where a leading dimension is odd in f64, stored rows
 * alternate between 16-byte aligned and not, and the shape switches narrow every copy of a 2-element
 * chunk to two 8-byte ones (cp.async.ca: through L1, which the .cg 16-byte copies bypass). These
 * take the chunks whose source is aligned (looked up on the pointer, so the base's alignment need
 * not be known) as one 16-byte copy and only the others as two. Correct for any chunk; fast where
 * a warp's chunks share a row parity, which odd_row arranges for chunks along K. */
#define ODD (ODD_ROWS && sizeof(T) == 8) /* a macro: a namespace constant lands in every PTX */
__device__ __forceinline__ bool aligned16(const T *p) { return (reinterpret_cast<size_t>(p) & 15) == 0; }

/* The tile row of chunk v where L chunks (of VEC 2) make a row along K: the rows are dealt in
 * blocks of 2 * (32 / L), even rows of a block to its first 32 chunks (one warp) and odd rows to the
 * next, so that a warp's rows share a parity; with L not dividing 32, or rows not a whole number of
 * blocks, the plain order. */
template <int L, int ROWS> __device__ __forceinline__ int odd_row(int v)
{
    constexpr int R = 32 / L;
    const int q = v / L;
    if constexpr (32 % L != 0 || ROWS % (2 * R) != 0)
        return q;
    const int qi = q % (2 * R);
    return q - qi + (qi % R) * 2 + qi / R;
}

/* A 2-element chunk along K (async_kchunk's, narrowed to EVEC 1): one 16-byte copy to dst where
 * the source is aligned and both elements lie before kend, else two 8-byte ones. */
template <bool FR, typename Dst>
__device__ __forceinline__ void async_kchunk_odd(Dst dst, const T *P, int R, int ld, int gr, int gk, int kend)
{
    const T *p = P + (idx_t)clamp_row<FR>(gr, R) * ld + gk;
    if (aligned16(p) && (FULL_K || gk + 2 <= kend))
        cp_async<16>(dst(0), p, true);
    else
        async_kchunk<2, 1, 1, FR>(dst, P, R, ld, gr, gk, kend);
}

/* A 2-element chunk j along stored row gk (of a tile TW columns wide, from column c0; async_rchunk's,
 * narrowed): where the row is 16-byte aligned, columns 2j, 2j + 1 to dst16; else async_rchunk's
 * two copies of columns j and j + TW / 2 to dst(g, e). The choice is the row's, never the chunk's:
 * either order covers the row only when all its chunks take it. In an aligned row, a chunk wholly
 * before NC goes as one 16-byte copy; one that NC cuts (or lies past) as two 8-byte copies, the
 * first element read only where it is before NC, the second zero-filled (source P, size 0, as
 * async_rchunk's). Not one 16-byte copy with a source size of 8: memcheck counts that as a read of
 * all 16 bytes at the source (the PTX ISA promises no less), and at the last row of a matrix the
 * second 8 lie past its end (bench/layouts.sh's first run, ld + 1 at 127x129x131). */
template <int TW, bool FC, typename Dst>
__device__ __forceinline__ void async_rchunk_odd(T *dst16, Dst dst, const T *P, int NC, int ld, int gk, int c0, int j,
                                                 int kend)
{
    const T *row = P + (idx_t)gk * ld + c0;
    if ((FULL_K || gk < kend) && aligned16(row)) {
        const int c = c0 + 2 * j; /* the chunk's first column */
        if (FC || c + 2 <= NC) {
#if ARCH >= 80 /* written out (not cp_async<16>): the PTX at whole tiles stays that of the first run */
            const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst16));
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(row + 2 * j), "r"(16));
#endif
        } else { /* c + 1 >= NC: at most column c is in */
            cp_async<8>(dst16, c < NC ? row + 2 * j : P, c < NC);
            cp_async<8>(dst16 + 1, P, false);
        }
    } else {
        async_rchunk<2, 1, TW, 1, FC>(dst, P, NC, ld, gk, c0 + j, kend);
    }
}

/* B's half (one k-tile into the stage at Bs), also used alone by the register-staged pipeline
 * when PIPE_B_ASYNC is set (mainloop). */
template <int NT, bool FN = FULL_N>
__device__ __forceinline__ void issue_async_b(T *Bs, const T *B, int N, int ldb, int col0, int k0, int kend, int ltid)
{
    typedef Staging<NT> S;
    if constexpr (!OP_TB && !B_LINEAR && !B_NMAJOR && EVEC_B == VEC_B && B_LD % VEC_B == 0 &&
                  rows_fit<2, VEC_B, BN, BK, NT>()) {
        async_rows<VEC_B, BN, BK, NT, FN>([&](int kr, int n) { return &Bs[b_at(kr, n)]; }, B, N, ldb, k0, col0, kend,
                                          ltid);
        return;
    }
#pragma unroll
    for (int it = 0; it < S::B_ITERS; ++it) {
        const int v = ltid + it * NT;
        if (S::B_VECS % NT != 0 && v >= S::B_VECS)
            continue;
        if constexpr (OP_TB && ODD && B_NMAJOR && VEC_B == 2 && EVEC_B == 1 && B_LD % 2 == 0) {
            const int n = odd_row<BK / 2, BN>(v), kr = S::b_k(v);
            async_kchunk_odd<FN>([&](int e) { return &Bs[b_at(kr + e, n)]; }, B, N, ldb, col0 + n, k0 + kr, kend);
        } else if constexpr (OP_TB) {
            constexpr int BW = B_NMAJOR && B_LD % EVEC_B == 0 ? EVEC_B : 1; /* elements per copy */
            const int n = S::b_col(v), kr = S::b_k(v), gk = k0 + kr;
            async_kchunk<VEC_B, EVEC_B, BW, FN>([&](int e) { return &Bs[b_at(kr + e, n)]; }, B, N, ldb, col0 + n, gk,
                                               kend);
        } else if constexpr (ODD && !B_LINEAR && !B_NMAJOR && VEC_B == 2 && EVEC_B == 1 && B_LD % 2 == 0) {
            /* A row along N: where it is aligned, columns 2j, 2j + 1 in one copy instead of j, j + BN / 2. */
            const int kr = S::b_k(v), j = v % (BN / 2);
            async_rchunk_odd<BN, FN>(&Bs[b_at(kr, 2 * j)],
                                     [&](int g, int e) { return &Bs[b_at(kr, S::b_col(v, g) + e)]; }, B, N, ldb, k0 + kr,
                                     col0, j, kend);
        } else {
            /* async_rchunk's steps written out in the order of the code before layouts, which
             * NVRTC's code for packed NN follows (the call changed the order of two predicates). */
            constexpr int BW = B_LINEAR || B_NMAJOR ? 1 : EVEC_B; /* elements per copy */
            const int kr = S::b_k(v), gk = k0 + kr;
            const bool ok = FULL_K || gk < kend;
            const int c = col0 + S::b_col(v);
            const T *p = B + (idx_t)(ok ? gk : 0) * ldb + c;
#pragma unroll
            for (int g = 0; g < B_GROUPS; ++g) {
                const bool in = ok && (FN || c + g * B_GSTRIDE < N);
                const T *src = p + g * B_GSTRIDE;
#pragma unroll
                for (int e = 0; e < EVEC_B; e += BW)
                    cp_async<BW * sizeof(T)>(&Bs[b_at(kr, S::b_col(v, g) + e)], in ? src + e : B, in);
            }
        }
    }
}

template <int NT, bool FM = FULL_M, bool FN = FULL_N>
__device__ __forceinline__ void issue_async(T *As, T *Bs, const T *A, const T *B, int M, int N, int lda, int ldb,
                                            int row0, int col0, int k0, int kend, int ltid)
{
    typedef Staging<NT> S;
    constexpr bool A_ROWS = OP_TA && A_KMAJOR && EVEC_A == VEC_A && A_LD % VEC_A == 0 && rows_fit<1, VEC_A, BM, BK, NT>();
    if constexpr (A_ROWS)
        async_rows<VEC_A, BM, BK, NT, FM>([&](int kk, int m) { return &As[a_at(m, kk)]; }, A, M, lda, k0, row0, kend,
                                          ltid);
#pragma unroll
    for (int it = 0; it < (A_ROWS ? 0 : S::A_ITERS); ++it) {
        const int v = ltid + it * NT;
        if (S::A_VECS % NT != 0 && v >= S::A_VECS)
            continue;
        if constexpr (!OP_TA && ODD && !A_KMAJOR && VEC_A == 2 && EVEC_A == 1 && A_LD % 2 == 0) {
            const int r = odd_row<BK / 2, BM>(v), kk = S::a_k(v);
            async_kchunk_odd<FM>([&](int e) { return &As[a_at(r, kk + e)]; }, A, M, lda, row0 + r, k0 + kk, kend);
        } else if constexpr (OP_TA && ODD && A_KMAJOR && VEC_A == 2 && EVEC_A == 1 && A_LD % 2 == 0) {
            /* A row along M: as B's along N (issue_async_b). */
            const int kk = S::a_k(v), j = v % (BM / 2);
            async_rchunk_odd<BM, FM>(&As[a_at(2 * j, kk)],
                                     [&](int g, int e) { return &As[a_at(S::a_row(v, g) + e, kk)]; }, A, M, lda, k0 + kk,
                                     row0, j, kend);
        } else if constexpr (OP_TA) {
            constexpr int AW = A_KMAJOR && A_LD % EVEC_A == 0 ? EVEC_A : 1; /* elements per copy */
            const int kk = S::a_k(v), gk = k0 + kk, c = row0 + S::a_row(v);
            async_rchunk<VEC_A, EVEC_A, BM, AW, FM>([&](int g, int e) { return &As[a_at(S::a_row(v, g) + e, kk)]; },
                                                    A, M, lda, gk, c, kend);
        } else {
            constexpr int AW = A_KMAJOR ? 1 : EVEC_A; /* elements per copy */
            const int r = S::a_row(v), kk = S::a_k(v), gk = k0 + kk;
            async_kchunk<VEC_A, EVEC_A, AW, FM>([&](int e) { return &As[a_at(r, kk + e)]; }, A, M, lda, row0 + r, gk,
                                                kend);
        }
    }
    issue_async_b<NT, FN>(Bs, B, N, ldb, col0, k0, kend, ltid);
}

/* Interior and edge tiles. Where the shape leaves partial tiles (FULL_M or FULL_N false), the
 * guards and clamps that edge tiles need cost every tile: they hold registers across the K loop
 * and change how ptxas schedules it (warptile_db at 4096x4064x4096 ran 7% slower per tile than at
 * 4096^3 with the same tile count, docs/NOTES.md). With EDGE 1 a template compiles its tile code
 * twice, unguarded (template arguments FM = FN = true) and guarded (FULL_M, FULL_N), and each
 * block picks once, from its coordinates, whether its tile lies wholly inside C. Where EDGE_SPLIT
 * is 0 (full shapes, or EDGE 0) a kernel compiles the one copy it had before; its calls are written
 *     #if EDGE_SPLIT
 *     if (tile::interior_tile(bx, by, M, N)) work<true, true>(...); else
 *     #endif
 *     work<FULL_M, FULL_N>(...);
 * (an `if` on a constant instead changed NVRTC's code for warptile_streamk at full shapes).
 * Vector widths (EVEC_*) stay the shape's: they follow the leading dimensions, which every tile
 * shares. */
#ifndef EDGE
#define EDGE 0
#endif
#ifndef EDGE_ON /* a template's shape switch may narrow EDGE (warptile.cu) */
#define EDGE_ON EDGE
#endif
#define EDGE_SPLIT (EDGE_ON && !(FULL_M && FULL_N))
__device__ __forceinline__ bool interior_tile(int bx, int by, int M, int N)
{
    return (by + 1) * BM <= M && (bx + 1) * BN <= N;
}

/* The K loop of one output tile over k-tiles [kt0, kt1) (lda, ldb: the stored rows' strides), calling f.compute(As, Bs) once per
 * k-tile with that tile's stage. Three schedules:
 *   PIPE_ASYNC:       PIPE_STAGES-deep cp.async pipeline, one barrier per k-tile;
 *   PIPE_STAGES == 2: register-staged double buffer: loads of tile k+1 are in flight while tile k is
 *                     computed, then stored into the other buffer; one barrier per k-tile. With
 *                     PIPE_B_ASYNC, B's tile k+1 goes to the other buffer by cp.async instead
 *                     (issued first: that buffer was last read before the previous barrier), and
 *                     only A passes through registers. With PIPE_AHEAD, the loads run a tile
 *                     further ahead (tile k+2's issued at the end of tile k);
 *   otherwise:        load, barrier, compute, barrier. */
template <int NT, bool FM = FULL_M, bool FN = FULL_N, typename F>
__device__ __forceinline__ void mainloop(F &f, T *As, T *Bs, const T *A, const T *B, int M, int N, int K, int lda,
                                         int ldb, int row0, int col0, int kt0, int kt1, int ltid)
{
    const int kend = min(K, kt1 * BK);
    __syncthreads(); /* the previous output tile of this block may still be reading shared memory */
#if PIPE_ASYNC
    const int nkt = kt1 - kt0;
#pragma unroll
    for (int s = 0; s < PIPE_STAGES - 1; ++s) {
        if (s < nkt)
            issue_async<NT, FM, FN>(As + s * A_STAGE, Bs + s * B_STAGE, A, B, M, N, lda, ldb, row0, col0, (kt0 + s) * BK, kend, ltid);
        cp_async_commit(); /* empty groups keep the group count, and so wait_group, uniform */
    }
    for (int t = 0; t < nkt; ++t) {
        cp_async_wait<PIPE_STAGES - 2>(); /* this thread's copies of k-tile t have landed */
        __syncthreads();             /* ... and everyone's; stage (t-1) % PIPE_STAGES is free */
        const int nt = t + PIPE_STAGES - 1;
        if (nt < nkt)
            issue_async<NT, FM, FN>(As + (nt % PIPE_STAGES) * A_STAGE, Bs + (nt % PIPE_STAGES) * B_STAGE, A, B, M, N, lda, ldb, row0, col0,
                            (kt0 + nt) * BK, kend, ltid);
        cp_async_commit();
        f.compute(As + (t % PIPE_STAGES) * A_STAGE, Bs + (t % PIPE_STAGES) * B_STAGE);
    }
#elif PIPE_STAGES == 2 && PIPE_AHEAD
    /* Register-staged, loads a tile further ahead: at the end of tile t, tile t + 1 (in registers
     * since the end of tile t - 1) is stored into the other buffer, and tile t + 2's loads are
     * issued before the barrier. Their first use is the next iteration's store, across the
     * barrier, so ptxas cannot sink them onto it, which it does within one iteration where B's rows
     * take scalar loads (4096x4095x4096: every load issued just before its store, 21% of the
     * kernel's stall samples on that store, docs/NOTES.md). */
    Staging<NT> st;
    if (kt0 < kt1) {
        st.template load<FM, FN>(A, B, M, N, lda, ldb, row0, col0, kt0 * BK, kend, ltid);
        st.store(As, Bs, ltid);
        if (kt0 + 1 < kt1)
            st.template load<FM, FN>(A, B, M, N, lda, ldb, row0, col0, (kt0 + 1) * BK, kend, ltid);
    }
    __syncthreads();
    for (int kt = kt0; kt < kt1; ++kt) {
        const int cur = (kt - kt0) & 1;
        f.compute(As + cur * A_STAGE, Bs + cur * B_STAGE);
        if (kt + 1 < kt1)
            st.store(As + (cur ^ 1) * A_STAGE, Bs + (cur ^ 1) * B_STAGE, ltid);
        if (kt + 2 < kt1)
            st.template load<FM, FN>(A, B, M, N, lda, ldb, row0, col0, (kt + 2) * BK, kend, ltid);
        __syncthreads();
    }
#elif PIPE_STAGES == 2
    Staging<NT> st;
    if (kt0 < kt1) {
        if constexpr (PIPE_B_ASYNC) {
            issue_async_b<NT, FN>(Bs, B, N, ldb, col0, kt0 * BK, kend, ltid);
            cp_async_commit();
        }
        st.template load<FM, FN>(A, B, M, N, lda, ldb, row0, col0, kt0 * BK, kend, ltid);
        st.store(As, Bs, ltid);
    }
    if constexpr (PIPE_B_ASYNC)
        cp_async_wait<0>();
    __syncthreads();
    for (int kt = kt0; kt < kt1; ++kt) {
        const int cur = (kt - kt0) & 1;
        const bool more = kt + 1 < kt1;
        if constexpr (PIPE_B_ASYNC) {
            if (more) {
                issue_async_b<NT, FN>(Bs + (cur ^ 1) * B_STAGE, B, N, ldb, col0, (kt + 1) * BK, kend, ltid);
                cp_async_commit();
            }
        }
        if (more)
            st.template load<FM, FN>(A, B, M, N, lda, ldb, row0, col0, (kt + 1) * BK, kend, ltid);
        f.compute(As + cur * A_STAGE, Bs + cur * B_STAGE);
        /* The other buffer was last read in the previous iteration, before its barrier. */
        if (more)
            st.store(As + (cur ^ 1) * A_STAGE, Bs + (cur ^ 1) * B_STAGE, ltid);
        if constexpr (PIPE_B_ASYNC)
            cp_async_wait<0>();
        __syncthreads();
    }
#else
    for (int kt = kt0; kt < kt1; ++kt) {
        Staging<NT>::template copy<FM, FN>(As, Bs, A, B, M, N, lda, ldb, row0, col0, kt * BK, kend, ltid);
        __syncthreads();
        f.compute(As, Bs);
        __syncthreads();
    }
#endif
}

} // namespace tile
