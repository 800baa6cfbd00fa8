/* Host driver of the GPU streaming solver (include/dsb/stream_gpu.h; kernels
 * in stream.cu).  Pass p: reset the pass's counters, launch the consume
 * kernel (timed with CUDA events: the record's seconds), then the update
 * kernel (Eq. (10), energies, the dSB step when p < K, signs, checksums),
 * copy B energies and checksums back and hand the record to on_pass.
 *
 * Host source: the pinned frame buffer is mapped into the GPU's address
 * space.  If a pass fits (T 4096-byte frames <= host_bytes) it is built once
 * by `host_threads` threads and re-sent every pass, only the header's pass
 * field rewritten between passes (the only header field that depends on the
 * pass: dsb_stream_feed_get).  Otherwise the buffer is a ring of S chunks
 * of F frames (F a multiple of the work unit): producer threads take the
 * run's chunks Q = 0, 1, ... in order (pass Q / chunks_per_pass), wait until
 * freed[Q % S] says chunk Q - S was consumed, build the frames into slot
 * Q % S and publish ready[Q % S] = Q + 1; the GPU's last block to finish a
 * chunk publishes freed[slot] = Q + 1.  Both flag arrays are mapped host
 * memory, each written by one side only (no atomics across the link). */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/bench.h"
#include "common/threads.h"
#include "dsb/stream_gpu.h"
#include "dsb/stream_ring.h"
#include "dsb/wire.h"
#include "stream_dev.h"

#define SG_DEFAULT_HOST_BYTES (64ull << 20)
#define SG_RING_MIN_SLOTS 2u
#define SG_RING_TARGET_SLOTS 16u
/* Received frames through a ring: the network delivers a few GB/s at most and
 * one worker block consumes ~2 GB/s (the blocks sweep in docs/perf/stream.md),
 * so 16 blocks keep up with room to spare and poll the ready words rarely. */
#define SG_RECV_RING_BLOCKS 16u
#define SG_RECV_POLL_NS 2000u
#define SG_HOST_POLL_NS 256u

static int cu_fail(cm_err *err, const char *what, int e)
{
    return cm_fail(err, "gpu backend: %s: %s", what, cudaGetErrorString((cudaError_t)e));
}

/* ---- host frames ------------------------------------------------------------------ */

typedef struct {
    const dsb_stream_params *p;
    dsb_stream_feed *feed;      /* the run's frames: generated, or read from a file */
    uint8_t *buf;               /* pinned, mapped (host view) */
    uint64_t T;                 /* frames a pass */
    uint32_t K;
    uint64_t corrupt;           /* test hook: f + 1 of pass K, 0 = off */
    /* ring */
    uint64_t F;                 /* frames a chunk */
    uint32_t S;                 /* chunks in the buffer */
    uint64_t chunks_per_pass, chunks;
    volatile uint64_t *ready, *freed; /* host views of the mapped flags */
    _Atomic uint64_t next;      /* next chunk to build */
    _Atomic int stop;
    /* resident build */
    uint32_t threads;
    /* the first frame the feed could not give (its slot holds zeros: the device
     * check counts it bad, so the pass ends and the run fails with this message) */
    _Atomic int failed;
    cm_err err;
} sg_host;

/* 1 when every frame so far came from the feed; else 0, and its message in err. */
static int feed_ok(sg_host *h, cm_err *err)
{
    if (!atomic_load(&h->failed)) return 1;
    while (atomic_load(&h->failed) != 2) cm_sleep_s(10e-6);
    cm_fail(err, "%s", h->err.msg);
    return 0;
}

typedef struct {
    sg_host *h;
    uint32_t t;
} sg_thread_arg;

static void corrupt_frame(uint8_t *frame)
{
    uint32_t one = 1;
    memcpy(frame + offsetof(dsb_wire_stream, rsv), &one, sizeof one);
}

static void build_one(sg_host *h, uint8_t *out, uint32_t pass, uint64_t f)
{
    cm_err e;
    if (dsb_stream_feed_get(h->feed, pass, f, 0, out, &e)) {
        memset(out, 0, DSB_STREAM_FRAME);
        int expected = 0; /* the first failure: 1 while its message is copied, then 2 */
        if (atomic_compare_exchange_strong(&h->failed, &expected, 1)) {
            h->err = e;
            atomic_store(&h->failed, 2);
        }
        return;
    }
    if (h->corrupt && pass == h->K && f + 1u == h->corrupt) corrupt_frame(out);
}

