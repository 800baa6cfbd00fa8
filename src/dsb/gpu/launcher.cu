/* Launch per request (seed 000, Sec. V-A): S_t streams, each with its pinned
 * field and reply buffers; a request is H2D(field) + one-block launch +
 * D2H(reply) + event on an idle stream, and completion is found by polling
 * the events.  Device copies of models are cached by (slot, generation). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "dsb/gpu.h"
#include "host_internal.cuh"
#include "kernel.h"

#define MAX_STREAMS 64u
#define PREPARED 16u /* cached (format, n, B) preparations */

typedef struct {
    uint32_t slot, generation, n;
    dsb_format format;
    unsigned char *dev;
    uint32_t inflight;
    uint64_t last_use;
} model_entry;

typedef struct {
    dsb_format format;
    uint32_t n, B;
    dsb_gpu_layout L;
    const void *kernel;
} prepared;

typedef struct {
    cudaStream_t stream;
    cudaEvent_t done;
    int16_t *h_field, *d_field; /* pinned / device, DSB_INT8_MAX_N entries */
    dsb_gpu_reply *h_reply, *d_reply;
    int busy;
    uint64_t tag;
    uint32_t W;
    model_entry *model;
} stream_slot;

struct dsb_gpu_launcher {
    uint32_t nstreams, max_models;
    int sums; /* dsb_gpu_sums */
    stream_slot s[MAX_STREAMS];
    model_entry *models;
    prepared prep[PREPARED];
    uint32_t nprep, next_prep;
    uint64_t clock;
};

#define REPLY_BYTES (sizeof(dsb_gpu_reply) + 4u * 64u) /* W <= 64 (n <= 2048) */
#define FIELD_MAX 65536u                                 /* int16 entries per request */

#define CKL(call, what)                                                                  \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess)                                                           \
            return cm_fail(err, "%s: %s", what, cudaGetErrorString(e_));                \
    } while (0)

extern "C" void dsb_gpu_launcher_destroy(dsb_gpu_launcher *l)
{
    if (!l) return;
    for (uint32_t i = 0; i < l->nstreams; i++) {
        stream_slot *s = &l->s[i];
        if (s->stream) cudaStreamSynchronize(s->stream);
        if (s->done) cudaEventDestroy(s->done);
        if (s->stream) cudaStreamDestroy(s->stream);
        cudaFreeHost(s->h_field);
        cudaFreeHost(s->h_reply);
        cudaFree(s->d_field);
        cudaFree(s->d_reply);
    }
    for (uint32_t i = 0; i < l->max_models; i++) cudaFree(l->models[i].dev);
    free(l->models);
    free(l);
}

extern "C" int dsb_gpu_launcher_create(uint32_t streams, uint32_t max_models, int sums,
                                       dsb_gpu_launcher **out, cm_err *err)
{
    *out = NULL;
    if (sums < 0 || sums >= DSB_GPU_SUMS_COUNT)
        return cm_fail(err, "launch dispatcher: coupling sums %d: expected auto, cuda or tensor",
                       sums);
    if (streams < 1 || streams > MAX_STREAMS)
        return cm_fail(err, "launch dispatcher: %u streams: expected 1..%u", streams, MAX_STREAMS);
    if (max_models < 1 || max_models > 1024)
        return cm_fail(err, "launch dispatcher: %u cached models: expected 1..1024", max_models);
    if (!dsb_gpu_available(err)) return -1;
    dsb_gpu_launcher *l = (dsb_gpu_launcher *)cm_calloc(1, sizeof *l);
    l->nstreams = streams;
    l->max_models = max_models;
    l->sums = sums;
    l->models = (model_entry *)cm_calloc(max_models, sizeof *l->models);
    for (uint32_t i = 0; i < streams; i++) {
        stream_slot *s = &l->s[i];
        cudaError_t e = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking);
        if (e == cudaSuccess) e = cudaEventCreateWithFlags(&s->done, cudaEventDisableTiming);
        if (e == cudaSuccess)
            e = cudaHostAlloc((void **)&s->h_field, FIELD_MAX * sizeof(int16_t), cudaHostAllocDefault);
        if (e == cudaSuccess)
            e = cudaHostAlloc((void **)&s->h_reply, REPLY_BYTES, cudaHostAllocDefault);
        if (e == cudaSuccess) e = cudaMalloc((void **)&s->d_field, FIELD_MAX * sizeof(int16_t));
        if (e == cudaSuccess) e = cudaMalloc((void **)&s->d_reply, REPLY_BYTES);
        if (e != cudaSuccess) {
            dsb_gpu_launcher_destroy(l);
            return cm_fail(err, "launch dispatcher: stream %u: %s", i, cudaGetErrorString(e));
        }
    }
    *out = l;
    return 0;
}

extern "C" uint32_t dsb_gpu_launcher_idle(const dsb_gpu_launcher *l)
{
    uint32_t idle = 0;
    for (uint32_t i = 0; i < l->nstreams; i++) idle += !l->s[i].busy;
    return idle;
}

