/* The persistent worker kernel of the dsb pipeline (seed 000, Sec. V; see
 * include/dsb/pipeline.h and ring.h; the GPU generator/consumer block is in
 * gen.cu).
 *
 * The solve itself is dsb_gpu_block_solve from src/dsb/gpu/solver_body.cuh
 * (or dsb_gpu_block_solve_tc from solver_tc.cuh, the tensor-core sums, when
 * the pipeline was created with them), the same force-inlined bodies as the
 * one-request kernels: here each is wrapped once per (format, pairs per
 * thread P, shared-row flag) or (format, tiles per warp) in a __noinline__
 * device function, and the worker dispatches to the wrapper that matches the
 * request it took, so one resident worker serves any mix of formats and
 * sizes.
 *
 * Memory ordering: producers write an item (and its frame) and then its
 * sequence number behind a fence; consumers poll with volatile loads, fence,
 * and read the data with L2-coherent loads (__ldcg), because it was written
 * by another SM or by the CPU.  With host-mapped rings the fences are
 * system-scope. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "dsb/wire.h"
#include "pipe_access.cuh" /* and ring.h */
/* models may be rewritten under the running workers (see solver_body.cuh) */
#define DSB_GPU_MODEL_LOAD(p) __ldcg(p)
#include "solver_tc.cuh"

/* The per-worker area at the top of the block's shared memory (offsets from
 * dsb_smem + area_off; the solver's Eq. (6) region ends below area_off). */
#define AREA_FRAME 0u     /* SOLVE frame copy: header, then the int16 field */
#define AREA_REPLY 1536u  /* dsb_gpu_reply + up to 64 spin words (288 bytes) */
#define AREA_RHDR 1856u   /* RESULT header under construction */
#define AREA_ARGS 1920u   /* dsb_gpu_args of the current request */
#define AREA_STATE 2048u  /* loop state */
#define AREA_END 2304u

typedef struct {
    uint32_t stop, slot, ticket, len;
    uint32_t kind, status, reason, entry; /* entry: model entry of the request */
    uint64_t t_recv, t_claim;
    /* thread 0's loop counters, here rather than in registers: nothing of the
     * loop stays live across the solver call, so the solver gets the whole
     * register budget (NOTES-pipeline.md, 2026-11-30 second version) */
    uint64_t last_poll, served, errors, busy;
    uint32_t consumed_seen, pad;
} pipe_wstate;

/* compile-time checks of the area */
typedef char pipe_area_fits[(AREA_END <= DSB_PIPE_AREA) ? 1 : -1];
typedef char pipe_args_fit[(sizeof(dsb_gpu_args) <= AREA_STATE - AREA_ARGS) ? 1 : -1];
typedef char pipe_state_fits[(sizeof(pipe_wstate) <= AREA_END - AREA_STATE) ? 1 : -1];
typedef char pipe_reply_fits[(sizeof(dsb_gpu_reply) + 4u * (DSB_WIRE_MAX_N / 32u) <=
                              AREA_RHDR - AREA_REPLY) ? 1 : -1];
typedef char pipe_item_size[(sizeof(dsb_pipe_item) == 16u) ? 1 : -1];

/* Data another agent wrote: L2-coherent loads (__ldcg) from GPU rings; from
 * host-mapped rings loads that are never served from a cache (__ldcv). */
static __device__ __forceinline__ uint4 pipe_load16(uint32_t host, const uint4 *p)
{
    return host ? __ldcv(p) : __ldcg(p);
}
/* A model entry or layout the GPU-resident server's receive agent may have
 * rewritten since this SM last read it: L2-coherent 8-byte loads (sizes are
 * multiples of 8, checked below). */
static __device__ __forceinline__ void pipe_load_words(void *dst, const void *src, uint32_t bytes)
{
    unsigned long long *d = (unsigned long long *)dst;
    const unsigned long long *s = (const unsigned long long *)src;
    for (uint32_t i = 0; i < bytes / 8u; i++) d[i] = __ldcg(s + i);
}
typedef char pipe_model_words[(sizeof(dsb_pipe_model_dev) % 8u == 0u) ? 1 : -1];
typedef char pipe_layout_words[(sizeof(dsb_pipe_layout_dev) % 8u == 0u) ? 1 : -1];

