/* Whole-K decode tiles (dak_gemm_opts.whole; plan: whole_plan in plan.c): the shape of work cuBLAS runs at decode
 * widths on the H200 (NOTES-dak-kernels.md, seventeenth session), with PDL.  Two kernels share the producers below:
 * k_whole (64- or 128-row tiles, A's rows as the wgmma's m) and k_whole_sw (any multiple of 8 rows, A's rows as the
 * wgmma's n; at the end of the file).
 *
 * One CTA a tile of 64 mh rows over the whole K: no split-K, no fix-up.  A ring of S stages, each kstep 64-column
 * blocks of A (mh boxes of kstep x 8 KiB, the packed layout's swizzled image, one bulk copy each) and the same
 * blocks' B rows ([block][n][64], 128-byte swizzle; one 3-D copy).  With a cluster (whole_cluster > 1) its CTAs
 * share B instead: member r fetches rows r whole_rows.. of every block of a stage and multicasts them into every
 * member's slot, so L2 serves B once per cluster.  Two producer warps: A's copies (warp NCW) need nothing from the
 * kernel before and its first pre_hbm go out at once (dak_gemm_plan.hbm_pre: the ring, or what opts.pdl_pre asks),
 * the rest within a window of stages in flight (hbm.window, opts.whole_window: a copy waits for the stage `window`
 * before it to land); B's (warp NCW + 1) wait for it (griddepcontrol.wait under PDL).  A stage's full barrier takes
 * both producers' arrivals and the bytes of A and of every member's B slice; its empty barrier the releases of every
 * member's consumers (a slot is written by every member's B producer).  Consumers: with 128-row tiles warpgroup h
 * computes rows 64 h.. of every stage; with 64-row tiles the two warpgroups take alternate stages and sum at the end.
 * wgmma m64n<8 wn>k16, wn = N / 8 rounded up, a constant in each of eight inlined copies of the loop.  C is staged
 * [column][row] through the idle ring (64-row tiles: each warpgroup's sums apart) and stored by float4 rows; no
 * cluster barrier at the end (see k_whole's end). */
#include <cuda_bf16.h>

#include "common/ptx.cuh"
#include "dak/gemm.h"
#include "dak/tile_layout.h"
#include "gemm_kernel.cuh"
#include "gemm_tile.cuh"

#define WH_CONSUMERS (NCW * 32u) /* two warpgroups */

/* Block bk of a stage (64 columns of K): 4 wgmma k16 into d, the operands' block bk at a + bk a_bk and b + bk b_bk
 * (shared addresses; k16 steps 32 bytes into the 128-byte swizzled rows, as dak_wg_a_off / dak_wg_b_off).  k_whole:
 * a the stage's A box (a_bk DAK_A_BLOCK), b its B rows (rk rows a block); k_whole_sw the other way round. */
static __device__ __forceinline__ void block_mma(float *d, uint32_t a, uint32_t a_bk, uint32_t b, uint32_t b_bk,
                                                 uint32_t bk, const uint32_t wn)
{
#pragma unroll
    for (uint32_t k16 = 0; k16 < 4u; k16++)
        ptx_wgmma_m64n8xk16_bf16(d, ptx_wgmma_desc_sw128(a + bk * a_bk + k16 * 32u, DAK_WG_SBO),
                                 ptx_wgmma_desc_sw128(b + bk * b_bk + k16 * 32u, DAK_WG_SBO), wn);
}

/* A consumer's wait for stage slot s (phase ph) to be full; thread 0 (ts set) stamps the first and last. */
static __device__ __forceinline__ void stage_wait(uint32_t bar_full_s, uint32_t ph, unsigned long long *ts)
{
    ptx_mbar_wait(bar_full_s, ph);
    if (ts) {
        const unsigned long long t = ptx_globaltimer();
        if (!ts[3]) ts[3] = t;
        ts[4] = t;
    }
}

