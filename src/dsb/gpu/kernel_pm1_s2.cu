/* Request-per-block kernels, PM1 format, a shared row held in registers, and the timing
 * variants (see solver_body.cuh). */
#include "solver_body.cuh"

DSB_GPU_KERNELS_P(pm1, DSB_FMT_PM1, 2)
DSB_GPU_VARIANT_KERNELS(pm1, DSB_FMT_PM1)
DSB_GPU_TABLE(pm1, 2, DSB_GPU_WITH_VARIANTS)
