/* The split GEMM's packed tile layout (dak/tiered.h), as index arithmetic: the one statement of it, used by the
 * GPU packer (k_pack in src/dak/kernels/tiered.cu, through the grouped form at the end), the CPU packer
 * (dak_eng_pack_rows in engine_ckpt.c) and the TMA swizzle model of dak/gemm_layout.h.  Plain C11 (static inline);
 * under nvcc also __host__ __device__.
 *
 * An M x K bf16 matrix (M, K multiples of 64) is cut into 64 x 64 blocks of 8 KiB: tile row mt (rows 64 mt ..
 * 64 mt + 63) occupies elements [mt*64*K, (mt+1)*64*K), as its K/64 blocks in column order.  A block is 64 rows of
 * 128 bytes = 8 chunks of 16 bytes (8 bf16); chunk j of block row rr is stored at chunk position j ^ (rr % 8)
 * (the TMA / ldmatrix 128-byte swizzle).  Offsets below count 16-byte chunks or bf16 elements from the matrix's
 * first element; rows are absolute (rr % 8 == row % 8 because a block starts at a multiple of 64 rows). */
#ifndef DAK_TILE_LAYOUT_H
#define DAK_TILE_LAYOUT_H

#include <stdint.h>

#include "common/hd.h"

#define DAK_TILE_CHUNKS_ROW 8u     /* 16-byte chunks in a block row (128 bytes, 64 bf16) */
#define DAK_TILE_CHUNKS_BLOCK 512u /* 16-byte chunks in a 64 x 64 block (8 KiB) */

/* Where chunk j (0..7) of a 128-byte row sits in it: the 128-byte swizzle. */
static inline CM_HD uint32_t dak_tile_chunk_pos(uint64_t row, uint32_t j)
{
    return (j ^ (uint32_t)row) & 7u;
}

/* Chunk offset, in the packed M x K matrix, of the 128-byte block row that holds row `row`'s columns 64 kc ..
 * 64 kc + 63: block (row / 64, kc), block row row % 64. */
static inline CM_HD uint64_t dak_tile_brow_off(uint64_t row, uint64_t kc, uint32_t K)
{
    return ((row >> 6) * (K >> 6) + kc) * DAK_TILE_CHUNKS_BLOCK + (row & 63u) * DAK_TILE_CHUNKS_ROW;
}

/* Chunk offset of row `row`'s 16-byte chunk c (0 .. K/8 - 1: its elements 8c .. 8c + 7): in block row
 * dak_tile_brow_off(row, c / 8), at position (c % 8) ^ (row % 8). */
static inline CM_HD uint64_t dak_tile_chunk_off(uint64_t row, uint64_t c, uint32_t K)
{
    return dak_tile_brow_off(row, c >> 3, K) + dak_tile_chunk_pos(row, (uint32_t)c);
}

/* Element offset of element (row, col) of the row-major M x K matrix in the packed one (a chunk moves whole). */
static inline CM_HD uint64_t dak_tile_elem_off(uint64_t row, uint64_t col, uint32_t K)
{
    return dak_tile_chunk_off(row, col >> 3, K) * 8u + (col & 7u);
}

/* A packed in groups of R rows (dak_tiered.group_rows; R a multiple of 8): group g (rows g R .. g R + R - 1, the
 * last group M - g R rows where R does not divide M) occupies elements [g R K, (g R + rows_g) K), as its K/64 blocks
 * of rows_g rows x 64 columns in column order, each block row swizzled as above (g R is a multiple of 8, so the
 * row's position in its group and in the matrix agree mod 8).  A CTA of k_whole_sw that takes a group then reads
 * every stage of kstep blocks as one contiguous copy.  R = 64 with M a multiple of 64 is the tile layout. */
static inline CM_HD uint64_t dak_group_brow_off(uint64_t row, uint64_t kc, uint32_t K, uint32_t M, uint32_t R)
{
    const uint64_t g0 = row / R * R, rows_g = M - g0 < R ? M - g0 : R;
    return (g0 * K >> 3) + (kc * rows_g + (row - g0)) * DAK_TILE_CHUNKS_ROW;
}

/* Chunk offset of row `row`'s 16-byte chunk c in the grouped layout (as dak_tile_chunk_off in the tile layout). */
static inline CM_HD uint64_t dak_group_chunk_off(uint64_t row, uint64_t c, uint32_t K, uint32_t M, uint32_t R)
{
    return dak_group_brow_off(row, c >> 3, K, M, R) + dak_tile_chunk_pos(row, (uint32_t)c);
}

#endif
