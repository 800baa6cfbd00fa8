/* Internal interface between the host wrappers (host.cu) and the kernels
 * (kernel_pm1.cu, kernel_ternary.cu, kernel_int8.cu): the argument block of
 * one request and the kernel table.  C-compatible. */
#ifndef DSB_GPU_KERNEL_H
#define DSB_GPU_KERNEL_H

#include <stdint.h>

#include "dsb/gpu.h"
#include "layout.h"

/* The reply a request produces: header, then the W spin words of the best
 * replica.  `seq` is written last (behind a system-scope fence) so a host
 * polling mapped memory knows the rest is there. */
typedef struct {
    int64_t best_energy2;
    uint32_t best_replica;
    uint32_t seq;
    uint64_t t_start, t_end; /* %globaltimer at kernel entry and after the reply */
    uint64_t cycles;         /* clock64() of thread 0 over the same interval */
    uint64_t pad;
} dsb_gpu_reply;
#define DSB_GPU_REPLY_SPINS(r) ((uint32_t *)((unsigned char *)(r) + sizeof(dsb_gpu_reply)))

typedef struct {
    const unsigned char *model; /* packed image (dsb/model.h), global memory */
    const int16_t *h;           /* n entries or NULL; device or mapped host memory */
    uint32_t n, W, np, B, K;
    uint32_t row_bytes;         /* coupling- and sign-row stride in shared memory */
    uint32_t off_minus, off_rowconst, off_signs, off_field, off_s0, off_energy;
    uint32_t sign_buf_bytes;
    uint32_t seq;               /* copied into the reply */
    float xi, dt;
    uint64_t seed;
    int64_t *energy2;           /* B entries or NULL */
    uint32_t *spins;            /* B x W words or NULL */
    float *x, *y;               /* B x n or NULL (debug/testing path) */
    dsb_gpu_reply *reply;       /* header + W words */
} dsb_gpu_args;

typedef void (*dsb_gpu_kernel_fn)(dsb_gpu_args);

#ifdef __cplusplus
extern "C" {
#endif
/* Kernel for (pairs per thread 1..16, variant) of one format and row mode
 * (s0: rows differ, s1: shared row in shared memory, s2: shared row in
 * registers); NULL when not built.  One translation unit each. */
#define DSB_GPU_DECL(TAG)                                                                \
    const void *dsb_gpu_kernel_##TAG##_s0(uint32_t ppt, int variant);                   \
    const void *dsb_gpu_kernel_##TAG##_s1(uint32_t ppt, int variant);                   \
    const void *dsb_gpu_kernel_##TAG##_s2(uint32_t ppt, int variant);
DSB_GPU_DECL(pm1)
DSB_GPU_DECL(ternary)
DSB_GPU_DECL(int8)
/* Tensor-core kernel (solver_tc.cuh) of a format with 1..4 tiles per warp
 * (dsb_gpu_tc_tiles); NULL otherwise. */
const void *dsb_gpu_kernel_tc(int format, uint32_t tiles_per_warp);
#ifdef __cplusplus
}
#endif

#endif
