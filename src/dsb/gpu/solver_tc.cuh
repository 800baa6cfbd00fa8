/* The request-per-block dSB kernel with its coupling sums on the tensor cores
 * (seed 000, Sec. IV; Prop. 1 computed by integer mma, exact in s32, so the
 * trajectories stay bit-exact with the CPU reference).
 *
 * For all B replicas the coupling sums of one step are one integer matrix
 * product: A = J (n_p x n_p) times S = the current signs (n_p x B).  The
 * block cuts the n_p x B result into tiles of 16 rows x 8 replicas; warp w
 * owns tiles w, w + 8, ... (at most DSB_GPU_TC_MAX_TILES of them, so at most
 * 32 tiles a block).  A lane keeps, for each of its tiles, the four
 * (replica, row) pairs at the positions of the mma accumulator fragment
 * (ptx.cuh: rows g and g + 8, replicas 2t and 2t + 1 with g = lane / 4,
 * t = lane % 4), so the sums land in the registers of the lane that steps
 * those pairs and nothing is exchanged between the product and the update.
 *
 * Per format (A rows and S columns are read straight from the Eq. 6 layout;
 * its odd 16-byte row strides make the fragment loads conflict-free):
 *   INT8     m16n8k32 s8: the +-1 sign bytes are S; a = J s.
 *   PM1      two m16n8k128 b1 and.popc: popc(J_i xor s) = popc(J_i and not s)
 *            + popc(not J_i and s); a = n - 2 popc(J_i xor s) + s_i (the row term
 *            as on the CUDA cores).
 *   TERNARY  two m16n8k128 b1 and.popc (plus and minus planes):
 *            a = 2 (popc(P_i and s) - popc(M_i and s)) - (|P_i| - |M_i|).
 * The padding words of rows and sign rows are zero (dsb_gpu_load_block), so
 * the products over whole 4-word chunks add nothing beyond the W-th word.
 *
 * New signs: INT8 lanes store their sign bytes; the bit formats gather the
 * tile's 16 rows x 8 replicas with four ballots, and lanes 0..7 each store
 * the 16-bit half word of one replica (rows 16 mt .. 16 mt + 15 are bits
 * 16 (mt mod 2) .. of word mt / 2, i.e. byte offset 2 mt of the sign row).
 * Replicas B..8 ceil(B/8) - 1 of the last tile column are computed on a copy
 * of replica B - 1's signs (the fragment loads are clamped) and discarded. */
#ifndef DSB_GPU_SOLVER_TC_CUH
#define DSB_GPU_SOLVER_TC_CUH

#include "solver_body.cuh"

/* The 16 spin bits of replica 8 nt + lane (lanes 0..7) of one tile, from
 * this lane's four pairs (dsb_gpu_tc_half); every lane calls it. */
static __device__ __forceinline__ uint32_t dsb_tc_pack16(const float *xs, uint32_t lane)
{
    uint32_t v[4];
#pragma unroll
    for (int c = 0; c < 4; c++) v[c] = __ballot_sync(0xffffffffu, dsb_spin_bit(xs[c]) != 0u);
    return dsb_gpu_tc_half(v, lane);
}

/* Writes the signs of one tile's pairs (this lane's xs[0..3]) into the sign
 * buffer sg, replicas below B only. */
static __device__ __forceinline__ void dsb_tc_store_signs(const int FMT, unsigned char *sg,
                                                          uint32_t rb, uint32_t B, uint32_t mt,
                                                          uint32_t nt, const float *xs,
                                                          uint32_t lane)
{
    if (FMT == DSB_FMT_INT8) {
#pragma unroll
        for (uint32_t c = 0; c < 4u; c++) {
            const uint32_t b = dsb_gpu_tc_replica(nt, lane, c), r = dsb_gpu_tc_row(mt, lane, c);
            if (b < B) ((int8_t *)(sg + b * rb))[r] = (int8_t)dsb_sign(xs[c]);
        }
    } else {
        const uint32_t half = dsb_tc_pack16(xs, lane);
        const uint32_t b = 8u * nt + lane;
        if (lane < 8u && b < B) *(uint16_t *)(sg + b * rb + 2u * mt) = (uint16_t)half;
    }
}

