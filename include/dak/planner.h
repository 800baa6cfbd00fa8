/* The dak offload planner (seed 003, Sec. 4.2.1-4.2.2 and Appendix A).
 *
 * Operation model.  An operation i reads C_i bytes (a weight matrix, or the
 * KV cache for attention) and does F_i FLOPs; with a fraction x of its bytes
 * in host memory and the rest in HBM, read concurrently by different SMs,
 *     T_comp = F_i / rate(shape),  T_h = x C_i / B_h,  T_g = (1-x) C_i / B_g,
 *     T_i(x) = max(T_comp, T_h, T_g),  EB_i(x) = C_i / T_i(x).
 * T_i is convex in x: it falls with slope -C/B_g until T_g meets max(T_comp,
 * T_h) at x_a, is flat (= T_comp) up to x_b, and rises with slope C/B_h after.
 *   memory-bound  (T_comp <= C/(B_h+B_g)):  x_a = x_b = B_h/(B_h+B_g)
 *   compute-bound (T_comp >= C/B_g):         x_a = 0, x_b = min(1, T_comp B_h / C)
 *   in between ("mixed"): x_a = 1 - T_comp B_g / C, x_b = T_comp B_h / C
 * (the paper's two classes; the third is the band where an operation is
 * memory-bound at x = 0 but reaches its compute floor before the balance
 * point -- treating it like a memory-bound one would waste budget on its flat
 * part while other operations still gain).
 *
 * Granularity.  The split kernels give each SM whole tiles of one tier, so
 * a weight matrix is split in whole tile rows (DAK_PLAN_UNIT_ROWS rows of M) and
 * the KV cache in whole batch entries.  Operations that repeat (one per
 * decoder layer) share one record with `repeat` instances; a count of host
 * units u over all instances is spread as evenly as possible (instances get
 * floor(u/repeat) or one more), which is the best split because T_i is
 * convex.
 *
 * Plans.  A plan gives each operation a number of host units; the host
 * bytes must be at least the target (what does not fit in the GPU memory
 * allowed).  The greedy plan (dak_plan_greedy) takes (1) every unit whose
 * marginal time is negative -- memory-bound operations up to their turning
 * point, which only helps -- then (2) free units (the flat parts of
 * compute-bound operations) and (3) the cheapest units per needed byte until
 * the target is covered; the best "greedy prefix + fewest units of one
 * operation" ending and a local pass (drop a costly unit, or trade it for
 * fewer-cost units of another operation) then trim the overshoot of whole
 * units.  Phases 1 and 2 are exact.  In phase 3 covering the target with
 * whole units of unequal size is a knapsack: the plan is exact when the units
 * have equal size, and otherwise within the host time of one unit of the
 * optimum (tests/dak/test_planner_opt.c measures how often it is exact). */
#ifndef DAK_PLANNER_H
#define DAK_PLANNER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"
#include "common/json.h"
#include "dak/model_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Rows of a weight matrix per planner unit (the planner's placement granularity; the split GEMM's tiers
 * take any multiple of its 64-row tiles, DAK_TILE_ROWS in dak/tiered.h). */
#define DAK_PLAN_UNIT_ROWS 128

/* ---- machine profile --------------------------------------------------- */

typedef struct {
    uint64_t m, n, k;  /* C[m x n] = A[m x k] (weights) x B[k x n] (hidden states) */
    double flops;      /* compute rate in FLOP/s used for T_comp */
    double flops_hbm;  /* rate with A streamed from HBM (informational; 0 if absent) */
} dak_gemm_rate;

typedef struct {
    char source[256];    /* file name or "built-in default (H200, SPEC.md)" */
    double b_h;          /* host -> SM bandwidth, bytes/s (B_h) */
    double b_g;          /* HBM -> SM bandwidth, bytes/s (B_g) */
    double peak_flops;   /* bf16 tensor-core rate, FLOP/s: fallback for shapes not profiled */
    double attn_flops;   /* rate for attention FLOPs (T_comp of attention) */
    double b_h_memcpy;   /* informational: cudaMemcpy H2D pinned, bytes/s (0 if unknown) */
    size_t n_gemm;
    dak_gemm_rate *gemm;
} dak_profile;

