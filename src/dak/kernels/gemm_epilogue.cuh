/* The split kernel's epilogue (gemm_split.cu): C stores (from the fragments, or staged through the
 * idle ring), the split-K partials, and the fix-up protocols (owner-wait, last-arriver, reduce-scatter).
 * Every function here is called by the consumer threads of one CTA; the fragment layouts are those of
 * include/dak/gemm_layout.h.  Not a public header. */
#ifndef DAK_GEMM_EPILOGUE_CUH
#define DAK_GEMM_EPILOGUE_CUH

#include <cuda_bf16.h>

#include "common/ptx.cuh"
#include "dak/gemm_layout.h"
#include "gemm_kernel.cuh"

/* Writes warp q's fragment sums v[a][b] of the 64-row x 64-column tile whose first row and column in C are rowt,
 * col0 to C, none at or past column N: the share and the fragments' positions are gemm_layout.h's (dak_tile_map_of,
 * dak_frag_row / dak_frag_col), the map worked out here rather than held across the caller's slot loop. */
static __device__ __forceinline__ void store_tile(const kparams *p, float (*v)[4][4], uint32_t q, uint32_t rowt,
                                                  uint32_t col0)
{
    const uint32_t lane = threadIdx.x & 31u;
    const dak_tile_map mp = dak_tile_map_of((int)p->N - (int)col0, q, (int)p->wgmma), *m = &mp;
#pragma unroll
    for (uint32_t mi = 0; mi < 2; mi++)
#pragma unroll
        for (uint32_t nj = 0; nj < 4; nj++) {
            if (mi >= m->MI || nj >= m->nn) continue;
#pragma unroll
            for (uint32_t e = 0; e < 4; e++) {
                const uint32_t re = rowt + dak_frag_row(m, lane, mi, e), ce = col0 + dak_frag_col(m, lane, mi, nj, e);
                if (ce >= p->N) continue;
                size_t idx = (size_t)ce * p->M + re;
                if (p->out_bf16) {
                    __nv_bfloat16 b = __float2bfloat16_rn(v[mi][nj][e]);
                    ((__nv_bfloat16 *)p->C)[idx] = b;
                } else {
                    ((float *)p->C)[idx] = v[mi][nj][e];
                }
            }
        }
}

/* Dynamic units: one warp's fragment sums (its share m of the 64-row tile, gemm_layout.h's dak_frag_row /
 * dak_frag_col) into the unit's shared staging tile T[column][row] (DAK_DYN_STAGE_LD floats a column: the lanes of
 * one store hit 32 different banks).  The K-half pair of warps (w, w + 4) holds the same positions: the first one
 * stores (add false), the second adds after a barrier. */
static __device__ __forceinline__ void stage_frags(const kparams *p, float (*v)[4][4], const dak_tile_map *m, float *T,
                                                   bool add)
{
    const uint32_t lane = threadIdx.x & 31u;
#pragma unroll
    for (uint32_t a = 0; a < 2; a++)
#pragma unroll
        for (uint32_t b = 0; b < 4; b++) {
            if (a >= m->MI || b >= m->nn) continue;
#pragma unroll
            for (uint32_t e = 0; e < 4; e++) {
                const uint32_t ce = dak_frag_col(m, lane, a, b, e);
                if (ce >= p->N) continue;
                float *t = T + ce * DAK_DYN_STAGE_LD + dak_frag_row(m, lane, a, e);
                *t = add ? *t + v[a][b][e] : v[a][b][e];
            }
        }
}

/* Dynamic units: the staged 64 x N partial added to dst[column x ld + row] by 16-byte vector
 * reductions (fire-and-forget, no round trip), spread over the consumer threads. */
static __device__ __forceinline__ void red_staged(const float *T, uint32_t N, float *dst, size_t ld, uint32_t ctid)
{
    for (uint32_t i = ctid; i < N * 16u; i += NCW * 32u) {
        const uint32_t col = i >> 4, r = (i & 15u) * 4u;
        const float4 v = *(const float4 *)(T + col * DAK_DYN_STAGE_LD + r);
        ptx_red_add_v4_f32(dst + col * ld + r, v.x, v.y, v.z, v.w);
    }
}

