/* Shared-memory layout of one request-per-block solve (seed 000, Sec. IV-A,
 * Eq. 6).  Plain C, static inline and DSB_HD: used by the host (sizes,
 * admission), by the CUDA kernels (offsets, and the GPU-resident server's
 * receive agent when a model completes) and by the CPU test of Eq. (6).
 *
 *   S = 4 n_p W_p c + 8 B W_p + 4 n_p + 8 B + S_0                  (PM1, TERNARY)
 *   S = n_p L_s + 2 B L_s + 4 n_p + 8 B + S_0                      (INT8)
 * with c = 1 (PM1) or 2 (TERNARY, plus 4 n_p bytes of row constants), W_p the
 * smallest 4 * odd >= W words and L_s the smallest 16 * odd >= n_p bytes: a
 * row stride that is an odd number of 16-byte units puts the 16-byte loads of
 * eight consecutive lanes (one shared-memory wavefront) in distinct banks.
 *
 * Order in the block's dynamic shared memory (every offset 16-byte aligned):
 *   rows      coupling rows (PM1: n_p x W_p words; TERNARY: P then M planes;
 *             INT8: n_p x L_s bytes); rows n..n_p-1 and the padding are zero
 *   rowconst  TERNARY only: n_p int32 row constants |P_i| - |M_i|
 *   signs     two sign buffers of B rows (stride W_p words, or L_s int8 bytes)
 *   field     n_p int32 (h_i, zero for padding rows)
 *   s0        S_0 = 1024 bytes: reply staging (final spin words of every
 *             replica, B n_p / 8 <= 512 bytes) and reduction scratch
 *   energy    B int64 (2E of each replica)
 */
#ifndef DSB_GPU_LAYOUT_H
#define DSB_GPU_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "dsb/core.h"
#include "dsb/model.h"
#include "dsb/gpu.h"

#define DSB_GPU_THREADS 256u     /* T: threads per request block */
#define DSB_GPU_MAX_PAIRS 16u    /* P: (replica,row) pairs per thread */
#define DSB_GPU_MAX_PAIRS_BLOCK (DSB_GPU_THREADS * DSB_GPU_MAX_PAIRS) /* 4096 */
#define DSB_GPU_S0 1024u         /* request header + reply staging */
#define DSB_GPU_STAGE_OFF 512u   /* spin-word staging inside S_0 */

typedef struct {
    uint32_t n, np, W, B;
    uint32_t Wp;          /* bit formats: padded row stride in words */
    uint32_t Ls;          /* INT8: padded row stride in bytes */
    uint32_t row_bytes;   /* stride of one coupling row and one sign row, bytes */
    uint32_t off_rows, off_minus, off_rowconst, off_signs, off_field, off_s0, off_energy;
    uint32_t sign_buf_bytes; /* one sign buffer (B rows) */
    uint32_t pairs;       /* B n_p */
    uint32_t ppt;         /* pairs per thread: ceil(B n_p / T) */
    size_t total;         /* S of Eq. (6) */
} dsb_gpu_layout;

/* Copies the Eq. 6 strides and offsets the solver body reads between any two
 * structs that carry them under these names (dsb_gpu_layout, the pipeline's
 * per-(model, B) layout row, the kernel arguments): one list of fields. */
#define DSB_GPU_COPY_OFFSETS(dst, src)                                                    \
    do {                                                                                  \
        (dst)->row_bytes = (src)->row_bytes;                                              \
        (dst)->off_minus = (src)->off_minus;                                              \
        (dst)->off_rowconst = (src)->off_rowconst;                                        \
        (dst)->off_signs = (src)->off_signs;                                              \
        (dst)->off_field = (src)->off_field;                                              \
        (dst)->off_s0 = (src)->off_s0;                                                    \
        (dst)->off_energy = (src)->off_energy;                                            \
        (dst)->sign_buf_bytes = (src)->sign_buf_bytes;                                    \
    } while (0)

