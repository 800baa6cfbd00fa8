/* Direct-access split attention for decoding (seed 003, SplitK_FlashAttn; SPEC dak item 2).
 *
 * One decode step of one layer: every sequence of the batch has one new query token per head and
 * a static KV cache of `len` valid tokens.  The KV cache is partitioned ALONG THE BATCH: entries
 * [0, batch_host) live in pinned, mapped host memory (cudaHostAlloc), entries [batch_host, batch)
 * in HBM.  The kernel is persistent and warp-specialised: the first `host_ctas` CTAs read host
 * entries only, the rest HBM entries only.  In each CTA one producer thread issues 1-D bulk
 * copies (TMA, cp.async.bulk) of 64-token K and V chunks into a ring of shared-memory slots that
 * complete on mbarriers; consumer warps (four or eight) run an online softmax (fp32) over the
 * slots.  A host CTA keeps at most `window` slots (two copies each: K and V) in flight
 * (congestion window).
 *
 * Work unit: (entry, kv_head, split s); split s covers a contiguous range of whole 64-token
 * chunks of [0, len).  Each tier's units are numbered pair-major (pair = local entry * kv_heads +
 * kv_head, unit = pair * splits + s) and CTA j of a tier takes one contiguous range of them, the
 * ranges' sizes differing by at most one (the even split: wave alignment).  A CTA's consumer warps
 * form `teams` teams that work on that many units at once (rounds of `teams` consecutive units, the
 * producer interleaving their chunks in the ring); one team of eight warps is the long-sequence
 * layout (two halves taking alternate slots of one unit).  A unit that covers the whole sequence
 * writes its output rows directly; split units write fp32 partials (m, l, o) into the context's
 * workspace, and the team that completes the last split of an (entry, kv_head) merges them and
 * writes those rows (a per-pair arrival counter in the workspace: one launch a call), or, with
 * combine = DAK_ATTN_COMBINE_KERNEL, a second small kernel does.
 *
 * Layout (bf16 as uint16_t bits, head_dim D = 128):
 *   K, V of a tier: [entry][kv_head][max_len][D]   (host tier: entries [0, batch_host);
 *                                                  HBM tier: entries [batch_host, batch), local index entry - batch_host)
 *   q, out:         [batch][heads][D] in HBM;  query head h uses kv head h / (heads / kv_heads) (GQA, group <= 8).
 * Math: scores = q . k * scale (scale given, 1/sqrt(D) usually), softmax over tokens [0, len), fp32.
 *
 * All functions return 0 or -1 with a message in err (what, where, expected).  Without CUDA every
 * device entry point fails with "not built"; the plan and the CPU reference are pure C. */
#ifndef DAK_ATTENTION_H
#define DAK_ATTENTION_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "common/error.h"
#include "common/hd.h"
#include "dak/bf16.h"
#ifdef __cplusplus
}
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define DAK_ATTN_D 128u          /* head dimension (the only one supported) */
#define DAK_ATTN_CHUNK 64u       /* tokens per ring slot (K chunk 16 KiB + V chunk 16 KiB) */
#define DAK_ATTN_MAX_GROUP 8u    /* query heads per kv head (GQA group), at most */
#define DAK_ATTN_MAX_STAGES 6u   /* ring slots per CTA, at most (192 KiB) */
#define DAK_ATTN_SLOT_BYTES (2u * DAK_ATTN_CHUNK * DAK_ATTN_D * 2u)
/* Consumer warps of a CTA, at most: two groups of four, taking alternate ring slots. */
#define DAK_ATTN_CONSUMER_WARPS 8u
/* Shared memory of a CTA: the ring, the consumer warps' merge area (8 warps x 8 heads x (D + 2)
 * floats) and 256 bytes of mbarriers. */
#define DAK_ATTN_MERGE_BYTES (DAK_ATTN_CONSUMER_WARPS * DAK_ATTN_MAX_GROUP * (DAK_ATTN_D + 2u) * 4u)
#define DAK_ATTN_SMEM_BYTES(stages) ((stages) * DAK_ATTN_SLOT_BYTES + DAK_ATTN_MERGE_BYTES + 256u)

