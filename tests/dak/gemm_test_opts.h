/* The split kernels' options for the tests of their rules and results: dak_gemm_opts_default with whole-K tiles off
 * (whole 2, the default, takes 7168^2's all-HBM decode shapes to k_whole; the tests of k_whole ask for it). */
#ifndef DAK_TESTS_GEMM_TEST_OPTS_H
#define DAK_TESTS_GEMM_TEST_OPTS_H

#include "dak/gemm.h"

static inline void split_opts_default(dak_gemm_opts *o)
{
    dak_gemm_opts_default(o);
    o->whole = 0;
}

#endif
