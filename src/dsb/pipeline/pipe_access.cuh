/* Ring access shared by the pipeline's kernels (worker.cu, gen.cu, agents.cu):
 * the ring size and the volatile loads with which a consumer polls a word that
 * another SM (or the CPU) writes.  Include only from .cu files. */
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

/* The first lane whose ballot bit is clear (32 if none): the in-order run of ready slots. */
static __device__ __forceinline__ uint32_t pipe_first_clear(uint32_t bal)
{
    return bal == 0xffffffffu ? 32u : (uint32_t)__ffs(~bal) - 1u;
}
/* Work slot of ticket s free: ticket s - C, its previous user, was acknowledged. */
static __device__ __forceinline__ int pipe_slot_free(const uint32_t *ack, uint32_t s)
{
    return pipe_vload32(&ack[s & PIPE_MASK]) == s - PIPE_C + 1u;
}

#endif
