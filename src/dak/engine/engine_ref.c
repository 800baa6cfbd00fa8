/* dak engine: the CPU reference of the whole forward (pure C, fp32 with bf16 rounding where the GPU
 * rounds; dot products and norm statistics in double).  For small models (tests). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dak/attention.h"
#include "dak/engine.h"

float dak_eng_round_bf16(float x) { return dak_bf16_to_f32(dak_f32_to_bf16(x)); }

void dak_eng_ref_layernorm(const float *x, const float *g, const float *b, uint32_t n, float eps, float *y)
{
    double s = 0, v = 0;
    for (uint32_t i = 0; i < n; i++) s += x[i];
    double mean = s / n;
    for (uint32_t i = 0; i < n; i++) v += ((double)x[i] - mean) * ((double)x[i] - mean);
    double inv = 1.0 / sqrt(v / n + (double)eps);
    for (uint32_t i = 0; i < n; i++) y[i] = (float)(((double)x[i] - mean) * inv * g[i] + b[i]);
}

void dak_eng_ref_rmsnorm(const float *x, const float *g, uint32_t n, float eps, float *y)
{
    double s = 0;
    for (uint32_t i = 0; i < n; i++) s += (double)x[i] * x[i];
    double inv = 1.0 / sqrt(s / n + (double)eps);
    for (uint32_t i = 0; i < n; i++) y[i] = (float)((double)x[i] * inv * g[i]);
}

void dak_eng_rope_cs(uint32_t pos, uint32_t i, float *c, float *s)
{
    double f = pow(DAK_ENG_ROPE_THETA, -2.0 * (double)i / (double)DAK_ENG_HEAD_DIM);
    double a = (double)pos * f;
    *c = (float)cos(a);
    *s = (float)sin(a);
}

void dak_eng_ref_rope(const float *x, uint32_t pos, float *y)
{
    const uint32_t h = DAK_ENG_HEAD_DIM / 2;
    for (uint32_t i = 0; i < h; i++) {
        float c, s;
        dak_eng_rope_cs(pos, i, &c, &s);
        float a = x[i], b = x[i + h];
        y[i] = a * c - b * s;
        y[i + h] = b * c + a * s;
    }
}

float dak_eng_ref_silu(float x) { return (float)((double)x / (1.0 + exp(-(double)x))); }

uint32_t dak_eng_ref_argmax(const float *v, uint32_t n)
{
    uint32_t best = 0;
    float bv = -INFINITY;
    int found = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (isnan(v[i])) continue;
        if (!found || v[i] > bv) bv = v[i], best = i, found = 1;
    }
    return best;
}

struct dak_eng_ref {
    dak_eng_model m;
    uint32_t batch, max_len, next_t;
    float *w[DAK_ENG_NLIN], *b[DAK_ENG_NLIN]; /* [layer] blocks of M*K / M */
    float *n1g, *n1b, *n2g, *n2b;             /* [layer][H] */
    float *embed, *pos, *lm, *nfg, *nfb;
    uint16_t *kc, *vc; /* [layer][batch][kvh][max_len][128] */
};

/* Rows [0, rows) of the engine's tensor as fp32 (cols each): from ck (matrices through bf16, as the GPU reads
 * them; vectors as they are), else synthetic (bf16-rounded, as the GPU fills them).  NULL with err on failure. */
static float *param(const dak_eng_model *m, const dak_eng_ckpt *ck, uint64_t seed, uint32_t tensor, uint64_t rows,
                    cm_err *err)
{
    dak_eng_param p;
    if (dak_eng_param_of(m, tensor, &p)) {
        cm_fail(err, "engine ref: tensor %u is no parameter", tensor);
        return NULL;
    }
    const size_t n = (size_t)(rows * p.cols);
    float *v = cm_malloc((n ? n : 1) * sizeof *v);
    int rc = 0;
    if (!ck) {
        for (size_t i = 0; i < n; i++) v[i] = dak_bf16_to_f32(dak_eng_param_bf16(seed, tensor, i, p.scale, p.offset));
    } else if (p.weight) {
        uint16_t *b = cm_malloc((n ? n : 1) * sizeof *b);
        rc = dak_eng_ckpt_bf16(ck, tensor, 0, rows, b, err);
        for (size_t i = 0; !rc && i < n; i++) v[i] = dak_bf16_to_f32(b[i]);
        free(b);
    } else {
        rc = dak_eng_ckpt_f32(ck, tensor, 0, 1, v, err);
    }
    if (rc) {
        free(v);
        return NULL;
    }
    return v;
}

