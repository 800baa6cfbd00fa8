/* The tensor-core solver's bookkeeping, on the CPU (src/dsb/gpu/layout.h,
 * used by solver_tc.cuh): for every request shape the tile rule admits,
 *  - the (replica, row) pairs of all lanes of all warps' tiles cover every
 *    (b, r) with b < 8 ceil(B/8) and r < n_p exactly once (so every real pair
 *    is stepped by one lane, and the padding replicas only by tiles of the
 *    last column);
 *  - the sign words rebuilt from warp ballots (dsb_gpu_tc_half: lane L of a
 *    ballot holds the spin of lane L's pair) and stored as 16-bit halves at
 *    byte offset 2 mt equal the words packed directly (bit r mod 32 of word
 *    r / 32 of each replica).
 *  - the coupling sums the tensor-core body computes: every lane's mma
 *    operands are read at the offsets of layout.h from an Eq. 6 image built
 *    here, the warp's mma is emulated from the PTX ISA fragment tables
 *    (written out below independently of layout.h), and each real pair's
 *    combined sum must equal the Prop. 1 row sum of the CPU reference
 *    (INT8 dot product, PM1 -2 popc(J xor s), TERNARY 2 (popc(P and s) -
 *    popc(M and s))), for every format.
 * The ballots and mma are emulated here from their definitions; spins and
 * couplings are drawn from the counter hash.  CPU only (runs in CI); the GPU
 * test (test_gpu_solver) then checks the PTX itself bit for bit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "dsb/core.h"
#include "dsb/model.h"
#include "layout.h"

static void check_shape(uint32_t n, uint32_t B, uint64_t seed)
{
    dsb_gpu_layout L;
    char tag[64];
    snprintf(tag, sizeof tag, "n=%u B=%u", n, B);
    if (dsb_gpu_layout_make(DSB_FMT_PM1, n, B, &L)) {
        CHECK(0, "%s: layout", tag);
        return;
    }
    const uint32_t T = dsb_gpu_tc_tiles(&L), np = L.np, W = L.W;
    const uint32_t mtiles = np / 16u, ntiles = (B + 7u) / 8u, tiles = mtiles * ntiles;
    CHECK(T >= 1u && T <= DSB_GPU_TC_MAX_TILES && 8u * T >= tiles && 8u * (T - 1u) < tiles,
          "%s: %u tiles per warp for %u tiles", tag, T, tiles);
    const uint32_t Bp = 8u * ntiles;
    unsigned char *seen = calloc((size_t)Bp * np, 1);
    /* spins of every (b, r), 0 for padding rows and replicas (as the kernel's x = 0) */
    unsigned char *spin = calloc((size_t)Bp * np, 1);
    for (uint32_t b = 0; b < B; b++)
        for (uint32_t r = 0; r < n; r++)
            spin[(size_t)b * np + r] = (unsigned char)(dsb_counter_hash(seed, b, r) & 1u);
    uint32_t *words = calloc((size_t)B * W, sizeof *words);
    size_t bad_map = 0, bad_range = 0;
    for (uint32_t warp = 0; warp < 8u; warp++)
        for (uint32_t j = 0; j < T; j++) {
            if (warp + 8u * j >= tiles) continue; /* the kernel's warp-uniform skip */
            uint32_t mt, nt;
            dsb_gpu_tc_tile(mtiles, warp, j, &mt, &nt);
            uint32_t v[4] = {0, 0, 0, 0}; /* ballots */
            for (uint32_t lane = 0; lane < 32u; lane++)
                for (uint32_t c = 0; c < 4u; c++) {
                    uint32_t b = dsb_gpu_tc_replica(nt, lane, c), r = dsb_gpu_tc_row(mt, lane, c);
                    if (b >= Bp || r >= np) {
                        if (bad_range++ == 0)
                            fprintf(stderr, "%s: warp %u tile %u lane %u pair %u -> (%u, %u)\n",
                                    tag, warp, j, lane, c, b, r);
                        continue;
                    }
                    seen[(size_t)b * np + r]++;
                    v[c] |= (uint32_t)spin[(size_t)b * np + r] << lane;
                }
            for (uint32_t lane = 0; lane < 8u; lane++) {
                uint32_t b = 8u * nt + lane;
                if (b >= B) continue; /* the kernel stores replicas below B only */
                uint32_t half = dsb_gpu_tc_half(v, lane);
                CHECK(half <= 0xFFFFu, "%s: half of 17+ bits", tag);
                unsigned char *row = (unsigned char *)&words[(size_t)b * W];
                row[2u * mt] = (unsigned char)(half & 0xFFu); /* little-endian 16-bit store */
                row[2u * mt + 1u] = (unsigned char)(half >> 8);
            }
        }
    for (size_t i = 0; i < (size_t)Bp * np; i++)
        if (seen[i] != 1u && bad_map++ == 0)
            fprintf(stderr, "%s: pair (b %zu, r %zu) stepped %u times\n", tag, i / np, i % np,
                    seen[i]);
    CHECK(bad_range == 0, "%s: %zu pairs out of range", tag, bad_range);
    CHECK(bad_map == 0, "%s: %zu pairs not covered exactly once", tag, bad_map);
    size_t bad_words = 0;
    for (uint32_t b = 0; b < B; b++)
        for (uint32_t w = 0; w < W; w++) {
            uint32_t want = 0;
            for (uint32_t i = 0; i < 32u; i++)
                want |= (uint32_t)spin[(size_t)b * np + 32u * w + i] << i;
            if (words[(size_t)b * W + w] != want && bad_words++ == 0)
                fprintf(stderr, "%s: replica %u word %u: 0x%08x from ballots, 0x%08x direct\n",
                        tag, b, w, words[(size_t)b * W + w], want);
        }
    CHECK(bad_words == 0, "%s: %zu sign words differ", tag, bad_words);
    free(seen);
    free(spin);
    free(words);
}

