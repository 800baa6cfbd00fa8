/* dak bench gemm --sections fixed,wgmma: what one launch costs at r = 0.  wgmma: the wide tiles
 * through mma.sync against wgmma and cuBLAS, one launch each.  fixed: the split kernel's variants,
 * cuBLAS, an empty kernel and the streaming floor (A's bytes and nothing else, without and with PDL) timed as
 * one launch, back to back and as a graph, and the per-CTA %globaltimer stamps of one launch (where its time goes,
 * and whether it follows smrate's SMs); at r = 0, or at each ratio of --ratios when given (cuBLAS stays all-HBM). */
#include <math.h>
#include <string.h>

#include "bench_sections.h"
#include "common/bench.h"

/* ---- fixed cost per launch (issue #7): the split kernel and cuBLAS timed alike, as one
 * launch, as FX_L launches back to back, and as a CUDA graph of those FX_L launches; the
 * back-to-back launches rotate over FX_NCP copies of A (4 x >= 90 MB, more than the 60 MB
 * L2), and the L2 is flushed once before each timed repetition. ---- */
#define FX_NCP 4
#define FX_L 8

typedef struct {
    int kind; /* 0 split, 1 cublas, 2 empty kernel, 3 the streaming floor (dak_diag_stream) */
    dak_gemm_ctx *ctx;
    dak_gemm_launch *l[FX_NCP];
    uint16_t *const *ar;
    const uint16_t *B;
    float *C;
    uint32_t M, N, K, grid, smem;
    size_t abytes;              /* the streaming floor: A's bytes */
    dak_stream_floor_opts floor; /* the streaming floor's options (dak_diag_stream) */
} fx_op;

static int fx_enqueue(fx_op *o, int i, cudaStream_t st, cm_err *err)
{
    if (o->kind == 0) return dak_gemm_run(o->l[i % FX_NCP], st, err);
    if (o->kind == 1) return dak_base_cublas(o->ctx, o->ar[i % FX_NCP], o->B, o->C, o->M, o->N, o->K, st, err);
    if (o->kind == 3) return dak_diag_stream(o->ctx, o->ar[i % FX_NCP], o->abytes, o->B, &o->floor, st, err);
    return dak_diag_empty(o->ctx, o->grid, o->smem, st, err);
}

/* one launch (bench_time_reps' callback for mode 0) */
static int fx_enqueue_one(void *arg, cudaStream_t st, cm_err *err) { return fx_enqueue((fx_op *)arg, 0, st, err); }

/* the FX_L launches back to back (bench_capture's callback for the graph) */
static int fx_enqueue_seq(void *arg, cudaStream_t st, cm_err *err)
{
    for (int j = 0; j < FX_L; j++)
        if (fx_enqueue((fx_op *)arg, j, st, err)) return -1;
    return 0;
}

/* median microseconds per launch; mode 0: one launch, 1: FX_L back to back, 2: graph of FX_L */
static double fx_time(fx_op *o, int mode, uint32_t reps, cudaStream_t st)
{
    cm_err err;
    int failed = 1;
    double us = NAN;
    cudaGraphExec_t ge = NULL;
    if (mode != 2 || (ge = bench_capture(fx_enqueue_seq, o, st, &err))) {
        const bench_timed_op op = {
            .ctx = o->ctx, .st = st, .graph = ge, .enqueue = mode ? fx_enqueue_seq : fx_enqueue_one, .arg = o};
        us = bench_time_reps(&op, reps, 1e3, mode ? FX_L : 1, &err, &failed);
    }
    if (ge) cudaGraphExecDestroy(ge);
    if (failed) {
        fprintf(stderr, "dak bench: fixed (kind %d, mode %d): %s\n", o->kind, mode, err.msg);
        cudaStreamSynchronize(st);
        cudaGetLastError();
    }
    return us;
}

static int fx_prepare(fx_op *o, dak_gemm_ctx *ctx, const dak_tiered *At, const uint16_t *B, float *C, uint32_t N,
                      const dak_gemm_opts *go)
{
    cm_err err;
    memset(o, 0, sizeof *o);
    o->kind = 0, o->ctx = ctx;
    for (int i = 0; i < FX_NCP; i++)
        if (bench_prepare(ctx, &At[i], B, C, N, go, &o->l[i], &err)) {
            fprintf(stderr, "dak bench: fixed: %s\n", err.msg);
            for (int j = 0; j < i; j++) dak_gemm_launch_free(o->l[j]);
            return -1;
        }
    return 0;
}

static void fx_free(fx_op *o)
{
    for (int i = 0; i < FX_NCP; i++) dak_gemm_launch_free(o->l[i]);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Median over the CTAs where both stamps a < b were taken (nonzero) of t[b] - t[a], in us; NAN if none. */
static double fx_med_gap(const uint64_t *ts, uint32_t g, int a, int b, uint64_t *buf)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < g; i++) {
        const uint64_t *t = ts + (size_t)i * DAK_GEMM_NTIMES;
        if (t[a] && t[b] >= t[a]) buf[n++] = t[b] - t[a];
    }
    if (!n) return NAN;
    qsort(buf, n, 8, cmp_u64);
    return buf[n / 2] / 1e3;
}

/* stamps of one run, in us: [0] kernel span (last exit - first entry), [1] entry spread,
 * [2] first copy issued - entry (median), [3] first slot full - entry (median), [4] streaming
 * (last - first slot full, median), [5] spread of the last slot full, [6] tail after the last
 * slot (median), [7] its max, [8] event time - span; the epilogue of a CTA's last tile (medians
 * over the CTAs with the stamps): [9] math done to exit, [10] math done to the fix-up's wait
 * passed, [11] the wait to the adds done, [12] adds done to exit; the prologue (medians): [13] entry
 * to the producer's start, [14] to its first segment computed */
