/* Launch planning for the split GEMM (pure C, runs and is tested without a GPU):
 * tier split from a ratio, ring depth, CTAs per tier, K split and wave alignment. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dak/gemm.h"
#include "dak/gemm_layout.h"
#include "dak/tiered.h"

#define TILE 64u
#define MAX_STAGES 24u
#define WS_CAP_BYTES (2048ull << 20)          /* split-K workspace cap */
#define PARTIAL_BYTES (TILE * TILE * 4ull)    /* one fp32 64x64 partial tile */
/* Congestion control (Sec. 4.3.1): host SMs x window x copy size in flight kept at
 * about 1 MiB; the congestion sweep on the H200 (docs/perf/dak-gemm.md) showed the
 * HBM readers losing bandwidth from about 2 MiB in flight to host memory, while
 * 2 SMs x 8 copies (128 KiB) already saturate the PCIe link. */
#define HOST_INFLIGHT_BYTES (1u << 20)
#define HOST_MIN_CTAS 4u
/* Host SMs under PDL where the host link binds (host_binds), at least: in PDL graphs at r = 1.74-1.79 %, N 1 / 8 / 64,
 * 12 host SMs ran a GEMM 1.3-2 us (4-5 %) faster than 4 on 7168^2 and 11008 x 4096 and ~1 us (0.7 %) on 28672 x 7168,
 * never slower from there up to r = 3.6 %, within +-2 % at N 128-512 (where the panel path, without PDL, is the
 * default); where HBM binds they cost 0.2-0.5 us, and without PDL ~1 % (NOTES-dak-kernels.md, fourteenth session,
 * "Host SMs where the link binds, under PDL") */
#define HOST_BOUND_CTAS 12u
/* Copies of A an HBM CTA issues before the PDL wait where opts.pdl_pre is auto and its slots are 128 rows (N 33..64):
 * 3 of the 4-slot ring.  The B rows after the wait then queue behind less A: PDL graphs 1-1.5 % faster at N = 64 on
 * 7168^2, 11008 x 4096 and 28672 x 7168 on the H200, and at N = 32 before consume_narrow_offs; at N <= 8 every count
 * below the ring lost 1.2-1.9 us, at N = 16-32 (64-row slots) it was neutral or worse once the consumers kept up
 * (NOTES-dak-kernels.md, fifteenth session) */
#define PDL_PRE_TALL 3u
/* HBM copies in flight per SM where opts.hbm_window is auto and applies (N <= 8, no PDL): 3 of the 64-row ring's
 * slots (measured against a ring of 5; 2 was slower at N = 1 on 11008 x 4096; twelfth session) */
#define HBM_WINDOW_AUTO 3u
/* ... and on the 64-row tiles of k_split_nn (N 9-32), with or without PDL: 2 of the 4-5 slot ring, which still fills
 * whole before the PDL wait.  The consumers hold a slot, so a window of 3 changed nothing there; 2 evens the SMs'
 * HBM shares out (7168^2, N = 24: last-slot spread 4.1 -> 2.3 us) while the prefetch keeps its depth: on the H200
 * PDL graphs 0.25-0.45 us a GEMM faster on 7168^2 (N 16-32), 0.4-0.8 % on 28672 x 7168, 0.1 us on 11008 x 4096 at
 * N 24-32; without PDL 0.7-1.3 us (NOTES-dak-kernels.md, twenty-ninth session).  A ring of 3 slots gave the second
 * and lost the prefetch (PDL neutral) */
#define HBM_WINDOW_NN 2u
/* The B box of N rounded up to 8 rows at N 33..56 (opts.bnw) leaves room for a fifth 128-row slot at N 33-48; the
 * ring keeps 4, as with the 64-row box: on the H200 the fifth made 7168^2 N 40 / 48 0.4-0.5 us slower as PDL graphs
 * and 28672 x 7168 0.8-1.9 % (its deeper queues make some SMs late: last-slot spread 3.65 against 2.1-2.3 us), where
 * 4 slots of the narrower box took 0.1-0.6 us off every N 33-48 on the three shapes against the 64-row box, and
 * 1.5-3.3 at N 33-35 (NOTES-dak-kernels.md, thirtieth session) */
#define BNW_SLOTS 4u
/* 64-row whole tiles at N 33..40 (plan: wide64) only where K is long: a tile's epilogue (the K-half hand-over, C's
 * store) comes once per 64 rows of K / 256 slots.  On the H200 at K = 7168 they were 2-4 % faster than 128-row tiles
 * (7168^2, 28672 x 7168), at K = 4096 3.3-3.8 % slower (16384 x 4096, whose 128-row tiles come one a CTA), equal on
 * 4096 x 4096 and 4096 x 11008 (thirtieth session) */
#define WIDE64_MIN_K 7168u
/* k_whole auto (opts.whole 2) with 64-row tiles filling 45-80 % of the SMs: only up to this N and K (whole_plan) */
#define WHOLE_NARROW_N 32u
#define WHOLE_NARROW_MAX_K 4096u
/* k_whole's auto cluster (opts.whole_cluster 0): 4 CTAs sharing each B stage by multicast where K > WHOLE_CL_ALL_K
 * (every N), N >= WHOLE_CL_MIN_N, or N >= WHOLE_CL_FILLS_MIN_N where the tiles fill 80 % of the SMs, else none.  The
 * last since k_whole's members leave without a cluster barrier at the end (thirty-fifth session, PDL graphs, two
 * rounds): 7168^2 with clusters of 4 -0.2 to -0.3 us at N 25 and 32, -0.6 at 40, +-0.1 at N 17-24, +0.1 to +0.3 at
 * N 1-16; 4096^2 (64 tiles, the narrow band) +1.0 to +1.2 us at every N 1-32.  Before (the thirty-third session,
 * "Clusters of 4"): 7168 x 28672 92.4-95.2 us at every N 1..64 against 94.5-104.3 without multicast and 95.3-101.8
 * for the split (112 CTAs each reading all of B from L2 double L2's traffic at N = 64); 7168^2 -0.6 to -3.1 % at N
 * 41-64, within +-0.6 % at N 33-40, +3.3 % at N 16 (the cluster's start and the members' coupling cost more than
 * L2's savings on a 25 us kernel); clusters of 2 slower than 1 and 4 at every N.  Without multicast, k_whole at
 * K > WHOLE_CL_ALL_K and N > 8 gains at most 1.6 % on the split at N 12-40 and loses 3.4-5.5 % at N 48-64 (7168 x
 * 28672): the auto plan (opts.whole 2) keeps the split there unless the cluster is 4 */
#define WHOLE_CLUSTER_AUTO 4u
#define WHOLE_CL_ALL_K 8192u
#define WHOLE_CL_MIN_N 41u
#define WHOLE_CL_FILLS_MIN_N 25u
/* k_whole's stages of A in flight per CTA after the PDL wait (opts.whole_window 0): with the whole ring (12 stages,
 * 192 KiB at N 8) some SMs drew more than their share of HBM and others finished up to 20 us late in an engine's
 * step (dak decode OPT-30B b8, o_proj); 4 (64 KiB of A a CTA, 7 MiB over 112) evened them: 7168 x 28672 N 1 / 8
 * -6.3 / -6.9 % against the split (the ring: -1.4 / -1.2 %), 7168^2 within +-1.2 % of the ring, OPT-30B b8 -1.0 % a
 * token (thirty-second session, NOTES-dak-kernels.md) */
#define WHOLE_WINDOW_AUTO 4u
/* k_whole_sw (opts.whole_swap): the shared memory left past the ring (the wgmma reads 64 B rows of a block, N of which
 * are the stage's; the last stage's reach past it), and the bytes of A in flight a CTA of the auto window */
#define SWAP_TAIL 8192u
#define SWAP_WINDOW_BYTES 65536u
/* k_whole_sw auto (opts.whole_swap 0): only where a CTA's R rows exceed this, so that each warpgroup takes half of
 * them.  On the H200 (thirty-fourth session, NOTES-dak-kernels.md) 22016 x 4096 (R 168) ran 2.4-7 % under the split
 * at N 1-64 as PDL graphs (42.1-43.0 us, ~100 % of the bound), while every R <= 128 ran 10-50 % over the defaults:
 * rows that do not fill the packed layout's 64-row boxes come as pieces of its 8 KiB blocks, and smaller copies
 * stream slower (R 64 on 7168^2, whole boxes: +14 % against k_whole in 8 KiB copies, still +4-5 % in one 16 KiB copy a
 * stage, thirty-fifth session) */
