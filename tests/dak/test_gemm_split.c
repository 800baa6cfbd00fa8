/* GPU test (label gpu): the direct-access split GEMM against an fp32 reference
 * on fresh random inputs, output poisoned with NaN first (so an unwritten
 * element fails), for every shape, offload ratio and N of the benchmark (plus
 * N = 20, 40, 100: partial column tiles of either consumer layout), with and
 * without multicast, on the packed layout (1-D bulk copies); plus bf16 output,
 * wave alignment off, a congestion window, the 2-D tensor-copy path on row-major
 * A, kstep 1, the older [n][block] B layout in shared memory, a launch without
 * the cluster attribute, a B box of 8 rows, copies without L2 cache policies (opts.l2_hints 0) with
 * the CTAs' shares relabelled (diag_rotate), and a check of the fp32 reference
 * itself against a CPU dot product.  The panel path (host rows through the A-stationary
 * kernel, issue #7): N = 1..4096 on small shapes (several panels per tile row, a short
 * last panel, pieces of 1 and 2 blocks), r = 100 % and 50 %, fp32 and bf16 C, clusters 1-16,
 * window 1, repeated launches, and 7168^2 at N = 1024; the host bytes counted on the GPU
 * must equal the plan's (= A's host bytes).
 * The wgmma consumer (opts.wgmma, issue #7): the same checks with wide tiles through wgmma
 * (N = 40, 64, 100, 128, 512, 1024; r = 0 / 10 % / 100 %; cluster 8 multicast; the panel path;
 * fp32 and bf16 C; split-K shared tiles with both fix-ups and round-robin; kstep 1 / 2 / 4;
 * row-major A by 2-D copies; PDL back to back; a congestion window), plus wgmma 1 in every
 * check of the main loop and the r = 10 % variants for N > 32.
 * 128-row HBM tiles (opts.bm): every check of the main loop (each shape, N and ratio, odd HBM
 * tile-row counts included: the half last tile) runs with bm 64 and bm 128, and the r = 10 %
 * variants run with bm auto (128 for N > 32) and again with the other height.
 * Wide HBM column tiles (opts.bn): every shape x N {100, 128, 200, 256, 512, 1024} (100 and 200:
 * partial column tiles) x r {0, 2 %, 10 %, 50 %} with bn 64, 128 and 256 (bn 256 beside a tiled host
 * tier, r = 2 %: the refusal checked, then with the panel path), the plan's width checked against
 * the documented rule; at r = 0 with bn 128 and 256: bf16 C, round-robin, the old fix-up, cluster
 * 2 and 4 multicast, PDL back to back, kstep 2, 3 and 2 stages (2: bn 256's ring cannot hold a
 * partial, so the owner adds it from L2), bf16 with 2 stages; and bn auto in every check of the main
 * loop with bm 128 and in the r = 10 % variants.  256 x 128 tiles (opts.bm 256): N 100 / 128 / 200,
 * r 0 / 2 / 10 %, fp32 and bf16, every fix-up path, PDL back to back, 2 stages; refusals.
 * Reduce-scatter fix-up (opts.fix_rs, default on: tiles every contributor ends with, e.g. 7168^2 at
 * r = 0 and N = 64..256 after tile alignment) in every check at r = 0; the owner-wait fix-up it
 * replaces there with fix_rs 0 (bn 128 / 256 variants, and the wgmma PDL sequences at r = 0).  C of a
 * CTA's last tile goes through its idle ring by default (wgmma layouts); without (diag_epi_global) in
 * the bn 128 / 256 variants.
 * The PDL stash (opts.stash): PDL sequences at N <= 8 with stash 2, 1 and 0, a host tier beside it, bf16 C,
 * first segments shorter than the stash (test_stash).  Two producer threads (diag_prod2, test_prod2): kstep 1 and auto,
 * N 1 / 24, r 0 / 10 %.
 * PDL chains with a true data dependence (each launch's B the launch before's bf16 C; test_chain): 2048^2 and 7168^2,
 * N 1 / 8 / 64, r 0 and 10 %; 7168^2 with whole-K tiles (the default there) too, alone and alternating with host-row
 * layers (the split); an MLP's up and down projections alternating with host shares 0-12.5 % (N 8 / 16 /
 * 40); and launches prepared before a prepare that grew the context's workspace (test_ctx_grow, with --chain).
 * Small shapes (test_small; not with --quick): 1024^2, 2048^2 and 1024 x 4096 at N 1 to 64 (ten widths, the B boxes
 * of 40-56 rows among them), r 0 and 6.25 %, with wave
 * alignment on and off, the owner-wait fix-up instead of the reduce-scatter, PDL and bf16 C, each case under a
 * watchdog (a case that has not ended after SMALL_CASE_S seconds fails the run, naming it), the split-K counters
 * checked back at zero after each.  Written for the fifteenth session's stall of `dak bench gemm --sections wave`
 * at N = 64; the sixteenth found its cause in the bench (B and C sized by --n, not the section's N: the writes past
 * C reached the counters), which the operand extents (test_extents) now refuse, and these cases all passed.
 * Whole-K tiles (test_whole): k_whole's C on four shapes at N 1..64, its plan's refusals and fall-backs.  Every other
 * test runs the split kernels (whole 0: gemm_test_opts.h) unless it says otherwise.
 * Usage: test_gemm_split [--quick | --panel | --wgmma | --bn | --stash | --chain | --whole | --small [FIRST]]   (quick:
 * the smallest shape and the panel tests on small shapes; panel / wgmma / bn / stash / chain / whole / small: those
 * tests only;
 * FIRST: the small tests from that case on) */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <ctype.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cuda_check.h"
#include "common/error.h"
#include "dak/gemm.h"
#include "dak/tiered.h"
#include "gemm_test_opts.h"

static int passed, failed;
#define CHECK(cond, ...)                                                              \
    do {                                                                              \
        if (cond)                                                                     \
            passed++;                                                                 \
        else {                                                                        \
            failed++;                                                                 \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);           \
            fprintf(stderr, __VA_ARGS__);                                             \
            fprintf(stderr, "\n");                                                    \
        }                                                                             \
    } while (0)

#define CU(call) CM_CUDA_OR_EXIT(call)

static float bf2f(uint16_t x)
{
    uint32_t u = (uint32_t)x << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* ||C - R|| / ||R|| over M x N; NaN (unwritten) makes it infinite. */
static double rel_err(const float *C, const float *R, size_t n, size_t *bad)
{
    double d = 0, r = 0;
    *bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(C[i])) {
            (*bad)++;
            continue;
        }
        double x = (double)C[i] - (double)R[i];
        d += x * x;
        r += (double)R[i] * (double)R[i];
    }
    if (*bad) return INFINITY;
    return sqrt(d / (r > 0 ? r : 1));
}

static double rel_err_bf16(const uint16_t *C, const float *R, size_t n, size_t *bad)
{
    double d = 0, r = 0;
    *bad = 0;
    for (size_t i = 0; i < n; i++) {
        float c = bf2f(C[i]);
        if (!isfinite(c)) {
            (*bad)++;
            continue;
        }
        double x = (double)c - (double)R[i];
        d += x * x;
        r += (double)R[i] * (double)R[i];
    }
    if (*bad) return INFINITY;
    return sqrt(d / (r > 0 ? r : 1));
}

/* Options that prepare must refuse with a message containing `needle` (a small tiered A,
 * N = 256; a failure to make that A fails the check). */
static void expect_refused(dak_gemm_ctx *ctx, const dak_gemm_opts *o, const char *needle)
{
    cm_err err;
    dak_tiered A;
    if (dak_tiered_create(&A, 128, 64, 0.5, &err)) {
        CHECK(0, "expect_refused '%s': %s", needle, err.msg);
        return;
    }
    const int rc = dak_gemm_split(ctx, &A, A.dev, A.dev, 256, o, &err);
    CHECK(rc != 0 && strstr(err.msg, needle), "expected a refusal saying '%s': %s", needle,
          rc ? err.msg : "accepted");
    dak_tiered_destroy(&A);
}

/* Operands smaller than the GEMM reads or writes are refused by prepare, naming the operand (the bench's wave section
 * once ran N = 64 on B and C allocated for N = 8; its writes past C reached the split-K counters and a later launch
 * stalled); an operand that starts inside a larger allocation is measured from its start, and one of exactly the
 * size the GEMM needs is accepted. */