/* The whole pass 0 into the buffer: thread t builds frames t, t + threads, ... */
static void *resident_worker(void *arg)
{
    sg_thread_arg *a = arg;
    sg_host *h = a->h;
    for (uint64_t f = a->t; f < h->T; f += h->threads)
        build_one(h, h->buf + f * DSB_STREAM_FRAME, 0, f);
    return NULL;
}

static void *ring_worker(void *arg)
{
    sg_thread_arg *a = arg;
    sg_host *h = a->h;
    for (;;) {
        uint64_t Q = atomic_fetch_add(&h->next, 1);
        if (Q >= h->chunks) return NULL;
        uint32_t slot = (uint32_t)(Q % h->S);
        if (Q >= h->S)
            while (h->freed[slot] < Q - h->S + 1u) {
                if (atomic_load(&h->stop)) return NULL;
                cm_sleep_s(20e-6);
            }
        uint32_t pass = (uint32_t)(Q / h->chunks_per_pass);
        uint64_t f0 = (Q % h->chunks_per_pass) * h->F;
        uint64_t f1 = f0 + h->F < h->T ? f0 + h->F : h->T;
        uint8_t *base = h->buf + (uint64_t)slot * h->F * DSB_STREAM_FRAME;
        for (uint64_t f = f0; f < f1; f++) {
            build_one(h, base + (f - f0) * DSB_STREAM_FRAME, pass, f);
            if (((f - f0) & 1023u) == 1023u && atomic_load(&h->stop)) return NULL;
        }
        atomic_thread_fence(memory_order_release);
        h->ready[slot] = Q + 1u;
    }
}

/* Starts `count` threads of fn; returns how many started. */
static uint32_t start_threads(pthread_t *tids, sg_thread_arg *args, sg_host *h, uint32_t count,
                              void *(*fn)(void *))
{
    uint32_t started = 0;
    for (uint32_t t = 0; t < count; t++) {
        args[t] = (sg_thread_arg){h, t};
        if (pthread_create(&tids[t], NULL, fn, &args[t]) != 0) break;
        started++;
    }
    return started;
}

/* ---- the run ------------------------------------------------------------------------ */

/* Waits for ev; with a progress line, polls the blocks' mapped counters. */
static int wait_pass(cudaEvent_t ev, const unsigned long long *prog, uint32_t blocks,
                     bench_progress_t *bar, uint64_t before)
{
    for (;;) {
        cudaError_t e = cudaEventQuery(ev);
        if (e != cudaErrorNotReady) return (int)e;
        if (bar) {
            uint64_t d = 0;
            for (uint32_t b = 0; b < blocks; b++) d += ((const volatile unsigned long long *)prog)[b];
            bench_progress(bar, before + d);
        }
        cm_sleep_s(bar ? 2e-3 : 1e-4);
    }
}

/* One run's device state, host frames and kernel arguments: opened once, one
 * sg_pass a pass, closed.  `recv`: the frames of each pass are written by a
 * receiver into the pass buffer (dsb_stream_gpu_sink), not built here. */
struct dsb_stream_gpu_run {
    dsb_stream_params p;
    dsb_stream_gpu_opts o;
    int recv;
    int mode;
    uint32_t blocks, smem;
    uint64_t T, G;
    cudaStream_t st;
    cudaEvent_t ev[4];
    float *x, *y;
    uint32_t *signs, *eta_d, *ticket, *ring_count;
    int32_t *cnt;
    unsigned long long *small; /* energy2[B], checksum[B], stats[2] */
    unsigned long long *prog_h, *prog_d, *small_h;
    uint64_t *flags_h, *flags_d;
    uint8_t *buf_h, *buf_d;
    uint32_t *best_h;
    pthread_t *tids;
    sg_thread_arg *targs;
    uint32_t running;
    sg_host h;
    dsb_sg_consume_args ca;
    dsb_sg_update_args ua;
    dsb_stream_gpu_info info;
    bench_progress_t *bar; /* the run's progress line, or NULL */
    /* received frames through a ring (recv, mode HOST_RING) */
    dsb_stream_ring *ring;
    uint64_t *abort_h;     /* mapped: the epoch of a launch given up */
    uint64_t epoch;        /* launches so far */
    int in_flight;         /* a consume launch not yet waited for */
    uint32_t launched_pass;
    int failed;            /* a discard failed on the device: the next end_pass says so */
    cm_err fail;
};

static int sg_recv_start(dsb_stream_gpu_run *r, uint32_t pass, cm_err *err);

