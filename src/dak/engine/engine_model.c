/* dak engine: shapes, synthetic-parameter scales and the plan mapping (pure C). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dak/engine.h"

void dak_eng_tiny_config(dak_arch arch, dak_model_config *c)
{
    memset(c, 0, sizeof *c);
    c->arch = arch;
    snprintf(c->model_type, sizeof c->model_type, "%s", arch == DAK_ARCH_OPT ? "opt" : "llama");
    snprintf(c->dtype, sizeof c->dtype, "bfloat16");
    c->elem_bytes = 2;
    c->hidden = 256;
    c->ffn = 512;
    c->layers = 2;
    c->heads = 2;
    c->kv_heads = arch == DAK_ARCH_OPT ? 2 : 1;
    c->head_dim = 128;
    c->vocab = 1000;
    c->max_pos = 2048;
    c->tie_embeddings = arch == DAK_ARCH_OPT;
    c->bias = arch == DAK_ARCH_OPT;
    c->final_norm = 1;
}

int dak_eng_model_make(const dak_model_config *cfg, uint32_t layers_override, dak_eng_model *m, cm_err *err)
{
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    dak_model_config *c = &m->cfg;
    if (layers_override) {
        if (layers_override > c->layers)
            return cm_fail(err, "engine: --layers %u: the model has %llu layers; expected 1..%llu", layers_override,
                           (unsigned long long)c->layers, (unsigned long long)c->layers);
        c->layers = layers_override;
    }
    if (c->arch != DAK_ARCH_OPT && c->arch != DAK_ARCH_LLAMA)
        return cm_fail(err, "engine: model_type '%s': expected opt or llama", c->model_type);
    if (c->head_dim < 2 || c->head_dim > DAK_ENG_REF_MAX_HEAD_DIM || c->head_dim % 2)
        return cm_fail(err, "engine: head_dim %llu: expected an even size up to %u (the GPU engine: %u only)",
                       (unsigned long long)c->head_dim, DAK_ENG_REF_MAX_HEAD_DIM, DAK_ENG_HEAD_DIM);
    if (c->layers < 1 || c->layers > 4096)
        return cm_fail(err, "engine: %llu layers: expected 1..4096", (unsigned long long)c->layers);
    if (c->heads < 1 || c->hidden != c->heads * c->head_dim)
        return cm_fail(err, "engine: hidden %llu, heads %llu: expected hidden = heads x head_dim %llu",
                       (unsigned long long)c->hidden, (unsigned long long)c->heads, (unsigned long long)c->head_dim);
    if (c->kv_heads < 1 || c->heads % c->kv_heads || c->heads / c->kv_heads > 8)
        return cm_fail(err, "engine: kv_heads %llu with %llu heads: expected a divisor with at most 8 heads a group",
                       (unsigned long long)c->kv_heads, (unsigned long long)c->heads);
    if (c->arch == DAK_ARCH_OPT && c->kv_heads != c->heads)
        return cm_fail(err, "engine: OPT with kv_heads %llu != heads %llu", (unsigned long long)c->kv_heads,
                       (unsigned long long)c->heads);
    if (c->ffn < 64 || c->ffn % 64 || c->ffn > (1u << 20))
        return cm_fail(err, "engine: ffn %llu: expected a positive multiple of 64", (unsigned long long)c->ffn);
    if (c->hidden > (1u << 15)) /* the norm kernel holds a row in one block's registers */
        return cm_fail(err, "engine: hidden %llu: expected at most 32768", (unsigned long long)c->hidden);
    if (c->vocab < 2 || c->vocab > (1u << 22))
        return cm_fail(err, "engine: vocab %llu: expected 2..4194304", (unsigned long long)c->vocab);
    if (c->arch == DAK_ARCH_OPT && !c->tie_embeddings)
        return cm_fail(err, "engine: OPT with untied embeddings: not supported (expected tie_word_embeddings)");
    if (c->arch == DAK_ARCH_LLAMA && c->bias)
        return cm_fail(err, "engine: Llama with biases: not supported");
    if (c->arch == DAK_ARCH_LLAMA && c->tie_embeddings)
        return cm_fail(err, "engine: Llama with tied embeddings: not supported");
    m->vocab_pad = (uint32_t)((c->vocab + 63) / 64 * 64);
    return 0;
}

int dak_eng_model_gpu_check(const dak_eng_model *m, cm_err *err)
{
    if (m->cfg.head_dim != DAK_ENG_HEAD_DIM)
        return cm_fail(err,
                       "engine: head_dim %llu: the GPU engine's kernels take %u only (the CPU reference, --backend cpu, "
                       "takes it)",
                       (unsigned long long)m->cfg.head_dim, DAK_ENG_HEAD_DIM);
    return 0;
}

