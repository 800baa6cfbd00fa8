/* `dsb serve`: the request service (seed 000, Sec. V) with a transport
 * (udp | packet) and a dispatcher (cpu, launch, proxy, gpu).  Counters at exit, on SIGUSR1, and
 * once per second with --stats. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "common/args.h"
#include "common/bench.h"
#include "common/json.h"
#include "dsb/gpu.h"
#include "dsb/service.h"

static const char *P = "dsb serve";

static volatile sig_atomic_t g_stop, g_dump;
static void on_stop(int sig) { (void)sig, g_stop = 1; }
static void on_usr1(int sig) { (void)sig, g_dump = 1; }

static void usage(FILE *o)
{
    fprintf(o,
            "usage: dsb serve [options]\n"
            "  --transport udp|packet  udp (default; unprivileged) or AF_PACKET raw frames with\n"
            "                          EtherType 0x88B5 (needs CAP_NET_RAW)\n"
            "  --bind ADDR             udp: local address (default 127.0.0.1)\n"
            "  --port P                udp: local port (default %u)\n"
            "  --iface IF              packet: interface (default lo)\n"
            "  --mac MAC               packet: own MAC (default: the interface's; on lo\n"
            "                          02:00:00:00:00:01)\n"
            "  --dispatch D            solver dispatcher: cpu (threads), launch (one GPU\n"
            "                          launch per request, Sec. V-A), proxy (persistent\n"
            "                          workers fed through host-mapped rings, Sec. V-B) or\n"
            "                          gpu (receive/transmit agents on the GPU around the\n"
            "                          workers, a NIC stand-in on the host, Sec. V-C)\n"
            "  --tx-batch N            gpu: replies per doorbell, 1..32 (default 32; 1 = one\n"
            "                          send and completion per reply, Sec. VII-F)\n"
            "  --sums auto|cuda|tensor launch, proxy, gpu: the solver's coupling sums (default\n"
            "                          auto = tensor: the tensor cores for every request of at\n"
            "                          most 32 tiles of 16 rows x 8 replicas, else the CUDA\n"
            "                          cores; cuda: the CUDA cores always)\n"
            "  --workers N             cpu solver threads (default: online cores)\n"
            "  --gpu-workers N         proxy, gpu: persistent worker blocks (default: all that\n"
            "                          fit, two per SM at 48 KiB, less the slots the dispatcher\n"
            "                          keeps: 1 proxy, 2 gpu; more than that is reduced to it,\n"
            "                          the JSON's gpu_workers says how many ran); the SM count\n"
            "                          usually puts one on each SM, each solve then at its\n"
            "                          unloaded speed (the block scheduler decides)\n"
            "  --streams N             launch: CUDA streams in flight (default 4, Sec. V-A)\n"
            "  --queue N               bounded work queue; full -> RESULT overloaded (default 4096)\n"
            "  --batch N               frames per recvmmsg (1..64, default 32)\n"
            "  --max-replicas B        cpu limit on B (default 256)\n"
            "  --max-steps K           cpu limit on K (default 100000)\n"
            "  --max-work W            cpu limit on B*K*n*n_p (default 2^32)\n"
            "  --max-wait-ms T         cpu: answer OVERLOADED when the expected queue wait\n"
            "                          exceeds T ms (default 500; 0 = queue length bound only)\n"
            "  --duration S            stop after S seconds (default: until SIGINT/SIGTERM)\n"
            "  --stats                 print the counters once per second (stderr)\n"
            "  --json                  print the final counters as JSON on stdout\n"
            "SIGUSR1 prints the counters; SIGINT/SIGTERM stop the server.\n",
            DSB_WIRE_DEFAULT_PORT);
}

static void counters_json(dsb_server *srv, const dsb_counters *c, const dsb_server_config *cfg,
                          double secs)
{
    json_w w;
    json_init(&w, stdout);
    json_obj_begin(&w);
    json_kv_str(&w, "tool", "dsb serve");
    json_kv_str(&w, "transport", cfg->transport.kind ? cfg->transport.kind : "udp");
    json_kv_str(&w, "dispatch", cfg->dispatch ? cfg->dispatch : "cpu");
    json_kv_str(&w, "sums", dsb_gpu_sums_name(cfg->launch.sums));
    json_kv_f64(&w, "seconds", secs);
    const uint32_t gpu_workers = dsb_server_gpu_workers(srv);
    if (gpu_workers) json_kv_u64(&w, "gpu_workers", gpu_workers);
    bench_json_machine(&w);
    json_key(&w, "counters");
    json_obj_begin(&w);
    for (int i = 0; i < DSB_C_COUNT; i++)
        json_kv_u64(&w, dsb_counter_name((dsb_counter_id)i), c->c[i]);
    json_obj_end(&w);
    json_key(&w, "bad_by_reason");
    json_obj_begin(&w);
    for (int r = 1; r < DSB_WR_COUNT; r++)
        json_kv_u64(&w, dsb_wire_reason_name((unsigned)r), c->bad[r]);
    json_obj_end(&w);
    json_key(&w, "replies_by_status");
    json_obj_begin(&w);
    for (int s = 0; s < DSB_ST_COUNT; s++)
        json_kv_u64(&w, dsb_wire_status_name((unsigned)s), c->status[s]);
    json_obj_end(&w);
    dsb_nic_stats ns;
    if (dsb_server_nic_stats(srv, &ns) == 0) { /* gpu: what the NIC stand-in did */
        json_key(&w, "nic_standin");
        json_obj_begin(&w);
        json_kv_u64(&w, "rx_frames", ns.rx_frames);
        json_kv_u64(&w, "rx_ring_full", ns.rx_ring_full);
        json_kv_u64(&w, "tx_frames", ns.tx_frames);
        json_kv_u64(&w, "doorbells", ns.doorbells);
        json_kv_u64(&w, "rx_calls", ns.rx_calls);
        json_kv_u64(&w, "tx_calls", ns.tx_calls);
        json_kv_f64(&w, "rx_busy_s", ns.rx_busy_s);
        json_kv_f64(&w, "tx_busy_s", ns.tx_busy_s);
        json_kv_f64(&w, "rx_cpu_s", ns.rx_cpu_s);
        json_kv_f64(&w, "tx_cpu_s", ns.tx_cpu_s);
        json_obj_end(&w);
        json_kv_u64(&w, "tx_batch", cfg->gpu.tx_batch);
    }
    json_obj_end(&w);
    fprintf(stdout, "\n");
}

