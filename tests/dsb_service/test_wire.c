/* Wire format: byte positions fixed by Table I, round trips of every message
 * type through the builders and the decoder, and one malformed frame per
 * rejection reason the decoder can see on its own. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "dsb/wire.h"

static uint32_t ld32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t ld16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint64_t ld64(const uint8_t *p) { return ld32(p) | (uint64_t)ld32(p + 4) << 32; }

static const uint8_t MAC_A[6] = {0x02, 0, 0, 0, 0, 0x0a}, MAC_B[6] = {0x02, 0, 0, 0, 0, 0x0b};

/* A valid SOLVE frame for n with a field of i-dependent values. */
static size_t make_solve(uint8_t *buf, uint32_t n, int with_field)
{
    int16_t h[DSB_WIRE_MAX_FIELD_N];
    for (uint32_t i = 0; i < n && i < DSB_WIRE_MAX_FIELD_N; i++) h[i] = (int16_t)(i * 37 - 500);
    return dsb_wire_build_solve(buf, DSB_WIRE_MAX_FRAME, MAC_A, MAC_B, 5, 0xA1B2C3D4u, n, 0, 100,
                                8, 0x0123456789ABCDEFull, 0.0f, 1.0f, with_field ? h : NULL);
}

static uint8_t packed[DSB_STORE_SLOT_BYTES];

static size_t make_load(uint8_t *buf, uint32_t n, uint32_t frag)
{
    uint32_t total = dsb_wire_packed_bytes(3, n);
    for (uint32_t i = 0; i < total; i++) packed[i] = (uint8_t)(i * 7 + 1);
    return dsb_wire_build_load(buf, DSB_WIRE_MAX_FRAME, MAC_A, MAC_B, 7, 99, 3, n, 42, 0.25f,
                               packed, total, frag);
}

static dsb_wire_reason dec(const uint8_t *buf, size_t len, int to_server)
{
    /* decode from an exact-size heap copy so a read past the end is caught by ASan */
    uint8_t *copy = malloc(len ? len : 1);
    memcpy(copy, buf, len);
    dsb_wire_msg m;
    dsb_wire_reason r = dsb_wire_decode(copy, len, to_server, &m);
    free(copy);
    return r;
}

static void test_layout(void)
{
    uint8_t b[DSB_WIRE_MAX_FRAME];
    size_t len = make_solve(b, 128, 1);
    CHECK(len == 320, "SOLVE for n=128 is %zu bytes, Sec. III says 320", len);
    CHECK(b[12] == 0x88 && b[13] == 0xB5, "EtherType bytes %02x %02x", b[12], b[13]);
    CHECK(b[14] == DSB_MSG_SOLVE && b[15] == 1, "type/version");
    CHECK(!memcmp(b, MAC_A, 6) && !memcmp(b + 6, MAC_B, 6), "MACs");
    CHECK(ld16(b + 18) == 5, "model id at 18");
    CHECK(ld32(b + 20) == 0xA1B2C3D4u, "request id at 20");
    CHECK(ld32(b + 24) == 128, "n at 24");
    CHECK(ld16(b + 32) == 256, "payload length at 32");
    CHECK(ld32(b + 36) == 100 && ld32(b + 40) == 8, "K at 36, B at 40");
    CHECK(ld64(b + 48) == 0x0123456789ABCDEFull, "seed at 48");
    CHECK(ld32(b + 60) == 0x3F800000u, "dt = 1.0f at 60");
    CHECK((int16_t)ld16(b + 64 + 2 * 3) == 3 * 37 - 500, "field h_3 at 70");

    len = make_load(b, 700, 0);
    CHECK(len == 1472, "a full LOAD fragment is %zu bytes, Sec. III says 1472", len);
    CHECK(ld32(b + 36) == 0 && ld32(b + 40) == 700u * 704u, "offset, total");
    CHECK(ld16(b + 44) == 0 && ld16(b + 46) == (700u * 704u + 1407u) / 1408u, "frag index/count");
    CHECK(ld32(b + 28) == 42, "generation at 28");
    CHECK(b[34] == 3, "format at 34");
    CHECK(ld32(b + 48) == 0x3E800000u, "xi_default 0.25f at 48");
}

