/* Baselines and helpers of the split-GEMM benchmark: cuBLAS (all in HBM),
 * prefetch (+ double-buffered overlap), naive zero-copy, fp32 reference,
 * random fill, L2 flush and the host/HBM bandwidth probe. */
#include <stdlib.h>
#include <string.h>

#include "common/launch.h"
#include "common/ptx.cuh"
#include "dak/gemm.h"
#include "internal.h"

static __device__ __forceinline__ float bf2f(uint16_t x) { return __uint_as_float((uint32_t)x << 16); }

/* ---- cuBLAS and prefetch ------------------------------------------------------ */

extern "C" int dak_base_cublas(dak_gemm_ctx *ctx, const uint16_t *A_dev, const uint16_t *B, float *C,
                               uint32_t M, uint32_t N, uint32_t K, void *stream, cm_err *err)
{
    const float one = 1.f, zero = 0.f;
    if (cublasSetStream(ctx->blas, (cudaStream_t)stream) != CUBLAS_STATUS_SUCCESS)
        return cm_fail(err, "cublas: set stream failed");
    /* column-major view: C (M x N) = op(A) (M x K) * B (K x N), A stored K x M column-major */
    cublasStatus_t s = cublasGemmEx(ctx->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)M, (int)N, (int)K, &one,
                                    A_dev, CUDA_R_16BF, (int)K, B, CUDA_R_16BF, (int)K, &zero, C,
                                    CUDA_R_32F, (int)M, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) return cm_fail(err, "cublasGemmEx(%u x %u x %u) failed: %d", M, N, K, (int)s);
    return 0;
}

extern "C" int dak_base_prefetch(dak_gemm_ctx *ctx, const dak_tiered *A, uint16_t *stage,
                                 const uint16_t *B, float *C, uint32_t N, void *stream, cm_err *err)
{
    size_t hb = (size_t)A->rows_host * A->K * 2u;
    if (A->packed) return cm_fail(err, "prefetch: needs a row-major tiered matrix");
    if (hb) DAK_CU(cudaMemcpyAsync(stage, A->host, hb, cudaMemcpyHostToDevice, (cudaStream_t)stream), err);
    return dak_base_cublas(ctx, stage, B, C, A->M, N, A->K, stream, err);
}

extern "C" int dak_base_prefetch_overlap(dak_gemm_ctx *ctx, const dak_tiered *A, uint16_t *stage[2],
                                         const uint16_t *B, float *C, uint32_t N, uint32_t layers,
                                         void *stream, cm_err *err)
{
    cudaStream_t st = (cudaStream_t)stream, cp = ctx->copy_stream;
    size_t hb = (size_t)A->rows_host * A->K * 2u;
    if (layers == 0) return cm_fail(err, "prefetch overlap: layers must be >= 1");
    if (A->packed) return cm_fail(err, "prefetch overlap: needs a row-major tiered matrix");
    DAK_CU(cudaEventRecord(ctx->ev_start, st), err);
    DAK_CU(cudaStreamWaitEvent(cp, ctx->ev_start, 0), err);
    if (hb) DAK_CU(cudaMemcpyAsync(stage[0], A->host, hb, cudaMemcpyHostToDevice, cp), err);
    DAK_CU(cudaEventRecord(ctx->ev_copy[0], cp), err);
    for (uint32_t i = 0; i < layers; i++) {
        uint32_t b = i & 1u, nb = b ^ 1u;
        if (i + 1 < layers) {
            if (i >= 1) DAK_CU(cudaStreamWaitEvent(cp, ctx->ev_gemm[nb], 0), err); /* stage free */
            if (hb) DAK_CU(cudaMemcpyAsync(stage[nb], A->host, hb, cudaMemcpyHostToDevice, cp), err);
            DAK_CU(cudaEventRecord(ctx->ev_copy[nb], cp), err);
        }
        DAK_CU(cudaStreamWaitEvent(st, ctx->ev_copy[b], 0), err);
        if (dak_base_cublas(ctx, stage[b], B, C, A->M, N, A->K, stream, err)) return -1;
        DAK_CU(cudaEventRecord(ctx->ev_gemm[b], st), err);
    }
    return 0;
}

