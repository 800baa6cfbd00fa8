/* The GPU streaming solver's options and names (include/dsb/stream_gpu.h);
 * built with and without CUDA. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <strings.h>

#include "dsb/stream_gpu.h"

void dsb_stream_gpu_opts_default(dsb_stream_gpu_opts *o)
{
    memset(o, 0, sizeof *o);
    o->source = DSB_STREAM_SRC_GEN;
}

const char *dsb_stream_source_name(dsb_stream_source s)
{
    return s == DSB_STREAM_SRC_GEN ? "gen" : s == DSB_STREAM_SRC_HOST ? "host" : "unknown";
}

int dsb_stream_source_parse(const char *s, dsb_stream_source *out)
{
    if (!strcasecmp(s, "gen")) *out = DSB_STREAM_SRC_GEN;
    else if (!strcasecmp(s, "host")) *out = DSB_STREAM_SRC_HOST;
    else return -1;
    return 0;
}
