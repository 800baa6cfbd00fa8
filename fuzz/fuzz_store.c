/* Fuzz target: the model store driven by an operation string (fragments of a
 * few small models with random slots, generations, order, corruption; raw
 * frames; acquire/release).  Invariants: a held generation never changes, a
 * served model always passes dsb_model_from_packed, the generation served is
 * the slot's current one, and every model is freed at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsb/instances.h"
#include "dsb/model.h"
#include "dsb/store.h"
#include "fuzz.h"

uint64_t fuzz_stats[4];
const char *fuzz_name(void) { return "store"; }

static dsb_model models[3];
static int ready;

static void init_models(void)
{
    const char *spec[3] = {"sk:n=40,seed=1000", "ternary:n=70,seed=1001", "portfolio:n=90,seed=1002"};
    dsb_format f[3] = {DSB_FMT_PM1, DSB_FMT_TERNARY, DSB_FMT_INT8};
    for (int i = 0; i < 3; i++) {
        dsb_instance in;
        cm_err err;
        if (dsb_gen_parse(spec[i], &in, &err) || dsb_model_pack(in.J, in.n, f[i], &models[i], &err)) {
            fprintf(stderr, "fuzz_store: %s\n", err.msg);
            abort();
        }
        dsb_instance_free(&in);
    }
    ready = 1;
}

static uint64_t fnv(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready) init_models();
    fuzz_stats[0]++;
    dsb_store *s = dsb_store_create();
    const dsb_store_model *held[8] = {0};
    uint64_t sum[8] = {0};
    size_t i = 0;
    uint8_t frame[DSB_WIRE_MAX_FRAME];
#define NEXT() (i < size ? data[i++] : 0)
    while (i < size) {
        uint8_t op = NEXT();
        switch (op % 4) {
        case 0: { /* a fragment of model k to slot, generation, index; maybe corrupted */
            uint8_t a = NEXT(), b = NEXT(), c = NEXT();
            const dsb_model *m = &models[a % 3];
            uint16_t slot = (uint16_t)((a >> 2) % 4);
            uint32_t gen = 1 + b % 6;
            uint32_t total = (uint32_t)m->packed_bytes;
            uint32_t cnt = (total + DSB_WIRE_FRAG_BYTES - 1) / DSB_WIRE_FRAG_BYTES;
            size_t len = dsb_wire_build_load(frame, sizeof frame, NULL, NULL, slot, 0, m->format,
                                             m->n, gen, m->xi_default, m->packed, total, c % cnt);
            if (op & 0x80 && len > 64) frame[64 + (c * 7u) % (len - 64)] ^= (uint8_t)(b | 1);
            dsb_wire_msg msg;
            FUZZ_ASSERT(dsb_wire_decode(frame, len, 1, &msg) == DSB_WR_NONE);
            dsb_store_load_out o;
            dsb_store_load(s, &msg.u.load, msg.payload, &o);
            if (o.action == DSB_LOAD_COMPLETED) fuzz_stats[1]++;
            if (o.action == DSB_LOAD_REJECTED) fuzz_stats[2]++;
            FUZZ_ASSERT(o.current_generation == dsb_store_generation(s, slot));
            break;
        }
        case 1: { /* acquire */
            uint8_t a = NEXT(), b = NEXT();
            uint16_t slot = (uint16_t)(a % 4);
            uint32_t n = models[b % 3].n;
            dsb_wire_reason why;
            uint32_t cur = dsb_store_generation(s, slot);
            const dsb_store_model *m = dsb_store_acquire(s, slot, n, 0, &why);
            if (m) {
                FUZZ_ASSERT(m->generation == cur && m->model.n == n);
                dsb_model chk;
                cm_err err;
                FUZZ_ASSERT(dsb_model_from_packed(m->model.format, m->model.n, m->model.packed,
                                                  m->model.packed_bytes, &chk, &err) == 0);
                dsb_model_free(&chk);
                int k = a % 8;
                dsb_store_release(held[k]);
                held[k] = m;
                sum[k] = fnv(m->model.packed, m->model.packed_bytes);
                fuzz_stats[3]++;
            } else {
                FUZZ_ASSERT(why != DSB_WR_NONE);
            }
            break;
        }
        case 2: { /* release, checking the held image did not change */
            int k = NEXT() % 8;
            if (held[k]) FUZZ_ASSERT(fnv(held[k]->model.packed, held[k]->model.packed_bytes) == sum[k]);
            dsb_store_release(held[k]);
            held[k] = NULL;
            break;
        }
        default: { /* a raw frame from the input */
            size_t len = NEXT() * 8u;
            if (len > size - i) len = size - i;
            dsb_wire_msg msg;
            if (dsb_wire_decode(data + i, len, 1, &msg) == DSB_WR_NONE &&
                msg.u.hdr.type == DSB_MSG_LOAD) {
                dsb_store_load_out o;
                dsb_store_load(s, &msg.u.load, msg.payload, &o);
            }
            i += len;
        }
        }
    }
#undef NEXT
    for (int k = 0; k < 8; k++) {
        if (held[k]) FUZZ_ASSERT(fnv(held[k]->model.packed, held[k]->model.packed_bytes) == sum[k]);
        dsb_store_release(held[k]);
    }
    dsb_store_destroy(s);
    FUZZ_ASSERT(dsb_store_live_models() == 0);
    return 0;
}

size_t fuzz_make_seed(uint64_t r, uint8_t *buf, size_t cap)
{
    /* upload model r%3 to slot (r>>2)%4 in order, acquire, upload it again as a new
     * generation, release */
    size_t n = 0;
    uint8_t a = (uint8_t)(r % 12);
    for (uint32_t k = 0; k < 70 && n + 8 < cap; k++) {
        buf[n++] = 0;
        buf[n++] = a;
        buf[n++] = (uint8_t)(r >> 8);
        buf[n++] = (uint8_t)k;
        if (k == 40) {
            buf[n++] = 1;
            buf[n++] = (uint8_t)(a >> 2);
            buf[n++] = (uint8_t)(a % 3);
        }
    }
    if (n + 2 < cap) {
        buf[n++] = 2;
        buf[n++] = (uint8_t)(a >> 2);
    }
    return n;
}
