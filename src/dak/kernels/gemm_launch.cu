/* Host side of the direct-access split GEMM: context, tensor maps, the kernel parameters from the
 * plan, launches.  The kernels are in gemm_split.cu. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/launch.h"
#include "dak/gemm.h"
#include "gemm_kernel.cuh"
#include "internal.h"

struct dak_gemm_launch {
    dak_gemm_ctx *ctx;
    dak_gemm_plan plan;
    kparams kp;
    CUtensorMap ta_h, ta_g, tb, tbw; /* tbw: B boxes of bn rows (wide HBM column tiles) */
    size_t smem;
    unsigned long long *hb;
    unsigned long long *times; /* diag_times: per-CTA stamps */
    int plain_launch; /* diagnostic: no cluster attribute when the cluster is 1 CTA */
    int pdl;
    dak_panel *panel; /* host rows through the panel kernel (gemm_panel.cu), or NULL */
};

/* The tiled kernel's instantiations, indexed by dak_split_kernel (a plan's `kernel`). */
static const void *const split_kernels[DAK_SPLIT_KERNELS] = {
    (const void *)k_split,      (const void *)k_split_nn,   (const void *)k_split_nn2, (const void *)k_split_n8,
    (const void *)k_split_dyn,
    (const void *)k_split_n128, (const void *)k_split_n256, (const void *)k_split_m256, (const void *)k_whole,
    (const void *)k_whole_sw};

extern "C" int dak_gemm_ctx_create(dak_gemm_ctx **out, cm_err *err)
{
    *out = NULL;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0)
        return cm_fail(err, "gemm: no CUDA device (%s)", e != cudaSuccess ? cudaGetErrorString(e) : "count 0");
    dak_gemm_ctx *c = (dak_gemm_ctx *)calloc(1, sizeof *c);
    if (!c) return cm_fail(err, "gemm: out of memory");
    DAK_CU(cudaGetDevice(&c->dev), err);
    cudaDeviceProp pr;
    DAK_CU(cudaGetDeviceProperties(&pr, c->dev), err);
    if (pr.major < 9) {
        free(c);
        return cm_fail(err, "gemm: device %s is sm_%d%d, the kernels need sm_90a", pr.name, pr.major, pr.minor);
    }
    c->sms = (unsigned)pr.multiProcessorCount;
    c->smem_optin = pr.sharedMemPerBlockOptin;
    void *fn = NULL;
    cudaDriverEntryPointQueryResult q;
    e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q);
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !fn) {
        free(c);
        return cm_fail(err, "gemm: driver entry point cuTensorMapEncodeTiled not found");
    }
    c->encode = (dak_encode_fn)fn;
    fn = NULL;
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &fn, 12000, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
        c->addr_range = (dak_addr_range_fn)fn;
    if (cublasCreate(&c->blas) != CUBLAS_STATUS_SUCCESS) {
        free(c);
        return cm_fail(err, "gemm: cublasCreate failed");
    }
    DAK_CU(cudaStreamCreateWithFlags(&c->copy_stream, cudaStreamNonBlocking), err);
    DAK_CU(cudaEventCreateWithFlags(&c->ev_start, cudaEventDisableTiming), err);
    for (int i = 0; i < 2; i++) {
        DAK_CU(cudaEventCreateWithFlags(&c->ev_copy[i], cudaEventDisableTiming), err);
        DAK_CU(cudaEventCreateWithFlags(&c->ev_gemm[i], cudaEventDisableTiming), err);
    }
    for (int k = 0; k < DAK_SPLIT_KERNELS; k++)
        DAK_CU(cudaFuncSetAttribute(split_kernels[k], cudaFuncAttributeMaxDynamicSharedMemorySize, (int)c->smem_optin),
               err);
    DAK_CU(cudaFuncSetAttribute(k_empty, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)c->smem_optin),
           err);
    *out = c;
    return 0;
}

extern "C" void dak_gemm_ctx_destroy(dak_gemm_ctx *c)
{
    if (!c) return;
    if (c->ws) cudaFree(c->ws);
    if (c->ctr) cudaFree(c->ctr);
    if (c->flush) cudaFree(c->flush);
    if (c->accw) cudaFree(c->accw);
    if (c->pws) cudaFree(c->pws);
    if (c->dynctr) cudaFree(c->dynctr);
    if (c->hostq) cudaFree(c->hostq);
    for (size_t i = 0; i < c->nretired; i++) cudaFree(c->retired[i]);
    free(c->retired);
    cublasDestroy(c->blas);
    cudaStreamDestroy(c->copy_stream);
    cudaEventDestroy(c->ev_start);
    for (int i = 0; i < 2; i++) {
        cudaEventDestroy(c->ev_copy[i]);
        cudaEventDestroy(c->ev_gemm[i]);
    }
    free(c);
}

