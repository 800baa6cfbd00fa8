/* `dsb bench solve`: the paper's Table III (seed 000, Sec. VI-C, VII-B) on this
 * GPU: one request per launch, no network.  For every configuration of the
 * grid (format x n x B x K, admitted by Eq. (6) under a shared-memory limit):
 *   solve   in-kernel solve time from %globaltimer (reply stamps)
 *   launch  launch to completion from CUDA events
 *   rt      host round trip H2D(field) + launch + D2H(reply), host clock
 *   mapped  launch with field and reply in mapped pinned host memory, the host
 *           polling the reply (no copies issued)
 * each as the median over --requests requests; the launch and rt overheads as
 * the median of the per-request differences (x - solve of the same request),
 * the mapped overhead as median(mapped) - median(solve), because there the
 * kernel's own field reads over PCIe fall inside its timed interval.  With
 * --sums cuda,tensor every configuration runs on both coupling-sum engines,
 * one after the other, and a last table gives the tensor / CUDA-core speed-up
 * of the in-kernel solve.  Workloads of Sec. VI-B: SK (PM1),
 * 5% ternary (TERNARY), the int8 portfolio with 256 field vectors (INT8); model
 * seed 1000 + m, request i seed 7919 + i. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
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
#include "dsb/solve.h"

static const char *PROG = "dsb bench solve";

/* Paper Table III, in-kernel solve p50 (us) for K = 50, 100, 200, 400, and the
 * launch / round-trip overhead columns (median over K); RTX PRO 6000
 * Blackwell, 188 SMs. */
static const struct {
    const char *fmt;
    uint32_t n, B;
    double solve[4], launch, rt;
} paper[] = {
    {"pm1", 64, 1, {31.3, 58.6, 112.8, 221.1}, 6.0, 13.7},
    {"pm1", 64, 8, {41.7, 77.7, 149.6, 293.2}, 5.8, 12.4},
    {"pm1", 64, 32, {89.9, 168.7, 326.5, 641.5}, 6.1, 14.2},
    {"pm1", 128, 1, {32.2, 59.8, 114.9, 225.1}, 6.1, 13.5},
    {"pm1", 128, 8, {57.9, 108.1, 208.7, 409.7}, 5.7, 14.1},
    {"pm1", 128, 32, {166.6, 313.3, 606.1, 1192.5}, 6.3, 15.5},
    {"pm1", 192, 1, {34.9, 64.7, 124.3, 243.4}, 6.0, 13.1},
    {"pm1", 192, 8, {81.2, 152.9, 296.2, 582.6}, 6.1, 12.0},
    {"pm1", 256, 1, {35.4, 65.2, 124.9, 244.4}, 6.5, 12.3},
    {"pm1", 256, 8, {100.8, 190.3, 369.1, 726.7}, 6.6, 12.3},
    {"pm1", 512, 1, {50.9, 93.4, 178.1, 347.8}, 5.6, 15.5},
    {"pm1", 512, 8, {224.4, 428.7, 837.2, 1654.7}, 6.0, 13.3},
    {"ternary", 64, 1, {35.5, 62.8, 117.7, 227.2}, 5.7, 15.2},
    {"ternary", 64, 8, {47.3, 84.0, 157.5, 304.4}, 5.7, 14.5},
    {"ternary", 64, 32, {103.0, 188.3, 358.9, 699.5}, 5.9, 12.5},
    {"ternary", 128, 1, {36.4, 64.6, 120.9, 233.5}, 6.0, 13.0},
    {"ternary", 128, 8, {67.0, 120.3, 227.1, 440.3}, 5.7, 14.7},
    {"ternary", 128, 32, {197.9, 370.4, 713.8, 1408.1}, 6.4, 13.1},
    {"ternary", 192, 1, {39.8, 70.6, 132.0, 254.1}, 6.0, 16.0},
    {"ternary", 192, 8, {99.6, 183.8, 352.2, 689.2}, 6.0, 13.3},
    {"ternary", 256, 1, {41.1, 72.6, 135.5, 261.5}, 6.5, 12.2},
    {"ternary", 256, 8, {121.9, 227.0, 437.1, 857.4}, 6.0, 11.6},
    {"int8", 64, 1, {34.5, 60.9, 113.5, 218.8}, 6.2, 13.4},
    {"int8", 64, 8, {48.5, 87.1, 164.4, 318.9}, 6.0, 12.3},
    {"int8", 64, 32, {111.3, 206.8, 398.0, 780.3}, 6.2, 13.4},
    {"int8", 128, 1, {38.1, 66.5, 123.4, 237.2}, 6.2, 11.8},
    {"int8", 128, 8, {82.5, 151.7, 290.1, 566.9}, 5.8, 14.0},
    {"int8", 128, 32, {254.3, 487.1, 953.2, 1885.1}, 6.2, 17.2},
    {"int8", 192, 1, {44.9, 78.8, 146.7, 282.3}, 6.0, 12.9},
    {"int8", 192, 8, {131.1, 246.2, 476.4, 936.9}, 5.8, 14.1},
};