/* ---- mma emulation (PTX ISA "Matrix Fragments for mma.m16n8k32" (.s8) and
 * "mma.m16n8k128" (.b1); g = lane / 4, t = lane % 4) ------------------------ */
/* s8 A element i = 0..15 (register i / 4, byte i % 4) */
static void frag_a_s8(uint32_t lane, uint32_t i, uint32_t *row, uint32_t *k)
{
    uint32_t g = lane >> 2, t = lane & 3u;
    *row = g + ((i >= 4u && i < 8u) || i >= 12u ? 8u : 0u);
    *k = 4u * t + (i & 3u) + (i >= 8u ? 16u : 0u);
}
/* s8 B element i = 0..7 (register i / 4, byte i % 4): (k, column g) */
static uint32_t frag_b_s8_k(uint32_t lane, uint32_t i)
{
    return 4u * (lane & 3u) + (i & 3u) + (i >= 4u ? 16u : 0u);
}
/* b1 A element i = 0..63 (register i / 32, bit i % 32) */
static void frag_a_b1(uint32_t lane, uint32_t i, uint32_t *row, uint32_t *k)
{
    *row = (lane >> 2) + (i < 32u ? 0u : 8u);
    *k = 32u * (lane & 3u) + (i & 31u);
}
/* C element i = 0..3: (row g + 8 (i / 2), column 2t + i % 2) */
static void frag_c(uint32_t lane, uint32_t i, uint32_t *row, uint32_t *col)
{
    *row = (lane >> 2) + 8u * (i >> 1);
    *col = 2u * (lane & 3u) + (i & 1u);
}

/* D += A B for one warp: a[lane][4], b[lane][2] as the registers the lanes
 * hold; op 0: s8 products, 2: b1 and-popc (the two instructions the kernel uses). */
