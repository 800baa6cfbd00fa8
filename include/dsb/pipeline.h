/* The persistent worker pipeline of the dsb service (seed 000, Sec. V, Fig. 1(c);
 * Table IV of Sec. VII-C).
 *
 * N_w persistent worker blocks (as many as are resident at the fixed shared-
 * memory size S, minus `reserve` slots) run one loop: take a ticket t with one
 * atomic, wait for work item t mod C to carry sequence number t+1, copy the
 * SOLVE frame (header and field) into shared memory, solve it with the
 * request-per-block solver (src/dsb/gpu/solver_body.cuh, the same device body
 * as the one-request kernels), allocate a reply slot after the solve, write a
 * RESULT frame (wire.h) into it with the queue and solve times, publish the
 * slot's ready word (sequence number and length) behind a fence, and
 * acknowledge the ticket in the work slot.
 *
 * Rings: C = 4096 work items, each owning a frame buffer of 1536 bytes; 4096
 * reply slots of 512 bytes.  A producer reuses work slot s only once the
 * previous ticket of that slot was acknowledged; otherwise it drops the
 * request and counts it (or waits, in the benchmark's closed loop).  The
 * consumer drains replies in order and returns slots with one counter.
 *
 * Two placements behind one interface, served by the same worker kernel:
 *   DSB_PIPE_GPU   rings in GPU memory, fed by a GPU generator warp and drained
 *                  by a GPU consumer warp (dsb_pipe_run_traffic), or by the
 *                  device-side agents of a GPU-initiated server;
 *   DSB_PIPE_HOST  rings in host-mapped pinned memory, fed and drained by CPU
 *                  threads (dsb_pipe_publish / dsb_pipe_drain), as the
 *                  CPU-proxied server does.
 * Models always live in GPU memory (dsb_pipe_set_model).
 *
 * Threading: one producer thread and one consumer thread at a time for the
 * host placement; every other call from one controlling thread.  Without CUDA
 * every call reports that the pipeline was not built. */
#ifndef DSB_PIPELINE_H
#define DSB_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "dsb/model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DSB_PIPE_RING 4096u          /* C: work items and reply slots */
#define DSB_PIPE_FRAME_SLOT 1536u    /* frame buffer of one work item (>= 1514) */
#define DSB_PIPE_REPLY_SLOT 512u     /* one reply slot (RESULT frame, <= 64 + 256) */
#define DSB_PIPE_MODELS 64u          /* model slots (= DSB_STORE_SLOTS) */
#define DSB_PIPE_MAX_B 128u          /* B n_p <= 4096 and n_p >= 32 */
#define DSB_PIPE_DEFAULT_SMEM (48u * 1024u) /* S of every worker (paper: 48 KiB) */
#define DSB_PIPE_AREA 2304u          /* per-worker area at the top of S: frame copy,
                                        reply staging, loop state */

typedef enum { DSB_PIPE_GPU = 0, DSB_PIPE_HOST = 1 } dsb_pipe_placement;

const char *dsb_pipe_placement_name(dsb_pipe_placement p);
/* "gpu" or "host"; -1 if unknown. */
int dsb_pipe_placement_parse(const char *s, dsb_pipe_placement *out);

typedef struct {
    dsb_pipe_placement placement;
    uint32_t smem_bytes;  /* fixed S per worker block, 8 KiB .. 227 KiB (default 48 KiB) */
    uint32_t reserve;     /* resident block slots left free (default 1: the generator /
                             consumer block of the GPU benchmark, or driver work) */
    uint32_t max_workers; /* 0: all that fit */
    uint32_t poll_ns;     /* a block reads the host-mapped flags at most this often
                             (default 500000 = 0.5 ms) */
    uint32_t max_steps;   /* larger K is answered TOO_LARGE (default 100000) */
    int sums;             /* dsb_gpu_sums: the workers' coupling-sum engine (default
                             auto); tensor applies to requests of at most 32 tiles
                             of 16 rows x 8 replicas, the others use the CUDA cores */
} dsb_pipe_config;

void dsb_pipe_config_default(dsb_pipe_config *c);
/* Checks the ranges of a configuration (no GPU needed). */
int dsb_pipe_config_check(const dsb_pipe_config *c, cm_err *err);

typedef struct dsb_pipe dsb_pipe;

int dsb_pipe_create(const dsb_pipe_config *c, dsb_pipe **out, cm_err *err);
void dsb_pipe_destroy(dsb_pipe *p); /* stops the workers first */

/* N_w, the worker blocks the pipeline runs (known after create). */
uint32_t dsb_pipe_workers(const dsb_pipe *p);
/* Resident 256-thread blocks per SM at S, and the SM count. */
uint32_t dsb_pipe_blocks_per_sm(const dsb_pipe *p);
uint32_t dsb_pipe_sms(const dsb_pipe *p);
const char *dsb_pipe_device_name(const dsb_pipe *p);
/* Registers per thread and local (stack/spill) bytes per thread of the worker. */
void dsb_pipe_worker_regs(const dsb_pipe *p, int *regs, int *local_bytes);

