/* Decoder-only transformer shapes read from a Hugging Face config.json
 * (OPT and Llama families), with the parameter and memory arithmetic the
 * offload planner needs (seed 003, Sec. 4.2 and the Fig. 10 / Fig. 14 tables). */
#ifndef DAK_MODEL_CONFIG_H
#define DAK_MODEL_CONFIG_H

#include <stdint.h>

#include "common/error.h"
#include "common/json_read.h"

typedef enum { DAK_ARCH_OPT = 1, DAK_ARCH_LLAMA = 2 } dak_arch;

typedef struct {
    dak_arch arch;
    char model_type[32];  /* "opt" or "llama" as written in the file */
    char dtype[16];       /* torch_dtype ("float16" when absent) */
    uint32_t elem_bytes;  /* 2 for float16/bfloat16, 4 for float32 */
    uint64_t hidden;      /* hidden_size */
    uint64_t ffn;         /* ffn_dim (OPT) / intermediate_size (Llama) */
    uint64_t layers;      /* num_hidden_layers */
    uint64_t heads;       /* num_attention_heads */
    uint64_t kv_heads;    /* num_key_value_heads (Llama; = heads when absent, and for OPT) */
    uint64_t head_dim;    /* hidden / heads, or head_dim when given */
    uint64_t vocab;       /* vocab_size */
    uint64_t max_pos;     /* max_position_embeddings */
    int tie_embeddings;   /* tie_word_embeddings (OPT default true, Llama default false) */
    int bias;             /* OPT enable_bias (default true); Llama attention_bias/mlp_bias */
    int final_norm;       /* OPT do_layer_norm_before (default true) -> final layer norm */
} dak_model_config;

/* Reads and validates a config.json.  Missing keys, wrong types, values out
 * of range and unsupported variants fail with "FILE:LINE:COL: ..." text. */
int dak_config_load(const char *path, dak_model_config *cfg, cm_err *err);
int dak_config_from_json(const jr_doc *doc, dak_model_config *cfg, cm_err *err);

/* Weight element counts. */
typedef struct {
    uint64_t total;          /* every parameter (tied matrices counted once) */
    uint64_t per_layer;      /* one decoder layer, biases and norms included */
    uint64_t layer_matrices; /* one decoder layer, the GEMM weight matrices only */
    uint64_t embed;          /* token embedding matrix */
    uint64_t lm_head;        /* separate output matrix (0 when tied) */
    uint64_t other;          /* position embeddings, final norm */
} dak_param_count;
void dak_config_params(const dak_model_config *cfg, dak_param_count *pc);

/* KV cache bytes for batch B and cache length L tokens per sequence:
 * 2 (K and V) x layers x B x L x kv_heads x head_dim x elem_bytes. */
double dak_kv_bytes(const dak_model_config *cfg, uint64_t batch, uint64_t seq);

#endif