extern "C" uint32_t dak_gemm_ctx_sms(const dak_gemm_ctx *c) { return c->sms; }
extern "C" uint32_t dak_gemm_ctx_a_group_rows(const dak_gemm_ctx *c, uint32_t M, uint32_t K, uint32_t N,
                                              const dak_gemm_opts *o)
{
    return dak_gemm_a_group_rows(M, K, N, o, c->sms, c->smem_optin);
}

int dak_ctx_grow(dak_gemm_ctx *ctx, void **buf, size_t *have, size_t need, int zero, cm_err *err)
{
    if (need <= *have) return 0;
    if (*buf) { /* room to retire it, before anything can fail half done */
        void **r = (void **)realloc(ctx->retired, (ctx->nretired + 1u) * sizeof *r);
        if (!r) return cm_fail(err, "gemm: out of memory");
        ctx->retired = r;
    }
    void *nb = NULL;
    cudaError_t e = cudaMalloc(&nb, need);
    if (e == cudaSuccess && zero) e = cudaMemset(nb, 0, need);
    if (e != cudaSuccess) {
        if (nb) cudaFree(nb);
        return cm_fail(err, "gemm: context buffer of %zu bytes: %s", need, cudaGetErrorString(e));
    }
    if (*buf) ctx->retired[ctx->nretired++] = *buf;
    *buf = nb;
    *have = need;
    return 0;
}

