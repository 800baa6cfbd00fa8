/* Machine profile for the planner: the built-in H200 default, the JSON file
 * written by `dak profile`, and the per-shape GEMM rate lookup. */
#include "dak/planner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_read.h"

void dak_profile_default(dak_profile *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->source, sizeof p->source,
             "built-in default: H200 figures from SPEC.md (not measured by this run)");
    p->b_h = 51.1e9;        /* kernel reading pinned host memory, >= 16 blocks */
    p->b_g = 4.47e12;       /* HBM read by a kernel, 16-byte loads */
    p->peak_flops = 790e12; /* bf16 dense GEMM on the lent H200 */
    p->attn_flops = p->peak_flops;
    p->b_h_memcpy = 54.2e9; /* cudaMemcpy H2D from pinned memory */
}

void dak_profile_free(dak_profile *p)
{
    free(p->gemm);
    p->gemm = NULL;
    p->n_gemm = 0;
}

int dak_profile_load(const char *path, dak_profile *p, cm_err *err)
{
    memset(p, 0, sizeof *p);
    jr_doc doc;
    if (jr_parse_file(&doc, path, err)) return -1;
    const jr_val *o = doc.root;
    double bh, bg, tf, at, mc;
    const char *kind;
    int rc = -1;
    if (jr_expect(&doc, o, JR_OBJECT, "profile top level", err)) goto out;
    if (jr_get_str(&doc, o, "kind", 1, NULL, &kind, err)) goto out;
    if (strcmp(kind, "dak-profile")) {
        const jr_val *v = jr_obj_get(o, "kind");
        cm_fail(err, "%s:%d:%d: key 'kind': expected \"dak-profile\", got \"%s\"", doc.name,
                v->line, v->col, kind);
        goto out;
    }
    if (jr_get_f64(&doc, o, "b_h_gbs", 1, 1e-3, 1e6, 0, &bh, err)) goto out;
    if (jr_get_f64(&doc, o, "b_g_gbs", 1, 1e-3, 1e6, 0, &bg, err)) goto out;
    if (jr_get_f64(&doc, o, "bf16_tflops", 1, 1e-6, 1e6, 0, &tf, err)) goto out;
    if (jr_get_f64(&doc, o, "attn_tflops", 0, 1e-6, 1e6, tf, &at, err)) goto out;
    if (jr_get_f64(&doc, o, "h2d_memcpy_gbs", 0, 0, 1e6, 0, &mc, err)) goto out;
    snprintf(p->source, sizeof p->source, "%s", path);
    p->b_h = bh * 1e9, p->b_g = bg * 1e9, p->peak_flops = tf * 1e12, p->attn_flops = at * 1e12;
    p->b_h_memcpy = mc * 1e9;
    const jr_val *g = jr_obj_get(o, "gemm");
    if (g && g->type != JR_NULL) {
        if (jr_expect(&doc, g, JR_ARRAY, "key 'gemm'", err)) goto out;
        p->gemm = cm_calloc(g->len ? g->len : 1, sizeof *p->gemm);
        for (size_t i = 0; i < g->len; i++) {
            const jr_val *e = &g->items[i];
            dak_gemm_rate *r = &p->gemm[i];
            if (jr_expect(&doc, e, JR_OBJECT, "gemm entry", err)) goto out;
            if (jr_get_u64(&doc, e, "m", 1, 1, UINT64_C(1) << 40, 0, &r->m, err) ||
                jr_get_u64(&doc, e, "n", 1, 1, UINT64_C(1) << 40, 0, &r->n, err) ||
                jr_get_u64(&doc, e, "k", 1, 1, UINT64_C(1) << 40, 0, &r->k, err) ||
                jr_get_f64(&doc, e, "tflops", 1, 1e-9, 1e6, 0, &r->flops, err) ||
                jr_get_f64(&doc, e, "tflops_hbm", 0, 0, 1e6, 0, &r->flops_hbm, err))
                goto out;
            r->flops *= 1e12;
            r->flops_hbm *= 1e12;
            p->n_gemm++;
        }
    }
    rc = 0;
out:
    if (rc) dak_profile_free(p);
    jr_free(&doc);
    return rc;
}

void dak_profile_json(const dak_profile *p, json_w *w)
{
    json_kv_str(w, "kind", "dak-profile");
    json_kv_str(w, "source", p->source);
    json_kv_f64(w, "b_h_gbs", p->b_h / 1e9);
    json_kv_f64(w, "b_g_gbs", p->b_g / 1e9);
    json_kv_f64(w, "bf16_tflops", p->peak_flops / 1e12);
    json_kv_f64(w, "attn_tflops", p->attn_flops / 1e12);
    json_kv_f64(w, "h2d_memcpy_gbs", p->b_h_memcpy / 1e9);
    json_key(w, "gemm");
    json_arr_begin(w);
    for (size_t i = 0; i < p->n_gemm; i++) {
        json_obj_begin(w);
        json_kv_u64(w, "m", p->gemm[i].m);
        json_kv_u64(w, "n", p->gemm[i].n);
        json_kv_u64(w, "k", p->gemm[i].k);
        json_kv_f64(w, "tflops", p->gemm[i].flops / 1e12);
        json_kv_f64(w, "tflops_hbm", p->gemm[i].flops_hbm / 1e12);
        json_obj_end(w);
    }
    json_arr_end(w);
}

/* Compute rate of one table entry: its measured end-to-end rate when the
 * measurement was compute-bound (time >= DAK_COMPUTE_MARGIN x the time to
 * stream the bf16 weights from HBM), otherwise the best rate measured for the
 * shape (the tensor cores were waiting for memory, so the measurement says
 * nothing about compute except that it is shorter). */
static double entry_compute_rate(const dak_profile *p, const dak_gemm_rate *e, double shape_peak)
{
    double t_meas = 2.0 * (double)e->m * (double)e->n * (double)e->k / e->flops;
    double t_mem = 2.0 * (double)e->m * (double)e->k / p->b_g;
    return t_meas >= DAK_COMPUTE_MARGIN * t_mem ? e->flops : shape_peak;
}

double dak_profile_gemm_rate(const dak_profile *p, uint64_t m, uint64_t n, uint64_t k,
                             int *profiled)
{
    /* nearest profiled n below and above for this (m, k), and the shape's best rate */
    const dak_gemm_rate *lo = NULL, *hi = NULL;
    double peak = 0;
    for (size_t i = 0; i < p->n_gemm; i++) {
        const dak_gemm_rate *r = &p->gemm[i];
        if (r->m != m || r->k != k) continue;
        if (r->flops > peak) peak = r->flops;
        if (r->n <= n && (!lo || r->n > lo->n)) lo = r;
        if (r->n >= n && (!hi || r->n < hi->n)) hi = r;
    }
    if (profiled) *profiled = lo || hi;
    if (!lo && !hi) return p->peak_flops;
    if (!lo) return entry_compute_rate(p, hi, peak); /* flat outside the profiled range */
    double r_lo = entry_compute_rate(p, lo, peak);
    if (!hi || hi->n == lo->n) return r_lo;
    double r_hi = entry_compute_rate(p, hi, peak);
    double t = (log((double)n) - log((double)lo->n)) / (log((double)hi->n) - log((double)lo->n));
    return r_lo + t * (r_hi - r_lo);
}
