/* The streaming solver's CPU reference (seed 000, Sec. VIII): geometry against
 * the paper's figures, the instances' coupling bits, the STREAM / PASS_END
 * frame checks, and the solver against independent computations: the
 * resident CPU solver on the same matrix (bit-exact trajectories), direct
 * coupling sums, the Mattis closed-form energy and its known ground state. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "dsb/instances.h"
#include "dsb/model.h"
#include "dsb/solve.h"
#include "dsb/stream.h"
#include "dsb/wire.h"

/* ---- geometry: the paper's numbers (Sec. VIII-A) ---------------------------- */
static void test_geometry(void)
{
    CHECK(DSB_STREAM_COLS == 32256u && DSB_STREAM_FRAME == 4096u, "C_b 32,256, 4096-byte frames");
    CHECK(dsb_stream_pass_bytes(10000) == 40320000ull, "n = 1e4: 40.32 MB a pass");
    CHECK(dsb_stream_pass_bytes(10000000) == 12539520000000ull, "n = 1e7: 12.53952 TB");
    CHECK(dsb_stream_frames(10000000) == 3110000000ull, "n = 1e7: 3.11e9 frames");
    CHECK(dsb_stream_blocks(32256) == 1 && dsb_stream_blocks(32257) == 2, "block boundary");
    CHECK(dsb_stream_valid_mask(40, 0) == 0xFFFFFFFFu && dsb_stream_valid_mask(40, 1) == 0xFFu &&
              dsb_stream_valid_mask(40, 2) == 0u,
          "valid mask");
    uint32_t row, blk;
    dsb_stream_frame_coords(3ull * 1000 + 7, 1000, &row, &blk);
    CHECK(row == 7 && blk == 3, "column-block-major order: row %u block %u", row, blk);
}

/* ---- coupling bits ------------------------------------------------------------ */
static void test_bits(void)
{
    uint64_t key = dsb_stream_key(42, DSB_STREAM_RANDOM);
    uint32_t n = 300, sym = 1, diag = 1, ones = 0, words_ok = 1;
    for (uint32_t i = 0; i < n; i++) {
        diag &= dsb_stream_random_bit(key, i, i);
        for (uint32_t j = 0; j < n; j++) {
            sym &= dsb_stream_random_bit(key, i, j) == dsb_stream_random_bit(key, j, i);
            if (i != j) ones += dsb_stream_random_bit(key, i, j);
        }
        for (uint64_t gw = 0; gw < dsb_words(n) + 2; gw++) {
            uint32_t w = dsb_stream_random_word(key, i, n, gw), ref = 0;
            for (uint32_t b = 0; b < 32; b++)
                if (gw * 32 + b < n) ref |= dsb_stream_random_bit(key, i, (uint32_t)(gw * 32 + b)) << b;
            words_ok &= w == ref;
        }
    }
    CHECK(sym, "random couplings symmetric");
    CHECK(diag, "transmitted diagonal +1");
    double frac = (double)ones / ((double)n * (n - 1));
    CHECK(frac > 0.48 && frac < 0.52, "random couplings half +1: %.4f", frac);
    CHECK(words_ok, "random words = their bits, zero beyond n");
    CHECK(dsb_stream_key(42, DSB_STREAM_RANDOM) != dsb_stream_key(43, DSB_STREAM_RANDOM) &&
              dsb_stream_key(42, DSB_STREAM_RANDOM) != dsb_stream_key(42, DSB_STREAM_MATTIS),
          "keys differ by seed and instance");

    dsb_stream_params p;
    dsb_stream_params_default(&p);
    p.n = 77;
    uint32_t *eta = dsb_stream_eta_bitmap(&p);
    uint64_t ekey = dsb_stream_key(p.seed, DSB_STREAM_MATTIS);
    int mattis_ok = 1, pad_ok = 1;
    for (uint32_t i = 0; i < p.n; i++) {
        uint32_t ei = dsb_stream_eta_bit(ekey, i);
        for (uint64_t gw = 0; gw < 3; gw++) {
            uint32_t w = dsb_stream_mattis_word(ei, eta[gw], p.n, gw);
            for (uint32_t b = 0; b < 32; b++) {
                uint64_t j = gw * 32 + b;
                uint32_t bit = w >> b & 1u;
                if (j >= p.n) pad_ok &= bit == 0;
                else mattis_ok &= bit == (ei == dsb_stream_eta_bit(ekey, (uint32_t)j));
            }
        }
    }
    for (uint64_t gw = 3; gw < dsb_stream_grid_words(p.n); gw++) pad_ok &= eta[gw] == 0;
    CHECK(mattis_ok, "Mattis bits: J_ij = eta_i eta_j, +1 diagonal");
    CHECK(pad_ok, "Mattis padding zero");
    free(eta);
}

/* ---- the frame checks ---------------------------------------------------------- */
static uint8_t good[DSB_STREAM_FRAME], bad[DSB_STREAM_FRAME + 8];

static dsb_wire_reason check_frame(const uint8_t *f, size_t len, uint32_t n, uint32_t pass)
{
    dsb_wire_stream v;
    return dsb_wire_stream_check(f, len, n, pass, &v);
}

