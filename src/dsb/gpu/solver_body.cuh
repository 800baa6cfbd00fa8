/* The request-per-block dSB kernel body (seed 000, Sec. IV), included by the
 * three per-format translation units.  CUDA C, no templates: the body is one
 * force-inlined function whose format, pairs-per-thread count P, shared-row
 * flag and timing variant are literal constants at each call site, so the
 * compiler folds them and every register array is indexed only by constants
 * of fully unrolled loops.
 *
 * Mapping (Sec. IV-A): T = 256 threads; pair p = b n_p + r (replica b, row r)
 * lives in thread p mod T as its (p div T)-th pair, x and y in registers for
 * the whole trajectory.  A warp's 32 lanes hold 32 consecutive rows of one
 * replica, so the warp's new signs are one 32-bit word (__ballot_sync, stored
 * by lane 0) or, for INT8, 32 consecutive sign bytes.  Two sign buffers in
 * shared memory: step k reads buffer k mod 2 and writes the other, so one
 * __syncthreads() per step suffices.
 *
 * Arithmetic: every step, hash, sign, pump and Prop. 1 row sum comes from
 * dsb/core.h.  The bit formats call the core row sums on 128-bit chunks of
 * the row (4 words), whose results add up to the whole-row sum because the
 * sums are linear in the words; the row-level terms (n + s_i for PM1, the row
 * constant for TERNARY) come from the same functions called with W = 0.
 * INT8 uses __dp4a, the four-products-at-a-time form of dsb_int8_row_sum. */
#ifndef DSB_GPU_SOLVER_BODY_CUH
#define DSB_GPU_SOLVER_BODY_CUH

#include <stdint.h>

#include "dsb/core.h"
#include "common/ptx.cuh"
#include "kernel.h"

extern __shared__ __align__(16) unsigned char dsb_smem[];

/* How the body reads the model image: through the read-only cache by default;
 * the persistent workers define it as __ldcg, because a GPU-resident server
 * rewrites a model buffer while they run and an SM's read-only cache could
 * still hold the previous image's lines. */
#ifndef DSB_GPU_MODEL_LOAD
#define DSB_GPU_MODEL_LOAD(p) __ldg(p)
#endif

/* %globaltimer (ns), through the project's one inline-PTX header. */
static __device__ __forceinline__ uint64_t dsb_gpu_globaltimer(void) { return ptx_globaltimer(); }

/* The pairs of one thread: pair j is p = tid + T j, replica b = p div n_p,
 * row r = p mod n_p.  Walking j upwards adds T to p: r += T mod n_p (with a
 * carry into b) and b += T div n_p, so nothing but the first pair is divided. */
typedef struct {
    uint32_t r0, b0, dr, db, np;
} dsb_gpu_walk;

static __device__ __forceinline__ void dsb_gpu_walk_next(const dsb_gpu_walk *w, uint32_t *r,
                                                         uint32_t *b)
{
    *r += w->dr;
    *b += w->db;
    if (*r >= w->np) {
        *r -= w->np;
        *b += 1u;
    }
}

/* Coupling sum of one row chunk (16 bytes: 4 words of a bit row, or 16 int8
 * couplings) against the matching sign chunk. */
static __device__ __forceinline__ int32_t dsb_gpu_chunk(const int FMT, uint4 u, uint4 m, uint4 v,
                                                        int32_t acc)
{
    if (FMT == DSB_FMT_INT8) {
        acc = __dp4a((int)u.x, (int)v.x, acc);
        acc = __dp4a((int)u.y, (int)v.y, acc);
        acc = __dp4a((int)u.z, (int)v.z, acc);
        return __dp4a((int)u.w, (int)v.w, acc);
    }
    const uint32_t uu[4] = {u.x, u.y, u.z, u.w};
    const uint32_t vv[4] = {v.x, v.y, v.z, v.w};
    if (FMT == DSB_FMT_PM1) return acc + dsb_pm1_row_sum(uu, vv, 4u, 0u, 0);
    const uint32_t mm[4] = {m.x, m.y, m.z, m.w};
    return acc + dsb_ternary_row_sum(uu, mm, 0, vv, 4u);
}

/* Shared row (n_p divides T): every pair of the thread has row r0 and
 * replica b0 + j T/n_p.  The row chunk is loaded once per chunk and reused by
 * all P pairs. */