#define WHOLE_SW_AUTO_MIN_ROWS 128u
/* A packed in groups of k_whole_sw's R rows (dak_gemm_a_group_rows, opts.a_group_rows): a CTA's stage is then one
 * contiguous copy of kstep x R rows.  Auto (whole_swap 0) where R exceeds this and is not a multiple of 64 (64-row
 * tiles then split evenly, R / 64 a CTA, and the split streams ~4 % faster than k_whole_sw: 16384 x 4096, R 128,
 * 31.5-33.7 us against 32.9-33.8 in groups).  On the H200 (thirty-sixth session, PDL graphs, N 1-64, against the
 * default plan): 11008 x 4096 (R 88) -0.65 to -1.5 us at N 24-64, +0.2 to +0.5 at N 1-8; 12288 x 4096 (R 96) 0 to
 * -1.9; 22016 x 4096 (R 168, k_whole_sw on pieces of boxes before) -1.6 to -1.8; 32000 x 4096 (R 248) -0.7 to -1.3;
 * 21504 x 7168 (R 168) -3.9 to -4.3; 28672 x 7168 (R 224) -0.7 to -1.4.  At R <= 64 k_whole's or the split's tiles
 * stay: 7168^2 (R 56) +1.5 to +1.8 us, 7168 x 28672 +0.9 to +5.4, 4096^2 (R 32) +0.2 to +0.5 at N 1-32; only
 * 4096 x 11008 (R 32) gains, -1.1 to -1.5 at N 1-32 (+7.3 at N 64) */
#define WHOLE_SW_GROUP_MIN_ROWS 64u
/* Panel path (gemm_panel.cu): shared memory besides the panel buffers and the B ring:
 * 1024 B alignment slack, 1024 B of mbarriers, the 64 x 68 fp32 staging tile of the
 * epilogue (columns padded to 68 floats: conflict-free fragment writes). */
#define PANEL_FIXED (1024u + 1024u + 64u * 68u * 4u)
#define PANEL_MAX_BLOCKS 16u
#define PANEL_MAX_BSTAGES 8u
#define PANEL_AUTO_BLOCKS 8u  /* 64 KiB panels: two of them and a 5-slot B ring fit in 227 KiB */
#define PANEL_AUTO_CLUSTER 8u

int dak_tiered_rows_for_ratio(uint32_t M, uint32_t tile_rows, double ratio, uint32_t *rows_host,
                              cm_err *err)
{
    if (tile_rows == 0) return cm_fail(err, "tiered: tile rows must be > 0");
    if (M == 0 || M % tile_rows)
        return cm_fail(err, "tiered: M = %u must be a positive multiple of the tile rows (%u)", M,
                       tile_rows);
    if (!isfinite(ratio) || ratio < 0.0 || ratio > 1.0)
        return cm_fail(err, "tiered: offload ratio %g outside [0, 1]", ratio);
    uint32_t tiles = M / tile_rows;
    double h = floor(ratio * (double)tiles + 0.5);
    if (h > (double)tiles) h = (double)tiles;
    *rows_host = (uint32_t)h * tile_rows;
    return 0;
}

void dak_gemm_opts_default(dak_gemm_opts *o)
{
    o->host_ctas = 0;
    o->hbm_ctas = 0;
    o->window = 0;
    o->stages = 0;
    o->cluster = 1;
    o->wave_align = 1;
    o->tile_align = 1;
    o->out_bf16 = 0;
    o->a_tma2d = 0;
    o->kstep = 0;
    o->diag_nomath = 0;
    o->diag_noload = 0;
    o->diag_nob = 0;
    o->diag_prod2 = 0;
    o->diag_b_nmajor = 0;
    o->diag_plain_launch = 0;
    o->bn8 = 1;
    o->bn24 = 1;
    o->bnw = 1;
    o->pdl = 0;
    o->diag_pdl_host_wait = 0;
    o->diag_panel_fork = 0;
    o->diag_fixup_atomic = 0;
    o->diag_nofixup = 0;
    o->diag_times = 0;
    o->diag_epi_global = 0;
    o->diag_rotate = 0;
    o->l2_hints = 1;
    o->fix_rs = 1;
    o->dyn = 0;
    o->dyn_slots = 0;
    o->hbm_window = 0;
    o->pdl_pre = 0;
    o->stash = DAK_STASH_MAX;
    o->panel = 2; /* auto: measured faster than the tiled host tier wherever it turns on (dak-gemm.md) */
    o->panel_cluster = 0;
    o->panel_blocks = 0;
    o->wgmma = 2; /* auto: 1.06-1.10x at N = 64, 1.08x at N = 128-512 on the H200 (dak-gemm.md) */
    o->bm = 0;    /* auto: 128-row HBM tiles where N > 32 (B read once per 128 rows) */
    o->bn = 0;    /* auto: HBM column tiles as wide as N (up to 256) with 128-row tiles (A read once per bn columns) */
    o->whole = 2; /* auto: 7168^2 2.6-5.6 % under the split at every N 1..64 as PDL graphs on the H200, OPT-30B b8
                   * -0.9 % a token (whole_plan; NOTES-dak-kernels.md, thirty-second session) */
    o->whole_cluster = 0;
    o->whole_stages = 0;
    o->whole_window = 0;
    o->whole_swap = 0;
    o->a_group_rows = 0;
}

static uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

/* Tile alignment of a tier with fewer than two tiles a CTA (the paper's kernel alignment, Sec. 6.2:
 * tiles divisible over the SMs): the largest CTA count, among those keeping >= 80 % of `cl`, that
 * divides the tiles or that the tiles divide, so that every tile is split into whole equal shares
 * and no CTA holds the ends of two tiles (fewer, larger split-K fix-ups).  H200, r = 0
 * (dak-gemm.md "Tile alignment"): 7168^2 132 -> 112 CTAs, 1.05-1.15x at N = 1..64.  With `shared`
 * only counts with several CTAs a tile qualify: where the math binds (wgmma tiles, N > 64), a count
 * that gives each CTA one whole tile or more leaves up to 20 % of the SMs idle to save fix-ups that
 * such large shares hardly feel (28672x7168 N = 128 / 256: 112 -> 132 CTAs 1.04-1.07x; 7168^2 N = 128
 * with 4 CTAs a tile stays aligned, 1.11x over all SMs; dak-gemm.md "Ninth session"). */
static uint32_t tile_aligned(uint32_t tiles, uint32_t cl, int shared)
{
    if (tiles >= 2u * cl) return cl;
    for (uint32_t k = cl; k > 0 && 5u * k >= 4u * cl; k--) {
        const int several_a_tile = k > tiles && k % tiles == 0;
        if (several_a_tile || (!shared && (k % tiles == 0 || tiles % k == 0))) return k;
    }
    return cl;
}

/* 64-row tiles that split raggedly over cl CTAs even under tile alignment: fewer than two a CTA, and no CTA count
 * that tile_aligned would pick divides them or is divided by them. */
static int ragged_tiles(uint32_t tiles, uint32_t cl)
{
    if (!tiles || !cl || tiles >= 2u * cl) return 0;
    const uint32_t k = tile_aligned(tiles, cl, 0);
    return k % tiles != 0 && tiles % k != 0;
}

/* Tiles of an even split over cl CTAs (T chunks, kchunks a tile) that are shared in whole shares:
 * the first contributor's range starts with the tile and the last one's ends with it (the test of
 * seg_next in gemm_split.cu, which sums them by reduce-scatter).  Once per range end on a tile
 * boundary. */
static uint32_t rs_tiles(uint32_t T, uint32_t cl, uint32_t kchunks)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < cl; k++) {
        const uint32_t e = dak_rng_start(k + 1u, T, cl); /* range k ends at e */
        if (e % kchunks == 0 && dak_rng_whole_shares(e - kchunks, e, T, cl)) n++;
    }
    return n;
}

/* Wave alignment on: the tier's mtiles x ngroups x kchunks chunks are split evenly
 * over all its clusters (contiguous ranges, so a CTA's range crosses at most a few
 * tiles and a tile is shared by at most ksplit CTAs).  Off: whole tiles, split in K
 * only as far as needed to give every cluster one, go round-robin.  tile_align: 0 off, 1 on, 2 on with
 * several CTAs a tile only (tile_aligned's `shared`). */
static void plan_tier(uint32_t mtiles, uint32_t ngroups, uint32_t kchunks, uint32_t ctas_avail,
                      uint32_t c, int align, int tile_align, dak_tier_plan *t)
{
    t->mtiles = mtiles;
    t->ngroups = ngroups;
    t->even = 0;
    t->ctas = t->ksplit = t->items = t->waves = t->chunks = t->rs_tiles = 0;
    t->balance = 1.0;
    if (mtiles == 0 || ctas_avail < c) return;
    uint32_t cl = ctas_avail / c;
    uint32_t base = mtiles * ngroups;
    if (align && tile_align) cl = tile_aligned(base, cl, tile_align == 2);
    if (align) {
        uint64_t T = (uint64_t)base * kchunks;
        if (cl > T) cl = (uint32_t)T;
        t->even = 1;
        t->items = (uint32_t)T;
        t->waves = 1;
        t->chunks = (uint32_t)((T + cl - 1) / cl);
        uint64_t fq = T / cl; /* every range holds fq or fq + 1 chunks */
        uint64_t maxc = (kchunks + fq - 1) / fq + 2;
        t->ksplit = (uint32_t)(maxc < cl ? maxc : cl);
        t->balance = ((double)T / cl) / t->chunks;
        t->rs_tiles = c == 1 ? rs_tiles((uint32_t)T, cl, kchunks) : 0;
    } else {
        uint32_t ks = ceil_div(cl, base);
        if (ks > kchunks) ks = kchunks;
        uint32_t items = base * ks;
        if (cl > items) cl = items;
        t->ksplit = ks;
        t->items = items;
        t->waves = ceil_div(items, cl);
        t->chunks = ceil_div(kchunks, ks);
        t->balance = (double)base * (double)kchunks / ((double)cl * t->waves * t->chunks);
    }
    t->ctas = cl * c;
}

