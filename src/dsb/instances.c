/* Instance generators of seed 000 Sec. VI-B (SK, ternary, portfolio Eq. (5),
 * Mattis), the generator-spec parser and the objective read-out.
 *
 * Every random number comes from inst_draw(), a counter hash of (seed,
 * stream, a, b) built on dsb_counter_hash: no sequential PRNG state, so a
 * coupling or a loading is the same whatever order it is computed in.  Normal
 * variates are Irwin-Hall sums of 12 uniforms (mean 0, variance 1, bounded by
 * +-6): only IEEE additions, so the portfolio model is bit-identical on every
 * platform (no libm transcendental whose last bit may differ). */
#include "dsb/instances.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsb/core.h"
#include "dsb/model.h"

/* Stream ids: one per random quantity, so that no two share hash inputs. */
enum {
    ST_SK = 1,
    ST_TERNARY = 2,
    ST_MATTIS = 3,
    ST_LOADING = 4, /* factor loadings z, (asset, factor) */
    ST_IDIO = 5,    /* idiosyncratic volatility, asset */
    ST_ALPHA = 6,   /* long-run mean return noise, asset */
    ST_RET = 7      /* AR(1) innovations, (t, asset) */
};

static uint64_t inst_draw(uint64_t seed, uint32_t stream, uint32_t a, uint32_t b)
{
    return dsb_counter_hash(dsb_mix64(seed ^ ((uint64_t)stream << 56)), a, b);
}

/* Uniform in [0, 1) from the top 53 bits (exact). */
static double inst_uniform(uint64_t seed, uint32_t stream, uint32_t a, uint32_t b)
{
    return (double)(inst_draw(seed, stream, a, b) >> 11) * 0x1p-53;
}

/* Approximately standard normal: sum of 12 uniforms minus 6. */
static double inst_normal(uint64_t seed, uint32_t stream, uint32_t a, uint32_t b)
{
    double s = 0.0;
    for (uint32_t r = 0; r < 12; r++) s += inst_uniform(seed, stream, a, b * 12u + r);
    return s - 6.0;
}

static int inst_alloc(dsb_instance *out, uint32_t n, uint64_t seed, cm_err *err, const char *kind,
                      uint32_t min_n, uint32_t max_n)
{
    memset(out, 0, sizeof *out);
    if (n < min_n || n > max_n)
        return cm_fail(err, "%s generator: n = %u out of range, expected %u <= n <= %u", kind, n,
                       min_n, max_n);
    out->n = n;
    out->J = cm_calloc((size_t)n * n, 1);
    out->h = cm_calloc(n, sizeof(int16_t));
    out->objective = DSB_OBJ_ISING;
    out->qubo_scale = 1.0;
    out->quant_scale = 1.0;
    out->seed = seed;
    return 0;
}

int dsb_gen_sk(uint32_t n, uint64_t seed, dsb_instance *out, cm_err *err)
{
    if (inst_alloc(out, n, seed, err, "sk", 2, DSB_INSTANCE_MAX_N)) return -1;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = i + 1; j < n; j++) {
            int8_t v = (inst_draw(seed, ST_SK, i, j) >> 63) ? 1 : -1;
            out->J[(size_t)i * n + j] = v;
            out->J[(size_t)j * n + i] = v;
        }
    snprintf(out->name, sizeof out->name, "sk:n=%u,seed=%llu", n, (unsigned long long)seed);
    return 0;
}

int dsb_gen_ternary(uint32_t n, double density, uint64_t seed, dsb_instance *out, cm_err *err)
{
    if (!(density > 0.0 && density <= 1.0)) {
        memset(out, 0, sizeof *out);
        return cm_fail(err, "ternary generator: density = %g, expected 0 < density <= 1", density);
    }
    if (inst_alloc(out, n, seed, err, "ternary", 2, DSB_INSTANCE_MAX_N)) return -1;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = i + 1; j < n; j++) {
            uint64_t r = inst_draw(seed, ST_TERNARY, i, j);
            if ((double)(r >> 11) * 0x1p-53 >= density) continue;
            int8_t v = (r & 1u) ? 1 : -1; /* low bit: independent of the top 53 */
            out->J[(size_t)i * n + j] = v;
            out->J[(size_t)j * n + i] = v;
        }
    snprintf(out->name, sizeof out->name, "ternary:n=%u,density=%g,seed=%llu", n, density,
             (unsigned long long)seed);
    return 0;
}

