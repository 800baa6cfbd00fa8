/* The ring for received stream frames (include/dsb/stream_ring.h), without a
 * network: its shape from a size; what a put answers (taken, duplicate, no
 * room) for frames in order, out of order, repeated, beyond the window, of a
 * chunk already consumed, and of a short last chunk; the ready words it
 * publishes and the bytes it copies; a new attempt after an abandoned one;
 * several threads putting every frame twice while a consumer frees the
 * slots; direct placement (reserve, write in place, commit or release) by
 * hand — a put waits for a reserved place, a reserve never waits — and mixed
 * with puts in several threads; and the CPU's ring sink driven by hand — frames in a scrambled order
 * with duplicates, an attempt that loses a frame after part of the pass was
 * consumed and is discarded, a ring of 2 chunks of 3 frames for passes of 33
 * and 70 frames — whose records must equal the CPU reference's
 * (dsb_stream_run_cpu) bit for bit. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "common/bench.h"
#include "common/threads.h"
#include "dsb/stream_ring.h"

/* A frame that says which frame it is: f in its first payload word, the
 * rest a pattern of f (only the ring's bytes are checked here). */
static void mark(uint8_t *frame, uint64_t f)
{
    for (uint32_t i = 0; i < DSB_STREAM_FRAME; i++) frame[i] = (uint8_t)(f * 131u + i * 7u);
    memcpy(frame + 64, &f, sizeof f);
}
static int marked(const uint8_t *frame, uint64_t f)
{
    uint8_t want[DSB_STREAM_FRAME];
    mark(want, f);
    return memcmp(frame, want, DSB_STREAM_FRAME) == 0;
}

static void test_shape(void)
{
    uint32_t S = 0;
    uint64_t F = 0;
    cm_err e = {{0}};
    /* 64 MiB = 16384 frames; 16 slots of 16384 / 16 = 1024 frames (a multiple of 128) */
    CHECK(dsb_stream_ring_shape(64ull << 20, 400000, 128, &S, &F, &e) == 0 && S == 16 && F == 1024,
          "64 MiB for 400000 frames: %u x %llu (%s)", S, (unsigned long long)F, e.msg);
    /* 1 MiB = 256 frames: two chunks of one unit */
    CHECK(dsb_stream_ring_shape(1ull << 20, 1000, 128, &S, &F, &e) == 0 && S == 2 && F == 128,
          "1 MiB for 1000 frames: %u x %llu", S, (unsigned long long)F);
    /* 3 MiB = 768 frames: 768 / (128 x 16) = 0 units a chunk, so one unit; 6 slots */
    CHECK(dsb_stream_ring_shape(3ull << 20, 100000, 128, &S, &F, &e) == 0 && S == 6 && F == 128,
          "3 MiB: %u x %llu", S, (unsigned long long)F);
    /* a ring larger than the pass: no more slots than the pass has chunks (at least 2) */
    CHECK(dsb_stream_ring_shape(64ull << 20, 3000, 128, &S, &F, &e) == 0 && F == 1024 && S == 3,
          "64 MiB for a pass of 3000 frames: %u x %llu", S, (unsigned long long)F);
    CHECK(dsb_stream_ring_shape(64ull << 20, 100, 128, &S, &F, &e) == 0 && F == 128 && S == 2,
          "64 MiB for a pass of 100 frames: %u x %llu", S, (unsigned long long)F);
    /* unit 1 (the CPU): 1 MiB = 256 frames, 16 chunks of 16 */
    CHECK(dsb_stream_ring_shape(1ull << 20, 100000, 1, &S, &F, &e) == 0 && S == 16 && F == 16,
          "1 MiB, unit 1: %u x %llu", S, (unsigned long long)F);
    CHECK(dsb_stream_ring_shape((1ull << 20) - 1, 100000, 128, &S, &F, &e) == -1 &&
              strstr(e.msg, "fewer than 2 chunks of 128 frames"),
          "a byte short of 2 units refused: %s", e.msg);
    CHECK(dsb_stream_ring_shape(4096, 100000, 1, &S, &F, &e) == -1, "one frame refused: %s", e.msg);
    CHECK(dsb_stream_ring_shape(1ull << 20, 100000, 0, &S, &F, &e) == -1, "unit 0 refused: %s",
          e.msg);

    static uint8_t buf[4 * DSB_STREAM_FRAME];
    _Atomic uint64_t fl[4];
    dsb_stream_ring *r = NULL;
    dsb_stream_ring_cfg c = {buf, fl, fl + 2, 1, 2, 10, 0, 0};
    CHECK(dsb_stream_ring_create(&c, &r, &e) == -1 && r == NULL && strstr(e.msg, "slots"),
          "one slot refused: %s", e.msg);
    c.slots = 2;
    c.chunk_frames = 0;
    CHECK(dsb_stream_ring_create(&c, &r, &e) == -1 && r == NULL, "chunks of 0 frames refused: %s",
          e.msg);
    c.chunk_frames = 2;
    c.buf = NULL;
    CHECK(dsb_stream_ring_create(&c, &r, &e) == -1 && r == NULL, "no buffer refused: %s", e.msg);
}

