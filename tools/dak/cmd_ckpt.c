/* dak ckpt: checkpoints for the inference engine (pure C, no GPU needed).
 *   check: binds a checkpoint (safetensors, the Hugging Face layout) to a model and lists what the engine reads;
 *   synth: writes a model's synthetic parameters as a checkpoint (to try the checkpoint path without a download). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "common/args.h"
#include "dak/engine.h"
#include "model_args.h"

static const char *prog = "dak ckpt";

static void usage(FILE *o)
{
    fprintf(o,
            "usage: dak ckpt check (--model CONFIG | --tiny opt|llama) [--weights PATH] [--layers N]\n"
            "       dak ckpt synth (--model CONFIG | --tiny opt|llama) --out FILE [--dtype bf16|f32] [--layers N]\n"
            "                      [--seed S]\n\n"
            "  check            bind a checkpoint to the model and list every tensor the engine reads (its name,\n"
            "                   type, shape and bytes); exits 1 if one is missing or of the wrong shape or type\n"
            "  synth            write the model's synthetic parameters (dak decode's, same seed) as one safetensors\n"
            "                   file under the Hugging Face names\n"
            "  --model CONFIG   a Hugging Face config.json, or a folder holding one (and, for check, its checkpoint)\n"
            "  --tiny ARCH      the test model instead (dak decode --tiny)\n"
            "  --weights PATH   a .safetensors file, or a folder with model.safetensors.index.json (shards) or\n"
            "                   model.safetensors (default: the --model folder's)\n"
            "  --layers N       the first N layers only\n"
            "  --out FILE       the file to write\n"
            "  --dtype T        bf16 (default) or f32: the types that hold the synthetic values exactly\n"
            "  --seed S         the synthetic parameters' seed (default 1, as dak decode's)\n");
}

int cmd_ckpt(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *sub = argv[1];
    const int check = !strcmp(sub, "check"), synth = !strcmp(sub, "synth");
    if (!check && !synth) {
        fprintf(stderr, "%s: unknown subcommand '%s': expected check or synth\n", prog, sub);
        usage(stderr);
        return 2;
    }
    const char *model = NULL, *tiny = NULL, *weights = NULL, *out = NULL, *dtype = "bf16";
    uint32_t layers = 0;
    uint64_t seed = 1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!(v = arg_value(prog, argc, argv, &i))) return 2;
        if (arg_is(a, "--model")) model = v;
        else if (arg_is(a, "--tiny")) tiny = v;
        else if (arg_is(a, "--weights") && check) weights = v;
        else if (arg_is(a, "--out") && synth) out = v;
        else if (arg_is(a, "--dtype") && synth) dtype = v;
        else if (arg_is(a, "--layers")) {
            if (arg_u32(prog, "--layers", v, 1, 100000, &layers)) return 2;
        } else if (arg_is(a, "--seed") && synth) {
            if (arg_u64(prog, "--seed", v, 0, UINT64_MAX, &seed)) return 2;
        } else {
            fprintf(stderr, "%s %s: unknown option '%s': expected one of the options below\n", prog, sub, a);
            usage(stderr);
            return 2;
        }
    }
    dak_eng_model m;
    char label[4096];
    if (model_from_args(prog, model, tiny, layers, &m, label, sizeof label)) return 2;
    cm_err err = {{0}};
    if (synth) {
        if (!out) {
            fprintf(stderr, "%s synth: expected --out FILE\n", prog);
            return 2;
        }
        if (strcmp(dtype, "bf16") && strcmp(dtype, "f32")) {
            fprintf(stderr, "%s synth: --dtype: expected bf16 or f32, got '%s'\n", prog, dtype);
            return 2;
        }
        if (dak_eng_ckpt_write_synthetic(&m, seed, strcmp(dtype, "f32") ? DAK_ST_BF16 : DAK_ST_F32, out, 1, &err)) {
            fprintf(stderr, "%s synth: %s\n", prog, err.msg);
            return 1;
        }
        printf("%s: the synthetic parameters of %s (%llu layers, seed %llu) as %s\n", out, label,
               (unsigned long long)m.cfg.layers, (unsigned long long)seed, dtype);
        return 0;
    }
    if (!weights && !model) {
        fprintf(stderr, "%s check: expected --weights PATH (or a --model folder holding a checkpoint)\n", prog);
        return 2;
    }
    dak_eng_ckpt *ck;
    int rc = weights_from_args(prog, weights, model, &m, &ck);
    if (rc) return rc == 2 && weights ? 1 : rc;
    if (!ck) {
        fprintf(stderr, "%s check: no checkpoint in '%s' (model.safetensors.index.json or model.safetensors)\n", prog,
                model);
        return 1;
    }
    const dak_st *st = dak_eng_ckpt_file(ck);
    printf("%s bound to %s: %zu tensors in the checkpoint\n", label, dak_st_file(st, 0), dak_st_count(st));
    printf("  %-8s %-56s %-5s %-16s %10s\n", "tensor", "name", "type", "shape", "MB");
    double bytes = 0;
    size_t used = 0;
    for (uint32_t t = 1; t < DAK_ENG_T_LAYER0 + 32u * (uint32_t)m.cfg.layers; t++) {
        const char *name = dak_eng_ckpt_name(ck, t);
        if (!name || (t == DAK_ENG_T_LM && !strcmp(name, dak_eng_ckpt_name(ck, DAK_ENG_T_EMBED)))) continue; /* tied */
        const dak_st_tensor *x = dak_st_find(st, name);
        char shape[48];
        if (x->ndim == 2) snprintf(shape, sizeof shape, "[%llu, %llu]", (unsigned long long)x->shape[0],
                                   (unsigned long long)x->shape[1]);
        else snprintf(shape, sizeof shape, "[%llu]", (unsigned long long)x->shape[0]);
        printf("  %-8u %-56s %-5s %-16s %10.2f\n", t, name, x->dtype_name, shape, x->bytes / 1e6);
        bytes += (double)x->bytes, used++;
    }
    printf("%zu tensors the engine reads, %.3f GB (of %zu in the checkpoint)\n", used, bytes / 1e9,
           dak_st_count(st));
    dak_eng_ckpt_close(ck);
    return 0;
}
