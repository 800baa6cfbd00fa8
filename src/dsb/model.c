/* Packed coupling models: validation, packing, unpacking, exact energies
 * (seed 000, Sec. III, Table I, Prop. 1). */
#include "dsb/model.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dsb/core.h"

const char *dsb_format_name(dsb_format f)
{
    switch (f) {
    case DSB_FMT_PM1: return "pm1";
    case DSB_FMT_TERNARY: return "ternary";
    case DSB_FMT_INT8: return "int8";
    case DSB_FMT_AUTO: return "auto";
    }
    return "unknown";
}

int dsb_format_parse(const char *s, dsb_format *out)
{
    static const dsb_format all[] = {DSB_FMT_AUTO, DSB_FMT_PM1, DSB_FMT_TERNARY, DSB_FMT_INT8};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        const char *name = dsb_format_name(all[i]);
        size_t k = 0;
        while (name[k] && s[k] && tolower((unsigned char)s[k]) == name[k]) k++;
        if (!name[k] && !s[k]) {
            *out = all[i];
            return 0;
        }
    }
    return -1;
}

size_t dsb_packed_bytes(dsb_format f, uint32_t n)
{
    size_t W = dsb_words(n);
    switch (f) {
    case DSB_FMT_PM1: return 4 * (size_t)n * W;
    case DSB_FMT_TERNARY: return 8 * (size_t)n * W + 4 * (size_t)n;
    case DSB_FMT_INT8: return (size_t)n * 32 * W;
    default: return 0;
    }
}

static float default_xi(uint32_t n, int64_t frob2)
{
    /* xi = 0.5 sqrt(n-1) / ||J||_F (Sec. II-A); a zero J keeps xi = 0.5 so a
     * field-only problem still moves. */
    if (frob2 <= 0 || n < 2) return 0.5f;
    return (float)(0.5 * sqrt((double)(n - 1)) / sqrt((double)frob2));
}

/* Which formats can hold J: bit 0 PM1, bit 1 TERNARY, bit 2 INT8. */
static int validate_dense(const int8_t *J, uint32_t n, int64_t *frob2, cm_err *err)
{
    int ok = 7;
    int64_t f2 = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (J[(size_t)i * n + i] != 0)
            return cm_fail(err, "J[%u][%u] = %d: the diagonal must be zero", i, i,
                           J[(size_t)i * n + i]),
                   -1;
        for (uint32_t j = 0; j < n; j++) {
            int v = J[(size_t)i * n + j];
            if (v != J[(size_t)j * n + i])
                return cm_fail(err, "J is not symmetric: J[%u][%u] = %d but J[%u][%u] = %d", i, j,
                               v, j, i, J[(size_t)j * n + i]),
                       -1;
            if (v == -128)
                return cm_fail(err, "J[%u][%u] = -128: INT8 couplings must satisfy |J| <= 127", i,
                               j),
                       -1;
            if (i != j && v != 1 && v != -1) ok &= ~1;
            if (v < -1 || v > 1) ok &= ~2;
            f2 += (int64_t)v * v;
        }
    }
    *frob2 = f2;
    return ok;
}

