/* `dsb stream-send`: the streaming solver's generator (seed 000, Sec. VIII-B).
 * Sends the STREAM frames of a Mattis or random matrix pass after pass to a
 * `dsb stream --source udp|packet` receiver, over one or more queues, until
 * the receiver says the run is done; sends a pass again when the receiver
 * asks (frames lost), at a lower rate cap, which clean passes raise again
 * (--rate-down, --rate-up, --rate-hold: dsb_stream_rate_policy).  The queues
 * (sockets, flows) may be driven by fewer threads (--send-threads). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "common/args.h"
#include "common/bench.h"
#include "common/json.h"
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
            "  --rate-down F        after a pass sent again the cap is F x the rate that\n"
            "                       failed, 0.05 .. 0.95 (0.5)\n"
            "  --rate-up F          a clean pass at a cap raises it by F x the rate that last\n"
            "                       failed, 0 .. 1 (0.125; 0: never raised), up to the rate\n"
            "                       sent without it (or --rate)\n"
            "  --rate-hold N        clean passes one step below the rate that last failed\n"
            "                       before trying it again, 0 .. 1000 (8); doubled after each\n"
            "                       resend at a cap\n"
            "  --rate-pace 0|1      1 (default): once the cap is back at the rate sent without\n"
            "                       it, it stays there (the sender paced); 0: it goes\n"
            "  --timeout S          give up after S s without an answer (30)\n"
            "  --json FILE          write the run, its rate policy and every attempt (pass,\n"
            "                       cap, rate, sent again or not) as one JSON object\n"
            "  --quiet              no line a pass on stderr\n"
            "A receiver refuses frames of another n, instance, seed or file (they carry a run\n"
            "id).\n");
}

/* The attempts as sent (dsb_stream_net_opts.on_attempt), for --json. */
typedef struct {
    dsb_stream_send_attempt *a;
    size_t count, cap;
} attempts;

static void keep_attempt(const dsb_stream_send_attempt *a, void *ctx)
{
    attempts *k = ctx;
    if (k->count == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 64;
        dsb_stream_send_attempt *grown = realloc(k->a, cap * sizeof *grown);
        if (!grown) return; /* the JSON then lacks the later attempts */
        k->a = grown;
        k->cap = cap;
    }
    k->a[k->count++] = *a;
}

