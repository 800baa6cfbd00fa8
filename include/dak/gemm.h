/* Direct-access split GEMM (seed 003, Sec. 4.1 and 4.3) and its baselines.
 *
 *   C = A B        A: M x K bf16, tiered (dak_tiered.h), row-major
 *                  B: K x N bf16 in HBM, column-major (N columns of K contiguous
 *                     elements: the N hidden-state vectors, as an N x K row-major array)
 *                  C: M x N in HBM, column-major (N columns of M), fp32 or bf16;
 *                     accumulation is fp32.
 *
 * The split kernel is persistent and warp-specialised: one producer warp issues
 * TMA copies of A tiles (64 rows x kstep*64 columns, kstep x 8 KiB: one 1-D bulk
 * copy from the packed layout, or kstep 2-D tensor copies from row-major A; with
 * the wide column tiles below, a 128- or 256-row tile's boxes in one 4-D tensor copy
 * of the packed layout, since one thread issues every copy) and
 * B tiles (one 3-D tensor copy of kstep blocks) into a ring of
 * shared-memory slots that complete on mbarriers; eight consumer warps (two per
 * SM sub-partition) run mma.sync bf16 tensor-core math, each on one half of
 * every 64-column block's K (the halves are summed through shared memory at
 * the tile's end) and on 16 rows (column tiles of at most 32 valid columns) or
 * 32 rows x 32 columns (wider tiles).  With opts.wgmma the wide tiles go instead
 * through wgmma: the consumer warps are two warpgroups, each taking one K half of
 * every block as m64n64k16 on the slot's A block and B rows (a B box of 64 rows) in place (shared-memory descriptors, 128-byte swizzle), warp q of a warpgroup
 * holding rows 16q..16q+15 x 64 columns (include/dak/gemm_layout.h); the hand-over,
 * fix-up and the panel kernel's reductions are unchanged but for that mapping.  The first `host_ctas` CTAs read only host
 * tile rows, the rest only HBM tile rows.  Host CTAs keep at most `window`
 * copies in flight (congestion window).  With cluster > 1 the CTAs of a
 * cluster compute different column tiles of the same tile row and each A tile
 * is fetched once and multicast into every member's slot (host-locality-first
 * scheduling).  Wave alignment splits each tier's (tile, K-chunk) work evenly
 * over its CTAs (every CTA gets the same number of chunks, stream-K style);
 * without it, whole tiles (split in K only to cover the CTAs) go round-robin.
 * Partial tiles go through a workspace and per-tile counters: with wave alignment
 * (cluster 1) the tile's owner, the CTA holding its first K chunks at the end of its
 * range, waits for the others' partials (run 10); otherwise the last contributor to
 * arrive sums them.  Every element of C is written exactly once.
 *
 * 128-row tiles (opts.bm, the HBM tier, default where N > 32): a slot holds two 64-row boxes of
 * A and one copy of the B rows; warpgroup h computes rows 64 h.. over the slot's whole K (no K
 * halves, no hand-over), so B crosses L2 -> SM once per 128 rows (1.5x A's bytes at N = 64, not
 * 2x).  Partials are 128 x 64; an odd count of HBM tile rows leaves a half last tile.
 * Wide column tiles (opts.bn 128 / 256, with 128-row tiles): the slot's B is bn rows (one copy of
 * kstep x bn x 128 B, the same [block][n][64] swizzled layout) and warpgroup h runs m64n<bn>k16
 * on it (64 / 128 accumulator registers per thread), so A crosses L2 -> SM once per bn columns
 * and each wgmma's A operand read from shared memory serves bn columns, not 64.  Partials
 * 128 x bn.  Kernels k_split_n128 / k_split_n256 (gemm_split.cu); bn 256 has no tiled host tier.
 *
 * Panel path (opts.panel, gemm_panel.cu; issue #7, read amplification): the tiled path
 * above re-fetches every host tile once per group of 64 x cluster columns (8x at N = 4096
 * with cluster 8).  With `panel` the host tile rows go instead through an A-stationary
 * kernel: a cluster loads one host *panel* (64 rows x 64 pblocks columns, 64 KiB by default)
 * once, each member issuing 1/cluster of every piece (kstep blocks) by .multicast::cluster,
 * into one of two panel buffers (the next panel streams in while this one is used); then
 * each member walks its column tiles (rank, rank + cluster, ...), streams B (piece by piece,
 * from HBM by 3-D TMA) through a small ring, computes the 64 x 64 partial over the panel
 * with the same mma.sync consumers, and adds it into an fp32 accumulator by
 * red.global.add.v4.f32 (split-K over panels: the host rows of C, or for bf16 C an fp32
 * workspace converted afterwards, are zeroed first).  Units (tile row, panel) are split in
 * contiguous ranges over the clusters, so a tile row's panels mostly follow each other in
 * one cluster and its 64 x N accumulator stays in L2.  Host bytes = A's host bytes (1.00x)
 * for every N.  The HBM tile rows keep the tiled kernel, launched on the caller's stream
 * while the panel kernel runs on a second stream (fork/join by events; both grids fit the
 * SMs together, so they run side by side; cost: two events and a memset).
 * Prediction (before any measurement; A 7168^2 all in host memory, 128 panel CTAs, link
 * ~42 GB/s): N = 1024: 1.00x, ~2.55 ms (2.5-2.7; tiled, cluster 8: 2.00x, 4.82 ms);
 * N = 4096: 1.00x, ~2.8 ms (2.6-3.3; tiled: 8.00x, 19.2 ms).  The link (2.45 ms) should
 * dominate; the math (421 GFLOP at the ~210 TFLOP/s these mma.sync consumers reached at
 * N = 512: ~2.0 ms), B re-read once per tile row (6.6 GB at N = 4096, L2/HBM) and the fp32
 * reductions (1.6 GB into L2) overlap it but leave less slack at N = 4096.
 *
 * All functions return 0 or -1 with a message in err.  Without CUDA every
 * entry point fails with "not built". */
