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

/* Loop-invariant state of one lane for the steps, computed once before the
 * first step.  The first version re-derived every operand address from
 * threadIdx (S2R SR_TID.X, ~25 cycles) and from kernel parameters (LDC) in
 * each step: ~25 of the ~210 instructions a warp issued per INT8 n=128 step,
 * some of them at the head of the step's dependency chain. */
typedef struct {
    uint32_t ao[DSB_GPU_TC_MAX_TILES]; /* A register 0 at ks = 0 (dsb_gpu_tc_a_off), from the rows */
    uint32_t bo[DSB_GPU_TC_MAX_TILES]; /* B register 0 at ks = 0 (dsb_gpu_tc_b_off), from a sign buffer */
    uint32_t so[DSB_GPU_TC_MAX_TILES]; /* INT8: sign byte of pair 0 (replica b0, row r0); bits: the half */
    uint32_t st;   /* INT8 bit 4j + c: pair (j, c) has replica < B; bits bit j: lane stores tile j's half */
    uint32_t live; /* bit 4j + c: pair (j, c) is real (tile < tiles, replica < B, row < n) */
    uint32_t rb, nks, sbb;
    int32_t fl[2 * DSB_GPU_TC_MAX_TILES], rcn[2 * DSB_GPU_TC_MAX_TILES];
} dsb_tc_lane;

/* Writes the signs of tile j's pairs (this lane's xs[0..3]) into the sign
 * buffer sn at the lane's offsets (L->so, L->st): INT8 pair c is replica
 * b0 + (c & 1), row r0 + 8 (c >> 1); the bit formats store the tile's 16-bit
 * half of each replica from lanes 0..7.  Every lane calls it (ballots). */
static __device__ __forceinline__ void dsb_tc_put_signs(const int FMT, unsigned char *sn,
                                                        const dsb_tc_lane *L, int j,
                                                        const float *xs, uint32_t lane)
{
    if (FMT == DSB_FMT_INT8) {
#pragma unroll
        for (int c = 0; c < 4; c++)
            if ((L->st >> (4 * j + c)) & 1u) {
                const uint32_t o = L->so[j] + (uint32_t)(c & 1) * L->rb + 8u * (uint32_t)(c >> 1);
                ((int8_t *)sn)[o] = (int8_t)dsb_sign(xs[c]);
            }
    } else {
        const uint32_t half = dsb_tc_pack16(xs, lane);
        if ((L->st >> j) & 1u) *(uint16_t *)(sn + L->so[j]) = (uint16_t)half;
    }
}

/* Per-phase cycle stamps of the step loop, for the diagnostic build only
 * (src/dsb/gpu/diag_tc_phases.cu defines DSB_TC_PHASES and dsb_tc_phases_out);
 * production builds compile these to nothing.  A stamp after a phase first
 * stores a value of that phase to a volatile shared word: a warp issues in
 * order and the store waits for its operand, so the clock read that follows
 * sees the phase's results, not just its issue. */
#ifdef DSB_TC_PHASES
static __device__ void dsb_tc_phases_out(const long long *ph, uint32_t K);
#define DSB_TC_PH_DECL long long ph_[4] = {0, 0, 0, 0}, pt_ = clock64()
#define DSB_TC_PH(i, v)                                                                   \
    do {                                                                                  \
        *(volatile int32_t *)(dsb_smem + ap->off_s0) = (int32_t)(v);                      \
        const long long t_ = clock64();                                                   \
        ph_[i] += t_ - pt_;                                                               \
        pt_ = t_;                                                                         \
    } while (0)
#define DSB_TC_PH_END dsb_tc_phases_out(ph_, K)
#else
#define DSB_TC_PH_DECL (void)0
#define DSB_TC_PH(i, v) (void)0
#define DSB_TC_PH_END (void)0
#endif

static __device__ __forceinline__ uint32_t dsb_tc_ld(const unsigned char *p)
{
    return *(const uint32_t *)p;
}