int dsb_model_pack(const int8_t *J, uint32_t n, dsb_format fmt, dsb_model *out, cm_err *err)
{
    memset(out, 0, sizeof *out);
    if (n < 1) return cm_fail(err, "n = 0: a model needs at least one variable");
    int64_t frob2 = 0;
    int ok = validate_dense(J, n, &frob2, err);
    if (ok < 0) return -1;
    if (fmt == DSB_FMT_AUTO)
        fmt = (ok & 1) ? DSB_FMT_PM1 : (ok & 2) ? DSB_FMT_TERNARY : DSB_FMT_INT8;
    if (fmt == DSB_FMT_PM1 && !(ok & 1))
        return cm_fail(err, "format pm1 needs every off-diagonal J_ij in {-1,+1}");
    if (fmt == DSB_FMT_TERNARY && !(ok & 2))
        return cm_fail(err, "format ternary needs every J_ij in {-1,0,+1}");
    if (fmt == DSB_FMT_INT8 && n > DSB_INT8_MAX_N)
        return cm_fail(err,
                       "format int8 needs n <= %u for exact FP32 sums (Prop. 1(iii)); got n = %u",
                       DSB_INT8_MAX_N, n);
    if (fmt != DSB_FMT_PM1 && fmt != DSB_FMT_TERNARY && fmt != DSB_FMT_INT8)
        return cm_fail(err, "unknown format %d", (int)fmt);

    uint32_t W = dsb_words(n);
    out->format = fmt;
    out->n = n;
    out->words = W;
    out->packed_bytes = dsb_packed_bytes(fmt, n);
    out->packed = cm_calloc(out->packed_bytes, 1);
    out->frob2 = frob2;
    out->xi_default = default_xi(n, frob2);

    uint32_t *plane = (uint32_t *)out->packed;
    for (uint32_t i = 0; i < n; i++) {
        const int8_t *row = J + (size_t)i * n;
        if (fmt == DSB_FMT_INT8) {
            memcpy(out->packed + (size_t)i * 32 * W, row, n);
            continue;
        }
        uint32_t *p = plane + (size_t)i * W;
        uint32_t *m = plane + ((size_t)n + i) * W; /* TERNARY only */
        int32_t np = 0, nm = 0;
        for (uint32_t j = 0; j < n; j++) {
            if (row[j] == 1) p[j / 32] |= 1u << (j % 32), np++;
            if (row[j] == -1 && fmt == DSB_FMT_TERNARY) m[j / 32] |= 1u << (j % 32), nm++;
        }
        if (fmt == DSB_FMT_TERNARY) ((int32_t *)(plane + 2 * (size_t)n * W))[i] = np - nm;
    }
    return 0;
}

int8_t dsb_model_coupling(const dsb_model *m, uint32_t i, uint32_t j)
{
    if (m->format == DSB_FMT_INT8) return dsb_model_int8_row(m, i)[j];
    if (i == j) return 0;
    const uint32_t *p = dsb_model_plane(m, 0) + (size_t)i * m->words;
    int bit = (p[j / 32] >> (j % 32)) & 1;
    if (m->format == DSB_FMT_PM1) return bit ? 1 : -1;
    const uint32_t *mm = dsb_model_plane(m, 1) + (size_t)i * m->words;
    return (int8_t)(bit - (int)((mm[j / 32] >> (j % 32)) & 1));
}

