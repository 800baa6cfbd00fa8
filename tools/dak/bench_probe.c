/* dak bench gemm's sections before any shape, over one pair of probe buffers (512 MiB mapped host
 * memory, 2 GiB HBM): the bandwidth probes B_g and B_h that the bound uses, the congestion sweep
 * (Fig. 7: host SMs x window beside 100 HBM SMs), the diag probes (HBM: copy size x assignment, and SMs; copy size x
 * who waits on the ring's barriers; the host link: copy size x SMs, and TMA, copy engine or both) and smrate
 * (bench_smrate.c). */
#include <string.h>

#include "bench_sections.h"
#include "common/bench.h"

/* the probe buffers as the sections read them */
typedef struct {
    const void *hbuf, *hbuf_dev, *gbuf; /* mapped host memory (host and device pointers), HBM */
    size_t hprobe, gprobe;       /* their sizes */
} probe_bufs;

/* ---- congestion sweep (Fig. 7): host SMs x window with 100 HBM SMs ---- */
static void probe_congestion(const bench_run *bench, const probe_bufs *p)
{
    cm_err err;
    const uint32_t sms = bench->sms;
    json_w *w = bench->w;
    static const uint32_t hs[] = {0, 1, 2, 4, 8, 16, 32};
    static const uint32_t ws[] = {1, 2, 4, 8, 16, 24};
    uint32_t ghbm = sms >= 100 + 32 ? 100 : sms - 32;
    printf("\n# congestion: %u SMs read HBM while H SMs read host memory with W 8 KiB copies in flight each\n", ghbm);
    printf("%6s %4s %12s %12s %12s\n", "hostSM", "W", "host GB/s", "HBM GB/s", "sum GB/s");
    json_key(w, "congestion");
    json_arr_begin(w);
    for (size_t a = 0; a < sizeof hs / sizeof hs[0]; a++)
        for (size_t b = 0; b < sizeof ws / sizeof ws[0]; b++) {
            if (hs[a] == 0 && b > 0) continue;
            double h, g;
            DK(dak_probe_bw(bench->ctx, p->hbuf_dev, p->hprobe, hs[a], ws[b], p->gbuf, p->gprobe, ghbm, &h, &g,
                            &err));
            printf("%6u %4u %12.1f %12.1f %12.1f\n", hs[a], hs[a] ? ws[b] : 0, h, g, h + g);
            fflush(stdout);
            json_obj_begin(w);
            json_kv_u64(w, "host_sms", hs[a]);
            json_kv_u64(w, "window", hs[a] ? ws[b] : 0);
            json_kv_u64(w, "hbm_sms", ghbm);
            json_kv_f64(w, "host_GBs", h);
            json_kv_f64(w, "hbm_GBs", g);
            json_obj_end(w);
        }
    json_arr_end(w);
}

/* ---- diagnostics: HBM probe copy size x assignment, and against the SMs reading ---- */

/* The read probe's GB/s over `src` (HBM, or mapped host memory through its device pointer), median of 3 */
static double probe_read_median(const bench_run *bench, const void *src, size_t bytes, uint32_t ctas, uint32_t chunk,
                                int contig)
{
    cm_err err;
    double v[3];
    for (int i = 0; i < 3; i++) DK(dak_probe_hbm(bench->ctx, src, bytes, ctas, chunk, contig, &v[i], &err));
    return bench_median(v, 3);
}

/* What a ring slot costs beyond its bytes: the contiguous probe with the split kernel's hand-over (consumer warps on
 * the full barriers, the producer on the empty ones; no math), by copy size.  The seventeenth session found the split
 * kernel's copies alone at 8 KiB slots at half the probe's rate (NOTES-dak-kernels.md, "Why a 16 KiB slot costs"). */
