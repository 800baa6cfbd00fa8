/* The bounded FIFO of jobs in front of every dispatcher (the paper's C = 4096
 * by default): one mutex, one condition, copies of the jobs. */
#ifndef DSB_SERVICE_JOBQ_H
#define DSB_SERVICE_JOBQ_H

#include <pthread.h>
#include <stddef.h>

#include "dsb/service.h"
#include "dsb/solve.h"

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t nonempty;
    dsb_job *ring;
    size_t cap, head;
    _Atomic size_t count;
    int stopping;
    uint64_t spin_ns;
} dsb_jobq;

/* spin_ns: a blocking pop first polls the queue this long before it sleeps on
 * the condition (the GPU dispatchers' threads busy-poll like the paper's
 * baselines, Sec. VI-C; a sleeping thread costs a wake-up of tens of us). */
void dsb_jobq_init(dsb_jobq *q, size_t cap, uint64_t spin_ns);
void dsb_jobq_destroy(dsb_jobq *q);
/* Copies job in unless the queue is full or stopping, or admit(ctx, depth)
 * (optional, called under the lock) says no: 0 queued, -1 refused. */
int dsb_jobq_push(dsb_jobq *q, const dsb_job *job, int (*admit)(void *ctx, size_t depth),
                  void *ctx);
/* Pops the oldest job into out: 1 popped; 0 none (wait = 0: queue empty;
 * wait = 1: stopping and drained). */
int dsb_jobq_pop(dsb_jobq *q, dsb_job *out, int wait);
/* Wakes every waiter; pops keep draining what is queued. */
void dsb_jobq_stop(dsb_jobq *q);
size_t dsb_jobq_depth(dsb_jobq *q);
/* The solver parameters of a job's request. */
void dsb_job_params(const dsb_job *job, dsb_params *p);
/* Copies a job (the field only as far as n). */
void dsb_job_copy(dsb_job *dst, const dsb_job *src);

#endif
