/* The CPU reference solver: B replicas x K dSB steps, threads over replicas
 * (seed 000, Sec. II-A).  Every arithmetic step comes from dsb/core.h, the same
 * functions the GPU kernels call, so the two agree bit for bit. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/bench.h"
#include "common/threads.h"
#include "dsb/core.h"
#include "dsb/gpu.h"
#include "dsb/solve.h"

void dsb_params_default(dsb_params *p)
{
    p->replicas = 8;
    p->steps = 100;
    p->dt = 1.0f;
    p->xi = 0.0f;
    p->seed = 1;
}

int dsb_params_check(const dsb_params *p, cm_err *err)
{
    if (p->replicas < 1) return cm_fail(err, "replicas = 0: expected at least 1");
    if (p->steps < 1) return cm_fail(err, "steps = 0: expected at least 1");
    if (!isfinite(p->dt) || p->dt <= 0.0f)
        return cm_fail(err, "dt = %g: expected a finite number > 0", (double)p->dt);
    if (!isfinite(p->xi) || p->xi < 0.0f)
        return cm_fail(err, "xi = %g: expected a finite number >= 0 (0 = model default)",
                       (double)p->xi);
    return 0;
}

float dsb_effective_xi(const dsb_model *m, const dsb_params *p)
{
    return p->xi != 0.0f ? p->xi : m->xi_default;
}

void dsb_result_init(dsb_result *r, uint32_t n, uint32_t replicas, int keep_state)
{
    memset(r, 0, sizeof *r);
    uint32_t W = dsb_words(n);
    r->n = n;
    r->replicas = replicas;
    r->best_spins = cm_calloc(W, sizeof(uint32_t));
    r->energy2 = cm_calloc(replicas, sizeof(int64_t));
    r->spins = cm_calloc((size_t)replicas * W, sizeof(uint32_t));
    if (keep_state) {
        r->x = cm_calloc((size_t)replicas * n, sizeof(float));
        r->y = cm_calloc((size_t)replicas * n, sizeof(float));
    }
}

void dsb_result_free(dsb_result *r)
{
    free(r->best_spins);
    free(r->energy2);
    free(r->spins);
    free(r->x);
    free(r->y);
    memset(r, 0, sizeof *r);
}

typedef struct {
    const dsb_model *m;
    const int16_t *h;
    const dsb_params *p;
    float xi;
    dsb_result *r;
    uint32_t first, stride; /* replicas first, first+stride, ... */
} worker_arg;

/* Packs the spin bits of x (and, for INT8, the +-1 bytes) for one replica. */
static void pack_signs(const float *x, uint32_t n, uint32_t W, uint32_t *v, int8_t *s8)
{
    memset(v, 0, W * sizeof *v);
    for (uint32_t i = 0; i < n; i++) v[i / 32] |= dsb_spin_bit(x[i]) << (i % 32);
    if (s8)
        for (uint32_t i = 0; i < n; i++) s8[i] = (int8_t)dsb_sign(x[i]);
}

static void solve_replica(const worker_arg *a, uint32_t b, float *x, float *y, uint32_t *v,
                          int8_t *s8)
{
    const dsb_model *m = a->m;
    uint32_t n = m->n, W = m->words, K = a->p->steps;
    for (uint32_t i = 0; i < n; i++) dsb_initial_state(a->p->seed, b, i, &x[i], &y[i]);
    for (uint32_t k = 0; k < K; k++) {
        float damping = dsb_damping(k, K);
        pack_signs(x, n, W, v, s8);
        for (uint32_t i = 0; i < n; i++) {
            int32_t acc = dsb_model_row_sum(m, i, v, s8) + (a->h ? a->h[i] : 0);
            dsb_step(&x[i], &y[i], acc, damping, a->xi, a->p->dt);
        }
    }
    uint32_t *spins = a->r->spins + (size_t)b * W;
    pack_signs(x, n, W, spins, NULL);
    a->r->energy2[b] = dsb_energy2(m, a->h, spins);
    if (a->r->x) {
        memcpy(a->r->x + (size_t)b * n, x, n * sizeof *x);
        memcpy(a->r->y + (size_t)b * n, y, n * sizeof *y);
    }
}

static void *worker(void *arg)
{
    const worker_arg *a = arg;
    uint32_t n = a->m->n;
    float *x = cm_malloc(n * sizeof *x), *y = cm_malloc(n * sizeof *y);
    uint32_t *v = cm_malloc(a->m->words * sizeof *v);
    int8_t *s8 = a->m->format == DSB_FMT_INT8 ? cm_calloc(dsb_padded_n(n), 1) : NULL;
    for (uint32_t b = a->first; b < a->p->replicas; b += a->stride) solve_replica(a, b, x, y, v, s8);
    free(x);
    free(y);
    free(v);
    free(s8);
    return NULL;
}

int dsb_solve_cpu(const dsb_model *m, const int16_t *h, const dsb_params *p, int threads,
                  dsb_result *r, cm_err *err)
{
    if (dsb_params_check(p, err)) return -1;
    if (r->n != m->n || r->replicas != p->replicas)
        return cm_fail(err, "result buffers are for n=%u B=%u, the request is n=%u B=%u", r->n,
                       r->replicas, m->n, p->replicas);
    if (threads <= 0) threads = (int)cm_online_cpus();
    if ((uint32_t)threads > p->replicas) threads = (int)p->replicas;

    double t0 = bench_now_s();
    worker_arg *args = cm_malloc((size_t)threads * sizeof *args);
    for (int t = 0; t < threads; t++)
        args[t] = (worker_arg){m, h, p, dsb_effective_xi(m, p), r, (uint32_t)t, (uint32_t)threads};
    cm_run_threads((uint32_t)threads, worker, args, sizeof *args);
    free(args);

    uint32_t best = 0;
    for (uint32_t b = 1; b < p->replicas; b++)
        if (r->energy2[b] < r->energy2[best]) best = b;
    r->best_replica = best;
    r->best_energy2 = r->energy2[best];
    memcpy(r->best_spins, r->spins + (size_t)best * m->words, m->words * sizeof(uint32_t));
    r->seconds = bench_now_s() - t0;
    return 0;
}

int dsb_solve(dsb_backend backend, const dsb_model *m, const int16_t *h, const dsb_params *p,
              dsb_result *r, cm_err *err)
{
    if (backend == DSB_BACKEND_GPU) return dsb_solve_gpu(m, h, p, r, err);
    return dsb_solve_cpu(m, h, p, 0, r, err);
}