#define FX_NST 15
static void fx_stamps(const uint64_t *ts, uint32_t g, double ev_us, double *o)
{
    uint64_t *a = cm_malloc(8 * g), mn0 = UINT64_MAX, mx0 = 0, mx5 = 0, mn4 = UINT64_MAX, mx4 = 0, mxt = 0;
    double med[4];
    for (int f = 0; f < 4; f++) {
        for (uint32_t i = 0; i < g; i++) {
            const uint64_t *t = ts + (size_t)i * DAK_GEMM_NTIMES;
            a[i] = f == 0 ? t[1] - t[0] : f == 1 ? t[3] - t[0] : f == 2 ? t[4] - t[3] : t[5] - t[4];
        }
        qsort(a, g, 8, cmp_u64);
        med[f] = a[g / 2] / 1e3;
    }
    for (uint32_t i = 0; i < g; i++) {
        const uint64_t *t = ts + (size_t)i * DAK_GEMM_NTIMES;
        if (t[0] < mn0) mn0 = t[0];
        if (t[0] > mx0) mx0 = t[0];
        if (t[5] > mx5) mx5 = t[5];
        if (t[4] < mn4) mn4 = t[4];
        if (t[4] > mx4) mx4 = t[4];
        if (t[5] - t[4] > mxt) mxt = t[5] - t[4];
    }
    o[0] = (mx5 - mn0) / 1e3, o[1] = (mx0 - mn0) / 1e3, o[2] = med[0], o[3] = med[1], o[4] = med[2];
    o[5] = (mx4 - mn4) / 1e3, o[6] = med[3], o[7] = mxt / 1e3, o[8] = ev_us - o[0];
    o[9] = fx_med_gap(ts, g, 7, 5, a), o[10] = fx_med_gap(ts, g, 7, 8, a), o[11] = fx_med_gap(ts, g, 8, 9, a);
    o[12] = fx_med_gap(ts, g, 9, 5, a);
    o[13] = fx_med_gap(ts, g, 0, 10, a), o[14] = fx_med_gap(ts, g, 0, 11, a);
    free(a);
}

/* the FX_NCP copies of A the back-to-back launches rotate over (copy 0 is the shape's own), and
 * the stream the section times on */
typedef struct {
    uint16_t *ap[FX_NCP];   /* packed, for the split kernel */
    uint16_t *ar[FX_NCP];   /* row-major, for cuBLAS */
    dak_tiered At[FX_NCP];  /* the views of ap: r = 0 (all rows in HBM), or the fixed section's ratio (the host
                               rows shared, as the sweep's split-seq shares them) */
    uint32_t groups;        /* the rows of the groups the GEMM asks A packed in (dak_gemm_a_group_rows at N 64 with
                               the bench's options and PDL), 0: none */
    uint16_t *ag[FX_NCP];   /* with groups: A packed in them (dak_pack_groups), ... */
    dak_tiered Ag[FX_NCP];  /* ... and their all-HBM views */
    cudaStream_t fs;
} fx_copies;

/* The split kernel's variants in the fixed-cost and wgmma A/B tables, each over the bench's options. */
static void fx_set_pdl(dak_gemm_opts *go) { go->pdl = 1; }
/* pdl-hw: no host-link hand-over (host CTAs wait first) */
static void fx_set_pdl_hostwait(dak_gemm_opts *go) { fx_set_pdl(go), go->diag_pdl_host_wait = 1; }
/* no-hint: without L2 cache policies (l2_hints 0) */
static void fx_set_no_l2hint(dak_gemm_opts *go) { go->l2_hints = 0; }
/* nofix: shared tiles skip the fix-up, each CTA stores its partial (C wrong) */
static void fx_set_nofix(dak_gemm_opts *go) { go->diag_nofixup = 1; }
/* nomath: the copies alone */
static void fx_set_nomath(dak_gemm_opts *go) { go->diag_nomath = 1; }
/* nomath-noB: A's copies alone (no math, no B) */
static void fx_set_nomath_nob(dak_gemm_opts *go) { go->diag_nomath = 1, go->diag_nob = 1; }
/* noload: the math and epilogue alone (no copies) */
static void fx_set_noload(dak_gemm_opts *go) { go->diag_noload = 1, go->panel = 0; }
/* dyn: the HBM tier in dynamic units */
static void fx_set_dyn(dak_gemm_opts *go) { go->dyn = 1; }
/* dyn-pdl: dynamic units as a programmatic dependent (the sequences' and graphs' comparison with pdl) */
static void fx_set_dyn_pdl(dak_gemm_opts *go) { fx_set_dyn(go), fx_set_pdl(go); }
/* own-fix: the owner sums each shared tile (not reduce-scatter) */
static void fx_set_ownfix(dak_gemm_opts *go) { go->fix_rs = 0; }

/* One variant of the split kernel: a column of a table and its JSON keys. */
typedef struct {
    const char *column;              /* its head in the table */
    const char *us_key;              /* its JSON key: median us per launch */
    const char *gbs_key;             /* the JSON key of its GB/s of A, or NULL (not written) */
    int single_only;                 /* timed as one launch only (NaN back to back and as a graph) */
    int needs_host_rows;             /* timed only with host rows (else NaN) */
    void (*set)(dak_gemm_opts *go);  /* its options, or NULL: the split kernel as asked */
    int needs_bm128;                 /* timed only where the plan has 128-row HBM tiles (else NaN) */
    int grouped;                     /* over A packed in the GEMM's row groups (fx_copies.Ag; NaN where it asks none
                                        or with host rows) */
} fx_variant;

/* the wgmma A/B table's variants: wide tiles through mma.sync, through wgmma, and wgmma with one of the options above
 * or the 128-row tiles / the epilogue from L2 (diag_epi_global) */