static double paper_solve(dsb_format f, uint32_t n, uint32_t B, uint32_t K)
{
    static const uint32_t Ks[4] = {50, 100, 200, 400};
    for (size_t i = 0; i < sizeof paper / sizeof paper[0]; i++)
        if (!strcmp(paper[i].fmt, dsb_format_name(f)) && paper[i].n == n && paper[i].B == B)
            for (int k = 0; k < 4; k++)
                if (Ks[k] == K) return paper[i].solve[k];
    return NAN;
}

static void usage(FILE *o)
{
    fprintf(o,
            "usage: dsb bench solve [options]   (seed 000, Table III; needs the GPU build)\n"
            "  --format LIST      pm1,ternary,int8 (default: all three)\n"
            "  --n LIST           variables (default 64,128,192,256,512)\n"
            "  --B LIST           replicas (default 1,8,32)\n"
            "  --K LIST           steps (default 50,100,200,400)\n"
            "  --requests N       timed requests per configuration and measurement (default 500)\n"
            "  --warmup N         untimed requests before each measurement (default 20)\n"
            "  --smem-limit BYTES admit configurations whose Eq. (6) size is at most this\n"
            "                     (default 48KiB, the paper's rule of Sec. IV-A; 0: device limit)\n"
            "  --sums LIST        coupling-sum engines auto,cuda,tensor (default auto); each\n"
            "                     configuration runs on each listed engine in turn (tensor only\n"
            "                     where n_p/16 x ceil(B/8) <= 32)\n"
            "  --variant NAME     none|no-barrier|double-sum|no-sum|double-update (default none;\n"
            "                     the others give wrong answers and only time a stage)\n"
            "  --verify N         compare the best energy of the first N requests of each\n"
            "                     configuration with the CPU reference (default 1; none for variants)\n"
            "  --json FILE        write one JSON document with every configuration\n");
}

#define MAXL 16

/* Parses a comma-separated list of integers in [lo, hi]. */
static int parse_list(const char *flag, const char *v, uint32_t lo, uint32_t hi, uint32_t *out,
                      int *count)
{
    char buf[256];
    if (strlen(v) >= sizeof buf) {
        fprintf(stderr, "%s: %s: list too long (at most %zu characters)\n", PROG, flag,
                sizeof buf - 1);
        return -1;
    }
    size_t len = strlen(v);
    if (len == 0 || v[0] == ',' || v[len - 1] == ',' || strstr(v, ",,")) {
        fprintf(stderr, "%s: %s: expected a comma-separated list of integers, got '%s'\n", PROG,
                flag, v);
        return -1;
    }
    strcpy(buf, v);
    *count = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*count >= MAXL) {
            fprintf(stderr, "%s: %s: at most %d values\n", PROG, flag, MAXL);
            return -1;
        }
        if (arg_u32(PROG, flag, t, lo, hi, &out[*count])) return -1;
        (*count)++;
    }
    if (*count == 0) {
        fprintf(stderr, "%s: %s: expected a comma-separated list, got '%s'\n", PROG, flag, v);
        return -1;
    }
    return 0;
}

