/* dak engine on the GPU (label gpu): tiny OPT- and Llama-shaped models (2 layers, hidden 256, 2 heads of
 * 128 (Llama: 1 kv head), ffn 512, vocab 1000 -> 1024), batch 1 and 5, prompt 4, 6 decoded tokens, at
 * offload ratios 0, 0.3 and 1 (greedy planner) with direct access, 0.3 and 1 with the prefetch
 * baseline, 0.3, 0.6 and 1 with the unified-memory baseline; batch 5 again with the GEMMs as programmatic
 * dependent launches; a wide one-layer model (hidden 4096) at batch 3; r = 0.3 direct and 0.6 prefetch again
 * on engines holding only that placement (deployed()).  After each run, dak_engine_breakdown's counts, bytes
 * and sums (check_breakdown).  um_refusals: the unified-memory baseline's refusals (managed bytes past the
 * cap, a deployment without the KV cache in HBM) leave the engine usable.  ckpt_case: an engine reading a
 * checkpoint of its own synthetic parameters (dak_eng_ckpt_write_synthetic, BF16 and F32) gives the synthetic
 * engine's logits bit for bit (direct and unified memory at r = 0.3), and one fed a prompt of token ids
 * (dak_eng_opts.prompt_ids) matches the CPU reference fed the same ids; a deployment of the r = 0.3 placement read
 * from the checkpoint (its host rows packed on the CPU as they are read, only that placement's) gives the full
 * synthetic engine's logits (direct and prefetch), with the host rows pinned the other way (dak_eng_opts.load_pin).
 * fuse_case: q / k / v post-processed inside the attention (dak_eng_opts.fuse_qkv) gives the separate kernel's logits
 * and KV cache bit for bit (direct, prefetch, unified memory; OPT's bias, Llama's rotary, groups of 2 and 4); half the
 * run_case variants run fused.
 * Every step's logits against the CPU reference (engine_ref.c, fed the same tokens):
 *   max |gpu - ref| <= 2e-2 x max |ref|   (bf16 rounding of the GEMM inputs, fp32 sums in another order);
 * the greedy tokens equal the reference's argmax wherever its top-2 margin exceeds twice that bound. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "dak/engine.h"
#include "dak/gemm.h" /* DAK_GEMM_PDL_PRE_NONE */

#define P 4u
#define D 6u
#define S (P + D)
#define SEED 1234u

static void top2(const float *v, uint32_t n, uint32_t *i1, float *margin)
{
    uint32_t a = 0;
    for (uint32_t i = 1; i < n; i++)
        if (v[i] > v[a]) a = i;
    float second = -INFINITY;
    for (uint32_t i = 0; i < n; i++)
        if (i != a && v[i] > second) second = v[i];
    *i1 = a, *margin = v[a] - second;
}

/* dak_engine_breakdown after a finished run: every operation of the step counted once under its kind,
 * the bytes of each kind from the shapes, the parts summing to the stamped step, the history kept. */
static void check_breakdown(dak_engine *e, const dak_eng_model *m, uint32_t batch, dak_eng_mode mode,
                            const dak_eng_place *pl, const int32_t *hist, int fused)
{
    cm_err err;
    dak_eng_breakdown b;
    if (dak_engine_breakdown(e, 3, &b, &err)) {
        CHECK(0, "breakdown: %s", err.msg);
        return;
    }
    uint32_t L = (uint32_t)m->cfg.layers, opt = m->cfg.arch == DAK_ARCH_OPT;
    uint32_t want[DAK_ENG_NOPS] = {0};
    want[DAK_ENG_OP_EMBED] = want[DAK_ENG_OP_LM_HEAD] = want[DAK_ENG_OP_ARGMAX] = 1;
    want[DAK_ENG_OP_NORM] = 2 * L + 1;
    want[DAK_ENG_OP_QKV] = want[DAK_ENG_OP_QKV_POST] = want[DAK_ENG_OP_ATTN] = want[DAK_ENG_OP_O] = L;
    if (fused) want[DAK_ENG_OP_QKV_POST] = 0; /* dak_eng_opts.fuse_qkv: inside the attention */
    want[DAK_ENG_OP_FFN_IN] = want[DAK_ENG_OP_ACT] = want[DAK_ENG_OP_FFN_OUT] = L;
    want[DAK_ENG_OP_WAIT] = mode == DAK_ENG_PREFETCH ? L + 2 : 0; /* each layer's, lm_head's, the last copies' */
    double wb[DAK_ENG_NOPS] = {0}, sum = 0, um_moved = 0;
    if (mode == DAK_ENG_UM && dak_eng_um_bytes(m, pl, &um_moved) > 0) want[DAK_ENG_OP_EVICT] = 1; /* the push-back */
    wb[DAK_ENG_OP_EVICT] = want[DAK_ENG_OP_EVICT] ? um_moved : 0;
    uint32_t M[DAK_ENG_NLIN], K[DAK_ENG_NLIN];
    for (uint32_t j = 0; j < DAK_ENG_NLIN; j++) dak_eng_lin_shape(m, j, &M[j], &K[j]);
    wb[DAK_ENG_OP_QKV] = 2.0 * L * ((double)M[DAK_ENG_Q] * K[DAK_ENG_Q] + 2.0 * M[DAK_ENG_K] * K[DAK_ENG_K]);
    wb[DAK_ENG_OP_O] = 2.0 * L * M[DAK_ENG_O] * K[DAK_ENG_O];
    wb[DAK_ENG_OP_FFN_IN] = 2.0 * L * M[DAK_ENG_FC1] * K[DAK_ENG_FC1] * (opt ? 1 : 2);
    wb[DAK_ENG_OP_FFN_OUT] = 2.0 * L * M[DAK_ENG_FC2] * K[DAK_ENG_FC2];
    wb[DAK_ENG_OP_LM_HEAD] = 2.0 * m->vocab_pad * m->cfg.hidden;
    wb[DAK_ENG_OP_ATTN] = 2.0 * L * batch * m->cfg.kv_heads * S * 128 * 2; /* K and V of the last step, len S */
    for (int k = 0; k < DAK_ENG_NOPS; k++) {
        CHECK(b.count[k] == want[k], "breakdown %s: %u operations, expected %u", dak_eng_op_name((dak_eng_op)k),
              b.count[k], want[k]);
        CHECK(b.bytes[k] == wb[k], "breakdown %s: %.0f bytes, expected %.0f", dak_eng_op_name((dak_eng_op)k),
              b.bytes[k], wb[k]);
        CHECK(b.us[k] >= 0 && (b.count[k] || b.us[k] == 0), "breakdown %s: %g us", dak_eng_op_name((dak_eng_op)k),
              b.us[k]);
        sum += b.us[k];
    }
    CHECK(b.step == S - 1 && b.reps == 3, "breakdown: step %u reps %u", b.step, b.reps);
    CHECK(b.step_us > 0 && b.stamped_us > 0, "breakdown: step %g us, stamped %g us", b.step_us, b.stamped_us);
    /* medians per kind need not add up exactly; within 25 % of the stamped step (50 % under unified memory, whose
     * page faults and push-backs vary from rep to rep: parts 1452 us against a stamped 2025 once, twenty-third
     * session) */
    const double slack = mode == DAK_ENG_UM ? 0.5 : 0.25;
    CHECK(fabs(sum - b.stamped_us) <= slack * b.stamped_us + 2, "breakdown %s: parts %g us, stamped step %g us",
          dak_eng_mode_name(mode), sum, b.stamped_us);
    int32_t *after = malloc((size_t)S * batch * sizeof(int32_t));
    if (dak_engine_tokens(e, after, S, &err)) CHECK(0, "tokens after the breakdown: %s", err.msg);
    else CHECK(memcmp(after, hist, (size_t)S * batch * sizeof(int32_t)) == 0, "breakdown changed the token history");
    free(after);
    printf("breakdown %s batch %u %s: stamped %.1f us, graph %.1f us, attention %.1f us, qkv %.1f us, evict %.1f us\n",
           opt ? "opt" : "llama", batch, dak_eng_mode_name(mode), b.stamped_us, b.step_us, b.us[DAK_ENG_OP_ATTN],
           b.us[DAK_ENG_OP_QKV], b.us[DAK_ENG_OP_EVICT]);
}

