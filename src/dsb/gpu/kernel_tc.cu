/* The tensor-core solver kernels (solver_tc.cuh): every format with 1..4
 * tiles of 16 rows x 8 replicas per warp. */
#include "solver_tc.cuh"

DSB_GPU_TC_KERNELS(pm1, DSB_FMT_PM1)
DSB_GPU_TC_KERNELS(ternary, DSB_FMT_TERNARY)
DSB_GPU_TC_KERNELS(int8, DSB_FMT_INT8)

extern "C" const void *dsb_gpu_kernel_tc(int format, uint32_t tiles_per_warp)
{
    static const void *const k[3][DSB_GPU_TC_MAX_TILES] = {
        {(const void *)dsb_gpu_k_pm1_tc1, (const void *)dsb_gpu_k_pm1_tc2,
         (const void *)dsb_gpu_k_pm1_tc3, (const void *)dsb_gpu_k_pm1_tc4},
        {(const void *)dsb_gpu_k_ternary_tc1, (const void *)dsb_gpu_k_ternary_tc2,
         (const void *)dsb_gpu_k_ternary_tc3, (const void *)dsb_gpu_k_ternary_tc4},
        {(const void *)dsb_gpu_k_int8_tc1, (const void *)dsb_gpu_k_int8_tc2,
         (const void *)dsb_gpu_k_int8_tc3, (const void *)dsb_gpu_k_int8_tc4}};
    if (format < DSB_FMT_PM1 || format > DSB_FMT_INT8) return 0;
    if (tiles_per_warp < 1u || tiles_per_warp > DSB_GPU_TC_MAX_TILES) return 0;
    return k[format - DSB_FMT_PM1][tiles_per_warp - 1u];
}
