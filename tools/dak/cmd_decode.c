/* dak decode: the inference engine (seed 003, SPEC dak item 7): greedy decoding of an OPT- or
 * Llama-shaped model with synthetic weights or a checkpoint (safetensors), one CUDA graph per step, weights and KV cache offloaded
 * per operation by the greedy planner; TPOT and EB over offload ratios, against r = 0, the
 * FlexGen-style double-buffered prefetch baseline and the unified-memory (page fault) baseline. */
#define _POSIX_C_SOURCE 200809L /* stat */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "common/args.h"
#include "common/bench.h"
#include "common/error.h"
#include "common/json.h"
#include "dak/engine.h"
#include "dak/gemm.h" /* DAK_GEMM_PDL_PRE_NONE */
#include "dak/model_config.h"
#include "dak/planner.h"
#include "decode_stamps.h"
#include "dak/tokenizer.h"
#include "model_args.h"

static const char *prog = "dak decode";

#define MAX_RATIOS 64

static void usage(FILE *o)
{
    dak_eng_opts d;
    dak_eng_opts_default(&d);
    fprintf(o,
            "usage: dak decode (--model CONFIG | --tiny opt|llama) [--batch B] [--prompt P] [--tokens D]\n"
            "                  [--ratios LIST] [--baseline LIST] [--layers N] [--seed S]\n"
            "                  [--host-mem BYTES] [--gpu-mem BYTES] [--deploy 0|1|auto] [--profile FILE] [--pdl 0|1|2]\n"
            "                  [--breakdown REPS] [--weights PATH|synthetic] [--prompt-ids LIST] [--diag-skip LIST]\n"
            "                  [--diag-empty LIST] [--diag-times FILE] [--gemm-pdl-pre N|none] [--gemm-pre-none KINDS|none]\n"
            "                  [--gemm-hbm-window W] [--gemm-stages S] [--gemm-dyn 0|1] [--gemm-whole 0|1|2]\n"
            "                  [--gemm-whole-cl 0|1] [--gemm-whole-swap 0|1|2|3]\n"
            "                  [--norm-trigger WHERE] [--norm-narrow 0|1] [--fuse-qkv 0|1] [--prompt-text TEXT]\n"
            "                  [--tokenizer PATH] [--load-times 0|1] [--load-pin register|alloc]\n"
            "                  [--backend auto|gpu|cpu] [--json FILE]\n\n"
            "  --model CONFIG   a Hugging Face config.json, or a folder holding one (configs/opt-6.7b, ...)\n"
            "  --tiny ARCH      the test model instead: 2 layers, hidden 256, 2 heads, ffn 512, vocab 1000\n"
            "  --backend WHERE  gpu: the engine over offload ratios (below); cpu: greedy decoding by the CPU reference\n"
            "                   forward pass (small models: at most 4e8 parameters; no offload options); auto (the\n"
            "                   default): gpu where this build has the GPU engine and a GPU is present, else cpu\n"
            "  --batch B        sequences decoded together, 1..4096 (default 8)\n"
            "  --prompt P       prompt tokens fed through the same step, 1..8192 (default 32)\n"
            "  --tokens D       decoded tokens, timed: TPOT = their time / D, 1..8192 (default 32)\n"
            "  --ratios LIST    offload ratios in percent of weight + KV bytes, comma-separated, 0..100\n"
            "                   (default 0,10,20,40,60,80,100), or 'fit' (with --gpu-mem; --deploy 1 or auto): the\n"
            "                   smallest ratio whose deployment fits in --gpu-mem\n"
            "  --baseline LIST  comma-separated: direct (split kernels reading host memory in place), prefetch\n"
            "                   (FlexGen-style layer-by-layer double-buffered copies), um (unified memory: each\n"
            "                   matrix's host rows in managed memory, pushed back to the CPU before every step\n"
            "                   (timed) and faulted in by cuBLAS; the KV cache stays in HBM; managed memory is\n"
            "                   refused past a quarter of the free HBM; needs --deploy 0), both (= direct,prefetch;\n"
            "                   the default) or all (= direct,prefetch,um)\n"
            "  --layers N       run only the first N layers of the model (quick runs of big models)\n"
            "  --seed S         synthetic weights and prompt (default 1)\n"
            "  --host-mem BYTES pinned host memory allowed (default 96GiB; --deploy 0 keeps a full copy)\n"
            "  --gpu-mem BYTES  HBM allowed (default: free memory less 2 GiB)\n"
            "  --deploy 0|1|auto 1: allocate only each ratio's placement, its HBM rows in HBM and its host rows in\n"
            "                   pinned memory, as a deployment would (a model larger than --gpu-mem runs; the\n"
            "                   engine is created again for each ratio, and there is no r = 0 reference run);\n"
            "                   0: a full copy in each tier, every ratio a view of it; auto (default): 1 with\n"
            "                   --ratios fit, or where every ratio is 0 (no host copy to pin: a model that fits\n"
            "                   needs no host memory) unless --baseline um or --diag-times asks for the copies;\n"
            "                   else 0\n"
            "  --profile FILE   planner profile from `dak profile` (default: built-in H200 figures)\n"
            "  --pdl 0|1|2      2 (default): every kernel of the step is a programmatic dependent launch; 1: the\n"
            "                   GEMMs only (each loads its first weights while the kernel before it runs; 5 %%\n"
            "                   faster than 0 where the host link binds); 0: plain launches\n"
            "  --breakdown REPS where the last step's time goes, per kind of operation, after every run: the\n"
            "                   step re-captured with a timing event after each operation, median of REPS\n"
            "                   replays (0, the default: off; at most 1000)\n"
            "  --json FILE      write the results as JSON ('-' for stdout)\n"
            "  --load-times 0|1 1: where each engine creation's time went (pinning, reads, copies, packing: a line\n"
            "                   on stderr, and load_times in --json); 0 (default): not printed\n"
            "  --load-pin HOW   how the weights' pinned host rows are made, a layer at a time on a thread beside the\n"
            "                   load: register (default: ordinary memory, written as the checkpoint is read, then\n"
            "                   cudaHostRegister) or alloc (a cudaHostAlloc a layer, before it loads)\n"
            "  --weights PATH   the weights from a checkpoint in the Hugging Face layout: a .safetensors file, or a\n"
            "                   folder with model.safetensors.index.json (shards) or model.safetensors (BF16, F16 or\n"
            "                   F32; read as bf16); default: the --model folder's checkpoint if it has one, else\n"
            "                   synthetic weights (random bf16 from --seed); 'synthetic' forces them\n"
            "  --gemm-pdl-pre N copies of weights each GEMM CTA issues before it waits for the kernel before it\n"
            "                   (0, the default: the GEMM's choice; 1..24; none)\n"
            "  --gemm-pre-none KINDS|none these kinds' GEMMs (qkv, o_proj, ffn_in, ffn_out, lm_head) read nothing\n"
            "                   before their wait, whatever --gemm-pdl-pre says (default: o_proj)\n"
            "  --gemm-hbm-window W every GEMM's copies in flight per SM after its wait (default 2; 0: the\n"
            "                   GEMM's choice)\n"
            "  --gemm-stages S  ring slots per SM of every GEMM without host rows (default 4; 0: as many as fit)\n"
            "  --gemm-dyn 0|1   diagnostic: every GEMM's HBM rows in dynamically claimed units\n"
            "  --gemm-whole 0|1|2 whole-K tiles (k_whole, as dak bench gemm --whole): 2 (default) where the GEMM\n"
            "                   picks them (all-HBM rows, N <= 64, 64-row tiles filling 80-100 %% of the SMs, or\n"
            "                   45-80 %% at N <= 32 and K <= 4096; at K > 8192 and N > 8 only with clusters,\n"
            "                   --gemm-whole-cl 0);\n"
            "                   1 wherever they apply; 0 the split kernels only\n"
            "  --gemm-whole-cl 0|1 k_whole's B multicast: 1 none, 0 the GEMM's choice (clusters of 4 where K >\n"
            "                   8192, N >= 41 or N >= 25 with tiles on 80 %% of the SMs, and 4 divides the tiles,\n"
            "                   as dak bench gemm --whole-cl 0) (default %u)\n"
            "  --gemm-whole-swap 0|1|2|3 whole-K tiles with A's rows as the wgmma's n (k_whole_sw): 1 never, 0\n"
            "                   the GEMM's choice (where a CTA's rows would exceed 128, e.g. Llama-2-7B's ffn_in,\n"
            "                   or 64 and not a multiple of 64 on a deployment's all-HBM matrices, which are then\n"
            "                   packed in its row groups; as dak bench gemm --whole-swap 0), 2 wherever it applies,\n"
            "                   3 on a deployment's all-HBM matrices as 0 and wherever k_whole does not apply\n"
            "                   and a CTA's rows are at least the batch, those grouped (no split kernel), none on\n"
            "                   the full copies (--deploy 0) (default %u)\n"
            "  --norm-trigger WHERE where the norm lets the next GEMM start: top (default), loaded (its loads\n"
            "                   done) or end (its stores issued)\n"
            "  --norm-narrow 0|1 1: the norm kernel before the twenty-second session (128 threads a row, its\n"
            "                   weights read after the statistics); 0 (default): the weights held in registers\n"
            "  --fuse-qkv 0|1   1: q / k / v post-processed inside the attention (bias, rotary, the new position's k\n"
            "                   and v into the cache), one kernel fewer a layer, the same results; 0: a kernel of its\n"
            "                   own (qkv_post) between the q/k/v GEMM and the attention (default: %s; 0 when\n"
            "                   --diag-skip or --diag-empty names qkv_post)\n"
            "  --diag-skip LIST diagnostic: leave these kinds' kernels out of every step (comma-separated: embed,\n"
            "                   norm, qkv, qkv_post, attention, o_proj, ffn_in, act, ffn_out, lm_head, argmax), to\n"
            "                   measure a step without them; the logits and tokens are then wrong\n"
            "  --diag-empty LIST diagnostic: the same with an empty kernel in each one's place (what being in the\n"
            "                   chain of kernels costs, without the work)\n"
            "  --diag-times FILE diagnostic: the r = 0 run stamps every CTA of its kernels (%%globaltimer); the middle\n"
            "                   layer's timeline of the last step is printed and written to FILE (JSON)\n"
            "  --prompt-ids LIST every sequence's prompt as comma-separated token ids (sets --prompt); the greedy\n"
            "                   tokens of sequence 0 are printed (as with --weights); default: synthetic prompts\n"
            "  --prompt-text TEXT every sequence's prompt as text, encoded by the tokenizer (with its special tokens:\n"
            "                   Llama's <s>, OPT's </s>); instead of --prompt-ids\n"
            "  --tokenizer PATH a Hugging Face tokenizer.json, a vocab.json with merges.txt beside it (GPT-2's older\n"
            "                   form, OPT's), or a folder holding one; default: the --model folder's, if any.  With\n"
            "                   a tokenizer, sequence 0's prompt and generated tokens are printed (and written to\n"
            "                   --json) as text too\n",
            d.gemm_whole_cluster, d.gemm_whole_swap, d.fuse_qkv ? "1" : "0");
}