void dak_eng_lin_shape(const dak_eng_model *m, uint32_t kind, uint32_t *M, uint32_t *K)
{
    const dak_model_config *c = &m->cfg;
    uint32_t h = (uint32_t)c->hidden, f = (uint32_t)c->ffn, q = (uint32_t)(c->heads * c->head_dim),
             kv = (uint32_t)(c->kv_heads * c->head_dim);
    *M = *K = 0;
    switch (kind) {
    case DAK_ENG_Q: *M = q, *K = h; break;
    case DAK_ENG_K:
    case DAK_ENG_V: *M = kv, *K = h; break;
    case DAK_ENG_O: *M = h, *K = q; break;
    case DAK_ENG_FC1: *M = f, *K = h; break;
    case DAK_ENG_UP:
        if (c->arch == DAK_ARCH_LLAMA) *M = f, *K = h;
        break;
    case DAK_ENG_FC2: *M = h, *K = f; break;
    default: break;
    }
}

float dak_eng_lin_scale(uint32_t K) { return (float)sqrt(3.0 / (double)K); }
float dak_eng_embed_scale(const dak_eng_model *m) { return (float)sqrt(3.0 / (double)m->cfg.hidden); }

void dak_eng_place_free(dak_eng_place *pl)
{
    free(pl->rows_host);
    free(pl->batch_host);
    memset(pl, 0, sizeof *pl);
}

void dak_eng_place_zero(const dak_eng_model *m, dak_eng_place *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->layers = (uint32_t)m->cfg.layers;
    pl->rows_host = cm_calloc((size_t)pl->layers * DAK_ENG_NLIN, sizeof *pl->rows_host);
    pl->batch_host = cm_calloc(pl->layers, sizeof *pl->batch_host);
}

/* Placement kinds of the planner's ops beyond the layer weights (DAK_ENG_Q..): not layer weights. */
enum { KIND_LM_HEAD = 100, KIND_EMBED = 101 };

static int lin_kind(const char *name)
{
    static const struct {
        const char *n;
        int k;
    } t[] = {{"q_proj", DAK_ENG_Q},    {"k_proj", DAK_ENG_K},  {"v_proj", DAK_ENG_V},
             {"out_proj", DAK_ENG_O},  {"o_proj", DAK_ENG_O},  {"fc1", DAK_ENG_FC1},
             {"gate_proj", DAK_ENG_FC1}, {"up_proj", DAK_ENG_UP}, {"fc2", DAK_ENG_FC2},
             {"down_proj", DAK_ENG_FC2}, {"lm_head", KIND_LM_HEAD}, {"embed", KIND_EMBED}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(name, t[i].n)) return t[i].k;
    return -1;
}

int dak_eng_place_map(const dak_eng_model *m, uint32_t batch, uint32_t max_len, const dak_op *ops, size_t n_ops,
                      const uint64_t *u, dak_eng_place *pl, cm_err *err)
{
    (void)max_len;
    dak_eng_place_zero(m, pl);
    uint32_t L = pl->layers;
    double eb = (double)m->cfg.elem_bytes;
    for (size_t i = 0; i < n_ops; i++) {
        const dak_op *op = &ops[i];
        uint64_t max_u = op->units * op->repeat;
        if (u[i] > max_u) {
            dak_eng_place_free(pl);
            return cm_fail(err, "engine plan: op '%s' has %llu host units; expected at most %llu", op->name,
                           (unsigned long long)u[i], (unsigned long long)max_u);
        }
        if (op->kind == DAK_OP_ATTENTION) {
            if (op->repeat != L || op->m != batch) {
                dak_eng_place_free(pl);
                return cm_fail(err, "engine plan: attention op of %u instances, %llu entries; expected %u and %u",
                               op->repeat, (unsigned long long)op->m, L, batch);
            }
            for (uint32_t l = 0; l < L; l++) {
                uint64_t q = dak_op_units_of(op, u[i], l);
                pl->batch_host[l] = (uint32_t)q;
                pl->host_kv_bytes += dak_op_host_bytes_inst(op, q);
            }
            continue;
        }
        int k = lin_kind(op->name);
        if (k < 0 || op->unit_rows != DAK_PLAN_UNIT_ROWS) {
            dak_eng_place_free(pl);
            return cm_fail(err, "engine plan: op '%s' (unit rows %llu): expected a known operation in units of %d rows",
                           op->name, (unsigned long long)op->unit_rows, DAK_PLAN_UNIT_ROWS);
        }
        if (k == KIND_LM_HEAD || k == KIND_EMBED) {
            uint64_t rows = u[i] * DAK_PLAN_UNIT_ROWS;
            if (k == KIND_LM_HEAD) {
                if (rows > m->vocab_pad) rows = m->vocab_pad;
                pl->lm_rows_host = (uint32_t)rows;
                pl->host_weight_bytes += (double)(rows < m->cfg.vocab ? rows : m->cfg.vocab) * m->cfg.hidden * eb;
            } else {
                if (rows > m->cfg.vocab) rows = m->cfg.vocab;
                pl->embed_rows_host = (uint32_t)rows;
                pl->host_weight_bytes += (double)rows * m->cfg.hidden * eb;
            }
            continue;
        }
        uint32_t M, K;
        dak_eng_lin_shape(m, (uint32_t)k, &M, &K);
        if (op->repeat != L || op->m != M || op->k != K) {
            dak_eng_place_free(pl);
            return cm_fail(err, "engine plan: op '%s' is %llu x %llu in %u layers; expected %u x %u in %u", op->name,
                           (unsigned long long)op->m, (unsigned long long)op->k, op->repeat, M, K, L);
        }
        for (uint32_t l = 0; l < L; l++) {
            uint64_t rows = dak_op_units_of(op, u[i], l) * DAK_PLAN_UNIT_ROWS;
            if (rows > M) rows = M; /* M is a multiple of 64 */
            pl->rows_host[(size_t)l * DAK_ENG_NLIN + k] = (uint32_t)rows;
            pl->host_weight_bytes += (double)rows * K * eb;
        }
    }
    pl->host_bytes = pl->host_weight_bytes + pl->host_kv_bytes;
    return 0;
}