static void test_roundtrip(void)
{
    uint8_t b[DSB_WIRE_MAX_FRAME];
    dsb_wire_msg m;
    /* LOAD: first, middle and last fragment */
    uint32_t n = 300, total = dsb_wire_packed_bytes(3, n), count = (total + 1407) / 1408;
    uint32_t frags[3] = {0, count / 2, count - 1};
    for (int k = 0; k < 3; k++) {
        size_t len = make_load(b, n, frags[k]);
        CHECK(dec(b, len, 1) == DSB_WR_NONE, "LOAD fragment %u rejected", frags[k]);
        dsb_wire_decode(b, len, 1, &m);
        CHECK(m.u.load.frag_index == frags[k] && m.u.load.offset == frags[k] * 1408u,
              "LOAD index/offset");
        CHECK(m.payload_len == (frags[k] == count - 1 ? total - frags[k] * 1408u : 1408u),
              "LOAD payload length %u", m.payload_len);
        CHECK(!memcmp(m.payload, packed + frags[k] * 1408u, m.payload_len), "LOAD payload bytes");
        CHECK(m.u.load.xi_default == 0.25f && m.u.load.generation == 42 && m.u.load.n == n,
              "LOAD fields");
        CHECK(dec(b, len, 0) == DSB_WR_BAD_TYPE, "a LOAD is not a client-bound frame");
    }
    /* LOAD_ACK built from the LOAD */
    size_t len = make_load(b, n, 1);
    dsb_wire_decode(b, len, 1, &m);
    uint8_t r[DSB_WIRE_MAX_FRAME];
    size_t rl = dsb_wire_build_load_ack(r, sizeof r, &m.u.hdr, DSB_ST_OK, 0, 42, count, 42);
    CHECK(rl == 64, "LOAD_ACK is a bare header");
    dsb_wire_msg a;
    CHECK(dec(r, rl, 0) == DSB_WR_NONE, "LOAD_ACK decodes");
    dsb_wire_decode(r, rl, 0, &a);
    CHECK(a.u.ack.type == DSB_MSG_LOAD_ACK && a.u.ack.model_id == 7 && a.u.ack.generation == 42 &&
              a.u.ack.frags_received == count && a.u.ack.current_generation == 42 &&
              a.u.ack.frag_count == count && a.u.ack.total_bytes == total && a.u.ack.format == 3,
          "LOAD_ACK fields");
    CHECK(!memcmp(r, MAC_B, 6) && !memcmp(r + 6, MAC_A, 6), "reply MACs swapped");
    CHECK(dec(r, rl, 1) == DSB_WR_BAD_TYPE, "LOAD_ACK is not server-bound");

    /* SOLVE with and without field */
    for (int wf = 0; wf < 2; wf++) {
        len = make_solve(b, 128, wf);
        CHECK(dec(b, len, 1) == DSB_WR_NONE, "SOLVE (field %d) rejected", wf);
        dsb_wire_decode(b, len, 1, &m);
        CHECK(m.u.solve.steps == 100 && m.u.solve.replicas == 8 &&
                  m.u.solve.seed == 0x0123456789ABCDEFull && m.u.solve.dt == 1.0f &&
                  m.u.solve.xi == 0.0f && m.u.solve.request_id == 0xA1B2C3D4u,
              "SOLVE fields");
        CHECK(m.payload_len == (wf ? 256u : 0u), "SOLVE payload %u", m.payload_len);
        /* RESULT OK with spins */
        uint32_t spins[4] = {0xDEADBEEF, 1, 0x80000000u, 7};
        rl = dsb_wire_build_result(r, sizeof r, &m.u.hdr, DSB_ST_OK, 0, 9, 3, -123456789012ll, 17,
                                   1000, 2000, 30, spins);
        CHECK(rl == 64 + 16, "RESULT n=128 carries 4 words");
        dsb_wire_msg q;
        CHECK(dec(r, rl, 0) == DSB_WR_NONE, "RESULT decodes");
        dsb_wire_decode(r, rl, 0, &q);
        CHECK(q.u.result.energy2 == -123456789012ll && q.u.result.best_replica == 3 &&
                  q.u.result.worker_id == 17 && q.u.result.t_queue_ns == 1000 &&
                  q.u.result.t_solve_ns == 2000 && q.u.result.t_tx_ns == 30 &&
                  q.u.result.generation == 9 && q.u.result.request_id == 0xA1B2C3D4u &&
                  q.u.result.model_id == 5 && q.u.result.n == 128,
              "RESULT fields");
        CHECK(!memcmp(q.payload, spins, 16), "RESULT spins");
        CHECK(ld64(r + 40) == (uint64_t)-123456789012ll, "2E at offset 40");
    }
    /* RESULT with an error status: no payload */
    len = make_solve(b, 128, 0);
    dsb_wire_decode(b, len, 1, &m);
    rl = dsb_wire_build_result(r, sizeof r, &m.u.hdr, DSB_ST_OVERLOADED, 0, 0, 0, 0, 0, 0, 0, 0,
                               NULL);
    CHECK(rl == 64 && dec(r, rl, 0) == DSB_WR_NONE, "RESULT overloaded");
    CHECK(ld16(r + 16) == DSB_ST_OVERLOADED, "status at 16");
}