static int parse_ratios(const char *v, double *r, int *n)
{
    char buf[1024];
    if (strlen(v) >= sizeof buf || !*v) {
        fprintf(stderr, "%s: --ratios: expected a comma-separated list of percentages, got '%s'\n", prog, v);
        return -1;
    }
    strcpy(buf, v);
    *n = 0;
    for (char *tok = buf, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next) *next++ = '\0';
        if (*n >= MAX_RATIOS) {
            fprintf(stderr, "%s: --ratios: expected at most %d values\n", prog, MAX_RATIOS);
            return -1;
        }
        if (arg_f64(prog, "--ratios (percent)", tok, 0, 100, &r[*n])) return -1;
        (*n)++;
    }
    if (!*n) {
        fprintf(stderr, "%s: --ratios: expected at least one percentage, got '%s'\n", prog, v);
        return -1;
    }
    return 0;
}

/* --prompt-ids LIST: comma-separated token ids (each a whole number < 2^31), at most 8192 */
static int parse_ids(const char *v, int32_t **ids, uint32_t *n)
{
    *ids = cm_malloc(8192 * sizeof **ids), *n = 0;
    for (const char *p = v;; p++) {
        char *end;
        if (*n == 8192 || *p < '0' || *p > '9') break;
        unsigned long x = strtoul(p, &end, 10);
        if (x > INT32_MAX || (*end && *end != ',')) break;
        (*ids)[(*n)++] = (int32_t)x;
        if (!*end) return 0;
        p = end;
    }
    fprintf(stderr, "%s: --prompt-ids: expected 1..8192 comma-separated token ids (whole numbers), got '%s'\n", prog,
            v);
    free(*ids);
    *ids = NULL, *n = 0;
    return -1;
}

/* A comma-separated list of names (flag's value v) into the union of their bits: names[i] stands for bits[i];
 * `expected` spells the names for the message.  -1 (with the message) on an empty list or an unknown name. */
static int parse_names(const char *flag, const char *v, const char *const *names, const uint32_t *bits, int n,
                       const char *expected, uint32_t *mask)
{
    char buf[256];
    *mask = 0;
    if (!*v || strlen(v) >= sizeof buf) goto bad;
    strcpy(buf, v);
    for (char *tok = buf, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next) *next++ = '\0';
        int k = 0;
        while (k < n && strcmp(tok, names[k])) k++;
        if (k == n) goto bad;
        *mask |= bits[k];
    }
    return 0;
bad:
    fprintf(stderr, "%s: %s: expected a comma-separated list of %s; got '%s'\n", prog, flag, expected, v);
    return -1;
}

/* --diag-skip / --diag-empty LIST: kinds of the step's operations (dak_eng_op_name, up to argmax) into a bit mask */
static int parse_skip(const char *flag, const char *v, uint32_t *mask)
{
    const char *names[DAK_ENG_OP_WAIT];
    uint32_t bits[DAK_ENG_OP_WAIT];
    for (int k = 0; k < DAK_ENG_OP_WAIT; k++) names[k] = dak_eng_op_name((dak_eng_op)k), bits[k] = 1u << k;
    return parse_names(flag, v, names, bits, DAK_ENG_OP_WAIT,
                       "embed, norm, qkv, qkv_post, attention, o_proj, ffn_in, act, ffn_out, lm_head, argmax", mask);
}

/* ---- text prompts and outputs through a tokenizer (dak/tokenizer.h; the tokenizer dak tokenize uses) ---- */

/* --prompt-text / --tokenizer: the tokenizer (--tokenizer, else the --model folder's tokenizer, else none) and,
 * for a text prompt, its ids as --prompt-ids would give them (with the tokenizer's special tokens).  2 on bad input. */
static int text_prompt(const char *text, const char *tokenizer, const char *model, int32_t **ids, uint32_t *n,
                       dak_tok **tok)
{
    char path[4096];
    if (text && *ids) {
        fprintf(stderr, "%s: --prompt-text and --prompt-ids: expected one of them\n", prog);
        return 2;
    }
    int rc = tokenizer_from_args(prog, tokenizer, model, text != NULL, tok, path, sizeof path);
    if (rc == 1 && !text && !tokenizer) { /* found beside the model, not asked for: said, and left unused */
        fprintf(stderr, "%s: the --model folder's tokenizer is left unused: prompts and outputs stay token ids\n",
                prog);
        return 0;
    }
    if (rc) return 2;
    if (!text) return 0;
    cm_err err = {{0}};
    int32_t *v;
    size_t nv;
    if (dak_tok_encode(*tok, text, strlen(text), 1, &v, &nv, &err)) {
        fprintf(stderr, "%s: --prompt-text: %s\n", prog, err.msg);
        return 2;
    }
    if (nv < 1 || nv > 8192) {
        fprintf(stderr, "%s: --prompt-text: %zu tokens (%s): expected 1..8192\n", prog, nv, path);
        free(v);
        return 2;
    }
    *ids = v, *n = (uint32_t)nv;
    return 0;
}

/* The text of sequence 0's tokens at steps [from, to) of tok[S][batch] (malloc'd), or NULL (no tokenizer, or the
 * ids are no tokens of it: then the message is printed). */
