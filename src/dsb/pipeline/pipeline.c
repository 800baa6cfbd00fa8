/* Host side of the persistent worker pipeline (include/dsb/pipeline.h):
 * allocation of the rings in GPU or host-mapped memory, the model and layout
 * tables, worker start and stop, the CPU producer and consumer, and the
 * saturated-traffic runner of both placements.  C11 over the CUDA runtime
 * API; the kernels are in worker.cu and gen.cu. */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bench.h"
#include "dsb/gpu.h"
#include "dsb/pipeline.h"
#include "dsb/wire.h"
#include "layout.h"
#include "ring.h"

#define C DSB_PIPE_RING
#define MASK (DSB_PIPE_RING - 1u)
#define DSB_PIPE_TRAFFIC_TIMEOUT_S 60u  /* a traffic run that takes longer is stopped */
#define DSB_PIPE_STALL_S 10u            /* host placement: no reply for this long -> abort */

struct dsb_pipe {
    dsb_pipe_config cfg;
    char device[256];
    uint32_t sms, bps, nw;
    dsb_pipe_dev d;
    /* host views of the rings (host placement: the mapped memory itself) */
    dsb_pipe_item *h_items;
    unsigned char *h_frames;
    uint32_t *h_ack;
    unsigned char *h_replies;
    unsigned long long *h_ready;
    uint32_t *h_consumed;
    dsb_pipe_ctrl *ctrl;
    dsb_pipe_wstat *wstat;
    dsb_pipe_model_dev models[DSB_PIPE_MODELS];
    dsb_pipe_layout_dev *layouts; /* host copy, MODEL_ENTRIES x MAX_B */
    cudaStream_t s_work, s_gen;
    int running;
    /* producer (one thread) */
    uint32_t prod_seq;
    uint64_t published, dropped;
    /* consumer (one thread) */
    uint32_t cons_r;
    int64_t clock_offset; /* GPU global timer = CLOCK_MONOTONIC + offset */
};

static int cu_fail(cm_err *err, const char *what, int e)
{
    return cm_fail(err, "dsb pipeline: %s: %s", what, cudaGetErrorString((cudaError_t)e));
}

static uint64_t mono_ns(void) { return bench_now_ns(); }

/* Global timer minus CLOCK_MONOTONIC: a one-thread kernel writes the timer
 * into mapped memory; the host stamps the moment it sees it (the estimate is
 * late by the PCIe write latency, about a microsecond).  Best of 5. */
static int calibrate_clock(dsb_pipe *p, cm_err *err)
{
    int64_t best = 0;
    uint64_t best_gap = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        p->ctrl->clock = 0;
        uint64_t h0 = mono_ns();
        int e = dsb_pipe_k_launch_clock(p->ctrl, p->s_gen);
        if (e) return cu_fail(err, "clock calibration launch", e);
        uint64_t g;
        while ((g = p->ctrl->clock) == 0) {
            if (mono_ns() - h0 > 5000000000ull)
                return cm_fail(err, "dsb pipeline: the clock kernel did not report within 5 s");
        }
        uint64_t h1 = mono_ns();
        if (h1 - h0 < best_gap) {
            best_gap = h1 - h0;
            best = (int64_t)(g - h1);
        }
        cudaStreamSynchronize(p->s_gen);
    }
    p->clock_offset = best;
    return 0;
}

/* CUDA loads kernels lazily, at their first launch, and loading waits for
 * the device to be idle: a first launch of the generator/consumer block while
 * the persistent workers run would wait for them forever.  So the block is
 * launched once here, before any worker, with nothing to do (0 requests: the
 * generator publishes nothing and the consumer leaves at once). */
static int preload_gen(dsb_pipe *p, cm_err *err)
{
    dsb_pipe_gen_dev g;
    memset(&g, 0, sizeof g);
    unsigned long long *res = NULL;
    int e;
    if ((e = cudaMalloc((void **)&res, 8 * sizeof *res))) return cu_fail(err, "cudaMalloc", e);
    cudaMemset(res, 0, 8 * sizeof *res);
    g.n_templates = 1;
    g.requests = 0;
    g.result = res;
    if ((e = dsb_pipe_k_launch_gen(&p->d, &g, p->s_gen)) || (e = cudaStreamSynchronize(p->s_gen))) {
        cudaFree(res);
        return cu_fail(err, "generator preload", e);
    }
    cudaFree(res);
    return 0;
}