/* Coupling sums without the row-level term of one tile (rows 16 mt..; bq:
 * this lane's B column, dsb_gpu_tc_bcol), in the accumulator layout: d[c] for
 * pair c (dsb_gpu_tc_row / dsb_gpu_tc_replica).  Operand offsets from
 * layout.h; nks k steps (dsb_gpu_tc_ksteps). */
static __device__ __forceinline__ void dsb_tc_tile_sums(const int FMT, const unsigned char *rows,
                                                        const unsigned char *minus,
                                                        const unsigned char *sg, uint32_t rb,
                                                        uint32_t mt, uint32_t bq, uint32_t nks,
                                                        uint32_t lane, int32_t *d)
{
    const int i8 = FMT == DSB_FMT_INT8;
#define A_(base, ks, i) (*(const uint32_t *)((base) + dsb_gpu_tc_a_off(i8, rb, mt, lane, (ks), (i))))
#define B_(ks, i) (*(const uint32_t *)(sg + dsb_gpu_tc_b_off(i8, rb, bq, lane, (ks), (i))))
    int32_t p[4] = {0, 0, 0, 0}, q[4] = {0, 0, 0, 0}; /* two chains (INT8, PM1) or planes */
    if (FMT == DSB_FMT_INT8) {
        uint32_t ks = 0;
#pragma unroll 1
        for (; ks + 1u < nks; ks += 2u) {
            const uint32_t a0[4] = {A_(rows, ks, 0), A_(rows, ks, 1), A_(rows, ks, 2), A_(rows, ks, 3)};
            const uint32_t a1[4] = {A_(rows, ks + 1u, 0), A_(rows, ks + 1u, 1),
                                    A_(rows, ks + 1u, 2), A_(rows, ks + 1u, 3)};
            const uint32_t b00 = B_(ks, 0), b01 = B_(ks, 1);
            const uint32_t b10 = B_(ks + 1u, 0), b11 = B_(ks + 1u, 1);
            ptx_mma_s8_16832(p, a0, b00, b01);
            ptx_mma_s8_16832(q, a1, b10, b11);
        }
        if (ks < nks) {
            const uint32_t a0[4] = {A_(rows, ks, 0), A_(rows, ks, 1), A_(rows, ks, 2), A_(rows, ks, 3)};
            ptx_mma_s8_16832(p, a0, B_(ks, 0), B_(ks, 1));
        }
    } else {
#pragma unroll 1
        for (uint32_t ks = 0; ks < nks; ks++) {
            const uint32_t b0 = B_(ks, 0);
            if (FMT == DSB_FMT_PM1) {
                /* popc(J xor s) = popc(J and not s) + popc(not J and s): sm_90 has no
                 * native b1 xor mma (ptxas lowers .xor.popc to these two AND-popc
                 * BMMAs behind a subroutine call), so they are written out here.
                 * Padding bits are 0 in J and in s, so neither term counts them. */
                const uint32_t a0 = A_(rows, ks, 0), a1 = A_(rows, ks, 1);
                ptx_mma_b1_and_168128(p, a0, a1, ~b0);
                ptx_mma_b1_and_168128(q, ~a0, ~a1, b0);
            } else {
                ptx_mma_b1_and_168128(p, A_(rows, ks, 0), A_(rows, ks, 1), b0);
                ptx_mma_b1_and_168128(q, A_(minus, ks, 0), A_(minus, ks, 1), b0);
            }
        }
    }
#undef A_
#undef B_
#pragma unroll
    for (int c = 0; c < 4; c++) d[c] = dsb_gpu_tc_combine((dsb_format)FMT, p[c], q[c]);
}

