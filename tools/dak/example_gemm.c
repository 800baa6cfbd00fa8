/* The smallest complete use of the dak split GEMM (include/dak/gemm.h): a bf16 weight matrix A with a share of its
 * rows in pinned host memory, decode GEMMs C = A B read straight from both tiers, captured once as a CUDA graph of
 * `layers` PDL launches and replayed; the result is checked against the fp32 reference and timed.
 *
 *   dak-example-gemm [M K N RATIO]      (default 7168 7168 8 0.05; M, K multiples of 64, N >= 1, RATIO in [0, 1])
 *
 * Exit status 0 when C matches the reference (relative error <= 1e-2), 1 on a failure, 2 on bad arguments. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/error.h"
#include "dak/gemm.h"
#include "dak/tiered.h"

#define LAYERS 8

/* prints the failing step and returns 1 (argument: a cudaError_t) */
#define CUDA_OK(call, what)                                                                                        \
    do {                                                                                                           \
        cudaError_t e_ = (call);                                                                                   \
        if (e_ != cudaSuccess) {                                                                                   \
            fprintf(stderr, "dak-example-gemm: %s: %s\n", what, cudaGetErrorString(e_));                            \
            return 1;                                                                                              \
        }                                                                                                          \
    } while (0)
#define DAK_OK(call)                                                                                               \
    do {                                                                                                           \
        if (call) {                                                                                                \
            fprintf(stderr, "dak-example-gemm: %s\n", err.msg);                                                     \
            return 1;                                                                                              \
        }                                                                                                          \
    } while (0)

static int arg_u32(const char *s, const char *name, uint32_t *v)
{
    char *end;
    unsigned long x = strtoul(s, &end, 10);
    if (*s == '\0' || *end != '\0' || x == 0 || x > 1u << 20) {
        fprintf(stderr, "dak-example-gemm: %s: expected a positive integer up to 2^20, got '%s'\n", name, s);
        return -1;
    }
    *v = (uint32_t)x;
    return 0;
}