static void *ring_alloc(dsb_pipe *p, size_t bytes, void **host_view, cm_err *err, int *rc)
{
    void *dev = NULL;
    int e;
    if (p->cfg.placement == DSB_PIPE_HOST) {
        void *h = NULL;
        if ((e = cudaHostAlloc(&h, bytes, cudaHostAllocMapped))) {
            *rc = cu_fail(err, "cudaHostAlloc (mapped ring)", e);
            return NULL;
        }
        memset(h, 0, bytes);
        if ((e = cudaHostGetDevicePointer(&dev, h, 0))) {
            *rc = cu_fail(err, "cudaHostGetDevicePointer", e);
            cudaFreeHost(h);
            return NULL;
        }
        *host_view = h;
    } else {
        if ((e = cudaMalloc(&dev, bytes))) {
            *rc = cu_fail(err, "cudaMalloc (ring)", e);
            return NULL;
        }
        cudaMemset(dev, 0, bytes);
        *host_view = NULL;
    }
    return dev;
}

static void ring_free(dsb_pipe *p, void *dev, void *host)
{
    if (p->cfg.placement == DSB_PIPE_HOST) {
        if (host) cudaFreeHost(host);
    } else if (dev) {
        cudaFree(dev);
    }
}

int dsb_pipe_create(const dsb_pipe_config *cfg, dsb_pipe **out, cm_err *err)
{
    *out = NULL;
    if (dsb_pipe_config_check(cfg, err)) return -1;
    int ndev = 0, e;
    if ((e = cudaGetDeviceCount(&ndev)) || ndev == 0)
        return cm_fail(err, "dsb pipeline: no usable CUDA device (%s)",
                       e ? cudaGetErrorString((cudaError_t)e) : "none found");
    dsb_pipe *p = cm_calloc(1, sizeof *p);
    p->cfg = *cfg;
    struct cudaDeviceProp prop;
    if ((e = cudaGetDeviceProperties(&prop, 0))) {
        free(p);
        return cu_fail(err, "cudaGetDeviceProperties", e);
    }
    snprintf(p->device, sizeof p->device, "%s", prop.name);
    p->sms = (uint32_t)prop.multiProcessorCount;
    if (!prop.canMapHostMemory && cfg->placement == DSB_PIPE_HOST) {
        free(p);
        return cm_fail(err, "dsb pipeline: device '%s' cannot map host memory", p->device);
    }
    if ((e = dsb_pipe_k_prepare(cfg->smem_bytes))) {
        free(p);
        return cu_fail(err, "setting the workers' shared-memory size", e);
    }
    int bps = 0;
    if ((e = dsb_pipe_k_occupancy(cfg->smem_bytes, &bps))) {
        free(p);
        return cu_fail(err, "occupancy query", e);
    }
    p->bps = (uint32_t)bps;
    uint32_t slots = p->bps * p->sms;
    if (slots <= cfg->reserve) {
        free(p);
        return cm_fail(err,
                       "dsb pipeline: %u resident worker slots at %u bytes of shared memory, "
                       "%u reserved: no worker left",
                       slots, cfg->smem_bytes, cfg->reserve);
    }
    p->nw = slots - cfg->reserve;
    if (cfg->max_workers && cfg->max_workers < p->nw) p->nw = cfg->max_workers;

    int rc = 0;
    void *hv;
    p->d.items = ring_alloc(p, C * sizeof(dsb_pipe_item), &hv, err, &rc);
    p->h_items = hv;
    if (!rc) p->d.frames = ring_alloc(p, (size_t)C * DSB_PIPE_FRAME_SLOT, &hv, err, &rc);
    p->h_frames = hv;
    if (!rc) p->d.ack = ring_alloc(p, C * sizeof(uint32_t), &hv, err, &rc);
    p->h_ack = hv;
    if (!rc) p->d.replies = ring_alloc(p, (size_t)C * DSB_PIPE_REPLY_SLOT, &hv, err, &rc);
    p->h_replies = hv;
    if (!rc) p->d.ready = ring_alloc(p, C * sizeof(unsigned long long), &hv, err, &rc);
    p->h_ready = hv;
    if (!rc) p->d.consumed = ring_alloc(p, 64, &hv, err, &rc);
    p->h_consumed = hv;
    if (!rc && (e = cudaMalloc((void **)&p->d.tickets, 64))) rc = cu_fail(err, "cudaMalloc", e);
    if (!rc && (e = cudaMalloc((void **)&p->d.models,
                                DSB_PIPE_MODEL_ENTRIES * sizeof(dsb_pipe_model_dev))))
        rc = cu_fail(err, "cudaMalloc", e);
    size_t lbytes = (size_t)DSB_PIPE_MODEL_ENTRIES * DSB_PIPE_MAX_B * sizeof(dsb_pipe_layout_dev);
    if (!rc && (e = cudaMalloc((void **)&p->d.layouts, lbytes))) rc = cu_fail(err, "cudaMalloc", e);
    p->layouts = cm_calloc(1, lbytes);
    if (!rc && (e = cudaHostAlloc((void **)&p->ctrl, sizeof *p->ctrl, cudaHostAllocMapped)))
        rc = cu_fail(err, "cudaHostAlloc (control words)", e);
    if (!rc && (e = cudaHostAlloc((void **)&p->wstat, p->nw * sizeof *p->wstat,
                                  cudaHostAllocMapped)))
        rc = cu_fail(err, "cudaHostAlloc (worker counters)", e);
    if (!rc) {
        memset(p->ctrl, 0, sizeof *p->ctrl);
        memset(p->wstat, 0, p->nw * sizeof *p->wstat);
        cudaHostGetDevicePointer((void **)&p->d.ctrl, p->ctrl, 0);
        cudaHostGetDevicePointer((void **)&p->d.wstat, p->wstat, 0);
        cudaMemset((void *)p->d.models, 0, DSB_PIPE_MODEL_ENTRIES * sizeof(dsb_pipe_model_dev));
        cudaMemset((void *)p->d.layouts, 0, lbytes);
    }
    if (!rc && (e = cudaStreamCreateWithFlags(&p->s_work, cudaStreamNonBlocking)))
        rc = cu_fail(err, "cudaStreamCreate", e);
    if (!rc && (e = cudaStreamCreateWithFlags(&p->s_gen, cudaStreamNonBlocking)))
        rc = cu_fail(err, "cudaStreamCreate", e);
    p->d.smem_bytes = cfg->smem_bytes;
    p->d.area_off = cfg->smem_bytes - DSB_PIPE_AREA;
    p->d.host_rings = cfg->placement == DSB_PIPE_HOST;
    p->d.poll_ns = cfg->poll_ns;
    p->d.max_steps = cfg->max_steps;
    p->d.sums = (uint32_t)cfg->sums;
    if (!rc && (e = cudaDeviceSynchronize())) rc = cu_fail(err, "set-up", e);
    if (!rc) rc = calibrate_clock(p, err);
    if (!rc) rc = preload_gen(p, err);
    if (rc) {
        dsb_pipe_destroy(p);
        return -1;
    }
    *out = p;
    return 0;
}