/* The rings by hand: S = 2 slots of F = 2 frames, a pass of T = 9 frames (chunks 0..4, the last
 * of one frame). */
enum { HS = 2, HF = 2, HT = 9 };
typedef struct {
    uint8_t buf[HS * HF * DSB_STREAM_FRAME]; /* the slots' bytes */
    _Atomic uint64_t fl[2 * HS];            /* the flags: ready fl[0..S), freed fl[S..2S) */
    _Atomic uint64_t *ready, *freed;
    uint8_t fr[HT][DSB_STREAM_FRAME];       /* frame f's bytes, marked */
    dsb_stream_ring *r;
} hand_fixture;

/* A hand ring over a fixture of its own (on the heap: the frames are 36 KiB); NULL (a failed
 * check) when the ring cannot be made. */
static hand_fixture *hand_setup(void)
{
    hand_fixture *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->ready = h->fl;
    h->freed = h->fl + HS;
    cm_err e = {{0}};
    dsb_stream_ring_cfg c = {h->buf, h->ready, h->freed, HS, HF, HT, 0.05, 0.01};
    CHECK(dsb_stream_ring_create(&c, &h->r, &e) == 0, "create: %s", e.msg);
    if (!h->r) {
        free(h);
        return NULL;
    }
    for (uint64_t f = 0; f < HT; f++) mark(h->fr[f], f);
    return h;
}

static void hand_teardown(hand_fixture *h)
{
    dsb_stream_ring_free(h->r);
    free(h);
}

/* Frame f of the pass put into the hand ring. */
static int hand_put(hand_fixture *h, uint64_t f) { return dsb_stream_ring_put(h->r, f, h->fr[f]); }

