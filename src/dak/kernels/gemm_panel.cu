/* Direct-access split GEMM, panel path (issue #7: read amplification at large N).  The host
 * tile rows go through an A-stationary kernel: every host panel (64 rows x pblocks 64-column
 * blocks of A) crosses the interconnect exactly once, whatever N.  See include/dak/gemm.h for
 * the scheme; the plan is dak_panel_plan (plan.c).
 *
 * One CTA = one producer warp (one lane issues every copy) + 8 consumer warps, the consumers
 * of the tiled kernel (gemm_tile.cuh).  A cluster of c CTAs walks a contiguous range of units
 * (tile row, panel).  Per unit:
 *   - the panel goes into one of two panel buffers, piece by piece (kstep blocks); every member
 *     issues 1/c of each piece with .multicast::cluster, so each piece completes on one mbarrier
 *     per member (a_full[buffer][piece]).  The next unit's pieces are issued as soon as its
 *     buffer is free (a_empty: every consumer warp of every member has finished the unit that
 *     used it two units ago) and the congestion window allows, interleaved with B;
 *   - each member takes column tiles rank, rank + c, ..., streams B (kstep blocks x 64 columns
 *     per piece, 3-D TMA from HBM) through a ring of bstages slots, accumulates the 64 x 64
 *     partial over the panel, and adds it to the fp32 accumulator (C, or the workspace for bf16
 *     C) with red.global.add.v4.f32 after a transpose through a padded shared staging tile.
 * The accumulator is zeroed by a memset before the kernel (dak_panel_begin); bf16 C is
 * converted from the workspace after it (dak_panel_end).
 * Congestion window: at most `window` of this SM's piece shares in flight (issued, not yet
 * complete on its own a_full barrier). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_bf16.h>

#include "common/ptx.cuh"
#include "dak/gemm.h"
#include "gemm_tile.cuh"
#include "internal.h"

#define PNCW 8u                        /* consumer warps */
#define PNTHREADS (32u * (PNCW + 1u))  /* + the producer warp */
#define PMAXP 16u                      /* a_full barriers per panel buffer (pieces per panel at most) */
#define STG_LD 68u                     /* staging tile column stride in floats (64 + 4: conflict-free) */
#define BAR_BYTES 1024u                /* mbarrier area (see the layout in k_panel) */

typedef struct {
    uint32_t M, N, kblocks, kstep, pblocks, npanels, units, ntiles, c, bstages, window, bn_box;
    uint32_t b_perm;           /* 1: B map {64, N, K/64} ([block][n][64] in smem); 0: {64, K/64, N} */
    uint32_t b_rn, b_rk;       /* smem row of B column n, block bk: n * b_rn + bk * b_rk */
    uint32_t nomath;           /* diagnostic: no math, no reductions (C wrong) */
    const uint16_t *a;         /* packed host rows of A (device address of the mapped memory) */
    float *acc;                /* fp32 accumulator: C (fp32) or the workspace (bf16 C) */
    uint32_t ldacc;            /* its column stride: M, or rows_host for the workspace */
    unsigned long long *host_bytes;
    uint32_t wgmma;            /* 1: wide tiles through wgmma (consume_wgmma), 0: mma.sync */
} pparams;

struct dak_panel {
    pparams kp;
    CUtensorMap tb;
    uint32_t grid, c, smem;
    void *C;
    float *acc;
    int out_bf16, fork;
    uint32_t M, N, rows_host;
    cudaStream_t side;
    cudaEvent_t ev_fork, ev_join;
};

/* 64-column blocks of unit u's panel (the last panel of a tile row may be shorter). */
static __device__ __forceinline__ uint32_t unit_blocks(const pparams *p, uint32_t u, uint32_t *mt, uint32_t *kb0)
{
    const uint32_t pp = u % p->npanels;
    *mt = u / p->npanels;
    *kb0 = pp * p->pblocks;
    const uint32_t left = p->kblocks - *kb0;
    return left < p->pblocks ? left : p->pblocks;
}

/* The producer's A issue state: next piece (au, ai) to issue; completion cursor (cu, ci) and
 * the counts issued / known complete for the window. */
