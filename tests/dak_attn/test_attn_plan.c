/* dak split attention, CPU side: the tier split, the launch plan's invariants and the CPU
 * reference against cases whose answers follow from the math by hand. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "dak/attention.h"

#define D DAK_ATTN_D

static uint16_t bf(float f) { return dak_f32_to_bf16(f); }

/* ---- the tier split ---- */
static void test_ratio(void)
{
    cm_err e;
    uint32_t bh = 99;
    CHECK(dak_kv_batch_for_ratio(8, 0.5, &bh, &e) == 0 && bh == 4, "8 x 0.5 -> %u", bh);
    CHECK(dak_kv_batch_for_ratio(8, 0.0, &bh, &e) == 0 && bh == 0, "8 x 0 -> %u", bh);
    CHECK(dak_kv_batch_for_ratio(8, 1.0, &bh, &e) == 0 && bh == 8, "8 x 1 -> %u", bh);
    CHECK(dak_kv_batch_for_ratio(8, 0.0625, &bh, &e) == 0 && bh == 1, "8 x 1/16 (half an entry, rounds up) -> %u", bh);
    CHECK(dak_kv_batch_for_ratio(8, 0.05, &bh, &e) == 0 && bh == 0, "8 x 0.05 (0.4 entry) -> %u", bh);
    CHECK(dak_kv_batch_for_ratio(3, 0.5, &bh, &e) == 0 && bh == 2, "3 x 0.5 -> %u", bh);
    CHECK(dak_kv_batch_for_ratio(64, 0.25, &bh, &e) == 0 && bh == 16, "64 x 0.25 -> %u", bh);
    CHECK(dak_kv_batch_for_ratio(512, 0.2, &bh, &e) == 0 && bh == 102, "512 x 0.2 (102.4) -> %u", bh);
    const double bad[] = {-0.1, 1.5, NAN, INFINITY, -INFINITY, 1.0000001};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        e.msg[0] = 0;
        CHECK(dak_kv_batch_for_ratio(8, bad[i], &bh, &e) == -1 && strstr(e.msg, "ratio"), "ratio %g accepted (%s)",
              bad[i], e.msg);
    }
    CHECK(dak_kv_batch_for_ratio(0, 0.5, &bh, &e) == -1 && strstr(e.msg, "batch"), "batch 0 accepted");
}

