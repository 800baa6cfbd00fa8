/* dak engine: the parameter table (shapes and synthetic values of every tensor the engine reads) and
 * checkpoints in the Hugging Face layout (safetensors), bound to that table (include/dak/engine.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bench.h"
#include "common/threads.h"
#include "dak/engine.h"
#include "dak/tile_layout.h"

int dak_eng_param_of(const dak_eng_model *m, uint32_t tensor, dak_eng_param *p)
{
    const dak_model_config *c = &m->cfg;
    const int opt = c->arch == DAK_ARCH_OPT;
    const uint64_t H = c->hidden, V = c->vocab;
    memset(p, 0, sizeof *p);
    p->present = 1, p->rows = 1, p->cols = H, p->weight = 0;
    if (tensor < DAK_ENG_T_LAYER0) {
        switch (tensor) {
        case DAK_ENG_T_EMBED: p->rows = V, p->scale = dak_eng_embed_scale(m), p->weight = 1; return 0;
        case DAK_ENG_T_POS:
            p->present = opt, p->rows = c->max_pos + DAK_ENG_OPT_POS_OFFSET, p->scale = 0.05f, p->weight = 1;
            return 0;
        case DAK_ENG_T_LM: p->present = !opt, p->rows = V, p->scale = dak_eng_lin_scale((uint32_t)H), p->weight = 1; return 0;
        case DAK_ENG_T_NF_G: p->scale = 0.1f, p->offset = 1.0f; return 0;
        case DAK_ENG_T_NF_B: p->present = opt, p->scale = 0.05f; return 0;
        default: return -1;
        }
    }
    const uint32_t l = (tensor - DAK_ENG_T_LAYER0) / 32u, item = (tensor - DAK_ENG_T_LAYER0) % 32u;
    if (l >= c->layers) return -1;
    uint32_t M, K;
    if (item < DAK_ENG_NLIN) {
        dak_eng_lin_shape(m, item, &M, &K);
        p->present = M > 0, p->rows = M, p->cols = K, p->scale = dak_eng_lin_scale(K), p->weight = 1;
        return 0;
    }
    if (item >= DAK_ENG_I_BIAS0 && item < DAK_ENG_I_BIAS0 + DAK_ENG_NLIN) {
        dak_eng_lin_shape(m, item - DAK_ENG_I_BIAS0, &M, &K);
        p->present = c->bias && M > 0, p->cols = M, p->scale = 0.05f;
        return 0;
    }
    switch (item) {
    case DAK_ENG_I_N1_G:
    case DAK_ENG_I_N2_G: p->scale = 0.1f, p->offset = 1.0f; return 0;
    case DAK_ENG_I_N1_B:
    case DAK_ENG_I_N2_B: p->present = opt, p->scale = 0.05f; return 0;
    default: return -1;
    }
}

/* ---- Hugging Face names ----------------------------------------------------------------------- */

/* OPTForCausalLM's names start "model.decoder.", OPTModel's "decoder."; Llama's "model." */
static const char *const OPT_PREFIXES[] = {"model.decoder.", "decoder."};
static const char *const LLAMA_PREFIXES[] = {"model."};

/* tensor's name after the prefix (into buf), or 0 when the engine's tensor has no name of its own */
static int hf_suffix(int opt, uint32_t tensor, char *buf, size_t n)
{
    static const char *const opt_lin[DAK_ENG_NLIN] = {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                                                      "self_attn.out_proj", "fc1", NULL, "fc2"};
    static const char *const llama_lin[DAK_ENG_NLIN] = {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                                                        "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj",
                                                        "mlp.down_proj"};
    if (tensor < DAK_ENG_T_LAYER0) {
        const char *s = NULL;
        switch (tensor) {
        case DAK_ENG_T_EMBED: s = "embed_tokens.weight"; break;
        case DAK_ENG_T_POS: s = "embed_positions.weight"; break;
        case DAK_ENG_T_NF_G: s = opt ? "final_layer_norm.weight" : "norm.weight"; break;
        case DAK_ENG_T_NF_B: s = "final_layer_norm.bias"; break;
        default: return 0; /* lm_head: no prefix (dak_eng_ckpt_open) */
        }
        snprintf(buf, n, "%s", s);
        return 1;
    }
    const uint32_t l = (tensor - DAK_ENG_T_LAYER0) / 32u, item = (tensor - DAK_ENG_T_LAYER0) % 32u;
    const char *const *lin = opt ? opt_lin : llama_lin;
    if (item < DAK_ENG_NLIN && lin[item]) {
        snprintf(buf, n, "layers.%u.%s.weight", l, lin[item]);
    } else if (item >= DAK_ENG_I_BIAS0 && item < DAK_ENG_I_BIAS0 + DAK_ENG_NLIN && lin[item - DAK_ENG_I_BIAS0]) {
        snprintf(buf, n, "layers.%u.%s.bias", l, lin[item - DAK_ENG_I_BIAS0]);
    } else if (item >= DAK_ENG_I_N1_G && item <= DAK_ENG_I_N2_B) {
        const int second = item >= DAK_ENG_I_N2_G, beta = (item - DAK_ENG_I_N1_G) % 2;
        const char *norm = opt ? (second ? "final_layer_norm" : "self_attn_layer_norm")
                               : (second ? "post_attention_layernorm" : "input_layernorm");
        snprintf(buf, n, "layers.%u.%s.%s", l, norm, beta ? "bias" : "weight");
    } else {
        return 0;
    }
    return 1;
}

