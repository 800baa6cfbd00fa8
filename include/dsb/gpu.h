/* The request-per-block GPU solver (seed 000, Sec. IV).  Implemented in
 * src/dsb/gpu/ when CUDA is built; otherwise every call reports that the GPU
 * backend was not built. */
#ifndef DSB_GPU_H
#define DSB_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "dsb/model.h"
#include "dsb/solve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when the GPU code was compiled in and a device is usable, else 0 with the
 * reason in err. */
int dsb_gpu_available(cm_err *err);

/* Eq. (6): shared-memory bytes one block needs for (format, n, B); 0 when the
 * request does not fit one block (B n_p > 4096). */
size_t dsb_gpu_smem_bytes(dsb_format f, uint32_t n, uint32_t replicas);

/* Solves one request with one block; bit-exact with dsb_solve_cpu.  Fills r
 * (and r->x, r->y when allocated). */
int dsb_solve_gpu(const dsb_model *m, const int16_t *h, const dsb_params *p, dsb_result *r,
                  cm_err *err);

#ifdef __cplusplus
}
#endif

#endif
