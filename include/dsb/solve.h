/* The dSB solve API: B replicas x K steps, best replica returned (seed 000,
 * Sec. II-A).  Backends: `cpu` (threads over replicas; the reference) and
 * `gpu` (request-per-block kernel), bit-exact with each other. */
#ifndef DSB_SOLVE_H
#define DSB_SOLVE_H

#include <stdint.h>

#include "common/error.h"
#include "dsb/model.h"

typedef enum { DSB_BACKEND_CPU = 0, DSB_BACKEND_GPU = 1 } dsb_backend;

typedef struct {
    uint32_t replicas; /* B >= 1 */
    uint32_t steps;    /* K >= 1 */
    float dt;          /* Delta t (client default 1.0, Sec. VI-B) */
    float xi;          /* coupling gain; 0 selects the model's default */
    uint64_t seed;     /* initial states hash (seed, replica, row) */
} dsb_params;

typedef struct {
    uint32_t n, replicas;
    int64_t best_energy2;   /* 2E of the best replica */
    uint32_t best_replica;  /* lowest energy, lowest index on ties */
    uint32_t *best_spins;   /* W words, bit j = 1 for s_j = +1 */
    int64_t *energy2;       /* B entries */
    uint32_t *spins;        /* B x W words, every replica's final spins */
    float *x, *y;           /* B x n final positions, momenta; NULL unless keep_state */
    double seconds;         /* wall time of the solve itself */
} dsb_result;

/* Allocates the result buffers; keep_state also allocates x and y. */
void dsb_result_init(dsb_result *r, uint32_t n, uint32_t replicas, int keep_state);
void dsb_result_free(dsb_result *r);

/* Sets the defaults: B = 8, K = 100, dt = 1, xi = model default, seed = 1. */
void dsb_params_default(dsb_params *p);
/* Checks ranges (B, K >= 1; dt, xi finite, dt > 0). */
int dsb_params_check(const dsb_params *p, cm_err *err);

/* The CPU reference; `threads` = 0 picks the number of online cores.  h may be
 * NULL.  The result must have been initialised for (m->n, p->replicas). */
int dsb_solve_cpu(const dsb_model *m, const int16_t *h, const dsb_params *p, int threads,
                  dsb_result *r, cm_err *err);

/* Backend dispatch: `gpu` reports a clear error when the GPU code was not
 * built, no device is present, or the request does not fit one block. */
int dsb_solve(dsb_backend backend, const dsb_model *m, const int16_t *h, const dsb_params *p,
              dsb_result *r, cm_err *err);

/* Effective coupling gain: p->xi if non-zero, else the model's default. */
float dsb_effective_xi(const dsb_model *m, const dsb_params *p);

#endif
