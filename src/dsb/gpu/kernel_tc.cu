/* The tensor-core solver kernels (solver_tc.cuh): every format with 1..4
 * tiles of 16 rows x 8 replicas per warp. */
#include "solver_tc.cuh"

DSB_GPU_TC_ALL_KERNELS(tc_kernel_of)

extern "C" const void *dsb_gpu_kernel_tc(int format, uint32_t tiles_per_warp)
{
    return tc_kernel_of(format, tiles_per_warp);
}
