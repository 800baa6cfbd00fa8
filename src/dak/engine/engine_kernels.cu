/* The inference engine's small kernels (declared in engine_kernels.h; include/dak/engine.h has the step's
 * formulas and precision). */
#include "common/ptx.cuh"
#include "dak/attention.h"
#include "dak/bf16.h"
#include "dak/engine.h"
#include "engine_kernels.h"


/* out[i] = bf16 param (i < valid) or 0; row-major */
__global__ void k_fill_bf16(uint16_t *out, size_t n, size_t valid, uint64_t seed, uint32_t tensor, float scale,
                            float offset)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = i < valid ? dak_eng_param_bf16(seed, tensor, i, scale, offset) : (uint16_t)0;
}

__global__ void k_fill_f32(float *out, size_t n, uint64_t seed, uint32_t tensor, float scale, float offset)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = dak_bf16_to_f32(dak_eng_param_bf16(seed, tensor, i, scale, offset));
}

__device__ __forceinline__ uint16_t f2bf(float f) { return dak_f32_to_bf16(f); }

/* STEP_KERNEL_TRIGGER: every small kernel of the step lets the next launch start at once
 * (griddepcontrol.launch_dependents at its top).  The GEMMs are launched as programmatic dependents
 * (dak_eng_opts.gemm_pdl) and read nothing this kernel writes before their griddepcontrol.wait, which
 * waits for this grid to complete; so a GEMM's launch and its first ring of weights overlap the small
 * kernel before it.  With dak_eng_opts.kernel_pdl the small kernels are programmatic dependents too:
 * each waits (griddepcontrol.wait, right after its trigger) before reading anything, and every kernel
 * of the step executes that wait, so a kernel's completion still implies its predecessors'.  Without
 * PDL the wait returns at once.  Plain launches after them are unaffected. */
/* The norm's row lives in registers: nv float4s a thread (norm_vec(H)), hidden <= 4 x NORM_VEC x 1024 (32768;
 * dak_eng_model_make checks).  All of a thread's loads are issued before any use: the first version looped over the
 * row three times with loads behind stores (x may alias nothing, but the compiler could not know), one global
 * latency an element group, 18 us a row of 4096 (session 20's breakdown). */

/* dak_eng_opts.diag_times: thread 0 of the CTA writes %globaltimer into its stamp word k (ts NULL: nothing) */
#define STAMP(ts, k)                                                                                                   \
    do {                                                                                                               \
        if ((ts) && threadIdx.x == 0) (ts)[k] = ptx_globaltimer();                                                     \
    } while (0)

/* Block sum of one value (any multiple of 32 threads, <= 1024), in every thread: the warps' sums through shared
 * memory, then each warp sums those 32 with shuffles (not each thread reading the 32 sums one after another: the
 * 1024-thread norm's two sums took 1.3 us that way, twenty-second session). */
__device__ float block_sum(float v, float *sh)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    unsigned w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __syncthreads(); /* sh's previous sums are read */
    if (lane == 0) sh[w] = v;
    __syncthreads();
    float s = lane < blockDim.x / 32 ? sh[lane] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    return s;
}

/* x[n] += c[n] + bias (c may be NULL: no add); out[n] = bf16(norm(x[n])) (beta NULL: RMSNorm).  One CTA a row of
 * norm_threads(H) threads, nv float4s each (a literal in each kernel below, so the arrays stay in registers).
 * hold: the weights (bias, gamma, beta) are read into registers before griddepcontrol.wait, so that after it only x
 * and c cost a round of memory (twenty-second session: the weights read after the statistics cost the norm ~3 us
 * of its ~6); else gamma and beta are only prefetched into L1 there (large rows: their registers would not fit). */
