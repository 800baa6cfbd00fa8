/* dak split attention on the GPU against the CPU reference (double accumulation): random bf16
 * caches and queries, out poisoned with NaN first (every element must be written), offload
 * ratios 0 / 0.25 / 0.5 / 1, splits forced 1 and > 1 (2, 3, 5), host CTAs 1 / 2 / 8 / 16, windows 1 / 4,
 * one and two consumer groups, teams 1 / 2 / 4 / 8 (groups of 8 heads: teams > 1 refused), the split
 * partials merged in the kernel (last arriver) or by a second kernel, plain and PDL launches, rings of
 * 1, 3 and 6 slots, GQA groups 1, 3, 4, 8, lengths 1 .. 2048 with max_len > len in some cases.
 * The two combines must give the same bits, and repeated launches too (the merge order is fixed).
 * Workspace: a graph of several plans captured after dak_attn_ctx_reserve (no allocation in the capture,
 * replayed twice: the arrival counters return to 0), and a capture that would need a larger workspace
 * refused with a message.
 * Tolerance: relative Frobenius error <= 1e-2 and max |err| <= 1e-2 (outputs are at most ~1 in
 * magnitude; the bf16 output alone rounds by up to 2^-9 relative, ~2e-3 absolute). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "../check.h"
#include "common/cuda_check.h"
#include "dak/attention.h"

#define D DAK_ATTN_D

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* uniform in [-amp, amp), rounded to bf16 */
static void fill(uint16_t *p, size_t n, uint64_t seed, float amp)
{
    for (size_t i = 0; i < n; i++) {
        double u = (double)(mix(seed * 0x100000001b3ull + i) >> 11) / 9007199254740992.0;
        p[i] = dak_f32_to_bf16((float)((2.0 * u - 1.0) * amp));
    }
}

typedef struct {
    uint32_t batch, heads, kv, len, max_len;
} shape_t;

/* out (device, qn bf16) against ref: 1 when within tolerance and every element finite */
static int check_out(const char *what, const uint16_t *od, const float *ref, size_t qn, uint16_t *out, double *rel_out,
                     double *max_out)
{
    CM_CUDA_OR_EXIT(cudaMemcpy(out, od, qn * 2, cudaMemcpyDeviceToHost));
    double num = 0, den = 0, mx = 0;
    size_t nan = 0, first_bad = (size_t)-1;
    for (size_t i = 0; i < qn; i++) {
        double g = dak_bf16_to_f32(out[i]), r = ref[i];
        if (!isfinite(g)) {
            nan++;
            if (first_bad == (size_t)-1) first_bad = i;
            continue;
        }
        num += (g - r) * (g - r), den += r * r;
        if (fabs(g - r) > mx) mx = fabs(g - r);
        if (fabs(g - r) > 1e-2 && first_bad == (size_t)-1) first_bad = i;
    }
    double rel = sqrt(num / (den > 0 ? den : 1));
    int ok = nan == 0 && rel <= 1e-2 && mx <= 1e-2;
    CHECK(ok, "%s: rel %.3g, max %.3g, %zu not finite, first bad index %zu", what, rel, mx, nan, first_bad);
    if (rel_out) *rel_out = rel;
    if (max_out) *max_out = mx;
    return ok;
}

static void sync_or_exit(const char *what)
{
    cudaError_t ce = cudaDeviceSynchronize();
    if (ce != cudaSuccess) {
        CHECK(0, "%s: kernel: %s", what, cudaGetErrorString(ce));
        exit(1);
    }
}

