/* dsb-tc-phases (diag_tc_phases.cu): cycles per step of the tensor-core solve,
 * split into four phases per warp (docs/perf/NOTES-gpusolver.md, "v5"). */
#ifndef DSB_GPU_DIAG_TC_PHASES_H
#define DSB_GPU_DIAG_TC_PHASES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "dsb/model.h"

typedef struct {
    uint32_t tiles_per_warp, ksteps;
    unsigned long long solve_cycles;
    double solve_ns;
    long long cycles_per_phase[8][4]; /* per warp: top, sums, update, barrier, summed over K steps */
} dsb_tc_phases_result;

/* One request of format f, n spins, B replicas, K steps on one block (random model);
 * 0, or -1 with a message in err. */
int dsb_tc_phases_run(dsb_format f, uint32_t n, uint32_t B, uint32_t K, dsb_tc_phases_result *r,
                      char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