static void sg_close(dsb_stream_gpu_run *r)
{
    if (!r) return;
    if (r->in_flight) { /* a consume launch waiting for chunks that will not come */
        if (r->abort_h) *(volatile uint64_t *)r->abort_h = r->epoch;
        cudaStreamSynchronize(r->st);
        r->in_flight = 0;
    }
    if (r->running) {
        atomic_store(&r->h.stop, 1);
        for (uint32_t t = 0; t < r->running; t++) pthread_join(r->tids[t], NULL);
    }
    if (r->ring) r->info.ring_waits = dsb_stream_ring_waits(r->ring);
    if (r->o.info) *r->o.info = r->info;
    dsb_stream_ring_free(r->ring);
    free(r->tids);
    free(r->targs);
    dsb_stream_feed_close(r->h.feed);
    free(r->small_h);
    free(r->best_h);
    if (r->buf_h) cudaFreeHost(r->buf_h);
    if (r->flags_h) cudaFreeHost(r->flags_h);
    if (r->prog_h) cudaFreeHost(r->prog_h);
    cudaFree(r->x);
    cudaFree(r->y);
    cudaFree(r->cnt);
    cudaFree(r->signs);
    cudaFree(r->eta_d);
    cudaFree(r->small);
    cudaFree(r->ticket);
    cudaFree(r->ring_count);
    for (int i = 0; i < 4; i++)
        if (r->ev[i]) cudaEventDestroy(r->ev[i]);
    if (r->st) cudaStreamDestroy(r->st);
    free(r);
}

/* Everything before the first pass: checks, configuration, device state at the
 * initial positions, the host frames (built, or threads started for a ring). */
