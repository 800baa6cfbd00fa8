/* Direct-access split GEMM (seed 003, Sec. 4.1, 4.3): persistent, warp-specialised,
 * TMA from host memory or HBM into a ring of shared-memory slots, mma.sync bf16.
 * See include/dak/gemm.h for the data layout and the scheduling.  The kernels; their epilogue
 * (C stores, partials, fix-ups) is gemm_epilogue.cuh, their host side (context, tensor maps,
 * parameters, launch) gemm_launch.cu. */
#include <cuda_bf16.h>

#include "common/ptx.cuh"
#include "dak/gemm.h"
#include "gemm_epilogue.cuh"
#include "gemm_kernel.cuh"
#include "gemm_tile.cuh"

#define DYN_END 0xffffffffu    /* ring-slot / fix-up-queue tag: no more units */
#define DYN_Q 4u               /* fix-up queue depth */

/* One run of consecutive K chunks of one output tile that a CTA computes. */
typedef struct {
    uint32_t mt, ng, kb, ke; /* tile row, column group, chunk range [kb, ke) */
    uint32_t slot, ncontrib; /* this CTA's partial slot, CTAs contributing to the tile */
    bool last;               /* the CTA's last segment: its ring is idle after the slot loop */
    bool rs;                 /* shared tile held in whole shares (dak_rng_whole_shares): reduce-scatter fix-up */
} seg_t;

/* Position in a CTA's work: chunks (even) or items (round-robin) [x, end).  32-bit: a tier's items
 * are a uint32_t in the plan; 32-bit positions keep the division out of the 64-bit routine and two
 * registers free across the consumers' slot loops (the 256-column kernel's 128 accumulators). */
typedef struct {
    uint32_t x, end;
} seg_iter;

static __device__ __forceinline__ void seg_begin(const kparams *p, uint32_t tier, uint32_t cid, uint32_t ncl,
                                                 seg_iter *it)
{
    if (p->even[tier]) {
        const uint32_t T = p->items[tier];
        it->x = dak_rng_start(cid, T, ncl);
        it->end = dak_rng_start(cid + 1u, T, ncl);
    } else {
        it->x = cid;
        it->end = p->items[tier];
    }
}

static __device__ __forceinline__ bool seg_next(const kparams *p, uint32_t tier, uint32_t cid, uint32_t ncl,
                                                seg_iter *it, seg_t *g)
{
    if (it->x >= it->end) return false;
    const uint32_t kcn = p->kchunks;
    if (p->even[tier]) {
        const uint32_t T = p->items[tier];
        const uint32_t u = it->x / kcn, t0 = u * kcn, t1 = t0 + kcn; /* t1 <= T: whole tiles */
        const uint32_t se = it->end < t1 ? it->end : t1;
        g->mt = u / p->ngroups[tier];
        g->ng = u % p->ngroups[tier];
        g->kb = it->x - t0;
        g->ke = se - t0;
        uint32_t first = dak_rng_owner(t0, T, ncl), last = dak_rng_owner(t1 - 1u, T, ncl);
        g->slot = cid - first;
        g->ncontrib = last - first + 1u;
        it->x = se;
        g->last = se >= it->end;
        /* the tile is split in whole shares: the first contributor's range starts with it and the
         * last one's ends with it, so it is every contributor's only segment and they end together
         * (where a range also holds the end of the tile before, the one who ends last would wait for
         * the others and then move its share of C: slower than the owner-wait fix-up, measured on
         * 11008 x 4096 at N = 128 / 256).  The plan's count of such tiles is rs_tiles (plan.c) */
        g->rs = dak_rng_whole_shares(t0, t1, T, ncl);
    } else {
        uint32_t i = it->x, ks_n = p->ksplit[tier];
        uint32_t ks = i % ks_n, t = i / ks_n;
        g->ng = t % p->ngroups[tier];
        g->mt = t / p->ngroups[tier];
        g->kb = ks * kcn / ks_n;
        g->ke = (ks + 1u) * kcn / ks_n;
        g->slot = ks;
        g->ncontrib = ks_n;
        it->x = it->end - i > ncl ? i + ncl : it->end; /* no wrap past 2^32 */
        g->last = it->x >= it->end;
        g->rs = false;
    }
    return true;
}

/* diag_times: a ring slot found full (first one: ts[3], last one so far: ts[4]); straight to the
 * stamp buffer, so that no stamp is held in registers across the consumer loops. */
static __device__ __forceinline__ void stamp_slot(unsigned long long *ts)
{
    const unsigned long long t = ptx_globaltimer();
    if (!ts[3]) ts[3] = t;
    ts[4] = t;
}

/* 64-row boxes of A that tile row mt of `tier` holds: mh (2 for 128-row tiles), but 1 for the
 * last 128-row tile when the tier has an odd number of 64-row tile rows (its second warpgroup
 * idles).  Uniform over the CTA. */
static __device__ __forceinline__ uint32_t tile_boxes(const kparams *p, uint32_t tier, uint32_t mt)
{
    const uint32_t left = p->mt64[tier] - mt * p->mh[tier];
    return left < p->mh[tier] ? left : p->mh[tier];
}

/* The A copies of one ring slot: nbox boxes of 64 rows (64-row tile rows mt64, mt64 + 1, ...;
 * box b at dst0 + b x kstep x 8 KiB) of a tier whose tiles have mh boxes.  In the packed layout a
 * box's kstep blocks are contiguous (one bulk copy, a 1/c share per cluster member; the next tile
 * row's starts K/64 blocks later), and a whole tile's boxes go in one 4-D copy where the map allows
 * (kparams.a_slot_map); else kstep 2-D tensor copies per box. */
/* A member's share of one box of A, worked out once before the producer's loop: a division by the
 * cluster size c inside issue_a cost the one producer thread ~15 instructions a box (I2F, MUFU.RCP
 * and the correction steps in its SASS, eighteenth session). */
typedef struct {
    uint32_t pbytes; /* bytes of one box a member issues: A_BYTES kstep / c */
    uint32_t prow;   /* rows of a 2-D box a member issues: 64 / c */
    uint32_t pblk;   /* bytes of one 64 x 64 block a member issues: A_BYTES / c */
    uint16_t mask;   /* the cluster's members */
} a_share;

static __device__ __forceinline__ void issue_a(const kparams *p, const CUtensorMap *ta, uint32_t dst0,
                                               const uint16_t *src, uint32_t fb, uint32_t kc, uint32_t mt64,
                                               uint32_t nbox, uint32_t mh, uint32_t rank, const a_share *sh,
                                               uint64_t pol)
{
    const uint32_t c = p->c, kstep = p->kstep;
    if (p->a_slot_map && nbox == mh && mh > 1u) {
        /* the slot's mh boxes in one 4-D copy of the packed layout ({64, 64 rows, K/64 blocks, tile rows}, no
         * swizzle: the image is the bulk copies'): ptxas made each bulk copy ~45 instructions of the one
         * producer thread, which bound the ring at N >= 128 (ncu, tenth session) */
        if (pol)
            ptx_tma_4d_g2s_hint(dst0, ta, 0, 0, (int)(kc * kstep), (int)mt64, fb, pol);
        else
            ptx_tma_4d_g2s(dst0, ta, 0, 0, (int)(kc * kstep), (int)mt64, fb);
        return;
    }
    for (uint32_t b = 0; b < nbox; b++, mt64++, dst0 += A_BYTES * kstep, src += (size_t)p->kblocks * 4096u) {
        if (p->a_bulk) {
            const uint32_t pbytes = sh->pbytes;
            uint32_t dst = dst0 + rank * pbytes;
            if (c > 1 && pol)
                ptx_bulk_g2s_multicast_hint(dst, src, pbytes, fb, sh->mask, pol);
            else if (c > 1)
                ptx_bulk_g2s_multicast(dst, src, pbytes, fb, sh->mask);
            else if (pol)
                ptx_bulk_g2s_hint(dst, src, pbytes, fb, pol);
            else
                ptx_bulk_g2s(dst, src, pbytes, fb);
        } else {
            for (uint32_t j = 0; j < kstep; j++) {
                uint32_t dst = dst0 + j * A_BYTES + rank * sh->pblk;
                int c0 = (int)((kc * kstep + j) * 64u), c1 = (int)(mt64 * 64u + rank * sh->prow);
                if (c > 1)
                    ptx_tma_2d_g2s_multicast(dst, ta, c0, c1, fb, sh->mask);
                else
                    ptx_tma_2d_g2s(dst, ta, c0, c1, fb);
            }
        }
    }
}

/* The B rows of one ring slot: one 3-D copy of kstep blocks x the box's columns from column n0,
 * block k0, into [block][n][64] (bperm: map {64, N, K/64}; conflict-free ldmatrix) or [n][block][64]
 * (map {64, K/64, N}; never for wide tiles); with an L2 policy unless pol is 0. */