/* ---- naive zero-copy ------------------------------------------------------------ */

__global__ void k_naive(const uint16_t *Ah, const uint16_t *Ag, uint32_t rows_host, const uint16_t *B,
                        float *C, uint32_t M, uint32_t N, uint32_t K)
{
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t m = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (m >= M) return;
    const uint16_t *a = m < rows_host ? Ah + (size_t)m * K : Ag + (size_t)(m - rows_host) * K;
    for (uint32_t n0 = 0; n0 < N; n0 += 8) {
        float s[8];
#pragma unroll
        for (int j = 0; j < 8; j++) s[j] = 0.f;
        for (uint32_t k = lane * 8u; k < K; k += 256u) {
            uint4 av = *(const uint4 *)(a + k);
            const uint16_t *ae = (const uint16_t *)&av;
            float af[8];
#pragma unroll
            for (int e = 0; e < 8; e++) af[e] = bf2f(ae[e]);
#pragma unroll
            for (int j = 0; j < 8; j++) {
                if (n0 + j >= N) break;
                uint4 bv = *(const uint4 *)(B + (size_t)(n0 + j) * K + k);
                const uint16_t *be = (const uint16_t *)&bv;
#pragma unroll
                for (int e = 0; e < 8; e++) s[j] += af[e] * bf2f(be[e]);
            }
        }
#pragma unroll
        for (int j = 0; j < 8; j++) {
            float v = s[j];
            for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
            if (lane == 0 && n0 + j < N) C[(size_t)(n0 + j) * M + m] = v;
        }
    }
}

extern "C" int dak_base_naive(const dak_tiered *A, const uint16_t *B, float *C, uint32_t N, void *stream,
                              cm_err *err)
{
    if (A->K % 8) return cm_fail(err, "naive: K must be a multiple of 8");
    if (A->packed) return cm_fail(err, "naive: needs a row-major tiered matrix");
    uint32_t blocks = (A->M + 7u) / 8u;
    k_naive<<<blocks, 256, 0, (cudaStream_t)stream>>>(A->host_dev, A->dev, A->rows_host, B, C, A->M, N, A->K);
    DAK_CU(cudaGetLastError(), err);
    return 0;
}

/* ---- fp32 reference (CUDA cores) ------------------------------------------------- */

__global__ void k_ref(const uint16_t *A, const uint16_t *B, float *C, uint32_t M, uint32_t N, uint32_t K)
{
    __shared__ float As[32][65];
    __shared__ float Bs[32][65];
    const uint32_t m0 = blockIdx.x * 64u, n0 = blockIdx.y * 64u;
    const uint32_t tx = threadIdx.x & 15u, ty = threadIdx.x >> 4;
    float acc[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = 0.f;
    for (uint32_t k0 = 0; k0 < K; k0 += 32) {
        for (uint32_t e = threadIdx.x; e < 64u * 32u; e += 256u) {
            uint32_t r = e >> 5, kk = e & 31u;
            As[kk][r] = m0 + r < M ? bf2f(A[(size_t)(m0 + r) * K + k0 + kk]) : 0.f;
            Bs[kk][r] = n0 + r < N ? bf2f(B[(size_t)(n0 + r) * K + k0 + kk]) : 0.f;
        }
        __syncthreads();
        for (int kk = 0; kk < 32; kk++) {
            float a[4], b[4];
            for (int i = 0; i < 4; i++) a[i] = As[kk][ty * 4 + i];
            for (int j = 0; j < 4; j++) b[j] = Bs[kk][tx * 4 + j];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            uint32_t m = m0 + ty * 4 + i, n = n0 + tx * 4 + j;
            if (m < M && n < N) C[(size_t)n * M + m] = acc[i][j];
        }
}

extern "C" int dak_ref_gemm(const uint16_t *A_dev, const uint16_t *B, float *C, uint32_t M, uint32_t N,
                            uint32_t K, void *stream, cm_err *err)
{
    if (K % 32) return cm_fail(err, "ref: K must be a multiple of 32");
    dim3 g((M + 63u) / 64u, (N + 63u) / 64u);
    k_ref<<<g, 256, 0, (cudaStream_t)stream>>>(A_dev, B, C, M, N, K);
    DAK_CU(cudaGetLastError(), err);
    return 0;
}

/* ---- fills and flush --------------------------------------------------------------- */

static __device__ __forceinline__ uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

__global__ void k_fill_bf16(uint16_t *p, size_t n, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint64_t h = mix64(seed * 0x100000001b3ull ^ mix64(i));
        float v = (float)(h >> 40) * (2.0f / 16777216.0f) - 1.0f;
        p[i] = (uint16_t)(__float_as_uint(v) >> 16);
    }
}

__global__ void k_fill_u32(uint32_t *p, size_t n, uint32_t w)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = w;
}

