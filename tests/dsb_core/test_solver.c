/* The CPU reference solver: determinism across thread counts, ground states of
 * small instances found by brute force, the planted Mattis ground state, and
 * the reported best replica/energies consistent with the spins. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "dsb/core.h"
#include "dsb/model.h"
#include "random_j.h"
#include "dsb/solve.h"


/* Naive 2E of spins given as bits. */
static int64_t naive_energy2(const int8_t *J, const int16_t *h, uint32_t n, uint64_t bits)
{
    int64_t e2 = 0;
    for (uint32_t i = 0; i < n; i++) {
        int si = (bits >> i) & 1 ? 1 : -1;
        int64_t row = 0;
        for (uint32_t j = 0; j < n; j++) row += (int64_t)J[(size_t)i * n + j] * (((bits >> j) & 1) ? 1 : -1);
        e2 += -si * row - 2 * (int64_t)(h ? h[i] : 0) * si;
    }
    return e2;
}

static void test_determinism(void)
{
    uint32_t n = 77;
    int8_t *J = random_J(n, 2);
    dsb_model m;
    cm_err err;
    CHECK(dsb_model_pack(J, n, DSB_FMT_INT8, &m, &err) == 0, "pack");
    int16_t h[77];
    for (uint32_t i = 0; i < n; i++) h[i] = (int16_t)((int)(rnd() % 2001) - 1000);
    dsb_params p;
    dsb_params_default(&p);
    p.replicas = 7;
    p.steps = 60;
    p.seed = 42;
    dsb_result r1, r2;
    dsb_result_init(&r1, n, p.replicas, 1);
    CHECK(dsb_solve_cpu(&m, h, &p, 1, &r1, &err) == 0, "solve 1 thread");
    static const int threads[] = {2, 3, 7, 16};
    for (int t = 0; t < 4; t++) {
        dsb_result_init(&r2, n, p.replicas, 1);
        CHECK(dsb_solve_cpu(&m, h, &p, threads[t], &r2, &err) == 0, "solve");
        CHECK(!memcmp(r1.x, r2.x, (size_t)n * p.replicas * 4) &&
                  !memcmp(r1.y, r2.y, (size_t)n * p.replicas * 4) &&
                  !memcmp(r1.energy2, r2.energy2, p.replicas * 8) &&
                  !memcmp(r1.spins, r2.spins, (size_t)p.replicas * m.words * 4) &&
                  r1.best_replica == r2.best_replica,
              "bit-identical result with %d threads", threads[t]);
        dsb_result_free(&r2);
    }
    /* consistency: energies recomputed from spins, best = argmin, spins = sign(x) */
    uint32_t best = 0;
    for (uint32_t b = 0; b < p.replicas; b++) {
        const uint32_t *v = r1.spins + (size_t)b * m.words;
        uint64_t bits = 0;
        int sign_ok = 1;
        for (uint32_t i = 0; i < n; i++) {
            int bit = (v[i / 32] >> (i % 32)) & 1;
            if (bit != (r1.x[(size_t)b * n + i] > 0.0f)) sign_ok = 0;
            (void)bits;
        }
        CHECK(sign_ok, "spins = sign(x), replica %u", b);
        CHECK_EQ_I64(r1.energy2[b], dsb_energy2(&m, h, v), "energy2 from spins");
        if (r1.energy2[b] < r1.energy2[best]) best = b;
    }
    CHECK(r1.best_replica == best && r1.best_energy2 == r1.energy2[best], "best replica");
    /* another seed gives another trajectory */
    p.seed = 43;
    dsb_result_init(&r2, n, p.replicas, 1);
    CHECK(dsb_solve_cpu(&m, h, &p, 2, &r2, &err) == 0, "solve seed 43");
    CHECK(memcmp(r1.x, r2.x, (size_t)n * p.replicas * 4) != 0, "seed changes the trajectory");
    dsb_result_free(&r2);
    dsb_result_free(&r1);
    dsb_model_free(&m);
    free(J);
}

/* Over random instances with n <= 20 the solver should find the brute-force
 * ground state in most runs; the rate is printed and must be >= 80%. */