static void test_extents(dak_gemm_ctx *ctx)
{
    const uint32_t M = 1024, K = 1024, N = 64, NS = 8;
    cm_err err;
    dak_tiered A;
    uint16_t *b_small, *b_full;
    float *c_small, *c_wide;
    if (dak_tiered_create(&A, M, K, 0.0625, &err)) {
        CHECK(0, "extents: %s", err.msg);
        return;
    }
    CU(cudaMalloc((void **)&b_small, (size_t)K * NS * 2));
    CU(cudaMalloc((void **)&b_full, (size_t)K * N * 2));
    CU(cudaMalloc((void **)&c_small, (size_t)M * NS * 4));
    CU(cudaMalloc((void **)&c_wide, (size_t)M * (N + NS) * 4));
    dak_gemm_opts o;
    split_opts_default(&o);
    const struct {
        const uint16_t *B;
        void *C;
        int bf16;
        const char *needle; /* NULL: accepted */
    } cases[] = {
        {b_small, c_wide, 0, "B (K x N bf16)"},
        {b_full, c_small, 0, "C (M x N fp32)"},
        {b_full, c_wide + (size_t)M * (NS + 1), 0, "C (M x N fp32)"}, /* starts inside: 63 columns left */
        {b_full, c_wide + (size_t)M * NS, 0, NULL},                   /* exactly 64 columns left */
        {b_full, c_wide + (size_t)M * (NS + N / 2), 1, NULL},         /* bf16 C: half the bytes */
        {b_full, c_wide + (size_t)M * (NS + N / 2 + 1), 1, "C (M x N bf16)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dak_gemm_launch *l = NULL;
        o.out_bf16 = cases[i].bf16;
        const int rc = dak_gemm_prepare(ctx, &A, cases[i].B, cases[i].C, N, &o, &l, &err);
        if (cases[i].needle)
            CHECK(rc != 0 && strstr(err.msg, cases[i].needle), "extents case %zu: expected a refusal naming '%s': %s", i,
                  cases[i].needle, rc ? err.msg : "accepted");
        else
            CHECK(rc == 0, "extents case %zu: refused: %s", i, err.msg);
        if (l) dak_gemm_launch_free(l);
    }
    cudaFree(b_small), cudaFree(b_full), cudaFree(c_small), cudaFree(c_wide);
    dak_tiered_destroy(&A);
}

/* ---- panel path ---- */

typedef struct {
    uint32_t M, K, nmax;
    uint16_t *Ad, *Adp, *Ahp, *B;
    float *C, *R, *hr, *hc;
    uint32_t group_rows; /* Adp packed in groups of this many rows (dak_pack_groups), 0: the tile layout */
} pshape;

/* C (fp32 or bf16, M x N) read back against the fp32 reference in s->hr: the relative error,
 * and in *bad the elements left unwritten (still the poison). */
static double pshape_err(pshape *s, uint32_t N, int out_bf16, size_t *bad)
{
    if (out_bf16) {
        uint16_t *c16 = (uint16_t *)s->hc;
        CU(cudaMemcpy(c16, s->C, (size_t)s->M * N * 2, cudaMemcpyDeviceToHost));
        return rel_err_bf16(c16, s->hr, (size_t)s->M * N, bad);
    }
    CU(cudaMemcpy(s->hc, s->C, (size_t)s->M * N * 4, cudaMemcpyDeviceToHost));
    return rel_err(s->hc, s->hr, (size_t)s->M * N, bad);
}

/* Fresh random A (M x K, packed copies in HBM and pinned host memory) and B (K x nmax); -1 with the error on
 * stderr. */
static int pshape_init(pshape *s, uint32_t M, uint32_t K, uint32_t nmax, uint64_t seed)
{
    cm_err e, *err = &e;
    memset(s, 0, sizeof *s);
    s->M = M, s->K = K, s->nmax = nmax;
    size_t ab = (size_t)M * K * 2;
    CU(cudaMalloc((void **)&s->Ad, ab));
    CU(cudaMalloc((void **)&s->Adp, ab));
    CU(cudaHostAlloc((void **)&s->Ahp, ab, cudaHostAllocMapped | cudaHostAllocPortable));
    CU(cudaMalloc((void **)&s->B, (size_t)K * nmax * 2));
    CU(cudaMalloc((void **)&s->C, (size_t)M * nmax * 4));
    CU(cudaMalloc((void **)&s->R, (size_t)M * nmax * 4));
    s->hr = malloc((size_t)M * nmax * 4);
    s->hc = malloc((size_t)M * nmax * 4);
    if (dak_fill_random_bf16(s->Ad, (size_t)M * K, seed, NULL, err) ||
        dak_fill_random_bf16(s->B, (size_t)K * nmax, seed + 1, NULL, err) || dak_pack_rowmajor(s->Ad, s->Adp, M, K, err)) {
        fprintf(stderr, "shape %ux%u: %s\n", M, K, err->msg);
        return -1;
    }
    CU(cudaMemcpy(s->Ahp, s->Adp, ab, cudaMemcpyDeviceToHost));
    return 0;
}

static void pshape_free(pshape *s)
{
    cudaFree(s->Ad), cudaFree(s->Adp), cudaFreeHost(s->Ahp), cudaFree(s->B), cudaFree(s->C), cudaFree(s->R);
    free(s->hr), free(s->hc);
}

/* The fp32 reference for N columns (B's first N columns) into s->hr; -1 with the error on stderr. */
static int pshape_ref(pshape *s, uint32_t N)
{
    cm_err err;
    if (dak_ref_gemm(s->Ad, s->B, s->R, s->M, N, s->K, NULL, &err)) {
        fprintf(stderr, "reference %ux%u N %u: %s\n", s->M, s->K, N, err.msg);
        return -1;
    }
    CU(cudaMemcpy(s->hr, s->R, (size_t)s->M * N * 4, cudaMemcpyDeviceToHost));
    return 0;
}

/* The common part of a checked case on shape s: the tiered view at `ratio` (row-major A from Ah
 * with a_tma2d, else the packed copies), C poisoned with NaN, `runs` launches and a sync.  Returns
 * the launch for the caller's plan and error checks (rows: host rows of the view), or NULL after
 * recording the failure under `label`; a sticky CUDA error ends the run. */
/* After a case's launches (rc: how enqueueing them went): a device sync, a kernel failure into err as rc -1. */
static int sync_case(int rc, cm_err *err)
{
    const cudaError_t e = cudaDeviceSynchronize();
    if (!rc && e != cudaSuccess) rc = -1, snprintf(err->msg, sizeof err->msg, "kernel failed: %s", cudaGetErrorString(e));
    return rc;
}

/* A sticky CUDA error (the context is lost) ends the run with the counts so far. */
static void end_if_sticky(void)
{
    if (cudaGetLastError() == cudaSuccess) return;
    printf("%d passed, %d failed\n", passed, failed);
    exit(1);
}

static dak_gemm_launch *case_run(dak_gemm_ctx *ctx, pshape *s, uint16_t *Ah, uint32_t N, double ratio,
                                 const dak_gemm_opts *o, int runs, const char *label, uint32_t *rows)
{
    cm_err err;
    dak_tiered A;
    if (dak_tiered_rows_for_ratio(s->M, DAK_TILE_ROWS, ratio, rows, &err) ||
        (o->a_tma2d ? dak_tiered_view(&A, s->M, s->K, *rows, Ah, s->Ad, 0, &err)
                    : dak_tiered_view(&A, s->M, s->K, *rows, s->Ahp, s->Adp, 1, &err)) ||
        dak_fill_u32(s->C, (size_t)s->M * N, 0x7fc00000u, NULL, &err)) {
        CHECK(0, "%s: %s", label, err.msg);
        return NULL;
    }
    if (!o->a_tma2d) A.group_rows = s->group_rows;
    dak_gemm_launch *l = NULL;
    int rc = dak_gemm_prepare(ctx, &A, s->B, s->C, N, o, &l, &err);
    if (rc && o->panel_cluster == 16 && strstr(err.msg, "panel cluster")) {
        /* clusters of 16 are non-portable: this GPU or driver may refuse them */
        printf("  %s: cluster 16 refused here (%s): skipped\n", label, err.msg);
        return NULL;
    }
    for (int i = 0; i < runs && !rc; i++) rc = dak_gemm_run(l, NULL, &err);
    if (!rc) rc = sync_case(rc, &err);
    CHECK(rc == 0, "%s %ux%u N %u r %g: %s", label, s->M, s->K, N, ratio, err.msg);
    if (rc) {
        dak_gemm_launch_free(l);
        end_if_sticky();
        return NULL;
    }
    return l;
}

/* One panel-path check: `runs` launches of one prepared launch, C poisoned first; relative
 * error against the reference, host bytes counted = runs x plan = runs x A's host bytes. */
static void panel_case(dak_gemm_ctx *ctx, pshape *s, uint32_t N, double ratio, const dak_gemm_opts *o, int runs,
                       const char *what)
{
    cm_err err;
    uint32_t rows;
    dak_gemm_launch *l = case_run(ctx, s, NULL, N, ratio, o, runs, what, &rows);
    if (!l) return;
    const dak_gemm_plan *p = dak_gemm_launch_plan(l);
    uint64_t hb = 0;
    CHECK(dak_gemm_host_bytes(l, &hb, &err) == 0, "%s", err.msg);
    const uint64_t want = (uint64_t)rows * s->K * 2;
    CHECK(p->panel.on == (rows > 0), "%s: panel path %s", what, p->panel.on ? "on" : "off");
    CHECK(dak_gemm_plan_host_bytes(p) == want, "%s: plan host bytes %llu, A's host bytes %llu", what,
          (unsigned long long)dak_gemm_plan_host_bytes(p), (unsigned long long)want);
    CHECK(hb == (uint64_t)runs * dak_gemm_plan_host_bytes(p), "%s %ux%u N %u r %g: device host bytes %llu, plan %d x %llu",
          what, s->M, s->K, N, ratio, (unsigned long long)hb, runs, (unsigned long long)dak_gemm_plan_host_bytes(p));
    size_t bad;
    const double e = pshape_err(s, N, o->out_bf16, &bad);
    CHECK(e <= 1e-2, "%s %ux%u N %u r %g: rel err %g, %zu unwritten", what, s->M, s->K, N, ratio, e, bad);
    printf("  panel %-14s %5ux%-5u N %4u r %5.1f%% cluster %2u panel %2u blocks x %u panels, %u CTAs + %u HBM: rel err %.2e, "
           "host bytes %.3fx A's\n",
           what, s->M, s->K, N, 100.0 * rows / s->M, p->panel.cluster, p->panel.pblocks, p->panel.npanels, p->panel.ctas,
           p->hbm.ctas, e, want ? (double)hb / runs / want : 0.0);
    dak_gemm_launch_free(l);
}

static int test_panel(dak_gemm_ctx *ctx, int full)
{
    /* 512 x 1024: 16 blocks, 2 panels of 8 (pieces of 2 blocks); 512 x 960: 15 blocks, panels of
     * 8 + 7 (pieces of 1) */
    static const uint32_t shp[2][2] = {{512, 1024}, {512, 960}};
    static const uint32_t ns[6] = {1, 8, 100, 512, 1000, 4096}; /* 1, 8: the 8-row B box (opts.bn8) */
    for (int si = 0; si < 2; si++) {
        pshape s;
        if (pshape_init(&s, shp[si][0], shp[si][1], 4096, 0x9a0e1 + si)) return -1;
        for (int ni = 0; ni < 6; ni++) {
            uint32_t N = ns[ni];
            if (pshape_ref(&s, N)) return -1;
            for (int v = 0; v < 8; v++) { /* bf16 C, r = 50 %, wide tiles on mma.sync (not the default) */
                dak_gemm_opts o;
                split_opts_default(&o);
                o.panel = 1;
                o.out_bf16 = v & 1;
                if (v & 4) o.wgmma = 0;
                panel_case(ctx, &s, N, (v & 2) ? 0.5 : 1.0, &o, 1,
                           (v & 4) ? (o.out_bf16 ? "bf16 mma.sync" : "fp32 mma.sync") : (o.out_bf16 ? "bf16" : "fp32"));
            }
            if (si == 0 && N == 1000) {
                static const uint32_t cls[4] = {1, 2, 4, 16};
                for (int ci = 0; ci < 4; ci++) {
                    dak_gemm_opts o;
                    split_opts_default(&o);
                    o.panel = 1, o.panel_cluster = cls[ci];
                    char w[32];
                    snprintf(w, sizeof w, "cluster %u", cls[ci]);
                    panel_case(ctx, &s, N, 1.0, &o, 1, w);
                }
                dak_gemm_opts o;
                split_opts_default(&o);
                o.panel = 1, o.window = 1, o.host_ctas = 8;
                panel_case(ctx, &s, N, 1.0, &o, 1, "window 1");
                o.window = 0, o.host_ctas = 0, o.panel_blocks = 3; /* 6 panels, the last of 1 block */
                panel_case(ctx, &s, N, 0.5, &o, 1, "3-block panels");
                o.panel_blocks = 0, o.cluster = 8; /* HBM rows with multicast beside the panel kernel */
                panel_case(ctx, &s, N, 0.5, &o, 3, "3 runs, hbm mc");
                o.out_bf16 = 1;
                panel_case(ctx, &s, N, 0.5, &o, 3, "3 runs bf16");
                o.out_bf16 = 0, o.cluster = 1, o.panel = 2; /* auto: on at N = 1000, cluster 1 */
                panel_case(ctx, &s, N, 1.0, &o, 1, "auto");
            }
        }
        pshape_free(&s);
    }
    if (full) {
        pshape s;
        if (pshape_init(&s, 7168, 7168, 1024, 0x9a0f0) || pshape_ref(&s, 1024)) return -1;
        for (int v = 0; v < 3; v++) {
            dak_gemm_opts o;
            split_opts_default(&o);
            o.panel = 1, o.out_bf16 = v == 2;
            panel_case(ctx, &s, 1024, v == 1 ? 0.5 : 1.0, &o, 1, v == 2 ? "7168 bf16" : "7168 fp32");
        }
        pshape_free(&s);
    }
    /* bad options through prepare: explicit panel with pdl, and too many panel blocks */
    {
        dak_gemm_opts o;
        split_opts_default(&o);
        o.panel = 1, o.pdl = 1;
        expect_refused(ctx, &o, "pdl");
        o.pdl = 0, o.panel_blocks = 20;
        expect_refused(ctx, &o, "panel blocks");
    }
    fprintf(stderr, "panel tests done (%d passed, %d failed so far)\n", passed, failed);
    return 0;
}

/* ---- wgmma consumer ---- */

/* One wgmma check on shape s: `runs` launches, C poisoned first, against the reference (s->hr for
 * N columns); the plan must record wgmma where wide tiles exist. */
static void wg_case(dak_gemm_ctx *ctx, pshape *s, uint16_t *Ah, uint32_t N, double ratio, const dak_gemm_opts *o,
                    int runs, const char *what)
{
    char label[64];
    uint32_t rows;
    snprintf(label, sizeof label, "wgmma %s", what);
    dak_gemm_launch *l = case_run(ctx, s, Ah, N, ratio, o, runs, label, &rows);
    if (!l) return;
    const dak_gemm_plan *p = dak_gemm_launch_plan(l);
    CHECK(p->wgmma == (uint32_t)(o->wgmma && N > 32), "wgmma %s N %u: plan wgmma %u", what, N, p->wgmma);
    size_t bad;
    const double e = pshape_err(s, N, o->out_bf16, &bad);
    CHECK(e <= 1e-2, "wgmma %s %ux%u N %u r %g: rel err %g, %zu unwritten", what, s->M, s->K, N, ratio, e, bad);
    printf("  wgmma %-12s %5ux%-5u N %4u r %5.1f%% kstep %u cluster %u panel %d (cluster %u) hbm ksplit %u: rel err %.2e\n",
           what, s->M, s->K, N, 100.0 * rows / s->M, p->kstep, p->cluster, p->panel.on, p->panel.cluster, p->hbm.ksplit,
           e);
    fflush(stdout);
    dak_gemm_launch_free(l);
}

static int test_wgmma(dak_gemm_ctx *ctx, int full)
{
    /* 7168^2 (kstep 4, 112 blocks) and 512 x 960 (15 blocks: kstep 1, short panels) */
    static const uint32_t shp[2][2] = {{7168, 7168}, {512, 960}};
    static const uint32_t ns[6] = {40, 64, 100, 128, 512, 1024};
    for (int si = 0; si < 2; si++) {
        pshape s;
        if (pshape_init(&s, shp[si][0], shp[si][1], 1024, 0x3a91 + si)) return -1;
        uint16_t *Ah; /* row-major A in host memory (the 2-D copy path) */
        size_t ab = (size_t)s.M * s.K * 2;
        CU(cudaHostAlloc((void **)&Ah, ab, cudaHostAllocMapped | cudaHostAllocPortable));
        CU(cudaMemcpy(Ah, s.Ad, ab, cudaMemcpyDeviceToHost));
        for (int ni = 0; ni < 6; ni++) {
            const uint32_t N = ns[ni];
            if (pshape_ref(&s, N)) return -1;
            static const double rs[3] = {0.0, 0.1, 1.0};
            for (int ri = 0; ri < 3; ri++) {
                dak_gemm_opts o;
                split_opts_default(&o);
                o.wgmma = 1;
                wg_case(ctx, &s, Ah, N, rs[ri], &o, 1, "default"); /* panel auto */
                if (N >= 128) {
                    o.panel = 0, o.cluster = 8; /* tiled host tier with multicast */
                    wg_case(ctx, &s, Ah, N, rs[ri], &o, 1, "mc8");
                    o.panel = 2, o.cluster = 1;
                }
                o.out_bf16 = 1;
                wg_case(ctx, &s, Ah, N, rs[ri], &o, 1, "bf16");
            }
            if (!full && si == 0 && N != 100 && N != 512) continue;
            /* variants at r = 10 % (r = 50 % for the explicit panel ones) */
            for (int v = 0; v < 14; v++) {
                dak_gemm_opts o;
                split_opts_default(&o);
                o.wgmma = 1;
                double r = 0.1;
                int runs = 1;
                const char *w = "";
                if (v == 0) o.panel = 1, r = 0.5, w = "panel";
                if (v == 1) o.panel = 1, o.out_bf16 = 1, o.cluster = N >= 128 ? 8 : 1, r = 0.5, w = "panel bf16 mc";
                if (v == 2) o.panel = 1, o.panel_cluster = 1, r = 1.0, w = "panel c1";
                if (v == 3) o.wave_align = 0, w = "round-robin";
                if (v == 4) o.wave_align = 0, o.cluster = N >= 128 ? 4 : 1, o.out_bf16 = 1, w = "rr mc4 bf16";
                if (v == 5) o.diag_fixup_atomic = 1, w = "oldfix";
                if (v == 6) o.kstep = 1, o.panel = 0, w = "kstep 1";
                if (v == 7) o.kstep = (s.K / 64) % 2 ? 1 : 2, o.cluster = N >= 128 ? 2 : 1, o.panel = 0, w = "kstep 2 mc2";
                if (v == 8) o.a_tma2d = 1, o.cluster = N >= 128 ? 8 : 1, w = "2-D A";
                if (v == 9) o.pdl = 1, r = 0.0, runs = 3, w = "pdl x3";
                if (v == 10) o.window = 2, o.host_ctas = 8, o.panel = 0, w = "window 2";
                if (v == 11) o.wgmma = 2, w = "auto";
                if (v == 12) o.tile_align = 0, r = 0.0, w = "all SMs"; /* the CTA count before tile alignment */
                if (v == 13) o.tile_align = 0, w = "all SMs r10";
                wg_case(ctx, &s, Ah, N, r, &o, runs, w);
            }
        }
        cudaFreeHost(Ah);
        pshape_free(&s);
    }
    /* refused: wgmma 1 with the [n][block][64] B layout, wgmma 3 */
    {
        dak_gemm_opts o;
        split_opts_default(&o);
        o.wgmma = 1, o.diag_b_nmajor = 1;
        expect_refused(ctx, &o, "wgmma 1");
        o.diag_b_nmajor = 0, o.wgmma = 3;
        expect_refused(ctx, &o, "wgmma 3");
        o.wgmma = 2, o.bm = 96; /* 128-row tiles: 0, 64 or 128 only */
        expect_refused(ctx, &o, "bm 96");
    }
    fprintf(stderr, "wgmma tests done (%d passed, %d failed so far)\n", passed, failed);
    return 0;
}

/* case_run, then C against the reference (s->hr for N columns): the launch for the caller's plan checks and in
 * *e the relative error, or NULL after recording a failure under `label`. */
static dak_gemm_launch *case_checked(dak_gemm_ctx *ctx, pshape *s, uint32_t N, double ratio, const dak_gemm_opts *o,
                                     int runs, const char *label, uint32_t *rows, double *e)
{
    dak_gemm_launch *l = case_run(ctx, s, NULL, N, ratio, o, runs, label, rows);
    if (!l) return NULL;
    size_t bad;
    *e = pshape_err(s, N, o->out_bf16, &bad);
    CHECK(*e <= 1e-2, "%s %ux%u N %u r %g: rel err %g, %zu unwritten", label, s->M, s->K, N, ratio, *e, bad);
    return l;
}

/* ---- whole-K tiles (opts.whole, k_whole) ---- */

/* A whole-K launch's stamps (diag_times): one set for each of its `ctas` CTAs, each in order (entry <= first stage
 * full <= last stage full <= math done <= exit). */
static void whole_stamps_ordered(dak_gemm_launch *l, uint32_t ctas, const char *label)
{
    uint64_t t[256 * DAK_GEMM_NTIMES];
    uint32_t n = 0;
    cm_err err;
    const int rc = dak_gemm_times(l, t, 256 * DAK_GEMM_NTIMES, &n, &err);
    CHECK(rc == 0 && n == ctas, "%s: stamps: %s, %u CTAs", label, rc ? err.msg : "", n);
    int order = !rc;
    for (uint32_t b = 0; b < n && order; b++) {
        const uint64_t *x = t + (size_t)b * DAK_GEMM_NTIMES;
        order = x[0] && x[0] <= x[3] && x[3] <= x[4] && x[4] <= x[7] && x[7] <= x[5];
    }
    CHECK(order, "%s: stamps out of order (entry <= first full <= last full <= math done <= exit)", label);
}

/* C against the reference on fresh inputs, every element written, with the plan's kernel k_whole where it applies:
 * 64-row tiles (7168^2: 112; 1088 x 1024: 17, an odd count), 128-row ones where 64-row tiles outnumber the SMs
 * (11008 x 4096: 86; 8640 x 1024: 68 with a half last tile), N 1..64 (every wgmma width n8..n64; member slices that
 * run past N, zero-filled), fp32 and bf16 C, PDL sequences, clusters auto (4 from N 25 or 41 where 4 divides the
 * tiles, else 1), 1, 2 and 4 (asked for, where they divide the tiles), a 4-stage ring (the phases wrap many times), the
 * stamps, nothing read before the PDL wait (pdl_pre none), a window of 3 stages after the wait (pdl) and of 1
 * (without), stages of one and two blocks (kstep 2 auto: B by slices of each block with a cluster, else one 3-D copy).
 * And the plan's refusals and fall-backs: a cluster that does not divide the tiles, host rows or N > 64 (the split
 * plan). */
static int test_whole(dak_gemm_ctx *ctx, int full)
{
    static const uint32_t shp[4][2] = {{7168, 7168}, {11008, 4096}, {1088, 1024}, {8640, 1024}};
    static const uint32_t ns[11] = {1, 5, 8, 13, 17, 24, 32, 33, 40, 57, 64};
    for (int si = 0; si < 4; si++) {
        if (!full && si < 2) continue;
        pshape s;
        if (pshape_init(&s, shp[si][0], shp[si][1], 64, 0x3401 + si)) return -1;
        for (int ni = 0; ni < 11; ni++) {
            const uint32_t N = ns[ni];
            if (!full && ni % 3) continue;
            if (pshape_ref(&s, N)) return -1;
            for (int v = 0; v < 12; v++) {
                dak_gemm_opts o;
                dak_gemm_opts_default(&o);
                o.whole = 1;
                int runs = 1;
                const char *w = "fp32";
                if (v == 1) o.out_bf16 = 1, w = "bf16";
                if (v == 2) o.pdl = 1, runs = 3, w = "pdl x3";
                if (v == 3) o.whole_cluster = 1, w = "cluster 1";
                if (v == 4) o.whole_cluster = 2, o.pdl = 1, runs = 2, w = "cluster 2 pdl x2";
                if (v == 5) o.whole_stages = 4, o.pdl = 1, runs = 2, w = "4 stages pdl x2";
                if (v == 6) o.diag_times = 1, w = "stamps";
                if (v == 7) o.pdl = 1, o.pdl_pre = DAK_GEMM_PDL_PRE_NONE, runs = 3, w = "pdl pre none x3";
                if (v == 8) o.kstep = 2, o.whole_cluster = 2, o.pdl = 1, runs = 2, w = "kstep 2 cluster 2 pdl x2";
                if (v == 9) o.kstep = 1, o.whole_cluster = 4, w = "kstep 1 cluster 4";
                if (v == 10) o.whole_window = 3, o.pdl = 1, runs = 3, w = "window 3 pdl x3";
                if (v == 11) o.whole_window = 1, w = "window 1";
                if (!full && v >= 3 && v != 5 && v != 8) continue;
                if ((v == 4 || v == 8 || v == 9) && si == 2) continue; /* 17 tiles: no cluster divides them */
                if (v == 9 && si == 1) continue; /* 86 tiles: clusters of 4 do not divide them (refused, below) */
                char label[64];
                uint32_t rows;
                double e;
                snprintf(label, sizeof label, "whole %s", w);
                dak_gemm_launch *l = case_checked(ctx, &s, N, 0.0, &o, runs, label, &rows, &e);
                if (!l) continue;
                const dak_gemm_plan *p = dak_gemm_launch_plan(l);
                const uint32_t mh = s.M / 64u > dak_gemm_ctx_sms(ctx) ? 2u : 1u, tiles = (s.M / 64u + mh - 1u) / mh;
                CHECK(p->kernel == DAK_SPLIT_WHOLE && p->bm == 64u * mh && p->hbm.ctas == tiles && p->hbm.ksplit == 1 &&
                          p->kstep == (o.kstep ? o.kstep : 2u),
                      "%s %ux%u N %u: plan %s, bm %u, %u CTAs, ksplit %u; expected k_whole, bm %u, %u CTAs, 1", label,
                      s.M, s.K, N, dak_split_kernel_name(p->kernel), p->bm, p->hbm.ctas, p->hbm.ksplit, 64u * mh, tiles);
                CHECK(p->bn_box >= N && p->bn_box == p->whole_rows * p->whole_loaders && p->whole_rows % 8u == 0 &&
                          p->whole_loaders <= p->cluster && tiles % p->cluster == 0,
                      "%s N %u: B box %u = %u rows x %u loaders, cluster %u of %u tiles", label, N, p->bn_box,
                      p->whole_rows, p->whole_loaders, p->cluster, tiles);
                if (o.whole_cluster) CHECK(p->cluster == o.whole_cluster, "%s: cluster %u", label, p->cluster);
                if (o.whole_window)
                    CHECK(p->hbm.window == o.whole_window, "%s: window %u, asked %u", label, p->hbm.window,
                          o.whole_window);
                if (v == 6) whole_stamps_ordered(l, tiles, label);
                printf("  %-22s %5ux%-5u N %2u: %u CTAs of %u rows, cluster %u, B %u rows x %u, %u stages: rel err "
                       "%.2e\n",
                       label, s.M, s.K, N, p->hbm.ctas, p->bm, p->cluster, p->whole_rows, p->whole_loaders,
                       p->hbm_stages, e);
                dak_gemm_launch_free(l);
            }
        }
        pshape_free(&s);
    }
    /* the plan's refusal and fall-backs (no GPU work) */
    cm_err err;
    dak_gemm_plan p;
    dak_gemm_opts o;
    dak_gemm_opts_default(&o);
    o.whole = 1, o.whole_cluster = 4;
    const uint32_t sms = dak_gemm_ctx_sms(ctx);
    CHECK(dak_gemm_plan_make(11008, 32, 4096, 0, &o, sms, 232448, &p, &err) == -1 && strstr(err.msg, "whole_cluster"),
          "whole_cluster 4 on 86 tiles: accepted or wrong message (%s)", err.msg);
    o.whole_cluster = 0;
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 64, &o, sms, 232448, &p, &err) == 0 && p.kernel != DAK_SPLIT_WHOLE,
          "whole with host rows: %s", dak_split_kernel_name(p.kernel));
    CHECK(dak_gemm_plan_make(7168, 65, 7168, 0, &o, sms, 232448, &p, &err) == 0 && p.kernel != DAK_SPLIT_WHOLE,
          "whole at N 65: %s", dak_split_kernel_name(p.kernel));
    fprintf(stderr, "whole tests done (%d passed, %d failed so far)\n", passed, failed);
    return 0;
}

