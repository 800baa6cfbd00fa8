/* The timed operations that the sections of `dak bench gemm` share (bench_internal.h): the
 * split GEMM and the baselines as op_t, timed by time_op; the timing loop under time_op that the
 * fixed section shares too (bench_time_reps); the split kernel's options and preparation
 * (bench_opts, bench_opts_host, bench_prepare, time_split); the bound, the shape's JSON array and
 * the GB/s helper. */
#include <math.h>
#include <string.h>

#include "bench_internal.h"
#include "common/bench.h"

/* Enqueues the operation on `st` (NULL: the legacy stream, and split-seq its own stream). */
static int op_run(op_t *o, cudaStream_t st, cm_err *err)
{
    switch (o->kind) {
    case 0: return dak_gemm_run(o->launch, st, err);
    case 1: return dak_base_cublas(o->ctx, o->Afull, o->B, o->C, o->M, o->N, o->K, st, err);
    case 2: return dak_base_prefetch(o->ctx, o->A, o->stage[0], o->B, o->C, o->N, st, err);
    case 3: return dak_base_prefetch_overlap(o->ctx, o->A, o->stage, o->B, o->C, o->N, o->layers, st, err);
    case 4: return dak_base_naive(o->A, o->B, o->C, o->N, st, err);
    case 5: return dak_base_cublas(o->ctx, o->um, o->B, o->C, o->M, o->N, o->K, st, err);
    case 6: /* the split GEMM as a sequence of `layers` GEMMs, alternating between two copies of the
               HBM rows like the overlap baseline's two staging buffers (PDL where the plan allows) */
        for (uint32_t i = 0; i < o->layers; i++)
            if (dak_gemm_run(o->seq[i & 1u], st ? st : o->seq_stream, err)) return -1;
        return 0;
    }
    return cm_fail(err, "bad op");
}

/* untimed preparation before each repetition (bench_time_reps' pre) */
static int op_pre(void *arg, cm_err *err)
{
    const op_t *o = arg;
    if (o->kind == 5 && o->um_host_bytes) {
        struct cudaMemLocation host = {cudaMemLocationTypeHost, 0};
        cudaError_t e = cudaMemPrefetchAsync(o->um, o->um_host_bytes, host, 0, NULL);
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        if (e != cudaSuccess) return cm_fail(err, "uvm: prefetch to host: %s", cudaGetErrorString(e));
    }
    return 0;
}

cudaGraphExec_t bench_capture(bench_enqueue_fn enqueue, void *arg, cudaStream_t st, cm_err *err)
{
    if (enqueue(arg, st, err)) return NULL; /* the warm-up, outside the capture */
    cudaError_t e = cudaStreamSynchronize(st);
    if (e != cudaSuccess) {
        cm_fail(err, "warm-up before the capture: %s", cudaGetErrorString(e));
        return NULL;
    }
    if ((e = cudaStreamBeginCapture(st, cudaStreamCaptureModeRelaxed)) != cudaSuccess) {
        cm_fail(err, "begin capture: %s", cudaGetErrorString(e));
        return NULL;
    }
    cudaGraph_t g;
    const int bad = enqueue(arg, st, err);
    e = cudaStreamEndCapture(st, &g);
    if (bad || e != cudaSuccess) {
        if (!bad) cm_fail(err, "capture: %s", cudaGetErrorString(e));
        if (e == cudaSuccess) cudaGraphDestroy(g);
        return NULL;
    }
    cudaGraphExec_t ge = NULL;
    e = cudaGraphInstantiate(&ge, g, 0);
    cudaGraphDestroy(g);
    if (e != cudaSuccess) {
        cm_fail(err, "instantiate: %s", cudaGetErrorString(e));
        return NULL;
    }
    return ge;
}

static int op_enqueue(void *o, cudaStream_t st, cm_err *err)
{
    return op_run((op_t *)o, st, err);
}

double bench_time_reps(const bench_timed_op *op, uint32_t reps, double unit_per_ms, uint32_t launches, cm_err *err,
                       int *failed)
{
    static cudaEvent_t e0, e1;
    if (!e0) {
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
    }
    *failed = 0;
    double *t = cm_malloc(sizeof(double) * reps);
    for (uint32_t i = 0; i < reps + 2; i++) {
        if ((op->pre && op->pre(op->arg, err)) || dak_l2_flush(op->ctx, op->st, err)) {
            *failed = 1;
            break;
        }
        CK(cudaEventRecord(e0, op->st));
        const int bad =
            op->graph ? cudaGraphLaunch(op->graph, op->st) != cudaSuccess : op->enqueue(op->arg, op->st, err);
        if (bad) {
            if (op->graph) cm_fail(err, "graph launch failed");
            *failed = 1;
            break;
        }
        CK(cudaEventRecord(e1, op->st));
        cudaError_t e = cudaEventSynchronize(e1);
        if (e != cudaSuccess) {
            cm_fail(err, "%s", cudaGetErrorString(e));
            *failed = 1;
            break;
        }
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (i >= 2) t[i - 2] = unit_per_ms * ms / launches;
    }
    const double m = *failed ? NAN : bench_median(t, reps);
    free(t);
    return m;
}

