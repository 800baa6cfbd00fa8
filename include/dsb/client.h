/* The dsb service client (seed 000, Sec. VI-C): model upload with
 * retransmission, single requests, and the load generator (closed loop with a
 * window of outstanding requests, or open loop with Poisson arrivals), with
 * RTT percentiles, the server residence split, loss after a drain, energy
 * recomputation and a CPU-reference check of the first results. */
#ifndef DSB_CLIENT_H
#define DSB_CLIENT_H

#include <stdint.h>
#include <stdio.h>

#include "common/error.h"
#include "common/json.h"
#include "dsb/model.h"
#include "dsb/transport.h"
#include "dsb/wire.h"

typedef struct dsb_client dsb_client;

int dsb_client_open(const dsb_transport_config *tc, dsb_client **out, cm_err *err);
void dsb_client_close(dsb_client *c);
dsb_transport *dsb_client_transport(dsb_client *c);

/* Test hooks for the upload: on the first pass skip every k-th fragment
 * (0 = none), send the fragments in a shuffled order, send each twice. */
typedef struct {
    uint32_t drop_every;
    int shuffle;
    int duplicate;
    double ack_timeout_s; /* per pass; default 0.2 */
    uint32_t max_passes;  /* default 20 */
} dsb_upload_opts;

typedef struct {
    uint32_t generation;  /* the generation that completed */
    uint32_t passes;      /* transmissions of the fragment set */
    uint32_t frags_sent;
    double seconds;
} dsb_upload_report;

/* Uploads m to slot model_id as `generation` (0: pick one newer than the
 * slot's, from the clock, retrying past a stale answer).  Waits for the
 * LOAD_ACK, retransmitting the fragments on timeout. */
int dsb_client_upload(dsb_client *c, const dsb_model *m, uint16_t model_id, uint32_t generation,
                      const dsb_upload_opts *opts, dsb_upload_report *rep, cm_err *err);

typedef struct {
    uint16_t model_id;
    uint32_t n;
    uint32_t generation; /* 0 = current */
    uint32_t steps, replicas;
    float dt, xi;        /* xi 0 = the model's default */
} dsb_req_params;

/* One decoded reply. */
typedef struct {
    dsb_wire_result hdr;
    uint32_t spins[DSB_WIRE_MAX_N / 32];
} dsb_reply;

/* Sends one SOLVE (h may be NULL) and waits up to timeout_s for its RESULT. */
int dsb_client_solve(dsb_client *c, const dsb_req_params *p, uint32_t request_id, uint64_t seed,
                     const int16_t *h, double timeout_s, dsb_reply *out, cm_err *err);

typedef struct {
    dsb_req_params req;
    uint64_t seed_base;     /* request i uses seed_base + i (7919) */
    uint32_t outstanding;   /* closed loop window; 0 = open loop */
    double rate;            /* open loop: offered requests per second */
    uint64_t requests;      /* measured requests */
    uint64_t warmup;        /* discarded first requests (1000) */
    double drain_s;         /* wait after the last send (2.0) */
    uint32_t energy_checks; /* recompute 2E for replies with index below (3000) */
    uint32_t ref_checks;    /* CPU reference solve for index below (20) */
    uint64_t arrival_seed;  /* Poisson arrivals */
    const int16_t *fields;  /* n_fields x n; request i uses field i mod n_fields */
    uint32_t n_fields;      /* 0 = no field */
    int progress;           /* progress line on stderr */
} dsb_load_config;

typedef struct {
    uint64_t sent, answered, ok, lost, unexpected, bad_replies;
    uint64_t by_status[DSB_ST_COUNT];
    uint64_t measured_sent, measured_ok;
    double elapsed_s, offered_rate, emitted_rate, achieved_rate;
    /* measured OK replies, microseconds */
    double rtt_p50, rtt_p99, rtt_p999, rtt_mean;
    double queue_p50, queue_p99, solve_p50, solve_p99, tx_p50, tx_p99;
    double res_p50, res_p99, residual_p50, residual_p99;
    uint64_t energy_checked, energy_mismatch, ref_checked, ref_mismatch;
    uint32_t generations_seen[4]; /* distinct generations stamped in replies (first 4) */
    uint32_t n_generations;
    uint64_t kernel_drops;        /* replies the client's socket queue lost */
} dsb_load_report;

/* Runs the load.  m is the model the server holds (for the checks). */
int dsb_client_run(dsb_client *c, const dsb_model *m, const dsb_load_config *lc,
                   dsb_load_report *rep, cm_err *err);

void dsb_load_report_print(FILE *f, const dsb_load_config *lc, const dsb_load_report *r);
void dsb_load_report_json(json_w *w, const dsb_load_config *lc, const dsb_load_report *r);

#endif
