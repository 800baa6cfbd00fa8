/* Built when CUDA is absent: the GPU streaming solver reports that it was not
 * built (options and names are in stream_common.c). */
#include <string.h>

#include "dsb/stream_gpu.h"

static int not_built(const dsb_stream_params *p, cm_err *err)
{
    if (dsb_stream_params_check(p, err)) return -1;
    return cm_fail(err, "--backend gpu: the GPU backend was not built (nvcc was not found at "
                        "configure time, or -DDSBDAK_CUDA=OFF); use the CPU backend");
}

int dsb_stream_run_gpu(const dsb_stream_params *p, const dsb_stream_gpu_opts *o,
                       dsb_stream_pass_fn on_pass, void *ctx, cm_err *err)
{
    (void)o, (void)on_pass, (void)ctx;
    return not_built(p, err);
}

int dsb_stream_gpu_open_recv(const dsb_stream_params *p, const dsb_stream_gpu_opts *o,
                             dsb_stream_gpu_run **out, cm_err *err)
{
    (void)o;
    *out = NULL;
    return not_built(p, err);
}

void dsb_stream_gpu_sink(dsb_stream_gpu_run *r, dsb_stream_sink *sink)
{
    (void)r;
    memset(sink, 0, sizeof *sink);
}

void dsb_stream_gpu_close(dsb_stream_gpu_run *r) { (void)r; }
