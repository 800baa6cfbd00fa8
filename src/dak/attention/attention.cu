/* dak split attention for decoding (seed 003, SplitK_FlashAttn): the tiered KV cache, the
 * persistent warp-specialised kernel, the split combine and their host side.  CUDA C, C-style,
 * behind include/dak/attention.h.
 *
 * CTA (32 + 128 groups threads): warp 0 is the producer (lane 0 issues every copy), then one or two
 * consumer groups of four warps; group k reads the slots of the copies it with it mod groups = k (two
 * groups: alternate slots, so two warps a sub-partition hide each other's shuffle and load latency;
 * run 1 on the H200 had one group at 66-69 % of B_g at r = 0).
 * Ring slot i (32 KiB): the K chunk (64 tokens x 256 B) then the V chunk; full[i] completes when
 * both copies have landed (one arrive.expect_tx of their bytes by the producer), empty[i] when
 * the four warps of the group reading it are done (one arrive each).  Copy `it` fills slot
 * it mod S for the n-th time, n = it / S; its consumers wait full with parity n & 1 and the
 * producer, before fill n >= 1, waits empty[i] with parity (n - 1) & 1.  A host CTA also waits,
 * before copy it >= W (its window), until copy it - W has landed (full, parity of its fill), so
 * at most W slots (2 W bulk copies) are in flight; with W < S that slot's next fill is later
 * than `it`, so the parity is unambiguous.
 *
 * Consumer warp w of a group reads tokens [16 w, 16 w + 16) of its slots.  Lane i owns dims 4 i .. 4 i + 3
 * of q, K, V and its accumulators (one 8-byte load a 256-byte row: conflict-free).  Per query
 * head of the group: 16 partial dot products (4 dims each), a transpose-style butterfly (xor 16,
 * 8, 4, 2 keeping half of the tokens each step, then xor 1) leaves lanes 2t and 2t + 1 with token
 * t's full score in 16 shuffles; scores are in log2 units (q pre-multiplied by scale * log2 e),
 * so exp2f gives the softmax weights.  Running max m (warp-uniform), running sum l (each lane
 * adds the weights of its even-lane tokens; summed over the warp at the unit's end), acc[4]
 * per lane.  At a unit's end all consumer warps' states merge through shared memory: a whole-sequence
 * unit writes bf16 out = o / l, a split unit writes (m, l, o[128]) fp32 into the workspace and
 * k_combine (launched after, same stream) merges the splits of each (entry, head). */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cuda_check.h"
#include "common/ptx.cuh"
#include "dak/attention.h"

#define D DAK_ATTN_D
#define NCW DAK_ATTN_CONSUMER_WARPS /* consumer warps: two groups of four */
#define GW 4u           /* warps a group: one group reads a slot */
#define TPW 16u         /* tokens per consumer warp per slot */
#define CHUNK_BYTES (DAK_ATTN_CHUNK * D * 2u) /* 16 KiB: one K or V chunk */
#define FULL 0xffffffffu
#define LOG2E 1.4426950408889634f

typedef struct {
    const uint16_t *kh, *vh; /* host tier as the device maps it */
    const uint16_t *kg, *vg; /* HBM tier */
    const uint16_t *q;
    uint16_t *out;
    float *ws; /* split partials: o [units][g][D], then (m, l) [units][g][2] */
    uint32_t batch, batch_host, heads, kv_heads, group, len, max_len, chunks;
    uint32_t host_ctas, hbm_ctas, host_splits, hbm_splits, host_units, hbm_units, window, stages;
    uint32_t groups; /* consumer groups of GW warps (1 or 2), taking ring copies it = group mod groups */
    uint32_t nomath; /* diagnostic: consumers wait for and release each slot but skip the math (out is garbage) */
    float qscale; /* scale * log2(e) */
} attn_params;

struct dak_attn_ctx {
    uint32_t sms;
    size_t smem_optin;
    float *ws;
    size_t ws_floats;
};

static __device__ __forceinline__ float bf_lo(uint32_t w) { return __uint_as_float(w << 16); }
static __device__ __forceinline__ float bf_hi(uint32_t w) { return __uint_as_float(w & 0xffff0000u); }

