/* The dsb service wire format (seed 000, Sec. III, Table I).
 *
 * One message = one frame: a 64-byte header that includes the 14-byte
 * Ethernet header, then a payload.  Every field after the Ethernet header is
 * little-endian and naturally aligned (relative to the start of the frame, so
 * a frame buffer aligned to 8 bytes can be read in place, which the GPU
 * receive agent does).  Over UDP the datagram carries exactly the same bytes,
 * Ethernet header included (MACs zero), so one codec serves both transports.
 *
 *   off size  common part (all types)
 *     0   6   destination MAC
 *     6   6   source MAC
 *    12   2   EtherType 0x88B5, big-endian (network order) like every EtherType
 *    14   1   type (dsb_wire_type)
 *    15   1   version (DSB_WIRE_VERSION)
 *    16   2   status (replies; 0 in requests)
 *    18   2   model id (store slot, < DSB_STORE_SLOTS)
 *    20   4   request id (chosen by the sender, echoed in the reply)
 *    24   4   n (variables)
 *    28   4   generation (LOAD/LOAD_ACK: the model generation; SOLVE: 0 = the
 *             current one, else the generation required; RESULT: the
 *             generation the solve used)
 *    32   2   payload length in bytes (frame length = 64 + payload length)
 *    34   1   format (dsb_format; LOAD, LOAD_ACK, RESULT)
 *    35   1   flags (requests: 0; replies: the detail reason, dsb_wire_reason)
 *    36..63   type specific, see the structs below; reserved bytes are zero.
 *
 * docs/protocol.md describes the exchanges and the limits.
 *
 * Usable from C11 and CUDA C (the GPU receive agent reads frames with it). */
#ifndef DSB_WIRE_H
#define DSB_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dsb/core.h"
#include "dsb/stream.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "dsb wire codec assumes a little-endian host"
#endif

#if defined(__cplusplus)
#define DSB_WIRE_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define DSB_WIRE_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define DSB_WIRE_VERSION 1u
#define DSB_WIRE_ETHERTYPE 0x88B5u       /* IEEE 802 local experimental EtherType 1 */
#define DSB_WIRE_HDR_BYTES 64u
#define DSB_WIRE_ETH_BYTES 14u
#define DSB_WIRE_FRAG_BYTES 1408u        /* LOAD payload per fragment (Table I) */
#define DSB_WIRE_MAX_FRAME 1514u         /* 1500-byte MTU + Ethernet header */
#define DSB_WIRE_MAX_PAYLOAD (DSB_WIRE_MAX_FRAME - DSB_WIRE_HDR_BYTES) /* 1450 */
#define DSB_WIRE_MAX_N 2048u             /* Prop. 1(iii); also the PM1 limit of a slot */
#define DSB_WIRE_MAX_FIELD_N (DSB_WIRE_MAX_PAYLOAD / 2u) /* 725: field must fit a frame */
#define DSB_STORE_SLOTS 64u
#define DSB_STORE_SLOT_BYTES (512u * 1024u)
#define DSB_WIRE_MAX_FRAGS ((DSB_STORE_SLOT_BYTES + DSB_WIRE_FRAG_BYTES - 1u) / DSB_WIRE_FRAG_BYTES)
#define DSB_WIRE_DEFAULT_PORT 9400u      /* UDP: the port replaces the EtherType */

typedef enum {
    DSB_MSG_LOAD = 1,
    DSB_MSG_LOAD_ACK = 2,
    DSB_MSG_SOLVE = 3,
    DSB_MSG_RESULT = 4,
    DSB_MSG_STREAM = 5,  /* streamed coupling frame (Sec. VIII), 4096 bytes */
    DSB_MSG_PASS_END = 6, /* end of one queue's frames of a pass */
    DSB_MSG_STREAM_ACK = 7 /* the receiver's answer to a pass: next, resend, done */
} dsb_wire_type;

/* Reply status (RESULT and LOAD_ACK). */
typedef enum {
    DSB_ST_OK = 0,
    DSB_ST_UNKNOWN_MODEL = 1,    /* slot has no complete generation */
    DSB_ST_MODEL_INCOMPLETE = 2, /* slot empty but a generation is being loaded */
    DSB_ST_BAD_REQUEST = 3,      /* a field is out of range; flags = reason */
    DSB_ST_OVERLOADED = 4,       /* the work queue was full: not solved */
    DSB_ST_WRONG_N = 5,          /* SOLVE n differs from the model's n */
    DSB_ST_TOO_LARGE = 6,        /* K, B or their product exceed the dispatcher */
    DSB_ST_WRONG_GENERATION = 7, /* SOLVE asked for a generation not current */
    DSB_ST_STALE_GENERATION = 8, /* LOAD older than the slot's current generation */
    DSB_ST_BAD_MODEL = 9,        /* complete image failed validation */
    DSB_ST_INTERNAL = 10,        /* the solver failed */
    DSB_ST_COUNT
} dsb_wire_status;

/* Why a frame was rejected; one counter each on the server.  Frames rejected
 * before the common header is trustworthy (up to BAD_TYPE) are counted only;
 * the others are also answered (status above, reason in `flags`). */
