/* dak engine: the CPU reference of the whole forward (pure C, fp32 with bf16 rounding where the GPU
 * rounds; dot products and norm statistics in double).  For small models (tests). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/threads.h"
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

void dak_eng_rope_cs(uint32_t pos, uint32_t i, uint32_t head_dim, float *c, float *s)
{
    double f = pow(DAK_ENG_ROPE_THETA, -2.0 * (double)i / (double)head_dim);
    double a = (double)pos * f;
    *c = (float)cos(a);
    *s = (float)sin(a);
}

void dak_eng_ref_rope(const float *x, uint32_t pos, uint32_t head_dim, float *y)
{
    const uint32_t h = head_dim / 2;
    for (uint32_t i = 0; i < h; i++) {
        float c, s;
        dak_eng_rope_cs(pos, i, head_dim, &c, &s);
        const float a = x[i], b = x[i + h]; /* (the GPU's arithmetic: dak/attention.h) */
        y[i] = dak_attn_rope_lo(a, b, c, s);
        y[i + h] = dak_attn_rope_hi(a, b, c, s);
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
    size_t kvn = (size_t)L * batch * c->kv_heads * max_len * c->head_dim;
    r->kc = cm_calloc(kvn, sizeof(uint16_t));
    r->vc = cm_calloc(kvn, sizeof(uint16_t));
    *out = r;
    return 0;
fail:
    dak_eng_ref_destroy(r);
    return -1;
}

/* ---- Y = W X for a batch: every sum as the one-vector form (double, k ascending), eight sequences at a time ----
 * The reference read each weight once a sequence (B passes over W); here a row of W is read once for eight
 * sequences, whose eight sums go side by side (the compiler may vectorise across the sequences; no sum is
 * reassociated, so the bits are those of one sum at a time), and the rows are split over threads. */

#define MM_SEQ 8u                          /* at most this many sequences' sums share a pass over a row of W */
#define MM_THREAD_MACS ((uint64_t)1 << 20) /* multiply-adds worth a thread (~0.3-1 ms; starting one costs ~35 us) */
#define MM_MAX_THREADS 8u

typedef struct {
    const float *W, *b;
    const double *xT; /* [K][Bp]: the sequences as doubles (exact), padded with zeros to Bp, a multiple of MM_SEQ */
    uint32_t K, B, Bp, i0, i1;
    float *y;
    size_t ldy;
} mm_part;

/* s[j] = w . x(column j) for `width` columns of xT (a constant where inlined: the loop over them unrolls) */
static inline void mm_block(const float *w, const double *x, uint32_t K, uint32_t Bp, double *s, const uint32_t width)
{
    for (uint32_t j = 0; j < width; j++) s[j] = 0;
    for (uint32_t k = 0; k < K; k++, x += Bp)
        for (uint32_t j = 0; j < width; j++) s[j] += (double)w[k] * x[j]; /* as (double)w * (double)x before */
}

/* AVX2 where the CPU has it (four doubles a vector instead of two), chosen at load time; AVX2 without FMA, and the
 * build contracts no multiply-add (ISO C11), so the bits are the baseline's */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
static void *mm_rows(void *arg)
{
    const mm_part *p = arg;
    double s[MM_SEQ];
    for (uint32_t i = p->i0; i < p->i1; i++) {
        const float *w = p->W + (size_t)i * p->K;
        const float bi = p->b ? p->b[i] : 0.0f;
        for (uint32_t n0 = 0; n0 < p->B; n0 += MM_SEQ) {
            const uint32_t left = p->B - n0; /* the last block: the fewest columns that cover what is left */
            const uint32_t width = left > 4 ? MM_SEQ : left > 2 ? 4u : left;
            switch (width) {
            case 1: mm_block(w, p->xT + n0, p->K, p->Bp, s, 1); break;
            case 2: mm_block(w, p->xT + n0, p->K, p->Bp, s, 2); break;
            case 4: mm_block(w, p->xT + n0, p->K, p->Bp, s, 4); break;
            default: mm_block(w, p->xT + n0, p->K, p->Bp, s, MM_SEQ); break;
            }
            for (uint32_t j = 0; j < width && j < left; j++) p->y[(size_t)(n0 + j) * p->ldy + i] = (float)s[j] + bi;
        }
    }
    return NULL;
}

