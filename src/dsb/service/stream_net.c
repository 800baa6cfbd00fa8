/* The streaming solver's network source: receiver and generator over a dsb
 * transport (include/dsb/stream_net.h; the frames in include/dsb/wire.h). */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bench.h"
#include "common/threads.h"
#include "dsb/stream_net.h"

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

/* ---- receiver ------------------------------------------------------------------ */

typedef struct {
    const dsb_stream_params *p;
    dsb_transport *t;
    const dsb_stream_sink *sink;
    uint32_t run_id;
    uint64_t T;
    uint8_t *seen;          /* T bits: consumed in this attempt */
    uint64_t unique;        /* frames consumed in this attempt */
    uint64_t bad_in_attempt;
    uint32_t pass, attempt;
    uint16_t queue_count;   /* of this attempt's PASS_ENDs, 0 before the first */
    uint64_t ends_mask;     /* queues whose PASS_END arrived */
    uint64_t sent;          /* frames the queues say they sent (PASS_END) */
    double t_first, t_last; /* first and last datagram of the attempt (0: none yet) */
    int done;               /* the final pass answered */
    uint8_t last_ack[DSB_WIRE_HDR_BYTES]; /* the latest answer, for late PASS_ENDs */
    int have_ack;
    dsb_stream_net_stats *st;
} recv_t;

static void reset_attempt(recv_t *r)
{
    memset(r->seen, 0, (r->T + 7u) / 8u);
    r->unique = r->bad_in_attempt = 0;
    r->queue_count = 0;
    r->ends_mask = 0;
    r->sent = 0;
    r->t_first = r->t_last = 0;
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
    a.frames = r->unique;
    uint8_t buf[DSB_WIRE_HDR_BYTES];
    memcpy(buf, &a, sizeof a);
    set_macs(buf, r->t, to->data + 6); /* back to the sender's MAC (zero over UDP) */
    memcpy(r->last_ack, buf, sizeof buf);
    r->have_ack = 1;
    dsb_frame f = {.data = buf, .cap = sizeof buf, .len = sizeof buf, .peer = to->peer};
    r->t->send(r->t, &f, 1);
    r->st->acks++;
}

static void count_bad(recv_t *r, dsb_wire_reason why)
{
    r->st->bad++;
    r->st->bad_reason[why < DSB_WR_COUNT ? why : 0]++;
    r->bad_in_attempt++;
}

static void on_stream(recv_t *r, const dsb_frame *f)
{
    dsb_wire_stream v;
    dsb_wire_reason why = dsb_wire_stream_check(f->data, f->len, r->p->n, r->pass, &v);
    if (why == DSB_WR_WRONG_PASS && v.pass < r->pass) {
        r->st->stale++; /* a straggler of a pass already answered */
        return;
    }
    if (why == DSB_WR_NONE && v.request_id != r->run_id) why = DSB_WR_WRONG_RUN;
    if (why != DSB_WR_NONE) {
        count_bad(r, why);
        return;
    }
    uint64_t fi = (uint64_t)v.block * r->p->n + v.row;
    if (r->seen[fi / 8u] >> (fi % 8u) & 1u) {
        r->st->duplicates++;
        return;
    }
    r->seen[fi / 8u] |= (uint8_t)(1u << (fi % 8u));
    r->sink->frame(r->sink->ctx, v.row, v.block, f->data);
    r->unique++;
    r->st->frames++;
}

/* Returns 1 when the pass was completed (and answered), 0 otherwise, -1 when
 * the sink failed to end it (err set; nothing answered). */