void dak_eng_opts_default(dak_eng_opts *o)
{
    memset(o, 0, sizeof *o);
    o->gemm_pre_none = 1u << DAK_ENG_OP_O;
    o->gemm_stages = DAK_ENG_GEMM_STAGES;
    o->gemm_hbm_window = DAK_ENG_GEMM_HBM_WINDOW;
    o->gemm_whole_cluster = DAK_ENG_WHOLE_CLUSTER;
    o->gemm_whole_swap = DAK_ENG_WHOLE_SWAP;
    /* q / k / v post-processed inside the attention: the same bits, one kernel fewer a layer; OPT-6.7B b64 -1.2 %
     * (4 interleaved rounds on the H200), b8 and Llama-2-7B b8 within +-0.4 % (NOTES-dak-engine.md, twenty-fourth
     * session) */
    o->fuse_qkv = 1;
}

const char *dak_eng_op_name(dak_eng_op k)
{
    static const char *const names[DAK_ENG_NOPS] = {"embed", "norm", "qkv", "qkv_post", "attention", "o_proj",
                                                    "ffn_in", "act", "ffn_out", "lm_head", "argmax", "wait",
                                                    "evict"};
    return (unsigned)k < DAK_ENG_NOPS ? names[k] : "?";
}

void dak_eng_stamps_free(dak_eng_stamps *ops, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) free(ops[i].t), ops[i].t = NULL;
}

const char *dak_eng_mode_name(dak_eng_mode m)
{
    switch (m) {
    case DAK_ENG_DIRECT: return "direct";
    case DAK_ENG_PREFETCH: return "prefetch";
    case DAK_ENG_UM: return "um";
    }
    return "?";
}

uint32_t dak_eng_stack_parts(const dak_eng_model *m, uint32_t w, uint32_t part[3])
{
    switch (w) {
    case DAK_ENG_W_QKV: part[0] = DAK_ENG_Q, part[1] = DAK_ENG_K, part[2] = DAK_ENG_V; return 3;
    case DAK_ENG_W_O: part[0] = DAK_ENG_O; return 1;
    case DAK_ENG_W_IN: part[0] = DAK_ENG_FC1, part[1] = DAK_ENG_UP; return m->cfg.arch == DAK_ARCH_OPT ? 1 : 2;
    default: part[0] = DAK_ENG_FC2; return 1;
    }
}

void dak_eng_stack_shape(const dak_eng_model *m, uint32_t w, uint32_t *M, uint32_t *K)
{
    uint32_t part[3], np = dak_eng_stack_parts(m, w, part);
    *M = 0, *K = 0;
    for (uint32_t p = 0; p < np; p++) {
        uint32_t Mp, Kp;
        dak_eng_lin_shape(m, part[p], &Mp, &Kp);
        *M += Mp, *K = Kp;
    }
}