static void test_brute_force(void)
{
    int hits = 0, runs = 0;
    for (int trial = 0; trial < 24; trial++) {
        uint32_t n = 10 + (uint32_t)(trial % 9); /* 10..18 */
        int kind = trial % 2;
        int8_t *J = random_J(n, kind ? 2 : 0);
        int16_t h[32];
        for (uint32_t i = 0; i < n; i++) h[i] = kind ? (int16_t)((int)(rnd() % 201) - 100) : 0;
        int64_t ground = INT64_MAX;
        for (uint64_t bits = 0; bits < (1ull << n); bits++) {
            int64_t e = naive_energy2(J, h, n, bits);
            if (e < ground) ground = e;
        }
        dsb_model m;
        cm_err err;
        CHECK(dsb_model_pack(J, n, kind ? DSB_FMT_INT8 : DSB_FMT_PM1, &m, &err) == 0, "pack");
        dsb_params p;
        dsb_params_default(&p);
        p.replicas = 16;
        p.steps = 400;
        p.dt = 0.5f;
        p.seed = 1000 + (uint64_t)trial;
        dsb_result r;
        dsb_result_init(&r, n, p.replicas, 0);
        CHECK(dsb_solve_cpu(&m, h, &p, 0, &r, &err) == 0, "solve");
        CHECK(r.best_energy2 >= ground, "energy below the brute-force ground state?");
        hits += r.best_energy2 == ground;
        runs++;
        dsb_result_free(&r);
        dsb_model_free(&m);
        free(J);
    }
    printf("brute-force ground state reached in %d of %d runs (n = 10..18, B = 16, K = 400, "
           "dt = 0.5)\n",
           hits, runs);
    CHECK(hits * 5 >= runs * 4, "ground-state rate %d/%d below 80%%", hits, runs);
}

/* Mattis planted instance, J_ij = eta_i eta_j: ground state 2E = -n(n-1). */
static void test_mattis(void)
{
    uint32_t n = 1024;
    int8_t *J = calloc((size_t)n * n, 1), *eta = malloc(n);
    for (uint32_t i = 0; i < n; i++) eta[i] = (rnd() & 1) ? 1 : -1;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++)
            if (i != j) J[(size_t)i * n + j] = (int8_t)(eta[i] * eta[j]);
    dsb_model m;
    cm_err err;
    CHECK(dsb_model_pack(J, n, DSB_FMT_AUTO, &m, &err) == 0 && m.format == DSB_FMT_PM1, "pm1");
    dsb_params p;
    dsb_params_default(&p);
    p.replicas = 8;
    p.steps = 100;
    dsb_result r;
    dsb_result_init(&r, n, p.replicas, 0);
    CHECK(dsb_solve_cpu(&m, NULL, &p, 0, &r, &err) == 0, "solve");
    CHECK_EQ_I64(r.best_energy2, -(int64_t)n * (n - 1), "Mattis n=1024 ground state");
    dsb_result_free(&r);
    dsb_model_free(&m);
    free(J);
    free(eta);
}

static void test_bad_params(void)
{
    uint32_t n = 8;
    int8_t *J = random_J(n, 0);
    dsb_model m;
    cm_err err;
    CHECK(dsb_model_pack(J, n, DSB_FMT_PM1, &m, &err) == 0, "pack");
    dsb_params p;
    dsb_params_default(&p);
    dsb_result r;
    dsb_result_init(&r, n, p.replicas, 0);
    p.steps = 0;
    CHECK(dsb_solve_cpu(&m, NULL, &p, 1, &r, &err) == -1 && strstr(err.msg, "steps"), "K = 0");
    dsb_params_default(&p);
    p.dt = -1.0f;
    CHECK(dsb_solve_cpu(&m, NULL, &p, 1, &r, &err) == -1 && strstr(err.msg, "dt"), "dt < 0");
    dsb_params_default(&p);
    p.replicas = 9;
    CHECK(dsb_solve_cpu(&m, NULL, &p, 1, &r, &err) == -1, "result sized for another B");
    dsb_result_free(&r);
    dsb_model_free(&m);
    free(J);
}

int main(void)
{
    test_determinism();
    test_brute_force();
    test_mattis();
    test_bad_params();
    return check_done();
}
