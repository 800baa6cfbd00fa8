/* The streaming dSB solver's kernels (seed 000, Sec. VIII-B); the host driver
 * is stream_host.c, the interface stream_dev.h.
 *
 * Consume (one launch a pass): persistent worker blocks of 512 threads take
 * work units of `unit` consecutive frames of the pass in column-block-major
 * order by one atomic ticket.  A block keeps the sign tiles of its current
 * column block for all B replicas in shared memory (B x 4096 bytes: 1008
 * words and 16 zero words, so the last lanes' reads need no guard) and reloads
 * them only when a unit reaches another column block.  Each warp owns one
 * 4096-byte frame stage and consumes frames warp, warp + 16, ... of the unit:
 *   gen  : the warp writes the payload words itself (Mattis from the eta
 *          tile, random from the pair hash) into its stage;
 *   host : lane 0 pulls the whole frame (header + payload) from mapped host
 *          memory with one bulk copy completing on the warp's mbarrier, checks
 *          it with dsb_wire_stream_check (and that it is the frame expected at
 *          that position), and issues the next frame's copy as soon as the
 *          warp holds the payload in registers.
 * The warp holds the 1008 payload words in registers (32 a lane), XORs them
 * with each replica's tile, popcounts, reduces over the warp (redux) and adds
 * the frame's mismatches to the row's int32 counter (one red.add a replica).
 * Bad frames are counted and never added.
 *
 * Ring (frames built by host threads, or received from the network): thread 0
 * of a block waits for the ready word of its unit's chunk; for received
 * frames the host may give the launch up (the abort word set to the launch's
 * epoch: an attempt that lost frames), and the waiting blocks then stop; what
 * the launch consumed is in the counters only, which the host clears.
 *
 * Update (one launch a pass, grid ceil(n/512) x B): Eq. (10), the energy
 * (int64, two's complement sums in unsigned 64-bit atomics), the dSB step of
 * dsb/core.h when updating, the signs re-packed on the frame grid by ballot
 * (words beyond ceil(n/32) are never written: zero padding), the checksum
 * terms of the 64-bit words the block covers, counters cleared. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "common/ptx.cuh"
#include "dsb/core.h"
#include "dsb/stream.h"
#include "dsb/wire.h"
#include "stream_dev.h"

#define SG_FULL 0xFFFFFFFFu
#define SG_W DSB_STREAM_WORDS /* 1008 */
#define SG_TW DSB_SG_TILE_WORDS

/* ---- consume ----------------------------------------------------------------- */

/* The payload's 1008 words into registers: word lane + 32 k in fw[k]; lanes
 * 16..31 have no word 31 (1008 = 31.5 x 32) and hold 0 there. */
static __device__ __forceinline__ void sg_load(uint32_t fw[32], const uint32_t *payload,
                                               uint32_t lane)
{
#pragma unroll
    for (uint32_t k = 0; k < 31u; k++) fw[k] = payload[lane + 32u * k];
    fw[31] = lane < 16u ? payload[992u + lane] : 0u;
}

/* Mismatches of the frame against every replica's tile, added to the row's
 * counters (cnt_row = cnt + row; replica b at cnt_row + b n) when good.  The
 * tiles' words 1008..1023 are zero, like fw[31] of lanes 16..31. */
static __device__ __forceinline__ void sg_accumulate(const uint32_t fw[32], const uint32_t *tiles,
                                                     uint32_t replicas, uint32_t lane, int good,
                                                     int32_t *cnt_row, uint32_t n)
{
    for (uint32_t b = 0; b < replicas; b++) {
        const uint32_t *t = tiles + b * SG_TW + lane;
        uint32_t acc = 0;
#pragma unroll
        for (uint32_t k = 0; k < 32u; k++) acc += __popc(fw[k] ^ t[32u * k]);
        acc = __reduce_add_sync(SG_FULL, acc);
        if (good && lane == (b & 31u)) atomicAdd(cnt_row + (size_t)b * n, (int)acc);
    }
}

