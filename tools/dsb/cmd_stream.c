/* `dsb stream`: the streaming dSB solver (seed 000, Sec. VIII).  Runs K
 * updates over a dense one-bit coupling matrix that is never stored: K + 1
 * passes of frames, one record a pass (energy of the evaluated signs, the
 * checksum after the update), a table on stdout and the records as JSON. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "common/args.h"
#include "common/bench.h"
#include "common/json.h"
#include "dsb/instances.h"
#include "dsb/stream.h"
#include "dsb/stream_gpu.h"
#include "dsb/stream_net.h"
#include "dsb/stream_ring.h"

static const char *P = "dsb stream";

static void usage(FILE *o)
{
    fprintf(o,
            "usage: dsb stream [options]\n"
            "  --n N                variables, 2 .. 16777216; 1e7 style accepted (default 10000)\n"
            "  --instance I         mattis (planted, 2E = -n(n-1)) | random (default mattis)\n"
            "  --replicas B         replicas, 1 .. 32, each frame reused by all (default 8)\n"
            "  --updates K          dSB steps; K + 1 passes over the matrix (default 20)\n"
            "  --dt DT              time step (default 1.1)\n"
            "  --xi XI              coupling gain (default 0.5/sqrt(n))\n"
            "  --seed S             instance and initial states (default 42)\n"
            "  --file F             the matrix from a stream file (dsb stream-write; the\n"
            "                       format in docs/formats.md) instead of --n / --instance\n"
            "  --run-id X           udp/packet: receive a file's frames (with --n; the id that\n"
            "                       dsb stream-send --file prints)\n"
            "  --backend cpu|gpu    (default cpu)\n"
            "  --source gen|host|udp|packet\n"
            "                       gen: frames synthesized where they are consumed (cpu,\n"
            "                       gpu); host: frames in pinned host memory, pulled by the\n"
            "                       GPU with bulk copies (gpu only); udp, packet: frames\n"
            "                       received from `dsb stream-send`, consumed on the CPU or,\n"
            "                       with --backend gpu, by the GPU from pinned host memory\n"
            "                       (--ring)  (default gen)\n"
            "  --bind ADDR --port P udp: where to receive (127.0.0.1, 9401; port 0: any, the\n"
            "                       port chosen is printed on stderr)\n"
            "  --iface IF --mac M   packet: the interface (lo) and this end's MAC\n"
            "  --idle S             udp/packet: after the final pass, answer late PASS_ENDs\n"
            "                       this long (1)\n"
            "  --timeout S          udp/packet: give up after S s without a datagram (30)\n"
            "  --ring SIZE|pass     udp/packet: memory for received frames, 1MiB .. 1TiB.  gpu:\n"
            "                       pinned; a pass that fits is kept whole, else a ring of\n"
            "                       chunks the GPU consumes as each one is whole (64MiB);\n"
            "                       'pass': always the whole pass.  cpu: a ring consumed by a\n"
            "                       thread of its own (default: no ring, the receiving thread\n"
            "                       consumes each frame)\n"
            "  --recv-threads N     udp: threads taking datagrams, 1 .. 16 (1); with --backend\n"
            "                       cpu more than 1 implies a ring\n"
            "  --recv-mode M        udp: shared (the threads share one socket; the default) |\n"
            "                       hash (a socket a thread on the one port, SO_REUSEPORT: the\n"
            "                       kernel spreads the sender's queues by their flow hash) |\n"
            "                       queue (the same, queue q to thread q mod N: give the sender\n"
            "                       a multiple of N queues).  With a ring, hash and queue take\n"
            "                       each queue's next frames straight into their places\n"
            "  --recv-copy          udp, hash|queue: copy every frame into the ring instead\n"
            "  --threads N          cpu, source gen: threads (default: all cores)\n"
            "  --blocks N           gpu worker blocks (default: 2 an SM, or what fits)\n"
            "  --host-bytes SIZE    gpu, host source: pinned frame buffer; a pass that fits is\n"
            "                       built once, else a ring refilled by CPU threads (64MiB)\n"
            "  --host-threads N     gpu, host source: CPU threads building frames (cores - 1)\n"
            "  --check-cpu          gpu: run the CPU reference too and compare every record\n"
            "                       (exit 1 on a difference; slow beyond n ~ 1e5)\n"
            "  --json FILE          write the run and its records as one JSON object (a line)\n"
            "  --spins-out FILE     write the final best spins, one +1/-1 per line\n"
            "  --quiet              no progress line\n"
            "The exit status is 1 when a pass does not consume every frame.  Mattis runs\n"
            "report whether and after how many updates the known ground state was reached.\n");
}

typedef struct {
    const dsb_stream_params *p;
    int64_t ground;
    int has_ground;
    int32_t ground_pass; /* first pass whose best energy is the ground state, -1 */
    double seconds;
    uint64_t frames, bad;
    json_w *json;
    int64_t final_energy2;
    uint32_t *best_spins; /* the final pass's best spins, when given */
    double *rates;       /* payload Gb/s of each pass */
    uint32_t nrates;
    int keep;            /* --check-cpu: the records are kept, then compared */
    uint64_t passes_frames; /* frames of the passes recorded (T each) */
    int64_t *energy2;    /* pass x B */
    uint64_t *checksum;  /* pass x B */
    uint32_t mismatches;
} run_ctx;