/* One thread, by hand (hand_setup). */
static void test_put_by_hand(void)
{
    hand_fixture *h = hand_setup();
    if (!h) return;
    CHECK(dsb_stream_ring_chunks(h->r) == 5 && dsb_stream_ring_chunk_size(h->r, 0) == 2 &&
              dsb_stream_ring_chunk_size(h->r, 4) == 1,
          "5 chunks, the last of one frame");
    CHECK(dsb_stream_ring_begin(h->r) == 0, "the first attempt starts at chunk 0");
    /* chunk 0 out of order: published by its second frame */
    CHECK(hand_put(h, 1) == DSB_STREAM_TAKEN && atomic_load(&h->ready[0]) == 0,
          "frame 1: taken, chunk 0 not yet whole");
    CHECK(hand_put(h, 1) == DSB_STREAM_DUPLICATE, "frame 1 again: a duplicate");
    CHECK(hand_put(h, 0) == DSB_STREAM_TAKEN && atomic_load(&h->ready[0]) == 1 &&
              dsb_stream_ring_published(h->r) == 1,
          "frame 0: chunk 0 whole, ready[0] = 1");
    CHECK(marked(h->buf, 0) && marked(h->buf + DSB_STREAM_FRAME, 1), "chunk 0's bytes in slot 0");
    CHECK(hand_put(h, 0) == DSB_STREAM_DUPLICATE, "frame 0 again: a duplicate");
    /* chunk 2 (slot 0 again): inside the window (chunk 1 is the first not whole), but the
     * consumer has not freed chunk 0: after the wait limit, no room */
    CHECK(hand_put(h, 5) == DSB_STREAM_NO_ROOM && dsb_stream_ring_waits(h->r) == 1,
          "frame 5 while slot 0 holds chunk 0 unconsumed: no room after waiting");
    /* chunk 3 (slot 1): chunk 1 has no frame yet, so chunk 3 is beyond the window */
    CHECK(hand_put(h, 6) == DSB_STREAM_NO_ROOM && dsb_stream_ring_waits(h->r) == 1 &&
              dsb_stream_ring_window_waits(h->r) == 1,
          "frame 6 of chunk 3 with chunk 1 empty: beyond the window (after one wait for it)");
    CHECK(hand_put(h, 7) == DSB_STREAM_NO_ROOM && dsb_stream_ring_window_waits(h->r) == 1,
          "frame 7 too, at once: the window is marked stalled at chunk 1");
    atomic_store(&h->freed[0], 1); /* the consumer is done with chunk 0 */
    CHECK(hand_put(h, 5) == DSB_STREAM_TAKEN, "frame 5 once slot 0 is freed");
    CHECK(hand_put(h, 1) == DSB_STREAM_DUPLICATE,
          "frame 1 of chunk 0, gone from the ring: a duplicate");
    CHECK(hand_put(h, 6) == DSB_STREAM_NO_ROOM && dsb_stream_ring_window_waits(h->r) == 1,
          "frame 6: chunk 1 still not whole (no second wait)");
    CHECK(hand_put(h, 2) == DSB_STREAM_TAKEN && hand_put(h, 3) == DSB_STREAM_TAKEN &&
              atomic_load(&h->ready[1]) == 2,
          "chunk 1 whole: ready[1] = 2");
    CHECK(marked(h->buf + 2 * DSB_STREAM_FRAME, 2) && marked(h->buf + 3 * DSB_STREAM_FRAME, 3) &&
              marked(h->buf + DSB_STREAM_FRAME, 5),
          "chunk 1 in slot 1, frame 5 in slot 0's second place");
    atomic_store(&h->freed[1], 2);
    CHECK(hand_put(h, 7) == DSB_STREAM_TAKEN && hand_put(h, 6) == DSB_STREAM_TAKEN &&
              atomic_load(&h->ready[1]) == 4,
          "chunk 3 whole before chunk 2: ready[1] = 4");
    CHECK(hand_put(h, 8) == DSB_STREAM_NO_ROOM && dsb_stream_ring_window_waits(h->r) == 2,
          "frame 8 of chunk 4: chunk 2 not whole, beyond the window (a new stall, a new wait)");
    CHECK(hand_put(h, 4) == DSB_STREAM_TAKEN && atomic_load(&h->ready[0]) == 3,
          "chunk 2 whole: ready[0] = 3");
    atomic_store(&h->freed[0], 3);
    CHECK(hand_put(h, 8) == DSB_STREAM_TAKEN && atomic_load(&h->ready[0]) == 5 &&
              dsb_stream_ring_published(h->r) == 5,
          "the short last chunk whole with its one frame: ready[0] = 5, 5 chunks");
    CHECK(marked(h->buf, 8), "frame 8 in slot 0");
    CHECK(hand_put(h, 3) == DSB_STREAM_DUPLICATE && hand_put(h, 8) == DSB_STREAM_DUPLICATE,
          "any frame again: a duplicate");

    /* a second attempt (the consumer stopped after chunk 2): chunks 5.. of the run */
    CHECK(dsb_stream_ring_begin(h->r) == 5 && dsb_stream_ring_published(h->r) == 0,
          "the second attempt starts at chunk 5");
    CHECK(hand_put(h, 3) == DSB_STREAM_TAKEN && hand_put(h, 2) == DSB_STREAM_TAKEN &&
              atomic_load(&h->ready[0]) == 7,
          "its chunk 1 (the run's 6, slot 0) whole: ready[0] = 7, no wait for the old attempt");
    CHECK(hand_put(h, 0) == DSB_STREAM_TAKEN && hand_put(h, 1) == DSB_STREAM_TAKEN &&
              atomic_load(&h->ready[1]) == 6,
          "its chunk 0 (the run's 5, slot 1): ready[1] = 6");
    CHECK(hand_put(h, 5) == DSB_STREAM_NO_ROOM, "chunk 2 (the run's 7, slot 1): chunk 5 not freed");
    dsb_stream_ring_stop(h->r, 1);
    atomic_store(&h->freed[1], 6);
    CHECK(hand_put(h, 0) == DSB_STREAM_DUPLICATE, "stopped: a duplicate is still a duplicate");
    dsb_stream_ring_stop(h->r, 0);
    CHECK(hand_put(h, 5) == DSB_STREAM_TAKEN, "frame 5 once the run's chunk 5 is freed");
    CHECK(dsb_stream_ring_put(h->r, HT, h->fr[0]) == DSB_STREAM_NO_ROOM, "a frame beyond the pass");
    hand_teardown(h);
}

