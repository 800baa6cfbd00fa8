/* CPU test (CI): tier split from a ratio, split-GEMM launch planning (ring
 * depth, CTAs per tier, K split, wave alignment, cluster size) and the
 * rejection of bad shapes and options, 128-row HBM tiles (opts.bm).  Expected values are
 * worked out by hand in the comments.  Plus the wgmma consumer's layout arithmetic (dak/gemm_layout.h): the
 * descriptor start offsets against the TMA swizzle, and the accumulator fragment mappings
 * (every element of a 64 x 64 tile owned exactly once per K half). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dak/gemm.h"
#include "dak/gemm_layout.h"
#include "dak/tiered.h"
#include "gemm_test_opts.h"

static int passed, failed;
#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (cond)                                                                     \
            passed++;                                                                 \
        else {                                                                        \
            failed++;                                                                 \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);           \
        }                                                                             \
    } while (0)

#define SMEM 232448u /* H200 opt-in shared memory per block */

static void test_ratio(void)
{
    cm_err e;
    uint32_t r = 1;
    CHECK(dak_tiered_rows_for_ratio(7168, 64, 0.0, &r, &e) == 0 && r == 0);
    CHECK(dak_tiered_rows_for_ratio(7168, 64, 1.0, &r, &e) == 0 && r == 7168);
    /* 112 tiles * 0.005 = 0.56 -> 1 tile */
    CHECK(dak_tiered_rows_for_ratio(7168, 64, 0.005, &r, &e) == 0 && r == 64);
    /* 112 * 0.004 = 0.448 -> 0 tiles */
    CHECK(dak_tiered_rows_for_ratio(7168, 64, 0.004, &r, &e) == 0 && r == 0);
    /* 448 * 0.2 = 89.6 -> 90 tiles = 5760 rows */
    CHECK(dak_tiered_rows_for_ratio(28672, 64, 0.2, &r, &e) == 0 && r == 5760);
    /* 172 * 0.5 = 86 tiles */
    CHECK(dak_tiered_rows_for_ratio(11008, 64, 0.5, &r, &e) == 0 && r == 5504);
    CHECK(dak_tiered_rows_for_ratio(7168, 64, -0.1, &r, &e) != 0 && strstr(e.msg, "outside"));
    CHECK(dak_tiered_rows_for_ratio(7168, 64, 1.5, &r, &e) != 0);
    CHECK(dak_tiered_rows_for_ratio(7168, 64, NAN, &r, &e) != 0);
    CHECK(dak_tiered_rows_for_ratio(100, 64, 0.5, &r, &e) != 0 && strstr(e.msg, "multiple"));
    CHECK(dak_tiered_rows_for_ratio(0, 64, 0.5, &r, &e) != 0);
    CHECK(dak_tiered_rows_for_ratio(64, 0, 0.5, &r, &e) != 0);
}

static void test_plan_decode(void)
{
    cm_err e;
    dak_gemm_opts o;
    dak_gemm_plan p;
    split_opts_default(&o);
    o.tile_align = 0; /* the hand-worked CTA counts below use every SM (tile alignment: test_plan_tile_align) */
    /* auto host SMs: 132 x 64/7168 = 1.2 -> at least 4; window 1 MiB / (4 x 32 KiB) = 8 -> the ring, 6 slots
     * with the 8-row B box of N <= 8 (5 with 16 rows, below) */
    CHECK(dak_gemm_plan_make(7168, 1, 7168, 64, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.host.ctas == 4 && p.hbm.ctas == 128 && p.stages == 6 && p.host.window == 6);
    /* where the host link binds (host rows > M / 64: 128 of 7168), 4 without pdl and 12 with it (132 x 128/7168 = 2.4);
     * window 1 MiB / (12 x 32 KiB) = 2.7 -> 2.  At 64 rows (1/112 of A) HBM binds: 4 with pdl too.  At 640 rows
     * the share, 132 x 640/7168 = 11.8 -> 12, with or without pdl; at 1024 rows 18.9 -> 19 */
    CHECK(dak_gemm_plan_make(7168, 1, 7168, 128, &o, 132, SMEM, &p, &e) == 0 && p.host.ctas == 4);
    o.pdl = 1;
    CHECK(dak_gemm_plan_make(7168, 1, 7168, 128, &o, 132, SMEM, &p, &e) == 0 && p.host.ctas == 12 &&
          p.hbm.ctas == 120 && p.host.window == 2);
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 64, &o, 132, SMEM, &p, &e) == 0 && p.host.ctas == 4);
    CHECK(dak_gemm_plan_make(11008, 1, 4096, 192, &o, 132, SMEM, &p, &e) == 0 && p.host.ctas == 12); /* 1.74 % */
    CHECK(dak_gemm_plan_make(11008, 1, 4096, 128, &o, 132, SMEM, &p, &e) == 0 && p.host.ctas == 4);  /* 1.16 % */
    CHECK(dak_gemm_plan_make(7168, 1, 7168, 1024, &o, 132, SMEM, &p, &e) == 0 && p.host.ctas == 19);
    o.pdl = 0;
    CHECK(dak_gemm_plan_make(7168, 1, 7168, 640, &o, 132, SMEM, &p, &e) == 0 && p.host.ctas == 12);
    /* N = 1 with a B box of 16 rows (bn8 0); 4 blocks per slot: 4 x (8192 + 2048) = 40960 B,
     * (232448 - 9728)/40960 = 5 slots (>= 3, so kstep 4; 9728 B = alignment, barriers, the consumers'
     * 8 KiB hand-over); 112 blocks / 4 = 28 stages per tile row */
    o.host_ctas = 16, o.bn8 = 0;
    CHECK(dak_gemm_plan_make(7168, 1, 7168, 64, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.bn_box == 16 && p.kstep == 4 && p.stages == 5 && p.ntiles == 1 && p.cluster == 1 && p.kchunks == 28);
    CHECK(p.smem_bytes == 9728u + 5u * 40960u);
    /* the default B box of 8 rows at N <= 8: 4 x (8192 + 1024) = 36864 B slots, 6 fit; 16 rows from N = 9 */
    o.bn8 = 1;
    CHECK(dak_gemm_plan_make(7168, 1, 7168, 64, &o, 132, SMEM, &p, &e) == 0 && p.bn_box == 8 && p.stages == 6 &&
          p.smem_bytes == 9728u + 6u * 36864u);
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 64, &o, 132, SMEM, &p, &e) == 0 && p.bn_box == 8 && p.stages == 6);
    CHECK(dak_gemm_plan_make(7168, 9, 7168, 64, &o, 132, SMEM, &p, &e) == 0 && p.bn_box == 16 && p.stages == 5);
    CHECK(dak_gemm_plan_make(7168, 1, 7168, 64, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.host.mtiles == 1 && p.hbm.mtiles == 111);
    CHECK(p.host.ctas >= 1 && p.host.ctas <= 16);
    CHECK(p.hbm.ctas >= 1 && p.hbm.ctas <= 116);
    CHECK(p.host.ctas + p.hbm.ctas <= 132);
    /* wave alignment: even split of all stages.  Host: 1 tile x 28 stages over 16 CTAs
     * = 1.75 -> 2 at most, every CTA shares the one tile (16 partials).  HBM: 111 x 28 =
     * 3108 stages over 116 CTAs = 26.8 -> 27, a tile shared by <= ceil(28/26)+2 = 4 */
    CHECK(p.host.even == 1 && p.host.items == 28 && p.host.ctas == 16 && p.host.chunks == 2);
    CHECK(p.host.ksplit == 16 && fabs(p.host.balance - 0.875) < 1e-12);
    CHECK(p.hbm.even == 1 && p.hbm.items == 3108 && p.hbm.ctas == 116 && p.hbm.chunks == 27);
    CHECK(p.hbm.ksplit == 4 && fabs(p.hbm.balance - 3108.0 / 116 / 27) < 1e-12);
    /* workspace: host 1 tile x 16 slots + HBM 111 tiles x 4 slots, 16 KiB each */
    CHECK(p.ws_bytes == (16ull + 111 * 4) * 16384);
    CHECK(p.host.window == 2); /* 1 MiB / (16 x 32 KiB) */
    /* host bytes without amplification: 64 rows x 7168 x 2 */
    CHECK(dak_gemm_plan_host_bytes(&p) == 64ull * 7168 * 2);

    /* N = 64 with 64-row HBM tiles (bm 64; auto takes 128 there: test_plan_bm): B box 64 rows,
     * 16 KiB hand-over; kstep 4 -> 65536 B slots, (232448 - 17920)/65536 = 3 fit (>= 3, so kstep 4) */
    o.bm = 64;
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bm == 64 && p.hbm_stages == 3);
    CHECK(p.bn_box == 64 && p.kstep == 4 && p.stages == 3 && p.kchunks == 28);
    /* kstep 2 asked: 32768 B slots, 6 fit */
    o.kstep = 2;
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kstep == 2 && p.stages == 6 &&
          p.kchunks == 56);
    o.kstep = 0;
    CHECK(p.host.ctas == 0 && p.hbm.mtiles == 112 && p.hbm.ctas <= 132);
    /* kstep forced: 4 blocks of 64 columns with N = 64 -> 65536 B slots, 3 fit */
    o.kstep = 4;
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kstep == 4 && p.stages == 3 &&
          p.kchunks == 28);
    o.kstep = 3;
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "kstep"));
    o.kstep = 2;
    CHECK(dak_gemm_plan_make(128, 8, 192, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "divide"));
    o.kstep = 0;
    o.bm = 0;
    /* K = 64 * 3: only kstep 1 divides */
    CHECK(dak_gemm_plan_make(128, 8, 192, 0, &o, 132, SMEM, &p, &e) == 0 && p.kstep == 1 && p.kchunks == 3);
    /* N = 20 rounds the B box up to 24 rows (opts.bn24), to 32 without it */
    CHECK(dak_gemm_plan_make(7168, 20, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn_box == 24);
    o.bn24 = 0;
    CHECK(dak_gemm_plan_make(7168, 20, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn_box == 32);
    o.bn24 = 1;

    /* all on the host: only host CTAs (16 asked) */
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 7168, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.hbm.ctas == 0 && p.host.ctas == 16 && p.host.mtiles == 112);
    /* auto: every SM on the host tiles, one 8 KiB copy each in flight (1 MiB) */
    o.host_ctas = 0;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 7168, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.host.ctas == 132 && p.host.window == 1);
    /* auto at 50%: 66 host SMs, window 1 MiB / (66 x 8 KiB) = 1 */
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 3584, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.host.ctas == 66 && p.hbm.ctas == 66 && p.host.window == 1);
    o.host_ctas = 16;

    /* congestion window */
    o.window = 4;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 640, &o, 132, SMEM, &p, &e) == 0 && p.host.window == 4 &&
          p.hbm.window == 3 && p.stages > 3); /* the HBM tier's auto window at N <= 8 without pdl */
    o.window = 40;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 640, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "window"));
    o.window = 0;

    /* round-robin (alignment off): 10 host tiles on 16 CTAs -> K split in 2 -> 20 items,
     * 2 waves of 14 stages for 4 CTAs; 102 HBM tiles on 116 CTAs -> split 2 -> 204 items */
    o.wave_align = 0;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 640, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.host.even == 0 && p.host.ksplit == 2 && p.host.items == 20 && p.host.waves == 2 &&
          p.host.chunks == 14);
    CHECK(p.hbm.even == 0 && p.hbm.ksplit == 2 && p.hbm.items == 204 && p.hbm.ctas == 116);
}

static void test_plan_wave(void)
{
    cm_err e;
    dak_gemm_opts o;
    dak_gemm_plan a, b;
    split_opts_default(&o);
    o.bm = 64; /* the hand-worked counts below are 64-row tiles' (auto takes 128 rows here with wave alignment on) */
    /* 11008 rows = 172 tile rows on 132 SMs: without alignment 2 waves for 40 SMs */
    o.wave_align = 0;
    CHECK(dak_gemm_plan_make(11008, 8, 4096, 0, &o, 132, SMEM, &a, &e) == 0);
    CHECK(a.hbm.ctas == 132 && a.hbm.ksplit == 1 && a.hbm.waves == 2 && a.hbm.even == 0);
    /* balance = 172 / (132 * 2) = 0.6515 */
    CHECK(fabs(a.hbm.balance - 172.0 / 264.0) < 1e-9);
    o.wave_align = 1;
    CHECK(dak_gemm_plan_make(11008, 8, 4096, 0, &o, 132, SMEM, &b, &e) == 0);
    /* aligned: 172 tiles x 16 stages = 2752 over 132 CTAs = 20.8 -> 21 */
    CHECK(b.hbm.even == 1 && b.hbm.chunks == 21 && b.hbm.balance > 0.99 && b.hbm.balance > a.hbm.balance);
}

