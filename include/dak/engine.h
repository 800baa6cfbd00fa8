/* dak's inference engine (seed 003, Sec. 5 / SPEC dak item 7): greedy decoding of OPT- and
 * Llama-shaped models, with synthetic weights or a Hugging Face checkpoint (safetensors, dak_eng_ckpt
 * below), one CUDA graph per step over a static KV
 * cache, weights and KV cache offloaded per operation by the greedy planner (dak/planner.h) and
 * read in place from host memory by the split GEMM (dak/gemm.h) and the split attention
 * (dak/attention.h).
 *
 * Model step (decode, one token per sequence, batch N, all sequences at the same position t):
 *   OPT:   x = emb[tok] + pos[t + 2]; per layer: h = LN1(x); q,k,v = W h + b; K/V[t] = k, v;
 *          a = attn(q, K/V[0..t]); x += Wo a + bo; h = LN2(x); x += W2 relu(W1 h + b1) + b2;
 *          logits = emb LN_f(x)  (lm_head tied to the token embedding).
 *   Llama: x = emb[tok]; per layer: h = RMS1(x); q,k = rope(W h, t), v = W h; K/V[t] = k, v;
 *          a = attn(q, ..) (GQA: kv_heads); x += Wo a; h = RMS2(x); x += Wd (silu(Wg h) * (Wu h));
 *          logits = W_lm RMS_f(x).
 *   Rotary: HF "rotate half", theta 10000, heads of D (128 on the GPU; any even D up to 256 on the CPU): for
 *          i < D/2, f = theta^(-2i/D), a = t f, y[i] = x[i] cos a - x[i+D/2] sin a, y[i+D/2] = x[i+D/2] cos a + x[i] sin a.
 *   Norm eps 1e-5.  Attention scale 1/sqrt(D).  Next token = argmax of the real vocab's logits
 *   (ties: the lowest index), on the GPU.
 * Precision (the CPU reference rounds at the same points): residual stream fp32; every GEMM input
 * bf16 (norm outputs, attention output, activations); GEMM outputs fp32 (+ bias in fp32); q and
 * the cache's k, v bf16; attention output bf16.
 *
 * Synthetic weights: every parameter is bf16(offset + scale * u), u = dak_eng_uniform(seed, tensor,
 * index) in [-1, 1); linear weights scale sqrt(3 / K) (unit output variance), biases 0.05,
 * norm gains 1 + 0.1 u, LayerNorm biases 0.05 u, embeddings sqrt(3 / hidden) (OPT's tied lm_head
 * gives logits of unit variance), positions 0.05.  The GPU fills them with the same arithmetic the
 * CPU reference uses (one rounded multiply and add, no fused multiply-add).
 *
 * Pure C parts (CPU builds, CI): the shapes, the plan mapping, the CPU reference.  The GPU engine
 * (dak_engine_*) reports "not built (configured without CUDA)" without CUDA. */
#ifndef DAK_ENGINE_H
#define DAK_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "common/error.h"
#include "common/hash.h"
#include "common/hd.h"
#include "dak/bf16.h"
#include "dak/model_config.h"
#include "dak/planner.h"
#include "dak/safetensors.h"
#ifdef __cplusplus
}
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define DAK_ENG_HEAD_DIM 128u          /* the GPU engine's head size (its kernels' only one) */
#define DAK_ENG_REF_MAX_HEAD_DIM 256u  /* the CPU reference's largest (any even size up to it) */
#define DAK_ENG_EPS 1e-5f
#define DAK_ENG_ROPE_THETA 10000.0
#define DAK_ENG_OPT_POS_OFFSET 2u

/* Linear weights of a layer (index into dak_eng_place.rows_host). */
enum {
    DAK_ENG_Q = 0,
    DAK_ENG_K,
    DAK_ENG_V,
    DAK_ENG_O,
    DAK_ENG_FC1, /* OPT fc1, Llama gate_proj */
    DAK_ENG_UP,  /* Llama up_proj (unused for OPT) */
    DAK_ENG_FC2, /* OPT fc2, Llama down_proj */
    DAK_ENG_NLIN
};

/* Tensor ids of the synthetic parameters. */
enum {
    DAK_ENG_T_EMBED = 1,
    DAK_ENG_T_POS = 2,
    DAK_ENG_T_LM = 3,
    DAK_ENG_T_NF_G = 4,
    DAK_ENG_T_NF_B = 5,
    DAK_ENG_T_PROMPT = 6,
    DAK_ENG_T_LAYER0 = 64 /* layer l, item j: 64 + 32 l + j */
};
/* Items of a layer (the linear kinds above are items 0..6). */
enum {
    DAK_ENG_I_BIAS0 = 8, /* bias of linear kind j: item 8 + j */
    DAK_ENG_I_N1_G = 16,
    DAK_ENG_I_N1_B,
    DAK_ENG_I_N2_G,
    DAK_ENG_I_N2_B
};
static inline CM_HD uint32_t dak_eng_tensor(uint32_t layer, uint32_t item)
{
    return DAK_ENG_T_LAYER0 + 32u * layer + item;
}

