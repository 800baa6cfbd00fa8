/* dak engine, CPU: the reference's pieces against hand-computed values (python's math module, see
 * the comments), the plan mapping (units -> rows / entries, within the shapes, host bytes equal to the
 * planner's), and the reference forward's consistency (a sequence's logits do not depend on the rest
 * of the batch). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "dak/engine.h"

static int near(double a, double b, double tol) { return fabs(a - b) <= tol; }

static void pieces(void)
{
    /* LayerNorm of [1 2 3 4], eps 1e-5: mean 2.5, var 1.25 -> (x - 2.5) / sqrt(1.25 + 1e-5) */
    float x[4] = {1, 2, 3, 4}, g[4] = {1, 2, 1, 1}, b[4] = {0, 0, 1, 0}, y[4];
    dak_eng_ref_layernorm(x, g, b, 4, 1e-5f, y);
    CHECK(near(y[0], -1.3416354, 1e-5), "ln[0] %g", y[0]);
    CHECK(near(y[1], 2 * -0.4472118, 1e-5), "ln[1] %g", y[1]);
    CHECK(near(y[2], 0.4472118 + 1, 1e-5), "ln[2] %g", y[2]);
    CHECK(near(y[3], 1.3416354, 1e-5), "ln[3] %g", y[3]);
    /* RMSNorm of [3 4], gains [2 1]: rms = sqrt(12.5 + 1e-5) */
    float r[2] = {3, 4}, rg[2] = {2, 1}, ry[2];
    dak_eng_ref_rmsnorm(r, rg, 2, 1e-5f, ry);
    CHECK(near(ry[0], 1.6970556, 1e-5), "rms[0] %g", ry[0]);
    CHECK(near(ry[1], 1.1313704, 1e-5), "rms[1] %g", ry[1]);
    /* rotary: position 0 is the identity; position 1: pair 0 turns by 1 rad, pair 1 by
     * 10000^(-2/128) = 0.86596432 rad (cos 0.64790587, sin 0.76172041) */
    float v[128], o[128];
    for (int i = 0; i < 128; i++) v[i] = (float)(i % 7) - 3.0f;
    dak_eng_ref_rope(v, 0, 128, o);
    int same = 1;
    for (int i = 0; i < 128; i++) same &= o[i] == v[i];
    CHECK(same, "rope at position 0 changed the vector");
    memset(v, 0, sizeof v);
    v[0] = 1, v[65] = 2;
    dak_eng_ref_rope(v, 1, 128, o);
    CHECK(near(o[0], 0.5403023, 1e-6) && near(o[64], 0.8414710, 1e-6), "rope pair 0: %g %g", o[0], o[64]);
    CHECK(near(o[1], -1.5234408, 1e-6) && near(o[65], 1.2958117, 1e-6), "rope pair 1: %g %g", o[1], o[65]);
    CHECK(near(o[2], 0, 0) && near(o[66], 0, 0), "rope pair 2 of zeros: %g %g", o[2], o[66]);
    /* a head of 64 (OPT-125m's size; Llama-style rotary over it): pairs (i, i + 32); pair 1 turns by
     * 10000^(-2/64) = 0.74989421 rad (cos 0.73176098, sin 0.68156135): [1 2] -> [-0.63136172 2.14508330] */
    memset(v, 0, sizeof v);
    v[1] = 1, v[33] = 2;
    dak_eng_ref_rope(v, 1, 64, o);
    CHECK(near(o[1], -0.6313617, 1e-6) && near(o[33], 2.1450833, 1e-6), "rope 64, pair 1: %g %g", o[1], o[33]);
    CHECK(near(o[0], 0, 0) && near(o[32], 0, 0) && near(o[63], 0, 0), "rope 64: pairs of zeros moved");
    /* SwiGLU: silu(1) = 0.73105858, silu(-2) = -0.23840584; silu(1) * 3 = 2.19317574 */
    CHECK(near(dak_eng_ref_silu(1), 0.7310586, 1e-6), "silu(1) %g", dak_eng_ref_silu(1));
    CHECK(near(dak_eng_ref_silu(-2), -0.2384058, 1e-6), "silu(-2) %g", dak_eng_ref_silu(-2));
    CHECK(near(dak_eng_ref_silu(1) * 3.0f, 2.1931757, 1e-6), "swiglu %g", dak_eng_ref_silu(1) * 3.0f);
    /* argmax: ties go to the lowest index, NaN never wins */
    float a1[4] = {1, 3, 3, 2}, a2[3] = {NAN, -1, -1}, a3[2] = {-INFINITY, -INFINITY}, a4[3] = {-5, -2, NAN};
    CHECK_EQ_I64(dak_eng_ref_argmax(a1, 4), 1, "argmax tie");
    CHECK_EQ_I64(dak_eng_ref_argmax(a2, 3), 1, "argmax NaN first");
    CHECK_EQ_I64(dak_eng_ref_argmax(a3, 2), 0, "argmax all -inf");
    CHECK_EQ_I64(dak_eng_ref_argmax(a4, 3), 1, "argmax NaN last");
    /* bf16 rounding: 1 + 2^-8 is a tie -> even (1); 1 + 3 * 2^-8 -> 1 + 2^-6 */
    CHECK(dak_eng_round_bf16(1.00390625f) == 1.0f, "bf16 tie %g", dak_eng_round_bf16(1.00390625f));
    CHECK(dak_eng_round_bf16(1.01171875f) == 1.015625f, "bf16 up %g", dak_eng_round_bf16(1.01171875f));
    /* synthetic parameters: uniform in [-1, 1), mean near 0, deterministic */
    double s = 0;
    int inr = 1;
    for (int i = 0; i < 100000; i++) {
        float u = dak_eng_uniform(42, 7, (uint64_t)i);
        inr &= u >= -1.0f && u < 1.0f;
        s += u;
    }
    CHECK(inr, "uniform out of [-1, 1)");
    CHECK(fabs(s / 100000) < 0.01, "uniform mean %g", s / 100000);
    CHECK(dak_eng_uniform(42, 7, 5) != dak_eng_uniform(43, 7, 5), "seed ignored");
    CHECK(dak_eng_uniform(42, 7, 5) != dak_eng_uniform(42, 8, 5), "tensor ignored");
}

