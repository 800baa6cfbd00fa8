/* dak bench gemm --sections smrate: do the SMs get unequal shares of HBM, and is the pattern
 * stable from launch to launch?  The split GEMM's stamps showed its CTAs' streaming ending
 * 6-24 us apart under an even split (dak-gemm.md, "Run 10").  Three steps: the per-SM times of
 * an even split over several launches (correlation between the odd and the even launches); an
 * even and a rate-weighted split interleaved; and the ranges rotated over the CTAs, to tell an
 * SM's own rate from its address range's.  (On the H200: a property of the SM, r = 0.95 against
 * 0.03 for the range; 24 SMs in TPC pairs stream 1.3x faster.  A split GEMM weighted by these
 * rates was no faster: NOTES-dak-kernels-history.md "Per-SM HBM rates".) */
#include "bench_sections.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/bench.h"
#include "common/error.h"

double bench_pearson(const double *x, const double *y, size_t n)
{
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; i++) mx += x[i], my += y[i];
    if (n == 0) return NAN;
    mx /= (double)n, my /= (double)n;
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
        syy += (y[i] - my) * (y[i] - my);
    }
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : NAN;
}

static double max_of(const double *v, size_t n)
{
    double m = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (v[i] > m) m = v[i];
    return m;
}

static double min_of(const double *v, size_t n)
{
    double m = INFINITY;
    for (size_t i = 0; i < n; i++)
        if (v[i] < m) m = v[i];
    return m;
}