static void test_plan_multicast(void)
{
    cm_err e;
    dak_gemm_opts o;
    dak_gemm_plan p;
    split_opts_default(&o);
    /* the default sends host rows that the tiled path would fetch twice to the panel kernel */
    CHECK(o.panel == 2);
    CHECK(dak_gemm_plan_make(7168, 1024, 7168, 7168, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.panel.on && p.host.ctas == 0 && dak_gemm_plan_host_bytes(&p) == 7168ull * 7168 * 2);
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 7168, &o, 132, SMEM, &p, &e) == 0 && !p.panel.on);
    /* ... at any ratio, down to one host tile row (64 of 7168 rows) */
    CHECK(dak_gemm_plan_make(7168, 1024, 7168, 64, &o, 132, SMEM, &p, &e) == 0 && p.panel.on);
    CHECK(dak_gemm_plan_make(7168, 1024, 7168, 384, &o, 132, SMEM, &p, &e) == 0 && p.panel.on);
    /* the tiled path alone (panel off) */
    o.panel = 0;
    o.cluster = 8;
    /* N = 1024: 16 column tiles, 2 groups of 8 -> host A fetched twice */
    CHECK(dak_gemm_plan_make(7168, 1024, 7168, 7168, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.cluster == 8 && p.ntiles == 16 && p.ngroups == 2);
    CHECK(p.host.ctas % 8 == 0 && p.host.ctas > 0);
    CHECK(dak_gemm_plan_host_bytes(&p) == 7168ull * 7168 * 2 * 2);
    /* without multicast: 16 fetches (read amplification 16) */
    o.cluster = 1;
    CHECK(dak_gemm_plan_make(7168, 1024, 7168, 7168, &o, 132, SMEM, &p, &e) == 0);
    CHECK(dak_gemm_plan_host_bytes(&p) == 7168ull * 7168 * 2 * 16);
    /* N = 4: a cluster wider than the column tiles shrinks to 1 */
    o.cluster = 8;
    CHECK(dak_gemm_plan_make(7168, 4, 7168, 64, &o, 132, SMEM, &p, &e) == 0 && p.cluster == 1);
    /* N = 128: 2 column tiles -> cluster 2 */
    CHECK(dak_gemm_plan_make(7168, 128, 7168, 64, &o, 132, SMEM, &p, &e) == 0 && p.cluster == 2 &&
          p.ngroups == 1);
    /* clusters never straddle tiers: both tiers' CTAs are multiples of the cluster size */
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 640, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.cluster == 8 && p.host.ctas % 8 == 0 && p.hbm.ctas % 8 == 0);
}

static void test_plan_errors(void)
{
    cm_err e;
    dak_gemm_opts o;
    dak_gemm_plan p;
    split_opts_default(&o);
    CHECK(dak_gemm_plan_make(100, 8, 7168, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "M = 100"));
    CHECK(dak_gemm_plan_make(7168, 8, 100, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "K = 100"));
    CHECK(dak_gemm_plan_make(7168, 0, 7168, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "N"));
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 100, &o, 132, SMEM, &p, &e) != 0);
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 7232, &o, 132, SMEM, &p, &e) != 0);
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 0, &o, 0, SMEM, &p, &e) != 0);
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 0, &o, 132, 20000, &p, &e) != 0);
    o.cluster = 3;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "cluster"));
    o.cluster = 1;
    o.host_ctas = 100, o.hbm_ctas = 100;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 64, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "exceed"));
    o.host_ctas = 16, o.hbm_ctas = 0;
    o.stages = 40;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 64, &o, 132, SMEM, &p, &e) != 0);
    o.stages = 1;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 64, &o, 132, SMEM, &p, &e) != 0);
    /* diag_noload: single launches of the tiled kernel only */
    o.stages = 0, o.diag_noload = 1;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 64, &o, 132, SMEM, &p, &e) == 0);
    o.pdl = 1;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "diag_noload"));
    o.pdl = 0; /* N = 512 at r = 1.8 %: the host rows would take the panel path */
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 128, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "panel 0"));
    o.panel = 0;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 128, &o, 132, SMEM, &p, &e) == 0 && !p.panel.on);
    /* diag_nob (A's copies alone; with pdl the stash's barrier would wait for its B) at N = 8: single launches only,
     * refused with pdl or dyn; diag_prod2 (two producer threads) at N = 24: refused with dyn, taken with pdl (and then
     * no stash at N = 8: the second producer counts the first's copies before the wait, not the stash's) */
    for (int d = 0; d < 2; d++) {
        const char *name = d ? "diag_prod2" : "diag_nob";
        const uint32_t N = d ? 24u : 8u;
        split_opts_default(&o);
        if (d)
            o.diag_prod2 = 1;
        else
            o.diag_nob = 1;
        CHECK(dak_gemm_plan_make(7168, N, 7168, 0, &o, 132, SMEM, &p, &e) == 0);
        o.pdl = 1;
        if (d)
            CHECK(dak_gemm_plan_make(7168, N, 7168, 0, &o, 132, SMEM, &p, &e) == 0 &&
                  dak_gemm_plan_make(7168, 8, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.hbm_stash == 0);
        else
            CHECK(dak_gemm_plan_make(7168, N, 7168, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, name));
        o.pdl = 0, o.dyn = 1;
        CHECK(dak_gemm_plan_make(7168, N, 7168, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, name));
    }
}

/* Panel path (A-stationary host rows, issue #7): host bytes = A's host bytes for every N,
 * shapes of the panel, CTAs beside the HBM tier, auto mode, bad options. */
static void test_plan_panel(void)
{
    cm_err e;
    dak_gemm_opts o;
    dak_gemm_plan p;
    const uint64_t abytes = 7168ull * 7168 * 2;
    static const uint32_t ns[] = {100, 256, 512, 1000, 1024, 2048, 4096};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        split_opts_default(&o);
        o.panel = 1;
        CHECK(dak_gemm_plan_make(7168, ns[i], 7168, 7168, &o, 132, SMEM, &p, &e) == 0);
        CHECK(p.panel.on == 1 && p.host.ctas == 0 && p.hbm.ctas == 0);
        CHECK(dak_gemm_plan_host_bytes(&p) == abytes); /* 1.00x at every N */
        CHECK(p.panel.ctas % p.panel.cluster == 0 && p.panel.ctas <= 132 && p.panel.ctas > 0);
        CHECK(p.panel.smem_bytes <= SMEM && p.panel.bstages >= 2);
        /* the tiled path with cluster 8 for comparison: ceil(N / 512) fetches */
        o.panel = 0, o.cluster = 8;
        CHECK(dak_gemm_plan_make(7168, ns[i], 7168, 7168, &o, 132, SMEM, &p, &e) == 0);
        CHECK(p.panel.on == 0 && dak_gemm_plan_host_bytes(&p) == abytes * ((ns[i] + 511) / 512));
    }
    /* N = 4096, r = 100 %: cluster 8 over 64 column tiles; panels of 8 blocks (512 columns),
     * piece 2 blocks, 112 / 8 = 14 panels per tile row, 112 x 14 = 1568 units; shared memory
     * 19456 fixed + 2 x 64 KiB + 5 x 16 KiB B slots = 232448 exactly; all 132 SMs rounded down
     * to 16 clusters (128 CTAs), 98 units each; window 1 MiB / (128 x 2 KiB) = 4 (of 8) */
    split_opts_default(&o);
    o.tile_align = 0; /* the hand-worked CTA counts below use every SM (tile alignment: test_plan_tile_align) */
    o.panel = 1;
    CHECK(dak_gemm_plan_make(7168, 4096, 7168, 7168, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.panel.cluster == 8 && p.panel.kstep == 2 && p.panel.pblocks == 8 && p.panel.npanels == 14);
    CHECK(p.panel.units == 1568 && p.panel.bstages == 5 && p.panel.smem_bytes == 232448u);
    CHECK(p.panel.ctas == 128 && p.panel.window == 4 && fabs(p.panel.balance - 1.0) < 1e-12);
    CHECK(p.panel.ws_bytes == 0);
    /* bf16 C: an fp32 accumulator of rows_host x N */
    o.out_bf16 = 1;
    CHECK(dak_gemm_plan_make(7168, 4096, 7168, 7168, &o, 132, SMEM, &p, &e) == 0 &&
          p.panel.ws_bytes == 7168ull * 4096 * 4);
    o.out_bf16 = 0;
    /* r = 50 %: the panel kernel's clusters balance the estimated times (panel_clusters).  A unit is
     * 64 x 512 x 4096 MACs at 4.5x the tiled cost on 8 SMs of 1.97e12 MAC/s: 38.3 us; 784 units.  The
     * HBM half is 3584 x 7168 x 4096 MACs = 53.4 SM-ms; the host link 51.4 MB / 51 GB/s = 1.0 ms.
     * k = 12: 66 units, 2.53 ms (HBM 53.4 / 36 = 1.48); k = 13: 61 units, 2.34 ms (HBM 53.4 / 28 = 1.91);
     * k = 14: HBM 53.4 / 20 = 2.67 ms.  The host rows' share (66 -> 8 clusters: 98 units) takes 3.76 ms,
     * and 2.34 < 0.85 x 3.76: 13 clusters, 104 CTAs, beside 28 HBM CTAs; host bytes = the host half; the
     * 56 HBM tile rows of 64 are 28 of 128 (bm auto) */
    CHECK(dak_gemm_plan_make(7168, 4096, 7168, 3584, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.panel.on && p.panel.ctas == 104 && p.host.ctas == 0 && p.hbm.ctas == 28 && p.bm == 128 &&
          p.hbm.mtiles == 28);
    CHECK(p.panel.units == 56 * 14 && dak_gemm_plan_host_bytes(&p) == abytes / 2);
    CHECK(p.panel.ctas + p.hbm.ctas <= 132);
    /* window 1 MiB / (104 x 2 KiB) = 4.9 -> 4; asked 3 -> 3; 9 > 2 panels x 4 pieces -> refused */
    CHECK(p.panel.window == 4);
    o.window = 3;
    CHECK(dak_gemm_plan_make(7168, 4096, 7168, 3584, &o, 132, SMEM, &p, &e) == 0 && p.panel.window == 3);
    o.window = 9;
    CHECK(dak_gemm_plan_make(7168, 4096, 7168, 3584, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "window") &&
          strstr(e.msg, "panel"));
    o.window = 0;
    /* 16 host SMs asked: 2 clusters of 8 */
    o.host_ctas = 16;
    CHECK(dak_gemm_plan_make(7168, 1024, 7168, 640, &o, 132, SMEM, &p, &e) == 0 && p.panel.ctas == 16 &&
          p.hbm.ctas == 116 && p.panel.units == 10 * 14);
    o.host_ctas = 0;
    /* cluster 16 asked (allowed by the plan; the device check is at prepare): 8 clusters,
     * copies of 1 KiB, window 1 MiB / (128 x 1 KiB) = 8 */
    o.panel_cluster = 16;
    CHECK(dak_gemm_plan_make(7168, 4096, 7168, 7168, &o, 132, SMEM, &p, &e) == 0 && p.panel.cluster == 16 &&
          p.panel.ctas == 128 && p.panel.window == 8);
    /* N = 100: 2 column tiles, the cluster shrinks to 2; K = 192: one panel of 3 blocks, piece 1 */
    o.panel_cluster = 0;
    CHECK(dak_gemm_plan_make(256, 100, 192, 256, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.panel.cluster == 2 && p.panel.pblocks == 3 && p.panel.kstep == 1 && p.panel.npanels == 1 &&
          p.panel.units == 4 && p.panel.ctas == 8 && dak_gemm_plan_host_bytes(&p) == 256ull * 192 * 2);
    /* panels of 3 blocks on K = 1024 (16 blocks): piece 1, 6 panels (the last of 1 block) */
    o.panel_blocks = 3;
    CHECK(dak_gemm_plan_make(512, 1000, 1024, 512, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.panel.pblocks == 3 && p.panel.kstep == 1 && p.panel.npanels == 6 && p.panel.units == 48);
    /* 16 clusters (all 132 SMs rounded down), 3 units each */
    CHECK(p.panel.cluster == 8 && p.panel.ctas == 128 && dak_gemm_plan_host_bytes(&p) == 512ull * 1024 * 2);
    /* 16 blocks: 2 x 128 KiB panels do not fit in 227 KiB */
    o.panel_blocks = 16;
    CHECK(dak_gemm_plan_make(7168, 4096, 7168, 7168, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "panel of 16"));
    o.panel_blocks = 0;
    /* no host rows: nothing for the panel path */
    CHECK(dak_gemm_plan_make(7168, 4096, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.panel.on == 0 &&
          dak_gemm_plan_host_bytes(&p) == 0);

    /* auto: on only where the tiled path would re-fetch host tiles */
    split_opts_default(&o);
    o.panel = 2, o.cluster = 8;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 7168, &o, 132, SMEM, &p, &e) == 0 && p.panel.on == 0);
    CHECK(dak_gemm_plan_make(7168, 1024, 7168, 7168, &o, 132, SMEM, &p, &e) == 0 && p.panel.on == 1);
    o.cluster = 1;
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 640, &o, 132, SMEM, &p, &e) == 0 && p.panel.on == 0);
    CHECK(dak_gemm_plan_make(7168, 128, 7168, 640, &o, 132, SMEM, &p, &e) == 0 && p.panel.on == 1);
    o.pdl = 1; /* auto steps aside for pdl */
    CHECK(dak_gemm_plan_make(7168, 128, 7168, 640, &o, 132, SMEM, &p, &e) == 0 && p.panel.on == 0);

    /* bad options, each with a message naming it */
    split_opts_default(&o);
    o.panel = 3;
    CHECK(dak_gemm_plan_make(7168, 1024, 7168, 640, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "panel 3"));
    o.panel = 1, o.panel_cluster = 3;
    CHECK(dak_gemm_plan_make(7168, 1024, 7168, 640, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "panel cluster 3"));
    o.panel_cluster = 32;
    CHECK(dak_gemm_plan_make(7168, 1024, 7168, 640, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "panel cluster"));
    o.panel_cluster = 0, o.panel_blocks = 17;
    CHECK(dak_gemm_plan_make(7168, 1024, 7168, 640, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "panel blocks 17"));
    o.panel_blocks = 0, o.pdl = 1;
    CHECK(dak_gemm_plan_make(7168, 1024, 7168, 640, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "pdl"));
    o.pdl = 0, o.a_tma2d = 1;
    CHECK(dak_gemm_plan_make(7168, 1024, 7168, 640, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "packed"));
    o.a_tma2d = 0;
    /* HBM CTAs asked leave too few SMs for the panel clusters */
    o.hbm_ctas = 130, o.host_ctas = 2;
    CHECK(dak_gemm_plan_make(7168, 1024, 7168, 640, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "exceed"));
}

