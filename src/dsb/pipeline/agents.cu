/* The GPU-resident server's agents (seed 000, Sec. V-C; include/dsb/resident.h,
 * docs/nic.md): one kernel of two blocks launched beside the persistent
 * workers of worker.cu.
 *   block 0  warp 0 is the receive agent; warps 1..7 wait at the block
 *            barrier and join only to validate a completed model image;
 *   block 1  warp 0 is the transmit agent.
 *
 * Memory ordering follows worker.cu: the NIC (stand-in: a host thread) writes a
 * frame, then its ready word; the receive warp polls ready words with volatile
 * loads, fences, and reads the frames with loads that bypass the caches
 * (__ldcv: host-mapped memory).  Work items and frames go to GPU memory with
 * __stcg, one fence per burst, then the sequence numbers; replies the
 * receive warp writes itself are published like the workers' (fence, then the
 * ready word).  The transmit warp writes frames and descriptors into the
 * host-mapped send queue, fences at system scope, then rings the doorbell. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "common/ptx.cuh"
#include "dsb/wire.h"
#include "pipe_access.cuh" /* PIPE_C, PIPE_MASK, the volatile loads */
#include "resident_dev.h"

#define RX_MASK (DSB_NIC_RX_SLOTS - 1u)
#define TX_MASK (DSB_NIC_TX_SLOTS - 1u)
#define FULL 0xffffffffu
#define RX_COUNTERS (DSB_RES_COUNT + DSB_WR_COUNT)

static __device__ __forceinline__ uint64_t res_now(void) { return ptx_globaltimer(); }

/* A model-store buffer the workers never wrote: ordinary stores, made visible
 * by the fence before the generation is published. */
static __device__ __forceinline__ dsb_pipe_model_dev *res_entry(const dsb_res_dev &d, uint32_t e)
{
    return d.models + e;
}

/* ---- counters: shared memory, copied to host-mapped memory now and then -- */

static __device__ __forceinline__ void res_flush(unsigned long long *sh, uint64_t *host,
                                                 uint32_t count, uint32_t lane)
{
    for (uint32_t i = lane; i < count; i += 32u) ((volatile uint64_t *)host)[i] = sh[i];
    __threadfence_system();
}

/* A frame refused for `why`: counted as bad, by reason, and under `kind` (the
 * SOLVE_REJECTED or LOAD_REJECTED counter; 0 = the caller counts the rest). */
static __device__ __forceinline__ void res_count_bad(unsigned long long *cnt, dsb_wire_reason why,
                                                     uint32_t kind)
{
    cnt[DSB_RES_BAD_FRAMES]++;
    cnt[DSB_RES_COUNT + why]++;
    if (kind) cnt[kind]++;
}

/* ---- model validation (whole block 0): the rules of dsb_model_from_packed -- */

static __device__ int res_coupling(const unsigned char *img, uint32_t fmt, uint32_t n, uint32_t W,
                                   uint32_t i, uint32_t j)
{
    if (fmt == DSB_FMT_INT8) return (int)(signed char)__ldcg(img + (size_t)i * 32u * W + j);
    const uint32_t *p = (const uint32_t *)img;
    const uint32_t bit = (__ldcg(p + (size_t)i * W + j / 32u) >> (j % 32u)) & 1u;
    if (fmt == DSB_FMT_PM1) return i == j ? 0 : (bit ? 1 : -1);
    const uint32_t mbit = (__ldcg(p + (size_t)(n + i) * W + j / 32u) >> (j % 32u)) & 1u;
    return (int)bit - (int)mbit;
}