#ifndef DAK_GEMM_H
#define DAK_GEMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "common/error.h"
#ifdef __cplusplus
}
#endif
#include "dak/tiered.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Shared memory of the split kernel besides its ring slots: 1024 B of alignment slack and
 * 512 B of mbarriers and flags; plus, where some tier has 64-row tiles, the area where the
 * consumer warps of the second K half hand their partial sums to the first (8 KiB when N <= 32,
 * else 16 KiB; see gemm_split.cu; 128-row tiles have no hand-over). */
#define DAK_GEMM_SMEM_BASE (1024u + 512u)
/* Dynamic units (opts.dyn) use that area for their slot tags and queue (its first 1 KiB) and, from
 * DAK_DYN_STAGE_OFF on, two staging tiles of N columns x DAK_DYN_STAGE_LD floats (64 rows and a pad
 * of 4, so that the fragment stores are free of bank conflicts). */
#define DAK_DYN_STAGE_OFF 1024u
#define DAK_DYN_STAGE_LD 68u
/* The PDL stash (opts.stash) puts the B rows of its chunks in that area too, 1 KiB-aligned (the B map's
 * 128-byte swizzle): from DAK_STASH_OFF past the ring's end, up to DAK_STASH_BYTES (the N <= 32 hand-over
 * area's size; the area grows by DAK_STASH_OFF - 512 to hold them).  At most DAK_STASH_MAX chunks. */
#define DAK_STASH_OFF 1024u
#define DAK_STASH_BYTES 8192u
#define DAK_STASH_MAX 2u
/* dak_gemm_opts.pdl_pre: no copy of A before the PDL wait */
#define DAK_GEMM_PDL_PRE_NONE 0xffffffffu