/* The panel kernel's clusters (auto): it runs beside the tiled kernel, so the SMs are split between the two
 * by their estimated times: the panel's ceil(units / k) units of 64 x (pblocks x 64) x N MACs at PANEL_RHO
 * times the tiled kernel's cost per MAC on one cluster, but no faster than the host link; the HBM rows'
 * MACs over the SMs left, but no faster than HBM.  Taking the host rows' share of the SMs (the rule before)
 * left one cluster of 8 at r = 5 %, N = 512, computing 5x slower per SM than the tiled kernel (0.8 against
 * 3.9 TFLOP/s an SM on the H200): 0.2-0.3x the overlap baseline (dak-gemm.md "The panel kernel's SMs").
 * The best estimate from k_min up (the fewest clusters within 2 % of it), taken only where it cuts the
 * estimate at k_min to PANEL_GAIN: the estimate ignores how the tiles quantise over the SMs left (an
 * estimated 13 % at r = 1.7 %, N = 1024 measured 0.68x). */
#define PANEL_RHO 4.5  /* panel / tiled time per MAC an SM (H200, N = 512-1024, fitted in the eighth session) */
#define EST_MAC_SM 1.97e12 /* the tiled wgmma kernel's MAC/s an SM at N >= 512 (H200) */
#define EST_B_G 4.25e12    /* HBM bytes/s (H200, the bench's probe) */
#define EST_B_H 51e9       /* host link bytes/s (PCIe Gen5, TMA) */
#define PANEL_GAIN 0.85    /* more clusters than k_min must cut the estimated time to this fraction */
static uint32_t panel_clusters(const dak_panel_plan *q, uint32_t M, uint32_t N, uint32_t K, uint32_t rows_host,
                               uint32_t sm_count, uint32_t c, uint32_t k_min)
{
    const double unit = (double)TILE * q->pblocks * TILE * N * PANEL_RHO / (q->cluster * EST_MAC_SM);
    const double rows_g = (double)(M - rows_host), t_link = (double)rows_host * K * 2.0 / EST_B_H;
    const double mac_g = rows_g * K * N / EST_MAC_SM, t_hbm = rows_g * K * 2.0 / EST_B_G;
    uint32_t best = k_min;
    double tbest = INFINITY, tmin = INFINITY;
    for (uint32_t k = k_min; k <= q->units && k * q->cluster + (rows_g > 0 ? c : 0) <= sm_count; k++) {
        const double th = fmax((double)((q->units + k - 1) / k) * unit, t_link);
        const double tg = rows_g > 0 ? fmax(mac_g / (sm_count - k * q->cluster), t_hbm) : 0.0;
        const double t = fmax(th, tg);
        if (k == k_min) tmin = t;
        if (t < 0.98 * tbest) tbest = t, best = k;
    }
    return tbest < PANEL_GAIN * tmin ? best : k_min;
}

/* The panel kernel's shape (cluster, piece, panel width, B ring) for p's N and K; the CTAs,
 * units per cluster and window are filled in once the host SMs are known. */
static int panel_plan(dak_gemm_plan *p, const dak_gemm_opts *o, uint32_t kblocks, size_t smem_bytes, cm_err *err)
{
    dak_panel_plan *q = &p->panel;
    uint32_t c = o->panel_cluster ? o->panel_cluster : PANEL_AUTO_CLUSTER;
    while (c > 1 && c / 2 >= p->ntiles) c /= 2; /* members without a column tile would only load */
    uint32_t pb = o->panel_blocks ? o->panel_blocks : PANEL_AUTO_BLOCKS;
    if (pb > kblocks) pb = kblocks;
    uint32_t ks = kblocks % 2u == 0 && pb % 2u == 0 ? 2u : 1u;
    size_t bslot = (size_t)ks * p->bn_box * 128u;
    uint32_t bst = 0;
    for (;;) {
        size_t used = PANEL_FIXED + 2ull * pb * (TILE * TILE * 2u);
        bst = smem_bytes > used ? (uint32_t)((smem_bytes - used) / bslot) : 0;
        if (bst >= 2 || o->panel_blocks || pb <= ks) break;
        pb -= ks; /* auto: a narrower panel */
    }
    if (bst < 2)
        return cm_fail(err, "gemm: panel of %u blocks (2 x %u KiB) leaves room for %u B ring slots in %zu bytes of "
                            "shared memory, need 2",
                       pb, pb * 8u, bst, smem_bytes);
    if (bst > PANEL_MAX_BSTAGES) bst = PANEL_MAX_BSTAGES;
    q->on = 1;
    q->cluster = c;
    q->kstep = ks;
    q->pblocks = pb;
    q->npanels = ceil_div(kblocks, pb);
    q->units = (p->rows_host / TILE) * q->npanels;
    q->bstages = bst;
    q->smem_bytes = (uint32_t)(PANEL_FIXED + 2ull * pb * (TILE * TILE * 2u) + bst * bslot);
    return 0;
}

/* Which offsets kernel the HBM tier will run at N 9..32 (B as [block][n][64], no dynamic units): 1 k_split_nn (64-row
 * tiles), 2 k_split_nn2 (128-row), 0 neither; what split_kernel_of names at the end, known once the tile height is.
 * The HBM window and the 24-row B box depend on it */
static uint32_t hbm_offsets_kernel(const dak_gemm_plan *p, uint32_t N, const dak_gemm_opts *o)
{
    return N > 8u && N <= 32u && !o->diag_b_nmajor && !o->dyn && p->bm <= 2u * TILE ? p->bm / TILE : 0u;
}

/* k_whole_sw's rows a CTA where none are asked: the multiple of 8 at or above M / SMs */
static uint32_t swap_rows(uint32_t M, uint32_t sm_count) { return ceil_div(ceil_div(M, 8u), sm_count) * 8u; }

/* The ring of whole_plan and swap_plan: stages of `stage` bytes in smem_bytes less the base and `tail`, at most 24, or
 * whole_stages where asked (-1 with a message where they do not fit; 0 stages where not even one does). */
static int whole_ring(const dak_gemm_opts *o, size_t smem_bytes, uint32_t stage, uint32_t tail, uint32_t *fit,
                      cm_err *err)
{
    *fit = smem_bytes < DAK_GEMM_SMEM_BASE + tail ? 0u : (uint32_t)((smem_bytes - DAK_GEMM_SMEM_BASE - tail) / stage);
    if (*fit > MAX_STAGES) *fit = MAX_STAGES;
    if (o->whole_stages) { /* (opts.stages, the split kernels' ring, does not apply: a caller that caps those, e.g. the
                            * engine's gemm_stages, would leave whole-K tiles too few bytes in flight) */
        if (o->whole_stages > *fit)
            return cm_fail(err, "gemm: %u whole-K stages do not fit in %zu bytes of shared memory", o->whole_stages,
                           smem_bytes);
        *fit = o->whole_stages;
    }
    return 0;
}

/* The plan fields whole_plan and swap_plan share: `ctas` CTAs of bm rows over the whole K (kernel), `fit` stages of
 * kstep blocks (`stage` bytes each, `tail` bytes past the ring), B's stage rows loaders x rows in clusters of c, with
 * pdl A's copies before the wait (the ring where pdl_pre is auto, what was asked, or none), the window whole_window or
 * win_auto stages (at most the ring). */
static void whole_fill(dak_gemm_plan *p, const dak_gemm_opts *o, uint32_t kernel, uint32_t bm, uint32_t ctas,
                       uint32_t kstep, uint32_t fit, uint32_t stage, uint32_t tail, uint32_t c, uint32_t rows,
                       uint32_t loaders, uint32_t win_auto, double balance)
{
    const uint32_t kblocks = p->K / TILE;
    p->kstep = kstep, p->kchunks = kblocks / kstep;
    p->ntiles = 1, p->cluster = c, p->ngroups = 1, p->bn = TILE;
    p->bn_box = loaders * rows, p->whole_rows = rows, p->whole_loaders = loaders;
    p->stages = p->hbm_stages = fit, p->bm = bm;
    p->ws_bytes = 0, p->dyn_p = p->dyn_units = p->dyn_first = 0, p->hbm_stash = 0;
    p->hbm_pre = !o->pdl || o->pdl_pre == DAK_GEMM_PDL_PRE_NONE ? 0 : o->pdl_pre && o->pdl_pre < fit ? o->pdl_pre : fit;
    p->smem_bytes = DAK_GEMM_SMEM_BASE + fit * stage + tail;
    p->wgmma = 1, p->kernel = kernel;
    memset(&p->host, 0, sizeof p->host);
    memset(&p->panel, 0, sizeof p->panel);
    dak_tier_plan *h = &p->hbm;
    memset(h, 0, sizeof *h);
    h->mtiles = h->ctas = h->items = ctas;
    const uint32_t win = o->whole_window ? o->whole_window : win_auto;
    h->even = 1, h->ksplit = 1, h->waves = 1, h->chunks = kblocks / kstep, h->ngroups = 1;
    h->window = win < fit ? win : fit; /* (win >= 1: asked, or the auto window) */
    h->balance = balance;
}