/* wide: one layer of hidden 4096 (32 heads; Llama 8 kv heads, groups of 4), ffn 1024: the norm's row over 128
 * threads of 8 float4s each and the stacked q / k / v of unequal parts */
/* An engine holding only placement pl in each tier: its pinned bytes are exactly what dak_eng_need_bytes
 * says (the host rows and host KV entries), its HBM within the estimate, and it refuses another placement. */
static dak_engine *deployed(const dak_eng_model *m, uint32_t batch, int pdl, int fused, uint32_t whole_swap,
                            const dak_eng_place *pl)
{
    cm_err err = {{0}};
    dak_eng_opts o;
    memset(&o, 0, sizeof o);
    o.gemm_pdl = pdl >= 1, o.kernel_pdl = pdl >= 2, o.deploy = pl, o.fuse_qkv = fused, o.gemm_whole_swap = whole_swap;
    dak_engine *e;
    if (dak_engine_create(&e, m, batch, S, SEED, &o, &err)) {
        CHECK(0, "create a deployment: %s", err.msg);
        return NULL;
    }
    uint64_t hbm, host;
    double need_hbm, need_host, need_st;
    dak_engine_mem(e, &hbm, &host);
    dak_eng_need_bytes(m, batch, S, pl, &need_hbm, &need_host, &need_st);
    CHECK((double)host == need_host, "deployment: %llu pinned bytes, expected %.0f", (unsigned long long)host,
          need_host);
    CHECK((double)hbm <= need_hbm, "deployment: %llu HBM bytes, more than the estimate %.0f", (unsigned long long)hbm,
          need_hbm);
    dak_eng_place z;
    dak_eng_place_zero(m, &z);
    if (pl->host_bytes > 0) /* (a deployment at r = 0 is this placement) */
        CHECK(dak_engine_setup(e, &z, DAK_ENG_DIRECT, P, D, &err) != 0 && strstr(err.msg, "another placement"),
              "a deployment set up with all of it in HBM: expected a refusal, got '%s'", err.msg);
    dak_eng_place_free(&z);
    return e;
}

/* The greedy planner's placement of model m at a fraction r of its plannable bytes (batch, S positions, the
 * built-in profile); -1 with err on failure. */
static int place_at(const dak_eng_model *m, uint32_t batch, double r, dak_eng_place *pl, cm_err *err)
{
    dak_profile prof;
    dak_profile_default(&prof);
    dak_op *ops = NULL;
    size_t n = 0;
    int rc = dak_model_ops(&m->cfg, batch, S, DAK_PLAN_UNIT_ROWS, &prof, &ops, &n, err);
    uint64_t *u = calloc(n ? n : 1, sizeof *u);
    if (!rc) rc = dak_plan_greedy(ops, n, r * dak_ops_total_bytes(ops, n), prof.b_h, prof.b_g, u, err) ||
                  dak_eng_place_map(m, batch, S, ops, n, u, pl, err);
    free(u), free(ops);
    dak_profile_free(&prof);
    return rc ? -1 : 0;
}

/* run_case's variants: the norm kernel before the twenty-second session (dak_eng_opts.norm_narrow), nothing read
 * before the GEMMs' wait (gemm_pdl_pre none), the stamps (diag_times: checked after the r = 0 run), dak decode's
 * options (dak_eng_opts_default: o_proj reading nothing before its wait, 4-slot rings, a window of 2 HBM copies)
 * instead of all zero, the GEMMs' dynamic units (gemm_dyn) or a window of 3 HBM copies (gemm_hbm_window), q / k / v
 * post-processed inside the attention (fuse_qkv), whole-K tiles (k_whole) in every GEMM they apply to (gemm_whole:
 * the tiny models' shapes are outside the auto rule's band; gemm_whole_cluster 0 unless V_DEFAULTS: the GEMM's auto
 * clusters), k_whole_sw wherever it applies (gemm_whole_swap 2) with a deployment at r = 0 whose matrices are then all
 * packed in its row groups (dak_engine_grouped), or wherever k_whole does not (3: some of them) */
enum {
    V_NARROW = 1,
    V_PRE_NONE = 2,
    V_TIMES = 4,
    V_DEFAULTS = 8,
    V_DYN = 16,
    V_WINDOW = 32,
    V_FUSE = 64,
    V_WHOLE = 128,
    V_GROUPS = 256,
    V_SWAP3 = 512
};

/* The r = 0 run's stamps (dak_engine_stamps): the layer's ten operations in launch order, every norm, q/k/v
 * post-processing and attention CTA's stamps in order, every GEMM with CTAs and an exit after its entry; the
 * attention's waits return after the post-processing's last store (fused: no post-processing CTAs, and after the
 * q/k/v GEMM's last exit), the second norm's after o_proj's CTAs entered. */
