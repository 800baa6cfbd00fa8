/* GPU test of the persistent pipeline (label gpu): 10^6 requests of mixed
 * configurations through each placement, every request answered exactly
 * once, every reply's energy recomputed from its spins on the CPU
 * (dsb_energy2), a sample equal to the CPU reference bit for bit; error
 * replies; drops counted when the ring is overfilled on purpose, with
 * sent = answered + dropped.  Usage: test_pipeline_gpu [requests [sums]], sums
 * the workers' coupling-sum engine (auto, cuda, tensor; dsb/gpu.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "common/bench.h"
#include "dsb/gpu.h"
#include "dsb/instances.h"
#include "dsb/model.h"
#include "dsb/pipeline.h"
#include "dsb/solve.h"
#include "dsb/wire.h"

#define N_MODELS 5
#define N_TEMPL 16
#define LOG_STRIDE 128u

typedef struct {
    uint16_t slot;
    uint32_t B, K;
    float xi, dt;
    int with_field;
} templ_spec;

static const templ_spec SPEC[N_TEMPL] = {
    {0, 1, 20, 0, 1.0f, 1},   {0, 8, 30, 0, 1.0f, 1},  {0, 64, 10, 0, 0.5f, 1},
    {1, 3, 25, 0.05f, 1.0f, 1}, {1, 16, 15, 0, 1.0f, 1}, {2, 8, 40, 0, 1.0f, 1},
    {2, 32, 10, 0, 1.0f, 1},  {2, 1, 50, 0, 0.5f, 1},  {3, 2, 20, 0, 1.0f, 1},
    {3, 8, 20, 0, 1.0f, 1},   {3, 18, 10, 0, 1.0f, 1}, {4, 5, 30, 0, 1.0f, 1},
    {4, 64, 12, 0, 1.0f, 1},  {1, 7, 33, 0, 1.0f, 1},  {0, 3, 100, 0, 1.0f, 0},
    {2, 5, 21, 0, 1.0f, 1},
};

typedef struct {
    dsb_model m[N_MODELS];
    int16_t *h[N_TEMPL]; /* field of each template (NULL: none) */
    uint8_t *frame[N_TEMPL];
    uint32_t len[N_TEMPL];
    uint64_t seed[N_TEMPL];
} suite;

static void suite_make(suite *s)
{
    memset(s, 0, sizeof *s);
    cm_err err;
    dsb_instance in[N_MODELS];
    int rc = dsb_gen_sk(64, 1000, &in[0], &err) || dsb_gen_ternary(100, 0.05, 1001, &in[1], &err) ||
             dsb_gen_portfolio(128, 256, 1002, &in[2], &err) || dsb_gen_sk(200, 1003, &in[3], &err) ||
             dsb_gen_portfolio(48, 64, 1004, &in[4], &err);
    if (rc) {
        fprintf(stderr, "instance generation failed: %s\n", err.msg);
        exit(1);
    }
    const dsb_format fm[N_MODELS] = {DSB_FMT_PM1, DSB_FMT_TERNARY, DSB_FMT_INT8, DSB_FMT_PM1,
                                     DSB_FMT_INT8};
    for (int i = 0; i < N_MODELS; i++)
        if (dsb_model_pack(in[i].J, in[i].n, fm[i], &s->m[i], &err)) {
            fprintf(stderr, "pack failed: %s\n", err.msg);
            exit(1);
        }
    for (int j = 0; j < N_TEMPL; j++) {
        const templ_spec *t = &SPEC[j];
        uint32_t n = s->m[t->slot].n;
        if (t->with_field) {
            s->h[j] = cm_malloc(n * sizeof(int16_t));
            const dsb_instance *I = &in[t->slot];
            for (uint32_t r = 0; r < n; r++) {
                if (I->fields && I->n_fields)
                    s->h[j][r] = I->fields[(size_t)(j % I->n_fields) * n + r];
                else /* small deterministic field in [-100, 100] */
                    s->h[j][r] = (int16_t)((int)((r * 2654435761u + (uint32_t)j * 40503u) >> 16) % 201 - 100);
            }
        }
        s->seed[j] = 0x5eed0000ull + 0x100000000ull * (uint64_t)j;
        s->frame[j] = cm_malloc(DSB_PIPE_FRAME_SLOT);
        s->len[j] = dsb_pipe_build_solve(s->frame[j], DSB_PIPE_FRAME_SLOT, t->slot, 0, n, t->K,
                                         t->B, s->seed[j], t->xi, t->dt, s->h[j]);
        if (!s->len[j]) {
            fprintf(stderr, "template %d does not fit a frame\n", j);
            exit(1);
        }
    }
    for (int i = 0; i < N_MODELS; i++) dsb_instance_free(&in[i]);
}

