/* The wire decoder on the GPU (the receive agent's view): the same frames,
 * valid and malformed, decoded by one thread each must give the same reason
 * and the same header fields as on the host.  Label gpu. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "dsb/wire.h"

#define NF 256
#define STRIDE 2048

__global__ void decode_all(const uint8_t *frames, const uint32_t *lens, int *reason,
                           uint32_t *fields)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= NF) return;
    dsb_wire_msg m;
    reason[i] = (int)dsb_wire_decode(frames + (size_t)i * STRIDE, lens[i], 1, &m);
    fields[4 * i + 0] = m.u.hdr.request_id;
    fields[4 * i + 1] = m.u.hdr.n;
    fields[4 * i + 2] = m.payload_len;
    fields[4 * i + 3] = reason[i] == 0 ? (uint32_t)(m.payload - (frames + (size_t)i * STRIDE)) : 0;
}

int main(void)
{
    int dev = 0;
    if (cudaGetDeviceCount(&dev) != cudaSuccess || dev == 0) {
        printf("skipped: no CUDA device\n");
        return 77;
    }
    static uint8_t host[NF * STRIDE];
    static uint32_t lens[NF];
    int16_t h[725];
    for (int i = 0; i < 725; i++) h[i] = (int16_t)(i * 13 - 900);
    uint64_t r = 99;
    for (int i = 0; i < NF; i++) {
        uint8_t *f = host + (size_t)i * STRIDE;
        uint32_t n = 1 + (uint32_t)(i * 37 % 700);
        size_t len = dsb_wire_build_solve(f, STRIDE, NULL, NULL, (uint16_t)(i % 64), 1000u + i, n,
                                          0, 100, 8, 7919u + i, 0.0f, 1.0f, i % 2 ? h : NULL);
        /* every other frame gets one corrupted byte (or a shorter length) */
        if (i % 4 == 2) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            f[(r >> 33) % 64] ^= (uint8_t)(1u << ((r >> 20) % 8));
        } else if (i % 4 == 3) {
            len = len > 10 ? len - 1 - i % 10 : len;
        }
        lens[i] = (uint32_t)len;
    }
    uint8_t *d_frames;
    uint32_t *d_lens, *d_fields;
    int *d_reason;
    cudaMalloc(&d_frames, sizeof host);
    cudaMalloc(&d_lens, sizeof lens);
    cudaMalloc(&d_reason, NF * sizeof(int));
    cudaMalloc(&d_fields, 4 * NF * sizeof(uint32_t));
    cudaMemcpy(d_frames, host, sizeof host, cudaMemcpyHostToDevice);
    cudaMemcpy(d_lens, lens, sizeof lens, cudaMemcpyHostToDevice);
    decode_all<<<(NF + 127) / 128, 128>>>(d_frames, d_lens, d_reason, d_fields);
    cudaError_t e = cudaDeviceSynchronize();
    CHECK(e == cudaSuccess, "kernel: %s", cudaGetErrorString(e));
    static int reason[NF];
    static uint32_t fields[4 * NF];
    cudaMemcpy(reason, d_reason, sizeof reason, cudaMemcpyDeviceToHost);
    cudaMemcpy(fields, d_fields, sizeof fields, cudaMemcpyDeviceToHost);
    int valid = 0, invalid = 0;
    for (int i = 0; i < NF; i++) {
        dsb_wire_msg m;
        const uint8_t *f = host + (size_t)i * STRIDE;
        dsb_wire_reason want = dsb_wire_decode(f, lens[i], 1, &m);
        CHECK(reason[i] == (int)want, "frame %d: device %d, host %d", i, reason[i], (int)want);
        if (want == DSB_WR_NONE) {
            valid++;
            CHECK(fields[4 * i] == m.u.hdr.request_id && fields[4 * i + 1] == m.u.hdr.n &&
                      fields[4 * i + 2] == m.payload_len && fields[4 * i + 3] == 64,
                  "frame %d: fields differ", i);
        } else {
            invalid++;
        }
    }
    CHECK(valid >= NF / 2 && invalid > 0, "valid %d invalid %d", valid, invalid);
    cudaFree(d_frames);
    cudaFree(d_lens);
    cudaFree(d_reason);
    cudaFree(d_fields);
    return check_done();
}