typedef struct {
    uint32_t host_ctas; /* SMs that read host tile rows (0: auto, max(4, SMs x host share); with pdl, where the host
                           link binds (host rows more than 1/64 of A), max(12, SMs x host share)) */
    uint32_t hbm_ctas;  /* SMs that read HBM tile rows (0: all SMs left) */
    uint32_t window;    /* in-flight copies per host SM (0: auto, ~1 MiB in flight over all host SMs) */
    uint32_t stages;    /* ring slots per SM of the split kernels (0: as many as fit, at most 24) */
    uint32_t cluster;   /* 1, 2, 4 or 8 CTAs sharing each A tile by multicast */
    int wave_align;     /* 1: choose CTAs and K split so tiles per SM divide evenly */
    int tile_align;     /* 1 (default): with wave_align and hbm_ctas auto, and host rows at most M / 64 (where
                           the HBM rows bind), the HBM tier takes the largest CTA count, keeping >= 80 % of
                           its SMs, that divides its tiles or that they divide, when there are fewer than two
                           tiles a CTA (every tile in whole equal shares); 0: all SMs */
    int out_bf16;       /* 1: C is bf16, else fp32 */
    int a_tma2d;        /* 1: A row-major, loaded by 2-D tensor copies; 0: packed A, 1-D bulk copies */
    uint32_t kstep;     /* 64-column blocks per ring slot: 0 auto (the largest dividing K/64 that leaves 3 slots), else 1, 2 or 4 */
    int diag_nomath;    /* diagnostic: consumers wait and release slots but skip the math (C is garbage) */
    int diag_nob;       /* diagnostic: the tiled kernel's producer issues no B copies, A's alone (the slots' B is stale, C is
                           garbage); single launches only: not with pdl or dyn */
    int diag_prod2;     /* diagnostic: two producer threads (the idle fix-up warp's lane 0 beside the producer's) issue
                           alternate ring slots; not with dyn; with pdl on the HBM tier of the 64-column kernels only
                           (the second one counts the first's copies before griddepcontrol.wait; no stash) */
    int diag_noload;    /* diagnostic: the tiled kernel's producer issues no copies and marks each slot full at
                           once, so that the consumers' math and epilogue run alone on stale shared memory (C is
                           garbage; the host byte count is of the copies it would have issued); not with pdl,
                           dyn or the panel path */
    int diag_b_nmajor;  /* diagnostic: B in shared memory as [n][block][64] (bank conflicts on B), not [block][n][64] */
    int diag_plain_launch; /* diagnostic: launch without the cluster attribute when cluster is 1 */
    int bn8;            /* 1 (default): the B box is 8 rows when N <= 8, so one more ring slot fits (kstep 4: 6 slots of
                           36 KiB, not 5 of 40 KiB): 0-2.2 % a GEMM as PDL graphs on the H200, never slower (twelfth
                           session; run 8 had found it no faster in a kernel 3x slower); 0: 16 rows, an ldmatrix pair */
    int bn24;           /* 1 (default): the B box is 24 rows at N 17..24 on k_split_nn's 64-row tiles (12 KiB of B a ring
                           slot, not 16; no cluster, dyn, panel path or diag_b_nmajor); 0: 32 rows */
    int bnw;            /* 1 (default): at N 33..56 on the 64-column wgmma tiles the B box is N rounded up to 8 rows
                           and the wgmma m64n40 / n48 / n56 (10-14 KiB of B a 128-row slot, not 16; no cluster, dyn,
                           panel path or diag_b_nmajor); 0: 64 rows, m64n64 */
    int pdl;            /* 1: programmatic dependent launch: the kernel may start while the previous
                           one in the stream drains; it loads its first ring of A (read-only weights)
                           and waits (griddepcontrol.wait) before B and before writing anything; a host CTA
                           loads its window's worth once the previous launch's host CTAs have issued their
                           last copies, so that the host link does not idle between the two */
    int diag_panel_fork; /* diagnostic: the panel kernel on a forked stream beside the tiled kernel (as before the
                            eighth session; the default launches the tiled kernel as its programmatic dependent) */
    int diag_pdl_host_wait; /* diagnostic: with pdl, no host-link hand-over (as before the eighth session): a host
                               CTA with a window smaller than its ring issues nothing before griddepcontrol.wait,
                               one without loads its ring at once */
    int diag_fixup_atomic; /* diagnostic: the split-K fix-up of runs 1-9 (every contributor publishes,
                              the last to arrive sums) instead of the owner's wait (wave alignment) */
    int diag_nofixup;   /* diagnostic: shared tiles skip the fix-up, each CTA stores its partial (C wrong) */
    int diag_times;     /* diagnostic: every CTA records %globaltimer stamps (dak_gemm_times) */
    int diag_epi_global; /* diagnostic: a CTA's last tile does not use its idle ring: the split-K partials are added
                            from L2 (not brought in by bulk copies) and C is stored from the fragments (not staged
                            [column][row] and stored by float4) */
    uint32_t dyn;       /* diagnostic: HBM tier in dynamic units (N <= 64, cluster 1): 0 off, 1 on.  Each CTA takes its
                           first units by index (enough to fill its ring), the rest from an atomic counter, one
                           claim ahead; fp32 C gets every unit's partial by reductions (zeroed in the kernel),
                           bf16 C through a fix-up warp.  Needs at least as many units as CTAs */
    uint32_t dyn_slots; /* dynamic units: ring slots (K chunks) per unit, 0 auto (2 when N <= 32, else 4), else 1..16 */
    uint32_t stash;     /* with pdl: K chunks of A (ring slots) that each HBM-tier CTA's consumers take into registers
                           before griddepcontrol.wait, handing their slots back, so that the next chunks go into them
                           right after the wait's B copies (their own B rows come after it into a side area): 0 off,
                           1 or 2 (default 2, as many as that area holds; 1-1.5 % a GEMM as PDL graphs on the H200,
                           thirteenth session).  Applies at N <= 8 with 64-row HBM tiles, cluster 1, no dyn
                           and the HBM window at the ring (dak_gemm_plan.hbm_stash: what the plan took) */
    uint32_t pdl_pre;   /* with pdl: copies of A each HBM-tier CTA issues before griddepcontrol.wait: 0 (default) auto
                           (3 with 128-row HBM tiles at N <= 64: their B rows queue behind less A, 1-1.5 % on the
                           H200; else the whole ring), else 1..24 (at most the ring, at least the stash;
                           dak_gemm_plan.hbm_pre: what the plan took), or DAK_GEMM_PDL_PRE_NONE: none, and no
                           stash (nothing read before the wait: a kernel before it runs its memory accesses without
                           this one's copies in the queues; the engine's small kernels, twenty-second session) */
    uint32_t hbm_window; /* copies in flight per HBM-tier SM, at most the ring: 0 (default) auto, 3 at N <= 8 without
                            pdl (the SMs' HBM shares even out: 0.2-0.9 us a GEMM in graphs without PDL on the
                            H200, 7168^2 and 11008 x 4096), 2 on 64-row tiles at N 9-32 with or without pdl
                            (0.25-0.45 us with it, 0.7-1.3 us without, 7168^2) and on 128-row ones at N 17-32,
                            else the whole ring; 1..24 that many (24: the ring).
                            Under PDL the first ring of A still goes out before griddepcontrol.wait; the window
                            applies from there on */
    uint32_t panel;     /* host tile rows through the A-stationary panel kernel (host bytes 1.00x for any N):
                           0 off, 1 on, 2 auto (on when the tiled path would fetch a host tile more than once,
                           i.e. more than 64 x cluster columns, and neither pdl nor a_tma2d is set).  Needs packed A,
                           no pdl.  With it, host_ctas and window apply to the panel kernel, cluster to the HBM rows */
    uint32_t panel_cluster; /* CTAs sharing each panel: 0 auto (8), 1, 2, 4, 8 or 16 (16 is non-portable: checked
                               at prepare, refused with a message where the device does not allow it) */
    uint32_t panel_blocks;  /* 64-column blocks per panel: 0 auto (8: 64 KiB, double-buffered), else 1..16 and a
                               multiple of the piece (kstep 2 when K/64 is even, else 1) */
    uint32_t wgmma;     /* wide column tiles (more than 32 valid columns of a 64-column tile) through
                           wgmma (sm_90a warpgroup MMA, operands read in place from the ring slots by
                           descriptors) instead of mma.sync, in both kernels: 0 off, 1 on (refused with
                           diag_b_nmajor), 2 auto, the default (on wherever wide tiles exist and the
                           B layout allows: 1.06-1.10x at N = 64 on the H200).  No effect when N <= 32, nor on the
                           dyn diagnostic (mma.sync).  With it the B box is 64 rows (m64n64k16) */
    uint32_t bm;        /* rows of A per CTA tile of the HBM tier: 0 auto (128 when N > 32, i.e. where B is a
                           large share of a ring slot's bytes, and the HBM tier has at least two 64-row tile
                           rows), 64 or 128.  128: a slot holds rows r..r+127 (two 64-row boxes) and one copy
                           of the B rows; warpgroup h owns rows 64 h.. over the slot's whole K (no K halves,
                           no hand-over), so B is read once per 128 rows.  The host tier keeps 64 rows;
                           the dyn diagnostic uses 64 whatever bm says.  An odd count of HBM tile rows
                           leaves the last 128-row tile half full (one box, warpgroup 1 idle).  256 (asked
                           for; N > 64): 256 x 128 tiles, each warpgroup two 64-row boxes, B read once per 256
                           rows (1.5x A's bytes into the SMs at N = 128, not 2x); needs wgmma, bn 0 or 128,
                           cluster 1, at least four HBM tile rows (else 128) and no tiled host tier */
    uint32_t bn;        /* columns per CTA tile of the HBM tier's 128-row tiles (wgmma m64n<bn>k16, one B slot
                           of bn rows): 0 auto (the narrowest of 64 / 128 / 256 that covers the N / cluster
                           columns of one cluster member, 256 when none does; at most 128 beside a tiled
                           host tier), 64, 128 or 256.  Only where the HBM tier has
                           128-row tiles through wgmma; elsewhere (64-row tiles from bm auto, N <= 32, one HBM
                           tile row, no HBM rows) it falls back to 64.  Refused with bm 64, wgmma 0, dyn or
                           diag_b_nmajor.  The host tier and the panel kernel keep 64-column tiles */
    uint32_t diag_rotate; /* diagnostic: CTA (cluster) j of a tier takes share (j + diag_rotate) mod its CTAs */
    int l2_hints;       /* 1 (default): the split kernel's copies carry L2 cache policies: A (read once)
                           evict-first, B (re-read by every CTA) evict-last where it is at most 16 MiB; 0: none */
    int fix_rs;         /* 1 (default): a split-K tile held in whole shares, i.e. the only segment of every CTA
                           contributing to it (dak_tier_plan.rs_tiles; e.g. two CTAs a tile after tile alignment),
                           is summed by reduce-scatter: each contributor adds and stores a share of its rows.
                           0: the owner waits for the others' partials and sums the whole tile (cluster 1, even
                           split) */
    uint32_t whole;     /* whole-K tiles (k_whole, gemm_whole.cu): 0 off, 2 auto (the default: where it applies,
                           64-row tiles fill 80-100 % of the SMs, or 45-80 % at N <= 32 and K <= 4096 (4096^2: -10 to
                           -17 %), and at K > 8192 and N > 8 only with clusters of 4;
                           e.g. 7168^2 on 132 SMs: faster than the split at every N 1..64 as PDL graphs on the H200,
                           2.6-5.6 %; dak decode OPT-30B b8 -0.9 % a token), 1 where it applies: no host rows,
                           N <= 64, packed A, B as [block][n][64], no dyn and no diagnostic of the split kernel, and
                           every tile on an SM of its own (64-row tiles, or 128-row ones where 64-row tiles
                           outnumber the SMs; opts.bm forces one).  One CTA a tile over the whole K (no split-K,
                           no fix-up), optionally in clusters of whole_cluster CTAs that each fetch a slice of every
                           B stage and multicast it to all (L2 serves B once per cluster), a deep ring of kstep
                           64-column blocks a stage (opts.kstep; auto 2, else 1; A's and B's copies from two
                           producer warps), wgmma m64n<N rounded up to 8>k16.  Elsewhere the split plan */
    uint32_t whole_cluster; /* with whole: CTAs sharing each B stage, 0 auto (4 where it divides the tiles and K > 8192
                               or N >= 41, or N >= 25 where the tiles fill 80 % of the SMs, else 1: 7168 x 28672 2-9 %
                               faster at every N 1..64, 7168^2 0.8-2.6 % at N 25-40 and 0.6-3.1 % at N 41-64, slower
                               below; plan.c's WHOLE_CL_*), 1, 2 or 4 (refused where it does not
                               divide the tiles) */
    uint32_t whole_stages;  /* with whole: ring stages per CTA (0: as many as fit, at most 24; fewer than 4 of kstep
                               auto fall back to the split plan, of kstep asked fewer than 3).  opts.stages does not
                               apply to k_whole */
    uint32_t whole_window;  /* with whole: stages of A in flight per CTA after the PDL wait (each copy then waits for
                               the stage `window` before it to land); 0 auto (4: the CTAs' HBM shares even out),
                               1..24 (at least the ring: the ring) */
    uint32_t whole_swap;    /* with whole: A's rows as the wgmma's n (k_whole_sw): a CTA takes R rows, R the multiple
                               of 8 nearest above M / SMs (at most 256), so that the tiles come within 8 rows of an
                               even share where 64-row tiles leave SMs idle (4096^2: 128 CTAs of 32 rows, not 64 of
                               64); B's columns the wgmma's m (64: the padding costs math, not bytes).  0 auto (plan.c's
                               WHOLE_SW_*), 1 never, 2 wherever it applies (no cluster; whole_cluster must be 0 or 1),
                               3 as 0 over the tiles, and over A in row groups wherever k_whole does not apply and
                               R >= N (dak_gemm_a_group_rows: no split kernel in a decode step at N <= R) */
    uint32_t a_group_rows;  /* A's packed layout: 0 (or 64) the 64-row tiles; else A packed in groups of this many rows
                               (dak_pack_groups), which k_whole_sw with R = a_group_rows reads in one contiguous copy a
                               stage and nothing else reads: the plan is then k_whole_sw or refused (host rows,
                               N > 64, whole 0, whole_swap 1, a cluster, a bm other than R, or R rows a CTA outnumbering
                               the SMs).  dak_gemm_prepare takes it from A (dak_tiered.group_rows), whatever is here */
} dak_gemm_opts;