static void test_frames(void)
{
    dsb_stream_params p;
    dsb_stream_params_default(&p);
    p.n = 40000; /* two column blocks; the second holds 7,744 columns */
    p.instance = DSB_STREAM_RANDOM;
    dsb_stream_build_frame(good, &p, NULL, 3, 33000, 1, 2, 99);
    dsb_wire_stream v;
    CHECK(dsb_wire_stream_check(good, sizeof good, p.n, 3, &v) == DSB_WR_NONE, "good frame");
    CHECK(v.row == 33000 && v.block == 1 && v.pass == 3 && v.queue == 2 && v.seq == 99,
          "header fields");
    uint32_t w0;
    memcpy(&w0, good + 64, 4);
    uint64_t key = dsb_stream_key(p.seed, DSB_STREAM_RANDOM);
    CHECK(w0 == dsb_stream_random_word(key, 33000, p.n, DSB_STREAM_WORDS), "payload word 0");

#define BAD(reason, len, mutate)                                                               \
    do {                                                                                       \
        memcpy(bad, good, sizeof good);                                                        \
        mutate;                                                                                \
        dsb_wire_reason r_ = check_frame(bad, (len), p.n, 3);                                  \
        CHECK(r_ == (reason), "%s: got %s", #reason, dsb_wire_reason_name(r_));              \
    } while (0)
    BAD(DSB_WR_TRUNCATED, 63, (void)0);
    BAD(DSB_WR_OVERSIZE, sizeof good + 1, (void)0);
    BAD(DSB_WR_LENGTH_MISMATCH, sizeof good - 1, (void)0);
    BAD(DSB_WR_BAD_ETHERTYPE, sizeof good, bad[12] = 0x08);
    BAD(DSB_WR_BAD_VERSION, sizeof good, bad[15] = 9);
    BAD(DSB_WR_BAD_TYPE, sizeof good, bad[14] = DSB_MSG_SOLVE);
    BAD(DSB_WR_LENGTH_MISMATCH, sizeof good, bad[32] ^= 1);
    BAD(DSB_WR_BAD_STATUS, sizeof good, bad[16] = 1);
    BAD(DSB_WR_BAD_FLAGS, sizeof good, bad[35] = 1);
    BAD(DSB_WR_RESERVED_NONZERO, sizeof good, bad[18] = 1);     /* model id */
    BAD(DSB_WR_RESERVED_NONZERO, sizeof good, bad[28] = 1);     /* generation */
    BAD(DSB_WR_RESERVED_NONZERO, sizeof good, bad[50] = 1);
    BAD(DSB_WR_RESERVED_NONZERO, sizeof good, bad[53] = 1);
    BAD(DSB_WR_WRONG_N, sizeof good, bad[24] ^= 1);
    BAD(DSB_WR_BAD_FORMAT, sizeof good, bad[34] = 3);
    BAD(DSB_WR_WRONG_PASS, sizeof good, bad[44] = 4);
    BAD(DSB_WR_BAD_ROW, sizeof good, (bad[36] = 0x40, bad[37] = 0x9C, bad[38] = 0)); /* 40000 */
    BAD(DSB_WR_BAD_BLOCK, sizeof good, bad[40] = 2);
    /* column 40000 is the second block's bit 7744: padding */
    BAD(DSB_WR_BAD_PADDING, sizeof good, bad[64 + 7744 / 8] |= 1u << (7744 % 8));
    BAD(DSB_WR_BAD_PADDING, sizeof good, bad[sizeof good - 1] = 0x80);
    /* row 33000's diagonal: column 33000 = bit 744 of block 1 */
    BAD(DSB_WR_BAD_DIAGONAL, sizeof good, bad[64 + 744 / 8] &= (uint8_t)~(1u << (744 % 8)));
    int prefix_ok = 1;
    for (size_t l = 0; l < sizeof good; l++)
        if (check_frame(good, l, p.n, 3) == DSB_WR_NONE) prefix_ok = 0;
    CHECK(prefix_ok, "every prefix of a good frame rejected");
    /* the request server's decoder refuses streamed frames */
    dsb_wire_msg m;
    CHECK(dsb_wire_decode(good, sizeof good, 1, &m) != DSB_WR_NONE, "STREAM not a request");
    CHECK(!strcmp(dsb_wire_type_name(DSB_MSG_STREAM), "STREAM") &&
              !strcmp(dsb_wire_type_name(DSB_MSG_PASS_END), "PASS_END"),
          "type names");

    /* PASS_END (the builder's bytes are checked against the layout in
     * test_control_bytes) */
    uint8_t pe[64];
    CHECK(dsb_wire_build_pass_end(pe, sizeof pe, NULL, NULL, 0, p.n, 3, 0, 1, 4, 20000) == 64,
          "PASS_END built");
    dsb_wire_pass_end ev;
    CHECK(dsb_wire_pass_end_check(pe, 64, p.n, &ev) == DSB_WR_NONE && ev.frames == 20000,
          "good PASS_END");
    uint8_t pb[65];
#define BAD_END(reason, len, mutate)                                                           \
    do {                                                                                       \
        memcpy(pb, pe, 64);                                                                    \
        mutate;                                                                                \
        dsb_wire_reason r_ = dsb_wire_pass_end_check(pb, (len), p.n, &ev);                     \
        CHECK(r_ == (reason), "PASS_END %s: got %s", #reason, dsb_wire_reason_name(r_));     \
    } while (0)
    BAD_END(DSB_WR_OVERSIZE, 65, (void)0);
    BAD_END(DSB_WR_TRUNCATED, 40, (void)0);
    BAD_END(DSB_WR_BAD_TYPE, 64, pb[14] = DSB_MSG_STREAM);
    BAD_END(DSB_WR_LENGTH_MISMATCH, 64, pb[32] = 8);
    BAD_END(DSB_WR_BAD_QUEUE, 64, pb[44] = 4);
    BAD_END(DSB_WR_BAD_QUEUE, 64, (pb[46] = 0, pb[44] = 0));
    BAD_END(DSB_WR_BAD_FRAME_COUNT, 64, pb[55] = 1);
    BAD_END(DSB_WR_RESERVED_NONZERO, 64, pb[60] = 1);
    BAD_END(DSB_WR_WRONG_N, 64, pb[25] ^= 1);
    BAD_END(DSB_WR_BAD_ETHERTYPE, 64, pb[13] = 0);
    BAD_END(DSB_WR_BAD_VERSION, 64, pb[15] = 2);
    BAD_END(DSB_WR_BAD_STATUS, 64, pb[16] = 1);
    BAD_END(DSB_WR_BAD_FLAGS, 64, pb[35] = 1);
    BAD_END(DSB_WR_RESERVED_NONZERO, 64, pb[18] = 1); /* model id */
    BAD_END(DSB_WR_RESERVED_NONZERO, 64, pb[31] = 1); /* generation */
    BAD_END(DSB_WR_RESERVED_NONZERO, 64, pb[34] = 1); /* format */

    /* STREAM_ACK */
    uint8_t ka[64];
    CHECK(dsb_wire_build_stream_ack(ka, sizeof ka, NULL, NULL, 0, p.n, 2, DSB_STREAM_RESEND, 0,
                                    79999) == 64,
          "STREAM_ACK built");
    dsb_wire_stream_ack kv;
    CHECK(dsb_wire_stream_ack_check(ka, 64, p.n, &kv) == DSB_WR_NONE &&
              kv.action == DSB_STREAM_RESEND && kv.frames == 79999,
          "good STREAM_ACK");
#define BAD_ACK(reason, len, mutate)                                                           \
    do {                                                                                       \
        memcpy(pb, ka, 64);                                                                    \
        mutate;                                                                                \
        dsb_wire_reason r_ = dsb_wire_stream_ack_check(pb, (len), p.n, &kv);                   \
        CHECK(r_ == (reason), "STREAM_ACK %s: got %s", #reason, dsb_wire_reason_name(r_));   \
    } while (0)
    BAD_ACK(DSB_WR_BAD_ACTION, 64, pb[40] = 0);
    BAD_ACK(DSB_WR_BAD_ACTION, 64, pb[40] = 4);
    BAD_ACK(DSB_WR_RESERVED_NONZERO, 64, pb[42] = 1);
    BAD_ACK(DSB_WR_BAD_FRAME_COUNT, 64, pb[53] = 1);
    BAD_ACK(DSB_WR_BAD_TYPE, 64, pb[14] = DSB_MSG_PASS_END);
    BAD_ACK(DSB_WR_OVERSIZE, 65, (void)0);
    BAD_ACK(DSB_WR_TRUNCATED, 63, (void)0);
    BAD_ACK(DSB_WR_LENGTH_MISMATCH, 64, pb[32] = 1);
    BAD_ACK(DSB_WR_WRONG_N, 64, pb[26] ^= 1);
    BAD_ACK(DSB_WR_BAD_STATUS, 64, pb[17] = 1);
    BAD_ACK(DSB_WR_BAD_FLAGS, 64, pb[35] = 1);
    BAD_ACK(DSB_WR_RESERVED_NONZERO, 64, pb[19] = 1); /* model id */
    BAD_ACK(DSB_WR_RESERVED_NONZERO, 64, pb[28] = 1); /* generation */
    BAD_ACK(DSB_WR_RESERVED_NONZERO, 64, pb[34] = 1); /* format */
    BAD_ACK(DSB_WR_RESERVED_NONZERO, 64, pb[63] = 1);
    CHECK(!strcmp(dsb_wire_type_name(DSB_MSG_STREAM_ACK), "STREAM_ACK"), "STREAM_ACK name");

    /* the run id: a frame of another seed or instance is refused by the consumer */
    CHECK(dsb_stream_run_id(42, DSB_STREAM_RANDOM) != dsb_stream_run_id(43, DSB_STREAM_RANDOM) &&
              dsb_stream_run_id(42, DSB_STREAM_RANDOM) != dsb_stream_run_id(42, DSB_STREAM_MATTIS),
          "run ids differ");
    dsb_stream_state *st;
    cm_err err = {{0}};
    CHECK(dsb_stream_state_create(&p, &st, &err) == 0, "state: %s", err.msg);
    CHECK(dsb_stream_consume(st, 3, good, sizeof good) == DSB_WR_NONE, "own run consumed");
    dsb_stream_params other = p;
    other.seed = 43;
    dsb_stream_build_frame(bad, &other, NULL, 3, 33000, 1, 0, 0);
    CHECK(dsb_stream_consume(st, 3, bad, DSB_STREAM_FRAME) == DSB_WR_WRONG_RUN,
          "another seed's frame refused");
    dsb_stream_state_free(st);
}

/* ---- the control builders against the documented layout ----------------------- */

/* Writes v little-endian into b[off .. off + size). */
static void put_le(uint8_t *b, unsigned off, uint64_t v, unsigned size)
{
    for (unsigned i = 0; i < size; i++) b[off + i] = (uint8_t)(v >> (8u * i));
}

/* The common part of a PASS_END (type 6) or STREAM_ACK (type 7) as
 * docs/protocol.md lays it out, byte by byte: no struct, no dsb_wire_init. */
static void hand_common(uint8_t f[64], const uint8_t *dst, const uint8_t *src, uint8_t type,
                        uint32_t run_id, uint32_t n)
{
    memset(f, 0, 64);
    if (dst) memcpy(f, dst, 6);
    if (src) memcpy(f + 6, src, 6);
    f[12] = 0x88; /* EtherType 0x88B5, big-endian */
    f[13] = 0xB5;
    f[14] = type;
    f[15] = 1; /* version */
    put_le(f, 20, run_id, 4);
    put_le(f, 24, n, 4);
    /* status 16, model id 18, generation 28, payload length 32, format 34, flags 35: 0 */
}

typedef struct {
    int macs;
    uint32_t run_id, n, pass, attempt;
    uint16_t queue, queue_count, action;
    uint64_t frames;
} control_case;

static void test_control_bytes(void)
{
    static const uint8_t dst[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
    static const uint8_t src[6] = {0x0A, 0x9B, 0x8C, 0x7D, 0x6E, 0x5F};
    /* distinct bytes in every field, so a misplaced or swapped byte shows */
    static const control_case cases[] = {
        {0, 0, 2, 0, 0, 0, 1, DSB_STREAM_NEXT, 0},
        {1, 0x89ABCDEFu, 40000, 7, 3, 1, 4, DSB_STREAM_RESEND, 20000},
        {1, 0x01234567u, 0x00A1B2C3u, 0xF1E2D3C4u, 0x0B0C0D0Eu, 0x1234, 0x5678,
         DSB_STREAM_DONE, 0x0102030405060708ull},
        {0, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFF, 0xFFFF, 0xFFFF,
         0xFFFFFFFFFFFFFFFFull},
    };
    int end_ok = 1, ack_ok = 1;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const control_case *k = &cases[c];
        const uint8_t *d = k->macs ? dst : NULL, *s = k->macs ? src : NULL;
        uint8_t want[64], got[64];
        memset(got, 0xA5, sizeof got); /* every byte must be written */
        hand_common(want, d, s, 6, k->run_id, k->n);
        put_le(want, 36, k->pass, 4);
        put_le(want, 40, k->attempt, 4);
        put_le(want, 44, k->queue, 2);
        put_le(want, 46, k->queue_count, 2);
        put_le(want, 48, k->frames, 8);
        size_t len = dsb_wire_build_pass_end(got, sizeof got, d, s, k->run_id, k->n, k->pass,
                                             k->attempt, k->queue, k->queue_count, k->frames);
        if (len != 64 || memcmp(got, want, 64)) {
            end_ok = 0;
            fprintf(stderr, "PASS_END case %zu differs from the hand-assembled frame\n", c);
        }

        memset(got, 0x5A, sizeof got);
        hand_common(want, d, s, 7, k->run_id, k->n);
        put_le(want, 36, k->pass, 4);
        put_le(want, 40, k->action, 2); /* 42: reserved u16 */
        put_le(want, 44, k->attempt, 4);
        put_le(want, 48, k->frames, 8);
        len = dsb_wire_build_stream_ack(got, sizeof got, d, s, k->run_id, k->n, k->pass,
                                        k->action, k->attempt, k->frames);
        if (len != 64 || memcmp(got, want, 64)) {
            ack_ok = 0;
            fprintf(stderr, "STREAM_ACK case %zu differs from the hand-assembled frame\n", c);
        }
    }
    CHECK(end_ok, "PASS_END builder = the documented bytes, 4 cases");
    CHECK(ack_ok, "STREAM_ACK builder = the documented bytes, 4 cases");

    /* too small a buffer: 0, nothing written */
    uint8_t small[64];
    memset(small, 0xEE, sizeof small);
    int untouched = dsb_wire_build_pass_end(small, 63, NULL, NULL, 1, 2, 0, 0, 0, 1, 0) == 0 &&
                    dsb_wire_build_stream_ack(small, 0, NULL, NULL, 1, 2, 0, 1, 0, 0) == 0;
    for (size_t i = 0; i < sizeof small; i++) untouched &= small[i] == 0xEE;
    CHECK(untouched, "cap < 64: 0 returned, nothing written");

    /* the builders do not judge; the checks refuse what they must */
    const uint32_t n = 100; /* one block: 100 frames a pass */
    uint8_t f[64], w[65];
    dsb_wire_pass_end ev;
    dsb_wire_stream_ack av;
#define END_IS(reason, q, qc, frames_)                                                         \
    do {                                                                                       \
        dsb_wire_build_pass_end(f, sizeof f, NULL, NULL, 9, n, 1, 0, (q), (qc), (frames_));   \
        dsb_wire_reason r_ = dsb_wire_pass_end_check(f, 64, n, &ev);                           \
        CHECK(r_ == (reason), "built PASS_END q %u/%u frames %u: want %s, got %s", (q), (qc), \
              (unsigned)(frames_), dsb_wire_reason_name(reason), dsb_wire_reason_name(r_));    \
    } while (0)
    END_IS(DSB_WR_NONE, 0u, 1u, 100u);
    END_IS(DSB_WR_NONE, 63u, 64u, 0u);
    END_IS(DSB_WR_BAD_QUEUE, 4u, 4u, 10u);
    END_IS(DSB_WR_BAD_QUEUE, 0u, 0u, 10u);
    END_IS(DSB_WR_BAD_FRAME_COUNT, 0u, 1u, 101u);
#define ACK_IS(reason, action_, frames_)                                                       \
    do {                                                                                       \
        dsb_wire_build_stream_ack(f, sizeof f, NULL, NULL, 9, n, 1, (action_), 0, (frames_)); \
        dsb_wire_reason r_ = dsb_wire_stream_ack_check(f, 64, n, &av);                         \
        CHECK(r_ == (reason), "built STREAM_ACK action %u frames %u: want %s, got %s",        \
              (unsigned)(action_), (unsigned)(frames_), dsb_wire_reason_name(reason),          \
              dsb_wire_reason_name(r_));                                                       \
    } while (0)
    ACK_IS(DSB_WR_NONE, DSB_STREAM_DONE, 100u);
    ACK_IS(DSB_WR_BAD_ACTION, 0u, 0u);
    ACK_IS(DSB_WR_BAD_ACTION, 4u, 0u);
    ACK_IS(DSB_WR_BAD_FRAME_COUNT, DSB_STREAM_NEXT, 101u);
#undef END_IS
#undef ACK_IS
    /* wrong sizes and wrong n, on good frames; every prefix refused */
    dsb_wire_build_pass_end(w, sizeof w, NULL, NULL, 9, n, 1, 0, 0, 1, 1);
    w[64] = 0;
    CHECK(dsb_wire_pass_end_check(w, 65, n, &ev) == DSB_WR_OVERSIZE &&
              dsb_wire_pass_end_check(w, 63, n, &ev) == DSB_WR_TRUNCATED &&
              dsb_wire_pass_end_check(w, 64, n + 1, &ev) == DSB_WR_WRONG_N,
          "PASS_END: 65 and 63 bytes, another n refused");
    int prefix_ok = 1;
    for (size_t l = 0; l < 64; l++) prefix_ok &= dsb_wire_pass_end_check(w, l, n, &ev) != 0;
    dsb_wire_build_stream_ack(w, sizeof w, NULL, NULL, 9, n, 1, DSB_STREAM_NEXT, 0, 1);
    CHECK(dsb_wire_stream_ack_check(w, 65, n, &av) == DSB_WR_OVERSIZE &&
              dsb_wire_stream_ack_check(w, 63, n, &av) == DSB_WR_TRUNCATED &&
              dsb_wire_stream_ack_check(w, 64, n + 1, &av) == DSB_WR_WRONG_N,
          "STREAM_ACK: 65 and 63 bytes, another n refused");
    for (size_t l = 0; l < 64; l++) prefix_ok &= dsb_wire_stream_ack_check(w, l, n, &av) != 0;
    CHECK(prefix_ok, "every prefix of a good PASS_END / STREAM_ACK refused");
    /* neither decoder takes the other's frame, nor does the request codec */
    dsb_wire_msg m;
    CHECK(dsb_wire_pass_end_check(w, 64, n, &ev) == DSB_WR_BAD_TYPE &&
              dsb_wire_decode(w, 64, 1, &m) == DSB_WR_BAD_TYPE &&
              dsb_wire_decode(w, 64, 0, &m) == DSB_WR_BAD_TYPE,
          "a STREAM_ACK is no PASS_END, request or reply");
    dsb_wire_build_pass_end(w, sizeof w, NULL, NULL, 9, n, 1, 0, 0, 1, 1);
    CHECK(dsb_wire_stream_ack_check(w, 64, n, &av) == DSB_WR_BAD_TYPE &&
              dsb_wire_decode(w, 64, 1, &m) == DSB_WR_BAD_TYPE &&
              dsb_wire_decode(w, 64, 0, &m) == DSB_WR_BAD_TYPE,
          "a PASS_END is no STREAM_ACK, request or reply");
}

/* ---- the solver ------------------------------------------------------------------ */
typedef struct {
    uint32_t passes, B;
    int64_t energy2[64][8];
    uint64_t checksum[64][8];
    int64_t best[64];
    uint64_t frames[64];
} records;

static int keep(const dsb_stream_record *r, void *arg)
{
    records *k = arg;
    if (r->pass < 64) {
        for (uint32_t b = 0; b < k->B && b < 8; b++) {
            k->energy2[r->pass][b] = r->energy2[b];
            k->checksum[r->pass][b] = r->checksum[b];
        }
        k->best[r->pass] = r->best_energy2;
        k->frames[r->pass] = r->frames;
    }
    k->passes++;
    return 0;
}

/* The streamed solve against the resident CPU solver on the same couplings
 * (PM1 model with zero diagonal, h = 0, same seed, xi, dt, K): the final
 * energies, spins and checksums of every replica must agree bit for bit. */
static void test_against_resident(dsb_stream_instance kind, uint32_t n, uint32_t B, uint32_t K)
{
    dsb_stream_params p;
    dsb_stream_params_default(&p);
    p.n = n;
    p.replicas = B;
    p.updates = K;
    p.instance = kind;
    p.seed = 7;
    records rec = {0, B, {{0}}, {{0}}, {0}, {0}};
    cm_err err = {{0}};
    CHECK(dsb_stream_run_cpu(&p, 2, 0, keep, &rec, &err) == 0, "run: %s", err.msg);
    CHECK(rec.passes == K + 1, "K + 1 passes: %u", rec.passes);
    for (uint32_t q = 0; q < rec.passes && q < 64; q++)
        CHECK(rec.frames[q] == n, "pass %u consumed %llu frames", q,
              (unsigned long long)rec.frames[q]);

    /* the same matrix as a dense int8 J with zero diagonal */
    int8_t *J = malloc((size_t)n * n);
    uint64_t key = dsb_stream_key(p.seed, kind);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
            uint32_t bit = kind == DSB_STREAM_RANDOM
                               ? dsb_stream_random_bit(key, i, j)
                               : dsb_stream_eta_bit(key, i) == dsb_stream_eta_bit(key, j);
            J[(size_t)i * n + j] = i == j ? 0 : bit ? 1 : -1;
        }
    dsb_model m;
    CHECK(dsb_model_pack(J, n, DSB_FMT_PM1, &m, &err) == 0, "pack: %s", err.msg);
    dsb_params rp;
    dsb_params_default(&rp);
    rp.replicas = B;
    rp.steps = K;
    rp.dt = p.dt;
    rp.xi = dsb_stream_xi(&p);
    rp.seed = p.seed;
    dsb_result r;
    dsb_result_init(&r, n, B, 0);
    CHECK(dsb_solve_cpu(&m, NULL, &rp, 2, &r, &err) == 0, "resident solve: %s", err.msg);
    int same_e = 1, same_c = 1;
    for (uint32_t b = 0; b < B; b++) {
        same_e &= rec.energy2[K][b] == r.energy2[b];
        same_c &= rec.checksum[K][b] == dsb_stream_checksum(r.spins + (size_t)b * m.words, n);
    }
    CHECK(same_e, "%s n=%u B=%u K=%u: final energies equal the resident solver's (%lld vs %lld)",
          dsb_stream_instance_name(kind), n, B, K, (long long)rec.energy2[K][0],
          (long long)r.energy2[0]);
    CHECK(same_c, "%s n=%u: final spins (checksums) equal the resident solver's",
          dsb_stream_instance_name(kind), n);
    /* the trajectory moved: not every pass has the same energy */
    int moved = 0;
    for (uint32_t q = 1; q <= K; q++) moved |= rec.energy2[q][0] != rec.energy2[0][0];
    CHECK(moved, "the energies change over the passes");
    dsb_result_free(&r);
    dsb_model_free(&m);
    free(J);
}

/* Pass 0 evaluates the initial signs: its energies against a direct sum over
 * the coupling function (random) or the closed form 2E = n - (eta . s)^2
 * (Mattis), independent of frames, counters and Eq. (10). */
static void test_pass0_energy(dsb_stream_instance kind, uint32_t n, uint32_t B)
{
    dsb_stream_params p;
    dsb_stream_params_default(&p);
    p.n = n;
    p.replicas = B;
    p.updates = 1;
    p.instance = kind;
    records rec = {0, B, {{0}}, {{0}}, {0}, {0}};
    cm_err err = {{0}};
    CHECK(dsb_stream_run_cpu(&p, 2, 0, keep, &rec, &err) == 0, "run: %s", err.msg);
    uint64_t key = dsb_stream_key(p.seed, kind);
    int32_t *s = malloc(n * sizeof *s);
    for (uint32_t b = 0; b < B; b++) {
        for (uint32_t i = 0; i < n; i++) {
            float x, y;
            dsb_initial_state(p.seed, b, i, &x, &y);
            s[i] = dsb_sign(x);
        }
        int64_t e2 = 0;
        if (kind == DSB_STREAM_MATTIS) {
            int64_t mag = 0;
            for (uint32_t i = 0; i < n; i++) mag += dsb_stream_eta_bit(key, i) ? s[i] : -s[i];
            e2 = (int64_t)n - mag * mag;
        } else {
            for (uint32_t i = 0; i < n; i++)
                for (uint32_t j = i + 1; j < n; j++)
                    e2 -= 2 * (dsb_stream_random_bit(key, i, j) ? 1 : -1) * s[i] * s[j];
        }
        CHECK(rec.energy2[0][b] == e2, "%s n=%u replica %u: pass-0 2E %lld, direct %lld",
              dsb_stream_instance_name(kind), n, b, (long long)rec.energy2[0][b], (long long)e2);
    }
    free(s);
}

/* Mattis: the known ground state 2E = -n(n-1) is reached (Sec. VIII-C), here
 * with two column blocks. */
static void test_mattis_ground(uint32_t n, uint32_t B, uint32_t K)
{
    dsb_stream_params p;
    dsb_stream_params_default(&p);
    p.n = n;
    p.replicas = B;
    p.updates = K;
    records rec = {0, B, {{0}}, {{0}}, {0}, {0}};
    cm_err err = {{0}};
    CHECK(dsb_stream_run_cpu(&p, 2, 0, keep, &rec, &err) == 0, "run: %s", err.msg);
    int64_t ground;
    CHECK(dsb_stream_known_ground(&p, &ground) && ground == -(int64_t)n * (n - 1), "ground");
    CHECK(rec.best[K] == ground, "Mattis n=%u: final best 2E %lld, ground %lld", n,
          (long long)rec.best[K], (long long)ground);
    for (uint32_t q = 0; q <= K; q++)
        CHECK(rec.best[q] >= ground, "pass %u below the ground state", q);
    CHECK(rec.frames[0] == 2ull * n, "two column blocks: %llu frames",
          (unsigned long long)rec.frames[0]);
}

/* A rejected frame is counted and changes nothing; a good one is consumed. */
static void test_consume_rejects(void)
{
    dsb_stream_params p;
    dsb_stream_params_default(&p);
    p.n = 100;
    p.replicas = 2;
    p.updates = 1;
    cm_err err = {{0}};
    dsb_stream_state *a, *b;
    CHECK(dsb_stream_state_create(&p, &a, &err) == 0 && dsb_stream_state_create(&p, &b, &err) == 0,
          "states");
    uint32_t *eta = dsb_stream_eta_bitmap(&p);
    uint8_t f[DSB_STREAM_FRAME];
    int all_ok = 1;
    for (uint32_t i = 0; i < p.n; i++) {
        dsb_stream_build_frame(f, &p, eta, 0, i, 0, 0, i);
        all_ok &= dsb_stream_consume(a, 0, f, sizeof f) == DSB_WR_NONE;
        all_ok &= dsb_stream_consume(b, 0, f, sizeof f) == DSB_WR_NONE;
    }
    CHECK(all_ok, "good frames consumed");
    dsb_stream_build_frame(f, &p, eta, 1, 5, 0, 0, 0); /* the next pass's frame */
    CHECK(dsb_stream_consume(b, 0, f, sizeof f) == DSB_WR_WRONG_PASS, "wrong pass rejected");
    CHECK(dsb_stream_consume(b, 1, f, 100) == DSB_WR_LENGTH_MISMATCH, "short frame rejected");
    dsb_stream_record ra, rb;
    dsb_stream_record_init(&ra, 2);
    dsb_stream_record_init(&rb, 2);
    dsb_stream_end_pass(a, 0, 0, 1, &ra);
    dsb_stream_end_pass(b, 0, 0, 1, &rb);
    CHECK(ra.energy2[0] == rb.energy2[0] && ra.energy2[1] == rb.energy2[1],
          "rejected frames left the counters alone");
    /* one frame consumed twice does change them */
    dsb_stream_build_frame(f, &p, eta, 0, 5, 0, 0, 5);
    for (uint32_t i = 0; i < p.n; i++) {
        uint8_t g[DSB_STREAM_FRAME];
        dsb_stream_build_frame(g, &p, eta, 0, i, 0, 0, i);
        dsb_stream_consume(a, 0, g, sizeof g);
        dsb_stream_consume(b, 0, g, sizeof g);
    }
    dsb_stream_consume(b, 0, f, sizeof f);
    dsb_stream_end_pass(a, 0, 0, 1, &ra);
    dsb_stream_end_pass(b, 0, 0, 1, &rb);
    CHECK(ra.energy2[0] != rb.energy2[0] || ra.energy2[1] != rb.energy2[1],
          "a duplicated frame is visible in the energy");
    dsb_stream_record_free(&ra);
    dsb_stream_record_free(&rb);
    free(eta);
    dsb_stream_state_free(a);
    dsb_stream_state_free(b);
}

static void test_params(void)
{
    dsb_stream_params p;
    cm_err err = {{0}};
    dsb_stream_params_default(&p);
    CHECK(dsb_stream_params_check(&p, &err) == 0, "defaults valid");
    CHECK(p.dt == 1.1f && p.seed == 42 && p.xi == 0.0f, "paper defaults (dt 1.1, seed 42)");
    p.n = 1;
    CHECK(dsb_stream_params_check(&p, &err) != 0 && strstr(err.msg, "n = 1"), "n = 1: %s", err.msg);
    p.n = DSB_STREAM_MAX_N + 1;
    CHECK(dsb_stream_params_check(&p, &err) != 0, "n over 2^24");
    dsb_stream_params_default(&p);
    p.replicas = DSB_STREAM_MAX_REPLICAS + 1;
    CHECK(dsb_stream_params_check(&p, &err) != 0 && strstr(err.msg, "replicas"), "B > 32");
    dsb_stream_params_default(&p);
    p.updates = 0;
    CHECK(dsb_stream_params_check(&p, &err) != 0, "K = 0");
    dsb_stream_params_default(&p);
    p.n = 10000;
    CHECK(dsb_stream_xi(&p) == 0.005f, "xi = 0.5/sqrt(n)");
    dsb_stream_instance k;
    CHECK(dsb_stream_instance_parse("Mattis", &k) == 0 && k == DSB_STREAM_MATTIS &&
              dsb_stream_instance_parse("random", &k) == 0 && k == DSB_STREAM_RANDOM &&
              dsb_stream_instance_parse("sk", &k) == -1,
          "instance names");
    uint64_t a[2] = {0x123456789ull, 0}, b[2] = {0x123456788ull, 0};
    CHECK(dsb_stream_checksum((uint32_t *)a, 64) != dsb_stream_checksum((uint32_t *)b, 64),
          "checksum sees one bit");
    uint32_t w3[3] = {1, 2, 3}, w3b[3] = {1, 2, 4};
    CHECK(dsb_stream_checksum(w3, 80) != dsb_stream_checksum(w3b, 80), "checksum: last word");
}

/* Stream files: an SK instance (dense +-1) written as a file and streamed must
 * give the resident solver's answer on the same J; a generated instance's file
 * must give the generated run's records; bad files are refused with a message. */
static void test_files(void)
{
    char dir[] = "/tmp/test_stream_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "temp dir");
    char path[256], bad[256];
    snprintf(path, sizeof path, "%s/sk.dsbs", dir);
    snprintf(bad, sizeof bad, "%s/bad.dsbs", dir);
    cm_err err = {{0}};
    dsb_instance in;
    CHECK(dsb_gen_sk(300, 1000, &in, &err) == 0, "sk: %s", err.msg);
    CHECK(dsb_stream_write_matrix(in.J, in.n, 0x5eed1234u, path, &err) == 0, "write: %s", err.msg);
    dsb_stream_params p;
    dsb_stream_params_default(&p);
    p.replicas = 4;
    p.updates = 30;
    p.seed = 9;
    p.xi = 0.03f;
    CHECK(dsb_stream_params_from_file(&p, path, &err) == 0, "open: %s", err.msg);
    CHECK(p.instance == DSB_STREAM_FILE && p.n == 300 && p.file_run_id == 0x5eed1234u,
          "file params: n %u run %08x", p.n, p.file_run_id);
    int64_t g;
    CHECK(!dsb_stream_known_ground(&p, &g), "a file has no known ground state");
    records rec = {0, 4, {{0}}, {{0}}, {0}, {0}};
    CHECK(dsb_stream_run_cpu(&p, 2, 0, keep, &rec, &err) == 0, "file run: %s", err.msg);
    CHECK(rec.passes == 31, "31 passes: %u", rec.passes);
    dsb_model m;
    CHECK(dsb_model_pack(in.J, in.n, DSB_FMT_PM1, &m, &err) == 0, "pack: %s", err.msg);
    dsb_params rp;
    dsb_params_default(&rp);
    rp.replicas = 4;
    rp.steps = 30;
    rp.dt = p.dt;
    rp.xi = p.xi;
    rp.seed = p.seed;
    dsb_result r;
    dsb_result_init(&r, in.n, 4, 0);
    CHECK(dsb_solve_cpu(&m, NULL, &rp, 2, &r, &err) == 0, "resident: %s", err.msg);
    int same = 1;
    for (uint32_t b = 0; b < 4; b++)
        same &= rec.energy2[30][b] == r.energy2[b] &&
                rec.checksum[30][b] == dsb_stream_checksum(r.spins + (size_t)b * m.words, in.n);
    CHECK(same, "SK file streamed = resident solve (2E %lld vs %lld)", (long long)rec.energy2[30][0],
          (long long)r.energy2[0]);
    dsb_result_free(&r);
    dsb_model_free(&m);

    /* a generated instance's file streams like the instance */
    dsb_stream_params gp;
    dsb_stream_params_default(&gp);
    gp.n = 700;
    gp.replicas = 2;
    gp.updates = 3;
    gp.instance = DSB_STREAM_RANDOM;
    char gpath[256];
    snprintf(gpath, sizeof gpath, "%s/random.dsbs", dir);
    CHECK(dsb_stream_write_instance(&gp, gpath, 0, &err) == 0, "write instance: %s", err.msg);
    records a = {0, 2, {{0}}, {{0}}, {0}, {0}}, b = {0, 2, {{0}}, {{0}}, {0}, {0}};
    CHECK(dsb_stream_run_cpu(&gp, 2, 0, keep, &a, &err) == 0, "generated: %s", err.msg);
    dsb_stream_params fp = gp;
    CHECK(dsb_stream_params_from_file(&fp, gpath, &err) == 0, "open: %s", err.msg);
    CHECK(fp.file_run_id == dsb_stream_run_id(gp.seed, gp.instance), "the instance's run id kept");
    CHECK(dsb_stream_run_cpu(&fp, 2, 0, keep, &b, &err) == 0, "from file: %s", err.msg);
    CHECK(a.passes == b.passes && !memcmp(a.energy2, b.energy2, sizeof a.energy2) &&
              !memcmp(a.checksum, b.checksum, sizeof a.checksum),
          "the file's records equal the generated run's");

    /* bad files */
    uint8_t *img = malloc(700u * DSB_STREAM_FRAME);
    FILE *f = fopen(gpath, "rb");
    CHECK(f && fread(img, DSB_STREAM_FRAME, 700, f) == 700, "read back");
    if (f) fclose(f);
#define WRITE_BAD(len, mutate)                                                                 \
    do {                                                                                       \
        FILE *o_ = fopen(bad, "wb");                                                           \
        mutate;                                                                                \
        fwrite(img, 1, (len), o_);                                                             \
        fclose(o_);                                                                            \
    } while (0)
    dsb_stream_params q;
    dsb_stream_params_default(&q);
    WRITE_BAD(699u * DSB_STREAM_FRAME, (void)0);
    CHECK(dsb_stream_params_from_file(&q, bad, &err) != 0 && strstr(err.msg, "n = 700 takes 700"),
          "short file: %s", err.msg);
    WRITE_BAD(100, (void)0);
    CHECK(dsb_stream_params_from_file(&q, bad, &err) != 0 && strstr(err.msg, "shorter than one"),
          "tiny file: %s", err.msg);
    WRITE_BAD(700u * DSB_STREAM_FRAME, img[14] = DSB_MSG_SOLVE);
    CHECK(dsb_stream_params_from_file(&q, bad, &err) != 0 && strstr(err.msg, "bad_type"),
          "not a stream file: %s", err.msg);
    img[14] = DSB_MSG_STREAM;
    /* frames 5 and 6 swapped: the run stops at frame 5 with where and what */
    uint8_t tmp[DSB_STREAM_FRAME];
    memcpy(tmp, img + 5u * DSB_STREAM_FRAME, DSB_STREAM_FRAME);
    memcpy(img + 5u * DSB_STREAM_FRAME, img + 6u * DSB_STREAM_FRAME, DSB_STREAM_FRAME);
    memcpy(img + 6u * DSB_STREAM_FRAME, tmp, DSB_STREAM_FRAME);
    WRITE_BAD(700u * DSB_STREAM_FRAME, (void)0);
    dsb_stream_params_default(&q);
    q.updates = 1;
    q.replicas = 1;
    CHECK(dsb_stream_params_from_file(&q, bad, &err) == 0, "a file with swapped frames opens");
    CHECK(dsb_stream_run_cpu(&q, 1, 0, NULL, NULL, &err) != 0 &&
              strstr(err.msg, "frame 5 is row 6, column block 0"),
          "swapped frames refused: %s", err.msg);
    /* a frame of another run */
    memcpy(img + 6u * DSB_STREAM_FRAME, img + 5u * DSB_STREAM_FRAME, DSB_STREAM_FRAME);
    memcpy(img + 5u * DSB_STREAM_FRAME, tmp, DSB_STREAM_FRAME);
    img[9u * DSB_STREAM_FRAME + 20] ^= 1; /* frame 9's request id */
    WRITE_BAD(700u * DSB_STREAM_FRAME, (void)0);
    CHECK(dsb_stream_run_cpu(&q, 1, 0, NULL, NULL, &err) != 0 && strstr(err.msg, "frame 9 carries run id"),
          "another run's frame refused: %s", err.msg);
    free(img);
    /* the matrix writer's checks */
    int8_t J3[9] = {0, 1, -1, 1, 0, 1, -1, 1, 0};
    CHECK(dsb_stream_write_matrix(J3, 3, 1, bad, &err) == 0, "3 x 3 +-1 written");
    J3[1] = 2;
    CHECK(dsb_stream_write_matrix(J3, 3, 1, bad, &err) != 0 && strstr(err.msg, "J[0][1] = 2"),
          "non +-1 refused: %s", err.msg);
    J3[1] = -1;
    CHECK(dsb_stream_write_matrix(J3, 3, 1, bad, &err) != 0 && strstr(err.msg, "symmetric"),
          "asymmetric refused: %s", err.msg);
    remove(path);
    remove(gpath);
    remove(bad);
    rmdir(dir);
    dsb_instance_free(&in);
}

int main(void)
{
    test_geometry();
    test_bits();
    test_frames();
    test_control_bytes();
    test_params();
    test_consume_rejects();
    test_pass0_energy(DSB_STREAM_RANDOM, 700, 3);
    test_pass0_energy(DSB_STREAM_MATTIS, 33000, 2); /* two column blocks */
    test_against_resident(DSB_STREAM_RANDOM, 500, 4, 20);
    test_against_resident(DSB_STREAM_RANDOM, 97, 8, 7);
    test_against_resident(DSB_STREAM_MATTIS, 333, 3, 12);
    test_mattis_ground(40000, 2, 3);
    test_files();
    return check_done();
}