void dsb_pipe_destroy(dsb_pipe *p)
{
    if (!p) return;
    if (p->running) dsb_pipe_stop(p, NULL, NULL);
    ring_free(p, p->d.items, p->h_items);
    ring_free(p, p->d.frames, p->h_frames);
    ring_free(p, p->d.ack, p->h_ack);
    ring_free(p, p->d.replies, p->h_replies);
    ring_free(p, p->d.ready, p->h_ready);
    ring_free(p, p->d.consumed, p->h_consumed);
    if (p->d.tickets) cudaFree(p->d.tickets);
    if (p->d.models) cudaFree((void *)p->d.models);
    if (p->d.layouts) cudaFree((void *)p->d.layouts);
    for (uint32_t i = 0; i < DSB_PIPE_MODELS; i++)
        if (p->models[i].image) cudaFree((void *)p->models[i].image);
    if (p->ctrl) cudaFreeHost(p->ctrl);
    if (p->wstat) cudaFreeHost(p->wstat);
    if (p->s_work) cudaStreamDestroy(p->s_work);
    if (p->s_gen) cudaStreamDestroy(p->s_gen);
    free(p->layouts);
    free(p);
}

uint32_t dsb_pipe_workers(const dsb_pipe *p) { return p->nw; }
uint32_t dsb_pipe_blocks_per_sm(const dsb_pipe *p) { return p->bps; }
uint32_t dsb_pipe_sms(const dsb_pipe *p) { return p->sms; }
const char *dsb_pipe_device_name(const dsb_pipe *p) { return p->device; }
void dsb_pipe_worker_regs(const dsb_pipe *p, int *regs, int *local_bytes)
{
    (void)p;
    *regs = *local_bytes = -1;
    if (dsb_pipe_k_regs(regs, local_bytes)) *regs = *local_bytes = -1;
}

