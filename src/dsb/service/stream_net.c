/* The streaming solver's network source: receiver and generator over a dsb
 * transport (include/dsb/stream_net.h; the frames in include/dsb/wire.h). */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/filter.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>

#include "common/bench.h"
#include "common/threads.h"
#include "dsb/stream_net.h"
#include "dsb/stream_ring.h"
#include "transport_internal.h"

#define NET_BATCH DSB_TRANSPORT_BATCH
#define NET_FRAME_CAP (DSB_STREAM_FRAME + 64u) /* a longer datagram shows as oversize */

void dsb_stream_net_opts_default(dsb_stream_net_opts *o)
{
    memset(o, 0, sizeof *o);
    o->idle_s = 1.0;
    o->timeout_s = 30.0;
    o->queues = 1;
    dsb_stream_rate_policy_default(&o->rate);
}

/* Ethernet addresses of an outgoing frame: the transport's peer and own MAC
 * (zero over UDP). */
static void set_macs(uint8_t *frame, const dsb_transport *t, const uint8_t *dst)
{
    memcpy(frame, dst ? dst : t->peer_mac, 6);
    memcpy(frame + 6, t->mac, 6);
}

/* One header-sized message (an answer, a PASS_END) to `to`. */
static void send_header(dsb_transport *t, uint8_t *hdr, const dsb_peer *to)
{
    dsb_frame f = {.data = hdr, .cap = DSB_WIRE_HDR_BYTES, .len = DSB_WIRE_HDR_BYTES, .peer = *to};
    t->send(t, &f, 1);
}

/* ---- receiver ------------------------------------------------------------------
 *
 * `threads` receiving threads take datagrams from the one socket (shared:
 * thread 0 through the transport, the others with their own recvmmsg on its
 * fd), or each from a socket of its own in the port's SO_REUSEPORT group
 * (hash, queue: udp only).  A thread waits for its socket to be readable with
 * no lock held, then takes the read side of `gate`, takes a batch without
 * waiting and hands its frames to the sink, and only then lets the gate go: a
 * datagram is never out of a socket without a read side held for it.
 * Everything a PASS_END does (the attempt's bookkeeping, ending or discarding
 * a pass, the answer) runs under the write side.  A queue's PASS_END follows
 * its frames in one socket (one socket for all; or, with a socket a thread,
 * the socket its flow is spread to: the same for its frames and its ends, by
 * the 4-tuple's hash or by the queue field), every frame sent before it left
 * that socket before it, under some thread's read side, and the write side
 * waits for all of them: the end of an attempt sees every frame of it.  (The
 * first version took the batch before the read side: a thread holding an
 * attempt's last frames in its hands let the attempt end short of them,
 * which the GPU test caught as an attempt sent again and duplicates.)
 *
 * Direct placement (a socket a thread, a sink with a ring, not recv_copy):
 * the datagrams of one queue come to one socket in the order sent, frames
 * f, f + Q, f + 2Q, ..., so a thread expects the continuation of the last
 * frame it took (Q learnt as the smallest gap between two frames of one queue
 * it saw in a row).  Before a batch it reserves the places of up to `pm`
 * expected frames (dsb_stream_ring_reserve, no waiting) and points those
 * entries of the recvmmsg there; after it, every such entry that holds
 * exactly the frame expected, whole and good, is committed (no copy), and
 * every other one is copied out to the thread's own buffer and its place
 * released — all before any put, since a put waits for another thread's
 * reservation — and then handled as any datagram.  `pm` doubles while the
 * guesses hold and falls to twice the run of good guesses when one fails
 * (several flows in one socket interleave), so a wrong guess costs a copy
 * more, on a few entries a batch at most. */

#define NO_FRAME UINT64_MAX

typedef struct {
    const dsb_stream_params *p;
    const dsb_stream_net_opts *o;
    dsb_transport *t;        /* socket 0: the answers go out through it */
    const dsb_stream_sink *sink;
    struct dsb_stream_ring *ring; /* direct placement into it, or NULL */
    uint32_t run_id, threads, mode;
    uint64_t T;
    _Atomic uint64_t *seen; /* T bits: taken in this attempt (sinks without dedup), else NULL */
    pthread_rwlock_t gate;
    /* written under the gate's write side, read under either side */
    uint32_t pass, attempt;
    uint16_t queue_count;   /* of this attempt's PASS_ENDs, 0 before the first */
    uint64_t ends_mask;     /* queues whose PASS_END arrived */
    uint64_t sent;          /* frames the queues say they sent (PASS_END) */
    uint8_t last_ack[DSB_WIRE_HDR_BYTES]; /* the latest answer, for late PASS_ENDs */
    int have_ack;
    uint32_t ack_pass;      /* the pass last_ack answers */
    uint32_t acks_dropped;  /* by the test hook (o->drop_acks) */
    dsb_stream_record rec;
    dsb_stream_pass_fn on_pass;
    void *ctx;
    dsb_stream_net_stats *st; /* the answers' counts (under the write side) */
    /* counted by any thread */
    _Atomic uint64_t unique;      /* frames taken in this attempt */
    _Atomic uint64_t bad_in_attempt;
    _Atomic uint64_t t_first, t_last; /* ns of the attempt's first and last frame (0: none) */
    _Atomic uint64_t run_first;   /* ns of the run's first frame */
    _Atomic uint64_t last_any;    /* ns of the latest datagram */
    _Atomic uint64_t done_at;     /* ns of the final answer, 0 before */
    _Atomic int stop;
    pthread_mutex_t err_mu;
    int rc;
    cm_err *err;
    int progress;
    bench_progress_t bar;
} recv_t;

typedef struct {
    recv_t *r;
    uint32_t idx;
    dsb_transport *t;        /* the socket this thread takes datagrams from */
    dsb_frame *fr;           /* NET_BATCH entries; during a batch some may point into the ring */
    uint8_t *own[NET_BATCH]; /* the entries' own buffers (NET_FRAME_CAP bytes each) */
    /* direct placement */
    uint64_t rsv[NET_BATCH]; /* the frame whose place entry i was pointed at, or NO_FRAME */
    uint64_t last_f;         /* the last good frame of (pass, attempt) taken, NO_FRAME: none */
    uint32_t last_pass, last_attempt;
    uint16_t last_queue;
    uint64_t stride;         /* the smallest gap between two frames of one queue in a row */
    uint32_t pm;             /* places to reserve for the next batch */
    dsb_stream_net_stats st; /* this thread's counts, summed at the end */
} rthread_t;