typedef struct {
    uint32_t au, ai, anpc, amt, akb0;  /* next unit and piece, that unit's pieces, tile row, first block */
    uint32_t cu, ci, cnpc;             /* oldest piece not known complete, and its unit's pieces */
    uint32_t ni, nc;                   /* pieces issued, pieces known complete */
    unsigned long long hb;             /* host bytes issued by this CTA */
} aissue_t;

/* Issues the next piece share of A if that needs no wait (block = 0) or after waiting (1).
 * Returns 1 when a piece went out, 0 when it would have to wait (block = 0) or all are out. */
static __device__ __forceinline__ int a_issue(const pparams *p, aissue_t *st, uint32_t u0, uint32_t u1, uint32_t sA,
                                              uint32_t a_full, uint32_t a_empty, uint32_t rank, int block)
{
    if (st->au >= u1) return 0;
    const uint32_t k = st->au - u0, b = k & 1u, use = k >> 1;
    const uint32_t pbytes = p->kstep * A_BYTES, share = pbytes / p->c;
    if (st->ai == 0) {
        /* a new panel into buffer b: every member's consumers must be done with unit k - 2 */
        if (use) {
            const uint32_t e = a_empty + 8u * b, par = (use - 1u) & 1u;
            if (block)
                ptx_mbar_wait(e, par);
            else if (!ptx_mbar_try_wait(e, par))
                return 0;
        }
        /* unit k - 2's pieces are then complete: the cursor skips them (their barriers are re-armed
         * below, so they must not be waited on by parity any more) */
        while (st->cu + 2u <= st->au) {
            st->nc += st->cnpc - st->ci;
            st->cu++, st->ci = 0;
            if (st->cu < u1) {
                uint32_t mt, kb0;
                st->cnpc = unit_blocks(p, st->cu, &mt, &kb0) / p->kstep;
            }
        }
    }
    /* congestion window: at most `window` pieces of this SM in flight */
    while (st->ni - st->nc >= p->window) {
        const uint32_t kc = st->cu - u0;
        const uint32_t f = a_full + 8u * ((kc & 1u) * PMAXP + st->ci), par = (kc >> 1) & 1u;
        if (block)
            ptx_mbar_wait(f, par);
        else if (!ptx_mbar_try_wait(f, par))
            return 0;
        st->nc++;
        if (++st->ci == st->cnpc) {
            st->cu++, st->ci = 0;
            if (st->cu < u1) {
                uint32_t mt, kb0;
                st->cnpc = unit_blocks(p, st->cu, &mt, &kb0) / p->kstep;
            }
        }
    }
    const uint32_t f = a_full + 8u * (b * PMAXP + st->ai);
    const uint32_t dst = sA + b * (p->pblocks * A_BYTES) + st->ai * pbytes + rank * share;
    const uint16_t *src = p->a + ((size_t)st->amt * p->kblocks + st->akb0 + (size_t)st->ai * p->kstep) * 4096u +
                          (size_t)rank * (share / 2u);
    ptx_mbar_arrive_expect_tx(f, pbytes);
    if (p->c > 1)
        ptx_bulk_g2s_multicast(dst, src, share, f, (uint16_t)((1u << p->c) - 1u));
    else
        ptx_bulk_g2s(dst, src, share, f);
    st->hb += share;
    st->ni++;
    if (++st->ai == st->anpc) {
        st->ai = 0;
        if (++st->au < u1) st->anpc = unit_blocks(p, st->au, &st->amt, &st->akb0) / p->kstep;
    }
    return 1;
}

/* Adds warp q's fragment sums (its share: gemm_layout.h's dak_tile_map_of, dak_frag_row / dak_frag_col) of one 64 x 64 column
 * tile into the accumulator: the kh = 1 warps write the staging tile, the kh = 0 warps add theirs,
 * then all 256 consumer threads issue 16-byte reductions along the rows (C is column-major). */