/* Dynamic units: one thread waits until every HBM CTA of the launch has zeroed its share of C (a count of at
 * least n on *p).  Those CTAs are resident (one CTA per SM, grid <= SMs) and zero first, so it ends in
 * microseconds; one that lasts SPIN_LIMIT polls (each an L2 round trip, >= ~0.3 us: >= ~1 s in all) means a
 * broken protocol or a CTA that never ran, and traps, so that the launch fails with an error instead of holding
 * the device (a bench run stalled for its 100 s limit once in the twelfth session, cause unknown).  Only here:
 * the same watchdog in the split-K fix-up waits moved the wide kernels' spills (ptxas, CUDA 13.0). */
#define SPIN_LIMIT (1u << 22)
static __device__ __forceinline__ void dyn_wait_zeroed(const uint32_t *p, uint32_t n)
{
    for (uint32_t i = 0; ptx_ld_acquire_gpu_u32(p) < n; i++)
        if (i == SPIN_LIMIT) __trap();
}

/* ---- the split-K fix-up protocol (every consumer thread of the CTA calls these; shared by the
 * 64-column epilogue and the wide one) ---- */

/* Owner waits (even split, cluster 1; run 10): a contributor whose partial is stored publishes it
 * with one release-add after a CTA barrier. */
static __device__ __forceinline__ void fix_publish(uint32_t *ctr)
{
    ptx_bar_sync(1, NCW * 32u);
    if (threadIdx.x == 0) ptx_red_release_gpu_add_u32(ctr, 1u);
}

/* The owner (slot 0): one acquire poll until the ks_n - 1 others have published (normally at
 * once), the counter reset for the next launch. */
static __device__ __forceinline__ void fix_wait_others(uint32_t *ctr, uint32_t ks_n)
{
    if (threadIdx.x == 0) {
        while (ptx_ld_acquire_gpu_u32(ctr) != ks_n - 1u) {
        }
        *ctr = 0;
    }
    ptx_bar_sync(1, NCW * 32u);
}

/* Runs 1-9 (and round-robin): after every contributor's partial store, true in the last of the
 * ks_n CTAs to arrive, which then sums and resets the counter.  One fence per storing thread,
 * an acquire fence only in the last CTA.  (Run 6 tried thread 0 alone fencing before and after
 * its atomic: no gain measured.) */
static __device__ __forceinline__ bool fix_arrive_last(uint32_t *ctr, uint32_t ks_n, volatile uint32_t *flag)
{
    __threadfence();
    ptx_bar_sync(1, NCW * 32u);
    if (threadIdx.x == 0) {
        uint32_t old = atomicAdd(ctr, 1u);
        *flag = old == ks_n - 1u;
    }
    ptx_bar_sync(1, NCW * 32u);
    if (!*flag) return false;
    __threadfence();
    return true;
}

/* ---- wide HBM column tiles (opts.bn 128 / 256): 128 rows x tn = 8 J columns; warp q of
 * warpgroup h holds rows 64 h + 16 q .. and all J n8 groups, d[4 j + e] the wgmma accumulator
 * layout (gemm_layout.h).  J is a constant after inlining, so d stays in registers. ---- */

/* Writes a warp's 16 x tn sums to C (rows row + .., columns col0 + ..; none at or past N). */
static __device__ __forceinline__ void store_wide(const kparams *p, const float *d, const uint32_t J, uint32_t row,
                                                  uint32_t col0)
{
    const uint32_t lane = threadIdx.x & 31u, g = lane >> 2, t4 = lane & 3u;
#pragma unroll
    for (uint32_t j = 0; j < J; j++)
#pragma unroll
        for (uint32_t e = 0; e < 4; e++) {
            const uint32_t re = row + g + (e >> 1) * 8u, ce = col0 + j * 8u + 2u * t4 + (e & 1u);
            if (ce >= p->N) continue;
            const size_t idx = (size_t)ce * p->M + re;
            if (p->out_bf16)
                ((__nv_bfloat16 *)p->C)[idx] = __float2bfloat16_rn(d[4u * j + e]);
            else
                ((float *)p->C)[idx] = d[4u * j + e];
        }
}