/* Coupling sums without the row-level term of all T tiles of the warp, in
 * the accumulator layout: d[4 j + c] for pair c of tile j (dsb_gpu_tc_row /
 * dsb_gpu_tc_replica).  Operand offsets from layout.h (base + ks
 * dsb_gpu_tc_kbytes + dsb_gpu_tc_a_rel / _b_rel).  The k loop is outermost
 * and the tiles innermost, so the T tiles' mma are independent chains that
 * overlap (the first version ran each tile's k loop to the end before the
 * next tile's loads: T serial chains).  Tile T-1 of a warp with T-1 tiles
 * (warp + 8 (T-1) >= tiles) is computed on in-range operands (its mt <
 * mtiles; its B column is clamped to replica B-1) and discarded: its pairs
 * are not live and their replicas are >= B, so nothing is stored; a branch
 * around it would split the loop body and stop the loads being scheduled
 * ahead of the mma. */
static __device__ __forceinline__ void dsb_tc_sums(const int FMT, const int T,
                                                   const dsb_gpu_mem *M, const unsigned char *sg,
                                                   const dsb_tc_lane *L, int32_t *d)
{
    const int i8 = FMT == DSB_FMT_INT8;
    const uint32_t KB = dsb_gpu_tc_kbytes(i8), rb = L->rb, nks = L->nks;
    int32_t p[4 * DSB_GPU_TC_MAX_TILES], q[4 * DSB_GPU_TC_MAX_TILES];
#pragma unroll
    for (int i = 0; i < 4 * T; i++) p[i] = q[i] = 0;
    if (FMT == DSB_FMT_INT8) {
        /* two k steps an iteration into two chains per tile (even ks in p, odd
         * in q): all loads of both are issued before the first mma */
        uint32_t ks = 0;
#pragma unroll 1
        for (; ks + 1u < nks; ks += 2u) {
            uint32_t a0[DSB_GPU_TC_MAX_TILES][4], a1[DSB_GPU_TC_MAX_TILES][4];
            uint32_t b0[DSB_GPU_TC_MAX_TILES][2], b1[DSB_GPU_TC_MAX_TILES][2];
#pragma unroll
            for (int j = 0; j < T; j++) {
                const unsigned char *pa = M->rows + L->ao[j] + ks * KB;
                const unsigned char *pb = sg + L->bo[j] + ks * KB;
#pragma unroll
                for (uint32_t i = 0; i < 4u; i++) {
                    a0[j][i] = dsb_tc_ld(pa + dsb_gpu_tc_a_rel(1, rb, i));
                    a1[j][i] = dsb_tc_ld(pa + KB + dsb_gpu_tc_a_rel(1, rb, i));
                }
#pragma unroll
                for (uint32_t i = 0; i < 2u; i++) {
                    b0[j][i] = dsb_tc_ld(pb + dsb_gpu_tc_b_rel(1, i));
                    b1[j][i] = dsb_tc_ld(pb + KB + dsb_gpu_tc_b_rel(1, i));
                }
            }
#pragma unroll
            for (int j = 0; j < T; j++) {
                ptx_mma_s8_16832(&p[4 * j], a0[j], b0[j][0], b0[j][1]);
                ptx_mma_s8_16832(&q[4 * j], a1[j], b1[j][0], b1[j][1]);
            }
        }
        if (ks < nks) {
#pragma unroll
            for (int j = 0; j < T; j++) {
                const unsigned char *pa = M->rows + L->ao[j] + ks * KB;
                const unsigned char *pb = sg + L->bo[j] + ks * KB;
                uint32_t a0[4];
#pragma unroll
                for (uint32_t i = 0; i < 4u; i++) a0[i] = dsb_tc_ld(pa + dsb_gpu_tc_a_rel(1, rb, i));
                ptx_mma_s8_16832(&p[4 * j], a0, dsb_tc_ld(pb + dsb_gpu_tc_b_rel(1, 0u)),
                                 dsb_tc_ld(pb + dsb_gpu_tc_b_rel(1, 1u)));
            }
        }
    } else {
#pragma unroll 1
        for (uint32_t ks = 0; ks < nks; ks++) {
            uint32_t a0[DSB_GPU_TC_MAX_TILES], a1[DSB_GPU_TC_MAX_TILES];
            uint32_t m0[DSB_GPU_TC_MAX_TILES], m1[DSB_GPU_TC_MAX_TILES];
            uint32_t b0[DSB_GPU_TC_MAX_TILES];
#pragma unroll
            for (int j = 0; j < T; j++) {
                const uint32_t oa = L->ao[j] + ks * KB;
                a0[j] = dsb_tc_ld(M->rows + oa + dsb_gpu_tc_a_rel(0, rb, 0u));
                a1[j] = dsb_tc_ld(M->rows + oa + dsb_gpu_tc_a_rel(0, rb, 1u));
                if (FMT == DSB_FMT_TERNARY) {
                    m0[j] = dsb_tc_ld(M->minus + oa + dsb_gpu_tc_a_rel(0, rb, 0u));
                    m1[j] = dsb_tc_ld(M->minus + oa + dsb_gpu_tc_a_rel(0, rb, 1u));
                }
                b0[j] = dsb_tc_ld(sg + L->bo[j] + ks * KB + dsb_gpu_tc_b_rel(0, 0u));
            }
#pragma unroll
            for (int j = 0; j < T; j++) {
                if (FMT == DSB_FMT_PM1) {
                    /* popc(J xor s) = popc(J and not s) + popc(not J and s): sm_90
                     * has no native b1 xor mma (ptxas lowers .xor.popc to these two
                     * AND-popc BMMAs behind a subroutine call), so they are written
                     * out here.  Padding bits are 0 in J and in s, so neither term
                     * counts them. */
                    ptx_mma_b1_and_168128(&p[4 * j], a0[j], a1[j], ~b0[j]);
                    ptx_mma_b1_and_168128(&q[4 * j], ~a0[j], ~a1[j], b0[j]);
                } else {
                    ptx_mma_b1_and_168128(&p[4 * j], a0[j], a1[j], b0[j]);
                    ptx_mma_b1_and_168128(&q[4 * j], m0[j], m1[j], b0[j]);
                }
            }
        }
    }
#pragma unroll
    for (int i = 0; i < 4 * T; i++) d[i] = dsb_gpu_tc_combine((dsb_format)FMT, p[i], q[i]);
}