static __device__ __forceinline__ void pipe_fence(uint32_t host)
{
    if (host)
        __threadfence_system();
    else
        __threadfence();
}

/* ---- one wrapper per (format, P, row mode) ---------------------------------
 * Row modes of the solver body: 0 rows differ, 1 shared row in shared memory,
 * 2 shared row in registers.  The bit formats never need mode 1 (a shared
 * row, n_p <= 256, always fits the register budget), so they get modes 0 and
 * 2; INT8 gets all three (mode 1 for n_p = 256). */

#define PIPE_WRAP(TAG, FMT, P, SR)                                                        \
    static __device__ __noinline__ void pipe_solve_##TAG##_##P##_##SR(const dsb_gpu_args *a) \
    {                                                                                     \
        dsb_gpu_block_solve(*a, FMT, P, SR, DSB_GPU_VAR_NONE);                            \
    }
#define PIPE_EACH_P(X, TAG, FMT, SR)                                                      \
    X(TAG, FMT, 1, SR) X(TAG, FMT, 2, SR) X(TAG, FMT, 3, SR) X(TAG, FMT, 4, SR)           \
    X(TAG, FMT, 5, SR) X(TAG, FMT, 6, SR) X(TAG, FMT, 7, SR) X(TAG, FMT, 8, SR)           \
    X(TAG, FMT, 9, SR) X(TAG, FMT, 10, SR) X(TAG, FMT, 11, SR) X(TAG, FMT, 12, SR)        \
    X(TAG, FMT, 13, SR) X(TAG, FMT, 14, SR) X(TAG, FMT, 15, SR) X(TAG, FMT, 16, SR)

PIPE_EACH_P(PIPE_WRAP, pm1, DSB_FMT_PM1, 0)
PIPE_EACH_P(PIPE_WRAP, pm1, DSB_FMT_PM1, 2)
PIPE_EACH_P(PIPE_WRAP, ter, DSB_FMT_TERNARY, 0)
PIPE_EACH_P(PIPE_WRAP, ter, DSB_FMT_TERNARY, 2)
PIPE_EACH_P(PIPE_WRAP, i8, DSB_FMT_INT8, 0)
PIPE_EACH_P(PIPE_WRAP, i8, DSB_FMT_INT8, 1)
PIPE_EACH_P(PIPE_WRAP, i8, DSB_FMT_INT8, 2)

/* Tensor-core sums: one wrapper per (format, tiles per warp T).  The body
 * gets the pointer into the shared area, not a copy: with `*a` NVVM passed
 * the struct's fields in ~32 argument registers, held across the whole step
 * loop, and the wrappers' step loops spilled or serialised their loads
 * (NOTES-gpusolver.md, "v5 in the pipeline worker"). */
#define PIPE_WRAP_TC(TAG, FMT, T)                                                         \
    static __device__ __noinline__ void pipe_solve_##TAG##_tc##T(const dsb_gpu_args *a)    \
    {                                                                                     \
        dsb_gpu_block_solve_tc(a, FMT, T);                                                \
    }
#define PIPE_EACH_T(X, TAG, FMT) X(TAG, FMT, 1) X(TAG, FMT, 2) X(TAG, FMT, 3) X(TAG, FMT, 4)
PIPE_EACH_T(PIPE_WRAP_TC, pm1, DSB_FMT_PM1)
PIPE_EACH_T(PIPE_WRAP_TC, ter, DSB_FMT_TERNARY)
PIPE_EACH_T(PIPE_WRAP_TC, i8, DSB_FMT_INT8)

/* kind = ((format - 1) * 16 + (P - 1)) * 4 + row mode; the tensor-core
 * wrappers are row mode 3 with P = T */
#define PIPE_KIND(F, P, SR) ((((F) - 1) * 16 + ((P) - 1)) * 4 + (SR))
#define PIPE_CASE_TC(TAG, F, T)                                                           \
    case PIPE_KIND(F, T, 3): pipe_solve_##TAG##_tc##T(a); return 1;
#define PIPE_CASE(TAG, F, P, SR)                                                          \
    case PIPE_KIND(F, P, SR): pipe_solve_##TAG##_##P##_##SR(a); return 1;

/* Runs the solver of `kind`; 0 when no wrapper exists (never for a kind that
 * dsb_pipe_set_model admitted). */
