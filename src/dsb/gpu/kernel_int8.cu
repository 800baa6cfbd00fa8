/* Request-per-block kernels for the INT8 format (see solver_body.cuh). */
#include "solver_body.cuh"

DSB_GPU_ALL_KERNELS(int8, DSB_FMT_INT8)
DSB_GPU_TABLE(int8)