/* INT8 with one tile a warp (n_p <= 128 for B <= 8): the tile's A fragments,
 * NKS k steps of 4 registers (<= 16), stay in registers for the whole solve,
 * and each k step is its own accumulator chain.  A step then loads only the
 * 2 NKS B words: the A loads were 16 of the 24 LDS a warp issued per step and
 * 128 of the 192 shared-memory wavefronts of the SM's step (8 warps), and
 * with NKS independent IMMA (54.5 cycles dependent, 13.6 apart with 4
 * chains, probe) the product takes ~55 + 3 x 14 cycles after the B loads
 * instead of two dependent IMMA behind two rounds of loads. */
static __device__ __forceinline__ void dsb_tc_sums_reg(const int NKS, uint32_t (*A)[4],
                                                       const unsigned char *sg,
                                                       const dsb_tc_lane *L, int32_t *d)
{
    const uint32_t KB = dsb_gpu_tc_kbytes(1);
    uint32_t b[4][2];
#pragma unroll
    for (int ks = 0; ks < NKS; ks++)
#pragma unroll
        for (uint32_t i = 0; i < 2u; i++)
            b[ks][i] = dsb_tc_ld(sg + L->bo[0] + (uint32_t)ks * KB + dsb_gpu_tc_b_rel(1, i));
    int32_t acc[4][4];
#pragma unroll
    for (int ks = 0; ks < NKS; ks++) {
#pragma unroll
        for (int c = 0; c < 4; c++) acc[ks][c] = 0;
        ptx_mma_s8_16832(acc[ks], A[ks], b[ks][0], b[ks][1]);
    }
#pragma unroll
    for (int c = 0; c < 4; c++) {
        int32_t v = acc[0][c];
#pragma unroll
        for (int ks = 1; ks < NKS; ks++) v += acc[ks][c];
        d[c] = v;
    }
}