static __device__ __forceinline__ int pipe_dispatch(uint32_t kind, const dsb_gpu_args *a)
{
    switch (kind) {
        PIPE_EACH_P(PIPE_CASE, pm1, 1, 0)
        PIPE_EACH_P(PIPE_CASE, pm1, 1, 2)
        PIPE_EACH_P(PIPE_CASE, ter, 2, 0)
        PIPE_EACH_P(PIPE_CASE, ter, 2, 2)
        PIPE_EACH_P(PIPE_CASE, i8, 3, 0)
        PIPE_EACH_P(PIPE_CASE, i8, 3, 1)
        PIPE_EACH_P(PIPE_CASE, i8, 3, 2)
        PIPE_EACH_T(PIPE_CASE_TC, pm1, 1)
        PIPE_EACH_T(PIPE_CASE_TC, ter, 2)
        PIPE_EACH_T(PIPE_CASE_TC, i8, 3)
    default: return 0;
    }
}

/* ---- request validation and argument set-up (thread 0) ------------------- */

static __device__ void pipe_validate(const dsb_pipe_dev *d, unsigned char *area, pipe_wstate *st)
{
    const dsb_wire_solve *q = (const dsb_wire_solve *)(area + AREA_FRAME);
    uint32_t status = DSB_ST_OK, reason = DSB_WR_NONE;
    const uint32_t len = st->len;
    dsb_pipe_model_dev m;
    m.max_B = 0;
    if (len < DSB_WIRE_HDR_BYTES || len > DSB_PIPE_FRAME_SLOT) {
        status = DSB_ST_BAD_REQUEST;
        reason = len < DSB_WIRE_HDR_BYTES ? DSB_WR_TRUNCATED : DSB_WR_OVERSIZE;
    } else if (q->type != DSB_MSG_SOLVE) {
        status = DSB_ST_BAD_REQUEST;
        reason = DSB_WR_BAD_TYPE;
    } else if (DSB_WIRE_HDR_BYTES + (uint32_t)q->payload_len != len) {
        status = DSB_ST_BAD_REQUEST;
        reason = DSB_WR_LENGTH_MISMATCH;
    } else if (q->model_id >= DSB_PIPE_MODELS) {
        status = DSB_ST_BAD_REQUEST;
        reason = DSB_WR_BAD_MODEL_ID;
    } else {
        /* the slot's two entries: generation 0 takes the newer valid one */
        dsb_pipe_model_dev e[2];
        pipe_load_words(&e[0], d->models + 2u * q->model_id, sizeof e);
        uint32_t pick = 2u;
        if (q->generation != 0) {
            for (uint32_t k = 0; k < 2u; k++)
                if (e[k].max_B != 0 && e[k].generation == q->generation) pick = k;
        } else if (e[0].max_B != 0 || e[1].max_B != 0) {
            pick = e[1].max_B != 0 && (e[0].max_B == 0 || e[1].generation > e[0].generation);
        }
        if (pick < 2u) {
            m = e[pick];
            st->entry = 2u * q->model_id + pick;
        }
        if (e[0].max_B == 0 && e[1].max_B == 0) {
            status = DSB_ST_UNKNOWN_MODEL;
            reason = DSB_WR_UNKNOWN_MODEL;
        } else if (pick == 2u) {
            status = DSB_ST_WRONG_GENERATION;
            reason = DSB_WR_WRONG_GENERATION;
        } else if (q->n != m.n) {
            status = DSB_ST_WRONG_N;
            reason = DSB_WR_WRONG_N;
        } else if (q->steps == 0) {
            status = DSB_ST_BAD_REQUEST;
            reason = DSB_WR_BAD_K;
        } else if (q->replicas == 0) {
            status = DSB_ST_BAD_REQUEST;
            reason = DSB_WR_BAD_B;
        } else if (q->payload_len != 0 && q->payload_len != 2u * m.n) {
            status = DSB_ST_BAD_REQUEST;
            reason = DSB_WR_BAD_FIELD_LEN;
        } else if (!dsb_wire_finite(q->dt) || !(q->dt > 0.0f)) {
            status = DSB_ST_BAD_REQUEST;
            reason = DSB_WR_BAD_DT;
        } else if (!dsb_wire_finite(q->xi) || q->xi < 0.0f) {
            status = DSB_ST_BAD_REQUEST;
            reason = DSB_WR_BAD_XI;
        } else if (q->steps > d->max_steps || q->replicas > m.max_B) {
            status = DSB_ST_TOO_LARGE;
            reason = DSB_WR_TOO_LARGE;
        }
    }
    if (status == DSB_ST_OK) {
        dsb_pipe_layout_dev L;
        pipe_load_words(&L, d->layouts + (size_t)st->entry * DSB_PIPE_MAX_B + q->replicas - 1u,
                        sizeof L);
        if (L.total == 0u || L.ppt < 1u || L.ppt > DSB_GPU_MAX_PAIRS || L.samerow > 2u ||
            (L.samerow == 1u && m.format != DSB_FMT_INT8)) {
            status = DSB_ST_TOO_LARGE;
            reason = DSB_WR_TOO_LARGE;
        } else {
            dsb_gpu_args *a = (dsb_gpu_args *)(area + AREA_ARGS);
            a->model = m.image;
            a->h = q->payload_len ? (const int16_t *)(area + AREA_FRAME + DSB_WIRE_HDR_BYTES)
                                  : (const int16_t *)0;
            a->n = m.n;
            a->W = m.W;
            a->np = m.np;
            a->B = q->replicas;
            a->K = q->steps;
            DSB_GPU_COPY_OFFSETS(a, &L);
            a->seq = st->ticket;
            a->xi = q->xi != 0.0f ? q->xi : m.xi_default;
            a->dt = q->dt;
            a->seed = q->seed;
            a->energy2 = 0;
            a->spins = 0;
            a->x = 0;
            a->y = 0;
            a->reply = (dsb_gpu_reply *)(area + AREA_REPLY);
            const uint32_t tc = dsb_gpu_tc_pick_of(m.np, q->replicas, (int)d->sums);
            st->kind = tc ? PIPE_KIND(m.format, tc, 3) : PIPE_KIND(m.format, L.ppt, L.samerow);
        }
    }
    st->status = status;
    st->reason = reason;
    /* the RESULT header (everything but the reply-slot dependent parts) */
    dsb_wire_result *o = (dsb_wire_result *)(area + AREA_RHDR);
    uint32_t *ow = (uint32_t *)o;
    for (int i = 0; i < 16; i++) ow[i] = 0u;
    for (int i = 0; i < 6; i++) {
        o->dst[i] = q->src[i];
        o->src[i] = q->dst[i];
    }
    o->ethertype_be = (uint16_t)(((DSB_WIRE_ETHERTYPE & 0xFFu) << 8) | (DSB_WIRE_ETHERTYPE >> 8));
    o->type = DSB_MSG_RESULT;
    o->version = DSB_WIRE_VERSION;
    o->status = (uint16_t)status;
    o->flags = (uint8_t)reason;
    if (len >= DSB_WIRE_HDR_BYTES) {
        o->model_id = q->model_id;
        o->request_id = q->request_id;
        o->n = q->n;
        o->generation = q->generation;
    }
    if (status == DSB_ST_OK) {
        o->generation = m.generation;
        o->format = (uint8_t)m.format;
        o->payload_len = (uint16_t)(4u * m.W);
    }
    o->worker_id = blockIdx.x;
    const uint64_t tq = st->t_claim > st->t_recv ? st->t_claim - st->t_recv : 0u;
    o->t_queue_ns = tq > 0xFFFFFFFFull ? 0xFFFFFFFFu : (uint32_t)tq;
}

