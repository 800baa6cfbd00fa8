/* Latency and rate of the instructions the tensor-core solve step is made of
 * (solver_tc.cuh): the integer mma of INT8 (IMMA m16n8k32 s8), the b1
 * and-popc mma of PM1/TERNARY (BMMA m16n8k128) and a shared-memory load.
 * A diagnostic for docs/perf/NOTES-gpusolver.md: it says whether a step is
 * bound by the mma's latency (dependent chains), by the SM's mma rate (many
 * warps, independent chains) or by neither.  One kernel, one warp-uniform
 * kind per launch; clock64() around the timed loop in every warp. */
#include <stdint.h>
#include <stdlib.h>

#include "common/ptx.cuh"
#include "probe_mma.h"

#define PROBE_UNROLL 16

__global__ void __launch_bounds__(1024, 1)
    dsb_probe_mma_kernel(int kind, int chains, uint32_t iters, long long *cycles, uint64_t *ns,
                         uint32_t *sink)
{
    __shared__ uint32_t chase[1024];
    const uint32_t tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5;
    /* a pointer chase of stride 33 words through the shared array (every lane its own chain) */
    for (uint32_t i = tid; i < 1024u; i += blockDim.x) chase[i] = (i + 33u) & 1023u;
    __syncthreads();
    uint32_t a[4] = {lane * 0x01010101u, lane ^ 0x5a5a5a5au, lane + 7u, ~lane};
    uint32_t b0 = lane * 3u + 1u, b1 = lane ^ 0x33u;
    int32_t d[8][4];
    for (int c = 0; c < 8; c++)
        for (int e = 0; e < 4; e++) d[c][e] = (int32_t)(c + e);
    uint32_t idx = lane;
    __syncwarp();
    const uint64_t g0 = ptx_globaltimer();
    const long long t0 = clock64();
    for (uint32_t it = 0; it < iters; it++) {
#pragma unroll
        for (int u = 0; u < PROBE_UNROLL; u++) {
            if (kind == DSB_PROBE_IMMA) {
#pragma unroll
                for (int c = 0; c < 8; c++)
                    if (c < chains) ptx_mma_s8_16832(d[c], a, b0, b1);
            } else if (kind == DSB_PROBE_BMMA) {
#pragma unroll
                for (int c = 0; c < 8; c++)
                    if (c < chains) ptx_mma_b1_and_168128(d[c], a[0], a[1], b0);
            } else {
                idx = chase[idx];
            }
        }
    }
    const long long t1 = clock64();
    const uint64_t g1 = ptx_globaltimer();
    int32_t acc = (int32_t)idx;
    for (int c = 0; c < 8; c++)
        for (int e = 0; e < 4; e++) acc += d[c][e];
    atomicAdd(sink, (uint32_t)acc);
    if (lane == 0) {
        cycles[blockIdx.x * (blockDim.x >> 5) + warp] = t1 - t0;
        ns[blockIdx.x * (blockDim.x >> 5) + warp] = g1 - g0;
    }
}

extern "C" int dsb_probe_mma(int kind, int chains, uint32_t warps, uint32_t blocks,
                             uint32_t iters, dsb_probe_result *r)
{
    long long *dc = NULL;
    uint64_t *dn = NULL;
    uint32_t *sink = NULL;
    const size_t nw = (size_t)warps * blocks;
    long long *hc = (long long *)malloc(nw * sizeof *hc);
    uint64_t *hn = (uint64_t *)malloc(nw * sizeof *hn);
    int rc = -1;
    if (!hc || !hn || chains < 1 || chains > 8 || warps < 1 || warps > 32 || blocks < 1 ||
        blocks > 1024)
        goto out;
    if (cudaMalloc((void **)&dc, nw * sizeof *dc) != cudaSuccess ||
        cudaMalloc((void **)&dn, nw * sizeof *dn) != cudaSuccess ||
        cudaMalloc((void **)&sink, sizeof *sink) != cudaSuccess)
        goto out;
    /* a warm-up launch (clocks up, code loaded), then the timed one */
    for (int rep = 0; rep < 2; rep++)
        dsb_probe_mma_kernel<<<blocks, warps * 32u>>>(kind, chains, iters, dc, dn, sink);
    if (cudaDeviceSynchronize() != cudaSuccess) goto out;
    if (cudaMemcpy(hc, dc, nw * sizeof *dc, cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(hn, dn, nw * sizeof *dn, cudaMemcpyDeviceToHost) != cudaSuccess)
        goto out;
    {
        double cmax = 0.0, nmax = 0.0;
        for (size_t i = 0; i < nw; i++) {
            if ((double)hc[i] > cmax) cmax = (double)hc[i];
            if ((double)hn[i] > nmax) nmax = (double)hn[i];
        }
        const double per_warp = (double)iters * PROBE_UNROLL * (kind == DSB_PROBE_LDS ? 1 : chains);
        r->cycles_per_op = cmax / per_warp;                   /* one warp's view */
        r->sm_cycles_per_op = cmax / (per_warp * warps);      /* the SM's view (one block per SM) */
        r->mhz = nmax > 0.0 ? 1e3 * cmax / nmax : 0.0;
    }
    rc = 0;
out:
    free(hc);
    free(hn);
    cudaFree(dc);
    cudaFree(dn);
    cudaFree(sink);
    return rc;
}