/* Returns nonzero (in every thread) when the image breaks an invariant. */
static __device__ uint32_t res_validate(const unsigned char *img, uint32_t fmt, uint32_t n,
                                        volatile uint32_t *bad_sh)
{
    const uint32_t W = (n + 31u) / 32u, tid = threadIdx.x;
    if (tid == 0) *bad_sh = 0;
    __syncthreads();
    uint32_t bad = 0;
    for (uint32_t i = tid; i < n && !bad; i += blockDim.x) {
        if (fmt == DSB_FMT_INT8) {
            for (uint32_t j = n; j < 32u * W; j++)
                if (__ldcg(img + (size_t)i * 32u * W + j)) bad = 1;
        } else {
            for (uint32_t plane = 0; plane < (fmt == DSB_FMT_TERNARY ? 2u : 1u); plane++) {
                const uint32_t *r = (const uint32_t *)img + (size_t)(plane * n + i) * W;
                if ((__ldcg(r + i / 32u) >> (i % 32u)) & 1u) bad = 1;
                if ((n % 32u) && (__ldcg(r + W - 1u) >> (n % 32u))) bad = 1;
            }
        }
        int32_t np = 0, nm = 0;
        for (uint32_t j = 0; j < n && !bad; j++) {
            const int v = res_coupling(img, fmt, n, W, i, j);
            if (fmt == DSB_FMT_TERNARY) {
                const uint32_t *p = (const uint32_t *)img;
                if ((__ldcg(p + (size_t)i * W + j / 32u) & __ldcg(p + (size_t)(n + i) * W + j / 32u)) >>
                        (j % 32u) & 1u)
                    bad = 1;
            }
            if (v != res_coupling(img, fmt, n, W, j, i)) bad = 1;
            if (v == -128 || (fmt == DSB_FMT_INT8 && i == j && v != 0)) bad = 1;
            np += v == 1;
            nm += v == -1;
        }
        if (!bad && fmt == DSB_FMT_TERNARY &&
            (int32_t)__ldcg((const uint32_t *)img + 2u * (size_t)n * W + i) != np - nm)
            bad = 1;
    }
    if (bad) *bad_sh = 1;
    __syncthreads();
    return *bad_sh;
}

/* ---- the receive agent ----------------------------------------------------- */

enum { JOB_NONE = 0, JOB_VALIDATE = 1, JOB_EXIT = 2 };

/* What the warp still has to do for a LOAD fragment once lane 0 decided. */
enum {
    LOAD_NOTHING = 0,
    LOAD_NEW_GENERATION = 2, /* find the slot's free buffer, then store */
    LOAD_STORE = 3,          /* conflict / duplicate checks, then copy the payload */
    LOAD_COMPLETE = 4,       /* the last fragment arrived: validate, lay out, publish */
    LOAD_REACK = 5           /* fragment of the current generation: compare its bytes */
};

typedef struct {
    uint32_t op, fmt, n, bad;
    const unsigned char *img;
} res_job;

/* Replies the receive warp writes itself (errors, LOAD_ACK): one 64-byte
 * frame into the next reply slot; 0 when shutdown came first. */
static __device__ int res_reply(const dsb_res_dev &d, const unsigned char *frame64, uint32_t lane,
                                uint32_t *consumed_seen)
{
    uint32_t r = 0, ok = 1;
    if (lane == 0) {
        r = atomicAdd(&d.pipe.tickets[1], 1u);
        uint64_t t0 = res_now();
        while (r - *consumed_seen >= PIPE_C) {
            *consumed_seen = pipe_vload32(d.pipe.consumed);
            if (r - *consumed_seen < PIPE_C) break;
            if (res_now() - t0 > d.pipe.poll_ns) {
                t0 = res_now();
                if (d.pipe.ctrl->shutdown) {
                    ok = 0;
                    break;
                }
            }
        }
    }
    r = __shfl_sync(FULL, r, 0);
    ok = __shfl_sync(FULL, ok, 0);
    if (!ok) return 0;
    uint4 *dst = (uint4 *)(d.pipe.replies + (size_t)(r & PIPE_MASK) * DSB_PIPE_REPLY_SLOT);
    if (lane < 4u) __stcg(dst + lane, ((const uint4 *)frame64)[lane]);
    __threadfence();
    __syncwarp();
    if (lane == 0)
        *(volatile unsigned long long *)&d.pipe.ready[r & PIPE_MASK] =
            ((unsigned long long)(r + 1u) << 32) | DSB_WIRE_HDR_BYTES;
    return 1;
}

