/* Pieces shared by the socket transports (udp, packet). */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include "transport_internal.h"

int dsb_transport_wait_readable(int fd, int64_t timeout_ns)
{
    if (timeout_ns == 0) return 1;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    struct timespec ts, *tp = NULL;
    if (timeout_ns > 0) {
        ts.tv_sec = (time_t)(timeout_ns / 1000000000);
        ts.tv_nsec = (long)(timeout_ns % 1000000000);
        tp = &ts;
    }
    return ppoll(&p, 1, tp, NULL);
}

int dsb_transport_recvmmsg(int fd, const char *kind, dsb_frame *frames, int max,
                           int64_t timeout_ns, struct mmsghdr *mm, void *names,
                           size_t name_stride, socklen_t name_len, void *ctrl, size_t ctrl_stride,
                           size_t ctrl_len, cm_err *err)
{
    if (max > DSB_TRANSPORT_BATCH) max = DSB_TRANSPORT_BATCH;
    int w = dsb_transport_wait_readable(fd, timeout_ns);
    if (w < 0) {
        if (errno == EINTR) return 0;
        return cm_fail(err, "%s: poll: %s", kind, strerror(errno));
    }
    if (w == 0) return 0;
    struct iovec iov[DSB_TRANSPORT_BATCH];
    memset(mm, 0, sizeof(mm[0]) * (size_t)max);
    for (int i = 0; i < max; i++) {
        iov[i].iov_base = frames[i].data;
        iov[i].iov_len = frames[i].cap;
        mm[i].msg_hdr.msg_iov = &iov[i];
        mm[i].msg_hdr.msg_iovlen = 1;
        mm[i].msg_hdr.msg_name = (char *)names + (size_t)i * name_stride;
        mm[i].msg_hdr.msg_namelen = name_len;
        if (ctrl) {
            mm[i].msg_hdr.msg_control = (char *)ctrl + (size_t)i * ctrl_stride;
            mm[i].msg_hdr.msg_controllen = ctrl_len;
        }
    }
    int r = recvmmsg(fd, mm, (unsigned)max, MSG_DONTWAIT | MSG_TRUNC, NULL);
    if (r < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
        return cm_fail(err, "%s: recvmmsg: %s", kind, strerror(errno));
    }
    return r;
}
