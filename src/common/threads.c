/* Threading helpers (include/common/threads.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "common/threads.h"

void cm_run_threads(uint32_t count, void *(*fn)(void *), void *args, size_t arg_size)
{
    if (count == 0) return;
    pthread_t *tids = cm_malloc(count * sizeof *tids);
    int *started = cm_calloc(count, sizeof *started);
    for (uint32_t t = 1; t < count; t++)
        started[t] = pthread_create(&tids[t], NULL, fn, (char *)args + t * arg_size) == 0;
    fn(args);
    for (uint32_t t = 1; t < count; t++) {
        if (started[t]) pthread_join(tids[t], NULL);
        else fn((char *)args + t * arg_size);
    }
    free(tids);
    free(started);
}

uint32_t cm_online_cpus(void)
{
    const long c = sysconf(_SC_NPROCESSORS_ONLN);
    return c > 0 ? (uint32_t)c : 1u;
}

void cm_sleep_s(double s)
{
    if (!(s > 0)) return;
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}