static char *seq0_text(const dak_tok *tk, const int32_t *tok, uint32_t batch, uint32_t from, uint32_t to)
{
    if (!tk || to <= from) return NULL;
    int32_t *ids = cm_malloc((size_t)(to - from) * sizeof *ids);
    for (uint32_t t = from; t < to; t++) ids[t - from] = tok[(size_t)t * batch];
    char *text = NULL;
    cm_err err = {{0}};
    if (dak_tok_decode(tk, ids, to - from, &text, NULL, &err)) fprintf(stderr, "%s: tokenizer: %s\n", prog, err.msg);
    free(ids);
    return text;
}

/* ---- end of the tokenizer's part ---- */

/* sequence 0's prompt and greedy tokens (steps prompt - 1 .. S - 1 of tok[S][batch]); with a tokenizer, as text too */
static void print_tokens(const int32_t *tok, uint32_t batch, uint32_t prompt, uint32_t S, const int32_t *ids,
                         uint64_t seed, uint32_t vocab, const dak_tok *tk)
{
    printf("sequence 0: prompt");
    for (uint32_t t = 0; t < prompt; t++) printf(" %d", ids ? ids[t] : (int)dak_eng_prompt_token(seed, t, 0, batch, vocab));
    printf("\nsequence 0: generated");
    for (uint32_t t = prompt - 1; t < S; t++) printf(" %d", tok[(size_t)t * batch]);
    printf("\n");
    char *text = ids ? seq0_text(tk, ids, 1, 0, prompt) : NULL, *gen = seq0_text(tk, tok, batch, prompt - 1, S);
    if (text) printf("sequence 0: prompt text: %s\n", text);
    if (gen) printf("sequence 0: generated text: %s\n", gen);
    free(text), free(gen);
}

/* sequence 0's prompt, greedy tokens (steps prompt - 1 .. S - 1 of tok[S][batch]) and, with a tokenizer, its text
 * into the open JSON object */
static void seq0_json(json_w *w, const int32_t *tok, uint32_t batch, uint32_t prompt, uint32_t S, const int32_t *ids,
                      uint64_t seed, uint32_t vocab, const dak_tok *tk, const char *prompt_text)
{
    json_key(w, "prompt_seq0");
    json_arr_begin(w);
    for (uint32_t t = 0; t < prompt; t++)
        json_u64(w, (uint64_t)(ids ? ids[t] : dak_eng_prompt_token(seed, t, 0, batch, vocab)));
    json_arr_end(w);
    json_key(w, "generated_seq0");
    json_arr_begin(w);
    for (uint32_t t = prompt - 1; t < S; t++) json_u64(w, (uint64_t)tok[(size_t)t * batch]);
    json_arr_end(w);
    char *text = seq0_text(tk, tok, batch, prompt - 1, S);
    if (text) json_kv_str(w, "generated_text_seq0", text);
    if (prompt_text) json_kv_str(w, "prompt_text", prompt_text);
    free(text);
}

/* the JSON record's opening, both backends: the run's machine, model and shape */
static void run_json_head(json_w *w, const char *backend, const char *path, const dak_model_config *c, uint32_t batch,
                          uint32_t prompt, uint32_t tokens, uint64_t seed)
{
    json_obj_begin(w);
    json_kv_str(w, "bench", "dak decode");
    bench_json_machine(w);
    json_kv_str(w, "backend", backend);
    json_kv_str(w, "model", path);
    json_kv_str(w, "model_type", c->model_type);
    json_kv_u64(w, "layers", c->layers);
    json_kv_u64(w, "batch", batch);
    json_kv_u64(w, "prompt", prompt);
    json_kv_u64(w, "tokens", tokens);
    json_kv_u64(w, "seed", seed);
}

/* ---- --backend cpu: the CPU reference forward pass (dak_eng_ref: small models, no GPU, no offload) ---- */

/* the options that only the GPU engine reads (refused with --backend cpu) */
static const char *const gpu_only_flags[] = {"--ratios",      "--baseline",      "--host-mem",     "--gpu-mem",
                                             "--deploy",      "--profile",       "--pdl",          "--breakdown",
                                             "--load-times",  "--load-pin",
                                             "--diag-skip",   "--diag-empty",    "--diag-times",   "--gemm-pdl-pre",
                                             "--gemm-pre-none", "--norm-trigger", "--norm-narrow",
                                             "--gemm-hbm-window", "--gemm-stages", "--gemm-dyn", "--gemm-whole",
                                             "--gemm-whole-cl", "--gemm-whole-swap", "--fuse-qkv"};

/* Greedy decoding of batch sequences on the CPU: the prompt's steps, then `tokens` steps, timed; tok[S][batch] as
 * the GPU engine's history (dak_engine_tokens).  1 when the reference cannot be made (a model too large for it). */
static int decode_cpu(const dak_eng_model *m, const dak_eng_ckpt *ck, uint32_t batch, uint32_t prompt, uint32_t tokens,
                      uint64_t seed, const int32_t *ids, int32_t *tok, double *tpot_s)
{
    const uint32_t S = prompt + tokens, V = (uint32_t)m->cfg.vocab;
    cm_err err = {{0}};
    dak_eng_ref *ref;
    if (dak_eng_ref_create(&ref, m, batch, S, seed, ck, &err)) {
        fprintf(stderr, "%s: --backend cpu: %s\n", prog, err.msg);
        return 1;
    }
    float *logits = cm_malloc((size_t)batch * V * sizeof *logits);
    int32_t *in = cm_malloc(batch * sizeof *in);
    bench_progress_t pg;
    bench_progress_start(&pg, "dak decode: CPU reference steps", S);
    double t_dec = 0;
    int rc = 0;
    for (uint32_t t = 0; t < S && !rc; t++) {
        for (uint32_t b = 0; b < batch; b++)
            in[b] = t < prompt ? (ids ? ids[t] : dak_eng_prompt_token(seed, t, b, batch, V)) : tok[(size_t)(t - 1) * batch + b];
        double t0 = bench_now_s();
        if (dak_eng_ref_step(ref, t, in, logits, &err)) {
            fprintf(stderr, "%s: --backend cpu: step %u: %s\n", prog, t, err.msg);
            rc = 1;
        }
        for (uint32_t b = 0; b < batch && !rc; b++) tok[(size_t)t * batch + b] = (int32_t)dak_eng_ref_argmax(logits + (size_t)b * V, V);
        if (t >= prompt) t_dec += bench_now_s() - t0;
        bench_progress(&pg, t + 1);
    }
    bench_progress_end(&pg, S);
    *tpot_s = t_dec / tokens;
    free(logits), free(in);
    dak_eng_ref_destroy(ref);
    return rc;
}

#define NMODES 3 /* dak_eng_mode: direct, prefetch, um */

/* --baseline LIST: the modes to run, do[dak_eng_mode] */
static int parse_baselines(const char *v, int do_mode[NMODES])
{
    static const char *const names[] = {"direct", "prefetch", "um", "both", "all"};
    static const uint32_t bits[] = {1u << DAK_ENG_DIRECT, 1u << DAK_ENG_PREFETCH, 1u << DAK_ENG_UM,
                                    1u << DAK_ENG_DIRECT | 1u << DAK_ENG_PREFETCH,
                                    1u << DAK_ENG_DIRECT | 1u << DAK_ENG_PREFETCH | 1u << DAK_ENG_UM};
    uint32_t mask;
    if (parse_names("--baseline", v, names, bits, 5, "direct, prefetch, um, both, all", &mask)) return -1;
    for (int m = 0; m < NMODES; m++) do_mode[m] = (mask >> m) & 1u;
    return 0;
}

typedef struct {
    double r, host_bytes, tpot[NMODES], eb[NMODES], pred, tok_match[NMODES];
    int ran[NMODES];
    double op_host[16];
    dak_eng_breakdown bk[NMODES];
    double hbm, host;        /* --deploy: the engine's allocation for this ratio */
    dak_eng_load_times lt;   /* --deploy: where its creation's time went */
    uint32_t grouped;        /* --deploy: its matrices packed in k_whole_sw's row groups (dak_engine_grouped) */
    double um_bytes, um_moved; /* um: the managed allocation, and the rows a step moves */
} row_t;