int bench_smrate(dak_gemm_ctx *ctx, const void *gbuf, size_t gbytes, size_t bytes, uint32_t reps, json_w *w,
                 double *sm_us, uint32_t *nsm_out)
{
    cm_err err;
    const uint32_t sms = dak_gemm_ctx_sms(ctx);
    const size_t stride = 128ull << 20;
    if (reps < 4) reps = 4;
    if (bytes + stride > gbytes) return fprintf(stderr, "dak bench: smrate: probe buffer too small\n"), 1;
    const uint32_t nslice = (uint32_t)((gbytes - bytes) / stride) + 1u;
    int rc = 1;
    double *xe = NULL, *xo = NULL, *wt = NULL, *xt = NULL, *ysm = NULL, *yrg = NULL;
    uint32_t *sid = cm_malloc(sizeof *sid * sms);
    double *t = cm_malloc(sizeof *t * sms);
    double *by[2], gb_even[64], gb_w[64], sp[64];
    for (int h = 0; h < 2; h++) by[h] = cm_calloc(BENCH_SMRATE_MAXSM, sizeof(double));
    uint32_t cnt[2][BENCH_SMRATE_MAXSM] = {{0}}, nsm = 0;
    double *by_range = cm_calloc(sms, sizeof(double));
    if (reps > 64) reps = 64;
    /* 1: even split, per-SM times by %smid; odd and even launches kept apart */
    for (uint32_t r = 0; r < reps; r++) {
        const void *src = (const char *)gbuf + (size_t)(r % nslice) * stride;
        double g;
        if (dak_probe_hbm_sms(ctx, src, bytes, NULL, 0, 0, sid, t, &g, &err)) goto probe_failed;
        for (uint32_t b = 0; b < sms; b++) {
            if (sid[b] >= BENCH_SMRATE_MAXSM) {
                fprintf(stderr, "dak bench: smrate: %%smid %u >= %u\n", sid[b], BENCH_SMRATE_MAXSM);
                goto out;
            }
            by[r & 1u][sid[b]] += t[b], cnt[r & 1u][sid[b]]++;
            by_range[b] += t[b] / reps; /* rotate 0: CTA b reads range b */
            if (sid[b] + 1u > nsm) nsm = sid[b] + 1u;
        }
        double md = bench_median(t, sms);
        sp[r] = (max_of(t, sms) - min_of(t, sms)) / md;
    }
    xe = cm_malloc(sizeof *xe * nsm), xo = cm_malloc(sizeof *xo * nsm), wt = cm_malloc(sizeof *wt * nsm);
    size_t np = 0;
    for (uint32_t s = 0; s < nsm; s++) {
        double a = cnt[0][s] ? by[0][s] / cnt[0][s] : NAN, b = cnt[1][s] ? by[1][s] / cnt[1][s] : NAN;
        uint32_t n = cnt[0][s] + cnt[1][s];
        sm_us[s] = n ? (by[0][s] + by[1][s]) / n : NAN;
        wt[s] = n ? 1.0 / sm_us[s] : 0.0; /* rate per SM: equal bytes in time sm_us */
        if (isfinite(a) && isfinite(b)) xe[np] = a, xo[np] = b, np++;
    }
    double rho = bench_pearson(xe, xo, np);
    double fast = INFINITY, slow = 0, mean = 0;
    size_t nv = 0;
    for (uint32_t s = 0; s < nsm; s++)
        if (isfinite(sm_us[s])) {
            if (sm_us[s] < fast) fast = sm_us[s];
            if (sm_us[s] > slow) slow = sm_us[s];
            mean += sm_us[s], nv++;
        }
    mean /= (double)(nv ? nv : 1);
    /* 2: even and weighted, interleaved */
    for (uint32_t r = 0; r < reps; r++) {
        const void *src = (const char *)gbuf + (size_t)((r + 3u) % nslice) * stride;
        if (dak_probe_hbm_sms(ctx, src, bytes, NULL, 0, 0, sid, t, &gb_even[r], &err) ||
            dak_probe_hbm_sms(ctx, src, bytes, wt, nsm, 0, sid, t, &gb_w[r], &err))
            goto probe_failed;
    }
    /* 3: is a CTA's time its SM's or its address range's?  Rotate the ranges over the CTAs and
     * correlate each CTA's time with its SM's and with its range's mean time of step 1 */
    xt = cm_malloc(sizeof *xt * sms * reps), ysm = cm_malloc(sizeof *ysm * sms * reps),
    yrg = cm_malloc(sizeof *yrg * sms * reps);
    size_t nx = 0;
    for (uint32_t r = 0; r < reps; r++) {
        const uint32_t rot = (37u * r + 1u) % sms;
        const void *src = (const char *)gbuf + (size_t)(r % nslice) * stride;
        double g;
        if (dak_probe_hbm_sms(ctx, src, bytes, NULL, 0, rot, sid, t, &g, &err)) goto probe_failed;
        for (uint32_t b = 0; b < sms; b++)
            if (isfinite(sm_us[sid[b]])) xt[nx] = t[b], ysm[nx] = sm_us[sid[b]], yrg[nx] = by_range[(b + rot) % sms], nx++;
    }
    const double rho_sm = bench_pearson(xt, ysm, nx), rho_rg = bench_pearson(xt, yrg, nx);
    double ge = bench_median(gb_even, reps), gw = bench_median(gb_w, reps), spm = bench_median(sp, reps);
    printf("\n# smrate: %u CTAs (one per SM, %%smid < %u) each read one contiguous share of %.1f MB with 32 KiB bulk copies\n",
           sms, nsm, bytes / 1e6);
    printf("  even split: per-SM time, mean of %u launches: fastest %.2f us, mean %.2f, slowest %.2f (%.1f %%);\n"
           "  spread of one launch (max - min) / median: %.1f %% (median of %u); odd vs even launches, Pearson r = %.3f\n",
           reps, fast, mean, slow, 100.0 * (slow - fast) / mean, 100.0 * spm, reps, rho);
    printf("  interleaved, median of %u: even %.1f GB/s, weighted by the per-SM rates %.1f GB/s (%.3fx)\n", reps, ge, gw,
           gw / ge);
    printf("  ranges rotated over the CTAs: a CTA's time against its SM's mean r = %.3f, against its range's r = %.3f\n",
           rho_sm, rho_rg);
    fflush(stdout);
    json_key(w, "smrate");
    json_obj_begin(w);
    json_kv_u64(w, "bytes", bytes);
    json_kv_u64(w, "reps", reps);
    json_kv_f64(w, "pearson_odd_even", rho);
    json_kv_f64(w, "launch_spread_median", spm);
    json_kv_f64(w, "even_GBs", ge);
    json_kv_f64(w, "weighted_GBs", gw);
    json_kv_f64(w, "rotated_pearson_sm", rho_sm);
    json_kv_f64(w, "rotated_pearson_range", rho_rg);
    json_key(w, "sm_us");
    json_arr_begin(w);
    for (uint32_t s = 0; s < nsm; s++) json_f64(w, sm_us[s]);
    json_arr_end(w);
    json_obj_end(w);
    *nsm_out = nsm;
    rc = 0;
    goto out;
probe_failed:
    fprintf(stderr, "dak bench: smrate: %s\n", err.msg);
out:
    free(xt), free(ysm), free(yrg), free(by_range);
    free(sid), free(t), free(xe), free(xo), free(wt), free(by[0]), free(by[1]);
    return rc;
}