static void mapping_hand(void)
{
    /* OPT-6.7B shapes (4096 hidden, 16384 ffn, 50272 vocab), 32 layers, batch 8 */
    dak_model_config c;
    cm_err err;
    CHECK(dak_config_load(DAK_CONFIG_DIR "/opt-6.7b/config.json", &c, &err) == 0, "load: %s", err.msg);
    dak_eng_model m;
    CHECK(dak_eng_model_make(&c, 0, &m, &err) == 0, "model: %s", err.msg);
    CHECK_EQ_I64(m.vocab_pad, 50304, "vocab padded to 64");
    dak_profile prof;
    dak_profile_default(&prof);
    dak_op *ops;
    size_t n;
    CHECK(dak_model_ops(&m.cfg, 8, 64, DAK_PLAN_UNIT_ROWS, &prof, &ops, &n, &err) == 0, "ops: %s", err.msg);
    uint64_t *u = calloc(n, sizeof *u);
    int iq = -1, ia = -1, il = -1, if1 = -1;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(ops[i].name, "q_proj")) iq = (int)i;
        if (ops[i].kind == DAK_OP_ATTENTION) ia = (int)i;
        if (!strcmp(ops[i].name, "lm_head")) il = (int)i;
        if (!strcmp(ops[i].name, "fc1")) if1 = (int)i;
    }
    CHECK(iq >= 0 && ia >= 0 && il >= 0 && if1 >= 0, "ops missing");
    u[iq] = 33;  /* layer 0: 2 units (256 rows), layers 1..31: 1 (128 rows) */
    u[ia] = 40;  /* 40 entries over 32 layers: layers 0..7 two, the rest one */
    u[il] = 393; /* every unit of 50272 rows: 392 whole + one of 96 rows -> 50304 padded rows */
    u[if1] = 32 * 128; /* all of fc1 (16384 rows = 128 units a layer) */
    dak_eng_place pl;
    CHECK(dak_eng_place_map(&m, 8, 64, ops, n, u, &pl, &err) == 0, "map: %s", err.msg);
    CHECK_EQ_I64(pl.rows_host[0 * DAK_ENG_NLIN + DAK_ENG_Q], 256, "q layer 0");
    CHECK_EQ_I64(pl.rows_host[1 * DAK_ENG_NLIN + DAK_ENG_Q], 128, "q layer 1");
    CHECK_EQ_I64(pl.rows_host[31 * DAK_ENG_NLIN + DAK_ENG_Q], 128, "q layer 31");
    CHECK_EQ_I64(pl.rows_host[5 * DAK_ENG_NLIN + DAK_ENG_FC1], 16384, "fc1 all");
    CHECK_EQ_I64(pl.rows_host[5 * DAK_ENG_NLIN + DAK_ENG_K], 0, "k none");
    CHECK_EQ_I64(pl.batch_host[7], 2, "attn layer 7");
    CHECK_EQ_I64(pl.batch_host[8], 1, "attn layer 8");
    CHECK_EQ_I64(pl.lm_rows_host, 50304, "lm_head rows");
    /* hand count: q 33 x 128 rows, fc1 32 x 16384 rows, lm_head 50272 real rows, all x 4096 x 2 B;
     * KV: 40 entries x 2 (K, V) x 64 tokens x 4096 x 2 B */
    double wb = (33.0 * 128 + 32.0 * 16384 + 50272.0) * 4096 * 2, kb = 40.0 * 2 * 64 * 4096 * 2;
    CHECK(pl.host_weight_bytes == wb, "weight bytes %.0f, expected %.0f", pl.host_weight_bytes, wb);
    CHECK(pl.host_kv_bytes == kb, "kv bytes %.0f, expected %.0f", pl.host_kv_bytes, kb);
    CHECK(fabs(pl.host_bytes - dak_plan_host_bytes(ops, n, u)) < 1, "planner bytes %.0f vs %.0f", pl.host_bytes,
          dak_plan_host_bytes(ops, n, u));
    /* the bytes a deployment of this placement allocates (dak_eng_need_bytes): in host memory the same rows, with
     * lm_head's 32 padding rows; the full engine holds every row in HBM, so it needs exactly that much more */
    double hbm_d, host_d, st_d, hbm_f, host_f, st_f;
    dak_eng_need_bytes(&m, 8, 64, &pl, &hbm_d, &host_d, &st_d);
    dak_eng_need_bytes(&m, 8, 64, NULL, &hbm_f, &host_f, &st_f);
    double host_hand = (33.0 * 128 + 32.0 * 16384 + 50304.0) * 4096 * 2 + kb;
    CHECK(host_d == host_hand, "deployment host bytes %.0f, expected %.0f", host_d, host_hand);
    CHECK(hbm_f - hbm_d == host_d, "full HBM %.0f - deployment HBM %.0f != deployment host %.0f", hbm_f, hbm_d, host_d);
    double all_hand = 32.0 * (4.0 * 4096 * 4096 + 2.0 * 16384 * 4096) * 2 + 32.0 * 8 * 2 * 64 * 4096 * 2 +
                      50304.0 * 4096 * 2; /* every weight, all KV, lm_head (OPT: tied, no separate embedding rows) */
    CHECK(host_f == all_hand, "full host bytes %.0f, expected %.0f", host_f, all_hand);
    /* staging: two sets of layer 0's host rows (256 of q, all of fc1) and host entries (2), one lm_head */
    double st_hand = 2 * ((256.0 + 16384) * 4096 * 2 + 2.0 * 2 * 64 * 4096 * 2) + 50304.0 * 4096 * 2;
    CHECK(st_d == st_hand, "deployment staging %.0f, expected %.0f", st_d, st_hand);
    CHECK(hbm_d > 0 && hbm_d < hbm_f && st_f > st_d, "full %.0f / %.0f, deployment %.0f / %.0f", hbm_f, st_f, hbm_d,
          st_d);
    /* the unified-memory baseline's managed rows (dak_eng_um_bytes): the same weight rows with lm_head's padding (the
     * KV entries stay in HBM); each matrix's slice from a 2 MiB boundary: layer 0's q/k/v stack 256 rows (2 MiB),
     * layers 1..31 128 rows (1 MiB, a 2 MiB slice), fc1 128 MiB a layer, lm_head 50304 rows (196.5 -> 197 x 2 MiB) */
    double moved, arena = dak_eng_um_bytes(&m, &pl, &moved);
    const double mib2 = 2.0 * 1024 * 1024;
    CHECK(moved == (33.0 * 128 + 32.0 * 16384 + 50304.0) * 4096 * 2, "um moved %.0f", moved);
    CHECK(arena == 32 * mib2 + 32 * 64 * mib2 + 197 * mib2, "um arena %.0f, expected %.0f", arena,
          32 * mib2 + 32 * 64 * mib2 + 197 * mib2);
    CHECK(!strcmp(dak_eng_mode_name(DAK_ENG_UM), "um") && !strcmp(dak_eng_mode_name(DAK_ENG_PREFETCH), "prefetch") &&
              !strcmp(dak_eng_op_name(DAK_ENG_OP_EVICT), "evict"),
          "mode / op names");
    dak_eng_place_free(&pl);
    dak_eng_place_zero(&m, &pl);
    CHECK(dak_eng_um_bytes(&m, &pl, &moved) == 0 && moved == 0, "um bytes of an all-HBM placement");
    dak_eng_place_free(&pl);
    u[iq] = 32 * 32 + 1; /* past q_proj's 32 units a layer */
    CHECK(dak_eng_place_map(&m, 8, 64, ops, n, u, &pl, &err) != 0 && strstr(err.msg, "q_proj"),
          "too many units accepted (%s)", err.msg);
    free(u);
    free(ops);
    dak_profile_free(&prof);
}