/* ---- the producer: one thread ------------------------------------------------------------ */
static __device__ void produce(const attn_params *P, int host, uint32_t u0, uint32_t u1, uint8_t *ring,
                               uint64_t *full, uint64_t *empty)
{
    const uint32_t S = P->stages, W = host ? P->window : S;
    const uint32_t splits = host ? P->host_splits : P->hbm_splits, first = host ? 0u : P->batch_host;
    const uint16_t *K = host ? P->kh : P->kg, *V = host ? P->vh : P->vg;
    uint32_t it = 0;
    for (uint32_t u = u0; u < u1; u++) {
        uint32_t en, kvh, sp, c0, c1;
        dak_attn_unit(u, first, P->kv_heads, splits, P->chunks, &en, &kvh, &sp, &c0, &c1);
        const size_t base = ((size_t)(en - first) * P->kv_heads + kvh) * P->max_len * D;
        for (uint32_t c = c0; c < c1; c++, it++) {
            const uint32_t s = it % S, n = it / S;
            if (n) ptx_mbar_wait(ptx_smem(&empty[s]), (n - 1u) & 1u);
            if (W < S && it >= W) {
                const uint32_t j = it - W;
                ptx_mbar_wait(ptx_smem(&full[j % S]), (j / S) & 1u);
            }
            const uint32_t left = P->len - c * DAK_ATTN_CHUNK;
            const uint32_t bytes = (left < DAK_ATTN_CHUNK ? left : DAK_ATTN_CHUNK) * D * 2u;
            const uint32_t bar = ptx_smem(&full[s]);
            uint8_t *slot = ring + (size_t)s * DAK_ATTN_SLOT_BYTES;
            ptx_mbar_arrive_expect_tx(bar, 2u * bytes);
            ptx_bulk_g2s(ptx_smem(slot), K + base + (size_t)c * DAK_ATTN_CHUNK * D, bytes, bar);
            ptx_bulk_g2s(ptx_smem(slot + CHUNK_BYTES), V + base + (size_t)c * DAK_ATTN_CHUNK * D, bytes, bar);
        }
    }
}