static __device__ __forceinline__ void dsb_gpu_coupling_shared(
    const int FMT, const int P, const unsigned char *rows, const unsigned char *minus,
    const unsigned char *sg, uint32_t roff, uint32_t soff0, uint32_t sstep, int last_active,
    uint32_t nch, int32_t *acc)
{
    int32_t acc2[DSB_GPU_MAX_PAIRS];
    (void)last_active; /* see dsb_gpu_coupling */
#pragma unroll
    for (int j = 0; j < P; j++) acc[j] = acc2[j] = 0;
    const uint4 *ur = (const uint4 *)(rows + roff);
    const uint4 *mr = (const uint4 *)(minus + roff);
    if (P > 4) {
        /* many pairs: enough independent chains already; one chunk at a time
         * keeps the sign chunks in flight (4 registers per pair) bounded */
#pragma unroll 1
        for (uint32_t c = 0; c < nch; c++) {
            uint4 u0 = ur[c], m0 = make_uint4(0, 0, 0, 0);
            if (FMT == DSB_FMT_TERNARY) m0 = mr[c];
#pragma unroll
            for (int j = 0; j < P; j++) {
                const uint4 *sv = (const uint4 *)(sg + soff0 + (uint32_t)j * sstep);
                acc[j] = dsb_gpu_chunk(FMT, u0, m0, sv[c], acc[j]);
            }
        }
        return;
    }
#pragma unroll 1
    for (uint32_t c = 0; c < nch; c += 2u) {
        /* two chunks per iteration, into two chains per pair */
        uint4 u0 = ur[c], m0 = make_uint4(0, 0, 0, 0);
        uint4 u1 = make_uint4(0, 0, 0, 0), m1 = make_uint4(0, 0, 0, 0);
        const int two = c + 1u < nch;
        if (two) u1 = ur[c + 1u];
        if (FMT == DSB_FMT_TERNARY) {
            m0 = mr[c];
            if (two) m1 = mr[c + 1u];
        }
#pragma unroll
        for (int j = 0; j < P; j++) {
            const uint4 *sv = (const uint4 *)(sg + soff0 + (uint32_t)j * sstep);
            acc[j] = dsb_gpu_chunk(FMT, u0, m0, sv[c], acc[j]);
            if (two) acc2[j] = dsb_gpu_chunk(FMT, u1, m1, sv[c + 1u], acc2[j]);
        }
    }
#pragma unroll
    for (int j = 0; j < P; j++) acc[j] += acc2[j];
}

/* General case: pair by pair, two chains per pair. */
static __device__ __forceinline__ int32_t dsb_gpu_coupling_one(const int FMT,
                                                               const unsigned char *rows,
                                                               const unsigned char *minus,
                                                               const unsigned char *sg,
                                                               uint32_t roff, uint32_t soff,
                                                               uint32_t nch)
{
    const uint4 *ur = (const uint4 *)(rows + roff);
    const uint4 *mr = (const uint4 *)(minus + roff);
    const uint4 *sv = (const uint4 *)(sg + soff);
    const uint4 z = make_uint4(0, 0, 0, 0);
    int32_t a0 = 0, a1 = 0;
    uint32_t c = 0;
#pragma unroll 2
    for (; c + 1u < nch; c += 2u) {
        a0 = dsb_gpu_chunk(FMT, ur[c], FMT == DSB_FMT_TERNARY ? mr[c] : z, sv[c], a0);
        a1 = dsb_gpu_chunk(FMT, ur[c + 1u], FMT == DSB_FMT_TERNARY ? mr[c + 1u] : z,
                           sv[c + 1u], a1);
    }
    if (c < nch) a0 = dsb_gpu_chunk(FMT, ur[c], FMT == DSB_FMT_TERNARY ? mr[c] : z, sv[c], a0);
    return a0 + a1;
}

/* Row chunks a thread can keep in registers for the whole trajectory when
 * all its pairs share one row (SR = 2): 8 x 16 bytes (INT8 n_p <= 128), or
 * 2 x 16 bytes of each bit plane (n_p <= 256). */
#define DSB_GPU_REGROW_INT8 8u
#define DSB_GPU_REGROW_BITS 2u

