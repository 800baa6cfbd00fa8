#define _POSIX_C_SOURCE 200809L
/* dak bench gemm: the direct-access split GEMM (seed 003, Sec. 4.1, 4.3, 6.2)
 * against the aggregate-bandwidth bound and the baselines (cuBLAS all-HBM,
 * prefetch, double-buffered prefetch, naive zero-copy, unified memory), plus
 * the congestion sweep, read amplification with/without multicast and wave
 * alignment on/off.  Prints tables, writes one JSON document. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_sections.h"
#include "commands.h"
#include "common/args.h"
#include "common/bench.h"
#include "common/error.h"
#include "common/json.h"

#ifdef DAK_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/cuda_check.h"
#include "dak/gemm.h"
#include "dak/tiered.h"
#endif

#define MAXL 16

typedef struct {
    uint32_t shapes[MAXL][2];
    int nshapes;
    uint32_t ns[MAXL];
    int nn;
    double ratios[MAXL]; /* fractions */
    int nr;
    uint32_t reps, host_sms, window, cluster, layers;
    uint32_t bm; /* rows per CTA tile of the split kernel's HBM tier: 0 auto, 64, 128 (dak_gemm_opts.bm) */
    uint32_t bn; /* columns per CTA tile of its 128-row HBM tiles: 0 auto, 64, 128, 256 (dak_gemm_opts.bn) */
    uint32_t panel; /* host rows of the split column through the panel kernel: 0 no, 1 yes, 2 auto */
    uint32_t kstep, stages; /* ring slot size (64-column blocks) and slot count, 0 auto (dak_gemm_opts) */
    uint32_t hbm_sms;       /* CTAs reading HBM tile rows, 0 all left (dak_gemm_opts.hbm_ctas) */
    uint32_t tile_align;    /* dak_gemm_opts.tile_align (default 1) */
    uint32_t l2_hints;      /* dak_gemm_opts.l2_hints (default 1) */
    uint32_t rotate;        /* dak_gemm_opts.diag_rotate (default 0) */
    int sec_sweep, sec_cong, sec_amp, sec_wave, sec_diag, sec_fixed, sec_wgmma, sec_smrate;
    int base_cublas, base_prefetch, base_overlap, base_naive, base_uvm;
    int n_given; /* --n was given: the fixed section times those N (else 1, 8, 64) */
    const char *json;
} bench_cfg;

static void usage(FILE *o)
{
    fprintf(o,
            "usage: dak bench gemm [options]\n"
            "  --shapes LIST    MxK,... (default 7168x7168,28672x7168,11008x4096)\n"
            "  --n LIST         batch columns N (default 1,8,64,512,1024; the fixed section: 1,8,64 unless\n"
            "                   given)\n"
            "  --ratios LIST    offload ratios in %% (default 0,0.5,1,2,5,10,20,40,60,80,100)\n"
            "  --reps N         timed repetitions per point, median reported (default 10)\n"
            "  --host-sms N     SMs reading host memory, 0 = auto (default 0)\n"
            "  --window N       in-flight copies per host SM, 0 = auto (~1 MiB in flight) (default 0)\n"
            "  --cluster N      multicast cluster for N >= 128: 2, 4 or 8 (default 8)\n"
            "  --layers N       GEMMs in the double-buffered prefetch sequence (default 8)\n"
            "  --bm N           rows of A per CTA tile of the split kernel's HBM tier: 0 (auto: 128 where\n"
            "                   N > 32), 64 or 128; applies to every split-kernel configuration (default 0)\n"
            "  --bn N           columns per CTA tile of the split kernel's 128-row HBM tiles: 0 (auto: as wide\n"
            "                   as N / cluster, up to 256; 128 beside a tiled host tier), 64, 128 or 256; configurations\n"
            "                   it does not apply to (wgmma 0, dyn, 64-row tiles, bn 256 beside a tiled host\n"
            "                   tier) run with bn auto, noted once on stderr (default 0)\n"
            "  --kstep N        64-column blocks of A per ring slot of the split kernels: 0 (auto), 1, 2\n"
            "                   or 4 (default 0)\n"
            "  --stages N       ring slots of the split kernels: 0 (as many as fit) or 2..24 (default 0)\n"
            "  --hbm-sms N      CTAs of the split kernels that read HBM rows, 0 = all SMs left (default 0)\n"
            "  --l2-hints N     1: the split kernel's copies carry L2 policies (A evict-first, B evict-last;\n"
            "                   dak_gemm_opts.l2_hints), 0: none (default 1)\n"
            "  --rotate N       diagnostic: CTA j of a tier takes share (j + N) mod its CTAs (diag_rotate;\n"
            "                   default 0)\n"
            "  --tile-align N   1: the HBM CTA count aligned to the tiles (dak_gemm_opts.tile_align), 0: all\n"
            "                   SMs (default 1)\n"
            "  --panel N        the split column's host rows through the A-stationary panel kernel: 0 never,\n"
            "                   1 always, 2 auto (where the tiled path would fetch a host tile twice)\n"
            "                   (default 2)\n"
            "  --sections LIST  sweep,congestion,amp,wave,diag,fixed,wgmma,smrate (default all but diag, fixed,\n"
            "                   wgmma and smrate; wgmma: the fixed section's one-launch mma.sync / wgmma / cuBLAS\n"
            "                   table alone; smrate: each SM's share of HBM, even and rate-weighted splits)\n"
            "  --baselines LIST cublas,prefetch,overlap,naive,uvm (default all)\n"
            "  --json FILE      JSON output (default dak-gemm.json)\n");
}

/* comma list parsing with the shared argument checkers */
static int parse_list(const char *flag, const char *v, int kind, bench_cfg *c)
{
    char buf[1024];
    if (strlen(v) >= sizeof buf) {
        fprintf(stderr, "dak bench: %s: list too long\n", flag);
        return -1;
    }
    strcpy(buf, v);
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n >= MAXL) {
            fprintf(stderr, "dak bench: %s: at most %d entries\n", flag, MAXL);
            return -1;
        }
        if (kind == 0) { /* shape MxK */
            char *x = strchr(t, 'x');
            if (!x) {
                fprintf(stderr, "dak bench: %s: expected MxK, got '%s'\n", flag, t);
                return -1;
            }
            *x = 0;
            if (arg_u32("dak bench", flag, t, 64, 1u << 20, &c->shapes[n][0]) ||
                arg_u32("dak bench", flag, x + 1, 64, 1u << 20, &c->shapes[n][1]))
                return -1;
            if (c->shapes[n][0] % 64 || c->shapes[n][1] % 64) {
                fprintf(stderr, "dak bench: %s: expected M and K multiples of 64, got %ux%u\n", flag,
                        c->shapes[n][0], c->shapes[n][1]);
                return -1;
            }
        } else if (kind == 1) {
            if (arg_u32("dak bench", flag, t, 1, 65536, &c->ns[n])) return -1;
        } else {
            double r;
            if (arg_f64("dak bench", flag, t, 0.0, 100.0, &r)) return -1;
            c->ratios[n] = r / 100.0;
        }
        n++;
    }
    if (n == 0) {
        fprintf(stderr, "dak bench: %s: expected a non-empty list\n", flag);
        return -1;
    }
    if (kind == 0) c->nshapes = n;
    if (kind == 1) c->nn = n;
    if (kind == 2) c->nr = n;
    return 0;
}

static int parse_names(const char *flag, const char *v, const char *const *names, int **dst, int count)
{
    for (int i = 0; i < count; i++) *dst[i] = 0;
    char buf[256];
    if (strlen(v) >= sizeof buf) {
        fprintf(stderr, "dak bench: %s: list too long\n", flag);
        return -1;
    }
    strcpy(buf, v);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (int i = 0; i < count; i++)
            if (!strcmp(t, names[i])) *dst[i] = 1, found = 1;
        if (!found) {
            fprintf(stderr, "dak bench: %s: unknown entry '%s' (expected one of", flag, t);
            for (int i = 0; i < count; i++) fprintf(stderr, " %s", names[i]);
            fprintf(stderr, ")\n");
            return -1;
        }
    }
    return 0;
}

/* A flag whose value must be one of `n` listed values (`expected` words them for the message):
 * out of their range, arg_u32's message; in range but not listed, "expected <expected>". */
static int arg_u32_oneof(const char *flag, const char *v, const uint32_t *allowed, int n, const char *expected,
                         uint32_t *out)
{
    uint32_t lo = allowed[0], hi = allowed[0];
    for (int i = 1; i < n; i++) {
        if (allowed[i] < lo) lo = allowed[i];
        if (allowed[i] > hi) hi = allowed[i];
    }
    if (arg_u32("dak bench", flag, v, lo, hi, out)) return -1;
    for (int i = 0; i < n; i++)
        if (*out == allowed[i]) return 0;
    fprintf(stderr, "dak bench: %s: expected %s, got '%s'\n", flag, expected, v);
    return -1;
}

