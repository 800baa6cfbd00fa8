/* Request-per-block kernels, INT8 format, a shared row read from shared memory (see
 * solver_body.cuh). */
#include "solver_body.cuh"

DSB_GPU_KERNELS_P(int8, DSB_FMT_INT8, 1)
DSB_GPU_TABLE(int8, 1, DSB_GPU_NO_VARIANTS)
