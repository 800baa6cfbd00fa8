/* Built when CUDA is absent: every pipeline entry point that needs the GPU
 * reports that the pipeline was not built (names, configuration checks and
 * the frame builder are in pipe_common.c). */
#include <stddef.h>
#include <string.h>

#include "dsb/pipeline.h"
#include "dsb/resident.h"

#define NOT_BUILT "dsb pipeline: not built (nvcc was not found at configure time)"

int dsb_pipe_create(const dsb_pipe_config *c, dsb_pipe **out, cm_err *err)
{
    *out = NULL;
    if (dsb_pipe_config_check(c, err)) return -1;
    return cm_fail(err, NOT_BUILT);
}
void dsb_pipe_destroy(dsb_pipe *p) { (void)p; }
uint32_t dsb_pipe_workers(const dsb_pipe *p) { (void)p; return 0; }
uint32_t dsb_pipe_blocks_per_sm(const dsb_pipe *p) { (void)p; return 0; }
uint32_t dsb_pipe_sms(const dsb_pipe *p) { (void)p; return 0; }
const char *dsb_pipe_device_name(const dsb_pipe *p) { (void)p; return "none"; }
void dsb_pipe_worker_regs(const dsb_pipe *p, int *regs, int *local_bytes)
{
    (void)p;
    *regs = *local_bytes = -1;
}
int dsb_pipe_set_model(dsb_pipe *p, uint16_t id, const dsb_model *m, uint32_t generation,
                       cm_err *err)
{
    (void)p, (void)id, (void)m, (void)generation;
    return cm_fail(err, NOT_BUILT);
}
uint32_t dsb_pipe_max_replicas(const dsb_pipe *p, uint16_t id) { (void)p, (void)id; return 0; }
int dsb_pipe_start(dsb_pipe *p, cm_err *err) { (void)p; return cm_fail(err, NOT_BUILT); }
int dsb_pipe_stop(dsb_pipe *p, dsb_pipe_stats *st, cm_err *err)
{
    (void)p, (void)st;
    return cm_fail(err, NOT_BUILT);
}
int dsb_pipe_publish(dsb_pipe *p, const void *frame, uint32_t len, uint64_t t_recv_ns,
                     cm_err *err)
{
    (void)p, (void)frame, (void)len, (void)t_recv_ns;
    return cm_fail(err, NOT_BUILT);
}
uint8_t *dsb_pipe_next_frame(dsb_pipe *p) { (void)p; return NULL; }
void dsb_pipe_commit(dsb_pipe *p, uint32_t len, uint64_t t_recv_ns)
{
    (void)p, (void)len, (void)t_recv_ns;
}
void dsb_pipe_count_drop(dsb_pipe *p) { (void)p; }
uint64_t dsb_pipe_published(const dsb_pipe *p) { (void)p; return 0; }
uint64_t dsb_pipe_dropped(const dsb_pipe *p) { (void)p; return 0; }
uint32_t dsb_pipe_drain(dsb_pipe *p, dsb_pipe_reply_fn fn, void *ctx, uint32_t max)
{
    (void)p, (void)fn, (void)ctx, (void)max;
    return 0;
}
int dsb_pipe_run_traffic(dsb_pipe *p, dsb_pipe_traffic *t, cm_err *err)
{
    (void)p, (void)t;
    return cm_fail(err, NOT_BUILT);
}

/* the GPU-resident server core */
int dsb_resident_create(const dsb_resident_config *c, dsb_nic_queues **queues,
                        dsb_resident **out, cm_err *err)
{
    (void)queues;
    *out = NULL;
    if (dsb_resident_config_check(c, err)) return -1;
    return cm_fail(err, "dsb resident: not built (nvcc was not found at configure time)");
}
int dsb_resident_start(dsb_resident *r, cm_err *err)
{
    (void)r;
    return cm_fail(err, NOT_BUILT);
}
uint32_t dsb_resident_workers(const dsb_resident *r) { (void)r; return 0; }
void dsb_resident_counts(dsb_resident *r, dsb_res_counts *out)
{
    (void)r;
    memset(out, 0, sizeof *out);
}
uint64_t dsb_resident_published(dsb_resident *r)
{
    (void)r;
    return 0;
}
int dsb_resident_stop(dsb_resident *r, uint64_t *abandoned, cm_err *err)
{
    (void)r, (void)err;
    if (abandoned) *abandoned = 0;
    return 0;
}
void dsb_resident_destroy(dsb_resident *r) { (void)r; }
