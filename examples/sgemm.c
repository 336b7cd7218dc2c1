/* sgemm.c — libengine from a user's program: C = A B^T (a linear layer's X W^T) through
 * engine_sgemm, then again through a plan, each checked against cuBLAS. Build: make examples, or after
 * make install, with CUDA=/usr/local/cuda (where CUDA is: the example calls cuBLAS and the runtime) and,
 * for a PREFIX the system does not search, PKG_CONFIG_PATH=PREFIX/lib/pkgconfig:
 *   cc sgemm.c $(pkg-config --cflags --libs engine) -I$CUDA/include -L$CUDA/lib64 -Wl,-rpath,$CUDA/lib64 -lcublas -lcudart -lm
 * Prints the largest difference from cuBLAS relative to max|C|, and PASS or FAIL (exit 1). */
#include <engine.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "sgemm: %s failed: %s\n", #x, engine_last_error(ctx)); return 2; } } while (0)

static float max_rel_diff(const float *got, const float *want, size_t n)
{
    float diff = 0, scale = 1e-30f;
    for (size_t i = 0; i < n; i++) {
        float d = fabsf(got[i] - want[i]);
        diff = d > diff || d != d ? d : diff; /* NaN wins */
        scale = fmaxf(scale, fabsf(want[i]));
    }
    return diff / scale;
}

int main(void)
{
    const int m = 1000, n = 1001, k = 999; /* C (m x n) = A (m x k) * B^T, B stored n x k */
    size_t nA = (size_t)m * k, nB = (size_t)n * k, nC = (size_t)m * n;
    float *hA = malloc(nA * 4), *hB = malloc(nB * 4), *want = malloc(nC * 4), *got = malloc(nC * 4);
    for (size_t i = 0; i < nA; i++) hA[i] = (float)((int)(i * 7 % 13) - 6) / 8; /* int: size_t - 6 wraps */
    for (size_t i = 0; i < nB; i++) hB[i] = (float)((int)(i * 5 % 11) - 5) / 4;
    engine_ctx *ctx = NULL;
    float *A, *B, *C, *R;
    CHECK(engine_create(&ctx, NULL) == ENGINE_SUCCESS);
    CHECK(cudaMalloc((void **)&A, nA * 4) == cudaSuccess && cudaMalloc((void **)&B, nB * 4) == cudaSuccess &&
          cudaMalloc((void **)&C, nC * 4) == cudaSuccess && cudaMalloc((void **)&R, nC * 4) == cudaSuccess);
    cudaMemcpy(A, hA, nA * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(B, hB, nB * 4, cudaMemcpyHostToDevice);
    /* cuBLAS is column-major: C^T (n x m) = B (n x k, read as k x n transposed) * A^T. */
    cublasHandle_t h;
    const float one = 1, zero = 0;
    CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, B, k, A, k, &zero, R, n) == CUBLAS_STATUS_SUCCESS);
    cudaMemcpy(want, R, nC * 4, cudaMemcpyDeviceToHost);

    CHECK(engine_sgemm(ctx, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_TRANS, m, n, k, 1.0f, A, k, B, k, 0.0f, C, n,
                       NULL) == ENGINE_SUCCESS);
    cudaMemcpy(got, C, nC * 4, cudaMemcpyDeviceToHost); /* legacy stream: waits for the kernel */
    float e1 = max_rel_diff(got, want, nC);

    engine_plan_desc d;
    engine_plan *plan;
    char text[2048];
    engine_plan_desc_init(&d, ENGINE_F32, ENGINE_ROW_MAJOR, ENGINE_NO_TRANS, ENGINE_TRANS, m, n, k);
    CHECK(engine_plan_create(ctx, &d, &plan) == ENGINE_SUCCESS);
    engine_plan_describe(plan, text, sizeof text);
    cudaMemset(C, 0xFF, nC * 4); /* NaN: an element the plan does not write fails */
    CHECK(engine_plan_execute(plan, 1.0, A, B, 0.0, C, NULL) == ENGINE_SUCCESS);
    cudaMemcpy(got, C, nC * 4, cudaMemcpyDeviceToHost);
    float e2 = max_rel_diff(got, want, nC);
    int ok = e1 <= 1e-5f && e2 <= 1e-5f; /* k = 999 terms of exact eighths and quarters: only rounding */
    printf("plan: %s\nengine_sgemm: max error %.3g, plan: %.3g (relative to max|C|)\n%s\n", text, e1, e2, ok ? "PASS" : "FAIL");
    engine_plan_destroy(plan);
    engine_destroy(ctx);
    cublasDestroy(h);
    cudaFree(A), cudaFree(B), cudaFree(C), cudaFree(R);
    free(hA), free(hB), free(want), free(got);
    return ok ? 0 : 1;
}