/* Direct placement by hand (hand_setup). */
static void test_reserve_by_hand(void)
{
    hand_fixture *h = hand_setup();
    if (!h) return;
    dsb_stream_ring_begin(h->r);
    uint8_t *p1 = dsb_stream_ring_reserve(h->r, 1);
    CHECK(p1 == h->buf + DSB_STREAM_FRAME, "frame 1 reserved: its place, slot 0's second");
    CHECK(dsb_stream_ring_reserve(h->r, 1) == NULL, "frame 1 again: reserved already, refused");
    double t0 = bench_now_s();
    CHECK(hand_put(h, 1) == DSB_STREAM_NO_ROOM && dsb_stream_ring_reserve_waits(h->r) == 1 &&
              bench_now_s() - t0 >= 0.04,
          "a put of the reserved frame waits for it (here past the 50-ms limit: no room)");
    memcpy(p1, h->fr[1], DSB_STREAM_FRAME); /* what the kernel's receive would do */
    dsb_stream_ring_commit(h->r, 1);
    CHECK(atomic_load(&h->ready[0]) == 0 && dsb_stream_ring_published(h->r) == 0,
          "frame 1 committed, chunk 0 not yet whole");
    CHECK(hand_put(h, 1) == DSB_STREAM_DUPLICATE && dsb_stream_ring_reserve(h->r, 1) == NULL,
          "frame 1 after its commit: a duplicate, not reservable");
    uint8_t *p0 = dsb_stream_ring_reserve(h->r, 0);
    CHECK(p0 == h->buf, "frame 0 reserved");
    if (p0) memset(p0, 0xee, DSB_STREAM_FRAME); /* another datagram landed there */
    dsb_stream_ring_release(h->r, 0);
    CHECK(atomic_load(&h->ready[0]) == 0, "released: nothing published");
    CHECK(hand_put(h, 0) == DSB_STREAM_TAKEN && atomic_load(&h->ready[0]) == 1 &&
              marked(h->buf, 0) && marked(h->buf + DSB_STREAM_FRAME, 1),
          "frame 0 put after the release: chunk 0 whole, both frames' bytes in place");
    t0 = bench_now_s();
    CHECK(dsb_stream_ring_reserve(h->r, 4) == NULL && dsb_stream_ring_waits(h->r) == 0 &&
              bench_now_s() - t0 < 0.04,
          "chunk 2 while slot 0 holds chunk 0 unconsumed: refused at once, no wait");
    CHECK(dsb_stream_ring_reserve(h->r, 6) == NULL && dsb_stream_ring_window_waits(h->r) == 0,
          "chunk 3 with chunk 1 empty: beyond the window, refused at once");
    atomic_store(&h->freed[0], 1);
    uint8_t *p5 = dsb_stream_ring_reserve(h->r, 5);
    CHECK(p5 == h->buf + DSB_STREAM_FRAME,
          "slot 0 freed: frame 5 reserved in slot 0's second place");
    uint8_t *p4 = dsb_stream_ring_reserve(h->r, 4);
    CHECK(p4 == h->buf, "frame 4 reserved too");
    if (p5) memcpy(p5, h->fr[5], DSB_STREAM_FRAME);
    dsb_stream_ring_commit(h->r, 5);
    dsb_stream_ring_release(h->r, 4);
    CHECK(hand_put(h, 4) == DSB_STREAM_TAKEN && atomic_load(&h->ready[0]) == 3 &&
              marked(h->buf, 4) && marked(h->buf + DSB_STREAM_FRAME, 5),
          "chunk 2 whole (one frame committed, one put): ready[0] = 3");
    CHECK(hand_put(h, 2) == DSB_STREAM_TAKEN && dsb_stream_ring_reserve(h->r, 2) == NULL &&
              dsb_stream_ring_reserve(h->r, 3) == h->buf + 3 * DSB_STREAM_FRAME,
          "chunk 1: frame 2 put, frame 3 reserved");
    memcpy(h->buf + 3 * DSB_STREAM_FRAME, h->fr[3], DSB_STREAM_FRAME);
    dsb_stream_ring_commit(h->r, 3);
    CHECK(atomic_load(&h->ready[1]) == 2 && marked(h->buf + 2 * DSB_STREAM_FRAME, 2) &&
              marked(h->buf + 3 * DSB_STREAM_FRAME, 3),
          "chunk 1 whole by a commit: ready[1] = 2");
    CHECK(dsb_stream_ring_reserve(h->r, HT) == NULL, "a frame beyond the pass: refused");
    /* a new attempt: the old stamps never match its chunks */
    CHECK(dsb_stream_ring_begin(h->r) == 5 && dsb_stream_ring_reserve(h->r, 7) == NULL,
          "the second attempt: its chunk 3 (slot 0, chunk 2 unfreed) refused at once");
    atomic_store(&h->freed[1], 2); /* begin's condition: the consumer is done with the old chunks */
    uint8_t *q0 = dsb_stream_ring_reserve(h->r, 0);
    CHECK(q0 == h->buf + 2 * DSB_STREAM_FRAME, "its frame 0 reserved (the run's chunk 5, slot 1)");
    if (q0) memcpy(q0, h->fr[0], DSB_STREAM_FRAME);
    dsb_stream_ring_commit(h->r, 0);
    CHECK(hand_put(h, 1) == DSB_STREAM_TAKEN && atomic_load(&h->ready[1]) == 6,
          "its chunk 0 whole: ready[1] = 6");
    hand_teardown(h);
}

