#define _POSIX_C_SOURCE 200809L
#include "common/bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double bench_now_s(void) { return (double)bench_now_ns() * 1e-9; }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_percentile(double *v, size_t n, double q)
{
    if (n == 0) return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    double pos = q / 100.0 * (double)(n - 1);
    size_t lo = (size_t)floor(pos);
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    double f = pos - (double)lo;
    return v[lo] + (v[hi] - v[lo]) * f;
}

double bench_median(const double *v, size_t n)
{
    if (n == 0) return NAN;
    double *c = cm_malloc(n * sizeof *c);
    memcpy(c, v, n * sizeof *c);
    double m = bench_percentile(c, n, 50.0);
    free(c);
    return m;
}

void bench_progress_start(bench_progress_t *p, const char *label, uint64_t total)
{
    p->label = label;
    p->total = total;
    p->t0 = p->last = bench_now_s();
}

static void progress_line(bench_progress_t *p, uint64_t done, double now, const char *end)
{
    double el = now - p->t0;
    double rate = el > 0 ? (double)done / el : 0.0;
    double eta = rate > 0 && p->total >= done ? (double)(p->total - done) / rate : 0.0;
    fprintf(stderr, "\r%s: %llu/%llu (%.1f/s, ETA %.0f s)%s", p->label, (unsigned long long)done,
            (unsigned long long)p->total, rate, eta, end);
    fflush(stderr);
}

void bench_progress(bench_progress_t *p, uint64_t done)
{
    double now = bench_now_s();
    if (now - p->last < 0.5) return;
    p->last = now;
    progress_line(p, done, now, "   ");
}

void bench_progress_end(bench_progress_t *p, uint64_t done)
{
    progress_line(p, done, bench_now_s(), "\n");
}

void bench_json_machine(json_w *w)
{
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    char cpu[256] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10) == 0) {
                char *c = strchr(line, ':');
                if (c) {
                    snprintf(cpu, sizeof cpu, "%s", c + 2);
                    cpu[strcspn(cpu, "\n")] = 0;
                }
                break;
            }
        }
        fclose(f);
    }
    time_t t = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    json_kv_str(w, "host", host);
    json_kv_str(w, "cpu", cpu);
    json_kv_i64(w, "cpu_cores", sysconf(_SC_NPROCESSORS_ONLN));
    json_kv_str(w, "date", date);
}
