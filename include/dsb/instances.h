/* Problem instances: generators of seed 000 Sec. VI-B and file readers.
 *
 * An instance is a dense int8 J (n x n, symmetric, zero diagonal) plus an
 * int16 field h, with what a user needs to read the answer back in their own
 * terms (cut value for graphs, QUBO objective, known ground state). */
#ifndef DSB_INSTANCES_H
#define DSB_INSTANCES_H

#include <stdint.h>

#include "common/error.h"

typedef enum {
    DSB_OBJ_ISING = 0, /* report 2E only */
    DSB_OBJ_MAXCUT,    /* J = -W: cut = (W_total - E) / 2 */
    DSB_OBJ_QUBO       /* objective = (E + qubo_offset) * qubo_scale */
} dsb_objective;

typedef struct {
    char name[160];        /* e.g. "sk:n=1024,seed=1000" or the file path */
    uint32_t n;
    int8_t *J;             /* n*n row-major, owned */
    int16_t *h;            /* n, owned (zeros when the instance has no field) */
    uint32_t n_fields;     /* portfolio: size of the field pool (256), else 0 */
    int16_t *fields;       /* n_fields x n, owned, or NULL; h == fields[0] */
    dsb_objective objective;
    int64_t weight_total;  /* MAXCUT: sum over edges i<j of W_ij */
    double qubo_offset;    /* QUBO: objective = (E + qubo_offset) * qubo_scale */
    double qubo_scale;
    double quant_scale;    /* portfolio/QUBO: real units per integer unit (1 if exact) */
    int has_ground;        /* a known ground state (Mattis) */
    int64_t ground_energy2;
    uint64_t seed;         /* generator seed (model seed 1000+m, Sec. VI-B) */
    double *field_offset;  /* portfolio: qubo_offset of each pool field (n_fields), owned,
                              or NULL; field_offset[0] == qubo_offset */
} dsb_instance;

/* Largest n any generator or reader produces (a dense int8 J of n*n bytes). */
#define DSB_INSTANCE_MAX_N 32768u
#define DSB_TERNARY_DEFAULT_DENSITY 0.05
#define DSB_PORTFOLIO_DEFAULT_FIELDS 256u
#define DSB_PORTFOLIO_MAX_FIELDS 4096u
#define DSB_DEFAULT_MODEL_SEED 1000u

/* Generators.  Seeds: model seed 1000+m for model index m (Sec. VI-B). */
int dsb_gen_sk(uint32_t n, uint64_t seed, dsb_instance *out, cm_err *err);
int dsb_gen_ternary(uint32_t n, double density, uint64_t seed, dsb_instance *out, cm_err *err);
/* Eq. (5): 4-factor covariance, cardinality target n/10, AR(1) expected
 * returns giving a pool of n_fields (256) field vectors, one common int8/int16
 * quantization scale. */
int dsb_gen_portfolio(uint32_t n, uint32_t n_fields, uint64_t seed, dsb_instance *out,
                      cm_err *err);
/* Mattis planted: J_ij = eta_i eta_j, ground state s = eta, 2E = -n(n-1). */
int dsb_gen_mattis(uint32_t n, uint64_t seed, dsb_instance *out, cm_err *err);

/* "sk:n=1024[,seed=1000]", "ternary:n=256[,density=0.05][,seed=..]",
 * "portfolio:n=128[,fields=256][,seed=..]", "mattis:n=1024[,seed=..]". */
int dsb_gen_parse(const char *spec, dsb_instance *out, cm_err *err);

/* Readers; every malformed input is rejected with "file:line: reason".
 *   Gset / rudy edge list: "n m" then m lines "u v w" (1-based) -> MAXCUT
 *   MatrixMarket coordinate (symmetric or general; integer/real/pattern) -> J
 *   QUBO text (qbsolv style: "p qubo 0 maxNodes nNodes nCouplers", then
 *     "i i d" diagonal and "i j q" coupler lines, 0-based; "c" comments) -> QUBO
 * dsb_read_file picks the reader from the extension (.mtx, .qubo; anything
 * else is read as an edge list). */
int dsb_read_gset(const char *path, dsb_instance *out, cm_err *err);
int dsb_read_mtx(const char *path, dsb_instance *out, cm_err *err);
int dsb_read_qubo(const char *path, dsb_instance *out, cm_err *err);
int dsb_read_file(const char *path, dsb_instance *out, cm_err *err);

/* The user-facing objective (cut, QUBO value) for an energy 2E. */
double dsb_instance_objective(const dsb_instance *in, int64_t energy2);
/* The same for a solve that used field `field` of the pool (portfolio: the
 * Eq. (5) value for that field's expected returns mu_t); equals
 * dsb_instance_objective for field 0 and for instances without a pool. */
double dsb_instance_objective_field(const dsb_instance *in, uint32_t field, int64_t energy2);

/* The real-valued portfolio model behind dsb_gen_portfolio (for references
 * and tests): Eq. (5) is  q x^T Sigma x - mu_t^T x + lambda (1^T x - k)^2.
 * Parameters and magnitudes are documented in docs/formats.md. */
typedef struct {
    uint32_t n, n_fields, k;
    double q, lambda;
    double *sigma; /* n*n row-major covariance F F^T + D, owned */
    double *mu;    /* n_fields x n expected returns (AR(1) over t), owned */
} dsb_portfolio_data;
int dsb_portfolio_data_gen(uint32_t n, uint32_t n_fields, uint64_t seed, dsb_portfolio_data *out,
                           cm_err *err);
void dsb_portfolio_data_free(dsb_portfolio_data *d);
const char *dsb_objective_name(dsb_objective o);

void dsb_instance_free(dsb_instance *in);

/* Writes spins (bit i = 1 for s_i = +1) one +1 / -1 per line, as `dsb solve
 * --spins-out` and `dsb stream --spins-out` give them. */
int dsb_write_spins(const char *path, const uint32_t *bits, uint32_t n, cm_err *err);

#endif