/* Defaults: host_ctas and window auto, hbm_ctas all, cluster 1, wave_align 1, tile_align 1, fp32, packed A,
 * panel auto, wgmma auto, bm auto, bn auto, l2_hints 1, fix_rs 1, whole auto. */
void dak_gemm_opts_default(dak_gemm_opts *o);

typedef struct {
    uint32_t mtiles;   /* tile rows of this tier (of 64 rows; of 128 rows for the HBM tier when bm = 128) */
    uint32_t ctas;     /* CTAs (a multiple of the cluster size; 0 if the tier is empty) */
    int even;          /* 1: chunks split evenly over the CTAs (wave alignment), 0: round-robin */
    uint32_t ksplit;   /* most CTAs contributing to one output tile (partials per tile) */
    uint32_t items;    /* round-robin: mtiles x column groups x ksplit; even: total chunks */
    uint32_t waves;    /* round-robin: ceil(items / clusters); even: 1 */
    uint32_t chunks;   /* largest number of K chunks (64 columns of A) one CTA loads per wave */
    uint32_t window;   /* in-flight copies per SM */
    double balance;    /* mean work per CTA / largest work per CTA (1 = even) */
    uint32_t ngroups;  /* column groups of this tier: ceil(ceil(N / column tile width) / cluster) */
    uint32_t rs_tiles; /* even split, cluster 1: tiles shared in whole shares, the first contributor's range
                          starting and the last one's ending with the tile (dak_rng_whole_shares; summed by
                          reduce-scatter with opts.fix_rs) */
} dak_tier_plan;