/* ---- the consumers: G query heads a kv head (compile-time after inlining; heads >= g idle) ---- */
static __device__ __forceinline__ void consume(const attn_params *P, int host, uint32_t u0, uint32_t u1,
                                               const uint8_t *ring, uint64_t *full, uint64_t *empty, float *merge,
                                               const uint32_t G)
{
    const uint32_t S = P->stages, g = P->group;
    const uint32_t splits = host ? P->host_splits : P->hbm_splits, first = host ? 0u : P->batch_host;
    const uint32_t lane = threadIdx.x & 31u, cw = (threadIdx.x >> 5) - 1u, ct = threadIdx.x - 32u;
    const uint32_t ng = P->groups, nw = GW * ng; /* consumer groups and warps */
    const uint32_t grp = cw / GW, wq = cw % GW;   /* group grp reads the slots of copies it = grp mod ng */
    float *mo = merge;                                      /* [NCW][8][D] */
    float *mml = merge + NCW * DAK_ATTN_MAX_GROUP * D;      /* [NCW][8][2] */
    const uint32_t b4 = (lane >> 4) & 1u, b3 = (lane >> 3) & 1u, b2 = (lane >> 2) & 1u, b1 = (lane >> 1) & 1u;
    uint32_t it = 0;
    for (uint32_t u = u0; u < u1; u++) {
        uint32_t en, kvh, sp, c0, c1;
        dak_attn_unit(u, first, P->kv_heads, splits, P->chunks, &en, &kvh, &sp, &c0, &c1);
        /* q of the group's heads, scaled, in this warp's part of the merge area (free until the unit's end;
         * each lane reads back only what it wrote): registers stay for the accumulators */
        float *qs = mo + (size_t)cw * DAK_ATTN_MAX_GROUP * D + 4u * lane;
        float acc[DAK_ATTN_MAX_GROUP][4], m[DAK_ATTN_MAX_GROUP], l[DAK_ATTN_MAX_GROUP];
#pragma unroll
        for (uint32_t h = 0; h < G; h++) {
            uint2 qq = make_uint2(0u, 0u);
            if (h < g) qq = *(const uint2 *)(P->q + ((size_t)en * P->heads + kvh * g + h) * D + 4u * lane);
            *(float4 *)(qs + h * D) = make_float4(bf_lo(qq.x) * P->qscale, bf_hi(qq.x) * P->qscale,
                                                  bf_lo(qq.y) * P->qscale, bf_hi(qq.y) * P->qscale);
            acc[h][0] = acc[h][1] = acc[h][2] = acc[h][3] = 0.f;
            m[h] = -INFINITY, l[h] = 0.f;
        }
        for (uint32_t c = c0; c < c1; c++, it++) {
            if (it % ng != grp) continue; /* another group's slot */
            const uint32_t s = it % S;
            ptx_mbar_wait(ptx_smem(&full[s]), (it / S) & 1u);
            const uint32_t left = P->len - c * DAK_ATTN_CHUNK;
            const uint32_t valid = left < DAK_ATTN_CHUNK ? left : DAK_ATTN_CHUNK;
            const int nv = (int)valid - (int)(TPW * wq); /* this warp's valid tokens (may be <= 0) */
            if (nv > 0 && !P->nomath) {
                const uint8_t *kb = ring + (size_t)s * DAK_ATTN_SLOT_BYTES + (size_t)TPW * wq * 256u + 8u * lane;
                const uint8_t *vb = kb + CHUNK_BYTES;
                float pw[DAK_ATTN_MAX_GROUP];
#pragma unroll
                for (uint32_t h = 0; h < G; h++) {
                    const float4 qh = *(const float4 *)(qs + h * D);
                    float x[TPW];
#pragma unroll
                    for (uint32_t t = 0; t < TPW; t++) {
                        const uint2 kk = *(const uint2 *)(kb + t * 256u);
                        x[t] = qh.x * bf_lo(kk.x) + qh.y * bf_hi(kk.x) + qh.z * bf_lo(kk.y) + qh.w * bf_hi(kk.y);
                    }
                    /* butterfly: keep tokens [8 b4, 8 b4 + 8), then [4 b3 ..), [2 b2 ..), b1 */
#pragma unroll
                    for (uint32_t k = 0; k < 8; k++) {
                        float send = b4 ? x[k] : x[k + 8], keep = b4 ? x[k + 8] : x[k];
                        x[k] = keep + __shfl_xor_sync(FULL, send, 16);
                    }
#pragma unroll
                    for (uint32_t k = 0; k < 4; k++) {
                        float send = b3 ? x[k] : x[k + 4], keep = b3 ? x[k + 4] : x[k];
                        x[k] = keep + __shfl_xor_sync(FULL, send, 8);
                    }
#pragma unroll
                    for (uint32_t k = 0; k < 2; k++) {
                        float send = b2 ? x[k] : x[k + 2], keep = b2 ? x[k + 2] : x[k];
                        x[k] = keep + __shfl_xor_sync(FULL, send, 4);
                    }
                    {
                        float send = b1 ? x[0] : x[1], keep = b1 ? x[1] : x[0];
                        x[0] = keep + __shfl_xor_sync(FULL, send, 2);
                    }
                    x[0] += __shfl_xor_sync(FULL, x[0], 1);
                    /* lanes 2t, 2t + 1: token t = lane >> 1 */
                    const float sc = (int)(lane >> 1) < nv ? x[0] : -INFINITY;
                    float cm = sc;
                    cm = fmaxf(cm, __shfl_xor_sync(FULL, cm, 2));
                    cm = fmaxf(cm, __shfl_xor_sync(FULL, cm, 4));
                    cm = fmaxf(cm, __shfl_xor_sync(FULL, cm, 8));
                    cm = fmaxf(cm, __shfl_xor_sync(FULL, cm, 16));
                    const float mn = fmaxf(m[h], cm); /* finite: token 0 of this warp is valid */
                    const float alpha = exp2f(m[h] - mn);
                    const float pv = exp2f(sc - mn);
                    l[h] = l[h] * alpha + ((lane & 1u) ? 0.f : pv);
                    acc[h][0] *= alpha, acc[h][1] *= alpha, acc[h][2] *= alpha, acc[h][3] *= alpha;
                    m[h] = mn;
                    pw[h] = pv;
                }
#pragma unroll
                for (uint32_t t = 0; t < TPW; t++) {
                    if ((int)t < nv) {
                        const uint2 vv = *(const uint2 *)(vb + t * 256u);
                        const float v0 = bf_lo(vv.x), v1 = bf_hi(vv.x), v2 = bf_lo(vv.y), v3 = bf_hi(vv.y);
#pragma unroll
                        for (uint32_t h = 0; h < G; h++) {
                            const float pt = __shfl_sync(FULL, pw[h], 2u * t);
                            acc[h][0] += pt * v0, acc[h][1] += pt * v1, acc[h][2] += pt * v2, acc[h][3] += pt * v3;
                        }
                    }
                }
            }
            __syncwarp();
            if (lane == 0) ptx_mbar_arrive(ptx_smem(&empty[s]));
        }
        /* the unit's end: merge the consumer warps */
#pragma unroll
        for (uint32_t h = 0; h < G; h++) {
            float ls = l[h];
            ls += __shfl_xor_sync(FULL, ls, 16);
            ls += __shfl_xor_sync(FULL, ls, 8);
            ls += __shfl_xor_sync(FULL, ls, 4);
            ls += __shfl_xor_sync(FULL, ls, 2);
            ls += __shfl_xor_sync(FULL, ls, 1);
            *(float4 *)(mo + ((size_t)cw * DAK_ATTN_MAX_GROUP + h) * D + 4u * lane) =
                make_float4(acc[h][0], acc[h][1], acc[h][2], acc[h][3]);
            if (lane == 0) {
                mml[(cw * DAK_ATTN_MAX_GROUP + h) * 2u] = m[h];
                mml[(cw * DAK_ATTN_MAX_GROUP + h) * 2u + 1u] = ls;
            }
        }
        ptx_bar_sync(1, nw * 32u);
        const uint32_t gu = (host ? 0u : P->host_units) + u; /* the unit's index in the workspace */
        for (uint32_t idx = ct; idx < g * D; idx += nw * 32u) {
            const uint32_t h = idx / D, d = idx % D;
            float M = -INFINITY;
            for (uint32_t w = 0; w < nw; w++) M = fmaxf(M, mml[(w * DAK_ATTN_MAX_GROUP + h) * 2u]);
            float L = 0.f, O = 0.f;
            for (uint32_t w = 0; w < nw; w++) {
                const float f = exp2f(mml[(w * DAK_ATTN_MAX_GROUP + h) * 2u] - M);
                L += mml[(w * DAK_ATTN_MAX_GROUP + h) * 2u + 1u] * f;
                O += mo[((size_t)w * DAK_ATTN_MAX_GROUP + h) * D + d] * f;
            }
            if (splits == 1) {
                P->out[((size_t)en * P->heads + kvh * g + h) * D + d] = dak_f32_to_bf16(O / L);
            } else {
                const size_t pi = (size_t)gu * g + h;
                P->ws[pi * D + d] = O;
                if (d == 0) {
                    const size_t ml0 = ((size_t)P->host_units + P->hbm_units) * g * D;
                    P->ws[ml0 + 2u * pi] = M;
                    P->ws[ml0 + 2u * pi + 1u] = L;
                }
            }
        }
        ptx_bar_sync(1, nw * 32u); /* the merge area is free again */
    }
}

