/* Built when CUDA is absent: the GPU backend reports it was not built. */
#include "dsb/gpu.h"

int dsb_gpu_available(cm_err *err)
{
    cm_fail(err, "the GPU backend was not built (nvcc was not found at configure time)");
    return 0;
}

int dsb_solve_gpu(const dsb_model *m, const int16_t *h, const dsb_params *p, dsb_result *r,
                  cm_err *err)
{
    (void)m, (void)h, (void)p, (void)r;
    return cm_fail(err, "--backend gpu: the GPU backend was not built (nvcc was not found at "
                        "configure time); use --backend cpu");
}

int dsb_gpu_bench_solve(const dsb_model *m, const int16_t *fields, uint32_t n_fields,
                        const dsb_params *p, dsb_gpu_bench *b, cm_err *err)
{
    (void)m, (void)fields, (void)n_fields, (void)p, (void)b;
    return cm_fail(err, "dsb bench solve: the GPU backend was not built (nvcc was not found at "
                        "configure time)");
}