typedef struct {
    const char *what;
    dsb_wire_reason want;
    int to_server;
} mal_case;

static void test_malformed(void)
{
    uint8_t base_s[DSB_WIRE_MAX_FRAME], base_l[DSB_WIRE_MAX_FRAME], b[DSB_WIRE_MAX_FRAME + 8];
    size_t ls = make_solve(base_s, 128, 1);
    size_t ll = make_load(base_l, 300, 2);
    int kinds = 0;
#define MAL(base, blen, want, mutate)                                                           \
    do {                                                                                        \
        size_t len = blen;                                                                      \
        memcpy(b, base, blen);                                                                  \
        mutate;                                                                                 \
        dsb_wire_reason got = dec(b, len, 1);                                                   \
        CHECK(got == want, "%s: got %s, want %s", #mutate, dsb_wire_reason_name(got),           \
              dsb_wire_reason_name(want));                                                      \
        /* the GPU receive warp's form: the field scan left to the caller, nothing else */      \
        dsb_wire_msg mx_;                                                                       \
        dsb_wire_reason gx_ = dsb_wire_decode_ex(b, len, 1, 1, &mx_);                           \
        CHECK(gx_ == (want == DSB_WR_BAD_FIELD_VALUE ? DSB_WR_NONE : want),                     \
              "%s: decode_ex without the field scan: got %s", #mutate,                          \
              dsb_wire_reason_name(gx_));                                                       \
        kinds++;                                                                                \
    } while (0)
    uint32_t u;
    float f;
    MAL(base_s, ls, DSB_WR_TRUNCATED, len = 63);
    MAL(base_s, ls, DSB_WR_TRUNCATED, len = 0);
    MAL(base_s, ls, DSB_WR_OVERSIZE, len = DSB_WIRE_MAX_FRAME + 1);
    MAL(base_s, ls, DSB_WR_BAD_ETHERTYPE, b[13] = 0x00);
    MAL(base_s, ls, DSB_WR_BAD_VERSION, b[15] = 2);
    MAL(base_s, ls, DSB_WR_BAD_TYPE, b[14] = 9);
    MAL(base_s, ls, DSB_WR_BAD_TYPE, b[14] = DSB_MSG_RESULT);
    MAL(base_s, ls, DSB_WR_LENGTH_MISMATCH, len = ls - 2);
    MAL(base_s, ls, DSB_WR_LENGTH_MISMATCH, (len = ls + 2, b[ls] = b[ls + 1] = 0));
    MAL(base_s, ls, DSB_WR_BAD_STATUS, b[16] = 1);
    MAL(base_s, ls, DSB_WR_BAD_FLAGS, b[35] = 1);
    MAL(base_s, ls, DSB_WR_BAD_MODEL_ID, b[18] = 64);
    MAL(base_s, ls, DSB_WR_BAD_N, memset(b + 24, 0, 4));
    MAL(base_s, ls, DSB_WR_BAD_N, (u = 4096, memcpy(b + 24, &u, 4)));
    MAL(base_s, ls, DSB_WR_RESERVED_NONZERO, b[44] = 1);
    MAL(base_s, ls, DSB_WR_FORMAT_IN_SOLVE, b[34] = 3);
    MAL(base_s, ls, DSB_WR_BAD_K, memset(b + 36, 0, 4));
    MAL(base_s, ls, DSB_WR_BAD_B, memset(b + 40, 0, 4));
    MAL(base_s, ls, DSB_WR_BAD_XI, (f = -1.0f, memcpy(b + 56, &f, 4)));
    MAL(base_s, ls, DSB_WR_BAD_XI, (u = 0x7FC00000u, memcpy(b + 56, &u, 4)));
    MAL(base_s, ls, DSB_WR_BAD_DT, memset(b + 60, 0, 4));
    MAL(base_s, ls, DSB_WR_BAD_DT, (u = 0x7F800000u, memcpy(b + 60, &u, 4)));
    MAL(base_s, ls, DSB_WR_BAD_FIELD_LEN, (u = 64, memcpy(b + 24, &u, 4)));
    MAL(base_s, ls, DSB_WR_BAD_FIELD_VALUE, (b[64 + 10] = 0x00, b[64 + 11] = 0x80));
    MAL(base_l, ll, DSB_WR_BAD_FORMAT, b[34] = 4);
    MAL(base_l, ll, DSB_WR_BAD_FORMAT, b[34] = 0);
    MAL(base_l, ll, DSB_WR_ZERO_GENERATION, memset(b + 28, 0, 4));
    MAL(base_l, ll, DSB_WR_BAD_TOTAL, b[40] ^= 1);
    MAL(base_l, ll, DSB_WR_BAD_TOTAL, (u = 800, memcpy(b + 24, &u, 4))); /* 800x800 > 512 KiB */
    MAL(base_l, ll, DSB_WR_BAD_FRAG_COUNT, b[46] += 1);
    MAL(base_l, ll, DSB_WR_BAD_FRAG_INDEX, (b[44] = 200, b[45] = 0));
    MAL(base_l, ll, DSB_WR_BAD_OFFSET, b[36] += 4);
    MAL(base_l, ll, DSB_WR_BAD_FRAG_LEN, (len = ll - 4, b[32] -= 4));
    MAL(base_l, ll, DSB_WR_BAD_XI, memset(b + 48, 0, 4));
    MAL(base_l, ll, DSB_WR_RESERVED_NONZERO, b[60] = 1);
    CHECK(kinds >= 30, "%d malformed cases", kinds);
    /* every shorter prefix of a valid frame is rejected without reading past it */
    int ok = 1;
    for (size_t l = 0; l < ls; l++)
        if (dec(base_s, l, 1) == DSB_WR_NONE) ok = 0;
    CHECK(ok, "a prefix of a SOLVE frame decoded");
    /* names and status mapping are total */
    for (unsigned r = 0; r < DSB_WR_COUNT; r++)
        CHECK(strcmp(dsb_wire_reason_name(r), "invalid_reason") != 0, "reason %u unnamed", r);
    CHECK(dsb_wire_reason_status(DSB_WR_UNKNOWN_MODEL) == DSB_ST_UNKNOWN_MODEL, "status map");
    CHECK(dsb_wire_reason_status(DSB_WR_BAD_K) == DSB_ST_BAD_REQUEST, "status map");
    CHECK(!dsb_wire_reason_answerable(DSB_WR_BAD_VERSION) &&
              dsb_wire_reason_answerable(DSB_WR_BAD_K),
          "answerable");
}

int main(void)
{
    test_layout();
    test_roundtrip();
    test_malformed();
    return check_done();
}
