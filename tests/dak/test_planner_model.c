#define _POSIX_C_SOURCE 200809L
/* Model arithmetic of the planner against hand-computed values (the
 * arithmetic is written out in the comments), the seed's Fig. 10 / Fig. 14
 * footprint tables, the decode-step operations, and config.json errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "dak/model_config.h"
#include "dak/planner.h"

#ifndef DAK_CONFIG_DIR
#error "DAK_CONFIG_DIR must point at configs/"
#endif

static int load(const char *name, dak_model_config *c)
{
    cm_err e = {{0}};
    char path[512];
    snprintf(path, sizeof path, "%s/%s/config.json", DAK_CONFIG_DIR, name);
    int rc = dak_config_load(path, c, &e);
    CHECK(rc == 0, "%s: %s", path, e.msg);
    return rc;
}

static void test_opt30b(void)
{
    dak_model_config c;
    if (load("opt-30b", &c)) return;
    CHECK(c.arch == DAK_ARCH_OPT && c.hidden == 7168 && c.layers == 48 && c.heads == 56 &&
              c.head_dim == 128 && c.kv_heads == 56 && c.ffn == 28672 && c.elem_bytes == 2 &&
              c.tie_embeddings == 1,
          "OPT-30B fields");
    dak_param_count pc;
    dak_config_params(&c, &pc);
    /* per layer: q,k,v,out 4 x 7168^2 = 205,520,896; fc1+fc2 2 x 7168 x 28672 =
     * 411,041,792 -> matrices 616,562,688; biases 4 x 7168 + 28672 + 7168 = 64,512;
     * two layer norms 4 x 7168 = 28,672 -> 616,655,872 per layer. */
    CHECK_EQ_I64(pc.layer_matrices, 616562688, "OPT-30B layer matrices");
    CHECK_EQ_I64(pc.per_layer, 616655872, "OPT-30B per layer");
    /* 48 x 616,655,872 = 29,599,481,856; embeddings 50272 x 7168 = 360,349,696;
     * positions (2048 + 2) x 7168 = 14,694,400; final norm 14,336:
     * total 29,974,540,288 parameters = 59,949,080,576 bytes (the paper's
     * table prints 55.6 GB; 59.95 GB = 55.83 GiB). */
    CHECK_EQ_I64(pc.total, 29974540288ll, "OPT-30B parameters");
    /* KV cache: 2 x 48 layers x 7168 x 2 bytes = 1,376,256 bytes per token.
     * Fig. 10 rows (batch, prompt; 32 decoded tokens): */
    static const struct {
        uint64_t b, p;
        long long bytes;
        double paper_gb;
    } rows[] = {
        {8, 32, 704643072ll, 0.7},        /*   8 x  64 x 1,376,256 */
        {32, 1024, 46506442752ll, 46.51}, /*  32 x 1056 x 1,376,256 */
        {128, 256, 50734301184ll, 50.73}, /* 128 x  288 x 1,376,256 */
        {128, 512, 95831457792ll, 95.83}, /* 128 x  544 x 1,376,256 */
        {128, 1024, 186025771008ll, 186.03},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        double kv = dak_kv_bytes(&c, rows[i].b, rows[i].p + 32);
        CHECK(kv == (double)rows[i].bytes, "OPT-30B KV (%llu, %llu): %.0f != %lld",
              (unsigned long long)rows[i].b, (unsigned long long)rows[i].p, kv, rows[i].bytes);
        CHECK(fabs(kv / 1e9 - rows[i].paper_gb) < 0.006, "Fig. 10 row %zu: %.3f GB vs %.2f", i,
              kv / 1e9, rows[i].paper_gb);
    }

    /* decode-step operations and footprint at batch 8, length 64 */
    dak_profile prof;
    dak_profile_default(&prof);
    dak_op *ops;
    size_t n;
    cm_err e = {{0}};
    CHECK(dak_model_ops(&c, 8, 64, DAK_PLAN_UNIT_ROWS, &prof, &ops, &n, &e) == 0, "%s", e.msg);
    CHECK(n == 8, "OPT ops: q k v out attn fc1 fc2 lm_head, got %zu", n);
    if (n != 8) return;
    CHECK(!strcmp(ops[0].name, "q_proj") && ops[0].m == 7168 && ops[0].k == 7168 &&
              ops[0].n == 8 && ops[0].repeat == 48 && ops[0].units == 56,
          "q_proj: 7168 x 7168, 56 tiles of 128 rows, 48 layers");
    CHECK(dak_op_bytes(&ops[0]) == 102760448.0, "q_proj bytes 7168 x 7168 x 2 = 102,760,448");
    CHECK(ops[0].flops == 822083584.0, "q_proj FLOPs 2 x 7168^2 x 8 = 822,083,584");
    CHECK(!strcmp(ops[5].name, "fc1") && ops[5].m == 28672 && ops[5].units == 224,
          "fc1: 28672 rows = 224 tiles");
    CHECK(!strcmp(ops[6].name, "fc2") && ops[6].m == 7168 && ops[6].k == 28672, "fc2 7168 x 28672");
    const dak_op *at = &ops[4];
    /* attention: 8 batch entries, each K and V of 64 tokens x 7168 x 2 bytes
     * = 2 x 64 x 7168 x 2 = 1,835,008 bytes; per layer 14,680,064 */
    CHECK(at->kind == DAK_OP_ATTENTION && at->units == 8 && at->unit_rows == 1 &&
              at->row_bytes == 1835008.0 && dak_op_bytes(at) == 14680064.0,
          "attention units are batch entries");
    /* 4 x B x heads x L x head_dim = 4 x 8 x 56 x 64 x 128 = 14,680,064 FLOPs */
    CHECK(at->flops == 14680064.0, "attention FLOPs");
    CHECK(!strcmp(ops[7].name, "lm_head") && ops[7].m == 50272 && ops[7].repeat == 1 &&
              ops[7].units == 393,
          "lm_head 50272 rows = 393 tiles (last one partial)");
    dak_footprint fp;
    dak_model_footprint(&c, 8, 64, 0, ops, n, &fp);
    CHECK(fp.weights == 59949080576.0, "weights 29,974,540,288 x 2");
    CHECK(fp.kv == 704643072.0, "KV 8 x 64 x 1,376,256");
    /* workspace 2 x 8 x (4 x 7168 + 2 x 28672) + 4 x 8 x 50272
     *         = 16 x 86,016 + 1,608,704 = 1,376,256 + 1,608,704 = 2,984,960 */
    CHECK(fp.workspace == 2984960.0, "workspace %.0f", fp.workspace);
    /* plannable: (48 x 616,562,688 + 360,349,696) x 2 = 59,910,717,440 plus the
     * KV cache 704,643,072 = 60,615,360,512 */
    CHECK(fp.offloadable == 60615360512.0, "plannable %.0f", fp.offloadable);
    /* resident: biases+norms 48 x 93,184 = 4,472,832, positions and final norm
     * 14,708,736 -> 19,181,568 params x 2 = 38,363,136 bytes + workspace */
    CHECK(fp.resident == 38363136.0 + 2984960.0, "resident %.0f", fp.resident);
    CHECK(fp.total == 59949080576.0 + 704643072.0 + 2984960.0, "total");
    free(ops);

    /* host target from a GPU memory budget: 40 GB allowed -> host holds
     * 60,656,708,608 - 40,000,000,000 = 20,656,708,608 bytes */
    CHECK(fp.total - 40e9 == 20656708608.0, "host target for --gpu-mem 40GB");
}

