/* dak engine on the GPU (include/dak/engine.h): synthetic or checkpoint parameters (a full copy per tier or one
 * placement's rows), the step as one CUDA graph per position over the small kernels of engine_kernels.cu, direct access
 * (split GEMM + split attention over tiered views), the FlexGen-style double-buffered prefetch baseline, the
 * unified-memory (page fault) baseline and the step breakdown. */
#include <cuda_runtime.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

extern "C" {
#include "common/bench.h"
}
#include "common/launch.h"
#include "dak/attention.h"
#include "dak/engine.h"
#include "dak/gemm.h"
#include "dak/tiered.h"

#define ECU(call)                                                                                 \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) return cm_fail(err, "engine: %s: %s", #call, cudaGetErrorString(e_)); \
    } while (0)

#include "engine_kernels.h"

/* ---- the engine ----------------------------------------------------------------------------------- */

/* A layer's stored matrices (dak_eng_stack_parts: q/k/v and gate/up stacked), by short names here */
enum { W_QKV = DAK_ENG_W_QKV, W_O = DAK_ENG_W_O, W_IN = DAK_ENG_W_IN, W_OUT = DAK_ENG_W_OUT, NW = DAK_ENG_NW };
/* the kind of each stored matrix's GEMMs (its W_* index) */
static const dak_eng_op lin_kind[NW] = {DAK_ENG_OP_QKV, DAK_ENG_OP_O, DAK_ENG_OP_FFN_IN, DAK_ENG_OP_FFN_OUT};

/* A range of the matrices' pinned host rows: carved from one anonymous mapping and registered (cudaHostRegister), or
 * allocated by cudaHostAlloc, by the pinning thread */
typedef struct {
    uint8_t *p;
    size_t bytes;
    int how; /* 0: not pinned (yet), 1: registered, 2: cudaHostAlloc'd */
} pin_range;

/* The thread that pins the host ranges, one after the other in index order: range i once `posted` > i; `done` ranges
 * are pinned; the first failure stops it (rc, msg). */
typedef struct {
    pthread_t th;
    int on, quit, rc, dev;
    uint32_t posted, done, n;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    double busy_s;
    char msg[200];
} pinner;

typedef struct {
    uint32_t M, K;
    dak_eng_op kind;                /* its GEMMs' kind (lin_kind[], DAK_ENG_OP_LM_HEAD) */
    uint16_t *dev_rows, *host_rows; /* packed: HBM holds rows [d_from, M), pinned memory rows [0, h_rows) (the
                                       full engine: both whole; a deployment: its placement's rows) */
    uint32_t h_rows, d_from;
    uint32_t groups;                /* all rows in HBM (a deployment's h_rows 0): packed in groups of this many rows
                                       for k_whole_sw (dak_gemm_ctx_a_group_rows), else 0 (64-row tiles) */
    float *bias;                    /* [M] or NULL */
    dak_tiered view;
    dak_gemm_launch *l;             /* direct */
    dak_gemm_launch *la, *lb;       /* prefetch: staged host rows, HBM rows (unified memory: lb only) */
    uint32_t rh;                    /* host rows of the current placement */
    uint16_t *um_rows;              /* unified memory: rows [0, rh_um) (= rh), row-major, in the managed allocation */
    uint32_t rh_um;
    const uint16_t *b_in;           /* the GEMM's B (activations), for the unified-memory baseline's cuBLAS call */
} lin_t;

struct dak_engine {
    dak_eng_model m;
    uint32_t batch, max_len, L, H, Hq, Hkv, F, V, Vp;
    uint64_t seed;
    int opt;
    dak_eng_opts o;
    uint64_t hbm_bytes, host_bytes;
    cudaStream_t st, cp;
    cudaEvent_t ev0, ev1, ev_um, ev_start, ev_cpdone, ev_ready[2], ev_free[2];
    dak_gemm_ctx *g;
    dak_attn_ctx *a;
    lin_t *lin; /* [L][NW] */
    lin_t lm;
    float *n1g, *n1b, *n2g, *n2b, *nfg, *nfb; /* [L][H] / [H] */
    uint16_t *emb_dev, *emb_host, *pos_dev;  /* row-major embedding (HBM rows [emb_d_from, V); Llama: pinned rows
                                                [0, emb_h_rows)), positions */
    uint32_t emb_h_rows, emb_d_from;
    float *cs, *sn;
    uint16_t **kh, **vh, **kd, **vd; /* [L]: [entries][kvh][max_len][128]; host entries [0, kv_h[l]), HBM entries
                                        [kv_d[l], batch) (the full engine: both all) */
    uint32_t *kv_h, *kv_d;
    dak_kv_tiered *kv;
    float *x, *cqkv, *co, *c1, *cd, *logits, *ca, *cb;
    uint16_t *hb, *qb, *ab, *fb;
    int32_t *prompt, *tok, *hist;
    /* prefetch staging */
    uint16_t *sw[2][NW], *sk[2], *sv[2], *slm;
    /* a checkpoint's bytes on their way to the GPU (setup only): two pinned buffers of LOAD_CHUNK, used in turn, and
     * each one's copy to the GPU (load_take waits for it before the buffer is read into again) */
    void *ld[2];
    cudaEvent_t ld_ev[2];
    uint32_t ld_next;
    /* the matrices' host rows: one range a layer (hr[l]: its NW matrices' rows, each at a 4 KiB boundary) and one
     * for lm_head (hr[L]), pinned by a thread of their own (pin_*) while the load goes on */
    pin_range *hr;
    uint8_t *hr_map;   /* DAK_ENG_PIN_REGISTER: the anonymous mapping the ranges are carved from, and its size */
    size_t hr_map_bytes;
    pinner pin;
    /* unified memory: the placement's host rows of every matrix (dak_eng_um_bytes' layout), and the bytes of rows */
    uint16_t *um;
    size_t um_bytes;
    double um_moved;
    /* run */
    dak_eng_place pl;
    int have_pl;
    dak_eng_mode mode;
    uint32_t P, T, S, next;
    uint32_t Mmax; /* rows of the largest matrix (lm_head's padded vocabulary included) */
    double hbm_cap; /* HBM bytes the engine may allocate */
    size_t st_bytes[NW + 2]; /* prefetch staging allocated: per matrix, per KV tensor (K and V alike), lm_head */
    cudaGraphExec_t *ge;
    /* breakdown (dak_engine_breakdown): while bk_on, a timing event after every operation */
    cudaEvent_t *bk_ev;
    uint8_t *bk_kind;
    double *bk_bytes;
    uint32_t bk_n, bk_cap;
    int bk_on;
    /* dak_eng_opts.diag_times: the norms' stamps ([2L + 1][batch][DAK_ENG_NORM_STAMPS]), then the activations'
       ([L][act_grid][DAK_ENG_ACT_STAMPS]), q/k/v post-processing's ([L][batch (heads + kv_heads)][DAK_ENG_QKVP_STAMPS])
       and the attention's ([L][SMs][DAK_ATTN_STAMPS]: a plan has at most a CTA an SM) */
    uint64_t *dts;
    uint32_t act_grid;
    /* dak_engine_create's phases (lt, while it runs; lt_create, as it returned) */
    dak_eng_load_times lt, lt_create;
};

static void load_release(dak_engine *e);
static void pin_release(dak_engine *e);
static lin_t *LIN(dak_engine *e, uint32_t l, uint32_t w) { return &e->lin[l * NW + w]; }

/* elements of one sequence's K (or V) in a layer: [kv_heads][max_len][128] */
/* k_qkv_post's grid: a CTA a sequence and head of q, k (with its v) */
static uint32_t qkvp_ctas(const dak_engine *e) { return e->batch * (uint32_t)(e->m.cfg.heads + e->m.cfg.kv_heads); }
static size_t kv_entry(const dak_engine *e) { return (size_t)e->m.cfg.kv_heads * e->max_len * DAK_ENG_HEAD_DIM; }

/* A small kernel of the step on e->st: a programmatic dependent of the kernel before it with
 * dak_eng_opts.kernel_pdl (see STEP_KERNEL_TRIGGER), else a plain launch. */
static int step_launch(dak_engine *e, const void *fn, dim3 grid, unsigned threads, void **args, cm_err *err)
{
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cudaLaunchAttribute at[1] = {cm_attr_pdl()};
    cfg.gridDim = grid, cfg.blockDim = dim3(threads), cfg.stream = e->st;
    if (e->o.kernel_pdl) cfg.attrs = at, cfg.numAttrs = 1;
    ECU(cudaLaunchKernelExC(&cfg, fn, args));
    return 0;
}

static void free_launches(dak_engine *e)
{
    if (!e->lin) return;
    for (uint32_t i = 0; i < e->L * NW + 1; i++) {
        lin_t *w = i < e->L * NW ? &e->lin[i] : &e->lm;
        dak_gemm_launch_free(w->l), dak_gemm_launch_free(w->la), dak_gemm_launch_free(w->lb);
        w->l = w->la = w->lb = NULL;
    }
}

static void free_graphs(dak_engine *e)
{
    if (e->ge) {
        for (uint32_t t = 0; t < e->S; t++)
            if (e->ge[t]) cudaGraphExecDestroy(e->ge[t]);
        free(e->ge);
        e->ge = NULL;
    }
}

extern "C" void dak_engine_mem(const dak_engine *e, uint64_t *hbm, uint64_t *host)
{
    *hbm = e->hbm_bytes, *host = e->host_bytes;
}

extern "C" void dak_engine_load_times(const dak_engine *e, dak_eng_load_times *t) { *t = e->lt_create; }
extern "C" uint32_t dak_engine_grouped(const dak_engine *e)
{
    uint32_t n = e->lm.groups != 0;
    for (size_t i = 0; e->lin && i < (size_t)e->L * NW; i++) n += e->lin[i].groups != 0;
    return n;
}

extern "C" int dak_engine_available(void)
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

extern "C" void dak_engine_destroy(dak_engine *e)
{
    if (!e) return;
    cudaDeviceSynchronize();
    free_graphs(e);
    free_launches(e);
    if (e->lin) {
        for (uint32_t i = 0; i < e->L * NW; i++) {
            cudaFree(e->lin[i].dev_rows), cudaFree(e->lin[i].bias);
        }
        free(e->lin);
    }
    cudaFree(e->lm.dev_rows);
    pin_release(e); /* the matrices' host rows */
    void *d[] = {e->n1g, e->n1b, e->n2g, e->n2b, e->nfg, e->nfb, e->emb_dev, e->pos_dev, e->cs, e->sn, e->x,
                 e->cqkv, e->co, e->c1, e->cd, e->logits, e->ca, e->cb, e->hb, e->qb, e->ab,
                 e->fb, e->prompt, e->tok, e->hist, e->sk[0], e->sk[1], e->sv[0], e->sv[1], e->slm, e->dts};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) cudaFree(d[i]);
    for (int s = 0; s < 2; s++)
        for (int j = 0; j < NW; j++) cudaFree(e->sw[s][j]);
    cudaFreeHost(e->emb_host);
    load_release(e);
    if (e->um) cudaFree(e->um);
    for (uint32_t l = 0; e->kh && l < e->L; l++) {
        cudaFreeHost(e->kh[l]), cudaFreeHost(e->vh[l]), cudaFree(e->kd[l]), cudaFree(e->vd[l]);
    }
    free(e->kh), free(e->vh), free(e->kd), free(e->vd), free(e->kv), free(e->kv_h), free(e->kv_d);
    if (e->g) dak_gemm_ctx_destroy(e->g);
    if (e->a) dak_attn_ctx_destroy(e->a);
    if (e->st) cudaStreamDestroy(e->st);
    if (e->cp) cudaStreamDestroy(e->cp);
    cudaEvent_t ev[] = {e->ev0,          e->ev1,          e->ev_um,       e->ev_start, e->ev_cpdone,
                        e->ev_ready[0], e->ev_ready[1], e->ev_free[0], e->ev_free[1]};
    for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++)
        if (ev[i]) cudaEventDestroy(ev[i]);
    if (e->have_pl) dak_eng_place_free(&e->pl);
    for (uint32_t i = 0; e->bk_ev && i < e->bk_cap; i++)
        if (e->bk_ev[i]) cudaEventDestroy(e->bk_ev[i]);
    free(e->bk_ev), free(e->bk_kind), free(e->bk_bytes);
    free(e);
}

static int dmalloc(dak_engine *e, void **p, size_t bytes, cm_err *err)
{
    const double t0 = bench_now_s();
    cudaError_t c = cudaMalloc(p, bytes ? bytes : 16);
    e->lt.hbm_s += bench_now_s() - t0;
    if (c != cudaSuccess)
        return cm_fail(err, "engine: cudaMalloc of %zu bytes (%.2f GB allocated so far): %s", bytes,
                       e->hbm_bytes / 1e9, cudaGetErrorString(c));
    e->hbm_bytes += bytes;
    return 0;
}