static int sg_open(const dsb_stream_params *p, const dsb_stream_gpu_opts *o_in, int recv,
                   dsb_stream_gpu_run **out, cm_err *err)
{
    *out = NULL;
    if (dsb_stream_params_check(p, err)) return -1;
    dsb_stream_gpu_run *r = cm_calloc(1, sizeof *r);
    r->p = *p;
    if (o_in) r->o = *o_in;
    else dsb_stream_gpu_opts_default(&r->o);
    r->recv = recv;
    dsb_stream_gpu_opts *o = &r->o;
    sg_host *h = &r->h;
    atomic_init(&h->next, 0);
    atomic_init(&h->stop, 0);
    atomic_init(&h->failed, 0);
    const uint32_t n = p->n, B = p->replicas, K = p->updates;
    const uint64_t T = dsb_stream_frames(n), G = dsb_stream_grid_words(n);
    r->T = T;
    r->G = G;
    if (recv) {
        if (o->corrupt_frame)
            return sg_close(r), cm_fail(err, "gpu backend: corrupt_frame is a hook of the host source");
    } else {
        if (o->source != DSB_STREAM_SRC_GEN && o->source != DSB_STREAM_SRC_HOST)
            return sg_close(r), cm_fail(err, "gpu backend: source %d: expected gen or host", (int)o->source);
        if (o->source == DSB_STREAM_SRC_GEN && p->instance == DSB_STREAM_FILE)
            return sg_close(r), cm_fail(err, "gpu backend: the gen source makes a generated instance's "
                                             "frames on the GPU; a file's frames go through the host "
                                             "source (--source host)");
        if (o->corrupt_frame && (o->source != DSB_STREAM_SRC_HOST || o->corrupt_frame > T))
            return sg_close(r), cm_fail(err, "gpu backend: corrupt_frame %llu: expected 1 .. %llu "
                                             "with the host source",
                                        (unsigned long long)o->corrupt_frame, (unsigned long long)T);
    }
    double t_setup = bench_now_s();
    dsb_stream_gpu_info *info = &r->info;
    int e;

    /* device and kernel configuration */
    int dev, sms = 0, bps = 0, regs = 0, local = 0;
    struct cudaDeviceProp prop;
    if ((e = cudaGetDevice(&dev)) || (e = cudaGetDeviceProperties(&prop, dev)))
        return sg_close(r), cu_fail(err, "no usable CUDA device", e);
    sms = prop.multiProcessorCount;
    snprintf(info->device, sizeof info->device, "%.63s", prop.name);
    const uint32_t smem = dsb_sg_smem_bytes(B);
    if ((e = dsb_sg_prepare(smem, &bps, &regs, &local)))
        return sg_close(r), cu_fail(err, "consume kernel attributes", e);
    if (bps < 1)
        return sg_close(r), cm_fail(err, "gpu backend: a worker block's %u bytes of shared memory do "
                                         "not fit an SM", smem);
    uint32_t cap_blocks = (uint32_t)bps * (uint32_t)sms;
    uint32_t blocks = o->blocks ? o->blocks : (uint32_t)(bps < 2 ? bps : 2) * (uint32_t)sms;
    if (blocks > cap_blocks) blocks = cap_blocks; /* persistent: all resident at once */

    int mode;
    uint32_t unit = DSB_SG_UNIT;
    uint64_t buf_bytes = 0;
    if (recv) { /* a receiver writes the frames: a ring of chunks, or the whole pass */
        const uint64_t want = o->host_bytes ? o->host_bytes : DSB_STREAM_RING_DEFAULT_BYTES;
        if (want / DSB_STREAM_FRAME >= T) {
            mode = DSB_SG_HOST_PASS;
            buf_bytes = T * DSB_STREAM_FRAME;
        } else {
            mode = DSB_SG_HOST_RING;
            cm_err e;
            if (dsb_stream_ring_shape(want, T, unit, &h->S, &h->F, &e))
                return sg_close(r), cm_fail(err, "gpu backend: %s", e.msg);
            h->chunks_per_pass = (T + h->F - 1u) / h->F;
            buf_bytes = (uint64_t)h->S * h->F * DSB_STREAM_FRAME;
            if (!o->blocks && blocks > SG_RECV_RING_BLOCKS) blocks = SG_RECV_RING_BLOCKS;
        }
    } else if (o->source == DSB_STREAM_SRC_GEN) {
        mode = p->instance == DSB_STREAM_MATTIS ? DSB_SG_GEN_MATTIS : DSB_SG_GEN_RANDOM;
    } else {
        uint64_t hb = o->host_bytes ? o->host_bytes : SG_DEFAULT_HOST_BYTES;
        uint64_t cap = hb / DSB_STREAM_FRAME;
        if (T <= cap) {
            mode = DSB_SG_HOST_PASS;
            buf_bytes = T * DSB_STREAM_FRAME;
        } else {
            mode = DSB_SG_HOST_RING;
            if (cap < (uint64_t)SG_RING_MIN_SLOTS * unit)
                return sg_close(r), cm_fail(err, "gpu backend: host_bytes %llu: a pass (%llu bytes) "
                                                 "does not fit, and a ring needs at least %u bytes",
                                            (unsigned long long)hb,
                                            (unsigned long long)(T * DSB_STREAM_FRAME),
                                            SG_RING_MIN_SLOTS * unit * DSB_STREAM_FRAME);
            uint64_t per = cap / ((uint64_t)unit * SG_RING_TARGET_SLOTS);
            h->F = (uint64_t)unit * (per ? per : 1u);
            h->S = (uint32_t)(cap / h->F);
            h->chunks_per_pass = (T + h->F - 1u) / h->F;
            h->chunks = h->chunks_per_pass * ((uint64_t)K + 1u);
            buf_bytes = (uint64_t)h->S * h->F * DSB_STREAM_FRAME;
        }
        const uint32_t c = cm_online_cpus();
        h->threads = o->host_threads ? o->host_threads : (c > 1 ? c - 1u : 1u);
    }
    if (mode != DSB_SG_HOST_RING) /* enough units to spread over the blocks */
        while (unit > 16u && (T + unit - 1u) / unit < 2ull * blocks) unit -= 16u;
    r->mode = mode;
    r->blocks = blocks;
    r->smem = smem;

    /* device state */
    const size_t bn = (size_t)B * n;
    if ((e = cudaStreamCreateWithFlags(&r->st, cudaStreamNonBlocking)))
        return sg_close(r), cu_fail(err, "stream", e);
    for (int i = 0; i < 4; i++)
        if ((e = cudaEventCreate(&r->ev[i]))) return sg_close(r), cu_fail(err, "event", e);
    if ((e = cudaMalloc((void **)&r->x, bn * sizeof *r->x)) ||
        (e = cudaMalloc((void **)&r->y, bn * sizeof *r->y)) ||
        (e = cudaMalloc((void **)&r->cnt, bn * sizeof *r->cnt)) ||
        (e = cudaMalloc((void **)&r->signs, (size_t)B * G * sizeof *r->signs)) ||
        (e = cudaMalloc((void **)&r->small, (2u * B + 2u) * sizeof *r->small)) ||
        (e = cudaMalloc((void **)&r->ticket, sizeof *r->ticket)) ||
        (e = cudaMalloc((void **)&r->ring_count, (h->S ? h->S : 1u) * sizeof *r->ring_count)))
        return sg_close(r), cu_fail(err, "cudaMalloc (state)", e);
    if ((e = cudaMemsetAsync(r->cnt, 0, bn * sizeof *r->cnt, r->st)) ||
        (e = cudaMemsetAsync(r->signs, 0, (size_t)B * G * sizeof *r->signs, r->st)) ||
        (e = cudaMemsetAsync(r->ring_count, 0, (h->S ? h->S : 1u) * sizeof *r->ring_count, r->st)))
        return sg_close(r), cu_fail(err, "cudaMemset (state)", e);
    if (mode == DSB_SG_GEN_MATTIS) {
        if ((e = cudaMalloc((void **)&r->eta_d, G * sizeof *r->eta_d)) ||
            (e = dsb_sg_launch_eta(r->eta_d, dsb_stream_key(p->seed, DSB_STREAM_MATTIS), n, G, r->st)))
            return sg_close(r), cu_fail(err, "eta bitmap", e);
    }
    dsb_sg_update_args *ua = &r->ua;
    ua->n = n;
    ua->replicas = B;
    ua->seed = p->seed;
    ua->grid_words = G;
    ua->xi = dsb_stream_xi(p);
    ua->dt = p->dt;
    ua->x = r->x;
    ua->y = r->y;
    ua->signs = r->signs;
    ua->cnt = r->cnt;
    ua->energy2 = r->small;
    ua->checksum = r->small + B;
    ua->init = 1;
    if ((e = dsb_sg_launch_update(ua, r->st)) || (e = cudaStreamSynchronize(r->st)))
        return sg_close(r), cu_fail(err, "initial state", e);
    ua->init = 0;
    r->small_h = cm_malloc((2u * B + 2u) * sizeof *r->small_h);
    r->best_h = cm_malloc(dsb_words(n) * sizeof *r->best_h);
    if ((e = cudaHostAlloc((void **)&r->prog_h, blocks * sizeof *r->prog_h, cudaHostAllocMapped)) ||
        (e = cudaHostGetDevicePointer((void **)&r->prog_d, r->prog_h, 0)))
        return sg_close(r), cu_fail(err, "cudaHostAlloc (progress words)", e);

    /* host frames */
    if (mode == DSB_SG_HOST_PASS || mode == DSB_SG_HOST_RING) {
        if ((e = cudaHostAlloc((void **)&r->buf_h, buf_bytes, cudaHostAllocMapped)) ||
            (e = cudaHostGetDevicePointer((void **)&r->buf_d, r->buf_h, 0)))
            return sg_close(r), cu_fail(err, "cudaHostAlloc (frame buffer)", e);
    }
    if (recv && mode == DSB_SG_HOST_RING) { /* ready[S], freed[S], abort */
        if ((e = cudaHostAlloc((void **)&r->flags_h, (2u * h->S + 1u) * sizeof *r->flags_h,
                               cudaHostAllocMapped)) ||
            (e = cudaHostGetDevicePointer((void **)&r->flags_d, r->flags_h, 0)))
            return sg_close(r), cu_fail(err, "cudaHostAlloc (ring flags)", e);
        memset(r->flags_h, 0, (2u * h->S + 1u) * sizeof *r->flags_h);
        r->abort_h = r->flags_h + 2u * h->S;
        /* the flags are 64-bit words the GPU reads and writes across the link; the
         * receiver's threads use them as C11 atomics of the same size */
        dsb_stream_ring_cfg rc = {r->buf_h, (_Atomic uint64_t *)r->flags_h,
                                  (_Atomic uint64_t *)(r->flags_h + h->S), h->S, h->F, T, 0, 0};
        if (dsb_stream_ring_create(&rc, &r->ring, err)) return sg_close(r), -1;
    }
    if (!recv && o->source == DSB_STREAM_SRC_HOST) {
        if (dsb_stream_feed_open(p, &h->feed, err)) return sg_close(r), -1;
        h->p = &r->p;
        h->buf = r->buf_h;
        h->T = T;
        h->K = K;
        h->corrupt = o->corrupt_frame;
        r->tids = cm_calloc(h->threads, sizeof *r->tids);
        r->targs = cm_calloc(h->threads, sizeof *r->targs);
        if (mode == DSB_SG_HOST_PASS) {
            for (uint32_t t = 0; t < h->threads; t++) r->targs[t] = (sg_thread_arg){h, t};
            cm_run_threads(h->threads, resident_worker, r->targs, sizeof *r->targs);
            if (!feed_ok(h, err)) return sg_close(r), -1;
        } else {
            if ((e = cudaHostAlloc((void **)&r->flags_h, 2u * h->S * sizeof *r->flags_h,
                                   cudaHostAllocMapped)) ||
                (e = cudaHostGetDevicePointer((void **)&r->flags_d, r->flags_h, 0)))
                return sg_close(r), cu_fail(err, "cudaHostAlloc (ring flags)", e);
            memset(r->flags_h, 0, 2u * h->S * sizeof *r->flags_h);
            h->ready = r->flags_h;
            h->freed = r->flags_h + h->S;
            r->running = start_threads(r->tids, r->targs, h, h->threads, ring_worker);
            if (r->running == 0)
                return sg_close(r), cm_fail(err, "gpu backend: could not start a frame-building thread");
        }
    }

    info->sms = (uint32_t)sms;
    info->blocks = blocks;
    info->blocks_per_sm = (uint32_t)bps;
    info->threads = DSB_SG_THREADS;
    info->smem_bytes = smem;
    info->regs = regs;
    info->local_bytes = local;
    info->unit_frames = unit;
    info->host_mode = mode == DSB_SG_HOST_PASS ? 1 : mode == DSB_SG_HOST_RING ? 2 : 0;
    info->ring_slots = h->S;
    info->ring_frames = (uint32_t)h->F;
    info->host_threads = !recv && o->source == DSB_STREAM_SRC_HOST ? h->threads : 0;
    info->host_buffer_bytes = buf_bytes;
    info->setup_seconds = bench_now_s() - t_setup;

    dsb_sg_consume_args *ca = &r->ca;
    ca->n = n;
    ca->replicas = B;
    ca->mode = (uint32_t)mode;
    ca->frames = T;
    ca->unit = unit;
    ca->units = (T + unit - 1u) / unit;
    ca->ring_slots = h->S;
    ca->grid_words = G;
    ca->key = dsb_stream_key(p->seed, DSB_STREAM_RANDOM);
    ca->signs = r->signs;
    ca->eta = r->eta_d;
    ca->cnt = r->cnt;
    ca->buf = r->buf_d;
    ca->ring_frames = h->F;
    ca->ready = r->flags_d;
    ca->freed = r->flags_d ? r->flags_d + h->S : NULL;
    ca->ring_count = r->ring_count;
    ca->abort = r->abort_h ? (const uint64_t *)(r->flags_d + 2u * h->S) : NULL;
    ca->poll_ns = recv ? SG_RECV_POLL_NS : SG_HOST_POLL_NS;
    ca->ticket = r->ticket;
    ca->stats = r->small + 2u * B;
    ca->progress = o->progress ? r->prog_d : NULL;
    if (r->ring && sg_recv_start(r, 0, err)) return sg_close(r), -1;
    *out = r;
    return 0;
}

