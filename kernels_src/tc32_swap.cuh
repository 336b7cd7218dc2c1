/* tc32_swap.cuh — tc32.cu's SWAP path (D = B^T A^T: B's fragments the register operand, A's tile
 * the shared-memory one), apart so that each file stays readable: B's fragments (BFrag: read from
 * B's raw stage, or by ldmatrix where B is stored N x K), the split of A's raw tile into the
 * operand stage (split_a; split_a_t transposes A stored K x M), one k-tile's wgmmas (mma_swap) and
 * the main loop's step (SwapPipe). Included by tc32.cu after its Staging, the wgmma wrappers and
 * settle, whose names it uses; nothing else includes it. */
#pragma once

/* SWAP: this thread's B operand of one k-tile in registers, as the register fragment of
 * D = B^T A^T, whose rows are columns of B. Row 16 w + g + 8 h of the warpgroup's 64 (g = lane / 4)
 * is column n = 16 w + 2 g + h, so a thread's two rows are adjacent columns, both taken by one
 * 8-byte read; register i of k-step s holds k = 8 s + lane % 4 + 4 (i / 2), column n0 + i % 2 (the
 * fragment layout of AFrag; Staging::raw_b_xor spreads the reads over the banks). */
struct BFrag {
    unsigned big[BK / 8][4], small[CORR ? BK / 8 : 1][4];

    /* 3xTF32: big and small; 1xTF32: rounded (ROUND 1) or the FP32 bits as they are. */
    static __device__ __forceinline__ void conv(float x, unsigned &b, unsigned &sm)
    {
        if constexpr (CORR)
            tf32_split(x, b, sm);
        else if constexpr (ROUND)
            asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(b) : "f"(x));
        else
            b = __float_as_uint(x);
    }
    /* Ties the registers to this point, after the wait for the wgmmas that read them, so that the
     * values loaded next are not written into them earlier (as AFrag::split). */
    __device__ __forceinline__ void tie()
    {
#pragma unroll
        for (int st = 0; st < BK / 8; ++st) {
            asm volatile("" : "+r"(big[st][0]), "+r"(big[st][1]), "+r"(big[st][2]), "+r"(big[st][3]));
            if constexpr (CORR)
                asm volatile("" : "+r"(small[CORR ? st : 0][0]), "+r"(small[CORR ? st : 0][1]),
                             "+r"(small[CORR ? st : 0][2]), "+r"(small[CORR ? st : 0][3]));
        }
    }
    __device__ __forceinline__ void load(const unsigned char *rs, int wg, int warp, int lane)
    {
        if constexpr (OP_TB) {
            /* B^T's rows are the fragment's rows, K-contiguous: one ldmatrix.x4 per k-step gives a
             * thread all four registers. Matrix j (its row addresses from lanes 8j .. 8j + 7) is
             * rows n = 2i + j % 2 (i = 0..7, the same column order as below) at k = 8 s + 4 (j / 2);
             * a thread receives word lane % 4 of row lane / 4 of each: register j holds column
             * n0 + j % 2, k = 8 s + lane % 4 + 4 (j / 2), as the plain reads below. */
            const int j = lane / 8, n = wg * 64 + warp * 16 + 2 * (lane % 8) + (j & 1);
            const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(rs));
#pragma unroll
            for (int st = 0; st < BK / 8; ++st) {
                unsigned r[4];
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                             : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                             : "r"(base + Staging::raw_bt(n, 8 * st + 4 * (j >> 1))));
#pragma unroll
                for (int i = 0; i < 4; ++i)
                    conv(__uint_as_float(r[i]), big[st][i], small[CORR ? st : 0][i]);
            }
            return;
        }
        const int n0 = wg * 64 + warp * 16 + 2 * (lane / 4), t = lane % 4;
#pragma unroll
        for (int st = 0; st < BK / 8; ++st)
#pragma unroll
            for (int hk = 0; hk < 2; ++hk) {
                const float2 x = *reinterpret_cast<const float2 *>(rs + Staging::raw_b(8 * st + t + 4 * hk, n0));
                conv(x.x, big[st][2 * hk], small[CORR ? st : 0][2 * hk]);
                conv(x.y, big[st][2 * hk + 1], small[CORR ? st : 0][2 * hk + 1]);
            }
    }
};