/* ---- binding -------------------------------------------------------------------------------- */

struct dak_eng_ckpt {
    dak_st *st;
    dak_eng_model m;
    const char *prefix;
    const dak_st_tensor **glob; /* [DAK_ENG_T_LAYER0] */
    const dak_st_tensor **lay;  /* [layers][32] */
};

static const dak_st_tensor **slot(dak_eng_ckpt *ck, uint32_t tensor)
{
    return tensor < DAK_ENG_T_LAYER0 ? &ck->glob[tensor] : &ck->lay[tensor - DAK_ENG_T_LAYER0];
}

static const dak_st_tensor *bound(const dak_eng_ckpt *ck, uint32_t tensor)
{
    if (tensor < DAK_ENG_T_LAYER0) return ck->glob[tensor];
    if ((tensor - DAK_ENG_T_LAYER0) / 32u >= ck->m.cfg.layers) return NULL;
    return ck->lay[tensor - DAK_ENG_T_LAYER0];
}

/* binds the engine's tensor to the checkpoint's tensor t, checking its shape and type */
static int bind(dak_eng_ckpt *ck, uint32_t tensor, const dak_eng_param *p, const dak_st_tensor *t, cm_err *err)
{
    const char *f = dak_st_file(ck->st, t->file);
    if (t->dtype == DAK_ST_OTHER)
        return cm_fail(err, "%s: tensor '%s' is %s: expected BF16, F16 or F32", f, t->name, t->dtype_name);
    const int vec = !p->weight;
    if (vec ? t->ndim != 1 || t->shape[0] != p->cols
            : t->ndim != 2 || t->shape[0] != p->rows || t->shape[1] != p->cols) {
        char got[96] = "";
        size_t n = 0;
        for (uint32_t d = 0; d < t->ndim && n < sizeof got - 24; d++)
            n += (size_t)snprintf(got + n, sizeof got - n, "%s%llu", d ? ", " : "", (unsigned long long)t->shape[d]);
        if (vec)
            return cm_fail(err, "%s: tensor '%s' has shape [%s]: expected [%llu] for this model", f, t->name, got,
                           (unsigned long long)p->cols);
        return cm_fail(err, "%s: tensor '%s' has shape [%s]: expected [%llu, %llu] for this model", f, t->name, got,
                       (unsigned long long)p->rows, (unsigned long long)p->cols);
    }
    *slot(ck, tensor) = t;
    return 0;
}

void dak_eng_ckpt_close(dak_eng_ckpt *ck)
{
    if (!ck) return;
    dak_st_close(ck->st);
    free(ck->glob), free(ck->lay), free(ck);
}