uint32_t dak_eng_stack_rows_host(const dak_eng_model *m, const dak_eng_place *pl, uint32_t l, uint32_t w)
{
    uint32_t part[3], np = dak_eng_stack_parts(m, w, part), rows = 0;
    for (uint32_t p = 0; p < np; p++) rows += pl->rows_host[(size_t)l * DAK_ENG_NLIN + part[p]];
    return rows;
}

double dak_eng_um_bytes(const dak_eng_model *m, const dak_eng_place *pl, double *moved)
{
    const double al = DAK_ENG_UM_ALIGN;
    double arena = 0, rows = 0;
    for (uint32_t l = 0; l < pl->layers; l++)
        for (uint32_t w = 0; w < DAK_ENG_NW; w++) {
            uint32_t M, K;
            dak_eng_stack_shape(m, w, &M, &K);
            double b = (double)dak_eng_stack_rows_host(m, pl, l, w) * K * 2;
            rows += b, arena += ceil(b / al) * al;
        }
    double lm = (double)pl->lm_rows_host * m->cfg.hidden * 2;
    rows += lm, arena += ceil(lm / al) * al;
    if (moved) *moved = rows;
    return arena;
}

/* The stored matrices' largest row count (DAK_ENG_W_QKV .. DAK_ENG_W_OUT and lm_head) */
static double max_rows(const dak_eng_model *m)
{
    double r = (double)m->vocab_pad;
    for (uint32_t w = 0; w < DAK_ENG_NW; w++) {
        uint32_t M, K;
        dak_eng_stack_shape(m, w, &M, &K);
        if (M > r) r = M;
    }
    return r;
}

void dak_eng_need_bytes(const dak_eng_model *m, uint32_t B, uint32_t S, const dak_eng_place *pl, double *hbm,
                        double *host, double *staging)
{
    const dak_model_config *c = &m->cfg;
    const uint32_t L = (uint32_t)c->layers;
    const double H = (double)c->hidden, F = (double)c->ffn, Hq = (double)c->heads * c->head_dim;
    const double Hkv = (double)c->kv_heads * c->head_dim, V = (double)c->vocab, Vp = (double)m->vocab_pad;
    const double entry = 2.0 * Hkv * S * 2; /* one sequence's K and V in one layer */
    const int llama = c->arch == DAK_ARCH_LLAMA;
    double h = 0, d = 0, layer_host_max = 0, kv_host_max = 0, big = 0;
    for (uint32_t l = 0; l < L; l++) {
        double lh = 0;
        for (uint32_t j = 0; j < DAK_ENG_NLIN; j++) {
            uint32_t M, K;
            dak_eng_lin_shape(m, j, &M, &K);
            double rh = pl ? pl->rows_host[(size_t)l * DAK_ENG_NLIN + j] : M;
            lh += rh * K * 2;
            d += (pl ? M - rh : M) * K * 2.0 + (c->bias ? M * 4.0 : 0);
        }
        double bh = pl ? pl->batch_host[l] : B;
        h += lh + bh * entry;
        d += (pl ? B - bh : B) * entry;
        if (lh > layer_host_max) layer_host_max = lh;
        if (bh * entry > kv_host_max) kv_host_max = bh * entry;
    }
    double lm_rows = pl ? pl->lm_rows_host : Vp;
    h += lm_rows * H * 2, d += (pl ? Vp - lm_rows : Vp) * H * 2;
    if (llama) {
        double er = pl ? pl->embed_rows_host : V;
        h += er * H * 2, d += (pl ? V - er : V) * H * 2 + 2.0 * S * 64 * 4; /* + rotary tables */
    } else {
        d += V * H * 2 + (S + 2.0) * H * 2; /* the tied embedding's row-major copy for the gather, positions */
    }
    d += (4.0 * L + 2) * H * 4; /* norms */
    { /* the largest matrix: [q;k;v], o, the FFN's input and output, lm_head */
        double sz[5] = {(Hq + 2 * Hkv) * H, H * Hq, F * (llama ? 2 : 1) * H, H * F, Vp * H};
        for (int i = 0; i < 5; i++)
            if (sz[i] * 2 > big) big = sz[i] * 2;
    }
    d += 2 * big; /* the fill's row-major scratch and packed matrix (freed after creation) */
    d += (double)B * (H * 3 + Hq + 2 * Hkv + F * (llama ? 2 : 1) + Vp + 2 * max_rows(m)) * 4 + /* fp32 */
         (double)B * ((Hq > H ? Hq : H) + 2 * Hq + F) * 2 + (double)S * B * 4 * 2 + /* bf16, tokens */
         64e6; /* the GEMM and attention contexts' workspaces */
    *hbm = d, *host = h;
    *staging = 2 * (layer_host_max + kv_host_max) + lm_rows * H * 2;
}
