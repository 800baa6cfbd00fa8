/* Prop. 1 identities, packing, energies and the step arithmetic, each checked
 * against an independent naive computation written here. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "dsb/core.h"
#include "dsb/model.h"
#include "random_j.h"


static void test_row_sums_and_energy(void)
{
    static const uint32_t sizes[] = {1, 2, 5, 31, 32, 33, 63, 64, 65, 100, 257};
    static const dsb_format fmts[] = {DSB_FMT_PM1, DSB_FMT_TERNARY, DSB_FMT_INT8};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        uint32_t n = sizes[si], W = dsb_words(n);
        for (int kind = 0; kind < 3; kind++) {
            int8_t *J = random_J(n, kind);
            dsb_model m;
            cm_err err;
            int rc = dsb_model_pack(J, n, fmts[kind], &m, &err);
            CHECK(rc == 0, "pack n=%u kind=%d: %s", n, kind, err.msg);
            if (rc) continue;
            CHECK(m.packed_bytes == dsb_packed_bytes(fmts[kind], n), "packed size");
            for (int trial = 0; trial < 4; trial++) {
                int8_t *s = malloc(n), *s8 = calloc(32 * W, 1);
                uint32_t *v = calloc(W, 4);
                int16_t *h = malloc(n * sizeof *h);
                for (uint32_t i = 0; i < n; i++) {
                    s[i] = (rnd() & 1) ? 1 : -1;
                    s8[i] = s[i];
                    if (s[i] > 0) v[i / 32] |= 1u << (i % 32);
                    h[i] = (int16_t)((int)(rnd() % 65535) - 32767);
                }
                int64_t e2 = 0;
                int bad = 0;
                for (uint32_t i = 0; i < n; i++) {
                    int64_t naive = 0;
                    for (uint32_t j = 0; j < n; j++) naive += (int64_t)J[(size_t)i * n + j] * s[j];
                    int32_t got = dsb_model_row_sum(&m, i, v, kind == 2 ? s8 : NULL);
                    if (got != naive && !bad++)
                        CHECK(0, "row sum n=%u fmt=%s row %u: %d != naive %lld", n,
                              dsb_format_name(fmts[kind]), i, got, (long long)naive);
                    e2 += -(int64_t)s[i] * naive - 2 * (int64_t)h[i] * s[i];
                    for (uint32_t j = 0; j < n; j++)
                        if (dsb_model_coupling(&m, i, j) != J[(size_t)i * n + j] && !bad++)
                            CHECK(0, "unpack n=%u (%u,%u)", n, i, j);
                }
                CHECK(!bad, "row sums / unpack n=%u fmt=%s", n, dsb_format_name(fmts[kind]));
                CHECK_EQ_I64(dsb_energy2(&m, h, v), e2, "energy2 vs naive");
                free(s), free(s8), free(v), free(h);
            }
            /* a received image round-trips through validation */
            dsb_model m2;
            rc = dsb_model_from_packed(m.format, n, m.packed, m.packed_bytes, &m2, &err);
            CHECK(rc == 0, "from_packed n=%u: %s", n, rc ? err.msg : "");
            if (!rc) {
                CHECK(m2.frob2 == m.frob2 && m2.xi_default == m.xi_default, "frob/xi kept");
                dsb_model_free(&m2);
            }
            dsb_model_free(&m);
            free(J);
        }
    }
}