int dsb_model_from_packed(dsb_format fmt, uint32_t n, const void *packed, size_t bytes,
                          dsb_model *out, cm_err *err)
{
    memset(out, 0, sizeof *out);
    if (fmt != DSB_FMT_PM1 && fmt != DSB_FMT_TERNARY && fmt != DSB_FMT_INT8)
        return cm_fail(err, "packed model: unknown format %d (expected 1 pm1, 2 ternary, 3 int8)",
                       (int)fmt);
    if (n < 1) return cm_fail(err, "packed model: n = 0");
    if (fmt == DSB_FMT_INT8 && n > DSB_INT8_MAX_N)
        return cm_fail(err, "packed model: int8 needs n <= %u (Prop. 1(iii)), got %u",
                       DSB_INT8_MAX_N, n);
    size_t want = dsb_packed_bytes(fmt, n);
    if (bytes != want)
        return cm_fail(err, "packed model: %s n=%u needs %zu bytes, got %zu", dsb_format_name(fmt),
                       n, want, bytes);
    dsb_model m = {.format = fmt, .n = n, .words = dsb_words(n), .packed_bytes = bytes};
    m.packed = cm_malloc(bytes);
    memcpy(m.packed, packed, bytes);
    uint32_t W = m.words;
    int64_t frob2 = 0;
    for (uint32_t i = 0; i < n; i++) {
        /* padding and diagonal */
        if (fmt == DSB_FMT_INT8) {
            const int8_t *row = dsb_model_int8_row(&m, i);
            for (uint32_t j = n; j < 32 * W; j++)
                if (row[j]) goto bad_pad;
        } else {
            for (int plane = 0; plane < (fmt == DSB_FMT_TERNARY ? 2 : 1); plane++) {
                const uint32_t *r = dsb_model_plane(&m, plane) + (size_t)i * W;
                if ((r[i / 32] >> (i % 32)) & 1) {
                    cm_fail(err, "packed model: row %u has a diagonal bit set in plane %d", i,
                            plane);
                    goto fail;
                }
                if (n % 32 && (r[W - 1] >> (n % 32))) goto bad_pad;
            }
        }
        int32_t np = 0, nm = 0;
        for (uint32_t j = 0; j < n; j++) {
            int v = dsb_model_coupling(&m, i, j);
            if (fmt == DSB_FMT_TERNARY && ((dsb_model_plane(&m, 0)[(size_t)i * W + j / 32] &
                                            dsb_model_plane(&m, 1)[(size_t)i * W + j / 32]) >>
                                           (j % 32)) & 1) {
                cm_fail(err, "packed model: J[%u][%u] is set in both the +1 and -1 planes", i, j);
                goto fail;
            }
            if (v != dsb_model_coupling(&m, j, i)) {
                cm_fail(err, "packed model: not symmetric at (%u,%u)", i, j);
                goto fail;
            }
            if (v == -128 || (fmt == DSB_FMT_INT8 && i == j && v != 0)) {
                cm_fail(err, "packed model: J[%u][%u] = %d not allowed", i, j, v);
                goto fail;
            }
            np += v == 1;
            nm += v == -1;
            frob2 += (int64_t)v * v;
        }
        if (fmt == DSB_FMT_TERNARY && dsb_model_row_const(&m)[i] != np - nm) {
            cm_fail(err, "packed model: row constant %u is %d, expected |P|-|M| = %d", i,
                    dsb_model_row_const(&m)[i], np - nm);
            goto fail;
        }
    }
    m.frob2 = frob2;
    m.xi_default = default_xi(n, frob2);
    *out = m;
    return 0;
bad_pad:
    cm_fail(err, "packed model: padding beyond column n = %u must be zero", n);
fail:
    free(m.packed);
    return -1;
}

void dsb_model_free(dsb_model *m)
{
    free(m->packed);
    memset(m, 0, sizeof *m);
}

/* The INT8 row sum of the CPU reference, compiled twice where the compiler can
 * (AVX2 and baseline x86-64, chosen at load time): the same integer either
 * way, so bit-exactness with the GPU is untouched. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
static int32_t int8_row_sum_host(const int8_t *j, const int8_t *s, uint32_t n)
{
    return dsb_int8_row_sum(j, s, n);
}

int32_t dsb_model_row_sum(const dsb_model *m, uint32_t i, const uint32_t *v, const int8_t *s8)
{
    uint32_t W = m->words;
    switch (m->format) {
    case DSB_FMT_PM1: {
        int32_t s_i = ((v[i / 32] >> (i % 32)) & 1) ? 1 : -1;
        return dsb_pm1_row_sum(dsb_model_plane(m, 0) + (size_t)i * W, v, W, m->n, s_i);
    }
    case DSB_FMT_TERNARY:
        return dsb_ternary_row_sum(dsb_model_plane(m, 0) + (size_t)i * W,
                                   dsb_model_plane(m, 1) + (size_t)i * W,
                                   dsb_model_row_const(m)[i], v, W);
    case DSB_FMT_INT8: {
        if (s8) return int8_row_sum_host(dsb_model_int8_row(m, i), s8, m->n);
        const int8_t *row = dsb_model_int8_row(m, i);
        int32_t acc = 0;
        for (uint32_t j = 0; j < m->n; j++)
            acc += (int32_t)row[j] * (((v[j / 32] >> (j % 32)) & 1) ? 1 : -1);
        return acc;
    }
    default: return 0;
    }
}

int64_t dsb_energy2(const dsb_model *m, const int16_t *h, const uint32_t *v)
{
    int64_t e2 = 0;
    for (uint32_t i = 0; i < m->n; i++) {
        int32_t s_i = ((v[i / 32] >> (i % 32)) & 1) ? 1 : -1;
        e2 += dsb_energy2_term(s_i, dsb_model_row_sum(m, i, v, NULL), h ? h[i] : 0);
    }
    return e2;
}