/* The K steps.  NKS > 0: INT8 one tile a warp with A in registers
 * (dsb_tc_sums_reg, NKS = n_p / 32 as a literal); 0: dsb_tc_sums.  act: the
 * warp has a tile (only T = 1 warps can have none; warp-uniform). */
static __device__ __forceinline__ void dsb_tc_steps(const int FMT, const int T, const int NKS,
                                                    const dsb_gpu_args *ap, const dsb_gpu_mem *M,
                                                    const dsb_tc_lane *L, uint32_t lane, int act,
                                                    float *x, float *y)
{
    const uint32_t n = ap->n, K = ap->K;
    const float xi = ap->xi, dt = ap->dt;
    uint32_t A[4][4];
    if (NKS > 0) {
#pragma unroll
        for (int ks = 0; ks < NKS; ks++)
#pragma unroll
            for (uint32_t i = 0; i < 4u; i++)
                A[ks][i] = dsb_tc_ld(M->rows + L->ao[0] + (uint32_t)ks * dsb_gpu_tc_kbytes(1) +
                                     dsb_gpu_tc_a_rel(1, L->rb, i));
    }
    uint32_t cur = 0, nxt = L->sbb; /* sign buffer k mod 2, and the other */
    /* The damping (1 - k/(K-1)) is an IEEE division (dsb_damping, bit-exact
     * with the CPU): MUFU.RCP, an FFMA chain, an FCHK and a branch to a slow
     * path, which ptxas placed at the head of every step, before the loads.
     * Lane l computes the damping of step k0 + l once every 32 steps with the
     * same function, and each step takes its value with one shuffle that has
     * the whole product to complete in.  The division sits in an outer loop
     * over blocks of 32 steps, not behind an `if (k % 32 == 0)` in the step
     * loop: there its call to the division's slow path (a subroutine with
     * fixed argument and return-address registers) and its branch were part
     * of every step's code, and in the pipeline worker's wrappers ptxas kept
     * the loop's predicates (loop end, act) in a general register that it
     * spilled (one STL and two LDL a step, the second on the way to the
     * step's first load; NOTES-gpusolver.md, v5 in the pipeline). */
    DSB_TC_PH_DECL;
    for (uint32_t k0 = 0; k0 < K; k0 += 32u) {
        const float dtab = dsb_damping(k0 + lane, K);
        const uint32_t kn = min(K - k0, 32u);
        for (uint32_t kk = 0; kk < kn; kk++) {
            const float damping = __shfl_sync(0xffffffffu, dtab, (int)kk);
            DSB_TC_PH(0, damping);
            if (act) {
                const unsigned char *sg = M->signs + cur;
                unsigned char *sn = M->signs + nxt;
                int32_t s[4 * DSB_GPU_TC_MAX_TILES];
                if (NKS > 0) dsb_tc_sums_reg(NKS, A, sg, L, s);
                else dsb_tc_sums(FMT, T, M, sg, L, s);
                DSB_TC_PH(1, s[0] ^ s[4 * T - 1]);
#pragma unroll
                for (int j = 0; j < T; j++) {
#pragma unroll
                    for (int c = 0; c < 4; c++) {
                        const int i = 4 * j + c;
                        const int h = 2 * j + (c >> 1);
                        const int32_t ai =
                            s[i] + dsb_gpu_row_term(FMT, n, x[i], L->rcn[h]) + L->fl[h];
                        float xn = x[i], yn = y[i];
                        dsb_step(&xn, &yn, ai, damping, xi, dt);
                        const int on = (L->live >> i) & 1u;
                        x[i] = on ? xn : x[i];
                        y[i] = on ? yn : y[i];
                    }
                    dsb_tc_put_signs(FMT, sn, L, j, &x[4 * j], lane);
                }
                DSB_TC_PH(2, __float_as_int(x[0]) ^ __float_as_int(x[4 * T - 1]));
            }
            const uint32_t t = cur;
            cur = nxt;
            nxt = t;
            __syncthreads();
            DSB_TC_PH(3, 0);
        }
    }
    DSB_TC_PH_END;
}