/* splitmix64 finaliser (common/hash.h) */
static inline CM_HD uint64_t dak_eng_mix(uint64_t z) { return cm_mix64(z); }
/* Uniform in [-1, 1) with 24 bits (exact in fp32). */
static inline CM_HD float dak_eng_uniform(uint64_t seed, uint32_t tensor, uint64_t index)
{
    uint64_t h = dak_eng_mix(dak_eng_mix(seed ^ ((uint64_t)tensor << 40)) + index);
    return (float)(int32_t)((uint32_t)(h >> 40) - 0x800000u) * (1.0f / 8388608.0f);
}
/* bf16 bits of offset + scale * u, rounded to nearest even (one rounded multiply, one rounded add). */
static inline CM_HD uint16_t dak_eng_param_bf16(uint64_t seed, uint32_t tensor, uint64_t index, float scale,
                                                    float offset)
{
    float u = dak_eng_uniform(seed, tensor, index);
#ifdef __CUDA_ARCH__
    float v = __fadd_rn(offset, __fmul_rn(scale, u));
#else
    volatile float p = scale * u;
    float v = offset + p;
#endif
    return dak_f32_to_bf16(v);
}

/* ---- shapes ---------------------------------------------------------------------------------- */

/* The engine's view of a config: checks what this version supports (an even head_dim up to 256, hidden =
 * heads x head_dim, ffn a multiple of 64, kv_heads dividing heads with a group <= 8, 1 <= layers; the GPU
 * engine, dak_engine_create, needs head_dim 128)
 * and gives the padded vocabulary (a multiple of 64; rows past vocab are zero). */
typedef struct {
    dak_model_config cfg; /* layers already overridden */
    uint32_t vocab_pad;
} dak_eng_model;

int dak_eng_model_make(const dak_model_config *cfg, uint32_t layers_override /* 0: keep */, dak_eng_model *m,
                       cm_err *err);
/* 0 when the GPU engine (dak_engine_create) can run m (head_dim 128), else -1 with a message. */
int dak_eng_model_gpu_check(const dak_eng_model *m, cm_err *err);
/* The tiny test models: 2 layers, hidden 256, 2 heads of 128 (Llama: 1 kv head), ffn 512, vocab 1000. */
void dak_eng_tiny_config(dak_arch arch, dak_model_config *cfg);

/* Linear kind j's weight shape (M rows = outputs, K = inputs); 0 when the kind does not exist. */
void dak_eng_lin_shape(const dak_eng_model *m, uint32_t kind, uint32_t *M, uint32_t *K);

/* A layer's weight matrices as the GPU engine stores and multiplies them: q, k and v stacked as one matrix (one
 * GEMM), the out-projection, the FFN's input (OPT fc1; Llama gate and up stacked) and its output (fc2 / down).
 * The placement's host rows of the planner's operations (dak_eng_place.rows_host, per DAK_ENG_Q..) are summed
 * per matrix and become the first rows of the stack: the same host bytes in one GEMM (the operations share K,
 * so a row costs the same in each).  Session 20: three 4096 x 4096 GEMMs took 3 x 14.7 us as PDL graphs at
 * N = 8, the stacked 12288 x 4096 one 26.8 us. */
enum { DAK_ENG_W_QKV = 0, DAK_ENG_W_O, DAK_ENG_W_IN, DAK_ENG_W_OUT, DAK_ENG_NW };
/* The planner's kinds stacked in stored matrix w (DAK_ENG_W_*), in row order, into part; returns their count. */
uint32_t dak_eng_stack_parts(const dak_eng_model *m, uint32_t w, uint32_t part[3]);
/* Stored matrix w's shape (the parts' rows summed; their common K). */
void dak_eng_stack_shape(const dak_eng_model *m, uint32_t w, uint32_t *M, uint32_t *K);
/* Scale of the synthetic parameters (see the top). */
float dak_eng_lin_scale(uint32_t K);
float dak_eng_embed_scale(const dak_eng_model *m);

/* Prompt token of sequence n at position t (t < prompt). */
static inline CM_HD int32_t dak_eng_prompt_token(uint64_t seed, uint32_t t, uint32_t n, uint32_t batch,
                                                     uint32_t vocab)
{
    return (int32_t)(dak_eng_mix(seed ^ 0x70726f6d7074ull ^ ((uint64_t)t * batch + n)) % vocab);
}

/* ---- placement: the planner's units -> rows and entries (pure C) -------------------------------- */

typedef struct {
    uint32_t layers;
    uint32_t *rows_host;   /* [layers][DAK_ENG_NLIN]: host rows (a multiple of 64, <= M) */
    uint32_t *batch_host;  /* [layers]: host KV entries */
    uint32_t lm_rows_host; /* lm_head's host rows (of vocab_pad) */
    uint32_t embed_rows_host; /* Llama's untied embedding (gather): host rows of vocab (any count) */
    double host_bytes;     /* stored bytes in host memory (the real rows / entries, padding excluded) */
    double host_weight_bytes, host_kv_bytes;
} dak_eng_place;

