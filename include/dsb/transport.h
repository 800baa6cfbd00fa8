/* Frame transports of the dsb service, behind one small interface:
 *   udp     one UDP socket; the datagram is the whole frame (the 14-byte
 *           Ethernet part carried with zero MACs), the port replaces the
 *           EtherType (Sec. III).  Unprivileged.  The default.
 *   packet  an AF_PACKET raw socket bound to one interface and the service
 *           EtherType; needs CAP_NET_RAW.  On an interface without a MAC
 *           (loopback) each endpoint takes a locally administered MAC of its
 *           own and drops frames addressed to another one.
 * Both receive and send in batches (recvmmsg / sendmmsg).  A NIC stand-in or a
 * GPUNetIO backend plugs in by filling the same struct. */
#ifndef DSB_TRANSPORT_H
#define DSB_TRANSPORT_H

#include <stdint.h>

#include "common/error.h"

#define DSB_FRAME_BUF 2048u /* receive buffer per frame (> DSB_WIRE_MAX_FRAME) */
#define DSB_TRANSPORT_BATCH 64

/* Opaque peer address (sockaddr_in / sockaddr_in6 / sockaddr_ll). */
typedef struct {
    uint8_t bytes[28];
    uint32_t len;
} dsb_peer;

typedef struct {
    uint8_t *data;   /* buffer of cap bytes */
    uint32_t cap;
    uint32_t len;    /* received / to send */
    int truncated;   /* the datagram was longer than cap (len = cap) */
    dsb_peer peer;   /* source on receive, destination on send */
    uint64_t t_ns;   /* receive timestamp (bench_now_ns after the batch returned) */
} dsb_frame;

typedef struct dsb_transport dsb_transport;
struct dsb_transport {
    const char *kind;
    /* Receives up to max frames into frames[i].data (cap set by the caller).
     * Waits up to timeout_ns for the first (0: do not wait).  Returns the
     * count, 0 on timeout, -1 on error (err set). */
    int (*recv)(dsb_transport *t, dsb_frame *frames, int max, int64_t timeout_ns, cm_err *err);
    /* Sends n frames (each to its peer) in as few calls as possible; returns
     * how many were handed to the kernel. */
    int (*send)(dsb_transport *t, const dsb_frame *frames, int n);
    /* Frames the kernel dropped for this endpoint so far (socket queue full). */
    uint64_t (*kernel_drops)(dsb_transport *t);
    void (*close)(dsb_transport *t);
    int fd;
    uint8_t mac[6];         /* own MAC written into frames (zero for udp) */
    uint8_t peer_mac[6];    /* default destination MAC (zero for udp) */
    dsb_peer default_peer;  /* destination given at open (clients) */
    uint16_t port;          /* udp: the bound local port */
    uint64_t not_for_us;    /* packet: frames for another MAC or our own outgoing */
};

typedef struct {
    const char *kind;       /* "udp" (default) or "packet" */
    /* udp */
    const char *bind_addr;  /* default 127.0.0.1 */
    uint16_t bind_port;     /* 0 = ephemeral */
    const char *peer_addr;  /* clients: the server (NULL for servers) */
    uint16_t peer_port;
    /* packet */
    const char *ifname;     /* default "lo" */
    const char *mac;        /* own MAC "aa:bb:..", NULL = the interface's, or on
                               loopback 02:00:00:00:00:01 */
    const char *peer_mac;   /* clients: the server's MAC (default 02:00:00:00:00:01) */
    int rcvbuf_bytes;       /* socket receive buffer; 0 = 8 MiB */
    int reuseport;          /* udp: SO_REUSEPORT before bind (several sockets on one port,
                               the kernel spreads datagrams over them) */
} dsb_transport_config;

int dsb_transport_open(const dsb_transport_config *c, dsb_transport **out, cm_err *err);
int dsb_transport_open_udp(const dsb_transport_config *c, dsb_transport **out, cm_err *err);
int dsb_transport_open_packet(const dsb_transport_config *c, dsb_transport **out, cm_err *err);

/* Waits until fd is readable: 1 readable (also at once for timeout 0), 0 on
 * timeout, -1 on error (errno set; EINTR included).  timeout < 0: forever. */
int dsb_transport_wait_readable(int fd, int64_t timeout_ns);

/* Parses "aa:bb:cc:dd:ee:ff"; -1 if malformed. */
int dsb_parse_mac(const char *s, uint8_t mac[6]);

/* Frame buffers for receiving: n frames of DSB_FRAME_BUF bytes each (the
 * streaming solver's 4096-byte frames: _cap with a larger cap). */
dsb_frame *dsb_frames_alloc(int n);
dsb_frame *dsb_frames_alloc_cap(int n, uint32_t cap);
void dsb_frames_free(dsb_frame *f, int n);

#endif
