/* The cpu dispatcher: a bounded FIFO of jobs and worker threads that each run
 * one request at a time with dsb_solve_cpu on one thread (the reference
 * solver, so replies are bit-exact with the client's check). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/bench.h"
#include "common/threads.h"
#include "dsb/service.h"
#include "dsb/solve.h"
#include "jobq.h"

typedef struct {
    dsb_dispatcher base;
    dsb_cpu_dispatch_config cfg;
    dsb_reply_fn reply;
    void *reply_ctx;
    dsb_jobq q;
    _Atomic uint64_t ewma_solve_ns; /* smoothed solve time, for the wait bound */
    pthread_t *tids;
    uint32_t nthreads;
    struct worker_arg {
        void *d;
        uint32_t id;
    } *args;
} cpu_disp;

static dsb_wire_reason cpu_check(dsb_dispatcher *dd, const dsb_wire_solve *req, const dsb_model *m)
{
    cpu_disp *d = (cpu_disp *)dd;
    if (req->replicas > d->cfg.max_replicas || req->steps > d->cfg.max_steps)
        return DSB_WR_TOO_LARGE;
    uint64_t work = (uint64_t)req->replicas * req->steps * m->n * dsb_padded_n(m->n);
    if (work > d->cfg.max_work) return DSB_WR_TOO_LARGE;
    return DSB_WR_NONE;
}

/* Admission beyond the count bound (the paper's C): when set, a bound on the
 * expected wait = queued jobs x smoothed solve time / workers. */
static int cpu_admit(void *ctx, size_t depth)
{
    cpu_disp *d = ctx;
    uint64_t ew = atomic_load_explicit(&d->ewma_solve_ns, memory_order_relaxed);
    return !(d->cfg.max_wait_ns && (uint64_t)depth * ew / d->cfg.workers > d->cfg.max_wait_ns);
}

static int cpu_submit(dsb_dispatcher *dd, const dsb_job *job)
{
    cpu_disp *d = (cpu_disp *)dd;
    return dsb_jobq_push(&d->q, job, cpu_admit, d);
}

static size_t cpu_depth(dsb_dispatcher *dd) { return dsb_jobq_depth(&((cpu_disp *)dd)->q); }

static void *cpu_worker(void *arg)
{
    struct worker_arg *wa = arg;
    cpu_disp *d = wa->d;
    dsb_job *job = cm_malloc(sizeof *job);
    dsb_result res;
    uint32_t res_n = 0, res_b = 0;
    memset(&res, 0, sizeof res);
    for (;;) {
        if (!dsb_jobq_pop(&d->q, job, 1)) break; /* stopping and drained */

        dsb_job_result jr;
        memset(&jr, 0, sizeof jr);
        jr.worker_id = wa->id;
        jr.t_start_ns = bench_now_ns();
        const dsb_model *m = &job->model->model;
        if (res_n != m->n || res_b != job->req.replicas) {
            if (res_n) dsb_result_free(&res);
            dsb_result_init(&res, m->n, job->req.replicas, 0);
            res_n = m->n;
            res_b = job->req.replicas;
        }
        dsb_params p;
        dsb_job_params(job, &p);
        cm_err err;
        if (dsb_solve_cpu(m, job->has_field ? job->field : NULL, &p, 1, &res, &err) == 0) {
            jr.status = DSB_ST_OK;
            jr.best_replica = res.best_replica;
            jr.energy2 = res.best_energy2;
            jr.spins = res.best_spins;
        } else {
            jr.status = DSB_ST_INTERNAL;
        }
        jr.t_end_ns = bench_now_ns();
        uint64_t took = jr.t_end_ns - jr.t_start_ns;
        uint64_t ew = atomic_load_explicit(&d->ewma_solve_ns, memory_order_relaxed);
        atomic_store_explicit(&d->ewma_solve_ns, ew ? ew - ew / 16 + took / 16 : took,
                              memory_order_relaxed);
        d->reply(d->reply_ctx, job, &jr);
    }
    if (res_n) dsb_result_free(&res);
    free(job);
    return NULL;
}

static void cpu_destroy(dsb_dispatcher *dd)
{
    cpu_disp *d = (cpu_disp *)dd;
    dsb_jobq_stop(&d->q);
    for (uint32_t i = 0; i < d->nthreads; i++) pthread_join(d->tids[i], NULL);
    dsb_jobq_destroy(&d->q);
    free(d->tids);
    free(d->args);
    free(d);
}

int dsb_dispatch_cpu_create(const dsb_cpu_dispatch_config *c, dsb_reply_fn fn, void *ctx,
                            dsb_dispatcher **out, cm_err *err)
{
    cpu_disp *d = cm_calloc(1, sizeof *d);
    d->cfg = *c;
    if (!d->cfg.workers) d->cfg.workers = cm_online_cpus();
    if (!d->cfg.queue_cap) d->cfg.queue_cap = 4096;
    if (!d->cfg.max_replicas) d->cfg.max_replicas = 256;
    if (!d->cfg.max_steps) d->cfg.max_steps = 100000;
    if (!d->cfg.max_work) d->cfg.max_work = 1ull << 32;
    if (d->cfg.workers > 1024) {
        free(d);
        return cm_fail(err, "cpu dispatcher: %u workers: expected at most 1024", c->workers);
    }
    if (d->cfg.queue_cap > (1u << 20)) {
        free(d);
        return cm_fail(err, "cpu dispatcher: queue of %u jobs: expected at most 1048576",
                       c->queue_cap);
    }
    d->base.name = "cpu";
    d->base.check = cpu_check;
    d->base.submit = cpu_submit;
    d->base.depth = cpu_depth;
    d->base.destroy = cpu_destroy;
    d->reply = fn;
    d->reply_ctx = ctx;
    dsb_jobq_init(&d->q, d->cfg.queue_cap, 0);
    d->tids = cm_calloc(d->cfg.workers, sizeof *d->tids);
    d->args = cm_calloc(d->cfg.workers, sizeof *d->args);
    for (uint32_t i = 0; i < d->cfg.workers; i++) {
        d->args[i].d = d;
        d->args[i].id = i;
        if (pthread_create(&d->tids[i], NULL, cpu_worker, &d->args[i]) != 0) {
            d->nthreads = i;
            cpu_destroy(&d->base);
            return cm_fail(err, "cpu dispatcher: could not start worker thread %u", i);
        }
        d->nthreads = i + 1;
    }
    *out = &d->base;
    return 0;
}
