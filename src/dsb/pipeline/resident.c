/* The GPU-resident server core, host side (include/dsb/resident.h): allocates
 * the GPU model store and the NIC queues, launches the persistent workers and
 * then the agents, and reads the agents' counters.  Nothing here touches a
 * request. */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "dsb/resident.h"
#include "resident_dev.h"

struct dsb_resident {
    dsb_resident_config cfg;
    dsb_pipe *pipe;
    dsb_res_dev d;
    dsb_nic_queues *q_host;
    dsb_res_counts *counts_host;      /* [2], host-mapped */
    unsigned long long *progress_host; /* host-mapped: work items published */
    cudaStream_t s_agents;
    int started, running;
};

static int cu_fail(cm_err *err, const char *what, int e)
{
    return cm_fail(err, "dsb resident: %s: %s", what, cudaGetErrorString((cudaError_t)e));
}

static void *mapped(size_t bytes, void **dev, int *e)
{
    void *h = NULL;
    if ((*e = (int)cudaHostAlloc(&h, bytes, cudaHostAllocMapped))) return NULL;
    memset(h, 0, bytes);
    if ((*e = (int)cudaHostGetDevicePointer(dev, h, 0))) {
        cudaFreeHost(h);
        return NULL;
    }
    return h;
}

int dsb_resident_create(const dsb_resident_config *c, dsb_nic_queues **queues,
                        dsb_resident **out, cm_err *err)
{
    *out = NULL;
    if (dsb_resident_config_check(c, err)) return -1;
    dsb_resident *r = calloc(1, sizeof *r);
    if (!r) return cm_fail(err, "dsb resident: out of memory");
    r->cfg = *c;
    dsb_pipe_config pc = c->pipe;
    pc.placement = DSB_PIPE_GPU;
    if (pc.reserve < 2u) pc.reserve = 2u; /* the two agent blocks */
    if (dsb_pipe_create(&pc, &r->pipe, err)) {
        free(r);
        return -1;
    }
    dsb_pipe_dev_args(r->pipe, &r->d.pipe);
    r->d.models = (dsb_pipe_model_dev *)r->d.pipe.models;
    r->d.layouts = (dsb_pipe_layout_dev *)r->d.pipe.layouts;
    r->d.tx_batch = c->tx_batch;
    int e = 0;
    const size_t img = (size_t)DSB_PIPE_MODEL_ENTRIES * DSB_RES_IMAGE_BYTES;
    if ((e = (int)cudaMalloc((void **)&r->d.images, img)) ||
        (e = (int)cudaMemset(r->d.images, 0, img)) ||
        (e = (int)cudaMalloc((void **)&r->d.slots, DSB_PIPE_MODELS * sizeof(dsb_res_slot))) ||
        (e = (int)cudaMemset(r->d.slots, 0, DSB_PIPE_MODELS * sizeof(dsb_res_slot)))) {
        dsb_resident_destroy(r);
        return cu_fail(err, "GPU model store (64 MiB)", e);
    }
    void *dv = NULL;
    if (!(r->q_host = mapped(sizeof(dsb_nic_queues), &dv, &e))) {
        dsb_resident_destroy(r);
        return cu_fail(err, "NIC queues (host-mapped)", e);
    }
    r->d.nic = dv;
    if (!(r->counts_host = mapped(2 * sizeof(dsb_res_counts), &dv, &e))) {
        dsb_resident_destroy(r);
        return cu_fail(err, "agent counters (host-mapped)", e);
    }
    r->d.counts = dv;
    if (!(r->progress_host = mapped(64, &dv, &e))) {
        dsb_resident_destroy(r);
        return cu_fail(err, "published count (host-mapped)", e);
    }
    r->d.published = dv;
    if ((e = (int)cudaStreamCreateWithFlags(&r->s_agents, cudaStreamNonBlocking)) ||
        (e = dsb_res_k_prepare())) {
        dsb_resident_destroy(r);
        return cu_fail(err, "agent stream / module", e);
    }
    *queues = r->q_host;
    *out = r;
    return 0;
}

int dsb_resident_start(dsb_resident *r, cm_err *err)
{
    if (r->started) return cm_fail(err, "dsb resident: starts once per create");
    if (dsb_pipe_start(r->pipe, err)) return -1;
    int e = dsb_res_k_launch_agents(&r->d, r->s_agents);
    if (e) {
        dsb_pipe_stop(r->pipe, NULL, NULL);
        return cu_fail(err, "agent launch", e);
    }
    r->started = r->running = 1;
    return 0;
}

uint32_t dsb_resident_workers(const dsb_resident *r) { return dsb_pipe_workers(r->pipe); }

void dsb_resident_counts(dsb_resident *r, dsb_res_counts *out)
{
    const volatile uint64_t *a = (const volatile uint64_t *)&r->counts_host[0];
    const volatile uint64_t *b = (const volatile uint64_t *)&r->counts_host[1];
    uint64_t *o = (uint64_t *)out;
    for (size_t i = 0; i < sizeof *out / sizeof(uint64_t); i++) o[i] = a[i] + b[i];
}

uint64_t dsb_resident_published(dsb_resident *r)
{
    return *(volatile unsigned long long *)r->progress_host;
}

int dsb_resident_stop(dsb_resident *r, uint64_t *abandoned, cm_err *err)
{
    if (abandoned) *abandoned = 0;
    if (!r->running) return 0;
    r->running = 0;
    dsb_pipe_stats st;
    int rc = dsb_pipe_stop(r->pipe, &st, err); /* sets the shutdown word the agents poll too */
    int e = (int)cudaStreamSynchronize(r->s_agents);
    if (abandoned) {
        const uint64_t pub = dsb_resident_published(r);
        *abandoned = pub > st.served ? pub - st.served : 0;
    }
    if (!rc && e) rc = cu_fail(err, "agent kernel", e);
    return rc;
}

void dsb_resident_destroy(dsb_resident *r)
{
    if (!r) return;
    dsb_resident_stop(r, NULL, NULL);
    if (r->s_agents) cudaStreamDestroy(r->s_agents);
    if (r->d.images) cudaFree(r->d.images);
    if (r->d.slots) cudaFree(r->d.slots);
    if (r->q_host) cudaFreeHost(r->q_host);
    if (r->counts_host) cudaFreeHost(r->counts_host);
    if (r->progress_host) cudaFreeHost(r->progress_host);
    dsb_pipe_destroy(r->pipe);
    free(r);
}
