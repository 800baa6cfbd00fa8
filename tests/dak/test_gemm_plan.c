/* CPU test (CI): tier split from a ratio, split-GEMM launch planning (ring
 * depth, CTAs per tier, K split, wave alignment, cluster size) and the
 * rejection of bad shapes and options.  Expected values are worked out by hand
 * in the comments. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dak/gemm.h"
#include "dak/tiered.h"

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
    dak_gemm_opts_default(&o);
    /* N = 1: B box 16 rows, slot 8192 + 2048 = 10240 B, (232448-1536)/10240 = 22 -> capped 16 */
    CHECK(dak_gemm_plan_make(7168, 1, 7168, 64, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.bn_box == 16 && p.stages == 16 && p.ntiles == 1 && p.cluster == 1 && p.kchunks == 112);
    CHECK(p.host.mtiles == 1 && p.hbm.mtiles == 111);
    CHECK(p.host.ctas >= 1 && p.host.ctas <= 16);
    CHECK(p.hbm.ctas >= 1 && p.hbm.ctas <= 116);
    CHECK(p.host.ctas + p.hbm.ctas <= 132);
    /* every item is assigned: items = mtiles * ksplit for one column group */
    CHECK(p.host.items == p.host.mtiles * p.host.ksplit);
    CHECK(p.hbm.items == p.hbm.mtiles * p.hbm.ksplit);
    CHECK(p.host.waves * p.host.ctas >= p.host.items);
    CHECK(p.hbm.waves * p.hbm.ctas >= p.hbm.items);
    /* one host tile row of 112 chunks over <= 16 SMs: split K (e.g. 16 x 7 chunks) */
    CHECK(p.host.ksplit > 1);
    CHECK(p.host.balance > 0.9 && p.hbm.balance > 0.9);
    CHECK(p.host.window == 16);
    /* host bytes without amplification: 64 rows x 7168 x 2 */
    CHECK(dak_gemm_plan_host_bytes(&p) == 64ull * 7168 * 2);

    /* N = 64: B box 64 rows, slot 16384 B -> (232448-1536)/16384 = 14 stages */
    CHECK(dak_gemm_plan_make(7168, 64, 7168, 0, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.bn_box == 64 && p.stages == 14);
    CHECK(p.host.ctas == 0 && p.hbm.mtiles == 112 && p.hbm.ctas <= 132);
    /* N = 20 rounds the B box up to 32 rows */
    CHECK(dak_gemm_plan_make(7168, 20, 7168, 0, &o, 132, SMEM, &p, &e) == 0 && p.bn_box == 32);

    /* all on the host: only host CTAs */
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 7168, &o, 132, SMEM, &p, &e) == 0);
    CHECK(p.hbm.ctas == 0 && p.host.ctas > 0 && p.host.ctas <= 16 && p.host.mtiles == 112);

    /* congestion window */
    o.window = 4;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 640, &o, 132, SMEM, &p, &e) == 0 && p.host.window == 4 &&
          p.hbm.window == p.stages);
    o.window = 40;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 640, &o, 132, SMEM, &p, &e) != 0 && strstr(e.msg, "window"));
    o.window = 0;

    /* bf16 output: no split K */
    o.out_bf16 = 1;
    CHECK(dak_gemm_plan_make(7168, 8, 7168, 640, &o, 132, SMEM, &p, &e) == 0 && p.host.ksplit == 1 &&
          p.hbm.ksplit == 1 && p.ws_bytes == 0);
}

static void test_plan_wave(void)
{
    cm_err e;
    dak_gemm_opts o;
    dak_gemm_plan a, b;
    dak_gemm_opts_default(&o);
    /* 11008 rows = 172 tile rows on 132 SMs: without alignment 2 waves for 40 SMs */
    o.wave_align = 0;
    CHECK(dak_gemm_plan_make(11008, 8, 4096, 0, &o, 132, SMEM, &a, &e) == 0);
    CHECK(a.hbm.ctas == 132 && a.hbm.ksplit == 1 && a.hbm.waves == 2);
    /* balance = 172 / (132 * 2) = 0.6515 */
    CHECK(fabs(a.hbm.balance - 172.0 / 264.0) < 1e-9);
    o.wave_align = 1;
    CHECK(dak_gemm_plan_make(11008, 8, 4096, 0, &o, 132, SMEM, &b, &e) == 0);
    CHECK(b.hbm.balance > 0.9 && b.hbm.balance > a.hbm.balance);
}

static void test_plan_multicast(void)
{
    cm_err e;
    dak_gemm_opts o;
    dak_gemm_plan p;
    dak_gemm_opts_default(&o);
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
    dak_gemm_opts_default(&o);
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
}

int main(void)
{
    test_ratio();
    test_plan_decode();
    test_plan_wave();
    test_plan_multicast();
    test_plan_errors();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
