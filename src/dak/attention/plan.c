/* dak split attention: the KV cache's tier split, the launch plan and the CPU reference (pure C,
 * tested in CI).  See include/dak/attention.h. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dak/attention.h"

int dak_kv_batch_for_ratio(uint32_t batch, double ratio, uint32_t *batch_host, cm_err *err)
{
    if (batch == 0) return cm_fail(err, "dak_kv_batch_for_ratio: batch 0 (expected >= 1)");
    if (!isfinite(ratio) || ratio < 0.0 || ratio > 1.0)
        return cm_fail(err, "dak_kv_batch_for_ratio: offload ratio %g (expected a finite value in [0, 1])", ratio);
    double h = floor(ratio * (double)batch + 0.5);
    if (h > (double)batch) h = (double)batch;
    *batch_host = (uint32_t)h;
    return 0;
}

void dak_attn_opts_default(dak_attn_opts *o) { memset(o, 0, sizeof *o); }

static uint32_t cdiv(uint32_t a, uint32_t b) { return (a + b - 1u) / b; }

/* check of the shape shared by the plan and the reference */
static int check_shape(const char *who, uint32_t batch, uint32_t heads, uint32_t kv_heads, uint32_t len,
                       cm_err *err)
{
    if (batch == 0) return cm_fail(err, "%s: batch 0 (expected >= 1)", who);
    if (heads == 0 || kv_heads == 0)
        return cm_fail(err, "%s: heads %u, kv_heads %u (expected both >= 1)", who, heads, kv_heads);
    if (heads % kv_heads)
        return cm_fail(err, "%s: heads %u not a multiple of kv_heads %u (expected heads = group x kv_heads)", who,
                       heads, kv_heads);
    if (heads / kv_heads > DAK_ATTN_MAX_GROUP)
        return cm_fail(err, "%s: query heads per kv head %u (heads %u / kv_heads %u; expected 1..%u)", who,
                       heads / kv_heads, heads, kv_heads, DAK_ATTN_MAX_GROUP);
    if (len == 0) return cm_fail(err, "%s: len 0 (expected >= 1 cached token)", who);
    return 0;
}

/* splits per (entry, kv_head) of a tier with `pairs` pairs on `ctas` CTAs */
static uint32_t auto_splits(uint32_t pairs, uint32_t ctas, uint32_t chunks)
{
    if (pairs == 0 || ctas == 0) return 1;
    uint32_t s = cdiv(2u * ctas, pairs); /* >= 2 units per CTA */
    if (s < 1) s = 1;
    if (s > chunks) s = chunks; /* a split has >= 1 chunk */
    return s;
}

/* Teams (units a CTA works on at once) of a tier: `units` units on `ctas` CTAs, units of at most
 * ceil(chunks / splits) chunks, `warps` consumer warps, a ring of `stages` slots.  The T that minimises a
 * latency model of a CTA's consumers, rounds x (FIX + PASS x passes): rounds = ceil(units a CTA / T), passes
 * = the 16-token blocks of a unit each of its warps reads one after another (a warp's 16-token pass is a
 * dependent chain of loads and shuffles, ~1.4 us in session 19's one-group run; FIX: the unit's merge, ~half
 * that); ties to the larger T.  T is capped by the ring's slack: a busy team holds the slot it reads, and the
 * producer needs ~2 slots in flight, so T <= stages - 2 (4 with 6 slots; session 20: T = 8 ran 5-10 % slower
 * than T = 4 at len 128-1024), except units of <= 32 tokens (one slot, read in <= 2 passes), where T = 8 was
 * 3-4 % faster at 16+ units a CTA. */
static uint32_t auto_teams(uint32_t units, uint32_t ctas, uint32_t chunks, uint32_t splits, uint32_t len,
                           uint32_t warps, uint32_t stages)
{
    const uint32_t FIX = 1, PASS = 2;
    if (units == 0 || ctas == 0) return 1;
    const uint32_t upc = cdiv(units, ctas), cpu = cdiv(chunks, splits);
    const uint32_t tok = cpu * DAK_ATTN_CHUNK < len ? cpu * DAK_ATTN_CHUNK : len;
    const uint32_t blocks = cdiv(tok, 16u);
    uint32_t tmax = 1;
    while (tmax * 2u <= (stages > 2u ? stages - 2u : 1u)) tmax *= 2u;
    if (blocks <= 2u && tmax >= 4u) tmax = 8u;
    uint32_t best = 1;
    uint64_t best_cost = UINT64_MAX;
    for (uint32_t t = 1; t <= warps && t <= tmax; t *= 2u) {
        const uint32_t tw = warps / t;
        /* one team of 8 warps: two halves on alternate chunks, a warp one block of every other chunk */
        const uint32_t passes = tw == 8u ? cdiv(cpu, 2u) : tw >= 4u ? cpu : cdiv(blocks, tw);
        const uint64_t cost = (uint64_t)cdiv(upc, t) * (FIX + PASS * (uint64_t)passes);
        if (cost <= best_cost) best = t, best_cost = cost;
    }
    return best;
}

