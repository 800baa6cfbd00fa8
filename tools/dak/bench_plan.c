/* `dak bench gemm`'s options as the split kernel's options (bench_opts, bench_opts_host: every section and
 * --plan-only use them), and --plan-only: the plan dak_gemm_plan_make makes for each shape x N x ratio on a GPU of
 * --sms SMs with --smem bytes of opt-in shared memory (the H200's by default), printed and written as JSON without
 * touching a GPU (CPU builds too): which tile heights and widths, how many CTAs read host memory and HBM, how K is
 * split, the ring and the workspace. */
#include <string.h>

#include "bench_internal.h"
#include "dak/tiered.h"

void bench_opts(dak_gemm_opts *o, const bench_cfg *c)
{
    dak_gemm_opts_default(o);
    o->bm = c->bm;
    o->bn = c->bn;
    o->panel = c->panel;
    o->kstep = c->kstep;
    o->stages = c->stages;
    o->hbm_ctas = c->hbm_sms;
    o->tile_align = (int)c->tile_align;
    o->l2_hints = (int)c->l2_hints;
    o->fix_rs = (int)c->fix_rs;
    o->diag_rotate = c->rotate;
    o->diag_panel_fork = (int)c->panel_fork;
    o->dyn_slots = c->dyn_slots;
    o->hbm_window = c->hbm_window;
    o->pdl_pre = c->pdl_pre;
    o->diag_prod2 = (int)c->prod2;
    o->stash = c->stash;
    o->bn8 = (int)c->bn8;
    o->bn24 = (int)c->bn24;
    o->bnw = (int)c->bnw;
    o->whole = c->whole;
    o->whole_cluster = c->whole_cl;
    o->whole_stages = c->whole_stages;
    o->whole_window = c->whole_window;
    o->whole_swap = c->whole_swap;
}

void bench_opts_host(dak_gemm_opts *o, const bench_cfg *c)
{
    bench_opts(o, c);
    o->host_ctas = c->host_sms, o->window = c->window;
}

/* One tier's plan as JSON (an object under `key`). */
static void tier_json(json_w *w, const char *key, const dak_tier_plan *t)
{
    json_key(w, key);
    json_obj_begin(w);
    json_kv_u64(w, "ctas", t->ctas);
    json_kv_u64(w, "mtiles", t->mtiles);
    json_kv_bool(w, "even", t->even);
    json_kv_u64(w, "ksplit", t->ksplit);
    json_kv_u64(w, "chunks", t->chunks);
    json_kv_u64(w, "window", t->window);
    json_kv_u64(w, "rs_tiles", t->rs_tiles);
    json_kv_f64(w, "balance", t->balance);
    json_obj_end(w);
}

FILE *bench_json_begin(const char *path, const char *name, json_w *w)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "dak bench: cannot write %s\n", path);
        return NULL;
    }
    json_init(w, f);
    json_obj_begin(w);
    json_kv_str(w, "bench", name);
    return f;
}

