/* ws_ring.cuh — what the warp-specialised wgmma templates (tc32ws.cu, hws.cu) share beyond the copy
 * engine's ring (tma.cuh) and the instruction (wgmma.cuh): the persistent blocks' tile order, the
 * ring's barriers, and a consumer's release of its stages. The includer defines GROUP and includes
 * both first. */
#pragma once

/* Tile t of a product's gy x gx tiles: groups of GROUP tile rows, walked column by column within a
 * group, so that consecutive tiles (the blocks running together) share B's columns in L2. */
__device__ __forceinline__ void tile_at(int t, int gx, int gy, int &bm, int &bn)
{
    const int per = GROUP * gx, grp = t / per, first = grp * GROUP, rows = min(gy - first, GROUP);
    const int r = t - grp * per;
    bm = first + r % rows;
    bn = r / rows;
}

/* The ring's barriers, made by thread 0 while the others wait: a stage's "full" completes on the
 * producer's one arrival and the bytes its copies deliver, its "empty" on one arrival of each of the
 * `readers` consumer warps that read it (StageHold below). */
__device__ __forceinline__ void ring_init(unsigned full0, unsigned empty0, int stages, unsigned readers)
{
    if (threadIdx.x == 0) {
        for (int s = 0; s < stages; ++s) {
            mbar_init(full0 + 8 * s, 1);
            mbar_init(empty0 + 8 * s, readers);
        }
        mbar_init_fence();
    }
    __syncthreads();
}

/* A consumer warpgroup's stage still read by its wgmmas in flight. Each k-tile's wgmmas are one
 * committed group; after committing stage s's: at a chain's end (the sums about to leave the tensor
 * cores' registers) wait for every group and release s and the stage held before; else wait until
 * one group is left in flight (the stage before is done), release that one and hold s. One arrival
 * a warp (lane 0), as the ring's "empty" barriers count. */
struct StageHold {
    bool held = false;
    unsigned s = 0;

    __device__ __forceinline__ void committed(unsigned stage, bool chain_end, unsigned empty0, int lane)
    {
        if (chain_end) {
            wgmma_wait<0>();
            if (lane == 0) {
                if (held)
                    mbar_arrive(empty0 + 8 * s);
                mbar_arrive(empty0 + 8 * stage);
            }
            held = false;
        } else {
            wgmma_wait<1>();
            if (held && lane == 0)
                mbar_arrive(empty0 + 8 * s);
            held = true;
            s = stage;
        }
    }
};