static void wg_set_mma(dak_gemm_opts *go) { go->wgmma = 0; }
static void wg_set_wgmma(dak_gemm_opts *go) { go->wgmma = 1; }
static void wg_set_ownfix(dak_gemm_opts *go) { wg_set_wgmma(go), fx_set_ownfix(go); }
static void wg_set_nohint(dak_gemm_opts *go) { wg_set_wgmma(go), fx_set_no_l2hint(go); }
static void wg_set_bm128(dak_gemm_opts *go) { wg_set_wgmma(go), go->bm = 128; }
static void wg_set_noring(dak_gemm_opts *go) { wg_set_wgmma(go), go->diag_epi_global = 1; }
static const fx_variant wg_variants[] = {
    {.column = "mma us", .us_key = "mma_us", .set = wg_set_mma},
    {.column = "wgmma us", .us_key = "wgmma_us", .set = wg_set_wgmma},
    {.column = "own-fix", .us_key = "wgmma_ownfix_us", .set = wg_set_ownfix},
    {.column = "no-hint", .us_key = "wgmma_no_l2hint_us", .set = wg_set_nohint},
    {.column = "bm128", .us_key = "wgmma_bm128_us", .set = wg_set_bm128, .needs_bm128 = 1},
    {.column = "no-ring", .us_key = "wgmma_noring_us", .set = wg_set_noring},
};
enum { WG_NV = sizeof wg_variants / sizeof wg_variants[0] };

/* The wgmma table's N (B and C are allocated for the widest: bench_fixed_nmax) */
static const uint32_t wg_ns[] = {64, 128, 256, 512, 1024};
#define WG_NN (sizeof wg_ns / sizeof wg_ns[0])

/* wgmma A/B (issue 7): one launch, r = 0, wide tiles through mma.sync vs wgmma, and cuBLAS */
static void fixed_wgmma_ab(const bench_run *bench, const bench_shape *s, const fx_copies *cp)
{
    const bench_cfg *c = bench->c;
    dak_gemm_ctx *ctx = bench->ctx;
    json_w *w = bench->w;
    const uint32_t M = s->M, K = s->K;
    const size_t abytes = s->abytes;
    printf("\n# fixed, wgmma A/B: A %ux%u r = 0, one launch (us, TFLOP/s, GB/s of A)\n", M, K);
    printf("# own-fix: wgmma with the owner summing each shared tile after the others (fix_rs 0, not by\n"
           "# reduce-scatter); no-hint: wgmma without L2 cache policies (l2_hints 0); bm128: wgmma with\n"
           "# 128-row tiles (opts.bm 128; auto is 256 x 128 at 64 < N <= 128); no-ring: wgmma with the last tile's partials added from L2 and C\n"
           "# stored from the fragments (diag_epi_global), not through the idle ring\n");
    printf("%5s", "N");
    for (int v = 0; v < WG_NV; v++) printf(" %10s", wg_variants[v].column);
    printf(" %10s %8s %8s %8s %9s %9s\n", "cublas us", "mma TF", "wgmma TF", "cublas TF", "mma GB/s", "wgmma GB/s");
    for (size_t a = 0; a < WG_NN; a++) {
        const uint32_t N = wg_ns[a];
        double t[WG_NV + 1];
        for (int v = 0; v < WG_NV; v++) {
            dak_gemm_opts go;
            bench_opts(&go, c);
            wg_variants[v].set(&go);
            fx_op so;
            t[v] = NAN;
            if (fx_prepare(&so, ctx, cp->At, s->B, s->C, N, &go)) continue;
            if (!wg_variants[v].needs_bm128 || dak_gemm_launch_plan(so.l[0])->bm == 128u)
                t[v] = fx_time(&so, 0, c->reps, cp->fs);
            fx_free(&so);
        }
        fx_op cb = {.kind = 1, .ctx = ctx, .ar = cp->ar, .B = s->B, .C = s->C, .M = M, .N = N, .K = K};
        const double tc = t[WG_NV] = fx_time(&cb, 0, c->reps, cp->fs);
        const double fl = 2.0 * M * N * K;
        printf("%5u", N);
        for (int v = 0; v <= WG_NV; v++) printf(" %10.2f", t[v]);
        printf(" %8.1f %8.1f %8.1f %9.1f %9.1f\n", fl / (t[0] * 1e6), fl / (t[1] * 1e6), fl / (tc * 1e6),
               gbs(abytes, t[0] / 1e3), gbs(abytes, t[1] / 1e3));
        fflush(stdout);
        json_obj_begin(w);
        json_kv_u64(w, "N", N);
        json_kv_str(w, "mode", "wgmma_ab_single");
        for (int v = 0; v < WG_NV; v++) json_kv_f64(w, wg_variants[v].us_key, t[v]);
        json_kv_f64(w, "cublas_us", tc);
        json_kv_f64(w, "mma_TFLOPs", fl / (t[0] * 1e6));
        json_kv_f64(w, "wgmma_TFLOPs", fl / (t[1] * 1e6));
        json_kv_f64(w, "cublas_TFLOPs", fl / (tc * 1e6));
        json_kv_f64(w, "mma_GBs", gbs(abytes, t[0] / 1e3));
        json_kv_f64(w, "wgmma_GBs", gbs(abytes, t[1] / 1e3));
        json_obj_end(w);
    }
}