/* Smallest mult * odd >= v (mult = 4 words or 16 bytes). */
DSB_HD static inline uint32_t dsb_gpu_odd_stride(uint32_t v, uint32_t mult)
{
    uint32_t q = (v + mult - 1u) / mult;
    if (q == 0u) q = 1u;
    if ((q & 1u) == 0u) q++;
    return q * mult;
}

/* Fills L for (f, n, B); returns 0, or -1 when the request does not fit one
 * block (B n_p > 4096, n or B zero, unknown format). */
DSB_HD static inline int dsb_gpu_layout_make(dsb_format f, uint32_t n, uint32_t B, dsb_gpu_layout *L)
{
    if (n == 0u || B == 0u) return -1;
    if (f != DSB_FMT_PM1 && f != DSB_FMT_TERNARY && f != DSB_FMT_INT8) return -1;
    uint32_t np = dsb_padded_n(n);
    if ((uint64_t)B * np > DSB_GPU_MAX_PAIRS_BLOCK) return -1;
    L->n = n;
    L->np = np;
    L->W = dsb_words(n);
    L->B = B;
    L->pairs = B * np;
    L->ppt = (L->pairs + DSB_GPU_THREADS - 1u) / DSB_GPU_THREADS;
    L->Wp = dsb_gpu_odd_stride(L->W, 4u);
    L->Ls = dsb_gpu_odd_stride(np, 16u);
    uint32_t off = 0;
    L->off_rows = 0;
    if (f == DSB_FMT_INT8) {
        L->row_bytes = L->Ls;
        off += np * L->Ls;
        L->off_minus = L->off_rowconst = off;
    } else {
        L->row_bytes = 4u * L->Wp;
        off += np * L->row_bytes;
        L->off_minus = off;
        if (f == DSB_FMT_TERNARY) off += np * L->row_bytes;
        L->off_rowconst = off;
        if (f == DSB_FMT_TERNARY) off += 4u * np;
    }
    L->off_signs = off;
    L->sign_buf_bytes = B * L->row_bytes;
    off += 2u * L->sign_buf_bytes;
    L->off_field = off;
    off += 4u * np;
    L->off_s0 = off;
    off += DSB_GPU_S0;
    L->off_energy = off;
    off += 8u * B;
    L->total = off;
    return 0;
}

/* The solver's row mode for a layout: 2 when every thread's pairs share one
 * coupling row (n_p divides T) whose 16-byte chunks fit the body's register
 * budget (8 chunks for INT8, 2 for the bit formats), 1 when they share a row
 * kept in shared memory, 0 when a thread's pairs have different rows.  Picks
 * the kernel variant (one-request kernels and the pipeline's workers alike). */
DSB_HD static inline int dsb_gpu_row_mode(dsb_format f, const dsb_gpu_layout *L)
{
    if (DSB_GPU_THREADS % L->np != 0u) return 0;
    uint32_t nch = f == DSB_FMT_INT8 ? L->np / 16u : (L->W + 3u) / 4u;
    uint32_t maxc = f == DSB_FMT_INT8 ? 8u : 2u;
    return nch <= maxc ? 2 : 1;
}

/* Tensor-core coupling sums (solver_tc.cuh): the n_p x B result of a step
 * in tiles of 16 rows x 8 replicas, dealt to the 8 warps of the block; a
 * lane steps 4 pairs per tile.  Tiles per warp for a layout, 1..4, or 0 when
 * the request has more than 32 tiles (then only the CUDA-core body runs). */
#define DSB_GPU_TC_MAX_TILES 4u
DSB_HD static inline uint32_t dsb_gpu_tc_tiles_of(uint32_t np, uint32_t B)
{
    uint32_t tiles = (np / 16u) * ((B + 7u) / 8u);
    uint32_t per_warp = (tiles + 7u) / 8u;
    return per_warp <= DSB_GPU_TC_MAX_TILES ? per_warp : 0u;
}
DSB_HD static inline uint32_t dsb_gpu_tc_tiles(const dsb_gpu_layout *L)
{
    return dsb_gpu_tc_tiles_of(L->np, L->B);
}