static __device__ __forceinline__ void panel_epilogue(const pparams *p, float (*acc)[4][4], uint32_t q, uint32_t kh,
                                                      float *stg, uint32_t mt, uint32_t nt)
{
    const uint32_t lane = threadIdx.x & 31u, ctid = threadIdx.x;
    /* the share of dak_warp_tile_of, worked out here rather than held across the caller's loops */
    const dak_tile_map mp = dak_tile_map_of((int)p->N - (int)(nt * 64u), q, (int)p->wgmma), *m = &mp;
#pragma unroll
    for (uint32_t pass = 0; pass < 2; pass++) {
        if (kh == 1u - pass) {
#pragma unroll
            for (uint32_t mi = 0; mi < 2; mi++)
#pragma unroll
                for (uint32_t nj = 0; nj < 4; nj++) {
                    if (mi >= m->MI || nj >= m->nn) continue;
#pragma unroll
                    for (uint32_t e = 0; e < 4; e++) {
                        float *d = stg + dak_frag_col(m, lane, mi, nj, e) * STG_LD + dak_frag_row(m, lane, mi, e);
                        *d = pass ? *d + acc[mi][nj][e] : acc[mi][nj][e];
                    }
                }
        }
        ptx_bar_sync(1, PNCW * 32u);
    }
    const int nvalid = (int)p->N - (int)(nt * 64u);
    const uint32_t nv = nvalid >= 64 ? 64u : (uint32_t)nvalid;
    float *dst = p->acc + (size_t)nt * 64u * p->ldacc + mt * 64u;
    for (uint32_t i = ctid; i < nv * 16u; i += PNCW * 32u) {
        const uint32_t col = i >> 4, r = (i & 15u) * 4u;
        const float4 v = *(const float4 *)(stg + col * STG_LD + r);
        ptx_red_add_v4_f32(dst + (size_t)col * p->ldacc + r, v.x, v.y, v.z, v.w);
    }
    ptx_bar_sync(1, PNCW * 32u); /* the staging tile is free again */
}

