/* Request-per-block kernels for the TERNARY format (see solver_body.cuh). */
#include "solver_body.cuh"

DSB_GPU_ALL_KERNELS(ternary, DSB_FMT_TERNARY)
DSB_GPU_TABLE(ternary)