static void probe_handover(const bench_run *bench, const probe_bufs *p)
{
    static const uint32_t chs[] = {8192, 16384, 32768};
    static const struct {
        uint32_t cwarps;
        int lane0;
        const char *name;
    } cf[] = {{0, 0, "probe"}, {1, 0, "1 warp"}, {8, 0, "8 warps"}, {8, 1, "8 warps, lane 0"}};
    const uint32_t sms = bench->sms;
    json_w *w = bench->w;
    printf("\n# diag: HBM probe with the ring hand-over, %u SMs, contiguous, 192 KiB of slots each: GB/s by copy size "
           "(rows) and who waits (columns: the producer on the copy; 1 or 8 consumer warps on every lane; 8 on lane 0)\n"
           "%6s",
           sms, "chunk");
    for (size_t k = 0; k < sizeof cf / sizeof cf[0]; k++) printf(" %16s", cf[k].name);
    printf("\n");
    json_key(w, "diag_handover");
    json_arr_begin(w);
    for (size_t a = 0; a < sizeof chs / sizeof chs[0]; a++) {
        printf("%6u", chs[a]);
        for (size_t k = 0; k < sizeof cf / sizeof cf[0]; k++) {
            cm_err err;
            double v[3];
            for (int i = 0; i < 3; i++)
                DK(dak_probe_handover(bench->ctx, p->gbuf, p->gprobe, sms, chs[a], cf[k].cwarps, cf[k].lane0, &v[i],
                                      &err));
            const double m = bench_median(v, 3);
            printf(" %16.1f", m);
            json_obj_begin(w);
            json_kv_u64(w, "chunk", chs[a]);
            json_kv_u64(w, "consumer_warps", cf[k].cwarps);
            json_kv_bool(w, "lane0", cf[k].lane0);
            json_kv_f64(w, "GBs", m);
            json_obj_end(w);
        }
        printf("\n");
    }
    json_arr_end(w);
}

static void probe_diag(const bench_run *bench, const probe_bufs *p)
{
    const uint32_t sms = bench->sms;
    json_w *w = bench->w;
    printf("\n# diag: HBM probe, %u SMs, 192 KiB in flight each: copy size x assignment (GB/s)\n", sms);
    json_key(w, "diag_probe");
    json_arr_begin(w);
    static const uint32_t chs[] = {8192, 16384, 32768};
    for (size_t a = 0; a < 3; a++)
        for (int contig = 0; contig < 2; contig++) {
            const double m = probe_read_median(bench, p->gbuf, p->gprobe, sms, chs[a], contig);
            printf("  chunk %5u %-12s %8.1f\n", chs[a], contig ? "contiguous" : "interleaved", m);
            json_obj_begin(w);
            json_kv_u64(w, "chunk", chs[a]);
            json_kv_bool(w, "contiguous", contig);
            json_kv_f64(w, "GBs", m);
            json_obj_end(w);
        }
    json_arr_end(w);
    /* Does one SM take more of HBM when fewer SMs read (is ~35-40 GB/s an SM a limit of the SM's copies, or its
     * share of HBM)?  The N = 128 GEMMs on 112 SMs stream at that rate with HBM far from its peak. */
    printf("\n# diag: HBM probe against the SMs reading (32 KiB contiguous copies, 192 KiB in flight each): "
           "GB/s in all and an SM\n");
    printf("%6s %10s %10s\n", "SMs", "GB/s", "GB/s/SM");
    json_key(w, "diag_probe_sms");
    json_arr_begin(w);
    static const uint32_t nsm[] = {8, 16, 33, 66, 99, 112, 132};
    for (size_t a = 0; a < sizeof nsm / sizeof nsm[0]; a++) {
        if (nsm[a] > sms) continue;
        const double m = probe_read_median(bench, p->gbuf, p->gprobe, nsm[a], 32768, 1);
        printf("%6u %10.1f %10.2f\n", nsm[a], m, m / nsm[a]);
        json_obj_begin(w);
        json_kv_u64(w, "sms", nsm[a]);
        json_kv_f64(w, "GBs", m);
        json_obj_end(w);
    }
    json_arr_end(w);
    /* The host tier reads contiguous ranges in 32 KiB copies (kstep 4) and reached ~49 GB/s in PDL graphs where the link
     * binds, against B_h's 51.3 from 8 KiB interleaved copies (fourteenth session): copy size x SMs over the link. */
    printf("\n# diag: host-link probe, mapped host memory by bulk copies, contiguous ranges, 192 KiB in flight an SM: GB/s"
           " by SMs (rows) and copy size (columns)\n%6s", "SMs");
    for (size_t a = 0; a < 3; a++) printf(" %9u", chs[a]);
    printf("\n");
    json_key(w, "diag_probe_host");
    json_arr_begin(w);
    static const uint32_t hsm[] = {1, 2, 4, 8, 12, 16};
    for (size_t b = 0; b < sizeof hsm / sizeof hsm[0]; b++) {
        printf("%6u", hsm[b]);
        for (size_t a = 0; a < 3; a++) {
            const double m = probe_read_median(bench, p->hbuf_dev, p->hprobe, hsm[b], chs[a], 1);
            printf(" %9.1f", m);
            json_obj_begin(w);
            json_kv_u64(w, "sms", hsm[b]);
            json_kv_u64(w, "chunk", chs[a]);
            json_kv_f64(w, "GBs", m);
            json_obj_end(w);
        }
        printf("\n");
        fflush(stdout);
    }
    json_arr_end(w);
}

