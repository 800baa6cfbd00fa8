/* Model store: fragments out of order, duplicated, lost then retransmitted;
 * re-acknowledgement after completion; replacement by a newer generation only
 * when complete while an acquired generation stays valid; stale and
 * conflicting fragments; invalid images; acquire errors. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "dsb/instances.h"
#include "dsb/model.h"
#include "dsb/store.h"

static uint8_t frame[DSB_WIRE_MAX_FRAME];

/* Decodes fragment k of model m (generation g, slot id) and applies it. */
static dsb_load_action feed(dsb_store *s, const dsb_model *m, uint16_t id, uint32_t g,
                            uint32_t k, float xi, dsb_store_load_out *o)
{
    size_t len = dsb_wire_build_load(frame, sizeof frame, NULL, NULL, id, 0, m->format, m->n, g,
                                     xi, m->packed, (uint32_t)m->packed_bytes, k);
    dsb_wire_msg msg;
    dsb_wire_reason r = dsb_wire_decode(frame, len, 1, &msg);
    CHECK(r == DSB_WR_NONE, "fragment %u of generation %u rejected by the decoder: %s", k, g,
          dsb_wire_reason_name(r));
    dsb_store_load(s, &msg.u.load, msg.payload, o);
    return o->action;
}

static int make_model(const char *spec, dsb_format f, dsb_model *m)
{
    dsb_instance in;
    cm_err err;
    if (dsb_gen_parse(spec, &in, &err) || dsb_model_pack(in.J, in.n, f, m, &err)) {
        fprintf(stderr, "model %s: %s\n", spec, err.msg);
        return -1;
    }
    dsb_instance_free(&in);
    return 0;
}

static uint32_t nfrags(const dsb_model *m)
{
    return (uint32_t)((m->packed_bytes + DSB_WIRE_FRAG_BYTES - 1) / DSB_WIRE_FRAG_BYTES);
}