typedef enum {
    DSB_WR_NONE = 0,
    DSB_WR_TRUNCATED,         /* shorter than the 64-byte header */
    DSB_WR_OVERSIZE,          /* longer than DSB_WIRE_MAX_FRAME */
    DSB_WR_BAD_ETHERTYPE,
    DSB_WR_BAD_VERSION,
    DSB_WR_BAD_TYPE,          /* unknown, or a reply type sent to the server */
    DSB_WR_LENGTH_MISMATCH,   /* 64 + payload length != frame length */
    DSB_WR_BAD_STATUS,        /* request with a non-zero status */
    DSB_WR_BAD_FLAGS,         /* request with non-zero flags */
    DSB_WR_RESERVED_NONZERO,
    DSB_WR_BAD_MODEL_ID,      /* >= DSB_STORE_SLOTS */
    DSB_WR_BAD_N,             /* 0 or > DSB_WIRE_MAX_N */
    DSB_WR_BAD_FORMAT,
    DSB_WR_BAD_TOTAL,         /* LOAD total size != packed size, or > slot */
    DSB_WR_BAD_FRAG_COUNT,    /* != ceil(total / 1408) */
    DSB_WR_BAD_FRAG_INDEX,    /* >= fragment count */
    DSB_WR_BAD_OFFSET,        /* != index * 1408 */
    DSB_WR_BAD_FRAG_LEN,      /* payload != min(1408, total - offset) */
    DSB_WR_ZERO_GENERATION,
    DSB_WR_BAD_XI,            /* not finite, or negative (0 allowed in SOLVE only) */
    DSB_WR_BAD_DT,            /* not finite or <= 0 */
    DSB_WR_BAD_K,             /* 0 */
    DSB_WR_BAD_B,             /* 0 */
    DSB_WR_BAD_FIELD_LEN,     /* SOLVE payload neither 0 nor 2n */
    DSB_WR_BAD_FIELD_VALUE,   /* h_i = -32768 (Prop. 1(iii) needs |h_i| < 2^15) */
    DSB_WR_FORMAT_IN_SOLVE,   /* SOLVE with a format byte (must be 0) */
    DSB_WR_UNKNOWN_MODEL,     /* SOLVE for a slot without a complete model */
    DSB_WR_MODEL_INCOMPLETE,
    DSB_WR_WRONG_N,
    DSB_WR_WRONG_GENERATION,
    DSB_WR_TOO_LARGE,         /* over the dispatcher's K, B, work or one-block fit */
    DSB_WR_LOAD_CONFLICT,     /* fragment disagrees with its generation (n, format, size, xi) */
    DSB_WR_STALE_GENERATION,
    DSB_WR_BAD_MODEL_IMAGE,   /* dsb_model_from_packed rejected the complete image */
    /* streamed frames (dsb_wire_stream_check): */
    DSB_WR_BAD_ROW,           /* row >= n */
    DSB_WR_BAD_BLOCK,         /* column block >= ceil(n / 32256) */
    DSB_WR_WRONG_PASS,        /* a frame of another pass than the one being consumed */
    DSB_WR_BAD_PADDING,       /* coupling bits set in columns >= n */
    DSB_WR_BAD_DIAGONAL,      /* u_ii = 0: the stream carries a +1 diagonal (Eq. (10)) */
    DSB_WR_BAD_QUEUE,         /* PASS_END: no queues, or queue >= queue count */
    DSB_WR_BAD_FRAME_COUNT,   /* PASS_END: more frames than a pass has */
    DSB_WR_WRONG_RUN,         /* request id of another run (instance or seed differ) */
    DSB_WR_BAD_ACTION,        /* STREAM_ACK: action not next, resend or done */
    DSB_WR_COUNT
} dsb_wire_reason;

/* The common 36 bytes, repeated at the head of each view so that every view is
 * one 64-byte struct whose offsets are fixed by the asserts below. */
#define DSB_WIRE_COMMON_FIELDS                                                                  \
    uint8_t dst[6];                                                                             \
    uint8_t src[6];                                                                             \
    uint16_t ethertype_be;                                                                      \
    uint8_t type;                                                                               \
    uint8_t version;                                                                            \
    uint16_t status;                                                                            \
    uint16_t model_id;                                                                          \
    uint32_t request_id;                                                                        \
    uint32_t n;                                                                                 \
    uint32_t generation;                                                                        \
    uint16_t payload_len;                                                                       \
    uint8_t format;                                                                             \
    uint8_t flags;

typedef struct {
    DSB_WIRE_COMMON_FIELDS
    uint32_t rsv[7];
} dsb_wire_hdr;

/* LOAD: payload = bytes [offset, offset + payload_len) of the packed image. */
typedef struct {
    DSB_WIRE_COMMON_FIELDS
    uint32_t offset;      /* 36 */
    uint32_t total_bytes; /* 40: dsb_packed_bytes(format, n) */
    uint16_t frag_index;  /* 44 */
    uint16_t frag_count;  /* 46 */
    float xi_default;     /* 48: the model's default coupling gain, > 0 */
    uint32_t rsv[3];      /* 52 */
} dsb_wire_load;

/* LOAD_ACK: no payload.  Sent when a generation completes and again for every
 * fragment of it that arrives afterwards; also with an error status. */
typedef struct {
    DSB_WIRE_COMMON_FIELDS
    uint32_t frags_received;     /* 36: of the generation in `generation` */
    uint32_t total_bytes;        /* 40 */
    uint16_t frag_index;         /* 44: echo of the fragment that caused the ack */
    uint16_t frag_count;         /* 46 */
    float xi_default;            /* 48 */
    uint32_t current_generation; /* 52: the slot's complete generation (0 = none) */
    uint32_t rsv[2];             /* 56 */
} dsb_wire_load_ack;

