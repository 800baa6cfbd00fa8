/* The split GEMM's tensor-core consumers (mma.sync bf16 on ldmatrix fragments, and for wide
 * tiles with opts.wgmma the warpgroup MMA reading the slot in place), shared by the tiled kernel
 * (gemm_split.cu) and the panel kernel (gemm_panel.cu); fragment maps in dak/gemm_layout.h.  A: kstep blocks of
 * 64 rows x 64 columns (8 KiB, 128-byte swizzle) from aS; B row of (column n, block bk):
 * n * rn + bk * rk (128-byte rows, swizzled).  Include only from .cu files. */
#ifndef DAK_GEMM_TILE_CUH
#define DAK_GEMM_TILE_CUH

#include <stdint.h>

#include "common/ptx.cuh"
#include "dak/gemm_layout.h"

#define A_BYTES DAK_A_BLOCK     /* 64 rows x 64 bf16 */

/* A consumer warp's share of one 64-column tile whose first `nvalid` columns are real
 * (<= 0: none), the mapping of include/dak/gemm_layout.h.  Narrow tiles (at most 4 valid n8
 * groups): warp q takes rows 16q..16q+15 and every n8 group; wide tiles on mma.sync: rows
 * 32 (q mod 2).. and n8 groups 4 (q div 2)..; wide tiles on wgmma (wg_on): rows 16q.. and all 8
 * n8 groups (the wgmma accumulator layout).  The K half kh of every block is split between
 * warps w and w + 4 (the two warpgroups) either way. */
typedef struct {
    uint32_t nv8;   /* valid n8 column groups of the tile, 0..8 (uniform over the CTA) */
    bool wide;      /* nv8 > 4 */
    bool wg;        /* wide and through wgmma (uniform over the CTA) */
    uint32_t MI;    /* fragments a per warp in the epilogue: 2 wide, 1 narrow */
    uint32_t nb0;   /* first n8 group of this warp */
    uint32_t nn;    /* n8 groups per fragment a */
    uint32_t arow;  /* this lane's ldmatrix row of A (the epilogue's fragment positions: gemm_layout.h's map) */
} dak_warp_tile;

static __device__ __forceinline__ dak_warp_tile dak_warp_tile_of(int nvalid, uint32_t q, uint32_t lane, int wg_on)
{
    const dak_tile_map m = dak_tile_map_of(nvalid, q, wg_on);
    dak_warp_tile t;
    t.nv8 = m.nv8;
    t.wide = m.wide != 0;
    t.wg = m.wg != 0;
    t.MI = m.MI;
    t.nb0 = m.nb0;
    t.nn = m.nn;
    t.arow = m.row16 + (lane & 15u);
    return t;
}

/* The ldmatrix.x4 lane addresses of the mma.sync m16n8k16 fragments (every lane names one 16-byte row; the chunk is
 * its 16-byte column in a 128-byte swizzled row).  A, 16 rows x one k16 step: the lane's row (arow: lane & 15 of the
 * warp's rows), chunk ldm_a_chunk.  B, the n8 tiles g0 and g0 + 1 (16 columns) x one k16 step, rows n-major: column
 * ldm_b_col, chunk ldm_b_chunk (the four 8 x 8 matrices are b0 / b1 of the two n8 tiles).  One place for the consumers
 * below (consume_narrow, narrow_offs_of, consume_wide, and narrow1's A; narrow1's B x4 covers one n8 tile's four
 * chunks). */
static __device__ __forceinline__ uint32_t ldm_a_chunk(uint32_t k16, uint32_t lane) { return k16 * 2u + (lane >> 4); }
static __device__ __forceinline__ uint32_t ldm_b_col(uint32_t g0, uint32_t lane)
{
    return g0 * 8u + (lane & 7u) + ((lane >> 4) << 3);
}
static __device__ __forceinline__ uint32_t ldm_b_chunk(uint32_t k16, uint32_t lane)
{
    return k16 * 2u + ((lane >> 3) & 1u);
}

