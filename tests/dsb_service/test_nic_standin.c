/* The NIC stand-in of the GPU-resident server (include/dsb/nic.h) without a
 * GPU: the queues live in ordinary memory and a test thread plays the GPU
 * agents (polls ready words, echoes each frame as a reply through send
 * descriptors, one doorbell per batch, waits for the completion).  Checks:
 * every frame reaches the ring in order with a peer handle in its source-MAC
 * bytes; replies go back to the right one of two clients with the MACs
 * restored; a full receive ring drops and counts; a descriptor naming no
 * known peer is counted, not sent; over raw Ethernet (when CAP_NET_RAW is
 * there) the replies carry the real MACs despite the transport's compaction. */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"
#include "common/bench.h"
#include "dsb/nic.h"
#include "dsb/wire.h"

#define RX_MASK (DSB_NIC_RX_SLOTS - 1u)
#define TX_MASK (DSB_NIC_TX_SLOTS - 1u)

typedef struct {
    dsb_nic_queues *q;
    atomic_int stop, paused;
    uint32_t seen;        /* frames taken from the ring */
    uint32_t bad_handle;  /* frames whose source-MAC bytes held no plausible handle */
    uint32_t out_of_order;
    uint32_t inject_bad;  /* 1: the next batch gets one extra descriptor naming handle 9999 */
} fake_gpu;

static void nap_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

static void *gpu_thread(void *arg)
{
    fake_gpu *g = arg;
    dsb_nic_queues *q = g->q;
    uint32_t rx = 0, txp = 0;
    while (!atomic_load(&g->stop)) {
        if (atomic_load(&g->paused)) {
            nap_us(100);
            continue;
        }
        uint32_t k = 0;
        while (k < DSB_NIC_TX_BATCH) {
            unsigned long long w = __atomic_load_n(&q->rx_ready[(rx + k) & RX_MASK], __ATOMIC_ACQUIRE);
            if ((uint32_t)(w >> 32) != rx + k + 1u) break;
            const uint8_t *fr = q->rx_frames[(rx + k) & RX_MASK];
            uint32_t len = (uint32_t)w & ~DSB_NIC_RX_TRUNCATED, handle;
            memcpy(&handle, fr + 6, 4);
            if (handle >= 2u || fr[10] || fr[11]) g->bad_handle++;
            uint32_t id;
            memcpy(&id, fr + 20, 4);
            (void)id;
            /* the reply: the frame echoed with the MACs swapped, as a worker builds it */
            uint8_t *out = q->tx_frames[(txp + k) & TX_MASK];
            if (len > DSB_NIC_TX_FRAME) len = DSB_NIC_TX_FRAME;
            memcpy(out, fr, len);
            memcpy(out, fr + 6, 6);
            memcpy(out + 6, fr, 6);
            q->tx_desc[(txp + k) & TX_MASK].slot = (txp + k) & TX_MASK;
            q->tx_desc[(txp + k) & TX_MASK].len = len;
            k++;
        }
        if (k == 0) {
            nap_us(20);
            continue;
        }
        if (g->inject_bad) { /* one descriptor whose frame names an unknown peer */
            uint8_t *out = q->tx_frames[(txp + k) & TX_MASK];
            memset(out, 0, 64);
            uint32_t h = 9999;
            memcpy(out, &h, 4);
            q->tx_desc[(txp + k) & TX_MASK].slot = (txp + k) & TX_MASK;
            q->tx_desc[(txp + k) & TX_MASK].len = 64;
            g->inject_bad = 0;
            txp++;
        }
        g->seen += k;
        txp += k;
        __atomic_store_n(&q->tx_doorbell, txp, __ATOMIC_RELEASE);
        uint64_t t0 = bench_now_ns();
        while ((int32_t)(__atomic_load_n(&q->tx_completion, __ATOMIC_ACQUIRE) - txp) < 0)
            if (bench_now_ns() - t0 > 2000000000ull) break; /* the check below reports it */
        rx += k;
        __atomic_store_n(&q->rx_consumer, rx, __ATOMIC_RELEASE);
    }
    return NULL;
}