int dsb_pipe_set_model(dsb_pipe *p, uint16_t id, const dsb_model *m, uint32_t generation,
                       cm_err *err)
{
    if (p->running)
        return cm_fail(err, "dsb pipeline: model slot %u: models change only while the workers "
                            "are stopped", (unsigned)id);
    if (id >= DSB_PIPE_MODELS)
        return cm_fail(err, "dsb pipeline: model slot %u: expected 0 .. %u", (unsigned)id,
                       DSB_PIPE_MODELS - 1u);
    if (!m || !m->packed || m->n == 0 || m->n > DSB_WIRE_MAX_N ||
        (m->format != DSB_FMT_PM1 && m->format != DSB_FMT_TERNARY && m->format != DSB_FMT_INT8))
        return cm_fail(err, "dsb pipeline: model slot %u: expected a packed PM1, TERNARY or INT8 "
                            "model with 1 <= n <= %u", (unsigned)id, DSB_WIRE_MAX_N);
    if (m->packed_bytes != dsb_packed_bytes(m->format, m->n))
        return cm_fail(err, "dsb pipeline: model slot %u: packed image of %zu bytes, expected %zu",
                       (unsigned)id, m->packed_bytes, dsb_packed_bytes(m->format, m->n));
    dsb_pipe_model_dev *md = &p->models[id];
    if (md->image) cudaFree((void *)md->image);
    memset(md, 0, sizeof *md);
    void *img = NULL;
    int e;
    /* the INT8 kernel loads whole 16-byte chunks of each row (n_p bytes a row) */
    size_t bytes = m->packed_bytes + 16u;
    if ((e = cudaMalloc(&img, bytes))) return cu_fail(err, "cudaMalloc (model)", e);
    cudaMemset(img, 0, bytes);
    if ((e = cudaMemcpy(img, m->packed, m->packed_bytes, cudaMemcpyHostToDevice))) {
        cudaFree(img);
        return cu_fail(err, "cudaMemcpy (model)", e);
    }
    dsb_pipe_layout_dev *row = p->layouts + (size_t)2u * id * DSB_PIPE_MAX_B;
    const uint32_t maxB = dsb_pipe_layout_row(m->format, m->n, p->d.area_off, row);
    if (maxB == 0) {
        cudaFree(img);
        return cm_fail(err, "dsb pipeline: model slot %u: n = %u does not fit one worker's %u bytes "
                            "of shared memory even with B = 1", (unsigned)id, m->n,
                       p->cfg.smem_bytes);
    }
    md->image = img;
    md->format = (uint32_t)m->format;
    md->n = m->n;
    md->W = dsb_words(m->n);
    md->np = dsb_padded_n(m->n);
    md->generation = generation;
    md->max_B = maxB;
    md->xi_default = m->xi_default;
    /* entry 2 id holds the model; entry 2 id + 1 (a GPU-resident server's
       second generation) stays empty on this path */
    if ((e = cudaMemcpy((void *)(p->d.models + 2u * id), md, sizeof *md, cudaMemcpyHostToDevice)) ||
        (e = cudaMemset((void *)(p->d.models + 2u * id + 1u), 0, sizeof *md)) ||
        (e = cudaMemcpy((void *)(p->d.layouts + (size_t)2u * id * DSB_PIPE_MAX_B), row,
                        DSB_PIPE_MAX_B * sizeof *row, cudaMemcpyHostToDevice)))
        return cu_fail(err, "cudaMemcpy (model tables)", e);
    return 0;
}

void dsb_pipe_dev_args(const dsb_pipe *p, dsb_pipe_dev *out) { *out = p->d; }

uint32_t dsb_pipe_max_replicas(const dsb_pipe *p, uint16_t id)
{
    return id < DSB_PIPE_MODELS ? p->models[id].max_B : 0u;
}

int dsb_pipe_start(dsb_pipe *p, cm_err *err)
{
    if (p->running) return cm_fail(err, "dsb pipeline: already started");
    int e;
    uint32_t *ack0 = cm_malloc(C * sizeof *ack0);
    for (uint32_t s = 0; s < C; s++) ack0[s] = s - C + 1u; /* ticket s - C acknowledged */
    if (p->cfg.placement == DSB_PIPE_HOST) {
        memset(p->h_items, 0, C * sizeof(dsb_pipe_item));
        memset(p->h_ready, 0, C * sizeof(unsigned long long));
        memcpy(p->h_ack, ack0, C * sizeof *ack0);
        *p->h_consumed = 0;
    } else {
        cudaMemset(p->d.items, 0, C * sizeof(dsb_pipe_item));
        cudaMemset(p->d.ready, 0, C * sizeof(unsigned long long));
        cudaMemset(p->d.consumed, 0, 64);
        cudaMemcpy(p->d.ack, ack0, C * sizeof *ack0, cudaMemcpyHostToDevice);
    }
    free(ack0);
    cudaMemset(p->d.tickets, 0, 64);
    p->ctrl->shutdown = 0;
    memset(p->wstat, 0, p->nw * sizeof *p->wstat);
    p->prod_seq = 0;
    p->published = p->dropped = 0;
    p->cons_r = 0;
    if ((e = cudaDeviceSynchronize())) return cu_fail(err, "ring reset", e);
    if ((e = dsb_pipe_k_launch_workers(&p->d, p->nw, p->s_work)))
        return cu_fail(err, "worker launch", e);
    p->running = 1;
    return 0;
}