static __device__ __forceinline__ void attn_body(const attn_params *P, const uint32_t G)
{
    extern __shared__ __align__(1024) uint8_t smem[];
    const uint32_t S = P->stages;
    uint8_t *ring = smem;
    float *merge = (float *)(smem + (size_t)S * DAK_ATTN_SLOT_BYTES);
    uint64_t *full = (uint64_t *)(smem + (size_t)S * DAK_ATTN_SLOT_BYTES + DAK_ATTN_MERGE_BYTES);
    uint64_t *empty = full + DAK_ATTN_MAX_STAGES;
    /* the next launch may start now: a programmatic dependent (the engine's next GEMM) reads nothing of
     * ours before its griddepcontrol.wait, which waits for this grid to complete */
    ptx_griddep_launch_dependents();
    const int host = blockIdx.x < P->host_ctas;
    const uint32_t j = host ? blockIdx.x : blockIdx.x - P->host_ctas;
    const uint32_t nct = host ? P->host_ctas : P->hbm_ctas;
    const uint32_t units = host ? P->host_units : P->hbm_units;
    uint32_t u0, u1;
    dak_attn_range(units, nct, j, &u0, &u1);
    if (threadIdx.x == 0) {
        for (uint32_t s = 0; s < S; s++) {
            ptx_mbar_init(ptx_smem(&full[s]), 1u);
            ptx_mbar_init(ptx_smem(&empty[s]), GW);
        }
        ptx_fence_mbar_init();
    }
    __syncthreads();
    if (u0 >= u1) return;
    if (threadIdx.x < 32u) {
        if (threadIdx.x == 0) produce(P, host, u0, u1, ring, full, empty);
        return;
    }
    consume(P, host, u0, u1, ring, full, empty, merge, G);
}