/* Maps a plan u[] over ops (from dak_model_ops(&m->cfg, batch, max_len, DAK_PLAN_UNIT_ROWS, ..)) to rows
 * and entries: linear instance i gets min(M_pad, units x 128) host rows (M_pad: M rounded up to 64),
 * attention layer i batch_host = its units.  The GPU engine stores q, k, v (and Llama's gate, up) stacked
 * as one matrix and multiplies it in one GEMM: the host rows of the stacked operations are summed and
 * placed as the stack's first rows (the same host bytes: the operations share K).  Fails on an operation it does not know, a unit count past
 * the operation's units, unit_rows other than DAK_PLAN_UNIT_ROWS. */
int dak_eng_place_map(const dak_eng_model *m, uint32_t batch, uint32_t max_len, const dak_op *ops, size_t n_ops,
                      const uint64_t *u, dak_eng_place *pl, cm_err *err);
/* All in HBM (r = 0). */
void dak_eng_place_zero(const dak_eng_model *m, dak_eng_place *pl);
void dak_eng_place_free(dak_eng_place *pl);
/* Host rows of stored matrix w of layer l under placement pl: its parts' host rows, summed. */
uint32_t dak_eng_stack_rows_host(const dak_eng_model *m, const dak_eng_place *pl, uint32_t l, uint32_t w);

/* ---- parameters and checkpoints (pure C) ------------------------------------------------------- */

/* One parameter tensor the engine reads (dak_eng_tensor numbering, DAK_ENG_T_*). */
typedef struct {
    int present;         /* the model has it: biases only with cfg.bias, LayerNorm betas and positions only in
                            OPT, lm_head only in Llama (OPT's is the token embedding) */
    int weight;          /* a matrix [rows][cols] read as bf16 (linear weights, embeddings, positions, lm_head);
                            else a vector [cols] read as fp32 (biases, norm gains and betas) */
    uint64_t rows, cols; /* a vector: rows 1; OPT's positions: max_position_embeddings + 2 rows */
    float scale, offset; /* its synthetic values: bf16(offset + scale u) (see the top) */
} dak_eng_param;
/* The table: -1 for an id that names no parameter (a layer past the model's, an unused item). */
int dak_eng_param_of(const dak_eng_model *m, uint32_t tensor, dak_eng_param *p);

/* A checkpoint bound to a model: every parameter the engine reads found under its Hugging Face name
 * (OPT: "model.decoder." or "decoder." + "layers.L.self_attn.q_proj.weight", "fc1.bias", ..;
 * Llama: "model.layers.L.mlp.gate_proj.weight", ..; "lm_head.weight", or the token embedding where the
 * config ties them), with the shape the config gives and an element type of BF16, F16 or F32.
 * Matrices are read as bf16 (F16 / F32 rounded to the nearest), vectors as fp32.  A model run with
 * fewer layers (--layers) reads the checkpoint's first ones. */
typedef struct dak_eng_ckpt dak_eng_ckpt;
int dak_eng_ckpt_open(dak_eng_ckpt **ck, const char *path, const dak_eng_model *m, cm_err *err);
void dak_eng_ckpt_close(dak_eng_ckpt *ck);
/* The checkpoint's name of the engine's tensor, or NULL (absent from the model). */
const char *dak_eng_ckpt_name(const dak_eng_ckpt *ck, uint32_t tensor);
const dak_st *dak_eng_ckpt_file(const dak_eng_ckpt *ck);
/* Rows [row0, row0 + rows) of a matrix as bf16, or of a vector (row0 0, rows 1) as fp32, into host memory. */
int dak_eng_ckpt_bf16(const dak_eng_ckpt *ck, uint32_t tensor, uint64_t row0, uint64_t rows, uint16_t *dst,
                      cm_err *err);
int dak_eng_ckpt_f32(const dak_eng_ckpt *ck, uint32_t tensor, uint64_t row0, uint64_t rows, float *dst, cm_err *err);
/* Rows [row0, row0 + rows) of a row-major matrix with K columns (src: those rows, K elements each; NULL: zeros)
 * written where they belong in dst, the same matrix in the split GEMM's packed layout (dak/tiered.h: tile rows of 64
 * as K / 64 blocks of 64 x 64, each row's 16-byte chunk j at j ^ (row % 8)); rows outside the range are not touched,
 * so any range, aligned or not, packs on its own.  On up to `threads` threads (0 or 1: the caller's) when the rows
 * hold 8 MiB or more.  The engine packs a checkpoint's host rows with it as it reads them.  K: a multiple of 64. */
int dak_eng_pack_rows(uint16_t *dst, const uint16_t *src, uint64_t row0, uint64_t rows, uint32_t K, unsigned threads,
                      cm_err *err);
