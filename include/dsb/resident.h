/* The GPU-resident server core (seed 000, Sec. V-C, Fig. 1(c)): a receive
 * agent and a transmit agent on the GPU around the persistent worker pipeline
 * (dsb/pipeline.h, GPU placement), talking to a NIC through the queues of
 * dsb/nic.h.  The CPU starts it and reads its counters; it takes no part in
 * receiving, validating, storing models, scheduling or transmitting.
 *
 *   receive agent   one warp (plus seven helper warps used only to validate a
 *                   completed model image): polls the next <= 32 receive
 *                   slots, copies each frame into shared memory, decodes it
 *                   with the wire.h decoder, and
 *                     SOLVE  checks it against the GPU model store, copies it
 *                            into the next work slot with the GPU receive time
 *                            and the generation it resolves to, and publishes
 *                            the burst's items behind one fence;
 *                     LOAD   applies the fragment to the GPU model store (same
 *                            rules as dsb/store.h), validates a completed
 *                            image, computes its Eq. (6) layouts, publishes the
 *                            generation and queues a LOAD_ACK;
 *                     else   counts the frame by reason and answers it when
 *                            answerable (RESULT or LOAD_ACK with the status).
 *   transmit agent  one warp: takes the ready replies in order (at most
 *                   tx_batch), stamps the transmit wait into each RESULT,
 *                   writes one descriptor each, rings the doorbell once and
 *                   waits for the one completion, then returns the reply slots.
 *
 * Models: each store slot has two GPU image buffers; a new generation is
 * assembled into the one not in use, so requests already published keep the
 * generation they were admitted with.  A third generation must wait until every
 * request published before the second one was acknowledged; its fragments are
 * dropped and counted (load_deferred) until then, and the client's
 * retransmission completes it.
 *
 * Without CUDA every call reports that it was not built. */
#ifndef DSB_RESIDENT_H
#define DSB_RESIDENT_H

#include <stdint.h>

#include "common/error.h"
#include "dsb/nic.h"
#include "dsb/pipeline.h"
#include "dsb/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Counters of the two agents (host-mapped, refreshed at most every poll_ns
 * and at exit). */
typedef enum {
    DSB_RES_RX_FRAMES = 0,
    DSB_RES_RX_BYTES,
    DSB_RES_LOAD_FRAGS,
    DSB_RES_LOAD_DUPLICATES,
    DSB_RES_LOAD_COMPLETED,
    DSB_RES_LOAD_REACKS,
    DSB_RES_LOAD_REJECTED,
    DSB_RES_LOAD_DEFERRED,   /* fragment of a third generation while the old one is in use */
    DSB_RES_SOLVE_RX,
    DSB_RES_SOLVE_QUEUED,
    DSB_RES_SOLVE_REJECTED,
    DSB_RES_OVERLOADED,      /* work ring full: answered OVERLOADED */
    DSB_RES_BAD_FRAMES,
    DSB_RES_UNANSWERED,
    DSB_RES_TX_DESCRIPTORS,  /* frames handed to the NIC */
    DSB_RES_TX_DOORBELLS,
    DSB_RES_SOLVE_OK,        /* RESULT OK handed to the NIC */
    DSB_RES_SOLVE_FAILED,    /* RESULT INTERNAL */
    DSB_RES_COUNT
} dsb_res_counter;

typedef struct {
    uint64_t c[DSB_RES_COUNT];
    uint64_t bad[DSB_WR_COUNT];    /* rejected frames by reason */
    uint64_t status[DSB_ST_COUNT]; /* frames handed to the NIC by status */
} dsb_res_counts;

typedef struct {
    dsb_pipe_config pipe;  /* placement is forced to GPU; reserve at least 2 */
    uint32_t tx_batch;     /* descriptors per doorbell, 1 .. 32 (default 32; 1 = one send
                              and one completion per reply, the paper's Sec. VII-F baseline) */
} dsb_resident_config;

void dsb_resident_config_default(dsb_resident_config *c);
/* Checks the ranges (no GPU needed). */
int dsb_resident_config_check(const dsb_resident_config *c, cm_err *err);

typedef struct dsb_resident dsb_resident;

/* Allocates the pipeline, the GPU model store and the NIC queues
 * (host-mapped; *queues is their host address, zeroed, for the stand-in). */
int dsb_resident_create(const dsb_resident_config *c, dsb_nic_queues **queues,
                        dsb_resident **out, cm_err *err);
/* Launches the workers, then the two agents. */
int dsb_resident_start(dsb_resident *r, cm_err *err);
uint32_t dsb_resident_workers(const dsb_resident *r);
/* Sum of both agents' counters. */
void dsb_resident_counts(dsb_resident *r, dsb_res_counts *out);
/* Work items the receive agent has published so far. */
uint64_t dsb_resident_published(dsb_resident *r);
/* Stops agents and workers (requests not yet answered are abandoned and
 * counted in *abandoned: published - answered). */
int dsb_resident_stop(dsb_resident *r, uint64_t *abandoned, cm_err *err);
void dsb_resident_destroy(dsb_resident *r);

#ifdef __cplusplus
}
#endif

#endif