/* ---- the worker loop ------------------------------------------------------- */

static __device__ __forceinline__ void pipe_post_stats(const dsb_pipe_dev *d,
                                                       const pipe_wstate *st)
{
    volatile dsb_pipe_wstat *w = d->wstat + blockIdx.x;
    w->served = st->served;
    w->errors = st->errors;
    w->busy_ns = st->busy;
}

/* Thread 0: at most every poll_ns, posts the counters and reads the shutdown
 * flag; 1 when the pipeline is shutting down. */
static __device__ __forceinline__ int pipe_poll_host(const dsb_pipe_dev *d, pipe_wstate *st,
                                                     uint64_t now)
{
    if (now - st->last_poll < d->poll_ns) return 0;
    st->last_poll = now;
    pipe_post_stats(d, st);
    return d->ctrl->shutdown != 0u;
}

/* Takes the next ticket, waits for its item, copies the frame and validates
 * it (whole block).  Returns 1 when the worker must stop. */
static __device__ __forceinline__ int pipe_take(const dsb_pipe_dev *d)
{
    const uint32_t tid = threadIdx.x;
    unsigned char *area = dsb_smem + d->area_off;
    pipe_wstate *st = (pipe_wstate *)(area + AREA_STATE);
    if (tid == 0) {
        const uint32_t t = atomicAdd(&d->tickets[0], 1u);
        const uint32_t slot = t & PIPE_MASK;
        uint32_t stop = 0;
        uint64_t now;
        for (;;) {
            const uint32_t s = pipe_vload32(&d->items[slot].seq);
            now = dsb_gpu_globaltimer();
            if (s == t + 1u) break;
            if (pipe_poll_host(d, st, now)) {
                stop = 1;
                break;
            }
            if (d->host_rings) __nanosleep(256);
        }
        pipe_fence(d->host_rings); /* acquire: the item and frame after the seq */
        st->stop = stop;
        st->ticket = t;
        st->slot = slot;
        st->t_claim = now;
        if (!stop) { /* the whole 16-byte item in one load (one PCIe read for host rings) */
            const uint4 it = pipe_load16(d->host_rings, (const uint4 *)&d->items[slot]);
            st->len = it.y;
            st->t_recv = ((uint64_t)it.w << 32) | it.z;
        }
    }
    __syncthreads();
    if (st->stop) return 1;
    {
        uint32_t len = st->len;
        if (len > DSB_PIPE_FRAME_SLOT) len = DSB_PIPE_FRAME_SLOT;
        const uint4 *src = (const uint4 *)(d->frames + (size_t)st->slot * DSB_PIPE_FRAME_SLOT);
        uint4 *dst = (uint4 *)(area + AREA_FRAME);
        for (uint32_t i = tid; i < (len + 15u) >> 4; i += DSB_GPU_THREADS)
            dst[i] = pipe_load16(d->host_rings, src + i);
    }
    __syncthreads();
    if (tid == 0) pipe_validate(d, area, st);
    __syncthreads();
    return 0;
}