static __device__ __forceinline__ void b_copy(uint32_t dst, const CUtensorMap *map, bool bperm, int n0, int k0,
                                              uint32_t fb, uint64_t pol)
{
    const int c1 = bperm ? n0 : k0, c2 = bperm ? k0 : n0;
    if (pol)
        ptx_tma_3d_g2s_hint(dst, map, 0, c1, c2, fb, pol);
    else
        ptx_tma_3d_g2s(dst, map, 0, c1, c2, fb);
}


/* A CTA's ring of shared-memory slots as the consumers see it: slot s holds A at sA + s astage and
 * B at sB + s bbytes, its barriers at bar_full / bar_empty + 8 s. */
typedef struct {
    uint32_t sA, sB, astage, bbytes;
    uint32_t bar_full, bar_empty, S;
} ring_t;

/* The consumers' share of one segment g (K chunks kb..ke of one tile) of a wide HBM tile, slots
 * from *sp / *php on: warpgroup kh computes MB 64-row boxes, MB kh + m (m < MB; MB 2: 256-row tiles,
 * opts.bm 256), over the slot's whole K (box b at b x kstep x 8 KiB in the slot; the accumulators of
 * box m at d + 4 J m), one wgmma group per slot, the previous slot released after wait_group 1 (as
 * the 64-column wgmma loop); then the epilogue: the store, or the partial (64 mh x tn fp32: box b's
 * rows at 16 tn b float4 on) and the fix-up.  A box past the last tile's rows is computed on the
 * slot's stale data and not stored. */
static __device__ __forceinline__ void seg_wide(const kparams *p, const seg_t *g, const uint32_t J, const uint32_t MB,
                                                uint32_t rank, const ring_t *r, uint32_t kh, uint32_t q, uint32_t *sp,
                                                uint32_t *php, volatile uint32_t *flag)
{
    const uint32_t sA = r->sA, sB = r->sB, astage = r->astage, bbytes = r->bbytes;
    const uint32_t bar_full = r->bar_full, bar_empty = r->bar_empty, S = r->S;
    /* the stamps' address from the parameters, not a register held across the slot loop */
    unsigned long long *ts = p->times ? p->times + (size_t)blockIdx.x * DAK_GEMM_NTIMES : NULL;
    const uint32_t lane = threadIdx.x & 31u, c = p->c, tn = 8u * J;
    const uint32_t mt = g->mt, nt = g->ng * c + rank;
    const uint32_t ahalf = A_BYTES * p->kstep, aoff = kh * MB * ahalf;
    uint32_t s = *sp, ph = *php, ps = 0;
    bool pend = false;
    float d[128]; /* 4 J MB used */
#pragma unroll
    for (uint32_t i = 0; i < 4u * J * MB; i++) d[i] = 0.f;
    for (uint32_t kc = g->kb; kc < g->ke; kc++) {
        ptx_mbar_wait(bar_full + 8u * s, ph);
        if (ts && threadIdx.x == 0) stamp_slot(ts);
        if (!p->nomath) {
            consume_wgmma_wide(d, sA + s * astage + aoff, ahalf, sB + s * bbytes, p->kstep, J, MB);
            ptx_wgmma_wait1(); /* the previous slot's group is complete */
        }
        if (pend) slot_release(bar_empty + 8u * ps, c, lane);
        pend = true, ps = s;
        if (++s == S) s = 0, ph ^= 1u;
    }
    *sp = s, *php = ph; /* before the epilogue: not live across it here */
    ptx_wgmma_wait0();
    ptx_wgmma_fence_acc(d, (int)(4u * J * MB));
    if (pend) slot_release(bar_empty + 8u * ps, c, lane);
    if (ts && threadIdx.x == 0 && g->last) ts[7] = ptx_globaltimer();
    if ((int)p->N - (int)(nt * tn) <= 0) return; /* uniform: this member's column tile is past N */

    const uint32_t mh = p->mh[1], nbox = tile_boxes(p, 1u, mt), box0 = MB * kh;
    /* bit m: box MB kh + m holds rows of the tile */
    const uint32_t own = (box0 < nbox ? 1u : 0u) | (MB == 2u && box0 + 1u < nbox ? 2u : 0u);
    const uint32_t rowt = p->row0[1] + mt * 64u * mh, col0 = nt * tn; /* C row of the tile's first row */
    const uint32_t row = rowt + box0 * 64u + q * 16u, wr0 = box0 * 4u + q; /* box m: + 64 m, + 4 m */
    /* the fix-up barrier beside the flag; one phase bit per use (a CTA owns at most one tile
     * through its last segment, which has at most ksplit - 1 partials to add) */
    const uint32_t bar_fix = ptx_smem((const void *)flag) + 8u;
    uint32_t fph = 0;
    const uint32_t ring = S * (astage + bbytes), rs = 64u * mh + 4u;
    /* C through the idle ring (store_staged) on the CTA's last tile, where the ring holds it */
    const bool stage_c = g->last && !p->epi_global && ring >= 8u * J * rs * 4u;
    uint32_t keep = own, rlo = 0, rhi = 64u * nbox; /* what this warp / CTA stores */
    const uint32_t ks_n = g->ncontrib, ks = g->slot, pu = mh * J / 8u; /* 64 x 64 units per partial */
    const unsigned long long tile = (unsigned long long)mt * p->ntp[1] + nt;
    float *slots = p->ws + (p->ws0[1] + tile * p->ksplit[1] * pu) * 4096ull;
    const size_t pt = 4096u * pu, hoff = (size_t)box0 * 16u * tn, bst = 16u * tn; /* floats; float4 to box0, a box */
    uint32_t *ctr = &p->ctr[p->ctr0[1] + (size_t)mt * mh * p->ntp[1] + nt];
    if (g->ncontrib == 1 || p->nofixup) {
        /* a whole tile: stored below */
    } else if (p->fix_wait && p->even[1] && c == 1 && p->fix_rs && g->rs) {
        keep = rs_fixup(d, J, MB, slots, pt, ks, ks_n, wr0, 4u * nbox, own, ctr, sA, ring, bar_fix, !p->epi_global, ts,
                        &rlo, &rhi);
    } else if (p->fix_wait && p->even[1] && c == 1) {
        if (ks) {
#pragma unroll
            for (uint32_t m = 0; m < MB; m++)
                if (own >> m & 1u) put_wide((float4 *)(slots + (size_t)ks * pt) + hoff + m * bst, d + 4u * J * m, J, q);
            fix_publish(ctr);
            return;
        }
        fix_wait_others(ctr, ks_n); /* ends with the consumers' barrier: the ring is idle if last */
        if (ts && threadIdx.x == 0) ts[8] = ptx_globaltimer();
        /* through the ring on the CTA's last segment (always, in an even split: the owner's share of a
         * tile ends its range) where the ring holds a partial (not with --stages 2 at bn 256) */
        const bool staged = g->last && !p->epi_global && ring >= pt * 4u;
        if (staged)
            add_wide_staged(d, slots, pt, 1u, ks_n, sA, ring, bar_fix, &fph, hoff, bst, J, MB, own, q);
        else
            for (uint32_t j = 1; j < ks_n; j++)
#pragma unroll
                for (uint32_t m = 0; m < MB; m++)
                    if (own >> m & 1u)
                        add_wide(d + 4u * J * m, (const float4 *)(slots + (size_t)j * pt) + hoff + m * bst, J, q);
        if (ts && threadIdx.x == 0) ts[9] = ptx_globaltimer();
    } else {
        /* runs 1-9 (and round-robin or multicast): every contributor publishes; the last one sums */
#pragma unroll
        for (uint32_t m = 0; m < MB; m++)
            if (own >> m & 1u) put_wide((float4 *)(slots + (size_t)ks * pt) + hoff + m * bst, d + 4u * J * m, J, q);
        if (!fix_arrive_last(ctr, ks_n, flag)) return;
#pragma unroll
        for (uint32_t m = 0; m < MB; m++)
            if (own >> m & 1u)
                for (uint32_t j = 0; j < ks_n; j++)
                    if (j != ks) add_wide(d + 4u * J * m, (const float4 *)(slots + (size_t)j * pt) + hoff + m * bst, J, q);
        if (threadIdx.x == 0) *ctr = 0; /* ready for the next launch */
    }
    if (stage_c) {
        store_staged(p, d, J, MB, keep, wr0, rs, rlo, rhi, rowt, col0, sA);
    } else {
#pragma unroll
        for (uint32_t m = 0; m < MB; m++)
            if (keep >> m & 1u) store_wide(p, d + 4u * J * m, J, row + 64u * m, col0);
    }
}

