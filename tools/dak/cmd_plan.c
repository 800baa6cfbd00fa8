/* dak plan: the per-operation offload plan of one decode step (seed 003,
 * Sec. 4.2): greedy vs uniform, from a config.json, a batch and a length. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "common/args.h"
#include "common/error.h"
#include "common/json.h"
#include "dak/model_config.h"
#include "dak/planner.h"

static const char *prog = "dak plan";

static void usage(FILE *o)
{
    fprintf(o,
            "usage: dak plan --config config.json --batch B (--seq L | --prompt P [--gen G])\n"
            "                [--gpu-mem BYTES | --ratio R] [--reserve BYTES] [--profile FILE]\n"
            "                [--tile-rows N] [--sweep N [--sweep-max R]] [--json FILE]\n\n"
            "  --config FILE    Hugging Face config.json (model_type opt or llama)\n"
            "  --batch B        sequences decoded together (tokens per decode step)\n"
            "  --seq L          KV-cache length per sequence at the planned step\n"
            "  --prompt P       instead of --seq: L = P + G (the paper: P = 32, G = 32)\n"
            "  --gen G          generated tokens (default 32 with --prompt)\n"
            "  --gpu-mem BYTES  GPU memory the model may use (e.g. 40GiB, 96GB): whatever\n"
            "                   of the footprint does not fit goes to host memory\n"
            "  --ratio R        instead: offload fraction R in [0,1] of the plannable bytes\n"
            "                   (weights and KV cache) (default 0)\n"
            "  --reserve BYTES  extra GPU memory to keep free (added to the workspace)\n"
            "  --profile FILE   machine profile from `dak profile` (default: built-in H200\n"
            "                   figures from SPEC.md, B_h 51.1 GB/s, B_g 4.47 TB/s, 790 TFLOP/s)\n"
            "  --tile-rows N    rows of a weight tile, the unit of placement (default 128)\n"
            "  --sweep N        also print greedy vs uniform at ratios 0, R/N, ..., R\n"
            "  --sweep-max R    the last ratio of the sweep (default 1)\n"
            "  --json FILE      write the plan as JSON ('-' for stdout)\n");
}

static void units_str(char *buf, size_t n, const dak_op *op, uint64_t u)
{
    uint64_t q = u / op->repeat, extra = u % op->repeat;
    if (extra == 0) snprintf(buf, n, "%llu", (unsigned long long)q);
    else
        snprintf(buf, n, "%llu|%llux%llu", (unsigned long long)q, (unsigned long long)(q + 1),
                 (unsigned long long)extra);
}

static void plan_json(json_w *w, const char *name, const dak_op *ops, size_t n, const uint64_t *u,
                      double b_h, double b_g)
{
    double t = dak_plan_time(ops, n, u, b_h, b_g), hb = dak_plan_host_bytes(ops, n, u);
    double rd = 0;
    for (size_t i = 0; i < n; i++) rd += dak_op_bytes(&ops[i]) * ops[i].repeat * ops[i].read_frac;
    json_key(w, name);
    json_obj_begin(w);
    json_kv_f64(w, "time_s", t);
    json_kv_f64(w, "eb_gbs", rd / t / 1e9);
    json_kv_u64(w, "host_bytes", (uint64_t)llround(hb));
    json_kv_f64(w, "ratio", hb / dak_ops_total_bytes(ops, n));
    json_key(w, "ops");
    json_arr_begin(w);
    for (size_t i = 0; i < n; i++) {
        json_obj_begin(w);
        json_kv_str(w, "name", ops[i].name);
        json_kv_u64(w, "host_units_total", u[i]);
        json_kv_u64(w, "host_units_per_instance_min", u[i] / ops[i].repeat);
        json_kv_u64(w, "instances_with_one_more", u[i] % ops[i].repeat);
        json_kv_f64(w, "x", dak_op_host_bytes(&ops[i], u[i]) / (dak_op_bytes(&ops[i]) * ops[i].repeat));
        json_kv_f64(w, "time_s", dak_op_time_units(&ops[i], u[i], b_h, b_g));
        json_obj_end(w);
    }
    json_arr_end(w);
    json_obj_end(w);
}

int cmd_plan(int argc, char **argv)
{
    const char *config = NULL, *profile = NULL, *json_path = NULL;
    uint64_t batch = 0, seq = 0, prompt = 0, gen = 32, gpu_mem = 0, reserve = 0;
    uint32_t sweep = 0, tile_rows = DAK_PLAN_UNIT_ROWS;
    int have_seq = 0, have_prompt = 0, have_gen = 0, have_mem = 0, have_ratio = 0;
    double ratio = 0, sweep_max = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
#define VAL()                                                                                     \
    do {                                                                                          \
        if (!(v = arg_value(prog, argc, argv, &i))) return 2;                                     \
    } while (0)
        if (arg_is(a, "--config")) {
            VAL();
            config = v;
        } else if (arg_is(a, "--profile")) {
            VAL();
            profile = v;
        } else if (arg_is(a, "--json")) {
            VAL();
            json_path = v;
        } else if (arg_is(a, "--batch")) {
            VAL();
            if (arg_u64(prog, "--batch", v, 1, 1u << 24, &batch)) return 2;
        } else if (arg_is(a, "--seq")) {
            VAL();
            if (arg_u64(prog, "--seq", v, 1, UINT64_C(1) << 32, &seq)) return 2;
            have_seq = 1;
        } else if (arg_is(a, "--prompt")) {
            VAL();
            if (arg_u64(prog, "--prompt", v, 0, UINT64_C(1) << 32, &prompt)) return 2;
            have_prompt = 1;
        } else if (arg_is(a, "--gen")) {
            VAL();
            if (arg_u64(prog, "--gen", v, 0, UINT64_C(1) << 32, &gen)) return 2;
            have_gen = 1;
        } else if (arg_is(a, "--gpu-mem")) {
            VAL();
            if (arg_bytes(prog, "--gpu-mem", v, &gpu_mem)) return 2;
            have_mem = 1;
        } else if (arg_is(a, "--ratio")) {
            VAL();
            if (arg_f64(prog, "--ratio", v, 0, 1, &ratio)) return 2;
            have_ratio = 1;
        } else if (arg_is(a, "--reserve")) {
            VAL();
            if (arg_bytes(prog, "--reserve", v, &reserve)) return 2;
        } else if (arg_is(a, "--tile-rows")) {
            VAL();
            if (arg_u32(prog, "--tile-rows", v, 1, 65536, &tile_rows)) return 2;
        } else if (arg_is(a, "--sweep-max")) {
            VAL();
            if (arg_f64(prog, "--sweep-max", v, 1e-6, 1, &sweep_max)) return 2;
        } else if (arg_is(a, "--sweep")) {
            VAL();
            if (arg_u32(prog, "--sweep", v, 1, 1000, &sweep)) return 2;
        } else {
            fprintf(stderr, "%s: unknown option '%s': expected one of the options below\n", prog,
                    a);
            usage(stderr);
            return 2;
        }
#undef VAL
    }
    if (!config || !batch) {
        fprintf(stderr, "%s: expected --config FILE and --batch B\n", prog);
        usage(stderr);
        return 2;
    }
    if (have_seq == have_prompt) {
        fprintf(stderr, "%s: expected exactly one of --seq L or --prompt P\n", prog);
        return 2;
    }
    if (have_gen && !have_prompt) {
        fprintf(stderr, "%s: --gen: expected together with --prompt (--seq is the whole length)\n",
                prog);
        return 2;
    }
    if (have_mem && have_ratio) {
        fprintf(stderr, "%s: expected at most one of --gpu-mem and --ratio\n", prog);
        return 2;
    }
    if (have_prompt) {
        seq = prompt + gen;
        if (seq < 1) {
            fprintf(stderr, "%s: --prompt + --gen: expected a length of at least 1, got 0\n", prog);
            return 2;
        }
    }

    cm_err err = {{0}};
    dak_model_config cfg;
    if (dak_config_load(config, &cfg, &err)) {
        fprintf(stderr, "%s: %s\n", prog, err.msg);
        return 1;
    }
    dak_profile prof;
    if (profile) {
        if (dak_profile_load(profile, &prof, &err)) {
            fprintf(stderr, "%s: %s\n", prog, err.msg);
            return 1;
        }
    } else {
        dak_profile_default(&prof);
    }
    dak_op *ops = NULL;
    size_t n = 0;
    if (dak_model_ops(&cfg, batch, seq, tile_rows, &prof, &ops, &n, &err)) {
        fprintf(stderr, "%s: %s\n", prog, err.msg);
        dak_profile_free(&prof);
        return 1;
    }
    dak_footprint fp;
    dak_model_footprint(&cfg, batch, seq, reserve, ops, n, &fp);
    double target;
    int rc = 1;
    uint64_t *ug = cm_calloc(n, sizeof *ug), *uu = cm_calloc(n, sizeof *uu);
    if (have_mem) {
        if ((double)gpu_mem < fp.resident) {
            fprintf(stderr,
                    "%s: --gpu-mem %llu bytes: impossible budget, expected at least %.0f bytes "
                    "(%.3f GB: workspace, norms, biases and position embeddings must stay on "
                    "the GPU)\n",
                    prog, (unsigned long long)gpu_mem, fp.resident, fp.resident / 1e9);
            goto done;
        }
        target = fp.total - (double)gpu_mem;
        if (target < 0) target = 0;
    } else {
        target = ratio * fp.offloadable;
    }
    if (dak_plan_greedy(ops, n, target, prof.b_h, prof.b_g, ug, &err)) {
        fprintf(stderr, "%s: %s\n", prog, err.msg);
        goto done;
    }
    double r_target = target / fp.offloadable;
    dak_plan_uniform(ops, n, r_target, uu);

    double rd = 0;
    for (size_t i = 0; i < n; i++) rd += dak_op_bytes(&ops[i]) * ops[i].repeat * ops[i].read_frac;
    double tg = dak_plan_time(ops, n, ug, prof.b_h, prof.b_g);
    double tu = dak_plan_time(ops, n, uu, prof.b_h, prof.b_g);
    double hg = dak_plan_host_bytes(ops, n, ug), hu = dak_plan_host_bytes(ops, n, uu);

    printf("model: %s (%s), hidden %llu, layers %llu, heads %llu/%llu kv, ffn %llu, vocab %llu\n",
           config, cfg.model_type, (unsigned long long)cfg.hidden,
           (unsigned long long)cfg.layers, (unsigned long long)cfg.heads,
           (unsigned long long)cfg.kv_heads, (unsigned long long)cfg.ffn,
           (unsigned long long)cfg.vocab);
    printf("step: decode, batch %llu, KV-cache length %llu tokens, %s (%u bytes)\n",
           (unsigned long long)batch, (unsigned long long)seq, cfg.dtype, cfg.elem_bytes);
    printf("profile: %s\n  B_h %.1f GB/s, B_g %.0f GB/s, bf16 %.0f TFLOP/s, %zu GEMM shapes "
           "profiled; memory-bound turning point B_h/(B_h+B_g) = %.4f\n",
           prof.source, prof.b_h / 1e9, prof.b_g / 1e9, prof.peak_flops / 1e12, prof.n_gemm,
           prof.b_h / (prof.b_h + prof.b_g));
    printf("footprint: weights %.3f GB + KV cache %.3f GB + workspace %.3f GB = %.3f GB "
           "(%.2f GiB)\n",
           fp.weights / 1e9, fp.kv / 1e9, fp.workspace / 1e9, fp.total / 1e9,
           fp.total / 1073741824.0);
    printf("  plannable (weights and KV cache of the operations below) %.3f GB, resident %.3f GB\n",
           fp.offloadable / 1e9, fp.resident / 1e9);
    if (have_mem)
        printf("budget: --gpu-mem %.3f GB (%.2f GiB) -> host must hold %.3f GB = %.2f%% of the "
               "footprint, %.2f%% of the plannable bytes\n",
               gpu_mem / 1e9, gpu_mem / 1073741824.0, target / 1e9, 100 * target / fp.total,
               100 * r_target);
    else
        printf("budget: --ratio %.4f of the plannable bytes -> host target %.3f GB\n", ratio,
               target / 1e9);

    printf("\n%-10s %6s %6s %5s %4s %9s %9s %-7s %6s %6s | %7s %11s %9s | %7s %9s\n", "op", "m",
           "k", "n", "rep", "C/inst MB", "Tcomp us", "class", "x_a", "x_b", "greedy", "host units",
           "T us", "uniform", "T us");
    for (size_t i = 0; i < n; i++) {
        const dak_op *op = &ops[i];
        double xa, xb;
        dak_op_class cls = dak_op_classify(op, prof.b_h, prof.b_g, &xa, &xb);
        double all = dak_op_bytes(op) * op->repeat;
        char us[64];
        units_str(us, sizeof us, op, ug[i]);
        printf("%-10s %6llu %6llu %5llu %4u %9.2f %9.2f %-7s %6.4f %6.4f | %7.4f %11s %9.1f | "
               "%7.4f %9.1f%s\n",
               op->name, (unsigned long long)op->m, (unsigned long long)op->k,
               (unsigned long long)op->n, op->repeat, dak_op_bytes(op) / 1e6, op->t_comp * 1e6,
               dak_op_class_name(cls), xa, xb, dak_op_host_bytes(op, ug[i]) / all, us,
               dak_op_time_units(op, ug[i], prof.b_h, prof.b_g) * 1e6,
               dak_op_host_bytes(op, uu[i]) / all,
               dak_op_time_units(op, uu[i], prof.b_h, prof.b_g) * 1e6,
               op->kind == DAK_OP_LINEAR && !op->profiled ? "  (T_comp from peak)" : "");
    }
    printf("host units: tiles of %u rows (weights) or batch entries (attn) per layer; a|bxN = "
           "a per layer, N layers b\n",
           tile_rows);
    printf("\n%-8s %12s %10s %14s %12s\n", "plan", "host GB", "ratio", "T/token ms", "EB GB/s");
    printf("%-8s %12.3f %10.4f %14.3f %12.1f\n", "greedy", hg / 1e9, hg / fp.offloadable,
           tg * 1e3, rd / tg / 1e9);
    printf("%-8s %12.3f %10.4f %14.3f %12.1f\n", "uniform", hu / 1e9, hu / fp.offloadable,
           tu * 1e3, rd / tu / 1e9);
    printf("greedy speedup over uniform: %.3fx; bytes / (B_h + B_g), a bound only when no op is compute-bound: "
           "%.3f ms\n",
           tu / tg, rd / (prof.b_h + prof.b_g) * 1e3);

    if (sweep) {
        printf("\n%-8s %14s %12s %14s %12s %9s\n", "ratio", "greedy ms", "greedy EB", "uniform ms",
               "uniform EB", "speedup");
        uint64_t *sg = cm_calloc(n, sizeof *sg), *su = cm_calloc(n, sizeof *su);
        for (uint32_t s = 0; s <= sweep; s++) {
            double r = sweep_max * s / sweep;
            if (dak_plan_greedy(ops, n, r * fp.offloadable, prof.b_h, prof.b_g, sg, &err)) {
                fprintf(stderr, "%s: %s\n", prog, err.msg);
                free(sg), free(su);
                goto done;
            }
            dak_plan_uniform(ops, n, r, su);
            double a = dak_plan_time(ops, n, sg, prof.b_h, prof.b_g);
            double b = dak_plan_time(ops, n, su, prof.b_h, prof.b_g);
            printf("%-8.3f %14.3f %12.1f %14.3f %12.1f %9.3f\n", r, a * 1e3, rd / a / 1e9,
                   b * 1e3, rd / b / 1e9, b / a);
        }
        free(sg), free(su);
    }

    if (json_path) {
        FILE *f = strcmp(json_path, "-") ? fopen(json_path, "w") : stdout;
        if (!f) {
            fprintf(stderr, "%s: --json %s: cannot open for writing\n", prog, json_path);
            goto done;
        }
        json_w w;
        json_init(&w, f);
        json_obj_begin(&w);
        json_kv_str(&w, "config", config);
        json_kv_str(&w, "model_type", cfg.model_type);
        json_kv_u64(&w, "batch", batch);
        json_kv_u64(&w, "seq", seq);
        json_key(&w, "profile");
        json_obj_begin(&w);
        dak_profile_json(&prof, &w);
        json_obj_end(&w);
        json_key(&w, "footprint");
        json_obj_begin(&w);
        json_kv_u64(&w, "weights", (uint64_t)llround(fp.weights));
        json_kv_u64(&w, "kv", (uint64_t)llround(fp.kv));
        json_kv_u64(&w, "workspace", (uint64_t)llround(fp.workspace));
        json_kv_u64(&w, "total", (uint64_t)llround(fp.total));
        json_kv_u64(&w, "offloadable", (uint64_t)llround(fp.offloadable));
        json_kv_u64(&w, "resident", (uint64_t)llround(fp.resident));
        json_obj_end(&w);
        if (have_mem) json_kv_u64(&w, "gpu_mem", gpu_mem);
        json_kv_u64(&w, "target_host_bytes", (uint64_t)ceil(target));
        json_kv_f64(&w, "target_ratio", r_target);
        json_key(&w, "ops");
        json_arr_begin(&w);
        for (size_t i = 0; i < n; i++) {
            double xa, xb;
            dak_op_class cls = dak_op_classify(&ops[i], prof.b_h, prof.b_g, &xa, &xb);
            json_obj_begin(&w);
            json_kv_str(&w, "name", ops[i].name);
            json_kv_u64(&w, "m", ops[i].m);
            json_kv_u64(&w, "n", ops[i].n);
            json_kv_u64(&w, "k", ops[i].k);
            json_kv_u64(&w, "repeat", ops[i].repeat);
            json_kv_u64(&w, "units", ops[i].units);
            json_kv_u64(&w, "bytes", (uint64_t)llround(dak_op_bytes(&ops[i])));
            json_kv_f64(&w, "flops", ops[i].flops);
            json_kv_f64(&w, "t_comp_s", ops[i].t_comp);
            json_kv_bool(&w, "rate_profiled", ops[i].profiled);
            json_kv_str(&w, "class", dak_op_class_name(cls));
            json_kv_f64(&w, "x_a", xa);
            json_kv_f64(&w, "x_b", xb);
            json_obj_end(&w);
        }
        json_arr_end(&w);
        plan_json(&w, "greedy", ops, n, ug, prof.b_h, prof.b_g);
        plan_json(&w, "uniform", ops, n, uu, prof.b_h, prof.b_g);
        json_obj_end(&w);
        fputc('\n', f);
        if (f != stdout) fclose(f);
    }
    rc = 0;
done:
    free(ug);
    free(uu);
    free(ops);
    dak_profile_free(&prof);
    return rc;
}