static void test_opt67b_llama(void)
{
    dak_model_config c;
    if (load("opt-6.7b", &c) == 0) {
        dak_param_count pc;
        dak_config_params(&c, &pc);
        /* 32 x (4 x 4096^2 + 2 x 4096 x 16384 + 9 x 4096 + 16384) + 50272 x 4096
         * + 2050 x 4096 + 2 x 4096 = 32 x 201,379,840 + 205,914,112 + 8,396,800 + 8,192
         * = 6,658,473,984 -> 13.317 GB (Fig. 14: 13.3 GB) */
        CHECK_EQ_I64(pc.total, 6658473984ll, "OPT-6.7B parameters");
        CHECK(fabs(pc.total * 2 / 1e9 - 13.3) < 0.05, "Fig. 14 weights");
        /* 2 x 32 x 4096 x 2 = 524,288 bytes per token; Fig. 14 rows */
        CHECK(fabs(dak_kv_bytes(&c, 8, 64) / 1e9 - 0.27) < 0.005, "Fig. 14 (8, 32)");
        CHECK(fabs(dak_kv_bytes(&c, 256, 1056) / 1e9 - 141.73) < 0.005, "Fig. 14 (256, 1024)");
        CHECK(fabs(dak_kv_bytes(&c, 512, 544) / 1e9 - 146.03) < 0.005, "Fig. 14 (512, 512)");
        CHECK(fabs(dak_kv_bytes(&c, 512, 1056) / 1e9 - 283.47) < 0.005, "Fig. 14 (512, 1024)");
    }
    if (load("llama-2-7b", &c) == 0) {
        CHECK(c.arch == DAK_ARCH_LLAMA && c.kv_heads == 32 && c.head_dim == 128 &&
                  c.ffn == 11008 && c.tie_embeddings == 0 && c.bias == 0,
              "Llama-2-7B fields");
        dak_param_count pc;
        dak_config_params(&c, &pc);
        /* per layer 4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096 = 67,108,864 +
         * 135,266,304 + 8,192 = 202,383,360; x 32 = 6,476,267,520; embed and
         * lm_head 2 x 32000 x 4096 = 262,144,000; norm 4,096 -> 6,738,415,616 */
        CHECK_EQ_I64(pc.total, 6738415616ll, "Llama-2-7B parameters");
        /* the paper's batch 512, prompt 32 + 32 decoded: 512 x 64 x 524,288 =
         * 17,179,869,184 bytes (16 GiB) */
        CHECK(dak_kv_bytes(&c, 512, 64) == 17179869184.0, "Llama-2-7B KV at (512, 64)");
        dak_profile prof;
        dak_profile_default(&prof);
        dak_op *ops;
        size_t n;
        cm_err e = {{0}};
        CHECK(dak_model_ops(&c, 512, 64, DAK_PLAN_UNIT_ROWS, &prof, &ops, &n, &e) == 0, "%s", e.msg);
        CHECK(n == 10, "Llama ops: q k v o attn gate up down lm_head embed, got %zu", n);
        if (n == 10) {
            CHECK(!strcmp(ops[9].name, "embed") && ops[9].kind == DAK_OP_GATHER &&
                      fabs(ops[9].read_frac - 512.0 / 32000) < 1e-15,
                  "untied embedding is a gather reading B/vocab of its rows");
            CHECK(!strcmp(ops[7].name, "down_proj") && ops[7].m == 4096 && ops[7].k == 11008,
                  "down_proj 4096 x 11008");
            dak_footprint fp;
            dak_model_footprint(&c, 512, 64, 0, ops, n, &fp);
            /* plannable = all weights but norms (32 x 8,192 + 4,096 = 266,240
             * params) + KV: (6,738,415,616 - 266,240) x 2 + 17,179,869,184 */
            CHECK(fp.offloadable == (6738415616.0 - 266240.0) * 2 + 17179869184.0,
                  "Llama plannable %.0f", fp.offloadable);
            /* batch 512 on the default profile: GEMMs with n = 512 are above the
             * H200 machine balance (790e12 / 4.47e12 = 177 FLOP/byte; AI = n):
             * compute-bound; attention stays memory-bound */
            double xa, xb;
            CHECK(dak_op_classify(&ops[0], prof.b_h, prof.b_g, &xa, &xb) == DAK_CLASS_COMPUTE,
                  "q_proj at batch 512 is compute-bound");
            CHECK(dak_op_classify(&ops[4], prof.b_h, prof.b_g, &xa, &xb) == DAK_CLASS_MEMORY,
                  "attention is memory-bound");
            free(ops);
        }
    }
}

