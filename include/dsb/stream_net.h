/* The streaming solver's network source (seed 000, Sec. VIII-B): a generator
 * sends the STREAM frames of each pass over one or more queues (sockets of a
 * dsb transport: UDP, or raw Ethernet frames), each queue closes the pass
 * with a PASS_END, and the receiver answers the pass with a STREAM_ACK
 * (include/dsb/wire.h): NEXT when it consumed every frame, DONE after the
 * final pass, RESEND when frames are missing.  The paper's receiver had no
 * retransmission (its runs lost no bursts); here a pass with a lost frame is
 * discarded and sent again, so a lossy path costs time, never a wrong answer.
 * The generator learns nothing but the acknowledgements: the receiver decides
 * how many passes the run has (K + 1).
 *
 * Receiver: one thread, or `recv_threads` threads (udp) sharing the one
 * socket (`recv_mode` shared) or each with a socket of its own on the same
 * port (SO_REUSEPORT; the kernel spreads the generator's queues over them by
 * their flow hash, or, `queue`, queue q to socket q mod N by a classic BPF
 * program), take datagrams in batches (recvmmsg), check each frame (wire check,
 * run id, and that it is not a duplicate of a frame taken in this attempt:
 * a bitmap of the pass here, or the sink's own ring) and hand it to a sink
 * (dsb/stream.h): the CPU state, consumed for every replica on the receiving
 * thread (dsb_stream_accumulate); a ring consumed by a CPU thread
 * (include/dsb/stream_ring.h); or the GPU (a ring of chunks of pinned host
 * memory that the GPU consumes as each chunk is whole, or a whole pass:
 * include/dsb/stream_gpu.h).  With sockets of their own and a ring sink, the
 * threads receive the frames they expect next (each queue's frames come in
 * order, Q apart) straight into their places in the ring (reserve, receive,
 * check, commit; a datagram that is not the frame expected is copied out and
 * put as usual).  Generator: `queues` sockets (flows: each its own source
 * port) driven by `send_threads` threads, queue q sending the
 * frames f = q, q + Q, ... of the pass in column-block-major order, at an
 * optional payload rate cap that a RESEND lowers and clean passes raise again
 * (dsb_stream_rate_policy below). */
#ifndef DSB_STREAM_NET_H
#define DSB_STREAM_NET_H

#include <stdint.h>

#include "common/error.h"
#include "dsb/stream.h"
#include "dsb/transport.h"
#include "dsb/wire.h"

#define DSB_STREAM_MAX_QUEUES 64u
#define DSB_STREAM_DEFAULT_PORT 9401u /* the request service uses 9400 */
#define DSB_STREAM_MAX_RECV_THREADS 16u

/* How the receiving threads take datagrams (udp): all from one socket, or
 * each from a socket of its own in the port's SO_REUSEPORT group, the kernel
 * spreading the flows (the generator's queues: one socket and source port
 * each) by their hash, or by the queue field of the frames (queue q to
 * thread q mod N: even when Q is a multiple of N). */
typedef enum {
    DSB_STREAM_RECV_SHARED = 0,
    DSB_STREAM_RECV_HASH = 1,
    DSB_STREAM_RECV_QUEUE = 2
} dsb_stream_recv_mode;
const char *dsb_stream_recv_mode_name(dsb_stream_recv_mode m);
/* "shared" | "hash" | "queue"; -1 for anything else */
int dsb_stream_recv_mode_parse(const char *s);

/* The generator's rate cap, per attempt (additive increase, multiplicative
 * decrease, as TCP's congestion control, with the pass as the unit: an
 * attempt's one signal is whether the receiver asked for it again).  After a
 * RESEND the cap becomes `down` times the rate of the attempt that failed (its
 * cap, or its measured rate when lower or uncapped): F, the rate that last
 * failed.  After a clean attempt at the policy's cap the cap rises by
 * `up` x F, but first only up to the plateau F - up x F, where it stays for
 * `hold` clean passes before it tries F itself (then above F by the same
 * steps); `hold` doubles after every RESEND of an attempt that ran at the
 * policy's cap (the receiver's capacity lies below that rate) and is reset
 * when such a cap passes clean at or above F.  Once the cap reaches the
 * highest rate an attempt reached without the policy's cap (the sender's own
 * rate: `top`), the cap goes (pace 0): the next attempt runs free again (or at the
 * user's cap, `limit`, above which the policy never goes).  With `pace`
 * the cap stays instead, at `top`: the sender keeps pacing its batches at the
 * rate it reached free rather than bursting (a paced attempt at a given
 * average rate loses less often than a free one: NOTES-stream.md).  up = 0:
 * never raised (the ladder only falls, the older generator's); hold = 0: plain
 * AIMD (F itself tried right after the plateau). */
typedef struct {
    double down;    /* (0, 1): the cap after a RESEND, a fraction of F (0.5) */
    double up;      /* [0, 1]: a clean pass at a cap raises it by up x F (0.125) */
    uint32_t hold;  /* clean passes at the plateau before F is tried again (8) */
    int pace;       /* 1 (default): once the climb reaches `top`, the cap stays there (paced), 0: it goes */
} dsb_stream_rate_policy;