__global__ void __launch_bounds__(PNTHREADS, 1)
    k_panel(const __grid_constant__ CUtensorMap tb, const __grid_constant__ pparams p)
{
    extern __shared__ uint8_t smem_raw[];
    uint8_t *sm = (uint8_t *)(((uintptr_t)smem_raw + 1023u) & ~(uintptr_t)1023u);
    /* layout: 2 panel buffers | B ring | staging tile 64 x 68 fp32 | mbarriers:
     * a_full[2][PMAXP], a_empty[2], b_full[bstages], b_empty[bstages] */
    const uint32_t pbuf = p.pblocks * A_BYTES, bslot = p.kstep * p.bn_box * 128u;
    const uint32_t sA = ptx_smem(sm), sB = sA + 2u * pbuf;
    float *stg = (float *)(sm + 2u * pbuf + p.bstages * bslot);
    const uint32_t bars = ptx_smem(stg) + 64u * STG_LD * 4u;
    const uint32_t a_full = bars, a_empty = bars + 16u * PMAXP, b_full = a_empty + 16u,
                   b_empty = b_full + 8u * p.bstages;
    const uint32_t c = p.c, lane = threadIdx.x & 31u;
    const uint32_t warp = __shfl_sync(0xffffffffu, threadIdx.x >> 5, 0); /* visibly uniform (wgmma, C7518) */
    /* through a shuffle: visibly warp-uniform (wgmma on a "divergent" path is serialised, C7518) */
    const uint32_t rank = c > 1 ? __shfl_sync(0xffffffffu, ptx_cluster_rank(), 0) : 0u;
    const uint32_t cid = blockIdx.x / c, ncl = gridDim.x / c;
    const uint32_t u0 = (uint32_t)((unsigned long long)cid * p.units / ncl);
    const uint32_t u1 = (uint32_t)((unsigned long long)(cid + 1u) * p.units / ncl);
    /* the tiled kernel (a programmatic dependent, dak_gemm_run) may start once every cluster here is placed */
    ptx_griddep_launch_dependents();
    if (threadIdx.x == 0) {
        for (uint32_t i = 0; i < 2u * PMAXP; i++) ptx_mbar_init(a_full + 8u * i, 1);
        for (uint32_t i = 0; i < 2u; i++) ptx_mbar_init(a_empty + 8u * i, PNCW * c);
        for (uint32_t s = 0; s < p.bstages; s++) {
            ptx_mbar_init(b_full + 8u * s, 1);
            ptx_mbar_init(b_empty + 8u * s, PNCW);
        }
        ptx_fence_mbar_init();
    }
    dak_group_sync(c);

    if (warp == PNCW) {
        /* ---- producer ---- */
        if (lane == 0 && u0 < u1) {
            ptx_prefetch_tensormap(&tb);
            aissue_t st;
            memset(&st, 0, sizeof st);
            st.au = st.cu = u0;
            st.anpc = st.cnpc = unit_blocks(&p, u0, &st.amt, &st.akb0) / p.kstep;
            uint32_t s = 0, ph = 0;
            const uint32_t bbytes = bslot;
            for (uint32_t u = u0; u < u1; u++) {
                while (st.au <= u) a_issue(&p, &st, u0, u1, sA, a_full, a_empty, rank, 1);
                uint32_t mt, kb0;
                const uint32_t npc = unit_blocks(&p, u, &mt, &kb0) / p.kstep;
                for (uint32_t nt = rank; nt < p.ntiles; nt += c)
                    for (uint32_t i = 0; i < npc; i++) {
                        /* the next unit's panel, as far as its buffer and the window allow */
                        while (st.au <= u + 1u && a_issue(&p, &st, u0, u1, sA, a_full, a_empty, rank, 0)) {
                        }
                        ptx_mbar_wait(b_empty + 8u * s, ph ^ 1u);
                        const uint32_t fb = b_full + 8u * s;
                        ptx_mbar_arrive_expect_tx(fb, bbytes);
                        const int blk = (int)(kb0 + i * p.kstep), col = (int)(nt * 64u);
                        if (p.b_perm)
                            ptx_tma_3d_g2s(sB + s * bslot, &tb, 0, col, blk, fb);
                        else
                            ptx_tma_3d_g2s(sB + s * bslot, &tb, 0, blk, col, fb);
                        if (++s == p.bstages) s = 0, ph ^= 1u;
                    }
            }
            if (st.hb) atomicAdd(p.host_bytes, st.hb);
        }
        __syncwarp();
    } else {
        /* ---- consumers: the tiled kernel's layouts (gemm_split.cu): kh = warp / 4 picks the K half
         * of every block; narrow tiles (<= 32 valid columns) 16 rows x all columns per warp, wide
         * tiles 32 rows x 32 columns ---- */
        const uint32_t kh = warp >> 2, q = warp & 3u;
        uint32_t s = 0, ph = 0;
        for (uint32_t u = u0; u < u1; u++) {
            const uint32_t k = u - u0, b = k & 1u, apar = (k >> 1) & 1u;
            uint32_t mt, kb0;
            const uint32_t npc = unit_blocks(&p, u, &mt, &kb0) / p.kstep;
            const uint32_t aBase = sA + b * pbuf, fa = a_full + 8u * (b * PMAXP);
            if (rank >= p.ntiles) /* no column tile here: still see the panel arrive before releasing it */
                for (uint32_t i = 0; i < npc; i++) ptx_mbar_wait(fa + 8u * i, apar);
            for (uint32_t nt = rank; nt < p.ntiles; nt += c) {
                const dak_warp_tile wt = dak_warp_tile_of((int)p.N - (int)(nt * 64u), q, lane, (int)p.wgmma);
                const bool wide = wt.wide, wg = wt.wg; /* uniform over the CTA */
                const uint32_t nb0 = wt.nb0, nn = wt.nn, arow = wt.arow;
                float acc[2][4][4];
                if (wg) {
                    /* wgmma on its own accumulator registers (shared with the mma.sync path, ptxas
                     * guards every mma.sync with a warpgroup wait: C7517).  B slot `ps` is released
                     * once the next piece's group is committed and its own group complete
                     * (wait_group 1); the A panel stays until the unit's end. */
                    float w[2][4][4];
                    dak_acc_zero(w);
                    uint32_t ps = 0;
                    bool pend = false;
                    for (uint32_t i = 0; i < npc; i++) {
                        ptx_mbar_wait(fa + 8u * i, apar);
                        ptx_mbar_wait(b_full + 8u * s, ph);
                        if (!p.nomath) {
                            consume_wgmma(w, aBase + i * p.kstep * A_BYTES, sB + s * bslot, p.kstep, p.b_rk, kh, false,
                                          dak_wg_n8_groups(p.bn_box));
                            ptx_wgmma_wait1(); /* the previous piece's group is complete */
                        }
                        __syncwarp();
                        if (pend && lane == 0) ptx_mbar_arrive(b_empty + 8u * ps);
                        pend = true, ps = s;
                        if (++s == p.bstages) s = 0, ph ^= 1u;
                    }
                    wgmma_drain(w);
                    __syncwarp();
                    if (pend && lane == 0) ptx_mbar_arrive(b_empty + 8u * ps);
                    dak_acc_copy(acc, w);
                } else {
                    dak_acc_zero(acc);
                    for (uint32_t i = 0; i < npc; i++) {
                        ptx_mbar_wait(fa + 8u * i, apar);
                        ptx_mbar_wait(b_full + 8u * s, ph);
                        if (!p.nomath) {
                            const uint32_t aS = aBase + i * p.kstep * A_BYTES, bS = sB + s * bslot;
                            if (wide)
                                consume_wide(acc, aS, bS, p.kstep, p.b_rn, p.b_rk, arow, kh, nb0, nn);
                            else
                                consume_narrow(acc, aS, bS, p.kstep, p.b_rn, p.b_rk, arow, kh, nn);
                        }
                        __syncwarp();
                        if (lane == 0) ptx_mbar_arrive(b_empty + 8u * s);
                        if (++s == p.bstages) s = 0, ph ^= 1u;
                    }
                }
                if (p.nomath) continue;
                if (!wide) {
#pragma unroll
                    for (uint32_t nj = 0; nj < 4; nj++)
#pragma unroll
                        for (uint32_t e = 0; e < 4; e++) acc[0][nj][e] += acc[1][nj][e];
                }
                panel_epilogue(&p, acc, q, kh, stg, mt, nt);
            }
            /* this warp is done with the panel buffer: tell every member's producer */
            __syncwarp();
            if (c > 1) {
                if (lane < c) ptx_mbar_arrive_cluster(a_empty + 8u * b, lane);
            } else if (lane == 0) {
                ptx_mbar_arrive(a_empty + 8u * b);
            }
        }
    }
    /* no CTA may exit while another member can still multicast into it or arrive on its barriers */
    if (c > 1) ptx_cluster_sync();
}