/* wgmma option: validation, the plan's record, the B box forced to 64 rows. */
static void test_plan_wgmma(void)
{
    dak_gemm_opts o;
    dak_gemm_plan p;
    cm_err e;
    split_opts_default(&o);
    CHECK(o.wgmma == 2); /* auto: measured faster wherever wide tiles exist */
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.wgmma == 1);
    CHECK(dak_gemm_plan_make(7168, 32, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.wgmma == 0);
    o.wgmma = 0;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.wgmma == 0);
    o.wgmma = 1;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.wgmma == 1 && p.bn_box == 64);
    CHECK(dak_gemm_plan_make(7168, 32, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.wgmma == 0); /* no wide tile */
    CHECK(dak_gemm_plan_make(7168, 33, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.wgmma == 1 && p.bn_box == 40);
    /* N = 40: mma.sync keeps the 48-row box; wgmma m64n40k16 loads 40 rows (opts.bnw), m64n64k16 64 (24 zero-filled):
     * 64-row tiles at kstep 4 then hold 4 slots of 4 x (8 + 5) KiB, or 3 of 4 x (8 + 8) KiB, beside the 16 KiB
     * hand-over area */
    o.wgmma = 0;
    CHECK(dak_gemm_plan_make(7168, 40, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn_box == 48);
    o.wgmma = 1, o.bm = 64;
    CHECK(dak_gemm_plan_make(7168, 40, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn_box == 40 && p.kstep == 4 &&
          p.stages == 4);
    o.bnw = 0;
    CHECK(dak_gemm_plan_make(7168, 40, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn_box == 64 && p.kstep == 4 &&
          p.stages == 3);
    o.bm = 0, o.bnw = 1;
    o.wgmma = 2; /* auto: on wherever wide tiles exist, off with the [n][block] B layout */
    CHECK(dak_gemm_plan_make(7168, 128, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.wgmma == 1);
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.wgmma == 0);
    o.diag_b_nmajor = 1;
    CHECK(dak_gemm_plan_make(7168, 128, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.wgmma == 0);
    o.wgmma = 1;
    CHECK(dak_gemm_plan_make(7168, 128, 7168, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "wgmma 1") &&
          strstr(e.msg, "diag_b_nmajor"));
    o.diag_b_nmajor = 0, o.wgmma = 3;
    CHECK(dak_gemm_plan_make(7168, 128, 7168, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "wgmma 3") &&
          strstr(e.msg, "auto"));
    /* with the panel path: one flag for both kernels */
    o.wgmma = 1, o.panel = 1;
    CHECK(dak_gemm_plan_make(7168, 1024, 7168, 7168, &o, 132, SMEM, &p, &e) == 0 && p.panel.on && p.wgmma == 1);
}

/* The wgmma operand addresses: for every block, k16 step, row m < 64 and k < 16, the documented
 * canonical 128B-swizzle K-major addressing (start + (m / 8) 1024 + (m % 8) 128 + 2 k, then the
 * address-bit swizzle) from the start offsets dak_wg_a_off / dak_wg_b_off gives exactly where
 * TMA wrote element (row m, column 16 k16 + k) of that block. */
static void test_wgmma_operands(void)
{
    const uint32_t base = 5u * 1024u; /* a slot start: 1024-aligned, not 0 */
    int bad = 0;
    for (uint32_t bk = 0; bk < 4; bk++)
        for (uint32_t k16 = 0; k16 < 4; k16++)
            for (uint32_t m = 0; m < 64; m++)
                for (uint32_t k = 0; k < 16; k++) {
                    uint32_t a = dak_wg_model_addr(base + dak_wg_a_off(bk, k16), DAK_WG_SBO, m, k);
                    if (a != base + bk * DAK_A_BLOCK + dak_swz128_byte(m, 16u * k16 + k)) bad++;
                    /* B, [block][n][64] with a 64-row box: block bk's rows from row 64 bk */
                    uint32_t b = dak_wg_model_addr(base + dak_wg_b_off(bk, 64u, k16), DAK_WG_SBO, m, k);
                    if (b != base + dak_swz128_byte(64u * bk + m, 16u * k16 + k)) bad++;
                }
    CHECK(bad == 0);
    /* the start offsets stay inside the first 128-byte row (base offset field 0) */
    CHECK(dak_wg_a_off(3, 3) == 3u * 8192u + 96u && ((dak_wg_a_off(2, 3) >> 7) & 7u) == 0);
    CHECK(dak_wg_b_off(1, 64u, 2) == 8192u + 64u);
    /* the model's swizzle is the TMA one on a 1024-aligned tile */
    CHECK(dak_wg_model_addr(0, 1024, 9, 8) == dak_swz128_byte(9, 8));
    CHECK(dak_swz128_byte(9, 8) == 9u * 128u + ((1u ^ 1u) << 4));
    CHECK(dak_swz128_byte(3, 0) == 3u * 128u + (3u << 4));
}

/* Every consumer mapping (mma.sync narrow / wide, wgmma wide) and every nvalid: the 4 warps of a
 * K half x 32 lanes x their stored fragments own each valid element of the 64 x 64 tile exactly
 * once, and nothing outside the tile; wgmma's matches the PTX accumulator layout (warp q: rows
 * 16q.., d[4j + e] = n8 group j). */
static void test_wgmma_fragments(void)
{
    int bad = 0;
    for (int wg = 0; wg < 2; wg++)
        for (int nvalid = 1; nvalid <= 64; nvalid++) {
            static unsigned char cnt[64][64];
            memset(cnt, 0, sizeof cnt);
            for (uint32_t q = 0; q < 4; q++) {
                dak_tile_map t = dak_tile_map_of(nvalid, q, wg);
                if (t.wg != (uint32_t)(wg && nvalid > 32)) bad++;
                for (uint32_t lane = 0; lane < 32; lane++)
                    for (uint32_t a = 0; a < t.MI; a++)
                        for (uint32_t b = 0; b < t.nn; b++)
                            for (uint32_t e = 0; e < 4; e++) {
                                uint32_t r = dak_frag_row(&t, lane, a, e), c = dak_frag_col(&t, lane, a, b, e);
                                if (r >= 64 || c >= 64) {
                                    bad++;
                                    continue;
                                }
                                cnt[r][c]++;
                                if (t.wg) { /* PTX: row 16 q + lane / 4 + 8 (i % 4 >= 2), col 8 (i / 4) + 2 (lane % 4) + i % 2 */
                                    uint32_t i = 16u * a + 4u * b + e;
                                    if (r != 16u * q + lane / 4u + 8u * ((i % 4u) >= 2u) ||
                                        c != 8u * (i / 4u) + 2u * (lane % 4u) + i % 2u)
                                        bad++;
                                }
                            }
            }
            for (int r = 0; r < 64; r++)
                for (int c = 0; c < nvalid; c++)
                    if (cnt[r][c] != 1) bad++;
        }
    CHECK(bad == 0);
    dak_tile_map t = dak_tile_map_of(100, 2, 1);
    CHECK(t.wg && t.MI == 2 && t.row16 == 32 && t.nb0 == 0 && t.nn == 4 && t.dr == 0 && t.dn == 4);
    t = dak_tile_map_of(36, 3, 0);
    CHECK(!t.wg && t.wide && t.row16 == 32 && t.nb0 == 4 && t.nn == 1 && t.dr == 16);
    t = dak_tile_map_of(20, 1, 1);
    CHECK(!t.wg && !t.wide && t.MI == 1 && t.row16 == 16 && t.nn == 3);
    CHECK(dak_tile_map_of(0, 0, 1).nv8 == 0 && dak_tile_map_of(-5, 0, 1).nv8 == 0);
}

/* 128-row HBM tiles (opts.bm): validation, auto, the slot sizes and ring depths of both tiers,
 * tile rows (an odd count: a half last tile), the split-K workspace, and where 64 stays. */
static void test_plan_bm(void)
{
    cm_err e;
    dak_gemm_opts o;
    dak_gemm_plan p;
    split_opts_default(&o);
    o.tile_align = 0; /* the hand-worked CTA counts below use every SM (tile alignment: test_plan_tile_align) */
    CHECK(o.bm == 0);
    /* auto, N = 64, r = 0: 128 rows.  No 64-row tier, so no hand-over area: 1536 B fixed.
     * kstep 4: 4 x (2 x 8192 + 8192) = 98304 B slots, (232448 - 1536) / 98304 = 2 (< 3); kstep 2:
     * 49152 B slots, 4 fit.  56 tile rows x 56 chunks = 3136 over 132 CTAs: 23.8 -> 24 each;
     * fq 23, a tile shared by <= ceil(56 / 23) + 2 = 5 CTAs; partials of 2 x 16 KiB */
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.bm == 128 && p.kstep == 2 && p.kchunks == 56 && p.hbm_stages == 4 && p.bn_box == 64);
    CHECK(p.smem_bytes == 1536u + 4u * 49152u);
    CHECK(p.hbm.mtiles == 56 && p.hbm.items == 3136 && p.hbm.ctas == 132 && p.hbm.chunks == 24 &&
          p.hbm.window == 4 && p.hbm.ksplit == 5);
    CHECK(p.ws_bytes == 56ull * 2 * 5 * 16384);
    /* N <= 32: 128 rows only where the 64-row tiles split raggedly (fewer than two a CTA, no aligned count), with
     * tile alignment on as by default: 11008 x 4096 (172 tiles on 132 SMs; at r = 0.58 % 171 on 128), not 7168^2
     * (112 tiles: 112 CTAs), 28672 x 7168 (448 tiles: over two a CTA), bm 64 asked, or where the host link binds
     * (host rows over 1/64 of A: 192 of 11008, 128 of 7168, where tile alignment is off), or without wave or tile
     * alignment; at N 17..32 with a window of 2 HBM copies (at N 9..16 the ring) */
    {
        dak_gemm_opts d;
        split_opts_default(&d);
        CHECK(dak_gemm_plan_make(11008, 16, 4096, 0, &d, 132, SMEM, &p, &e) == 0 && p.bm == 128 && p.hbm.mtiles == 86);
        CHECK(dak_gemm_plan_make(11008, 9, 4096, 0, &d, 132, SMEM, &p, &e) == 0 && p.bm == 128);
        CHECK(dak_gemm_plan_make(11008, 12, 4096, 64, &d, 132, SMEM, &p, &e) == 0 && p.bm == 128 && p.host.ctas > 0);
        CHECK(dak_gemm_plan_make(11008, 8, 4096, 0, &d, 132, SMEM, &p, &e) == 0 && p.bm == 128);
        CHECK(dak_gemm_plan_make(11008, 1, 4096, 0, &d, 132, SMEM, &p, &e) == 0 && p.bm == 128);
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &d, 132, SMEM, &p, &e) == 0 && p.bm == 64);
        CHECK(dak_gemm_plan_make(11008, 17, 4096, 0, &d, 132, SMEM, &p, &e) == 0 && p.bm == 128 &&
              p.kernel == DAK_SPLIT_NN2 && p.bn_box == 32 && p.hbm.window == 2);
        CHECK(dak_gemm_plan_make(11008, 32, 4096, 0, &d, 132, SMEM, &p, &e) == 0 && p.bm == 128 && p.hbm.window == 2);
        CHECK(dak_gemm_plan_make(11008, 16, 4096, 0, &d, 132, SMEM, &p, &e) == 0 && p.hbm.window == p.hbm_stages);
        CHECK(dak_gemm_plan_make(7168, 24, 7168, 0, &d, 132, SMEM, &p, &e) == 0 && p.bm == 64);
        CHECK(dak_gemm_plan_make(7168, 16, 7168, 0, &d, 132, SMEM, &p, &e) == 0 && p.bm == 64 && p.hbm.ctas == 112);
        CHECK(dak_gemm_plan_make(28672, 16, 7168, 0, &d, 132, SMEM, &p, &e) == 0 && p.bm == 64);
        CHECK(dak_gemm_plan_make(11008, 16, 4096, 192, &d, 132, SMEM, &p, &e) == 0 && p.bm == 64);
        CHECK(dak_gemm_plan_make(7168, 16, 7168, 128, &d, 132, SMEM, &p, &e) == 0 && p.bm == 64);
        d.wave_align = 0;
        CHECK(dak_gemm_plan_make(11008, 16, 4096, 0, &d, 132, SMEM, &p, &e) == 0 && p.bm == 64);
        d.wave_align = 1, d.tile_align = 0;
        CHECK(dak_gemm_plan_make(11008, 16, 4096, 0, &d, 132, SMEM, &p, &e) == 0 && p.bm == 64);
        d.tile_align = 1, d.bm = 64;
        CHECK(dak_gemm_plan_make(11008, 16, 4096, 0, &d, 132, SMEM, &p, &e) == 0 && p.bm == 64);
    }
    /* N <= 32: 64 rows (B is a small share of a slot); N = 33 is wide: 128 */
    CHECK(dak_gemm_plan_make(7168, 32, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bm == 64 && p.hbm.mtiles == 112);
    CHECK(dak_gemm_plan_make(7168, 33, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bm == 128 && p.hbm.mtiles == 56);
    /* N = 1024 with bn 64 (the slots of N = 64); bn auto (256) in test_plan_bn */
    o.bn = 64;
    CHECK(dak_gemm_plan_make(7168, 1024, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bm == 128 && p.kstep == 2 &&
          p.hbm_stages == 4 && p.bn == 64);
    o.bn = 0;
    /* asked: 64 keeps the plan of runs 1-10 (kstep 4 x 3 slots at N = 64) */
    o.bm = 64;
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bm == 64 && p.kstep == 4 &&
          p.stages == 3 && p.hbm_stages == 3 && p.hbm.mtiles == 112 && p.smem_bytes == 17920u + 3u * 65536u);
    /* asked: 128 at N = 8 (narrow tiles, both K halves on each warpgroup's rows): 8-row B box (bn8),
     * kstep 4: 4 x (16384 + 1024) = 69632 B slots, (232448 - 1536) / 69632 = 3 */
    o.bm = 128;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bm == 128 && p.kstep == 4 &&
          p.hbm_stages == 3 && p.smem_bytes == 1536u + 3u * 69632u);
    /* with a host tier (r = 10 %: 10 host tile rows of 64, N = 64): the host tier keeps 64-row
     * tiles and the 16 KiB hand-over (17920 B fixed); kstep 2 (3 slots of 96 KiB do not fit);
     * HBM (232448 - 17920) / 49152 = 4 slots, host / 32768 = 6; 102 HBM tile rows -> 51 */
    o.bm = 0;
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 640, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.bm == 128 && p.kstep == 2 && p.hbm_stages == 4 && p.stages == 6 && p.host.mtiles == 10 &&
          p.hbm.mtiles == 51 && p.smem_bytes == 17920u + 196608u);
    CHECK(p.host.window >= 1 && p.host.window <= p.stages && p.hbm.window == 4);
    CHECK(dak_gemm_plan_host_bytes(&p) == 640ull * 7168 * 2);
    /* an odd count: 111 HBM tile rows of 64 -> 56 of 128, the last one half full */
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 64, &o, 132, SMEM, &p, &e) == 0 && p.bm == 128 && p.hbm.mtiles == 56);
    /* one HBM tile row of 64: nothing to pair, 64 */
    CHECK(dak_gemm_plan_make(128, 64, 7168, 64, &o, 132, SMEM, &p, &e) == 0 && p.bm == 64 && p.hbm.mtiles == 1);
    o.bm = 128;
    CHECK(dak_gemm_plan_make(128, 64, 7168, 64, &o, 132, SMEM, &p, &e) == 0 && p.bm == 64);
    /* the dyn diagnostic (64-row units) keeps 64 */
    o.bm = 0, o.dyn = 1;
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bm == 64 && p.dyn_units > 0);
    /* dynamic units at N = 1: all 132 SMs (no tile alignment), units of 2 slots (28 chunks of 4 blocks a tile
       row: 14 units, 112 x 14 in all); the units by index fill a ring (>= hbm_stages slots) and fit the units;
       the staging tiles leave the ring its slots */
    CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.hbm.ctas == 132 && p.kstep == 4 &&
          p.dyn_p == 14 && p.dyn_units == 112u * 14u && p.dyn_first * 2u >= p.hbm_stages &&
          (p.dyn_first - 1u) * 2u < p.hbm_stages && p.dyn_first * 132u <= p.dyn_units);
    {
        dak_gemm_plan q;
        o.dyn = 0;
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm_stages == p.hbm_stages &&
              q.dyn_units == 0 && q.dyn_first == 0);
        o.dyn = 1, o.dyn_slots = 1; /* one slot a unit: twice the units, twice the units by index */
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.dyn_p == 28 &&
              q.dyn_first == p.hbm_stages);
        /* bad values refused with a message */
        o.dyn_slots = 17;
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) != 0 && strstr(e.msg, "dyn_slots"));
        o.dyn_slots = 0, o.dyn = 2;
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) != 0 && strstr(e.msg, "dyn 2"));
    }
    o.dyn = 0;
    /* an HBM window: at most the ring; 0 auto (3 at N <= 8 without pdl, 2 on 64-row tiles at N 9-32 with or without
     * pdl, else the ring); past 24 refused */
    {
        dak_gemm_plan q;
        o.hbm_window = 3;
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm_stages > 3 && q.hbm.window == 3);
        o.hbm_window = 24;
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm.window == q.hbm_stages);
        o.hbm_window = 25;
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) != 0 && strstr(e.msg, "hbm_window"));
        o.hbm_window = 0;
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm.window == 3);
        CHECK(dak_gemm_plan_make(7168, 8, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm.window == 3);
        for (int pdl = 0; pdl < 2; pdl++) { /* the defaults' plans, PDL or not */
            dak_gemm_opts d;
            split_opts_default(&d);
            d.pdl = pdl;
            /* 64-row tiles at N 9-32 (k_split_nn): 2 */
            for (uint32_t n = 9; n <= 32; n += 23)
                CHECK(dak_gemm_plan_make(7168, n, 7168, 0, &d, 132, SMEM, &q, &e) == 0 && q.bm == 64 &&
                      q.kernel == DAK_SPLIT_NN && q.hbm_stages > 2 && q.hbm.window == 2);
            /* 128-row tiles there (k_split_nn2: 11008 x 4096's 172 tiles have no aligned count), and N = 33: the ring */
            CHECK(dak_gemm_plan_make(11008, 16, 4096, 0, &d, 132, SMEM, &q, &e) == 0 && q.bm == 128 &&
                  q.kernel == DAK_SPLIT_NN2 && q.hbm.window == q.hbm_stages);
            CHECK(dak_gemm_plan_make(7168, 33, 7168, 0, &d, 132, SMEM, &q, &e) == 0 && q.hbm.window == q.hbm_stages);
        }
        o.pdl = 1; /* N <= 8 under PDL: the ring */
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm.window == q.hbm_stages);
        o.pdl = 0, o.dyn = 1; /* dynamic units have no window */
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm.window == q.hbm_stages);
        CHECK(dak_gemm_plan_make(7168, 16, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm.window == q.hbm_stages);
        o.dyn = 0, o.diag_b_nmajor = 1; /* B as [n][block][64]: k_split, the ring */
        CHECK(dak_gemm_plan_make(7168, 16, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm.window == q.hbm_stages);
        o.diag_b_nmajor = 0;
    }
    /* the 24-row B box (opts.bn24, default on) at N 17..24 where k_split_nn runs: 12 KiB of B a kstep-4 slot */
    {
        dak_gemm_plan q;
        dak_gemm_opts d;
        split_opts_default(&d);
        for (uint32_t n = 17; n <= 24; n += 7)
            CHECK(dak_gemm_plan_make(7168, n, 7168, 0, &d, 132, SMEM, &q, &e) == 0 && q.kernel == DAK_SPLIT_NN &&
                  q.bn_box == 24 && q.kstep == 4 && q.hbm_stages >= 4 && q.smem_bytes <= SMEM);
        CHECK(dak_gemm_plan_make(7168, 16, 7168, 0, &d, 132, SMEM, &q, &e) == 0 && q.bn_box == 16);
        CHECK(dak_gemm_plan_make(7168, 25, 7168, 0, &d, 132, SMEM, &q, &e) == 0 && q.bn_box == 32);
        /* a tiled host tier beside it (one column group: no panel) takes the same box */
        CHECK(dak_gemm_plan_make(7168, 24, 7168, 640, &d, 132, SMEM, &q, &e) == 0 && q.host.ctas > 0 &&
              !q.panel.on && q.bn_box == 24);
        d.bn24 = 0;
        CHECK(dak_gemm_plan_make(7168, 24, 7168, 0, &d, 132, SMEM, &q, &e) == 0 && q.bn_box == 32);
        d.bn24 = 1, d.dyn = 1; /* dynamic units: their consumer reads B in 16-row pairs */
        CHECK(dak_gemm_plan_make(7168, 24, 7168, 0, &d, 132, SMEM, &q, &e) == 0 && q.bn_box == 32);
        d.dyn = 0, d.diag_b_nmajor = 1;
        CHECK(dak_gemm_plan_make(7168, 24, 7168, 0, &d, 132, SMEM, &q, &e) == 0 && q.bn_box == 32);
        d.diag_b_nmajor = 0, d.bm = 128; /* 128-row tiles: k_split_nn2 */
        CHECK(dak_gemm_plan_make(7168, 24, 7168, 0, &d, 132, SMEM, &q, &e) == 0 && q.bn_box == 32);
    }
    /* the wgmma tiles' B box at N 33..56 (opts.bnw, default on): N rounded up to 8 rows, so that a 128-row kstep-2 slot
     * carries 10-14 KiB of B, not 16; at N 33..48 (10-12 KiB) a fifth slot would fit, (232448 - 1536) / (32768 +
     * 12288) = 5, but the ring keeps 4 (BNW_SLOTS).  At N 33..40 64-row tiles where they come whole (7168^2: 112 on
     * 112 CTAs; 28672 x 7168: 448, four a CTA), 128-row ones where not (11008 x 4096: 172 tiles on 132 SMs).  N 57..64
     * and anything wider than one 64-column tile keep 64 rows */
    {
        dak_gemm_plan q;
        dak_gemm_opts d;
        split_opts_default(&d);
        for (uint32_t n = 33; n <= 64; n++) {
            const uint32_t box = n <= 56 ? (n + 7) / 8 * 8 : 64;
            for (uint32_t m = 7168; m <= 28672; m += 21504) {
                const uint32_t bm = n <= 40 ? 64 : 128;
                CHECK(dak_gemm_plan_make(m, n, 7168, 0, &d, 132, SMEM, &q, &e) == 0 && q.wgmma == 1 &&
                      q.kernel == DAK_SPLIT && q.bm == bm && q.bn_box == box && q.kstep == (bm == 64 ? 4 : 2) &&
                      q.smem_bytes <= SMEM && q.hbm_stages == 4u);
            }
            CHECK(dak_gemm_plan_make(11008, n, 4096, 0, &d, 132, SMEM, &q, &e) == 0 && q.bm == 128 && q.bn_box == box &&
                  q.hbm_stages == 4);
        }
        CHECK(dak_gemm_plan_make(7168, 40, 7168, 0, &d, 132, SMEM, &q, &e) == 0 && q.hbm.ctas == 112 &&
              q.hbm.mtiles == 112 && q.hbm.rs_tiles == 0); /* one whole tile a CTA */
        d.bnw = 0; /* the 64-row box: 128-row tiles, as before */
        CHECK(dak_gemm_plan_make(7168, 40, 7168, 0, &d, 132, SMEM, &q, &e) == 0 && q.bm == 128 && q.bn_box == 64);
        d.bnw = 1;
        /* K below WIDE64_MIN_K: 128-row tiles (16384 x 4096: 128 of them on 128 CTAs) */
        CHECK(dak_gemm_plan_make(16384, 36, 4096, 0, &d, 132, SMEM, &q, &e) == 0 && q.bm == 128 && q.bn_box == 40 &&
              q.hbm_stages == 4);
        CHECK(dak_gemm_plan_make(4096, 40, 11008, 0, &d, 132, SMEM, &q, &e) == 0 && q.bm == 64); /* K = 11008 */
        d.stages = 5; /* asked for: the fifth slot fits */
        CHECK(dak_gemm_plan_make(11008, 40, 4096, 0, &d, 132, SMEM, &q, &e) == 0 && q.hbm_stages == 5);
        d.stages = 0;
        /* a tiled host tier beside it (one column group: no panel) takes the same box; the panel path keeps 64 */
        CHECK(dak_gemm_plan_make(7168, 40, 7168, 128, &d, 132, SMEM, &q, &e) == 0 && q.host.ctas > 0 &&
              !q.panel.on && q.bn_box == 40 && q.smem_bytes <= SMEM);
        d.panel = 1;
        CHECK(dak_gemm_plan_make(7168, 40, 7168, 128, &d, 132, SMEM, &q, &e) == 0 && q.panel.on && q.bn_box == 64);
        d.panel = 2, d.bnw = 0;
        CHECK(dak_gemm_plan_make(7168, 40, 7168, 0, &d, 132, SMEM, &q, &e) == 0 && q.bn_box == 64 && q.hbm_stages == 4);
        d.bnw = 1, d.dyn = 1; /* dynamic units: k_split_dyn's consumers read 64 rows */
        CHECK(dak_gemm_plan_make(7168, 40, 7168, 0, &d, 132, SMEM, &q, &e) == 0 && q.bn_box == 64);
        d.dyn = 0;
        CHECK(dak_gemm_plan_make(7168, 100, 7168, 0, &d, 132, SMEM, &q, &e) == 0 && q.bn_box == 64);
        CHECK(dak_gemm_plan_make(7168, 32, 7168, 0, &d, 132, SMEM, &q, &e) == 0 && q.kernel == DAK_SPLIT_NN &&
              q.bn_box == 32);
    }
    /* the PDL stash (opts.stash, default 2): only with pdl, at N <= 8 on 64-row HBM tiles, cluster 1, no dyn,
     * the window at the ring; as many chunks as their B rows fit in 8192 B (8-row box at kstep 4: 4096 B each, so
     * 2; the 16-row box (bn8 0): 8192 B, so 1).  Its B area grows the fixed part by 512 B: 1536 + 512 + 8192 =
     * 10240, which still leaves (232448 - 10240) / 36864 = 6 slots of 36 KiB */
    {
        dak_gemm_plan q;
        CHECK(o.stash == 2);
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm_stash == 0); /* no pdl */
        o.pdl = 1;
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm_stash == 2 && q.kstep == 4 &&
              q.hbm_stages == 6 && q.smem_bytes == 10240u + 6u * 36864u);
        CHECK(dak_gemm_plan_make(11008, 8, 4096, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm_stash == 2);
        {   /* tile alignment on: 11008 x 4096 takes 128-row tiles at N <= 16 (test_plan_bm), where there is no stash */
            dak_gemm_opts t = o;
            t.tile_align = 1;
            CHECK(dak_gemm_plan_make(11008, 8, 4096, 0, &t, 132, SMEM, &q, &e) == 0 && q.bm == 128 && q.hbm_stash == 0);
        }
        /* a host tier beside it: the HBM tier still stashes */
        CHECK(dak_gemm_plan_make(7168, 8, 7168, 640, &o, 132, SMEM, &q, &e) == 0 && q.hbm_stash == 2);
        o.stash = 1;
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm_stash == 1);
        o.stash = 2, o.bn8 = 0; /* 16-row box: one chunk's B rows fill the area */
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm_stash == 1);
        o.bn8 = 1;
        CHECK(dak_gemm_plan_make(7168, 9, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm_stash == 0); /* N > 8 */
        o.hbm_window = 3; /* a window below the ring */
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm_stash == 0);
        o.hbm_window = 0, o.dyn = 1;
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm_stash == 0);
        o.dyn = 0, o.bm = 128; /* 128-row HBM tiles */
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.bm == 128 && q.hbm_stash == 0);
        o.bm = 0, o.stash = 0;
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm_stash == 0 &&
              q.smem_bytes == 9728u + 6u * 36864u);
        o.stash = 3;
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) != 0 && strstr(e.msg, "stash 3"));
        o.stash = 2, o.pdl = 0;
    }
    /* copies of A before the PDL wait (opts.pdl_pre): none without pdl; auto: 3 with 128-row HBM slots at N 33..64
     * (the ring holds more), the whole ring at N <= 32 (64-row slots) and at N > 64; asked: that many, at most the
     * ring, at least the stash; above MAX_STAGES refused */
    {
        dak_gemm_plan q;
        CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm_pre == 0); /* no pdl */
        o.pdl = 1;
        CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.bm == 128 && q.hbm_stages > 3 &&
              q.hbm_pre == 3);
        CHECK(dak_gemm_plan_make(11008, 40, 4096, 0, &o, 132, SMEM, &q, &e) == 0 && q.bm == 128 && q.hbm_pre == 3);
        CHECK(dak_gemm_plan_make(7168, 32, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.bm == 64 &&
              q.hbm_pre == q.hbm_stages);
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm_pre == q.hbm_stages);
        CHECK(dak_gemm_plan_make(7168, 128, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm_pre == q.hbm_stages);
        o.pdl_pre = 2;
        CHECK(dak_gemm_plan_make(7168, 16, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm_pre == 2);
        /* the stash's 2 chunks go out before the wait whatever is asked */
        o.pdl_pre = 1;
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm_stash == 2 && q.hbm_pre == 2);
        o.pdl_pre = 24;
        CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm_pre == q.hbm_stages);
        o.pdl_pre = 25;
        CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &q, &e) != 0 && strstr(e.msg, "pdl_pre 25"));
        /* none: nothing before the wait, not even the stash (which N = 1 on 64-row tiles takes otherwise) */
        o.pdl_pre = DAK_GEMM_PDL_PRE_NONE;
        CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm_stash == 0 && q.hbm_pre == 0);
        CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &q, &e) == 0 && q.hbm_pre == 0);
        o.pdl_pre = 0, o.pdl = 0;
    }
    /* stages asked: both rings hold that many; 3 of 96 KiB do not fit, so kstep 2 */
    o.bm = 128, o.stages = 3;
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 640, &o, 132, SMEM, &p, &e) == 0 && p.kstep == 2 &&
          p.hbm_stages == 3 && p.stages == 3 && p.smem_bytes == 17920u + 3u * 49152u);
    o.stages = 0;
    /* multicast cluster 8, N = 512: 8 column tiles, one group; HBM tiles of 128 rows */
    o.cluster = 8;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.cluster == 8 && p.bm == 128 &&
          p.hbm.ctas % 8 == 0 && p.hbm.mtiles == 56);
    o.cluster = 1;
    /* bad values */
    o.bm = 96;
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "bm 96") &&
          strstr(e.msg, "128 or 256"));
    o.bm = 256;
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "bm 256"));
}