const char *dsb_stream_recv_mode_name(dsb_stream_recv_mode m)
{
    return m == DSB_STREAM_RECV_HASH ? "hash" : m == DSB_STREAM_RECV_QUEUE ? "queue" : "shared";
}

int dsb_stream_recv_mode_parse(const char *s)
{
    if (!s) return -1;
    if (!strcmp(s, "shared")) return DSB_STREAM_RECV_SHARED;
    if (!strcmp(s, "hash")) return DSB_STREAM_RECV_HASH;
    if (!strcmp(s, "queue")) return DSB_STREAM_RECV_QUEUE;
    return -1;
}

/* The first failure stops every thread; its message is the run's. */
static void recv_fail(recv_t *r, const cm_err *e)
{
    pthread_mutex_lock(&r->err_mu);
    if (r->rc == 0) {
        r->rc = -1;
        if (r->err && e) *r->err = *e;
    }
    pthread_mutex_unlock(&r->err_mu);
    atomic_store(&r->stop, 1);
}

static void reset_attempt(recv_t *r)
{
    if (r->seen)
        for (uint64_t w = 0; w < (r->T + 63u) / 64u; w++) atomic_store(&r->seen[w], 0);
    atomic_store(&r->unique, 0);
    atomic_store(&r->bad_in_attempt, 0);
    r->queue_count = 0;
    r->ends_mask = 0;
    r->sent = 0;
    atomic_store(&r->t_first, 0);
    atomic_store(&r->t_last, 0);
}

/* Under the write side: the latest answer (again) to the sender of `to`.  The
 * test hook loses the first o->drop_acks answers to pass o->hook_pass on the
 * way: sent, as far as the receiver knows. */
static void send_last_ack(recv_t *r, const dsb_frame *to)
{
    r->st->acks++;
    if (r->ack_pass == r->o->hook_pass && r->acks_dropped < r->o->drop_acks) {
        r->acks_dropped++;
        return;
    }
    send_header(r->t, r->last_ack, &to->peer);
}

static void send_ack(recv_t *r, const dsb_frame *to, uint32_t pass, uint16_t action)
{
    /* back to the sender's MAC (zero over UDP) */
    dsb_wire_build_stream_ack(r->last_ack, sizeof r->last_ack, to->data + 6, r->t->mac,
                              r->run_id, r->p->n, pass, action, r->attempt,
                              atomic_load(&r->unique));
    r->have_ack = 1;
    r->ack_pass = pass;
    send_last_ack(r, to);
}

static void count_bad(rthread_t *a, dsb_wire_reason why)
{
    a->st.bad++;
    a->st.bad_reason[why < DSB_WR_COUNT ? why : 0]++;
    atomic_fetch_add(&a->r->bad_in_attempt, 1);
}

/* *first = now if no time is there yet (0); any thread may race to set it. */
static void note_first(_Atomic uint64_t *first, uint64_t now)
{
    uint64_t z = 0;
    if (atomic_load(first) == 0) atomic_compare_exchange_strong(first, &z, now);
}

static void note_time(_Atomic uint64_t *first, _Atomic uint64_t *last, uint64_t now)
{
    if (first) note_first(first, now);
    uint64_t l = atomic_load(last);
    while (l < now && !atomic_compare_exchange_weak(last, &l, now)) {
    }
}

/* A STREAM frame came at `now`: the attempt's first and last frame, the run's first. */
static void note_stream_time(recv_t *r, uint64_t now)
{
    note_time(&r->t_first, &r->t_last, now);
    note_first(&r->run_first, now);
}

/* The message type of a datagram received whole (0: truncated, or too short for a type). */
static uint8_t whole_frame_type(const dsb_frame *f)
{
    return !f->truncated && f->len > DSB_WIRE_ETH_BYTES ? f->data[DSB_WIRE_ETH_BYTES] : 0u;
}

/* A good frame f of queue q of the attempt in progress was in this thread's
 * batch (taken or not): what the next batch expects. */
static void learn(rthread_t *a, uint64_t f, uint16_t q)
{
    const recv_t *r = a->r;
    if (a->last_f != NO_FRAME && a->last_pass == r->pass && a->last_attempt == r->attempt &&
        a->last_queue == q && f > a->last_f && (a->stride == 0 || f - a->last_f < a->stride))
        a->stride = f - a->last_f;
    a->last_f = f;
    a->last_queue = q;
    a->last_pass = r->pass;
    a->last_attempt = r->attempt;
}

/* Under the gate's read side. */
static void on_stream(rthread_t *a, const dsb_frame *f)
{
    recv_t *r = a->r;
    dsb_wire_stream v;
    dsb_wire_reason why = dsb_wire_stream_check(f->data, f->len, r->p->n, r->pass, &v);
    if (why == DSB_WR_WRONG_PASS && v.pass < r->pass) {
        a->st.stale++; /* a straggler of a pass already answered */
        return;
    }
    if (why == DSB_WR_NONE && v.request_id != r->run_id) why = DSB_WR_WRONG_RUN;
    if (why != DSB_WR_NONE) {
        count_bad(a, why);
        return;
    }
    const uint64_t fi = (uint64_t)v.block * r->p->n + v.row, bit = 1ull << (fi % 64u);
    if (r->ring) learn(a, fi, v.queue);
    if (r->seen && (atomic_fetch_or(&r->seen[fi / 64u], bit) & bit)) {
        a->st.duplicates++;
        return;
    }
    int got = r->sink->frame(r->sink->ctx, v.row, v.block, f->data);
    if (got == DSB_STREAM_TAKEN) {
        atomic_fetch_add(&r->unique, 1);
        a->st.frames++;
        return;
    }
    if (r->seen) atomic_fetch_and(&r->seen[fi / 64u], ~bit); /* not taken: may come again */
    if (got == DSB_STREAM_DUPLICATE) a->st.duplicates++;
    else a->st.ring_full++;
}