/* SOLVE: payload = the field h as n int16 (payload_len 2n) or nothing (h = 0). */
typedef struct {
    DSB_WIRE_COMMON_FIELDS
    uint32_t steps;    /* 36: K */
    uint32_t replicas; /* 40: B */
    uint32_t rsv;      /* 44 */
    uint64_t seed;     /* 48 */
    float xi;          /* 56: 0 = the model's default */
    float dt;          /* 60 */
} dsb_wire_solve;

/* RESULT: payload = best spins, ceil(n/32) words (bit j = 1 for s_j = +1),
 * only when status is OK. */
typedef struct {
    DSB_WIRE_COMMON_FIELDS
    uint32_t best_replica; /* 36 */
    int64_t energy2;       /* 40: 2E of the best replica */
    uint32_t worker_id;    /* 48 */
    uint32_t t_queue_ns;   /* 52: receive -> taken by a worker */
    uint32_t t_solve_ns;   /* 56: the solve */
    uint32_t t_tx_ns;      /* 60: end of solve -> handed to the transport */
} dsb_wire_result;

/* STREAM (Sec. VIII-A): payload = DSB_STREAM_PAYLOAD bytes, the coupling bits
 * of columns [32256 block, 32256 (block + 1)) of `row` (bit u_ij = 1 for
 * J_ij = +1, u_ii = 1, zero beyond n).  model_id and generation are 0, format
 * is PM1, request_id is the run id (dsb_stream_run_id: a receiver refuses
 * other runs' frames).  Sent in column-block-major order; `seq` is the
 * frame's index in the pass (n block + row). */
typedef struct {
    DSB_WIRE_COMMON_FIELDS
    uint32_t row;   /* 36 */
    uint32_t block; /* 40 */
    uint32_t pass;  /* 44 */
    uint16_t queue; /* 48: the sender queue that carried the frame */
    uint16_t rsv16; /* 50 */
    uint32_t rsv;   /* 52 */
    uint64_t seq;   /* 56 */
} dsb_wire_stream;

/* PASS_END: no payload; one per sender queue closes its frames of a pass. */
typedef struct {
    DSB_WIRE_COMMON_FIELDS
    uint32_t pass;        /* 36 */
    uint32_t attempt;     /* 40: the generator's attempt of the pass (the RESENDs it heard) */
    uint16_t queue;       /* 44 */
    uint16_t queue_count; /* 46 */
    uint64_t frames;      /* 48: STREAM frames this queue sent in the pass */
    uint64_t rsv2;        /* 56 */
} dsb_wire_pass_end;

/* STREAM_ACK: no payload; the receiver's answer to a pass's PASS_ENDs (sent
 * to the address of the PASS_END that completed it, and again for every
 * PASS_END of an answered pass that arrives later). */
typedef enum {
    DSB_STREAM_NEXT = 1,   /* every frame of the pass consumed: send pass + 1 */
    DSB_STREAM_RESEND = 2, /* frames missing: the counters were reset, send the pass again */
    DSB_STREAM_DONE = 3    /* the final pass consumed: the run is over */
} dsb_stream_action;

typedef struct {
    DSB_WIRE_COMMON_FIELDS
    uint32_t pass;    /* 36 */
    uint16_t action;  /* 40: dsb_stream_action */
    uint16_t rsv16;   /* 42 */
    uint32_t attempt; /* 44: the receiver's count of earlier attempts of the pass */
    uint64_t frames;  /* 48: distinct good frames the receiver consumed in the attempt */
    uint64_t rsv2;    /* 56 */
} dsb_wire_stream_ack;

