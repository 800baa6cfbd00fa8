/* dak tokenize: text to token ids and back through a Hugging Face tokenizer.json, or GPT-2's vocab.json +
 * merges.txt (dak/tokenizer.h; pure C, no GPU needed). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "common/args.h"
#include "dak/tokenizer.h"
#include "model_args.h"

static const char *prog = "dak tokenize";

static void usage(FILE *o)
{
    fprintf(o,
            "usage: dak tokenize (--tokenizer PATH | --model DIR) (--text TEXT | --text-file FILE | --ids LIST)\n"
            "                    [--add-special 0|1] [--time]\n\n"
            "  --tokenizer PATH  a Hugging Face tokenizer.json (BPE: Llama-2's SentencePiece style, or GPT-2's byte\n"
            "                    level as OPT's), a vocab.json with merges.txt beside it (GPT-2's older form, OPT's\n"
            "                    folders; the special tokens from tokenizer_config.json etc. there), or a folder\n"
            "                    holding one (its tokenizer.json first)\n"
            "  --model DIR       a model folder (or its config.json) with a tokenizer beside the config\n"
            "  --text TEXT       encode TEXT (UTF-8): prints the ids, comma-separated\n"
            "  --text-file FILE  encode the contents of FILE ('-': standard input) likewise\n"
            "  --ids LIST        decode comma-separated ids: prints the text\n"
            "  --add-special 0|1 with --text: the post-processor's ids around the text (Llama's <s>, OPT's </s>;\n"
            "                    default 1)\n"
            "  --time            on stderr: how long loading and encoding / decoding took\n");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* --ids LIST: comma-separated whole numbers (each < 2^31) */
static int parse_id_list(const char *v, int32_t **ids, size_t *n)
{
    size_t cap = 1;
    for (const char *p = v; *p; p++) cap += *p == ',';
    *ids = malloc(cap * sizeof **ids), *n = 0;
    for (const char *p = v; *ids;) {
        char *end;
        if (*p < '0' || *p > '9') break;
        errno = 0;
        unsigned long long x = strtoull(p, &end, 10);
        if (errno || x > INT32_MAX || (*end && *end != ',')) break;
        (*ids)[(*n)++] = (int32_t)x;
        if (!*end) return 0;
        p = end + 1;
    }
    fprintf(stderr, "%s: --ids: expected comma-separated token ids (whole numbers below 2^31), got '%s'\n", prog, v);
    free(*ids);
    *ids = NULL, *n = 0;
    return -1;
}

/* the whole of FILE ('-': standard input), at most 1 GiB */
static char *read_all(const char *path, size_t *n)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        fprintf(stderr, "%s: --text-file: cannot open '%s': %s\n", prog, path, strerror(errno));
        return NULL;
    }
    char *buf;
    cm_err err = {{0}};
    int bad = cm_read_stream(f, f == stdin ? "standard input" : path, (size_t)1 << 30, "text", &buf, n, &err);
    if (f != stdin) fclose(f);
    if (bad) fprintf(stderr, "%s: --text-file: %s\n", prog, err.msg);
    return bad ? NULL : buf;
}

int cmd_tokenize(int argc, char **argv)
{
    const char *tokenizer = NULL, *model = NULL, *text = NULL, *text_file = NULL, *id_list = NULL;
    uint32_t add_special = 1;
    int add_given = 0, timing = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--time")) {
            timing = 1;
            continue;
        }
        if (!(v = arg_value(prog, argc, argv, &i))) return 2;
        if (arg_is(a, "--tokenizer")) tokenizer = v;
        else if (arg_is(a, "--model")) model = v;
        else if (arg_is(a, "--text")) text = v;
        else if (arg_is(a, "--text-file")) text_file = v;
        else if (arg_is(a, "--ids")) id_list = v;
        else if (arg_is(a, "--add-special")) {
            if (arg_u32(prog, "--add-special", v, 0, 1, &add_special)) return 2;
            add_given = 1;
        } else {
            fprintf(stderr, "%s: unknown option '%s': expected one of the options below\n", prog, a);
            usage(stderr);
            return 2;
        }
    }
    if (!!text + !!text_file + !!id_list != 1) {
        fprintf(stderr, "%s: expected exactly one of --text TEXT, --text-file FILE and --ids LIST\n", prog);
        usage(stderr);
        return 2;
    }
    if (!tokenizer == !model) {
        fprintf(stderr, "%s: expected exactly one of --tokenizer PATH and --model DIR\n", prog);
        return 2;
    }
    if (id_list && add_given) {
        fprintf(stderr, "%s: --add-special: expected it with --text or --text-file (decoding --ids adds nothing)\n",
                prog);
        return 2;
    }
    int32_t *ids = NULL;
    size_t n_ids = 0, len = 0;
    char *input = NULL;
    if (id_list && parse_id_list(id_list, &ids, &n_ids)) return 2;
    if (text_file && !(input = read_all(text_file, &len))) return 2;
    if (text) len = strlen(text);
    double t0 = now_s();
    dak_tok *tok;
    char path[4096];
    int rc = tokenizer_from_args(prog, tokenizer, model, 1, &tok, path, sizeof path);
    if (rc) {
        free(ids), free(input);
        return rc;
    }
    double t1 = now_s();
    cm_err err = {{0}};
    if (id_list) {
        char *out;
        size_t out_n;
        rc = dak_tok_decode(tok, ids, n_ids, &out, &out_n, &err);
        if (!rc) {
            len = out_n; /* for --time */
            fwrite(out, 1, out_n, stdout);
            putchar('\n');
            free(out);
        }
    } else {
        free(ids);
        ids = NULL;
        rc = dak_tok_encode(tok, input ? input : text, len, (int)add_special, &ids, &n_ids, &err);
        for (size_t k = 0; !rc && k < n_ids; k++) printf(k ? ",%d" : "%d", ids[k]);
        if (!rc) putchar('\n');
    }
    double t2 = now_s();
    if (rc) fprintf(stderr, "%s: %s\n", prog, err.msg);
    else if (timing)
        fprintf(stderr, "%s: %s (%s, %u ids): loaded in %.1f ms; %s %zu %s into %zu %s in %.1f ms\n", prog, path,
                dak_tok_flavour_name(tok), dak_tok_n_ids(tok), 1e3 * (t1 - t0), id_list ? "decoded" : "encoded",
                id_list ? n_ids : len, id_list ? "ids" : "bytes", id_list ? len : n_ids, id_list ? "bytes" : "ids",
                1e3 * (t2 - t1));
    dak_tok_free(tok);
    free(ids), free(input);
    return rc ? 1 : 0;
}
