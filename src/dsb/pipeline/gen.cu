/* The GPU placement's generator/consumer block of the dsb pipeline (seed 000,
 * Sec. V; Table IV): warp 0 publishes request frames, made from templates,
 * into the work ring; warp 1 drains the reply ring in order.  One block,
 * launched after the workers (pipeline.c); the ring rules are those of
 * worker.cu and ring.h.
 *
 * Publication in batches (issue #4: "publish in batches, not one lane per
 * item"): one ballot over the ack words of up to 32 slots, the frames copied
 * with GEN_BATCH items' loads in flight before their stores, and the 32
 * sequence numbers published behind one fence.  (Copied item after item, each
 * frame cost one load round trip, and the block stopped at ~2 Mreq/s.) */
#include <cuda_runtime.h>
#include <stdint.h>

#include "common/ptx.cuh"
#include "pipe_access.cuh"

#define GEN_BATCH 16u /* frames whose loads are in flight together: 4 registers each */

/* Copies the frames of requests i .. i+k-1 (k <= 32; template req mod n_templates,
 * the request id and the seed patched per request) into work-ring slots s .. s+k-1:
 * lane j finds request i + j's template and length, the warp then copies GEN_BATCH frames
 * a pass, 32 of each frame's 16-byte chunks (one per lane), all loads before the first
 * store; a frame of up to 1536 bytes takes up to 3 passes.  Returns the length of
 * request i + lane's frame (0 for lanes >= k). */
static __device__ __forceinline__ uint32_t gen_copy_frames(const dsb_pipe_dev &d, const dsb_pipe_gen_dev &g,
                                                           uint32_t s, uint32_t i, uint32_t k, uint32_t lane)
{
    const uint32_t tm = (i + lane) % g.n_templates;
    const uint32_t len = lane < k ? g.template_lens[tm] : 0u;
    const uint32_t nch = (len + 15u) >> 4;
    const uint32_t maxch = __reduce_max_sync(0xffffffffu, nch);
    for (uint32_t j0 = 0; j0 < k; j0 += GEN_BATCH) {
        uint32_t tj[GEN_BATCH], nj[GEN_BATCH];
#pragma unroll
        for (uint32_t u = 0; u < GEN_BATCH; u++) {
            tj[u] = __shfl_sync(0xffffffffu, tm, j0 + u); /* j0 + u < 32: k <= 32 */
            nj[u] = __shfl_sync(0xffffffffu, nch, j0 + u); /* 0 for lanes >= k */
        }
        for (uint32_t c = lane; c - lane < maxch; c += 32u) {
            uint4 v[GEN_BATCH];
#pragma unroll
            for (uint32_t u = 0; u < GEN_BATCH; u++)
                if (c < nj[u]) v[u] = __ldg((const uint4 *)(g.templates + (size_t)tj[u] * DSB_PIPE_FRAME_SLOT) + c);
#pragma unroll
            for (uint32_t u = 0; u < GEN_BATCH; u++) {
                if (c >= nj[u]) continue;
                const uint32_t req = i + j0 + u;
                if (c == 1u) v[u].y = req; /* request id, bytes 20..23 */
                if (c == 3u) {             /* seed, bytes 48..55 */
                    unsigned long long sd = ((unsigned long long)v[u].y << 32 | v[u].x) + req;
                    v[u].x = (uint32_t)sd;
                    v[u].y = (uint32_t)(sd >> 32);
                }
                __stcg((uint4 *)(d.frames + (size_t)((s + j0 + u) & PIPE_MASK) * DSB_PIPE_FRAME_SLOT) + c, v[u]);
            }
        }
    }
    return len;
}