/* The solve with T tiles per warp (a literal at each call site), on the
 * arguments at ap: the kernel's own parameter (one-request kernels) or the
 * copy in the pipeline worker's shared area.  Only what the steps need is
 * read before them; everything the solve needs afterwards (the output
 * pointers, B, W, n, the shared-memory offsets) is read through ap again
 * after the last step.  In a kernel both are constant-bank operands and cost
 * no register; in the worker's __noinline__ wrappers a value read before the
 * steps and used after them is a register held across the whole step loop
 * (~15 of them: five 64-bit pointers, seq, B, W, ...), and the barriers and
 * sign stores in between make the compiler re-read instead. */
static __device__ __forceinline__ void dsb_gpu_block_solve_tc(const dsb_gpu_args *ap, const int FMT,
                                                              const int T)
{
    const dsb_gpu_args a = *ap; /* fields read before the steps only */
    const uint32_t tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5;
    const uint32_t g = lane >> 2;
    uint64_t t_start;
    long long c_start;
    dsb_gpu_clock_start(&t_start, &c_start);
    const uint32_t n = a.n, np = a.np, B = a.B, rb = a.row_bytes;
    const dsb_gpu_mem M = dsb_gpu_mem_of(&a);

    dsb_gpu_load_block(ap, FMT, &M);

    const int i8 = FMT == DSB_FMT_INT8;
    const uint32_t mtiles = np >> 4, tiles = mtiles * ((B + 7u) >> 3);
    dsb_tc_lane L;
    L.rb = rb;
    L.nks = dsb_gpu_tc_ksteps(i8, np, a.W);
    L.sbb = a.sign_buf_bytes;
    L.live = 0;
    L.st = 0;
    /* this warp's tiles: tile q = warp + 8 j is (mt, nt) = (q mod mtiles, q div mtiles) */
    uint32_t mt[DSB_GPU_TC_MAX_TILES], nt[DSB_GPU_TC_MAX_TILES];
    float x[4 * DSB_GPU_TC_MAX_TILES], y[4 * DSB_GPU_TC_MAX_TILES];
#pragma unroll
    for (int j = 0; j < T; j++) {
        const uint32_t q = warp + 8u * (uint32_t)j;
        dsb_gpu_tc_tile(mtiles, warp, (uint32_t)j, &mt[j], &nt[j]);
        const uint32_t bq = dsb_gpu_tc_bcol(nt[j], lane, B);
        L.ao[j] = dsb_gpu_tc_a_off(i8, rb, mt[j], lane, 0u, 0u);
        L.bo[j] = dsb_gpu_tc_b_off(i8, rb, bq, lane, 0u, 0u);
        if (i8) {
            L.so[j] = dsb_gpu_tc_replica(nt[j], lane, 0u) * rb + dsb_gpu_tc_row(mt[j], lane, 0u);
        } else {
            L.so[j] = (8u * nt[j] + lane) * rb + 2u * mt[j];
            if (q < tiles && lane < 8u && 8u * nt[j] + lane < B) L.st |= 1u << j;
        }
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const uint32_t b = dsb_gpu_tc_replica(nt[j], lane, (uint32_t)c);
            const uint32_t r = dsb_gpu_tc_row(mt[j], lane, (uint32_t)c);
            x[4 * j + c] = 0.0f;
            y[4 * j + c] = 0.0f;
            if (i8 && q < tiles && b < B) L.st |= 1u << (4 * j + c);
            if (q < tiles && b < B && r < n) {
                L.live |= 1u << (4 * j + c);
                dsb_initial_state(a.seed, b, r, &x[4 * j + c], &y[4 * j + c]);
            }
        }
        dsb_tc_put_signs(FMT, M.signs, &L, j, &x[4 * j], lane); /* L.st: tile q < tiles only */
    }
    /* pinned (ptx_keep_u32): NVVM otherwise re-derives them from %tid.x in the
     * step loop (the first version's per-step S2R and address arithmetic).
     * Not with 3-4 tiles a warp: there the registers run out (TERNARY 4 tiles
     * spilled 32 bytes) and re-deriving is the cheaper choice. */