/* Warp 0: reply slot after the solve (Sec. V-C, third rule), RESULT frame,
 * ready word, acknowledgement of the ticket. */
static __device__ __forceinline__ void pipe_reply(const dsb_pipe_dev *d)
{
    const uint32_t lane = threadIdx.x & 31u;
    unsigned char *area = dsb_smem + d->area_off;
    pipe_wstate *st = (pipe_wstate *)(area + AREA_STATE);
    dsb_wire_result *o = (dsb_wire_result *)(area + AREA_RHDR);
    const dsb_gpu_reply *rep = (const dsb_gpu_reply *)(area + AREA_REPLY);
    const uint32_t ok = st->status == DSB_ST_OK;
    uint32_t r = 0, abandon = 0;
    if (lane == 0) {
        if (ok) {
            o->best_replica = rep->best_replica;
            o->energy2 = rep->best_energy2;
            o->t_solve_ns = (uint32_t)(rep->t_end - rep->t_start);
        }
        /* the low 32 bits of the end of the solve (now, for a refused
           request): a GPU-resident transmit agent turns it into the
           transmit wait; host consumers build their own RESULT */
        o->t_tx_ns = ok ? (uint32_t)rep->t_end : (uint32_t)dsb_gpu_globaltimer();
        /* reply slot allocated after the solve (Sec. V-C, third rule) */
        r = atomicAdd(&d->tickets[1], 1u);
        uint32_t seen = st->consumed_seen;
        while (r - seen >= PIPE_C) {
            seen = pipe_vload32(d->consumed);
            if (r - seen < PIPE_C) break;
            if (pipe_poll_host(d, st, dsb_gpu_globaltimer())) {
                abandon = 1;
                break;
            }
            if (d->host_rings) __nanosleep(256);
        }
        st->consumed_seen = seen;
    }
    __syncwarp();
    r = __shfl_sync(0xffffffffu, r, 0);
    abandon = __shfl_sync(0xffffffffu, abandon, 0);
    if (abandon) return;
    const uint32_t words = 16u + (ok ? (uint32_t)o->payload_len / 4u : 0u);
    const uint32_t *hw = (const uint32_t *)o;
    const uint32_t *sw = DSB_GPU_REPLY_SPINS(rep);
    uint32_t *dst = (uint32_t *)(d->replies + (size_t)(r & PIPE_MASK) * DSB_PIPE_REPLY_SLOT);
    for (uint32_t w = lane; w < words; w += 32u) dst[w] = w < 16u ? hw[w] : sw[w - 16u];
    pipe_fence(d->host_rings);
    __syncwarp();
    if (lane == 0) {
        *(volatile unsigned long long *)&d->ready[r & PIPE_MASK] =
            ((unsigned long long)(r + 1u) << 32) | (4u * words);
        /* acknowledge the ticket: the producer may reuse the work slot */
        *(volatile uint32_t *)&d->ack[st->slot] = st->ticket + 1u;
        st->served++;
        if (!ok) st->errors++;
        st->busy += dsb_gpu_globaltimer() - st->t_claim;
    }
}