/* Items of the work ring assigned and not yet acknowledged before `upto`? */
static __device__ int res_items_done(const dsb_res_dev &d, uint32_t upto, uint32_t lane)
{
    /* an item older than upto - C had its slot reused, hence was acknowledged */
    uint32_t busy = 0;
    for (uint32_t k = lane; k < PIPE_C; k += 32u) {
        const uint32_t s = upto - PIPE_C + k; /* ticket s, acknowledged when ack >= s + 1 */
        if (s >= upto) continue;              /* wrapped below zero: never assigned */
        const uint32_t a = pipe_vload32(&d.pipe.ack[s & PIPE_MASK]);
        if ((int32_t)(a - (s + 1u)) < 0) busy = 1;
    }
    return !__any_sync(FULL, busy);
}

__device__ static void res_receive(const dsb_res_dev &d, unsigned char *stage_base, unsigned char *out64,
                                   unsigned long long *cnt, volatile res_job *job)
{
    const uint32_t lane = threadIdx.x & 31u;
    dsb_nic_queues *nic = d.nic;
    uint32_t rx = 0, pub = 0, consumed_seen = 0;
    uint64_t last_poll = res_now();
    for (;;) {
        const unsigned long long w = nic->rx_ready[(rx + lane) & RX_MASK];
        const uint32_t bal = __ballot_sync(FULL, (uint32_t)(w >> 32) == rx + lane + 1u);
        const uint32_t k = pipe_first_clear(bal);
        if (k == 0) {
            const uint64_t now = res_now();
            if (now - last_poll >= d.pipe.poll_ns) {
                last_poll = now;
                __syncwarp();
                res_flush(cnt, (uint64_t *)&d.counts[0], RX_COUNTERS, lane);
                if (d.pipe.ctrl->shutdown) break;
            }
            continue;
        }
        __threadfence_system(); /* acquire: the frames after their ready words */
        const uint64_t t_rx = res_now();
        const uint32_t batch0 = pub;
        /* frame lengths (lane j holds frame j's ready word) and their 16-byte
           chunk offsets: an exclusive prefix sum over the burst */
        uint32_t my_len = lane < k ? (uint32_t)w & ~DSB_NIC_RX_TRUNCATED : 0u;
        if (my_len > DSB_NIC_RX_FRAME) my_len = DSB_NIC_RX_FRAME;
        const uint32_t my_nch = (my_len + 15u) >> 4;
        uint32_t incl = my_nch;
#pragma unroll
        for (uint32_t o = 1; o < 32u; o <<= 1) {
            const uint32_t t = __shfl_up_sync(FULL, incl, o);
            if (lane >= o) incl += t;
        }
        const uint32_t pre = incl - my_nch;
        uint32_t g_end = 0, g_base = 0; /* frames [.., g_end) are staged from chunk g_base */
        for (uint32_t i = 0; i < k; i++) {
            if (i == g_end) {
                /* stage the next group of frames (as many whole frames as fit
                   2 KiB) with one round of loads: one PCIe round trip for the
                   group instead of one per frame */
                g_base = __shfl_sync(FULL, pre, i);
                const uint32_t fits =
                    __ballot_sync(FULL, lane >= i && lane < k && incl - g_base <= 128u) | (1u << i);
                g_end = i + (uint32_t)__popc(fits >> i);
                const uint32_t tot = __shfl_sync(FULL, incl, g_end - 1u) - g_base;
                uint4 v[4];
                uint32_t fj[4], cj[4];
#pragma unroll
                for (uint32_t u = 0; u < 4u; u++) fj[u] = cj[u] = 0;
                for (uint32_t j = i; j < g_end; j++) { /* which frame holds each chunk */
                    const uint32_t pj = __shfl_sync(FULL, pre, j) - g_base;
#pragma unroll
                    for (uint32_t u = 0; u < 4u; u++)
                        if (lane + 32u * u >= pj) {
                            fj[u] = j;
                            cj[u] = lane + 32u * u - pj;
                        }
                }
#pragma unroll
                for (uint32_t u = 0; u < 4u; u++)
                    if (lane + 32u * u < tot)
                        v[u] = __ldcv((const uint4 *)nic->rx_frames[(rx + fj[u]) & RX_MASK] + cj[u]);
#pragma unroll
                for (uint32_t u = 0; u < 4u; u++)
                    if (lane + 32u * u < tot) ((uint4 *)stage_base)[lane + 32u * u] = v[u];
                __syncwarp();
            }
            const uint32_t len = __shfl_sync(FULL, my_len, i);
            const uint32_t trunc = (uint32_t)__shfl_sync(FULL, w, i) & DSB_NIC_RX_TRUNCATED;
            unsigned char *stage = stage_base + 16u * (__shfl_sync(FULL, pre, i) - g_base);

            /* h_i = -32768 anywhere in a SOLVE field: the decoder's last check,
               done here by the whole warp (one 32-bit word per lane and step) */
            uint32_t field_bad = 0;
            for (uint32_t wd = lane; DSB_WIRE_HDR_BYTES + 4u * wd + 2u <= len; wd += 32u) {
                const uint32_t v = ((const uint32_t *)(stage + DSB_WIRE_HDR_BYTES))[wd];
                const int two = DSB_WIRE_HDR_BYTES + 4u * wd + 4u <= len;
                field_bad |= (v & 0xFFFFu) == 0x8000u || (two && (v >> 16) == 0x8000u);
            }
            field_bad = __any_sync(FULL, field_bad);
            /* decide (lane 0), then act (the warp) */
            __shared__ uint32_t act, act_slot, act_len, act_off, act_reply, act_done;
            if (lane == 0) {
                act = 0; /* 0 nothing, 1 copy SOLVE, 2 copy LOAD payload */
                act_reply = 0;
                act_done = LOAD_NOTHING;
                cnt[DSB_RES_RX_FRAMES]++;
                cnt[DSB_RES_RX_BYTES] += len;
                dsb_wire_msg m;
                dsb_wire_reason why =
                    trunc ? DSB_WR_OVERSIZE : dsb_wire_decode_ex(stage, len, 1, 1, &m);
                if (why == DSB_WR_NONE && m.u.hdr.type == DSB_MSG_SOLVE && field_bad)
                    why = DSB_WR_BAD_FIELD_VALUE;
                const dsb_wire_hdr *h = (const dsb_wire_hdr *)stage;
                if (why != DSB_WR_NONE) {
                    res_count_bad(cnt, why, 0);
                    if (!dsb_wire_reason_answerable(why)) {
                        cnt[DSB_RES_UNANSWERED]++;
                    } else if (h->type == DSB_MSG_SOLVE) {
                        cnt[DSB_RES_SOLVE_RX]++;
                        cnt[DSB_RES_SOLVE_REJECTED]++;
                        dsb_wire_build_result(out64, 64, h, (uint16_t)dsb_wire_reason_status(why),
                                              (uint8_t)why, 0, 0, 0, 0, 0, 0,
                                              (uint32_t)res_now(), 0);
                        act_reply = 1;
                    } else {
                        cnt[DSB_RES_LOAD_REJECTED]++;
                        dsb_wire_build_load_ack(out64, 64, h, (uint16_t)dsb_wire_reason_status(why),
                                                (uint8_t)why, h->generation, 0, 0);
                        act_reply = 1;
                    }
                } else if (h->type == DSB_MSG_SOLVE) {
                    const dsb_wire_solve *q = &m.u.solve;
                    dsb_res_slot *sl = d.slots + q->model_id;
                    cnt[DSB_RES_SOLVE_RX]++;
                    if (!sl->cur_gen)
                        why = sl->pend_gen ? DSB_WR_MODEL_INCOMPLETE : DSB_WR_UNKNOWN_MODEL;
                    else if (q->generation != 0 && q->generation != sl->cur_gen)
                        why = DSB_WR_WRONG_GENERATION;
                    else if (q->n != sl->cur_n)
                        why = DSB_WR_WRONG_N;
                    else if (q->steps > d.pipe.max_steps || q->replicas > sl->cur_max_B)
                        why = DSB_WR_TOO_LARGE;
                    if (why != DSB_WR_NONE) {
                        res_count_bad(cnt, why, DSB_RES_SOLVE_REJECTED);
                        dsb_wire_build_result(out64, 64, h, (uint16_t)dsb_wire_reason_status(why),
                                              (uint8_t)why, sl->cur_gen, 0, 0, 0, 0, 0,
                                              (uint32_t)res_now(), 0);
                        act_reply = 1;
                    } else {
                        const uint32_t slot = pub & PIPE_MASK;
                        if (!pipe_slot_free(d.pipe.ack, pub)) {
                            cnt[DSB_RES_OVERLOADED]++;
                            dsb_wire_build_result(out64, 64, h, DSB_ST_OVERLOADED, 0, sl->cur_gen,
                                                  0, 0, 0, 0, 0, (uint32_t)res_now(), 0);
                            act_reply = 1;
                        } else {
                            /* the request keeps the generation it was admitted with */
                            ((dsb_wire_hdr *)stage)->generation = sl->cur_gen;
                            dsb_pipe_item *it = d.pipe.items + slot;
                            __stcg(&it->len, len);
                            __stcg((unsigned long long *)&it->t_recv, (unsigned long long)t_rx);
                            act = 1;
                            act_slot = slot;
                            act_len = len;
                            pub++;
                            cnt[DSB_RES_SOLVE_QUEUED]++;
                        }
                    }
                } else { /* LOAD: the rules of dsb_store_load */
                    const dsb_wire_load *l = &m.u.load;
                    dsb_res_slot *sl = d.slots + l->model_id;
                    if (sl->cur_gen && l->generation == sl->cur_gen) {
                        act_done = LOAD_REACK;
                    } else if (l->generation < sl->cur_gen ||
                               (sl->pend_gen && l->generation < sl->pend_gen)) {
                        why = DSB_WR_STALE_GENERATION;
                    } else if (l->generation != sl->pend_gen) { /* newer: abandon the old one */
                        act_done = LOAD_NEW_GENERATION;
                        act_slot = sl->cur_gen ? 1u - sl->cur_entry : 0u; /* the free buffer */
                    } else {
                        act_done = LOAD_STORE;
                    }
                    if (why != DSB_WR_NONE) {
                        res_count_bad(cnt, why, DSB_RES_LOAD_REJECTED);
                        dsb_wire_build_load_ack(out64, 64, h, (uint16_t)dsb_wire_reason_status(why),
                                                (uint8_t)why, l->generation, sl->pend_received,
                                                sl->cur_gen);
                        act_reply = 1;
                    }
                }
            }
            __syncwarp();
            if (act_done == LOAD_NEW_GENERATION) {
                const dsb_wire_load *l = (const dsb_wire_load *)stage;
                dsb_res_slot *sl = d.slots + l->model_id;
                const uint32_t e = act_slot;
                const int free_ = !sl->cur_gen || res_items_done(d, sl->flip_pub, lane);
                if (lane == 0) {
                    if (!free_) {
                        cnt[DSB_RES_LOAD_DEFERRED]++; /* dropped; the client retransmits */
                        act_done = LOAD_NOTHING;
                    } else {
                        dsb_pipe_model_dev *md = res_entry(d, 2u * l->model_id + e);
                        md->max_B = 0; /* invalid while being rewritten */
                        __threadfence();
                        sl->pend_gen = l->generation;
                        sl->pend_entry = e;
                        sl->pend_n = l->n;
                        sl->pend_format = l->format;
                        sl->pend_total = l->total_bytes;
                        sl->pend_count = l->frag_count;
                        sl->pend_received = 0;
                        sl->pend_xi = l->xi_default;
                        for (uint32_t b = 0; b < DSB_RES_BITMAP_WORDS; b++) sl->bitmap[b] = 0;
                        act_done = LOAD_STORE;
                    }
                }
                __syncwarp();
            }
            if (act_done == LOAD_REACK) {
                const dsb_wire_load *l = (const dsb_wire_load *)stage;
                dsb_res_slot *sl = d.slots + l->model_id;
                const uint32_t e = 2u * l->model_id + sl->cur_entry;
                const unsigned char *img = d.images + (size_t)e * DSB_RES_IMAGE_BYTES + l->offset;
                uint32_t diff = l->n != sl->cur_n || l->format != d.models[e].format;
                for (uint32_t b = lane; b < l->payload_len && !diff; b += 32u)
                    diff = __ldcg(img + b) != stage[DSB_WIRE_HDR_BYTES + b];
                diff = __any_sync(FULL, diff);
                if (lane == 0) {
                    /* a generation is immutable: other bytes under its number are refused */
                    const dsb_wire_reason why = diff ? DSB_WR_LOAD_CONFLICT : DSB_WR_NONE;
                    if (diff) {
                        res_count_bad(cnt, why, DSB_RES_LOAD_REJECTED);
                    } else {
                        cnt[DSB_RES_LOAD_FRAGS]++;
                        cnt[DSB_RES_LOAD_REACKS]++;
                    }
                    dsb_wire_build_load_ack(out64, 64, (const dsb_wire_hdr *)stage,
                                            (uint16_t)dsb_wire_reason_status(why), (uint8_t)why,
                                            l->generation, diff ? 0u : (uint32_t)l->frag_count,
                                            sl->cur_gen);
                    act_reply = 1;
                    act_done = LOAD_NOTHING;
                }
                __syncwarp();
            }
            if (act_done == LOAD_STORE && lane == 0) {
                const dsb_wire_load *l = (const dsb_wire_load *)stage;
                dsb_res_slot *sl = d.slots + l->model_id;
                dsb_wire_reason why = DSB_WR_NONE;
                act_done = LOAD_NOTHING;
                if (l->n != sl->pend_n || l->format != sl->pend_format ||
                    l->total_bytes != sl->pend_total || l->frag_count != sl->pend_count ||
                    __float_as_uint(l->xi_default) != __float_as_uint(sl->pend_xi)) {
                    why = DSB_WR_LOAD_CONFLICT;
                } else {
                    cnt[DSB_RES_LOAD_FRAGS]++;
                    const uint32_t idx = l->frag_index, bit = 1u << (idx % 32u);
                    if (sl->bitmap[idx / 32u] & bit) {
                        cnt[DSB_RES_LOAD_DUPLICATES]++;
                    } else {
                        sl->bitmap[idx / 32u] |= bit;
                        sl->pend_received++;
                        act = 2;
                        act_off = (2u * l->model_id + sl->pend_entry) * DSB_RES_IMAGE_BYTES +
                                  l->offset;
                        act_len = l->payload_len;
                        if (sl->pend_received == sl->pend_count) act_done = LOAD_COMPLETE;
                    }
                }
                if (why != DSB_WR_NONE) {
                    res_count_bad(cnt, why, DSB_RES_LOAD_REJECTED);
                    dsb_wire_build_load_ack(out64, 64, (const dsb_wire_hdr *)stage,
                                            (uint16_t)dsb_wire_reason_status(why), (uint8_t)why,
                                            l->generation, sl->pend_received, sl->cur_gen);
                    act_reply = 1;
                }
            }
            __syncwarp();
            if (act == 1) { /* SOLVE frame into its work slot */
                uint4 *dst = (uint4 *)(d.pipe.frames + (size_t)act_slot * DSB_PIPE_FRAME_SLOT);
                for (uint32_t c = lane; c < (act_len + 15u) >> 4; c += 32u)
                    __stcg(dst + c, ((const uint4 *)stage)[c]);
            } else if (act == 2) { /* LOAD payload into the image being assembled */
                unsigned char *dst = d.images + act_off;
                const unsigned char *src = stage + DSB_WIRE_HDR_BYTES;
                const uint32_t full = act_len >> 4;
                for (uint32_t c = lane; c < full; c += 32u)
                    __stcg((uint4 *)dst + c, ((const uint4 *)src)[c]);
                for (uint32_t b = 16u * full + lane; b < act_len; b += 32u) dst[b] = src[b];
            }
            __syncwarp();
            if (act_done == LOAD_COMPLETE) {
                const dsb_wire_load *l = (const dsb_wire_load *)stage;
                dsb_res_slot *sl = d.slots + l->model_id;
                const uint32_t e = 2u * l->model_id + sl->pend_entry;
                __threadfence();
                if (lane == 0) {
                    job->op = JOB_VALIDATE;
                    job->fmt = sl->pend_format;
                    job->n = sl->pend_n;
                    job->img = d.images + (size_t)e * DSB_RES_IMAGE_BYTES;
                }
                __syncthreads(); /* the helper warps join */
                const uint32_t bad = res_validate(job->img, job->fmt, job->n, &job->bad);
                __syncthreads();
                if (lane == 0) {
                    const uint32_t gen = sl->pend_gen;
                    sl->pend_gen = 0;
                    uint32_t maxB = 0;
                    if (!bad)
                        maxB = dsb_pipe_layout_row((dsb_format)sl->pend_format, sl->pend_n,
                                                   d.pipe.area_off,
                                                   d.layouts + (size_t)e * DSB_PIPE_MAX_B);
                    if (bad || maxB == 0) {
                        const dsb_wire_reason why = bad ? DSB_WR_BAD_MODEL_IMAGE : DSB_WR_TOO_LARGE;
                        res_count_bad(cnt, why, DSB_RES_LOAD_REJECTED);
                        dsb_wire_build_load_ack(out64, 64, (const dsb_wire_hdr *)stage,
                                                (uint16_t)dsb_wire_reason_status(why), (uint8_t)why,
                                                gen, sl->pend_received, sl->cur_gen);
                    } else {
                        dsb_pipe_model_dev *md = res_entry(d, e);
                        md->image = job->img;
                        md->format = sl->pend_format;
                        md->n = sl->pend_n;
                        md->W = (sl->pend_n + 31u) / 32u;
                        md->np = 32u * md->W;
                        md->xi_default = sl->pend_xi;
                        md->generation = gen;
                        __threadfence();
                        md->max_B = maxB;
                        __threadfence();
                        /* requests assigned so far (this burst's included) used
                           the old generation: its entry is free once they are
                           all acknowledged */
                        sl->flip_pub = pub;
                        sl->cur_gen = gen;
                        sl->cur_entry = sl->pend_entry;
                        sl->cur_n = sl->pend_n;
                        sl->cur_max_B = maxB;
                        cnt[DSB_RES_LOAD_COMPLETED]++;
                        dsb_wire_build_load_ack(out64, 64, (const dsb_wire_hdr *)stage, DSB_ST_OK,
                                                0, gen, sl->pend_received, gen);
                    }
                    act_reply = 1;
                }
                __syncwarp();
            }
            pub = __shfl_sync(FULL, pub, 0); /* lane 0 assigned the work slot */
            if (act_reply && !res_reply(d, out64, lane, &consumed_seen)) break;
            __syncwarp();
        }
        /* publish the burst's work items behind one fence */
        const uint32_t nb = pub - batch0;
        if (nb) {
            __threadfence();
            if (lane < nb)
                *(volatile uint32_t *)&d.pipe.items[(batch0 + lane) & PIPE_MASK].seq =
                    batch0 + lane + 1u;
        }
        __syncwarp();
        if (lane == 0) {
            nic->rx_consumer = rx + k;
            *d.published = pub;
        }
        rx += k;
    }
    __syncwarp();
    res_flush(cnt, (uint64_t *)&d.counts[0], RX_COUNTERS, lane);
}

