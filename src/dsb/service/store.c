/* Model store: per-slot generation bookkeeping, fragment bitmap,
 * copy-on-complete with reference-counted generations. */
#include "dsb/store.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

#define BITMAP_WORDS ((DSB_WIRE_MAX_FRAGS + 63u) / 64u)

typedef struct {
    pthread_mutex_t lock;
    dsb_store_model *cur; /* complete generation or NULL */
    /* generation in progress */
    uint32_t pend_gen; /* 0 = none */
    uint32_t pend_n, pend_format, pend_total, pend_count, pend_received;
    float pend_xi;
    uint64_t bitmap[BITMAP_WORDS];
    uint8_t *buf; /* DSB_STORE_SLOT_BYTES, allocated on first use */
} slot_t;

struct dsb_store {
    slot_t slot[DSB_STORE_SLOTS];
};

static atomic_int live_models;

int dsb_store_live_models(void) { return atomic_load(&live_models); }

dsb_store *dsb_store_create(void)
{
    dsb_store *s = cm_calloc(1, sizeof *s);
    for (unsigned i = 0; i < DSB_STORE_SLOTS; i++) pthread_mutex_init(&s->slot[i].lock, NULL);
    return s;
}

void dsb_store_release(const dsb_store_model *cm)
{
    if (!cm) return;
    dsb_store_model *m = (dsb_store_model *)cm;
    if (atomic_fetch_sub(&m->refs, 1) == 1) {
        dsb_model_free(&m->model);
        free(m);
        atomic_fetch_sub(&live_models, 1);
    }
}

void dsb_store_destroy(dsb_store *s)
{
    if (!s) return;
    for (unsigned i = 0; i < DSB_STORE_SLOTS; i++) {
        dsb_store_release(s->slot[i].cur);
        free(s->slot[i].buf);
        pthread_mutex_destroy(&s->slot[i].lock);
    }
    free(s);
}

static void start_pending(slot_t *sl, const dsb_wire_load *l)
{
    sl->pend_gen = l->generation;
    sl->pend_n = l->n;
    sl->pend_format = l->format;
    sl->pend_total = l->total_bytes;
    sl->pend_count = l->frag_count;
    sl->pend_received = 0;
    sl->pend_xi = l->xi_default;
    memset(sl->bitmap, 0, sizeof sl->bitmap);
    if (!sl->buf) sl->buf = cm_malloc(DSB_STORE_SLOT_BYTES);
}

void dsb_store_load(dsb_store *s, const dsb_wire_load *l, const uint8_t *payload,
                    dsb_store_load_out *out)
{
    slot_t *sl = &s->slot[l->model_id % DSB_STORE_SLOTS];
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&sl->lock);
    uint32_t cur_gen = sl->cur ? sl->cur->generation : 0;
    if (sl->cur && l->generation == cur_gen) {
        /* a generation is immutable: other bytes under its number are refused */
        const dsb_model *cm = &sl->cur->model;
        if (l->n != cm->n || l->format != (uint8_t)cm->format ||
            memcmp(cm->packed + l->offset, payload, l->payload_len) != 0) {
            out->action = DSB_LOAD_REJECTED;
            out->reason = DSB_WR_LOAD_CONFLICT;
            goto done;
        }
        out->action = DSB_LOAD_REACK;
        out->frags_received = l->frag_count;
        goto done;
    }
    if (l->generation < cur_gen || (sl->pend_gen && l->generation < sl->pend_gen)) {
        out->action = DSB_LOAD_REJECTED;
        out->reason = DSB_WR_STALE_GENERATION;
        goto done;
    }
    if (l->generation != sl->pend_gen) start_pending(sl, l); /* newer: abandon the old one */
    if (l->n != sl->pend_n || l->format != sl->pend_format || l->total_bytes != sl->pend_total ||
        l->frag_count != sl->pend_count || memcmp(&l->xi_default, &sl->pend_xi, 4) != 0) {
        out->action = DSB_LOAD_REJECTED;
        out->reason = DSB_WR_LOAD_CONFLICT;
        out->frags_received = sl->pend_received;
        goto done;
    }
    uint32_t idx = l->frag_index;
    uint64_t bit = 1ull << (idx % 64u);
    if (sl->bitmap[idx / 64u] & bit) {
        out->action = DSB_LOAD_DUPLICATE;
        out->frags_received = sl->pend_received;
        goto done;
    }
    sl->bitmap[idx / 64u] |= bit;
    memcpy(sl->buf + l->offset, payload, l->payload_len);
    sl->pend_received++;
    out->frags_received = sl->pend_received;
    out->action = DSB_LOAD_STORED;
    if (sl->pend_received == sl->pend_count) {
        dsb_store_model *m = cm_calloc(1, sizeof *m);
        cm_err err;
        uint32_t gen = sl->pend_gen;
        sl->pend_gen = 0;
        if (dsb_model_from_packed((dsb_format)sl->pend_format, sl->pend_n, sl->buf,
                                  sl->pend_total, &m->model, &err) != 0) {
            free(m);
            out->action = DSB_LOAD_REJECTED;
            out->reason = DSB_WR_BAD_MODEL_IMAGE;
            goto done;
        }
        m->model.xi_default = sl->pend_xi; /* the wire's gain is authoritative */
        m->generation = gen;
        m->id = l->model_id;
        atomic_init(&m->refs, 1); /* the store's own reference */
        atomic_fetch_add(&live_models, 1);
        dsb_store_model *old = sl->cur;
        sl->cur = m;
        dsb_store_release(old); /* in-flight solves keep theirs alive */
        out->action = DSB_LOAD_COMPLETED;
    }
done:
    out->current_generation = sl->cur ? sl->cur->generation : 0;
    pthread_mutex_unlock(&sl->lock);
}

const dsb_store_model *dsb_store_acquire(dsb_store *s, uint16_t id, uint32_t n,
                                         uint32_t generation, dsb_wire_reason *why)
{
    *why = DSB_WR_NONE;
    if (id >= DSB_STORE_SLOTS) {
        *why = DSB_WR_BAD_MODEL_ID;
        return NULL;
    }
    slot_t *sl = &s->slot[id];
    dsb_store_model *m = NULL;
    pthread_mutex_lock(&sl->lock);
    if (!sl->cur)
        *why = sl->pend_gen ? DSB_WR_MODEL_INCOMPLETE : DSB_WR_UNKNOWN_MODEL;
    else if (generation != 0 && generation != sl->cur->generation)
        *why = DSB_WR_WRONG_GENERATION;
    else if (n != sl->cur->model.n)
        *why = DSB_WR_WRONG_N;
    else {
        m = sl->cur;
        atomic_fetch_add(&m->refs, 1);
    }
    pthread_mutex_unlock(&sl->lock);
    return m;
}

uint32_t dsb_store_generation(dsb_store *s, uint16_t id)
{
    if (id >= DSB_STORE_SLOTS) return 0;
    slot_t *sl = &s->slot[id];
    pthread_mutex_lock(&sl->lock);
    uint32_t g = sl->cur ? sl->cur->generation : 0;
    pthread_mutex_unlock(&sl->lock);
    return g;
}