/* The solve with T tiles per warp (a literal at each call site). */
static __device__ __forceinline__ void dsb_gpu_block_solve_tc(const dsb_gpu_args a, const int FMT,
                                                              const int T)
{
    const uint32_t tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5;
    const uint32_t g = lane >> 2;
    uint64_t t_start;
    long long c_start;
    dsb_gpu_clock_start(&t_start, &c_start);
    const uint32_t n = a.n, np = a.np, W = a.W, B = a.B, K = a.K, rb = a.row_bytes;
    const dsb_gpu_mem M = dsb_gpu_mem_of(&a);

    dsb_gpu_load_block(&a, FMT, &M);

    const uint32_t mtiles = np >> 4, tiles = mtiles * ((B + 7u) >> 3);
    const uint32_t nks = dsb_gpu_tc_ksteps(FMT == DSB_FMT_INT8, np, W);
    /* this warp's tiles: tile q = warp + 8 j is (mt, nt) = (q mod mtiles, q div mtiles) */
    uint32_t mt[DSB_GPU_TC_MAX_TILES], nt[DSB_GPU_TC_MAX_TILES], bq[DSB_GPU_TC_MAX_TILES];
    float x[4 * DSB_GPU_TC_MAX_TILES], y[4 * DSB_GPU_TC_MAX_TILES];
    uint32_t live = 0; /* bit 4j + c: pair (j, c) is a real (replica < B, row < n) pair */
#pragma unroll
    for (int j = 0; j < T; j++) {
        const uint32_t q = warp + 8u * (uint32_t)j;
        dsb_gpu_tc_tile(mtiles, warp, (uint32_t)j, &mt[j], &nt[j]);
        bq[j] = dsb_gpu_tc_bcol(nt[j], lane, B);
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const uint32_t b = dsb_gpu_tc_replica(nt[j], lane, (uint32_t)c);
            const uint32_t r = dsb_gpu_tc_row(mt[j], lane, (uint32_t)c);
            x[4 * j + c] = 0.0f;
            y[4 * j + c] = 0.0f;
            if (q < tiles && b < B && r < n) {
                live |= 1u << (4 * j + c);
                dsb_initial_state(a.seed, b, r, &x[4 * j + c], &y[4 * j + c]);
            }
        }
        if (q < tiles) dsb_tc_store_signs(FMT, M.signs, rb, B, mt[j], nt[j], &x[4 * j], lane);
    }
    __syncthreads();
    /* field and row constant of the two rows (g, g + 8) of each tile */
    int32_t fl[2 * DSB_GPU_TC_MAX_TILES], rcn[2 * DSB_GPU_TC_MAX_TILES];
#pragma unroll
    for (int j = 0; j < T; j++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const uint32_t r = min(dsb_gpu_tc_row(mt[j], lane, 2u * (uint32_t)h), np - 1u);
            fl[2 * j + h] = M.field[r];
            rcn[2 * j + h] = FMT == DSB_FMT_TERNARY ? M.rowc[r] : 0;
        }

    const float xi = a.xi, dt = a.dt;
    for (uint32_t k = 0; k < K; k++) {
        const float damping = dsb_damping(k, K);
        const unsigned char *cur = M.signs + (k & 1u) * a.sign_buf_bytes;
        unsigned char *nxt = M.signs + ((k & 1u) ^ 1u) * a.sign_buf_bytes;
#pragma unroll
        for (int j = 0; j < T; j++) {
            if (warp + 8u * (uint32_t)j >= tiles) continue; /* warp-uniform */
            int32_t s[4];
            dsb_tc_tile_sums(FMT, M.rows, M.minus, cur, rb, mt[j], bq[j], nks, lane, s);
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const int i = 4 * j + c;
                const int h = 2 * j + (c >> 1);
                const int32_t ai = s[c] + dsb_gpu_row_term(FMT, n, x[i], rcn[h]) + fl[h];
                float xn = x[i], yn = y[i];
                dsb_step(&xn, &yn, ai, damping, xi, dt);
                const int on = (live >> i) & 1u;
                x[i] = on ? xn : x[i];
                y[i] = on ? yn : y[i];
            }
            dsb_tc_store_signs(FMT, nxt, rb, B, mt[j], nt[j], &x[4 * j], lane);
        }
        __syncthreads();
    }

    /* ---- energies 2E = sum_i -s_i (sum_j J_ij s_j + 2 h_i), final spins ---- */
    const unsigned char *fin = M.signs + (K & 1u) * a.sign_buf_bytes;
