/* Request-per-block kernels for the PM1 format (see solver_body.cuh). */
#include "solver_body.cuh"

DSB_GPU_ALL_KERNELS(pm1, DSB_FMT_PM1)
DSB_GPU_TABLE(pm1)
