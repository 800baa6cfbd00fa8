/* GPU request-per-block solver against the CPU reference, bit for bit
 * (seed 000, Prop. 1, Sec. VII-A): final positions, momenta, spins, per-replica
 * energies and the best replica, for configurations across the three formats
 * (n not a multiple of 32, B = 1, B n_p = 4096, K = 1, shared and unshared
 * rows, zero and non-zero fields), each with the CUDA-core sums and, where the
 * request has at most 32 tiles of 16 rows x 8 replicas, the tensor-core sums
 * (B not a multiple of 8, several tile columns, idle warps, exactly 32 tiles).  Instances are drawn here from the counter
 * hash.  Label `gpu`: runs only on the lent GPU machine. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "dsb/core.h"
#include "dsb/gpu.h"
#include "dsb/model.h"
#include "dsb/solve.h"

typedef struct {
    dsb_format fmt;
    uint32_t n, B, K;
    int with_field;
    float dt, xi; /* xi 0: model default */
    uint64_t seed;
} config;

/* Symmetric J with zero diagonal for the format, from the hash of (seed, i, j). */
static int8_t *make_J(dsb_format f, uint32_t n, uint64_t seed)
{
    int8_t *J = calloc((size_t)n * n, 1);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = i + 1; j < n; j++) {
            uint64_t h = dsb_counter_hash(seed, i, j);
            int8_t v;
            if (f == DSB_FMT_PM1) v = (h & 1u) ? 1 : -1;
            else if (f == DSB_FMT_TERNARY) v = (h % 10u) == 0 ? 1 : (h % 10u) == 1 ? -1 : 0;
            else v = (int8_t)((int)(h % 255u) - 127);
            J[(size_t)i * n + j] = J[(size_t)j * n + i] = v;
        }
    return J;
}

static int16_t *make_h(uint32_t n, uint64_t seed)
{
    int16_t *h = malloc(n * sizeof *h);
    for (uint32_t i = 0; i < n; i++)
        h[i] = (int16_t)((int)(dsb_counter_hash(seed ^ 0x5eedull, 7u, i) % 8001u) - 4000);
    return h;
}

static uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* Compares one configuration; prints the first mismatch of each kind. */
static void run_config(const config *c, int sums)
{
    char tag[128];
    snprintf(tag, sizeof tag, "%s n=%u B=%u K=%u%s %s", dsb_format_name(c->fmt), c->n, c->B, c->K,
             c->with_field ? " h" : "", dsb_gpu_sums_name(sums));
    cm_err err = {{0}};
    int8_t *J = make_J(c->fmt, c->n, c->seed);
    int16_t *h = c->with_field ? make_h(c->n, c->seed) : NULL;
    dsb_model m;
    if (dsb_model_pack(J, c->n, c->fmt, &m, &err)) {
        CHECK(0, "%s: pack: %s", tag, err.msg);
        free(J);
        free(h);
        return;
    }
    dsb_params p;
    dsb_params_default(&p);
    p.replicas = c->B;
    p.steps = c->K;
    p.dt = c->dt;
    p.xi = c->xi;
    p.seed = c->seed * 31u + 7u;
    dsb_result rc, rg;
    dsb_result_init(&rc, c->n, c->B, 1);
    dsb_result_init(&rg, c->n, c->B, 1);
    /* poison the GPU result so unwritten entries cannot pass */
    memset(rg.x, 0x7f, (size_t)c->B * c->n * sizeof(float));
    memset(rg.y, 0x7f, (size_t)c->B * c->n * sizeof(float));
    memset(rg.spins, 0xa5, (size_t)c->B * dsb_words(c->n) * 4u);
    for (uint32_t b = 0; b < c->B; b++) rg.energy2[b] = INT64_MIN;
    int ok_cpu = dsb_solve_cpu(&m, h, &p, 0, &rc, &err) == 0;
    CHECK(ok_cpu, "%s: cpu: %s", tag, err.msg);
    int ok_gpu = dsb_solve_gpu_ex(&m, h, &p, sums, &rg, &err) == 0;
    CHECK(ok_gpu, "%s: gpu: %s", tag, err.msg);
    if (ok_cpu && ok_gpu) {
        uint32_t W = dsb_words(c->n);
        size_t bad_x = 0, bad_y = 0, bad_s = 0, bad_e = 0;
        for (uint32_t b = 0; b < c->B; b++) {
            for (uint32_t i = 0; i < c->n; i++) {
                size_t k = (size_t)b * c->n + i;
                if (f2u(rc.x[k]) != f2u(rg.x[k]) && bad_x++ == 0)
                    fprintf(stderr, "%s: first mismatch (replica %u, row %u, x): cpu %.9g (0x%08x) gpu %.9g (0x%08x)\n",
                            tag, b, i, (double)rc.x[k], f2u(rc.x[k]), (double)rg.x[k], f2u(rg.x[k]));
                if (f2u(rc.y[k]) != f2u(rg.y[k]) && bad_y++ == 0)
                    fprintf(stderr, "%s: first mismatch (replica %u, row %u, y): cpu %.9g (0x%08x) gpu %.9g (0x%08x)\n",
                            tag, b, i, (double)rc.y[k], f2u(rc.y[k]), (double)rg.y[k], f2u(rg.y[k]));
            }
            for (uint32_t w = 0; w < W; w++) {
                uint32_t a = rc.spins[(size_t)b * W + w], g = rg.spins[(size_t)b * W + w];
                if (a != g && bad_s++ == 0) {
                    uint32_t bit = (uint32_t)__builtin_ctz(a ^ g);
                    fprintf(stderr, "%s: first mismatch (replica %u, row %u, spin): cpu %d gpu %d\n",
                            tag, b, w * 32u + bit, (a >> bit) & 1u ? 1 : -1, (g >> bit) & 1u ? 1 : -1);
                }
            }
            if (rc.energy2[b] != rg.energy2[b] && bad_e++ == 0)
                fprintf(stderr, "%s: first mismatch (replica %u, energy2): cpu %" PRId64 " gpu %" PRId64 "\n",
                        tag, b, rc.energy2[b], rg.energy2[b]);
        }
        CHECK(bad_x == 0, "%s: %zu positions differ", tag, bad_x);
        CHECK(bad_y == 0, "%s: %zu momenta differ", tag, bad_y);
        CHECK(bad_s == 0, "%s: %zu spin words differ", tag, bad_s);
        CHECK(bad_e == 0, "%s: %zu energies differ", tag, bad_e);
        CHECK_EQ_I64(rg.best_replica, rc.best_replica, tag);
        CHECK_EQ_I64(rg.best_energy2, rc.best_energy2, tag);
        CHECK(memcmp(rg.best_spins, rc.best_spins, W * 4u) == 0, "%s: best spins differ", tag);
        /* the best energy is that of the returned spins (independent recount) */
        CHECK_EQ_I64(dsb_energy2(&m, h, rg.best_spins), rg.best_energy2, tag);
        printf("%-28s ok  best 2E %" PRId64 " (replica %u)\n", tag, rg.best_energy2,
               rg.best_replica);
    }
    dsb_result_free(&rc);
    dsb_result_free(&rg);
    dsb_model_free(&m);
    free(J);
    free(h);
}

