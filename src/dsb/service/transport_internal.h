/* Internal: the receive step shared by the socket transports (udp, packet). */
#ifndef DSB_TRANSPORT_INTERNAL_H
#define DSB_TRANSPORT_INTERNAL_H

#include <stddef.h>
#include <sys/socket.h>

#include "dsb/transport.h"

/* Waits up to timeout_ns for fd to be readable, then takes up to max
 * (<= DSB_TRANSPORT_BATCH) datagrams with one recvmmsg into frames[i].data.
 * The source address of datagram i goes to names + i * name_stride (name_len
 * bytes), its control data to ctrl + i * ctrl_stride (ctrl_len bytes; ctrl
 * may be NULL).  mm[0 .. count) hold the results.  Returns the count, 0 on
 * timeout or when nothing was there, -1 with err set ("kind: ..."). */
int dsb_transport_recvmmsg(int fd, const char *kind, dsb_frame *frames, int max,
                           int64_t timeout_ns, struct mmsghdr *mm, void *names,
                           size_t name_stride, socklen_t name_len, void *ctrl, size_t ctrl_stride,
                           size_t ctrl_len, cm_err *err);

#endif
