/* The request-per-block GPU solver (seed 000, Sec. IV).  Implemented in
 * src/dsb/gpu/ when CUDA is built; otherwise every call reports that the GPU
 * backend was not built. */
#ifndef DSB_GPU_H
#define DSB_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "dsb/model.h"
#include "dsb/solve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when the GPU code was compiled in and a device is usable, else 0 with the
 * reason in err. */
int dsb_gpu_available(cm_err *err);

/* Eq. (6): shared-memory bytes one block needs for (format, n, B); 0 when the
 * request does not fit one block (B n_p > 4096). */
size_t dsb_gpu_smem_bytes(dsb_format f, uint32_t n, uint32_t replicas);

/* Which units compute the coupling sums J s of a step.  Both are exact
 * integer arithmetic (Prop. 1), so both give the CPU reference's trajectory.
 *   CUDA    DP4A / POPC on the CUDA cores, a thread's pairs along rows (Sec. IV-A)
 *   TENSOR  integer mma (s8, or b1 xor/and-popc) on the tensor cores, for
 *           requests of at most 32 tiles of 16 rows x 8 replicas
 *           (n_p/16 * ceil(B/8) <= 32); other requests are refused
 *   AUTO    the tensor cores wherever the request fits them, else the CUDA
 *           cores (dsb_gpu_tc_pick, src/dsb/gpu/layout.h: measured faster in
 *           every configuration on the H200) */
typedef enum { DSB_GPU_SUMS_AUTO = 0, DSB_GPU_SUMS_CUDA, DSB_GPU_SUMS_TENSOR, DSB_GPU_SUMS_COUNT } dsb_gpu_sums;
const char *dsb_gpu_sums_name(int s);
/* "auto", "cuda", "tensor"; -1 if unknown. */
int dsb_gpu_sums_parse(const char *s);
/* The value of a command-line flag: a comma-separated list of up to
 * DSB_GPU_SUMS_COUNT of those into out[]; returns how many, or -1 after
 * "<prog>: <flag>: expected a list of ..." on stderr (common/args.h style). */
int dsb_gpu_sums_arg(const char *prog, const char *flag, const char *value, int *out);
/* The engine a server runs a request on for the choice sums: TENSOR where
 * asked and the request fits the tensor cores (else CUDA), AUTO's rule, or
 * CUDA; returns DSB_GPU_SUMS_CUDA or DSB_GPU_SUMS_TENSOR (CUDA for a request
 * that fits no block). */
int dsb_gpu_sums_for(int sums, dsb_format f, uint32_t n, uint32_t replicas);
/* 1 when (format, n, B) fits one block and the tensor-core sums (at most 32
 * tiles of 16 rows x 8 replicas), else 0. */
int dsb_gpu_tensor_fits(dsb_format f, uint32_t n, uint32_t replicas);

/* Solves one request with one block; bit-exact with dsb_solve_cpu.  Fills r
 * (and r->x, r->y when allocated).  dsb_solve_gpu is sums = AUTO. */
int dsb_solve_gpu(const dsb_model *m, const int16_t *h, const dsb_params *p, dsb_result *r,
                  cm_err *err);
int dsb_solve_gpu_ex(const dsb_model *m, const int16_t *h, const dsb_params *p, int sums,
                     dsb_result *r, cm_err *err);

/* ---- benchmark and diagnostics (seed 000, Sec. VI-C, Table III) ----------- */

/* Timing variants of the kernel that drop or double one stage of the step, to
 * find what limits it (their results are wrong by design; only the timing
 * counts).  Built for every format with 1, 2, 4, 8 or 16 (replica,row) pairs
 * per thread where each thread's pairs share one coupling row held in
 * registers (n_p divides 256; INT8 n_p <= 128); others report an error. */
typedef enum {
    DSB_GPU_VAR_NONE = 0,      /* the solver */
    DSB_GPU_VAR_NO_BARRIER,    /* no __syncthreads() in the step loop */
    DSB_GPU_VAR_DOUBLE_SUM,    /* coupling sum computed twice per step */
    DSB_GPU_VAR_NO_SUM,        /* no coupling sum (a = h) */
    DSB_GPU_VAR_DOUBLE_UPDATE, /* the position/momentum update applied twice */
    DSB_GPU_VAR_COUNT
} dsb_gpu_variant;