/* Wide HBM column tiles (opts.bn): validation, auto (the narrowest covering N / cluster, 128 beside a
 * tiled host tier), slot sizes and ring depths (>= 4 slots), the HBM tier's column groups, K split
 * and workspace, refusals and fallbacks.  SMEM = 232448 B; a 128-row slot holds per block 16 KiB
 * of A and bn x 128 B of B. */
static void test_plan_bn(void)
{
    cm_err e;
    dak_gemm_opts o;
    dak_gemm_plan p;
    split_opts_default(&o);
    o.tile_align = 0; /* the hand-worked CTA counts below use every SM (tile alignment: test_plan_tile_align) */
    CHECK(o.bn == 0);
    /* N = 128, r = 0: bn 128.  Slot per block 16384 + 16384 = 32768 B; kstep 4 (131072 B) holds
     * 1; kstep 2 (65536 B): (232448 - 1536) / 65536 = 3 < 4; kstep 1: 230912 / 32768 = 7.
     * 56 tile rows x 1 column group x 112 chunks = 6272 over 132 CTAs: 47.5 -> 48 each, fq 47,
     * a tile shared by <= ceil(112 / 47) + 2 = 5; partial 128 x 128 fp32 = 4 x 16 KiB (bm 128 asked:
     * auto is 256 at N = 128, test_plan_bm256) */
    o.bm = 128;
    CHECK(dak_gemm_plan_make(7168, 128, 7168, 0, &o, 132, SMEM, &p, &e) == 0);
    o.bm = 0;
    CHECK(p.bm == 128 && p.bn == 128 && p.wgmma == 1 && p.kstep == 1 && p.kchunks == 112 && p.hbm_stages == 7);
    CHECK(p.smem_bytes == 1536u + 7u * 32768u && p.ntiles == 2 && p.ngroups == 2);
    CHECK(p.hbm.ngroups == 1 && p.hbm.mtiles == 56 && p.hbm.items == 6272 && p.hbm.ctas == 132 &&
          p.hbm.chunks == 48 && p.hbm.ksplit == 5 && p.hbm.window == 7);
    CHECK(p.ws_bytes == 56ull * 4 * 5 * 16384);
    /* N = 512: bn 256.  Slot per block 16384 + 32768 = 49152 B; kstep 2 (98304 B): 2 < 4; kstep 1:
     * 230912 / 49152 = 4.  2 column groups: 56 x 2 x 112 = 12544 chunks, 95.03 -> 96 per CTA,
     * fq 95, ksplit ceil(112 / 95) + 2 = 4; partial 128 x 256 = 8 x 16 KiB */
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 0, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.bn == 256 && p.kstep == 1 && p.hbm_stages == 4 && p.smem_bytes == 1536u + 4u * 49152u);
    CHECK(p.hbm.ngroups == 2 && p.hbm.items == 12544 && p.hbm.chunks == 96 && p.hbm.ksplit == 4);
    CHECK(p.ws_bytes == 56ull * 8 * 2 * 4 * 16384);
    /* the narrowest covering N: 100 -> 128; 200, 256 -> 256 (one group); 1024 -> 256 (4 groups);
     * 64 -> 64 (the slots of test_plan_bm) */
    CHECK(dak_gemm_plan_make(7168, 100, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn == 128 && p.hbm.ngroups == 1);
    CHECK(dak_gemm_plan_make(7168, 200, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn == 256 && p.hbm.ngroups == 1);
    CHECK(dak_gemm_plan_make(7168, 256, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn == 256 && p.hbm.ngroups == 1);
    CHECK(dak_gemm_plan_make(7168, 1024, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn == 256 && p.hbm.ngroups == 4 &&
          p.ngroups == 16);
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn == 64 && p.kstep == 2);
    /* asked: 64 at N = 512 keeps the 64-column plan (kstep 2 x 4 slots, 8 groups) */
    o.bn = 64;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn == 64 && p.kstep == 2 &&
          p.hbm_stages == 4 && p.hbm.ngroups == 8);
    /* asked: 256 at N = 100 (one tile, 156 columns of zero-filled B) and 128 at N = 512 (4 groups) */
    o.bn = 256;
    CHECK(dak_gemm_plan_make(7168, 100, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn == 256 && p.hbm.ngroups == 1);
    o.bn = 128;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn == 128 && p.hbm.ngroups == 4 &&
          p.kstep == 1 && p.hbm_stages == 7);
    /* a tiled host tier (panel 0; 2 host tile rows of 7168: r = 1.8 %): auto 128,
     * 17920 B fixed (hand-over); HBM kstep 2 (65536 B): (232448 - 17920) / 65536 = 3 < 4, kstep 1:
     * 214528 / 32768 = 6; host 64-row slots of kstep 1: 214528 / 16384 = 13 -> the larger ring,
     * 13 x 16384 = 212992 B.  110 HBM tile rows -> 55; the host tier keeps 8 groups of 64 */
    o.bn = 0, o.panel = 0;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 128, &o, 132, SMEM, &p, &e) == 0);
    CHECK(!p.panel.on && p.host.ctas > 0 && p.bn == 128 && p.kstep == 1 && p.hbm_stages == 6 && p.stages == 13);
    CHECK(p.smem_bytes == 17920u + 212992u && p.hbm.mtiles == 55 && p.hbm.ngroups == 4 && p.host.ngroups == 8);
    CHECK(dak_gemm_plan_host_bytes(&p) == 128ull * 7168 * 2 * 8);
    /* asked 256 there: refused (the 256-column kernel has no host tier); with the panel path: 256 */
    o.bn = 256;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 128, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "bn 256") &&
          strstr(e.msg, "panel"));
    o.panel = 1;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 128, &o, 132, SMEM, &p, &e) == 0 && p.panel.on && p.host.ctas == 0 &&
          p.bn == 256 && p.hbm.ngroups == 2);
    /* and by default (panel auto takes those host rows too): bn auto 256 */
    o.panel = 2, o.bn = 0;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 128, &o, 132, SMEM, &p, &e) == 0 && p.panel.on && p.host.ctas == 0 &&
          p.bn == 256 && p.hbm.ngroups == 2);
    /* r = 10 % (panel auto takes the host rows): auto 256 */
    o.bn = 0;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 640, &o, 132, SMEM, &p, &e) == 0 && p.panel.on && p.bn == 256);
    /* clusters: the narrowest covering N / c.  c 2, N = 512: 256, one group of 2; c 8, N = 512: 64;
     * c 8, N = 1024: 128 (8 tiles, one group) */
    o.cluster = 2;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.cluster == 2 && p.bn == 256 &&
          p.hbm.ngroups == 1);
    o.cluster = 8;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn == 64);
    CHECK(dak_gemm_plan_make(7168, 1024, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn == 128 && p.hbm.ngroups == 1);
    o.cluster = 1;
    /* kstep asked 2 at bn 256: 98304 B slots, 2 fit */
    o.kstep = 2;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn == 256 && p.kstep == 2 &&
          p.hbm_stages == 2 && p.smem_bytes == 1536u + 2u * 98304u);
    o.kstep = 0;
    /* fall back to 64 where there is no 128-row wgmma tier: N <= 32 (bm auto 64; bm 128 asked: no
     * wgmma), one HBM tile row */
    o.bn = 128;
    CHECK(dak_gemm_plan_make(7168, 16, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn == 64 && p.bm == 64);
    o.bm = 128;
    CHECK(dak_gemm_plan_make(7168, 16, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn == 64 && p.bm == 128 &&
          p.wgmma == 0);
    o.bm = 0;
    o.bn = 256;
    CHECK(dak_gemm_plan_make(128, 512, 7168, 64, &o, 132, SMEM, &p, &e) == 0 && p.bm == 64 && p.bn == 64);
    /* wgmma auto steps aside for diag_b_nmajor: 64 (bn auto) */
    o.bn = 0, o.diag_b_nmajor = 1;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn == 64 && p.wgmma == 0);
    o.diag_b_nmajor = 0;
    /* refused: bad widths, and wide with bm 64, wgmma 0, dyn, diag_b_nmajor */
    o.bn = 96;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "bn 96") &&
          strstr(e.msg, "64, 128 or 256"));
    o.bn = 512;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "bn 512"));
    o.bn = 128, o.bm = 64;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "128-row"));
    o.bm = 0, o.wgmma = 0;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "wgmma"));
    o.wgmma = 2, o.dyn = 1;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "bn 128"));
    o.dyn = 0, o.diag_b_nmajor = 1;
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "bn 128"));
    o.diag_b_nmajor = 0, o.bn = 64, o.wgmma = 0; /* 64 goes with anything */
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn == 64);
}

