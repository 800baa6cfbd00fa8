/* Layout arithmetic of the split GEMM's tensor-core consumers (gemm_tile.cuh) and the ranges of its
 * even split (plan.c, gemm_split.cu), pure C so that the CPU tests check it
 * (tests/dak/test_gemm_plan.c) and the kernels use the same code.
 *
 * Shared memory (both kernels): an A block is 64 rows x 64 bf16 (128-byte rows, 8 KiB) written
 * by TMA with the 128-byte swizzle, i.e. 16-byte chunk j of row r sits at r * 128 + ((j ^ (r % 8))
 * << 4) from the 1024-aligned block start.  B rows (128 bytes: 64 k of one column n) of block bk
 * sit at row n * rn + bk * rk of the slot, swizzled the same way (rn = 1, rk = bn_box on the
 * [block][n][64] layout).
 *
 * wgmma (opts.wgmma): with rn = 1 and rk a multiple of 8, A and every B block are canonical
 * K-major 128B-swizzled operands (PTX ISA, "Shared Memory Matrix Layout"): 8-row groups of
 * 1024 bytes, so the stride-dimension byte offset is 1024 and the leading-dimension offset is
 * unused (the k16 step, 32 bytes, stays inside one 128-byte row).  k16 step k of a block starts
 * 32 k bytes into it: the swizzle is a function of the address bits (bits 4-6 ^= bits 7-9), so a
 * start address 32 k bytes past a 1024-aligned atom reads the same swizzled rows (base offset 0
 * because 32 k < 128 leaves bits 7-9 unchanged).
 *
 * The accumulator of one consumer warp is acc[2][4][4] = fragment (a, b) x element e, each
 * fragment in the mma.sync m16n8 C layout (g = lane / 4, t = lane % 4):
 *   row = row16 + a * dr + g + 8 (e / 2),  column = 8 (nb0 + a * dn + b) + 2 t + e % 2.
 *   mma.sync narrow (<= 4 valid n8 groups): warp q rows 16 q, all groups; fragment a is the k16
 *     parity (summed before the epilogue, so only a = 0 is stored: MI 1).
 *   mma.sync wide: warp q rows 32 (q % 2) + 16 a, n8 groups 4 (q / 2) + b  (dr 16, dn 0).
 *   wgmma wide: warp q of its warpgroup holds rows 16 q and all 8 n8 groups: d[4j + e] is group j,
 *     so acc viewed flat is a = j / 4, b = j % 4  (dr 0, dn 4).
 * The K half of every block goes to warps q (kh 0) and q + 4 (kh 1: the second warpgroup) either
 * way, summed through the hand-over area fragment by fragment. */
#ifndef DAK_GEMM_LAYOUT_H
#define DAK_GEMM_LAYOUT_H

#include <stdint.h>

#include "dak/tile_layout.h"

#ifdef __CUDACC__
#define DAK_HD static __host__ __device__ __forceinline__
#else
#define DAK_HD static inline
#endif

#define DAK_WG_SBO 1024u   /* bytes between 8-row groups of a 128B-swizzled K-major operand */
#define DAK_A_BLOCK 8192u  /* bytes of one 64 x 64 bf16 A block */

/* One consumer warp's share of a 64-column tile whose first nvalid columns are real (see above). */
typedef struct {
    uint32_t nv8;   /* valid n8 column groups, 0..8 */
    uint32_t wide;  /* 1: nv8 > 4 */
    uint32_t wg;    /* 1: wide and through wgmma */
    uint32_t MI;    /* fragments a stored in the epilogue: 2 wide, 1 narrow */
    uint32_t row16; /* first row */
    uint32_t nb0;   /* first n8 group */
    uint32_t nn;    /* n8 groups b per fragment a */
    uint32_t dr;    /* rows between fragments a */
    uint32_t dn;    /* n8 groups between fragments a */
} dak_tile_map;

/* The share of warp q (0..3 inside its K half) when wgmma is on (wg_on) or off. */
DAK_HD dak_tile_map dak_tile_map_of(int nvalid, uint32_t q, int wg_on)
{
    dak_tile_map t;
    t.nv8 = nvalid <= 0 ? 0u : (nvalid >= 64 ? 8u : (uint32_t)(nvalid + 7) / 8u);
    t.wide = t.nv8 > 4u;
    t.wg = t.wide && wg_on;
    t.MI = t.wide ? 2u : 1u;
    if (t.wg) {
        t.row16 = q * 16u, t.nb0 = 0, t.nn = 4, t.dr = 0, t.dn = 4;
    } else if (t.wide) {
        t.row16 = (q & 1u) * 32u, t.nb0 = (q >> 1) * 4u;
        t.nn = t.nv8 - t.nb0 < 4u ? t.nv8 - t.nb0 : 4u;
        t.dr = 16, t.dn = 0;
    } else {
        t.row16 = q * 16u, t.nb0 = 0, t.nn = t.nv8, t.dr = 16, t.dn = 0;
    }
    return t;
}

