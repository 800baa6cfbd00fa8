/* Ring access shared by the pipeline's kernels (worker.cu, gen.cu): the ring
 * size and the volatile loads with which a consumer polls a word that another
 * SM (or the CPU) writes.  Include only from .cu files. */
#ifndef DSB_PIPE_ACCESS_CUH
#define DSB_PIPE_ACCESS_CUH

#include <stdint.h>

#include "ring.h"

#define PIPE_C DSB_PIPE_RING
#define PIPE_MASK (DSB_PIPE_RING - 1u)

static __device__ __forceinline__ uint32_t pipe_vload32(const uint32_t *p)
{
    return *(const volatile uint32_t *)p;
}
static __device__ __forceinline__ unsigned long long pipe_vload64(const unsigned long long *p)
{
    return *(const volatile unsigned long long *)p;
}

#endif