/* Zeroes a consumer's accumulator: narrow [k16 parity][nj], wide [mi][nj]. */
static __device__ __forceinline__ void dak_acc_zero(float (*acc)[4][4])
{
#pragma unroll
    for (uint32_t a = 0; a < 2; a++)
#pragma unroll
        for (uint32_t b = 0; b < 4; b++)
#pragma unroll
            for (uint32_t e = 0; e < 4; e++) acc[a][b][e] = 0.f;
}

/* Copies a consumer's accumulator (the wgmma path keeps its own array, w, so that
 * the compiler does not tie the mma.sync accumulator registers to the wgmma ones). */
static __device__ __forceinline__ void dak_acc_copy(float (*acc)[4][4], float (*const w)[4][4])
{
#pragma unroll
    for (uint32_t a = 0; a < 2; a++)
#pragma unroll
        for (uint32_t b = 0; b < 4; b++)
#pragma unroll
            for (uint32_t e = 0; e < 4; e++) acc[a][b][e] = w[a][b][e];
}

/* A consumer warp hands ring slot `bar_empty_s` back, after all its lanes are done with it: to
 * this CTA's producer, or with multicast to every member's (c lanes arrive at once). */
static __device__ __forceinline__ void slot_release(uint32_t bar_empty_s, uint32_t c, uint32_t lane)
{
    __syncwarp();
    if (c > 1) {
        if (lane < c) ptx_mbar_arrive_cluster(bar_empty_s, lane);
    } else if (lane == 0) {
        ptx_mbar_arrive(bar_empty_s);
    }
}

/* The barrier after mbarrier init: the whole cluster when the CTA multicasts with
 * c - 1 others (their copies and remote arrives target this CTA's barriers), else
 * the block. */
static __device__ __forceinline__ void dak_group_sync(uint32_t c)
{
    if (c > 1)
        ptx_cluster_sync();
    else
        __syncthreads();
}

/* A slot of a one-n8-tile narrow column tile (N <= 8), in three steps that the PDL stash of
 * gemm_split.cu also takes apart (A into registers before griddepcontrol.wait, B after it from
 * elsewhere): this warp's A fragments (16 rows at arow x the K half kh of each of the kstep
 * blocks), the B fragments (B row of column n, block bk at n * rn + bk * rk), the 2 kstep mma.
 * 48 registers of fragments a slot: every load goes out before the first mma, so that the
 * ldmatrix latencies overlap, and one x4 gives both k16 steps of B (no padded columns). */
typedef struct {
    uint32_t a[4][2][4];
} narrow1_a;
typedef struct {
    uint32_t b[4][2][2];
} narrow1_b;

static __device__ __forceinline__ void narrow1_load_a_blk(narrow1_a *f, uint32_t aS, uint32_t bk, uint32_t arow,
                                                          uint32_t kh)
{
    const uint32_t lane = threadIdx.x & 31u;
#pragma unroll
    for (uint32_t h = 0; h < 2; h++)
        ptx_ldmatrix_x4(aS + bk * A_BYTES + ptx_swz128(arow, ldm_a_chunk(2u * kh + h, lane)), &f->a[bk][h][0],
                        &f->a[bk][h][1], &f->a[bk][h][2], &f->a[bk][h][3]);
}

/* narrow1's B x4: the lane's column (lane & 7, its B row at column x rn) and 16-byte chunk (the four k8 chunks of
 * the warp's K half kh) */
static __device__ __forceinline__ uint32_t narrow1_b_chunk(uint32_t kh, uint32_t lane) { return 4u * kh + (lane >> 3); }

static __device__ __forceinline__ void narrow1_load_b_blk(narrow1_b *f, uint32_t bS, uint32_t bk, uint32_t rn,
                                                          uint32_t rk, uint32_t kh)
{
    const uint32_t lane = threadIdx.x & 31u;
    ptx_ldmatrix_x4(bS + ptx_swz128((lane & 7u) * rn + bk * rk, narrow1_b_chunk(kh, lane)), &f->b[bk][0][0],
                    &f->b[bk][0][1], &f->b[bk][1][0], &f->b[bk][1][1]);
}

static __device__ __forceinline__ void narrow1_load_a(narrow1_a *f, uint32_t aS, uint32_t kstep, uint32_t arow,
                                                      uint32_t kh)
{
#pragma unroll
    for (uint32_t bk = 0; bk < 4; bk++)
        if (bk < kstep) narrow1_load_a_blk(f, aS, bk, arow, kh);
}