int dsb_pipe_stop(dsb_pipe *p, dsb_pipe_stats *st, cm_err *err)
{
    if (st) memset(st, 0, sizeof *st);
    if (!p->running) return 0;
    p->ctrl->shutdown = 1;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    int e = cudaStreamSynchronize(p->s_work);
    p->running = 0;
    if (st) {
        for (uint32_t w = 0; w < p->nw; w++) {
            st->served += p->wstat[w].served;
            st->errors += p->wstat[w].errors;
            st->busy_ns += p->wstat[w].busy_ns;
            st->workers_seen += p->wstat[w].exited ? 1u : 0u;
        }
    }
    if (e) return cu_fail(err, "worker kernel", e);
    return 0;
}

/* ---- host placement ---------------------------------------------------------- */

uint8_t *dsb_pipe_next_frame(dsb_pipe *p)
{
    if (p->cfg.placement != DSB_PIPE_HOST) return NULL;
    uint32_t s = p->prod_seq, slot = s & MASK;
    if (__atomic_load_n(&p->h_ack[slot], __ATOMIC_ACQUIRE) != s - C + 1u) return NULL;
    return p->h_frames + (size_t)slot * DSB_PIPE_FRAME_SLOT;
}

void dsb_pipe_commit(dsb_pipe *p, uint32_t len, uint64_t t_recv_ns)
{
    uint32_t s = p->prod_seq, slot = s & MASK;
    dsb_pipe_item *it = &p->h_items[slot];
    it->len = len;
    it->t_recv = (uint64_t)((int64_t)t_recv_ns + p->clock_offset);
    __atomic_store_n(&it->seq, s + 1u, __ATOMIC_RELEASE);
    p->prod_seq = s + 1u;
    p->published++;
}

void dsb_pipe_count_drop(dsb_pipe *p) { p->dropped++; }
uint64_t dsb_pipe_published(const dsb_pipe *p) { return p->published; }
uint64_t dsb_pipe_dropped(const dsb_pipe *p) { return p->dropped; }

int dsb_pipe_publish(dsb_pipe *p, const void *frame, uint32_t len, uint64_t t_recv_ns, cm_err *err)
{
    if (p->cfg.placement != DSB_PIPE_HOST)
        return cm_fail(err, "dsb pipeline: dsb_pipe_publish needs the host placement (the GPU "
                            "rings are fed by device-side producers)");
    if (!p->running) return cm_fail(err, "dsb pipeline: publish before dsb_pipe_start");
    if (len < DSB_WIRE_HDR_BYTES || len > DSB_PIPE_FRAME_SLOT)
        return cm_fail(err, "dsb pipeline: frame of %u bytes: expected %u .. %u", len,
                       DSB_WIRE_HDR_BYTES, DSB_PIPE_FRAME_SLOT);
    uint8_t *dst = dsb_pipe_next_frame(p);
    if (!dst) {
        p->dropped++;
        return 1;
    }
    memcpy(dst, frame, len);
    dsb_pipe_commit(p, len, t_recv_ns);
    return 0;
}

uint32_t dsb_pipe_drain(dsb_pipe *p, dsb_pipe_reply_fn fn, void *ctx, uint32_t max)
{
    if (p->cfg.placement != DSB_PIPE_HOST) return 0;
    uint32_t r = p->cons_r, k = 0;
    while (!max || k < max) {
        uint32_t slot = (r + k) & MASK;
        unsigned long long w = __atomic_load_n(&p->h_ready[slot], __ATOMIC_ACQUIRE);
        if ((uint32_t)(w >> 32) != r + k + 1u) break;
        uint32_t len = (uint32_t)w;
        if (len > DSB_PIPE_REPLY_SLOT) len = DSB_PIPE_REPLY_SLOT;
        fn(ctx, p->h_replies + (size_t)slot * DSB_PIPE_REPLY_SLOT, len);
        k++;
    }
    if (k) {
        p->cons_r = r + k;
        __atomic_store_n(p->h_consumed, r + k, __ATOMIC_RELEASE);
    }
    return k;
}

