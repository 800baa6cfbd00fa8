#define _POSIX_C_SOURCE 200809L
/* dak bench attn: the direct-access split attention for decoding (seed 003, SplitK_FlashAttn)
 * over offload ratios, against the aggregate-bandwidth bound C / max(r C / B_h, (1 - r) C / B_g)
 * (B_h, B_g measured in the same run by the bulk-copy probes of dak_kernels) and two baselines in
 * the same process: all-HBM (the same kernel with no host entries) and prefetch (cudaMemcpy2DAsync
 * of the host entries' valid tokens into HBM, then the kernel over all-HBM, timed together).
 * Optional congestion sweep: host CTAs x window at one ratio where the host link binds.
 * Table on stdout, JSON to --json, progress on stderr.  Without CUDA: flags checked, then
 * "not built". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "commands.h"
#include "common/args.h"
#include "common/bench.h"
#include "common/error.h"
#include "common/json.h"
#include "dak/attention.h"

#define AMAX 16

typedef struct {
    const char *model;
    uint32_t heads, kv_heads;
    uint32_t batches[AMAX], lens[AMAX];
    double ratios[AMAX]; /* fractions */
    int nb, nl, nr;
    uint32_t host_ctas, window, reps, launches, groups, teams, combine;
    int sweep, nomath, pdl;
    double sweep_ratio;
    uint64_t hbm_budget, host_budget;
    const char *json;
} attn_cfg;

static void usage(FILE *o)
{
    fprintf(o,
            "usage: dak bench attn [options]\n"
            "  --model NAME       opt-6.7b (32/32 heads), opt-30b (56/56), llama-2-7b (32/32) or custom\n"
            "                     (then --heads and --kv-heads) (default llama-2-7b)\n"
            "  --heads N          query heads (custom model; 1..1024)\n"
            "  --kv-heads N       kv heads (custom model; heads / kv-heads in 1..8)\n"
            "  --batch LIST       batch sizes (default 8,64,512)\n"
            "  --len LIST         cached tokens per sequence (default 32,128,512,1024)\n"
            "  --ratios LIST      offload ratios in %% of the batch (default 0,0.5,1,2,5,10,20,40,60,80,100)\n"
            "  --host-ctas N      CTAs reading host entries, 0 = auto (default 0)\n"
            "  --window N         ring slots (32 KiB) in flight per host CTA, 0 = auto, else 1..%u (default 0)\n"
            "  --groups N         consumer groups of 4 warps a CTA (alternate ring slots): 0 = auto (2), 1 or 2\n"
            "                     (default 0; also for the all-HBM and prefetch baselines)\n"
            "  --teams N          units a CTA works on at once: 0 = auto, 1, 2, 4 or 8 (at most 4 x groups; all\n"
            "                     baselines too) (default 0)\n"
            "  --combine MODE     split partials merged by the last split's CTA (inline) or a second kernel\n"
            "                     (kernel): auto, inline or kernel (default auto = inline)\n"
            "  --pdl              launch every decode as a programmatic dependent (overlaps the previous one's tail)\n"
            "  --reps N           timed repetitions per point, median reported (default 20)\n"
            "  --launches N       decode launches per CUDA graph replay (default 4)\n"
            "  --diag-nomath      diagnostic: the split kernel's consumers skip the math (its streaming rate; the\n"
            "                     all-HBM and prefetch columns too; outputs garbage)\n"
            "  --sweep-congestion also sweep host CTAs (1..64) x window (1..%u) at --sweep-ratio\n"
            "  --sweep-ratio R    offload ratio in %% for the sweep (default 20)\n"
            "  --hbm-budget BYTES largest HBM footprint of a case; larger ones are skipped (default 40GiB)\n"
            "  --host-budget BYTES largest pinned host footprint of a case (default 40GiB)\n"
            "  --json FILE        JSON output (default dak-attn.json)\n",
            DAK_ATTN_MAX_STAGES, DAK_ATTN_MAX_STAGES);
}

