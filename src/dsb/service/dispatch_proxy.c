/* The CPU-proxied persistent-kernel dispatcher (seed 000, Sec. V-B): one CPU
 * thread writes each request as a SOLVE frame into the host-mapped work ring
 * of a dsb_pipe (placement host) and publishes it; the persistent worker
 * blocks read it over PCIe, solve, and write the RESULT into the host-mapped
 * reply ring, which the same thread drains in order and answers.
 *
 * Models: the pipe holds one generation per slot and changes models only while
 * its workers are stopped, so a request for a generation the pipe does not
 * hold waits until every outstanding request has been answered, then the
 * workers are stopped, the model copied, and the workers restarted.  Requests
 * in flight therefore always finish on the generation they were published
 * with; a model change costs one drain and one relaunch (rare: once per
 * uploaded generation). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/bench.h"
#include "dsb/gpu.h"
#include "dsb/pipeline.h"
#include "dsb/service.h"
#include "jobq.h"

typedef struct {
    dsb_dispatcher base;
    dsb_proxy_dispatch_config cfg;
    dsb_reply_fn reply;
    void *reply_ctx;
    dsb_jobq q;
    dsb_pipe *pipe;
    pthread_t tid;
    int started, running;
    dsb_job *inflight;   /* DSB_PIPE_RING jobs, indexed by the frame's request id */
    uint64_t *t_pub;
    uint32_t *free_tags; /* stack of unused request ids */
    uint32_t n_free;
    uint32_t outstanding;
    uint32_t gen[DSB_PIPE_MODELS];
    uint8_t loaded[DSB_PIPE_MODELS];
    uint64_t model_swaps;
    uint32_t spins[DSB_WIRE_MAX_N / 32]; /* the reply being answered */
} proxy_disp;

static dsb_wire_reason proxy_check(dsb_dispatcher *dd, const dsb_wire_solve *req,
                                   const dsb_model *m)
{
    proxy_disp *d = (proxy_disp *)dd;
    if (req->steps > d->cfg.max_steps || req->replicas > DSB_PIPE_MAX_B) return DSB_WR_TOO_LARGE;
    if (req->model_id >= DSB_PIPE_MODELS) return DSB_WR_TOO_LARGE;
    /* Eq. (6) must fit the workers' fixed S beside their own area */
    size_t smem = dsb_gpu_smem_bytes(m->format, m->n, req->replicas);
    if (smem == 0 || smem > d->cfg.smem_bytes - DSB_PIPE_AREA) return DSB_WR_TOO_LARGE;
    return DSB_WR_NONE;
}

static int proxy_submit(dsb_dispatcher *dd, const dsb_job *job)
{
    return dsb_jobq_push(&((proxy_disp *)dd)->q, job, NULL, NULL);
}

static size_t proxy_depth(dsb_dispatcher *dd) { return dsb_jobq_depth(&((proxy_disp *)dd)->q); }

static void answer(proxy_disp *d, dsb_job *job, uint16_t status, const dsb_wire_result *r,
                   const uint32_t *spins, uint64_t t_pub)
{
    dsb_job_result jr;
    memset(&jr, 0, sizeof jr);
    jr.status = status;
    uint64_t now = bench_now_ns();
    jr.t_end_ns = now;
    jr.t_start_ns = t_pub ? t_pub : now;
    if (r) {
        jr.best_replica = r->best_replica;
        jr.energy2 = r->energy2;
        jr.worker_id = r->worker_id;
        /* the worker's own solve time, so the server's queue term holds the
         * time in the host rings and before a worker took the request */
        if (r->t_solve_ns < now - jr.t_start_ns) jr.t_start_ns = now - r->t_solve_ns;
    }
    jr.spins = spins;
    d->reply(d->reply_ctx, job, &jr);
}

static void on_reply(void *ctx, const uint8_t *frame, uint32_t len)
{
    proxy_disp *d = ctx;
    dsb_wire_result r;
    if (len < DSB_WIRE_HDR_BYTES) return;
    memcpy(&r, frame, sizeof r);
    uint32_t k = r.request_id;
    if (k >= DSB_PIPE_RING || d->t_pub[k] == 0) return; /* not ours: cannot happen */
    uint32_t W = dsb_words(r.n);
    const uint32_t *spins = NULL;
    if (r.status == DSB_ST_OK && W <= DSB_WIRE_MAX_N / 32 && len >= DSB_WIRE_HDR_BYTES + 4u * W) {
        memcpy(d->spins, frame + DSB_WIRE_HDR_BYTES, 4u * W);
        spins = d->spins;
    }
    answer(d, &d->inflight[k], r.status == DSB_ST_OK ? DSB_ST_OK : r.status, &r, spins,
           d->t_pub[k]);
    d->t_pub[k] = 0;
    d->free_tags[d->n_free++] = k;
    d->outstanding--;
}

static void drain(proxy_disp *d) { dsb_pipe_drain(d->pipe, on_reply, d, 0); }