int dsb_gen_mattis(uint32_t n, uint64_t seed, dsb_instance *out, cm_err *err)
{
    if (inst_alloc(out, n, seed, err, "mattis", 2, DSB_INSTANCE_MAX_N)) return -1;
    int8_t *eta = cm_malloc(n);
    for (uint32_t i = 0; i < n; i++) eta[i] = (inst_draw(seed, ST_MATTIS, 0, i) >> 63) ? 1 : -1;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++)
            if (i != j) out->J[(size_t)i * n + j] = (int8_t)(eta[i] * eta[j]);
    free(eta);
    out->has_ground = 1;
    out->ground_energy2 = -(int64_t)n * (int64_t)(n - 1);
    snprintf(out->name, sizeof out->name, "mattis:n=%u,seed=%llu", n, (unsigned long long)seed);
    return 0;
}

/* ---- portfolio, Eq. (5) ------------------------------------------------------
 * Magnitudes (annualised, documented in docs/formats.md):
 *   factor volatilities 0.16 (market), 0.08, 0.06, 0.04;
 *   loadings: market beta 1 + 0.3 z, style loadings 0.6 z;
 *   idiosyncratic volatility uniform in [0.15, 0.35);
 *   long-run mean return m_i = 0.02 + 0.05 beta_i + 0.02 z;
 *   AR(1): mu_t = m + phi (mu_{t-1} - m) + 0.03 sqrt(1 - phi^2) z, phi = 0.95,
 *          mu_0 = m + 0.03 z (stationary start, stationary sd 0.03);
 *   q = 5 / k (risk per selected asset independent of n; without the penalty
 *          the optimum holds about 0.4-0.65 k assets);
 *   lambda = 4 q mean_{i != j} Sigma_ij (four times the pairwise risk
 *          curvature, so the penalty pulls the optimum to about 0.9 k). */
#define PF_FACTORS 4
static const double pf_factor_vol[PF_FACTORS] = {0.16, 0.08, 0.06, 0.04};
#define PF_PHI 0.95
#define PF_MU_SD 0.03
#define PF_GAMMA 5.0
#define PF_PENALTY 4.0

int dsb_portfolio_data_gen(uint32_t n, uint32_t n_fields, uint64_t seed, dsb_portfolio_data *out,
                           cm_err *err)
{
    memset(out, 0, sizeof *out);
    if (n < 10 || n > DSB_INT8_MAX_N)
        return cm_fail(err,
                       "portfolio generator: n = %u out of range, expected 10 <= n <= %u (the "
                       "cardinality target n/10 must be >= 1; INT8 sums are exact only up to "
                       "n = %u, Prop. 1(iii))",
                       n, DSB_INT8_MAX_N, DSB_INT8_MAX_N);
    if (n_fields < 1 || n_fields > DSB_PORTFOLIO_MAX_FIELDS)
        return cm_fail(err, "portfolio generator: fields = %u out of range, expected 1..%u",
                       n_fields, DSB_PORTFOLIO_MAX_FIELDS);
    out->n = n;
    out->n_fields = n_fields;
    out->k = n / 10;
    double *F = cm_malloc((size_t)n * PF_FACTORS * sizeof(double));
    double *idio = cm_malloc((size_t)n * sizeof(double));
    double *m = cm_malloc((size_t)n * sizeof(double));
    for (uint32_t i = 0; i < n; i++) {
        double beta = 1.0 + 0.3 * inst_normal(seed, ST_LOADING, i, 0);
        F[(size_t)i * PF_FACTORS] = pf_factor_vol[0] * beta;
        for (uint32_t f = 1; f < PF_FACTORS; f++)
            F[(size_t)i * PF_FACTORS + f] = pf_factor_vol[f] * 0.6 * inst_normal(seed, ST_LOADING, i, f);
        idio[i] = 0.15 + 0.20 * inst_uniform(seed, ST_IDIO, i, 0);
        m[i] = 0.02 + 0.05 * beta + 0.02 * inst_normal(seed, ST_ALPHA, i, 0);
    }
    out->sigma = cm_malloc((size_t)n * n * sizeof(double));
    double off_sum = 0.0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = i; j < n; j++) {
            double s = 0.0;
            for (uint32_t f = 0; f < PF_FACTORS; f++)
                s += F[(size_t)i * PF_FACTORS + f] * F[(size_t)j * PF_FACTORS + f];
            if (i == j) {
                s += idio[i] * idio[i];
            } else {
                off_sum += 2.0 * s;
            }
            out->sigma[(size_t)i * n + j] = s;
            out->sigma[(size_t)j * n + i] = s;
        }
    out->mu = cm_malloc((size_t)n_fields * n * sizeof(double));
    double innov = PF_MU_SD * sqrt(1.0 - PF_PHI * PF_PHI);
    for (uint32_t i = 0; i < n; i++) out->mu[i] = m[i] + PF_MU_SD * inst_normal(seed, ST_RET, 0, i);
    for (uint32_t t = 1; t < n_fields; t++)
        for (uint32_t i = 0; i < n; i++) {
            double prev = out->mu[(size_t)(t - 1) * n + i];
            out->mu[(size_t)t * n + i] =
                m[i] + PF_PHI * (prev - m[i]) + innov * inst_normal(seed, ST_RET, t, i);
        }
    out->q = PF_GAMMA / (double)out->k;
    out->lambda = PF_PENALTY * out->q * (off_sum / ((double)n * (double)(n - 1)));
    free(F);
    free(idio);
    free(m);
    return 0;
}

