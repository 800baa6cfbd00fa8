/* Generators of seed 000 Sec. VI-B: determinism, structure (symmetry, zero
 * diagonal, value sets, density), the Mattis planted ground state, the
 * portfolio substitution and quantization of Eq. (5), the spec parser and the
 * objective read-out.  Every expected value is computed here, independently
 * of the code under test. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "dsb/instances.h"
#include "inst_test_util.h"

static int symmetric_zero_diag(const dsb_instance *in)
{
    uint32_t n = in->n;
    for (uint32_t i = 0; i < n; i++) {
        if (in->J[(size_t)i * n + i] != 0) return 0;
        for (uint32_t j = 0; j < i; j++)
            if (in->J[(size_t)i * n + j] != in->J[(size_t)j * n + i]) return 0;
    }
    return 1;
}

static int same_instance(const dsb_instance *a, const dsb_instance *b)
{
    if (a->n != b->n || a->n_fields != b->n_fields) return 0;
    if (memcmp(a->J, b->J, (size_t)a->n * a->n)) return 0;
    if (memcmp(a->h, b->h, (size_t)a->n * sizeof(int16_t))) return 0;
    if (a->n_fields && memcmp(a->fields, b->fields, (size_t)a->n_fields * a->n * sizeof(int16_t)))
        return 0;
    return 1;
}

static void test_sk(void)
{
    cm_err err;
    dsb_instance a, b, c;
    const uint32_t n = 101; /* not a multiple of 32 */
    CHECK(dsb_gen_sk(n, 1000, &a, &err) == 0, "%s", err.msg);
    CHECK(dsb_gen_sk(n, 1000, &b, &err) == 0, "%s", err.msg);
    CHECK(dsb_gen_sk(n, 1001, &c, &err) == 0, "%s", err.msg);
    CHECK(same_instance(&a, &b), "sk: same seed gave different instances");
    CHECK(!same_instance(&a, &c), "sk: seeds 1000 and 1001 gave the same instance");
    CHECK(symmetric_zero_diag(&a), "sk: J not symmetric with zero diagonal");
    long plus = 0, bad = 0, hnz = 0;
    for (uint32_t i = 0; i < n; i++) {
        hnz += a.h[i] != 0;
        for (uint32_t j = 0; j < n; j++) {
            int v = a.J[(size_t)i * n + j];
            if (i != j && v != 1 && v != -1) bad++;
            if (i < j && v == 1) plus++;
        }
    }
    CHECK_EQ_I64(bad, 0, "sk: off-diagonal entries other than +-1");
    CHECK_EQ_I64(hnz, 0, "sk: nonzero field entries");
    double pairs = n * (n - 1) / 2.0, frac = plus / pairs; /* sd of frac = 0.5/sqrt(5050) = 0.007 */
    CHECK(fabs(frac - 0.5) < 0.04, "sk: fraction of +1 = %.4f, expected 0.5 +- 0.04", frac);
    CHECK(a.objective == DSB_OBJ_ISING && a.n_fields == 0 && a.fields == NULL && !a.has_ground,
          "sk: objective/pool/ground fields wrong");
    CHECK(!strcmp(a.name, "sk:n=101,seed=1000"), "sk: name '%s'", a.name);
    dsb_instance_free(&a);
    dsb_instance_free(&b);
    dsb_instance_free(&c);
    CHECK(a.J == NULL && a.n == 0, "free did not clear the struct");
    CHECK(dsb_gen_sk(1, 1000, &a, &err) != 0 && strstr(err.msg, "n = 1"), "sk n=1: '%s'", err.msg);
    CHECK(a.J == NULL, "failed generator left memory in out");
}