static void check_stamps(dak_engine *e, const char *an, int fused)
{
    dak_eng_stamps ops[DAK_ENG_STAMPED_OPS];
    uint32_t n = 0;
    cm_err err = {{0}};
    int r = dak_engine_stamps(e, 0, ops, &n, &err);
    CHECK(r == 0 && n == DAK_ENG_STAMPED_OPS, "%s: stamps: %s (%u operations)", an, r ? err.msg : "", n);
    if (r) return;
    static const dak_eng_op want[DAK_ENG_STAMPED_OPS] = {
        DAK_ENG_OP_NORM,   DAK_ENG_OP_QKV, DAK_ENG_OP_QKV_POST, DAK_ENG_OP_ATTN,    DAK_ENG_OP_O,
        DAK_ENG_OP_NORM,   DAK_ENG_OP_FFN_IN, DAK_ENG_OP_ACT,   DAK_ENG_OP_FFN_OUT, DAK_ENG_OP_NORM};
    enum { QKV = 1, QKVP = 2, ATTN = 3, O = 4, NORM2 = 5 };
    uint32_t bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        CHECK(ops[i].kind == want[i] && (ops[i].ctas > 0) == !(fused && i == QKVP),
              "%s: stamped operation %u: kind %d, %u CTAs", an, i, (int)ops[i].kind, ops[i].ctas);
        for (uint32_t c = 0; c < ops[i].ctas; c++) {
            const uint64_t *t = ops[i].t + (size_t)c * ops[i].words;
            if (ops[i].kind == DAK_ENG_OP_NORM)
                bad += !(t[0] && t[0] <= t[1] && t[1] <= t[2] && t[2] <= t[3] && t[3] <= t[4]);
            else if (ops[i].kind == DAK_ENG_OP_ACT || ops[i].kind == DAK_ENG_OP_QKV_POST)
                bad += !(t[0] && t[0] <= t[1] && t[1] <= t[2]);
            else if (ops[i].kind == DAK_ENG_OP_ATTN) /* a CTA without units stops at its wait */
                bad += !(t[0] && t[0] <= t[1]);
            else
                bad += !(t[0] && t[0] <= t[5]); /* entry, exit (dak_gemm_times) */
        }
    }
    CHECK(bad == 0, "%s: %u CTAs' stamps out of order or missing", an, bad);
    /* the norm after o_proj waits for it: its wait returns after o_proj's last CTA entered */
    uint64_t o_entry = 0, stored = 0, wait = UINT64_MAX;
    for (uint32_t c = 0; c < ops[O].ctas; c++)
        if (ops[O].t[(size_t)c * ops[O].words] > o_entry) o_entry = ops[O].t[(size_t)c * ops[O].words];
    CHECK(ops[NORM2].t[1] >= o_entry, "%s: the norm's wait returned before o_proj's CTAs entered", an);
    for (uint32_t c = 0; c < ops[QKVP].ctas; c++)
        if (ops[QKVP].t[(size_t)c * ops[QKVP].words + 2] > stored) stored = ops[QKVP].t[(size_t)c * ops[QKVP].words + 2];
    for (uint32_t c = 0; fused && c < ops[QKV].ctas; c++) /* the GEMM's exits (dak_gemm_times word 5) */
        if (ops[QKV].t[(size_t)c * ops[QKV].words + 5] > stored) stored = ops[QKV].t[(size_t)c * ops[QKV].words + 5];
    for (uint32_t c = 0; c < ops[ATTN].ctas; c++)
        if (ops[ATTN].t[(size_t)c * ops[ATTN].words + 1] < wait) wait = ops[ATTN].t[(size_t)c * ops[ATTN].words + 1];
    CHECK(wait >= stored, "%s: an attention CTA's wait returned %.2f us before q/k/v's last %s", an,
          (double)(stored - wait) / 1e3, fused ? "GEMM CTA's exit" : "store");
    dak_eng_stamps_free(ops, n);
}