/* Checks the replies of a wait-mode run of `requests` (every one answered). */
static void verify_all(const char *what, const suite *s, uint32_t requests, const uint8_t *answers,
                       const uint8_t *log)
{
    uint64_t not_once = 0, bad_hdr = 0, bad_energy = 0;
    int64_t first_bad = -1;
    for (uint32_t i = 0; i < requests; i++) {
        if (answers[i] != 1) {
            not_once++;
            if (first_bad < 0) first_bad = i;
            continue;
        }
        const uint8_t *f = log + (size_t)i * LOG_STRIDE;
        dsb_wire_result r;
        memcpy(&r, f, 64);
        const int j = (int)(i % N_TEMPL);
        const templ_spec *t = &SPEC[j];
        const dsb_model *m = &s->m[t->slot];
        const uint32_t W = dsb_words(m->n);
        if (r.type != DSB_MSG_RESULT || r.status != DSB_ST_OK || r.request_id != i ||
            r.n != m->n || r.payload_len != 4u * W || r.best_replica >= t->B ||
            r.model_id != t->slot || r.format != (uint8_t)m->format || f[12] != 0x88 ||
            f[13] != 0xB5) {
            if (bad_hdr < 3)
                fprintf(stderr, "%s: request %u: type %u status %u id %u n %u len %u best %u\n", what,
                        i, r.type, r.status, r.request_id, r.n, r.payload_len, r.best_replica);
            bad_hdr++;
            continue;
        }
        uint32_t spins[64];
        memcpy(spins, f + 64, 4u * W);
        int64_t e = dsb_energy2(m, s->h[j], spins);
        if (e != r.energy2) {
            if (bad_energy < 3)
                fprintf(stderr, "%s: request %u: reply 2E %" PRId64 ", recomputed %" PRId64 "\n",
                        what, i, r.energy2, e);
            bad_energy++;
        }
    }
    CHECK(not_once == 0, "%s: %" PRIu64 " requests not answered exactly once (first %" PRId64 ")",
          what, not_once, first_bad);
    CHECK(bad_hdr == 0, "%s: %" PRIu64 " replies with a wrong header", what, bad_hdr);
    CHECK(bad_energy == 0, "%s: %" PRIu64 " reply energies differ from the CPU recomputation", what,
          bad_energy);
}

/* A sample of the replies against the CPU reference, bit for bit. */
static void verify_reference(const char *what, const suite *s, uint32_t requests, const uint8_t *log)
{
    uint32_t checked = 0, bad = 0;
    for (uint32_t i = 0; i < requests; i = i < N_TEMPL ? i + 1 : i + 9973u) {
        const int j = (int)(i % N_TEMPL);
        const templ_spec *t = &SPEC[j];
        const dsb_model *m = &s->m[t->slot];
        dsb_params p;
        dsb_params_default(&p);
        p.replicas = t->B;
        p.steps = t->K;
        p.dt = t->dt;
        p.xi = t->xi;
        p.seed = s->seed[j] + i;
        dsb_result ref;
        dsb_result_init(&ref, m->n, t->B, 0);
        cm_err err;
        if (dsb_solve_cpu(m, s->h[j], &p, 0, &ref, &err)) {
            fprintf(stderr, "%s: CPU reference failed: %s\n", what, err.msg);
            bad++;
            dsb_result_free(&ref);
            continue;
        }
        const uint8_t *f = log + (size_t)i * LOG_STRIDE;
        dsb_wire_result r;
        memcpy(&r, f, 64);
        const uint32_t W = dsb_words(m->n);
        if (r.energy2 != ref.best_energy2 || r.best_replica != ref.best_replica ||
            memcmp(f + 64, ref.best_spins, 4u * W) != 0) {
            if (bad < 3)
                fprintf(stderr,
                        "%s: request %u (template %d): GPU 2E %" PRId64 " replica %u, CPU 2E %" PRId64
                        " replica %u\n",
                        what, i, j, r.energy2, r.best_replica, ref.best_energy2, ref.best_replica);
            bad++;
        }
        checked++;
        dsb_result_free(&ref);
    }
    CHECK(checked > N_TEMPL && bad == 0, "%s: %u of %u sampled replies differ from the CPU reference",
          what, bad, checked);
    printf("%s: %u sampled replies equal the CPU reference bit for bit\n", what, checked);
}