static int run_shape(dak_attn_ctx *ctx, const shape_t *sh, uint64_t seed, int full_matrix)
{
    cm_err e;
    const size_t kvn = (size_t)sh->batch * sh->kv * sh->max_len * D, qn = (size_t)sh->batch * sh->heads * D;
    uint16_t *k = malloc(kvn * 2), *v = malloc(kvn * 2), *q = malloc(qn * 2), *out = malloc(qn * 2);
    float *ref = malloc(qn * 4);
    fill(k, kvn, seed, 1.0f);
    fill(v, kvn, seed + 1, 1.0f);
    fill(q, qn, seed + 2, 3.0f); /* peaked enough that the weights matter */
    const float scale = 1.0f / sqrtf((float)D);
    if (dak_attn_decode_ref(k, v, q, sh->batch, sh->heads, sh->kv, DAK_ATTN_D, sh->max_len, sh->len, scale, ref, &e)) {
        CHECK(0, "reference: %s", e.msg);
        return -1;
    }
    uint16_t *qd, *od;
    CM_CUDA_OR_EXIT(cudaMalloc((void **)&qd, qn * 2));
    CM_CUDA_OR_EXIT(cudaMalloc((void **)&od, qn * 2));
    CM_CUDA_OR_EXIT(cudaMemcpy(qd, q, qn * 2, cudaMemcpyHostToDevice));
    const double ratios[] = {0.0, 0.25, 0.5, 1.0};
    /* opts: {splits, host_ctas, window, consumer groups, stages, teams, combine, pdl} */
    const uint32_t cfg[][8] = {{0, 0, 0, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0, 0, 0}, {3, 0, 0, 1, 0, 0, 0, 0},
                               {0, 1, 1, 0, 0, 0, 0, 0}, {2, 0, 0, 0, 0, 4, 0, 0}, {5, 0, 0, 0, 3, 8, 0, 0},
                               {0, 8, 4, 0, 0, 0, 0, 0}, {2, 16, 1, 1, 0, 0, 0, 0}, {0, 16, 4, 0, 0, 0, 0, 0},
                               {0, 8, 1, 2, 3, 0, 0, 0}, {5, 2, 1, 1, 1, 0, 0, 0}, {0, 0, 0, 1, 0, 0, 0, 0},
                               {0, 0, 0, 0, 0, 8, 0, 1}, {3, 2, 1, 0, 0, 2, 0, 0}, {3, 0, 0, 0, 0, 1, 2, 0},
                               {2, 8, 4, 1, 0, 4, 0, 1}, {0, 0, 0, 0, 1, 2, 0, 0}, {5, 0, 0, 0, 0, 4, 2, 1}};
    const int ncfg = full_matrix ? 18 : 6;
    int worst_case = 0;
    for (int ri = 0; ri < 4; ri++) {
        uint32_t bh;
        CHECK(dak_kv_batch_for_ratio(sh->batch, ratios[ri], &bh, &e) == 0, "%s", e.msg);
        dak_kv_tiered kv;
        if (dak_kv_create(&kv, sh->batch, sh->kv, sh->max_len, bh, &e) || dak_kv_upload(&kv, k, v, 0, &e)) {
            CHECK(0, "cache: %s", e.msg);
            continue;
        }
        for (int ci = 0; ci < ncfg; ci++) {
            dak_attn_opts o;
            dak_attn_opts_default(&o);
            o.splits = cfg[ci][0];
            if (bh > 0 && bh < sh->batch) o.host_ctas = cfg[ci][1];
            else if (bh == sh->batch && cfg[ci][1]) o.host_ctas = cfg[ci][1];
            o.window = cfg[ci][2];
            o.groups = cfg[ci][3];
            o.stages = cfg[ci][4];
            o.teams = cfg[ci][5];
            o.combine = cfg[ci][6];
            o.pdl = (int)cfg[ci][7];
            dak_attn_plan p;
            char what[240];
            snprintf(what, sizeof what,
                     "batch %u heads %u/%u len %u max_len %u host %u splits %u hctas %u win %u groups %u stages %u "
                     "teams %u combine %u pdl %d",
                     sh->batch, sh->heads, sh->kv, sh->len, sh->max_len, bh, o.splits, o.host_ctas, o.window, o.groups,
                     o.stages, o.teams, o.combine, o.pdl);
            const int rc = dak_attn_plan_make(sh->batch, bh, sh->heads, sh->kv, sh->len, dak_attn_ctx_sms(ctx), &o, &p,
                                              &e);
            if (o.teams > 1 && sh->heads / sh->kv > 4) { /* one team for groups of 8 */
                CHECK(rc == -1 && strstr(e.msg, "teams"), "%s: accepted (%s)", what, rc ? e.msg : "");
                continue;
            }
            if (rc) {
                CHECK(0, "%s: plan: %s", what, e.msg);
                continue;
            }
            CM_CUDA_OR_EXIT(cudaMemset(od, 0xff, qn * 2)); /* bf16 0xffff: NaN */
            if (dak_attn_decode(ctx, &kv, qd, sh->heads, sh->len, scale, od, &p, NULL, &e)) {
                CHECK(0, "%s: decode: %s", what, e.msg);
                continue;
            }
            sync_or_exit(what);
            char what2[300];
            snprintf(what2, sizeof what2, "%s (CTAs %u+%u, splits %u/%u, teams %u/%u)", what, p.host_ctas, p.hbm_ctas,
                     p.host_splits, p.hbm_splits, p.host_teams, p.hbm_teams);
            double rel = 0, mx = 0;
            int ok = check_out(what2, od, ref, qn, out, &rel, &mx);
            if (!ok) worst_case = 1;
            if (ci == 0)
                printf("%-80s rel %.2e max %.2e (CTAs %u+%u, splits %u/%u, teams %u/%u, window %u)\n", what, rel, mx,
                       p.host_ctas, p.hbm_ctas, p.host_splits, p.hbm_splits, p.host_teams, p.hbm_teams, p.window);
        }
        dak_kv_destroy(&kv);
    }
    cudaFree(qd), cudaFree(od);
    free(k), free(v), free(q), free(out), free(ref);
    return worst_case ? -1 : 0;
}