/* k_whole_sw (opts.whole_swap 2): C against the reference on fresh inputs, every element written, where the plan
 * takes A's rows as the wgmma's n: R rows a CTA, the multiple of 8 at or above M / SMs, i.e. on 132 SMs 1088 x 1024
 * (16 rows, kstep 4), 4096^2 (32, kstep 4), 8640 x 1024 (72, kstep 1), 11008 x 4096 (88, a last CTA of 8 rows, copies
 * that cross 64-row boxes), 17408 x 1024 and 22016 x 1024 (136 and 168: each warpgroup half the rows), N 1..64,
 * fp32 and bf16 C, PDL sequences, a 4-stage ring, the stamps, nothing before the PDL wait, windows of 1 and 3,
 * kstep asked 1 / 2, and R 64 asked where 64-row CTAs fit the SMs (1088 x 1024, 4096^2: whole boxes, one copy a
 * stage).  R is worked out here from the SM count, not taken from the plan. */
static int test_whole_swap(dak_gemm_ctx *ctx, int full)
{
    static const uint32_t shp[6][2] = {{1088, 1024}, {4096, 4096}, {8640, 1024}, {11008, 4096}, {17408, 1024},
                                       {22016, 1024}};
    static const uint32_t ns[11] = {1, 5, 8, 13, 17, 24, 32, 33, 40, 57, 64};
    const uint32_t sms = dak_gemm_ctx_sms(ctx);
    for (int si = 0; si < 6; si++) {
        if (!full && (si == 1 || si == 3)) continue;
        pshape s;
        if (pshape_init(&s, shp[si][0], shp[si][1], 64, 0x5301 + si)) return -1;
        const uint32_t R = ((s.M / 8u + sms - 1u) / sms) * 8u;
        for (int ni = 0; ni < 11; ni++) {
            const uint32_t N = ns[ni];
            if (!full && ni % 3) continue;
            if (pshape_ref(&s, N)) return -1;
            for (int v = 0; v < 12; v++) {
                dak_gemm_opts o;
                dak_gemm_opts_default(&o);
                o.whole = 1, o.whole_swap = 2;
                int runs = 1;
                const char *w = "fp32";
                if (v == 1) o.out_bf16 = 1, w = "bf16";
                if (v == 2) o.pdl = 1, runs = 3, w = "pdl x3";
                if (v == 3) o.whole_stages = 4, o.pdl = 1, runs = 2, w = "4 stages pdl x2";
                if (v == 4) o.diag_times = 1, w = "stamps";
                if (v == 5) o.pdl = 1, o.pdl_pre = DAK_GEMM_PDL_PRE_NONE, runs = 3, w = "pdl pre none x3";
                if (v == 6) o.whole_window = 3, o.pdl = 1, runs = 3, w = "window 3 pdl x3";
                if (v == 7) o.whole_window = 1, o.kstep = 1, w = "window 1 kstep 1";
                if (v == 8) o.kstep = 2, o.pdl = 1, runs = 2, w = "kstep 2 pdl x2";
                if (v == 9) o.bm = 64, o.pdl = 1, runs = 2, w = "R 64 pdl x2"; /* whole boxes: one copy a stage */
                /* A packed in groups of R rows (dak_pack_groups): one copy a stage; the last group shorter */
                if (v == 10) o.pdl = 1, runs = 3, w = "A in R-row groups pdl x3";
                if (v == 11) o.out_bf16 = 1, o.kstep = 1, w = "A in R-row groups bf16 kstep 1";
                if (!full && v >= 3 && v != 3 && v != 8 && v != 9 && v != 10) continue;
                if (v == 8 && R > 128u && N > 40u) continue; /* 3 stages of 2 blocks fit: not k_whole_sw */
                if (v == 9 && (s.M + 63u) / 64u > sms) continue; /* (64-row CTAs outnumber the SMs) */
                const uint32_t Rv = v == 9 ? 64u : R, ctasv = (s.M + Rv - 1u) / Rv;
                char label[64];
                uint32_t rows;
                double e;
                snprintf(label, sizeof label, "swap %s", w);
                cm_err pe;
                if (v >= 10) {
                    CHECK(dak_pack_groups(s.Ad, s.Adp, s.M, s.K, R, &pe) == 0, "%s: %s", label, pe.msg);
                    s.group_rows = R;
                }
                dak_gemm_launch *l = case_checked(ctx, &s, N, 0.0, &o, runs, label, &rows, &e);
                if (v >= 10) { /* (the tile layout back for the cases after) */
                    CHECK(dak_pack_rowmajor(s.Ad, s.Adp, s.M, s.K, &pe) == 0, "%s: %s", label, pe.msg);
                    s.group_rows = 0;
                }
                if (!l) continue;
                const dak_gemm_plan *p = dak_gemm_launch_plan(l);
                CHECK(p->kernel == DAK_SPLIT_WHOLE_SW && p->bm == Rv && p->hbm.ctas == ctasv && p->cluster == 1 &&
                          p->bn_box == (N + 7u) / 8u * 8u && (!o.kstep || p->kstep == o.kstep),
                      "%s %ux%u N %u: plan %s, %u rows x %u CTAs, cluster %u, B box %u, kstep %u; expected k_whole_sw, "
                      "%u x %u", label, s.M, s.K, N, dak_split_kernel_name(p->kernel), p->bm, p->hbm.ctas, p->cluster,
                      p->bn_box, p->kstep, Rv, ctasv);
                if (o.whole_window)
                    CHECK(p->hbm.window == o.whole_window, "%s: window %u, asked %u", label, p->hbm.window,
                          o.whole_window);
                if (v == 4) whole_stamps_ordered(l, ctasv, label);
                printf("  %-22s %5ux%-5u N %2u: %u CTAs of %u rows, kstep %u, %u stages, window %u: rel err %.2e\n",
                       label, s.M, s.K, N, p->hbm.ctas, p->bm, p->kstep, p->hbm_stages, p->hbm.window, e);
                dak_gemm_launch_free(l);
            }
        }
        pshape_free(&s);
    }
    fprintf(stderr, "whole swap tests done (%d passed, %d failed so far)\n", passed, failed);
    return 0;
}