__global__ void __launch_bounds__(64, 1) dsb_pipe_gen(const dsb_pipe_dev d, const dsb_pipe_gen_dev g)
{
    __shared__ volatile uint32_t published_sh, gen_done, consumed_sh;
    const uint32_t tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5;
    if (tid == 0) {
        published_sh = g.seq0;
        gen_done = 0;
        consumed_sh = g.cons0;
    }
    __syncthreads();
    /* closed loop: at most maxo published and not consumed; drop mode: only
     * the ring rule limits publication */
    const uint32_t maxo = g.drop_when_full ? 0xFFFFFFFFu
                          : (g.max_outstanding && g.max_outstanding < PIPE_C) ? g.max_outstanding
                                                                              : PIPE_C;
    if (warp == 0) {
        /* generator: publishes up to 32 items per iteration */
        uint32_t s = g.seq0, i = 0;
        unsigned long long dropped = 0, t_first = 0;
        uint64_t last_poll = ptx_globaltimer();
        while (i < g.requests) {
            const uint32_t m = min(32u, g.requests - i);
            /* one reading for the warp: k must be uniform (gen_copy_frames shuffles) */
            const uint32_t outstanding = s - __shfl_sync(0xffffffffu, consumed_sh, 0);
            const uint32_t want = outstanding >= maxo ? 0u : min(m, maxo - outstanding);
            uint32_t is_free = 0;
            if (lane < want) {
                const uint32_t sl = s + lane;
                is_free = pipe_slot_free(d.ack, sl);
            }
            const uint32_t bal = __ballot_sync(0xffffffffu, is_free);
            uint32_t k = pipe_first_clear(bal);
            if (k > want) k = want;
            if (k == 0) {
                if (g.drop_when_full && want > 0) {
                    if (lane == 0) dropped++;
                    i++;
                } else if (lane == 0) {
                    const uint64_t now = ptx_globaltimer();
                    if (now - last_poll >= d.poll_ns) {
                        last_poll = now;
                        if (d.ctrl->shutdown) gen_done = 2;
                    }
                }
                __syncwarp();
                if (__shfl_sync(0xffffffffu, gen_done, 0) == 2) break; /* the whole warp, or none */
                continue;
            }
            __threadfence(); /* acquire: the acks before overwriting the slots */
            const uint32_t len = gen_copy_frames(d, g, s, i, k, lane);
            if (lane < k) {
                const uint32_t req = i + lane, sl = s + lane;
                dsb_pipe_item *it = d.items + (sl & PIPE_MASK);
                const uint64_t now = ptx_globaltimer();
                it->len = len;
                it->t_recv = now;
                g.t_pub[req] = now;
                if (t_first == 0 && lane == 0) t_first = now;
            }
            __threadfence();
            __syncwarp();
            if (lane < k) *(volatile uint32_t *)&d.items[(s + lane) & PIPE_MASK].seq = s + lane + 1u;
            s += k;
            i += k;
            if (g.drop_when_full && k < want && i < g.requests) {
                if (lane == 0) dropped++; /* the next attempt found its slot busy */
                i++;
            }
            if (lane == 0) published_sh = s;
            __syncwarp();
        }
        if (lane == 0) {
            g.result[0] = s - g.seq0;
            g.result[1] = dropped;
            g.result[4] = t_first;
            __threadfence_block();
            published_sh = s;
            if (gen_done != 2) gen_done = 1;
        }
    } else {
        /* consumer: drains the ready replies in order, up to 32 per iteration */
        uint32_t r = g.cons0;
        unsigned long long answered = 0, stray = 0, t_last = 0;
        uint64_t last_poll = ptx_globaltimer();
        for (;;) {
            const uint32_t sl = r + lane;
            const unsigned long long w = pipe_vload64(&d.ready[sl & PIPE_MASK]);
            const uint32_t ok = (uint32_t)(w >> 32) == sl + 1u;
            const uint32_t bal = __ballot_sync(0xffffffffu, ok);
            const uint32_t k = pipe_first_clear(bal);
            if (k == 0) {
                /* lane 0's reading for the warp: the loop's ballots need every lane */
                const uint32_t done = __shfl_sync(0xffffffffu, gen_done, 0);
                if (done == 2) break;
                if (done == 1 && r == __shfl_sync(0xffffffffu, published_sh, 0)) break;
                if (lane == 0) {
                    const uint64_t now = ptx_globaltimer();
                    if (now - last_poll >= d.poll_ns) {
                        last_poll = now;
                        if (d.ctrl->shutdown) gen_done = 2;
                    }
                }
                __syncwarp();
                continue;
            }
            __threadfence(); /* acquire: the replies after their ready words */
            unsigned long long now = 0;
            uint32_t my_stray = 0;
            if (lane < k) {
                const unsigned char *f = d.replies + (size_t)(sl & PIPE_MASK) * DSB_PIPE_REPLY_SLOT;
                const uint32_t len = (uint32_t)w;
                const uint32_t req = __ldcg((const uint32_t *)(f + 20));
                now = ptx_globaltimer();
                if (req < g.requests) {
                    atomicAdd(g.answers + req, 1u);
                    const unsigned long long tp = g.t_pub[req];
                    if (g.latency_ns && tp) g.latency_ns[req] = (uint32_t)(now - tp);
                    if (g.log) {
                        const uint32_t nb = min(len, g.log_stride);
                        const uint4 *src = (const uint4 *)f;
                        uint4 *dst = (uint4 *)(g.log + (size_t)req * g.log_stride);
                        for (uint32_t c = 0; c < (nb + 15u) >> 4; c++) dst[c] = __ldcg(src + c);
                    }
                } else {
                    my_stray = 1;
                }
            }
            /* every lane's reads of its slot are done before the slots are returned */
            __threadfence();
            __syncwarp();
            const uint32_t nstray = __popc(__ballot_sync(0xffffffffu, my_stray));
            unsigned long long tmax = now;
            for (int o = 16; o > 0; o >>= 1) {
                unsigned long long x = __shfl_xor_sync(0xffffffffu, tmax, o);
                tmax = x > tmax ? x : tmax;
            }
            r += k;
            if (lane == 0) {
                *(volatile uint32_t *)d.consumed = r;
                consumed_sh = r;
                answered += k;
                stray += nstray;
                t_last = tmax;
            }
        }
        if (lane == 0) {
            g.result[2] = answered;
            g.result[3] = stray;
            g.result[5] = t_last;
        }
    }
}

/* The clock calibration kernel: one %globaltimer reading into mapped memory. */
__global__ void dsb_pipe_clock(dsb_pipe_ctrl *ctrl)
{
    ctrl->clock = ptx_globaltimer();
    __threadfence_system();
}

/* ---- host-side launch helpers (C linkage) --------------------------------- */

extern "C" int dsb_pipe_k_launch_gen(const dsb_pipe_dev *d, const dsb_pipe_gen_dev *g, void *stream)
{
    dsb_pipe_gen<<<1, 64, 0, (cudaStream_t)stream>>>(*d, *g);
    return (int)cudaGetLastError();
}

extern "C" int dsb_pipe_k_launch_clock(dsb_pipe_ctrl *ctrl, void *stream)
{
    dsb_pipe_clock<<<1, 1, 0, (cudaStream_t)stream>>>(ctrl);
    return (int)cudaGetLastError();
}