/* Ring: chunk (run-wide index) and slot of pass-local frame f. */
static __device__ __forceinline__ uint64_t sg_chunk(const dsb_sg_consume_args *a, uint64_t f)
{
    return a->chunk_base + f / a->ring_frames;
}

/* Device address of frame f of the pass in the host buffer. */
static __device__ __forceinline__ const uint8_t *sg_frame_src(const dsb_sg_consume_args *a,
                                                              uint64_t f)
{
    if (a->mode == DSB_SG_HOST_PASS) return a->buf + f * DSB_STREAM_FRAME;
    uint64_t q = f / a->ring_frames;
    uint64_t slot = (a->chunk_base + q) % a->ring_slots;
    return a->buf + (slot * a->ring_frames + (f - q * a->ring_frames)) * DSB_STREAM_FRAME;
}

/* Thread 0, ring: wait until the chunk of unit u is in (ready[slot] = Q + 1);
 * 0 when the host gave the launch up first (*abort == epoch). */
static __device__ int sg_wait_ready(const dsb_sg_consume_args *a, uint64_t u)
{
    uint64_t Q = sg_chunk(a, u * a->unit);
    const volatile uint64_t *r = (const volatile uint64_t *)&a->ready[Q % a->ring_slots];
    const volatile uint64_t *ab = (const volatile uint64_t *)a->abort;
    while (*r < Q + 1u) {
        if (ab && *ab == a->epoch) return 0;
        __nanosleep(a->poll_ns);
    }
    __threadfence_system(); /* the frames after their ready word */
    return 1;
}

/* Thread 0, after the block's barrier that ends unit u: progress and, in the
 * ring, the unit's frames counted against its chunk; the last unit of a chunk
 * hands the slot back to the host (freed[slot] = Q + 1). */
static __device__ void sg_unit_done(const dsb_sg_consume_args *a, uint64_t u,
                                    unsigned long long *done)
{
    uint64_t f0 = u * a->unit;
    uint64_t f1 = f0 + a->unit < a->frames ? f0 + a->unit : a->frames;
    uint32_t cnt = (uint32_t)(f1 - f0);
    *done += cnt;
    if (a->progress) *(volatile unsigned long long *)&a->progress[blockIdx.x] = *done;
    if (a->mode != DSB_SG_HOST_RING) return;
    uint64_t q = f0 / a->ring_frames;
    uint64_t Q = a->chunk_base + q;
    uint32_t slot = (uint32_t)(Q % a->ring_slots);
    uint64_t left = a->frames - q * a->ring_frames;
    uint32_t in_chunk = (uint32_t)(left < a->ring_frames ? left : a->ring_frames);
    uint32_t old = atomicAdd(&a->ring_count[slot], cnt);
    if (old + cnt == in_chunk) {
        atomicExch(&a->ring_count[slot], 0u);
        __threadfence_system();
        *(volatile uint64_t *)&a->freed[slot] = Q + 1u;
    }
}

/* Lane 0, host source: the frame in the stage is good when the wire check
 * passes and it is the frame expected at this position of the pass.  Not
 * inlined: its registers are not the consume loop's (no spills at 64). */
static __device__ __noinline__ int sg_check(const uint32_t *stage, uint32_t n, uint32_t pass,
                                            uint32_t row, uint32_t cb)
{
    dsb_wire_stream v;
    dsb_wire_reason r = dsb_wire_stream_check((const uint8_t *)stage, DSB_STREAM_FRAME, n, pass, &v);
    return r == DSB_WR_NONE && v.row == row && v.block == cb;
}

