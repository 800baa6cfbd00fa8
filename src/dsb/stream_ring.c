/* The ring for received stream frames and the CPU's ring sink
 * (include/dsb/stream_ring.h).
 *
 * Per slot s the ring keeps occ[s] (the run-wide chunk + 1 that holds the
 * slot, of this attempt or an earlier one) and filled[s] (frames copied into
 * the slot in this attempt, over all its chunks: the slot's chunks of one
 * attempt are q0, q0 + S, ... and all but the pass's last hold F frames, so
 * chunk q is whole when filled = (q / S) F + size(q), and nothing is ever
 * reset while other threads may count).  Per frame position a stamp (the
 * run-wide chunk + 1 of the frame copied there) makes a duplicate exact:
 * the first copy of a frame wins the compare-and-swap of its stamp.
 *
 * The window: chunk q may take its slot only when q < lo + S, lo the first
 * chunk of the attempt that is not whole.  The consumers take chunks in pass
 * order (the CPU's thread; the GPU's blocks by an ordered ticket), so every
 * chunk before lo, chunk q - S among them, is consumed without waiting for
 * anything the receiver has not delivered: the wait for its slot to be freed
 * is short.  (A window of "q - S whole" alone would deadlock: the consumer
 * can be stuck at an older chunk that lacks a frame.)
 *
 * A frame beyond the window waits a little (window_wait_s) for lo to move:
 * with several receiving threads the frames lo lacks may be in another
 * thread's batch, its thread descheduled.  If lo does not move the position
 * is marked stalled and later frames beyond it are refused at once, until lo
 * moves (one wait per stall: a lost frame costs one wait, not one a frame).
 *
 * Direct placement (reserve / commit / release): a reserve takes the slot as
 * a put does, without waiting, and marks the place's stamp reserved (the
 * chunk with the high bit STAMP_RSV), so that no put copies into it while the
 * kernel may write there; a put that meets the mark waits for the commit (the
 * stamp becomes the chunk's: a duplicate now) or the release (the stamp goes
 * back below every chunk's). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/bench.h"
#include "common/threads.h"
#include "dsb/stream_ring.h"
#include "dsb/wire.h"

/* A stamp with this bit: the place is reserved for a receive straight into it
 * (dsb_stream_ring_reserve), by the chunk in the low bits. */
#define STAMP_RSV (1ull << 63)

struct dsb_stream_ring {
    uint8_t *buf;
    _Atomic uint64_t *ready, *freed;
    uint32_t S;
    uint64_t F, T, cpp;
    uint64_t base, next_base;
    double wait_limit_s;
    _Atomic uint64_t *occ, *filled, *stamp;
    _Atomic uint64_t published, waits;
    _Atomic uint64_t lo; /* chunks 0 .. lo - 1 of the attempt are whole */
    _Atomic uint64_t stalled; /* lo + 1 where a wait for the window gave up, 0: none */
    _Atomic uint64_t window_waits;
    _Atomic uint64_t rsv_waits; /* puts that waited for a reserved place */
    double window_wait_s;
    _Atomic int stop;
};

int dsb_stream_ring_shape(uint64_t bytes, uint64_t frames_per_pass, uint32_t unit,
                          uint32_t *slots, uint64_t *chunk_frames, cm_err *err)
{
    if (unit == 0 || frames_per_pass == 0)
        return cm_fail(err, "stream ring: unit %u, %llu frames a pass: expected both >= 1", unit,
                       (unsigned long long)frames_per_pass);
    const uint64_t cap = bytes / DSB_STREAM_FRAME;
    if (cap < 2ull * unit)
        return cm_fail(err, "stream ring: %llu bytes hold fewer than 2 chunks of %u frames "
                            "(%llu bytes at least)",
                       (unsigned long long)bytes, unit, 2ull * unit * DSB_STREAM_FRAME);
    uint64_t per = cap / ((uint64_t)unit * DSB_STREAM_RING_TARGET_SLOTS);
    uint64_t F = (uint64_t)unit * (per ? per : 1u);
    const uint64_t whole = (frames_per_pass + unit - 1u) / unit * unit; /* the pass in units */
    if (F > whole) F = whole;
    uint64_t S = cap / F, cpp = (frames_per_pass + F - 1u) / F;
    if (S > cpp) S = cpp > 2u ? cpp : 2u;
    if (S > DSB_STREAM_RING_MAX_SLOTS) S = DSB_STREAM_RING_MAX_SLOTS;
    *slots = (uint32_t)S;
    *chunk_frames = F;
    return 0;
}