/* in the table's column order (the JSON keys follow it) */
static const fx_variant fx_variants[] = {
    {"split", "split_us", "split_GBs", 0, 0, NULL, 0, 0},
    {"pdl", "split_pdl_us", "split_pdl_GBs", 0, 0, fx_set_pdl, 0, 0},
    {"pdl-hw", "split_pdl_hostwait_us", NULL, 0, 1, fx_set_pdl_hostwait, 0, 0},
    {"no-hint", "split_no_l2hint_us", NULL, 0, 0, fx_set_no_l2hint, 0, 0},
    {"nofix", "split_nofix_us", NULL, 1, 0, fx_set_nofix, 0, 0},
    {"nomath", "split_nomath_us", NULL, 1, 0, fx_set_nomath, 0, 0},
    {"noB", "split_nomath_nob_us", NULL, 1, 0, fx_set_nomath_nob, 0, 0},
    {"noload", "split_noload_us", NULL, 1, 0, fx_set_noload, 0, 0},
    {"dyn", "split_dyn_us", "split_dyn_GBs", 0, 0, fx_set_dyn, 0, 0},
    {"dyn-pdl", "split_dyn_pdl_us", "split_dyn_pdl_GBs", 0, 0, fx_set_dyn_pdl, 0, 0},
    {"own-fix", "split_ownfix_us", "split_ownfix_GBs", 0, 0, fx_set_ownfix, 0, 0},
    {"grp-pdl", "group_pdl_us", "group_pdl_GBs", 0, 0, fx_set_pdl, 0, 1},
};
enum { FX_NV = sizeof fx_variants / sizeof fx_variants[0] };

/* The streaming floor's columns (dak_diag_stream: A's bytes streamed and nothing else, what no GEMM that reads A can
 * beat a launch): on every SM without and with PDL; then under PDL one of a GEMM's own costs at a time: the plain
 * split's CTA count, one B slot's rows fetched after the wait before more A, the split's prologue before the first copy
 * (FX_PRE_NS) and its tail after the last slot (FX_POST_NS, the fixed section's stamps at N = 1 on 7168^2); and all four
 * together ("s-gemm": a GEMM without its math, hand-overs or spread). */
#define FX_PRE_NS 1600u
#define FX_POST_NS 1400u
typedef struct {
    const char *column, *us_key, *gbs_key;
    int pdl, plan_ctas, b_copy;
    uint32_t pre_ns, post_ns;
} fx_floor;
static const fx_floor fx_floors[] = {
    {"stream", "stream_floor_us", "stream_floor_GBs", 0, 0, 0, 0, 0},
    {"strm-pdl", "stream_floor_pdl_us", "stream_floor_pdl_GBs", 1, 0, 0, 0, 0},
    {"s-ctas", "stream_floor_pdl_plan_ctas_us", "stream_floor_pdl_plan_ctas_GBs", 1, 1, 0, 0, 0},
    {"s-B", "stream_floor_pdl_b_copy_us", "stream_floor_pdl_b_copy_GBs", 1, 0, 1, 0, 0},
    {"s-pre", "stream_floor_pdl_prologue_us", "stream_floor_pdl_prologue_GBs", 1, 0, 0, FX_PRE_NS, 0},
    {"s-post", "stream_floor_pdl_tail_us", "stream_floor_pdl_tail_GBs", 1, 0, 0, 0, FX_POST_NS},
    {"s-gemm", "stream_floor_pdl_all_us", "stream_floor_pdl_all_GBs", 1, 1, 1, FX_PRE_NS, FX_POST_NS},
};
enum { FX_NF = sizeof fx_floors / sizeof fx_floors[0] };

/* The fixed-cost table's header: its columns are fixed_cost's row. */
static void fixed_cost_header(void)
{
    printf("%4s %6s", "N", "mode");
    for (int v = 0; v < FX_NV; v++) printf(" %8s", fx_variants[v].column);
    printf(" %8s %8s %8s", "cublas", "empty", "empty0");
    for (int f = 0; f < FX_NF; f++) printf(" %8s", fx_floors[f].column);
    printf("\n");
}