/* A warp's fragments in its warpgroup's half of a partial: float4 (q J + j) x 32 + lane. */
static __device__ __forceinline__ void put_wide(float4 *dst, const float *d, const uint32_t J, uint32_t q)
{
    const uint32_t lane = threadIdx.x & 31u;
#pragma unroll
    for (uint32_t j = 0; j < J; j++)
        dst[(q * J + j) * 32u + lane] = make_float4(d[4u * j], d[4u * j + 1u], d[4u * j + 2u], d[4u * j + 3u]);
}

/* Adds another contributor's partial (same layout) into d, 4 fragments at a time: the compiler
 * would otherwise issue all J loads first, 4 J more live registers beside the 4 J of d. */
static __device__ __forceinline__ void add_wide(float *d, const float4 *src, const uint32_t J, uint32_t q)
{
    const uint32_t lane = threadIdx.x & 31u;
#pragma unroll
    for (uint32_t j = 0; j < J; j++) {
        const float4 v = __ldcg(src + (q * J + j) * 32u + lane);
        d[4u * j] += v.x, d[4u * j + 1u] += v.y, d[4u * j + 2u] += v.z, d[4u * j + 3u] += v.w;
        if (j % 4u == 3u) asm volatile("" ::: "memory"); /* no load moves above this */
    }
}

/* add_wide's counterpart for a partial staged in shared memory (generic pointer `st`): no limit on
 * the loads in flight, their latency is short. */
static __device__ __forceinline__ void add_wide_smem(float *d, const float4 *st, const uint32_t J, uint32_t q)
{
    const uint32_t lane = threadIdx.x & 31u;
#pragma unroll
    for (uint32_t j = 0; j < J; j++) {
        const float4 v = st[(q * J + j) * 32u + lane];
        d[4u * j] += v.x, d[4u * j + 1u] += v.y, d[4u * j + 2u] += v.z, d[4u * j + 3u] += v.w;
    }
}

/* C of a CTA's last tile through its idle ring (opts.diag_epi_global off): C is column-major, and a
 * warp's fragment stores put 4 bytes into each of 4 columns, 4 sectors of 32 B a store; the H200
 * took 10.6 us to store 64 KiB of C that way (7168^2, N = 256: 16 KiB a warp).  Here the warps write
 * their fragments into a [column][row] tile of rs floats a column (rs = the tile's rows + 4: 4 rs
 * = 16 banks mod 32, conflict-free), and all consumer threads then store rows [rlo, rhi) of each
 * valid column by float4 (full lines).  Warp q of warpgroup kh holds MB 64-row boxes (MB kh + m,
 * m < MB), of which box m has rows 64 (MB kh + m) + 16 q .. + 15 (wgmma layout: float4 j of its
 * 4 J floats at d + 4 J m is n8 group j); bit m of `has`: the warp stores that box.  Every consumer
 * thread calls this; the ring holds 8 J x rs floats. */
static __device__ __forceinline__ void store_staged(const kparams *p, const float *d, const uint32_t J,
                                                    const uint32_t MB, uint32_t has, uint32_t wr0, uint32_t rs,
                                                    uint32_t rlo, uint32_t rhi, uint32_t row0, uint32_t col0,
                                                    uint32_t sA)
{
    const uint32_t lane = threadIdx.x & 31u, g = lane >> 2, t4 = lane & 3u;
    float *st = (float *)ptx_smem_generic(sA);
    ptx_bar_sync(1, NCW * 32u); /* the ring's last reads (slots, staged partials) are done */
#pragma unroll
    for (uint32_t m = 0; m < MB; m++) {
        if (!(has >> m & 1u)) continue;
        const uint32_t r0 = 16u * (wr0 + 4u * m) + g; /* wr0 + 4 m: the warp's region of box m */
#pragma unroll
        for (uint32_t j = 0; j < J; j++)
#pragma unroll
            for (uint32_t e = 0; e < 4; e++)
                st[(8u * j + 2u * t4 + (e & 1u)) * rs + r0 + (e >> 1) * 8u] = d[4u * (J * m + j) + e];
    }
    ptx_bar_sync(1, NCW * 32u);
    const uint32_t nq = (rhi - rlo) / 4u, left = p->N - col0, ncols = left < 8u * J ? left : 8u * J;
    for (uint32_t i = threadIdx.x; i < ncols * nq; i += NCW * 32u) {
        const uint32_t c = i / nq, r = rlo + 4u * (i - c * nq);
        const float4 v = *(const float4 *)(st + c * rs + r);
        const size_t idx = (size_t)(col0 + c) * p->M + row0 + r;
        if (p->out_bf16) {
            __nv_bfloat162 *o = (__nv_bfloat162 *)((__nv_bfloat16 *)p->C + idx);
            o[0] = __floats2bfloat162_rn(v.x, v.y);
            o[1] = __floats2bfloat162_rn(v.z, v.w);
        } else {
            *(float4 *)((float *)p->C + idx) = v;
        }
    }
}

