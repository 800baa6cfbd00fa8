/* dak profile: measures B_h, B_g and bf16 GEMM rates per shape on this GPU
 * and writes the profile file that `dak plan --profile` reads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "common/args.h"
#include "common/bench.h"
#include "common/error.h"
#include "common/json.h"
#include "dak/model_config.h"
#include "dak/planner.h"

static const char *prog = "dak profile";

/* Linear shapes (m = out features, k = in features) of OPT-6.7B, OPT-30B and
 * Llama-2-7B (configs/), lm_head included. */
static const uint64_t default_shapes[][2] = {
    {4096, 4096},  {16384, 4096}, {4096, 16384}, {50272, 4096}, /* OPT-6.7B */
    {7168, 7168},  {28672, 7168}, {7168, 28672}, {50272, 7168}, /* OPT-30B */
    {11008, 4096}, {4096, 11008}, {32000, 4096},                /* Llama-2-7B (+ 4096^2) */
};
static const uint64_t default_ns[] = {1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 16384};

static void usage(FILE *o)
{
    fprintf(o,
            "usage: dak profile [--out FILE] [--device I] [--reps N] [--host-size BYTES]\n"
            "                   [--hbm-size BYTES] [--config FILE]... [--n LIST]\n\n"
            "  --out FILE        profile JSON to write (default dak-profile.json; '-' stdout)\n"
            "  --device I        CUDA device (default 0)\n"
            "  --reps N          timed repetitions per figure, median kept (default 10)\n"
            "  --host-size BYTES pinned host buffer for B_h (default 1GiB)\n"
            "  --hbm-size BYTES  HBM buffer for B_g (default 4GiB)\n"
            "  --config FILE     profile the linear shapes of this config.json (repeatable;\n"
            "                    default: OPT-6.7B, OPT-30B and Llama-2-7B shapes)\n"
            "  --n LIST          token counts n, comma separated (default "
            "1,8,16,...,4096,16384)\n");
}

static int add_shape(uint64_t (*sh)[2], size_t *n, size_t cap, uint64_t m, uint64_t k)
{
    for (size_t i = 0; i < *n; i++)
        if (sh[i][0] == m && sh[i][1] == k) return 0;
    if (*n >= cap) return -1;
    sh[*n][0] = m, sh[*n][1] = k;
    (*n)++;
    return 0;
}

