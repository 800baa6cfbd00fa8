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
#include "dsb/wire.h"
#include "stream_dev.h"

#define SG_DEFAULT_HOST_BYTES (64ull << 20)
#define SG_RING_MIN_SLOTS 2u
#define SG_RING_TARGET_SLOTS 16u

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

int dsb_stream_run_gpu(const dsb_stream_params *p, const dsb_stream_gpu_opts *o_in,
                       dsb_stream_pass_fn on_pass, void *ctx, cm_err *err)
{
    if (dsb_stream_params_check(p, err)) return -1;
    dsb_stream_gpu_opts o;
    if (o_in) o = *o_in;
    else dsb_stream_gpu_opts_default(&o);
    if (o.source != DSB_STREAM_SRC_GEN && o.source != DSB_STREAM_SRC_HOST)
        return cm_fail(err, "gpu backend: source %d: expected gen or host", (int)o.source);
    const uint32_t n = p->n, B = p->replicas, K = p->updates;
    const uint64_t T = dsb_stream_frames(n), G = dsb_stream_grid_words(n);
    if (o.source == DSB_STREAM_SRC_GEN && p->instance == DSB_STREAM_FILE)
        return cm_fail(err, "gpu backend: the gen source makes a generated instance's frames on the "
                            "GPU; a file's frames go through the host source (--source host)");
    if (o.corrupt_frame && (o.source != DSB_STREAM_SRC_HOST || o.corrupt_frame > T))
        return cm_fail(err, "gpu backend: corrupt_frame %llu: expected 1 .. %llu with the "
                            "host source",
                       (unsigned long long)o.corrupt_frame, (unsigned long long)T);
    double t_setup = bench_now_s();
    dsb_stream_gpu_info info;
    memset(&info, 0, sizeof info);

    int rc = -1, e;
    cudaStream_t st = NULL;
    cudaEvent_t ev[4] = {NULL, NULL, NULL, NULL};
    float *x = NULL, *y = NULL;
    uint32_t *signs = NULL, *eta_d = NULL, *ticket = NULL, *ring_count = NULL;
    int32_t *cnt = NULL;
    unsigned long long *small = NULL; /* energy2[B], checksum[B], stats[2] */
    unsigned long long *prog_h = NULL, *prog_d = NULL;
    uint64_t *flags_h = NULL, *flags_d = NULL;
    uint8_t *buf_h = NULL, *buf_d = NULL;
    unsigned long long *small_h = NULL;
    uint32_t *best_h = NULL;
    pthread_t *tids = NULL;
    sg_thread_arg *targs = NULL;
    uint32_t running = 0;
    sg_host h;
    memset(&h, 0, sizeof h);
    atomic_init(&h.next, 0);
    atomic_init(&h.stop, 0);
    atomic_init(&h.failed, 0);
    dsb_stream_record rec;
    dsb_stream_record_init(&rec, B);
    bench_progress_t bar;

    /* device and kernel configuration */
    int dev, sms = 0, bps = 0, regs = 0, local = 0;
    struct cudaDeviceProp prop;
    if ((e = cudaGetDevice(&dev)) || (e = cudaGetDeviceProperties(&prop, dev))) {
        cu_fail(err, "no usable CUDA device", e);
        goto out;
    }
    sms = prop.multiProcessorCount;
    snprintf(info.device, sizeof info.device, "%.63s", prop.name);
    const uint32_t smem = dsb_sg_smem_bytes(B);
    if ((e = dsb_sg_prepare(smem, &bps, &regs, &local))) {
        cu_fail(err, "consume kernel attributes", e);
        goto out;
    }
    if (bps < 1) {
        cm_fail(err, "gpu backend: a worker block's %u bytes of shared memory do not fit an SM",
                smem);
        goto out;
    }
    uint32_t cap_blocks = (uint32_t)bps * (uint32_t)sms;
    uint32_t blocks = o.blocks ? o.blocks : (uint32_t)(bps < 2 ? bps : 2) * (uint32_t)sms;
    if (blocks > cap_blocks) blocks = cap_blocks; /* persistent: all resident at once */

    int mode;
    uint32_t unit = DSB_SG_UNIT;
    uint64_t buf_bytes = 0;
    if (o.source == DSB_STREAM_SRC_GEN) {
        mode = p->instance == DSB_STREAM_MATTIS ? DSB_SG_GEN_MATTIS : DSB_SG_GEN_RANDOM;
    } else {
        uint64_t hb = o.host_bytes ? o.host_bytes : SG_DEFAULT_HOST_BYTES;
        uint64_t cap = hb / DSB_STREAM_FRAME;
        if (T <= cap) {
            mode = DSB_SG_HOST_PASS;
            buf_bytes = T * DSB_STREAM_FRAME;
        } else {
            mode = DSB_SG_HOST_RING;
            if (cap < (uint64_t)SG_RING_MIN_SLOTS * unit) {
                cm_fail(err, "gpu backend: host_bytes %llu: a pass (%llu bytes) does not fit, "
                             "and a ring needs at least %u bytes",
                        (unsigned long long)hb, (unsigned long long)(T * DSB_STREAM_FRAME),
                        SG_RING_MIN_SLOTS * unit * DSB_STREAM_FRAME);
                goto out;
            }
            uint64_t per = cap / ((uint64_t)unit * SG_RING_TARGET_SLOTS);
            h.F = (uint64_t)unit * (per ? per : 1u);
            h.S = (uint32_t)(cap / h.F);
            h.chunks_per_pass = (T + h.F - 1u) / h.F;
            h.chunks = h.chunks_per_pass * ((uint64_t)K + 1u);
            buf_bytes = (uint64_t)h.S * h.F * DSB_STREAM_FRAME;
        }
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        h.threads = o.host_threads ? o.host_threads : (c > 1 ? (uint32_t)c - 1u : 1u);
    }
    if (mode != DSB_SG_HOST_RING) /* enough units to spread over the blocks */
        while (unit > 16u && (T + unit - 1u) / unit < 2ull * blocks) unit -= 16u;

    /* device state */
    const size_t bn = (size_t)B * n;
    if ((e = cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking))) {
        cu_fail(err, "stream", e);
        goto out;
    }
    for (int i = 0; i < 4; i++)
        if ((e = cudaEventCreate(&ev[i]))) {
            cu_fail(err, "event", e);
            goto out;
        }
    if ((e = cudaMalloc((void **)&x, bn * sizeof *x)) || (e = cudaMalloc((void **)&y, bn * sizeof *y)) ||
        (e = cudaMalloc((void **)&cnt, bn * sizeof *cnt)) ||
        (e = cudaMalloc((void **)&signs, (size_t)B * G * sizeof *signs)) ||
        (e = cudaMalloc((void **)&small, (2u * B + 2u) * sizeof *small)) ||
        (e = cudaMalloc((void **)&ticket, sizeof *ticket)) ||
        (e = cudaMalloc((void **)&ring_count, (h.S ? h.S : 1u) * sizeof *ring_count))) {
        cu_fail(err, "cudaMalloc (state)", e);
        goto out;
    }
    if ((e = cudaMemsetAsync(cnt, 0, bn * sizeof *cnt, st)) ||
        (e = cudaMemsetAsync(signs, 0, (size_t)B * G * sizeof *signs, st)) ||
        (e = cudaMemsetAsync(ring_count, 0, (h.S ? h.S : 1u) * sizeof *ring_count, st))) {
        cu_fail(err, "cudaMemset (state)", e);
        goto out;
    }
    if (mode == DSB_SG_GEN_MATTIS) {
        if ((e = cudaMalloc((void **)&eta_d, G * sizeof *eta_d)) ||
            (e = dsb_sg_launch_eta(eta_d, dsb_stream_key(p->seed, DSB_STREAM_MATTIS), n, G, st))) {
            cu_fail(err, "eta bitmap", e);
            goto out;
        }
    }
    dsb_sg_update_args ua;
    memset(&ua, 0, sizeof ua);
    ua.n = n;
    ua.replicas = B;
    ua.seed = p->seed;
    ua.grid_words = G;
    ua.xi = dsb_stream_xi(p);
    ua.dt = p->dt;
    ua.x = x;
    ua.y = y;
    ua.signs = signs;
    ua.cnt = cnt;
    ua.energy2 = small;
    ua.checksum = small + B;
    ua.init = 1;
    if ((e = dsb_sg_launch_update(&ua, st)) || (e = cudaStreamSynchronize(st))) {
        cu_fail(err, "initial state", e);
        goto out;
    }
    ua.init = 0;
    small_h = cm_malloc((2u * B + 2u) * sizeof *small_h);
    best_h = cm_malloc(dsb_words(n) * sizeof *best_h);
    if ((e = cudaHostAlloc((void **)&prog_h, blocks * sizeof *prog_h, cudaHostAllocMapped)) ||
        (e = cudaHostGetDevicePointer((void **)&prog_d, prog_h, 0))) {
        cu_fail(err, "cudaHostAlloc (progress words)", e);
        goto out;
    }

    /* host frames */
    if (o.source == DSB_STREAM_SRC_HOST) {
        if ((e = cudaHostAlloc((void **)&buf_h, buf_bytes, cudaHostAllocMapped)) ||
            (e = cudaHostGetDevicePointer((void **)&buf_d, buf_h, 0))) {
            cu_fail(err, "cudaHostAlloc (frame buffer)", e);
            goto out;
        }
        if (dsb_stream_feed_open(p, &h.feed, err)) goto out;
        h.p = p;
        h.buf = buf_h;
        h.T = T;
        h.K = K;
        h.corrupt = o.corrupt_frame;
        tids = cm_calloc(h.threads, sizeof *tids);
        targs = cm_calloc(h.threads, sizeof *targs);
        if (mode == DSB_SG_HOST_PASS) {
            for (uint32_t t = 0; t < h.threads; t++) targs[t] = (sg_thread_arg){&h, t};
            cm_run_threads(h.threads, resident_worker, targs, sizeof *targs);
            if (!feed_ok(&h, err)) goto out;
        } else {
            if ((e = cudaHostAlloc((void **)&flags_h, 2u * h.S * sizeof *flags_h,
                                   cudaHostAllocMapped)) ||
                (e = cudaHostGetDevicePointer((void **)&flags_d, flags_h, 0))) {
                cu_fail(err, "cudaHostAlloc (ring flags)", e);
                goto out;
            }
            memset(flags_h, 0, 2u * h.S * sizeof *flags_h);
            h.ready = flags_h;
            h.freed = flags_h + h.S;
            running = start_threads(tids, targs, &h, h.threads, ring_worker);
            if (running == 0) {
                cm_fail(err, "gpu backend: could not start a frame-building thread");
                goto out;
            }
        }
    }

    info.sms = (uint32_t)sms;
    info.blocks = blocks;
    info.blocks_per_sm = (uint32_t)bps;
    info.threads = DSB_SG_THREADS;
    info.smem_bytes = smem;
    info.regs = regs;
    info.local_bytes = local;
    info.unit_frames = unit;
    info.host_mode = mode == DSB_SG_HOST_PASS ? 1 : mode == DSB_SG_HOST_RING ? 2 : 0;
    info.ring_slots = h.S;
    info.ring_frames = (uint32_t)h.F;
    info.host_threads = o.source == DSB_STREAM_SRC_HOST ? h.threads : 0;
    info.host_buffer_bytes = buf_bytes;
    info.setup_seconds = bench_now_s() - t_setup;

    dsb_sg_consume_args ca;
    memset(&ca, 0, sizeof ca);
    ca.n = n;
    ca.replicas = B;
    ca.mode = (uint32_t)mode;
    ca.frames = T;
    ca.unit = unit;
    ca.units = (T + unit - 1u) / unit;
    ca.ring_slots = h.S;
    ca.grid_words = G;
    ca.key = dsb_stream_key(p->seed, DSB_STREAM_RANDOM);
    ca.signs = signs;
    ca.eta = eta_d;
    ca.cnt = cnt;
    ca.buf = buf_d;
    ca.ring_frames = h.F;
    ca.ready = flags_d;
    ca.freed = flags_d ? flags_d + h.S : NULL;
    ca.ring_count = ring_count;
    ca.ticket = ticket;
    ca.stats = small + 2u * B;
    ca.progress = o.progress ? prog_d : NULL;

    if (o.progress) bench_progress_start(&bar, "stream gpu frames", T * ((uint64_t)K + 1u));
    for (uint32_t pass = 0; pass <= K; pass++) {
        if (mode == DSB_SG_HOST_PASS && pass > 0) {
            for (uint64_t f = 0; f < T; f++)
                memcpy(buf_h + f * DSB_STREAM_FRAME + offsetof(dsb_wire_stream, pass), &pass,
                       sizeof pass);
            if (h.corrupt && pass == K) corrupt_frame(buf_h + (h.corrupt - 1u) * DSB_STREAM_FRAME);
        }
        memset(prog_h, 0, blocks * sizeof *prog_h);
        ca.pass = pass;
        ca.chunk_base = (uint64_t)pass * h.chunks_per_pass;
        if ((e = cudaMemsetAsync(ticket, 0, sizeof *ticket, st)) ||
            (e = cudaMemsetAsync(small, 0, (2u * B + 2u) * sizeof *small, st)) ||
            (e = cudaEventRecord(ev[0], st)) ||
            (e = dsb_sg_launch_consume(&ca, blocks, smem, st)) ||
            (e = cudaEventRecord(ev[1], st))) {
            cu_fail(err, "consume launch", e);
            goto out;
        }
        if ((e = wait_pass(ev[1], prog_h, blocks, o.progress ? &bar : NULL, (uint64_t)pass * T))) {
            cu_fail(err, "consume kernel", e);
            goto out;
        }
        ua.update = pass < K;
        ua.damping = dsb_damping(pass, K);
        if ((e = cudaEventRecord(ev[2], st)) || (e = dsb_sg_launch_update(&ua, st)) ||
            (e = cudaEventRecord(ev[3], st)) || (e = cudaStreamSynchronize(st)) ||
            (e = cudaMemcpy(small_h, small, (2u * B + 2u) * sizeof *small_h,
                            cudaMemcpyDeviceToHost))) {
            cu_fail(err, "end of pass", e);
            goto out;
        }
        float ms_c = 0.0f, ms_u = 0.0f;
        cudaEventElapsedTime(&ms_c, ev[0], ev[1]);
        cudaEventElapsedTime(&ms_u, ev[2], ev[3]);
        rec.pass = pass;
        rec.updated = pass < K;
        for (uint32_t b = 0; b < B; b++) {
            rec.energy2[b] = (int64_t)small_h[b];
            rec.checksum[b] = (uint64_t)small_h[B + b];
        }
        rec.best_replica = 0;
        for (uint32_t b = 1; b < B; b++)
            if (rec.energy2[b] < rec.energy2[rec.best_replica]) rec.best_replica = b;
        rec.best_energy2 = rec.energy2[rec.best_replica];
        rec.best_signs = NULL;
        if (pass == K) { /* the answer: the best replica's spins */
            if ((e = cudaMemcpy(best_h, signs + (size_t)rec.best_replica * G,
                                dsb_words(n) * sizeof *best_h, cudaMemcpyDeviceToHost))) {
                cu_fail(err, "the best spins", e);
                goto out;
            }
            rec.best_signs = best_h;
        }
        rec.frames = small_h[2u * B];
        rec.bad_frames = small_h[2u * B + 1u];
        rec.seconds = (double)ms_c * 1e-3;
        info.consume_seconds += rec.seconds;
        info.update_seconds += (double)ms_u * 1e-3;
        if (o.progress) bench_progress(&bar, (uint64_t)(pass + 1u) * T);
        if (!feed_ok(&h, err)) goto out; /* a frame the feed could not give went in as zeros */
        if (on_pass && on_pass(&rec, ctx)) break;
    }
    if (o.progress) bench_progress_end(&bar, (uint64_t)(K + 1u) * T);
    rc = 0;

out:
    if (running) {
        atomic_store(&h.stop, 1);
        for (uint32_t t = 0; t < running; t++) pthread_join(tids[t], NULL);
    }
    if (o.info) *o.info = info;
    free(tids);
    free(targs);
    dsb_stream_feed_close(h.feed);
    free(small_h);
    free(best_h);
    if (buf_h) cudaFreeHost(buf_h);
    if (flags_h) cudaFreeHost(flags_h);
    if (prog_h) cudaFreeHost(prog_h);
    cudaFree(x);
    cudaFree(y);
    cudaFree(cnt);
    cudaFree(signs);
    cudaFree(eta_d);
    cudaFree(small);
    cudaFree(ticket);
    cudaFree(ring_count);
    for (int i = 0; i < 4; i++)
        if (ev[i]) cudaEventDestroy(ev[i]);
    if (st) cudaStreamDestroy(st);
    dsb_stream_record_free(&rec);
    return rc;
}