/* One N of the fixed-cost table: each variant as one launch, FX_L back to back and a graph. */
static void fixed_cost(const bench_run *bench, const bench_shape *s, const fx_copies *cp, uint32_t N)
{
    const bench_cfg *c = bench->c;
    dak_gemm_ctx *ctx = bench->ctx;
    json_w *w = bench->w;
    const uint32_t M = s->M, K = s->K;
    const size_t abytes = s->abytes;
    static const char *const mname[] = {"single", "seq", "graph"};
    const int hostrows = cp->At[0].rows_host > 0;
    fx_op so[FX_NV];
    int ok[FX_NV];
    for (int v = 0; v < FX_NV; v++) {
        const fx_variant *fv = &fx_variants[v];
        dak_gemm_opts go;
        bench_opts_host(&go, c);
        if (fv->set) fv->set(&go);
        const int can = fv->grouped ? cp->groups && !hostrows : !fv->needs_host_rows || hostrows;
        ok[v] = can && !fx_prepare(&so[v], ctx, fv->grouped ? cp->Ag : cp->At, s->B, s->C, N, &go);
    }
    fx_op cb = {.kind = 1, .ctx = ctx, .ar = cp->ar, .B = s->B, .C = s->C, .M = M, .N = N, .K = K};
    const dak_gemm_plan *pl = ok[0] ? dak_gemm_launch_plan(so[0].l[0]) : NULL; /* the plain split's */
    uint32_t grid = pl ? pl->host.ctas + pl->hbm.ctas : bench->sms;
    fx_op em = {.kind = 2, .ctx = ctx, .grid = grid, .smem = pl ? pl->smem_bytes : 0};
    fx_op em0 = em;
    em0.smem = 0;
    fx_op sf[FX_NF];
    for (int f = 0; f < FX_NF; f++)
        sf[f] = (fx_op){.kind = 3,
                        .ctx = ctx,
                        .ar = cp->ar,
                        .B = s->B,
                        .abytes = abytes,
                        .floor = {.ctas = fx_floors[f].plan_ctas ? grid : bench->sms,
                                  .pdl = fx_floors[f].pdl,
                                  .b_copy = fx_floors[f].b_copy,
                                  .b_bytes = (size_t)K * N * 2u, /* B holds at least this run's N columns */
                                  .pre_ns = fx_floors[f].pre_ns,
                                  .post_ns = fx_floors[f].post_ns}};
    for (int mode = 0; mode < 3; mode++) {
        double t[FX_NV];
        for (int v = 0; v < FX_NV; v++) {
            const int want = mode == 0 || !fx_variants[v].single_only;
            t[v] = ok[v] && want ? fx_time(&so[v], mode, c->reps, cp->fs) : NAN;
        }
        const double t_cb = fx_time(&cb, mode, c->reps, cp->fs);
        const double t_em = mode < 2 ? fx_time(&em, mode, c->reps, cp->fs) : NAN;
        const double t_em0 = mode < 2 ? fx_time(&em0, mode, c->reps, cp->fs) : NAN;
        double t_sf[FX_NF];
        for (int f = 0; f < FX_NF; f++) /* a tiny shape: less than a copy a CTA, or B under one slot's rows */
            t_sf[f] = dak_stream_floor_fits(abytes, &sf[f].floor) ? fx_time(&sf[f], mode, c->reps, cp->fs) : NAN;
        printf("%4u %6s", N, mname[mode]);
        for (int v = 0; v < FX_NV; v++) printf(" %8.2f", t[v]);
        printf(" %8.2f %8.2f %8.2f", t_cb, t_em, t_em0);
        for (int f = 0; f < FX_NF; f++) printf(" %8.2f", t_sf[f]);
        printf("\n");
        fflush(stdout);
        json_obj_begin(w);
        json_kv_u64(w, "N", N);
        json_kv_f64(w, "ratio", (double)cp->At[0].rows_host / M);
        json_kv_u64(w, "rows_host", cp->At[0].rows_host);
        json_kv_u64(w, "host_ctas", pl ? pl->host.ctas : 0);
        json_kv_u64(w, "host_window", pl ? pl->host.window : 0);
        json_kv_str(w, "mode", mname[mode]);
        json_kv_u64(w, "launches", mode ? FX_L : 1);
        for (int v = 0; v < FX_NV; v++) json_kv_f64(w, fx_variants[v].us_key, t[v]);
        json_kv_f64(w, "cublas_us", t_cb);
        json_kv_f64(w, "empty_smem_us", t_em);
        json_kv_f64(w, "empty_0_us", t_em0);
        for (int f = 0; f < FX_NF; f++) json_kv_f64(w, fx_floors[f].us_key, t_sf[f]);
        for (int v = 0; v < FX_NV; v++)
            if (fx_variants[v].gbs_key) json_kv_f64(w, fx_variants[v].gbs_key, gbs(abytes, t[v] / 1e3));
        json_kv_f64(w, "cublas_GBs", gbs(abytes, t_cb / 1e3));
        for (int f = 0; f < FX_NF; f++) json_kv_f64(w, fx_floors[f].gbs_key, gbs(abytes, t_sf[f] / 1e3));
        json_obj_end(w);
    }
    for (int v = 0; v < FX_NV; v++)
        if (ok[v]) fx_free(&so[v]);
}

