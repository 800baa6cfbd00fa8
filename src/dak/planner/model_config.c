/* config.json -> dak_model_config, parameter and KV-cache arithmetic. */
#include "dak/model_config.h"

#include <stdio.h>
#include <string.h>

#define BIG (UINT64_C(1) << 40)

static int getu(const jr_doc *d, const jr_val *o, const char *key, int req, uint64_t lo,
                uint64_t hi, uint64_t dflt, uint64_t *out, cm_err *err)
{
    return jr_get_u64(d, o, key, req, lo, hi, dflt, out, err);
}

int dak_config_from_json(const jr_doc *doc, dak_model_config *cfg, cm_err *err)
{
    memset(cfg, 0, sizeof *cfg);
    const jr_val *o = doc->root;
    if (jr_expect(doc, o, JR_OBJECT, "config.json top level", err)) return -1;
    const char *mt = NULL, *dt = NULL;
    if (jr_get_str(doc, o, "model_type", 1, NULL, &mt, err)) return -1;
    if (!strcmp(mt, "opt")) cfg->arch = DAK_ARCH_OPT;
    else if (!strcmp(mt, "llama")) cfg->arch = DAK_ARCH_LLAMA;
    else {
        const jr_val *v = jr_obj_get(o, "model_type");
        return cm_fail(err, "%s:%d:%d: key 'model_type': expected \"opt\" or \"llama\", got \"%s\"",
                       doc->name, v->line, v->col, mt);
    }
    snprintf(cfg->model_type, sizeof cfg->model_type, "%s", mt);
    if (jr_get_str(doc, o, "torch_dtype", 0, "float16", &dt, err)) return -1;
    if (!strcmp(dt, "float16") || !strcmp(dt, "bfloat16")) cfg->elem_bytes = 2;
    else if (!strcmp(dt, "float32")) cfg->elem_bytes = 4;
    else {
        const jr_val *v = jr_obj_get(o, "torch_dtype");
        return cm_fail(err,
                       "%s:%d:%d: key 'torch_dtype': expected \"float16\", \"bfloat16\" or "
                       "\"float32\", got \"%s\"",
                       doc->name, v->line, v->col, dt);
    }
    snprintf(cfg->dtype, sizeof cfg->dtype, "%s", dt);

    if (getu(doc, o, "hidden_size", 1, 1, BIG, 0, &cfg->hidden, err)) return -1;
    if (getu(doc, o, "num_hidden_layers", 1, 1, 100000, 0, &cfg->layers, err)) return -1;
    if (getu(doc, o, "num_attention_heads", 1, 1, 1 << 20, 0, &cfg->heads, err)) return -1;
    if (getu(doc, o, "vocab_size", 1, 1, BIG, 0, &cfg->vocab, err)) return -1;
    if (getu(doc, o, "max_position_embeddings", 0, 1, BIG, 2048, &cfg->max_pos, err)) return -1;

    if (cfg->arch == DAK_ARCH_OPT) {
        uint64_t proj;
        int before;
        if (getu(doc, o, "ffn_dim", 1, 1, BIG, 0, &cfg->ffn, err)) return -1;
        if (jr_get_bool(doc, o, "enable_bias", 0, 1, &cfg->bias, err)) return -1;
        if (jr_get_bool(doc, o, "tie_word_embeddings", 0, 1, &cfg->tie_embeddings, err))
            return -1;
        if (jr_get_bool(doc, o, "do_layer_norm_before", 0, 1, &before, err)) return -1;
        cfg->final_norm = before;
        if (getu(doc, o, "word_embed_proj_dim", 0, 1, BIG, cfg->hidden, &proj, err)) return -1;
        if (proj != cfg->hidden) {
            const jr_val *v = jr_obj_get(o, "word_embed_proj_dim");
            return cm_fail(err,
                           "%s:%d:%d: key 'word_embed_proj_dim': expected it equal to "
                           "hidden_size (%llu; projected embeddings are not supported), got %llu",
                           doc->name, v->line, v->col, (unsigned long long)cfg->hidden,
                           (unsigned long long)proj);
        }
        cfg->kv_heads = cfg->heads;
        if (cfg->hidden % cfg->heads) {
            const jr_val *v = jr_obj_get(o, "num_attention_heads");
            return cm_fail(err,
                           "%s:%d:%d: key 'num_attention_heads': expected a divisor of "
                           "hidden_size %llu, got %llu",
                           doc->name, v->line, v->col, (unsigned long long)cfg->hidden,
                           (unsigned long long)cfg->heads);
        }
        cfg->head_dim = cfg->hidden / cfg->heads;
    } else {
        int ab, mb;
        if (getu(doc, o, "intermediate_size", 1, 1, BIG, 0, &cfg->ffn, err)) return -1;
        if (getu(doc, o, "num_key_value_heads", 0, 1, cfg->heads, cfg->heads, &cfg->kv_heads,
                 err))
            return -1;
        if (cfg->heads % cfg->kv_heads) {
            const jr_val *v = jr_obj_get(o, "num_key_value_heads");
            return cm_fail(err,
                           "%s:%d:%d: key 'num_key_value_heads': expected a divisor of "
                           "num_attention_heads %llu, got %llu",
                           doc->name, v->line, v->col, (unsigned long long)cfg->heads,
                           (unsigned long long)cfg->kv_heads);
        }
        uint64_t hd_default = cfg->hidden % cfg->heads ? 0 : cfg->hidden / cfg->heads;
        if (getu(doc, o, "head_dim", hd_default == 0, 1, 1 << 20, hd_default, &cfg->head_dim,
                 err))
            return -1;
        if (jr_get_bool(doc, o, "tie_word_embeddings", 0, 0, &cfg->tie_embeddings, err))
            return -1;
        if (jr_get_bool(doc, o, "attention_bias", 0, 0, &ab, err)) return -1;
        if (jr_get_bool(doc, o, "mlp_bias", 0, 0, &mb, err)) return -1;
        if (ab || mb) {
            const jr_val *v = jr_obj_get(o, ab ? "attention_bias" : "mlp_bias");
            return cm_fail(err, "%s:%d:%d: key '%s': expected false (biases in Llama layers "
                                "are not supported), got true",
                           doc->name, v->line, v->col, ab ? "attention_bias" : "mlp_bias");
        }
        cfg->bias = 0;
        cfg->final_norm = 1;
    }
    return 0;
}

