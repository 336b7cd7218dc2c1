/* splitk.cuh — split-K and stream-K: sharing an output tile's K among blocks.
 * Split-K, for the templates that take SPLITK and SPLITK_MODE: K cut into SPLITK
 * slices over blockIdx.z, so that shapes with a small M x N and a large K (or few tiles for any
 * reason) still put a block on every SM.
 *   SPLITK_MODE 0: a first launch (scale_c) sets C = beta * C, then every split adds
 *                  alpha * (its partial tile) into C with atomics; the sum's order varies.
 *   SPLITK_MODE 1: every split writes its partial tile to the workspace W (SPLITK * M * N
 *                  elements), and a last launch (reduce) adds them in a fixed order: results do
 *                  not depend on scheduling.
 *   SPLITK_MODE 2: one launch. The first split of a tile to finish writes alpha * (its part) +
 *                  beta * C, as a kernel without split-K would, and counts the tile written in
 *                  its counter; the others wait for that count, then add their parts with
 *                  atomics (split_begin, split_end). No scale_c launch. The counters live in the
 *                  module (SPLIT_TILES of them), so the template's switch SPLIT_SERIAL turns this
 *                  on only where the tiles fit; elsewhere mode 2 runs as mode 0, with scale_c.
 * A template declares the launches, the workspace and the switch (blocktile.cu shows the lines) and
 * calls split_range for its k-tiles, split_begin and split_end around its epilogue, and split_put
 * for each element a split adds. */
#pragma once

#ifndef SPLITK
#define SPLITK 1
#define SPLITK_MODE 0
#endif
#ifndef STREAMK
#define STREAMK 0
#endif
#ifndef SPLIT_SERIAL
#define SPLIT_SERIAL 0
#endif

/* This split's k-tiles [kt0, kt1); the last splits may get fewer, or none (they then add, or
 * write, zeros). In mode 0 the plan launches only the splits that get k-tiles (the templates'
 * SPLITS: the grid's z), so none adds zeros there; modes 1 and 2 count on every split. */
__device__ __forceinline__ void split_range(int K, int &kt0, int &kt1)
{
    const int ktiles = cdiv(K, BK);
    if constexpr (SPLITK == 1) { /* exactly the code of a template without split-K */
        kt0 = 0;
        kt1 = ktiles;
    } else {
        const int per_split = cdiv(ktiles, SPLITK);
        kt0 = min(ktiles, (int)blockIdx.z * per_split);
        kt1 = min(ktiles, kt0 + per_split);
    }
}

/* Stream-K (STREAMK > 0 blocks, a 1-D grid): the k-tiles of all output tiles laid end to end, tile
 * after tile along rows of tiles, and block b taking the b-th of STREAMK equal runs of them, so
 * every SM works to the end whatever the number of tiles (Osama et al., "Stream-K", PPoPP 2023).
 * A run holds the end of one tile, whole tiles and the start of another; for each piece this calls
 * tile(bx, by, kt0, kt1, part), `part` when the piece is not the whole tile. Pieces are added into
 * C with atomics and C was scaled by beta first (scale_c), so no block waits for another. */
template <typename Tile> __device__ __forceinline__ void streamk_runs(int gx, int gy, int ktiles, Tile &&tile)
{
    const long long total = (long long)gx * gy * ktiles;
    long long it = total * blockIdx.x / STREAMK;
    const long long end = total * (blockIdx.x + 1) / STREAMK;
    while (it < end) {
        const int t = (int)(it / ktiles), kt0 = (int)(it % ktiles);
        const int kt1 = (int)min((long long)ktiles, kt0 + (end - it));
        tile(t % gx, t / gx, kt0, kt1, kt0 > 0 || kt1 < ktiles);
        it += kt1 - kt0;
    }
}

/* The beta a whole tile is written with: under stream-K, C already holds beta * C. */
__device__ __forceinline__ TC tile_beta(TC beta) { return STREAMK > 0 ? (beta == TC(0) ? TC(0) : TC(1)) : beta; }

/* One element of a split's partial result, at offset `at` of C. The half types (gemv.cu) take mode 1
 * only, W then holding TC (FP32) partials: an atomic add into their C would round at every add. */