/* Writes model m's synthetic parameters (seed) as one safetensors file under the Hugging Face names (OPT:
 * "model.decoder."; BF16 or F32, which hold them exactly): a checkpoint the engine reads back to the same
 * values, for tests and for trying the path without a download.  verbose: a progress line on stderr. */
int dak_eng_ckpt_write_synthetic(const dak_eng_model *m, uint64_t seed, dak_st_dtype dtype, const char *path,
                                 int verbose, cm_err *err);

/* ---- the CPU reference (pure C, fp32 with bf16 rounding where the GPU rounds) ------------------ */

/* Pieces, exposed for tests: */
void dak_eng_ref_layernorm(const float *x, const float *g, const float *b, uint32_t n, float eps, float *y);
void dak_eng_ref_rmsnorm(const float *x, const float *g, uint32_t n, float eps, float *y);
/* y (may be x) = rotary of a head_dim-vector at position pos (pairs i, i + head_dim / 2). */
void dak_eng_ref_rope(const float *x, uint32_t pos, uint32_t head_dim, float *y);
/* cos / sin of position pos, pair i of a head of head_dim (double precision, then fp32): the GPU's tables hold the
 * same for 128. */
void dak_eng_rope_cs(uint32_t pos, uint32_t i, uint32_t head_dim, float *c, float *s);
float dak_eng_ref_silu(float x);
/* Index of the largest of v[0..n) (the lowest index on ties; NaN never wins). */
uint32_t dak_eng_ref_argmax(const float *v, uint32_t n);
/* bf16 rounding of a float (nearest even). */
float dak_eng_round_bf16(float x);

typedef struct dak_eng_ref dak_eng_ref;
/* Materialises the parameters of a (small) model, synthetic (seed) or from ck (not NULL); max_len positions of
 * cache. */
int dak_eng_ref_create(dak_eng_ref **r, const dak_eng_model *m, uint32_t batch, uint32_t max_len, uint64_t seed,
                       const dak_eng_ckpt *ck, cm_err *err);
void dak_eng_ref_destroy(dak_eng_ref *r);
/* One step at position t (t = 0, 1, .. in order): tok[batch] in, logits[batch][vocab] out. */
int dak_eng_ref_step(dak_eng_ref *r, uint32_t t, const int32_t *tok, float *logits, cm_err *err);

/* ---- the GPU engine ---------------------------------------------------------------------------- */

/* DAK_ENG_DIRECT: the split GEMM and the split attention read the placement's host rows and entries in place.
 * DAK_ENG_PREFETCH: the FlexGen-style baseline (layer-by-layer double-buffered copies into HBM staging).
 * DAK_ENG_UM: the unified-memory (page fault) baseline.  Every weight matrix's planned host rows live in one managed
 *   allocation (row-major, each matrix's slice from a DAK_ENG_UM_ALIGN boundary: dak_eng_um_bytes); before every
 *   step they are pushed back to the CPU (cudaMemPrefetchAsync to the host, on the step's stream, so the step's
 *   time includes it, as an eviction costs the link in real oversubscription), and the step's cuBLAS GEMMs
 *   (cublasGemmEx on the managed rows) fault them back in; the matrix's HBM rows go through the split GEMM as an
 *   all-HBM matrix, and the two outputs are joined, as in the prefetch baseline.  The KV cache stays in HBM (every
 *   entry, whatever the placement: its host entries are not moved), and Llama's embedding gather reads its host
 *   rows in place as in the other modes.  No real oversubscription: the managed bytes may not exceed a quarter of
 *   the HBM free at setup (nor dak_eng_opts.um_cap), so the driver never has to evict. */
typedef enum { DAK_ENG_DIRECT = 0, DAK_ENG_PREFETCH = 1, DAK_ENG_UM = 2 } dak_eng_mode;
const char *dak_eng_mode_name(dak_eng_mode m);

/* Each matrix's slice of the unified-memory baseline's managed allocation starts at a multiple of this (the
 * driver's 2 MiB migration block), so that faulting one matrix never drags in a neighbour's rows. */
#define DAK_ENG_UM_ALIGN (2u << 20)
/* The unified-memory baseline under placement pl (pure C): the bytes of its managed allocation (the matrices'
 * slices as the engine stacks them, q/k/v and gate/up together, lm_head's padded rows included, each rounded up
 * to DAK_ENG_UM_ALIGN); *moved: the rows alone, what a step pushes back to the CPU and faults in again. */
double dak_eng_um_bytes(const dak_eng_model *m, const dak_eng_place *pl, double *moved);

typedef struct dak_engine dak_engine;