/* ---- the plan ---- */
static int plan_ok(const dak_attn_plan *p, const char *what, uint32_t forced_teams, uint32_t forced_combine)
{
    int bad = 0;
    const uint32_t nb = p->batch, bh = p->batch_host;
#define PCHK(cond, ...)                                                                  \
    do {                                                                                 \
        CHECK(cond, __VA_ARGS__);                                                        \
        if (!(cond)) bad = 1;                                                            \
    } while (0)
    PCHK(p->host_ctas + p->hbm_ctas <= p->sm_count, "%s: %u + %u CTAs > %u SMs", what, p->host_ctas, p->hbm_ctas,
         p->sm_count);
    PCHK((p->host_ctas == 0) == (bh == 0), "%s: host CTAs %u with %u host entries", what, p->host_ctas, bh);
    PCHK((p->hbm_ctas == 0) == (bh == nb), "%s: HBM CTAs %u with %u HBM entries", what, p->hbm_ctas, nb - bh);
    PCHK(p->chunks == (p->len + 63) / 64, "%s: chunks %u for len %u", what, p->chunks, p->len);
    PCHK(p->group == p->heads / p->kv_heads, "%s: group", what);
    PCHK(p->host_ctas == 0 || (p->window >= 1 && p->window <= p->stages), "%s: window %u (stages %u)", what,
         p->window, p->stages);
    PCHK(p->stages >= 1 && p->stages <= DAK_ATTN_MAX_STAGES, "%s: stages %u", what, p->stages);
    for (int tier = 0; tier < 2; tier++) {
        const uint32_t t = tier ? p->hbm_teams : p->host_teams;
        const uint32_t splits = tier ? p->hbm_splits : p->host_splits;
        PCHK((t == 1 || t == 2 || t == 4 || t == 8) && t <= 4u * p->groups, "%s: tier %d teams %u (groups %u)", what,
             tier, t, p->groups);
        PCHK(p->group <= 4 || t == 1, "%s: tier %d teams %u with group %u", what, tier, t, p->group);
        /* units of >= 8 chunks: one team of every warp (auto) */
        if (forced_teams && p->group <= 4) PCHK(t == forced_teams, "%s: tier %d teams %u, forced %u", what, tier, t, forced_teams);
        /* auto: within the ring's slack (stages - 2), 8 only for units of <= 32 tokens (one slot, <= 2 passes) */
        if (!forced_teams) {
            const uint32_t cpu = (p->chunks + splits - 1) / splits, tok = cpu * 64 < p->len ? cpu * 64 : p->len;
            const uint32_t slack = p->stages > 2 ? p->stages - 2 : 1;
            PCHK(t <= slack || (t == 8 && tok <= 32 && p->stages == 6), "%s: tier %d: %u teams, %u stages, %u tokens a unit",
                 what, tier, t, p->stages, tok);
        }
        /* a splitting tier on one team merges with the second kernel unless forced */
        if (splits > 1 && t == 1 && !forced_combine)
            PCHK(p->combine == DAK_ATTN_COMBINE_KERNEL, "%s: tier %d: one team, combine %u", what, tier, p->combine);
    }
    {
        const int split = p->host_splits > 1 || p->hbm_splits > 1;
        PCHK(p->combine == DAK_ATTN_COMBINE_INLINE || p->combine == DAK_ATTN_COMBINE_KERNEL, "%s: combine %u", what,
             p->combine);
        PCHK(p->ws_floats == (split ? ((size_t)p->host_units + p->hbm_units) * p->group * (D + 2) : 0), "%s: ws_floats %zu",
             what, p->ws_floats);
        PCHK(p->ws_counters == (split && p->combine == DAK_ATTN_COMBINE_INLINE ? (size_t)nb * p->kv_heads : 0),
             "%s: ws_counters %zu", what, p->ws_counters);
    }
    for (int tier = 0; tier < 2; tier++) {
        const uint32_t ctas = tier ? p->hbm_ctas : p->host_ctas;
        const uint32_t units = tier ? p->hbm_units : p->host_units;
        const uint32_t splits = tier ? p->hbm_splits : p->host_splits;
        const uint32_t first = tier ? bh : 0, entries = tier ? nb - bh : bh;
        PCHK(units == entries * p->kv_heads * splits, "%s: tier %d units %u != %u x %u x %u", what, tier, units,
             entries, p->kv_heads, splits);
        PCHK(splits >= 1 && splits <= p->chunks, "%s: tier %d splits %u (chunks %u)", what, tier, splits, p->chunks);
        if (units == 0) continue;
        /* every unit to exactly one CTA of its tier, counts within one of each other */
        unsigned char *seen = (unsigned char *)calloc(units, 1);
        uint32_t cmin = UINT32_MAX, cmax = 0;
        for (uint32_t j = 0; j < ctas; j++) {
            uint32_t lo, hi;
            dak_attn_range(units, ctas, j, &lo, &hi);
            if (hi - lo < cmin) cmin = hi - lo;
            if (hi - lo > cmax) cmax = hi - lo;
            for (uint32_t u = lo; u < hi && u < units; u++) {
                seen[u]++;
                uint32_t en, kvh, s, c0, c1;
                dak_attn_unit(u, first, p->kv_heads, splits, p->chunks, &en, &kvh, &s, &c0, &c1);
                PCHK(tier ? (en >= bh && en < nb) : en < bh, "%s: tier %d CTA %u got entry %u (host entries %u)",
                     what, tier, j, en, bh);
            }
        }
        uint32_t once = 1;
        for (uint32_t u = 0; u < units; u++)
            if (seen[u] != 1) once = 0;
        PCHK(once, "%s: tier %d: a unit not assigned exactly once", what, tier);
        PCHK(cmax - cmin <= 1, "%s: tier %d: units per CTA %u..%u", what, tier, cmin, cmax);
        if (ctas > 0 && units / ctas == 0 && cmax == 0) PCHK(0, "%s: tier %d: no CTA works", what, tier);
        free(seen);
        /* the splits of each (entry, kv head) cover [0, len) exactly with whole chunks */
        for (uint32_t pair = 0; pair < entries * p->kv_heads; pair++) {
            uint32_t next = 0, en0 = 0, kv0 = 0;
            for (uint32_t s = 0; s < splits; s++) {
                uint32_t en, kvh, ss, c0, c1;
                dak_attn_unit(pair * splits + s, first, p->kv_heads, splits, p->chunks, &en, &kvh, &ss, &c0, &c1);
                if (s == 0) en0 = en, kv0 = kvh;
                PCHK(ss == s && en == en0 && kvh == kv0, "%s: unit %u decodes to split %u", what, pair * splits + s,
                     ss);
                PCHK(c0 == next && c1 > c0, "%s: split %u covers chunks [%u, %u), expected from %u", what, s, c0, c1,
                     next);
                next = c1;
                if (bad) break;
            }
            uint32_t end_tok = next * 64 < p->len ? next * 64 : p->len;
            PCHK(next == p->chunks && end_tok == p->len, "%s: splits end at chunk %u of %u", what, next, p->chunks);
            if (bad) break;
        }
    }
    return !bad;
}