extern "C" int dak_fill_random_bf16(uint16_t *p, size_t n, uint64_t seed, void *stream, cm_err *err)
{
    k_fill_bf16<<<1024, 256, 0, (cudaStream_t)stream>>>(p, n, seed);
    DAK_CU(cudaGetLastError(), err);
    return 0;
}

extern "C" int dak_fill_u32(void *p, size_t n, uint32_t word, void *stream, cm_err *err)
{
    k_fill_u32<<<1024, 256, 0, (cudaStream_t)stream>>>((uint32_t *)p, n, word);
    DAK_CU(cudaGetLastError(), err);
    return 0;
}

__global__ void k_flush(const uint4 *p, size_t n, uint32_t *sink)
{
    uint32_t x = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = __ldcg(p + i);
        x ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (x == 0x9e3779b9u) *sink = x; /* keeps the loads alive */
}

extern "C" int dak_l2_flush(dak_gemm_ctx *ctx, void *stream, cm_err *err)
{
    if (!ctx->flush) {
        ctx->flush_bytes = 256u << 20;
        DAK_CU(cudaMalloc(&ctx->flush, ctx->flush_bytes + 64), err);
        DAK_CU(cudaMemset(ctx->flush, 1, ctx->flush_bytes + 64), err);
    }
    k_flush<<<ctx->sms * 4u, 512, 0, (cudaStream_t)stream>>>((const uint4 *)ctx->flush, ctx->flush_bytes / 16u,
                                                             (uint32_t *)((char *)ctx->flush + ctx->flush_bytes));
    DAK_CU(cudaGetLastError(), err);
    return 0;
}

/* ---- bandwidth probe (bulk copies, data discarded) ---------------------------------- */

#define PROBE_CHUNK 8192u
#define PROBE_SLOTS 24u

__global__ void __launch_bounds__(32, 1)
    k_probe(const uint8_t *hsrc, unsigned long long hbytes, uint32_t hctas, uint32_t W, const uint8_t *gsrc,
            unsigned long long gbytes, uint32_t *done, unsigned long long *gread, unsigned long long *times)
{
    extern __shared__ __align__(1024) uint8_t buf[]; /* PROBE_SLOTS * PROBE_CHUNK */
    __shared__ __align__(8) uint64_t bars[PROBE_SLOTS];
    if (threadIdx.x != 0) return;
    for (uint32_t s = 0; s < PROBE_SLOTS; s++) ptx_mbar_init(ptx_smem(&bars[s]), 1);
    ptx_fence_mbar_init();
    const uint32_t host = blockIdx.x < hctas;
    const uint32_t w = host ? W : PROBE_SLOTS;
    const uint32_t nct = host ? hctas : gridDim.x - hctas;
    const uint32_t me = host ? blockIdx.x : blockIdx.x - hctas;
    const uint8_t *src = host ? hsrc : gsrc;
    unsigned long long total = (host ? hbytes : gbytes) / PROBE_CHUNK;
    uint64_t t0 = ptx_globaltimer();
    unsigned long long it = 0, mine = 0;
    for (;;) {
        /* chunks me, me + nct, ... of the buffer; the HBM side cycles until the host side is done */
        unsigned long long pass = 0;
        for (unsigned long long ch = me; ch < total; ch += nct, it++) {
            uint32_t s = (uint32_t)(it % w);
            if (it >= w) {
                unsigned long long j = it - w;
                ptx_mbar_wait(ptx_smem(&bars[s]), (uint32_t)((j / w) & 1u));
            }
            ptx_mbar_arrive_expect_tx(ptx_smem(&bars[s]), PROBE_CHUNK);
            ptx_bulk_g2s(ptx_smem(buf + s * PROBE_CHUNK), src + ch * PROBE_CHUNK, PROBE_CHUNK, ptx_smem(&bars[s]));
            mine += PROBE_CHUNK;
            pass++;
        }
        if (host || hctas == 0 || pass == 0) break;
        if (*(volatile uint32_t *)done >= hctas) break;
    }
    for (unsigned long long j = it > w ? it - w : 0; j < it; j++)
        ptx_mbar_wait(ptx_smem(&bars[j % w]), (uint32_t)((j / w) & 1u));
    uint64_t t1 = ptx_globaltimer();
    if (host) {
        __threadfence();
        atomicAdd(done, 1u);
    } else {
        atomicAdd(gread, mine);
    }
    times[2 * blockIdx.x] = t0;
    times[2 * blockIdx.x + 1] = t1;
}