/* ---- the tiered KV cache of one layer ------------------------------------------------- */

typedef struct {
    uint32_t batch, kv_heads, max_len;
    uint32_t batch_host;              /* entries [0, batch_host) in host memory */
    uint16_t *k_host, *v_host;        /* host pointers to the host tier (NULL when batch_host == 0) */
    uint16_t *k_host_dev, *v_host_dev; /* the same memory as the device maps it */
    uint16_t *k_dev, *v_dev;          /* HBM tier, entries [batch_host, batch) (NULL when none) */
    int owns;                         /* 1: allocated by dak_kv_create, freed by dak_kv_destroy */
} dak_kv_tiered;

/* Host entries for an offload ratio in [0, 1]: ratio * batch rounded to the nearest entry (halves
 * up).  Pure C; fails on a non-finite ratio, a ratio outside [0, 1] or batch == 0. */
int dak_kv_batch_for_ratio(uint32_t batch, double ratio, uint32_t *batch_host, cm_err *err);

/* Allocates the two tiers (contents undefined): host entries with cudaHostAlloc(mapped), the rest
 * with cudaMalloc.  batch, kv_heads, max_len >= 1, batch_host <= batch. */
int dak_kv_create(dak_kv_tiered *kv, uint32_t batch, uint32_t kv_heads, uint32_t max_len, uint32_t batch_host,
                  cm_err *err);

/* A view over caller-owned memory (nothing allocated, nothing freed): k_host / v_host pinned mapped
 * host memory of batch_host entries (NULL when batch_host == 0), k_dev / v_dev HBM of
 * batch - batch_host entries (NULL when none). */
int dak_kv_view(dak_kv_tiered *kv, uint32_t batch, uint32_t kv_heads, uint32_t max_len, uint32_t batch_host,
                uint16_t *k_host, uint16_t *v_host, uint16_t *k_dev, uint16_t *v_dev, cm_err *err);

/* Copies full caches [batch][kv_heads][max_len][D] (device memory when src_on_device, else host
 * memory) into the two tiers. */
int dak_kv_upload(dak_kv_tiered *kv, const uint16_t *k_full, const uint16_t *v_full, int src_on_device,
                  cm_err *err);

/* Frees what dak_kv_create allocated (a view frees nothing); zeroes *kv. */
void dak_kv_destroy(dak_kv_tiered *kv);

/* ---- the plan (pure C) ------------------------------------------------------------------ */

typedef struct {
    uint32_t head_dim;  /* 0 or 128 (the only head dimension supported) */
    uint32_t host_ctas; /* CTAs reading host entries: 0 auto (8, at most SMs - 1 beside an HBM tier; every SM when
                           all entries are in host memory); ignored (0) when batch_host == 0 */
    uint32_t hbm_ctas;  /* CTAs reading HBM entries: 0 auto (every SM left), else at most that */
    uint32_t window;    /* ring slots in flight per host CTA: 0 auto (32 slots = 1 MiB over the host CTAs, at least
                           1, at most the ring), else 1..stages */
    uint32_t stages;    /* ring slots per CTA: 0 auto (6), else 1..6 */
    uint32_t splits;    /* splits per (entry, kv_head): 0 auto (enough units for >= 2 per CTA of the tier), else
                           that many in both tiers, reduced to the chunk count where it exceeds it */
    uint32_t groups;    /* consumer warps a CTA in fours: 0 auto (2: eight warps), 1 or 2 */
    uint32_t teams;     /* units a CTA works on at once (its consumer warps in that many teams): 0 auto (per tier,
                           from the chunks a unit, the units a CTA and the ring: at most stages - 2, 8 only for
                           units of <= 32 tokens), else 1, 2, 4 or 8, at most 4 x groups; 1 when heads / kv_heads > 4 */
    uint32_t combine;   /* how split units' partials become rows: 0 auto (DAK_ATTN_COMBINE_INLINE, or _KERNEL when a
                           splitting tier runs one team), or one of DAK_ATTN_COMBINE_INLINE / DAK_ATTN_COMBINE_KERNEL */
    int pdl;            /* 1: launch as a programmatic dependent (CUDA PDL): the CTAs start while the previous kernel
                           in the stream finishes and wait (griddepcontrol.wait) before reading q, K, V or writing */
    int diag_nomath;    /* diagnostic: the consumers wait for and release every slot but skip the math (out is
                           garbage): the kernel's streaming rate alone */
} dak_attn_opts;

