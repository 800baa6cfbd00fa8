/* Shared between the .cu files of dak_kernels (not a public header). */
#ifndef DAK_KERNELS_INTERNAL_H
#define DAK_KERNELS_INTERNAL_H

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

extern "C" {
#include "common/error.h"
}

typedef CUresult (*dak_encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                  const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                  const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                  CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

struct dak_gemm_ctx {
    int dev;
    unsigned sms;
    size_t smem_optin;
    dak_encode_fn encode;
    cublasHandle_t blas;
    float *ws; /* split-K partials */
    size_t ws_bytes;
    unsigned *ctr; /* per-tile arrival counters, kept zero between launches */
    size_t ctr_count;
    float *accw; /* dynamic units: per-tile accumulators, kept zero between launches */
    size_t accw_bytes;
    unsigned *dynctr; /* dynamic units: grab counter, kept zero between launches */
    void *flush; /* L2 flush buffer */
    size_t flush_bytes;
    cudaStream_t copy_stream;
    cudaEvent_t ev_start, ev_copy[2], ev_gemm[2];
};

/* "what failed: CUDA message" into err. */
#define DAK_CU(call, err)                                                                      \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess)                                                                 \
            return cm_fail((err), "%s:%d: %s: %s", __FILE__, __LINE__, #call,                  \
                           cudaGetErrorString(e_));                                            \
    } while (0)

#endif
