/* dak split attention for decoding (seed 003, SplitK_FlashAttn): the tiered KV cache, the
 * persistent warp-specialised kernel, the split combine and their host side.  CUDA C, C-style,
 * behind include/dak/attention.h.
 *
 * CTA (32 + 128 groups threads): warp 0 is the producer (lane 0 issues every copy), then 4 groups
 * consumer warps in T teams (P->host_teams / hbm_teams) of TW = 4 groups / T warps.  The CTA's units
 * [u0, u1) go in rounds of T consecutive units, team k taking unit k of each round; the producer
 * issues a round's chunks interleaved (chunk 0 of every unit of the round, then chunk 1, ...), so that
 * the teams' slots alternate in the ring and each team works on its own unit: no barrier between teams.
 * Within a team: TW = 8 (one team of eight warps: session 19's layout) - two halves of four warps take
 * the copies with it even / odd, warp w of a half the tokens [16 w, 16 w + 16) of its slots (two warps
 * a sub-partition hide each other's latency on long units); TW = 4 - warp w takes tokens [16 w, +16)
 * of every slot of the unit; TW = 2 or 1 - warp w takes the 16-token blocks w, w + TW, ... one after
 * another.  Short units (len 32-256, session 19: 13-56 % of B_g with every warp merging every unit)
 * then keep all eight warps busy on up to eight units.
 * Ring slot i (32 KiB): the K chunk (64 tokens x 256 B) then the V chunk; full[i] completes when
 * both copies have landed (one arrive.expect_tx of their bytes by the producer), empty[i] when
 * the min(TW, 4) warps reading it are done (one arrive each).  Copy `it` fills slot it mod S for
 * the n-th time, n = it / S; its consumers wait full with parity n & 1 and the producer, before
 * fill n >= 1, waits empty[i] with parity (n - 1) & 1.  Every team reads its copies in increasing
 * `it`, so the producer's waits always end.  A consumer may reach fill n of a slot while fill n - 1
 * (another team's, or the other half's when S is odd) has not landed: parity n & 1 then names the
 * completed phase n - 2.  So the producer writes tag[i] = n + 1 when it issues fill n (after fill n - 1 was
 * consumed), and a consumer waits for that tag before the parity wait.  A host CTA also waits, before copy it >= W (its
 * window), until copy it - W has landed (full, parity of its fill), so at most W slots (2 W bulk
 * copies) are in flight; with W < S that slot's next fill is later than `it`, so the parity is
 * unambiguous.
 *
 * Lane i owns dims 4 i .. 4 i + 3 of q, K, V and its accumulators (one 8-byte load a 256-byte row:
 * conflict-free).  Per query head of the group: 16 partial dot products (4 dims each), a
 * transpose-style butterfly (xor 16, 8, 4, 2 keeping half of the tokens each step, then xor 1)
 * leaves lanes 2t and 2t + 1 with token t's full score in 16 shuffles; scores are in log2 units (q
 * pre-multiplied by scale * log2 e), so exp2f gives the softmax weights.  Running max m
 * (warp-uniform), running sum l (each lane adds the weights of its even-lane tokens; summed over the
 * warp at the unit's end), acc[4] per lane.  q of a team's next unit is loaded into registers while
 * it works on the current one.  At a unit's end the team's warps merge through shared memory (a
 * one-warp team merges in registers): a whole-sequence unit writes bf16 out = o / l, a split unit
 * writes (m, l, o[128]) fp32 into the workspace, then counts itself on its (entry, kv head)'s arrival
 * counter (atom.acq_rel.gpu after the team's barrier); the team that brings it to `splits` merges
 * every split's partial in split order (the same arithmetic as k_combine: the rows do not depend on
 * which CTA was last) and resets the counter to 0 for the next launch.  With combine = KERNEL,
 * k_combine (launched after, same stream) merges them instead.
 * The merge area holds, per consumer warp, its heads' (o, m, l); with G <= 4 heads it is double
 * buffered (the team's units alternate buffers), so one team barrier a unit suffices: a warp writes
 * buffer b at unit n + 2 only after the barrier of unit n + 1, which every warp of the team reaches
 * after its reads of unit n.  G = 8: one buffer and a second barrier. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cuda_check.h"
#include "common/launch.h"
#include "common/ptx.cuh"
#include "dak/attention.h"

#define D DAK_ATTN_D
#define NCW DAK_ATTN_CONSUMER_WARPS /* consumer warps, at most */
#define TPW 16u         /* tokens of a 16-token block: one warp's pass */
#define CHUNK_BYTES (DAK_ATTN_CHUNK * D * 2u) /* 16 KiB: one K or V chunk */
#define FULL 0xffffffffu
#define LOG2E 1.4426950408889634f

typedef struct {
    const uint16_t *kh, *vh; /* host tier as the device maps it */
    const uint16_t *kg, *vg; /* HBM tier */
    const uint16_t *q;
    uint16_t *out;
    float *ws;     /* split partials: o [units][g][D], then (m, l) [units][g][2] */
    uint32_t *cnt; /* inline combine: arrival counters [batch][kv_heads] (0 between launches) */
    uint32_t batch, batch_host, heads, kv_heads, group, len, max_len, chunks;
    uint32_t host_ctas, hbm_ctas, host_splits, hbm_splits, host_units, hbm_units, window, stages;
    uint32_t groups;     /* consumer warps in fours (1 or 2) */
    uint32_t host_teams, hbm_teams; /* units a CTA of the tier works on at once */
    uint32_t inline_combine; /* 1: the last split's team merges the partials; 0: k_combine does */
    uint32_t nomath; /* diagnostic: consumers wait for and release each slot but skip the math (out is garbage) */
    uint64_t *ts;    /* diagnostic: dak_attn_plan.diag_ts (NULL: none) */
    float qscale; /* scale * log2(e) */
    /* dak_attn_decode_qkv (qc not NULL): q, k, v from the QKV GEMM's output (dak_attn_qkv), q not read from `q` */
    const float *qc, *qbias, *rcs, *rsn;
    uint32_t qld;
    uint16_t *kn, *vn; /* the new position's k, v: NULL: into the cache read */
} attn_params;