#pragma unroll
    for (int j = 0; j < T; j++) {
        if (warp + 8u * (uint32_t)j >= tiles) continue;
        int32_t s[4];
        dsb_tc_tile_sums(FMT, M.rows, M.minus, fin, rb, mt[j], bq[j], nks, lane, s);
        int64_t e[4];
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int i = 4 * j + c;
            const int h = 2 * j + (c >> 1);
            e[c] = 0;
            if ((live >> i) & 1u)
                e[c] = dsb_energy2_term(dsb_sign(x[i]),
                                        s[c] + dsb_gpu_row_term(FMT, n, x[i], rcn[h]), fl[h]);
        }
        /* replicas 2t (pairs 0, 2) and 2t + 1 (pairs 1, 3), summed over g */
        int64_t e0 = e[0] + e[2], e1 = e[1] + e[3];
#pragma unroll
        for (int o = 4; o < 32; o <<= 1) {
            e0 += __shfl_xor_sync(0xffffffffu, e0, o);
            e1 += __shfl_xor_sync(0xffffffffu, e1, o);
        }
        const uint32_t b0 = dsb_gpu_tc_replica(nt[j], lane, 0u);
        if (g == 0u) {
            if (b0 < B) atomicAdd(&M.energy[b0], (unsigned long long)e0);
            if (b0 + 1u < B) atomicAdd(&M.energy[b0 + 1u], (unsigned long long)e1);
        }
        const uint32_t half = dsb_tc_pack16(&x[4 * j], lane);
        const uint32_t bs = 8u * nt[j] + lane;
        if (lane < 8u && bs < B) {
            ((uint16_t *)M.stage)[2u * bs * W + mt[j]] = (uint16_t)half;
            if (a.spins) ((uint16_t *)a.spins)[2u * bs * W + mt[j]] = (uint16_t)half;
        }
        if (a.x) {
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const uint32_t b = dsb_gpu_tc_replica(nt[j], lane, (uint32_t)c);
                const uint32_t r = dsb_gpu_tc_row(mt[j], lane, (uint32_t)c);
                if ((live >> (4 * j + c)) & 1u) {
                    a.x[(size_t)b * n + r] = x[4 * j + c];
                    a.y[(size_t)b * n + r] = y[4 * j + c];
                }
            }
        }
    }
    __syncthreads();
    dsb_gpu_write_reply(&a, M.energy, M.stage, t_start, c_start);
}

/* One kernel per (format, tiles per warp). */
#define DSB_GPU_TC_KERNEL(TAG, FMT, T)                                                    \
    __global__ void __launch_bounds__(DSB_GPU_THREADS, 2)                                 \
        dsb_gpu_k_##TAG##_tc##T(const dsb_gpu_args a)                                     \
    {                                                                                     \
        dsb_gpu_block_solve_tc(a, FMT, T);                                                \
    }
#define DSB_GPU_TC_KERNELS(TAG, FMT)                                                      \
    DSB_GPU_TC_KERNEL(TAG, FMT, 1) DSB_GPU_TC_KERNEL(TAG, FMT, 2)                         \
    DSB_GPU_TC_KERNEL(TAG, FMT, 3) DSB_GPU_TC_KERNEL(TAG, FMT, 4)

#endif