/* one kernel per group size bound (1, 2, 4, 8): a group g runs on the smallest bound >= g */
__global__ void __launch_bounds__(32u + 32u * DAK_ATTN_CONSUMER_WARPS, 1) k_attn_g1(const __grid_constant__ attn_params P) { attn_body(&P, 1u); }
__global__ void __launch_bounds__(32u + 32u * DAK_ATTN_CONSUMER_WARPS, 1) k_attn_g2(const __grid_constant__ attn_params P) { attn_body(&P, 2u); }
__global__ void __launch_bounds__(32u + 32u * DAK_ATTN_CONSUMER_WARPS, 1) k_attn_g4(const __grid_constant__ attn_params P) { attn_body(&P, 4u); }
__global__ void __launch_bounds__(32u + 32u * DAK_ATTN_CONSUMER_WARPS, 1) k_attn_g8(const __grid_constant__ attn_params P) { attn_body(&P, 8u); }

/* the splits of each (entry, head) of a tier with more than one split: one warp a row */
__global__ void __launch_bounds__(128) k_combine(const __grid_constant__ attn_params P)
{
    ptx_griddep_launch_dependents(); /* as in attn_body */
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t row = blockIdx.x * 4u + (threadIdx.x >> 5);
    if (row >= P.batch * P.heads) return;
    const uint32_t en = row / P.heads, h = row % P.heads, g = P.group;
    const int host = en < P.batch_host;
    const uint32_t splits = host ? P.host_splits : P.hbm_splits;
    if (splits == 1) return;
    const uint32_t first = host ? 0u : P.batch_host, kvh = h / g, hh = h % g;
    const size_t gu0 = (host ? 0u : P.host_units) + ((size_t)(en - first) * P.kv_heads + kvh) * splits;
    const size_t ml0 = ((size_t)P.host_units + P.hbm_units) * g * D;
    float M = -INFINITY;
    for (uint32_t s = 0; s < splits; s++) M = fmaxf(M, P.ws[ml0 + 2u * ((gu0 + s) * g + hh)]);
    float L = 0.f, o0 = 0.f, o1 = 0.f, o2 = 0.f, o3 = 0.f;
    for (uint32_t s = 0; s < splits; s++) {
        const size_t pi = (gu0 + s) * g + hh;
        const float f = exp2f(P.ws[ml0 + 2u * pi] - M);
        L += P.ws[ml0 + 2u * pi + 1u] * f;
        const float4 o = *(const float4 *)(P.ws + pi * D + 4u * lane);
        o0 += o.x * f, o1 += o.y * f, o2 += o.z * f, o3 += o.w * f;
    }
    const float r = 1.f / L;
    uint2 w;
    w.x = (uint32_t)dak_f32_to_bf16(o0 * r) | ((uint32_t)dak_f32_to_bf16(o1 * r) << 16);
    w.y = (uint32_t)dak_f32_to_bf16(o2 * r) | ((uint32_t)dak_f32_to_bf16(o3 * r) << 16);
    *(uint2 *)(P.out + (size_t)row * D + 4u * lane) = w;
}

