/* The service end to end over UDP on 127.0.0.1 (in-process server, cpu
 * dispatcher): every message type, lossy uploads, error statuses, malformed
 * frames counted by reason while the server keeps answering, a model
 * replaced while requests are in flight (each reply from exactly one
 * generation), and open-loop overload where every request is accounted for. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../check.h"
#include "common/bench.h"
#include "dsb/client.h"
#include "dsb/instances.h"
#include "dsb/service.h"
#include "dsb/solve.h"

static uint64_t g_max_wait_ns; /* cpu dispatcher wait bound for the next server */
/* The dispatcher under test: cpu here; the GPU test runs the same suite with
 * DSB_TEST_DISPATCH=launch, proxy or gpu (tests/dsb_service/CMakeLists.txt). */
static const char *g_dispatch = "cpu";

/* The GPU agents publish their counters at most every 0.5 ms. */
static void server_counters(dsb_server *s, dsb_counters *k)
{
    if (strcmp(g_dispatch, "cpu") != 0) {
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
    dsb_server_counters(s, k);
}

static dsb_server *start_server(uint32_t workers, uint32_t queue, uint32_t max_steps)
{
    dsb_server_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.transport.kind = "udp";
    cfg.transport.bind_addr = "127.0.0.1";
    cfg.transport.bind_port = 0;
    cfg.dispatch = g_dispatch;
    cfg.cpu.workers = workers;
    cfg.cpu.queue_cap = queue;
    cfg.cpu.max_steps = max_steps;
    cfg.launch.max_steps = cfg.proxy.max_steps = max_steps;
    cfg.launch.queue_cap = cfg.proxy.queue_cap = queue;
    dsb_resident_config_default(&cfg.gpu);
    cfg.gpu.pipe.max_steps = max_steps;
    cfg.cpu.max_wait_ns = g_max_wait_ns;
    dsb_server *s;
    cm_err err;
    if (dsb_server_create(&cfg, &s, &err) || dsb_server_start_thread(s, &err)) {
        fprintf(stderr, "server: %s\n", err.msg);
        /* a GPU dispatcher without a device (or a build without CUDA): skip */
        if (strstr(err.msg, "no usable CUDA device") || strstr(err.msg, "not built")) exit(77);
        exit(1);
    }
    return s;
}

static dsb_client *open_client(dsb_server *s)
{
    dsb_transport_config tc;
    memset(&tc, 0, sizeof tc);
    tc.kind = "udp";
    tc.peer_addr = "127.0.0.1";
    tc.peer_port = dsb_server_port(s);
    dsb_client *c;
    cm_err err;
    if (dsb_client_open(&tc, &c, &err)) {
        fprintf(stderr, "client: %s\n", err.msg);
        exit(1);
    }
    return c;
}

static void make_model(const char *spec, dsb_format f, dsb_model *m, dsb_instance *in)
{
    cm_err err;
    if (dsb_gen_parse(spec, in, &err) || dsb_model_pack(in->J, in->n, f, m, &err)) {
        fprintf(stderr, "model %s: %s\n", spec, err.msg);
        exit(1);
    }
}

static void send_raw(dsb_client *c, const uint8_t *buf, size_t len)
{
    dsb_transport *t = dsb_client_transport(c);
    dsb_frame f = {.data = (uint8_t *)buf, .cap = (uint32_t)len, .len = (uint32_t)len,
                   .peer = t->default_peer};
    CHECK(t->send(t, &f, 1) == 1, "raw send");
}

/* Receives RESULT frames until `want` arrived or timeout; stores by request id. */
typedef struct {
    int have;
    dsb_wire_result hdr;
    uint32_t spins[64];
    double t;
} got_t;

static int collect(dsb_client *c, got_t *got, uint32_t idmax, int want, double timeout)
{
    dsb_transport *t = dsb_client_transport(c);
    dsb_frame *fr = dsb_frames_alloc(DSB_TRANSPORT_BATCH);
    int have = 0;
    double end = bench_now_s() + timeout;
    cm_err err;
    while (have < want && bench_now_s() < end) {
        int n = t->recv(t, fr, DSB_TRANSPORT_BATCH, 20000000, &err);
        for (int i = 0; i < n; i++) {
            dsb_wire_msg m;
            if (dsb_wire_decode(fr[i].data, fr[i].len, 0, &m) != DSB_WR_NONE) continue;
            if (m.u.hdr.type != DSB_MSG_RESULT) continue;
            uint32_t id = m.u.hdr.request_id;
            if (id >= idmax || got[id].have) continue;
            got[id].have = 1;
            got[id].hdr = m.u.result;
            memcpy(got[id].spins, m.payload, m.payload_len);
            got[id].t = bench_now_s();
            have++;
        }
    }
    dsb_frames_free(fr, DSB_TRANSPORT_BATCH);
    return have;
}

static void test_basic(void)
{
    dsb_server *s = start_server(2, 64, 10000);
    dsb_client *c = open_client(s);
    dsb_model m;
    dsb_instance in;
    make_model("portfolio:n=64,seed=1000", DSB_FMT_INT8, &m, &in);
    cm_err err;
    dsb_upload_report up;
    /* lossy, shuffled, duplicated first pass: completes on the retransmission */
    dsb_upload_opts uo = {.drop_every = 2, .shuffle = 1, .duplicate = 1, .ack_timeout_s = 0.1};
    CHECK(dsb_client_upload(c, &m, 2, 7, &uo, &up, &err) == 0, "upload: %s", err.msg);
    CHECK(up.generation == 7 && up.passes == 2, "generation %u after %u passes", up.generation,
          up.passes);
    /* the same generation again: re-acknowledged at once */
    CHECK(dsb_client_upload(c, &m, 2, 7, NULL, &up, &err) == 0 && up.passes == 1, "re-upload");
    dsb_counters k;
    server_counters(s, &k);
    CHECK(k.c[DSB_C_LOAD_COMPLETED] == 1, "one completion (%llu)",
          (unsigned long long)k.c[DSB_C_LOAD_COMPLETED]);
    CHECK(k.c[DSB_C_LOAD_DUPLICATES] > 0 && k.c[DSB_C_LOAD_REACKS] > 0, "dups %llu reacks %llu",
          (unsigned long long)k.c[DSB_C_LOAD_DUPLICATES],
          (unsigned long long)k.c[DSB_C_LOAD_REACKS]);
    /* a stale generation is refused with a clear status */
    CHECK(dsb_client_upload(c, &m, 2, 3, NULL, &up, &err) != 0 && strstr(err.msg, "stale"),
          "stale upload refused: %s", err.msg);

    /* SOLVE -> RESULT, bit-exact with the local reference */
    dsb_req_params rp = {.model_id = 2, .n = 64, .steps = 60, .replicas = 4, .dt = 1.0f};
    for (uint32_t i = 0; i < 3; i++) {
        const int16_t *h = in.fields + (size_t)i * 64;
        dsb_reply r;
        CHECK(dsb_client_solve(c, &rp, 100 + i, 7919 + i, h, 5.0, &r, &err) == 0, "solve: %s",
              err.msg);
        dsb_params p;
        dsb_params_default(&p);
        p.replicas = 4;
        p.steps = 60;
        p.seed = 7919 + i;
        dsb_result ref;
        dsb_result_init(&ref, 64, 4, 0);
        dsb_solve_cpu(&m, h, &p, 1, &ref, &err);
        CHECK(r.hdr.status == DSB_ST_OK && r.hdr.generation == 7 && r.hdr.request_id == 100 + i,
              "reply header");
        CHECK(r.hdr.energy2 == ref.best_energy2 && r.hdr.best_replica == ref.best_replica &&
                  !memcmp(r.spins, ref.best_spins, 8),
              "reply %u differs from the reference", i);
        CHECK(dsb_energy2(&m, h, r.spins) == r.hdr.energy2, "energy of the returned spins");
        CHECK(r.hdr.t_solve_ns > 0, "solve time stamped");
        dsb_result_free(&ref);
    }
    /* error statuses */
    dsb_reply r;
    dsb_req_params bad = rp;
    bad.model_id = 9;
    CHECK(dsb_client_solve(c, &bad, 1, 1, NULL, 5.0, &r, &err) == 0 &&
              r.hdr.status == DSB_ST_UNKNOWN_MODEL,
          "unknown model -> %s", dsb_wire_status_name(r.hdr.status));
    bad = rp;
    bad.n = 65;
    CHECK(dsb_client_solve(c, &bad, 2, 1, NULL, 5.0, &r, &err) == 0 &&
              r.hdr.status == DSB_ST_WRONG_N,
          "wrong n -> %s", dsb_wire_status_name(r.hdr.status));
    bad = rp;
    bad.steps = 20000;
    CHECK(dsb_client_solve(c, &bad, 3, 1, NULL, 5.0, &r, &err) == 0 &&
              r.hdr.status == DSB_ST_TOO_LARGE,
          "K over the limit -> %s", dsb_wire_status_name(r.hdr.status));
    bad = rp;
    bad.generation = 6;
    CHECK(dsb_client_solve(c, &bad, 4, 1, NULL, 5.0, &r, &err) == 0 &&
              r.hdr.status == DSB_ST_WRONG_GENERATION,
          "wrong generation -> %s", dsb_wire_status_name(r.hdr.status));

    /* malformed frames, one per kind: counted by reason, answered when the
     * header can be trusted, and the server keeps serving */
    uint8_t good[DSB_WIRE_MAX_FRAME], b[DSB_WIRE_MAX_FRAME + 16], lf[DSB_WIRE_MAX_FRAME];
    size_t gl = dsb_wire_build_solve(good, sizeof good, NULL, NULL, 2, 0, 64, 0, 60, 4, 1, 0.0f,
                                     1.0f, in.fields);
    size_t ll = dsb_wire_build_load(lf, sizeof lf, NULL, NULL, 5, 0, m.format, m.n, 1,
                                    m.xi_default, m.packed, (uint32_t)m.packed_bytes, 0);
    server_counters(s, &k);
    dsb_counters before = k;
    struct {
        dsb_wire_reason want;
        int load;
    } cases[40];
    int nc = 0;
    uint32_t u;
    float f;
    uint32_t next_id = 1000;
#define SEND_MAL(base, blen, is_load, why, mutate)                                              \
    do {                                                                                        \
        size_t len = blen;                                                                      \
        memcpy(b, base, blen);                                                                  \
        u = next_id++;                                                                          \
        memcpy(b + 20, &u, 4);                                                                  \
        mutate;                                                                                 \
        send_raw(c, b, len);                                                                    \
        cases[nc].want = why;                                                                   \
        cases[nc].load = is_load;                                                               \
        nc++;                                                                                   \
    } while (0)
    SEND_MAL(good, gl, 0, DSB_WR_TRUNCATED, len = 40);
    SEND_MAL(good, gl, 0, DSB_WR_OVERSIZE, len = DSB_WIRE_MAX_FRAME + 10);
    SEND_MAL(good, gl, 0, DSB_WR_BAD_ETHERTYPE, b[12] = 0x08);
    SEND_MAL(good, gl, 0, DSB_WR_BAD_VERSION, b[15] = 7);
    SEND_MAL(good, gl, 0, DSB_WR_BAD_TYPE, b[14] = DSB_MSG_LOAD_ACK);
    SEND_MAL(good, gl, 0, DSB_WR_LENGTH_MISMATCH, len = gl - 6);
    SEND_MAL(good, gl, 0, DSB_WR_BAD_STATUS, b[16] = 3);
    SEND_MAL(good, gl, 0, DSB_WR_BAD_FLAGS, b[35] = 0x40);
    SEND_MAL(good, gl, 0, DSB_WR_RESERVED_NONZERO, b[45] = 1);
    SEND_MAL(good, gl, 0, DSB_WR_BAD_MODEL_ID, b[18] = 200);
    SEND_MAL(good, gl, 0, DSB_WR_BAD_N, (u = 5000, memcpy(b + 24, &u, 4)));
    SEND_MAL(good, gl, 0, DSB_WR_FORMAT_IN_SOLVE, b[34] = 1);
    SEND_MAL(good, gl, 0, DSB_WR_BAD_K, memset(b + 36, 0, 4));
    SEND_MAL(good, gl, 0, DSB_WR_BAD_B, memset(b + 40, 0, 4));
    SEND_MAL(good, gl, 0, DSB_WR_BAD_XI, (f = -2.0f, memcpy(b + 56, &f, 4)));
    SEND_MAL(good, gl, 0, DSB_WR_BAD_DT, (f = -1.0f, memcpy(b + 60, &f, 4)));
    SEND_MAL(good, gl, 0, DSB_WR_BAD_FIELD_LEN, (u = 63, memcpy(b + 24, &u, 4)));
    SEND_MAL(good, gl, 0, DSB_WR_BAD_FIELD_VALUE, (b[64] = 0x00, b[65] = 0x80));
    SEND_MAL(good, gl, 0, DSB_WR_UNKNOWN_MODEL, b[18] = 11);
    SEND_MAL(good, gl, 0, DSB_WR_WRONG_N, (u = 64, memcpy(b + 24, &u, 4), len = 64,
                                           b[32] = 0, b[33] = 0, u = 60, memcpy(b + 24, &u, 4)));
    SEND_MAL(good, gl, 0, DSB_WR_WRONG_GENERATION, (u = 99, memcpy(b + 28, &u, 4)));
    SEND_MAL(good, gl, 0, DSB_WR_TOO_LARGE, (u = 50000, memcpy(b + 36, &u, 4)));
    SEND_MAL(lf, ll, 1, DSB_WR_BAD_FORMAT, b[34] = 9);
    SEND_MAL(lf, ll, 1, DSB_WR_ZERO_GENERATION, memset(b + 28, 0, 4));
    SEND_MAL(lf, ll, 1, DSB_WR_BAD_TOTAL, b[40] ^= 4);
    SEND_MAL(lf, ll, 1, DSB_WR_BAD_FRAG_COUNT, b[46] = 77);
    SEND_MAL(lf, ll, 1, DSB_WR_BAD_FRAG_INDEX, b[44] = 50);
    SEND_MAL(lf, ll, 1, DSB_WR_BAD_OFFSET, b[36] = 8);
    SEND_MAL(lf, ll, 1, DSB_WR_BAD_FRAG_LEN, (len = ll - 8, b[32] = (uint8_t)(ll - 8 - 64),
                                              b[33] = (uint8_t)((ll - 8 - 64) >> 8)));
    SEND_MAL(lf, ll, 1, DSB_WR_BAD_XI, (f = INFINITY, memcpy(b + 48, &f, 4)));
    SEND_MAL(lf, ll, 1, DSB_WR_STALE_GENERATION, (b[18] = 2, u = 1, memcpy(b + 28, &u, 4)));
    /* after all that, a valid request is still answered */
    dsb_reply after;
    CHECK(dsb_client_solve(c, &rp, 5000, 7919, in.fields, 5.0, &after, &err) == 0 &&
              after.hdr.status == DSB_ST_OK,
          "server still answers after malformed frames: %s", err.msg);
    server_counters(s, &k);
    int kinds = 0;
    for (int i = 0; i < nc; i++) {
        uint64_t want = 0;
        for (int j = 0; j < nc; j++) want += cases[j].want == cases[i].want;
        uint64_t d = k.bad[cases[i].want] - before.bad[cases[i].want];
        CHECK(d == want, "reason %s counted %llu times, sent %llu",
              dsb_wire_reason_name(cases[i].want), (unsigned long long)d,
              (unsigned long long)want);
        int first = 1;
        for (int j = 0; j < i; j++) first &= cases[j].want != cases[i].want;
        kinds += first;
    }
    CHECK(kinds >= 20, "%d distinct malformed kinds", kinds);
    uint64_t unanswerable = 0;
    for (int i = 0; i < nc; i++) unanswerable += !dsb_wire_reason_answerable(cases[i].want);
    CHECK(k.c[DSB_C_UNANSWERED] - before.c[DSB_C_UNANSWERED] == unanswerable,
          "unanswered %llu, expected %llu",
          (unsigned long long)(k.c[DSB_C_UNANSWERED] - before.c[DSB_C_UNANSWERED]),
          (unsigned long long)unanswerable);
    dsb_client_close(c);
    dsb_server_destroy(s);
    dsb_model_free(&m);
    dsb_instance_free(&in);
}

/* Generation 100 (model A) serves a batch of slow requests; generation 101
 * (model B, same n) is uploaded by another client while they are queued; a
 * second batch follows.  Every reply must be consistent with exactly the
 * generation it names; replies after the ack name 101. */
static void test_replace_in_flight(void)
{
    dsb_server *s = start_server(2, 4096, 100000);
    dsb_client *c = open_client(s), *up = open_client(s);
    dsb_model a, b;
    dsb_instance ia, ib;
    make_model("portfolio:n=64,seed=1000", DSB_FMT_INT8, &a, &ia);
    make_model("sk:n=64,seed=1001", DSB_FMT_INT8, &b, &ib);
    cm_err err;
    dsb_upload_report ur;
    CHECK(dsb_client_upload(up, &a, 1, 100, NULL, &ur, &err) == 0, "upload A: %s", err.msg);
    enum { N1 = 40, N2 = 40 };
    got_t *got = calloc(N1 + N2, sizeof *got);
    uint8_t buf[DSB_WIRE_MAX_FRAME];
    const int16_t *h = ia.fields;
    for (uint32_t i = 0; i < N1; i++) {
        size_t len = dsb_wire_build_solve(buf, sizeof buf, NULL, NULL, 1, i, 64, 0, 1500, 8,
                                          7919 + i, 0.0f, 1.0f, h);
        send_raw(c, buf, len);
    }
    CHECK(dsb_client_upload(up, &b, 1, 101, NULL, &ur, &err) == 0, "upload B: %s", err.msg);
    double t_ack = bench_now_s();
    for (uint32_t i = N1; i < N1 + N2; i++) {
        size_t len = dsb_wire_build_solve(buf, sizeof buf, NULL, NULL, 1, i, 64, 0, 100, 8,
                                          7919 + i, 0.0f, 1.0f, h);
        send_raw(c, buf, len);
    }
    int have = collect(c, got, N1 + N2, N1 + N2, 30.0);
    CHECK(have == N1 + N2, "%d of %d replies", have, N1 + N2);
    int g100_after_ack = 0, n100 = 0, n101 = 0;
    for (uint32_t i = 0; i < N1 + N2; i++) {
        if (!got[i].have) continue;
        uint32_t g = got[i].hdr.generation;
        CHECK(got[i].hdr.status == DSB_ST_OK && (g == 100 || g == 101), "reply %u: status %s gen %u",
              i, dsb_wire_status_name(got[i].hdr.status), g);
        const dsb_model *m = g == 100 ? &a : &b;
        CHECK(dsb_energy2(m, h, got[i].spins) == got[i].hdr.energy2,
              "reply %u: energy inconsistent with generation %u", i, g);
        if (i >= N1) CHECK(g == 101, "request %u sent after the ack got generation %u", i, g);
        n100 += g == 100;
        n101 += g == 101;
        g100_after_ack += g == 100 && got[i].t > t_ack;
    }
    CHECK(n100 > 0 && n101 > 0, "both generations served (%d, %d)", n100, n101);
    CHECK(g100_after_ack > 0, "a generation-100 solve finished after 101 was acknowledged");
    /* full reference check of one reply of each generation */
    for (uint32_t i = 0; i < N1 + N2; i += N1 + N2 - 1) {
        if (!got[i].have) continue;
        const dsb_model *m = got[i].hdr.generation == 100 ? &a : &b;
        dsb_params p;
        dsb_params_default(&p);
        p.replicas = 8;
        p.steps = i < N1 ? 1500 : 100;
        p.seed = 7919 + i;
        dsb_result ref;
        dsb_result_init(&ref, 64, 8, 0);
        dsb_solve_cpu(m, h, &p, 0, &ref, &err);
        CHECK(ref.best_energy2 == got[i].hdr.energy2 && !memcmp(ref.best_spins, got[i].spins, 8),
              "request %u differs from the reference on its generation", i);
        dsb_result_free(&ref);
    }
    free(got);
    dsb_client_close(c);
    dsb_client_close(up);
    dsb_server_destroy(s);
    dsb_model_free(&a);
    dsb_model_free(&b);
    dsb_instance_free(&ia);
    dsb_instance_free(&ib);
}

/* Two different models uploaded to one slot with automatic generations within
 * the same clock second: the second must not be taken for a retransmission of
 * the first (the server refuses other bytes under a complete generation's
 * number, the client moves to the next generation). */
static void test_auto_generation(void)
{
    dsb_server *s = start_server(2, 64, 10000);
    dsb_client *c = open_client(s);
    dsb_model a, b;
    dsb_instance ia, ib;
    make_model("portfolio:n=64,seed=1000", DSB_FMT_INT8, &a, &ia);
    make_model("sk:n=64,seed=1001", DSB_FMT_INT8, &b, &ib);
    cm_err err;
    dsb_upload_report ua, ub;
    CHECK(dsb_client_upload(c, &a, 5, 0, NULL, &ua, &err) == 0, "upload a: %s", err.msg);
    CHECK(dsb_client_upload(c, &b, 5, 0, NULL, &ub, &err) == 0, "upload b: %s", err.msg);
    CHECK(ub.generation > ua.generation, "b got generation %u after a's %u", ub.generation,
          ua.generation);
    dsb_req_params rp = {.model_id = 5, .n = 64, .steps = 30, .replicas = 4, .dt = 1.0f};
    dsb_reply r;
    CHECK(dsb_client_solve(c, &rp, 1, 7919, NULL, 5.0, &r, &err) == 0 &&
              r.hdr.status == DSB_ST_OK && r.hdr.generation == ub.generation &&
              dsb_energy2(&b, NULL, r.spins) == r.hdr.energy2,
          "solve on the second model: %s", err.msg);
    dsb_client_close(c);
    dsb_server_destroy(s);
    dsb_model_free(&a);
    dsb_model_free(&b);
    dsb_instance_free(&ia);
    dsb_instance_free(&ib);
}

/* Open loop at twice the measured capacity with a short queue: every request
 * is answered (OK or OVERLOADED) or its loss is counted by a kernel queue. */
static void test_overload(uint32_t queue, uint64_t max_wait_ns)
{
    g_max_wait_ns = max_wait_ns;
    dsb_server *s = start_server(2, queue, 100000);
    g_max_wait_ns = 0;
    dsb_client *c = open_client(s);
    dsb_model m;
    dsb_instance in;
    make_model("portfolio:n=64,seed=1000", DSB_FMT_INT8, &m, &in);
    cm_err err;
    dsb_upload_report ur;
    CHECK(dsb_client_upload(c, &m, 0, 1, NULL, &ur, &err) == 0, "upload: %s", err.msg);
    dsb_load_config lc;
    memset(&lc, 0, sizeof lc);
    lc.req = (dsb_req_params){.model_id = 0, .n = 64, .steps = 200, .replicas = 8, .dt = 1.0f};
    lc.seed_base = 7919;
    lc.outstanding = 4;
    lc.requests = 300;
    lc.warmup = 20;
    lc.drain_s = 2.0;
    lc.energy_checks = 3000;
    lc.ref_checks = 5;
    lc.fields = in.fields;
    lc.n_fields = in.n_fields;
    dsb_load_report rep;
    CHECK(dsb_client_run(c, &m, &lc, &rep, &err) == 0, "closed loop: %s", err.msg);
    /* (with a tight wait bound on a slow build a few may be refused even here) */
    CHECK(rep.ok + rep.by_status[DSB_ST_OVERLOADED] == 320 && rep.ok > 0 && rep.lost == 0 &&
              rep.energy_mismatch == 0 && rep.ref_mismatch == 0,
          "closed loop: ok %llu lost %llu mismatches %llu/%llu",
          (unsigned long long)rep.ok, (unsigned long long)rep.lost,
          (unsigned long long)rep.energy_mismatch, (unsigned long long)rep.ref_mismatch);
    double cap = rep.achieved_rate;
    CHECK(cap > 10, "capacity %.1f req/s", cap);
    dsb_counters k0, k1;
    dsb_server_counters(s, &k0);
    lc.outstanding = 0;
    lc.rate = 2 * cap;
    lc.warmup = 0;
    lc.requests = (uint64_t)(lc.rate * 1.5) + 50;
    lc.ref_checks = 0;
    lc.energy_checks = 0;
    CHECK(dsb_client_run(c, &m, &lc, &rep, &err) == 0, "open loop: %s", err.msg);
    dsb_server_counters(s, &k1);
    uint64_t rx = k1.c[DSB_C_SOLVE_RX] - k0.c[DSB_C_SOLVE_RX];
    uint64_t ok = k1.c[DSB_C_SOLVE_OK] - k0.c[DSB_C_SOLVE_OK];
    uint64_t ovl = k1.c[DSB_C_OVERLOADED] - k0.c[DSB_C_OVERLOADED];
    uint64_t kdrop = k1.c[DSB_C_KERNEL_DROPS] - k0.c[DSB_C_KERNEL_DROPS];
    printf("overload: capacity %.0f req/s, offered %.0f, sent %llu, ok %llu, overloaded %llu, "
           "lost %llu, server kernel drops %llu, client drops %llu\n",
           cap, lc.rate, (unsigned long long)rep.sent, (unsigned long long)rep.ok,
           (unsigned long long)rep.by_status[DSB_ST_OVERLOADED], (unsigned long long)rep.lost,
           (unsigned long long)kdrop, (unsigned long long)rep.kernel_drops);
    CHECK(rep.sent == lc.requests, "all requests sent");
    CHECK(rep.by_status[DSB_ST_OVERLOADED] > 0, "overload produced OVERLOADED replies");
    CHECK(rep.sent == rep.ok + rep.by_status[DSB_ST_OVERLOADED] + rep.lost,
          "sent %llu != ok %llu + overloaded %llu + lost %llu", (unsigned long long)rep.sent,
          (unsigned long long)rep.ok, (unsigned long long)rep.by_status[DSB_ST_OVERLOADED],
          (unsigned long long)rep.lost);
    CHECK(rx + kdrop == rep.sent, "server saw %llu + dropped %llu of %llu sent",
          (unsigned long long)rx, (unsigned long long)kdrop, (unsigned long long)rep.sent);
    CHECK(rx == ok + ovl, "server: received %llu = ok %llu + overloaded %llu",
          (unsigned long long)rx, (unsigned long long)ok, (unsigned long long)ovl);
    CHECK(rep.lost <= kdrop + rep.kernel_drops, "lost %llu not all counted (%llu + %llu)",
          (unsigned long long)rep.lost, (unsigned long long)kdrop,
          (unsigned long long)rep.kernel_drops);
    CHECK(rep.by_status[DSB_ST_OVERLOADED] == ovl, "client overloaded %llu, server %llu",
          (unsigned long long)rep.by_status[DSB_ST_OVERLOADED], (unsigned long long)ovl);
    if (max_wait_ns) /* the wait bound keeps the queue short: answers within the drain */
        CHECK(rep.lost == 0 && rep.queue_p99 < 20.0 * max_wait_ns * 1e-3,
              "wait bound: lost %llu, queue p99 %.0f us", (unsigned long long)rep.lost,
              rep.queue_p99);
    dsb_client_close(c);
    dsb_server_destroy(s);
    dsb_model_free(&m);
    dsb_instance_free(&in);
}

int main(void)
{
    double t0 = bench_now_s();
    const char *d = getenv("DSB_TEST_DISPATCH");
    if (d && *d) g_dispatch = d;
    test_basic();
    test_replace_in_flight();
    test_auto_generation();
    /* the overload tests size the cpu dispatcher's queue and wait bound; the
       GPU dispatchers' overload accounting is covered by test_dispatch_gpu.sh */
    if (!strcmp(g_dispatch, "cpu")) {
        test_overload(8, 0);            /* short queue: the count bound */
        test_overload(4096, 50000000);  /* the paper's C with a 50 ms wait bound */
    }
    printf("loopback tests took %.1f s\n", bench_now_s() - t0);
    return check_done();
}