#pragma unroll
    for (int j = 0; j < (T <= 2 ? T : 0); j++) {
        L.ao[j] = ptx_keep_u32(L.ao[j]);
        L.bo[j] = ptx_keep_u32(L.bo[j]);
        L.so[j] = ptx_keep_u32(L.so[j]);
    }
    if (T <= 2) {
        L.st = ptx_keep_u32(L.st);
        L.live = ptx_keep_u32(L.live);
    }
    __syncthreads();
    /* field and row constant of the two rows (g, g + 8) of each tile */
#pragma unroll
    for (int j = 0; j < T; j++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const uint32_t r = min(dsb_gpu_tc_row(mt[j], lane, 2u * (uint32_t)h), np - 1u);
            L.fl[2 * j + h] = M.field[r];
            L.rcn[2 * j + h] = FMT == DSB_FMT_TERNARY ? M.rowc[r] : 0;
        }

    /* INT8 with one tile a warp (n_p <= 128, so 1..4 k steps): A in registers,
     * the k steps a literal */
    const int act = T > 1 || warp < tiles;
    const uint32_t klane = T <= 2 ? ptx_keep_u32(lane) : lane;
    if (FMT == DSB_FMT_INT8 && T == 1) {
        if (L.nks == 4u) dsb_tc_steps(FMT, T, 4, ap, &M, &L, klane, act, x, y);
        else if (L.nks == 3u) dsb_tc_steps(FMT, T, 3, ap, &M, &L, klane, act, x, y);
        else if (L.nks == 2u) dsb_tc_steps(FMT, T, 2, ap, &M, &L, klane, act, x, y);
        else dsb_tc_steps(FMT, T, 1, ap, &M, &L, klane, act, x, y);
    } else {
        dsb_tc_steps(FMT, T, 0, ap, &M, &L, klane, act, x, y);
    }

    /* ---- energies 2E = sum_i -s_i (sum_j J_ij s_j + 2 h_i), final spins ----
     * (arguments re-read through ap, tiles re-derived: see above) */
    const uint32_t nf = ap->n, Bf = ap->B, Wf = ap->W, mtf = ap->np >> 4;
    const uint32_t tilesf = mtf * ((Bf + 7u) >> 3);
    const dsb_gpu_mem Mf = dsb_gpu_mem_of(ap);
    const unsigned char *fin = Mf.signs + (ap->K & 1u) * ap->sign_buf_bytes;
    int32_t s[4 * DSB_GPU_TC_MAX_TILES];
    dsb_tc_sums(FMT, T, &Mf, fin, &L, s);
