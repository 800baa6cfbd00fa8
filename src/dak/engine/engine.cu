/* dak engine on the GPU (include/dak/engine.h): synthetic parameters, the step's small kernels
 * (norms, bias / rotary / cache append, activations, argmax, embedding gather), the step as one
 * CUDA graph per position, direct access (split GEMM + split attention over tiered views) and the
 * FlexGen-style double-buffered prefetch baseline. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "common/bench.h"
}
#include "common/ptx.cuh"
#include "dak/attention.h"
#include "dak/engine.h"
#include "dak/gemm.h"
#include "dak/tiered.h"

#define ECU(call)                                                                                 \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) return cm_fail(err, "engine: %s: %s", #call, cudaGetErrorString(e_)); \
    } while (0)

#define NTHR 256

/* ---- kernels ------------------------------------------------------------------------------------ */

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
        out[i] = dak_eng_bf16_f32(dak_eng_param_bf16(seed, tensor, i, scale, offset));
}

__device__ __forceinline__ uint16_t f2bf(float f) { return dak_f32_to_bf16(f); }

/* Block sum of one value (NTHR threads). */
__device__ float block_sum(float v, float *sh)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __syncthreads();
    if (lane == 0) sh[w] = v;
    __syncthreads();
    float s = 0;
    for (int i = 0; i < NTHR / 32; i++) s += sh[i];
    return s;
}

/* STEP_KERNEL_TRIGGER: every small kernel of the step lets the next launch start at once
 * (griddepcontrol.launch_dependents at its top).  Only the GEMMs are launched as programmatic
 * dependents (dak_eng_opts.gemm_pdl), and they read nothing this kernel writes before their
 * griddepcontrol.wait, which waits for this grid to complete; so a GEMM's launch and its first ring of
 * weights overlap the small kernel before it.  Plain launches after it are unaffected. */
/* x[n] += c[n] + bias (c may be NULL: no add); out[n] = bf16(norm(x[n])) (beta NULL: RMSNorm).  One block a row. */
__global__ void k_resid_norm(float *x, const float *c, const float *bias, const float *gamma, const float *beta,
                             uint16_t *out, uint32_t H, float eps)
{
    ptx_griddep_launch_dependents(); /* see STEP_KERNEL_TRIGGER */
    __shared__ float sh[NTHR / 32];
    float *xr = x + (size_t)blockIdx.x * H;
    const float *cr = c ? c + (size_t)blockIdx.x * H : NULL;
    float s = 0;
    for (uint32_t i = threadIdx.x; i < H; i += NTHR) {
        float v = xr[i];
        if (cr) {
            v += cr[i] + (bias ? bias[i] : 0.0f);
            xr[i] = v;
        }
        s += beta ? v : v * v;
    }
    s = block_sum(s, sh);
    if (beta) {
        float mean = s / (float)H, q = 0;
        for (uint32_t i = threadIdx.x; i < H; i += NTHR) {
            float d = xr[i] - mean;
            q += d * d;
        }
        q = block_sum(q, sh);
        float inv = rsqrtf(q / (float)H + eps);
        for (uint32_t i = threadIdx.x; i < H; i += NTHR)
            out[(size_t)blockIdx.x * H + i] = f2bf((xr[i] - mean) * inv * gamma[i] + beta[i]);
    } else {
        float inv = rsqrtf(s / (float)H + eps);
        for (uint32_t i = threadIdx.x; i < H; i += NTHR) out[(size_t)blockIdx.x * H + i] = f2bf(xr[i] * inv * gamma[i]);
    }
}

/* x[n][:] = emb[tok[n]] (+ pos[pos_row]); the embedding's rows [0, rows_host) from host memory. */
__global__ void k_embed(float *x, const int32_t *tok, const uint16_t *emb_host, const uint16_t *emb_dev,
                        uint32_t rows_host, const uint16_t *pos, uint32_t pos_row, uint32_t H, uint32_t vocab)
{
    ptx_griddep_launch_dependents(); /* see STEP_KERNEL_TRIGGER */
    int32_t v = tok[blockIdx.x];
    if (v < 0 || (uint32_t)v >= vocab) v = 0;
    const uint16_t *e = ((uint32_t)v < rows_host ? emb_host : emb_dev) + (size_t)v * H;
    for (uint32_t i = threadIdx.x; i < H; i += NTHR) {
        float f = dak_bf16_to_f32(e[i]);
        if (pos) f += dak_bf16_to_f32(pos[(size_t)pos_row * H + i]);
        x[(size_t)blockIdx.x * H + i] = f;
    }
}

typedef struct {
    const float *cq, *ck, *cv;       /* [N][heads*128], [N][kvh*128] */
    const float *bq, *bk, *bv;       /* biases or NULL */
    const float *cs, *sn;            /* rotary tables [max_len][64] or NULL */
    uint16_t *q;                     /* [N][heads][128] */
    uint16_t *k_host, *v_host;       /* host tier as the device maps it: [bh][kvh][max_len][128] */
    uint16_t *k_dev, *v_dev;         /* HBM tier: entries bh.. */
    uint16_t *k_stage, *v_stage;     /* prefetch: host entries' staging copy, or NULL */
    uint32_t heads, kvh, max_len, bh, pos;
} qkv_args;

/* grid (N, heads + kvh), 64 threads: thread i takes elements i and i + 64 of a head. */
__global__ void k_qkv_post(qkv_args a)
{
    ptx_griddep_launch_dependents(); /* see STEP_KERNEL_TRIGGER */
    uint32_t n = blockIdx.x, hh = blockIdx.y, i = threadIdx.x;
    const uint32_t D = DAK_ENG_HEAD_DIM;
    int kv = hh >= a.heads;
    uint32_t h = kv ? hh - a.heads : hh, W = (kv ? a.kvh : a.heads) * D;
    const float *c = (kv ? a.ck : a.cq) + (size_t)n * W + h * D;
    const float *b = kv ? a.bk : a.bq;
    float x0 = c[i], x1 = c[i + 64];
    if (b) x0 += b[h * D + i], x1 += b[h * D + i + 64];
    if (a.cs) {
        float co = a.cs[a.pos * 64 + i], si = a.sn[a.pos * 64 + i];
        float y0 = x0 * co - x1 * si, y1 = x1 * co + x0 * si;
        x0 = y0, x1 = y1;
    }
    if (!kv) {
        uint16_t *q = a.q + ((size_t)n * a.heads + h) * D;
        q[i] = f2bf(x0), q[i + 64] = f2bf(x1);
        return;
    }
    const float *cv = a.cv + (size_t)n * W + h * D;
    float v0 = cv[i], v1 = cv[i + 64];
    if (a.bv) v0 += a.bv[h * D + i], v1 += a.bv[h * D + i + 64];
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
}

