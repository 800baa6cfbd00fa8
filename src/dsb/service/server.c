/* The server: receive loop (decode, store, submit), reply path, counters. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bench.h"
#include "dsb/nic.h"
#include "dsb/service.h"

struct dsb_server {
    dsb_server_config cfg;
    dsb_transport *t;
    dsb_store *store;
    dsb_dispatcher *disp;
    /* --dispatch gpu: the GPU does everything but moving frames */
    dsb_resident *res;
    dsb_nic_standin *nic;
    dsb_nic_stats nic_final;
    uint32_t gpu_workers; /* proxy, gpu: persistent worker blocks (kept past shutdown) */
    uint64_t abandoned;
    atomic_int stop;
    _Atomic uint64_t c[DSB_C_COUNT];
    _Atomic uint64_t bad[DSB_WR_COUNT];
    _Atomic uint64_t status[DSB_ST_COUNT];
    pthread_t thread;
    int thread_started;
    int run_rc;
    cm_err run_err;
};

static const char *const counter_names[DSB_C_COUNT] = {
    "rx_frames",     "rx_bytes",      "tx_frames",       "tx_failed",      "load_frags",
    "load_dups",     "load_complete", "load_reacks",     "load_rejected",  "solve_rx",
    "solve_queued",  "solve_ok",      "solve_failed",    "solve_rejected", "overloaded",
    "bad_frames",    "unanswered",    "kernel_drops",    "not_for_us",     "load_deferred",
    "abandoned"};

const char *dsb_counter_name(dsb_counter_id id)
{
    return id < DSB_C_COUNT ? counter_names[id] : "invalid";
}

void dsb_counters_print(FILE *f, const char *prefix, const dsb_counters *c)
{
    fprintf(f, "%s", prefix ? prefix : "");
    for (int i = 0; i < DSB_C_COUNT; i++)
        fprintf(f, "%s%s=%llu", i ? " " : "", counter_names[i], (unsigned long long)c->c[i]);
    fprintf(f, " queue=%llu", (unsigned long long)c->queue_depth);
    for (int r = 1; r < DSB_WR_COUNT; r++)
        if (c->bad[r]) fprintf(f, " bad.%s=%llu", dsb_wire_reason_name((unsigned)r),
                               (unsigned long long)c->bad[r]);
    for (int s = 1; s < DSB_ST_COUNT; s++)
        if (c->status[s]) fprintf(f, " sent.%s=%llu", dsb_wire_status_name((unsigned)s),
                                  (unsigned long long)c->status[s]);
    fprintf(f, "\n");
    fflush(f);
}

static inline void cnt(dsb_server *s, dsb_counter_id id, uint64_t v)
{
    atomic_fetch_add_explicit(&s->c[id], v, memory_order_relaxed);
}

static uint32_t clamp32(uint64_t v) { return v > 0xFFFFFFFFull ? 0xFFFFFFFFu : (uint32_t)v; }

/* Called by dispatcher workers: builds and sends the RESULT, releases the model. */
static void server_reply(void *ctx, dsb_job *job, const dsb_job_result *r)
{
    dsb_server *s = ctx;
    uint8_t buf[DSB_WIRE_MAX_FRAME];
    dsb_wire_hdr req;
    memcpy(&req, &job->req, sizeof req);
    uint64_t now = bench_now_ns();
    size_t len = dsb_wire_build_result(
        buf, sizeof buf, &req, r->status, 0, job->model->generation, r->best_replica, r->energy2,
        r->worker_id, clamp32(r->t_start_ns - job->t_rx_ns), clamp32(r->t_end_ns - r->t_start_ns),
        clamp32(now - r->t_end_ns), r->spins);
    dsb_store_release(job->model);
    job->model = NULL;
    cnt(s, r->status == DSB_ST_OK ? DSB_C_SOLVE_OK : DSB_C_SOLVE_FAILED, 1);
    atomic_fetch_add_explicit(&s->status[r->status < DSB_ST_COUNT ? r->status : DSB_ST_INTERNAL],
                              1, memory_order_relaxed);
    dsb_frame f = {.data = buf, .cap = sizeof buf, .len = (uint32_t)len, .peer = job->peer};
    if (len && s->t->send(s->t, &f, 1) == 1)
        cnt(s, DSB_C_TX_FRAMES, 1);
    else
        cnt(s, DSB_C_TX_FAILED, 1);
}

/* Each zero field of a gpu config takes its default (dsb_resident_config_default);
 * the fields a caller set are kept. */