__global__ void __launch_bounds__(DSB_SG_THREADS, 2) dsb_sg_k_consume(const dsb_sg_consume_args a)
{
    extern __shared__ __align__(1024) uint32_t sg_smem[];
    __shared__ __align__(8) uint64_t bars[DSB_SG_WARPS];
    __shared__ unsigned long long unit_sh;
    const uint32_t tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5;
    uint32_t *stage = sg_smem + warp * SG_TW; /* this warp's frame: header words 0..15, payload 16.. */
    uint32_t *tiles = sg_smem + DSB_SG_WARPS * SG_TW;
    uint32_t *etat = tiles + a.replicas * SG_TW;
    const uint32_t bar = ptx_smem(&bars[warp]);
    const int host = a.mode >= DSB_SG_HOST_PASS;

    if (lane == 0) {
        ptx_mbar_init(bar, 1);
        ptx_fence_mbar_init();
    }
    for (uint32_t i = tid; i < (a.replicas + 1u) * 16u; i += DSB_SG_THREADS)
        tiles[(i >> 4) * SG_TW + SG_W + (i & 15u)] = 0u; /* the tiles' and eta tile's pads */

    uint32_t phase = 0, cur_cb = 0xFFFFFFFFu;
    uint32_t good_n = 0, bad_n = 0; /* lane 0 of each warp (< 2^32: T / 16 at most) */
    unsigned long long prev = ~0ull, done = 0; /* thread 0 */
    for (;;) {
        __syncthreads(); /* the previous unit (and the tiles it used) is done */
        if (tid == 0) {
            if (prev != ~0ull) sg_unit_done(&a, prev, &done);
            unsigned long long u = atomicAdd(a.ticket, 1u);
            if (u < a.units && a.mode == DSB_SG_HOST_RING && !sg_wait_ready(&a, u))
                u = a.units; /* given up: this block stops (its earlier units are counted) */
            unit_sh = u;
            prev = u;
        }
        __syncthreads();
        const unsigned long long u = unit_sh;
        if (u >= a.units) break;
        const uint64_t f0 = u * a.unit;
        const uint64_t f1 = f0 + a.unit < a.frames ? f0 + a.unit : a.frames;
        if (host && lane == 0 && a.mode == DSB_SG_HOST_RING) ptx_fence_proxy_async_global();
        /* a unit's frames are contiguous in the host buffer (ring chunks hold whole units) */
        const uint8_t *usrc = host ? sg_frame_src(&a, f0) : NULL;

        /* the unit in sub-ranges of one column block each: lo, nfr relative to f0 */
        const uint32_t len = (uint32_t)(f1 - f0);
        uint32_t cb = (uint32_t)(f0 / a.n), row0 = (uint32_t)(f0 - (uint64_t)cb * a.n);
        for (uint32_t lo = 0; lo < len;) {
            const uint32_t nfr = len - lo < a.n - row0 ? len - lo : a.n - row0;
            if (cb != cur_cb) { /* uniform over the block */
                __syncthreads();
                const uint32_t *src = a.signs + (uint64_t)cb * SG_W;
                for (uint32_t i = tid; i < a.replicas * SG_W; i += DSB_SG_THREADS) {
                    uint32_t b = i / SG_W, w = i - b * SG_W;
                    tiles[b * SG_TW + w] = src[(uint64_t)b * a.grid_words + w];
                }
                if (a.mode == DSB_SG_GEN_MATTIS)
                    for (uint32_t i = tid; i < SG_W; i += DSB_SG_THREADS)
                        etat[i] = a.eta[(uint64_t)cb * SG_W + i];
                __syncthreads();
                cur_cb = cb;
            }
            uint32_t fw[32];
            if (host) {
                const uint8_t *src = usrc + (size_t)(lo + warp) * DSB_STREAM_FRAME;
                if (warp < nfr && lane == 0) {
                    ptx_fence_proxy_async(); /* the stage's earlier generic reads first */
                    ptx_mbar_arrive_expect_tx(bar, DSB_STREAM_FRAME);
                    ptx_bulk_g2s(ptx_smem(stage), src, DSB_STREAM_FRAME, bar);
                }
                for (uint32_t j = warp; j < nfr; j += DSB_SG_WARPS) {
                    const uint32_t row = row0 + j;
                    ptx_mbar_wait(bar, phase);
                    phase ^= 1u;
                    int good = 0;
                    if (lane == 0) {
                        good = sg_check(stage, a.n, a.pass, row, cb);
                        good_n += (uint32_t)good;
                        bad_n += (uint32_t)!good;
                    }
                    good = __shfl_sync(SG_FULL, good, 0);
                    sg_load(fw, stage + 16, lane);
                    __syncwarp(); /* every lane has read the stage: it may be refilled */
                    src += DSB_SG_WARPS * DSB_STREAM_FRAME;
                    if (lane == 0 && j + DSB_SG_WARPS < nfr) {
                        ptx_fence_proxy_async();
                        ptx_mbar_arrive_expect_tx(bar, DSB_STREAM_FRAME);
                        ptx_bulk_g2s(ptx_smem(stage), src, DSB_STREAM_FRAME, bar);
                    }
                    sg_accumulate(fw, tiles, a.replicas, lane, good, a.cnt + row, a.n);
                }
            } else {
                uint32_t *pl = stage + 16;
                const uint64_t gw0 = (uint64_t)cb * SG_W;
                for (uint32_t j = warp; j < nfr; j += DSB_SG_WARPS) {
                    const uint32_t row = row0 + j;
                    /* each lane writes and then reads only its own words lane + 32 k */
                    if (a.mode == DSB_SG_GEN_MATTIS) {
                        uint32_t eta_i = a.eta[row >> 5] >> (row & 31u) & 1u;
                        for (uint32_t w = lane; w < SG_W; w += 32u)
                            pl[w] = dsb_stream_mattis_word(eta_i, etat[w], a.n, gw0 + w);
                    } else {
#pragma unroll 1
                        for (uint32_t w = lane; w < SG_W; w += 32u)
                            pl[w] = dsb_stream_random_word(a.key, row, a.n, gw0 + w);
                    }
                    sg_load(fw, pl, lane);
                    good_n += lane == 0;
                    sg_accumulate(fw, tiles, a.replicas, lane, 1, a.cnt + row, a.n);
                }
            }
            lo += nfr;
            cb++;
            row0 = 0;
        }
    }
    if (lane == 0) {
        if (good_n) atomicAdd(&a.stats[0], (unsigned long long)good_n);
        if (bad_n) atomicAdd(&a.stats[1], (unsigned long long)bad_n);
    }
}