static void test_plans(void)
{
    const uint32_t batches[] = {1, 2, 3, 8, 64, 512};
    const uint32_t hk[][2] = {{32, 32}, {32, 8}, {56, 56}, {8, 1}, {7, 7}};
    const uint32_t lens[] = {1, 63, 64, 65, 1000, 2048};
    const uint32_t sms[] = {132, 2, 7};
    const uint32_t splits[] = {0, 1, 3, 100};
    const uint32_t hctas[] = {0, 1, 8};
    int n = 0, bad = 0;
    for (size_t bi = 0; bi < 6; bi++)
        for (int ri = 0; ri < 4; ri++) {
            uint32_t b = batches[bi];
            uint32_t bh = ri == 0 ? 0 : ri == 1 ? 1 : ri == 2 ? b / 2 : b;
            for (size_t hi = 0; hi < 5; hi++)
                for (size_t li = 0; li < 6; li++)
                    for (size_t si = 0; si < 3; si++)
                        for (size_t pi = 0; pi < 4; pi++)
                            for (size_t ci = 0; ci < 3; ci++) {
                                dak_attn_opts o;
                                dak_attn_opts_default(&o);
                                o.splits = splits[pi];
                                o.host_ctas = hctas[ci];
                                static const uint32_t teams[] = {0, 1, 2, 4, 8};
                                o.teams = teams[(li + pi + ci) % 5];
                                o.combine = (uint32_t)((hi + si) % 3); /* auto, inline, kernel */
                                dak_attn_plan p;
                                cm_err e;
                                char what[160];
                                snprintf(what, sizeof what, "b %u bh %u h %u/%u len %u sm %u splits %u hc %u teams %u", b,
                                         bh, hk[hi][0], hk[hi][1], lens[li], sms[si], o.splits, o.host_ctas, o.teams);
                                int mixed = bh > 0 && bh < b;
                                int expect_fail = mixed && o.host_ctas >= sms[si];
                                if (!mixed && bh == b && o.host_ctas > sms[si]) expect_fail = 1;
                                int rc = dak_attn_plan_make(b, bh, hk[hi][0], hk[hi][1], lens[li], sms[si], &o, &p, &e);
                                if (o.teams > 1 && hk[hi][0] / hk[hi][1] > 4) { /* groups of 8: one team */
                                    CHECK(rc == -1 && strstr(e.msg, "teams"), "%s: accepted", what);
                                    continue;
                                }
                                if (expect_fail) {
                                    CHECK(rc == -1 && strstr(e.msg, "host_ctas"), "%s: accepted", what);
                                    continue;
                                }
                                CHECK(rc == 0, "%s: %s", what, e.msg);
                                if (rc) continue;
                                n++;
                                if (!plan_ok(&p, what, o.teams, o.combine)) bad++;
                                CHECK(o.combine ? p.combine == o.combine
                                                : p.combine == DAK_ATTN_COMBINE_INLINE || p.combine == DAK_ATTN_COMBINE_KERNEL,
                                      "%s: combine %u", what, p.combine);
                                /* auto splits give >= 2 units a CTA where the chunks allow */
                                if (o.splits == 0) {
                                    uint64_t hp = (uint64_t)bh * hk[hi][1], gp = (uint64_t)(b - bh) * hk[hi][1];
                                    uint64_t hneed = 2ull * p.host_ctas, gneed = 2ull * p.hbm_ctas;
                                    uint64_t hmax = hp * p.chunks, gmax = gp * p.chunks;
                                    CHECK(p.host_units >= (hneed < hmax ? hneed : hmax), "%s: host units %u", what,
                                          p.host_units);
                                    CHECK(p.hbm_units >= (gneed < gmax ? gneed : gmax), "%s: hbm units %u", what,
                                          p.hbm_units);
                                }
                                if (o.splits) {
                                    uint32_t want = o.splits < p.chunks ? o.splits : p.chunks;
                                    CHECK((bh == 0 || p.host_splits == want) && (bh == b || p.hbm_splits == want),
                                          "%s: forced splits %u -> %u / %u", what, o.splits, p.host_splits,
                                          p.hbm_splits);
                                }
                                if (bad > 20) return;
                            }
        }
    CHECK(n > 1000, "only %d plans checked", n);
    printf("plans checked: %d\n", n);

    /* the defaults on an H200-sized GPU */
    dak_attn_plan p;
    cm_err e;
    CHECK(dak_attn_plan_make(8, 4, 32, 32, 1024, 132, NULL, &p, &e) == 0, "%s", e.msg);
    CHECK(p.host_ctas == 8 && p.hbm_ctas == 124 && p.window == 4 && p.stages == 6 && p.groups == 2,
          "defaults %u %u %u %u %u", p.host_ctas, p.hbm_ctas, p.window, p.stages, p.groups);
    CHECK(p.smem_bytes <= 232448u, "shared memory %u over the H200's 232448", p.smem_bytes);
    CHECK(dak_attn_plan_make(8, 0, 32, 32, 1024, 132, NULL, &p, &e) == 0 && p.host_ctas == 0 && p.hbm_ctas == 132,
          "all-HBM CTAs %u %u", p.host_ctas, p.hbm_ctas);
    CHECK(dak_attn_plan_make(8, 8, 32, 32, 1024, 132, NULL, &p, &e) == 0 && p.host_ctas == 132 && p.hbm_ctas == 0,
          "all-host CTAs %u %u", p.host_ctas, p.hbm_ctas);
    /* 256 pairs on 132 SMs, 16 chunks: 2 splits -> 512 units; batch 1 len 2048: 9 splits */
    CHECK(dak_attn_plan_make(8, 0, 32, 32, 1024, 132, NULL, &p, &e) == 0 && p.hbm_splits == 2 && p.ws_floats > 0,
          "splits %u", p.hbm_splits);
    CHECK(dak_attn_plan_make(1, 0, 32, 32, 2048, 132, NULL, &p, &e) == 0 && p.hbm_splits == 9, "splits %u",
          p.hbm_splits);
    CHECK(dak_attn_plan_make(512, 0, 32, 32, 1024, 132, NULL, &p, &e) == 0 && p.hbm_splits == 1 && p.ws_floats == 0,
          "splits %u ws %zu", p.hbm_splits, p.ws_floats);
    /* teams by the rule's model, worked by hand (Llama-2-7B on 132 SMs, 6 slots: at most 4 teams, 8 for units of
     * <= 32 tokens; cost ceil(units a CTA / T) x (1 + 2 x passes), ties to the larger T):
     * 64 x 32: 2048 units, 16 a CTA, 2 blocks: T 4 -> 4 x 3 = 12, T 8 -> 2 x 5 = 10: 8.
     * 64 x 1024: 16 a CTA, 64 blocks: T 2 -> 8 x 33 = 264, T 4 -> 4 x 65 = 260: 4.
     * 512 x 1024: 125 a CTA: T 2 -> 63 x 33 = 2079, T 4 -> 32 x 65 = 2080: 2.
     * 8 x 32: 2 a CTA: T 2 -> 1 x 3, T 4 -> 1 x 3 (tie: 4), T 8 -> 1 x 5: 4. */
    CHECK(dak_attn_plan_make(64, 0, 32, 32, 32, 132, NULL, &p, &e) == 0 && p.hbm_teams == 8, "teams %u", p.hbm_teams);
    CHECK(dak_attn_plan_make(64, 0, 32, 32, 1024, 132, NULL, &p, &e) == 0 && p.hbm_teams == 4, "teams %u", p.hbm_teams);
    CHECK(dak_attn_plan_make(512, 0, 32, 32, 1024, 132, NULL, &p, &e) == 0 && p.hbm_teams == 2, "teams %u",
          p.hbm_teams);
    CHECK(dak_attn_plan_make(8, 0, 32, 32, 32, 132, NULL, &p, &e) == 0 && p.hbm_teams == 4, "teams %u", p.hbm_teams);
    CHECK(dak_attn_plan_make(64, 0, 64, 8, 128, 132, NULL, &p, &e) == 0 && p.hbm_teams == 1, "group 8: teams %u",
          p.hbm_teams);
    dak_attn_opts o;
    dak_attn_opts_default(&o);
    o.stages = 3; /* slack 1: one team */
    CHECK(dak_attn_plan_make(64, 0, 32, 32, 128, 132, &o, &p, &e) == 0 && p.hbm_teams == 1, "3 stages: teams %u",
          p.hbm_teams);
    /* a split plan: inline combine by default (counters); the second kernel when the splitting tier runs one team
     * (group 8: 8 x 1024 on 64/8 heads) or when asked */
    CHECK(dak_attn_plan_make(8, 0, 32, 32, 1024, 132, NULL, &p, &e) == 0 && p.combine == DAK_ATTN_COMBINE_INLINE &&
              p.ws_counters == 8u * 32u && p.hbm_teams > 1,
          "combine %u counters %zu teams %u", p.combine, p.ws_counters, p.hbm_teams);
    CHECK(dak_attn_plan_make(8, 0, 64, 8, 1024, 132, NULL, &p, &e) == 0 && p.hbm_splits > 1 && p.hbm_teams == 1 &&
              p.combine == DAK_ATTN_COMBINE_KERNEL && p.ws_counters == 0,
          "group 8 split: combine %u counters %zu", p.combine, p.ws_counters);
    dak_attn_opts_default(&o);
    o.combine = DAK_ATTN_COMBINE_KERNEL;
    CHECK(dak_attn_plan_make(8, 0, 32, 32, 1024, 132, &o, &p, &e) == 0 && p.ws_counters == 0 && p.ws_floats > 0,
          "combine kernel: counters %zu", p.ws_counters);
    o.pdl = 1;
    CHECK(dak_attn_plan_make(8, 0, 32, 32, 1024, 132, &o, &p, &e) == 0 && p.pdl == 1, "pdl %d", p.pdl);
}