/* Under the gate's write side: every frame taken before is with the sink. */
static void on_pass_end(rthread_t *a, const dsb_frame *f, uint64_t now)
{
    recv_t *r = a->r;
    dsb_wire_pass_end v;
    dsb_wire_reason why = dsb_wire_pass_end_check(f->data, f->len, r->p->n, &v);
    if (why == DSB_WR_NONE && v.request_id != r->run_id) why = DSB_WR_WRONG_RUN;
    if (why == DSB_WR_NONE && v.queue_count > DSB_STREAM_MAX_QUEUES) why = DSB_WR_BAD_QUEUE;
    if (why != DSB_WR_NONE) {
        count_bad(a, why);
        return;
    }
    const int done = atomic_load(&r->done_at) != 0;
    /* an earlier pass, or an earlier attempt of this one (a PASS_END that came late,
     * or a generator that did not hear our RESEND): our answer was lost, say it again */
    if (v.pass < r->pass || done || (v.pass == r->pass && v.attempt < r->attempt)) {
        a->st.stale++;
        a->st.end_resends++; /* every queue's end of that attempt came before this one */
        if (r->have_ack) send_last_ack(r, f);
        return;
    }
    if (v.pass > r->pass || v.attempt > r->attempt) { /* ahead of anything we answered */
        count_bad(a, DSB_WR_WRONG_PASS);
        return;
    }
    if (r->queue_count && v.queue_count != r->queue_count) {
        count_bad(a, DSB_WR_BAD_QUEUE);
        return;
    }
    r->queue_count = v.queue_count;
    if (r->ends_mask >> v.queue & 1u) { /* this queue's end came before: nothing new */
        a->st.end_resends++;
        return;
    }
    r->ends_mask |= 1ull << v.queue;
    r->sent += v.frames;
    if (r->ends_mask != (v.queue_count == 64 ? ~0ull : (1ull << v.queue_count) - 1u)) return;
    /* every queue has closed the pass */
    const uint64_t unique = atomic_load(&r->unique);
    if (unique != r->T) {
        r->st->resends++;
        r->st->missing += r->T - unique;
        r->st->not_sent += r->sent < r->T ? r->T - r->sent : 0u;
        r->sink->discard(r->sink->ctx); /* ready for the next attempt before asking for it */
        send_ack(r, f, r->pass, DSB_STREAM_RESEND);
        r->attempt++;
        reset_attempt(r);
        return;
    }
    const uint32_t K = r->p->updates;
    cm_err e = {{0}};
    if (r->sink->end_pass(r->sink->ctx, r->pass, r->pass < K, &r->rec, &e)) {
        recv_fail(r, &e);
        return;
    }
    /* the record's rate is the network's: the attempt's first frame to its last */
    uint64_t t0 = atomic_load(&r->t_first), t1 = atomic_load(&r->t_last);
    r->rec.seconds = t1 > t0 ? (double)(t1 - t0) * 1e-9 : 0.0;
    r->rec.frames = unique;
    r->rec.bad_frames = atomic_load(&r->bad_in_attempt);
    send_ack(r, f, r->pass, r->pass == K ? DSB_STREAM_DONE : DSB_STREAM_NEXT);
    if (r->on_pass && r->on_pass(&r->rec, r->ctx)) atomic_store(&r->stop, 1);
    if (r->pass == K) {
        uint64_t first = atomic_load(&r->run_first);
        r->st->seconds = first && now > first ? (double)(now - first) * 1e-9 : 0.0;
        atomic_store(&r->done_at, now ? now : 1u);
    } else {
        r->pass++;
    }
    r->attempt = 0;
    reset_attempt(r);
}

/* Shared socket, thread idx > 0: a batch with a recvmmsg of our own (the
 * transport's receive keeps per-socket state of its own). */
static int recv_direct(rthread_t *a, int64_t timeout_ns, cm_err *err)
{
    struct mmsghdr mm[NET_BATCH];
    int got = dsb_transport_recvmmsg(a->t->fd, "udp", a->fr, NET_BATCH, timeout_ns, mm,
                                     a->fr[0].peer.bytes, sizeof(dsb_frame),
                                     sizeof a->fr[0].peer.bytes, NULL, 0, 0, err);
    for (int i = 0; i < got; i++) {
        uint32_t real = mm[i].msg_len;
        a->fr[i].truncated = real > a->fr[i].cap || (mm[i].msg_hdr.msg_flags & MSG_TRUNC);
        a->fr[i].len = real > a->fr[i].cap ? a->fr[i].cap : real;
        a->fr[i].peer.len = mm[i].msg_hdr.msg_namelen;
    }
    return got;
}

/* Under the read side, before the batch: points entries at the places of the
 * frames this thread expects next.  Returns how many. */
static int reserve_expected(rthread_t *a)
{
    recv_t *r = a->r;
    int n = 0;
    for (int i = 0; i < NET_BATCH; i++) a->rsv[i] = NO_FRAME;
    if (!r->ring || a->last_f == NO_FRAME || a->stride == 0 || a->last_pass != r->pass ||
        a->last_attempt != r->attempt)
        return 0;
    for (uint32_t i = 0; i < a->pm && i < NET_BATCH; i++) {
        const uint64_t f = a->last_f + (uint64_t)(i + 1u) * a->stride;
        if (f >= r->T) break;
        uint8_t *place = dsb_stream_ring_reserve(r->ring, f);
        if (!place) continue; /* in already, or no room now: this entry gets its own buffer */
        a->rsv[i] = f;
        a->fr[i].data = place;
        a->fr[i].cap = DSB_STREAM_FRAME;
        n++;
    }
    return n;
}

/* After the batch (got entries), before anything else: commits every reserved
 * entry that holds its frame, whole and good; copies every other one out to
 * its own buffer and releases its place.  Marks the committed in `done`. */
