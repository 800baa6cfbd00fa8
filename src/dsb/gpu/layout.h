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

#endif
