/* The load-generating client: upload, single requests, closed/open loop. */
#include "dsb/client.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bench.h"
#include "dsb/solve.h"

#define TX_BATCH 32

struct dsb_client {
    dsb_transport *t;
    dsb_frame *rx;
    dsb_frame *tx;
    int ntx;
};

int dsb_client_open(const dsb_transport_config *tc, dsb_client **out, cm_err *err)
{
    dsb_client *c = cm_calloc(1, sizeof *c);
    if (dsb_transport_open(tc, &c->t, err) != 0) {
        free(c);
        return -1;
    }
    /* on loopback the transport takes the server's default MAC: use another */
    if (!tc->mac && !memcmp(c->t->mac, c->t->peer_mac, 6) && !strcmp(c->t->kind, "packet"))
        c->t->mac[5] ^= 0x03;
    c->rx = dsb_frames_alloc(DSB_TRANSPORT_BATCH);
    c->tx = dsb_frames_alloc(TX_BATCH);
    for (int i = 0; i < TX_BATCH; i++) c->tx[i].peer = c->t->default_peer;
    *out = c;
    return 0;
}

void dsb_client_close(dsb_client *c)
{
    if (!c) return;
    c->t->close(c->t);
    dsb_frames_free(c->rx, DSB_TRANSPORT_BATCH);
    dsb_frames_free(c->tx, TX_BATCH);
    free(c);
}

dsb_transport *dsb_client_transport(dsb_client *c) { return c->t; }

static int flush_tx(dsb_client *c)
{
    int sent = c->ntx ? c->t->send(c->t, c->tx, c->ntx) : 0;
    c->ntx = 0;
    return sent;
}

