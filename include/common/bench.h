/* The benchmark harness shared by every bench program: a monotonic clock,
 * percentiles, a progress line with rate and ETA on stderr, and the machine
 * description written into each JSON record. */
#ifndef COMMON_BENCH_H
#define COMMON_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "common/json.h"

/* Monotonic time in nanoseconds / seconds. */
uint64_t bench_now_ns(void);
double bench_now_s(void);

/* Percentile q in [0,100] of v[0..n) (sorts v in place; linear interpolation
 * between closest ranks).  Returns NaN for n == 0. */
double bench_percentile(double *v, size_t n, double q);
/* Median without disturbing v (copies). */
double bench_median(const double *v, size_t n);

/* Progress: call bench_progress(&p, done) as often as convenient; it prints
 * at most every 0.5 s to stderr: "label: done/total (rate/s, ETA s)". */
typedef struct {
    const char *label;
    uint64_t total;
    double t0, last;
} bench_progress_t;
void bench_progress_start(bench_progress_t *p, const char *label, uint64_t total);
void bench_progress(bench_progress_t *p, uint64_t done);
void bench_progress_end(bench_progress_t *p, uint64_t done);

/* Writes "host", "cpu", "date" keys (inside an open object). */
void bench_json_machine(json_w *w);

#endif