static void mapping_greedy(const char *cfgfile, uint32_t batch, uint32_t len)
{
    dak_model_config c;
    cm_err err;
    CHECK(dak_config_load(cfgfile, &c, &err) == 0, "load: %s", err.msg);
    dak_eng_model m;
    CHECK(dak_eng_model_make(&c, 0, &m, &err) == 0, "model: %s", err.msg);
    dak_profile prof;
    dak_profile_default(&prof);
    dak_op *ops;
    size_t n;
    CHECK(dak_model_ops(&m.cfg, batch, len, DAK_PLAN_UNIT_ROWS, &prof, &ops, &n, &err) == 0, "ops: %s", err.msg);
    uint64_t *u = calloc(n, sizeof *u);
    double total = dak_ops_total_bytes(ops, n);
    for (int k = 0; k <= 10; k++) {
        double r = k / 10.0;
        CHECK(dak_plan_greedy(ops, n, r * total, prof.b_h, prof.b_g, u, &err) == 0, "greedy %g: %s", r, err.msg);
        dak_eng_place pl;
        CHECK(dak_eng_place_map(&m, batch, len, ops, n, u, &pl, &err) == 0, "map %g: %s", r, err.msg);
        int ok = 1;
        for (uint32_t l = 0; l < pl.layers; l++) {
            for (uint32_t j = 0; j < DAK_ENG_NLIN; j++) {
                uint32_t M, K, rh = pl.rows_host[l * DAK_ENG_NLIN + j];
                dak_eng_lin_shape(&m, j, &M, &K);
                ok &= rh <= M && rh % 64 == 0;
            }
            ok &= pl.batch_host[l] <= batch;
        }
        ok &= pl.lm_rows_host <= m.vocab_pad && pl.lm_rows_host % 64 == 0 && pl.embed_rows_host <= m.cfg.vocab;
        CHECK(ok, "%s r %g: a placement outside its shape", cfgfile, r);
        double want = dak_plan_host_bytes(ops, n, u);
        CHECK(fabs(pl.host_bytes - want) <= 1e-9 * total, "%s r %g: host bytes %.0f, planner %.0f", cfgfile, r,
              pl.host_bytes, want);
        CHECK(pl.host_bytes >= r * total - 1, "%s r %g: host bytes %.0f below the target", cfgfile, r, pl.host_bytes);
        /* the unified-memory baseline moves the host weight rows but the embedding gather's, plus lm_head's padding */
        double moved, arena = dak_eng_um_bytes(&m, &pl, &moved), H2 = 2.0 * m.cfg.hidden;
        double pad = pl.lm_rows_host > m.cfg.vocab ? (double)(pl.lm_rows_host - m.cfg.vocab) : 0;
        double want_um = pl.host_weight_bytes - pl.embed_rows_host * H2 + pad * H2;
        CHECK(fabs(moved - want_um) <= 1, "%s r %g: um moves %.0f, expected %.0f", cfgfile, r, moved, want_um);
        CHECK(arena >= moved && arena - moved < (4.0 * pl.layers + 1) * DAK_ENG_UM_ALIGN,
              "%s r %g: um arena %.0f for %.0f", cfgfile, r, arena, moved);
        if (k == 1 || k == 4 || k == 10)
            printf("%s batch %u r %g: host %.3f GB (weights %.3f), um managed %.3f GB, moved a step %.3f GB\n", cfgfile,
                   batch, r, pl.host_bytes / 1e9, pl.host_weight_bytes / 1e9, arena / 1e9, moved / 1e9);
        dak_eng_place_free(&pl);
    }
    free(u);
    free(ops);
    dak_profile_free(&prof);
}