static void settle_reserved(rthread_t *a, int got, uint64_t now, uint8_t *done)
{
    recv_t *r = a->r;
    uint32_t used = 0, good = 0, run = 0;
    int broken = 0;
    for (int i = 0; i < NET_BATCH; i++) {
        const uint64_t f = a->rsv[i];
        if (f == NO_FRAME) continue;
        dsb_frame *fr = &a->fr[i];
        int hit = 0;
        if (i < got) {
            used++;
            dsb_wire_stream v;
            hit = whole_frame_type(fr) == DSB_MSG_STREAM &&
                  dsb_wire_stream_check(fr->data, fr->len, r->p->n, r->pass, &v) == DSB_WR_NONE &&
                  v.request_id == r->run_id && (uint64_t)v.block * r->p->n + v.row == f;
            if (hit) {
                dsb_stream_ring_commit(r->ring, f);
                done[i] = 1;
                atomic_fetch_add(&r->unique, 1);
                a->st.frames++;
                a->st.direct++;
                learn(a, f, v.queue);
            } else {
                memcpy(a->own[i], fr->data, fr->len); /* len <= cap = one frame */
                a->st.misplaced++;
            }
        }
        if (!hit) dsb_stream_ring_release(r->ring, f);
        fr->data = a->own[i];
        fr->cap = NET_FRAME_CAP;
        if (i < got) {
            if (hit && !broken) run++;
            if (!hit) broken = 1;
            good += (uint32_t)hit;
        }
    }
    if (good) note_stream_time(r, now);
    if (used == 0) return;
    if (good == used) {
        if (used == a->pm) a->pm *= 2u; /* every guess held */
    } else {
        a->pm = run * 2u < 2u ? 2u : run * 2u; /* flows interleave: guess less */
    }
    if (a->pm > NET_BATCH) a->pm = NET_BATCH;
}

static void *recv_thread(void *arg)
{
    rthread_t *a = arg;
    recv_t *r = a->r;
    const uint64_t timeout_ns = (uint64_t)(r->o->timeout_s * 1e9);
    const uint64_t idle_ns = (uint64_t)(r->o->idle_s * 1e9);
    const int own_socket = r->mode != DSB_STREAM_RECV_SHARED;
    uint8_t done[NET_BATCH];
    while (!atomic_load(&r->stop)) {
        cm_err e = {{0}};
        int w = dsb_transport_wait_readable(a->t->fd, 100 * 1000 * 1000); /* no lock held */
        if (w < 0 && errno != EINTR) {
            cm_fail(&e, "%s: poll: %s", a->t->kind, strerror(errno));
            recv_fail(r, &e);
            break;
        }
        int got = 0, reserved = 0;
        if (w > 0) {
            pthread_rwlock_rdlock(&r->gate); /* released after the batch is handed over */
            reserved = reserve_expected(a);
            got = own_socket || a->idx == 0 ? a->t->recv(a->t, a->fr, NET_BATCH, 0, &e)
                                            : recv_direct(a, 0, &e);
            memset(done, 0, sizeof done);
            if (reserved) settle_reserved(a, got < 0 ? 0 : got, bench_now_ns(), done);
            if (got <= 0) pthread_rwlock_unlock(&r->gate);
            if (got < 0) {
                recv_fail(r, &e);
                break;
            }
        }
        uint64_t now = bench_now_ns();
        /* after the final answer, stay idle_s to answer a PASS_END again (the
         * generator's copy of DONE may have been lost), however much else arrives */
        uint64_t done_at = atomic_load(&r->done_at);
        if (done_at && now - done_at > idle_ns) {
            if (got > 0) pthread_rwlock_unlock(&r->gate);
            atomic_store(&r->stop, 1);
            break;
        }
        if (got == 0) {
            uint64_t last = atomic_load(&r->last_any);
            if (now > last && now - last > timeout_ns) {
                pthread_rwlock_rdlock(&r->gate);
                cm_fail(&e, "no datagram for %.1f s (pass %u, %llu of %llu frames)",
                        r->o->timeout_s, r->pass, (unsigned long long)atomic_load(&r->unique),
                        (unsigned long long)r->T);
                pthread_rwlock_unlock(&r->gate);
                recv_fail(r, &e);
                break;
            }
            continue;
        }
        note_time(NULL, &r->last_any, now);
        a->st.datagrams += (uint64_t)got;
        /* the batch's frames first, then its PASS_ENDs: a thread that waits for the write
         * side holds no frame of its own (frames after a PASS_END in a batch are other
         * queues' frames of the same attempt: one queue may close before another) */
        int ends = 0;
        for (int i = 0; i < got; i++) {
            if (done[i]) continue; /* received straight into its place */
            const dsb_frame *f = &a->fr[i];
            const uint8_t type = whole_frame_type(f);
            if (f->truncated) {
                count_bad(a, DSB_WR_OVERSIZE);
            } else if (type == DSB_MSG_STREAM) {
                note_stream_time(r, now);
                on_stream(a, f);
            } else if (type == DSB_MSG_PASS_END) {
                ends++;
            } else {
                count_bad(a, f->len < DSB_WIRE_HDR_BYTES ? DSB_WR_TRUNCATED : DSB_WR_BAD_TYPE);
            }
        }
        if (a->idx == 0 && r->progress)
            bench_progress(&r->bar, (uint64_t)r->pass * r->T + atomic_load(&r->unique));
        pthread_rwlock_unlock(&r->gate);
        for (int i = 0; i < got && ends; i++) {
            const dsb_frame *f = &a->fr[i];
            if (done[i] || whole_frame_type(f) != DSB_MSG_PASS_END) continue;
            ends--;
            pthread_rwlock_wrlock(&r->gate);
            if (!atomic_load(&r->stop)) on_pass_end(a, f, now);
            pthread_rwlock_unlock(&r->gate);
        }
    }
    return NULL;
}

static void add_stats(dsb_stream_net_stats *to, const dsb_stream_net_stats *from)
{
    to->datagrams += from->datagrams;
    to->frames += from->frames;
    to->duplicates += from->duplicates;
    to->stale += from->stale;
    to->end_resends += from->end_resends;
    to->bad += from->bad;
    to->ring_full += from->ring_full;
    to->direct += from->direct;
    to->misplaced += from->misplaced;
    for (int i = 0; i < DSB_WR_COUNT; i++) to->bad_reason[i] += from->bad_reason[i];
}

/* The classic BPF program of the queue mode, attached to the port's
 * SO_REUSEPORT group: the datagram (from its UDP payload: our frame, Ethernet
 * part first) goes to socket queue mod N, the queue's low byte read at its
 * offset in a STREAM (48) or a PASS_END (44) header; anything else to an index
 * past the group, which leaves it to the kernel's hash.  A datagram too short
 * for a load stops the program, which sends it to socket 0. */