/* Tile alignment of the HBM tier (opts.tile_align, default on): with fewer than two tiles a CTA,
 * the largest CTA count keeping >= 80 % of the 132 SMs (>= 106) that divides the tiles or that the
 * tiles divide. */
static void test_plan_tile_align(void)
{
    cm_err e;
    dak_gemm_opts o;
    dak_gemm_plan p;
    split_opts_default(&o);
    CHECK(o.tile_align == 1);
    /* 7168^2, N = 1: 112 tiles of 64 rows; 112 divides 112 -> 112 CTAs, one tile each */
    CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bm == 64 && p.hbm.ctas == 112);
    /* N = 64: 56 tiles of 128 rows; 112 is a multiple of 56 -> 112 CTAs, two equal halves a tile */
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bm == 128 && p.hbm.ctas == 112);
    /* 2560 rows, N = 1: 40 tiles; 120 = 3 x 40 is the largest multiple in 106..132 */
    CHECK(dak_gemm_plan_make(2560, 1, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.hbm.ctas == 120);
    /* 11008 x 4096, N = 1: 172 tiles = 4 x 43, nothing in 106..132 -> all 132 */
    CHECK(dak_gemm_plan_make(11008, 1, 4096, 0, &o, 132, SMEM, &p, &e) == 0 && p.hbm.ctas == 132);
    /* 28672 x 7168, N = 1: 448 tiles, at least two a CTA -> all 132 */
    CHECK(dak_gemm_plan_make(28672, 1, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.hbm.ctas == 132);
    /* N = 64 (loads bind): 224 tiles of 128 rows, 112 divides 224 -> 112, two whole tiles a CTA */
    CHECK(dak_gemm_plan_make(28672, 64, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.hbm.ctas == 112);
    /* N > 64 (the math binds): only counts with several CTAs a tile.  28672 x 7168, N = 128: 112 tiles of
     * 256 x 128, 112 CTAs would hold one each -> all 132; N = 256: 224 tiles of 128 x 256 -> 132 */
    CHECK(dak_gemm_plan_make(28672, 128, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bm == 256 && p.hbm.ctas == 132);
    CHECK(dak_gemm_plan_make(28672, 256, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.hbm.ctas == 132);
    /* 7168^2, N = 128: 28 tiles -> 112, four CTAs a tile; N = 256: 56 tiles -> 112, two a tile; N = 512: 112
     * tiles (two column groups) -> 132 */
    CHECK(dak_gemm_plan_make(7168, 128, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.hbm.ctas == 112);
    CHECK(dak_gemm_plan_make(7168, 256, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.hbm.ctas == 112);
    CHECK(dak_gemm_plan_make(7168, 512, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.hbm.ctas == 132);
    /* 11008 x 4096, N = 128: 43 tiles of 256 rows, 129 = 3 x 43 */
    CHECK(dak_gemm_plan_make(11008, 128, 4096, 0, &o, 132, SMEM, &p, &e) == 0 && p.hbm.ctas == 129);
    /* host rows over M / 64 (the host link binds): all SMs left; at most M / 64: aligned.  7168^2,
     * r = 1.8 % (128 host rows, 110 HBM tiles, 128 SMs left): 128; 64 host rows (111 tiles, 128
     * left): 111 */
    CHECK(dak_gemm_plan_make(7168, 1, 7168, 128, &o, 132, SMEM, &p, &e) == 0 && p.hbm.ctas == 128);
    CHECK(dak_gemm_plan_make(7168, 1, 7168, 64, &o, 132, SMEM, &p, &e) == 0 && p.hbm.ctas == 111);
    /* asked CTAs are kept; off -> all SMs */
    o.hbm_ctas = 100;
    CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.hbm.ctas == 100);
    o.hbm_ctas = 0, o.tile_align = 0;
    CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.hbm.ctas == 132);
}

/* rs_tiles (tiles summed by reduce-scatter, opts.fix_rs) against a count from the CTAs' ranges
 * themselves: a shared tile that holds every contributor's whole range. */
static uint32_t rs_brute(uint64_t T, uint32_t cl, uint32_t kc)
{
    uint32_t n = 0;
    for (uint64_t t0 = 0; t0 < T; t0 += kc) {
        uint32_t contrib = 0;
        int all_end = 1;
        for (uint32_t k = 0; k < cl; k++) {
            const uint64_t b = (uint64_t)k * T / cl, e = (uint64_t)(k + 1u) * T / cl;
            if (e <= t0 || b >= t0 + kc) continue; /* no chunk of this tile */
            contrib++;
            if (e > t0 + kc || b < t0) all_end = 0;
        }
        n += contrib > 1 && all_end;
    }
    return n;
}

/* The even split's range arithmetic (gemm_layout.h: 32-bit starts, double-precision owners, used
 * by the kernel and the plan) against 64-bit integer division, at random and at the extremes. */
static void test_ranges(void)
{
    uint64_t s = 0x9e3779b97f4a7c15ull;
    int bad = 0;
    for (int i = 0; i < 200000 && bad < 5; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        const uint32_t T = i < 1000 ? 0xffffffffu - (uint32_t)(s % 1000u) : (uint32_t)(s >> 32) | 1u;
        const uint32_t ncl = i % 7 == 0 ? 1024u : 1u + (uint32_t)(s % 1024u);
        if (ncl > T) continue;
        const uint32_t k = (uint32_t)(s >> 16) % (ncl + 1u);
        const uint32_t x = i % 3 == 0 ? T - 1u - (uint32_t)(s % 3u) % T : (uint32_t)((s >> 8) % T);
        const uint32_t st = (uint32_t)((uint64_t)k * T / ncl);
        const uint32_t ow = (uint32_t)((((uint64_t)x + 1u) * ncl - 1u) / T);
        if (dak_rng_start(k, T, ncl) != st || dak_rng_owner(x, T, ncl) != ow) bad++;
        /* the owner's range holds x */
        if (dak_rng_start(ow, T, ncl) > x || dak_rng_start(ow + 1u, T, ncl) <= x) bad++;
    }
    CHECK(bad == 0);
    /* whole shares: 7168^2 at N = 64 (56 tiles x 56 chunks on 112 ranges): every tile; 11008 x 4096 at
     * N = 64 (86 x 32 on 132): none */
    int all = 1, none = 1;
    for (uint32_t t = 0; t < 56; t++) all &= dak_rng_whole_shares(t * 56u, t * 56u + 56u, 3136u, 112u);
    for (uint32_t t = 0; t < 86; t++) none &= !dak_rng_whole_shares(t * 32u, t * 32u + 32u, 2752u, 132u);
    CHECK(all && none);
    /* a whole tile in one range is not shared */
    CHECK(!dak_rng_whole_shares(0, 28, 3136u, 112u));
}

static void test_plan_rs(void)
{
    dak_gemm_plan p;
    dak_gemm_opts o;
    cm_err e;
    split_opts_default(&o);
    CHECK(o.fix_rs == 1);
    /* 7168^2, N = 64, r = 0, tile-aligned: 56 tiles of 128 rows on 112 CTAs, two a tile, both
     * ending there: all 56 */
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.hbm.ctas == 112 && p.hbm.mtiles == 56 && p.hbm.ngroups == 1 && p.hbm.rs_tiles == 56);
    /* N = 1: 112 whole tiles of 64 rows, none shared */
    CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.hbm.ctas == 112 && p.hbm.mtiles == 112 && p.hbm.rs_tiles == 0);
    /* every shape and N of the benchmark, r = 0 and 2 %, with and without tile alignment: the
     * brute-force count */
    static const uint32_t shp[3][2] = {{7168, 7168}, {28672, 7168}, {11008, 4096}};
    static const uint32_t ns[7] = {1, 8, 64, 100, 128, 256, 1024};
    uint32_t some = 0;
    for (int ta = 0; ta < 2; ta++)
        for (int si = 0; si < 3; si++)
            for (int ni = 0; ni < 7; ni++)
                for (int ri = 0; ri < 2; ri++) {
                    uint32_t rows = 0;
                    o.tile_align = ta;
                    dak_tiered_rows_for_ratio(shp[si][0], 64, ri ? 0.02 : 0.0, &rows, &e);
                    if (dak_gemm_plan_make(shp[si][0], ns[ni], shp[si][1], rows, &o, 132, SMEM, &p, &e)) {
                        CHECK(0);
                        continue;
                    }
                    const dak_tier_plan *t = &p.hbm;
                    CHECK(t->even == 1);
                    CHECK(t->rs_tiles == rs_brute(t->items, t->ctas, p.kchunks));
                    some += t->rs_tiles;
                }
    CHECK(some > 56); /* the brute force is not trivially zero */
    /* 11008 x 4096, N = 64: 86 tiles on 132 CTAs; range k ends at floor((k + 1) 2752 / 132), a multiple
     * of the 32 chunks a tile for k = 19, 42, 65, 85, 108, 131 only (416, 896, 1376, 1792, 2272, 2752),
     * and each of those tiles also holds the end of the range before: none in whole shares */
    o.tile_align = 1;
    CHECK(dak_gemm_plan_make(11008, 64, 4096, 0, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.hbm.ctas == 132 && p.hbm.items == 2752 && p.hbm.rs_tiles == 0);
}

/* 256 x 128 tiles (opts.bm 256) */
static void test_plan_bm256(void)
{
    dak_gemm_plan p;
    dak_gemm_opts o;
    cm_err e;
    split_opts_default(&o);
    o.bm = 256;
    /* 7168^2, N = 128, r = 0: 28 tiles of 256 x 128; slots of 4 x 8 KiB of A + 128 x 128 B of B = 48 KiB at
     * kstep 1 (kstep 2: 96 KiB, 2 slots < 4), 4 fit in 232448 - 1536 B; tile-aligned on 112 CTAs (28
     * divides 112): 4 a tile, in whole shares, so all 28 by reduce-scatter; partials 256 x 128 fp32 */
    CHECK(dak_gemm_plan_make(7168, 128, 7168, 0, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.bm == 256 && p.bn == 128 && p.kstep == 1 && p.hbm_stages == 4);
    CHECK(p.smem_bytes == 1536u + 4u * 49152u);
    CHECK(p.hbm.mtiles == 28 && p.hbm.ctas == 112 && p.hbm.rs_tiles == 28);
    CHECK(p.ws_bytes == 28ull * p.hbm.ksplit * 256 * 128 * 4);
    /* fewer than four HBM tile rows: 128 */
    CHECK(dak_gemm_plan_make(192, 128, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bm == 128);
    /* refused: N <= 64, bn 256, a cluster, wgmma 0, beside a tiled host tier */
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "bm 256"));
    o.bn = 256;
    CHECK(dak_gemm_plan_make(7168, 256, 7168, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "bm 256"));
    o.bn = 0, o.cluster = 2;
    CHECK(dak_gemm_plan_make(7168, 256, 7168, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "cluster 1"));
    o.cluster = 1, o.wgmma = 0;
    CHECK(dak_gemm_plan_make(7168, 256, 7168, 0, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "wgmma"));
    o.wgmma = 2, o.panel = 0;
    CHECK(dak_gemm_plan_make(7168, 128, 7168, 128, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "panel"));
    /* with the panel path (auto: two 64-column tiles) the host rows leave the tiled kernel */
    o.panel = 2;
    CHECK(dak_gemm_plan_make(7168, 128, 7168, 128, &o, 132, SMEM, &p, &e) == 0 && p.panel.on && p.bm == 256 &&
          p.hbm.mtiles == 28); /* 110 HBM tile rows: 27 whole 256-row tiles and one of 2 boxes */
    /* auto: 256 for 64 < N <= 128 where it is allowed, else 128 (never refused) */
    split_opts_default(&o);
    static const uint32_t an[5] = {64, 65, 100, 128, 129};
    static const uint32_t abm[5] = {128, 256, 256, 256, 128};
    for (int i = 0; i < 5; i++)
        CHECK(dak_gemm_plan_make(7168, an[i], 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bm == abm[i]);
    o.panel = 0; /* a tiled host tier beside it */
    CHECK(dak_gemm_plan_make(7168, 128, 7168, 128, &o, 132, SMEM, &p, &e) == 0 && p.bm == 128 && p.host.ctas > 0);
    o.panel = 2, o.cluster = 2;
    CHECK(dak_gemm_plan_make(7168, 128, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bm == 128 && p.cluster == 2);
    o.cluster = 1, o.bn = 64;
    CHECK(dak_gemm_plan_make(7168, 128, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bm == 128 && p.bn == 64);
    o.bn = 0, o.wgmma = 0;
    CHECK(dak_gemm_plan_make(7168, 128, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bm == 128 && !p.wgmma);
}

/* The plan names the tiled kernel's instantiation (dak_split_kernel), by the rules of gemm.h: the wide wgmma tiles
 * first (256-row, then 256- and 128-column), then dynamic units, then the offsets consumers at N 9..32 (on 128-row
 * tiles k_split_nn2, where 11008 x 4096 takes them at N <= 16) and at N <= 8 (k_split_n8, both heights), else
 * k_split; and the names profilers show. */
static void test_plan_kernel(void)
{
    cm_err e;
    dak_gemm_opts o;
    dak_gemm_plan p;
    split_opts_default(&o);
    CHECK(dak_gemm_plan_make(7168, 1, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_N8);
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_N8);
    CHECK(dak_gemm_plan_make(7168, 9, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bm == 64 && p.kernel == DAK_SPLIT_NN);
    CHECK(dak_gemm_plan_make(7168, 32, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_NN);
    CHECK(dak_gemm_plan_make(11008, 16, 4096, 0, &o, 132, SMEM, &p, &e) == 0 && p.bm == 128 &&
          p.kernel == DAK_SPLIT_NN2);
    CHECK(dak_gemm_plan_make(11008, 8, 4096, 0, &o, 132, SMEM, &p, &e) == 0 && p.bm == 128 && p.kernel == DAK_SPLIT_N8);
    CHECK(dak_gemm_plan_make(11008, 24, 4096, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_NN2);
    CHECK(dak_gemm_plan_make(7168, 24, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_NN);
    CHECK(dak_gemm_plan_make(7168, 33, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT);
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT);
    CHECK(dak_gemm_plan_make(7168, 256, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn == 256 &&
          p.kernel == DAK_SPLIT_N256);
    o.bn = 128;
    CHECK(dak_gemm_plan_make(7168, 256, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn == 128 &&
          p.kernel == DAK_SPLIT_N128);
    o.bn = 0, o.bm = 256;
    CHECK(dak_gemm_plan_make(7168, 128, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bm == 256 &&
          p.kernel == DAK_SPLIT_M256);
    o.bm = 0, o.dyn = 1;
    CHECK(dak_gemm_plan_make(7168, 16, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.dyn_units > 0 &&
          p.kernel == DAK_SPLIT_DYN);
    o.dyn = 0, o.diag_b_nmajor = 1, o.wgmma = 0; /* the offsets consumers need B as [block][n][64] */
    CHECK(dak_gemm_plan_make(7168, 16, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT);
    CHECK(dak_gemm_plan_make(7168, 4, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT);
    CHECK(strcmp(dak_split_kernel_name(DAK_SPLIT), "k_split") == 0);
    CHECK(strcmp(dak_split_kernel_name(DAK_SPLIT_N8), "k_split_n8") == 0);
    CHECK(strcmp(dak_split_kernel_name(DAK_SPLIT_NN2), "k_split_nn2") == 0);
    CHECK(strcmp(dak_split_kernel_name(DAK_SPLIT_M256), "k_split_m256") == 0);
    CHECK(strcmp(dak_split_kernel_name(DAK_SPLIT_KERNELS), "?") == 0);
}

/* k_whole_sw (opts.whole_swap 2 with whole 1): R rows a CTA, the multiple of 8 at or above M / SMs (worked out here),
 * ceil(M / R) CTAs, kstep 4 / 2 / 1 by R (<= 32, <= 64, more), the deepest ring that fits beside 8 KiB past it, the
 * window as many stages as hold 64 KiB of A; not where R > 256, a tile height or a cluster is asked, or host rows;
 * whole_swap 4 refused. */
static void test_plan_swap(void)
{
    cm_err e;
    dak_gemm_opts o;
    dak_gemm_plan p;
    dak_gemm_opts_default(&o);
    CHECK(o.whole_swap == 0);
    o.whole = 1, o.whole_swap = 2;
    static const uint32_t mk[7][4] = {/* M, K, R, kstep */
                                      {4096, 4096, 32, 4},  {11008, 4096, 88, 1}, {12288, 4096, 96, 1},
                                      {22016, 4096, 168, 1}, {7168, 7168, 56, 2}, {1088, 1024, 16, 4},
                                      {4096, 11008, 32, 4}};
    for (int i = 0; i < 7; i++)
        for (uint32_t N = 1; N <= 64; N += 7) {
            const uint32_t M = mk[i][0], K = mk[i][1], R = (M / 8 + 131) / 132 * 8, rk = (N + 7) / 8 * 8;
            const uint32_t stage = mk[i][3] * (R + rk) * 128, a = mk[i][3] * R * 128;
            const int ok = dak_gemm_plan_make(M, N, K, 0, &o, 132, SMEM, &p, &e) == 0;
            CHECK(ok && R == mk[i][2] && p.kernel == DAK_SPLIT_WHOLE_SW &&
                  strcmp(dak_split_kernel_name(p.kernel), "k_whole_sw") == 0 && p.bm == R &&
                  p.hbm.ctas == (M + R - 1) / R && p.kstep == mk[i][3] && p.bn_box == rk && p.cluster == 1 &&
                  p.ws_bytes == 0 && p.hbm.ksplit == 1);
            if (!ok) continue;
            CHECK(p.hbm_stages >= 4 && p.smem_bytes == 1536 + 8192 + p.hbm_stages * stage && p.smem_bytes <= SMEM &&
                  (p.hbm_stages == 24 || p.smem_bytes + stage > SMEM));
            CHECK(p.hbm.window == ((65536 + a - 1) / a < p.hbm_stages ? (65536 + a - 1) / a : p.hbm_stages));
        }
    /* asked: kstep 2, a 5-stage ring, a window of 2 */
    o.kstep = 2, o.whole_stages = 5, o.whole_window = 2;
    CHECK(dak_gemm_plan_make(4096, 8, 4096, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_WHOLE_SW &&
          p.kstep == 2 && p.hbm_stages == 5 && p.hbm.window == 2 && p.smem_bytes == 1536 + 8192 + 5 * 2 * 40 * 128);
    o.kstep = 0, o.whole_stages = 0, o.whole_window = 0;
    /* a tile height asked is R (64 on 7168^2: 112 CTAs; 128 on 11008 x 4096: 86) */
    o.bm = 64;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_WHOLE_SW &&
          p.bm == 64 && p.hbm.ctas == 112 && p.kstep == 2);
    o.bm = 128;
    CHECK(dak_gemm_plan_make(11008, 8, 4096, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_WHOLE_SW &&
          p.bm == 128 && p.hbm.ctas == 86 && p.kstep == 1);
    /* not: R > 256 (36864 rows: 280), more CTAs than SMs (bm 64 on 11008 rows: 172), a cluster asked, host rows;
     * never (1), auto (0, as 1 for now) */
    o.bm = 64;
    CHECK(dak_gemm_plan_make(11008, 8, 4096, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel != DAK_SPLIT_WHOLE_SW);
    o.bm = 0;
    CHECK(dak_gemm_plan_make(36864, 8, 4096, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel != DAK_SPLIT_WHOLE_SW);
    o.whole_cluster = 4;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_WHOLE &&
          p.cluster == 4);
    o.whole_cluster = 0;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 64, &o, 132, SMEM, &p, &e) == 0 && p.kernel != DAK_SPLIT_WHOLE_SW);
    o.whole_swap = 1;
    CHECK(dak_gemm_plan_make(4096, 8, 4096, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_WHOLE);
    o.whole_swap = 4;
    CHECK(dak_gemm_plan_make(4096, 8, 4096, 0, &o, 132, SMEM, &p, &e) == -1 && strstr(e.msg, "whole_swap 4"));
}

/* A packed in groups of R rows (opts.a_group_rows; dak_gemm_a_group_rows): k_whole_sw with that R at the defaults
 * (whole 2, whole_swap 0), or refused with a message where it cannot read such an A; 0 and 64 are the tile layout.
 * The rows the GEMM asks for (132 SMs, N 1..64): R = the multiple of 8 at or above M / 132 (worked out here) where
 * it exceeds 64 and is not a multiple of 64 (11008 x 4096: 88, 12288: 96, 22016: 168; not 16384: 128, whose 64-row
 * tiles split evenly), none at R <= 64 (4096^2: 32, 7168^2: 56) unless whole_swap is 2, or 3 where the tiles' plan is
 * not k_whole and R >= N; none with whole_swap 1, whole 0, N > 64, a bm asked with whole_swap 0, or where k_whole_sw
 * does not apply (36864 rows: R 280). */
static void test_plan_groups(void)
{
    cm_err e;
    dak_gemm_opts o;
    dak_gemm_plan p;
    dak_gemm_opts_default(&o);
    CHECK(o.a_group_rows == 0);
    static const uint32_t mk[6][4] = {/* M, K, R, R asked at the defaults */
                                      {11008, 4096, 88, 88}, {12288, 4096, 96, 96}, {16384, 4096, 128, 0},
                                      {22016, 4096, 168, 168}, {4096, 4096, 32, 0}, {7168, 7168, 56, 0}};
    for (int i = 0; i < 6; i++) {
        const uint32_t M = mk[i][0], K = mk[i][1], R = (M / 8 + 131) / 132 * 8;
        CHECK(R == mk[i][2]);
        for (uint32_t N = 1; N <= 64; N += 9) {
            CHECK(dak_gemm_a_group_rows(M, K, N, &o, 132, SMEM) == mk[i][3]);
            /* the plan over A in R-row groups: k_whole_sw, R rows a CTA */
            o.a_group_rows = R;
            const int ok = dak_gemm_plan_make(M, N, K, 0, &o, 132, SMEM, &p, &e) == 0;
            CHECK(ok && p.kernel == DAK_SPLIT_WHOLE_SW && p.bm == R && p.hbm.ctas == (M + R - 1) / R && p.cluster == 1);
            o.a_group_rows = 0;
        }
        /* whole_swap 2 asks for groups at any R; 1 at none */
        o.whole_swap = 2;
        CHECK(dak_gemm_a_group_rows(M, K, 8, &o, 132, SMEM) == R);
        o.whole_swap = 1;
        CHECK(dak_gemm_a_group_rows(M, K, 8, &o, 132, SMEM) == 0);
        o.whole_swap = 0;
    }
    /* whole_swap 3: A grouped where the tiles' plan is not k_whole and R >= N (the plan over the tiles as 0): 4096 x
     * 11008 (64 tiles, K past the narrow band: the split) at N 8 / 32, not at N 33 / 64; 16384 x 4096 (R 128: the
     * split over the tiles); not 7168^2 (112 whole tiles: k_whole) nor 4096^2 at N 8 (k_whole's narrow band) */
    o.whole_swap = 3;
    static const uint32_t w3[7][4] = {/* M, K, N, R asked */
                                      {4096, 11008, 8, 32}, {4096, 11008, 32, 32}, {4096, 11008, 33, 0},
                                      {4096, 11008, 64, 0}, {16384, 4096, 8, 128}, {7168, 7168, 8, 0},
                                      {4096, 4096, 8, 0}};
    for (int i = 0; i < 7; i++) {
        const uint32_t M = w3[i][0], K = w3[i][1], N = w3[i][2];
        CHECK(dak_gemm_a_group_rows(M, K, N, &o, 132, SMEM) == w3[i][3]);
        CHECK(dak_gemm_plan_make(M, N, K, 0, &o, 132, SMEM, &p, &e) == 0);
        CHECK(M == 7168 || (M == 4096 && K == 4096) ? p.kernel == DAK_SPLIT_WHOLE : p.kernel < DAK_SPLIT_WHOLE);
        if (!w3[i][3]) continue;
        o.a_group_rows = w3[i][3];
        CHECK(dak_gemm_plan_make(M, N, K, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_WHOLE_SW &&
              p.bm == w3[i][3]);
        o.a_group_rows = 0;
    }
    o.whole_swap = 4;
    CHECK(dak_gemm_plan_make(4096, 8, 4096, 0, &o, 132, SMEM, &p, &e) == -1 && strstr(e.msg, "whole_swap 4"));
    o.whole_swap = 0;
    /* none: N > 64, whole 0, a bm asked (whole_swap 0), R 280, R 64 (the tiles: 8448 rows on 132 SMs) */
    CHECK(dak_gemm_a_group_rows(11008, 4096, 65, &o, 132, SMEM) == 0);
    o.whole = 0;
    CHECK(dak_gemm_a_group_rows(11008, 4096, 8, &o, 132, SMEM) == 0);
    o.whole = 2, o.bm = 128;
    CHECK(dak_gemm_a_group_rows(11008, 4096, 8, &o, 132, SMEM) == 0);
    o.bm = 0;
    CHECK(dak_gemm_a_group_rows(36864, 4096, 8, &o, 132, SMEM) == 0);
    o.whole_swap = 2;
    CHECK(dak_gemm_a_group_rows(8448, 4096, 8, &o, 132, SMEM) == 0);
    o.whole_swap = 0;
    /* 64 is the tile layout: the plan as without */
    o.a_group_rows = 64;
    CHECK(dak_gemm_plan_make(11008, 8, 4096, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel != DAK_SPLIT_WHOLE_SW);
    /* refused, with the reason: not a multiple of 8, above 256, host rows, N > 64, whole 0, whole_swap 1, a cluster,
     * another bm, a_tma2d, dyn; R 96 on 4096 rows (43 CTAs fine) vs R 16 on 4096 rows (256 CTAs outnumber 132 SMs) */
    o.a_group_rows = 84;
    CHECK(dak_gemm_plan_make(11008, 8, 4096, 0, &o, 132, SMEM, &p, &e) == -1 && strstr(e.msg, "groups of 84 rows") &&
          strstr(e.msg, "multiple of 8"));
    o.a_group_rows = 264;
    CHECK(dak_gemm_plan_make(11008, 8, 4096, 0, &o, 132, SMEM, &p, &e) == -1 && strstr(e.msg, "up to 256"));
    o.a_group_rows = 88;
    CHECK(dak_gemm_plan_make(11008, 8, 4096, 64, &o, 132, SMEM, &p, &e) == -1 && strstr(e.msg, "64 on the host"));
    CHECK(dak_gemm_plan_make(11008, 65, 4096, 0, &o, 132, SMEM, &p, &e) == -1 && strstr(e.msg, "N <= 64 (65)"));
    static const char *const why[6] = {"whole 0", "whole_swap 1", "cluster", "bm 128", "a_tma2d", "dyn"};
    for (int w = 0; w < 6; w++) {
        dak_gemm_opts q = o;
        if (w == 0) q.whole = 0;
        if (w == 1) q.whole_swap = 1;
        if (w == 2) q.whole_cluster = 4;
        if (w == 3) q.bm = 128;
        if (w == 4) q.a_tma2d = 1;
        if (w == 5) q.dyn = 1;
        const int rc = dak_gemm_plan_make(11008, 8, 4096, 0, &q, 132, SMEM, &p, &e);
        CHECK(rc == -1 && strstr(e.msg, "read by k_whole_sw only"));
        if (rc != -1) fprintf(stderr, "  (groups with %s planned)\n", why[w]);
    }
    o.a_group_rows = 96;
    CHECK(dak_gemm_plan_make(4096, 8, 4096, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_WHOLE_SW &&
          p.bm == 96 && p.hbm.ctas == 43);
    o.a_group_rows = 16;
    CHECK(dak_gemm_plan_make(4096, 8, 4096, 0, &o, 132, SMEM, &p, &e) == -1 && strstr(e.msg, "outnumber the SMs"));
}

/* Whole-K tiles (opts.whole, k_whole): auto by default; where they apply, one CTA a tile of 64 rows (128 where 64-row
 * tiles outnumber the SMs), no split-K, B's stage rows (N rounded up to 8) in whole 8-row slices over at most the
 * cluster's members and no member's slice wholly past them, the deepest ring of two-block stages that fits (at most
 * 24), the auto cluster 4 where it divides the tiles and K > 8192, N >= 41, or N >= 25 where the tiles fill 80 % of
 * the SMs, else 1; the split plan elsewhere; bad
 * values refused. */
static void test_plan_whole(void)
{
    cm_err e;
    dak_gemm_opts o;
    dak_gemm_plan p;
    dak_gemm_opts_default(&o);
    /* auto (the default): where 64-row tiles fill 80-100 % of the SMs (7168: 112 of 132, 8192: 128; not 11008's 172,
     * nor 112 tiles on 144 SMs at K 7168: 78 %), or 45-80 % of them at N <= 32 and K <= 4096 (4096^2: 64 of 132,
     * not of 144: 44 %; not at N 33, nor at K 11008) */
    CHECK(o.whole == 2 && o.whole_cluster == 0);
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_WHOLE);
    CHECK(dak_gemm_plan_make(8192, 8, 8192, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_WHOLE);
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 0, &o, 144, SMEM, &p, &e) == 0 && p.kernel != DAK_SPLIT_WHOLE);
    for (uint32_t N = 1; N <= 32; N++)
        CHECK(dak_gemm_plan_make(4096, N, 4096, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_WHOLE &&
              p.hbm.ctas == 64 && p.cluster == 1);
    CHECK(dak_gemm_plan_make(4096, 33, 4096, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel != DAK_SPLIT_WHOLE);
    CHECK(dak_gemm_plan_make(4096, 8, 4096, 0, &o, 144, SMEM, &p, &e) == 0 && p.kernel != DAK_SPLIT_WHOLE);
    CHECK(dak_gemm_plan_make(4096, 8, 11008, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel != DAK_SPLIT_WHOLE);
    CHECK(dak_gemm_plan_make(11008, 24, 4096, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel != DAK_SPLIT_WHOLE);
    /* the auto cluster: 4 at K > 8192 (7168 x 28672) at every N, at K <= 8192 from N 25 where the tiles fill 80 % of
     * the SMs (112 here); K > 8192 at N > 8 only with clusters of 4 (without them, the split) */
    static const uint32_t kn[9][3] = {/* K, N, cluster */
                                      {28672, 1, 4}, {28672, 8, 4}, {28672, 9, 4}, {28672, 64, 4}, {7168, 24, 1},
                                      {7168, 25, 4}, {7168, 41, 4}, {8192, 64, 4}, {8192, 8, 1}};
    for (int i = 0; i < 9; i++)
        CHECK(dak_gemm_plan_make(7168, kn[i][1], kn[i][0], 0, &o, 132, SMEM, &p, &e) == 0 &&
              p.kernel == DAK_SPLIT_WHOLE && p.cluster == kn[i][2] && p.whole_rows * p.whole_loaders >= kn[i][1]);
    o.whole_cluster = 1;
    CHECK(dak_gemm_plan_make(7168, 8, 28672, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_WHOLE &&
          p.cluster == 1);
    CHECK(dak_gemm_plan_make(7168, 9, 28672, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel != DAK_SPLIT_WHOLE);
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_WHOLE &&
          p.cluster == 1);
    o.whole_cluster = 0;
    o.whole = 0;
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel != DAK_SPLIT_WHOLE &&
          p.whole_rows == 0);
    o.whole = 1;
    static const uint32_t shp[4][4] = {/* M, K, rows a tile, cluster from N 41 (25 for 7168^2's 112 tiles) */
                                       {7168, 7168, 64, 4},
                                       {11008, 4096, 128, 1},
                                       {1088, 1024, 64, 1},
                                       {8640, 1024, 128, 4}};
    for (int si = 0; si < 4; si++)
        for (uint32_t N = 1; N <= 64; N++) {
            const uint32_t M = shp[si][0], K = shp[si][1], bm = shp[si][2], tiles = (M / 64 + bm / 64 - 1) / (bm / 64);
            o.pdl = N % 2;
            const int ok = dak_gemm_plan_make(M, N, K, 0, &o, 132, SMEM, &p, &e) == 0;
            CHECK(ok && p.kernel == DAK_SPLIT_WHOLE && strcmp(dak_split_kernel_name(p.kernel), "k_whole") == 0);
            if (!ok) continue;
            /* stages of 2 blocks (K / 64 is even for these shapes, and four of them fit) */
            const uint32_t n8 = (N + 7) / 8 * 8, stage = 2 * (bm * 128 + p.bn_box * 128);
            CHECK(p.bm == bm && p.hbm.ctas == tiles && p.host.ctas == 0 && p.hbm.ksplit == 1 && p.kstep == 2 &&
                  p.kchunks == K / 128 && p.ws_bytes == 0 && p.cluster == (N >= (si ? 41 : 25) ? shp[si][3] : 1) &&
                  tiles % p.cluster == 0);
            CHECK(p.whole_rows % 8 == 0 && p.bn_box == p.whole_rows * p.whole_loaders && p.whole_loaders <= p.cluster &&
                  p.bn_box >= n8 && (p.whole_loaders - 1) * p.whole_rows < n8 && p.bn_box <= 64);
            CHECK(p.hbm_stages >= 4 && p.hbm_stages <= 24 && p.smem_bytes <= SMEM &&
                  p.smem_bytes >= p.hbm_stages * stage &&
                  (p.hbm_stages == 24 || p.smem_bytes + stage > SMEM)); /* the deepest ring that fits */
            CHECK(p.hbm_pre == (o.pdl ? p.hbm_stages : 0));
            CHECK(p.hbm.window == 4); /* auto: 4 stages of A in flight after the wait (the ring is deeper here) */
        }
    o.pdl = 1, o.pdl_pre = 3;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_WHOLE && p.hbm_pre == 3);
    o.pdl_pre = DAK_GEMM_PDL_PRE_NONE;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_WHOLE && p.hbm_pre == 0);
    o.pdl_pre = 0;
    o.pdl = 0;
    /* the split plan where whole-K tiles do not apply: host rows, N > 64, more tiles than SMs, a diagnostic of the
     * split kernel, dyn */
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 64, &o, 132, SMEM, &p, &e) == 0 && p.kernel != DAK_SPLIT_WHOLE);
    CHECK(dak_gemm_plan_make(7168, 65, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel != DAK_SPLIT_WHOLE);
    CHECK(dak_gemm_plan_make(28672, 8, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel != DAK_SPLIT_WHOLE);
    o.diag_nomath = 1;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel != DAK_SPLIT_WHOLE);
    o.diag_nomath = 0, o.dyn = 1;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel != DAK_SPLIT_WHOLE);
    o.dyn = 0;
    /* asked for: 128-row tiles on 7168^2 (56 of them), a cluster, the ring's depth */
    o.bm = 128;
    CHECK(dak_gemm_plan_make(7168, 40, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_WHOLE &&
          p.bm == 128 && p.hbm.ctas == 56 && p.cluster == 1);
    o.bm = 0, o.whole_cluster = 2;
    CHECK(dak_gemm_plan_make(7168, 40, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.cluster == 2 && p.whole_rows == 24 &&
          p.whole_loaders == 2);
    /* 40 rows over 4 members in whole 8-row slices: slices of 16 rows, 3 members fetch (48 rows, 8 zero-filled) */
    o.whole_cluster = 4, o.whole_stages = 4, o.kstep = 1;
    CHECK(dak_gemm_plan_make(7168, 40, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.hbm_stages == 4 &&
          p.whole_rows == 16 && p.whole_loaders == 3 && p.smem_bytes == 1536 + 4 * (8192 + 48 * 128));
    o.whole_cluster = 0, o.kstep = 0; /* (auto: no cluster below N 25) */
    CHECK(dak_gemm_plan_make(7168, 24, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.cluster == 1 && p.whole_rows == 24 &&
          p.whole_loaders == 1 && p.kstep == 2);
    /* stages of kstep blocks (asked for): 7168^2 N 64, 64-row tiles, cluster 4 (4 slices of 16 rows): kstep 4 is 64 KiB a
     * stage, three fit (enough when asked); 128-row tiles at kstep 4 (96 KiB, two) fall back to the split */
    o.whole_stages = 0, o.kstep = 4, o.whole_cluster = 4;
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_WHOLE &&
          p.kstep == 4 && p.kchunks == 28 && p.hbm_stages == 3 && p.smem_bytes == 1536 + 3 * 4 * (8192 + 64 * 128));
    o.whole_cluster = 0;
    CHECK(dak_gemm_plan_make(11008, 64, 4096, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel != DAK_SPLIT_WHOLE);
    o.kstep = 0;
    o.whole_stages = 24; /* 24 stages of 2 blocks (32 KiB at N 64) do not fit */
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &p, &e) == -1 && strstr(e.msg, "do not fit"));
    o.whole_stages = 0;
    /* the split kernels' ring (opts.stages, which the engine caps at 4) leaves k_whole's as deep as fits: 7168^2 N 8,
     * stages of 2 x (8 KiB of A + 8 rows x 128 B of B) = 18 KiB, (232448 - 1536) / 18432 = 12 */
    o.stages = 4;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.kernel == DAK_SPLIT_WHOLE &&
          p.hbm_stages == 12);
    o.stages = 0;
    /* refused */
    o.whole_cluster = 4;
    CHECK(dak_gemm_plan_make(11008, 32, 4096, 0, &o, 132, SMEM, &p, &e) == -1 && strstr(e.msg, "does not divide"));
    o.whole_cluster = 3;
    CHECK(dak_gemm_plan_make(7168, 32, 7168, 0, &o, 132, SMEM, &p, &e) == -1 && strstr(e.msg, "whole_cluster 3"));
    /* the window asked for, and one at least the ring (the ring: no window) */
    o.whole_cluster = 0, o.whole_window = 7;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.hbm.window == 7 && p.hbm_stages == 12);
    o.whole_window = 24;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.hbm.window == 12);
    o.whole_window = 25;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 0, &o, 132, SMEM, &p, &e) == -1 && strstr(e.msg, "whole_window 25"));
    o.whole_window = 0;
    o.whole_cluster = 0, o.whole_stages = 25;
    CHECK(dak_gemm_plan_make(7168, 32, 7168, 0, &o, 132, SMEM, &p, &e) == -1 && strstr(e.msg, "whole_stages 25"));
    o.whole_stages = 0, o.whole = 3;
    CHECK(dak_gemm_plan_make(7168, 32, 7168, 0, &o, 132, SMEM, &p, &e) == -1 && strstr(e.msg, "whole 3"));
}

int main(void)
{
    test_ratio();
    test_plan_decode();
    test_plan_wave();
    test_plan_multicast();
    test_plan_errors();
    test_plan_panel();
    test_plan_wgmma();
    test_plan_bm();
    test_plan_bn();
    test_plan_tile_align();
    test_ranges();
    test_plan_rs();
    test_plan_bm256();
    test_plan_kernel();
    test_plan_whole();
    test_plan_swap();
    test_plan_groups();
    test_wgmma_operands();
    test_wgmma_fragments();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