/* Reduce-scatter fix-up (opts.fix_rs) of a tile held in whole shares, every contributor's only segment
 * (seg_t.rs: e.g. two CTAs a tile after tile alignment).  The owner-wait fix-up moves the whole tile through
 * the owner after the others: they store their partials, then it reads them all and stores C.
 * Here the tile's nres regions of 16 rows (a partial's region wr is 32 J float4 at wr x 32 J: the
 * layout of put_wide and of the 64-column partials) are dealt in blocks: contributor ks keeps the
 * regions wr with wr ks_n / nres == ks and publishes the others; once all have published, each adds
 * the others' fragments of its kept regions (staged through its idle ring by one bulk copy a
 * contributor where they fit) and stores them: every CTA moves 1 / ks_n of the tile, at the same
 * time.  A warp holds MB regions wr0 + 4 m (its 4 J floats of each at d + 4 J m); bit m of `own`:
 * region m holds rows of the tile.  The counter goes through 2 ks_n wrapping increments (publish,
 * then pass) and is 0 again after.  Every consumer thread calls this; returns the regions this warp
 * keeps (bit m; then store them), and the CTA's kept rows [*rlo, *rhi) of the tile.  ts: the CTA's
 * stamps or NULL (the others have published: [8]; the adds done: [9]). */
static __device__ __forceinline__ uint32_t rs_fixup(float *d, const uint32_t J, const uint32_t MB, float *slots,
                                                    size_t pt, uint32_t ks, uint32_t ks_n, uint32_t wr0,
                                                    uint32_t nres, uint32_t own, uint32_t *ctr, uint32_t sA,
                                                    uint32_t ring_bytes, uint32_t bar_fix, bool may_stage,
                                                    unsigned long long *ts, uint32_t *rlo, uint32_t *rhi)
{
    const uint32_t rw = 32u * J; /* float4 per region */
    uint32_t keep = 0;
#pragma unroll
    for (uint32_t m = 0; m < MB; m++) {
        const uint32_t wr = wr0 + 4u * m;
        if (!(own >> m & 1u)) continue;
        if (wr * ks_n / nres == ks) {
            keep |= 1u << m;
            continue;
        }
        put_wide((float4 *)(slots + (size_t)ks * pt) + (size_t)wr * rw, d + 4u * J * m, J, 0u);
    }
    ptx_bar_sync(1, NCW * 32u);
    if (threadIdx.x == 0) ptx_red_release_gpu_inc_u32(ctr, 2u * ks_n - 1u);
    /* the regions [w0, w1) this CTA keeps: wr ks_n / nres == ks */
    const uint32_t w0 = (ks * nres + ks_n - 1u) / ks_n, w1 = ((ks + 1u) * nres + ks_n - 1u) / ks_n;
    const uint32_t nkeep = w1 - w0, rbytes = 16u * rw, total = (ks_n - 1u) * nkeep * rbytes;
    *rlo = 16u * w0, *rhi = 16u * w1; /* the rows kept: 16 a region */
    const bool staged = may_stage && total <= ring_bytes;
    if (threadIdx.x == 0) {
        while (ptx_ld_acquire_gpu_u32(ctr) < ks_n) {
        }
        if (staged && total) {
            ptx_fence_proxy_async_global(); /* the acquired partials, read next by the async proxy */
            ptx_mbar_arrive_expect_tx(bar_fix, total);
            /* one copy per other contributor: its fragments of the rows kept here are contiguous */
            for (uint32_t j = 0, i = 0; j < ks_n; j++)
                if (j != ks)
                    ptx_bulk_g2s(sA + (i++) * nkeep * rbytes,
                                 (const float4 *)(slots + (size_t)j * pt) + (size_t)w0 * rw, nkeep * rbytes, bar_fix);
        }
        ptx_red_relaxed_gpu_inc_u32(ctr, 2u * ks_n - 1u); /* passed: the last one's makes it 0 */
        if (ts) ts[8] = ptx_globaltimer();
    }
    ptx_bar_sync(1, NCW * 32u); /* the acquire, for the loads from L2 below */
    if (!keep) return 0u;
    if (staged) ptx_mbar_wait(bar_fix, 0u); /* its only use in a launch: a CTA has one last segment */
#pragma unroll
    for (uint32_t m = 0; m < MB; m++) {
        if (!(keep >> m & 1u)) continue;
        const uint32_t wr = wr0 + 4u * m;
        float *dm = d + 4u * J * m;
        for (uint32_t jo = 0, jj = 0; jo < ks_n; jo++) {
            if (jo == ks) continue;
            if (staged)
                add_wide_smem(dm, (const float4 *)ptx_smem_generic(sA + ((jj++) * nkeep + wr - w0) * rbytes), J, 0u);
            else
                add_wide(dm, (const float4 *)(slots + (size_t)jo * pt) + (size_t)wr * rw, J, 0u);
        }
    }
    if (ts && threadIdx.x == 0) ts[9] = ptx_globaltimer();
    return keep;
}