#pragma unroll
    for (int j = 0; j < T; j++) {
        if (warp + 8u * (uint32_t)j >= tilesf) continue;
        dsb_gpu_tc_tile(mtf, warp, (uint32_t)j, &mt[j], &nt[j]);
        int64_t e[4];
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const int i = 4 * j + c;
            const int h = 2 * j + (c >> 1);
            e[c] = 0;
            if ((L.live >> i) & 1u)
                e[c] = dsb_energy2_term(dsb_sign(x[i]),
                                        s[i] + dsb_gpu_row_term(FMT, nf, x[i], L.rcn[h]), L.fl[h]);
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
            if (b0 < Bf) atomicAdd(&Mf.energy[b0], (unsigned long long)e0);
            if (b0 + 1u < Bf) atomicAdd(&Mf.energy[b0 + 1u], (unsigned long long)e1);
        }
        const uint32_t half = dsb_tc_pack16(&x[4 * j], lane);
        const uint32_t bs = 8u * nt[j] + lane;
        if (lane < 8u && bs < Bf) {
            ((uint16_t *)Mf.stage)[2u * bs * Wf + mt[j]] = (uint16_t)half;
            if (ap->spins) ((uint16_t *)ap->spins)[2u * bs * Wf + mt[j]] = (uint16_t)half;
        }
        if (ap->x) {
#pragma unroll
            for (int c = 0; c < 4; c++) {
                const uint32_t b = dsb_gpu_tc_replica(nt[j], lane, (uint32_t)c);
                const uint32_t r = dsb_gpu_tc_row(mt[j], lane, (uint32_t)c);
                if ((L.live >> (4 * j + c)) & 1u) {
                    ap->x[(size_t)b * nf + r] = x[4 * j + c];
                    ap->y[(size_t)b * nf + r] = y[4 * j + c];
                }
            }
        }
    }
    __syncthreads();
    dsb_gpu_write_reply(ap, Mf.energy, Mf.stage, t_start, c_start);
}

/* One kernel per (format, tiles per warp). */
#define DSB_GPU_TC_KERNEL(TAG, FMT, T)                                                    \
    __global__ void __launch_bounds__(DSB_GPU_THREADS, 2)                                 \
        dsb_gpu_k_##TAG##_tc##T(const dsb_gpu_args a)                                     \
    {                                                                                     \
        dsb_gpu_block_solve_tc(&a, FMT, T);                                               \
    }
#define DSB_GPU_TC_KERNELS(TAG, FMT)                                                      \
    DSB_GPU_TC_KERNEL(TAG, FMT, 1) DSB_GPU_TC_KERNEL(TAG, FMT, 2)                         \
    DSB_GPU_TC_KERNEL(TAG, FMT, 3) DSB_GPU_TC_KERNEL(TAG, FMT, 4)

/* Every format's kernels and LOOKUP(format, tiles per warp), their table (NULL outside the
 * range): the production kernels (kernel_tc.cu) and the phase diagnostic (diag_tc_phases.cu)
 * each instantiate the body once this way. */
#define DSB_GPU_TC_ALL_KERNELS(LOOKUP)                                                    \
    DSB_GPU_TC_KERNELS(pm1, DSB_FMT_PM1)                                                  \
    DSB_GPU_TC_KERNELS(ternary, DSB_FMT_TERNARY)                                          \
    DSB_GPU_TC_KERNELS(int8, DSB_FMT_INT8)                                                \
    static const void *LOOKUP(int format, uint32_t tiles_per_warp)                        \
    {                                                                                     \
        static const void *const k[3][DSB_GPU_TC_MAX_TILES] = {                           \
            {(const void *)dsb_gpu_k_pm1_tc1, (const void *)dsb_gpu_k_pm1_tc2,            \
             (const void *)dsb_gpu_k_pm1_tc3, (const void *)dsb_gpu_k_pm1_tc4},           \
            {(const void *)dsb_gpu_k_ternary_tc1, (const void *)dsb_gpu_k_ternary_tc2,    \
             (const void *)dsb_gpu_k_ternary_tc3, (const void *)dsb_gpu_k_ternary_tc4},   \
            {(const void *)dsb_gpu_k_int8_tc1, (const void *)dsb_gpu_k_int8_tc2,          \
             (const void *)dsb_gpu_k_int8_tc3, (const void *)dsb_gpu_k_int8_tc4}};        \
        if (format < DSB_FMT_PM1 || format > DSB_FMT_INT8) return 0;                      \
        if (tiles_per_warp < 1u || tiles_per_warp > DSB_GPU_TC_MAX_TILES) return 0;       \
        return k[format - DSB_FMT_PM1][tiles_per_warp - 1u];                              \
    }

#endif
