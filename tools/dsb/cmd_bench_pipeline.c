/* `dsb bench pipeline`: the saturated persistent pipelines without the
 * network (seed 000, Sec. VII-C, Table IV).  For one configuration (or the
 * paper's 24 with --table4) and each placement asked for:
 *   1. t_solve: the in-kernel solve time of the same worker kernel, unloaded
 *      (one request outstanding at a time; median);
 *   2. the saturated run: the generator keeps up to C = 4096 requests
 *      outstanding, the consumer drains; achieved kreq/s (answered over first
 *      publish to last consume), p50/p99 publish-to-consume latency (the first
 *      1000 requests discarded), drops, and for the CPU producer/consumer
 *      their CPU time per request.  GPU placement: every reply's in-kernel
 *      solve time is kept too, which gives the loaded t_solve (every worker
 *      of every SM busy) and the time per request a worker spends outside
 *      the solve (N_w / achieved rate - mean loaded t_solve).
 * Bounds: N_w / t_solve (the target's, unloaded t_solve) and N_w / mean
 * loaded t_solve.  A table on stdout, progress on stderr, JSON with --json. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "common/args.h"
#include "common/bench.h"
#include "common/json.h"
#include "dsb/gpu.h"
#include "dsb/instances.h"
#include "dsb/model.h"
#include "dsb/pipeline.h"
#include "dsb/wire.h"

static const char *PROG = "dsb bench pipeline";

/* Table IV of the paper (RTX PRO 6000 Blackwell, 188 SMs, N_w = 375):
 * GPU-resident kreq/s, N_w/t_solve kreq/s, p99 us; host-mapped kreq/s, p99 us. */
typedef struct {
    dsb_format f;
    uint32_t n, K;
    double gpu_k, bound_k, gpu_p99, host_k, host_p99;
} paper_row;
static const paper_row PAPER[] = {
    {DSB_FMT_PM1, 64, 100, 1990, 4826, 543.0, 769, 5489.9},
    {DSB_FMT_PM1, 64, 400, 1224, 1279, 3347.7, 595, 7378.3},
    {DSB_FMT_PM1, 128, 100, 1981, 3468, 577.3, 721, 6127.4},
    {DSB_FMT_PM1, 128, 400, 868, 915, 4735.8, 558, 8124.5},
    {DSB_FMT_PM1, 192, 100, 1974, 2453, 621.0, 658, 6710.1},
    {DSB_FMT_PM1, 192, 400, 599, 644, 6889.4, 472, 9394.0},
    {DSB_FMT_PM1, 256, 100, 1841, 1971, 2230.7, 623, 7078.5},
    {DSB_FMT_PM1, 256, 400, 483, 516, 8547.3, 418, 10966.7},
    {DSB_FMT_PM1, 512, 100, 823, 875, 5014.1, 459, 9553.2},
    {DSB_FMT_PM1, 512, 400, 211, 227, 19706.2, 211, 19639.4},
    {DSB_FMT_TERNARY, 64, 100, 2030, 4464, 585.9, 1025, 4283.5},
    {DSB_FMT_TERNARY, 64, 400, 1154, 1232, 3557.6, 560, 7814.1},
    {DSB_FMT_TERNARY, 128, 100, 1974, 3117, 593.8, 674, 6548.8},
    {DSB_FMT_TERNARY, 128, 400, 808, 852, 5087.7, 546, 8717.9},
    {DSB_FMT_TERNARY, 192, 100, 1891, 2040, 2165.2, 624, 7059.2},
    {DSB_FMT_TERNARY, 192, 400, 497, 544, 8342.2, 418, 11325.1},
    {DSB_FMT_TERNARY, 256, 100, 1502, 1652, 2754.8, 578, 7621.1},
    {DSB_FMT_TERNARY, 256, 400, 394, 437, 10471.1, 353, 13794.6},
    {DSB_FMT_INT8, 64, 100, 2000, 4303, 569.1, 997, 4309.6},
    {DSB_FMT_INT8, 64, 400, 1007, 1176, 4082.3, 583, 7512.1},
    {DSB_FMT_INT8, 128, 100, 1983, 2471, 667.9, 658, 6732.1},
    {DSB_FMT_INT8, 128, 400, 536, 661, 7696.7, 446, 10090.5},
    {DSB_FMT_INT8, 192, 100, 1139, 1523, 3685.3, 517, 8517.0},
    {DSB_FMT_INT8, 192, 400, 291, 400, 14531.4, 289, 14467.6},
};
#define N_PAPER (sizeof PAPER / sizeof PAPER[0])