/* The panel kernel's plan (host tile rows, A-stationary; opts.panel). */
typedef struct {
    int on;             /* 1: the host tile rows go through the panel kernel (the tiled host tier is empty) */
    uint32_t cluster;   /* CTAs per cluster: column tiles split over them, every panel piece multicast */
    uint32_t kstep;     /* 64-column blocks per piece: one multicast copy share per member, one B ring slot */
    uint32_t pblocks;   /* 64-column blocks per panel (the last panel of a tile row may be shorter) */
    uint32_t npanels;   /* panels per tile row: ceil(K/64 / pblocks) */
    uint32_t units;     /* host tile rows x npanels (split in contiguous ranges over the clusters) */
    uint32_t ctas;      /* CTAs (a multiple of cluster) */
    uint32_t bstages;   /* B ring slots (kstep x bn_box x 128 bytes each) */
    uint32_t window;    /* in-flight host copies (piece shares of kstep x 8 KiB / cluster) per SM */
    uint32_t smem_bytes; /* dynamic shared memory of the panel kernel */
    uint64_t ws_bytes;  /* fp32 accumulator for bf16 C: rows_host x N x 4 (0 for fp32 C: C itself) */
    double balance;     /* mean units per cluster / most units per cluster */
} dak_panel_plan;

typedef struct {
    uint32_t M, N, K, rows_host;
    uint32_t kstep;    /* 64-column blocks of A per ring slot (stage): 4, 2 or 1 */
    uint32_t kchunks;  /* K / (64 kstep): stages per tile row */
    uint32_t ntiles;   /* ceil(N / 64) column tiles of 64 columns (the host tier, the panel kernel) */
    uint32_t cluster;  /* CTAs per cluster */
    uint32_t ngroups;  /* ceil(ntiles / cluster) column groups of 64-column tiles (hbm.ngroups: the HBM tier's) */
    uint32_t bn;       /* columns per CTA tile of the HBM tier: 64, or 128 / 256 (opts.bn; 128-row tiles, wgmma);
                          a wide HBM slot holds kstep x bn B rows (one copy, box bn rows) */
    uint32_t bn_box;   /* rows (columns of B) per copy: min(64, N rounded up to 16) (8 with bn8, N <= 8;
                          24 with bn24, N 17..24 on k_split_nn; 64 with wgmma, N rounded up to 8 at N 33..56
                          with bnw) */
    uint32_t stages;   /* ring slots of the 64-row tiles (the host tier, and the HBM tier when bm = 64) */
    uint32_t bm;       /* rows per CTA tile of the HBM tier: 64, 128 or 256 (opts.bm); k_whole_sw: any multiple of 8
                          up to 256 (opts.whole_swap) */
    uint32_t hbm_stages; /* ring slots of the HBM tier: stages when bm = 64, else the (larger) 128-row slots that fit */
    uint64_t ws_bytes; /* split-K workspace needed */
    uint32_t dyn_p;    /* dynamic units: pieces per HBM tile row (K split), 0 when off */
    uint32_t dyn_units; /* dynamic units: HBM tile rows x dyn_p, 0 when off */
    uint32_t hbm_stash; /* chunks of A an HBM-tier CTA holds in registers before griddepcontrol.wait (opts.stash; 0:
                           none) */
    uint32_t hbm_pre;  /* with pdl: copies of A an HBM-tier CTA issues before griddepcontrol.wait (opts.pdl_pre); 0
                          without pdl */
    uint32_t dyn_first; /* dynamic units: units each CTA takes by index (cid, cid + CTAs, ..) before claiming, so
                           that its first ring fill (the PDL prefetch) needs no claim */
    uint32_t smem_bytes; /* dynamic shared memory of the kernel */
    uint32_t wgmma;    /* 1: the wide column tiles of both kernels go through wgmma (asked or auto, and
                          N > 32: some tile has more than 32 valid columns), 0: all mma.sync */
    uint32_t whole_rows;    /* k_whole: B rows a cluster member fetches a stage (multicast to all; 0 otherwise) */
    uint32_t whole_loaders; /* k_whole: members that fetch B rows (bn_box = whole_rows x whole_loaders) */
    uint32_t kernel;   /* dak_split_kernel: the tiled kernel's instantiation, named by dak_split_kernel_name.  A
                          prepared launch's plan (dak_gemm_launch_plan) names the one it runs: DAK_SPLIT where the
                          driver refused the [block][n][64] B map the offsets consumers need */
    dak_tier_plan host, hbm; /* host is empty (ctas 0) when the panel path takes the host rows */
    dak_panel_plan panel;
} dak_gemm_plan;