/* the workspace of several plans, ahead of time: the element-wise maximum */
static void test_ws_max(void)
{
    cm_err e;
    dak_attn_plan a, b, c;
    dak_attn_opts o;
    dak_attn_opts_default(&o);
    CHECK(dak_attn_plan_make(8, 0, 32, 32, 1024, 132, NULL, &a, &e) == 0, "%s", e.msg);    /* splits: both */
    CHECK(dak_attn_plan_make(512, 0, 32, 32, 1024, 132, NULL, &b, &e) == 0, "%s", e.msg);  /* no split: none */
    o.splits = 16, o.combine = DAK_ATTN_COMBINE_KERNEL;
    CHECK(dak_attn_plan_make(64, 0, 32, 8, 2048, 132, &o, &c, &e) == 0, "%s", e.msg);      /* floats, no counters */
    CHECK(a.ws_floats > 0 && a.ws_counters > 0 && b.ws_floats == 0 && b.ws_counters == 0 && c.ws_counters == 0 &&
              c.ws_floats > a.ws_floats,
          "the three plans' workspaces: %zu/%zu %zu/%zu %zu/%zu", a.ws_floats, a.ws_counters, b.ws_floats, b.ws_counters,
          c.ws_floats, c.ws_counters);
    size_t f = 0, n = 0;
    dak_attn_plan_ws_max(&b, &f, &n);
    CHECK(f == 0 && n == 0, "after the unsplit plan: %zu %zu", f, n);
    dak_attn_plan_ws_max(&a, &f, &n);
    CHECK(f == a.ws_floats && n == a.ws_counters, "after a: %zu %zu", f, n);
    dak_attn_plan_ws_max(&c, &f, &n);
    CHECK(f == c.ws_floats && n == a.ws_counters, "after c: %zu %zu", f, n);
    dak_attn_plan_ws_max(&a, &f, &n);
    CHECK(f == c.ws_floats && n == a.ws_counters, "a again: %zu %zu", f, n);
    dak_attn_plan_ws_max(NULL, &f, &n);
    dak_attn_plan_ws_max(&a, NULL, &n);
    CHECK(f == c.ws_floats && n == a.ws_counters, "NULL plan / pointer: %zu %zu", f, n);
}