/* The engine of one request for a dsb_gpu_sums choice: tiles per warp of the
 * tensor-core body, or 0 for the CUDA-core body.  TENSOR and AUTO take the
 * tensor cores wherever the request fits them (at most 32 tiles), CUDA never.
 * AUTO follows the H200 (docs/perf/table3.md, "Coupling engines", v5 body):
 * the tensor-core solve is 1.09-5.5x faster than the CUDA-core one in every
 * configuration of the grid (B = 8, n 64..512, all formats), alone and in the
 * loaded pipeline (Table IV), although it runs at 1800 MHz against 1980. */
DSB_HD static inline uint32_t dsb_gpu_tc_pick_of(uint32_t np, uint32_t B, int sums)
{
    return sums == DSB_GPU_SUMS_CUDA ? 0u : dsb_gpu_tc_tiles_of(np, B);
}
DSB_HD static inline uint32_t dsb_gpu_tc_pick(const dsb_gpu_layout *L, int sums)
{
    return dsb_gpu_tc_pick_of(L->np, L->B, sums);
}

/* The pairs of a lane: tile q = warp + 8 j is (mt, nt) = (q mod mtiles,
 * q div mtiles); its pair c = 0..3 sits where the mma accumulator fragment
 * puts element c (g = lane / 4, t = lane % 4): row 16 mt + g + 8 (c / 2),
 * replica 8 nt + 2 t + c mod 2. */
DSB_HD static inline void dsb_gpu_tc_tile(uint32_t mtiles, uint32_t warp, uint32_t j,
                                          uint32_t *mt, uint32_t *nt)
{
    uint32_t q = warp + 8u * j;
    *nt = q / mtiles;
    *mt = q - *nt * mtiles;
}
DSB_HD static inline uint32_t dsb_gpu_tc_row(uint32_t mt, uint32_t lane, uint32_t c)
{
    return 16u * mt + (lane >> 2) + 8u * (c >> 1);
}
DSB_HD static inline uint32_t dsb_gpu_tc_replica(uint32_t nt, uint32_t lane, uint32_t c)
{
    return 8u * nt + 2u * (lane & 3u) + (c & 1u);
}

/* Where a lane's mma operands lie in the Eq. 6 layout (g = lane / 4,
 * t = lane % 4; the fragment layouts are listed in include/common/ptx.cuh).
 * A register i for tile row mt and k step ks, as a byte offset from the
 * coupling rows (or the TERNARY minus plane):
 *   INT8 (s8, i = 0..3): row 16 mt + g + 8 (i mod 2), bytes 32 ks + 4 t + 16 (i / 2)
 *   bits (b1, i = 0..1): row 16 mt + g + 8 i, word 4 ks + t */
DSB_HD static inline uint32_t dsb_gpu_tc_a_off(int int8, uint32_t rb, uint32_t mt, uint32_t lane,
                                               uint32_t ks, uint32_t i)
{
    uint32_t g = lane >> 2, t = lane & 3u;
    if (int8) return (16u * mt + g + 8u * (i & 1u)) * rb + 32u * ks + 4u * t + 16u * (i >> 1);
    return (16u * mt + g + 8u * i) * rb + 4u * (4u * ks + t);
}
/* B register i, as a byte offset from a sign buffer; the B column of a lane
 * is replica bq = min(8 nt + g, B - 1) (columns past B read a copy of the
 * last replica and are discarded):
 *   INT8 (i = 0..1): bytes 32 ks + 4 t + 16 i of sign row bq;  bits (i = 0): word 4 ks + t */
