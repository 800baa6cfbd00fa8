/* CPU test of the pipeline's GPU-free parts (runs in CI): placement names,
 * configuration checks with their messages, the SOLVE frame builder against
 * the wire decoder, and a clean refusal (or a working pipeline) from
 * dsb_pipe_create depending on whether a GPU is present. */
#include <string.h>

#include "../check.h"
#include "dsb/pipeline.h"
#include "dsb/wire.h"

static void test_names(void)
{
    dsb_pipe_placement p = DSB_PIPE_HOST;
    CHECK(dsb_pipe_placement_parse("gpu", &p) == 0 && p == DSB_PIPE_GPU, "parse gpu");
    CHECK(dsb_pipe_placement_parse("host", &p) == 0 && p == DSB_PIPE_HOST, "parse host");
    CHECK(dsb_pipe_placement_parse("GPU ", &p) == -1, "reject 'GPU '");
    CHECK(dsb_pipe_placement_parse("", &p) == -1, "reject empty");
    CHECK(dsb_pipe_placement_parse(NULL, &p) == -1, "reject NULL");
    CHECK(!strcmp(dsb_pipe_placement_name(DSB_PIPE_GPU), "gpu"), "name gpu");
    CHECK(!strcmp(dsb_pipe_placement_name(DSB_PIPE_HOST), "host"), "name host");
}

static void expect_bad(const dsb_pipe_config *c, const char *needle)
{
    cm_err err;
    err.msg[0] = 0;
    CHECK(dsb_pipe_config_check(c, &err) == -1, "config accepted, expected rejection (%s)", needle);
    CHECK(strstr(err.msg, needle) != NULL, "message '%s' lacks '%s'", err.msg, needle);
    dsb_pipe *p = (dsb_pipe *)&err; /* must be reset to NULL */
    err.msg[0] = 0;
    CHECK(dsb_pipe_create(c, &p, &err) == -1 && p == NULL, "create accepted a bad config");
    CHECK(strstr(err.msg, needle) != NULL, "create message '%s' lacks '%s'", err.msg, needle);
}

static void test_config(void)
{
    dsb_pipe_config c;
    dsb_pipe_config_default(&c);
    cm_err err;
    CHECK(dsb_pipe_config_check(&c, &err) == 0, "default config rejected: %s", err.msg);
    CHECK(c.smem_bytes == 48u * 1024u && c.reserve == 1 && c.poll_ns == 500000u,
          "defaults: S %u reserve %u poll %u", c.smem_bytes, c.reserve, c.poll_ns);
    dsb_pipe_config b = c;
    b.smem_bytes = 4096;
    expect_bad(&b, "shared memory");
    b = c;
    b.smem_bytes = 48u * 1024u + 8u;
    expect_bad(&b, "multiple of 128");
    b = c;
    b.poll_ns = 600000;
    expect_bad(&b, "0.5 ms");
    b = c;
    b.max_steps = 0;
    expect_bad(&b, "max_steps");
    b = c;
    b.placement = (dsb_pipe_placement)7;
    expect_bad(&b, "placement");
    b = c;
    b.reserve = 65;
    expect_bad(&b, "reserve");
}

static void test_frames(void)
{
    uint8_t f[DSB_PIPE_FRAME_SLOT];
    int16_t h[100];
    for (int i = 0; i < 100; i++) h[i] = (int16_t)(i * 37 - 1800);
    uint32_t len = dsb_pipe_build_solve(f, sizeof f, 5, 1234, 100, 250, 8, 0x1122334455667788ull,
                                        0.25f, 0.5f, h);
    CHECK_EQ_I64(len, 64 + 200, "frame length with field");
    dsb_wire_msg m;
    dsb_wire_reason r = dsb_wire_decode(f, len, 1, &m);
    CHECK(r == DSB_WR_NONE, "decoder rejected the built frame: reason %d", (int)r);
    CHECK(m.u.solve.type == DSB_MSG_SOLVE && m.u.solve.model_id == 5 && m.u.solve.request_id == 1234 &&
              m.u.solve.n == 100 && m.u.solve.steps == 250 && m.u.solve.replicas == 8 &&
              m.u.solve.seed == 0x1122334455667788ull && m.u.solve.xi == 0.25f &&
              m.u.solve.dt == 0.5f && m.payload_len == 200,
          "decoded fields differ");
    CHECK(memcmp(m.payload, h, 200) == 0, "field bytes differ");
    /* the offsets the GPU generator patches: request id at 20, seed at 48 */
    uint32_t id;
    uint64_t seed;
    memcpy(&id, f + 20, 4);
    memcpy(&seed, f + 48, 8);
    CHECK(id == 1234 && seed == 0x1122334455667788ull, "request id / seed offsets");
    len = dsb_pipe_build_solve(f, sizeof f, 0, 1, 64, 10, 1, 1, 0, 1.0f, NULL);
    CHECK_EQ_I64(len, 64, "frame length without field");
    CHECK(dsb_wire_decode(f, len, 1, &m) == DSB_WR_NONE, "decoder rejected the fieldless frame");
    CHECK_EQ_I64(dsb_pipe_build_solve(f, 100, 0, 1, 100, 10, 1, 1, 0, 1.0f, h), 0,
                 "a frame larger than the buffer");
    static int16_t big[800];
    CHECK_EQ_I64(dsb_pipe_build_solve(f, sizeof f, 0, 1, 800, 10, 1, 1, 0, 1.0f, big), 0,
                 "a field larger than one Ethernet frame");
}

static void test_create(void)
{
    dsb_pipe_config c;
    dsb_pipe_config_default(&c);
    dsb_pipe *p = NULL;
    cm_err err;
    err.msg[0] = 0;
    int rc = dsb_pipe_create(&c, &p, &err);
    if (rc == 0) {
        /* a GPU is present: the pipeline has workers */
        CHECK(p != NULL && dsb_pipe_workers(p) > 0, "created without workers");
        dsb_pipe_destroy(p);
    } else {
        CHECK(rc == -1 && p == NULL && err.msg[0] != 0, "refusal without a message");
        printf("no GPU pipeline here: %s\n", err.msg);
    }
}

int main(void)
{
    test_names();
    test_config();
    test_frames();
    test_create();
    return check_done();
}