static uint8_t *tx_slot(dsb_client *c, uint32_t **len)
{
    if (c->ntx == TX_BATCH) flush_tx(c);
    dsb_frame *f = &c->tx[c->ntx++];
    *len = &f->len;
    return f->data;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int dsb_client_upload(dsb_client *c, const dsb_model *m, uint16_t model_id, uint32_t generation,
                      const dsb_upload_opts *opts, dsb_upload_report *rep, cm_err *err)
{
    dsb_upload_opts o = {0};
    if (opts) o = *opts;
    if (o.ack_timeout_s <= 0) o.ack_timeout_s = 0.2;
    if (!o.max_passes) o.max_passes = 20;
    memset(rep, 0, sizeof *rep);
    if (model_id >= DSB_STORE_SLOTS)
        return cm_fail(err, "upload: model id %u: expected < %u", model_id, DSB_STORE_SLOTS);
    if (m->packed_bytes > DSB_STORE_SLOT_BYTES)
        return cm_fail(err, "upload: %s model n=%u is %zu bytes: a store slot holds %u",
                       dsb_format_name(m->format), m->n, m->packed_bytes, DSB_STORE_SLOT_BYTES);
    int auto_gen = generation == 0;
    uint32_t gen = auto_gen ? (uint32_t)time(NULL) : generation;
    uint32_t total = (uint32_t)m->packed_bytes;
    uint32_t count = (total + DSB_WIRE_FRAG_BYTES - 1u) / DSB_WIRE_FRAG_BYTES;
    uint32_t *order = cm_malloc(count * sizeof *order);
    uint64_t rng = 12345;
    double t0 = bench_now_s();
    for (uint32_t pass = 0; pass < o.max_passes; pass++) {
        for (uint32_t i = 0; i < count; i++) order[i] = i;
        if (pass == 0 && o.shuffle)
            for (uint32_t i = count; i > 1; i--) {
                uint32_t j = (uint32_t)(splitmix(&rng) % i), tmp = order[i - 1];
                order[i - 1] = order[j];
                order[j] = tmp;
            }
        rep->passes++;
        for (uint32_t k = 0; k < count; k++) {
            if (pass == 0 && o.drop_every && k % o.drop_every == o.drop_every - 1) continue;
            for (int rep_i = 0; rep_i < (o.duplicate ? 2 : 1); rep_i++) {
                uint32_t *len;
                uint8_t *buf = tx_slot(c, &len);
                *len = (uint32_t)dsb_wire_build_load(buf, DSB_FRAME_BUF, c->t->peer_mac, c->t->mac,
                                                     model_id, 0, m->format, m->n, gen,
                                                     m->xi_default, m->packed, total, order[k]);
                rep->frags_sent++;
            }
        }
        flush_tx(c);
        double deadline = bench_now_s() + o.ack_timeout_s;
        for (;;) {
            double left = deadline - bench_now_s();
            if (left <= 0) break;
            int n = c->t->recv(c->t, c->rx, DSB_TRANSPORT_BATCH, (int64_t)(left * 1e9), err);
            if (n < 0) {
                free(order);
                return -1;
            }
            for (int i = 0; i < n; i++) {
                dsb_wire_msg msg;
                if (c->rx[i].truncated ||
                    dsb_wire_decode(c->rx[i].data, c->rx[i].len, 0, &msg) != DSB_WR_NONE)
                    continue;
                const dsb_wire_load_ack *a = &msg.u.ack;
                if (a->type != DSB_MSG_LOAD_ACK || a->model_id != model_id || a->generation != gen)
                    continue;
                if (a->status == DSB_ST_OK) {
                    rep->generation = gen;
                    rep->seconds = bench_now_s() - t0;
                    free(order);
                    return 0;
                }
                /* an automatic generation that is stale, or taken by another
                   image (two uploads within one clock second): the next one */
                if (auto_gen && (a->status == DSB_ST_STALE_GENERATION ||
                                 (a->status == DSB_ST_BAD_REQUEST &&
                                  a->flags == DSB_WR_LOAD_CONFLICT &&
                                  a->current_generation >= gen))) {
                    gen = a->current_generation + 1;
                    deadline = 0; /* next pass with the new generation */
                    break;
                }
                free(order);
                return cm_fail(err, "upload: model %u generation %u refused: %s (%s)", model_id,
                               gen, dsb_wire_status_name(a->status),
                               dsb_wire_reason_name(a->flags));
            }
            if (deadline == 0) break;
        }
    }
    free(order);
    return cm_fail(err, "upload: no LOAD_ACK for model %u generation %u after %u passes of %u "
                        "fragments (is the server running?)",
                   model_id, gen, o.max_passes, count);
}

static size_t build_req(dsb_client *c, uint8_t *buf, const dsb_req_params *p, uint32_t id,
                        uint64_t seed, const int16_t *h)
{
    return dsb_wire_build_solve(buf, DSB_FRAME_BUF, c->t->peer_mac, c->t->mac, p->model_id, id,
                                p->n, p->generation, p->steps, p->replicas, seed, p->xi, p->dt, h);
}

int dsb_client_solve(dsb_client *c, const dsb_req_params *p, uint32_t request_id, uint64_t seed,
                     const int16_t *h, double timeout_s, dsb_reply *out, cm_err *err)
{
    uint32_t *len;
    uint8_t *buf = tx_slot(c, &len);
    *len = (uint32_t)build_req(c, buf, p, request_id, seed, h);
    if (!*len) {
        c->ntx = 0;
        return cm_fail(err, "solve: request for n=%u does not fit one frame", p->n);
    }
    if (flush_tx(c) != 1) return cm_fail(err, "solve: the transport did not send the request");
    double deadline = bench_now_s() + timeout_s;
    for (;;) {
        double left = deadline - bench_now_s();
        if (left <= 0) return cm_fail(err, "solve: no RESULT for request %u within %.1f s",
                                      request_id, timeout_s);
        int n = c->t->recv(c->t, c->rx, DSB_TRANSPORT_BATCH, (int64_t)(left * 1e9), err);
        if (n < 0) return -1;
        for (int i = 0; i < n; i++) {
            dsb_wire_msg msg;
            if (c->rx[i].truncated ||
                dsb_wire_decode(c->rx[i].data, c->rx[i].len, 0, &msg) != DSB_WR_NONE)
                continue;
            if (msg.u.hdr.type != DSB_MSG_RESULT || msg.u.hdr.request_id != request_id) continue;
            out->hdr = msg.u.result;
            memcpy(out->spins, msg.payload, msg.payload_len);
            return 0;
        }
    }
}

/* ---- the load generator ---------------------------------------------------- */

typedef struct {
    int have;
    dsb_wire_result hdr;
    uint32_t spins[DSB_WIRE_MAX_N / 32];
} ref_slot;

static double pct(double *v, size_t n, double q) { return bench_percentile(v, n, q); }

/* The state of one load run.  Open loop: one thread sends on the Poisson
 * schedule and another takes the replies (one thread doing both could not
 * drain its socket above ~200 kreq/s on loopback); the sender writes t_send[i]
 * and state[i] before the frame leaves, so a reply always finds them.  Closed
 * loop: one thread, which sends only as replies return. */
typedef struct {
    dsb_client *c;
    const dsb_model *m;
    const dsb_load_config *lc;
    dsb_load_report *rep;
    uint64_t total;
    uint64_t *t_send;
    uint8_t *state; /* 0 unsent, 1 in flight, 2 answered (atomic bytes) */
    size_t nm, nrtt;
    double *rtt, *tq, *ts, *tt, *tr, *tres;
    ref_slot *refs;
    uint64_t t_last_reply, t_last_meas, last_activity;
    uint64_t inflight;           /* closed loop */
    _Atomic uint64_t answered;   /* replies taken (the receiver's count) */
    atomic_int stop;             /* open loop: the receiver's end */
    atomic_int rc;               /* -1 once either thread failed */
    cm_err *err;
    bench_progress_t prog;
} load_run;

/* Accounts for the n frames in c->rx. */
static void take_replies(load_run *L, int n)
{
    dsb_load_report *rep = L->rep;
    const dsb_load_config *lc = L->lc;
    const dsb_model *m = L->m;
    for (int f = 0; f < n; f++) {
        dsb_frame *fr = &L->c->rx[f];
        dsb_wire_msg msg;
        if (fr->truncated || dsb_wire_decode(fr->data, fr->len, 0, &msg) != DSB_WR_NONE ||
            msg.u.hdr.type != DSB_MSG_RESULT) {
            rep->bad_replies++;
            continue;
        }
        const dsb_wire_result *r = &msg.u.result;
        uint64_t id = r->request_id;
        if (id >= L->total || __atomic_load_n(&L->state[id], __ATOMIC_ACQUIRE) != 1) {
            rep->unexpected++;
            continue;
        }
        __atomic_store_n(&L->state[id], 2, __ATOMIC_RELAXED);
        if (lc->outstanding) L->inflight--; /* closed loop only (one thread) */
        rep->answered++;
        atomic_store_explicit(&L->answered, rep->answered, memory_order_release);
        rep->by_status[r->status]++;
        uint64_t t_rx = fr->t_ns;
        L->t_last_reply = t_rx;
        L->last_activity = t_rx;
        if (r->status != DSB_ST_OK) continue;
        rep->ok++;
        if (rep->n_generations < 4) {
            uint32_t g;
            for (g = 0; g < rep->n_generations; g++)
                if (rep->generations_seen[g] == r->generation) break;
            if (g == rep->n_generations) rep->generations_seen[rep->n_generations++] = r->generation;
        }
        if (id < lc->energy_checks) {
            const int16_t *h = lc->fields ? lc->fields + (size_t)(id % lc->n_fields) * m->n
                                          : NULL;
            rep->energy_checked++;
            if (msg.payload_len != 4u * m->words ||
                dsb_energy2(m, h, (const uint32_t *)msg.payload) != r->energy2)
                rep->energy_mismatch++;
        }
        if (id < lc->ref_checks) {
            L->refs[id].have = 1;
            L->refs[id].hdr = *r;
            memcpy(L->refs[id].spins, msg.payload, msg.payload_len);
        }
        if (id >= lc->warmup && L->nrtt < L->nm) {
            rep->measured_ok++;
            L->t_last_meas = t_rx;
            double rt = (double)(t_rx - L->t_send[id]) * 1e-3;
            double q = r->t_queue_ns * 1e-3, s = r->t_solve_ns * 1e-3, x = r->t_tx_ns * 1e-3;
            size_t k = L->nrtt++;
            L->rtt[k] = rt;
            L->tq[k] = q;
            L->ts[k] = s;
            L->tt[k] = x;
            L->tres[k] = q + s + x;
            L->tr[k] = rt - (q + s + x);
        }
    }
    if (lc->progress) bench_progress(&L->prog, rep->answered);
}

/* Open loop: the receiving thread. */
static void *receiver(void *arg)
{
    load_run *L = arg;
    cm_err e;
    while (!atomic_load_explicit(&L->stop, memory_order_acquire)) {
        int n = L->c->t->recv(L->c->t, L->c->rx, DSB_TRANSPORT_BATCH, 1000000, &e);
        if (n < 0) {
            *L->err = e;
            atomic_store(&L->rc, -1);
            break;
        }
        take_replies(L, n);
    }
    return NULL;
}

int dsb_client_run(dsb_client *c, const dsb_model *m, const dsb_load_config *lc,
                   dsb_load_report *rep, cm_err *err)
{
    memset(rep, 0, sizeof *rep);
    const dsb_req_params *rp = &lc->req;
    if (rp->n != m->n)
        return cm_fail(err, "load: request n=%u but the model has n=%u", rp->n, m->n);
    if (!lc->outstanding && !(lc->rate > 0))
        return cm_fail(err, "load: give a closed-loop window or an open-loop rate");
    if (lc->fields && m->n > DSB_WIRE_MAX_FIELD_N)
        return cm_fail(err, "load: a field of n=%u int16 does not fit one frame (n <= %u)", m->n,
                       DSB_WIRE_MAX_FIELD_N);
    uint64_t total = lc->warmup + lc->requests;
    if (total == 0 || total > 0xFFFFFFFFull)
        return cm_fail(err, "load: %llu requests: expected 1 .. 2^32-1",
                       (unsigned long long)total);
    double drain = lc->drain_s > 0 ? lc->drain_s : 2.0;
    load_run L;
    memset(&L, 0, sizeof L);
    L.c = c;
    L.m = m;
    L.lc = lc;
    L.rep = rep;
    L.err = err;
    L.total = total;
    L.t_send = cm_calloc(total, sizeof *L.t_send);
    L.state = cm_calloc(total, 1);
    L.nm = lc->requests ? lc->requests : 1;
    L.rtt = cm_malloc(L.nm * sizeof(double));
    L.tq = cm_malloc(L.nm * sizeof(double));
    L.ts = cm_malloc(L.nm * sizeof(double));
    L.tt = cm_malloc(L.nm * sizeof(double));
    L.tr = cm_malloc(L.nm * sizeof(double));
    L.tres = cm_malloc(L.nm * sizeof(double));
    L.refs = cm_calloc(lc->ref_checks ? lc->ref_checks : 1, sizeof *L.refs);
    uint64_t *t_send = L.t_send;
    uint8_t *state = L.state;
    uint64_t arr = lc->arrival_seed ? lc->arrival_seed : 42;
    uint64_t next = 0;
    uint64_t t_first = 0, t_last_send = 0, t_first_meas = 0;
    double mean_gap_ns = lc->rate > 0 ? 1e9 / lc->rate : 0;
    uint64_t next_due = 0;
    if (lc->progress) bench_progress_start(&L.prog, "requests", total);

#define SEND_ONE()                                                                              \
    do {                                                                                        \
        uint64_t i_ = next++;                                                                   \
        const int16_t *h_ =                                                                     \
            lc->fields ? lc->fields + (size_t)(i_ % lc->n_fields) * m->n : NULL;                \
        uint32_t *len_;                                                                         \
        uint8_t *b_ = tx_slot(c, &len_);                                                        \
        uint64_t now_ = bench_now_ns();                                                         \
        t_send[i_] = now_;                                                                      \
        *len_ = (uint32_t)build_req(c, b_, rp, (uint32_t)i_, lc->seed_base + i_, h_);           \
        __atomic_store_n(&state[i_], 1, __ATOMIC_RELEASE);                                      \
        if (lc->outstanding) L.inflight++;                                                      \
        rep->sent++;                                                                            \
        if (i_ == 0) t_first = now_;                                                            \
        if (i_ == lc->warmup) t_first_meas = now_;                                              \
        t_last_send = now_;                                                                     \
    } while (0)

    t_first = bench_now_ns();
    L.last_activity = t_first;
    if (lc->outstanding) { /* closed loop: one thread */
        while (next < total && L.inflight < lc->outstanding) SEND_ONE();
        flush_tx(c);
        for (;;) {
            if (next == total && L.inflight == 0) break;
            /* lost = unanswered `drain` seconds after the last reply when the
               window is stuck */
            if (bench_now_ns() - L.last_activity > (uint64_t)(drain * 1e9)) break;
            int n = c->t->recv(c->t, c->rx, DSB_TRANSPORT_BATCH, 10000000, err);
            if (n < 0) {
                atomic_store(&L.rc, -1);
                break;
            }
            take_replies(&L, n);
            while (next < total && L.inflight < lc->outstanding) SEND_ONE();
            flush_tx(c);
        }
    } else { /* open loop: this thread sends on schedule, another takes the replies */
        pthread_t rt;
        if (pthread_create(&rt, NULL, receiver, &L) != 0) {
            atomic_store(&L.rc, cm_fail(err, "load: could not start the receiving thread"));
        } else {
            next_due = t_first;
            while (next < total && atomic_load(&L.rc) == 0) {
                uint64_t now = bench_now_ns();
                int k = 0;
                while (next < total && next_due <= now && k < 4 * TX_BATCH) {
                    SEND_ONE();
                    double u = ((double)(splitmix(&arr) >> 11) + 0.5) * 0x1p-53;
                    next_due += (uint64_t)(-log(u) * mean_gap_ns);
                    k++;
                }
                flush_tx(c);
                if (!k && next_due > now + 200000) { /* far ahead: nap, else spin */
                    struct timespec ts = {0, (long)(next_due - now - 100000)};
                    nanosleep(&ts, NULL);
                }
            }
            /* lost = unanswered `drain` seconds after the last send */
            while (atomic_load_explicit(&L.answered, memory_order_acquire) < rep->sent &&
                   bench_now_ns() - t_last_send < (uint64_t)(drain * 1e9)) {
                struct timespec ts = {0, 1000000};
                nanosleep(&ts, NULL);
            }
            atomic_store_explicit(&L.stop, 1, memory_order_release);
            pthread_join(rt, NULL);
        }
    }
#undef SEND_ONE
    int rc = atomic_load(&L.rc);
    size_t nrtt = L.nrtt;
    double *rtt = L.rtt, *tq = L.tq, *ts = L.ts, *tt = L.tt, *tr = L.tr, *tres = L.tres;
    ref_slot *refs = L.refs;
    uint64_t t_last_reply = L.t_last_reply, t_last_meas = L.t_last_meas;
    if (lc->progress) bench_progress_end(&L.prog, rep->answered);
    for (uint64_t i = 0; i < total; i++) {
        if (state[i] == 1) rep->lost++;
        if (i >= lc->warmup && state[i]) rep->measured_sent++;
    }
    rep->elapsed_s = (double)((t_last_reply > t_last_send ? t_last_reply : t_last_send) - t_first) * 1e-9;
    rep->offered_rate = lc->outstanding ? 0 : lc->rate;
    if (rep->measured_sent > 1 && t_last_send > t_first_meas)
        rep->emitted_rate = (double)(rep->measured_sent - 1) / ((double)(t_last_send - t_first_meas) * 1e-9);
    if (rep->measured_ok > 0 && t_last_meas > t_first_meas)
        rep->achieved_rate = (double)rep->measured_ok / ((double)(t_last_meas - t_first_meas) * 1e-9);
    double sum = 0;
    for (size_t i = 0; i < nrtt; i++) sum += rtt[i];
    rep->rtt_mean = nrtt ? sum / (double)nrtt : NAN;
    rep->rtt_p50 = pct(rtt, nrtt, 50);
    rep->rtt_p99 = pct(rtt, nrtt, 99);
    rep->rtt_p999 = pct(rtt, nrtt, 99.9);
    rep->queue_p50 = pct(tq, nrtt, 50);
    rep->queue_p99 = pct(tq, nrtt, 99);
    rep->solve_p50 = pct(ts, nrtt, 50);
    rep->solve_p99 = pct(ts, nrtt, 99);
    rep->tx_p50 = pct(tt, nrtt, 50);
    rep->tx_p99 = pct(tt, nrtt, 99);
    rep->res_p50 = pct(tres, nrtt, 50);
    rep->res_p99 = pct(tres, nrtt, 99);
    rep->residual_p50 = pct(tr, nrtt, 50);
    rep->residual_p99 = pct(tr, nrtt, 99);
    rep->kernel_drops = c->t->kernel_drops(c->t);

    /* CPU-reference check of the first results (bit-exact) */
    if (rc == 0) {
        dsb_result res;
        dsb_result_init(&res, m->n, rp->replicas, 0);
        for (uint32_t i = 0; i < lc->ref_checks && i < total; i++) {
            if (!refs[i].have) continue;
            dsb_params p;
            dsb_params_default(&p);
            p.replicas = rp->replicas;
            p.steps = rp->steps;
            p.dt = rp->dt;
            p.xi = rp->xi;
            p.seed = lc->seed_base + i;
            const int16_t *h = lc->fields ? lc->fields + (size_t)(i % lc->n_fields) * m->n : NULL;
            rep->ref_checked++;
            cm_err e2;
            if (dsb_solve_cpu(m, h, &p, 0, &res, &e2) != 0 ||
                res.best_energy2 != refs[i].hdr.energy2 ||
                res.best_replica != refs[i].hdr.best_replica ||
                memcmp(res.best_spins, refs[i].spins, 4u * m->words) != 0)
                rep->ref_mismatch++;
        }
        dsb_result_free(&res);
    }
    free(t_send);
    free(state);
    free(rtt);
    free(tq);
    free(ts);
    free(tt);
    free(tr);
    free(tres);
    free(refs);
    return rc;
}

void dsb_load_report_print(FILE *f, const dsb_load_config *lc, const dsb_load_report *r)
{
    if (lc->outstanding)
        fprintf(f, "closed loop, %u outstanding", lc->outstanding);
    else
        fprintf(f, "open loop, Poisson %.0f req/s offered", lc->rate);
    fprintf(f, "; n=%u K=%u B=%u; %llu requests after %llu warm-up\n", lc->req.n,
            lc->req.steps, lc->req.replicas, (unsigned long long)lc->requests,
            (unsigned long long)lc->warmup);
    fprintf(f, "  %-22s %12s %12s %12s %12s\n", "", "p50 us", "p99 us", "p99.9 us", "mean us");
    fprintf(f, "  %-22s %12.1f %12.1f %12.1f %12.1f\n", "client RTT", r->rtt_p50, r->rtt_p99,
            r->rtt_p999, r->rtt_mean);
    fprintf(f, "  %-22s %12.1f %12.1f\n", "server residence", r->res_p50, r->res_p99);
    fprintf(f, "  %-22s %12.1f %12.1f\n", "  queue", r->queue_p50, r->queue_p99);
    fprintf(f, "  %-22s %12.1f %12.1f\n", "  solve", r->solve_p50, r->solve_p99);
    fprintf(f, "  %-22s %12.1f %12.1f\n", "  transmit", r->tx_p50, r->tx_p99);
    fprintf(f, "  %-22s %12.1f %12.1f\n", "RTT - residence", r->residual_p50, r->residual_p99);
    fprintf(f, "  rates: emitted %.1f req/s, achieved %.1f req/s (OK replies)\n", r->emitted_rate,
            r->achieved_rate);
    fprintf(f, "  sent %llu, answered %llu (ok %llu", (unsigned long long)r->sent,
            (unsigned long long)r->answered, (unsigned long long)r->ok);
    for (int s = 1; s < DSB_ST_COUNT; s++)
        if (r->by_status[s])
            fprintf(f, ", %s %llu", dsb_wire_status_name((unsigned)s),
                    (unsigned long long)r->by_status[s]);
    fprintf(f, "), lost %llu (%.2f%%), unexpected %llu, bad %llu, client socket drops %llu\n",
            (unsigned long long)r->lost, r->sent ? 100.0 * (double)r->lost / (double)r->sent : 0.0,
            (unsigned long long)r->unexpected, (unsigned long long)r->bad_replies,
            (unsigned long long)r->kernel_drops);
    fprintf(f, "  checks: energy %llu/%llu match, CPU reference %llu/%llu bit-exact\n",
            (unsigned long long)(r->energy_checked - r->energy_mismatch),
            (unsigned long long)r->energy_checked,
            (unsigned long long)(r->ref_checked - r->ref_mismatch),
            (unsigned long long)r->ref_checked);
}

void dsb_load_report_json(json_w *w, const dsb_load_config *lc, const dsb_load_report *r)
{
    json_obj_begin(w);
    json_kv_str(w, "mode", lc->outstanding ? "closed" : "open");
    json_kv_u64(w, "outstanding", lc->outstanding);
    json_kv_f64(w, "offered_rate", lc->outstanding ? NAN : lc->rate);
    json_kv_u64(w, "n", lc->req.n);
    json_kv_u64(w, "steps", lc->req.steps);
    json_kv_u64(w, "replicas", lc->req.replicas);
    json_kv_f64(w, "dt", lc->req.dt);
    json_kv_f64(w, "xi", lc->req.xi);
    json_kv_u64(w, "model_id", lc->req.model_id);
    json_kv_u64(w, "seed_base", lc->seed_base);
    json_kv_u64(w, "requests", lc->requests);
    json_kv_u64(w, "warmup", lc->warmup);
    json_kv_u64(w, "sent", r->sent);
    json_kv_u64(w, "answered", r->answered);
    json_kv_u64(w, "ok", r->ok);
    json_kv_u64(w, "lost", r->lost);
    json_kv_u64(w, "unexpected", r->unexpected);
    json_kv_u64(w, "bad_replies", r->bad_replies);
    json_kv_u64(w, "client_socket_drops", r->kernel_drops);
    json_key(w, "by_status");
    json_obj_begin(w);
    for (int s = 0; s < DSB_ST_COUNT; s++)
        json_kv_u64(w, dsb_wire_status_name((unsigned)s), r->by_status[s]);
    json_obj_end(w);
    json_kv_f64(w, "elapsed_s", r->elapsed_s);
    json_kv_f64(w, "emitted_rate", r->emitted_rate);
    json_kv_f64(w, "achieved_rate", r->achieved_rate);
    json_kv_f64(w, "rtt_p50_us", r->rtt_p50);
    json_kv_f64(w, "rtt_p99_us", r->rtt_p99);
    json_kv_f64(w, "rtt_p999_us", r->rtt_p999);
    json_kv_f64(w, "rtt_mean_us", r->rtt_mean);
    json_kv_f64(w, "residence_p50_us", r->res_p50);
    json_kv_f64(w, "residence_p99_us", r->res_p99);
    json_kv_f64(w, "queue_p50_us", r->queue_p50);
    json_kv_f64(w, "queue_p99_us", r->queue_p99);
    json_kv_f64(w, "solve_p50_us", r->solve_p50);
    json_kv_f64(w, "solve_p99_us", r->solve_p99);
    json_kv_f64(w, "transmit_p50_us", r->tx_p50);
    json_kv_f64(w, "transmit_p99_us", r->tx_p99);
    json_kv_f64(w, "residual_p50_us", r->residual_p50);
    json_kv_f64(w, "residual_p99_us", r->residual_p99);
    json_kv_u64(w, "energy_checked", r->energy_checked);
    json_kv_u64(w, "energy_mismatch", r->energy_mismatch);
    json_kv_u64(w, "reference_checked", r->ref_checked);
    json_kv_u64(w, "reference_mismatch", r->ref_mismatch);
    json_obj_end(w);
}
