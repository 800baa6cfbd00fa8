/* Small threading helpers of the common layer. */
#ifndef COMMON_THREADS_H
#define COMMON_THREADS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Runs fn on each of `count` argument blocks (args + t * arg_size), count - 1 of
 * them on new threads and the first on the caller's; a thread that cannot be
 * started has its block run on the caller's after the others.  Returns when
 * every block is done. */
void cm_run_threads(uint32_t count, void *(*fn)(void *), void *args, size_t arg_size);

/* The CPUs online (sysconf), at least 1: what "one thread a core" defaults count from; each caller applies its own
 * cap.  A file read under glibc, so not for a hot path's every call. */
uint32_t cm_online_cpus(void);

/* Sleeps s seconds (resumed after signals); nothing for s <= 0. */
void cm_sleep_s(double s);

#ifdef __cplusplus
}
#endif

#endif