int dsb_stream_ring_create(const dsb_stream_ring_cfg *c, dsb_stream_ring **out, cm_err *err)
{
    *out = NULL;
    if (!c->buf || !c->ready || !c->freed)
        return cm_fail(err, "stream ring: no buffer or flags");
    if (c->slots < 2u || c->slots > DSB_STREAM_RING_MAX_SLOTS)
        return cm_fail(err, "stream ring: %u slots: expected 2 .. %u", c->slots,
                       DSB_STREAM_RING_MAX_SLOTS);
    if (c->chunk_frames == 0 || c->frames == 0 || c->chunk_frames > (1ull << 40) / c->slots)
        return cm_fail(err, "stream ring: %llu frames a chunk, %llu a pass: expected >= 1 (and "
                            "a ring below 2^40 frames)",
                       (unsigned long long)c->chunk_frames, (unsigned long long)c->frames);
    dsb_stream_ring *r = cm_calloc(1, sizeof *r);
    r->buf = c->buf;
    r->ready = c->ready;
    r->freed = c->freed;
    r->S = c->slots;
    r->F = c->chunk_frames;
    r->T = c->frames;
    r->cpp = (r->T + r->F - 1u) / r->F;
    r->wait_limit_s = c->wait_limit_s > 0 ? c->wait_limit_s : 2.0;
    r->occ = cm_calloc(r->S, sizeof *r->occ);
    r->filled = cm_calloc(r->S, sizeof *r->filled);
    r->stamp = cm_calloc((size_t)r->S * r->F, sizeof *r->stamp);
    for (uint32_t s = 0; s < r->S; s++) {
        atomic_init(&r->occ[s], 0);
        atomic_init(&r->filled[s], 0);
        atomic_store(&r->ready[s], 0);
        atomic_store(&r->freed[s], 0);
    }
    for (uint64_t i = 0; i < (uint64_t)r->S * r->F; i++) atomic_init(&r->stamp[i], 0);
    atomic_init(&r->published, 0);
    atomic_init(&r->waits, 0);
    atomic_init(&r->lo, 0);
    atomic_init(&r->stalled, 0);
    atomic_init(&r->window_waits, 0);
    atomic_init(&r->rsv_waits, 0);
    r->window_wait_s = c->window_wait_s > 0 ? c->window_wait_s : c->window_wait_s < 0 ? 0.0 : 0.05;
    atomic_init(&r->stop, 0);
    *out = r;
    return 0;
}

void dsb_stream_ring_free(dsb_stream_ring *r)
{
    if (!r) return;
    free(r->occ);
    free(r->filled);
    free(r->stamp);
    free(r);
}

uint64_t dsb_stream_ring_begin(dsb_stream_ring *r)
{
    r->base = r->next_base; /* past every chunk of earlier attempts */
    r->next_base += r->cpp;
    for (uint32_t s = 0; s < r->S; s++) atomic_store(&r->filled[s], 0);
    atomic_store(&r->published, 0);
    atomic_store(&r->lo, 0);
    atomic_store(&r->stalled, 0);
    return r->base;
}

void dsb_stream_ring_stop(dsb_stream_ring *r, int stop) { atomic_store(&r->stop, stop); }
uint64_t dsb_stream_ring_base(const dsb_stream_ring *r) { return r->base; }
uint64_t dsb_stream_ring_chunks(const dsb_stream_ring *r) { return r->cpp; }
uint64_t dsb_stream_ring_published(const dsb_stream_ring *r)
{
    return atomic_load(&((dsb_stream_ring *)r)->published);
}
uint64_t dsb_stream_ring_waits(const dsb_stream_ring *r)
{
    return atomic_load(&((dsb_stream_ring *)r)->waits);
}
uint64_t dsb_stream_ring_window_waits(const dsb_stream_ring *r)
{
    return atomic_load(&((dsb_stream_ring *)r)->window_waits);
}
uint64_t dsb_stream_ring_reserve_waits(const dsb_stream_ring *r)
{
    return atomic_load(&((dsb_stream_ring *)r)->rsv_waits);
}
uint64_t dsb_stream_ring_chunk_size(const dsb_stream_ring *r, uint64_t q)
{
    return q + 1u < r->cpp ? r->F : r->T - (r->cpp - 1u) * r->F;
}

