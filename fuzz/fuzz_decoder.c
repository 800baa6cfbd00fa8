/* Fuzz target: the frame decoder (both directions) and the reply builders.
 * Invariants: nothing is read outside the input (ASan), an accepted frame's
 * payload lies inside it and agrees with the header, and every reply the
 * server would build for a frame decodes cleanly on the client side. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsb/wire.h"
#include "fuzz.h"

uint64_t fuzz_stats[4];
const char *fuzz_name(void) { return "decoder"; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_stats[0]++;
    for (int dir = 1; dir >= 0; dir--) {
        dsb_wire_msg m;
        dsb_wire_reason r = dsb_wire_decode(data, size, dir, &m);
        FUZZ_ASSERT(r < DSB_WR_COUNT);
        if (r == DSB_WR_NONE) {
            fuzz_stats[1]++;
            FUZZ_ASSERT(m.payload == data + DSB_WIRE_HDR_BYTES);
            FUZZ_ASSERT((size_t)DSB_WIRE_HDR_BYTES + m.payload_len == size);
            FUZZ_ASSERT(m.u.hdr.version == DSB_WIRE_VERSION);
            if (m.u.hdr.type == DSB_MSG_LOAD) {
                FUZZ_ASSERT(dir == 1);
                FUZZ_ASSERT(m.u.load.offset + m.payload_len <= m.u.load.total_bytes);
                FUZZ_ASSERT(m.u.load.total_bytes <= DSB_STORE_SLOT_BYTES);
                FUZZ_ASSERT(m.u.load.model_id < DSB_STORE_SLOTS && m.u.load.generation > 0);
            } else if (m.u.hdr.type == DSB_MSG_SOLVE) {
                FUZZ_ASSERT(dir == 1);
                FUZZ_ASSERT(m.payload_len == 0 || m.payload_len == 2u * m.u.solve.n);
                FUZZ_ASSERT(m.u.solve.n >= 1 && m.u.solve.n <= DSB_WIRE_MAX_N);
                FUZZ_ASSERT(m.u.solve.steps >= 1 && m.u.solve.replicas >= 1);
                FUZZ_ASSERT(m.u.solve.dt > 0.0f && m.u.solve.xi >= 0.0f);
            } else {
                FUZZ_ASSERT(dir == 0);
                FUZZ_ASSERT(m.u.hdr.status < DSB_ST_COUNT);
            }
        } else {
            fuzz_stats[2]++;
        }
        if (dir == 1 && (r == DSB_WR_NONE || dsb_wire_reason_answerable(r))) {
            /* the server's replies to it must decode on the client */
            uint8_t out[DSB_WIRE_MAX_FRAME];
            static const uint32_t spins[DSB_WIRE_MAX_N / 32];
            size_t len;
            uint16_t st = r == DSB_WR_NONE ? DSB_ST_OK : (uint16_t)dsb_wire_reason_status(r);
            if (m.u.hdr.type == DSB_MSG_LOAD)
                len = dsb_wire_build_load_ack(out, sizeof out, &m.u.hdr, st, (uint8_t)r, 1, 1, 1);
            else
                len = dsb_wire_build_result(out, sizeof out, &m.u.hdr, st, (uint8_t)r, 1, 0, -5,
                                            0, 1, 2, 3, spins);
            FUZZ_ASSERT(len >= DSB_WIRE_HDR_BYTES);
            dsb_wire_msg q;
            dsb_wire_reason rr = dsb_wire_decode(out, len, 0, &q);
            FUZZ_ASSERT(rr == DSB_WR_NONE);
            FUZZ_ASSERT(q.u.hdr.request_id == m.u.hdr.request_id && q.u.hdr.status == st);
            fuzz_stats[3]++;
        }
    }
    return 0;
}

size_t fuzz_make_seed(uint64_t r, uint8_t *buf, size_t cap)
{
    static uint8_t img[DSB_STORE_SLOT_BYTES];
    uint32_t n = 1 + (uint32_t)(r % 700);
    int16_t h[DSB_WIRE_MAX_FIELD_N];
    for (uint32_t i = 0; i < n && i < DSB_WIRE_MAX_FIELD_N; i++) h[i] = (int16_t)(i * 31 + r);
    switch ((r >> 16) % 4) {
    case 0: {
        uint32_t f = 1 + (uint32_t)((r >> 20) % 3), total = dsb_wire_packed_bytes(f, n);
        uint32_t cnt = (total + DSB_WIRE_FRAG_BYTES - 1) / DSB_WIRE_FRAG_BYTES;
        return dsb_wire_build_load(buf, cap, NULL, NULL, (uint16_t)(r % 64), (uint32_t)r, f, n,
                                   1 + (uint32_t)(r >> 40), 0.5f, img, total,
                                   (uint32_t)((r >> 24) % cnt));
    }
    case 1:
        return dsb_wire_build_solve(buf, cap, NULL, NULL, (uint16_t)(r % 64), (uint32_t)r, n, 0,
                                    1 + (uint32_t)(r % 1000), 1 + (uint32_t)(r % 32), r, 0.0f,
                                    1.0f, (r >> 30) & 1 ? h : NULL);
    default: {
        uint8_t req[DSB_WIRE_MAX_FRAME];
        size_t l = dsb_wire_build_solve(req, sizeof req, NULL, NULL, 1, (uint32_t)r, n, 0, 10, 2,
                                        r, 0.0f, 1.0f, NULL);
        dsb_wire_msg m;
        dsb_wire_decode(req, l, 1, &m);
        static const uint32_t spins[DSB_WIRE_MAX_N / 32];
        if ((r >> 16) % 4 == 2)
            return dsb_wire_build_result(buf, cap, &m.u.hdr, (uint16_t)((r >> 33) % 2 ? 0 : 4), 0,
                                         3, 1, -100, 2, 3, 4, 5, spins);
        return dsb_wire_build_load_ack(buf, cap, &m.u.hdr, 0, 0, 3, 1, 3);
    }
    }
}