/* where one launch's time goes: per-CTA %globaltimer stamps (static, dynamic units, or A in row groups) */
static void fixed_stamps(const bench_run *bench, const bench_shape *s, const fx_copies *cp, uint32_t N, int dv)
{
    cm_err err;
    const bench_cfg *c = bench->c;
    dak_gemm_ctx *ctx = bench->ctx;
    json_w *w = bench->w;
    const cudaStream_t fs = cp->fs;
    static const char *const stn[] = {"static", "dyn", "grp"};
    dak_gemm_opts gt;
    bench_opts_host(&gt, c);
    gt.diag_times = 1, gt.dyn = dv == 1;
    dak_gemm_launch *lt;
    if (bench_prepare(ctx, dv == 2 ? &cp->Ag[0] : &cp->At[0], s->B, s->C, N, &gt, &lt, &err)) {
        fprintf(stderr, "dak bench: fixed: %s\n", err.msg);
        return;
    }
    const dak_gemm_plan *plt = dak_gemm_launch_plan(lt);
    uint32_t g = plt->host.ctas + plt->hbm.ctas;
    uint64_t *ts = cm_malloc((size_t)g * DAK_GEMM_NTIMES * 8);
    double st[FX_NST][16];
    uint32_t nr = c->reps < 16 ? c->reps : 16;
    static cudaEvent_t f0, f1;
    if (!f0) {
        CK(cudaEventCreate(&f0));
        CK(cudaEventCreate(&f1));
    }
    for (uint32_t i = 0; i < nr + 2; i++) {
        DK(dak_l2_flush(ctx, fs, &err));
        CK(cudaEventRecord(f0, fs));
        DK(dak_gemm_run(lt, fs, &err));
        CK(cudaEventRecord(f1, fs));
        CK(cudaEventSynchronize(f1));
        float ms;
        CK(cudaEventElapsedTime(&ms, f0, f1));
        DK(dak_gemm_times(lt, ts, (size_t)g * DAK_GEMM_NTIMES, &g, &err));
        double o9[FX_NST];
        fx_stamps(ts, g, 1e3 * ms, o9);
        if (i >= 2)
            for (int f = 0; f < FX_NST; f++) st[f][i - 2] = o9[f];
    }
    double md[FX_NST];
    for (int f = 0; f < FX_NST; f++) md[f] = bench_median(st[f], nr);
    /* does the last run's spread follow the SMs' HBM rates (smrate section)? */
    double rho_sm = NAN;
    if (bench->nsm) {
        double *xs = cm_malloc(sizeof *xs * g), *ys = cm_malloc(sizeof *ys * g);
        size_t np = 0;
        for (uint32_t b = 0; b < g; b++) {
            const uint64_t *t = ts + (size_t)b * DAK_GEMM_NTIMES;
            if (t[6] < bench->nsm && isfinite(bench->sm_us[t[6]]) && t[4] > t[3])
                xs[np] = (double)(t[4] - t[3]), ys[np] = bench->sm_us[t[6]], np++;
        }
        rho_sm = bench_pearson(xs, ys, np);
        free(xs), free(ys);
    }
    printf("     %s stamps (us, median of %u): span %.2f = event %.2f - outside %.2f; entry spread %.2f, "
           "first copy +%.2f, first slot full +%.2f, streaming %.2f, last-slot spread %.2f, "
           "tail after last slot %.2f (max %.2f)\n",
           stn[dv], nr, md[0], md[0] + md[8], md[8], md[1], md[2], md[3], md[4], md[5], md[6], md[7]);
    printf("     %s epilogue of the last tile (us, medians): math done to exit %.2f; math done to the fix-up's "
           "wait passed %.2f, its adds %.2f, adds done to exit %.2f\n",
           stn[dv], md[9], md[10], md[11], md[12]);
    printf("     %s prologue (us, medians from entry): producer starts +%.2f, first segment computed +%.2f, first "
           "copy issued +%.2f\n",
           stn[dv], md[13], md[14], md[2]);
    if (bench->nsm) printf("     streaming time per CTA vs its SM's smrate time: Pearson r = %.3f (last run)\n", rho_sm);
    fflush(stdout);
    json_obj_begin(w);
    json_kv_u64(w, "N", N);
    json_kv_u64(w, "rows_host", cp->At[0].rows_host);
    json_kv_str(w, "mode", dv == 2 ? "stamps_grp" : dv ? "stamps_dyn" : "stamps");
    static const char *const sn[FX_NST] = {"span_us",      "entry_spread_us", "first_copy_us",
                                            "first_full_us", "streaming_us",   "last_full_spread_us",
                                            "tail_us",      "tail_max_us",     "outside_us",
                                            "epi_us",       "epi_wait_us",     "epi_adds_us",
                                            "epi_store_us",  "producer_start_us", "first_segment_us"};
    for (int f = 0; f < FX_NST; f++) json_kv_f64(w, sn[f], md[f]);
    json_kv_f64(w, "pearson_vs_smrate", rho_sm);
    /* the last run's per-CTA stamps: %smid, streaming (last - first slot full), entry to exit */
    static const char *const rk[3] = {"cta_smid", "cta_stream_us", "cta_span_us"};
    for (int k = 0; k < 3; k++) {
        json_key(w, rk[k]);
        json_arr_begin(w);
        for (uint32_t b = 0; b < g; b++) {
            const uint64_t *t = ts + (size_t)b * DAK_GEMM_NTIMES;
            if (k == 0) json_u64(w, t[6]);
            else json_f64(w, k == 1 ? (t[4] - t[3]) / 1e3 : (t[5] - t[0]) / 1e3);
        }
        json_arr_end(w);
    }
    json_obj_end(w);
    free(ts);
    dak_gemm_launch_free(lt);
}

/* The FX_L launches of a graph (fixed_pair_timeline's, mode 2), run in order on st. */
typedef struct {
    dak_gemm_launch **l;
} fx_graph_seq;
static int fx_enqueue_graph_seq(void *arg, cudaStream_t st, cm_err *err)
{
    for (int j = 0; j < FX_L; j++)
        if (dak_gemm_run(((fx_graph_seq *)arg)->l[j], st, err)) return -1;
    return 0;
}

/* A PDL pair's timeline (both tiers, or the HBM tier alone at r = 0), with pdl and stamps, the last of three runs
 * (an L2 flush before each); per launch and tier the median and the latest CTA of each stamp, in us from the first
 * launch's first entry.  Does the second launch's host traffic start where the first one's ends (the host-link
 * hand-over)?  When does its wait return against the first one's last exit?  mode 0: two launches over copies 0 and 1
 * of A, back to back on a stream; 1: the same without the hand-over (pdl-hw); 2: launches FX_L / 2 - 1 and FX_L / 2
 * of a CUDA graph of FX_L over the FX_NCP copies (the fixed section's graph: a pair in the steady state, its
 * launches fetched from device memory). */