typedef struct {
    uint4 u[DSB_GPU_REGROW_INT8];
    uint4 m[DSB_GPU_REGROW_BITS];
} dsb_gpu_regrow;

static __device__ __forceinline__ void dsb_gpu_regrow_load(const int FMT, dsb_gpu_regrow *R,
                                                           const unsigned char *rows,
                                                           const unsigned char *minus,
                                                           uint32_t roff, uint32_t nch)
{
    const uint32_t maxc = FMT == DSB_FMT_INT8 ? DSB_GPU_REGROW_INT8 : DSB_GPU_REGROW_BITS;
#pragma unroll
    for (uint32_t c = 0; c < maxc; c++) {
        R->u[c] = make_uint4(0, 0, 0, 0);
        if (c < nch) R->u[c] = ((const uint4 *)(rows + roff))[c];
        if (FMT == DSB_FMT_TERNARY) {
            R->m[c] = make_uint4(0, 0, 0, 0);
            if (c < nch) R->m[c] = ((const uint4 *)(minus + roff))[c];
        }
    }
}

/* Shared row held in registers: only the (broadcast) sign chunks are loaded.
 * NC, the number of 16-byte chunks, is a literal at each call site, so the
 * loop is straight-line code the compiler can schedule freely. */
static __device__ __forceinline__ void dsb_gpu_coupling_regrow_nc(
    const int FMT, const int P, const int NC, const dsb_gpu_regrow *R, const unsigned char *sg,
    uint32_t soff0, uint32_t sstep, int32_t *acc)
{
    int32_t acc2[DSB_GPU_MAX_PAIRS];
#pragma unroll
    for (int j = 0; j < P; j++) acc[j] = acc2[j] = 0;
#pragma unroll
    for (int c = 0; c < NC; c++) {
#pragma unroll
        for (int j = 0; j < P; j++) {
            const uint4 v = ((const uint4 *)(sg + soff0 + (uint32_t)j * sstep))[c];
            const uint4 m = FMT == DSB_FMT_TERNARY ? R->m[c < (int)DSB_GPU_REGROW_BITS ? c : 0]
                                                   : make_uint4(0, 0, 0, 0);
            if ((c & 1) && P <= 4) acc2[j] = dsb_gpu_chunk(FMT, R->u[c], m, v, acc2[j]);
            else acc[j] = dsb_gpu_chunk(FMT, R->u[c], m, v, acc[j]);
        }
    }
#pragma unroll
    for (int j = 0; j < P; j++) acc[j] += acc2[j];
}

static __device__ __forceinline__ void dsb_gpu_coupling_regrow(
    const int FMT, const int P, const dsb_gpu_regrow *R, const unsigned char *sg,
    uint32_t soff0, uint32_t sstep, uint32_t nch, int32_t *acc)
{
    if (FMT == DSB_FMT_INT8) { /* n_p = 32, 64, 128 */
        if (nch == 8u) dsb_gpu_coupling_regrow_nc(FMT, P, 8, R, sg, soff0, sstep, acc);
        else if (nch == 4u) dsb_gpu_coupling_regrow_nc(FMT, P, 4, R, sg, soff0, sstep, acc);
        else dsb_gpu_coupling_regrow_nc(FMT, P, 2, R, sg, soff0, sstep, acc);
    } else { /* n_p <= 128, or 256 */
        if (nch == 1u) dsb_gpu_coupling_regrow_nc(FMT, P, 1, R, sg, soff0, sstep, acc);
        else dsb_gpu_coupling_regrow_nc(FMT, P, 2, R, sg, soff0, sstep, acc);
    }
}