static int parse_list(const char *flag, const char *v, int kind, uint32_t *u, double *d, int *n)
{
    char buf[512];
    if (strlen(v) >= sizeof buf) {
        fprintf(stderr, "dak bench attn: %s: list too long (expected at most %zu characters)\n", flag,
                sizeof buf - 1);
        return -1;
    }
    strcpy(buf, v);
    int k = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (k >= AMAX) {
            fprintf(stderr, "dak bench attn: %s: expected at most %d entries\n", flag, AMAX);
            return -1;
        }
        if (kind == 0) {
            if (arg_u32("dak bench attn", flag, t, 1, 65536, &u[k])) return -1;
        } else if (kind == 1) {
            if (arg_u32("dak bench attn", flag, t, 1, 1u << 20, &u[k])) return -1;
        } else {
            double r;
            if (arg_f64("dak bench attn", flag, t, 0.0, 100.0, &r)) return -1;
            d[k] = r / 100.0;
        }
        k++;
    }
    if (k == 0) {
        fprintf(stderr, "dak bench attn: %s: expected a non-empty comma-separated list, got '%s'\n", flag, v);
        return -1;
    }
    *n = k;
    return 0;
}

static int parse(int argc, char **argv, attn_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->model = "llama-2-7b";
    parse_list("--batch", "8,64,512", 0, c->batches, NULL, &c->nb);
    parse_list("--len", "32,128,512,1024", 1, c->lens, NULL, &c->nl);
    parse_list("--ratios", "0,0.5,1,2,5,10,20,40,60,80,100", 2, NULL, c->ratios, &c->nr);
    c->reps = 20, c->launches = 4, c->sweep_ratio = 0.2;
    c->hbm_budget = c->host_budget = 40ull << 30;
    c->json = "dak-attn.json";
    uint32_t heads = 0, kvh = 0;
    int heads_given = 0, kv_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
#define VAL() ((v = arg_value("dak bench attn", argc, argv, &i)) != NULL)
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (arg_is(a, "--model")) {
            if (!VAL()) return -1;
            if (strcmp(v, "opt-6.7b") && strcmp(v, "opt-30b") && strcmp(v, "llama-2-7b") && strcmp(v, "custom")) {
                fprintf(stderr, "dak bench attn: --model: expected opt-6.7b, opt-30b, llama-2-7b or custom, got '%s'\n",
                        v);
                return -1;
            }
            c->model = v;
        } else if (arg_is(a, "--heads")) {
            if (!VAL() || arg_u32("dak bench attn", "--heads", v, 1, 1024, &heads)) return -1;
            heads_given = 1;
        } else if (arg_is(a, "--kv-heads")) {
            if (!VAL() || arg_u32("dak bench attn", "--kv-heads", v, 1, 1024, &kvh)) return -1;
            kv_given = 1;
        } else if (arg_is(a, "--batch")) {
            if (!VAL() || parse_list("--batch", v, 0, c->batches, NULL, &c->nb)) return -1;
        } else if (arg_is(a, "--len")) {
            if (!VAL() || parse_list("--len", v, 1, c->lens, NULL, &c->nl)) return -1;
        } else if (arg_is(a, "--ratios")) {
            if (!VAL() || parse_list("--ratios", v, 2, NULL, c->ratios, &c->nr)) return -1;
        } else if (arg_is(a, "--host-ctas")) {
            if (!VAL() || arg_u32("dak bench attn", "--host-ctas", v, 0, 1024, &c->host_ctas)) return -1;
        } else if (arg_is(a, "--window")) {
            if (!VAL() || arg_u32("dak bench attn", "--window", v, 0, DAK_ATTN_MAX_STAGES, &c->window)) return -1;
        } else if (arg_is(a, "--groups")) {
            if (!VAL() || arg_u32("dak bench attn", "--groups", v, 0, 2, &c->groups)) return -1;
        } else if (arg_is(a, "--teams")) {
            if (!VAL() || arg_u32("dak bench attn", "--teams", v, 0, 8, &c->teams)) return -1;
            if (c->teams != 0 && c->teams != 1 && c->teams != 2 && c->teams != 4 && c->teams != 8) {
                fprintf(stderr, "dak bench attn: --teams: expected 0, 1, 2, 4 or 8, got '%s'\n", v);
                return -1;
            }
        } else if (arg_is(a, "--combine")) {
            if (!VAL()) return -1;
            if (!strcmp(v, "auto")) c->combine = 0;
            else if (!strcmp(v, "inline")) c->combine = DAK_ATTN_COMBINE_INLINE;
            else if (!strcmp(v, "kernel")) c->combine = DAK_ATTN_COMBINE_KERNEL;
            else {
                fprintf(stderr, "dak bench attn: --combine: expected auto, inline or kernel, got '%s'\n", v);
                return -1;
            }
        } else if (!strcmp(a, "--pdl")) {
            c->pdl = 1;
        } else if (arg_is(a, "--reps")) {
            if (!VAL() || arg_u32("dak bench attn", "--reps", v, 1, 100000, &c->reps)) return -1;
        } else if (arg_is(a, "--launches")) {
            if (!VAL() || arg_u32("dak bench attn", "--launches", v, 1, 64, &c->launches)) return -1;
        } else if (!strcmp(a, "--diag-nomath")) {
            c->nomath = 1;
        } else if (!strcmp(a, "--sweep-congestion")) {
            c->sweep = 1;
        } else if (arg_is(a, "--sweep-ratio")) {
            double r;
            if (!VAL() || arg_f64("dak bench attn", "--sweep-ratio", v, 0.0, 100.0, &r)) return -1;
            if (r <= 0.0) {
                fprintf(stderr, "dak bench attn: --sweep-ratio: expected a ratio in (0, 100] %%, got '%s'\n", v);
                return -1;
            }
            c->sweep_ratio = r / 100.0;
        } else if (arg_is(a, "--hbm-budget")) {
            if (!VAL() || arg_bytes("dak bench attn", "--hbm-budget", v, &c->hbm_budget)) return -1;
        } else if (arg_is(a, "--host-budget")) {
            if (!VAL() || arg_bytes("dak bench attn", "--host-budget", v, &c->host_budget)) return -1;
        } else if (arg_is(a, "--json")) {
            if (!VAL()) return -1;
            if (!*v) {
                fprintf(stderr, "dak bench attn: --json: expected a file name, got ''\n");
                return -1;
            }
            c->json = v;
        } else {
            fprintf(stderr, "dak bench attn: unknown option '%s'\n", a);
            usage(stderr);
            return -1;
        }
#undef VAL
    }
    if (!strcmp(c->model, "custom")) {
        if (!heads_given || !kv_given) {
            fprintf(stderr, "dak bench attn: --model custom: expected --heads and --kv-heads\n");
            return -1;
        }
        c->heads = heads, c->kv_heads = kvh;
    } else {
        if (heads_given || kv_given) {
            fprintf(stderr, "dak bench attn: --heads / --kv-heads: expected only with --model custom (model %s)\n",
                    c->model);
            return -1;
        }
        c->heads = c->kv_heads = !strcmp(c->model, "opt-30b") ? 56u : 32u;
    }
    if (c->heads % c->kv_heads || c->heads / c->kv_heads > DAK_ATTN_MAX_GROUP) {
        fprintf(stderr, "dak bench attn: --heads %u / --kv-heads %u: expected heads a multiple of kv-heads, group 1..%u\n",
                c->heads, c->kv_heads, DAK_ATTN_MAX_GROUP);
        return -1;
    }
    if (c->teams > 4u * (c->groups ? c->groups : 2u)) {
        fprintf(stderr, "dak bench attn: --teams %u: expected at most 4 x groups (%u)\n", c->teams,
                4u * (c->groups ? c->groups : 2u));
        return -1;
    }
    if (c->teams > 1 && c->heads / c->kv_heads > 4) {
        fprintf(stderr, "dak bench attn: --teams %u: expected 0 or 1 with %u query heads a kv head (above 4: one team)\n",
                c->teams, c->heads / c->kv_heads);
        return -1;
    }
    return 0;
}