#define DAK_ATTN_STAMPS 5u /* dak_attn_plan.diag_ts words a CTA */
#define DAK_ATTN_COMBINE_INLINE 1u /* the last split's team merges the partials (one launch a call) */
#define DAK_ATTN_COMBINE_KERNEL 2u /* a second kernel merges them (sessions <= 19) */

void dak_attn_opts_default(dak_attn_opts *o);

typedef struct {
    uint32_t batch, batch_host, heads, kv_heads, group, len, sm_count;
    uint32_t chunks;                   /* ceil(len / 64) */
    uint32_t host_ctas, hbm_ctas;      /* grid = host_ctas + hbm_ctas */
    uint32_t host_splits, hbm_splits;  /* splits per (entry, kv_head) in each tier (1..chunks) */
    uint32_t host_units, hbm_units;    /* batch_host * kv_heads * host_splits, ... */
    uint32_t window;                   /* ring slots in flight per host CTA (1..stages) */
    uint32_t stages;                   /* ring slots per CTA */
    uint32_t groups;                   /* consumer warps in fours (1 or 2): 32 + 128 groups threads a CTA */
    uint32_t host_teams, hbm_teams;    /* units a CTA of each tier works on at once (1, 2, 4, 8; <= 4 groups) */
    uint32_t combine;                  /* DAK_ATTN_COMBINE_INLINE or _KERNEL (used only when a tier splits) */
    int pdl;                           /* dak_attn_opts.pdl */
    int diag_nomath;                   /* dak_attn_opts.diag_nomath */
    uint64_t *diag_ts;                 /* diagnostic, set by the caller after dak_attn_plan_make (NULL: none): the
                                          attention kernel's CTA j writes DAK_ATTN_STAMPS words at diag_ts +
                                          j DAK_ATTN_STAMPS (device memory): %globaltimer at entry, when
                                          griddepcontrol.wait returned, when its producer issued its last copy and
                                          when its consumers finished, then %smid */
    uint32_t smem_bytes;               /* dynamic shared memory per CTA */
    size_t ws_floats;                  /* workspace floats for split partials (0 when no tier splits) */
    size_t ws_counters;                /* workspace 32-bit arrival counters (batch x kv_heads when a tier splits and
                                          the combine is inline, else 0) */
} dak_attn_plan;

/* Makes the plan of one decode launch (o NULL: defaults).  Fails, with a message, on batch 0,
 * batch_host > batch, heads or kv_heads 0, heads not a multiple of kv_heads, group > 8, len 0,
 * sm_count 0 (or 1 beside both tiers), head_dim other than 0/128, stages > 6, window > stages, groups > 2,
 * teams not 0/1/2/4/8 or above 4 x groups, combine not 0/1/2,
 * host_ctas that leave no SM for the HBM tier, host_ctas + hbm_ctas > sm_count. */
int dak_attn_plan_make(uint32_t batch, uint32_t batch_host, uint32_t heads, uint32_t kv_heads, uint32_t len,
                       uint32_t sm_count, const dak_attn_opts *o, dak_attn_plan *p, cm_err *err);

/* The workspace of a set of plans, ahead of time (pure C): raises *ws_floats and *ws_counters to at least
 * p->ws_floats and p->ws_counters.  Start both at 0, call it for every plan a CUDA graph will run (every
 * (step, layer) of a decode), then pass them to dak_attn_ctx_reserve once. */