struct dak_attn_ctx {
    uint32_t sms;
    size_t smem_optin;
    float *ws;
    size_t ws_floats;
    uint32_t *cnt;
    size_t ws_counters;
};

static __device__ __forceinline__ float bf_lo(uint32_t w) { return __uint_as_float(w << 16); }
static __device__ __forceinline__ float bf_hi(uint32_t w) { return __uint_as_float(w & 0xffff0000u); }

/* ---- rounds: T consecutive units whose chunks the producer interleaves ------------------- */

/* Every split has n = chunks / splits or n + 1 chunks (the even split); bit k: unit rb + k has n + 1. */
static __device__ __forceinline__ uint32_t round_long_mask(uint32_t rb, uint32_t nr, uint32_t splits,
                                                           uint32_t chunks, uint32_t n)
{
    uint32_t lm = 0;
    if (splits == 1u) return 0u;
    for (uint32_t k = 0; k < nr; k++) {
        uint32_t lo, hi;
        dak_attn_range(chunks, splits, (rb + k) % splits, &lo, &hi);
        if (hi - lo > n) lm |= 1u << k;
    }
    return lm;
}

/* The copy index of chunk i of unit k of a round of nr units that starts at copy it0: chunks 0..n-1 of
 * every unit in unit order, then chunk n of the units with n + 1 (mask lm). */
static __device__ __forceinline__ uint32_t round_it(uint32_t it0, uint32_t i, uint32_t k, uint32_t nr, uint32_t n,
                                                    uint32_t lm)
{
    return it0 + (i < n ? i * nr + k : n * nr + (uint32_t)__popc(lm & ((1u << k) - 1u)));
}

/* ---- the producer: one thread ------------------------------------------------------------ */
static __device__ void produce(const attn_params *P, int host, uint32_t u0, uint32_t u1, uint32_t T, uint8_t *ring,
                               uint64_t *full, uint64_t *empty, volatile uint32_t *tag)
{
    const uint32_t S = P->stages, W = host ? P->window : S;
    const uint32_t splits = host ? P->host_splits : P->hbm_splits, first = host ? 0u : P->batch_host;
    const uint32_t n = P->chunks / splits;
    const uint16_t *K = host ? P->kh : P->kg, *V = host ? P->vh : P->vg;
    uint32_t it = 0;
    for (uint32_t rb = u0; rb < u1; rb += T) {
        const uint32_t nr = u1 - rb < T ? u1 - rb : T;
        const uint32_t lm = round_long_mask(rb, nr, splits, P->chunks, n);
        const uint32_t imax = lm ? n + 1u : n;
        for (uint32_t i = 0; i < imax; i++)
            for (uint32_t k = 0; k < nr; k++) {
                if (i == n && !((lm >> k) & 1u)) continue;
                uint32_t en, kvh, sp, c0, c1;
                dak_attn_unit(rb + k, first, P->kv_heads, splits, P->chunks, &en, &kvh, &sp, &c0, &c1);
                const size_t base = ((size_t)(en - first) * P->kv_heads + kvh) * P->max_len * D;
                const uint32_t c = c0 + i;
                const uint32_t s = it % S, f = it / S;
                if (f) ptx_mbar_wait(ptx_smem(&empty[s]), (f - 1u) & 1u);
                if (W < S && it >= W) {
                    const uint32_t j = it - W;
                    ptx_mbar_wait(ptx_smem(&full[j % S]), (j / S) & 1u);
                }
                const uint32_t left = P->len - c * DAK_ATTN_CHUNK;
                const uint32_t bytes = (left < DAK_ATTN_CHUNK ? left : DAK_ATTN_CHUNK) * D * 2u;
                const uint32_t bar = ptx_smem(&full[s]);
                uint8_t *slot = ring + (size_t)s * DAK_ATTN_SLOT_BYTES;
                tag[s] = f + 1u; /* fill f of slot s is next: fill f - 1 is consumed, so its phase has completed */
                ptx_mbar_arrive_expect_tx(bar, 2u * bytes);
                ptx_bulk_g2s(ptx_smem(slot), K + base + (size_t)c * DAK_ATTN_CHUNK * D, bytes, bar);
                ptx_bulk_g2s(ptx_smem(slot + CHUNK_BYTES), V + base + (size_t)c * DAK_ATTN_CHUNK * D, bytes, bar);
                it++;
            }
    }
}

/* ---- merging split partials (the inline combine and k_combine: one function, the same rows) ---- */

/* Row quad qd (dims 4 qd .. 4 qd + 3) of query head hh of the pair whose splits are units gu0 .. gu0 +
 * splits - 1 of the workspace: the splits merged in split order, bf16.  Reads through L2 (ld.cg): the
 * partials come from other SMs in this launch. */
