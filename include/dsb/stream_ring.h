/* A bounded ring of chunks for received stream frames (seed 000, Sec. VIII-B;
 * the network source of include/dsb/stream_net.h).  Pure C: the receiver's
 * side, shared by the GPU's sink (include/dsb/stream_gpu.h, the consumer is
 * the consume kernel reading pinned, mapped host memory) and the CPU's
 * (dsb_stream_ring_sink below, the consumer a thread of its own).
 *
 * Geometry.  A pass of T frames (column-block-major, f = block n + row) is
 * cut into chunks of F frames (chunk q holds frames q F .. q F + F - 1; the
 * last one may be short).  The ring has S >= 2 slots of F frames.  Chunks are
 * numbered run-wide: an attempt at a pass starts at a `base`
 * (dsb_stream_ring_begin) and its chunk q is the run's chunk Q = base + q, in
 * slot Q mod S.
 * Every later attempt (the same pass sent again, or the next pass) takes a
 * base past all earlier chunks, so a flag left by an earlier attempt never
 * matches a chunk of this one.
 *
 * Flags (each written by one side only; 64-bit words, the GPU's in mapped
 * host memory):
 *   ready[s] = Q + 1   the receiver: every frame of chunk Q is in slot s;
 *   freed[s] = Q + 1   the consumer: it is done with chunk Q, slot s may be
 *                      refilled.
 * The consumer takes the chunks of an attempt as they become ready; the
 * receiver fills a slot with chunk q only when chunk q - S, the one before
 * it in the slot, is whole and freed.  So at most S chunks are in flight.
 *
 * dsb_stream_ring_put places one frame (any thread; several at once):
 *   TAKEN      copied into its chunk's slot; the copy that completes a chunk
 *              publishes it (ready);
 *   DUPLICATE  that frame of this attempt is already in (or was consumed:
 *              its chunk is whole, since a chunk is only left when whole) —
 *              exact, per frame, with O(S F) state, not a bitmap of the pass;
 *   NO_ROOM    its chunk is S or more chunks ahead of the oldest chunk not
 *              yet whole (that chunk lacks a frame: lost, or still on its
 *              way) and stays so for window_wait_s (waited once for each
 *              position of the oldest chunk: then such frames are refused at
 *              once), or the consumer did not free the slot within the wait
 *              limit.  The frame is not taken; the attempt will lack it and
 *              the receiver asks for the pass again.  Nothing waits long for
 *              a frame that may never come.
 *
 * A lost frame: its chunk never becomes whole, so the consumer never passes
 * it, the chunks S and more after it find no room, and at the end of the
 * attempt the receiver sees frames missing.  Everything the consumer took of
 * the attempt is in the pass's mismatch counters only; the state (x, y,
 * signs) changes only at the end of a pass that consumed every frame, so
 * discarding the attempt (counters cleared, consumer stopped) leaves the
 * state as it was before the pass.  See docs/perf/NOTES-stream.md. */
#ifndef DSB_STREAM_RING_H
#define DSB_STREAM_RING_H

#include <stdatomic.h>
#include <stdint.h>

#include "common/error.h"
#include "dsb/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DSB_STREAM_RING_DEFAULT_BYTES (64ull << 20) /* 16 chunks of 4 MiB */
#define DSB_STREAM_RING_TARGET_SLOTS 16u
#define DSB_STREAM_RING_MAX_SLOTS 65536u

/* The ring's shape for a buffer of `bytes`: chunks of F frames, F a multiple
 * of `unit` (the GPU consumes whole work units of 128 frames; the CPU any
 * unit >= 1), about DSB_STREAM_RING_TARGET_SLOTS of them, never more slots
 * than the pass has chunks, at least 2.  Fails (message) when `bytes` holds
 * fewer than 2 chunks of `unit` frames. */
int dsb_stream_ring_shape(uint64_t bytes, uint64_t frames_per_pass, uint32_t unit,
                          uint32_t *slots, uint64_t *chunk_frames, cm_err *err);

typedef struct {
    uint8_t *buf;            /* slots x chunk_frames x 4096 bytes (the GPU's: pinned, mapped) */
    _Atomic uint64_t *ready; /* slots words, written here */
    _Atomic uint64_t *freed; /* slots words, written by the consumer */
    uint32_t slots;          /* S, 2 .. DSB_STREAM_RING_MAX_SLOTS */
    uint64_t chunk_frames;   /* F >= 1 */
    uint64_t frames;         /* T: frames a pass */
    double wait_limit_s;     /* how long a put waits for the consumer to free a slot
                                (0: 2 s); beyond it the frame finds no room */
    double window_wait_s;    /* how long a frame beyond the window waits for it to move
                                (0: 50 ms; < 0: not at all) */
} dsb_stream_ring_cfg;

typedef struct dsb_stream_ring dsb_stream_ring;

/* Checks the configuration (message on a bad one) and allocates the ring's
 * own bookkeeping (O(S F) words); the flags are zeroed. */
