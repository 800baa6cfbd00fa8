/* dsb-tc-phases: where the cycles of one tensor-core solve step go (a
 * diagnostic, not part of any library or test; docs/perf/NOTES-gpusolver.md,
 * "v5").  The tensor-core body (solver_tc.cuh) compiled here with
 * DSB_TC_PHASES defined stamps clock64 at four points of every step; lane 0
 * of each warp sums the intervals over the K steps:
 *   0 top     barrier exit -> damping of the step in hand (shuffle)
 *   1 sums    -> coupling sums available (B loads, mma, combine)
 *   2 update  -> new x, y and the sign stores issued
 *   3 barrier -> past __syncthreads (waiting for the slowest warp included)
 * Each stamp after a phase first stores a value of that phase to a volatile
 * shared word, so it waits for the phase's results; the stamps add a few
 * instructions per step, so the total is slightly above the production
 * kernel's step.  Random model, one block, nothing checked.
 *
 * Built as the program dsb-tc-phases (diag_tc_phases_main.c) in CUDA builds; the
 * production kernels are untouched by it (DSB_TC_PHASES is defined only here).
 * Usage: dsb-tc-phases FORMAT N B K    (FORMAT int8 | pm1 | ternary) */
#define DSB_TC_PHASES 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag_tc_phases.h"
#include "solver_tc.cuh"

__device__ long long dsb_tc_ph_sum[8][4];
__device__ uint32_t dsb_tc_ph_k[8];

static __device__ void dsb_tc_phases_out(const long long *ph, uint32_t K)
{
    if ((threadIdx.x & 31u) != 0u) return;
    const uint32_t w = threadIdx.x >> 5;
    for (int i = 0; i < 4; i++) dsb_tc_ph_sum[w][i] = ph[i];
    dsb_tc_ph_k[w] = K;
}

DSB_GPU_TC_ALL_KERNELS(kernel_of)

#define CK(x)                                                                             \
    do {                                                                                  \
        cudaError_t e_ = (x);                                                             \
        if (e_ != cudaSuccess) {                                                          \
            snprintf(err, errlen, "%s: %s", #x, cudaGetErrorString(e_));                  \
            goto out;                                                                     \
        }                                                                                 \
    } while (0)

extern "C" int dsb_tc_phases_run(dsb_format f, uint32_t n, uint32_t B, uint32_t K,
                                 dsb_tc_phases_result *r, char *err, size_t errlen)
{
    dsb_gpu_layout L;
    if (K < 2u || dsb_gpu_layout_make(f, n, B, &L) || !dsb_gpu_tc_tiles(&L)) {
        snprintf(err, errlen, "%s n=%u B=%u K=%u is not a tensor-core request (K >= 2, at most 32 tiles)",
                 dsb_format_name(f), n, B, K);
        return -1;
    }
    const uint32_t T = dsb_gpu_tc_tiles(&L);
    /* model image: INT8 n rows of n_p bytes; bits n rows of W words (TERNARY: two
     * planes and n row constants); random, zero diagonal not needed for timing */
    size_t bytes = f == DSB_FMT_INT8 ? (size_t)n * L.np
                   : f == DSB_FMT_PM1 ? (size_t)n * L.W * 4u : (size_t)(2u * n * L.W + n) * 4u;
    unsigned char *img = (unsigned char *)calloc(bytes, 1), *dimg = NULL;
    dsb_gpu_reply *drep = NULL;
    int rc = -1;
    if (!img) {
        snprintf(err, errlen, "out of memory (%zu bytes)", bytes);
        return -1;
    }
    for (size_t i = 0; i < bytes; i++) img[i] = (unsigned char)(dsb_counter_hash(5, (uint32_t)(i >> 20), (uint32_t)i) & 0xffu);
    if (f == DSB_FMT_INT8)
        for (uint32_t rr = 0; rr < n; rr++)
            for (uint32_t c = n; c < L.np; c++) img[(size_t)rr * L.np + c] = 0;
    if (f != DSB_FMT_INT8 && (n & 31u))
        for (uint32_t rr = 0; rr < (f == DSB_FMT_TERNARY ? 2u * n : n); rr++)
            ((uint32_t *)img)[(size_t)rr * L.W + L.W - 1u] &= (1u << (n & 31u)) - 1u;
    if (f == DSB_FMT_TERNARY)
        for (uint32_t rr = 0; rr < n; rr++) ((int32_t *)img)[(size_t)2u * n * L.W + rr] = 0;
    {
        CK(cudaMalloc(&dimg, bytes));
        CK(cudaMemcpy(dimg, img, bytes, cudaMemcpyHostToDevice));
        CK(cudaMalloc(&drep, sizeof(dsb_gpu_reply) + 4u * L.W));
        dsb_gpu_args a;
        memset(&a, 0, sizeof a);
        a.model = dimg;
        a.n = n;
        a.W = L.W;
        a.np = L.np;
        a.B = B;
        a.K = K;
        DSB_GPU_COPY_OFFSETS(&a, &L);
        a.seq = 1;
        a.xi = 0.01f;
        a.dt = 0.5f;
        a.seed = 7;
        a.reply = drep;
        const void *k = kernel_of(f, T);
        CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)L.total));
        void *params[] = {&a};
        for (int rep = 0; rep < 3; rep++) { /* the last of three runs (warm caches, clocks) */
            CK(cudaLaunchKernel(k, dim3(1), dim3(DSB_GPU_THREADS), params, L.total, 0));
            CK(cudaDeviceSynchronize());
        }
        dsb_gpu_reply rep;
        CK(cudaMemcpyFromSymbol(r->cycles_per_phase, dsb_tc_ph_sum, sizeof r->cycles_per_phase));
        CK(cudaMemcpy(&rep, drep, sizeof rep, cudaMemcpyDeviceToHost));
        r->tiles_per_warp = T;
        r->ksteps = dsb_gpu_tc_ksteps(f == DSB_FMT_INT8, L.np, L.W);
        r->solve_cycles = rep.cycles;
        r->solve_ns = (double)(rep.t_end - rep.t_start);
        rc = 0;
    }
out:
    free(img);
    cudaFree(dimg);
    cudaFree(drep);
    return rc;
}
