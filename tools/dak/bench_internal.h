/* What the files of `dak bench gemm` share: the parsed options (bench_cfg) and, with CUDA, the
 * run's and one shape's state that cmd_bench.c hands to each section, the timed operations
 * (op_t, time_op, time_split; bench_time_reps, the timing loop they and the fixed section share)
 * and the GB/s helper (gbs; numbers go out through json_kv_f64, null where not finite);
 * bench_ops.c defines the functions.  The sections' entry points are in
 * bench_sections.h. */
#ifndef DAK_TOOL_BENCH_INTERNAL_H
#define DAK_TOOL_BENCH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/bench.h"
#include "common/error.h"
#include "common/json.h"
#include "dak/gemm.h"
#include "bench_util.h"

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
    uint32_t hbm_sms;       /* CTAs reading HBM tile rows, 0 auto (dak_gemm_opts.hbm_ctas) */
    uint32_t tile_align;    /* dak_gemm_opts.tile_align (default 1) */
    uint32_t l2_hints;      /* dak_gemm_opts.l2_hints (default 1) */
    uint32_t fix_rs;        /* dak_gemm_opts.fix_rs (default 1) */
    uint32_t rotate;        /* dak_gemm_opts.diag_rotate (default 0) */
    uint32_t panel_fork;    /* dak_gemm_opts.diag_panel_fork (default 0) */
    uint32_t bn8;           /* dak_gemm_opts.bn8 (B box of 8 rows at N <= 8; default 1) */
    uint32_t bn24;          /* dak_gemm_opts.bn24 (B box of 24 rows at N 17..24; default 1) */
    uint32_t bnw;           /* dak_gemm_opts.bnw (B box of N rounded up to 8 rows at N 33..56 on wgmma tiles; default 1) */
    uint32_t whole;         /* dak_gemm_opts.whole (whole-K tiles: 1 where they apply, 2 auto, the default) */
    uint32_t whole_cl;      /* dak_gemm_opts.whole_cluster (0 auto) */
    uint32_t whole_stages;  /* dak_gemm_opts.whole_stages (0: as many as fit) */
    uint32_t whole_window;  /* dak_gemm_opts.whole_window (0 auto) */
    uint32_t whole_swap;    /* dak_gemm_opts.whole_swap (0 auto, 1 never, 2 where it applies, 3 also where k_whole
                               does not) */
    uint32_t pdl_pre;       /* dak_gemm_opts.pdl_pre: HBM-tier copies before the PDL wait, 0 auto */
    uint32_t prod2;         /* dak_gemm_opts.diag_prod2: two producer threads (single launches) */
    uint32_t hbm_window;    /* dak_gemm_opts.hbm_window: HBM-tier copies in flight, 0 auto */
    uint32_t stash;         /* dak_gemm_opts.stash: chunks held in registers before the PDL wait */
    uint32_t dyn_slots;     /* dak_gemm_opts.dyn_slots: ring slots per dynamic unit, 0 auto (the dyn columns) */
    int sec_sweep, sec_cong, sec_amp, sec_wave, sec_diag, sec_fixed, sec_wgmma, sec_smrate;
    int base_cublas, base_prefetch, base_overlap, base_naive, base_uvm;
    int n_given; /* --n was given: the fixed section times those N (else 1, 8, 64) */
    int r_given; /* --ratios was given: the fixed section times those ratios (else r = 0 only) */
    const char *json;
    int plan_only;          /* --plan-only: print the split kernel's plans, run nothing */
    uint32_t plan_sms;      /* --sms: the SM count the plans are made for (default 132, the H200's) */
    uint64_t plan_smem;     /* --smem: opt-in shared memory per block for the plans (default 232448, the H200's) */
    uint32_t plan_pdl;      /* --pdl: the plans as PDL launches (default 0) */
} bench_cfg;

/* The split kernel's options for one configuration: the defaults and the --bm / --bn / --panel
 * asked for. */
void bench_opts(dak_gemm_opts *o, const bench_cfg *c);

/* bench_opts and the host tier's CTAs and window as asked (--host-sms, --window). */
void bench_opts_host(dak_gemm_opts *o, const bench_cfg *c);

/* --plan-only (bench_plan.c, CPU): the split kernel's plan for every shape x N x ratio, a table on stdout and the
 * JSON array "plans"; 0, or 1 when a plan was refused (message printed), 2 when the JSON cannot be written. */
int bench_plan_only(const bench_cfg *c);

#ifdef DAK_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/cuda_check.h"
#include "dak/tiered.h"

/* What every section of one run reads: the options, the context, the bandwidths probed at the
 * start, smrate's per-SM times and the JSON document being written. */