/* SWAP: A's k-tile from its raw stage r into the operand stage s element by element, big (and
 * under 3xTF32 small, A_PART further on) at the same byte offsets: the raw stage is already in the
 * operand's swizzled K-major form (Staging::raw_a is sw), so no address is computed. */
__device__ __forceinline__ void split_a_t(unsigned char *s, const unsigned char *r, int tid);
__device__ __forceinline__ void split_a(unsigned char *s, const unsigned char *r, int tid)
{
    if constexpr (OP_TA) {
        split_a_t(s, r, tid);
        return;
    }
    constexpr int IT = BM * ROW_BYTES / 16 / THREADS;
    static_assert(IT * THREADS * 16 == BM * ROW_BYTES, "whole 16-byte chunks of A per thread");
#pragma unroll
    for (int it = 0; it < IT; ++it) {
        const int o = (tid + it * THREADS) * 16;
        const float4 x = *reinterpret_cast<const float4 *>(r + o);
        uint4 big, small;
        BFrag::conv(x.x, big.x, small.x);
        BFrag::conv(x.y, big.y, small.y);
        BFrag::conv(x.z, big.z, small.z);
        BFrag::conv(x.w, big.w, small.w);
        *reinterpret_cast<uint4 *>(s + o) = big;
        if constexpr (CORR)
            *reinterpret_cast<uint4 *>(s + A_PART + o) = small;
    }
}

/* OP_TA: A's k-tile from its raw stage r (BK rows of BM floats, Staging::raw_at) transposed into
 * the K-major operand stage s, big (and small, A_PART further on). Chunk v is k = v % BK, rows
 * 4 (v / BK) .. + 3: a warp takes all 32 k of one 4-row chunk, so each of its four 4-byte stores
 * (one row m, every k) fills one whole 128-byte row, 32 banks, and its 16-byte raw reads cover the
 * eight swizzled chunk positions (four wavefronts, the least for 512 bytes). */
__device__ __forceinline__ void split_a_t(unsigned char *s, const unsigned char *r, int tid)
{
    if constexpr (TSPLIT_ON) {
        /* Block v: q = v / 8, l = v % 8 -> k = 4 ((l + q) % 8), rows m = 4 (8 (q / 8) + l): in a
         * quarter-warp (one q, l = 0..7) the reads' chunks (m / 4) ^ (k % 8) and the stores' (k / 4)
         * ^ (m % 8) take eight values each (tests/tc32_maps.py). At BM = 64 fewer blocks than threads. */
        constexpr int NB = BM * BK / 16;
#pragma unroll
        for (int v = tid; v < (NB + THREADS - 1) / THREADS * THREADS; v += THREADS) {
            if (NB % THREADS != 0 && v >= NB)
                break;
            const int q = v / 8, l = v % 8, k = 4 * ((l + q) % 8), m = 4 * (8 * (q / 8) + l);
            float x[4][4]; /* x[i][e]: k + i, row m + e */
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const float4 w = *reinterpret_cast<const float4 *>(r + Staging::raw_at(k + i, m));
                x[i][0] = w.x, x[i][1] = w.y, x[i][2] = w.z, x[i][3] = w.w;
            }
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                uint4 big, small;
                BFrag::conv(x[0][e], big.x, small.x);
                BFrag::conv(x[1][e], big.y, small.y);
                BFrag::conv(x[2][e], big.z, small.z);
                BFrag::conv(x[3][e], big.w, small.w);
                *reinterpret_cast<uint4 *>(s + sw(m + e, k)) = big;
                if constexpr (CORR)
                    *reinterpret_cast<uint4 *>(s + A_PART + sw(m + e, k)) = small;
            }
        }
        return;
    }
    constexpr int IT = BM * BK / 4 / THREADS;
    static_assert(IT * THREADS * 4 == BM * BK, "whole chunks of A per thread");