static const paper_row *paper_find(dsb_format f, uint32_t n, uint32_t B, uint32_t K)
{
    if (B != 8) return NULL;
    for (size_t i = 0; i < N_PAPER; i++)
        if (PAPER[i].f == f && PAPER[i].n == n && PAPER[i].K == K) return &PAPER[i];
    return NULL;
}

typedef struct {
    dsb_format f;
    uint32_t n, B, K;
} config;

/* The workload of Sec. VI-B for a format: SK (PM1), sparse ternary 5%
 * (TERNARY), int8 portfolio with its pool of field vectors (INT8). */
typedef struct {
    dsb_model m;
    uint32_t n_templates;
    uint8_t *frames[64];
    uint32_t lens[64];
} workload;

static int workload_make(const config *c, uint64_t seed, float dt, workload *w, cm_err *err)
{
    memset(w, 0, sizeof *w);
    dsb_instance in;
    int rc;
    if (c->f == DSB_FMT_PM1) rc = dsb_gen_sk(c->n, DSB_DEFAULT_MODEL_SEED, &in, err);
    else if (c->f == DSB_FMT_TERNARY)
        rc = dsb_gen_ternary(c->n, DSB_TERNARY_DEFAULT_DENSITY, DSB_DEFAULT_MODEL_SEED, &in, err);
    else rc = dsb_gen_portfolio(c->n, DSB_PORTFOLIO_DEFAULT_FIELDS, DSB_DEFAULT_MODEL_SEED, &in, err);
    if (rc) return -1;
    if (dsb_model_pack(in.J, in.n, c->f, &w->m, err)) {
        dsb_instance_free(&in);
        return -1;
    }
    w->n_templates = (in.fields && in.n_fields) ? (in.n_fields < 64 ? in.n_fields : 64) : 1;
    for (uint32_t j = 0; j < w->n_templates; j++) {
        const int16_t *h = (in.fields && in.n_fields) ? in.fields + (size_t)j * in.n : in.h;
        w->frames[j] = cm_malloc(DSB_PIPE_FRAME_SLOT);
        w->lens[j] = dsb_pipe_build_solve(w->frames[j], DSB_PIPE_FRAME_SLOT, 0, 0, c->n, c->K,
                                          c->B, seed + 0x100000000ull * j, 0.0f, dt, h);
        if (!w->lens[j]) {
            dsb_instance_free(&in);
            return cm_fail(err, "%s: n = %u: the field does not fit one frame", PROG, c->n);
        }
    }
    dsb_instance_free(&in);
    return 0;
}

static void workload_free(workload *w)
{
    for (uint32_t j = 0; j < w->n_templates; j++) free(w->frames[j]);
    dsb_model_free(&w->m);
}