__device__ __forceinline__ void resid_norm_body(float *__restrict__ x, const float *__restrict__ c,
                                                const float *__restrict__ bias, const float *__restrict__ gamma,
                                                const float *__restrict__ beta, uint16_t *__restrict__ out, uint32_t H,
                                                float eps, uint64_t *ts, uint32_t trig, const uint32_t nv,
                                                const bool hold)
{
    if (trig == 0) ptx_griddep_launch_dependents(); /* see STEP_KERNEL_TRIGGER; dak_eng_opts.norm_trigger */
    if (ts) ts += (size_t)blockIdx.x * DAK_ENG_NORM_STAMPS;
    STAMP(ts, 0);
    __shared__ float sh[32];
    const uint32_t H4 = H / 4;
    float4 *xr = (float4 *)(x + (size_t)blockIdx.x * H);
    const float4 *cr = c ? (const float4 *)(c + (size_t)blockIdx.x * H) : NULL;
    const float4 *br = (const float4 *)bias, *g4 = (const float4 *)gamma, *b4 = (const float4 *)beta;
    const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
    float4 v[NORM_VEC], wg[NORM_VEC], wb[NORM_VEC], wc[NORM_VEC];
#pragma unroll
    for (uint32_t j = 0; j < nv; j++) {
        uint32_t i = threadIdx.x + j * blockDim.x;
        wg[j] = wb[j] = wc[j] = zero;
        if (i >= H4) continue;
        if (hold) {
            wg[j] = g4[i];
            if (b4) wb[j] = b4[i];
            if (cr && br) wc[j] = br[i];
        } else {
            ptx_prefetch_l1(g4 + i);
            if (b4) ptx_prefetch_l1(b4 + i);
        }
    }
    ptx_griddep_wait(); /* launched as a programmatic dependent: x and c are written (the parameters were not) */
    STAMP(ts, 1);
#pragma unroll
    for (uint32_t j = 0; j < nv; j++) {
        uint32_t i = threadIdx.x + j * blockDim.x;
        v[j] = zero;
        if (i < H4) {
            v[j] = xr[i];
            if (cr) {
                float4 a = cr[i], b = hold ? wc[j] : br ? br[i] : zero;
                v[j].x += a.x + b.x, v[j].y += a.y + b.y, v[j].z += a.z + b.z, v[j].w += a.w + b.w;
            }
        }
    }
    float s = 0;
#pragma unroll
    for (uint32_t j = 0; j < nv; j++) {
        uint32_t i = threadIdx.x + j * blockDim.x;
        if (i < H4 && cr) xr[i] = v[j];
        s += beta ? v[j].x + v[j].y + v[j].z + v[j].w
                  : v[j].x * v[j].x + v[j].y * v[j].y + v[j].z * v[j].z + v[j].w * v[j].w;
    }
    s = block_sum(s, sh);
    STAMP(ts, 2);
    if (trig == 1) ptx_griddep_launch_dependents();
    float mean = 0, inv;
    if (beta) {
        mean = s / (float)H;
        float q = 0;
#pragma unroll
        for (uint32_t j = 0; j < nv; j++) {
            if (threadIdx.x + j * blockDim.x >= H4) continue;
            float a = v[j].x - mean, b = v[j].y - mean, d = v[j].z - mean, e = v[j].w - mean;
            q += a * a + b * b + d * d + e * e;
        }
        q = block_sum(q, sh);
        inv = rsqrtf(q / (float)H + eps);
    } else {
        inv = rsqrtf(s / (float)H + eps);
    }
    STAMP(ts, 3);
    uint2 *o = (uint2 *)(out + (size_t)blockIdx.x * H);
#pragma unroll
    for (uint32_t j = 0; j < nv; j++) {
        uint32_t i = threadIdx.x + j * blockDim.x;
        if (i >= H4) continue;
        float4 g = hold ? wg[j] : g4[i], b = hold ? wb[j] : b4 ? b4[i] : zero;
        float y0 = (v[j].x - mean) * inv * g.x + b.x, y1 = (v[j].y - mean) * inv * g.y + b.y;
        float y2 = (v[j].z - mean) * inv * g.z + b.z, y3 = (v[j].w - mean) * inv * g.w + b.w;
        o[i] = make_uint2((uint32_t)f2bf(y0) | (uint32_t)f2bf(y1) << 16, (uint32_t)f2bf(y2) | (uint32_t)f2bf(y3) << 16);
    }
    STAMP(ts, 4);
    if (trig == 2) ptx_griddep_launch_dependents();
    if (ts && threadIdx.x == 0) ts[5] = ptx_smid();
}

/* norm_vec(H) 1, 2 (the weights held) and NORM_VEC */
#define RESID_NORM_KERNEL(name, NV, HOLD)                                                                              \
    __global__ void __launch_bounds__(1024)                                                                            \
        name(float *__restrict__ x, const float *__restrict__ c, const float *__restrict__ bias,                       \
             const float *__restrict__ gamma, const float *__restrict__ beta, uint16_t *__restrict__ out, uint32_t H,  \
             float eps, uint64_t *ts, uint32_t trig)                                                                   \
    {                                                                                                                  \
        resid_norm_body(x, c, bias, gamma, beta, out, H, eps, ts, trig, NV, HOLD);                                     \
    }