static int attach_queue_spread(int fd, uint32_t sockets, cm_err *err)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 14),                         /* the type */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, DSB_MSG_STREAM, 0, 3),
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 48),                         /* STREAM's queue */
        BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, sockets),
        BPF_STMT(BPF_RET | BPF_A, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, DSB_MSG_PASS_END, 0, 3),
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 44),                         /* PASS_END's queue */
        BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, sockets),
        BPF_STMT(BPF_RET | BPF_A, 0),
        BPF_STMT(BPF_RET | BPF_K, 0xffffffffu),                         /* the hash decides */
    };
    struct sock_fprog prog = {(unsigned short)(sizeof code / sizeof code[0]), code};
    if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof prog) != 0)
        return cm_fail(err, "udp: SO_ATTACH_REUSEPORT_CBPF (--recv-mode queue): %s",
                       strerror(errno));
    return 0;
}

/* The receiving sockets: one (shared), or `threads` in one SO_REUSEPORT group.
 * The group's port is first bound by a plain socket, which finds it taken (by
 * another receiver: a group would share it with that one silently) or picks
 * it (port 0), and is closed before the group binds it. */
static int open_sockets(const dsb_transport_config *tc, uint32_t mode, uint32_t threads,
                        dsb_transport **socks, cm_err *err)
{
    if (mode == DSB_STREAM_RECV_SHARED) {
        if (dsb_transport_open(tc, &socks[0], err)) return -1;
        for (uint32_t i = 1; i < threads; i++) socks[i] = socks[0];
        return 0;
    }
    dsb_transport_config c = *tc;
    c.reuseport = 0;
    dsb_transport *probe;
    if (dsb_transport_open(&c, &probe, err)) return -1;
    c.bind_port = probe->port;
    probe->close(probe);
    c.reuseport = 1;
    for (uint32_t i = 0; i < threads; i++) {
        if (dsb_transport_open(&c, &socks[i], err)) {
            for (uint32_t j = 0; j < i; j++) socks[j]->close(socks[j]);
            return -1;
        }
    }
    if (mode == DSB_STREAM_RECV_QUEUE && attach_queue_spread(socks[0]->fd, threads, err)) {
        for (uint32_t j = 0; j < threads; j++) socks[j]->close(socks[j]);
        return -1;
    }
    return 0;
}

int dsb_stream_recv_sink(const dsb_stream_params *p, const dsb_stream_net_opts *o,
                         const dsb_stream_sink *sink, int progress, dsb_stream_pass_fn on_pass,
                         void *ctx, void (*ready)(const dsb_stream_net_stats *st, void *ctx),
                         dsb_stream_net_stats *st, cm_err *err)
{
    dsb_stream_net_stats local;
    if (!st) st = &local;
    memset(st, 0, sizeof *st);
    if (dsb_stream_params_check(p, err)) return -1;
    const uint32_t threads = o->recv_threads ? o->recv_threads : 1u;
    const uint32_t mode = o->recv_mode;
    const int udp = !strcmp(o->tc.kind ? o->tc.kind : "udp", "udp");
    if (threads > DSB_STREAM_MAX_RECV_THREADS)
        return cm_fail(err, "recv_threads = %u: expected 1 .. %u", threads,
                       DSB_STREAM_MAX_RECV_THREADS);
    if (mode > DSB_STREAM_RECV_QUEUE)
        return cm_fail(err, "recv_mode = %u: expected shared, hash or queue", mode);
    if (mode != DSB_STREAM_RECV_SHARED && !udp)
        return cm_fail(err, "receive mode %s: the udp transport only (packet: shared)",
                       dsb_stream_recv_mode_name(mode));
    if (threads > 1 && !udp)
        return cm_fail(err, "%u receiving threads: the udp transport only (packet: 1)", threads);
    if (threads > 1 && !sink->concurrent)
        return cm_fail(err, "%u receiving threads: this sink takes frames on one thread only "
                            "(the CPU state consumed on the receiving thread: use a ring)",
                       threads);
    dsb_transport_config tc = o->tc;
    if (!tc.rcvbuf_bytes) tc.rcvbuf_bytes = 64 << 20;
    dsb_transport *socks[DSB_STREAM_MAX_RECV_THREADS];
    if (open_sockets(&tc, mode, threads, socks, err)) return -1;
    dsb_transport *t = socks[0];
    st->port = t->port;
    st->threads = threads;
    int rcvbuf = 0;
    socklen_t rl = sizeof rcvbuf;
    if (getsockopt(t->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &rl) == 0 && rcvbuf > 0)
        st->rcvbuf_bytes = (uint64_t)rcvbuf;
    recv_t *r = cm_calloc(1, sizeof *r);
    r->p = p;
    r->o = o;
    r->t = t;
    r->st = st;
    r->threads = threads;
    r->mode = mode;
    r->run_id = dsb_stream_params_run_id(p);
    r->T = dsb_stream_frames(p->n);
    r->sink = sink;
    /* direct placement: a socket a thread (one queue's frames in order), a ring sink */
    r->ring = mode != DSB_STREAM_RECV_SHARED && !o->recv_copy && sink->dedup ? sink->ring : NULL;
    r->on_pass = on_pass;
    r->ctx = ctx;
    r->err = err;
    r->progress = progress;
    if (!sink->dedup) {
        r->seen = cm_calloc((r->T + 63u) / 64u, sizeof *r->seen);
        for (uint64_t w = 0; w < (r->T + 63u) / 64u; w++) atomic_init(&r->seen[w], 0);
    }
    atomic_init(&r->unique, 0);
    atomic_init(&r->bad_in_attempt, 0);
    atomic_init(&r->t_first, 0);
    atomic_init(&r->t_last, 0);
    atomic_init(&r->run_first, 0);
    atomic_init(&r->last_any, bench_now_ns());
    atomic_init(&r->done_at, 0);
    atomic_init(&r->stop, 0);
    pthread_mutex_init(&r->err_mu, NULL);
    pthread_rwlockattr_t ga;
    pthread_rwlockattr_init(&ga);
    /* a PASS_END waits only for the batches in progress, not for every later one */
    pthread_rwlockattr_setkind_np(&ga, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&r->gate, &ga);
    pthread_rwlockattr_destroy(&ga);
    dsb_stream_record_init(&r->rec, p->replicas);
    rthread_t *th = cm_calloc(threads, sizeof *th);
    for (uint32_t i = 0; i < threads; i++) {
        th[i].r = r;
        th[i].idx = i;
        th[i].t = socks[i];
        th[i].fr = dsb_frames_alloc_cap(NET_BATCH, NET_FRAME_CAP);
        for (int k = 0; k < NET_BATCH; k++) th[i].own[k] = th[i].fr[k].data;
        th[i].last_f = NO_FRAME;
        th[i].pm = NET_BATCH;
    }
    bench_progress_start(&r->bar, "stream frames received", r->T * ((uint64_t)p->updates + 1u));
    if (ready) ready(st, ctx);
    cm_run_threads(threads, recv_thread, th, sizeof *th);
    if (progress) bench_progress_end(&r->bar, (uint64_t)r->pass * r->T + atomic_load(&r->unique));
    for (uint32_t i = 0; i < threads; i++) {
        add_stats(st, &th[i].st);
        st->thread_datagrams[i] = th[i].st.datagrams;
        dsb_frames_free(th[i].fr, NET_BATCH);
    }
    const uint32_t nsock = mode == DSB_STREAM_RECV_SHARED ? 1u : threads;
    for (uint32_t i = 0; i < nsock; i++) st->kernel_drops += socks[i]->kernel_drops(socks[i]);
    int rc = r->rc;
    dsb_stream_record_free(&r->rec);
    pthread_rwlock_destroy(&r->gate);
    pthread_mutex_destroy(&r->err_mu);
    free(th);
    free(r->seen);
    free(r);
    for (uint32_t i = 0; i < nsock; i++) socks[i]->close(socks[i]);
    return rc;
}