int cmd_serve(int argc, char **argv)
{
    dsb_server_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.transport.kind = "udp";
    cfg.transport.bind_port = DSB_WIRE_DEFAULT_PORT;
    cfg.dispatch = "cpu";
    dsb_resident_config_default(&cfg.gpu);
    double duration = 0;
    int stats = 0, json = 0, max_wait_set = 0, sums_set = 0, gpu_workers_set = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--stats")) {
            stats = 1;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (a[0] == '-' && a[1] == '-') {
            if (!(v = arg_value(P, argc, argv, &i))) return 2;
            int tf = transport_flag(P, a, v, &cfg.transport, 0);
            if (tf < 0) return 2;
            if (tf > 0) continue; /* --transport --port --iface --mac ... */
            if (arg_is(a, "--dispatch")) {
                if (strcmp(v, "cpu") && strcmp(v, "launch") && strcmp(v, "proxy") &&
                    strcmp(v, "gpu")) {
                    fprintf(stderr, "%s: --dispatch: expected cpu, launch, proxy or gpu, got '%s'\n",
                            P, v);
                    return 2;
                }
                cfg.dispatch = v;
            } else if (arg_is(a, "--tx-batch")) {
                if (arg_u32(P, "--tx-batch", v, 1, DSB_NIC_TX_BATCH, &cfg.gpu.tx_batch)) return 2;
            } else if (arg_is(a, "--sums")) {
                int sv = dsb_gpu_sums_parse(v);
                if (sv < 0) {
                    fprintf(stderr, "%s: --sums: expected auto, cuda or tensor, got '%s'\n", P, v);
                    return 2;
                }
                cfg.launch.sums = cfg.proxy.sums = cfg.gpu.pipe.sums = sv;
                sums_set = 1;
            } else if (arg_is(a, "--streams")) {
                if (arg_u32(P, "--streams", v, 1, 64, &cfg.launch.streams)) return 2;
            } else if (arg_is(a, "--gpu-workers")) {
                if (arg_u32(P, "--gpu-workers", v, 1, 100000, &cfg.proxy.max_workers)) return 2;
                cfg.gpu.pipe.max_workers = cfg.proxy.max_workers;
                gpu_workers_set = 1;
            } else if (arg_is(a, "--workers")) {
                if (arg_u32(P, "--workers", v, 1, 1024, &cfg.cpu.workers)) return 2;
            } else if (arg_is(a, "--queue")) {
                if (arg_u32(P, "--queue", v, 1, 1u << 20, &cfg.cpu.queue_cap)) return 2;
                cfg.launch.queue_cap = cfg.proxy.queue_cap = cfg.cpu.queue_cap;
            } else if (arg_is(a, "--batch")) {
                if (arg_u32(P, "--batch", v, 1, DSB_TRANSPORT_BATCH, &cfg.rx_batch)) return 2;
            } else if (arg_is(a, "--max-replicas")) {
                if (arg_u32(P, "--max-replicas", v, 1, 1u << 20, &cfg.cpu.max_replicas)) return 2;
            } else if (arg_is(a, "--max-steps")) {
                if (arg_u32(P, "--max-steps", v, 1, 1u << 30, &cfg.cpu.max_steps)) return 2;
                cfg.launch.max_steps = cfg.proxy.max_steps = cfg.cpu.max_steps;
                cfg.gpu.pipe.max_steps = cfg.cpu.max_steps;
            } else if (arg_is(a, "--max-work")) {
                if (arg_u64(P, "--max-work", v, 1, UINT64_MAX, &cfg.cpu.max_work)) return 2;
            } else if (arg_is(a, "--max-wait-ms")) {
                double ms;
                if (arg_f64(P, "--max-wait-ms", v, 0, 3.6e6, &ms)) return 2;
                cfg.cpu.max_wait_ns = (uint64_t)(ms * 1e6);
                max_wait_set = 1;
            } else if (arg_is(a, "--duration")) {
                if (arg_f64(P, "--duration", v, 0.001, 1e9, &duration)) return 2;
            } else {
                fprintf(stderr, "%s: unknown option '%s'\n", P, a);
                usage(stderr);
                return 2;
            }
        } else {
            fprintf(stderr, "%s: unexpected argument '%s'\n", P, a);
            usage(stderr);
            return 2;
        }
    }
    if (sums_set && !strcmp(cfg.dispatch, "cpu")) {
        fprintf(stderr, "%s: --sums: applies to the GPU dispatchers (launch, proxy, gpu), not to "
                        "--dispatch cpu\n", P);
        return 2;
    }
    if (gpu_workers_set && strcmp(cfg.dispatch, "proxy") && strcmp(cfg.dispatch, "gpu")) {
        fprintf(stderr, "%s: --gpu-workers: applies to the persistent-worker dispatchers (proxy, gpu), "
                        "not to --dispatch %s\n", P, cfg.dispatch);
        return 2;
    }
    if (!max_wait_set) cfg.cpu.max_wait_ns = 500000000ull;
    cm_err err;
    dsb_server *s;
    if (dsb_server_create(&cfg, &s, &err) != 0) {
        fprintf(stderr, "%s: %s\n", P, err.msg);
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    if (dsb_server_start_thread(s, &err) != 0) {
        fprintf(stderr, "%s: %s\n", P, err.msg);
        dsb_server_destroy(s);
        return 1;
    }
    if (!strcmp(cfg.transport.kind, "udp"))
        fprintf(stderr, "%s: udp %s:%u, dispatch %s\n", P,
                cfg.transport.bind_addr ? cfg.transport.bind_addr : "127.0.0.1",
                dsb_server_port(s), cfg.dispatch);
    else {
        const uint8_t *m = dsb_server_mac(s);
        fprintf(stderr, "%s: packet on %s, MAC %02x:%02x:%02x:%02x:%02x:%02x, EtherType 0x%04X, "
                        "dispatch %s\n",
                P, cfg.transport.ifname ? cfg.transport.ifname : "lo", m[0], m[1], m[2], m[3],
                m[4], m[5], DSB_WIRE_ETHERTYPE, cfg.dispatch);
    }
    double t0 = bench_now_s(), last = t0;
    dsb_counters c;
    while (!g_stop) {
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
        double now = bench_now_s();
        if (duration > 0 && now - t0 >= duration) break;
        if (g_dump || (stats && now - last >= 1.0)) {
            g_dump = 0;
            last = now;
            dsb_server_counters(s, &c);
            char pre[64];
            snprintf(pre, sizeof pre, "[%.1f s] ", now - t0);
            dsb_counters_print(stderr, pre, &c);
        }
    }
    /* stop receiving, let the dispatcher answer what is still queued, then count */
    dsb_server_shutdown(s);
    dsb_server_counters(s, &c);
    dsb_counters_print(stderr, "final: ", &c);
    if (json) counters_json(s, &c, &cfg, bench_now_s() - t0);
    dsb_server_destroy(s);
    return 0;
}
