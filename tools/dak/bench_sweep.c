/* dak bench gemm --sections sweep: for each N and offload ratio of one shape, the effective
 * bandwidth (A's bytes over the time) of the split GEMM against the aggregate-bandwidth bound, its
 * variants (mma.sync, tiled with and without multicast, 2-D copies, dynamic units) and the
 * baselines (cuBLAS all-HBM, prefetch, double-buffered prefetch, naive zero-copy, unified memory,
 * and the split GEMM as a sequence like the overlap baseline's). */
#include <math.h>
#include <string.h>

#include "bench_sections.h"

/* The split GEMM as a sequence of `layers` launches (the counterpart of the overlap baseline's
 * sequence): two launches, over A and over a view whose HBM rows are the copy Adp2 (host rows
 * shared, as overlap re-copies the same host rows), alternated on one blocking stream, or captured
 * once as a CUDA graph (graph set); PDL unless the split column's plan used the panel path (pdl
 * turns it off).  Median ms per GEMM; the sequence's plan (PDL changes it: host SMs, the stash) into *plan where
 * given and prepared (else left as it was). */
static double time_split_seq(dak_gemm_ctx *ctx, const dak_tiered *A, uint16_t *Adp2, const uint16_t *B, float *C,
                             uint32_t N, const bench_cfg *c, int panel_on, int graph, dak_gemm_plan *plan)
{
    cm_err err;
    op_t o;
    memset(&o, 0, sizeof o);
    o.kind = 6, o.ctx = ctx, o.layers = c->layers;
    dak_tiered A2;
    dak_gemm_opts so;
    bench_opts_host(&so, c);
    if (!panel_on) so.panel = 0, so.pdl = 1; /* pdl and the panel path exclude each other */
    double ms = NAN;
    cudaError_t e = cudaSuccess;
    if (dak_tiered_view(&A2, A->M, A->K, A->rows_host, A->host, Adp2, 1, &err) ||
        bench_prepare(ctx, A, B, C, N, &so, &o.seq[0], &err) || bench_prepare(ctx, &A2, B, C, N, &so, &o.seq[1], &err) ||
        ((e = cudaStreamCreate(&o.seq_stream)) != cudaSuccess && cm_fail(&err, "stream: %s", cudaGetErrorString(e)))) {
        fprintf(stderr, "dak bench: split-seq: %s\n", err.msg);
    } else {
        int failed;
        if (plan) *plan = *dak_gemm_launch_plan(o.seq[0]);
        ms = graph ? time_op_graph(&o, c->reps, &err, &failed) : time_op(&o, c->reps, &err, &failed);
        if (failed) fprintf(stderr, "dak bench: split-seq%s: %s\n", graph ? " (graph)" : "", err.msg);
    }
    if (o.seq_stream) cudaStreamDestroy(o.seq_stream);
    dak_gemm_launch_free(o.seq[0]);
    dak_gemm_launch_free(o.seq[1]);
    return ms;
}

/* One row of the sweep: N = ob->N with a fraction ratio_asked of A's rows (rounded to tiles) in
 * host memory; ob carries the baselines' operands, t_cublas the all-HBM time at this N. */
