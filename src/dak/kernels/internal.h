/* Shared between the .cu files of dak_kernels (not a public header). */
#ifndef DAK_KERNELS_INTERNAL_H
#define DAK_KERNELS_INTERNAL_H

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

extern "C" {
#include "common/error.h"
}
#include "dak/gemm.h"
#include "dak/tiered.h"

typedef CUresult (*dak_encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                  const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                  const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                  CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

/* cuMemGetAddressRange: the allocation holding a device address */
typedef CUresult (*dak_addr_range_fn)(CUdeviceptr *, size_t *, CUdeviceptr);

struct dak_gemm_ctx {
    int dev;
    unsigned sms;
    size_t smem_optin;
    dak_encode_fn encode;
    dak_addr_range_fn addr_range; /* NULL: the driver did not give it; the operands' sizes go unchecked */
    cublasHandle_t blas;
    float *ws; /* split-K partials */
    size_t ws_bytes;
    unsigned *ctr; /* per-tile arrival counters, kept zero between launches */
    size_t ctr_bytes;
    float *accw; /* dynamic units: per-tile accumulators, kept zero between launches */
    size_t accw_bytes;
    unsigned *dynctr; /* dynamic units: grab counter, kept zero between launches */
    unsigned *hostq;  /* PDL host-link hand-over: [0] tickets, [1] host CTAs done issuing (host_gate) */
    float *pws; /* panel path: fp32 accumulator for bf16 C */
    size_t pws_bytes;
    void *flush; /* L2 flush buffer */
    size_t flush_bytes;
    cudaStream_t copy_stream;
    cudaEvent_t ev_start, ev_copy[2], ev_gemm[2];
    void **retired; /* buffers replaced by larger ones (dak_ctx_grow), freed with the context */
    size_t nretired;
};

/* Grows one of the context's shared buffers (*buf of *have bytes) to at least `need` bytes, zeroed if `zero`.  Launches
 * prepared earlier keep the old buffer's address in their parameters (and a captured graph in its nodes), so it is not
 * freed but retired until dak_gemm_ctx_destroy: freeing it made a launch run after a later prepare that grew the
 * buffer read and write freed memory (an illegal address in `dak bench gemm --sections fixed --n 128,512`). */
int dak_ctx_grow(dak_gemm_ctx *ctx, void **buf, size_t *have, size_t need, int zero, cm_err *err);

/* "what failed: CUDA message" into err. */
#define DAK_CU(call, err)                                                                      \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess)                                                                 \
            return cm_fail((err), "%s:%d: %s: %s", __FILE__, __LINE__, #call,                  \
                           cudaGetErrorString(e_));                                            \
    } while (0)

/* cuTensorMapEncodeTiled of a 3-D bf16 map (128-byte swizzle), message in err on failure
 * (gemm_launch.cu). */
int dak_encode_3d(dak_gemm_ctx *c, CUtensorMap *m, const void *base, const cuuint64_t dims[3],
                  const cuuint64_t strides[2], const cuuint32_t box[3], cm_err *err);

/* ---- the panel path (gemm_panel.cu), driven by dak_gemm_prepare / run / free ---- */
typedef struct dak_panel dak_panel;
/* Tensor map, workspace, second stream and kernel parameters for p's host rows; the kernel
 * adds its host bytes to *hb.  Shrinks p->panel.ctas to the clusters that fit at once. */
extern "C" int dak_panel_prepare(dak_gemm_ctx *ctx, const dak_tiered *A, const uint16_t *B, void *C,
                                 dak_gemm_plan *p, const dak_gemm_opts *o, unsigned long long *hb,
                                 dak_panel **out, cm_err *err);
/* Before the tiled kernel on `stream`: zero the accumulator, fork, launch the panel kernel. */
extern "C" int dak_panel_begin(dak_panel *d, cudaStream_t stream, cm_err *err);
/* After it: join; bf16 C converted from the workspace. */
extern "C" int dak_panel_end(dak_panel *d, cudaStream_t stream, cm_err *err);
extern "C" void dak_panel_free(dak_panel *d);

#endif