/* out = bf16(relu(c + bias)) (OPT) or bf16(silu(g) * u) (Llama); n elements of rows of F. */
__global__ void k_act(const float *c, const float *u, const float *bias, uint16_t *out, size_t n, uint32_t F)
{
    ptx_griddep_launch_dependents(); /* see STEP_KERNEL_TRIGGER */
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float g = c[i];
        float y;
        if (u) {
            y = g / (1.0f + expf(-g)) * u[i];
        } else {
            if (bias) g += bias[i % F];
            y = g > 0.0f ? g : 0.0f;
        }
        out[i] = f2bf(y);
    }
}

/* tok[n] = argmax of logits[n][0..vocab) (lowest index on ties, NaN never wins); also hist[n]. */
__global__ void k_argmax(const float *logits, uint32_t ld, uint32_t vocab, int32_t *tok, int32_t *hist)
{
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
    size_t n_all = (size_t)N * M;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n_all; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t n = (uint32_t)(i / M), m = (uint32_t)(i % M);
        c[i] = m < ma ? ca[(size_t)n * ma + m] : cb[(size_t)n * (M - ma) + (m - ma)];
    }
}

static unsigned grid_for(size_t n)
{
    size_t g = (n + NTHR - 1) / NTHR;
    return (unsigned)(g > 4096 ? 4096 : (g ? g : 1));
}

/* ---- the engine ----------------------------------------------------------------------------------- */

typedef struct {
    uint32_t M, K;
    uint16_t *dev_full, *host_full; /* packed, full copies */
    float *bias;                    /* [M] or NULL */
    dak_tiered view;
    dak_gemm_launch *l;             /* direct */
    dak_gemm_launch *la, *lb;       /* prefetch: staged host rows, HBM rows */
    uint32_t rh;                    /* host rows of the current placement */
} lin_t;

struct dak_engine {
    dak_eng_model m;
    uint32_t batch, max_len, L, H, Hq, Hkv, F, V, Vp;
    uint64_t seed;
    int opt;
    dak_eng_opts o;
    uint64_t hbm_bytes, host_bytes;
    cudaStream_t st, cp;
    cudaEvent_t ev0, ev1, ev_start, ev_cpdone, ev_ready[2], ev_free[2];
    dak_gemm_ctx *g;
    dak_attn_ctx *a;
    lin_t *lin; /* [L][NLIN] */
    lin_t lm;
    float *n1g, *n1b, *n2g, *n2b, *nfg, *nfb; /* [L][H] / [H] */
    uint16_t *emb_dev, *emb_host, *pos_dev;  /* row-major embedding (HBM; Llama also pinned), positions */
    float *cs, *sn;
    uint16_t **kh, **vh, **kd, **vd; /* [L] full copies [batch][kvh][max_len][128] */
    dak_kv_tiered *kv;
    float *x, *cq, *ck, *cv, *co, *c1, *cu, *cd, *logits, *ca, *cb;
    uint16_t *hb, *qb, *ab, *fb;
    int32_t *prompt, *tok, *hist;
    /* prefetch staging */
    uint16_t *sw[2][DAK_ENG_NLIN], *sk[2], *sv[2], *slm;
    /* run */
    dak_eng_place pl;
    int have_pl;
    dak_eng_mode mode;
    uint32_t P, T, S, next;
    cudaGraphExec_t *ge;
};

static void free_launches(dak_engine *e)
{
    if (!e->lin) return;
    for (uint32_t i = 0; i < e->L * DAK_ENG_NLIN + 1; i++) {
        lin_t *w = i < e->L * DAK_ENG_NLIN ? &e->lin[i] : &e->lm;
        dak_gemm_launch_free(w->l), dak_gemm_launch_free(w->la), dak_gemm_launch_free(w->lb);
        w->l = w->la = w->lb = NULL;
    }
}

static void free_graphs(dak_engine *e)
{
    if (e->ge) {
        for (uint32_t t = 0; t < e->S; t++)
            if (e->ge[t]) cudaGraphExecDestroy(e->ge[t]);
        free(e->ge);
        e->ge = NULL;
    }
}

extern "C" void dak_engine_mem(const dak_engine *e, uint64_t *hbm, uint64_t *host)
{
    *hbm = e->hbm_bytes, *host = e->host_bytes;
}

extern "C" void dak_engine_destroy(dak_engine *e)
{
    if (!e) return;
    cudaDeviceSynchronize();
    free_graphs(e);
    free_launches(e);
    if (e->lin) {
        for (uint32_t i = 0; i < e->L * DAK_ENG_NLIN; i++) {
            cudaFree(e->lin[i].dev_full), cudaFreeHost(e->lin[i].host_full), cudaFree(e->lin[i].bias);
        }
        free(e->lin);
    }
    cudaFree(e->lm.dev_full), cudaFreeHost(e->lm.host_full);
    void *d[] = {e->n1g, e->n1b, e->n2g, e->n2b, e->nfg, e->nfb, e->emb_dev, e->pos_dev, e->cs, e->sn, e->x,
                 e->cq, e->ck, e->cv, e->co, e->c1, e->cu, e->cd, e->logits, e->ca, e->cb, e->hb, e->qb, e->ab,
                 e->fb, e->prompt, e->tok, e->hist, e->sk[0], e->sk[1], e->sv[0], e->sv[1], e->slm};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) cudaFree(d[i]);
    for (int s = 0; s < 2; s++)
        for (int j = 0; j < DAK_ENG_NLIN; j++) cudaFree(e->sw[s][j]);
    cudaFreeHost(e->emb_host);
    for (uint32_t l = 0; e->kh && l < e->L; l++) {
        cudaFreeHost(e->kh[l]), cudaFreeHost(e->vh[l]), cudaFree(e->kd[l]), cudaFree(e->vd[l]);
    }
    free(e->kh), free(e->vh), free(e->kd), free(e->vd), free(e->kv);
    if (e->g) dak_gemm_ctx_destroy(e->g);
    if (e->a) dak_attn_ctx_destroy(e->a);
    if (e->st) cudaStreamDestroy(e->st);
    if (e->cp) cudaStreamDestroy(e->cp);
    cudaEvent_t ev[] = {e->ev0, e->ev1, e->ev_start, e->ev_cpdone, e->ev_ready[0], e->ev_ready[1], e->ev_free[0],
                        e->ev_free[1]};
    for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++)
        if (ev[i]) cudaEventDestroy(ev[i]);
    if (e->have_pl) dak_eng_place_free(&e->pl);
    free(e);
}