static void fixed_pair_timeline(const bench_run *bench, const bench_shape *s, const fx_copies *cp, uint32_t N,
                                int mode)
{
    cm_err err;
    dak_gemm_ctx *ctx = bench->ctx;
    json_w *w = bench->w;
    dak_gemm_opts gt;
    bench_opts_host(&gt, bench->c);
    gt.pdl = 1, gt.diag_times = 1, gt.diag_pdl_host_wait = mode == 1;
    const int nl = mode == 2 ? FX_L : 2, k0 = mode == 2 ? FX_L / 2 - 1 : 0; /* launches; the pair's first */
    dak_gemm_launch *l[FX_L] = {NULL};
    for (int k = 0; k < nl; k++)
        if (bench_prepare(ctx, &cp->At[k % FX_NCP], s->B, s->C, N, &gt, &l[k], &err)) {
            fprintf(stderr, "dak bench: fixed pair: %s\n", err.msg);
            for (int j = 0; j < k; j++) dak_gemm_launch_free(l[j]);
            return;
        }
    const dak_gemm_plan *pl = dak_gemm_launch_plan(l[0]);
    const uint32_t H = pl->host.ctas, g = H + pl->hbm.ctas;
    fx_graph_seq gs = {l};
    cudaGraphExec_t ge = mode == 2 ? bench_capture(fx_enqueue_graph_seq, &gs, cp->fs, &err) : NULL;
    if (mode == 2 && !ge) {
        fprintf(stderr, "dak bench: fixed pair (graph): %s\n", err.msg);
        for (int k = 0; k < nl; k++) dak_gemm_launch_free(l[k]);
        return;
    }
    uint64_t *ts[2];
    for (int k = 0; k < 2; k++) ts[k] = cm_malloc((size_t)g * DAK_GEMM_NTIMES * 8);
    for (int i = 0; i < 3; i++) {
        DK(dak_l2_flush(ctx, cp->fs, &err));
        if (ge)
            CK(cudaGraphLaunch(ge, cp->fs));
        else
            for (int k = 0; k < 2; k++) DK(dak_gemm_run(l[k], cp->fs, &err));
        CK(cudaStreamSynchronize(cp->fs));
    }
    uint32_t gg;
    for (int k = 0; k < 2; k++) DK(dak_gemm_times(l[k0 + k], ts[k], (size_t)g * DAK_GEMM_NTIMES, &gg, &err));
    uint64_t t0 = UINT64_MAX;
    for (uint32_t b = 0; b < g; b++) t0 = ts[0][(size_t)b * DAK_GEMM_NTIMES] < t0 ? ts[0][(size_t)b * DAK_GEMM_NTIMES] : t0;
    static const int fs[] = {0, 12, 2, 1, 3, 4, 5};
    static const char *const fn[] = {"entry", "gate", "wait", "copy", "first_full", "last_full", "exit"};
    enum { NF = sizeof fs / sizeof fs[0] };
    static const char *const mkey[] = {"pair_timeline", "pair_timeline_hostwait", "pair_timeline_graph"};
    char title[64] = "";
    if (mode == 1) snprintf(title, sizeof title, " (pdl-hw: no hand-over)");
    if (mode == 2) snprintf(title, sizeof title, " (launches %d and %d of a graph of %d)", k0, k0 + 1, FX_L);
    printf("     PDL pair%s, us from launch %d's first entry (median / latest CTA): entry, host gate passed, "
           "griddepcontrol.wait returned, first copy after it, first slot full, last slot full, exit\n",
           title, k0);
    json_obj_begin(w);
    json_kv_u64(w, "N", N);
    json_kv_u64(w, "rows_host", cp->At[0].rows_host);
    json_kv_str(w, "mode", mkey[mode]);
    double *v = cm_malloc(sizeof(double) * g);
    for (int k = 0; k < 2; k++)
        for (int tier = 0; tier < 2; tier++) {
            const uint32_t b0 = tier ? H : 0, b1 = tier ? g : H;
            printf("     launch %d %s (%u CTAs):", k0 + k, tier ? "hbm " : "host", b1 - b0);
            for (int f = 0; f < NF; f++) {
                size_t nv = 0;
                double mx = NAN;
                for (uint32_t b = b0; b < b1; b++) {
                    const uint64_t t = ts[k][(size_t)b * DAK_GEMM_NTIMES + fs[f]];
                    if (!t) continue;
                    v[nv] = ((double)t - (double)t0) / 1e3;
                    if (!(v[nv] <= mx)) mx = v[nv];
                    nv++;
                }
                const double md = nv ? bench_median(v, nv) : NAN;
                printf(" %s %.2f/%.2f", fn[f], md, mx);
                char key[48];
                snprintf(key, sizeof key, "l%d_%s_%s_med_us", k, tier ? "hbm" : "host", fn[f]);
                json_kv_f64(w, key, md);
                snprintf(key, sizeof key, "l%d_%s_%s_max_us", k, tier ? "hbm" : "host", fn[f]);
                json_kv_f64(w, key, mx);
            }
            printf("\n");
        }
    /* every CTA's stamps of both launches (which SMs end late at the boundary, and whether the same ones do in both
     * launches): l<k>_cta_smid, then l<k>_cta_<stamp>_us from launch k0's first entry (null where not stamped) */
    for (int k = 0; k < 2; k++) {
        char key[48];
        snprintf(key, sizeof key, "l%d_cta_smid", k);
        json_key(w, key);
        json_arr_begin(w);
        for (uint32_t b = 0; b < g; b++) json_u64(w, ts[k][(size_t)b * DAK_GEMM_NTIMES + 6]);
        json_arr_end(w);
        for (int f = 0; f < NF; f++) {
            snprintf(key, sizeof key, "l%d_cta_%s_us", k, fn[f]);
            json_key(w, key);
            json_arr_begin(w);
            for (uint32_t b = 0; b < g; b++) {
                const uint64_t t = ts[k][(size_t)b * DAK_GEMM_NTIMES + fs[f]];
                json_f64(w, t ? ((double)t - (double)t0) / 1e3 : NAN);
            }
            json_arr_end(w);
        }
    }
    json_obj_end(w);
    fflush(stdout);
    free(v);
    for (int k = 0; k < 2; k++) free(ts[k]);
    if (ge) cudaGraphExecDestroy(ge);
    for (int k = 0; k < nl; k++) dak_gemm_launch_free(l[k]);
}

/* ---- fixed cost per launch at r = 0 (issue #7, run 10) ---- */
/* The fixed-cost table's N without --n */
static const uint32_t fn_default[] = {1, 8, 64};
#define FN_DEFAULT (sizeof fn_default / sizeof fn_default[0])

/* The wgmma table: with --sections wgmma, or with fixed when --n is not given */
static int fixed_runs_wgmma(const bench_cfg *c) { return c->sec_wgmma || !c->n_given; }

uint32_t bench_fixed_nmax(const bench_cfg *c)
{
    uint32_t m = 0;
    if (c->sec_fixed)
        m = c->n_given ? bench_list_max(c->ns, (size_t)c->nn, m) : bench_list_max(fn_default, FN_DEFAULT, m);
    if ((c->sec_fixed || c->sec_wgmma) && fixed_runs_wgmma(c)) m = bench_list_max(wg_ns, WG_NN, m);
    return m;
}

