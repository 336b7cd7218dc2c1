/* wgmma.cuh — what every user of Hopper's warpgroup tensor-core instruction shares (sm_90a): the
 * shared-memory matrix descriptors, the accumulator operand lists, and the fences and waits. The
 * includer defines WN (the instruction's N: 64, 128 or 256, a macro) and NACC (= WN / 2, the
 * accumulator registers a thread holds) first; wgmma_tf32.cuh (tc32.cu, tc32ws.cu) and hws.cu add
 * the instructions of their types. */
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

/* A descriptor for MN-major rows (the 16-bit types only: wgmma transposes them, imm-trans): an
 * 8-row group of 128-byte rows holds 64 elements of M (or N) at 8 consecutive k, 128-byte swizzle;
 * lbo bytes between groups of 64 elements along M (N), 1024 between groups of 8 along k (PTX ISA,
 * "Matrix Descriptor", and CUTLASS's canonical MN-major SW128 layout ((8,n),(8,k)):((1,LBO),(8,SBO))
 * in 16-byte units). */
__device__ __forceinline__ unsigned long long desc_mn(unsigned saddr, unsigned lbo)
{
    return (unsigned long long)((saddr & 0x3FFFF) >> 4) | ((unsigned long long)((lbo >> 4) & 0x3FFF) << 16) |
           ((unsigned long long)(1024 >> 4) << 32) | (1ull << 62);
}

/* The operands of an instruction of N = WN: WG_D lists the accumulators as the instruction's text
 * names them, WG_DOUT as the asm statement binds them; WG_SS_T(tr) and WG_RS the operands after
 * them (two descriptors, or A's four registers and B's descriptor; scale-d's predicate and the
 * scales of A and B; tr: further immediates, the 16-bit types' transposes) and the number of the
 * operand that sets scale-d's predicate. */
#define D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
              "+f"(d[i + 6]), "+f"(d[i + 7])
#if WN == 64
#define WG_D "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define WG_DOUT(d) D8(0), D8(8), D8(16), D8(24)
#define WG_SS_T(tr) "%32, %33, p, 1, 1" tr ";\n}\n", "%34"
#define WG_SS WG_SS_T("")
#define WG_RS "{%32, %33, %34, %35}, %36, p, 1, 1;\n}\n", "%37"
#elif WN == 128
#define WG_D "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define WG_DOUT(d) D8(0), D8(8), D8(16), D8(24), D8(32), D8(40), D8(48), D8(56)
#define WG_SS_T(tr) "%64, %65, p, 1, 1" tr ";\n}\n", "%66"
#define WG_SS WG_SS_T("")
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
#define WG_SS_T(tr) "%128, %129, p, 1, 1" tr ";\n}\n", "%130"
#define WG_SS WG_SS_T("")
#define WG_RS "{%128, %129, %130, %131}, %132, p, 1, 1;\n}\n", "%133"
#endif
#define WG_STR(x) #x
#define WG_XSTR(x) WG_STR(x)

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
