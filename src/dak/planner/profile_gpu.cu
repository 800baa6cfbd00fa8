/* dak profile: measures what the planner's operation model needs on this GPU
 *   B_h  a kernel reading mapped pinned host memory (16-byte loads), and
 *        cudaMemcpy H2D/D2H from pinned memory (informational);
 *   B_g  a kernel reading HBM (16-byte loads);
 *   the bf16 GEMM rate per shape with cuBLAS (cublasGemmEx, fp32 accumulate):
 *        "hbm"  the real GEMM, weights streamed from HBM (at small n this is
 *               a memory rate, not a compute rate);
 *        "l2"   the same FLOPs with one L2-resident weight slice broadcast
 *               over a strided batch (cublasGemmStridedBatchedEx, stride 0),
 *               which keeps all SMs busy while taking HBM out of the time.
 *   The planner's compute rate is max(l2, hbm): T_comp = F / rate. */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "common/error.h"
#include "dak/planner.h"
}
#include "common/cuda_check.h"

#define CK(call) CM_CUDA_TRY(err, "dak profile", call)

#define CB(call)                                                                         \
    do {                                                                                 \
        cublasStatus_t s_ = (call);                                                      \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                               \
            cm_fail(err, "dak profile: %s: cuBLAS status %d (%s:%d)", #call, (int)s_,     \
                    __FILE__, __LINE__);                                                 \
            goto fail;                                                                   \
        }                                                                                \
    } while (0)

__global__ void read_kernel(const uint4 *__restrict__ p, size_t n, unsigned *sink)
{
    unsigned acc = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) *sink = acc; /* keeps the loads alive */
}

__global__ void fill_bf16(__nv_bfloat16 *p, size_t n, unsigned seed)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        unsigned h = (unsigned)i * 0x9e3779b1u ^ seed;
        h ^= h >> 15;
        h *= 0x85ebca6bu;
        h ^= h >> 13;
        p[i] = __float2bfloat16(((float)(h & 0xffff) / 65536.0f - 0.5f) * 0.25f);
    }
}

static int cmp_f(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* median of reps timings (ms) of the work done by fn(ctx) */
typedef int (*work_fn)(void *ctx);

static int time_median(work_fn fn, void *ctx, uint32_t reps, float *ms_out, cm_err *err)
{
    cudaEvent_t a = NULL, b = NULL;
    float *t = (float *)cm_calloc(reps, sizeof(float));
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int w = 0; w < 2; w++)
        if (fn(ctx)) goto fail_msg;
    for (uint32_t r = 0; r < reps; r++) {
        CK(cudaEventRecord(a));
        if (fn(ctx)) goto fail_msg;
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        CK(cudaEventElapsedTime(&t[r], a, b));
    }
    CK(cudaGetLastError());
    qsort(t, reps, sizeof(float), cmp_f);
    *ms_out = t[reps / 2];
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    free(t);
    return 0;
fail_msg:
    cm_fail(err, "dak profile: a timed operation failed");
fail:
    if (a) cudaEventDestroy(a);
    if (b) cudaEventDestroy(b);
    free(t);
    return -1;
}

typedef struct {
    const uint4 *p;
    size_t n;
    unsigned *sink;
    uint32_t blocks;
} read_ctx;

static int do_read(void *c)
{
    read_ctx *r = (read_ctx *)c;
    read_kernel<<<r->blocks, 512>>>(r->p, r->n, r->sink);
    return cudaPeekAtLastError() != cudaSuccess;
}

typedef struct {
    void *dst;
    const void *src;
    size_t bytes;
    cudaMemcpyKind kind;
} copy_ctx;

static int do_copy(void *c)
{
    copy_ctx *x = (copy_ctx *)c;
    return cudaMemcpyAsync(x->dst, x->src, x->bytes, x->kind, 0) != cudaSuccess;
}

typedef struct {
    cublasHandle_t h;
    const __nv_bfloat16 *A, *B;
    __nv_bfloat16 *C;
    int m, n, k, batch, mslice;
    int batched;
} gemm_ctx;