/* Launches the consume kernel for `pass` (timed by ev[0], ev[1]); the ring's
 * chunk_base is set by the caller. */
static int sg_launch(dsb_stream_gpu_run *r, uint32_t pass, cm_err *err)
{
    const uint32_t B = r->p.replicas, K = r->p.updates;
    const uint64_t T = r->T;
    sg_host *h = &r->h;
    int e;
    if (r->mode == DSB_SG_HOST_PASS && !r->recv && pass > 0) { /* the pass built once, re-sent */
        for (uint64_t f = 0; f < T; f++)
            memcpy(r->buf_h + f * DSB_STREAM_FRAME + offsetof(dsb_wire_stream, pass), &pass,
                   sizeof pass);
        if (h->corrupt && pass == K) corrupt_frame(r->buf_h + (h->corrupt - 1u) * DSB_STREAM_FRAME);
    }
    memset(r->prog_h, 0, r->blocks * sizeof *r->prog_h);
    r->ca.pass = pass;
    if (!r->recv) r->ca.chunk_base = (uint64_t)pass * h->chunks_per_pass;
    r->ca.epoch = ++r->epoch;
    if ((e = cudaMemsetAsync(r->ticket, 0, sizeof *r->ticket, r->st)) ||
        (e = cudaMemsetAsync(r->small, 0, (2u * B + 2u) * sizeof *r->small, r->st)) ||
        (r->ring && (e = cudaMemsetAsync(r->ring_count, 0, h->S * sizeof *r->ring_count, r->st))) ||
        (e = cudaEventRecord(r->ev[0], r->st)) ||
        (e = dsb_sg_launch_consume(&r->ca, r->blocks, r->smem, r->st)) ||
        (e = cudaEventRecord(r->ev[1], r->st)))
        return cu_fail(err, "consume launch", e);
    r->in_flight = 1;
    r->launched_pass = pass;
    return 0;
}

