/* Deterministic random instances for the core tests (an LCG independent of
 * the code under test). */
#ifndef TESTS_RANDOM_J_H
#define TESTS_RANDOM_J_H

#include <stdint.h>
#include <stdlib.h>

static uint64_t rng_state = 12345;
static inline uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

/* Random symmetric J with zero diagonal: kind 0 = +-1, 1 = ternary, 2 = int8. */
static inline int8_t *random_J(uint32_t n, int kind)
{
    int8_t *J = calloc((size_t)n * n, 1);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = i + 1; j < n; j++) {
            int v = kind == 0 ? ((rnd() & 1) ? 1 : -1)
                  : kind == 1 ? (int)(rnd() % 3) - 1
                              : (int)(rnd() % 255) - 127;
            J[(size_t)i * n + j] = J[(size_t)j * n + i] = (int8_t)v;
        }
    return J;
}

#endif