static __device__ __forceinline__ uint2 combine_quad(const attn_params *P, size_t gu0, uint32_t splits, uint32_t hh,
                                                     uint32_t qd)
{
    const uint32_t g = P->group;
    const size_t ml0 = ((size_t)P->host_units + P->hbm_units) * g * D;
    float M = -INFINITY;
    for (uint32_t s = 0; s < splits; s++) M = fmaxf(M, __ldcg(P->ws + ml0 + 2u * ((gu0 + s) * g + hh)));
    float L = 0.f, o0 = 0.f, o1 = 0.f, o2 = 0.f, o3 = 0.f;
    for (uint32_t s = 0; s < splits; s++) {
        const size_t pi = (gu0 + s) * g + hh;
        const float f = exp2f(__fsub_rn(__ldcg(P->ws + ml0 + 2u * pi), M));
        L = __fmaf_rn(__ldcg(P->ws + ml0 + 2u * pi + 1u), f, L);
        const float4 o = __ldcg((const float4 *)(P->ws + pi * D + 4u * qd));
        o0 = __fmaf_rn(o.x, f, o0), o1 = __fmaf_rn(o.y, f, o1), o2 = __fmaf_rn(o.z, f, o2), o3 = __fmaf_rn(o.w, f, o3);
    }
    const float r = __fdiv_rn(1.f, L);
    uint2 w;
    w.x = (uint32_t)dak_f32_to_bf16(__fmul_rn(o0, r)) | ((uint32_t)dak_f32_to_bf16(__fmul_rn(o1, r)) << 16);
    w.y = (uint32_t)dak_f32_to_bf16(__fmul_rn(o2, r)) | ((uint32_t)dak_f32_to_bf16(__fmul_rn(o3, r)) << 16);
    return w;
}

/* A unit's merged (O, M, L) for head h, quad qd: the row (whole sequence) or the partial (split unit gu). */
static __device__ __forceinline__ void emit_quad(const attn_params *P, int split, uint32_t en, uint32_t kvh, size_t gu,
                                                 uint32_t h, uint32_t qd, float4 O, float M, float L)
{
    const uint32_t g = P->group;
    if (!split) {
        uint2 w;
        w.x = (uint32_t)dak_f32_to_bf16(O.x / L) | ((uint32_t)dak_f32_to_bf16(O.y / L) << 16);
        w.y = (uint32_t)dak_f32_to_bf16(O.z / L) | ((uint32_t)dak_f32_to_bf16(O.w / L) << 16);
        *(uint2 *)(P->out + ((size_t)en * P->heads + kvh * g + h) * D + 4u * qd) = w;
    } else {
        const size_t pi = gu * g + h;
        *(float4 *)(P->ws + pi * D + 4u * qd) = O;
        if (qd == 0) {
            const size_t ml0 = ((size_t)P->host_units + P->hbm_units) * g * D;
            P->ws[ml0 + 2u * pi] = M;
            P->ws[ml0 + 2u * pi + 1u] = L;
        }
    }
}

/* dak_attn_decode_qkv: dims [4 lane, 4 lane + 4) of the head whose 128 columns start at col in row en of the QKV
 * GEMM's output, post-processed (bias, then the rotary when rot: the pair of dim d is d ^ 64) and rounded to bf16,
 * packed as a uint2 of q or of a cache row (dak_attn_rope_lo / _hi: the engine's k_qkv_post computes the same) */
static __device__ __forceinline__ uint2 qkv_quad(const attn_params *P, uint32_t en, uint32_t col, uint32_t lane, int rot)
{
    const float *c = P->qc + (size_t)en * P->qld + col;
    const uint32_t d = 4u * lane, pd = d ^ 64u;
    float x[4], y[4] = {0.f, 0.f, 0.f, 0.f};
    {
        const float4 a = *(const float4 *)(c + d);
        x[0] = a.x, x[1] = a.y, x[2] = a.z, x[3] = a.w;
    }
    if (rot) {
        const float4 a = *(const float4 *)(c + pd);
        y[0] = a.x, y[1] = a.y, y[2] = a.z, y[3] = a.w;
    }
    if (P->qbias) {
        const float4 b = *(const float4 *)(P->qbias + col + d);
        x[0] = __fadd_rn(x[0], b.x), x[1] = __fadd_rn(x[1], b.y), x[2] = __fadd_rn(x[2], b.z), x[3] = __fadd_rn(x[3], b.w);
        if (rot) {
            const float4 e = *(const float4 *)(P->qbias + col + pd);
            y[0] = __fadd_rn(y[0], e.x), y[1] = __fadd_rn(y[1], e.y), y[2] = __fadd_rn(y[2], e.z);
            y[3] = __fadd_rn(y[3], e.w);
        }
    }
    if (rot) {
        const size_t r = (size_t)(P->len - 1u) * 64u + (d & 63u);
        const float4 co = *(const float4 *)(P->rcs + r), si = *(const float4 *)(P->rsn + r);
        const float cv[4] = {co.x, co.y, co.z, co.w}, sv[4] = {si.x, si.y, si.z, si.w};
#pragma unroll
        for (int j = 0; j < 4; j++)
            x[j] = d < 64u ? dak_attn_rope_lo(x[j], y[j], cv[j], sv[j]) : dak_attn_rope_hi(y[j], x[j], cv[j], sv[j]);
    }
    uint2 w;
    w.x = (uint32_t)dak_f32_to_bf16(x[0]) | ((uint32_t)dak_f32_to_bf16(x[1]) << 16);
    w.y = (uint32_t)dak_f32_to_bf16(x[2]) | ((uint32_t)dak_f32_to_bf16(x[3]) << 16);
    return w;
}

/* dak_attn_decode_qkv: this lane's 4 dims of the new position's k and v of (entry en, kv head kvh), computed and
 * stored into the cache (or into k_new / v_new) */
static __device__ __forceinline__ void new_kv(const attn_params *P, int host, uint32_t en, uint32_t kvh, uint32_t lane,
                                              uint2 *nk, uint2 *nv)
{
    *nk = qkv_quad(P, en, (P->heads + kvh) * D, lane, P->rcs != NULL);
    *nv = qkv_quad(P, en, (P->heads + P->kv_heads + kvh) * D, lane, 0);
    uint16_t *kd, *vd;
    size_t off;
    if (P->kn) {
        kd = P->kn, vd = P->vn, off = ((size_t)en * P->kv_heads + kvh) * P->max_len * D;
    } else {
        const uint32_t first = host ? 0u : P->batch_host;
        kd = (uint16_t *)(host ? P->kh : P->kg), vd = (uint16_t *)(host ? P->vh : P->vg);
        off = ((size_t)(en - first) * P->kv_heads + kvh) * P->max_len * D;
    }
    off += (size_t)(P->len - 1u) * D + 4u * lane;
    *(uint2 *)(kd + off) = *nk;
    *(uint2 *)(vd + off) = *nv;
}