void dsb_portfolio_data_free(dsb_portfolio_data *d)
{
    if (!d) return;
    free(d->sigma);
    free(d->mu);
    memset(d, 0, sizeof *d);
}

int dsb_gen_portfolio(uint32_t n, uint32_t n_fields, uint64_t seed, dsb_instance *out, cm_err *err)
{
    dsb_portfolio_data d;
    memset(out, 0, sizeof *out);
    if (dsb_portfolio_data_gen(n, n_fields, seed, &d, err)) return -1;
    /* Q = q Sigma + lambda 1 1^T, c_t = -mu_t - 2 lambda k 1;
     * J_ij = -Q_ij / 2 (i != j), h_t,i = -(sum_j Q_ij + c_t,i) / 2;
     * f_t(x) = E(s) + C_t, C_t = (1^T Q 1 + tr Q) / 4 + 1^T c_t / 2 + lambda k^2. */
    const double q = d.q, lam = d.lambda, k = (double)d.k;
    double *row = cm_malloc((size_t)n * sizeof(double)); /* sum_j Q_ij */
    double sumQ = 0.0, trQ = 0.0, maxJ = 0.0, maxH = 0.0;
    for (uint32_t i = 0; i < n; i++) {
        double r = 0.0;
        for (uint32_t j = 0; j < n; j++) {
            double Qij = q * d.sigma[(size_t)i * n + j] + lam;
            r += Qij;
            if (i == j) {
                trQ += Qij;
            } else if (fabs(Qij) / 2.0 > maxJ) {
                maxJ = fabs(Qij) / 2.0;
            }
        }
        row[i] = r;
        sumQ += r;
    }
    double *hr = cm_malloc((size_t)n_fields * n * sizeof(double));
    double *C = cm_malloc((size_t)n_fields * sizeof(double));
    for (uint32_t t = 0; t < n_fields; t++) {
        double csum = 0.0;
        for (uint32_t i = 0; i < n; i++) {
            double c = -d.mu[(size_t)t * n + i] - 2.0 * lam * k;
            double h = -0.5 * (row[i] + c);
            hr[(size_t)t * n + i] = h;
            if (fabs(h) > maxH) maxH = fabs(h);
            csum += c;
        }
        C[t] = (sumQ + trQ) / 4.0 + csum / 2.0 + lam * k * k;
    }
    /* One common scale S (integer units per real unit), the largest with
     * |J| <= 127 and |h| <= 32767 over the whole pool. */
    double S = 1.0;
    if (maxJ > 0.0 && maxH > 0.0) {
        S = fmin(127.0 / maxJ, 32767.0 / maxH);
    } else if (maxJ > 0.0) {
        S = 127.0 / maxJ;
    } else if (maxH > 0.0) {
        S = 32767.0 / maxH;
    }
    if (inst_alloc(out, n, seed, err, "portfolio", 10, DSB_INT8_MAX_N)) {
        free(row), free(hr), free(C), dsb_portfolio_data_free(&d);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
            if (i == j) continue;
            double v = -0.5 * (q * d.sigma[(size_t)i * n + j] + lam) * S;
            long r = lround(v);
            if (r > 127) r = 127; /* guards a last-ulp overshoot of S * maxJ */
            if (r < -127) r = -127;
            out->J[(size_t)i * n + j] = (int8_t)r;
        }
    out->n_fields = n_fields;
    out->fields = cm_malloc((size_t)n_fields * n * sizeof(int16_t));
    out->field_offset = cm_malloc((size_t)n_fields * sizeof(double));
    for (uint32_t t = 0; t < n_fields; t++) {
        for (uint32_t i = 0; i < n; i++) {
            long r = lround(hr[(size_t)t * n + i] * S);
            if (r > 32767) r = 32767;
            if (r < -32767) r = -32767;
            out->fields[(size_t)t * n + i] = (int16_t)r;
        }
        out->field_offset[t] = C[t] * S;
    }
    memcpy(out->h, out->fields, (size_t)n * sizeof(int16_t));
    out->objective = DSB_OBJ_QUBO;
    out->quant_scale = 1.0 / S;
    out->qubo_scale = 1.0 / S;
    out->qubo_offset = out->field_offset[0];
    snprintf(out->name, sizeof out->name, "portfolio:n=%u,fields=%u,seed=%llu", n, n_fields,
             (unsigned long long)seed);
    free(row);
    free(hr);
    free(C);
    dsb_portfolio_data_free(&d);
    return 0;
}