/* ---- diagnostics: the host link read by the SMs (TMA), by the copy engine, and by both at once.
 * Overlap (the prefetch baseline) reads the host at the copy engine's rate, direct access at the
 * SMs'; if both together exceed either alone, a sequence could mix them. ---- */
static void probe_link(const bench_run *bench, const probe_bufs *p)
{
    cm_err err;
    json_w *w = bench->w;
    const size_t ce_bytes = p->hprobe / 2; /* the copy engine takes the first half, the SMs all of it */
    cudaStream_t cs;
    cudaEvent_t e0, e1;
    CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    double r[3][3]; /* [rep][TMA alone, CE alone, both: TMA part] */
    double ce_both[3], ms_both[3], all_both[3];
    for (int i = 0; i < 3; i++) {
        double dummy;
        DK(dak_probe_bw(bench->ctx, p->hbuf_dev, p->hprobe, 16, 8, NULL, 0, 0, &r[i][0], &dummy, &err));
        float ms;
        CK(cudaEventRecord(e0, cs));
        CK(cudaMemcpyAsync((void *)p->gbuf, p->hbuf, ce_bytes, cudaMemcpyHostToDevice, cs));
        CK(cudaEventRecord(e1, cs));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms, e0, e1));
        r[i][1] = ce_bytes / (ms * 1e6);
        /* both: the copy on its own stream, the probe on the legacy one (not ordered with cs);
         * the probe returns after a device synchronize, so the host clock spans both */
        const double h0 = bench_now_s();
        CK(cudaEventRecord(e0, cs));
        CK(cudaMemcpyAsync((void *)p->gbuf, p->hbuf, ce_bytes, cudaMemcpyHostToDevice, cs));
        CK(cudaEventRecord(e1, cs));
        DK(dak_probe_bw(bench->ctx, p->hbuf_dev, p->hprobe, 16, 8, NULL, 0, 0, &r[i][2], &dummy, &err));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms, e0, e1));
        ce_both[i] = ce_bytes / (ms * 1e6), ms_both[i] = ms;
        all_both[i] = (ce_bytes + p->hprobe) / ((bench_now_s() - h0) * 1e9);
    }
    double tma[3], ce[3], tb[3];
    for (int i = 0; i < 3; i++) tma[i] = r[i][0], ce[i] = r[i][1], tb[i] = r[i][2];
    const double mt = bench_median(tma, 3), mc = bench_median(ce, 3), mtb = bench_median(tb, 3),
                 mcb = bench_median(ce_both, 3), mms = bench_median(ms_both, 3), mall = bench_median(all_both, 3);
    printf("\n# diag: host link, GB/s (median of 3): SMs by TMA alone %.1f (16 SMs, window 8), copy engine alone %.1f;\n"
           "#   at once: TMA %.1f over its span, the copy engine %.1f over its %.2f ms; both moved %.1f MB at %.1f\n",
           mt, mc, mtb, mcb, mms, (ce_bytes + p->hprobe) / 1e6, mall);
    json_key(w, "diag_link");
    json_obj_begin(w);
    json_kv_f64(w, "tma_GBs", mt);
    json_kv_f64(w, "ce_GBs", mc);
    json_kv_f64(w, "both_tma_GBs", mtb);
    json_kv_f64(w, "both_ce_GBs", mcb);
    json_kv_f64(w, "both_total_GBs", mall);
    json_obj_end(w);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaStreamDestroy(cs);
}