/* q of the group's heads of (entry en, kv head kvh), this lane's 4 dims, into registers (heads >= g: 0) */
static __device__ __forceinline__ void q_load(const attn_params *P, uint32_t en, uint32_t kvh, uint32_t lane,
                                              uint2 *qn, const uint32_t G)
{
#pragma unroll
    for (uint32_t h = 0; h < G; h++) {
        qn[h] = make_uint2(0u, 0u);
        if (h < P->group)
            qn[h] = P->qc ? qkv_quad(P, en, (kvh * P->group + h) * D, lane, P->rcs != NULL)
                          : *(const uint2 *)(P->q + ((size_t)en * P->heads + kvh * P->group + h) * D + 4u * lane);
    }
}

/* ---- the consumers: G query heads a kv head (compile-time after inlining; heads >= g idle) ---- */
static __device__ __forceinline__ void consume(const attn_params *P, int host, uint32_t u0, uint32_t u1, uint32_t T,
                                               const uint8_t *ring, uint64_t *full, uint64_t *empty, float *merge,
                                               volatile uint32_t *flags, volatile const uint32_t *tag, const uint32_t G)
{
    const uint32_t S = P->stages, g = P->group;
    const uint32_t splits = host ? P->host_splits : P->hbm_splits, first = host ? 0u : P->batch_host;
    const uint32_t TW = 4u * P->groups / T;
    const uint32_t n = P->chunks / splits;
    const uint32_t lane = threadIdx.x & 31u, cw = (threadIdx.x >> 5) - 1u;
    const uint32_t team = cw / TW, wt = cw % TW, tt = threadIdx.x - 32u - team * TW * 32u;
    const int alt = TW == 8u;                       /* two halves on alternate copies */
    const uint32_t half = wt >> 2;                  /* alt: the half of this warp */
    const uint32_t npass = TW >= 4u ? 1u : 4u / TW; /* 16-token blocks a slot this warp reads */
    const uint32_t blk0 = TW >= 4u ? (wt & 3u) : wt, bstep = TW;
    const uint32_t bar_id = 1u + team, bar_n = TW * 32u;
    /* merge area: NB buffers of [NCW warps][GS heads][D] o, then NB x [NCW][GS][2] (m, l) */
    const uint32_t NB = G <= 4u ? 2u : 1u, GS = G <= 4u ? 4u : 8u;
    float *mo = merge;
    float *mml = merge + NB * NCW * GS * D;
    const uint32_t b4 = (lane >> 4) & 1u, b3 = (lane >> 3) & 1u, b2 = (lane >> 2) & 1u, b1 = (lane >> 1) & 1u;
    const int split = splits > 1u;
    uint32_t it0 = 0, nu = 0;
    /* q of the team's next unit in registers (G <= 2; at G = 4 and 8 the 8-16 registers would spill the accumulators:
     * loaded at the unit's start) */
    const int PF = G <= 2u;
    uint2 qn[DAK_ATTN_MAX_GROUP];
    if (PF && u0 + team < u1) {
        uint32_t en, kvh, sp, c0, c1;
        dak_attn_unit(u0 + team, first, P->kv_heads, splits, P->chunks, &en, &kvh, &sp, &c0, &c1);
        q_load(P, en, kvh, lane, qn, G);
    }
    for (uint32_t rb = u0; rb < u1; rb += T) {
        const uint32_t nr = u1 - rb < T ? u1 - rb : T;
        const uint32_t lm = round_long_mask(rb, nr, splits, P->chunks, n);
        const uint32_t total = n * nr + (uint32_t)__popc(lm);
        if (team < nr) {
            const uint32_t u = rb + team;
            uint32_t en, kvh, sp, c0, c1;
            dak_attn_unit(u, first, P->kv_heads, splits, P->chunks, &en, &kvh, &sp, &c0, &c1);
            const uint32_t b = NB == 2u ? (nu & 1u) : 0u;
            /* q of the group's heads, scaled, in this warp's part of the merge buffer b (free: see the header
             * comment; each lane reads back only what it wrote): registers stay for the accumulators */
            float *mine = mo + (size_t)(b * NCW + cw) * GS * D + 4u * lane;
            float acc[DAK_ATTN_MAX_GROUP][4], m[DAK_ATTN_MAX_GROUP], l[DAK_ATTN_MAX_GROUP];
            if (!PF) q_load(P, en, kvh, lane, qn, G);
#pragma unroll
            for (uint32_t h = 0; h < G; h++) {
                *(float4 *)(mine + h * D) = make_float4(bf_lo(qn[h].x) * P->qscale, bf_hi(qn[h].x) * P->qscale,
                                                        bf_lo(qn[h].y) * P->qscale, bf_hi(qn[h].y) * P->qscale);
                acc[h][0] = acc[h][1] = acc[h][2] = acc[h][3] = 0.f;
                m[h] = -INFINITY, l[h] = 0.f;
            }
            if (PF && u + T < u1) { /* the team's next unit: its q arrives while this one runs */
                uint32_t en2, kvh2, sp2, d0, d1;
                dak_attn_unit(u + T, first, P->kv_heads, splits, P->chunks, &en2, &kvh2, &sp2, &d0, &d1);
                q_load(P, en2, kvh2, lane, qn, G);
            }
            const uint32_t nck = c1 - c0;
            /* dak_attn_decode_qkv: the unit holding the last chunk holds the new position len - 1 (row nrow of that
             * chunk); the warp that reads that row's 16-token block computes its k and v (a lane its 4 dims), stores
             * them into the cache (the chunk's copy may read the row before or after the store: the slot is patched
             * once it lands) and patches its ring slot below.  G <= 2: computed now, their loads overlapping the
             * copies; G >= 4: once the slot has landed (four registers more across the loop spill there) */
            int own_new = 0;
            uint32_t nrow = 0;
            uint2 nk = make_uint2(0u, 0u), nvv = make_uint2(0u, 0u);
            if (P->qc && c1 == P->chunks) {
                nrow = P->len - 1u - (P->chunks - 1u) * DAK_ATTN_CHUNK;
                const uint32_t nb = nrow / TPW, itl = round_it(it0, nck - 1u, team, nr, n, lm);
                own_new = TW >= 4u ? ((wt & 3u) == nb && (!alt || (itl & 1u) == half)) : nb % TW == wt;
                if (own_new && G <= 2u) new_kv(P, host, en, kvh, lane, &nk, &nvv);
            }
            for (uint32_t i = 0; i < nck; i++) {
                const uint32_t it = round_it(it0, i, team, nr, n, lm);
                if (alt && (it & 1u) != half) continue; /* the other half's slot */
                const uint32_t s = it % S, f = it / S;
                /* fill f - 1 of this slot may be another team's and still in flight: the parity wait alone would
                 * take that phase's predecessor (f - 2, same parity) for fill f.  The producer tags the slot with
                 * f + 1 once fill f - 1 is consumed; from then the parity names fill f. */
                while (tag[s] != f + 1u) __nanosleep(32);
                ptx_mbar_wait(ptx_smem(&full[s]), f & 1u);
                const int patch = own_new && i + 1u == nck;
                if (patch) { /* the new row: this lane reads only its own 8 bytes of it (below) */
                    if (G > 2u) new_kv(P, host, en, kvh, lane, &nk, &nvv);
                    uint8_t *row = (uint8_t *)ring + (size_t)s * DAK_ATTN_SLOT_BYTES + (size_t)nrow * 256u + 8u * lane;
                    *(uint2 *)row = nk;
                    *(uint2 *)(row + CHUNK_BYTES) = nvv;
                }
                const uint32_t c = c0 + i;
                const uint32_t left = P->len - c * DAK_ATTN_CHUNK;
                const uint32_t valid = left < DAK_ATTN_CHUNK ? left : DAK_ATTN_CHUNK;
                for (uint32_t pass = 0; pass < npass; pass++) {
                    const uint32_t blk = blk0 + pass * bstep;
                    const int nv = (int)valid - (int)(TPW * blk); /* this block's valid tokens (may be <= 0) */
                    if (nv <= 0 || P->nomath) break;          /* later blocks have fewer */
                    const uint8_t *kb = ring + (size_t)s * DAK_ATTN_SLOT_BYTES + (size_t)TPW * blk * 256u + 8u * lane;
                    const uint8_t *vb = kb + CHUNK_BYTES;
                    float pw[DAK_ATTN_MAX_GROUP];
#pragma unroll
                    for (uint32_t h = 0; h < G; h++) {
                        const float4 qh = *(const float4 *)(mine + h * D);
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
                        const float mn = fmaxf(m[h], cm); /* finite: token 0 of this block is valid */
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
                if (patch) ptx_fence_proxy_async(); /* the patch before the slot's next bulk copy into it */
                __syncwarp();
                if (lane == 0) ptx_mbar_arrive(ptx_smem(&empty[s]));
            }
            /* the unit's end: merge the team's warps */
            const size_t gu = (size_t)(host ? 0u : P->host_units) + u; /* the unit's index in the workspace */
            float ls[DAK_ATTN_MAX_GROUP];
#pragma unroll
            for (uint32_t h = 0; h < G; h++) {
                float x = l[h];
                x += __shfl_xor_sync(FULL, x, 16);
                x += __shfl_xor_sync(FULL, x, 8);
                x += __shfl_xor_sync(FULL, x, 4);
                x += __shfl_xor_sync(FULL, x, 2);
                x += __shfl_xor_sync(FULL, x, 1);
                ls[h] = x;
            }
            if (TW == 1u) {
                /* one warp: its state is the unit's */
#pragma unroll
                for (uint32_t h = 0; h < G; h++)
                    if (h < g)
                        emit_quad(P, split, en, kvh, gu, h, lane, make_float4(acc[h][0], acc[h][1], acc[h][2], acc[h][3]),
                                  m[h], ls[h]);
            } else {
#pragma unroll
                for (uint32_t h = 0; h < G; h++) {
                    *(float4 *)(mine + h * D) = make_float4(acc[h][0], acc[h][1], acc[h][2], acc[h][3]);
                    if (lane == 0) {
                        mml[((b * NCW + cw) * GS + h) * 2u] = m[h];
                        mml[((b * NCW + cw) * GS + h) * 2u + 1u] = ls[h];
                    }
                }
                ptx_bar_sync(bar_id, bar_n);
                const uint32_t w0 = team * TW; /* the team's first consumer warp */
                for (uint32_t i = tt; i < g * 32u; i += bar_n) {
                    const uint32_t h = i >> 5, qd = i & 31u;
                    float M = -INFINITY;
                    for (uint32_t w = 0; w < TW; w++) M = fmaxf(M, mml[((b * NCW + w0 + w) * GS + h) * 2u]);
                    float L = 0.f;
                    float4 O = make_float4(0.f, 0.f, 0.f, 0.f);
                    for (uint32_t w = 0; w < TW; w++) {
                        const size_t k = (size_t)(b * NCW + w0 + w) * GS + h;
                        const float f = exp2f(mml[k * 2u] - M);
                        L += mml[k * 2u + 1u] * f;
                        const float4 o = *(const float4 *)(mo + k * D + 4u * qd);
                        O.x += o.x * f, O.y += o.y * f, O.z += o.z * f, O.w += o.w * f;
                    }
                    emit_quad(P, split, en, kvh, gu, h, qd, O, M, L);
                }
            }
            if (split && P->inline_combine) {
                /* count this split on its pair; the last one merges the pair's splits */
                if (TW > 1u) ptx_bar_sync(bar_id, bar_n); /* every partial of the team written (and merge reads done) */
                else __syncwarp();
                const uint32_t pair = (host ? 0u : P->batch_host * P->kv_heads) + u / splits;
                if (tt == 0) {
                    const uint32_t old = ptx_atom_acq_rel_gpu_add_u32(P->cnt + pair, 1u);
                    const uint32_t last = old == splits - 1u;
                    if (last) P->cnt[pair] = 0u; /* every split of this launch has counted: ready for the next */
                    flags[team] = last;
                }
                if (TW > 1u) ptx_bar_sync(bar_id, bar_n);
                else __syncwarp();
                if (flags[team]) {
                    const size_t gu0 = gu - sp;
                    for (uint32_t i = tt; i < g * 32u; i += bar_n) {
                        const uint32_t h = i >> 5, qd = i & 31u;
                        *(uint2 *)(P->out + ((size_t)en * P->heads + kvh * g + h) * D + 4u * qd) =
                            combine_quad(P, gu0, splits, h, qd);
                    }
                }
            } else if (NB == 1u && TW > 1u) {
                ptx_bar_sync(bar_id, bar_n); /* the single merge buffer is free again */
            }
            nu++;
        }
        it0 += total;
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
    volatile uint32_t *flags = (volatile uint32_t *)(empty + DAK_ATTN_MAX_STAGES); /* one a team */
    volatile uint32_t *tag = flags + NCW; /* a slot's next fill + 1 (0: none yet), set by the producer */
    /* the next launch may start now: a programmatic dependent (the engine's next GEMM, or the next
     * attention launched with pdl) reads nothing of ours before its griddepcontrol.wait, which waits for
     * this grid to complete */
    ptx_griddep_launch_dependents();
    uint64_t *ts = P->ts ? P->ts + (size_t)blockIdx.x * DAK_ATTN_STAMPS : NULL;
    if (ts && threadIdx.x == 0) ts[0] = ptx_globaltimer(), ts[4] = ptx_smid();
    const int host = blockIdx.x < P->host_ctas;
    const uint32_t j = host ? blockIdx.x : blockIdx.x - P->host_ctas;
    const uint32_t nct = host ? P->host_ctas : P->hbm_ctas;
    const uint32_t units = host ? P->host_units : P->hbm_units;
    /* G = 8: one team (the plan's rule: the round bookkeeping of several teams would spill the accumulators) */
    const uint32_t T = G > 4u ? 1u : host ? P->host_teams : P->hbm_teams, TW = 4u * P->groups / T;
    uint32_t u0, u1;
    dak_attn_range(units, nct, j, &u0, &u1);
    if (threadIdx.x == 0) {
        for (uint32_t s = 0; s < S; s++) {
            ptx_mbar_init(ptx_smem(&full[s]), 1u);
            ptx_mbar_init(ptx_smem(&empty[s]), TW < 4u ? TW : 4u); /* the warps that read a slot */
            tag[s] = 0u;
        }
        ptx_fence_mbar_init();
    }
    __syncthreads();
    /* launched as a programmatic dependent (pdl): the previous kernel's q, K, V (the new token's) and its
     * reads of out are complete after this; without pdl it returns at once */
    ptx_griddep_wait();
    if (ts && threadIdx.x == 0) ts[1] = ptx_globaltimer();
    if (u0 >= u1) return;
    if (threadIdx.x < 32u) {
        if (threadIdx.x == 0) {
            produce(P, host, u0, u1, T, ring, full, empty, tag);
            if (ts) ts[2] = ptx_globaltimer();
        }
        return;
    }
    consume(P, host, u0, u1, T, ring, full, empty, merge, flags, tag, G);
    if (ts && threadIdx.x == 32u) ts[3] = ptx_globaltimer(); /* the first consumer warp's end (all end together) */
}

/* one kernel per group size bound (1, 2, 4, 8): a group g runs on the smallest bound >= g */
__global__ void __launch_bounds__(32u + 32u * DAK_ATTN_CONSUMER_WARPS, 1) k_attn_g1(const __grid_constant__ attn_params P) { attn_body(&P, 1u); }
__global__ void __launch_bounds__(32u + 32u * DAK_ATTN_CONSUMER_WARPS, 1) k_attn_g2(const __grid_constant__ attn_params P) { attn_body(&P, 2u); }
__global__ void __launch_bounds__(32u + 32u * DAK_ATTN_CONSUMER_WARPS, 1) k_attn_g4(const __grid_constant__ attn_params P) { attn_body(&P, 4u); }
__global__ void __launch_bounds__(32u + 32u * DAK_ATTN_CONSUMER_WARPS, 1) k_attn_g8(const __grid_constant__ attn_params P) { attn_body(&P, 8u); }

/* combine = KERNEL: the splits of each (entry, head) of a tier with more than one split, one warp a row */
__global__ void __launch_bounds__(128) k_combine(const __grid_constant__ attn_params P)
{
    ptx_griddep_launch_dependents(); /* as in attn_body */
    ptx_griddep_wait();              /* launched with pdl: the partials are complete after this */
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t row = blockIdx.x * 4u + (threadIdx.x >> 5);
    if (row >= P.batch * P.heads) return;
    const uint32_t en = row / P.heads, h = row % P.heads, g = P.group;
    const int host = en < P.batch_host;
    const uint32_t splits = host ? P.host_splits : P.hbm_splits;
    if (splits == 1) return;
    const uint32_t first = host ? 0u : P.batch_host, kvh = h / g, hh = h % g;
    const size_t gu0 = (host ? 0u : P.host_units) + ((size_t)(en - first) * P.kv_heads + kvh) * splits;
    *(uint2 *)(P.out + (size_t)row * D + 4u * lane) = combine_quad(&P, gu0, splits, hh, lane);
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
    if (ctx->cnt) cudaFree(ctx->cnt);
    free(ctx);
}

extern "C" uint32_t dak_attn_ctx_sms(const dak_attn_ctx *ctx) { return ctx ? ctx->sms : 0u; }

extern "C" void dak_attn_ctx_ws(const dak_attn_ctx *ctx, size_t *ws_floats, size_t *ws_counters)
{
    if (ws_floats) *ws_floats = ctx ? ctx->ws_floats : 0;
    if (ws_counters) *ws_counters = ctx ? ctx->ws_counters : 0;
}

/* Grows the partials to >= floats and the counters to >= counters (zeroed on `st`, or synchronously when
 * sync).  Refuses while `st` is being captured: an allocation there would break the capture, and a graph
 * must not name a buffer a later call frees. */
static int ws_grow(dak_attn_ctx *ctx, size_t floats, size_t counters, cudaStream_t st, int sync, const char *who,
                   cm_err *err)
{
    if (floats <= ctx->ws_floats && counters <= ctx->ws_counters) return 0;
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (!sync) ACU(cudaStreamIsCapturing(st, &cs));
    if (cs != cudaStreamCaptureStatusNone)
        return cm_fail(err,
                       "%s: the plan needs a workspace of %zu floats and %zu counters, the context holds %zu and %zu, "
                       "and the stream is being captured (expected dak_attn_ctx_reserve with dak_attn_plan_ws_max over "
                       "the graph's plans before the capture)",
                       who, floats, counters, ctx->ws_floats, ctx->ws_counters);
    if (floats > ctx->ws_floats) {
        if (ctx->ws) {
            cudaError_t e = cudaFree(ctx->ws);
            ctx->ws = NULL, ctx->ws_floats = 0;
            if (e != cudaSuccess) return cm_fail(err, "%s: freeing the workspace: %s", who, cudaGetErrorString(e));
        }
        ACU(cudaMalloc((void **)&ctx->ws, floats * sizeof(float)));
        ctx->ws_floats = floats;
    }
    if (counters > ctx->ws_counters) {
        if (ctx->cnt) {
            cudaError_t e = cudaFree(ctx->cnt);
            ctx->cnt = NULL, ctx->ws_counters = 0;
            if (e != cudaSuccess) return cm_fail(err, "%s: freeing the counters: %s", who, cudaGetErrorString(e));
        }
        ACU(cudaMalloc((void **)&ctx->cnt, counters * sizeof(uint32_t)));
        if (sync) {
            ACU(cudaMemset(ctx->cnt, 0, counters * sizeof(uint32_t)));
            ACU(cudaDeviceSynchronize());
        } else {
            ACU(cudaMemsetAsync(ctx->cnt, 0, counters * sizeof(uint32_t), st));
        }
        ctx->ws_counters = counters;
    }
    return 0;
}

extern "C" int dak_attn_ctx_reserve(dak_attn_ctx *ctx, size_t ws_floats, size_t ws_counters, cm_err *err)
{
    static const char *who = "dak_attn_ctx_reserve";
    if (!ctx) return cm_fail(err, "%s: no context", who);
    /* 2^40 floats (4 TiB) is beyond any GPU: a larger request is a caller's bug (e.g. an unsigned underflow) */
    if (ws_floats > (1ull << 40) || ws_counters > (1ull << 40))
        return cm_fail(err, "%s: %zu floats, %zu counters (expected at most 2^40 each)", who, ws_floats, ws_counters);
    return ws_grow(ctx, ws_floats, ws_counters, NULL, 1, who, err);
}

/* dak_attn_decode (q) and dak_attn_decode_qkv (qkv; q NULL) */
static int decode(dak_attn_ctx *ctx, const dak_kv_tiered *kv, const uint16_t *q, const dak_attn_qkv *qkv,
                  uint32_t heads, uint32_t len, float scale, uint16_t *out, const dak_attn_plan *p, void *stream,
                  const char *who, cm_err *err)
{
    if (!ctx || !kv || !p || (!q && !qkv) || !out) return cm_fail(err, "%s: missing context, cache, plan, q or out", who);
    if (qkv) {
        if (!qkv->c) return cm_fail(err, "%s: no QKV output (dak_attn_qkv.c)", who);
        if (qkv->ld % 4u || (uint64_t)qkv->ld < ((uint64_t)heads + 2u * kv->kv_heads) * D)
            return cm_fail(err, "%s: ld %u (expected a multiple of 4, at least (heads %u + 2 x kv_heads %u) x %u)", who,
                           qkv->ld, heads, kv->kv_heads, D);
        if (!qkv->k_new != !qkv->v_new)
            return cm_fail(err, "%s: k_new %s but v_new %s (expected both or neither)", who, qkv->k_new ? "set" : "NULL",
                           qkv->v_new ? "set" : "NULL");
        if (!qkv->cs != !qkv->sn) return cm_fail(err, "%s: one rotary table without the other", who);
    }
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
    const uint32_t nc = 4u * p->groups;
    const int teams_ok = (p->host_teams == 1 || p->host_teams == 2 || p->host_teams == 4 || p->host_teams == 8) &&
                         (p->hbm_teams == 1 || p->hbm_teams == 2 || p->hbm_teams == 4 || p->hbm_teams == 8) &&
                         p->host_teams <= nc && p->hbm_teams <= nc &&
                         (p->group <= 4 || (p->host_teams == 1 && p->hbm_teams == 1));
    const int split = p->host_splits > 1 || p->hbm_splits > 1;
    if (p->group < 1 || p->group > DAK_ATTN_MAX_GROUP || p->groups < 1 || p->groups > 2 || p->stages < 1 ||
        p->stages > DAK_ATTN_MAX_STAGES || (p->host_ctas && (p->window < 1 || p->window > p->stages)) ||
        p->host_ctas + p->hbm_ctas == 0 || (p->batch_host && !p->host_ctas) ||
        (p->batch_host < p->batch && !p->hbm_ctas) || !teams_ok ||
        (p->combine != DAK_ATTN_COMBINE_INLINE && p->combine != DAK_ATTN_COMBINE_KERNEL) ||
        (split && !p->ws_floats) || (split && p->combine == DAK_ATTN_COMBINE_INLINE && !p->ws_counters))
        return cm_fail(err,
                       "%s: the plan is not one dak_attn_plan_make made (group %u, groups %u, stages %u, window %u, "
                       "CTAs %u + %u, teams %u / %u, combine %u)",
                       who, p->group, p->groups, p->stages, p->window, p->host_ctas, p->hbm_ctas, p->host_teams,
                       p->hbm_teams, p->combine);
    if (kv->batch_host && (!kv->k_host_dev || !kv->v_host_dev))
        return cm_fail(err, "%s: the cache's host tier has no device mapping", who);
    if (kv->batch_host < kv->batch && (!kv->k_dev || !kv->v_dev))
        return cm_fail(err, "%s: the cache's HBM tier is missing", who);
    if (p->smem_bytes > ctx->smem_optin)
        return cm_fail(err, "%s: the plan needs %u bytes of shared memory, the device allows %zu", who,
                       p->smem_bytes, ctx->smem_optin);
    cudaStream_t st = (cudaStream_t)stream;
    if (ws_grow(ctx, p->ws_floats, p->ws_counters, st, 0, who, err)) return -1;
    attn_params P;
    memset(&P, 0, sizeof P);
    P.kh = kv->k_host_dev, P.vh = kv->v_host_dev, P.kg = kv->k_dev, P.vg = kv->v_dev;
    P.q = q, P.out = out, P.ws = ctx->ws, P.cnt = ctx->cnt;
    P.batch = p->batch, P.batch_host = p->batch_host, P.heads = heads, P.kv_heads = p->kv_heads;
    P.group = p->group, P.len = len, P.max_len = kv->max_len, P.chunks = p->chunks;
    P.host_ctas = p->host_ctas, P.hbm_ctas = p->hbm_ctas, P.host_splits = p->host_splits;
    P.hbm_splits = p->hbm_splits, P.host_units = p->host_units, P.hbm_units = p->hbm_units;
    P.window = p->host_ctas ? p->window : p->stages, P.stages = p->stages;
    P.groups = p->groups;
    P.host_teams = p->host_teams, P.hbm_teams = p->hbm_teams;
    P.inline_combine = p->combine == DAK_ATTN_COMBINE_INLINE ? 1u : 0u;
    P.nomath = p->diag_nomath ? 1u : 0u;
    P.ts = p->diag_ts;
    P.qscale = scale * LOG2E;
    if (qkv) {
        P.qc = qkv->c, P.qbias = qkv->bias, P.rcs = qkv->cs, P.rsn = qkv->sn, P.qld = qkv->ld;
        P.kn = qkv->k_new, P.vn = qkv->v_new;
    }
    void (*k)(attn_params) = p->group <= 1 ? k_attn_g1 : p->group <= 2 ? k_attn_g2 : p->group <= 4 ? k_attn_g4
                                                                                                   : k_attn_g8;
    cudaLaunchAttribute at[1] = {cm_attr_pdl()};
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDim = dim3(p->host_ctas + p->hbm_ctas, 1, 1);
    cfg.blockDim = dim3(32u + 32u * 4u * p->groups, 1, 1);
    cfg.dynamicSmemBytes = p->smem_bytes;
    cfg.stream = st;
    cfg.attrs = at;
    cfg.numAttrs = p->pdl ? 1u : 0u;
    void *args[] = {&P};
    ACU(cudaLaunchKernelExC(&cfg, (const void *)k, args));
    if (split && !P.inline_combine) {
        const uint32_t rows = p->batch * heads;
        cfg.gridDim = dim3((rows + 3u) / 4u, 1, 1);
        cfg.blockDim = dim3(128, 1, 1);
        cfg.dynamicSmemBytes = 0;
        ACU(cudaLaunchKernelExC(&cfg, (const void *)k_combine, args));
    }
    return 0;
}

extern "C" int dak_attn_decode(dak_attn_ctx *ctx, const dak_kv_tiered *kv, const uint16_t *q, uint32_t heads,
                               uint32_t len, float scale, uint16_t *out, const dak_attn_plan *p, void *stream,
                               cm_err *err)
{
    return decode(ctx, kv, q, NULL, heads, len, scale, out, p, stream, "dak_attn_decode", err);
}

extern "C" int dak_attn_decode_qkv(dak_attn_ctx *ctx, const dak_kv_tiered *kv, const dak_attn_qkv *qkv,
                                   uint32_t heads, uint32_t len, float scale, uint16_t *out, const dak_attn_plan *p,
                                   void *stream, cm_err *err)
{
    if (!qkv) return cm_fail(err, "dak_attn_decode_qkv: no dak_attn_qkv");
    return decode(ctx, kv, NULL, qkv, heads, len, scale, out, p, stream, "dak_attn_decode_qkv", err);
}