/* PDL hand-over of the host link (a host CTA's producer, before griddepcontrol.wait).  The link idles
 * between two launches, from the last host byte of one to the first of the next after its wait, unless
 * the next one's copies are in flight by then; issued at its start they land long before that.  So a host
 * CTA takes a ticket (context-wide counter hostq[0]; the caller takes it early) and waits until hostq[1],
 * the host CTAs that have issued their last copy, reaches ticket - host_ctas + 1: the k-th of a launch
 * waits for k + 1 of the launch before it.  Only timing rests on it (A is read-only): it falls through
 * after HOST_GATE_NS (a launch that never signals: a fault, another context's use).  Then the CTA issues
 * its window's worth before the wait. */
#define HOST_GATE_NS 200000ull
static __device__ __forceinline__ void host_gate(const kparams *p, uint32_t ticket)
{
    const uint32_t need = ticket - p->host_ctas + 1u;
    const unsigned long long t0 = ptx_globaltimer();
    while ((int32_t)(ptx_ld_acquire_gpu_u32(p->hostq + 1) - need) < 0 && ptx_globaltimer() - t0 < HOST_GATE_NS)
        __nanosleep(64);
}

/* The PDL stash's chunk count of a CTA whose first segment is g0: its first chunks, at most `stash` (the producer
 * and the consumers each work it out, from the same segment). */
static __device__ __forceinline__ uint32_t stash_chunks(const seg_t *g0, uint32_t stash)
{
    return g0->ke - g0->kb < stash ? g0->ke - g0->kb : stash;
}

/* The split kernel's body, instantiated eight times (k_split, k_split_nn, k_split_nn2, k_split_n8, k_split_n128, k_split_n256,
 * k_split_m256 below, and k_split_dyn): WJ = 0 (every tile 64 columns wide) or the n8 groups of the HBM tier's wide
 * column tiles (16: bn 128, 32: bn 256; a constant after inlining), MB the 64-row boxes a warpgroup computes (2:
 * 256-row tiles, the 128 accumulators of bn 256, so also only the wide consumer), NNO the narrow tiles of 2-4 n8 groups on
 * precomputed offsets (1: 64-row tiles, k_split_nn; 2: 128-row tiles, k_split_nn2; 3: one n8 tile, N <= 8, either
 * height, k_split_n8; 0: none).  Registers: 168 per
 * thread is the cap (10 warps, 3 on one SM sub-partition).  One kernel for all widths spilled loop state inside the
 * slot loops (1.3 KiB of stack), so each width has its own kernel; k_split_n256 (128 accumulators) still
 * spilled the slot loops and every mma.sync loop with the host tier's consumers compiled in, so it
 * has only the wide consumer (the planner gives bn 256 no tiled host tier).  setmaxnreg (12 warps,
 * the producer's warpgroup giving registers to the consumers') was tried: ptxas ignored it for
 * n256 (C7507) and spilled the producer for n128.  The tensor maps and p are the kernel's
 * __grid_constant__ parameters (TMA reads the maps from there). */