static __device__ __forceinline__ void narrow1_load_b(narrow1_b *f, uint32_t bS, uint32_t kstep, uint32_t rn,
                                                      uint32_t rk, uint32_t kh)
{
#pragma unroll
    for (uint32_t bk = 0; bk < 4; bk++)
        if (bk < kstep) narrow1_load_b_blk(f, bS, bk, rn, rk, kh);
}

/* narrow1's per-lane byte offsets inside a slot's block 0 (A: the two k16 steps of the warp's K half kh; B: its one
 * x4), worked out once a tile: A's blocks are whole swizzle periods apart (A_BYTES) and, with rk a multiple of 8, B's
 * rows of block bk keep the 128-byte swizzle's row phase, so block bk's offsets are these plus bk A_BYTES and bk rk
 * rows.  The per-slot loads then need no swizzle arithmetic (k_split's consumers took 1000-1300 cycles a slot a warp
 * at N <= 8 with it; k_split_n8 on these ran 0.3-0.6 us a GEMM faster as PDL graphs on the H200, twenty-sixth
 * session). */
typedef struct {
    uint32_t a[2], b;
} narrow1_offs;

static __device__ __forceinline__ narrow1_offs narrow1_offs_of(uint32_t arow, uint32_t rn, uint32_t kh)
{
    const uint32_t lane = threadIdx.x & 31u;
    narrow1_offs o;
#pragma unroll
    for (uint32_t h = 0; h < 2; h++) o.a[h] = ptx_swz128(arow, ldm_a_chunk(2u * kh + h, lane));
    o.b = ptx_swz128((lane & 7u) * rn, narrow1_b_chunk(kh, lane));
    return o;
}

/* acc[h][0]: the k16 step of parity h (two chains) */
static __device__ __forceinline__ void narrow1_mma(float (*acc)[4][4], const narrow1_a *fa, const narrow1_b *fb,
                                                   uint32_t kstep)
{
#pragma unroll
    for (uint32_t bk = 0; bk < 4; bk++) {
        if (bk >= kstep) continue;
#pragma unroll
        for (uint32_t h = 0; h < 2; h++) ptx_mma_bf16_16816(acc[h][0], fa->a[bk][h], fb->b[bk][h][0], fb->b[bk][h][1]);
    }
}

/* narrow1's slot on offsets (narrow1_offs_of; rk128: B's block stride in bytes, rk x 128), a block at a time (12
 * fragment registers, not narrow1's 48: with those and the offsets held ptxas spilled) */
static __device__ __forceinline__ void consume_narrow1_offs(float (*acc)[4][4], uint32_t aS, uint32_t bS, uint32_t kstep,
                                                            uint32_t rk128, const narrow1_offs *o)
{
#pragma unroll 1
    for (uint32_t bk = 0; bk < kstep; bk++, aS += A_BYTES, bS += rk128) {
        uint32_t a[2][4], b[2][2];
#pragma unroll
        for (uint32_t h = 0; h < 2; h++) ptx_ldmatrix_x4(aS + o->a[h], &a[h][0], &a[h][1], &a[h][2], &a[h][3]);
        ptx_ldmatrix_x4(bS + o->b, &b[0][0], &b[0][1], &b[1][0], &b[1][1]);
#pragma unroll
        for (uint32_t h = 0; h < 2; h++) ptx_mma_bf16_16816(acc[h][0], a[h], b[h][0], b[h][1]);
    }
}

/* One ring slot of a narrow column tile (at most 4 valid n8 tiles): this warp's 16 rows
 * (arow addresses them) times the K half `kh` of every 64-column block, the two k16 steps
 * into separate accumulators so that their mma chains overlap.  N <= 8 (one n8 tile): the
 * narrow1 steps above.  B row of (column n, block bk) in the slot: n * rn + bk * rk. */