static dsb_transport *open_udp(const char *peer, uint16_t peer_port)
{
    dsb_transport_config c;
    memset(&c, 0, sizeof c);
    c.kind = "udp";
    c.bind_addr = "127.0.0.1";
    c.peer_addr = peer;
    c.peer_port = peer_port;
    dsb_transport *t;
    cm_err err;
    if (dsb_transport_open(&c, &t, &err)) {
        fprintf(stderr, "transport: %s\n", err.msg);
        exit(1);
    }
    return t;
}

/* Sends n SOLVE-shaped frames (64 bytes, request id = base + i) from t. */
static void send_frames(dsb_transport *t, uint32_t base, uint32_t n)
{
    uint8_t buf[64];
    for (uint32_t i = 0; i < n; i++) {
        dsb_wire_init(buf, DSB_MSG_SOLVE, t->peer_mac, t->mac); /* zero MACs over UDP */
        uint32_t id = base + i;
        memcpy(buf + 20, &id, 4);
        dsb_frame f = {.data = buf, .cap = sizeof buf, .len = sizeof buf, .peer = t->default_peer};
        while (t->send(t, &f, 1) != 1) nap_us(10);
        if (i % 32 == 31) nap_us(200); /* stay below the socket buffers */
    }
}

/* The MACs a reply must carry (destination, source): zero over UDP. */
static uint8_t g_want_mac[12];

/* Receives until `want` frames or 30 s (the stand-in's threads poll, and on a
 * 2-core machine they share the cores with everything else); marks got[id - base]; returns the
 * count, and counts frames with other MAC bytes or foreign ids. */
static uint32_t recv_frames(dsb_transport *t, uint32_t base, uint32_t span, uint32_t want,
                            uint8_t *got, uint32_t *bad)
{
    dsb_frame *f = dsb_frames_alloc(DSB_TRANSPORT_BATCH);
    uint32_t have = 0;
    uint64_t t0 = bench_now_ns();
    cm_err err;
    while (have < want && bench_now_ns() - t0 < 30000000000ull) {
        int n = t->recv(t, f, DSB_TRANSPORT_BATCH, 100000000, &err);
        for (int i = 0; i < n; i++) {
            uint32_t id;
            memcpy(&id, f[i].data + 20, 4);
            if (f[i].len != 64 || memcmp(f[i].data, g_want_mac, 12) != 0 || id < base ||
                id >= base + span || got[id - base]) {
                (*bad)++;
                continue;
            }
            got[id - base] = 1;
            have++;
        }
    }
    dsb_frames_free(f, DSB_TRANSPORT_BATCH);
    return have;
}

/* Raw Ethernet on lo: real MACs, and the packet transport's compaction (it
 * drops our own outgoing frames and frames for other MACs by moving buffer
 * pointers, so a frame may arrive in a later slot of the stand-in's ring).
 * Two clients and a third endpoint sending to a MAC nobody has, interleaved. */