static int on_pass(const dsb_stream_record *r, void *arg)
{
    run_ctx *c = arg;
    printf("%5u %4s %22" PRId64 " %6u  %016" PRIx64 " %12" PRIu64 " %9.4f %9.2f\n", r->pass,
           r->updated ? "yes" : "no", r->best_energy2, r->best_replica,
           r->checksum[r->best_replica], r->frames, r->seconds,
           dsb_stream_payload_gbps(r->frames, r->seconds));
    fflush(stdout);
    if (c->has_ground && c->ground_pass < 0 && r->best_energy2 == c->ground)
        c->ground_pass = (int32_t)r->pass;
    c->seconds += r->seconds;
    c->frames += r->frames;
    c->passes_frames += dsb_stream_frames(c->p->n);
    c->bad += r->bad_frames;
    c->final_energy2 = r->best_energy2;
    if (r->best_signs && r->pass == c->p->updates) {
        size_t W = dsb_words(c->p->n);
        c->best_spins = realloc(c->best_spins, W * sizeof *c->best_spins);
        memcpy(c->best_spins, r->best_signs, W * sizeof *c->best_spins);
    }
    c->rates = realloc(c->rates, (c->nrates + 1u) * sizeof *c->rates);
    c->rates[c->nrates++] = dsb_stream_payload_gbps(r->frames, r->seconds);
    if (c->keep) {
        size_t B = c->p->replicas, at = (size_t)r->pass * B;
        c->energy2 = realloc(c->energy2, (at + B) * sizeof *c->energy2);
        c->checksum = realloc(c->checksum, (at + B) * sizeof *c->checksum);
        memcpy(c->energy2 + at, r->energy2, B * sizeof *r->energy2);
        memcpy(c->checksum + at, r->checksum, B * sizeof *r->checksum);
    }
    if (c->json) {
        json_w *w = c->json;
        json_obj_begin(w);
        json_kv_u64(w, "pass", r->pass);
        json_kv_bool(w, "updated", r->updated);
        json_kv_i64(w, "best_energy2", r->best_energy2);
        json_kv_u64(w, "best_replica", r->best_replica);
        json_key(w, "energy2");
        json_arr_begin(w);
        for (uint32_t b = 0; b < c->p->replicas; b++) json_i64(w, r->energy2[b]);
        json_arr_end(w);
        json_key(w, "checksum");
        json_arr_begin(w);
        for (uint32_t b = 0; b < c->p->replicas; b++) {
            char hex[17];
            snprintf(hex, sizeof hex, "%016" PRIx64, r->checksum[b]);
            json_str(w, hex);
        }
        json_arr_end(w);
        json_kv_u64(w, "frames", r->frames);
        json_kv_u64(w, "bad_frames", r->bad_frames);
        json_kv_f64(w, "seconds", r->seconds);
        json_kv_f64(w, "payload_gbps", dsb_stream_payload_gbps(r->frames, r->seconds));
        json_obj_end(w);
    }
    return 0;
}

int stream_matrix_flag(const char *prog, const char *a, const char *v, stream_matrix *m)
{
    if (arg_is(a, "--n")) {
        if (arg_u32(prog, "--n", v, 2, DSB_STREAM_MAX_N, &m->p->n)) return -1;
        m->n_set = 1;
    } else if (arg_is(a, "--instance")) {
        if (dsb_stream_instance_parse(v, &m->p->instance)) {
            fprintf(stderr, "%s: --instance: expected mattis or random, got '%s'\n", prog, v);
            return -1;
        }
        m->instance_set = 1;
    } else if (arg_is(a, "--seed")) {
        if (arg_u64(prog, "--seed", v, 0, UINT64_MAX, &m->p->seed)) return -1;
    } else if (arg_is(a, "--file")) {
        m->file = v;
    } else if (arg_is(a, "--run-id")) {
        char *end;
        unsigned long long id = strtoull(v, &end, 16);
        if (!*v || *end || id > 0xFFFFFFFFull) {
            fprintf(stderr, "%s: --run-id: expected 8 hex digits (as dsb stream-send prints), "
                            "got '%s'\n", prog, v);
            return -1;
        }
        m->run_id = (uint32_t)id;
        m->run_id_set = 1;
    } else {
        return 0;
    }
    return 1;
}