#pragma unroll
    for (int it = 0; it < IT; ++it) {
        const int v = tid + it * THREADS, k = v % BK, m = 4 * (v / BK);
        const float4 x = *reinterpret_cast<const float4 *>(r + Staging::raw_at(k, m));
        const float f[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            unsigned big, small;
            BFrag::conv(f[e], big, small);
            *reinterpret_cast<unsigned *>(s + sw(m + e, k)) = big;
            if constexpr (CORR)
                *reinterpret_cast<unsigned *>(s + A_PART + sw(m + e, k)) = small;
        }
    }
}

/* SWAP: the tensor cores' work on one k-tile, B's fragments from bf and A's big (and small,
 * A_PART further on) at a_stage; otherwise as mma_stage. */
template <int NC>
__device__ __forceinline__ void mma_swap(float (&part)[NACC], float (&corr)[NC], unsigned a_stage, bool fresh,
                                         const BFrag &bf)
{
    const unsigned a_big = a_stage, a_small = a_stage + A_PART;
#pragma unroll
    for (int ks = 0; ks < BK / 8; ++ks) {
        const int keep = !(fresh && ks == 0);
        if constexpr (SEPC) {
            wgmma_ra(corr, bf.big[ks], desc(a_small + ks * 32), keep);
            wgmma_ra(corr, bf.small[CORR ? ks : 0], desc(a_big + ks * 32), 1);
        } else if constexpr (CORR) {
            wgmma_ra(part, bf.big[ks], desc(a_small + ks * 32), keep);
            wgmma_ra(part, bf.small[CORR ? ks : 0], desc(a_big + ks * 32), 1);
        }
        wgmma_ra(part, bf.big[ks], desc(a_big + ks * 32), CORR && !SEPC ? 1 : keep);
    }
}

/* SWAP's main loop: what one k-tile does (the kernel's comment tells the order), with fragment
 * buffer X, a compile-time index since registers cannot be indexed at run time. */
struct SwapPipe {
    unsigned char *smem, *raw; /* operand stages, raw stages */
    unsigned sbase, rbase;     /* the same as shared-memory addresses */
    const T *A, *B;
    int M, N, K, lda, ldb, row0, col0, tid, wg, warp, lane, nk, phase;

    template <int X, int NC, int NT>
    __device__ __forceinline__ void step(int kt, float (&part)[NACC], float (&corr)[NC], float (&total)[NT],
                                         BFrag (&bf)[2]) const
    {
        constexpr int RAW_STAGE = (BM + BN) * ROW_BYTES;
        const bool more = kt + 1 < nk;
        const unsigned a_op = SPLITA ? sbase + (kt % STAGES) * STAGE : rbase + (kt % RAW_STAGES) * RAW_STAGE;
        wgmma_fence();
        mma_swap(part, corr, a_op, PROM && kt > 0 && (kt + phase) % KPT == 0, bf[X]);
        wgmma_commit();
        settle<1>(PROM && (!more || (kt + 1 + phase) % KPT == 0), part, corr, total);
        if (more) {
            cp_async_wait<RAW_STAGES - 3>(); /* k-tile kt + 1 is in (this thread's copies) */
            fence_async_smem();
            __syncthreads(); /* ... everyone's; every warpgroup is done with kt - 1 */
            if (kt + RAW_STAGES - 1 < nk)
                Staging::copy(raw + ((kt + RAW_STAGES - 1) % RAW_STAGES) * RAW_STAGE, A, B, M, N, K, lda, ldb, row0,
                              col0, (kt + RAW_STAGES - 1) * BK, tid);
            cp_async_commit();
            const unsigned char *r = raw + ((kt + 1) % RAW_STAGES) * RAW_STAGE;
            if constexpr (SPLITA) {
                split_a(smem + ((kt + 1) % STAGES) * STAGE, r, tid); /* last read by kt + 1 - STAGES <= kt - 1 */
                fence_async_smem();
            }
            bf[X ^ 1].tie(); /* last read by kt - 1's wgmmas, waited for */
            bf[X ^ 1].load(r, wg, warp, lane);
            if constexpr (SPLITA)
                __syncthreads();
        }
    }
};