/* Received frames through the ring: the next attempt (pass `pass`) on the
 * ring, and the consume kernel waiting for its chunks. */
static int sg_recv_start(dsb_stream_gpu_run *r, uint32_t pass, cm_err *err)
{
    r->ca.chunk_base = dsb_stream_ring_begin(r->ring);
    return sg_launch(r, pass, err);
}

/* Waits for the launch of `pass`, then the update kernel; fills rec (the best
 * spins on the final pass). */
static int sg_finish(dsb_stream_gpu_run *r, uint32_t pass, dsb_stream_record *rec, cm_err *err)
{
    const uint32_t B = r->p.replicas, K = r->p.updates;
    const uint64_t T = r->T;
    int e;
    double t0 = bench_now_s();
    e = wait_pass(r->ev[1], r->prog_h, r->blocks, r->bar, (uint64_t)pass * T);
    r->in_flight = 0;
    if (e) return cu_fail(err, "consume kernel", e);
    if (r->recv) r->info.recv_drain_seconds += bench_now_s() - t0;
    r->ua.update = pass < K;
    r->ua.damping = dsb_damping(pass, K);
    if ((e = cudaEventRecord(r->ev[2], r->st)) || (e = dsb_sg_launch_update(&r->ua, r->st)) ||
        (e = cudaEventRecord(r->ev[3], r->st)) || (e = cudaStreamSynchronize(r->st)) ||
        (e = cudaMemcpy(r->small_h, r->small, (2u * B + 2u) * sizeof *r->small_h,
                        cudaMemcpyDeviceToHost)))
        return cu_fail(err, "end of pass", e);
    float ms_c = 0.0f, ms_u = 0.0f;
    cudaEventElapsedTime(&ms_c, r->ev[0], r->ev[1]);
    cudaEventElapsedTime(&ms_u, r->ev[2], r->ev[3]);
    rec->pass = pass;
    rec->updated = pass < K;
    for (uint32_t b = 0; b < B; b++) {
        rec->energy2[b] = (int64_t)r->small_h[b];
        rec->checksum[b] = (uint64_t)r->small_h[B + b];
    }
    rec->best_replica = 0;
    for (uint32_t b = 1; b < B; b++)
        if (rec->energy2[b] < rec->energy2[rec->best_replica]) rec->best_replica = b;
    rec->best_energy2 = rec->energy2[rec->best_replica];
    rec->best_signs = NULL;
    if (pass == K) { /* the answer: the best replica's spins */
        if ((e = cudaMemcpy(r->best_h, r->signs + (size_t)rec->best_replica * r->G,
                            dsb_words(r->p.n) * sizeof *r->best_h, cudaMemcpyDeviceToHost)))
            return cu_fail(err, "the best spins", e);
        rec->best_signs = r->best_h;
    }
    rec->frames = r->small_h[2u * B];
    rec->bad_frames = r->small_h[2u * B + 1u];
    rec->seconds = (double)ms_c * 1e-3;
    r->info.consume_seconds += rec->seconds;
    r->info.update_seconds += (double)ms_u * 1e-3;
    return 0;
}

