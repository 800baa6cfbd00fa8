/* Request-per-block kernels, TERNARY format, rows that differ between a thread's pairs (see
 * solver_body.cuh). */
#include "solver_body.cuh"

DSB_GPU_KERNELS_P(ternary, DSB_FMT_TERNARY, 0)
DSB_GPU_TABLE(ternary, 0, DSB_GPU_NO_VARIANTS)