static int parse(int argc, char **argv, bench_cfg *c)
{
    memset(c, 0, sizeof *c);
    parse_list("--shapes", "7168x7168,28672x7168,11008x4096", 0, c);
    parse_list("--n", "1,8,64,512,1024", 1, c);
    parse_list("--ratios", "0,0.5,1,2,5,10,20,40,60,80,100", 2, c);
    c->reps = 10, c->host_sms = 0, c->window = 0, c->cluster = 8, c->layers = 8, c->panel = 2, c->tile_align = 1, c->l2_hints = 1;
    c->sec_sweep = c->sec_cong = c->sec_amp = c->sec_wave = 1;
    c->base_cublas = c->base_prefetch = c->base_overlap = c->base_naive = c->base_uvm = 1;
    c->json = "dak-gemm.json";
    static const char *const secn[] = {"sweep", "congestion", "amp", "wave", "diag", "fixed", "wgmma", "smrate"};
    static const char *const basen[] = {"cublas", "prefetch", "overlap", "naive", "uvm"};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        }
#define VAL() ((v = arg_value("dak bench", argc, argv, &i)) != NULL)
        if (arg_is(a, "--shapes")) {
            if (!VAL() || parse_list("--shapes", v, 0, c)) return -1;
        } else if (arg_is(a, "--n")) {
            if (!VAL() || parse_list("--n", v, 1, c)) return -1;
            c->n_given = 1;
        } else if (arg_is(a, "--ratios")) {
            if (!VAL() || parse_list("--ratios", v, 2, c)) return -1;
        } else if (arg_is(a, "--reps")) {
            if (!VAL() || arg_u32("dak bench", "--reps", v, 1, 1000, &c->reps)) return -1;
        } else if (arg_is(a, "--host-sms")) {
            if (!VAL() || arg_u32("dak bench", "--host-sms", v, 0, 1024, &c->host_sms)) return -1;
        } else if (arg_is(a, "--window")) {
            if (!VAL() || arg_u32("dak bench", "--window", v, 0, 24, &c->window)) return -1;
        } else if (arg_is(a, "--cluster")) {
            static const uint32_t ok[] = {1, 2, 4, 8};
            if (!VAL() || arg_u32_oneof("--cluster", v, ok, 4, "1, 2, 4 or 8", &c->cluster)) return -1;
        } else if (arg_is(a, "--bm")) {
            static const uint32_t ok[] = {0, 64, 128};
            if (!VAL() || arg_u32_oneof("--bm", v, ok, 3, "0 (auto), 64 or 128", &c->bm)) return -1;
        } else if (arg_is(a, "--kstep")) {
            static const uint32_t ok[] = {0, 1, 2, 4};
            if (!VAL() || arg_u32_oneof("--kstep", v, ok, 4, "0 (auto), 1, 2 or 4", &c->kstep)) return -1;
        } else if (arg_is(a, "--tile-align")) {
            if (!VAL() || arg_u32("dak bench", "--tile-align", v, 0, 1, &c->tile_align)) return -1;
        } else if (arg_is(a, "--rotate")) {
            if (!VAL() || arg_u32("dak bench", "--rotate", v, 0, 1024, &c->rotate)) return -1;
        } else if (arg_is(a, "--l2-hints")) {
            if (!VAL() || arg_u32("dak bench", "--l2-hints", v, 0, 1, &c->l2_hints)) return -1;
        } else if (arg_is(a, "--hbm-sms")) {
            if (!VAL() || arg_u32("dak bench", "--hbm-sms", v, 0, 1024, &c->hbm_sms)) return -1;
        } else if (arg_is(a, "--stages")) {
            if (!VAL() || arg_u32("dak bench", "--stages", v, 0, 24, &c->stages)) return -1;
            if (c->stages == 1) {
                fprintf(stderr, "dak bench: --stages: expected 0 (as many as fit) or 2..24, got '%s'\n", v);
                return -1;
            }
        } else if (arg_is(a, "--panel")) {
            if (!VAL() || arg_u32("dak bench", "--panel", v, 0, 2, &c->panel)) return -1;
        } else if (arg_is(a, "--bn")) {
            static const uint32_t ok[] = {0, 64, 128, 256};
            if (!VAL() || arg_u32_oneof("--bn", v, ok, 4, "0 (auto), 64, 128 or 256", &c->bn)) return -1;
        } else if (arg_is(a, "--layers")) {
            if (!VAL() || arg_u32("dak bench", "--layers", v, 1, 1000, &c->layers)) return -1;
        } else if (arg_is(a, "--sections")) {
            int *d[] = {&c->sec_sweep, &c->sec_cong, &c->sec_amp,   &c->sec_wave,
                        &c->sec_diag,  &c->sec_fixed, &c->sec_wgmma, &c->sec_smrate};
            if (!VAL() || parse_names("--sections", v, secn, d, 8)) return -1;
        } else if (arg_is(a, "--baselines")) {
            int *d[] = {&c->base_cublas, &c->base_prefetch, &c->base_overlap, &c->base_naive, &c->base_uvm};
            if (!VAL() || parse_names("--baselines", v, basen, d, 5)) return -1;
        } else if (arg_is(a, "--json")) {
            if (!VAL()) return -1;
            c->json = v;
        } else {
            fprintf(stderr, "dak bench gemm: unknown option '%s'\n", a);
            usage(stderr);
            return -1;
        }
#undef VAL
    }
    return 0;
}

#ifdef DAK_HAVE_CUDA