static void emulate_mma(int op, uint32_t a[32][4], uint32_t b[32][2], int32_t d[32][4])
{
    int32_t A[16][128], Bm[128][8];
    uint32_t K = op == 0 ? 32u : 128u;
    for (uint32_t lane = 0; lane < 32u; lane++) {
        if (op == 0) {
            for (uint32_t i = 0; i < 16u; i++) {
                uint32_t r, k;
                frag_a_s8(lane, i, &r, &k);
                A[r][k] = (int8_t)(a[lane][i / 4u] >> (8u * (i % 4u)));
            }
            for (uint32_t i = 0; i < 8u; i++)
                Bm[frag_b_s8_k(lane, i)][lane >> 2] = (int8_t)(b[lane][i / 4u] >> (8u * (i % 4u)));
        } else {
            for (uint32_t i = 0; i < 64u; i++) {
                uint32_t r, k;
                frag_a_b1(lane, i, &r, &k);
                A[r][k] = (int32_t)((a[lane][i / 32u] >> (i % 32u)) & 1u);
            }
            for (uint32_t i = 0; i < 32u; i++)
                Bm[32u * (lane & 3u) + i][lane >> 2] = (int32_t)((b[lane][0] >> i) & 1u);
        }
    }
    for (uint32_t lane = 0; lane < 32u; lane++)
        for (uint32_t i = 0; i < 4u; i++) {
            uint32_t r, c;
            frag_c(lane, i, &r, &c);
            int32_t acc = 0;
            for (uint32_t k = 0; k < K; k++)
                acc += op == 0 ? A[r][k] * Bm[k][c] : (A[r][k] & Bm[k][c]);
            d[lane][i] += acc;
        }
}

static uint32_t ld32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The sums of every tile of (f, n, B) through the emulated operands and mma,
 * against the Prop. 1 row sums. */