void dak_eng_ref_destroy(dak_eng_ref *r)
{
    if (!r) return;
    for (int j = 0; j < DAK_ENG_NLIN; j++) free(r->w[j]), free(r->b[j]);
    free(r->n1g), free(r->n1b), free(r->n2g), free(r->n2b);
    free(r->embed), free(r->pos), free(r->lm), free(r->nfg), free(r->nfb);
    free(r->kc), free(r->vc);
    free(r);
}

int dak_eng_ref_create(dak_eng_ref **out, const dak_eng_model *m, uint32_t batch, uint32_t max_len, uint64_t seed,
                       const dak_eng_ckpt *ck, cm_err *err)
{
    *out = NULL;
    if (batch < 1 || max_len < 1) return cm_fail(err, "engine ref: batch %u, max_len %u: expected >= 1", batch, max_len);
    const dak_model_config *c = &m->cfg;
    uint32_t L = (uint32_t)c->layers, H = (uint32_t)c->hidden, V = (uint32_t)c->vocab;
    double elems = (double)c->layers * (4.0 * H * H + 3.0 * H * c->ffn) + 2.0 * V * H;
    if (elems > 4e8) return cm_fail(err, "engine ref: %.3g parameters: the CPU reference is for small models", elems);
    dak_eng_ref *r = cm_calloc(1, sizeof *r);
    r->m = *m, r->batch = batch, r->max_len = max_len;
    /* every parameter from the table; an absent one stays zero (Llama's norm betas and final bias) */
    float *v;
#define TAKE(dst, tensor, rows)                                                                                        \
    do {                                                                                                               \
        if (!(v = param(m, ck, seed, (tensor), (rows), err))) goto fail;                                               \
        (dst) = v;                                                                                                     \
    } while (0)
    for (uint32_t j = 0; j < DAK_ENG_NLIN; j++) {
        uint32_t M, K;
        dak_eng_lin_shape(m, j, &M, &K);
        if (!M) continue;
        r->w[j] = cm_malloc((size_t)L * M * K * sizeof(float));
        r->b[j] = cm_calloc((size_t)L * M, sizeof(float));
        for (uint32_t l = 0; l < L; l++) {
            float *w, *b;
            TAKE(w, dak_eng_tensor(l, j), M);
            memcpy(r->w[j] + (size_t)l * M * K, w, (size_t)M * K * sizeof(float));
            free(w);
            if (c->bias) {
                TAKE(b, dak_eng_tensor(l, DAK_ENG_I_BIAS0 + j), 1);
                memcpy(r->b[j] + (size_t)l * M, b, (size_t)M * sizeof(float));
                free(b);
            }
        }
    }
    r->n1g = cm_calloc((size_t)L * H, sizeof(float));
    r->n1b = cm_calloc((size_t)L * H, sizeof(float));
    r->n2g = cm_calloc((size_t)L * H, sizeof(float));
    r->n2b = cm_calloc((size_t)L * H, sizeof(float));
    for (uint32_t l = 0; l < L; l++) {
        float *p[4] = {r->n1g, r->n1b, r->n2g, r->n2b};
        uint32_t items[4] = {DAK_ENG_I_N1_G, DAK_ENG_I_N1_B, DAK_ENG_I_N2_G, DAK_ENG_I_N2_B};
        for (int q = 0; q < 4; q++) {
            dak_eng_param pp;
            if (dak_eng_param_of(m, dak_eng_tensor(l, items[q]), &pp) || !pp.present) continue;
            float *x;
            TAKE(x, dak_eng_tensor(l, items[q]), 1);
            memcpy(p[q] + (size_t)l * H, x, H * sizeof(float));
            free(x);
        }
    }
    TAKE(r->embed, DAK_ENG_T_EMBED, V);
    if (c->arch == DAK_ARCH_OPT) TAKE(r->pos, DAK_ENG_T_POS, max_len + DAK_ENG_OPT_POS_OFFSET);
    else TAKE(r->lm, DAK_ENG_T_LM, V);
    TAKE(r->nfg, DAK_ENG_T_NF_G, 1);
    if (c->arch == DAK_ARCH_OPT) TAKE(r->nfb, DAK_ENG_T_NF_B, 1);
    else r->nfb = cm_calloc(H, sizeof(float));
#undef TAKE
    size_t kvn = (size_t)L * batch * c->kv_heads * max_len * DAK_ENG_HEAD_DIM;
    r->kc = cm_calloc(kvn, sizeof(uint16_t));
    r->vc = cm_calloc(kvn, sizeof(uint16_t));
    *out = r;
    return 0;
fail:
    dak_eng_ref_destroy(r);
    return -1;
}