static void run_case(dak_arch arch, uint32_t batch, int pdl, uint32_t hidden, unsigned var)
{
    char an[96];
    snprintf(an, sizeof an, "%s%s%s%s%s%s%s%s%s%s%s%s", arch == DAK_ARCH_OPT ? "opt" : "llama",
             hidden == 4096 ? "-wide" : hidden ? "-6144" : "", var & V_NARROW ? "-narrow" : "",
             var & V_PRE_NONE ? "-prenone" : "", var & V_TIMES ? "-stamped" : "", var & V_DEFAULTS ? "-defaults" : "",
             var & V_DYN ? "-dyn" : "", var & V_WINDOW ? "-window3" : "", var & V_FUSE ? "-fused" : "",
             var & V_WHOLE ? "-whole" : "", var & V_GROUPS ? "-groups" : "", var & V_SWAP3 ? "-swap3" : "");
    dak_model_config c;
    dak_eng_tiny_config(arch, &c);
    if (hidden)
        c.layers = 1, c.hidden = hidden, c.heads = hidden / 128, c.kv_heads = arch == DAK_ARCH_OPT ? c.heads : 8,
        c.ffn = 1024;
    dak_eng_model m;
    cm_err err;
    if (dak_eng_model_make(&c, 0, &m, &err)) {
        CHECK(0, "model: %s", err.msg);
        return;
    }
    dak_engine *e;
    dak_eng_opts o;
    if (var & V_DEFAULTS) dak_eng_opts_default(&o);
    else memset(&o, 0, sizeof o);
    o.gemm_pdl = pdl >= 1, o.kernel_pdl = pdl >= 2;
    o.norm_narrow = (var & V_NARROW) != 0, o.diag_times = (var & V_TIMES) != 0;
    if (var & V_PRE_NONE) o.gemm_pdl_pre = DAK_GEMM_PDL_PRE_NONE;
    if (var & V_DYN) o.gemm_dyn = 1;
    if (var & V_WINDOW) o.gemm_hbm_window = 3;
    if (var & V_FUSE) o.fuse_qkv = 1;
    if (var & V_WHOLE) o.gemm_whole = DAK_ENG_WHOLE_ON;
    if (var & V_GROUPS) o.gemm_whole_swap = 2;
    if (var & V_SWAP3) o.gemm_whole_swap = 3;
    const int fused = o.fuse_qkv;
    if (dak_engine_create(&e, &m, batch, S, SEED, &o, &err)) {
        CHECK(0, "create: %s", err.msg);
        return;
    }
    dak_profile prof;
    dak_profile_default(&prof);
    dak_op *ops;
    size_t n;
    CHECK(dak_model_ops(&m.cfg, batch, S, DAK_PLAN_UNIT_ROWS, &prof, &ops, &n, &err) == 0, "ops: %s", err.msg);
    uint64_t *u = calloc(n, sizeof *u);
    double total = dak_ops_total_bytes(ops, n);
    const struct {
        double r;
        dak_eng_mode mode;
        int deploy; /* a second engine holding only this placement (dak_eng_opts.deploy) */
    } cases[] = {{0, DAK_ENG_DIRECT, 0},   {0.3, DAK_ENG_DIRECT, 0}, {1, DAK_ENG_DIRECT, 0}, {0.3, DAK_ENG_PREFETCH, 0},
                 {1, DAK_ENG_PREFETCH, 0}, {0.3, DAK_ENG_DIRECT, 1}, {0.6, DAK_ENG_PREFETCH, 1},
                 {0.3, DAK_ENG_UM, 0},     {0.6, DAK_ENG_UM, 0},     {1, DAK_ENG_UM, 0},
                 {0, DAK_ENG_DIRECT, 1}}; /* (the last: with V_GROUPS or V_SWAP3 only) */
    const size_t ncases = sizeof cases / sizeof cases[0] - ((var & (V_GROUPS | V_SWAP3)) ? 0 : 1);
    uint32_t V = (uint32_t)m.cfg.vocab;
    float *lg = malloc((size_t)batch * V * sizeof(float)), *lr = malloc((size_t)batch * V * sizeof(float));
    int32_t *hist = malloc((size_t)S * batch * sizeof(int32_t)), *tok = malloc(batch * sizeof(int32_t));
    for (size_t k = 0; k < ncases; k++) {
        dak_eng_place pl;
        if (dak_plan_greedy(ops, n, cases[k].r * total, prof.b_h, prof.b_g, u, &err) ||
            dak_eng_place_map(&m, batch, S, ops, n, u, &pl, &err)) {
            CHECK(0, "plan: %s", err.msg);
            continue;
        }
        uint32_t hosted = pl.lm_rows_host;
        for (uint32_t i = 0; i < pl.layers * DAK_ENG_NLIN; i++) hosted += pl.rows_host[i];
        for (uint32_t i = 0; i < pl.layers; i++) hosted += pl.batch_host[i];
        CHECK(cases[k].r == 0 || hosted > 0, "r %g: nothing placed in host memory", cases[k].r);
        dak_engine *full = e;
        if (cases[k].deploy && !(e = deployed(&m, batch, pdl, fused, o.gemm_whole_swap, &pl))) {
            e = full;
            dak_eng_place_free(&pl);
            continue;
        }
        /* row groups: only a deployment's all-HBM matrices (no host rows in this placement); with gemm_whole_swap 2
         * every one of them (the tiny models' R is never 64), with 0 or 3 (V_DEFAULTS: dak_eng_opts_default's 3)
         * some (V_SWAP3, hidden 4096 at r = 0: at least ffn_in's 2048 rows, 32 tiles, too few for k_whole), with 1
         * none */
        uint32_t all_hbm = 0;
        if (cases[k].deploy) {
            all_hbm = pl.lm_rows_host == 0;
            for (uint32_t l = 0; l < (uint32_t)m.cfg.layers; l++)
                for (uint32_t j = 0; j < DAK_ENG_NW; j++) all_hbm += dak_eng_stack_rows_host(&m, &pl, l, j) == 0;
        }
        const uint32_t grouped = dak_engine_grouped(e), ws = o.gemm_whole_swap, most = ws == 1 ? 0u : all_hbm;
        uint32_t least = 0;
        if (ws == 2) least = all_hbm;
        else if ((var & V_SWAP3) && cases[k].deploy && cases[k].r == 0) least = 1;
        CHECK(grouped >= least && grouped <= most, "%s r %g%s: %u matrices in row groups, expected %u..%u", an,
              cases[k].r, cases[k].deploy ? " deployed" : "", grouped, least, most);
        int ok = dak_engine_setup(e, &pl, cases[k].mode, P, D, &err) == 0;
        CHECK(ok, "setup %s r %g: %s", an, cases[k].r, err.msg);
        dak_eng_ref *ref;
        if (!ok || dak_eng_ref_create(&ref, &m, batch, S, SEED, NULL, &err)) {
            dak_eng_place_free(&pl);
            continue;
        }
        double worst = 0, maxref = 0;
        int tok_bad = 0, tok_checked = 0, fail = 0;
        for (uint32_t t = 0; t < S && !fail; t++) {
            if (dak_engine_step(e, t, 1, &err) || dak_engine_logits(e, lg, &err) ||
                dak_engine_tokens(e, hist, t + 1, &err)) {
                CHECK(0, "step %u: %s", t, err.msg);
                fail = 1;
                break;
            }
            for (uint32_t b = 0; b < batch; b++)
                tok[b] = t < P ? dak_eng_prompt_token(SEED, t, b, batch, V) : hist[(size_t)(t - 1) * batch + b];
            if (dak_eng_ref_step(ref, t, tok, lr, &err)) {
                CHECK(0, "ref step %u: %s", t, err.msg);
                fail = 1;
                break;
            }
            double mx = 0, ea = 0;
            for (size_t i = 0; i < (size_t)batch * V; i++) {
                if (fabs(lr[i]) > mx) mx = fabs(lr[i]);
                double d = fabs((double)lg[i] - lr[i]);
                if (!(d <= ea)) ea = d; /* NaN counts */
            }
            double tol = 2e-2 * mx;
            CHECK(ea <= tol, "%s batch %u r %g %s step %u: max |err| %g > %g (max |logit| %g)", an, batch, cases[k].r,
                  dak_eng_mode_name(cases[k].mode), t, ea, tol, mx);
            if (ea / (mx > 0 ? mx : 1) > worst) worst = ea / (mx > 0 ? mx : 1);
            if (mx > maxref) maxref = mx;
            for (uint32_t b = 0; b < batch; b++) {
                uint32_t i1;
                float mg;
                top2(lr + (size_t)b * V, V, &i1, &mg);
                if (mg > 2 * tol) {
                    tok_checked++;
                    if ((uint32_t)hist[(size_t)t * batch + b] != i1) tok_bad++;
                }
            }
        }
        CHECK(tok_bad == 0, "%s batch %u r %g: %d of %d greedy tokens differ", an, batch, cases[k].r, tok_bad,
              tok_checked);
        if (!fail && (var & V_TIMES) && cases[k].r == 0 && cases[k].mode == DAK_ENG_DIRECT && !cases[k].deploy)
            check_stamps(e, an, fused);
        if (!fail) check_breakdown(e, &m, batch, cases[k].mode, &pl, hist, fused);
        CHECK(maxref > 0.5, "%s: logits too small (%g) for the check to mean anything", an, maxref);
        printf("%-5s batch %u r %.1f %-8s%s%s host %.3f MB: max |err| / max |logit| = %.2e (max |logit| %.2f), "
               "tokens checked %d\n",
               an, batch, cases[k].r, dak_eng_mode_name(cases[k].mode), pdl == 2 ? " pdl2" : pdl ? " pdl" : "",
               cases[k].deploy ? " deployed" : "", pl.host_bytes / 1e6, worst, maxref, tok_checked);
        if (cases[k].deploy) dak_engine_destroy(e), e = full;
        dak_eng_ref_destroy(ref);
        dak_eng_place_free(&pl);
    }
    free(lg), free(lr), free(hist), free(tok), free(u), free(ops);
    dak_profile_free(&prof);
    dak_engine_destroy(e);
}