/* ---- host side --------------------------------------------------------------------------- */

#define ACU(call)                                                                                  \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) return cm_fail(err, "dak attention: %s: %s", #call, cudaGetErrorString(e_)); \
    } while (0)

static size_t tier_elems(uint32_t entries, uint32_t kv_heads, uint32_t max_len)
{
    return (size_t)entries * kv_heads * max_len * D;
}

static int kv_check(const char *who, uint32_t batch, uint32_t kv_heads, uint32_t max_len, uint32_t batch_host,
                    cm_err *err)
{
    if (batch == 0 || kv_heads == 0 || max_len == 0)
        return cm_fail(err, "%s: batch %u, kv_heads %u, max_len %u (expected all >= 1)", who, batch, kv_heads,
                       max_len);
    if (batch_host > batch)
        return cm_fail(err, "%s: batch_host %u > batch %u (expected host entries within the batch)", who, batch_host,
                       batch);
    return 0;
}

extern "C" int dak_kv_create(dak_kv_tiered *kv, uint32_t batch, uint32_t kv_heads, uint32_t max_len,
                             uint32_t batch_host, cm_err *err)
{
    memset(kv, 0, sizeof *kv);
    if (kv_check("dak_kv_create", batch, kv_heads, max_len, batch_host, err)) return -1;
    kv->batch = batch, kv->kv_heads = kv_heads, kv->max_len = max_len, kv->batch_host = batch_host, kv->owns = 1;
    const size_t hb = tier_elems(batch_host, kv_heads, max_len) * 2u;
    const size_t gb = tier_elems(batch - batch_host, kv_heads, max_len) * 2u;
    cudaError_t e = cudaSuccess;
    if (hb) {
        e = cudaHostAlloc((void **)&kv->k_host, hb, cudaHostAllocMapped | cudaHostAllocPortable);
        if (e == cudaSuccess) e = cudaHostAlloc((void **)&kv->v_host, hb, cudaHostAllocMapped | cudaHostAllocPortable);
        if (e == cudaSuccess) e = cudaHostGetDevicePointer((void **)&kv->k_host_dev, kv->k_host, 0);
        if (e == cudaSuccess) e = cudaHostGetDevicePointer((void **)&kv->v_host_dev, kv->v_host, 0);
        if (e != cudaSuccess) {
            dak_kv_destroy(kv);
            return cm_fail(err, "dak_kv_create: pinned host tier of 2 x %zu bytes: %s", hb, cudaGetErrorString(e));
        }
    }
    if (gb) {
        e = cudaMalloc((void **)&kv->k_dev, gb);
        if (e == cudaSuccess) e = cudaMalloc((void **)&kv->v_dev, gb);
        if (e != cudaSuccess) {
            dak_kv_destroy(kv);
            return cm_fail(err, "dak_kv_create: HBM tier of 2 x %zu bytes: %s", gb, cudaGetErrorString(e));
        }
    }
    return 0;
}

extern "C" int dak_kv_view(dak_kv_tiered *kv, uint32_t batch, uint32_t kv_heads, uint32_t max_len,
                           uint32_t batch_host, uint16_t *k_host, uint16_t *v_host, uint16_t *k_dev, uint16_t *v_dev,
                           cm_err *err)
{
    memset(kv, 0, sizeof *kv);
    if (kv_check("dak_kv_view", batch, kv_heads, max_len, batch_host, err)) return -1;
    if (batch_host && (!k_host || !v_host))
        return cm_fail(err, "dak_kv_view: %u host entries but no host K / V memory", batch_host);
    if (batch_host < batch && (!k_dev || !v_dev))
        return cm_fail(err, "dak_kv_view: %u HBM entries but no HBM K / V memory", batch - batch_host);
    kv->batch = batch, kv->kv_heads = kv_heads, kv->max_len = max_len, kv->batch_host = batch_host, kv->owns = 0;
    if (batch_host) {
        kv->k_host = k_host, kv->v_host = v_host;
        ACU(cudaHostGetDevicePointer((void **)&kv->k_host_dev, k_host, 0));
        ACU(cudaHostGetDevicePointer((void **)&kv->v_host_dev, v_host, 0));
    }
    if (batch_host < batch) kv->k_dev = k_dev, kv->v_dev = v_dev;
    return 0;
}