static int dmalloc(dak_engine *e, void **p, size_t bytes, cm_err *err)
{
    cudaError_t c = cudaMalloc(p, bytes ? bytes : 16);
    if (c != cudaSuccess)
        return cm_fail(err, "engine: cudaMalloc of %zu bytes (%.2f GB allocated so far): %s", bytes,
                       e->hbm_bytes / 1e9, cudaGetErrorString(c));
    e->hbm_bytes += bytes;
    return 0;
}

static int hmalloc(dak_engine *e, void **p, size_t bytes, cm_err *err)
{
    cudaError_t c = cudaHostAlloc(p, bytes ? bytes : 16, cudaHostAllocMapped);
    if (c != cudaSuccess)
        return cm_fail(err, "engine: cudaHostAlloc of %zu pinned bytes (%.2f GB so far): %s", bytes,
                       e->host_bytes / 1e9, cudaGetErrorString(c));
    e->host_bytes += bytes;
    return 0;
}

static int fill_f32(float *p, size_t n, uint64_t seed, uint32_t tensor, float scale, float offset, cm_err *err)
{
    k_fill_f32<<<grid_for(n), NTHR>>>(p, n, seed, tensor, scale, offset);
    ECU(cudaGetLastError());
    return 0;
}

/* Bytes the engine will allocate (a full copy of each weight in HBM and in host memory). */
static void need_bytes(const dak_eng_model *m, uint32_t B, uint32_t S, double *hbm, double *host)
{
    const dak_model_config *c = &m->cfg;
    double H = (double)c->hidden, F = (double)c->ffn, Hq = (double)c->heads * 128, Hkv = (double)c->kv_heads * 128;
    double lw = (H * Hq * 2 + H * Hkv * 2 + H * F * (c->arch == DAK_ARCH_LLAMA ? 3 : 2)) * 2;
    double kv = 2.0 * B * Hkv * S * 2;
    double w = c->layers * lw + (double)m->vocab_pad * H * 2;
    *host = w + c->layers * kv + (c->arch == DAK_ARCH_LLAMA ? (double)c->vocab * H * 2 : 0);
    /* HBM: the weights, the KV cache, the embedding, staging (at most twice a layer's weights and KV, and
     * lm_head), activations */
    *hbm = w + c->layers * kv + (double)c->vocab * H * 2 + 2 * (lw + kv) + (double)m->vocab_pad * H * 2 +
           (double)B * (m->vocab_pad * 4.0 * 3 + (H + F) * 40) + (double)(c->max_pos + 2) * H * 2 + 64e6 +
           (double)F * H * 2 /* fill scratch */;
}