/* k_whole_sw's plan (opts.whole_swap), where it applies (1; else 0): R rows a CTA, the multiple of 8 at or above
 * M / SMs (at most 256), so the last CTA may hold fewer; stages of kstep blocks of A's R rows (about 16 KiB: kstep 4
 * at R <= 32, 2 at R <= 64, else 1, or opts.kstep, dividing K / 64) and their B rows (N rounded up to 8); as many as
 * fit beside 8 KiB past the ring (the wgmma reads 64 B rows of a block: see gemm_whole.cu); the window auto as many
 * stages as hold 64 KiB of A (k_whole's 4 stages of 16 KiB). */
static int swap_plan(dak_gemm_plan *p, const dak_gemm_opts *o, uint32_t R, uint32_t sm_count, size_t smem_bytes,
                     cm_err *err)
{
    const uint32_t N = p->N, kblocks = p->K / TILE;
    if (R > 4u * TILE || ceil_div(p->M, R) > sm_count) return 0;
    uint32_t kstep = o->kstep ? o->kstep : R <= 32u ? 4u : R <= 64u ? 2u : 1u;
    if (!o->kstep)
        while (kblocks % kstep) kstep /= 2u;
    if (kblocks % kstep || (kstep != 1u && kstep != 2u && kstep != 4u)) return 0;
    const uint32_t rk = ceil_div(N, 8u) * 8u, stage = kstep * (R + rk) * 128u;
    uint32_t fit;
    if (whole_ring(o, smem_bytes, stage, SWAP_TAIL, &fit, err)) return -1;
    /* at least 4 (a warpgroup holds two stages), and with R <= 128 the ring holds warpgroup 1's sums at the end */
    if (fit < 4u || (R <= 2u * TILE && (uint64_t)N * (R + 8u) * 4u > (uint64_t)fit * stage)) return 0;
    const uint32_t ctas = ceil_div(p->M, R);
    whole_fill(p, o, DAK_SPLIT_WHOLE_SW, R, ctas, kstep, fit, stage, SWAP_TAIL, 1u, rk, 1u,
               ceil_div(SWAP_WINDOW_BYTES, kstep * R * 128u), (double)p->M / ((double)ctas * R));
    return 1;
}

/* Whole-K tiles (opts.whole, k_whole): the plan when the shape and options allow it (1), else 0 and the split plan.
 * One CTA a tile of 64 rows (or 128 where 64-row tiles outnumber the SMs), kstep 64-column blocks of A and their B
 * rows a stage, as many stages as fit (whole_stages), at most `window` of A in flight after the PDL wait
 * (whole_window); with a cluster (whole_cluster) each member fetches whole_rows of every block's B rows (multiples
 * of 8 rows, the 128-byte swizzle's row group) and multicasts them to all.  The shape of the decode kernels cuBLAS
 * runs on the H200 (whole-K tiles on 88-112 CTAs, B shared in clusters of 4, 10-16 stages: NOTES-dak-kernels.md,
 * seventeenth session), with PDL: A's copies need nothing from the kernel before, only B's wait for it. */
/* Whether a whole-K kernel (k_whole, k_whole_sw) can take the shape and options at all: no host rows, N <= 64, packed
 * A, no dynamic units, wgmma, and none of the split kernel's diagnostics. */
static int whole_can(const dak_gemm_plan *p, const dak_gemm_opts *o)
{
    return !(p->rows_host || p->N > TILE || o->a_tma2d || o->dyn || o->diag_b_nmajor || o->diag_nomath ||
             o->diag_noload || o->diag_nob || o->diag_prod2 || o->wgmma == 0);
}

static int whole_plan(dak_gemm_plan *p, const dak_gemm_opts *o, uint32_t sm_count, size_t smem_bytes, cm_err *err)
{
    const uint32_t N = p->N, mt = p->M / TILE, kblocks = p->K / TILE;
    if (!whole_can(p, o)) return 0;
    /* A's rows as the wgmma's n: asked (whole_swap 2; a tile height asked is its R), or auto (0, and 3 over the tiles)
     * where R would exceed WHOLE_SW_AUTO_MIN_ROWS; not with a cluster */
    const int swap_auto = (o->whole_swap == 0u || o->whole_swap == 3u) && !o->bm &&
                          swap_rows(p->M, sm_count) > WHOLE_SW_AUTO_MIN_ROWS;
    if ((o->whole_swap == 2u || swap_auto) && o->whole_cluster <= 1u) {
        const int w = swap_plan(p, o, o->bm ? o->bm : swap_rows(p->M, sm_count), sm_count, smem_bytes, err);
        if (w) return w;
    }
    if (o->bm == 256) return 0;
    uint32_t mh = o->bm == 128 || (o->bm == 0 && mt > sm_count) ? 2u : 1u;
    const uint32_t tiles = ceil_div(mt, mh);
    if (tiles > sm_count) return 0;
    /* auto (whole 2): 64-row tiles that fill 80-100 % of the SMs, the band tile alignment keeps (7168^2: 112 tiles on
     * 132 SMs, 2.6-5.6 % faster than the split at every N 1..64 as PDL graphs on the H200), or 45-80 % of them where
     * K <= WHOLE_NARROW_MAX_K and N <= WHOLE_NARROW_N (4096^2's 64 tiles: -17 / -10 % at N 8 / 32, +3 % at N 64, with
     * the two-block stages and the window; 4096 x 11008 / 16384's 64: +12 to +17 %, 64 SMs cannot stream a long K at
     * the split's rate; thirty-third session; dak decode Llama-2-7B b8 / b32 -1.1 / -1.3 %, OPT-6.7B b1 / b8 -0.7 /
     * -1.3 % a token, thirty-fourth).  128-row tiles stay on the split (11008 x 4096's 86: 1.6-1.8 us slower) */
    const int fills = (uint64_t)tiles * 5u >= (uint64_t)sm_count * 4u, /* 80 % */
              narrow = N <= WHOLE_NARROW_N && p->K <= WHOLE_NARROW_MAX_K &&
                       (uint64_t)tiles * 20u >= (uint64_t)sm_count * 9u; /* 45 % */
    if (o->whole == 2 && !(mh == 1u && (fills || narrow))) return 0;
    uint32_t c = o->whole_cluster; /* (its value checked by dak_gemm_plan_make) */
    if (c && tiles % c)
        return cm_fail(err, "gemm: whole_cluster %u does not divide the %u whole-K tiles of %u rows", c, tiles,
                       mh * TILE);
    if (!c) /* auto */
        c = tiles % WHOLE_CLUSTER_AUTO == 0 &&
                    (p->K > WHOLE_CL_ALL_K || N >= (fills ? WHOLE_CL_FILLS_MIN_N : WHOLE_CL_MIN_N))
                ? WHOLE_CLUSTER_AUTO
                : 1u;
    if (o->whole == 2 && p->K > WHOLE_CL_ALL_K && N > 8u && c < WHOLE_CLUSTER_AUTO) return 0;
    const uint32_t brows = ceil_div(N, 8) * 8; /* the wgmma's n: N rounded up to 8 */
    const uint32_t rows = ceil_div(ceil_div(brows, c), 8) * 8, loaders = ceil_div(brows, rows);
    /* a stage: kstep 64-column blocks, each box's kstep blocks one contiguous bulk copy: opts.kstep, else 2 where it
     * divides K / 64 and leaves 4 stages (16 KiB copies streamed 7168^2 8-12 % faster than 8 KiB ones; 32 KiB ones
     * leave too few stages at N = 64: 3), else 1 */
    const uint32_t slot1 = mh * TILE * TILE * 2u + loaders * rows * 128u; /* a one-block stage */
    const uint32_t kstep = o->kstep                                                                  ? o->kstep
                           : kblocks % 2u == 0 && smem_bytes >= DAK_GEMM_SMEM_BASE + 4u * 2u * slot1 ? 2u
                                                                                                     : 1u;
    const uint32_t stage = kstep * slot1;
    uint32_t fit;
    if (whole_ring(o, smem_bytes, stage, 0u, &fit, err)) return -1;
    if (fit < (o->kstep ? 3u : 4u)) return 0; /* (a consumer warpgroup holds two stages; three run, four overlap) */
    whole_fill(p, o, DAK_SPLIT_WHOLE, mh * TILE, tiles, kstep, fit, stage, 0u, c, rows, loaders, WHOLE_WINDOW_AUTO,
               (double)mt / ((double)tiles * mh)); /* (a half last 128-row tile) */
    return 1;
}