int stream_matrix_finish(const char *prog, stream_matrix *m)
{
    if (m->run_id_set) { /* a receiver of someone else's frames: n and the run id given */
        if (m->file || m->instance_set || !m->n_set) {
            fprintf(stderr, "%s: --run-id: takes --n, and neither --file nor --instance\n", prog);
            return 2;
        }
        m->p->instance = DSB_STREAM_FILE; /* a file's frames, read by the sender */
        m->p->file_run_id = m->run_id;
        return 0;
    }
    if (!m->file) return 0;
    if (m->n_set || m->instance_set) {
        fprintf(stderr, "%s: --file: the file sets n and the matrix; drop --n and --instance\n",
                prog);
        return 2;
    }
    cm_err err = {{0}};
    if (dsb_stream_params_from_file(m->p, m->file, &err)) {
        fprintf(stderr, "%s: --file: %s\n", prog, err.msg);
        return 1;
    }
    return 0;
}

/* The receiver is bound: say where (scripts start the generator after this line). */
static void announce(const dsb_stream_net_stats *st, void *ctx)
{
    (void)ctx;
    fprintf(stderr, "%s: receiving on port %u\n", P, st->port);
}

/* --check-cpu: the CPU reference's record of each pass against the kept one. */
static int compare_pass(const dsb_stream_record *r, void *arg)
{
    run_ctx *c = arg;
    size_t B = c->p->replicas, at = (size_t)r->pass * B;
    if (r->pass >= c->nrates || memcmp(c->energy2 + at, r->energy2, B * sizeof *r->energy2) ||
        memcmp(c->checksum + at, r->checksum, B * sizeof *r->checksum)) {
        fprintf(stderr, "%s: --check-cpu: pass %u differs from the CPU reference\n", P, r->pass);
        c->mismatches++;
    }
    return 0;
}

/* The network source on the GPU: the receiver's frames go into the GPU run's
 * ring or pass buffer (dsb_stream_gpu_sink). */
static int recv_gpu(const dsb_stream_params *p, const dsb_stream_gpu_opts *go,
                    const dsb_stream_net_opts *no, int progress, run_ctx *c,
                    dsb_stream_net_stats *ns, cm_err *err)
{
    dsb_stream_gpu_run *run;
    if (dsb_stream_gpu_open_recv(p, go, &run, err)) return -1;
    dsb_stream_sink sink = {0};
    dsb_stream_gpu_sink(run, &sink);
    int rc = dsb_stream_recv_sink(p, no, &sink, progress, on_pass, c, announce, ns, err);
    dsb_stream_gpu_close(run);
    return rc;
}

/* The network source on the CPU through a ring: the receiving threads fill it,
 * a consumer thread consumes it (dsb_stream_ring_sink). */
static int recv_cpu_ring(const dsb_stream_params *p, uint64_t ring_bytes,
                         const dsb_stream_net_opts *no, int progress, run_ctx *c,
                         dsb_stream_net_stats *ns, dsb_stream_ring_sink_stats *rs, cm_err *err)
{
    dsb_stream_state *s;
    if (dsb_stream_state_create(p, &s, err)) return -1;
    dsb_stream_ring_sink *k;
    if (dsb_stream_ring_sink_open(s, p, ring_bytes, 0, &k, err)) {
        dsb_stream_state_free(s);
        return -1;
    }
    dsb_stream_sink sink = {0};
    dsb_stream_ring_sink_get(k, &sink);
    int rc = dsb_stream_recv_sink(p, no, &sink, progress, on_pass, c, announce, ns, err);
    dsb_stream_ring_sink_stats_get(k, rs);
    dsb_stream_ring_sink_close(k);
    dsb_stream_state_free(s);
    return rc;
}