/* ---- wide HBM column tiles (opts.bn) ---- */

/* One bn check on shape s: `runs` launches, C poisoned first, against the reference (s->hr for N
 * columns); the plan's width must be `want`. */
static void bn_case(dak_gemm_ctx *ctx, pshape *s, uint32_t N, double ratio, const dak_gemm_opts *o, int runs,
                    uint32_t want, const char *what)
{
    char label[64];
    uint32_t rows;
    double e;
    snprintf(label, sizeof label, "bn %u %s", o->bn, what);
    dak_gemm_launch *l = case_checked(ctx, s, N, ratio, o, runs, label, &rows, &e);
    if (!l) return;
    const dak_gemm_plan *p = dak_gemm_launch_plan(l);
    CHECK(p->bn == want, "bn %u %s N %u r %g: plan bn %u, expected %u", o->bn, what, N, ratio, p->bn, want);
    if (o->bm == 256) /* asked for, on shapes with at least four HBM tile rows */
        CHECK(p->bm == 256, "%s N %u r %g: plan bm %u, expected 256", what, N, ratio, p->bm);
    printf("  bn %3u (plan %3u) %-10s %5ux%-5u N %4u r %5.1f%% bm %u kstep %u slots %u cluster %u panel %d hbm ksplit "
           "%u rs %u: rel err %.2e\n",
           o->bn, p->bn, what, s->M, s->K, N, 100.0 * rows / s->M, p->bm, p->kstep, p->hbm_stages, p->cluster,
           p->panel.on, p->hbm.ksplit, p->hbm.rs_tiles, e);
    fflush(stdout);
    dak_gemm_launch_free(l);
}

