/* dak decode --diag-times: where a layer's time goes between kernels under PDL (decode_stamps.h). */
#include "decode_stamps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "dak/attention.h"
#include "dak/gemm.h"

static const char *const norm_names[DAK_ENG_NORM_STAMPS] = {"entry", "wait", "loaded", "stats", "stored", "smid"};
static const char *const act_names[DAK_ENG_ACT_STAMPS] = {"entry", "wait", "stored", "smid"};
static const char *const qkvp_names[DAK_ENG_QKVP_STAMPS] = {"entry", "wait", "stored", "smid"};
static const char *const attn_names[DAK_ATTN_STAMPS] = {"entry", "wait", "issued", "done", "smid"};
static const char *const gemm_names[DAK_GEMM_NTIMES] = {"entry", "copy1",   "wait",  "full1", "fullN",
                                                        "exit",  "smid",    "math",  "fixwait", "adds",
                                                        "prod0", "seg1",    "gate"};

static const char *const *names_of(const dak_eng_stamps *o)
{
    switch (o->kind) {
    case DAK_ENG_OP_NORM: return norm_names;
    case DAK_ENG_OP_ACT: return act_names;
    case DAK_ENG_OP_QKV_POST: return qkvp_names;
    case DAK_ENG_OP_ATTN: return attn_names;
    default: return gemm_names;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int decode_stamps_write(dak_engine *e, uint32_t layer, const char *path, cm_err *err)
{
    dak_eng_stamps ops[DAK_ENG_STAMPED_OPS];
    uint32_t n = 0;
    if (dak_engine_stamps(e, layer, ops, &n, err)) return -1;
    uint64_t t0 = UINT64_MAX;
    for (uint32_t c = 0; c < ops[0].ctas; c++)
        if (ops[0].t[(size_t)c * ops[0].words] && ops[0].t[(size_t)c * ops[0].words] < t0)
            t0 = ops[0].t[(size_t)c * ops[0].words];
    FILE *f = fopen(path, "w");
    if (!f) {
        dak_eng_stamps_free(ops, n);
        return cm_fail(err, "--diag-times: cannot write '%s'", path);
    }
    printf("\nlayer %u's timeline (last step; us from its first norm's first CTA entry; earliest / median / latest "
           "CTA):\n",
           layer);
    json_w w;
    json_init(&w, f);
    json_obj_begin(&w);
    json_kv_u64(&w, "layer", layer);
    json_kv_u64(&w, "t0_ns", t0);
    json_key(&w, "ops");
    json_arr_begin(&w);
    uint64_t *col = NULL;
    for (uint32_t i = 0; i < n; i++) {
        const dak_eng_stamps *o = &ops[i];
        const char *const *nm = names_of(o);
        printf("  %-8s %4u CTAs:", dak_eng_op_name(o->kind), o->ctas);
        col = (uint64_t *)realloc(col, (o->ctas ? o->ctas : 1) * sizeof *col);
        for (uint32_t k = 0; k < o->words; k++) {
            if (!strcmp(nm[k], "smid")) continue;
            uint32_t m = 0;
            for (uint32_t c = 0; c < o->ctas; c++) {
                uint64_t v = o->t[(size_t)c * o->words + k];
                if (v >= t0) col[m++] = v - t0; /* 0: not taken (or from a step before the layer's start) */
            }
            if (!m) continue;
            qsort(col, m, sizeof *col, cmp_u64);
            printf(" %s %.2f/%.2f/%.2f", nm[k], col[0] / 1e3, col[m / 2] / 1e3, col[m - 1] / 1e3);
        }
        printf("\n");
        json_obj_begin(&w);
        json_kv_str(&w, "kind", dak_eng_op_name(o->kind));
        json_kv_u64(&w, "ctas", o->ctas);
        json_key(&w, "names");
        json_arr_begin(&w);
        for (uint32_t k = 0; k < o->words; k++) json_str(&w, nm[k]);
        json_arr_end(&w);
        json_key(&w, "t");
        json_arr_begin(&w);
        for (uint32_t c = 0; c < o->ctas; c++) {
            json_arr_begin(&w);
            for (uint32_t k = 0; k < o->words; k++) {
                uint64_t v = o->t[(size_t)c * o->words + k];
                if (!strcmp(nm[k], "smid")) json_u64(&w, v);
                else json_i64(&w, v >= t0 ? (int64_t)(v - t0) : -1);
            }
            json_arr_end(&w);
        }
        json_arr_end(&w);
        json_obj_end(&w);
    }
    json_arr_end(&w);
    json_obj_end(&w);
    fputc('\n', f);
    free(col);
    dak_eng_stamps_free(ops, n);
    if (fclose(f)) return cm_fail(err, "--diag-times: writing '%s' failed", path);
    printf("(every CTA's stamps: %s)\n", path);
    return 0;
}