/* The loop keeps its state in shared memory and recomputes every address from
 * the kernel argument after the solver call: a value held in a register
 * across the call is a register the solver wrapper cannot use (ptxas
 * allocates the wrappers inside the kernel's budget of 128). */
__global__ void __launch_bounds__(DSB_GPU_THREADS, 2) dsb_pipe_worker(const dsb_pipe_dev d)
{
    if (threadIdx.x == 0) {
        pipe_wstate *st = (pipe_wstate *)(dsb_smem + d.area_off + AREA_STATE);
        st->last_poll = dsb_gpu_globaltimer();
        st->served = st->errors = st->busy = 0;
        st->consumed_seen = 0;
    }
    for (;;) {
        if (pipe_take(&d)) break;
        {
            const pipe_wstate *st = (const pipe_wstate *)(dsb_smem + d.area_off + AREA_STATE);
            if (st->status == DSB_ST_OK &&
                !pipe_dispatch(st->kind, (const dsb_gpu_args *)(dsb_smem + d.area_off + AREA_ARGS)) &&
                threadIdx.x == 0) {
                pipe_wstate *sw = (pipe_wstate *)st;
                sw->status = DSB_ST_INTERNAL; /* unreachable: validated above */
                ((dsb_wire_result *)(dsb_smem + d.area_off + AREA_RHDR))->status = DSB_ST_INTERNAL;
                ((dsb_wire_result *)(dsb_smem + d.area_off + AREA_RHDR))->payload_len = 0;
            }
        }
        __syncthreads();
        if (threadIdx.x < 32u) pipe_reply(&d);
    }
    if (threadIdx.x == 0) {
        const pipe_wstate *st = (const pipe_wstate *)(dsb_smem + d.area_off + AREA_STATE);
        pipe_post_stats(&d, st);
        __threadfence_system();
        ((volatile dsb_pipe_wstat *)d.wstat)[blockIdx.x].exited = 1u;
        __threadfence_system();
    }
}

/* ---- host-side launch helpers (C linkage) --------------------------------- */

extern "C" int dsb_pipe_k_prepare(uint32_t smem_bytes)
{
    return (int)cudaFuncSetAttribute(dsb_pipe_worker, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     (int)smem_bytes);
}

extern "C" int dsb_pipe_k_occupancy(uint32_t smem_bytes, int *blocks_per_sm)
{
    return (int)cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, dsb_pipe_worker,
                                                              (int)DSB_GPU_THREADS, smem_bytes);
}

extern "C" int dsb_pipe_k_regs(int *regs, int *local_bytes)
{
    cudaFuncAttributes fa;
    cudaError_t e = cudaFuncGetAttributes(&fa, dsb_pipe_worker);
    if (e != cudaSuccess) return (int)e;
    *regs = fa.numRegs;
    *local_bytes = (int)fa.localSizeBytes;
    return 0;
}

extern "C" int dsb_pipe_k_launch_workers(const dsb_pipe_dev *d, uint32_t blocks, void *stream)
{
    dsb_pipe_worker<<<blocks, DSB_GPU_THREADS, d->smem_bytes, (cudaStream_t)stream>>>(*d);
    return (int)cudaGetLastError();
}