int cmd_stream(int argc, char **argv)
{
    dsb_stream_params p;
    dsb_stream_params_default(&p);
    dsb_stream_gpu_opts go;
    dsb_stream_gpu_opts_default(&go);
    int gpu = 0, quiet = 0, source_set = 0, blocks_set = 0, threads_set = 0, check_cpu = 0;
    int host_opt = 0, net = 0, net_opt = 0;
    dsb_stream_net_opts no;
    dsb_stream_net_opts_default(&no);
    no.tc.bind_port = DSB_STREAM_DEFAULT_PORT;
    uint32_t threads = 0;
    uint64_t ring_bytes = 0; /* --ring; UINT64_MAX: 'pass' */
    int ring_set = 0, recv_threads_set = 0, recv_mode_set = 0, recv_copy = 0;
    const char *json_path = NULL, *spins_path = NULL;
    stream_matrix sm = {&p, NULL, 0, 0, 0, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        double d;
        int tf;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--quiet")) {
            quiet = 1;
            continue;
        } else if (!strcmp(a, "--check-cpu")) {
            check_cpu = 1;
            continue;
        } else if (!strcmp(a, "--recv-copy")) {
            recv_copy = net_opt = 1;
            no.recv_copy = 1;
            continue;
        }
        if (!(a[0] == '-' && a[1] == '-')) {
            fprintf(stderr, "%s: unexpected argument '%s' (see dsb stream --help)\n", P, a);
            return 2;
        }
        if (!(v = arg_value(P, argc, argv, &i))) return 2;
        if ((tf = stream_matrix_flag(P, a, v, &sm)) != 0) {
            if (tf < 0) return 2;
        } else if (arg_is(a, "--replicas")) {
            if (arg_u32(P, "--replicas", v, 1, DSB_STREAM_MAX_REPLICAS, &p.replicas)) return 2;
        } else if (arg_is(a, "--updates")) {
            if (arg_u32(P, "--updates", v, 1, 1000000u, &p.updates)) return 2;
        } else if (arg_is(a, "--dt")) {
            if (arg_f64(P, "--dt", v, 1e-6, 100.0, &d)) return 2;
            p.dt = (float)d;
        } else if (arg_is(a, "--xi")) {
            if (arg_f64(P, "--xi", v, 1e-12, 1e6, &d)) return 2;
            p.xi = (float)d;
        } else if (arg_is(a, "--threads")) {
            if (arg_u32(P, "--threads", v, 1, 4096, &threads)) return 2;
            threads_set = 1;
        } else if (arg_is(a, "--blocks")) {
            if (arg_u32(P, "--blocks", v, 1, 65536, &go.blocks)) return 2;
            blocks_set = 1;
        } else if (arg_is(a, "--host-bytes")) {
            if (arg_bytes(P, "--host-bytes", v, &go.host_bytes)) return 2;
            host_opt = 1;
        } else if (arg_is(a, "--host-threads")) {
            if (arg_u32(P, "--host-threads", v, 1, 4096, &go.host_threads)) return 2;
            host_opt = 1;
        } else if (arg_is(a, "--backend")) {
            if (!strcmp(v, "cpu")) gpu = 0;
            else if (!strcmp(v, "gpu")) gpu = 1;
            else {
                fprintf(stderr, "%s: --backend: expected cpu or gpu, got '%s'\n", P, v);
                return 2;
            }
        } else if (arg_is(a, "--source")) {
            if (!strcmp(v, "udp") || !strcmp(v, "packet")) {
                net = 1;
                no.tc.kind = v;
            } else if (dsb_stream_source_parse(v, &go.source)) {
                fprintf(stderr, "%s: --source: expected gen, host, udp or packet, got '%s'\n", P,
                        v);
                return 2;
            }
            source_set = 1;
        } else if (arg_is(a, "--idle")) {
            if (arg_f64(P, "--idle", v, 0.0, 3600.0, &no.idle_s)) return 2;
            net_opt = 1;
        } else if (arg_is(a, "--timeout")) {
            if (arg_f64(P, "--timeout", v, 0.1, 86400.0, &no.timeout_s)) return 2;
            net_opt = 1;
        } else if (arg_is(a, "--ring")) {
            if (!strcmp(v, "pass")) {
                ring_bytes = UINT64_MAX;
            } else if (arg_bytes(P, "--ring", v, &ring_bytes)) {
                return 2;
            } else if (ring_bytes < (1ull << 20) || ring_bytes > (1ull << 40)) {
                fprintf(stderr, "%s: --ring: expected a size of 1MiB .. 1TiB (2 chunks of 128 "
                                "frames at least) or 'pass', got '%s'\n", P, v);
                return 2;
            }
            ring_set = net_opt = 1;
        } else if (arg_is(a, "--recv-threads")) {
            if (arg_u32(P, "--recv-threads", v, 1, DSB_STREAM_MAX_RECV_THREADS, &no.recv_threads))
                return 2;
            recv_threads_set = net_opt = 1;
        } else if (arg_is(a, "--recv-mode")) {
            int m = dsb_stream_recv_mode_parse(v);
            if (m < 0) {
                fprintf(stderr, "%s: --recv-mode: expected shared, hash or queue, got '%s'\n", P,
                        v);
                return 2;
            }
            no.recv_mode = (uint32_t)m;
            recv_mode_set = net_opt = 1;
        } else if (!arg_is(a, "--transport") && (tf = transport_flag(P, a, v, &no.tc, 0)) != 0) {
            if (tf < 0) return 2;
            net_opt = 1;
        } else if (arg_is(a, "--json")) {
            json_path = v;
        } else if (arg_is(a, "--spins-out")) {
            spins_path = v;
        } else {
            fprintf(stderr, "%s: unknown option '%s' (see dsb stream --help)\n", P, a);
            return 2;
        }
    }
    if (sm.run_id_set && !net) {
        fprintf(stderr, "%s: --run-id: applies to --source udp or packet only\n", P);
        return 2;
    }
    if (net_opt && !net) {
        fprintf(stderr, "%s: --bind, --port, --iface, --mac, --idle, --timeout, --ring, "
                        "--recv-threads, --recv-mode, --recv-copy: apply to --source udp or "
                        "packet only\n", P);
        return 2;
    }
    if (!gpu && source_set && !net && go.source != DSB_STREAM_SRC_GEN) {
        fprintf(stderr, "%s: --source %s: applies to --backend gpu only\n", P,
                dsb_stream_source_name(go.source));
        return 2;
    }
    if (!gpu && blocks_set) {
        fprintf(stderr, "%s: --blocks: applies to --backend gpu only\n", P);
        return 2;
    }
    if (host_opt && !(gpu && go.source == DSB_STREAM_SRC_HOST)) {
        fprintf(stderr, "%s: --host-bytes, --host-threads: apply to --backend gpu --source host "
                        "only\n", P);
        return 2;
    }
    if (check_cpu && !gpu) {
        fprintf(stderr, "%s: --check-cpu: applies to --backend gpu only (it compares the GPU's "
                        "records with the CPU reference)\n", P);
        return 2;
    }
    if (net && threads_set) {
        fprintf(stderr, "%s: --threads: applies to --source gen (the network receiver's threads: "
                        "--recv-threads)\n", P);
        return 2;
    }
    if (recv_threads_set && no.recv_threads > 1 && strcmp(no.tc.kind, "udp")) {
        fprintf(stderr, "%s: --recv-threads: more than 1 needs --source udp (the threads share "
                        "one socket)\n", P);
        return 2;
    }
    if (recv_mode_set && no.recv_mode != DSB_STREAM_RECV_SHARED && strcmp(no.tc.kind, "udp")) {
        fprintf(stderr, "%s: --recv-mode %s: needs --source udp (a socket a thread on one "
                        "port)\n", P, dsb_stream_recv_mode_name(no.recv_mode));
        return 2;
    }
    if (recv_copy && no.recv_mode == DSB_STREAM_RECV_SHARED) {
        fprintf(stderr, "%s: --recv-copy: applies to --recv-mode hash or queue (the shared "
                        "socket always copies)\n", P);
        return 2;
    }
    if (ring_set && !gpu && ring_bytes == UINT64_MAX) {
        fprintf(stderr, "%s: --ring pass: applies to --backend gpu (the CPU consumes each frame "
                        "as it comes, or through a ring of a given size)\n", P);
        return 2;
    }
    /* the CPU state takes frames on one thread: several receiving threads go through a ring */
    const int cpu_ring = net && !gpu && (ring_set || no.recv_threads > 1);
    if (net && gpu) go.host_bytes = ring_bytes;
    if (gpu && threads_set) {
        fprintf(stderr, "%s: --threads: applies to --backend cpu only\n", P);
        return 2;
    }
    int mf = stream_matrix_finish(P, &sm); /* after the usage checks: it opens the file */
    if (mf) return mf;
    go.progress = !quiet;

    FILE *jf = NULL;
    json_w jw;
    if (json_path && !(jf = fopen(json_path, "w"))) {
        fprintf(stderr, "%s: --json: cannot open '%s' for writing\n", P, json_path);
        return 1;
    }
    run_ctx c = {.p = &p, .ground_pass = -1, .json = jf ? &jw : NULL, .keep = check_cpu};
    dsb_stream_gpu_info info;
    memset(&info, 0, sizeof info);
    go.info = &info;
    c.has_ground = dsb_stream_known_ground(&p, &c.ground);
    uint64_t frames = dsb_stream_frames(p.n);
    const char *src = net ? no.tc.kind : gpu ? dsb_stream_source_name(go.source) : "gen";
    printf("# dsb stream: %s n=%u B=%u K=%u dt=%g xi=%g seed=%" PRIu64 " backend=%s source=%s\n",
           dsb_stream_instance_name(p.instance), p.n, p.replicas, p.updates, (double)p.dt,
           (double)dsb_stream_xi(&p), p.seed, gpu ? "gpu" : "cpu", src);
    printf("# a pass: %" PRIu64 " frames of %u B, %.6g GB of payload (V(n), Eq. (9))\n", frames,
           DSB_STREAM_FRAME, (double)dsb_stream_pass_bytes(p.n) / 1e9);
    printf("%5s %4s %22s %6s  %16s %12s %9s %9s\n", "pass", "upd", "best 2E", "best", "checksum",
           "frames", "s", "Gb/s");
    if (jf) {
        json_init(&jw, jf);
        json_obj_begin(&jw);
        json_kv_str(&jw, "tool", "dsb stream");
        bench_json_machine(&jw);
        json_kv_str(&jw, "instance", dsb_stream_instance_name(p.instance));
        json_kv_u64(&jw, "n", p.n);
        json_kv_u64(&jw, "replicas", p.replicas);
        json_kv_u64(&jw, "updates", p.updates);
        json_kv_f64(&jw, "dt", p.dt);
        json_kv_f64(&jw, "xi", dsb_stream_xi(&p));
        json_kv_u64(&jw, "seed", p.seed);
        json_kv_str(&jw, "backend", gpu ? "gpu" : "cpu");
        json_kv_str(&jw, "source", src);
        json_kv_u64(&jw, "frames_per_pass", frames);
        json_kv_u64(&jw, "pass_payload_bytes", dsb_stream_pass_bytes(p.n));
        json_key(&jw, "records");
        json_arr_begin(&jw);
    }
    cm_err err = {{0}};
    dsb_stream_net_stats ns;
    memset(&ns, 0, sizeof ns);
    dsb_stream_ring_sink_stats rs;
    memset(&rs, 0, sizeof rs);
    int rc = net && gpu ? recv_gpu(&p, &go, &no, !quiet, &c, &ns, &err)
             : cpu_ring ? recv_cpu_ring(&p, ring_bytes, &no, !quiet, &c, &ns, &rs, &err)
             : net      ? dsb_stream_recv(&p, &no, !quiet, on_pass, &c, announce, &ns, &err)
             : gpu      ? dsb_stream_run_gpu(&p, &go, on_pass, &c, &err)
                        : dsb_stream_run_cpu(&p, threads, !quiet, on_pass, &c, &err);
    if (net) {
        printf("# received %" PRIu64 " datagrams: %" PRIu64 " frames consumed, %" PRIu64
               " duplicates, %" PRIu64 " stale, %" PRIu64 " rejected, %" PRIu64
               " passes sent again (%" PRIu64 " frames missing, %" PRIu64 " of them not sent), %"
               PRIu64 " answers, %" PRIu64 " PASS_ENDs again, %" PRIu64 " dropped by the socket\n",
               ns.datagrams, ns.frames, ns.duplicates, ns.stale, ns.bad, ns.resends, ns.missing,
               ns.not_sent, ns.acks, ns.end_resends, ns.kernel_drops);
        if (ns.ring_full) printf("#   %" PRIu64 " frames found no room in the ring\n", ns.ring_full);
        char buf[160];
        if (gpu && info.host_mode == 2)
            snprintf(buf, sizeof buf, "GPU ring of %u chunks of %u frames (%.4g MB pinned), %u "
                     "worker blocks", info.ring_slots, info.ring_frames,
                     (double)info.host_buffer_bytes / 1e6, info.blocks);
        else if (gpu)
            snprintf(buf, sizeof buf, "GPU pass buffer (%.4g MB pinned), %u worker blocks",
                     (double)info.host_buffer_bytes / 1e6, info.blocks);
        else if (cpu_ring)
            snprintf(buf, sizeof buf, "CPU ring of %u chunks of %" PRIu64 " frames, one consumer "
                     "thread", rs.slots, rs.chunk_frames);
        else
            snprintf(buf, sizeof buf, "consumed on the receiving thread");
        if (ns.threads) { /* the receiver ran */
            printf("# receiver: %u thread%s; %s", ns.threads, ns.threads == 1 ? "" : "s", buf);
            if (gpu) printf("; GPU drain after the last frame %.3f ms a pass",
                            c.nrates ? info.recv_drain_seconds / c.nrates * 1e3 : 0.0);
            printf("\n");
            printf("# sockets: %s", no.recv_mode == DSB_STREAM_RECV_SHARED
                                        ? "one, shared"
                                        : no.recv_mode == DSB_STREAM_RECV_HASH
                                              ? "one a thread (SO_REUSEPORT, flow hash)"
                                              : "one a thread (SO_REUSEPORT, queue mod threads)");
            printf("; datagrams a thread:");
            for (uint32_t i = 0; i < ns.threads && i < DSB_STREAM_MAX_RECV_THREADS; i++)
                printf(" %" PRIu64, ns.thread_datagrams[i]);
            printf("; %" PRIu64 " frames received straight into the ring, %" PRIu64
                   " datagrams in a place meant for another; receive buffer %.3g MB a socket\n",
                   ns.direct, ns.misplaced, (double)ns.rcvbuf_bytes / 1e6);
        }
        if (ns.seconds > 0)
            printf("# end to end: %.3f s from the first frame to the final answer, %.2f Gb/s of "
                   "payload (each pass counted once)\n",
                   ns.seconds, dsb_stream_payload_gbps(c.passes_frames, ns.seconds));
        for (int r = 1; r < DSB_WR_COUNT; r++)
            if (ns.bad_reason[r])
                printf("#   rejected %s: %" PRIu64 "\n", dsb_wire_reason_name((unsigned)r),
                       ns.bad_reason[r]);
    }
    if (rc) fprintf(stderr, "%s: %s\n", P, err.msg);
    if (rc && c.nrates == 0) { /* nothing ran: no summary to give */
        if (jf) {
            json_arr_end(&jw);
            json_kv_bool(&jw, "ok", 0);
            json_kv_str(&jw, "error", err.msg);
            json_obj_end(&jw);
            fputc('\n', jf);
            fclose(jf);
        }
        return 1;
    }
    /* pass 0 carries the start-up (first touch of the state and the frames) */
    double median = c.nrates > 1 ? bench_median(c.rates + 1, c.nrates - 1u)
                                 : c.nrates ? c.rates[0] : 0.0;
    printf("# %" PRIu64 " frames, %" PRIu64 " rejected, %.3f s consuming, %.2f Gb/s of payload; "
           "median of passes >= 1: %.2f Gb/s (%.2f GB/s of 4096-byte frames)\n",
           c.frames, c.bad, c.seconds, dsb_stream_payload_gbps(c.frames, c.seconds), median,
           median / 8.0 * DSB_STREAM_FRAME / DSB_STREAM_PAYLOAD);
    if (gpu && rc == 0)
        printf("# gpu: %s, %u blocks (%u an SM) of %u threads, %u B shared, %d registers, %d B "
               "local; unit %u frames; host: %s, %u threads, %.3g MB pinned; update kernel "
               "%.3f ms a pass; setup %.3f s\n",
               info.device, info.blocks, info.blocks_per_sm, info.threads, info.smem_bytes,
               info.regs, info.local_bytes, info.unit_frames,
               info.host_mode == 1 ? "the pass resident" : info.host_mode == 2 ? "ring" : "none",
               info.host_threads, (double)info.host_buffer_bytes / 1e6,
               c.nrates ? info.update_seconds / c.nrates * 1e3 : 0.0, info.setup_seconds);
    if (check_cpu && rc == 0) {
        cm_err cerr = {{0}};
        if (dsb_stream_run_cpu(&p, 0, 0, compare_pass, &c, &cerr)) {
            fprintf(stderr, "%s: --check-cpu: %s\n", P, cerr.msg);
            rc = -1;
        } else {
            printf("# CPU reference: %s\n", c.mismatches ? "MISMATCH" : "every record identical");
            if (c.mismatches) rc = -1;
        }
    }
    if (spins_path && rc == 0) {
        cm_err serr = {{0}};
        if (!c.best_spins) {
            fprintf(stderr, "%s: --spins-out: the run gave no final spins\n", P);
            rc = -1;
        } else if (dsb_write_spins(spins_path, c.best_spins, p.n, &serr)) {
            fprintf(stderr, "%s: --spins-out: %s\n", P, serr.msg);
            rc = -1;
        } else {
            printf("# the best spins (2E = %" PRId64 ") in %s\n", c.final_energy2, spins_path);
        }
    }
    if (c.has_ground)
        printf("# Mattis ground state 2E = %" PRId64 ": %s\n", c.ground,
               c.ground_pass >= 0 ? "reached" : "NOT reached");
    if (c.ground_pass >= 0)
        printf("# first reached by the signs after %d update%s\n", c.ground_pass,
               c.ground_pass == 1 ? "" : "s");
    if (jf) {
        json_arr_end(&jw);
        json_kv_bool(&jw, "ok", rc == 0);
        if (rc) json_kv_str(&jw, "error", err.msg);
        json_kv_i64(&jw, "final_best_energy2", c.final_energy2);
        if (c.has_ground) {
            json_kv_i64(&jw, "ground_energy2", c.ground);
            json_kv_i64(&jw, "ground_reached_after_updates", c.ground_pass);
        }
        json_kv_f64(&jw, "seconds", c.seconds);
        json_kv_f64(&jw, "payload_gbps", dsb_stream_payload_gbps(c.frames, c.seconds));
        json_kv_f64(&jw, "median_payload_gbps_after_pass0", median);
        if (check_cpu) json_kv_bool(&jw, "cpu_identical", rc == 0 && c.mismatches == 0);
        if (net) {
            json_kv_u64(&jw, "datagrams", ns.datagrams);
            json_kv_u64(&jw, "duplicates", ns.duplicates);
            json_kv_u64(&jw, "stale", ns.stale);
            json_kv_u64(&jw, "rejected", ns.bad);
            json_kv_u64(&jw, "resends", ns.resends);
            json_kv_u64(&jw, "pass_end_resends", ns.end_resends);
            json_kv_u64(&jw, "missing", ns.missing);
            json_kv_u64(&jw, "not_sent", ns.not_sent);
            json_kv_u64(&jw, "kernel_drops", ns.kernel_drops);
            json_kv_u64(&jw, "ring_full", ns.ring_full);
            json_kv_u64(&jw, "recv_threads", ns.threads);
            json_kv_str(&jw, "recv_mode", dsb_stream_recv_mode_name(no.recv_mode));
            json_kv_bool(&jw, "recv_copy", no.recv_copy);
            json_kv_u64(&jw, "direct_frames", ns.direct);
            json_kv_u64(&jw, "misplaced", ns.misplaced);
            json_kv_u64(&jw, "socket_rcvbuf_bytes", ns.rcvbuf_bytes);
            json_key(&jw, "thread_datagrams");
            json_arr_begin(&jw);
            for (uint32_t i = 0; i < ns.threads && i < DSB_STREAM_MAX_RECV_THREADS; i++)
                json_u64(&jw, ns.thread_datagrams[i]);
            json_arr_end(&jw);
            json_kv_f64(&jw, "end_to_end_seconds", ns.seconds);
            json_kv_f64(&jw, "end_to_end_payload_gbps",
                        dsb_stream_payload_gbps(c.passes_frames, ns.seconds));
            json_kv_str(&jw, "receive_buffer", gpu ? (info.host_mode == 2 ? "gpu-ring" : "gpu-pass")
                                               : cpu_ring ? "cpu-ring" : "none");
            if (cpu_ring) {
                json_kv_u64(&jw, "ring_slots", rs.slots);
                json_kv_u64(&jw, "ring_frames", rs.chunk_frames);
                json_kv_u64(&jw, "ring_waits", rs.slot_waits);
            }
            if (gpu) {
                json_kv_f64(&jw, "recv_drain_seconds_total", info.recv_drain_seconds);
                json_kv_u64(&jw, "recv_attempts_stopped", info.recv_attempts_stopped);
                json_kv_u64(&jw, "ring_waits", info.ring_waits);
            }
        }
        if (gpu) {
            json_kv_str(&jw, "device", info.device);
            json_kv_u64(&jw, "blocks", info.blocks);
            json_kv_u64(&jw, "blocks_per_sm", info.blocks_per_sm);
            json_kv_u64(&jw, "smem_bytes", info.smem_bytes);
            json_kv_i64(&jw, "regs", info.regs);
            json_kv_i64(&jw, "local_bytes", info.local_bytes);
            json_kv_u64(&jw, "unit_frames", info.unit_frames);
            json_kv_i64(&jw, "host_mode", info.host_mode);
            json_kv_u64(&jw, "ring_slots", info.ring_slots);
            json_kv_u64(&jw, "ring_frames", info.ring_frames);
            json_kv_u64(&jw, "host_threads", info.host_threads);
            json_kv_u64(&jw, "host_buffer_bytes", info.host_buffer_bytes);
            json_kv_f64(&jw, "setup_seconds", info.setup_seconds);
            json_kv_f64(&jw, "update_seconds_total", info.update_seconds);
        }
        json_obj_end(&jw);
        fputc('\n', jf);
        fclose(jf);
    }
    free(c.rates);
    free(c.best_spins);
    free(c.energy2);
    free(c.checksum);
    return rc ? 1 : 0;
}