/* pinned, mapped host memory; its time added to *acc (dak_eng_load_times) */
static int hmalloc(dak_engine *e, void **p, size_t bytes, double *acc, cm_err *err)
{
    const double t0 = bench_now_s();
    cudaError_t c = cudaHostAlloc(p, bytes ? bytes : 16, cudaHostAllocMapped);
    *acc += bench_now_s() - t0;
    if (c != cudaSuccess)
        return cm_fail(err, "engine: cudaHostAlloc of %zu pinned bytes (%.2f GB so far): %s", bytes,
                       e->host_bytes / 1e9, cudaGetErrorString(c));
    e->host_bytes += bytes;
    return 0;
}

/* ---- the matrices' pinned host rows ----------------------------------------------------------------
 * Pinning runs at a few GB/s (cudaHostAlloc, which also clears the pages, or cudaHostRegister), so it runs on a thread
 * of its own beside the load, a range (a layer's rows, then lm_head's) at a time.  DAK_ENG_PIN_REGISTER (the
 * default): the ranges are carved from one anonymous mapping whose pages the CPU packing touches first (on the read
 * threads), and each range is registered once its rows are written: with a checkpoint, behind the load; with
 * synthetic weights (copied back from the GPU, which needs them pinned first), ahead of it.  DAK_ENG_PIN_ALLOC: each
 * range is a cudaHostAlloc, made ahead of the load. */