/* A packed in groups of R = opts.a_group_rows rows: k_whole_sw with that R, or refused (nothing else reads it). */
static int group_plan(dak_gemm_plan *p, const dak_gemm_opts *o, uint32_t sm_count, size_t smem_bytes, cm_err *err)
{
    const uint32_t R = o->a_group_rows;
    if (R % 8u || R > 4u * TILE)
        return cm_fail(err, "gemm: A in groups of %u rows: expected a multiple of 8 up to 256 (0 or 64: the tiles)", R);
    if (!whole_can(p, o) || o->whole == 0 || o->whole_swap == 1 || o->whole_cluster > 1 || (o->bm && o->bm != R))
        return cm_fail(err, "gemm: A in groups of %u rows is read by k_whole_sw only: it needs all rows in HBM (%u on "
                            "the host), N <= 64 (%u), whole 1 or 2, whole_swap 0, 2 or 3, no cluster, bm 0 or %u, and "
                            "none of a_tma2d, dyn, wgmma 0 or the split kernel's diagnostics",
                       R, p->rows_host, p->N, R);
    const int w = swap_plan(p, o, R, sm_count, smem_bytes, err);
    if (w < 0) return -1;
    if (!w)
        return cm_fail(err, "gemm: A in groups of %u rows: k_whole_sw does not take M = %u, N = %u, K = %u on %u SMs "
                            "(CTAs of %u rows outnumber the SMs, or fewer than 4 stages fit)",
                       R, p->M, p->N, p->K, sm_count, R);
    return 0;
}

/* The tiled kernel's instantiation for the HBM tier's tiles (gemm.h's dak_split_kernel, in its order of
 * precedence).  The offsets consumers need B as [block][n][64]: not with diag_b_nmajor (nor where the driver
 * refuses that map, which prepare finds out). */
static uint32_t split_kernel_of(const dak_gemm_plan *p, uint32_t N, int b_nmajor)
{
    if (p->bm == 4u * TILE) return DAK_SPLIT_M256;
    if (p->bn == 256u) return DAK_SPLIT_N256;
    if (p->bn == 128u) return DAK_SPLIT_N128;
    if (p->dyn_units) return DAK_SPLIT_DYN;
    if (N > 8u && N <= 32u && !b_nmajor) return p->bm == 2u * TILE ? DAK_SPLIT_NN2 : DAK_SPLIT_NN;
    if (N <= 8u && !b_nmajor) return DAK_SPLIT_N8;
    return DAK_SPLIT;
}

