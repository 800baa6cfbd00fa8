/* Shared by the split GEMM's kernels (gemm_split.cu) and their host side (gemm_launch.cu): the
 * parameters the host fills and the kernels read, and the kernels' declarations.  The host launches
 * them through their host stubs, ordinary host symbols: no relocatable device code.  Not a public
 * header. */
#ifndef DAK_GEMM_KERNEL_CUH
#define DAK_GEMM_KERNEL_CUH

#include <stdint.h>

#include <cuda.h>

#define NCW 8u                 /* consumer warps: two per SM sub-partition (warps w and w + 4) */
#define NTHREADS (32u * (NCW + 2u)) /* + the producer warp and the fix-up warp (dynamic units) */

/* The fields every CTA's prologue reads come first (212 B, four 64 B lines), then the rest (epilogue, fix-ups, dyn,
 * diagnostics).  The prologue stalls ~0.7 us a warp on its first parameter loads (Nsight Compute: imc_miss), and
 * under PDL the last CTA to start is on the sequence's critical path; this layout took only 0.03-0.1 us of it on
 * the H200 (NOTES-dak-kernels-history.md, "The prologue's parameters in the fewest constant-cache lines"). */
typedef struct {
    /* ---- the prologue's (all roles, the producer's first copies, the consumers' set-up) ---- */
    uint32_t host_ctas;
    uint32_t pdl;              /* launched as a programmatic dependent (griddepcontrol) */
    uint32_t stash;            /* with pdl: HBM-tier chunks of A the consumers hold in registers before griddepcontrol.wait
                                  (dak_gemm_plan.hbm_stash; their B rows in the hand-over area, DAK_STASH_OFF) */
    uint32_t c, kstep, kchunks, kblocks, N; /* cluster; 64-column blocks per stage, stages per tile row, K / 64 */
    uint32_t rot;              /* diagnostic: shares relabelled, CTA j takes share (j + rot) mod CTAs */
    uint32_t l2_hints;         /* 0 none, 1 A evict-first, 2 also B evict-last (opts.l2_hints) */
    uint32_t b_perm;           /* 1: B tensor map {64, N, K/64}, smem [block][n][64]; 0: {64, K/64, N}, [n][block][64] */
    uint32_t a_slot_map;       /* packed A, cluster 1, wide HBM column tiles: ta_h / ta_g are 4-D maps of the packed
                                  layout, so that the mh boxes of a slot go in one tensor copy (issue_a) */
    int a_bulk;                /* 1: packed A, 1-D bulk copies; 0: 2-D tensor copies */
    int noload;                /* diagnostic: no copies, slots count as full at once (opts.diag_noload) */
    int nomath;                /* diagnostic: skip the tensor-core math */
    uint32_t wgmma;            /* 1: wide tiles through wgmma (consume_wgmma), 0: mma.sync */
    uint32_t stages[2];        /* ring slots of each tier */
    uint32_t mh[2];            /* 64-row boxes of A per tile and slot: 1, or 2 / 4 for 128- / 256-row tiles (opts.bm) */
    uint32_t bn_box[2];        /* B rows per slot and copy (tn when wider than 64) */
    uint32_t ctas[2], items[2], even[2], ngroups[2], window[2];
    uint32_t tn[2];            /* columns per column tile: 64, or opts.bn (128 / 256) for the HBM tier */
    uint32_t ntiles[2];        /* column tiles of each tier */
    uint32_t mt64[2];          /* 64-row tile rows of each tier (an odd count leaves a last half 128-row tile) */
    uint32_t ksplit[2];
    uint32_t b_rn, b_rk;       /* smem row of B column n, block bk: n * b_rn + bk * b_rk */
    uint32_t dyn;              /* HBM tier in dynamic units (k_split_dyn) */
    unsigned long long *times; /* diagnostic: DAK_GEMM_NTIMES stamps per CTA, or NULL */
    uint32_t *hostq;           /* PDL host-link hand-over: tickets, host CTAs done issuing (host_gate); NULL: off */
    const uint16_t *a_ptr[2];  /* packed A of each tier (device addresses) */
    uint32_t pre_hbm;          /* with pdl: HBM-tier copies of A before the wait (dak_gemm_plan.hbm_pre) */
    /* ---- the rest ---- */
    uint32_t M, K;
    uint32_t ntp[2];           /* tiles per group row of each tier */
    unsigned long long ctr0[2]; /* first per-tile counter of each tier */
    uint32_t mt0[2], row0[2];
    unsigned long long ws0[2]; /* first partial tile of each tier in the workspace (64 x 64 fp32 units) */
    /* a tile's counter: ctr0[tier] + (64-row tile row of its first box) x ntp[tier] + column tile */
    int out_bf16;
    void *C;
    float *ws;
    uint32_t *ctr;
    unsigned long long *host_bytes;
    uint32_t wait_end;         /* launched as the panel kernel's programmatic dependent: griddepcontrol.wait at the
                                  producer's end only (dak_gemm_run) */
    uint32_t fix_wait;         /* even split: the tile's owner waits for the other partials */
    uint32_t nofixup;          /* diagnostic: no fix-up (C wrong) */
    uint32_t dyn_p, dyn_units; /* dynamic units: dyn_p pieces per tile row */
    uint32_t dyn_first;        /* units a CTA takes by index before claiming (dak_gemm_plan.dyn_first) */
    uint32_t *dynctr;          /* [0] unit claims, [1] fp32 C: HBM CTAs that zeroed their share of C, then CTAs done;
                                  both kept zero between launches */
    float *accw;               /* per-tile fp32 accumulators [col][row], kept zero between launches */
    uint32_t epi_global;       /* diagnostic: partials added from L2, not staged (opts.diag_epi_global) */
    uint32_t fix_rs;           /* reduce-scatter fix-up where every contributor ends in the tile (opts.fix_rs) */
    uint32_t nob;              /* diagnostic: no B copies (opts.diag_nob) */
    uint32_t prod2;            /* diagnostic: two producer threads, alternate slots (opts.diag_prod2) */
    uint32_t whole_rows, whole_loaders; /* k_whole: B rows a cluster member fetches a stage, members that do */
    uint32_t sw_rows;          /* k_whole_sw: rows of A a CTA (a multiple of 8, at most 256) */
    uint32_t a_groups;         /* k_whole_sw: A packed in groups of sw_rows rows (dak_pack_groups), else 0 (tiles) */
} kparams;

