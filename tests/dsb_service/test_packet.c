/* The AF_PACKET transport on the loopback interface: raw frames with the
 * service EtherType, upload, closed-loop requests with reference checks, and
 * a malformed frame counted.  Needs CAP_NET_RAW: without it the test reports
 * "skipped" and exits 77 (CTest SKIP_RETURN_CODE). */
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../check.h"
#include "dsb/client.h"
#include "dsb/instances.h"
#include "dsb/service.h"

int main(void)
{
    int probe = socket(AF_PACKET, SOCK_RAW, htons(DSB_WIRE_ETHERTYPE));
    if (probe < 0) {
        printf("skipped: AF_PACKET socket: %s (needs CAP_NET_RAW)\n", strerror(errno));
        return 77;
    }
    close(probe);
    dsb_server_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.transport.kind = "packet";
    cfg.transport.ifname = "lo";
    /* MACs of our own (pid in them): other packet sockets on lo, a `dsb serve` or
     * this test run by someone else at the same time, see every frame too */
    char smac[32], cmac[32];
    unsigned pid = (unsigned)getpid();
    snprintf(smac, sizeof smac, "02:%02x:%02x:%02x:00:31", (pid >> 16) & 0xff, (pid >> 8) & 0xff,
             pid & 0xff);
    snprintf(cmac, sizeof cmac, "02:%02x:%02x:%02x:00:32", (pid >> 16) & 0xff, (pid >> 8) & 0xff,
             pid & 0xff);
    cfg.transport.mac = smac;
    cfg.dispatch = "cpu";
    cfg.cpu.workers = 2;
    dsb_server *s;
    cm_err err;
    if (dsb_server_create(&cfg, &s, &err) || dsb_server_start_thread(s, &err)) {
        fprintf(stderr, "server: %s\n", err.msg);
        return 1;
    }
    dsb_transport_config tc;
    memset(&tc, 0, sizeof tc);
    tc.kind = "packet";
    tc.ifname = "lo";
    tc.mac = cmac;
    tc.peer_mac = smac;
    dsb_client *c;
    if (dsb_client_open(&tc, &c, &err)) {
        fprintf(stderr, "client: %s\n", err.msg);
        return 1;
    }
    dsb_instance in;
    dsb_model m;
    if (dsb_gen_parse("ternary:n=96,seed=1000", &in, &err) ||
        dsb_model_pack(in.J, in.n, DSB_FMT_TERNARY, &m, &err)) {
        fprintf(stderr, "model: %s\n", err.msg);
        return 1;
    }
    dsb_upload_report up;
    dsb_upload_opts uo = {.drop_every = 2, .ack_timeout_s = 0.1};
    CHECK(dsb_client_upload(c, &m, 4, 1, &uo, &up, &err) == 0, "upload: %s", err.msg);
    dsb_load_config lc;
    memset(&lc, 0, sizeof lc);
    lc.req = (dsb_req_params){.model_id = 4, .n = 96, .steps = 100, .replicas = 8, .dt = 1.0f};
    lc.seed_base = 7919;
    lc.outstanding = 4;
    lc.requests = 200;
    lc.warmup = 20;
    lc.energy_checks = 3000;
    lc.ref_checks = 20;
    dsb_load_report rep;
    CHECK(dsb_client_run(c, &m, &lc, &rep, &err) == 0, "run: %s", err.msg);
    CHECK(rep.ok == 220 && rep.lost == 0, "ok %llu lost %llu", (unsigned long long)rep.ok,
          (unsigned long long)rep.lost);
    CHECK(rep.energy_checked == 220 && rep.energy_mismatch == 0, "energies");
    CHECK(rep.ref_checked == 20 && rep.ref_mismatch == 0, "reference");
    /* a frame with a bad version is counted, not answered */
    uint8_t b[DSB_WIRE_MAX_FRAME];
    dsb_transport *t = dsb_client_transport(c);
    size_t len = dsb_wire_build_solve(b, sizeof b, t->peer_mac, t->mac, 4, 1, 96, 0, 10, 1, 1,
                                      0.0f, 1.0f, NULL);
    b[15] = 9;
    dsb_frame f = {.data = b, .cap = sizeof b, .len = (uint32_t)len};
    CHECK(t->send(t, &f, 1) == 1, "raw send");
    usleep(100000);
    dsb_counters k;
    dsb_server_counters(s, &k);
    CHECK(k.bad[DSB_WR_BAD_VERSION] == 1, "bad version counted %llu",
          (unsigned long long)k.bad[DSB_WR_BAD_VERSION]);
    CHECK(k.c[DSB_C_SOLVE_OK] == 220, "server solved %llu", (unsigned long long)k.c[DSB_C_SOLVE_OK]);
    dsb_counters_print(stdout, "server: ", &k);
    dsb_client_close(c);
    dsb_server_destroy(s);
    dsb_model_free(&m);
    dsb_instance_free(&in);
    return check_done();
}