static void test_plan_rejects(void)
{
    dak_attn_plan p;
    dak_attn_opts o;
    cm_err e;
#define REJ(word, b, bh, h, kv, len, sm, op)                                                                  \
    do {                                                                                                     \
        e.msg[0] = 0;                                                                                        \
        int rc_ = dak_attn_plan_make(b, bh, h, kv, len, sm, op, &p, &e);                                      \
        CHECK(rc_ == -1 && strstr(e.msg, word), "expected a rejection naming '%s', got rc %d '%s'", word, rc_, \
              e.msg);                                                                                        \
    } while (0)
    dak_attn_opts_default(&o);
    o.head_dim = 64;
    REJ("head_dim", 8, 0, 32, 32, 100, 132, &o);
    o.head_dim = 256;
    REJ("head_dim", 8, 0, 32, 32, 100, 132, &o);
    REJ("query heads per kv head", 8, 0, 16, 1, 100, 132, NULL);
    REJ("not a multiple", 8, 0, 30, 8, 100, 132, NULL);
    REJ("len 0", 8, 0, 32, 32, 0, 132, NULL);
    REJ("batch 0", 0, 0, 32, 32, 10, 132, NULL);
    REJ("batch_host", 8, 9, 32, 32, 10, 132, NULL);
    REJ("heads", 8, 0, 0, 1, 10, 132, NULL);
    REJ("kv_heads", 8, 0, 8, 0, 10, 132, NULL);
    REJ("sm_count", 8, 0, 32, 32, 10, 0, NULL);
    REJ("sm_count", 8, 4, 32, 32, 10, 1, NULL);
    dak_attn_opts_default(&o);
    o.stages = 7;
    REJ("stages", 8, 0, 32, 32, 10, 132, &o);
    o.stages = 3, o.window = 4;
    REJ("window", 8, 4, 32, 32, 10, 132, &o);
    dak_attn_opts_default(&o);
    o.groups = 3;
    REJ("groups", 8, 4, 32, 32, 10, 132, &o);
    dak_attn_opts_default(&o);
    o.host_ctas = 132;
    REJ("host_ctas", 8, 4, 32, 32, 10, 132, &o);
    o.host_ctas = 100, o.hbm_ctas = 40;
    REJ("exceed", 8, 4, 32, 32, 10, 132, &o);
    dak_attn_opts_default(&o);
    o.teams = 3;
    REJ("teams", 8, 0, 32, 32, 10, 132, &o);
    o.teams = 16;
    REJ("teams", 8, 0, 32, 32, 10, 132, &o);
    o.teams = 8, o.groups = 1;
    REJ("4 x groups", 8, 0, 32, 32, 10, 132, &o);
    o.teams = 2, o.groups = 0;
    REJ("teams", 8, 0, 64, 8, 10, 132, &o);
    dak_attn_opts_default(&o);
    o.combine = 3;
    REJ("combine", 8, 0, 32, 32, 10, 132, &o);
    dak_attn_opts_default(&o);
    o.hbm_ctas = 133;
    REJ("exceed", 8, 0, 32, 32, 10, 132, &o);
}