typedef struct {
    double limit;   /* the user's cap (0: none); the policy's cap stays below it */
    double cap;     /* the cap of the next attempt, Gb/s of payload (0: none) */
    double failed;  /* F: the rate of the attempt that last failed (0: none yet) */
    double top;     /* the highest rate of an attempt without the policy's cap */
    uint32_t held;  /* clean passes at the plateau so far */
    uint32_t wait;  /* the plateau's hold now: `hold`, doubled after RESENDs at a cap */
    int own;        /* the cap is the policy's (else the user's `limit`, or none) */
    int kept;       /* pace: the cap is held at `top`, no longer raised */
    uint64_t increases, decreases, removals; /* of the policy's cap */
    double lowest;  /* the lowest cap the policy set (0: none) */
} dsb_stream_rate_state;

#define DSB_STREAM_RATE_FLOOR 0.01 /* Gb/s: the lowest cap */
/* the values a policy may take (dsb_stream_rate_policy_check, dsb stream-send's flags) */
#define DSB_STREAM_RATE_DOWN_MIN 0.05
#define DSB_STREAM_RATE_DOWN_MAX 0.95
#define DSB_STREAM_RATE_UP_MAX 1.0
#define DSB_STREAM_RATE_HOLD_MAX 1000u

void dsb_stream_rate_policy_default(dsb_stream_rate_policy *p);
/* NULL, or what is wrong with the policy's values (a sentence) */
const char *dsb_stream_rate_policy_check(const dsb_stream_rate_policy *p);
/* A run's start: the first attempt at `limit_gbps` (0: uncapped). */
void dsb_stream_rate_start(dsb_stream_rate_state *s, double limit_gbps);
/* An attempt ended: `lost` when the receiver asked for it again, `gbps` the
 * payload rate it was sent at.  Returns the cap of the next attempt, s->cap (0: none). */
double dsb_stream_rate_update(const dsb_stream_rate_policy *p, dsb_stream_rate_state *s,
                              int lost, double gbps);

/* One attempt of the generator, as sent (dsb_stream_net_opts.on_attempt). */
typedef struct {
    uint32_t pass, attempt;
    uint64_t frames;     /* frames the transport took */
    double seconds;      /* first frame to the last */
    double gbps;         /* payload rate */
    double cap_gbps;     /* the cap it ran at (0: none) */
    int resend;          /* the receiver asked for it again */
    uint32_t end_resends; /* times its PASS_ENDs went out again before the answer came */
    double answer_s;     /* its PASS_ENDs' first sending to the answer */
} dsb_stream_send_attempt;

/* The generator's wait for an answer (STREAM_ACK) before it sends its
 * PASS_ENDs again: after `resent` sendings again so far, with `answer_s` the
 * time the latest answer took (0: none yet).  The first wait is twice that,
 * within [DSB_STREAM_ACK_WAIT_MIN_S, DSB_STREAM_ACK_WAIT_MAX_S]; each one
 * after doubles, up to the maximum.  A pure function (the loopback test checks
 * the schedule); anything not a positive time counts as none. */
#define DSB_STREAM_ACK_WAIT_MIN_S 0.02
#define DSB_STREAM_ACK_WAIT_MAX_S 0.5
double dsb_stream_ack_wait(double answer_s, uint32_t resent);

typedef struct {
    dsb_transport_config tc; /* receiver: bind address and port (or interface);
                                generator: the receiver's address and port */
    double idle_s;           /* receiver: after the final answer, answers late PASS_ENDs for
                                this long (default 1) */
    double timeout_s;        /* give up after this long without a datagram (receiver) or an
                                answer (generator) (default 30) */
    uint32_t queues;         /* generator: sockets and threads, 1 .. 64 (1) */
    uint32_t recv_threads;   /* receiver: threads taking datagrams from the socket, 1 .. 16
                                (0 = 1); more than one needs udp and a concurrent sink */
    uint32_t recv_mode;      /* receiver: dsb_stream_recv_mode (shared; hash and queue: udp) */
    int recv_copy;           /* receiver: never receive straight into the sink's ring (a
                                socket a thread only: the shared socket always copies) */
    uint32_t send_threads;   /* generator: threads driving the queues, 1 .. queues (0 = one a
                                queue); thread t sends queues t, t + threads, ... in turn */
    double rate_gbps;        /* generator: payload rate cap over all queues, 0 = none */
    dsb_stream_rate_policy rate; /* generator: how RESENDs and clean passes move the cap */
    /* generator: called after each attempt's answer (may be NULL) */
    void (*on_attempt)(const dsb_stream_send_attempt *a, void *ctx);
    void *attempt_ctx;
    /* generator test hooks (1-based, 0 = off), on the first attempt of pass hook_pass: */
    uint32_t hook_pass;
    uint64_t drop_frame;     /* frame f + 1 of the pass is not sent */
    uint64_t corrupt_frame;  /* frame f + 1 is sent with a non-zero reserved header byte */
    uint32_t drop_pass_ends; /* the first N sendings of the attempt's PASS_ENDs (all queues')
                                are not sent, as if lost on the way (0 = off) */
    /* receiver test hook: its first N answers to PASS_ENDs of pass hook_pass are not sent,
       as if lost on the way (counted in acks all the same; 0 = off) */
    uint32_t drop_acks;
} dsb_stream_net_opts;