/* Chunk q of the attempt is whole. */
static int chunk_whole(dsb_stream_ring *r, uint64_t q)
{
    const uint64_t Q = r->base + q;
    const uint32_t s = (uint32_t)(Q % r->S);
    return atomic_load(&r->occ[s]) == Q + 1u &&
           atomic_load(&r->filled[s]) == q / r->S * r->F + dsb_stream_ring_chunk_size(r, q);
}

/* The first chunk of the attempt that is not whole (advanced by any thread). */
static uint64_t first_not_whole(dsb_stream_ring *r)
{
    uint64_t lo = atomic_load(&r->lo);
    while (lo < r->cpp && chunk_whole(r, lo))
        if (atomic_compare_exchange_strong(&r->lo, &lo, lo + 1u)) lo++;
    return lo;
}

/* 1 when chunk q is inside the window (q < lo + S), after waiting for lo to
 * move if it is not and the position is not marked stalled. */
static int in_window(dsb_stream_ring *r, uint64_t q)
{
    uint64_t lo = first_not_whole(r);
    if (q < lo + r->S) return 1;
    if (r->window_wait_s <= 0 || atomic_load(&r->stalled) == lo + 1u || atomic_load(&r->stop))
        return 0;
    atomic_fetch_add(&r->window_waits, 1);
    const double t0 = bench_now_s();
    for (;;) {
        cm_sleep_s(20e-6);
        lo = first_not_whole(r);
        if (q < lo + r->S) return 1;
        if (atomic_load(&r->stop)) return 0;
        if (bench_now_s() - t0 > r->window_wait_s) {
            atomic_store(&r->stalled, lo + 1u);
            return 0;
        }
    }
}

/* Waits until the consumer freed run-wide chunk Q from slot s; 0 when it did
 * not within the limit (or the ring was stopped). */
static int wait_freed(dsb_stream_ring *r, uint32_t s, uint64_t Q)
{
    if (atomic_load_explicit(&r->freed[s], memory_order_acquire) >= Q + 1u) return 1;
    atomic_fetch_add(&r->waits, 1);
    double t0 = bench_now_s();
    for (;;) {
        for (int spin = 0; spin < 200; spin++)
            if (atomic_load_explicit(&r->freed[s], memory_order_acquire) >= Q + 1u) return 1;
        if (atomic_load(&r->stop) || bench_now_s() - t0 > r->wait_limit_s) return 0;
        cm_sleep_s(5e-6);
    }
}

/* Chunk q (run-wide Q, slot s) takes its slot, or holds it already: TAKEN,
 * or DUPLICATE (q was whole and left the slot) or NO_ROOM.  `wait`: waits for
 * the window to move and for the consumer to free the slot (put); else
 * answers NO_ROOM at once (reserve). */
static int take_slot(dsb_stream_ring *r, uint64_t q, uint64_t Q, uint32_t s, int wait)
{
    const uint64_t k = q / r->S; /* chunks of this attempt in the slot before q */
    uint64_t o = atomic_load_explicit(&r->occ[s], memory_order_acquire);
    if (o == Q + 1u) return DSB_STREAM_TAKEN;
    if (o > Q + 1u) return DSB_STREAM_DUPLICATE; /* q was whole and left the slot */
    if (k == 0) {
        if (o > r->base) return DSB_STREAM_NO_ROOM; /* cannot be: no chunk of ours before q */
    } else {
        const uint64_t prev = Q - r->S; /* chunk q - S of this attempt */
        /* beyond the window: an older chunk lacks a frame, lost or still on its way */
        if (wait ? !in_window(r, q) : q >= first_not_whole(r) + r->S) return DSB_STREAM_NO_ROOM;
        if (o != prev + 1u) return DSB_STREAM_NO_ROOM; /* cannot be: q - S is whole */
        if (wait ? !wait_freed(r, s, prev)
                 : atomic_load_explicit(&r->freed[s], memory_order_acquire) < prev + 1u)
            return DSB_STREAM_NO_ROOM;
    }
    /* claim the slot; a thread that lost the race sees who won */
    if (!atomic_compare_exchange_strong(&r->occ[s], &o, Q + 1u) && o != Q + 1u)
        return o > Q + 1u ? DSB_STREAM_DUPLICATE : DSB_STREAM_NO_ROOM;
    return DSB_STREAM_TAKEN;
}

/* A frame is in chunk q's slot s: counted; the count that completes the chunk
 * publishes it (the frame's bytes written before: the count is a release). */
