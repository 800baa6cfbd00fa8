/* Tiered matrix: host rows in pinned mapped host memory, the rest in HBM. */
#include <stdlib.h>
#include <string.h>

#include "dak/tile_layout.h"
#include "dak/tiered.h"
#include "internal.h"

/* One thread per 16-byte chunk of the source: row r, chunk j of K, moved to where dak/tile_layout.h puts it in groups
 * of R rows (R = 64: the tile layout). */
__global__ void k_pack(const uint4 *src, uint4 *dst, uint32_t M, uint32_t K, uint32_t R)
{
    const uint32_t cpr = K / 8u; /* 16-byte chunks per row */
    const size_t n = (size_t)M * cpr;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t r = (uint32_t)(i / cpr), j = (uint32_t)(i % cpr);
        dst[dak_group_chunk_off(r, j, K, M, R)] = src[i];
    }
}

extern "C" int dak_pack_groups(const uint16_t *src, uint16_t *dst, uint32_t M, uint32_t K, uint32_t R, cm_err *err)
{
    if (M % 8 || K % 64 || R == 0 || R % 8)
        return cm_fail(err, "pack: M = %u, K = %u, groups of R = %u rows: expected M and R multiples of 8 (R > 0), K "
                            "of 64", M, K, R);
    if (M == 0) return 0;
    k_pack<<<1024, 256>>>((const uint4 *)src, (uint4 *)dst, M, K, R);
    DAK_CU(cudaGetLastError(), err);
    DAK_CU(cudaDeviceSynchronize(), err);
    return 0;
}

extern "C" int dak_pack_rowmajor(const uint16_t *src, uint16_t *dst, uint32_t M, uint32_t K, cm_err *err)
{
    if (M % 64 || K % 64) return cm_fail(err, "pack: M = %u and K = %u must be multiples of 64", M, K);
    return dak_pack_groups(src, dst, M, K, DAK_TILE_ROWS, err);
}

extern "C" int dak_tiered_create(dak_tiered *t, uint32_t M, uint32_t K, double ratio, cm_err *err)
{
    memset(t, 0, sizeof *t);
    if (K == 0 || K % 64) return cm_fail(err, "tiered: K = %u must be a positive multiple of 64", K);
    uint32_t rh;
    if (dak_tiered_rows_for_ratio(M, DAK_TILE_ROWS, ratio, &rh, err)) return -1;
    t->M = M, t->K = K, t->rows_host = rh, t->owns = 1, t->packed = 1;
    size_t hb = (size_t)rh * K * 2, gb = (size_t)(M - rh) * K * 2;
    if (hb) {
        cudaError_t e = cudaHostAlloc((void **)&t->host, hb, cudaHostAllocMapped | cudaHostAllocPortable);
        if (e != cudaSuccess) {
            t->host = NULL;
            return cm_fail(err, "tiered: cudaHostAlloc of %zu bytes: %s", hb, cudaGetErrorString(e));
        }
        e = cudaHostGetDevicePointer((void **)&t->host_dev, t->host, 0);
        if (e != cudaSuccess) {
            dak_tiered_destroy(t);
            return cm_fail(err, "tiered: host memory not mapped for the device: %s", cudaGetErrorString(e));
        }
    }
    if (gb) {
        cudaError_t e = cudaMalloc((void **)&t->dev, gb);
        if (e != cudaSuccess) {
            t->dev = NULL;
            dak_tiered_destroy(t);
            return cm_fail(err, "tiered: cudaMalloc of %zu bytes: %s", gb, cudaGetErrorString(e));
        }
    }
    return 0;
}

extern "C" int dak_tiered_view_rows(dak_tiered *t, uint32_t M, uint32_t K, uint32_t rows_host,
                                    uint16_t *host_rows, uint16_t *dev_rows, int packed, cm_err *err)
{
    memset(t, 0, sizeof *t);
    if (M == 0 || M % DAK_TILE_ROWS) return cm_fail(err, "tiered: M = %u must be a positive multiple of 64", M);
    if (K == 0 || K % 64) return cm_fail(err, "tiered: K = %u must be a positive multiple of 64", K);
    if (rows_host > M || rows_host % DAK_TILE_ROWS)
        return cm_fail(err, "tiered: host rows %u must be a multiple of 64 and <= %u", rows_host, M);
    if ((rows_host && !host_rows) || (rows_host < M && !dev_rows))
        return cm_fail(err, "tiered: view needs its host rows and its HBM rows");
    t->M = M, t->K = K, t->rows_host = rows_host, t->packed = packed ? 1 : 0;
    if (rows_host) {
        t->host = host_rows;
        DAK_CU(cudaHostGetDevicePointer((void **)&t->host_dev, host_rows, 0), err);
    }
    if (rows_host < M) t->dev = dev_rows;
    return 0;
}

extern "C" int dak_tiered_view(dak_tiered *t, uint32_t M, uint32_t K, uint32_t rows_host,
                               uint16_t *host_full, uint16_t *dev_full, int packed, cm_err *err)
{
    /* row rows_host of the full copy, where the HBM tier has rows (the bounds are checked there) */
    uint16_t *dev_rows = dev_full && rows_host < M ? dev_full + (size_t)rows_host * K : NULL;
    return dak_tiered_view_rows(t, M, K, rows_host, host_full, dev_rows, packed, err);
}

extern "C" int dak_tiered_load_from_device(dak_tiered *t, const uint16_t *src_dev, cm_err *err)
{
    size_t hb = (size_t)t->rows_host * t->K * 2, gb = (size_t)(t->M - t->rows_host) * t->K * 2;
    if (t->packed) {
        if (hb) {
            uint16_t *tmp;
            DAK_CU(cudaMalloc((void **)&tmp, hb), err);
            int rc = dak_pack_rowmajor(src_dev, tmp, t->rows_host, t->K, err);
            cudaError_t e = rc ? cudaSuccess : cudaMemcpy(t->host, tmp, hb, cudaMemcpyDeviceToHost);
            cudaFree(tmp);
            if (rc) return -1;
            if (e != cudaSuccess) return cm_fail(err, "tiered: copy to host: %s", cudaGetErrorString(e));
        }
        if (gb && dak_pack_rowmajor(src_dev + (size_t)t->rows_host * t->K, t->dev, t->M - t->rows_host, t->K, err))
            return -1;
        return 0;
    }
    if (hb) DAK_CU(cudaMemcpy(t->host, src_dev, hb, cudaMemcpyDeviceToHost), err);
    if (gb)
        DAK_CU(cudaMemcpy(t->dev, src_dev + (size_t)t->rows_host * t->K, gb, cudaMemcpyDeviceToDevice),
               err);
    return 0;
}

extern "C" void dak_tiered_destroy(dak_tiered *t)
{
    if (t->owns) {
        if (t->host) cudaFreeHost(t->host);
        if (t->dev) cudaFree(t->dev);
    }
    memset(t, 0, sizeof *t);
}