static int test_bn(dak_gemm_ctx *ctx, int full)
{
    cm_err err;
    static const uint32_t shp[3][2] = {{7168, 7168}, {28672, 7168}, {11008, 4096}};
    static const uint32_t ns[6] = {100, 128, 200, 256, 512, 1024};
    static const double rs[4] = {0.0, 0.02, 0.1, 0.5};
    static const uint32_t bns[3] = {64, 128, 256};
    for (int si = 0; si < (full ? 3 : 1); si++) {
        pshape s;
        if (pshape_init(&s, shp[si][0], shp[si][1], 1024, 0xb00 + si)) return -1;
        for (int ni = 0; ni < 6; ni++) {
            const uint32_t N = ns[ni];
            if (pshape_ref(&s, N)) return -1;
            for (int ri = 0; ri < 4; ri++)
                for (int bi = 0; bi < 3; bi++) {
                    dak_gemm_opts o;
                    split_opts_default(&o);
                    o.bn = bns[bi];
                    /* r = 2 % with the tiled host tier (panel 0): bn 256 is refused there, then runs
                     * with the panel path (auto) */
                    if (bns[bi] == 256 && ri == 1) {
                        uint32_t rows;
                        dak_tiered A;
                        dak_tiered_rows_for_ratio(s.M, DAK_TILE_ROWS, rs[ri], &rows, &err);
                        dak_tiered_view(&A, s.M, s.K, rows, s.Ahp, s.Adp, 1, &err);
                        dak_gemm_launch *l = NULL;
                        o.panel = 0;
                        int rc = dak_gemm_prepare(ctx, &A, s.B, s.C, N, &o, &l, &err);
                        CHECK(rc != 0 && strstr(err.msg, "bn 256") && strstr(err.msg, "panel"),
                              "bn 256 beside a tiled host tier: %s", rc ? err.msg : "accepted");
                        if (!rc) dak_gemm_launch_free(l);
                        o.panel = 2;
                    }
                    bn_case(ctx, &s, N, rs[ri], &o, 1, bns[bi], "");
                }
            /* bn auto: the narrowest covering N, 256 at most (panel auto takes the host rows of every ratio here);
             * 128 beside a tiled host tier (panel 0, r = 2 %) */
            for (int ri = 0; ri < 5; ri++) {
                dak_gemm_opts o;
                split_opts_default(&o);
                if (ri == 4) o.panel = 0;
                bn_case(ctx, &s, N, rs[ri < 4 ? ri : 1], &o, 1, N <= 128 || ri == 4 ? 128u : 256u,
                        ri == 4 ? "auto tiled" : "auto");
            }
            /* 256 x 128 tiles (bm 256, k_split_m256): N 100 / 128 / 200 (partial column tiles, two column
             * groups), r = 0 (every fix-up path, rs in whole shares on 7168^2), 2 % and 10 % (host rows on
             * the panel path; an HBM tier whose last 256-row tile has 2 / 1 boxes on 7168^2 / 11008x4096) */
            if (N <= 200)
                for (int v = 0; v < 10; v++) {
                    dak_gemm_opts o;
                    split_opts_default(&o);
                    o.bm = 256;
                    double r = 0.0;
                    int runs = 1;
                    const char *w = "bm256";
                    if (v == 1) r = 0.02, w = "bm256 r2";
                    if (v == 2) r = 0.1, w = "bm256 r10";
                    if (v == 3) o.out_bf16 = 1, w = "bm256 bf16";
                    if (v == 4) o.fix_rs = 0, w = "bm256 ownfix";
                    if (v == 5) o.diag_epi_global = 1, w = "bm256 noring";
                    if (v == 6) o.pdl = 1, runs = 3, w = "bm256 pdl3";
                    if (v == 7) o.wave_align = 0, w = "bm256 rr";
                    if (v == 8) o.diag_fixup_atomic = 1, w = "bm256 oldfix";
                    /* 2 slots: no room for a partial (128 KiB) nor the staged C: adds from L2, fragment stores */
                    if (v == 9) o.stages = 2, o.out_bf16 = 1, w = "bm256 2st bf16";
                    if (!full && v > 2 && N != 128) continue;
                    bn_case(ctx, &s, N, r, &o, runs, 128, w);
                }
            /* diag_noload (the math alone, C garbage) completes, and leaves the context's fix-up counters
             * as a real launch needs them: the plain launch after it is correct (bn_case) */
            if (N == 128 || (full && N == 512)) {
                dak_gemm_opts o;
                split_opts_default(&o);
                o.diag_noload = 1, o.panel = 0;
                uint32_t rows;
                dak_gemm_launch *l = case_run(ctx, &s, NULL, N, 0.02, &o, 2, "noload", &rows);
                if (l) dak_gemm_launch_free(l);
                o.diag_noload = 0;
                bn_case(ctx, &s, N, 0.02, &o, 1, 128, "after noload");
            }
            if (!full && N != 100 && N != 200 && N != 512) continue;
            for (int bi = 1; bi < 3; bi++)
                for (int v = 0; v < 12; v++) {
                    dak_gemm_opts o;
                    split_opts_default(&o);
                    o.bn = bns[bi];
                    int runs = 1;
                    const char *w = "";
                    if (v == 0) o.out_bf16 = 1, w = "bf16";
                    if (v == 1) o.wave_align = 0, w = "round-rob";
                    if (v == 2) o.diag_fixup_atomic = 1, w = "oldfix";
                    if (v == 3) o.cluster = 2, w = "mc2";
                    if (v == 4) o.cluster = 4, o.wave_align = 0, o.out_bf16 = 1, w = "rr mc4 bf16";
                    if (v == 5) o.pdl = 1, runs = 3, w = "pdl x3";
                    if (v == 6) o.kstep = 2, w = "kstep 2";
                    if (v == 7) o.stages = 3, w = "3 stages";
                    /* 2 slots: bn 256's ring (96 KiB) cannot hold a 128 KiB partial, so the owner
                     * adds it from L2 (the staged adds elsewhere) */
                    if (v == 8) o.stages = 2, w = "2 stages";
                    if (v == 9) o.stages = 2, o.out_bf16 = 1, w = "2 st bf16";
                    if (v == 10) o.fix_rs = 0, w = "own-fix"; /* the owner sums tiles rs would scatter */
                    if (v == 11) o.diag_epi_global = 1, w = "no-ring"; /* last tile: adds from L2, C unstaged */
                    bn_case(ctx, &s, N, 0.0, &o, runs, bns[bi], w);
                }
        }
        pshape_free(&s);
    }
    /* refused with a message: a bad width; wide with 64-row tiles, mma.sync or dyn */
    {
        dak_gemm_opts o;
        split_opts_default(&o);
        o.bn = 96;
        expect_refused(ctx, &o, "bn 96");
        o.bn = 128, o.bm = 64;
        expect_refused(ctx, &o, "128-row");
        o.bm = 0, o.wgmma = 0;
        expect_refused(ctx, &o, "wgmma");
        o.wgmma = 2, o.dyn = 1;
        expect_refused(ctx, &o, "bn 128");
        /* bm 256: with bn 256, with a cluster, without wgmma */
        o.dyn = 0, o.bn = 256, o.bm = 256;
        expect_refused(ctx, &o, "bm 256");
        o.bn = 0, o.cluster = 2;
        expect_refused(ctx, &o, "bm 256");
        o.cluster = 1, o.wgmma = 0;
        expect_refused(ctx, &o, "bm 256");
    }
    fprintf(stderr, "bn tests done (%d passed, %d failed so far)\n", passed, failed);
    return 0;
}

/* The PDL stash (opts.stash): sequences of PDL launches (each starts while the one before drains) at N <= 8,
 * C against the reference and the plan's stash count against what was asked.
 * Shapes: 7168^2 (tile-aligned: one whole tile row a CTA, one segment), 11008 x 4096 (132 CTAs: a tile's end
 * then the next one's start, first segments of any length), 1024 x 2048 (16 tile rows x 8 chunks over 132
 * CTAs: first segments of 1 chunk, so a stash of 1 where 2 was asked); N 1, 5, 8; r 0 and 10 % (a host tier
 * beside the stashing HBM tier); stash 2 (8-row box), 1 (bn8 0), 0; bf16 C; nomath-free, so every chunk of
 * the stash counts in C.  The full run adds one launch alone and a sequence of 5. */
static int test_stash(dak_gemm_ctx *ctx, int full)
{
    static const uint32_t shp[3][2] = {{7168, 7168}, {11008, 4096}, {1024, 2048}};
    static const uint32_t ns[3] = {1, 5, 8};
    for (int si = 0; si < 3; si++) {
        if (!full && si == 0) continue;
        pshape s;
        if (pshape_init(&s, shp[si][0], shp[si][1], 8, 0x5a5 + si)) return -1;
        for (int ni = 0; ni < 3; ni++) {
            const uint32_t N = ns[ni];
            if (pshape_ref(&s, N)) return -1;
            for (int v = 0; v < 10; v++) {
                dak_gemm_opts o;
                split_opts_default(&o);
                o.pdl = 1;
                o.bm = 64; /* the stash is the 64-row tiles' (auto takes 128 rows on 11008 x 4096 at r = 0: plan.c) */
                double r = 0.0;
                int runs = 3;
                uint32_t want = 2;
                const char *w = "pdl x3";
                if (v == 1) r = 0.1, w = "r10 x3";
                if (v == 2) o.bn8 = 0, want = 1, w = "bn8 0 x3";
                if (v == 3) o.stash = 1, want = 1, w = "x3";
                if (v == 4) o.stash = 0, want = 0, w = "off x3";
                if (v == 5) o.out_bf16 = 1, w = "bf16 x3";
                if (v == 6) runs = 1, w = "alone";
                if (v == 7) runs = 5, r = 0.1, o.bn8 = 0, want = 1, w = "r10 bn8 0 x5";
                /* nothing read before the wait (DAK_GEMM_PDL_PRE_NONE): no stash, every copy after it */
                if (v == 8) o.pdl_pre = DAK_GEMM_PDL_PRE_NONE, want = 0, w = "pre none x3";
                if (v == 9) o.pdl_pre = DAK_GEMM_PDL_PRE_NONE, want = 0, r = 0.1, w = "pre none r10 x3";
                if (!full && (v == 6 || v == 7)) continue;
                char label[64];
                uint32_t rows;
                double e;
                snprintf(label, sizeof label, "stash %u %s", o.stash, w);
                dak_gemm_launch *l = case_checked(ctx, &s, N, r, &o, runs, label, &rows, &e);
                if (!l) continue;
                const dak_gemm_plan *p = dak_gemm_launch_plan(l);
                CHECK(p->hbm_stash == want, "%s N %u r %g: plan stash %u, expected %u", label, N, r, p->hbm_stash, want);
                if (v >= 8) CHECK(p->hbm_pre == 0, "%s N %u: plan copies before the wait %u, expected 0", label, N, p->hbm_pre);
                printf("  %-18s %5ux%-5u N %u r %5.1f%% kstep %u slots %u HBM CTAs %u ksplit %u stash %u: rel err %.2e\n",
                       label, s.M, s.K, N, 100.0 * rows / s.M, p->kstep, p->hbm_stages, p->hbm.ctas, p->hbm.ksplit,
                       p->hbm_stash, e);
                dak_gemm_launch_free(l);
            }
        }
        pshape_free(&s);
    }
    fprintf(stderr, "stash tests done (%d passed, %d failed so far)\n", passed, failed);
    return 0;
}

/* Two producer threads (opts.diag_prod2: the fix-up warp's lane 0 issues every other ring slot; a diagnostic of
 * the seventeenth session): C against the reference at kstep 1 (many small slots, an odd ring on 64-row tiles) and the
 * default kstep, N 1 and 24, r 0 and 10 % (a windowed host tier beside it), as single launches and with pdl (the
 * second producer counting the first's copies before the wait; the host tier keeps one producer there); refused with
 * dyn.  The chain test runs them as PDL chains too. */
static int test_prod2(dak_gemm_ctx *ctx, int full)
{
    static const uint32_t shp[2][2] = {{1024, 2048}, {7168, 7168}};
    static const uint32_t ns[2] = {1, 24};
    for (int si = 0; si < (full ? 2 : 1); si++) {
        pshape s;
        if (pshape_init(&s, shp[si][0], shp[si][1], 24, 0x9d2 + si)) return -1;
        for (int ni = 0; ni < 2; ni++) {
            if (pshape_ref(&s, ns[ni])) return -1;
            for (int v = 0; v < 8; v++) {
                dak_gemm_opts o;
                split_opts_default(&o);
                o.diag_prod2 = 1;
                o.kstep = v & 1 ? 0u : 1u;
                o.pdl = (v & 4) != 0;
                const double r = v & 2 ? 0.1 : 0.0;
                char label[48];
                snprintf(label, sizeof label, "prod2%s kstep %s", o.pdl ? " pdl" : "", o.kstep ? "1" : "auto");
                uint32_t rows;
                double e;
                dak_gemm_launch *l = case_checked(ctx, &s, ns[ni], r, &o, 2, label, &rows, &e);
                if (!l) continue;
                const dak_gemm_plan *p = dak_gemm_launch_plan(l);
                printf("  %-18s %5ux%-5u N %2u r %5.1f%% kstep %u slots %u / %u: rel err %.2e\n", label, s.M, s.K,
                       ns[ni], 100.0 * rows / s.M, p->kstep, p->stages, p->hbm_stages, e);
                dak_gemm_launch_free(l);
            }
        }
        pshape_free(&s);
    }
    dak_gemm_opts o;
    split_opts_default(&o);
    o.diag_prod2 = 1, o.dyn = 1;
    expect_refused(ctx, &o, "diag_prod2");
    fprintf(stderr, "prod2 tests done (%d passed, %d failed so far)\n", passed, failed);
    return 0;
}

/* 1: the chains run with two producer threads on 16 KiB slots (opts.diag_prod2, kstep 1) */
static int chain_prod2;
/* 1: the chains run with the default options, whole-K tiles auto (k_whole on 7168^2's all-HBM layers, checked where
 * its 112 tiles fill 80-100 % of the SMs); 0: the split kernels (whole 0) */
static int chain_whole;

