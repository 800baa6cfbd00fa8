#include "jobq.h"

#include "common/bench.h"

#include <stdlib.h>
#include <string.h>

void dsb_job_copy(dsb_job *dst, const dsb_job *src)
{
    dst->req = src->req;
    dst->has_field = src->has_field;
    if (src->has_field) memcpy(dst->field, src->field, 2u * (size_t)src->req.n);
    dst->model = src->model;
    dst->peer = src->peer;
    dst->t_rx_ns = src->t_rx_ns;
}

void dsb_job_params(const dsb_job *job, dsb_params *p)
{
    dsb_params_default(p);
    p->replicas = job->req.replicas;
    p->steps = job->req.steps;
    p->dt = job->req.dt;
    p->xi = job->req.xi;
    p->seed = job->req.seed;
}

void dsb_jobq_init(dsb_jobq *q, size_t cap, uint64_t spin_ns)
{
    memset(q, 0, sizeof *q);
    q->spin_ns = spin_ns;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->nonempty, NULL);
    q->cap = cap;
    q->ring = cm_malloc(cap * sizeof *q->ring);
}

void dsb_jobq_destroy(dsb_jobq *q)
{
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->nonempty);
    free(q->ring);
    q->ring = NULL;
}

int dsb_jobq_push(dsb_jobq *q, const dsb_job *job, int (*admit)(void *, size_t), void *ctx)
{
    pthread_mutex_lock(&q->lock);
    if (q->count == q->cap || q->stopping || (admit && !admit(ctx, q->count))) {
        pthread_mutex_unlock(&q->lock);
        return -1;
    }
    dsb_job_copy(&q->ring[(q->head + q->count) % q->cap], job);
    q->count++;
    pthread_cond_signal(&q->nonempty);
    pthread_mutex_unlock(&q->lock);
    return 0;
}

int dsb_jobq_pop(dsb_jobq *q, dsb_job *out, int wait)
{
    if (wait && q->spin_ns) {
        uint64_t until = bench_now_ns() + q->spin_ns;
        while (atomic_load_explicit(&q->count, memory_order_relaxed) == 0 && !*(volatile int *)&q->stopping &&
               bench_now_ns() < until) {
        }
    }
    pthread_mutex_lock(&q->lock);
    while (wait && q->count == 0 && !q->stopping) pthread_cond_wait(&q->nonempty, &q->lock);
    if (q->count == 0) {
        pthread_mutex_unlock(&q->lock);
        return 0;
    }
    dsb_job_copy(out, &q->ring[q->head]);
    q->head = (q->head + 1) % q->cap;
    q->count--;
    pthread_mutex_unlock(&q->lock);
    return 1;
}

void dsb_jobq_stop(dsb_jobq *q)
{
    pthread_mutex_lock(&q->lock);
    q->stopping = 1;
    pthread_cond_broadcast(&q->nonempty);
    pthread_mutex_unlock(&q->lock);
}

size_t dsb_jobq_depth(dsb_jobq *q)
{
    pthread_mutex_lock(&q->lock);
    size_t c = q->count;
    pthread_mutex_unlock(&q->lock);
    return c;
}