int dsb_stream_recv(const dsb_stream_params *p, const dsb_stream_net_opts *o, int progress,
                    dsb_stream_pass_fn on_pass, void *ctx,
                    void (*ready)(const dsb_stream_net_stats *st, void *ctx),
                    dsb_stream_net_stats *st, cm_err *err)
{
    if (st) memset(st, 0, sizeof *st);
    if (dsb_stream_params_check(p, err)) return -1;
    dsb_stream_state *s;
    if (dsb_stream_state_create(p, &s, err)) return -1;
    dsb_stream_sink sink;
    dsb_stream_cpu_sink(s, &sink);
    int rc = dsb_stream_recv_sink(p, o, &sink, progress, on_pass, ctx, ready, st, err);
    dsb_stream_state_free(s);
    return rc;
}

/* ---- generator -------------------------------------------------------------------- */

typedef struct {
    const dsb_stream_params *p;
    const dsb_stream_net_opts *o;
    dsb_stream_feed *feed;
    dsb_transport *t;
    dsb_frame *fr;      /* NET_BATCH frame buffers of this queue */
    uint32_t q, Q, pass, attempt;
    uint64_t next;      /* the next frame of the attempt to send (q, q + Q, ...) */
    uint64_t sent;      /* frames the transport took this attempt (the PASS_END's count) */
    uint64_t unsent;    /* frames it did not take (send errors), all attempts */
    int failed;         /* the feed could not give a frame (err) */
    cm_err err;
} queue_t;

/* One sending thread: its queues (q = t, t + threads, ...), a batch of each in
 * turn, at its share of the rate cap. */
typedef struct {
    queue_t **qs;
    uint32_t count;
    double rate_gbps;   /* this thread's share of the cap, 0 = none */
} sender_t;

/* The next batch of queue a (up to NET_BATCH frames), sent; the frames the
 * transport took.  The hooks act on the first attempt of their pass. */
static uint64_t send_batch(queue_t *a, uint64_t T)
{
    const int hooked = a->o->hook_pass == a->pass && a->attempt == 0;
    int k = 0;
    for (; a->next < T && k < NET_BATCH; a->next += a->Q) {
        const uint64_t f = a->next;
        if (hooked && a->o->drop_frame == f + 1u) continue;
        uint8_t *out = a->fr[k].data;
        if (dsb_stream_feed_get(a->feed, a->pass, f, (uint16_t)a->q, out, &a->err)) {
            a->failed = 1;
            a->next = T;
            return 0;
        }
        if (hooked && a->o->corrupt_frame == f + 1u) out[52] = 1; /* a reserved byte */
        set_macs(out, a->t, NULL);
        a->fr[k].len = DSB_STREAM_FRAME;
        a->fr[k].peer = a->t->default_peer;
        k++;
    }
    if (!k) return 0;
    int took = a->t->send(a->t, a->fr, k);
    if (took < 0) took = 0;
    /* not handed to the kernel: not sent, and the PASS_END says so */
    a->unsent += (uint64_t)(k - took);
    a->sent += (uint64_t)took;
    return (uint64_t)took;
}

static void *send_thread(void *arg)
{
    sender_t *s = arg;
    const uint64_t T = dsb_stream_frames(s->qs[0]->p->n);
    for (uint32_t j = 0; j < s->count; j++) {
        s->qs[j]->next = s->qs[j]->q;
        s->qs[j]->sent = 0;
    }
    const double t0 = bench_now_s();
    uint64_t sent = 0;
    for (int active = 1; active;) {
        active = 0;
        for (uint32_t j = 0; j < s->count; j++) {
            queue_t *a = s->qs[j];
            if (a->next >= T) continue;
            active = 1;
            sent += send_batch(a, T);
            if (s->rate_gbps > 0) { /* ahead of the cap: wait */
                double due = 8.0 * (double)sent * DSB_STREAM_PAYLOAD / (s->rate_gbps * 1e9);
                cm_sleep_s(due - (bench_now_s() - t0));
            }
        }
    }
    return NULL;
}

static void send_pass_end(queue_t *a)
{
    uint8_t buf[DSB_WIRE_HDR_BYTES];
    dsb_wire_build_pass_end(buf, sizeof buf, a->t->peer_mac, a->t->mac,
                            dsb_stream_params_run_id(a->p), a->p->n, a->pass, a->attempt,
                            (uint16_t)a->q, (uint16_t)a->Q, a->sent);
    send_header(a->t, buf, &a->t->default_peer);
}