/* Returns 0 when the traffic ran (whatever the checks found), -1 when it failed. */
static int run_mixed(dsb_pipe *p, const char *what, const suite *s, uint32_t requests)
{
    cm_err err;
    uint8_t *answers = cm_calloc(requests, 1);
    uint8_t *log = cm_calloc(requests, LOG_STRIDE);
    uint32_t *lat = cm_calloc(requests, sizeof *lat);
    dsb_pipe_traffic t;
    memset(&t, 0, sizeof t);
    t.frames = (const uint8_t *const *)s->frame;
    t.lens = s->len;
    t.n_templates = N_TEMPL;
    t.requests = requests;
    t.answers = answers;
    t.log = log;
    t.log_stride = LOG_STRIDE;
    t.latency_ns = lat;
    int rc = dsb_pipe_run_traffic(p, &t, &err);
    CHECK(rc == 0, "%s: traffic failed: %s", what, err.msg);
    if (rc == 0) {
        CHECK_EQ_I64(t.published, requests, "published");
        CHECK_EQ_I64(t.dropped, 0, "dropped in wait mode");
        CHECK_EQ_I64(t.answered, requests, "answered");
        CHECK_EQ_I64(t.stray, 0, "stray replies");
        printf("%s: %u requests in %.3f s (%.0f kreq/s)\n", what, requests, t.seconds,
               t.seconds > 0 ? 1e-3 * requests / t.seconds : 0.0);
        double t0 = bench_now_s();
        verify_all(what, s, requests, answers, log);
        verify_reference(what, s, requests, log);
        printf("%s: CPU verification %.1f s\n", what, bench_now_s() - t0);
    }
    free(answers);
    free(log);
    free(lat);
    return rc;
}

/* Error replies: each malformed or unservable request gets its status. */
static void run_errors(dsb_pipe *p, const char *what, const suite *s)
{
    enum { NE = 7 };
    uint8_t fr[NE][DSB_PIPE_FRAME_SLOT];
    uint32_t len[NE];
    const uint8_t *frames[NE];
    const uint16_t want_status[NE] = {DSB_ST_OK,        DSB_ST_UNKNOWN_MODEL, DSB_ST_TOO_LARGE,
                                      DSB_ST_WRONG_N,   DSB_ST_BAD_REQUEST,   DSB_ST_BAD_REQUEST,
                                      DSB_ST_BAD_REQUEST};
    const uint8_t want_reason[NE] = {DSB_WR_NONE,      DSB_WR_UNKNOWN_MODEL, DSB_WR_TOO_LARGE,
                                     DSB_WR_WRONG_N,   DSB_WR_BAD_K,         DSB_WR_BAD_FIELD_LEN,
                                     DSB_WR_BAD_MODEL_ID};
    const uint32_t n0 = s->m[0].n;
    len[0] = dsb_pipe_build_solve(fr[0], sizeof fr[0], 0, 0, n0, 10, 4, 7, 0, 1.0f, NULL);
    len[1] = dsb_pipe_build_solve(fr[1], sizeof fr[1], 9, 0, n0, 10, 4, 7, 0, 1.0f, NULL);
    len[2] = dsb_pipe_build_solve(fr[2], sizeof fr[2], 0, 0, n0, 10, 65, 7, 0, 1.0f, NULL);
    len[3] = dsb_pipe_build_solve(fr[3], sizeof fr[3], 0, 0, n0 + 1, 10, 4, 7, 0, 1.0f, NULL);
    len[4] = dsb_pipe_build_solve(fr[4], sizeof fr[4], 0, 0, n0, 0, 4, 7, 0, 1.0f, NULL);
    len[5] = dsb_pipe_build_solve(fr[5], sizeof fr[5], 0, 0, n0, 10, 4, 7, 0, 1.0f, NULL);
    {   /* a 10-byte field for n = 64 */
        uint16_t pl = 10;
        memcpy(fr[5] + 32, &pl, 2);
        memset(fr[5] + 64, 0, 10);
        len[5] = 74;
    }
    len[6] = dsb_pipe_build_solve(fr[6], sizeof fr[6], 70, 0, n0, 10, 4, 7, 0, 1.0f, NULL);
    for (int k = 0; k < NE; k++) frames[k] = fr[k];
    const uint32_t requests = 700;
    uint8_t *answers = cm_calloc(requests, 1);
    uint8_t *log = cm_calloc(requests, LOG_STRIDE);
    dsb_pipe_traffic t;
    memset(&t, 0, sizeof t);
    t.frames = frames;
    t.lens = len;
    t.n_templates = NE;
    t.requests = requests;
    t.answers = answers;
    t.log = log;
    t.log_stride = LOG_STRIDE;
    cm_err err;
    int rc = dsb_pipe_run_traffic(p, &t, &err);
    CHECK(rc == 0, "%s: error traffic failed: %s", what, err.msg);
    uint32_t bad = 0;
    for (uint32_t i = 0; rc == 0 && i < requests; i++) {
        dsb_wire_result r;
        memcpy(&r, log + (size_t)i * LOG_STRIDE, 64);
        const int k = (int)(i % NE);
        uint32_t want_len = k == 0 ? 4u * dsb_words(n0) : 0u;
        if (answers[i] != 1 || r.status != want_status[k] || r.flags != want_reason[k] ||
            r.request_id != i || r.payload_len != want_len) {
            if (bad < 5)
                fprintf(stderr, "%s: error request %u (kind %d): answers %u status %u flags %u len %u\n",
                        what, i, k, answers[i], r.status, r.flags, r.payload_len);
            bad++;
        }
    }
    CHECK(bad == 0, "%s: %u error replies wrong", what, bad);
    free(answers);
    free(log);
}