/* PDL sequences with a true data dependence: a chain of PDL launches on a square A where each launch's B is the launch
 * before's bf16 C (X_{i+1} = A X_i), run twice; each X_{i+1} against the fp32 reference A X_i of the X_i the GPU left,
 * and every element written (the outputs are poisoned with NaN before each chain).  A launch that read its B, or
 * wrote its C, the workspace or the counters before griddepcontrol.wait would see the poison or stale values (the
 * other PDL checks run one launch again and again: the same B and C every time, so an early read goes unseen).
 * 2048^2: 32 tile rows over 132 SMs (split-K, fix-ups); 7168^2: tile-aligned, with the PDL stash at N <= 8; a host
 * tier beside it at r 10 %.  And a chain of layers that differ in shape and host share (chain_mixed). */
#define CHAIN_L 4   /* layers of a one-shape chain */
#define CHAIN_MAX 8 /* layers of the mixed chain */
/* Layer i of a chain: A of shape sh[i] with host rows for ratio r[i]; its B the launch before's bf16 C (the first one's:
 * sh[0]'s B), so each layer's K is the M of the one before.  Prepared once, run twice with the outputs poisoned
 * (bf16 NaN) in between, each output checked against the fp32 reference of its own input. */
static void chain_run(dak_gemm_ctx *ctx, pshape *const *sh, const double *r, int L, uint32_t N, const char *what)
{
    cm_err err;
    uint16_t *X[CHAIN_MAX + 1];
    dak_gemm_launch *l[CHAIN_MAX] = {NULL};
    uint32_t rows[CHAIN_MAX];
    X[0] = sh[0]->B;
    for (int i = 1; i <= L; i++) CU(cudaMalloc((void **)&X[i], (size_t)sh[i - 1]->M * N * 2));
    dak_gemm_opts o;
    if (chain_whole) dak_gemm_opts_default(&o);
    else split_opts_default(&o);
    o.pdl = 1, o.out_bf16 = 1;
    if (chain_prod2) o.diag_prod2 = 1, o.kstep = 1; /* two producers on 16 KiB slots */
    int ok = 1;
    for (int i = 0; i < L && ok; i++) {
        dak_tiered A;
        const pshape *s = sh[i];
        ok = !dak_tiered_rows_for_ratio(s->M, DAK_TILE_ROWS, r[i], &rows[i], &err) &&
             !dak_tiered_view(&A, s->M, s->K, rows[i], s->Ahp, s->Adp, 1, &err) &&
             !dak_gemm_prepare(ctx, &A, X[i], X[i + 1], N, &o, &l[i], &err);
        CHECK(ok, "chain %s N %u: prepare %d (%ux%u r %g): %s", what, N, i, s->M, s->K, r[i], err.msg);
        const uint32_t sms = dak_gemm_ctx_sms(ctx);
        if (ok && chain_whole && s->M == 7168 && s->K == 7168 && rows[i] == 0 && N <= 64 && 112u <= sms &&
            112u * 5u >= sms * 4u)
            CHECK(dak_gemm_launch_plan(l[i])->kernel == DAK_SPLIT_WHOLE, "chain %s N %u launch %d: kernel %s, expected "
                  "k_whole", what, N, i, dak_split_kernel_name(dak_gemm_launch_plan(l[i])->kernel));
    }
    for (int round = 0; round < 2 && ok; round++) {
        for (int i = 1; i <= L && ok; i++)
            ok = !dak_fill_u32(X[i], (size_t)sh[i - 1]->M * N / 2u, 0x7fc07fc0u, NULL, &err); /* bf16 NaN pairs */
        for (int i = 0; i < L && ok; i++) ok = !dak_gemm_run(l[i], NULL, &err);
        ok = !sync_case(!ok, &err);
        CHECK(ok, "chain %s N %u round %d: %s", what, N, round, err.msg);
        if (!ok) {
            end_if_sticky();
            break;
        }
        double worst = 0;
        for (int i = 0; i < L; i++) {
            pshape *s = sh[i];
            if (dak_ref_gemm(s->Ad, X[i], s->R, s->M, N, s->K, NULL, &err)) {
                CHECK(0, "chain %s: reference: %s", what, err.msg);
                break;
            }
            CU(cudaMemcpy(s->hr, s->R, (size_t)s->M * N * 4, cudaMemcpyDeviceToHost));
            uint16_t *c16 = (uint16_t *)s->hc;
            CU(cudaMemcpy(c16, X[i + 1], (size_t)s->M * N * 2, cudaMemcpyDeviceToHost));
            size_t bad;
            const double e1 = rel_err_bf16(c16, s->hr, (size_t)s->M * N, &bad);
            CHECK(e1 <= 1e-2, "chain %s %ux%u N %u r %.2f %% round %d launch %d: rel err %g, %zu unwritten", what, s->M,
                  s->K, N, 100.0 * rows[i] / s->M, round, i, e1, bad);
            if (e1 > worst) worst = e1;
        }
        printf("  chain %-5s %5ux%-5u N %2u r %5.1f%% round %d: %d launches, worst rel err %.2e\n", what, sh[0]->M,
               sh[0]->K, N, 100.0 * rows[0] / sh[0]->M, round, L, worst);
        fflush(stdout);
    }
    for (int i = 0; i < L; i++) dak_gemm_launch_free(l[i]);
    for (int i = 1; i <= L; i++) cudaFree(X[i]);
}

/* CHAIN_L layers of one square shape and ratio */
static void chain_case(dak_gemm_ctx *ctx, pshape *s, uint32_t N, double ratio, const char *what)
{
    pshape *sh[CHAIN_L];
    double r[CHAIN_L];
    for (int i = 0; i < CHAIN_L; i++) sh[i] = s, r[i] = ratio;
    chain_run(ctx, sh, r, CHAIN_L, N, what);
}

/* An MLP's up and down projections chained as an inference engine would (2048 x 1024, then 1024 x 2048, four times),
 * with host shares that differ from launch to launch (0, 6.25 %, 12.5 %, 0 of the rows): consecutive PDL launches
 * differ in tiles, plans and host CTAs, over the context's one set of split-K counters, workspace and host-link
 * tickets.  N 8, 16 (the 64-row narrow consumer on these aligned shapes) and 40 (128-row wgmma tiles). */
static void chain_mixed(dak_gemm_ctx *ctx, pshape *up, pshape *down)
{
    static const double rs[4] = {0.0, 0.0625, 0.125, 0.0};
    static const uint32_t ns[3] = {8, 16, 40};
    pshape *sh[CHAIN_MAX];
    double r[CHAIN_MAX];
    for (int i = 0; i < CHAIN_MAX; i++) sh[i] = i % 2 ? down : up, r[i] = rs[i % 4];
    for (int ni = 0; ni < 3; ni++) chain_run(ctx, sh, r, CHAIN_MAX, ns[ni], "mixed");
}

static int test_chain(dak_gemm_ctx *ctx, int full)
{
    static const uint32_t dims[2] = {2048, 7168};
    static const uint32_t ns[3] = {1, 8, 64};
    for (int si = 0; si < 2; si++) {
        if (!full && si == 1) continue;
        pshape s;
        if (pshape_init(&s, dims[si], dims[si], 64, 0xc4a1 + si)) return -1;
        for (int ni = 0; ni < 3; ni++) {
            chain_case(ctx, &s, ns[ni], 0.0, "r0");
            chain_case(ctx, &s, ns[ni], 0.1, "r10");
        }
        if (si == 0) { /* two producers under PDL with a true dependence (the second one's B copies after the wait) */
            chain_prod2 = 1;
            for (int ni = 0; ni < 3; ni++) {
                chain_case(ctx, &s, ns[ni], 0.0, "prod2 r0");
                chain_case(ctx, &s, ns[ni], 0.1, "prod2 r10");
            }
            chain_prod2 = 0;
        }
        if (si == 1) { /* k_whole (the default here) in chains, alone and alternating with the split's host-row
                        * layers */
            chain_whole = 1;
            for (int ni = 0; ni < 3; ni++) chain_case(ctx, &s, ns[ni], 0.0, "whole r0");
            pshape *sh[CHAIN_L];
            static const double mix[CHAIN_L] = {0.0, 0.1, 0.0, 0.1};
            for (int i = 0; i < CHAIN_L; i++) sh[i] = &s;
            for (int ni = 0; ni < 3; ni++) chain_run(ctx, sh, mix, CHAIN_L, ns[ni], "whole mix");
            chain_whole = 0;
        }
        pshape_free(&s);
    }
    pshape up, down;
    if (pshape_init(&up, 2048, 1024, 64, 0x6b1) || pshape_init(&down, 1024, 2048, 64, 0x6b2)) return -1;
    chain_mixed(ctx, &up, &down);
    pshape_free(&up), pshape_free(&down);
    fprintf(stderr, "chain tests done (%d passed, %d failed so far)\n", passed, failed);
    return 0;
}

/* ---- small shapes under a watchdog ---- */

#define SMALL_CASE_S 20u
static char small_label[160]; /* the case running, for the watchdog's message */

/* SIGALRM: the case did not end; what a signal handler may do (write, _exit) */
static void small_timeout(int sig)
{
    (void)sig;
    static const char head[] = "FAIL: a case did not end within the watchdog's time: ";
    ssize_t w = write(2, head, sizeof head - 1);
    w = write(2, small_label, strlen(small_label));
    w = write(2, "\n", 1);
    (void)w;
    /* DAK_TEST_HANG_HOLD=s: stay s seconds before exiting, so that a debugger can attach to the stalled kernel */
    const char *hold = getenv("DAK_TEST_HANG_HOLD");
    if (hold) sleep((unsigned)atoi(hold));
    _exit(1);
}

/* first: the index of the first case to run (the watchdog's message names each case's index, so that a run can go
 * on past a case that stalled) */
static int test_small(dak_gemm_ctx *ctx, unsigned first)
{
    unsigned idx = 0;
    static const uint32_t shp[3][2] = {{1024, 1024}, {2048, 2048}, {1024, 4096}};
    /* 33, 40, 48, 52: B boxes of 40, 40, 48 and 56 rows (opts.bnw; 33 with 7 rows zero-filled), 57: 64 */
    static const uint32_t ns[10] = {1, 8, 16, 32, 33, 40, 48, 52, 57, 64};
    static const double rs[2] = {0.0, 0.0625};
    signal(SIGALRM, small_timeout);
    for (int si = 0; si < 3; si++) {
        pshape s;
        if (pshape_init(&s, shp[si][0], shp[si][1], 64, 0x5ca1 + si)) return -1;
        for (int ni = 0; ni < 10; ni++) {
            const uint32_t N = ns[ni];
            if (pshape_ref(&s, N)) return -1;
            for (int ri = 0; ri < 2; ri++)
                for (int v = 0; v < 5; v++, idx++) {
                    if (idx < first) continue;
                    dak_gemm_opts o;
                    split_opts_default(&o);
                    static const char *const what[5] = {"default", "wave off", "fix-rs 0", "pdl x3", "bf16"};
                    if (v == 1) o.wave_align = 0;
                    if (v == 2) o.fix_rs = 0;
                    if (v == 3) o.pdl = 1;
                    if (v == 4) o.out_bf16 = 1;
                    char label[64];
                    uint32_t rows;
                    double e;
                    snprintf(label, sizeof label, "small %s", what[v]);
                    snprintf(small_label, sizeof small_label, "case %u: %s %ux%u N %u r %g", idx, label, s.M, s.K, N,
                             rs[ri]);
                    alarm(SMALL_CASE_S);
                    dak_gemm_launch *l = case_checked(ctx, &s, N, rs[ri], &o, v == 3 ? 3 : 2, label, &rows, &e);
                    alarm(0);
                    /* the split-K counters back at zero, as the next launch's fix-ups expect */
                    size_t nz;
                    uint32_t zi, zv;
                    cm_err err;
                    if (dak_gemm_ctx_counters(ctx, &nz, &zi, &zv, &err))
                        CHECK(0, "%s: %s", small_label, err.msg);
                    else
                        CHECK(nz == 0, "%s: %zu counters left non-zero (first: [%u] = %u)", small_label, nz, zi, zv);
                    if (!l) continue;
                    const dak_gemm_plan *p = dak_gemm_launch_plan(l);
                    printf("  %-16s %5ux%-5u N %2u r %5.2f%% bm %3u HBM CTAs %3u even %d ksplit %2u rs tiles %2u: rel err "
                           "%.2e\n",
                           label, s.M, s.K, N, 100.0 * rows / s.M, p->bm, p->hbm.ctas, p->hbm.even, p->hbm.ksplit,
                           p->hbm.rs_tiles, e);
                    fflush(stdout);
                    dak_gemm_launch_free(l);
                }
        }
        pshape_free(&s);
    }
    fprintf(stderr, "small tests done (%d passed, %d failed so far)\n", passed, failed);
    return 0;
}