/* bf16 C from the fp32 workspace: rows [0, rows) of every column (rows a multiple of 4). */
__global__ void k_panel_bf16(const float *ws, __nv_bfloat16 *C, uint32_t rows, uint32_t M, uint32_t N)
{
    const uint32_t q = rows / 4u;
    const size_t n = (size_t)q * N;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const size_t col = i / q, r = (i % q) * 4u;
        const float4 v = __ldcs((const float4 *)(ws + col * rows + r));
        __nv_bfloat162 *d = (__nv_bfloat162 *)(C + col * M + r);
        d[0] = __floats2bfloat162_rn(v.x, v.y);
        d[1] = __floats2bfloat162_rn(v.z, v.w);
    }
}

/* ---- host side -------------------------------------------------------------- */

extern "C" void dak_panel_free(dak_panel *d)
{
    if (!d) return;
    if (d->side) cudaStreamDestroy(d->side);
    if (d->ev_fork) cudaEventDestroy(d->ev_fork);
    if (d->ev_join) cudaEventDestroy(d->ev_join);
    free(d);
}

extern "C" int dak_panel_prepare(dak_gemm_ctx *ctx, const dak_tiered *A, const uint16_t *B, void *C,
                                 dak_gemm_plan *p, const dak_gemm_opts *o, unsigned long long *hb,
                                 dak_panel **out, cm_err *err)
{
    *out = NULL;
    dak_panel_plan *q = &p->panel;
    if (!q->on || !A->rows_host) return cm_fail(err, "gemm: panel path: no host rows in the plan");
    if (!A->packed) return cm_fail(err, "gemm: the panel path needs packed A (dak_pack_rowmajor)");
    if (q->smem_bytes > ctx->smem_optin)
        return cm_fail(err, "gemm: panel kernel needs %u bytes of shared memory, the device allows %zu", q->smem_bytes,
                       ctx->smem_optin);
    dak_panel *d = (dak_panel *)calloc(1, sizeof *d);
    if (!d) return cm_fail(err, "gemm: out of memory");
    cudaError_t e = cudaFuncSetAttribute(k_panel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)q->smem_bytes);
    if (e == cudaSuccess && q->cluster > 8)
        e = cudaFuncSetAttribute(k_panel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (e != cudaSuccess) {
        dak_panel_free(d);
        if (q->cluster > 8)
            return cm_fail(err, "gemm: panel cluster %u refused by the device (%s); use panel_cluster 8 or less",
                           q->cluster, cudaGetErrorString(e));
        return cm_fail(err, "gemm: panel kernel attributes: %s", cudaGetErrorString(e));
    }
    /* the cluster must fit at least once (16 is non-portable; 8 may not fit with 227 KiB either
     * on a partitioned device); no more clusters than fit at once (a cluster left for a second
     * wave would run its whole range of units alone at the end): the grid shrinks, the units are
     * split over the clusters launched */
    {
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(q->ctas, 1, 1);
        cfg.blockDim = dim3(PNTHREADS, 1, 1);
        cfg.dynamicSmemBytes = q->smem_bytes;
        cudaLaunchAttribute at;
        at.id = cudaLaunchAttributeClusterDimension;
        at.val.clusterDim.x = q->cluster, at.val.clusterDim.y = 1, at.val.clusterDim.z = 1;
        cfg.attrs = &at, cfg.numAttrs = 1;
        int ncl = 0;
        e = cudaOccupancyMaxActiveClusters(&ncl, (const void *)k_panel, &cfg);
        if (e != cudaSuccess || ncl < 1) {
            cudaGetLastError();
            dak_panel_free(d);
            return cm_fail(err, "gemm: panel cluster of %u CTAs with %u bytes of shared memory cannot be scheduled (%s)%s",
                           q->cluster, q->smem_bytes, e != cudaSuccess ? cudaGetErrorString(e) : "0 active clusters",
                           q->cluster > 8 ? "; use panel_cluster 8 or less" : "");
        }
        if ((uint32_t)ncl < q->ctas / q->cluster) {
            uint32_t was = q->ctas / q->cluster;
            q->ctas = (uint32_t)ncl * q->cluster;
            q->balance = ((double)q->units / ncl) / ((q->units + ncl - 1) / ncl);
            static int told;
            if (!told++)
                fprintf(stderr, "dak gemm: note: %u panel clusters of %u planned, %d fit at once: launching %d\n", was,
                        q->cluster, ncl, ncl);
        }
    }
    /* B as 3-D {64, N, K/64} (strides 2K B, 128 B), box {64, bn_box, kstep}: [block][n][64] in shared
     * memory; if the driver refuses the decreasing strides, {64, K/64, N} ([n][block][64]) */
    int b_perm = 1;
    {
        cuuint64_t dm[3] = {64, p->N, A->K / 64u};
        cuuint64_t sd[2] = {(cuuint64_t)A->K * 2u, 128};
        cuuint32_t bx[3] = {64, p->bn_box, q->kstep};
        cm_err e2;
        if (dak_encode_3d(ctx, &d->tb, B, dm, sd, bx, &e2)) {
            b_perm = 0;
            cuuint64_t dm2[3] = {64, A->K / 64u, p->N};
            cuuint64_t sd2[2] = {128, (cuuint64_t)A->K * 2u};
            cuuint32_t bx2[3] = {64, q->kstep, p->bn_box};
            if (dak_encode_3d(ctx, &d->tb, B, dm2, sd2, bx2, err)) {
                dak_panel_free(d);
                return -1;
            }
        }
    }
    if (dak_ctx_grow(ctx, (void **)&ctx->pws, &ctx->pws_bytes, q->ws_bytes, 0, err)) {
        dak_panel_free(d);
        return -1;
    }
    d->fork = p->hbm.ctas > 0 && o->diag_panel_fork; /* else the tiled kernel follows in-stream (dak_gemm_run) */
    if (d->fork) {
        e = cudaStreamCreateWithFlags(&d->side, cudaStreamNonBlocking);
        if (e == cudaSuccess) e = cudaEventCreateWithFlags(&d->ev_fork, cudaEventDisableTiming);
        if (e == cudaSuccess) e = cudaEventCreateWithFlags(&d->ev_join, cudaEventDisableTiming);
        if (e != cudaSuccess) {
            dak_panel_free(d);
            return cm_fail(err, "gemm: panel stream and events: %s", cudaGetErrorString(e));
        }
    }
    pparams *k = &d->kp;
    memset(k, 0, sizeof *k);
    k->M = A->M, k->N = p->N, k->kblocks = A->K / 64u, k->kstep = q->kstep, k->pblocks = q->pblocks;
    k->npanels = q->npanels, k->units = q->units, k->ntiles = p->ntiles, k->c = q->cluster;
    k->bstages = q->bstages, k->window = q->window, k->bn_box = p->bn_box;
    k->b_perm = (uint32_t)b_perm;
    k->b_rn = b_perm ? 1u : q->kstep;
    k->b_rk = b_perm ? p->bn_box : 1u;
    k->nomath = (uint32_t)(o->diag_nomath != 0);
    k->wgmma = p->wgmma;
    if (k->wgmma && !b_perm && q->kstep > 1) {
        /* [n][block][64] with pieces of 2 blocks is no canonical operand layout */
        if (o->wgmma == 1) {
            dak_panel_free(d);
            return cm_fail(err, "gemm: panel path: wgmma 1 needs B as [block][n][64], which the driver refused here; "
                                "set wgmma 0");
        }
        k->wgmma = 0; /* auto: mma.sync */
    }
    k->a = A->host_dev;
    d->out_bf16 = o->out_bf16 != 0;
    d->acc = d->out_bf16 ? ctx->pws : (float *)C;
    k->acc = d->acc;
    k->ldacc = d->out_bf16 ? A->rows_host : A->M;
    k->host_bytes = hb;
    d->grid = q->ctas, d->c = q->cluster, d->smem = q->smem_bytes;
    d->C = C, d->M = A->M, d->N = p->N, d->rows_host = A->rows_host;
    *out = d;
    return 0;
}