/* Overfill: long solves and a producer that drops when its slot is busy. */
static void run_overfill(dsb_pipe *p, const char *what, const suite *s)
{
    uint8_t fr[DSB_PIPE_FRAME_SLOT];
    const uint8_t *frames[1] = {fr};
    uint32_t len[1];
    len[0] = dsb_pipe_build_solve(fr, sizeof fr, 0, 0, s->m[0].n, 3000, 8, 11, 0, 1.0f, NULL);
    const uint32_t requests = 200000;
    uint8_t *answers = cm_calloc(requests, 1);
    uint32_t *lat = cm_calloc(requests, sizeof *lat);
    dsb_pipe_traffic t;
    memset(&t, 0, sizeof t);
    t.frames = frames;
    t.lens = len;
    t.n_templates = 1;
    t.requests = requests;
    t.drop_when_full = 1;
    t.answers = answers;
    t.latency_ns = lat;
    cm_err err;
    int rc = dsb_pipe_run_traffic(p, &t, &err);
    CHECK(rc == 0, "%s: overfill traffic failed: %s", what, err.msg);
    if (rc) goto out;
    CHECK(t.dropped > 0, "%s: the overfilled ring dropped nothing", what);
    CHECK(t.published >= DSB_PIPE_RING, "%s: only %" PRIu64 " published", what, t.published);
    CHECK_EQ_I64(t.published + t.dropped, requests, "sent = published + dropped");
    CHECK_EQ_I64(t.answered, t.published, "answered = published");
    uint64_t sum = 0, multi = 0, lat_bad = 0;
    for (uint32_t i = 0; i < requests; i++) {
        sum += answers[i];
        if (answers[i] > 1) multi++;
        if ((answers[i] == 1) != (lat[i] != 0)) lat_bad++;
    }
    CHECK_EQ_I64(sum, t.answered, "replies counted per request");
    CHECK_EQ_I64(multi, 0, "requests answered more than once");
    CHECK_EQ_I64(lat_bad, 0, "latency recorded exactly for the answered requests");
    CHECK_EQ_I64(requests, sum + t.dropped, "sent = answered + dropped");
    printf("%s: overfill: %u sent, %" PRIu64 " answered, %" PRIu64 " dropped\n", what, requests,
           t.answered, t.dropped);
out:
    free(answers);
    free(lat);
}

static int g_sums = DSB_GPU_SUMS_AUTO;