static void packet_phase(void)
{
    int probe = socket(AF_PACKET, SOCK_RAW, htons(DSB_WIRE_ETHERTYPE));
    if (probe < 0) {
        printf("raw Ethernet part skipped: AF_PACKET socket: %s (needs CAP_NET_RAW)\n",
               strerror(errno));
        return;
    }
    close(probe);
    char mac[4][32];
    const unsigned pid = (unsigned)getpid();
    for (int i = 0; i < 4; i++) /* server, client a, client b, noise: MACs of our own */
        snprintf(mac[i], sizeof mac[i], "02:%02x:%02x:%02x:00:%02x", (pid >> 16) & 0xffu,
                 (pid >> 8) & 0xffu, pid & 0xffu, 0x41 + i);
    char nobody[32];
    snprintf(nobody, sizeof nobody, "02:%02x:%02x:%02x:00:4f", (pid >> 16) & 0xffu,
             (pid >> 8) & 0xffu, pid & 0xffu);
    dsb_transport *t[4];
    for (int i = 0; i < 4; i++) {
        dsb_transport_config c;
        memset(&c, 0, sizeof c);
        c.kind = "packet";
        c.ifname = "lo";
        c.mac = mac[i];
        c.peer_mac = i == 0 ? NULL : i == 3 ? nobody : mac[0];
        cm_err err;
        if (dsb_transport_open(&c, &t[i], &err)) {
            CHECK(0, "packet transport %d: %s", i, err.msg);
            return;
        }
    }
    dsb_nic_queues *q = aligned_alloc(64, sizeof *q);
    memset(q, 0, sizeof *q);
    dsb_nic_standin *nic;
    cm_err err;
    CHECK(dsb_nic_standin_start(t[0], q, &nic, &err) == 0, "packet: start: %s", err.msg);
    fake_gpu g;
    memset(&g, 0, sizeof g);
    g.q = q;
    pthread_t th;
    pthread_create(&th, NULL, gpu_thread, &g);
    enum { NP = 300 };
    for (uint32_t i = 0; i < NP; i++) {
        send_frames(t[1], 5000000u + i, 1);
        send_frames(t[3], 9000000u + i, 1);
        send_frames(t[2], 6000000u + i, 1);
    }
    uint8_t *got = calloc(NP, 1);
    uint32_t bad = 0, have[2];
    for (int c = 0; c < 2; c++) {
        memcpy(g_want_mac, t[1 + c]->mac, 6); /* to the client, from the server */
        memcpy(g_want_mac + 6, t[0]->mac, 6);
        memset(got, 0, NP);
        have[c] = recv_frames(t[1 + c], c ? 6000000u : 5000000u, NP, NP, got, &bad);
    }
    memset(g_want_mac, 0, sizeof g_want_mac);
    dsb_nic_stats st;
    dsb_nic_standin_stats(nic, &st);
    CHECK(have[0] == NP && have[1] == NP && bad == 0,
          "raw Ethernet: client a %u, client b %u of %d, %u wrong (MACs or ids)", have[0], have[1],
          NP, bad);
    CHECK(g.bad_handle == 0 && st.rx_frames == 2u * NP && t[0]->not_for_us > 0,
          "raw Ethernet: %u bad handles, %llu frames in the ring, %llu not for us",
          g.bad_handle, (unsigned long long)st.rx_frames, (unsigned long long)t[0]->not_for_us);
    atomic_store(&g.stop, 1);
    pthread_join(th, NULL);
    dsb_nic_standin_stop(nic, NULL);
    for (int i = 0; i < 4; i++) t[i]->close(t[i]);
    free(got);
    free(q);
}