static void check_sums(dsb_format f, uint32_t n, uint32_t B, uint64_t seed)
{
    char tag[64];
    snprintf(tag, sizeof tag, "%s n=%u B=%u sums", dsb_format_name(f), n, B);
    dsb_gpu_layout L;
    if (dsb_gpu_layout_make(f, n, B, &L) || !dsb_gpu_tc_tiles(&L)) {
        CHECK(0, "%s: not a tensor-core shape", tag);
        return;
    }
    const int i8 = f == DSB_FMT_INT8;
    const uint32_t np = L.np, W = L.W, rb = L.row_bytes, T = dsb_gpu_tc_tiles(&L);
    const uint32_t mtiles = np / 16u, tiles = mtiles * ((B + 7u) / 8u);
    const uint32_t nks = dsb_gpu_tc_ksteps(i8, np, W);
    /* the image: rows (and minus plane) and one sign buffer, zero padding as
     * dsb_gpu_load_block and the steps leave it */
    unsigned char *rows = calloc((size_t)np * rb, 1), *minus = calloc((size_t)np * rb, 1);
    unsigned char *sg = calloc((size_t)B * rb, 1);
    for (uint32_t r = 0; r < n; r++)
        for (uint32_t c = 0; c < n; c++) {
            uint64_t h = dsb_counter_hash(seed, r, c);
            if (i8) {
                rows[(size_t)r * rb + c] = (unsigned char)(int8_t)((int)(h % 255u) - 127);
            } else {
                if (h & 1u) rows[(size_t)r * rb + c / 8u] |= (unsigned char)(1u << (c % 8u));
                if (f == DSB_FMT_TERNARY && (h & 6u) == 6u && !(h & 1u))
                    minus[(size_t)r * rb + c / 8u] |= (unsigned char)(1u << (c % 8u));
            }
        }
    for (uint32_t b = 0; b < B; b++)
        for (uint32_t r = 0; r < np; r++) {
            int up = r < n && (dsb_counter_hash(seed ^ 0xabcull, b, r) & 1u);
            if (i8) sg[(size_t)b * rb + r] = (unsigned char)(int8_t)(up ? 1 : -1);
            else if (up) sg[(size_t)b * rb + r / 8u] |= (unsigned char)(1u << (r % 8u));
        }
    /* the step loop's form of the offsets (one base per operand plus constants,
     * layout.h), and the tile T-1 a warp with T-1 tiles computes and discards:
     * its operands lie inside the rows and the sign buffer, and its replicas
     * are >= B, so none of its pairs is live or stores a sign */
    size_t bad_rel = 0;
    for (uint32_t warp = 0; warp < 8u; warp++)
        for (uint32_t j = 0; j < T; j++) {
            uint32_t mt, nt;
            dsb_gpu_tc_tile(mtiles, warp, j, &mt, &nt);
            const int idle = warp + 8u * j >= tiles;
            for (uint32_t lane = 0; lane < 32u; lane++) {
                uint32_t bq = dsb_gpu_tc_bcol(nt, lane, B);
                uint32_t a0 = dsb_gpu_tc_a_off(i8, rb, mt, lane, 0u, 0u);
                uint32_t b0 = dsb_gpu_tc_b_off(i8, rb, bq, lane, 0u, 0u);
                for (uint32_t ks = 0; ks < nks; ks++) {
                    for (uint32_t i = 0; i < (i8 ? 4u : 2u); i++) {
                        uint32_t o = dsb_gpu_tc_a_off(i8, rb, mt, lane, ks, i);
                        if ((o != a0 + ks * dsb_gpu_tc_kbytes(i8) + dsb_gpu_tc_a_rel(i8, rb, i) ||
                             o + 4u > np * rb) && bad_rel++ == 0)
                            fprintf(stderr, "%s: warp %u tile %u lane %u ks %u A%u at %u\n", tag,
                                    warp, j, lane, ks, i, o);
                    }
                    for (uint32_t i = 0; i < (i8 ? 2u : 1u); i++) {
                        uint32_t o = dsb_gpu_tc_b_off(i8, rb, bq, lane, ks, i);
                        if ((o != b0 + ks * dsb_gpu_tc_kbytes(i8) + dsb_gpu_tc_b_rel(i8, i) ||
                             o + 4u > B * rb) && bad_rel++ == 0)
                            fprintf(stderr, "%s: warp %u tile %u lane %u ks %u B%u at %u\n", tag,
                                    warp, j, lane, ks, i, o);
                    }
                }
                for (uint32_t c = 0; c < 4u; c++) {
                    uint32_t b = dsb_gpu_tc_replica(nt, lane, c), r = dsb_gpu_tc_row(mt, lane, c);
                    /* INT8 sign byte of pair c: pair 0's plus (c & 1) rows and 8 (c >> 1) */
                    uint32_t so = dsb_gpu_tc_replica(nt, lane, 0u) * rb + dsb_gpu_tc_row(mt, lane, 0u);
                    if ((b * rb + r != so + (c & 1u) * rb + 8u * (c >> 1) || (idle && b < B)) &&
                        bad_rel++ == 0)
                        fprintf(stderr, "%s: warp %u tile %u lane %u pair %u: (%u, %u)%s\n", tag,
                                warp, j, lane, c, b, r, idle ? " in an idle tile" : "");
                }
                if (idle && 8u * nt + lane < B && lane < 8u && bad_rel++ == 0)
                    fprintf(stderr, "%s: idle tile stores a half\n", tag);
            }
        }
    CHECK(bad_rel == 0, "%s: %zu operand or store offsets off", tag, bad_rel);
    size_t bad = 0, checked = 0;
    for (uint32_t warp = 0; warp < 8u; warp++)
        for (uint32_t j = 0; j < T; j++) {
            if (warp + 8u * j >= tiles) continue;
            uint32_t mt, nt;
            dsb_gpu_tc_tile(mtiles, warp, j, &mt, &nt);
            int32_t p[32][4], q[32][4];
            memset(p, 0, sizeof p);
            memset(q, 0, sizeof q);
            for (uint32_t ks = 0; ks < nks; ks++) {
                uint32_t a[32][4], am[32][4], bb[32][2];
                for (uint32_t lane = 0; lane < 32u; lane++) {
                    uint32_t bq = dsb_gpu_tc_bcol(nt, lane, B);
                    for (uint32_t i = 0; i < (i8 ? 4u : 2u); i++) {
                        a[lane][i] = ld32(rows + dsb_gpu_tc_a_off(i8, rb, mt, lane, ks, i));
                        am[lane][i] = ld32(minus + dsb_gpu_tc_a_off(i8, rb, mt, lane, ks, i));
                    }
                    for (uint32_t i = 0; i < (i8 ? 2u : 1u); i++)
                        bb[lane][i] = ld32(sg + dsb_gpu_tc_b_off(i8, rb, bq, lane, ks, i));
                }
                /* the kernel's accumulators: INT8 even k steps in p, odd in q; PM1
                 * popc(J and not s) in p, popc(not J and s) in q; TERNARY the planes */
                if (f == DSB_FMT_TERNARY) {
                    emulate_mma(2, a, bb, p);
                    emulate_mma(2, am, bb, q);
                } else if (f == DSB_FMT_PM1) {
                    uint32_t na[32][4], nb[32][2];
                    for (uint32_t lane = 0; lane < 32u; lane++) {
                        for (uint32_t i = 0; i < 4u; i++) na[lane][i] = ~a[lane][i];
                        for (uint32_t i = 0; i < 2u; i++) nb[lane][i] = ~bb[lane][i];
                    }
                    emulate_mma(2, a, nb, p);
                    emulate_mma(2, na, bb, q);
                } else {
                    emulate_mma(0, a, bb, (ks & 1u) ? q : p);
                }
            }
            for (uint32_t lane = 0; lane < 32u; lane++)
                for (uint32_t c = 0; c < 4u; c++) {
                    uint32_t b = dsb_gpu_tc_replica(nt, lane, c), r = dsb_gpu_tc_row(mt, lane, c);
                    if (b >= B || r >= n) continue;
                    int32_t got = dsb_gpu_tc_combine(f, p[lane][c], q[lane][c]), want;
                    if (i8) {
                        want = dsb_int8_row_sum((const int8_t *)rows + (size_t)r * rb,
                                                (const int8_t *)sg + (size_t)b * rb, np);
                    } else {
                        uint32_t u[16], m[16], v[16];
                        for (uint32_t w = 0; w < W; w++) {
                            u[w] = ld32(rows + (size_t)r * rb + 4u * w);
                            m[w] = ld32(minus + (size_t)r * rb + 4u * w);
                            v[w] = ld32(sg + (size_t)b * rb + 4u * w);
                        }
                        want = f == DSB_FMT_PM1 ? dsb_pm1_row_sum(u, v, W, 0u, 0)
                                                : dsb_ternary_row_sum(u, m, 0, v, W);
                    }
                    checked++;
                    if (got != want && bad++ == 0)
                        fprintf(stderr, "%s: replica %u row %u: tensor %d, Prop. 1 %d\n", tag, b,
                                r, got, want);
                }
        }
    CHECK(bad == 0, "%s: %zu of %zu sums differ", tag, bad, checked);
    CHECK_EQ_I64(checked, (uint64_t)B * n, tag);
    free(rows);
    free(minus);
    free(sg);
}

