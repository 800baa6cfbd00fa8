/* The per-shape sections of dak bench gemm that turn one of the split kernel's mechanisms or
 * knobs: read amplification of the tiled path without and with multicast against the panel path
 * and the GEMM's own congestion sweep (--sections amp, first shape only), wave alignment on/off
 * (wave), and the diag table of kstep x stages with parts of the kernel switched off (diag). */
#include <math.h>
#include <string.h>

#include "bench_sections.h"

/* The N each section times (not --n's); B and C are allocated for the widest (bench_ablations_nmax) */
static const uint32_t amp_ns[] = {256, 512, 1024, 2048, 4096};
static const uint32_t amp_cong_n = 8; /* the GEMM congestion sweep */
static const uint32_t wave_ns[] = {1, 8, 64};
static const uint32_t diag_ns[] = {1, 8, 64};
#define NLIST(a) (sizeof a / sizeof a[0])

uint32_t bench_ablations_nmax(const bench_cfg *c, int first_shape)
{
    uint32_t m = 0;
    if (c->sec_amp && first_shape) m = bench_list_max(amp_ns, NLIST(amp_ns), amp_cong_n);
    if (c->sec_wave) m = bench_list_max(wave_ns, NLIST(wave_ns), m);
    if (c->sec_diag) m = bench_list_max(diag_ns, NLIST(diag_ns), m);
    return m;
}

/* ---- read amplification (Table 1), first shape, r = 100% ---- */
static void amp_read(const bench_run *bench, const bench_shape *s)
{
    const bench_cfg *c = bench->c;
    json_w *w = bench->w;
    const uint32_t M = s->M, K = s->K;
    const size_t abytes = s->abytes;
    printf("\n# read amplification: A %ux%u all in host memory (%.1f MB), %u host SMs (0 = auto); tiled path\n"
           "# without multicast (cluster 1), with cluster %u multicast, and the A-stationary panel path\n",
           M, K, abytes / 1e6, c->host_sms, c->cluster);
    printf("%5s %6s %8s %10s %10s %10s %10s %10s\n", "N", "path", "cluster", "host MB", "amplif", "plan", "ms",
           "EB GB/s");
    json_key(w, "amplification");
    json_arr_begin(w);
    cm_err err;
    dak_tiered A;
    DK(dak_tiered_view(&A, M, K, M, s->Ahp, s->Adp, 1, &err));
    for (size_t i = 0; i < NLIST(amp_ns); i++)
        for (int mode = 0; mode < 3; mode++) { /* interleaved: no multicast, multicast, panel */
            dak_gemm_opts go;
            bench_opts_host(&go, c);
            go.cluster = mode == 1 ? c->cluster : 1;
            go.panel = mode == 2;
            uint64_t hb = 0;
            dak_gemm_plan plan;
            memset(&plan, 0, sizeof plan);
            double ms = time_split(bench->ctx, &A, s->B, s->C, amp_ns[i], &go, 3, &plan, &hb);
            const char *path = mode == 2 ? "panel" : "tiled";
            uint32_t cl = mode == 2 ? plan.panel.cluster : plan.cluster;
            double pa = (double)dak_gemm_plan_host_bytes(&plan) / abytes;
            printf("%5u %6s %8u %10.1f %10.2f %10.2f %10.2f %10.1f\n", amp_ns[i], path, cl, hb / 1e6,
                   (double)hb / abytes, pa, ms, gbs(abytes, ms));
            fflush(stdout);
            json_obj_begin(w);
            json_kv_u64(w, "N", amp_ns[i]);
            json_kv_str(w, "path", path);
            json_kv_u64(w, "cluster", cl);
            json_kv_u64(w, "host_bytes", hb);
            json_kv_f64(w, "amplification", (double)hb / abytes);
            json_kv_f64(w, "plan_amplification", pa);
            json_kv_f64(w, "ms", ms);
            json_kv_f64(w, "GBs", gbs(abytes, ms));
            json_kv_u64(w, "host_ctas", mode == 2 ? plan.panel.ctas : plan.host.ctas);
            json_kv_u64(w, "window", mode == 2 ? plan.panel.window : plan.host.window);
            if (mode == 2) {
                json_kv_u64(w, "panel_blocks", plan.panel.pblocks);
                json_kv_u64(w, "panel_kstep", plan.panel.kstep);
                json_kv_u64(w, "panel_bstages", plan.panel.bstages);
            }
            json_obj_end(w);
        }
    json_arr_end(w);
}