/* Warpgroup h's stages of the tile: every stage's box h (mh 2), or the stages h, h + 2, .. (mh 1).  Leaves the sums in
 * d (wgmma layout, gemm_layout.h), every wgmma group complete. */
static __device__ __forceinline__ void whole_consume(float *d, uint32_t KC, uint32_t kstep, uint32_t S, uint32_t mh,
                                                     uint32_t c, uint32_t rk, uint32_t ring, uint32_t stage,
                                                     uint32_t bar_full, uint32_t bar_empty, uint32_t h,
                                                     unsigned long long *ts, const uint32_t wn)
{
    const uint32_t lane = threadIdx.x & 31u, step = mh == 1u ? 2u : 1u, box = mh == 1u ? 0u : h;
    uint32_t s = mh == 1u ? h : 0u, ph = 0u, prev = 0xffffffffu;
    for (uint32_t kc = s; kc < KC; kc += step) {
        stage_wait(bar_full + 8u * s, ph, ts);
        const uint32_t a = ring + s * stage + box * kstep * DAK_A_BLOCK,
                       b = ring + s * stage + mh * kstep * DAK_A_BLOCK;
        /* the auto stage (2 blocks) without a loop, which would make ptxas inject warpgroup.arrive (C7519: 0.6-1.0 %
         * at N 32-64, thirty-third session); the fence in each branch, the form measured */
        if (kstep == 2u) {
            ptx_wgmma_fence();
            block_mma(d, a, DAK_A_BLOCK, b, rk * 128u, 0u, wn);
            block_mma(d, a, DAK_A_BLOCK, b, rk * 128u, 1u, wn);
        } else {
            ptx_wgmma_fence();
#pragma unroll 1
            for (uint32_t bk = 0; bk < kstep; bk++) block_mma(d, a, DAK_A_BLOCK, b, rk * 128u, bk, wn);
        }
        ptx_wgmma_commit();
        ptx_wgmma_wait1(); /* the stage before is read: hand it back to every member's producers */
        /* ... unless no producer refills it (the last S stages): then no member's consumers arrive on this CTA's
         * barriers after its producers' last wait, so it may leave before the others (k_whole's end) */
        if (prev != 0xffffffffu && kc - step + S < KC) slot_release(bar_empty + 8u * prev, c, lane);
        prev = s;
        s += step;
        if (s >= S) s -= S, ph ^= 1u;
    }
    ptx_wgmma_wait0();
    ptx_wgmma_fence_acc(d, 32);
}

/* Warpgroup h's sums into the staging tile T[column][row] (rs floats a column): rows 64 box + 16 q + .. of the
 * wgmma layout, the n8 groups j < wn (8 wn columns, those past N too). */
static __device__ __forceinline__ void whole_stage(float *T, const float *d, uint32_t rs, uint32_t box, uint32_t wn)
{
    const uint32_t lane = threadIdx.x & 31u, q = (threadIdx.x >> 5) & 3u, g = lane >> 2, t4 = lane & 3u;
    const uint32_t r0 = 64u * box + 16u * q + g;
#pragma unroll
    for (uint32_t j = 0; j < 8u; j++) {
        if (j >= wn) continue;
#pragma unroll
        for (uint32_t e = 0; e < 4u; e++) {
            T[(8u * j + 2u * t4 + (e & 1u)) * rs + r0 + (e >> 1) * 8u] = d[4u * j + e];
        }
    }
}

/* Both kernels' start: thread 0 stamps the entry and the SM (diag_times: dak_gemm_times' words; those of the split-K
 * epilogue and the host tier stay 0) and makes the S stages' full barriers (2 arrivals: A's producer and B's) and empty
 * ones (`empty` consumer warps' releases); the CTA, or its cluster of c, syncs on them before any copy or arrive can
 * reach them; then, under PDL, the next kernel may be scheduled (its CTAs take the SMs left idle and load their A
 * there).  Returns the CTA's stamps, or NULL. */
