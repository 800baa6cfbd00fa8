/* The dsb request service (seed 000, Sec. V): a server is a transport (udp,
 * packet; see transport.h) plus a dispatcher (cpu here; launch, proxy and gpu
 * plug in through the same struct), around the wire codec (wire.h) and the
 * model store (store.h).
 *
 * The receive loop decodes each frame, applies LOAD fragments to the store
 * (answering LOAD_ACK on completion and on retransmission after it), and for
 * a SOLVE acquires the model generation, checks the dispatcher's limits and
 * submits a job.  Every SOLVE is answered: RESULT OK, or RESULT with an error
 * status (bad request, unknown model, overloaded, ...).  Frames too broken to
 * answer are counted by reason, as are the kernel's socket-queue drops. */
#ifndef DSB_SERVICE_H
#define DSB_SERVICE_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"
#include "dsb/nic.h"
#include "dsb/resident.h"
#include "dsb/store.h"
#include "dsb/transport.h"
#include "dsb/wire.h"

/* ---- jobs and dispatchers -------------------------------------------------- */

typedef struct {
    dsb_wire_solve req;                  /* validated request header */
    int has_field;
    int16_t field[DSB_WIRE_MAX_FIELD_N]; /* h when has_field */
    const dsb_store_model *model;        /* acquired; released by the reply path */
    dsb_peer peer;
    uint64_t t_rx_ns;                    /* receive timestamp */
} dsb_job;

typedef struct {
    uint16_t status;      /* DSB_ST_OK or DSB_ST_INTERNAL */
    uint32_t best_replica;
    int64_t energy2;
    uint32_t worker_id;
    uint64_t t_start_ns;  /* taken by the worker */
    uint64_t t_end_ns;    /* solve finished */
    const uint32_t *spins; /* W words */
} dsb_job_result;

/* Called by the dispatcher once per submitted job, from any thread. */
typedef void (*dsb_reply_fn)(void *ctx, dsb_job *job, const dsb_job_result *r);

typedef struct dsb_dispatcher dsb_dispatcher;
struct dsb_dispatcher {
    const char *name;
    /* The dispatcher's limits for a request on model m (K, B, work, one-block
     * fit for GPU dispatchers): DSB_WR_NONE or DSB_WR_TOO_LARGE. */
    dsb_wire_reason (*check)(dsb_dispatcher *d, const dsb_wire_solve *req, const dsb_model *m);
    /* Takes a copy of the job: 0 queued, -1 the queue is full (the caller
     * answers OVERLOADED and keeps the job). */
    int (*submit)(dsb_dispatcher *d, const dsb_job *job);
    size_t (*depth)(dsb_dispatcher *d);
    /* Finishes the queued jobs (answering each), stops the workers and frees. */
    void (*destroy)(dsb_dispatcher *d);
    uint32_t gpu_workers; /* persistent GPU worker blocks (proxy); 0 for the others */
};

typedef struct {
    uint32_t workers;   /* solver threads; 0 = online cores */
    uint32_t queue_cap; /* bounded queue; default 4096 (the paper's C) */
    uint32_t max_replicas; /* default 256 */
    uint32_t max_steps;    /* default 100000 */
    uint64_t max_work;     /* B * K * n * n_p; default 2^32 (about a second on one core) */
    /* Also refuse (OVERLOADED) when the expected queue wait, jobs ahead x
     * smoothed solve time / workers, exceeds this; 0 = count bound only.
     * Keeps every answer inside a client's drain window on a slow executor. */
    uint64_t max_wait_ns;
} dsb_cpu_dispatch_config;

int dsb_dispatch_cpu_create(const dsb_cpu_dispatch_config *c, dsb_reply_fn fn, void *ctx,
                            dsb_dispatcher **out, cm_err *err);

/* The launch-per-request dispatcher (Sec. V-A): one polling thread moves
 * queued jobs onto S_t CUDA streams (H2D field, one-block launch, D2H reply,
 * event) and answers each when its event completes.  Requests must fit one
 * block (Eq. 6). */
typedef struct {
    uint32_t streams;    /* S_t, default 4 (the paper's) */
    uint32_t queue_cap;  /* default 4096 */
    uint32_t max_steps;  /* default 100000 */
    uint32_t max_models; /* device copies kept, default 64 */
    int sums;            /* dsb_gpu_sums (default auto) */
} dsb_launch_dispatch_config;

int dsb_dispatch_launch_create(const dsb_launch_dispatch_config *c, dsb_reply_fn fn, void *ctx,
                               dsb_dispatcher **out, cm_err *err);

/* ---- counters -------------------------------------------------------------- */