/* The tiled kernel's instantiations (gemm_split.cu), each a compile-time specialisation of one body for the HBM
 * tier's tile shape and consumer; chosen in that order of precedence. */
typedef enum {
    DAK_SPLIT = 0,  /* k_split: the generic consumers (64-row tiles at any N; 128-row tiles at N <= 8 or > 32); N <= 8
                       only where B could not be laid out [block][n][64] */
    DAK_SPLIT_NN,   /* k_split_nn: 64-row tiles at N 9..32, ldmatrix offsets worked out once a tile */
    DAK_SPLIT_NN2,  /* k_split_nn2: as k_split_nn on 128-row tiles (N 9..16 where 64-row tiles split raggedly) */
    DAK_SPLIT_N8,   /* k_split_n8: N <= 8 (one n8 tile), 64- or 128-row tiles, ldmatrix offsets worked out once a tile */
    DAK_SPLIT_DYN,  /* k_split_dyn: dynamic units (opts.dyn) */
    DAK_SPLIT_N128, /* k_split_n128: 128 x 128 wgmma tiles */
    DAK_SPLIT_N256, /* k_split_n256: 128 x 256 wgmma tiles */
    DAK_SPLIT_M256, /* k_split_m256: 256 x 128 wgmma tiles */
    DAK_SPLIT_WHOLE, /* k_whole (gemm_whole.cu): whole-K tiles, one a CTA, B multicast in clusters (opts.whole) */
    DAK_SPLIT_WHOLE_SW, /* k_whole_sw (gemm_whole.cu): whole-K tiles of bm rows (any multiple of 8), A's rows as the
                           wgmma's n (opts.whole_swap) */
    DAK_SPLIT_KERNELS
} dak_split_kernel;

/* "k_split", "k_split_nn", ..: the kernel's name as profilers show it; "?" for a value out of range. */
const char *dak_split_kernel_name(uint32_t kernel);

/* Pure C (CPU-testable): the launch plan for a shape on a GPU with sm_count SMs and
 * smem_bytes of opt-in shared memory per block.  Fails on M or K not a multiple of
 * 64, N == 0, rows_host not a multiple of 64 or > M, bad options. */
int dak_gemm_plan_make(uint32_t M, uint32_t N, uint32_t K, uint32_t rows_host,
                       const dak_gemm_opts *o, uint32_t sm_count, size_t smem_bytes,
                       dak_gemm_plan *p, cm_err *err);

/* The rows of the groups in which an all-HBM A (M x K) should be packed for GEMMs of N columns with these options
 * (0: the 64-row tiles): k_whole_sw's R (the multiple of 8 at or above M / SMs) where A in R-row groups is planned as
 * k_whole_sw and whole_swap is 2, or 3 where the tiles' plan is not k_whole and is k_whole_sw or R >= N, or 0 where R
 * exceeds 64 and is not a multiple of 64 (plan.c's WHOLE_SW_GROUP_MIN_ROWS: on the H200 12288 x 4096 in 96-row groups up to 1.9 us under
 * the split as PDL graphs, 21504 x 7168 in 168-row ones 4 us under k_whole_sw on the tiles; 7168^2 in 56-row ones
 * 1.5 us over k_whole).  Pure C; any option the plan refuses gives 0. */
uint32_t dak_gemm_a_group_rows(uint32_t M, uint32_t K, uint32_t N, const dak_gemm_opts *o, uint32_t sm_count,
                               size_t smem_bytes);

/* Host bytes of A the plan moves over the interconnect (read amplification numerator):
 * rows_host x K x 2 x column groups on the tiled path, rows_host x K x 2 on the panel path. */
uint64_t dak_gemm_plan_host_bytes(const dak_gemm_plan *p);

/* ---- device side ---------------------------------------------------------- */

typedef struct dak_gemm_ctx dak_gemm_ctx;

/* Opens the current CUDA device: SM count, shared-memory limit, the driver's
 * cuTensorMapEncodeTiled (through cudaGetDriverEntryPointByVersion), cuBLAS.  The launches prepared on
 * a context share its split-K workspace and tile counters, which a prepare grows as its plan needs; a
 * launch keeps the buffers it was prepared with (outgrown ones are freed with the context), so any
 * prepared launch, or a graph that captured it, may run after later prepares.  They share the counters,
 * so a context's launches run one at a time (one stream, or ordered). */
int dak_gemm_ctx_create(dak_gemm_ctx **ctx, cm_err *err);
void dak_gemm_ctx_destroy(dak_gemm_ctx *ctx);
uint32_t dak_gemm_ctx_sms(const dak_gemm_ctx *ctx);
/* dak_gemm_a_group_rows for this context's GPU (its SMs and shared memory). */
uint32_t dak_gemm_ctx_a_group_rows(const dak_gemm_ctx *ctx, uint32_t M, uint32_t K, uint32_t N,
                                   const dak_gemm_opts *o);