static void test_rejects(dak_attn_ctx *ctx)
{
    cm_err e;
    dak_kv_tiered kv;
    CHECK(dak_kv_create(&kv, 2, 1, 64, 1, &e) == 0, "%s", e.msg);
    uint16_t *qd, *od;
    CM_CUDA_OR_EXIT(cudaMalloc((void **)&qd, 2 * D * 2));
    CM_CUDA_OR_EXIT(cudaMalloc((void **)&od, 2 * D * 2));
    dak_attn_plan p;
    CHECK(dak_attn_plan_make(2, 1, 1, 1, 64, dak_attn_ctx_sms(ctx), NULL, &p, &e) == 0, "%s", e.msg);
    CHECK(dak_attn_decode(ctx, &kv, qd, 1, 63, 1.0f, od, &p, NULL, &e) == -1 && strstr(e.msg, "len"),
          "len unlike the plan: %s", e.msg);
    CHECK(dak_attn_decode(ctx, &kv, qd, 1, 64, NAN, od, &p, NULL, &e) == -1 && strstr(e.msg, "scale"),
          "NaN scale: %s", e.msg);
    CHECK(dak_attn_plan_make(2, 1, 1, 1, 65, dak_attn_ctx_sms(ctx), NULL, &p, &e) == 0, "%s", e.msg);
    CHECK(dak_attn_decode(ctx, &kv, qd, 1, 65, 1.0f, od, &p, NULL, &e) == -1 && strstr(e.msg, "max_len"),
          "len > max_len: %s", e.msg);
    CHECK(dak_attn_plan_make(2, 0, 1, 1, 64, dak_attn_ctx_sms(ctx), NULL, &p, &e) == 0, "%s", e.msg);
    CHECK(dak_attn_decode(ctx, &kv, qd, 1, 64, 1.0f, od, &p, NULL, &e) == -1 && strstr(e.msg, "host"),
          "plan for another split: %s", e.msg);
    dak_kv_destroy(&kv);
    CHECK(dak_kv_create(&kv, 2, 1, 64, 3, &e) == -1 && strstr(e.msg, "batch_host"), "batch_host > batch");
    cudaFree(qd), cudaFree(od);
}

/* The in-kernel combine against the second kernel: the same bits (both merge the partials in split order
 * with the same rounded operations), and three inline launches give the same bits (whichever CTA is last). */
static void test_combine_identity(dak_attn_ctx *ctx)
{
    const shape_t sh = {8, 32, 8, 1000, 1037};
    cm_err e;
    const size_t kvn = (size_t)sh.batch * sh.kv * sh.max_len * D, qn = (size_t)sh.batch * sh.heads * D;
    uint16_t *k = malloc(kvn * 2), *v = malloc(kvn * 2), *q = malloc(qn * 2), *a = malloc(qn * 2), *b = malloc(qn * 2);
    float *ref = malloc(qn * 4);
    fill(k, kvn, 77, 1.0f), fill(v, kvn, 78, 1.0f), fill(q, qn, 79, 3.0f);
    const float scale = 1.0f / sqrtf((float)D);
    CHECK(dak_attn_decode_ref(k, v, q, sh.batch, sh.heads, sh.kv, DAK_ATTN_D, sh.max_len, sh.len, scale, ref, &e) == 0, "%s", e.msg);
    uint16_t *qd, *od;
    CM_CUDA_OR_EXIT(cudaMalloc((void **)&qd, qn * 2));
    CM_CUDA_OR_EXIT(cudaMalloc((void **)&od, qn * 2));
    CM_CUDA_OR_EXIT(cudaMemcpy(qd, q, qn * 2, cudaMemcpyHostToDevice));
    const uint32_t bhs[] = {0, 4};
    const uint32_t splits[] = {2, 3, 5, 16};
    const uint32_t teams[] = {1, 2, 4};
    int compared = 0;
    for (int bi = 0; bi < 2; bi++) {
        dak_kv_tiered kv;
        if (dak_kv_create(&kv, sh.batch, sh.kv, sh.max_len, bhs[bi], &e) || dak_kv_upload(&kv, k, v, 0, &e)) {
            CHECK(0, "cache: %s", e.msg);
            continue;
        }
        for (int si = 0; si < 4; si++)
            for (int ti = 0; ti < 3; ti++) {
                char what[160];
                snprintf(what, sizeof what, "combine identity: host %u splits %u teams %u", bhs[bi], splits[si],
                         teams[ti]);
                for (int run = 0; run < 4; run++) { /* 0: kernel combine; 1..3: inline */
                    dak_attn_opts o;
                    dak_attn_opts_default(&o);
                    o.splits = splits[si], o.teams = teams[ti];
                    o.combine = run == 0 ? DAK_ATTN_COMBINE_KERNEL : DAK_ATTN_COMBINE_INLINE;
                    dak_attn_plan p;
                    if (dak_attn_plan_make(sh.batch, bhs[bi], sh.heads, sh.kv, sh.len, dak_attn_ctx_sms(ctx), &o, &p,
                                           &e)) {
                        CHECK(0, "%s: plan: %s", what, e.msg);
                        break;
                    }
                    CHECK(p.hbm_splits == (bhs[bi] < sh.batch ? splits[si] : 1u) && p.hbm_teams == teams[ti],
                          "%s: plan splits %u teams %u", what, p.hbm_splits, p.hbm_teams);
                    CHECK((p.ws_counters > 0) == (run > 0), "%s run %d: ws_counters %zu", what, run, p.ws_counters);
                    CM_CUDA_OR_EXIT(cudaMemset(od, 0xff, qn * 2));
                    if (dak_attn_decode(ctx, &kv, qd, sh.heads, sh.len, scale, od, &p, NULL, &e)) {
                        CHECK(0, "%s: decode: %s", what, e.msg);
                        break;
                    }
                    sync_or_exit(what);
                    if (run == 0) {
                        check_out(what, od, ref, qn, a, NULL, NULL);
                    } else {
                        CM_CUDA_OR_EXIT(cudaMemcpy(b, od, qn * 2, cudaMemcpyDeviceToHost));
                        size_t diff = 0;
                        for (size_t i = 0; i < qn; i++) diff += a[i] != b[i];
                        CHECK(diff == 0, "%s: inline run %d differs from the combine kernel in %zu of %zu values", what,
                              run, diff, qn);
                        compared++;
                    }
                }
            }
        dak_kv_destroy(&kv);
    }
    CHECK(compared == 2 * 4 * 3 * 3, "combine identity: %d comparisons", compared);
    printf("combine identity: %d inline launches bit-identical to the combine kernel\n", compared);
    cudaFree(qd), cudaFree(od);
    free(k), free(v), free(q), free(a), free(b), free(ref);
}