/* writes text to a temp file and loads it as a config; returns the message */
static int try_config(const char *text, char *msg, size_t cap)
{
    char path[] = "/tmp/test_planner_cfg_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return -2;
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    dak_model_config c;
    cm_err e = {{0}};
    int rc = dak_config_load(path, &c, &e);
    snprintf(msg, cap, "%s", e.msg);
    remove(path);
    return rc;
}

static void bad_config(const char *text, const char *want)
{
    char msg[512];
    int rc = try_config(text, msg, sizeof msg);
    CHECK(rc == -1, "bad config accepted: %s", text);
    CHECK(strstr(msg, want) != NULL, "message '%s' lacks '%s'", msg, want);
}

static void test_bad_configs(void)
{
    char msg[512];
    const char *good = "{\"model_type\": \"llama\", \"hidden_size\": 64, \"intermediate_size\": "
                       "128, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                       "\"vocab_size\": 100}";
    CHECK(try_config(good, msg, sizeof msg) == 0, "minimal llama config: %s", msg);
    bad_config("{\"hidden_size\": 64}", ":1:1: missing key 'model_type'");
    bad_config("{\"model_type\": \"gpt2\"}", ":1:16: key 'model_type': expected \"opt\" or \"llama\"");
    bad_config("{\"model_type\": \"opt\",\n \"hidden_size\": \"4096\"}",
               ":2:17: key 'hidden_size': expected an integer");
    bad_config("{\"model_type\": \"opt\", \"hidden_size\": 4096.5}", "expected an integer");
    bad_config("{\"model_type\": \"opt\", \"hidden_size\": 0}", "got 0");
    bad_config("{\"model_type\": \"opt\", \"hidden_size\": 4096, \"num_hidden_layers\": 2,\n"
               "\"num_attention_heads\": 32, \"vocab_size\": 10}",
               "missing key 'ffn_dim'");
    bad_config("{\"model_type\": \"opt\", \"hidden_size\": 100, \"num_hidden_layers\": 2, "
               "\"num_attention_heads\": 3, \"vocab_size\": 10, \"ffn_dim\": 8}",
               "key 'num_attention_heads': expected a divisor of hidden_size 100, got 3");
    bad_config("{\"model_type\": \"llama\", \"hidden_size\": 64, \"intermediate_size\": 128, "
               "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"num_key_value_heads\": 3, "
               "\"vocab_size\": 100}",
               "key 'num_key_value_heads': expected a divisor of num_attention_heads 4, got 3");
    bad_config("{\"model_type\": \"llama\", \"hidden_size\": 64, \"intermediate_size\": 128, "
               "\"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"vocab_size\": 100, "
               "\"torch_dtype\": \"int4\"}",
               "key 'torch_dtype': expected \"float16\", \"bfloat16\" or \"float32\"");
    bad_config("{\"model_type\": \"llama\", \"tie_word_embeddings\": 1, \"hidden_size\": 64, "
               "\"intermediate_size\": 128, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
               "\"vocab_size\": 100}",
               "key 'tie_word_embeddings': expected true or false, got number");
    bad_config("{\"model_type\": \"opt\",\n  \"hidden_size\": 4096,\n  \"ffn_dim\": 16384\n  "
               "\"num_hidden_layers\": 32}",
               ":4:3: in object: expected ',' or '}'");
    bad_config("[1, 2]", "config.json top level: expected object, got array");
    bad_config("", ":1:1: expected a JSON value, got end of input");
    dak_model_config c;
    cm_err e = {{0}};
    CHECK(dak_config_load("/nonexistent/config.json", &c, &e) == -1 &&
              strstr(e.msg, "/nonexistent/config.json: cannot open"),
          "missing file: %s", e.msg);
}