/* --ratios fit: the smallest ratio (binary search over the greedy plans) whose deployment's HBM (with the
 * prefetch baseline's staging when it runs) fits in cap */
static int fit_ratio(const dak_eng_model *m, uint32_t batch, uint32_t S, const dak_op *ops, size_t nops,
                     const dak_profile *prof, double cap, int with_staging, double *r_out, cm_err *err)
{
    double total = dak_ops_total_bytes(ops, nops), lo = 0, hi = 1, need_hi = 0;
    uint64_t *u = cm_calloc(nops, sizeof *u);
    int rc = -1;
    for (int it = 0; it < 40; it++) {
        double r = it == 0 ? 1.0 : it == 1 ? 0.0 : 0.5 * (lo + hi);
        dak_eng_place pl;
        if (dak_plan_greedy(ops, nops, r * total, prof->b_h, prof->b_g, u, err) ||
            dak_eng_place_map(m, batch, S, ops, nops, u, &pl, err))
            goto out;
        double hbm, host, st;
        dak_eng_need_bytes(m, batch, S, &pl, &hbm, &host, &st);
        dak_eng_place_free(&pl);
        double need = hbm + (with_staging ? st : 0);
        if (it == 0 && need > cap) {
            cm_fail(err, "even with every weight and KV entry in host memory the engine needs %.2f GB of HBM "
                         "(activations, the embedding, workspaces%s), more than %.2f GB",
                    need / 1e9, with_staging ? ", the prefetch baseline's staging" : "", cap / 1e9);
            goto out;
        }
        if (need <= cap) hi = r, need_hi = need;
        else lo = r;
        if (it == 1 && need <= cap) break; /* all of it fits in HBM */
        if (it > 1 && hi - lo < 1e-4) break;
    }
    *r_out = hi;
    printf("fit: the smallest offload whose deployment fits in %.2f GB of HBM%s: r = %.2f %% (needs %.2f GB)\n",
           cap / 1e9, with_staging ? " (with the prefetch baseline's staging)" : "", 100 * hi, need_hi / 1e9);
    rc = 0;
out:
    free(u);
    return rc;
}

/* --breakdown: after a run, where its last step's time goes */
static int breakdown(dak_engine *e, uint32_t reps, const char *label, dak_eng_breakdown *b, cm_err *err)
{
    if (dak_engine_breakdown(e, reps, b, err)) return -1;
    printf("breakdown, %s, step %u (median of %u): stamped step %.1f us, its own graph %.1f us (overlap saves %.1f)\n",
           label, b->step, b->reps, b->stamped_us, b->step_us, b->stamped_us - b->step_us);
    printf("  %-10s %5s %10s %6s %10s %9s\n", "op", "count", "us", "%", "MB read", "GB/s");
    for (int k = 0; k < DAK_ENG_NOPS; k++) {
        if (!b->count[k]) continue;
        printf("  %-10s %5u %10.1f %5.1f%% %10.2f %9.0f\n", dak_eng_op_name((dak_eng_op)k), b->count[k], b->us[k],
               100.0 * b->us[k] / b->stamped_us, b->bytes[k] / 1e6,
               b->bytes[k] > 0 && b->us[k] > 0 ? b->bytes[k] / b->us[k] / 1e3 : NAN);
    }
    return 0;
}

/* --load-times: where an engine creation's time went, a line on stderr */
static void load_times_print(const char *what, const dak_eng_load_times *t)
{
    const double parts = t->pin_s + t->pin_kv_s + t->hbm_s + t->read_s + t->wait_s + t->pack_s + t->host_pack_s +
                         t->d2h_s;
    fprintf(stderr,
            "load %s: %.3f s (%.3f GB pinned, %.3f GB read): pin %.3f, kv pin %.3f, hbm %.3f, read %.3f, wait %.3f, "
            "gpu pack %.3f, host pack %.3f, d2h %.3f, rest %.3f s; pinning thread %.3f s\n",
            what, t->total_s, t->pinned_bytes / 1e9, t->read_bytes / 1e9, t->pin_s, t->pin_kv_s, t->hbm_s, t->read_s,
            t->wait_s, t->pack_s, t->host_pack_s, t->d2h_s, t->total_s - parts, t->pinner_s);
}

static void load_times_json(json_w *w, const dak_eng_load_times *t)
{
    json_key(w, "load_times");
    json_obj_begin(w);
    json_kv_f64(w, "total_s", t->total_s);
    json_kv_f64(w, "pin_s", t->pin_s);
    json_kv_f64(w, "pin_kv_s", t->pin_kv_s);
    json_kv_f64(w, "hbm_s", t->hbm_s);
    json_kv_f64(w, "read_s", t->read_s);
    json_kv_f64(w, "wait_s", t->wait_s);
    json_kv_f64(w, "gpu_pack_s", t->pack_s);
    json_kv_f64(w, "host_pack_s", t->host_pack_s);
    json_kv_f64(w, "d2h_s", t->d2h_s);
    json_kv_f64(w, "pinner_s", t->pinner_s);
    json_kv_f64(w, "read_bytes", t->read_bytes);
    json_kv_f64(w, "pinned_bytes", t->pinned_bytes);
    json_obj_end(w);
}

static void breakdown_json(json_w *w, const char *key, const dak_eng_breakdown *b)
{
    json_key(w, key);
    json_obj_begin(w);
    json_kv_u64(w, "step", b->step);
    json_kv_u64(w, "reps", b->reps);
    json_kv_f64(w, "stamped_us", b->stamped_us);
    json_kv_f64(w, "step_us", b->step_us);
    json_key(w, "ops");
    json_obj_begin(w);
    for (int k = 0; k < DAK_ENG_NOPS; k++) {
        if (!b->count[k]) continue;
        json_key(w, dak_eng_op_name((dak_eng_op)k));
        json_obj_begin(w);
        json_kv_u64(w, "count", b->count[k]);
        json_kv_f64(w, "us", b->us[k]);
        json_kv_f64(w, "bytes", b->bytes[k]);
        json_obj_end(w);
    }
    json_obj_end(w);
    json_obj_end(w);
}

/* What a run of dak decode allocates, freed in one place (cmd_decode) however decode() returns: its early
 * refusals (status 2) included. */
typedef struct {
    int32_t *prompt_ids; /* --prompt-ids, or --prompt-text's ids */
    dak_tok *tk;
    dak_eng_ckpt *ck;
    dak_profile prof;
    dak_op *ops;
    dak_engine *e;
    row_t *rows;
    uint64_t *u;
    int32_t *tok0, *tokx;
    FILE *jf;
} decode_held;

