/* Request-per-block kernels, TERNARY format, a shared row held in registers, and the timing
 * variants (see solver_body.cuh). */
#include "solver_body.cuh"

DSB_GPU_KERNELS_P(ternary, DSB_FMT_TERNARY, 2)
DSB_GPU_VARIANT_KERNELS(ternary, DSB_FMT_TERNARY)
DSB_GPU_TABLE(ternary, 2, DSB_GPU_WITH_VARIANTS)