/* Pass `pass`: consume its frames (timed: the record's seconds), then the
 * update kernel. */
static int sg_pass(dsb_stream_gpu_run *r, uint32_t pass, dsb_stream_record *rec, cm_err *err)
{
    if (sg_launch(r, pass, err)) return -1;
    return sg_finish(r, pass, rec, err);
}

int dsb_stream_run_gpu(const dsb_stream_params *p, const dsb_stream_gpu_opts *o,
                       dsb_stream_pass_fn on_pass, void *ctx, cm_err *err)
{
    dsb_stream_gpu_run *r;
    if (sg_open(p, o, 0, &r, err)) {
        if (o && o->info) memset(o->info, 0, sizeof *o->info);
        return -1;
    }
    const uint32_t K = p->updates;
    const uint64_t T = r->T;
    dsb_stream_record rec;
    dsb_stream_record_init(&rec, p->replicas);
    bench_progress_t bar;
    if (r->o.progress) {
        bench_progress_start(&bar, "stream gpu frames", T * ((uint64_t)K + 1u));
        r->bar = &bar;
    }
    int rc = 0;
    for (uint32_t pass = 0; pass <= K; pass++) {
        if (sg_pass(r, pass, &rec, err)) {
            rc = -1;
            break;
        }
        if (r->bar) bench_progress(r->bar, (uint64_t)(pass + 1u) * T);
        if (!feed_ok(&r->h, err)) { /* a frame the feed could not give went in as zeros */
            rc = -1;
            break;
        }
        if (on_pass && on_pass(&rec, ctx)) break;
    }
    if (rc == 0 && r->bar) bench_progress_end(r->bar, (uint64_t)(K + 1u) * T);
    sg_close(r);
    dsb_stream_record_free(&rec);
    return rc;
}