int bench_probes(bench_run *bench)
{
    cm_err err;
    const bench_cfg *c = bench->c;
    dak_gemm_ctx *ctx = bench->ctx;
    const uint32_t sms = bench->sms;
    json_w *w = bench->w;

    /* ---- bandwidth probes: B_h, B_g in this run ---- */
    size_t hprobe = 512ull << 20, gprobe = 2048ull << 20;
    void *hbuf, *hbuf_dev, *gbuf;
    CK(cudaHostAlloc(&hbuf, hprobe, cudaHostAllocMapped | cudaHostAllocPortable));
    CK(cudaHostGetDevicePointer(&hbuf_dev, hbuf, 0));
    memset(hbuf, 1, hprobe);
    CK(cudaMalloc(&gbuf, gprobe));
    CK(cudaMemset(gbuf, 1, gprobe));
    double bh_v[3], bg_v[5], dummy;
    for (int i = 0; i < 5; i++) DK(dak_probe_bw(ctx, NULL, 0, 0, 1, gbuf, gprobe, sms, &dummy, &bg_v[i], &err));
    for (int i = 0; i < 3; i++)
        DK(dak_probe_bw(ctx, hbuf_dev, hprobe, 16, 8, NULL, 0, 0, &bh_v[i], &dummy, &err));
    double Bg = bench_median(bg_v, 5), Bh = bench_median(bh_v, 3);
    printf("# probes: B_g (HBM -> smem, %u SMs, 24 x 8 KiB bulk copies in flight each) = %.1f GB/s, B_h (host -> smem, 16 SMs, window 8) = %.1f GB/s\n",
           sms, Bg, Bh);
    json_key(w, "probes");
    json_obj_begin(w);
    json_kv_f64(w, "B_g_GBs", Bg);
    json_kv_f64(w, "B_h_GBs", Bh);
    json_obj_end(w);
    bench->Bg = Bg, bench->Bh = Bh;

    const probe_bufs p = {.hbuf = hbuf, .hbuf_dev = hbuf_dev, .gbuf = gbuf, .hprobe = hprobe, .gprobe = gprobe};
    if (c->sec_cong) probe_congestion(bench, &p);
    if (c->sec_diag) probe_diag(bench, &p);
    if (c->sec_diag) probe_handover(bench, &p);
    if (c->sec_diag) probe_link(bench, &p);
    /* ---- per-SM HBM shares (the spread of the split GEMM's CTAs) ---- */
    static double sm_us[BENCH_SMRATE_MAXSM];
    bench->sm_us = sm_us, bench->nsm = 0;
    const int rc =
        c->sec_smrate && bench_smrate(ctx, gbuf, gprobe, (size_t)7168 * 7168 * 2, c->reps, w, sm_us, &bench->nsm);
    cudaFreeHost(hbuf);
    cudaFree(gbuf);
    return rc;
}