static __device__ __forceinline__ void consume_narrow(float (*acc)[4][4], uint32_t aS, uint32_t bS, uint32_t kstep,
                                                      uint32_t rn, uint32_t rk, uint32_t arow, uint32_t kh,
                                                      uint32_t nn)
{
    const uint32_t lane = threadIdx.x & 31u;
    if (nn == 1) {
        narrow1_a fa;
        narrow1_b fb;
#pragma unroll
        for (uint32_t bk = 0; bk < 4; bk++)
            if (bk < kstep) narrow1_load_a_blk(&fa, aS, bk, arow, kh), narrow1_load_b_blk(&fb, bS, bk, rn, rk, kh);
        narrow1_mma(acc, &fa, &fb, kstep);
        return;
    }
#pragma unroll 1
    for (uint32_t bk = 0; bk < kstep; bk++) {
        const uint32_t aB = aS + bk * A_BYTES;
        uint32_t af[2][4], bf[2][4][2];
#pragma unroll
        for (uint32_t h = 0; h < 2; h++) {
            ptx_ldmatrix_x4(aB + ptx_swz128(arow, ldm_a_chunk(2u * kh + h, lane)), &af[h][0], &af[h][1],
                            &af[h][2], &af[h][3]);
#pragma unroll
            for (uint32_t pj = 0; pj < 2; pj++) {
                if (2u * pj >= nn) continue;
                const uint32_t n = ldm_b_col(2u * pj, lane), ch = ldm_b_chunk(2u * kh + h, lane);
                ptx_ldmatrix_x4(bS + ptx_swz128(n * rn + bk * rk, ch), &bf[h][2 * pj][0], &bf[h][2 * pj][1],
                                &bf[h][2 * pj + 1][0], &bf[h][2 * pj + 1][1]);
            }
        }
#pragma unroll
        for (uint32_t h = 0; h < 2; h++)
#pragma unroll
            for (uint32_t nj = 0; nj < 4; nj++)
                if (nj < nn) ptx_mma_bf16_16816(acc[h][nj], af[h], bf[h][nj][0], bf[h][nj][1]);
    }
}

/* consume_narrow's per-lane byte offsets inside a 64-column block (A: the two k16 steps of the warp's K half; B: the
 * same two times its two ldmatrix.x4 of n8 pairs), worked out once a tile instead of every block of every slot.  In
 * the n-major B layout (b_perm: rows of block bk from bk * rk, rk = the B box, a multiple of 8) the 128-byte
 * swizzle's row phase of B does not depend on bk, so block bk's B offsets are these plus bk * rk rows.  A box of 24
 * rows (opts.bn24, N 17-24) has three n8 tiles: the second pair's fourth tile reads the third's rows again (its
 * columns of C are not stored), so no lane reads past the block. */
typedef struct {
    uint32_t a[2], b[2][2];
} narrow_offs;

static __device__ __forceinline__ narrow_offs narrow_offs_of(uint32_t arow, uint32_t rn, uint32_t kh, uint32_t box)
{
    const uint32_t lane = threadIdx.x & 31u;
    narrow_offs o;
#pragma unroll
    for (uint32_t h = 0; h < 2; h++) {
        o.a[h] = ptx_swz128(arow, ldm_a_chunk(2u * kh + h, lane));
#pragma unroll
        for (uint32_t pj = 0; pj < 2; pj++) {
            uint32_t n = ldm_b_col(2u * pj, lane);
            if (n >= box) n -= 8u;
            o.b[h][pj] = ptx_swz128(n * rn, ldm_b_chunk(2u * kh + h, lane));
        }
    }
    return o;
}

/* consume_narrow for 2-4 n8 tiles (N 9..32) on precomputed offsets (narrow_offs_of; B rows of block bk at
 * bS + bk * rk128 bytes): the same loads and mma, 25 instructions a block instead of 46 and 156 a slot instead of
 * 285 (the address arithmetic, and rk's parameter load, were redone for every ldmatrix; Nsight Compute, fifteenth
 * session). */