/* congestion with the GEMM itself: host SMs x window at r = 2% and 10%, N = 8 */
static void amp_congestion(const bench_run *bench, const bench_shape *s)
{
    const bench_cfg *c = bench->c;
    json_w *w = bench->w;
    const uint32_t M = s->M, K = s->K;
    const size_t abytes = s->abytes;
    printf("\n# GEMM congestion sweep: A %ux%u N %u\n", M, K, amp_cong_n);
    printf("%6s %6s %4s %10s %8s\n", "r%", "hostSM", "W", "EB GB/s", "%bound");
    json_key(w, "gemm_congestion");
    json_arr_begin(w);
    cm_err err;
    dak_tiered A;
    static const double gr[] = {0.02, 0.1};
    static const uint32_t ghs[] = {2, 4, 8, 16, 32};
    static const uint32_t gws[] = {1, 2, 3, 5}; /* in ring slots; N = 8 gives 5 slots */
    for (size_t a = 0; a < 2; a++) {
        uint32_t rows;
        DK(dak_tiered_rows_for_ratio(M, DAK_TILE_ROWS, gr[a], &rows, &err));
        DK(dak_tiered_view(&A, M, K, rows, s->Ahp, s->Adp, 1, &err));
        double r = (double)rows / M;
        double bound = bench_bound_gbs(bench, abytes, r);
        for (size_t b = 0; b < 5; b++)
            for (size_t d = 0; d < 4; d++) {
                dak_gemm_opts go;
                bench_opts(&go, c);
                go.host_ctas = ghs[b], go.window = gws[d];
                dak_gemm_plan plan;
                memset(&plan, 0, sizeof plan); /* time_split fills it only on success */
                double ms = time_split(bench->ctx, &A, s->B, s->C, amp_cong_n, &go, c->reps, &plan, NULL);
                printf("%6.2f %6u %4u %10.1f %7.1f%%\n", 100 * r, ghs[b], plan.host.window, gbs(abytes, ms),
                       100 * gbs(abytes, ms) / bound);
                fflush(stdout);
                json_obj_begin(w);
                json_kv_f64(w, "ratio", r);
                json_kv_u64(w, "host_sms", ghs[b]);
                json_kv_u64(w, "window", plan.host.window);
                json_kv_f64(w, "GBs", gbs(abytes, ms));
                json_kv_f64(w, "bound_GBs", bound);
                json_obj_end(w);
            }
    }
    json_arr_end(w);
}

void bench_amp(const bench_run *bench, const bench_shape *s)
{
    amp_read(bench, s);
    amp_congestion(bench, s);
}

/* ---- wave alignment on/off ---- */
void bench_wave(const bench_run *bench, const bench_shape *s)
{
    const bench_cfg *c = bench->c;
    json_w *w = bench->w;
    const uint32_t M = s->M, K = s->K;
    const size_t abytes = s->abytes;
    static const double wr[] = {0.0, 0.05};
    printf("\n# wave alignment: A %ux%u\n", M, K);
    printf("%5s %6s %10s %10s %8s\n", "N", "r%", "align GB/s", "off GB/s", "gain");
    bench_shape_array(w, "wave", s);
    for (size_t a = 0; a < NLIST(wave_ns); a++)
        for (size_t b = 0; b < 2; b++) {
            cm_err err;
            uint32_t rows;
            dak_tiered A;
            DK(dak_tiered_rows_for_ratio(M, DAK_TILE_ROWS, wr[b], &rows, &err));
            DK(dak_tiered_view(&A, M, K, rows, s->Ahp, s->Adp, 1, &err));
            dak_gemm_opts go;
            bench_opts_host(&go, c);
            double on = time_split(bench->ctx, &A, s->B, s->C, wave_ns[a], &go, c->reps, NULL, NULL);
            go.wave_align = 0;
            double off = time_split(bench->ctx, &A, s->B, s->C, wave_ns[a], &go, c->reps, NULL, NULL);
            printf("%5u %6.2f %10.1f %10.1f %7.2fx\n", wave_ns[a], 100.0 * rows / M, gbs(abytes, on),
                   gbs(abytes, off), off / on);
            fflush(stdout);
            json_obj_begin(w);
            json_kv_u64(w, "M", M);
            json_kv_u64(w, "K", K);
            json_kv_u64(w, "N", wave_ns[a]);
            json_kv_f64(w, "ratio", (double)rows / M);
            json_kv_f64(w, "aligned_GBs", gbs(abytes, on));
            json_kv_f64(w, "unaligned_GBs", gbs(abytes, off));
            json_obj_end(w);
        }
    json_arr_end(w);
}