extern "C" int dak_engine_create(dak_engine **out, const dak_eng_model *m, uint32_t batch, uint32_t max_len,
                                 uint64_t seed, const dak_eng_opts *o, cm_err *err)
{
    *out = NULL;
    err->msg[0] = '\0';
    if (batch < 1 || batch > 4096) return cm_fail(err, "engine: batch %u: expected 1..4096", batch);
    if (max_len < 1 || max_len > 65536 || (m->cfg.arch == DAK_ARCH_OPT && max_len > m->cfg.max_pos))
        return cm_fail(err, "engine: %u positions: expected 1..%llu", max_len,
                       (unsigned long long)(m->cfg.arch == DAK_ARCH_OPT ? m->cfg.max_pos : 65536));
    double need_hbm, need_host;
    need_bytes(m, batch, max_len, &need_hbm, &need_host);
    dak_eng_opts oo;
    memset(&oo, 0, sizeof oo);
    if (o) oo = *o;
    if (oo.host_cap && need_host > (double)oo.host_cap)
        return cm_fail(err,
                       "engine: needs %.2f GB of pinned host memory (a full copy of the weights and KV cache), "
                       "more than the cap of %.2f GB: raise the cap or run fewer layers (--layers)",
                       need_host / 1e9, oo.host_cap / 1e9);
    size_t fr = 0, tot = 0;
    ECU(cudaMemGetInfo(&fr, &tot));
    double cap = oo.hbm_cap ? (double)oo.hbm_cap : (double)fr - 2.0 * (1u << 30);
    if (need_hbm > cap)
        return cm_fail(err,
                       "engine: needs about %.2f GB of HBM (a full copy of the weights and KV cache, staging, "
                       "activations), more than the %.2f GB allowed (free %.2f GB): run fewer layers (--layers) or a "
                       "smaller batch",
                       need_hbm / 1e9, cap / 1e9, fr / 1e9);
    dak_engine *e = (dak_engine *)cm_calloc(1, sizeof *e);
    e->m = *m, e->batch = batch, e->max_len = max_len, e->seed = seed, e->o = oo;
    const dak_model_config *c = &m->cfg;
    e->opt = c->arch == DAK_ARCH_OPT;
    e->L = (uint32_t)c->layers, e->H = (uint32_t)c->hidden, e->Hq = (uint32_t)(c->heads * 128),
    e->Hkv = (uint32_t)(c->kv_heads * 128), e->F = (uint32_t)c->ffn, e->V = (uint32_t)c->vocab, e->Vp = m->vocab_pad;
    uint32_t B = batch, L = e->L, H = e->H, F = e->F;
    uint16_t *scratch = NULL;
    bench_progress_t prog;
    if (cudaStreamCreateWithFlags(&e->st, cudaStreamNonBlocking) != cudaSuccess ||
        cudaStreamCreateWithFlags(&e->cp, cudaStreamNonBlocking) != cudaSuccess) {
        dak_engine_destroy(e);
        return cm_fail(err, "engine: cudaStreamCreate failed");
    }
    {
        cudaEvent_t *ev[] = {&e->ev0, &e->ev1};
        for (int i = 0; i < 2; i++)
            if (cudaEventCreate(ev[i]) != cudaSuccess) {
                dak_engine_destroy(e);
                return cm_fail(err, "engine: cudaEventCreate failed");
            }
        cudaEvent_t *evn[] = {&e->ev_start, &e->ev_cpdone, &e->ev_ready[0], &e->ev_ready[1], &e->ev_free[0],
                              &e->ev_free[1]};
        for (int i = 0; i < 6; i++)
            if (cudaEventCreateWithFlags(evn[i], cudaEventDisableTiming) != cudaSuccess) {
                dak_engine_destroy(e);
                return cm_fail(err, "engine: cudaEventCreate failed");
            }
    }
    if (dak_gemm_ctx_create(&e->g, err) || dak_attn_ctx_create(&e->a, err)) goto fail;
    if (dmalloc(e, (void **)&scratch, (size_t)(F > e->Vp ? F : e->Vp) * (H > F ? H : F) * 2, err)) goto fail;
    e->lin = (lin_t *)cm_calloc((size_t)L * DAK_ENG_NLIN, sizeof(lin_t));
    if (oo.verbose) bench_progress_start(&prog, "engine: synthetic weights (layers)", L);
    for (uint32_t l = 0; l < L; l++) {
        for (uint32_t j = 0; j < DAK_ENG_NLIN; j++) {
            lin_t *w = &e->lin[l * DAK_ENG_NLIN + j];
            dak_eng_lin_shape(m, j, &w->M, &w->K);
            if (!w->M) continue;
            size_t n = (size_t)w->M * w->K;
            if (dmalloc(e, (void **)&w->dev_full, n * 2, err) || hmalloc(e, (void **)&w->host_full, n * 2, err))
                goto fail;
            k_fill_bf16<<<grid_for(n), NTHR, 0, e->st>>>(scratch, n, n, seed, dak_eng_tensor(l, j),
                                                         dak_eng_lin_scale(w->K), 0.0f);
            if (cudaStreamSynchronize(e->st) != cudaSuccess) {
                cm_fail(err, "engine: fill failed");
                goto fail;
            }
            if (dak_pack_rowmajor(scratch, w->dev_full, w->M, w->K, err)) goto fail;
            if (cudaMemcpy(w->host_full, w->dev_full, n * 2, cudaMemcpyDeviceToHost) != cudaSuccess) {
                cm_fail(err, "engine: copy of a weight to host memory failed");
                goto fail;
            }
            if (c->bias) {
                if (dmalloc(e, (void **)&w->bias, (size_t)w->M * 4, err) ||
                    fill_f32(w->bias, w->M, seed, dak_eng_tensor(l, DAK_ENG_I_BIAS0 + j), 0.05f, 0.0f, err))
                    goto fail;
            }
        }
        if (oo.verbose) bench_progress(&prog, l + 1);
    }
    if (oo.verbose) bench_progress_end(&prog, L);
    {
        float **np[4] = {&e->n1g, &e->n1b, &e->n2g, &e->n2b};
        uint32_t items[4] = {DAK_ENG_I_N1_G, DAK_ENG_I_N1_B, DAK_ENG_I_N2_G, DAK_ENG_I_N2_B};
        for (int q = 0; q < 4; q++) {
            int gain = (q % 2) == 0;
            if (dmalloc(e, (void **)np[q], (size_t)L * H * 4, err)) goto fail;
            if (cudaMemset(*np[q], 0, (size_t)L * H * 4) != cudaSuccess) goto fail;
            if (!gain && !e->opt) continue;
            for (uint32_t l = 0; l < L; l++)
                if (fill_f32(*np[q] + (size_t)l * H, H, seed, dak_eng_tensor(l, items[q]), gain ? 0.1f : 0.05f,
                             gain ? 1.0f : 0.0f, err))
                    goto fail;
        }
        if (dmalloc(e, (void **)&e->nfg, H * 4, err) || dmalloc(e, (void **)&e->nfb, H * 4, err) ||
            fill_f32(e->nfg, H, seed, DAK_ENG_T_NF_G, 0.1f, 1.0f, err))
            goto fail;
        if (e->opt) {
            if (fill_f32(e->nfb, H, seed, DAK_ENG_T_NF_B, 0.05f, 0.0f, err)) goto fail;
        } else if (cudaMemset(e->nfb, 0, H * 4) != cudaSuccess)
            goto fail;
    }
    {
        /* embedding, row-major in HBM (the gather); OPT: its packed copy is lm_head, Llama: a pinned copy too */
        size_t ne = (size_t)e->V * H;
        if (dmalloc(e, (void **)&e->emb_dev, ne * 2, err)) goto fail;
        k_fill_bf16<<<grid_for(ne), NTHR, 0, e->st>>>(e->emb_dev, ne, ne, seed, DAK_ENG_T_EMBED,
                                                      dak_eng_embed_scale(m), 0.0f);
        if (!e->opt) {
            if (hmalloc(e, (void **)&e->emb_host, ne * 2, err)) goto fail;
            if (cudaMemcpyAsync(e->emb_host, e->emb_dev, ne * 2, cudaMemcpyDeviceToHost, e->st) != cudaSuccess)
                goto fail;
        } else {
            size_t np = (size_t)(max_len + DAK_ENG_OPT_POS_OFFSET) * H;
            if (dmalloc(e, (void **)&e->pos_dev, np * 2, err)) goto fail;
            k_fill_bf16<<<grid_for(np), NTHR, 0, e->st>>>(e->pos_dev, np, np, seed, DAK_ENG_T_POS, 0.05f, 0.0f);
        }
        lin_t *w = &e->lm;
        w->M = e->Vp, w->K = H;
        size_t n = (size_t)w->M * H;
        if (dmalloc(e, (void **)&w->dev_full, n * 2, err) || hmalloc(e, (void **)&w->host_full, n * 2, err)) goto fail;
        k_fill_bf16<<<grid_for(n), NTHR, 0, e->st>>>(scratch, n, ne, seed, e->opt ? DAK_ENG_T_EMBED : DAK_ENG_T_LM,
                                                     e->opt ? dak_eng_embed_scale(m) : dak_eng_lin_scale(H), 0.0f);
        if (cudaStreamSynchronize(e->st) != cudaSuccess) {
            cm_fail(err, "engine: fill failed");
            goto fail;
        }
        if (dak_pack_rowmajor(scratch, w->dev_full, w->M, w->K, err)) goto fail;
        if (cudaMemcpy(w->host_full, w->dev_full, n * 2, cudaMemcpyDeviceToHost) != cudaSuccess) goto fail;
    }
    if (!e->opt) {
        /* rotary tables, the reference's values */
        size_t nt = (size_t)max_len * 64;
        float *hc = (float *)cm_malloc(nt * 4), *hs = (float *)cm_malloc(nt * 4);
        for (uint32_t p = 0; p < max_len; p++)
            for (uint32_t i = 0; i < 64; i++) dak_eng_rope_cs(p, i, &hc[p * 64 + i], &hs[p * 64 + i]);
        int bad = dmalloc(e, (void **)&e->cs, nt * 4, err) || dmalloc(e, (void **)&e->sn, nt * 4, err) ||
                  cudaMemcpy(e->cs, hc, nt * 4, cudaMemcpyHostToDevice) != cudaSuccess ||
                  cudaMemcpy(e->sn, hs, nt * 4, cudaMemcpyHostToDevice) != cudaSuccess;
        free(hc), free(hs);
        if (bad) goto fail;
    }
    {
        size_t kvb = (size_t)B * c->kv_heads * max_len * 128 * 2;
        e->kh = (uint16_t **)cm_calloc(L, sizeof(void *));
        e->vh = (uint16_t **)cm_calloc(L, sizeof(void *));
        e->kd = (uint16_t **)cm_calloc(L, sizeof(void *));
        e->vd = (uint16_t **)cm_calloc(L, sizeof(void *));
        e->kv = (dak_kv_tiered *)cm_calloc(L, sizeof(dak_kv_tiered));
        for (uint32_t l = 0; l < L; l++) {
            if (hmalloc(e, (void **)&e->kh[l], kvb, err) || hmalloc(e, (void **)&e->vh[l], kvb, err) ||
                dmalloc(e, (void **)&e->kd[l], kvb, err) || dmalloc(e, (void **)&e->vd[l], kvb, err))
                goto fail;
            memset(e->kh[l], 0, kvb), memset(e->vh[l], 0, kvb);
            if (cudaMemset(e->kd[l], 0, kvb) != cudaSuccess || cudaMemset(e->vd[l], 0, kvb) != cudaSuccess) goto fail;
        }
    }
    {
        uint32_t Hm = e->Hq > H ? e->Hq : H;
        void **f[] = {(void **)&e->x, (void **)&e->cq, (void **)&e->ck, (void **)&e->cv, (void **)&e->co,
                      (void **)&e->c1, (void **)&e->cu, (void **)&e->cd, (void **)&e->logits, (void **)&e->ca,
                      (void **)&e->cb};
        size_t fb[] = {(size_t)B * H * 4,  (size_t)B * e->Hq * 4, (size_t)B * e->Hkv * 4, (size_t)B * e->Hkv * 4,
                       (size_t)B * H * 4,  (size_t)B * F * 4,     (size_t)B * F * 4,      (size_t)B * H * 4,
                       (size_t)B * e->Vp * 4, (size_t)B * (F > e->Vp ? F : e->Vp) * 4,
                       (size_t)B * (F > e->Vp ? F : e->Vp) * 4};
        for (int i = 0; i < 11; i++)
            if (dmalloc(e, f[i], fb[i], err)) goto fail;
        if (dmalloc(e, (void **)&e->hb, (size_t)B * Hm * 2, err) || dmalloc(e, (void **)&e->qb, (size_t)B * e->Hq * 2, err) ||
            dmalloc(e, (void **)&e->ab, (size_t)B * e->Hq * 2, err) || dmalloc(e, (void **)&e->fb, (size_t)B * F * 2, err) ||
            dmalloc(e, (void **)&e->prompt, (size_t)max_len * B * 4, err) || dmalloc(e, (void **)&e->tok, (size_t)B * 4, err) ||
            dmalloc(e, (void **)&e->hist, (size_t)max_len * B * 4, err))
            goto fail;
        int32_t *pt = (int32_t *)cm_malloc((size_t)max_len * B * 4);
        for (uint32_t t = 0; t < max_len; t++)
            for (uint32_t n = 0; n < B; n++) pt[(size_t)t * B + n] = dak_eng_prompt_token(seed, t, n, B, e->V);
        int bad = cudaMemcpy(e->prompt, pt, (size_t)max_len * B * 4, cudaMemcpyHostToDevice) != cudaSuccess;
        free(pt);
        if (bad || cudaMemset(e->tok, 0, B * 4) != cudaSuccess) goto fail;
    }
    if (cudaDeviceSynchronize() != cudaSuccess) {
        cm_fail(err, "engine: initialisation failed: %s", cudaGetErrorString(cudaGetLastError()));
        goto fail;
    }
    cudaFree(scratch);
    e->hbm_bytes -= (size_t)(F > e->Vp ? F : e->Vp) * (H > F ? H : F) * 2;
    *out = e;
    return 0;
fail:
    if (!err->msg[0]) cm_fail(err, "engine: CUDA call failed: %s", cudaGetErrorString(cudaGetLastError()));
    cudaFree(scratch);
    dak_engine_destroy(e);
    return -1;
}

