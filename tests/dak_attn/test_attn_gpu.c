/* dak split attention on the GPU against the CPU reference (double accumulation): random bf16
 * caches and queries, out poisoned with NaN first (every element must be written), offload
 * ratios 0 / 0.25 / 0.5 / 1, splits forced 1 and > 1, host CTAs 1 / 2 / 8 / 16, windows 1 / 4,
 * one and two consumer groups, rings of 1, 3 and 6 slots,
 * GQA groups 1, 3, 4, 8, lengths 1 .. 2048 with max_len > len in some cases.
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
    if (dak_attn_decode_ref(k, v, q, sh->batch, sh->heads, sh->kv, sh->max_len, sh->len, scale, ref, &e)) {
        CHECK(0, "reference: %s", e.msg);
        return -1;
    }
    uint16_t *qd, *od;
    CM_CUDA_OR_EXIT(cudaMalloc((void **)&qd, qn * 2));
    CM_CUDA_OR_EXIT(cudaMalloc((void **)&od, qn * 2));
    CM_CUDA_OR_EXIT(cudaMemcpy(qd, q, qn * 2, cudaMemcpyHostToDevice));
    const double ratios[] = {0.0, 0.25, 0.5, 1.0};
    /* opts: {splits, host_ctas, window, consumer groups, stages} */
    const uint32_t cfg[][5] = {{0, 0, 0, 0, 0}, {1, 0, 0, 0, 0}, {3, 0, 0, 1, 0}, {0, 1, 1, 0, 0}, {0, 8, 4, 0, 0},
                               {2, 16, 1, 1, 0}, {0, 16, 4, 0, 0}, {0, 8, 1, 2, 3}, {5, 2, 1, 1, 1}, {0, 0, 0, 1, 0}};
    const int ncfg = full_matrix ? 10 : 4;
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
            dak_attn_plan p;
            char what[200];
            snprintf(what, sizeof what,
                     "batch %u heads %u/%u len %u max_len %u host %u splits %u hctas %u win %u groups %u stages %u",
                     sh->batch, sh->heads, sh->kv, sh->len, sh->max_len, bh, o.splits, o.host_ctas, o.window, o.groups,
                     o.stages);
            if (dak_attn_plan_make(sh->batch, bh, sh->heads, sh->kv, sh->len, dak_attn_ctx_sms(ctx), &o, &p, &e)) {
                CHECK(0, "%s: plan: %s", what, e.msg);
                continue;
            }
            CM_CUDA_OR_EXIT(cudaMemset(od, 0xff, qn * 2)); /* bf16 0xffff: NaN */
            if (dak_attn_decode(ctx, &kv, qd, sh->heads, sh->len, scale, od, &p, NULL, &e)) {
                CHECK(0, "%s: decode: %s", what, e.msg);
                continue;
            }
            cudaError_t ce = cudaDeviceSynchronize();
            if (ce != cudaSuccess) {
                CHECK(0, "%s: kernel: %s", what, cudaGetErrorString(ce));
                exit(1);
            }
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
            CHECK(ok, "%s (CTAs %u+%u, splits %u/%u): rel %.3g, max %.3g, %zu not finite, first bad index %zu", what,
                  p.host_ctas, p.hbm_ctas, p.host_splits, p.hbm_splits, rel, mx, nan, first_bad);
            if (!ok) worst_case = 1;
            if (ci == 0)
                printf("%-80s rel %.2e max %.2e (CTAs %u+%u, splits %u/%u, window %u)\n", what, rel, mx, p.host_ctas,
                       p.hbm_ctas, p.host_splits, p.hbm_splits, p.window);
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
    dak_attn_ctx_destroy(ctx);
    return check_done();
}
