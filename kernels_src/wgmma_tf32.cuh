/* wgmma_tf32.cuh — Hopper's warpgroup tensor-core instruction with TF32 operands, as tc32.cu and
 * tc32ws.cu issue it (sm_90a). The includer defines WN (the instruction's N: 64, 128 or 256, a
 * macro) and NACC (= WN / 2, the accumulator registers a thread holds) before including it. */
#pragma once
#include "wgmma.cuh"

/* The wgmma m64nWNk8 TF32 instruction (PTX ISA, "wgmma.mma_async"), its operands as wgmma.cuh
 * lists them. */
#define WG_ASM2(tail, pred) "{\n.reg .pred p;\nsetp.ne.b32 p, " pred ", 0;\n" \
    "wgmma.mma_async.sync.aligned.m64n" WG_XSTR(WN) "k8.f32.tf32.tf32 {" WG_D "}, " tail
#define WG_ASM(form) WG_ASM2(form)

/* d = A (64 x 8, descriptor da) * B (8 x BN, descriptor db) + (acc_d ? d : 0) (scale-d),
 * asynchronously: the registers of d belong to the tensor cores until wgmma_wait. */
__device__ __forceinline__ void wgmma(float (&d)[NACC], unsigned long long da, unsigned long long db, int acc_d)
{
    asm volatile(WG_ASM(WG_SS) : WG_DOUT(d) : "l"(da), "l"(db), "r"(acc_d));
}

/* The same with A's 64 x 8 from registers (AREG): in warp w of the warpgroup, a[0..3] hold rows
 * 16w + lane / 4 + 8 (i % 2), k lane % 4 + 4 (i / 2) (PTX ISA, "Register Fragments"); they too
 * belong to the tensor cores until wgmma_wait. */
__device__ __forceinline__ void wgmma_ra(float (&d)[NACC], const unsigned (&a)[4], unsigned long long db, int acc_d)
{
    asm volatile(WG_ASM(WG_RS) : WG_DOUT(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(acc_d));
}