/* ---- setup: views, launches, graphs -------------------------------------------------------------- */

static lin_t *LIN(dak_engine *e, uint32_t l, uint32_t j) { return &e->lin[l * DAK_ENG_NLIN + j]; }

/* prepares w's launches for B = b, C = c (fp32 [N][M]) */
static int prep_lin(dak_engine *e, lin_t *w, uint32_t rh, const uint16_t *b, float *c, uint16_t *stage, cm_err *err)
{
    dak_gemm_opts go;
    dak_gemm_opts_default(&go);
    go.pdl = e->o.gemm_pdl ? 1 : 0;
    w->rh = rh;
    if (e->mode == DAK_ENG_DIRECT || rh == 0) {
        if (dak_tiered_view(&w->view, w->M, w->K, rh, w->host_full, w->dev_full, 1, err)) return -1;
        return dak_gemm_prepare(e->g, &w->view, b, c, e->batch, &go, &w->l, err);
    }
    dak_tiered va, vb;
    if (rh == w->M) {
        if (dak_tiered_view(&va, w->M, w->K, 0, NULL, stage, 1, err)) return -1;
        return dak_gemm_prepare(e->g, &va, b, c, e->batch, &go, &w->la, err);
    }
    if (dak_tiered_view(&va, rh, w->K, 0, NULL, stage, 1, err) ||
        dak_tiered_view(&vb, w->M - rh, w->K, 0, NULL, w->dev_full + (size_t)rh * w->K, 1, err))
        return -1;
    if (dak_gemm_prepare(e->g, &va, b, e->ca, e->batch, &go, &w->la, err) ||
        dak_gemm_prepare(e->g, &vb, b, e->cb, e->batch, &go, &w->lb, err))
        return -1;
    return 0;
}

