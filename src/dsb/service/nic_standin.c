/* The NIC stand-in of the GPU-resident server (include/dsb/nic.h): two host
 * threads that do what a GPUNetIO NIC does in hardware and nothing else.
 *   receive   recvmmsg straight into the free receive slots (zero copy), write
 *             the peer handle into the source-MAC bytes, publish the ready
 *             words; drop and count what arrives while the ring is full.
 *   transmit  wait for the doorbell, sendmmsg the described frames (the peer
 *             from the handle in the destination-MAC bytes, real MACs
 *             restored), write the completion.
 * Both poll (a NIC does); after 1 ms without work they sleep in the kernel
 * (receive) or in short naps (transmit), so an idle server costs little. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bench.h"
#include "dsb/nic.h"

#define RX_MASK (DSB_NIC_RX_SLOTS - 1u)
#define TX_MASK (DSB_NIC_TX_SLOTS - 1u)
#define HASH_SLOTS (2u * DSB_NIC_PEERS)
#define SPIN_NS 1000000ull

typedef struct {
    dsb_peer peer;
    uint8_t mac[6]; /* the peer's own MAC (raw Ethernet); zero over UDP */
} peer_entry;

struct dsb_nic_standin {
    dsb_transport *t;
    dsb_nic_queues *q;
    pthread_t rx_th, tx_th;
    int rx_started, tx_started;
    atomic_int stop;
    peer_entry peers[DSB_NIC_PEERS];
    atomic_uint n_peers;            /* entries below are immutable once counted */
    uint32_t hash[HASH_SLOTS];      /* receive thread only: handle + 1, 0 = empty */
    _Atomic uint64_t rx_frames, rx_bytes, rx_ring_full, rx_no_peer;
    _Atomic uint64_t tx_frames, tx_failed, tx_bad_peer, doorbells;
    _Atomic uint64_t rx_calls, tx_calls, rx_busy_ns, tx_busy_ns;
    _Atomic uint64_t rx_cpu_ns, tx_cpu_ns;
};

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void nap_ns(long ns)
{
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

/* The handle of a peer (receive thread only); UINT32_MAX when the table is full. */
static uint32_t peer_handle(dsb_nic_standin *s, const dsb_peer *p, const uint8_t *src_mac)
{
    uint32_t h = 2166136261u; /* FNV-1a over the address bytes */
    for (uint32_t i = 0; i < p->len && i < sizeof p->bytes; i++) h = (h ^ p->bytes[i]) * 16777619u;
    for (uint32_t k = 0; k < HASH_SLOTS; k++) {
        uint32_t *e = &s->hash[(h + k) % HASH_SLOTS];
        if (*e == 0) {
            uint32_t n = atomic_load_explicit(&s->n_peers, memory_order_relaxed);
            if (n >= DSB_NIC_PEERS) return UINT32_MAX;
            s->peers[n].peer = *p;
            memcpy(s->peers[n].mac, src_mac, 6);
            atomic_store_explicit(&s->n_peers, n + 1u, memory_order_release);
            *e = n + 1u;
            return n;
        }
        const peer_entry *pe = &s->peers[*e - 1u];
        if (pe->peer.len == p->len && !memcmp(pe->peer.bytes, p->bytes, p->len)) return *e - 1u;
    }
    return UINT32_MAX;
}

static void *rx_thread(void *arg)
{
    dsb_nic_standin *s = arg;
    dsb_nic_queues *q = s->q;
    dsb_frame f[DSB_TRANSPORT_BATCH];
    uint8_t *scratch = malloc((size_t)DSB_TRANSPORT_BATCH * DSB_NIC_RX_FRAME);
    uint32_t seq = 0;
    uint64_t idle_since = bench_now_ns();
    cm_err err;
    while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
        const uint32_t used = seq - __atomic_load_n(&q->rx_consumer, __ATOMIC_ACQUIRE);
        const uint32_t room = DSB_NIC_RX_SLOTS - used;
        const int max = room < DSB_TRANSPORT_BATCH ? (int)room : DSB_TRANSPORT_BATCH;
        const int full = max == 0;
        const int n_slots = full ? DSB_TRANSPORT_BATCH : max;
        for (int i = 0; i < n_slots; i++) {
            f[i].data = full ? scratch + (size_t)i * DSB_NIC_RX_FRAME
                             : q->rx_frames[(seq + (uint32_t)i) & RX_MASK];
            f[i].cap = DSB_NIC_RX_FRAME;
        }
        const uint64_t t_call = bench_now_ns();
        const int64_t wait = t_call - idle_since < SPIN_NS ? 0 : 1000000;
        const int n = s->t->recv(s->t, f, n_slots, wait, &err);
        if (n <= 0) continue; /* transport errors are transient here (EINTR) */
        idle_since = bench_now_ns();
        if (wait == 0) { /* a non-blocking call that found frames: socket work only */
            atomic_fetch_add_explicit(&s->rx_calls, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&s->rx_busy_ns, idle_since - t_call, memory_order_relaxed);
        }
        if (full) { /* what a NIC does with a full ring */
            atomic_fetch_add(&s->rx_ring_full, (uint64_t)n);
            continue;
        }
        uint64_t bytes = 0;
        for (int i = 0; i < n; i++) {
            uint8_t *fr = q->rx_frames[(seq + (uint32_t)i) & RX_MASK];
            uint32_t len = f[i].len;
            /* the packet transport drops frames for other MACs by swapping
               buffer pointers: frame i may lie in a later slot (in order, so
               the copy never overwrites a frame still to be moved) */
            if (f[i].data != fr) memmove(fr, f[i].data, len);
            bytes += len;
            if (len >= 12) {
                uint32_t h = peer_handle(s, &f[i].peer, fr + 6);
                if (h == UINT32_MAX) atomic_fetch_add(&s->rx_no_peer, 1);
                memcpy(fr + 6, &h, 4); /* the handle rides in the source MAC */
                fr[10] = fr[11] = 0;
            }
            if (f[i].truncated) len |= DSB_NIC_RX_TRUNCATED;
            const uint32_t r = seq + (uint32_t)i;
            __atomic_store_n(&q->rx_ready[r & RX_MASK], ((unsigned long long)(r + 1u) << 32) | len,
                             __ATOMIC_RELEASE);
        }
        seq += (uint32_t)n;
        atomic_fetch_add(&s->rx_frames, (uint64_t)n);
        atomic_fetch_add(&s->rx_bytes, bytes);
    }
    free(scratch);
    atomic_store(&s->rx_cpu_ns, thread_cpu_ns());
    return NULL;
}