/* Several threads put every frame twice (each frame's two copies in two
 * threads' shares), retrying what found no room; a consumer takes the chunks
 * in order, checks their bytes and frees them.  `direct`: a third of the
 * offers reserve the place first and write it there (committed), or, every
 * fifth of those, write another frame's bytes there and release it (a
 * datagram that was not the frame expected), then put. */
enum { MT_S = 4, MT_F = 8, MT_T = 1003, MT_THREADS = 4 };
typedef struct {
    dsb_stream_ring *r;
    uint32_t t;
    int direct;
    uint64_t taken, dups, no_room, committed, released;
} mt_arg;
static uint8_t mt_frames[MT_T][DSB_STREAM_FRAME];

static void *mt_put(void *arg)
{
    mt_arg *a = arg;
    uint64_t *todo = malloc(sizeof *todo * MT_T), n = 0;
    /* copy 1: f % THREADS == t; copy 2: (f + 1) % THREADS == t; in a scrambled order */
    for (uint64_t i = 0; i < MT_T; i++) {
        uint64_t f = (i * 389u + a->t * 97u) % MT_T;
        if (f % MT_THREADS == a->t || (f + 1u) % MT_THREADS == a->t) todo[n++] = f;
    }
    while (n) {
        uint64_t left = 0;
        for (uint64_t i = 0; i < n; i++) {
            const uint64_t f = todo[i];
            uint8_t *place = a->direct && (f + i) % 3u == 0 ? dsb_stream_ring_reserve(a->r, f) : NULL;
            if (place && (f / 3u + a->t) % 5u != 0) {
                memcpy(place, mt_frames[f], DSB_STREAM_FRAME);
                dsb_stream_ring_commit(a->r, f);
                a->taken++;
                a->committed++;
                continue;
            }
            if (place) { /* the wrong bytes landed there: given back, then put as usual */
                memcpy(place, mt_frames[(f + 1u) % MT_T], DSB_STREAM_FRAME);
                dsb_stream_ring_release(a->r, f);
                a->released++;
            }
            int got = dsb_stream_ring_put(a->r, todo[i], mt_frames[todo[i]]);
            if (got == DSB_STREAM_TAKEN) a->taken++;
            else if (got == DSB_STREAM_DUPLICATE) a->dups++;
            else {
                a->no_room++;
                todo[left++] = todo[i];
            }
        }
        n = left;
        if (n) cm_sleep_s(1e-4);
    }
    free(todo);
    return NULL;
}

typedef struct {
    dsb_stream_ring *r;
    uint8_t *buf;
    _Atomic uint64_t *ready, *freed;
    uint64_t base, good, chunks;
} mt_consumer;