static int run_lin(dak_engine *e, lin_t *w, float *c, cm_err *err)
{
    if (w->l) return dak_gemm_run(w->l, e->st, err);
    if (w->la && !w->lb) return dak_gemm_run(w->la, e->st, err);
    if (dak_gemm_run(w->la, e->st, err) || dak_gemm_run(w->lb, e->st, err)) return -1;
    size_t n = (size_t)e->batch * w->M;
    k_join<<<grid_for(n), NTHR, 0, e->st>>>(c, e->ca, e->cb, w->rh, w->M, e->batch);
    ECU(cudaGetLastError());
    return 0;
}

/* the attention of layer l at position t (len t + 1) */
static int attn(dak_engine *e, uint32_t l, uint32_t t, cm_err *err)
{
    const dak_model_config *c = &e->m.cfg;
    uint32_t heads = (uint32_t)c->heads, kvh = (uint32_t)c->kv_heads, len = t + 1, B = e->batch;
    uint32_t bh = e->pl.batch_host[l];
    float scale = 1.0f / sqrtf(128.0f);
    dak_attn_plan p;
    if (e->mode == DAK_ENG_DIRECT || bh == 0) {
        if (dak_attn_plan_make(B, bh, heads, kvh, len, dak_attn_ctx_sms(e->a), NULL, &p, err)) return -1;
        return dak_attn_decode(e->a, &e->kv[l], e->qb, heads, len, scale, e->ab, &p, e->st, err);
    }
    size_t ent = (size_t)kvh * e->max_len * 128;
    dak_kv_tiered v;
    if (dak_kv_view(&v, bh, kvh, e->max_len, 0, NULL, NULL, e->sk[l % 2], e->sv[l % 2], err) ||
        dak_attn_plan_make(bh, 0, heads, kvh, len, dak_attn_ctx_sms(e->a), NULL, &p, err) ||
        dak_attn_decode(e->a, &v, e->qb, heads, len, scale, e->ab, &p, e->st, err))
        return -1;
    if (bh < B) {
        if (dak_kv_view(&v, B - bh, kvh, e->max_len, 0, NULL, NULL, e->kd[l] + bh * ent, e->vd[l] + bh * ent, err) ||
            dak_attn_plan_make(B - bh, 0, heads, kvh, len, dak_attn_ctx_sms(e->a), NULL, &p, err) ||
            dak_attn_decode(e->a, &v, e->qb + (size_t)bh * e->Hq, heads, len, scale, e->ab + (size_t)bh * e->Hq, &p,
                            e->st, err))
            return -1;
    }
    return 0;
}

/* prefetch: copies of layer l's host rows (l == L: lm_head's) and host KV entries into staging set l % 2 */
static int enqueue_copy(dak_engine *e, uint32_t l, uint32_t t, cm_err *err)
{
    int s = l % 2;
    ECU(cudaStreamWaitEvent(e->cp, l < 2 ? e->ev_start : e->ev_free[s], 0));
    if (l == e->L) {
        if (e->lm.rh)
            ECU(cudaMemcpyAsync(e->slm, e->lm.host_full, (size_t)e->lm.rh * e->lm.K * 2, cudaMemcpyHostToDevice, e->cp));
    } else {
        for (uint32_t j = 0; j < DAK_ENG_NLIN; j++) {
            lin_t *w = LIN(e, l, j);
            if (w->M && w->rh)
                ECU(cudaMemcpyAsync(e->sw[s][j], w->host_full, (size_t)w->rh * w->K * 2, cudaMemcpyHostToDevice, e->cp));
        }
        uint32_t bh = e->pl.batch_host[l];
        if (bh && t) {
            size_t pitch = (size_t)e->max_len * 256, rows = (size_t)bh * e->m.cfg.kv_heads;
            ECU(cudaMemcpy2DAsync(e->sk[s], pitch, e->kh[l], pitch, (size_t)t * 256, rows, cudaMemcpyHostToDevice, e->cp));
            ECU(cudaMemcpy2DAsync(e->sv[s], pitch, e->vh[l], pitch, (size_t)t * 256, rows, cudaMemcpyHostToDevice, e->cp));
        }
    }
    ECU(cudaEventRecord(e->ev_ready[s], e->cp));
    return 0;
}

