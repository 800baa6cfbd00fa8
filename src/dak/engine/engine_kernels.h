/* The inference engine's small kernels (engine_kernels.cu), launched by engine.cu: synthetic parameter fills,
 * the residual add + norm, the embedding gather, q/k/v's bias / rotary / cache append, the activation, the
 * greedy argmax, the prefetch baseline's join.  Internal to src/dak/engine. */
#ifndef DAK_ENGINE_KERNELS_H
#define DAK_ENGINE_KERNELS_H
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#define NTHR 256

/* k_resid_norm holds a row in registers, NORM_VEC float4s a thread (engine_kernels.cu says why) */
#define NORM_VEC 8
static inline unsigned norm_threads(uint32_t H)
{
    uint32_t t = (H / 4 + NORM_VEC - 1) / NORM_VEC;
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
} qkv_args;

__global__ void k_fill_bf16(uint16_t *out, size_t n, size_t valid, uint64_t seed, uint32_t tensor, float scale,
                            float offset);
__global__ void k_fill_f32(float *out, size_t n, uint64_t seed, uint32_t tensor, float scale, float offset);
/* one block of norm_threads(H) threads a row */
__global__ void __launch_bounds__(1024)
    k_resid_norm(float *__restrict__ x, const float *__restrict__ c, const float *__restrict__ bias,
                 const float *__restrict__ gamma, const float *__restrict__ beta, uint16_t *__restrict__ out, uint32_t H,
                 float eps);
__global__ void k_embed(float *x, const int32_t *tok, const uint16_t *emb_host, const uint16_t *emb_dev,
                        uint32_t rows_host, uint32_t dev_from, const uint16_t *pos, uint32_t pos_row, uint32_t H,
                        uint32_t vocab);
__global__ void k_qkv_post(qkv_args a);
__global__ void k_act(const float *c, const float *bias, uint16_t *out, size_t n, uint32_t F, int gated);
__global__ void k_argmax(const float *logits, uint32_t ld, uint32_t vocab, int32_t *tok, int32_t *hist);
__global__ void k_noop(void);
__global__ void k_join(float *c, const float *ca, const float *cb, uint32_t ma, uint32_t M, uint32_t N);

#endif