static void ref_batch_independent(dak_arch arch)
{
    dak_model_config c;
    dak_eng_tiny_config(arch, &c);
    dak_eng_model m;
    cm_err err;
    CHECK(dak_eng_model_make(&c, 0, &m, &err) == 0, "tiny: %s", err.msg);
    CHECK_EQ_I64(m.vocab_pad, 1024, "tiny vocab pad");
    dak_eng_ref *r1, *r3;
    CHECK(dak_eng_ref_create(&r1, &m, 1, 4, 7, NULL, &err) == 0, "ref: %s", err.msg);
    CHECK(dak_eng_ref_create(&r3, &m, 3, 4, 7, NULL, &err) == 0, "ref: %s", err.msg);
    float *l1 = malloc(1000 * sizeof(float)), *l3 = malloc(3000 * sizeof(float));
    int same = 1, finite = 1, spread = 0;
    for (uint32_t t = 0; t < 4; t++) {
        int32_t t1[1] = {(int32_t)(17 * t + 5)}, t3[3] = {(int32_t)(900 - t), t1[0], 3};
        CHECK(dak_eng_ref_step(r1, t, t1, l1, &err) == 0, "step: %s", err.msg);
        CHECK(dak_eng_ref_step(r3, t, t3, l3, &err) == 0, "step: %s", err.msg);
        for (int i = 0; i < 1000; i++) {
            same &= l1[i] == l3[1000 + i];
            finite &= isfinite(l3[i]) && isfinite(l3[2000 + i]);
            spread |= fabsf(l1[i]) > 0.5f;
        }
    }
    CHECK(same, "%s: sequence 1 of 3 differs from the same sequence alone", arch == DAK_ARCH_OPT ? "opt" : "llama");
    CHECK(finite && spread, "logits not finite or all tiny");
    int32_t bad[1] = {1000};
    CHECK(dak_eng_ref_step(r1, 4, bad, l1, &err) != 0, "step past max_len accepted");
    free(l1), free(l3);
    dak_eng_ref_destroy(r1), dak_eng_ref_destroy(r3);
}

