/* Sections of `dak bench gemm` that live in their own files (cmd_bench.c runs them). */
#ifndef DAK_TOOL_BENCH_SECTIONS_H
#define DAK_TOOL_BENCH_SECTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "bench_internal.h"
#include "common/json.h"
#include "dak/gemm.h"

#ifdef DAK_HAVE_CUDA
/* Pearson correlation of x and y (n pairs); NaN when either is constant. */
double bench_pearson(const double *x, const double *y, size_t n);

/* The %smid values smrate takes (0 .. BENCH_SMRATE_MAXSM - 1): the entries of its sm_us. */
#define BENCH_SMRATE_MAXSM 1024u

/* --sections smrate (bench_smrate.c): per-SM HBM streaming times of an even split over `reps`
 * launches of `bytes` each (slices of gbuf), their stability, and an even vs a rate-weighted
 * split interleaved.  Writes "smrate" into w, each SM's mean time (us, by %smid, NaN where no
 * CTA ran) into sm_us (BENCH_SMRATE_MAXSM entries) and the %smid bound into *nsm.  0, or 1
 * (message printed, nothing written into w). */
int bench_smrate(dak_gemm_ctx *ctx, const void *gbuf, size_t gbytes, size_t bytes, uint32_t reps, json_w *w,
                 double *sm_us, uint32_t *nsm);

/* Before any shape (bench_probe.c): the bandwidth probes (into bench->Bg, Bh), then the sections
 * congestion, diag's HBM probe and smrate (into bench->sm_us, nsm) as asked.  0 or 1 (smrate
 * failed, message printed; the probe buffers are freed either way). */
int bench_probes(bench_run *bench);

/* Per shape, each writing its tables and its JSON entries (bench->c says which run):
 * --sections sweep (bench_sweep.c); it drops s->um (freed, NULL) where the uvm baseline fails. */
void bench_sweep(const bench_run *bench, bench_shape *s);
/* amp (first shape only), wave, diag (bench_ablations.c) */
void bench_amp(const bench_run *bench, const bench_shape *s);
void bench_wave(const bench_run *bench, const bench_shape *s);
void bench_diag(const bench_run *bench, const bench_shape *s);
/* The widest N that amp (on the first shape), wave and diag time as c asks (0 where none runs): their own N lists,
 * not --n's; B and C must be allocated that wide (else the GEMM is refused: the operands' extents) */
uint32_t bench_ablations_nmax(const bench_cfg *c, int first_shape);
/* fixed and/or wgmma (bench_fixed.c): the wgmma A/B table always, the fixed-cost table and the
 * stamps with fixed */
void bench_fixed(const bench_run *bench, const bench_shape *s);
/* The widest N that fixed and wgmma time as c asks (0 where neither runs) */
uint32_t bench_fixed_nmax(const bench_cfg *c);
/* The progress steps bench_fixed takes for one shape (bench_step): the wgmma table, one per fixed-cost row. */
uint64_t bench_fixed_steps(const bench_cfg *c);
#endif

#endif