int cmd_profile(int argc, char **argv)
{
    const char *out = "dak-profile.json";
    const char *configs[16];
    int n_configs = 0;
    uint32_t device = 0, reps = 10;
    uint64_t host_size = UINT64_C(1) << 30, hbm_size = UINT64_C(4) << 30;
    uint64_t ns[64];
    size_t n_ns = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (arg_is(a, "--out")) {
            if (!(v = arg_value(prog, argc, argv, &i))) return 2;
            out = v;
        } else if (arg_is(a, "--device")) {
            if (!(v = arg_value(prog, argc, argv, &i))) return 2;
            if (arg_u32(prog, "--device", v, 0, 63, &device)) return 2;
        } else if (arg_is(a, "--reps")) {
            if (!(v = arg_value(prog, argc, argv, &i))) return 2;
            if (arg_u32(prog, "--reps", v, 1, 10000, &reps)) return 2;
        } else if (arg_is(a, "--host-size")) {
            if (!(v = arg_value(prog, argc, argv, &i))) return 2;
            if (arg_bytes(prog, "--host-size", v, &host_size)) return 2;
            if (host_size < (1u << 20) || host_size % 16) {
                fprintf(stderr, "%s: --host-size: expected a multiple of 16 bytes, >= 1MiB\n", prog);
                return 2;
            }
        } else if (arg_is(a, "--hbm-size")) {
            if (!(v = arg_value(prog, argc, argv, &i))) return 2;
            if (arg_bytes(prog, "--hbm-size", v, &hbm_size)) return 2;
            if (hbm_size < (1u << 20) || hbm_size % 16) {
                fprintf(stderr, "%s: --hbm-size: expected a multiple of 16 bytes, >= 1MiB\n", prog);
                return 2;
            }
        } else if (arg_is(a, "--config")) {
            if (!(v = arg_value(prog, argc, argv, &i))) return 2;
            if (n_configs == 16) {
                fprintf(stderr, "%s: --config: expected at most 16 of them\n", prog);
                return 2;
            }
            configs[n_configs++] = v;
        } else if (arg_is(a, "--n")) {
            if (!(v = arg_value(prog, argc, argv, &i))) return 2;
            char buf[512];
            snprintf(buf, sizeof buf, "%s", v);
            n_ns = 0;
            for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
                if (n_ns == 64) {
                    fprintf(stderr, "%s: --n: expected at most 64 values\n", prog);
                    return 2;
                }
                if (arg_u64(prog, "--n", tok, 1, 1 << 20, &ns[n_ns])) return 2;
                n_ns++;
            }
            if (!n_ns) {
                fprintf(stderr, "%s: --n: expected a comma-separated list, got '%s'\n", prog, v);
                return 2;
            }
        } else {
            fprintf(stderr, "%s: unknown option '%s'\n", prog, a);
            usage(stderr);
            return 2;
        }
    }
    if (!n_ns) {
        n_ns = sizeof default_ns / sizeof default_ns[0];
        memcpy(ns, default_ns, sizeof default_ns);
    }
    uint64_t shapes[128][2];
    size_t n_shapes = 0;
    cm_err err = {{0}};
    if (!n_configs) {
        for (size_t s = 0; s < sizeof default_shapes / sizeof default_shapes[0]; s++)
            add_shape(shapes, &n_shapes, 128, default_shapes[s][0], default_shapes[s][1]);
    }
    for (int c = 0; c < n_configs; c++) {
        dak_model_config cfg;
        dak_profile dp;
        dak_op *ops;
        size_t n;
        if (dak_config_load(configs[c], &cfg, &err)) {
            fprintf(stderr, "%s: %s\n", prog, err.msg);
            return 1;
        }
        dak_profile_default(&dp);
        if (dak_model_ops(&cfg, 1, 1, DAK_PLAN_UNIT_ROWS, &dp, &ops, &n, &err)) {
            fprintf(stderr, "%s: %s\n", prog, err.msg);
            return 1;
        }
        for (size_t i = 0; i < n; i++)
            if (ops[i].kind == DAK_OP_LINEAR &&
                add_shape(shapes, &n_shapes, 128, ops[i].m, ops[i].k)) {
                fprintf(stderr, "%s: too many distinct shapes (limit 128)\n", prog);
                free(ops);
                return 2;
            }
        free(ops);
    }

    dak_profile_opts o = {(int)device, host_size, hbm_size, reps, n_shapes,
                          (const uint64_t(*)[2])shapes, n_ns, ns, 1};
    dak_profile p;
    dak_profile_extra x;
    double t0 = bench_now_s();
    if (dak_profile_measure(&o, &p, &x, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    double wall = bench_now_s() - t0;
    printf("device: %s, %d SMs\n", x.device_name, x.sm_count);
    printf("%-44s %12s\n", "path", "rate");
    printf("%-44s %9.2f GB/s  (%u blocks)\n", "host pinned -> kernel (zero-copy) = B_h",
           x.host_read_kernel / 1e9, x.host_blocks);
    printf("%-44s %9.2f GB/s\n", "cudaMemcpy H2D pinned", x.h2d_memcpy / 1e9);
    printf("%-44s %9.2f GB/s\n", "cudaMemcpy D2H pinned", x.d2h_memcpy / 1e9);
    printf("%-44s %9.1f GB/s  (%u blocks)\n", "HBM -> kernel = B_g", x.hbm_read / 1e9,
           x.hbm_blocks);
    printf("%-44s %9.1f TFLOP/s\n", "bf16 GEMM, best measured", p.peak_flops / 1e12);
    printf("\n%7s %7s %7s %14s %14s\n", "m", "k", "n", "TFLOP/s (HBM)", "TFLOP/s (used)");
    for (size_t i = 0; i < p.n_gemm; i++)
        printf("%7llu %7llu %7llu %14.1f %14.1f\n", (unsigned long long)p.gemm[i].m,
               (unsigned long long)p.gemm[i].k, (unsigned long long)p.gemm[i].n,
               p.gemm[i].flops_hbm / 1e12, p.gemm[i].flops / 1e12);
    printf("profiled in %.1f s\n", wall);

    FILE *f = strcmp(out, "-") ? fopen(out, "w") : stdout;
    if (!f) {
        fprintf(stderr, "%s: --out %s: cannot open for writing\n", prog, out);
        dak_profile_free(&p);
        return 1;
    }
    json_w w;
    json_init(&w, f);
    json_obj_begin(&w);
    dak_profile_json(&p, &w);
    json_kv_str(&w, "device", x.device_name);
    json_kv_i64(&w, "sm_count", x.sm_count);
    json_kv_f64(&w, "d2h_memcpy_gbs", x.d2h_memcpy / 1e9);
    json_kv_u64(&w, "host_read_blocks", x.host_blocks);
    json_kv_u64(&w, "hbm_read_blocks", x.hbm_blocks);
    json_kv_u64(&w, "host_bytes", host_size);
    json_kv_u64(&w, "hbm_bytes", hbm_size);
    json_kv_u64(&w, "reps", reps);
    json_kv_str(&w, "gemm_note",
                "tflops = max(tflops_hbm, rate with an L2-resident 16 MiB weight slice "
                "broadcast over a strided batch); cuBLAS bf16, fp32 accumulate, TN layout");
    json_key(&w, "machine");
    json_obj_begin(&w);
    bench_json_machine(&w);
    json_obj_end(&w);
    json_obj_end(&w);
    fputc('\n', f);
    if (f != stdout) fclose(f);
    dak_profile_free(&p);
    return 0;
}