uint64_t bench_fixed_steps(const bench_cfg *c)
{
    if (!c->sec_fixed && !c->sec_wgmma) return 0;
    const uint64_t nfn = c->n_given ? (uint64_t)c->nn : FN_DEFAULT;
    const uint64_t rows = c->sec_fixed ? (uint64_t)(c->r_given ? c->nr : 1) * nfn : 0;
    return rows + (fixed_runs_wgmma(c) ? 1u : 0u);
}

void bench_fixed(const bench_run *bench, const bench_shape *s)
{
    cm_err err;
    const bench_cfg *c = bench->c;
    json_w *w = bench->w;
    const uint32_t M = s->M, K = s->K;
    const size_t abytes = s->abytes;
    fx_copies cp;
    memset(&cp, 0, sizeof cp);
    cp.ap[0] = s->Adp, cp.ar[0] = s->Ad;
    for (int i = 1; i < FX_NCP; i++) {
        CK(cudaMalloc((void **)&cp.ap[i], abytes));
        CK(cudaMalloc((void **)&cp.ar[i], abytes));
        CK(cudaMemcpy(cp.ap[i], s->Adp, abytes, cudaMemcpyDeviceToDevice));
        CK(cudaMemcpy(cp.ar[i], s->Ad, abytes, cudaMemcpyDeviceToDevice));
    }
    for (int i = 0; i < FX_NCP; i++) DK(dak_tiered_view(&cp.At[i], M, K, 0, s->Ahp, cp.ap[i], 1, &err));
    /* A in row groups for the grp-pdl column and stamps: only where some run of the section has no host rows */
    int any_r0 = !c->r_given;
    for (int ri = 0; c->sec_fixed && c->r_given && ri < c->nr; ri++) {
        uint32_t rows = 0;
        DK(dak_tiered_rows_for_ratio(M, DAK_TILE_ROWS, c->ratios[ri], &rows, &err));
        any_r0 |= rows == 0;
    }
    if (any_r0) {
        dak_gemm_opts go;
        bench_opts_host(&go, c);
        fx_set_pdl(&go);
        cp.groups = dak_gemm_ctx_a_group_rows(bench->ctx, M, K, 64u, &go);
    }
    for (int i = 0; cp.groups && i < FX_NCP; i++) {
        CK(cudaMalloc((void **)&cp.ag[i], abytes));
        DK(dak_pack_groups(cp.ar[i], cp.ag[i], M, K, cp.groups, &err));
        DK(dak_tiered_view(&cp.Ag[i], M, K, 0, NULL, cp.ag[i], 1, &err));
        cp.Ag[i].group_rows = cp.groups;
    }
    CK(cudaStreamCreateWithFlags(&cp.fs, cudaStreamNonBlocking));
    bench_shape_array(w, "fixed", s);
    /* the wgmma table has its own N (64..1024): with --n given, only as --sections wgmma (run first whatever --n
     * said, it shifted the launch indices that ncu's --launch-skip counts) */
    if (fixed_runs_wgmma(c)) fixed_wgmma_ab(bench, s, &cp), bench_step(bench);
    for (int ri = 0; c->sec_fixed && ri < (c->r_given ? c->nr : 1); ri++) {
        uint32_t rows = 0;
        if (c->r_given) DK(dak_tiered_rows_for_ratio(M, DAK_TILE_ROWS, c->ratios[ri], &rows, &err));
        for (int i = 0; i < FX_NCP; i++) DK(dak_tiered_view(&cp.At[i], M, K, rows, s->Ahp, cp.ap[i], 1, &err));
        printf("\n# fixed cost: A %ux%u r = %.2f %% (%u host rows), us per launch (one launch / %d back to back over %d "
               "copies of A / a graph of %d); cuBLAS all-HBM\n",
               M, K, 100.0 * rows / M, rows, FX_L, FX_NCP, FX_L);
        printf("# pdl-hw: pdl without the host-link hand-over: host CTAs issue nothing before griddepcontrol.wait\n"
               "# (diag_pdl_host_wait; with host rows only); nomath: the copies alone; noB: A's copies alone (no math,\n"
               "# no B: diag_nob); noload: the math and epilogue alone, on stale shared memory (diag_noload; host rows\n"
               "# on the tiled kernel); grp-pdl: pdl over A packed in the row groups the GEMM asks for (k_whole_sw;\n"
               "# %u rows a group; 0: none asked, the column nan; at r = 0 only)\n", cp.groups);
        fixed_cost_header();
        const uint32_t *fn = c->n_given ? c->ns : fn_default;
        const size_t nfn = c->n_given ? (size_t)c->nn : FN_DEFAULT;
        for (size_t a = 0; a < nfn; a++) {
            uint32_t N = fn[a];
            fixed_cost(bench, s, &cp, N);
            /* static, dynamic units, and (r = 0, where the GEMM asks for them) A in row groups */
            for (int dv = 0; dv < 3; dv++)
                if (dv < 2 || (cp.groups && !rows)) fixed_stamps(bench, s, &cp, N, dv);
            /* the pair on a stream, without the hand-over (with host rows only: nothing to hand over at r = 0),
             * and in a graph */
            for (int pm = 0; pm < 3; pm++)
                if (pm != 1 || rows) fixed_pair_timeline(bench, s, &cp, N, pm);
            bench_step(bench);
        }
    }
    json_arr_end(w);
    CK(cudaStreamDestroy(cp.fs));
    for (int i = 1; i < FX_NCP; i++) {
        cudaFree(cp.ap[i]);
        cudaFree(cp.ar[i]);
    }
    for (int i = 0; i < FX_NCP; i++) cudaFree(cp.ag[i]);
}