/* The reference computes a batch eight sequences at a time (blocks of 8, 4, 2, 1 for the rest) with rows over
 * threads: every sequence of a batch of B gives, bit for bit, the logits of the same sequence alone, for batch
 * sizes that end in each kind of block, and (wide) for matrices large enough to be split over threads. */
static void ref_batch_blocks(dak_arch arch, int wide, uint32_t B)
{
    dak_model_config c;
    dak_eng_tiny_config(arch, &c);
    if (wide) c.layers = 1, c.hidden = 1024, c.heads = 8, c.kv_heads = arch == DAK_ARCH_OPT ? 8 : 2, c.ffn = 2816;
    dak_eng_model m;
    cm_err err;
    CHECK(dak_eng_model_make(&c, 0, &m, &err) == 0, "model: %s", err.msg);
    const uint32_t V = (uint32_t)c.vocab, S = 3;
    dak_eng_ref *rb;
    CHECK(dak_eng_ref_create(&rb, &m, B, S, 5, NULL, &err) == 0, "ref: %s", err.msg);
    float *lb = malloc((size_t)S * B * V * sizeof(float)), *l1 = malloc(V * sizeof(float));
    int32_t *tok = malloc(B * sizeof(int32_t));
    for (uint32_t t = 0; t < S; t++) {
        for (uint32_t n = 0; n < B; n++) tok[n] = (int32_t)((t * 131 + n * 37 + 11) % V);
        CHECK(dak_eng_ref_step(rb, t, tok, lb + (size_t)t * B * V, &err) == 0, "step: %s", err.msg);
    }
    uint32_t differ = 0;
    for (uint32_t n = 0; n < B; n++) {
        dak_eng_ref *r1;
        CHECK(dak_eng_ref_create(&r1, &m, 1, S, 5, NULL, &err) == 0, "ref: %s", err.msg);
        for (uint32_t t = 0; t < S; t++) {
            int32_t one = (int32_t)((t * 131 + n * 37 + 11) % V);
            CHECK(dak_eng_ref_step(r1, t, &one, l1, &err) == 0, "step: %s", err.msg);
            differ += memcmp(l1, lb + ((size_t)t * B + n) * V, V * sizeof(float)) != 0;
        }
        dak_eng_ref_destroy(r1);
    }
    CHECK(differ == 0, "%s%s batch %u: %u of %u (sequence, step) logit rows differ from the sequence alone",
          arch == DAK_ARCH_OPT ? "opt" : "llama", wide ? "-wide" : "", B, differ, B * S);
    free(lb), free(l1), free(tok);
    dak_eng_ref_destroy(rb);
}

int main(void)
{
    pieces();
    mapping_hand();
    mapping_greedy(DAK_CONFIG_DIR "/opt-6.7b/config.json", 8, 64);
    mapping_greedy(DAK_CONFIG_DIR "/opt-30b/config.json", 8, 64);
    mapping_greedy(DAK_CONFIG_DIR "/llama-2-7b/config.json", 512, 64);
    ref_batch_independent(DAK_ARCH_OPT);
    ref_batch_independent(DAK_ARCH_LLAMA);
    const uint32_t batches[] = {2, 3, 9, 10, 11, 13};
    for (size_t i = 0; i < sizeof batches / sizeof batches[0]; i++) {
        ref_batch_blocks(DAK_ARCH_OPT, 0, batches[i]);
        ref_batch_blocks(DAK_ARCH_LLAMA, 0, batches[i]);
    }
    ref_batch_blocks(DAK_ARCH_OPT, 1, 9);
    ref_batch_blocks(DAK_ARCH_LLAMA, 1, 6);
    return check_done();
}