/* The split kernel's signature, shared by its definitions (K_SPLIT in gemm_split.cu) and the
 * declarations below. */
#define K_SPLIT_SIG(name)                                                                                      \
    __global__ void __launch_bounds__(NTHREADS, 1)                                                          \
        name(const __grid_constant__ CUtensorMap ta_h, const __grid_constant__ CUtensorMap ta_g,             \
             const __grid_constant__ CUtensorMap tb, const __grid_constant__ CUtensorMap tbw,                \
             const __grid_constant__ kparams p)

/* Defined in gemm_split.cu: one split kernel per shape of the HBM tier's tiles (128 x 64, 128, 256;
 * 256 x 128), k_split_nn / k_split_nn2 for N 9..32 (the narrow consumer on precomputed offsets; 64- / 128-row
 * tiles), k_split_dyn with the HBM tier in dynamic units (opts.dyn), and the diagnostic empty kernel.  The plan
 * names the one a launch runs (dak_split_kernel in dak/gemm.h). */
K_SPLIT_SIG(k_split);
K_SPLIT_SIG(k_split_nn);
K_SPLIT_SIG(k_split_nn2);
K_SPLIT_SIG(k_split_n8);
K_SPLIT_SIG(k_split_dyn);
K_SPLIT_SIG(k_split_n128);
K_SPLIT_SIG(k_split_n256);
K_SPLIT_SIG(k_split_m256);
/* Defined in gemm_whole.cu: whole-K tiles, one a CTA (opts.whole, dak_gemm_plan.kernel DAK_SPLIT_WHOLE); B is tb
 * ({64, N, K/64} in boxes of {64, bn_box, kstep}) without a cluster, tbw (2-D {K, N} in boxes of whole_rows rows) with
 * one; ta_h and ta_g unused. */
K_SPLIT_SIG(k_whole);
/* Defined in gemm_whole.cu: whole-K tiles of sw_rows rows (any multiple of 8) with A's rows as the wgmma's n and B's
 * columns as its m (dak_gemm_plan.kernel DAK_SPLIT_WHOLE_SW); B is tb as for k_whole, no cluster. */
K_SPLIT_SIG(k_whole_sw);
__global__ void __launch_bounds__(NTHREADS, 1) k_empty(void);

#endif
