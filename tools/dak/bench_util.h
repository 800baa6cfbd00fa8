/* What every `dak bench` program shares, gemm and attn alike: the JSON document's opening
 * (bench_plan.c) and, with CUDA, the exits on a failed CUDA or dak call and the GB/s helper
 * (bench_ops.c). */
#ifndef DAK_TOOL_BENCH_UTIL_H
#define DAK_TOOL_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#include "common/json.h"

/* Opens the run's JSON document at `path`: the top-level object begun, its "bench" key written; NULL (message
 * printed) when the file cannot be written. */
FILE *bench_json_begin(const char *path, const char *name, json_w *w);

#if defined(DAK_HAVE_CUDA)
#include "common/cuda_check.h"

/* A failed CUDA call or dak call (its message in the caller's `err`) ends the benchmark. */
#define CK(x) CM_CUDA_OR_EXIT(x)
#define DK(x)                                                                                  \
    do {                                                                                       \
        if ((x)) {                                                                             \
            fprintf(stderr, "dak bench: %s\n", err.msg);                                       \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

/* GB/s of `bytes` moved in `ms`; NaN where ms is not a positive time. */
double gbs(double bytes, double ms);
#endif

#endif