/* The attempt's PASS_ENDs, one a queue: their sending number `round` (0: the
 * first).  The test hook leaves the first o->drop_pass_ends of its attempt out. */
static void send_pass_ends(queue_t *qs, uint32_t Q, uint32_t round)
{
    const dsb_stream_net_opts *o = qs[0].o;
    if (o->hook_pass == qs[0].pass && qs[0].attempt == 0 && round < o->drop_pass_ends) return;
    for (uint32_t q = 0; q < Q; q++) send_pass_end(&qs[q]);
}

/* How long the generator waits for an answer before it sends its PASS_ENDs
 * again.  What an answer takes is the receiver's side of the pass, not the
 * pass's sending: the frames still queued in its sockets when the PASS_ENDs
 * left, the end of the pass (Eq. (10), the dSB step, a GPU's ring drained) and
 * the round trip.  None of it grows with the time the pass took to send (a
 * pass of n = 10^5 sends for ~0.1 s while an idle loopback receiver on the
 * CPU answers a small pass in well under a millisecond; a small n sends in a
 * millisecond and may wait longer than that for a GPU's end of pass), so the
 * pass's duration would wait too long in one case and too little in the
 * other.  The time the latest answer took is the quantity
 * itself, measured: the first wait is twice it (room for its jitter, as TCP's
 * retransmission timer leaves over the round trip), then each wait doubles.
 * The floor, 20 ms, keeps a loaded machine's hiccups (a 2-core CI box
 * descheduling either side for some milliseconds) from sending the PASS_ENDs
 * again on most passes; the cap, 0.5 s, is the fixed wait of the first
 * version.  Sending too soon costs a 64-byte datagram a queue and an answer
 * repeated (the receiver takes copies of a PASS_END idempotently); too late
 * costs idle link.  The caller measures an answer from the first sending of
 * the attempt's PASS_ENDs, so after a loss the time errs long, never short,
 * and the next clean answer brings it back. */
double dsb_stream_ack_wait(double answer_s, uint32_t resent)
{
    double w = answer_s > 0 ? 2.0 * answer_s : 0.0; /* NaN and negatives: none */
    if (w < DSB_STREAM_ACK_WAIT_MIN_S) w = DSB_STREAM_ACK_WAIT_MIN_S;
    for (uint32_t k = 0; k < resent && w < DSB_STREAM_ACK_WAIT_MAX_S; k++) w *= 2.0;
    return w < DSB_STREAM_ACK_WAIT_MAX_S ? w : DSB_STREAM_ACK_WAIT_MAX_S;
}

/* Waits for the receiver's answer to the attempt the PASS_ENDs just sent
 * closed, on every queue's socket at once (the answer goes to the queue whose
 * PASS_END completed the attempt), sending the PASS_ENDs again after each
 * dsb_stream_ack_wait.  *answer_s: in, the time the latest answer took (0:
 * none yet); out, this one's.  *resent: the times they went out again.
 * Returns the action, or -1 (err set: a transport error, or no answer for
 * timeout_s). */
static int await_ack(queue_t *qs, uint32_t Q, const dsb_stream_params *p, double timeout_s,
                     double *answer_s, uint32_t *resent, dsb_stream_net_stats *st, cm_err *err)
{
    const uint32_t run_id = dsb_stream_params_run_id(p);
    const double start = bench_now_s();
    double asked = start, wait = dsb_stream_ack_wait(*answer_s, 0);
    struct pollfd pf[DSB_STREAM_MAX_QUEUES];
    for (uint32_t q = 0; q < Q; q++) pf[q] = (struct pollfd){.fd = qs[q].t->fd, .events = POLLIN};
    dsb_frame *fr = dsb_frames_alloc_cap(8, NET_FRAME_CAP);
    int action = -1, failed = 0;
    *resent = 0;
    while (action < 0 && !failed) {
        double now = bench_now_s();
        if (now - start >= timeout_s) {
            failed = cm_fail(err, "no answer from the receiver to pass %u for %.1f s", qs[0].pass,
                             timeout_s);
            break;
        }
        if (now - asked >= wait) { /* the PASS_ENDs or the answer were lost */
            (*resent)++;
            st->end_resends++;
            send_pass_ends(qs, Q, *resent);
            asked = now;
            wait = dsb_stream_ack_wait(*answer_s, *resent);
        }
        double until = asked + wait < start + timeout_s ? asked + wait : start + timeout_s;
        until = until > now ? until - now : 0.0;
        struct timespec ts = {(time_t)until, (long)((until - (double)(time_t)until) * 1e9)};
        int w = ppoll(pf, Q, &ts, NULL);
        if (w < 0 && errno != EINTR) {
            failed = cm_fail(err, "%s: poll: %s", qs[0].t->kind, strerror(errno));
            break;
        }
        for (uint32_t q = 0; q < Q && w > 0 && action < 0; q++) {
            if (!pf[q].revents) continue;
            int got = qs[q].t->recv(qs[q].t, fr, 8, 0, err);
            if (got < 0) {
                failed = 1;
                break;
            }
            for (int i = 0; i < got; i++) {
                dsb_wire_stream_ack a;
                /* not an answer to this attempt: a late copy of the answer to an earlier one
                 * (our PASS_ENDs sent again before it arrived) would start a third attempt
                 * while the receiver still takes the second */
                if (fr[i].truncated ||
                    dsb_wire_stream_ack_check(fr[i].data, fr[i].len, p->n, &a) != DSB_WR_NONE ||
                    a.request_id != run_id || a.pass != qs[0].pass || a.attempt != qs[0].attempt)
                    continue;
                st->acks++;
                action = a.action;
            }
        }
    }
    if (action >= 0) *answer_s = bench_now_s() - start;
    dsb_frames_free(fr, 8);
    return action;
}