/* cuTensorMapEncodeTiled of a bf16 map of `rank` (<= 4) dimensions, innermost first, element strides 1. */
static CUresult encode_bf16(dak_gemm_ctx *c, CUtensorMap *m, const void *base, uint32_t rank, const cuuint64_t *dims,
                            const cuuint64_t *strides, const cuuint32_t *box, CUtensorMapSwizzle swizzle)
{
    const cuuint32_t es[4] = {1, 1, 1, 1};
    return c->encode(m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, rank, (void *)base, dims, strides, box, es,
                     CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

int dak_encode_3d(dak_gemm_ctx *c, CUtensorMap *m, const void *base, const cuuint64_t dims[3],
                     const cuuint64_t strides[2], const cuuint32_t box[3], cm_err *err)
{
    const CUresult r = encode_bf16(c, m, base, 3u, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
    if (r != CUDA_SUCCESS)
        return cm_fail(err, "gemm: cuTensorMapEncodeTiled(3-D %llu x %llu x %llu, box %u x %u x %u) failed with %d",
                       (unsigned long long)dims[2], (unsigned long long)dims[1], (unsigned long long)dims[0],
                       box[2], box[1], box[0], (int)r);
    return 0;
}

static int encode_2d(dak_gemm_ctx *c, CUtensorMap *m, const void *base, uint64_t inner,
                     uint64_t outer, uint32_t box_in, uint32_t box_out, cm_err *err)
{
    const cuuint64_t dims[2] = {inner, outer};
    const cuuint64_t strides[1] = {inner * 2u};
    const cuuint32_t box[2] = {box_in, box_out};
    const CUresult r = encode_bf16(c, m, base, 2u, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
    if (r != CUDA_SUCCESS)
        return cm_fail(err, "gemm: cuTensorMapEncodeTiled(%llu x %llu, box %u x %u) failed with %d",
                       (unsigned long long)outer, (unsigned long long)inner, box_out, box_in, (int)r);
    return 0;
}

/* Packed A's rows of one tier (dak_tiered.h: tile row t, 64-column block k at (t K/64 + k) x 8 KiB, each
 * 8 KiB block 64 rows of 128 B, already in the swizzled image the consumers read) as 4-D {64, 64 rows,
 * K/64 blocks, rows/64 tile rows} without swizzle, boxes of {64, 64, kstep, mh}: one copy lands a
 * tile's mh boxes of kstep blocks in a ring slot exactly as mh bulk copies would. */
static int encode_a_packed(dak_gemm_ctx *c, CUtensorMap *m, const void *base, uint32_t K, uint32_t rows,
                           uint32_t kstep, uint32_t mh, cm_err *err)
{
    const cuuint64_t dims[4] = {64, 64, K / 64u, rows / 64u};
    const cuuint64_t strides[3] = {128, 8192, (cuuint64_t)K / 64u * 8192u};
    const cuuint32_t box[4] = {64, 64, kstep, mh};
    const CUresult r = encode_bf16(c, m, base, 4u, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_NONE);
    if (r != CUDA_SUCCESS)
        return cm_fail(err, "gemm: cuTensorMapEncodeTiled(packed A, %u tile rows x %u blocks, box %u x %u) failed with %d",
                       rows / 64u, K / 64u, mh, kstep, (int)r);
    return 0;
}

/* B (N rows of K, bf16) as 3-D {64, N, K/64 blocks} with strides 2K B and 128 B, boxes of
 * {64, rows, kstep}: a box lands in shared memory as [block][n][64]. */
static int encode_b_perm(dak_gemm_ctx *ctx, CUtensorMap *m, const uint16_t *B, uint32_t N, uint32_t K, uint32_t rows,
                         uint32_t kstep, cm_err *err)
{
    cuuint64_t d[3] = {64, N, K / 64u};
    cuuint64_t st[2] = {(cuuint64_t)K * 2u, 128};
    cuuint32_t bx[3] = {64, rows, kstep};
    return dak_encode_3d(ctx, m, B, d, st, bx, err);
}

/* An operand too small for the GEMM is refused here: the kernel would read or write past its allocation, and a
 * write there can land in the context's own split-K counters, so that a later launch's fix-up polls forever (the
 * bench's wave section did that with C sized for a smaller N: NOTES-dak-kernels.md, "A run that never ends on small
 * shapes").  The allocation holding p, from the driver; memory the driver cannot place (its call fails) goes
 * unchecked. */
static int check_extent(const dak_gemm_ctx *ctx, const void *p, size_t need, const char *what, const char *shape,
                        cm_err *err)
{
    CUdeviceptr base = 0;
    size_t size = 0;
    if (!ctx->addr_range || !need || ctx->addr_range(&base, &size, (CUdeviceptr)p) != CUDA_SUCCESS) return 0;
    const size_t have = (size_t)(base + size - (CUdeviceptr)p);
    if (have < need)
        return cm_fail(err, "gemm: %s at %p: its allocation holds %zu bytes from there, the GEMM needs %zu (%s)", what,
                       p, have, need, shape);
    return 0;
}

/* Every operand of C = A.B against its allocation (check_extent): B, C, A's HBM rows and its host rows (a tier with no
 * rows needs 0 bytes, which passes); `plan` names the kernel's plan in the message */
static int check_operands(const dak_gemm_ctx *ctx, const dak_tiered *A, const uint16_t *B, const void *C, uint32_t N,
                          int out_bf16, const char *plan, cm_err *err)
{
    char shape[96];
    snprintf(shape, sizeof shape, "M %u, N %u, K %u, %u host rows%s", A->M, N, A->K, A->rows_host, plan);
    const size_t arow = (size_t)A->K * 2u;
    return check_extent(ctx, B, (size_t)N * A->K * 2u, "B (K x N bf16)", shape, err) ||
                   check_extent(ctx, C, (size_t)A->M * N * (out_bf16 ? 2u : 4u),
                                out_bf16 ? "C (M x N bf16)" : "C (M x N fp32)", shape, err) ||
                   check_extent(ctx, A->dev, (size_t)(A->M - A->rows_host) * arow, "A's HBM rows", shape, err) ||
                   check_extent(ctx, A->host_dev, (size_t)A->rows_host * arow, "A's host rows", shape, err)
               ? -1
               : 0;
}

static int prepare_diag_times(dak_gemm_launch *l, const dak_gemm_opts *o, cm_err *err)
{
    if (!o->diag_times) return 0;
    const size_t nt = (size_t)(l->plan.host.ctas + l->plan.hbm.ctas) * DAK_GEMM_NTIMES;
    cudaError_t e = cudaMalloc((void **)&l->times, nt * 8u);
    if (e == cudaSuccess) e = cudaMemset(l->times, 0, nt * 8u);
    if (e != cudaSuccess) return cm_fail(err, "gemm: stamp buffer: %s", cudaGetErrorString(e));
    l->kp.times = l->times;
    return 0;
}

/* The launch of k_whole and k_whole_sw (the plan's kernel DAK_SPLIT_WHOLE / _SW; their rules are plan.c's whole_plan
 * and swap_plan): B as [block][n][64] boxes (tb) without a cluster; with one as 2-D {K, N} in boxes of 64 columns x
 * whole_rows rows, 128-byte swizzle ([n][64] in a stage, the layout of a one-block [block][n][64] box), in tbw; A
 * from the packed layout by bulk copies. */
static int prepare_whole(dak_gemm_launch *l, const dak_tiered *A, const uint16_t *B, void *C, uint32_t N,
                         const dak_gemm_opts *o, cm_err *err)
{
    dak_gemm_ctx *ctx = l->ctx;
    const dak_gemm_plan *p = &l->plan;
    if (!A->packed) return cm_fail(err, "gemm: A is row-major: pack it (dak_pack_rowmajor) for whole-K tiles");
    if (check_operands(ctx, A, B, C, N, o->out_bf16, ", whole-K tiles", err)) return -1;
    /* B: one 3-D copy of a stage's [block][n][64] without multicast; with it each member's slice of every block */
    if (p->cluster == 1u ? encode_b_perm(ctx, &l->tb, B, N, A->K, p->bn_box, p->kstep, err)
                         : encode_2d(ctx, &l->tbw, B, A->K, N, 64u, p->whole_rows, err))
        return -1;
    DAK_CU(cudaMalloc((void **)&l->hb, 8), err); /* dak_gemm_host_bytes: none */
    DAK_CU(cudaMemset(l->hb, 0, 8), err);
    kparams *k = &l->kp;
    memset(k, 0, sizeof *k);
    k->M = A->M, k->N = N, k->K = A->K, k->c = p->cluster, k->kstep = p->kstep, k->kblocks = A->K / 64u;
    k->kchunks = p->kchunks;
    const int swap = p->kernel == DAK_SPLIT_WHOLE_SW; /* k_whole_sw: bm rows a CTA, any multiple of 8 */
    k->sw_rows = swap ? p->bm : 0u;
    k->a_groups = o->a_group_rows; /* (prepare_launch's: 0 for the tiles; the plan is then k_whole_sw) */
    k->mh[1] = swap ? 0u : p->bm / 64u, k->mt64[1] = A->M / 64u, k->stages[1] = p->hbm_stages, k->bn_box[1] = p->bn_box;
    k->window[1] = p->hbm.window;
    k->ctas[1] = p->hbm.ctas;
    k->a_ptr[1] = A->dev;
    k->whole_rows = p->whole_rows, k->whole_loaders = p->whole_loaders;
    k->l2_hints = o->l2_hints ? 1u : 0u;
    k->wgmma = 1u;
    l->pdl = o->pdl != 0;
    k->pdl = (uint32_t)l->pdl;
    k->pre_hbm = p->hbm_pre;
    k->out_bf16 = o->out_bf16;
    k->C = C;
    k->host_bytes = l->hb;
    l->plain_launch = o->diag_plain_launch;
    l->smem = p->smem_bytes;
    if (prepare_diag_times(l, o, err)) return -1;
    DAK_CU(cudaStreamSynchronize(0), err); /* the cudaMemsets above, on the legacy stream (prepare_launch's note) */
    return 0;
}

/* prepare_launch's requests to plan again (the driver refused B's [block][n][64] map): 64-column tiles (wide tiles
 * need that map; bn was auto), no 24-row B box (only the offsets consumers, which read that map, keep inside it) */
#define REPLAN_BN64 1
#define REPLAN_BOX32 2
#define REPLAN_BOX64 4

/* Fills the launch l (zeroed, l->ctx set): 0, or -1 with a message in err (l is then freed by the
 * caller, whatever it holds).  *replan: REPLAN_* bits when the caller should plan again with them. */
static int prepare_launch(dak_gemm_launch *l, const dak_tiered *A, const uint16_t *B, void *C, uint32_t N,
                          const dak_gemm_opts *o, int *replan, cm_err *err)
{
    dak_gemm_ctx *ctx = l->ctx;
    dak_gemm_plan *p = &l->plan;
    dak_gemm_opts oa = *o; /* A's layout is A's (opts.a_group_rows): 0 for the tiles, 64 included */
    oa.a_group_rows = A->group_rows == 64u ? 0u : A->group_rows;
    if (oa.a_group_rows && !A->packed)
        return cm_fail(err, "gemm: A in groups of %u rows must be packed (dak_pack_groups)", A->group_rows);
    if (dak_gemm_plan_make(A->M, N, A->K, A->rows_host, &oa, ctx->sms, ctx->smem_optin, p, err)) return -1;
    if (!B || !C) return cm_fail(err, "gemm: B and C must be device pointers");
    if (p->kernel == DAK_SPLIT_WHOLE || p->kernel == DAK_SPLIT_WHOLE_SW) return prepare_whole(l, A, B, C, N, &oa, err);
    if (!o->a_tma2d && !A->packed)
        return cm_fail(err, "gemm: A is row-major: pack it (dak_pack_rowmajor) or set a_tma2d");
    if (o->a_tma2d && A->packed) return cm_fail(err, "gemm: a_tma2d needs a row-major A, this one is packed");
    /* workspace and counters */
    if (dak_ctx_grow(ctx, (void **)&ctx->ws, &ctx->ws_bytes, p->ws_bytes, 0, err) ||
        dak_ctx_grow(ctx, (void **)&ctx->ctr, &ctx->ctr_bytes, (size_t)(A->M / 64u) * p->ngroups * p->cluster * 4u, 1,
                     err))
        return -1;
    DAK_CU(cudaMalloc((void **)&l->hb, 8), err);
    DAK_CU(cudaMemset(l->hb, 0, 8), err);

    const void *hbase = A->rows_host ? (const void *)A->host_dev : (const void *)A->dev;
    uint64_t hrows = A->rows_host ? A->rows_host : A->M - A->rows_host;
    const void *gbase = A->rows_host < A->M ? (const void *)A->dev : hbase;
    uint64_t grows = A->rows_host < A->M ? A->M - A->rows_host : hrows;
    uint32_t prow = 64u / p->cluster;
    /* B (N rows of K) as 3-D {64, N, K/64 blocks} with strides 2K B and 128 B, so that a box
     * lands in shared memory as [block][n][64]: the 8 rows one ldmatrix reads are consecutive,
     * hence in 8 different swizzle phases (no bank conflicts).  If the driver refuses the
     * decreasing strides, {64, K/64, N} ([n][block][64]: 2- or 4-way conflicts on B). */
    int b_perm = !o->diag_b_nmajor;
    if (b_perm) {
        cm_err e2;
        if (encode_b_perm(ctx, &l->tb, B, N, A->K, p->bn_box, p->kstep, &e2)) {
            static int told;
            if (!told++) fprintf(stderr, "dak gemm: note: %s; B kept as [n][block][64]\n", e2.msg);
            b_perm = 0;
        }
    }
    if (!b_perm && p->bn_box == 24u) { /* k_split's consumers read 24 rows of B as two 16-row pairs */
        if (!o->bn24) return cm_fail(err, "gemm: internal: a 24-row B box planned without opts.bn24");
        *replan = REPLAN_BOX32;
        return -1;
    }
    if (!b_perm && p->wgmma && p->bn_box % 64u) { /* wgmma reads a box of 8-row groups, [block][n][64] only */
        if (!o->bnw) return cm_fail(err, "gemm: internal: a %u-row wgmma B box planned without opts.bnw", p->bn_box);
        *replan = REPLAN_BOX64;
        return -1;
    }
    if (!b_perm && (p->kernel == DAK_SPLIT_NN || p->kernel == DAK_SPLIT_NN2 || p->kernel == DAK_SPLIT_N8))
        p->kernel = DAK_SPLIT; /* the offsets consumers read B as [block][n][64] only */
    if ((p->bn == 256u || p->bm == 256u) && p->host.ctas) /* the planner's rule: those kernels have no host-tier consumers */
        return cm_fail(err, "gemm: internal: bn 256 or bm 256 planned beside a tiled host tier");
    if (p->bm == 256u && !b_perm)
        return cm_fail(err, "gemm: bm 256 needs B as [block][n][64], which the driver refused here; set bm 0 or 128");
    if (p->bn > 64u && !b_perm) {
        /* wide tiles need B as [block][n][64] (one canonical operand of bn rows per block) */
        if (o->bn) return cm_fail(err, "gemm: bn %u needs B as [block][n][64], which the driver refused here; set bn 64", o->bn);
        *replan = REPLAN_BN64; /* auto: 64-column tiles */
        return -1;
    }
    /* the wide tiles' B: boxes of bn rows */
    if (p->bn > 64u && encode_b_perm(ctx, &l->tbw, B, N, A->K, p->bn, p->kstep, err)) return -1;
    cuuint64_t bdims[3] = {64, A->K / 64u, N};
    cuuint64_t bstrides[2] = {128, (cuuint64_t)A->K * 2u};
    cuuint32_t bbox[3] = {64, p->kstep, p->bn_box};
    /* packed A, cluster 1, wide HBM column tiles: 4-D maps, a tile's boxes in one copy (a_slot_map: 1.07-1.24x at
     * N = 128-512, where the one producer thread's ~45 instructions a bulk copy bound the ring); not at bn 64
     * (N <= 64: 0.98-0.99x, the loads bind there and two bulk copies stream a little better than one 4-D copy).
     * Else 2-D maps (a_tma2d; unused with packed A) */
    const int slot_map = A->packed && p->cluster == 1u && p->bn > 64u;
    const int a_maps = slot_map ? encode_a_packed(ctx, &l->ta_h, hbase, A->K, (uint32_t)hrows, p->kstep, 1u, err) ||
                                      encode_a_packed(ctx, &l->ta_g, gbase, A->K, (uint32_t)grows, p->kstep, p->bm / 64u, err)
                                : encode_2d(ctx, &l->ta_h, hbase, A->K, hrows, 64, prow, err) ||
                                      encode_2d(ctx, &l->ta_g, gbase, A->K, grows, 64, prow, err);
    if (a_maps || (!b_perm && dak_encode_3d(ctx, &l->tb, B, bdims, bstrides, bbox, err))) return -1;
    kparams *k = &l->kp;
    memset(k, 0, sizeof *k);
    k->M = A->M, k->N = N, k->K = A->K, k->kchunks = p->kchunks, k->c = p->cluster;
    /* the host tier keeps 64-column tiles; the HBM tier's are bn wide */
    k->tn[0] = 64u, k->tn[1] = p->bn;
    k->ntiles[0] = p->ntiles, k->ntiles[1] = (N + p->bn - 1u) / p->bn;
    k->ngroups[0] = p->ngroups, k->ngroups[1] = p->hbm.ngroups;
    for (int t = 0; t < 2; t++) k->ntp[t] = k->ngroups[t] * p->cluster;
    k->bn_box[0] = p->bn_box, k->bn_box[1] = p->bn > 64u ? p->bn : p->bn_box;
    k->ctr0[0] = 0, k->ctr0[1] = (unsigned long long)(A->rows_host / 64u) * k->ntp[0];
    k->stages[0] = p->stages, k->stages[1] = p->hbm_stages;
    k->mh[0] = 1u, k->mh[1] = p->bm / 64u; /* the host tier keeps 64-row tiles */
    k->mt64[0] = A->rows_host / 64u, k->mt64[1] = (A->M - A->rows_host) / 64u;
    k->kstep = p->kstep, k->kblocks = A->K / 64u;
    k->host_ctas = p->host.ctas;
    const dak_tier_plan *tp[2] = {&p->host, &p->hbm};
    for (int t = 0; t < 2; t++) {
        k->ctas[t] = tp[t]->ctas;
        k->items[t] = tp[t]->items;
        k->ksplit[t] = tp[t]->ksplit ? tp[t]->ksplit : 1;
        k->window[t] = tp[t]->window ? tp[t]->window : k->stages[t];
    }
    k->a_bulk = !o->a_tma2d;
    k->a_slot_map = (uint32_t)slot_map;
    k->nomath = o->diag_nomath;
    k->noload = o->diag_noload;
    k->nob = (uint32_t)(o->diag_nob != 0);
    k->prod2 = (uint32_t)(o->diag_prod2 != 0);
    k->b_perm = (uint32_t)b_perm;
    k->b_rn = b_perm ? 1u : p->kstep;
    k->b_rk = b_perm ? p->bn_box : 1u;
    k->a_ptr[0] = A->host_dev;
    k->a_ptr[1] = A->dev;
    k->even[0] = (uint32_t)p->host.even;
    k->even[1] = (uint32_t)p->hbm.even;
    k->mt0[0] = 0, k->mt0[1] = A->rows_host / 64u;
    k->row0[0] = 0, k->row0[1] = A->rows_host;
    k->ws0[0] = 0;
    k->ws0[1] = p->host.ksplit > 1 ? (unsigned long long)p->host.mtiles * k->ntp[0] * p->host.ksplit : 0ull;
    l->plain_launch = o->diag_plain_launch;
    l->pdl = o->pdl != 0;
    k->pdl = (uint32_t)l->pdl;
    k->stash = p->hbm_stash; /* the plan takes it only with pdl */
    k->pre_hbm = p->hbm_pre;
    /* the host rows on the panel kernel beside the tiled kernel: the tiled kernel follows it as a programmatic
     * dependent, so that it is placed only once every panel cluster is (launched side by side on two streams,
     * the tiled CTAs could land first and leave no GPC with a cluster's SMs free: dak-gemm.md) */
    k->wait_end = p->panel.on && p->hbm.ctas && !o->diag_panel_fork;
    if (l->pdl && p->host.ctas && !o->diag_pdl_host_wait) { /* the host-link hand-over (host_gate) */
        if (!ctx->hostq) {
            DAK_CU(cudaMalloc((void **)&ctx->hostq, 8), err);
            DAK_CU(cudaMemset(ctx->hostq, 0, 8), err);
        }
        k->hostq = ctx->hostq;
    }
    k->fix_wait = !o->diag_fixup_atomic;
    k->nofixup = (uint32_t)(o->diag_nofixup != 0);
    k->epi_global = (uint32_t)(o->diag_epi_global != 0);
    k->fix_rs = (uint32_t)(o->fix_rs != 0);
    k->rot = o->diag_rotate;
    k->l2_hints = !o->l2_hints ? 0u : (uint64_t)N * A->K * 2u <= (16ull << 20) ? 2u : 1u;
    if (check_operands(ctx, A, B, C, N, o->out_bf16, "", err)) return -1;
    if (p->dyn_units) {
        if (dak_ctx_grow(ctx, (void **)&ctx->accw, &ctx->accw_bytes, (size_t)(A->M / 64u) * 4096u * 4u, 1, err))
            return -1;
        if (!ctx->dynctr) {
            DAK_CU(cudaMalloc((void **)&ctx->dynctr, 8), err);
            DAK_CU(cudaMemset(ctx->dynctr, 0, 8), err);
        }
        k->dyn = 1, k->dyn_p = p->dyn_p, k->dyn_units = p->dyn_units, k->dyn_first = p->dyn_first;
        k->dynctr = ctx->dynctr, k->accw = ctx->accw;
    }
    if (prepare_diag_times(l, o, err)) return -1;
    /* The counters and buffers above were zeroed by cudaMemset on the default stream, which does not order
     * against a non-blocking stream: the caller's first launch could find them half zeroed.  Wait here for
     * that stream alone, stream 0 naming the one cudaMemset used (legacy, or per-thread under
     * --default-stream per-thread): a prepare, once per shape and options; work on the caller's
     * non-blocking streams goes on, where a device-wide sync held it. */
    DAK_CU(cudaStreamSynchronize(0), err);
    if (p->wgmma && !b_perm && p->kstep > 1) {
        /* [n][block][64] with kstep > 1 is no canonical operand layout */
        if (o->wgmma == 1)
            return cm_fail(err, "gemm: wgmma 1 needs B as [block][n][64], which the driver refused here; set wgmma 0");
        p->wgmma = 0; /* auto: mma.sync */
    }
    k->wgmma = p->wgmma;
    k->out_bf16 = o->out_bf16;
    k->C = C;
    k->ws = ctx->ws;
    k->ctr = ctx->ctr;
    k->host_bytes = l->hb;
    l->smem = p->smem_bytes;
    if (p->panel.on && dak_panel_prepare(ctx, A, B, C, p, o, l->hb, &l->panel, err)) return -1;
    return 0;
}

extern "C" int dak_gemm_prepare(dak_gemm_ctx *ctx, const dak_tiered *A, const uint16_t *B, void *C,
                                uint32_t N, const dak_gemm_opts *o, dak_gemm_launch **out, cm_err *err)
{
    *out = NULL;
    dak_gemm_launch *l = (dak_gemm_launch *)calloc(1, sizeof *l);
    if (!l) return cm_fail(err, "gemm: out of memory");
    l->ctx = ctx;
    int replan = 0;
    if (prepare_launch(l, A, B, C, N, o, &replan, err)) {
        dak_gemm_launch_free(l); /* whatever was made before the failure (an allocation included) */
        if (!replan) return -1;
        dak_gemm_opts o2 = *o;
        if (replan & REPLAN_BN64) o2.bn = 64;
        if (replan & REPLAN_BOX32) o2.bn24 = 0;
        if (replan & REPLAN_BOX64) o2.bnw = 0;
        return dak_gemm_prepare(ctx, A, B, C, N, &o2, out, err);
    }
    *out = l;
    return 0;
}

extern "C" const dak_gemm_plan *dak_gemm_launch_plan(const dak_gemm_launch *l) { return &l->plan; }

static int launch_tiled(dak_gemm_launch *l, uint32_t grid, void *stream, cm_err *err);

extern "C" int dak_gemm_run(dak_gemm_launch *l, void *stream, cm_err *err)
{
    uint32_t grid = l->plan.host.ctas + l->plan.hbm.ctas;
    if (grid == 0 && !l->panel) return cm_fail(err, "gemm: empty plan");
    if (l->panel && dak_panel_begin(l->panel, (cudaStream_t)stream, err)) return -1;
    if (grid && launch_tiled(l, grid, stream, err)) return -1;
    if (l->panel && dak_panel_end(l->panel, (cudaStream_t)stream, err)) return -1;
    return 0;
}

static int launch_tiled(dak_gemm_launch *l, uint32_t grid, void *stream, cm_err *err)
{
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid, 1, 1);
    cfg.blockDim = dim3(NTHREADS, 1, 1);
    cfg.dynamicSmemBytes = l->smem;
    cfg.stream = (cudaStream_t)stream;
    cudaLaunchAttribute at[2];
    unsigned na = 0;
    if (!(l->plain_launch && l->plan.cluster == 1)) {
        at[na].id = cudaLaunchAttributeClusterDimension;
        at[na].val.clusterDim.x = l->plan.cluster;
        at[na].val.clusterDim.y = 1;
        at[na].val.clusterDim.z = 1;
        na++;
    }
    if (l->pdl || l->kp.wait_end) {
        at[na++] = cm_attr_pdl();
    }
    cfg.attrs = at;
    cfg.numAttrs = na;
    void *args[5] = {&l->ta_h, &l->ta_g, &l->tb, &l->tbw, &l->kp};
    DAK_CU(cudaLaunchKernelExC(&cfg, split_kernels[l->plan.kernel], args), err); /* the one the plan names */
    return 0;
}

extern "C" int dak_gemm_ctx_counters(dak_gemm_ctx *ctx, size_t *nonzero, uint32_t *first_index,
                                     uint32_t *first_value, cm_err *err)
{
    *nonzero = 0, *first_index = UINT32_MAX, *first_value = 0;
    DAK_CU(cudaDeviceSynchronize(), err);
    const size_t n = ctx->ctr_bytes / 4u;
    if (!n) return 0;
    uint32_t *h = (uint32_t *)malloc(ctx->ctr_bytes);
    if (!h) return cm_fail(err, "gemm: counters: out of host memory (%zu B)", ctx->ctr_bytes);
    const cudaError_t e = cudaMemcpy(h, ctx->ctr, ctx->ctr_bytes, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        free(h);
        return cm_fail(err, "gemm: counters: %s", cudaGetErrorString(e));
    }
    for (size_t i = 0; i < n; i++)
        if (h[i]) {
            if (!*nonzero) *first_index = (uint32_t)i, *first_value = h[i];
            ++*nonzero;
        }
    free(h);
    return 0;
}

extern "C" int dak_gemm_host_bytes(dak_gemm_launch *l, uint64_t *bytes, cm_err *err)
{
    unsigned long long v = 0;
    DAK_CU(cudaMemcpy(&v, l->hb, 8, cudaMemcpyDeviceToHost), err);
    *bytes = v;
    return 0;
}

extern "C" int dak_gemm_times(dak_gemm_launch *l, uint64_t *t, size_t n, uint32_t *ctas, cm_err *err)
{
    uint32_t g = l->plan.host.ctas + l->plan.hbm.ctas;
    if (ctas) *ctas = g;
    if (!l->times) return cm_fail(err, "gemm: launch prepared without diag_times");
    if (n < (size_t)g * DAK_GEMM_NTIMES)
        return cm_fail(err, "gemm: %zu stamp words given, %u CTAs need %u", n, g, g * DAK_GEMM_NTIMES);
    DAK_CU(cudaMemcpy(t, l->times, (size_t)g * DAK_GEMM_NTIMES * 8u, cudaMemcpyDeviceToHost), err);
    return 0;
}

extern "C" int dak_diag_empty(dak_gemm_ctx *ctx, uint32_t grid, uint32_t smem, void *stream, cm_err *err)
{
    if (grid == 0 || smem > ctx->smem_optin)
        return cm_fail(err, "gemm: empty kernel: grid %u, %u bytes of shared memory (at most %zu)", grid, smem,
                       ctx->smem_optin);
    k_empty<<<grid, NTHREADS, smem, (cudaStream_t)stream>>>();
    DAK_CU(cudaGetLastError(), err);
    return 0;
}

extern "C" void dak_gemm_launch_free(dak_gemm_launch *l)
{
    if (!l) return;
    if (l->hb) cudaFree(l->hb);
    if (l->times) cudaFree(l->times);
    dak_panel_free(l->panel);
    free(l);
}

extern "C" int dak_gemm_split(dak_gemm_ctx *ctx, const dak_tiered *A, const uint16_t *B, void *C,
                              uint32_t N, const dak_gemm_opts *o, cm_err *err)
{
    dak_gemm_launch *l;
    if (dak_gemm_prepare(ctx, A, B, C, N, o, &l, err)) return -1;
    int rc = dak_gemm_run(l, NULL, err);
    if (!rc) {
        cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess) rc = cm_fail(err, "gemm: kernel failed: %s", cudaGetErrorString(e));
    }
    dak_gemm_launch_free(l);
    return rc;
}