typedef struct {
    config c;
    dsb_pipe_placement pl;
    int sums; /* dsb_gpu_sums of the workers */
    uint32_t workers;
    double t_solve_us, bound_k, kreqs, p50_us, p99_us, cpu_us_per_req, seconds;
    /* GPU placement: solve time under load (median, mean), the bound N_w / mean,
       and the per-request worker time outside the solve; NAN when not measured */
    double tl_us, tl_mean_us, bound_l_k, outside_us;
    uint64_t requests, published, answered, dropped;
    int ok;
} result;

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int run_config(dsb_pipe *p, dsb_pipe_placement placement, const config *c,
                      uint32_t requests, uint32_t unloaded, uint64_t seed, float dt, result *res,
                      cm_err *err)
{
    memset(res, 0, sizeof *res);
    res->c = *c;
    res->workers = dsb_pipe_workers(p);
    workload w;
    if (workload_make(c, seed, dt, &w, err)) return -1;
    int rc = -1;
    uint8_t *log = NULL;
    uint32_t *lat = NULL;
    if (dsb_pipe_set_model(p, 0, &w.m, 1, err)) goto out;
    if (c->B > dsb_pipe_max_replicas(p, 0)) {
        cm_fail(err, "%s: %s n=%u B=%u does not fit one worker's shared memory (largest B %u)",
                PROG, dsb_format_name(c->f), c->n, c->B, dsb_pipe_max_replicas(p, 0));
        goto out;
    }
    if (dsb_pipe_start(p, err)) goto out;
    /* 1. unloaded solve time */
    dsb_pipe_traffic t;
    memset(&t, 0, sizeof t);
    t.frames = (const uint8_t *const *)w.frames;
    t.lens = w.lens;
    t.n_templates = w.n_templates;
    t.requests = unloaded;
    t.max_outstanding = 1;
    t.log_stride = 64;
    log = cm_calloc(unloaded, 64);
    t.log = log;
    if (dsb_pipe_run_traffic(p, &t, err)) goto stop;
    double *ts = cm_malloc(unloaded * sizeof *ts);
    uint32_t nts = 0;
    for (uint32_t i = 0; i < unloaded; i++) {
        dsb_wire_result r;
        memcpy(&r, log + (size_t)i * 64, 64);
        if (r.type == DSB_MSG_RESULT && r.status == DSB_ST_OK && r.request_id == i)
            ts[nts++] = 1e-3 * r.t_solve_ns;
    }
    if (nts != unloaded) {
        free(ts);
        cm_fail(err, "%s: unloaded run: %u of %u replies OK", PROG, nts, unloaded);
        goto stop;
    }
    res->t_solve_us = bench_median(ts, nts);
    free(ts);
    res->bound_k = 1e3 * res->workers / res->t_solve_us; /* workers / us = Mreq/s -> kreq/s */
    /* 2. saturated */
    if (!requests) {
        double r = res->bound_k * 1e3 * 0.3; /* about 0.3 s at the bound */
        requests = r < 20000 ? 20000u : r > 1000000 ? 1000000u : (uint32_t)r;
    }
    res->requests = requests;
    lat = cm_calloc(requests, sizeof *lat);
    memset(&t, 0, sizeof t);
    t.frames = (const uint8_t *const *)w.frames;
    t.lens = w.lens;
    t.n_templates = w.n_templates;
    t.requests = requests;
    t.latency_ns = lat;
    /* GPU placement: keep every reply's header for its solve time (the GPU
       consumer copies 64 bytes a reply; the CPU consumer is left as it was) */
    free(log);
    log = NULL;
    if (placement == DSB_PIPE_GPU) {
        log = cm_calloc(requests, 64);
        t.log = log;
        t.log_stride = 64;
    }
    if (dsb_pipe_run_traffic(p, &t, err)) goto stop;
    res->published = t.published;
    res->answered = t.answered;
    res->dropped = t.dropped;
    res->seconds = t.seconds;
    res->kreqs = t.seconds > 0 ? 1e-3 * (double)t.answered / t.seconds : 0.0;
    uint32_t skip = requests > 2000 ? 1000 : 0;
    qsort(lat + skip, requests - skip, sizeof *lat, cmp_u32);
    uint32_t m = requests - skip;
    res->p50_us = 1e-3 * lat[skip + (uint32_t)(0.50 * (m - 1))];
    res->p99_us = 1e-3 * lat[skip + (uint32_t)(0.99 * (m - 1))];
    res->cpu_us_per_req =
        t.answered ? 1e6 * (t.producer_cpu_s + t.consumer_cpu_s) / (double)t.answered : 0.0;
    res->tl_us = res->tl_mean_us = res->bound_l_k = res->outside_us = NAN;
    if (log) {
        /* steady state: the first and last `skip` requests are left out (the
           ramp and the drain, when not every worker is busy) */
        double *tl = cm_malloc(requests * sizeof *tl), sum = 0.0;
        uint32_t ntl = 0;
        for (uint32_t i = skip; i + skip < requests; i++) {
            dsb_wire_result r;
            memcpy(&r, log + (size_t)i * 64, 64);
            if (r.type == DSB_MSG_RESULT && r.status == DSB_ST_OK && r.request_id == i) {
                tl[ntl++] = 1e-3 * r.t_solve_ns;
                sum += 1e-3 * r.t_solve_ns;
            }
        }
        if (ntl) {
            res->tl_us = bench_median(tl, ntl);
            res->tl_mean_us = sum / ntl;
            /* the mean, not the median: rate = N_w / (mean solve + mean outside), and
               the loaded solve times are skewed (mean up to 1.3x the median) */
            res->bound_l_k = 1e3 * res->workers / res->tl_mean_us;
            if (res->kreqs > 0) res->outside_us = 1e3 * res->workers / res->kreqs - res->tl_mean_us;
        }
        free(tl);
    }
    res->ok = t.answered == requests && t.published == requests && t.stray == 0;
    rc = 0;
stop:
    {
        dsb_pipe_stats st;
        cm_err e2;
        if (dsb_pipe_stop(p, &st, &e2) && rc == 0) {
            *err = e2;
            rc = -1;
        }
    }
out:
    free(log);
    free(lat);
    workload_free(&w);
    return rc;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: dsb bench pipeline [--format int8] [--n 128] [--B 8] [--K 100]\n"
            "                          [--placement gpu|host|both] [--requests N (0: ~0.3 s)]\n"
            "                          [--table4] [--unloaded 200] [--smem BYTES] [--reserve 1]\n"
            "                          [--workers N (0: all that fit)] [--seed 1] [--dt 1]\n"
            "                          [--sums auto|cuda|tensor[,..]] [--json FILE]\n"
            "  --table4 runs the paper's 24 configurations (formats x n x K at B = 8).\n"
            "  --workers 132 on a 132-SM GPU runs one worker per SM (the block scheduler\n"
            "  spreads the blocks over the SMs first): the solves do not share an SM.\n"
            "  --sums cuda,tensor runs everything once per coupling-sum engine (tensor: the\n"
            "  requests of at most 32 tiles of 16 rows x 8 replicas; the others on the CUDA\n"
            "  cores either way).\n");
}