/* ---- end of pass ----------------------------------------------------------------- */

__global__ void __launch_bounds__(DSB_SG_THREADS) dsb_sg_k_update(const dsb_sg_update_args a)
{
    __shared__ uint32_t words[DSB_SG_WARPS];
    __shared__ long long esum[DSB_SG_WARPS];
    const uint32_t tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5, b = blockIdx.y;
    const uint32_t i = blockIdx.x * DSB_SG_THREADS + tid;
    const int valid = i < a.n;
    const size_t idx = (size_t)b * a.n + i;
    float x = 0.0f, y = 0.0f;
    long long e = 0;
    if (valid) {
        if (a.init) {
            dsb_initial_state(a.seed, b, i, &x, &y);
            a.x[idx] = x;
            a.y[idx] = y;
        } else {
            x = a.x[idx];
            int32_t c = a.cnt[idx];
            a.cnt[idx] = 0;
            int32_t s = dsb_sign(x);
            int32_t sum = dsb_stream_coupling_sum(a.n, c, s);
            e = (long long)dsb_energy2_term(s, sum, 0);
            if (a.update) {
                y = a.y[idx];
                dsb_step(&x, &y, sum, a.damping, a.xi, a.dt);
                a.x[idx] = x;
                a.y[idx] = y;
            }
        }
    }
    const uint32_t bits = __ballot_sync(SG_FULL, valid && dsb_spin_bit(x));
    const uint32_t wi = blockIdx.x * DSB_SG_WARPS + warp; /* sign word = column / 32 */
    if (lane == 0) {
        words[warp] = bits;
        if ((uint64_t)wi * 32u < a.n) a.signs[(size_t)b * a.grid_words + wi] = bits;
    }
    if (a.init) return; /* uniform */
#pragma unroll
    for (uint32_t o = 16; o; o >>= 1) e += __shfl_down_sync(SG_FULL, e, o);
    if (lane == 0) esum[warp] = e;
    __syncthreads();
    if (warp == 0) {
        long long s = lane < DSB_SG_WARPS ? esum[lane] : 0;
        unsigned long long t = 0;
        if (lane < DSB_SG_WARPS / 2u) {
            uint64_t k = (uint64_t)blockIdx.x * (DSB_SG_WARPS / 2u) + lane; /* 64-bit word */
            if (k * 64u < a.n)
                t = dsb_stream_checksum_term(k, (uint64_t)words[2u * lane] |
                                                    (uint64_t)words[2u * lane + 1u] << 32);
        }
#pragma unroll
        for (uint32_t o = 16; o; o >>= 1) {
            s += __shfl_down_sync(SG_FULL, s, o);
            t += __shfl_down_sync(SG_FULL, t, o);
        }
        if (lane == 0) {
            atomicAdd(&a.energy2[b], (unsigned long long)s);
            atomicAdd(&a.checksum[b], t);
        }
    }
}