/* ---- the reference against the math ---- */
static void test_reference(void)
{
    cm_err e;
    const float scale = 1.0f / sqrtf((float)D);
    /* 1. all keys equal: the weights are uniform, out = mean of the V rows.
     *    V[t][d] = t + 0.5 (d % 4) over len = 4 tokens: mean 1.5 + 0.5 (d % 4); max_len 6 with
     *    tokens 4, 5 holding huge values that must be ignored. */
    {
        const uint32_t ml = 6, len = 4;
        uint16_t *k = calloc(ml * D, 2), *v = calloc(ml * D, 2), q[D];
        float out[D];
        for (uint32_t d = 0; d < D; d++) q[d] = bf((float)((int)(d % 7) - 3) * 0.25f);
        for (uint32_t t = 0; t < ml; t++)
            for (uint32_t d = 0; d < D; d++) {
                k[t * D + d] = bf(t < len ? (float)((int)(d % 5) - 2) * 0.5f : 1000.0f);
                v[t * D + d] = bf(t < len ? (float)t + 0.5f * (float)(d % 4) : 1e30f);
            }
        CHECK(dak_attn_decode_ref(k, v, q, 1, 1, 1, DAK_ATTN_D, ml, len, scale, out, &e) == 0, "%s", e.msg);
        double worst = 0;
        for (uint32_t d = 0; d < D; d++) {
            double want = 1.5 + 0.5 * (double)(d % 4), err = fabs(out[d] - want);
            if (err > worst) worst = err;
        }
        CHECK(worst < 1e-6, "equal keys: worst |out - mean V| = %g", worst);
        free(k), free(v);
    }
    /* 2. one key with a huge score: q = e_0, K[3][0] = 64, every other key 0, scale 1: weights
     *    e^64 : 1 (x 9 others), so out = V[3] to within 9 e^-64.  len 10. */
    {
        const uint32_t len = 10;
        uint16_t k[10 * D], v[10 * D], q[D];
        float out[D];
        memset(k, 0, sizeof k);
        memset(q, 0, sizeof q);
        q[0] = bf(1.0f);
        k[3 * D + 0] = bf(64.0f);
        for (uint32_t t = 0; t < len; t++)
            for (uint32_t d = 0; d < D; d++) v[t * D + d] = bf((float)(t * 3 + d % 11) - 10.0f);
        CHECK(dak_attn_decode_ref(k, v, q, 1, 1, 1, DAK_ATTN_D, len, len, 1.0f, out, &e) == 0, "%s", e.msg);
        double worst = 0;
        for (uint32_t d = 0; d < D; d++) {
            double want = (double)(3 * 3 + d % 11) - 10.0, err = fabs(out[d] - want);
            if (err > worst) worst = err;
        }
        CHECK(worst < 1e-5, "huge score: worst |out - V[3]| = %g", worst);
    }
    /* 3. two tokens, scores 0 and 1 (q = e_0, K[1][0] = 1, scale 1): weights 1/(1+e), e/(1+e);
     *    V[0] = 0, V[1] = 1 -> out = e / (1 + e) = 0.7310585786300049. */
    {
        uint16_t k[2 * D], v[2 * D], q[D];
        float out[D];
        memset(k, 0, sizeof k);
        memset(q, 0, sizeof q);
        q[0] = bf(1.0f);
        k[D + 0] = bf(1.0f);
        for (uint32_t d = 0; d < D; d++) v[d] = bf(0.0f), v[D + d] = bf(1.0f);
        CHECK(dak_attn_decode_ref(k, v, q, 1, 1, 1, DAK_ATTN_D, 2, 2, 1.0f, out, &e) == 0, "%s", e.msg);
        CHECK(fabs(out[0] - 0.7310585786300049) < 1e-6 && fabs(out[D - 1] - 0.7310585786300049) < 1e-6,
              "two tokens: %.9f", out[0]);
    }
    /* 3b. heads of 64 (the engine's CPU reference for OPT-125m's size), two query heads on one kv head, rows 64
     *     apart: q0 = e_0, q1 = 2 e_0, K[1][0] = 1, V[0] = 0, V[1] = 1: head 0 out = e / (1 + e) = 0.7310585786,
     *     head 1 out = e^2 / (1 + e^2) = 0.8807970780 (rows read 128 apart would find K[1][0] nowhere). */
    {
        const uint32_t D64 = 64;
        uint16_t k[2 * 64], v[2 * 64], q[2 * 64];
        float out[2 * 64];
        memset(k, 0, sizeof k);
        memset(q, 0, sizeof q);
        q[0] = bf(1.0f), q[D64] = bf(2.0f);
        k[D64 + 0] = bf(1.0f);
        for (uint32_t d = 0; d < D64; d++) v[d] = bf(0.0f), v[D64 + d] = bf(1.0f);
        CHECK(dak_attn_decode_ref(k, v, q, 1, 2, 1, D64, 2, 2, 1.0f, out, &e) == 0, "%s", e.msg);
        CHECK(fabs(out[0] - 0.7310585786) < 1e-6 && fabs(out[D64 - 1] - 0.7310585786) < 1e-6 &&
                  fabs(out[D64] - 0.8807970780) < 1e-6 && fabs(out[2 * D64 - 1] - 0.8807970780) < 1e-6,
              "heads of 64: %.9f %.9f", out[0], out[D64]);
    }
    /* 4. GQA: heads 4, kv_heads 2 (group 2), batch 2: V of (entry b, kv head j) all equal to
     *    10 b + j + 1, so out[b][h] = 10 b + h / 2 + 1 whatever the keys. */
    {
        const uint32_t B = 2, H = 4, KV = 2, ml = 5, len = 5;
        uint16_t *k = malloc((size_t)B * KV * ml * D * 2), *v = malloc((size_t)B * KV * ml * D * 2);
        uint16_t *q = malloc((size_t)B * H * D * 2);
        float *out = malloc((size_t)B * H * D * 4);
        for (uint32_t i = 0; i < B * KV * ml * D; i++) k[i] = bf((float)((int)(i * 7919u % 13u) - 6) * 0.125f);
        for (uint32_t i = 0; i < B * H * D; i++) q[i] = bf((float)((int)(i * 104729u % 9u) - 4) * 0.25f);
        for (uint32_t b = 0; b < B; b++)
            for (uint32_t j = 0; j < KV; j++)
                for (uint32_t i = 0; i < ml * D; i++) v[((size_t)b * KV + j) * ml * D + i] = bf((float)(10 * b + j + 1));
        CHECK(dak_attn_decode_ref(k, v, q, B, H, KV, DAK_ATTN_D, ml, len, scale, out, &e) == 0, "%s", e.msg);
        double worst = 0;
        for (uint32_t b = 0; b < B; b++)
            for (uint32_t h = 0; h < H; h++)
                for (uint32_t d = 0; d < D; d++) {
                    double err = fabs(out[((size_t)b * H + h) * D + d] - (double)(10 * b + h / 2 + 1));
                    if (err > worst) worst = err;
                }
        CHECK(worst < 1e-5, "GQA: worst error %g", worst);
        free(k), free(v), free(q), free(out);
    }
    /* 5. bad inputs */
    {
        uint16_t k[D], v[D], q[D];
        float out[D];
        memset(k, 0, sizeof k), memset(v, 0, sizeof v), memset(q, 0, sizeof q);
        CHECK(dak_attn_decode_ref(k, v, q, 1, 1, 1, DAK_ATTN_D, 1, 2, 1.0f, out, &e) == -1 && strstr(e.msg, "max_len"), "len > max_len");
        CHECK(dak_attn_decode_ref(k, v, q, 1, 1, 1, DAK_ATTN_D, 1, 0, 1.0f, out, &e) == -1 && strstr(e.msg, "len 0"), "len 0");
        CHECK(dak_attn_decode_ref(k, v, q, 1, 1, 1, DAK_ATTN_D, 1, 1, NAN, out, &e) == -1 && strstr(e.msg, "scale"), "NaN scale");
        CHECK(dak_attn_decode_ref(k, v, q, 1, 3, 2, DAK_ATTN_D, 1, 1, 1.0f, out, &e) == -1 && strstr(e.msg, "multiple"), "3 / 2");
        CHECK(dak_attn_decode_ref(k, v, q, 1, 9, 1, DAK_ATTN_D, 1, 1, 1.0f, out, &e) == -1 && strstr(e.msg, "1..8"), "g 9");
        CHECK(dak_attn_decode_ref(k, v, q, 1, 1, 1, 0, 1, 1, 1.0f, out, &e) == -1 && strstr(e.msg, "head_dim 0"), "D 0");
        CHECK(dak_attn_decode_ref(k, v, q, 1, 1, 1, DAK_ATTN_REF_MAX_D + 1, 1, 1, 1.0f, out, &e) == -1 &&
                  strstr(e.msg, "head_dim 257"),
              "D 257");
    }
}

static void test_bf16(void)
{
    CHECK(dak_f32_to_bf16(1.0f) == 0x3f80, "1.0");
    CHECK(dak_f32_to_bf16(-2.0f) == 0xc000, "-2.0");
    /* 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1.0) */
    CHECK(dak_f32_to_bf16(1.00390625f) == 0x3f80, "tie to even down");
    /* 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: ties to even (1 + 2^-6 = 0x3f82) */
    CHECK(dak_f32_to_bf16(1.01171875f) == 0x3f82, "tie to even up");
    CHECK(dak_bf16_to_f32(0x4049) == 3.140625f, "0x4049");
    CHECK(isnan(dak_bf16_to_f32(dak_f32_to_bf16(NAN))), "NaN stays NaN");
}

int main(void)
{
    test_bf16();
    test_ratio();
    test_plan_rejects();
    test_plans();
    test_ws_max();
    test_reference();
    return check_done();
}