RESID_NORM_KERNEL(k_resid_norm1, 1u, true)
RESID_NORM_KERNEL(k_resid_norm2, 2u, true)
RESID_NORM_KERNEL(k_resid_norm, NORM_VEC, false)

/* dak_eng_opts.diag_empty: a kernel that only takes its place in the chain (trigger, wait), no work */
__global__ void k_noop(void)
{
    ptx_griddep_launch_dependents();
    ptx_griddep_wait();
}

/* x[n][:] = emb[tok[n]] (+ pos[pos_row]); the embedding's rows [0, rows_host) from host memory, the others from
 * emb_dev, which holds rows [dev_from, vocab). */
__global__ void k_embed(float *x, const int32_t *tok, const uint16_t *emb_host, const uint16_t *emb_dev,
                        uint32_t rows_host, uint32_t dev_from, const uint16_t *pos, uint32_t pos_row, uint32_t H,
                        uint32_t vocab)
{
    ptx_griddep_launch_dependents(); /* see STEP_KERNEL_TRIGGER */
    ptx_griddep_wait();              /* launched as a programmatic dependent: the inputs are written */
    int32_t v = tok[blockIdx.x];
    if (v < 0 || (uint32_t)v >= vocab) v = 0;
    const uint16_t *e = (uint32_t)v < rows_host ? emb_host + (size_t)v * H : emb_dev + (size_t)(v - dev_from) * H;
    for (uint32_t i = threadIdx.x; i < H; i += NTHR) {
        float f = dak_bf16_to_f32(e[i]);
        if (pos) f += dak_bf16_to_f32(pos[(size_t)pos_row * H + i]);
        x[(size_t)blockIdx.x * H + i] = f;
    }
}


/* grid (N, heads + kvh), 64 threads: thread i takes elements i and i + 64 of a head. */
__global__ void k_qkv_post(qkv_args a)
{
    ptx_griddep_launch_dependents(); /* see STEP_KERNEL_TRIGGER */
    uint64_t *ts = a.ts ? a.ts + ((size_t)blockIdx.y * gridDim.x + blockIdx.x) * DAK_ENG_QKVP_STAMPS : NULL;
    STAMP(ts, 0);
    ptx_griddep_wait(); /* launched as a programmatic dependent: the inputs are written */
    STAMP(ts, 1);
    if (ts && threadIdx.x == 0) ts[3] = ptx_smid();
    uint32_t n = blockIdx.x, hh = blockIdx.y, i = threadIdx.x;
    const uint32_t D = DAK_ENG_HEAD_DIM;
    int kv = hh >= a.heads;
    uint32_t h = kv ? hh - a.heads : hh;
    uint32_t col = (kv ? a.heads * D : 0) + h * D, vcol = (a.heads + a.kvh) * D + h * D; /* q or k; v */
    const float *c = a.c + (size_t)n * a.ld;
    float x0 = c[col + i], x1 = c[col + i + 64];
    if (a.bias) x0 += a.bias[col + i], x1 += a.bias[col + i + 64];
    if (a.cs) { /* the attention's fused path (dak_attn_decode_qkv) rounds the same operations */
        float co = a.cs[a.pos * 64 + i], si = a.sn[a.pos * 64 + i];
        float y0 = dak_attn_rope_lo(x0, x1, co, si), y1 = dak_attn_rope_hi(x0, x1, co, si);
        x0 = y0, x1 = y1;
    }
    if (!kv) {
        uint16_t *q = a.q + ((size_t)n * a.heads + h) * D;
        q[i] = f2bf(x0), q[i + 64] = f2bf(x1);
        STAMP(ts, 2);
        return;
    }
    float v0 = c[vcol + i], v1 = c[vcol + i + 64];
    if (a.bias) v0 += a.bias[vcol + i], v1 += a.bias[vcol + i + 64];
    uint16_t k0 = f2bf(x0), k1 = f2bf(x1), w0 = f2bf(v0), w1 = f2bf(v1);
    size_t off;
    uint16_t *kd, *vd;
    if (n < a.bh) {
        off = (((size_t)n * a.kvh + h) * a.max_len + a.pos) * D;
        kd = a.k_host, vd = a.v_host;
        if (a.k_stage) {
            a.k_stage[off + i] = k0, a.k_stage[off + i + 64] = k1;
            a.v_stage[off + i] = w0, a.v_stage[off + i + 64] = w1;
        }
    } else {
        off = (((size_t)(n - a.bh) * a.kvh + h) * a.max_len + a.pos) * D;
        kd = a.k_dev, vd = a.v_dev;
    }
    kd[off + i] = k0, kd[off + i + 64] = k1;
    vd[off + i] = w0, vd[off + i + 64] = w1;
    STAMP(ts, 2);
}