const char *dsb_gpu_variant_name(int v);
/* "none", "no-barrier", "double-sum", "no-sum", "double-update"; -1 if unknown. */
int dsb_gpu_variant_parse(const char *s);

/* One configuration measured as in Table III.  Request i (0-based, warm-up
 * excluded) uses seed p->seed + i and field fields[i % n_fields] (fields may
 * be NULL: zero field).  The caller allocates each output array with
 * `requests` entries. */
typedef struct {
    uint32_t requests;       /* timed requests per measurement (paper: 500) */
    uint32_t warmup;         /* untimed requests before each measurement */
    int variant;             /* dsb_gpu_variant (only with CUDA-core sums) */
    int sums;                /* dsb_gpu_sums */
    double *solve_us;        /* in-kernel solve, %globaltimer (launch pass) */
    double *launch_us;       /* launch to completion, CUDA events */
    double *rt_us;           /* H2D(field) + launch + D2H(reply), host clock */
    double *rt_solve_us;     /* in-kernel solve of the same requests as rt_us */
    double *mapped_us;       /* launch, field read from and reply written to
                                mapped pinned host memory, host polls the reply */
    double *mapped_solve_us; /* in-kernel solve of the same requests */
    int64_t *best_energy2;   /* optional: 2E of each request (launch pass) */
    double *cycles;          /* optional: SM clock cycles of each solve (launch pass) */
    /* filled in: */
    size_t smem_bytes;       /* Eq. (6) of this configuration */
    int regs;                /* registers per thread of the kernel used */
    size_t local_bytes;      /* local memory per thread (0: no spills) */
    uint32_t pairs_per_thread;
    int row_mode;            /* 0 rows differ, 1 shared row in smem, 2 in registers,
                                3 tensor-core sums (pairs_per_thread = 4 x tiles per warp) */
    char device[128];
} dsb_gpu_bench;

int dsb_gpu_bench_solve(const dsb_model *m, const int16_t *fields, uint32_t n_fields,
                        const dsb_params *p, dsb_gpu_bench *b, cm_err *err);

/* ---- launch per request (seed 000, Sec. V-A) -------------------------------
 * The conventional GPU service path: each request is copied into pinned
 * memory, then on one of S_t CUDA streams: H2D copy of the field, a one-block
 * launch of the solver, D2H copy of the reply, an event.  Completed events are
 * polled.  Up to S_t requests are in flight.  Device copies of the models are
 * kept by (slot, generation): uploaded on first use, evicted least recently
 * used when `max_models` are held and none of the evicted one's requests is in
 * flight.  One thread drives a launcher (submit and poll from that thread). */
typedef struct dsb_gpu_launcher dsb_gpu_launcher;

typedef struct {
    uint64_t tag;           /* the caller's, from submit */
    int status;             /* 0 solved; -1 failed (err says why) */
    int64_t best_energy2;
    uint32_t best_replica;
    const uint32_t *spins;  /* W words of the best replica; valid until the next submit or poll */
    double solve_us;        /* in-kernel solve from %globaltimer */
    cm_err err;
} dsb_gpu_done;

/* sums (dsb_gpu_sums): TENSOR solves the requests that fit the tensor-core
 * sums with them and the others on the CUDA cores. */
int dsb_gpu_launcher_create(uint32_t streams, uint32_t max_models, int sums,
                            dsb_gpu_launcher **out, cm_err *err);
void dsb_gpu_launcher_destroy(dsb_gpu_launcher *l); /* waits for requests in flight */
/* Streams without a request in flight. */
uint32_t dsb_gpu_launcher_idle(const dsb_gpu_launcher *l);
/* Starts one request: 0 started, 1 no idle stream (try after a poll), -1 the
 * request cannot run on the GPU (err says why). */
int dsb_gpu_launcher_submit(dsb_gpu_launcher *l, const dsb_model *m, uint32_t slot,
                            uint32_t generation, const int16_t *h, const dsb_params *p,
                            uint64_t tag, cm_err *err);
/* Collects up to max completed requests without blocking; returns how many. */
int dsb_gpu_launcher_poll(dsb_gpu_launcher *l, dsb_gpu_done *out, int max);

#ifdef __cplusplus
}
#endif

#endif