/* The tiny test model of `arch` (dak_eng_tiny_config); 0, or -1 after a failed check */
static int tiny_model(dak_arch arch, dak_eng_model *m)
{
    dak_model_config c;
    dak_eng_tiny_config(arch, &c);
    cm_err err = {{0}};
    if (dak_eng_model_make(&c, 0, m, &err)) {
        CHECK(0, "model: %s", err.msg);
        return -1;
    }
    return 0;
}

/* dak_engine_create's refusals of the GEMM options it passes on: gemm_whole past DAK_ENG_WHOLE_ON, gemm_whole_cluster
 * past 1 and gemm_whole_swap past 3 */
static void opts_refusals(void)
{
    dak_eng_model m;
    if (tiny_model(DAK_ARCH_LLAMA, &m)) return;
    cm_err err = {{0}};
    static const uint32_t bad_cl[2] = {2, 4};
    for (int i = 0; i < 4; i++) {
        dak_eng_opts o;
        dak_eng_opts_default(&o);
        if (i < 2) o.gemm_whole_cluster = bad_cl[i];
        else if (i == 2) o.gemm_whole = DAK_ENG_WHOLE_ON + 1;
        else o.gemm_whole_swap = 4;
        dak_engine *e = NULL;
        const int rc = dak_engine_create(&e, &m, 3, S, SEED, &o, &err);
        CHECK(rc != 0 && strstr(err.msg, i < 2 ? "gemm_whole_cluster" : i == 2 ? "gemm_whole" : "gemm_whole_swap"),
              "create with gemm_whole_cluster %u, gemm_whole %u, gemm_whole_swap %u: expected a refusal naming it, got "
              "rc %d '%s'", o.gemm_whole_cluster, o.gemm_whole, o.gemm_whole_swap, rc, rc ? err.msg : "");
        if (rc == 0) dak_engine_destroy(e);
    }
    printf("engine option refusals checked\n");
}

/* The unified-memory baseline's refusals: managed bytes past dak_eng_opts.um_cap (the same path as past a quarter
 * of the free HBM), and a deployment whose KV entries are not all in HBM; after each, the engine still sets up and
 * runs (direct, and um within the cap). */
static void um_refusals(void)
{
    dak_eng_model m;
    if (tiny_model(DAK_ARCH_OPT, &m)) return;
    cm_err err = {{0}};
    const uint32_t batch = 5;
    double tpot = 0;
    dak_eng_place p3, p1;
    if (place_at(&m, batch, 0.3, &p3, &err) || place_at(&m, batch, 1.0, &p1, &err)) {
        CHECK(0, "plan: %s", err.msg);
        return;
    }
    double moved, need = dak_eng_um_bytes(&m, &p3, &moved);
    dak_eng_opts o;
    memset(&o, 0, sizeof o);
    o.um_cap = (uint64_t)need - 1;
    dak_engine *e;
    if (dak_engine_create(&e, &m, batch, S, SEED, &o, &err) == 0) {
        CHECK(dak_engine_setup(e, &p3, DAK_ENG_UM, P, D, &err) != 0 && strstr(err.msg, "um_cap") &&
                  strstr(err.msg, "managed"),
              "um past the cap: expected a refusal naming the cap, got '%s'", err.msg);
        CHECK(dak_engine_setup(e, &p3, DAK_ENG_DIRECT, P, D, &err) == 0 && dak_engine_run(e, &tpot, &err) == 0,
              "direct after a um refusal: %s", err.msg);
        dak_engine_destroy(e);
    } else
        CHECK(0, "create: %s", err.msg);
    o.um_cap = (uint64_t)need;
    if (dak_engine_create(&e, &m, batch, S, SEED, &o, &err) == 0) {
        CHECK(dak_engine_setup(e, &p3, DAK_ENG_UM, P, D, &err) == 0 && dak_engine_run(e, &tpot, &err) == 0,
              "um at exactly the cap: %s", err.msg);
        dak_engine_destroy(e);
    } else
        CHECK(0, "create: %s", err.msg);
    uint32_t kv_host = 0;
    for (uint32_t l = 0; l < p1.layers; l++) kv_host += p1.batch_host[l];
    CHECK(kv_host > 0, "r = 1 put no KV entry in host memory");
    memset(&o, 0, sizeof o);
    o.deploy = &p1;
    if (dak_engine_create(&e, &m, batch, S, SEED, &o, &err) == 0) {
        CHECK(dak_engine_setup(e, &p1, DAK_ENG_UM, P, D, &err) != 0 && strstr(err.msg, "KV cache in HBM"),
              "um on a deployment with host KV entries: expected a refusal, got '%s'", err.msg);
        CHECK(dak_engine_setup(e, &p1, DAK_ENG_DIRECT, P, D, &err) == 0 && dak_engine_run(e, &tpot, &err) == 0,
              "direct after a um refusal on a deployment: %s", err.msg);
        dak_engine_destroy(e);
    } else
        CHECK(0, "create a deployment: %s", err.msg);
    printf("um refusals checked (managed %.0f bytes, %.0f moved a step at r = 0.3)\n", need, moved);
    dak_eng_place_free(&p3), dak_eng_place_free(&p1);
}

/* run of S steps of engine e with placement pl and mode: every step's logits into out[S][batch][V] */
static int run_logits(dak_engine *e, const dak_eng_place *pl, dak_eng_mode mode, uint32_t batch, uint32_t V,
                      float *out, cm_err *err)
{
    if (dak_engine_setup(e, pl, mode, P, D, err)) return -1;
    for (uint32_t t = 0; t < S; t++)
        if (dak_engine_step(e, t, 1, err) || dak_engine_logits(e, out + (size_t)t * batch * V, err)) return -1;
    return 0;
}