/* Zeroes the accumulator and starts the panel kernel on `stream` (the tiled kernel follows as its
 * programmatic dependent), or with diag_panel_fork on a forked stream beside it. */
extern "C" int dak_panel_begin(dak_panel *d, cudaStream_t stream, cm_err *err)
{
    if (d->out_bf16)
        DAK_CU(cudaMemsetAsync(d->acc, 0, (size_t)d->rows_host * d->N * 4u, stream), err);
    else
        DAK_CU(cudaMemset2DAsync(d->acc, (size_t)d->M * 4u, 0, (size_t)d->rows_host * 4u, d->N, stream), err);
    cudaStream_t st = stream;
    if (d->fork) {
        DAK_CU(cudaEventRecord(d->ev_fork, stream), err);
        DAK_CU(cudaStreamWaitEvent(d->side, d->ev_fork, 0), err);
        st = d->side;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(d->grid, 1, 1);
    cfg.blockDim = dim3(PNTHREADS, 1, 1);
    cfg.dynamicSmemBytes = d->smem;
    cfg.stream = st;
    cudaLaunchAttribute at;
    at.id = cudaLaunchAttributeClusterDimension;
    at.val.clusterDim.x = d->c, at.val.clusterDim.y = 1, at.val.clusterDim.z = 1;
    cfg.attrs = &at, cfg.numAttrs = 1;
    void *args[2] = {&d->tb, &d->kp};
    DAK_CU(cudaLaunchKernelExC(&cfg, (const void *)k_panel, args), err);
    if (d->fork) DAK_CU(cudaEventRecord(d->ev_join, d->side), err);
    return 0;
}

/* Joins the panel kernel back into `stream`; bf16 C: converts the workspace. */
extern "C" int dak_panel_end(dak_panel *d, cudaStream_t stream, cm_err *err)
{
    if (d->fork) DAK_CU(cudaStreamWaitEvent(stream, d->ev_join, 0), err);
    if (d->out_bf16) {
        size_t n = (size_t)d->rows_host / 4u * d->N;
        unsigned blocks = (unsigned)((n + 255u) / 256u);
        if (blocks > 4096u) blocks = 4096u;
        k_panel_bf16<<<blocks, 256, 0, stream>>>(d->acc, (__nv_bfloat16 *)d->C, d->rows_host, d->M, d->N);
        DAK_CU(cudaGetLastError(), err);
    }
    return 0;
}
