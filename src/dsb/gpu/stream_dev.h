/* Internal: the interface between the streaming solver's host driver
 * (stream_host.c, C11) and its kernels (stream.cu).  C-compatible; the launch
 * wrappers return a cudaError_t as int (0 = success). */
#ifndef DSB_STREAM_DEV_H
#define DSB_STREAM_DEV_H

#include <stdint.h>

#define DSB_SG_THREADS 512u                        /* threads a worker block */
#define DSB_SG_WARPS (DSB_SG_THREADS / 32u)        /* 16: one frame stage each */
#define DSB_SG_TILE_WORDS 1024u                    /* a sign tile: 1008 words + 16 zero */
#define DSB_SG_UNIT 128u                           /* frames a work unit (ring chunks hold whole units) */

/* Where a pass's frames come from. */
enum {
    DSB_SG_GEN_MATTIS = 0, /* synthesized from the eta bitmap */
    DSB_SG_GEN_RANDOM = 1, /* synthesized from the pair hash */
    DSB_SG_HOST_PASS = 2,  /* frame f at frames + 4096 f (the whole pass in host memory) */
    DSB_SG_HOST_RING = 3   /* chunk Q of the run in slot Q % ring_slots */
};

/* Dynamic shared memory of a worker block: one 4096-byte frame stage a warp,
 * B sign tiles and the eta tile (4096 bytes each). */
static inline uint32_t dsb_sg_smem_bytes(uint32_t replicas)
{
    return (DSB_SG_WARPS + replicas + 1u) * DSB_SG_TILE_WORDS * 4u;
}

typedef struct {
    uint32_t n, replicas, pass, mode;
    uint64_t frames;           /* T = n ceil(n / C_b) */
    uint64_t units;            /* ceil(T / unit) */
    uint32_t unit;             /* frames a work unit, a multiple of 16 */
    uint32_t ring_slots;       /* HOST_RING */
    uint64_t grid_words;       /* G: sign words of one replica */
    uint64_t key;              /* GEN_RANDOM: dsb_stream_key(seed, RANDOM) */
    const uint32_t *signs;     /* B x G */
    const uint32_t *eta;       /* G words (GEN_MATTIS) */
    int32_t *cnt;              /* B x n mismatch counters */
    const uint8_t *buf;        /* device address of the pinned frame buffer (HOST_*) */
    uint64_t ring_frames;      /* HOST_RING: frames a chunk (a multiple of unit) */
    uint64_t chunk_base;       /* HOST_RING: run-wide index of this pass's chunk 0 */
    const uint64_t *ready;     /* HOST_RING, mapped: ready[s] = Q + 1 once chunk Q is built */
    uint64_t *freed;           /* HOST_RING, mapped: freed[s] = Q + 1 once chunk Q is consumed */
    uint32_t *ring_count;      /* HOST_RING, device: frames of the slot's chunk consumed */
    const uint64_t *abort;     /* HOST_RING, mapped, or NULL: *abort == epoch stops the
                                  launch at the next chunk that is not ready (a received
                                  attempt given up: the host clears the counters after) */
    uint64_t epoch;            /* this launch's number (> 0) */
    uint32_t poll_ns;          /* HOST_RING: sleep between polls of a ready word */
    uint32_t *ticket;          /* device: work units claimed (0 at launch) */
    unsigned long long *stats; /* device: [0] frames consumed, [1] bad frames (0 at launch) */
    unsigned long long *progress; /* mapped, one word a block (frames done), or NULL */
} dsb_sg_consume_args;

typedef struct {
    uint32_t n, replicas;
    int init;                  /* 1: x, y = dsb_initial_state(seed, b, i); signs packed; nothing else */
    int update;                /* 1: the dSB step after the energy */
    uint64_t seed;
    uint64_t grid_words;
    float damping, xi, dt;
    float *x, *y;              /* B x n */
    uint32_t *signs;           /* B x G */
    int32_t *cnt;              /* B x n: read and cleared */
    unsigned long long *energy2;   /* B: sum of -s_i a_i (two's complement) */
    unsigned long long *checksum;  /* B: sum of the checksum terms (mod 2^64) */
} dsb_sg_update_args;

#ifdef __cplusplus
extern "C" {
#endif
/* Sets the consume kernel's shared-memory limit and reports its occupancy
 * at smem_bytes, registers and local memory. */
int dsb_sg_prepare(uint32_t smem_bytes, int *blocks_per_sm, int *regs, int *local_bytes);
int dsb_sg_launch_consume(const dsb_sg_consume_args *a, uint32_t blocks, uint32_t smem_bytes,
                          void *stream);
int dsb_sg_launch_update(const dsb_sg_update_args *a, void *stream);
/* eta on the frame grid: G words of dsb_stream_eta_word(key, n, gw). */
int dsb_sg_launch_eta(uint32_t *eta, uint64_t key, uint32_t n, uint64_t grid_words, void *stream);
#ifdef __cplusplus
}
#endif

#endif