extern "C" int dak_kv_upload(dak_kv_tiered *kv, const uint16_t *k_full, const uint16_t *v_full, int src_on_device,
                             cm_err *err)
{
    if (!kv || !k_full || !v_full) return cm_fail(err, "dak_kv_upload: missing cache or source");
    const cudaMemcpyKind kind = src_on_device ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;
    const cudaMemcpyKind kind_h = src_on_device ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost;
    const size_t hn = tier_elems(kv->batch_host, kv->kv_heads, kv->max_len);
    const size_t gn = tier_elems(kv->batch - kv->batch_host, kv->kv_heads, kv->max_len);
    if (hn) {
        ACU(cudaMemcpy(kv->k_host, k_full, hn * 2u, kind_h));
        ACU(cudaMemcpy(kv->v_host, v_full, hn * 2u, kind_h));
    }
    if (gn) {
        ACU(cudaMemcpy(kv->k_dev, k_full + hn, gn * 2u, kind));
        ACU(cudaMemcpy(kv->v_dev, v_full + hn, gn * 2u, kind));
    }
    return 0;
}

extern "C" void dak_kv_destroy(dak_kv_tiered *kv)
{
    if (!kv) return;
    if (kv->owns) {
        if (kv->k_host) cudaFreeHost(kv->k_host);
        if (kv->v_host) cudaFreeHost(kv->v_host);
        if (kv->k_dev) cudaFree(kv->k_dev);
        if (kv->v_dev) cudaFree(kv->v_dev);
    }
    memset(kv, 0, sizeof *kv);
}

extern "C" int dak_attn_ctx_create(dak_attn_ctx **out, cm_err *err)
{
    *out = NULL;
    int dev = 0, sms = 0, optin = 0;
    ACU(cudaGetDevice(&dev));
    ACU(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    ACU(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    const size_t need = DAK_ATTN_SMEM_BYTES(DAK_ATTN_MAX_STAGES);
    if ((size_t)optin < need)
        return cm_fail(err, "dak attention: the device allows %d bytes of shared memory a block (expected >= %zu)",
                       optin, need);
    ACU(cudaFuncSetAttribute(k_attn_g1, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)need));
    ACU(cudaFuncSetAttribute(k_attn_g2, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)need));
    ACU(cudaFuncSetAttribute(k_attn_g4, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)need));
    ACU(cudaFuncSetAttribute(k_attn_g8, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)need));
    dak_attn_ctx *c = (dak_attn_ctx *)cm_calloc(1, sizeof *c);
    c->sms = (uint32_t)sms;
    c->smem_optin = (size_t)optin;
    *out = c;
    return 0;
}

extern "C" void dak_attn_ctx_destroy(dak_attn_ctx *ctx)
{
    if (!ctx) return;
    if (ctx->ws) cudaFree(ctx->ws);
    free(ctx);
}

extern "C" uint32_t dak_attn_ctx_sms(const dak_attn_ctx *ctx) { return ctx ? ctx->sms : 0u; }