/* ---- "kind:key=value,..." ---------------------------------------------------- */

static int parse_u64_strict(const char *s, size_t len, uint64_t *out)
{
    if (len == 0) return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10u) return -1;
        v = v * 10u + d;
    }
    *out = v;
    return 0;
}

int dsb_gen_parse(const char *spec, dsb_instance *out, cm_err *err)
{
    memset(out, 0, sizeof *out);
    if (!spec) return cm_fail(err, "generator spec: missing");
    const char *colon = strchr(spec, ':');
    size_t klen = colon ? (size_t)(colon - spec) : strlen(spec);
    enum { K_SK, K_TERNARY, K_PORTFOLIO, K_MATTIS } kind;
    if (klen == 2 && !strncmp(spec, "sk", 2)) {
        kind = K_SK;
    } else if (klen == 7 && !strncmp(spec, "ternary", 7)) {
        kind = K_TERNARY;
    } else if (klen == 9 && !strncmp(spec, "portfolio", 9)) {
        kind = K_PORTFOLIO;
    } else if (klen == 6 && !strncmp(spec, "mattis", 6)) {
        kind = K_MATTIS;
    } else {
        return cm_fail(err,
                       "generator spec '%s': unknown kind '%.*s', expected sk, ternary, "
                       "portfolio or mattis (e.g. 'sk:n=1024,seed=1000')",
                       spec, (int)klen, spec);
    }
    if (!colon) return cm_fail(err, "generator spec '%s': missing ':n=<size>' after the kind", spec);
    uint64_t n = 0, seed = DSB_DEFAULT_MODEL_SEED, fields = DSB_PORTFOLIO_DEFAULT_FIELDS;
    double density = DSB_TERNARY_DEFAULT_DENSITY;
    int have_n = 0, have_seed = 0, have_density = 0, have_fields = 0;
    const char *p = colon + 1;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        if (!eq)
            return cm_fail(err, "generator spec '%s': expected key=value, got '%.*s'", spec,
                           (int)len, p);
        size_t kl = (size_t)(eq - p);
        const char *val = eq + 1;
        size_t vl = len - kl - 1;
        int *seen = NULL;
        if (kl == 1 && *p == 'n') {
            seen = &have_n;
            if (parse_u64_strict(val, vl, &n) || n < 2 || n > DSB_INSTANCE_MAX_N)
                return cm_fail(err,
                               "generator spec '%s': n: expected an integer in [2, %u], got '%.*s'",
                               spec, DSB_INSTANCE_MAX_N, (int)vl, val);
        } else if (kl == 4 && !strncmp(p, "seed", 4)) {
            seen = &have_seed;
            if (parse_u64_strict(val, vl, &seed))
                return cm_fail(err,
                               "generator spec '%s': seed: expected an unsigned 64-bit integer, "
                               "got '%.*s'",
                               spec, (int)vl, val);
        } else if (kl == 7 && !strncmp(p, "density", 7) && kind == K_TERNARY) {
            seen = &have_density;
            char buf[64];
            char *e = NULL;
            if (vl == 0 || vl >= sizeof buf) {
                e = buf;
                buf[0] = 'x';
            } else {
                memcpy(buf, val, vl);
                buf[vl] = 0;
                density = strtod(buf, &e);
            }
            if (*e || !(density > 0.0 && density <= 1.0))
                return cm_fail(err,
                               "generator spec '%s': density: expected a number in (0, 1], got "
                               "'%.*s'",
                               spec, (int)vl, val);
        } else if (kl == 6 && !strncmp(p, "fields", 6) && kind == K_PORTFOLIO) {
            seen = &have_fields;
            if (parse_u64_strict(val, vl, &fields) || fields < 1 ||
                fields > DSB_PORTFOLIO_MAX_FIELDS)
                return cm_fail(err,
                               "generator spec '%s': fields: expected an integer in [1, %u], got "
                               "'%.*s'",
                               spec, DSB_PORTFOLIO_MAX_FIELDS, (int)vl, val);
        } else {
            const char *keys = kind == K_TERNARY     ? "n, density, seed"
                               : kind == K_PORTFOLIO ? "n, fields, seed"
                                                     : "n, seed";
            return cm_fail(err, "generator spec '%s': unknown key '%.*s' for %.*s, expected %s",
                           spec, (int)kl, p, (int)klen, spec, keys);
        }
        if (*seen)
            return cm_fail(err, "generator spec '%s': key '%.*s' given twice", spec, (int)kl, p);
        *seen = 1;
        if (!end) break;
        p = end + 1;
    }
    if (!have_n) return cm_fail(err, "generator spec '%s': missing n=<size>", spec);
    switch (kind) {
    case K_SK:
        return dsb_gen_sk((uint32_t)n, seed, out, err);
    case K_TERNARY:
        return dsb_gen_ternary((uint32_t)n, density, seed, out, err);
    case K_PORTFOLIO:
        return dsb_gen_portfolio((uint32_t)n, (uint32_t)fields, seed, out, err);
    case K_MATTIS:
        return dsb_gen_mattis((uint32_t)n, seed, out, err);
    }
    return cm_fail(err, "generator spec '%s': internal error", spec);
}