static void *mt_consume(void *arg)
{
    mt_consumer *c = arg;
    const uint64_t cpp = dsb_stream_ring_chunks(c->r);
    for (uint64_t q = 0; q < cpp; q++) {
        const uint64_t Q = c->base + q;
        const uint32_t s = (uint32_t)(Q % MT_S);
        while (atomic_load(&c->ready[s]) < Q + 1u) cm_sleep_s(2e-5);
        for (uint64_t j = 0; j < dsb_stream_ring_chunk_size(c->r, q); j++)
            c->good += marked(c->buf + ((uint64_t)s * MT_F + j) * DSB_STREAM_FRAME, q * MT_F + j);
        atomic_store(&c->freed[s], Q + 1u);
        c->chunks++;
    }
    return NULL;
}

static void test_threads(int direct)
{
    static uint8_t buf[MT_S * MT_F * DSB_STREAM_FRAME];
    _Atomic uint64_t fl[2 * MT_S];
    dsb_stream_ring *r = NULL;
    cm_err e = {{0}};
    dsb_stream_ring_cfg c = {buf, fl, fl + MT_S, MT_S, MT_F, MT_T, 10.0, 0};
    CHECK(dsb_stream_ring_create(&c, &r, &e) == 0, "create: %s", e.msg);
    if (!r) return;
    for (uint64_t f = 0; f < MT_T; f++) mark(mt_frames[f], f);
    for (int attempt = 0; attempt < 2; attempt++) { /* twice: the second on a new base */
        mt_consumer mc = {r, buf, fl, fl + MT_S, dsb_stream_ring_begin(r), 0, 0};
        pthread_t ct;
        pthread_create(&ct, NULL, mt_consume, &mc);
        mt_arg args[MT_THREADS];
        memset(args, 0, sizeof args);
        for (uint32_t t = 0; t < MT_THREADS; t++) args[t] = (mt_arg){r, t, direct, 0, 0, 0, 0, 0};
        cm_run_threads(MT_THREADS, mt_put, args, sizeof args[0]);
        pthread_join(ct, NULL);
        uint64_t taken = 0, dups = 0, no_room = 0, committed = 0, released = 0;
        for (uint32_t t = 0; t < MT_THREADS; t++) {
            taken += args[t].taken;
            dups += args[t].dups;
            no_room += args[t].no_room;
            committed += args[t].committed;
            released += args[t].released;
        }
        if (direct)
            CHECK(committed > 0 && released > 0, "attempt %d: %llu frames written in place and "
                  "committed, %llu places released", attempt, (unsigned long long)committed,
                  (unsigned long long)released);
        CHECK(taken == MT_T && dups == MT_T, "attempt %d%s: %llu taken, %llu duplicates of %u "
              "frames put twice (%llu no room, retried)", attempt, direct ? " (direct)" : "",
              (unsigned long long)taken,
              (unsigned long long)dups, MT_T, (unsigned long long)no_room);
        CHECK(mc.chunks == (MT_T + MT_F - 1) / MT_F && mc.good == MT_T,
              "attempt %d: the consumer found %llu of %u frames in place in %llu chunks", attempt,
              (unsigned long long)mc.good, MT_T, (unsigned long long)mc.chunks);
        CHECK(dsb_stream_ring_published(r) == (MT_T + MT_F - 1) / MT_F,
              "attempt %d: every chunk published once", attempt);
        fprintf(stderr, "threads%s, attempt %d: %llu puts found no room and were retried, %llu "
                        "waited for a slot, %llu for a reserved place\n",
                direct ? " (direct)" : "", attempt, (unsigned long long)no_room,
                (unsigned long long)dsb_stream_ring_waits(r),
                (unsigned long long)dsb_stream_ring_reserve_waits(r));
    }
    dsb_stream_ring_free(r);
}

/* ---- the CPU's ring sink, driven by hand ------------------------------------------ */

#define MAXP 8u
#define MAXB 4u
typedef struct {
    uint32_t count, B;
    int64_t e[MAXP][MAXB];
    uint64_t c[MAXP][MAXB];
} recs;

static int keep(const dsb_stream_record *r, void *ctx)
{
    recs *k = ctx;
    if (k->count >= MAXP) return 1;
    for (uint32_t b = 0; b < k->B && b < MAXB; b++) {
        k->e[k->count][b] = r->energy2[b];
        k->c[k->count][b] = r->checksum[b];
    }
    k->count++;
    return 0;
}