/* Coupling sums sum_j J_ij s_j (without the row-level term) of all pairs. */
static __device__ __forceinline__ void dsb_gpu_coupling(const int FMT, const int P, const int SR,
                                                        const unsigned char *rows,
                                                        const unsigned char *minus,
                                                        const unsigned char *sg,
                                                        const dsb_gpu_walk *wk, uint32_t rb,
                                                        int last_active, uint32_t nch,
                                                        const dsb_gpu_regrow *R, int32_t *acc)
{
    /* The last pair of a thread may lie beyond B n_p (then the whole warp's
     * last pair does).  Its sum is computed anyway from a sign row past the
     * B-th (b < B + T/n_p: inside the following field/S_0 area of the block's
     * shared memory) and discarded, which keeps the loops free of branches;
     * only a warp with a single, inactive pair skips the work. */
    if (P == 1 && !last_active) {
        acc[0] = 0;
        return;
    }
    if (SR == 2) {
        dsb_gpu_coupling_regrow(FMT, P, R, sg, wk->b0 * rb, wk->db * rb, nch, acc);
        return;
    }
    if (SR) {
        dsb_gpu_coupling_shared(FMT, P, rows, minus, sg, wk->r0 * rb, wk->b0 * rb, wk->db * rb,
                                last_active, nch, acc);
        return;
    }
    uint32_t r = wk->r0, b = wk->b0;
#pragma unroll
    for (int j = 0; j < P; j++) {
        if (j > 0) dsb_gpu_walk_next(wk, &r, &b);
        acc[j] = dsb_gpu_coupling_one(FMT, rows, minus, sg, r * rb, b * rb, nch);
    }
}

/* Row-level term of the coupling sum of a row (see the file comment): PM1
 * n + s_i, TERNARY minus the row constant (read only for TERNARY), INT8 none.
 * Both coupling engines add it to their sums. */
static __device__ __forceinline__ int32_t dsb_gpu_row_term(const int FMT, uint32_t n, float x,
                                                           int32_t row_const)
{
    if (FMT == DSB_FMT_PM1) return dsb_pm1_row_sum(0, 0, 0u, n, dsb_sign(x));
    if (FMT == DSB_FMT_TERNARY) return dsb_ternary_row_sum(0, 0, row_const, 0, 0u);
    return 0;
}

/* Writes the sign of (b, r) into sign buffer `sg`: the warp's ballot word
 * (lane 0 stores it), or for INT8 the lane's +-1 byte. */
static __device__ __forceinline__ void dsb_gpu_store_sign(const int FMT, unsigned char *sg,
                                                          uint32_t soff, uint32_t r, float x,
                                                          uint32_t lane)
{
    if (FMT == DSB_FMT_INT8) {
        ((int8_t *)(sg + soff))[r] = (int8_t)dsb_sign(x);
    } else {
        uint32_t bits = __ballot_sync(0xffffffffu, dsb_spin_bit(x) != 0u);
        if (lane == 0) ((uint32_t *)(sg + soff))[r >> 5] = bits;
    }
}

/* The regions of the block's shared memory (Eq. 6, layout.h). */
typedef struct {
    unsigned char *rows, *minus, *signs;
    int32_t *rowc, *field;
    uint32_t *stage;              /* final spin words of every replica (in S_0) */
    unsigned long long *energy;   /* 2E of every replica */
} dsb_gpu_mem;

static __device__ __forceinline__ dsb_gpu_mem dsb_gpu_mem_of(const dsb_gpu_args *a)
{
    dsb_gpu_mem M;
    M.rows = dsb_smem;
    M.minus = dsb_smem + a->off_minus;
    M.rowc = (int32_t *)(dsb_smem + a->off_rowconst);
    M.signs = dsb_smem + a->off_signs;
    M.field = (int32_t *)(dsb_smem + a->off_field);
    M.stage = (uint32_t *)(dsb_smem + a->off_s0 + DSB_GPU_STAGE_OFF);
    M.energy = (unsigned long long *)(dsb_smem + a->off_energy);
    return M;
}

/* Thread 0 stamps the solve's start (%globaltimer and SM cycles). */
static __device__ __forceinline__ void dsb_gpu_clock_start(uint64_t *t_start, long long *c_start)
{
    *t_start = 0;
    *c_start = 0;
    if (threadIdx.x == 0) {
        *t_start = dsb_gpu_globaltimer();
        *c_start = clock64();
    }
}

/* Loads the block's shared memory (Eq. 6): the model rows (L2 -> shared,
 * padded stride), row constants, zero padding words of both sign buffers,
 * field and energies.  Shared by both coupling engines. */