#define DSB_WIRE_OFF(T, f, o) DSB_WIRE_STATIC_ASSERT(offsetof(T, f) == (o), #T "." #f " at " #o)
DSB_WIRE_OFF(dsb_wire_hdr, ethertype_be, 12);
DSB_WIRE_OFF(dsb_wire_hdr, type, 14);
DSB_WIRE_OFF(dsb_wire_hdr, version, 15);
DSB_WIRE_OFF(dsb_wire_hdr, status, 16);
DSB_WIRE_OFF(dsb_wire_hdr, model_id, 18);
DSB_WIRE_OFF(dsb_wire_hdr, request_id, 20);
DSB_WIRE_OFF(dsb_wire_hdr, n, 24);
DSB_WIRE_OFF(dsb_wire_hdr, generation, 28);
DSB_WIRE_OFF(dsb_wire_hdr, payload_len, 32);
DSB_WIRE_OFF(dsb_wire_hdr, format, 34);
DSB_WIRE_OFF(dsb_wire_hdr, flags, 35);
DSB_WIRE_OFF(dsb_wire_hdr, rsv, 36);
DSB_WIRE_OFF(dsb_wire_load, offset, 36);
DSB_WIRE_OFF(dsb_wire_load, total_bytes, 40);
DSB_WIRE_OFF(dsb_wire_load, frag_index, 44);
DSB_WIRE_OFF(dsb_wire_load, frag_count, 46);
DSB_WIRE_OFF(dsb_wire_load, xi_default, 48);
DSB_WIRE_OFF(dsb_wire_load, rsv, 52);
DSB_WIRE_OFF(dsb_wire_load_ack, frags_received, 36);
DSB_WIRE_OFF(dsb_wire_load_ack, total_bytes, 40);
DSB_WIRE_OFF(dsb_wire_load_ack, frag_index, 44);
DSB_WIRE_OFF(dsb_wire_load_ack, frag_count, 46);
DSB_WIRE_OFF(dsb_wire_load_ack, xi_default, 48);
DSB_WIRE_OFF(dsb_wire_load_ack, current_generation, 52);
DSB_WIRE_OFF(dsb_wire_load_ack, rsv, 56);
DSB_WIRE_OFF(dsb_wire_solve, steps, 36);
DSB_WIRE_OFF(dsb_wire_solve, replicas, 40);
DSB_WIRE_OFF(dsb_wire_solve, rsv, 44);
DSB_WIRE_OFF(dsb_wire_solve, seed, 48);
DSB_WIRE_OFF(dsb_wire_solve, xi, 56);
DSB_WIRE_OFF(dsb_wire_solve, dt, 60);
DSB_WIRE_OFF(dsb_wire_result, best_replica, 36);
DSB_WIRE_OFF(dsb_wire_result, energy2, 40);
DSB_WIRE_OFF(dsb_wire_result, worker_id, 48);
DSB_WIRE_OFF(dsb_wire_result, t_queue_ns, 52);
DSB_WIRE_OFF(dsb_wire_result, t_solve_ns, 56);
DSB_WIRE_OFF(dsb_wire_result, t_tx_ns, 60);
DSB_WIRE_OFF(dsb_wire_stream, row, 36);
DSB_WIRE_OFF(dsb_wire_stream, block, 40);
DSB_WIRE_OFF(dsb_wire_stream, pass, 44);
DSB_WIRE_OFF(dsb_wire_stream, queue, 48);
DSB_WIRE_OFF(dsb_wire_stream, rsv16, 50);
DSB_WIRE_OFF(dsb_wire_stream, rsv, 52);
DSB_WIRE_OFF(dsb_wire_stream, seq, 56);
DSB_WIRE_OFF(dsb_wire_pass_end, pass, 36);
DSB_WIRE_OFF(dsb_wire_pass_end, attempt, 40);
DSB_WIRE_OFF(dsb_wire_pass_end, queue, 44);
DSB_WIRE_OFF(dsb_wire_pass_end, queue_count, 46);
DSB_WIRE_OFF(dsb_wire_pass_end, frames, 48);
DSB_WIRE_OFF(dsb_wire_pass_end, rsv2, 56);
DSB_WIRE_OFF(dsb_wire_stream_ack, pass, 36);
DSB_WIRE_OFF(dsb_wire_stream_ack, action, 40);
DSB_WIRE_OFF(dsb_wire_stream_ack, rsv16, 42);
DSB_WIRE_OFF(dsb_wire_stream_ack, attempt, 44);
DSB_WIRE_OFF(dsb_wire_stream_ack, frames, 48);
DSB_WIRE_OFF(dsb_wire_stream_ack, rsv2, 56);
DSB_WIRE_STATIC_ASSERT(sizeof(dsb_wire_stream_ack) == 64, "STREAM_ACK header is 64 bytes");
DSB_WIRE_STATIC_ASSERT(sizeof(dsb_wire_hdr) == 64, "header is 64 bytes");
DSB_WIRE_STATIC_ASSERT(sizeof(dsb_wire_stream) == 64, "STREAM header is 64 bytes");
DSB_WIRE_STATIC_ASSERT(sizeof(dsb_wire_pass_end) == 64, "PASS_END header is 64 bytes");
DSB_WIRE_STATIC_ASSERT(DSB_WIRE_HDR_BYTES + DSB_STREAM_PAYLOAD == DSB_STREAM_FRAME,
                       "STREAM frame is 4096 bytes");
DSB_WIRE_STATIC_ASSERT(sizeof(dsb_wire_load) == 64, "LOAD header is 64 bytes");
DSB_WIRE_STATIC_ASSERT(sizeof(dsb_wire_load_ack) == 64, "LOAD_ACK header is 64 bytes");
DSB_WIRE_STATIC_ASSERT(sizeof(dsb_wire_solve) == 64, "SOLVE header is 64 bytes");
DSB_WIRE_STATIC_ASSERT(sizeof(dsb_wire_result) == 64, "RESULT header is 64 bytes");
DSB_WIRE_STATIC_ASSERT(DSB_WIRE_HDR_BYTES + DSB_WIRE_FRAG_BYTES == 1472, "LOAD frame 1472 B");
DSB_WIRE_STATIC_ASSERT(DSB_WIRE_MAX_FRAGS == 373, "373 fragments fill a slot");

/* Everything a decoded frame is: one of the views (copied out of the frame, so
 * the frame buffer may be unaligned) and the payload inside the frame. */
typedef struct {
    union {
        dsb_wire_hdr hdr;
        dsb_wire_load load;
        dsb_wire_load_ack ack;
        dsb_wire_solve solve;
        dsb_wire_result result;
    } u;
    const uint8_t *payload; /* points into the frame; payload_len bytes */
    uint32_t payload_len;
} dsb_wire_msg;

/* Packed size of a model (same as dsb_packed_bytes, usable on the device). */
DSB_HD static inline uint32_t dsb_wire_packed_bytes(uint32_t format, uint32_t n)
{
    uint32_t W = dsb_words(n);
    switch (format) {
    case 1: return 4u * n * W;              /* PM1 */
    case 2: return 8u * n * W + 4u * n;     /* TERNARY */
    case 3: return n * 32u * W;             /* INT8 */
    default: return 0;
    }
}