static int decode(int argc, char **argv, decode_held *h)
{
    const char *model = NULL, *tiny = NULL, *json_path = NULL, *profile = NULL, *weights = NULL;
    const char *prompt_text = NULL, *tokenizer = NULL; /* the tokenizer's flags */
    const char *backend = "auto";
    uint32_t prompt_n = 0;
    int prompt_given = 0;
    dak_eng_opts defaults;
    dak_eng_opts_default(&defaults);
    uint32_t diag_skip = 0, diag_empty = 0, gemm_pre = 0, norm_trig = 0, norm_narrow = 0, load_pin = defaults.load_pin;
    uint32_t pre_none = defaults.gemm_pre_none, gemm_window = defaults.gemm_hbm_window;
    uint32_t gemm_stages = defaults.gemm_stages, gemm_dyn = 0, gemm_whole = 2;
    uint32_t gemm_whole_cl = defaults.gemm_whole_cluster, gemm_whole_swap = defaults.gemm_whole_swap;
    uint32_t fuse_qkv = (uint32_t)defaults.fuse_qkv;
    int fuse_given = 0; /* --fuse-qkv on the command line */
    const char *skip_list = NULL, *empty_list = NULL, *times_path = NULL;
    int do_mode[NMODES] = {1, 1, 0};
    uint32_t batch = 8, prompt = 32, tokens = 32, layers = 0, pdl = 2, bk_reps = 0, deploy = 0, load_times = 0;
    int fit = 0, deploy_auto = 1; /* --deploy auto (the default): resolved once the ratios and baselines are known */
    uint64_t seed = 1, host_cap = UINT64_C(96) << 30, gpu_cap = 0;
    double ratios[MAX_RATIOS] = {0, 10, 20, 40, 60, 80, 100};
    int nr = 7;
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
        if (arg_is(a, "--model")) {
            VAL();
            model = v;
        } else if (arg_is(a, "--tiny")) {
            VAL();
            tiny = v;
        } else if (arg_is(a, "--weights")) {
            VAL();
            weights = v;
        } else if (arg_is(a, "--diag-skip")) {
            VAL();
            if (parse_skip("--diag-skip", v, &diag_skip)) return 2;
            skip_list = v;
        } else if (arg_is(a, "--gemm-pdl-pre")) {
            VAL();
            if (arg_u32_or_word(prog, "--gemm-pdl-pre", v, 0, 24, "none", DAK_GEMM_PDL_PRE_NONE, &gemm_pre)) return 2;
        } else if (arg_is(a, "--backend")) {
            VAL();
            if (strcmp(v, "auto") && strcmp(v, "gpu") && strcmp(v, "cpu")) {
                fprintf(stderr, "%s: --backend: expected auto, gpu or cpu, got '%s'\n", prog, v);
                return 2;
            }
            backend = v;
        } else if (arg_is(a, "--gemm-pre-none")) {
            VAL();
            if (!strcmp(v, "none")) pre_none = 0;
            else if (parse_skip("--gemm-pre-none", v, &pre_none)) return 2;
        } else if (arg_is(a, "--gemm-hbm-window")) {
            VAL();
            if (arg_u32(prog, "--gemm-hbm-window", v, 0, 24, &gemm_window)) return 2;
        } else if (arg_is(a, "--gemm-stages")) {
            VAL();
            if (arg_u32(prog, "--gemm-stages", v, 0, 24, &gemm_stages)) return 2;
        } else if (arg_is(a, "--gemm-dyn")) {
            VAL();
            if (arg_u32(prog, "--gemm-dyn", v, 0, 1, &gemm_dyn)) return 2;
        } else if (arg_is(a, "--gemm-whole")) {
            VAL();
            if (arg_u32(prog, "--gemm-whole", v, 0, 2, &gemm_whole)) return 2;
        } else if (arg_is(a, "--gemm-whole-cl")) {
            VAL();
            if (arg_u32(prog, "--gemm-whole-cl", v, 0, 1, &gemm_whole_cl)) return 2;
        } else if (arg_is(a, "--gemm-whole-swap")) {
            VAL();
            if (arg_u32(prog, "--gemm-whole-swap", v, 0, 3, &gemm_whole_swap)) return 2;
        } else if (arg_is(a, "--fuse-qkv")) {
            VAL();
            if (arg_u32(prog, "--fuse-qkv", v, 0, 1, &fuse_qkv)) return 2;
            fuse_given = 1;
        } else if (arg_is(a, "--norm-narrow")) {
            VAL();
            if (arg_u32(prog, "--norm-narrow", v, 0, 1, &norm_narrow)) return 2;
        } else if (arg_is(a, "--norm-trigger")) {
            VAL();
            if (!strcmp(v, "top")) norm_trig = 0;
            else if (!strcmp(v, "loaded")) norm_trig = 1;
            else if (!strcmp(v, "end")) norm_trig = 2;
            else {
                fprintf(stderr, "%s: --norm-trigger: expected top, loaded or end, got '%s'\n", prog, v);
                return 2;
            }
        } else if (arg_is(a, "--diag-empty")) {
            VAL();
            if (parse_skip("--diag-empty", v, &diag_empty)) return 2;
            empty_list = v;
        } else if (arg_is(a, "--diag-times")) {
            VAL();
            times_path = v;
        } else if (arg_is(a, "--prompt-text")) {
            VAL();
            prompt_text = v;
        } else if (arg_is(a, "--tokenizer")) {
            VAL();
            tokenizer = v;
        } else if (arg_is(a, "--prompt-ids")) {
            VAL();
            free(h->prompt_ids);
            if (parse_ids(v, &h->prompt_ids, &prompt_n)) return 2;
        } else if (arg_is(a, "--batch")) {
            VAL();
            if (arg_u32(prog, "--batch", v, 1, 4096, &batch)) return 2;
        } else if (arg_is(a, "--prompt")) {
            VAL();
            if (arg_u32(prog, "--prompt", v, 1, 8192, &prompt)) return 2;
            prompt_given = 1;
        } else if (arg_is(a, "--tokens")) {
            VAL();
            if (arg_u32(prog, "--tokens", v, 1, 8192, &tokens)) return 2;
        } else if (arg_is(a, "--ratios")) {
            VAL();
            fit = !strcmp(v, "fit");
            if (fit) nr = 1;
            else if (parse_ratios(v, ratios, &nr)) return 2;
        } else if (arg_is(a, "--load-pin")) {
            VAL();
            if (!strcmp(v, "register")) load_pin = DAK_ENG_PIN_REGISTER;
            else if (!strcmp(v, "alloc")) load_pin = DAK_ENG_PIN_ALLOC;
            else {
                fprintf(stderr, "%s: --load-pin: expected register or alloc, got '%s'\n", prog, v);
                return 2;
            }
        } else if (arg_is(a, "--load-times")) {
            VAL();
            if (arg_u32(prog, "--load-times", v, 0, 1, &load_times)) return 2;
        } else if (arg_is(a, "--deploy")) {
            VAL();
            if (!strcmp(v, "auto")) {
                deploy_auto = 1;
            } else if (strcmp(v, "0") && strcmp(v, "1")) {
                fprintf(stderr, "%s: --deploy: expected 0, 1 or auto, got '%s'\n", prog, v);
                return 2;
            } else {
                deploy = (uint32_t)(v[0] - '0'), deploy_auto = 0;
            }
        } else if (arg_is(a, "--baseline")) {
            VAL();
            if (parse_baselines(v, do_mode)) return 2;
        } else if (arg_is(a, "--layers")) {
            VAL();
            if (arg_u32(prog, "--layers", v, 1, 4096, &layers)) return 2;
        } else if (arg_is(a, "--seed")) {
            VAL();
            if (arg_u64(prog, "--seed", v, 0, UINT64_MAX, &seed)) return 2;
        } else if (arg_is(a, "--host-mem")) {
            VAL();
            if (arg_bytes(prog, "--host-mem", v, &host_cap)) return 2;
            if (host_cap == 0) {
                fprintf(stderr, "%s: --host-mem: expected a positive size, got '%s'\n", prog, v);
                return 2;
            }
        } else if (arg_is(a, "--gpu-mem")) {
            VAL();
            if (arg_bytes(prog, "--gpu-mem", v, &gpu_cap)) return 2;
            if (gpu_cap == 0) {
                fprintf(stderr, "%s: --gpu-mem: expected a positive size, got '%s'\n", prog, v);
                return 2;
            }
        } else if (arg_is(a, "--profile")) {
            VAL();
            profile = v;
        } else if (arg_is(a, "--pdl")) {
            VAL();
            if (arg_u32(prog, "--pdl", v, 0, 2, &pdl)) return 2;
        } else if (arg_is(a, "--breakdown")) {
            VAL();
            if (arg_u32(prog, "--breakdown", v, 0, 1000, &bk_reps)) return 2;
        } else if (arg_is(a, "--json")) {
            VAL();
            json_path = v;
        } else {
            fprintf(stderr, "%s: unknown option '%s': expected one of the options below\n", prog, a);
            usage(stderr);
            return 2;
        }
#undef VAL
    }
    if (text_prompt(prompt_text, tokenizer, model, &h->prompt_ids, &prompt_n, &h->tk)) return 2;
    const char *ids_flag = prompt_text ? "--prompt-text" : "--prompt-ids";
    if (h->prompt_ids && prompt_given && prompt != prompt_n) {
        fprintf(stderr, "%s: --prompt %u and %s of %u tokens: expected one of them (or the same length)\n", prog,
                prompt, ids_flag, prompt_n);
        return 2;
    }
    if (h->prompt_ids) prompt = prompt_n;
    if (deploy_auto) { /* --deploy auto: see the usage */
        double rmax = 0;
        for (int k = 0; k < nr; k++) rmax = ratios[k] > rmax ? ratios[k] : rmax;
        deploy = fit || (rmax == 0 && !do_mode[DAK_ENG_UM] && !times_path);
    }
    if (do_mode[DAK_ENG_UM] && deploy) {
        fprintf(stderr, "%s: --baseline um: expected --deploy 0 (the unified-memory baseline keeps the whole KV cache in "
                        "HBM, which a deployment does not hold)\n",
                prog);
        return 2;
    }
    /* leaving qkv_post out asks for its kernel: the unfused step, unless --fuse-qkv 1 was asked for too */
    if (!fuse_given && ((diag_skip | diag_empty) >> DAK_ENG_OP_QKV_POST & 1u)) fuse_qkv = 0;
    if (fuse_qkv && ((diag_skip | diag_empty) >> DAK_ENG_OP_QKV_POST & 1u)) {
        fprintf(stderr, "%s: --diag-skip / --diag-empty qkv_post: expected --fuse-qkv 0 (fused, the step has no "
                        "qkv_post kernel)\n",
                prog);
        return 2;
    }
    if (times_path && deploy) {
        fprintf(stderr, "%s: --diag-times: expected --deploy 0 (the stamps are the r = 0 run's)\n", prog);
        return 2;
    }
    if (fit && (!deploy || !gpu_cap)) {
        fprintf(stderr, "%s: --ratios fit: expected --deploy 1 and --gpu-mem BYTES (the budget to fit)\n", prog);
        return 2;
    }
    cm_err err = {{0}};
    char path[4096];
    dak_eng_model m;
    if (model_from_args(prog, model, tiny, layers, &m, path, sizeof path)) {
        if (!model == !tiny) usage(stderr);
        return 2;
    }
    for (uint32_t t = 0; t < prompt_n; t++)
        if ((uint64_t)h->prompt_ids[t] >= m.cfg.vocab) {
            fprintf(stderr, "%s: %s: token %d (position %u): expected 0..%llu, the model's vocabulary\n", prog,
                    ids_flag, h->prompt_ids[t], t, (unsigned long long)m.cfg.vocab - 1);
            return 2;
        }
    if (weights_from_args(prog, weights, model, &m, &h->ck)) return 2;
    uint32_t S = prompt + tokens;
    if (m.cfg.arch == DAK_ARCH_OPT && S > m.cfg.max_pos) {
        fprintf(stderr, "%s: --prompt + --tokens = %u: expected at most the model's %llu positions\n", prog, S,
                (unsigned long long)m.cfg.max_pos);
        return 2;
    }
    /* auto: the GPU engine where this build has it, a GPU is present and the model's shape is one its kernels take */
    cm_err gerr = {{0}};
    const int gpu_shape = dak_eng_model_gpu_check(&m, &gerr) == 0;
    if (!strcmp(backend, "gpu") && !gpu_shape) {
        fprintf(stderr, "%s: --backend gpu: %s\n", prog, gerr.msg);
        return 2;
    }
    const int cpu = !strcmp(backend, "cpu") || (!strcmp(backend, "auto") && (!dak_engine_available() || !gpu_shape));
    if (cpu) {
        const char *why = !strcmp(backend, "cpu") ? "" : !gpu_shape ? ": the model's head_dim is not the GPU engine's 128"
                                                                    : ": no GPU engine or no GPU here";
        for (int i = 1; i < argc; i++)
            for (size_t k = 0; k < sizeof gpu_only_flags / sizeof gpu_only_flags[0]; k++)
                if (arg_is(argv[i], gpu_only_flags[k])) {
                    fprintf(stderr, "%s: %s: an option of the GPU engine; expected --backend gpu (this run is on the "
                                    "CPU%s)\n",
                            prog, gpu_only_flags[k], why);
                    return 2;
                }
        if (!gpu_shape && strcmp(backend, "cpu"))
            fprintf(stderr, "%s: --backend auto: %s; decoding on the CPU\n", prog, gerr.msg);
        if (json_path && !(h->jf = strcmp(json_path, "-") ? fopen(json_path, "w") : stdout)) {
            fprintf(stderr, "%s: --json: cannot write '%s'\n", prog, json_path);
            return 1;
        }
        printf("model: %s (%s), layers %llu, hidden %llu, vocab %llu; weights: %s; backend: cpu (the reference forward "
               "pass: fp32 weights, dot products in double)\n",
               path, m.cfg.model_type, (unsigned long long)m.cfg.layers, (unsigned long long)m.cfg.hidden,
               (unsigned long long)m.cfg.vocab, h->ck ? dak_st_file(dak_eng_ckpt_file(h->ck), 0) : "synthetic");
        h->tok0 = cm_malloc((size_t)S * batch * 4);
        double tpot;
        if (decode_cpu(&m, h->ck, batch, prompt, tokens, seed, h->prompt_ids, h->tok0, &tpot)) return 1;
        printf("cpu: batch %u, prompt %u, tokens %u: %.3f ms a token\n", batch, prompt, tokens, tpot * 1e3);
        print_tokens(h->tok0, batch, prompt, S, h->prompt_ids, seed, (uint32_t)m.cfg.vocab, h->tk);
        if (h->jf) {
            json_w w;
            json_init(&w, h->jf);
            run_json_head(&w, "cpu", path, &m.cfg, batch, prompt, tokens, seed);
            json_kv_f64(&w, "tpot_s", tpot);
            seq0_json(&w, h->tok0, batch, prompt, S, h->prompt_ids, seed, (uint32_t)m.cfg.vocab, h->tk, prompt_text);
            json_obj_end(&w);
            fputc('\n', h->jf);
        }
        return 0;
    }
    const int do_pf = do_mode[DAK_ENG_PREFETCH], nmodes = do_mode[0] + do_mode[1] + do_mode[2];
    if (profile) {
        if (dak_profile_load(profile, &h->prof, &err)) {
            fprintf(stderr, "%s: --profile: %s\n", prog, err.msg);
            return 2;
        }
    } else {
        dak_profile_default(&h->prof);
    }
    size_t nops = 0;
    if (dak_model_ops(&m.cfg, batch, S, DAK_PLAN_UNIT_ROWS, &h->prof, &h->ops, &nops, &err)) {
        fprintf(stderr, "%s: %s\n", prog, err.msg);
        return 2;
    }
    int rc = 1, have_ref = 0;
    h->rows = cm_calloc((size_t)nr, sizeof *h->rows);
    h->u = cm_calloc(nops, sizeof *h->u);
    h->tok0 = cm_malloc((size_t)S * batch * 4), h->tokx = cm_malloc((size_t)S * batch * 4);
    /* opened before the runs, so that an unwritable --json fails before minutes of work */
    if (json_path && !(h->jf = strcmp(json_path, "-") ? fopen(json_path, "w") : stdout)) {
        fprintf(stderr, "%s: --json: cannot write '%s'\n", prog, json_path);
        goto done;
    }
    double total = dak_ops_total_bytes(h->ops, nops), tpot0 = NAN;
    dak_eng_breakdown bk0;
    memset(&bk0, 0, sizeof bk0);
    dak_eng_load_times lt0;
    memset(&lt0, 0, sizeof lt0);
    const dak_model_config *c = &m.cfg;
    /* bytes read per decode step: every weight (a gather: B rows) and the KV cache at the mean length */
    double wread = 0, kvread = 0;
    for (size_t i = 0; i < nops; i++)
        if (h->ops[i].kind != DAK_OP_ATTENTION)
            wread += dak_op_bytes(&h->ops[i]) * h->ops[i].repeat * h->ops[i].read_frac;
    for (uint32_t t = prompt; t < S; t++)
        kvread += 2.0 * c->layers * batch * (t + 1.0) * c->kv_heads * 128 * 2 / tokens;
    char wdesc[4200];
    if (h->ck) snprintf(wdesc, sizeof wdesc, "checkpoint %s", dak_st_file(dak_eng_ckpt_file(h->ck), 0));
    else snprintf(wdesc, sizeof wdesc, "synthetic bf16 (seed %llu)", (unsigned long long)seed);
    printf("model: %s (%s), layers %llu, hidden %llu, heads %llu / %llu kv, ffn %llu, vocab %llu; weights: %s\n",
           path, c->model_type, (unsigned long long)c->layers, (unsigned long long)c->hidden,
           (unsigned long long)c->heads, (unsigned long long)c->kv_heads, (unsigned long long)c->ffn,
           (unsigned long long)c->vocab, wdesc);
    printf("batch %u, prompt %u, tokens %u; plannable bytes %.3f GB (weights read a step %.3f GB, KV read a step "
           "%.3f GB mean); planner profile: %s\n",
           batch, prompt, tokens, total / 1e9, wread / 1e9, kvread / 1e9, h->prof.source);
    dak_eng_opts eo;
    dak_eng_opts_default(&eo);
    eo.host_cap = host_cap, eo.hbm_cap = gpu_cap, eo.verbose = 1, eo.gemm_pdl = pdl >= 1, eo.kernel_pdl = pdl >= 2;
    eo.ckpt = h->ck, eo.prompt_ids = h->prompt_ids, eo.prompt_n = prompt_n;
    eo.diag_skip = diag_skip, eo.diag_empty = diag_empty;
    eo.gemm_pdl_pre = gemm_pre, eo.diag_times = times_path != NULL, eo.norm_trigger = norm_trig;
    eo.norm_narrow = (int)norm_narrow, eo.gemm_pre_none = pre_none, eo.load_pin = load_pin;
    eo.gemm_hbm_window = gemm_window, eo.gemm_stages = gemm_stages, eo.gemm_dyn = gemm_dyn;
    eo.gemm_whole = gemm_whole == 0 ? DAK_ENG_WHOLE_OFF : gemm_whole == 1 ? DAK_ENG_WHOLE_ON : DAK_ENG_WHOLE_GEMM;
    eo.gemm_whole_cluster = gemm_whole_cl, eo.gemm_whole_swap = gemm_whole_swap, eo.fuse_qkv = (int)fuse_qkv;
    if (diag_skip) printf("diagnostic: the kernels of %s left out of every step\n", skip_list);
    if (diag_empty) printf("diagnostic: an empty kernel in place of each kernel of %s\n", empty_list);
    if (diag_skip || diag_empty) printf("diagnostic: the logits and tokens are wrong, the times are not a decode's\n");
    const int show_tokens = h->ck || h->prompt_ids; /* real weights or a real prompt: the tokens mean something */
    if (fit) {
        if (fit_ratio(&m, batch, S, h->ops, nops, &h->prof, (double)gpu_cap, do_pf, &ratios[0], &err)) {
            fprintf(stderr, "%s: --ratios fit: %s\n", prog, err.msg);
            goto done;
        }
        ratios[0] *= 100;
    }
    if (deploy_auto)
        printf("deploy auto: %s\n", !deploy ? "0, a full copy in each tier (every ratio a view of it)"
                                     : fit  ? "1, the placement that fits only"
                                            : "1, every ratio is 0: the placement only, no host copy of the model");
    /* the full engine and its r = 0 reference (a deployment has none: the first run's tokens are the reference) */
    if (!deploy) {
        if (dak_engine_create(&h->e, &m, batch, S, seed, &eo, &err)) {
            fprintf(stderr, "%s: %s\n", prog, err.msg);
            goto done;
        }
        dak_engine_load_times(h->e, &lt0);
        if (load_times) load_times_print("(full copies)", &lt0);
        uint64_t hb, hh;
        dak_engine_mem(h->e, &hb, &hh);
        printf("engine: %.2f GB HBM, %.2f GB pinned host (full copies of weights and KV cache, so that every "
               "placement is a view)\n",
               hb / 1e9, hh / 1e9);
        dak_eng_place pl;
        dak_eng_place_zero(&m, &pl);
        int bad = dak_engine_setup(h->e, &pl, DAK_ENG_DIRECT, prompt, tokens, &err) ||
                  dak_engine_run(h->e, &tpot0, &err) || dak_engine_tokens(h->e, h->tok0, S, &err) ||
                  (times_path && decode_stamps_write(h->e, (uint32_t)m.cfg.layers / 2, times_path, &err)) ||
                  (bk_reps && breakdown(h->e, bk_reps, "r = 0 (all HBM)", &bk0, &err));
        dak_eng_place_free(&pl);
        if (bad) {
            fprintf(stderr, "%s: r = 0: %s\n", prog, err.msg);
            goto done;
        }
        if (show_tokens) print_tokens(h->tok0, batch, prompt, S, h->prompt_ids, seed, (uint32_t)m.cfg.vocab, h->tk);
    }
    bench_progress_t pg;
    bench_progress_start(&pg, "dak decode: ratio x baseline runs", (uint64_t)nr * nmodes);
    uint64_t done_runs = 0;
    for (int k = 0; k < nr; k++) {
        row_t *rw = &h->rows[k];
        rw->r = ratios[k] / 100.0;
        if (dak_plan_greedy(h->ops, nops, rw->r * total, h->prof.b_h, h->prof.b_g, h->u, &err)) {
            fprintf(stderr, "%s: ratio %g %%: %s\n", prog, ratios[k], err.msg);
            goto done;
        }
        dak_eng_place pl;
        if (dak_eng_place_map(&m, batch, S, h->ops, nops, h->u, &pl, &err)) {
            fprintf(stderr, "%s: ratio %g %%: %s\n", prog, ratios[k], err.msg);
            goto done;
        }
        rw->host_bytes = pl.host_bytes;
        rw->pred = dak_plan_time(h->ops, nops, h->u, h->prof.b_h, h->prof.b_g);
        if (deploy) { /* this placement only, in each tier */
            dak_engine_destroy(h->e);
            h->e = NULL;
            eo.deploy = &pl;
            int bad = dak_engine_create(&h->e, &m, batch, S, seed, &eo, &err);
            eo.deploy = NULL;
            if (bad) {
                fprintf(stderr, "%s: ratio %g %%: %s\n", prog, ratios[k], err.msg);
                dak_eng_place_free(&pl);
                goto done;
            }
            dak_engine_load_times(h->e, &rw->lt);
            rw->grouped = dak_engine_grouped(h->e);
            if (load_times) {
                char what[64];
                snprintf(what, sizeof what, "(deployment r = %g %%)", ratios[k]);
                load_times_print(what, &rw->lt);
            }
            uint64_t hb, hh;
            dak_engine_mem(h->e, &hb, &hh);
            printf("deployment r = %g %%: engine %.2f GB HBM, %.2f GB pinned host, %u matrices in k_whole_sw's row "
                   "groups\n", ratios[k], hb / 1e9, hh / 1e9, rw->grouped);
            rw->hbm = (double)hb, rw->host = (double)hh;
        }
        printf("plan r = %g %%: host %.3f GB (weights %.3f, KV %.3f); predicted step %.3f ms; host bytes by op:",
               ratios[k], pl.host_bytes / 1e9, pl.host_weight_bytes / 1e9, pl.host_kv_bytes / 1e9, rw->pred * 1e3);
        for (size_t i = 0; i < nops && i < 16; i++) {
            rw->op_host[i] = dak_op_host_bytes(&h->ops[i], h->u[i]);
            printf(" %s %.3f", h->ops[i].name, rw->op_host[i] / 1e9);
        }
        printf(" GB\n");
        rw->um_bytes = dak_eng_um_bytes(&m, &pl, &rw->um_moved);
        if (do_mode[DAK_ENG_UM])
            printf("unified memory r = %g %%: %.3f GB managed, %.3f GB of rows pushed back and faulted in a step "
                   "(the KV cache stays in HBM)\n",
                   ratios[k], rw->um_bytes / 1e9, rw->um_moved / 1e9);
        for (int md = 0; md < NMODES; md++) {
            if (!do_mode[md]) continue;
            double tp;
            char label[64];
            snprintf(label, sizeof label, "r = %g %% %s", ratios[k], dak_eng_mode_name((dak_eng_mode)md));
            if (dak_engine_setup(h->e, &pl, (dak_eng_mode)md, prompt, tokens, &err) ||
                dak_engine_run(h->e, &tp, &err) || dak_engine_tokens(h->e, h->tokx, S, &err) ||
                (bk_reps && breakdown(h->e, bk_reps, label, &rw->bk[md], &err))) {
                fprintf(stderr, "%s: %s: %s\n", prog, label, err.msg);
                dak_eng_place_free(&pl);
                goto done;
            }
            rw->ran[md] = 1, rw->tpot[md] = tp, rw->eb[md] = (wread + kvread) / tp;
            if (deploy && !have_ref) {
                memcpy(h->tok0, h->tokx, (size_t)S * batch * 4), have_ref = 1;
                if (show_tokens)
                    print_tokens(h->tok0, batch, prompt, S, h->prompt_ids, seed, (uint32_t)m.cfg.vocab, h->tk);
            }
            size_t same = 0, all = (size_t)(tokens + 1) * batch;
            for (size_t i = (size_t)(prompt - 1) * batch; i < (size_t)S * batch; i++) same += h->tok0[i] == h->tokx[i];
            rw->tok_match[md] = (double)same / (double)all;
            printf("run %s: TPOT %.3f ms, EB %.1f GB/s\n", label, tp * 1e3, rw->eb[md] / 1e9);
            fflush(stdout); /* a run cut short by a time limit keeps the lines of the runs it finished */
            bench_progress(&pg, ++done_runs);
        }
        dak_eng_place_free(&pl);
    }
    bench_progress_end(&pg, done_runs);
    printf("\n%6s %8s %12s %13s %12s %12s %10s %11s %10s %12s %7s %7s %9s\n", "r %", "host GB", "TPOT direct",
           "TPOT prefetch", "TPOT um", "TPOT r=0", "EB direct", "EB prefetch", "EB um", "predicted", "pf/dir", "um/dir",
           deploy ? "tok=1st" : "tok=r0");
    printf("%6s %8s %12s %13s %12s %12s %10s %11s %10s %12s %7s %7s %9s\n", "", "", "ms", "ms", "ms", "ms", "GB/s",
           "GB/s", "GB/s", "ms", "", "", "");
    for (int k = 0; k < nr; k++) {
        row_t *rw = &h->rows[k];
        double tp[NMODES], eb[NMODES], tm = NAN;
        for (int md = 0; md < NMODES; md++) {
            tp[md] = rw->ran[md] ? rw->tpot[md] * 1e3 : NAN, eb[md] = rw->ran[md] ? rw->eb[md] / 1e9 : NAN;
            if (rw->ran[md] && isnan(tm)) tm = 100 * rw->tok_match[md];
        }
        printf("%6.1f %8.3f %12.3f %13.3f %12.3f %12.3f %10.1f %11.1f %10.1f %12.3f %7.2f %7.2f %8.0f%%\n", rw->r * 100,
               rw->host_bytes / 1e9, tp[0], tp[1], tp[2], tpot0 * 1e3, eb[0], eb[1], eb[2], rw->pred * 1e3,
               tp[1] / tp[0], tp[2] / tp[0], tm);
    }
    if (h->jf) {
        json_w w;
        json_init(&w, h->jf);
        run_json_head(&w, "gpu", path, c, batch, prompt, tokens, seed);
        json_kv_u64(&w, "gemm_pdl", pdl);
        json_kv_str(&w, "weights", wdesc);
        if (diag_skip) json_kv_str(&w, "diag_skip", skip_list);
        if (diag_empty) json_kv_str(&w, "diag_empty", empty_list);
        if (gemm_pre == DAK_GEMM_PDL_PRE_NONE) json_kv_str(&w, "gemm_pdl_pre", "none");
        else json_kv_u64(&w, "gemm_pdl_pre", gemm_pre);
        json_kv_u64(&w, "norm_trigger", norm_trig);
        json_kv_u64(&w, "norm_narrow", norm_narrow);
        json_kv_u64(&w, "gemm_pre_none_mask", pre_none);
        json_kv_u64(&w, "gemm_hbm_window", gemm_window);
        json_kv_u64(&w, "gemm_stages", gemm_stages);
        json_kv_u64(&w, "gemm_dyn", gemm_dyn);
        json_kv_u64(&w, "gemm_whole", gemm_whole);
        json_kv_u64(&w, "gemm_whole_cluster", gemm_whole_cl);
        json_kv_u64(&w, "gemm_whole_swap", gemm_whole_swap);
        json_kv_str(&w, "load_pin", load_pin == DAK_ENG_PIN_ALLOC ? "alloc" : "register");
        json_kv_u64(&w, "fuse_qkv", fuse_qkv);
        if (show_tokens && (have_ref || !deploy)) /* the all-HBM run's tokens, or the first deployed run's */
            seq0_json(&w, h->tok0, batch, prompt, S, h->prompt_ids, seed, (uint32_t)c->vocab, h->tk, prompt_text);
        json_kv_str(&w, "profile", h->prof.source);
        json_kv_f64(&w, "plannable_bytes", total);
        json_kv_f64(&w, "weight_bytes_read_per_step", wread);
        json_kv_f64(&w, "kv_bytes_read_per_step_mean", kvread);
        json_kv_u64(&w, "deploy", deploy);
        if (gpu_cap) json_kv_u64(&w, "gpu_mem", gpu_cap);
        json_kv_f64(&w, "tpot_r0_s", tpot0);
        if (load_times && !deploy) load_times_json(&w, &lt0);
        if (bk_reps) breakdown_json(&w, "breakdown_r0", &bk0);
        json_key(&w, "rows");
        json_arr_begin(&w);
        for (int k = 0; k < nr; k++) {
            row_t *rw = &h->rows[k];
            json_obj_begin(&w);
            json_kv_f64(&w, "ratio", rw->r);
            json_kv_f64(&w, "host_bytes", rw->host_bytes);
            json_kv_f64(&w, "predicted_step_s", rw->pred);
            if (deploy) json_kv_f64(&w, "engine_hbm_bytes", rw->hbm), json_kv_f64(&w, "engine_host_bytes", rw->host);
            if (deploy) json_kv_u64(&w, "gemm_grouped", rw->grouped);
            if (deploy && load_times) load_times_json(&w, &rw->lt);
            for (int md = 0; md < NMODES; md++) {
                if (!rw->ran[md]) continue;
                const char *mn = dak_eng_mode_name((dak_eng_mode)md);
                char key[64];
                snprintf(key, sizeof key, "tpot_%s_s", mn);
                json_kv_f64(&w, key, rw->tpot[md]);
                snprintf(key, sizeof key, "eb_%s_gbs", mn);
                json_kv_f64(&w, key, rw->eb[md] / 1e9);
                snprintf(key, sizeof key, "tokens_equal_r0_%s", mn);
                json_kv_f64(&w, key, rw->tok_match[md]);
                snprintf(key, sizeof key, "breakdown_%s", mn);
                if (bk_reps) breakdown_json(&w, key, &rw->bk[md]);
            }
            if (rw->ran[DAK_ENG_UM]) {
                json_kv_f64(&w, "um_managed_bytes", rw->um_bytes);
                json_kv_f64(&w, "um_moved_bytes_per_step", rw->um_moved);
            }
            json_key(&w, "op_host_bytes");
            json_obj_begin(&w);
            for (size_t i = 0; i < nops && i < 16; i++) json_kv_f64(&w, h->ops[i].name, rw->op_host[i]);
            json_obj_end(&w);
            json_obj_end(&w);
        }
        json_arr_end(&w);
        json_obj_end(&w);
        fputc('\n', h->jf);
    }
    rc = 0;
done:
    return rc;
}

int cmd_decode(int argc, char **argv)
{
    decode_held h;
    memset(&h, 0, sizeof h);
    int rc = decode(argc, argv, &h);
    if (h.jf && h.jf != stdout) fclose(h.jf);
    dak_engine_destroy(h.e);
    free(h.rows), free(h.u), free(h.tok0), free(h.tokx), free(h.ops), free(h.prompt_ids);
    dak_eng_ckpt_close(h.ck);
    dak_profile_free(&h.prof);
    dak_tok_free(h.tk);
    return rc;
}
