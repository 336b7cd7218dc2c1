/* tma.cuh — Hopper's bulk tensor copy engine (TMA) and the shared-memory barriers it completes on
 * (sm_90+), for templates that declare "tensor_maps" (engine/core/template.h). The launcher encodes
 * each map for the call's pointers and passes it after the layout's arguments, every map the
 * template names (switched off or not), then the batch's count; a kernel declares the maps in
 * order, GEMM_ARGS, TMAP_ARG(tmap0), TMAP_ARG(tmap1), ..., up to the last it reads, and all of them
 * where it reads the count (hws's ZITEMS).
 *
 * A ring of shared-memory stages between one producer thread and consumer warps: the producer waits
 * until a stage is empty, tells the stage's "full" barrier how many bytes will land (expect_tx) and
 * starts the copies, which count those bytes off as they arrive; consumers wait for "full", read,
 * and arrive on "empty". Each barrier's phase flips when it completes; a waiter names the parity of
 * the phase it waits for, so a ring of S stages passed round r waits for parity r % 2 ("full") or
 * its opposite ("empty": a fresh barrier counts its phase before 0 as complete, so the first round
 * of the producer does not wait). */
#pragma once

/* CUtensorMap as the driver lays it out: 128 opaque bytes, 64-byte aligned. */
struct __align__(64) TensorMap {
    unsigned long long v[16];
};
#define TMAP_ARG(name) const __grid_constant__ TensorMap name

__device__ __forceinline__ unsigned smem_addr(const void *p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
/* The barriers' initialisation seen by the copy engine (the async proxy) before it completes one. */
__device__ __forceinline__ void mbar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity)
{
    unsigned done;
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
}

__device__ __forceinline__ void mbar_arrive(unsigned bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/* The producer's arrival: bytes is what the copies of this phase will deliver. */
__device__ __forceinline__ void mbar_expect(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

/* One box of map at coordinates (c0 innermost, c1, c2) into shared memory at dst, counted off bar.
 * Elements past the map's dims arrive as zeros (and count as bytes delivered all the same). */
__device__ __forceinline__ void tma_load(unsigned dst, const TensorMap &map, int c0, int c1, int c2, unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
                 "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
                 : "memory");
}

/* A warpgroup's register budget, moved between warpgroups (sm_90a; the kernel must start with a
 * cap, __launch_bounds__(threads, 1)): the producer gives registers back, the consumers take them. */
template <int R> __device__ __forceinline__ void regs_give()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
}
template <int R> __device__ __forceinline__ void regs_take()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
}

/* rows x len elements stored ld apart, copied into out with each row padded by zeros to lp (its
 * length rounded up to 16 bytes: rows the copy engine can read), lp apart; product blockIdx.z's at
 * x + z sx and out + z rows lp. The grid takes 128
 * columns a block along x and ROWS rows at a time along y; a thread has its ROWS rows' loads in
 * flight before it stores: with one element a thread these copies (hws's prep_a/prep_b, tc32ws's
 * prep_b) ran at a fifth of DRAM's rate (bench/data/h200-s17-diag-2026-11-28.jsonl), as
 * pack_ld.cuh's once did. */
template <int ROWS, typename E>
__device__ __forceinline__ void pad_rows(const E *x, long long sx, int len, int rows, int ld, int lp, E *out)
{
    const int col = blockIdx.x * 128 + threadIdx.x;
    if (col >= lp)
        return;
    const long long b = blockIdx.z;
    x += b * sx;
    out += b * rows * lp;
    for (int r0 = blockIdx.y * ROWS; r0 < rows; r0 += gridDim.y * ROWS) {
        E v[ROWS];
#pragma unroll
        for (int i = 0; i < ROWS; ++i)
            v[i] = col < len && r0 + i < rows ? x[(long long)(r0 + i) * ld + col] : E(0);
#pragma unroll
        for (int i = 0; i < ROWS; ++i)
            if (r0 + i < rows)
                out[(long long)(r0 + i) * lp + col] = v[i];
    }
}