static void filled_one(dsb_stream_ring *r, uint64_t q, uint64_t Q, uint32_t s)
{
    const uint64_t k = q / r->S;
    uint64_t n = atomic_fetch_add(&r->filled[s], 1) + 1u;
    if (n == k * r->F + dsb_stream_ring_chunk_size(r, q)) {
        atomic_store_explicit(&r->ready[s], Q + 1u, memory_order_release);
        atomic_fetch_add(&r->published, 1);
    }
}

/* Waits until the place's stamp is no longer reserved (the reserving thread
 * commits or releases it without waiting for anything); 0 when that took
 * longer than the wait limit or the ring was stopped. */
static int wait_unreserved(dsb_stream_ring *r, _Atomic uint64_t *st, uint64_t *v)
{
    atomic_fetch_add(&r->rsv_waits, 1);
    const double t0 = bench_now_s();
    for (;;) {
        for (int spin = 0; spin < 200; spin++)
            if (!((*v = atomic_load_explicit(st, memory_order_acquire)) & STAMP_RSV)) return 1;
        if (atomic_load(&r->stop) || bench_now_s() - t0 > r->wait_limit_s) return 0;
        cm_sleep_s(2e-6);
    }
}

/* Where frame f of the attempt goes: chunk q of the attempt (run-wide Q) in slot s, at place
 * `at` of the ring (its stamp; its bytes at buf + at frames). */
typedef struct {
    uint64_t q, Q, at;
    uint32_t s;
} ring_place;

static ring_place place_of(const dsb_stream_ring *r, uint64_t f)
{
    ring_place p;
    p.q = f / r->F;
    p.Q = r->base + p.q;
    p.s = (uint32_t)(p.Q % r->S);
    p.at = (uint64_t)p.s * r->F + (f - p.q * r->F);
    return p;
}

int dsb_stream_ring_put(dsb_stream_ring *r, uint64_t f, const uint8_t *frame)
{
    if (f >= r->T) return DSB_STREAM_NO_ROOM; /* the receiver never asks: no such frame */
    const ring_place p = place_of(r, f);
    int got = take_slot(r, p.q, p.Q, p.s, 1);
    if (got != DSB_STREAM_TAKEN) return got;
    _Atomic uint64_t *st = &r->stamp[p.at];
    uint64_t v = atomic_load(st);
    for (;;) {
        if (v & STAMP_RSV) { /* another thread receives into this place right now */
            if (!wait_unreserved(r, st, &v)) return DSB_STREAM_NO_ROOM;
            continue;
        }
        if (v >= p.Q + 1u) return DSB_STREAM_DUPLICATE;
        if (atomic_compare_exchange_weak(st, &v, p.Q + 1u)) break;
    }
    memcpy(r->buf + p.at * DSB_STREAM_FRAME, frame, DSB_STREAM_FRAME);
    filled_one(r, p.q, p.Q, p.s); /* the copy before the count */
    return DSB_STREAM_TAKEN;
}

uint8_t *dsb_stream_ring_reserve(dsb_stream_ring *r, uint64_t f)
{
    if (f >= r->T) return NULL;
    const ring_place p = place_of(r, f);
    if (take_slot(r, p.q, p.Q, p.s, 0) != DSB_STREAM_TAKEN) return NULL;
    _Atomic uint64_t *st = &r->stamp[p.at];
    uint64_t v = atomic_load(st);
    do {
        if (v >= p.Q + 1u) return NULL; /* in already, or reserved (the high bit) */
    } while (!atomic_compare_exchange_weak(st, &v, (p.Q + 1u) | STAMP_RSV));
    return r->buf + p.at * DSB_STREAM_FRAME;
}

void dsb_stream_ring_commit(dsb_stream_ring *r, uint64_t f)
{
    const ring_place p = place_of(r, f);
    atomic_store_explicit(&r->stamp[p.at], p.Q + 1u, memory_order_release);
    filled_one(r, p.q, p.Q, p.s); /* the kernel wrote the bytes in this thread's receive, before */
}

void dsb_stream_ring_release(dsb_stream_ring *r, uint64_t f)
{
    const ring_place p = place_of(r, f);
    /* below any chunk's stamp: the place is free for chunk Q again (stamps of the slot's
     * earlier chunks are never read once the slot moved on: occ answers for them) */
    atomic_store_explicit(&r->stamp[p.at], 0, memory_order_release);
}