static __device__ __forceinline__ void split_body(const CUtensorMap *ta_hp, const CUtensorMap *ta_gp,
                                                  const CUtensorMap *tbp, const CUtensorMap *tbwp,
                                                  const kparams *pp, const uint32_t WJ, const uint32_t MB,
                                                  const bool DYN, const uint32_t NNO)
{
    const CUtensorMap &ta_h = *ta_hp, &ta_g = *ta_gp, &tb = *tbp, &tbw = *tbwp;
    const kparams &p = *pp;
    extern __shared__ uint8_t smem_raw[];
    uint8_t *sm = (uint8_t *)(((uintptr_t)smem_raw + 1023u) & ~(uintptr_t)1023u);
    const uint32_t tier = blockIdx.x < p.host_ctas ? 0u : 1u;
    /* a slot: mh boxes of A (kstep blocks of 64 rows each), then elsewhere the B rows */
    const uint32_t S = p.stages[tier], kstep = p.kstep, mh = p.mh[tier];
    const uint32_t ahalf = A_BYTES * kstep, astage = ahalf * mh, bbytes = p.bn_box[tier] * 128u * kstep;
    const uint32_t sA = ptx_smem(sm), sB = sA + S * astage;
    const uint32_t bar_full = sB + S * bbytes, bar_empty = bar_full + 8u * S;
    volatile uint32_t *flag = (volatile uint32_t *)(sm + S * (astage + bbytes) + 16u * S);
    /* The PDL stash (opts.stash; the 64-column kernel only): the consumers of an HBM CTA take its first `stash`
     * chunks of A into registers before griddepcontrol.wait and hand their slots back, so that the next chunks go
     * into them right after the wait's B copies, not once the first B rows landed and were used (the stash's own B
     * rows come after the wait too, into the hand-over area at stB, on bar_stash) */
    const bool stash_kernel = WJ == 0u && MB == 1u && !DYN;
    const uint32_t stash = stash_kernel && tier == 1u && p.pdl ? p.stash : 0u;
    const uint32_t bar_stash = ptx_smem((const void *)flag) + 16u;
    const uint32_t stB = sA + S * (astage + bbytes) + DAK_STASH_OFF;
    /* the warp index through a shuffle: provably warp-uniform for the compiler, so that the
     * consumers' wgmma (warpgroup-collective) are not on a "divergent" path (ptxas C7518) */
    const uint32_t warp = __shfl_sync(0xffffffffu, threadIdx.x >> 5, 0), lane = threadIdx.x & 31u;
    const uint32_t c = p.c;
    const uint32_t lb = tier ? blockIdx.x - p.host_ctas : blockIdx.x;
    const uint32_t ncl = p.ctas[tier] / c;
    /* the CTA's (cluster's) share of its tier; diag_rotate relabels them, so that another SM takes
     * each share (does a CTA's time follow its SM or its part of A?) */
    const uint32_t cid = (lb / c + p.rot) % ncl;
    /* through a shuffle: visibly warp-uniform (wgmma on a "divergent" path is serialised, C7518) */
    const uint32_t rank = c > 1 ? __shfl_sync(0xffffffffu, ptx_cluster_rank(), 0) : 0u;
    unsigned long long *ts = p.times ? p.times + (size_t)blockIdx.x * DAK_GEMM_NTIMES : NULL;
    if (ts && threadIdx.x == 0)
        ts[0] = ptx_globaltimer(), ts[2] = ts[7] = ts[8] = ts[9] = ts[10] = ts[11] = ts[12] = 0, ts[6] = ptx_smid();
    /* PDL: the next kernel may be scheduled as soon as every CTA of this one is running (it
     * only gets an SM when one of ours exits: one CTA per SM) */
    if (p.pdl) ptx_griddep_launch_dependents();

    /* dynamic units: slot tags and the consumers -> fix-up warp queue live where the K-half
     * hand-over area is (that mode has no hand-over) */
    volatile uint32_t *dtags = (volatile uint32_t *)(sm + S * (astage + bbytes) + 512u);
    volatile uint32_t *fq_tag = dtags + 32;
    const uint32_t fq_full = ptx_smem(sm + S * (astage + bbytes) + 512u) + 256u, fq_empty = fq_full + 8u * DYN_Q;
    /* only in k_split_dyn: compiled into k_split, the dyn paths cost its static ones stack and spills */
    const bool dyn = DYN && tier == 1u && p.dyn != 0;
    if (threadIdx.x == 0) {
        for (uint32_t s = 0; s < S; s++) {
            ptx_mbar_init(bar_full + 8u * s, 1);
            ptx_mbar_init(bar_empty + 8u * s, NCW * c);
        }
        ptx_mbar_init(ptx_smem((const void *)flag) + 8u, 1); /* the wide epilogue's bulk loads */
        if (stash) ptx_mbar_init(bar_stash, 1);
        if (dyn)
            for (uint32_t j = 0; j < DYN_Q; j++) {
                ptx_mbar_init(fq_full + 8u * j, NCW);
                ptx_mbar_init(fq_empty + 8u * j, 1);
            }
        ptx_fence_mbar_init();
    }
    /* The producer's first segment, worked out while thread 0 sets the barriers up (it needs none of them): ~2000
     * cycles on the H200 (clock64, twenty-fifth session), which were on the path from entry to the first copy after
     * the block barrier; a CTA's prologue costs a PDL chain about half its length (the streaming floor's s-pre).  The
     * 64-column kernels only: in the wide ones (WJ > 0) the segment held across the barrier cost spills. */
    const bool producer_lane = WJ == 0u && (warp == NCW || (p.prod2 && warp == NCW + 1u)) && lane == 0u && !dyn;
    seg_iter si0;
    seg_t g0;
    bool more0 = false;
    if (producer_lane) {
        seg_begin(&p, tier, cid, ncl, &si0);
        more0 = seg_next(&p, tier, cid, ncl, &si0, &g0);
    }
    dak_group_sync(c);

    if (warp == NCW || (p.prod2 && warp == NCW + 1u)) {
        /* ---- producer: one lane issues every copy (diag_prod2: the fix-up warp's lane 0 every other slot) ---- */
        const uint32_t pid = warp - NCW;
        /* two producers: always in single launches; with pdl on the HBM tier of the 64-column kernels only (a host
         * CTA's ticket, gate and window hand-over have one producer; in the wide kernels the pdl form cost spills), the
         * second one counting the first's copies before the wait */
        const bool two = p.prod2 && (!p.pdl || (WJ == 0u && tier == 1u));
        if (lane == 0 && (pid == 0 || two)) {
            if (ts) ts[10] = ptx_globaltimer(); /* the producer starts: barriers initialised */
            const CUtensorMap *ta = tier ? &ta_g : &ta_h;
            /* B: boxes of bn rows for the wide HBM column tiles, else of bn_box (<= 64) */
            const CUtensorMap *tbt = tier && p.tn[1] > 64u ? &tbw : &tb;
            ptx_prefetch_tensormap(ta);
            ptx_prefetch_tensormap(tbt);
            /* L2: A is streamed once, evicted first; B is re-read by every CTA, kept (opts.l2_hints).
             * 0: a copy without a policy (an evict-normal policy measured slower than none) */
            const uint64_t pol_a = p.l2_hints ? ptx_l2_evict_first() : 0ull;
            const uint64_t pol_b = p.l2_hints == 2u ? ptx_l2_evict_last() : 0ull;
            const uint32_t W = p.window[tier];
            const bool windowed = W < S; /* host tier: at most W copies in flight */
            const uint32_t pbytes = ahalf / c; /* bytes of one box a member issues */
            const uint16_t mask = (uint16_t)((1u << c) - 1u);
            const a_share ash = {pbytes, 64u / c, A_BYTES / c, mask};
            const bool bperm = p.b_perm != 0;
            const size_t astep = (size_t)kstep * 4096u; /* elements of A per stage */
            /* slot and phase of this copy (s, ph) and of the copy W before it (sw, phw):
             * running counters, no division in the loop (the one producer thread's issue
             * rate bounds small slots: run 9, loads-only at kstep 1 +9 %) */
            uint32_t s = 0, ph = 0, sw = 0, phw = 0, it = 0;
            unsigned long long hb = 0;
            const uint16_t *abase = p.a_ptr[tier];
            seg_iter si;
            seg_t g;
            /* PDL: A is read-only (weights), so the first ring of A copies goes out before
             * griddepcontrol.wait, overlapping the previous kernel's tail; B (the previous
             * kernel's output in a model) only after it.  A host CTA issues its window's worth,
             * once the previous launch's host CTAs have issued their last copies (host_gate; without
             * it, diag_pdl_host_wait: a windowed host CTA issues nothing before the wait). */
            uint32_t pre = 0, xs = 0; /* copies out before the wait; this CTA's stash (its first chunks) */
            const bool hostq = p.pdl && tier == 0u && p.hostq;
            /* host_gate's ticket (every hostq CTA takes one), its latency under the segment arithmetic */
            const uint32_t ticket = hostq && pid == 0 ? atomicAdd(p.hostq, 1u) : 0u;
            if (dyn) {
                /* Dynamic units (run 10; twelfth session): under a static split the CTAs' streaming
                 * ends up to 5-8 us (7168^2, 11008x4096) / 23 us (28672x7168) apart: the SMs get
                 * unequal shares of HBM.  Units of dyn_p-th of a tile row's K; CTA j takes units j,
                 * j + ncl, .. (dyn_first of them, about a ring), later ones come from an atomic
                 * counter, one claim ahead (its latency under a unit's copies).  A diagnostic
                 * (opts.dyn): see NOTES-dak-kernels.md for how it measures against the split. */
                const uint32_t U = p.dyn_units, P = p.dyn_p, kcn = p.kchunks, F = p.dyn_first;
                if (p.pdl) {
                    /* the first ring of A before the wait: the CTA's units by index need no claim */
                    for (uint32_t f = 0; f < F && pre < S; f++) {
                        const uint32_t uf = cid + f * ncl;
                        const uint32_t mt = uf / P, k = uf % P, kb = k * kcn / P, ke = (k + 1u) * kcn / P;
                        const uint16_t *src = abase + ((size_t)mt * p.kblocks + (size_t)kb * kstep) * 4096u;
                        for (uint32_t kc = kb; kc < ke && pre < S; kc++, pre++, src += astep) {
                            const uint32_t fb = bar_full + 8u * pre;
                            dtags[pre] = uf;
                            ptx_mbar_arrive_expect_tx(fb, astage + bbytes);
                            issue_a(&p, ta, sA + pre * astage, src, fb, kc, mt, 1u, 1u, 0u, &ash, pol_a);
                        }
                    }
                    ptx_griddep_wait();
                    if (ts) ts[2] = ptx_globaltimer();
                }
                /* claim value g is unit g + F ncl; every CTA claims until it fails once, so the claims
                 * are U - F ncl + ncl in all and the one that got the last value resets the counter */
                const uint32_t glast = U - F * ncl + ncl - 1u;
                uint32_t gn = atomicAdd(p.dynctr, 1u), u = cid, f = 1;
                while (u < U) {
                    const uint32_t mt = u / P, k = u % P, kb = k * kcn / P, ke = (k + 1u) * kcn / P;
                    const uint16_t *src = abase + ((size_t)mt * p.kblocks + (size_t)kb * kstep) * 4096u;
                    for (uint32_t kc = kb; kc < ke; kc++, it++, src += astep) {
                        const uint32_t fb = bar_full + 8u * s;
                        if (it >= pre) {
                            ptx_mbar_wait(bar_empty + 8u * s, ph ^ 1u);
                            dtags[s] = u; /* before the arrive (release) that the consumers acquire */
                            ptx_mbar_arrive_expect_tx(fb, astage + bbytes);
                            issue_a(&p, ta, sA + s * astage, src, fb, kc, mt, 1u, 1u, 0u, &ash, pol_a);
                        }
                        b_copy(sB + s * bbytes, &tb, bperm, 0, (int)(kc * kstep), fb, pol_b);
                        if (ts && it == 0) ts[1] = ptx_globaltimer();
                        if (++s == S) s = 0, ph ^= 1u;
                    }
                    if (f < F) { /* the next unit by index */
                        u = cid + f++ * ncl;
                        continue;
                    }
                    if (gn == glast) *p.dynctr = 0u;
                    u = gn + F * ncl;
                    if (u < U) gn = atomicAdd(p.dynctr, 1u);
                }
                ptx_mbar_wait(bar_empty + 8u * s, ph ^ 1u);
                dtags[s] = DYN_END;
                ptx_mbar_arrive(bar_full + 8u * s);
            } else {
            bool more;
            if (p.pdl) {
                if (WJ == 0u) {
                    si = si0, g = g0, more = more0;
                } else {
                    seg_begin(&p, tier, cid, ncl, &si);
                    more = seg_next(&p, tier, cid, ncl, &si, &g);
                }
                if (hostq) host_gate(&p, ticket);
                /* the ring, or the window's worth once the gate passed (W = min(window, ring)); the HBM
                 * tier's whole ring even with a window (opts.hbm_window: HBM is not a queue to hand over) */
                const uint32_t npre = tier ? p.pre_hbm : !windowed ? S : hostq ? W : 0u;
                if (ts && hostq) ts[12] = ptx_globaltimer(); /* the hand-over gate passed */
                /* the stash: at most the first segment (the consumers' count is the same); its copies carry A alone.
                 * The copies into its slots, handed back before the wait, go out after the wait's B copies: an SM's
                 * copies land about in issue order, and the B rows that the ring waits for must not queue behind
                 * more A (sent from the idle fix-up warp while this thread waited: +0.4-0.8 us a GEMM) */
                if (stash && more) xs = stash_chunks(&g, stash);
                while (more && pre < npre) {
                    const uint32_t nbox = tile_boxes(&p, tier, g.mt);
                    const uint16_t *src = abase + ((size_t)g.mt * mh * p.kblocks + (size_t)g.kb * kstep) * 4096u +
                                          (size_t)rank * (pbytes / 2u);
                    for (uint32_t kc = g.kb; kc < g.ke && pre < npre; kc++, pre++, src += astep) {
                        if (WJ == 0u && pid) continue; /* the second producer counts them (B after the wait) */
                        const uint32_t fb = bar_full + 8u * pre;
                        ptx_mbar_arrive_expect_tx(fb, nbox * ahalf + (pre < xs || p.nob ? 0u : bbytes));
                        issue_a(&p, ta, sA + pre * astage, src, fb, kc, g.mt * mh, nbox, mh, rank, &ash, pol_a);
                    }
                    if (pre < npre) more = seg_next(&p, tier, cid, ncl, &si, &g);
                }
                ptx_griddep_wait();
                if (ts) ts[2] = ptx_globaltimer();
                if (xs) ptx_mbar_arrive_expect_tx(bar_stash, xs * bbytes);
                /* more than the window went out before the wait: the next copy waits for copy pre - W */
                if (windowed)
                    for (uint32_t j = W; j < pre; j++)
                        if (++sw == S) sw = 0, phw ^= 1u;
            }
            if (WJ == 0u) {
                si = si0, g = g0, more = more0;
            } else {
                seg_begin(&p, tier, cid, ncl, &si);
                more = seg_next(&p, tier, cid, ncl, &si, &g);
            }
            for (; more; more = seg_next(&p, tier, cid, ncl, &si, &g)) {
                uint32_t nt = g.ng * c + rank;
                uint32_t ntb = nt < p.ntiles[tier] ? nt : p.ntiles[tier] - 1u; /* idle member: load valid B */
                const uint32_t nbox = tile_boxes(&p, tier, g.mt);
                const uint16_t *src = abase + ((size_t)g.mt * mh * p.kblocks + (size_t)g.kb * kstep) * 4096u +
                                      (size_t)rank * (pbytes / 2u);
                if (ts && it == 0) ts[11] = ptx_globaltimer(); /* the first segment computed */
                for (uint32_t kc = g.kb; kc < g.ke; kc++, it++, src += astep) {
                    const uint32_t fb = bar_full + 8u * s;
                    if (two && (it & 1u) != pid) { /* the other producer's slot */
                        if (windowed && it >= pre && it >= W && ++sw == S) sw = 0, phw ^= 1u;
                        if (++s == S) s = 0, ph ^= 1u;
                        continue;
                    }
                    if (it >= pre) { /* else its A went out before griddepcontrol.wait */
                        ptx_mbar_wait(bar_empty + 8u * s, ph ^ 1u);
                        if (windowed && it >= W) {
                            ptx_mbar_wait(bar_full + 8u * sw, phw);
                            if (++sw == S) sw = 0, phw ^= 1u;
                        }
                        if (p.noload) {
                            ptx_mbar_arrive(fb); /* diag_noload: no copies, the slot counts as full */
                        } else {
                            ptx_mbar_arrive_expect_tx(fb, nbox * ahalf + (p.nob ? 0u : bbytes));
                            issue_a(&p, ta, sA + s * astage, src, fb, kc, g.mt * mh, nbox, mh, rank, &ash, pol_a);
                        }
                    }
                    /* B: kstep blocks x the tier's box of columns (bn rows for wide tiles); a stash chunk's into the
                     * side area (its slot holds a later chunk by now) */
                    if (!p.noload && !p.nob)
                        b_copy(it < xs ? stB + it * bbytes : sB + s * bbytes, tbt, bperm, (int)(ntb * p.tn[tier]),
                               (int)(kc * kstep), it < xs ? bar_stash : fb, pol_b);
                    hb += pbytes * nbox;
                    if (ts && it == 0) ts[1] = ptx_globaltimer();
                    if (++s == S) s = 0, ph ^= 1u;
                }
            }
            }
            if (hostq && pid == 0) ptx_red_release_gpu_add_u32(p.hostq + 1, 1u); /* every copy issued (host_gate) */
            if (p.wait_end) ptx_griddep_wait(); /* the panel kernel done before this one is (stream order) */
            if (tier == 0 && hb) atomicAdd(p.host_bytes, hb);
        }
        __syncwarp();
    } else if (warp == NCW + 1u) {
        /* ---- fix-up warp (dynamic units).  fp32 C: zeroes this CTA's share of C's HBM rows
         * before the consumers' first reductions into them, and says so on dynctr[1] (the
         * consumers wait there for every HBM CTA's share).  bf16 C: per finished unit one acq_rel
         * add on the tile's counter; the unit that completes the tile copies the accumulator tile
         * to C and zeroes it.  Off the consumers' path: they only issue reductions. ---- */
        if (dyn && !p.out_bf16) {
            if (p.pdl) ptx_griddep_wait(); /* C may still be read by the kernel before */
            const uint32_t rows4 = (p.M - p.row0[1]) / 4u, tot = rows4 * p.N;
            const uint32_t zb = (uint32_t)((unsigned long long)tot * cid / ncl);
            const uint32_t ze = (uint32_t)((unsigned long long)tot * (cid + 1u) / ncl);
            float *c0 = (float *)p.C + p.row0[1];
            for (uint32_t i = zb + lane; i < ze; i += 32u) {
                const uint32_t col = i / rows4, r = i - col * rows4;
                *(float4 *)(c0 + (size_t)col * p.M + 4u * r) = make_float4(0.f, 0.f, 0.f, 0.f);
            }
            __threadfence();
            __syncwarp();
            if (lane == 0) ptx_red_release_gpu_add_u32(p.dynctr + 1, 1u);
        } else if (dyn) {
            if (p.pdl) ptx_griddep_wait();
            const uint32_t P = p.dyn_p, nv = p.N < 64u ? p.N : 64u;
            uint32_t fj = 0, fph = 0;
            for (;;) {
                ptx_mbar_wait(fq_full + 8u * fj, fph);
                const uint32_t u = fq_tag[fj];
                if (u == DYN_END) break;
                const uint32_t mt = u / P;
                const size_t ci = p.ctr0[1] + (size_t)mt * p.ntp[1];
                uint32_t old = 0;
                if (lane == 0) old = ptx_atom_acq_rel_gpu_add_u32(&p.ctr[ci], 1u);
                old = __shfl_sync(0xffffffffu, old, 0);
                if (lane == 0) ptx_mbar_arrive(fq_empty + 8u * fj);
                if (++fj == DYN_Q) fj = 0, fph ^= 1u;
                if (old != P - 1u) continue;
                __syncwarp();
                __threadfence();
                float *t = p.accw + (size_t)(p.mt0[1] + mt) * 4096u;
                const uint32_t row0 = p.row0[1] + mt * 64u;
                for (uint32_t i = lane; i < nv * 16u; i += 32u) {
                    const uint32_t col = i >> 4, r = (i & 15u) * 4u;
                    float4 v = __ldcg((const float4 *)(t + col * 64u + r));
                    __stcg((float4 *)(t + col * 64u + r), make_float4(0.f, 0.f, 0.f, 0.f));
                    __nv_bfloat162 *d = (__nv_bfloat162 *)((__nv_bfloat16 *)p.C + (size_t)col * p.M + row0 + r);
                    d[0] = __floats2bfloat162_rn(v.x, v.y);
                    d[1] = __floats2bfloat162_rn(v.z, v.w);
                }
                if (lane == 0) p.ctr[ci] = 0; /* ready for the next launch */
            }
        }
    } else {
        /* ---- consumers: 8 warps, warps w and w + 4 on one sub-partition.  kh = w / 4 picks
         * the K half of every 64-column block; narrow tiles (<= 32 valid columns): rows
         * 16 (w % 4) .., all columns; wide tiles: rows 32 (w % 2) .., n8 tiles 4 ((w / 2) % 2) ..
         * At the tile's end the kh = 1 warps hand their sums to the kh = 0 warps, which own
         * the result.  (Run 4: four warps, one mma chain each, did not keep up with HBM.)
         * 128-row tiles (mh = 2, the HBM tier with opts.bm): warpgroup kh takes instead rows
         * 64 kh .. 64 kh + 63 (the slot's box kh) over the whole K of every block, with the same
         * per-warp maps inside its 64 rows; each warp owns its sums, no hand-over. ---- */
        const uint32_t ctid = threadIdx.x;
        const uint32_t kh = warp >> 2, q = warp & 3u;
        float4 *red = (float4 *)(sm + S * (astage + bbytes) + 512u); /* K-half hand-over */
        uint32_t s = 0, ph = 0;
        if (ts && ctid == 0) ts[3] = 0;
        /* the stash's A (the producer's count: the first segment's first chunks), its slots handed back */
        uint32_t xs = 0;
        narrow1_a stf[DAK_STASH_MAX];
        if (stash) {
            seg_iter si0;
            seg_t g0;
            seg_begin(&p, tier, cid, ncl, &si0);
            if (seg_next(&p, tier, cid, ncl, &si0, &g0)) xs = stash_chunks(&g0, stash);
            const uint32_t arow = dak_warp_tile_of((int)p.N, q, lane, 0).arow; /* N <= 8: one narrow tile */
#pragma unroll
            for (uint32_t j = 0; j < DAK_STASH_MAX; j++)
                if (j < xs) {
                    ptx_mbar_wait(bar_full + 8u * j, 0u);
                    if (!p.nomath) narrow1_load_a(&stf[j], sA + j * astage, kstep, arow, kh);
                    slot_release(bar_empty + 8u * j, 1u, lane);
                }
        }
        if (p.pdl) ptx_griddep_wait(); /* C, the workspace and the counters: after the previous kernel */
        /* the stash's math once its B rows are in.  Its sums wait for the first segment in the hand-over area past
         * the part the hand-over uses at N <= 8 (2 KiB), a float4 a thread (held in registers across the segment
         * loop, they cost k_split 32 B of stack and spills) */
        float4 *park = red + 128u + ctid;
        if (stash_kernel && xs) {
            float sacc[2][4][4];
            dak_acc_zero(sacc);
            ptx_mbar_wait(bar_stash, 0u);
            if (!p.nomath)
#pragma unroll
                for (uint32_t j = 0; j < DAK_STASH_MAX; j++)
                    if (j < xs) {
                        narrow1_b fb;
                        narrow1_load_b(&fb, stB + j * bbytes, kstep, p.b_rn, p.b_rk, kh);
                        narrow1_mma(sacc, &stf[j], &fb, kstep);
                    }
            ptx_bar_sync(2, NCW * 32u); /* the area is the K-half hand-over's: every warp is done with it */
            *park = make_float4(sacc[0][0][0] + sacc[1][0][0], sacc[0][0][1] + sacc[1][0][1],
                                sacc[0][0][2] + sacc[1][0][2], sacc[0][0][3] + sacc[1][0][3]);
            s = xs; /* < S: the stash's slots are behind */
        }
        if (dyn) {
            /* one column tile (N <= 64): per unit the two K halves are summed in a staging tile
             * (two, alternating, so that one barrier pair a unit suffices) and the 64 x N partial is
             * added by vector reductions: into C itself (fp32, zeroed by the fix-up warp before the
             * first one) or, for bf16 C, into the tile's fp32 accumulator, the unit then going to
             * the fix-up warp's queue */
            const uint32_t P = p.dyn_p, kcn = p.kchunks;
            /* (a diagnostic path: mma.sync only, whatever opts.wgmma) */
            const dak_warp_tile wt = dak_warp_tile_of((int)p.N, q, lane, 0);
            const dak_tile_map wm = dak_tile_map_of((int)p.N, q, 0); /* the same share, for stage_frags */
            const uint32_t nb0 = wt.nb0, nn = wt.nn, arow = wt.arow;
            const bool wide = wt.wide, to_c = !p.out_bf16;
            float *stg = (float *)(sm + S * (astage + bbytes) + 512u + DAK_DYN_STAGE_OFF);
            uint32_t fj = 0, fph = 0, nu = 0;
            bool stamped = false; /* diag_times: stores only (stamp_slot's load of ts[3] each slot, a round
                                     trip to L2, held this warp and, through the unit's barriers, the CTA) */
            for (;;) {
                ptx_mbar_wait(bar_full + 8u * s, ph);
                const uint32_t u = dtags[s];
                if (u == DYN_END) break;
                const uint32_t mt = u / P, k = u % P, kb = k * kcn / P, ke = (k + 1u) * kcn / P;
                float acc[2][4][4];
                dak_acc_zero(acc);
                for (uint32_t kc = kb; kc < ke; kc++) {
                    ptx_mbar_wait(bar_full + 8u * s, ph);
                    if (ts && ctid == 0) {
                        const unsigned long long t = ptx_globaltimer();
                        if (!stamped) ts[3] = t, stamped = true;
                        ts[4] = t;
                    }
                    if (!p.nomath) {
                        const uint32_t aS = sA + s * astage, bS = sB + s * bbytes;
                        if (wide) {
                            consume_wide(acc, aS, bS, kstep, p.b_rn, p.b_rk, arow, kh, nb0, nn);
                        } else {
                            consume_narrow(acc, aS, bS, kstep, p.b_rn, p.b_rk, arow, kh, nn);
                        }
                    }
                    slot_release(bar_empty + 8u * s, 1u, lane);
                    if (++s == S) s = 0, ph ^= 1u;
                }
                if (!wide) {
#pragma unroll
                    for (uint32_t nj = 0; nj < 4; nj++)
#pragma unroll
                        for (uint32_t e = 0; e < 4; e++) acc[0][nj][e] += acc[1][nj][e];
                }
                float *T = stg + (nu & 1u) * p.N * DAK_DYN_STAGE_LD;
                if (kh) stage_frags(&p, acc, &wm, T, false);
                ptx_bar_sync(2, NCW * 32u);
                if (!kh) stage_frags(&p, acc, &wm, T, true);
                /* the first reductions into C after every HBM CTA zeroed its share of it */
                if (to_c && nu == 0 && ctid == 0) dyn_wait_zeroed(p.dynctr + 1, ncl);
                ptx_bar_sync(2, NCW * 32u);
                if (!p.nomath) {
                    if (to_c)
                        red_staged(T, p.N, (float *)p.C + p.row0[1] + mt * 64u, p.M, ctid);
                    else
                        red_staged(T, p.N, p.accw + (size_t)(p.mt0[1] + mt) * 4096u, 64u, ctid);
                }
                nu++;
                if (to_c) continue;
                ptx_mbar_wait(fq_empty + 8u * fj, fph ^ 1u);
                if (warp == 0 && lane == 0) fq_tag[fj] = u;
                __syncwarp(); /* this warp's reductions before lane 0's arrive (release) */
                if (lane == 0) ptx_mbar_arrive(fq_full + 8u * fj);
                if (++fj == DYN_Q) fj = 0, fph ^= 1u;
            }
            if (to_c) {
                /* dynctr[1] counts the HBM CTAs' zeroed shares, then the CTAs done (every one past its
                 * wait above): the last one resets it for the next launch */
                if (ctid == 0 && ptx_atom_acq_rel_gpu_add_u32(p.dynctr + 1, 1u) == 2u * ncl - 1u) p.dynctr[1] = 0u;
            } else {
                ptx_mbar_wait(fq_empty + 8u * fj, fph ^ 1u);
                if (warp == 0 && lane == 0) fq_tag[fj] = DYN_END;
                __syncwarp();
                if (lane == 0) ptx_mbar_arrive(fq_full + 8u * fj);
            }
        } else {
        seg_iter si;
        seg_t g;
        seg_begin(&p, tier, cid, ncl, &si);
        const bool two = mh == 2u; /* 128-row tiles */
        while (seg_next(&p, tier, cid, ncl, &si, &g)) {
            /* the HBM tier's wide column tiles (p.tn[1] = 8 WJ); k_split_n256 has no other consumer
             * path (its plans have no tiled host tier), so that its 128 accumulators fit */
            if (WJ == 32u || MB == 2u || (WJ && tier)) {
                const ring_t ring = {sA, sB, astage, bbytes, bar_full, bar_empty, S};
                seg_wide(&p, &g, WJ, MB, rank, &ring, kh, q, &s, &ph, flag);
                continue;
            }
            const uint32_t mt = g.mt, nt = g.ng * c + rank;
            /* own: this warp holds result rows at the end (64-row tiles: the first K half; 128-row
             * tiles: every warp whose box was loaded, i.e. not warpgroup 1 of a half tile) */
            const bool own = two ? kh < tile_boxes(&p, tier, mt) : kh == 0u;
            /* the math does not depend on own: a branch on kh (uniform over a warpgroup, but the
             * compiler only sees it warp-uniform) around wgmma serialises it (ptxas C7520).  The
             * idle warpgroup of a half tile computes on the slot's stale second box, unstored. */
            const bool math = !p.nomath;
            const uint32_t aoff = two ? kh * ahalf : 0u; /* this warpgroup's box in the slot */
            const uint32_t kh0 = two ? 0u : kh, kh1 = two ? 1u : kh; /* the K halves it computes */
            const dak_warp_tile wt = dak_warp_tile_of((int)p.N - (int)(nt * 64u), q, lane, (int)p.wgmma);
            const uint32_t nv8 = wt.nv8, MI = wt.MI, nb0 = wt.nb0, nn = wt.nn;
            const uint32_t arow = wt.arow;
            const bool wide = wt.wide; /* uniform over the CTA */
            const bool wg = wt.wg;
            float acc[2][4][4]; /* narrow: [k16 parity][nj]; wide: [mi][nj]; wgmma: flat d[32] */
            if (wg) {
                /* wgmma on its own accumulator registers (shared with the mma.sync path, ptxas
                 * would guard every mma.sync with a warpgroup wait: C7517).  Slot `ps` is released
                 * once the next slot's group is committed and its own group complete (wait_group
                 * 1), so that two groups overlap. */
                float w[2][4][4];
                dak_acc_zero(w);
                const uint32_t wn = dak_wg_n8_groups(p.bn_box[tier]);
                uint32_t ps = 0;
                bool pend = false;
                for (uint32_t kc = g.kb; kc < g.ke; kc++) {
                    ptx_mbar_wait(bar_full + 8u * s, ph);
                    if (ts && ctid == 0) {
                        stamp_slot(ts);
                    }
                    if (math) {
                        /* two calls, so that `full` is a constant in each: a run-time k16 count
                         * inside consume_wgmma serialised the wgmma (ptxas C7520) */
                        if (two)
                            consume_wgmma(w, sA + s * astage + aoff, sB + s * bbytes, kstep, p.b_rk, 0u, true, wn);
                        else
                            consume_wgmma(w, sA + s * astage, sB + s * bbytes, kstep, p.b_rk, kh, false, wn);
                        ptx_wgmma_wait1(); /* the previous slot's group is complete */
                    }
                    if (pend) slot_release(bar_empty + 8u * ps, c, lane);
                    pend = true, ps = s;
                    if (++s == S) s = 0, ph ^= 1u;
                }
                wgmma_drain(w);
                if (pend) slot_release(bar_empty + 8u * ps, c, lane);
                dak_acc_copy(acc, w);
            } else {
            dak_acc_zero(acc);
            uint32_t kc0 = g.kb;
            if (stash_kernel && xs) { /* the first segment (narrow, N <= 8): its first xs chunks were the stash */
                const float4 v = *park;
                acc[0][0][0] = v.x, acc[0][0][1] = v.y, acc[0][0][2] = v.z, acc[0][0][3] = v.w;
                kc0 += xs, xs = 0;
            }
            if ((NNO == 1u || NNO == 2u) && !wide && nn > 1u && two == (NNO == 2u) && (p.b_rk & 7u) == 0u) {
                /* 2-4 n8 tiles, B n-major (k_split_nn, k_split_nn2): the per-lane offsets once
                 * (consume_narrow_offs), in a loop of their own.  A 64-row tile's warp computes its K half kh; a
                 * 128-row tile's (NNO 2) both halves of its warpgroup's box.  NNO is a constant: k_split_nn's loop
                 * is the one call (the second, at run time, cost 64-row tiles 0.2-0.5 us a GEMM; sixteenth session) */
                const uint32_t ab = NNO == 2u ? aoff : 0u; /* 0 at 64 rows, known so at compile time */
                const narrow_offs no0 = narrow_offs_of(arow, p.b_rn, NNO == 2u ? 0u : kh, p.b_rk);
                const narrow_offs no1 = narrow_offs_of(arow, p.b_rn, 1u, p.b_rk); /* NNO 2 only */
                const uint32_t rk128 = p.b_rk * 128u;
                for (uint32_t kc = kc0; kc < g.ke; kc++) {
                    ptx_mbar_wait(bar_full + 8u * s, ph);
                    if (ts && ctid == 0) stamp_slot(ts);
                    if (math) {
                        consume_narrow_offs(acc, sA + s * astage + ab, sB + s * bbytes, kstep, rk128, &no0, nn);
                        if (NNO == 2u)
                            consume_narrow_offs(acc, sA + s * astage + ab, sB + s * bbytes, kstep, rk128, &no1, nn);
                    }
                    slot_release(bar_empty + 8u * s, c, lane);
                    if (++s == S) s = 0, ph ^= 1u;
                }
            } else if (NNO == 3u && !wide && nn == 1u && (p.b_rk & 7u) == 0u) {
                /* one n8 tile (N <= 8, k_split_n8) on offsets worked out once a tile (narrow1_offs_of): a 128-row tile's
                 * warp computes both K halves of its warpgroup's box, a 64-row tile's its half kh */
                const narrow1_offs o0 = narrow1_offs_of(arow, p.b_rn, two ? 0u : kh);
                const narrow1_offs o1 = narrow1_offs_of(arow, p.b_rn, 1u);
                const uint32_t rk128 = p.b_rk * 128u;
                for (uint32_t kc = kc0; kc < g.ke; kc++) {
                    ptx_mbar_wait(bar_full + 8u * s, ph);
                    if (ts && ctid == 0) stamp_slot(ts);
                    if (math) {
                        const uint32_t aS = sA + s * astage + aoff, bS = sB + s * bbytes;
#pragma unroll 1
                        for (uint32_t h = 0; h <= (two ? 1u : 0u); h++) /* one box's fragments live at a time */
                            consume_narrow1_offs(acc, aS, bS, kstep, rk128, h ? &o1 : &o0);
                    }
                    slot_release(bar_empty + 8u * s, c, lane);
                    if (++s == S) s = 0, ph ^= 1u;
                }
            } else {
            for (uint32_t kc = kc0; kc < g.ke; kc++) {
                ptx_mbar_wait(bar_full + 8u * s, ph);
                if (ts && ctid == 0) {
                    stamp_slot(ts);
                }
                if (nv8 && math) {
                    const uint32_t aS = sA + s * astage + aoff, bS = sB + s * bbytes;
                    for (uint32_t h = kh0; h <= kh1; h++) {
                        if (wide)
                            consume_wide(acc, aS, bS, kstep, p.b_rn, p.b_rk, arow, h, nb0, nn);
                        else
                            consume_narrow(acc, aS, bS, kstep, p.b_rn, p.b_rk, arow, h, nn);
                    }
                }
                slot_release(bar_empty + 8u * s, c, lane);
                if (++s == S) s = 0, ph ^= 1u;
            }
            }
            }
            if (ts && ctid == 0 && g.last) ts[7] = ptx_globaltimer();
            if (nv8 == 0) continue; /* uniform over the CTA: this member's column tile is past N */

            if (!wide) {
#pragma unroll
                for (uint32_t nj = 0; nj < 4; nj++)
#pragma unroll
                    for (uint32_t e = 0; e < 4; e++) acc[0][nj][e] += acc[1][nj][e];
            }
            /* the second K half hands its sums to the first (64-row tiles).  hs: n8 groups a fragment row of the
             * area; a narrow tile's warps all hold nn of them (N <= 8: 2 KiB, the rest is the stash's, see park),
             * a wide tile's differ (4 or what is left of nv8), so 4 */
            const uint32_t hs = wide ? 4u : nn;
            if (!two) {
                if (kh) {
#pragma unroll
                    for (uint32_t mi = 0; mi < 2; mi++)
#pragma unroll
                        for (uint32_t nj = 0; nj < 4; nj++)
                            if (mi < MI && nj < nn)
                                red[((q * MI + mi) * hs + nj) * 32u + lane] =
                                    make_float4(acc[mi][nj][0], acc[mi][nj][1], acc[mi][nj][2], acc[mi][nj][3]);
                }
                ptx_bar_sync(2, NCW * 32u);
                if (!kh) {
#pragma unroll
                    for (uint32_t mi = 0; mi < 2; mi++)
#pragma unroll
                        for (uint32_t nj = 0; nj < 4; nj++)
                            if (mi < MI && nj < nn) {
                                float4 v = red[((q * MI + mi) * hs + nj) * 32u + lane];
                                acc[mi][nj][0] += v.x, acc[mi][nj][1] += v.y;
                                acc[mi][nj][2] += v.z, acc[mi][nj][3] += v.w;
                            }
                }
                ptx_bar_sync(2, NCW * 32u); /* red is free again */
            }

            const uint32_t rowt = p.row0[tier] + mt * 64u * mh; /* C row of the tile's first row */
            const uint32_t rowb = rowt + (two ? kh * 64u : 0u);  /* ... of this warp's 64-row box */
            const uint32_t col0 = nt * 64u;
            /* C through the idle ring on the CTA's last tile (store_staged: the wgmma layout, which a narrow tile's
             * mma.sync fragments share, acc viewed flat; their unused entries land in columns past N, not stored).
             * Narrow tiles in the offsets kernels only (N 9..32: 4-8 KiB of C a tile, stored by 4-byte fragment
             * stores otherwise); k_split (N <= 8) keeps the fragment stores */
            const uint32_t rs = 64u * mh + 4u; /* the staging tile's floats a column */
            const bool stage_c =
                (wg || (NNO && !wide)) && g.last && !p.epi_global && S * (astage + bbytes) >= 64u * rs * 4u;
            const uint32_t wr = two ? kh * 4u + q : q;
            const uint32_t nrow = two ? 64u * tile_boxes(&p, tier, mt) : 64u; /* the tile's rows */
            if (g.ncontrib == 1 || p.nofixup) {
                if (stage_c)
                    store_staged(&p, &acc[0][0][0], 8u, 1u, own ? 1u : 0u, wr, rs, 0u, nrow, rowt, col0, sA);
                else if (own)
                    store_tile(&p, acc, q, rowb, col0);
                continue;
            }
            /* a contributor's partial: mh 64 x 64 fp32 tiles (warpgroup kh of a 128-row tile
             * writes the second at 1024 float4 on); the tile's counter is its first 64-row one's */
            const uint32_t ks_n = g.ncontrib, ks = g.slot, pt = 4096u * mh, hoff = two ? kh * 1024u : 0u;
            const unsigned long long tile = (unsigned long long)mt * p.ntp[tier] + nt;
            float *slots = p.ws + (p.ws0[tier] + tile * p.ksplit[tier] * mh) * 4096ull;
            float4 *mine = (float4 *)(slots + (size_t)ks * pt) + hoff;
            uint32_t *ctr = &p.ctr[p.ctr0[tier] + (size_t)mt * mh * p.ntp[tier] + nt];
            if (p.fix_wait && p.even[tier] && c == 1 && p.fix_rs && g.rs) {
                /* every contributor ends here: each keeps some rows (rs_fixup) */
                uint32_t rlo, rhi;
                const uint32_t keep = rs_fixup(&acc[0][0][0], 8u, 1u, slots, pt, ks, ks_n, wr, nrow / 16u, own ? 1u : 0u,
                                               ctr, sA, S * (astage + bbytes), ptx_smem((const void *)flag) + 8u,
                                               !p.epi_global, ts, &rlo, &rhi);
                if (stage_c)
                    store_staged(&p, &acc[0][0][0], 8u, 1u, keep, wr, rs, rlo, rhi, rowt, col0, sA);
                else if (keep)
                    store_tile(&p, acc, q, rowb, col0);
                continue;
            }
            if (p.fix_wait && p.even[tier] && c == 1) {
                /* Even split (stream-K): slot 0 holds the tile's first K chunks at the END of
                 * its range, the other contributors hold the rest at the START of theirs, so
                 * they publish long before the owner needs them.  Contributors: store, CTA
                 * barrier, one release-add.  Owner: no store, no fence, no atomic: one acquire
                 * poll (normally satisfied at once), then the sum.  Waiting cannot deadlock:
                 * publishing never waits, and all CTAs of the grid are resident (grid <= SMs,
                 * one per SM; clusters, whose co-residency is not assured, keep the old way). */
                if (ks) {
                    if (own) {
#pragma unroll
                        for (uint32_t mi = 0; mi < 2; mi++)
#pragma unroll
                            for (uint32_t nj = 0; nj < 4; nj++)
                                if (mi < MI && nj < nn)
                                    mine[((q * 2u + mi) * 4u + nj) * 32u + lane] = make_float4(
                                        acc[mi][nj][0], acc[mi][nj][1], acc[mi][nj][2], acc[mi][nj][3]);
                    }
                    fix_publish(ctr);
                    continue;
                }
                fix_wait_others(ctr, ks_n);
                if (ts && ctid == 0) ts[8] = ptx_globaltimer();
                /* the CTA's last tile, wide or on the 64-row offsets consumer: the partials through its idle
                 * ring (a warp's region is q x 256 float4 from hoff: the wgmma and mma.sync layouts alike, acc
                 * viewed flat; the float4 a narrow contributor never wrote reach only columns past N).  Not
                 * k_split's tiles: a warp holds one or two of its 8 float4 (N = 1: the 16 KiB copies took 0.93 us
                 * against 0.32 for the loads from L2); not k_split_nn2's: +0.17 us at N = 16 on 11008x4096, where
                 * k_split_nn's gain 0.3 us at N = 24-32 (NOTES-dak-kernels.md, "The owner's adds of narrow tiles") */
                const uint32_t ring = S * (astage + bbytes);
                uint32_t fph = 0;
                if ((wide || NNO == 1u) && g.last && !p.epi_global && ring >= pt * 4u) {
                    add_wide_staged(&acc[0][0][0], slots, pt, 1u, ks_n, sA, ring, ptx_smem((const void *)flag) + 8u,
                                    &fph, hoff, 0u, 8u, 1u, own ? 1u : 0u, q);
                } else if (own) {
                    for (uint32_t j = 1; j < ks_n; j++) {
                        const float4 *src = (const float4 *)(slots + (size_t)j * pt) + hoff;
#pragma unroll
                        for (uint32_t mi = 0; mi < 2; mi++)
#pragma unroll
                            for (uint32_t nj = 0; nj < 4; nj++) {
                                if (mi >= MI || nj >= nn) continue;
                                float4 v = __ldcg(src + ((q * 2u + mi) * 4u + nj) * 32u + lane);
                                acc[mi][nj][0] += v.x, acc[mi][nj][1] += v.y;
                                acc[mi][nj][2] += v.z, acc[mi][nj][3] += v.w;
                            }
                    }
                }
                if (ts && ctid == 0) ts[9] = ptx_globaltimer();
                if (stage_c)
                    store_staged(&p, &acc[0][0][0], 8u, 1u, own ? 1u : 0u, wr, rs, 0u, nrow, rowt, col0, sA);
                else if (own)
                    store_tile(&p, acc, q, rowb, col0);
                continue;
            }
            /* runs 1-9 (and round-robin, where a tile's contributors may be in later waves):
             * every contributor publishes its partial; the last of the ncontrib CTAs sums them */
            if (own) {
#pragma unroll
                for (uint32_t mi = 0; mi < 2; mi++)
#pragma unroll
                    for (uint32_t nj = 0; nj < 4; nj++)
                        if (mi < MI && nj < nn)
                            mine[((q * 2u + mi) * 4u + nj) * 32u + lane] =
                                make_float4(acc[mi][nj][0], acc[mi][nj][1], acc[mi][nj][2], acc[mi][nj][3]);
            }
            if (fix_arrive_last(ctr, ks_n, flag)) {
                if (own) {
                    float sum[2][4][4];
                    dak_acc_zero(sum);
                    for (uint32_t j = 0; j < ks_n; j++) {
                        const float4 *src = (const float4 *)(slots + (size_t)j * pt) + hoff;
#pragma unroll
                        for (uint32_t mi = 0; mi < 2; mi++)
#pragma unroll
                            for (uint32_t nj = 0; nj < 4; nj++) {
                                if (mi >= MI || nj >= nn) continue;
                                if (j == ks) {
                                    sum[mi][nj][0] += acc[mi][nj][0];
                                    sum[mi][nj][1] += acc[mi][nj][1];
                                    sum[mi][nj][2] += acc[mi][nj][2];
                                    sum[mi][nj][3] += acc[mi][nj][3];
                                } else {
                                    float4 v = __ldcg(src + ((q * 2u + mi) * 4u + nj) * 32u + lane);
                                    sum[mi][nj][0] += v.x;
                                    sum[mi][nj][1] += v.y;
                                    sum[mi][nj][2] += v.z;
                                    sum[mi][nj][3] += v.w;
                                }
                            }
                    }
                    store_tile(&p, sum, q, rowb, col0);
                }
                if (ctid == 0) *ctr = 0; /* ready for the next launch */
            }
        }
        }
        if (ts && ctid == 0) ts[5] = ptx_globaltimer();
    }
    /* The producer and fix-up warps reconverge here.  Not needed for correctness (both end on a
     * converged path), but with this join ptxas allocates the consumers' registers without
     * spilling around the 128 accumulators: stack k_split_n256 544 -> 32 B, k_split_m256 504 -> 40,
     * k_split_n128 672 -> 328 (ptxas of CUDA 13.0; the same happened with any instruction here that only
     * these warps execute), and the wide tiles ran 1.02-1.15x faster on the H200 (NOTES-dak-kernels-history.md "Pairs"). */
    if (warp >= NCW) __syncwarp();
    if (c > 1) ptx_cluster_sync();
}