static void gpu_config_fill(dsb_resident_config *c)
{
    /* every field below: a new one needs its line */
    _Static_assert(sizeof(dsb_resident_config) == 8 * sizeof(uint32_t),
                   "dsb_resident_config changed: update gpu_config_fill");
    dsb_resident_config d;
    dsb_resident_config_default(&d);
#define FILL0(f) \
    if (!c->f) c->f = d.f
    FILL0(pipe.placement);
    FILL0(pipe.smem_bytes);
    FILL0(pipe.reserve);
    FILL0(pipe.max_workers);
    FILL0(pipe.poll_ns);
    FILL0(pipe.max_steps);
    FILL0(pipe.sums);
    FILL0(tx_batch);
#undef FILL0
}

/* --dispatch gpu: the GPU-resident core and the NIC stand-in that feeds it;
 * no store, no dispatcher and no receive loop on the CPU. */
static int gpu_server_create(dsb_server *s, dsb_server **out, cm_err *err)
{
    dsb_resident_config rc = s->cfg.gpu;
    gpu_config_fill(&rc);
    dsb_nic_queues *q = NULL;
    if (dsb_resident_create(&rc, &q, &s->res, err) != 0 ||
        dsb_nic_standin_start(s->t, q, &s->nic, err) != 0 ||
        dsb_resident_start(s->res, err) != 0) {
        dsb_nic_standin_stop(s->nic, NULL);
        dsb_resident_destroy(s->res);
        s->t->close(s->t);
        free(s);
        return -1;
    }
    s->cfg.gpu = rc;
    s->gpu_workers = dsb_resident_workers(s->res);
    *out = s;
    return 0;
}

/* The counters of a gpu server: the agents' (receive, store, transmit) and
 * the stand-in's (what went over the socket). */
static void gpu_counters(dsb_server *s, dsb_counters *out)
{
    dsb_res_counts g;
    dsb_resident_counts(s->res, &g);
    dsb_nic_stats n;
    if (s->nic)
        dsb_nic_standin_stats(s->nic, &n);
    else
        n = s->nic_final;
    static const struct {
        dsb_counter_id to;
        dsb_res_counter from;
    } map[] = {{DSB_C_RX_FRAMES, DSB_RES_RX_FRAMES},
               {DSB_C_RX_BYTES, DSB_RES_RX_BYTES},
               {DSB_C_LOAD_FRAGS, DSB_RES_LOAD_FRAGS},
               {DSB_C_LOAD_DUPLICATES, DSB_RES_LOAD_DUPLICATES},
               {DSB_C_LOAD_COMPLETED, DSB_RES_LOAD_COMPLETED},
               {DSB_C_LOAD_REACKS, DSB_RES_LOAD_REACKS},
               {DSB_C_LOAD_REJECTED, DSB_RES_LOAD_REJECTED},
               {DSB_C_LOAD_DEFERRED, DSB_RES_LOAD_DEFERRED},
               {DSB_C_SOLVE_RX, DSB_RES_SOLVE_RX},
               {DSB_C_SOLVE_QUEUED, DSB_RES_SOLVE_QUEUED},
               {DSB_C_SOLVE_OK, DSB_RES_SOLVE_OK},
               {DSB_C_SOLVE_FAILED, DSB_RES_SOLVE_FAILED},
               {DSB_C_SOLVE_REJECTED, DSB_RES_SOLVE_REJECTED},
               {DSB_C_OVERLOADED, DSB_RES_OVERLOADED},
               {DSB_C_BAD_FRAMES, DSB_RES_BAD_FRAMES},
               {DSB_C_UNANSWERED, DSB_RES_UNANSWERED}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) out->c[map[i].to] = g.c[map[i].from];
    out->c[DSB_C_TX_FRAMES] = n.tx_frames;
    out->c[DSB_C_TX_FAILED] = n.tx_failed + n.tx_bad_peer;
    /* frames from peers beyond the stand-in's table are still solved; their
       replies are the tx_bad_peer ones, counted once, as failed sends */
    out->c[DSB_C_KERNEL_DROPS] = s->t->kernel_drops(s->t) + n.rx_ring_full;
    out->c[DSB_C_NOT_FOR_US] = s->t->not_for_us;
    out->c[DSB_C_ABANDONED] = s->abandoned;
    for (int i = 0; i < DSB_WR_COUNT; i++) out->bad[i] = g.bad[i];
    for (int i = 0; i < DSB_ST_COUNT; i++) out->status[i] = g.status[i];
    /* admitted and not yet answered */
    const uint64_t pub = dsb_resident_published(s->res);
    const uint64_t done = g.c[DSB_RES_SOLVE_OK] + g.c[DSB_RES_SOLVE_FAILED];
    out->queue_depth = pub > done ? pub - done : 0;
}