/* dak_tiered_view_rows: a view over an HBM allocation that holds only rows [rows_host, M) (what a deployed
 * engine allocates) gives the same C as the full-copy view, for host rows 0, some and all; a missing tier's
 * rows are refused with a message. */
static int test_view_rows(dak_gemm_ctx *ctx)
{
    cm_err err;
    pshape s;
    if (pshape_init(&s, 2048, 1024, 8, 0x71e) || pshape_ref(&s, 8)) return -1;
    static const uint32_t host_rows[3] = {0, 640, 2048};
    for (int i = 0; i < 3; i++) {
        const uint32_t rh = host_rows[i];
        const size_t gb = (size_t)(s.M - rh) * s.K * 2;
        uint16_t *own = NULL; /* only the HBM tier's rows */
        if (gb) CU(cudaMalloc((void **)&own, gb));
        if (gb) CU(cudaMemcpy(own, s.Adp + (size_t)rh * s.K, gb, cudaMemcpyDeviceToDevice));
        dak_tiered A, Af;
        dak_gemm_opts o;
        split_opts_default(&o);
        dak_gemm_launch *l = NULL;
        int rc = dak_tiered_view_rows(&A, s.M, s.K, rh, rh ? s.Ahp : NULL, own, 1, &err);
        if (!rc) rc = dak_tiered_view(&Af, s.M, s.K, rh, s.Ahp, s.Adp, 1, &err);
        if (!rc) {
            CHECK(A.dev == own && A.host == (rh ? s.Ahp : NULL) && A.rows_host == rh,
                  "view rows (host rows %u): dev %p host %p, expected %p %p", rh, (void *)A.dev, (void *)A.host,
                  (void *)own, (void *)(rh ? s.Ahp : NULL));
            CHECK(Af.dev == (rh < s.M ? s.Adp + (size_t)rh * s.K : NULL),
                  "full-copy view (host rows %u): dev is not row %u of the copy", rh, rh);
            rc = dak_fill_u32(s.C, (size_t)s.M * 8, 0x7fc00000u, NULL, &err);
        }
        if (!rc) rc = dak_gemm_prepare(ctx, &A, s.B, s.C, 8, &o, &l, &err);
        if (!rc) rc = dak_gemm_run(l, NULL, &err);
        rc = sync_case(rc, &err);
        CHECK(rc == 0, "view rows (host rows %u): %s", rh, err.msg);
        if (!rc) {
            size_t bad;
            const double e = pshape_err(&s, 8, 0, &bad);
            CHECK(e <= 1e-2 && bad == 0, "view rows (host rows %u): rel err %g, %zu unwritten", rh, e, bad);
            printf("  view over the HBM rows alone, host rows %4u of %u: rel err %.2e\n", rh, s.M, e);
        }
        dak_gemm_launch_free(l);
        if (own) cudaFree(own);
        end_if_sticky();
    }
    dak_tiered A;
    int rc = dak_tiered_view_rows(&A, s.M, s.K, 640, s.Ahp, NULL, 1, &err);
    CHECK(rc != 0 && strstr(err.msg, "HBM rows"), "view rows without the HBM rows: expected a refusal, got '%s'",
          rc ? err.msg : "accepted");
    rc = dak_tiered_view_rows(&A, s.M, s.K, 640, NULL, s.Adp, 1, &err);
    CHECK(rc != 0 && strstr(err.msg, "host rows"), "view rows without the host rows: expected a refusal, got '%s'",
          rc ? err.msg : "accepted");
    rc = dak_tiered_view_rows(&A, s.M, s.K, 100, s.Ahp, s.Adp, 1, &err);
    CHECK(rc != 0 && strstr(err.msg, "multiple of 64"), "view rows with 100 host rows: expected a refusal, got '%s'",
          rc ? err.msg : "accepted");
    pshape_free(&s);
    return 0;
}

/* Launches prepared before a prepare that grows the context's workspace and counters (a fresh context: 2048^2 at
 * N = 8 needs 3 MiB of split-K partials, at N = 512 24 MiB and 8x the counters) run after it, correct: until the
 * fourteenth session the growth freed the buffers the earlier launches pointed at. */