typedef struct {
    uint64_t datagrams;      /* receiver: taken from the transport */
    uint64_t frames;         /* receiver: distinct good frames consumed (all attempts);
                                generator: STREAM frames sent */
    uint64_t duplicates;     /* receiver: good frames already consumed in the attempt */
    uint64_t stale;          /* receiver: frames and ends of an earlier pass */
    uint64_t bad;            /* receiver: rejected frames, all reasons */
    uint64_t ring_full;      /* receiver: good frames the sink's ring had no room for (their
                                chunk too far ahead of one not yet whole); not taken, so their
                                attempt was sent again */
    uint64_t bad_reason[DSB_WR_COUNT];
    uint64_t resends;        /* attempts that were discarded and sent again */
    uint64_t missing;        /* receiver: frames those attempts lacked, in all */
    uint64_t not_sent;       /* receiver: of those, frames the generator's PASS_ENDs did not
                                count (the rest were lost on the way) */
    uint64_t acks;           /* receiver: STREAM_ACKs sent; generator: received */
    uint64_t end_resends;    /* generator: times its PASS_ENDs went out again (all queues'
                                each time) for want of an answer (dsb_stream_ack_wait);
                                receiver: PASS_ENDs that came again (a queue's end already in:
                                ignored; or of an attempt already answered: answered again,
                                and counted stale too) */
    uint64_t unsent;         /* generator: frames the transport did not take (a send error,
                                e.g. ECONNREFUSED while no receiver is bound); left out of
                                the PASS_ENDs' counts, so the receiver counts them not sent */
    uint64_t kernel_drops;   /* receiver: datagrams the socket queue dropped */
    double final_rate_gbps;  /* generator: the rate cap of the last attempt (0 = none) */
    uint64_t rate_increases; /* generator: clean passes that raised the cap */
    uint64_t rate_removals;  /* generator: times the cap went (back at the rate seen free) */
    double lowest_rate_gbps; /* generator: the lowest cap a RESEND set (0 = none) */
    double top_rate_gbps;    /* generator: the highest rate of an attempt free of the
                                policy's cap (of those before the last) */
    uint16_t port;           /* receiver: the bound port (useful with port 0) */
    uint32_t threads;        /* receiver: receiving threads */
    double seconds;          /* receiver: the run's first frame to the final answer (every
                                attempt, the sink's work between passes included) */
    uint64_t direct;         /* receiver: of `frames`, received straight into their places
                                in the sink's ring (no copy) */
    uint64_t misplaced;      /* receiver: datagrams received into a ring place reserved for
                                another frame (copied out, then handled as usual) */
    uint64_t thread_datagrams[DSB_STREAM_MAX_RECV_THREADS]; /* receiver: datagrams a thread */
    uint64_t rcvbuf_bytes;   /* receiver: a socket's receive buffer as the kernel set it
                                (SO_RCVBUF: the bytes asked for doubled, or capped by
                                net.core.rmem_max without CAP_NET_ADMIN) */
} dsb_stream_net_stats;

void dsb_stream_net_opts_default(dsb_stream_net_opts *o);

/* Receives a whole run (K + 1 passes) over the transport, calling on_pass
 * after each pass like dsb_stream_run_cpu; the record's seconds run from the
 * first datagram of the pass's successful attempt to its last.  `ready`
 * (may be NULL) is called once the socket is bound, with the stats (port).
 * Returns 0, or -1 with a message (transport error, timeout). */
int dsb_stream_recv(const dsb_stream_params *p, const dsb_stream_net_opts *o, int progress,
                    dsb_stream_pass_fn on_pass, void *ctx,
                    void (*ready)(const dsb_stream_net_stats *st, void *ctx),
                    dsb_stream_net_stats *st, cm_err *err);

/* The same, with the frames going to `sink` (dsb/stream.h) instead of a CPU
 * state of its own: dsb_stream_gpu_sink puts them on the GPU.  A sink that
 * fails to end a pass stops the run with its message (that pass unanswered). */
int dsb_stream_recv_sink(const dsb_stream_params *p, const dsb_stream_net_opts *o,
                         const dsb_stream_sink *sink, int progress, dsb_stream_pass_fn on_pass,
                         void *ctx, void (*ready)(const dsb_stream_net_stats *st, void *ctx),
                         dsb_stream_net_stats *st, cm_err *err);
/* Sends passes (n, instance, seed of p; p->updates is not used) until the
 * receiver answers DONE.  Returns 0, or -1 with a message. */
int dsb_stream_send(const dsb_stream_params *p, const dsb_stream_net_opts *o, int progress,
                    dsb_stream_net_stats *st, cm_err *err);

#endif