/* load_pin: the full checkpoint engine's (dak_eng_opts.load_pin); its deployment takes the other */
static void ckpt_case(dak_arch arch, dak_st_dtype dt, uint32_t load_pin)
{
    const char *an = arch == DAK_ARCH_OPT ? "opt" : "llama";
    const uint32_t batch = 3;
    const uint64_t W = 4321; /* the checkpoint's seed; the engine reading it is created with SEED */
    const int32_t ids[P] = {7, 0, 999, 42}; /* every sequence's prompt, in both engines: prompts do not follow a seed */
    dak_model_config c;
    dak_eng_tiny_config(arch, &c);
    dak_eng_model m;
    cm_err err = {{0}};
    char dir[] = "/tmp/dak-ckpt-gpu-XXXXXX", path[64];
    if (dak_eng_model_make(&c, 0, &m, &err) || !mkdtemp(dir)) {
        CHECK(0, "model / temp folder: %s", err.msg);
        return;
    }
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    dak_eng_ckpt *ck = NULL;
    dak_engine *es = NULL, *ec = NULL;
    dak_eng_opts o;
    memset(&o, 0, sizeof o);
    o.gemm_pdl = 1, o.kernel_pdl = 1, o.prompt_ids = ids, o.prompt_n = P;
    dak_eng_opts oc = o;
    int ok = dak_eng_ckpt_write_synthetic(&m, W, dt, path, 0, &err) == 0 && dak_eng_ckpt_open(&ck, dir, &m, &err) == 0 &&
             dak_engine_create(&es, &m, batch, S, W, &o, &err) == 0;
    oc.ckpt = ck, oc.load_pin = load_pin;
    ok = ok && dak_engine_create(&ec, &m, batch, S, SEED, &oc, &err) == 0;
    CHECK(ok, "%s checkpoint engines: %s", an, err.msg);
    uint32_t V = (uint32_t)m.cfg.vocab;
    dak_eng_place pl;
    memset(&pl, 0, sizeof pl);
    if (ok) {
        ok = place_at(&m, batch, 0.3, &pl, &err) == 0;
        CHECK(ok, "%s plan: %s", an, err.msg);
    }
    const size_t nl = (size_t)S * batch * V;
    float *ls = malloc(nl * 4), *lc = malloc(nl * 4);
    static const dak_eng_mode modes[2] = {DAK_ENG_UM, DAK_ENG_DIRECT}; /* direct last: its tokens for the reference */
    for (int k = 0; ok && k < 2; k++) {
        int r = run_logits(es, &pl, modes[k], batch, V, ls, &err) || run_logits(ec, &pl, modes[k], batch, V, lc, &err);
        CHECK(r == 0, "%s %s: %s", an, dak_eng_mode_name(modes[k]), err.msg);
        size_t diff = 0;
        for (size_t i = 0; !r && i < nl; i++) diff += memcmp(&ls[i], &lc[i], 4) != 0;
        CHECK(!r && diff == 0, "%s %s r 0.3, %s checkpoint: %zu of %zu logits differ from the synthetic engine's", an,
              dak_eng_mode_name(modes[k]), dt == DAK_ST_BF16 ? "BF16" : "F32", diff, nl);
        printf("%-5s checkpoint (%s) %-6s r 0.3: %zu logits, %zu differ from the synthetic engine's\n", an,
               dt == DAK_ST_BF16 ? "BF16" : "F32", dak_eng_mode_name(modes[k]), nl, diff);
    }
    /* a deployment of the r = 0.3 placement read from the checkpoint, pinned the other way, against the full
     * synthetic engine's logits (ls: direct, the loop's last run; then prefetch); lc keeps the checkpoint engine's
     * direct logits for the reference below */
    float *lx = malloc(nl * 4);
    static const dak_eng_mode dmodes[2] = {DAK_ENG_DIRECT, DAK_ENG_PREFETCH};
    for (int k = 0; ok && k < 2; k++) {
        dak_eng_opts od = oc;
        od.deploy = &pl, od.load_pin = load_pin == DAK_ENG_PIN_ALLOC ? DAK_ENG_PIN_REGISTER : DAK_ENG_PIN_ALLOC;
        dak_engine *ed = NULL;
        int r = (k == 1 && run_logits(es, &pl, dmodes[k], batch, V, ls, &err)) ||
                dak_engine_create(&ed, &m, batch, S, SEED, &od, &err) ||
                run_logits(ed, &pl, dmodes[k], batch, V, lx, &err);
        CHECK(r == 0, "%s deployed checkpoint %s: %s", an, dak_eng_mode_name(dmodes[k]), err.msg);
        size_t diff = 0;
        double mx = 0, ea = 0;
        for (size_t i = 0; !r && i < nl; i++) {
            diff += memcmp(&ls[i], &lx[i], 4) != 0;
            mx = fmax(mx, fabs(ls[i]));
            const double d = fabs((double)ls[i] - lx[i]);
            if (!(d <= ea)) ea = d;
        }
        /* the same placement through the same kernels: equal in practice; a row packed into the wrong place errs
         * by the size of the logits themselves */
        CHECK(!r && ea <= 1e-3 * mx, "%s deployed %s checkpoint (%s) r 0.3: max |diff| %g against max |logit| %g (%zu differ)",
              an, dt == DAK_ST_BF16 ? "BF16" : "F32", dak_eng_mode_name(dmodes[k]), ea, mx, diff);
        printf("%-5s deployed checkpoint (%s, pinned by %s) %-8s r 0.3: %zu logits, %zu differ from the synthetic "
               "engine's (max |diff| %.2e)\n",
               an, dt == DAK_ST_BF16 ? "BF16" : "F32", od.load_pin == DAK_ENG_PIN_ALLOC ? "alloc" : "register",
               dak_eng_mode_name(dmodes[k]), nl, diff, ea);
        dak_engine_destroy(ed);
    }
    free(lx);
    /* the checkpoint engine's direct run against the reference reading the same checkpoint, fed the same ids */
    dak_eng_ref *ref = NULL;
    if (ok) {
        int r = dak_eng_ref_create(&ref, &m, batch, S, SEED, ck, &err);
        int32_t *hist = malloc((size_t)S * batch * 4), tok[3];
        r = r || dak_engine_tokens(ec, hist, S, &err);
        double worst = 0;
        for (uint32_t t = 0; !r && t < S; t++) {
            for (uint32_t b = 0; b < batch; b++) tok[b] = t < P ? ids[t] : hist[(size_t)(t - 1) * batch + b];
            if ((r = dak_eng_ref_step(ref, t, tok, ls, &err))) break;
            double mx = 0, ea = 0;
            for (size_t i = 0; i < (size_t)batch * V; i++) {
                mx = fmax(mx, fabs(ls[i]));
                double d = fabs((double)lc[(size_t)t * batch * V + i] - ls[i]);
                if (!(d <= ea)) ea = d;
            }
            CHECK(ea <= 2e-2 * mx, "%s prompt ids step %u: max |err| %g > 2e-2 x %g", an, t, ea, mx);
            worst = fmax(worst, ea / (mx > 0 ? mx : 1));
        }
        CHECK(r == 0, "%s prompt ids: %s", an, err.msg);
        printf("%-5s prompt ids 7 0 999 42, checkpoint weights: max |err| / max |logit| = %.2e against the reference\n",
               an, worst);
        free(hist);
    }
    /* refusals: a token outside the vocabulary, a prompt longer than the positions */
    const int32_t bad[2] = {1, (int32_t)V};
    dak_eng_opts ob = o;
    ob.prompt_ids = bad, ob.prompt_n = 2;
    dak_engine *ex = NULL;
    int r = dak_engine_create(&ex, &m, batch, S, SEED, &ob, &err);
    CHECK(r != 0 && strstr(err.msg, "prompt token 1000"), "a prompt token past the vocabulary: %s", r ? err.msg : "accepted");
    if (!r) dak_engine_destroy(ex);
    r = dak_engine_create(&ex, &m, batch, 3, SEED, &o, &err);
    CHECK(r != 0 && strstr(err.msg, "a prompt of 4 tokens for 3 positions"), "a prompt past max_len: %s",
          r ? err.msg : "accepted");
    if (!r) dak_engine_destroy(ex);
    dak_eng_ref_destroy(ref);
    dak_engine_destroy(es), dak_engine_destroy(ec);
    dak_eng_ckpt_close(ck);
    if (pl.layers) dak_eng_place_free(&pl);
    free(ls), free(lc);
    unlink(path);
    rmdir(dir);
}