/* ---- the transmit agent ---------------------------------------------------- */

__device__ static void res_transmit(const dsb_res_dev &d, unsigned long long *cnt)
{
    const uint32_t lane = threadIdx.x & 31u;
    dsb_nic_queues *nic = d.nic;
    uint32_t cons = 0, txp = 0;
    const uint32_t batch = d.tx_batch < 1u ? 1u : d.tx_batch > 32u ? 32u : d.tx_batch;
    uint64_t last_poll = res_now();
    uint32_t stop = 0;
    while (!stop) {
        const unsigned long long w = pipe_vload64(&d.pipe.ready[(cons + lane) & PIPE_MASK]);
        const uint32_t bal = __ballot_sync(FULL, (uint32_t)(w >> 32) == cons + lane + 1u);
        uint32_t k = pipe_first_clear(bal);
        if (k > batch) k = batch;
        if (k == 0) {
            const uint64_t now = res_now();
            if (now - last_poll >= d.pipe.poll_ns) {
                last_poll = now;
                res_flush(cnt, (uint64_t *)&d.counts[1], RX_COUNTERS + DSB_ST_COUNT, lane);
                if (d.pipe.ctrl->shutdown) break;
            }
            continue;
        }
        __threadfence(); /* acquire: the replies after their ready words */
        const uint32_t now32 = (uint32_t)res_now();
        if (lane < k) {
            const uint32_t r = cons + lane, len = (uint32_t)w;
            const uint4 *src = (const uint4 *)(d.pipe.replies + (size_t)(r & PIPE_MASK) * DSB_PIPE_REPLY_SLOT);
            const uint32_t slot = (txp + lane) & TX_MASK;
            uint4 *dst = (uint4 *)nic->tx_frames[slot];
            uint32_t type = 0, status = 0;
            for (uint32_t c = 0; c < (len + 15u) >> 4; c++) {
                uint4 v = __ldcg(src + c);
                if (c == 0) type = v.w >> 16 & 0xFFu;       /* byte 14 */
                if (c == 1) status = v.x & 0xFFFFu;         /* bytes 16..17 */
                if (c == 3 && type == DSB_MSG_RESULT)       /* t_tx_ns, bytes 60..63: the stamp */
                    v.w = now32 - v.w;                      /* becomes the transmit wait */
                dst[c] = v;
            }
            dsb_nic_desc *de = &nic->tx_desc[slot];
            de->slot = slot;
            de->len = len;
            atomicAdd(&cnt[RX_COUNTERS + (status < DSB_ST_COUNT ? status : DSB_ST_INTERNAL)], 1ull);
            if (type == DSB_MSG_RESULT && status == DSB_ST_OK) atomicAdd(&cnt[DSB_RES_SOLVE_OK], 1ull);
            if (type == DSB_MSG_RESULT && status == DSB_ST_INTERNAL)
                atomicAdd(&cnt[DSB_RES_SOLVE_FAILED], 1ull);
        }
        __threadfence_system(); /* frames and descriptors before the doorbell */
        __syncwarp();
        txp += k;
        if (lane == 0) {
            cnt[DSB_RES_TX_DESCRIPTORS] += k;
            cnt[DSB_RES_TX_DOORBELLS]++;
            nic->tx_doorbell = txp;
            /* one completion for the batch */
            uint64_t t0 = res_now();
            while ((int32_t)(nic->tx_completion - txp) < 0) {
                if (res_now() - t0 > d.pipe.poll_ns) {
                    t0 = res_now();
                    if (d.pipe.ctrl->shutdown) {
                        stop = 1;
                        break;
                    }
                }
            }
            cons += k;
            *(volatile uint32_t *)d.pipe.consumed = cons; /* the reply slots are free */
        }
        cons = __shfl_sync(FULL, cons, 0);
        stop = __shfl_sync(FULL, stop, 0);
    }
    __syncwarp();
    res_flush(cnt, (uint64_t *)&d.counts[1], RX_COUNTERS + DSB_ST_COUNT, lane);
}