/* ---- diagnostics: r = 0, N = 1, 8 and 64: kstep x stages x (math, no math, old B layout, no cluster
 * attribute, B box 8) ---- */
void bench_diag(const bench_run *bench, const bench_shape *s)
{
    const bench_cfg *c = bench->c;
    json_w *w = bench->w;
    const uint32_t M = s->M, K = s->K;
    const size_t abytes = s->abytes;
    bench_shape_array(w, "diag", s);
    printf("\n# diag: A %ux%u r = 0: kstep x stages x math (GB/s)\n", M, K);
    printf("%5s %6s %7s %10s %10s %10s %10s %10s\n", "N", "kstep", "stages", "math", "no math", "B n-major",
           "no clu.at", "other Bbox");
    cm_err err;
    dak_tiered A;
    DK(dak_tiered_view(&A, M, K, 0, s->Ahp, s->Adp, 1, &err));
    static const uint32_t dk[] = {1, 2, 4};
    static const uint32_t dst[] = {0, 3, 8};
    for (size_t a = 0; a < NLIST(diag_ns); a++)
        for (size_t b = 0; b < 3; b++)
            for (size_t e = 0; e < 3; e++) {
                if ((K / 64) % dk[b]) continue;
                dak_gemm_opts go;
                bench_opts(&go, c);
                go.kstep = dk[b], go.stages = dst[e];
                dak_gemm_plan plan;
                cm_err perr;
                if (dak_gemm_plan_make(M, diag_ns[a], K, 0, &go, bench->sms, bench->smem_optin, &plan, &perr))
                    continue; /* does not fit */
                double t1 = time_split(bench->ctx, &A, s->B, s->C, diag_ns[a], &go, c->reps, NULL, NULL);
                go.diag_nomath = 1;
                double t0 = time_split(bench->ctx, &A, s->B, s->C, diag_ns[a], &go, c->reps, NULL, NULL);
                go.diag_nomath = 0, go.diag_b_nmajor = 1; /* the B layout before run 5 */
                double t2 = time_split(bench->ctx, &A, s->B, s->C, diag_ns[a], &go, c->reps, NULL, NULL);
                go.diag_b_nmajor = 0, go.diag_plain_launch = 1; /* launch without the cluster attribute */
                double t3 = time_split(bench->ctx, &A, s->B, s->C, diag_ns[a], &go, c->reps, NULL, NULL);
                double t4 = NAN; /* the other B box at N <= 8 (16 rows if bn8, else 8), stage count as asked */
                go.diag_plain_launch = 0, go.bn8 = !go.bn8;
                if (diag_ns[a] <= 8)
                    t4 = time_split(bench->ctx, &A, s->B, s->C, diag_ns[a], &go, c->reps, NULL, NULL);
                printf("%5u %6u %7u %10.1f %10.1f %10.1f %10.1f %10.1f\n", diag_ns[a], dk[b], plan.hbm_stages,
                       gbs(abytes, t1), gbs(abytes, t0), gbs(abytes, t2), gbs(abytes, t3), gbs(abytes, t4));
                fflush(stdout);
                json_obj_begin(w);
                json_kv_u64(w, "N", diag_ns[a]);
                json_kv_u64(w, "kstep", dk[b]);
                json_kv_u64(w, "stages", plan.hbm_stages); /* r = 0: the HBM tier's ring */
                json_kv_f64(w, "GBs", gbs(abytes, t1));
                json_kv_f64(w, "nomath_GBs", gbs(abytes, t0));
                json_kv_f64(w, "b_nmajor_GBs", gbs(abytes, t2));
                json_kv_f64(w, "plain_launch_GBs", gbs(abytes, t3));
                json_kv_f64(w, "other_bbox_GBs", gbs(abytes, t4));
                json_obj_end(w);
            }
    json_arr_end(w);
}