int dak_attn_plan_make(uint32_t batch, uint32_t batch_host, uint32_t heads, uint32_t kv_heads, uint32_t len,
                       uint32_t sm_count, const dak_attn_opts *o, dak_attn_plan *p, cm_err *err)
{
    static const char *who = "dak_attn_plan";
    dak_attn_opts d;
    if (!o) {
        dak_attn_opts_default(&d);
        o = &d;
    }
    if (!p) return cm_fail(err, "%s: no plan to fill", who);
    memset(p, 0, sizeof *p);
    if (check_shape(who, batch, heads, kv_heads, len, err)) return -1;
    if (batch_host > batch)
        return cm_fail(err, "%s: batch_host %u > batch %u (expected host entries within the batch)", who, batch_host,
                       batch);
    if (o->head_dim != 0 && o->head_dim != DAK_ATTN_D)
        return cm_fail(err, "%s: head_dim %u (expected %u, the only head dimension supported)", who, o->head_dim,
                       DAK_ATTN_D);
    const int mixed = batch_host > 0 && batch_host < batch;
    if (sm_count == 0 || (mixed && sm_count < 2))
        return cm_fail(err, "%s: sm_count %u (expected >= %u%s)", who, sm_count, mixed ? 2u : 1u,
                       mixed ? ": one SM for each tier" : "");
    if (o->stages > DAK_ATTN_MAX_STAGES)
        return cm_fail(err, "%s: stages %u (expected 0 = auto or 1..%u)", who, o->stages, DAK_ATTN_MAX_STAGES);
    const uint32_t stages = o->stages ? o->stages : DAK_ATTN_MAX_STAGES;
    if (o->groups > 2)
        return cm_fail(err, "%s: groups %u (expected 0 = auto, 1 or 2 consumer groups of 4 warps)", who, o->groups);
    if (o->window > stages)
        return cm_fail(err, "%s: window %u (expected 0 = auto or 1..%u, the ring's slots)", who, o->window, stages);
    const uint32_t groups = o->groups ? o->groups : 2u;
    if (o->teams != 0 && o->teams != 1 && o->teams != 2 && o->teams != 4 && o->teams != 8)
        return cm_fail(err, "%s: teams %u (expected 0 = auto, 1, 2, 4 or 8 units a CTA at once)", who, o->teams);
    if (o->teams > 4u * groups)
        return cm_fail(err, "%s: teams %u with %u consumer warps (expected at most one team a warp: 4 x groups)", who,
                       o->teams, 4u * groups);
    if (o->teams > 1 && heads / kv_heads > 4)
        return cm_fail(err, "%s: teams %u with %u query heads a kv head (expected 0 or 1 above 4: the kernel for groups "
                       "of 8 runs one team)", who, o->teams, heads / kv_heads);
    if (o->combine > DAK_ATTN_COMBINE_KERNEL)
        return cm_fail(err, "%s: combine %u (expected 0 = auto, %u = inline or %u = a second kernel)", who, o->combine,
                       DAK_ATTN_COMBINE_INLINE, DAK_ATTN_COMBINE_KERNEL);

    /* CTAs of each tier */
    uint32_t hc = 0, gc = 0;
    if (batch_host == 0) {
        gc = o->hbm_ctas ? o->hbm_ctas : sm_count;
    } else if (batch_host == batch) {
        hc = o->host_ctas ? o->host_ctas : sm_count;
    } else {
        /* 8: the link saturates from 4 CTAs x 1 slot (H200 sweep, run 1); the rest of the SMs read HBM */
        hc = o->host_ctas ? o->host_ctas : (sm_count - 1u < 8u ? sm_count - 1u : 8u);
        if (hc >= sm_count)
            return cm_fail(err, "%s: host_ctas %u leaves no SM for the HBM entries (expected 1..%u with %u SMs)", who,
                           hc, sm_count - 1u, sm_count);
        gc = o->hbm_ctas ? o->hbm_ctas : sm_count - hc;
    }
    if (hc > sm_count || gc > sm_count || hc + gc > sm_count)
        return cm_fail(err, "%s: host_ctas %u + hbm_ctas %u exceed the %u SMs (expected at most one CTA a SM)", who,
                       hc, gc, sm_count);

    const uint32_t chunks = cdiv(len, DAK_ATTN_CHUNK);
    const uint32_t hpairs = batch_host * kv_heads, gpairs = (batch - batch_host) * kv_heads;
    uint32_t hs = 1, gs = 1;
    if (o->splits) {
        hs = gs = o->splits < chunks ? o->splits : chunks;
    } else {
        hs = auto_splits(hpairs, hc, chunks);
        gs = auto_splits(gpairs, gc, chunks);
    }
    if (hpairs == 0) hs = 1;
    if (gpairs == 0) gs = 1;

    p->batch = batch, p->batch_host = batch_host, p->heads = heads, p->kv_heads = kv_heads;
    p->group = heads / kv_heads, p->len = len, p->sm_count = sm_count, p->chunks = chunks;
    p->host_ctas = hc, p->hbm_ctas = gc, p->host_splits = hs, p->hbm_splits = gs;
    p->host_units = hpairs * hs, p->hbm_units = gpairs * gs;
    p->stages = stages;
    p->groups = groups;
    const uint32_t tw = p->group > 4 ? 1u : 4u * groups; /* groups of 8: one team */
    p->host_teams = o->teams ? o->teams : auto_teams(p->host_units, hc, chunks, hs, len, tw, stages);
    p->hbm_teams = o->teams ? o->teams : auto_teams(p->hbm_units, gc, chunks, gs, len, tw, stages);
    /* auto combine: inline, unless a splitting tier runs one team (its whole CTA would wait for the counter's
     * round trip and the partials' reads: 8 x 1024 at T = 1, 49.2 us inline against 41.5 us with the kernel) */
    if (o->combine) {
        p->combine = o->combine;
    } else {
        const int one_team_splits = (hpairs && hs > 1 && p->host_teams == 1) || (gpairs && gs > 1 && p->hbm_teams == 1);
        p->combine = one_team_splits ? DAK_ATTN_COMBINE_KERNEL : DAK_ATTN_COMBINE_INLINE;
    }
    p->pdl = o->pdl ? 1 : 0;
    p->diag_nomath = o->diag_nomath ? 1 : 0;
    if (hc) {
        uint32_t w = o->window;
        if (!w) {
            w = 32u / hc; /* ~1 MiB in flight over the host CTAs */
            if (w < 1) w = 1;
            if (w > stages) w = stages;
        }
        p->window = w;
    } else {
        p->window = 0;
    }
    p->smem_bytes = DAK_ATTN_SMEM_BYTES(stages);
    size_t units = (size_t)(hs > 1 ? p->host_units : 0) + (size_t)(gs > 1 ? p->hbm_units : 0);
    p->ws_floats = units ? ((size_t)p->host_units + p->hbm_units) * p->group * (DAK_ATTN_D + 2u) : 0;
    p->ws_counters = units && p->combine == DAK_ATTN_COMBINE_INLINE ? (size_t)batch * kv_heads : 0;
    return 0;
}