typedef enum {
    DSB_C_RX_FRAMES = 0,
    DSB_C_RX_BYTES,
    DSB_C_TX_FRAMES,
    DSB_C_TX_FAILED,        /* replies the transport did not take */
    DSB_C_LOAD_FRAGS,       /* valid LOAD fragments */
    DSB_C_LOAD_DUPLICATES,
    DSB_C_LOAD_COMPLETED,   /* generations completed */
    DSB_C_LOAD_REACKS,      /* acks re-sent after completion */
    DSB_C_LOAD_REJECTED,    /* answered with an error LOAD_ACK */
    DSB_C_SOLVE_RX,         /* SOLVE frames (valid or not) */
    DSB_C_SOLVE_QUEUED,
    DSB_C_SOLVE_OK,         /* RESULT OK sent */
    DSB_C_SOLVE_FAILED,     /* solver error, RESULT INTERNAL */
    DSB_C_SOLVE_REJECTED,   /* RESULT with a request error status */
    DSB_C_OVERLOADED,       /* RESULT OVERLOADED: queue full */
    DSB_C_BAD_FRAMES,       /* all malformed or refused frames (by reason below) */
    DSB_C_UNANSWERED,       /* of those, too broken to answer (counted only) */
    DSB_C_KERNEL_DROPS,     /* socket queue overflow seen by the kernel */
    DSB_C_NOT_FOR_US,       /* packet: other MAC / own outgoing */
    DSB_C_LOAD_DEFERRED,    /* gpu: fragment of a third generation while the old one is in
                               use; dropped, the client retransmits */
    DSB_C_ABANDONED,        /* gpu: requests in flight when the server stopped */
    DSB_C_COUNT
} dsb_counter_id;

typedef struct {
    uint64_t c[DSB_C_COUNT];
    uint64_t bad[DSB_WR_COUNT];
    uint64_t status[DSB_ST_COUNT]; /* replies sent by status (RESULT and LOAD_ACK) */
    uint64_t queue_depth;
} dsb_counters;

const char *dsb_counter_name(dsb_counter_id id);
/* One line "name=value ..." (non-zero reasons only) to f. */
void dsb_counters_print(FILE *f, const char *prefix, const dsb_counters *c);

/* ---- the server ------------------------------------------------------------ */

/* The CPU-proxied persistent-kernel dispatcher (Sec. V-B): one CPU thread
 * forwards each request into the host-mapped work ring of a persistent worker
 * pipeline (dsb/pipeline.h, placement host) and drains its host-mapped reply
 * ring.  Requests must fit one block beside the workers' area at S. */
typedef struct {
    uint32_t queue_cap;  /* default 4096 */
    uint32_t max_steps;  /* default 100000 */
    uint32_t smem_bytes; /* S of every worker; 0 = the pipeline's default (48 KiB) */
    int sums;            /* dsb_gpu_sums of the workers (default auto) */
    uint32_t max_workers; /* persistent workers; 0 = all that fit (two per SM at 48 KiB) less the
                             dispatcher's reserved slot; more than that is reduced to it */
} dsb_proxy_dispatch_config;

int dsb_dispatch_proxy_create(const dsb_proxy_dispatch_config *c, dsb_reply_fn fn, void *ctx,
                              dsb_dispatcher **out, cm_err *err);

typedef struct {
    dsb_transport_config transport;
    const char *dispatch;          /* "cpu", "launch", "proxy" or "gpu" */
    dsb_cpu_dispatch_config cpu;
    dsb_launch_dispatch_config launch;
    dsb_proxy_dispatch_config proxy;
    /* gpu: the GPU-resident server (Sec. V-C): receive and transmit agents on
     * the GPU around the persistent workers, a NIC stand-in on the host
     * (dsb/resident.h, dsb/nic.h); the CPU only moves frames */
    dsb_resident_config gpu;
    uint32_t rx_batch;             /* frames per recvmmsg, <= 64; default 32 */
} dsb_server_config;

typedef struct dsb_server dsb_server;

int dsb_server_create(const dsb_server_config *c, dsb_server **out, cm_err *err);
/* Runs the receive loop until dsb_server_stop; returns 0, or -1 on a
 * transport error. */
int dsb_server_run(dsb_server *s, cm_err *err);
/* Async-signal-safe. */
void dsb_server_stop(dsb_server *s);
/* Snapshot of the counters (any thread). */
void dsb_server_counters(dsb_server *s, dsb_counters *out);
/* --dispatch gpu: the NIC stand-in's counters and busy times (final after
 * shutdown); -1 for the other dispatchers. */
int dsb_server_nic_stats(dsb_server *s, dsb_nic_stats *out);
/* Persistent GPU worker blocks of the proxy and gpu dispatchers (0 for cpu and launch). */
uint32_t dsb_server_gpu_workers(dsb_server *s);
/* Local UDP port (for servers bound to port 0). */
uint16_t dsb_server_port(dsb_server *s);
const uint8_t *dsb_server_mac(dsb_server *s);
/* Stops the receive thread and the dispatcher (which answers the jobs still
 * queued); the counters stay readable until destroy. */
void dsb_server_shutdown(dsb_server *s);
/* Shuts down if not yet done and frees everything. */
void dsb_server_destroy(dsb_server *s);

/* Runs dsb_server_run in a new thread (tests, in-process benchmarks). */
int dsb_server_start_thread(dsb_server *s, cm_err *err);
void dsb_server_join_thread(dsb_server *s);

#endif
