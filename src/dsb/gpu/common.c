/* Parts of the GPU solver's API that need no CUDA: Eq. (6) and the names of
 * the timing variants and of the coupling-sum engines (built with and without CUDA). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "dsb/gpu.h"
#include "layout.h"

size_t dsb_gpu_smem_bytes(dsb_format f, uint32_t n, uint32_t replicas)
{
    dsb_gpu_layout L;
    if (dsb_gpu_layout_make(f, n, replicas, &L)) return 0;
    return L.total;
}

static const char *const variant_names[DSB_GPU_VAR_COUNT] = {"none", "no-barrier", "double-sum",
                                                              "no-sum", "double-update"};

const char *dsb_gpu_variant_name(int v)
{
    return (v >= 0 && v < DSB_GPU_VAR_COUNT) ? variant_names[v] : "unknown";
}

/* Index of s in names[0..count), case-insensitive; -1 if absent. */
static int parse_name(const char *const *names, int count, const char *s)
{
    for (int v = 0; v < count; v++)
        if (!strcasecmp(s, names[v])) return v;
    return -1;
}

int dsb_gpu_variant_parse(const char *s) { return parse_name(variant_names, DSB_GPU_VAR_COUNT, s); }

int dsb_gpu_sums_for(int sums, dsb_format f, uint32_t n, uint32_t replicas)
{
    dsb_gpu_layout L;
    if (dsb_gpu_layout_make(f, n, replicas, &L)) return DSB_GPU_SUMS_CUDA;
    return dsb_gpu_tc_pick(&L, sums) ? DSB_GPU_SUMS_TENSOR : DSB_GPU_SUMS_CUDA;
}

int dsb_gpu_tensor_fits(dsb_format f, uint32_t n, uint32_t replicas)
{
    return dsb_gpu_sums_for(DSB_GPU_SUMS_TENSOR, f, n, replicas) == DSB_GPU_SUMS_TENSOR;
}

static const char *const sums_names[DSB_GPU_SUMS_COUNT] = {"auto", "cuda", "tensor"};

const char *dsb_gpu_sums_name(int s)
{
    return (s >= 0 && s < DSB_GPU_SUMS_COUNT) ? sums_names[s] : "unknown";
}

int dsb_gpu_sums_parse(const char *s) { return parse_name(sums_names, DSB_GPU_SUMS_COUNT, s); }

int dsb_gpu_sums_arg(const char *prog, const char *flag, const char *value, int *out)
{
    int n = 0;
    const char *p = value;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char tok[16];
        if (len == 0 || len >= sizeof tok || n == DSB_GPU_SUMS_COUNT) break;
        memcpy(tok, p, len);
        tok[len] = 0;
        if ((out[n] = dsb_gpu_sums_parse(tok)) < 0) break;
        n++;
        if (!e) return n;
        p = e + 1;
    }
    fprintf(stderr, "%s: %s: expected a list of up to three of auto, cuda, tensor, got '%s'\n",
            prog, flag, value);
    return -1;
}