static __device__ __forceinline__ void dsb_gpu_load_block(const dsb_gpu_args *ap, const int FMT,
                                                          const dsb_gpu_mem *M)
{
    const dsb_gpu_args a = *ap;
    unsigned char *rows = M->rows, *minus = M->minus, *signs = M->signs;
    int32_t *rowc = M->rowc, *field = M->field;
    unsigned long long *energy = M->energy;
    const uint32_t tid = threadIdx.x;
    const uint32_t n = a.n, np = a.np, W = a.W, B = a.B, rb = a.row_bytes;
    if (FMT == DSB_FMT_INT8) {
        const uint32_t cpr = np >> 4; /* 16-byte chunks per row (global stride n_p) */
        const uint4 *g = (const uint4 *)a.model;
        for (uint32_t i = tid; i < np * cpr; i += DSB_GPU_THREADS) {
            uint32_t r = i / cpr, c = i - r * cpr;
            uint4 v = make_uint4(0, 0, 0, 0);
            if (r < n) v = DSB_GPU_MODEL_LOAD(g + i);
            *(uint4 *)(rows + r * rb + 16u * c) = v;
        }
    } else {
        const uint32_t Wp = rb >> 2;
        const uint32_t *g = (const uint32_t *)a.model;
        for (uint32_t i = tid; i < np * Wp; i += DSB_GPU_THREADS) {
            uint32_t r = i / Wp, w = i - r * Wp;
            uint32_t u = 0, m = 0;
            if (r < n && w < W) {
                u = DSB_GPU_MODEL_LOAD(g + r * W + w);
                if (FMT == DSB_FMT_TERNARY) m = DSB_GPU_MODEL_LOAD(g + (n + r) * W + w);
            }
            ((uint32_t *)rows)[i] = u;
            if (FMT == DSB_FMT_TERNARY) ((uint32_t *)minus)[i] = m;
        }
        if (FMT == DSB_FMT_TERNARY)
            for (uint32_t r = tid; r < np; r += DSB_GPU_THREADS)
                rowc[r] = r < n ? (int32_t)DSB_GPU_MODEL_LOAD(g + 2u * n * W + r) : 0;
        /* padding words of both sign buffers (never written by the steps) */
        for (uint32_t i = tid; i < 2u * B * Wp; i += DSB_GPU_THREADS)
            if (i % Wp >= W) ((uint32_t *)signs)[i] = 0u;
    }
    for (uint32_t r = tid; r < np; r += DSB_GPU_THREADS)
        field[r] = (r < n && a.h) ? (int32_t)a.h[r] : 0;
    for (uint32_t b = tid; b < B; b += DSB_GPU_THREADS) energy[b] = 0ull;
}

/* Warp 0 picks the best replica (lowest 2E, lowest index on ties) and writes
 * the reply: header, the staged spin words of that replica, and `seq` last
 * behind a system-scope fence.  Call after a barrier that follows the last
 * energy and stage writes. */