DSB_HD static inline int dsb_wire_finite(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return ((b >> 23) & 0xFFu) != 0xFFu;
}

DSB_HD static inline int dsb_wire_rsv_zero(const uint32_t *r, int count)
{
    for (int i = 0; i < count; i++)
        if (r[i]) return 0;
    return 1;
}

/* Decodes and validates one frame as received by a server (`to_server` = 1:
 * LOAD or SOLVE) or by a client (0: LOAD_ACK or RESULT).  Reads nothing
 * beyond frame[0 .. len).  Checks every field that the frame alone
 * determines: the type-specific ranges, the fragment geometry and the field
 * values; the store and the dispatcher check the rest (model present, n
 * matching, K/B limits).  Returns DSB_WR_NONE or the first reason found.
 * dsb_wire_decode_ex leaves the scan of the SOLVE field for h_i = -32768 (the
 * last SOLVE check) to the caller when skip_field_scan is set: the GPU
 * receive warp scans it with 32 lanes. */
DSB_HD static inline dsb_wire_reason dsb_wire_decode_ex(const uint8_t *frame, size_t len,
                                                        int to_server, int skip_field_scan,
                                                        dsb_wire_msg *m)
{
    if (len < DSB_WIRE_HDR_BYTES) return DSB_WR_TRUNCATED;
    if (len > DSB_WIRE_MAX_FRAME) return DSB_WR_OVERSIZE;
    memcpy(&m->u, frame, DSB_WIRE_HDR_BYTES);
    const dsb_wire_hdr *h = &m->u.hdr;
    if (frame[12] != (uint8_t)(DSB_WIRE_ETHERTYPE >> 8) ||
        frame[13] != (uint8_t)(DSB_WIRE_ETHERTYPE & 0xFFu))
        return DSB_WR_BAD_ETHERTYPE;
    if (h->version != DSB_WIRE_VERSION) return DSB_WR_BAD_VERSION;
    if (to_server ? (h->type != DSB_MSG_LOAD && h->type != DSB_MSG_SOLVE)
                  : (h->type != DSB_MSG_LOAD_ACK && h->type != DSB_MSG_RESULT))
        return DSB_WR_BAD_TYPE;
    if ((size_t)DSB_WIRE_HDR_BYTES + h->payload_len != len) return DSB_WR_LENGTH_MISMATCH;
    m->payload = frame + DSB_WIRE_HDR_BYTES;
    m->payload_len = h->payload_len;
    if (to_server) {
        if (h->status != 0) return DSB_WR_BAD_STATUS;
        if (h->flags != 0) return DSB_WR_BAD_FLAGS;
    }
    /* replies with an error status echo whatever the bad request carried */
    if (to_server || h->status == DSB_ST_OK) {
        if (h->model_id >= DSB_STORE_SLOTS) return DSB_WR_BAD_MODEL_ID;
        if (h->n == 0 || h->n > DSB_WIRE_MAX_N) return DSB_WR_BAD_N;
    }
    switch (h->type) {
    case DSB_MSG_LOAD: {
        const dsb_wire_load *l = &m->u.load;
        if (!dsb_wire_rsv_zero(l->rsv, 3)) return DSB_WR_RESERVED_NONZERO;
        if (l->format < 1 || l->format > 3) return DSB_WR_BAD_FORMAT;
        if (l->generation == 0) return DSB_WR_ZERO_GENERATION;
        uint32_t total = dsb_wire_packed_bytes(l->format, l->n);
        if (total == 0 || total > DSB_STORE_SLOT_BYTES || l->total_bytes != total)
            return DSB_WR_BAD_TOTAL;
        if (l->frag_count != (total + DSB_WIRE_FRAG_BYTES - 1u) / DSB_WIRE_FRAG_BYTES)
            return DSB_WR_BAD_FRAG_COUNT;
        if (l->frag_index >= l->frag_count) return DSB_WR_BAD_FRAG_INDEX;
        if (l->offset != (uint32_t)l->frag_index * DSB_WIRE_FRAG_BYTES) return DSB_WR_BAD_OFFSET;
        uint32_t want = total - l->offset;
        if (want > DSB_WIRE_FRAG_BYTES) want = DSB_WIRE_FRAG_BYTES;
        if (l->payload_len != want) return DSB_WR_BAD_FRAG_LEN;
        if (!dsb_wire_finite(l->xi_default) || !(l->xi_default > 0.0f)) return DSB_WR_BAD_XI;
        break;
    }
    case DSB_MSG_SOLVE: {
        const dsb_wire_solve *s = &m->u.solve;
        if (s->rsv != 0) return DSB_WR_RESERVED_NONZERO;
        if (s->format != 0) return DSB_WR_FORMAT_IN_SOLVE;
        if (s->steps == 0) return DSB_WR_BAD_K;
        if (s->replicas == 0) return DSB_WR_BAD_B;
        if (!dsb_wire_finite(s->xi) || s->xi < 0.0f) return DSB_WR_BAD_XI;
        if (!dsb_wire_finite(s->dt) || !(s->dt > 0.0f)) return DSB_WR_BAD_DT;
        if (s->payload_len != 0 && s->payload_len != 2u * s->n) return DSB_WR_BAD_FIELD_LEN;
        if (!skip_field_scan) /* the last SOLVE check: a caller may scan in parallel */
            for (uint32_t i = 0; i < s->payload_len; i += 2)
                if (m->payload[i] == 0x00 && m->payload[i + 1] == 0x80)
                    return DSB_WR_BAD_FIELD_VALUE;
        break;
    }
    case DSB_MSG_LOAD_ACK: {
        const dsb_wire_load_ack *a = &m->u.ack;
        if (a->payload_len != 0) return DSB_WR_LENGTH_MISMATCH;
        if (!dsb_wire_rsv_zero(a->rsv, 2)) return DSB_WR_RESERVED_NONZERO;
        if (a->status >= DSB_ST_COUNT) return DSB_WR_BAD_STATUS;
        break;
    }
    case DSB_MSG_RESULT: {
        const dsb_wire_result *r = &m->u.result;
        if (r->status >= DSB_ST_COUNT) return DSB_WR_BAD_STATUS;
        uint32_t want = r->status == DSB_ST_OK ? 4u * dsb_words(r->n) : 0u;
        if (r->payload_len != want) return DSB_WR_LENGTH_MISMATCH;
        break;
    }
    default: return DSB_WR_BAD_TYPE;
    }
    return DSB_WR_NONE;
}