extern "C" int dak_probe_bw(dak_gemm_ctx *ctx, const void *host_dev, size_t host_bytes, uint32_t host_ctas,
                            uint32_t window, const void *hbm, size_t hbm_bytes, uint32_t hbm_ctas,
                            double *host_gbs, double *hbm_gbs, cm_err *err)
{
    uint32_t grid = host_ctas + hbm_ctas;
    if (grid == 0 || grid > ctx->sms)
        return cm_fail(err, "probe: %u + %u CTAs must be between 1 and %u", host_ctas, hbm_ctas, ctx->sms);
    if (host_ctas && (window < 1 || window > PROBE_SLOTS))
        return cm_fail(err, "probe: window %u outside 1..%u", window, PROBE_SLOTS);
    if ((host_ctas && host_bytes < (size_t)PROBE_CHUNK * host_ctas) || (hbm_ctas && hbm_bytes < (size_t)PROBE_CHUNK * hbm_ctas))
        return cm_fail(err, "probe: buffers too small for the CTAs");
    uint32_t *done;
    unsigned long long *gread, *times;
    DAK_CU(cudaMalloc((void **)&done, 4), err);
    DAK_CU(cudaMalloc((void **)&gread, 8), err);
    DAK_CU(cudaMalloc((void **)&times, 16u * grid), err);
    DAK_CU(cudaMemset(done, 0, 4), err);
    DAK_CU(cudaMemset(gread, 0, 8), err);
    size_t smem = (size_t)PROBE_SLOTS * PROBE_CHUNK;
    DAK_CU(cudaFuncSetAttribute(k_probe, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem), err);
    k_probe<<<grid, 32, smem>>>((const uint8_t *)host_dev, host_bytes, host_ctas, window ? window : 1,
                          (const uint8_t *)hbm, hbm_bytes, done, gread, times);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) return cm_fail(err, "probe kernel failed: %s", cudaGetErrorString(e));
    unsigned long long *t = (unsigned long long *)cm_malloc(16u * grid), g = 0;
    DAK_CU(cudaMemcpy(t, times, 16u * grid, cudaMemcpyDeviceToHost), err);
    DAK_CU(cudaMemcpy(&g, gread, 8, cudaMemcpyDeviceToHost), err);
    unsigned long long h0 = ~0ull, h1 = 0, g0 = ~0ull, g1 = 0;
    for (uint32_t b = 0; b < grid; b++) {
        if (b < host_ctas) {
            if (t[2 * b] < h0) h0 = t[2 * b];
            if (t[2 * b + 1] > h1) h1 = t[2 * b + 1];
        } else {
            if (t[2 * b] < g0) g0 = t[2 * b];
            if (t[2 * b + 1] > g1) g1 = t[2 * b + 1];
        }
    }
    size_t hdone = (host_bytes / PROBE_CHUNK) * PROBE_CHUNK;
    *host_gbs = host_ctas && h1 > h0 ? (double)hdone / (double)(h1 - h0) : 0.0;
    *hbm_gbs = hbm_ctas && g1 > g0 ? (double)g / (double)(g1 - g0) : 0.0;
    free(t);
    cudaFree(done);
    cudaFree(gread);
    cudaFree(times);
    return 0;
}

