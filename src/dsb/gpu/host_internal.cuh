/* Host-side pieces shared by the one-request wrappers (host.cu) and the
 * launch-per-request engine (launcher.cu).  CUDA host code only. */
#ifndef DSB_GPU_HOST_INTERNAL_CUH
#define DSB_GPU_HOST_INTERNAL_CUH

#include <cuda_runtime.h>

#include "kernel.h"

/* Checks the request (params, format, one-block fit, device, shared memory)
 * and prepares its layout and kernel (dynamic shared memory raised) for the
 * timing variant and the coupling-sum engine (dsb_gpu_sums). */
int dsb_gpu_prepare(const dsb_model *m, const dsb_params *p, int variant, int sums,
                    dsb_gpu_layout *L, const void **kernel, cm_err *err);
/* 1: the request runs with tensor-core sums, 0: CUDA-core sums, -1: it cannot
 * run as asked (err says why). */
int dsb_gpu_use_tensor(const dsb_gpu_layout *L, int sums, int variant, cm_err *err);
/* The kernel arguments of a request on the device copy `dmodel` of m. */
void dsb_gpu_fill_args(dsb_gpu_args *a, const dsb_model *m, const dsb_params *p,
                       const dsb_gpu_layout *L, const unsigned char *dmodel);
/* One block of 256 threads on stream s. */
cudaError_t dsb_gpu_launch_one(const void *kernel, dsb_gpu_args *a, size_t smem, cudaStream_t s);

#endif
