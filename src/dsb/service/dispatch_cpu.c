/* The cpu dispatcher: a bounded FIFO of jobs and worker threads that each run
 * one request at a time with dsb_solve_cpu on one thread (the reference
 * solver, so replies are bit-exact with the client's check). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/bench.h"
#include "dsb/service.h"
#include "dsb/solve.h"

typedef struct {
    dsb_dispatcher base;
    dsb_cpu_dispatch_config cfg;
    dsb_reply_fn reply;
    void *reply_ctx;
    pthread_mutex_t lock;
    pthread_cond_t nonempty;
    dsb_job *ring;
    size_t head, count; /* FIFO */
    int stopping;
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

static int cpu_submit(dsb_dispatcher *dd, const dsb_job *job)
{
    cpu_disp *d = (cpu_disp *)dd;
    pthread_mutex_lock(&d->lock);
    /* admission: the count bound (the paper's C) and, when set, a bound on the
     * expected wait = queued jobs x smoothed solve time / workers */
    uint64_t ew = atomic_load_explicit(&d->ewma_solve_ns, memory_order_relaxed);
    int too_long = d->cfg.max_wait_ns &&
                   (uint64_t)d->count * ew / d->cfg.workers > d->cfg.max_wait_ns;
    if (d->count == d->cfg.queue_cap || d->stopping || too_long) {
        pthread_mutex_unlock(&d->lock);
        return -1;
    }
    size_t tail = (d->head + d->count) % d->cfg.queue_cap;
    d->ring[tail].req = job->req;
    d->ring[tail].has_field = job->has_field;
    if (job->has_field) memcpy(d->ring[tail].field, job->field, 2u * (size_t)job->req.n);
    d->ring[tail].model = job->model;
    d->ring[tail].peer = job->peer;
    d->ring[tail].t_rx_ns = job->t_rx_ns;
    d->count++;
    pthread_cond_signal(&d->nonempty);
    pthread_mutex_unlock(&d->lock);
    return 0;
}

static size_t cpu_depth(dsb_dispatcher *dd)
{
    cpu_disp *d = (cpu_disp *)dd;
    pthread_mutex_lock(&d->lock);
    size_t c = d->count;
    pthread_mutex_unlock(&d->lock);
    return c;
}

static void *cpu_worker(void *arg)
{
    struct worker_arg *wa = arg;
    cpu_disp *d = wa->d;
    dsb_job *job = cm_malloc(sizeof *job);
    dsb_result res;
    uint32_t res_n = 0, res_b = 0;
    memset(&res, 0, sizeof res);
    for (;;) {
        pthread_mutex_lock(&d->lock);
        while (d->count == 0 && !d->stopping) pthread_cond_wait(&d->nonempty, &d->lock);
        if (d->count == 0) { /* stopping and drained */
            pthread_mutex_unlock(&d->lock);
            break;
        }
        dsb_job *src = &d->ring[d->head];
        job->req = src->req;
        job->has_field = src->has_field;
        if (src->has_field) memcpy(job->field, src->field, 2u * (size_t)src->req.n);
        job->model = src->model;
        job->peer = src->peer;
        job->t_rx_ns = src->t_rx_ns;
        d->head = (d->head + 1) % d->cfg.queue_cap;
        d->count--;
        pthread_mutex_unlock(&d->lock);

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
        dsb_params_default(&p);
        p.replicas = job->req.replicas;
        p.steps = job->req.steps;
        p.dt = job->req.dt;
        p.xi = job->req.xi;
        p.seed = job->req.seed;
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
    pthread_mutex_lock(&d->lock);
    d->stopping = 1;
    pthread_cond_broadcast(&d->nonempty);
    pthread_mutex_unlock(&d->lock);
    for (uint32_t i = 0; i < d->nthreads; i++) pthread_join(d->tids[i], NULL);
    pthread_mutex_destroy(&d->lock);
    pthread_cond_destroy(&d->nonempty);
    free(d->ring);
    free(d->tids);
    free(d->args);
    free(d);
}

int dsb_dispatch_cpu_create(const dsb_cpu_dispatch_config *c, dsb_reply_fn fn, void *ctx,
                            dsb_dispatcher **out, cm_err *err)
{
    cpu_disp *d = cm_calloc(1, sizeof *d);
    d->cfg = *c;
    if (!d->cfg.workers) {
        long nc = sysconf(_SC_NPROCESSORS_ONLN);
        d->cfg.workers = nc > 0 ? (uint32_t)nc : 1u;
    }
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
    pthread_mutex_init(&d->lock, NULL);
    pthread_cond_init(&d->nonempty, NULL);
    d->ring = cm_malloc((size_t)d->cfg.queue_cap * sizeof *d->ring);
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