/* dak_eng_opts.fuse_qkv against the separate k_qkv_post: two engines, the same placement and mode, every step's
 * logits and, after the run, every layer's KV cache (dak_engine_kv: both tiers) the same bits.  Direct at r = 0.3
 * and 1 (host KV entries written through the mapped pointer), prefetch at 0.6 (the staged host entries: the new row
 * into the host tier), unified memory at 0.3 (every entry in HBM). */
static void fuse_case(dak_arch arch, uint32_t batch, uint32_t hidden)
{
    dak_model_config c;
    dak_eng_tiny_config(arch, &c);
    if (hidden)
        c.layers = 1, c.hidden = hidden, c.heads = hidden / 128, c.kv_heads = arch == DAK_ARCH_OPT ? c.heads : 8,
        c.ffn = 1024;
    const char *an = arch == DAK_ARCH_OPT ? "opt" : "llama";
    dak_eng_model m;
    cm_err err = {{0}};
    dak_engine *eu = NULL, *ef = NULL;
    dak_eng_opts o;
    memset(&o, 0, sizeof o);
    o.gemm_pdl = 1, o.kernel_pdl = 1;
    dak_eng_opts of = o;
    of.fuse_qkv = 1;
    int ok = dak_eng_model_make(&c, 0, &m, &err) == 0 && dak_engine_create(&eu, &m, batch, S, SEED, &o, &err) == 0 &&
             dak_engine_create(&ef, &m, batch, S, SEED, &of, &err) == 0;
    CHECK(ok, "%s fuse engines: %s", an, err.msg);
    const uint32_t V = (uint32_t)m.cfg.vocab, L = (uint32_t)m.cfg.layers;
    const size_t nl = (size_t)S * batch * V, kvn = (size_t)batch * m.cfg.kv_heads * S * 128;
    float *lu = malloc(nl * 4), *lf = malloc(nl * 4);
    uint16_t *ku = malloc(kvn * 2), *vu = malloc(kvn * 2), *kf = malloc(kvn * 2), *vf = malloc(kvn * 2);
    const struct {
        double r;
        dak_eng_mode mode;
    } cases[] = {{0.3, DAK_ENG_DIRECT}, {1, DAK_ENG_DIRECT}, {0.6, DAK_ENG_PREFETCH}, {0.3, DAK_ENG_UM}};
    for (size_t k = 0; ok && k < sizeof cases / sizeof cases[0]; k++) {
        dak_eng_place pl;
        if (place_at(&m, batch, cases[k].r, &pl, &err)) {
            CHECK(0, "%s plan: %s", an, err.msg);
            continue;
        }
        uint32_t kv_host = 0;
        for (uint32_t l = 0; l < L; l++) kv_host += pl.batch_host[l];
        int r = run_logits(eu, &pl, cases[k].mode, batch, V, lu, &err) ||
                run_logits(ef, &pl, cases[k].mode, batch, V, lf, &err);
        CHECK(r == 0, "%s fuse r %g %s: %s", an, cases[k].r, dak_eng_mode_name(cases[k].mode), err.msg);
        size_t dl = 0, dkv = 0;
        for (size_t i = 0; !r && i < nl; i++) dl += memcmp(&lu[i], &lf[i], 4) != 0;
        for (uint32_t l = 0; !r && l < L; l++) {
            if (dak_engine_kv(eu, l, ku, vu, &err) || dak_engine_kv(ef, l, kf, vf, &err)) {
                CHECK(0, "%s kv: %s", an, err.msg);
                r = 1;
                break;
            }
            for (size_t i = 0; i < kvn; i++) dkv += ku[i] != kf[i] || vu[i] != vf[i];
        }
        CHECK(!r && dl == 0 && dkv == 0, "%s batch %u r %g %s: fused against k_qkv_post: %zu of %zu logits, %zu of %zu "
              "cache elements differ", an, batch, cases[k].r, dak_eng_mode_name(cases[k].mode), dl, nl, dkv, kvn * L);
        printf("%-5s%s batch %u r %.1f %-8s fused q/k/v (host KV entries %u): %zu logits, %zu differ; %zu K/V elements, "
               "%zu differ\n", an, hidden ? "-wide" : "", batch, cases[k].r, dak_eng_mode_name(cases[k].mode), kv_host,
               nl, dl, 2 * kvn * L, dkv);
        dak_eng_place_free(&pl);
    }
    /* the fused engine has no qkv_post kernel to leave out */
    dak_engine *ex = NULL;
    of.diag_skip = 1u << DAK_ENG_OP_QKV_POST;
    int rc = ok ? dak_engine_create(&ex, &m, batch, S, SEED, &of, &err) : -1;
    CHECK(!ok || (rc != 0 && strstr(err.msg, "fuse_qkv")), "diag_skip qkv_post with fuse_qkv: %s",
          rc ? err.msg : "accepted");
    if (!rc) dak_engine_destroy(ex);
    free(lu), free(lf), free(ku), free(vu), free(kf), free(vf);
    dak_engine_destroy(eu), dak_engine_destroy(ef);
}