static void write_json(FILE *f, const dsb_stream_params *p, const dsb_stream_net_opts *o,
                       const dsb_stream_net_stats *st, const attempts *k, double seconds, int rc,
                       const char *error)
{
    json_w w;
    json_init(&w, f);
    json_obj_begin(&w);
    json_kv_str(&w, "tool", "dsb stream-send");
    bench_json_machine(&w);
    json_kv_str(&w, "instance", dsb_stream_instance_name(p->instance));
    json_kv_u64(&w, "n", p->n);
    json_kv_u64(&w, "seed", p->seed);
    json_kv_u64(&w, "queues", o->queues);
    json_kv_u64(&w, "send_threads", o->send_threads ? o->send_threads : o->queues);
    json_kv_f64(&w, "rate_limit_gbps", o->rate_gbps);
    json_kv_f64(&w, "rate_down", o->rate.down);
    json_kv_f64(&w, "rate_up", o->rate.up);
    json_kv_u64(&w, "rate_hold", o->rate.hold);
    json_kv_u64(&w, "rate_pace", (uint64_t)o->rate.pace);
    json_kv_bool(&w, "ok", rc == 0);
    if (rc) json_kv_str(&w, "error", error);
    json_kv_u64(&w, "frames", st->frames);
    json_kv_f64(&w, "seconds", seconds);
    json_kv_f64(&w, "payload_gbps", dsb_stream_payload_gbps(st->frames, seconds));
    json_kv_u64(&w, "resends", st->resends);
    json_kv_u64(&w, "answers", st->acks);
    json_kv_u64(&w, "pass_end_resends", st->end_resends);
    json_kv_u64(&w, "unsent", st->unsent);
    json_kv_u64(&w, "rate_increases", st->rate_increases);
    json_kv_u64(&w, "rate_removals", st->rate_removals);
    json_kv_f64(&w, "lowest_rate_gbps", st->lowest_rate_gbps);
    json_kv_f64(&w, "top_rate_gbps", st->top_rate_gbps);
    json_kv_f64(&w, "final_rate_gbps", st->final_rate_gbps);
    json_key(&w, "attempts");
    json_arr_begin(&w);
    for (size_t i = 0; i < k->count; i++) {
        const dsb_stream_send_attempt *a = &k->a[i];
        json_obj_begin(&w);
        json_kv_u64(&w, "pass", a->pass);
        json_kv_u64(&w, "attempt", a->attempt);
        json_kv_u64(&w, "frames", a->frames);
        json_kv_f64(&w, "seconds", a->seconds);
        json_kv_f64(&w, "gbps", a->gbps);
        json_kv_f64(&w, "cap_gbps", a->cap_gbps);
        json_kv_bool(&w, "resend", a->resend);
        json_kv_u64(&w, "pass_end_resends", a->end_resends);
        json_kv_f64(&w, "answer_s", a->answer_s);
        json_obj_end(&w);
    }
    json_arr_end(&w);
    json_obj_end(&w);
    fputc('\n', f);
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
    const char *json_path = NULL;
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
        } else if (arg_is(a, "--rate-down")) {
            if (arg_f64(P, "--rate-down", v, DSB_STREAM_RATE_DOWN_MIN, DSB_STREAM_RATE_DOWN_MAX,
                        &o.rate.down))
                return 2;
        } else if (arg_is(a, "--rate-up")) {
            if (arg_f64(P, "--rate-up", v, 0, DSB_STREAM_RATE_UP_MAX, &o.rate.up)) return 2;
        } else if (arg_is(a, "--rate-hold")) {
            if (arg_u32(P, "--rate-hold", v, 0, DSB_STREAM_RATE_HOLD_MAX, &o.rate.hold)) return 2;
        } else if (arg_is(a, "--rate-pace")) {
            uint32_t pace;
            if (arg_u32(P, "--rate-pace", v, 0, 1, &pace)) return 2;
            o.rate.pace = (int)pace;
        } else if (arg_is(a, "--json")) {
            json_path = v;
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
    FILE *jf = NULL;
    if (json_path && !(jf = fopen(json_path, "w"))) {
        fprintf(stderr, "%s: --json: cannot open '%s' for writing\n", P, json_path);
        return 1;
    }
    attempts k = {NULL, 0, 0};
    o.on_attempt = keep_attempt;
    o.attempt_ctx = &k;
    cm_err err = {{0}};
    dsb_stream_net_stats st;
    double t0 = bench_now_s();
    int rc = dsb_stream_send(&p, &o, !quiet, &st, &err);
    double s = bench_now_s() - t0;
    if (rc) fprintf(stderr, "%s: %s\n", P, err.msg);
    if (jf) {
        write_json(jf, &p, &o, &st, &k, s, rc, err.msg);
        fclose(jf);
    }
    free(k.a);
    printf("# sent %" PRIu64 " frames in %.3f s (%.2f Gb/s of payload), %" PRIu64
           " passes sent again, %" PRIu64 " answers, PASS_ENDs sent again %" PRIu64 " times%s\n",
           st.frames, s, dsb_stream_payload_gbps(st.frames, s),
           st.resends, st.acks, st.end_resends, rc ? "; FAILED" : "");
    if (st.resends || st.final_rate_gbps > 0)
        printf("# rate cap: %.3f Gb/s at the end (0: none), lowest %.3f; raised %" PRIu64
               " times, removed %" PRIu64 " times; the fastest attempt free of it %.2f Gb/s\n",
               st.final_rate_gbps, st.lowest_rate_gbps, st.rate_increases, st.rate_removals,
               st.top_rate_gbps);
    if (st.unsent)
        printf("# %" PRIu64 " frames the socket did not take (send errors: is the receiver "
               "bound?); the receiver counts them not sent\n", st.unsent);
    return rc ? 1 : 0;
}