void dak_attn_plan_ws_max(const dak_attn_plan *p, size_t *ws_floats, size_t *ws_counters);

/* [lo, hi) of part j of an even split of n items into `parts` parts (sizes differ by at most one). */
static inline CM_HD void dak_attn_range(uint32_t n, uint32_t parts, uint32_t j, uint32_t *lo, uint32_t *hi)
{
    *lo = (uint32_t)(((uint64_t)n * j) / parts);
    *hi = (uint32_t)(((uint64_t)n * (j + 1u)) / parts);
}

/* The unit `u` of a tier (host: first entry 0, else batch_host): its entry (global index), kv head,
 * split and chunk range [c0, c1). */
static inline CM_HD void dak_attn_unit(uint32_t u, uint32_t first_entry, uint32_t kv_heads, uint32_t splits,
                                             uint32_t chunks, uint32_t *entry, uint32_t *kvh, uint32_t *split,
                                             uint32_t *c0, uint32_t *c1)
{
    uint32_t pair = u / splits, s = u % splits;
    *entry = first_entry + pair / kv_heads;
    *kvh = pair % kv_heads;
    *split = s;
    dak_attn_range(chunks, splits, s, c0, c1);
}

/* ---- the CPU reference (pure C, double accumulation) ------------------------------------ */

/* k, v: [batch][kv_heads][max_len][D] bf16; q: [batch][heads][D] bf16; out: [batch][heads][D] float, with
 * D = head_dim (DAK_ATTN_D for the GPU decode's layout; any size up to DAK_ATTN_REF_MAX_D here, for the engine's CPU
 * reference).  Fails on the same shape errors as the plan, head_dim 0 or above the bound, len 0 or len > max_len,
 * a non-finite scale. */
#define DAK_ATTN_REF_MAX_D 256u
int dak_attn_decode_ref(const uint16_t *k, const uint16_t *v, const uint16_t *q, uint32_t batch, uint32_t heads,
                        uint32_t kv_heads, uint32_t head_dim, uint32_t max_len, uint32_t len, float scale, float *out,
                        cm_err *err);


/* ---- the GPU decode ---------------------------------------------------------------------- */

typedef struct dak_attn_ctx dak_attn_ctx;

/* A context: the device's SM count and shared memory, the workspace (split partials, and the
 * inline combine's arrival counters, zero between calls).  A call whose plan needs more workspace than
 * the context holds frees it and allocates a larger one (cudaFree waits for the work already enqueued;
 * new counters are zeroed on the call's stream); a CUDA graph captured before such a call still names the
 * old buffers and must not be replayed after it.  A call that would grow the workspace while its stream
 * is being captured fails instead (reserve first).  One context serves one stream at a time: calls on
 * two streams at once share the workspace. */
int dak_attn_ctx_create(dak_attn_ctx **ctx, cm_err *err);
void dak_attn_ctx_destroy(dak_attn_ctx *ctx);
uint32_t dak_attn_ctx_sms(const dak_attn_ctx *ctx);

/* Grows the workspace once to at least ws_floats partial floats and ws_counters counters (each kept if
 * already that large; counters zeroed; synchronises the device when it allocates).  Call it outside any
 * stream capture.  A CUDA graph captured after a reserve large enough for all its plans (dak_attn_plan_ws_max
 * over them) never triggers an allocation, and stays valid for as long as the context lives unless a later,
 * larger plan grows the workspace again. */
int dak_attn_ctx_reserve(dak_attn_ctx *ctx, size_t ws_floats, size_t ws_counters, cm_err *err);

/* The workspace the context holds now (either pointer may be NULL). */
void dak_attn_ctx_ws(const dak_attn_ctx *ctx, size_t *ws_floats, size_t *ws_counters);