/* The built-in profile: H200 figures from SPEC.md (B_h 51.1 GB/s kernel
 * read of pinned host memory, B_g 4.47 TB/s HBM read, 790 TFLOP/s bf16),
 * no per-shape table (T_comp = F / peak). */
void dak_profile_default(dak_profile *p);
/* Reads a profile JSON written by `dak profile` (keys: b_h_gbs, b_g_gbs,
 * bf16_tflops, optional attn_tflops, h2d_memcpy_gbs, gemm: [{m,n,k,tflops,
 * tflops_hbm}]). */
int dak_profile_load(const char *path, dak_profile *p, cm_err *err);
void dak_profile_free(dak_profile *p);
/* Writes the profile's fields (inside an open JSON object). */
void dak_profile_json(const dak_profile *p, json_w *w);
/* A table entry counts as a compute measurement only when its time is at
 * least this multiple of the time to stream its bf16 weights at B_g. */
#define DAK_COMPUTE_MARGIN 1.5
/* FLOP/s of the tensor-core work of a GEMM of this shape (for T_comp): from
 * the table entries with the same (m,k), interpolated in log n and flat
 * outside the profiled n.  An entry whose measured time is within
 * DAK_COMPUTE_MARGIN of its memory time (small n: cuBLAS waits for the
 * weights) gives no compute figure; it is replaced by the best rate measured
 * for the shape.  This keeps T_comp consistent with the roofline: GEMMs with
 * n below the machine balance (peak/B_g, ~180 FLOP/byte on the H200) come out
 * memory-bound.  The peak when (m,k) is not in the table (*profiled = 0). */
double dak_profile_gemm_rate(const dak_profile *p, uint64_t m, uint64_t n, uint64_t k,
                             int *profiled);

/* ---- operations --------------------------------------------------------- */

typedef enum { DAK_OP_LINEAR = 1, DAK_OP_ATTENTION = 2, DAK_OP_GATHER = 3 } dak_op_kind;
typedef enum { DAK_CLASS_MEMORY = 1, DAK_CLASS_MIXED = 2, DAK_CLASS_COMPUTE = 3 } dak_op_class;

typedef struct {
    char name[32];
    dak_op_kind kind;
    uint64_t m, n, k;    /* linear: weights [m x k], n tokens; attention: m = batch entries,
                            n = cache length, k = kv_heads * head_dim */
    uint32_t repeat;     /* identical instances (decoder layers) */
    uint64_t units;      /* host-placement units per instance (tile rows or batch entries) */
    uint64_t unit_rows;  /* rows of m per unit (DAK_PLAN_UNIT_ROWS, or 1 for batch entries) */
    double row_bytes;    /* stored bytes per row of m */
    double read_frac;    /* fraction of the stored bytes read per step (1; B/vocab for a gather) */
    double flops;        /* F per instance */
    double t_comp;       /* seconds per instance */
    int profiled;        /* t_comp came from a measured rate for this shape */
} dak_op;

/* Stored bytes per instance, C_i. */
double dak_op_bytes(const dak_op *op);
/* Stored bytes of one instance with q of its units on the host. */
double dak_op_host_bytes_inst(const dak_op *op, uint64_t q);
/* T_i(x) of one instance for a host fraction x of its bytes. */
double dak_op_time_x(const dak_op *op, double x, double b_h, double b_g);
/* Time of all instances with u host units in total (even spread). */
double dak_op_time_units(const dak_op *op, uint64_t u, double b_h, double b_g);
/* Host units of instance `inst` (0-based layer) when u units in total are
 * spread evenly: the first u % repeat instances get one more. */
uint64_t dak_op_units_of(const dak_op *op, uint64_t u, uint32_t inst);
/* Host bytes of all instances with u host units in total. */
double dak_op_host_bytes(const dak_op *op, uint64_t u);
/* Class and turning points x_a <= x_b (see the top of this file). */
dak_op_class dak_op_classify(const dak_op *op, double b_h, double b_g, double *x_a, double *x_b);
const char *dak_op_class_name(dak_op_class c);

