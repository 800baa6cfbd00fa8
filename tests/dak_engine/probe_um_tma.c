/* probe_um_tma: do the split GEMM's TMA bulk copies fault managed memory in correctly?  (A probe, not a CTest
 * test: its answer was unknown when it was written, NOTES-dak-engine.md, session 21.)
 *
 * A = M x K bf16 (packed) in managed memory, pushed back to the CPU (cudaMemPrefetchAsync to the host) before
 * each repetition; the split GEMM reads it as an all-HBM matrix, so every copy of A is a TMA copy from pages
 * that are not on the GPU.  Its C must equal, bit for bit, the same launch plan over a cudaMalloc copy of A.
 * Beside it, the unified-memory baseline's path: cuBLAS (cublasGemmEx) over a row-major managed copy, pushed
 * back the same way, against cuBLAS over HBM.  Prints each repetition's time and the rate of A's bytes; exits 0
 * when every result matched, 1 otherwise (a CUDA error included: a fault TMA cannot take kills the context).
 * Usage: probe_um_tma [M K N]  (default 4096 4096 8; M and K multiples of 64) */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "dak/gemm.h"
#include "dak/tiered.h"

#define CK(x)                                                                                     \
    do {                                                                                          \
        cudaError_t e_ = (x);                                                                     \
        if (e_ != cudaSuccess) {                                                                  \
            printf("CUDA error: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__);       \
            return 1;                                                                             \
        }                                                                                         \
    } while (0)
#define DK(x)                                                                                     \
    do {                                                                                          \
        if (x) {                                                                                  \
            printf("error: %s: %s\n", #x, err.msg);                                               \
            return 1;                                                                             \
        }                                                                                         \
    } while (0)

static uint16_t rnd_bf16(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    /* sign, exponent 2^-4 .. 2^-1, 7 random mantissa bits: finite, no overflow in K = 4096 sums */
    uint32_t r = (uint32_t)(*s >> 33);
    return (uint16_t)(((r & 1u) << 15) | ((123u + ((r >> 1) & 3u)) << 7) | ((r >> 3) & 0x7fu));
}

static int push_back(const void *p, size_t n)
{
    struct cudaMemLocation host;
    memset(&host, 0, sizeof host);
    host.type = cudaMemLocationTypeHost;
    CK(cudaMemPrefetchAsync(p, n, host, 0, NULL));
    CK(cudaDeviceSynchronize());
    return 0;
}

int main(int argc, char **argv)
{
    uint32_t M = 4096, K = 4096, N = 8;
    if (argc == 4) M = (uint32_t)atoi(argv[1]), K = (uint32_t)atoi(argv[2]), N = (uint32_t)atoi(argv[3]);
    if (!M || !K || !N || M % 64 || K % 64 || N > 256) {
        fprintf(stderr, "probe_um_tma: expected M K N with M, K multiples of 64 and 1 <= N <= 256\n");
        return 2;
    }
    cm_err err = {{0}};
    int dev = 0, cma = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&cma, cudaDevAttrConcurrentManagedAccess, dev));
    size_t ab = (size_t)M * K * 2, fr = 0, tot = 0;
    CK(cudaMemGetInfo(&fr, &tot));
    printf("probe_um_tma: A %u x %u bf16 (%.1f MB), N = %u; concurrent managed access %d; HBM free %.1f GB\n", M, K,
           ab / 1e6, N, cma, fr / 1e9);
    if (!cma || 2 * ab > fr / 4) {
        printf("probe_um_tma: skipped (no concurrent managed access, or 2 x A past a quarter of the free HBM)\n");
        return 1;
    }
    uint16_t *h = malloc(ab), *hb = malloc((size_t)N * K * 2);
    uint64_t s = 12345;
    for (size_t i = 0; i < (size_t)M * K; i++) h[i] = rnd_bf16(&s);
    for (size_t i = 0; i < (size_t)N * K; i++) hb[i] = rnd_bf16(&s);
    uint16_t *src, *packed, *um_packed, *um_rm, *B;
    float *C0, *C1, *C2, *C3;
    CK(cudaMalloc((void **)&src, ab));
    CK(cudaMalloc((void **)&packed, ab));
    CK(cudaMallocManaged((void **)&um_packed, ab, cudaMemAttachGlobal));
    CK(cudaMallocManaged((void **)&um_rm, ab, cudaMemAttachGlobal));
    CK(cudaMalloc((void **)&B, (size_t)N * K * 2));
    size_t cb = (size_t)M * N * 4;
    CK(cudaMalloc((void **)&C0, cb));
    CK(cudaMalloc((void **)&C1, cb));
    CK(cudaMalloc((void **)&C2, cb));
    CK(cudaMalloc((void **)&C3, cb));
    CK(cudaMemcpy(src, h, ab, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(B, hb, (size_t)N * K * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(um_rm, src, ab, cudaMemcpyDeviceToDevice));
    dak_gemm_ctx *ctx;
    DK(dak_gemm_ctx_create(&ctx, &err));
    DK(dak_pack_rowmajor(src, packed, M, K, &err));
    DK(dak_pack_rowmajor(src, um_packed, M, K, &err));
    CK(cudaDeviceSynchronize());
    dak_tiered v0, v1;
    DK(dak_tiered_view(&v0, M, K, 0, NULL, packed, 1, &err));
    DK(dak_tiered_view(&v1, M, K, 0, NULL, um_packed, 1, &err));
    dak_gemm_opts o;
    dak_gemm_opts_default(&o);
    dak_gemm_launch *l0, *l1;
    DK(dak_gemm_prepare(ctx, &v0, B, C0, N, &o, &l0, &err));
    DK(dak_gemm_prepare(ctx, &v1, B, C1, N, &o, &l1, &err));
    DK(dak_gemm_run(l0, NULL, &err));
    DK(dak_base_cublas(ctx, src, B, C2, M, N, K, NULL, &err));
    CK(cudaDeviceSynchronize());
    float *r0 = malloc(cb), *r1 = malloc(cb), *r2 = malloc(cb), *r3 = malloc(cb);
    CK(cudaMemcpy(r0, C0, cb, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(r2, C2, cb, cudaMemcpyDeviceToHost));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    int bad = 0;
    for (int rep = 0; rep < 3; rep++) {
        float ms_f, ms_r, mc_f, mc_r;
        /* the split GEMM (TMA) over A pushed back to the CPU, then again with A resident */
        if (push_back(um_packed, ab)) return 1;
        CK(cudaMemset(C1, 0, cb));
        CK(cudaEventRecord(e0, NULL));
        DK(dak_gemm_run(l1, NULL, &err));
        CK(cudaEventRecord(e1, NULL));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms_f, e0, e1));
        CK(cudaMemcpy(r1, C1, cb, cudaMemcpyDeviceToHost));
        int same_f = memcmp(r0, r1, cb) == 0;
        CK(cudaEventRecord(e0, NULL));
        DK(dak_gemm_run(l1, NULL, &err));
        CK(cudaEventRecord(e1, NULL));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms_r, e0, e1));
        CK(cudaMemcpy(r1, C1, cb, cudaMemcpyDeviceToHost));
        int same_r = memcmp(r0, r1, cb) == 0;
        /* cuBLAS over the row-major managed copy, likewise (the unified-memory baseline's path) */
        if (push_back(um_rm, ab)) return 1;
        CK(cudaEventRecord(e0, NULL));
        DK(dak_base_cublas(ctx, um_rm, B, C3, M, N, K, NULL, &err));
        CK(cudaEventRecord(e1, NULL));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&mc_f, e0, e1));
        CK(cudaMemcpy(r3, C3, cb, cudaMemcpyDeviceToHost));
        int same_c = memcmp(r2, r3, cb) == 0;
        CK(cudaEventRecord(e0, NULL));
        DK(dak_base_cublas(ctx, um_rm, B, C3, M, N, K, NULL, &err));
        CK(cudaEventRecord(e1, NULL));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&mc_r, e0, e1));
        bad += !same_f + !same_r + !same_c;
        printf("rep %d: split GEMM (TMA) on managed A after a push-back: %s, %.1f us (%.2f GB/s of A); resident: %s, "
               "%.1f us | cuBLAS on managed A after a push-back: %s, %.1f us (%.2f GB/s); resident %.1f us\n",
               rep, same_f ? "equal" : "DIFFERENT", ms_f * 1e3, ab / (ms_f * 1e6), same_r ? "equal" : "DIFFERENT",
               ms_r * 1e3, same_c ? "equal" : "DIFFERENT", mc_f * 1e3, ab / (mc_f * 1e6), mc_r * 1e3);
    }
    /* the push-back itself: A resident on the GPU, then to the CPU, timed on the stream */
    {
        float ms;
        DK(dak_gemm_run(l1, NULL, &err));
        CK(cudaDeviceSynchronize());
        struct cudaMemLocation host;
        memset(&host, 0, sizeof host);
        host.type = cudaMemLocationTypeHost;
        CK(cudaEventRecord(e0, NULL));
        CK(cudaMemPrefetchAsync(um_packed, ab, host, 0, NULL));
        CK(cudaEventRecord(e1, NULL));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms, e0, e1));
        printf("push-back of A (%.1f MB) to the CPU: %.1f us (%.2f GB/s)\n", ab / 1e6, ms * 1e3, ab / (ms * 1e6));
    }
    printf("probe_um_tma: %s\n", bad ? "results DIFFER" : "every result equal");
    dak_gemm_launch_free(l0), dak_gemm_launch_free(l1);
    dak_gemm_ctx_destroy(ctx);
    cudaFree(src), cudaFree(packed), cudaFree(um_packed), cudaFree(um_rm), cudaFree(B);
    cudaFree(C0), cudaFree(C1), cudaFree(C2), cudaFree(C3);
    free(h), free(hb), free(r0), free(r1), free(r2), free(r3);
    return bad ? 1 : 0;
}
