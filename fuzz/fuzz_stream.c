/* Fuzz target: the streaming solver's frame checks (STREAM, PASS_END,
 * STREAM_ACK; include/dsb/wire.h) and the consumer behind them
 * (dsb_stream_consume).  Invariants: nothing is read outside the input
 * (ASan), every reason is a known one, and an accepted STREAM frame is what
 * Eq. (10) needs (row < n, block < ceil(n/32256), 4096 bytes, +1 diagonal,
 * zero padding: checked here again bit by bit) and is consumed; accepted
 * PASS_END and STREAM_ACK frames are within their ranges. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsb/stream.h"
#include "dsb/wire.h"
#include "fuzz.h"

uint64_t fuzz_stats[4];
const char *fuzz_name(void) { return "stream"; }

/* Two runs: two column blocks (the second one padded), and one small block. */
static const uint32_t run_n[2] = {40000, 100};

static dsb_stream_params run_params(int i)
{
    dsb_stream_params p;
    dsb_stream_params_default(&p);
    p.n = run_n[i];
    p.replicas = 2;
    p.updates = 1;
    p.instance = i ? DSB_STREAM_RANDOM : DSB_STREAM_MATTIS;
    return p;
}

static uint32_t bit(const uint8_t *payload, uint64_t col)
{
    return payload[col / 8u] >> (col % 8u) & 1u;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static dsb_stream_state *state[2];
    fuzz_stats[0]++;
    int accepted = 0;
    for (int i = 0; i < 2; i++) {
        const uint32_t n = run_n[i];
        if (!state[i]) {
            dsb_stream_params p = run_params(i);
            cm_err err;
            FUZZ_ASSERT(dsb_stream_state_create(&p, &state[i], &err) == 0);
        }
        for (uint32_t pass = 0; pass < 2; pass++) {
            dsb_wire_stream v;
            dsb_wire_reason r = dsb_wire_stream_check(data, size, n, pass, &v);
            FUZZ_ASSERT(r < DSB_WR_COUNT);
            if (r != DSB_WR_NONE) continue;
            accepted = 1;
            FUZZ_ASSERT(size == DSB_STREAM_FRAME && v.n == n && v.pass == pass);
            FUZZ_ASSERT(v.row < n && v.block < dsb_stream_blocks(n));
            const uint8_t *payload = data + DSB_WIRE_HDR_BYTES;
            uint64_t first = (uint64_t)v.block * DSB_STREAM_COLS;
            if (v.row / DSB_STREAM_COLS == v.block) FUZZ_ASSERT(bit(payload, v.row - first));
            for (uint64_t c = first; c < first + DSB_STREAM_COLS; c++)
                if (c >= n) FUZZ_ASSERT(!bit(payload, c - first));
            int cr = dsb_stream_consume(state[i], pass, data, size);
            FUZZ_ASSERT(cr == DSB_WR_NONE || cr == DSB_WR_WRONG_RUN);
            if (cr == DSB_WR_NONE) fuzz_stats[3]++;
        }
        dsb_wire_pass_end e;
        dsb_wire_reason r = dsb_wire_pass_end_check(data, size, n, &e);
        FUZZ_ASSERT(r < DSB_WR_COUNT);
        if (r == DSB_WR_NONE) {
            accepted = 1;
            FUZZ_ASSERT(size == DSB_WIRE_HDR_BYTES && e.queue < e.queue_count);
            FUZZ_ASSERT(e.frames <= dsb_stream_frames(n));
        }
        dsb_wire_stream_ack a;
        r = dsb_wire_stream_ack_check(data, size, n, &a);
        FUZZ_ASSERT(r < DSB_WR_COUNT);
        if (r == DSB_WR_NONE) {
            accepted = 1;
            FUZZ_ASSERT(size == DSB_WIRE_HDR_BYTES);
            FUZZ_ASSERT(a.action >= DSB_STREAM_NEXT && a.action <= DSB_STREAM_DONE);
            FUZZ_ASSERT(a.frames <= dsb_stream_frames(n));
        }
    }
    fuzz_stats[accepted ? 1 : 2]++;
    return 0;
}

size_t fuzz_make_seed(uint64_t r, uint8_t *buf, size_t cap)
{
    int i = (int)(r & 1u);
    dsb_stream_params p = run_params(i);
    const uint32_t n = p.n;
    switch ((r >> 8) % 3) {
    case 0: { /* a STREAM frame of the run */
        static uint32_t *eta; /* run 0's (the Mattis one) */
        if (!eta) {
            dsb_stream_params p0 = run_params(0);
            eta = dsb_stream_eta_bitmap(&p0);
        }
        if (cap < DSB_STREAM_FRAME) return 0;
        uint64_t f = (r >> 16) % dsb_stream_frames(n);
        uint32_t row, block;
        dsb_stream_frame_coords(f, n, &row, &block);
        dsb_stream_build_frame(buf, &p, i ? NULL : eta, (uint32_t)((r >> 40) & 1u), row, block,
                               0, f);
        return DSB_STREAM_FRAME;
    }
    case 1: {
        uint16_t queue_count = (uint16_t)(1u + (r >> 20) % 8u);
        return dsb_wire_build_pass_end(buf, cap, NULL, NULL, dsb_stream_run_id(p.seed, p.instance),
                                       n, (uint32_t)(r >> 40) & 1u, 0,
                                       (uint16_t)((r >> 24) % queue_count), queue_count,
                                       (r >> 28) % (dsb_stream_frames(n) + 1u));
    }
    default:
        return dsb_wire_build_stream_ack(buf, cap, NULL, NULL,
                                         dsb_stream_run_id(p.seed, p.instance), n,
                                         (uint32_t)(r >> 40) & 1u,
                                         (uint16_t)(1u + (r >> 20) % 3u), 0,
                                         (r >> 28) % (dsb_stream_frames(n) + 1u));
    }
}