extern "C" int dak_attn_decode(dak_attn_ctx *ctx, const dak_kv_tiered *kv, const uint16_t *q, uint32_t heads,
                               uint32_t len, float scale, uint16_t *out, const dak_attn_plan *p, void *stream,
                               cm_err *err)
{
    static const char *who = "dak_attn_decode";
    if (!ctx || !kv || !p || !q || !out) return cm_fail(err, "%s: missing context, cache, plan, q or out", who);
    if (p->batch != kv->batch || p->batch_host != kv->batch_host || p->kv_heads != kv->kv_heads)
        return cm_fail(err,
                       "%s: plan made for batch %u (host %u), kv_heads %u; the cache has batch %u (host %u), "
                       "kv_heads %u (expected the same)",
                       who, p->batch, p->batch_host, p->kv_heads, kv->batch, kv->batch_host, kv->kv_heads);
    if (p->heads != heads || p->len != len)
        return cm_fail(err, "%s: plan made for heads %u, len %u; called with heads %u, len %u (expected the same)",
                       who, p->heads, p->len, heads, len);
    if (len == 0 || len > kv->max_len)
        return cm_fail(err, "%s: len %u (expected 1..max_len %u)", who, len, kv->max_len);
    if (!isfinite(scale)) return cm_fail(err, "%s: scale %g (expected a finite value)", who, (double)scale);
    if (p->group < 1 || p->group > DAK_ATTN_MAX_GROUP || p->groups < 1 || p->groups > 2 || p->stages < 1 || p->stages > DAK_ATTN_MAX_STAGES ||
        (p->host_ctas && (p->window < 1 || p->window > p->stages)) || p->host_ctas + p->hbm_ctas == 0 ||
        (p->batch_host && !p->host_ctas) || (p->batch_host < p->batch && !p->hbm_ctas))
        return cm_fail(err, "%s: the plan is not one dak_attn_plan_make made (group %u, stages %u, window %u, "
                       "CTAs %u + %u)", who, p->group, p->stages, p->window, p->host_ctas, p->hbm_ctas);
    if (kv->batch_host && (!kv->k_host_dev || !kv->v_host_dev))
        return cm_fail(err, "%s: the cache's host tier has no device mapping", who);
    if (kv->batch_host < kv->batch && (!kv->k_dev || !kv->v_dev))
        return cm_fail(err, "%s: the cache's HBM tier is missing", who);
    if (p->smem_bytes > ctx->smem_optin)
        return cm_fail(err, "%s: the plan needs %u bytes of shared memory, the device allows %zu", who,
                       p->smem_bytes, ctx->smem_optin);
    if (p->ws_floats > ctx->ws_floats) {
        if (ctx->ws) {
            cudaError_t e = cudaFree(ctx->ws);
            ctx->ws = NULL, ctx->ws_floats = 0;
            if (e != cudaSuccess) return cm_fail(err, "%s: freeing the workspace: %s", who, cudaGetErrorString(e));
        }
        ACU(cudaMalloc((void **)&ctx->ws, p->ws_floats * sizeof(float)));
        ctx->ws_floats = p->ws_floats;
    }
    attn_params P;
    memset(&P, 0, sizeof P);
    P.kh = kv->k_host_dev, P.vh = kv->v_host_dev, P.kg = kv->k_dev, P.vg = kv->v_dev;
    P.q = q, P.out = out, P.ws = ctx->ws;
    P.batch = p->batch, P.batch_host = p->batch_host, P.heads = heads, P.kv_heads = p->kv_heads;
    P.group = p->group, P.len = len, P.max_len = kv->max_len, P.chunks = p->chunks;
    P.host_ctas = p->host_ctas, P.hbm_ctas = p->hbm_ctas, P.host_splits = p->host_splits;
    P.hbm_splits = p->hbm_splits, P.host_units = p->host_units, P.hbm_units = p->hbm_units;
    P.window = p->host_ctas ? p->window : p->stages, P.stages = p->stages;
    P.groups = p->groups;
    P.nomath = p->diag_nomath ? 1u : 0u;
    P.qscale = scale * LOG2E;
    cudaStream_t st = (cudaStream_t)stream;
    const uint32_t grid = p->host_ctas + p->hbm_ctas;
    void (*k)(attn_params) = p->group <= 1 ? k_attn_g1 : p->group <= 2 ? k_attn_g2 : p->group <= 4 ? k_attn_g4
                                                                                                   : k_attn_g8;
    k<<<grid, 32u + 32u * GW * p->groups, p->smem_bytes, st>>>(P);
    ACU(cudaGetLastError());
    if (p->ws_floats) {
        const uint32_t rows = p->batch * heads;
        k_combine<<<(rows + 3u) / 4u, 128, 0, st>>>(P);
        ACU(cudaGetLastError());
    }
    return 0;
}
