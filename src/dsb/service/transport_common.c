/* Pieces shared by the socket transports (udp, packet). */
#include <poll.h>
#include <time.h>

#include "dsb/transport.h"

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