int dak_eng_ckpt_open(dak_eng_ckpt **out, const char *path, const dak_eng_model *m, cm_err *err)
{
    *out = NULL;
    dak_eng_ckpt *ck = cm_calloc(1, sizeof *ck);
    ck->m = *m;
    const uint32_t L = (uint32_t)m->cfg.layers;
    const int opt = m->cfg.arch == DAK_ARCH_OPT;
    ck->glob = cm_calloc(DAK_ENG_T_LAYER0, sizeof *ck->glob);
    ck->lay = cm_calloc((size_t)L * 32u, sizeof *ck->lay);
    if (dak_st_open(&ck->st, path, err)) {
        dak_eng_ckpt_close(ck);
        return -1;
    }
    /* the prefix: the one under which the embedding is found */
    const char *const *pre = opt ? OPT_PREFIXES : LLAMA_PREFIXES;
    const size_t npre = opt ? sizeof OPT_PREFIXES / sizeof *OPT_PREFIXES : 1;
    char name[160], suffix[128];
    hf_suffix(opt, DAK_ENG_T_EMBED, suffix, sizeof suffix);
    for (size_t i = 0; i < npre && !ck->prefix; i++) {
        snprintf(name, sizeof name, "%s%s", pre[i], suffix);
        if (dak_st_find(ck->st, name)) ck->prefix = pre[i];
    }
    int rc = 0;
    if (!ck->prefix)
        rc = cm_fail(err, "%s: no token embedding ('%s%s'%s): expected a %s checkpoint in the Hugging Face layout", path,
                     pre[0], suffix, opt ? " or 'decoder.embed_tokens.weight'" : "", opt ? "OPT" : "Llama");
    /* every tensor the engine reads, bound and checked */
    for (uint32_t tensor = 1; !rc && tensor < DAK_ENG_T_LAYER0 + 32u * L; tensor++) {
        dak_eng_param p;
        if (dak_eng_param_of(m, tensor, &p) || !p.present) continue;
        const dak_st_tensor *t = NULL;
        if (tensor == DAK_ENG_T_LM) {
            t = dak_st_find(ck->st, "lm_head.weight");
            if (!t && m->cfg.tie_embeddings) t = bound(ck, DAK_ENG_T_EMBED); /* bound first: tensor 1 */
            if (!t) {
                rc = cm_fail(err, "%s: no 'lm_head.weight' (the model's config does not tie it to the embedding)",
                             path);
                break;
            }
        } else {
            if (!hf_suffix(opt, tensor, suffix, sizeof suffix)) continue;
            snprintf(name, sizeof name, "%s%s", ck->prefix, suffix);
            t = dak_st_find(ck->st, name);
            if (!t) {
                rc = cm_fail(err, "%s: no tensor '%s', which a %s model of %u layers%s needs", path, name,
                             opt ? "OPT" : "Llama", L, m->cfg.bias ? " with biases" : "");
                break;
            }
        }
        rc = bind(ck, tensor, &p, t, err);
    }
    if (rc) {
        dak_eng_ckpt_close(ck);
        return -1;
    }
    *out = ck;
    return 0;
}

const char *dak_eng_ckpt_name(const dak_eng_ckpt *ck, uint32_t tensor)
{
    const dak_st_tensor *t = bound(ck, tensor);
    return t ? t->name : NULL;
}

const dak_st *dak_eng_ckpt_file(const dak_eng_ckpt *ck) { return ck->st; }

/* rows [row0, row0 + rows) of a bound tensor as element indices */
static const dak_st_tensor *rows_of(const dak_eng_ckpt *ck, uint32_t tensor, uint64_t row0, uint64_t rows,
                                    uint64_t *first, uint64_t *n, cm_err *err)
{
    const dak_st_tensor *t = bound(ck, tensor);
    if (!t) {
        cm_fail(err, "checkpoint: the engine's tensor %u is not in it", tensor);
        return NULL;
    }
    const uint64_t cols = t->ndim == 2 ? t->shape[1] : dak_st_elems(t);
    *first = row0 * cols, *n = rows * cols;
    return t;
}

int dak_eng_ckpt_bf16(const dak_eng_ckpt *ck, uint32_t tensor, uint64_t row0, uint64_t rows, uint16_t *dst, cm_err *err)
{
    uint64_t first, n;
    const dak_st_tensor *t = rows_of(ck, tensor, row0, rows, &first, &n, err);
    return t ? dak_st_read_bf16(ck->st, t, first, n, dst, err) : -1;
}

int dak_eng_ckpt_f32(const dak_eng_ckpt *ck, uint32_t tensor, uint64_t row0, uint64_t rows, float *dst, cm_err *err)
{
    uint64_t first, n;
    const dak_st_tensor *t = rows_of(ck, tensor, row0, rows, &first, &n, err);
    return t ? dak_st_read_f32(ck->st, t, first, n, dst, err) : -1;
}

/* ---- synthetic checkpoints -------------------------------------------------------------------- */

typedef struct {
    const dak_eng_model *m;
    uint64_t seed;
    const uint32_t *ids; /* the engine's tensor of each written tensor */
    const dak_st_out *out;
    bench_progress_t *prog; /* or NULL */
    uint64_t done;          /* elements written */
} synth_arg;

/* ---- the packed layout on the CPU ------------------------------------------------------------------ */

typedef struct {
    uint16_t *dst;
    const uint16_t *src;
    uint64_t row0, rows;
    uint32_t K;
} pack_job;

/* Row r's 16-byte chunks where dak/tile_layout.h puts them: block row by block row (8 chunks, 128 bytes), each
 * chunk at its swizzled position in it. */
static void *pack_run(void *arg)
{
    const pack_job *j = (const pack_job *)arg;
    const uint32_t K = j->K; /* in locals: the stores below may alias *j as far as the compiler knows */
    const uint16_t *src = j->src;
    uint8_t *dst = (uint8_t *)j->dst;
    static const uint8_t zero[16];
    for (uint64_t i = 0; i < j->rows; i++) {
        const uint64_t r = j->row0 + i;
        const uint8_t *s = src ? (const uint8_t *)(src + i * K) : NULL;
        for (uint64_t kc = 0; kc < K / 64u; kc++) {
            uint8_t *d = dst + dak_tile_brow_off(r, kc, K) * 16u;
            for (uint32_t jj = 0; jj < 8u; jj++)
                memcpy(d + dak_tile_chunk_pos(r, jj) * 16u, s ? s + (kc * 8u + jj) * 16u : zero, 16);
        }
    }
    return NULL;
}