/* ---- the kernel -------------------------------------------------------------- */

/* 256 threads at <= 128 registers: each block fits the resident slot of one
 * worker (reserve 2), wherever the scheduler puts it */
__global__ void __launch_bounds__(256, 2) dsb_res_agents(const dsb_res_dev d)
{
    __shared__ __align__(16) unsigned char stage[DSB_NIC_RX_FRAME];
    __shared__ __align__(16) unsigned char out64[64];
    __shared__ unsigned long long cnt[RX_COUNTERS + DSB_ST_COUNT];
    __shared__ res_job job;
    const uint32_t tid = threadIdx.x;
    for (uint32_t i = tid; i < RX_COUNTERS + DSB_ST_COUNT; i += blockDim.x) cnt[i] = 0;
    if (tid == 0) job.op = JOB_NONE;
    __syncthreads();
    if (blockIdx.x == 1) {
        if (tid < 32u) res_transmit(d, cnt);
        return;
    }
    if (tid < 32u) {
        res_receive(d, stage, out64, cnt, &job);
        if (tid == 0) job.op = JOB_EXIT;
        __syncthreads(); /* releases the helpers */
        return;
    }
    /* helper warps: wait at the barrier until the receive warp needs them */
    for (;;) {
        __syncthreads();
        if (job.op == JOB_EXIT) break;
        res_validate(job.img, job.fmt, job.n, (volatile uint32_t *)&job.bad);
        __syncthreads();
    }
}

extern "C" int dsb_res_k_prepare(void)
{
    /* loads the module now: a lazy load beside running persistent workers
       would wait for an idle device forever */
    cudaFuncAttributes a;
    return (int)cudaFuncGetAttributes(&a, dsb_res_agents);
}

extern "C" int dsb_res_k_launch_agents(const dsb_res_dev *d, void *stream)
{
    dsb_res_agents<<<2, 256, 0, (cudaStream_t)stream>>>(*d);
    return (int)cudaGetLastError();
}