typedef struct {
    uint64_t host_cap;  /* pinned host bytes allowed (0: no cap) */
    uint64_t hbm_cap;   /* HBM bytes the engine may allocate (0: what the device has free less 2 GiB) */
    int verbose;        /* progress on stderr */
    int gemm_pdl;       /* 1: every GEMM launched as a programmatic dependent (dak_gemm_opts.pdl): it loads its
                           first ring of weights while the kernel before it drains, and waits for it before
                           reading the activations; 0 (default): plain launches */
    int kernel_pdl;     /* 1: the step's small kernels (norms, bias / rotary, activation, embedding, argmax) and
                           the attention are programmatic dependents too (each waits for the kernel before it on
                           the device, not its launch); 0 (default): plain launches */
    const int32_t *prompt_ids; /* every sequence's prompt: positions [0, prompt_n) (each < vocab); NULL (default):
                                  synthetic prompts (dak_eng_prompt_token) */
    uint32_t prompt_n;
    const dak_eng_ckpt *ckpt; /* the weights from this checkpoint, which must stay open while the engine exists
                                 (the unified-memory baseline's setup reads its rows again); NULL (default):
                                 synthetic weights from the seed */
    uint32_t gemm_pdl_pre; /* with gemm_pdl: copies of weights each HBM-tier CTA of a GEMM issues before its
                              griddepcontrol.wait (dak_gemm_opts.pdl_pre; 0, the default: the GEMM's own choice;
                              DAK_GEMM_PDL_PRE_NONE: none) */
    uint32_t gemm_pre_none; /* bit k (dak_eng_op): that kind's GEMMs read nothing before their wait
                               (DAK_GEMM_PDL_PRE_NONE), whatever gemm_pdl_pre says (0, the default: none) */
    uint32_t gemm_hbm_window; /* every GEMM's dak_gemm_opts.hbm_window (copies in flight per HBM-tier SM after the
                                 wait; 0: the GEMM's choice; dak_eng_opts_default: DAK_ENG_GEMM_HBM_WINDOW) */
    uint32_t gemm_stages;     /* dak_gemm_opts.stages of every GEMM without host rows (ring slots per SM; 0: as many
                                 as fit; those with host rows keep that, the host link needs its depth) */
    uint32_t gemm_dyn;        /* diagnostic: every GEMM's dak_gemm_opts.dyn (the HBM tier in dynamically claimed
                                 units; 0, the default: a static split) */
    uint32_t gemm_whole;      /* the GEMMs' whole-K tiles (dak_gemm_opts.whole): DAK_ENG_WHOLE_GEMM (0, the
                                 default) the GEMM's choice (auto), DAK_ENG_WHOLE_OFF the split kernels only,
                                 DAK_ENG_WHOLE_ON k_whole wherever it applies (no host rows, N <= 64) */
    uint32_t gemm_whole_cluster; /* every GEMM's dak_gemm_opts.whole_cluster (k_whole's CTAs sharing each B stage by
                                    multicast): 0 the GEMM's choice (auto: clusters of 4 where they divide the
                                    tiles and K > 8192, N >= 41, or N >= 25 where the tiles fill 80 % of the SMs),
                                    1 none (larger clusters are not taken: a prefetch or unified-memory baseline's
                                    HBM rows may not divide by them);
                                    dak_eng_opts_default: DAK_ENG_WHOLE_CLUSTER */
    uint32_t gemm_whole_swap; /* every GEMM's dak_gemm_opts.whole_swap (k_whole_sw, A's rows as the wgmma's n): 0 the
                                 GEMM's choice (auto: where a CTA's rows would exceed 128, e.g. Llama-2-7B's ffn_in,
                                 22016 x 4096, and OPT-30B's fc1, or 64 on a deployment's all-HBM matrices, which are
                                 then packed in its row groups: dak_engine_grouped), 1 never, 2 wherever it applies
                                 (a deployment's all-HBM matrices all grouped), 3 on a deployment's all-HBM matrices
                                 as 0 and wherever k_whole does not apply and a CTA's rows are at least the batch,
                                 those grouped (no split kernel in its step), and none on the 64-row tiles (the full
                                 copies, and matrices with host rows); dak_eng_opts_default: DAK_ENG_WHOLE_SWAP */
    int norm_narrow;       /* 1: the norm's CTAs of 128 threads, 8 float4s of the row each, the weights read after the
                              statistics (the kernel before the twenty-second session); 0 (default): up to 1024
                              threads, the weights read into registers before the wait */
    uint32_t norm_trigger; /* with gemm_pdl: where the norm lets the next launch (a GEMM) start: 0 (default) at its
                              top, 1 once its loads are done, 2 after its stores (as late as its exit) */
    uint32_t diag_skip; /* diagnostic: bit k (dak_eng_op) leaves that kind's kernels out of every step, so that a
                           step's time without them is measured (the results are wrong; 0, the default: none) */
    uint32_t diag_empty; /* diagnostic: the same, with an empty kernel (trigger and wait, no work) in each one's place:
                            what a kernel costs by being in the chain at all */
    int diag_times;     /* diagnostic: every GEMM of the step records its CTAs' %globaltimer stamps (dak_gemm_opts.
                           diag_times) and the norms and activations theirs, for dak_engine_stamps (direct mode) */
    uint64_t um_cap;    /* DAK_ENG_UM: managed bytes allowed (0: a quarter of the HBM free at setup; never more
                           than that quarter, whatever is set here) */
    uint32_t load_pin;  /* how the matrices' pinned host rows are made, on a thread beside the load (a range a layer):
                           DAK_ENG_PIN_REGISTER (0, the default) or DAK_ENG_PIN_ALLOC (below) */
    int fuse_qkv;       /* 1: q / k / v post-processed inside the attention (dak_attn_decode_qkv: its CTAs read q from
                           the QKV GEMM's fp32 output, and the CTA holding the new position computes its k, v and stores
                           them in the cache), one kernel fewer a layer, the same bits; 0: k_qkv_post, a kernel of its
                           own between the GEMM and the attention (the steps before the twenty-fourth session); fused,
                           the stamps and the breakdown have no qkv_post operation.  0 when zeroed, 1 in
                           dak_eng_opts_default (what dak decode runs) */
    const dak_eng_place *deploy; /* NULL (default): a full copy of every weight and of the KV cache in each tier,
                                    so that any placement is a view (ratio sweeps); else a deployment of this
                                    placement: HBM holds only its HBM rows and entries, pinned memory only its host
                                    ones (what a model larger than the GPU needs), and dak_engine_setup accepts
                                    this placement only */
} dak_eng_opts;