/* out[b][h][:] = softmax(q[b][h] . K[b][h/g][0..len) * scale) V[b][h/g][0..len), for every b, h, as
 * planned by p (made for kv->batch, kv->batch_host, heads, kv->kv_heads, len).  q and out in HBM.
 * Enqueued on `stream` (a cudaStream_t, NULL: the default stream) as one kernel (two when a tier splits
 * and the plan's combine is DAK_ATTN_COMBINE_KERNEL); capturable in a CUDA graph once the workspace is
 * large enough (dak_attn_ctx_reserve, or a first call outside the capture). */
int dak_attn_decode(dak_attn_ctx *ctx, const dak_kv_tiered *kv, const uint16_t *q, uint32_t heads, uint32_t len,
                    float scale, uint16_t *out, const dak_attn_plan *p, void *stream, cm_err *err);

/* ---- q / k / v post-processing inside the attention (the engine's fused path) ------------------- */

/* The post-processing's arithmetic, one definition for the engine's separate kernel (k_qkv_post), the attention's
 * fused path and the tests, so that all give the same bits: x = c + b (b the bias, when there is one), then the
 * rotary pair (lo, hi) = (x[i], x[i + 64]) at cos co, sin si: lo' = lo co - hi si, hi' = hi co + lo si, every
 * product and sum rounded on its own (no fused multiply-add), then bf16 (nearest even). */
static inline CM_HD float dak_attn_rope_lo(float lo, float hi, float co, float si)
{
#ifdef __CUDA_ARCH__
    return __fsub_rn(__fmul_rn(lo, co), __fmul_rn(hi, si));
#else
    volatile float a = lo * co, b = hi * si;
    return a - b;
#endif
}
static inline CM_HD float dak_attn_rope_hi(float lo, float hi, float co, float si)
{
#ifdef __CUDA_ARCH__
    return __fadd_rn(__fmul_rn(hi, co), __fmul_rn(lo, si));
#else
    volatile float a = hi * co, b = lo * si;
    return a + b;
#endif
}

/* The QKV GEMM's fp32 output as the attention's input (dak_attn_decode_qkv).  Row b of c (b < the call's batch) is
 * entry b of the call: q of every head (heads x 128 floats), then k of every kv head, then v (kv_heads x 128 each).
 * The new position is len - 1: its k and v are computed by the CTA whose unit holds the last chunk of each (entry,
 * kv head), which uses them for that row (patched into its ring slot after the slot's copy lands, whatever the
 * cache held there) and writes them into the cache (kv), or into k_new / v_new when given. */
typedef struct {
    const float *c;          /* [batch][ld] (device) */
    const float *bias;       /* [>= (heads + 2 kv_heads) x 128] added first, or NULL */
    const float *cs, *sn;    /* rotary tables [>= len][64]: cos and sin of pair i at position p, or NULL (no rotary);
                                applied to q and k */
    uint32_t ld;             /* floats a row of c: a multiple of 4, >= (heads + 2 kv_heads) x 128 */
    uint16_t *k_new, *v_new; /* NULL: the new k, v go into the cache the call reads; else [batch][kv_heads][max_len]
                                [128] device-visible memory they go into instead (the prefetch baseline: its host
                                tier, while the call reads the staged copy) */
} dak_attn_qkv;

/* dak_attn_decode with q, k, v post-processed in the kernel from qkv (the bias, the rotary, bf16 rounding): q is
 * never stored, the new position's k and v are written as above.  out and the cache after the call are those of
 * the engine's separate post-processing kernel followed by dak_attn_decode, bit for bit.  Fails as dak_attn_decode
 * does, and on a missing c, an ld that is not a multiple of 4 or too short, only one of k_new / v_new. */
int dak_attn_decode_qkv(dak_attn_ctx *ctx, const dak_kv_tiered *kv, const dak_attn_qkv *qkv, uint32_t heads,
                        uint32_t len, float scale, uint16_t *out, const dak_attn_plan *p, void *stream, cm_err *err);

#ifdef __cplusplus
}
#endif

#endif