/* Pass after pass, the frames in a scrambled order (neighbours swapped), every
 * fifth put twice; on pass lose_pass the first attempt skips frame lose_frame
 * and is discarded.  That attempt is offered once, as a receiver would: the
 * frames of chunks S or more after the lost frame's chunk c find no room, so
 * min(T, (c + S) F) - 1 frames are taken, and the consumer takes chunks
 * 0 .. c-1 before it is stopped.  Otherwise a put that finds no room is
 * offered again after the others. */
static void sink_case(dsb_stream_instance inst, uint32_t n, uint32_t B, uint32_t K, uint64_t F,
                      uint64_t bytes, uint32_t lose_pass, uint64_t lose_frame)
{
    dsb_stream_params p;
    dsb_stream_params_default(&p);
    p.instance = inst;
    p.n = n;
    p.replicas = B;
    p.updates = K;
    const uint64_t T = dsb_stream_frames(n);
    char what[96];
    snprintf(what, sizeof what, "ring sink n=%u B=%u K=%u F=%llu", n, B, K, (unsigned long long)F);
    cm_err e = {{0}};
    dsb_stream_state *s = NULL;
    dsb_stream_ring_sink *k = NULL;
    CHECK(dsb_stream_state_create(&p, &s, &e) == 0, "%s: state: %s", what, e.msg);
    CHECK(dsb_stream_ring_sink_open(s, &p, bytes, F, &k, &e) == 0, "%s: open: %s", what, e.msg);
    if (!s || !k) return;
    dsb_stream_sink sink;
    dsb_stream_ring_sink_get(k, &sink);
    CHECK(sink.dedup && sink.concurrent, "%s: the sink dedups and takes concurrent frames", what);
    uint32_t S = 0;
    uint64_t Fr = 0;
    { /* the ring's shape, for the expectations of the lossy attempt */
        dsb_stream_ring_sink_stats st0;
        dsb_stream_ring_sink_stats_get(k, &st0);
        S = st0.slots;
        Fr = st0.chunk_frames;
    }
    const uint64_t lc = lose_frame / (Fr ? Fr : 1u);
    const uint64_t lose_taken = ((lc + S) * Fr < T ? (lc + S) * Fr : T) - 1u;
    uint32_t *eta = dsb_stream_eta_bitmap(&p);
    uint8_t *frames = malloc(T * DSB_STREAM_FRAME);
    uint64_t *order = malloc(2 * T * sizeof *order);
    recs got = {0};
    got.B = B;
    dsb_stream_record rec;
    dsb_stream_record_init(&rec, B);
    uint64_t taken_total = 0, dups_total = 0, no_room_total = 0, discards = 0;
    int ok = 1;
    for (uint32_t pass = 0; pass <= K && ok; pass++) {
        for (uint64_t f = 0; f < T; f++)
            dsb_stream_build_frame(frames + f * DSB_STREAM_FRAME, &p, eta, pass,
                                   (uint32_t)(f % n), (uint32_t)(f / n), 0, f);
        for (int attempt = 0; attempt < 2; attempt++) {
            const int lose = attempt == 0 && pass == lose_pass;
            /* the order: frames swapped in pairs a window apart, every fifth twice */
            uint64_t m = 0;
            for (uint64_t f = 0; f < T; f++) {
                uint64_t g = (f ^ 1u) < T ? f ^ 1u : f;
                if (lose && g == lose_frame) continue;
                order[m++] = g;
                if (f % 5u == 0) order[m++] = g;
            }
            uint64_t taken = 0;
            for (int round = 0; round < (lose ? 1 : 1000) && m; round++) { /* no room: again later */
                uint64_t left = 0;
                for (uint64_t i = 0; i < m; i++) {
                    uint64_t g = order[i];
                    int r = sink.frame(sink.ctx, (uint32_t)(g % n), (uint32_t)(g / n),
                                       frames + g * DSB_STREAM_FRAME);
                    if (r == DSB_STREAM_TAKEN) taken++;
                    else if (r == DSB_STREAM_DUPLICATE) dups_total++;
                    else {
                        no_room_total++;
                        order[left++] = g;
                    }
                }
                m = left;
                if (m) cm_sleep_s(1e-3);
            }
            taken_total += taken;
            if (lose) { /* part of the pass was consumed: discard, then the pass again */
                CHECK(taken == lose_taken, "%s: pass %u's first attempt took %llu (expected %llu)",
                      what, pass, (unsigned long long)taken, (unsigned long long)lose_taken);
                CHECK(sink.end_pass(sink.ctx, pass, pass < K, &rec, &e) == -1 &&
                          strstr(e.msg, "chunks whole"),
                      "%s: a pass short of a frame cannot end: %s", what, e.msg);
                sink.discard(sink.ctx);
                discards++;
                continue;
            }
            CHECK(taken == T && m == 0, "%s: pass %u took %llu of %llu frames", what, pass,
                  (unsigned long long)taken, (unsigned long long)T);
            if (sink.end_pass(sink.ctx, pass, pass < K, &rec, &e)) {
                CHECK(0, "%s: pass %u: %s", what, pass, e.msg);
                ok = 0;
                break;
            }
            CHECK(rec.frames == T && rec.bad_frames == 0, "%s: pass %u: the consumer took %llu",
                  what, pass, (unsigned long long)rec.frames);
            keep(&rec, &got);
            break;
        }
    }
    dsb_stream_ring_sink_stats st;
    dsb_stream_ring_sink_stats_get(k, &st);
    dsb_stream_ring_sink_close(k);
    dsb_stream_state_free(s);
    dsb_stream_record_free(&rec);
    free(eta);
    free(frames);
    free(order);

    recs ref = {0};
    ref.B = B;
    CHECK(dsb_stream_run_cpu(&p, 2, 0, keep, &ref, &e) == 0, "%s: reference: %s", what, e.msg);
    int same = got.count == K + 1 && ref.count == K + 1;
    for (uint32_t i = 0; same && i <= K; i++)
        for (uint32_t b = 0; b < B; b++)
            same &= got.e[i][b] == ref.e[i][b] && got.c[i][b] == ref.c[i][b];
    CHECK(same, "%s: %u records equal the CPU reference's", what, got.count);
    const uint64_t want_taken = (uint64_t)(K + 1u) * T + (lose_pass <= K ? lose_taken : 0u);
    const uint64_t want_consumed = (uint64_t)(K + 1u) * T + (lose_pass <= K ? lc * Fr : 0u);
    CHECK(taken_total == want_taken && dups_total > 0,
          "%s: %llu frames taken (expected %llu), %llu duplicates, %llu no room", what,
          (unsigned long long)taken_total, (unsigned long long)want_taken,
          (unsigned long long)dups_total, (unsigned long long)no_room_total);
    CHECK(st.frames_consumed == want_consumed && st.bad_frames == 0 &&
              st.attempts_stopped == discards,
          "%s: the consumer took %llu frames (expected %llu; %llu bad), stopped %llu attempts of "
          "%llu discarded",
          what, (unsigned long long)st.frames_consumed, (unsigned long long)want_consumed,
          (unsigned long long)st.bad_frames, (unsigned long long)st.attempts_stopped,
          (unsigned long long)discards);
    CHECK(st.slots * st.chunk_frames * DSB_STREAM_FRAME <= (bytes ? bytes : 64ull << 20) &&
              (F == 0 || st.chunk_frames == F),
          "%s: the ring (%u x %llu frames) within its bytes", what, st.slots,
          (unsigned long long)st.chunk_frames);
}

int main(void)
{
    test_shape();
    test_put_by_hand();
    test_reserve_by_hand();
    test_threads(0);
    test_threads(1);
    /* a ring of 2 chunks of 3 frames (6 frames) for passes of 33 and 70 frames */
    sink_case(DSB_STREAM_MATTIS, 33, 3, 3, 3, 6 * DSB_STREAM_FRAME, 1, 20);
    sink_case(DSB_STREAM_RANDOM, 70, 4, 2, 3, 6 * DSB_STREAM_FRAME, 2, 69); /* the last frame lost */
    sink_case(DSB_STREAM_RANDOM, 70, 2, 2, 3, 6 * DSB_STREAM_FRAME, 0, 0);  /* the first */
    /* the default shape for a pass of 2 column blocks (33000 x 2 frames), no loss */
    sink_case(DSB_STREAM_MATTIS, 33000, 2, 1, 0, 4ull << 20, 99, 0);
    return check_done();
}
