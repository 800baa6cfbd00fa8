/* The tensor-core instruction probe (probe_mma.cu): latency and rate of the
 * mma the tensor-core solve step uses, for docs/perf/NOTES-gpusolver.md. */
#ifndef DSB_GPU_PROBE_MMA_H
#define DSB_GPU_PROBE_MMA_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { DSB_PROBE_IMMA = 0, DSB_PROBE_BMMA = 1, DSB_PROBE_LDS = 2 };

typedef struct {
    double cycles_per_op;    /* clock64 cycles per instruction in one warp (chains issued together) */
    double sm_cycles_per_op; /* cycles per instruction over all warps of the block (the SM's rate) */
    double mhz;              /* SM clock during the timed loop */
} dsb_probe_result;

/* kind: DSB_PROBE_*; chains 1..8 independent accumulators per warp; warps 1..32
 * in each of `blocks` blocks (one per SM); iters x 16 rounds.  0 or -1. */
int dsb_probe_mma(int kind, int chains, uint32_t warps, uint32_t blocks, uint32_t iters,
                  dsb_probe_result *r);

#ifdef __cplusplus
}
#endif

#endif