int dak_gemm_plan_make(uint32_t M, uint32_t N, uint32_t K, uint32_t rows_host,
                       const dak_gemm_opts *o, uint32_t sm_count, size_t smem_bytes,
                       dak_gemm_plan *p, cm_err *err)
{
    if (M == 0 || M % TILE) return cm_fail(err, "gemm: M = %u must be a positive multiple of 64", M);
    if (K == 0 || K % TILE) return cm_fail(err, "gemm: K = %u must be a positive multiple of 64", K);
    if (N == 0) return cm_fail(err, "gemm: N must be >= 1");
    if (N > (1u << 20)) return cm_fail(err, "gemm: N = %u too large (at most 1048576)", N);
    if (rows_host > M || rows_host % TILE)
        return cm_fail(err, "gemm: host rows %u must be a multiple of 64 and <= M = %u", rows_host, M);
    if (sm_count == 0) return cm_fail(err, "gemm: SM count must be > 0");
    uint32_t c = o->cluster ? o->cluster : 1;
    if (c != 1 && c != 2 && c != 4 && c != 8)
        return cm_fail(err, "gemm: cluster size %u must be 1, 2, 4 or 8", c);
    if (o->host_ctas > sm_count || o->hbm_ctas > sm_count || o->host_ctas + o->hbm_ctas > sm_count)
        return cm_fail(err, "gemm: host CTAs %u + HBM CTAs %u exceed the %u SMs", o->host_ctas,
                       o->hbm_ctas, sm_count);
    if (o->stages > MAX_STAGES)
        return cm_fail(err, "gemm: stages %u must be <= %u", o->stages, MAX_STAGES);
    if (o->whole_stages > MAX_STAGES)
        return cm_fail(err, "gemm: whole_stages %u must be <= %u", o->whole_stages, MAX_STAGES);
    if (o->whole_window > MAX_STAGES)
        return cm_fail(err, "gemm: whole_window %u must be 0 (auto) or 1..%u", o->whole_window, MAX_STAGES);
    if (o->dyn > 1) return cm_fail(err, "gemm: dyn %u must be 0 (off) or 1 (on)", o->dyn);
    if (o->dyn_slots > 16) return cm_fail(err, "gemm: dyn_slots %u must be 0 (auto) or 1..16", o->dyn_slots);
    if (o->stash > DAK_STASH_MAX)
        return cm_fail(err, "gemm: stash %u must be 0 (off) or 1..%u (K chunks held in registers before the PDL wait)",
                       o->stash, DAK_STASH_MAX);
    if (o->pdl_pre > MAX_STAGES && o->pdl_pre != DAK_GEMM_PDL_PRE_NONE)
        return cm_fail(err,
                       "gemm: pdl_pre %u must be 0 (auto), 1..%u copies before the PDL wait or DAK_GEMM_PDL_PRE_NONE",
                       o->pdl_pre, MAX_STAGES);
    if (o->hbm_window > MAX_STAGES)
        return cm_fail(err, "gemm: hbm_window %u must be 0 (auto) or 1..%u", o->hbm_window, MAX_STAGES);
    if (o->kstep && o->kstep != 1 && o->kstep != 2 && o->kstep != 4)
        return cm_fail(err, "gemm: kstep %u must be 0 (auto), 1, 2 or 4", o->kstep);
    if (o->kstep && (K / TILE) % o->kstep)
        return cm_fail(err, "gemm: kstep %u does not divide the %u column blocks of K = %u", o->kstep,
                       K / TILE, K);
    if (o->panel > 2)
        return cm_fail(err, "gemm: panel %u must be 0 (off), 1 (on) or 2 (auto)", o->panel);
    if (o->panel_cluster && o->panel_cluster != 1 && o->panel_cluster != 2 && o->panel_cluster != 4 &&
        o->panel_cluster != 8 && o->panel_cluster != 16)
        return cm_fail(err, "gemm: panel cluster %u must be 0 (auto), 1, 2, 4, 8 or 16", o->panel_cluster);
    if (o->panel_blocks > PANEL_MAX_BLOCKS)
        return cm_fail(err, "gemm: panel blocks %u must be 0 (auto) or 1..%u (64-column blocks per panel)",
                       o->panel_blocks, PANEL_MAX_BLOCKS);
    if (o->wgmma > 2)
        return cm_fail(err, "gemm: wgmma %u must be 0 (off), 1 (on) or 2 (auto)", o->wgmma);
    if (o->wgmma == 1 && o->diag_b_nmajor)
        return cm_fail(err, "gemm: wgmma 1 needs B as [block][n][64] in shared memory (a canonical K-major "
                            "operand); diag_b_nmajor lays it out as [n][block][64]: set diag_b_nmajor 0 or wgmma 0");
    if (o->bm != 0 && o->bm != 64 && o->bm != 128 && o->bm != 256)
        return cm_fail(err, "gemm: bm %u must be 0 (auto), 64, 128 or 256 (rows of A per CTA tile of the HBM tier)",
                       o->bm);
    if (o->bm == 256 && (o->wgmma == 0 || o->diag_b_nmajor || o->dyn || (o->bn && o->bn != 128) || N <= TILE ||
                         o->cluster > 1))
        return cm_fail(err, "gemm: bm 256 needs 128-column tiles through wgmma (N > 64, bn 0 or 128, wgmma 1 or 2, "
                            "cluster 1, no dyn, no diag_b_nmajor); set bm 0 or 128");
    if (o->bn != 0 && o->bn != 64 && o->bn != 128 && o->bn != 256)
        return cm_fail(err, "gemm: bn %u must be 0 (auto), 64, 128 or 256 (columns per CTA tile of the HBM tier)",
                       o->bn);
    if (o->bn > TILE && (o->bm == TILE || o->wgmma == 0 || o->diag_b_nmajor || o->dyn))
        return cm_fail(err, "gemm: bn %u needs 128-row HBM tiles through wgmma (bm 0 or 128, wgmma 1 or 2, no dyn, "
                            "no diag_b_nmajor); set bn 0 or 64",
                       o->bn);
    if (o->diag_noload && (o->pdl || o->dyn))
        return cm_fail(err, "gemm: diag_noload runs the math alone in single launches; set pdl 0 and dyn 0");
    if (o->diag_nob && (o->pdl || o->dyn)) /* (with pdl the stash's barrier would wait for B rows never sent) */
        return cm_fail(err, "gemm: diag_nob runs A's copies alone in single launches; set pdl 0 and dyn 0");
    if (o->diag_prod2 && o->dyn) /* (the dynamic units' claims have one producer) */
        return cm_fail(err, "gemm: diag_prod2 runs two producers on the static split; set dyn 0");
    if (o->panel == 1 && o->pdl)
        return cm_fail(err, "gemm: the panel path (panel 1) does not support pdl; set pdl 0 or panel 0");
    if (o->panel == 1 && o->a_tma2d)
        return cm_fail(err, "gemm: the panel path (panel 1) needs packed A (1-D bulk copies); set a_tma2d 0");

    p->M = M, p->N = N, p->K = K, p->rows_host = rows_host;
    p->whole_rows = p->whole_loaders = 0;
    if (o->whole > 2)
        return cm_fail(err, "gemm: whole %u must be 0 (off), 1 (where it applies) or 2 (auto)", o->whole);
    if (o->whole_cluster && o->whole_cluster != 1 && o->whole_cluster != 2 && o->whole_cluster != 4)
        return cm_fail(err, "gemm: whole_cluster %u must be 0 (auto), 1, 2 or 4", o->whole_cluster);
    if (o->whole_swap > 3)
        return cm_fail(err,
                       "gemm: whole_swap %u must be 0 (auto), 1 (never), 2 (where it applies) or 3 (where k_whole does "
                       "not)", o->whole_swap);
    if (o->a_group_rows && o->a_group_rows != TILE) return group_plan(p, o, sm_count, smem_bytes, err);
    if (o->whole) {
        const int w = whole_plan(p, o, sm_count, smem_bytes, err);
        if (w) return w < 0 ? -1 : 0;
    }
    p->ntiles = ceil_div(N, TILE);
    while (c > 1 && c / 2 >= p->ntiles) c /= 2; /* a cluster wider than the column tiles is idle */
    p->cluster = c;
    p->ngroups = ceil_div(p->ntiles, c);
    /* B box: the 16 rows an ldmatrix pair covers, at most one 64-column tile; 8 rows at N <= 8 (opts.bn8, the
     * default): one more ring slot, 0-2.2 % a GEMM in PDL sequences on the H200 (twelfth session) */
    /* wgmma for the wide tiles (more than 32 valid columns: N > 32); its instruction is m64n64k16,
     * so the B box is 64 rows then (TMA zero-fills the rows past N) */
    p->wgmma = N > 32 && (o->wgmma == 1 || (o->wgmma == 2 && !o->diag_b_nmajor));
    p->bn_box = N <= 8 && o->bn8 ? 8 : (N >= TILE || p->wgmma ? TILE : ceil_div(N, 16) * 16);

    uint32_t kblocks = K / TILE, mt_h = rows_host / TILE, mt_g = (M - rows_host) / TILE;
    /* the panel path: on when asked, or (auto) when the tiled path would fetch each host tile
     * more than once (more than one column group).  Until the HBM tier had tiles as wide as N,
     * auto also asked for host rows >= 1/16 of A (at r = 2 %, N = 512 the tiled path was then
     * 347 against the panel's 252 GB/s); with them the panel path wins at every ratio measured,
     * 1.15-2.9x at r = 1.7-5.4 % and N = 128-1024 (H200, dak-gemm.md "Panel path at any
     * ratio"), and equal at N = 64 (one column group: the panel is not chosen there). */
    memset(&p->panel, 0, sizeof p->panel);
    int pon = mt_h && (o->panel == 1 || (o->panel == 2 && !o->pdl && !o->a_tma2d && p->ngroups > 1));
    if (pon && o->diag_noload)
        return cm_fail(err, "gemm: diag_noload applies to the tiled kernel only; these host rows take the panel path "
                            "(set panel 0)");
    if (pon && panel_plan(p, o, kblocks, smem_bytes, err)) return -1;
    const int host_tiled = mt_h && !pon; /* the tiled kernel has a host tier (64-row tiles) */
    /* The host link binds the launch: host rows more than 1/64 of A, the crossover of a PCIe link's share,
     * B_h / (B_h + B_g) = 1.2 % on the H200 (51 GB/s against 4.25 TB/s) */
    const int host_binds = 64ull * rows_host > M;
    uint32_t ch = c; /* cluster of the CTAs that read host rows */
    if (pon) ch = p->panel.cluster;
    uint32_t host_avail = 0;
    if (mt_h && o->host_ctas) {
        host_avail = o->host_ctas;
    } else if (mt_h) {
        /* enough SMs for the link (more under PDL where it binds), or the host tiles' share of the compute if larger */
        uint32_t share = (uint32_t)((double)sm_count * rows_host / M + 0.5);
        const uint32_t least = o->pdl && host_binds ? HOST_BOUND_CTAS : HOST_MIN_CTAS;
        host_avail = share > least ? share : least;
        if (mt_g && host_avail + c > sm_count) host_avail = sm_count - c;
        host_avail -= host_avail % ch;
        if (pon) {
            const uint32_t k_min = host_avail / ch ? host_avail / ch : 1u;
            host_avail = panel_clusters(&p->panel, M, N, K, rows_host, sm_count, c, k_min) * ch;
        }
    }
    if (host_avail > sm_count) host_avail = sm_count;
    if (mt_h && host_avail < ch) host_avail = ch;
    uint32_t hbm_avail = mt_g ? (o->hbm_ctas ? o->hbm_ctas : sm_count - host_avail) : 0;
    /* the HBM tier's CTA count is tile-aligned (opts.tile_align) unless it was asked for (hbm_ctas) or dyn units
     * run, and where the HBM rows bind the launch (!host_binds): where the host link binds, in a PDL sequence at
     * r = 1.8 %, N <= 8 the aligned count was 6.5 % slower (dak-gemm.md "Tile alignment") */
    const int aligned = o->tile_align && !o->hbm_ctas && !o->dyn && !host_binds;
    /* 128-row HBM tiles (bm): at N = 64 a 64-row slot carries as many bytes of B as of A, so
     * every SM pulls 2x A's bytes through L2 (the L2 -> SM limit, ~7.5 TB/s, not HBM, bound the
     * N = 64 streaming in run 10); 128 rows per copy of B make it 1.5x, and halve B's TMA writes
     * into shared memory at N >= 128 (each warpgroup's wgmma still reads B itself).  Auto where
     * some tile is wide (N > 32); needs two tile rows. */
    /* And at N <= 16 where wave and tile alignment are on (so the host link does not bind) but tile alignment finds
     * no aligned count for the 64-row tiles (fewer than two a CTA): 11008 x 4096 (172 tiles on 132 SMs) ran 4 %
     * faster as PDL graphs with 128-row ones (N 9..16 on k_split_nn2, r 0-1.2 %; N 1 / 8 on k_split, without the
     * PDL stash), beside 7168^2 (112 tiles, aligned: 6 % slower) and 28672 x 7168 (448: 6 % slower); at N 24 / 32
     * equal; where the link binds 0-1 % slower as graphs (sixteenth session, NOTES-dak-kernels.md "128-row tiles at
     * N <= 16").  Since the window of 2 HBM copies, also at N 17..32 (with that window): 11008 x 4096 0.15-0.45 us
     * faster as PDL graphs than its 64-row tiles (thirtieth session). */
    const int narrow128 =
        o->bm == 0 && N <= 32 && !o->diag_b_nmajor && o->wave_align && aligned && ragged_tiles(mt_g, hbm_avail / c);
    /* And 64-row tiles at N 33..40 on wgmma with the 40-row B box (opts.bnw) where they come whole (tile-aligned,
     * not ragged): B is then 0.625 x A's bytes into the SMs (1 x with the 64-row box, the eleventh session's loss),
     * and a whole-K tile a CTA has no split-K tail (3.2-3.3 us after the last slot on 128-row tiles): on the H200
     * 7168^2 27.3 against 27.8 us as PDL graphs, 28672 x 7168 97.0 against 99.5; ragged (11008 x 4096) 26.8
     * against 24.8, at N 41-48 (the 48-row box) 0.9-1.0 us slower, and at K = 4096 too (WIDE64_MIN_K; thirtieth
     * session) */
    const int wide64 = o->bm == 0 && o->bnw && N > 32 && N <= 40 && K >= WIDE64_MIN_K && p->wgmma && c == 1 && !pon &&
                       !o->diag_b_nmajor && o->wave_align && aligned && !ragged_tiles(mt_g, hbm_avail / c);
    p->bm = (o->bm >= 128 || (o->bm == 0 && N > 32 && !wide64) || narrow128) && mt_g >= 2 && !o->dyn ? 2u * TILE
                                                                                                       : TILE;
    /* 256-row tiles: B read once per 256 rows, 1.5x A's bytes into the SMs at N = 128 instead of 2x;
     * needs four tile rows, wgmma (it is the only consumer of k_split_m256) and the host rows on the
     * panel path or none (no room for the 64-row host tier's consumers).  Auto for 64 < N <= 128 (one
     * column tile of 128; H200, r = 0: 1.05-1.14x over 128 x 128, dak-gemm.md "256 x 128 tiles"); not
     * above, where 256 x 128 moves the bytes of 128 x 256 and measured 0.65-0.83x of it */
    const int bm256_auto = o->bm == 0 && N > TILE && N <= 2u * TILE && c == 1 && !host_tiled && (!o->bn || o->bn == 128) &&
                           !o->diag_b_nmajor && !o->dyn;
    if ((o->bm == 256 || bm256_auto) && mt_g >= 4 && p->wgmma) {
        if (host_tiled)
            return cm_fail(err, "gemm: bm 256 needs the host rows on the panel path (or none): the 256-row kernel "
                                "has no 64-row host tier; set bm 0 or 128, or panel 1");
        p->bm = 4u * TILE;
    }
    const uint32_t mh = p->bm / TILE; /* 64-row boxes of A per HBM slot */
    /* B box of 24 rows at N 17..24 where k_split_nn runs (opts.bn24): its offsets consumer keeps its loads inside the
     * box (narrow_offs_of).  B's 16 KiB a slot cost N 17-32 0.75 us a GEMM against N = 16 on as many slots (7168^2,
     * PDL graphs, twenty-ninth session); 12 KiB gets part of that back */
    if (o->bn24 && hbm_offsets_kernel(p, N, o) == 1u && N > 16u && N <= 24u && c == 1u && !pon)
        p->bn_box = 24u;
    /* Wide HBM column tiles (bn): with 64 columns every A tile crosses L2 -> SM once per 64 columns
     * (2x at N = 128, 8x at N = 512) and each m64n64k16 reads as many bytes of A as of B per flop;
     * m64n128 / m64n256 read A once per bn columns.  Auto (the rule of gemm.h, opts.bn): the narrowest
     * that covers the columns one cluster member computes (N / cluster), 256 when none does, as
     * wasteful as that may be on a partial tile (N = 200 computes 256 columns, A read once); at
     * most 128 when the tiled kernel also has a host tier (64-row tiles: see gemm_split.cu). */
    p->bn = TILE;
    if (mh == 4u) {
        p->bn = 2u * TILE; /* k_split_m256: 256 x 128 */
    } else if (mh == 2u && p->wgmma && !o->diag_b_nmajor) {
        uint32_t cover = ceil_div(N, c);
        p->bn = o->bn ? o->bn : (cover <= TILE ? TILE : (cover <= 2u * TILE || host_tiled ? 2u * TILE : 4u * TILE));
        /* bn 256's kernel has room (registers) for the wide consumer only: no 64-row host tier */
        if (p->bn == 4u * TILE && host_tiled)
            return cm_fail(err, "gemm: bn 256 needs the host rows on the panel path (or none): the 256-column kernel "
                                "has no 64-row host tier; set bn 128 (or 0) or panel 1");
    }
    /* B box of N rounded up to 8 rows at N 33..56 on the 64-column wgmma tiles (opts.bnw), whose consumers then run
     * m64n40 / n48 / n56: the 64-row box carried 24-8 rows of zeros into every slot, B's bytes that cost N 17-32
     * ~0.75 us a GEMM per 8 KiB a slot (twenty-ninth session); at N 33..48 a fifth 128-row slot fits */
    const int bnw = o->bnw && p->wgmma && p->bn == TILE && N > 32u && N <= 56u && c == 1u && !pon && !o->dyn &&
                    !o->diag_b_nmajor;
    if (bnw) p->bn_box = ceil_div(N, 8) * 8;
    const uint32_t bnh = p->bn > TILE ? p->bn : p->bn_box; /* B rows per HBM slot */
    /* the K-half hand-over area: only 64-row tiles have one */
    uint32_t fixed = DAK_GEMM_SMEM_BASE + (host_tiled || mh == 1 ? (N > 32 ? 16384u : 8192u) : 0u);
    /* dynamic units: the area also holds two staging tiles of a unit's partial (N <= 64 columns) */
    const uint32_t dyn_area = DAK_DYN_STAGE_OFF + 2u * N * DAK_DYN_STAGE_LD * 4u;
    if (o->dyn && p->ntiles == 1 && c == 1 && fixed < DAK_GEMM_SMEM_BASE + dyn_area)
        fixed = DAK_GEMM_SMEM_BASE + dyn_area;
    /* the PDL stash (opts.stash): N <= 8 (the hand-over area is DAK_STASH_BYTES), 64-row HBM tiles (the narrow
     * consumer), no cluster, no dyn; its B rows 1 KiB-aligned in the area, which grows by 512 B */
    const int pre_none = o->pdl_pre == DAK_GEMM_PDL_PRE_NONE;
    /* (not with diag_prod2: the second producer counts the first's copies before the wait, not the stash's) */
    const int stash_on = o->pdl && o->stash && !pre_none && N <= 8 && mh == 1 && c == 1 && !o->dyn && !o->diag_prod2 &&
                         mt_g;
    const uint32_t stash_area = DAK_STASH_OFF - 512u + DAK_STASH_BYTES; /* the area starts 512 B past the ring */
    if (stash_on && fixed < DAK_GEMM_SMEM_BASE + stash_area) fixed = DAK_GEMM_SMEM_BASE + stash_area;

    /* A ring slot holds kstep 64-column blocks, fetched by one copy of A and one of B:
     * the largest kstep in {4, 2, 1} dividing K/64 that still leaves >= 3 slots (or what
     * was asked).  Runs 4-6 on the H200: larger copies and fewer slot hand-overs win over
     * ring depth (3 slots of 4 blocks beat 6 of 2 by 8-13 % at N = 64).  With 128-row HBM
     * tiles the choice is made for their slot (2 x 8 KiB of A per block; the host tier's
     * 64-row slots then get as many as fit of the same kstep): at N = 64 kstep 2 x 4 slots
     * of 48 KiB, the same 32 KiB of A per slot hand-over as 64-row kstep 4. */
    /* Wide column tiles want 4 slots: the wgmma consumer holds two (the one it computes on and the
     * previous one, released after wait_group 1), so 3 would leave one copy in flight (bn 128:
     * kstep 1 x 7 slots of 32 KiB, not kstep 2 x 3; bn 256: kstep 1 x 4 slots of 48 KiB). */
    const uint32_t minslots = p->bn > TILE ? 4u : 3u;
    uint32_t fit = 0, kstep = 1;
    for (uint32_t cand = 4; cand >= 1; cand /= 2) {
        if (kblocks % cand || (o->kstep && cand != o->kstep)) continue;
        size_t slot = (size_t)cand * (mh * TILE * TILE * 2 + (size_t)bnh * 128);
        if (smem_bytes < fixed + 2 * slot) continue;
        uint32_t f = (uint32_t)((smem_bytes - fixed) / slot);
        if (f > MAX_STAGES) f = MAX_STAGES;
        if (o->stages ? f >= o->stages : (f >= minslots || cand == 1 || o->kstep)) {
            kstep = cand, fit = f;
            break;
        }
    }
    if (bnw && mh == 2u && !o->stages && fit > BNW_SLOTS) fit = BNW_SLOTS;
    if (fit < 2 && o->stages)
        return cm_fail(err, "gemm: %u stages do not fit in %zu bytes of shared memory", o->stages, smem_bytes);
    if (fit < 2)
        return cm_fail(err, "gemm: %zu bytes of shared memory hold fewer than 2 ring slots", smem_bytes);
    if (o->stages) {
        if (o->stages < 2) return cm_fail(err, "gemm: stages must be >= 2");
        if (o->stages > fit)
            return cm_fail(err, "gemm: %u stages do not fit in %zu bytes of shared memory", o->stages,
                           smem_bytes);
        fit = o->stages;
    }
    p->kstep = kstep;
    p->kchunks = kblocks / kstep;
    const uint32_t slot64 = kstep * (TILE * TILE * 2 + p->bn_box * 128);
    if (mh == 1) {
        p->stages = p->hbm_stages = fit;
        p->smem_bytes = fixed + fit * slot64;
    } else {
        uint32_t f64 = (uint32_t)((smem_bytes - fixed) / slot64);
        if (f64 > MAX_STAGES) f64 = MAX_STAGES;
        p->hbm_stages = fit;
        p->stages = o->stages ? o->stages : f64;
        const uint32_t ring_g = fit * kstep * (mh * TILE * TILE * 2 + bnh * 128);
        const uint32_t ring_h = host_tiled ? p->stages * slot64 : 0u;
        p->smem_bytes = fixed + (ring_g > ring_h ? ring_g : ring_h);
    }

    if (mt_g && hbm_avail < c)
        return cm_fail(err, "gemm: %u SMs left for HBM tile rows, cluster needs %u", hbm_avail, c);
    if (pon && host_avail > sm_count - (mt_g ? hbm_avail : 0))
        return cm_fail(err, "gemm: panel CTAs %u + HBM CTAs %u exceed the %u SMs (both kernels run side by side)",
                       host_avail, hbm_avail, sm_count);
    plan_tier(pon ? 0 : mt_h, p->ngroups, p->kchunks, host_avail, c, o->wave_align, 0, &p->host);
    const int talign = !aligned ? 0 : N > TILE ? 2 : 1; /* plan_tier: 2, several CTAs a tile only */
    plan_tier((mt_g + mh - 1) / mh, ceil_div(ceil_div(N, p->bn), c), p->kchunks, hbm_avail, c, o->wave_align,
              talign, &p->hbm);
    if (pon) {
        dak_panel_plan *q = &p->panel;
        uint32_t ncl = host_avail / q->cluster;
        if (ncl > q->units) ncl = q->units;
        q->ctas = ncl * q->cluster;
        uint32_t most = ceil_div(q->units, ncl);
        q->balance = ((double)q->units / ncl) / most;
        uint32_t npc = q->pblocks / q->kstep, wmax = 2u * npc;
        uint32_t per = q->kstep * (TILE * TILE * 2u) / q->cluster; /* bytes of one copy (a member's share) */
        uint32_t w = HOST_INFLIGHT_BYTES / (q->ctas * per);
        if (w < 1) w = 1;
        if (w > wmax) w = wmax;
        if (o->window > wmax)
            return cm_fail(err, "gemm: window %u exceeds the %u panel pieces that can be in flight (2 panels x %u)",
                           o->window, wmax, npc);
        q->window = o->window ? o->window : w;
        if (o->out_bf16) q->ws_bytes = (uint64_t)rows_host * N * 4u;
        if (q->ws_bytes > WS_CAP_BYTES)
            return cm_fail(err, "gemm: panel accumulator of %llu bytes exceeds %llu (N %u too large)",
                           (unsigned long long)q->ws_bytes, (unsigned long long)WS_CAP_BYTES, N);
    }
    uint32_t wauto = 0;
    if (p->host.ctas) {
        uint32_t per = (uint32_t)(TILE * TILE * 2 * kstep / c); /* bytes one host copy moves */
        wauto = HOST_INFLIGHT_BYTES / (p->host.ctas * per);
        if (wauto < 1) wauto = 1;
        if (wauto > p->stages) wauto = p->stages;
    }
    const uint32_t hs = p->stages;
    p->host.window = p->host.ctas ? (o->window ? (o->window < hs ? o->window : hs) : wauto) : 0;
    /* HBM copies in flight per SM (opts.hbm_window).  Auto: HBM_WINDOW_AUTO at N <= 8 launched without PDL: the
     * SMs' shares of HBM even out with fewer bytes queued (7168^2, N = 8: last-slot spread 5.3 -> 3.1 us; on the
     * H200 0.2-0.9 us a GEMM in graphs without PDL on 7168^2 and 11008 x 4096, 0.2-0.6 us more on 28672 x 7168;
     * mixed at N = 32); under PDL the next launch already fills the slow SMs' tail and the window only costs
     * streaming rate, so the whole ring (NOTES-dak-kernels-history.md, twelfth session).  HBM_WINDOW_NN on k_split_nn's
     * 64-row tiles (N 9-32), PDL or not, and on k_split_nn2's 128-row ones at N 17-32 (11008 x 4096: 0.15-0.45 us
     * as PDL graphs, thirtieth session; at N 9-16 they keep the ring: neutral there) */
    uint32_t hw = o->hbm_window;
    if (!hw && !o->dyn) {
        if (N <= 8 && !o->pdl) hw = HBM_WINDOW_AUTO;
        else if (hbm_offsets_kernel(p, N, o) == 1u || (hbm_offsets_kernel(p, N, o) == 2u && N > 16u))
            hw = HBM_WINDOW_NN;
    }
    p->hbm.window = !p->hbm.ctas ? 0 : hw && hw < p->hbm_stages ? hw : p->hbm_stages;
    /* stash: as many chunks as their B rows fit in the area (bn8 0 at kstep 4: one), with the window at the ring and
     * at least a slot left to stream through */
    p->hbm_stash = 0;
    if (stash_on && p->hbm.ctas && p->hbm.window >= p->hbm_stages) {
        const uint32_t fit_b = DAK_STASH_BYTES / (p->bn_box * 128u * kstep);
        p->hbm_stash = o->stash < fit_b ? o->stash : fit_b;
        if (p->hbm_stash >= p->hbm_stages) p->hbm_stash = p->hbm_stages - 1u;
    }
    /* copies of A before the PDL wait: opts.pdl_pre, or auto PDL_PRE_TALL with 128-row slots at N <= 64, else the
     * ring; at least the stash, whose chunks go out first */
    p->hbm_pre = 0;
    if (o->pdl && p->hbm.ctas && !pre_none) {
        const uint32_t want = o->pdl_pre ? o->pdl_pre : p->bm == 2u * TILE && N <= TILE ? PDL_PRE_TALL : 0u;
        p->hbm_pre = want && want < p->hbm_stages ? want : p->hbm_stages;
        if (p->hbm_pre < p->hbm_stash) p->hbm_pre = p->hbm_stash;
    }
    if (o->window > hs && mt_h && !pon)
        return cm_fail(err, "gemm: window %u exceeds the %u ring slots", o->window, hs);

    /* Dynamic units (HBM tier, one column tile, no cluster): units of 2 ring slots for narrow
     * tiles, 4 for wide ones (fewer partials per byte of A), or dyn_slots.  A CTA's first units go
     * by index, enough of them to fill its ring (at least one; at most U / CTAs). */
    p->dyn_p = p->dyn_units = p->dyn_first = 0;
    if (o->dyn && p->ntiles == 1 && c == 1 && p->hbm.ctas) {
        uint32_t uc = o->dyn_slots ? o->dyn_slots : (N <= 32 ? 2u : 4u);
        uint32_t P = p->kchunks / uc;
        if (P < 1) P = 1;
        if ((uint64_t)mt_g * P >= p->hbm.ctas) {
            p->dyn_p = P, p->dyn_units = mt_g * P;
            const uint32_t per = p->kchunks / P; /* the shortest unit's slots */
            uint32_t f = ceil_div(p->hbm_stages, per);
            if (f > p->dyn_units / p->hbm.ctas) f = p->dyn_units / p->hbm.ctas;
            p->dyn_first = f ? f : 1u;
        }
    }

    p->kernel = split_kernel_of(p, N, o->diag_b_nmajor);

    p->ws_bytes = 0;
    if (p->host.ksplit > 1) p->ws_bytes += (uint64_t)mt_h * p->ngroups * c * p->host.ksplit * PARTIAL_BYTES;
    if (p->hbm.ksplit > 1) /* a 128-row x bn tile's partial is 2 x bn / 64 64 x 64 ones */
        p->ws_bytes += (uint64_t)p->hbm.mtiles * mh * (p->bn / TILE) * p->hbm.ngroups * c * p->hbm.ksplit *
                       PARTIAL_BYTES;
    if (p->ws_bytes > WS_CAP_BYTES)
        return cm_fail(err, "gemm: split workspace of %llu bytes exceeds %llu (N %u too large for this split)",
                       (unsigned long long)p->ws_bytes, (unsigned long long)WS_CAP_BYTES, N);
    return 0;
}

