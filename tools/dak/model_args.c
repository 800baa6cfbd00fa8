/* The model arguments of `dak decode` and `dak ckpt` (model_args.h). */
#define _POSIX_C_SOURCE 200809L /* stat */
#include "model_args.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "dak/model_config.h"

int model_from_args(const char *prog, const char *model, const char *tiny, uint32_t layers, dak_eng_model *m,
                    char *label, size_t label_n)
{
    cm_err err = {{0}};
    dak_model_config cfg;
    if (!model == !tiny) {
        fprintf(stderr, "%s: expected exactly one of --model CONFIG and --tiny opt|llama\n", prog);
        return 2;
    }
    if (model) {
        struct stat sb;
        if (stat(model, &sb) != 0) {
            fprintf(stderr, "%s: --model: '%s' does not exist; expected a config.json or a folder holding one\n",
                    prog, model);
            return 2;
        }
        if (S_ISDIR(sb.st_mode)) snprintf(label, label_n, "%s/config.json", model);
        else snprintf(label, label_n, "%s", model);
        if (dak_config_load(label, &cfg, &err)) {
            fprintf(stderr, "%s: --model: %s\n", prog, err.msg);
            return 2;
        }
    } else {
        if (strcmp(tiny, "opt") && strcmp(tiny, "llama")) {
            fprintf(stderr, "%s: --tiny: expected opt or llama, got '%s'\n", prog, tiny);
            return 2;
        }
        dak_eng_tiny_config(strcmp(tiny, "opt") ? DAK_ARCH_LLAMA : DAK_ARCH_OPT, &cfg);
        snprintf(label, label_n, "tiny %s", tiny);
    }
    if (dak_eng_model_make(&cfg, layers, m, &err)) {
        fprintf(stderr, "%s: %s\n", prog, err.msg);
        return 2;
    }
    return 0;
}


int weights_from_args(const char *prog, const char *weights, const char *model, const dak_eng_model *m,
                      dak_eng_ckpt **ck)
{
    *ck = NULL;
    if (weights && !strcmp(weights, "synthetic")) return 0;
    char found[4096];
    const char *path = weights;
    if (!path && model) { /* a Hugging Face download: config.json beside its checkpoint */
        struct stat sb;
        if (stat(model, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            snprintf(found, sizeof found, "%s/model.safetensors.index.json", model);
            int have = cm_is_file(found);
            if (!have) snprintf(found, sizeof found, "%s/model.safetensors", model), have = cm_is_file(found);
            if (have) path = model;
        }
    }
    if (!path) return 0;
    cm_err err = {{0}};
    if (dak_eng_ckpt_open(ck, path, m, &err)) {
        fprintf(stderr, "%s: --weights: %s\n", prog, err.msg);
        return 2;
    }
    return 0;
}

/* dir's tokenizer into path: its tokenizer.json, else its vocab.json (GPT-2's pair with merges.txt), else (neither)
 * the tokenizer.json it lacks, for the message */
static void tokenizer_in(const char *dir, char *path, size_t path_n)
{
    snprintf(path, path_n, "%s/tokenizer.json", dir);
    if (cm_is_file(path)) return;
    snprintf(path, path_n, "%s/vocab.json", dir);
    if (!cm_is_file(path)) snprintf(path, path_n, "%s/tokenizer.json", dir);
}

int tokenizer_from_args(const char *prog, const char *tokenizer, const char *model, int required, dak_tok **tok,
                        char *path, size_t path_n)
{
    struct stat sb;
    *tok = NULL;
    if (tokenizer) {
        if (stat(tokenizer, &sb) != 0) {
            fprintf(stderr, "%s: --tokenizer: '%s' does not exist; expected a tokenizer.json, a vocab.json (with "
                            "merges.txt beside it) or a folder holding one\n",
                    prog, tokenizer);
            return 2;
        }
        if (S_ISDIR(sb.st_mode)) tokenizer_in(tokenizer, path, path_n);
        else snprintf(path, path_n, "%s", tokenizer);
    } else if (model && stat(model, &sb) == 0) { /* a Hugging Face download: the tokenizer beside config.json */
        const char *slash = strrchr(model, '/');
        char dir[4096];
        if (S_ISDIR(sb.st_mode)) snprintf(dir, sizeof dir, "%s", model);
        else if (slash) snprintf(dir, sizeof dir, "%.*s", slash == model ? 1 : (int)(slash - model), model);
        else snprintf(dir, sizeof dir, ".");
        tokenizer_in(dir, path, path_n);
    } else {
        path[0] = '\0';
    }
    if (!path[0] || !cm_is_file(path)) {
        if (!required && !tokenizer) return 0;
        if (path[0])
            fprintf(stderr, "%s: %s: no tokenizer.json at '%s' (nor a vocab.json + merges.txt); expected --tokenizer "
                            "PATH or a tokenizer.json in the --model folder\n",
                    prog, tokenizer ? "--tokenizer" : "--model", path);
        else
            fprintf(stderr, "%s: no tokenizer: expected --tokenizer PATH, or --model DIR holding a tokenizer.json\n",
                    prog);
        return 2;
    }
    cm_err err = {{0}};
    const char *base = strrchr(path, '/');
    int pair = !strcmp(base ? base + 1 : path, "vocab.json"); /* GPT-2's older form: merges.txt beside it */
    if (pair ? dak_tok_load_bpe_folder(tok, path, &err) : dak_tok_load(tok, path, &err)) {
        fprintf(stderr, "%s: tokenizer: %s\n", prog, err.msg);
        return 1;
    }
    return 0;
}