__global__ void dsb_sg_k_eta(uint32_t *eta, uint64_t key, uint32_t n, uint64_t grid_words)
{
    for (uint64_t gw = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; gw < grid_words;
         gw += (uint64_t)gridDim.x * blockDim.x)
        eta[gw] = dsb_stream_eta_word(key, n, gw);
}

/* ---- launch wrappers ------------------------------------------------------------- */

extern "C" int dsb_sg_prepare(uint32_t smem_bytes, int *blocks_per_sm, int *regs, int *local_bytes)
{
    cudaError_t e = cudaFuncSetAttribute(dsb_sg_k_consume,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_bytes);
    if (e != cudaSuccess) return (int)e;
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, dsb_sg_k_consume,
                                                      (int)DSB_SG_THREADS, smem_bytes);
    if (e != cudaSuccess) return (int)e;
    cudaFuncAttributes fa;
    e = cudaFuncGetAttributes(&fa, dsb_sg_k_consume);
    if (e != cudaSuccess) return (int)e;
    *regs = fa.numRegs;
    *local_bytes = (int)fa.localSizeBytes;
    return 0;
}

extern "C" int dsb_sg_launch_consume(const dsb_sg_consume_args *a, uint32_t blocks,
                                     uint32_t smem_bytes, void *stream)
{
    dsb_sg_k_consume<<<blocks, DSB_SG_THREADS, smem_bytes, (cudaStream_t)stream>>>(*a);
    return (int)cudaGetLastError();
}

extern "C" int dsb_sg_launch_update(const dsb_sg_update_args *a, void *stream)
{
    dim3 grid((a->n + DSB_SG_THREADS - 1u) / DSB_SG_THREADS, a->replicas);
    dsb_sg_k_update<<<grid, DSB_SG_THREADS, 0, (cudaStream_t)stream>>>(*a);
    return (int)cudaGetLastError();
}

extern "C" int dsb_sg_launch_eta(uint32_t *eta, uint64_t key, uint32_t n, uint64_t grid_words,
                                 void *stream)
{
    uint64_t blocks = (grid_words + 255u) / 256u;
    if (blocks > 4096u) blocks = 4096u;
    dsb_sg_k_eta<<<(uint32_t)blocks, 256, 0, (cudaStream_t)stream>>>(eta, key, n, grid_words);
    return (int)cudaGetLastError();
}