/* Fills a linear operation: weights m x k (elem_bytes each), n tokens. */
void dak_op_linear(dak_op *op, const char *name, uint64_t m, uint64_t n, uint64_t k,
                   uint32_t elem_bytes, uint32_t repeat, uint32_t tile_rows,
                   const dak_profile *prof);

/* ---- model -> operations, footprint ------------------------------------ */

typedef struct {
    double weights;    /* all parameters, bytes */
    double kv;         /* KV cache at the given batch and length, bytes */
    double workspace;  /* activations of one decode step + reserve, bytes */
    double total;      /* weights + kv + workspace */
    double offloadable;/* bytes owned by planner operations (can go to the host) */
    double resident;   /* total - offloadable: must stay in GPU memory */
} dak_footprint;

/* Operations of one decode step for batch B with L cached tokens per
 * sequence (L >= 1): per layer q/k/v/o, MLP (fc1/fc2 or gate/up/down) and
 * attention over the KV cache; lm_head; for Llama the untied token embedding
 * as a gather.  Weights split in whole tiles of tile_rows rows (DAK_PLAN_UNIT_ROWS
 * by default).  *ops is allocated (free()). */
int dak_model_ops(const dak_model_config *cfg, uint64_t batch, uint64_t seq, uint32_t tile_rows,
                  const dak_profile *prof, dak_op **ops, size_t *n_ops, cm_err *err);
/* Workspace model: elem_bytes x B x (4 hidden + 2 ffn) + 4 x B x vocab (fp32
 * logits) + reserve. */
void dak_model_footprint(const dak_model_config *cfg, uint64_t batch, uint64_t seq,
                         uint64_t reserve, const dak_op *ops, size_t n_ops, dak_footprint *fp);

/* ---- plans -------------------------------------------------------------- */

/* Sum of the operations' times for host units u[i]. */
double dak_plan_time(const dak_op *ops, size_t n, const uint64_t *u, double b_h, double b_g);
double dak_plan_host_bytes(const dak_op *ops, size_t n, const uint64_t *u);
/* Total stored bytes of all operations (all instances). */
double dak_ops_total_bytes(const dak_op *ops, size_t n);

/* Greedy plan with host bytes >= target (see the top).  Fails when the
 * target exceeds what the operations hold. */
int dak_plan_greedy(const dak_op *ops, size_t n, double target, double b_h, double b_g,
                    uint64_t *u, cm_err *err);
/* Uniform plan: every operation offloads the same fraction r of its bytes
 * (r in [0,1]), rounded up to whole units counted over all its instances
 * (spread evenly), so it overshoots by less than one unit per operation. */
void dak_plan_uniform(const dak_op *ops, size_t n, double r, uint64_t *u);

/* ---- measuring a profile (GPU; src/dak/planner/profile_gpu.cu) ---------- */

typedef struct {
    int device;             /* CUDA device index */
    uint64_t host_bytes;    /* pinned host buffer for B_h (default 1 GiB) */
    uint64_t hbm_bytes;     /* HBM buffer for B_g (default 4 GiB) */
    uint32_t reps;          /* timed repetitions per figure (median kept) */
    size_t n_shapes;        /* GEMM weight shapes (m, k) */
    const uint64_t (*shapes)[2];
    size_t n_ns;            /* token counts n profiled per shape */
    const uint64_t *ns;
    int verbose;            /* progress on stderr */
} dak_profile_opts;

typedef struct {
    char device_name[256];
    int sm_count;
    double h2d_memcpy, d2h_memcpy;   /* bytes/s */
    double host_read_kernel;         /* bytes/s, zero-copy kernel read of pinned memory */
    double hbm_read;                 /* bytes/s */
    uint32_t host_blocks, hbm_blocks;
} dak_profile_extra;

/* Measures B_h, B_g and the bf16 GEMM rates (cuBLAS) into p (allocated
 * table; dak_profile_free).  Returns -1 with "not built" when the CUDA
 * parts were not compiled, or with the CUDA/cuBLAS error. */
int dak_profile_measure(const dak_profile_opts *o, dak_profile *p, dak_profile_extra *x,
                        cm_err *err);

#ifdef __cplusplus
}
#endif

#endif