int dsb_stream_ring_create(const dsb_stream_ring_cfg *c, dsb_stream_ring **out, cm_err *err);
void dsb_stream_ring_free(dsb_stream_ring *r);
/* Starts the next attempt and returns its base: chunk q of the pass is the
 * run's chunk base + q (the first attempt's base is 0, each later one's the
 * previous base + chunks a pass).  The consumer must be done with (or stopped
 * before) every chunk of earlier attempts.  Not concurrent with puts. */
uint64_t dsb_stream_ring_begin(dsb_stream_ring *r);
/* Places frame f (0 .. T-1) of the attempt: DSB_STREAM_TAKEN, _DUPLICATE or
 * _NO_ROOM (dsb/stream.h).  Thread-safe. */
int dsb_stream_ring_put(dsb_stream_ring *r, uint64_t f, const uint8_t *frame);
/* Direct placement: a receiver that lets the kernel write a datagram straight
 * into its place in the ring (include/dsb/stream_net.h) reserves the place of
 * frame f of the attempt, receives into it, then commits (the place holds
 * frame f, checked by the caller: published like a put) or releases it (it
 * does not: its bytes are ignored and the place is free again).  reserve
 * never waits: NULL when the frame is in already (or reserved), or its chunk
 * cannot take its slot now (beyond the window, the slot not yet freed); such
 * a datagram is received elsewhere and put.  A put of a reserved frame waits
 * for the commit or release (up to the wait limit, then NO_ROOM), and commit
 * and release never wait, so a caller must commit or release everything it
 * reserved before it puts anything.  Thread-safe, like put; not concurrent
 * with begin (no reservation may be left at an attempt's end). */
uint8_t *dsb_stream_ring_reserve(dsb_stream_ring *r, uint64_t f);
void dsb_stream_ring_commit(dsb_stream_ring *r, uint64_t f);
void dsb_stream_ring_release(dsb_stream_ring *r, uint64_t f);
uint64_t dsb_stream_ring_reserve_waits(const dsb_stream_ring *r); /* puts that waited for one */
/* Makes puts that wait for a slot give up at once (NO_ROOM) while set. */
void dsb_stream_ring_stop(dsb_stream_ring *r, int stop);
uint64_t dsb_stream_ring_base(const dsb_stream_ring *r);
uint64_t dsb_stream_ring_chunks(const dsb_stream_ring *r);     /* chunks a pass */
uint64_t dsb_stream_ring_published(const dsb_stream_ring *r); /* of this attempt */
uint64_t dsb_stream_ring_waits(const dsb_stream_ring *r);     /* puts that waited for a slot */
uint64_t dsb_stream_ring_window_waits(const dsb_stream_ring *r); /* ... for the window to move */
/* Frames of chunk q of a pass (F, or fewer for the last). */
uint64_t dsb_stream_ring_chunk_size(const dsb_stream_ring *r, uint64_t q);

/* ---- the CPU's ring sink ----------------------------------------------------------
 * The receiver's threads put frames into a ring in ordinary memory; one
 * consumer thread takes each chunk as soon as it is whole (in chunk order),
 * checks its frames again (dsb_stream_consume: the pass, the run id, the
 * wire check) and accumulates them into the CPU state s, then frees the slot.
 * end_pass waits for the consumer to finish the attempt, then ends the pass
 * on s (dsb_stream_end_pass); discard stops the consumer and clears the
 * pass's counters (dsb_stream_discard_pass).  The sink dedups and may be
 * called from several receiving threads.  bytes: the ring (0: the default
 * 64 MiB); chunk_frames 0: dsb_stream_ring_shape's with unit 1, else F (and
 * S = bytes / (4096 F), at least 2). */
typedef struct dsb_stream_ring_sink dsb_stream_ring_sink;
int dsb_stream_ring_sink_open(dsb_stream_state *s, const dsb_stream_params *p, uint64_t bytes,
                              uint64_t chunk_frames, dsb_stream_ring_sink **out, cm_err *err);
void dsb_stream_ring_sink_get(dsb_stream_ring_sink *k, dsb_stream_sink *sink);
/* What the consumer saw (for tests and reports). */
typedef struct {
    uint32_t slots;
    uint64_t chunk_frames;
    uint64_t chunks_consumed;  /* all attempts */
    uint64_t frames_consumed;  /* all attempts, discarded ones included */
    uint64_t bad_frames;       /* failed the consumer's check */
    uint64_t attempts_stopped; /* discards that stopped the consumer in an attempt */
    uint64_t slot_waits;       /* puts that waited for the consumer */
} dsb_stream_ring_sink_stats;
void dsb_stream_ring_sink_stats_get(dsb_stream_ring_sink *k, dsb_stream_ring_sink_stats *st);
void dsb_stream_ring_sink_close(dsb_stream_ring_sink *k);

#ifdef __cplusplus
}
#endif

#endif /* DSB_STREAM_RING_H */