DSB_HD static inline dsb_wire_reason dsb_wire_decode(const uint8_t *frame, size_t len,
                                                     int to_server, dsb_wire_msg *m)
{
    return dsb_wire_decode_ex(frame, len, to_server, 0, m);
}

/* Fills the common part of a header (zeroing the rest): MACs, EtherType,
 * type, version. */
DSB_HD static inline void dsb_wire_init(void *hdr64, uint8_t type, const uint8_t dst[6],
                                        const uint8_t src[6])
{
    uint8_t *b = (uint8_t *)hdr64;
    memset(b, 0, DSB_WIRE_HDR_BYTES);
    if (dst) memcpy(b, dst, 6);
    if (src) memcpy(b + 6, src, 6);
    b[12] = (uint8_t)(DSB_WIRE_ETHERTYPE >> 8);
    b[13] = (uint8_t)(DSB_WIRE_ETHERTYPE & 0xFFu);
    b[14] = type;
    b[15] = (uint8_t)DSB_WIRE_VERSION;
}

/* Reply building, shared by the CPU server and the GPU receive agent. */

/* Maps a rejection reason to the status of the reply it gets. */
DSB_HD static inline dsb_wire_status dsb_wire_reason_status(dsb_wire_reason r)
{
    switch (r) {
    case DSB_WR_NONE: return DSB_ST_OK;
    case DSB_WR_UNKNOWN_MODEL: return DSB_ST_UNKNOWN_MODEL;
    case DSB_WR_MODEL_INCOMPLETE: return DSB_ST_MODEL_INCOMPLETE;
    case DSB_WR_WRONG_N: return DSB_ST_WRONG_N;
    case DSB_WR_WRONG_GENERATION: return DSB_ST_WRONG_GENERATION;
    case DSB_WR_TOO_LARGE: return DSB_ST_TOO_LARGE;
    case DSB_WR_STALE_GENERATION: return DSB_ST_STALE_GENERATION;
    case DSB_WR_BAD_MODEL_IMAGE: return DSB_ST_BAD_MODEL;
    default: return DSB_ST_BAD_REQUEST;
    }
}

/* 1 when a frame rejected for reason r still carries a trustworthy common
 * header (type, model id, request id) and therefore gets an error reply. */
DSB_HD static inline int dsb_wire_reason_answerable(dsb_wire_reason r)
{
    return r >= DSB_WR_LENGTH_MISMATCH && r < DSB_WR_COUNT;
}

DSB_HD static inline void dsb_wire_reply_common(uint8_t *out, uint8_t type,
                                                const dsb_wire_hdr *req, uint16_t status,
                                                uint8_t reason, uint32_t generation,
                                                uint16_t payload_len)
{
    /* the reply goes back to the request's source */
    dsb_wire_init(out, type, req->src, req->dst);
    dsb_wire_hdr h;
    memcpy(&h, out, sizeof h);
    h.status = status;
    h.model_id = req->model_id;
    h.request_id = req->request_id;
    h.n = req->n;
    h.generation = generation;
    h.payload_len = payload_len;
    h.format = req->type == DSB_MSG_LOAD ? req->format : 0;
    h.flags = reason;
    memcpy(out, &h, sizeof h);
}

/* RESULT and LOAD_ACK for request header req (MACs swapped); return the
 * frame length, or 0 when cap is too small. */
DSB_HD static inline size_t dsb_wire_build_result(uint8_t *out, size_t cap,
                                                  const dsb_wire_hdr *req, uint16_t status,
                                                  uint8_t reason, uint32_t generation,
                                                  uint32_t best_replica, int64_t energy2,
                                                  uint32_t worker_id, uint32_t t_queue_ns,
                                                  uint32_t t_solve_ns, uint32_t t_tx_ns,
                                                  const uint32_t *spins)
{
    size_t plen = status == DSB_ST_OK ? 4u * (size_t)dsb_words(req->n) : 0u;
    if (plen > DSB_WIRE_MAX_PAYLOAD || cap < DSB_WIRE_HDR_BYTES + plen) return 0;
    dsb_wire_reply_common(out, DSB_MSG_RESULT, req, status, reason, generation, (uint16_t)plen);
    dsb_wire_result r;
    memcpy(&r, out, sizeof r);
    r.best_replica = best_replica;
    r.energy2 = energy2;
    r.worker_id = worker_id;
    r.t_queue_ns = t_queue_ns;
    r.t_solve_ns = t_solve_ns;
    r.t_tx_ns = t_tx_ns;
    memcpy(out, &r, sizeof r);
    if (plen && spins) memcpy(out + DSB_WIRE_HDR_BYTES, spins, plen);
    else if (plen) memset(out + DSB_WIRE_HDR_BYTES, 0, plen);
    return DSB_WIRE_HDR_BYTES + plen;
}