/* ---- the owner's partial adds through the idle ring (a CTA's last segment).  add_wide's loads go
 * 4 float4 at a time (the 128 accumulators of bn 256 leave no registers for more in flight): one
 * L2 round trip per 4 of them.  Here the partials come in by bulk copies, as many at once as the
 * ring holds, and are added from shared memory (H200, r = 0, one launch: 1.03-1.08x on 11008x4096 at
 * N = 128-512, where a tile has up to three contributors; equal on 7168^2).  C is staged too, but
 * stored by float4 from shared memory (store_staged): one bulk copy per column of C was slower
 * (+3.5 us at N = 128: 128-256 copies of 512 B a CTA). ---- */

/* Adds partials j0 .. j1 - 1 of the tile (pt floats each from `slots`) into this warp's regions (box m
 * at float4 hoff + m bstride, m < MB) of d, through the ring at sA: as many partials as the ring
 * holds (ring bytes) come in at once, one bulk copy each on one barrier (11008x4096, N = 64: two
 * 32 KiB partials in 1.44 us one after the other).  All consumer threads; the ring must be idle (after
 * the consumers' barrier); *fph is the fix-up barrier's phase; bit m of `own`: box m is the tile's. */
static __device__ __forceinline__ void add_wide_staged(float *d, const float *slots, size_t pt, uint32_t j0,
                                                       uint32_t j1, uint32_t sA, uint32_t ring, uint32_t bar_fix,
                                                       uint32_t *fph, size_t hoff, size_t bstride, const uint32_t J,
                                                       const uint32_t MB, uint32_t own, uint32_t q)
{
    const uint32_t bytes = (uint32_t)(pt * 4u), per = ring / bytes;
    for (uint32_t jb = j0; jb < j1; jb += per) {
        const uint32_t je = j1 - jb < per ? j1 : jb + per;
        if (threadIdx.x == 0) {
            ptx_fence_proxy_async_global(); /* the acquired partials, read next by the async proxy */
            ptx_mbar_arrive_expect_tx(bar_fix, (je - jb) * bytes);
            for (uint32_t j = jb; j < je; j++)
                ptx_bulk_g2s(sA + (j - jb) * bytes, slots + (size_t)j * pt, bytes, bar_fix);
        }
        ptx_mbar_wait(bar_fix, *fph);
        *fph ^= 1u;
        for (uint32_t j = jb; j < je; j++)
#pragma unroll
            for (uint32_t m = 0; m < MB; m++) {
                if (!(own >> m & 1u)) continue;
                add_wide_smem(d + 4u * J * m,
                              (const float4 *)ptx_smem_generic(sA + (j - jb) * bytes) + hoff + m * bstride, J, q);
            }
        ptx_bar_sync(1, NCW * 32u); /* the ring is read: free for the next partials or the staging */
    }
}

#endif