static void test_ternary(void)
{
    cm_err err;
    const uint32_t n = 400;
    const double dens[3] = {0.05, 0.3, 1.0};
    for (int d = 0; d < 3; d++) {
        dsb_instance a, b;
        CHECK(dsb_gen_ternary(n, dens[d], 7, &a, &err) == 0, "%s", err.msg);
        CHECK(dsb_gen_ternary(n, dens[d], 7, &b, &err) == 0, "%s", err.msg);
        CHECK(same_instance(&a, &b), "ternary: same seed gave different instances");
        CHECK(symmetric_zero_diag(&a), "ternary: J not symmetric with zero diagonal");
        long nz = 0, plus = 0, bad = 0;
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = i + 1; j < n; j++) {
                int v = a.J[(size_t)i * n + j];
                if (v < -1 || v > 1) bad++;
                nz += v != 0;
                plus += v == 1;
            }
        CHECK_EQ_I64(bad, 0, "ternary: entries outside {-1,0,1}");
        double pairs = n * (n - 1) / 2.0, p = dens[d];
        double sd = sqrt(pairs * p * (1 - p)), want = pairs * p;
        /* 5 standard deviations (plus one for p = 1, where sd = 0) */
        CHECK(fabs(nz - want) <= 5 * sd + 1, "ternary density %g: %ld nonzeros, expected %.0f +- %.0f",
              p, nz, want, 5 * sd + 1);
        double sd_sign = 0.5 * sqrt((double)nz);
        CHECK(fabs(plus - nz / 2.0) <= 5 * sd_sign, "ternary: %ld of %ld nonzeros are +1", plus, nz);
        dsb_instance_free(&a);
        dsb_instance_free(&b);
    }
    dsb_instance a;
    CHECK(dsb_gen_ternary(64, 0.0, 1, &a, &err) != 0 && strstr(err.msg, "density"), "'%s'", err.msg);
    CHECK(dsb_gen_ternary(64, 1.5, 1, &a, &err) != 0 && strstr(err.msg, "density"), "'%s'", err.msg);
    CHECK(dsb_gen_ternary(64, NAN, 1, &a, &err) != 0 && strstr(err.msg, "density"), "'%s'", err.msg);
}

static void test_mattis(void)
{
    cm_err err;
    const uint32_t n = 1024;
    dsb_instance a, b;
    CHECK(dsb_gen_mattis(n, 1000, &a, &err) == 0, "%s", err.msg);
    CHECK(dsb_gen_mattis(n, 1000, &b, &err) == 0, "%s", err.msg);
    CHECK(same_instance(&a, &b), "mattis: not deterministic");
    CHECK(symmetric_zero_diag(&a), "mattis: J not symmetric with zero diagonal");
    /* the planted state (up to global flip): s_0 = +1, s_j = J_0j */
    int *s = malloc(n * sizeof(int));
    s[0] = 1;
    for (uint32_t j = 1; j < n; j++) s[j] = a.J[j];
    long rank1_bad = 0, plus = 0;
    for (uint32_t i = 0; i < n; i++) {
        plus += s[i] == 1;
        for (uint32_t j = 0; j < n; j++)
            if (i != j && a.J[(size_t)i * n + j] != s[i] * s[j]) rank1_bad++;
    }
    CHECK_EQ_I64(rank1_bad, 0, "mattis: J_ij != eta_i eta_j");
    CHECK(plus > 400 && plus < 624, "mattis: eta has %ld of 1024 entries +1", plus);
    int64_t e2 = tu_energy2(a.J, a.h, n, s);
    CHECK_EQ_I64(e2, -(int64_t)1024 * 1023, "mattis: 2E of the planted state");
    CHECK(a.has_ground && a.ground_energy2 == -(int64_t)1024 * 1023, "mattis: ground_energy2 %lld",
          (long long)a.ground_energy2);
    /* any other state is higher: flip one spin */
    s[5] = -s[5];
    CHECK(tu_energy2(a.J, a.h, n, s) > -(int64_t)1024 * 1023, "mattis: one flip not higher");
    free(s);
    dsb_instance_free(&a);
    dsb_instance_free(&b);
}

/* Eq. (5) evaluated directly from the real-valued model. */
static double eq5(const dsb_portfolio_data *d, uint32_t t, const int *x)
{
    uint32_t n = d->n;
    double risk = 0.0, ret = 0.0, card = 0.0;
    for (uint32_t i = 0; i < n; i++) {
        if (!x[i]) continue;
        card += 1.0;
        ret += d->mu[(size_t)t * n + i];
        for (uint32_t j = 0; j < n; j++)
            if (x[j]) risk += d->sigma[(size_t)i * n + j];
    }
    double dev = card - (double)d->k;
    return d->q * risk - ret + d->lambda * dev * dev;
}

/* Best cardinality found by 1-flip descent on Eq. (5) (field 0) from 10
 * random starts, with the penalty weight `lam`. */
static int descent_cardinality(const dsb_portfolio_data *d, double lam)
{
    dsb_portfolio_data e = *d;
    e.lambda = lam;
    int x[64], best_card = -1;
    double best = 1e300;
    for (int start = 0; start < 10; start++) {
        for (uint32_t i = 0; i < d->n; i++) x[i] = tu_unit() < 0.1;
        double f = eq5(&e, 0, x);
        for (int improved = 1; improved;) {
            improved = 0;
            for (uint32_t i = 0; i < d->n; i++) {
                x[i] ^= 1;
                double g = eq5(&e, 0, x);
                if (g < f - 1e-12) {
                    f = g;
                    improved = 1;
                } else {
                    x[i] ^= 1;
                }
            }
        }
        if (f < best) {
            best = f;
            best_card = 0;
            for (uint32_t i = 0; i < d->n; i++) best_card += x[i];
        }
    }
    return best_card;
}