/* out[r][f] = bf16(relu(c[r][f] + bias[f])) (OPT: c is [N][F]) or bf16(silu(g) * u) with g = c[r][f], u = c[r][F + f]
 * (Llama, gated: gate and up stacked, c is [N][2F]); n = N x F outputs. */
__global__ void k_act(const float *c, const float *bias, uint16_t *out, size_t n, uint32_t F, int gated, uint64_t *ts)
{
    ptx_griddep_launch_dependents(); /* see STEP_KERNEL_TRIGGER */
    if (ts) ts += (size_t)blockIdx.x * DAK_ENG_ACT_STAMPS;
    STAMP(ts, 0);
    ptx_griddep_wait(); /* launched as a programmatic dependent: the inputs are written */
    STAMP(ts, 1);
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        size_t r = i / F;
        uint32_t f = (uint32_t)(i % F);
        float y;
        if (gated) {
            float g = c[r * 2 * F + f];
            y = g / (1.0f + expf(-g)) * c[r * 2 * F + F + f];
        } else {
            float g = c[i] + (bias ? bias[f] : 0.0f);
            y = g > 0.0f ? g : 0.0f;
        }
        out[i] = f2bf(y);
    }
    STAMP(ts, 2);
    if (ts && threadIdx.x == 0) ts[3] = ptx_smid();
}

/* tok[n] = argmax of logits[n][0..vocab) (lowest index on ties, NaN never wins); also hist[n]. */
__global__ void k_argmax(const float *logits, uint32_t ld, uint32_t vocab, int32_t *tok, int32_t *hist)
{
    ptx_griddep_wait(); /* see STEP_KERNEL_TRIGGER */
    __shared__ float sv[NTHR];
    __shared__ uint32_t si[NTHR];
    const float *l = logits + (size_t)blockIdx.x * ld;
    float bv = -INFINITY;
    uint32_t bi = 0xffffffffu;
    for (uint32_t i = threadIdx.x; i < vocab; i += NTHR) {
        float v = l[i];
        if (!(v != v) && (bi == 0xffffffffu || v > bv)) bv = v, bi = i;
    }
    sv[threadIdx.x] = bv, si[threadIdx.x] = bi;
    __syncthreads();
    for (uint32_t s = NTHR / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            float ov = sv[threadIdx.x + s];
            uint32_t oi = si[threadIdx.x + s];
            uint32_t mi = si[threadIdx.x];
            if (oi != 0xffffffffu &&
                (mi == 0xffffffffu || ov > sv[threadIdx.x] || (ov == sv[threadIdx.x] && oi < mi)))
                sv[threadIdx.x] = ov, si[threadIdx.x] = oi;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        int32_t r = si[0] == 0xffffffffu ? 0 : (int32_t)si[0];
        tok[blockIdx.x] = r;
        if (hist) hist[blockIdx.x] = r;
    }
}

/* c[n][m] = m < ma ? ca[n][m] : cb[n][m - ma] (prefetch: the two GEMMs' outputs joined). */
__global__ void k_join(float *c, const float *ca, const float *cb, uint32_t ma, uint32_t M, uint32_t N)
{
    ptx_griddep_launch_dependents(); /* see STEP_KERNEL_TRIGGER */
    ptx_griddep_wait();              /* launched as a programmatic dependent: the inputs are written */
    size_t n_all = (size_t)N * M;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_all; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t n = (uint32_t)(i / M), m = (uint32_t)(i % M);
        c[i] = m < ma ? ca[(size_t)n * ma + m] : cb[(size_t)n * (M - ma) + (m - ma)];
    }
}