#define K_SPLIT(name, WJ, MB, DYN, NNO)                                                                        \
    K_SPLIT_SIG(name)                                                                                          \
    {                                                                                                          \
        split_body(&ta_h, &ta_g, &tb, &tbw, &p, WJ, MB, DYN, NNO);                                            \
    }
K_SPLIT(k_split, 0u, 1u, false, 0u)
/* N 9..32 (one 64-column tile of 2-4 n8 tiles), B n-major: consume_narrow_offs.  Its own kernel: in k_split the
 * extra slot loop cost 11008 x 4096 at N <= 8 0.25 us a GEMM as PDL graphs on the H200 (fifteenth session) */
K_SPLIT(k_split_nn, 0u, 1u, false, 1u)
/* the same with 128-row HBM tiles (opts.bm 128 at N 9..32; auto at 9..16 where 64-row tiles are ragged: plan.c) */
K_SPLIT(k_split_nn2, 0u, 1u, false, 2u)
/* N <= 8 (one n8 tile) on narrow1's offsets worked out once a tile: in k_split beside its other consumers the offsets
 * loop spilled (224-504 B of stack; twenty-sixth session), here it is the narrow tiles' one loop */
K_SPLIT(k_split_n8, 0u, 1u, false, 3u)
K_SPLIT(k_split_dyn, 0u, 1u, true, 0u) /* the HBM tier in dynamic units (opts.dyn; 64-column tiles only) */
K_SPLIT(k_split_n128, 16u, 1u, false, 0u)
K_SPLIT(k_split_n256, 32u, 1u, false, 0u)
K_SPLIT(k_split_m256, 16u, 2u, false, 0u) /* 256 x 128 tiles (opts.bm 256): two boxes a warpgroup */

/* Diagnostic: the launch floor of the split kernel's configuration. */
__global__ void __launch_bounds__(NTHREADS, 1) k_empty(void) {}
