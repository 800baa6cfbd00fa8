/* UDP transport: recvmmsg/sendmmsg on one socket; the kernel's per-socket
 * drop count (SO_RXQ_OVFL) is read from every receive so that a datagram
 * lost to a full queue is counted, not silent.  With `reuseport` the socket
 * joins the port's SO_REUSEPORT group (the streaming receiver's socket a
 * thread, src/dsb/service/stream_net.c). */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/bench.h"
#include "dsb/transport.h"
#include "transport_internal.h"

#ifndef SO_RXQ_OVFL
#define SO_RXQ_OVFL 40
#endif

typedef struct {
    dsb_transport base;
    uint64_t drops;
    char ctrl[DSB_TRANSPORT_BATCH][64];
} udp_t;

/* n frames plus a hidden last entry that remembers the block (transports may
 * swap the data pointers of frames among themselves). */
dsb_frame *dsb_frames_alloc_cap(int n, uint32_t cap)
{
    dsb_frame *f = cm_calloc((size_t)n + 1, sizeof *f);
    uint8_t *mem = cm_malloc((size_t)n * cap);
    for (int i = 0; i < n; i++) {
        f[i].data = mem + (size_t)i * cap;
        f[i].cap = cap;
    }
    f[n].data = mem;
    return f;
}

dsb_frame *dsb_frames_alloc(int n) { return dsb_frames_alloc_cap(n, DSB_FRAME_BUF); }

void dsb_frames_free(dsb_frame *f, int n)
{
    if (!f) return;
    free(f[n].data);
    free(f);
}

int dsb_parse_mac(const char *s, uint8_t mac[6])
{
    unsigned v[6];
    char tail;
    if (!s || sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                     &tail) != 6)
        return -1;
    for (int i = 0; i < 6; i++) mac[i] = (uint8_t)v[i];
    return 0;
}

static int udp_recv(dsb_transport *t, dsb_frame *frames, int max, int64_t timeout_ns,
                    cm_err *err)
{
    udp_t *u = (udp_t *)t;
    struct mmsghdr mm[DSB_TRANSPORT_BATCH];
    int r = dsb_transport_recvmmsg(t->fd, "udp", frames, max, timeout_ns, mm, frames[0].peer.bytes,
                                   sizeof(dsb_frame), sizeof frames[0].peer.bytes, u->ctrl,
                                   sizeof u->ctrl[0], sizeof u->ctrl[0], err);
    if (r <= 0) return r;
    uint64_t now = bench_now_ns();
    for (int i = 0; i < r; i++) {
        uint32_t real = mm[i].msg_len;
        frames[i].truncated = real > frames[i].cap || (mm[i].msg_hdr.msg_flags & MSG_TRUNC);
        frames[i].len = real > frames[i].cap ? frames[i].cap : real;
        frames[i].peer.len = mm[i].msg_hdr.msg_namelen;
        frames[i].t_ns = now;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mm[i].msg_hdr); c;
             c = CMSG_NXTHDR(&mm[i].msg_hdr, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
                uint32_t d;
                memcpy(&d, CMSG_DATA(c), 4);
                if (d > u->drops) u->drops = d;
            }
        }
    }
    return r;
}

static int udp_send(dsb_transport *t, const dsb_frame *frames, int n)
{
    int done = 0;
    while (done < n) {
        struct mmsghdr mm[DSB_TRANSPORT_BATCH];
        struct iovec iov[DSB_TRANSPORT_BATCH];
        int k = n - done < DSB_TRANSPORT_BATCH ? n - done : DSB_TRANSPORT_BATCH;
        memset(mm, 0, sizeof(mm[0]) * (size_t)k);
        for (int i = 0; i < k; i++) {
            const dsb_frame *f = &frames[done + i];
            iov[i].iov_base = f->data;
            iov[i].iov_len = f->len;
            mm[i].msg_hdr.msg_iov = &iov[i];
            mm[i].msg_hdr.msg_iovlen = 1;
            mm[i].msg_hdr.msg_name = (void *)f->peer.bytes;
            mm[i].msg_hdr.msg_namelen = f->peer.len;
        }
        int r = sendmmsg(t->fd, mm, (unsigned)k, 0);
        if (r < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == ENOBUFS) {
                /* socket send buffer full: wait briefly and retry */
                struct pollfd p = {.fd = t->fd, .events = POLLOUT};
                if (poll(&p, 1, 10) <= 0) break;
                continue;
            }
            break; /* e.g. ECONNREFUSED from an earlier ICMP: give up on this batch */
        }
        done += r;
    }
    return done;
}