static __device__ __forceinline__ void consume_narrow_offs(float (*acc)[4][4], uint32_t aS, uint32_t bS, uint32_t kstep,
                                                           uint32_t rk128, const narrow_offs *o, uint32_t nn)
{
#pragma unroll 1
    for (uint32_t bk = 0; bk < kstep; bk++, aS += A_BYTES, bS += rk128) {
        uint32_t af[2][4], bf[2][4][2];
#pragma unroll
        for (uint32_t h = 0; h < 2; h++) {
            ptx_ldmatrix_x4(aS + o->a[h], &af[h][0], &af[h][1], &af[h][2], &af[h][3]);
#pragma unroll
            for (uint32_t pj = 0; pj < 2; pj++)
                if (2u * pj < nn)
                    ptx_ldmatrix_x4(bS + o->b[h][pj], &bf[h][2 * pj][0], &bf[h][2 * pj][1], &bf[h][2 * pj + 1][0],
                                    &bf[h][2 * pj + 1][1]);
        }
#pragma unroll
        for (uint32_t h = 0; h < 2; h++)
#pragma unroll
            for (uint32_t nj = 0; nj < 4; nj++)
                if (nj < nn) ptx_mma_bf16_16816(acc[h][nj], af[h], bf[h][nj][0], bf[h][nj][1]);
    }
}

/* One ring slot of a wide column tile: this warp's 32 rows (arow addresses the first 16)
 * times n8 tiles nb0..nb0+nn-1 times the K half `kh` of every block: per k16 step two A
 * and up to two B fragments feed up to 8 independent mma.  Each A fragment is read by two
 * warps and each B fragment by two (16 rows x 32 columns per warp read B four times). */
static __device__ __forceinline__ void consume_wide(float (*acc)[4][4], uint32_t aS, uint32_t bS, uint32_t kstep,
                                                    uint32_t rn, uint32_t rk, uint32_t arow, uint32_t kh,
                                                    uint32_t nb0, uint32_t nn)
{
    const uint32_t lane = threadIdx.x & 31u;
#pragma unroll 1
    for (uint32_t bk = 0; bk < kstep; bk++) {
        const uint32_t aB = aS + bk * A_BYTES;
#pragma unroll
        for (uint32_t h = 0; h < 2; h++) {
            const uint32_t k16 = 2u * kh + h;
            uint32_t af[2][4], bf[4][2];
#pragma unroll
            for (uint32_t mi = 0; mi < 2; mi++)
                ptx_ldmatrix_x4(aB + ptx_swz128(arow + 16u * mi, ldm_a_chunk(k16, lane)), &af[mi][0], &af[mi][1],
                                &af[mi][2], &af[mi][3]);
#pragma unroll
            for (uint32_t pj = 0; pj < 2; pj++) {
                if (2u * pj >= nn) continue;
                const uint32_t n = ldm_b_col(nb0 + 2u * pj, lane), ch = ldm_b_chunk(k16, lane);
                ptx_ldmatrix_x4(bS + ptx_swz128(n * rn + bk * rk, ch), &bf[2 * pj][0], &bf[2 * pj][1],
                                &bf[2 * pj + 1][0], &bf[2 * pj + 1][1]);
            }
#pragma unroll
            for (uint32_t mi = 0; mi < 2; mi++)
#pragma unroll
                for (uint32_t nj = 0; nj < 4; nj++)
                    if (nj < nn) ptx_mma_bf16_16816(acc[mi][nj], af[mi], bf[nj][0], bf[nj][1]);
        }
    }
}

/* One ring slot of a wide column tile through wgmma (opts.wgmma): the warpgroup kh (warps 4 kh ..
 * 4 kh + 3, all of them calling) takes the K half kh of every block, 2 k16 steps per block (or,
 * with `full`, the whole K of every block, 4 k16 steps: the 128-row tiles of gemm_split.cu, where
 * aS is this warpgroup's own 64-row box), each
 * one m64n<8 wn>k16 reading the slot's A block and B rows in place through descriptors (the B box
 * is 8 wn rows, 64 but at N 33..56 (opts.bnw); rows past N are zero-filled by TMA; the registers of
 * the groups past wn stay as they were, zero).  Issues and commits one
 * group; the caller waits (wgmma.wait_group) before it releases the slot or reads acc.  acc flat
 * = the wgmma accumulator (gemm_layout.h).  Every branch around it must be visibly warp-uniform
 * (values through __shfl_sync), or ptxas serialises the wgmma (C7518). */