static __device__ __forceinline__ unsigned long long *whole_start(const kparams &p, uint32_t S, uint32_t bar_full,
                                                                  uint32_t bar_empty, uint32_t empty, uint32_t c)
{
    unsigned long long *ts = p.times ? p.times + (size_t)blockIdx.x * DAK_GEMM_NTIMES : NULL;
    if (ts && threadIdx.x == 0)
        ts[0] = ptx_globaltimer(), ts[1] = ts[2] = ts[3] = ts[8] = ts[9] = ts[11] = ts[12] = 0, ts[6] = ptx_smid();
    if (threadIdx.x == 0) {
        for (uint32_t s = 0; s < S; s++) {
            ptx_mbar_init(bar_full + 8u * s, 2u);
            ptx_mbar_init(bar_empty + 8u * s, empty);
        }
        ptx_fence_mbar_init();
    }
    dak_group_sync(c);
    if (p.pdl) ptx_griddep_launch_dependents();
    return ts;
}

/* One bulk copy of A into the ring, with the evict-first policy where l2_hints asks (pol != 0). */
static __device__ __forceinline__ void whole_copy(uint32_t dst, const uint16_t *src, uint32_t bytes, uint32_t bar,
                                                  uint64_t pol)
{
    if (pol)
        ptx_bulk_g2s_hint(dst, src, bytes, bar, pol);
    else
        ptx_bulk_g2s(dst, src, bytes, bar);
}

/* A's producer (one thread): the stages' copies of A into slot s at ring + s stage, from the packed layout.  k_whole
 * (R 0): the nbox 64-row boxes from box mt on, each box's kstep blocks one contiguous bulk copy; k_whole_sw (R rows a
 * CTA): rows mt.. (R of them, fewer in the last CTA) of each block, one copy for each 64-row box they cross, or for
 * R 64 on whole boxes the box's kstep blocks in one copy (8 KiB copies streamed ~10 % slower, thirty-fourth session),
 * or with A in groups of R rows (p.a_groups) the stage in one copy (thirty-sixth). */
static __device__ __forceinline__ void whole_produce_a(const kparams &p, uint32_t ring, uint32_t stage, uint32_t S,
                                                       uint32_t KC, uint32_t kstep, uint32_t bar_full,
                                                       uint32_t bar_empty, uint32_t mt, uint32_t nbox, uint32_t R,
                                                       unsigned long long *ts)
{
    if (ts) ts[10] = ptx_globaltimer();
    const uint64_t pol = p.l2_hints ? ptx_l2_evict_first() : 0ull;
    const uint16_t *A = p.a_ptr[1];
    const uint32_t KB = p.kblocks, abox = kstep * DAK_A_BLOCK, nrows = R && p.M - mt < R ? p.M - mt : R;
    const uint32_t bytes = R ? kstep * nrows * 128u : nbox * abox;
    const uint32_t W = p.window[1], pre = p.pre_hbm; /* pre_hbm is 0 without PDL (whole_plan) */
    const uint16_t *ga = p.a_groups ? A + dak_group_brow_off(mt, 0u, p.K, p.M, R) * 8u : A; /* (mt: a group's first) */
    /* slot and phase of this stage (s, ph) and of the stage W before it (sw, phw), as running counters */
    for (uint32_t kc = 0, s = 0, ph = 0, sw = 0, phw = 0; kc < KC; kc++) {
        if (p.pdl && kc == pre) ptx_griddep_wait(); /* pdl_pre: A's copies before the wait */
        if (kc >= S) ptx_mbar_wait(bar_empty + 8u * s, ph ^ 1u);
        /* the window (whole_window): after the wait, at most W stages in flight, so that the SMs' HBM shares even
         * out where nothing follows to fill the early ones' time (an engine's step) */
        if (W < S && kc >= W) {
            if (kc >= pre) ptx_mbar_wait(bar_full + 8u * sw, phw);
            if (++sw == S) sw = 0, phw ^= 1u;
        }
        const uint32_t bar = bar_full + 8u * s, dst = ring + s * stage;
        ptx_mbar_arrive_expect_tx(bar, bytes);
        if (!R) {
            for (uint32_t m = 0; m < nbox; m++) /* box m's kstep blocks are contiguous */
                whole_copy(dst + m * abox, A + ((size_t)(mt + m) * KB + kc * kstep) * (DAK_A_BLOCK / 2u), abox, bar,
                           pol);
        } else if (R == 64u && mt % 64u == 0 && nrows == 64u) { /* one whole box: its kstep blocks are contiguous */
            whole_copy(dst, A + ((size_t)(mt / 64u) * KB + kc * kstep) * (DAK_A_BLOCK / 2u), bytes, bar, pol);
        } else if (p.a_groups) { /* A in groups of R rows: this CTA's group holds the stage's kstep blocks in a row */
            const uint16_t *g = ga + (size_t)kc * kstep * nrows * 64u; /* (the group's blocks nrows rows apart) */
            if (nrows == R)
                whole_copy(dst, g, bytes, bar, pol);
            else /* (the last, shorter group: its blocks nrows rows apart, the stage's R rows apart) */
                for (uint32_t bk = 0; bk < kstep; bk++)
                    whole_copy(dst + bk * R * 128u, g + (size_t)bk * nrows * 64u, nrows * 128u, bar, pol);
        } else {
            for (uint32_t bk = 0; bk < kstep; bk++)
                for (uint32_t r = 0; r < nrows;) { /* (mt + r) % 64 == r % 8: the swizzle's row groups line up */
                    const uint32_t row = mt + r, rr = row % 64u, len = 64u - rr < nrows - r ? 64u - rr : nrows - r;
                    const size_t el = ((size_t)(row / 64u) * KB + kc * kstep + bk) * (DAK_A_BLOCK / 2u) + rr * 64u;
                    whole_copy(dst + (bk * R + r) * 128u, A + el, len * 128u, bar, pol);
                    r += len;
                }
        }
        if (++s == S) s = 0, ph ^= 1u;
    }
}