int main(void)
{
    /* the gather of every 4th bit, against a plain loop */
    for (uint32_t k = 0; k < 2000u; k++) {
        uint32_t v = (uint32_t)dsb_counter_hash(77, k, 0), t = k & 3u, want = 0;
        for (uint32_t g = 0; g < 8u; g++) want |= ((v >> (4u * g + t)) & 1u) << g;
        CHECK_EQ_I64(dsb_gpu_tc_gather8(v, t), want, "gather8");
    }
    /* the tile rule: at most 32 tiles of 16 rows x 8 replicas */
    CHECK_EQ_I64(dsb_gpu_tc_tiles_of(128, 8), 1, "int8 reference: 8 tiles, 1 per warp");
    CHECK_EQ_I64(dsb_gpu_tc_tiles_of(512, 8), 4, "n_p 512, B 8: 32 tiles");
    CHECK_EQ_I64(dsb_gpu_tc_tiles_of(192, 8), 2, "n_p 192, B 8: 12 tiles");
    CHECK_EQ_I64(dsb_gpu_tc_tiles_of(64, 1), 1, "n_p 64, B 1: 4 tiles");
    CHECK_EQ_I64(dsb_gpu_tc_tiles_of(384, 10), 0, "n_p 384, B 10: 48 tiles");
    CHECK_EQ_I64(dsb_gpu_tc_tiles_of(32, 128), 4, "n_p 32, B 128: 32 tiles");
    CHECK_EQ_I64(dsb_gpu_tc_tiles_of(32, 129), 0, "n_p 32, B 129: 34 tiles");
    /* AUTO's engine: the tensor cores wherever they fit (the H200, v5 body: 1.09-5.5x the
     * CUDA cores in every configuration of the grid at B = 8; docs/perf/table3.md) */
    static const struct {
        dsb_format f;
        uint32_t n, B;
        int tensor;
        const char *why;
    } engine[] = {
        {DSB_FMT_INT8, 64, 8, 1, "int8 n 64: tensor 1.36x"},
        {DSB_FMT_INT8, 128, 8, 1, "int8 n 128: tensor 1.92x"},
        {DSB_FMT_INT8, 256, 8, 1, "int8 n 256: tensor 2.2x"},
        {DSB_FMT_PM1, 64, 8, 1, "pm1 n 64: tensor 1.09x"},
        {DSB_FMT_PM1, 256, 8, 1, "pm1 n 256: tensor 1.56x"},
        {DSB_FMT_PM1, 512, 8, 1, "pm1 n 512: tensor 3.3x"},
        {DSB_FMT_TERNARY, 128, 8, 1, "ternary n 128: tensor 1.64x"},
        {DSB_FMT_TERNARY, 512, 8, 1, "ternary n 512: tensor 5.2x"},
        {DSB_FMT_PM1, 384, 9, 0, "48 tiles do not fit the tensor-core body"},
        {DSB_FMT_INT8, 384, 10, 0, "48 tiles do not fit the tensor-core body"},
    };
    for (size_t i = 0; i < sizeof engine / sizeof engine[0]; i++) {
        dsb_gpu_layout L;
        if (dsb_gpu_layout_make(engine[i].f, engine[i].n, engine[i].B, &L)) {
            CHECK(0, "%s: no layout", engine[i].why);
            continue;
        }
        CHECK_EQ_I64(dsb_gpu_tc_pick(&L, DSB_GPU_SUMS_AUTO) != 0u, engine[i].tensor,
                     engine[i].why);
        CHECK_EQ_I64(dsb_gpu_tc_pick(&L, DSB_GPU_SUMS_CUDA), 0, "cuda never");
        CHECK_EQ_I64(dsb_gpu_tc_pick(&L, DSB_GPU_SUMS_TENSOR), dsb_gpu_tc_tiles(&L),
                     "tensor wherever it fits");
        CHECK_EQ_I64(dsb_gpu_sums_for(DSB_GPU_SUMS_AUTO, engine[i].f, engine[i].n, engine[i].B),
                     engine[i].tensor ? DSB_GPU_SUMS_TENSOR : DSB_GPU_SUMS_CUDA, engine[i].why);
    }
    /* every admitted shape of a grid of n and B */
    static const uint32_t ns[] = {1, 31, 32, 33, 64, 100, 128, 160, 192, 200, 256, 384, 512};
    static const uint32_t Bs[] = {1, 2, 3, 5, 7, 8, 9, 12, 16, 24, 32, 33, 64, 128};
    uint32_t shapes = 0;
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (size_t k = 0; k < sizeof Bs / sizeof Bs[0]; k++) {
            dsb_gpu_layout L;
            if (dsb_gpu_layout_make(DSB_FMT_PM1, ns[i], Bs[k], &L) || !dsb_gpu_tc_tiles(&L))
                continue;
            check_shape(ns[i], Bs[k], 1000u + i * 31u + k);
            shapes++;
        }
    CHECK(shapes >= 60, "only %u shapes admitted", shapes);
    /* the sums through the operand offsets and an emulated mma */
    static const struct {
        dsb_format f;
        uint32_t n, B;
    } S[] = {{DSB_FMT_INT8, 128, 8},  {DSB_FMT_INT8, 100, 5},   {DSB_FMT_INT8, 192, 8},
             {DSB_FMT_INT8, 256, 12}, {DSB_FMT_INT8, 32, 128},  {DSB_FMT_INT8, 77, 1},
             {DSB_FMT_PM1, 64, 1},    {DSB_FMT_PM1, 160, 24},   {DSB_FMT_PM1, 256, 8},
             {DSB_FMT_PM1, 512, 8},   {DSB_FMT_PM1, 33, 3},     {DSB_FMT_TERNARY, 128, 8},
             {DSB_FMT_TERNARY, 384, 5}, {DSB_FMT_TERNARY, 200, 5}, {DSB_FMT_TERNARY, 31, 1}};
    for (size_t i = 0; i < sizeof S / sizeof S[0]; i++) check_sums(S[i].f, S[i].n, S[i].B, 500u + i);
    printf("tensor-core tile map: %u shapes checked\n", shapes);
    return check_done();
}