static __device__ __forceinline__ void dsb_gpu_write_reply(const dsb_gpu_args *ap,
                                                           const unsigned long long *energy,
                                                           const uint32_t *stage,
                                                           uint64_t t_start, long long c_start)
{
    const dsb_gpu_args a = *ap;
    const uint32_t lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const uint32_t B = a.B, W = a.W;
    if (warp != 0) return;
    int64_t be = INT64_MAX;
    uint32_t bi = 0xffffffffu;
    for (uint32_t b = lane; b < B; b += 32u) {
        int64_t e = (int64_t)energy[b];
        if (a.energy2) a.energy2[b] = e;
        if (e < be) { /* b increases: the first minimum of this lane wins */
            be = e;
            bi = b;
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        int64_t oe = __shfl_xor_sync(0xffffffffu, be, o);
        uint32_t oi = __shfl_xor_sync(0xffffffffu, bi, o);
        if (oe < be || (oe == be && oi < bi)) {
            be = oe;
            bi = oi;
        }
    }
    uint32_t *rs = DSB_GPU_REPLY_SPINS(a.reply);
    for (uint32_t w = lane; w < W; w += 32u) rs[w] = stage[bi * W + w];
    if (lane == 0) {
        a.reply->best_energy2 = be;
        a.reply->best_replica = bi;
        a.reply->t_start = t_start;
        a.reply->cycles = (uint64_t)(clock64() - c_start);
        a.reply->t_end = dsb_gpu_globaltimer();
    }
    __threadfence_system();
    __syncwarp();
    if (lane == 0) *(volatile uint32_t *)&a.reply->seq = a.seq;
}

static __device__ __forceinline__ void dsb_gpu_block_solve(const dsb_gpu_args a, const int FMT,
                                                           const int P, const int SR,
                                                           const int VAR)
{
    const uint32_t tid = threadIdx.x, lane = tid & 31u;
    uint64_t t_start;
    long long c_start;
    dsb_gpu_clock_start(&t_start, &c_start);
    const uint32_t n = a.n, np = a.np, W = a.W, B = a.B, K = a.K, rb = a.row_bytes;
    const dsb_gpu_mem M = dsb_gpu_mem_of(&a);
    unsigned char *rows = M.rows, *minus = M.minus, *signs = M.signs;
    int32_t *rowc = M.rowc, *field = M.field;
    uint32_t *stage = M.stage;
    unsigned long long *energy = M.energy;

    dsb_gpu_load_block(&a, FMT, &M);

    /* ---- this thread's pairs: initial state and first signs ---- */
    dsb_gpu_walk wk;
    wk.np = np;
    wk.b0 = tid / np;
    wk.r0 = tid - wk.b0 * np;
    wk.db = DSB_GPU_THREADS / np;
    wk.dr = DSB_GPU_THREADS - wk.db * np;
    const int last_active = tid + DSB_GPU_THREADS * (uint32_t)(P - 1) < B * np;
    float x[DSB_GPU_MAX_PAIRS], y[DSB_GPU_MAX_PAIRS];
    {
        uint32_t r = wk.r0, b = wk.b0;
#pragma unroll
        for (int j = 0; j < P; j++) {
            if (j > 0) dsb_gpu_walk_next(&wk, &r, &b);
            x[j] = 0.0f;
            y[j] = 0.0f;
            if (j == P - 1 && !last_active) continue;
            if (r < n) dsb_initial_state(a.seed, b, r, &x[j], &y[j]);
            dsb_gpu_store_sign(FMT, signs, b * rb, r, x[j], lane);
        }
    }
    __syncthreads();
    /* shared row: the row's field and row constant stay in registers */
    const int32_t fld0 = field[wk.r0];
    const int32_t rc0 = FMT == DSB_FMT_TERNARY ? rowc[wk.r0] : 0;

    const uint32_t nch = FMT == DSB_FMT_INT8 ? (np >> 4) : ((W + 3u) >> 2);
    dsb_gpu_regrow R;
    if (SR == 2) dsb_gpu_regrow_load(FMT, &R, rows, minus, wk.r0 * rb, nch);
    const float xi = a.xi, dt = a.dt;
    int32_t acc[DSB_GPU_MAX_PAIRS];
    for (uint32_t k = 0; k < K; k++) {
        const float damping = dsb_damping(k, K);
        const unsigned char *cur = signs + (k & 1u) * a.sign_buf_bytes;
        unsigned char *nxt = signs + ((k & 1u) ^ 1u) * a.sign_buf_bytes;
        if (VAR == DSB_GPU_VAR_NO_SUM) {
#pragma unroll
            for (int j = 0; j < P; j++) acc[j] = 0;
        } else {
            dsb_gpu_coupling(FMT, P, SR, rows, minus, cur, &wk, rb, last_active, nch, &R, acc);
        }
        if (VAR == DSB_GPU_VAR_DOUBLE_SUM) {
            int32_t acc2[DSB_GPU_MAX_PAIRS];
            /* reads the other buffer so the compiler cannot reuse the first */
            dsb_gpu_coupling(FMT, P, SR, rows, minus, nxt, &wk, rb, last_active, nch, &R, acc2);
#pragma unroll
            for (int j = 0; j < P; j++) acc[j] += acc2[j];
        }
        uint32_t r = wk.r0, b = wk.b0;
#pragma unroll
        for (int j = 0; j < P; j++) {
            if (j > 0) dsb_gpu_walk_next(&wk, &r, &b);
            const int act = j < P - 1 || last_active;
            int32_t h_i = SR ? fld0 : field[r];
            int32_t rt = dsb_gpu_row_term(FMT, n, x[j],
                                          FMT == DSB_FMT_TERNARY ? (SR ? rc0 : rowc[r]) : 0);
            int32_t ai = acc[j] + rt + h_i;
            /* branch-free: every pair steps, padding rows and inactive pairs
             * keep their (zero) state through a select */
            float xn = x[j], yn = y[j];
            dsb_step(&xn, &yn, ai, damping, xi, dt);
            if (VAR == DSB_GPU_VAR_DOUBLE_UPDATE) dsb_step(&xn, &yn, ai, damping, xi, dt);
            const int live = act && r < n;
            x[j] = live ? xn : x[j];
            y[j] = live ? yn : y[j];
            if (act) dsb_gpu_store_sign(FMT, nxt, b * rb, r, x[j], lane);
        }
        if (VAR != DSB_GPU_VAR_NO_BARRIER) __syncthreads();
    }
    if (VAR == DSB_GPU_VAR_NO_BARRIER) __syncthreads();

    /* ---- energies 2E = sum_i -s_i (sum_j J_ij s_j + 2 h_i), final spins ---- */
    const unsigned char *fin = signs + (K & 1u) * a.sign_buf_bytes;
    dsb_gpu_coupling(FMT, P, SR, rows, minus, fin, &wk, rb, last_active, nch, &R, acc);
    {
        uint32_t r = wk.r0, b = wk.b0;
#pragma unroll
        for (int j = 0; j < P; j++) {
            if (j > 0) dsb_gpu_walk_next(&wk, &r, &b);
            if (j == P - 1 && !last_active) continue;
            int64_t e = 0;
            if (r < n) {
                int32_t s_i = dsb_sign(x[j]);
                e = dsb_energy2_term(
                    s_i,
                    acc[j] + dsb_gpu_row_term(FMT, n, x[j], FMT == DSB_FMT_TERNARY ? rowc[r] : 0),
                    field[r]);
            }
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) e += __shfl_xor_sync(0xffffffffu, e, o);
            uint32_t bits = __ballot_sync(0xffffffffu, dsb_spin_bit(x[j]) != 0u);
            if (lane == 0) {
                atomicAdd(&energy[b], (unsigned long long)e);
                stage[b * W + (r >> 5)] = bits;
                if (a.spins) a.spins[b * W + (r >> 5)] = bits;
            }
            if (a.x && r < n) {
                a.x[(size_t)b * n + r] = x[j];
                a.y[(size_t)b * n + r] = y[j];
            }
        }
    }
    __syncthreads();

    dsb_gpu_write_reply(&a, energy, stage, t_start, c_start);
}