int dak_eng_pack_rows(uint16_t *dst, const uint16_t *src, uint64_t row0, uint64_t rows, uint32_t K, unsigned threads,
                      cm_err *err)
{
    if (K == 0 || K % 64u) return cm_fail(err, "pack: K = %u: expected a positive multiple of 64", K);
    const uint64_t bytes = rows * K * 2u;
    unsigned n = threads > 1 && bytes >= ((uint64_t)8 << 20) ? threads : 1u;
    if (n > rows) n = (unsigned)rows;
    if (n <= 1) {
        pack_job j = {dst, src, row0, rows, K};
        pack_run(&j);
        return 0;
    }
    pack_job *jobs = (pack_job *)cm_malloc(n * sizeof *jobs);
    const uint64_t share = rows / n, rest = rows % n;
    for (unsigned t = 0; t < n; t++) {
        const uint64_t at = t * share + (t < rest ? t : rest);
        jobs[t] = (pack_job){dst, src ? src + at * K : NULL, row0 + at, share + (t < rest), K};
    }
    cm_run_threads(n, pack_run, jobs, sizeof *jobs);
    free(jobs);
    return 0;
}

static int synth_fill(void *arg, size_t i, void *buf, cm_err *err)
{
    synth_arg *a = arg;
    dak_eng_param p;
    if (dak_eng_param_of(a->m, a->ids[i], &p)) return cm_fail(err, "synthetic checkpoint: tensor %u", a->ids[i]);
    const uint64_t n = p.rows * p.cols;
    for (uint64_t j = 0; j < n; j++) {
        const uint16_t b = dak_eng_param_bf16(a->seed, a->ids[i], j, p.scale, p.offset);
        if (a->out[i].dtype == DAK_ST_BF16) {
            ((uint16_t *)buf)[j] = b;
        } else if (a->out[i].dtype == DAK_ST_F32) {
            ((float *)buf)[j] = dak_bf16_to_f32(b);
        } else {
            return cm_fail(err, "synthetic checkpoint: only BF16 and F32 hold the synthetic values exactly");
        }
    }
    a->done += n;
    if (a->prog) bench_progress(a->prog, a->done);
    return 0;
}

int dak_eng_ckpt_write_synthetic(const dak_eng_model *m, uint64_t seed, dak_st_dtype dtype, const char *path,
                                 int verbose, cm_err *err)
{
    if (dtype != DAK_ST_BF16 && dtype != DAK_ST_F32)
        return cm_fail(err, "synthetic checkpoint: dtype: expected BF16 or F32 (they hold the bf16 values exactly)");
    const uint32_t L = (uint32_t)m->cfg.layers;
    const int opt = m->cfg.arch == DAK_ARCH_OPT;
    const size_t cap = DAK_ENG_T_LAYER0 + 32u * (size_t)L;
    uint32_t *ids = cm_malloc(cap * sizeof *ids);
    dak_st_out *out = cm_calloc(cap, sizeof *out);
    char (*names)[160] = cm_malloc(cap * sizeof *names);
    size_t n = 0;
    for (uint32_t tensor = 1; tensor < cap; tensor++) {
        dak_eng_param p;
        char suffix[128];
        if (dak_eng_param_of(m, tensor, &p) || !p.present) continue;
        if (tensor == DAK_ENG_T_LM) snprintf(names[n], sizeof names[n], "lm_head.weight");
        else if (hf_suffix(opt, tensor, suffix, sizeof suffix))
            snprintf(names[n], sizeof names[n], "%s%s", opt ? OPT_PREFIXES[0] : LLAMA_PREFIXES[0], suffix);
        else continue;
        ids[n] = tensor;
        out[n].name = names[n], out[n].dtype = dtype;
        if (p.weight) out[n].ndim = 2, out[n].shape[0] = p.rows, out[n].shape[1] = p.cols;
        else out[n].ndim = 1, out[n].shape[0] = p.cols;
        n++;
    }
    bench_progress_t prog;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) total += out[i].ndim == 2 ? out[i].shape[0] * out[i].shape[1] : out[i].shape[0];
    if (verbose) bench_progress_start(&prog, "synthetic checkpoint: parameters", total);
    synth_arg a = {m, seed, ids, out, verbose ? &prog : NULL, 0};
    int rc = dak_st_write(path, out, n, synth_fill, &a, err);
    if (verbose) bench_progress_end(&prog, a.done);
    free(ids), free(out), free(names);
    return rc;
}
