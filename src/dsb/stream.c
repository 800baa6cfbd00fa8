/* The CPU reference of the streaming dSB solver (seed 000, Sec. VIII).
 *
 * Frames of one row's column block (include/dsb/stream.h, wire format in
 * dsb/wire.h) are checked and consumed for every replica at once: each frame's
 * 1008 words are XORed with each replica's sign words of that column block and
 * popcounted into the row's int32 mismatch counter.  At the end of a pass the
 * counters give the exact coupling sums of Eq. (10), the energies, and (on
 * updating passes) one dSB step from dsb/core.h: the same functions the GPU
 * kernels call, so the records agree bit for bit. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/bench.h"
#include "common/threads.h"
#include "dsb/model.h"
#include "dsb/stream.h"
#include "dsb/wire.h"

struct dsb_stream_state {
    dsb_stream_params p;
    float xi;
    uint32_t blocks;
    uint64_t grid;     /* sign words of one replica on the frame grid */
    float *x, *y;      /* B x n */
    uint32_t *signs;   /* B x grid, zero beyond n */
    int32_t *mismatch; /* B x n: c_i of the pass so far */
};

void dsb_stream_params_default(dsb_stream_params *p)
{
    p->n = 10000;
    p->replicas = 8;
    p->updates = 20;
    p->dt = DSB_STREAM_DEFAULT_DT;
    p->xi = 0.0f;
    p->seed = DSB_STREAM_DEFAULT_SEED;
    p->instance = DSB_STREAM_MATTIS;
}

int dsb_stream_params_check(const dsb_stream_params *p, cm_err *err)
{
    if (p->n < 2 || p->n > DSB_STREAM_MAX_N)
        return cm_fail(err, "n = %u: expected 2 .. %u (|a_i| < 2^24 keeps the FP32 step exact)",
                       p->n, DSB_STREAM_MAX_N);
    if (p->replicas < 1 || p->replicas > DSB_STREAM_MAX_REPLICAS)
        return cm_fail(err, "replicas = %u: expected 1 .. %u", p->replicas,
                       DSB_STREAM_MAX_REPLICAS);
    if (p->updates < 1) return cm_fail(err, "updates = 0: expected at least 1");
    if (!isfinite(p->dt) || p->dt <= 0.0f)
        return cm_fail(err, "dt = %g: expected a finite number > 0", (double)p->dt);
    if (!isfinite(p->xi) || p->xi < 0.0f)
        return cm_fail(err, "xi = %g: expected a finite number >= 0 (0 = 0.5/sqrt(n))",
                       (double)p->xi);
    if (p->instance != DSB_STREAM_MATTIS && p->instance != DSB_STREAM_RANDOM &&
        p->instance != DSB_STREAM_FILE)
        return cm_fail(err, "instance %d: expected mattis, random or a file", (int)p->instance);
    return 0;
}

float dsb_stream_xi(const dsb_stream_params *p)
{
    return p->xi != 0.0f ? p->xi : (float)(0.5 / sqrt((double)p->n));
}

const char *dsb_stream_instance_name(dsb_stream_instance k)
{
    return k == DSB_STREAM_MATTIS   ? "mattis"
           : k == DSB_STREAM_RANDOM ? "random"
           : k == DSB_STREAM_FILE   ? "file"
                                    : "unknown";
}

uint32_t dsb_stream_params_run_id(const dsb_stream_params *p)
{
    return p->instance == DSB_STREAM_FILE ? p->file_run_id : dsb_stream_run_id(p->seed, p->instance);
}

int dsb_stream_instance_parse(const char *s, dsb_stream_instance *out)
{
    if (!strcasecmp(s, "mattis")) *out = DSB_STREAM_MATTIS;
    else if (!strcasecmp(s, "random")) *out = DSB_STREAM_RANDOM;
    else return -1;
    return 0;
}

int dsb_stream_known_ground(const dsb_stream_params *p, int64_t *energy2)
{
    if (p->instance != DSB_STREAM_MATTIS) return 0;
    *energy2 = -(int64_t)p->n * ((int64_t)p->n - 1);
    return 1;
}

uint32_t *dsb_stream_eta_bitmap(const dsb_stream_params *p)
{
    uint64_t grid = dsb_stream_grid_words(p->n);
    uint32_t *eta = cm_malloc(grid * sizeof *eta);
    uint64_t key = dsb_stream_key(p->seed, DSB_STREAM_MATTIS);
    for (uint64_t gw = 0; gw < grid; gw++) eta[gw] = dsb_stream_eta_word(key, p->n, gw);
    return eta;
}