static int do_gemm(void *c)
{
    gemm_ctx *g = (gemm_ctx *)c;
    const float alpha = 1.0f, beta = 0.0f;
    cublasStatus_t s;
    /* weights row-major [m x k] = column-major [k x m]: C(m x n) = A^T-view * B */
    if (!g->batched)
        s = cublasGemmEx(g->h, CUBLAS_OP_T, CUBLAS_OP_N, g->m, g->n, g->k, &alpha, g->A,
                         CUDA_R_16BF, g->k, g->B, CUDA_R_16BF, g->k, &beta, g->C, CUDA_R_16BF,
                         g->m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    else
        s = cublasGemmStridedBatchedEx(g->h, CUBLAS_OP_T, CUBLAS_OP_N, g->mslice, g->n, g->k,
                                       &alpha, g->A, CUDA_R_16BF, g->k, 0, g->B, CUDA_R_16BF,
                                       g->k, 0, &beta, g->C, CUDA_R_16BF, g->mslice,
                                       (long long)g->mslice * g->n, g->batch, CUBLAS_COMPUTE_32F,
                                       CUBLAS_GEMM_DEFAULT);
    return s != CUBLAS_STATUS_SUCCESS;
}

extern "C" int dak_profile_measure(const dak_profile_opts *o, dak_profile *p,
                                   dak_profile_extra *x, cm_err *err)
{
    void *host = NULL, *hbm = NULL;
    unsigned *sink = NULL;
    __nv_bfloat16 *A = NULL, *B = NULL, *C = NULL;
    cublasHandle_t handle = NULL;
    cudaDeviceProp prop;
    float ms;
    uint64_t max_m = 0, max_k = 0, max_n = 0;

    memset(p, 0, sizeof *p);
    memset(x, 0, sizeof *x);
    CK(cudaSetDevice(o->device));
    CK(cudaGetDeviceProperties(&prop, o->device));
    snprintf(x->device_name, sizeof x->device_name, "%s", prop.name);
    x->sm_count = prop.multiProcessorCount;
    CK(cudaMalloc((void **)&sink, sizeof(unsigned)));

    /* ---- host link -------------------------------------------------------- */
    CK(cudaHostAlloc(&host, o->host_bytes, cudaHostAllocMapped));
    memset(host, 1, o->host_bytes);
    CK(cudaMalloc(&hbm, o->hbm_bytes > o->host_bytes ? o->hbm_bytes : o->host_bytes));
    CK(cudaMemset(hbm, 1, o->hbm_bytes > o->host_bytes ? o->hbm_bytes : o->host_bytes));
    {
        copy_ctx c = {hbm, host, (size_t)o->host_bytes, cudaMemcpyHostToDevice};
        if (time_median(do_copy, &c, o->reps, &ms, err)) goto fail;
        x->h2d_memcpy = o->host_bytes / (ms * 1e-3);
        copy_ctx d = {host, hbm, (size_t)o->host_bytes, cudaMemcpyDeviceToHost};
        if (time_median(do_copy, &d, o->reps, &ms, err)) goto fail;
        x->d2h_memcpy = o->host_bytes / (ms * 1e-3);
    }
    {
        void *dev_view = NULL;
        CK(cudaHostGetDevicePointer(&dev_view, host, 0));
        uint32_t cand[5] = {16, 32, 64, (uint32_t)prop.multiProcessorCount,
                            (uint32_t)prop.multiProcessorCount * 2};
        for (int i = 0; i < 5; i++) {
            read_ctx r = {(const uint4 *)dev_view, (size_t)(o->host_bytes / 16), sink, cand[i]};
            if (time_median(do_read, &r, o->reps, &ms, err)) goto fail;
            double bw = o->host_bytes / (ms * 1e-3);
            if (o->verbose)
                fprintf(stderr, "dak profile: host read, %u blocks: %.2f GB/s\n", cand[i], bw / 1e9);
            if (bw > x->host_read_kernel) x->host_read_kernel = bw, x->host_blocks = cand[i];
        }
    }
    CK(cudaFreeHost(host));
    host = NULL;

    /* ---- HBM ---------------------------------------------------------------- */
    {
        uint32_t cand[3] = {(uint32_t)prop.multiProcessorCount * 2,
                            (uint32_t)prop.multiProcessorCount * 4,
                            (uint32_t)prop.multiProcessorCount * 8};
        for (int i = 0; i < 3; i++) {
            read_ctx r = {(const uint4 *)hbm, (size_t)(o->hbm_bytes / 16), sink, cand[i]};
            if (time_median(do_read, &r, o->reps, &ms, err)) goto fail;
            double bw = o->hbm_bytes / (ms * 1e-3);
            if (o->verbose)
                fprintf(stderr, "dak profile: HBM read, %u blocks: %.1f GB/s\n", cand[i], bw / 1e9);
            if (bw > x->hbm_read) x->hbm_read = bw, x->hbm_blocks = cand[i];
        }
    }
    CK(cudaFree(hbm));
    hbm = NULL;

    /* ---- GEMM rates ---------------------------------------------------------- */
    for (size_t s = 0; s < o->n_shapes; s++) {
        if (o->shapes[s][0] > max_m) max_m = o->shapes[s][0];
        if (o->shapes[s][1] > max_k) max_k = o->shapes[s][1];
    }
    for (size_t j = 0; j < o->n_ns; j++)
        if (o->ns[j] > max_n) max_n = o->ns[j];
    if (o->n_shapes && o->n_ns) {
        size_t na = (size_t)max_m * max_k, nb = (size_t)max_k * max_n,
               nc = (size_t)(max_m + 4096) * max_n;
        CK(cudaMalloc((void **)&A, na * sizeof(__nv_bfloat16)));
        CK(cudaMalloc((void **)&B, nb * sizeof(__nv_bfloat16)));
        CK(cudaMalloc((void **)&C, nc * sizeof(__nv_bfloat16)));
        fill_bf16<<<1024, 256>>>(A, na, 1u);
        fill_bf16<<<1024, 256>>>(B, nb, 2u);
        CK(cudaDeviceSynchronize());
        CB(cublasCreate(&handle));
        p->gemm = (dak_gemm_rate *)cm_calloc(o->n_shapes * o->n_ns, sizeof *p->gemm);
        for (size_t s = 0; s < o->n_shapes; s++) {
            int m = (int)o->shapes[s][0], k = (int)o->shapes[s][1];
            /* weight slice small enough to stay in L2 (16 MiB), whole tiles of 128 rows */
            int ms_rows = (int)((16u << 20) / ((size_t)k * 2) / 128 * 128);
            if (ms_rows < 128) ms_rows = 128;
            if (ms_rows > m) ms_rows = m;
            int batch = (m + ms_rows - 1) / ms_rows;
            for (size_t j = 0; j < o->n_ns; j++) {
                int n = (int)o->ns[j];
                gemm_ctx g = {handle, A, B, C, m, n, k, 1, m, 0};
                if (time_median(do_gemm, &g, o->reps, &ms, err)) goto fail;
                double f = 2.0 * m * (double)n * k;
                double hbm_rate = f / (ms * 1e-3);
                gemm_ctx gb = {handle, A, B, C, m, n, k, batch, ms_rows, 1};
                if (time_median(do_gemm, &gb, o->reps, &ms, err)) goto fail;
                double l2_rate = 2.0 * (double)batch * ms_rows * (double)n * k / (ms * 1e-3);
                dak_gemm_rate *r = &p->gemm[p->n_gemm++];
                r->m = (uint64_t)m, r->n = (uint64_t)n, r->k = (uint64_t)k;
                r->flops_hbm = hbm_rate;
                r->flops = l2_rate > hbm_rate ? l2_rate : hbm_rate;
                if (hbm_rate > p->peak_flops) p->peak_flops = hbm_rate;
                if (o->verbose)
                    fprintf(stderr,
                            "dak profile: gemm m %d n %d k %d: %.1f TFLOP/s (HBM), %.1f "
                            "TFLOP/s (L2 slice %d rows x %d)\n",
                            m, n, k, hbm_rate / 1e12, l2_rate / 1e12, ms_rows, batch);
            }
        }
        cublasDestroy(handle);
        handle = NULL;
        cudaFree(A), cudaFree(B), cudaFree(C);
        A = B = C = NULL;
    }
    if (p->peak_flops == 0) p->peak_flops = 790e12; /* no shapes asked: the documented figure */
    p->b_h = x->host_read_kernel;
    p->b_g = x->hbm_read;
    p->attn_flops = p->peak_flops;
    p->b_h_memcpy = x->h2d_memcpy;
    snprintf(p->source, sizeof p->source, "measured by dak profile on %.200s", prop.name);
    cudaFree(sink);
    return 0;
fail:
    if (handle) cublasDestroy(handle);
    if (A) cudaFree(A);
    if (B) cudaFree(B);
    if (C) cudaFree(C);
    if (host) cudaFreeHost(host);
    if (hbm) cudaFree(hbm);
    if (sink) cudaFree(sink);
    dak_profile_free(p);
    return -1;
}
