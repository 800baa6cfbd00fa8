/* Internal: the ring and table layouts shared by the host side (pipeline.c)
 * and the kernels (worker.cu; the generator/consumer block and the clock kernel in gen.cu).
 * C-compatible.
 *
 * Sequence rules (all 32-bit, compared for equality or as modular
 * differences, so they wrap safely):
 *   work item s (0-based publication order) lives in slot s mod C and is
 *   published by storing seq = s + 1 after the item and its frame, behind a
 *   fence.  Worker ticket t waits for items[t mod C].seq == t + 1.
 *   ack[slot] holds t + 1 of the last acknowledged ticket of the slot; it
 *   starts at slot - C + 1, as if ticket slot - C had been acknowledged, so
 *   "slot free for publication s" is always ack[s mod C] == s - C + 1.
 *   reply ticket r (taken after the solve) uses reply slot r mod C once
 *   r - consumed < C; ready[r mod C] = (r + 1) << 32 | frame length.
 *   consumed counts the replies the consumer has released, in order. */
#ifndef DSB_PIPE_RING_H
#define DSB_PIPE_RING_H

#include <stdint.h>
#include <string.h>

#include "dsb/pipeline.h"
#include "layout.h"

typedef struct {
    uint32_t seq;    /* s + 1 once published */
    uint32_t len;    /* frame length */
    uint64_t t_recv; /* receive time, GPU global-timer ns */
} dsb_pipe_item;

typedef struct {
    const unsigned char *image; /* packed model in GPU memory */
    uint32_t format, n, W, np;
    uint32_t generation;
    uint32_t max_B;             /* 0: slot empty */
    float xi_default;
    uint32_t pad;
} dsb_pipe_model_dev;

/* Each model slot has two entries, models[2 id] and models[2 id + 1], so that
 * a GPU-resident server can complete generation g + 1 of a slot while
 * requests of generation g are still being solved (the host placement uses
 * entry 2 id only).  A SOLVE with generation 0 takes the valid entry of the
 * larger generation; another generation must match one entry. */
#define DSB_PIPE_MODEL_ENTRIES (2u * DSB_PIPE_MODELS)

/* The Eq. (6) layout of one (model entry, B). */
typedef struct {
    uint32_t ppt, samerow;      /* samerow: the solver's row mode 0, 1 or 2 */
    uint32_t row_bytes, off_minus, off_rowconst, off_signs, off_field, off_s0, off_energy;
    uint32_t sign_buf_bytes;
    uint32_t total;             /* 0: does not fit one block at S */
    uint32_t pad;
} dsb_pipe_layout_dev;

/* Fills the layouts of B = 1 .. DSB_PIPE_MAX_B for a model (row[B - 1]; zero
 * where B does not fit one block below area_off bytes) and returns the
 * largest B that fits (0: none).  Host (dsb_pipe_set_model) and device (the
 * GPU-resident server's receive agent when a LOAD completes). */
DSB_HD static inline uint32_t dsb_pipe_layout_row(dsb_format format, uint32_t n, uint32_t area_off,
                                                  dsb_pipe_layout_dev *row)
{
    uint32_t maxB = 0;
    for (uint32_t B = 1; B <= DSB_PIPE_MAX_B; B++) {
        dsb_pipe_layout_dev *o = &row[B - 1];
        dsb_gpu_layout L;
        memset(o, 0, sizeof *o);
        if (maxB + 1u != B || dsb_gpu_layout_make(format, n, B, &L) || L.total > area_off) continue;
        o->ppt = L.ppt;
        o->samerow = (uint32_t)dsb_gpu_row_mode(format, &L);
        DSB_GPU_COPY_OFFSETS(o, &L);
        o->total = (uint32_t)L.total;
        maxB = B;
    }
    return maxB;
}

/* Host-mapped control words. */
typedef struct {
    volatile uint32_t shutdown;
    volatile uint32_t running;  /* workers that entered the loop */
    volatile uint64_t clock;    /* clock calibration: a kernel writes %globaltimer */
} dsb_pipe_ctrl;

/* Per-worker counters, host-mapped, written at most every poll_ns and at exit. */
typedef struct {
    uint64_t served, errors, busy_ns;
    uint32_t exited, pad;
} dsb_pipe_wstat;

/* Kernel argument of the workers and of the generator/consumer block. */
typedef struct {
    dsb_pipe_item *items;            /* C items */
    unsigned char *frames;           /* C x DSB_PIPE_FRAME_SLOT */
    uint32_t *ack;                   /* C */
    unsigned char *replies;          /* C x DSB_PIPE_REPLY_SLOT */
    unsigned long long *ready;       /* C */
    uint32_t *consumed;              /* 1 */
    uint32_t *tickets;               /* GPU memory: [0] work tickets, [1] reply tickets */
    const dsb_pipe_model_dev *models;             /* GPU memory, DSB_PIPE_MODEL_ENTRIES */
    const dsb_pipe_layout_dev *layouts;           /* GPU memory, ENTRIES x MAX_B */
    dsb_pipe_ctrl *ctrl;             /* host-mapped */
    dsb_pipe_wstat *wstat;           /* host-mapped, one per worker */
    uint32_t smem_bytes;             /* S */
    uint32_t area_off;               /* S - DSB_PIPE_AREA */
    uint32_t host_rings;             /* 1: rings in host-mapped memory */
    uint32_t poll_ns;
    uint32_t max_steps;
    uint32_t sums;                   /* dsb_gpu_sums: engine per request (dsb_gpu_tc_pick) */
} dsb_pipe_dev;

/* The generator / consumer block (GPU placement). */
#define DSB_PIPE_MAX_TEMPLATES 64u
typedef struct {
    const unsigned char *templates;  /* n_templates x DSB_PIPE_FRAME_SLOT, GPU memory */
    const uint32_t *template_lens;
    uint32_t n_templates;
    uint32_t requests;
    uint32_t drop_when_full;
    uint32_t max_outstanding;
    uint32_t *latency_ns;            /* requests, or NULL */
    uint64_t *t_pub;                 /* requests: publish time (0 = dropped) */
    uint32_t *answers;               /* requests: replies received */
    unsigned char *log;              /* requests x log_stride, or NULL */
    uint32_t log_stride;
    uint32_t seq0;                   /* ring position at launch: items published so far */
    uint32_t cons0;                  /* replies consumed so far */
    uint32_t pad;
    unsigned long long *result;      /* GPU memory: [0] published [1] dropped [2] answered
                                        [3] stray [4] t_first [5] t_last */
} dsb_pipe_gen_dev;

#ifdef __cplusplus
extern "C" {
#endif
/* worker.cu (the generator and clock launches: gen.cu): kernel launches and queries (return
 * cudaError_t as int). */
int dsb_pipe_k_occupancy(uint32_t smem_bytes, int *blocks_per_sm);
int dsb_pipe_k_prepare(uint32_t smem_bytes);
int dsb_pipe_k_launch_workers(const dsb_pipe_dev *d, uint32_t blocks, void *stream);
int dsb_pipe_k_launch_gen(const dsb_pipe_dev *d, const dsb_pipe_gen_dev *g, void *stream);
int dsb_pipe_k_launch_clock(dsb_pipe_ctrl *ctrl, void *stream);
int dsb_pipe_k_regs(int *regs, int *local_bytes);
/* pipeline.c: the kernel argument of a created pipeline (for the agents of
 * the GPU-resident server, which share its rings). */
void dsb_pipe_dev_args(const dsb_pipe *p, dsb_pipe_dev *out);
#ifdef __cplusplus
}
#endif

#endif