int main(void)
{
    dsb_nic_queues *q = aligned_alloc(64, sizeof *q);
    memset(q, 0, sizeof *q);
    dsb_transport *srv = open_udp(NULL, 0);
    dsb_nic_standin *nic;
    cm_err err;
    CHECK(dsb_nic_standin_start(srv, q, &nic, &err) == 0, "start: %s", err.msg);
    fake_gpu g;
    memset(&g, 0, sizeof g);
    g.q = q;
    pthread_t th;
    pthread_create(&th, NULL, gpu_thread, &g);

    /* two clients, interleaved: each gets exactly its own frames back */
    enum { N = 600 };
    dsb_transport *a = open_udp("127.0.0.1", srv->port), *b = open_udp("127.0.0.1", srv->port);
    uint8_t *got_a = calloc(N, 1), *got_b = calloc(N, 1);
    uint32_t bad_a = 0, bad_b = 0;
    for (uint32_t r = 0; r < N / 100; r++) {
        send_frames(a, 1000000u + 100u * r, 100);
        send_frames(b, 2000000u + 100u * r, 100);
    }
    uint32_t ha = recv_frames(a, 1000000u, N, N, got_a, &bad_a);
    uint32_t hb = recv_frames(b, 2000000u, N, N, got_b, &bad_b);
    dsb_nic_stats st;
    /* the transmit thread counts a batch just after sendmmsg returned: let it */
    for (int w = 0; w < 1000; w++) {
        dsb_nic_standin_stats(nic, &st);
        if (st.tx_frames + st.tx_failed >= ha + hb) break;
        nap_us(1000);
    }
    /* a busy machine may drop datagrams in the server socket: counted, never silent */
    const uint64_t kd = srv->kernel_drops(srv);
    CHECK(st.rx_frames + kd == 2u * N, "received %llu + kernel drops %llu != sent %d",
          (unsigned long long)st.rx_frames, (unsigned long long)kd, 2 * N);
    CHECK(ha + hb == st.rx_frames && st.tx_frames == st.rx_frames && st.tx_failed == 0,
          "replies: client a %u, client b %u, stand-in rx %llu tx %llu failed %llu", ha, hb,
          (unsigned long long)st.rx_frames, (unsigned long long)st.tx_frames,
          (unsigned long long)st.tx_failed);
    CHECK(ha > N / 2 && hb > N / 2, "both clients answered (%u, %u)", ha, hb);
    CHECK(bad_a == 0 && bad_b == 0, "foreign or malformed replies: %u, %u", bad_a, bad_b);
    CHECK(g.bad_handle == 0, "%u frames without a valid peer handle", g.bad_handle);

    /* a descriptor naming no known peer: counted, not sent, the others still go */
    g.inject_bad = 1;
    memset(got_a, 0, N);
    send_frames(a, 3000000u, 10);
    ha = recv_frames(a, 3000000u, 10, 10, got_a, &bad_a);
    nap_us(20000);
    dsb_nic_standin_stats(nic, &st);
    CHECK(ha == 10 && st.tx_bad_peer == 1, "bad peer: %u of 10 replies, %llu counted", ha,
          (unsigned long long)st.tx_bad_peer);

    /* the "GPU" stops consuming: the ring fills, the rest is dropped and counted */
    atomic_store(&g.paused, 1);
    nap_us(5000);
    dsb_nic_stats before;
    dsb_nic_standin_stats(nic, &before);
    enum { OVER = DSB_NIC_RX_SLOTS + 300 };
    send_frames(a, 4000000u, OVER);
    uint64_t into_ring = 0, dropped = 0, kd2 = 0;
    for (int w = 0; w < 1000; w++) { /* until the stand-in has drained the socket (10 s) */
        nap_us(10000);
        dsb_nic_standin_stats(nic, &st);
        into_ring = st.rx_frames - before.rx_frames;
        dropped = st.rx_ring_full - before.rx_ring_full;
        kd2 = srv->kernel_drops(srv) - kd;
        if (into_ring + dropped + kd2 >= OVER) break;
    }
    CHECK(into_ring + dropped + kd2 == OVER && into_ring == DSB_NIC_RX_SLOTS && dropped > 0,
          "full ring: %llu into the ring (%u slots), %llu dropped, %llu kernel drops, of %d",
          (unsigned long long)into_ring, DSB_NIC_RX_SLOTS, (unsigned long long)dropped,
          (unsigned long long)kd2, OVER);
    /* resumed: everything in the ring is answered */
    atomic_store(&g.paused, 0);
    uint8_t *got_o = calloc(OVER, 1);
    uint32_t bad_o = 0;
    uint32_t ho = recv_frames(a, 4000000u, OVER, (uint32_t)into_ring, got_o, &bad_o);
    CHECK(ho == into_ring, "after the pause: %u replies for %llu frames in the ring", ho,
          (unsigned long long)into_ring);

    atomic_store(&g.stop, 1);
    pthread_join(th, NULL);
    dsb_nic_stats fin;
    dsb_nic_standin_stop(nic, &fin);
    CHECK(fin.rx_cpu_s >= 0 && fin.tx_cpu_s >= 0 && fin.doorbells > 0 && fin.tx_calls > 0 &&
              fin.tx_busy_s > 0 && fin.rx_calls > 0 && fin.rx_busy_s > 0,
          "final stats: doorbells %llu, send calls %llu (%.6f s), receive calls %llu (%.6f s)",
          (unsigned long long)fin.doorbells, (unsigned long long)fin.tx_calls, fin.tx_busy_s,
          (unsigned long long)fin.rx_calls, fin.rx_busy_s);
    a->close(a);
    b->close(b);
    srv->close(srv);
    free(got_a);
    free(got_b);
    free(got_o);
    free(q);
    packet_phase();
    return check_done();
}