DSB_HD static inline size_t dsb_wire_build_load_ack(uint8_t *out, size_t cap,
                                                    const dsb_wire_hdr *req, uint16_t status,
                                                    uint8_t reason, uint32_t generation,
                                                    uint32_t frags_received,
                                                    uint32_t current_generation)
{
    if (cap < DSB_WIRE_HDR_BYTES) return 0;
    dsb_wire_reply_common(out, DSB_MSG_LOAD_ACK, req, status, reason, generation, 0);
    dsb_wire_load_ack a;
    memcpy(&a, out, sizeof a);
    if (req->type == DSB_MSG_LOAD) {
        dsb_wire_load l;
        memcpy(&l, req, sizeof l);
        a.total_bytes = l.total_bytes;
        a.frag_index = l.frag_index;
        a.frag_count = l.frag_count;
        a.xi_default = l.xi_default;
    }
    a.frags_received = frags_received;
    a.current_generation = current_generation;
    memcpy(out, &a, sizeof a);
    return DSB_WIRE_HDR_BYTES;
}

/* The common part of a streamed frame (STREAM or PASS_END): length, Ethernet
 * type, version, type, zero status/flags/model id/generation, n of the run. */
DSB_HD static inline dsb_wire_reason dsb_wire_stream_common(const uint8_t *frame, size_t len,
                                                            uint8_t type, uint32_t frame_len,
                                                            uint32_t n, const dsb_wire_hdr *h)
{
    if (len < DSB_WIRE_HDR_BYTES) return DSB_WR_TRUNCATED;
    if (len > frame_len) return DSB_WR_OVERSIZE;
    if (frame[12] != (uint8_t)(DSB_WIRE_ETHERTYPE >> 8) ||
        frame[13] != (uint8_t)(DSB_WIRE_ETHERTYPE & 0xFFu))
        return DSB_WR_BAD_ETHERTYPE;
    if (h->version != DSB_WIRE_VERSION) return DSB_WR_BAD_VERSION;
    if (h->type != type) return DSB_WR_BAD_TYPE;
    if (len != frame_len || (size_t)DSB_WIRE_HDR_BYTES + h->payload_len != len)
        return DSB_WR_LENGTH_MISMATCH;
    if (h->status != 0) return DSB_WR_BAD_STATUS;
    if (h->flags != 0) return DSB_WR_BAD_FLAGS;
    if (h->model_id != 0 || h->generation != 0) return DSB_WR_RESERVED_NONZERO;
    if (h->n != n) return DSB_WR_WRONG_N;
    return DSB_WR_NONE;
}

/* Checks a STREAM frame received while consuming `pass` of an n-variable run,
 * payload included (zero padding, +1 diagonal); on success *v holds its
 * header.  Reads nothing beyond frame[0 .. len). */
DSB_HD static inline dsb_wire_reason dsb_wire_stream_check(const uint8_t *frame, size_t len,
                                                           uint32_t n, uint32_t pass,
                                                           dsb_wire_stream *v)
{
    if (len >= DSB_WIRE_HDR_BYTES) memcpy(v, frame, DSB_WIRE_HDR_BYTES);
    dsb_wire_reason r = dsb_wire_stream_common(frame, len, DSB_MSG_STREAM, DSB_STREAM_FRAME, n,
                                               (const dsb_wire_hdr *)v);
    if (r != DSB_WR_NONE) return r;
    if (v->format != 1u /* PM1 */) return DSB_WR_BAD_FORMAT;
    if (v->rsv16 != 0 || v->rsv != 0) return DSB_WR_RESERVED_NONZERO;
    if (v->pass != pass) return DSB_WR_WRONG_PASS;
    if (v->row >= n) return DSB_WR_BAD_ROW;
    if (v->block >= dsb_stream_blocks(n)) return DSB_WR_BAD_BLOCK;
    const uint8_t *payload = frame + DSB_WIRE_HDR_BYTES;
    uint64_t first = (uint64_t)v->block * DSB_STREAM_WORDS; /* global word of payload word 0 */
    if ((uint64_t)(v->block + 1u) * DSB_STREAM_COLS > n) { /* the last block: padding */
        /* words before the one holding column n are all columns < n */
        for (uint32_t w = (n - v->block * DSB_STREAM_COLS) / 32u; w < DSB_STREAM_WORDS; w++) {
            uint32_t word;
            memcpy(&word, payload + 4u * w, 4);
            if (word & ~dsb_stream_valid_mask(n, first + w)) return DSB_WR_BAD_PADDING;
        }
    }
    uint64_t dcol = v->row; /* the diagonal's column */
    if (dcol / DSB_STREAM_COLS == v->block) {
        uint32_t in = (uint32_t)(dcol % DSB_STREAM_COLS);
        if (!(payload[in / 8u] >> (in % 8u) & 1u)) return DSB_WR_BAD_DIAGONAL;
    }
    return DSB_WR_NONE;
}