int cmd_bench_pipeline(int argc, char **argv)
{
    config one = {DSB_FMT_INT8, 128, 8, 100};
    setvbuf(stdout, NULL, _IOLBF, 0); /* lines survive a kill by timeout */
    uint32_t requests = 0, unloaded = 200, reserve = 1, max_workers = 0;
    uint64_t smem = DSB_PIPE_DEFAULT_SMEM, seed = 1;
    double dt = 1.0;
    int table4 = 0, want_gpu = 1, want_host = 0;
    const char *json_path = NULL;
    int sums_list[DSB_GPU_SUMS_COUNT] = {DSB_GPU_SUMS_AUTO}, nsums = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--table4")) {
            table4 = 1;
            continue;
        }
        if (!(v = arg_value(PROG, argc, argv, &i))) return 2;
        if (arg_is(a, "--format")) {
            dsb_format f;
            if (dsb_format_parse(v, &f) || f == DSB_FMT_AUTO) {
                fprintf(stderr, "%s: --format: expected pm1, ternary or int8, got '%s'\n", PROG, v);
                return 2;
            }
            one.f = f;
        } else if (arg_is(a, "--n")) {
            if (arg_u32(PROG, "--n", v, 2, DSB_WIRE_MAX_FIELD_N, &one.n)) return 2;
        } else if (arg_is(a, "--B")) {
            if (arg_u32(PROG, "--B", v, 1, DSB_PIPE_MAX_B, &one.B)) return 2;
        } else if (arg_is(a, "--K")) {
            if (arg_u32(PROG, "--K", v, 1, 100000, &one.K)) return 2;
        } else if (arg_is(a, "--placement")) {
            dsb_pipe_placement pl;
            if (!strcmp(v, "both")) {
                want_gpu = want_host = 1;
            } else if (dsb_pipe_placement_parse(v, &pl)) {
                fprintf(stderr, "%s: --placement: expected gpu, host or both, got '%s'\n", PROG, v);
                return 2;
            } else {
                want_gpu = pl == DSB_PIPE_GPU;
                want_host = pl == DSB_PIPE_HOST;
            }
        } else if (arg_is(a, "--requests")) {
            if (arg_u32(PROG, "--requests", v, 0, 100000000, &requests)) return 2;
            if (requests && requests < 2000) {
                fprintf(stderr, "%s: --requests: expected 0 (auto) or at least 2000, got '%s'\n",
                        PROG, v);
                return 2;
            }
        } else if (arg_is(a, "--unloaded")) {
            if (arg_u32(PROG, "--unloaded", v, 10, 100000, &unloaded)) return 2;
        } else if (arg_is(a, "--smem")) {
            if (arg_bytes(PROG, "--smem", v, &smem)) return 2;
            if (smem < 8192 || smem > 227 * 1024 || smem % 128) {
                fprintf(stderr, "%s: --smem: expected a multiple of 128 in 8 KiB .. 227 KiB, got "
                                "'%s'\n", PROG, v);
                return 2;
            }
        } else if (arg_is(a, "--reserve")) {
            if (arg_u32(PROG, "--reserve", v, 0, 64, &reserve)) return 2;
        } else if (arg_is(a, "--workers")) {
            if (arg_u32(PROG, "--workers", v, 0, 100000, &max_workers)) return 2;
        } else if (arg_is(a, "--seed")) {
            if (arg_u64(PROG, "--seed", v, 0, UINT64_MAX, &seed)) return 2;
        } else if (arg_is(a, "--dt")) {
            if (arg_f64(PROG, "--dt", v, 1e-6, 100.0, &dt)) return 2;
        } else if (arg_is(a, "--sums")) {
            if ((nsums = dsb_gpu_sums_arg(PROG, "--sums", v, sums_list)) < 0) return 2;
        } else if (arg_is(a, "--json")) {
            json_path = v;
        } else {
            fprintf(stderr, "%s: unknown option '%s'\n", PROG, a);
            usage(stderr);
            return 2;
        }
    }
    if (!table4 && (uint64_t)one.B * dsb_padded_n(one.n) > 4096u) {
        fprintf(stderr, "%s: --B %u with --n %u: B * n_p = %u exceeds one block's 4096 pairs\n",
                PROG, one.B, one.n, one.B * dsb_padded_n(one.n));
        return 2;
    }
    config cfgs[N_PAPER];
    uint32_t ncfg = 0;
    if (table4) {
        for (size_t i = 0; i < N_PAPER; i++) {
            config c = {PAPER[i].f, PAPER[i].n, 8, PAPER[i].K};
            cfgs[ncfg++] = c;
        }
    } else {
        cfgs[ncfg++] = one;
    }
    FILE *jf = NULL;
    if (json_path && !(jf = fopen(json_path, "w"))) {
        fprintf(stderr, "%s: --json: cannot open '%s' for writing\n", PROG, json_path);
        return 2;
    }

    dsb_pipe_placement pls[2];
    int npl = 0;
    if (want_gpu) pls[npl++] = DSB_PIPE_GPU;
    if (want_host) pls[npl++] = DSB_PIPE_HOST;
    result *res = cm_calloc((size_t)ncfg * npl * (size_t)nsums, sizeof *res);
    uint32_t nres = 0;
    int status = 0;
    char device[256] = "";
    uint32_t bps = 0, sms = 0;
    int regs = -1, local = -1;
    bench_progress_t prog;
    bench_progress_start(&prog, "pipeline configurations", (uint64_t)ncfg * npl * nsums);
    for (int ks = 0; ks < npl * nsums && !status; ks++) {
        const int k = ks % npl, sv = sums_list[ks / npl];
        dsb_pipe_config pc;
        dsb_pipe_config_default(&pc);
        pc.placement = pls[k];
        pc.sums = sv;
        pc.smem_bytes = (uint32_t)smem;
        pc.reserve = reserve;
        pc.max_workers = max_workers;
        dsb_pipe *p;
        cm_err err;
        if (dsb_pipe_create(&pc, &p, &err)) {
            fprintf(stderr, "%s: %s\n", PROG, err.msg);
            status = 1;
            break;
        }
        snprintf(device, sizeof device, "%s", dsb_pipe_device_name(p));
        bps = dsb_pipe_blocks_per_sm(p);
        sms = dsb_pipe_sms(p);
        dsb_pipe_worker_regs(p, &regs, &local);
        for (uint32_t i = 0; i < ncfg; i++) {
            result *r = &res[nres];
            if (run_config(p, pls[k], &cfgs[i], requests, unloaded, seed, (float)dt, r, &err)) {
                fprintf(stderr, "%s: %s\n", PROG, err.msg);
                status = 1;
                break;
            }
            r->pl = pls[k];
            r->sums = sv;
            if (!r->ok) {
                fprintf(stderr, "%s: %s %s n=%u K=%u: %llu of %llu requests answered\n", PROG,
                        dsb_pipe_placement_name(r->pl), dsb_format_name(r->c.f), r->c.n, r->c.K,
                        (unsigned long long)r->answered, (unsigned long long)r->requests);
                status = 1;
            }
            nres++;
            bench_progress(&prog, nres);
        }
        dsb_pipe_destroy(p);
    }
    bench_progress_end(&prog, nres);

    printf("# dsb bench pipeline: %s, %u SMs x %u workers/SM, S = %u B, worker %d registers, "
           "%d B local/thread\n",
           device, sms, bps, (unsigned)smem, regs, local);
    printf("%-5s %-6s %-8s %4s %3s %4s %4s %9s %9s %9s %6s %9s %9s %7s %7s | %9s %9s | %9s %9s "
           "%7s %8s\n", "place", "sums", "format", "n", "B", "K", "N_w", "tsolve_us", "bound_k", "kreq/s",
           "%bound", "p50_us", "p99_us", "drops", "cpu_us", "paper_k", "paper_p99", "tsl_mean",
           "bound_l_k", "%bnd_l", "out_us");
    for (uint32_t i = 0; i < nres; i++) {
        const result *r = &res[i];
        const paper_row *pr = paper_find(r->c.f, r->c.n, r->c.B, r->c.K);
        double pk = pr ? (r->pl == DSB_PIPE_GPU ? pr->gpu_k : pr->host_k) : NAN;
        double pp = pr ? (r->pl == DSB_PIPE_GPU ? pr->gpu_p99 : pr->host_p99) : NAN;
        printf("%-5s %-6s %-8s %4u %3u %4u %4u %9.1f %9.0f %9.0f %5.1f%% %9.1f %9.1f %7llu %7.2f | "
               "%9.0f %9.1f | %9.1f %9.0f %6.1f%% %8.2f\n",
               dsb_pipe_placement_name(r->pl), dsb_gpu_sums_name(r->sums), dsb_format_name(r->c.f), r->c.n, r->c.B, r->c.K,
               r->workers, r->t_solve_us, r->bound_k, r->kreqs, 100.0 * r->kreqs / r->bound_k,
               r->p50_us, r->p99_us, (unsigned long long)r->dropped,
               r->pl == DSB_PIPE_HOST ? r->cpu_us_per_req : 0.0, pk, pp, r->tl_mean_us, r->bound_l_k,
               100.0 * r->kreqs / r->bound_l_k, r->outside_us);
    }
    if (jf) {
        json_w w;
        json_init(&w, jf);
        json_obj_begin(&w);
        json_kv_str(&w, "bench", "pipeline");
        bench_json_machine(&w);
        json_kv_str(&w, "device", device);
        json_kv_u64(&w, "sms", sms);
        json_kv_u64(&w, "blocks_per_sm", bps);
        json_kv_u64(&w, "smem_bytes", smem);
        json_kv_u64(&w, "reserve", reserve);
        json_kv_u64(&w, "max_workers", max_workers);
        json_kv_i64(&w, "worker_registers", regs);
        json_kv_i64(&w, "worker_local_bytes", local);
        json_key(&w, "results");
        json_arr_begin(&w);
        for (uint32_t i = 0; i < nres; i++) {
            const result *r = &res[i];
            const paper_row *pr = paper_find(r->c.f, r->c.n, r->c.B, r->c.K);
            json_obj_begin(&w);
            json_kv_str(&w, "placement", dsb_pipe_placement_name(r->pl));
            json_kv_str(&w, "sums", dsb_gpu_sums_name(r->sums));
            json_kv_str(&w, "format", dsb_format_name(r->c.f));
            json_kv_u64(&w, "n", r->c.n);
            json_kv_u64(&w, "B", r->c.B);
            json_kv_u64(&w, "K", r->c.K);
            json_kv_u64(&w, "workers", r->workers);
            json_kv_f64(&w, "t_solve_us", r->t_solve_us);
            json_kv_f64(&w, "bound_kreq_s", r->bound_k);
            json_kv_f64(&w, "kreq_s", r->kreqs);
            json_kv_f64(&w, "p50_us", r->p50_us);
            json_kv_f64(&w, "p99_us", r->p99_us);
            json_kv_u64(&w, "requests", r->requests);
            json_kv_u64(&w, "answered", r->answered);
            json_kv_u64(&w, "dropped", r->dropped);
            json_kv_f64(&w, "seconds", r->seconds);
            json_kv_f64(&w, "cpu_us_per_req", r->pl == DSB_PIPE_HOST ? r->cpu_us_per_req : NAN);
            json_kv_f64(&w, "t_solve_loaded_us", r->tl_us);
            json_kv_f64(&w, "t_solve_loaded_mean_us", r->tl_mean_us);
            json_kv_f64(&w, "bound_loaded_kreq_s", r->bound_l_k);
            json_kv_f64(&w, "outside_solve_us", r->outside_us);
            if (pr) {
                json_kv_f64(&w, "paper_kreq_s", r->pl == DSB_PIPE_GPU ? pr->gpu_k : pr->host_k);
                json_kv_f64(&w, "paper_p99_us", r->pl == DSB_PIPE_GPU ? pr->gpu_p99 : pr->host_p99);
                json_kv_f64(&w, "paper_bound_kreq_s", pr->bound_k);
            }
            json_obj_end(&w);
        }
        json_arr_end(&w);
        json_obj_end(&w);
        fputc('\n', jf);
        fclose(jf);
    }
    free(res);
    return status;
}