static void test_portfolio(void)
{
    cm_err err;
    const uint32_t n = 40, F = 32;
    dsb_instance a, b;
    dsb_portfolio_data d;
    CHECK(dsb_gen_portfolio(n, F, 1000, &a, &err) == 0, "%s", err.msg);
    CHECK(dsb_gen_portfolio(n, F, 1000, &b, &err) == 0, "%s", err.msg);
    CHECK(dsb_portfolio_data_gen(n, F, 1000, &d, &err) == 0, "%s", err.msg);
    CHECK(same_instance(&a, &b), "portfolio: not deterministic");
    CHECK(symmetric_zero_diag(&a), "portfolio: J not symmetric with zero diagonal");
    CHECK(a.n_fields == F && a.fields && a.field_offset, "portfolio: no field pool");
    CHECK(!memcmp(a.h, a.fields, n * sizeof(int16_t)), "portfolio: h != fields[0]");
    CHECK(a.objective == DSB_OBJ_QUBO && a.field_offset[0] == a.qubo_offset, "portfolio: objective");
    CHECK(d.k == 4, "portfolio: k = %u, expected n/10 = 4", d.k);
    /* covariance symmetric positive diagonal */
    int sym = 1;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++)
            if (d.sigma[(size_t)i * n + j] != d.sigma[(size_t)j * n + i] || d.sigma[(size_t)i * n + i] <= 0)
                sym = 0;
    CHECK(sym, "portfolio: Sigma not symmetric with positive diagonal");
    /* quantization bounds, and the scale is the largest allowed */
    int maxJ = 0, maxH = 0;
    for (size_t i = 0; i < (size_t)n * n; i++)
        if (abs(a.J[i]) > maxJ) maxJ = abs(a.J[i]);
    for (size_t i = 0; i < (size_t)F * n; i++)
        if (abs(a.fields[i]) > maxH) maxH = abs(a.fields[i]);
    CHECK(maxJ <= 127 && maxH <= 32767, "portfolio: |J| %d |h| %d over the bounds", maxJ, maxH);
    CHECK(maxJ == 127 || maxH == 32767, "portfolio: scale not the largest (|J| %d, |h| %d)", maxJ, maxH);
    /* fields differ over t (AR(1) moves), first and last not identical */
    CHECK(memcmp(a.fields, a.fields + (size_t)(F - 1) * n, n * sizeof(int16_t)) != 0,
          "portfolio: field pool constant");
    /* substitution x = (1+s)/2 with quantization: |objective - Eq.(5)| <=
     * quant_scale (n(n-1)/4 + n/2) (each rounded J, h entry is off by <= 1/2). */
    double bound = a.quant_scale * (n * (n - 1) / 4.0 + n / 2.0);
    double worst = 0.0, worst_diff = 0.0, fmin = 1e300, fmax = -1e300;
    int x[40], s[40];
    for (int trial = 0; trial < 3000; trial++) {
        uint32_t t = (uint32_t)(trial % F);
        int pick = trial % 3; /* sparse, dense and half-half selections */
        for (uint32_t i = 0; i < n; i++) {
            double u = tu_unit();
            x[i] = pick == 0 ? u < 0.1 : pick == 1 ? u < 0.5 : u < 0.9;
            s[i] = 2 * x[i] - 1;
        }
        double f = eq5(&d, t, x);
        int64_t e2 = tu_energy2(a.J, a.fields + (size_t)t * n, n, s);
        double obj = dsb_instance_objective_field(&a, t, e2);
        if (fabs(obj - f) > worst) worst = fabs(obj - f);
        /* field t against field 0 for the same x: only the two rounded
         * fields differ, so the difference is within quant_scale * n */
        double f0 = eq5(&d, 0, x);
        double obj0 = dsb_instance_objective_field(&a, 0, tu_energy2(a.J, a.fields, n, s));
        if (fabs((obj - obj0) - (f - f0)) > worst_diff) worst_diff = fabs((obj - obj0) - (f - f0));
        if (f < fmin) fmin = f;
        if (f > fmax) fmax = f;
    }
    CHECK(worst <= bound, "portfolio: |objective - Eq.(5)| = %g above the bound %g", worst, bound);
    CHECK(worst_diff <= a.quant_scale * n, "portfolio: field-to-field difference off by %g > %g",
          worst_diff, a.quant_scale * n);
    CHECK(bound < 0.05 * (fmax - fmin), "portfolio: bound %g not small against the spread %g",
          bound, fmax - fmin);
    printf("portfolio n=%u: quant_scale %.4g, worst |objective - Eq.(5)| %.3g (bound %.3g, spread %.3g)\n",
           n, a.quant_scale, worst, bound, fmax - fmin);
    /* field 0 through the plain read-out */
    CHECK(dsb_instance_objective(&a, 1234) == dsb_instance_objective_field(&a, 0, 1234),
          "portfolio: objective != objective_field(0)");
    CHECK(isnan(dsb_instance_objective_field(&a, F, 0)), "portfolio: field beyond the pool not NaN");
    dsb_instance_free(&a);
    dsb_instance_free(&b);
    dsb_portfolio_data_free(&d);

    /* AR(1) expected returns: lag-1 autocorrelation near phi = 0.95 */
    CHECK(dsb_portfolio_data_gen(64, 256, 1000, &d, &err) == 0, "%s", err.msg);
    double rho_sum = 0.0;
    for (uint32_t i = 0; i < 64; i++) {
        double mean = 0.0;
        for (uint32_t t = 0; t < 256; t++) mean += d.mu[(size_t)t * 64 + i] / 256.0;
        double num = 0.0, den = 0.0;
        for (uint32_t t = 0; t < 256; t++) {
            double u = d.mu[(size_t)t * 64 + i] - mean;
            den += u * u;
            if (t) num += u * (d.mu[(size_t)(t - 1) * 64 + i] - mean);
        }
        rho_sum += num / den;
    }
    CHECK(rho_sum / 64 > 0.85 && rho_sum / 64 < 0.99, "portfolio: mean lag-1 autocorrelation %.3f",
          rho_sum / 64);
    dsb_portfolio_data_free(&d);

    /* the cardinality penalty matters: without it the descent optimum holds
     * clearly fewer than k = n/10 assets, with it about k */
    CHECK(dsb_portfolio_data_gen(64, 1, 1000, &d, &err) == 0, "%s", err.msg);
    int card0 = descent_cardinality(&d, 0.0), card1 = descent_cardinality(&d, d.lambda);
    printf("portfolio n=64, k=%u: descent cardinality %d without the penalty, %d with it\n", d.k,
           card0, card1);
    CHECK(card0 <= (int)d.k - 2, "portfolio: without the penalty cardinality %d, k %u", card0, d.k);
    CHECK(abs(card1 - (int)d.k) <= 1, "portfolio: with the penalty cardinality %d, k %u", card1, d.k);
    dsb_portfolio_data_free(&d);

    /* the size limits: n <= 2048 (Prop. 1(iii)), n >= 10 (k >= 1), a pool */
    CHECK(dsb_gen_portfolio(2049, 4, 1, &a, &err) != 0 && strstr(err.msg, "2048"), "'%s'", err.msg);
    CHECK(dsb_gen_portfolio(9, 4, 1, &a, &err) != 0 && strstr(err.msg, "n = 9"), "'%s'", err.msg);
    CHECK(dsb_gen_portfolio(64, 0, 1, &a, &err) != 0 && strstr(err.msg, "fields"), "'%s'", err.msg);
    /* the largest size, the full pool */
    CHECK(dsb_gen_portfolio(2048, 256, 1000, &a, &err) == 0, "%s", err.msg);
    maxJ = maxH = 0;
    for (size_t i = 0; i < (size_t)2048 * 2048; i++)
        if (abs(a.J[i]) > maxJ) maxJ = abs(a.J[i]);
    for (size_t i = 0; i < (size_t)256 * 2048; i++)
        if (abs(a.fields[i]) > maxH) maxH = abs(a.fields[i]);
    CHECK(maxJ <= 127 && maxH <= 32767 && (maxJ == 127 || maxH == 32767),
          "portfolio n=2048: |J| %d |h| %d", maxJ, maxH);
    dsb_instance_free(&a);
}

