/* The NIC as the GPU-resident server sees it (seed 000, Sec. V-C; docs/nic.md).
 *
 * Four queues, all in one block of GPU-visible memory:
 *   receive queue  R frame slots of 2 KiB and one 64-bit ready word per slot,
 *                  ready[s mod R] = (s + 1) << 32 | length for receive s (bit
 *                  31 of the length: the frame was longer than the slot);
 *   rx consumer    the receive agent's count of slots it has finished with
 *                  (the NIC drops, and counts, what arrives while s - consumer
 *                  reaches R, as a NIC does when its ring is full);
 *   send queue     D descriptors {slot, length}; the frame of descriptor d
 *                  lies in tx frame buffer d mod D;
 *   doorbell       the send queue's producer index, written by the transmit
 *                  agent once per batch (<= 32 descriptors);
 *   completion     the NIC's count of descriptors sent, written once per
 *                  doorbell (for the last descriptor of the batch).
 *
 * Peer addressing: the NIC writes a 32-bit peer handle into bytes 6..9 (the
 * source MAC) of every received frame; the GPU never looks at it beyond
 * swapping the MACs into the reply (wire.h), so bytes 0..3 of every frame it
 * sends carry the handle back, and the NIC maps it to the peer's address (and,
 * for raw Ethernet, restores the real MACs).
 *
 * Here the NIC is a stand-in (src/dsb/service/nic_standin.c): two host threads
 * that move frames between a socket (dsb_transport) and these queues in
 * host-mapped pinned memory, and do nothing else.  A DOCA GPUNetIO backend
 * replaces it with the NIC's own receive and send queues in GPU memory
 * (docs/nic.md says what it must call).  C11 and CUDA C. */
#ifndef DSB_NIC_H
#define DSB_NIC_H

#include <stdint.h>

#include "common/error.h"
#include "dsb/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DSB_NIC_RX_SLOTS 2048u       /* R (power of two) */
#define DSB_NIC_RX_FRAME 2048u       /* bytes per receive slot (>= DSB_WIRE_MAX_FRAME) */
#define DSB_NIC_TX_SLOTS 256u        /* D (power of two, >= 2 batches) */
#define DSB_NIC_TX_FRAME 512u        /* = DSB_PIPE_REPLY_SLOT: one reply */
#define DSB_NIC_TX_BATCH 32u         /* descriptors per doorbell at most */
#define DSB_NIC_RX_TRUNCATED 0x80000000u
#define DSB_NIC_PEERS 4096u          /* peer handles (distinct client addresses) */

typedef struct {
    uint32_t slot; /* tx frame buffer index (d mod D) */
    uint32_t len;
} dsb_nic_desc;

/* The shared block, laid out once; every field 64-byte aligned. */
typedef struct {
    volatile unsigned long long rx_ready[DSB_NIC_RX_SLOTS];
    volatile uint32_t rx_consumer;
    uint32_t pad0[15];
    volatile uint32_t tx_doorbell;
    uint32_t pad1[15];
    volatile uint32_t tx_completion;
    uint32_t pad2[15];
    dsb_nic_desc tx_desc[DSB_NIC_TX_SLOTS];
    unsigned char rx_frames[DSB_NIC_RX_SLOTS][DSB_NIC_RX_FRAME];
    unsigned char tx_frames[DSB_NIC_TX_SLOTS][DSB_NIC_TX_FRAME];
} dsb_nic_queues;

/* ---- the stand-in (host threads over a dsb_transport) --------------------- */

typedef struct {
    uint64_t rx_frames, rx_bytes;
    uint64_t rx_ring_full;  /* dropped: the receive queue was full */
    uint64_t rx_no_peer;    /* from a peer beyond the table: passed on, but its reply
                               cannot be addressed (counted again as tx_bad_peer) */
    uint64_t tx_frames, tx_failed;
    uint64_t tx_bad_peer;   /* descriptor whose frame names no known peer */
    uint64_t doorbells;
    uint64_t rx_calls, tx_calls; /* receive calls that returned frames, send calls */
    double rx_busy_s, tx_busy_s; /* wall time inside those calls: the socket work itself,
                                    without the polling around it */
    double rx_cpu_s, tx_cpu_s;   /* thread CPU time of the two threads (polling included) */
} dsb_nic_stats;

typedef struct dsb_nic_standin dsb_nic_standin;

/* Starts the receive and transmit threads on queues q (host address of the
 * mapped block; zeroed here).  The transport stays owned by the caller. */
int dsb_nic_standin_start(dsb_transport *t, dsb_nic_queues *q, dsb_nic_standin **out,
                          cm_err *err);
void dsb_nic_standin_stats(dsb_nic_standin *s, dsb_nic_stats *out);
/* Stops both threads, fills *final (may be NULL; thread CPU times included)
 * and frees the stand-in (not the queues). */
void dsb_nic_standin_stop(dsb_nic_standin *s, dsb_nic_stats *final);

#ifdef __cplusplus
}
#endif

#endif
