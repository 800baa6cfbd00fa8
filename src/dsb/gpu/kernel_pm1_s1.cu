/* Request-per-block kernels, PM1 format, a shared row read from shared memory (see
 * solver_body.cuh). */
#include "solver_body.cuh"

DSB_GPU_KERNELS_P(pm1, DSB_FMT_PM1, 1)
DSB_GPU_TABLE(pm1, 1, DSB_GPU_NO_VARIANTS)