int dsb_server_create(const dsb_server_config *c, dsb_server **out, cm_err *err)
{
    dsb_server *s = cm_calloc(1, sizeof *s);
    s->cfg = *c;
    if (!s->cfg.rx_batch) s->cfg.rx_batch = 32;
    if (s->cfg.rx_batch > DSB_TRANSPORT_BATCH) {
        free(s);
        return cm_fail(err, "server: receive batch %u: expected at most %d", c->rx_batch,
                       DSB_TRANSPORT_BATCH);
    }
    const char *dispatch = c->dispatch ? c->dispatch : "cpu";
    if (strcmp(dispatch, "cpu") != 0 && strcmp(dispatch, "launch") != 0 &&
        strcmp(dispatch, "proxy") != 0 && strcmp(dispatch, "gpu") != 0) {
        free(s);
        return cm_fail(err, "--dispatch %s: expected cpu, launch, proxy or gpu", dispatch);
    }
    if (dsb_transport_open(&c->transport, &s->t, err) != 0) {
        free(s);
        return -1;
    }
    if (!strcmp(dispatch, "gpu")) return gpu_server_create(s, out, err);
    s->store = dsb_store_create();
    int drc = !strcmp(dispatch, "launch")
                  ? dsb_dispatch_launch_create(&c->launch, server_reply, s, &s->disp, err)
              : !strcmp(dispatch, "proxy")
                  ? dsb_dispatch_proxy_create(&c->proxy, server_reply, s, &s->disp, err)
                  : dsb_dispatch_cpu_create(&c->cpu, server_reply, s, &s->disp, err);
    if (drc != 0) {
        dsb_store_destroy(s->store);
        s->t->close(s->t);
        free(s);
        return -1;
    }
    s->gpu_workers = s->disp->gpu_workers;
    *out = s;
    return 0;
}

typedef struct {
    dsb_frame *f;
    int n;
} txq_t;

static uint8_t *txq_slot(txq_t *q, const dsb_peer *peer)
{
    dsb_frame *f = &q->f[q->n++];
    f->peer = *peer;
    return f->data;
}

static void reply_status(dsb_server *s, txq_t *q, const dsb_wire_msg *m, const dsb_peer *peer,
                         dsb_wire_status st, dsb_wire_reason why, uint32_t frags,
                         uint32_t cur_gen)
{
    uint8_t *out = txq_slot(q, peer);
    size_t len;
    if (m->u.hdr.type == DSB_MSG_LOAD)
        len = dsb_wire_build_load_ack(out, DSB_WIRE_MAX_FRAME, &m->u.hdr, (uint16_t)st,
                                      (uint8_t)why, m->u.hdr.generation, frags, cur_gen);
    else
        len = dsb_wire_build_result(out, DSB_WIRE_MAX_FRAME, &m->u.hdr, (uint16_t)st,
                                    (uint8_t)why, cur_gen, 0, 0, 0, 0, 0, 0, NULL);
    q->f[q->n - 1].len = (uint32_t)len;
    atomic_fetch_add_explicit(&s->status[st], 1, memory_order_relaxed);
}

static void reply_error(dsb_server *s, txq_t *q, const dsb_wire_msg *m, const dsb_peer *peer,
                        dsb_wire_reason why, uint32_t frags, uint32_t cur_gen)
{
    reply_status(s, q, m, peer, dsb_wire_reason_status(why), why, frags, cur_gen);
}