static double median_diff(const double *a, const double *b, uint32_t n, double *tmp)
{
    for (uint32_t i = 0; i < n; i++) tmp[i] = a[i] - b[i];
    return bench_percentile(tmp, n, 50.0);
}

typedef struct {
    dsb_format f;
    uint32_t n, B, K;
    double solve50, solve99, launch50, launch_over, rt50, rt_over, mapped50, mapped_over,
        mapped_own;
    double paper;
    double cycles50, mhz;
    int regs, row_mode, sums;
    size_t smem, local;
    uint32_t ppt;
    int verified, verify_ok;
} row_result;

/* Builds the Sec. VI-B workload of format f (model seed 1000 + m). */
static int make_instance(dsb_format f, uint32_t n, uint32_t m, dsb_instance *in, cm_err *err)
{
    uint64_t seed = 1000u + m;
    if (f == DSB_FMT_PM1) return dsb_gen_sk(n, seed, in, err);
    if (f == DSB_FMT_TERNARY) return dsb_gen_ternary(n, 0.05, seed, in, err);
    return dsb_gen_portfolio(n, 256, seed, in, err);
}

int cmd_bench_solve(int argc, char **argv)
{
    uint32_t fl[3] = {DSB_FMT_PM1, DSB_FMT_TERNARY, DSB_FMT_INT8};
    int nf = 3;
    uint32_t ns[MAXL] = {64, 128, 192, 256, 512}, Bs[MAXL] = {1, 8, 32},
             Ks[MAXL] = {50, 100, 200, 400};
    int nn = 5, nB = 3, nK = 4;
    uint32_t requests = 500, warmup = 20, verify = 1;
    uint64_t smem_limit = 48u * 1024u;
    int variant = DSB_GPU_VAR_NONE;
    int sums_list[DSB_GPU_SUMS_COUNT] = {DSB_GPU_SUMS_AUTO}, nsums = 1;
    const char *json_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (a[0] != '-' || a[1] != '-') {
            fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", PROG, a);
            return 2;
        }
        if (!(v = arg_value(PROG, argc, argv, &i))) return 2;
        if (arg_is(a, "--format")) {
            char buf[64];
            if (strlen(v) >= sizeof buf) {
                fprintf(stderr, "%s: --format: expected a list of pm1,ternary,int8, got '%s'\n",
                        PROG, v);
                return 2;
            }
            strcpy(buf, v);
            nf = 0;
            for (char *save = NULL, *t = strtok_r(buf, ",", &save); t;
                 t = strtok_r(NULL, ",", &save)) {
                dsb_format f;
                if (dsb_format_parse(t, &f) || f == DSB_FMT_AUTO || nf >= 3) {
                    fprintf(stderr,
                            "%s: --format: expected up to three of pm1, ternary, int8, got '%s'\n",
                            PROG, t);
                    return 2;
                }
                fl[nf++] = (uint32_t)f;
            }
            if (nf == 0) {
                fprintf(stderr, "%s: --format: expected pm1, ternary or int8, got '%s'\n", PROG, v);
                return 2;
            }
        } else if (arg_is(a, "--n")) {
            if (parse_list("--n", v, 1, 4096, ns, &nn)) return 2;
        } else if (arg_is(a, "--B")) {
            if (parse_list("--B", v, 1, 4096, Bs, &nB)) return 2;
        } else if (arg_is(a, "--K")) {
            if (parse_list("--K", v, 1, 1000000, Ks, &nK)) return 2;
        } else if (arg_is(a, "--requests")) {
            if (arg_u32(PROG, "--requests", v, 1, 1000000, &requests)) return 2;
        } else if (arg_is(a, "--warmup")) {
            if (arg_u32(PROG, "--warmup", v, 0, 1000000, &warmup)) return 2;
        } else if (arg_is(a, "--verify")) {
            if (arg_u32(PROG, "--verify", v, 0, 1000000, &verify)) return 2;
        } else if (arg_is(a, "--smem-limit")) {
            if (arg_bytes(PROG, "--smem-limit", v, &smem_limit)) return 2;
        } else if (arg_is(a, "--variant")) {
            if ((variant = dsb_gpu_variant_parse(v)) < 0) {
                fprintf(stderr,
                        "%s: --variant: expected none, no-barrier, double-sum, no-sum or "
                        "double-update, got '%s'\n",
                        PROG, v);
                return 2;
            }
        } else if (arg_is(a, "--sums")) {
            if ((nsums = dsb_gpu_sums_arg(PROG, "--sums", v, sums_list)) < 0) return 2;
        } else if (arg_is(a, "--json")) {
            json_path = v;
        } else {
            fprintf(stderr, "%s: unknown option '%s' (see --help)\n", PROG, a);
            return 2;
        }
    }
    if (verify > requests) verify = requests;
    if (variant != DSB_GPU_VAR_NONE) verify = 0;
    for (int q = 0; q < nsums; q++)
        if (sums_list[q] == DSB_GPU_SUMS_TENSOR && variant != DSB_GPU_VAR_NONE) {
            fprintf(stderr, "%s: --variant %s: the timing variants exist only with CUDA-core "
                            "sums (--sums cuda)\n",
                    PROG, dsb_gpu_variant_name(variant));
            return 2;
        }

    cm_err err = {{0}};
    if (!dsb_gpu_available(&err)) {
        fprintf(stderr, "%s: %s\n", PROG, err.msg);
        return 1;
    }
    FILE *jf = NULL;
    if (json_path && !(jf = fopen(json_path, "w"))) {
        fprintf(stderr, "%s: --json: cannot open '%s' for writing\n", PROG, json_path);
        return 2;
    }

    /* the admitted grid */
    size_t maxrows = (size_t)nf * nn * nB * nK * (size_t)nsums, nrows = 0;
    row_result *rows = cm_calloc(maxrows, sizeof *rows);
    for (int f = 0; f < nf; f++)
        for (int i = 0; i < nn; i++)
            for (int j = 0; j < nB; j++) {
                size_t s = dsb_gpu_smem_bytes((dsb_format)fl[f], ns[i], Bs[j]);
                if (s == 0 || (smem_limit && s > smem_limit)) continue;
                if ((dsb_format)fl[f] == DSB_FMT_INT8 && ns[i] > DSB_INT8_MAX_N) continue;
                for (int q = 0; q < nsums; q++) {
                    if (sums_list[q] == DSB_GPU_SUMS_TENSOR &&
                        !dsb_gpu_tensor_fits((dsb_format)fl[f], ns[i], Bs[j]))
                        continue;
                    for (int k = 0; k < nK; k++) {
                        row_result *r = &rows[nrows++];
                        r->f = (dsb_format)fl[f];
                        r->n = ns[i];
                        r->B = Bs[j];
                        r->K = Ks[k];
                        r->sums = sums_list[q];
                    }
                }
            }
    if (nrows == 0) {
        fprintf(stderr, "%s: no configuration of the grid is admitted by Eq. (6) under "
                        "--smem-limit %" PRIu64 " bytes\n", PROG, smem_limit);
        free(rows);
        if (jf) fclose(jf);
        return 2;
    }
    fprintf(stderr, "%s: %zu configurations, %u requests each, variant %s\n", PROG, nrows,
            requests, dsb_gpu_variant_name(variant));

    double *buf = cm_malloc(8u * (size_t)requests * sizeof(double));
    int64_t *best = cm_malloc((size_t)requests * sizeof(int64_t));
    dsb_gpu_bench b;
    memset(&b, 0, sizeof b);
    b.requests = requests;
    b.warmup = warmup;
    b.variant = variant;
    b.solve_us = buf;
    b.launch_us = buf + requests;
    b.rt_us = buf + 2u * requests;
    b.rt_solve_us = buf + 3u * requests;
    b.mapped_us = buf + 4u * requests;
    b.mapped_solve_us = buf + 5u * requests;
    b.best_energy2 = best;
    double *tmp = buf + 6u * requests;
    b.cycles = buf + 7u * requests;

    bench_progress_t prog;
    bench_progress_start(&prog, "bench solve", nrows);
    int failed = 0, mismatch = 0;
    dsb_instance in;
    dsb_model model;
    int have = 0;
    uint32_t model_index = 0;
    for (size_t ri = 0; ri < nrows && !failed; ri++) {
        row_result *r = &rows[ri];
        if (!have || ri == 0 || rows[ri - 1].f != r->f || rows[ri - 1].n != r->n) {
            if (have) {
                dsb_model_free(&model);
                dsb_instance_free(&in);
                have = 0;
            }
            if (make_instance(r->f, r->n, model_index++, &in, &err) ||
                dsb_model_pack(in.J, in.n, r->f, &model, &err)) {
                fprintf(stderr, "%s: instance %s n=%u: %s\n", PROG, dsb_format_name(r->f), r->n,
                        err.msg);
                failed = 1;
                break;
            }
            have = 1;
        }
        dsb_params p;
        dsb_params_default(&p);
        p.replicas = r->B;
        p.steps = r->K;
        p.seed = 7919;
        b.sums = r->sums;
        const int16_t *fields = in.fields ? in.fields : in.h;
        uint32_t n_fields = in.fields ? in.n_fields : 1u;
        if (dsb_gpu_bench_solve(&model, fields, n_fields, &p, &b, &err)) {
            fprintf(stderr, "%s: %s n=%u B=%u K=%u sums %s: %s\n", PROG, dsb_format_name(r->f),
                    r->n, r->B, r->K, dsb_gpu_sums_name(r->sums), err.msg);
            failed = 1;
            break;
        }
        r->solve50 = bench_median(b.solve_us, requests);
        memcpy(tmp, b.solve_us, requests * sizeof(double));
        r->solve99 = bench_percentile(tmp, requests, 99.0);
        r->launch50 = bench_median(b.launch_us, requests);
        r->launch_over = median_diff(b.launch_us, b.solve_us, requests, tmp);
        r->rt50 = bench_median(b.rt_us, requests);
        r->rt_over = median_diff(b.rt_us, b.rt_solve_us, requests, tmp);
        r->mapped50 = bench_median(b.mapped_us, requests);
        /* the kernel reads the field over PCIe inside its own timed interval,
         * so the mapped path is charged against the device-resident solve */
        r->mapped_own = median_diff(b.mapped_us, b.mapped_solve_us, requests, tmp);
        r->mapped_over = r->mapped50 - r->solve50;
        r->paper = paper_solve(r->f, r->n, r->B, r->K);
        r->regs = b.regs;
        r->smem = b.smem_bytes;
        r->local = b.local_bytes;
        r->ppt = b.pairs_per_thread;
        r->row_mode = b.row_mode;
        r->cycles50 = bench_median(b.cycles, requests);
        r->mhz = r->cycles50 / r->solve50;
        /* CPU reference for the first requests */
        r->verify_ok = 1;
        for (uint32_t q = 0; q < verify; q++) {
            dsb_params pq = p;
            pq.seed = p.seed + q;
            dsb_result ref;
            dsb_result_init(&ref, r->n, r->B, 0);
            if (dsb_solve_cpu(&model, fields + (size_t)(q % n_fields) * r->n, &pq, 0, &ref, &err)) {
                fprintf(stderr, "%s: cpu reference: %s\n", PROG, err.msg);
                failed = 1;
            } else if (ref.best_energy2 != best[q]) {
                fprintf(stderr,
                        "%s: %s n=%u B=%u K=%u sums %s request %u: GPU 2E %" PRId64
                        " != CPU reference %" PRId64 "\n",
                        PROG, dsb_format_name(r->f), r->n, r->B, r->K,
                        dsb_gpu_sums_name(r->sums), q, best[q], ref.best_energy2);
                r->verify_ok = 0;
                mismatch = 1;
            }
            r->verified++;
            dsb_result_free(&ref);
        }
        bench_progress(&prog, ri + 1);
    }
    bench_progress_end(&prog, nrows);
    if (have) {
        dsb_model_free(&model);
        dsb_instance_free(&in);
    }

    /* per configuration */
    printf("# %s, variant %s, %u requests, medians in us (paper: RTX PRO 6000, Table III)\n",
           b.device, dsb_gpu_variant_name(variant), requests);
    printf("%-8s %4s %3s %4s %-6s %6s %4s %3s %2s | %9s %9s %8s %5s | %8s %8s %8s | %8s\n",
           "format", "n", "B", "K", "sums", "smem", "regs", "ppt", "rm", "solve", "solve99",
           "paper", "MHz", "launch-", "rt-", "mapped-", "ok");
    size_t done = 0;
    for (size_t ri = 0; ri < nrows; ri++) {
        const row_result *r = &rows[ri];
        if (r->regs == 0) continue;
        done++;
        printf("%-8s %4u %3u %4u %-6s %6zu %4d %3u %2d | %9.1f %9.1f %8.1f %5.0f | %8.1f %8.1f "
               "%8.1f | %8s\n",
               dsb_format_name(r->f), r->n, r->B, r->K, dsb_gpu_sums_name(r->sums), r->smem,
               r->regs, r->ppt, r->row_mode,
               r->solve50, r->solve99, r->paper, r->mhz, r->launch_over, r->rt_over,
               r->mapped_over,
               r->verified ? (r->verify_ok ? "cpu=gpu" : "MISMATCH") : "-");
    }

    /* paper layout: one line per (format, n, B) */
    printf("\n%-8s %4s %3s %-6s | %-40s | %-40s | %-18s %-18s %-18s\n", "format", "n", "B", "sums",
           "solve p50 K=50/100/200/400 (us)", "paper", "launch-solve", "rt-solve",
           "mapped-solve");
    for (size_t ri = 0; ri < done;) {
        size_t rj = ri;
        while (rj < done && rows[rj].f == rows[ri].f && rows[rj].n == rows[ri].n &&
               rows[rj].B == rows[ri].B && rows[rj].sums == rows[ri].sums)
            rj++;
        char s1[128] = "", s2[128] = "";
        double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        double med[3][MAXL];
        for (size_t k = ri; k < rj; k++) {
            char t[32];
            snprintf(t, sizeof t, "%8.1f", rows[k].solve50);
            strncat(s1, t, sizeof s1 - strlen(s1) - 1);
            snprintf(t, sizeof t, "%8.1f", rows[k].paper);
            strncat(s2, t, sizeof s2 - strlen(s2) - 1);
            double v[3] = {rows[k].launch_over, rows[k].rt_over, rows[k].mapped_over};
            for (int c = 0; c < 3; c++) {
                med[c][k - ri] = v[c];
                if (v[c] < lo[c]) lo[c] = v[c];
                if (v[c] > hi[c]) hi[c] = v[c];
            }
        }
        printf("%-8s %4u %3u %-6s | %-40s | %-40s |", dsb_format_name(rows[ri].f), rows[ri].n,
               rows[ri].B, dsb_gpu_sums_name(rows[ri].sums), s1, s2);
        for (int c = 0; c < 3; c++)
            printf(" %4.1f (%4.1f-%4.1f) ", bench_median(med[c], rj - ri), lo[c], hi[c]);
        printf("\n");
        ri = rj;
    }

    /* tensor / CUDA-core speed-up of the same configuration in this run */
    int header = 0;
    for (size_t ri = 0; ri < done; ri++) {
        const row_result *t = &rows[ri];
        if (t->sums != DSB_GPU_SUMS_TENSOR) continue;
        for (size_t rk = 0; rk < done; rk++) {
            const row_result *c = &rows[rk];
            if (c->sums == DSB_GPU_SUMS_TENSOR || c->f != t->f || c->n != t->n || c->B != t->B ||
                c->K != t->K)
                continue;
            if (!header) {
                printf("\n%-8s %4s %3s %4s | %10s %10s %8s   (in-kernel solve p50, us; this run)\n",
                       "format", "n", "B", "K", "cuda", "tensor", "speed-up");
                header = 1;
            }
            printf("%-8s %4u %3u %4u | %10.1f %10.1f %7.2fx\n", dsb_format_name(t->f), t->n,
                   t->B, t->K, c->solve50, t->solve50, c->solve50 / t->solve50);
            break;
        }
    }

    if (jf) {
        json_w w;
        json_init(&w, jf);
        json_obj_begin(&w);
        json_kv_str(&w, "bench", "dsb bench solve");
        json_kv_str(&w, "device", b.device);
        json_kv_str(&w, "variant", dsb_gpu_variant_name(variant));
        json_kv_u64(&w, "requests", requests);
        json_kv_u64(&w, "warmup", warmup);
        json_kv_u64(&w, "smem_limit", smem_limit);
        bench_json_machine(&w);
        json_key(&w, "configs");
        json_arr_begin(&w);
        for (size_t ri = 0; ri < done; ri++) {
            const row_result *r = &rows[ri];
            json_obj_begin(&w);
            json_kv_str(&w, "format", dsb_format_name(r->f));
            json_kv_u64(&w, "n", r->n);
            json_kv_u64(&w, "B", r->B);
            json_kv_u64(&w, "K", r->K);
            json_kv_u64(&w, "smem_bytes", r->smem);
            json_kv_i64(&w, "regs", r->regs);
            json_kv_u64(&w, "local_bytes", r->local);
            json_kv_u64(&w, "pairs_per_thread", r->ppt);
            json_kv_i64(&w, "row_mode", r->row_mode);
            json_kv_str(&w, "sums", dsb_gpu_sums_name(r->sums));
            json_kv_f64(&w, "solve_cycles_p50", r->cycles50);
            json_kv_f64(&w, "sm_clock_mhz", r->mhz);
            json_kv_f64(&w, "solve_us_p50", r->solve50);
            json_kv_f64(&w, "solve_us_p99", r->solve99);
            json_kv_f64(&w, "launch_us_p50", r->launch50);
            json_kv_f64(&w, "launch_minus_solve_us_p50", r->launch_over);
            json_kv_f64(&w, "rt_us_p50", r->rt50);
            json_kv_f64(&w, "rt_minus_solve_us_p50", r->rt_over);
            json_kv_f64(&w, "mapped_us_p50", r->mapped50);
            json_kv_f64(&w, "mapped_minus_solve_us_p50", r->mapped_over);
            json_kv_f64(&w, "mapped_minus_own_solve_us_p50", r->mapped_own);
            json_kv_f64(&w, "paper_solve_us_p50", r->paper);
            json_kv_u64(&w, "verified_requests", (uint64_t)r->verified);
            json_kv_bool(&w, "verified_ok", r->verify_ok);
            json_obj_end(&w);
        }
        json_arr_end(&w);
        json_obj_end(&w);
        fputc('\n', jf);
        fclose(jf);
    }
    free(buf);
    free(best);
    free(rows);
    return (failed || mismatch) ? 1 : 0;
}
