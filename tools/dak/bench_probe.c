/* dak bench gemm's sections before any shape, over one pair of probe buffers (512 MiB mapped host
 * memory, 2 GiB HBM): the bandwidth probes B_g and B_h that the bound uses, the congestion sweep
 * (Fig. 7: host SMs x window beside 100 HBM SMs), the diag HBM probe (copy size x assignment)
 * and smrate (bench_smrate.c). */
#include <string.h>

#include "bench_sections.h"
#include "common/bench.h"

/* the probe buffers as the sections read them */
typedef struct {
    const void *hbuf_dev, *gbuf; /* mapped host memory (device pointer), HBM */
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

/* ---- diagnostics: HBM probe copy size x assignment ---- */
static void probe_diag(const bench_run *bench, const probe_bufs *p)
{
    cm_err err;
    const uint32_t sms = bench->sms;
    json_w *w = bench->w;
    printf("\n# diag: HBM probe, %u SMs, 192 KiB in flight each: copy size x assignment (GB/s)\n", sms);
    json_key(w, "diag_probe");
    json_arr_begin(w);
    static const uint32_t chs[] = {8192, 16384, 32768};
    for (size_t a = 0; a < 3; a++)
        for (int contig = 0; contig < 2; contig++) {
            double v[3];
            for (int i = 0; i < 3; i++)
                DK(dak_probe_hbm(bench->ctx, p->gbuf, p->gprobe, sms, chs[a], contig, &v[i], &err));
            double m = bench_median(v, 3);
            printf("  chunk %5u %-12s %8.1f\n", chs[a], contig ? "contiguous" : "interleaved", m);
            json_obj_begin(w);
            json_kv_u64(w, "chunk", chs[a]);
            json_kv_bool(w, "contiguous", contig);
            json_kv_f64(w, "GBs", m);
            json_obj_end(w);
        }
    json_arr_end(w);
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

    const probe_bufs p = {.hbuf_dev = hbuf_dev, .gbuf = gbuf, .hprobe = hprobe, .gprobe = gprobe};
    if (c->sec_cong) probe_congestion(bench, &p);
    if (c->sec_diag) probe_diag(bench, &p);
    /* ---- per-SM HBM shares (the spread of the split GEMM's CTAs) ---- */
    static double sm_us[1024];
    bench->sm_us = sm_us, bench->nsm = 0;
    if (c->sec_smrate && bench_smrate(ctx, gbuf, gprobe, (size_t)7168 * 7168 * 2, c->reps, w, sm_us, &bench->nsm))
        return 1;
    cudaFreeHost(hbuf);
    cudaFree(gbuf);
    return 0;
}