/* B's producer (one thread): every stage's B rows at boff in the stage, after the PDL wait.  Without a cluster one
 * 3-D copy ([block][n][64], tb: {64, N, K/64} in boxes of {64, rk, kstep}); with one this member's slice of each
 * block (tbw: {K, N} in boxes of {64, whole_rows}), multicast to every member. */
static __device__ __forceinline__ void whole_produce_b(const kparams &p, const CUtensorMap *tb, const CUtensorMap *tbw,
                                                       uint32_t ring, uint32_t stage, uint32_t boff, uint32_t S,
                                                       uint32_t KC, uint32_t kstep, uint32_t bar_full,
                                                       uint32_t bar_empty, uint32_t rank, unsigned long long *ts)
{
    if (p.pdl) ptx_griddep_wait(); /* B is the kernel before's output */
    if (ts && p.pdl) ts[2] = ptx_globaltimer();
    const uint32_t c = p.c, rk = p.bn_box[1], rows = p.whole_rows, bbytes = kstep * rk * 128u;
    const uint16_t mask = (uint16_t)((1u << c) - 1u);
    const bool loads = rank < p.whole_loaders;
    for (uint32_t kc = 0, s = 0, ph = 0; kc < KC; kc++) {
        if (kc >= S) ptx_mbar_wait(bar_empty + 8u * s, ph ^ 1u);
        ptx_mbar_arrive_expect_tx(bar_full + 8u * s, bbytes); /* every member's slice lands here */
        const uint32_t dst = ring + s * stage + boff;
        if (c == 1u)
            ptx_tma_3d_g2s(dst, tb, 0, 0, (int)(kc * kstep), bar_full + 8u * s);
        else if (loads)
            for (uint32_t bk = 0; bk < kstep; bk++)
                ptx_tma_2d_g2s_multicast(dst + (bk * rk + rank * rows) * 128u, tbw, (int)((kc * kstep + bk) * 64u),
                                         (int)(rank * rows), bar_full + 8u * s, mask);
        if (ts && kc == 0) ts[1] = ptx_globaltimer();
        if (++s == S) s = 0, ph ^= 1u;
    }
}