static void *pin_main(void *arg)
{
    dak_engine *e = (dak_engine *)arg;
    pinner *q = &e->pin;
    const cudaError_t c0 = cudaSetDevice(q->dev);
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (q->done == q->posted && !q->quit) pthread_cond_wait(&q->cv, &q->mu);
        if (q->quit) break;
        const uint32_t i = q->done;
        pthread_mutex_unlock(&q->mu);
        pin_range *r = &e->hr[i];
        const int alloc = e->o.load_pin == DAK_ENG_PIN_ALLOC;
        const double t0 = bench_now_s();
        cudaError_t c = c0;
        if (c == cudaSuccess && r->bytes && alloc) {
            c = cudaHostAlloc((void **)&r->p, r->bytes, cudaHostAllocMapped | cudaHostAllocPortable);
            if (c == cudaSuccess) r->how = 2;
            else r->p = NULL;
        } else if (c == cudaSuccess && r->bytes) {
            c = cudaHostRegister(r->p, r->bytes, cudaHostRegisterMapped | cudaHostRegisterPortable);
            if (c == cudaSuccess) r->how = 1;
        }
        const double dt = bench_now_s() - t0;
        if (c != cudaSuccess) cudaGetLastError(); /* not sticky: cleared, so that nothing else reads it */
        pthread_mutex_lock(&q->mu);
        q->busy_s += dt;
        if (c != cudaSuccess) {
            q->rc = -1, q->quit = 1;
            snprintf(q->msg, sizeof q->msg, "engine: %s of %zu bytes of host rows (range %u of %u): %s",
                     alloc ? "cudaHostAlloc" : "cudaHostRegister", r->bytes, i, q->n, cudaGetErrorString(c));
        } else {
            q->done++;
        }
        pthread_cond_broadcast(&q->cv);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

static int pin_start(dak_engine *e, cm_err *err)
{
    pinner *q = &e->pin;
    ECU(cudaGetDevice(&q->dev));
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    if (pthread_create(&q->th, NULL, pin_main, e)) {
        pthread_mutex_destroy(&q->mu), pthread_cond_destroy(&q->cv);
        return cm_fail(err, "engine: cannot start the thread that pins the host rows");
    }
    q->on = 1;
    return 0;
}

/* ranges [0, upto) may be pinned */
static void pin_post(dak_engine *e, uint32_t upto)
{
    pinner *q = &e->pin;
    pthread_mutex_lock(&q->mu);
    if (q->posted < upto) q->posted = upto;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

/* waits until range i is pinned (posted before) */
static int pin_wait(dak_engine *e, uint32_t i, cm_err *err)
{
    pinner *q = &e->pin;
    const double t0 = bench_now_s();
    pthread_mutex_lock(&q->mu);
    while (q->done <= i && !q->rc) pthread_cond_wait(&q->cv, &q->mu);
    const int rc = q->rc;
    pthread_mutex_unlock(&q->mu);
    e->lt.pin_s += bench_now_s() - t0;
    return rc ? cm_fail(err, "%s", q->msg) : 0;
}

/* stops the thread (after the range it is pinning) */
static void pin_stop(dak_engine *e)
{
    pinner *q = &e->pin;
    if (!q->on) return;
    pthread_mutex_lock(&q->mu);
    q->quit = 1;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
    pthread_join(q->th, NULL);
    pthread_mutex_destroy(&q->mu), pthread_cond_destroy(&q->cv);
    q->on = 0;
    e->lt.pinner_s = q->busy_s;
}

static void pin_release(dak_engine *e)
{
    pin_stop(e);
    for (uint32_t i = 0; e->hr && i < e->pin.n; i++) {
        if (e->hr[i].how == 1) cudaHostUnregister(e->hr[i].p);
        if (e->hr[i].how == 2) cudaFreeHost(e->hr[i].p);
    }
    free(e->hr), e->hr = NULL;
    if (e->hr_map) munmap(e->hr_map, e->hr_map_bytes), e->hr_map = NULL;
}

/* range i's matrices (layer i's, or lm_head when i == L) */
static uint32_t range_lins(dak_engine *e, uint32_t i, lin_t **w)
{
    if (i == e->L) {
        w[0] = &e->lm;
        return 1;
    }
    for (uint32_t j = 0; j < NW; j++) w[j] = LIN(e, i, j);
    return NW;
}

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

/* Lays out and, for DAK_ENG_PIN_REGISTER, maps the L + 1 ranges (each matrix's rows at a 4 KiB boundary, each
 * range at a 2 MiB one, so that no huge page is shared by two ranges); starts the pinning thread. */
static int pin_layout(dak_engine *e, cm_err *err)
{
    const uint32_t n = e->L + 1;
    e->hr = (pin_range *)cm_calloc(n, sizeof *e->hr);
    e->pin.n = n;
    size_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        lin_t *w[NW];
        for (uint32_t j = 0, nw = range_lins(e, i, w); j < nw; j++)
            e->hr[i].bytes += round_up((size_t)w[j]->h_rows * w[j]->K * 2, 4096);
        total += round_up(e->hr[i].bytes, (size_t)2 << 20);
    }
    if (e->o.load_pin == DAK_ENG_PIN_REGISTER && total) {
        const size_t huge = (size_t)2 << 20;
        void *m = mmap(NULL, total + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return cm_fail(err, "engine: cannot map %.2f GB for the host rows", total / 1e9);
        e->hr_map = (uint8_t *)m, e->hr_map_bytes = total + huge;
        uint8_t *base = (uint8_t *)round_up((size_t)m, huge);
#ifdef MADV_HUGEPAGE
        madvise(base, total, MADV_HUGEPAGE); /* fewer faults where the kernel allows it; a hint only */
#endif
        for (uint32_t i = 0; i < n; i++) e->hr[i].p = base, base += round_up(e->hr[i].bytes, huge);
    }
    return pin_start(e, err);
}

/* range i's matrices' host_rows, once its memory exists */
static void pin_carve(dak_engine *e, uint32_t i)
{
    lin_t *w[NW];
    size_t off = 0;
    for (uint32_t j = 0, nw = range_lins(e, i, w); j < nw; j++) {
        const size_t b = (size_t)w[j]->h_rows * w[j]->K * 2;
        w[j]->host_rows = b ? (uint16_t *)(e->hr[i].p + off) : NULL;
        off += round_up(b, 4096);
        e->host_bytes += b, e->lt.pinned_bytes += (double)b;
    }
}

/* The checkpoint's bytes pass through a pinned buffer of this size on their way to the GPU. */
#define LOAD_CHUNK ((size_t)32 << 20)

/* The next of the two pinned buffers a checkpoint's bytes pass through, once its previous copy to the GPU is done
 * (allocated at the first use, freed after creation).  Two, so that the file's next rows are read while the rows
 * before them are copied (one buffer serialised the read and the copy). */
static int load_take(dak_engine *e, void **buf, cm_err *err)
{
    const uint32_t i = e->ld_next;
    if (!e->ld[i]) {
        ECU(cudaHostAlloc(&e->ld[i], LOAD_CHUNK, cudaHostAllocDefault));
        ECU(cudaEventCreateWithFlags(&e->ld_ev[i], cudaEventDisableTiming));
    } else {
        const double t0 = bench_now_s();
        ECU(cudaEventSynchronize(e->ld_ev[i]));
        e->lt.wait_s += bench_now_s() - t0;
    }
    *buf = e->ld[i];
    return 0;
}

/* The buffer load_take gave is being copied on e->st (its copy was enqueued): the next load_take takes the other. */
static int load_sent(dak_engine *e, cm_err *err)
{
    ECU(cudaEventRecord(e->ld_ev[e->ld_next], e->st));
    e->ld_next ^= 1u;
    return 0;
}

static void load_release(dak_engine *e)
{
    for (int i = 0; i < 2; i++) {
        if (e->ld[i]) cudaEventSynchronize(e->ld_ev[i]), cudaEventDestroy(e->ld_ev[i]), cudaFreeHost(e->ld[i]);
        e->ld[i] = NULL;
    }
}

/* Where a checkpoint's rows also go as they are read: a matrix's host rows [0, rows), packed on the CPU (the tensor's
 * row 0 is the matrix's row row0: stacked parts) */
typedef struct {
    uint16_t *dst;
    uint64_t row0, rows;
    uint32_t K;
} host_pack;

/* rows [r, r + k) of the tensor (src; NULL: zeros) into hp's host rows, where they fall in them */
static int host_pack_rows(dak_engine *e, const host_pack *hp, uint64_t r, uint64_t k, const uint16_t *src, cm_err *err)
{
    const uint64_t at = hp->row0 + r;
    if (at >= hp->rows) return 0;
    const double t0 = bench_now_s();
    const int rc = dak_eng_pack_rows(hp->dst, src, at, hp->rows - at < k ? hp->rows - at : k, hp->K, dak_st_threads(),
                                     err);
    e->lt.host_pack_s += bench_now_s() - t0;
    return rc;
}

/* Rows [0, rows) of the engine's matrix `tensor` (dak_eng_param_of: cols each) into dst (HBM or managed
 * memory) as bf16, on e->st: from the checkpoint (e->o.ckpt), else the synthetic values; rows past the
 * tensor's own (lm_head's padding to a multiple of 64) are zero.  hp (checkpoints only; NULL: none): the same rows
 * into a matrix's host rows too, packed on the CPU from the load buffers. */
static int put_bf16(dak_engine *e, uint32_t tensor, uint64_t rows, uint16_t *dst, const host_pack *hp, cm_err *err)
{
    dak_eng_param p;
    if (dak_eng_param_of(&e->m, tensor, &p) || !p.present || !p.weight)
        return cm_fail(err, "engine: tensor %u is no matrix of this model", tensor);
    const uint64_t have = rows < p.rows ? rows : p.rows;
    const size_t n = (size_t)(rows * p.cols), valid = (size_t)(have * p.cols);
    if (!e->o.ckpt) {
        k_fill_bf16<<<grid_for(n), NTHR, 0, e->st>>>(dst, n, valid, e->seed, tensor, p.scale, p.offset);
        ECU(cudaGetLastError());
        return 0;
    }
    if (p.cols * 2 > LOAD_CHUNK)
        return cm_fail(err, "engine: tensor %u: rows of %llu elements, more than the load buffer holds", tensor,
                       (unsigned long long)p.cols);
    const uint64_t step = LOAD_CHUNK / (p.cols * 2); /* rows a read */
    for (uint64_t r = 0; r < have; r += step) {
        const uint64_t k = have - r < step ? have - r : step;
        void *buf;
        if (load_take(e, &buf, err)) return -1;
        const double t0 = bench_now_s();
        if (dak_eng_ckpt_bf16(e->o.ckpt, tensor, r, k, (uint16_t *)buf, err)) return -1;
        e->lt.read_s += bench_now_s() - t0, e->lt.read_bytes += (double)(k * p.cols * 2);
        ECU(cudaMemcpyAsync(dst + r * p.cols, buf, (size_t)(k * p.cols * 2), cudaMemcpyHostToDevice, e->st));
        if (load_sent(e, err)) return -1;
        /* while the copy runs; the buffer is read into again only after the other one's next turn */
        if (hp && host_pack_rows(e, hp, r, k, (const uint16_t *)buf, err)) return -1;
    }
    if (valid < n) ECU(cudaMemsetAsync(dst + valid, 0, (n - valid) * 2, e->st));
    if (hp && have < rows && host_pack_rows(e, hp, have, rows - have, NULL, err)) return -1;
    return 0;
}

/* The engine's vector `tensor` into dst (fp32, HBM), on e->st: from the checkpoint, else synthetic. */
static int put_f32(dak_engine *e, uint32_t tensor, float *dst, cm_err *err)
{
    dak_eng_param p;
    if (dak_eng_param_of(&e->m, tensor, &p) || !p.present || p.weight)
        return cm_fail(err, "engine: tensor %u is no vector of this model", tensor);
    if (!e->o.ckpt) {
        k_fill_f32<<<grid_for(p.cols), NTHR, 0, e->st>>>(dst, p.cols, e->seed, tensor, p.scale, p.offset);
        ECU(cudaGetLastError());
        return 0;
    }
    void *buf;
    if (load_take(e, &buf, err)) return -1;
    const double t0 = bench_now_s();
    if (dak_eng_ckpt_f32(e->o.ckpt, tensor, 0, 1, (float *)buf, err)) return -1;
    e->lt.read_s += bench_now_s() - t0, e->lt.read_bytes += (double)p.cols * 4;
    ECU(cudaMemcpyAsync(dst, buf, (size_t)p.cols * 4, cudaMemcpyHostToDevice, e->st));
    return load_sent(e, err);
}

/* a placement's ranges: host rows multiples of 64 within each weight, host entries within the batch */
static int check_place(const dak_eng_model *m, uint32_t B, const dak_eng_place *pl, cm_err *err)
{
    uint32_t L = (uint32_t)m->cfg.layers;
    if (pl->layers != L) return cm_fail(err, "engine: placement of %u layers for %u", pl->layers, L);
    for (uint32_t l = 0; l < L; l++) {
        if (pl->batch_host[l] > B) return cm_fail(err, "engine: layer %u: %u host entries of %u", l, pl->batch_host[l], B);
        for (uint32_t j = 0; j < DAK_ENG_NLIN; j++) {
            uint32_t rh = pl->rows_host[l * DAK_ENG_NLIN + j], M, K;
            dak_eng_lin_shape(m, j, &M, &K);
            if (rh % 64 || rh > M)
                return cm_fail(err, "engine: layer %u weight %u: %u host rows of %u (expected a multiple of 64)", l, j, rh,
                               M);
        }
    }
    if (pl->lm_rows_host % 64 || pl->lm_rows_host > m->vocab_pad || pl->embed_rows_host > m->cfg.vocab)
        return cm_fail(err, "engine: lm_head %u / embedding %u host rows out of range", pl->lm_rows_host,
                       pl->embed_rows_host);
    if (m->cfg.arch == DAK_ARCH_OPT && pl->embed_rows_host)
        return cm_fail(err, "engine: OPT's embedding is tied (no gather op)");
    return 0;
}

/* Rows [0, rows) of stored matrix w of layer l (l == L: lm_head, OPT's the token embedding), row-major, into
 * dst, on e->st: each stacked part from its own tensor (put_bf16); host (checkpoints only; NULL: none): the matrix's
 * packed host rows (lin_t.host_rows, h_rows of them), written on the CPU as the rows are read. */
static int fill_rows(dak_engine *e, uint32_t l, uint32_t w, uint16_t *dst, uint32_t rows, const lin_t *host,
                     cm_err *err)
{
    host_pack hp = {host ? host->host_rows : NULL, 0, host ? host->h_rows : 0, host ? host->K : 0};
    const host_pack *hpp = host && host->h_rows && e->o.ckpt ? &hp : NULL;
    if (l == e->L) return put_bf16(e, e->opt ? DAK_ENG_T_EMBED : DAK_ENG_T_LM, rows, dst, hpp, err);
    uint32_t part[3], np = dak_eng_stack_parts(&e->m, w, part), row0 = 0, K = LIN(e, l, w)->K;
    for (uint32_t p = 0; p < np && row0 < rows; p++) {
        uint32_t Mp, Kp;
        dak_eng_lin_shape(&e->m, part[p], &Mp, &Kp);
        hp.row0 = row0;
        if (put_bf16(e, dak_eng_tensor(l, part[p]), rows - row0 < Mp ? rows - row0 : Mp, dst + (size_t)row0 * K, hpp,
                     err))
            return -1;
        row0 += Mp;
    }
    return 0;
}

/* The GEMM options of matrix w's launches (prep_lin), for a placement of rh host rows. */
static void lin_gemm_opts(const dak_engine *e, const lin_t *w, uint32_t rh, dak_gemm_opts *go)
{
    dak_gemm_opts_default(go);
    go->pdl = e->o.gemm_pdl ? 1 : 0;
    go->pdl_pre = (e->o.gemm_pre_none >> w->kind) & 1u ? DAK_GEMM_PDL_PRE_NONE : e->o.gemm_pdl_pre;
    go->diag_times = e->o.diag_times ? 1 : 0;
    /* gemm_stages: GEMMs with host rows keep their ring (the host link needs ~1 MiB in flight over few SMs) */
    go->hbm_window = e->o.gemm_hbm_window, go->stages = rh ? 0 : e->o.gemm_stages, go->dyn = e->o.gemm_dyn;
    if (e->o.gemm_whole == DAK_ENG_WHOLE_OFF) go->whole = 0;
    else if (e->o.gemm_whole == DAK_ENG_WHOLE_ON) go->whole = 1;
    go->whole_cluster = e->o.gemm_whole_cluster, go->whole_swap = e->o.gemm_whole_swap;
}

/* Fills matrix w's HBM tier from the row-major matrix in scratch: rows [d_from, M) packed straight into their
 * allocation (made here; d_from is a whole tile row, and packing keeps tile rows apart; a deployment's all-HBM matrix
 * in k_whole_sw's row groups where the GEMM asks for them, w->groups).  host_from_gpu (synthetic weights): rows
 * [0, h_rows) packed into `packed` and copied to the (pinned) host rows; a checkpoint's host rows were packed on the
 * CPU as they were read. */
static int lin_store(dak_engine *e, lin_t *w, const uint16_t *scratch, uint16_t *packed, int host_from_gpu,
                     cm_err *err)
{
    size_t row = (size_t)w->K * 2;
    if (dmalloc(e, (void **)&w->dev_rows, (size_t)(w->M - w->d_from) * row, err)) return -1;
    double t0 = bench_now_s();
    w->groups = 0;
    if (w->h_rows == 0) { /* (a deployment's: only ever read with no host rows) */
        dak_gemm_opts go;
        lin_gemm_opts(e, w, 0, &go);
        w->groups = dak_gemm_ctx_a_group_rows(e->g, w->M, w->K, e->batch, &go);
    }
    if (w->groups ? dak_pack_groups(scratch, w->dev_rows, w->M, w->K, w->groups, err)
                  : w->M > w->d_from &&
                        dak_pack_rowmajor(scratch + (size_t)w->d_from * w->K, w->dev_rows, w->M - w->d_from, w->K, err))
        return -1;
    if (host_from_gpu && w->h_rows) {
        if (dak_pack_rowmajor(scratch, packed, w->h_rows, w->K, err)) return -1;
        const double t1 = bench_now_s();
        e->lt.pack_s += t1 - t0, t0 = t1;
        ECU(cudaMemcpy(w->host_rows, packed, (size_t)w->h_rows * row, cudaMemcpyDeviceToHost));
        e->lt.d2h_s += bench_now_s() - t0;
    } else {
        e->lt.pack_s += bench_now_s() - t0;
    }
    return 0;
}

extern "C" int dak_engine_create(dak_engine **out, const dak_eng_model *m, uint32_t batch, uint32_t max_len,
                                 uint64_t seed, const dak_eng_opts *o, cm_err *err)
{
    *out = NULL;
    err->msg[0] = '\0';
    const double t_create = bench_now_s();
    if (dak_eng_model_gpu_check(m, err)) return -1;
    if (batch < 1 || batch > 4096) return cm_fail(err, "engine: batch %u: expected 1..4096", batch);
    if (max_len < 1 || max_len > 65536 || (m->cfg.arch == DAK_ARCH_OPT && max_len > m->cfg.max_pos))
        return cm_fail(err, "engine: %u positions: expected 1..%llu", max_len,
                       (unsigned long long)(m->cfg.arch == DAK_ARCH_OPT ? m->cfg.max_pos : 65536));
    dak_eng_opts oo;
    memset(&oo, 0, sizeof oo);
    if (o) oo = *o;
    const dak_eng_place *dp = oo.deploy;
    if (dp && check_place(m, batch, dp, err)) return -1;
    double need_hbm, need_host, need_stage;
    dak_eng_need_bytes(m, batch, max_len, dp, &need_hbm, &need_host, &need_stage);
    const char *what = dp ? "this placement's host rows and KV entries"
                          : "a full copy of the weights and KV cache";
    if (oo.host_cap && need_host > (double)oo.host_cap)
        return cm_fail(err,
                       "engine: needs %.2f GB of pinned host memory (%s), more than the cap of %.2f GB: raise the cap "
                       "or run fewer layers (--layers)",
                       need_host / 1e9, what, oo.host_cap / 1e9);
    size_t fr = 0, tot = 0;
    ECU(cudaMemGetInfo(&fr, &tot));
    double cap = oo.hbm_cap ? (double)oo.hbm_cap : (double)fr - 2.0 * (1u << 30);
    /* the full engine reserves the prefetch baseline's staging too; a deployment's setup checks it when asked */
    if (need_hbm + (dp ? 0 : need_stage) > cap)
        return cm_fail(err,
                       "engine: needs about %.2f GB of HBM (%s%s, activations), more than the %.2f GB allowed (free "
                       "%.2f GB): %s",
                       (need_hbm + (dp ? 0 : need_stage)) / 1e9, dp ? "the HBM rows and KV entries" : what,
                       dp ? "" : ", staging", cap / 1e9, fr / 1e9,
                       dp ? "offload more (a higher ratio), or a smaller batch"
                          : "run fewer layers (--layers), a smaller batch, or a deployment of one placement");
    for (uint32_t t = 0; oo.prompt_ids && t < oo.prompt_n; t++)
        if (oo.prompt_ids[t] < 0 || (uint64_t)oo.prompt_ids[t] >= m->cfg.vocab)
            return cm_fail(err, "engine: prompt token %d at position %u: expected 0..%llu (the vocabulary)",
                           oo.prompt_ids[t], t, (unsigned long long)m->cfg.vocab - 1);
    if (oo.load_pin > DAK_ENG_PIN_ALLOC)
        return cm_fail(err, "engine: load_pin %u: expected 0 (register the host rows) or 1 (cudaHostAlloc them)",
                       oo.load_pin);
    if (oo.norm_trigger > 2)
        return cm_fail(err, "engine: norm_trigger %u: expected 0 (top), 1 (loads done) or 2 (stores issued)",
                       oo.norm_trigger);
    if (oo.gemm_whole > DAK_ENG_WHOLE_ON)
        return cm_fail(err, "engine: gemm_whole %u: expected 0 (the GEMM's choice), 1 (off) or 2 (wherever whole-K "
                            "tiles apply)", oo.gemm_whole);
    if (oo.gemm_whole_cluster > 1)
        return cm_fail(err, "engine: gemm_whole_cluster %u: expected 0 (the GEMM's choice) or 1 (no multicast)",
                       oo.gemm_whole_cluster);
    if (oo.gemm_whole_swap > 3)
        return cm_fail(err, "engine: gemm_whole_swap %u: expected 0 (the GEMM's choice), 1 (never), 2 (wherever it "
                            "applies) or 3 (wherever k_whole does not)", oo.gemm_whole_swap);
    if (oo.fuse_qkv && ((oo.diag_skip | oo.diag_empty) >> DAK_ENG_OP_QKV_POST & 1u))
        return cm_fail(err, "engine: diag_skip / diag_empty of qkv_post with fuse_qkv: the fused step has no "
                            "qkv_post kernel to leave out (expected fuse_qkv 0)");
    if (oo.prompt_ids && oo.prompt_n > max_len)
        return cm_fail(err, "engine: a prompt of %u tokens for %u positions", oo.prompt_n, max_len);
    dak_engine *e = (dak_engine *)cm_calloc(1, sizeof *e);
    e->m = *m, e->batch = batch, e->max_len = max_len, e->seed = seed, e->o = oo;
    e->o.deploy = NULL, e->o.prompt_ids = NULL; /* the caller's placement and prompt are read here only */
    e->hbm_cap = cap;
    const dak_model_config *c = &m->cfg;
    e->opt = c->arch == DAK_ARCH_OPT;
    e->L = (uint32_t)c->layers, e->H = (uint32_t)c->hidden, e->Hq = (uint32_t)(c->heads * 128),
    e->Hkv = (uint32_t)(c->kv_heads * 128), e->F = (uint32_t)c->ffn, e->V = (uint32_t)c->vocab, e->Vp = m->vocab_pad;
    uint32_t B = batch, L = e->L, H = e->H, F = e->F;
    uint16_t *scratch = NULL, *packed = NULL;
    size_t scratch_n = 0;
    int ahead = 0;
    bench_progress_t prog;
    if (cudaStreamCreateWithFlags(&e->st, cudaStreamNonBlocking) != cudaSuccess ||
        cudaStreamCreateWithFlags(&e->cp, cudaStreamNonBlocking) != cudaSuccess) {
        dak_engine_destroy(e);
        return cm_fail(err, "engine: cudaStreamCreate failed");
    }
    {
        cudaEvent_t *ev[] = {&e->ev0, &e->ev1, &e->ev_um};
        for (int i = 0; i < 3; i++)
            if (cudaEventCreate(ev[i]) != cudaSuccess) {
                dak_engine_destroy(e);
                return cm_fail(err, "engine: cudaEventCreate failed");
            }
        cudaEvent_t *evn[] = {&e->ev_start, &e->ev_cpdone, &e->ev_ready[0], &e->ev_ready[1], &e->ev_free[0],
                              &e->ev_free[1]};
        for (int i = 0; i < 6; i++)
            if (cudaEventCreateWithFlags(evn[i], cudaEventDisableTiming) != cudaSuccess) {
                dak_engine_destroy(e);
                return cm_fail(err, "engine: cudaEventCreate failed");
            }
    }
    if (dak_gemm_ctx_create(&e->g, err) || dak_attn_ctx_create(&e->a, err)) goto fail;
    e->lin = (lin_t *)cm_calloc((size_t)L * NW, sizeof(lin_t));
    /* every layer's matrices have the same shapes: layer 0's, and the largest sizes the scratch and buffers */
    scratch_n = (size_t)e->Vp * H;
    e->Mmax = e->Vp > H ? e->Vp : H;
    for (uint32_t l = 0; l < L; l++)
        for (uint32_t j = 0; j < NW; j++) {
            lin_t *w = &e->lin[l * NW + j];
            dak_eng_stack_shape(m, j, &w->M, &w->K);
            w->kind = lin_kind[j];
            if ((size_t)w->M * w->K > scratch_n) scratch_n = (size_t)w->M * w->K;
            if (w->M > e->Mmax) e->Mmax = w->M;
            w->h_rows = dp ? dak_eng_stack_rows_host(m, dp, l, j) : w->M; /* a deployment: its rows in each tier */
            w->d_from = dp ? w->h_rows : 0;
        }
    e->lm.M = e->Vp, e->lm.K = H, e->lm.kind = DAK_ENG_OP_LM_HEAD;
    e->lm.h_rows = dp ? dp->lm_rows_host : e->lm.M, e->lm.d_from = dp ? e->lm.h_rows : 0;
    /* the host rows' ranges pinned ahead of the load (cudaHostAlloc, or synthetic weights copied back from the GPU)
     * or behind it (a checkpoint's rows packed on the CPU into memory not yet registered) */
    ahead = oo.load_pin == DAK_ENG_PIN_ALLOC || !oo.ckpt;
    if (pin_layout(e, err)) goto fail;
    if (ahead) pin_post(e, L + 1);
    if (oo.load_pin == DAK_ENG_PIN_REGISTER)
        for (uint32_t i = 0; i <= L; i++) pin_carve(e, i);
    if (dmalloc(e, (void **)&scratch, scratch_n * 2, err) || dmalloc(e, (void **)&packed, scratch_n * 2, err)) goto fail;
    if (oo.verbose) bench_progress_start(&prog, oo.ckpt ? "engine: checkpoint weights (layers)" : "engine: synthetic weights (layers)", L);
    for (uint32_t l = 0; l < L; l++) {
        if (ahead && pin_wait(e, l, err)) goto fail;
        if (oo.load_pin == DAK_ENG_PIN_ALLOC) pin_carve(e, l);
        for (uint32_t j = 0; j < NW; j++) {
            lin_t *w = &e->lin[l * NW + j];
            uint32_t part[3], np = dak_eng_stack_parts(&e->m, j, part);
            if (c->bias && dmalloc(e, (void **)&w->bias, (size_t)w->M * 4, err)) goto fail;
            if (fill_rows(e, l, j, scratch, w->M, w, err)) goto fail;
            size_t row0 = 0;
            for (uint32_t p = 0; p < np && c->bias; p++) { /* each stacked part's bias: its own tensor */
                uint32_t Mp, Kp;
                dak_eng_lin_shape(m, part[p], &Mp, &Kp);
                if (put_f32(e, dak_eng_tensor(l, DAK_ENG_I_BIAS0 + part[p]), w->bias + row0, err)) goto fail;
                row0 += Mp;
            }
            const double t0 = bench_now_s();
            if (cudaStreamSynchronize(e->st) != cudaSuccess) {
                cm_fail(err, "engine: fill failed");
                goto fail;
            }
            e->lt.wait_s += bench_now_s() - t0;
            if (lin_store(e, w, scratch, packed, !oo.ckpt, err)) goto fail;
        }
        if (!ahead) pin_post(e, l + 1); /* its rows are written: registered while the next layer loads */
        if (oo.verbose) bench_progress(&prog, l + 1);
    }
    if (oo.verbose) bench_progress_end(&prog, L);
    {
        float **np[4] = {&e->n1g, &e->n1b, &e->n2g, &e->n2b};
        uint32_t items[4] = {DAK_ENG_I_N1_G, DAK_ENG_I_N1_B, DAK_ENG_I_N2_G, DAK_ENG_I_N2_B};
        /* the norms' gains and (OPT) betas; Llama's betas stay zero */
        for (int q = 0; q < 4; q++) {
            if (dmalloc(e, (void **)np[q], (size_t)L * H * 4, err)) goto fail;
            if (cudaMemsetAsync(*np[q], 0, (size_t)L * H * 4, e->st) != cudaSuccess) goto fail;
            if (q % 2 && !e->opt) continue;
            for (uint32_t l = 0; l < L; l++)
                if (put_f32(e, dak_eng_tensor(l, items[q]), *np[q] + (size_t)l * H, err)) goto fail;
        }
        if (dmalloc(e, (void **)&e->nfg, H * 4, err) || dmalloc(e, (void **)&e->nfb, H * 4, err) ||
            put_f32(e, DAK_ENG_T_NF_G, e->nfg, err))
            goto fail;
        if (e->opt) {
            if (put_f32(e, DAK_ENG_T_NF_B, e->nfb, err)) goto fail;
        } else if (cudaMemsetAsync(e->nfb, 0, H * 4, e->st) != cudaSuccess)
            goto fail;
    }
    {
        /* embedding, row-major (the gather).  OPT: all of it in HBM (tied: its packed copy is lm_head); Llama: rows
         * [0, emb_h_rows) pinned, [emb_d_from, V) in HBM (the full engine: all in both) */
        e->emb_h_rows = e->opt ? 0 : dp ? dp->embed_rows_host : e->V;
        e->emb_d_from = e->opt || !dp ? 0 : dp->embed_rows_host;
        if (dmalloc(e, (void **)&e->emb_dev, (size_t)(e->V - e->emb_d_from) * H * 2, err)) goto fail;
        if (put_bf16(e, DAK_ENG_T_EMBED, e->V, packed, NULL, err)) goto fail;
        if (cudaMemcpyAsync(e->emb_dev, packed + (size_t)e->emb_d_from * H, (size_t)(e->V - e->emb_d_from) * H * 2,
                            cudaMemcpyDeviceToDevice, e->st) != cudaSuccess)
            goto fail;
        if (!e->opt) {
            if (hmalloc(e, (void **)&e->emb_host, (size_t)e->emb_h_rows * H * 2, &e->lt.pin_s, err)) goto fail;
            e->lt.pinned_bytes += (double)e->emb_h_rows * H * 2;
            if (cudaMemcpyAsync(e->emb_host, packed, (size_t)e->emb_h_rows * H * 2, cudaMemcpyDeviceToHost, e->st) !=
                cudaSuccess)
                goto fail;
        } else {
            size_t np = (size_t)(max_len + DAK_ENG_OPT_POS_OFFSET) * H;
            if (dmalloc(e, (void **)&e->pos_dev, np * 2, err) ||
                put_bf16(e, DAK_ENG_T_POS, max_len + DAK_ENG_OPT_POS_OFFSET, e->pos_dev, NULL, err))
                goto fail;
        }
        lin_t *w = &e->lm;
        if (ahead && pin_wait(e, L, err)) goto fail;
        if (oo.load_pin == DAK_ENG_PIN_ALLOC) pin_carve(e, L);
        if (fill_rows(e, L, 0, scratch, w->M, w, err)) goto fail;
        const double t0 = bench_now_s();
        if (cudaStreamSynchronize(e->st) != cudaSuccess) {
            cm_fail(err, "engine: fill failed");
            goto fail;
        }
        e->lt.wait_s += bench_now_s() - t0;
        if (lin_store(e, w, scratch, packed, !oo.ckpt, err)) goto fail;
        if (!ahead) pin_post(e, L + 1);
    }
    if (!e->opt) {
        /* rotary tables, the reference's values */
        size_t nt = (size_t)max_len * 64;
        float *hc = (float *)cm_malloc(nt * 4), *hs = (float *)cm_malloc(nt * 4);
        for (uint32_t p = 0; p < max_len; p++)
            for (uint32_t i = 0; i < 64; i++) dak_eng_rope_cs(p, i, DAK_ENG_HEAD_DIM, &hc[p * 64 + i], &hs[p * 64 + i]);
        int bad = dmalloc(e, (void **)&e->cs, nt * 4, err) || dmalloc(e, (void **)&e->sn, nt * 4, err) ||
                  cudaMemcpy(e->cs, hc, nt * 4, cudaMemcpyHostToDevice) != cudaSuccess ||
                  cudaMemcpy(e->sn, hs, nt * 4, cudaMemcpyHostToDevice) != cudaSuccess;
        free(hc), free(hs);
        if (bad) goto fail;
    }
    {
        size_t ent = kv_entry(e) * 2; /* bytes */
        e->kv_h = (uint32_t *)cm_calloc(L, sizeof(uint32_t));
        e->kv_d = (uint32_t *)cm_calloc(L, sizeof(uint32_t));
        e->kh = (uint16_t **)cm_calloc(L, sizeof(void *));
        e->vh = (uint16_t **)cm_calloc(L, sizeof(void *));
        e->kd = (uint16_t **)cm_calloc(L, sizeof(void *));
        e->vd = (uint16_t **)cm_calloc(L, sizeof(void *));
        e->kv = (dak_kv_tiered *)cm_calloc(L, sizeof(dak_kv_tiered));
        for (uint32_t l = 0; l < L; l++) {
            e->kv_h[l] = dp ? dp->batch_host[l] : B, e->kv_d[l] = dp ? dp->batch_host[l] : 0;
            size_t hb = e->kv_h[l] * ent, db = (B - e->kv_d[l]) * ent;
            if (hmalloc(e, (void **)&e->kh[l], hb, &e->lt.pin_kv_s, err) ||
                hmalloc(e, (void **)&e->vh[l], hb, &e->lt.pin_kv_s, err) ||
                dmalloc(e, (void **)&e->kd[l], db, err) || dmalloc(e, (void **)&e->vd[l], db, err))
                goto fail;
        }
    }
    {
        uint32_t Hm = e->Hq > H ? e->Hq : H;
        void **f[] = {(void **)&e->x,  (void **)&e->cqkv,   (void **)&e->co, (void **)&e->c1,
                      (void **)&e->cd, (void **)&e->logits, (void **)&e->ca, (void **)&e->cb};
        size_t fb[] = {(size_t)B * H * 4,     (size_t)B * LIN(e, 0, W_QKV)->M * 4, (size_t)B * H * 4,
                       (size_t)B * LIN(e, 0, W_IN)->M * 4, (size_t)B * H * 4, (size_t)B * e->Vp * 4,
                       (size_t)B * e->Mmax * 4, (size_t)B * e->Mmax * 4};
        for (int i = 0; i < 8; i++)
            if (dmalloc(e, f[i], fb[i], err)) goto fail;
        if (dmalloc(e, (void **)&e->hb, (size_t)B * Hm * 2, err) || dmalloc(e, (void **)&e->qb, (size_t)B * e->Hq * 2, err) ||
            dmalloc(e, (void **)&e->ab, (size_t)B * e->Hq * 2, err) || dmalloc(e, (void **)&e->fb, (size_t)B * F * 2, err) ||
            dmalloc(e, (void **)&e->prompt, (size_t)max_len * B * 4, err) || dmalloc(e, (void **)&e->tok, (size_t)B * 4, err) ||
            dmalloc(e, (void **)&e->hist, (size_t)max_len * B * 4, err))
            goto fail;
        int32_t *pt = (int32_t *)cm_malloc((size_t)max_len * B * 4);
        for (uint32_t t = 0; t < max_len; t++)
            for (uint32_t n = 0; n < B; n++)
                pt[(size_t)t * B + n] = t < oo.prompt_n && oo.prompt_ids ? oo.prompt_ids[t]
                                                                         : dak_eng_prompt_token(seed, t, n, B, e->V);
        int bad = cudaMemcpy(e->prompt, pt, (size_t)max_len * B * 4, cudaMemcpyHostToDevice) != cudaSuccess;
        free(pt);
        if (bad || cudaMemset(e->tok, 0, B * 4) != cudaSuccess) goto fail;
        e->act_grid = grid_for((size_t)B * F);
        size_t nts = ((size_t)(2 * L + 1) * B * DAK_ENG_NORM_STAMPS + (size_t)L * e->act_grid * DAK_ENG_ACT_STAMPS +
                      (size_t)L * qkvp_ctas(e) * DAK_ENG_QKVP_STAMPS +
                      (size_t)L * dak_attn_ctx_sms(e->a) * DAK_ATTN_STAMPS) * 8;
        if (oo.diag_times && (dmalloc(e, (void **)&e->dts, nts, err) || cudaMemset(e->dts, 0, nts) != cudaSuccess))
            goto fail;
    }
    {
        const double t0 = bench_now_s();
        if (cudaDeviceSynchronize() != cudaSuccess) {
            cm_fail(err, "engine: initialisation failed: %s", cudaGetErrorString(cudaGetLastError()));
            goto fail;
        }
        e->lt.wait_s += bench_now_s() - t0;
    }
    if (pin_wait(e, L, err)) goto fail; /* every range pinned */
    pin_stop(e);
    cudaFree(scratch), cudaFree(packed);
    load_release(e);
    e->hbm_bytes -= scratch_n * 4;
    e->lt.total_s = bench_now_s() - t_create;
    e->lt_create = e->lt;
    *out = e;
    return 0;
fail:
    if (!err->msg[0]) cm_fail(err, "engine: CUDA call failed: %s", cudaGetErrorString(cudaGetLastError()));
    cudaFree(scratch), cudaFree(packed);
    dak_engine_destroy(e);
    return -1;
}

/* ---- setup: views, launches, graphs -------------------------------------------------------------- */

/* w's HBM rows from row r on (r >= d_from) */
static uint16_t *dev_row(const lin_t *w, uint32_t r) { return w->dev_rows + (size_t)(r - w->d_from) * w->K; }

/* prepares w's launches (GEMMs of its kind) for B = b, C = c (fp32 [N][M]); rh within [d_from, h_rows] (setup
 * checks) */
static int prep_lin(dak_engine *e, lin_t *w, uint32_t rh, const uint16_t *b, float *c, uint16_t *stage,
                    cm_err *err)
{
    dak_gemm_opts go;
    lin_gemm_opts(e, w, rh, &go);
    /* gemm_whole_swap 3 is for a deployment's matrices in row groups: on the 64-row tiles (the full copies) k_whole_sw
     * would read pieces of boxes, and with split kernels left in the step it lost (thirty-fourth session: Llama-2-7B
     * b8 +2 % with it on ffn_in alone), so none there */
    if (go.whole_swap == 3u && !w->groups) go.whole_swap = 1u;
    w->rh = rh, w->b_in = b;
    if (e->mode == DAK_ENG_DIRECT || rh == 0) {
        /* a view of rows [0, rh) in host memory and [rh, M) in HBM */
        if (dak_tiered_view_rows(&w->view, w->M, w->K, rh, w->host_rows, rh < w->M ? dev_row(w, rh) : NULL, 1, err))
            return -1;
        w->view.group_rows = w->groups; /* (w->groups: rh is 0) */
        return dak_gemm_prepare(e->g, &w->view, b, c, e->batch, &go, &w->l, err);
    }
    dak_tiered va, vb;
    if (e->mode == DAK_ENG_UM) { /* the host rows: cuBLAS on the managed rows (run_lin); the HBM rows here */
        if (rh == w->M) return 0;
        if (dak_tiered_view(&vb, w->M - rh, w->K, 0, NULL, dev_row(w, rh), 1, err)) return -1;
        return dak_gemm_prepare(e->g, &vb, b, e->cb, e->batch, &go, &w->lb, err);
    }
    if (rh == w->M) {
        if (dak_tiered_view(&va, w->M, w->K, 0, NULL, stage, 1, err)) return -1;
        return dak_gemm_prepare(e->g, &va, b, c, e->batch, &go, &w->la, err);
    }
    if (dak_tiered_view(&va, rh, w->K, 0, NULL, stage, 1, err) ||
        dak_tiered_view(&vb, w->M - rh, w->K, 0, NULL, dev_row(w, rh), 1, err))
        return -1;
    if (dak_gemm_prepare(e->g, &va, b, e->ca, e->batch, &go, &w->la, err) ||
        dak_gemm_prepare(e->g, &vb, b, e->cb, e->batch, &go, &w->lb, err))
        return -1;
    return 0;
}

static int run_lin(dak_engine *e, lin_t *w, float *c, cm_err *err)
{
    if (w->l) return dak_gemm_run(w->l, e->st, err);
    if (e->mode == DAK_ENG_UM) { /* cuBLAS reads the managed rows: the driver faults them in */
        int whole = w->rh == w->M;
        if (dak_base_cublas(e->g, w->um_rows, w->b_in, whole ? c : e->ca, w->rh, e->batch, w->K, e->st, err))
            return -1;
        if (whole) return 0;
        if (dak_gemm_run(w->lb, e->st, err)) return -1;
    } else {
        if (w->la && !w->lb) return dak_gemm_run(w->la, e->st, err);
        if (dak_gemm_run(w->la, e->st, err) || dak_gemm_run(w->lb, e->st, err)) return -1;
    }
    size_t n = (size_t)e->batch * w->M;
    void *args[] = {&c, &e->ca, &e->cb, &w->rh, &w->M, &e->batch};
    return step_launch(e, (const void *)k_join, dim3(grid_for(n)), NTHR, args, err);
}

/* host KV entries of layer l as the step uses them: the placement's, but none for the unified-memory baseline
 * (its KV cache stays in HBM) */
static uint32_t kv_bh(const dak_engine *e, uint32_t l) { return e->mode == DAK_ENG_UM ? 0 : e->pl.batch_host[l]; }

/* the stamps of norm `idx` of the step (2l, 2l + 1: layer l's; 2L: the final one) or activation l; NULL without
 * dak_eng_opts.diag_times */
static uint64_t *norm_ts(const dak_engine *e, uint32_t idx)
{
    return e->dts ? e->dts + (size_t)idx * e->batch * DAK_ENG_NORM_STAMPS : NULL;
}
static uint64_t *act_ts(const dak_engine *e, uint32_t l)
{
    return e->dts ? norm_ts(e, 2 * e->L + 1) + (size_t)l * e->act_grid * DAK_ENG_ACT_STAMPS : NULL;
}
/* q/k/v post-processing's and the attention's stamps of layer l (diag_times; NULL without) */
static uint64_t *qkvp_ts(const dak_engine *e, uint32_t l)
{
    return e->dts ? act_ts(e, e->L) + (size_t)l * qkvp_ctas(e) * DAK_ENG_QKVP_STAMPS : NULL;
}
static uint64_t *attn_ts(const dak_engine *e, uint32_t l)
{
    return e->dts ? qkvp_ts(e, e->L) + (size_t)l * dak_attn_ctx_sms(e->a) * DAK_ATTN_STAMPS : NULL;
}

/* The attention plans of layer l at position t (len t + 1), in the order attn() runs them: one over the tiered
 * cache; in prefetch mode with host entries, one over the staged host entries and, if any, one over the HBM
 * entries.  dak_engine_setup sizes the attention's workspace from the same plans. */
static int attn_plans(dak_engine *e, uint32_t l, uint32_t t, dak_attn_plan p[2], uint32_t *np, cm_err *err)
{
    const dak_model_config *c = &e->m.cfg;
    uint32_t heads = (uint32_t)c->heads, kvh = (uint32_t)c->kv_heads, len = t + 1, B = e->batch;
    uint32_t bh = kv_bh(e, l), sms = dak_attn_ctx_sms(e->a);
    dak_attn_opts o;
    dak_attn_opts_default(&o);
    o.pdl = e->o.kernel_pdl ? 1 : 0; /* with the step's small kernels (see STEP_KERNEL_TRIGGER) */
    *np = 1;
    if (e->mode == DAK_ENG_DIRECT || bh == 0) return dak_attn_plan_make(B, bh, heads, kvh, len, sms, &o, &p[0], err);
    if (dak_attn_plan_make(bh, 0, heads, kvh, len, sms, &o, &p[0], err)) return -1;
    if (bh == B) return 0;
    *np = 2;
    return dak_attn_plan_make(B - bh, 0, heads, kvh, len, sms, &o, &p[1], err);
}

/* one attention call of layer l over the sequences [e0, e0 + plan's batch) whose cache is kv, len t + 1: q from e->qb
 * (k_qkv_post wrote it and the new k, v), or with dak_eng_opts.fuse_qkv straight from the QKV GEMM's output, the new
 * k, v into kv or, where k_new is given, there (dak_attn_decode_qkv) */
static int attn_call(dak_engine *e, uint32_t l, const dak_kv_tiered *kv, uint32_t e0, uint16_t *k_new, uint16_t *v_new,
                     uint32_t len, const dak_attn_plan *p, cm_err *err)
{
    const uint32_t heads = (uint32_t)e->m.cfg.heads;
    const float scale = 1.0f / sqrtf(128.0f);
    uint16_t *out = e->ab + (size_t)e0 * e->Hq;
    if (!e->o.fuse_qkv) return dak_attn_decode(e->a, kv, e->qb + (size_t)e0 * e->Hq, heads, len, scale, out, p, e->st, err);
    const lin_t *w = LIN(e, l, W_QKV);
    dak_attn_qkv z;
    memset(&z, 0, sizeof z);
    z.c = e->cqkv + (size_t)e0 * w->M, z.bias = w->bias, z.cs = e->cs, z.sn = e->sn, z.ld = w->M;
    z.k_new = k_new, z.v_new = v_new;
    return dak_attn_decode_qkv(e->a, kv, &z, heads, len, scale, out, p, e->st, err);
}

/* the attention of layer l at position t (len t + 1) */
static int attn(dak_engine *e, uint32_t l, uint32_t t, cm_err *err)
{
    uint32_t kvh = (uint32_t)e->m.cfg.kv_heads, len = t + 1, np;
    uint32_t bh = kv_bh(e, l);
    dak_attn_plan p[2];
    if (attn_plans(e, l, t, p, &np, err)) return -1;
    if (e->mode == DAK_ENG_DIRECT || bh == 0) {
        if (e->mode == DAK_ENG_DIRECT) p[0].diag_ts = attn_ts(e, l); /* dak_engine_stamps reads direct runs */
        return attn_call(e, l, &e->kv[l], 0, NULL, NULL, len, &p[0], err);
    }
    /* prefetch: the staged host entries (fused: the new k, v into the host tier, which the next step's copy reads;
     * the staged copy's row is patched in the kernel's ring, so it needs no store), then the HBM entries */
    size_t ent = kv_entry(e);
    dak_kv_tiered v;
    if (dak_kv_view(&v, bh, kvh, e->max_len, 0, NULL, NULL, e->sk[l % 2], e->sv[l % 2], err) ||
        attn_call(e, l, &v, 0, e->kv[l].k_host_dev, e->kv[l].v_host_dev, len, &p[0], err))
        return -1;
    if (np == 2) {
        size_t d0 = (bh - e->kv_d[l]) * ent; /* the first HBM entry held is kv_d[l] */
        if (dak_kv_view(&v, e->batch - bh, kvh, e->max_len, 0, NULL, NULL, e->kd[l] + d0, e->vd[l] + d0, err) ||
            attn_call(e, l, &v, bh, NULL, NULL, len, &p[1], err))
            return -1;
    }
    return 0;
}

/* prefetch: copies of layer l's host rows (l == L: lm_head's) and host KV entries into staging set l % 2 */
static int enqueue_copy(dak_engine *e, uint32_t l, uint32_t t, cm_err *err)
{
    int s = l % 2;
    ECU(cudaStreamWaitEvent(e->cp, l < 2 ? e->ev_start : e->ev_free[s], 0));
    if (l == e->L) {
        if (e->lm.rh)
            ECU(cudaMemcpyAsync(e->slm, e->lm.host_rows, (size_t)e->lm.rh * e->lm.K * 2, cudaMemcpyHostToDevice, e->cp));
    } else {
        for (uint32_t j = 0; j < NW; j++) {
            lin_t *w = LIN(e, l, j);
            if (w->rh)
                ECU(cudaMemcpyAsync(e->sw[s][j], w->host_rows, (size_t)w->rh * w->K * 2, cudaMemcpyHostToDevice, e->cp));
        }
        uint32_t bh = e->pl.batch_host[l];
        if (bh && t) {
            size_t pitch = (size_t)e->max_len * 256, rows = (size_t)bh * e->m.cfg.kv_heads;
            ECU(cudaMemcpy2DAsync(e->sk[s], pitch, e->kh[l], pitch, (size_t)t * 256, rows, cudaMemcpyHostToDevice, e->cp));
            ECU(cudaMemcpy2DAsync(e->sv[s], pitch, e->vh[l], pitch, (size_t)t * 256, rows, cudaMemcpyHostToDevice, e->cp));
        }
    }
    ECU(cudaEventRecord(e->ev_ready[s], e->cp));
    return 0;
}

/* the breakdown's stamp after an operation of this kind (nothing unless a breakdown is being captured) */
static int mark(dak_engine *e, dak_eng_op kind, double bytes, cm_err *err)
{
    if (!e->bk_on) return 0;
    if (e->bk_n >= e->bk_cap) return cm_fail(err, "engine: breakdown: more than %u operations in a step", e->bk_cap);
    ECU(cudaEventRecordWithFlags(e->bk_ev[e->bk_n], e->st, cudaEventRecordExternal));
    e->bk_kind[e->bk_n] = (uint8_t)kind, e->bk_bytes[e->bk_n] = bytes;
    e->bk_n++;
    return 0;
}

static double lin_bytes(const lin_t *w) { return 2.0 * w->M * w->K; }


/* x += c + bias (c NULL: no add), hb = bf16(norm(x)) over the batch (k_resid_norm); norm idx of the step */
static int resid_norm(dak_engine *e, uint32_t idx, const float *c, const float *bias, const float *gamma,
                      const float *beta, cm_err *err)
{
    float eps = DAK_ENG_EPS;
    uint64_t *ts = norm_ts(e, idx);
    void *args[] = {&e->x, &c, &bias, &gamma, &beta, &e->hb, &e->H, &eps, &ts, &e->o.norm_trigger};
    return step_launch(e, resid_norm_kernel(e->H, e->o.norm_narrow), dim3(e->batch), norm_threads(e->H, e->o.norm_narrow),
                       args, err);
}

/* diagnostics (dak_eng_opts.diag_skip, diag_empty): 1 when kind k's kernels stay out of the step; with diag_empty an
 * empty kernel (k_noop: trigger and wait) takes each one's place in the chain (a failed launch fails the capture) */
static int left_out(dak_engine *e, dak_eng_op k)
{
    if (!(((e->o.diag_skip | e->o.diag_empty) >> k) & 1u)) return 0;
    if ((e->o.diag_empty >> k) & 1u) {
        cm_err ignored;
        step_launch(e, (const void *)k_noop, dim3(1), 32, NULL, &ignored);
    }
    return 1;
}

/* k_qkv_post of layer l at position t: bias, rotary, q to e->qb, the new k, v into the cache (and the staging) */
static int qkv_post(dak_engine *e, uint32_t l, uint32_t t, cm_err *err)
{
    const dak_model_config *c = &e->m.cfg;
    const lin_t *wqkv = LIN(e, l, W_QKV);
    qkv_args a;
    memset(&a, 0, sizeof a);
    a.c = e->cqkv, a.bias = wqkv->bias, a.ld = wqkv->M;
    a.cs = e->cs, a.sn = e->sn, a.q = e->qb;
    a.k_host = e->kv[l].k_host_dev, a.v_host = e->kv[l].v_host_dev;
    a.k_dev = e->kv[l].k_dev, a.v_dev = e->kv[l].v_dev;
    if (e->mode == DAK_ENG_PREFETCH && e->pl.batch_host[l]) a.k_stage = e->sk[l % 2], a.v_stage = e->sv[l % 2];
    a.heads = (uint32_t)c->heads, a.kvh = (uint32_t)c->kv_heads, a.max_len = e->max_len;
    a.bh = kv_bh(e, l), a.pos = t, a.ts = qkvp_ts(e, l);
    void *qargs[] = {&a};
    return step_launch(e, (const void *)k_qkv_post, dim3(e->batch, a.heads + a.kvh), 64, qargs, err);
}

static int enqueue_step(dak_engine *e, uint32_t t, cm_err *err)
{
/* dak_eng_opts.diag_skip / diag_empty: the kind's kernels left out of the step, or an empty kernel in their place */
#define SKIP(kind) left_out(e, DAK_ENG_OP_##kind)
    const dak_model_config *c = &e->m.cfg;
    uint32_t B = e->batch, H = e->H, L = e->L;
    int pf = e->mode == DAK_ENG_PREFETCH;
    const int32_t *src = t < e->P ? e->prompt + (size_t)t * B : e->tok;
    if (mark(e, DAK_ENG_NOPS, 0, err)) return -1; /* the start */
    {
        const uint16_t *eh = e->emb_host, *ed = e->emb_dev, *pos = e->opt ? e->pos_dev : NULL;
        uint32_t rows_host = e->opt ? 0 : e->pl.embed_rows_host, pos_row = t + DAK_ENG_OPT_POS_OFFSET;
        void *args[] = {&e->x, &src, &eh, &ed, &rows_host, &e->emb_d_from, &pos, &pos_row, &e->H, &e->V};
        if ((!SKIP(EMBED) && step_launch(e, (const void *)k_embed, dim3(B), NTHR, args, err)) || mark(e, DAK_ENG_OP_EMBED, 0, err))
            return -1;
    }
    if (pf) {
        ECU(cudaEventRecord(e->ev_start, e->st));
        if (enqueue_copy(e, 0, t, err)) return -1;
    }
    for (uint32_t l = 0; l < L; l++) {
        if (pf) {
            if (enqueue_copy(e, l + 1, t, err)) return -1;
            ECU(cudaStreamWaitEvent(e->st, e->ev_ready[l % 2], 0));
            if (mark(e, DAK_ENG_OP_WAIT, 0, err)) return -1;
        }
        const float *prev_c = l ? e->cd : NULL, *prev_b = l ? LIN(e, l - 1, W_OUT)->bias : NULL;
        if ((!SKIP(NORM) &&
             resid_norm(e, 2 * l, prev_c, prev_b, e->n1g + (size_t)l * H, e->opt ? e->n1b + (size_t)l * H : NULL, err)) ||
            mark(e, DAK_ENG_OP_NORM, 0, err))
            return -1;
        lin_t *wqkv = LIN(e, l, W_QKV);
        if ((!SKIP(QKV) && run_lin(e, wqkv, e->cqkv, err)) || mark(e, DAK_ENG_OP_QKV, lin_bytes(wqkv), err)) return -1;
        /* fuse_qkv: no qkv_post, the attention reads e->cqkv (attn_call) */
        if (!e->o.fuse_qkv && ((!SKIP(QKV_POST) && qkv_post(e, l, t, err)) || mark(e, DAK_ENG_OP_QKV_POST, 0, err)))
            return -1;
        if ((!SKIP(ATTN) && attn(e, l, t, err)) ||
            mark(e, DAK_ENG_OP_ATTN, 2.0 * B * c->kv_heads * (t + 1.0) * DAK_ENG_HEAD_DIM * 2, err) ||
            (!SKIP(O) && run_lin(e, LIN(e, l, W_O), e->co, err)) || mark(e, DAK_ENG_OP_O, lin_bytes(LIN(e, l, W_O)), err))
            return -1;
        if ((!SKIP(NORM) && resid_norm(e, 2 * l + 1, e->co, LIN(e, l, W_O)->bias, e->n2g + (size_t)l * H,
                                       e->opt ? e->n2b + (size_t)l * H : NULL, err)) ||
            mark(e, DAK_ENG_OP_NORM, 0, err))
            return -1;
        size_t nf = (size_t)B * e->F;
        if ((!SKIP(FFN_IN) && run_lin(e, LIN(e, l, W_IN), e->c1, err)) || mark(e, DAK_ENG_OP_FFN_IN, lin_bytes(LIN(e, l, W_IN)), err))
            return -1;
        const float *c1 = e->c1, *b1 = LIN(e, l, W_IN)->bias;
        int gated = !e->opt;
        uint64_t *ats = act_ts(e, l);
        void *aargs[] = {&c1, &b1, &e->fb, &nf, &e->F, &gated, &ats};
        if ((!SKIP(ACT) && step_launch(e, (const void *)k_act, dim3(e->act_grid), NTHR, aargs, err)) ||
            mark(e, DAK_ENG_OP_ACT, 0, err) || (!SKIP(FFN_OUT) && run_lin(e, LIN(e, l, W_OUT), e->cd, err)) ||
            mark(e, DAK_ENG_OP_FFN_OUT, lin_bytes(LIN(e, l, W_OUT)), err))
            return -1;
        if (pf) ECU(cudaEventRecord(e->ev_free[l % 2], e->st));
    }
    if (pf) {
        ECU(cudaStreamWaitEvent(e->st, e->ev_ready[L % 2], 0));
        if (mark(e, DAK_ENG_OP_WAIT, 0, err)) return -1;
    }
    if ((!SKIP(NORM) && resid_norm(e, 2 * L, e->cd, LIN(e, L - 1, W_OUT)->bias, e->nfg, e->opt ? e->nfb : NULL, err)) ||
        mark(e, DAK_ENG_OP_NORM, 0, err) || (!SKIP(LM_HEAD) && run_lin(e, &e->lm, e->logits, err)) ||
        mark(e, DAK_ENG_OP_LM_HEAD, lin_bytes(&e->lm), err))
        return -1;
    {
        const float *lg = e->logits;
        int32_t *hist = e->hist + (size_t)t * B;
        void *args[] = {&lg, &e->Vp, &e->V, &e->tok, &hist};
        if ((!SKIP(ARGMAX) && step_launch(e, (const void *)k_argmax, dim3(B), NTHR, args, err)) ||
            mark(e, DAK_ENG_OP_ARGMAX, 0, err))
            return -1;
    }
    if (pf) {
        ECU(cudaEventRecord(e->ev_cpdone, e->cp));
        ECU(cudaStreamWaitEvent(e->st, e->ev_cpdone, 0));
        if (mark(e, DAK_ENG_OP_WAIT, 0, err)) return -1;
    }
    return 0;
#undef SKIP
}

/* Unified memory: the managed rows back to the CPU, on the step's stream (nothing when there are none).  Every
 * step starts with all of them in host memory, as under an oversubscribed GPU that evicts the rows it just used
 * (the eviction that keeps the HBM share resident; LRU would move the whole model: NOTES-dak-engine.md,
 * session 21), and the push-back's time is the step's, as an eviction costs the link in real oversubscription. */
static cudaError_t um_push_back(dak_engine *e)
{
    if (!e->um_bytes) return cudaSuccess;
    cudaMemLocation host;
    memset(&host, 0, sizeof host);
    host.type = cudaMemLocationTypeHost;
    return cudaMemPrefetchAsync(e->um, e->um_bytes, host, 0, e->st);
}

/* Unified memory: allocates the managed rows of placement e->pl (dak_eng_um_bytes' layout), fills them with the
 * matrices' host rows (row-major, for cuBLAS) and pushes them to the CPU.  Refused past a quarter of the HBM free
 * (or the um_cap): managed memory beyond what the GPU holds can hang it, and this baseline emulates the faults of
 * oversubscription without oversubscribing. */
static int um_setup(dak_engine *e, cm_err *err)
{
    double moved, need = dak_eng_um_bytes(&e->m, &e->pl, &moved);
    for (uint32_t i = 0; i <= e->L * NW; i++) {
        lin_t *w = i < e->L * NW ? &e->lin[i] : &e->lm;
        w->um_rows = NULL, w->rh_um = 0;
    }
    if (need == 0) return 0; /* nothing in host memory: the steps run as direct access with every row in HBM */
    int dev = 0, cma = 0;
    ECU(cudaGetDevice(&dev));
    ECU(cudaDeviceGetAttribute(&cma, cudaDevAttrConcurrentManagedAccess, dev));
    if (!cma)
        return cm_fail(err, "engine: the unified-memory baseline needs a GPU with concurrent managed access (page "
                            "faults); this one has none");
    size_t fr = 0, tot = 0;
    ECU(cudaMemGetInfo(&fr, &tot));
    double lim = (double)fr / 4;
    const char *what = "a quarter of the HBM free";
    if (e->o.um_cap && (double)e->o.um_cap < lim) lim = (double)e->o.um_cap, what = "the managed-memory cap (um_cap)";
    if (need > lim)
        return cm_fail(err,
                       "engine: the unified-memory baseline needs %.3f GB of managed memory (this placement's host "
                       "rows), more than %s, %.3f GB (%.2f GB of HBM free): managed memory past what the GPU holds "
                       "can hang it; lower the ratio or run fewer layers (--layers)",
                       need / 1e9, what, lim / 1e9, fr / 1e9);
    if ((double)e->hbm_bytes + need > e->hbm_cap)
        return cm_fail(err,
                       "engine: the unified-memory baseline's %.3f GB of managed rows, once faulted in, pass the "
                       "%.2f GB of HBM allowed (%.2f GB allocated)",
                       need / 1e9, e->hbm_cap / 1e9, e->hbm_bytes / 1e9);
    cudaError_t c = cudaMallocManaged((void **)&e->um, (size_t)need, cudaMemAttachGlobal);
    if (c != cudaSuccess) {
        e->um = NULL;
        return cm_fail(err, "engine: cudaMallocManaged of %.3f GB: %s", need / 1e9, cudaGetErrorString(c));
    }
    e->um_bytes = (size_t)need, e->um_moved = moved;
    size_t off = 0;
    for (uint32_t l = 0; l <= e->L; l++)
        for (uint32_t j = 0; j < (l < e->L ? NW : 1u); j++) {
            lin_t *w = l < e->L ? LIN(e, l, j) : &e->lm;
            uint32_t rows = l < e->L ? dak_eng_stack_rows_host(&e->m, &e->pl, l, j) : e->pl.lm_rows_host;
            w->um_rows = NULL;
            if (!rows) continue;
            w->um_rows = e->um + off / 2, w->rh_um = rows;
            if (fill_rows(e, l, j, w->um_rows, rows, NULL, err)) return -1;
            off += round_up((size_t)rows * w->K * 2, DAK_ENG_UM_ALIGN);
        }
    if (off != e->um_bytes)
        return cm_fail(err, "engine: managed rows laid out in %zu bytes, dak_eng_um_bytes says %zu", off, e->um_bytes);
    ECU(cudaGetLastError());
    /* every cuBLAS call once before the steps' capture (its heuristics and workspace set up outside a capture, as
     * the GEMM bench warms its captured baselines), on the rows still resident; inputs and outputs are scratch */
    uint32_t Hm = e->Hq > e->H ? e->Hq : e->H;
    for (uint32_t i = 0; i <= e->L * NW; i++) {
        lin_t *w = i < e->L * NW ? &e->lin[i] : &e->lm;
        if (w->um_rows &&
            dak_base_cublas(e->g, w->um_rows, w->K <= Hm ? e->hb : e->fb, e->ca, w->rh_um, e->batch, w->K, e->st, err))
            return -1;
    }
    ECU(um_push_back(e));
    ECU(cudaStreamSynchronize(e->st));
    return 0;
}

/* captures step t into *g (the breakdown's stamps when e->bk_on) */
static int capture_step(dak_engine *e, uint32_t t, cudaGraphExec_t *g, cm_err *err)
{
    ECU(cudaStreamBeginCapture(e->st, cudaStreamCaptureModeRelaxed));
    int rc = enqueue_step(e, t, err);
    cudaGraph_t cg = NULL;
    cudaError_t ce = cudaStreamEndCapture(e->st, &cg);
    if (rc) {
        if (cg) cudaGraphDestroy(cg);
        return -1;
    }
    if (ce != cudaSuccess) return cm_fail(err, "engine: capture of step %u: %s", t, cudaGetErrorString(ce));
    ce = cudaGraphInstantiate(g, cg, 0);
    cudaGraphDestroy(cg);
    if (ce != cudaSuccess) return cm_fail(err, "engine: instantiate step %u: %s", t, cudaGetErrorString(ce));
    return 0;
}

extern "C" int dak_engine_setup(dak_engine *e, const dak_eng_place *pl, dak_eng_mode mode, uint32_t prompt,
                                uint32_t tokens, cm_err *err)
{
    uint32_t L = e->L, B = e->batch;
    if (prompt < 1 || (uint64_t)prompt + tokens > e->max_len)
        return cm_fail(err, "engine: prompt %u + tokens %u: expected prompt >= 1 and a sum <= %u", prompt, tokens,
                       e->max_len);
    if (check_place(&e->m, B, pl, err)) return -1;
    if (mode != DAK_ENG_DIRECT && mode != DAK_ENG_PREFETCH && mode != DAK_ENG_UM)
        return cm_fail(err, "engine: mode %d: expected direct, prefetch or um", (int)mode);
    /* the rows and entries this engine holds in each tier (a deployment: its own placement's only) */
    for (uint32_t l = 0; l <= L; l++)
        for (uint32_t j = 0; j < (l < L ? NW : 1u); j++) {
            const lin_t *w = l < L ? LIN(e, l, j) : &e->lm;
            uint32_t rows = l < L ? dak_eng_stack_rows_host(&e->m, pl, l, j) : pl->lm_rows_host;
            if (rows > w->h_rows || rows < w->d_from)
                return cm_fail(err,
                               "engine: %s %u of layer %u: %u host rows, but this engine holds rows [0, %u) in host "
                               "memory and [%u, %u) in HBM (created as the deployment of another placement)",
                               l < L ? "weight matrix" : "lm_head", j, l, rows, w->h_rows, w->d_from, w->M);
            if (l < L && mode == DAK_ENG_UM && e->kv_d[l])
                return cm_fail(err,
                               "engine: the unified-memory baseline keeps the KV cache in HBM, but this deployment "
                               "holds layer %u's entries [0, %u) in host memory only (use the full engine)",
                               l, e->kv_d[l]);
            if (l < L && mode != DAK_ENG_UM && (pl->batch_host[l] > e->kv_h[l] || pl->batch_host[l] < e->kv_d[l]))
                return cm_fail(err,
                               "engine: layer %u: %u host KV entries, but this engine holds entries [0, %u) in host "
                               "memory and [%u, %u) in HBM (created as the deployment of another placement)",
                               l, pl->batch_host[l], e->kv_h[l], e->kv_d[l], B);
        }
    if (!e->opt && (pl->embed_rows_host > e->emb_h_rows || pl->embed_rows_host < e->emb_d_from))
        return cm_fail(err, "engine: %u host rows of the embedding, but this engine holds [0, %u) in host memory and "
                            "[%u, vocab) in HBM",
                       pl->embed_rows_host, e->emb_h_rows, e->emb_d_from);
    ECU(cudaDeviceSynchronize());
    free_graphs(e);
    free_launches(e);
    if (e->have_pl) dak_eng_place_free(&e->pl);
    /* copy the placement */
    dak_eng_place_zero(&e->m, &e->pl);
    e->have_pl = 1;
    memcpy(e->pl.rows_host, pl->rows_host, (size_t)L * DAK_ENG_NLIN * sizeof(uint32_t));
    memcpy(e->pl.batch_host, pl->batch_host, (size_t)L * sizeof(uint32_t));
    e->pl.lm_rows_host = pl->lm_rows_host, e->pl.embed_rows_host = pl->embed_rows_host;
    e->pl.host_bytes = pl->host_bytes, e->pl.host_weight_bytes = pl->host_weight_bytes;
    e->pl.host_kv_bytes = pl->host_kv_bytes;
    e->mode = mode, e->P = prompt, e->T = tokens, e->S = prompt + tokens, e->next = 0;
    /* staging (prefetch): two sets of the placement's largest host rows and host entries, grown when a placement
     * needs more (the full engine reserved room for the largest at creation) */
    if (mode == DAK_ENG_PREFETCH) {
        size_t need[NW + 2] = {0}, ent = kv_entry(e) * 2; /* bytes */
        for (uint32_t l = 0; l < L; l++) {
            for (uint32_t j = 0; j < NW; j++) {
                size_t b = (size_t)dak_eng_stack_rows_host(&e->m, pl, l, j) * LIN(e, l, j)->K * 2;
                if (b > need[j]) need[j] = b;
            }
            if (pl->batch_host[l] * ent > need[NW]) need[NW] = pl->batch_host[l] * ent;
        }
        need[NW + 1] = (size_t)pl->lm_rows_host * e->H * 2;
        double more = 0; /* buffers of a kind: a matrix's two sets, K and V of two sets, one lm_head */
        for (uint32_t j = 0; j < NW + 2; j++)
            if (need[j] > e->st_bytes[j]) more += (j < NW ? 2.0 : j == NW ? 4.0 : 1.0) * (double)(need[j] - e->st_bytes[j]);
        if (more > 0 && (double)e->hbm_bytes + more > e->hbm_cap)
            return cm_fail(err, "engine: the prefetch baseline needs %.2f GB more HBM for staging, beyond the %.2f GB "
                                "allowed (%.2f GB allocated)",
                           more / 1e9, e->hbm_cap / 1e9, e->hbm_bytes / 1e9);
        for (uint32_t j = 0; j < NW + 2; j++) {
            if (need[j] <= e->st_bytes[j]) continue;
            uint16_t **slot[2] = {j < NW ? &e->sw[0][j] : j == NW ? &e->sk[0] : &e->slm,
                                  j < NW ? &e->sw[1][j] : j == NW ? &e->sk[1] : NULL};
            for (int s = 0; s < 2; s++) {
                if (!slot[s]) continue;
                if (*slot[s]) cudaFree(*slot[s]), e->hbm_bytes -= e->st_bytes[j];
                *slot[s] = NULL;
                if (dmalloc(e, (void **)slot[s], need[j], err)) return -1;
                if (j == NW) { /* V's staging beside K's */
                    if (e->sv[s]) cudaFree(e->sv[s]), e->hbm_bytes -= e->st_bytes[j];
                    e->sv[s] = NULL;
                    if (dmalloc(e, (void **)&e->sv[s], need[j], err)) return -1;
                }
            }
            e->st_bytes[j] = need[j];
        }
    }
    /* unified memory: this placement's managed rows (a previous setup's are freed first) */
    if (e->um) cudaFree(e->um);
    e->um = NULL, e->um_bytes = 0, e->um_moved = 0;
    if (mode == DAK_ENG_UM && um_setup(e, err)) return -1;
    /* views and launches */
    for (uint32_t l = 0; l < L; l++) {
        int s = l % 2;
        const uint16_t *in[NW] = {e->hb, e->ab, e->hb, e->fb};
        float *out[NW] = {e->cqkv, e->co, e->c1, e->cd};
        for (uint32_t j = 0; j < NW; j++)
            if (prep_lin(e, LIN(e, l, j), dak_eng_stack_rows_host(&e->m, &e->pl, l, j), in[j], out[j],
                         e->sw[s][j], err))
                return -1;
        uint32_t bh = kv_bh(e, l);
        size_t d0 = (bh - e->kv_d[l]) * kv_entry(e); /* the first HBM entry held is kv_d[l] */
        if (dak_kv_view(&e->kv[l], B, (uint32_t)e->m.cfg.kv_heads, e->max_len, bh, bh ? e->kh[l] : NULL,
                        bh ? e->vh[l] : NULL, bh < B ? e->kd[l] + d0 : NULL, bh < B ? e->vd[l] + d0 : NULL, err))
            return -1;
    }
    if (prep_lin(e, &e->lm, e->pl.lm_rows_host, e->hb, e->logits, e->slm, err)) return -1;
    /* the attention's workspace, sized from every (step, layer)'s plans and reserved outside the capture */
    {
        size_t wf = 0, wc = 0;
        for (uint32_t t = 0; t < e->S; t++)
            for (uint32_t l = 0; l < L; l++) {
                dak_attn_plan p[2];
                uint32_t np;
                if (attn_plans(e, l, t, p, &np, err)) return -1;
                for (uint32_t i = 0; i < np; i++) dak_attn_plan_ws_max(&p[i], &wf, &wc);
            }
        if (dak_attn_ctx_reserve(e->a, wf, wc, err)) return -1;
    }
    ECU(cudaStreamSynchronize(e->st));
    /* one graph per step */
    e->ge = (cudaGraphExec_t *)cm_calloc(e->S, sizeof(cudaGraphExec_t));
    for (uint32_t t = 0; t < e->S; t++)
        if (capture_step(e, t, &e->ge[t], err)) return -1;
    /* a fresh cache */
    for (uint32_t l = 0; l < L; l++) {
        size_t ent = kv_entry(e) * 2; /* bytes */
        memset(e->kh[l], 0, e->kv_h[l] * ent), memset(e->vh[l], 0, e->kv_h[l] * ent);
        ECU(cudaMemset(e->kd[l], 0, (B - e->kv_d[l]) * ent));
        ECU(cudaMemset(e->vd[l], 0, (B - e->kv_d[l]) * ent));
    }
    ECU(cudaMemset(e->hist, 0xff, (size_t)e->max_len * B * 4));
    ECU(cudaDeviceSynchronize());
    return 0;
}

extern "C" int dak_engine_step(dak_engine *e, uint32_t t, int sync, cm_err *err)
{
    if (!e->ge || t != e->next || t >= e->S)
        return cm_fail(err, "engine: step %u: expected step %u of %u (after dak_engine_setup)", t, e->next, e->S);
    ECU(um_push_back(e));
    ECU(cudaGraphLaunch(e->ge[t], e->st));
    e->next++;
    if (sync) {
        cudaError_t c = cudaStreamSynchronize(e->st);
        if (c != cudaSuccess) return cm_fail(err, "engine: step %u failed: %s", t, cudaGetErrorString(c));
    }
    return 0;
}

extern "C" int dak_engine_kv(dak_engine *e, uint32_t layer, uint16_t *k, uint16_t *v, cm_err *err)
{
    if (!e->ge) return cm_fail(err, "engine: kv: no setup");
    if (layer >= e->L) return cm_fail(err, "engine: kv: layer %u of %u", layer, e->L);
    ECU(cudaStreamSynchronize(e->st));
    const dak_kv_tiered *kv = &e->kv[layer];
    const size_t ent = kv_entry(e), hn = kv->batch_host * ent, dn = (e->batch - kv->batch_host) * ent;
    if (hn) memcpy(k, kv->k_host, hn * 2), memcpy(v, kv->v_host, hn * 2);
    if (dn) {
        ECU(cudaMemcpy(k + hn, kv->k_dev, dn * 2, cudaMemcpyDeviceToHost));
        ECU(cudaMemcpy(v + hn, kv->v_dev, dn * 2, cudaMemcpyDeviceToHost));
    }
    return 0;
}

extern "C" int dak_engine_logits(dak_engine *e, float *logits, cm_err *err)
{
    ECU(cudaStreamSynchronize(e->st));
    ECU(cudaMemcpy2D(logits, (size_t)e->V * 4, e->logits, (size_t)e->Vp * 4, (size_t)e->V * 4, e->batch,
                     cudaMemcpyDeviceToHost));
    return 0;
}

extern "C" int dak_engine_tokens(dak_engine *e, int32_t *tok, uint32_t steps, cm_err *err)
{
    if (steps > e->max_len) return cm_fail(err, "engine: %u steps of tokens, at most %u", steps, e->max_len);
    ECU(cudaStreamSynchronize(e->st));
    ECU(cudaMemcpy(tok, e->hist, (size_t)steps * e->batch * 4, cudaMemcpyDeviceToHost));
    return 0;
}

extern "C" int dak_engine_run(dak_engine *e, double *tpot_s, cm_err *err)
{
    if (!e->ge || e->next != 0) return cm_fail(err, "engine: run: expected a fresh setup");
    for (uint32_t t = 0; t < e->P; t++)
        if (dak_engine_step(e, t, 0, err)) return -1;
    ECU(cudaEventRecord(e->ev0, e->st));
    for (uint32_t t = e->P; t < e->S; t++)
        if (dak_engine_step(e, t, 0, err)) return -1;
    ECU(cudaEventRecord(e->ev1, e->st));
    cudaError_t c = cudaEventSynchronize(e->ev1);
    if (c != cudaSuccess) return cm_fail(err, "engine: run failed: %s", cudaGetErrorString(c));
    float ms = 0;
    ECU(cudaEventElapsedTime(&ms, e->ev0, e->ev1));
    *tpot_s = e->T ? ms / 1e3 / e->T : 0;
    return 0;
}

/* ---- breakdown ------------------------------------------------------------------------------------- */

extern "C" int dak_engine_breakdown(dak_engine *e, uint32_t reps, dak_eng_breakdown *b, cm_err *err)
{
    memset(b, 0, sizeof *b);
    if (!e->ge || e->next != e->S) return cm_fail(err, "engine: breakdown: expected a finished run (dak_engine_run)");
    if (reps < 1 || reps > 1000) return cm_fail(err, "engine: breakdown: %u repetitions: expected 1..1000", reps);
    uint32_t t = e->S - 1, B = e->batch;
    if (!e->bk_ev) {
        e->bk_cap = 16 * e->L + 16;
        e->bk_ev = (cudaEvent_t *)cm_calloc(e->bk_cap, sizeof(cudaEvent_t));
        e->bk_kind = (uint8_t *)cm_calloc(e->bk_cap, 1);
        e->bk_bytes = (double *)cm_calloc(e->bk_cap, sizeof(double));
        for (uint32_t i = 0; i < e->bk_cap; i++) ECU(cudaEventCreate(&e->bk_ev[i]));
    }
    e->bk_n = 0, e->bk_on = 1;
    cudaGraphExec_t gx = NULL;
    int rc = capture_step(e, t, &gx, err);
    e->bk_on = 0;
    if (rc) return -1;
    uint32_t n = e->bk_n;
    b->step = t, b->reps = reps;
    for (uint32_t i = 1; i < n; i++) b->count[e->bk_kind[i]]++, b->bytes[e->bk_kind[i]] += e->bk_bytes[i];
    const int um = e->um_bytes > 0; /* each replay starts with the push-back (dak_engine_step's) */
    if (um) b->count[DAK_ENG_OP_EVICT] = 1, b->bytes[DAK_ENG_OP_EVICT] = e->um_moved;
    int32_t *hist_row = (int32_t *)cm_malloc((size_t)B * 4);
    double *v = (double *)cm_calloc((size_t)reps * (DAK_ENG_NOPS + 2), sizeof(double)); /* [kind or total][rep] */
    double *own = v + (size_t)reps * DAK_ENG_NOPS, *stamped = own + reps;
    cudaError_t ce = cudaMemcpy(hist_row, e->hist + (size_t)t * B, (size_t)B * 4, cudaMemcpyDeviceToHost);
    for (uint32_t r = 0; r < reps && ce == cudaSuccess; r++) {
        float ms = 0;
        if ((ce = cudaEventRecord(e->ev0, e->st)) || (ce = um_push_back(e)) ||
            (ce = cudaGraphLaunch(e->ge[t], e->st)) || (ce = cudaEventRecord(e->ev1, e->st)) ||
            (ce = cudaEventRecord(e->ev_um, e->st)) || (ce = um_push_back(e)) || (ce = cudaGraphLaunch(gx, e->st)) ||
            (ce = cudaStreamSynchronize(e->st)) || (ce = cudaEventElapsedTime(&ms, e->ev0, e->ev1)))
            break;
        own[r] = ms * 1e3;
        for (uint32_t i = 1; i < n && ce == cudaSuccess; i++) {
            ce = cudaEventElapsedTime(&ms, e->bk_ev[i - 1], e->bk_ev[i]);
            v[(size_t)e->bk_kind[i] * reps + r] += ms * 1e3;
        }
        if (um && ce == cudaSuccess) {
            ce = cudaEventElapsedTime(&ms, e->ev_um, e->bk_ev[0]);
            v[(size_t)DAK_ENG_OP_EVICT * reps + r] = ms * 1e3;
        }
        if (ce == cudaSuccess) ce = cudaEventElapsedTime(&ms, um ? e->ev_um : e->bk_ev[0], e->bk_ev[n - 1]);
        stamped[r] = ms * 1e3;
    }
    if (ce == cudaSuccess) ce = cudaMemcpy(e->hist + (size_t)t * B, hist_row, (size_t)B * 4, cudaMemcpyHostToDevice);
    cudaGraphExecDestroy(gx);
    if (ce == cudaSuccess) {
        for (int k = 0; k < DAK_ENG_NOPS; k++) b->us[k] = bench_median(v + (size_t)k * reps, reps);
        b->step_us = bench_median(own, reps), b->stamped_us = bench_median(stamped, reps);
    }
    free(hist_row), free(v);
    if (ce != cudaSuccess) return cm_fail(err, "engine: breakdown: %s", cudaGetErrorString(ce));
    return 0;
}

/* ---- a layer's timeline (dak_eng_opts.diag_times) ------------------------------------------------ */

static int stamps_copy(const uint64_t *dev, uint32_t ctas, uint32_t words, dak_eng_op kind, dak_eng_stamps *o,
                       cm_err *err)
{
    o->kind = kind, o->ctas = ctas, o->words = words;
    o->t = (uint64_t *)cm_malloc((size_t)ctas * words * 8);
    ECU(cudaMemcpy(o->t, dev, (size_t)ctas * words * 8, cudaMemcpyDeviceToHost));
    return 0;
}

static int stamps_gemm(lin_t *w, dak_eng_op kind, dak_eng_stamps *o, cm_err *err)
{
    const uint32_t cap = 4096;
    uint64_t *t = (uint64_t *)cm_malloc((size_t)cap * DAK_GEMM_NTIMES * 8);
    uint32_t ctas = 0;
    if (!w->l || dak_gemm_times(w->l, t, (size_t)cap * DAK_GEMM_NTIMES, &ctas, err)) {
        free(t);
        return w->l ? -1 : cm_fail(err, "engine: stamps: the GEMM is not one launch (direct mode only)");
    }
    o->kind = kind, o->ctas = ctas, o->words = DAK_GEMM_NTIMES, o->t = t;
    return 0;
}

/* the attention's CTAs that stamped in the last step (a plan's CTA count changes with the length): CTAs 0 .. n - 1
 * whose entry is not before the earliest entry of the layer's first norm (norm: its stamps, already copied) */
static int stamps_attn(dak_engine *e, uint32_t l, const dak_eng_stamps *norm, dak_eng_stamps *o, cm_err *err)
{
    const uint32_t cap = dak_attn_ctx_sms(e->a);
    if (stamps_copy(attn_ts(e, l), cap, DAK_ATTN_STAMPS, DAK_ENG_OP_ATTN, o, err)) return -1;
    uint64_t t0 = UINT64_MAX;
    for (uint32_t c = 0; c < norm->ctas; c++)
        if (norm->t[(size_t)c * norm->words] < t0) t0 = norm->t[(size_t)c * norm->words];
    uint32_t n = 0;
    while (n < cap && o->t[(size_t)n * DAK_ATTN_STAMPS] >= t0) n++;
    o->ctas = n;
    return 0;
}

extern "C" int dak_engine_stamps(dak_engine *e, uint32_t layer, dak_eng_stamps ops[DAK_ENG_STAMPED_OPS], uint32_t *n,
                                 cm_err *err)
{
    *n = 0;
    if (!e->dts) return cm_fail(err, "engine: stamps: the engine was created without diag_times");
    if (!e->ge || e->mode != DAK_ENG_DIRECT) return cm_fail(err, "engine: stamps: no run in direct mode");
    if (layer >= e->L) return cm_fail(err, "engine: stamps: layer %u of %u", layer, e->L);
    const uint32_t used = (1u << DAK_ENG_OP_NORM) | (1u << DAK_ENG_OP_QKV) | (1u << DAK_ENG_OP_QKV_POST) |
                          (1u << DAK_ENG_OP_ATTN) | (1u << DAK_ENG_OP_O) | (1u << DAK_ENG_OP_FFN_IN) |
                          (1u << DAK_ENG_OP_ACT) | (1u << DAK_ENG_OP_FFN_OUT);
    if ((e->o.diag_skip | e->o.diag_empty) & used)
        return cm_fail(err, "engine: stamps: a kind they need is left out (diag_skip / diag_empty)");
    ECU(cudaStreamSynchronize(e->st));
    uint32_t l = layer, B = e->batch, k = 0;
    int bad = stamps_copy(norm_ts(e, 2 * l), B, DAK_ENG_NORM_STAMPS, DAK_ENG_OP_NORM, &ops[k++], err) ||
              stamps_gemm(LIN(e, l, W_QKV), DAK_ENG_OP_QKV, &ops[k++], err) ||
              stamps_copy(qkvp_ts(e, l), e->o.fuse_qkv ? 0 : qkvp_ctas(e), DAK_ENG_QKVP_STAMPS, DAK_ENG_OP_QKV_POST,
                          &ops[k++], err) ||
              stamps_attn(e, l, &ops[0], &ops[k++], err) ||
              stamps_gemm(LIN(e, l, W_O), DAK_ENG_OP_O, &ops[k++], err) ||
              stamps_copy(norm_ts(e, 2 * l + 1), B, DAK_ENG_NORM_STAMPS, DAK_ENG_OP_NORM, &ops[k++], err) ||
              stamps_gemm(LIN(e, l, W_IN), DAK_ENG_OP_FFN_IN, &ops[k++], err) ||
              stamps_copy(act_ts(e, l), e->act_grid, DAK_ENG_ACT_STAMPS, DAK_ENG_OP_ACT, &ops[k++], err) ||
              stamps_gemm(LIN(e, l, W_OUT), DAK_ENG_OP_FFN_OUT, &ops[k++], err) ||
              stamps_copy(norm_ts(e, 2 * l + 2), B, DAK_ENG_NORM_STAMPS, DAK_ENG_OP_NORM, &ops[k++], err);
    if (bad) {
        dak_eng_stamps_free(ops, k);
        return -1;
    }
    *n = k;
    return 0;
}