/* One kernel per (format, P, shared-row flag, variant). */
#define DSB_GPU_KERNEL(TAG, FMT, P, SR, VAR)                                             \
    __global__ void __launch_bounds__(DSB_GPU_THREADS, (P) <= 5 ? 2 : 1)                 \
        dsb_gpu_k_##TAG##_p##P##_s##SR##_v##VAR(const dsb_gpu_args a)                    \
    {                                                                                    \
        dsb_gpu_block_solve(a, FMT, P, SR, VAR);                                         \
    }

/* Solver kernels for P = 1..16 with one of the row modes (0: rows differ,
 * 1: shared row in shared memory, 2: shared row in registers); the timing
 * variants only with the register row and P = 1, 2, 4, 8, 16. */
#define DSB_GPU_KERNELS_P(TAG, FMT, SR)                                                   \
    DSB_GPU_KERNEL(TAG, FMT, 1, SR, 0)                                                    \
    DSB_GPU_KERNEL(TAG, FMT, 2, SR, 0)                                                    \
    DSB_GPU_KERNEL(TAG, FMT, 3, SR, 0)                                                    \
    DSB_GPU_KERNEL(TAG, FMT, 4, SR, 0)                                                    \
    DSB_GPU_KERNEL(TAG, FMT, 5, SR, 0)                                                    \
    DSB_GPU_KERNEL(TAG, FMT, 6, SR, 0)                                                    \
    DSB_GPU_KERNEL(TAG, FMT, 7, SR, 0)                                                    \
    DSB_GPU_KERNEL(TAG, FMT, 8, SR, 0)                                                    \
    DSB_GPU_KERNEL(TAG, FMT, 9, SR, 0)                                                    \
    DSB_GPU_KERNEL(TAG, FMT, 10, SR, 0)                                                   \
    DSB_GPU_KERNEL(TAG, FMT, 11, SR, 0)                                                   \
    DSB_GPU_KERNEL(TAG, FMT, 12, SR, 0)                                                   \
    DSB_GPU_KERNEL(TAG, FMT, 13, SR, 0)                                                   \
    DSB_GPU_KERNEL(TAG, FMT, 14, SR, 0)                                                   \
    DSB_GPU_KERNEL(TAG, FMT, 15, SR, 0)                                                   \
    DSB_GPU_KERNEL(TAG, FMT, 16, SR, 0)