/* y[M] = W[M][K] x[K] (+ b) in double, to fp32 */
static void matvec(const float *W, const float *b, const float *x, uint32_t M, uint32_t K, float *y)
{
    for (uint32_t i = 0; i < M; i++) {
        const float *w = W + (size_t)i * K;
        double s = 0;
        for (uint32_t k = 0; k < K; k++) s += (double)w[k] * x[k];
        y[i] = (float)s + (b ? b[i] : 0.0f);
    }
}

static void round_vec(float *v, size_t n)
{
    for (size_t i = 0; i < n; i++) v[i] = dak_eng_round_bf16(v[i]);
}

static void norm(const dak_eng_ref *r, const float *x, const float *g, const float *b, float *y)
{
    uint32_t H = (uint32_t)r->m.cfg.hidden;
    if (r->m.cfg.arch == DAK_ARCH_OPT) dak_eng_ref_layernorm(x, g, b, H, DAK_ENG_EPS, y);
    else dak_eng_ref_rmsnorm(x, g, H, DAK_ENG_EPS, y);
    round_vec(y, H);
}

int dak_eng_ref_step(dak_eng_ref *r, uint32_t t, const int32_t *tok, float *logits, cm_err *err)
{
    const dak_model_config *c = &r->m.cfg;
    uint32_t B = r->batch, L = (uint32_t)c->layers, H = (uint32_t)c->hidden, F = (uint32_t)c->ffn,
             V = (uint32_t)c->vocab, NH = (uint32_t)c->heads, KVH = (uint32_t)c->kv_heads, D = DAK_ENG_HEAD_DIM;
    if (t != r->next_t || t >= r->max_len)
        return cm_fail(err, "engine ref: step %u: expected step %u (< max_len %u)", t, r->next_t, r->max_len);
    for (uint32_t n = 0; n < B; n++)
        if (tok[n] < 0 || (uint32_t)tok[n] >= V)
            return cm_fail(err, "engine ref: token %d of sequence %u: expected 0..%u", tok[n], n, V - 1);
    int opt = c->arch == DAK_ARCH_OPT;
    float *x = cm_malloc((size_t)B * H * sizeof(float)), *h = cm_malloc((size_t)H * sizeof(float));
    float *q = cm_malloc((size_t)NH * D * sizeof(float)), *kk = cm_malloc((size_t)KVH * D * sizeof(float));
    float *vv = cm_malloc((size_t)KVH * D * sizeof(float)), *y = cm_malloc((size_t)(F > H ? F : H) * sizeof(float));
    float *g = cm_malloc((size_t)F * sizeof(float)), *up = cm_malloc((size_t)F * sizeof(float));
    uint16_t *qb = cm_malloc((size_t)B * NH * D * sizeof(uint16_t));
    float *att = cm_malloc((size_t)B * NH * D * sizeof(float));
    int rc = 0;
    for (uint32_t n = 0; n < B; n++)
        for (uint32_t i = 0; i < H; i++) {
            float e = r->embed[(size_t)tok[n] * H + i];
            if (opt) e += r->pos[(size_t)(t + DAK_ENG_OPT_POS_OFFSET) * H + i];
            x[(size_t)n * H + i] = e;
        }
    size_t lkv = (size_t)B * KVH * r->max_len * D;
    for (uint32_t l = 0; l < L && !rc; l++) {
        uint16_t *kc = r->kc + l * lkv, *vc = r->vc + l * lkv;
        for (uint32_t n = 0; n < B; n++) {
            float *xn = x + (size_t)n * H;
            norm(r, xn, r->n1g + (size_t)l * H, r->n1b + (size_t)l * H, h);
            const float *bq = opt ? r->b[DAK_ENG_Q] + (size_t)l * NH * D : NULL;
            const float *bk = opt ? r->b[DAK_ENG_K] + (size_t)l * KVH * D : NULL;
            const float *bv = opt ? r->b[DAK_ENG_V] + (size_t)l * KVH * D : NULL;
            matvec(r->w[DAK_ENG_Q] + (size_t)l * NH * D * H, bq, h, NH * D, H, q);
            matvec(r->w[DAK_ENG_K] + (size_t)l * KVH * D * H, bk, h, KVH * D, H, kk);
            matvec(r->w[DAK_ENG_V] + (size_t)l * KVH * D * H, bv, h, KVH * D, H, vv);
            if (!opt) {
                for (uint32_t j = 0; j < NH; j++) dak_eng_ref_rope(q + j * D, t, q + j * D);
                for (uint32_t j = 0; j < KVH; j++) dak_eng_ref_rope(kk + j * D, t, kk + j * D);
            }
            for (uint32_t i = 0; i < NH * D; i++) qb[(size_t)n * NH * D + i] = dak_f32_to_bf16(q[i]);
            for (uint32_t j = 0; j < KVH; j++)
                for (uint32_t i = 0; i < D; i++) {
                    size_t o = (((size_t)n * KVH + j) * r->max_len + t) * D + i;
                    kc[o] = dak_f32_to_bf16(kk[j * D + i]);
                    vc[o] = dak_f32_to_bf16(vv[j * D + i]);
                }
        }
        if (dak_attn_decode_ref(kc, vc, qb, B, NH, KVH, r->max_len, t + 1, 1.0f / sqrtf((float)D), att, err)) {
            rc = -1;
            break;
        }
        round_vec(att, (size_t)B * NH * D);
        for (uint32_t n = 0; n < B; n++) {
            float *xn = x + (size_t)n * H;
            matvec(r->w[DAK_ENG_O] + (size_t)l * H * NH * D, opt ? r->b[DAK_ENG_O] + (size_t)l * H : NULL,
                   att + (size_t)n * NH * D, H, NH * D, y);
            for (uint32_t i = 0; i < H; i++) xn[i] += y[i];
            norm(r, xn, r->n2g + (size_t)l * H, r->n2b + (size_t)l * H, h);
            if (opt) {
                matvec(r->w[DAK_ENG_FC1] + (size_t)l * F * H, r->b[DAK_ENG_FC1] + (size_t)l * F, h, F, H, g);
                for (uint32_t i = 0; i < F; i++) g[i] = g[i] > 0 ? g[i] : 0.0f;
            } else {
                matvec(r->w[DAK_ENG_FC1] + (size_t)l * F * H, NULL, h, F, H, g);
                matvec(r->w[DAK_ENG_UP] + (size_t)l * F * H, NULL, h, F, H, up);
                for (uint32_t i = 0; i < F; i++) g[i] = dak_eng_ref_silu(g[i]) * up[i];
            }
            round_vec(g, F);
            matvec(r->w[DAK_ENG_FC2] + (size_t)l * H * F, opt ? r->b[DAK_ENG_FC2] + (size_t)l * H : NULL, g, H, F, y);
            for (uint32_t i = 0; i < H; i++) xn[i] += y[i];
        }
    }
    if (!rc) {
        for (uint32_t n = 0; n < B; n++) {
            norm(r, x + (size_t)n * H, r->nfg, r->nfb, h);
            matvec(opt ? r->embed : r->lm, NULL, h, V, H, logits + (size_t)n * V);
        }
        r->next_t++;
    }
    free(x), free(h), free(q), free(kk), free(vv), free(y), free(g), free(up), free(qb), free(att);
    return rc;
}