#define CK(x) CM_CUDA_OR_EXIT(x)
#define DK(x)                                                                                  \
    do {                                                                                       \
        if ((x)) {                                                                             \
            fprintf(stderr, "dak bench: %s\n", err.msg);                                       \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

typedef struct {
    int kind; /* 0 split, 1 cublas, 2 prefetch, 3 overlap, 4 naive, 5 uvm */
    dak_gemm_ctx *ctx;
    dak_gemm_launch *launch;
    const dak_tiered *A;
    const uint16_t *Afull;
    uint16_t *stage[2];
    const uint16_t *B;
    float *C;
    uint32_t M, N, K, layers;
    uint16_t *um; /* managed copy of A for the uvm baseline */
    size_t um_host_bytes;
    dak_gemm_launch *seq[2]; /* split-seq: launches over two copies of A's HBM rows */
    cudaStream_t seq_stream; /* blocking stream: ordered with the legacy stream's events */
} op_t;

static int op_run(op_t *o, cm_err *err)
{
    switch (o->kind) {
    case 0: return dak_gemm_run(o->launch, NULL, err);
    case 1: return dak_base_cublas(o->ctx, o->Afull, o->B, o->C, o->M, o->N, o->K, NULL, err);
    case 2: return dak_base_prefetch(o->ctx, o->A, o->stage[0], o->B, o->C, o->N, NULL, err);
    case 3: return dak_base_prefetch_overlap(o->ctx, o->A, o->stage, o->B, o->C, o->N, o->layers, NULL, err);
    case 4: return dak_base_naive(o->A, o->B, o->C, o->N, NULL, err);
    case 5: return dak_base_cublas(o->ctx, o->um, o->B, o->C, o->M, o->N, o->K, NULL, err);
    case 6: /* the split GEMM as a sequence of `layers` GEMMs, alternating between two copies of the
               HBM rows like the overlap baseline's two staging buffers (PDL where the plan allows) */
        for (uint32_t i = 0; i < o->layers; i++)
            if (dak_gemm_run(o->seq[i & 1u], o->seq_stream, err)) return -1;
        return 0;
    }
    return cm_fail(err, "bad op");
}

/* untimed preparation before each repetition */
static int op_pre(op_t *o, cm_err *err)
{
    if (o->kind == 5 && o->um_host_bytes) {
        struct cudaMemLocation host = {cudaMemLocationTypeHost, 0};
        cudaError_t e = cudaMemPrefetchAsync(o->um, o->um_host_bytes, host, 0, NULL);
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        if (e != cudaSuccess) return cm_fail(err, "uvm: prefetch to host: %s", cudaGetErrorString(e));
    }
    return 0;
}

/* median milliseconds over reps (2 warm-up), L2 flushed before each repetition */
static double time_op(op_t *o, uint32_t reps, cm_err *err, int *failed)
{
    static cudaEvent_t e0, e1;
    if (!e0) {
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
    }
    double *t = cm_malloc(sizeof(double) * reps);
    *failed = 0;
    for (uint32_t i = 0; i < reps + 2; i++) {
        if (op_pre(o, err) || dak_l2_flush(o->ctx, NULL, err)) {
            *failed = 1;
            break;
        }
        CK(cudaEventRecord(e0, NULL));
        if (op_run(o, err)) {
            *failed = 1;
            break;
        }
        CK(cudaEventRecord(e1, NULL));
        cudaError_t e = cudaEventSynchronize(e1);
        if (e != cudaSuccess) {
            cm_fail(err, "%s", cudaGetErrorString(e));
            *failed = 1;
            break;
        }
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (i >= 2) t[i - 2] = ms;
    }
    double m = *failed ? NAN : bench_median(t, reps);
    free(t);
    if (!*failed && (o->kind == 3 || o->kind == 6)) m /= o->layers;
    return m;
}


/* ---- fixed cost per launch (issue #7): the split kernel and cuBLAS timed alike, as one
 * launch, as FX_L launches back to back, and as a CUDA graph of those FX_L launches; the
 * back-to-back launches rotate over FX_NCP copies of A (4 x >= 90 MB, more than the 60 MB
 * L2), and the L2 is flushed once before each timed repetition. ---- */
#define FX_NCP 4
#define FX_L 8

typedef struct {
    int kind; /* 0 split, 1 cublas, 2 empty kernel */
    dak_gemm_ctx *ctx;
    dak_gemm_launch *l[FX_NCP];
    uint16_t *const *ar;
    const uint16_t *B;
    float *C;
    uint32_t M, N, K, grid, smem;
} fx_op;

static int fx_enqueue(fx_op *o, int i, cudaStream_t st, cm_err *err)
{
    if (o->kind == 0) return dak_gemm_run(o->l[i % FX_NCP], st, err);
    if (o->kind == 1) return dak_base_cublas(o->ctx, o->ar[i % FX_NCP], o->B, o->C, o->M, o->N, o->K, st, err);
    return dak_diag_empty(o->ctx, o->grid, o->smem, st, err);
}

/* median microseconds per launch; mode 0: one launch, 1: FX_L back to back, 2: graph of FX_L */
static double fx_time(fx_op *o, int mode, uint32_t reps, cudaStream_t st)
{
    static cudaEvent_t e0, e1;
    if (!e0) {
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
    }
    cm_err err;
    int n = mode ? FX_L : 1;
    cudaGraphExec_t ge = NULL;
    if (mode == 2) {
        /* warm-up outside the capture (cuBLAS picks its kernel and workspace) */
        if (fx_enqueue(o, 0, st, &err)) goto fail;
        CK(cudaStreamSynchronize(st));
        cudaGraph_t g;
        if (cudaStreamBeginCapture(st, cudaStreamCaptureModeRelaxed) != cudaSuccess) {
            cm_fail(&err, "begin capture failed");
            goto fail;
        }
        int bad = 0;
        for (int j = 0; j < n && !bad; j++) bad = fx_enqueue(o, j, st, &err);
        cudaError_t e = cudaStreamEndCapture(st, &g);
        if (bad || e != cudaSuccess) {
            if (!bad) cm_fail(&err, "capture: %s", cudaGetErrorString(e));
            goto fail;
        }
        e = cudaGraphInstantiate(&ge, g, 0);
        cudaGraphDestroy(g);
        if (e != cudaSuccess) {
            cm_fail(&err, "instantiate: %s", cudaGetErrorString(e));
            ge = NULL;
            goto fail;
        }
    }
    double *t = cm_malloc(sizeof(double) * reps);
    for (uint32_t i = 0; i < reps + 2; i++) {
        if (dak_l2_flush(o->ctx, st, &err)) {
            free(t);
            goto fail;
        }
        CK(cudaEventRecord(e0, st));
        if (ge) {
            CK(cudaGraphLaunch(ge, st));
        } else {
            for (int j = 0; j < n; j++)
                if (fx_enqueue(o, j, st, &err)) {
                    free(t);
                    goto fail;
                }
        }
        CK(cudaEventRecord(e1, st));
        cudaError_t e = cudaEventSynchronize(e1);
        if (e != cudaSuccess) {
            cm_fail(&err, "%s", cudaGetErrorString(e));
            free(t);
            goto fail;
        }
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (i >= 2) t[i - 2] = 1e3 * ms / n;
    }
    double m = bench_median(t, reps);
    free(t);
    if (ge) cudaGraphExecDestroy(ge);
    return m;
fail:
    fprintf(stderr, "dak bench: fixed (kind %d, mode %d): %s\n", o->kind, mode, err.msg);
    if (ge) cudaGraphExecDestroy(ge);
    cudaStreamSynchronize(st);
    cudaGetLastError();
    return NAN;
}

/* dak_gemm_prepare with --bn as a request: a configuration that refuses the width asked for
 * (wgmma 0, dyn, 64-row tiles, bn 256 beside a tiled host tier) runs with bn auto instead, noted
 * once; the plan (JSON "bn") says which width ran. */
static int bench_prepare(dak_gemm_ctx *ctx, const dak_tiered *A, const uint16_t *B, float *C, uint32_t N,
                         const dak_gemm_opts *go, dak_gemm_launch **l, cm_err *err)
{
    if (!dak_gemm_prepare(ctx, A, B, C, N, go, l, err)) return 0;
    if (!go->bn) return -1;
    static int told;
    if (!told++) fprintf(stderr, "dak bench: note: %s; such configurations run with bn 0 (auto)\n", err->msg);
    dak_gemm_opts o2 = *go;
    o2.bn = 0;
    return dak_gemm_prepare(ctx, A, B, C, N, &o2, l, err);
}

static int fx_prepare(fx_op *o, dak_gemm_ctx *ctx, dak_tiered *At, const uint16_t *B, float *C, uint32_t N,
                      const dak_gemm_opts *go)
{
    cm_err err;
    memset(o, 0, sizeof *o);
    o->kind = 0, o->ctx = ctx;
    for (int i = 0; i < FX_NCP; i++)
        if (bench_prepare(ctx, &At[i], B, C, N, go, &o->l[i], &err)) {
            fprintf(stderr, "dak bench: fixed: %s\n", err.msg);
            for (int j = 0; j < i; j++) dak_gemm_launch_free(o->l[j]);
            return -1;
        }
    return 0;
}

static void fx_free(fx_op *o)
{
    for (int i = 0; i < FX_NCP; i++) dak_gemm_launch_free(o->l[i]);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* stamps of one run, in us: [0] kernel span (last exit - first entry), [1] entry spread,
 * [2] first copy issued - entry (median), [3] first slot full - entry (median), [4] streaming
 * (last - first slot full, median), [5] spread of the last slot full, [6] tail after the last
 * slot (median), [7] its max, [8] event time - span */
#define FX_NST 9
static void fx_stamps(const uint64_t *ts, uint32_t g, double ev_us, double *o)
{
    uint64_t *a = cm_malloc(8 * g), mn0 = UINT64_MAX, mx0 = 0, mx5 = 0, mn4 = UINT64_MAX, mx4 = 0, mxt = 0;
    double med[4];
    for (int f = 0; f < 4; f++) {
        for (uint32_t i = 0; i < g; i++) {
            const uint64_t *t = ts + (size_t)i * DAK_GEMM_NTIMES;
            a[i] = f == 0 ? t[1] - t[0] : f == 1 ? t[3] - t[0] : f == 2 ? t[4] - t[3] : t[5] - t[4];
        }
        qsort(a, g, 8, cmp_u64);
        med[f] = a[g / 2] / 1e3;
    }
    for (uint32_t i = 0; i < g; i++) {
        const uint64_t *t = ts + (size_t)i * DAK_GEMM_NTIMES;
        if (t[0] < mn0) mn0 = t[0];
        if (t[0] > mx0) mx0 = t[0];
        if (t[5] > mx5) mx5 = t[5];
        if (t[4] < mn4) mn4 = t[4];
        if (t[4] > mx4) mx4 = t[4];
        if (t[5] - t[4] > mxt) mxt = t[5] - t[4];
    }
    free(a);
    o[0] = (mx5 - mn0) / 1e3, o[1] = (mx0 - mn0) / 1e3, o[2] = med[0], o[3] = med[1], o[4] = med[2];
    o[5] = (mx4 - mn4) / 1e3, o[6] = med[3], o[7] = mxt / 1e3, o[8] = ev_us - o[0];
}

static double gbs(double bytes, double ms) { return isfinite(ms) && ms > 0 ? bytes / (ms * 1e6) : NAN; }

static void kv_num(json_w *w, const char *k, double v)
{
    if (isfinite(v))
        json_kv_f64(w, k, v);
    else {
        json_key(w, k);
        json_null(w);
    }
}

static double time_split(dak_gemm_ctx *ctx, const dak_tiered *A, const uint16_t *B, float *C, uint32_t N,
                         const dak_gemm_opts *go, uint32_t reps, dak_gemm_plan *plan_out,
                         uint64_t *host_bytes)
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

/* The split kernel's options for one configuration: the defaults and the --bm / --bn / --panel
 * asked for. */
static void bench_opts(dak_gemm_opts *o, const bench_cfg *c)
{
    dak_gemm_opts_default(o);
    o->bm = c->bm;
    o->bn = c->bn;
    o->panel = c->panel;
    o->kstep = c->kstep;
    o->stages = c->stages;
    o->hbm_ctas = c->hbm_sms;
    o->tile_align = (int)c->tile_align;
    o->l2_hints = (int)c->l2_hints;
    o->diag_rotate = c->rotate;
}

/* The split GEMM as a sequence of `layers` launches (the counterpart of the overlap baseline's
 * sequence): two launches, over A and over a view whose HBM rows are the copy Adp2 (host rows
 * shared, as overlap re-copies the same host rows), alternated on one blocking stream; PDL unless
 * the split column's plan used the panel path (pdl turns it off).  Median ms per GEMM. */
static double time_split_seq(dak_gemm_ctx *ctx, const dak_tiered *A, uint16_t *Adp2, const uint16_t *B, float *C,
                             uint32_t N, const bench_cfg *c, int panel_on)
{
    cm_err err;
    op_t o;
    memset(&o, 0, sizeof o);
    o.kind = 6, o.ctx = ctx, o.layers = c->layers;
    dak_tiered A2;
    dak_gemm_opts so;
    bench_opts(&so, c);
    so.host_ctas = c->host_sms, so.window = c->window;
    if (!panel_on) so.panel = 0, so.pdl = 1; /* pdl and the panel path exclude each other */
    double ms = NAN;
    cudaError_t e = cudaSuccess;
    if (dak_tiered_view(&A2, A->M, A->K, A->rows_host, A->host, Adp2, 1, &err) ||
        bench_prepare(ctx, A, B, C, N, &so, &o.seq[0], &err) || bench_prepare(ctx, &A2, B, C, N, &so, &o.seq[1], &err) ||
        ((e = cudaStreamCreate(&o.seq_stream)) != cudaSuccess && cm_fail(&err, "stream: %s", cudaGetErrorString(e)))) {
        fprintf(stderr, "dak bench: split-seq: %s\n", err.msg);
    } else {
        int failed;
        ms = time_op(&o, c->reps, &err, &failed);
        if (failed) fprintf(stderr, "dak bench: split-seq: %s\n", err.msg);
    }
    if (o.seq_stream) cudaStreamDestroy(o.seq_stream);
    dak_gemm_launch_free(o.seq[0]);
    dak_gemm_launch_free(o.seq[1]);
    return ms;
}

static int run(const bench_cfg *c)
{
    cm_err err;
    dak_gemm_ctx *ctx;
    DK(dak_gemm_ctx_create(&ctx, &err));
    uint32_t sms = dak_gemm_ctx_sms(ctx);
    struct cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    FILE *jf = fopen(c->json, "w");
    if (!jf) {
        fprintf(stderr, "dak bench: cannot write %s\n", c->json);
        return 1;
    }
    json_w w;
    json_init(&w, jf);
    json_obj_begin(&w);
    json_kv_str(&w, "bench", "dak gemm");
    bench_json_machine(&w);
    json_kv_str(&w, "gpu", prop.name);
    json_kv_u64(&w, "sms", sms);
    json_kv_u64(&w, "reps", c->reps);
    json_kv_u64(&w, "host_sms", c->host_sms);
    json_kv_u64(&w, "window", c->window);

    /* ---- bandwidth probes: B_h, B_g in this run ---- */
    size_t hprobe = 512ull << 20, gprobe = 2048ull << 20;
    void *hbuf, *hbuf_dev, *gbuf;
    CK(cudaHostAlloc(&hbuf, hprobe, cudaHostAllocMapped | cudaHostAllocPortable));
    CK(cudaHostGetDevicePointer(&hbuf_dev, hbuf, 0));
    memset(hbuf, 1, hprobe);
    CK(cudaMalloc(&gbuf, gprobe));
    CK(cudaMemset(gbuf, 1, gprobe));
    double bh_v[3], bg_v[5], dummy;
    for (int i = 0; i < 5; i++) DK(dak_probe_bw(ctx, NULL, 0, 0, 1, gbuf, gprobe, sms, &dummy, &bg_v[i], &err));
    for (int i = 0; i < 3; i++)
        DK(dak_probe_bw(ctx, hbuf_dev, hprobe, 16, 8, NULL, 0, 0, &bh_v[i], &dummy, &err));
    double Bg = bench_median(bg_v, 5), Bh = bench_median(bh_v, 3);
    printf("# probes: B_g (HBM -> smem, %u SMs, 24 x 8 KiB bulk copies in flight each) = %.1f GB/s, B_h (host -> smem, 16 SMs, window 8) = %.1f GB/s\n",
           sms, Bg, Bh);
    json_key(&w, "probes");
    json_obj_begin(&w);
    json_kv_f64(&w, "B_g_GBs", Bg);
    json_kv_f64(&w, "B_h_GBs", Bh);
    json_obj_end(&w);

    /* ---- congestion sweep (Fig. 7): host SMs x window with 100 HBM SMs ---- */
    if (c->sec_cong) {
        static const uint32_t hs[] = {0, 1, 2, 4, 8, 16, 32};
        static const uint32_t ws[] = {1, 2, 4, 8, 16, 24};
        uint32_t ghbm = sms >= 100 + 32 ? 100 : sms - 32;
        printf("\n# congestion: %u SMs read HBM while H SMs read host memory with W 8 KiB copies in flight each\n", ghbm);
        printf("%6s %4s %12s %12s %12s\n", "hostSM", "W", "host GB/s", "HBM GB/s", "sum GB/s");
        json_key(&w, "congestion");
        json_arr_begin(&w);
        for (size_t a = 0; a < sizeof hs / sizeof hs[0]; a++)
            for (size_t b = 0; b < sizeof ws / sizeof ws[0]; b++) {
                if (hs[a] == 0 && b > 0) continue;
                double h, g;
                DK(dak_probe_bw(ctx, hbuf_dev, hprobe, hs[a], ws[b], gbuf, gprobe, ghbm, &h, &g, &err));
                printf("%6u %4u %12.1f %12.1f %12.1f\n", hs[a], hs[a] ? ws[b] : 0, h, g, h + g);
                fflush(stdout);
                json_obj_begin(&w);
                json_kv_u64(&w, "host_sms", hs[a]);
                json_kv_u64(&w, "window", hs[a] ? ws[b] : 0);
                json_kv_u64(&w, "hbm_sms", ghbm);
                json_kv_f64(&w, "host_GBs", h);
                json_kv_f64(&w, "hbm_GBs", g);
                json_obj_end(&w);
            }
        json_arr_end(&w);
    }
    /* ---- diagnostics: HBM probe copy size x assignment ---- */
    if (c->sec_diag) {
        printf("\n# diag: HBM probe, %u SMs, 192 KiB in flight each: copy size x assignment (GB/s)\n", sms);
        json_key(&w, "diag_probe");
        json_arr_begin(&w);
        static const uint32_t chs[] = {8192, 16384, 32768};
        for (size_t a = 0; a < 3; a++)
            for (int contig = 0; contig < 2; contig++) {
                double v[3];
                for (int i = 0; i < 3; i++) DK(dak_probe_hbm(ctx, gbuf, gprobe, sms, chs[a], contig, &v[i], &err));
                double m = bench_median(v, 3);
                printf("  chunk %5u %-12s %8.1f\n", chs[a], contig ? "contiguous" : "interleaved", m);
                json_obj_begin(&w);
                json_kv_u64(&w, "chunk", chs[a]);
                json_kv_bool(&w, "contiguous", contig);
                json_kv_f64(&w, "GBs", m);
                json_obj_end(&w);
            }
        json_arr_end(&w);
    }
    /* ---- per-SM HBM shares (the spread of the split GEMM's CTAs) ---- */
    static double sm_us[1024];
    uint32_t nsm = 0;
    if (c->sec_smrate && bench_smrate(ctx, gbuf, gprobe, (size_t)7168 * 7168 * 2, c->reps, &w, sm_us, &nsm)) return 1;
    cudaFreeHost(hbuf);
    cudaFree(gbuf);

    uint32_t NMAXALL = 4096;
    for (int si = 0; si < c->nshapes; si++) {
        uint32_t M = c->shapes[si][0], K = c->shapes[si][1];
        size_t abytes = (size_t)M * K * 2;
        uint32_t nmax = 1;
        for (int i = 0; i < c->nn; i++)
            if (c->ns[i] > nmax) nmax = c->ns[i];
        if (c->sec_amp && si == 0 && nmax < NMAXALL) nmax = NMAXALL;
        if ((c->sec_fixed || c->sec_wgmma) && nmax < 512) nmax = 512; /* the fixed section's wgmma A/B at N = 128, 512 */
        uint16_t *Ad, *Ah, *Adp, *Ahp, *B, *st[2] = {NULL, NULL};
        float *C;
        CK(cudaMalloc((void **)&Ad, abytes));
        CK(cudaHostAlloc((void **)&Ah, abytes, cudaHostAllocMapped | cudaHostAllocPortable));
        CK(cudaMalloc((void **)&B, (size_t)K * nmax * 2));
        CK(cudaMalloc((void **)&C, (size_t)M * nmax * 4));
        DK(dak_fill_random_bf16(Ad, (size_t)M * K, 1000 + si, NULL, &err));
        DK(dak_fill_random_bf16(B, (size_t)K * nmax, 2000 + si, NULL, &err));
        CK(cudaMemcpy(Ah, Ad, abytes, cudaMemcpyDeviceToHost));
        /* the split kernel's packed copies (same tile rows, 8 KiB blocks) */
        CK(cudaMalloc((void **)&Adp, abytes));
        CK(cudaHostAlloc((void **)&Ahp, abytes, cudaHostAllocMapped | cudaHostAllocPortable));
        DK(dak_pack_rowmajor(Ad, Adp, M, K, &err));
        CK(cudaMemcpy(Ahp, Adp, abytes, cudaMemcpyDeviceToHost));
        uint16_t *Adp2 = NULL; /* split-seq: a second packed copy (the sequence's odd GEMMs) */
        if (c->base_overlap && c->sec_sweep) {
            CK(cudaMalloc((void **)&Adp2, abytes));
            CK(cudaMemcpy(Adp2, Adp, abytes, cudaMemcpyDeviceToDevice));
        }
        if (c->base_prefetch || c->base_overlap) {
            for (int i = 0; i < 2; i++) {
                CK(cudaMalloc((void **)&st[i], abytes));
                CK(cudaMemcpy(st[i], Ad, abytes, cudaMemcpyDeviceToDevice));
            }
        }
        /* unified memory only when it is small against the free HBM */
        uint16_t *um = NULL;
        size_t freeb = 0, totb = 0;
        CK(cudaMemGetInfo(&freeb, &totb));
        if (c->base_uvm && abytes <= (128ull << 20) && abytes * 4 < freeb) {
            if (cudaMallocManaged((void **)&um, abytes, cudaMemAttachGlobal) != cudaSuccess) um = NULL;
            else CK(cudaMemcpy(um, Ad, abytes, cudaMemcpyDeviceToDevice));
        }

        char key[64];
        if (c->sec_sweep) {
            snprintf(key, sizeof key, "sweep_%ux%u", M, K);
            json_key(&w, key);
            json_arr_begin(&w);
            printf("\n# A %ux%u (%.1f MB): effective bandwidth A-bytes/time in GB/s; bound = min(B_h/r, B_g/(1-r))\n", M, K,
                   abytes / 1e6);
            printf("# mma.sync: the split column's configuration with wgmma 0 (wide tiles on mma.sync; N > 32)\n");
            printf("# split kernels' HBM tiles: --bm %u (0 = auto: 128 rows where N > 32; JSON \"bm\" per point), --bn %u\n"
                   "# (0 = auto: as wide as N / cluster up to 256, 128 beside a tiled host tier; JSON \"bn\" per point)\n",
                   c->bm, c->bn);
            printf("# split-seq: the split column's GEMM as a sequence of %u (as overlap), PDL where the plan has no panel\n",
                   c->layers);
            printf("%5s %6s %8s %8s %6s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %9s\n", "N", "r%", "bound", "split", "%bnd",
                   "mma.sync", "tiled", "tiled-mc", "split-2d", "dyn", "cublas0", "prefetch", "overlap", "naive", "uvm",
                   "split-seq");
        }
        for (int ni = 0; ni < c->nn && c->sec_sweep; ni++) {
            uint32_t N = c->ns[ni];
            op_t ob;
            memset(&ob, 0, sizeof ob);
            ob.ctx = ctx, ob.Afull = Ad, ob.B = B, ob.C = C, ob.M = M, ob.N = N, ob.K = K;
            ob.stage[0] = st[0], ob.stage[1] = st[1], ob.layers = c->layers;
            int failed;
            double t_cublas = NAN;
            if (c->base_cublas) {
                ob.kind = 1;
                t_cublas = time_op(&ob, c->reps, &err, &failed);
                if (failed) fprintf(stderr, "dak bench: cublas: %s\n", err.msg);
            }
            for (int ri = 0; ri < c->nr; ri++) {
                uint32_t rows;
                DK(dak_tiered_rows_for_ratio(M, DAK_TILE_ROWS, c->ratios[ri], &rows, &err));
                dak_tiered A, Ar;
                DK(dak_tiered_view(&A, M, K, rows, Ahp, Adp, 1, &err));
                DK(dak_tiered_view(&Ar, M, K, rows, Ah, Ad, 0, &err));
                ob.A = &Ar;
                double r = (double)rows / M;
                double bound = abytes / fmax(r * abytes / (Bh * 1e9), (1 - r) * abytes / (Bg * 1e9)) / 1e9;
                dak_gemm_opts go;
                bench_opts(&go, c);
                go.host_ctas = c->host_sms, go.window = c->window;
                dak_gemm_plan plan;
                memset(&plan, 0, sizeof plan); /* time_split fills it only on success */
                /* split: the defaults (host rows through the panel kernel where the tiled
                   path would fetch them more than once); tiled and tiled-mc: the tiled
                   kernel for every row, without and with cluster multicast */
                double t_split = time_split(ctx, &A, B, C, N, &go, c->reps, &plan, NULL);
                double t_wg = NAN; /* the same with the wide tiles on mma.sync, in the same run */
                if (N > 32) {
                    go.wgmma = 0;
                    t_wg = time_split(ctx, &A, B, C, N, &go, c->reps, NULL, NULL);
                    go.wgmma = 2;
                }
                double t_tl = NAN, t_mc = NAN;
                dak_gemm_plan plan_mc = plan;
                if (N >= 128 && rows > 0) {
                    go.panel = 0;
                    t_tl = time_split(ctx, &A, B, C, N, &go, c->reps, NULL, NULL);
                    if (c->cluster > 1) {
                        go.cluster = c->cluster;
                        t_mc = time_split(ctx, &A, B, C, N, &go, c->reps, &plan_mc, NULL);
                    }
                    go.panel = c->panel;
                }
                double t_2d = NAN;
                if (N <= 64) {
                    go.cluster = 1, go.a_tma2d = 1, go.panel = 0; /* the panel path needs packed A */
                    t_2d = time_split(ctx, &Ar, B, C, N, &go, c->reps, NULL, NULL);
                    go.a_tma2d = 0, go.panel = c->panel;
                }
                double t_dyn = NAN;
                if (N <= 64) {
                    go.cluster = 1, go.dyn = 1;
                    t_dyn = time_split(ctx, &A, B, C, N, &go, c->reps, NULL, NULL);
                    go.dyn = 0;
                }
                double t_pf = NAN, t_ov = NAN, t_nv = NAN, t_um = NAN;
                if (c->base_prefetch) {
                    ob.kind = 2;
                    t_pf = time_op(&ob, c->reps, &err, &failed);
                    if (failed) fprintf(stderr, "dak bench: prefetch: %s\n", err.msg);
                }
                double t_seq = NAN;
                if (c->base_overlap) {
                    ob.kind = 3;
                    t_ov = time_op(&ob, c->reps, &err, &failed);
                    if (failed) fprintf(stderr, "dak bench: overlap: %s\n", err.msg);
                    t_seq = time_split_seq(ctx, &A, Adp2, B, C, N, c, plan.panel.on);
                }
                if (c->base_naive && N <= 64) {
                    ob.kind = 4;
                    t_nv = time_op(&ob, c->reps < 3 ? c->reps : 3, &err, &failed);
                    if (failed) fprintf(stderr, "dak bench: naive: %s\n", err.msg);
                }
                if (um && N <= 64) {
                    ob.kind = 5, ob.um = um, ob.um_host_bytes = (size_t)rows * K * 2;
                    t_um = time_op(&ob, 3, &err, &failed);
                    if (failed) {
                        fprintf(stderr, "dak bench: uvm: %s (baseline dropped)\n", err.msg);
                        cudaFree(um);
                        um = NULL;
                        cudaGetLastError();
                    }
                }
                double eb = gbs(abytes, t_split);
                printf("%5u %6.2f %8.1f %8.1f %5.1f%% %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %9.1f\n", N,
                       100 * r, bound, eb, 100 * eb / bound, gbs(abytes, t_wg), gbs(abytes, t_tl), gbs(abytes, t_mc),
                       gbs(abytes, t_2d), gbs(abytes, t_dyn), gbs(abytes, t_cublas), gbs(abytes, t_pf), gbs(abytes, t_ov),
                       gbs(abytes, t_nv), gbs(abytes, t_um), gbs(abytes, t_seq));
                fflush(stdout);
                json_obj_begin(&w);
                json_kv_u64(&w, "M", M);
                json_kv_u64(&w, "K", K);
                json_kv_u64(&w, "N", N);
                json_kv_f64(&w, "ratio_asked", c->ratios[ri]);
                json_kv_f64(&w, "ratio", r);
                json_kv_u64(&w, "rows_host", rows);
                json_kv_f64(&w, "bound_GBs", bound);
                kv_num(&w, "split_ms", t_split);
                kv_num(&w, "split_GBs", eb);
                kv_num(&w, "split_mma_ms", t_wg);
                kv_num(&w, "split_mma_GBs", gbs(abytes, t_wg));
                kv_num(&w, "split_TFLOPs", isfinite(t_split) ? 2.0 * M * N * K / (t_split * 1e9) : NAN);
                kv_num(&w, "split_mma_TFLOPs", isfinite(t_wg) ? 2.0 * M * N * K / (t_wg * 1e9) : NAN);
                kv_num(&w, "split_tiled_GBs", gbs(abytes, t_tl));
                kv_num(&w, "split_mc_GBs", gbs(abytes, t_mc));
                kv_num(&w, "split_2d_GBs", gbs(abytes, t_2d));
                kv_num(&w, "split_dyn_GBs", gbs(abytes, t_dyn));
                kv_num(&w, "cublas0_GBs", gbs(abytes, t_cublas));
                kv_num(&w, "prefetch_GBs", gbs(abytes, t_pf));
                kv_num(&w, "overlap_GBs", gbs(abytes, t_ov));
                kv_num(&w, "split_seq_GBs", gbs(abytes, t_seq));
                kv_num(&w, "naive_GBs", gbs(abytes, t_nv));
                kv_num(&w, "uvm_GBs", gbs(abytes, t_um));
                json_kv_u64(&w, "host_ctas", plan.host.ctas);
                json_kv_u64(&w, "host_window", plan.host.window);
                json_kv_u64(&w, "hbm_ctas", plan.hbm.ctas);
                json_kv_u64(&w, "tile_align", c->tile_align);
                json_kv_u64(&w, "l2_hints", c->l2_hints);
                json_kv_u64(&w, "host_ksplit", plan.host.ksplit);
                json_kv_u64(&w, "hbm_ksplit", plan.hbm.ksplit);
                json_kv_u64(&w, "stages", plan.stages);
                json_kv_u64(&w, "bm", plan.bm);
                json_kv_u64(&w, "bn", plan.bn);
                json_kv_u64(&w, "panel", plan.panel.on);
                json_kv_u64(&w, "hbm_stages", plan.hbm_stages);
                json_kv_u64(&w, "kstep", plan.kstep);
                json_kv_u64(&w, "cluster_mc", plan_mc.cluster);
                json_obj_end(&w);
            }
        }
        if (c->sec_sweep) json_arr_end(&w);

        /* ---- read amplification (Table 1), first shape, r = 100% ---- */
        if (c->sec_amp && si == 0) {
            static const uint32_t an[] = {256, 512, 1024, 2048, 4096};
            printf("\n# read amplification: A %ux%u all in host memory (%.1f MB), %u host SMs (0 = auto); tiled path\n"
                   "# without multicast (cluster 1), with cluster %u multicast, and the A-stationary panel path\n",
                   M, K, abytes / 1e6, c->host_sms, c->cluster);
            printf("%5s %6s %8s %10s %10s %10s %10s %10s\n", "N", "path", "cluster", "host MB", "amplif", "plan", "ms",
                   "EB GB/s");
            json_key(&w, "amplification");
            json_arr_begin(&w);
            dak_tiered A;
            DK(dak_tiered_view(&A, M, K, M, Ahp, Adp, 1, &err));
            for (size_t i = 0; i < sizeof an / sizeof an[0]; i++)
                for (int mode = 0; mode < 3; mode++) { /* interleaved: no multicast, multicast, panel */
                    dak_gemm_opts go;
                    bench_opts(&go, c);
                    go.host_ctas = c->host_sms, go.window = c->window;
                    go.cluster = mode == 1 ? c->cluster : 1;
                    go.panel = mode == 2;
                    uint64_t hb = 0;
                    dak_gemm_plan plan;
                    memset(&plan, 0, sizeof plan);
                    double ms = time_split(ctx, &A, B, C, an[i], &go, 3, &plan, &hb);
                    const char *path = mode == 2 ? "panel" : "tiled";
                    uint32_t cl = mode == 2 ? plan.panel.cluster : plan.cluster;
                    double pa = (double)dak_gemm_plan_host_bytes(&plan) / abytes;
                    printf("%5u %6s %8u %10.1f %10.2f %10.2f %10.2f %10.1f\n", an[i], path, cl, hb / 1e6,
                           (double)hb / abytes, pa, ms, gbs(abytes, ms));
                    fflush(stdout);
                    json_obj_begin(&w);
                    json_kv_u64(&w, "N", an[i]);
                    json_kv_str(&w, "path", path);
                    json_kv_u64(&w, "cluster", cl);
                    json_kv_u64(&w, "host_bytes", hb);
                    json_kv_f64(&w, "amplification", (double)hb / abytes);
                    json_kv_f64(&w, "plan_amplification", pa);
                    kv_num(&w, "ms", ms);
                    kv_num(&w, "GBs", gbs(abytes, ms));
                    json_kv_u64(&w, "host_ctas", mode == 2 ? plan.panel.ctas : plan.host.ctas);
                    json_kv_u64(&w, "window", mode == 2 ? plan.panel.window : plan.host.window);
                    if (mode == 2) {
                        json_kv_u64(&w, "panel_blocks", plan.panel.pblocks);
                        json_kv_u64(&w, "panel_kstep", plan.panel.kstep);
                        json_kv_u64(&w, "panel_bstages", plan.panel.bstages);
                    }
                    json_obj_end(&w);
                }
            json_arr_end(&w);
            /* congestion with the GEMM itself: host SMs x window at r = 2% and 10%, N = 8 */
            printf("\n# GEMM congestion sweep: A %ux%u N 8\n", M, K);
            printf("%6s %6s %4s %10s %8s\n", "r%", "hostSM", "W", "EB GB/s", "%bound");
            json_key(&w, "gemm_congestion");
            json_arr_begin(&w);
            static const double gr[] = {0.02, 0.1};
            static const uint32_t ghs[] = {2, 4, 8, 16, 32};
            static const uint32_t gws[] = {1, 2, 3, 5}; /* in ring slots; N = 8 gives 5 slots */
            for (size_t a = 0; a < 2; a++) {
                uint32_t rows;
                DK(dak_tiered_rows_for_ratio(M, DAK_TILE_ROWS, gr[a], &rows, &err));
                DK(dak_tiered_view(&A, M, K, rows, Ahp, Adp, 1, &err));
                double r = (double)rows / M;
                double bound = abytes / fmax(r * abytes / (Bh * 1e9), (1 - r) * abytes / (Bg * 1e9)) / 1e9;
                for (size_t b = 0; b < 5; b++)
                    for (size_t d = 0; d < 4; d++) {
                        dak_gemm_opts go;
                        bench_opts(&go, c);
                        go.host_ctas = ghs[b], go.window = gws[d];
                        dak_gemm_plan plan;
                        double ms = time_split(ctx, &A, B, C, 8, &go, c->reps, &plan, NULL);
                        printf("%6.2f %6u %4u %10.1f %7.1f%%\n", 100 * r, ghs[b], plan.host.window, gbs(abytes, ms),
                               100 * gbs(abytes, ms) / bound);
                        fflush(stdout);
                        json_obj_begin(&w);
                        json_kv_f64(&w, "ratio", r);
                        json_kv_u64(&w, "host_sms", ghs[b]);
                        json_kv_u64(&w, "window", plan.host.window);
                        kv_num(&w, "GBs", gbs(abytes, ms));
                        json_kv_f64(&w, "bound_GBs", bound);
                        json_obj_end(&w);
                    }
            }
            json_arr_end(&w);
        }

        /* ---- wave alignment on/off ---- */
        if (c->sec_wave) {
            static const uint32_t wn[] = {1, 8, 64};
            static const double wr[] = {0.0, 0.05};
            printf("\n# wave alignment: A %ux%u\n", M, K);
            printf("%5s %6s %10s %10s %8s\n", "N", "r%", "align GB/s", "off GB/s", "gain");
            snprintf(key, sizeof key, "wave_%ux%u", M, K);
            json_key(&w, key);
            json_arr_begin(&w);
            for (size_t a = 0; a < 3; a++)
                for (size_t b = 0; b < 2; b++) {
                    uint32_t rows;
                    dak_tiered A;
                    DK(dak_tiered_rows_for_ratio(M, DAK_TILE_ROWS, wr[b], &rows, &err));
                    DK(dak_tiered_view(&A, M, K, rows, Ahp, Adp, 1, &err));
                    dak_gemm_opts go;
                    bench_opts(&go, c);
                    go.host_ctas = c->host_sms, go.window = c->window;
                    double on = time_split(ctx, &A, B, C, wn[a], &go, c->reps, NULL, NULL);
                    go.wave_align = 0;
                    double off = time_split(ctx, &A, B, C, wn[a], &go, c->reps, NULL, NULL);
                    printf("%5u %6.2f %10.1f %10.1f %7.2fx\n", wn[a], 100.0 * rows / M, gbs(abytes, on),
                           gbs(abytes, off), off / on);
                    fflush(stdout);
                    json_obj_begin(&w);
                    json_kv_u64(&w, "M", M);
                    json_kv_u64(&w, "K", K);
                    json_kv_u64(&w, "N", wn[a]);
                    json_kv_f64(&w, "ratio", (double)rows / M);
                    kv_num(&w, "aligned_GBs", gbs(abytes, on));
                    kv_num(&w, "unaligned_GBs", gbs(abytes, off));
                    json_obj_end(&w);
                }
            json_arr_end(&w);
        }
        /* ---- diagnostics: r = 0, N = 1, 8 and 64: kstep x stages x (math, no math, old B layout, no cluster attribute, B box 8) ---- */
        if (c->sec_diag) {
            snprintf(key, sizeof key, "diag_%ux%u", M, K);
            json_key(&w, key);
            json_arr_begin(&w);
            printf("\n# diag: A %ux%u r = 0: kstep x stages x math (GB/s)\n", M, K);
            printf("%5s %6s %7s %10s %10s %10s %10s %10s\n", "N", "kstep", "stages", "math", "no math", "B n-major",
                   "no clu.at", "B box 8");
            dak_tiered A;
            DK(dak_tiered_view(&A, M, K, 0, Ahp, Adp, 1, &err));
            static const uint32_t dn[] = {1, 8, 64};
            static const uint32_t dk[] = {1, 2, 4};
            static const uint32_t dst[] = {0, 3, 8};
            for (size_t a = 0; a < 3; a++)
                for (size_t b = 0; b < 3; b++)
                    for (size_t e = 0; e < 3; e++) {
                        if ((K / 64) % dk[b]) continue;
                        dak_gemm_opts go;
                        bench_opts(&go, c);
                        go.kstep = dk[b], go.stages = dst[e];
                        dak_gemm_plan plan;
                        cm_err perr;
                        if (dak_gemm_plan_make(M, dn[a], K, 0, &go, sms, prop.sharedMemPerBlockOptin, &plan, &perr))
                            continue; /* does not fit */
                        double t1 = time_split(ctx, &A, B, C, dn[a], &go, c->reps, NULL, NULL);
                        go.diag_nomath = 1;
                        double t0 = time_split(ctx, &A, B, C, dn[a], &go, c->reps, NULL, NULL);
                        go.diag_nomath = 0, go.diag_b_nmajor = 1; /* the B layout before run 5 */
                        double t2 = time_split(ctx, &A, B, C, dn[a], &go, c->reps, NULL, NULL);
                        go.diag_b_nmajor = 0, go.diag_plain_launch = 1; /* launch without the cluster attribute */
                        double t3 = time_split(ctx, &A, B, C, dn[a], &go, c->reps, NULL, NULL);
                        double t4 = NAN; /* B box of 8 rows (N <= 8), stage count as asked */
                        go.diag_plain_launch = 0, go.diag_bn8 = 1;
                        if (dn[a] <= 8) t4 = time_split(ctx, &A, B, C, dn[a], &go, c->reps, NULL, NULL);
                        printf("%5u %6u %7u %10.1f %10.1f %10.1f %10.1f %10.1f\n", dn[a], dk[b], plan.hbm_stages,
                               gbs(abytes, t1), gbs(abytes, t0), gbs(abytes, t2), gbs(abytes, t3), gbs(abytes, t4));
                        fflush(stdout);
                        json_obj_begin(&w);
                        json_kv_u64(&w, "N", dn[a]);
                        json_kv_u64(&w, "kstep", dk[b]);
                        json_kv_u64(&w, "stages", plan.hbm_stages); /* r = 0: the HBM tier's ring */
                        kv_num(&w, "GBs", gbs(abytes, t1));
                        kv_num(&w, "nomath_GBs", gbs(abytes, t0));
                        kv_num(&w, "b_nmajor_GBs", gbs(abytes, t2));
                        kv_num(&w, "plain_launch_GBs", gbs(abytes, t3));
                        kv_num(&w, "bn8_GBs", gbs(abytes, t4));
                        json_obj_end(&w);
                    }
            json_arr_end(&w);
        }

        /* ---- fixed cost per launch at r = 0 (issue #7, run 10) ---- */
        if (c->sec_fixed || c->sec_wgmma) {
            uint16_t *ap[FX_NCP], *ar[FX_NCP];
            ap[0] = Adp, ar[0] = Ad;
            for (int i = 1; i < FX_NCP; i++) {
                CK(cudaMalloc((void **)&ap[i], abytes));
                CK(cudaMalloc((void **)&ar[i], abytes));
                CK(cudaMemcpy(ap[i], Adp, abytes, cudaMemcpyDeviceToDevice));
                CK(cudaMemcpy(ar[i], Ad, abytes, cudaMemcpyDeviceToDevice));
            }
            cudaStream_t fs;
            CK(cudaStreamCreateWithFlags(&fs, cudaStreamNonBlocking));
            snprintf(key, sizeof key, "fixed_%ux%u", M, K);
            json_key(&w, key);
            json_arr_begin(&w);
            /* wgmma A/B (issue 7): one launch, r = 0, wide tiles through mma.sync vs wgmma, and cuBLAS */
            {
                printf("\n# fixed, wgmma A/B: A %ux%u r = 0, one launch (us, TFLOP/s, GB/s of A)\n", M, K);
                printf("# glob-add: wgmma with the wide tiles' owner adding the partials from L2, not through its ring\n"
                       "# (diag_epi_global); no-hint: wgmma without L2 cache policies (l2_hints 0)\n");
                printf("%5s %10s %10s %10s %10s %10s %8s %8s %8s %9s %9s\n", "N", "mma us", "wgmma us", "glob-add", "no-hint",
                       "cublas us", "mma TF", "wgmma TF", "cublas TF", "mma GB/s", "wgmma GB/s");
                static const uint32_t wn[] = {64, 128, 256, 512};
                dak_tiered Aw[FX_NCP];
                for (int i = 0; i < FX_NCP; i++) DK(dak_tiered_view(&Aw[i], M, K, 0, Ahp, ap[i], 1, &err));
                for (size_t a = 0; a < sizeof wn / sizeof wn[0]; a++) {
                    const uint32_t N = wn[a];
                    double t[5];
                    for (int v = 0; v < 4; v++) {
                        dak_gemm_opts go;
                        bench_opts(&go, c);
                        go.wgmma = v ? 1u : 0u;
                        go.diag_epi_global = v == 2;
                        if (v == 3) go.l2_hints = 0;
                        fx_op so;
                        if (fx_prepare(&so, ctx, Aw, B, C, N, &go)) {
                            t[v] = NAN;
                        } else {
                            t[v] = fx_time(&so, 0, c->reps, fs);
                            fx_free(&so);
                        }
                    }
                    fx_op cb = {.kind = 1, .ctx = ctx, .ar = ar, .B = B, .C = C, .M = M, .N = N, .K = K};
                    t[4] = fx_time(&cb, 0, c->reps, fs);
                    double fl = 2.0 * M * N * K;
                    printf("%5u %10.2f %10.2f %10.2f %10.2f %10.2f %8.1f %8.1f %8.1f %9.1f %9.1f\n", N, t[0], t[1], t[2], t[3],
                           t[4], fl / (t[0] * 1e6), fl / (t[1] * 1e6), fl / (t[4] * 1e6), gbs(abytes, t[0] / 1e3),
                           gbs(abytes, t[1] / 1e3));
                    fflush(stdout);
                    json_obj_begin(&w);
                    json_kv_u64(&w, "N", N);
                    json_kv_str(&w, "mode", "wgmma_ab_single");
                    kv_num(&w, "mma_us", t[0]);
                    kv_num(&w, "wgmma_us", t[1]);
                    kv_num(&w, "wgmma_glob_add_us", t[2]);
                    kv_num(&w, "wgmma_no_l2hint_us", t[3]);
                    kv_num(&w, "cublas_us", t[4]);
                    kv_num(&w, "mma_TFLOPs", fl / (t[0] * 1e6));
                    kv_num(&w, "wgmma_TFLOPs", fl / (t[1] * 1e6));
                    kv_num(&w, "cublas_TFLOPs", fl / (t[4] * 1e6));
                    kv_num(&w, "mma_GBs", gbs(abytes, t[0] / 1e3));
                    kv_num(&w, "wgmma_GBs", gbs(abytes, t[1] / 1e3));
                    json_obj_end(&w);
                }
            }
            if (c->sec_fixed) printf("\n# fixed cost: A %ux%u r = 0, us per launch (one launch / %d back to back over %d copies of A / a graph of %d)\n",
                   M, K, FX_L, FX_NCP, FX_L);
            if (c->sec_fixed) printf("%4s %6s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", "N", "mode", "split", "pdl", "no-hint", "nofix",
                   "nomath", "dyn", "dyn+pdl", "cublas", "empty", "empty0");
            static const uint32_t fn_default[] = {1, 8, 64};
            const uint32_t *fn = c->n_given ? c->ns : fn_default;
            const size_t nfn = c->n_given ? (size_t)c->nn : 3u;
            static const char *const mname[] = {"single", "seq", "graph"};
            for (size_t a = 0; a < (c->sec_fixed ? nfn : 0u); a++) {
                uint32_t N = fn[a];
                dak_tiered At[FX_NCP];
                for (int i = 0; i < FX_NCP; i++) DK(dak_tiered_view(&At[i], M, K, 0, Ahp, ap[i], 1, &err));
                dak_gemm_opts go[7];
                for (int v = 0; v < 7; v++) bench_opts(&go[v], c);
                /* no-hint: without L2 cache policies (l2_hints 0) */
                go[1].pdl = 1, go[2].l2_hints = 0, go[3].diag_nofixup = 1, go[4].diag_nomath = 1;
                go[5].dyn = 1, go[6].dyn = 1, go[6].pdl = 1;
                fx_op so[7];
                int ok[7];
                for (int v = 0; v < 7; v++) ok[v] = !fx_prepare(&so[v], ctx, At, B, C, N, &go[v]);
                fx_op cb = {.kind = 1, .ctx = ctx, .ar = ar, .B = B, .C = C, .M = M, .N = N, .K = K};
                const dak_gemm_plan *pl = ok[0] ? dak_gemm_launch_plan(so[0].l[0]) : NULL;
                uint32_t grid = pl ? pl->host.ctas + pl->hbm.ctas : sms;
                fx_op em = {.kind = 2, .ctx = ctx, .grid = grid, .smem = pl ? pl->smem_bytes : 0};
                fx_op em0 = em;
                em0.smem = 0;
                for (int mode = 0; mode < 3; mode++) {
                    double t[10];
                    for (int v = 0; v < 7; v++) {
                        int want = mode == 0 || (v != 3 && v != 4); /* nofix / nomath: single launches only */
                        t[v] = ok[v] && want ? fx_time(&so[v], mode, c->reps, fs) : NAN;
                    }
                    t[7] = fx_time(&cb, mode, c->reps, fs);
                    t[8] = mode < 2 ? fx_time(&em, mode, c->reps, fs) : NAN;
                    t[9] = mode < 2 ? fx_time(&em0, mode, c->reps, fs) : NAN;
                    printf("%4u %6s %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f\n", N, mname[mode], t[0],
                           t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9]);
                    fflush(stdout);
                    json_obj_begin(&w);
                    json_kv_u64(&w, "N", N);
                    json_kv_str(&w, "mode", mname[mode]);
                    json_kv_u64(&w, "launches", mode ? FX_L : 1);
                    kv_num(&w, "split_us", t[0]);
                    kv_num(&w, "split_pdl_us", t[1]);
                    kv_num(&w, "split_no_l2hint_us", t[2]);
                    kv_num(&w, "split_nofix_us", t[3]);
                    kv_num(&w, "split_nomath_us", t[4]);
                    kv_num(&w, "split_dyn_us", t[5]);
                    kv_num(&w, "split_dyn_pdl_us", t[6]);
                    kv_num(&w, "cublas_us", t[7]);
                    kv_num(&w, "empty_smem_us", t[8]);
                    kv_num(&w, "empty_0_us", t[9]);
                    kv_num(&w, "split_GBs", gbs(abytes, t[0] / 1e3));
                    kv_num(&w, "split_pdl_GBs", gbs(abytes, t[1] / 1e3));
                    kv_num(&w, "split_dyn_GBs", gbs(abytes, t[5] / 1e3));
                    kv_num(&w, "split_dyn_pdl_GBs", gbs(abytes, t[6] / 1e3));
                    kv_num(&w, "cublas_GBs", gbs(abytes, t[7] / 1e3));
                    json_obj_end(&w);
                }
                for (int v = 0; v < 7; v++)
                    if (ok[v]) fx_free(&so[v]);
                /* where one launch's time goes: per-CTA %globaltimer stamps (static, dynamic units) */
                static const char *const stn[] = {"static", "dyn"};
                for (int dv = 0; dv < 2; dv++) {
                dak_gemm_opts gt;
                bench_opts(&gt, c);
                gt.diag_times = 1, gt.dyn = (uint32_t)dv;
                dak_gemm_launch *lt;
                if (bench_prepare(ctx, &At[0], B, C, N, &gt, &lt, &err)) {
                    fprintf(stderr, "dak bench: fixed: %s\n", err.msg);
                    continue;
                }
                const dak_gemm_plan *plt = dak_gemm_launch_plan(lt);
                uint32_t g = plt->host.ctas + plt->hbm.ctas;
                uint64_t *ts = cm_malloc((size_t)g * DAK_GEMM_NTIMES * 8);
                double st[FX_NST][16];
                uint32_t nr = c->reps < 16 ? c->reps : 16;
                static cudaEvent_t f0, f1;
                if (!f0) {
                    CK(cudaEventCreate(&f0));
                    CK(cudaEventCreate(&f1));
                }
                for (uint32_t i = 0; i < nr + 2; i++) {
                    DK(dak_l2_flush(ctx, fs, &err));
                    CK(cudaEventRecord(f0, fs));
                    DK(dak_gemm_run(lt, fs, &err));
                    CK(cudaEventRecord(f1, fs));
                    CK(cudaEventSynchronize(f1));
                    float ms;
                    CK(cudaEventElapsedTime(&ms, f0, f1));
                    DK(dak_gemm_times(lt, ts, (size_t)g * DAK_GEMM_NTIMES, &g, &err));
                    double o9[FX_NST];
                    fx_stamps(ts, g, 1e3 * ms, o9);
                    if (i >= 2)
                        for (int f = 0; f < FX_NST; f++) st[f][i - 2] = o9[f];
                }
                double md[FX_NST];
                for (int f = 0; f < FX_NST; f++) md[f] = bench_median(st[f], nr);
                /* does the last run's spread follow the SMs' HBM rates (smrate section)? */
                double rho_sm = NAN;
                if (nsm) {
                    double *xs = cm_malloc(sizeof *xs * g), *ys = cm_malloc(sizeof *ys * g);
                    size_t np = 0;
                    for (uint32_t b = 0; b < g; b++) {
                        const uint64_t *t = ts + (size_t)b * DAK_GEMM_NTIMES;
                        if (t[6] < nsm && isfinite(sm_us[t[6]]) && t[4] > t[3])
                            xs[np] = (double)(t[4] - t[3]), ys[np] = sm_us[t[6]], np++;
                    }
                    rho_sm = bench_pearson(xs, ys, np);
                    free(xs), free(ys);
                }
                printf("     %s stamps (us, median of %u): span %.2f = event %.2f - outside %.2f; entry spread %.2f, "
                       "first copy +%.2f, first slot full +%.2f, streaming %.2f, last-slot spread %.2f, "
                       "tail after last slot %.2f (max %.2f)\n",
                       stn[dv], nr, md[0], md[0] + md[8], md[8], md[1], md[2], md[3], md[4], md[5], md[6], md[7]);
                if (nsm) printf("     streaming time per CTA vs its SM's smrate time: Pearson r = %.3f (last run)\n", rho_sm);
                fflush(stdout);
                json_obj_begin(&w);
                json_kv_u64(&w, "N", N);
                json_kv_str(&w, "mode", dv ? "stamps_dyn" : "stamps");
                static const char *const sn[FX_NST] = {"span_us",      "entry_spread_us", "first_copy_us",
                                                        "first_full_us", "streaming_us",   "last_full_spread_us",
                                                        "tail_us",      "tail_max_us",     "outside_us"};
                for (int f = 0; f < FX_NST; f++) kv_num(&w, sn[f], md[f]);
                kv_num(&w, "pearson_vs_smrate", rho_sm);
                /* the last run's per-CTA stamps: %smid, streaming (last - first slot full), entry to exit */
                static const char *const rk[3] = {"cta_smid", "cta_stream_us", "cta_span_us"};
                for (int k = 0; k < 3; k++) {
                    json_key(&w, rk[k]);
                    json_arr_begin(&w);
                    for (uint32_t b = 0; b < g; b++) {
                        const uint64_t *t = ts + (size_t)b * DAK_GEMM_NTIMES;
                        if (k == 0) json_u64(&w, t[6]);
                        else json_f64(&w, k == 1 ? (t[4] - t[3]) / 1e3 : (t[5] - t[0]) / 1e3);
                    }
                    json_arr_end(&w);
                }
                json_obj_end(&w);
                free(ts);
                dak_gemm_launch_free(lt);
                }
            }
            json_arr_end(&w);
            CK(cudaStreamDestroy(fs));
            for (int i = 1; i < FX_NCP; i++) {
                cudaFree(ap[i]);
                cudaFree(ar[i]);
            }
        }
        cudaFree(Ad);
        cudaFreeHost(Ah);
        cudaFree(Adp);
        if (Adp2) cudaFree(Adp2);
        cudaFreeHost(Ahp);
        cudaFree(B);
        cudaFree(C);
        if (st[0]) cudaFree(st[0]);
        if (st[1]) cudaFree(st[1]);
        if (um) cudaFree(um);
    }
    json_obj_end(&w);
    fputc('\n', jf);
    fclose(jf);
    dak_gemm_ctx_destroy(ctx);
    printf("\n# JSON written to %s\n", c->json);
    return 0;
}
#endif

int cmd_bench(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "gemm")) {
        if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
            usage(stdout);
            return 0;
        }
        fprintf(stderr, "dak bench: expected a benchmark name: gemm\n");
        usage(stderr);
        return 2;
    }
    bench_cfg c;
    if (parse(argc, argv, &c)) return 2;
#ifdef DAK_HAVE_CUDA
    return run(&c);
#else
    fprintf(stderr, "dak bench gemm: not built (configured without CUDA)\n");
    return 1;
#endif
}