/* HBM-only probe with a chosen copy size and assignment (diagnostic for the split GEMM).
 * times: per CTA {t0, t1, %smid}.  Contiguous: CTA j takes range (j + rot) mod grid.  ranges (or
 * NULL): chunk range [ranges[2 s], ranges[2 s + 1]) of the CTA on SM s, instead of its even share
 * by blockIdx.  cwarps 0: one thread issues the copies and waits for each slot's copy itself before reusing the slot;
 * cwarps 1..PROBE_CWARPS: the split kernel's ring hand-over, without its math: cwarps consumer warps wait for each
 * slot's full barrier (every lane, or lane 0 then __syncwarp with lane0) and arrive on its empty barrier, which the
 * producer waits for before reusing the slot. */
#define PROBE_CWARPS 8u
__global__ void __launch_bounds__(32u * (1u + PROBE_CWARPS), 1)
    k_probe_hbm(const uint8_t *src, unsigned long long bytes, uint32_t chunk, uint32_t w, int contiguous,
                uint32_t rot, const unsigned long long *ranges, uint32_t nranges, uint32_t cwarps, int lane0,
                unsigned long long *times)
{
    extern __shared__ __align__(1024) uint8_t buf[];
    __shared__ __align__(8) uint64_t bars[PROBE_SLOTS], empty[PROBE_SLOTS];
    const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
    if (threadIdx.x == 0) {
        for (uint32_t s = 0; s < w; s++) {
            ptx_mbar_init(ptx_smem(&bars[s]), 1);
            ptx_mbar_init(ptx_smem(&empty[s]), cwarps ? cwarps : 1u);
        }
        ptx_fence_mbar_init();
    }
    __syncthreads();
    const unsigned long long total = bytes / chunk;
    const uint32_t sm = ptx_smid();
    unsigned long long first, step, end;
    if (ranges) {
        first = sm < nranges ? ranges[2 * sm] : 0, end = sm < nranges ? ranges[2 * sm + 1] : 0;
        step = 1;
    } else if (contiguous) {
        const unsigned long long b = (blockIdx.x + rot) % gridDim.x; /* range b */
        first = total * b / gridDim.x;
        end = total * (b + 1ull) / gridDim.x;
        step = 1;
    } else {
        first = blockIdx.x;
        end = total;
        step = gridDim.x;
    }
    if (warp == 0 && lane == 0) {
        const uint64_t t0 = ptx_globaltimer();
        unsigned long long it = 0;
        for (unsigned long long ch = first; ch < end; ch += step, it++) {
            uint32_t s = (uint32_t)(it % w);
            if (it >= w) { /* the slot's previous chunk: landed (cwarps 0) or released by the consumers */
                const unsigned long long j = it - w;
                ptx_mbar_wait(ptx_smem(cwarps ? &empty[s] : &bars[s]), (uint32_t)((j / w) & 1u));
            }
            ptx_mbar_arrive_expect_tx(ptx_smem(&bars[s]), chunk);
            ptx_bulk_g2s(ptx_smem(buf + (size_t)s * chunk), src + ch * chunk, chunk, ptx_smem(&bars[s]));
        }
        times[3 * blockIdx.x] = t0;
        if (cwarps) return;
        for (unsigned long long j = it > w ? it - w : 0; j < it; j++)
            ptx_mbar_wait(ptx_smem(&bars[j % w]), (uint32_t)((j / w) & 1u));
        times[3 * blockIdx.x + 1] = ptx_globaltimer();
        times[3 * blockIdx.x + 2] = sm;
    } else if (warp >= 1u && warp <= cwarps) {
        unsigned long long it = 0;
        for (unsigned long long ch = first; ch < end; ch += step, it++) {
            const uint32_t s = (uint32_t)(it % w), ph = (uint32_t)((it / w) & 1u);
            if (!lane0 || lane == 0) ptx_mbar_wait(ptx_smem(&bars[s]), ph);
            __syncwarp();
            if (lane == 0) ptx_mbar_arrive(ptx_smem(&empty[s]));
        }
        if (warp == 1u && lane == 0) {
            times[3 * blockIdx.x + 1] = ptx_globaltimer();
            times[3 * blockIdx.x + 2] = sm;
        }
    }
}