K_SPLIT_SIG(k_whole)
{
    (void)ta_h, (void)ta_g;
    extern __shared__ uint8_t smem_raw[];
    uint8_t *sm = (uint8_t *)(((uintptr_t)smem_raw + 1023u) & ~(uintptr_t)1023u);
    const uint32_t S = p.stages[1], mh = p.mh[1], KB = p.kblocks, c = p.c, N = p.N, kstep = p.kstep, KC = KB / kstep;
    const uint32_t rk = p.bn_box[1], bbytes = kstep * rk * 128u, abox = kstep * DAK_A_BLOCK;
    const uint32_t stage = mh * abox + bbytes;
    const uint32_t ring = ptx_smem(sm), bar_full = ring + S * stage, bar_empty = bar_full + 8u * S;
    /* the warp index through a shuffle: visibly warp-uniform, so that the wgmma are not on a "divergent" path
     * (ptxas C7518) */
    const uint32_t warp = __shfl_sync(0xffffffffu, threadIdx.x >> 5, 0), lane = threadIdx.x & 31u;
    const uint32_t rank = c > 1u ? __shfl_sync(0xffffffffu, ptx_cluster_rank(), 0) : 0u;
    const uint32_t mt = blockIdx.x * mh, nbox = p.mt64[1] - mt < mh ? p.mt64[1] - mt : mh;
    /* a slot's releases: the consumer warps that read it (one warpgroup, or both with 128-row tiles) of each member */
    unsigned long long *ts = whole_start(p, S, bar_full, bar_empty, c * (mh == 1u ? 4u : 8u), c);

    if (warp == NCW) {
        if (lane == 0) whole_produce_a(p, ring, stage, S, KC, kstep, bar_full, bar_empty, mt, nbox, 0u, ts);
    } else if (warp == NCW + 1u) {
        if (lane == 0)
            whole_produce_b(p, &tb, &tbw, ring, stage, mh * abox, S, KC, kstep, bar_full, bar_empty, rank, ts);
    } else {
        const uint32_t h = warp >> 2;
        float d[32];
#pragma unroll
        for (uint32_t i = 0; i < 32u; i++) d[i] = 0.0f;
        const uint32_t wn = (N + 7u) / 8u;
        unsigned long long *tc = threadIdx.x == 0 ? ts : NULL;
        /* one inlined loop per wgmma shape (a run-time shape inside it: ptxas C7519) */
        switch (wn) {
        case 1: whole_consume(d, KC, kstep, S, mh, c, rk, ring, stage, bar_full, bar_empty, h, tc, 1u); break;
        case 2: whole_consume(d, KC, kstep, S, mh, c, rk, ring, stage, bar_full, bar_empty, h, tc, 2u); break;
        case 3: whole_consume(d, KC, kstep, S, mh, c, rk, ring, stage, bar_full, bar_empty, h, tc, 3u); break;
        case 4: whole_consume(d, KC, kstep, S, mh, c, rk, ring, stage, bar_full, bar_empty, h, tc, 4u); break;
        case 5: whole_consume(d, KC, kstep, S, mh, c, rk, ring, stage, bar_full, bar_empty, h, tc, 5u); break;
        case 6: whole_consume(d, KC, kstep, S, mh, c, rk, ring, stage, bar_full, bar_empty, h, tc, 6u); break;
        case 7: whole_consume(d, KC, kstep, S, mh, c, rk, ring, stage, bar_full, bar_empty, h, tc, 7u); break;
        default: whole_consume(d, KC, kstep, S, mh, c, rk, ring, stage, bar_full, bar_empty, h, tc, 8u); break;
        }
        /* C through the idle ring: every stage of every member has landed here and been read (each member's B
         * producer fills a stage only after all members released it, and there are KC of them) */
        const uint32_t rs = 64u * mh + 4u; /* 4 rs = 16 banks mod 32: the fragment stores are conflict-free */
        float *T = (float *)ptx_smem_generic(ring);
        if (tc) tc[7] = ptx_globaltimer();
        /* 64-row tiles: each warpgroup stages its own sums (warpgroup 1's past the 8 wn columns warpgroup 0 writes) and
         * the store loop adds them: one barrier and one read-modify-write pass fewer than adding in place (0.1-0.3 us at
         * N 16-64 on 7168^2, thirty-fifth session; the ring holds both: 3 stages of 8 KiB and B at the least) */
        float *const T1 = T + 8u * wn * rs;
        ptx_bar_sync(1, WH_CONSUMERS); /* the last wgmma of both warpgroups have read the ring */
        whole_stage(mh == 2u || h == 0u ? T : T1, d, rs, mh == 2u ? h : 0u, wn);
        ptx_bar_sync(1, WH_CONSUMERS);
        const uint32_t nq = 16u * nbox, row0 = 64u * mt; /* float4 a column */
        for (uint32_t i = threadIdx.x; i < N * nq; i += WH_CONSUMERS) {
            const uint32_t col = i / nq, r = 4u * (i - col * nq);
            float4 v = *(const float4 *)(T + col * rs + r);
            if (mh == 1u) {
                const float4 u = *(const float4 *)(T1 + col * rs + r);
                v.x += u.x, v.y += u.y, v.z += u.z, v.w += u.w;
            }
            const size_t idx = (size_t)col * p.M + row0 + r;
            if (p.out_bf16) {
                __nv_bfloat162 *o = (__nv_bfloat162 *)((__nv_bfloat16 *)p.C + idx);
                o[0] = __floats2bfloat162_rn(v.x, v.y);
                o[1] = __floats2bfloat162_rn(v.z, v.w);
            } else {
                *(float4 *)((float *)p.C + idx) = v;
            }
        }
    }
    /* No cluster barrier at the end: the members' consumers arrive on a member's empty barriers only for the stages
     * its producers refill (whole_consume), so all those arrivals have landed before its producers' last wait, and
     * every B slice multicast into it has landed before its consumers' last stage.  So a member leaves when its own
     * work is done, and its SM takes the next kernel's CTA at once (with the barrier: 7168^2 at N 41-64 0.1-0.4 us a
     * GEMM slower as PDL graphs, thirty-fifth session) */
    if (ts && threadIdx.x == 0) ts[5] = ptx_globaltimer();
}