/* The socket's drop count now: SO_MEMINFO where the kernel has it (exact at any
 * moment), else the last SO_RXQ_OVFL value seen on a received datagram (which
 * misses drops after the last datagram that arrived). */
static uint64_t udp_drops(dsb_transport *t)
{
    udp_t *u = (udp_t *)t;
#ifdef SO_MEMINFO
    uint32_t mem[SK_MEMINFO_VARS];
    socklen_t len = sizeof mem;
    if (getsockopt(t->fd, SOL_SOCKET, SO_MEMINFO, mem, &len) == 0 &&
        len > SK_MEMINFO_DROPS * sizeof(uint32_t) && mem[SK_MEMINFO_DROPS] > u->drops)
        u->drops = mem[SK_MEMINFO_DROPS];
#endif
    return u->drops;
}

static void udp_close(dsb_transport *t)
{
    if (!t) return;
    close(t->fd);
    free(t);
}

static int fill_addr(const char *addr, uint16_t port, dsb_peer *p, cm_err *err, const char *what)
{
    memset(p, 0, sizeof *p);
    struct sockaddr_in a4;
    struct sockaddr_in6 a6;
    memset(&a4, 0, sizeof a4);
    memset(&a6, 0, sizeof a6);
    if (inet_pton(AF_INET, addr, &a4.sin_addr) == 1) {
        a4.sin_family = AF_INET;
        a4.sin_port = htons(port);
        memcpy(p->bytes, &a4, sizeof a4);
        p->len = sizeof a4;
        return 0;
    }
    if (inet_pton(AF_INET6, addr, &a6.sin6_addr) == 1) {
        a6.sin6_family = AF_INET6;
        a6.sin6_port = htons(port);
        memcpy(p->bytes, &a6, sizeof a6);
        p->len = sizeof a6;
        return 0;
    }
    return cm_fail(err, "%s: '%s' is not a numeric IPv4 or IPv6 address", what, addr);
}

int dsb_transport_open_udp(const dsb_transport_config *c, dsb_transport **out, cm_err *err)
{
    dsb_peer local;
    const char *bind_addr = c->bind_addr ? c->bind_addr : "127.0.0.1";
    if (fill_addr(bind_addr, c->bind_port, &local, err, "udp bind address") != 0) return -1;
    dsb_peer peer = {0};
    if (c->peer_addr &&
        fill_addr(c->peer_addr, c->peer_port, &peer, err, "udp server address") != 0)
        return -1;
    int family = ((struct sockaddr *)local.bytes)->sa_family;
    int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return cm_fail(err, "udp: socket: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof one);
    int buf = c->rcvbuf_bytes > 0 ? c->rcvbuf_bytes : 8 << 20;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf) != 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof buf) != 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    if (c->reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) {
        int e = errno;
        close(fd);
        return cm_fail(err, "udp: SO_REUSEPORT on %s:%u: %s", bind_addr, c->bind_port,
                       strerror(e));
    }
    if (bind(fd, (struct sockaddr *)local.bytes, local.len) != 0) {
        int e = errno;
        close(fd);
        return cm_fail(err, "udp: bind %s:%u: %s", bind_addr, c->bind_port, strerror(e));
    }
    udp_t *u = cm_calloc(1, sizeof *u);
    u->base.kind = "udp";
    u->base.recv = udp_recv;
    u->base.send = udp_send;
    u->base.kernel_drops = udp_drops;
    u->base.close = udp_close;
    u->base.fd = fd;
    u->base.default_peer = peer;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        u->base.port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                      : ((struct sockaddr_in *)&ss)->sin_port);
    *out = &u->base;
    return 0;
}

int dsb_transport_open(const dsb_transport_config *c, dsb_transport **out, cm_err *err)
{
    const char *k = c->kind ? c->kind : "udp";
    if (!strcmp(k, "udp")) return dsb_transport_open_udp(c, out, err);
    if (!strcmp(k, "packet")) return dsb_transport_open_packet(c, out, err);
    return cm_fail(err, "transport '%s': expected udp or packet", k);
}
