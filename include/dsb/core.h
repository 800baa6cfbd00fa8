/* The dSB arithmetic, shared by the CPU reference and the CUDA kernels.
 *
 * Everything here is `static inline` and usable from C11 and CUDA C through
 * DSB_HD.  One arithmetic, two executors: the CPU solver and every GPU kernel
 * call these functions, so bit-exactness holds by construction (seed 000,
 * Prop. 1(iii)).  The CPU build uses -ffp-contract=off; on the device every
 * floating-point operation of the update goes through an explicitly rounded
 * intrinsic (__fmul_rn, __fadd_rn, __fsub_rn, __fdiv_rn), which the compiler
 * may not contract into an FMA.
 */
#ifndef DSB_CORE_H
#define DSB_CORE_H

#include <stdint.h>

#include "common/hash.h"

#define DSB_HD CM_HD /* common/hd.h */

#if defined(__CUDA_ARCH__)
#define DSB_FMUL(a, b) __fmul_rn((a), (b))
#define DSB_FADD(a, b) __fadd_rn((a), (b))
#define DSB_FSUB(a, b) __fsub_rn((a), (b))
#define DSB_FDIV(a, b) __fdiv_rn((a), (b))
#define DSB_POPC(w) __popc(w)
#else
#define DSB_FMUL(a, b) ((a) * (b))
#define DSB_FADD(a, b) ((a) + (b))
#define DSB_FSUB(a, b) ((a) - (b))
#define DSB_FDIV(a, b) ((a) / (b))
#define DSB_POPC(w) __builtin_popcount(w)
#endif

/* Words of one packed sign row / bit-plane row: W = ceil(n/32). */
DSB_HD static inline uint32_t dsb_words(uint32_t n) { return (n + 31u) / 32u; }
/* Rows padded to a multiple of 32: n_p = 32 W (Sec. IV-A). */
DSB_HD static inline uint32_t dsb_padded_n(uint32_t n) { return dsb_words(n) * 32u; }

/* ---- counter hash for initial states (Sec. IV-B: "a counter-based hash of
 * (seed, replica, row), so the reference can regenerate them") ---------------
 * A 64-bit finalizer (the splitmix64 output function) applied twice: once to
 * the (replica, row) counter, once to the seed mixed with that. */
DSB_HD static inline uint64_t dsb_mix64(uint64_t z) { return cm_mix64(z); }

DSB_HD static inline uint64_t dsb_counter_hash(uint64_t seed, uint32_t replica, uint32_t row)
{
    return dsb_mix64(seed ^ dsb_mix64(((uint64_t)replica << 32) | (uint64_t)row));
}

/* Initial position and momentum of (replica, row): two 16-bit fields of the
 * hash, centred and scaled by 2^-18, so x0, y0 lie in [-1/8, 1/8).  Both the
 * integer-to-float conversion and the power-of-two scaling are exact, so the
 * values are identical on every executor. */
DSB_HD static inline void dsb_initial_state(uint64_t seed, uint32_t replica, uint32_t row,
                                            float *x, float *y)
{
    uint64_t h = dsb_counter_hash(seed, replica, row);
    int32_t hx = (int32_t)(h & 0xFFFFu) - 32768;
    int32_t hy = (int32_t)((h >> 16) & 0xFFFFu) - 32768;
    *x = DSB_FMUL((float)hx, 0x1p-18f);
    *y = DSB_FMUL((float)hy, 0x1p-18f);
}

/* sign with sign(0) = -1 (Sec. II-A); the packed spin bit is 1 for +1. */
DSB_HD static inline int32_t dsb_sign(float x) { return x > 0.0f ? 1 : -1; }
DSB_HD static inline uint32_t dsb_spin_bit(float x) { return x > 0.0f ? 1u : 0u; }

/* Pump schedule p_k = k/(K-1) for K > 1, p_0 = 0 for K = 1, and the damping
 * term (delta - p_k) with delta = 1 that multiplies x in Eq. (4). */
DSB_HD static inline float dsb_pump(uint32_t k, uint32_t K)
{
    return K > 1u ? DSB_FDIV((float)k, (float)(K - 1u)) : 0.0f;
}
DSB_HD static inline float dsb_damping(uint32_t k, uint32_t K)
{
    return DSB_FSUB(1.0f, dsb_pump(k, K));
}

/* One dSB step of one (replica, row) pair, Eq. (4) with delta = 1, in this
 * exact operation order:
 *   f = xi*a - damping*x;  y = y + f*dt;  x = x + dt*y;
 * then the inelastic wall |x| > 1 -> x = sign(x), y = 0.
 * `a` is the exact integer J.sign(x) + h of Eq. (3); |a| < 2^24, so its
 * conversion to float is exact (Prop. 1(iii)). */
DSB_HD static inline void dsb_step(float *x, float *y, int32_t a, float damping, float xi,
                                   float dt)
{
    float force = DSB_FSUB(DSB_FMUL(xi, (float)a), DSB_FMUL(damping, *x));
    float yn = DSB_FADD(*y, DSB_FMUL(force, dt));
    float xn = DSB_FADD(*x, DSB_FMUL(dt, yn));
    if (xn > 1.0f) {
        xn = 1.0f;
        yn = 0.0f;
    } else if (xn < -1.0f) {
        xn = -1.0f;
        yn = 0.0f;
    }
    *x = xn;
    *y = yn;
}

/* ---- exact coupling sums, Prop. 1 --------------------------------------------
 * v: packed spin bits of one replica (bit j = 1 for s_j = +1), zero padding. */

/* Prop. 1(i), PM1: u = bit plane row (u_ij = 1 for J_ij = +1, u_ii = 0, zero
 * padding).  sum_j J_ij s_j = n - 2 popc(u xor v) + s_i. */
DSB_HD static inline int32_t dsb_pm1_row_sum(const uint32_t *u, const uint32_t *v, uint32_t W,
                                             uint32_t n, int32_t s_i)
{
    int32_t c = 0;
    for (uint32_t w = 0; w < W; w++) c += DSB_POPC(u[w] ^ v[w]);
    return (int32_t)n - 2 * c + s_i;
}

/* Prop. 1(ii), TERNARY: P, M bit planes, row constant |P_i| - |M_i|.
 * sum_j J_ij s_j = 2 (popc(P and v) - popc(M and v)) - (|P_i| - |M_i|). */
DSB_HD static inline int32_t dsb_ternary_row_sum(const uint32_t *p, const uint32_t *m,
                                                 int32_t row_const, const uint32_t *v,
                                                 uint32_t W)
{
    int32_t c = 0;
    for (uint32_t w = 0; w < W; w++) c += DSB_POPC(p[w] & v[w]) - DSB_POPC(m[w] & v[w]);
    return 2 * c - row_const;
}

/* Prop. 1(iii), INT8: plain int32 dot of an int8 row with the +-1 sign bytes
 * (the GPU computes the same integer four products at a time with DP4A). */
DSB_HD static inline int32_t dsb_int8_row_sum(const int8_t *j, const int8_t *s, uint32_t n)
{
    int32_t acc = 0;
    for (uint32_t c = 0; c < n; c++) acc += (int32_t)j[c] * (int32_t)s[c];
    return acc;
}

/* Contribution of row i to 2E = -s^T J s - 2 h^T s, from its coupling sum. */
DSB_HD static inline int64_t dsb_energy2_term(int32_t s_i, int32_t coupling_sum, int32_t h_i)
{
    return -(int64_t)s_i * ((int64_t)coupling_sum + 2 * (int64_t)h_i);
}

#endif /* DSB_CORE_H */