void dsb_stream_put_header(uint8_t *out, uint32_t n, uint32_t run_id, uint32_t pass,
                           uint32_t row, uint32_t block, uint16_t queue, uint64_t seq)
{
    dsb_wire_stream h;
    dsb_wire_init(&h, DSB_MSG_STREAM, NULL, NULL);
    h.n = n;
    h.request_id = run_id;
    h.payload_len = DSB_STREAM_PAYLOAD;
    h.format = DSB_FMT_PM1;
    h.row = row;
    h.block = block;
    h.pass = pass;
    h.queue = queue;
    h.seq = seq;
    memcpy(out, &h, sizeof h);
}

void dsb_stream_build_frame(uint8_t *out, const dsb_stream_params *p, const uint32_t *eta,
                            uint32_t pass, uint32_t row, uint32_t block, uint16_t queue,
                            uint64_t seq)
{
    dsb_stream_put_header(out, p->n, dsb_stream_params_run_id(p), pass, row, block, queue, seq);
    uint8_t *payload = out + DSB_WIRE_HDR_BYTES;
    uint64_t first = (uint64_t)block * DSB_STREAM_WORDS;
    if (p->instance == DSB_STREAM_MATTIS) {
        uint32_t eta_i = eta[row / 32u] >> (row % 32u) & 1u;
        for (uint32_t w = 0; w < DSB_STREAM_WORDS; w++) {
            uint32_t word = dsb_stream_mattis_word(eta_i, eta[first + w], p->n, first + w);
            memcpy(payload + 4u * w, &word, 4);
        }
    } else {
        uint64_t key = dsb_stream_key(p->seed, DSB_STREAM_RANDOM);
        for (uint32_t w = 0; w < DSB_STREAM_WORDS; w++) {
            uint32_t word = dsb_stream_random_word(key, row, p->n, first + w);
            memcpy(payload + 4u * w, &word, 4);
        }
    }
}

/* Packs the signs of replica b's positions onto the frame grid. */
static void pack_signs(dsb_stream_state *s, uint32_t b)
{
    uint32_t *v = s->signs + b * s->grid;
    const float *x = s->x + (size_t)b * s->p.n;
    memset(v, 0, s->grid * sizeof *v);
    for (uint32_t i = 0; i < s->p.n; i++) v[i / 32u] |= dsb_spin_bit(x[i]) << (i % 32u);
}

int dsb_stream_state_create(const dsb_stream_params *p, dsb_stream_state **out, cm_err *err)
{
    *out = NULL;
    if (dsb_stream_params_check(p, err)) return -1;
    dsb_stream_state *s = cm_calloc(1, sizeof *s);
    s->p = *p;
    s->xi = dsb_stream_xi(p);
    s->blocks = dsb_stream_blocks(p->n);
    s->grid = dsb_stream_grid_words(p->n);
    size_t bn = (size_t)p->replicas * p->n;
    s->x = cm_malloc(bn * sizeof *s->x);
    s->y = cm_malloc(bn * sizeof *s->y);
    s->mismatch = cm_calloc(bn, sizeof *s->mismatch);
    s->signs = cm_malloc((size_t)p->replicas * s->grid * sizeof *s->signs);
    for (uint32_t b = 0; b < p->replicas; b++) {
        for (uint32_t i = 0; i < p->n; i++)
            dsb_initial_state(p->seed, b, i, &s->x[(size_t)b * p->n + i],
                              &s->y[(size_t)b * p->n + i]);
        pack_signs(s, b);
    }
    *out = s;
    return 0;
}

void dsb_stream_state_free(dsb_stream_state *s)
{
    if (!s) return;
    free(s->x);
    free(s->y);
    free(s->signs);
    free(s->mismatch);
    free(s);
}

const uint32_t *dsb_stream_signs(const dsb_stream_state *s, uint32_t b)
{
    return s->signs + b * s->grid;
}

void dsb_stream_accumulate(dsb_stream_state *s, uint32_t row, uint32_t block,
                           const uint8_t *payload)
{
    /* 504 64-bit words; memcpy keeps an unaligned frame legal */
    uint64_t pw[DSB_STREAM_WORDS / 2u];
    memcpy(pw, payload, sizeof pw);
    for (uint32_t b = 0; b < s->p.replicas; b++) {
        const uint32_t *tile = s->signs + b * s->grid + (uint64_t)block * DSB_STREAM_WORDS;
        int32_t c = 0;
        for (uint32_t w = 0; w < DSB_STREAM_WORDS / 2u; w++) {
            uint64_t t;
            memcpy(&t, tile + 2u * w, 8);
            c += __builtin_popcountll(pw[w] ^ t);
        }
        s->mismatch[(size_t)b * s->p.n + row] += c;
    }
}

