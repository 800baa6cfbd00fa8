/* Checks of CUDA runtime calls, in one place for the two policies the project
 * uses:
 *   CM_CUDA_TRY      library code: a failed call becomes the caller's error
 *                    (cm_fail on `err`: what failed, the CUDA message, the call)
 *                    and jumps to the function's `fail:` cleanup label;
 *   CM_CUDA_OR_EXIT  tools and tests: prints file:line, the call and the CUDA
 *                    message on stderr and exits with status 1.
 * C and CUDA (host code). */
#ifndef COMMON_CUDA_CHECK_H
#define COMMON_CUDA_CHECK_H

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "common/error.h"
#ifdef __cplusplus
}
#endif

#define CM_CUDA_TRY(err, what, call)                                                     \
    do {                                                                                 \
        cudaError_t cm_e_ = (call);                                                      \
        if (cm_e_ != cudaSuccess) {                                                      \
            cm_fail((err), "%s: %s (%s)", (what), cudaGetErrorString(cm_e_), #call);     \
            goto fail;                                                                   \
        }                                                                                \
    } while (0)

#define CM_CUDA_OR_EXIT(call)                                                            \
    do {                                                                                 \
        cudaError_t cm_e_ = (call);                                                      \
        if (cm_e_ != cudaSuccess) {                                                      \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                \
                    cudaGetErrorString(cm_e_));                                          \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

#endif
