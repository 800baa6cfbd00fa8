/* Request-per-block kernels, PM1 format, rows that differ between a thread's pairs (see
 * solver_body.cuh). */
#include "solver_body.cuh"

DSB_GPU_KERNELS_P(pm1, DSB_FMT_PM1, 0)
DSB_GPU_TABLE(pm1, 0, DSB_GPU_NO_VARIANTS)