int bench_plan_only(const bench_cfg *c)
{
    json_w w;
    FILE *jf = bench_json_begin(c->json, "dak gemm --plan-only", &w);
    if (!jf) return 2;
    json_kv_u64(&w, "sms", c->plan_sms);
    json_kv_u64(&w, "smem_optin", c->plan_smem);
    json_kv_bool(&w, "pdl", (int)c->plan_pdl);
    json_key(&w, "plans");
    json_arr_begin(&w);
    printf("# split kernel plans for %u SMs, %llu B of shared memory a block%s (dak_gemm_plan_make; nothing runs)\n"
           "# host: CTAs reading host rows (tiled tier, or the panel kernel's), HBM: CTAs reading HBM rows;\n"
           "# split: even (wave-aligned ranges) or rr (round-robin), ksplit: most CTAs a tile, rs: tiles summed by\n"
           "# reduce-scatter; cl: CTAs a multicast cluster; slots: ring slots of kstep 64-column blocks; kernel: the\n"
           "# tiled kernel's instantiation\n",
           c->plan_sms, (unsigned long long)c->plan_smem, c->plan_pdl ? ", PDL launches" : "");
    printf("%6s %6s %5s %6s %6s | %5s %6s %5s | %5s %7s %6s %5s %6s %4s %5s %3s | %5s %5s %7s %8s %5s %5s  %s\n", "M",
           "K", "N", "r%", "hrows", "host", "panel", "hwin", "HBM", "tile", "mtiles", "split", "ksplit", "rs", "bal",
           "cl", "kstep", "slots", "smemKiB", "wsMiB", "wgmma", "stash", "kernel");
    int refused = 0;
    for (int si = 0; si < c->nshapes; si++)
        for (int ni = 0; ni < c->nn; ni++)
            for (int ri = 0; ri < c->nr; ri++) {
                const uint32_t M = c->shapes[si][0], K = c->shapes[si][1], N = c->ns[ni];
                cm_err err;
                uint32_t rows;
                dak_gemm_opts o;
                dak_gemm_plan p;
                bench_opts_host(&o, c);
                o.pdl = (int)c->plan_pdl;
                if (dak_tiered_rows_for_ratio(M, DAK_TILE_ROWS, c->ratios[ri], &rows, &err) ||
                    dak_gemm_plan_make(M, N, K, rows, &o, c->plan_sms, (size_t)c->plan_smem, &p, &err)) {
                    fprintf(stderr, "dak bench: %ux%u N %u r %g %%: %s\n", M, K, N, 100.0 * c->ratios[ri], err.msg);
                    refused = 1;
                    continue;
                }
                char tile[16];
                snprintf(tile, sizeof tile, "%ux%u", p.bm, p.bn);
                printf("%6u %6u %5u %6.2f %6u | %5u %6u %5u | %5u %7s %6u %5s %6u %4u %5.2f %3u | %5u %5u %7.1f %8.2f "
                       "%5u %5u  %s\n",
                       M, K, N, 100.0 * rows / M, rows, p.host.ctas, p.panel.on ? p.panel.ctas : 0u,
                       p.panel.on ? p.panel.window : p.host.window, p.hbm.ctas, tile, p.hbm.mtiles,
                       p.hbm.even ? "even" : "rr", p.hbm.ksplit, p.hbm.rs_tiles, p.hbm.balance, p.cluster, p.kstep,
                       p.hbm_stages,
                       p.smem_bytes / 1024.0, p.ws_bytes / 1048576.0, p.wgmma, p.hbm_stash,
                       dak_split_kernel_name(p.kernel));
                json_obj_begin(&w);
                json_kv_u64(&w, "M", M);
                json_kv_u64(&w, "K", K);
                json_kv_u64(&w, "N", N);
                json_kv_f64(&w, "ratio", (double)rows / M);
                json_kv_u64(&w, "rows_host", rows);
                json_kv_u64(&w, "bm", p.bm);
                json_kv_u64(&w, "bn", p.bn);
                json_kv_u64(&w, "kstep", p.kstep);
                json_kv_u64(&w, "stages", p.stages);
                json_kv_u64(&w, "hbm_stages", p.hbm_stages);
                json_kv_u64(&w, "cluster", p.cluster);
                json_kv_u64(&w, "smem_bytes", p.smem_bytes);
                json_kv_u64(&w, "ws_bytes", p.ws_bytes);
                json_kv_u64(&w, "wgmma", p.wgmma);
                json_kv_str(&w, "kernel", dak_split_kernel_name(p.kernel));
                json_kv_u64(&w, "hbm_stash", p.hbm_stash);
                json_kv_u64(&w, "hbm_pre", p.hbm_pre);
                json_kv_bool(&w, "panel", p.panel.on);
                json_kv_u64(&w, "panel_ctas", p.panel.on ? p.panel.ctas : 0u);
                json_kv_u64(&w, "host_bytes", dak_gemm_plan_host_bytes(&p));
                tier_json(&w, "host", &p.host);
                tier_json(&w, "hbm", &p.hbm);
                json_obj_end(&w);
            }
    json_arr_end(&w);
    json_obj_end(&w);
    fputc('\n', jf);
    if (fclose(jf)) {
        fprintf(stderr, "dak bench: writing %s failed\n", c->json);
        return 2;
    }
    printf("# JSON written to %s\n", c->json);
    return refused;
}
