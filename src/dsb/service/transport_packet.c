/* AF_PACKET transport: raw Ethernet frames with the service EtherType on one
 * interface (Sec. III: the NIC can select traffic by EtherType alone).
 * recvmmsg/sendmmsg in batches; drops counted by PACKET_STATISTICS. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/bench.h"
#include "dsb/transport.h"
#include "transport_internal.h"
#include "dsb/wire.h"

typedef struct {
    dsb_transport base;
    int ifindex;
    uint64_t drops;
} pkt_t;

static int pkt_recv(dsb_transport *t, dsb_frame *frames, int max, int64_t timeout_ns, cm_err *err)
{
    struct mmsghdr mm[DSB_TRANSPORT_BATCH];
    struct sockaddr_ll from[DSB_TRANSPORT_BATCH];
    int r = dsb_transport_recvmmsg(t->fd, "packet", frames, max, timeout_ns, mm, from,
                                   sizeof from[0], sizeof from[0], NULL, 0, 0, err);
    if (r <= 0) return r;
    uint64_t now = bench_now_ns();
    int k = 0;
    static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    for (int i = 0; i < r; i++) {
        uint32_t real = mm[i].msg_len;
        /* our own transmissions come back on loopback: skip them, and frames
         * addressed to another endpoint sharing the interface */
        if (from[i].sll_pkttype == PACKET_OUTGOING ||
            (real >= 6 && memcmp(frames[i].data, t->mac, 6) != 0 &&
             memcmp(frames[i].data, bcast, 6) != 0)) {
            t->not_for_us++;
            continue;
        }
        if (k != i) { /* compact: move the buffer pointers, not the bytes */
            uint8_t *tmp = frames[k].data;
            uint32_t cap = frames[k].cap;
            frames[k].data = frames[i].data;
            frames[k].cap = frames[i].cap;
            frames[i].data = tmp;
            frames[i].cap = cap;
        }
        frames[k].truncated = real > frames[k].cap || (mm[i].msg_hdr.msg_flags & MSG_TRUNC);
        frames[k].len = real > frames[k].cap ? frames[k].cap : real;
        memcpy(frames[k].peer.bytes, &from[i], sizeof from[i] < sizeof frames[k].peer.bytes
                                                   ? sizeof from[i]
                                                   : sizeof frames[k].peer.bytes);
        frames[k].peer.len = sizeof(struct sockaddr_ll);
        frames[k].t_ns = now;
        k++;
    }
    return k;
}

static int pkt_send(dsb_transport *t, const dsb_frame *frames, int n)
{
    pkt_t *p = (pkt_t *)t;
    int done = 0;
    while (done < n) {
        struct mmsghdr mm[DSB_TRANSPORT_BATCH];
        struct iovec iov[DSB_TRANSPORT_BATCH];
        struct sockaddr_ll to[DSB_TRANSPORT_BATCH];
        int k = n - done < DSB_TRANSPORT_BATCH ? n - done : DSB_TRANSPORT_BATCH;
        memset(mm, 0, sizeof(mm[0]) * (size_t)k);
        for (int i = 0; i < k; i++) {
            const dsb_frame *f = &frames[done + i];
            memset(&to[i], 0, sizeof to[i]);
            to[i].sll_family = AF_PACKET;
            to[i].sll_protocol = htons(DSB_WIRE_ETHERTYPE);
            to[i].sll_ifindex = p->ifindex;
            to[i].sll_halen = 6;
            memcpy(to[i].sll_addr, f->data, 6); /* destination MAC from the frame */
            iov[i].iov_base = f->data;
            iov[i].iov_len = f->len;
            mm[i].msg_hdr.msg_iov = &iov[i];
            mm[i].msg_hdr.msg_iovlen = 1;
            mm[i].msg_hdr.msg_name = &to[i];
            mm[i].msg_hdr.msg_namelen = sizeof to[i];
        }
        int r = sendmmsg(t->fd, mm, (unsigned)k, 0);
        if (r < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == ENOBUFS) {
                struct pollfd pf = {.fd = t->fd, .events = POLLOUT};
                if (poll(&pf, 1, 10) <= 0) break;
                continue;
            }
            break;
        }
        done += r;
    }
    return done;
}

static uint64_t pkt_drops(dsb_transport *t)
{
    pkt_t *p = (pkt_t *)t;
    struct tpacket_stats st;
    socklen_t len = sizeof st;
    if (getsockopt(t->fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0) p->drops += st.tp_drops;
    return p->drops;
}

static void pkt_close(dsb_transport *t)
{
    if (!t) return;
    close(t->fd);
    free(t);
}

int dsb_transport_open_packet(const dsb_transport_config *c, dsb_transport **out, cm_err *err)
{
    const char *ifname = c->ifname ? c->ifname : "lo";
    if (strlen(ifname) >= IFNAMSIZ)
        return cm_fail(err, "packet: interface name '%s' is longer than %d characters", ifname,
                       IFNAMSIZ - 1);
    uint8_t own[6], peer[6] = {0x02, 0, 0, 0, 0, 0x01};
    int own_given = 0;
    if (c->mac) {
        if (dsb_parse_mac(c->mac, own) != 0)
            return cm_fail(err, "packet: --mac '%s': expected aa:bb:cc:dd:ee:ff", c->mac);
        own_given = 1;
    }
    if (c->peer_mac && dsb_parse_mac(c->peer_mac, peer) != 0)
        return cm_fail(err, "packet: server MAC '%s': expected aa:bb:cc:dd:ee:ff", c->peer_mac);
    int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(DSB_WIRE_ETHERTYPE));
    if (fd < 0)
        return cm_fail(err, "packet: socket(AF_PACKET): %s (raw frames need root or CAP_NET_RAW; "
                            "use --transport udp)",
                       strerror(errno));
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    memcpy(ifr.ifr_name, ifname, strlen(ifname));
    if (ioctl(fd, SIOCGIFINDEX, &ifr) != 0) {
        int e = errno;
        close(fd);
        return cm_fail(err, "packet: interface '%s': %s", ifname, strerror(e));
    }
    int ifindex = ifr.ifr_ifindex;
    if (!own_given) {
        memset(own, 0, 6);
        if (ioctl(fd, SIOCGIFHWADDR, &ifr) == 0) memcpy(own, ifr.ifr_hwaddr.sa_data, 6);
        static const uint8_t zero[6] = {0};
        if (!memcmp(own, zero, 6)) { /* loopback: a locally administered address */
            static const uint8_t srv[6] = {0x02, 0, 0, 0, 0, 0x01};
            memcpy(own, srv, 6);
        }
    }
    struct sockaddr_ll sll;
    memset(&sll, 0, sizeof sll);
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(DSB_WIRE_ETHERTYPE);
    sll.sll_ifindex = ifindex;
    if (bind(fd, (struct sockaddr *)&sll, sizeof sll) != 0) {
        int e = errno;
        close(fd);
        return cm_fail(err, "packet: bind to '%s': %s", ifname, strerror(e));
    }
    int buf = c->rcvbuf_bytes > 0 ? c->rcvbuf_bytes : 8 << 20;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf) != 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    pkt_t *p = cm_calloc(1, sizeof *p);
    p->base.kind = "packet";
    p->base.recv = pkt_recv;
    p->base.send = pkt_send;
    p->base.kernel_drops = pkt_drops;
    p->base.close = pkt_close;
    p->base.fd = fd;
    memcpy(p->base.mac, own, 6);
    memcpy(p->base.peer_mac, peer, 6);
    p->ifindex = ifindex;
    *out = &p->base;
    return 0;
}
