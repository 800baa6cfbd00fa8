/* Tiered matrix (seed 003, Sec. 4.1): A (M x K, bf16, row-major) split by tile
 * rows between pinned host memory and HBM.  Rows [0, rows_host) live in host
 * memory allocated with cudaHostAlloc(mapped), rows [rows_host, M) in HBM; every
 * kernel reads a tile row from exactly one tier.  The split is made from a
 * ratio rounded to whole tile rows.
 *
 * Layout: "packed" (the split kernel's native layout, what dak_tiered_create
 * makes): tile row mt occupies the same elements [mt*64*K, (mt+1)*64*K) as in
 * row-major order, but as K/64 consecutive 8 KiB blocks (64 rows x 64 columns),
 * each row of 128 bytes with its 16-byte chunk j stored at j ^ (row % 8): the
 * shared-memory image the tensor-core loads want, so one contiguous bulk copy
 * moves a block.  Its index arithmetic: dak/tile_layout.h.  Row-major tiered
 * matrices are accepted by the 2-D TMA path. */
#ifndef DAK_TIERED_H
#define DAK_TIERED_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "common/error.h"
#ifdef __cplusplus
}
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Rows per tile row: the granularity of the split and the kernels' BM. */
#define DAK_TILE_ROWS 64u

typedef struct {
    uint32_t M, K;      /* rows and columns (bf16 elements) */
    uint32_t rows_host; /* rows [0, rows_host) are in host memory; a multiple of DAK_TILE_ROWS */
    uint16_t *host;     /* host pointer to rows_host x K (NULL when rows_host == 0) */
    uint16_t *host_dev; /* the same pinned memory as the device addresses it (mapped) */
    uint16_t *dev;      /* HBM rows [rows_host, M): (M - rows_host) x K (NULL when none) */
    int packed;         /* 1: packed tile layout (above), 0: row-major */
    uint32_t group_rows; /* packed, all rows in HBM: 0 (or 64) the tile layout; else A packed in groups of this many
                            rows (dak_pack_groups), which only k_whole_sw with R = group_rows reads (dak/gemm.h,
                            dak_gemm_a_group_rows); set by the caller after a view */
    int owns;           /* 1: created here, freed by dak_tiered_destroy */
} dak_tiered;

/* Host rows for an offload ratio in [0, 1]: ratio * M rounded to the nearest whole
 * tile row.  Pure C; fails on a non-finite ratio, a ratio outside [0, 1], M == 0 or
 * M not a multiple of tile_rows. */
int dak_tiered_rows_for_ratio(uint32_t M, uint32_t tile_rows, double ratio, uint32_t *rows_host,
                              cm_err *err);

/* Allocates a packed tiered matrix (contents undefined).  M and K must be multiples of 64. */
int dak_tiered_create(dak_tiered *t, uint32_t M, uint32_t K, double ratio, cm_err *err);

/* A view over caller-owned rows: host_rows holds rows [0, rows_host) in pinned mapped host
 * memory, dev_rows rows [rows_host, M) in HBM (dev_rows is row rows_host itself, so a
 * deployment that allocates only its HBM rows passes its allocation).  Either may be NULL
 * when its tier has no rows.  Nothing is allocated or copied. */
int dak_tiered_view_rows(dak_tiered *t, uint32_t M, uint32_t K, uint32_t rows_host, uint16_t *host_rows,
                         uint16_t *dev_rows, int packed, cm_err *err);

/* The same over caller-owned full copies: host_full and dev_full are M x K each; the view's
 * host part is host_full's first rows_host rows and its HBM part dev_full's rows [rows_host, M). */
int dak_tiered_view(dak_tiered *t, uint32_t M, uint32_t K, uint32_t rows_host, uint16_t *host_full,
                    uint16_t *dev_full, int packed, cm_err *err);

/* Packs a row-major M x K device matrix into the packed layout (dst in device memory). */
int dak_pack_rowmajor(const uint16_t *src, uint16_t *dst, uint32_t M, uint32_t K, cm_err *err);

/* The same in groups of R rows (dak/tile_layout.h, dak_group_chunk_off): M and R multiples of 8 (R at least 8), K of
 * 64; R = 64 with M a multiple of 64 is dak_pack_rowmajor's layout. */
int dak_pack_groups(const uint16_t *src, uint16_t *dst, uint32_t M, uint32_t K, uint32_t R, cm_err *err);

/* Copies a full M x K row-major matrix that lives in device memory into the two tiers
 * (packing it when the tiered matrix is packed). */
int dak_tiered_load_from_device(dak_tiered *t, const uint16_t *src_dev, cm_err *err);

/* Frees what dak_tiered_create allocated (a view frees nothing); zeroes *t. */
void dak_tiered_destroy(dak_tiered *t);

#ifdef __cplusplus
}
#endif

#endif