/* Row (in the 64-row tile) of element e of fragment a of `lane`. */
DAK_HD uint32_t dak_frag_row(const dak_tile_map *t, uint32_t lane, uint32_t a, uint32_t e)
{
    return t->row16 + a * t->dr + (lane >> 2) + (e >> 1) * 8u;
}

/* Column (in the 64-column tile) of element e of fragment (a, b) of `lane`. */
DAK_HD uint32_t dak_frag_col(const dak_tile_map *t, uint32_t lane, uint32_t a, uint32_t b, uint32_t e)
{
    return (t->nb0 + a * t->dn + b) * 8u + 2u * (lane & 3u) + (e & 1u);
}

/* Byte offset in a slot's A of k16 step k16 (0..3) of block bk: the wgmma A start address. */
DAK_HD uint32_t dak_wg_a_off(uint32_t bk, uint32_t k16) { return bk * DAK_A_BLOCK + k16 * 32u; }

/* Byte offset in a slot's B of k16 step k16 of block bk (B rows of block bk from row bk * rk). */
DAK_HD uint32_t dak_wg_b_off(uint32_t bk, uint32_t rk, uint32_t k16) { return bk * rk * 128u + k16 * 32u; }

/* The n8 groups of a 64-column tile's wgmma (m64n<8 groups>k16) on a B box of `box` rows: 5..7 for the 40-56-row
 * boxes of N 33..56 (opts.bnw), else 8 (the 64-row box) */
DAK_HD uint32_t dak_wg_n8_groups(uint32_t box) { return box < 64u ? box / 8u : 8u; }

/* The TMA 128-byte swizzle: byte offset of element k (0..63) of 128-byte row r (the chunk position is the packed
 * layout's, dak/tile_layout.h). */
DAK_HD uint32_t dak_swz128_byte(uint32_t r, uint32_t k)
{
    return r * 128u + (dak_tile_chunk_pos(r, k >> 3) << 4) + (k & 7u) * 2u;
}

/* Model of how wgmma addresses element (m, k) (k < 16) of a K-major operand with 128-byte swizzle
 * described by start address `start` and stride offset `sbo` (PTX ISA canonical layout): the
 * unswizzled address start + (m / 8) sbo + (m % 8) 128 + 2 k, then address bits 4-6 ^= bits 7-9. */
DAK_HD uint32_t dak_wg_model_addr(uint32_t start, uint32_t sbo, uint32_t m, uint32_t k)
{
    uint32_t x = start + (m >> 3) * sbo + (m & 7u) * 128u + k * 2u;
    return x ^ (((x >> 7) & 7u) << 4);
}

/* ---- the even split (wave alignment): T chunks over ncl ranges, range k = [start(k), start(k + 1)) ---- */

/* floor(k T / ncl) in 32-bit arithmetic (k <= ncl <= 2^16): k T = k ncl (T / ncl) + k (T % ncl), and
 * k (T % ncl) < ncl^2 fits.  (On the GPU a 64-bit division is a 64-instruction subroutine.) */
DAK_HD uint32_t dak_rng_start(uint32_t k, uint32_t T, uint32_t ncl)
{
    return k * (T / ncl) + k * (T % ncl) / ncl;
}

/* The range holding chunk x (< T): floor(((x + 1) ncl - 1) / T), in double precision.  Exact: the
 * dividend (below 2^48) is exact, and the quotient (below 2^16) is at least 1 / T >= 2^-32 below the
 * next integer, while the division's rounding error is at most 2^-53 of 2^16. */
DAK_HD uint32_t dak_rng_owner(uint32_t x, uint32_t T, uint32_t ncl)
{
    return (uint32_t)((((double)x + 1.0) * (double)ncl - 1.0) / (double)T);
}

/* Tile [t0, t1) is shared in whole shares: more than one range, the first starting at t0 and the last
 * ending at t1, so that the tile is every contributor's only segment (the reduce-scatter fix-up). */
DAK_HD int dak_rng_whole_shares(uint32_t t0, uint32_t t1, uint32_t T, uint32_t ncl)
{
    const uint32_t first = dak_rng_owner(t0, T, ncl), last = dak_rng_owner(t1 - 1u, T, ncl);
    return last > first && dak_rng_start(first, T, ncl) == t0 && dak_rng_start(last + 1u, T, ncl) == t1;
}

#endif