const char *dak_split_kernel_name(uint32_t kernel)
{
    static const char *const names[DAK_SPLIT_KERNELS] = {"k_split",     "k_split_nn",   "k_split_nn2", "k_split_n8",
                                                         "k_split_dyn",
                                                         "k_split_n128", "k_split_n256", "k_split_m256", "k_whole",
                                                         "k_whole_sw"};
    return kernel < DAK_SPLIT_KERNELS ? names[kernel] : "?";
}

uint32_t dak_gemm_a_group_rows(uint32_t M, uint32_t K, uint32_t N, const dak_gemm_opts *o, uint32_t sm_count,
                               size_t smem_bytes)
{
    if (sm_count == 0 || o->whole_swap == 1u || (o->whole_swap != 2u && o->bm)) return 0;
    const uint32_t R = swap_rows(M, sm_count);
    if (R == TILE || (o->whole_swap == 0u && (R <= WHOLE_SW_GROUP_MIN_ROWS || R % TILE == 0u))) return 0;
    dak_gemm_opts g = *o;
    dak_gemm_plan p;
    cm_err err;
    memset(&p, 0, sizeof p);
    g.a_group_rows = 0;
    /* 3: wherever the tiles' plan is not k_whole and either k_whole_sw already or a CTA's R rows of A are at least B's
     * N (so no split kernel in a decode step; with N > R a stage holds more of B than of A: 4096 x 11008 in 32-row
     * groups ran 24.4 us at N 32 against the split's 25.6, but 26.9 / 33.7 against 26.1 / 26.4 at N 48 / 64, H200,
     * thirty-sixth session) */
    if (o->whole_swap == 3u &&
        (dak_gemm_plan_make(M, N, K, 0u, &g, sm_count, smem_bytes, &p, &err) || p.kernel == DAK_SPLIT_WHOLE ||
         (p.kernel != DAK_SPLIT_WHOLE_SW && R < N)))
        return 0;
    g.a_group_rows = R;
    return dak_gemm_plan_make(M, N, K, 0u, &g, sm_count, smem_bytes, &p, &err) ? 0u : R;
}

uint64_t dak_gemm_plan_host_bytes(const dak_gemm_plan *p)
{
    /* panel path: every host panel is fetched once by one cluster (split across its members) */
    if (p->panel.on) return (uint64_t)p->rows_host * p->K * 2ull;
    /* each cluster fetches every host A tile of its items once (split across its members) */
    return (uint64_t)p->rows_host * p->K * 2ull * p->ngroups;
}