/* Runs k_probe_hbm once; t: 3 words per CTA (host memory).  Returns the GB/s over the span. */
static int probe_hbm_run(dak_gemm_ctx *ctx, const void *hbm, size_t bytes, uint32_t ctas, uint32_t chunk,
                         int contiguous, uint32_t rot, const unsigned long long *ranges_dev, uint32_t nranges,
                         uint32_t cwarps, int lane0, unsigned long long *t, double *gbs, cm_err *err)
{
    if (cwarps > PROBE_CWARPS) return cm_fail(err, "probe: %u consumer warps outside 0..%u", cwarps, PROBE_CWARPS);
    if (chunk != 8192 && chunk != 16384 && chunk != 32768)
        return cm_fail(err, "probe: chunk %u must be 8192, 16384 or 32768", chunk);
    if (ctas == 0 || ctas > ctx->sms) return cm_fail(err, "probe: %u CTAs outside 1..%u", ctas, ctx->sms);
    if (bytes < (size_t)chunk * ctas) return cm_fail(err, "probe: buffer too small for the CTAs");
    uint32_t w = (PROBE_SLOTS * PROBE_CHUNK) / chunk;
    size_t smem = (size_t)w * chunk;
    unsigned long long *times;
    DAK_CU(cudaMalloc((void **)&times, 24u * ctas), err);
    DAK_CU(cudaFuncSetAttribute(k_probe_hbm, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem), err);
    k_probe_hbm<<<ctas, 32u * (1u + cwarps), smem>>>((const uint8_t *)hbm, bytes, chunk, w, contiguous, rot, ranges_dev,
                                                     nranges, cwarps, lane0, times);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        cudaFree(times);
        return cm_fail(err, "probe kernel failed: %s", cudaGetErrorString(e));
    }
    e = cudaMemcpy(t, times, 24u * ctas, cudaMemcpyDeviceToHost);
    cudaFree(times);
    if (e != cudaSuccess) return cm_fail(err, "probe: reading the stamps: %s", cudaGetErrorString(e));
    unsigned long long t0 = ~0ull, t1 = 0;
    for (uint32_t b = 0; b < ctas; b++) {
        if (t[3 * b] < t0) t0 = t[3 * b];
        if (t[3 * b + 1] > t1) t1 = t[3 * b + 1];
    }
    size_t done = (bytes / chunk) * chunk;
    *gbs = t1 > t0 ? (double)done / (double)(t1 - t0) : 0.0;
    return 0;
}

extern "C" int dak_probe_hbm(dak_gemm_ctx *ctx, const void *hbm, size_t bytes, uint32_t ctas, uint32_t chunk,
                             int contiguous, double *gbs, cm_err *err)
{
    unsigned long long *t = (unsigned long long *)cm_malloc(24u * (ctas ? ctas : 1u));
    int rc = probe_hbm_run(ctx, hbm, bytes, ctas, chunk, contiguous, 0, NULL, 0, 0, 0, t, gbs, err);
    free(t);
    return rc;
}

extern "C" int dak_probe_handover(dak_gemm_ctx *ctx, const void *hbm, size_t bytes, uint32_t ctas, uint32_t chunk,
                                  uint32_t cwarps, int lane0, double *gbs, cm_err *err)
{
    unsigned long long *t = (unsigned long long *)cm_malloc(24u * (ctas ? ctas : 1u));
    int rc = probe_hbm_run(ctx, hbm, bytes, ctas, chunk, 1, 0, NULL, 0, cwarps, lane0, t, gbs, err);
    free(t);
    return rc;
}