__device__ __forceinline__ void split_put(T *C, T *W, idx_t at, int M, int N, TC v, TC alpha)
{
#if SPLITK_MODE != 1
    atomicAdd(&C[at], alpha * v);
#else
    reinterpret_cast<TC *>(W)[(long long)blockIdx.z * M * N + at] = v;
#endif
}

#if SPLIT_SERIAL
/* The tiles' counters of SPLITK_MODE 2 (must match the templates' SPLIT_SERIAL switch). Zero when
 * the module is loaded, and every launch leaves them zero: the last split of a tile resets its
 * counter. One stream at a time may run a module with them (the engine uses one). */
#define SPLIT_TILES 4096
__device__ unsigned int split_count[SPLIT_TILES];
#endif

/* SPLITK_MODE 2, after this split's part of tile `tile` is computed: whether this block writes the
 * tile as a kernel without split-K would (alpha * acc + beta * C) or adds its part with split_put.
 * The first split of the tile to get here writes: it claims the tile's counter (0 -> 1), and the
 * others wait until it has counted its tile written (1 -> 2), then add. Waiting only for a block
 * that already runs its epilogue never deadlocks, whatever order the blocks are started in; and
 * the splits that finish later add as they finish, as in mode 0. Waiting for split 0 instead was
 * slower: the other splits' atomics all started at one moment (docs/NOTES.md, "Split-K in one
 * launch").
 * Without split-K every block writes; in modes 0 and 1 none does. */
__device__ __forceinline__ bool split_begin(int tile)
{
#if SPLIT_SERIAL
    /* Thread 0 decides, and __syncthreads_or tells the block: a __shared__ flag would add static
     * shared memory to every block, which cost dgemm_dmma_splitk a block per SM. */
    int writer = 0;
    if (threadIdx.x == 0) {
        writer = atomicCAS(&split_count[tile], 0u, 1u) == 0;
        if (!writer) {
            while (*(volatile unsigned int *)&split_count[tile] < 2)
                __nanosleep(32);
            __threadfence();
        }
    }
    return __syncthreads_or(writer);
#else
    return SPLITK == 1;
#endif
}

/* SPLITK_MODE 2, after this block's part of tile `tile` is in C: count it. The writer's stores are
 * made visible first (the fence), so that a split that sees the count adds onto them. The count
 * ends at SPLITK + 1 (the claim, then one per split); the split that brings it there resets it to
 * zero for the next launch: every other split has counted, so none still reads it. */
__device__ __forceinline__ void split_end(int tile)
{
#if SPLIT_SERIAL
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0 && atomicAdd(&split_count[tile], 1u) == SPLITK)
        atomicExch(&split_count[tile], 0u);
#endif
}

#if (SPLITK > 1 || STREAMK > 0) && !IS_HALF
/* Split-K's atomic modes (mode 2 only where its tiles outnumber SPLIT_TILES) and stream-K
 * (warptile.cu) run this first: C = beta * C (never reading C when beta is 0). */
extern "C" __global__ void scale_c(GEMM_ARGS)
{
    grid_dep_sync();
    const idx_t i = (idx_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (idx_t)M * N)
        C[i] = beta == T(0) ? T(0) : beta * C[i];
}
#endif

#if SPLITK > 1

/* Split-K, two-pass mode, runs last: C = alpha * (sum of the splits' partial tiles) + beta * C, in
 * a fixed order. */
extern "C" __global__ void reduce(GEMM_ARGS)
{
    grid_dep_sync();
    const idx_t i = (idx_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (idx_t)M * N)
        return;
    const TC *w = reinterpret_cast<const TC *>(W); /* the half types' partials are FP32 */
    TC s = TC(0);
    for (int z = 0; z < SPLITK; ++z)
        s += w[(long long)z * M * N + i];
#if IS_HALF /* C read (beta != 0) and written in the type, rounded once */
    float v = alpha * s;
    if (beta != 0.0f)
        v += beta * half_to_float(C[i]);
    C[i] = float_to_half(v);
#else
    C[i] = beta == T(0) ? alpha * s : alpha * s + beta * C[i];
#endif
}
#endif
