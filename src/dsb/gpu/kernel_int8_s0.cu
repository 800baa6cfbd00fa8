/* Request-per-block kernels, INT8 format, rows that differ between a thread's pairs (see
 * solver_body.cuh). */
#include "solver_body.cuh"

DSB_GPU_KERNELS_P(int8, DSB_FMT_INT8, 0)
DSB_GPU_TABLE(int8, 0, DSB_GPU_NO_VARIANTS)