/* dak_eng_opts.gemm_whole */
#define DAK_ENG_WHOLE_GEMM 0u
#define DAK_ENG_WHOLE_OFF 1u
#define DAK_ENG_WHOLE_ON 2u

/* dak_eng_opts.load_pin.  REGISTER: ordinary memory, whose pages the CPU touches first as it packs a checkpoint's
 * rows (on the read threads), registered with cudaHostRegister once a layer's rows are written (synthetic weights,
 * copied back from the GPU: before).  ALLOC: a cudaHostAlloc a layer, made before the layer loads. */
#define DAK_ENG_PIN_REGISTER 0u
#define DAK_ENG_PIN_ALLOC 1u

/* What dak decode runs with: every field zero (the defaults written beside them above), then two measured on the H200
 * in the twenty-third session (NOTES-dak-engine.md): the out-projection's GEMM reads nothing before its wait
 * (gemm_pre_none: o_proj; the attention's loads of the KV cache no longer queue behind o_proj's ring: -1.3 / -1.9 % a
 * token at batch 8), and the all-HBM GEMMs' rings DAK_ENG_GEMM_STAGES slots deep (gemm_stages; a shallower fill
 * before the wait and evener SMs after it). */
#define DAK_ENG_GEMM_STAGES 4u
/* ... and every GEMM's HBM copies in flight per SM after its wait (gemm_hbm_window): 2, where a GEMM alone takes it at
 * N 9-32 only (plan.c's HBM_WINDOW_NN).  On those 4-slot rings it evens the SMs' HBM shares out at N <= 8 too:
 * OPT-6.7B b8 -2.2 % a token on the H200, b64 +-0.1 % (NOTES-dak-engine.md, twenty-ninth session) */
#define DAK_ENG_GEMM_HBM_WINDOW 2u
/* ... and k_whole without multicast (gemm_whole_cluster 1).  The GEMM's auto clusters of 4 (7168 x 28672 at every N,
 * 7168^2 from N 41, from N 25 since the thirty-fifth session), 2-9 % faster as the GEMM bench's PDL graphs (one
 * launch's slow CTAs overlapping the next one's start), did not carry into a step, where a cluster streams at its
 * slowest member's pace: dak decode OPT-30B b1 +0.1, b8 -0.1, b32 +0.2, b64 -0.3 % a token with them (two rounds,
 * with the cluster barrier at k_whole's end and the rule from N 41; NOTES-dak-engine.md, thirty-third session) */
#define DAK_ENG_WHOLE_CLUSTER 1u
/* ... and k_whole_sw wherever k_whole does not apply and R >= N on a deployment's all-HBM matrices, packed in its row
 * groups (gemm_whole_swap 3): no split kernel in such a step; none on the full copies' 64-row tiles.  The split kernel (10 warps of 168 registers) never
 * shares an SM with another kernel's warps (thirty-fifth session), so after a small kernel it enters late; k_whole and
 * k_whole_sw do.  dak decode at r = 0 deployed, two rounds against gemm_whole_swap 1 (none; the default from the
 * thirty-fourth session, when k_whole_sw read A's pieces of 64-row boxes and the GEMM's auto choice lost Llama-2-7B
 * b8 2 %): Llama-2-7B b1 / b8 / b32 -3.7 / -3.5 / -8.6 %, OPT-6.7B -0.6 / -1.9 / -4.2 %, OPT-30B b1 / b8 -0.6 /
 * -0.7 %; 0 (the GEMM's choice) -0.5 / +1.1 / -4.8 %, -0.3 / -0.6 / -2.5 %, -0.6 / -0.7 %; 2 (everywhere) -3.3 / -2.8 /
 * -7.6 %, +0.9 / +0.0 / -2.2 %, +0.3 / +0.3 % (thirty-sixth session, NOTES-dak-engine.md) */