typedef struct {
    const bench_cfg *c;
    dak_gemm_ctx *ctx;
    uint32_t sms;
    size_t smem_optin; /* shared memory per block with opt-in: the diag table skips plans that do not fit */
    double Bg, Bh;     /* GB/s: HBM -> smem, host -> smem */
    const double *sm_us; /* smrate's mean time per SM (us, by %smid), nsm entries; nsm 0 without it */
    uint32_t nsm;
    json_w *w;
    bench_progress_t *prog; /* the run's progress line on stderr: sweep points, fixed rows, other sections */
    uint64_t *done;
} bench_run;

/* One step of the run done: the progress line (rate, ETA) at most every 0.5 s. */
static inline void bench_step(const bench_run *b)
{
    ++*b->done;
    bench_progress(b->prog, *b->done);
}

/* One shape's buffers, made by cmd_bench.c before its sections and freed after them. */
typedef struct {
    uint32_t M, K;
    size_t abytes;
    uint16_t *Ad, *Ah;   /* A row-major: HBM, mapped host */
    uint16_t *Adp, *Ahp; /* A packed for the split kernel (same tile rows, 8 KiB blocks): HBM, mapped host */
    uint16_t *Adp2;      /* split-seq: a second packed copy (the sequence's odd GEMMs), or NULL */
    uint16_t *st[2];     /* the prefetch baselines' staging buffers, or NULL */
    uint16_t *um;        /* managed copy of A for the uvm baseline, or NULL (the sweep may drop it) */
    uint16_t *B;
    float *C;
} bench_shape;

typedef struct {
    int kind; /* 0 split, 1 cublas, 2 prefetch, 3 overlap, 4 naive, 5 uvm, 6 split-seq */
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

/* median milliseconds over reps (2 warm-up), L2 flushed before each repetition */
double time_op(op_t *o, uint32_t reps, cm_err *err, int *failed);
/* the same with the operation captured once as a CUDA graph and replayed (not uvm) */
double time_op_graph(op_t *o, uint32_t reps, cm_err *err, int *failed);

/* Enqueues a timed operation on st (bench_capture's callback). */
typedef int (*bench_enqueue_fn)(void *arg, cudaStream_t st, cm_err *err);
/* What enqueue(arg, st) issues, captured on st and instantiated as a graph; a warm-up runs outside the
 * capture first (cuBLAS picks its kernel and workspace).  NULL with err set on failure. */
cudaGraphExec_t bench_capture(bench_enqueue_fn enqueue, void *arg, cudaStream_t st, cm_err *err);

/* Untimed preparation before each timed repetition (bench_time_reps). */
typedef int (*bench_pre_fn)(void *arg, cm_err *err);

/* What bench_time_reps times: enqueue(arg, st), or graph launched on st where set (enqueue's work
 * captured by bench_capture); pre(arg) where set, then an L2 flush of ctx, before each repetition. */
typedef struct {
    dak_gemm_ctx *ctx;
    cudaStream_t st;
    cudaGraphExec_t graph;
    bench_enqueue_fn enqueue;
    bench_pre_fn pre;
    void *arg;
} bench_timed_op;

/* The one timing loop of the bench: 2 warm-up and reps timed repetitions between CUDA events on
 * op->st; the median over the timed ones of unit_per_ms * ms / launches (1 and 1: ms a repetition;
 * 1e3 and the launches a repetition: us a launch).  NaN with *failed = 1 and err set on failure. */
double bench_time_reps(const bench_timed_op *op, uint32_t reps, double unit_per_ms, uint32_t launches, cm_err *err,
                       int *failed);

/* dak_gemm_prepare with --bn and --bm 256 as requests: a configuration that refuses the width asked
 * for (wgmma 0, dyn, 64-row tiles, bn 256 beside a tiled host tier) or bm 256 (N <= 64, a cluster, a
 * tiled host tier) runs with bn and bm auto instead, noted once; the plan (JSON "bn") says which ran. */
int bench_prepare(dak_gemm_ctx *ctx, const dak_tiered *A, const uint16_t *B, float *C, uint32_t N,
                  const dak_gemm_opts *go, dak_gemm_launch **l, cm_err *err);

/* One split GEMM timed (median ms, NaN on failure, message printed); its plan into plan_out and
 * its host bytes per run into host_bytes where given. */
double time_split(dak_gemm_ctx *ctx, const dak_tiered *A, const uint16_t *B, float *C, uint32_t N,
                  const dak_gemm_opts *go, uint32_t reps, dak_gemm_plan *plan_out, uint64_t *host_bytes);

/* The aggregate-bandwidth bound in GB/s on `abytes` of A with a fraction `ratio` of them in host
 * memory: min(B_h/ratio, B_g/(1-ratio)) with the bandwidths probed in this run. */
double bench_bound_gbs(const bench_run *bench, double abytes, double ratio);

/* Opens the shape's JSON array, keyed "<name>_<M>x<K>". */
void bench_shape_array(json_w *w, const char *name, const bench_shape *s);

/* The largest of v[0..n) and m (a section's widest N, for the buffers that shape_alloc sizes) */
uint32_t bench_list_max(const uint32_t *v, size_t n, uint32_t m);
#endif

#endif