static void run_placement(dsb_pipe_placement pl, const suite *s, uint32_t requests)
{
    const char *what = dsb_pipe_placement_name(pl);
    dsb_pipe_config c;
    dsb_pipe_config_default(&c);
    c.placement = pl;
    c.sums = g_sums;
    dsb_pipe *p;
    cm_err err;
    if (dsb_pipe_create(&c, &p, &err)) {
        CHECK(0, "%s: create: %s", what, err.msg);
        return;
    }
    printf("%s: %s, %u SMs x %u blocks, N_w = %u\n", what, dsb_pipe_device_name(p), dsb_pipe_sms(p),
           dsb_pipe_blocks_per_sm(p), dsb_pipe_workers(p));
    CHECK(dsb_pipe_workers(p) + 1 == dsb_pipe_sms(p) * dsb_pipe_blocks_per_sm(p),
          "%s: N_w = %u, expected the resident slots minus one", what, dsb_pipe_workers(p));
    int ok = 1;
    for (uint16_t i = 0; i < N_MODELS && ok; i++) {
        ok = dsb_pipe_set_model(p, i, &s->m[i], 1, &err) == 0;
        CHECK(ok, "%s: set_model %u: %s", what, i, err.msg);
    }
    CHECK_EQ_I64(dsb_pipe_max_replicas(p, 0), 64, "largest B for n = 64");
    CHECK_EQ_I64(dsb_pipe_max_replicas(p, 9), 0, "empty slot");
    if (ok && dsb_pipe_start(p, &err) == 0) {
        CHECK(dsb_pipe_set_model(p, 0, &s->m[0], 1, &err) == -1, "%s: set_model while running", what);
        dsb_pipe_stats st;
        if (run_mixed(p, what, s, requests)) { /* a stuck pipeline: no point going on */
            dsb_pipe_stop(p, &st, &err);
            dsb_pipe_destroy(p);
            return;
        }
        run_errors(p, what, s); /* continues from the ring position the mixed run left */
        CHECK(dsb_pipe_stop(p, &st, &err) == 0, "%s: stop: %s", what, err.msg);
        CHECK_EQ_I64(st.workers_seen, dsb_pipe_workers(p), "workers that exited");
        CHECK_EQ_I64(st.served, (uint64_t)requests + 700, "replies counted by the workers");
        CHECK_EQ_I64(st.errors, 600, "error replies counted by the workers");
        /* restart: a fresh ring */
        CHECK(dsb_pipe_start(p, &err) == 0, "%s: restart: %s", what, err.msg);
        run_overfill(p, what, s);
        CHECK(dsb_pipe_stop(p, &st, &err) == 0, "%s: stop: %s", what, err.msg);
    } else {
        CHECK(0, "%s: start: %s", what, err.msg);
    }
    dsb_pipe_destroy(p);
}

int main(int argc, char **argv)
{
    uint32_t requests = 1000000;
    setvbuf(stdout, NULL, _IOLBF, 0); /* lines survive a kill by timeout */
    if (argc > 1) {
        char *end;
        unsigned long v = strtoul(argv[1], &end, 10);
        if (*end || v < 1000 || v > 100000000) {
            fprintf(stderr, "usage: test_pipeline_gpu [requests >= 1000], got '%s'\n", argv[1]);
            return 2;
        }
        requests = (uint32_t)v;
    }
    if (argc > 2 && (g_sums = dsb_gpu_sums_parse(argv[2])) < 0) {
        fprintf(stderr, "usage: test_pipeline_gpu [requests [auto|cuda|tensor]], got '%s'\n",
                argv[2]);
        return 2;
    }
    printf("coupling sums: %s\n", dsb_gpu_sums_name(g_sums));
    { /* without a built pipeline or a device there is nothing to test: skip (77) */
        dsb_pipe_config c;
        dsb_pipe_config_default(&c);
        dsb_pipe *p;
        cm_err err;
        if (dsb_pipe_create(&c, &p, &err)) {
            if (strstr(err.msg, "not built") || strstr(err.msg, "no usable CUDA device")) {
                printf("skipped: %s\n", err.msg);
                return 77;
            }
        } else {
            dsb_pipe_destroy(p);
        }
    }
    suite s;
    suite_make(&s);
    run_placement(DSB_PIPE_GPU, &s, requests);
    run_placement(DSB_PIPE_HOST, &s, requests);
    for (int i = 0; i < N_MODELS; i++) dsb_model_free(&s.m[i]);
    for (int j = 0; j < N_TEMPL; j++) {
        free(s.h[j]);
        free(s.frame[j]);
    }
    return check_done();
}
