/* Built when CUDA is absent: the GPU streaming solver reports that it was not
 * built (options and names are in stream_common.c). */
#include "dsb/stream_gpu.h"

int dsb_stream_run_gpu(const dsb_stream_params *p, const dsb_stream_gpu_opts *o,
                       dsb_stream_pass_fn on_pass, void *ctx, cm_err *err)
{
    (void)o, (void)on_pass, (void)ctx;
    if (dsb_stream_params_check(p, err)) return -1;
    return cm_fail(err, "--backend gpu: the GPU backend was not built (nvcc was not found at "
                        "configure time, or -DDSBDAK_CUDA=OFF); use the CPU backend");
}