static void test_profile_file(void)
{
    char path[] = "/tmp/test_planner_prof_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0) return;
    FILE *f = fdopen(fd, "w");
    /* one shape, two n: at n = 64 the measured time 2 x 1024 x 64 x 1024 / 100e12 =
     * 1.342 us is below 1.5 x the streaming time 2 x 1024^2 / 1e12 = 2.097 us ->
     * replaced by the shape's best rate 400e12; at n = 1024: 2 x 1024^3 / 400e12 =
     * 5.37 us >= 3.15 us -> kept */
    fputs("{\"kind\": \"dak-profile\", \"b_h_gbs\": 50, \"b_g_gbs\": 1000, \"bf16_tflops\": 500,\n"
          " \"gemm\": [{\"m\": 1024, \"n\": 64, \"k\": 1024, \"tflops\": 100},\n"
          "          {\"m\": 1024, \"n\": 1024, \"k\": 1024, \"tflops\": 400}]}\n",
          f);
    fclose(f);
    dak_profile p;
    cm_err e = {{0}};
    CHECK(dak_profile_load(path, &p, &e) == 0, "profile: %s", e.msg);
    if (!e.msg[0]) {
        int prof;
        CHECK(p.b_h == 50e9 && p.b_g == 1000e9 && p.peak_flops == 500e12 && p.n_gemm == 2,
              "profile fields");
        CHECK(fabs(dak_profile_gemm_rate(&p, 1024, 64, 1024, &prof) - 400e12) < 1 && prof,
              "memory-bound entry replaced by the shape's best rate");
        CHECK(fabs(dak_profile_gemm_rate(&p, 1024, 4096, 1024, &prof) - 400e12) < 1,
              "flat above the largest n");
        CHECK(fabs(dak_profile_gemm_rate(&p, 1024, 8, 1024, &prof) - 400e12) < 1,
              "flat below the smallest n");
        CHECK(dak_profile_gemm_rate(&p, 2048, 64, 1024, &prof) == 500e12 && !prof,
              "unknown shape: peak");
        dak_profile_free(&p);
    }
    f = fopen(path, "w");
    fputs("{\"kind\": \"dak-profile\", \"b_h_gbs\": 50, \"b_g_gbs\": 1000, \"bf16_tflops\": 500,\n"
          " \"gemm\": [{\"m\": 1024, \"n\": 64, \"k\": 1024}]}\n",
          f);
    fclose(f);
    CHECK(dak_profile_load(path, &p, &e) == -1 && strstr(e.msg, ":2:11: missing key 'tflops'"),
          "gemm entry without tflops: %s", e.msg);
    f = fopen(path, "w");
    fputs("{\"kind\": \"other\"}", f);
    fclose(f);
    CHECK(dak_profile_load(path, &p, &e) == -1 && strstr(e.msg, "expected \"dak-profile\""),
          "wrong kind: %s", e.msg);
    remove(path);
}

int main(void)
{
    test_opt30b();
    test_opt67b_llama();
    test_bad_configs();
    test_profile_file();
    return check_done();
}
