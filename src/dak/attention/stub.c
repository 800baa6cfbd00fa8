/* dak_attention without CUDA: every device entry point reports "not built". */
#include <stddef.h>
#include <string.h>

#include "dak/attention.h"

#define NB(err) cm_fail((err), "dak attention: not built (configured without CUDA)")

int dak_kv_create(dak_kv_tiered *kv, uint32_t batch, uint32_t kv_heads, uint32_t max_len, uint32_t batch_host,
                  cm_err *err)
{
    (void)batch, (void)kv_heads, (void)max_len, (void)batch_host;
    if (kv) memset(kv, 0, sizeof *kv);
    return NB(err);
}
int dak_kv_view(dak_kv_tiered *kv, uint32_t batch, uint32_t kv_heads, uint32_t max_len, uint32_t batch_host,
                uint16_t *k_host, uint16_t *v_host, uint16_t *k_dev, uint16_t *v_dev, cm_err *err)
{
    (void)batch, (void)kv_heads, (void)max_len, (void)batch_host, (void)k_host, (void)v_host, (void)k_dev,
        (void)v_dev;
    if (kv) memset(kv, 0, sizeof *kv);
    return NB(err);
}
int dak_kv_upload(dak_kv_tiered *kv, const uint16_t *k_full, const uint16_t *v_full, int src_on_device,
                  cm_err *err)
{
    (void)kv, (void)k_full, (void)v_full, (void)src_on_device;
    return NB(err);
}
void dak_kv_destroy(dak_kv_tiered *kv)
{
    if (kv) memset(kv, 0, sizeof *kv);
}
int dak_attn_ctx_create(dak_attn_ctx **ctx, cm_err *err)
{
    *ctx = NULL;
    return NB(err);
}
void dak_attn_ctx_destroy(dak_attn_ctx *ctx) { (void)ctx; }
uint32_t dak_attn_ctx_sms(const dak_attn_ctx *ctx)
{
    (void)ctx;
    return 0;
}
int dak_attn_ctx_reserve(dak_attn_ctx *ctx, size_t ws_floats, size_t ws_counters, cm_err *err)
{
    (void)ctx, (void)ws_floats, (void)ws_counters;
    return NB(err);
}
void dak_attn_ctx_ws(const dak_attn_ctx *ctx, size_t *ws_floats, size_t *ws_counters)
{
    (void)ctx;
    if (ws_floats) *ws_floats = 0;
    if (ws_counters) *ws_counters = 0;
}
int dak_attn_decode(dak_attn_ctx *ctx, const dak_kv_tiered *kv, const uint16_t *q, uint32_t heads, uint32_t len,
                    float scale, uint16_t *out, const dak_attn_plan *p, void *stream, cm_err *err)
{
    (void)ctx, (void)kv, (void)q, (void)heads, (void)len, (void)scale, (void)out, (void)p, (void)stream;
    return NB(err);
}
int dak_attn_decode_qkv(dak_attn_ctx *ctx, const dak_kv_tiered *kv, const dak_attn_qkv *qkv, uint32_t heads,
                        uint32_t len, float scale, uint16_t *out, const dak_attn_plan *p, void *stream, cm_err *err)
{
    (void)ctx, (void)kv, (void)qkv, (void)heads, (void)len, (void)scale, (void)out, (void)p, (void)stream;
    return NB(err);
}