static void sweep_point(const bench_run *bench, bench_shape *s, op_t *ob, double ratio_asked, double t_cublas)
{
    cm_err err;
    const bench_cfg *c = bench->c;
    dak_gemm_ctx *ctx = bench->ctx;
    json_w *w = bench->w;
    const uint32_t M = s->M, N = ob->N, K = s->K;
    const size_t abytes = s->abytes;
    uint16_t *B = s->B;
    float *C = s->C;
    int failed;
    uint32_t rows;
    DK(dak_tiered_rows_for_ratio(M, DAK_TILE_ROWS, ratio_asked, &rows, &err));
    dak_tiered A, Ar;
    DK(dak_tiered_view(&A, M, K, rows, s->Ahp, s->Adp, 1, &err));
    DK(dak_tiered_view(&Ar, M, K, rows, s->Ah, s->Ad, 0, &err));
    ob->A = &Ar;
    double r = (double)rows / M;
    double bound = bench_bound_gbs(bench, abytes, r);
    dak_gemm_opts go;
    bench_opts_host(&go, c);
    dak_gemm_plan plan;
    memset(&plan, 0, sizeof plan); /* time_split fills it only on success */
    /* split: the defaults (host rows through the panel kernel where the tiled
       path would fetch them more than once); tiled and tiled-mc: the tiled
       kernel for every row, without and with cluster multicast */
    double t_split = time_split(ctx, &A, B, C, N, &go, c->reps, &plan, NULL);
    double t_wg = NAN; /* the same with the wide tiles on mma.sync, in the same run */
    if (N > 32) {
        go.wgmma = 0;
        t_wg = time_split(ctx, &A, B, C, N, &go, c->reps, NULL, NULL);
        go.wgmma = 2;
    }
    double t_tl = NAN, t_mc = NAN;
    dak_gemm_plan plan_mc = plan;
    if (N >= 128 && rows > 0) {
        go.panel = 0;
        t_tl = time_split(ctx, &A, B, C, N, &go, c->reps, NULL, NULL);
        if (c->cluster > 1) {
            go.cluster = c->cluster;
            t_mc = time_split(ctx, &A, B, C, N, &go, c->reps, &plan_mc, NULL);
        }
        go.panel = c->panel;
    }
    double t_2d = NAN;
    if (N <= 64) {
        go.cluster = 1, go.a_tma2d = 1, go.panel = 0; /* the panel path needs packed A */
        t_2d = time_split(ctx, &Ar, B, C, N, &go, c->reps, NULL, NULL);
        go.a_tma2d = 0, go.panel = c->panel;
    }
    double t_dyn = NAN;
    if (N <= 64) {
        go.cluster = 1, go.dyn = 1;
        t_dyn = time_split(ctx, &A, B, C, N, &go, c->reps, NULL, NULL);
        go.dyn = 0;
    }
    double t_pf = NAN, t_ov = NAN, t_nv = NAN, t_um = NAN;
    if (c->base_prefetch) {
        ob->kind = 2;
        t_pf = time_op(ob, c->reps, &err, &failed);
        if (failed) fprintf(stderr, "dak bench: prefetch: %s\n", err.msg);
    }
    double t_seq = NAN, t_ovg = NAN, t_seqg = NAN;
    dak_gemm_plan plan_seq;
    memset(&plan_seq, 0, sizeof plan_seq); /* time_split_seq fills it once prepared */
    if (c->base_overlap) {
        ob->kind = 3;
        t_ov = time_op(ob, c->reps, &err, &failed);
        if (failed) fprintf(stderr, "dak bench: overlap: %s\n", err.msg);
        t_seq = time_split_seq(ctx, &A, s->Adp2, B, C, N, c, plan.panel.on, 0, &plan_seq);
        /* both sequences again as CUDA graphs, interleaved */
        t_ovg = time_op_graph(ob, c->reps, &err, &failed);
        if (failed) fprintf(stderr, "dak bench: overlap (graph): %s\n", err.msg);
        t_seqg = time_split_seq(ctx, &A, s->Adp2, B, C, N, c, plan.panel.on, 1, NULL);
    }
    if (c->base_naive && N <= 64) {
        ob->kind = 4;
        t_nv = time_op(ob, c->reps < 3 ? c->reps : 3, &err, &failed);
        if (failed) fprintf(stderr, "dak bench: naive: %s\n", err.msg);
    }
    if (s->um && N <= 64) {
        ob->kind = 5, ob->um = s->um, ob->um_host_bytes = (size_t)rows * K * 2;
        t_um = time_op(ob, 3, &err, &failed);
        if (failed) {
            fprintf(stderr, "dak bench: uvm: %s (baseline dropped)\n", err.msg);
            cudaFree(s->um);
            s->um = NULL;
            cudaGetLastError();
        }
    }
    double eb = gbs(abytes, t_split);
    printf("%5u %6.2f %8.1f %8.1f %5.1f%% %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %9.1f %8.1f "
           "%9.1f\n",
           N, 100 * r, bound, eb, 100 * eb / bound, gbs(abytes, t_wg), gbs(abytes, t_tl), gbs(abytes, t_mc),
           gbs(abytes, t_2d), gbs(abytes, t_dyn), gbs(abytes, t_cublas), gbs(abytes, t_pf), gbs(abytes, t_ov),
           gbs(abytes, t_nv), gbs(abytes, t_um), gbs(abytes, t_seq), gbs(abytes, t_ovg), gbs(abytes, t_seqg));
    fflush(stdout);
    json_obj_begin(w);
    json_kv_u64(w, "M", M);
    json_kv_u64(w, "K", K);
    json_kv_u64(w, "N", N);
    json_kv_f64(w, "ratio_asked", ratio_asked);
    json_kv_f64(w, "ratio", r);
    json_kv_u64(w, "rows_host", rows);
    json_kv_f64(w, "bound_GBs", bound);
    json_kv_f64(w, "split_ms", t_split);
    json_kv_f64(w, "split_GBs", eb);
    json_kv_f64(w, "split_mma_ms", t_wg);
    json_kv_f64(w, "split_mma_GBs", gbs(abytes, t_wg));
    json_kv_f64(w, "split_TFLOPs", isfinite(t_split) ? 2.0 * M * N * K / (t_split * 1e9) : NAN);
    json_kv_f64(w, "split_mma_TFLOPs", isfinite(t_wg) ? 2.0 * M * N * K / (t_wg * 1e9) : NAN);
    json_kv_f64(w, "split_tiled_GBs", gbs(abytes, t_tl));
    json_kv_f64(w, "split_mc_GBs", gbs(abytes, t_mc));
    json_kv_f64(w, "split_2d_GBs", gbs(abytes, t_2d));
    json_kv_f64(w, "split_dyn_GBs", gbs(abytes, t_dyn));
    json_kv_f64(w, "cublas0_GBs", gbs(abytes, t_cublas));
    json_kv_f64(w, "prefetch_GBs", gbs(abytes, t_pf));
    json_kv_f64(w, "overlap_GBs", gbs(abytes, t_ov));
    json_kv_f64(w, "split_seq_GBs", gbs(abytes, t_seq));
    json_kv_f64(w, "overlap_graph_GBs", gbs(abytes, t_ovg));
    json_kv_f64(w, "split_seq_graph_GBs", gbs(abytes, t_seqg));
    json_kv_f64(w, "naive_GBs", gbs(abytes, t_nv));
    json_kv_f64(w, "uvm_GBs", gbs(abytes, t_um));
    json_kv_u64(w, "host_ctas", plan.host.ctas);
    json_kv_u64(w, "host_window", plan.host.window);
    json_kv_u64(w, "hbm_ctas", plan.hbm.ctas);
    json_kv_u64(w, "tile_align", c->tile_align);
    json_kv_u64(w, "l2_hints", c->l2_hints);
    json_kv_u64(w, "fix_rs", c->fix_rs);
    json_kv_u64(w, "stash", c->stash); /* opts.stash: applies to the PDL sequence columns (the split column is one launch) */
    /* the sequence columns' own plan (with PDL: 12 host SMs where the link binds, the stash the plan took) */
    json_kv_u64(w, "seq_host_ctas", plan_seq.host.ctas);
    json_kv_u64(w, "seq_host_window", plan_seq.host.window);
    json_kv_u64(w, "seq_hbm_ctas", plan_seq.hbm.ctas);
    json_kv_u64(w, "seq_stash", plan_seq.hbm_stash);
    json_kv_u64(w, "seq_hbm_pre", plan_seq.hbm_pre);
    json_kv_str(w, "seq_kernel", dak_split_kernel_name(plan_seq.kernel));
    json_kv_u64(w, "host_ksplit", plan.host.ksplit);
    json_kv_u64(w, "hbm_ksplit", plan.hbm.ksplit);
    json_kv_u64(w, "stages", plan.stages);
    json_kv_u64(w, "bm", plan.bm);
    json_kv_u64(w, "bn", plan.bn);
    json_kv_str(w, "kernel", dak_split_kernel_name(plan.kernel));
    json_kv_u64(w, "panel", plan.panel.on);
    json_kv_u64(w, "hbm_stages", plan.hbm_stages);
    json_kv_u64(w, "kstep", plan.kstep);
    json_kv_u64(w, "cluster_mc", plan_mc.cluster);
    json_obj_end(w);
}

