/* Request-per-block kernels, INT8 format, a shared row held in registers, and the timing
 * variants (see solver_body.cuh). */
#include "solver_body.cuh"

DSB_GPU_KERNELS_P(int8, DSB_FMT_INT8, 2)
DSB_GPU_VARIANT_KERNELS(int8, DSB_FMT_INT8)
DSB_GPU_TABLE(int8, 2, DSB_GPU_WITH_VARIANTS)
