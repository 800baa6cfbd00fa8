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

int dsb_solve_gpu_ex(const dsb_model *m, const int16_t *h, const dsb_params *p, int sums,
                     dsb_result *r, cm_err *err)
{
    (void)sums;
    return dsb_solve_gpu(m, h, p, r, err);
}

int dsb_gpu_bench_solve(const dsb_model *m, const int16_t *fields, uint32_t n_fields,
                        const dsb_params *p, dsb_gpu_bench *b, cm_err *err)
{
    (void)m, (void)fields, (void)n_fields, (void)p, (void)b;
    return cm_fail(err, "dsb bench solve: the GPU backend was not built (nvcc was not found at "
                        "configure time)");
}

int dsb_gpu_launcher_create(uint32_t streams, uint32_t max_models, int sums,
                            dsb_gpu_launcher **out, cm_err *err)
{
    (void)streams, (void)max_models, (void)sums;
    *out = NULL;
    return cm_fail(err, "--dispatch launch: the GPU backend was not built (nvcc was not found at "
                        "configure time)");
}
void dsb_gpu_launcher_destroy(dsb_gpu_launcher *l) { (void)l; }
uint32_t dsb_gpu_launcher_idle(const dsb_gpu_launcher *l)
{
    (void)l;
    return 0;
}
int dsb_gpu_launcher_submit(dsb_gpu_launcher *l, const dsb_model *m, uint32_t slot,
                            uint32_t generation, const int16_t *h, const dsb_params *p,
                            uint64_t tag, cm_err *err)
{
    (void)l, (void)m, (void)slot, (void)generation, (void)h, (void)p, (void)tag;
    return cm_fail(err, "the GPU backend was not built");
}
int dsb_gpu_launcher_poll(dsb_gpu_launcher *l, dsb_gpu_done *out, int max)
{
    (void)l, (void)out, (void)max;
    return 0;
}