int dsb_stream_consume(dsb_stream_state *s, uint32_t pass, const uint8_t *frame, size_t len)
{
    dsb_wire_stream h;
    dsb_wire_reason r = dsb_wire_stream_check(frame, len, s->p.n, pass, &h);
    if (r != DSB_WR_NONE) return (int)r;
    if (h.request_id != dsb_stream_params_run_id(&s->p)) return DSB_WR_WRONG_RUN;
    dsb_stream_accumulate(s, h.row, h.block, frame + DSB_WIRE_HDR_BYTES);
    return DSB_WR_NONE;
}

void dsb_stream_discard_pass(dsb_stream_state *s)
{
    memset(s->mismatch, 0, (size_t)s->p.replicas * s->p.n * sizeof *s->mismatch);
}

static int cpu_sink_frame(void *ctx, uint32_t row, uint32_t block, const uint8_t *frame)
{
    dsb_stream_accumulate(ctx, row, block, frame + DSB_WIRE_HDR_BYTES);
    return DSB_STREAM_TAKEN;
}

static int cpu_sink_end_pass(void *ctx, uint32_t pass, int update, dsb_stream_record *rec,
                             cm_err *err)
{
    (void)err;
    dsb_stream_end_pass(ctx, pass, update, 1, rec);
    return 0;
}

static void cpu_sink_discard(void *ctx) { dsb_stream_discard_pass(ctx); }

void dsb_stream_cpu_sink(dsb_stream_state *s, dsb_stream_sink *sink)
{
    sink->ctx = s;
    sink->frame = cpu_sink_frame;
    sink->end_pass = cpu_sink_end_pass;
    sink->discard = cpu_sink_discard;
    sink->dedup = 0;      /* the receiver's bitmap keeps duplicates out */
    sink->concurrent = 0; /* two frames of one row would race on its counters */
    sink->ring = NULL;
}

uint64_t dsb_stream_checksum(const uint32_t *signs, uint32_t n)
{
    uint64_t sum = 0, words64 = ((uint64_t)n + 63u) / 64u, W = dsb_words(n);
    for (uint64_t k = 0; k < words64; k++) {
        uint64_t lo = signs[2u * k], hi = 2u * k + 1u < W ? signs[2u * k + 1u] : 0u;
        sum += dsb_stream_checksum_term(k, lo | hi << 32);
    }
    return sum;
}

void dsb_stream_record_init(dsb_stream_record *r, uint32_t replicas)
{
    memset(r, 0, sizeof *r);
    r->energy2 = cm_calloc(replicas, sizeof *r->energy2);
    r->checksum = cm_calloc(replicas, sizeof *r->checksum);
}

void dsb_stream_record_free(dsb_stream_record *r)
{
    free(r->energy2);
    free(r->checksum);
    memset(r, 0, sizeof *r);
}

/* The end of a pass for one replica: Eq. (10), its energy, the step. */
static void end_pass_replica(dsb_stream_state *s, uint32_t b, uint32_t pass, int update,
                             dsb_stream_record *rec)
{
    uint32_t n = s->p.n;
    const uint32_t *v = s->signs + b * s->grid;
    int32_t *c = s->mismatch + (size_t)b * n;
    float *x = s->x + (size_t)b * n, *y = s->y + (size_t)b * n;
    float damping = dsb_damping(pass, s->p.updates);
    int64_t e2 = 0;
    for (uint32_t i = 0; i < n; i++) {
        int32_t s_i = (v[i / 32u] >> (i % 32u) & 1u) ? 1 : -1;
        int32_t a = dsb_stream_coupling_sum(n, c[i], s_i);
        e2 += dsb_energy2_term(s_i, a, 0);
        if (update) dsb_step(&x[i], &y[i], a, damping, s->xi, s->p.dt);
        c[i] = 0;
    }
    if (update) pack_signs(s, b);
    rec->energy2[b] = e2;
    rec->checksum[b] = dsb_stream_checksum(v, n);
}

typedef struct {
    dsb_stream_state *s;
    uint32_t pass, first, stride;
    int update;
    dsb_stream_record *rec;
} end_arg;

static void *end_worker(void *arg)
{
    end_arg *a = arg;
    for (uint32_t b = a->first; b < a->s->p.replicas; b += a->stride)
        end_pass_replica(a->s, b, a->pass, a->update, a->rec);
    return NULL;
}