/* ---- saturated traffic ------------------------------------------------------- */

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
    dsb_pipe *p;
    dsb_pipe_traffic *t;
    uint64_t *t_pub;
    volatile int prod_done;
    uint32_t consumed; /* atomic: replies drained */
    uint64_t t_last, t_first, t_progress;
    volatile int abort;
    int stalled;
} host_run;

static void *host_producer(void *arg)
{
    host_run *h = arg;
    dsb_pipe *p = h->p;
    dsb_pipe_traffic *t = h->t;
    double c0 = thread_cpu_s();
    uint32_t maxo = t->max_outstanding && t->max_outstanding < C ? t->max_outstanding : C;
    uint32_t i = 0;
    while (i < t->requests && !h->abort) {
        if (!t->drop_when_full) {
            uint32_t cons = __atomic_load_n(&h->consumed, __ATOMIC_ACQUIRE);
            if ((uint32_t)p->published - cons >= maxo) continue;
        }
        uint8_t *dst = dsb_pipe_next_frame(p);
        if (!dst) {
            if (t->drop_when_full) {
                p->dropped++;
                i++;
            }
            continue;
        }
        uint32_t tm = i % t->n_templates, len = t->lens[tm];
        memcpy(dst, t->frames[tm], len);
        uint64_t seed;
        memcpy(&seed, dst + 48, 8);
        seed += i;
        memcpy(dst + 48, &seed, 8);
        memcpy(dst + 20, &i, 4);
        uint64_t now = mono_ns();
        if (!h->t_first) h->t_first = now;
        h->t_pub[i] = now;
        dsb_pipe_commit(p, len, now);
        i++;
    }
    t->producer_cpu_s = thread_cpu_s() - c0;
    __atomic_store_n(&h->prod_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

typedef struct {
    host_run *h;
    uint64_t now;
} drain_ctx;

static void host_reply(void *ctx, const uint8_t *f, uint32_t len)
{
    drain_ctx *c = ctx;
    dsb_pipe_traffic *t = c->h->t;
    uint32_t req;
    memcpy(&req, f + 20, 4);
    if (req >= t->requests) {
        t->stray++;
        return;
    }
    if (t->answers && t->answers[req] < 255) t->answers[req]++;
    if (t->latency_ns && c->h->t_pub[req]) t->latency_ns[req] = (uint32_t)(c->now - c->h->t_pub[req]);
    if (t->log) {
        uint32_t nb = len < t->log_stride ? len : t->log_stride;
        memcpy(t->log + (size_t)req * t->log_stride, f, nb);
    }
}

static void *host_consumer(void *arg)
{
    host_run *h = arg;
    dsb_pipe *p = h->p;
    double c0 = thread_cpu_s();
    drain_ctx c = {h, 0};
    h->t_progress = mono_ns();
    for (;;) {
        c.now = mono_ns();
        uint32_t k = dsb_pipe_drain(p, host_reply, &c, 0);
        if (k) {
            h->t->answered += k;
            h->t_last = c.now;
            h->t_progress = c.now;
            __atomic_store_n(&h->consumed, p->cons_r, __ATOMIC_RELEASE);
            continue;
        }
        if (__atomic_load_n(&h->prod_done, __ATOMIC_ACQUIRE) && p->cons_r == p->prod_seq) break;
        if (h->abort) break;
        if (c.now - h->t_progress > (uint64_t)DSB_PIPE_STALL_S * 1000000000ull &&
            p->cons_r != p->prod_seq) {
            h->stalled = 1;
            h->abort = 1;
            break;
        }
    }
    h->t->consumer_cpu_s = thread_cpu_s() - c0;
    return NULL;
}

static int traffic_check(dsb_pipe *p, dsb_pipe_traffic *t, cm_err *err)
{
    if (!p->running) return cm_fail(err, "dsb pipeline: traffic before dsb_pipe_start");
    if (t->n_templates < 1 || t->n_templates > DSB_PIPE_MAX_TEMPLATES || !t->frames || !t->lens)
        return cm_fail(err, "dsb pipeline: %u request templates: expected 1 .. %u",
                       t->n_templates, DSB_PIPE_MAX_TEMPLATES);
    for (uint32_t j = 0; j < t->n_templates; j++)
        if (t->lens[j] < DSB_WIRE_HDR_BYTES || t->lens[j] > DSB_PIPE_FRAME_SLOT || !t->frames[j])
            return cm_fail(err, "dsb pipeline: template %u: %u bytes, expected %u .. %u", j,
                           t->lens[j], DSB_WIRE_HDR_BYTES, DSB_PIPE_FRAME_SLOT);
    if (t->log && (t->log_stride < 16 || t->log_stride > DSB_PIPE_REPLY_SLOT || t->log_stride % 16))
        return cm_fail(err, "dsb pipeline: log stride %u: expected a multiple of 16 in 16 .. 512",
                       t->log_stride);
    if (t->requests == 0) return cm_fail(err, "dsb pipeline: 0 requests");
    return 0;
}

static int traffic_host(dsb_pipe *p, dsb_pipe_traffic *t, cm_err *err)
{
    host_run h;
    memset(&h, 0, sizeof h);
    h.p = p;
    h.t = t;
    h.t_pub = cm_calloc(t->requests, sizeof *h.t_pub);
    h.consumed = p->cons_r;
    uint64_t pub0 = p->published, drop0 = p->dropped;
    /* the counters of this run start from the pipeline's current position */
    pthread_t tp, tc;
    if (pthread_create(&tc, NULL, host_consumer, &h)) {
        free(h.t_pub);
        return cm_fail(err, "dsb pipeline: cannot start the consumer thread");
    }
    if (pthread_create(&tp, NULL, host_producer, &h)) {
        h.abort = 1;
        pthread_join(tc, NULL);
        free(h.t_pub);
        return cm_fail(err, "dsb pipeline: cannot start the producer thread");
    }
    pthread_join(tp, NULL);
    pthread_join(tc, NULL);
    t->published = p->published - pub0;
    t->dropped = p->dropped - drop0;
    t->seconds = h.t_last > h.t_first ? 1e-9 * (double)(h.t_last - h.t_first) : 0.0;
    free(h.t_pub);
    if (h.stalled)
        return cm_fail(err, "dsb pipeline: host traffic stalled: no reply for %u s with %u "
                            "requests outstanding", DSB_PIPE_STALL_S,
                       (unsigned)(p->prod_seq - p->cons_r));
    return 0;
}

/* GPU placement.  The workers are running: nothing here may synchronize the
 * whole device (cudaDeviceSynchronize, cudaFree, synchronous copies on the
 * legacy stream would wait for the persistent kernel forever), so buffers
 * come from the stream-ordered allocator and every copy is asynchronous on
 * the generator's stream. */
static int traffic_gpu(dsb_pipe *p, dsb_pipe_traffic *t, cm_err *err)
{
    dsb_pipe_gen_dev g;
    memset(&g, 0, sizeof g);
    int e = 0, rc = 0;
    cudaStream_t s = p->s_gen;
    unsigned char *tmpl = NULL;
    uint32_t *tlens = NULL, *answers = NULL, *lat = NULL;
    uint64_t *t_pub = NULL;
    unsigned char *log = NULL;
    unsigned long long *res = NULL;
    uint32_t *ha = NULL;
    size_t tb = (size_t)t->n_templates * DSB_PIPE_FRAME_SLOT;
    size_t nr = t->requests;
    unsigned char *htm = cm_calloc(1, tb);
    for (uint32_t j = 0; j < t->n_templates; j++)
        memcpy(htm + (size_t)j * DSB_PIPE_FRAME_SLOT, t->frames[j], t->lens[j]);
    if ((e = cudaMallocAsync((void **)&tmpl, tb, s)) ||
        (e = cudaMallocAsync((void **)&tlens, t->n_templates * sizeof *tlens, s)) ||
        (e = cudaMallocAsync((void **)&answers, nr * sizeof *answers, s)) ||
        (e = cudaMallocAsync((void **)&t_pub, nr * sizeof *t_pub, s)) ||
        (e = cudaMallocAsync((void **)&res, 8 * sizeof *res, s)) ||
        (t->latency_ns && (e = cudaMallocAsync((void **)&lat, nr * sizeof *lat, s))) ||
        (t->log && (e = cudaMallocAsync((void **)&log, nr * t->log_stride, s)))) {
        rc = cu_fail(err, "cudaMallocAsync (traffic buffers)", e);
        goto out;
    }
    cudaMemcpyAsync(tmpl, htm, tb, cudaMemcpyHostToDevice, s);
    cudaMemcpyAsync(tlens, t->lens, t->n_templates * sizeof *tlens, cudaMemcpyHostToDevice, s);
    cudaMemsetAsync(answers, 0, nr * sizeof *answers, s);
    cudaMemsetAsync(t_pub, 0, nr * sizeof *t_pub, s);
    cudaMemsetAsync(res, 0, 8 * sizeof *res, s);
    if (lat) cudaMemsetAsync(lat, 0, nr * sizeof *lat, s);
    if (log) cudaMemsetAsync(log, 0, nr * t->log_stride, s);
    if ((e = cudaStreamSynchronize(s))) {
        rc = cu_fail(err, "traffic set-up", e);
        goto out;
    }
    g.templates = tmpl;
    g.template_lens = tlens;
    g.n_templates = t->n_templates;
    g.requests = t->requests;
    g.drop_when_full = t->drop_when_full ? 1u : 0u;
    g.max_outstanding = t->max_outstanding;
    g.latency_ns = lat;
    g.t_pub = t_pub;
    g.answers = answers;
    g.log = log;
    g.log_stride = t->log_stride;
    g.result = res;
    g.seq0 = p->prod_seq;
    g.cons0 = p->cons_r;
    /* the generator/consumer block takes the slot the workers left free */
    if ((e = dsb_pipe_k_launch_gen(&p->d, &g, s))) {
        rc = cu_fail(err, "generator launch", e);
        goto out;
    }
    {
        /* wait, with a deadline: a stuck pipeline is stopped, not waited for */
        uint64_t t0 = mono_ns();
        while ((e = cudaStreamQuery(s)) == cudaErrorNotReady) {
            if (mono_ns() - t0 > (uint64_t)DSB_PIPE_TRAFFIC_TIMEOUT_S * 1000000000ull) {
                p->ctrl->shutdown = 1;
                cudaStreamSynchronize(s);
                rc = cm_fail(err, "dsb pipeline: GPU traffic of %u requests did not finish within "
                                  "%u s; workers and generator stopped", t->requests,
                             DSB_PIPE_TRAFFIC_TIMEOUT_S);
                goto out;
            }
            struct timespec ts = {0, 200000};
            nanosleep(&ts, NULL);
        }
        if (e) {
            rc = cu_fail(err, "generator/consumer kernel", e);
            goto out;
        }
    }
    unsigned long long hr[8];
    ha = t->answers ? cm_malloc(nr * sizeof *ha) : NULL;
    cudaMemcpyAsync(hr, res, sizeof hr, cudaMemcpyDeviceToHost, s);
    if (ha) cudaMemcpyAsync(ha, answers, nr * sizeof *ha, cudaMemcpyDeviceToHost, s);
    if (lat) cudaMemcpyAsync(t->latency_ns, lat, nr * sizeof *lat, cudaMemcpyDeviceToHost, s);
    if (log) cudaMemcpyAsync(t->log, log, nr * t->log_stride, cudaMemcpyDeviceToHost, s);
    if ((e = cudaStreamSynchronize(s))) {
        rc = cu_fail(err, "copying the traffic results", e);
        goto out;
    }
    p->prod_seq += (uint32_t)hr[0];
    p->cons_r += (uint32_t)hr[2];
    p->published += hr[0];
    p->dropped += hr[1];
    t->published = hr[0];
    t->dropped = hr[1];
    t->answered = hr[2];
    t->stray = hr[3];
    t->seconds = hr[5] > hr[4] ? 1e-9 * (double)(hr[5] - hr[4]) : 0.0;
    t->producer_cpu_s = t->consumer_cpu_s = 0.0;
    if (ha)
        for (size_t i = 0; i < nr; i++) t->answers[i] = ha[i] > 255u ? 255u : (uint8_t)ha[i];
out:
    free(htm);
    free(ha);
    if (tmpl) cudaFreeAsync(tmpl, s);
    if (tlens) cudaFreeAsync(tlens, s);
    if (answers) cudaFreeAsync(answers, s);
    if (t_pub) cudaFreeAsync(t_pub, s);
    if (res) cudaFreeAsync(res, s);
    if (lat) cudaFreeAsync(lat, s);
    if (log) cudaFreeAsync(log, s);
    cudaStreamSynchronize(s);
    return rc;
}

int dsb_pipe_run_traffic(dsb_pipe *p, dsb_pipe_traffic *t, cm_err *err)
{
    if (traffic_check(p, t, err)) return -1;
    t->published = t->dropped = t->answered = t->stray = 0;
    t->seconds = t->producer_cpu_s = t->consumer_cpu_s = 0.0;
    if (t->answers) memset(t->answers, 0, t->requests);
    if (t->latency_ns) memset(t->latency_ns, 0, (size_t)t->requests * sizeof *t->latency_ns);
    if (t->log) memset(t->log, 0, (size_t)t->requests * t->log_stride);
    return p->cfg.placement == DSB_PIPE_HOST ? traffic_host(p, t, err) : traffic_gpu(p, t, err);
}
