/* The streaming solver's network source: receiver and generator over a dsb
 * transport (include/dsb/stream_net.h; the frames in include/dsb/wire.h). */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>
#include <sys/socket.h>

#include "common/bench.h"
#include "common/threads.h"
#include "dsb/stream_net.h"
#include "transport_internal.h"

#define NET_BATCH DSB_TRANSPORT_BATCH
#define NET_FRAME_CAP (DSB_STREAM_FRAME + 64u) /* a longer datagram shows as oversize */
#define ACK_WAIT_S 0.5                          /* generator: PASS_ENDs again after this */

void dsb_stream_net_opts_default(dsb_stream_net_opts *o)
{
    memset(o, 0, sizeof *o);
    o->idle_s = 1.0;
    o->timeout_s = 30.0;
    o->queues = 1;
}

/* Ethernet addresses of an outgoing frame: the transport's peer and own MAC
 * (zero over UDP). */
static void set_macs(uint8_t *frame, const dsb_transport *t, const uint8_t *dst)
{
    memcpy(frame, dst ? dst : t->peer_mac, 6);
    memcpy(frame + 6, t->mac, 6);
}

/* ---- receiver ------------------------------------------------------------------
 *
 * `threads` receiving threads take datagrams from the one socket (thread 0
 * through the transport, the others with their own recvmmsg on its fd: udp
 * only).  A thread waits for the socket to be readable with no lock held,
 * then takes the read side of `gate`, takes a batch without waiting and
 * hands its frames to the sink, and only then lets the gate go: a datagram
 * is never out of the socket without a read side held for it.  Everything a
 * PASS_END does (the attempt's bookkeeping, ending or discarding a pass, the
 * answer) runs under the write side.  The socket is FIFO and a queue's
 * PASS_END follows its frames, so every frame sent before the PASS_END left
 * the socket before it, under some thread's read side, and the write side
 * waits for all of them: the end of an attempt sees every frame of it.  (The
 * first version took the batch before the read side: a thread holding an
 * attempt's last frames in its hands let the attempt end short of them,
 * which the GPU test caught as an attempt sent again and duplicates.) */

typedef struct {
    const dsb_stream_params *p;
    const dsb_stream_net_opts *o;
    dsb_transport *t;
    const dsb_stream_sink *sink;
    uint32_t run_id, threads;
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
    dsb_frame *fr;
    dsb_stream_net_stats st; /* this thread's counts, summed at the end */
} rthread_t;

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

static void send_ack(recv_t *r, const dsb_frame *to, uint32_t pass, uint16_t action)
{
    dsb_wire_stream_ack a;
    dsb_wire_init(&a, DSB_MSG_STREAM_ACK, NULL, NULL);
    a.request_id = r->run_id;
    a.n = r->p->n;
    a.pass = pass;
    a.action = action;
    a.attempt = r->attempt;
    a.frames = atomic_load(&r->unique);
    uint8_t buf[DSB_WIRE_HDR_BYTES];
    memcpy(buf, &a, sizeof a);
    set_macs(buf, r->t, to->data + 6); /* back to the sender's MAC (zero over UDP) */
    memcpy(r->last_ack, buf, sizeof buf);
    r->have_ack = 1;
    dsb_frame f = {.data = buf, .cap = sizeof buf, .len = sizeof buf, .peer = to->peer};
    r->t->send(r->t, &f, 1);
    r->st->acks++;
}

static void count_bad(rthread_t *a, dsb_wire_reason why)
{
    a->st.bad++;
    a->st.bad_reason[why < DSB_WR_COUNT ? why : 0]++;
    atomic_fetch_add(&a->r->bad_in_attempt, 1);
}

