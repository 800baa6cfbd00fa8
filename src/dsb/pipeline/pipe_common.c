/* The parts of the pipeline API that need no GPU (built with and without
 * CUDA): names, configuration defaults and checks, the SOLVE frame builder. */
#include <string.h>

#include "dsb/gpu.h"
#include "dsb/pipeline.h"
#include "dsb/resident.h"
#include "dsb/wire.h"

const char *dsb_pipe_placement_name(dsb_pipe_placement p)
{
    return p == DSB_PIPE_HOST ? "host" : "gpu";
}

int dsb_pipe_placement_parse(const char *s, dsb_pipe_placement *out)
{
    if (!s) return -1;
    if (!strcmp(s, "gpu")) *out = DSB_PIPE_GPU;
    else if (!strcmp(s, "host")) *out = DSB_PIPE_HOST;
    else return -1;
    return 0;
}

void dsb_pipe_config_default(dsb_pipe_config *c)
{
    memset(c, 0, sizeof *c);
    c->placement = DSB_PIPE_GPU;
    c->smem_bytes = DSB_PIPE_DEFAULT_SMEM;
    c->reserve = 1;
    c->max_workers = 0;
    c->poll_ns = 500000;
    c->max_steps = 100000;
}

/* Checks a configuration without touching the GPU. */
int dsb_pipe_config_check(const dsb_pipe_config *c, cm_err *err)
{
    if (c->placement != DSB_PIPE_GPU && c->placement != DSB_PIPE_HOST)
        return cm_fail(err, "dsb pipeline: placement %d: expected gpu (0) or host (1)",
                       (int)c->placement);
    if (c->smem_bytes < 8192u || c->smem_bytes > 227u * 1024u || c->smem_bytes % 128u)
        return cm_fail(err,
                       "dsb pipeline: shared memory per worker %u bytes: expected a multiple of "
                       "128 in [8192, 232448]",
                       c->smem_bytes);
    if (c->poll_ns < 1000u || c->poll_ns > 500000u)
        return cm_fail(err,
                       "dsb pipeline: flag poll interval %u ns: expected 1000 .. 500000 (the host "
                       "flags may be read at most every 0.5 ms)",
                       c->poll_ns);
    if (c->max_steps == 0)
        return cm_fail(err, "dsb pipeline: max_steps 0: expected at least 1");
    if (c->sums < 0 || c->sums >= DSB_GPU_SUMS_COUNT)
        return cm_fail(err, "dsb pipeline: coupling sums %d: expected auto (0), cuda (1) or "
                            "tensor (2)",
                       c->sums);
    if (c->reserve > 64u)
        return cm_fail(err, "dsb pipeline: reserve %u block slots: expected at most 64",
                       c->reserve);
    return 0;
}

uint32_t dsb_pipe_build_solve(uint8_t *out, size_t cap, uint16_t model_id, uint32_t request_id,
                              uint32_t n, uint32_t steps, uint32_t replicas, uint64_t seed,
                              float xi, float dt, const int16_t *h)
{
    /* generation 0: the slot's current one */
    return (uint32_t)dsb_wire_build_solve(out, cap, NULL, NULL, model_id, request_id, n, 0, steps,
                                          replicas, seed, xi, dt, h);
}


/* ---- the GPU-resident server core: configuration (include/dsb/resident.h) -- */

void dsb_resident_config_default(dsb_resident_config *c)
{
    memset(c, 0, sizeof *c);
    dsb_pipe_config_default(&c->pipe);
    c->pipe.reserve = 2;
    c->tx_batch = DSB_NIC_TX_BATCH;
}

int dsb_resident_config_check(const dsb_resident_config *c, cm_err *err)
{
    if (c->tx_batch < 1u || c->tx_batch > DSB_NIC_TX_BATCH)
        return cm_fail(err, "dsb resident: transmit batch %u: expected 1 .. %u", c->tx_batch,
                       DSB_NIC_TX_BATCH);
    dsb_pipe_config pc = c->pipe;
    pc.placement = DSB_PIPE_GPU;
    return dsb_pipe_config_check(&pc, err);
}