/* y[n][i] = W[i][:] . x[n][:] (+ b[i]) for n < B, i < M: x rows ldx apart, y rows ldy apart (fp32) */
static void matmul(const float *W, const float *b, const float *x, size_t ldx, uint32_t B, uint32_t M, uint32_t K,
                   float *y, size_t ldy)
{
    const uint32_t Bp = (B + MM_SEQ - 1) / MM_SEQ * MM_SEQ;
    double *xT = cm_calloc((size_t)K * Bp, sizeof(double));
    for (uint32_t n = 0; n < B; n++)
        for (uint32_t k = 0; k < K; k++) xT[(size_t)k * Bp + n] = x[(size_t)n * ldx + k];
    uint64_t T = (uint64_t)M * K * B / MM_THREAD_MACS; /* threads the work is worth */
    if (T > 1) {
        const uint32_t cpus = cm_online_cpus(); /* (a file read: only where threads are worth it) */
        T = T < cpus ? T : cpus;
        T = T < MM_MAX_THREADS ? T : MM_MAX_THREADS;
        T = T < M ? T : M;
    }
    if (T < 1) T = 1;
    mm_part part[MM_MAX_THREADS];
    for (uint32_t t = 0; t < T; t++)
        part[t] = (mm_part){W, b, xT, K, B, Bp, (uint32_t)((uint64_t)M * t / T), (uint32_t)((uint64_t)M * (t + 1) / T),
                            y, ldy};
    cm_run_threads((uint32_t)T, mm_rows, part, sizeof part[0]);
    free(xT);
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
             V = (uint32_t)c->vocab, NH = (uint32_t)c->heads, KVH = (uint32_t)c->kv_heads, D = (uint32_t)c->head_dim;
    if (t != r->next_t || t >= r->max_len)
        return cm_fail(err, "engine ref: step %u: expected step %u (< max_len %u)", t, r->next_t, r->max_len);
    for (uint32_t n = 0; n < B; n++)
        if (tok[n] < 0 || (uint32_t)tok[n] >= V)
            return cm_fail(err, "engine ref: token %d of sequence %u: expected 0..%u", tok[n], n, V - 1);
    int opt = c->arch == DAK_ARCH_OPT;
    /* every buffer holds the whole batch, a sequence a row */
    float *x = cm_malloc((size_t)B * H * sizeof(float)), *h = cm_malloc((size_t)B * H * sizeof(float));
    float *q = cm_malloc((size_t)B * NH * D * sizeof(float)), *kk = cm_malloc((size_t)B * KVH * D * sizeof(float));
    float *vv = cm_malloc((size_t)B * KVH * D * sizeof(float)), *y = cm_malloc((size_t)B * H * sizeof(float));
    float *g = cm_malloc((size_t)B * F * sizeof(float)), *up = cm_malloc((size_t)B * F * sizeof(float));
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
        for (uint32_t n = 0; n < B; n++)
            norm(r, x + (size_t)n * H, r->n1g + (size_t)l * H, r->n1b + (size_t)l * H, h + (size_t)n * H);
        const float *bq = opt ? r->b[DAK_ENG_Q] + (size_t)l * NH * D : NULL;
        const float *bk = opt ? r->b[DAK_ENG_K] + (size_t)l * KVH * D : NULL;
        const float *bv = opt ? r->b[DAK_ENG_V] + (size_t)l * KVH * D : NULL;
        matmul(r->w[DAK_ENG_Q] + (size_t)l * NH * D * H, bq, h, H, B, NH * D, H, q, NH * D);
        matmul(r->w[DAK_ENG_K] + (size_t)l * KVH * D * H, bk, h, H, B, KVH * D, H, kk, KVH * D);
        matmul(r->w[DAK_ENG_V] + (size_t)l * KVH * D * H, bv, h, H, B, KVH * D, H, vv, KVH * D);
        for (uint32_t n = 0; n < B; n++) {
            float *qn = q + (size_t)n * NH * D, *kn = kk + (size_t)n * KVH * D, *vn = vv + (size_t)n * KVH * D;
            if (!opt) {
                for (uint32_t j = 0; j < NH; j++) dak_eng_ref_rope(qn + j * D, t, D, qn + j * D);
                for (uint32_t j = 0; j < KVH; j++) dak_eng_ref_rope(kn + j * D, t, D, kn + j * D);
            }
            for (uint32_t i = 0; i < NH * D; i++) qb[(size_t)n * NH * D + i] = dak_f32_to_bf16(qn[i]);
            for (uint32_t j = 0; j < KVH; j++)
                for (uint32_t i = 0; i < D; i++) {
                    size_t o = (((size_t)n * KVH + j) * r->max_len + t) * D + i;
                    kc[o] = dak_f32_to_bf16(kn[j * D + i]);
                    vc[o] = dak_f32_to_bf16(vn[j * D + i]);
                }
        }
        if (dak_attn_decode_ref(kc, vc, qb, B, NH, KVH, D, r->max_len, t + 1, 1.0f / sqrtf((float)D), att, err)) {
            rc = -1;
            break;
        }
        round_vec(att, (size_t)B * NH * D);
        matmul(r->w[DAK_ENG_O] + (size_t)l * H * NH * D, opt ? r->b[DAK_ENG_O] + (size_t)l * H : NULL, att, NH * D, B,
               H, NH * D, y, H);
        for (size_t i = 0; i < (size_t)B * H; i++) x[i] += y[i];
        for (uint32_t n = 0; n < B; n++)
            norm(r, x + (size_t)n * H, r->n2g + (size_t)l * H, r->n2b + (size_t)l * H, h + (size_t)n * H);
        if (opt) {
            matmul(r->w[DAK_ENG_FC1] + (size_t)l * F * H, r->b[DAK_ENG_FC1] + (size_t)l * F, h, H, B, F, H, g, F);
            for (size_t i = 0; i < (size_t)B * F; i++) g[i] = g[i] > 0 ? g[i] : 0.0f;
        } else {
            matmul(r->w[DAK_ENG_FC1] + (size_t)l * F * H, NULL, h, H, B, F, H, g, F);
            matmul(r->w[DAK_ENG_UP] + (size_t)l * F * H, NULL, h, H, B, F, H, up, F);
            for (size_t i = 0; i < (size_t)B * F; i++) g[i] = dak_eng_ref_silu(g[i]) * up[i];
        }
        round_vec(g, (size_t)B * F);
        matmul(r->w[DAK_ENG_FC2] + (size_t)l * H * F, opt ? r->b[DAK_ENG_FC2] + (size_t)l * H : NULL, g, F, B, H, F, y,
               H);
        for (size_t i = 0; i < (size_t)B * H; i++) x[i] += y[i];
    }
    if (!rc) {
        for (uint32_t n = 0; n < B; n++) norm(r, x + (size_t)n * H, r->nfg, r->nfb, h + (size_t)n * H);
        matmul(opt ? r->embed : r->lm, NULL, h, H, B, V, H, logits, V);
        r->next_t++;
    }
    free(x), free(h), free(q), free(kk), free(vv), free(y), free(g), free(up), free(qb), free(att);
    return rc;
}