#define DAK_ENG_WHOLE_SWAP 3u
void dak_eng_opts_default(dak_eng_opts *o);

/* Bytes dak_engine_create allocates for this model, batch and length: with deploy NULL the full copies in
 * each tier, else the deployment of that placement.  *staging: HBM the prefetch baseline's setup adds (two
 * sets of the largest layer's host rows and host KV entries, and lm_head's host rows); dak_engine_create
 * counts it against its HBM cap too. */
void dak_eng_need_bytes(const dak_eng_model *m, uint32_t batch, uint32_t max_len, const dak_eng_place *deploy,
                        double *hbm, double *host, double *staging);

/* 1 when this build has the GPU engine and a CUDA device is present, else 0 (dak decode --backend auto). */
int dak_engine_available(void);

/* Allocates the model (a full packed copy of every weight in HBM and one in pinned host memory, so
 * that any placement is a view; the KV cache likewise; or, with o->deploy, only that placement's rows in
 * each tier), fills the synthetic parameters.  Fails with a message when the caps are exceeded. */
int dak_engine_create(dak_engine **e, const dak_eng_model *m, uint32_t batch, uint32_t max_len, uint64_t seed,
                      const dak_eng_opts *o, cm_err *err);
void dak_engine_destroy(dak_engine *e);
/* Bytes the engine allocated (HBM, pinned host). */
void dak_engine_mem(const dak_engine *e, uint64_t *hbm, uint64_t *host);

/* Where dak_engine_create's time went (seconds of wall time on the calling thread, each phase timed around its
 * blocking calls; always recorded: a clock read a call, hundreds a layer).  The phases do not overlap on the calling
 * thread, so total_s - their sum is the rest (kernel launches, events, the norms' vectors, graphs' contexts). */
typedef struct {
    double total_s;      /* dak_engine_create from its first check to its return */
    double pin_s;        /* the weights' pinned host memory: allocating it, or waiting for the thread that pins it */
    double pin_kv_s;     /* the KV cache's pinned host memory */
    double hbm_s;        /* cudaMalloc */
    double read_s;       /* checkpoint reads into the pinned load buffers (dak_eng_ckpt_bf16 / _f32) */
    double wait_s;       /* waiting for the GPU: a load buffer's copy, a fill before packing, the final synchronise */
    double pack_s;       /* packing on the GPU (dak_pack_rowmajor, which synchronises the device) */
    double host_pack_s;  /* the host rows packed on the CPU from the load buffers */
    double d2h_s;        /* the host rows copied from the GPU */
    double pinner_s;     /* beside the calling thread: the pinning thread's own time in cudaHostRegister / Alloc */
    double read_bytes;   /* checkpoint bytes read (as bf16 / fp32) */
    double pinned_bytes; /* the weights' pinned bytes (KV excluded) */
} dak_eng_load_times;
void dak_engine_load_times(const dak_engine *e, dak_eng_load_times *t);
/* How many of the stored matrices (every layer's and lm_head) are packed in k_whole_sw's row groups: a deployment's
 * all-HBM matrices where their GEMM asks for it (dak_gemm_ctx_a_group_rows with gemm_whole_swap 0 or 2 at this
 * batch); the rest in 64-row tiles. */
uint32_t dak_engine_grouped(const dak_engine *e);

/* Prepares a run of prompt + tokens steps (<= max_len) with this placement and mode: views, GEMM
 * launches, one CUDA graph per step (captured here).  prompt >= 1.  DAK_ENG_UM also allocates and fills the
 * managed rows (refused past a quarter of the free HBM, or um_cap, or on a GPU without concurrent managed
 * access, or on a deployment that holds some KV entries in host memory only). */
int dak_engine_setup(dak_engine *e, const dak_eng_place *pl, dak_eng_mode mode, uint32_t prompt, uint32_t tokens,
                     cm_err *err);
/* Launches step t's graph (steps in order from 0) and, with sync, waits for it.  DAK_ENG_UM: the managed rows'
 * push-back to the CPU first, on the same stream. */
int dak_engine_step(dak_engine *e, uint32_t t, int sync, cm_err *err);
/* The last step's logits [batch][vocab] (fp32) and the greedy tokens of every step so far
 * (tok[t][batch]: the argmax of step t). */
int dak_engine_logits(dak_engine *e, float *logits, cm_err *err);
int dak_engine_tokens(dak_engine *e, int32_t *tok, uint32_t steps, cm_err *err);
/* Layer `layer`'s KV cache as the current placement holds it (host entries from pinned memory, the others from HBM;
 * the prefetch baseline's staging is not the cache): k and v [batch][kv_heads][max_len][128] bf16 (tests). */
int dak_engine_kv(dak_engine *e, uint32_t layer, uint16_t *k, uint16_t *v, cm_err *err);
/* Runs every step: the prompt's steps, then the `tokens` decode steps timed (CUDA events, graphs
 * launched back to back).  *tpot_s = time of the decode steps / tokens. */