/* dak_eng_opts.diag_skip leaves kernels out: with the activation skipped the logits change, with nothing skipped
 * they are the normal engine's bit for bit */
static void skip_case(void)
{
    dak_model_config c;
    dak_eng_tiny_config(DAK_ARCH_OPT, &c);
    dak_eng_model m;
    cm_err err = {{0}};
    const uint32_t batch = 2, V = (uint32_t)c.vocab;
    dak_engine *en = NULL, *ea = NULL, *e0 = NULL;
    dak_eng_opts o;
    memset(&o, 0, sizeof o);
    dak_eng_opts os = o;
    os.diag_skip = 1u << DAK_ENG_OP_ACT;
    dak_eng_place pl;
    memset(&pl, 0, sizeof pl);
    int ok = dak_eng_model_make(&c, 0, &m, &err) == 0 && dak_engine_create(&en, &m, batch, S, SEED, &o, &err) == 0 &&
             dak_engine_create(&ea, &m, batch, S, SEED, &os, &err) == 0 &&
             dak_engine_create(&e0, &m, batch, S, SEED, &o, &err) == 0;
    CHECK(ok, "skip engines: %s", err.msg);
    const size_t nl = (size_t)S * batch * V;
    float *a = malloc(nl * 4), *b = malloc(nl * 4), *z = malloc(nl * 4);
    if (ok) {
        dak_eng_place_zero(&m, &pl);
        int r = run_logits(en, &pl, DAK_ENG_DIRECT, batch, V, a, &err) ||
                run_logits(ea, &pl, DAK_ENG_DIRECT, batch, V, b, &err) ||
                run_logits(e0, &pl, DAK_ENG_DIRECT, batch, V, z, &err);
        CHECK(r == 0, "skip runs: %s", err.msg);
        size_t diff = 0, same0 = 0;
        for (size_t i = 0; !r && i < nl; i++) diff += a[i] != b[i], same0 += !memcmp(&a[i], &z[i], 4);
        CHECK(!r && diff > nl / 2, "act skipped: only %zu of %zu logits changed", diff, nl);
        CHECK(!r && same0 == nl, "nothing skipped: %zu of %zu logits equal the first engine's", same0, nl);
        printf("diag_skip act: %zu of %zu logits changed; a second plain engine: %zu equal\n", diff, nl, same0);
        dak_eng_place_free(&pl);
    }
    free(a), free(b), free(z);
    dak_engine_destroy(en), dak_engine_destroy(ea), dak_engine_destroy(e0);
}

int main(void)
{
    um_refusals();
    skip_case();
    fuse_case(DAK_ARCH_OPT, 5, 0);
    fuse_case(DAK_ARCH_LLAMA, 5, 0);
    fuse_case(DAK_ARCH_LLAMA, 3, 4096); /* groups of 4 */
    ckpt_case(DAK_ARCH_OPT, DAK_ST_BF16, DAK_ENG_PIN_REGISTER);
    ckpt_case(DAK_ARCH_LLAMA, DAK_ST_F32, DAK_ENG_PIN_ALLOC);
    /* V_FUSE: q / k / v post-processed in the attention (dak_eng_opts.fuse_qkv), half the cases */
    run_case(DAK_ARCH_OPT, 1, 0, 0, 0);
    run_case(DAK_ARCH_OPT, 5, 0, 0, V_FUSE);
    run_case(DAK_ARCH_LLAMA, 1, 0, 0, V_FUSE);
    run_case(DAK_ARCH_LLAMA, 5, 0, 0, 0);
    /* pdl 1: the GEMMs as programmatic dependent launches (dak_eng_opts.gemm_pdl); 2: the small kernels too */
    run_case(DAK_ARCH_OPT, 5, 1, 0, 0);
    run_case(DAK_ARCH_LLAMA, 5, 2, 0, V_FUSE);
    run_case(DAK_ARCH_OPT, 3, 2, 4096, V_FUSE);
    run_case(DAK_ARCH_LLAMA, 3, 1, 4096, 0);
    /* the norm kernels: rows of 6144 (two float4s a thread, weights held), the narrow one; the GEMMs reading nothing
     * before their wait; the stamps (unfused, fused, and dak decode's defaults) */
    run_case(DAK_ARCH_LLAMA, 3, 2, 6144, V_PRE_NONE);
    run_case(DAK_ARCH_OPT, 3, 2, 4096, V_NARROW | V_TIMES);
    run_case(DAK_ARCH_OPT, 5, 1, 0, V_PRE_NONE | V_TIMES | V_FUSE);
    run_case(DAK_ARCH_LLAMA, 5, 2, 4096, V_DEFAULTS | V_TIMES);
    run_case(DAK_ARCH_OPT, 3, 2, 0, V_DEFAULTS);
    run_case(DAK_ARCH_OPT, 5, 2, 4096, V_DYN | V_FUSE);
    run_case(DAK_ARCH_LLAMA, 3, 2, 0, V_WINDOW);
    /* k_whole: 64-row tiles (hidden 256), 128-row ones (hidden 4096's q/k/v: 192 64-row tiles), stamped, fused */
    run_case(DAK_ARCH_LLAMA, 3, 1, 0, V_WHOLE);
    run_case(DAK_ARCH_OPT, 5, 2, 4096, V_WHOLE | V_TIMES | V_FUSE);
    run_case(DAK_ARCH_LLAMA, 8, 2, 4096, V_WHOLE | V_DEFAULTS);
    /* k_whole in the GEMM's auto clusters of 4 (batch 48; hidden 256: every GEMM's tiles a multiple of 4 at r = 0,
     * the baselines' HBM rows not always: clusters of 1 there), stamped */
    run_case(DAK_ARCH_OPT, 48, 2, 0, V_WHOLE | V_TIMES);
    /* k_whole_sw everywhere, and a deployment at r = 0 with every matrix in its row groups (batch 8 and 5; hidden
     * 4096: R 48 / 32 / 16, the last group shorter where R does not divide M; hidden 256: R 8) */
    run_case(DAK_ARCH_LLAMA, 8, 2, 4096, V_GROUPS | V_TIMES);
    run_case(DAK_ARCH_OPT, 5, 1, 0, V_GROUPS | V_FUSE);
    run_case(DAK_ARCH_LLAMA, 8, 2, 4096, V_SWAP3);
    opts_refusals();
    return check_done();
}
