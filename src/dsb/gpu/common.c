/* Parts of the GPU solver's API that need no CUDA: Eq. (6) and the names of
 * the timing variants (built with and without CUDA). */
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

int dsb_gpu_variant_parse(const char *s)
{
    for (int v = 0; v < DSB_GPU_VAR_COUNT; v++)
        if (!strcasecmp(s, variant_names[v])) return v;
    return -1;
}