void dak_attn_plan_ws_max(const dak_attn_plan *p, size_t *ws_floats, size_t *ws_counters)
{
    if (!p) return;
    if (ws_floats && p->ws_floats > *ws_floats) *ws_floats = p->ws_floats;
    if (ws_counters && p->ws_counters > *ws_counters) *ws_counters = p->ws_counters;
}

int dak_attn_decode_ref(const uint16_t *k, const uint16_t *v, const uint16_t *q, uint32_t batch, uint32_t heads,
                        uint32_t kv_heads, uint32_t head_dim, uint32_t max_len, uint32_t len, float scale, float *out,
                        cm_err *err)
{
    static const char *who = "dak_attn_decode_ref";
    if (check_shape(who, batch, heads, kv_heads, len, err)) return -1;
    if (head_dim < 1 || head_dim > DAK_ATTN_REF_MAX_D)
        return cm_fail(err, "%s: head_dim %u (expected 1..%u)", who, head_dim, DAK_ATTN_REF_MAX_D);
    if (len > max_len) return cm_fail(err, "%s: len %u > max_len %u (expected 1..max_len)", who, len, max_len);
    if (!isfinite(scale)) return cm_fail(err, "%s: scale %g (expected a finite value)", who, (double)scale);
    const uint32_t D = head_dim, g = heads / kv_heads;
    double *s = (double *)cm_malloc(sizeof(double) * len);
    double acc[DAK_ATTN_REF_MAX_D];
    for (uint32_t b = 0; b < batch; b++)
        for (uint32_t h = 0; h < heads; h++) {
            const uint32_t kvh = h / g;
            const uint16_t *qr = q + ((size_t)b * heads + h) * D;
            const uint16_t *kb = k + ((size_t)b * kv_heads + kvh) * max_len * D;
            const uint16_t *vb = v + ((size_t)b * kv_heads + kvh) * max_len * D;
            double m = -INFINITY;
            for (uint32_t t = 0; t < len; t++) {
                double dot = 0.0;
                for (uint32_t d = 0; d < D; d++)
                    dot += (double)dak_bf16_to_f32(qr[d]) * (double)dak_bf16_to_f32(kb[(size_t)t * D + d]);
                s[t] = dot * (double)scale;
                if (s[t] > m) m = s[t];
            }
            double l = 0.0;
            for (uint32_t d = 0; d < D; d++) acc[d] = 0.0;
            for (uint32_t t = 0; t < len; t++) {
                double pt = exp(s[t] - m);
                l += pt;
                for (uint32_t d = 0; d < D; d++) acc[d] += pt * (double)dak_bf16_to_f32(vb[(size_t)t * D + d]);
            }
            float *o = out + ((size_t)b * heads + h) * D;
            for (uint32_t d = 0; d < D; d++) o[d] = (float)(acc[d] / l);
        }
    free(s);
    return 0;
}
