/* wgmma_tf32.cuh — Hopper's warpgroup tensor-core instruction with TF32 operands, as tc32.cu and
 * tc32ws.cu issue it (sm_90a). The includer defines WN (the instruction's N: 64, 128 or 256, a
 * macro) and NACC (= WN / 2, the accumulator registers a thread holds) before including it. */
#pragma once

/* A shared-memory matrix descriptor for K-major rows of 128 bytes, 128-byte swizzle, 8-row groups
 * 1024 bytes apart (PTX ISA: start address >> 4 in bits 0-13, leading byte offset >> 4 in 16-29,
 * unused for a swizzled K-major operand whose k-step lies inside the swizzle row, set to 1; stride
 * byte offset >> 4 in 32-45; base offset 0 in 49-51, the atoms being 1024-byte aligned; swizzle
 * mode 1 = 128 bytes in 62-63). */
__device__ __forceinline__ unsigned long long desc(unsigned saddr)
{
    return (unsigned long long)((saddr & 0x3FFFF) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) |
           (1ull << 62);
}

/* The wgmma m64nWNk8 TF32 instruction (PTX ISA, "wgmma.mma_async"): WG_D lists the BN / 2 accumulator
 * operands, WG_SS and WG_RS the rest of the instruction with A from a descriptor or from four
 * registers, and the operand number of the scale-d predicate's source. */
#define D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
              "+f"(d[i + 6]), "+f"(d[i + 7])
#if WN == 64
#define WG_D "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define WG_DOUT(d) D8(0), D8(8), D8(16), D8(24)
#define WG_SS "%32, %33, p, 1, 1;\n}\n", "%34"
#define WG_RS "{%32, %33, %34, %35}, %36, p, 1, 1;\n}\n", "%37"
#elif WN == 128
#define WG_D "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define WG_DOUT(d) D8(0), D8(8), D8(16), D8(24), D8(32), D8(40), D8(48), D8(56)
#define WG_SS "%64, %65, p, 1, 1;\n}\n", "%66"
#define WG_RS "{%64, %65, %66, %67}, %68, p, 1, 1;\n}\n", "%69"
#elif WN == 256
#define WG_D "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define WG_DOUT(d) D8(0), D8(8), D8(16), D8(24), D8(32), D8(40), D8(48), D8(56), D8(64), D8(72), D8(80), D8(88), D8(96), D8(104), D8(112), D8(120)
#define WG_SS "%128, %129, p, 1, 1;\n}\n", "%130"
#define WG_RS "{%128, %129, %130, %131}, %132, p, 1, 1;\n}\n", "%133"
#endif
#define WG_STR(x) #x
#define WG_XSTR(x) WG_STR(x)
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

/* Orders the accumulator registers' other uses before the wgmmas that follow. */
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
/* Until at most N committed groups of this warpgroup's wgmmas are still running. */
template <int N> __device__ __forceinline__ void wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
/* The threads' st.shared are seen by the tensor cores (the async proxy) only after this fence. */
__device__ __forceinline__ void fence_async_smem() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