static int test_ctx_grow(void)
{
    cm_err err;
    dak_gemm_ctx *ctx;
    if (dak_gemm_ctx_create(&ctx, &err)) {
        CHECK(0, "ctx grow: %s", err.msg);
        return 0;
    }
    pshape s;
    if (pshape_init(&s, 2048, 2048, 512, 0x9f0)) {
        dak_gemm_ctx_destroy(ctx);
        return -1;
    }
    dak_tiered A;
    dak_gemm_opts o;
    split_opts_default(&o);
    dak_gemm_launch *small = NULL, *big = NULL;
    if (dak_tiered_view(&A, s.M, s.K, 0, s.Ahp, s.Adp, 1, &err) ||
        dak_gemm_prepare(ctx, &A, s.B, s.C, 8, &o, &small, &err) || dak_gemm_prepare(ctx, &A, s.B, s.C, 512, &o, &big, &err)) {
        CHECK(0, "ctx grow: %s", err.msg);
    } else {
        const uint64_t ws0 = dak_gemm_launch_plan(small)->ws_bytes, ws1 = dak_gemm_launch_plan(big)->ws_bytes;
        CHECK(ws0 > 0 && ws1 > ws0, "ctx grow: workspaces %llu then %llu bytes, the second not larger",
              (unsigned long long)ws0, (unsigned long long)ws1);
        static const uint32_t order[3] = {8, 512, 8};
        for (int i = 0; i < 3; i++) {
            const uint32_t N = order[i];
            dak_gemm_launch *l = N == 8 ? small : big;
            if (pshape_ref(&s, N)) break;
            int rc = dak_fill_u32(s.C, (size_t)s.M * N, 0x7fc00000u, NULL, &err);
            if (!rc) rc = dak_gemm_run(l, NULL, &err);
            rc = sync_case(rc, &err);
            CHECK(rc == 0, "ctx grow: run %d (N %u): %s", i, N, err.msg);
            if (rc) {
                printf("%d passed, %d failed\n", passed, failed); /* a sticky error ends the run */
                exit(1);
            }
            size_t bad;
            const double er = pshape_err(&s, N, 0, &bad);
            CHECK(er <= 1e-2, "ctx grow: run %d (N %u) after the workspace grew: rel err %g, %zu unwritten", i, N, er, bad);
            printf("  ctx grow: run %d, N %3u (prepared %s the workspace grew to %llu bytes): rel err %.2e\n", i, N,
                   N == 8 ? "before" : "as", (unsigned long long)ws1, er);
        }
    }
    dak_gemm_launch_free(small);
    dak_gemm_launch_free(big);
    pshape_free(&s);
    dak_gemm_ctx_destroy(ctx);
    fprintf(stderr, "ctx grow tests done (%d passed, %d failed so far)\n", passed, failed);
    return 0;
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    int panel_only = argc > 1 && !strcmp(argv[1], "--panel");
    int wgmma_only = argc > 1 && !strcmp(argv[1], "--wgmma");
    int bn_only = argc > 1 && !strcmp(argv[1], "--bn");
    int stash_only = argc > 1 && !strcmp(argv[1], "--stash");
    int chain_only = argc > 1 && !strcmp(argv[1], "--chain");
    int small_only = argc > 1 && !strcmp(argv[1], "--small");
    int whole_only = argc > 1 && !strcmp(argv[1], "--whole");
    unsigned small_first = 0;
    char *end = NULL;
    const int bad_first = small_only && argc > 2 &&
                          (!isdigit((unsigned char)argv[2][0]) || (small_first = (unsigned)strtoul(argv[2], &end, 10),
                                                                   *end != '\0'));
    if ((argc > 1 && !quick && !panel_only && !wgmma_only && !bn_only && !stash_only && !chain_only && !small_only &&
         !whole_only) ||
        argc > (small_only ? 3 : 2) || bad_first) {
        if (bad_first) fprintf(stderr, "--small: FIRST must be a case index (digits), got '%s'\n", argv[2]);
        fprintf(stderr, "usage: %s [--quick | --panel | --wgmma | --bn | --stash | --chain | --whole | --small [FIRST]]\n",
                argv[0]);
        return 2;
    }
    cm_err err;
    dak_gemm_ctx *ctx;
    if (dak_gemm_ctx_create(&ctx, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        printf("0 passed, 1 failed\n");
        return 1;
    }
    if (wgmma_only || bn_only || chain_only || stash_only || small_only || whole_only) { /* one group, in full */
        const int rc = wgmma_only   ? test_wgmma(ctx, 1)
                       : whole_only ? test_whole(ctx, 1) || test_whole_swap(ctx, 1)
                       : bn_only    ? test_bn(ctx, 1)
                       : stash_only ? test_stash(ctx, 1)
                       : small_only ? test_small(ctx, small_first)
                                    : test_chain(ctx, 1) || test_ctx_grow();
        dak_gemm_ctx_destroy(ctx);
        printf("%d passed, %d failed\n", passed, failed);
        return rc || failed ? 1 : 0;
    }
    test_extents(ctx);
    if (test_panel(ctx, !quick)) return 1;
    if (!panel_only && test_stash(ctx, !quick)) return 1;
    if (!panel_only && test_prod2(ctx, !quick)) return 1;
    if (!panel_only && test_chain(ctx, !quick)) return 1;
    if (!panel_only && test_ctx_grow()) return 1;
    if (!panel_only && test_view_rows(ctx)) return 1;
    if (test_wgmma(ctx, !quick)) return 1;
    if (!panel_only && test_bn(ctx, !quick)) return 1;
    if (!panel_only && test_whole(ctx, !quick)) return 1;
    if (!panel_only && test_whole_swap(ctx, !quick)) return 1;
    if (!panel_only && !quick && test_small(ctx, 0)) return 1;
    static const uint32_t shapes[3][2] = {{7168, 7168}, {28672, 7168}, {11008, 4096}};
    /* 16, 20, 32: narrow tiles with 2, 3, 4 n8 tiles (k_split_nn); 40: one wide tile whose second column half has
       1 n8 tile; 100: a full wide tile and a 36-column one */
    static const uint32_t Ns[10] = {1, 8, 16, 20, 32, 40, 64, 100, 512, 1024};
    static const double ratios[11] = {0, .005, .01, .02, .05, .1, .2, .4, .6, .8, 1};
    const uint32_t NMAX = 1024;
    uint64_t seed = 0x5eed;
    int nshapes = panel_only ? 0 : quick ? 1 : 3;
    for (int si = 0; si < nshapes; si++) {
        uint32_t M = shapes[si][0], K = shapes[si][1];
        uint16_t *Ad, *Ah, *Adp, *Ahp, *B;
        float *C, *R;
        size_t abytes = (size_t)M * K * 2;
        CU(cudaMalloc((void **)&Ad, abytes));
        CU(cudaHostAlloc((void **)&Ah, abytes, cudaHostAllocMapped | cudaHostAllocPortable));
        CU(cudaMalloc((void **)&Adp, abytes));
        CU(cudaHostAlloc((void **)&Ahp, abytes, cudaHostAllocMapped | cudaHostAllocPortable));
        CU(cudaMalloc((void **)&B, (size_t)K * NMAX * 2));
        CU(cudaMalloc((void **)&C, (size_t)M * NMAX * 4));
        CU(cudaMalloc((void **)&R, (size_t)M * NMAX * 4));
        float *hc = malloc((size_t)M * NMAX * 4), *hr = malloc((size_t)M * NMAX * 4);
        uint16_t *hb = malloc((size_t)K * NMAX * 2);
        for (int ni = 0; ni < 10; ni++) {
            uint32_t N = Ns[ni];
            /* fresh inputs for every (shape, N) */
            if (dak_fill_random_bf16(Ad, (size_t)M * K, ++seed, NULL, &err) ||
                dak_fill_random_bf16(B, (size_t)K * N, ++seed, NULL, &err) ||
                dak_ref_gemm(Ad, B, R, M, N, K, NULL, &err)) {
                fprintf(stderr, "%s\n", err.msg);
                return 1;
            }
            CU(cudaMemcpy(Ah, Ad, abytes, cudaMemcpyDeviceToHost));
            if (dak_pack_rowmajor(Ad, Adp, M, K, &err)) {
                fprintf(stderr, "%s\n", err.msg);
                return 1;
            }
            CU(cudaMemcpy(Ahp, Adp, abytes, cudaMemcpyDeviceToHost));
            CU(cudaMemcpy(hr, R, (size_t)M * N * 4, cudaMemcpyDeviceToHost));
            CU(cudaMemcpy(hb, B, (size_t)K * N * 2, cudaMemcpyDeviceToHost));
            /* the reference itself against a CPU dot product at 16 points */
            int refok = 1;
            for (int q = 0; q < 16; q++) {
                uint32_t m = (uint32_t)((q * 2654435761u) % M), n = (uint32_t)((q * 40503u) % N);
                double s = 0, sa = 0;
                for (uint32_t k = 0; k < K; k++) {
                    double a = bf2f(Ah[(size_t)m * K + k]), b = bf2f(hb[(size_t)n * K + k]);
                    s += a * b;
                    sa += fabs(a * b);
                }
                if (fabs(s - hr[(size_t)n * M + m]) > 1e-5 * sa + 1e-6) refok = 0;
            }
            CHECK(refok, "fp32 reference disagrees with the CPU, shape %ux%u N %u", M, K, N);
            for (int ri = 0; ri < 11; ri++) {
                uint32_t rows;
                if (dak_tiered_rows_for_ratio(M, DAK_TILE_ROWS, ratios[ri], &rows, &err)) return 1;
                dak_tiered A;
                if (dak_tiered_view(&A, M, K, rows, Ahp, Adp, 1, &err)) {
                    fprintf(stderr, "%s\n", err.msg);
                    return 1;
                }
                for (int mcb = 0; mcb < 6; mcb++) {
                    const int mc = mcb % 3;
                    const uint32_t bm = mcb < 3 ? 64u : 128u; /* HBM tile rows (opts.bm), both heights */
                    if (mc == 1 && N < 128) continue; /* one column tile: nothing to share */
                    if (mc == 2 && N <= 32) continue; /* no wide tile */
                    dak_gemm_opts o;
                    split_opts_default(&o);
                    o.cluster = mc && N >= 128 ? 8 : 1;
                    o.wgmma = mc == 2; /* wide tiles through wgmma, with multicast from N = 128 */
                    if (mc == 1) o.panel = 0; /* the tiled host tier with multicast at every ratio */
                    o.bm = bm;
                    if (dak_fill_u32(C, (size_t)M * N, 0x7fc00000u, NULL, &err)) return 1;
                    int rc = dak_gemm_split(ctx, &A, B, C, N, &o, &err);
                    CHECK(rc == 0, "split %ux%u N %u r %g mc %d wgmma %u bm %u: %s", M, K, N, ratios[ri], mc, o.wgmma,
                          bm, err.msg);
                    if (rc) continue;
                    CU(cudaMemcpy(hc, C, (size_t)M * N * 4, cudaMemcpyDeviceToHost));
                    size_t bad;
                    double e = rel_err(hc, hr, (size_t)M * N, &bad);
                    CHECK(e <= 1e-2, "%ux%u N %u r %g cluster %u wgmma %u bm %u: rel err %g, %zu unwritten", M, K, N,
                          ratios[ri], o.cluster, o.wgmma, bm, e, bad);
                    if (ri == 0 || ri == 1 || ri == 5 || ri == 10)
                        printf("  %5ux%-5u N %4u r %5.1f%% cluster %u wgmma %u bm %3u: rel err %.2e\n", M, K, N,
                               100.0 * rows / M, o.cluster, o.wgmma, bm, e);
                }
            }
            /* variants at r = 10%: bf16 output, no wave alignment, window 2 on 8 host SMs,
               2-D tensor copies from row-major A (with multicast when N >= 128), round-robin
               with cluster 4 and bf16, one block per slot (kstep 1), B as [n][block] in shared memory */
            {
                uint32_t rows;
                dak_tiered A, Ar;
                dak_tiered_rows_for_ratio(M, DAK_TILE_ROWS, 0.1, &rows, &err);
                dak_tiered_view(&A, M, K, rows, Ahp, Adp, 1, &err);
                dak_tiered_view(&Ar, M, K, rows, Ah, Ad, 0, &err);
                for (int vwb = 0; vwb < 64; vwb++) {
                    /* the 16 variants with mma.sync, then wgmma 1; bm auto, then the other height */
                    const int vw = vwb % 32, v = vw % 16, wgv = vw / 16, bmv = vwb / 32;
                    if (wgv && N <= 32) continue;
                    dak_gemm_opts o;
                    split_opts_default(&o);
                    o.wgmma = (uint32_t)wgv;
                    o.bm = bmv ? (N > 32 ? 64u : 128u) : 0u;
                    if (wgv && v == 6) { /* wgmma 1 with B as [n][block][64]: refused with a message */
                        o.diag_b_nmajor = 1, o.kstep = 2;
                        int rr = dak_gemm_split(ctx, &A, B, C, N, &o, &err);
                        CHECK(rr != 0 && strstr(err.msg, "diag_b_nmajor"), "wgmma with b_nmajor: %s", rr ? err.msg : "accepted");
                        continue;
                    }
                    if (v == 0) o.out_bf16 = 1;
                    if (v == 1) o.wave_align = 0;
                    if (v == 2) o.window = 2, o.host_ctas = 8;
                    if (v == 3) o.a_tma2d = 1, o.cluster = N >= 128 ? 8 : 1;
                    if (v == 4) o.wave_align = 0, o.cluster = N >= 128 ? 4 : 1, o.out_bf16 = 1;
                    if (v == 5) o.kstep = 1, o.cluster = N >= 128 ? 2 : 1; /* one 8 KiB block per slot */
                    if (v == 6) o.diag_b_nmajor = 1, o.kstep = 2; /* B as [n][block][64] */
                    if (v == 7) o.diag_plain_launch = 1; /* no cluster attribute */
                    if (v == 8) o.bn8 = 0, o.bn24 = 0, o.bnw = 0; /* B box of 16 rows at N <= 8, 32 at N 17-24, 64 at N
                                                                     33-56 (8, 24, N rounded up to 8 the defaults) */
                    if (v == 9) o.pdl = 1, o.cluster = N >= 128 ? 8 : 1; /* A ring before griddepcontrol.wait */
                    if (v == 9 && bmv) o.diag_pdl_host_wait = 1; /* host CTAs: nothing before the wait */
                    if (v == 10) o.diag_fixup_atomic = 1; /* the fix-up of runs 1-9 */
                    if (v == 12) o.dyn = 1;                 /* HBM tier in dynamic units (N <= 64) */
                    if (v == 13) o.dyn = 1, o.out_bf16 = 1; /* the fix-up warp's bf16 stores */
                    if (v == 15) o.l2_hints = 0, o.diag_rotate = 5, o.hbm_window = 3; /* no L2 policies; shares
                                                                                          relabelled; 3 HBM copies in flight */
                    /* v == 11 (static) and 14 (dynamic units): PDL, three launches back to back
                       (each starts while the one before drains; counters reset); r = 0, but v == 11
                       with the other tile height at r = 10 % (a host tier in the sequence: its host
                       CTAs hand the host link over, host_gate) */
                    if (dak_fill_u32(C, (size_t)M * N, 0x7fc00000u, NULL, &err)) return 1;
                    int rc;
                    if (v == 11 || v == 14) {
                        dak_tiered A0;
                        dak_tiered_view(&A0, M, K, v == 11 && bmv ? rows : 0u, Ahp, Adp, 1, &err);
                        o.pdl = 1, o.dyn = v == 14;
                        if (v == 11 && wgv) o.fix_rs = 0; /* the owner-wait fix-up where rs would apply */
                        if (v == 11 && !bmv) o.hbm_window = 2; /* the PDL prefetch past the HBM window */
                        dak_gemm_launch *l = NULL;
                        rc = dak_gemm_prepare(ctx, &A0, B, C, N, &o, &l, &err);
                        for (int k = 0; k < 3 && !rc; k++) rc = dak_gemm_run(l, NULL, &err);
                        if (!rc && cudaDeviceSynchronize() != cudaSuccess)
                            rc = -1, snprintf(err.msg, sizeof err.msg, "PDL sequence failed");
                        dak_gemm_launch_free(l);
                    } else {
                        rc = dak_gemm_split(ctx, v == 3 ? &Ar : &A, B, C, N, &o, &err);
                    }
                    CHECK(rc == 0, "variant %d wgmma %d bm %u: %s", v, wgv, o.bm, err.msg);
                    if (rc) continue;
                    size_t bad;
                    double e;
                    if (o.out_bf16) {
                        uint16_t *c16 = (uint16_t *)hc;
                        CU(cudaMemcpy(c16, C, (size_t)M * N * 2, cudaMemcpyDeviceToHost));
                        e = rel_err_bf16(c16, hr, (size_t)M * N, &bad);
                    } else {
                        CU(cudaMemcpy(hc, C, (size_t)M * N * 4, cudaMemcpyDeviceToHost));
                        e = rel_err(hc, hr, (size_t)M * N, &bad);
                    }
                    CHECK(e <= 1e-2, "%ux%u N %u variant %d wgmma %d bm %u: rel err %g, %zu unwritten", M, K, N, v, wgv,
                          o.bm, e, bad);
                }
            }
            fprintf(stderr, "shape %ux%u N %u done (%d passed, %d failed so far)\n", M, K, N, passed, failed);
        }
        cudaFree(Ad);
        cudaFreeHost(Ah);
        cudaFree(Adp);
        cudaFreeHost(Ahp);
        cudaFree(B);
        cudaFree(C);
        cudaFree(R);
        free(hc);
        free(hr);
        free(hb);
    }
    /* bad input is rejected with a message */
    {
        dak_tiered A;
        CHECK(dak_tiered_create(&A, 100, 64, 0.5, &err) != 0 && strstr(err.msg, "multiple"), "%s", err.msg);
        CHECK(dak_tiered_create(&A, 64, 100, 0.5, &err) != 0 && strstr(err.msg, "K"), "%s", err.msg);
        CHECK(dak_tiered_create(&A, 128, 64, 0.5, &err) == 0 && A.rows_host == 64 && A.host && A.dev,
              "%s", err.msg);
        dak_gemm_opts o;
        split_opts_default(&o);
        o.cluster = 5;
        CHECK(dak_gemm_split(ctx, &A, A.dev, A.dev, 8, &o, &err) != 0 && strstr(err.msg, "cluster"), "%s",
              err.msg);
        o.cluster = 1;
        o.a_tma2d = 1; /* packed A cannot go through the 2-D path */
        CHECK(dak_gemm_split(ctx, &A, A.dev, A.dev, 8, &o, &err) != 0 && strstr(err.msg, "packed"), "%s",
              err.msg);
        dak_tiered_destroy(&A);
    }
    dak_gemm_ctx_destroy(ctx);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
