/* Packed coupling models (seed 000, Sec. III, Table I, Prop. 1).
 *
 * A model is one contiguous packed image: the same bytes travel in LOAD
 * fragments, sit in a model-store slot and are read by the kernels.
 *   PM1      one bit plane, n rows x W words (bit u_ij = 1 for J_ij = +1,
 *            u_ii = 0, zero padding)                          4 n W bytes
 *   TERNARY  plane P (J = +1), plane M (J = -1), then the int32 row constants
 *            |P_i| - |M_i|                                    8 n W + 4 n bytes
 *   INT8     n rows of n_p = 32 W int8 couplings, zero padded   n n_p bytes
 * with W = ceil(n/32).  All words little-endian (the host byte order here).
 */
#ifndef DSB_MODEL_H
#define DSB_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

typedef enum {
    DSB_FMT_AUTO = 0, /* only as a request: pick the narrowest format that holds J */
    DSB_FMT_PM1 = 1,
    DSB_FMT_TERNARY = 2,
    DSB_FMT_INT8 = 3
} dsb_format;

/* Largest n for which INT8 sums are exact in FP32 (Prop. 1(iii)). */
#define DSB_INT8_MAX_N 2048u

typedef struct {
    dsb_format format;
    uint32_t n;
    uint32_t words;      /* W = ceil(n/32) */
    uint8_t *packed;     /* owned; layout above */
    size_t packed_bytes;
    int64_t frob2;       /* sum_ij J_ij^2 */
    float xi_default;    /* 0.5 sqrt(n-1) / ||J||_F (Sec. II-A) */
} dsb_model;

const char *dsb_format_name(dsb_format f);
/* Parses "pm1", "ternary", "int8" or "auto" (case-insensitive); -1 if unknown. */
int dsb_format_parse(const char *s, dsb_format *out);

size_t dsb_packed_bytes(dsb_format f, uint32_t n);

/* Accessors into the packed image. */
static inline const uint32_t *dsb_model_plane(const dsb_model *m, int plane /* 0 = P/u, 1 = M */)
{
    return (const uint32_t *)m->packed + (size_t)plane * m->n * m->words;
}
static inline const int32_t *dsb_model_row_const(const dsb_model *m)
{
    return (const int32_t *)((const uint32_t *)m->packed + 2 * (size_t)m->n * m->words);
}
static inline const int8_t *dsb_model_int8_row(const dsb_model *m, uint32_t i)
{
    return (const int8_t *)m->packed + (size_t)i * 32u * m->words;
}

/* Validates a dense n x n int8 J (square by construction, symmetric, zero
 * diagonal, values allowed by the format) and packs it.  With DSB_FMT_AUTO the
 * narrowest of PM1, TERNARY, INT8 that holds J is chosen. */
int dsb_model_pack(const int8_t *J, uint32_t n, dsb_format fmt, dsb_model *out, cm_err *err);

/* Adopts a packed image received from elsewhere (wire, file) after checking
 * its size and its internal invariants (zero padding and diagonal, row
 * constants, symmetry).  Copies the bytes. */
int dsb_model_from_packed(dsb_format fmt, uint32_t n, const void *packed, size_t bytes,
                          dsb_model *out, cm_err *err);

/* Unpacks J_ij (for references and tests). */
int8_t dsb_model_coupling(const dsb_model *m, uint32_t i, uint32_t j);

void dsb_model_free(dsb_model *m);

/* Exact coupling sum sum_j J_ij s_j of row i for spin bits v (packed, zero
 * padding) and the matching sign bytes s8 (+-1, may be NULL for bit formats). */
int32_t dsb_model_row_sum(const dsb_model *m, uint32_t i, const uint32_t *v, const int8_t *s8);

/* Exact 2E = -s^T J s - 2 h^T s in int64 for packed spins v (bit 1 = +1);
 * h may be NULL (zero field). */
int64_t dsb_energy2(const dsb_model *m, const int16_t *h, const uint32_t *v);

#endif