static int enqueue_step(dak_engine *e, uint32_t t, cm_err *err)
{
    const dak_model_config *c = &e->m.cfg;
    uint32_t B = e->batch, H = e->H, L = e->L;
    int pf = e->mode == DAK_ENG_PREFETCH;
    const float eps = DAK_ENG_EPS;
    const int32_t *src = t < e->P ? e->prompt + (size_t)t * B : e->tok;
    k_embed<<<B, NTHR, 0, e->st>>>(e->x, src, e->opt ? e->emb_dev : e->emb_host, e->emb_dev,
                                   e->opt ? 0 : e->pl.embed_rows_host, e->opt ? e->pos_dev : NULL,
                                   t + DAK_ENG_OPT_POS_OFFSET, H, e->V);
    ECU(cudaGetLastError());
    if (pf) {
        ECU(cudaEventRecord(e->ev_start, e->st));
        if (enqueue_copy(e, 0, t, err)) return -1;
    }
    for (uint32_t l = 0; l < L; l++) {
        if (pf) {
            if (enqueue_copy(e, l + 1, t, err)) return -1;
            ECU(cudaStreamWaitEvent(e->st, e->ev_ready[l % 2], 0));
        }
        const float *prev_c = l ? e->cd : NULL, *prev_b = l ? LIN(e, l - 1, DAK_ENG_FC2)->bias : NULL;
        k_resid_norm<<<B, NTHR, 0, e->st>>>(e->x, prev_c, prev_b, e->n1g + (size_t)l * H,
                                            e->opt ? e->n1b + (size_t)l * H : NULL, e->hb, H, eps);
        ECU(cudaGetLastError());
        if (run_lin(e, LIN(e, l, DAK_ENG_Q), e->cq, err) || run_lin(e, LIN(e, l, DAK_ENG_K), e->ck, err) ||
            run_lin(e, LIN(e, l, DAK_ENG_V), e->cv, err))
            return -1;
        qkv_args a;
        memset(&a, 0, sizeof a);
        a.cq = e->cq, a.ck = e->ck, a.cv = e->cv;
        a.bq = LIN(e, l, DAK_ENG_Q)->bias, a.bk = LIN(e, l, DAK_ENG_K)->bias, a.bv = LIN(e, l, DAK_ENG_V)->bias;
        a.cs = e->cs, a.sn = e->sn, a.q = e->qb;
        a.k_host = e->kv[l].k_host_dev, a.v_host = e->kv[l].v_host_dev;
        a.k_dev = e->kv[l].k_dev, a.v_dev = e->kv[l].v_dev;
        if (pf && e->pl.batch_host[l]) a.k_stage = e->sk[l % 2], a.v_stage = e->sv[l % 2];
        a.heads = (uint32_t)c->heads, a.kvh = (uint32_t)c->kv_heads, a.max_len = e->max_len;
        a.bh = e->pl.batch_host[l], a.pos = t;
        k_qkv_post<<<dim3(B, a.heads + a.kvh), 64, 0, e->st>>>(a);
        ECU(cudaGetLastError());
        if (attn(e, l, t, err)) return -1;
        if (run_lin(e, LIN(e, l, DAK_ENG_O), e->co, err)) return -1;
        k_resid_norm<<<B, NTHR, 0, e->st>>>(e->x, e->co, LIN(e, l, DAK_ENG_O)->bias, e->n2g + (size_t)l * H,
                                            e->opt ? e->n2b + (size_t)l * H : NULL, e->hb, H, eps);
        ECU(cudaGetLastError());
        size_t nf = (size_t)B * e->F;
        if (run_lin(e, LIN(e, l, DAK_ENG_FC1), e->c1, err)) return -1;
        if (!e->opt && run_lin(e, LIN(e, l, DAK_ENG_UP), e->cu, err)) return -1;
        k_act<<<grid_for(nf), NTHR, 0, e->st>>>(e->c1, e->opt ? NULL : e->cu, LIN(e, l, DAK_ENG_FC1)->bias, e->fb, nf,
                                                e->F);
        ECU(cudaGetLastError());
        if (run_lin(e, LIN(e, l, DAK_ENG_FC2), e->cd, err)) return -1;
        if (pf) ECU(cudaEventRecord(e->ev_free[l % 2], e->st));
    }
    if (pf) ECU(cudaStreamWaitEvent(e->st, e->ev_ready[L % 2], 0));
    k_resid_norm<<<B, NTHR, 0, e->st>>>(e->x, e->cd, LIN(e, L - 1, DAK_ENG_FC2)->bias, e->nfg, e->opt ? e->nfb : NULL,
                                        e->hb, H, eps);
    ECU(cudaGetLastError());
    if (run_lin(e, &e->lm, e->logits, err)) return -1;
    k_argmax<<<B, NTHR, 0, e->st>>>(e->logits, e->Vp, e->V, e->tok, e->hist + (size_t)t * B);
    ECU(cudaGetLastError());
    if (pf) {
        ECU(cudaEventRecord(e->ev_cpdone, e->cp));
        ECU(cudaStreamWaitEvent(e->st, e->ev_cpdone, 0));
    }
    return 0;
}