static void handle_frame(dsb_server *s, dsb_frame *fr, txq_t *q)
{
    cnt(s, DSB_C_RX_FRAMES, 1);
    cnt(s, DSB_C_RX_BYTES, fr->len);
    dsb_wire_msg m;
    dsb_wire_reason why =
        fr->truncated ? DSB_WR_OVERSIZE : dsb_wire_decode(fr->data, fr->len, 1, &m);
    if (why != DSB_WR_NONE) {
        cnt(s, DSB_C_BAD_FRAMES, 1);
        atomic_fetch_add_explicit(&s->bad[why], 1, memory_order_relaxed);
        if (!dsb_wire_reason_answerable(why)) {
            cnt(s, DSB_C_UNANSWERED, 1);
            return;
        }
        if (m.u.hdr.type == DSB_MSG_SOLVE) {
            cnt(s, DSB_C_SOLVE_RX, 1);
            cnt(s, DSB_C_SOLVE_REJECTED, 1);
            reply_error(s, q, &m, &fr->peer, why, 0, 0);
        } else {
            cnt(s, DSB_C_LOAD_REJECTED, 1);
            reply_error(s, q, &m, &fr->peer, why, 0, 0);
        }
        return;
    }
    if (m.u.hdr.type == DSB_MSG_LOAD) {
        dsb_store_load_out lo;
        dsb_store_load(s->store, &m.u.load, m.payload, &lo);
        switch (lo.action) {
        case DSB_LOAD_STORED: cnt(s, DSB_C_LOAD_FRAGS, 1); break;
        case DSB_LOAD_DUPLICATE:
            cnt(s, DSB_C_LOAD_FRAGS, 1);
            cnt(s, DSB_C_LOAD_DUPLICATES, 1);
            break;
        case DSB_LOAD_COMPLETED:
        case DSB_LOAD_REACK: {
            cnt(s, DSB_C_LOAD_FRAGS, 1);
            cnt(s, lo.action == DSB_LOAD_COMPLETED ? DSB_C_LOAD_COMPLETED : DSB_C_LOAD_REACKS, 1);
            uint8_t *out = txq_slot(q, &fr->peer);
            q->f[q->n - 1].len = (uint32_t)dsb_wire_build_load_ack(
                out, DSB_WIRE_MAX_FRAME, &m.u.hdr, DSB_ST_OK, 0, m.u.hdr.generation,
                lo.frags_received, lo.current_generation);
            atomic_fetch_add_explicit(&s->status[DSB_ST_OK], 1, memory_order_relaxed);
            break;
        }
        case DSB_LOAD_REJECTED:
            cnt(s, DSB_C_BAD_FRAMES, 1);
            atomic_fetch_add_explicit(&s->bad[lo.reason], 1, memory_order_relaxed);
            cnt(s, DSB_C_LOAD_REJECTED, 1);
            reply_error(s, q, &m, &fr->peer, lo.reason, lo.frags_received,
                        lo.current_generation);
            break;
        }
        return;
    }
    /* SOLVE */
    cnt(s, DSB_C_SOLVE_RX, 1);
    const dsb_wire_solve *rq = &m.u.solve;
    const dsb_store_model *mod =
        dsb_store_acquire(s->store, rq->model_id, rq->n, rq->generation, &why);
    if (!mod || (why = s->disp->check(s->disp, rq, &mod->model)) != DSB_WR_NONE) {
        uint32_t cur = dsb_store_generation(s->store, rq->model_id);
        dsb_store_release(mod);
        cnt(s, DSB_C_BAD_FRAMES, 1);
        atomic_fetch_add_explicit(&s->bad[why], 1, memory_order_relaxed);
        cnt(s, DSB_C_SOLVE_REJECTED, 1);
        reply_error(s, q, &m, &fr->peer, why, 0, cur);
        return;
    }
    static _Thread_local dsb_job job;
    job.req = *rq;
    job.has_field = m.payload_len != 0;
    if (job.has_field) memcpy(job.field, m.payload, m.payload_len);
    job.model = mod;
    job.peer = fr->peer;
    job.t_rx_ns = fr->t_ns;
    if (s->disp->submit(s->disp, &job) != 0) {
        uint32_t gen = mod->generation;
        dsb_store_release(mod);
        cnt(s, DSB_C_OVERLOADED, 1);
        reply_status(s, q, &m, &fr->peer, DSB_ST_OVERLOADED, DSB_WR_NONE, 0, gen);
        return;
    }
    cnt(s, DSB_C_SOLVE_QUEUED, 1);
}