extern "C" int dak_probe_hbm_sms(dak_gemm_ctx *ctx, const void *hbm, size_t bytes, const double *weights,
                                 uint32_t nsm, uint32_t rotate, uint32_t *smid, double *us, double *gbs, cm_err *err)
{
    const uint32_t chunk = 32768u, ctas = ctx->sms;
    unsigned long long *rd = NULL;
    if (weights) {
        /* chunk ranges by %smid in proportion to the weights (cumulative, rounded) */
        double sum = 0;
        for (uint32_t s = 0; s < nsm; s++) {
            if (!(weights[s] >= 0) || !isfinite(weights[s]))
                return cm_fail(err, "probe: weight of SM %u is %g, expected a finite value >= 0", s, weights[s]);
            sum += weights[s];
        }
        if (!(sum > 0)) return cm_fail(err, "probe: the %u SM weights sum to 0", nsm);
        const unsigned long long total = bytes / chunk;
        unsigned long long *r = (unsigned long long *)cm_malloc(16u * nsm);
        double acc = 0;
        for (uint32_t s = 0; s < nsm; s++) {
            r[2 * s] = (unsigned long long)(acc / sum * (double)total + 0.5);
            acc += weights[s];
            r[2 * s + 1] = s + 1 == nsm ? total : (unsigned long long)(acc / sum * (double)total + 0.5);
        }
        cudaError_t e = cudaMalloc((void **)&rd, 16u * nsm);
        if (e == cudaSuccess) e = cudaMemcpy(rd, r, 16u * nsm, cudaMemcpyHostToDevice);
        free(r);
        if (e != cudaSuccess) {
            cudaFree(rd);
            return cm_fail(err, "probe: SM ranges: %s", cudaGetErrorString(e));
        }
    }
    unsigned long long *t = (unsigned long long *)cm_malloc(24u * ctas);
    int rc = probe_hbm_run(ctx, hbm, bytes, ctas, chunk, 1, rotate, rd, weights ? nsm : 0, 0, 0, t, gbs, err);
    if (!rc)
        for (uint32_t b = 0; b < ctas; b++) {
            smid[b] = (uint32_t)t[3 * b + 2];
            us[b] = (double)(t[3 * b + 1] - t[3 * b]) / 1e3;
        }
    free(t);
    cudaFree(rd);
    return rc;
}

/* ---- the streaming floor (diagnostic, issue #7's r = 0 target) ---------------------------
 * What a kernel that does nothing but stream A into shared memory costs a launch: every CTA reads one contiguous
 * range with 32 KiB bulk copies, 6 in flight (192 KiB, the probe's fastest pattern: 4.7 TB/s on 132 SMs), the data
 * discarded.  With pdl it is launched as a programmatic dependent, as the split GEMM under PDL is: it triggers its
 * dependents at entry, issues its first ring before griddepcontrol.wait and the rest after, so that in a chain it
 * pays the dependency and nothing of a GEMM's own (no math, no fix-up, no epilogue).  The options add a GEMM's costs
 * one at a time (dak_stream_floor_opts): its B rows after the wait, a prologue before the first copy, a tail after the
 * last one landed. */
#define FLOOR_CHUNK DAK_STREAM_CHUNK
#define FLOOR_SLOTS 6u

static __device__ __forceinline__ void floor_spin(uint32_t ns)
{
    const unsigned long long t0 = ptx_globaltimer();
    while (ptx_globaltimer() - t0 < ns) {
    }
}

