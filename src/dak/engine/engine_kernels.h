/* The inference engine's small kernels (engine_kernels.cu), launched by engine.cu: synthetic parameter fills,
 * the residual add + norm, the embedding gather, q/k/v's bias / rotary / cache append, the activation, the
 * greedy argmax, the prefetch baseline's join.  Internal to src/dak/engine. */
#ifndef DAK_ENGINE_KERNELS_H
#define DAK_ENGINE_KERNELS_H
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#define NTHR 256

/* The norm holds a row in registers, norm_vec(H) float4s a thread (engine_kernels.cu says why): 1 or 2 with its
 * weights held too (k_resid_norm1, k_resid_norm2: rows of up to 4096 and 8192), else NORM_VEC (k_resid_norm). */
#define NORM_VEC 8
static inline uint32_t norm_vec(uint32_t H, int narrow)
{
    return narrow ? NORM_VEC : H <= 4096 ? 1u : H <= 8192 ? 2u : NORM_VEC;
}
/* narrow: NORM_VEC float4s a thread whatever H (the kernel before the twenty-second session; dak_eng_opts.norm_narrow) */
static inline unsigned norm_threads(uint32_t H, int narrow)
{
    uint32_t v = norm_vec(H, narrow), t = (H / 4 + v - 1) / v;
    t = (t + 31) / 32 * 32;
    return t < 128 ? 128 : t;
}

static inline unsigned grid_for(size_t n)
{
    size_t g = (n + NTHR - 1) / NTHR;
    return (unsigned)(g > 4096 ? 4096 : (g ? g : 1));
}

typedef struct {
    const float *c;                  /* the stacked GEMM's output [N][ld]: q (heads*128), k, v (kvh*128 each) */
    const float *bias;               /* the stacked bias [ld] or NULL */
    uint32_t ld;
    const float *cs, *sn;            /* rotary tables [max_len][64] or NULL */
    uint16_t *q;                     /* [N][heads][128] */
    uint16_t *k_host, *v_host;       /* host tier as the device maps it: [bh][kvh][max_len][128] */
    uint16_t *k_dev, *v_dev;         /* HBM tier: entries bh.. */
    uint16_t *k_stage, *v_stage;     /* prefetch: host entries' staging copy, or NULL */
    uint32_t heads, kvh, max_len, bh, pos;
    uint64_t *ts; /* dak_eng_opts.diag_times: DAK_ENG_QKVP_STAMPS words a CTA (NULL: none) */
} qkv_args;

__global__ void k_fill_bf16(uint16_t *out, size_t n, size_t valid, uint64_t seed, uint32_t tensor, float scale,
                            float offset);
__global__ void k_fill_f32(float *out, size_t n, uint64_t seed, uint32_t tensor, float scale, float offset);
/* one block of norm_threads(H) threads a row; the kernel for norm_vec(H) (resid_norm_kernel) */
#define RESID_NORM_DECL(name)                                                                                          \
    __global__ void __launch_bounds__(1024)                                                                            \
        name(float *__restrict__ x, const float *__restrict__ c, const float *__restrict__ bias,                       \
             const float *__restrict__ gamma, const float *__restrict__ beta, uint16_t *__restrict__ out, uint32_t H,  \
             float eps, uint64_t *ts, uint32_t trig);
RESID_NORM_DECL(k_resid_norm1)
RESID_NORM_DECL(k_resid_norm2)
RESID_NORM_DECL(k_resid_norm)
static inline const void *resid_norm_kernel(uint32_t H, int narrow)
{
    uint32_t v = norm_vec(H, narrow);
    return v == 1 ? (const void *)k_resid_norm1 : v == 2 ? (const void *)k_resid_norm2 : (const void *)k_resid_norm;
}
__global__ void k_embed(float *x, const int32_t *tok, const uint16_t *emb_host, const uint16_t *emb_dev,
                        uint32_t rows_host, uint32_t dev_from, const uint16_t *pos, uint32_t pos_row, uint32_t H,
                        uint32_t vocab);
__global__ void k_qkv_post(qkv_args a);
__global__ void k_act(const float *c, const float *bias, uint16_t *out, size_t n, uint32_t F, int gated, uint64_t *ts);
__global__ void k_argmax(const float *logits, uint32_t ld, uint32_t vocab, int32_t *tok, int32_t *hist);
__global__ void k_noop(void);
__global__ void k_join(float *c, const float *ca, const float *cb, uint32_t ma, uint32_t M, uint32_t N);

#endif