/* time_op, or with graph set the operation captured once as a CUDA graph and replayed on a stream
 * of its own: a graph's launches are in device memory, a stream's commands are fetched over the
 * host link (which the host tier keeps busy). */
static double time_op_mode(op_t *o, uint32_t reps, int graph, cm_err *err, int *failed)
{
    static cudaStream_t gs;
    if (!gs) CK(cudaStreamCreateWithFlags(&gs, cudaStreamNonBlocking));
    *failed = 0;
    cudaGraphExec_t ge = NULL;
    if (graph && (o->kind == 5 || !(ge = bench_capture(op_enqueue, o, gs, err)))) {
        if (o->kind == 5) cm_fail(err, "uvm: not timed as a graph (its host prefetch runs before each repetition)");
        *failed = 1;
        cudaStreamSynchronize(gs);
        cudaGetLastError();
        return NAN;
    }
    const bench_timed_op op = {
        .ctx = o->ctx, .st = graph ? gs : NULL, .graph = ge, .enqueue = op_enqueue, .pre = op_pre, .arg = o};
    double m = bench_time_reps(&op, reps, 1, 1, err, failed);
    if (ge) cudaGraphExecDestroy(ge);
    if (!*failed && (o->kind == 3 || o->kind == 6)) m /= o->layers;
    return m;
}

double time_op(op_t *o, uint32_t reps, cm_err *err, int *failed)
{
    return time_op_mode(o, reps, 0, err, failed);
}

double time_op_graph(op_t *o, uint32_t reps, cm_err *err, int *failed)
{
    return time_op_mode(o, reps, 1, err, failed);
}

int bench_prepare(dak_gemm_ctx *ctx, const dak_tiered *A, const uint16_t *B, float *C, uint32_t N,
                  const dak_gemm_opts *go, dak_gemm_launch **l, cm_err *err)
{
    if (!dak_gemm_prepare(ctx, A, B, C, N, go, l, err)) return 0;
    if (!go->bn && go->bm != 256) return -1;
    static int told;
    if (!told++) fprintf(stderr, "dak bench: note: %s; such configurations run with bn 0 and bm 0 (auto)\n", err->msg);
    dak_gemm_opts o2 = *go;
    o2.bn = 0;
    if (o2.bm == 256) o2.bm = 0;
    return dak_gemm_prepare(ctx, A, B, C, N, &o2, l, err);
}

double time_split(dak_gemm_ctx *ctx, const dak_tiered *A, const uint16_t *B, float *C, uint32_t N,
                  const dak_gemm_opts *go, uint32_t reps, dak_gemm_plan *plan_out, uint64_t *host_bytes)
{
    cm_err err;
    op_t o;
    memset(&o, 0, sizeof o);
    o.kind = 0, o.ctx = ctx;
    if (bench_prepare(ctx, A, B, C, N, go, &o.launch, &err)) {
        fprintf(stderr, "dak bench: split: %s\n", err.msg);
        return NAN;
    }
    if (plan_out) *plan_out = *dak_gemm_launch_plan(o.launch);
    int failed;
    double ms = time_op(&o, reps, &err, &failed);
    if (failed) fprintf(stderr, "dak bench: split: %s\n", err.msg);
    if (host_bytes) {
        uint64_t hb = 0;
        if (!dak_gemm_host_bytes(o.launch, &hb, &err)) *host_bytes = hb / (reps + 2);
    }
    dak_gemm_launch_free(o.launch);
    return ms;
}

uint32_t bench_list_max(const uint32_t *v, size_t n, uint32_t m)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] > m) m = v[i];
    return m;
}

double bench_bound_gbs(const bench_run *bench, double abytes, double ratio)
{
    return abytes / fmax(ratio * abytes / (bench->Bh * 1e9), (1 - ratio) * abytes / (bench->Bg * 1e9)) / 1e9;
}

void bench_shape_array(json_w *w, const char *name, const bench_shape *s)
{
    char key[64];
    snprintf(key, sizeof key, "%s_%ux%u", name, s->M, s->K);
    json_key(w, key);
    json_arr_begin(w);
}

double gbs(double bytes, double ms) { return isfinite(ms) && ms > 0 ? bytes / (ms * 1e6) : NAN; }
