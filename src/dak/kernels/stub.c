/* dak_kernels without CUDA: every device entry point reports "not built". */
#include <stddef.h>

#include "dak/gemm.h"
#include "dak/tiered.h"

#define NB(err) cm_fail((err), "dak kernels: not built (configured without CUDA)")

int dak_tiered_create(dak_tiered *t, uint32_t M, uint32_t K, double ratio, cm_err *err)
{
    (void)t, (void)M, (void)K, (void)ratio;
    return NB(err);
}
int dak_tiered_view_rows(dak_tiered *t, uint32_t M, uint32_t K, uint32_t rows_host, uint16_t *host_rows,
                         uint16_t *dev_rows, int packed, cm_err *err)
{
    (void)t, (void)M, (void)K, (void)rows_host, (void)host_rows, (void)dev_rows, (void)packed;
    return NB(err);
}
int dak_tiered_view(dak_tiered *t, uint32_t M, uint32_t K, uint32_t rows_host, uint16_t *host_full,
                    uint16_t *dev_full, int packed, cm_err *err)
{
    (void)t, (void)M, (void)K, (void)rows_host, (void)host_full, (void)dev_full, (void)packed;
    return NB(err);
}
int dak_pack_rowmajor(const uint16_t *src, uint16_t *dst, uint32_t M, uint32_t K, cm_err *err)
{
    (void)src, (void)dst, (void)M, (void)K;
    return NB(err);
}
int dak_pack_groups(const uint16_t *src, uint16_t *dst, uint32_t M, uint32_t K, uint32_t R, cm_err *err)
{
    (void)src, (void)dst, (void)M, (void)K, (void)R;
    return NB(err);
}
int dak_tiered_load_from_device(dak_tiered *t, const uint16_t *src_dev, cm_err *err)
{
    (void)t, (void)src_dev;
    return NB(err);
}
void dak_tiered_destroy(dak_tiered *t) { (void)t; }
int dak_gemm_ctx_create(dak_gemm_ctx **ctx, cm_err *err)
{
    *ctx = NULL;
    return NB(err);
}
void dak_gemm_ctx_destroy(dak_gemm_ctx *ctx) { (void)ctx; }
uint32_t dak_gemm_ctx_sms(const dak_gemm_ctx *ctx)
{
    (void)ctx;
    return 0;
}
uint32_t dak_gemm_ctx_a_group_rows(const dak_gemm_ctx *ctx, uint32_t M, uint32_t K, uint32_t N,
                                   const dak_gemm_opts *o)
{
    (void)ctx, (void)M, (void)K, (void)N, (void)o;
    return 0;
}
int dak_gemm_prepare(dak_gemm_ctx *ctx, const dak_tiered *A, const uint16_t *B, void *C, uint32_t N,
                     const dak_gemm_opts *o, dak_gemm_launch **out, cm_err *err)
{
    (void)ctx, (void)A, (void)B, (void)C, (void)N, (void)o;
    *out = NULL;
    return NB(err);
}
const dak_gemm_plan *dak_gemm_launch_plan(const dak_gemm_launch *l)
{
    (void)l;
    return NULL;
}
int dak_gemm_run(dak_gemm_launch *l, void *stream, cm_err *err)
{
    (void)l, (void)stream;
    return NB(err);
}
void dak_gemm_launch_free(dak_gemm_launch *l) { (void)l; }
int dak_gemm_ctx_counters(dak_gemm_ctx *ctx, size_t *nonzero, uint32_t *first_index, uint32_t *first_value,
                          cm_err *err)
{
    (void)ctx, (void)nonzero, (void)first_index, (void)first_value;
    return NB(err);
}
int dak_gemm_host_bytes(dak_gemm_launch *l, uint64_t *bytes, cm_err *err)
{
    (void)l, (void)bytes;
    return NB(err);
}
int dak_gemm_split(dak_gemm_ctx *ctx, const dak_tiered *A, const uint16_t *B, void *C, uint32_t N,
                   const dak_gemm_opts *o, cm_err *err)
{
    (void)ctx, (void)A, (void)B, (void)C, (void)N, (void)o;
    return NB(err);
}
int dak_base_cublas(dak_gemm_ctx *ctx, const uint16_t *A_dev, const uint16_t *B, float *C, uint32_t M,
                    uint32_t N, uint32_t K, void *stream, cm_err *err)
{
    (void)ctx, (void)A_dev, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return NB(err);
}
int dak_base_prefetch(dak_gemm_ctx *ctx, const dak_tiered *A, uint16_t *stage, const uint16_t *B,
                      float *C, uint32_t N, void *stream, cm_err *err)
{
    (void)ctx, (void)A, (void)stage, (void)B, (void)C, (void)N, (void)stream;
    return NB(err);
}
int dak_base_prefetch_overlap(dak_gemm_ctx *ctx, const dak_tiered *A, uint16_t *stage[2],
                              const uint16_t *B, float *C, uint32_t N, uint32_t layers, void *stream,
                              cm_err *err)
{
    (void)ctx, (void)A, (void)stage, (void)B, (void)C, (void)N, (void)layers, (void)stream;
    return NB(err);
}
int dak_base_naive(const dak_tiered *A, const uint16_t *B, float *C, uint32_t N, void *stream,
                   cm_err *err)
{
    (void)A, (void)B, (void)C, (void)N, (void)stream;
    return NB(err);
}
int dak_ref_gemm(const uint16_t *A_dev, const uint16_t *B, float *C, uint32_t M, uint32_t N,
                 uint32_t K, void *stream, cm_err *err)
{
    (void)A_dev, (void)B, (void)C, (void)M, (void)N, (void)K, (void)stream;
    return NB(err);
}
int dak_fill_random_bf16(uint16_t *p, size_t n, uint64_t seed, void *stream, cm_err *err)
{
    (void)p, (void)n, (void)seed, (void)stream;
    return NB(err);
}
int dak_fill_u32(void *p, size_t n, uint32_t word, void *stream, cm_err *err)
{
    (void)p, (void)n, (void)word, (void)stream;
    return NB(err);
}
int dak_l2_flush(dak_gemm_ctx *ctx, void *stream, cm_err *err)
{
    (void)ctx, (void)stream;
    return NB(err);
}
int dak_probe_bw(dak_gemm_ctx *ctx, const void *host_dev, size_t host_bytes, uint32_t host_ctas,
                 uint32_t window, const void *hbm, size_t hbm_bytes, uint32_t hbm_ctas,
                 double *host_gbs, double *hbm_gbs, cm_err *err)
{
    (void)ctx, (void)host_dev, (void)host_bytes, (void)host_ctas, (void)window, (void)hbm;
    (void)hbm_bytes, (void)hbm_ctas;
    *host_gbs = *hbm_gbs = 0.0;
    return NB(err);
}
int dak_probe_hbm(dak_gemm_ctx *ctx, const void *hbm, size_t bytes, uint32_t ctas, uint32_t chunk,
                  int contiguous, double *gbs, cm_err *err)
{
    (void)ctx, (void)hbm, (void)bytes, (void)ctas, (void)chunk, (void)contiguous;
    *gbs = 0.0;
    return NB(err);
}
int dak_probe_handover(dak_gemm_ctx *ctx, const void *hbm, size_t bytes, uint32_t ctas, uint32_t chunk,
                       uint32_t cwarps, int lane0, double *gbs, cm_err *err)
{
    (void)ctx, (void)hbm, (void)bytes, (void)ctas, (void)chunk, (void)cwarps, (void)lane0;
    *gbs = 0.0;
    return NB(err);
}
int dak_probe_hbm_sms(dak_gemm_ctx *ctx, const void *hbm, size_t bytes, const double *weights, uint32_t nsm,
                      uint32_t rotate, uint32_t *smid, double *us, double *gbs, cm_err *err)
{
    (void)ctx, (void)hbm, (void)bytes, (void)weights, (void)nsm, (void)rotate, (void)smid, (void)us;
    *gbs = 0.0;
    return NB(err);
}
int dak_gemm_times(dak_gemm_launch *l, uint64_t *t, size_t n, uint32_t *ctas, cm_err *err)
{
    (void)l, (void)t, (void)n, (void)ctas;
    return NB(err);
}
int dak_diag_empty(dak_gemm_ctx *ctx, uint32_t grid, uint32_t smem, void *stream, cm_err *err)
{
    (void)ctx, (void)grid, (void)smem, (void)stream;
    return NB(err);
}
int dak_diag_stream(dak_gemm_ctx *ctx, const void *a, size_t bytes, const void *b, const dak_stream_floor_opts *o,
                    void *stream, cm_err *err)
{
    (void)ctx, (void)a, (void)bytes, (void)b, (void)o, (void)stream;
    return NB(err);
}