int dak_engine_run(dak_engine *e, double *tpot_s, cm_err *err);

/* ---- where a step's time goes ------------------------------------------------------------------- */

/* The operations of a step, as the breakdown groups them (a kind sums over the layers). */
typedef enum {
    DAK_ENG_OP_EMBED = 0, /* token (and position) embedding */
    DAK_ENG_OP_NORM,      /* residual add + LayerNorm / RMSNorm (two a layer, and the final one) */
    DAK_ENG_OP_QKV,       /* q, k, v GEMMs */
    DAK_ENG_OP_QKV_POST,  /* bias, rotary, q to bf16, k / v appended to the cache */
    DAK_ENG_OP_ATTN,      /* split attention (and its combine) */
    DAK_ENG_OP_O,         /* out-projection GEMM */
    DAK_ENG_OP_FFN_IN,    /* fc1 (Llama: gate and up) GEMMs */
    DAK_ENG_OP_ACT,       /* bias + ReLU, or SiLU(g) x u */
    DAK_ENG_OP_FFN_OUT,   /* fc2 / down GEMM */
    DAK_ENG_OP_LM_HEAD,   /* lm_head GEMM */
    DAK_ENG_OP_ARGMAX,    /* greedy token */
    DAK_ENG_OP_WAIT,      /* prefetch: waiting for a layer's copies */
    DAK_ENG_OP_EVICT,     /* unified memory: the managed host rows pushed back to the CPU before the step */
    DAK_ENG_NOPS
} dak_eng_op;
const char *dak_eng_op_name(dak_eng_op k);

typedef struct {
    uint32_t step, reps;
    double us[DAK_ENG_NOPS];    /* median over reps of the kind's time in one step (us) */
    double bytes[DAK_ENG_NOPS]; /* weight / KV bytes the kind reads in the step (0: not counted) */
    uint32_t count[DAK_ENG_NOPS]; /* operations of the kind in the step */
    double stamped_us;          /* median of the stamped step's whole time */
    double step_us;             /* median of the same step's own graph, timed alternately with the stamped one */
} dak_eng_breakdown;

/* Where the time of the last step goes: the step is captured again with a timing event after every
 * operation (so no launch overlaps the one before it, PDL included: stamped_us >= step_us, and the
 * difference is what overlap saves), and it and the step's own graph are replayed alternately
 * `reps` times.  DAK_ENG_UM: each replay (of either graph) starts with the push-back, which both times
 * include; it is the kind DAK_ENG_OP_EVICT (count 1, bytes: the rows moved).  Needs a finished run (dak_engine_run).  Each replay recomputes the last position
 * from the tokens the run ended with, so the KV cache's last position and dak_engine_logits change;
 * the token history is kept. */
int dak_engine_breakdown(dak_engine *e, uint32_t reps, dak_eng_breakdown *b, cm_err *err);

/* ---- a layer's timeline (dak_eng_opts.diag_times) ------------------------------------------------ */

/* Stamps of the norm's CTAs (one a sequence): entry, griddepcontrol.wait returned, x and c loaded (the first
 * block sum passed), statistics done, output stores issued, %smid; of the activation's CTAs: entry, wait
 * returned, stores issued, %smid; of a GEMM's: dak_gemm_times' DAK_GEMM_NTIMES words. */
#define DAK_ENG_NORM_STAMPS 6u
#define DAK_ENG_ACT_STAMPS 4u
#define DAK_ENG_QKVP_STAMPS 4u /* the q/k/v post-processing's CTAs (one a sequence and head): entry, wait, stored, smid */
/* the attention's: DAK_ATTN_STAMPS (dak/attention.h: entry, wait, producer's last copy, consumers done, smid) */
typedef struct {
    dak_eng_op kind;
    uint32_t ctas, words; /* t: ctas x words, CTA-major, %globaltimer ns (the %smid word is not a time) */
    uint64_t *t;          /* malloc'd: dak_eng_stamps_free */
} dak_eng_stamps;
#define DAK_ENG_STAMPED_OPS 10u
/* The last step's stamps of layer `layer`'s operations in launch order: norm, q/k/v GEMM, q/k/v post-processing,
 * attention (the CTAs it stamped in that step), out-projection GEMM,
 * norm, FFN-in GEMM, activation, FFN-out GEMM, and the norm after them (the next layer's first, or the final one).
 * Needs an engine created with diag_times, a run in DAK_ENG_DIRECT mode and kinds not left out by diag_skip /
 * diag_empty.  *n: the operations written (DAK_ENG_STAMPED_OPS; with fuse_qkv the post-processing's has 0 CTAs: it runs
 * inside the attention). */
int dak_engine_stamps(dak_engine *e, uint32_t layer, dak_eng_stamps ops[DAK_ENG_STAMPED_OPS], uint32_t *n, cm_err *err);
void dak_eng_stamps_free(dak_eng_stamps *ops, uint32_t n);

#ifdef __cplusplus
}
#endif

#endif