static void test_parse(void)
{
    cm_err err;
    dsb_instance a, b;
    CHECK(dsb_gen_parse("sk:n=64", &a, &err) == 0, "%s", err.msg);
    CHECK(dsb_gen_sk(64, 1000, &b, &err) == 0, "%s", err.msg);
    CHECK(same_instance(&a, &b) && a.seed == 1000, "parse: sk default seed is not 1000");
    dsb_instance_free(&a);
    dsb_instance_free(&b);
    CHECK(dsb_gen_parse("ternary:n=96,density=0.2,seed=5", &a, &err) == 0, "%s", err.msg);
    CHECK(dsb_gen_ternary(96, 0.2, 5, &b, &err) == 0, "%s", err.msg);
    CHECK(same_instance(&a, &b), "parse: ternary keys not applied");
    CHECK(!strcmp(a.name, "ternary:n=96,density=0.2,seed=5"), "parse: name '%s'", a.name);
    dsb_instance_free(&a);
    dsb_instance_free(&b);
    CHECK(dsb_gen_parse("portfolio:seed=3,n=20,fields=8", &a, &err) == 0, "%s", err.msg);
    CHECK(dsb_gen_portfolio(20, 8, 3, &b, &err) == 0, "%s", err.msg);
    CHECK(same_instance(&a, &b) && a.n_fields == 8, "parse: portfolio keys not applied");
    dsb_instance_free(&a);
    dsb_instance_free(&b);
    CHECK(dsb_gen_parse("portfolio:n=128", &a, &err) == 0 && a.n_fields == 256,
          "parse: portfolio default pool is not 256");
    dsb_instance_free(&a);
    CHECK(dsb_gen_parse("mattis:n=33,seed=18446744073709551615", &a, &err) == 0, "%s", err.msg);
    CHECK(a.seed == UINT64_MAX, "parse: 64-bit seed");
    dsb_instance_free(&a);

    static const struct {
        const char *spec, *want;
    } bad[] = {
        {"", "unknown kind"},
        {"foo:n=10", "unknown kind 'foo'"},
        {"SK:n=10", "unknown kind"},
        {"sk", "missing ':n=<size>'"},
        {"sk:", "expected key=value"},
        {"sk:seed=4", "missing n="},
        {"sk:n=", "n: expected an integer"},
        {"sk:n=1", "n: expected an integer in [2,"},
        {"sk:n=32769", "n: expected an integer"},
        {"sk:n=12x", "n: expected an integer"},
        {"sk:n=-5", "n: expected an integer"},
        {"sk:n=10,n=12", "given twice"},
        {"sk:n=10,", "expected key=value"},
        {"sk:n=10,seed=99999999999999999999", "seed: expected"},
        {"sk:n=10,density=0.1", "unknown key 'density' for sk"},
        {"mattis:n=10,fields=3", "unknown key 'fields'"},
        {"ternary:n=10,density=0", "density: expected a number in (0, 1]"},
        {"ternary:n=10,density=abc", "density: expected"},
        {"ternary:n=10,density=", "density: expected"},
        {"portfolio:n=4096", "2048"},
        {"portfolio:n=100,fields=0", "fields: expected"},
        {"portfolio:n=100,density=0.1", "unknown key 'density'"},
        {"sk:n10", "expected key=value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err.msg[0] = 0;
        int rc = dsb_gen_parse(bad[i].spec, &a, &err);
        CHECK(rc != 0 && strstr(err.msg, bad[i].want) != NULL,
              "spec '%s': rc %d, message '%s', expected it to contain '%s'", bad[i].spec, rc,
              err.msg, bad[i].want);
        CHECK(a.J == NULL, "spec '%s': out not cleared", bad[i].spec);
    }
}

static void test_objective(void)
{
    dsb_instance in;
    memset(&in, 0, sizeof in);
    in.objective = DSB_OBJ_MAXCUT;
    in.weight_total = 10;
    /* E = -2: cut = (10 - (-2)) / 2 = 6 */
    CHECK(dsb_instance_objective(&in, -4) == 6.0, "maxcut read-out");
    in.objective = DSB_OBJ_ISING;
    CHECK(dsb_instance_objective(&in, -7) == -3.5, "ising read-out is E = 2E/2");
    in.objective = DSB_OBJ_QUBO;
    in.qubo_offset = 3.0;
    in.qubo_scale = 0.25;
    CHECK(dsb_instance_objective(&in, 10) == 2.0, "qubo read-out (5 + 3) / 4");
    CHECK(!strcmp(dsb_objective_name(DSB_OBJ_MAXCUT), "maxcut") &&
              !strcmp(dsb_objective_name(DSB_OBJ_QUBO), "qubo") &&
              !strcmp(dsb_objective_name(DSB_OBJ_ISING), "ising"),
          "objective names");
}

int main(void)
{
    test_sk();
    test_ternary();
    test_mattis();
    test_portfolio();
    test_parse();
    test_objective();
    return check_done();
}