#define DSB_GPU_VARIANTS_P(TAG, FMT, P)                                                   \
    DSB_GPU_KERNEL(TAG, FMT, P, 2, 1)                                                    \
    DSB_GPU_KERNEL(TAG, FMT, P, 2, 2)                                                    \
    DSB_GPU_KERNEL(TAG, FMT, P, 2, 3)                                                    \
    DSB_GPU_KERNEL(TAG, FMT, P, 2, 4)
#define DSB_GPU_VARIANT_KERNELS(TAG, FMT)                                                 \
    DSB_GPU_VARIANTS_P(TAG, FMT, 1)                                                       \
    DSB_GPU_VARIANTS_P(TAG, FMT, 2)                                                       \
    DSB_GPU_VARIANTS_P(TAG, FMT, 4)                                                       \
    DSB_GPU_VARIANTS_P(TAG, FMT, 8)                                                       \
    DSB_GPU_VARIANTS_P(TAG, FMT, 16)

#define DSB_GPU_K(TAG, P, SR, V) (const void *)dsb_gpu_k_##TAG##_p##P##_s##SR##_v##V
#define DSB_GPU_ROWS16(TAG, SR, V)                                                        \
    {DSB_GPU_K(TAG, 1, SR, V),  DSB_GPU_K(TAG, 2, SR, V),  DSB_GPU_K(TAG, 3, SR, V),       \
     DSB_GPU_K(TAG, 4, SR, V),  DSB_GPU_K(TAG, 5, SR, V),  DSB_GPU_K(TAG, 6, SR, V),       \
     DSB_GPU_K(TAG, 7, SR, V),  DSB_GPU_K(TAG, 8, SR, V),  DSB_GPU_K(TAG, 9, SR, V),       \
     DSB_GPU_K(TAG, 10, SR, V), DSB_GPU_K(TAG, 11, SR, V), DSB_GPU_K(TAG, 12, SR, V),      \
     DSB_GPU_K(TAG, 13, SR, V), DSB_GPU_K(TAG, 14, SR, V), DSB_GPU_K(TAG, 15, SR, V),      \
     DSB_GPU_K(TAG, 16, SR, V)}
#define DSB_GPU_VROW(TAG, P)                                                              \
    {DSB_GPU_K(TAG, P, 2, 0), DSB_GPU_K(TAG, P, 2, 1), DSB_GPU_K(TAG, P, 2, 2),            \
     DSB_GPU_K(TAG, P, 2, 3), DSB_GPU_K(TAG, P, 2, 4)}

/* Table of one row mode of one format: kernel for (P, variant) or NULL. */
#define DSB_GPU_TABLE(TAG, SR, WITH_VARIANTS)                                             \
    extern "C" const void *dsb_gpu_kernel_##TAG##_s##SR(uint32_t ppt, int variant)        \
    {                                                                                     \
        static const void *const base[16] = DSB_GPU_ROWS16(TAG, SR, 0);                   \
        if (ppt < 1u || ppt > 16u || variant < 0 || variant >= DSB_GPU_VAR_COUNT)         \
            return 0;                                                                     \
        if (variant == 0) return base[ppt - 1u];                                          \
        WITH_VARIANTS(TAG)                                                                \
        return 0;                                                                         \
    }
#define DSB_GPU_NO_VARIANTS(TAG)
#define DSB_GPU_WITH_VARIANTS(TAG)                                                        \
    {                                                                                     \
        static const void *const var[5][DSB_GPU_VAR_COUNT] = {                           \
            DSB_GPU_VROW(TAG, 1), DSB_GPU_VROW(TAG, 2), DSB_GPU_VROW(TAG, 4),             \
            DSB_GPU_VROW(TAG, 8), DSB_GPU_VROW(TAG, 16)};                                 \
        switch (ppt) {                                                                    \
        case 1: return var[0][variant];                                                   \
        case 2: return var[1][variant];                                                   \
        case 4: return var[2][variant];                                                   \
        case 8: return var[3][variant];                                                   \
        case 16: return var[4][variant];                                                  \
        default: return 0;                                                                \
        }                                                                                 \
    }

#endif
