/* The streaming dSB solver on the GPU (seed 000, Sec. VIII): the same run as
 * the CPU reference of dsb/stream.h (dsb_stream_run_cpu), with the state
 * (x, y, signs on the frame grid, int32 mismatch counters) resident in GPU
 * memory and the 4096-byte frames consumed by persistent worker blocks.
 * Its records equal the CPU reference's, pass by pass (shared arithmetic;
 * tests/dsb_gpu/test_stream_gpu.c checks them on the GPU).
 *
 * Sources of the frames:
 *   DSB_STREAM_SRC_GEN   synthesized on the GPU by the worker blocks themselves
 *                        (the paper's generator is a second GPU; ours is one):
 *                        measures the evaluator with in-GPU synthesis.
 *   DSB_STREAM_SRC_HOST  complete frames (header + payload, dsb_stream_feed_get: a
 *                        generated instance's or a stream file's) in pinned, mapped
 *                        host memory, pulled by the workers
 *                        straight into shared memory with bulk copies, checked
 *                        on the device (dsb_wire_stream_check) and consumed in
 *                        place.  A pass that fits host_bytes is built once and
 *                        re-sent every pass (only the header's pass field is
 *                        rewritten); otherwise CPU threads build the frames into
 *                        a ring of chunks of the buffer while the GPU consumes
 *                        others (the CPU generator's rate bounds that case).
 * docs/perf/NOTES-stream.md has the design and the predictions. */
#ifndef DSB_STREAM_GPU_H
#define DSB_STREAM_GPU_H

#include <stdint.h>

#include "dsb/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DSB_STREAM_SRC_GEN = 0, DSB_STREAM_SRC_HOST = 1 } dsb_stream_source;

/* What a run used (filled when opts.info is set). */
typedef struct {
    char device[64];
    uint32_t sms;
    uint32_t blocks;           /* persistent worker blocks launched */
    uint32_t blocks_per_sm;    /* resident blocks an SM (occupancy at this smem) */
    uint32_t threads;          /* threads a worker block (512) */
    uint32_t smem_bytes;       /* dynamic shared memory a worker block */
    int regs, local_bytes;     /* of the consume kernel (cudaFuncGetAttributes) */
    uint32_t unit_frames;      /* frames a work unit (one ticket) */
    int host_mode;             /* 0 none (gen), 1 the pass resident in host_bytes, 2 ring */
    uint32_t ring_slots;       /* ring: chunks of the buffer */
    uint32_t ring_frames;      /* ring: frames a chunk */
    uint32_t host_threads;     /* CPU threads building frames (host source) */
    uint64_t host_buffer_bytes;/* pinned frame buffer actually allocated */
    double setup_seconds;      /* allocation, initial state, first frame build */
    double update_seconds;     /* sum over passes of the end-of-pass kernel (energy, step, checksum) */
    double consume_seconds;    /* sum of the records' seconds */
    /* received frames (dsb_stream_gpu_open_recv) */
    double recv_drain_seconds; /* sum over passes of the wait, once the receiver had the
                                  pass whole, for the GPU to finish consuming it */
    uint64_t recv_attempts_stopped; /* ring: attempts given up part-consumed */
    uint64_t ring_waits;       /* ring: frames that waited for the GPU to free a slot */
} dsb_stream_gpu_info;

typedef struct {
    dsb_stream_source source;
    uint32_t blocks;       /* persistent worker blocks, 0 = 2 per SM or what fits */
    uint64_t host_bytes;   /* SRC_HOST: size of the pinned frame buffer, 0 = 64 MiB;
                              received frames: the ring (0 = 64 MiB; a size that holds
                              the pass, UINT64_MAX say: the whole pass) */
    int progress;          /* progress line with rate and ETA on stderr */
    uint32_t host_threads; /* SRC_HOST: CPU threads building frames, 0 = online cores - 1 (>= 1) */
    /* Test only: 0 = off; f + 1 sends frame f (column-block-major) of the
     * final pass K with a non-zero reserved header field, so the device check
     * rejects it (counted in bad_frames, never consumed).  SRC_HOST only. */
    uint64_t corrupt_frame;
    dsb_stream_gpu_info *info; /* optional: filled with the configuration used */
} dsb_stream_gpu_opts;

void dsb_stream_gpu_opts_default(dsb_stream_gpu_opts *o);
const char *dsb_stream_source_name(dsb_stream_source s);
/* "gen" | "host"; -1 else. */
int dsb_stream_source_parse(const char *s, dsb_stream_source *out);

#if !defined(__CUDACC__)
/* A whole run: K + 1 passes, on_pass (may be NULL) after each with the
 * pass's record (a non-zero return stops the run, which then returns 0).
 * Returns -1 with a message on bad parameters or a CUDA failure; without a
 * CUDA build, always -1 ("the GPU backend was not built ..."). */
int dsb_stream_run_gpu(const dsb_stream_params *p, const dsb_stream_gpu_opts *o,
                       dsb_stream_pass_fn on_pass, void *ctx, cm_err *err);

/* The network source on the GPU: a run whose frames come from a receiver
 * (dsb_stream_recv_sink, include/dsb/stream_net.h) through the sink of
 * dsb_stream_gpu_sink.  opts.host_bytes (0: DSB_STREAM_RING_DEFAULT_BYTES,
 * 64 MiB) of pinned, mapped host memory hold the received frames:
 *   - a pass that fits is kept whole (frame f = block n + row at 4096 f); the
 *     receiving threads copy each checked frame to its place, and once the
 *     pass is whole the GPU consumes it as the host source does (bulk copies
 *     into shared memory, the device's own frame check), runs the end-of-pass
 *     update and gives the record; an attempt that lost frames was never
 *     consumed, so a RESEND leaves nothing to undo;
 *   - otherwise the buffer is a ring of chunks (include/dsb/stream_ring.h;
 *     at least 2 chunks of 128 frames, 1 MiB): the consume kernel runs while
 *     the pass arrives and takes each chunk as soon as it is whole, in pass
 *     order, so memory is bounded by the ring, not the pass.  An attempt that
 *     lost frames stops the kernel at the first chunk that is not whole, and
 *     its counters are cleared: the state (x, y, signs) changes only in the
 *     update of a pass that consumed every frame (docs/perf/NOTES-stream.md).
 *     The ring runs 16 worker blocks unless opts.blocks says otherwise (the
 *     network, not the GPU, sets the pace).
 * opts.source, opts.host_threads and opts.corrupt_frame are not used (the last
 * is refused).  The sink fails a pass whose frames the GPU did not all
 * consume, and takes frames from several receiving threads at once. */
typedef struct dsb_stream_gpu_run dsb_stream_gpu_run;
int dsb_stream_gpu_open_recv(const dsb_stream_params *p, const dsb_stream_gpu_opts *o,
                             dsb_stream_gpu_run **out, cm_err *err);
void dsb_stream_gpu_sink(dsb_stream_gpu_run *r, dsb_stream_sink *sink);
/* Frees the run (NULL: nothing); fills opts.info if it was given. */
void dsb_stream_gpu_close(dsb_stream_gpu_run *r);
#endif

#ifdef __cplusplus
}
#endif

#endif /* DSB_STREAM_GPU_H */