/* ---- frames from a receiver --------------------------------------------------------- */

int dsb_stream_gpu_open_recv(const dsb_stream_params *p, const dsb_stream_gpu_opts *o,
                             dsb_stream_gpu_run **out, cm_err *err)
{
    return sg_open(p, o, 1, out, err);
}

void dsb_stream_gpu_close(dsb_stream_gpu_run *r) { sg_close(r); }

static int gpu_sink_frame(void *ctx, uint32_t row, uint32_t block, const uint8_t *frame)
{
    dsb_stream_gpu_run *r = ctx;
    const uint64_t f = (uint64_t)block * r->p.n + row;
    if (r->ring) return dsb_stream_ring_put(r->ring, f, frame);
    memcpy(r->buf_h + f * DSB_STREAM_FRAME, frame, DSB_STREAM_FRAME);
    return DSB_STREAM_TAKEN;
}

static int gpu_sink_end_pass(void *ctx, uint32_t pass, int update, dsb_stream_record *rec,
                             cm_err *err)
{
    dsb_stream_gpu_run *r = ctx;
    (void)update; /* the run knows: every pass but the final one */
    if (r->failed) return cm_fail(err, "%s", r->fail.msg);
    if (r->ring) {
        if (!r->in_flight || r->launched_pass != pass)
            return cm_fail(err, "gpu backend: pass %u ended, but the GPU waits for pass %u", pass,
                           r->launched_pass);
        const uint64_t whole = dsb_stream_ring_published(r->ring);
        if (whole != r->h.chunks_per_pass) /* the kernel would wait for them forever */
            return cm_fail(err, "gpu backend: pass %u ended with %llu of %llu chunks whole", pass,
                           (unsigned long long)whole, (unsigned long long)r->h.chunks_per_pass);
        if (sg_finish(r, pass, rec, err)) return -1;
    } else if (sg_pass(r, pass, rec, err)) {
        return -1;
    }
    if (rec->frames != r->T || rec->bad_frames)
        return cm_fail(err, "gpu backend: pass %u: the GPU consumed %llu of %llu frames (%llu "
                            "rejected by its check) of a pass the receiver had whole",
                       pass, (unsigned long long)rec->frames, (unsigned long long)r->T,
                       (unsigned long long)rec->bad_frames);
    if (r->ring && pass < r->p.updates && sg_recv_start(r, pass + 1u, err)) return -1;
    return 0;
}

/* An attempt that lost frames.  Pass buffer: nothing on the GPU yet (a pass is
 * consumed only once every one of its frames is in; the next attempt
 * overwrites them).  Ring: the consume kernel has taken the chunks that were
 * whole, into the mismatch counters only; it is stopped at the first chunk
 * that is not (abort word), the counters are cleared, and the pass starts
 * again on the ring with a new base.  x, y and the signs change only in the
 * update of a pass that consumed every frame, so they are as before the pass. */
static void gpu_sink_discard(void *ctx)
{
    dsb_stream_gpu_run *r = ctx;
    if (!r->ring || r->failed) return;
    int e;
    const uint32_t pass = r->launched_pass;
    if (r->in_flight) {
        *(volatile uint64_t *)r->abort_h = r->epoch;
        e = wait_pass(r->ev[1], r->prog_h, r->blocks, NULL, 0);
        r->in_flight = 0;
        if (e) {
            cu_fail(&r->fail, "consume kernel (attempt given up)", e);
            r->failed = 1;
            return;
        }
    }
    r->info.recv_attempts_stopped++;
    if ((e = cudaMemsetAsync(r->cnt, 0, (size_t)r->p.replicas * r->p.n * sizeof *r->cnt, r->st))) {
        cu_fail(&r->fail, "clearing the counters of an attempt given up", e);
        r->failed = 1;
        return;
    }
    if (sg_recv_start(r, pass, &r->fail)) r->failed = 1;
}

void dsb_stream_gpu_sink(dsb_stream_gpu_run *r, dsb_stream_sink *sink)
{
    sink->ctx = r;
    sink->frame = gpu_sink_frame;
    sink->end_pass = gpu_sink_end_pass;
    sink->discard = gpu_sink_discard;
    sink->dedup = r->ring != NULL; /* the ring tells duplicates; a pass buffer needs the bitmap */
    sink->concurrent = 1;          /* distinct frames go to distinct places */
    sink->ring = r->ring;          /* gpu_sink_frame puts into it (NULL: the pass buffer) */
}
