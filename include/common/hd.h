/* CM_HD: a function both host and device code call (__host__ __device__ under nvcc, nothing in C).
 * The one definition the headers shared by C and CUDA use (dsb/core.h's DSB_HD is this). */
#ifndef COMMON_HD_H
#define COMMON_HD_H

#ifdef __CUDACC__
#define CM_HD __host__ __device__
#else
#define CM_HD
#endif

#endif
