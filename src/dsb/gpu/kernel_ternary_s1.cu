/* Request-per-block kernels, TERNARY format, a shared row read from shared memory (see
 * solver_body.cuh). */
#include "solver_body.cuh"

DSB_GPU_KERNELS_P(ternary, DSB_FMT_TERNARY, 1)
DSB_GPU_TABLE(ternary, 1, DSB_GPU_NO_VARIANTS)