int dsb_server_run(dsb_server *s, cm_err *err)
{
    if (s->res) { /* gpu: the GPU agents and the NIC stand-in do the work */
        while (!atomic_load(&s->stop)) {
            struct timespec ts = {0, 20 * 1000000L};
            nanosleep(&ts, NULL);
        }
        return 0;
    }
    int batch = (int)s->cfg.rx_batch;
    dsb_frame *rx = dsb_frames_alloc(batch);
    txq_t q = {.f = dsb_frames_alloc(batch), .n = 0};
    int rc = 0;
    uint64_t last_poll = 0;
    while (!atomic_load(&s->stop)) {
        int n = s->t->recv(s->t, rx, batch, 50 * 1000000ll, err);
        if (n < 0) {
            rc = -1;
            break;
        }
        q.n = 0;
        for (int i = 0; i < n; i++) handle_frame(s, &rx[i], &q);
        if (q.n) {
            int sent = s->t->send(s->t, q.f, q.n);
            cnt(s, DSB_C_TX_FRAMES, (uint64_t)sent);
            if (sent < q.n) cnt(s, DSB_C_TX_FAILED, (uint64_t)(q.n - sent));
        }
        uint64_t now = bench_now_ns();
        if (now - last_poll > 100000000ull) {
            last_poll = now;
            atomic_store(&s->c[DSB_C_KERNEL_DROPS], s->t->kernel_drops(s->t));
            atomic_store(&s->c[DSB_C_NOT_FOR_US], s->t->not_for_us);
        }
    }
    atomic_store(&s->c[DSB_C_KERNEL_DROPS], s->t->kernel_drops(s->t));
    atomic_store(&s->c[DSB_C_NOT_FOR_US], s->t->not_for_us);
    dsb_frames_free(rx, batch);
    dsb_frames_free(q.f, batch);
    return rc;
}

void dsb_server_stop(dsb_server *s) { atomic_store(&s->stop, 1); }

void dsb_server_counters(dsb_server *s, dsb_counters *out)
{
    memset(out, 0, sizeof *out);
    if (s->res) {
        gpu_counters(s, out);
        return;
    }
    for (int i = 0; i < DSB_C_COUNT; i++) out->c[i] = atomic_load(&s->c[i]);
    for (int i = 0; i < DSB_WR_COUNT; i++) out->bad[i] = atomic_load(&s->bad[i]);
    for (int i = 0; i < DSB_ST_COUNT; i++) out->status[i] = atomic_load(&s->status[i]);
    out->queue_depth = s->disp ? s->disp->depth(s->disp) : 0;
}

int dsb_server_nic_stats(dsb_server *s, dsb_nic_stats *out)
{
    if (!s->res) return -1;
    if (s->nic)
        dsb_nic_standin_stats(s->nic, out);
    else
        *out = s->nic_final;
    return 0;
}

uint32_t dsb_server_gpu_workers(dsb_server *s) { return s->gpu_workers; }

uint16_t dsb_server_port(dsb_server *s) { return s->t->port; }
const uint8_t *dsb_server_mac(dsb_server *s) { return s->t->mac; }

static void *server_thread(void *arg)
{
    dsb_server *s = arg;
    s->run_rc = dsb_server_run(s, &s->run_err);
    return NULL;
}

int dsb_server_start_thread(dsb_server *s, cm_err *err)
{
    if (pthread_create(&s->thread, NULL, server_thread, s) != 0)
        return cm_fail(err, "server: could not start the receive thread");
    s->thread_started = 1;
    return 0;
}

void dsb_server_join_thread(dsb_server *s)
{
    if (!s->thread_started) return;
    dsb_server_stop(s);
    pthread_join(s->thread, NULL);
    s->thread_started = 0;
}

/* gpu: waits (at most 2 s) until the counters stop moving, so that requests
 * already received are answered, then stops agents, workers and stand-in. */
static void gpu_server_shutdown(dsb_server *s)
{
    if (!s->nic) return;
    dsb_counters a, b;
    gpu_counters(s, &a);
    for (int i = 0; i < 100; i++) {
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
        gpu_counters(s, &b);
        if (!memcmp(&a, &b, sizeof a) && b.queue_depth == 0) break;
        a = b;
    }
    cm_err err;
    if (dsb_resident_stop(s->res, &s->abandoned, &err) != 0)
        fprintf(stderr, "dsb serve: %s\n", err.msg);
    dsb_nic_standin_stop(s->nic, &s->nic_final);
    s->nic = NULL;
}

void dsb_server_shutdown(dsb_server *s)
{
    dsb_server_join_thread(s);
    if (s->res) gpu_server_shutdown(s);
    if (s->disp) {
        s->disp->destroy(s->disp); /* answers what is still queued */
        s->disp = NULL;
    }
}

void dsb_server_destroy(dsb_server *s)
{
    if (!s) return;
    dsb_server_shutdown(s);
    dsb_resident_destroy(s->res);
    s->t->close(s->t);
    dsb_store_destroy(s->store);
    free(s);
}