/* Makes the pipe hold (slot, generation) of the job's model. */
static int ensure_model(proxy_disp *d, const dsb_store_model *sm, cm_err *err)
{
    if (d->loaded[sm->id] && d->gen[sm->id] == sm->generation) return 0;
    while (d->outstanding) drain(d);
    if (d->running && dsb_pipe_stop(d->pipe, NULL, err)) return -1;
    d->running = 0;
    if (dsb_pipe_set_model(d->pipe, sm->id, &sm->model, sm->generation, err)) return -1;
    d->loaded[sm->id] = 1;
    d->gen[sm->id] = sm->generation;
    d->model_swaps++;
    if (dsb_pipe_start(d->pipe, err)) return -1;
    d->running = 1;
    return 0;
}

static void *proxy_loop(void *arg)
{
    proxy_disp *d = arg;
    dsb_job *job = cm_malloc(sizeof *job);
    for (;;) {
        drain(d);
        /* block for work only when nothing is outstanding and no tag is missing */
        if (!d->n_free) continue;
        if (!dsb_jobq_pop(&d->q, job, d->outstanding == 0)) {
            if (d->outstanding == 0) break; /* stopped and drained */
            continue;
        }
        cm_err err;
        if (ensure_model(d, job->model, &err)) {
            answer(d, job, DSB_ST_INTERNAL, NULL, NULL, 0);
            continue;
        }
        uint8_t *frame;
        while (!(frame = dsb_pipe_next_frame(d->pipe))) drain(d); /* slot still busy */
        uint32_t k = d->free_tags[--d->n_free];
        dsb_wire_solve q = job->req;
        q.request_id = k;
        q.generation = 0;
        q.payload_len = (uint16_t)(job->has_field ? 2u * q.n : 0u);
        memcpy(frame, &q, DSB_WIRE_HDR_BYTES);
        if (job->has_field) memcpy(frame + DSB_WIRE_HDR_BYTES, job->field, 2u * (size_t)q.n);
        dsb_job_copy(&d->inflight[k], job);
        d->t_pub[k] = bench_now_ns();
        d->outstanding++;
        dsb_pipe_commit(d->pipe, DSB_WIRE_HDR_BYTES + q.payload_len, job->t_rx_ns);
    }
    free(job);
    return NULL;
}

static void proxy_destroy(dsb_dispatcher *dd)
{
    proxy_disp *d = (proxy_disp *)dd;
    dsb_jobq_stop(&d->q);
    if (d->started) pthread_join(d->tid, NULL);
    if (d->running) dsb_pipe_stop(d->pipe, NULL, NULL);
    dsb_pipe_destroy(d->pipe);
    dsb_jobq_destroy(&d->q);
    free(d->inflight);
    free(d->t_pub);
    free(d->free_tags);
    free(d);
}

int dsb_dispatch_proxy_create(const dsb_proxy_dispatch_config *c, dsb_reply_fn fn, void *ctx,
                              dsb_dispatcher **out, cm_err *err)
{
    proxy_disp *d = cm_calloc(1, sizeof *d);
    d->cfg = *c;
    if (!d->cfg.queue_cap) d->cfg.queue_cap = 4096;
    if (!d->cfg.max_steps) d->cfg.max_steps = 100000;
    dsb_pipe_config pc;
    dsb_pipe_config_default(&pc);
    pc.placement = DSB_PIPE_HOST;
    pc.max_steps = d->cfg.max_steps;
    pc.sums = d->cfg.sums;
    pc.max_workers = d->cfg.max_workers;
    if (d->cfg.smem_bytes) pc.smem_bytes = d->cfg.smem_bytes;
    d->cfg.smem_bytes = pc.smem_bytes;
    if (dsb_pipe_config_check(&pc, err) || dsb_pipe_create(&pc, &d->pipe, err)) {
        free(d);
        return -1;
    }
    d->base.name = "proxy";
    d->base.gpu_workers = dsb_pipe_workers(d->pipe);
    d->base.check = proxy_check;
    d->base.submit = proxy_submit;
    d->base.depth = proxy_depth;
    d->base.destroy = proxy_destroy;
    d->reply = fn;
    d->reply_ctx = ctx;
    dsb_jobq_init(&d->q, d->cfg.queue_cap, 1000000000ull);
    d->inflight = cm_malloc(DSB_PIPE_RING * sizeof *d->inflight);
    d->t_pub = cm_calloc(DSB_PIPE_RING, sizeof *d->t_pub);
    d->free_tags = cm_malloc(DSB_PIPE_RING * sizeof *d->free_tags);
    for (uint32_t k = 0; k < DSB_PIPE_RING; k++) d->free_tags[k] = DSB_PIPE_RING - 1u - k;
    d->n_free = DSB_PIPE_RING;
    if (pthread_create(&d->tid, NULL, proxy_loop, d) != 0) {
        proxy_destroy(&d->base);
        return cm_fail(err, "proxy dispatcher: could not start its thread");
    }
    d->started = 1;
    *out = &d->base;
    return 0;
}