/* Checks a PASS_END of an n-variable run. */
DSB_HD static inline dsb_wire_reason dsb_wire_pass_end_check(const uint8_t *frame, size_t len,
                                                             uint32_t n, dsb_wire_pass_end *v)
{
    if (len >= DSB_WIRE_HDR_BYTES) memcpy(v, frame, DSB_WIRE_HDR_BYTES);
    dsb_wire_reason r = dsb_wire_stream_common(frame, len, DSB_MSG_PASS_END, DSB_WIRE_HDR_BYTES,
                                               n, (const dsb_wire_hdr *)v);
    if (r != DSB_WR_NONE) return r;
    if (v->format != 0 || v->rsv2 != 0) return DSB_WR_RESERVED_NONZERO;
    if (v->queue_count == 0 || v->queue >= v->queue_count) return DSB_WR_BAD_QUEUE;
    if (v->frames > dsb_stream_frames(n)) return DSB_WR_BAD_FRAME_COUNT;
    return DSB_WR_NONE;
}

/* Checks a STREAM_ACK of an n-variable run. */
DSB_HD static inline dsb_wire_reason dsb_wire_stream_ack_check(const uint8_t *frame, size_t len,
                                                               uint32_t n,
                                                               dsb_wire_stream_ack *v)
{
    if (len >= DSB_WIRE_HDR_BYTES) memcpy(v, frame, DSB_WIRE_HDR_BYTES);
    dsb_wire_reason r = dsb_wire_stream_common(frame, len, DSB_MSG_STREAM_ACK,
                                               DSB_WIRE_HDR_BYTES, n, (const dsb_wire_hdr *)v);
    if (r != DSB_WR_NONE) return r;
    if (v->format != 0 || v->rsv16 != 0 || v->rsv2 != 0) return DSB_WR_RESERVED_NONZERO;
    if (v->action < DSB_STREAM_NEXT || v->action > DSB_STREAM_DONE) return DSB_WR_BAD_ACTION;
    if (v->frames > dsb_stream_frames(n)) return DSB_WR_BAD_FRAME_COUNT;
    return DSB_WR_NONE;
}

/* Builders of the two streamed control messages, the one way every sender
 * (stream_net, the tests, the fuzz seeds) writes them.  Each writes a whole
 * 64-byte frame (no payload) into out[0 .. cap): common part as
 * dsb_wire_init (MACs may be NULL: zero), request id = the run id
 * (dsb_stream_run_id), n, status / flags / model id / generation / format
 * and the reserved bytes zero, then the named fields at the offsets of the
 * structs above.  They return DSB_WIRE_HDR_BYTES, or 0 (nothing written)
 * when cap is too small.  They do not judge the values: the checks above
 * do, so a test can build a frame they must refuse. */
DSB_HD static inline size_t dsb_wire_build_pass_end(uint8_t *out, size_t cap,
                                                    const uint8_t dst[6], const uint8_t src[6],
                                                    uint32_t run_id, uint32_t n, uint32_t pass,
                                                    uint32_t attempt, uint16_t queue,
                                                    uint16_t queue_count, uint64_t frames)
{
    if (cap < DSB_WIRE_HDR_BYTES) return 0;
    dsb_wire_pass_end e;
    dsb_wire_init(&e, DSB_MSG_PASS_END, dst, src);
    e.request_id = run_id;
    e.n = n;
    e.pass = pass;
    e.attempt = attempt;
    e.queue = queue;
    e.queue_count = queue_count;
    e.frames = frames;
    memcpy(out, &e, sizeof e);
    return DSB_WIRE_HDR_BYTES;
}

/* action: a dsb_stream_action; attempt: the receiver's count of earlier
 * attempts of the pass; frames: distinct good frames consumed in it. */
DSB_HD static inline size_t dsb_wire_build_stream_ack(uint8_t *out, size_t cap,
                                                      const uint8_t dst[6], const uint8_t src[6],
                                                      uint32_t run_id, uint32_t n, uint32_t pass,
                                                      uint16_t action, uint32_t attempt,
                                                      uint64_t frames)
{
    if (cap < DSB_WIRE_HDR_BYTES) return 0;
    dsb_wire_stream_ack a;
    dsb_wire_init(&a, DSB_MSG_STREAM_ACK, dst, src);
    a.request_id = run_id;
    a.n = n;
    a.pass = pass;
    a.action = action;
    a.attempt = attempt;
    a.frames = frames;
    memcpy(out, &a, sizeof a);
    return DSB_WIRE_HDR_BYTES;
}

/* Host functions (src/dsb/wire.c); declared for .cu host code too. */
const char *dsb_wire_status_name(unsigned status);
const char *dsb_wire_reason_name(unsigned reason);
const char *dsb_wire_type_name(unsigned type);

/* Builders: write a complete frame (header + payload) into out[0 .. cap) and
 * return its length, or 0 when it does not fit.  MACs may be NULL (zero). */
size_t dsb_wire_build_load(uint8_t *out, size_t cap, const uint8_t dst[6], const uint8_t src[6],
                           uint16_t model_id, uint32_t request_id, uint32_t format, uint32_t n,
                           uint32_t generation, float xi_default, const void *packed,
                           uint32_t total_bytes, uint32_t frag_index);
size_t dsb_wire_build_solve(uint8_t *out, size_t cap, const uint8_t dst[6], const uint8_t src[6],
                            uint16_t model_id, uint32_t request_id, uint32_t n,
                            uint32_t generation, uint32_t steps, uint32_t replicas, uint64_t seed,
                            float xi, float dt, const int16_t *h /* NULL: no field */);

#ifdef __cplusplus
}
#endif

#endif /* DSB_WIRE_H */