#ifdef DAK_ATTN_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "dak/gemm.h"

typedef struct {
    dak_attn_ctx *ctx;
    cudaStream_t st;
    cudaEvent_t e0, e1;
    const attn_cfg *c;
    uint32_t sms;
} runner;

/* One timed operation: `launches` decodes (with the prefetch copies before each when pre_bytes) captured in
 * a CUDA graph, replayed reps times; returns the median time of one decode in microseconds. */
typedef struct {
    const dak_kv_tiered *kv;       /* the cache the kernel reads */
    const dak_attn_plan *plan;
    const uint16_t *q;
    uint16_t *out;
    uint32_t heads, len;
    /* prefetch: copy `rows` rows of `width` bytes (pitch `pitch`) from host to HBM, K and V */
    const void *pk_src, *pv_src;
    void *pk_dst, *pv_dst;
    size_t width, pitch, rows;
} op_t;

static void enqueue(runner *r, const op_t *op)
{
    cm_err err;
    if (op->rows) {
        CK(cudaMemcpy2DAsync(op->pk_dst, op->pitch, op->pk_src, op->pitch, op->width, op->rows,
                             cudaMemcpyHostToDevice, r->st));
        CK(cudaMemcpy2DAsync(op->pv_dst, op->pitch, op->pv_src, op->pitch, op->width, op->rows,
                             cudaMemcpyHostToDevice, r->st));
    }
    DK(dak_attn_decode(r->ctx, op->kv, op->q, op->heads, op->len, 1.0f / sqrtf((float)DAK_ATTN_D), op->out,
                       op->plan, r->st, &err));
}