int main(int argc, char **argv)
{
    uint32_t M = 7168, K = 7168, N = 8;
    double ratio = 0.05;
    if (argc != 1 && argc != 5) {
        fprintf(stderr, "usage: %s [M K N RATIO]\n", argv[0]);
        return 2;
    }
    if (argc == 5) {
        char *end;
        ratio = strtod(argv[4], &end);
        if (arg_u32(argv[1], "M", &M) || arg_u32(argv[2], "K", &K) || arg_u32(argv[3], "N", &N)) return 2;
        if (*argv[4] == '\0' || *end != '\0' || !(ratio >= 0 && ratio <= 1)) {
            fprintf(stderr, "dak-example-gemm: RATIO: expected a number in [0, 1], got '%s'\n", argv[4]);
            return 2;
        }
    }
    cm_err err;
    dak_gemm_ctx *ctx;
    DAK_OK(dak_gemm_ctx_create(&ctx, &err));

    /* A: a full row-major copy in HBM (for the reference), loaded into a tiered matrix whose first rows (the ratio,
     * rounded to 64-row tiles) are in pinned host memory; dak_tiered_create refuses M or K not a multiple of 64 */
    dak_tiered A;
    uint16_t *a_full, *B;
    float *R, *C;
    DAK_OK(dak_tiered_create(&A, M, K, ratio, &err));
    CUDA_OK(cudaMalloc((void **)&a_full, (size_t)M * K * 2), "A");
    DAK_OK(dak_fill_random_bf16(a_full, (size_t)M * K, 1, NULL, &err));
    DAK_OK(dak_tiered_load_from_device(&A, a_full, &err));

    /* B: N columns of K (bf16, column-major, as the hidden states of N tokens); C: M x N fp32, column-major */
    CUDA_OK(cudaMalloc((void **)&B, (size_t)K * N * 2), "B");
    CUDA_OK(cudaMalloc((void **)&C, (size_t)M * N * 4), "C");
    CUDA_OK(cudaMalloc((void **)&R, (size_t)M * N * 4), "reference");
    DAK_OK(dak_fill_random_bf16(B, (size_t)K * N, 2, NULL, &err));

    /* one prepared launch, with programmatic dependent launch: in a sequence, each GEMM streams its share of A
     * while the one before finishes */
    dak_gemm_opts o;
    dak_gemm_opts_default(&o);
    o.pdl = 1;
    dak_gemm_launch *l;
    DAK_OK(dak_gemm_prepare(ctx, &A, B, C, N, &o, &l, &err));
    const dak_gemm_plan *p = dak_gemm_launch_plan(l);

    /* the decode loop's shape: LAYERS GEMMs captured once as a graph, replayed */
    cudaStream_t st;
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CUDA_OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "stream");
    DAK_OK(dak_gemm_run(l, st, &err)); /* a warm-up outside the capture */
    CUDA_OK(cudaStreamSynchronize(st), "warm-up");
    CUDA_OK(cudaStreamBeginCapture(st, cudaStreamCaptureModeRelaxed), "begin capture");
    for (int i = 0; i < LAYERS; i++) DAK_OK(dak_gemm_run(l, st, &err));
    CUDA_OK(cudaStreamEndCapture(st, &g), "end capture");
    CUDA_OK(cudaGraphInstantiate(&ge, g, 0), "instantiate");
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0), "event");
    CUDA_OK(cudaEventCreate(&e1), "event");
    CUDA_OK(cudaGraphLaunch(ge, st), "graph launch");
    CUDA_OK(cudaEventRecord(e0, st), "event");
    CUDA_OK(cudaGraphLaunch(ge, st), "graph launch");
    CUDA_OK(cudaEventRecord(e1, st), "event");
    CUDA_OK(cudaStreamSynchronize(st), "graph");
    float ms;
    CUDA_OK(cudaEventElapsedTime(&ms, e0, e1), "elapsed");

    /* check C against the fp32 reference */
    DAK_OK(dak_ref_gemm(a_full, B, R, M, N, K, NULL, &err));
    float *hc = malloc((size_t)M * N * 4), *hr = malloc((size_t)M * N * 4);
    if (!hc || !hr) {
        fprintf(stderr, "dak-example-gemm: out of host memory\n");
        return 1;
    }
    CUDA_OK(cudaMemcpy(hc, C, (size_t)M * N * 4, cudaMemcpyDeviceToHost), "C to host");
    CUDA_OK(cudaMemcpy(hr, R, (size_t)M * N * 4, cudaMemcpyDeviceToHost), "reference to host");
    double d = 0, r = 0;
    for (size_t i = 0; i < (size_t)M * N; i++) {
        const double x = (double)hc[i] - hr[i];
        d += x * x, r += (double)hr[i] * hr[i];
    }
    const double rel = sqrt(d / (r > 0 ? r : 1));
    const double us = 1e3 * ms / LAYERS, gbs = (double)M * K * 2 / (us * 1e3);
    printf("A %ux%u bf16, %u of %u rows in host memory (%.2f %%), N %u: %u HBM CTAs + %u host CTAs, %u-row tiles\n", M,
           K, A.rows_host, M, 100.0 * A.rows_host / M, N, p->hbm.ctas, p->host.ctas + p->panel.ctas, p->bm);
    printf("%.2f us a GEMM (a graph of %d PDL launches), %.0f GB/s of A; rel err %.2e against the fp32 reference\n",
           us, LAYERS, gbs, rel);

    cudaGraphExecDestroy(ge), cudaGraphDestroy(g), cudaEventDestroy(e0), cudaEventDestroy(e1), cudaStreamDestroy(st);
    dak_gemm_launch_free(l);
    dak_tiered_destroy(&A);
    cudaFree(a_full), cudaFree(B), cudaFree(C), cudaFree(R);
    free(hc), free(hr);
    dak_gemm_ctx_destroy(ctx);
    if (!(rel <= 1e-2)) {
        fprintf(stderr, "dak-example-gemm: C does not match the reference (relative error %g)\n", rel);
        return 1;
    }
    return 0;
}