/* ---- the CPU's ring sink ---------------------------------------------------------- */

struct dsb_stream_ring_sink {
    dsb_stream_state *s;
    dsb_stream_params p;
    uint8_t *buf;
    _Atomic uint64_t *flags; /* ready[S], freed[S] */
    dsb_stream_ring *ring;
    uint32_t S;
    uint64_t F, T;
    pthread_t tid;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* under mu: attempts given to the consumer and finished by it */
    uint64_t go, finished;
    uint32_t pass;
    uint64_t base;
    int quit;
    uint64_t att_frames, att_bad; /* the last finished attempt */
    int att_stopped;
    _Atomic int abort;            /* stop the attempt in progress */
    dsb_stream_ring_sink_stats st;
};

static void *ring_consumer(void *arg)
{
    dsb_stream_ring_sink *k = arg;
    pthread_mutex_lock(&k->mu);
    for (;;) {
        while (!k->quit && k->finished == k->go) pthread_cond_wait(&k->cv, &k->mu);
        if (k->quit) break;
        const uint64_t attempt = k->go, base = k->base;
        const uint32_t pass = k->pass;
        pthread_mutex_unlock(&k->mu);
        uint64_t frames = 0, bad = 0, chunks = 0;
        int stopped = 0;
        const uint64_t cpp = dsb_stream_ring_chunks(k->ring);
        for (uint64_t q = 0; q < cpp && !stopped; q++) {
            const uint64_t Q = base + q;
            const uint32_t slot = (uint32_t)(Q % k->S);
            while (atomic_load_explicit(&k->flags[slot], memory_order_acquire) < Q + 1u) {
                if (atomic_load(&k->abort)) {
                    stopped = 1;
                    break;
                }
                cm_sleep_s(20e-6);
            }
            if (stopped) break;
            const uint64_t size = dsb_stream_ring_chunk_size(k->ring, q);
            const uint8_t *src = k->buf + (uint64_t)slot * k->F * DSB_STREAM_FRAME;
            for (uint64_t j = 0; j < size; j++) {
                if (dsb_stream_consume(k->s, pass, src + j * DSB_STREAM_FRAME, DSB_STREAM_FRAME) ==
                    DSB_WR_NONE)
                    frames++;
                else
                    bad++;
            }
            atomic_store_explicit(&k->flags[k->S + slot], Q + 1u, memory_order_release);
            chunks++;
        }
        pthread_mutex_lock(&k->mu);
        k->finished = attempt;
        k->att_frames = frames;
        k->att_bad = bad;
        k->att_stopped = stopped;
        k->st.chunks_consumed += chunks;
        k->st.frames_consumed += frames;
        k->st.bad_frames += bad;
        pthread_cond_broadcast(&k->cv);
    }
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

/* Starts the next attempt (pass `pass`) on the ring and hands it to the consumer. */
static void rs_start(dsb_stream_ring_sink *k, uint32_t pass)
{
    uint64_t base = dsb_stream_ring_begin(k->ring);
    pthread_mutex_lock(&k->mu);
    k->base = base;
    k->pass = pass;
    k->go++;
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
}

/* Waits for the consumer to finish the attempt in progress. */
static void rs_wait(dsb_stream_ring_sink *k)
{
    pthread_mutex_lock(&k->mu);
    while (k->finished != k->go) pthread_cond_wait(&k->cv, &k->mu);
    pthread_mutex_unlock(&k->mu);
}

static int rs_frame(void *ctx, uint32_t row, uint32_t block, const uint8_t *frame)
{
    dsb_stream_ring_sink *k = ctx;
    return dsb_stream_ring_put(k->ring, (uint64_t)block * k->p.n + row, frame);
}

static int rs_end_pass(void *ctx, uint32_t pass, int update, dsb_stream_record *rec, cm_err *err)
{
    dsb_stream_ring_sink *k = ctx;
    const uint64_t whole = dsb_stream_ring_published(k->ring), cpp = dsb_stream_ring_chunks(k->ring);
    if (whole != cpp) /* the consumer would wait for them forever */
        return cm_fail(err, "stream ring: pass %u ended with %llu of %llu chunks whole", pass,
                       (unsigned long long)whole, (unsigned long long)cpp);
    rs_wait(k);
    if (k->att_frames != k->T || k->att_bad || k->att_stopped)
        return cm_fail(err, "stream ring: pass %u: the consumer took %llu of %llu frames (%llu "
                            "failed its check) of a pass the receiver had whole",
                       pass, (unsigned long long)k->att_frames, (unsigned long long)k->T,
                       (unsigned long long)k->att_bad);
    dsb_stream_end_pass(k->s, pass, update, 1, rec);
    rec->frames = k->att_frames;
    rec->bad_frames = k->att_bad;
    if (pass < k->p.updates) rs_start(k, pass + 1u);
    return 0;
}

static void rs_discard(void *ctx)
{
    dsb_stream_ring_sink *k = ctx;
    atomic_store(&k->abort, 1);
    rs_wait(k);
    atomic_store(&k->abort, 0);
    if (k->att_stopped) k->st.attempts_stopped++;
    dsb_stream_discard_pass(k->s); /* what the consumer took of the attempt */
    rs_start(k, k->pass);
}

int dsb_stream_ring_sink_open(dsb_stream_state *s, const dsb_stream_params *p, uint64_t bytes,
                              uint64_t chunk_frames, dsb_stream_ring_sink **out, cm_err *err)
{
    *out = NULL;
    if (dsb_stream_params_check(p, err)) return -1;
    if (!bytes) bytes = DSB_STREAM_RING_DEFAULT_BYTES;
    const uint64_t T = dsb_stream_frames(p->n);
    uint32_t S;
    uint64_t F;
    if (chunk_frames) {
        F = chunk_frames;
        uint64_t slots = bytes / DSB_STREAM_FRAME / F;
        if (slots < 2u)
            return cm_fail(err, "stream ring: %llu bytes hold fewer than 2 chunks of %llu frames",
                           (unsigned long long)bytes, (unsigned long long)F);
        S = slots > DSB_STREAM_RING_MAX_SLOTS ? DSB_STREAM_RING_MAX_SLOTS : (uint32_t)slots;
    } else if (dsb_stream_ring_shape(bytes, T, 1, &S, &F, err)) {
        return -1;
    }
    dsb_stream_ring_sink *k = cm_calloc(1, sizeof *k);
    k->s = s;
    k->p = *p;
    k->S = S;
    k->F = F;
    k->T = T;
    k->buf = cm_malloc((size_t)S * F * DSB_STREAM_FRAME);
    k->flags = cm_calloc(2u * S, sizeof *k->flags);
    for (uint32_t i = 0; i < 2u * S; i++) atomic_init(&k->flags[i], 0);
    atomic_init(&k->abort, 0);
    dsb_stream_ring_cfg c = {k->buf, k->flags, k->flags + S, S, F, T, 0, 0};
    if (dsb_stream_ring_create(&c, &k->ring, err)) {
        free(k->buf);
        free(k->flags);
        free(k);
        return -1;
    }
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->cv, NULL);
    k->st.slots = S;
    k->st.chunk_frames = F;
    if (pthread_create(&k->tid, NULL, ring_consumer, k) != 0) {
        dsb_stream_ring_sink_close(k);
        return cm_fail(err, "stream ring: could not start the consumer thread");
    }
    k->started = 1;
    rs_start(k, 0);
    *out = k;
    return 0;
}

