/* pack_ld.cuh — PACK_LD, shared by dmma.cu and tc32.cu: where a leading dimension leaves A's or B's
 * stored rows off 16-byte boundaries (an odd ld, say) though their length is a whole number of
 * 16-byte chunks, a first launch copies that matrix packed into the workspace W and the GEMM loads
 * it as at a packed shape (16-byte copies). The including template defines PACKLD_A and PACKLD_B
 * (its switches) and OP_TA, OP_TB; A goes to W, B after A's elements rounded up to 16 bytes, so
 * both start 16-byte aligned. */
#pragma once

#if PACKLD_A || PACKLD_B
/* Why: with such rows the tiles copy every chunk in pieces (two 8-byte cp.async in DMMA, four
 * 4-byte ones in tc32) and the rows' k-tile segments straddle L2 sectors: DMMA ran 0.86x its packed
 * time at 4096^3, ld + 1 (docs/NOTES.md, "Layouts at full speed, first run"), tc32_3x 0.75x. One
 * read and one write of the matrix first, and the GEMM loads it as at a packed shape. Stored rows
 * r0 .. r0 + 3 of A's RA then B's RB rows, 256 columns a block along x; all four rows' loads go
 * before any store (as warptile's pack_b, to keep enough bytes in flight). */
__device__ __forceinline__ idx_t pack_wb(int M, int K) { return PACKLD_A ? (idx_t)rup(M * K, 16 / ELEM) : 0; }
/* Where the GEMM reads an operand pack_ld packed: W + offset through opaque (gemm_common.cuh), so
 * that its PTX is the packed shape's but for the set-up (NVVM folded the plain sum into every copy's
 * address: tc32_3x's GEMM 5% slower at ld + 1; docs/NOTES.md, "The pack's hidden cost"). */
__device__ __forceinline__ const T *packed_at(T *W, idx_t offset) { return opaque<const T>(W + offset); }
extern "C" __global__ void pack_ld(GEMM_ARGS)
{
    grid_dep_sync();
    constexpr int ROWS = 4;
    const int RA = PACKLD_A ? (OP_TA ? K : M) : 0, LA = OP_TA ? M : K;
    const int RB = PACKLD_B ? (OP_TB ? N : K) : 0, LB = OP_TB ? K : N;
    const int c = blockIdx.x * 256 + threadIdx.x;
    T *WB = W + pack_wb(M, K);
    for (int r0 = blockIdx.y * ROWS; r0 < RA + RB; r0 += gridDim.y * ROWS) {
        T v[ROWS];
#pragma unroll
        for (int i = 0; i < ROWS; ++i) {
            const int r = r0 + i;
            const bool a = r < RA, in = r < RA + RB && c < (a ? LA : LB);
            v[i] = !in ? T(0) : a ? A[(idx_t)r * lda + c] : B[(idx_t)(r - RA) * ldb + c];
        }
#pragma unroll
        for (int i = 0; i < ROWS; ++i) {
            const int r = r0 + i;
            const bool a = r < RA;
            if (r < RA + RB && c < (a ? LA : LB))
                (a ? W + (idx_t)r * LA : WB + (idx_t)(r - RA) * LB)[c] = v[i];
        }
    }
}
#else
__device__ __forceinline__ idx_t pack_wb(int, int) { return 0; }
#endif