/* Diagnostic: after a device sync, how many of the context's per-tile split-K counters are not zero (every launch
 * must leave them so; a leftover makes a later launch's fix-up wait on a count it never reaches), and the first
 * such counter's index and value (*first_index UINT32_MAX when none). */
int dak_gemm_ctx_counters(dak_gemm_ctx *ctx, size_t *nonzero, uint32_t *first_index, uint32_t *first_value,
                          cm_err *err);

/* A prepared launch: plan and tensor maps, so that launching costs no host work. */
typedef struct dak_gemm_launch dak_gemm_launch;

/* Plans C = A B for N columns (B and C as at the top of this file: K x N bf16 and M x N, fp32 or bf16 with
 * o->out_bf16) and encodes the tensor maps.  Refused with a message: bad options (dak_gemm_plan_make), and B, C or
 * A's tiers smaller than the GEMM reads or writes, measured from each pointer to the end of the allocation holding
 * it (the driver's cuMemGetAddressRange; where that call fails for a pointer, its size goes unchecked).  A write
 * past C can land in the context's split-K counters and hang a later launch. */
int dak_gemm_prepare(dak_gemm_ctx *ctx, const dak_tiered *A, const uint16_t *B, void *C,
                     uint32_t N, const dak_gemm_opts *o, dak_gemm_launch **out, cm_err *err);
const dak_gemm_plan *dak_gemm_launch_plan(const dak_gemm_launch *l);
/* Enqueues the kernel on `stream` (a cudaStream_t; NULL for the default stream).  With the
 * panel path: a zeroing memset of the accumulator, the panel kernel on a second stream
 * forked from and joined back into `stream` (by events; directly on `stream` when there
 * are no HBM rows), the tiled kernel for the HBM rows on `stream`, and for bf16 C a
 * conversion kernel. */
int dak_gemm_run(dak_gemm_launch *l, void *stream, cm_err *err);
void dak_gemm_launch_free(dak_gemm_launch *l);
/* Host bytes the kernel's copies requested since the launch was prepared (counted on the GPU). */
int dak_gemm_host_bytes(dak_gemm_launch *l, uint64_t *bytes, cm_err *err);

/* Per-CTA %globaltimer stamps (ns) of the last run of a launch prepared with diag_times:
 * DAK_GEMM_NTIMES words per CTA, CTA-major: entry, first copy issued after griddepcontrol.wait
 * (the first copy without pdl), griddepcontrol.wait returned (0 without pdl), first ring slot full,
 * last ring slot full, exit, the CTA's %smid (not a time), in the epilogue of its last tile (0 where
 * there is none): its math done, the split-K fix-up's wait passed (the others' partials published),
 * the fix-up's adds done; the producer's start (barriers initialised), its first segment computed
 * (static split); and a host CTA's hand-over gate passed (pdl; else 0).  t holds n words; fails when
 * n < grid x DAK_GEMM_NTIMES or diag_times was off. */
#define DAK_GEMM_NTIMES 13u
int dak_gemm_times(dak_gemm_launch *l, uint64_t *t, size_t n, uint32_t *ctas, cm_err *err);

/* Diagnostic: an empty kernel of `grid` CTAs x 288 threads with `smem` bytes of dynamic
 * shared memory (the launch floor of the split kernel's configuration). */
int dak_diag_empty(dak_gemm_ctx *ctx, uint32_t grid, uint32_t smem, void *stream, cm_err *err);

/* Diagnostic: the streaming floor.  A kernel of `ctas` CTAs that only streams `bytes` of HBM at `a` into shared
 * memory (one contiguous range a CTA, 32 KiB bulk copies, 192 KiB in flight, the data discarded); with pdl launched as
 * a programmatic dependent that issues its first ring before griddepcontrol.wait.  What any kernel that must read A
 * costs a launch, and in a chain of launches (the split GEMM's r = 0 bound is A's bytes / B_g).  The other options add
 * a GEMM's own costs one at a time, to find which of them a chain of GEMMs pays. */
#define DAK_STREAM_B_BYTES 4096u /* one ring slot's B rows at N <= 8 (8 columns x 256 of K, bf16) */
#define DAK_STREAM_CHUNK 32768u  /* bytes of A a copy; at least one a CTA */
typedef struct {
    uint32_t ctas;    /* CTAs, one contiguous range each (1..SMs) */
    int pdl;          /* a programmatic dependent: the first ring before griddepcontrol.wait */
    int b_copy;       /* after the wait, DAK_STREAM_B_BYTES of b by one bulk copy, landed before any more A */
    size_t b_bytes;   /* the bytes at b (b_copy needs DAK_STREAM_B_BYTES) */
    uint32_t pre_ns;  /* a prologue: spin this long after the barriers' set-up, before the first copy */
    uint32_t post_ns; /* a tail: spin this long after the last copy landed, before the exit */
} dak_stream_floor_opts;
/* Whether dak_diag_stream takes these sizes: a DAK_STREAM_CHUNK copy of A for every CTA and, with b_copy,
 * DAK_STREAM_B_BYTES of B (a tiny shape has less; the bench leaves the floor out there). */
static inline int dak_stream_floor_fits(size_t a_bytes, const dak_stream_floor_opts *o)
{
    return a_bytes >= (size_t)DAK_STREAM_CHUNK * o->ctas && (!o->b_copy || o->b_bytes >= DAK_STREAM_B_BYTES);
}
int dak_diag_stream(dak_gemm_ctx *ctx, const void *a, size_t bytes, const void *b, const dak_stream_floor_opts *o,
                    void *stream, cm_err *err);