/* Reserve, then capture a graph of several plans (lens 1..300, splits or not, teams, PDL, both combines)
 * with no allocation (global capture mode: a cudaMalloc would break it), replay it twice, every output
 * right; the workspace unchanged.  A fresh context asked to grow inside a capture refuses with a message. */
static void test_graph_reserve(void)
{
    cm_err e;
    const uint32_t B = 8, H = 32, KV = 8, ML = 300, BH = 2;
    const uint32_t lens[] = {1, 37, 64, 130, 300, 200, 65};
    const int NP = 7;
    const size_t kvn = (size_t)B * KV * ML * D, qn = (size_t)B * H * D;
    uint16_t *k = malloc(kvn * 2), *v = malloc(kvn * 2), *q = malloc(qn * 2), *out = malloc(qn * 2);
    float *ref = malloc(qn * 4 * NP);
    fill(k, kvn, 501, 1.0f), fill(v, kvn, 502, 1.0f), fill(q, qn, 503, 3.0f);
    const float scale = 1.0f / sqrtf((float)D);
    for (int i = 0; i < NP; i++)
        CHECK(dak_attn_decode_ref(k, v, q, B, H, KV, DAK_ATTN_D, ML, lens[i], scale, ref + qn * i, &e) == 0, "%s", e.msg);
    dak_attn_ctx *ctx;
    if (dak_attn_ctx_create(&ctx, &e)) {
        CHECK(0, "context: %s", e.msg);
        return;
    }
    size_t f0 = 1, c0 = 1;
    dak_attn_ctx_ws(ctx, &f0, &c0);
    CHECK(f0 == 0 && c0 == 0, "a new context holds %zu floats, %zu counters", f0, c0);
    dak_kv_tiered kv;
    CHECK(dak_kv_create(&kv, B, KV, ML, BH, &e) == 0 && dak_kv_upload(&kv, k, v, 0, &e) == 0, "cache: %s", e.msg);
    uint16_t *qd, *od[7];
    CM_CUDA_OR_EXIT(cudaMalloc((void **)&qd, qn * 2));
    CM_CUDA_OR_EXIT(cudaMemcpy(qd, q, qn * 2, cudaMemcpyHostToDevice));
    dak_attn_plan p[7];
    size_t wf = 0, wc = 0;
    for (int i = 0; i < NP; i++) {
        CM_CUDA_OR_EXIT(cudaMalloc((void **)&od[i], qn * 2));
        dak_attn_opts o;
        dak_attn_opts_default(&o);
        o.splits = i == 3 ? 3u : i == 4 ? 5u : 0u;
        o.teams = i == 1 ? 8u : i == 5 ? 2u : 0u;
        o.combine = i == 4 ? DAK_ATTN_COMBINE_KERNEL : 0u;
        o.pdl = i % 2;
        CHECK(dak_attn_plan_make(B, BH, H, KV, lens[i], dak_attn_ctx_sms(ctx), &o, &p[i], &e) == 0, "plan %d: %s", i,
              e.msg);
        dak_attn_plan_ws_max(&p[i], &wf, &wc);
    }
    CHECK(wf > 0 && wc > 0, "the graph's plans need %zu floats, %zu counters (expected splits among them)", wf, wc);
    CHECK(dak_attn_ctx_reserve(ctx, wf, wc, &e) == 0, "reserve: %s", e.msg);
    size_t f1 = 0, c1 = 0;
    dak_attn_ctx_ws(ctx, &f1, &c1);
    CHECK(f1 >= wf && c1 >= wc, "reserved %zu / %zu, asked %zu / %zu", f1, c1, wf, wc);
    CHECK(dak_attn_ctx_reserve(ctx, wf / 2, wc / 2, &e) == 0, "a smaller reserve: %s", e.msg);
    cudaStream_t st;
    CM_CUDA_OR_EXIT(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaGraph_t g = NULL;
    cudaGraphExec_t ge = NULL;
    CM_CUDA_OR_EXIT(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    int captured = 0;
    for (int i = 0; i < NP; i++) {
        if (dak_attn_decode(ctx, &kv, qd, H, lens[i], scale, od[i], &p[i], st, &e))
            CHECK(0, "capture, plan %d: %s", i, e.msg);
        else
            captured++;
    }
    cudaError_t ce = cudaStreamEndCapture(st, &g);
    CHECK(ce == cudaSuccess && captured == NP, "capture: %s, %d of %d decodes", cudaGetErrorString(ce), captured, NP);
    if (ce == cudaSuccess && captured == NP) {
        CM_CUDA_OR_EXIT(cudaGraphInstantiate(&ge, g, 0));
        for (int rep = 0; rep < 2; rep++) {
            for (int i = 0; i < NP; i++) CM_CUDA_OR_EXIT(cudaMemsetAsync(od[i], 0xff, qn * 2, st));
            CM_CUDA_OR_EXIT(cudaGraphLaunch(ge, st));
            CM_CUDA_OR_EXIT(cudaStreamSynchronize(st));
            for (int i = 0; i < NP; i++) {
                char what[160];
                snprintf(what, sizeof what, "graph replay %d, plan %d (len %u, splits %u/%u, teams %u/%u, pdl %d)", rep,
                         i, lens[i], p[i].host_splits, p[i].hbm_splits, p[i].host_teams, p[i].hbm_teams, p[i].pdl);
                check_out(what, od[i], ref + qn * i, qn, out, NULL, NULL);
            }
        }
        CM_CUDA_OR_EXIT(cudaGraphExecDestroy(ge));
    }
    if (g) CM_CUDA_OR_EXIT(cudaGraphDestroy(g));
    size_t f2 = 0, c2 = 0;
    dak_attn_ctx_ws(ctx, &f2, &c2);
    CHECK(f2 == f1 && c2 == c1, "the workspace changed during capture / replay: %zu / %zu -> %zu / %zu", f1, c1, f2, c2);
    printf("graph after reserve: %d plans (%zu floats, %zu counters), replayed twice\n", NP, wf, wc);
    dak_attn_ctx_destroy(ctx);

    /* a fresh context: growing inside a capture is refused */
    CHECK(dak_attn_ctx_create(&ctx, &e) == 0, "%s", e.msg);
    CM_CUDA_OR_EXIT(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    e.msg[0] = 0;
    int rc = dak_attn_decode(ctx, &kv, qd, H, lens[3], scale, od[3], &p[3], st, &e);
    g = NULL;
    ce = cudaStreamEndCapture(st, &g);
    CHECK(rc == -1 && strstr(e.msg, "reserve") && strstr(e.msg, "captured"), "grow inside a capture: rc %d '%s'", rc,
          e.msg);
    CHECK(ce == cudaSuccess, "the capture survives the refusal: %s", cudaGetErrorString(ce));
    if (g) cudaGraphDestroy(g);
    CHECK(dak_attn_ctx_reserve(NULL, 1, 1, &e) == -1 && strstr(e.msg, "context"), "reserve without a context");
    CHECK(dak_attn_ctx_reserve(ctx, (size_t)1 << 41, 0, &e) == -1 && strstr(e.msg, "2^40"), "reserve of 2^41 floats");
    dak_attn_ctx_destroy(ctx);
    CM_CUDA_OR_EXIT(cudaStreamDestroy(st));
    dak_kv_destroy(&kv);
    cudaFree(qd);
    for (int i = 0; i < NP; i++) cudaFree(od[i]);
    free(k), free(v), free(q), free(out), free(ref);
}

/* dak_attn_decode_qkv: one dim of q, k or v post-processed on the CPU (the head's 128 columns start at col of row r) */
static uint16_t post_cpu(const float *c, const float *bias, const float *cs, const float *sn, uint32_t pos, uint32_t col,
                         uint32_t d, int rot)
{
    float x = c[col + d], y = rot ? c[col + (d ^ 64u)] : 0.f;
    if (bias) {
        x = x + bias[col + d];
        if (rot) y = y + bias[col + (d ^ 64u)];
    }
    if (rot) {
        const float co = cs[pos * 64u + (d & 63u)], si = sn[pos * 64u + (d & 63u)];
        x = d < 64u ? dak_attn_rope_lo(x, y, co, si) : dak_attn_rope_hi(y, x, co, si);
    }
    return dak_f32_to_bf16(x);
}

/* The fused post-processing (dak_attn_decode_qkv) against q, k, v post-processed on the CPU with the same rounded
 * operations and fed to dak_attn_decode: out the same bits, the cache's new row (position len - 1, poisoned with NaN
 * before the call, so a row the kernel did not patch shows in out) equal to the CPU's k, v and every other position
 * untouched; with k_new / v_new the new rows there and the cache untouched.  Bias and rotary on and off, groups 1, 2,
 * 3, 4, 8, host ratios 0, 0.5, 1, splits, every team layout. */
static void test_fused_qkv(dak_attn_ctx *ctx)
{
    const shape_t shapes[] = {{3, 32, 8, 1000, 1037}, {8, 8, 1, 200, 200}, {8, 32, 32, 64, 64}, {3, 12, 4, 130, 140},
                              {1, 32, 32, 1, 1},      {64, 32, 8, 65, 65}, {8, 4, 2, 100, 128}, {5, 2, 2, 17, 40}};
    /* {splits, groups, teams} */
    const uint32_t cfg[][3] = {{0, 0, 0}, {3, 0, 0}, {2, 2, 1}, {0, 2, 2}, {5, 2, 4}, {0, 2, 8}, {2, 1, 1}, {0, 1, 4}};
    const double ratios[] = {0.0, 0.5, 1.0};
    const float scale = 1.0f / sqrtf((float)D);
    cm_err e;
    uint32_t cases = 0, bad_out = 0, bad_cache = 0;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const shape_t *sh = &shapes[si];
        const uint32_t B = sh->batch, H = sh->heads, KV = sh->kv, ML = sh->max_len, len = sh->len, pos = len - 1;
        const uint32_t ld = (H + 2 * KV) * D + 4 * (uint32_t)si; /* some rows longer than q, k, v */
        const size_t kvn = (size_t)B * KV * ML * D, qn = (size_t)B * H * D, cn = (size_t)B * ld;
        float *c = malloc(cn * 4), *bias = malloc((size_t)ld * 4), *cs = malloc((size_t)ML * 64 * 4),
              *sn = malloc((size_t)ML * 64 * 4);
        for (size_t i = 0; i < cn; i++) c[i] = (float)((double)(mix(7000 + si * 131 + i) >> 11) / 9007199254740992.0 * 4 - 2);
        for (uint32_t i = 0; i < ld; i++) bias[i] = (float)((double)(mix(9000 + i) >> 11) / 9007199254740992.0 - 0.5);
        for (size_t i = 0; i < (size_t)ML * 64; i++) {
            double a = (double)(mix(11000 + i) >> 11) / 9007199254740992.0 * 6.283185307179586;
            cs[i] = (float)cos(a), sn[i] = (float)sin(a);
        }
        uint16_t *k0 = malloc(kvn * 2), *v0 = malloc(kvn * 2), *kx = malloc(kvn * 2), *vx = malloc(kvn * 2);
        uint16_t *kg = malloc(kvn * 2), *vg = malloc(kvn * 2), *q = malloc(qn * 2), *ou = malloc(qn * 2), *of = malloc(qn * 2);
        fill(k0, kvn, 300 + si, 1.0f);
        fill(v0, kvn, 400 + si, 1.0f);
        for (uint32_t b = 0; b < B; b++)
            for (uint32_t h = 0; h < KV; h++)
                for (uint32_t d = 0; d < D; d++) { /* NaN at the new position: the kernel must patch it */
                    size_t o = (((size_t)b * KV + h) * ML + pos) * D + d;
                    k0[o] = v0[o] = 0x7fc0u;
                }
        float *dc, *db, *dcs, *dsn;
        uint16_t *qd, *od, *kn, *vn;
        CM_CUDA_OR_EXIT(cudaMalloc((void **)&dc, cn * 4));
        CM_CUDA_OR_EXIT(cudaMalloc((void **)&db, (size_t)ld * 4));
        CM_CUDA_OR_EXIT(cudaMalloc((void **)&dcs, (size_t)ML * 64 * 4));
        CM_CUDA_OR_EXIT(cudaMalloc((void **)&dsn, (size_t)ML * 64 * 4));
        CM_CUDA_OR_EXIT(cudaMalloc((void **)&qd, qn * 2));
        CM_CUDA_OR_EXIT(cudaMalloc((void **)&od, qn * 2));
        CM_CUDA_OR_EXIT(cudaMalloc((void **)&kn, kvn * 2));
        CM_CUDA_OR_EXIT(cudaMalloc((void **)&vn, kvn * 2));
        CM_CUDA_OR_EXIT(cudaMemcpy(dc, c, cn * 4, cudaMemcpyHostToDevice));
        CM_CUDA_OR_EXIT(cudaMemcpy(db, bias, (size_t)ld * 4, cudaMemcpyHostToDevice));
        CM_CUDA_OR_EXIT(cudaMemcpy(dcs, cs, (size_t)ML * 64 * 4, cudaMemcpyHostToDevice));
        CM_CUDA_OR_EXIT(cudaMemcpy(dsn, sn, (size_t)ML * 64 * 4, cudaMemcpyHostToDevice));
        for (int variant = 0; variant < 4; variant++) { /* bit 0: bias, bit 1: rotary */
            const int use_b = variant & 1, rot = (variant >> 1) & 1;
            /* the CPU's post-processing: q, and the expected cache (k0 with the new row) */
            memcpy(kx, k0, kvn * 2), memcpy(vx, v0, kvn * 2);
            for (uint32_t b = 0; b < B; b++) {
                const float *cr = c + (size_t)b * ld;
                for (uint32_t h = 0; h < H; h++)
                    for (uint32_t d = 0; d < D; d++)
                        q[((size_t)b * H + h) * D + d] = post_cpu(cr, use_b ? bias : NULL, cs, sn, pos, h * D, d, rot);
                for (uint32_t h = 0; h < KV; h++)
                    for (uint32_t d = 0; d < D; d++) {
                        size_t o = (((size_t)b * KV + h) * ML + pos) * D + d;
                        kx[o] = post_cpu(cr, use_b ? bias : NULL, cs, sn, pos, (H + h) * D, d, rot);
                        vx[o] = post_cpu(cr, use_b ? bias : NULL, cs, sn, pos, (H + KV + h) * D, d, 0);
                    }
            }
            CM_CUDA_OR_EXIT(cudaMemcpy(qd, q, qn * 2, cudaMemcpyHostToDevice));
            dak_attn_qkv z;
            memset(&z, 0, sizeof z);
            z.c = dc, z.bias = use_b ? db : NULL, z.cs = rot ? dcs : NULL, z.sn = rot ? dsn : NULL, z.ld = ld;
            for (int ri = 0; ri < 3; ri++) {
                uint32_t bh;
                CHECK(dak_kv_batch_for_ratio(B, ratios[ri], &bh, &e) == 0, "%s", e.msg);
                dak_kv_tiered kv;
                if (dak_kv_create(&kv, B, KV, ML, bh, &e)) {
                    CHECK(0, "fused: cache: %s", e.msg);
                    continue;
                }
                for (size_t ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++) {
                    dak_attn_opts o;
                    dak_attn_opts_default(&o);
                    o.splits = cfg[ci][0], o.groups = cfg[ci][1], o.teams = cfg[ci][2];
                    if (H / KV > 4 && o.teams > 1) continue; /* groups of 8: one team */
                    if (o.teams > 4 * (o.groups ? o.groups : 2)) continue;
                    dak_attn_plan p;
                    char what[200];
                    snprintf(what, sizeof what, "fused: batch %u heads %u/%u len %u host %u bias %d rotary %d splits %u "
                             "groups %u teams %u", B, H, KV, len, bh, use_b, rot, o.splits, o.groups, o.teams);
                    if (dak_attn_plan_make(B, bh, H, KV, len, dak_attn_ctx_sms(ctx), &o, &p, &e)) {
                        CHECK(0, "%s: plan: %s", what, e.msg);
                        continue;
                    }
                    if (dak_kv_upload(&kv, kx, vx, 0, &e) || dak_attn_decode(ctx, &kv, qd, H, len, scale, od, &p, NULL, &e)) {
                        CHECK(0, "%s: unfused: %s", what, e.msg);
                        continue;
                    }
                    sync_or_exit(what);
                    CM_CUDA_OR_EXIT(cudaMemcpy(ou, od, qn * 2, cudaMemcpyDeviceToHost));
                    for (int redirect = 0; redirect < 2; redirect++) { /* the new rows into k_new / v_new */
                        z.k_new = redirect ? kn : NULL, z.v_new = redirect ? vn : NULL;
                        CM_CUDA_OR_EXIT(cudaMemset(od, 0xff, qn * 2));
                        CM_CUDA_OR_EXIT(cudaMemset(kn, 0, kvn * 2));
                        CM_CUDA_OR_EXIT(cudaMemset(vn, 0, kvn * 2));
                        if (dak_kv_upload(&kv, k0, v0, 0, &e) ||
                            dak_attn_decode_qkv(ctx, &kv, &z, H, len, scale, od, &p, NULL, &e)) {
                            CHECK(0, "%s: fused: %s", what, e.msg);
                            continue;
                        }
                        sync_or_exit(what);
                        cases++;
                        CM_CUDA_OR_EXIT(cudaMemcpy(of, od, qn * 2, cudaMemcpyDeviceToHost));
                        size_t hn = (size_t)bh * KV * ML * D;
                        if (hn) memcpy(kg, kv.k_host, hn * 2), memcpy(vg, kv.v_host, hn * 2);
                        if (kvn > hn) {
                            CM_CUDA_OR_EXIT(cudaMemcpy(kg + hn, kv.k_dev, (kvn - hn) * 2, cudaMemcpyDeviceToHost));
                            CM_CUDA_OR_EXIT(cudaMemcpy(vg + hn, kv.v_dev, (kvn - hn) * 2, cudaMemcpyDeviceToHost));
                        }
                        const uint16_t *wk = redirect ? k0 : kx, *wv = redirect ? v0 : vx;
                        int oc = memcmp(of, ou, qn * 2) == 0;
                        int cc = memcmp(kg, wk, kvn * 2) == 0 && memcmp(vg, wv, kvn * 2) == 0;
                        if (redirect) { /* k_new: the new rows, zero elsewhere */
                            CM_CUDA_OR_EXIT(cudaMemcpy(kg, kn, kvn * 2, cudaMemcpyDeviceToHost));
                            CM_CUDA_OR_EXIT(cudaMemcpy(vg, vn, kvn * 2, cudaMemcpyDeviceToHost));
                            for (size_t i = 0; i < kvn && cc; i++) {
                                int at = (i / D) % ML == pos;
                                cc = kg[i] == (at ? kx[i] : 0) && vg[i] == (at ? vx[i] : 0);
                            }
                        }
                        bad_out += !oc, bad_cache += !cc;
                        CHECK(oc, "%s%s: out differs from the unfused decode's", what, redirect ? " k_new" : "");
                        CHECK(cc, "%s%s: the cache after the call differs from the CPU's post-processing", what,
                              redirect ? " k_new" : "");
                    }
                }
                dak_kv_destroy(&kv);
            }
        }
        cudaFree(dc), cudaFree(db), cudaFree(dcs), cudaFree(dsn), cudaFree(qd), cudaFree(od), cudaFree(kn), cudaFree(vn);
        free(c), free(bias), free(cs), free(sn), free(k0), free(v0), free(kx), free(vx), free(kg), free(vg), free(q);
        free(ou), free(of);
    }
    printf("fused q/k/v: %u calls, %u outs and %u caches differ from the unfused path's\n", cases, bad_out, bad_cache);
    /* refusals */
    dak_kv_tiered kv;
    dak_attn_plan p;
    uint16_t *od;
    float *dc;
    CM_CUDA_OR_EXIT(cudaMalloc((void **)&od, 2 * 4 * D * 2));
    CM_CUDA_OR_EXIT(cudaMalloc((void **)&dc, 2 * 8 * D * 4));
    CHECK(dak_kv_create(&kv, 2, 2, 64, 0, &e) == 0 && dak_attn_plan_make(2, 0, 4, 2, 10, dak_attn_ctx_sms(ctx), NULL, &p, &e) == 0,
          "%s", e.msg);
    dak_attn_qkv z;
    memset(&z, 0, sizeof z);
    z.c = dc, z.ld = 8 * D - 4;
    CHECK(dak_attn_decode_qkv(ctx, &kv, &z, 4, 10, 1.0f, od, &p, NULL, &e) == -1 && strstr(e.msg, "ld"), "short ld: %s",
          e.msg);
    z.ld = 8 * D + 2;
    CHECK(dak_attn_decode_qkv(ctx, &kv, &z, 4, 10, 1.0f, od, &p, NULL, &e) == -1 && strstr(e.msg, "multiple of 4"),
          "ld not a multiple of 4: %s", e.msg);
    z.ld = 8 * D, z.k_new = (uint16_t *)od;
    CHECK(dak_attn_decode_qkv(ctx, &kv, &z, 4, 10, 1.0f, od, &p, NULL, &e) == -1 && strstr(e.msg, "v_new"),
          "k_new without v_new: %s", e.msg);
    z.k_new = NULL, z.cs = dc;
    CHECK(dak_attn_decode_qkv(ctx, &kv, &z, 4, 10, 1.0f, od, &p, NULL, &e) == -1 && strstr(e.msg, "rotary"),
          "one rotary table: %s", e.msg);
    z.cs = NULL, z.c = NULL;
    CHECK(dak_attn_decode_qkv(ctx, &kv, &z, 4, 10, 1.0f, od, &p, NULL, &e) == -1 && strstr(e.msg, "QKV"), "no c: %s",
          e.msg);
    CHECK(dak_attn_decode_qkv(ctx, &kv, NULL, 4, 10, 1.0f, od, &p, NULL, &e) == -1, "no dak_attn_qkv");
    dak_kv_destroy(&kv);
    cudaFree(od), cudaFree(dc);
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    cm_err e;
    dak_attn_ctx *ctx;
    if (dak_attn_ctx_create(&ctx, &e)) {
        fprintf(stderr, "test_attn_gpu: %s\n", e.msg);
        return 1;
    }
    printf("SMs: %u\n", dak_attn_ctx_sms(ctx));
    test_rejects(ctx);
    const shape_t shapes[] = {
        {1, 32, 32, 1, 1},      {3, 32, 8, 63, 100},    {8, 32, 32, 64, 64},     {8, 56, 56, 65, 102},
        {3, 32, 8, 1000, 1037}, {8, 32, 32, 2048, 2048}, {1, 32, 32, 2048, 2085}, {64, 32, 8, 65, 65},
        {8, 8, 1, 200, 200},    {3, 12, 4, 130, 140},   {64, 32, 32, 1000, 1000}, {8, 32, 32, 1, 37},
    };
    const int n = (int)(sizeof shapes / sizeof shapes[0]);
    for (int i = 0; i < n; i++) {
        if (quick && i >= 4) break;
        run_shape(ctx, &shapes[i], 1000u + (uint64_t)i * 7u, i != 10);
    }
    test_combine_identity(ctx);
    test_fused_qkv(ctx);
    dak_attn_ctx_destroy(ctx);
    test_graph_reserve();
    return check_done();
}