/* The device copy of (slot, generation), uploading it on first use. */
static model_entry *model_for(dsb_gpu_launcher *l, const dsb_model *m, uint32_t slot,
                              uint32_t generation, cm_err *err)
{
    model_entry *victim = NULL;
    for (uint32_t i = 0; i < l->max_models; i++) {
        model_entry *e = &l->models[i];
        if (e->dev && e->slot == slot && e->generation == generation && e->n == m->n &&
            e->format == m->format) {
            e->last_use = ++l->clock;
            return e;
        }
        if (e->inflight == 0 && (!victim || !e->dev || (victim->dev && e->last_use < victim->last_use)))
            victim = e;
    }
    if (!victim) {
        cm_fail(err, "launch dispatcher: all %u cached models have requests in flight",
                l->max_models);
        return NULL;
    }
    cudaFree(victim->dev);
    victim->dev = NULL;
    cudaError_t e = cudaMalloc((void **)&victim->dev, m->packed_bytes);
    /* models are uploaded once per generation (Sec. V-A), synchronously */
    if (e == cudaSuccess)
        e = cudaMemcpy(victim->dev, m->packed, m->packed_bytes, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        cudaFree(victim->dev);
        victim->dev = NULL;
        cm_fail(err, "launch dispatcher: uploading model slot %u: %s", slot,
                cudaGetErrorString(e));
        return NULL;
    }
    victim->slot = slot;
    victim->generation = generation;
    victim->n = m->n;
    victim->format = m->format;
    victim->last_use = ++l->clock;
    return victim;
}

static const prepared *prepare_cached(dsb_gpu_launcher *l, const dsb_model *m,
                                      const dsb_params *p, cm_err *err)
{
    for (uint32_t i = 0; i < l->nprep; i++)
        if (l->prep[i].format == m->format && l->prep[i].n == m->n && l->prep[i].B == p->replicas)
            return &l->prep[i];
    prepared pr;
    pr.format = m->format;
    pr.n = m->n;
    pr.B = p->replicas;
    /* a server's rule, as the pipeline workers' (dsb_gpu_tc_pick): the tensor
     * cores where asked and the request fits them, AUTO's per-request choice */
    const int sums = dsb_gpu_sums_for(l->sums, m->format, m->n, p->replicas);
    if (dsb_gpu_prepare(m, p, DSB_GPU_VAR_NONE, sums, &pr.L, &pr.kernel, err)) return NULL;
    uint32_t at = l->nprep < PREPARED ? l->nprep++ : (l->next_prep++ % PREPARED);
    l->prep[at] = pr;
    return &l->prep[at];
}

extern "C" int dsb_gpu_launcher_submit(dsb_gpu_launcher *l, const dsb_model *m, uint32_t slot,
                                       uint32_t generation, const int16_t *h,
                                       const dsb_params *p, uint64_t tag, cm_err *err)
{
    stream_slot *s = NULL;
    for (uint32_t i = 0; i < l->nstreams && !s; i++)
        if (!l->s[i].busy) s = &l->s[i];
    if (!s) return 1;
    if (m->n > FIELD_MAX) return cm_fail(err, "launch dispatcher: n = %u too large", m->n);
    const prepared *pr = prepare_cached(l, m, p, err);
    if (!pr) return -1;
    model_entry *me = model_for(l, m, slot, generation, err);
    if (!me) return -1;
    dsb_gpu_args a;
    dsb_gpu_fill_args(&a, m, p, &pr->L, me->dev);
    if (h) {
        memcpy(s->h_field, h, m->n * sizeof(int16_t));
        CKL(cudaMemcpyAsync(s->d_field, s->h_field, m->n * sizeof(int16_t),
                            cudaMemcpyHostToDevice, s->stream),
            "launch dispatcher: H2D field");
        a.h = s->d_field;
    }
    a.reply = s->d_reply;
    a.seq = 1;
    CKL(dsb_gpu_launch_one(pr->kernel, &a, pr->L.total, s->stream), "launch dispatcher: launch");
    CKL(cudaMemcpyAsync(s->h_reply, s->d_reply, sizeof(dsb_gpu_reply) + 4u * pr->L.W,
                        cudaMemcpyDeviceToHost, s->stream),
        "launch dispatcher: D2H reply");
    CKL(cudaEventRecord(s->done, s->stream), "launch dispatcher: event");
    s->busy = 1;
    s->tag = tag;
    s->W = pr->L.W;
    s->model = me;
    me->inflight++;
    return 0;
}

extern "C" int dsb_gpu_launcher_poll(dsb_gpu_launcher *l, dsb_gpu_done *out, int max)
{
    int got = 0;
    for (uint32_t i = 0; i < l->nstreams && got < max; i++) {
        stream_slot *s = &l->s[i];
        if (!s->busy) continue;
        cudaError_t e = cudaEventQuery(s->done);
        if (e == cudaErrorNotReady) continue;
        dsb_gpu_done *d = &out[got++];
        memset(d, 0, sizeof *d);
        d->tag = s->tag;
        if (e != cudaSuccess) {
            d->status = -1;
            cm_fail(&d->err, "launch dispatcher: request failed on the GPU: %s",
                    cudaGetErrorString(e));
        } else {
            d->best_energy2 = s->h_reply->best_energy2;
            d->best_replica = s->h_reply->best_replica;
            d->spins = DSB_GPU_REPLY_SPINS(s->h_reply);
            d->solve_us = (double)(s->h_reply->t_end - s->h_reply->t_start) * 1e-3;
        }
        s->model->inflight--;
        s->busy = 0;
    }
    return got;
}