void bench_sweep(const bench_run *bench, bench_shape *s)
{
    cm_err err;
    const bench_cfg *c = bench->c;
    json_w *w = bench->w;
    const uint32_t M = s->M, K = s->K;
    const size_t abytes = s->abytes;
    bench_shape_array(w, "sweep", s);
    printf("\n# A %ux%u (%.1f MB): effective bandwidth A-bytes/time in GB/s; bound = min(B_h/r, B_g/(1-r))\n", M, K,
           abytes / 1e6);
    printf("# mma.sync: the split column's configuration with wgmma 0 (wide tiles on mma.sync; N > 32)\n");
    printf("# split kernels' HBM tiles: --bm %u (0 = auto: 128 rows where N > 32; JSON \"bm\" per point), --bn %u\n"
           "# (0 = auto: as wide as N / cluster up to 256, 128 beside a tiled host tier; JSON \"bn\" per point)\n",
           c->bm, c->bn);
    printf("# split-seq: the split column's GEMM as a sequence of %u (as overlap), PDL where the plan has no panel;\n"
           "# ov-graph, seq-graph: overlap and split-seq captured as CUDA graphs\n",
           c->layers);
    printf("%5s %6s %8s %8s %6s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %9s %8s %9s\n", "N", "r%", "bound", "split",
           "%bnd", "mma.sync", "tiled", "tiled-mc", "split-2d", "dyn", "cublas0", "prefetch", "overlap", "naive", "uvm",
           "split-seq", "ov-graph", "seq-graph");
    for (int ni = 0; ni < c->nn; ni++) {
        uint32_t N = c->ns[ni];
        op_t ob;
        memset(&ob, 0, sizeof ob);
        ob.ctx = bench->ctx, ob.Afull = s->Ad, ob.B = s->B, ob.C = s->C, ob.M = M, ob.N = N, ob.K = K;
        ob.stage[0] = s->st[0], ob.stage[1] = s->st[1], ob.layers = c->layers;
        int failed;
        double t_cublas = NAN;
        if (c->base_cublas) {
            ob.kind = 1;
            t_cublas = time_op(&ob, c->reps, &err, &failed);
            if (failed) fprintf(stderr, "dak bench: cublas: %s\n", err.msg);
        }
        for (int ri = 0; ri < c->nr; ri++) sweep_point(bench, s, &ob, c->ratios[ri], t_cublas), bench_step(bench);
    }
    json_arr_end(w);
}
