/* The splitmix64 output function, a 64-bit finaliser: the counter hash that both systems' synthetic
 * data come from (dsb: initial states, random couplings, instances; dak: the engine's synthetic
 * weights).  C and CUDA, host and device; every caller's results depend on these exact constants. */
#ifndef COMMON_HASH_H
#define COMMON_HASH_H

#include <stdint.h>

#include "common/hd.h"

CM_HD static inline uint64_t cm_mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#endif