static void *tx_thread(void *arg)
{
    dsb_nic_standin *s = arg;
    dsb_nic_queues *q = s->q;
    dsb_frame f[DSB_NIC_TX_BATCH];
    uint32_t done = 0;
    uint64_t idle_since = bench_now_ns();
    while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
        const uint32_t bell = __atomic_load_n(&q->tx_doorbell, __ATOMIC_ACQUIRE);
        if (bell == done) {
            if (bench_now_ns() - idle_since > SPIN_NS) nap_ns(20000);
            continue;
        }
        idle_since = bench_now_ns();
        const uint32_t peers = atomic_load_explicit(&s->n_peers, memory_order_acquire);
        uint32_t d = done;
        while (d != bell) {
            int m = 0;
            for (; d != bell && m < (int)DSB_NIC_TX_BATCH; d++) {
                const dsb_nic_desc de = q->tx_desc[d & TX_MASK];
                uint8_t *fr = q->tx_frames[de.slot & TX_MASK];
                uint32_t h;
                memcpy(&h, fr, 4);
                if (de.len < 12 || de.len > DSB_NIC_TX_FRAME || h >= peers) {
                    atomic_fetch_add(&s->tx_bad_peer, 1);
                    continue;
                }
                memcpy(fr, s->peers[h].mac, 6);  /* real MACs back (zero over UDP) */
                memcpy(fr + 6, s->t->mac, 6);
                f[m].data = fr;
                f[m].cap = DSB_NIC_TX_FRAME;
                f[m].len = de.len;
                f[m].peer = s->peers[h].peer;
                m++;
            }
            if (m) {
                const uint64_t t_call = bench_now_ns();
                const int sent = s->t->send(s->t, f, m);
                atomic_fetch_add_explicit(&s->tx_calls, 1, memory_order_relaxed);
                atomic_fetch_add_explicit(&s->tx_busy_ns, bench_now_ns() - t_call,
                                          memory_order_relaxed);
                atomic_fetch_add(&s->tx_frames, (uint64_t)sent);
                if (sent < m) atomic_fetch_add(&s->tx_failed, (uint64_t)(m - sent));
            }
        }
        done = bell;
        atomic_fetch_add(&s->doorbells, 1);
        __atomic_store_n(&q->tx_completion, bell, __ATOMIC_RELEASE);
    }
    atomic_store(&s->tx_cpu_ns, thread_cpu_ns());
    return NULL;
}

int dsb_nic_standin_start(dsb_transport *t, dsb_nic_queues *q, dsb_nic_standin **out,
                          cm_err *err)
{
    *out = NULL;
    dsb_nic_standin *s = calloc(1, sizeof *s);
    if (!s) return cm_fail(err, "nic stand-in: out of memory");
    s->t = t;
    s->q = q;
    if (pthread_create(&s->rx_th, NULL, rx_thread, s) != 0) {
        free(s);
        return cm_fail(err, "nic stand-in: could not start the receive thread");
    }
    s->rx_started = 1;
    if (pthread_create(&s->tx_th, NULL, tx_thread, s) != 0) {
        dsb_nic_standin_stop(s, NULL);
        return cm_fail(err, "nic stand-in: could not start the transmit thread");
    }
    s->tx_started = 1;
    *out = s;
    return 0;
}

void dsb_nic_standin_stats(dsb_nic_standin *s, dsb_nic_stats *o)
{
    memset(o, 0, sizeof *o);
    if (!s) return;
    o->rx_frames = atomic_load(&s->rx_frames);
    o->rx_bytes = atomic_load(&s->rx_bytes);
    o->rx_ring_full = atomic_load(&s->rx_ring_full);
    o->rx_no_peer = atomic_load(&s->rx_no_peer);
    o->tx_frames = atomic_load(&s->tx_frames);
    o->tx_failed = atomic_load(&s->tx_failed);
    o->tx_bad_peer = atomic_load(&s->tx_bad_peer);
    o->doorbells = atomic_load(&s->doorbells);
    o->rx_calls = atomic_load(&s->rx_calls);
    o->tx_calls = atomic_load(&s->tx_calls);
    o->rx_busy_s = (double)atomic_load(&s->rx_busy_ns) * 1e-9;
    o->tx_busy_s = (double)atomic_load(&s->tx_busy_ns) * 1e-9;
    o->rx_cpu_s = (double)atomic_load(&s->rx_cpu_ns) * 1e-9;
    o->tx_cpu_s = (double)atomic_load(&s->tx_cpu_ns) * 1e-9;
}

void dsb_nic_standin_stop(dsb_nic_standin *s, dsb_nic_stats *final)
{
    if (final) memset(final, 0, sizeof *final);
    if (!s) return;
    atomic_store(&s->stop, 1);
    if (s->rx_started) pthread_join(s->rx_th, NULL);
    if (s->tx_started) pthread_join(s->tx_th, NULL);
    if (final) dsb_nic_standin_stats(s, final);
    free(s);
}