static int on_pass_end(recv_t *r, const dsb_frame *f, dsb_stream_record *rec,
                       dsb_stream_pass_fn on_pass, void *ctx, int *stop, cm_err *err)
{
    dsb_wire_pass_end v;
    dsb_wire_reason why = dsb_wire_pass_end_check(f->data, f->len, r->p->n, &v);
    if (why == DSB_WR_NONE && v.request_id != r->run_id) why = DSB_WR_WRONG_RUN;
    if (why == DSB_WR_NONE && v.queue_count > DSB_STREAM_MAX_QUEUES) why = DSB_WR_BAD_QUEUE;
    if (why != DSB_WR_NONE) {
        count_bad(r, why);
        return 0;
    }
    /* an earlier pass, or an earlier attempt of this one (a PASS_END that came late,
     * or a generator that did not hear our RESEND): our answer was lost, say it again */
    if (v.pass < r->pass || r->done || (v.pass == r->pass && v.attempt < r->attempt)) {
        r->st->stale++;
        if (r->have_ack) {
            dsb_frame a = {.data = r->last_ack, .cap = DSB_WIRE_HDR_BYTES,
                           .len = DSB_WIRE_HDR_BYTES, .peer = f->peer};
            r->t->send(r->t, &a, 1);
            r->st->acks++;
        }
        return 0;
    }
    if (v.pass > r->pass || v.attempt > r->attempt) { /* ahead of anything we answered */
        count_bad(r, DSB_WR_WRONG_PASS);
        return 0;
    }
    if (r->queue_count && v.queue_count != r->queue_count) {
        count_bad(r, DSB_WR_BAD_QUEUE);
        return 0;
    }
    r->queue_count = v.queue_count;
    if (!(r->ends_mask >> v.queue & 1u)) {
        r->ends_mask |= 1ull << v.queue;
        r->sent += v.frames;
    }
    if (r->ends_mask != (v.queue_count == 64 ? ~0ull : (1ull << v.queue_count) - 1u)) return 0;
    /* every queue has closed the pass */
    if (r->unique != r->T) {
        r->st->resends++;
        r->st->missing += r->T - r->unique;
        r->st->not_sent += r->sent < r->T ? r->T - r->sent : 0u;
        send_ack(r, f, r->pass, DSB_STREAM_RESEND);
        r->sink->discard(r->sink->ctx);
        r->attempt++;
        reset_attempt(r);
        return 0;
    }
    uint32_t K = r->p->updates;
    if (r->sink->end_pass(r->sink->ctx, r->pass, r->pass < K, rec, err)) return -1;
    /* the record's rate is the network's: the attempt's first datagram to its last */
    rec->seconds = r->t_last > r->t_first ? r->t_last - r->t_first : 0.0;
    rec->frames = r->unique;
    rec->bad_frames = r->bad_in_attempt;
    send_ack(r, f, r->pass, r->pass == K ? DSB_STREAM_DONE : DSB_STREAM_NEXT);
    if (on_pass && on_pass(rec, ctx)) *stop = 1;
    if (r->pass == K) r->done = 1;
    else r->pass++;
    r->attempt = 0;
    reset_attempt(r);
    return 1;
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
    dsb_transport_config tc = o->tc;
    if (!tc.rcvbuf_bytes) tc.rcvbuf_bytes = 64 << 20;
    dsb_transport *t;
    if (dsb_transport_open(&tc, &t, err)) return -1;
    st->port = t->port;
    recv_t r;
    memset(&r, 0, sizeof r);
    r.p = p;
    r.t = t;
    r.st = st;
    r.run_id = dsb_stream_params_run_id(p);
    r.T = dsb_stream_frames(p->n);
    r.sink = sink;
    r.seen = cm_calloc((r.T + 7u) / 8u, 1);
    dsb_frame *fr = dsb_frames_alloc_cap(NET_BATCH, NET_FRAME_CAP);
    dsb_stream_record rec;
    dsb_stream_record_init(&rec, p->replicas);
    bench_progress_t bar;
    bench_progress_start(&bar, "stream frames received", r.T * ((uint64_t)p->updates + 1u));
    if (ready) ready(st, ctx);
    int rc = 0, stop = 0;
    double last_any = bench_now_s(), done_at = 0;
    while (!stop) {
        int got = t->recv(t, fr, NET_BATCH, 100 * 1000 * 1000, err);
        if (got < 0) {
            rc = -1;
            break;
        }
        double now = bench_now_s();
        /* after the final answer, stay o->idle_s to answer a PASS_END again (the
         * generator's copy of DONE may have been lost), however much else arrives */
        if (r.done && now - done_at > o->idle_s) break;
        if (got == 0) {
            if (now - last_any > o->timeout_s) {
                rc = cm_fail(err, "no datagram for %.1f s (pass %u, %llu of %llu frames)",
                             o->timeout_s, r.pass, (unsigned long long)r.unique,
                             (unsigned long long)r.T);
                break;
            }
            continue;
        }
        last_any = now;
        for (int i = 0; i < got && !stop; i++) {
            const dsb_frame *f = &fr[i];
            st->datagrams++;
            uint8_t type = f->len > 14u ? f->data[14] : 0u;
            if (f->truncated) {
                count_bad(&r, DSB_WR_OVERSIZE);
            } else if (type == DSB_MSG_STREAM) {
                if (r.t_first == 0) r.t_first = now;
                r.t_last = now;
                on_stream(&r, f);
            } else if (type == DSB_MSG_PASS_END) {
                int ended = on_pass_end(&r, f, &rec, on_pass, ctx, &stop, err);
                if (ended < 0) {
                    rc = -1;
                    stop = 1;
                } else if (ended && r.done) {
                    done_at = now;
                }
            } else {
                count_bad(&r, f->len < DSB_WIRE_HDR_BYTES ? DSB_WR_TRUNCATED : DSB_WR_BAD_TYPE);
            }
        }
        if (progress) bench_progress(&bar, (uint64_t)r.pass * r.T + r.unique);
    }
    if (progress) bench_progress_end(&bar, (uint64_t)r.pass * r.T + r.unique);
    st->kernel_drops = t->kernel_drops(t);
    dsb_stream_record_free(&rec);
    dsb_frames_free(fr, NET_BATCH);
    free(r.seen);
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
    uint64_t sent;
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
            a->t->send(a->t, a->fr, k);
            k = 0;
            if (a->rate_gbps > 0) { /* ahead of the cap: wait */
                double due = 8.0 * (double)a->sent * DSB_STREAM_PAYLOAD / (a->rate_gbps * 1e9);
                cm_sleep_s(due - (bench_now_s() - t0));
            }
        }
    }
    if (k) a->t->send(a->t, a->fr, k);
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
                if (fr[i].truncated ||
                    dsb_wire_stream_ack_check(fr[i].data, fr[i].len, p->n, &a) != DSB_WR_NONE ||
                    a.request_id != run_id || a.pass != qs[0].pass)
                    continue; /* not an answer to this pass */
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
    for (uint32_t q = 0; q < opened; q++) {
        qs[q].t->close(qs[q].t);
        dsb_frames_free(qs[q].fr, NET_BATCH);
    }
    dsb_stream_feed_close(feed);
    free(qs);
    return rc;
}