int dsb_stream_send(const dsb_stream_params *p, const dsb_stream_net_opts *o, int progress,
                    dsb_stream_net_stats *st, cm_err *err)
{
    dsb_stream_net_stats local;
    if (!st) st = &local;
    memset(st, 0, sizeof *st);
    dsb_stream_params pp = *p;
    pp.updates = 1; /* the receiver decides; only n, instance and seed matter here */
    if (dsb_stream_params_check(&pp, err)) return -1;
    const uint32_t Q = o->queues ? o->queues : 1u;
    if (Q > DSB_STREAM_MAX_QUEUES)
        return cm_fail(err, "queues = %u: expected 1 .. %u", Q, DSB_STREAM_MAX_QUEUES);
    const uint32_t NT = o->send_threads ? o->send_threads : Q;
    if (NT > Q)
        return cm_fail(err, "send_threads = %u: expected 1 .. %u (the queues; a thread drives "
                            "one or more)", NT, Q);
    if (!o->tc.peer_addr && strcmp(o->tc.kind ? o->tc.kind : "udp", "packet"))
        return cm_fail(err, "no receiver address (the udp transport needs one)");
    const char *bad_policy = dsb_stream_rate_policy_check(&o->rate);
    if (bad_policy) return cm_fail(err, "rate policy: %s", bad_policy);
    queue_t *qs = cm_calloc(Q, sizeof *qs);
    dsb_stream_feed *feed = NULL;
    int rc = dsb_stream_feed_open(p, &feed, err);
    uint32_t opened = 0;
    for (; rc == 0 && opened < Q; opened++) {
        dsb_transport_config tc = o->tc;
        tc.bind_port = 0; /* each queue its own ephemeral socket */
        if (!tc.bind_addr && tc.peer_addr && strchr(tc.peer_addr, ':')) tc.bind_addr = "::";
        else if (!tc.bind_addr) tc.bind_addr = "0.0.0.0";
        if (dsb_transport_open(&tc, &qs[opened].t, err)) {
            rc = -1;
            break;
        }
        dsb_transport *t = qs[opened].t;
        /* raw frames on one interface: a source MAC of our own (as the client does) */
        if (!o->tc.mac && !memcmp(t->mac, t->peer_mac, 6) && !strcmp(t->kind, "packet"))
            t->mac[5] ^= 0x03;
        qs[opened].fr = dsb_frames_alloc_cap(NET_BATCH, NET_FRAME_CAP);
        qs[opened].p = p;
        qs[opened].o = o;
        qs[opened].feed = feed;
        qs[opened].q = opened;
        qs[opened].Q = Q;
    }
    /* thread t drives queues t, t + NT, ... */
    sender_t *snd = cm_calloc(NT, sizeof *snd);
    queue_t **order = cm_calloc(Q, sizeof *order);
    for (uint32_t t = 0, k = 0; t < NT; t++) {
        snd[t].qs = order + k;
        for (uint32_t q = t; q < Q; q += NT) order[k++] = &qs[q];
        snd[t].count = (uint32_t)(order + k - snd[t].qs);
    }
    /* rs.cap: the cap of the attempt about to run (0: none), moved by the rate policy alone */
    dsb_stream_rate_state rs;
    dsb_stream_rate_start(&rs, o->rate_gbps);
    uint32_t pass = 0, attempt = 0;
    double answer_s = 0; /* the time the latest answer took (dsb_stream_ack_wait) */
    while (rc == 0) {
        double t0 = bench_now_s();
        for (uint32_t q = 0; q < Q; q++) {
            qs[q].pass = pass;
            qs[q].attempt = attempt;
        }
        for (uint32_t t = 0; t < NT; t++) snd[t].rate_gbps = rs.cap * snd[t].count / Q;
        cm_run_threads(NT, send_thread, snd, sizeof *snd);
        double secs = bench_now_s() - t0;
        uint64_t sent = 0;
        for (uint32_t q = 0; q < Q && rc == 0; q++)
            if (qs[q].failed) rc = cm_fail(err, "%s", qs[q].err.msg);
        if (rc) break;
        for (uint32_t q = 0; q < Q; q++) sent += qs[q].sent;
        send_pass_ends(qs, Q, 0);
        st->frames += sent;
        uint32_t end_resends = 0;
        int action = await_ack(qs, Q, p, o->timeout_s, &answer_s, &end_resends, st, err);
        double gbps = dsb_stream_payload_gbps(sent, secs);
        char capped[40] = "";
        if (rs.cap > 0) snprintf(capped, sizeof capped, ", cap %.2f", rs.cap);
        char again[96] = "";
        if (end_resends && action >= 0)
            snprintf(again, sizeof again, "; PASS_ENDs sent %u more times, answered after %.3f s",
                     end_resends, answer_s);
        if (progress)
            fprintf(stderr, "pass %u attempt %u: %llu frames in %.3f s (%.2f Gb/s of payload%s)%s%s\n",
                    pass, attempt, (unsigned long long)sent, secs, gbps, capped, again,
                    action == DSB_STREAM_RESEND ? ": the receiver asks for it again" : "");
        if (action >= 0 && o->on_attempt) {
            const dsb_stream_send_attempt a = {pass, attempt, sent, secs, gbps, rs.cap,
                                               action == DSB_STREAM_RESEND, end_resends, answer_s};
            o->on_attempt(&a, o->attempt_ctx);
        }
        if (action < 0) {
            rc = -1;
        } else if (action == DSB_STREAM_RESEND) {
            st->resends++;
            attempt++;
            dsb_stream_rate_update(&o->rate, &rs, 1, gbps); /* frames were lost: lower */
        } else if (action == DSB_STREAM_NEXT) {
            pass++;
            attempt = 0;
            dsb_stream_rate_update(&o->rate, &rs, 0, gbps); /* clean: raise, perhaps */
        } else {
            break; /* DONE */
        }
    }
    st->final_rate_gbps = rs.cap;
    st->rate_increases = rs.increases;
    st->rate_removals = rs.removals;
    st->lowest_rate_gbps = rs.lowest;
    st->top_rate_gbps = rs.top;
    for (uint32_t q = 0; q < opened; q++) st->unsent += qs[q].unsent;
    for (uint32_t q = 0; q < opened; q++) {
        qs[q].t->close(qs[q].t);
        dsb_frames_free(qs[q].fr, NET_BATCH);
    }
    dsb_stream_feed_close(feed);
    free(snd);
    free(order);
    free(qs);
    return rc;
}