static __device__ __forceinline__ void consume_wgmma_n(float (*acc)[4][4], uint32_t aS, uint32_t bS, uint32_t kstep,
                                                       uint32_t rk, uint32_t kh, bool full, const uint32_t wn)
{
    float *d = &acc[0][0][0];
    const uint32_t k0 = full ? 0u : 2u * kh, nk = full ? 4u : 2u;
    ptx_wgmma_fence(); /* acc was last written by ordinary instructions (zeroing) or a wgmma */
#pragma unroll 1
    for (uint32_t bk = 0; bk < kstep; bk++) {
#pragma unroll
        for (uint32_t h = 0; h < 4; h++) {
            if (h >= nk) continue;
            const uint32_t k16 = k0 + h;
            const uint64_t da = ptx_wgmma_desc_sw128(aS + dak_wg_a_off(bk, k16), DAK_WG_SBO);
            const uint64_t db = ptx_wgmma_desc_sw128(bS + dak_wg_b_off(bk, rk, k16), DAK_WG_SBO);
            ptx_wgmma_m64n8xk16_bf16(d, da, db, wn);
        }
    }
    ptx_wgmma_commit();
}

/* consume_wgmma_n with wn a constant in each call: a run-time shape between the wgmma of a slot made ptxas inject a
 * warpgroup.arrive before every one of them (C7519), where one a call is its rule */
static __device__ __forceinline__ void consume_wgmma(float (*acc)[4][4], uint32_t aS, uint32_t bS, uint32_t kstep,
                                                     uint32_t rk, uint32_t kh, bool full, uint32_t wn)
{
    if (wn == 5u)
        consume_wgmma_n(acc, aS, bS, kstep, rk, kh, full, 5u);
    else if (wn == 6u)
        consume_wgmma_n(acc, aS, bS, kstep, rk, kh, full, 6u);
    else if (wn == 7u)
        consume_wgmma_n(acc, aS, bS, kstep, rk, kh, full, 7u);
    else
        consume_wgmma_n(acc, aS, bS, kstep, rk, kh, full, 8u);
}

/* One ring slot of a wide HBM tile (opts.bn: 128-row tiles, bn = 8 J columns, J = 16 or 32, a
 * constant after inlining): warpgroup h (all 4 warps calling) runs m64n<bn>k16 over the whole K of
 * every block for each of its MB 64-row boxes of A (box m at aS + m astride, its accumulators at
 * d + 4 J m; MB 2: 256 x 128 tiles, opts.bm 256), against the slot's bn rows of B at bS (rows of
 * block bk from bk x bn: the descriptor's 8-row groups, SBO 1024, span all bn rows).  Issues and
 * commits one group, as consume_wgmma; d flat = the wgmma accumulators, 4 J MB floats. */
static __device__ __forceinline__ void consume_wgmma_wide(float *d, uint32_t aS, uint32_t astride, uint32_t bS,
                                                          uint32_t kstep, const uint32_t J, const uint32_t MB)
{
    ptx_wgmma_fence();
#pragma unroll 1
    for (uint32_t bk = 0; bk < kstep; bk++) {
#pragma unroll
        for (uint32_t k16 = 0; k16 < 4; k16++) {
            const uint64_t db = ptx_wgmma_desc_sw128(bS + dak_wg_b_off(bk, 8u * J, k16), DAK_WG_SBO);
#pragma unroll
            for (uint32_t m = 0; m < MB; m++) {
                const uint64_t da = ptx_wgmma_desc_sw128(aS + m * astride + dak_wg_a_off(bk, k16), DAK_WG_SBO);
                if (J == 32u)
                    ptx_wgmma_m64n256k16_bf16(d + 4u * J * m, da, db);
                else
                    ptx_wgmma_m64n128k16_bf16(d + 4u * J * m, da, db);
            }
        }
    }
    ptx_wgmma_commit();
}

/* After the last slot of a tile: every wgmma group of this thread complete, acc pinned after it. */
static __device__ __forceinline__ void wgmma_drain(float (*acc)[4][4])
{
    ptx_wgmma_wait0();
    ptx_wgmma_fence_acc(&acc[0][0][0], 32);
}

#endif