static void note_time(_Atomic uint64_t *first, _Atomic uint64_t *last, uint64_t now)
{
    uint64_t z = 0;
    if (first && atomic_load(first) == 0) atomic_compare_exchange_strong(first, &z, now);
    uint64_t l = atomic_load(last);
    while (l < now && !atomic_compare_exchange_weak(last, &l, now)) {
    }
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
        if (r->have_ack) {
            dsb_frame ack = {.data = r->last_ack, .cap = DSB_WIRE_HDR_BYTES,
                             .len = DSB_WIRE_HDR_BYTES, .peer = f->peer};
            r->t->send(r->t, &ack, 1);
            r->st->acks++;
        }
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
    if (!(r->ends_mask >> v.queue & 1u)) {
        r->ends_mask |= 1ull << v.queue;
        r->sent += v.frames;
    }
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

/* Thread idx > 0: a batch from the socket with a recvmmsg of our own (the
 * transport's receive keeps per-socket state of its own). */
static int recv_direct(rthread_t *a, int64_t timeout_ns, cm_err *err)
{
    struct mmsghdr mm[NET_BATCH];
    int got = dsb_transport_recvmmsg(a->r->t->fd, "udp", a->fr, NET_BATCH, timeout_ns, mm,
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

static void *recv_thread(void *arg)
{
    rthread_t *a = arg;
    recv_t *r = a->r;
    const uint64_t timeout_ns = (uint64_t)(r->o->timeout_s * 1e9);
    const uint64_t idle_ns = (uint64_t)(r->o->idle_s * 1e9);
    while (!atomic_load(&r->stop)) {
        cm_err e = {{0}};
        int w = dsb_transport_wait_readable(r->t->fd, 100 * 1000 * 1000); /* no lock held */
        if (w < 0 && errno != EINTR) {
            cm_fail(&e, "%s: poll: %s", r->t->kind, strerror(errno));
            recv_fail(r, &e);
            break;
        }
        int got = 0;
        if (w > 0) {
            pthread_rwlock_rdlock(&r->gate); /* released after the batch is handed over */
            got = a->idx == 0 ? r->t->recv(r->t, a->fr, NET_BATCH, 0, &e) : recv_direct(a, 0, &e);
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
        /* the batch's frames first, then its PASS_ENDs: a thread that waits for the write
         * side holds no frame of its own (frames after a PASS_END in a batch are other
         * queues' frames of the same attempt: one queue may close before another) */
        int ends = 0;
        for (int i = 0; i < got; i++) {
            const dsb_frame *f = &a->fr[i];
            a->st.datagrams++;
            uint8_t type = f->len > 14u ? f->data[14] : 0u;
            if (f->truncated) {
                count_bad(a, DSB_WR_OVERSIZE);
            } else if (type == DSB_MSG_STREAM) {
                note_time(&r->t_first, &r->t_last, now);
                uint64_t z = 0;
                if (!atomic_load(&r->run_first)) atomic_compare_exchange_strong(&r->run_first, &z, now);
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
            if (f->truncated || f->len <= 14u || f->data[14] != DSB_MSG_PASS_END) continue;
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
    to->bad += from->bad;
    to->ring_full += from->ring_full;
    for (int i = 0; i < DSB_WR_COUNT; i++) to->bad_reason[i] += from->bad_reason[i];
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
    if (threads > DSB_STREAM_MAX_RECV_THREADS)
        return cm_fail(err, "recv_threads = %u: expected 1 .. %u", threads,
                       DSB_STREAM_MAX_RECV_THREADS);
    if (threads > 1 && strcmp(o->tc.kind ? o->tc.kind : "udp", "udp"))
        return cm_fail(err, "%u receiving threads: the udp transport only (packet: 1)", threads);
    if (threads > 1 && !sink->concurrent)
        return cm_fail(err, "%u receiving threads: this sink takes frames on one thread only "
                            "(the CPU state consumed on the receiving thread: use a ring)",
                       threads);
    dsb_transport_config tc = o->tc;
    if (!tc.rcvbuf_bytes) tc.rcvbuf_bytes = 64 << 20;
    dsb_transport *t;
    if (dsb_transport_open(&tc, &t, err)) return -1;
    st->port = t->port;
    st->threads = threads;
    recv_t *r = cm_calloc(1, sizeof *r);
    r->p = p;
    r->o = o;
    r->t = t;
    r->st = st;
    r->threads = threads;
    r->run_id = dsb_stream_params_run_id(p);
    r->T = dsb_stream_frames(p->n);
    r->sink = sink;
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
        th[i].fr = dsb_frames_alloc_cap(NET_BATCH, NET_FRAME_CAP);
    }
    bench_progress_start(&r->bar, "stream frames received", r->T * ((uint64_t)p->updates + 1u));
    if (ready) ready(st, ctx);
    cm_run_threads(threads, recv_thread, th, sizeof *th);
    if (progress) bench_progress_end(&r->bar, (uint64_t)r->pass * r->T + atomic_load(&r->unique));
    for (uint32_t i = 0; i < threads; i++) {
        add_stats(st, &th[i].st);
        dsb_frames_free(th[i].fr, NET_BATCH);
    }
    st->kernel_drops = t->kernel_drops(t);
    int rc = r->rc;
    dsb_stream_record_free(&r->rec);
    pthread_rwlock_destroy(&r->gate);
    pthread_mutex_destroy(&r->err_mu);
    free(th);
    free(r->seen);
    free(r);
    t->close(t);
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
    double rate_gbps;   /* this queue's share of the cap, 0 = none */
    uint64_t sent;      /* frames the transport took this attempt (the PASS_END's count) */
    uint64_t unsent;    /* frames it did not take (send errors), all attempts */
    int failed;         /* the feed could not give a frame (err) */
    cm_err err;
} queue_t;

static void *send_queue(void *arg)
{
    queue_t *a = arg;
    const uint64_t T = dsb_stream_frames(a->p->n);
    const int hooked = a->o->hook_pass == a->pass && a->attempt == 0;
    double t0 = bench_now_s();
    int k = 0;
    a->sent = 0;
    for (uint64_t f = a->q; f < T; f += a->Q) {
        if (hooked && a->o->drop_frame == f + 1u) continue;
        uint8_t *out = a->fr[k].data;
        if (dsb_stream_feed_get(a->feed, a->pass, f, (uint16_t)a->q, out, &a->err)) {
            a->failed = 1;
            break;
        }
        if (hooked && a->o->corrupt_frame == f + 1u) out[52] = 1; /* a reserved byte */
        set_macs(out, a->t, NULL);
        a->fr[k].len = DSB_STREAM_FRAME;
        a->fr[k].peer = a->t->default_peer;
        a->sent++;
        if (++k == NET_BATCH || f + a->Q >= T) {
            int took = a->t->send(a->t, a->fr, k);
            if (took < k) { /* not handed to the kernel: not sent, and the PASS_END says so */
                a->sent -= (uint64_t)(k - took);
                a->unsent += (uint64_t)(k - took);
            }
            k = 0;
            if (a->rate_gbps > 0) { /* ahead of the cap: wait */
                double due = 8.0 * (double)a->sent * DSB_STREAM_PAYLOAD / (a->rate_gbps * 1e9);
                cm_sleep_s(due - (bench_now_s() - t0));
            }
        }
    }
    if (k) {
        int took = a->t->send(a->t, a->fr, k);
        if (took < k) {
            a->sent -= (uint64_t)(k - took);
            a->unsent += (uint64_t)(k - took);
        }
    }
    return NULL;
}

static void send_pass_end(queue_t *a)
{
    dsb_wire_pass_end e;
    dsb_wire_init(&e, DSB_MSG_PASS_END, NULL, NULL);
    e.request_id = dsb_stream_params_run_id(a->p);
    e.n = a->p->n;
    e.pass = a->pass;
    e.attempt = a->attempt;
    e.queue = (uint16_t)a->q;
    e.queue_count = (uint16_t)a->Q;
    e.frames = a->sent;
    uint8_t buf[DSB_WIRE_HDR_BYTES];
    memcpy(buf, &e, sizeof e);
    set_macs(buf, a->t, NULL);
    dsb_frame f = {.data = buf, .cap = sizeof buf, .len = sizeof buf, .peer = a->t->default_peer};
    a->t->send(a->t, &f, 1);
}

/* Waits for the receiver's answer to `pass` on any queue's socket, sending the
 * PASS_ENDs again every ACK_WAIT_S.  Returns the action, or -1 (err set). */
static int await_ack(queue_t *qs, uint32_t Q, const dsb_stream_params *p, double timeout_s,
                     dsb_stream_net_stats *st, cm_err *err)
{
    const uint32_t run_id = dsb_stream_params_run_id(p);
    double start = bench_now_s(), asked = start;
    dsb_frame *fr = dsb_frames_alloc_cap(8, NET_FRAME_CAP);
    int action = -1;
    while (action < 0) {
        for (uint32_t q = 0; q < Q && action < 0; q++) {
            int got = qs[q].t->recv(qs[q].t, fr, 8, q == 0 ? 20 * 1000 * 1000 : 0, err);
            if (got < 0) {
                dsb_frames_free(fr, 8);
                return -1;
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
        double now = bench_now_s();
        if (action >= 0) break;
        if (now - start > timeout_s) {
            cm_fail(err, "no answer from the receiver to pass %u for %.1f s", qs[0].pass,
                    timeout_s);
            break;
        }
        if (now - asked > ACK_WAIT_S) { /* the PASS_ENDs or the answer were lost */
            for (uint32_t q = 0; q < Q; q++) send_pass_end(&qs[q]);
            asked = now;
        }
    }
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
    if (!o->tc.peer_addr && strcmp(o->tc.kind ? o->tc.kind : "udp", "packet"))
        return cm_fail(err, "no receiver address (the udp transport needs one)");
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
    double rate = o->rate_gbps;
    uint32_t pass = 0, attempt = 0;
    while (rc == 0) {
        double t0 = bench_now_s();
        for (uint32_t q = 0; q < Q; q++) {
            qs[q].pass = pass;
            qs[q].attempt = attempt;
            qs[q].rate_gbps = rate / Q;
        }
        cm_run_threads(Q, send_queue, qs, sizeof *qs);
        double secs = bench_now_s() - t0;
        uint64_t sent = 0;
        for (uint32_t q = 0; q < Q && rc == 0; q++)
            if (qs[q].failed) rc = cm_fail(err, "%s", qs[q].err.msg);
        if (rc) break;
        for (uint32_t q = 0; q < Q; q++) {
            sent += qs[q].sent;
            send_pass_end(&qs[q]);
        }
        st->frames += sent;
        int action = await_ack(qs, Q, p, o->timeout_s, st, err);
        double gbps = secs > 0 ? 8.0 * (double)sent * DSB_STREAM_PAYLOAD / secs / 1e9 : 0;
        if (progress)
            fprintf(stderr, "pass %u attempt %u: %llu frames in %.3f s (%.2f Gb/s of payload)%s\n",
                    pass, attempt, (unsigned long long)sent, secs, gbps,
                    action == DSB_STREAM_RESEND ? ": the receiver asks for it again" : "");
        if (action < 0) {
            rc = -1;
        } else if (action == DSB_STREAM_RESEND) {
            st->resends++;
            attempt++;
            /* frames were lost: halve the rate (the first cap: half of what just failed) */
            rate = rate > 0 ? rate / 2 : gbps / 2;
            if (rate < 0.01) rate = 0.01;
        } else if (action == DSB_STREAM_NEXT) {
            pass++;
            attempt = 0;
        } else {
            break; /* DONE */
        }
    }
    st->final_rate_gbps = rate;
    for (uint32_t q = 0; q < opened; q++) st->unsent += qs[q].unsent;
    for (uint32_t q = 0; q < opened; q++) {
        qs[q].t->close(qs[q].t);
        dsb_frames_free(qs[q].fr, NET_BATCH);
    }
    dsb_stream_feed_close(feed);
    free(qs);
    return rc;
}