/* ---- objective read-out --------------------------------------------------------- */

double dsb_instance_objective_field(const dsb_instance *in, uint32_t field, int64_t energy2)
{
    double E = (double)energy2 / 2.0;
    switch (in->objective) {
    case DSB_OBJ_MAXCUT:
        return ((double)in->weight_total - E) / 2.0;
    case DSB_OBJ_QUBO: {
        double off = in->qubo_offset;
        if (in->field_offset && field < in->n_fields) {
            off = in->field_offset[field];
        } else if (field != 0) {
            return NAN;
        }
        return (E + off) * in->qubo_scale;
    }
    case DSB_OBJ_ISING:
    default:
        return E;
    }
}

double dsb_instance_objective(const dsb_instance *in, int64_t energy2)
{
    return dsb_instance_objective_field(in, 0, energy2);
}

const char *dsb_objective_name(dsb_objective o)
{
    switch (o) {
    case DSB_OBJ_ISING:
        return "ising";
    case DSB_OBJ_MAXCUT:
        return "maxcut";
    case DSB_OBJ_QUBO:
        return "qubo";
    }
    return "unknown";
}

void dsb_instance_free(dsb_instance *in)
{
    if (!in) return;
    free(in->J);
    free(in->h);
    free(in->fields);
    free(in->field_offset);
    memset(in, 0, sizeof *in);
}
