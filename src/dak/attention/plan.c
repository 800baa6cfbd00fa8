/* dak split attention: the KV cache's tier split, the launch plan and the CPU reference (pure C,
 * tested in CI).  See include/dak/attention.h. */
#include <math.h>
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
    p->groups = o->groups ? o->groups : 2u;
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
    return 0;
}

int dak_attn_decode_ref(const uint16_t *k, const uint16_t *v, const uint16_t *q, uint32_t batch, uint32_t heads,
                        uint32_t kv_heads, uint32_t max_len, uint32_t len, float scale, float *out, cm_err *err)
{
    static const char *who = "dak_attn_decode_ref";
    if (check_shape(who, batch, heads, kv_heads, len, err)) return -1;
    if (len > max_len) return cm_fail(err, "%s: len %u > max_len %u (expected 1..max_len)", who, len, max_len);
    if (!isfinite(scale)) return cm_fail(err, "%s: scale %g (expected a finite value)", who, (double)scale);
    const uint32_t D = DAK_ATTN_D, g = heads / kv_heads;
    double *s = (double *)cm_malloc(sizeof(double) * len);
    double acc[DAK_ATTN_D];
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