DSB_HD static inline uint32_t dsb_gpu_tc_bcol(uint32_t nt, uint32_t lane, uint32_t B)
{
    uint32_t b = 8u * nt + (lane >> 2);
    return b < B ? b : B - 1u;
}
DSB_HD static inline uint32_t dsb_gpu_tc_b_off(int int8, uint32_t rb, uint32_t bq, uint32_t lane,
                                               uint32_t ks, uint32_t i)
{
    uint32_t t = lane & 3u;
    if (int8) return bq * rb + 32u * ks + 4u * t + 16u * i;
    return bq * rb + 4u * (4u * ks + t);
}
/* The same offsets split into a loop-invariant part and constants, so the
 * step loop keeps one base per operand in a register and adds immediates
 * (no per-step address arithmetic from lane and tile):
 *   a_off(ks, i) = a_off(0, 0) + ks tc_kbytes + tc_a_rel(i)
 *   b_off(ks, i) = b_off(0, 0) + ks tc_kbytes + tc_b_rel(i)
 * (tests/dsb_gpu/test_tc_map.c checks both identities for every shape). */
DSB_HD static inline uint32_t dsb_gpu_tc_kbytes(int int8) { return int8 ? 32u : 16u; }
DSB_HD static inline uint32_t dsb_gpu_tc_a_rel(int int8, uint32_t rb, uint32_t i)
{
    if (int8) return 8u * rb * (i & 1u) + 16u * (i >> 1);
    return 8u * rb * i;
}
DSB_HD static inline uint32_t dsb_gpu_tc_b_rel(int int8, uint32_t i) { return int8 ? 16u * i : 0u; }
/* k steps of a step's product: INT8 n_p / 32 (32 bytes), bits ceil(W / 4)
 * (4 words; the padding words of rows and sign rows are zero). */
DSB_HD static inline uint32_t dsb_gpu_tc_ksteps(int int8, uint32_t np, uint32_t W)
{
    return int8 ? np / 32u : (W + 3u) / 4u;
}
/* The coupling sum without the row-level term from the two accumulators:
 * INT8 keeps even and odd k steps in p and q (two chains); PM1 popc(J and
 * not s) in p and popc(not J and s) in q, whose sum is popc(J xor s);
 * TERNARY the plus-plane (p) and minus-plane (q) AND-popcounts (Prop. 1). */
DSB_HD static inline int32_t dsb_gpu_tc_combine(dsb_format f, int32_t p, int32_t q)
{
    if (f == DSB_FMT_PM1) return -2 * (p + q); /* n - 2 popc(J xor s) less the n */
    if (f == DSB_FMT_TERNARY) return 2 * (p - q);
    return p + q;
}

/* Eight bits of v at positions t, t + 4, ..., t + 28 packed into bits 0..7:
 * the lanes 4 g + t (g = 0..7) of a ballot. */
DSB_HD static inline uint32_t dsb_gpu_tc_gather8(uint32_t v, uint32_t t)
{
    uint32_t x = (v >> t) & 0x11111111u;
    x = (x | (x >> 3)) & 0x03030303u;
    x = (x | (x >> 6)) & 0x000F000Fu;
    return (x | (x >> 12)) & 0xFFu;
}

/* From the ballots v[c] of the spin bits of every lane's pair c, the 16 bits
 * (rows 16 mt .. 16 mt + 15, bit i = row 16 mt + i) of replica 8 nt + lane,
 * for lanes 0..7.  Those bits are half (mt mod 2) of spin word mt / 2, i.e.
 * the 16-bit unit at byte offset 2 mt of the replica's sign row. */
DSB_HD static inline uint32_t dsb_gpu_tc_half(const uint32_t *v, uint32_t lane)
{
    uint32_t odd = lane & 1u, t = (lane >> 1) & 3u;
    /* selects, not v[odd]: a register array indexed by a lane value would be
     * put in local memory (ptxas gave the tensor-core kernels a stack frame) */
    uint32_t lo = odd ? v[1] : v[0], hi = odd ? v[3] : v[2];
    return dsb_gpu_tc_gather8(lo, t) | (dsb_gpu_tc_gather8(hi, t) << 8);
}

#endif