/* One-shot convenience: prepare, run, synchronise, free. */
int dak_gemm_split(dak_gemm_ctx *ctx, const dak_tiered *A, const uint16_t *B, void *C, uint32_t N,
                   const dak_gemm_opts *o, cm_err *err);

/* ---- baselines and helpers (device pointers unless stated) ------------------ */

/* cuBLAS bf16 GEMM with all of A (M x K row-major) in HBM; C fp32 column-major. */
int dak_base_cublas(dak_gemm_ctx *ctx, const uint16_t *A_dev, const uint16_t *B, float *C,
                    uint32_t M, uint32_t N, uint32_t K, void *stream, cm_err *err);

/* Prefetch: cudaMemcpyAsync of the host rows into the first rows of stage (M x K in
 * HBM whose other rows already hold A's HBM part), then cuBLAS on stage. */
int dak_base_prefetch(dak_gemm_ctx *ctx, const dak_tiered *A, uint16_t *stage, const uint16_t *B,
                      float *C, uint32_t N, void *stream, cm_err *err);

/* Double-buffered prefetch over a sequence of `layers` GEMMs (FlexGen-style): the copy
 * for GEMM i+1 (into stage[(i+1)%2]) overlaps GEMM i.  Both stages must hold A's HBM
 * rows.  Enqueued on `stream` plus an internal copy stream; returns after enqueueing. */
int dak_base_prefetch_overlap(dak_gemm_ctx *ctx, const dak_tiered *A, uint16_t *stage[2],
                              const uint16_t *B, float *C, uint32_t N, uint32_t layers,
                              void *stream, cm_err *err);

/* Naive zero-copy: plain loads from the mapped host pointer (host rows) and from HBM,
 * one warp per row, 8 columns per pass; C fp32. */
int dak_base_naive(const dak_tiered *A, const uint16_t *B, float *C, uint32_t N, void *stream,
                   cm_err *err);

/* fp32 reference on CUDA cores (no tensor cores): C = A B from a full HBM copy of A. */
int dak_ref_gemm(const uint16_t *A_dev, const uint16_t *B, float *C, uint32_t M, uint32_t N,
                 uint32_t K, void *stream, cm_err *err);

/* Fills n bf16 values with hash(seed, i) uniform in [-1, 1). */
int dak_fill_random_bf16(uint16_t *p, size_t n, uint64_t seed, void *stream, cm_err *err);
/* Fills n 32-bit words with `word` (poison). */
int dak_fill_u32(void *p, size_t n, uint32_t word, void *stream, cm_err *err);
/* Reads `bytes` of a large HBM buffer so that the L2 holds none of the next operands. */
int dak_l2_flush(dak_gemm_ctx *ctx, void *stream, cm_err *err);

/* Bandwidth probe (congestion sweep, Fig. 7): host_ctas CTAs read host_bytes of pinned
 * mapped memory with `window` 16 KiB bulk copies in flight each, while hbm_ctas CTAs read
 * HBM (hbm_bytes, cycled) until the host readers finish (or one pass when host_ctas == 0).
 * Reports each side's bandwidth in GB/s (0 for an empty side). */
int dak_probe_bw(dak_gemm_ctx *ctx, const void *host_dev, size_t host_bytes, uint32_t host_ctas,
                 uint32_t window, const void *hbm, size_t hbm_bytes, uint32_t hbm_ctas,
                 double *host_gbs, double *hbm_gbs, cm_err *err);

/* HBM read probe (diagnostic): `ctas` CTAs read `bytes` once with `chunk`-byte bulk copies
 * (8192, 16384 or 32768; 192 KiB in flight per CTA), either interleaved (CTA j takes chunks
 * j, j + ctas, ... : one moving window, as in dak_probe_bw) or contiguous (CTA j takes one
 * contiguous range, the access pattern of the split GEMM's even split). */
int dak_probe_hbm(dak_gemm_ctx *ctx, const void *hbm, size_t bytes, uint32_t ctas, uint32_t chunk,
                  int contiguous, double *gbs, cm_err *err);

/* The same contiguous read with the split kernel's ring hand-over and no math (diagnostic: what a ring slot costs
 * beyond its bytes): cwarps (1..8) consumer warps wait for each slot's full barrier, on every lane or (lane0) on
 * lane 0 then __syncwarp, and arrive on its empty barrier, which the one producer thread waits for before reusing
 * the slot; cwarps 0 is dak_probe_hbm (the producer waits for the slot's copy itself).  192 KiB of slots a CTA. */
int dak_probe_handover(dak_gemm_ctx *ctx, const void *hbm, size_t bytes, uint32_t ctas, uint32_t chunk,
                       uint32_t cwarps, int lane0, double *gbs, cm_err *err);

/* Per-SM HBM streaming (diagnostic: do the SMs get unequal, and stable, shares of HBM?): one
 * CTA per SM reads one contiguous range of `bytes` with 32 KiB bulk copies (192 KiB in flight).
 * weights NULL: even ranges, CTA j taking range (j + rotate) mod SMs; else ranges in proportion
 * to weights[%smid] (nsm entries; an SM without a weight reads nothing).  Writes each CTA's %smid
 * and its streaming time in us (sms entries each) and the GB/s over the whole span. */
int dak_probe_hbm_sms(dak_gemm_ctx *ctx, const void *hbm, size_t bytes, const double *weights, uint32_t nsm,
                      uint32_t rotate, uint32_t *smid, double *us, double *gbs, cm_err *err);

#ifdef __cplusplus
}
#endif

#endif