static double time_op(runner *r, const op_t *op)
{
    enqueue(r, op); /* warm-up, and the workspace grown outside the capture */
    CK(cudaStreamSynchronize(r->st));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(r->st, cudaStreamCaptureModeThreadLocal));
    for (uint32_t i = 0; i < r->c->launches; i++) enqueue(r, op);
    CK(cudaStreamEndCapture(r->st, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphLaunch(ge, r->st));
    CK(cudaStreamSynchronize(r->st));
    double *t = (double *)cm_malloc(sizeof(double) * r->c->reps);
    for (uint32_t i = 0; i < r->c->reps; i++) {
        float ms = 0;
        CK(cudaEventRecord(r->e0, r->st));
        CK(cudaGraphLaunch(ge, r->st));
        CK(cudaEventRecord(r->e1, r->st));
        CK(cudaEventSynchronize(r->e1));
        CK(cudaEventElapsedTime(&ms, r->e0, r->e1));
        t[i] = 1e3 * (double)ms / r->c->launches;
    }
    double med = bench_median(t, r->c->reps);
    free(t);
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));
    return med;
}

int bench_attn(int argc, char **argv)
{
    attn_cfg c;
    if (parse(argc, argv, &c)) return 2;
    cm_err err;
    json_w w; /* opened first: an unwritable --json ends the run before any GPU work */
    FILE *jf = bench_json_begin(c.json, "dak attn", &w);
    if (!jf) return 2;
    runner r;
    memset(&r, 0, sizeof r);
    r.c = &c;
    DK(dak_attn_ctx_create(&r.ctx, &err));
    r.sms = dak_attn_ctx_sms(r.ctx);
    CK(cudaStreamCreateWithFlags(&r.st, cudaStreamNonBlocking));
    CK(cudaEventCreate(&r.e0));
    CK(cudaEventCreate(&r.e1));

    /* B_h and B_g: host CTAs reading pinned memory while the rest read HBM (dak_probe_bw), and HBM alone */
    dak_gemm_ctx *gctx;
    DK(dak_gemm_ctx_create(&gctx, &err));
    const size_t hprobe = 1ull << 30, gprobe = 2ull << 30;
    void *hp, *hpd, *gp;
    CK(cudaHostAlloc(&hp, hprobe, cudaHostAllocMapped | cudaHostAllocPortable));
    CK(cudaHostGetDevicePointer(&hpd, hp, 0));
    memset(hp, 1, hprobe);
    CK(cudaMalloc(&gp, gprobe));
    CK(cudaMemset(gp, 1, gprobe));
    const uint32_t phc = 16, pwin = 8; /* 16 CTAs x 8 x 8 KiB copies = 1 MiB in flight */
    double bh_gbs = 0, bg_conc = 0, bg_gbs = 0;
    DK(dak_probe_bw(gctx, hpd, hprobe, phc, pwin, gp, gprobe, r.sms - phc, &bh_gbs, &bg_conc, &err));
    DK(dak_probe_hbm(gctx, gp, gprobe, r.sms, 32768, 1, &bg_gbs, &err));
    printf("# dak bench attn: model %s (heads %u, kv heads %u, D %u), %u SMs\n", c.model, c.heads, c.kv_heads,
           DAK_ATTN_D, r.sms);
    printf("# B_h %.1f GB/s (%u CTAs, window %u x 8 KiB, beside HBM readers at %.0f GB/s); B_g %.0f GB/s (all SMs)\n",
           bh_gbs, phc, pwin, bg_conc, bg_gbs);
    CK(cudaFree(gp));
    CK(cudaFreeHost(hp));
    dak_gemm_ctx_destroy(gctx);

    bench_json_machine(&w);
    json_kv_str(&w, "model", c.model);
    json_kv_u64(&w, "heads", c.heads);
    json_kv_u64(&w, "kv_heads", c.kv_heads);
    json_kv_u64(&w, "head_dim", DAK_ATTN_D);
    json_kv_u64(&w, "sms", r.sms);
    json_kv_u64(&w, "reps", c.reps);
    json_kv_u64(&w, "launches_per_graph", c.launches);
    json_kv_u64(&w, "host_ctas_opt", c.host_ctas);
    json_kv_u64(&w, "window_opt", c.window);
    json_kv_u64(&w, "groups_opt", c.groups);
    json_kv_u64(&w, "teams_opt", c.teams);
    json_kv_u64(&w, "combine_opt", c.combine);
    json_kv_bool(&w, "pdl", c.pdl);
    json_kv_bool(&w, "diag_nomath", c.nomath);
    json_key(&w, "probe");
    json_obj_begin(&w);
    json_kv_f64(&w, "host_gbs", bh_gbs);
    json_kv_f64(&w, "hbm_gbs_beside_host", bg_conc);
    json_kv_f64(&w, "hbm_gbs", bg_gbs);
    json_kv_u64(&w, "host_ctas", phc);
    json_kv_u64(&w, "host_window_8k", pwin);
    json_obj_end(&w);
    json_key(&w, "points");
    json_arr_begin(&w);

    static const uint32_t sweep_ctas[] = {1, 2, 4, 8, 16, 32, 64};
    static const uint32_t sweep_win[] = {1, 2, 4, 6};
    const uint64_t per_case = 1u + 2u * (uint64_t)c.nr + (c.sweep ? 7u * 4u : 0u);
    bench_progress_t prog;
    bench_progress_start(&prog, "dak bench attn", per_case * c.nb * c.nl);
    uint64_t done = 0;
    printf("\n%6s %6s %7s %5s | %10s %9s %9s %7s | %10s %10s %8s | %5s %4s %6s %5s\n", "batch", "len", "r%", "host",
           "split us", "EB GB/s", "bound", "%bound", "allHBM us", "prefetch us", "vs pref", "hCTA", "win", "splits",
           "teams");
    json_w *J = &w;
    /* the congestion sweep's records are gathered here and written after the points */
    typedef struct {
        uint32_t batch, len, bh, hc, win;
        double us, eb;
    } sweep_rec;
    sweep_rec *sw = (sweep_rec *)cm_calloc((size_t)c.nb * c.nl * 28u + 1u, sizeof *sw);
    size_t nsw = 0;
    for (int bi = 0; bi < c.nb; bi++)
        for (int li = 0; li < c.nl; li++) {
            const uint32_t B = c.batches[bi], len = c.lens[li], KV = c.kv_heads, H = c.heads;
            const size_t entry = (size_t)KV * len * DAK_ATTN_D; /* elements per entry (max_len = len) */
            const double kvbytes = 2.0 * B * (double)entry * 2.0;
            /* HBM: the full cache (HBM tier + prefetch staging) + q + out; host: the cache */
            const uint64_t need_g = (uint64_t)kvbytes + 4ull * B * H * DAK_ATTN_D, need_h = (uint64_t)kvbytes;
            if (need_g > c.hbm_budget || need_h > c.host_budget) {
                printf("# skipped batch %u len %u: KV %.2f GiB exceeds the budget (HBM %.1f GiB, host %.1f GiB)\n", B,
                       len, kvbytes / 1073741824.0, c.hbm_budget / 1073741824.0, c.host_budget / 1073741824.0);
                done += per_case;
                continue;
            }
            uint16_t *kg, *vg, *kh, *vh, *q, *out;
            CK(cudaMalloc((void **)&kg, (size_t)B * entry * 2));
            CK(cudaMalloc((void **)&vg, (size_t)B * entry * 2));
            CK(cudaHostAlloc((void **)&kh, (size_t)B * entry * 2, cudaHostAllocMapped | cudaHostAllocPortable));
            CK(cudaHostAlloc((void **)&vh, (size_t)B * entry * 2, cudaHostAllocMapped | cudaHostAllocPortable));
            CK(cudaMalloc((void **)&q, (size_t)B * H * DAK_ATTN_D * 2));
            CK(cudaMalloc((void **)&out, (size_t)B * H * DAK_ATTN_D * 2));
            DK(dak_fill_random_bf16(kg, (size_t)B * entry, 11, r.st, &err));
            DK(dak_fill_random_bf16(vg, (size_t)B * entry, 12, r.st, &err));
            DK(dak_fill_random_bf16(q, (size_t)B * H * DAK_ATTN_D, 13, r.st, &err));
            CK(cudaStreamSynchronize(r.st));
            CK(cudaMemcpy(kh, kg, (size_t)B * entry * 2, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(vh, vg, (size_t)B * entry * 2, cudaMemcpyDeviceToHost));

            /* (a) all-HBM: the same kernel, no host entries */
            dak_kv_tiered kv0;
            dak_attn_plan p0;
            DK(dak_kv_view(&kv0, B, KV, len, 0, NULL, NULL, kg, vg, &err));
            dak_attn_opts o0;
            dak_attn_opts_default(&o0);
            o0.groups = c.groups, o0.diag_nomath = c.nomath, o0.teams = c.teams, o0.combine = c.combine, o0.pdl = c.pdl;
            DK(dak_attn_plan_make(B, 0, H, KV, len, r.sms, &o0, &p0, &err));
            op_t op0 = {&kv0, &p0, q, out, H, len, NULL, NULL, NULL, NULL, 0, 0, 0};
            const double t0 = time_op(&r, &op0);
            bench_progress(&prog, ++done);
            for (int ri = 0; ri < c.nr; ri++) {
                uint32_t bh;
                DK(dak_kv_batch_for_ratio(B, c.ratios[ri], &bh, &err));
                dak_kv_tiered kv;
                DK(dak_kv_view(&kv, B, KV, len, bh, kh, vh, kg + (size_t)bh * entry, vg + (size_t)bh * entry, &err));
                dak_attn_opts o;
                dak_attn_opts_default(&o);
                if (bh > 0) o.host_ctas = c.host_ctas, o.window = c.window;
                o.groups = c.groups, o.diag_nomath = c.nomath, o.teams = c.teams, o.combine = c.combine, o.pdl = c.pdl;
                if (bh > 0 && bh < B && o.host_ctas >= r.sms) o.host_ctas = r.sms - 1;
                dak_attn_plan p;
                DK(dak_attn_plan_make(B, bh, H, KV, len, r.sms, &o, &p, &err));
                op_t op = {&kv, &p, q, out, H, len, NULL, NULL, NULL, NULL, 0, 0, 0};
                const double ts = time_op(&r, &op);
                bench_progress(&prog, ++done);
                /* (b) prefetch: the host entries' valid tokens (len of max_len = len here: one row per
                 * (entry, kv head)) into the HBM copy, then the kernel over all-HBM */
                op_t opp = op0;
                if (bh) {
                    opp.pk_src = kh, opp.pv_src = vh, opp.pk_dst = kg, opp.pv_dst = vg;
                    opp.width = (size_t)len * DAK_ATTN_D * 2, opp.pitch = (size_t)len * DAK_ATTN_D * 2;
                    opp.rows = (size_t)bh * KV;
                }
                const double tp = bh ? time_op(&r, &opp) : t0;
                bench_progress(&prog, ++done);
                const double rr = (double)bh / B;
                const double bound = 1.0 / fmax(rr / (bh_gbs * 1e9), (1.0 - rr) / (bg_gbs * 1e9)) / 1e9; /* GB/s */
                const double eb = gbs(kvbytes, ts / 1e3);
                printf("%6u %6u %7.2f %5u | %10.2f %9.1f %9.1f %6.1f%% | %10.2f %10.2f %7.2fx | %5u %4u %3u/%-3u %u/%u\n",
                       B, len, 100.0 * c.ratios[ri], bh, ts, eb, bound, 100.0 * eb / bound, t0, tp, tp / ts,
                       p.host_ctas, p.window, p.host_splits, p.hbm_splits, p.host_teams, p.hbm_teams);
                fflush(stdout);
                json_obj_begin(J);
                json_kv_u64(J, "batch", B);
                json_kv_u64(J, "len", len);
                json_kv_f64(J, "ratio", c.ratios[ri]);
                json_kv_u64(J, "batch_host", bh);
                json_kv_f64(J, "kv_bytes", kvbytes);
                json_kv_f64(J, "split_us", ts);
                json_kv_f64(J, "split_eb_gbs", eb);
                json_kv_f64(J, "bound_gbs", bound);
                json_kv_f64(J, "pct_of_bound", 100.0 * eb / bound);
                json_kv_f64(J, "allhbm_us", t0);
                json_kv_f64(J, "allhbm_eb_gbs", gbs(kvbytes, t0 / 1e3));
                json_kv_f64(J, "prefetch_us", tp);
                json_kv_f64(J, "prefetch_eb_gbs", gbs(kvbytes, tp / 1e3));
                json_kv_f64(J, "speedup_vs_prefetch", tp / ts);
                json_kv_u64(J, "host_ctas", p.host_ctas);
                json_kv_u64(J, "hbm_ctas", p.hbm_ctas);
                json_kv_u64(J, "window", p.window);
                json_kv_u64(J, "stages", p.stages);
                json_kv_u64(J, "groups", p.groups);
                json_kv_u64(J, "host_teams", p.host_teams);
                json_kv_u64(J, "hbm_teams", p.hbm_teams);
                json_kv_u64(J, "combine", p.combine);
                json_kv_bool(J, "pdl", p.pdl);
                json_kv_u64(J, "host_splits", p.host_splits);
                json_kv_u64(J, "hbm_splits", p.hbm_splits);
                json_obj_end(J);
            }
            if (c.sweep) {
                uint32_t bh;
                DK(dak_kv_batch_for_ratio(B, c.sweep_ratio, &bh, &err));
                if (bh == 0) bh = 1;
                dak_kv_tiered kv;
                DK(dak_kv_view(&kv, B, KV, len, bh, kh, vh, kg + (size_t)bh * entry, vg + (size_t)bh * entry, &err));
                printf("# congestion sweep: batch %u len %u, %u of %u entries in host memory (EB GB/s; rows host CTAs, "
                       "columns window)\n%8s", B, len, bh, B, "hCTA\\win");
                for (int wi = 0; wi < 4; wi++) printf(" %9u", sweep_win[wi]);
                printf("\n");
                for (int hi = 0; hi < 7; hi++) {
                    printf("%8u", sweep_ctas[hi]);
                    for (int wi = 0; wi < 4; wi++) {
                        dak_attn_opts o;
                        dak_attn_opts_default(&o);
                        o.host_ctas = sweep_ctas[hi], o.window = sweep_win[wi];
                        o.groups = c.groups, o.diag_nomath = c.nomath, o.teams = c.teams, o.combine = c.combine;
                        o.pdl = c.pdl;
                        dak_attn_plan p;
                        bench_progress(&prog, ++done);
                        if ((bh < B && o.host_ctas >= r.sms) || o.host_ctas > r.sms ||
                            dak_attn_plan_make(B, bh, H, KV, len, r.sms, &o, &p, &err)) {
                            printf(" %9s", "-");
                            continue;
                        }
                        op_t op = {&kv, &p, q, out, H, len, NULL, NULL, NULL, NULL, 0, 0, 0};
                        const double ts = time_op(&r, &op);
                        printf(" %9.1f", gbs(kvbytes, ts / 1e3));
                        sweep_rec s = {B, len, bh, o.host_ctas, o.window, ts, gbs(kvbytes, ts / 1e3)};
                        sw[nsw++] = s;
                    }
                    printf("\n");
                    fflush(stdout);
                }
            }
            CK(cudaFree(kg));
            CK(cudaFree(vg));
            CK(cudaFreeHost(kh));
            CK(cudaFreeHost(vh));
            CK(cudaFree(q));
            CK(cudaFree(out));
        }
    bench_progress_end(&prog, done);
    json_arr_end(J);
    json_key(J, "congestion");
    json_arr_begin(J);
    for (size_t i = 0; i < nsw; i++) {
        json_obj_begin(J);
        json_kv_u64(J, "batch", sw[i].batch);
        json_kv_u64(J, "len", sw[i].len);
        json_kv_u64(J, "batch_host", sw[i].bh);
        json_kv_u64(J, "host_ctas", sw[i].hc);
        json_kv_u64(J, "window", sw[i].win);
        json_kv_f64(J, "split_us", sw[i].us);
        json_kv_f64(J, "split_eb_gbs", sw[i].eb);
        json_obj_end(J);
    }
    json_arr_end(J);
    json_obj_end(J);
    fputc('\n', jf);
    fclose(jf);
    free(sw);
    dak_attn_ctx_destroy(r.ctx);
    printf("\n# JSON written to %s\n", c.json);
    return 0;
}
#else
int bench_attn(int argc, char **argv)
{
    attn_cfg c;
    if (parse(argc, argv, &c)) return 2;
    fprintf(stderr, "dak bench attn: not built (configured without CUDA)\n");
    return 1;
}
#endif
