/* The launch-per-request dispatcher (seed 000, Sec. V-A): one thread, busy
 * polling like the paper's, moves queued jobs onto the idle CUDA streams of a
 * dsb_gpu_launcher (H2D field, one-block launch, D2H reply, event) and answers
 * each job when its event has completed.  Up to S_t requests are in flight. */
#include <pthread.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

#include "common/bench.h"
#include "dsb/gpu.h"
#include "dsb/service.h"
#include "jobq.h"

#define LAUNCH_MAX_STREAMS 64u

typedef struct {
    dsb_dispatcher base;
    dsb_launch_dispatch_config cfg;
    dsb_reply_fn reply;
    void *reply_ctx;
    dsb_jobq q;
    dsb_gpu_launcher *gl;
    pthread_t tid;
    int started;
    dsb_job *inflight;                      /* one per stream, indexed by the tag */
    uint64_t t_start[LAUNCH_MAX_STREAMS];
    int used[LAUNCH_MAX_STREAMS];
} launch_disp;

static dsb_wire_reason launch_check(dsb_dispatcher *dd, const dsb_wire_solve *req,
                                    const dsb_model *m)
{
    launch_disp *d = (launch_disp *)dd;
    if (req->steps > d->cfg.max_steps) return DSB_WR_TOO_LARGE;
    /* one block (B n_p <= 4096) and the 227 KiB a Hopper block may opt in to */
    size_t smem = dsb_gpu_smem_bytes(m->format, m->n, req->replicas);
    if (smem == 0 || smem > 227u * 1024u) return DSB_WR_TOO_LARGE;
    return DSB_WR_NONE;
}

static int launch_submit(dsb_dispatcher *dd, const dsb_job *job)
{
    return dsb_jobq_push(&((launch_disp *)dd)->q, job, NULL, NULL);
}

static size_t launch_depth(dsb_dispatcher *dd) { return dsb_jobq_depth(&((launch_disp *)dd)->q); }

static void answer_failed(launch_disp *d, dsb_job *job, uint64_t t0)
{
    dsb_job_result jr;
    memset(&jr, 0, sizeof jr);
    jr.status = DSB_ST_INTERNAL;
    jr.t_start_ns = t0;
    jr.t_end_ns = bench_now_ns();
    d->reply(d->reply_ctx, job, &jr);
}

static void *launch_loop(void *arg)
{
    launch_disp *d = arg;
    dsb_gpu_done done[LAUNCH_MAX_STREAMS];
    uint32_t busy = 0;
    for (;;) {
        /* fill the idle streams; block for work only when nothing is in flight */
        while (busy < d->cfg.streams) {
            uint32_t k = 0;
            while (d->used[k]) k++;
            dsb_job *job = &d->inflight[k];
            if (!dsb_jobq_pop(&d->q, job, busy == 0)) break;
            dsb_params p;
            dsb_job_params(job, &p);
            cm_err err;
            uint64_t t0 = bench_now_ns();
            int rc = dsb_gpu_launcher_submit(d->gl, &job->model->model, job->model->id,
                                             job->model->generation,
                                             job->has_field ? job->field : NULL, &p, k, &err);
            if (rc != 0) { /* cannot run on the GPU: answered, never lost */
                answer_failed(d, job, t0);
                continue;
            }
            d->used[k] = 1;
            d->t_start[k] = t0;
            busy++;
        }
        if (busy == 0) break; /* the queue was stopped and is drained */
        int got = dsb_gpu_launcher_poll(d->gl, done, LAUNCH_MAX_STREAMS);
        for (int i = 0; i < got; i++) {
            uint32_t k = (uint32_t)done[i].tag;
            dsb_job_result jr;
            memset(&jr, 0, sizeof jr);
            jr.status = done[i].status == 0 ? DSB_ST_OK : DSB_ST_INTERNAL;
            jr.best_replica = done[i].best_replica;
            jr.energy2 = done[i].best_energy2;
            jr.worker_id = k; /* the stream */
            jr.t_start_ns = d->t_start[k];
            jr.t_end_ns = bench_now_ns();
            jr.spins = done[i].spins;
            d->reply(d->reply_ctx, &d->inflight[k], &jr);
            d->used[k] = 0;
            busy--;
        }
    }
    return NULL;
}

static void launch_destroy(dsb_dispatcher *dd)
{
    launch_disp *d = (launch_disp *)dd;
    dsb_jobq_stop(&d->q);
    if (d->started) pthread_join(d->tid, NULL);
    dsb_gpu_launcher_destroy(d->gl);
    dsb_jobq_destroy(&d->q);
    free(d->inflight);
    free(d);
}

int dsb_dispatch_launch_create(const dsb_launch_dispatch_config *c, dsb_reply_fn fn, void *ctx,
                               dsb_dispatcher **out, cm_err *err)
{
    launch_disp *d = cm_calloc(1, sizeof *d);
    d->cfg = *c;
    if (!d->cfg.streams) d->cfg.streams = 4;
    if (!d->cfg.queue_cap) d->cfg.queue_cap = 4096;
    if (!d->cfg.max_steps) d->cfg.max_steps = 100000;
    if (!d->cfg.max_models) d->cfg.max_models = 64;
    if (d->cfg.streams > LAUNCH_MAX_STREAMS) {
        free(d);
        return cm_fail(err, "launch dispatcher: %u streams: expected at most %u", c->streams,
                       LAUNCH_MAX_STREAMS);
    }
    if (dsb_gpu_launcher_create(d->cfg.streams, d->cfg.max_models, d->cfg.sums, &d->gl, err) != 0) {
        free(d);
        return -1;
    }
    d->base.name = "launch";
    d->base.check = launch_check;
    d->base.submit = launch_submit;
    d->base.depth = launch_depth;
    d->base.destroy = launch_destroy;
    d->reply = fn;
    d->reply_ctx = ctx;
    dsb_jobq_init(&d->q, d->cfg.queue_cap, 1000000000ull);
    d->inflight = cm_calloc(d->cfg.streams, sizeof *d->inflight);
    if (pthread_create(&d->tid, NULL, launch_loop, d) != 0) {
        launch_destroy(&d->base);
        return cm_fail(err, "launch dispatcher: could not start its thread");
    }
    d->started = 1;
    *out = &d->base;
    return 0;
}