int main(void)
{
    cm_err err = {{0}};
    if (!dsb_gpu_available(&err)) {
        fprintf(stderr, "test_gpu_solver: %s (this test needs the GPU machine)\n", err.msg);
        CHECK(0, "GPU available");
        return check_done();
    }
    static const config cfgs[] = {
        /* fmt            n    B    K  field dt    xi  seed */
        {DSB_FMT_PM1, 64, 1, 50, 0, 1.0f, 0.0f, 1},      /* B = 1 */
        {DSB_FMT_PM1, 100, 8, 100, 1, 1.0f, 0.0f, 2},    /* n % 32 != 0, field */
        {DSB_FMT_PM1, 128, 32, 37, 1, 0.5f, 0.0f, 3},    /* B n_p = 4096, shared row */
        {DSB_FMT_PM1, 512, 8, 20, 1, 1.0f, 0.0f, 4},     /* B n_p = 4096, n_p = 512 */
        {DSB_FMT_PM1, 33, 3, 1, 1, 1.0f, 0.0f, 5},       /* K = 1 */
        {DSB_FMT_PM1, 96, 2, 10, 0, 0.25f, 0.3f, 6},     /* explicit xi, no field */
        {DSB_FMT_TERNARY, 64, 32, 50, 1, 1.0f, 0.0f, 7}, /* 8 pairs per thread */
        {DSB_FMT_TERNARY, 200, 5, 60, 1, 1.0f, 0.0f, 8}, /* n_p = 224: rows not shared */
        {DSB_FMT_TERNARY, 256, 16, 30, 0, 1.0f, 0.0f, 9},/* B n_p = 4096 */
        {DSB_FMT_TERNARY, 31, 1, 1, 1, 1.0f, 0.0f, 10},  /* K = 1, B = 1, n < 32 */
        {DSB_FMT_INT8, 128, 8, 100, 1, 1.0f, 0.0f, 11},  /* the reference request */
        {DSB_FMT_INT8, 192, 8, 50, 1, 1.0f, 0.0f, 12},   /* 6 pairs, rows not shared */
        {DSB_FMT_INT8, 77, 1, 1, 1, 1.0f, 0.0f, 13},     /* K = 1, B = 1 */
        {DSB_FMT_INT8, 32, 128, 40, 1, 1.0f, 0.0f, 14},  /* B n_p = 4096, B = 128 */
        {DSB_FMT_INT8, 320, 12, 25, 1, 0.7f, 0.0f, 15},  /* 15 pairs, > 48 KiB smem */
        /* for the tensor-core sums: tiles of 16 rows x 8 replicas */
        {DSB_FMT_INT8, 100, 5, 40, 1, 1.0f, 0.0f, 16},   /* B % 8 != 0, 8 tiles */
        {DSB_FMT_INT8, 128, 32, 30, 1, 1.0f, 0.0f, 17},  /* 4 tile columns, 32 tiles */
        {DSB_FMT_INT8, 256, 12, 20, 1, 1.0f, 0.0f, 18},  /* 2 columns, B % 8 != 0, 32 tiles */
        {DSB_FMT_PM1, 256, 8, 60, 1, 1.0f, 0.0f, 19},    /* 16 tiles, 2 per warp */
        {DSB_FMT_PM1, 160, 24, 30, 1, 1.0f, 0.0f, 20},   /* W = 5: a 4-word chunk half padding */
        {DSB_FMT_TERNARY, 128, 8, 80, 1, 1.0f, 0.0f, 21},/* 8 tiles */
        {DSB_FMT_TERNARY, 384, 5, 20, 1, 1.0f, 0.0f, 22},/* 24 tiles, 3 per warp, W = 12 */
    };
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        run_config(&cfgs[i], DSB_GPU_SUMS_CUDA);
        if (dsb_gpu_tensor_fits(cfgs[i].fmt, cfgs[i].n, cfgs[i].B))
            run_config(&cfgs[i], DSB_GPU_SUMS_TENSOR);
    }
    /* which configurations the tensor-core body must take (a change of the
     * tile rule shows here, not as silently skipped runs) */
    CHECK(dsb_gpu_tensor_fits(DSB_FMT_INT8, 128, 8), "int8 128/8: 8 tiles");
    CHECK(dsb_gpu_tensor_fits(DSB_FMT_PM1, 512, 8), "pm1 512/8: 32 tiles");
    CHECK(dsb_gpu_tensor_fits(DSB_FMT_INT8, 32, 128), "int8 32/128: 32 tiles");
    CHECK(!dsb_gpu_tensor_fits(DSB_FMT_INT8, 320, 12), "int8 320/12: 40 tiles");
    CHECK(!dsb_gpu_tensor_fits(DSB_FMT_PM1, 128, 32 + 1), "pm1 128/33 does not fit a block");

    /* a request that does not fit one block is refused with a clear message */
    {
        int8_t *J = make_J(DSB_FMT_PM1, 128, 99);
        dsb_model m;
        CHECK(dsb_model_pack(J, 128, DSB_FMT_PM1, &m, &err) == 0, "pack: %s", err.msg);
        dsb_params p;
        dsb_params_default(&p);
        p.replicas = 33;
        dsb_result r;
        dsb_result_init(&r, 128, 33, 0);
        err.msg[0] = 0;
        CHECK(dsb_solve_gpu(&m, NULL, &p, &r, &err) != 0, "B n_p = 4224 accepted");
        CHECK(strstr(err.msg, "does not fit one block") != NULL, "message: '%s'", err.msg);
        printf("refused as expected: %s\n", err.msg);
        dsb_result_free(&r);
        dsb_model_free(&m);
        free(J);
        /* tensor-core sums asked for more than 32 tiles: refused with the rule,
         * not silently run on the CUDA cores */
        J = make_J(DSB_FMT_PM1, 384, 98);
        CHECK(dsb_model_pack(J, 384, DSB_FMT_PM1, &m, &err) == 0, "pack: %s", err.msg);
        p.replicas = 10; /* 24 x 2 = 48 tiles; 3840 pairs fit one block */
        dsb_result_init(&r, 384, 10, 0);
        err.msg[0] = 0;
        CHECK(dsb_solve_gpu_ex(&m, NULL, &p, DSB_GPU_SUMS_TENSOR, &r, &err) != 0,
              "tensor-core sums with 48 tiles accepted");
        CHECK(strstr(err.msg, "48 tiles") != NULL && strstr(err.msg, "--sums cuda") != NULL,
              "message: '%s'", err.msg);
        printf("refused as expected: %s\n", err.msg);
        dsb_result_free(&r);
        dsb_model_free(&m);
        free(J);
    }
    return check_done();
}
