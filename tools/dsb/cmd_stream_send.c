/* `dsb stream-send`: the streaming solver's generator (seed 000, Sec. VIII-B).
 * Sends the STREAM frames of a Mattis or random matrix pass after pass to a
 * `dsb stream --source udp|packet` receiver, over one or more queues, until
 * the receiver says the run is done; sends a pass again when the receiver
 * asks (frames lost), at half the rate.  The queues (sockets, flows) may be
 * driven by fewer threads (--send-threads). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "common/args.h"
#include "common/bench.h"
#include "dsb/stream_net.h"

static const char *P = "dsb stream-send";

static void usage(FILE *o)
{
    fprintf(o,
            "usage: dsb stream-send [options]\n"
            "  --server ADDR        the receiver (udp: a numeric address, default 127.0.0.1)\n"
            "  --port P             its port (default 9401)\n"
            "  --transport udp|packet  (default udp); packet: --iface IF, --mac M,\n"
            "                       --server-mac M (raw frames, needs CAP_NET_RAW)\n"
            "  --n N                variables, as the receiver's (default 10000)\n"
            "  --instance I         mattis | random, as the receiver's (default mattis)\n"
            "  --seed S             as the receiver's (default 42)\n"
            "  --file F             send a stream file's frames (dsb stream-write) instead\n"
            "  --queues Q           sockets sending in parallel, 1 .. 64 (1): each a flow of\n"
            "                       its own (source port), which a receiver with --recv-mode\n"
            "                       hash|queue spreads over its threads\n"
            "  --send-threads N     threads driving the queues, 1 .. Q (default Q); thread t\n"
            "                       sends queues t, t + N, ... a batch each in turn\n"
            "  --rate GBPS          cap on the payload rate in Gb/s over all queues (none)\n"
            "  --timeout S          give up after S s without an answer (30)\n"
            "  --quiet              no line a pass on stderr\n"
            "A receiver refuses frames of another n, instance, seed or file (they carry a run\n"
            "id).\n");
}

int cmd_stream_send(int argc, char **argv)
{
    dsb_stream_params p;
    dsb_stream_params_default(&p);
    dsb_stream_net_opts o;
    dsb_stream_net_opts_default(&o);
    o.tc.peer_addr = "127.0.0.1";
    o.tc.peer_port = DSB_STREAM_DEFAULT_PORT;
    int quiet = 0;
    stream_matrix sm = {&p, NULL, 0, 0, 0, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int tf;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--quiet")) {
            quiet = 1;
            continue;
        }
        if (!(a[0] == '-' && a[1] == '-')) {
            fprintf(stderr, "%s: unexpected argument '%s' (see dsb stream-send --help)\n", P, a);
            return 2;
        }
        if (!(v = arg_value(P, argc, argv, &i))) return 2;
        if ((tf = stream_matrix_flag(P, a, v, &sm)) != 0) {
            if (tf < 0) return 2;
        } else if (arg_is(a, "--queues")) {
            if (arg_u32(P, "--queues", v, 1, DSB_STREAM_MAX_QUEUES, &o.queues)) return 2;
        } else if (arg_is(a, "--send-threads")) {
            if (arg_u32(P, "--send-threads", v, 1, DSB_STREAM_MAX_QUEUES, &o.send_threads))
                return 2;
        } else if (arg_is(a, "--rate")) {
            if (arg_f64(P, "--rate", v, 0.001, 1e6, &o.rate_gbps)) return 2;
        } else if (arg_is(a, "--timeout")) {
            if (arg_f64(P, "--timeout", v, 0.1, 86400.0, &o.timeout_s)) return 2;
        } else if ((tf = transport_flag(P, a, v, &o.tc, 1)) != 0) {
            if (tf < 0) return 2;
        } else {
            fprintf(stderr, "%s: unknown option '%s' (see dsb stream-send --help)\n", P, a);
            return 2;
        }
    }
    if (sm.run_id_set) {
        fprintf(stderr, "%s: --run-id: a receiver's flag (the generator's frames carry their own)\n",
                P);
        return 2;
    }
    if (o.send_threads > o.queues) {
        fprintf(stderr, "%s: --send-threads: %u threads for %u queues: expected at most --queues "
                        "(a thread drives one or more queues)\n", P, o.send_threads, o.queues);
        return 2;
    }
    int mf = stream_matrix_finish(P, &sm);
    if (mf) return mf;
    if (!quiet)
        fprintf(stderr, "%s: %s n = %u, run id %08x\n", P, dsb_stream_instance_name(p.instance),
                p.n, dsb_stream_params_run_id(&p));
    cm_err err = {{0}};
    dsb_stream_net_stats st;
    double t0 = bench_now_s();
    int rc = dsb_stream_send(&p, &o, !quiet, &st, &err);
    double s = bench_now_s() - t0;
    if (rc) fprintf(stderr, "%s: %s\n", P, err.msg);
    printf("# sent %" PRIu64 " frames in %.3f s (%.2f Gb/s of payload), %" PRIu64
           " passes sent again, %" PRIu64 " answers%s\n",
           st.frames, s, s > 0 ? 8.0 * (double)st.frames * DSB_STREAM_PAYLOAD / s / 1e9 : 0.0,
           st.resends, st.acks, rc ? "; FAILED" : "");
    if (st.final_rate_gbps > 0) printf("# rate cap at the end: %.3f Gb/s\n", st.final_rate_gbps);
    if (st.unsent)
        printf("# %" PRIu64 " frames the socket did not take (send errors: is the receiver "
               "bound?); the receiver counts them not sent\n", st.unsent);
    return rc ? 1 : 0;
}