__global__ void __launch_bounds__(32, 1)
    k_stream_floor(const uint8_t *src, unsigned long long bytes, const uint8_t *b, dak_stream_floor_opts o)
{
    extern __shared__ __align__(1024) uint8_t buf[]; /* FLOOR_SLOTS x FLOOR_CHUNK, then the B rows */
    __shared__ __align__(8) uint64_t bars[FLOOR_SLOTS + 1u];
    if (threadIdx.x != 0) return;
    if (o.pdl) ptx_griddep_launch_dependents();
    for (uint32_t s = 0; s <= FLOOR_SLOTS; s++) ptx_mbar_init(ptx_smem(&bars[s]), 1);
    ptx_fence_mbar_init();
    if (o.pre_ns) floor_spin(o.pre_ns);
    const unsigned long long total = bytes / FLOOR_CHUNK;
    const unsigned long long first = total * blockIdx.x / gridDim.x, end = total * (blockIdx.x + 1ull) / gridDim.x;
    uint8_t *bdst = buf + FLOOR_SLOTS * FLOOR_CHUNK;
    unsigned long long it = 0;
    bool waited = false;
    for (unsigned long long ch = first;; ch++, it++) {
        if (!waited && (it == FLOOR_SLOTS || ch >= end)) { /* the first ring went out before the wait */
            if (o.pdl) ptx_griddep_wait();
            if (o.b_copy) { /* no more A until the B rows landed: a GEMM's slot frees once its B is in and used */
                ptx_mbar_arrive_expect_tx(ptx_smem(&bars[FLOOR_SLOTS]), DAK_STREAM_B_BYTES);
                ptx_bulk_g2s(ptx_smem(bdst), b, DAK_STREAM_B_BYTES, ptx_smem(&bars[FLOOR_SLOTS]));
                ptx_mbar_wait(ptx_smem(&bars[FLOOR_SLOTS]), 0);
            }
            waited = true;
        }
        if (ch >= end) break;
        const uint32_t s = (uint32_t)(it % FLOOR_SLOTS);
        if (it >= FLOOR_SLOTS) ptx_mbar_wait(ptx_smem(&bars[s]), (uint32_t)(((it - FLOOR_SLOTS) / FLOOR_SLOTS) & 1u));
        ptx_mbar_arrive_expect_tx(ptx_smem(&bars[s]), FLOOR_CHUNK);
        ptx_bulk_g2s(ptx_smem(buf + s * FLOOR_CHUNK), src + ch * FLOOR_CHUNK, FLOOR_CHUNK, ptx_smem(&bars[s]));
    }
    for (unsigned long long j = it > FLOOR_SLOTS ? it - FLOOR_SLOTS : 0; j < it; j++)
        ptx_mbar_wait(ptx_smem(&bars[j % FLOOR_SLOTS]), (uint32_t)((j / FLOOR_SLOTS) & 1u));
    if (o.post_ns) floor_spin(o.post_ns);
}

extern "C" int dak_diag_stream(dak_gemm_ctx *ctx, const void *a, size_t bytes, const void *b,
                               const dak_stream_floor_opts *o, void *stream, cm_err *err)
{
    if (o->ctas == 0 || o->ctas > ctx->sms)
        return cm_fail(err, "stream floor: %u CTAs outside 1..%u", o->ctas, ctx->sms);
    if (o->b_copy && !b) return cm_fail(err, "stream floor: b_copy without B rows");
    if (!dak_stream_floor_fits(bytes, o))
        return cm_fail(err,
                       "stream floor: %zu bytes of A for %u CTAs (expected at least %u a CTA) and %zu of B with b_copy %d "
                       "(expected at least %u)",
                       bytes, o->ctas, FLOOR_CHUNK, o->b_bytes, o->b_copy, DAK_STREAM_B_BYTES);
    if (o->pre_ns > 1000000u || o->post_ns > 1000000u)
        return cm_fail(err, "stream floor: delays %u / %u ns, expected at most 1 ms", o->pre_ns, o->post_ns);
    const size_t smem = (size_t)FLOOR_SLOTS * FLOOR_CHUNK + DAK_STREAM_B_BYTES;
    static int attr_set;
    if (!attr_set) {
        DAK_CU(cudaFuncSetAttribute(k_stream_floor, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem), err);
        attr_set = 1;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(o->ctas, 1, 1);
    cfg.blockDim = dim3(32, 1, 1);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = (cudaStream_t)stream;
    cudaLaunchAttribute at[1];
    if (o->pdl) at[0] = cm_attr_pdl();
    cfg.attrs = at;
    cfg.numAttrs = o->pdl ? 1u : 0u;
    const uint8_t *src = (const uint8_t *)a, *bp = (const uint8_t *)b;
    const unsigned long long nbytes = bytes;
    dak_stream_floor_opts ko = *o;
    void *args[4] = {&src, (void *)&nbytes, &bp, &ko};
    DAK_CU(cudaLaunchKernelExC(&cfg, (const void *)k_stream_floor, args), err);
    return 0;
}