static void test_pack_validation(void)
{
    uint32_t n = 40;
    cm_err err;
    dsb_model m;
    int8_t *J = random_J(n, 0);
    J[3 * n + 3] = 1;
    CHECK(dsb_model_pack(J, n, DSB_FMT_AUTO, &m, &err) == -1 && strstr(err.msg, "diagonal"),
          "nonzero diagonal rejected: %s", err.msg);
    J[3 * n + 3] = 0;
    J[3 * n + 5] = (int8_t)-J[5 * n + 3];
    CHECK(dsb_model_pack(J, n, DSB_FMT_AUTO, &m, &err) == -1 && strstr(err.msg, "symmetric"),
          "asymmetric rejected: %s", err.msg);
    J[3 * n + 5] = J[5 * n + 3] = 0;
    CHECK(dsb_model_pack(J, n, DSB_FMT_PM1, &m, &err) == -1 && strstr(err.msg, "pm1"),
          "zero off-diagonal rejected for pm1: %s", err.msg);
    CHECK(dsb_model_pack(J, n, DSB_FMT_AUTO, &m, &err) == 0 && m.format == DSB_FMT_TERNARY,
          "auto picks ternary");
    dsb_model_free(&m);
    J[3 * n + 5] = J[5 * n + 3] = 2;
    CHECK(dsb_model_pack(J, n, DSB_FMT_TERNARY, &m, &err) == -1, "2 rejected for ternary");
    CHECK(dsb_model_pack(J, n, DSB_FMT_AUTO, &m, &err) == 0 && m.format == DSB_FMT_INT8,
          "auto picks int8");
    dsb_model_free(&m);
    J[3 * n + 5] = J[5 * n + 3] = -128;
    CHECK(dsb_model_pack(J, n, DSB_FMT_INT8, &m, &err) == -1 && strstr(err.msg, "127"),
          "-128 rejected: %s", err.msg);
    free(J);
    uint32_t big = DSB_INT8_MAX_N + 1;
    int8_t *Z = calloc((size_t)big * big, 1);
    CHECK(dsb_model_pack(Z, big, DSB_FMT_INT8, &m, &err) == -1 && strstr(err.msg, "2048"),
          "int8 n > 2048 rejected: %s", err.msg);
    free(Z);

    /* corrupted packed images are rejected */
    J = random_J(n, 1);
    CHECK(dsb_model_pack(J, n, DSB_FMT_TERNARY, &m, &err) == 0, "pack");
    uint8_t *img = malloc(m.packed_bytes);
    dsb_model m2;
    memcpy(img, m.packed, m.packed_bytes);
    ((uint32_t *)img)[0] |= 1u; /* diagonal bit of row 0 */
    CHECK(dsb_model_from_packed(DSB_FMT_TERNARY, n, img, m.packed_bytes, &m2, &err) == -1,
          "diagonal bit rejected");
    memcpy(img, m.packed, m.packed_bytes);
    ((uint32_t *)img)[1] |= 1u << 20; /* column 52 >= n: padding */
    CHECK(dsb_model_from_packed(DSB_FMT_TERNARY, n, img, m.packed_bytes, &m2, &err) == -1 &&
              strstr(err.msg, "padding"),
          "padding rejected: %s", err.msg);
    memcpy(img, m.packed, m.packed_bytes);
    ((int32_t *)(img + 8 * (size_t)n * m.words))[7] += 1;
    CHECK(dsb_model_from_packed(DSB_FMT_TERNARY, n, img, m.packed_bytes, &m2, &err) == -1 &&
              strstr(err.msg, "row constant"),
          "row constant rejected: %s", err.msg);
    CHECK(dsb_model_from_packed(DSB_FMT_TERNARY, n, img, m.packed_bytes - 1, &m2, &err) == -1 &&
              strstr(err.msg, "bytes"),
          "short image rejected: %s", err.msg);
    free(img);
    dsb_model_free(&m);
    free(J);
}

static void test_step_arithmetic(void)
{
    CHECK(dsb_sign(0.0f) == -1 && dsb_sign(-0.0f) == -1 && dsb_sign(1e-30f) == 1, "sign(0) = -1");
    CHECK(dsb_pump(0, 1) == 0.0f && dsb_pump(0, 5) == 0.0f && dsb_pump(4, 5) == 1.0f &&
              dsb_pump(1, 5) == 0.25f,
          "pump schedule");
    /* one step by hand: f = xi a - (1-p) x; y += f dt; x += dt y */
    float x = 0.1f, y = -0.05f;
    dsb_step(&x, &y, 3, 0.75f, 0.5f, 0.25f);
    volatile float f = 0.5f * 3.0f;
    volatile float g = 0.75f * 0.1f;
    volatile float force = f - g;
    volatile float ye = -0.05f + force * 0.25f;
    volatile float xe = 0.1f + 0.25f * ye;
    CHECK(x == xe && y == ye, "step: got (%a,%a), by hand (%a,%a)", x, y, (float)xe, (float)ye);
    /* the wall */
    x = 0.9f, y = 2.0f;
    dsb_step(&x, &y, 0, 1.0f, 0.5f, 1.0f);
    CHECK(x == 1.0f && y == 0.0f, "wall at +1");
    x = -0.9f, y = -2.0f;
    dsb_step(&x, &y, 0, 1.0f, 0.5f, 1.0f);
    CHECK(x == -1.0f && y == 0.0f, "wall at -1");
    /* initial states: reproducible, in range, distinct across replicas */
    float x0, y0, x1, y1;
    dsb_initial_state(7, 3, 11, &x0, &y0);
    dsb_initial_state(7, 3, 11, &x1, &y1);
    CHECK(x0 == x1 && y0 == y1 && fabsf(x0) <= 0.125f && fabsf(y0) <= 0.125f, "initial state");
    dsb_initial_state(7, 4, 11, &x1, &y1);
    CHECK(x0 != x1 || y0 != y1, "replicas differ");
}

int main(void)
{
    test_row_sums_and_energy();
    test_pack_validation();
    test_step_arithmetic();
    return check_done();
}