void dsb_stream_ring_sink_get(dsb_stream_ring_sink *k, dsb_stream_sink *sink)
{
    sink->ctx = k;
    sink->frame = rs_frame;
    sink->end_pass = rs_end_pass;
    sink->discard = rs_discard;
    sink->dedup = 1;
    sink->concurrent = 1;
    sink->ring = k->ring; /* rs_frame is a put on it */
}

void dsb_stream_ring_sink_stats_get(dsb_stream_ring_sink *k, dsb_stream_ring_sink_stats *st)
{
    pthread_mutex_lock(&k->mu);
    *st = k->st;
    pthread_mutex_unlock(&k->mu);
    st->slot_waits = dsb_stream_ring_waits(k->ring);
}

void dsb_stream_ring_sink_close(dsb_stream_ring_sink *k)
{
    if (!k) return;
    if (k->started) {
        atomic_store(&k->abort, 1);
        pthread_mutex_lock(&k->mu);
        k->quit = 1;
        pthread_cond_broadcast(&k->cv);
        pthread_mutex_unlock(&k->mu);
        pthread_join(k->tid, NULL);
    }
    pthread_mutex_destroy(&k->mu);
    pthread_cond_destroy(&k->cv);
    dsb_stream_ring_free(k->ring);
    free(k->buf);
    free(k->flags);
    free(k);
}