int dak_config_load(const char *path, dak_model_config *cfg, cm_err *err)
{
    jr_doc doc;
    if (jr_parse_file(&doc, path, err)) return -1;
    int rc = dak_config_from_json(&doc, cfg, err);
    jr_free(&doc);
    return rc;
}

void dak_config_params(const dak_model_config *c, dak_param_count *pc)
{
    memset(pc, 0, sizeof *pc);
    uint64_t h = c->hidden, q = c->heads * c->head_dim, kv = c->kv_heads * c->head_dim;
    if (c->arch == DAK_ARCH_OPT) {
        /* q, k, v, out (h x h each) and fc1 (ffn x h), fc2 (h x ffn) */
        pc->layer_matrices = 4 * h * h + 2 * h * c->ffn;
        pc->per_layer = pc->layer_matrices + 4 * h; /* two layer norms: weight + bias */
        if (c->bias) pc->per_layer += 4 * h + c->ffn + h;
        pc->embed = c->vocab * h;
        pc->other = (c->max_pos + 2) * h + (c->final_norm ? 2 * h : 0); /* OPT position offset 2 */
        pc->lm_head = c->tie_embeddings ? 0 : c->vocab * h;
    } else {
        /* q (q x h), k, v (kv x h), o (h x q), gate, up (ffn x h), down (h x ffn) */
        pc->layer_matrices = q * h + 2 * kv * h + h * q + 3 * h * c->ffn;
        pc->per_layer = pc->layer_matrices + 2 * h; /* two RMS norms */
        pc->embed = c->vocab * h;
        pc->other = h; /* final norm */
        pc->lm_head = c->tie_embeddings ? 0 : c->vocab * h;
    }
    pc->total = c->layers * pc->per_layer + pc->embed + pc->other + pc->lm_head;
}

double dak_kv_bytes(const dak_model_config *c, uint64_t batch, uint64_t seq)
{
    return 2.0 * (double)c->layers * (double)batch * (double)seq * (double)c->kv_heads *
           (double)c->head_dim * (double)c->elem_bytes;
}