void dsb_stream_end_pass(dsb_stream_state *s, uint32_t pass, int update, uint32_t threads,
                         dsb_stream_record *rec)
{
    if (threads < 1) threads = 1;
    if (threads > s->p.replicas) threads = s->p.replicas;
    end_arg *args = cm_malloc(threads * sizeof *args);
    for (uint32_t t = 0; t < threads; t++) args[t] = (end_arg){s, pass, t, threads, update, rec};
    cm_run_threads(threads, end_worker, args, sizeof *args);
    free(args);
    rec->pass = pass;
    rec->updated = update;
    rec->best_replica = 0;
    for (uint32_t b = 1; b < s->p.replicas; b++)
        if (rec->energy2[b] < rec->energy2[rec->best_replica]) rec->best_replica = b;
    rec->best_energy2 = rec->energy2[rec->best_replica];
    rec->best_signs = dsb_stream_signs(s, rec->best_replica);
}

/* ---- the whole run, frames made in process (source `gen`, or a file) --------------- */
typedef struct {
    dsb_stream_state *s;
    dsb_stream_feed *src;
    uint32_t pass, row_begin, row_end;
    uint64_t frames, bad;
    int failed;               /* the source could not give a frame */
    cm_err err;
    _Atomic uint64_t *done;   /* frames of the run so far, for the progress line */
    bench_progress_t *progress; /* thread 0 only */
} gen_arg;

static void *gen_worker(void *arg)
{
    gen_arg *a = arg;
    uint8_t frame[DSB_STREAM_FRAME] __attribute__((aligned(16)));
    uint64_t since = 0;
    a->frames = a->bad = 0;
    for (uint32_t blk = 0; blk < a->s->blocks && !a->failed; blk++) {
        for (uint32_t row = a->row_begin; row < a->row_end; row++) {
            uint64_t f = (uint64_t)blk * a->s->p.n + row;
            if (dsb_stream_feed_get(a->src, a->pass, f, 0, frame, &a->err)) {
                a->failed = 1;
                break;
            }
            if (dsb_stream_consume(a->s, a->pass, frame, sizeof frame) == DSB_WR_NONE)
                a->frames++;
            else a->bad++;
            if (++since == 256) {
                uint64_t d = atomic_fetch_add(a->done, since) + since;
                since = 0;
                if (a->progress) bench_progress(a->progress, d);
            }
        }
    }
    atomic_fetch_add(a->done, since);
    return NULL;
}

int dsb_stream_run_cpu(const dsb_stream_params *p, uint32_t threads, int progress,
                       dsb_stream_pass_fn on_pass, void *ctx, cm_err *err)
{
    dsb_stream_state *s;
    dsb_stream_feed *src;
    if (dsb_stream_state_create(p, &s, err)) return -1;
    if (dsb_stream_feed_open(p, &src, err)) {
        dsb_stream_state_free(s);
        return -1;
    }
    if (threads == 0) threads = cm_online_cpus();
    if (threads > p->n) threads = p->n;
    uint64_t per_pass = dsb_stream_frames(p->n), passes = (uint64_t)p->updates + 1u;
    bench_progress_t bar;
    bench_progress_start(&bar, "stream frames", per_pass * passes);
    _Atomic uint64_t done = 0;
    gen_arg *args = cm_calloc(threads, sizeof *args);
    dsb_stream_record rec;
    dsb_stream_record_init(&rec, p->replicas);
    int rc = 0;
    for (uint32_t pass = 0; pass <= p->updates && rc == 0; pass++) {
        for (uint32_t t = 0; t < threads; t++) {
            memset(&args[t], 0, sizeof args[t]);
            args[t].s = s;
            args[t].src = src;
            args[t].pass = pass;
            args[t].row_begin = (uint32_t)((uint64_t)p->n * t / threads);
            args[t].row_end = (uint32_t)((uint64_t)p->n * (t + 1u) / threads);
            args[t].done = &done;
            args[t].progress = progress && t == 0 ? &bar : NULL;
        }
        double t0 = bench_now_s();
        cm_run_threads(threads, gen_worker, args, sizeof *args);
        rec.seconds = bench_now_s() - t0;
        rec.frames = rec.bad_frames = 0;
        for (uint32_t t = 0; t < threads; t++) {
            if (args[t].failed && rc == 0) rc = cm_fail(err, "%s", args[t].err.msg);
            rec.frames += args[t].frames;
            rec.bad_frames += args[t].bad;
        }
        if (rc) break;
        dsb_stream_end_pass(s, pass, pass < p->updates, threads, &rec);
        if (rec.frames != per_pass || rec.bad_frames) {
            rc = cm_fail(err, "pass %u consumed %llu of %llu frames (%llu rejected)", pass,
                         (unsigned long long)rec.frames, (unsigned long long)per_pass,
                         (unsigned long long)rec.bad_frames);
            break;
        }
        if (on_pass && on_pass(&rec, ctx)) break;
    }
    if (progress) bench_progress_end(&bar, atomic_load(&done));
    dsb_stream_record_free(&rec);
    free(args);
    dsb_stream_feed_close(src);
    dsb_stream_state_free(s);
    return rc;
}