int main(void)
{
    dsb_model a, b;
    if (make_model("portfolio:n=300,seed=1000", DSB_FMT_INT8, &a) ||
        make_model("sk:n=300,seed=1001", DSB_FMT_INT8, &b))
        return 1;
    uint32_t cnt = nfrags(&a);
    CHECK(cnt == (300u * 320u + 1407u) / 1408u, "fragment count %u", cnt);
    dsb_store *s = dsb_store_create();
    dsb_store_load_out o;
    dsb_wire_reason why;

    /* nothing yet */
    CHECK(!dsb_store_acquire(s, 3, 300, 0, &why) && why == DSB_WR_UNKNOWN_MODEL, "empty slot");

    /* generation 5 of model a: reversed order, every fragment twice, every 4th lost on the
     * first pass and sent again afterwards */
    int stored = 0, dups = 0, completed = 0, other = 0;
    for (uint32_t k = cnt; k-- > 0;) {
        if (k % 4 == 1) continue;
        for (int rep = 0; rep < 2; rep++) {
            dsb_load_action act = feed(s, &a, 3, 5, k, a.xi_default, &o);
            stored += act == DSB_LOAD_STORED;
            dups += act == DSB_LOAD_DUPLICATE;
            completed += act == DSB_LOAD_COMPLETED;
            other += act != DSB_LOAD_STORED && act != DSB_LOAD_DUPLICATE &&
                     act != DSB_LOAD_COMPLETED;
        }
    }
    CHECK(completed == 0 && other == 0, "incomplete generation completed (%d) or odd (%d)",
          completed, other);
    CHECK(dups == stored, "every second copy is a duplicate (%d vs %d)", dups, stored);
    CHECK(!dsb_store_acquire(s, 3, 300, 0, &why) && why == DSB_WR_MODEL_INCOMPLETE,
          "incomplete generation is not served");
    for (uint32_t k = 1; k < cnt; k += 4) {
        dsb_load_action act = feed(s, &a, 3, 5, k, a.xi_default, &o);
        completed += act == DSB_LOAD_COMPLETED;
        if (k + 4 >= cnt) CHECK(act == DSB_LOAD_COMPLETED, "last missing fragment completes");
    }
    CHECK(completed == 1, "generation 5 completed %d times", completed);
    CHECK(o.current_generation == 5 && o.frags_received == cnt, "completion report");
    const dsb_store_model *g5 = dsb_store_acquire(s, 3, 300, 0, &why);
    CHECK(g5 && g5->generation == 5, "acquire generation 5");
    CHECK(g5 && g5->model.packed_bytes == a.packed_bytes &&
              !memcmp(g5->model.packed, a.packed, a.packed_bytes),
          "stored image equals the uploaded one");
    CHECK(g5 && g5->model.xi_default == a.xi_default, "xi from the wire");

    /* retransmission after completion: re-acknowledged, image unchanged */
    CHECK(feed(s, &a, 3, 5, 0, a.xi_default, &o) == DSB_LOAD_REACK, "re-ack after completion");
    CHECK(feed(s, &a, 3, 5, cnt - 1, a.xi_default, &o) == DSB_LOAD_REACK, "re-ack (last)");
    /* other bytes under the complete generation's number: refused, image unchanged */
    {
        dsb_model a2;
        CHECK(dsb_model_from_packed(a.format, a.n, a.packed, a.packed_bytes, &a2, NULL) == 0,
              "copy of a");
        a2.packed[a2.packed_bytes - 1] ^= 0x01u; /* one coupling bit of the last fragment */
        CHECK(feed(s, &a2, 3, 5, cnt - 1, a.xi_default, &o) == DSB_LOAD_REJECTED &&
                  o.reason == DSB_WR_LOAD_CONFLICT && o.current_generation == 5,
              "different image under generation 5: %d", (int)o.action);
        CHECK(feed(s, &a2, 3, 5, 0, a.xi_default, &o) == DSB_LOAD_REACK,
              "an unchanged fragment of it is still re-acknowledged");
        dsb_model_free(&a2);
    }

    /* acquire errors */
    CHECK(!dsb_store_acquire(s, 3, 299, 0, &why) && why == DSB_WR_WRONG_N, "wrong n");
    CHECK(!dsb_store_acquire(s, 3, 300, 4, &why) && why == DSB_WR_WRONG_GENERATION,
          "wrong generation");
    const dsb_store_model *tmp = dsb_store_acquire(s, 3, 300, 5, &why);
    CHECK(tmp && tmp == g5, "explicit current generation");
    dsb_store_release(tmp);
    CHECK(!dsb_store_acquire(s, 64, 300, 0, &why) && why == DSB_WR_BAD_MODEL_ID, "slot 64");

    /* generation 6 (model b) partly loaded: generation 5 is still served */
    for (uint32_t k = 0; k + 1 < cnt; k++) feed(s, &b, 3, 6, k, b.xi_default, &o);
    tmp = dsb_store_acquire(s, 3, 300, 0, &why);
    CHECK(tmp && tmp->generation == 5, "partial generation 6 does not replace 5");
    dsb_store_release(tmp);
    /* a conflicting fragment of generation 6 (other xi) is refused */
    CHECK(feed(s, &b, 3, 6, cnt - 1, b.xi_default * 2, &o) == DSB_LOAD_REJECTED &&
              o.reason == DSB_WR_LOAD_CONFLICT,
          "conflicting fragment");
    CHECK(feed(s, &b, 3, 6, cnt - 1, b.xi_default, &o) == DSB_LOAD_COMPLETED, "6 completes");
    const dsb_store_model *g6 = dsb_store_acquire(s, 3, 300, 0, &why);
    CHECK(g6 && g6->generation == 6 && !memcmp(g6->model.packed, b.packed, b.packed_bytes),
          "generation 6 served after completion");
    /* the in-flight reference to generation 5 is intact */
    CHECK(!memcmp(g5->model.packed, a.packed, a.packed_bytes) && g5->generation == 5,
          "held generation 5 unchanged");
    CHECK(dsb_store_live_models() == 2, "5 and 6 alive (%d)", dsb_store_live_models());
    dsb_store_release(g5);
    CHECK(dsb_store_live_models() == 1, "5 freed on release (%d)", dsb_store_live_models());

    /* stale generations are refused */
    CHECK(feed(s, &a, 3, 5, 0, a.xi_default, &o) == DSB_LOAD_REJECTED &&
              o.reason == DSB_WR_STALE_GENERATION && o.current_generation == 6,
          "stale generation");
    /* a newer pending generation abandons an older pending one */
    feed(s, &a, 3, 8, 0, a.xi_default, &o);
    CHECK(feed(s, &a, 3, 7, 1, a.xi_default, &o) == DSB_LOAD_REJECTED &&
              o.reason == DSB_WR_STALE_GENERATION,
          "older than the pending generation");
    feed(s, &a, 3, 9, 0, a.xi_default, &o); /* 9 replaces pending 8 */
    int done9 = 0;
    for (uint32_t k = 1; k < cnt; k++) done9 += feed(s, &a, 3, 9, k, a.xi_default, &o) ==
                                                DSB_LOAD_COMPLETED;
    CHECK(done9 == 1 && dsb_store_generation(s, 3) == 9, "generation 9 current");

    /* an image that fails validation: INT8 with a non-zero diagonal */
    dsb_model bad = a;
    uint8_t *img = malloc(a.packed_bytes);
    memcpy(img, a.packed, a.packed_bytes);
    img[0] = 5; /* J_00 */
    bad.packed = img;
    dsb_load_action last = DSB_LOAD_STORED;
    for (uint32_t k = 0; k < cnt; k++) last = feed(s, &bad, 4, 1, k, a.xi_default, &o);
    CHECK(last == DSB_LOAD_REJECTED && o.reason == DSB_WR_BAD_MODEL_IMAGE, "invalid image refused");
    CHECK(!dsb_store_acquire(s, 4, 300, 0, &why) && why == DSB_WR_UNKNOWN_MODEL,
          "invalid image not served");
    free(img);

    /* every slot can hold the largest image of each format */
    dsb_model big;
    if (make_model("sk:n=2048,seed=1", DSB_FMT_PM1, &big) == 0) {
        CHECK(big.packed_bytes == DSB_STORE_SLOT_BYTES, "PM1 n=2048 fills a slot exactly");
        uint32_t bc = nfrags(&big);
        CHECK(bc == DSB_WIRE_MAX_FRAGS, "%u fragments", bc);
        int ok = 0;
        for (uint32_t k = 0; k < bc; k++) ok += feed(s, &big, 63, 1, k, big.xi_default, &o) ==
                                                DSB_LOAD_COMPLETED;
        CHECK(ok == 1 && dsb_store_generation(s, 63) == 1, "full slot loads");
        dsb_model_free(&big);
    }
    dsb_store_release(g6);
    dsb_store_destroy(s);
    CHECK(dsb_store_live_models() == 0, "all models freed (%d)", dsb_store_live_models());
    dsb_model_free(&a);
    dsb_model_free(&b);
    return check_done();
}
