/* Internal: the state shared by the GPU-resident server's host side
 * (resident.c) and its agents (agents.cu).  C-compatible. */
#ifndef DSB_RESIDENT_DEV_H
#define DSB_RESIDENT_DEV_H

#include <stdint.h>

#include "dsb/nic.h"
#include "dsb/resident.h"
#include "ring.h"

/* One image buffer per model entry: a full store slot plus the 16 bytes the
 * INT8 kernels may read past the last row. */
#define DSB_RES_IMAGE_BYTES (DSB_STORE_SLOT_BYTES + 256u)
#define DSB_RES_BITMAP_WORDS ((DSB_WIRE_MAX_FRAGS + 31u) / 32u)

/* Store bookkeeping of one slot (GPU memory, read and written by the receive
 * agent only). */
typedef struct {
    uint32_t cur_gen;       /* complete generation, 0 = none */
    uint32_t cur_entry;     /* 0 or 1: its entry (models[2 id + cur_entry]) */
    uint32_t cur_n, cur_max_B;
    uint32_t flip_pub;      /* items assigned when cur_gen was published: the other
                               entry is free once all of them are acknowledged */
    uint32_t pend_gen;      /* generation being assembled, 0 = none */
    uint32_t pend_entry;
    uint32_t pend_n, pend_format, pend_total, pend_count, pend_received;
    float pend_xi;
    uint32_t pad[3];
    uint32_t bitmap[DSB_RES_BITMAP_WORDS];
} dsb_res_slot;

typedef struct {
    dsb_pipe_dev pipe;              /* the rings and control words of the workers */
    dsb_pipe_model_dev *models;     /* = pipe.models, writable: DSB_PIPE_MODEL_ENTRIES */
    dsb_pipe_layout_dev *layouts;   /* = pipe.layouts, writable */
    unsigned char *images;          /* GPU memory: ENTRIES x DSB_RES_IMAGE_BYTES */
    dsb_res_slot *slots;            /* GPU memory: DSB_PIPE_MODELS */
    dsb_nic_queues *nic;            /* device address of the host-mapped queues */
    dsb_res_counts *counts;         /* host-mapped: [0] receive agent, [1] transmit agent */
    unsigned long long *published;  /* host-mapped: work items published */
    uint32_t tx_batch;
    uint32_t pad;
} dsb_res_dev;

#ifdef __cplusplus
extern "C" {
#endif
/* agents.cu */
int dsb_res_k_prepare(void);
int dsb_res_k_launch_agents(const dsb_res_dev *d, void *stream);
#ifdef __cplusplus
}
#endif

#endif
