/* Host side of the wire codec (include/dsb/wire.h): names, reason -> status
 * mapping, and the frame builders used by the client, the servers, the
 * persistent pipeline and the tests.  Part of dsb_core so that every layer
 * above it builds frames the same way. */
#include <string.h>

#include "dsb/wire.h"

const char *dsb_wire_status_name(unsigned status)
{
    static const char *const names[DSB_ST_COUNT] = {
        "ok",         "unknown_model",    "model_incomplete", "bad_request",
        "overloaded", "wrong_n",          "too_large",        "wrong_generation",
        "stale_generation", "bad_model",  "internal"};
    return status < DSB_ST_COUNT ? names[status] : "invalid_status";
}

const char *dsb_wire_reason_name(unsigned reason)
{
    static const char *const names[DSB_WR_COUNT] = {
        "none",           "truncated",        "oversize",         "bad_ethertype",
        "bad_version",    "bad_type",         "length_mismatch",  "bad_status",
        "bad_flags",      "reserved_nonzero", "bad_model_id",     "bad_n",
        "bad_format",     "bad_total",        "bad_frag_count",   "bad_frag_index",
        "bad_offset",     "bad_frag_len",     "zero_generation",  "bad_xi",
        "bad_dt",         "bad_k",            "bad_b",            "bad_field_len",
        "bad_field_value", "format_in_solve", "unknown_model",    "model_incomplete",
        "wrong_n",        "wrong_generation", "too_large",        "load_conflict",
        "stale_generation", "bad_model_image", "bad_row",        "bad_block",
        "wrong_pass",     "bad_padding",      "bad_diagonal",
        "bad_queue",      "bad_frame_count",  "wrong_run",        "bad_action"};
    return reason < DSB_WR_COUNT ? names[reason] : "invalid_reason";
}

const char *dsb_wire_type_name(unsigned type)
{
    switch (type) {
    case DSB_MSG_LOAD: return "LOAD";
    case DSB_MSG_LOAD_ACK: return "LOAD_ACK";
    case DSB_MSG_SOLVE: return "SOLVE";
    case DSB_MSG_RESULT: return "RESULT";
    case DSB_MSG_STREAM: return "STREAM";
    case DSB_MSG_PASS_END: return "PASS_END";
    case DSB_MSG_STREAM_ACK: return "STREAM_ACK";
    default: return "unknown";
    }
}

size_t dsb_wire_build_load(uint8_t *out, size_t cap, const uint8_t dst[6], const uint8_t src[6],
                           uint16_t model_id, uint32_t request_id, uint32_t format, uint32_t n,
                           uint32_t generation, float xi_default, const void *packed,
                           uint32_t total_bytes, uint32_t frag_index)
{
    uint32_t off = frag_index * DSB_WIRE_FRAG_BYTES;
    if (off >= total_bytes) return 0;
    uint32_t len = total_bytes - off;
    if (len > DSB_WIRE_FRAG_BYTES) len = DSB_WIRE_FRAG_BYTES;
    if (cap < DSB_WIRE_HDR_BYTES + len) return 0;
    dsb_wire_load l;
    dsb_wire_init(&l, DSB_MSG_LOAD, dst, src);
    l.model_id = model_id;
    l.request_id = request_id;
    l.n = n;
    l.generation = generation;
    l.payload_len = (uint16_t)len;
    l.format = (uint8_t)format;
    l.offset = off;
    l.total_bytes = total_bytes;
    l.frag_index = (uint16_t)frag_index;
    l.frag_count = (uint16_t)((total_bytes + DSB_WIRE_FRAG_BYTES - 1u) / DSB_WIRE_FRAG_BYTES);
    l.xi_default = xi_default;
    memcpy(out, &l, sizeof l);
    memcpy(out + DSB_WIRE_HDR_BYTES, (const uint8_t *)packed + off, len);
    return DSB_WIRE_HDR_BYTES + len;
}

size_t dsb_wire_build_solve(uint8_t *out, size_t cap, const uint8_t dst[6], const uint8_t src[6],
                            uint16_t model_id, uint32_t request_id, uint32_t n,
                            uint32_t generation, uint32_t steps, uint32_t replicas, uint64_t seed,
                            float xi, float dt, const int16_t *h)
{
    size_t plen = h ? 2u * (size_t)n : 0u;
    if (plen > DSB_WIRE_MAX_PAYLOAD || cap < DSB_WIRE_HDR_BYTES + plen) return 0;
    dsb_wire_solve s;
    dsb_wire_init(&s, DSB_MSG_SOLVE, dst, src);
    s.model_id = model_id;
    s.request_id = request_id;
    s.n = n;
    s.generation = generation;
    s.payload_len = (uint16_t)plen;
    s.steps = steps;
    s.replicas = replicas;
    s.seed = seed;
    s.xi = xi;
    s.dt = dt;
    memcpy(out, &s, sizeof s);
    if (plen) memcpy(out + DSB_WIRE_HDR_BYTES, h, plen);
    return DSB_WIRE_HDR_BYTES + plen;
}

