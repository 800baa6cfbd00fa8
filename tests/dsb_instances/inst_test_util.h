/* Helpers shared by the instance tests: an independent PRNG (not the code
 * under test) and the naive energy 2E = -s^T J s - 2 h^T s. */
#ifndef INST_TEST_UTIL_H
#define INST_TEST_UTIL_H

#include <stdint.h>

static uint64_t tu_state = 0x243F6A8885A308D3ull;

/* xorshift64* */
static inline uint64_t tu_next(void)
{
    tu_state ^= tu_state >> 12;
    tu_state ^= tu_state << 25;
    tu_state ^= tu_state >> 27;
    return tu_state * 0x2545F4914F6CDD1Dull;
}

static inline int tu_range(int lo, int hi) /* inclusive */
{
    return lo + (int)(tu_next() % (uint64_t)(hi - lo + 1));
}

static inline double tu_unit(void) { return (double)(tu_next() >> 11) * 0x1p-53; }

/* 2E by a double loop over the dense J; s[i] in {-1, +1}. */
static inline int64_t tu_energy2(const int8_t *J, const int16_t *h, uint32_t n, const int *s)
{
    int64_t e = 0;
    for (uint32_t i = 0; i < n; i++) {
        int64_t row = 0;
        for (uint32_t j = 0; j < n; j++) row += (int64_t)J[(size_t)i * n + j] * s[j];
        e -= (int64_t)s[i] * row;
        e -= 2 * (int64_t)h[i] * s[i];
    }
    return e;
}

#endif