/* k_whole_sw's consumers: warpgroup stages s0, s0 + step, .. as wgmma m64 n(8 wn) k16, B's columns the operand a (the
 * stage's [block][n][64] rows; the wgmma reads 64 of them, and those past N hold whatever the ring holds there: they
 * reach only the rows of d past N, which nobody stores) and A's rows col0.. of the stage the operand b.  The stage's
 * blocks written out for kstep 1, 2 and 4 (a loop over a run-time count makes ptxas inject warpgroup.arrive). */
static __device__ __forceinline__ void swap_consume(float *d, uint32_t KC, uint32_t kstep, uint32_t S, uint32_t s0,
                                                    uint32_t step, uint32_t R, uint32_t col0, uint32_t rk,
                                                    uint32_t ring, uint32_t stage, uint32_t bar_full,
                                                    uint32_t bar_empty, unsigned long long *ts, const uint32_t wn)
{
    const uint32_t lane = threadIdx.x & 31u;
    uint32_t s = s0, ph = 0u, prev = 0xffffffffu;
    for (uint32_t kc = s0; kc < KC; kc += step) {
        stage_wait(bar_full + 8u * s, ph, ts);
        /* operand a: the stage's B rows (rk a block); operand b: A's rows col0.. (R a block) */
        const uint32_t b = ring + s * stage + kstep * R * 128u, a = ring + s * stage + col0 * 128u, rb = rk * 128u;
        if (kstep == 1u) { /* (fence and commit in each branch: a shared commit after them made ptxas inject one) */
            ptx_wgmma_fence();
            block_mma(d, b, rb, a, R * 128u, 0u, wn);
            ptx_wgmma_commit();
        } else if (kstep == 2u) {
            ptx_wgmma_fence();
            block_mma(d, b, rb, a, R * 128u, 0u, wn);
            block_mma(d, b, rb, a, R * 128u, 1u, wn);
            ptx_wgmma_commit();
        } else {
            ptx_wgmma_fence();
            block_mma(d, b, rb, a, R * 128u, 0u, wn);
            block_mma(d, b, rb, a, R * 128u, 1u, wn);
            block_mma(d, b, rb, a, R * 128u, 2u, wn);
            block_mma(d, b, rb, a, R * 128u, 3u, wn);
            ptx_wgmma_commit();
        }
        ptx_wgmma_wait1(); /* the stage before is read: hand it back to the producers */
        if (prev != 0xffffffffu) slot_release(bar_empty + 8u * prev, 1u, lane);
        prev = s;
        s += step;
        while (s >= S) s -= S, ph ^= 1u;
    }
    ptx_wgmma_wait0();
    ptx_wgmma_fence_acc(d, 4 * (int)wn);
    if (prev != 0xffffffffu) slot_release(bar_empty + 8u * prev, 1u, lane);
}