extern "C" int dak_engine_setup(dak_engine *e, const dak_eng_place *pl, dak_eng_mode mode, uint32_t prompt,
                                uint32_t tokens, cm_err *err)
{
    uint32_t L = e->L, B = e->batch;
    if (prompt < 1 || (uint64_t)prompt + tokens > e->max_len)
        return cm_fail(err, "engine: prompt %u + tokens %u: expected prompt >= 1 and a sum <= %u", prompt, tokens,
                       e->max_len);
    if (pl->layers != L) return cm_fail(err, "engine: placement of %u layers for %u", pl->layers, L);
    if (mode != DAK_ENG_DIRECT && mode != DAK_ENG_PREFETCH) return cm_fail(err, "engine: mode %d", (int)mode);
    ECU(cudaDeviceSynchronize());
    free_graphs(e);
    free_launches(e);
    if (e->have_pl) dak_eng_place_free(&e->pl);
    /* copy the placement */
    dak_eng_place_zero(&e->m, &e->pl);
    e->have_pl = 1;
    memcpy(e->pl.rows_host, pl->rows_host, (size_t)L * DAK_ENG_NLIN * sizeof(uint32_t));
    memcpy(e->pl.batch_host, pl->batch_host, (size_t)L * sizeof(uint32_t));
    e->pl.lm_rows_host = pl->lm_rows_host, e->pl.embed_rows_host = pl->embed_rows_host;
    e->pl.host_bytes = pl->host_bytes, e->pl.host_weight_bytes = pl->host_weight_bytes;
    e->pl.host_kv_bytes = pl->host_kv_bytes;
    for (uint32_t l = 0; l < L; l++) {
        if (e->pl.batch_host[l] > B) return cm_fail(err, "engine: layer %u: %u host entries of %u", l, e->pl.batch_host[l], B);
        for (uint32_t j = 0; j < DAK_ENG_NLIN; j++) {
            uint32_t rh = e->pl.rows_host[l * DAK_ENG_NLIN + j];
            if (rh % 64 || rh > LIN(e, l, j)->M)
                return cm_fail(err, "engine: layer %u weight %u: %u host rows of %u (expected a multiple of 64)", l, j, rh,
                               LIN(e, l, j)->M);
        }
    }
    if (e->pl.lm_rows_host % 64 || e->pl.lm_rows_host > e->Vp || e->pl.embed_rows_host > e->V)
        return cm_fail(err, "engine: lm_head %u / embedding %u host rows out of range", e->pl.lm_rows_host,
                       e->pl.embed_rows_host);
    if (e->opt && e->pl.embed_rows_host) return cm_fail(err, "engine: OPT's embedding is tied (no gather op)");
    e->mode = mode, e->P = prompt, e->T = tokens, e->S = prompt + tokens, e->next = 0;
    /* staging (prefetch): allocated once at the largest shapes */
    if (mode == DAK_ENG_PREFETCH && !e->sk[0]) {
        size_t kvb = (size_t)B * e->m.cfg.kv_heads * e->max_len * 128 * 2;
        for (int s = 0; s < 2; s++) {
            for (uint32_t j = 0; j < DAK_ENG_NLIN; j++)
                if (LIN(e, 0, j)->M && dmalloc(e, (void **)&e->sw[s][j], (size_t)LIN(e, 0, j)->M * LIN(e, 0, j)->K * 2, err))
                    return -1;
            if (dmalloc(e, (void **)&e->sk[s], kvb, err) || dmalloc(e, (void **)&e->sv[s], kvb, err)) return -1;
        }
        if (dmalloc(e, (void **)&e->slm, (size_t)e->Vp * e->H * 2, err)) return -1;
    }
    /* views and launches */
    for (uint32_t l = 0; l < L; l++) {
        int s = l % 2;
        uint32_t *rh = &e->pl.rows_host[l * DAK_ENG_NLIN];
        if (prep_lin(e, LIN(e, l, DAK_ENG_Q), rh[DAK_ENG_Q], e->hb, e->cq, e->sw[s][DAK_ENG_Q], err) ||
            prep_lin(e, LIN(e, l, DAK_ENG_K), rh[DAK_ENG_K], e->hb, e->ck, e->sw[s][DAK_ENG_K], err) ||
            prep_lin(e, LIN(e, l, DAK_ENG_V), rh[DAK_ENG_V], e->hb, e->cv, e->sw[s][DAK_ENG_V], err) ||
            prep_lin(e, LIN(e, l, DAK_ENG_O), rh[DAK_ENG_O], e->ab, e->co, e->sw[s][DAK_ENG_O], err) ||
            prep_lin(e, LIN(e, l, DAK_ENG_FC1), rh[DAK_ENG_FC1], e->hb, e->c1, e->sw[s][DAK_ENG_FC1], err) ||
            (!e->opt && prep_lin(e, LIN(e, l, DAK_ENG_UP), rh[DAK_ENG_UP], e->hb, e->cu, e->sw[s][DAK_ENG_UP], err)) ||
            prep_lin(e, LIN(e, l, DAK_ENG_FC2), rh[DAK_ENG_FC2], e->fb, e->cd, e->sw[s][DAK_ENG_FC2], err))
            return -1;
        size_t ent = (size_t)e->m.cfg.kv_heads * e->max_len * 128;
        uint32_t bh = e->pl.batch_host[l];
        if (dak_kv_view(&e->kv[l], B, (uint32_t)e->m.cfg.kv_heads, e->max_len, bh, bh ? e->kh[l] : NULL,
                        bh ? e->vh[l] : NULL, bh < B ? e->kd[l] + bh * ent : NULL, bh < B ? e->vd[l] + bh * ent : NULL,
                        err))
            return -1;
    }
    if (prep_lin(e, &e->lm, e->pl.lm_rows_host, e->hb, e->logits, e->slm, err)) return -1;
    /* the attention's workspace grows outside the capture: one call per (layer, length) first */
    for (uint32_t t = 0; t < e->S; t++)
        for (uint32_t l = 0; l < L; l++)
            if (attn(e, l, t, err)) return -1;
    ECU(cudaStreamSynchronize(e->st));
    /* one graph per step */
    e->ge = (cudaGraphExec_t *)cm_calloc(e->S, sizeof(cudaGraphExec_t));
    for (uint32_t t = 0; t < e->S; t++) {
        ECU(cudaStreamBeginCapture(e->st, cudaStreamCaptureModeRelaxed));
        int rc = enqueue_step(e, t, err);
        cudaGraph_t g = NULL;
        cudaError_t ce = cudaStreamEndCapture(e->st, &g);
        if (rc) {
            if (g) cudaGraphDestroy(g);
            return -1;
        }
        if (ce != cudaSuccess) return cm_fail(err, "engine: capture of step %u: %s", t, cudaGetErrorString(ce));
        ce = cudaGraphInstantiate(&e->ge[t], g, 0);
        cudaGraphDestroy(g);
        if (ce != cudaSuccess) return cm_fail(err, "engine: instantiate step %u: %s", t, cudaGetErrorString(ce));
    }
    /* a fresh cache */
    for (uint32_t l = 0; l < L; l++) {
        size_t kvb = (size_t)B * e->m.cfg.kv_heads * e->max_len * 128 * 2;
        memset(e->kh[l], 0, kvb), memset(e->vh[l], 0, kvb);
        ECU(cudaMemset(e->kd[l], 0, kvb));
        ECU(cudaMemset(e->vd[l], 0, kvb));
    }
    ECU(cudaMemset(e->hist, 0xff, (size_t)e->max_len * B * 4));
    ECU(cudaDeviceSynchronize());
    return 0;
}

extern "C" int dak_engine_step(dak_engine *e, uint32_t t, int sync, cm_err *err)
{
    if (!e->ge || t != e->next || t >= e->S)
        return cm_fail(err, "engine: step %u: expected step %u of %u (after dak_engine_setup)", t, e->next, e->S);
    ECU(cudaGraphLaunch(e->ge[t], e->st));
    e->next++;
    if (sync) {
        cudaError_t c = cudaStreamSynchronize(e->st);
        if (c != cudaSuccess) return cm_fail(err, "engine: step %u failed: %s", t, cudaGetErrorString(c));
    }
    return 0;
}

extern "C" int dak_engine_logits(dak_engine *e, float *logits, cm_err *err)
{
    ECU(cudaStreamSynchronize(e->st));
    ECU(cudaMemcpy2D(logits, (size_t)e->V * 4, e->logits, (size_t)e->Vp * 4, (size_t)e->V * 4, e->batch,
                     cudaMemcpyDeviceToHost));
    return 0;
}

extern "C" int dak_engine_tokens(dak_engine *e, int32_t *tok, uint32_t steps, cm_err *err)
{
    if (steps > e->max_len) return cm_fail(err, "engine: %u steps of tokens, at most %u", steps, e->max_len);
    ECU(cudaStreamSynchronize(e->st));
    ECU(cudaMemcpy(tok, e->hist, (size_t)steps * e->batch * 4, cudaMemcpyDeviceToHost));
    return 0;
}

extern "C" int dak_engine_run(dak_engine *e, double *tpot_s, cm_err *err)
{
    if (!e->ge || e->next != 0) return cm_fail(err, "engine: run: expected a fresh setup");
    for (uint32_t t = 0; t < e->P; t++)
        if (dak_engine_step(e, t, 0, err)) return -1;
    ECU(cudaEventRecord(e->ev0, e->st));
    for (uint32_t t = e->P; t < e->S; t++)
        if (dak_engine_step(e, t, 0, err)) return -1;
    ECU(cudaEventRecord(e->ev1, e->st));
    cudaError_t c = cudaEventSynchronize(e->ev1);
    if (c != cudaSuccess) return cm_fail(err, "engine: run failed: %s", cudaGetErrorString(c));
    float ms = 0;
    ECU(cudaEventElapsedTime(&ms, e->ev0, e->ev1));
    *tpot_s = e->T ? ms / 1e3 / e->T : 0;
    return 0;
}