/* Copies model m into GPU slot `id` (< 64) with its generation (echoed in
 * replies; a SOLVE with generation g != 0 must match it).  Only while the
 * workers are stopped.  Precomputes the Eq. (6) layouts of every B that fits
 * one block at S (the others are answered TOO_LARGE). */
int dsb_pipe_set_model(dsb_pipe *p, uint16_t id, const dsb_model *m, uint32_t generation,
                       cm_err *err);
/* Largest B that model slot `id` accepts at S (0: empty slot). */
uint32_t dsb_pipe_max_replicas(const dsb_pipe *p, uint16_t id);

/* Resets the rings and launches the N_w workers. */
int dsb_pipe_start(dsb_pipe *p, cm_err *err);

typedef struct {
    uint64_t served;      /* replies written by the workers */
    uint64_t errors;      /* of those, with a non-OK status */
    uint64_t busy_ns;     /* sum over workers of claim-to-publish time */
    uint32_t workers_seen;/* workers that reported at exit */
} dsb_pipe_stats;

/* Sets the shutdown flag (each block reads it at most every poll_ns), waits
 * for the workers to leave and collects their counters (st may be NULL).
 * Requests published but not taken are abandoned. */
int dsb_pipe_stop(dsb_pipe *p, dsb_pipe_stats *st, cm_err *err);

/* ---- host placement: the CPU producer and consumer ------------------------ */

/* Copies one SOLVE frame (64 <= len <= 1536) into the next work slot and
 * publishes it with receive time t_recv_ns (CLOCK_MONOTONIC, converted to
 * the GPU clock for the queue time).  Returns 0 published, 1 dropped (the
 * slot's previous ticket is not acknowledged yet; counted), -1 error. */
int dsb_pipe_publish(dsb_pipe *p, const void *frame, uint32_t len, uint64_t t_recv_ns,
                     cm_err *err);
/* Zero-copy form: the frame buffer of the next work slot, or NULL when that
 * slot is still busy (then nothing is counted; call dsb_pipe_publish or
 * dsb_pipe_count_drop to account for it).  dsb_pipe_commit publishes it. */
uint8_t *dsb_pipe_next_frame(dsb_pipe *p);
void dsb_pipe_commit(dsb_pipe *p, uint32_t len, uint64_t t_recv_ns);
void dsb_pipe_count_drop(dsb_pipe *p);
uint64_t dsb_pipe_published(const dsb_pipe *p);
uint64_t dsb_pipe_dropped(const dsb_pipe *p);

/* Calls fn(ctx, frame, len) for every ready reply in order (at most max; 0 =
 * all), then returns their slots with one store.  The frame is a complete
 * RESULT frame (MACs swapped from the request), valid only inside fn.
 * Returns the number drained. */
typedef void (*dsb_pipe_reply_fn)(void *ctx, const uint8_t *frame, uint32_t len);
uint32_t dsb_pipe_drain(dsb_pipe *p, dsb_pipe_reply_fn fn, void *ctx, uint32_t max);

/* ---- saturated traffic for tests and `dsb bench pipeline` ------------------ */

/* Request i (0-based attempt) is template i % n_templates with request_id = i
 * and seed = template seed + i.  For the GPU placement a generator warp
 * publishes in batches of up to 32 items and a consumer warp drains the
 * replies (one block launched before the workers, on its own stream); for
 * the host placement one CPU producer and one CPU consumer thread do the
 * same with dsb_pipe_publish / dsb_pipe_drain.  The workers must be running. */
typedef struct {
    const uint8_t *const *frames; /* SOLVE frames (wire.h), each <= 1536 bytes */
    const uint32_t *lens;
    uint32_t n_templates;         /* 1 .. 64 */
    uint32_t requests;            /* attempts */
    int drop_when_full;           /* 1: busy slot -> drop and count; 0: wait */
    uint32_t max_outstanding;     /* published but not consumed; 0 = C */
    /* per-request outputs (caller-allocated, `requests` entries) or NULL */
    uint32_t *latency_ns;         /* publish -> consume; 0 when dropped */
    uint8_t *answers;             /* replies received (saturates at 255) */
    uint8_t *log;                 /* reply frame of request i at log + i * log_stride */
    uint32_t log_stride;          /* bytes kept per reply (multiple of 16, <= 512) */
    /* results */
    uint64_t published, dropped, answered;
    uint64_t stray;               /* replies whose request_id was out of range */
    double seconds;               /* first publish to last consume */
    double producer_cpu_s, consumer_cpu_s; /* host placement: thread CPU time */
} dsb_pipe_traffic;

int dsb_pipe_run_traffic(dsb_pipe *p, dsb_pipe_traffic *t, cm_err *err);

/* Builds a SOLVE frame (header + optional field) into out[0 .. cap); returns
 * its length or 0 when it does not fit. */
uint32_t dsb_pipe_build_solve(uint8_t *out, size_t cap, uint16_t model_id, uint32_t request_id,
                              uint32_t n, uint32_t steps, uint32_t replicas, uint64_t seed,
                              float xi, float dt, const int16_t *h);

#ifdef __cplusplus
}
#endif

#endif