/* Whole-K tiles with A's rows as the wgmma's n (dak_gemm_opts.whole_swap; plan: swap_plan in plan.c): a CTA takes R
 * = sw_rows rows (a multiple of 8: the tiles of a shape come within 8 rows of M / SMs, e.g. 22016 x 4096 on 132 CTAs
 * of 168 rows where its 64-row tiles are 2.6 an SM), B's N columns (padded to the wgmma's m 64) the other operand.
 * Auto only where R > 128: with fewer rows a CTA's share of the packed 64-row boxes comes as small pieces and
 * streams 10-50 % slower than k_whole or the split (thirty-fourth session). A stage: kstep blocks of A's R rows
 * ([block][R][64], 128-byte swizzle, copied from the packed layout box by box), then the same blocks' B rows as in
 * k_whole; the plan leaves 8 KiB past the ring for the wgmma's reads of 64 B rows from the last stage. R <= 128: the
 * two warpgroups take alternate stages at n = R and sum at the end; R > 128: each takes every stage and half the
 * rows (n <= 128). No cluster. */
K_SPLIT_SIG(k_whole_sw)
{
    (void)ta_h, (void)ta_g;
    extern __shared__ uint8_t smem_raw[];
    uint8_t *sm = (uint8_t *)(((uintptr_t)smem_raw + 1023u) & ~(uintptr_t)1023u);
    const uint32_t S = p.stages[1], kstep = p.kstep, KC = p.kblocks / kstep, R = p.sw_rows, rk = p.bn_box[1];
    const uint32_t N = p.N, M = p.M, stage = kstep * (R + rk) * 128u;
    const uint32_t ring = ptx_smem(sm), bar_full = ring + S * stage, bar_empty = bar_full + 8u * S;
    const uint32_t warp = __shfl_sync(0xffffffffu, threadIdx.x >> 5, 0), lane = threadIdx.x & 31u; /* (C7518) */
    const uint32_t row0 = blockIdx.x * R, nrows = M - row0 < R ? M - row0 : R;
    const bool halves = R > 128u;
    unsigned long long *ts = whole_start(p, S, bar_full, bar_empty, halves ? 8u : 4u, 1u); /* (no cluster) */

    if (warp == NCW) {
        if (lane == 0) whole_produce_a(p, ring, stage, S, KC, kstep, bar_full, bar_empty, row0, 0u, R, ts);
    } else if (warp == NCW + 1u) {
        if (lane == 0)
            whole_produce_b(p, &tb, &tbw, ring, stage, kstep * R * 128u, S, KC, kstep, bar_full, bar_empty, 0u, ts);
    } else {
        const uint32_t h = warp >> 2, n0 = halves ? (R / 8u + 1u) / 2u * 8u : R; /* (halves: the first the larger) */
        const uint32_t col0 = halves && h ? n0 : 0u, ncols = halves ? (h ? R - n0 : n0) : R;
        const uint32_t s0 = halves ? 0u : h, step = halves ? 1u : 2u;
        float d[64];
#pragma unroll
        for (uint32_t i = 0; i < 64u; i++) d[i] = 0.0f;
        unsigned long long *tc = threadIdx.x == 0 ? ts : NULL;
#define SWAP_CONSUME(w) swap_consume(d, KC, kstep, S, s0, step, R, col0, rk, ring, stage, bar_full, bar_empty, tc, w)
        switch (ncols / 8u) { /* one inlined loop per wgmma width (ptxas C7519) */
        case 1: SWAP_CONSUME(1u); break;
        case 2: SWAP_CONSUME(2u); break;
        case 3: SWAP_CONSUME(3u); break;
        case 4: SWAP_CONSUME(4u); break;
        case 5: SWAP_CONSUME(5u); break;
        case 6: SWAP_CONSUME(6u); break;
        case 7: SWAP_CONSUME(7u); break;
        case 8: SWAP_CONSUME(8u); break;
        case 9: SWAP_CONSUME(9u); break;
        case 10: SWAP_CONSUME(10u); break;
        case 11: SWAP_CONSUME(11u); break;
        case 12: SWAP_CONSUME(12u); break;
        case 13: SWAP_CONSUME(13u); break;
        case 14: SWAP_CONSUME(14u); break;
        case 15: SWAP_CONSUME(15u); break;
        default: SWAP_CONSUME(16u); break;
        }
#undef SWAP_CONSUME
        if (tc) tc[7] = ptx_globaltimer();
        /* d's rows are B's columns m = 16 q + g (+ 8), its columns A's rows col0 + 8 j + 2 t (+ 1) (gemm_layout.h) */
        const uint32_t q = warp & 3u, g = lane >> 2, t4 = lane & 3u, wn = ncols / 8u, rs = R + 8u;
        float *T = (float *)ptx_smem_generic(ring); /* R <= 128: warpgroup 1's sums, [m][row], through the idle ring */
        if (!halves) {
            ptx_bar_sync(1, WH_CONSUMERS); /* the last wgmma of both warpgroups have read the ring */
            if (h == 1u)
#pragma unroll
                for (uint32_t j = 0; j < 16u; j++) /* (constant indices into d: no local memory) */
#pragma unroll
                    for (uint32_t e = 0; e < 2u; e++) {
                        const uint32_t m = 16u * q + g + 8u * e;
                        if (j < wn && m < N)
                            *(float2 *)(T + m * rs + 8u * j + 2u * t4) =
                                make_float2(d[4u * j + 2u * e], d[4u * j + 2u * e + 1u]);
                    }
            ptx_bar_sync(1, WH_CONSUMERS);
        }
        if (halves || h == 0u)
#pragma unroll
            for (uint32_t j = 0; j < 16u; j++)
#pragma unroll
                for (uint32_t e = 0; e < 2u; e++) {
                    const uint32_t m = 16u * q + g + 8u * e, r = col0 + 8u * j + 2u * t4;
                    if (j >= wn || m >= N || r >= nrows) continue;
                    float2 v = make_float2(d[4u * j + 2u * e], d[4u * j + 2u * e + 1u]);
                    if (!halves) {
                        const float2 o = *(const float2 *)(T + m * rs + r);
                        v.x += o.x, v.y += o.y;
                    }
                    const size_t idx = (size_t)m * M + row0 + r;
                    if (p.out_bf16)
                        *(__nv_bfloat162 *)((__nv_bfloat16 *)p.C + idx) = __floats2bfloat162_rn(v.x, v.y);
                    else
                        *(float2 *)((float *)p.C + idx) = v;
                }
    }
    __syncwarp();
    if (ts && threadIdx.x == 0) ts[5] = ptx_globaltimer();
}
